"""Tests written from the survivors of ``bench/mutate.py`` seeds 61 and 67 in the core modules
(ops, symbolic, Taylor mode) that their first tests left open: each pins a behaviour one
surviving mutant changed.  The equivalent ones are in ``bench/mutate_equivalent.txt``."""

from __future__ import annotations

import math

import pytest

from autograd_cli.core.errors import LimitError
from autograd_cli.core.symbolic import command as symbolic
from autograd_cli.core.taylor import _repeated, taylor
from autograd_cli.core.taylor_mode import NoTaylorMode, taylor_coefficients
from autograd_cli.grammar import parse


def _bits(cs) -> list[str]:
    """Coefficients bit for bit (repr tells -0.0 from 0.0, and nan and inf apart)."""
    return [repr(float(c)) for c in cs]


# ---- forward mode: an exactly zero tangent moves nothing, even where the derivative is nan --


def test_a_zero_tangent_entry_adds_nothing_where_a_real_function_of_z_has_a_nan_derivative(cli):
    # abs(z) at z = inf+1j: its derivative direction z/|z| is inf/inf, nan.  Forward mode's
    # t * conj(d) keeps ops.chain's convention (an exactly zero factor t stays 0 through an inf
    # or nan d, as reverse mode's zero cotangent): moving only the finite entry gives that
    # entry's d|z| = Re(conj(z/|z|) * 1) = 1/sqrt(2), not nan.  (conj(d) * t puts d first: its
    # zero guard then asks d, never 0, and the 0 * nan stays.)
    doc = cli("grad", "sum(abs(z))", "--z", "[inf+1j, 1+1j]", "--tangent", "z=[0, 1]", "--json")
    assert doc.code == 0, doc.out + doc.err
    assert doc.json["jvp"] == pytest.approx(1 / math.sqrt(2), rel=1e-15)
    for f in ("abs(z)", "angle(z)"):  # a whole zero tangent: no change at all
        doc = cli("grad", f, "--z", "inf+1j", "--tangent", "z=0", "--json")
        assert doc.code == 0 and doc.json["jvp"] == 0.0, (f, doc.out)


# ---- codegen: powers by a constant number 2 and 3 ----------------------------------------


@pytest.mark.parametrize(
    "target, square, cube",
    [
        ("numpy", "np.square(x)", "y * y * y"),
        ("torch", "torch.square(x)", "y * y * y"),
        ("jax", "jnp.square(x)", "y * y * y"),
    ],
)
def test_codegen_writes_a_square_and_a_cube_by_a_number_as_products(cli, target, square, cube):
    # x**2 as square (the engine's own bits) and y**3 as two products (NumPy's power takes a
    # slow path for 3): the generated code says so, for a constant exponent that is a number
    # (a 0-d constant), and power() is left to the other exponents
    r = cli("codegen", "x**2 + y**3 + x**2.5", "--target", target)
    assert r.code == 0, r.err
    assert f"= {square}\n" in r.out and f"= {cube}\n" in r.out, r.out
    assert "power(x, 2.0)" not in r.out and "pow(x, 2.0)" not in r.out
    assert "power(y, 3.0)" not in r.out and "pow(y, 3.0)" not in r.out
    assert "(x, 2.5)" in r.out  # any other constant power: the library's power


# ---- diff: the size prediction starts as soon as three orders are known -----------------


def test_diff_predicts_its_size_from_the_first_three_orders(cli):
    # sin nested 8 deep: 23, 89, 987 nodes at orders 1, 2, 3; the growth (3.9 an order, the
    # smaller of the last two ratios) carries it to about 57,200 at order 6, past twice a
    # budget of 10,000, so diff refuses after order 3, before it builds order 4 (6,606 nodes,
    # still within the budget, which a prediction from four orders only would build first)
    text = "sin(" * 8 + "x" + ")" * 8
    r = cli("diff", text, "--order", "6", "--max-nodes", "10000", "--json")
    assert r.code == 1
    error = r.json["error"]
    assert error["kind"] == "limit" and error["nodes"] == 987, error
    assert "987 nodes at order 3 of 6" in error["message"], error
    assert error["predicted_nodes"] == pytest.approx(57187, rel=1e-3)
    # the library call: the same refusal, and only three orders were built
    with pytest.raises(LimitError) as exc:
        symbolic.diff(parse(text), "x", order=6, max_nodes=10_000)
    assert exc.value.details["nodes"] == 987


# ---- diff: a where whose condition is a number -------------------------------------------


def test_diff_of_a_where_with_a_constant_condition_follows_the_branch_it_takes(cli):
    # where(0, x, x**2) is x**2: reverse mode sends the cotangent cos(...) (not a number, so
    # nothing folds it whole) to the taken branch only; the untaken branch x gets none
    r = cli("diff", "sin(where(0, x, x**2))", "--json")
    assert r.code == 0 and r.json["derivative"] == "2*x*cos(x**2)", r.out
    r = cli("diff", "where(1, x, x**2)**2", "--json")
    assert r.code == 0 and r.json["derivative"] == "2*x", r.out
    r = cli("diff", "where(0, x, y)*x", "--wrt", "x", "--json")
    assert r.code == 0 and r.json["derivative"] == "y", r.out


# ---- Taylor mode: beta and polygamma defer to the engine where its products may overflow ---


def test_taylor_mode_defers_beta_to_the_engine_where_its_series_products_overflow():
    # beta(1e20*x, 1) = 1/(1e20*x) at 1e-70: its series 1e50, -1e120, 1e190, -1e260 is finite,
    # but the engine's graphs multiply the result's own derivatives (beta' = beta * (digamma(a)
    # - digamma(a + b))), products of order 3 past 1e300: Taylor mode refuses, and taylor
    # gives the engine's repeated differentiation, bit for bit (its -1.0000000000000003e+120,
    # where Taylor mode's own recurrence rounds to -1.0000000000000001e+120)
    text, point = "beta(1e20*x, 1)", {"x": 1e-70}
    with pytest.raises(NoTaylorMode, match="beta: products of derivatives overflow"):
        taylor_coefficients(parse(text), point, "x", 3)
    got = taylor(parse(text), point, order=3).coefficients
    assert _bits(got) == _bits(_repeated(parse(text), point, "x", 3))


def test_taylor_mode_defers_polygamma_near_its_pole_as_digamma_does():
    # polygamma(1, x) at 1e-80 (1e160): its derivatives of order K overflow the engine, a
    # *hard* poison that sign's zero partial does not absorb, so the engine's numbers are the
    # answer: its d/dx sign(...) = 0 * polygamma(2, x) is -0.0 (Taylor mode's own is 0.0).
    # polygamma(0, x) is digamma(x), and both take the same way near the pole.
    point = {"x": 1e-80}
    for text in ("sign(polygamma(1, x))", "sign(polygamma(0, x)) + floor(polygamma(0, x))"):
        with pytest.raises(NoTaylorMode, match="polygamma near a singular point"):
            taylor_coefficients(parse(text), point, "x", 3)
        got = taylor(parse(text), point, order=3).coefficients
        assert _bits(got) == _bits(_repeated(parse(text), point, "x", 3)), text
    same = taylor(parse("sign(digamma(x)) + floor(digamma(x))"), point, order=3).coefficients
    assert _bits(got) == _bits(same)
    assert _bits(taylor(parse("sign(polygamma(1, x))"), point, order=2).coefficients) == [
        "1.0",
        "-0.0",
        "0.0",
    ]
