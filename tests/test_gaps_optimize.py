"""Tests for the lines of core/optimize.py and core/uncertainty.py that the mutation target's
test files never ran (``bench/mutate.py``'s optimize and uncertainty targets), so that a
mutant of any of them dies.

Each test's docstring names the lines it covers (as they were when written), the behaviour it
pins and where the expected value comes from: algebra by hand, the docstrings, or NumPy
computed apart in the test, never the output of the code under test.  The lines left without
a test (unreachable from any input) are explained where they would be.
"""

from __future__ import annotations

import math
import sys
import warnings

import numpy as np
import pytest

from autograd_cli.core import optimize
from autograd_cli.core.errors import (
    BadValueError,
    InputError,
    MissingValueError,
    NonScalarOutputError,
)
from autograd_cli.core.uncertainty import propagate
from autograd_cli.grammar import parse

#: the variables from which minimize and solve take their sparse steps (issue 28)
N_SPARSE = optimize.SPARSE_NEWTON_FROM
STALLED = "no step reduces the residual: stopped (no root nearby?)"


# ---- optimize: the variables and their bounds --------------------------------------------


@pytest.mark.parametrize("which", [optimize.minimize, optimize.solve, optimize.critical])
def test_a_varied_variable_without_a_start_value_is_a_missing_value(which):
    """Covers core/optimize.py:88 (``_Flat``: ``raise missing_value(name)``).

    ``check_values`` only refuses values of unknown names; a variable to vary that has no
    value at all is refused by ``_Flat`` with the engine's missing-value error (program.py's
    ``missing_value``: "no value for variable 'x'"), not a KeyError."""
    with pytest.raises(MissingValueError, match=r"^no value for variable 'x'$"):
        which(parse("x*y"), {"y": 1.0})


def test_empty_bounds_are_refused_and_equal_bounds_pin_the_variable():
    """Covers core/optimize.py:151 (``_bounds``: ``raise InputError("the bounds of ... are
    empty")``).

    lo > hi is an empty box: refused with the message naming both ends.  lo == hi is not
    empty (``not a <= b``): the start is projected onto x = 1, where the projected gradient
    of x**2 (2 > 0 at the lower bound) is zero, so minimize stops there at once (by hand)."""
    with pytest.raises(InputError, match=r"^the bounds of 'x' are empty: 2 > 1$"):
        optimize.minimize(parse("x**2"), {"x": 0.0}, bounds={"x": (2, 1)})
    r = optimize.minimize(parse("x**2"), {"x": 0.0}, bounds={"x": (1, 1)})
    assert (r.x, r.value, r.converged, r.iterations) == ({"x": 1.0}, 1.0, True, 0)


# ---- optimize: minimize's stops and messages ---------------------------------------------


@pytest.mark.parametrize("method", ["bfgs", "gd"])
def test_bfgs_and_gd_refuse_a_vector_output_in_minimizes_words(method):
    """Covers core/optimize.py:235 (the gradient-only path of ``_scalar_value_grad_hess``:
    ``raise _non_scalar(what, value.shape)``).

    bfgs and gd evaluate without the Hessian, so the scalar check is this one, not
    program_hessian's: the message names minimize and the shape (``_non_scalar``'s text), as
    the newton path's does."""
    with pytest.raises(NonScalarOutputError) as e:
        optimize.minimize(parse("x"), {"x": [1.0, 2.0]}, method=method)
    assert str(e.value) == (
        "minimize needs a scalar output, but it has shape (2,); wrap it in sum(...) or norm(...)"
    )
    assert e.value.details["shape"] == [2]


def test_a_step_below_the_rounding_of_x_converges_to_rounding():
    """Covers core/optimize.py:604 (``_line_search``: the trial point rounds to the current
    one, ``return None, None``) and 340 (``_no_lower_value``: converged to rounding).

    f = 0.1*(x - 1e10)**2 from x0 = 1e10 + 2**-19 (one ulp above 1e10, so x0 - 1e10 = 2**-19
    exactly).  The gradient 0.2 * 2**-19 = 3.8e-7 lies between gtol = 1e-10 and
    sqrt(gtol) = 1e-5, and gd's step -g is below half an ulp of x0 (2**-20), so x0 + t*step
    == x0 for t = 1: the line search gives up at once, and with the gradient below
    sqrt(gtol) that is convergence to rounding, at x0, after no step (by hand)."""
    x0 = 1e10 + 2.0**-19
    assert x0 - 1e10 == 2.0**-19 and x0 - 0.2 * 2.0**-19 == x0  # the premises, in floats
    r = optimize.minimize(parse("0.1*(x - 1e10)**2"), {"x": x0}, method="gd")
    assert r.message == "no step lowers the value further (converged to rounding)"
    assert (r.converged, r.iterations, r.x) == (True, 0, {"x": x0})
    assert r.grad["x"] == pytest.approx(0.2 * 2.0**-19, rel=1e-12)


def test_a_start_where_the_value_is_not_finite_takes_no_step():
    """Covers core/optimize.py:349 (``_stop_here``: the value or gradient not finite).

    log(-1) is nan (IEEE; the gradient 1/x = -1 is finite): there is no descent direction,
    so minimize stops before any step, not converged, with _stop_here's message."""
    r = optimize.minimize(parse("log(x)"), {"x": -1.0})
    assert r.message == "the value or gradient is not finite here: no descent direction"
    assert (r.converged, r.iterations, r.x) == (False, 0, {"x": -1.0})
    assert math.isnan(r.value)


def test_bfgs_keeps_its_estimate_where_the_curvature_is_zero():
    """Covers core/optimize.py:378 (``_bfgs_update``: ``return B`` where s·y is not safely
    positive).

    f = x is linear: every step's y = g_new - g_old = 0, so s·y = 0 and the inverse-Hessian
    estimate stays the identity.  bfgs then steps by -g = -1 each time, each full step
    accepted (the value falls by 1 >= c1 * 1), from 5 to the bound 0, where the projected
    gradient is zero: x = 5, 4, 3, 2, 1, 0 in five steps (by hand).  An estimate updated
    with rho = 1/0 would fail, a scaled one take longer steps."""
    r = optimize.minimize(parse("x"), {"x": 5.0}, method="bfgs", bounds={"x": (0, 10)})
    assert [row["x"]["x"] for row in r.trace] == [5.0, 4.0, 3.0, 2.0, 1.0, 0.0]
    assert (r.converged, r.iterations, r.message) == (
        True,
        5,
        "the gradient is zero (to gtol) in every direction the bounds allow",
    )


def test_minimize_started_at_a_maximum_says_it_is_a_maximum():
    """Covers core/optimize.py:426 (``_not_a_minimum``: the Hessian negative definite).

    -x**2 at 0: the gradient is zero, so minimize stops at once, and the exact Hessian -2 < 0
    makes it a maximum (module docstring: a maximum is not a minimum, converged False)."""
    r = optimize.minimize(parse("-x**2"), {"x": 0.0})
    assert r.message == (
        "not a minimum: the gradient is zero here, but the Hessian is negative definite (a maximum)"
    )
    assert (r.converged, r.iterations, r.x) == (False, 0, {"x": 0.0})


def test_minimize_at_a_degenerate_point_with_a_negative_curvature_is_no_minimum():
    """Covers core/optimize.py:428 (``_not_a_minimum``: degenerate with a negative eigenvalue).

    -x**2 + y**4 at (0, 0): the gradient is zero, the Hessian diag(-2, 0) has a zero
    eigenvalue (classify: degenerate) and a negative one, so this is no minimum whatever the
    flat direction does (by hand)."""
    r = optimize.minimize(parse("-x**2 + y**4"), {"x": 0.0, "y": 0.0})
    assert r.message == (
        "not a minimum: the gradient is zero here, but the Hessian has a negative eigenvalue"
    )
    assert (r.converged, r.iterations) == (False, 0)


# ---- optimize: critical's kind where the Hessian is not finite ---------------------------


def test_critical_where_the_hessian_is_not_finite_is_degenerate_with_no_eigenvalues():
    """Covers core/optimize.py:510-511 (``_kind``: a Hessian that is not finite).

    sqrt(x) at 0: the gradient 1/(2 sqrt(x)) and the Hessian -1/(4 x**1.5) are infinite, so
    critical stops before a step, and the kind cannot be read from eigenvalues: degenerate,
    with none (an empty list), as _kind's docstring and classify's "a curvature not known"
    say."""
    r = optimize.critical(parse("sqrt(x)"), {"x": 0.0})
    assert r.message == "the value or its derivatives are not finite here"
    assert (r.converged, r.iterations, r.kind, r.eigenvalues) == (False, 0, "degenerate", [])


# ---- optimize: the sparse steps (issue 28) -----------------------------------------------


def test_minimize_without_scipy_sparse_linalg_takes_the_dense_newton_steps(monkeypatch):
    """Covers core/optimize.py:190-191 (``_sparse_newton``: the ImportError fallback).

    With ``scipy.sparse.linalg`` not importable (None in sys.modules makes ``import`` raise
    ImportError), 500 variables are past SPARSE_NEWTON_FROM, yet minimize takes the dense
    Newton step and gives the answer it gives with SciPy: sum((x-1)**2) has its minimum at
    x = 1 (by hand), reached in one Newton step (a quadratic).  Taking the sparse path
    anyway would need scipy.sparse.linalg's spsolve and fail."""
    monkeypatch.setitem(sys.modules, "scipy.sparse.linalg", None)
    r = optimize.minimize(parse("sum((x - 1)**2)"), {"x": [0.0] * N_SPARSE})
    assert (r.converged, r.iterations) == (True, 1)
    assert r.x["x"] == pytest.approx([1.0] * N_SPARSE, rel=1e-14)


def test_the_sparse_newton_step_falls_back_to_steepest_descent():
    """Covers core/optimize.py:595 (``_sparse_newton_direction``: ``return -g``).

    f = 10*sum(a*b) over 250 + 250 = 500 variables (the sparse path), from a = 1, b = -1,
    within [-2, 2].  Its Hessian H = [[0, 10 I], [10 I, 0]] has a zero diagonal (the shift's
    scale is then 1) and g = H u = -10 u for u = (1, -1): an eigenvector of eigenvalue -10.
    For every shift t <= 1, the step -(H + t I)^-1 g = 10 u / (t - 10) has g·step =
    100 |u|**2 / (10 - t) = 50000 / (10 - t) > 0: none descends, and the step is -g = 10 u.
    Projected, it lands on a = 2, b = -2, value 10 * 250 * (-4) = -10000, where every entry
    is held at a bound: converged after one step (by hand).  The step +g would land on
    a = -2, b = 2 instead."""
    n = N_SPARSE // 2
    r = optimize.minimize(
        parse("10*sum(a*b)"),
        {"a": [1.0] * n, "b": [-1.0] * n},
        bounds={"a": (-2, 2), "b": (-2, 2)},
    )
    assert r.x == {"a": [2.0] * n, "b": [-2.0] * n}
    assert (r.value, r.converged, r.iterations) == (-10000.0, True, 1)


def _newton_steps_of_x2_minus_4(x: float, n: int, tol: float = 1e-12) -> int:
    """The oracle: Newton's steps on x**2 - 4 = 0 for n equal unknowns, to solve's stop
    (||F|| <= tol (1 + max|x|)), in plain floats."""
    steps = 0
    while math.sqrt(n) * abs(x * x - 4) > tol * (1 + abs(x)):
        x -= (x * x - 4) / (2 * x)
        steps += 1
    return steps


def test_solve_of_a_square_sparse_system_takes_the_sparse_lu_newton_step():
    """Covers core/optimize.py:841-845 (``_least_squares_step``: a square sparse Jacobian,
    spsolve's finite step returned).

    x**2 - 4 = 0 for 500 unknowns from x = 1: a diagonal Jacobian 2x, so each step is
    Newton's -(x**2 - 4)/(2x) per entry and every entry converges to 2 in as many steps as
    the scalar iteration (the oracle above); a step of the wrong sign would not converge."""
    r = optimize.solve(parse("x**2 - 4"), {"x": [1.0] * N_SPARSE})
    assert r.converged and r.message == "the residual is zero (to tol)"
    assert r.iterations == _newton_steps_of_x2_minus_4(1.0, N_SPARSE)
    assert r.x["x"] == pytest.approx([2.0] * N_SPARSE, rel=1e-14)


def test_solve_of_a_singular_square_sparse_system_falls_back_to_least_squares():
    """Covers core/optimize.py:841-844 and 846 (``_least_squares_step``: spsolve's step is
    not finite on a singular Jacobian, the LSQR step is taken instead, with SciPy's
    MatrixRankWarning kept quiet).

    x**2 - 4 = 0 for 500 unknowns, half of them starting at 0, where the Jacobian's diagonal
    entry 2x is 0 (singular).  The least-squares step moves the other half to the root 2 and
    leaves the zero columns at 0 (LSQR's minimum-norm step has no component there), so the
    residual stops at ||(-4, ..., -4)|| = 4 sqrt(250) and no step reduces it (by hand).  A
    non-finite step taken would leave every entry where it started."""
    n = N_SPARSE // 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning may escape (SciPy's MatrixRankWarning)
        r = optimize.solve(parse("x**2 - 4"), {"x": [1.0] * n + [0.0] * n})
    assert (r.converged, r.message) == (False, STALLED)
    assert r.x["x"][:n] == pytest.approx([2.0] * n, rel=1e-12)
    assert r.x["x"][n:] == [0.0] * n
    assert r.residual == pytest.approx(4 * math.sqrt(n), rel=1e-12)


def test_solve_of_an_underdetermined_sparse_system_takes_the_minimum_norm_step():
    """Covers core/optimize.py:840 and 846 (``_least_squares_step``: a sparse Jacobian that is
    not square, LSQR).

    One equation, sum(x**2) = 4, in 500 unknowns from x = 0.1 each: J = 2x^T is 1 x 500 and
    the minimum-norm Gauss-Newton step is along J^T, that is along x, so the iterates stay
    equal and end on the sphere at 2/sqrt(500) each (by hand)."""
    r = optimize.solve(parse("sum(x**2) - 4"), {"x": [0.1] * N_SPARSE})
    assert r.converged and r.message == "the residual is zero (to tol)"
    assert r.x["x"] == pytest.approx([2 / math.sqrt(N_SPARSE)] * N_SPARSE, rel=1e-12)


# ---- uncertainty -------------------------------------------------------------------------


def test_propagate_without_a_value_for_an_uncertain_input_is_a_missing_value():
    """Covers core/uncertainty.py:128 (``_covariance``: ``raise missing_value(name)``).

    x has an uncertainty but no value: the engine's missing-value error, not a KeyError."""
    with pytest.raises(MissingValueError, match=r"^no value for variable 'x'$"):
        propagate(parse("x*y"), {"y": 2.0}, {"x": 0.1})


def test_a_correlation_with_an_input_without_uncertainty_is_refused(cli):
    """Covers core/uncertainty.py:143-145 (``_covariance``: the correlation names an input
    that has no uncertainty).

    y is exact (no uncertainty), so a correlation with it means nothing: refused, naming the
    setting as the library does (``corr``) and, on the command line, as ``--corr``, exit 2
    (an input error)."""
    with pytest.raises(InputError) as e:
        propagate(parse("x*y"), {"x": 1.0, "y": 2.0}, {"x": 0.1}, correlations={("x", "y"): 0.5})
    assert str(e.value) == "corr names 'y', which has no uncertainty"
    r = cli("propagate", "x*y", "--x", "1+-0.1", "--y", "2", "--corr", "x,y=0.5")
    assert r.code == 2
    assert "--corr names 'y', which has no uncertainty" in r.err


@pytest.mark.parametrize(
    "u",
    [[[0.1, 0.2], [0.3]], "abc", {"a": 1}, 10**400],
    ids=["ragged", "not-a-number", "a-mapping", "an-int-past-1e308"],
)
def test_an_uncertainty_that_is_no_array_of_numbers_is_a_bad_value(u):
    """Covers core/uncertainty.py:192-193 (``_covariance_block``: NumPy cannot make a float
    array of the uncertainty: ValueError, TypeError or OverflowError, as its comment lists).

    Each is refused with one message naming the input, not NumPy's exception."""
    with pytest.raises(BadValueError) as e:
        propagate(parse("x"), {"x": 1.0}, {"x": u})
    assert str(e.value) == (
        "the uncertainty of 'x' is not a number or a rectangular array of numbers"
    )


@pytest.mark.parametrize("u", [math.inf, math.nan, [0.1, math.inf]])
def test_an_uncertainty_that_is_not_finite_is_refused(u):
    """Covers core/uncertainty.py:199 (``_covariance_block``: ``raise InputError("... must be
    finite")``).

    An infinite or nan standard uncertainty (or one entry of a vector's) is refused before
    it could reach the covariance."""
    x = [1.0, 2.0] if isinstance(u, list) else 1.0
    with pytest.raises(InputError, match=r"^the uncertainty of 'x' must be finite$"):
        propagate(parse("sum(x)"), {"x": x}, {"x": u})


def test_a_covariance_matrix_that_is_not_symmetric_is_refused():
    """Covers core/uncertainty.py:202 (``_covariance_block``: the matrix is not symmetric).

    A 2x2 uncertainty for a vector of two is its covariance matrix (docstring of propagate),
    which must be symmetric: [[1, 0.5], [0.2, 1]] is not; its symmetric version is taken and
    gives u = sqrt(1^T Σ 1) = sqrt(1 + 0.5 + 0.5 + 1) = sqrt(3) for sum(x) (by hand)."""
    with pytest.raises(InputError, match=r"^the covariance matrix of 'x' is not symmetric$"):
        propagate(parse("sum(x)"), {"x": [1.0, 2.0]}, {"x": [[1.0, 0.5], [0.2, 1.0]]})
    r = propagate(parse("sum(x)"), {"x": [1.0, 2.0]}, {"x": [[1.0, 0.5], [0.5, 1.0]]})
    assert r.uncertainty == pytest.approx(math.sqrt(3), rel=1e-15)


def test_monte_carlo_of_an_unbatchable_program_evaluates_the_draws_one_by_one():
    """Covers core/uncertainty.py:263-265 (``_monte_carlo``: ``inner`` has no batching rule,
    so evaluate_batch raises Unbatchable and each draw is evaluated alone).

    inner(x, x) = x1**2 + x2**2 is sum(x*x), which batches: with the same seed both take the
    same draws, so the row-by-row statistics equal the batched ones.  An oracle in NumPy
    (JCGM 101: the draws of N(x, Σ), their mean, standard deviation and 2.5 / 97.5 %
    quantiles) agrees with both."""
    values, u, n = {"x": [1.0, 2.0]}, {"x": [0.1, 0.2]}, 500
    row_by_row = propagate(parse("inner(x, x)"), values, u, mc=n, seed=7).mc
    batched = propagate(parse("sum(x*x)"), values, u, mc=n, seed=7).mc
    rng = np.random.default_rng(7)
    draws = rng.multivariate_normal([1.0, 2.0], np.diag([0.01, 0.04]), size=n, method="eigh")
    y = (draws**2).sum(axis=1)
    oracle = [y.mean(), y.std(ddof=1), *np.quantile(y, [0.025, 0.975])]
    for mc in (row_by_row, batched):
        assert mc["draws"] == n
        got = [mc["mean"], mc["std"], *mc["interval"]]
        assert got == pytest.approx(oracle, rel=1e-12)


def test_propagate_of_a_vector_output_names_propagate(cli):
    """core/uncertainty.py ``_derivatives``: the output is not a scalar.

    propagate needs a scalar output, and its error says so in its own words, as minimize's
    names minimize (optimize.py's ``_non_scalar``).  A product bug found here: program_hessian
    refused the vector output first with "hessian needs a scalar output ... Use the jacobian
    command ...", naming a command the user did not run."""
    r = cli("propagate", "x*[1, 2]", "--x", "1+-0.1", "--json")
    assert r.code == 1 and r.json["error"]["message"].startswith(
        "propagate needs a scalar output, but it has shape (2,)"
    ), r.out
    with pytest.raises(NonScalarOutputError) as e:
        propagate(parse("x*[1, 2]"), {"x": 1.0}, {"x": 0.1})
    assert str(e.value).startswith("propagate needs a scalar output"), str(e.value)
    assert e.value.details["shape"] == [2]
