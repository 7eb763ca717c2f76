"""Tests written from the survivors of ``bench/mutate.py`` seed 71 in core/optimize.py and
core/sparsity.py: each pins a behaviour one surviving mutant changed (named in its comment)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import MatrixRankWarning

from autograd_cli.core import sparsity
from autograd_cli.core.errors import InputError
from autograd_cli.core.optimize import minimize
from autograd_cli.grammar import parse


def test_bounds_for_a_name_that_is_not_varied_name_it_in_the_error():
    # kills optimize.py:155 `variable=unknown[0]` -> `unknown[1]`: the error's details name
    # the first (sorted) of the unknown names, as its message does; with one unknown name the
    # mutant raised IndexError instead of the InputError
    with pytest.raises(InputError) as one:
        minimize(parse("x**2"), {"x": 1.0}, bounds={"q": (0.0, 1.0)})
    assert one.value.details == {"variable": "q"}
    assert one.value.message == "bounds given for 'q', which is not varied"
    with pytest.raises(InputError) as two:
        minimize(parse("x**2"), {"x": 1.0}, bounds={"b": (0.0, 1.0), "a": (0.0, 1.0)})
    assert two.value.details == {"variable": "a"}
    assert "'a'" in two.value.message


def test_a_step_of_exactly_xtol_is_negligible():
    # kills optimize.py:385 `<= xtol * (...)` -> `<`: the step-size stop is "moved by xtol
    # (relative) or less".  On x**2/2 from 1e-8 Newton's step is exactly -x (H = 1), so it
    # lands on 0 having moved exactly 1e-8 = xtol * (1 + |0|), and the value changed by 5e-17
    # (rounding beside 1e-15): the steps became negligible.  The mutant took the stop for the
    # gradient test's instead.
    r = minimize(parse("x**2/2"), {"x": 1e-8}, xtol=1e-8)
    assert r.x == {"x": 0.0}
    assert (r.converged, r.iterations) == (True, 1)
    assert r.message == "the steps became negligible"
    # a hair less than the step: not negligible, the next check finds the gradient zero
    r = minimize(parse("x**2/2"), {"x": 1e-8}, xtol=0.99e-8)
    assert r.message == "the gradient is zero (to gtol)"


def test_a_high_odd_power_is_no_minimum(cli):
    # kills optimize.py:473 `max(1 - r, 0.1)` -> `max(1 - r, 1.1)`: x**51 only inflects at
    # 0 (an odd power, as x**3: docs/analyses.md, an inflection is not a minimum).  Newton's
    # method stops where its gradient is below --gtol, still near 0.6; the distance to the
    # stationary point is the Newton step |g|/lambda divided by 1 - r, r = 49/50 here (capped
    # at 0.1), and the check probes a hundred times that far, past 0, where the value falls.
    # The mutant divided by 1.1, probed short of 0, saw no fall and called it a minimum.
    out = cli("minimize", "x**51", "--x", "0.9", "--json")
    doc = out.json
    assert out.code == 1 and doc["converged"] is False
    assert doc["message"].startswith("not a minimum:")
    assert "inflection" in doc["message"]


def test_a_singular_sparse_hessian_raises_no_scipy_warning():
    # kills optimize.py:572 `warnings.simplefilter("ignore", MatrixRankWarning)` -> `pass`:
    # from 500 unknowns minimize's Newton step is a sparse solve; x[0] does not appear in the
    # function, so the Hessian's first row and column are empty (exactly singular) and
    # SciPy's spsolve warns "Matrix is exactly singular" before the shifted solve takes over.
    # The user must not see that warning; the minimum (x[1:] = 0, x[0] left as it was) is
    # found all the same.
    start = np.full(500, 3.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = minimize(parse("sum(x[1:]**2)"), {"x": start})
    assert [w for w in caught if issubclass(w.category, MatrixRankWarning)] == []
    assert r.converged
    x = np.asarray(r.x["x"])
    assert x[0] == 3.0
    assert np.max(np.abs(x[1:])) < 1e-12


def test_critical_gives_up_after_100_newton_steps_by_default(cli):
    # kills optimize.py:842 `max_iter: int = 100` -> `101`: critical's default, as solve's
    # and minimize's Newton method: 100 steps.  Newton on x**4's gradient shrinks x by 2/3 a
    # step, so from 1e20 the gradient 4x**3 is still far from zero after 100 steps
    # (x = 1e20 * (2/3)**100, about 246).
    out = cli("critical", "x**4", "--x", "1e20", "--json")
    doc = out.json
    assert out.code == 1 and doc["converged"] is False
    assert doc["iterations"] == 100
    assert doc["message"] == "no convergence in 100 iterations (--max-iter)"
    assert doc["x"]["x"] == pytest.approx(1e20 * (2 / 3) ** 100, rel=1e-9)


def test_star_coloring_work_counts_the_off_diagonal_degrees(monkeypatch):
    # kills sparsity.py:438 `graph.setdiag(False)` -> `setdiag(True)`: the star coloring's
    # graph joins columns sharing a nonzero off the diagonal, and its work (STAR_WORK_MAX)
    # is the sum of its vertices' squared degrees.  x[0]*sum(x[1:]**2) on 20 entries is an
    # arrowhead: x[0] adjacent to the 19 others, each of them to x[0] alone, so
    # 19**2 + 19 * 1**2 = 380 steps; its star coloring takes 2 colors, its columns 20 (all
    # share x[0]'s row).  The mutant counted each vertex as its own neighbor (work 476),
    # gave the star coloring up at a bound of 380 and swept 20 columns.
    program = parse("x[0]*sum(x[1:]**2)")
    x = np.arange(1.0, 21.0)
    monkeypatch.setattr(sparsity, "STAR_WORK_MAX", 380)
    _, _, k, whole, _ = sparsity.sparse_hessian(program, {"x": x}, ["x"])
    assert k == 2
    # the exact Hessian: d2/dx0 dxi = 2 x[i], d2/dxi**2 = 2 x[0] (i >= 1), d2/dx0**2 = 0
    expected = np.zeros((20, 20))
    expected[0, 1:] = expected[1:, 0] = 2 * x[1:]
    expected[np.arange(1, 20), np.arange(1, 20)] = 2 * x[0]
    assert np.array_equal(whole.toarray(), expected)
    # one step under the work: no star coloring, a color per column
    monkeypatch.setattr(sparsity, "STAR_WORK_MAX", 379)
    assert sparsity.sparse_hessian(program, {"x": x}, ["x"])[2] == 20


def test_a_sparse_jacobian_of_a_constant_output_over_a_given_pattern_is_zero():
    # kills sparsity.py:697 `if k and out.requires_grad:` -> `k or`: where the output does not
    # depend differentiably on the variables (comparisons are piecewise constant) nothing is
    # swept, whatever pattern the caller gives: the Jacobian is zero over that pattern.  The
    # mutant swept anyway and, with row sweeps (2 dense rows over 10 columns), asked for the
    # gradient of an output that has none (GradError).
    pattern = sp.csr_matrix(np.ones((2, 10), dtype=bool))
    x = np.arange(10.0)
    value, _, k, whole = sparsity.sparse_jacobian(
        parse("[sum(x > 1), sum(x > 2)]"), {"x": x}, ["x"], pattern=pattern
    )
    assert value.tolist() == [8.0, 7.0]
    assert k == 2
    assert whole.shape == (2, 10)
    assert np.array_equal(whole.toarray(), np.zeros((2, 10)))
