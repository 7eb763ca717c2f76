"""Tests written from the survivors of ``bench/mutate.py`` seed 239 (bench/results/
mutate-seed239.json), an untuned seed measured after seed 233 at the tool's default sample
(40 mutants a target) with every test before it in.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from the docs,
SymPy or arithmetic by hand, never from the code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy

import autograd_cli as ag
from autograd_cli.core.errors import ShapeError


@pytest.mark.parametrize("x", [-171.5, -172.5, -173.5])
def test_gamma_keeps_the_sign_of_its_subnormal_values(x):
    """kills core/ops/special.py:113: sign = xp.where(xp.floor(-a) % 2 == 0, -1.0, 1.0) ->
    sign = xp.where(xp.floor(-a) % 2 == 0, -0.0, 1.0).

    Below -171 SciPy's gamma underflows to 0 where gamma is still a subnormal number, and
    the tool gives exp(lgamma(x)) with the sign of (-1)**(floor(-x) + 1): gamma(-172.5) is
    -1.12e-312, negative (floor(172.5) = 172 is even); -171.5 and -173.5 are positive.  The
    mutant gave -0.0 for -172.5 (only -180.5, below the smallest subnormal, was pinned, and
    it is -0.0 either way)."""
    want = float(sympy.N(sympy.gamma(sympy.Float(x, 30)), 30))
    got = float(ag.evaluate("gamma(x)", {"x": x}).value)
    assert want != 0.0 and math.copysign(1.0, got) == math.copysign(1.0, want)
    assert got == pytest.approx(want, rel=1e-6, abs=0.0)  # no absolute slack: tiny values


@pytest.mark.parametrize(
    "value, have",
    [(3.0, "of a number needs an axis"), ([[[1.0]]], "of an array of 3 dimension(s) needs")],
)
def test_norm_without_an_axis_says_what_it_was_given(value, have):
    """kills core/ops/reductions.py:361: return "a number" if ndim == 0 else f"an array of
    {ndim} dimension(s)" -> the same with ndim != 0.

    ``norm(x, ord=2)`` needs an axis unless x is a vector or a matrix; the message says what
    x is: "a number" for a scalar, "an array of 3 dimension(s)" for a 3-D array (the mutant
    swapped the two)."""
    with pytest.raises(ShapeError) as caught:
        ag.evaluate("norm(x, ord=2)", {"x": value})
    assert f"norm(x, ord=2) {have}" in str(caught.value)


def test_kron_of_two_numbers_has_their_gradient():
    """kills core/ops/products.py:264: return call("sum", x, axis=axes, keepdims=False) if axes
    else x -> return call("sum", x, axis=axes, keepdims=False).

    kron of two numbers is their product (NumPy's and PyTorch's kron take 0-d operands), so
    d/da = b and d/db = a.  Its vjp sums the split cotangent over a's or b's axes, and with
    no axes at all there is nothing to sum: the mutant asked sum() for axis=() of a number,
    a shape error."""
    r = ag.grad("kron(a, b)", {"a": 2.0, "b": 3.0})
    assert float(r.value) == 6.0
    assert [float(r.grad[k]) for k in ("a", "b")] == [3.0, 2.0]


@pytest.mark.parametrize(
    "expr, derivative",
    [("x*3**40", "3**40"), ("x*(1/3)**40", "(1/3)**40"), ("x**2*3**40", "2*3**40*x")],
)
def test_diff_keeps_a_power_past_the_exact_bound_as_a_power(expr, derivative):
    """kills core/symbolic/numbers.py:73: return _nice(a**e) -> return a**e.

    Exact numbers fold while numerator and denominator are at most 2**62 (docs/commands.md);
    3**40 (1.2e19) is past it, so n_pow hands back a float and the product keeps the power,
    exact, instead of a rounded 1.2157665459056929e+19.  The mutant returned the long
    Fraction, which the printer then wrote as that float."""
    assert ag.diff(expr, "x").texts() == {"x": derivative}


@pytest.mark.parametrize(
    "expr, at, value",
    [("sqrt(x)", 0.0, 0.0), ("cbrt(x)", 0.0, 0.0), ("asin(x)", 1.0, math.pi / 2)],
)
def test_taylor_mode_at_order_0_is_the_value_even_at_a_singular_point(expr, at, value):
    """kills core/taylor_mode.py:920: c = rule(r) if self.n > 1 else [r.out0] -> c = rule(r)
    if self.n >= 1 else [r.out0].

    taylor_coefficients raises NoTaylorMode only where the engine's repeated
    differentiation is needed for its numbers (its docstring); at order 0 there are no
    derivatives, the one coefficient is the engine's forward value, so even sqrt at 0 or
    asin at 1 (singular points for the derivatives) give it.  The mutant ran the op's rule
    at order 0 and refused them ("sqrt of zero", "asin at +-1")."""
    from autograd_cli.core.taylor_mode import taylor_coefficients
    from autograd_cli.grammar import parse

    assert taylor_coefficients(parse(expr), {"x": at}, "x", 0) == [value]


@pytest.mark.parametrize("method", ["gd", "bfgs", "newton"])
def test_minimize_ignores_a_variable_that_only_a_comparison_reads(method):
    """kills core/optimize.py:241: engine_grad(ev.output.sum(), leaves, allow_unused=True) ->
    allow_unused=False.

    In ``(x-1)**2 + (y > 1)`` no gradient reaches y (a comparison is constant almost
    everywhere, and its output is not differentiable): y's gradient is 0, it stays where it
    started, and x goes to 1.  The mutant asked the engine for every leaf's gradient and
    failed with PyTorch's "appears to not have been used in the graph" for gd and bfgs."""
    from autograd_cli.core.optimize import minimize
    from autograd_cli.grammar import parse

    r = minimize(parse("(x-1)**2 + (y > 1)"), {"x": 0.0, "y": 0.0}, method=method)
    assert r.converged and r.x == {"x": 1.0, "y": 0.0} and r.grad == {"x": 0.0, "y": 0.0}


def test_a_sparse_newton_step_is_damped_on_the_hessians_own_scale():
    """kills core/optimize.py:601: H + shift * scale * sp.identity(...) -> H + shift / scale *
    sp.identity(...).

    An indefinite sparse Hessian diag(-2, 100) with g = (1, 1): the Newton step does not
    descend, nor do shifts of 1e-8 to 1e-2 times the largest |diagonal entry| (100); a
    shift of 100 does, H + 100 I = diag(98, 200), and the step is -(1/98, 1/200).  A
    shift is on the Hessian's own scale (its docstring); the mutant divided by the scale,
    shifts of at most 0.01, none of which descends, and fell back to -g."""
    import scipy.sparse as sp

    from autograd_cli.core.optimize import _sparse_newton_direction

    step = _sparse_newton_direction(sp.csr_matrix(np.diag([-2.0, 100.0])), np.array([1.0, 1.0]))
    assert step == pytest.approx([-1 / 98, -1 / 200], rel=1e-12, abs=0.0)


def test_a_finite_prediction_whose_bytes_overflow_is_far_beyond_any_memory():
    """kills core/limits.py:187: if math.isfinite(predicted * node_bytes) -> if
    math.isfinite(predicted / node_bytes).

    Sizes 1, 10, 100 (growth 10) asked for at order 307 predict 100 * 10**304 = 1e306
    nodes: a finite count, but at 512 bytes a node 5e308 bytes, past float64.  The message
    says the count and "far beyond any memory", never a byte count of inf (the mutant tested
    the quotient, finite, and formatted the overflowing product)."""
    from autograd_cli.core.errors import LimitError
    from autograd_cli.core.limits import check_growth

    with pytest.raises(LimitError) as info:
        check_growth([1, 10, 100], 307)
    assert "on course for 1e+306 nodes (far beyond any memory) at order 307" in str(info.value)
