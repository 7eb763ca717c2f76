"""Tests written from the survivors of ``bench/mutate.py`` seed 113 (bench/results/
mutate-seed113.json) in the op table, the simplifier, Taylor mode, uncertainty and optimize.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from algebra
by hand, power series, the docs or the docstrings, never from the code under test.  The
survivors that no test can tell apart are in bench/mutate_equivalent.txt, with the reason.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from taylor_defers import bessel

from autograd_cli.core import optimize
from autograd_cli.core.taylor_mode import NoTaylorMode, taylor_coefficients
from autograd_cli.grammar import parse

# ---- Taylor mode --------------------------------------------------------------------------


def test_taylor_mode_of_j0_and_j1_uses_the_bessel_recurrence_with_its_signs():
    """kills core/ops/special.py:230: f, pm = (special.jv, -1) if name[0] == "j" else
    (special.iv, 1) -> (special.jv, -0).

    The derivatives of J_v are 2^-m sum_k (-1)^k C(m, k) J_(v-m+2k): J0' = -J1, J0'' = J1/x -
    J0, J1' = J0 - J1/x; at x = 1 the series of j0 is J0, -J1, (J1 - J0)/2 and that of j1 is
    J1, J0 - J1.  The mutant kept only the k = 0 term (0**0 = 1, 0**k = 0): J0' came out as
    J_-1/2 = -J1/2."""
    pytest.importorskip("scipy.special")
    j0, j1 = bessel(0, 1.0, -1), bessel(1, 1.0, -1)
    got = taylor_coefficients(parse("j0(x)"), {"x": 1.0}, "x", 2)
    assert got == pytest.approx([j0, -j1, (j1 - j0) / 2], rel=1e-12)
    got = taylor_coefficients(parse("j1(x)"), {"x": 1.0}, "x", 1)
    assert got == pytest.approx([j1, j0 - j1], rel=1e-12)


def test_the_overflow_guard_admits_derivatives_of_exactly_its_limit():
    """kills core/taylor_mode.py:226: if not size <= _LOG_LIMIT: -> if not size < _LOG_LIMIT:.

    Taylor mode refuses a point where the engine's derivatives could pass LIMIT = 1e300
    (taylor_mode's ``_near_singularity``: the m-th derivative of log near its singularity is
    about m!/rho**m), and takes one where they stay within it.  log(x) to order 2 at rho:
    the bound is 2!/rho**2, whose log lgamma(3) - 2 log(rho) equals log(1e300) exactly, in
    floating point, at rho = 1.4142135623730328e-150 (checked below): that point is taken,
    the float before it is refused.  The mutant refused the limit itself.  The series is
    log(rho), 1/rho, -1/(2 rho**2)."""
    rho = 1.4142135623730328e-150
    below = float(np.nextafter(rho, 0.0))
    limit = math.log(1e300)
    assert math.lgamma(3.0) - 2 * math.log(rho) == limit
    assert math.lgamma(3.0) - 2 * math.log(below) > limit
    got = taylor_coefficients(parse("log(x)"), {"x": rho}, "x", 2)
    assert got == pytest.approx([math.log(rho), 1 / rho, -0.5 / rho**2], rel=1e-14)
    with pytest.raises(NoTaylorMode, match="derivatives overflow the engine"):
        taylor_coefficients(parse("log(x)"), {"x": below}, "x", 2)


# ---- the simplifier -----------------------------------------------------------------------


def test_a_product_with_a_factor_zero_on_a_region_keeps_its_power_quotient(cli):
    """kills core/symbolic/terms.py:121: return t.data[0] == 0 or any(vanish[c.uid] for c in
    t.children()) -> ... and any(...).

    A product may be 0 on a whole region when one of its factors may (2*relu(x) for x < 0),
    whatever its coefficient; there b**z * b**-z is 0*inf = nan (z > 0), not 1, so the
    simplifier keeps it (core/symbolic/algebra.py, "0 on a region ... it stays b/b").  d/dy of
    y*(2*relu(x))**z*(2*relu(x))**(-z) at x = -1, z = 1 is therefore nan, as grad says; at
    x = 2 it is 1.  The mutant called 2*relu(x) never 0 and printed the derivative 1."""
    expr = "y*(2*relu(x))**z*(2*relu(x))**(-z)"
    for x, want in (("-1", "nan"), ("2", 1.0)):
        d = cli("diff", expr, "--wrt", "y", "--x", x, "--y", "1", "--z", "1", "--json")
        g = cli("grad", expr, "--x", x, "--y", "1", "--z", "1", "--json")
        assert d.code == 0 and g.code == 0, d.out + g.out
        assert d.json["derivative_value"] == want == g.json["grad"]["y"], d.out
    assert cli("diff", expr, "--wrt", "y", "--json").json["derivative"] != "1"


# ---- uncertainty --------------------------------------------------------------------------


@pytest.mark.parametrize("pair", ["x,y", "y,x", "y,w"])
def test_a_correlation_with_a_vector_input_is_refused(cli, pair):
    """kills core/uncertainty.py:144: if sizes[i] != 1 or sizes[j] != 1: -> ... and ....

    --corr relates two scalar inputs (propagate --help; a vector takes a covariance matrix):
    a scalar with a vector is refused as two vectors are, exit 2.  The mutant refused only
    two vectors and set one element's covariance of a scalar with a vector."""
    r = cli(
        "propagate",
        "x + sum(y) + sum(w)",
        "--x",
        "1+-0.1",
        "--y",
        "[1,2]+-0.1",
        "--w",
        "[3,4]+-0.2",
        "--corr",
        f"{pair}=0.5",
    )
    assert r.code == 2, r.out
    assert "--corr relates two scalar inputs; give vectors a covariance matrix" in r.err


# ---- optimize -----------------------------------------------------------------------------


def test_bfgs_restarts_at_steepest_descent_where_its_estimate_does_not_descend():
    """kills core/optimize.py:362: return -g, np.eye(g.size) -> return g, np.eye(g.size).

    BFGS steps along -B g, B its inverse-Hessian estimate; where rounding has left B so that
    -B g is not a descent direction (g . step >= 0), it restarts: steepest descent, -g, and
    the estimate reset to the identity (optimize._direction's docstring).  The mutant stepped
    along +g, uphill."""
    g = np.array([1.0, -2.0])
    step, B = optimize._direction("bfgs", None, g, -np.eye(2))
    assert step.tolist() == [-1.0, 2.0] and B.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    # a descending estimate is kept
    good = np.array([[2.0, 0.0], [0.0, 0.5]])
    step, B = optimize._direction("bfgs", None, g, good)
    assert step.tolist() == [-2.0, 1.0] and B is good
