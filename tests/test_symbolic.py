"""Symbolic diff, simplification, printing and explain.

Oracles: the engine's own ``grad`` (the printed derivative, parsed back and
evaluated, must give the same numbers), SymPy (equal values at random points;
printed no longer on the bench corpus), and the unsimplified expression itself
(every simplification is checked by evaluating before and after).
"""

from __future__ import annotations

import importlib.util
import json
import math
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograd_cli import diff, explain  # the facade: core's own take a parsed Program
from autograd_cli.cli import jsonout, render
from autograd_cli.core import autograd
from autograd_cli.core.errors import InputError, MissingValueError, UnknownVariableError
from autograd_cli.core.printing import count_tokens, to_latex, to_text
from autograd_cli.core.program import Expr, topological
from autograd_cli.core.recording import evaluate
from autograd_cli.core.symbolic import Builder, UnsupportedDiffError, grad_exprs, simplify
from autograd_cli.grammar import parse

sympy = pytest.importorskip("sympy")

_BENCH_PATH = Path(__file__).resolve().parents[1] / "bench" / "diff_vs_sympy.py"
_spec = importlib.util.spec_from_file_location("diff_vs_sympy", _BENCH_PATH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)
CORPUS = bench.CORPUS


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def value_of(program_or_expr, point: dict) -> float:
    """Evaluate with the engine, giving only the variables the expression uses."""
    expr = program_or_expr.output if hasattr(program_or_expr, "output") else program_or_expr
    names = {n.name for n in topological([expr]) if n.op == "var"}
    ev = evaluate(expr, {k: v for k, v in point.items() if k in names}, check_domain=False)
    return float(ev.output.data)


def engine_derivative(text: str, var: str, point: dict, order: int = 1) -> float:
    """d^order/dvar^order by the engine (create_graph for higher orders)."""
    program = parse(text)
    ev = evaluate(program, point, requires_grad=program.inputs, check_domain=False)
    out = ev.output
    for k in range(order):
        if not out.requires_grad:
            return 0.0
        (out,) = autograd.grad(out, ev.leaves[var], create_graph=k < order - 1, allow_unused=True)
        if out is None:
            return 0.0
    return float(out.data)


def printed_derivative_value(text: str, var: str, point: dict, order: int = 1) -> float:
    printed = diff(text, var, order=order).derivatives[var].text
    return value_of(parse(printed), point)


def close(a: float, b: float, rel: float = 1e-9, abs_: float = 1e-10) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


def random_point(names, rng) -> dict:
    return bench.random_point(names, rng)


# Beyond the bench corpus: every kind of op the differentiator handles.
EXTRA = [
    ("where(x > 0.5, x**2, -x)", "x"),
    ("max(x, y)", "x"),
    ("min(x**2, y)", "y"),
    ("relu(x - 0.5)**2", "x"),
    ("abs(x - 0.5)", "x"),
    ("sign(x)*x**2", "x"),
    ("(x > 0.3)*x**3", "x"),
    ("log2(x) + log10(x**2)", "x"),
    ("softplus(3*x)", "x"),
    ("acos(x)", "x"),
    ("cosh(x)**2 - sinh(x)**2", "x"),
    ("pi*x**2 + e**x", "x"),
    ("x^y", "y"),
    ("x**y", "x"),
    ("y**x", "x"),
    ("a = x*y; b = a + y; a*b", "y"),
    ("x - -y - (x - y)", "y"),
    ("-x**2 - (-x)**3", "x"),
    ("2**-x", "x"),
    ("x/y/(x - y - 3)", "y"),
    ("sqrt(x)*sqrt(x)", "x"),
    ("x**0.5*x**1.5", "x"),
    ("(x*y)**0.5", "x"),
    ("exp(log(x)*y)", "y"),
    ("sigmoid(x*y)*tanh(y)", "y"),
    ("atan(y/x)", "x"),
    ("1/(1 + 1/(1 + 1/x))", "x"),
    ("floor(x) + round(y)*x", "x"),
    ("where(x < y, sin(x), cos(y))", "y"),
    ("x*0 + y*1 + 0", "y"),
]


# ---------------------------------------------------------------------------
# The examples (the seeds)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, wrt, expected",
    [
        ("3*a**3-b**2", None, {"a": "9*a**2", "b": "-2*b"}),  # seed 003: Q = 3a^3 - b^2
        ("3*a**3-b**2", "a", {"a": "9*a**2"}),
        ("2*x**2+b", "x", {"x": "4*x"}),  # seed 002
        ("3*(x+2)**2", "x", {"x": "6*(x + 2)"}),  # seed 000: z = 3*(x + 2)**2
        ("y = (x + w) * (w + 1)", "w", {"w": "2*w + x + 1"}),  # seed 000's worked example
        ("a = x + w; b = w + 1; a * b", "w", {"w": "2*w + x + 1"}),
    ],
)
def test_seed_derivatives(text, wrt, expected):
    assert diff(text, wrt).texts() == expected


def test_seed_values():
    # Seed 000: dy/dw at x = 2, w = 1 is 5.
    r = diff("y = (x + w) * (w + 1)", "w", values={"x": 2, "w": 1})
    assert (r.value, r.derivatives["w"].value) == (6.0, 5.0)
    # Seed 002: y = 2x^2 + b at x = 2, b = 1: y = 9, dy/dx = 8.
    r = diff("2*x**2+b", "x", values={"x": 2, "b": 1})
    assert (r.value, r.derivatives["x"].value) == (9.0, 8.0)
    # Seed 003: a = [2, 3], b = [6, 4]: dQ/da = 9a^2, dQ/db = -2b, elementwise.
    r = diff("3*a**3 - b**2", values={"a": [2.0, 3.0], "b": [6.0, 4.0]})
    assert r.derivatives["a"].value == [36.0, 81.0]
    assert r.derivatives["b"].value == [-12.0, -8.0]


def test_derivative_value_broadcasts_to_the_value_shape():
    r = diff("3*x + y", "x", values={"x": [1.0, 2.0], "y": 0})
    assert r.derivatives["x"].text == "3"
    assert r.derivatives["x"].value == [3.0, 3.0]


def _diff_doc(source, *args, **kwargs):
    """diff's SPEC document as the command line writes it (cli/render.py, cli/jsonout.py)."""
    return json.loads(jsonout.dumps(render.diff_json(source, diff(source, *args, **kwargs))))


def test_diff_json_follows_the_spec():
    # Was core's DiffResult.as_dict; the document is the command line's (cli/render.diff_json).
    one = _diff_doc("2*x**2+b", "x", values={"x": 2, "b": 1})
    assert one == {"expr": "2*x**2+b", "derivative": "4*x", "value": 9.0, "derivative_value": 8.0}
    several = _diff_doc("3*a**3-b**2")
    assert several == {"expr": "3*a**3-b**2", "derivative": {"a": "9*a**2", "b": "-2*b"}}
    weird = _diff_doc("log(x)", "x", values={"x": 0})
    assert weird["derivative_value"] == "inf" and weird["value"] == "-inf"
    json.dumps(weird, allow_nan=False)
    assert _diff_doc("x**3", "x", order=2)["order"] == 2
    # The library's result keeps plain floats: inf stays a float.
    plain = diff("log(x)", "x", values={"x": 0})
    assert plain.value == -math.inf and plain.derivatives["x"].value == math.inf


# ---------------------------------------------------------------------------
# Round trip: diff -> parse -> evaluate equals the engine's grad
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("text, var", CORPUS + EXTRA)
def test_round_trip_matches_engine_grad(text, var, order):
    # A str seed is hashed with SHA-512, not hash(): the same points under every PYTHONHASHSEED.
    rng = random.Random(f"{text}|{var}|{order}")
    names = parse(text).inputs
    for _ in range(3):
        point = random_point(names, rng)
        expected = engine_derivative(text, var, point, order)
        got = printed_derivative_value(text, var, point, order)
        assert close(got, expected, rel=1e-8, abs_=1e-9), (text, point, got, expected)


def test_every_variable_by_default_and_wrt_lists():
    assert list(diff("x*y + z").derivatives) == ["x", "y", "z"]
    assert diff("x*y + z", "z,x").texts() == {"z": "1", "x": "y"}
    assert diff("x*y + z", ["y"]).texts() == {"y": "x"}


# ---------------------------------------------------------------------------
# SymPy: equal values, and printed no longer
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bench_rows():
    return bench.run(seed=1)


def test_values_match_sympy_on_the_corpus(bench_rows):
    assert len(bench_rows) == 50
    assert [r["expr"] for r in bench_rows if not r["values_agree"]] == []


# The issue prefers 3*(x + 2)**2 -> 6*(x + 2) (the seed's form) to SymPy's 6*x + 12:
# a numeric multiple of a sum keeps its factor unless it sits inside a sum.  That
# costs the two parentheses; every other expression must be no longer than SymPy's.
FACTORED_BY_CHOICE = {"3*(x + 2)**2": 2}


def test_printed_no_longer_than_sympy(bench_rows):
    for r in bench_rows:
        allowance = FACTORED_BY_CHOICE.get(r["expr"], 0)
        assert r["ours_tokens"] <= r["sympy_tokens"] + allowance, r
    assert sum(r["ours_tokens"] for r in bench_rows) <= sum(r["sympy_tokens"] for r in bench_rows)


@pytest.mark.parametrize(
    "text, var, order",
    [
        ("x**x", "x", 3),
        ("exp(-x**2)", "x", 4),
        ("sin(x)/x", "x", 3),
        ("atan(x)", "x", 5),
        ("log(x**2 + 1)", "x", 3),
        ("x*y/(x + y)", "x", 3),
        ("sqrt(1 - x**2)", "x", 4),
        ("sigmoid(x)", "x", 3),
        ("tan(x)", "x", 4),
        ("(x + 1)**2*(x - 1)", "x", 4),
    ],
)
def test_higher_orders_match_sympy(text, var, order):
    rng = random.Random(7)
    names = parse(text).inputs
    theirs = bench.sympy_diff(text, var, names, order)
    for _ in range(3):
        point = random_point(names, rng)
        got = printed_derivative_value(text, var, point, order)
        assert close(got, bench.sympy_value(theirs, point), rel=1e-8), (text, point)


def test_tenth_derivatives():
    r = diff("log(1+x)", "x", order=10).derivatives["x"]
    assert (r.text, r.simplified) == ("-362880/(x + 1)**10", True)
    r = diff("sin(x)*exp(x)", "x", order=10).derivatives["x"]
    assert (r.text, r.simplified) == ("32*cos(x)*exp(x)", True)
    x = sympy.Symbol("x", real=True)
    for text, f in [
        ("exp(x**2)", sympy.exp(x**2)),
        ("atan(x)", sympy.atan(x)),
        ("tan(x)", sympy.tan(x)),
        ("sigmoid(x)", 1 / (1 + sympy.exp(-x))),
    ]:
        d = diff(text, "x", order=10).derivatives["x"]
        assert d.simplified, text
        expected = float(sympy.diff(f, x, 10).evalf(30, subs={x: sympy.Rational(3, 10)}))
        assert close(value_of(parse(d.text), {"x": 0.3}), expected, rel=1e-8), text


# ---------------------------------------------------------------------------
# Simplification: the rules, and value preservation on random expressions
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("x*1", "x"),
        ("x + 0", "x"),
        ("x*0", "0"),
        ("x**1", "x"),
        ("x**0", "1"),
        ("x*x", "x**2"),
        ("2*x + 3*x", "5*x"),
        ("x*2", "2*x"),
        ("a - -b", "a + b"),
        ("2*3 + x", "x + 6"),
        ("x/x", "1"),
        ("x**2*x**3", "x**5"),
        ("(x*y)**2", "x**2*y**2"),
        ("exp(0) + sqrt(4)", "3"),
        ("sqrt(2)", "sqrt(2)"),
        ("1/3 + 1/3", "2/3"),
        ("-(-x)", "x"),
        ("x - x", "0"),
        ("2*(x + 1) + x", "3*x + 2"),
        ("3*(x + 2)", "3*(x + 2)"),
        ("where(1 > 0, x, y)", "x"),
        ("(x + 1)*(x + 1)", "(x + 1)**2"),
        ("x/2 - x/3", "x/6"),
        ("-x*y/2", "-x*y/2"),
        ("1 - x**2", "1 - x**2"),
        ("x**-1*y", "y/x"),
        ("(x**2)**0.5", "(x**2)**(1/2)"),  # not x: (x**2)**0.5 is |x|
        ("x**0.5*x**0.5", "x**(1/2)*x**(1/2)"),  # not x: nan for x < 0
        ("log(2)*x + 2*pi", "x*log(2) + 2*pi"),
        ("where(x > 0, 2*x, 0) + where(x > 0, 0, -1)", "where(x > 0, 2*x, -1)"),
    ],
)
def test_simplification_rules(text, expected):
    assert to_text(simplify(parse(text).output)) == expected


UNARY = ["sin", "cos", "exp", "log", "sqrt", "tanh", "atan", "abs", "neg", "sigmoid", "relu"]
BINARY = ["add", "sub", "mul", "div", "pow", "maximum"]
CONSTANTS = [0.0, 1.0, 2.0, 3.0, 0.5, -1.0, -2.0, 1.5, 0.1, 1 / 3]


def _trees():
    leaves = st.one_of(st.sampled_from(["x", "y"]), st.sampled_from(CONSTANTS))
    return st.recursive(
        leaves,
        lambda kids: st.one_of(
            st.tuples(st.sampled_from(UNARY), kids),
            st.tuples(st.sampled_from(BINARY), kids, kids),
            st.tuples(st.just("pow"), kids, st.sampled_from([2.0, 3.0, -1.0, 0.5, -2.0, 0.0])),
            st.tuples(st.just("where"), st.tuples(st.just("gt"), kids, kids), kids, kids),
        ),
        max_leaves=10,
    )


def _to_expr(tree) -> Expr:
    """A hypothesis tree as an Expr (iteratively, as everything here)."""
    built: dict[int, Expr] = {}
    stack = [(tree, False)]
    while stack:
        node, ready = stack.pop()
        if isinstance(node, str):
            built[id(node)] = Expr.var(node)
        elif isinstance(node, float):
            built[id(node)] = Expr.const(node)
        elif ready:
            built[id(node)] = Expr(node[0], tuple(built[id(a)] for a in node[1:]))
        else:
            stack.append((node, True))
            stack.extend((a, False) for a in node[1:])
    return built[id(tree)]


def _magnitude(expr: Expr, point: dict) -> float:
    """The largest finite intermediate value: the scale of rounding differences."""
    import numpy as np

    from autograd_cli.core.tensor import OPS

    vals, scale = {}, 1.0
    with np.errstate(all="ignore"):
        for n in topological([expr]):
            if n.op == "const":
                v = float(n.value)
            elif n.op == "var":
                v = point[n.name]
            else:
                v = float(OPS[n.op].forward(*(np.float64(vals[id(a)]) for a in n.args)))
            vals[id(n)] = v
            if math.isfinite(v):
                scale = max(scale, abs(v))
    return scale


POINTS = st.fixed_dictionaries({"x": st.floats(-3, 3), "y": st.floats(0.05, 3)})
SETTINGS = settings(
    max_examples=120, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


@SETTINGS
@given(_trees(), st.lists(POINTS, min_size=3, max_size=3))
def test_simplify_preserves_value(tree, points):
    expr = _to_expr(tree)
    simple = simplify(expr)
    for point in points:
        before = value_of(expr, point)
        if not math.isfinite(before):
            continue  # where the input is undefined, nothing is promised
        after = value_of(simple, point)
        assert math.isclose(after, before, rel_tol=1e-7, abs_tol=1e-9 * _magnitude(expr, point)), (
            to_text(expr),
            to_text(simple),
            point,
        )


@SETTINGS
@given(_trees(), st.lists(POINTS, min_size=2, max_size=2))
def test_random_derivatives_match_engine(tree, points):
    expr = _to_expr(tree)
    names = sorted({n.name for n in topological([expr]) if n.op == "var"})
    if not names:
        return
    result = diff(expr, names)
    for point in points:
        ev = evaluate(expr, point, requires_grad=names, check_domain=False)
        if not ev.output.requires_grad or not math.isfinite(float(ev.output.data)):
            continue
        for name in names:
            (g,) = autograd.grad(ev.output, ev.leaves[name], retain_graph=True, allow_unused=True)
            expected = 0.0 if g is None else float(g.data)
            got = value_of(parse(result.derivatives[name].text), point)
            if not (math.isfinite(got) and math.isfinite(expected)):
                # e.g. sqrt(min(0, x)): the engine's chain() masks 0*inf at run time.
                continue
            scale = _magnitude(expr, point)
            assert math.isclose(got, expected, rel_tol=1e-6, abs_tol=1e-8 * scale * scale), (
                to_text(expr),
                name,
                result.derivatives[name].text,
                point,
            )


@SETTINGS
@given(_trees(), POINTS)
def test_printer_round_trip_is_exact(tree, point):
    # Printing then parsing gives back the same tree: the same float, bit for bit.
    expr = _to_expr(tree)
    back = parse(to_text(expr)).output
    a, b = value_of(expr, point), value_of(back, point)
    assert a == b or (math.isnan(a) and math.isnan(b)), (to_text(expr), point)


# ---------------------------------------------------------------------------
# Printing
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("-x**2", "-x**2"),
        ("(-x)**2", "(-x)**2"),
        ("a - (b - c)", "a - (b - c)"),
        ("a - b - c", "a - b - c"),
        ("2**-1", "2**-1"),
        ("x**y**z", "x**y**z"),
        ("(x**y)**z", "(x**y)**z"),
        ("(a + b)*c", "(a + b)*c"),
        ("a*(b*c)", "a*(b*c)"),
        ("a/(b*c)", "a/(b*c)"),
        ("a/b/c", "a/b/c"),
        ("-(a + b)", "-(a + b)"),
        ("x - -y", "x - -y"),
        ("(x > 0)*y", "(x > 0)*y"),
        ("x^-y", "x**-y"),
        ("pi*e", "pi*e"),
        ("1e-5*x", "1e-05*x"),
        ("max(a, b) + where(x <= 1, sin(x), 0.5)", "max(a, b) + where(x <= 1, sin(x), 0.5)"),
    ],
)
def test_printer_precedence(text, expected):
    assert to_text(parse(text).output) == expected


def test_printer_on_hand_built_graphs():
    x = Expr.var("x")
    c = Expr.const
    cases = [
        (Expr("neg", (c(-2.0),)), "-(-2)"),
        (Expr("pow", (c(-2.0), x)), "(-2)**x"),
        (Expr("pow", (x, c(-1.0))), "x**-1"),
        (Expr("mul", (x, c(-2.0))), "x*(-2)"),
        (Expr("neg", (Expr("neg", (x,)),)), "-(-x)"),
        (c(math.inf), "inf"),
        (Expr("pow", (c(-math.inf), x)), "(-inf)**x"),
        (c(0.1), "0.1"),
        (Expr("add", (x, Expr("add", (x, x)))), "x + (x + x)"),
    ]
    for expr, expected in cases:
        assert to_text(expr) == expected
        back = parse(expected).output
        for v in (0.7, 2.0):
            a, b = value_of(expr, {"x": v}), value_of(back, {"x": v})
            assert a == b or (math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize(
    "text, expected",
    [
        ("3*a**3-b**2", {"a": "9 a^{2}", "b": "-2 b"}),
        ("3*(x+2)**2", {"x": "6 \\left(x + 2\\right)"}),
        ("sqrt(x)", {"x": "\\frac{1}{2 \\sqrt{x}}"}),
        ("exp(-x**2)", {"x": "-2 x e^{-x^{2}}"}),
        ("log2(x)", {"x": "\\frac{1}{x \\log\\left(2\\right)}"}),
        ("x**(1/3)", {"x": "\\frac{1}{3 x^{\\frac{2}{3}}}"}),
        (
            "abs(x1)*alpha",
            {
                "x1": "\\alpha \\operatorname{sign}\\left(x_{1}\\right)",
                "alpha": "\\left|x_{1}\\right|",
            },
        ),
    ],
)
def test_latex(text, expected):
    assert {k: d.latex for k, d in diff(text).derivatives.items()} == expected


def test_token_count():
    assert count_tokens("9*a**2") == 5
    assert count_tokens("-x/(x**2 + 1)**(3/2)") == 16
    assert count_tokens("where(x >= 1e-05, 2.5, y_1)") == 10


def test_shared_subexpressions_are_one_node_and_print_once():
    # Hash-consing: sin(x) built twice is one node in the simplified graph.
    out = simplify(parse("sin(x)*cos(x) + sin(x)**2").output)
    sins = [n for n in topological([out]) if n.op == "sin"]
    assert len(sins) == 1
    # A long derivative with repeated parts prints them once, as bindings, and parses back.
    d = diff("sigmoid(x)", "x", order=10).derivatives["x"]
    assert d.text.startswith("t1 = ")
    program = parse(d.text)
    assert program.inputs == ["x"]
    assert close(
        value_of(program, {"x": 0.3}),
        engine_derivative("sigmoid(x)", "x", {"x": 0.3}, 10),
        rel=1e-7,
    )


# ---------------------------------------------------------------------------
# Budget, guards, errors
# ---------------------------------------------------------------------------


def test_budget_exhausted_prints_unsimplified_with_a_note():
    r = diff("x**2*exp(x)*sin(x)", "x", order=3, step_budget=50)
    d = r.derivatives["x"]
    assert not d.simplified and "unsimplified" in d.note and r.notes
    assert close(
        value_of(parse(d.text), {"x": 0.7}),
        engine_derivative("x**2*exp(x)*sin(x)", "x", {"x": 0.7}, 3),
        rel=1e-9,
    )
    r = diff("sin(x)*exp(x)", "x", order=2, time_budget=0.0, step_budget=10)
    assert not r.derivatives["x"].simplified


def test_guards_keep_the_engine_conventions():
    assert diff("x**y", "y").texts() == {"y": "x**y*log(x)"}
    guarded = diff("x**y", "y", guards=True).derivatives["y"]
    assert "where" in guarded.text
    point = {"x": 0.0, "y": 2.0}  # d/dy x**y at x = 0 is pinned to 0, as in PyTorch
    assert value_of(parse(guarded.text), point) == engine_derivative("x**y", "y", point) == 0.0


def test_sym_reports_maybe_zero_for_the_rules():
    b = Builder()
    assert b.wrap(b.const(0.0)).maybe_zero and not b.wrap(b.const(2.0)).maybe_zero
    assert not b.wrap(Expr.var("x")).maybe_zero
    assert Builder(guards=True).wrap(Expr.var("x")).maybe_zero


@pytest.mark.parametrize(
    "text, what",
    [
        ("sum(x)", "sum"),
        ("x @ y", "matmul"),
        ("[x, 1]", "array literals"),
        ("x[0]", "indexing"),
        ("reshape(x, [1])", "reshape"),
        ("max(x)", "max"),
        ("x*[1, 2]", "array literals"),
    ],
)
def test_tensor_ops_are_refused_clearly(text, what):
    with pytest.raises(UnsupportedDiffError, match=f"use grad for {what}"):
        diff(text, "x")


def test_bad_requests():
    with pytest.raises(UnknownVariableError, match="'q'"):
        diff("x**2", "q")
    with pytest.raises(InputError):
        diff("x**2", "x", order=-1)
    assert diff("x**2", "x", order=0).texts() == {"x": "x**2"}
    with pytest.raises(MissingValueError):
        diff("x*y", "x", values={"x": 1})


# ---------------------------------------------------------------------------
# 100,000 deep: the differentiator, the simplifier and the printer never recurse
# ---------------------------------------------------------------------------

DEEP = 100_000


def test_deep_sum_through_diff():
    x = Expr.var("x")
    e = x
    for _ in range(DEEP):
        e = Expr("add", (e, x))
    assert diff(e, "x").texts() == {"x": str(DEEP + 1)}


def test_deep_nesting_through_each_stage():
    x = Expr.var("x")
    e = x
    for i in range(DEEP):
        e = Expr("sin", (e,)) if i % 2 else Expr("add", (e, Expr.const(1.0)))
    raw = grad_exprs(e, ["x"])["x"]  # the differentiator
    assert raw.op == "mul"
    simple = simplify(e)  # the simplifier
    text = to_text(simple)  # the printer
    assert text.startswith("sin(sin(") and text.count("sin(") == DEEP // 2
    assert "sin(x + 1) + 1) + 1)" in text and text.endswith(") + 1)")
    assert to_latex(simple).startswith("\\sin\\left(")


def test_deep_printed_text_parses_back():
    x = Expr.var("x")
    e = x
    for i in range(2000):
        e = (
            Expr("sub", (Expr.const(1.0), Expr("pow", (e, Expr.const(1.0)))))
            if i % 2
            else Expr("neg", (Expr("div", (e, Expr.const(2.0))),))
        )
    back = parse(to_text(e)).output
    assert value_of(back, {"x": 0.3}) == value_of(e, {"x": 0.3})


# ---------------------------------------------------------------------------
# explain
# ---------------------------------------------------------------------------


def _steps(ex, kind):
    return [s for s in ex.steps if s["kind"] == kind]


def test_explain_the_seed():
    ex = explain("y = (x + w) * (w + 1)", {"x": 2, "w": 1}, "w")
    assert [(s["name"], s["expr"], s["value"], s["auto"]) for s in _steps(ex, "define")] == [
        ("a", "x + w", 3.0, True),
        ("b", "w + 1", 2.0, True),
        ("y", "a*b", 6.0, False),
    ]
    assert [(s["of"], s["wrt"], s["expr"], s["value"]) for s in _steps(ex, "local")] == [
        ("y", "a", "b", 2.0),
        ("y", "b", "a", 3.0),
        ("a", "w", "1", 1.0),
        ("b", "w", "1", 1.0),
    ]
    (acc,) = _steps(ex, "accumulate")
    assert acc["text"] == "dy/dw = dy/da*da/dw + dy/db*db/dw = 2*1 + 3*1 = 5"
    assert ex.gradient == {"w": 5.0}
    assert [p["path"] for p in ex.paths["w"]] == [["y", "a", "w"], ["y", "b", "w"]]
    assert "dy/dw = dy/da*da/dw + dy/db*db/dw = 2*1 + 3*1 = 5" in ex.text


def test_explain_keeps_user_names_and_names_the_rest():
    ex = explain("a = x + w; b = w + 1; a * b", {"x": 2, "w": 1}, "w")
    assert [(s["name"], s["auto"]) for s in _steps(ex, "define")] == [
        ("a", False),
        ("b", False),
        ("y", True),
    ]
    assert ex.gradient == {"w": 5.0}
    ex = explain("x*y + sin(x)", {"x": 1, "y": 2})
    assert ex.output == "f"  # y is taken by a variable
    assert set(ex.gradient) == {"x", "y"}


def test_explain_agrees_with_the_engine_on_the_corpus():
    rng = random.Random(3)
    for text, _ in CORPUS + EXTRA:
        names = parse(text).inputs
        point = random_point(names, rng)
        ex = explain(text, point)
        for name in names:
            expected = engine_derivative(text, name, point)
            assert close(ex.gradient[name], expected, rel=1e-9, abs_=1e-12), (text, name)
            if ex.paths[name]:
                total = math.fsum(p["value"] for p in ex.paths[name])
                assert close(total, expected, rel=1e-9, abs_=1e-12), (text, name)


def test_explain_is_plain_json_and_caps_paths():
    ex = explain("sqrt(x)*x", {"x": 0})  # sqrt'(0) = inf, reached through a zero cotangent
    # Was core's Explanation.as_dict; the document is the command line's (cli/render.explain_json).
    doc = json.loads(jsonout.dumps(render.explain_json(ex)))
    assert doc["gradient"] == {"x": 0.0}
    assert any(s.get("value") == "inf" for s in doc["steps"])
    # Two paths from each level to the one below (a_k directly and through sin(a_k)).
    text = "a1 = x*sin(x); a2 = a1*sin(a1); a3 = a2*sin(a2); a4 = a3*sin(a3); a5 = a4*sin(a4); a5"
    ex = explain(text, {"x": 1.01})
    assert ex.paths["x"] is None  # 32 paths: too many to list, the totals still add up
    assert close(ex.gradient["x"], engine_derivative(text, "x", {"x": 1.01}), rel=1e-12)


def test_diff_result_source_is_the_text_differentiated():
    """DiffResult.source was the last derivative's text (a name reused in diff())."""
    from autograd_cli.core.symbolic import diff as core_diff
    from autograd_cli.grammar import parse as parse_text

    assert core_diff(parse_text("x**2*y"), ["x", "y"]).source == "x**2*y"
    assert core_diff(parse_text("sin(x)"), "x", order=3).source == "sin(x)"
    assert core_diff(parse_text("x*y"), ["x", "y"], order=2, mixed=True).source == "x*y"
