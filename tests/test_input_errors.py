"""Every input gets a right answer or a clear error (issue 11): the language and its parser.

Through the real command line (the ``cli`` fixture runs it in-process, through its error
boundary): chained comparisons, ragged array literals, nonsense attributes (axes, indices,
``keepdims``, shapes), integer literals past the float range, the hints of error messages,
and the documented limits of the parser.

Oracles: Python's own chained comparisons (``operator`` applied pairwise, as the Python
reference defines ``a < b < c``), NumPy for values, SPEC.md's exit codes and the documented
error kinds, and the "Limits" list of docs/limits-and-errors.md for the limits.
"""

from __future__ import annotations

import json
import math
import operator
import re
from pathlib import Path

import numpy as np
import pytest

from autograd_cli.core.errors import LimitError
from autograd_cli.core.printing import to_latex, to_text
from autograd_cli.core.program import topological
from autograd_cli.core.recording import evaluate
from autograd_cli.grammar import parse
from autograd_cli.grammar import parser as P

LIMITS_PAGE = Path(__file__).resolve().parent.parent / "docs" / "limits-and-errors.md"


def _error(r, code: int, kind: str, fragment: str) -> dict:
    """The JSON error of a run that must fail with ``code`` and ``kind``, its message holding
    ``fragment``; never a traceback, never kind ``internal``."""
    assert r.code == code, r.out + r.err
    error = r.json["error"]
    assert error["kind"] == kind, error
    assert fragment in error["message"], error["message"]
    assert "Traceback" not in r.err
    return error


# ---- 1. comparisons chain as in Python ------------------------------------------------------

_OPS = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


def _python_chain(operands: list[float], ops: list[str]) -> float:
    """Python's meaning of ``a op1 b op2 c ...``: every adjacent pair holds."""
    pairs = zip(operands, ops, operands[1:])
    return float(all(_OPS[op](a, b) for a, op, b in pairs))


def _chain_text(operands, ops) -> str:
    text = str(operands[0])
    for op, b in zip(ops, operands[1:]):
        text += f" {op} {b}"
    return text


CHAINS = [
    ([3, 2, 1], [">", ">"]),
    ([1, 2, 3], ["<", "<"]),
    ([1, 2, 2], ["<", "<"]),
    ([1, 3, 2], ["<", ">"]),
    ([1, 1, 1], ["==", "=="]),
    ([2, 2, 3, 3], ["==", "!=", "<="]),
    ([1, 2, 3, 0], ["<", "<", "<"]),
    ([0, 0, 1], [">=", "<"]),
]


@pytest.mark.parametrize("operands, ops", CHAINS, ids=[_chain_text(*c) for c in CHAINS])
def test_a_chain_of_comparisons_means_what_python_means(cli, operands, ops):
    text = _chain_text(operands, ops)
    r = cli("eval", text, "--json")
    assert r.code == 0, r.out
    assert r.json["value"] == _python_chain(operands, ops)


def test_three_greater_than_two_greater_than_one_is_true(cli):
    # the case of the issue: it printed 0, as (3 > 2) > 1 is 1 > 1
    assert cli("eval", "3 > 2 > 1", "--json").json["value"] == 1.0
    assert cli("eval", "(3 > 2) > 1", "--json").json["value"] == 0.0
    assert cli("eval", "3 > (2 > 1)", "--json").json["value"] == 1.0


def test_a_chain_with_variables_is_elementwise(cli):
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.0])
    r = cli("eval", "0 < x <= 1", "--x", str(x.tolist()), "--json")
    assert r.code == 0, r.out
    assert r.json["value"] == ((0 < x) & (x <= 1)).astype(float).tolist()


def test_the_middle_operand_is_one_node_evaluated_once():
    program = parse("a < sin(x) < b")
    sines = [n for n in topological([program.output]) if n.op == "sin"]
    assert len(sines) == 1
    # the output is (a < m)*(m < b), both comparisons reading the same node m
    left, right = program.output.args
    assert program.output.op == "mul" and left.args[1] is right.args[0] is sines[0]


def test_the_gradient_flows_around_a_chain(cli):
    # x * (0 < x < 1): the factor is 1 inside, 0 outside; comparisons pass no gradient
    r = cli("grad", "x * (0 < x < 1)", "--x", "0.5", "--json")
    assert (r.code, r.json["value"], r.json["grad"]) == (0, 0.5, {"x": 1.0})
    r = cli("grad", "x * (0 < x < 1)", "--x", "1.5", "--json")
    assert (r.code, r.json["value"], r.json["grad"]) == (0, 0.0, {"x": 0.0})


ROUND_TRIP = [
    "x < y < z",
    "(x < y) < z",
    "x < (y < z)",
    "x < y == 1",
    "(x < y) == (y < x)",
    "a < sin(x)*y <= 3",
    "where(0 < x < 1, x, 0) + (x > y > z > a)",
    "1 < 2 < 3 < 4",
]
POINTS = [
    {"x": 0.5, "y": 0.7, "z": 0.8, "a": 0.1},
    {"x": 0.9, "y": 0.7, "z": 0.2, "a": 0.1},
    {"x": 0.5, "y": 0.5, "z": 0.5, "a": 0.5},
]


def _value(text: str, point: dict) -> float:
    program = parse(text)
    return evaluate(program, {k: point[k] for k in program.inputs}).output.item()


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_a_chain_prints_back_to_text_of_the_same_value(text):
    printed = to_text(parse(text).output)
    for point in POINTS:
        assert _value(printed, point) == _value(text, point), printed


def test_a_parenthesized_comparison_keeps_its_parentheses_in_text_and_latex():
    program = parse("(x < y) < z")
    assert to_text(program.output) == "(x < y) < z"
    assert to_latex(program.output) == "\\left(x < y\\right) < z"
    assert to_text(parse("x < y < z").output) == "(x < y)*(y < z)"


def test_diff_of_a_chain_prints_a_derivative_that_parses_back(cli):
    r = cli("diff", "x**2 * (0 < x < 1) + where(x < y <= 2, x, 0)", "--wrt", "x", "--json")
    assert r.code == 0, r.out
    derivative = r.json["derivative"]
    for x, y in ((0.5, 1.0), (1.5, 1.0), (0.5, 3.0)):
        want = 2 * x * (0 < x < 1) + (1.0 if x < y <= 2 else 0.0)
        assert _value(derivative, {"x": x, "y": y}) == pytest.approx(want), derivative
    r = cli("diff", "x * (0 < x < 1)", "--wrt", "x", "--latex")
    assert r.code == 0, r.err


def test_a_long_chain_parses_without_recursion():
    n = 5_000
    text = " < ".join(str(i) for i in range(n))
    assert _value(text, {}) == 1.0
    assert _value(text + " < 0", {}) == 0.0


# ---- 2. ragged array literals ---------------------------------------------------------------


@pytest.mark.parametrize(
    "expr, line, column, fragment",
    [
        ("[[1,2],[x]]", 1, 1, "element 2 has shape (1, ...) but element 1 has shape (2,)"),
        ("[[1,2],[3]]", 1, 1, "element 2 has shape (1,) but element 1 has shape (2,)"),
        ("[[1], 2]", 1, 1, "element 2 is a number but element 1 has shape (1,)"),
        ("[[x, 1], [2]]", 1, 1, "element 2 has shape (1,) but element 1 has shape (2, ...)"),
        ("x + [[1, 2], [x, 2, 3]]", 1, 5, "element 2 has shape (3, ...)"),
        ("[[[1], [2, 3]]]", 1, 2, "element 2 has shape (2,) but element 1 has shape (1,)"),
        ("[[1, 2], [[3, 4]]]", 1, 1, "element 2 has shape (1, 2)"),
        ("[[], [1]]", 1, 1, "element 2 has shape (1,) but element 1 has shape (0,)"),
        ("a = 1\nb = [[x, 1], [x]]\nb", 2, 5, "element 2 has shape (1, ...) but element 1"),
    ],
)
def test_a_ragged_literal_is_bad_value_at_its_position(cli, expr, line, column, fragment):
    r = cli("eval", expr, "--x", "1", "--json")
    error = _error(r, 2, "bad_value", f"ragged array literal at line {line}, column {column}")
    assert fragment in error["message"]
    assert (error["line"], error["column"]) == (line, column)


def test_a_ragged_literal_is_exit_2_without_json_too(cli):
    r = cli("eval", "[[1,2],[x]]", "--x", "1")
    assert r.code == 2
    assert "ragged array literal at line 1, column 1" in r.err


@pytest.mark.parametrize(
    "expr, x, want",
    [
        ("[[x, 1], [2, x]]", 3.0, [[3.0, 1.0], [2.0, 3.0]]),
        ("[[1, 2], x]", [3.0, 4.0], [[1.0, 2.0], [3.0, 4.0]]),
        ("[x, 1]", [2.0, 3.0], [[2.0, 3.0], [1.0, 1.0]]),  # a number in a row repeats
        ("[[], []]", 0.0, np.zeros((2, 0)).tolist()),
    ],
)
def test_rectangular_literals_still_evaluate(cli, expr, x, want):
    r = cli("eval", f"{expr} + 0*sum(x)", "--x", str(x), "--json")
    assert r.code == 0, r.out
    assert r.json["value"] == want


def test_rows_known_only_when_evaluated_that_do_not_fit_are_a_shape_error(cli):
    r = cli("eval", "[[1, 2], x]", "--x", "[1, 2, 3]", "--json")
    _error(r, 1, "shape", "stack")


def test_a_row_of_one_is_not_stretched_to_fit(cli, tmp_path):
    r = cli("eval", "[[1, 2], x]", "--x", "[1]", "--json")
    _error(r, 1, "shape", "the elements of an array literal must have one shape")
    r = cli("eval", "[x, 3]", "--x", "[5, 6]", "--json")  # a number is repeated
    assert r.code == 0 and r.json["value"] == [[5.0, 6.0], [3.0, 3.0]]
    # batch: the ragged row gets the same error as alone, the others their values
    path = tmp_path / "rows.jsonl"
    path.write_text('{"x": [1]}\n{"x": [3, 4]}\n', encoding="utf-8")
    r = cli("batch", str(path), "--expr", "sum([[1, 2], x])", "--op", "eval")
    docs = [json.loads(line) for line in r.out.splitlines()]
    assert docs[0]["error"]["kind"] == "shape" and docs[1]["value"] == 10.0


# ---- 3. attributes: constant integers, checked ------------------------------------------------


@pytest.mark.parametrize(
    "expr, fragment",
    [
        ("sum(x, axis=[0.5])", "each axis of sum() must be an integer, got 0.5"),
        ("sum(x, axis=[[0]])", "each axis of sum() must be an integer, got a list"),
        ("sum(x, keepdims=nan)", "keepdims of sum() must be 0 or 1, got nan"),
        ("sum(x, keepdims=2)", "keepdims of sum() must be 0 or 1, got 2.0"),
        ("mean(x, keepdims=[1])", "keepdims of mean() must be 0 or 1, got a list"),
        ("sum(x, 1e30)", "the axis of sum() must be an integer from -64 to 63"),
        ("prod(x, axis=-65)", "the axis of prod() must be an integer from -64 to 63"),
        ("max(x, axis=nan)", "the axis of max() must be an integer, got nan"),
        ("norm(x, axis=inf)", "the axis of norm() must be an integer, got inf"),
        ("x[nan]", "an index must be an integer, got nan"),
        ("x[inf]", "an index must be an integer, got inf"),
        ("x[-inf]", "an index must be an integer, got -inf"),
        ("x[0, 0.5]", "an index must be an integer, got 0.5"),
        ("x[1e20]", "an index must be an integer from -2**63 to 2**63-1, got 1e+20"),
        ("x[nan:1]", "a slice bound must be an integer, got nan"),
        ("x[0:1e30]", "a slice bound must be an integer from -2**63 to 2**63-1"),
        ("reshape(x, [nan])", "the shape of reshape() must be a list of integers"),
        ("reshape(x, [inf, 1])", "the shape of reshape() must be a list of integers"),
        ("reshape(x, [-2, -2])", "a dimension of reshape() must be an integer from -1"),
        ("reshape(x, [1e30])", "a dimension of reshape() must be an integer from -1 to 2**63-1"),
        ("reshape(x, [" + ", ".join(["1"] * 65) + "])", "an array has at most 64"),
    ],
)
def test_nonsense_attributes_are_exit_2_naming_the_argument(cli, expr, fragment):
    r = cli("eval", expr, "--x", "[[1, 2], [3, 4]]", "--json")
    _error(r, 2, "input", fragment)


@pytest.mark.parametrize(
    "expr, want",
    [
        ("sum(x, axis=1.0)", [3.0, 7.0]),
        ("sum(x, 1, keepdims=1.0)", [[3.0], [7.0]]),
        ("sum(x, axis=[0.0, -1.0], keepdims=0)", 10.0),
        ("x[-0.0]", [1.0, 2.0]),
        ("x[1.0, 0:1.0]", [3.0]),
        ("reshape(x, [4.0])", [1.0, 2.0, 3.0, 4.0]),
        ("reshape(x, [-1, 1])", [[1.0], [2.0], [3.0], [4.0]]),
    ],
)
def test_integer_valued_attributes_stay_accepted(cli, expr, want):
    r = cli("eval", expr, "--x", "[[1, 2], [3, 4]]", "--json")
    assert r.code == 0, r.out
    assert r.json["value"] == want


def test_an_axis_out_of_range_for_the_array_stays_a_shape_error(cli):
    # within -64..63 the rank decides, when evaluated: exit 1, kind shape
    r = cli("eval", "sum(x, 5)", "--x", "[[1, 2], [3, 4]]", "--json")
    _error(r, 1, "shape", "axis 5 is out of bounds")


# ---- 4. numbers past the float range --------------------------------------------------------


@pytest.mark.parametrize("digits", [400, 5_000])  # 5,000: past Python's 4,300-digit int limit
def test_an_integer_literal_past_the_float_range_is_bad_value(cli, digits):
    literal = "1" * digits
    r = cli("eval", f"x * {literal}", "--x", "1", "--json")
    error = _error(r, 2, "bad_value", "is too large for a float")
    assert f"({digits:,} digits) at line 1, column 5" in error["message"]
    assert len(error["message"]) < 300  # the digits are not all repeated back
    assert "4300" not in error["message"] and "Python" not in error["message"]
    assert (error["line"], error["column"]) == (1, 5)


@pytest.mark.parametrize(
    "expr, want",
    [
        ("1e400", "inf"),
        ("-1e400", "-inf"),
        ("1e-400", 0.0),
        ("1" * 400 + ".5", "inf"),  # a float literal: IEEE's inf, as in Python
        ("1" * 309, float("1" * 309)),  # the largest integers that fit stay numbers
        ("0" * 5_000 + "7", 7.0),  # leading zeros are not digits that count
    ],
)
def test_float_literals_past_the_range_are_ieee(cli, expr, want):
    r = cli("eval", expr, "--json")
    assert r.code == 0, r.out
    assert r.json["value"] == want


def test_a_huge_index_or_axis_literal_is_never_an_internal_error(cli):
    for expr in ("x[" + "1" * 5_000 + "]", "sum(x, " + "9" * 400 + ")", "x[1e400]"):
        r = cli("eval", expr, "--x", "[1, 2]", "--json")
        assert r.code == 2, r.out
        assert r.json["error"]["kind"] in ("bad_value", "input")


# ---- 5. messages that say what to write ------------------------------------------------------


@pytest.mark.parametrize(
    "name, hint",
    [("ln", "log"), ("sine", "sin"), ("SQRT", "sqrt"), ("Exp", "exp"), ("sgn", "sign")],
)
def test_an_unknown_function_suggests_the_known_one(cli, name, hint):
    r = cli("eval", f"{name}(x)", "--x", "1", "--json")
    error = _error(r, 2, "unknown_function", f"unknown function {name!r}")
    assert f"did you mean {hint!r}?" in error["message"]


def test_an_unknown_function_far_from_any_suggests_nothing(cli):
    r = cli("eval", "qqqqzz(x)", "--x", "1", "--json")
    assert "did you mean" not in _error(r, 2, "unknown_function", "'qqqqzz'")["message"]


@pytest.mark.parametrize(
    "expr, hint",
    [
        ("2x", "implicit multiplication is not supported: write 2*x"),
        ("3 * 2x + 1", "write 2*x"),
        ("x y", "write x*y"),
        ("2(x + 1)", "write 2*(...)"),
        ("(x + 1)(x - 1)", "write (...)*(...)"),
        ("sin x", "a function is called with parentheses: sin(x)"),
    ],
)
def test_operands_side_by_side_suggest_the_operator(cli, expr, hint):
    r = cli("eval", expr, "--x", "1", "--json")
    _error(r, 2, "syntax", hint)


def test_a_real_syntax_error_gets_no_multiplication_hint(cli):
    r = cli("eval", "x + * 2", "--x", "1", "--json")
    assert "implicit" not in _error(r, 2, "syntax", "unexpected '*'")["message"]


@pytest.mark.parametrize(
    "argv, name, fragment",
    [
        (["grad", "e*2", "--e", "1"], "e", "'e' is the constant e = 2.718281828459045"),
        (["eval", "pi*x", "--pi", "1", "--x", "2"], "pi", "'pi' is the constant pi = 3.14159"),
        (["eval", "x", "--var", "inf=1", "--x", "2"], "inf", "'inf' is the constant inf,"),
    ],
)
def test_a_constant_given_a_value_says_it_is_a_constant(cli, argv, name, fragment):
    error = _error(cli(*argv, "--json"), 2, "unknown_variable", fragment)
    assert f"such as {name}_" in error["message"]
    assert error["variable"] == name


# ---- 6. limits -------------------------------------------------------------------------------


def test_the_limits_are_the_documented_ones():
    page = " ".join(LIMITS_PAGE.read_text(encoding="utf-8").split())
    limits = page[page.index("## Limits ") :][:1200]
    assert P.MAX_SOURCE_CHARS == 16 * 1024 * 1024 and "16,777,216 characters" in limits
    assert f"{P.MAX_NESTING:,} deep" in limits
    assert f"{P.MAX_STATEMENTS:,} statements" in limits
    assert f"at most {P.MAX_ARRAY_DEPTH} deep" in limits
    assert f"{P.MAX_ARRAY_ELEMENTS:,} elements" in limits
    # what tests/test_depth.py runs fits
    assert P.MAX_NESTING >= 100_000 and P.MAX_STATEMENTS >= 100_000


def test_an_expression_past_the_length_limit_is_a_limit_error():
    with pytest.raises(LimitError, match="characters long; the limit is 16,777,216"):
        parse("x" * (P.MAX_SOURCE_CHARS + 1))


def test_nesting_past_the_limit_is_a_limit_error(cli, monkeypatch):
    monkeypatch.setattr(P.limits, "MAX_NESTING", 50)
    ok = cli("eval", "(" * 50 + "x" + ")" * 50, "--x", "2", "--json")
    assert ok.code == 0 and ok.json["value"] == 2.0
    for text, column in (("(" * 51 + "x" + ")" * 51, 51), ("sin(" * 25 + "[" * 26, 126)):
        r = cli("eval", text, "--x", "2", "--json")
        error = _error(r, 1, "limit", "nests brackets more than 50 deep")
        assert (error["line"], error["column"]) == (1, column)


def test_statements_past_the_limit_are_a_limit_error(cli, monkeypatch):
    monkeypatch.setattr(P.limits, "MAX_STATEMENTS", 10)
    ten = ";".join(f"a{i} = x + {i}" for i in range(9)) + ";;\n\n a8"
    assert cli("eval", ten, "--x", "1", "--json").json["value"] == 9.0
    eleven = ten + "; 1"
    error = _error(cli("eval", eleven, "--x", "1", "--json"), 1, "limit", "more than 10 statements")
    assert error["column"] == len(eleven.splitlines()[-1])


def test_array_literals_past_the_depth_limit_are_a_limit_error(cli):
    # 32 deep evaluates; 33 deep (and 65, past NumPy's 64 dimensions: an internal error
    # before) is a limit error, in every command, diff included
    deep = "[" * 32 + "x" + "]" * 32
    r = cli("eval", f"sum({deep})", "--x", "2", "--json")
    assert r.code == 0 and r.json["value"] == 2.0
    for depth in (33, 40, 65):
        literal = "[" * depth + "1" + "]" * depth
        for command in ("eval", "grad", "diff"):
            r = cli(command, f"x * sum({literal})", "--x", "2", "--json")
            error = _error(r, 1, "limit", "nests more than 32 deep")
            assert error["column"] == 9 + depth - 33  # the bracket that opens the 33rd level


def test_array_literals_past_the_size_limit_are_a_limit_error(cli, monkeypatch):
    monkeypatch.setattr(P.limits, "MAX_ARRAY_ELEMENTS", 12)
    twelve = [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]]
    assert cli("eval", str(twelve), "--json").json["value"] == twelve
    thirteen = "[" + ", ".join(["1"] * 13) + "]"
    error = _error(cli("eval", f"x + {thirteen}", "--x", "1", "--json"), 1, "limit", "")
    assert "has more than 12 elements" in error["message"] and error["column"] == 5
    rows = ", ".join("[x, 1, 2, 3]" for _ in range(4))  # 16 elements, some known when evaluated
    _error(cli("eval", f"[{rows}]", "--x", "1", "--json"), 1, "limit", "more than 12 elements")


def test_limit_messages_are_short_and_name_the_position(cli, monkeypatch):
    monkeypatch.setattr(P.limits, "MAX_NESTING", 3)
    r = cli("eval", "y = x + 1\n ((((y))))", "--x", "1", "--json")
    error = _error(r, 1, "limit", "(line 2, column 5)")
    assert (error["line"], error["column"]) == (2, 5)
    assert re.fullmatch(r"[ -~]{1,200}", error["message"])


def test_the_value_of_math_constants_is_untouched():
    # (a guard for the constants check above: they still parse as constants)
    assert _value("e + pi", {}) == pytest.approx(math.e + math.pi)
