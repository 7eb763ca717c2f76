"""The command line end to end: the seeds' worked examples, JSON, exit codes, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

# ---- the product's headline example ------------------------------------------------------------


def test_grad_headline_table(cli):
    r = cli("grad", "3*a**3-b**2", "--a", "2", "--b", "6")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert any("value" in line and "-12.0" in line for line in lines)
    assert any("∂/∂a" in line and "36.0" in line for line in lines)
    assert any("∂/∂b" in line and "-12.0" in line for line in lines)


def test_grad_headline_json(cli):
    r = cli("grad", "3*a**3-b**2", "--a", "2", "--b", "6", "--json")
    assert r.code == 0
    assert r.json == {
        "expr": "3*a**3-b**2",
        "value": -12.0,
        "shape": [],
        "grad": {"a": 36.0, "b": -12.0},
    }
    assert r.out.count("\n") == 1


# ---- the seeds, through the CLI ----------------------------------------------------------------


def test_seed_chain_rule_w_grad(cli):
    # seed 000: y = (x + w) * (w + 1) at x = 2, w = 1: dy/dw = 5
    for src in ("y = (x + w) * (w + 1)", "a = x + w; b = w + 1; a * b"):
        r = cli("grad", src, "--x", "2", "--w", "1", "--wrt", "w", "--json")
        assert r.code == 0, r.out
        assert r.json["value"] == 6.0
        assert r.json["grad"] == {"w": 5.0}


def test_seed_scalar_backward(cli):
    # seed 000: b = a**2 + 1 at a = 2 -> 5, a.grad = 4
    r = cli("grad", "a**2 + 1", "--a", "2", "--json")
    assert (r.json["value"], r.json["grad"]) == (5.0, {"a": 4.0})


def test_seed_vector_needs_gradient(cli):
    r = cli("grad", "a**2 + 1", "--a", "[1., 2.]")
    assert r.code == 1
    assert "grad can be implicitly created only for scalar outputs" in r.err
    assert "--grad-output" in r.err and "jacobian" in r.err and "sum(" in r.err
    assert "Traceback" not in r.err
    r = cli("grad", "a**2 + 1", "--a", "[1., 2.]", "--json")
    assert r.code == 1
    assert r.json["error"]["kind"] == "non_scalar_output"
    assert r.json["error"]["shape"] == [2]
    r = cli("grad", "a**2 + 1", "--a", "[1., 2.]", "--grad-output", "[1., 1.]", "--json")
    assert r.code == 0
    assert r.json["grad"] == {"a": [2.0, 4.0]}
    r = cli("grad", "a**2 + 1", "--a", "[1., 2.]", "--grad-output", "[1., 1.]")
    assert "[2., 4.]" in r.out


def test_seed_grad_outputs_matrix(cli):
    r = cli(
        "grad",
        "y = x + 2; z = y * y * 3",
        "--x",
        "[[1,2,3],[4,5,6]]",
        "--grad-output",
        "[[1,1,1],[1,1,1]]",
        "--json",
    )
    assert r.code == 0
    assert r.json["grad"]["x"] == [[18, 24, 30], [36, 42, 48]]
    r = cli(
        "grad",
        "y = x + 2; z = y * y * 3",
        "--x",
        "[[1,2,3],[4,5,6]]",
        "--grad-output",
        "[[1,1,1],[1,1,1]]",
    )
    assert "[[18., 24., 30.]," in r.out and "[36., 42., 48.]]" in r.out


def test_seed_simple_function(cli):
    # seed 002: y = 2*x**2 + b at x = 2, b = 1 -> 9 and x.grad 8
    r = cli("grad", "2*x**2 + b", "--x", "2", "--b", "1", "--wrt", "x", "--json")
    assert r.json == {"expr": "2*x**2 + b", "value": 9.0, "shape": [], "grad": {"x": 8.0}}


def test_seed_linear_function(cli):
    # seed 002: y = sum(W @ x + b) -> 134; W.grad rows x; b.grad ones; x not differentiated
    r = cli(
        "grad",
        "output = W @ x + b; y = sum(output)",
        "--W",
        "[[1,2,3,4],[1,2,3,4],[1,2,3,4]]",
        "--x",
        "[3.0,2.0,4.0,5.0]",
        "--b",
        "[4.0,5.0,8.0]",
        "--wrt",
        "W,b",
        "--json",
    )
    assert r.code == 0
    assert r.json["value"] == 134.0
    assert r.json["grad"] == {"W": [[3, 2, 4, 5]] * 3, "b": [1, 1, 1]}


def test_seed_Q(cli):
    # seed 003: Q = 3a^3 - b^2, external_grad = [1, 1]: a.grad = 9a^2, b.grad = -2b
    args = ("--a", "[2., 3.]", "--b", "[6., 4.]", "--json")
    r = cli("grad", "Q = 3*a**3 - b**2", "--grad-output", "[1., 1.]", *args)
    assert r.json["grad"] == {"a": [36.0, 81.0], "b": [-12.0, -8.0]}
    r = cli("grad", "sum(3*a**3 - b**2)", *args)
    assert r.json["grad"] == {"a": [36.0, 81.0], "b": [-12.0, -8.0]}


# ---- options -----------------------------------------------------------------------------------


def test_variable_spellings(cli):
    base = cli("grad", "x*y", "--x", "2", "--y", "3", "--json").json
    assert cli("grad", "x*y", "--x=2", "--y=3", "--json").json == base
    assert cli("grad", "x*y", "--var", "x=2", "--var", "y=3", "--json").json == base
    assert cli("grad", "x*y", "--vars", '{"x": 2, "y": 3}', "--json").json == base
    assert cli("grad", "--x", "2", "x*y", "--json", "--y", "3").json == base


def test_expression_starting_with_minus(cli):
    r = cli("eval", "--", "-x**2", "--x", "3", "--json")
    assert r.code == 0
    assert r.json == {"expr": "-x**2", "value": -9.0, "shape": []}


def test_negative_values_and_non_finite(cli):
    r = cli("eval", "x", "--x", "-3", "--json")
    assert r.json["value"] == -3.0
    r = cli("eval", "1/x", "--x", "0", "--json")
    assert r.code == 0 and r.json["value"] == "inf" and r.json["warnings"]
    r = cli("eval", "log(x)", "--x", "-1", "--json")
    assert r.code == 0 and r.json["value"] == "nan"
    r = cli("eval", "[1/x, -1/x, 0/x]", "--x", "0", "--json")
    assert r.json["value"] == ["inf", "-inf", "nan"]
    json.loads(r.out)  # strict JSON: no NaN/Infinity tokens
    assert "NaN" not in r.out and "Infinity" not in r.out


def test_dtype_float32(cli):
    r = cli("grad", "x**2", "--x", "0.1", "--dtype", "float32", "--json")
    assert r.code == 0
    assert abs(r.json["value"] - 0.01) < 1e-8
    assert r.json["value"] != 0.1**2  # computed in float32


def test_unused_variable_gets_zero_gradient(cli):
    r = cli("grad", "where(x > 0, y, 0)", "--x", "-1", "--y", "2", "--json")
    assert r.json["grad"] == {"x": 0.0, "y": 0.0}


# ---- bad input: message, exit code, no traceback -----------------------------------------------


@pytest.mark.parametrize(
    "argv, code, kind",
    [
        (("grad", "x +", "--x", "1"), 2, "syntax"),
        (("grad", "foo(x)", "--x", "1"), 2, "unknown_function"),
        (("grad", "sin(x, x)", "--x", "1"), 2, "arity"),
        (("grad", "x*y", "--x", "1"), 2, "missing_value"),
        (("grad", "x", "--x", "1", "--z", "2"), 2, "unknown_variable"),
        (("grad", "a = x + 1; a * 2", "--x", "1", "--a", "2"), 2, "unknown_variable"),
        (("grad", "x", "--x", "[1, [2]]"), 2, "bad_value"),
        (("grad", "x", "--x", "abc"), 2, "bad_value"),
        (("grad", "[[1, 2], [3]]"), 2, "bad_value"),
        (("grad", "x", "--x", "1", "--wrt", "y"), 2, "unknown_variable"),
        (("grad", "a = x + 1; a * 2", "--x", "1", "--wrt", "a"), 2, "unknown_variable"),
        (("grad", "x", "--x", "1", "--dtype", "float16"), 2, "usage"),
        (("grad",), 2, "usage"),
        (("grad", "x", "--x"), 2, "usage"),
        (("nosuchcommand", "x"), 2, "usage"),
        (("grad", "x @ y", "--x", "[1, 2]", "--y", "[1, 2, 3]"), 1, "shape"),
        (
            ("grad", "x + y", "--x", "[1, 2]", "--y", "[1, 2, 3]", "--grad-output", "[1, 1]"),
            1,
            "shape",
        ),
        (("grad", "x * 2", "--x", "[1, 2]"), 1, "non_scalar_output"),
        (("grad", "x * 2", "--x", "[1, 2]", "--grad-output", "[1, 2, 3]"), 1, "shape"),
        (("grad", "x", "--x", "1", "--device", "gpu"), 1, "device"),
    ],
)
def test_errors(cli, argv, code, kind):
    r = cli(*argv)
    assert r.code == code, (r.out, r.err)
    assert "Traceback" not in r.err and r.err.startswith("autograd-cli: error:")
    assert r.out == ""
    r = cli(*argv, "--json")
    assert r.code == code
    doc = r.json
    assert doc["error"]["kind"] == kind, doc
    assert doc["error"]["message"]


def test_parse_error_position_and_caret(cli):
    r = cli("eval", "x + * 2", "--x", "1", "--json")
    err = r.json["error"]
    assert (err["line"], err["column"]) == (1, 5)
    r = cli("eval", "a = 1\nb = a +\nb", "--json")
    assert r.json["error"]["line"] == 2
    r = cli("eval", "x + * 2", "--x", "1")
    assert "x + * 2\n      ^" in r.err


def test_unknown_function_suggestion(cli):
    r = cli("eval", "sine(x)", "--x", "1", "--json")
    assert "'sine'" in r.json["error"]["message"] and "'sin'" in r.json["error"]["message"]


def test_stdin_expression_and_vars(monkeypatch, cli):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("x**3\n"))
    r = cli("grad", "-", "--x", "2", "--json")
    assert r.json == {"expr": "x**3", "value": 8.0, "shape": [], "grad": {"x": 12.0}}
    monkeypatch.setattr("sys.stdin", io.StringIO('{"x": 3}'))
    r = cli("grad", "x**2", "--vars", "-", "--json")
    assert r.json["grad"] == {"x": 6.0}


def test_real_subprocess_entry_points(tmp_path):
    """The installed console script and `python -m autograd_cli` both run, without tracebacks."""
    env = dict(os.environ)
    for argv in ([sys.executable, "-m", "autograd_cli"],):
        out = subprocess.run(
            argv + ["grad", "3*a**3-b**2", "--a", "2", "--b", "6", "--json"],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["grad"] == {"a": 36.0, "b": -12.0}
        bad = subprocess.run(
            argv + ["grad", "x +"], capture_output=True, text=True, env=env, cwd=tmp_path
        )
        assert bad.returncode == 2
        assert "Traceback" not in bad.stderr and "syntax error" in bad.stderr


# ---- conventions at kinks, and their warnings --------------------------------------------------


@pytest.mark.parametrize(
    "expr, grad, warns",
    [
        ("abs(x)", 0.0, "abs"),
        ("relu(x)", 0.0, "relu"),
        ("max(x, 0)", 0.0, "max(x, c)"),
        ("min(x, 0)", 0.0, "min(x, c)"),
        ("where(x > 0, x, 0)", 0.0, None),
        ("sqrt(x)", "inf", "sqrt"),
        ("x**0.5", "inf", "x**p"),
        ("norm([x, x])", 0.0, "norm"),
        ("max([x, 0])", 0.5, "tied"),
        ("(x > 0) * x", 0.0, "comparisons"),
        ("floor(x) + x", 1.0, "floor"),
        ("x * 3", 3.0, None),
    ],
)
def test_kink_conventions_warn(cli, expr, grad, warns):
    r = cli("grad", expr, "--x", "0", "--json")
    assert r.code == 0, r.out
    assert r.json["grad"]["x"] == grad
    if warns is None:
        assert "warnings" not in r.json
    else:
        assert any(warns in w for w in r.json["warnings"]), r.json


def test_equivalent_spellings_agree_at_the_kink(cli):
    grads = {
        e: cli("grad", e, "--x", "[-1, 0, 2]", "--grad-output", "[1, 1, 1]", "--json").json["grad"][
            "x"
        ]
        for e in ("relu(x)", "max(x, 0)", "max(0, x)", "where(x > 0, x, 0)")
    }
    assert all(g == [0.0, 0.0, 1.0] for g in grads.values()), grads


def test_max_of_two_variables_splits_ties(cli):
    r = cli("grad", "max(x, y)", "--x", "1", "--y", "1", "--json")
    assert r.json["grad"] == {"x": 0.5, "y": 0.5}


def test_where_is_nan_safe(cli):
    r = cli("grad", "where(x > 0, sqrt(x), 0)", "--x", "-1", "--json")
    assert r.code == 0 and r.json["value"] == 0.0 and r.json["grad"] == {"x": 0.0}
    r = cli("grad", "where(x > 0, log(x), x)", "--x", "0", "--json")
    assert r.json["grad"] == {"x": 1.0}


def test_plain_and_csv_formats(cli):
    r = cli("grad", "3*a**3-b**2", "--a", "2", "--b", "6", "--format", "plain")
    assert r.out == "-12.0\n36.0\n-12.0\n"
    r = cli(
        "grad", "x*y", "--x", "[1, 2]", "--y", "3", "--grad-output", "[1, 1]", "--format", "csv"
    )
    assert r.out.splitlines() == [
        "quantity,index,value",
        "value,0,3.0",
        "value,1,6.0",
        "grad:x,0,3.0",
        "grad:x,1,3.0",
        "grad:y,,3.0",
    ]
    r = cli("eval", "1/x", "--x", "0", "--format", "plain")
    assert r.out == "inf\n" and "warning" in r.err
    r = cli("eval", "x", "--x", "1", "--format", "xml", "--json")
    assert r.code == 2 and r.json["error"]["kind"] == "usage"


def test_values_for_unknown_names_are_errors(cli):
    """SPEC: an unknown variable is exit 2; a typo is named in the message."""
    r = cli("eval", "9*a**2", "--a", "2", "--b", "6", "--json")
    assert r.code == 2 and r.json["error"]["kind"] == "unknown_variable"
    assert "'b'" in r.json["error"]["message"]
    r = cli("eval", "9*a**2", "--a", "2", "--json")
    assert r.code == 0 and r.json == {"expr": "9*a**2", "value": 36.0, "shape": []}
