"""Golden forms of the simplifier: the exact printed derivative for inputs that reach one rule.

Each case pins what ``diff`` prints for an input built to reach one decision of
core/symbolic.py: how numbers are folded (``_nice`` after a float sum), where named
constants sit in a product, which terms count as piecewise or as possibly nan (and so
whether a rewrite such as ``b**3/b -> b**2`` or ``t - t -> 0`` is allowed), when a
product's exponents may combine (x**2 is never negative, x**3 is), how small powers of
sums expand, what the step budget charges, how the derivative builder folds a constant
argument, and which nodes the reverse pass visits.

A golden string alone could pin a wrong answer, so every printed form is also parsed
back (it is in the tool's own language) and checked for meaning: against SymPy's
derivative of the same function, written separately in SymPy, at a few points where it
is real; and, where the function is nan on a region (log of a negative number, 0/0 on a
half line), against the engine's own gradient there, nan for nan.  Budgets are checked
by outcome (raised, or printed unsimplified with a note), never by wall-clock.
"""

from __future__ import annotations

import math

import pytest

sympy = pytest.importorskip("sympy")

from autograd_cli import diff  # noqa: E402  (the facade: core's diff takes a parsed Program)
from autograd_cli.core import autograd  # noqa: E402
from autograd_cli.core.errors import LimitError  # noqa: E402
from autograd_cli.core.printing import to_text  # noqa: E402
from autograd_cli.core.program import Expr, topological  # noqa: E402
from autograd_cli.core.recording import evaluate  # noqa: E402
from autograd_cli.core.symbolic import (  # noqa: E402
    Builder,
    SimplifyBudgetExceeded,
    grad_exprs,
    simplify,
)
from autograd_cli.grammar import parse  # noqa: E402

NAMES = ("a", "b", "w", "x", "y", "z")
SYM = {n: sympy.Symbol(n, real=True) for n in NAMES}
SYMPY_LOCALS = {
    **SYM,
    "pi": sympy.pi,
    "e": sympy.E,
    "relu": lambda t: sympy.Max(t, 0),
}


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def value(text_or_expr, point: dict) -> float:
    """The engine's float64 value of a text (or Expr), given only the variables it uses."""
    expr = parse(text_or_expr).output if isinstance(text_or_expr, str) else text_or_expr
    used = {n.name for n in topological([expr]) if n.op == "var"}
    ev = evaluate(expr, {k: v for k, v in point.items() if k in used}, check_domain=False)
    return float(ev.output.data)


def engine_grad(text: str, var: str, point: dict) -> float:
    """d(text)/d(var) at ``point`` by the engine's reverse mode (no symbolic step)."""
    program = parse(text)
    ev = evaluate(program, point, requires_grad=program.inputs, check_domain=False)
    (g,) = autograd.grad(ev.output, ev.leaves[var], allow_unused=True)
    return 0.0 if g is None else float(g.data)


def sympy_value(sympy_src: str, var: str, point: dict):
    """SymPy's derivative of ``sympy_src`` in ``var`` at ``point``; None where it is not real."""
    f = sympy.sympify(sympy_src, locals=SYMPY_LOCALS)
    d = sympy.diff(f, SYM[var])
    v = complex(d.subs({SYM[k]: sympy.Rational(str(x)) for k, x in point.items()}).evalf(30))
    return v.real if v.imag == 0 and math.isfinite(v.real) else None


def printed(text: str, var: str) -> str:
    d = diff(text, var).derivatives[var]
    assert d.simplified, (text, d.note)
    return d.text


def assert_means(text: str, var: str, out: str, sympy_src: str, points: list[dict]) -> None:
    """The printed derivative ``out`` has SymPy's value at each point where that is real."""
    checked = 0
    for point in points:
        want = sympy_value(sympy_src, var, point)
        if want is None:
            continue
        got = value(out, point)
        assert math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-12), (text, out, point, got, want)
        checked += 1
    assert checked, (text, "no point where SymPy's derivative is real")


def assert_nan_where_engine_is(text: str, var: str, out: str, points: list[dict]) -> None:
    """Where the engine's own gradient is nan (a domain error on a region), so is ``out``."""
    for point in points:
        g = engine_grad(text, var, point)
        assert math.isnan(g), (text, point, g)  # the point is meant to be outside the domain
        assert math.isnan(value(out, point)), (text, out, point)


POINTS_X = [{"x": 0.7}, {"x": 1.9}, {"x": -1.3}, {"x": 2.6}]
POINTS_XY = [
    {"x": 0.7, "y": -1.1},
    {"x": 1.9, "y": 0.4},
    {"x": -1.3, "y": 2.3},
    {"x": 2.6, "y": 1.7},
]
POINTS_ABX = [
    {"a": 1.3, "b": -0.7, "x": 0.9},
    {"a": -2.1, "b": 0.4, "x": -1.6},
]


# ---------------------------------------------------------------------------
# Constant folding: a float sum that lands on a short number becomes that number
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, var, expected, sympy_src, points",
    [
        # The derivative's coefficients 0.1 and 0.4 (0.3 and 0.2), floats that are not short
        # fractions, sum to exactly 0.5 in IEEE: printed as the exact fraction x/2, the same
        # as x**2/2 would give, not as the float 0.5*x.
        ("0.05*x**2 + 0.2*x**2 + x*y", "x", "x/2 + y", "x**2/20 + x**2/5 + x*y", POINTS_XY),
        ("0.15*x**2 + 0.1*x**2 + y*x", "x", "x/2 + y", "3*x**2/20 + x**2/10 + y*x", POINTS_XY),
        # 0.2 + 0.4 is 0.6000000000000001 in IEEE: not a short number, so it stays a float
        # (the rounding is the float's, it is not hidden).
        ("0.1*x**2 + 0.2*x**2", "x", "0.6000000000000001*x", "3*x**2/10", POINTS_X),
        # 0.2 + 0.8 is exactly 1: no coefficient is printed.
        ("0.1*x**2 + 0.4*x**2 + x*y", "x", "x + y", "x**2/2 + x*y", POINTS_XY),
    ],
)
def test_float_sums_fold_to_short_numbers(text, var, expected, sympy_src, points):
    out = printed(text, var)
    assert out == expected
    assert_means(text, var, out, sympy_src, points)


def test_float_sum_folds_in_simplify_too():
    out = to_text(simplify(parse("0.1*x + 0.4*x + y").output))
    assert out == "x/2 + y"
    assert math.isclose(value(out, {"x": 3.0, "y": 1.0}), 2.5)


# ---------------------------------------------------------------------------
# Factor order: named constants sort with the variables, by name
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, var, expected, sympy_src",
    [
        ("pi*a*x**2", "x", "2*a*pi*x", "pi*a*x**2"),
        ("a*e*x", "x", "a*e", "a*E*x"),
        ("b*pi*exp(x)", "x", "b*pi*exp(x)", "b*pi*exp(x)"),
        ("x**2*pi", "x", "2*pi*x", "pi*x**2"),
    ],
)
def test_named_constants_sort_among_variables(text, var, expected, sympy_src):
    out = printed(text, var)
    assert out == expected
    assert_means(text, var, out, sympy_src, POINTS_ABX)


# ---------------------------------------------------------------------------
# Piecewise detection: b**3/b -> b**2 only for a base that is not 0 on a region
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected, sympy_src",
    [
        # A sum with a named constant in it is not piecewise (pi is a number, not a kink):
        # (x + pi)/(x + pi) cancels, (x + pi)**3/(x + pi) is (x + pi)**2.
        ("log(x + pi)*(x + pi)", "log(x + pi) + 1", "log(x + pi)*(x + pi)"),
        ("(x + pi)**3/(x + pi)", "2*x + 2*pi", "(x + pi)**2"),
        # A whole exponent is a number too: sin(x**2) is not piecewise.
        ("sin(x**2)**3/sin(x**2)", "4*x*cos(x**2)*sin(x**2)", "sin(x**2)**2"),
        # Smooth functions are not piecewise: a sum of them is not 0 on a region.
        (
            "(sin(x) + cos(x))**3/(sin(x) + cos(x))",
            "2*cos(x)**2 - 2*sin(x)**2",
            "(sin(x) + cos(x))**2",
        ),
    ],
)
def test_smooth_bases_cancel_in_quotients(text, expected, sympy_src):
    out = printed(text, "x")
    assert out == expected
    assert_means(text, "x", out, sympy_src, POINTS_X)


@pytest.mark.parametrize(
    "text, expected, sympy_src, points, nan_points",
    [
        # relu(x) is 0 for every x < 0: relu(x)**3/relu(x) is nan there, relu(x)**2 is not
        # (the engine's gradient there is 0, PyTorch's: relu's 0 partial passes no nan;
        # test_relu_quotient_keeps_its_nan_in_print_and_value below)
        (
            "relu(x)**3/relu(x)",
            "3*(x > 0)*relu(x)**2/relu(x) - (x > 0)*relu(x)**3/relu(x)**2",
            "relu(x)**2",
            [{"x": 0.7}, {"x": 1.9}, {"x": 2.6}],
            [],
        ),
        # x - abs(x) is 0 for every x > 0.
        (
            "(x - abs(x))**3/(x - abs(x))",
            "3*(x - abs(x))**2/(x - abs(x)) - 3*(x - abs(x))**2*sign(x)/(x - abs(x))"
            " - (x - abs(x))**3/(x - abs(x))**2 + (x - abs(x))**3*sign(x)/(x - abs(x))**2",
            "(x - Abs(x))**2",
            [{"x": -1.3}, {"x": -0.4}],
            [{"x": 0.7}, {"x": 1.9}, {"x": 2.6}],
        ),
    ],
)
def test_piecewise_bases_keep_their_quotients(text, expected, sympy_src, points, nan_points):
    out = printed(text, "x")
    assert out == expected
    assert_means(text, "x", out, sympy_src, points)
    assert_nan_where_engine_is(text, "x", out, nan_points)


@pytest.mark.parametrize("x", [-1.3, -0.2])
def test_relu_quotient_keeps_its_nan_in_print_and_value(x):
    # relu(x)**3/relu(x) is 0/0 for x < 0, and so is its printed derivative; the engine's
    # gradient is 0 there, as PyTorch's (relu's backward is a where: its 0 partial passes
    # no nan cotangent), where the printed product (x > 0)*... evaluates to nan
    text = "relu(x)**3/relu(x)"
    assert math.isnan(value(text, {"x": x}))
    assert math.isnan(value(printed(text, "x"), {"x": x}))
    assert engine_grad(text, "x", {"x": x}) == 0.0


# ---------------------------------------------------------------------------
# Cancelled terms that can be nan leave a trace; a comparison or a where's untaken
# branch does not carry their nan
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, var, expected, sympy_src, points, nan_points",
    [
        # log(x) - log(x) is nan for x < 0; (log(x) > 0) is 0 there, a number, so it does
        # not carry the nan and the trace 0*log(x) must stay.
        (
            "y*log(x) - y*log(x) + y*(log(x) > 0)",
            "y",
            "(log(x) > 0) + 0*log(x)",
            "y*Piecewise((1, log(x) > 0), (0, True))",
            [{"x": 0.7, "y": 1.0}, {"x": 2.6, "y": 1.0}],
            [{"x": -1.3, "y": 1.0}],
        ),
        # A where is nan only through the branch it takes: 1 for x <= 1.
        (
            "y*log(x) - y*log(x) + y*where(x > 1, log(x), 1)",
            "y",
            "where(x > 1, log(x), 1) + 0*log(x)",
            "y*Piecewise((log(x), x > 1), (1, True))",
            [{"x": 0.7, "y": 1.0}, {"x": 2.6, "y": 1.0}],
            [{"x": -1.3, "y": 1.0}],
        ),
        (
            "y*sqrt(x) - y*sqrt(x) + y*(sqrt(x) > 1)",
            "y",
            "(sqrt(x) > 1) + 0*sqrt(x)",
            "y*Piecewise((1, sqrt(x) > 1), (0, True))",
            [{"x": 0.7, "y": 1.0}, {"x": 2.6, "y": 1.0}],
            [{"x": -1.3, "y": 1.0}],
        ),
        # sin and exp are total, but not of an argument that is nan on a region.
        (
            "sin(log(x)) - sin(log(x)) + x",
            "x",
            "1 + 0*cos(log(x))",
            "x",
            [{"x": 0.7}, {"x": 2.6}],
            [{"x": -1.3}],
        ),
        (
            "y*exp(sqrt(x)) - y*exp(sqrt(x)) + y",
            "y",
            "1 + 0*exp(sqrt(x))",
            "y",
            [{"x": 0.7, "y": 1.0}, {"x": 2.6, "y": 1.0}],
            [{"x": -1.3, "y": 1.0}],
        ),
        (
            "y*sin(log(x)) - y*sin(log(x))",
            "y",
            "0*sin(log(x))",
            "0*y",
            [{"x": 0.7, "y": 1.0}, {"x": 2.6, "y": 1.0}],
            [{"x": -1.3, "y": 1.0}],
        ),
    ],
)
def test_cancelled_nan_terms_leave_a_trace(text, var, expected, sympy_src, points, nan_points):
    out = printed(text, var)
    assert out == expected
    assert_means(text, var, out, sympy_src, points)
    assert_nan_where_engine_is(text, var, out, nan_points)


def test_total_functions_of_total_arguments_cancel_cleanly():
    # sin(x) is a number for every x: nothing to keep.
    out = printed("y*sin(x) - y*sin(x) + y", "y")
    assert out == "1"
    assert (
        value(out, {"x": -1.3})
        == 1.0
        == engine_grad("y*sin(x) - y*sin(x) + y", "y", {"x": -1.3, "y": 2.0})
    )


# ---------------------------------------------------------------------------
# Evenness of whole exponents: x**2 is never negative, x**3 can be
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected, sympy_src, nan_points",
    [
        # (x**2)**0.5 is a number for every x, so its powers combine: the product is x**2.
        ("y*(x**2)**0.5*(x**2)**0.5", "x**2", "y*x**2", []),
        ("y*(x**2)**0.5 - y*(x**2)**0.5", "0", "0*y", []),
        ("y*(x**4)**0.5*(x**4)**0.5", "x**4", "y*x**4", []),
        # (x**3)**0.5 is nan for x < 0, x**3 is not: the powers stay apart, the trace stays.
        (
            "y*(x**3)**0.5*(x**3)**0.5",
            "(x**3)**(1/2)*(x**3)**(1/2)",
            "y*x**3",
            [{"x": -1.3, "y": 1.0}],
        ),
        ("y*(x**3)**0.5 - y*(x**3)**0.5", "0*(x**3)**(1/2)", "0*y", [{"x": -1.3, "y": 1.0}]),
    ],
)
def test_even_powers_are_nonnegative(text, expected, sympy_src, nan_points):
    out = printed(text, "y")
    assert out == expected
    points = [{"x": 0.7, "y": 1.0}, {"x": 2.6, "y": -0.5}]
    if not nan_points:
        points.append({"x": -1.3, "y": 1.0})  # a number here too, like the input
        assert not math.isnan(engine_grad(text, "y", points[-1]))
    assert_means(text, "y", out, sympy_src, points)
    assert_nan_where_engine_is(text, "y", out, nan_points)


# ---------------------------------------------------------------------------
# Expansion of a small power of a short sum, where its terms meet other terms
# ---------------------------------------------------------------------------


def test_cube_of_a_sum_expands_where_a_term_meets_it():
    text = "w*(x + y + 1)**3 - w*x*y"
    out = printed(text, "w")
    assert out == "3*x*y**2 + 3*x**2*y + x**3 + y**3 + 5*x*y + 3*x**2 + 3*y**2 + 3*x + 3*y + 1"
    assert_means(text, "w", out, "w*(x + y + 1)**3 - w*x*y", POINTS_XY)


def test_cube_of_a_sum_with_float_coefficients():
    # The x*y coefficient is 6*0.3*3*0.6 - 1 = 56/25, summed over the expansion's products
    # in a fixed order (the power so far times the sum): it prints as 2.24, the double
    # nearest 56/25; the other order (the sum times the power so far) rounds to
    # 2.2399999999999998.  The other coefficients keep their IEEE roundings (3*0.3**2*3,
    # exactly 0.81, prints as 0.8099999999999999).
    text = "w*(0.3*x + 3*y + 0.6)**3 - w*x*y"
    out = printed(text, "w")
    assert out == (
        "8.1*x*y**2 + 0.8099999999999999*x**2*y + 0.027*x**3 + 27*y**3 + 2.24*x*y"
        " + 0.162*x**2 + 16.2*y**2 + 0.324*x + 3.2399999999999998*y + 0.216"
    )
    assert_means(text, "w", out, "w*(3*x/10 + 3*y + 3/5)**3 - w*x*y", POINTS_XY)


def test_power_of_a_sum_standing_alone_keeps_its_form():
    out = printed("(x + y + 1)**4/4", "x")
    assert out == "(x + y + 1)**3"
    assert_means("(x + y + 1)**4/4", "x", out, "(x + y + 1)**4/4", POINTS_XY)


# ---------------------------------------------------------------------------
# The step budget: every constructor charges the operands it touches
# ---------------------------------------------------------------------------


def _long_product(n: int) -> str:
    return "*".join(f"v{i}" for i in range(n)) + "*x"


def test_a_long_product_is_charged_to_the_step_budget():
    # One product of 150 factors: the product constructor alone touches 151 operands.
    text = _long_product(150)
    with pytest.raises(SimplifyBudgetExceeded):
        simplify(parse(text).output, budget=100)
    assert to_text(simplify(parse("v1*v0*x").output, budget=100)) == "v0*v1*x"

    tight = diff(text, "x", step_budget=100).derivatives["x"]
    assert not tight.simplified
    assert tight.note == (
        "simplification ran out of its step budget; the derivative is printed unsimplified"
    )
    # The raw derivative, factors in the input's order.
    assert tight.text == "*".join(f"v{i}" for i in range(150))

    roomy = diff(text, "x", step_budget=100_000).derivatives["x"]
    assert roomy.simplified and roomy.note is None
    # Simplified: factors sorted by name (v10 before v2).
    assert roomy.text == "*".join(sorted(f"v{i}" for i in range(150)))

    point = {f"v{i}": 1.0 + (i % 7) / 50 for i in range(150)} | {"x": 0.3}
    want = math.prod(point[f"v{i}"] for i in range(150))
    for d in (tight, roomy):
        assert math.isclose(value(d.text, point), want, rel_tol=1e-12)


# ---------------------------------------------------------------------------
# The derivative builder folds a constant argument of a two-argument op
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected, sympy_src",
    [
        ("x*sin(x)", "sin(x) + x*cos(x)", "x*sin(x)"),  # 1*sin(x), 1*x*cos(x) folded
        ("x*y", "y", "x*y"),  # 1*y
        ("y*x", "y", "y*x"),
        ("sin(x)", "cos(x)", "sin(x)"),  # 1*cos(x)
        ("exp(2*x)", "exp(2*x)*2", "exp(2*x)"),
        ("x**2", "2*x", "x**2"),  # 1*(2*x**1)
        ("x**1", "1", "x"),  # 1*x**0
    ],
)
def test_raw_derivative_folds_constant_arguments(text, expected, sympy_src):
    raw = grad_exprs(parse(text).output, ["x"])["x"]
    out = to_text(raw)
    assert out == expected
    assert_means(text, "x", out, sympy_src, POINTS_XY)


def test_builder_apply_folds_each_side():
    b = Builder()
    x = Expr.var("x")
    one, zero, minus_one = b.const(1.0), b.const(0.0), b.const(-1.0)
    # Right-hand constants.
    assert b.apply("mul", (x, one)) is x
    assert b.apply("add", (x, zero)) is x
    assert b.apply("sub", (x, zero)) is x
    assert b.apply("div", (x, one)) is x
    assert b.apply("pow", (x, one)) is x
    assert b.apply("pow", (x, zero)) is one
    assert b.apply("mul", (x, zero)) is zero
    assert to_text(b.apply("mul", (x, minus_one))) == "-x"
    # Left-hand constants.
    assert b.apply("mul", (one, x)) is x
    assert b.apply("add", (zero, x)) is x
    assert b.apply("mul", (zero, x)) is zero
    assert to_text(b.apply("mul", (minus_one, x))) == "-x"
    assert to_text(b.apply("sub", (zero, x))) == "-x"
    # Not foldable: kept.
    assert to_text(b.apply("mul", (b.const(2.0), x))) == "2*x"
    assert to_text(b.apply("pow", (x, b.const(2.0)))) == "x**2"
    # Both constant: evaluated.
    assert b.apply("pow", (b.const(2.0), b.const(3.0))).value == 8.0


# ---------------------------------------------------------------------------
# Dependence analysis: the reverse pass only visits what depends on the variable
# ---------------------------------------------------------------------------


def _nested_sin(depth: int, arg: str) -> str:
    return "sin(" * depth + arg + ")" * depth


def test_reverse_pass_skips_parts_that_do_not_depend_on_the_variable():
    # 200 nested sines of y: nothing in them depends on x, so d/dx builds (almost) no nodes
    # even in a builder capped at 50; d/dy needs a node per level and hits the cap.
    chain = _nested_sin(200, "y")
    for text, expected in ((f"x*{chain}", chain), (f"x + {chain}", "1")):
        out = grad_exprs(parse(text).output, ["x"], Builder(max_nodes=50))["x"]
        assert to_text(out) == expected
    with pytest.raises(LimitError, match="past 50 nodes"):
        grad_exprs(parse(f"x*{chain}").output, ["y"], Builder(max_nodes=50))


def test_dependence_through_a_non_differentiable_argument():
    # where's condition has no gradient: d/dx where(x > 0, y, 2) is 0, and nothing is built.
    b = Builder(max_nodes=5)
    assert to_text(grad_exprs(parse("where(x > 0, y, 2)").output, ["x"], b)["x"]) == "0"
    assert printed("where(x > 0, y, 2)", "x") == "0"
    assert engine_grad("where(x > 0, y, 2)", "x", {"x": 0.5, "y": 1.0}) == 0.0


# ---------------------------------------------------------------------------
# Mutation-testing follow-ups (bench/mutate.py, seed 1)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected", "sympy_src"),
    [
        # 2**-20 is short enough to be an exact rational; 2**-21 is past _nice's limit on the
        # denominator and stays a float (so do its products).
        ("x*9.5367431640625e-07", "1/1048576", "x/1048576"),
        ("x*4.76837158203125e-07", "4.76837158203125e-07", "x/2097152"),
        ("3*x*4.76837158203125e-07", "1.430511474609375e-06", "3*x/2097152"),
        ("x**2*9.5367431640625e-07", "x/524288", "x**2/1048576"),
    ],
)
def test_nice_keeps_denominators_up_to_two_to_the_twenty(text, expected, sympy_src):
    out = printed(text, "x")
    assert out == expected
    assert_means(text, "x", out, sympy_src, POINTS_X)


def test_a_sum_with_every_term_negative_keeps_its_order():
    # No positive term to lead: the sum is printed in its canonical order, not rotated.
    for text, expected, sympy_src in (
        ("-x**3 - 2*x", "-3*x**2 - 2", "-x**3 - 2*x"),
        ("-x**2 - x*y", "-2*x - y", "-x**2 - x*y"),
        ("-exp(x) - x*y", "-y - exp(x)", "-exp(x) - x*y"),
    ):
        out = printed(text, "x")
        assert out == expected
        assert_means(text, "x", out, sympy_src, POINTS_XY)


def test_expansion_matches_monomials_without_their_coefficients():
    # (2*exp(x))**(1/2) times itself is the product 2*exp(x), coefficient 2: taken off, it
    # meets -2*exp(x), so the product of sums is expanded and the two cancel.
    for text, expected in (
        ("(2*exp(x))**0.5*((2*exp(x))**0.5 + y) - 2*exp(x)", "y*(2*exp(x))**(1/2)"),
        ("(2*x**2)**0.5*((2*x**2)**0.5 + y) - 2*x**2", "y*(2*x**2)**(1/2)"),
    ):
        out = to_text(simplify(parse(text).output))
        assert out == expected
        for point in POINTS_XY:
            assert math.isclose(value(out, point), value(text, point), rel_tol=1e-12), point
    text = "(2*x**2)**0.5*((2*x**2)**0.5 + y) - 2*x**2"
    out = printed(text, "y")
    assert out == "(2*x**2)**(1/2)"
    assert_means(text, "y", out, "(2*x**2)**(1/2)*((2*x**2)**(1/2) + y) - 2*x**2", POINTS_XY)


def _long_sum(n: int, factor: str = "") -> str:
    return " + ".join(f"v{i}{factor}" for i in range(n))


def test_a_long_sum_is_charged_to_the_step_budget():
    # Gathering the 150 terms of a sum touches each one: past a budget of 100.
    text = _long_sum(150)
    with pytest.raises(SimplifyBudgetExceeded):
        simplify(parse(text).output, budget=100)
    assert to_text(simplify(parse(text).output, budget=1000)) == " + ".join(
        sorted(f"v{i}" for i in range(150))
    )
    tight = diff(_long_sum(150, "*x"), "x", step_budget=100).derivatives["x"]
    assert not tight.simplified
    assert tight.note == (
        "simplification ran out of its step budget; the derivative is printed unsimplified"
    )


def test_a_deadline_already_past_stops_a_long_simplification():
    # The clock is read every 4096 steps: a deadline in the past is met by a sum of 5000
    # terms (5001 steps), whatever the machine's speed, and not by a short one.
    import time  # noqa: PLC0415

    with pytest.raises(SimplifyBudgetExceeded, match="^time$"):
        simplify(parse(_long_sum(5000)).output, deadline=time.monotonic() - 1.0)
    assert to_text(simplify(parse("x + x").output, deadline=time.monotonic() - 1.0)) == "2*x"
    late = diff(_long_sum(5000, "*x"), "x", time_budget=-1.0).derivatives["x"]
    assert not late.simplified
    assert late.note == (
        "simplification ran out of its time budget; the derivative is printed unsimplified"
    )
    point = {f"v{i}": 1.0 + (i % 7) / 50 for i in range(5000)}
    assert math.isclose(value(late.text, point), math.fsum(point.values()), rel_tol=1e-12)


@pytest.mark.parametrize("order", [True, False, 1.5, -1])
def test_order_must_be_a_whole_number(order):
    from autograd_cli.core.errors import InputError  # noqa: PLC0415

    with pytest.raises(InputError, match="^order must be 0 or more, not "):
        diff("x**2", "x", order=order)


def test_local_vjp_of_a_variadic_op_with_no_input_needed():
    # stack is variadic: its flags are () (every input differentiable); with no input
    # needed the rule builds nothing, one None per input.
    from autograd_cli.core.symbolic import local_vjp  # noqa: PLC0415

    b = Builder()
    node = Expr("stack", (Expr.var("x"), Expr.var("y")))
    assert local_vjp(node, b.wrap(Expr.var("g")), b, needs=(False, False)) == (None, None)
