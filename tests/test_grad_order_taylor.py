"""``grad --order N`` by Taylor mode: N! c[N] in one pass where Taylor mode gives the engine's
numbers, repeated differentiation where it defers (docs/commands.md, grad's --order).

Repeated differentiation builds a graph that can grow exponentially with N: ``grad
"x**3*log(x)" --x 0.7 --order 16`` took 388 s and 20 GB that way.  Expected values come from
SymPy or from algebra by hand, never from the code under test.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from autograd_cli.core import api
from autograd_cli.core.program_functional import program_derivatives
from autograd_cli.grammar import parse

sp = pytest.importorskip("sympy")
X = sp.Symbol("x")


def test_a_sixteenth_derivative_comes_in_one_pass(cli):
    # d^n/dx^n x^3 log x = (-1)^(n-4) 3! (n-4)! / x^(n-3) for n >= 4: at 0.7, n = 16,
    # 6 * 12! / 0.7^13 = 296,629,059,160.29...
    want = float(6 * math.factorial(12) / Fraction(7, 10) ** 13)
    r = cli("grad", "x**3*log(x)", "--x", "0.7", "--order", "16", "--json")
    assert r.code == 0, r.out
    assert r.json["grad"]["x"] == pytest.approx(want, rel=1e-12)
    assert r.json["value"] == pytest.approx(0.343 * math.log(0.7), rel=1e-15)
    assert r.json["order"] == 16


@pytest.mark.parametrize(
    "text, f, at",
    [
        ("exp(sin(x))", sp.exp(sp.sin(X)), sp.Rational(3, 10)),
        ("tanh(x)", sp.tanh(X), sp.Rational(-7, 10)),
        ("x**3*log(x)", X**3 * sp.log(X), sp.Rational(7, 10)),
        ("sinc(x)", sp.sin(sp.pi * X) / (sp.pi * X), sp.Rational(1, 4)),
        ("1/(1 + x**2)", 1 / (1 + X**2), sp.Rational(1, 2)),
    ],
)
@pytest.mark.parametrize("order", [2, 3, 6])
def test_taylor_modes_derivative_is_sympys_and_the_engines(text, f, at, order):
    want = float(sp.diff(f, X, order).subs(X, at).evalf(30))
    r = api.nth_derivative_of(parse(text), {"x": float(at)}, order=order)
    assert float(r.grad["x"]) == pytest.approx(want, rel=1e-12)
    # the engine's own repeated derivatives agree to its rounding (sinc's quotient form,
    # PyTorch's, loses a few digits at order 6: 2e-12 relative)
    engine = program_derivatives(parse(text), {"x": float(at)}, "x", order)[-1]
    assert float(r.grad["x"]) == pytest.approx(float(engine.data), rel=1e-10)
    assert float(r.value) == float(
        program_derivatives(parse(text), {"x": float(at)}, "x", 0)[0].data
    )


def test_at_a_kink_and_for_a_vector_variable_the_engines_convention_holds(cli):
    # abs(x)*x at 0: Taylor mode takes abs's piece as the engine does (abs'(0) = 0,
    # PyTorch's), so the second derivative is the engine's 0, with the kink's warning
    r = cli("grad", "abs(x)*x", "--x", "0", "--order", "2", "--json")
    assert r.code == 0, r.out
    assert r.json["grad"]["x"] == 0.0
    assert any("abs" in w for w in r.json["warnings"])
    # a vector variable (Taylor mode defers): each entry's own second derivative,
    # d^2/dx_i^2 of sum(x**3) = 6 x_i
    r = cli("grad", "sum(x**3)", "--x", "[1, 2]", "--order", "2", "--json")
    assert r.code == 0, r.out
    assert r.json["grad"]["x"] == [6.0, 12.0]


def test_float32_differentiates_repeatedly_in_float32(cli):
    # Taylor mode runs in float64 only; float32 keeps the engine's arithmetic and dtype:
    # d^3/dx^3 x^4 = 24 x = 36 at 1.5 (exact in float32)
    r = cli("grad", "x**4", "--x", "1.5", "--order", "3", "--dtype", "float32", "--json")
    assert r.code == 0, r.out
    assert r.json["grad"]["x"] == 36.0
    res = api.nth_derivative_of(parse("x**4"), {"x": 1.5}, order=3)
    assert res.grad["x"].dtype.name == "float64"


def test_a_variable_the_output_does_not_use_gets_zero():
    r = api.nth_derivative_of(parse("y**2 + 0*x"), {"x": 1.0, "y": 3.0}, wrt="x", order=4)
    assert float(r.grad["x"]) == 0.0
    assert float(r.value) == 9.0


@pytest.mark.parametrize(
    "text",
    [
        "-x",
        "2-x",
        "(1-x)*3",
        "x*(-2)",
        "-x/2",
        "-(x*x*x)",
        "(x+1)*(x-1)",
        "-(2*x+1)*(3-x)",
        "x-x",
        "-(x-x)",
        "abs(-x)",
        "relu(-x)",
        "-relu(x)",
        "max(-x, 0)",
        "-min(x, 1)",
    ],
)
@pytest.mark.parametrize("x0", [1.0, -1.0, 2.5])
def test_a_polynomial_s_derivatives_are_the_engines_to_the_sign_of_zero(text, x0):
    """Past a polynomial's degree the engine's derivatives are +0.0 (its graph is cut:
    zeros), and so are Taylor mode's, whatever the signs on the way (-x, times -2): the
    two paths agree bit for bit, the sign of a zero included."""
    p = parse(text)
    for order in (2, 3, 4):
        fast = api._highest_derivative(p, {"x": x0}, "x", order)
        slow = program_derivatives(p, {"x": x0}, "x", order)[-1]
        slow = 0.0 if slow is None else float(slow.data)
        assert isinstance(fast, float)  # Taylor mode's path, not the fallback
        assert (fast, math.copysign(1.0, fast)) == (slow, math.copysign(1.0, slow)), order
