"""Issue 11, the command line: every input gets a right answer or a clear usage error.

Global options before the command, --help as JSON, options mistaken for variables, a
variable given twice, --order's range, check's --eps/--dtype, batch's --order before any
input is read.  Each runs the real command line (tests/conftest.py's ``cli``).
"""

from __future__ import annotations

import json
import re

import pytest


def usage_error(r, fragment: str, kind: str = "usage") -> None:
    """Exit 2, one JSON error document of ``kind`` whose message holds ``fragment``."""
    assert r.code == 2, (r.code, r.out, r.err)
    assert set(r.json) == {"error"}, r.out
    assert r.json["error"]["kind"] == kind, r.json
    assert fragment in r.json["error"]["message"], r.json["error"]["message"]
    assert "Traceback" not in r.out + r.err


# ---- 1. global options before the command's name; --help as JSON ------------------------------


def test_json_before_the_command(cli):
    r = cli("--json", "grad", "x**2", "--x", "3")
    assert r.code == 0, r.out
    assert r.json == {"expr": "x**2", "value": 9.0, "shape": [], "grad": {"x": 6.0}}


@pytest.mark.parametrize(
    "argv",
    [
        ["--dtype", "float32", "--device", "cpu", "--json", "eval", "x/3", "--x", "1"],
        ["--dtype=float32", "eval", "x/3", "--x", "1", "--json"],
        ["--json", "--dtype", "float32", "eval", "x/3", "--x", "1"],
    ],
)
def test_dtype_and_device_before_the_command(cli, argv):
    r = cli(*argv)
    assert r.code == 0, r.out
    # float32 rounding shows in the value: 1/3 in float32 is not float64's 1/3
    assert r.json["value"] == pytest.approx(1 / 3, rel=1e-6)
    assert r.json["value"] != 1 / 3


def test_bad_global_option_before_the_command_is_still_checked(cli):
    usage_error(cli("--dtype", "int8", "--json", "eval", "x", "--x", "1"), "--dtype must be")
    usage_error(cli("--device", "tpu", "--json", "batch", "-"), "--device must be cpu or gpu")


@pytest.mark.parametrize(
    "argv, command",
    [
        (["grad", "--help", "--json"], "autograd-cli grad"),
        (["grad", "--json", "--help"], "autograd-cli grad"),
        (["--json", "grad", "--help"], "autograd-cli grad"),
        (["--json", "--help"], "autograd-cli"),
        (["--help", "--json"], "autograd-cli"),
        (["batch", "--help", "--json"], "autograd-cli batch"),
    ],
)
def test_help_with_json_is_one_json_document(cli, argv, command):
    r = cli(*argv)
    assert r.code == 0, r.out
    doc = json.loads(r.out)  # exactly one document: json.loads refuses trailing text
    assert doc["command"] == command
    assert doc["help"].startswith(f"Usage: {command}")
    if command == "autograd-cli":
        assert "grad" in doc["help"] and "batch" in doc["help"]
    else:
        assert "--json" in doc["help"]


def test_help_without_json_is_text(cli):
    r = cli("--dtype", "float32", "grad", "--help")
    assert r.code == 0
    assert r.out.startswith("Usage: autograd-cli grad")


def test_no_command_with_json(cli):
    usage_error(cli("--json"), "no command given")
    usage_error(cli("--json", "bogus"), "no command 'bogus': the commands are eval, grad")


# ---- 2. options mistaken for variables --------------------------------------------------------


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (
            ["hessian", "x", "--x", "1", "--jsn"],
            "hessian has no option --jsn (did you mean --json?)",
        ),
        (["hessian", "x", "--jsn", "--x", "1"], "did you mean --json?"),
        (["diff", "x**2", "--ordr", "2"], "diff has no option --ordr (did you mean --order?)"),
        (["grad", "x", "--x", "1", "--wrtt", "x"], "did you mean --wrt?"),
        (
            ["eval", "x", "--x", "1", "--order", "2"],
            "eval has no option --order (--order is an option of batch, diff, grad, plot, taylor)",
        ),
        (["hessian", "x", "--x", "1", "--order"], "hessian has no option --order"),
        (["eval", "x", "-x", "1"], "did you mean --x?"),
        (["grad", "x", "--x", "1", "-wrt", "x"], "did you mean --wrt?"),
        (["eval", "x", "--x", "1", "--h"], "did you mean --help?"),
    ],
)
def test_misspelt_option_is_named_with_its_spelling(cli, argv, fragment):
    usage_error(cli(*argv, "--json"), fragment)


def test_misspelt_option_without_json_is_one_stderr_line(cli):
    r = cli("hessian", "sum(x)", "--x", "1", "--jsn")
    assert r.code == 2
    assert r.out == ""
    assert (
        r.err.strip() == "autograd-cli: error: hessian has no option --jsn (did you mean --json?)"
    )


@pytest.mark.parametrize("argv", [["hessian", "sum(x)", "--x", "1"], ["batch", "-"], []])
def test_dash_h_is_help(cli, argv):
    # -h is --help (issue 13: the Unix convention); with --json, the help document
    r = cli(*argv, "-h")
    assert r.code == 0 and r.out.startswith("Usage: autograd-cli"), r.out + r.err
    r = cli(*argv, "-h", "--json")
    assert r.code == 0 and r.json["help"].startswith("Usage: autograd-cli")


def test_version(cli):
    from autograd_cli import __version__

    r = cli("--version")
    assert r.code == 0 and r.out == f"autograd-cli {__version__}\n"
    r = cli("--json", "--version")
    assert r.code == 0 and r.json == {"version": __version__}
    r = cli("grad", "version*2", "--version", "3", "--json")  # after the command: a variable
    assert r.code == 0 and r.json["grad"] == {"version": 2.0}


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["grad", "jsn*2", "--jsn", "1"], {"value": 2.0, "grad": {"jsn": 2.0}}),
        (["eval", "order + 1", "--order", "2"], {"value": 3.0}),
        (["grad", "wrtt*3", "--wrtt", "1"], {"grad": {"wrtt": 3.0}}),
    ],
)
def test_a_variable_named_like_an_option_is_a_variable(cli, argv, expected):
    r = cli(*argv, "--json")
    assert r.code == 0, r.out
    for key, value in expected.items():
        assert r.json[key] == value


def test_a_variable_with_no_value_still_says_so(cli):
    usage_error(cli("grad", "jsn*2", "--jsn", "--json"), "option --jsn needs a value")


def test_an_unknown_name_far_from_any_option_is_an_unknown_variable(cli):
    r = cli("eval", "x", "--x", "1", "--zeta", "2", "--json")
    assert r.code == 2
    assert r.json["error"]["kind"] == "unknown_variable"


def test_syntax_error_comes_before_option_hints(cli):
    r = cli("hessian", "x +", "--x", "1", "--jsn", "--json")
    assert r.code == 2
    assert r.json["error"]["kind"] == "syntax"


# ---- 3. a variable given twice ------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["--x", "1", "--x", "2"], "variable 'x' is given twice with different values: 1.0"),
        (["--x=1", "--x", "2"], "variable 'x' is given twice"),
        (["--x", "1", "--var", "x=2"], "(--var) and 1.0 (--x)"),
        (["--vars", '{"x": 1}', "--x", "2"], "(--vars)"),
        (["--var", "x=1", "--var", "x=2"], "'x' is given twice with different values"),
        (["--vars", '{"x": 1, "x": 2}'], "'x' is given twice with different values"),
        (["--x", "[1, 2]", "--x", "[1, 3]"], "variable 'x' is given twice"),
    ],
)
def test_a_variable_twice_with_different_values_is_a_usage_error(cli, argv, fragment):
    usage_error(cli("eval", "x", *argv, "--json"), fragment)


@pytest.mark.parametrize(
    "argv",
    [
        ["--x", "1", "--x", "1"],
        ["--x", "1", "--x", "1.0"],
        ["--x", "1", "--var", "x=1", "--vars", '{"x": 1}'],
        ["--x", "[1, 2]", "--x", "[1.0, 2]"],
    ],
)
def test_the_same_value_twice_passes(cli, argv):
    r = cli("eval", "x", *argv, "--json")
    assert r.code == 0, r.out
    assert r.json["value"] in (1.0, [1.0, 2.0])


def test_nan_twice_is_the_same_value(cli):
    r = cli("eval", "x", "--x", "nan", "--x", "nan", "--json")
    assert r.code == 0, r.out
    assert r.json["value"] == "nan"


def test_an_ordinary_option_twice_last_wins(cli):
    """Click's rule, documented in docs/usage.md: the last --format (or --eps ...) counts."""
    r = cli("eval", "x", "--x", "2", "--format", "table", "--format", "json")
    assert r.code == 0
    assert json.loads(r.out) == {"expr": "x", "value": 2.0, "shape": []}
    r = cli("check", "x**2", "--x", "1", "--eps", "1e-3", "--eps", "1e-4", "--json")
    assert r.code == 0
    assert r.json["eps"] == 1e-4


# ---- 4. --order ---------------------------------------------------------------------------------


def test_diff_order_zero_is_the_expression(cli):
    r = cli("diff", "x**2", "--order", "0", "--json")
    assert r.code == 0, r.out
    assert r.json == {"expr": "x**2", "derivative": "x**2", "order": 0}
    r = cli("diff", "x**2*y", "--order", "0", "--x", "3", "--y", "2", "--json")
    assert r.code == 0, r.out
    assert r.json["derivative"] == {"x": "x**2*y", "y": "x**2*y"}
    assert r.json["value"] == 18.0
    assert r.json["derivative_value"] == {"x": 18.0, "y": 18.0}


def test_diff_order_zero_checks_like_order_one(cli):
    usage_error(cli("diff", "x", "--order", "0", "--wrt", "y", "--json"), "'y'", "unknown_variable")
    usage_error(cli("diff", "1 + 2", "--order", "0", "--json"), "no variables", "input")


@pytest.mark.parametrize(
    "command, order, fragment",
    [
        ("diff", "-1", "--order must be 0 or more, not -1"),
        ("diff", "1.5", "--order must be a whole number, not '1.5'"),
        ("diff", "two", "--order must be a whole number, not 'two'"),
        ("diff", "nan", "--order must be a whole number"),
        ("diff", "21", "--order must be at most 20, not 21"),
        ("diff", "1e9", "--order must be at most 20"),
        ("grad", "1.5", "--order must be a whole number, not '1.5'"),
        ("grad", "-2", "--order must be 1 or more, not -2"),
        ("grad", "21", "--order must be at most 20, not 21"),
    ],
)
def test_bad_order_is_the_tools_own_usage_error(cli, command, order, fragment):
    r = cli(command, "x**2", "--x", "1", "--order", order, "--json")
    usage_error(r, fragment)
    assert "Input should be" not in r.json["error"]["message"]


def test_order_at_the_maximum_and_whole_floats_pass(cli):
    r = cli("diff", "x**3", "--order", "20", "--json")
    assert r.code == 0 and r.json["derivative"] == "0"
    r = cli("diff", "x**3", "--order", "2.0", "--json")
    assert r.code == 0 and r.json["derivative"] == "6*x" and r.json["order"] == 2
    r = cli("grad", "x**3", "--x", "2", "--order", "3", "--json")
    assert r.code == 0 and r.json["grad"] == {"x": 6.0}


def test_order_maximum_is_the_documented_one():
    from autograd_cli.cli.options import MAX_ORDER

    docs = __import__("pathlib").Path(__file__).parent.parent / "docs"
    text = (docs / "commands.md").read_text(encoding="utf-8")  # grad --order, diff --order
    assert "a whole number from 0 to " + str(MAX_ORDER) in text
    assert "a whole number from 1 to " + str(MAX_ORDER) in text


# ---- 5. check -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["--eps", "0"], "--eps must be a finite number above 0, not 0"),
        (["--eps", "-1e-6"], "--eps must be a finite number above 0, not -1e-06"),
        (["--eps", "nan"], "--eps must be a finite number above 0"),
        (["--eps", "inf"], "--eps must be a finite number above 0"),
        (["--atol", "-1"], "--atol must be a finite number, 0 or more"),
        (["--rtol", "nan"], "--rtol must be a finite number, 0 or more"),
        (["--dtype", "float32", "--eps", "1e-12"], "--eps 1e-12 is too small to move --x = 1"),
    ],
)
def test_check_bad_step_or_tolerance(cli, argv, fragment):
    r = cli("check", "x**2", "--x", "1", *argv, "--json")
    usage_error(r, fragment)


@pytest.mark.parametrize(
    "value, fragment",
    [
        ("1e6", "--eps 0.001 is too small to move --x = 1e+06 in float32"),
        ("[1, inf]", "--x = inf: a gradient check needs finite values"),
        ("nan", "--x = nan: a gradient check needs finite values"),
    ],
)
def test_check_values_a_step_cannot_move(cli, value, fragment):
    usage_error(cli("check", "x**2", "--x", value, "--dtype", "float32", "--json"), fragment)


def test_library_gradcheck_refuses_a_step_that_does_not_move():
    import numpy as np

    from autograd_cli.core import tensor
    from autograd_cli.core.errors import InputError
    from autograd_cli.core.gradcheck import gradcheck

    x = tensor(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
    with pytest.raises(InputError, match=r"eps=1e-12 does not move input 0\[0\] = 1 in float32"):
        gradcheck(lambda t: (t * t).sum(), x, eps=1e-12)
    with pytest.raises(InputError, match="eps must be a finite number above 0"):
        gradcheck(lambda t: (t * t).sum(), x, eps=0.0)
    assert gradcheck(lambda t: (t * t).sum(), x, eps=None, atol=None, rtol=None)


def test_check_eps_zero_leaks_no_warning(cli):
    r = cli("check", "x**2", "--x", "1", "--eps", "0")
    assert r.code == 2
    assert "RuntimeWarning" not in r.err and r.out == ""


def test_check_without_variables_passes_with_a_note(cli):
    r = cli("check", "1+2", "--json")
    assert r.code == 0, r.out
    assert r.json["passed"] is True and r.json["analytic"] == {}
    assert any(w.startswith("nothing to check") for w in r.json["warnings"])
    r = cli("check", "1+2")
    assert r.code == 0 and "PASS" in r.out and "nothing to check" in r.out


def test_check_with_variables_has_no_such_note(cli):
    r = cli("check", "x+2", "--x", "1", "--json")
    assert r.code == 0
    assert "warnings" not in r.json


@pytest.mark.parametrize(
    "expr, values",
    [
        ("x**2", {"x": "1"}),
        ("x**2", {"x": "-37.5"}),
        ("sin(x)*exp(x)", {"x": "1"}),
        ("sin(x)*exp(x)", {"x": "-2.3"}),
        ("sin(x)*exp(x)", {"x": "7"}),
        ("sum(x**3)", {"x": "[1, -2, 3.5]"}),
        ("sum(x**3)", {"x": "[[10, 20], [-30, 0.1]]"}),
        ("x**2 + 1000", {"x": "0.5"}),
        ("x*y + sin(x*y)", {"x": "1.5", "y": "-0.7"}),
        ("log(x**2 + 1)*cos(x)", {"x": "25"}),
    ],
)
def test_check_float32_passes_correct_gradients(cli, expr, values):
    argv = [a for name, v in values.items() for a in (f"--{name}", v)]
    r = cli("check", expr, *argv, "--dtype", "float32", "--json")
    assert r.code == 0, r.out
    assert r.json["passed"] is True
    assert (r.json["eps"], r.json["atol"], r.json["rtol"]) == (1e-3, 1e-3, 1e-2)


def test_check_float32_still_fails_a_wrong_gradient(cli):
    # floor has gradient 0 but jumps inside the step: a real disagreement
    r = cli("check", "floor(x) + x", "--x", "1", "--dtype", "float32", "--json")
    assert r.code == 1
    assert r.json["passed"] is False


def test_check_float64_defaults_unchanged(cli):
    r = cli("check", "x**2*y + sin(x*y)", "--x", "1", "--y", "2", "--json")
    assert r.code == 0
    assert (r.json["eps"], r.json["atol"], r.json["rtol"]) == (1e-6, 1e-5, 1e-3)


def test_check_help_states_the_defaults(cli):
    from autograd_cli.core.gradcheck import GRADCHECK_DEFAULTS

    text = " ".join(cli("check", "--help", "--json").json["help"].split())
    for key in ("eps", "atol", "rtol"):
        shown = re.search(rf"--{key} .*?\[default: (\S+) for float64, (\S+) for float32\]", text)
        assert shown, key
        assert float(shown.group(1)) == GRADCHECK_DEFAULTS["float64"][key]
        assert float(shown.group(2)) == GRADCHECK_DEFAULTS["float32"][key]


# ---- 6. batch: --order that no line can use; -o onto a folder -----------------------------------


@pytest.fixture
def points(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("x,y\n1,2\n3,4\n")
    return str(path)


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["--order", "2"], "--order 2 with --op grad needs one variable"),
        (["--order", "2", "--wrt", "x,y"], "give --wrt NAME"),
        (["--order", "2", "--op", "hessian"], "--order applies to --op grad and --op diff"),
        (["--order", "1.5"], "--order must be a whole number, not '1.5'"),
        (["--order", "21"], "--order must be at most 20, not 21"),
    ],
)
def test_batch_order_is_one_usage_error_before_reading(cli, points, argv, fragment, monkeypatch):
    from autograd_cli.cli.batch import command

    def no_reading(*args, **kwargs):
        raise AssertionError("the input was read")

    monkeypatch.setattr(command, "Input", no_reading)
    r = cli("batch", points, "--expr", "x*y", *argv, "--no-progress", "--json")
    usage_error(r, fragment)
    assert r.out.count("\n") == 1  # one document, not one error record per line


def test_batch_order_with_one_wrt_runs(cli, points):
    r = cli("batch", points, "--expr", "x**2*y", "--order", "2", "--wrt", "x", "--no-progress")
    assert r.code == 0, r.out
    lines = [json.loads(line) for line in r.out.splitlines()]
    assert [d["grad"] for d in lines] == [{"x": 4.0}, {"x": 8.0}]


def test_batch_output_onto_a_folder_is_refused(cli, points, tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    usage_error(cli("batch", points, "--expr", "x*y", "-o", str(folder), "--json"), "directory")
    assert list(folder.iterdir()) == []


def test_batch_jsonl_line_order_has_the_same_maximum(cli, tmp_path):
    path = tmp_path / "lines.jsonl"
    path.write_text(
        '{"expr": "x**2", "vars": {"x": 1}, "order": 21}\n'
        '{"expr": "x**2", "vars": {"x": 1}, "order": 2}\n',
        encoding="utf-8",
    )
    r = cli("batch", str(path))
    docs = [json.loads(line) for line in r.out.splitlines()]
    assert r.code == 1
    assert docs[0]["error"]["kind"] == "bad_line" and "at most 20" in docs[0]["error"]["message"]
    assert docs[1]["grad"] == {"x": 2.0}
