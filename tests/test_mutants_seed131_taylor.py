"""Tests written from the survivors of ``bench/mutate.py`` seed 131 (bench/results/
mutate-seed131.json) in Taylor mode.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from algebra
by hand, the module docstring of core/taylor_mode.py (its poisons and LIMIT = 1e300), or the
engine's repeated differentiation (``_repeated``), never from Taylor mode itself.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from taylor_defers import bits, defers_to_engine

from autograd_cli.core.taylor import _repeated, taylor
from autograd_cli.core.taylor_mode import taylor_coefficients
from autograd_cli.grammar import parse


def test_taylor_mode_takes_asinh_where_its_local_derivative_underflows_to_zero():
    """kills core/taylor_mode.py:599: _partial(1.0 / root0, r.op.name) -> _partial(1.0 *
    root0, r.op.name).

    The local derivative of asinh is 1/sqrt(u*u + 1).  At x = 1e160, x*x overflows to inf in
    float64, so the engine's derivative is 1/inf = 0.0 (a finite partial, within LIMIT):
    Taylor mode takes the point (to order 1 the products of x's derivatives, 1, cannot
    overflow), and gives the engine's series bit for bit: asinh(1e160) = log(2e160) =
    log(2) + 160 log(10), and 0.0.  The mutant checked sqrt(inf) = inf instead of its
    reciprocal, refused the point, and raised NoTaylorMode."""
    x0 = 1e160
    assert x0 * x0 == math.inf
    got = taylor_coefficients(parse("asinh(x)"), {"x": x0}, "x", 1)
    assert got[0] == pytest.approx(math.log(2.0) + 160 * math.log(10.0), rel=1e-15)
    assert bits(got) == bits(_repeated(parse("asinh(x)"), {"x": x0}, "x", 1))
    assert bits(got[1:]) == ["0.0"]
    assert bits(taylor(parse("asinh(x)"), {"x": x0}, order=1).coefficients) == bits(got)


def test_taylor_mode_refuses_lgamma_where_digamma_is_above_the_limit():
    """kills core/taylor_mode.py:705: _partial(derivs[1], "lgamma") -> pass.

    lgamma's local derivative is digamma(u) ~ -1/u - 0.5772... near 0.  At u = rho, the float
    just below 1e-300, the singularity guard lets order 1 through (its bound 1/rho has the
    same float log as 1e300, checked below), but digamma(rho) ~ -1/rho is below -1e300: a
    local partial above LIMIT, which the module docstring says Taylor mode refuses, deferring
    to the engine.  lgamma(x/2) at x = 2 rho (u = rho exactly, u' = 1/2) keeps the series'
    own coefficient, digamma(rho)/2 ~ -5e299, under the limit, so only the partial's guard
    refuses it.  The mutant skipped that guard and returned its own series."""
    rho = float(np.nextafter(1e-300, 0.0))
    assert -math.log(rho) <= math.log(1e300)
    assert -1.0 / rho < -1e300
    engine = defers_to_engine("lgamma(x/2)", 2 * rho, 1, "lgamma: a local derivative")
    assert float(engine[1]) == -0.5 / rho


def test_a_derivative_above_the_limit_is_a_hard_poison_a_zero_partial_does_not_absorb():
    """kills core/taylor_mode.py:938: raise _Poisoned(f"{name}: derivative {k} is above
    {LIMIT:g}", hard=True) -> hard=False.

    exp(2*x) at 354 is e^708 ~ 3.02e307, finite but above LIMIT = 1e300, and so are its
    derivatives 2^k e^708: a risk of overflow in the engine's graphs, a hard poison, which
    the module docstring says a zero partial never absorbs.  In where(x > 1000, exp(2*x), x)
    at 354 the branch taken is x (the exp branch's partial is 0), yet Taylor mode must refuse
    and ``taylor`` give the engine's series, x's own: 354, 1, 0, 0.  The mutant made the
    poison soft, the where absorbed it, and Taylor mode answered itself."""
    assert math.exp(708.0) > 1e300
    engine = defers_to_engine("where(x > 1000, exp(2*x), x)", 354.0, 3, "above 1e\\+300")
    assert engine == bits([354.0, 1.0, 0.0, 0.0])
