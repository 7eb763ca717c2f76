"""diff and explain through the command line: the seeds' derivatives, JSON, round trip to eval."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    "expr, wrt, expected",
    [
        ("3*a**3-b**2", "a", "9*a**2"),
        ("3*a**3-b**2", "b", "-2*b"),
        ("2*x**2+b", "x", "4*x"),
        ("3*(x+2)**2", "x", "6*(x + 2)"),
        # powers of one base combined: relu(x)**(3/2), not relu(x)**(1/2)*relu(x) (kills
        # core/symbolic.py:879: (a.data > 0) != (b.data > 0) -> (a.data > 1) != (b.data > 0))
        (
            "relu(x)**0.5 * relu(x)**2",
            "x",
            "(x > 0)*relu(x)**2/(2*relu(x)**(1/2)) + 2*(x > 0)*relu(x)**(3/2)",
        ),
    ],
)
def test_diff_seed_derivatives(cli, expr, wrt, expected):
    r = cli("diff", expr, "--wrt", wrt, "--json")
    assert r.code == 0, r.out
    assert r.json == {"expr": expr, "derivative": expected}


def test_diff_several_and_values(cli):
    r = cli("diff", "3*a**3-b**2", "--a", "2", "--b", "6", "--json")
    assert r.json == {
        "expr": "3*a**3-b**2",
        "derivative": {"a": "9*a**2", "b": "-2*b"},
        "value": -12.0,
        "derivative_value": {"a": 36.0, "b": -12.0},
    }
    human = cli("diff", "3*a**3-b**2", "--wrt", "a", "--a", "2", "--b", "6")
    assert "9*a**2" in human.out and "36.0" in human.out


def test_diff_order_and_latex(cli):
    r = cli("diff", "log(1+x)", "--order", "10", "--json")
    assert r.json["derivative"] == "-362880/(x + 1)**10" and r.json["order"] == 10
    r = cli("diff", "2*x**2", "--latex")
    assert r.out.splitlines() == ["f = 2 x^{2}", r"\frac{d f}{d x} = 4 x"]


@pytest.mark.parametrize(
    "expr",
    [
        "3*a**3 - b**2",
        "sin(a*b) + exp(a)/b",
        "sqrt(a**2 + b**2)",
        "tanh(a) * log(1 + b**2)",
        "a**b",
        "sigmoid(a - b) * a",
        "1/(1 + a**2) - atan(b)",
        "(a + b)**3 / (a - 2*b)",
    ],
)
def test_round_trip_diff_then_eval_matches_grad(cli, expr):
    point = ("--a", "0.7", "--b", "1.3")
    grads = cli("grad", expr, *point, "--json").json["grad"]
    derivs = cli("diff", expr, "--json").json["derivative"]
    for name, text in derivs.items():
        from autograd_cli.grammar import parse

        used = parse(text).inputs  # values only for the derivative's own variables
        args = [item for name in used for item in (f"--{name}", dict(a="0.7", b="1.3")[name])]
        value = cli("eval", text, *args, "--json")
        assert value.code == 0, (text, value.out)
        assert value.json["value"] == pytest.approx(grads[name], rel=1e-12, abs=1e-14), text


def test_diff_errors(cli):
    r = cli("diff", "sum(x)", "--json")
    assert r.code == 1 and r.json["error"]["kind"] == "unsupported"
    r = cli("diff", "x", "--wrt", "y", "--json")
    assert r.code == 2
    r = cli("diff", "x", "--order", "-1", "--json")
    assert r.code == 2
    r = cli("diff", "x*1 + 0", "--order", "0", "--json")  # order 0: the expression itself
    assert r.code == 0 and r.json["derivative"] == "x" and r.json["order"] == 0


def test_explain_seed_chain_rule(cli):
    r = cli("explain", "y = (x + w) * (w + 1)", "--x", "2", "--w", "1", "--wrt", "w")
    assert r.code == 0, r.err
    assert "a = x + w = 3" in r.out and "b = w + 1 = 2" in r.out
    assert "dy/da = b = 2" in r.out and "dy/db = a = 3" in r.out
    assert "dy/dw = dy/da*da/dw + dy/db*db/dw = 2*1 + 3*1 = 5" in r.out
    r = cli(
        "explain", "a = x + w; b = w + 1; a * b", "--x", "2", "--w", "1", "--wrt", "w", "--json"
    )
    assert r.json["gradient"] == {"w": 5.0} and r.json["value"] == 6.0


def test_diff_folds_its_real_constants_under_a_complex_dtype(cli):
    # --dtype complex128 made the constant folding (2*3 -> 6, the 3 of x**3's derivative)
    # compute in complex numbers and then ask float() of one: an internal error.  The folding
    # of real constants runs in the real dtype of the run's precision.
    r = cli("diff", "x*2*3", "--dtype", "complex128", "--x", "1", "--json")
    assert r.code == 0, r.out
    assert r.json["derivative"] == "6" and r.json["derivative_value"] == 6.0
    assert r.json["value"] == {"re": 6.0, "im": 0.0}
    r = cli("diff", "x**3", "--dtype", "complex128", "--x", "1+1j", "--json")
    assert r.code == 0, r.out
    assert r.json["derivative"] == "3*x**2"
    assert r.json["derivative_value"] == {"re": 0.0, "im": 6.0}  # 3*(1+1j)**2 = 6j


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_diff_writes_single_precision_values_as_grad_does(cli, dtype):
    # diff's JSON wrote a float32 value with a double's 17 digits (1.3310000896453857);
    # grad and eval write its own shortest digits (1.3310001)
    r = cli("diff", "x**3", "--x", "[1.1, 2]", "--dtype", dtype, "--json")
    assert r.code == 0, r.out
    values, derivatives = r.json["value"], r.json["derivative_value"]
    if dtype == "complex64":
        assert values[0] == {"re": 1.3310001, "im": 0.0}
        values, derivatives = [v["re"] for v in values], [d["re"] for d in derivatives]
    assert values == [1.3310001, 8.0] and derivatives == [3.63, 12.0]
    g = cli("grad", "sum(x**3)", "--x", "[1.1, 2]", "--dtype", "float32", "--json")
    assert g.json["grad"]["x"] == [3.63, 12.0]


def test_diff_at_a_complex_point_prints_its_table_and_latex(cli):
    # the table and --latex wrote each value through float(): an internal error at 1+1j
    r = cli("diff", "x**3", "--x", "1+1j")
    assert r.code == 0, r.err
    assert "6j" in r.out and "(-2+2j)" in r.out  # 3*(1+1j)**2 = 6j, (1+1j)**3 = -2+2j
    r = cli("diff", "x**3", "--x", "1+1j", "--latex")
    assert r.code == 0, r.err
    assert "= 6j" in r.out
