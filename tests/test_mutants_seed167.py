"""Tests written from the survivors of ``bench/mutate.py`` seed 167 (bench/results/
mutate-seed167.json), an untuned seed measured after seed 163's tests went in; the Dask
engine's survivor is in test_mutants_seed167_dask.py.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from
arithmetic by hand or the docs, never from the code under test.

Judged equivalent (bench/mutate_equivalent.txt): optimize.py:465 ``frozen=False`` (an
internal record nothing assigns to), sparsity.py:465 (a star coloring is tried only past 3
column colors, so never for 0 columns), batch/dask.py:453 ``max(0, size)`` (a partition size
is at least 1 byte), batch/dask_parts.py:292 ``stoppable=True`` (``read_header`` never asks
its interrupt whether to stop).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from autograd_cli.core import symbolic
from autograd_cli.core.optimize import minimize
from autograd_cli.core.taylor_mode import LIMIT, taylor_coefficients
from autograd_cli.grammar import parse

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_diff_simplifies_for_the_documented_time_at_most():
    """kills core/symbolic/command.py:33: TIME_BUDGET = 10.0 -> 11.0.

    docs/commands.md and docs/limits-and-errors.md both say diff simplifies for 10 s at most
    per call; the mutant's budget was 11 s."""
    for page in ("commands.md", "limits-and-errors.md"):
        text = " ".join((DOCS / page).read_text(encoding="utf-8").split())
        assert f"{symbolic.TIME_BUDGET:g} s at most" in text or (
            f"at most {symbolic.TIME_BUDGET:g} s per call" in text
        ), page


def test_diff_at_a_single_precision_complex_point_keeps_the_imaginary_parts(cli):
    """kills core/symbolic/command.py:381: a if kind is complex else a.real -> a if kind is
    not complex else a.real.

    (1+1j)**3 = (1+1j)(2j) = -2+2j and 3(1+1j)**2 = 6j, in complex64 as in complex128 (the
    numbers are exact).  The mutant kept only the real parts of a complex64 value: -2 and 0."""
    r = cli("diff", "x**3", "--x", "1+1j", "--dtype", "complex64", "--json")
    assert r.code == 0, r.out
    assert r.json["value"] == {"re": -2.0, "im": 2.0}
    assert r.json["derivative_value"] == {"re": 0.0, "im": 6.0}


def test_the_overflow_guard_of_a_function_far_from_its_singularity_adds_nothing():
    """kills core/taylor_mode.py:228: max(0.0, lgamma(k + 1) - k log(rho)) -> max(1.0, ...).

    log(c*x) at x = 1 with 2 log(c) half a unit below log(1e300): log's singularity (0) is c
    away, so its own derivatives up to order 2 are small (the local term is 0), and the
    products of u = c*x's derivatives reach c**2 = 1e300 / e**0.5, which fits.  By hand:
    log(c x) = log(c) + (x - 1) - (x - 1)**2 / 2 + ...  The mutant's local term of 1 put the
    estimate half a unit past the limit: NoTaylorMode (the slow path)."""
    c = math.exp((math.log(LIMIT) - 0.5) / 2)
    got = taylor_coefficients(parse(f"log({c!r}*x)"), {"x": 1.0}, "x", 2)
    assert got == pytest.approx([math.log(c), 1.0, -0.5], rel=1e-15, abs=0.0)


@pytest.mark.parametrize(
    "expr, want",
    [
        ("where(x > 2, asin(x), x)", [1.0, 1.0, 0.0, 0.0]),
        ("0*acos(x)", [0.0, 0.0, 0.0, 0.0]),
    ],
)
def test_asin_at_one_on_the_branch_not_taken_leaves_taylor_mode_its_result(expr, want):
    """kills core/taylor_mode.py:582: if not w[0] > 0 -> if not w[0] >= 0.

    asin and acos at 1 are a singular point: a soft poison, which a zero partial absorbs (the
    branch where does not take, a factor 0), so Taylor mode still gives the series (x at 1:
    1, 1, 0, 0; 0: zeros).  The mutant went on to divide by sqrt(1 - 1) = 0, a hard poison
    that nothing absorbs: NoTaylorMode, and the slow path."""
    assert taylor_coefficients(parse(expr), {"x": 1.0}, "x", 3) == want


def test_newton_over_a_scalar_and_a_vector_fills_the_hessian_blocks():
    """kills core/optimize.py:229: reshape(na, nb) -> reshape(nb, na).

    (a-1)**2 + (x0-a)**2 + (x1-2a)**2, a scalar beside a vector of 2: the Hessian's blocks
    are 1x1, 1x2, 2x1 and 2x2.  It is a quadratic, so Newton's step lands on its minimum
    a = 1, x = (1, 2), value 0.  The mutant reshaped the 1x2 block 2x1 (an internal error)."""
    r = minimize(parse("(a-1)**2 + (x[0]-a)**2 + (x[1]-2*a)**2"), {"a": 0.0, "x": [0.0, 0.0]})
    assert r.converged and r.iterations == 1, r.message
    assert r.x["a"] == pytest.approx(1.0, rel=1e-14)
    assert r.x["x"] == pytest.approx([1.0, 2.0], rel=1e-14)


def test_no_lower_value_with_the_gradient_at_sqrt_gtol_is_converged():
    """kills core/optimize.py:340: max|pg| <= sqrt(gtol) -> < sqrt(gtol).

    0.5*abs(x) at x = 1e-300 with gtol 0.25: the gradient is 0.5, above gtol, and every
    step of the line search (the smallest 0.5 * 2**-59, far past 0) raises the value, so
    no step lowers it: converged to rounding where the gradient is at most sqrt(gtol) =
    0.5, as documented ("at most").  The mutant's < said not converged."""
    r = minimize(parse("0.5*abs(x)"), {"x": 1e-300}, gtol=0.25)
    assert r.converged and r.x == {"x": 1e-300} and r.iterations == 0
    assert r.message == "no step lowers the value further (converged to rounding)"


def test_a_sum_of_a_scalar_in_a_sparse_jacobian_keeps_its_entry(cli):
    """kills core/sparsity.py:119: np.zeros((0, 1), int) -> np.zeros((0, 0), int).

    sum(x) of a scalar x is x: its Jacobian is [[1]].  A reduction of a scalar has one
    element, no axes; the mutant's pattern gave it none, and the sparse Jacobian was empty."""
    doc = cli("jacobian", "sum(x)", "--x", "2", "--sparse", "--json").json
    want = {"shape": [1, 1], "rows": [0], "cols": [0], "values": [1.0], "colors": 1}
    assert doc["jacobian"]["x"] == want
