"""Tests written from the survivors of ``bench/mutate.py`` seed 137 (bench/results/
mutate-seed137.json), an untuned seed measured at the start of the fifth session.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from algebra
by hand or the docs, never from the code under test.

Judged equivalent (bench/mutate_equivalent.txt): symbolic/numbers.py:54 (a Fraction plus a
float is float(a) + b in Python, the float branch's own sum), batch/dask_parts.py:123
(WorkerStop.at_once is written by the runner and read by nothing: only the local engine's
Interrupt has the signal handler that reads it).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from autograd_cli.core import optimize
from autograd_cli.core.uncertainty import MAX_MC
from autograd_cli.grammar import parse


def test_the_largest_documented_monte_carlo_is_accepted(cli):
    """kills core/uncertainty.py:253: if n < 2 or n > MAX_MC: -> n >= MAX_MC.

    propagate's --mc takes 2 to 10,000,000 draws (its own error message says so, and
    docs/analyses.md): 10,000,000 itself runs (about a second for x), one more is a
    ``limit`` error, exit 1.  x with u = 1 has mean 1 and standard deviation 1: with 10^7
    draws both are within 5 standard errors (5e-3 / 3) of them."""
    assert MAX_MC == 10_000_000
    r = cli("propagate", "x", "--x", "1+-1", "--mc", str(MAX_MC), "--seed", "3", "--json")
    assert r.code == 0, r.out
    mc = r.json["mc"]
    assert mc["draws"] == MAX_MC
    assert abs(mc["mean"] - 1) < 5 / MAX_MC**0.5 and abs(mc["std"] - 1) < 5 / MAX_MC**0.5
    r = cli("propagate", "x", "--x", "1+-1", "--mc", str(MAX_MC + 1), "--json")
    assert r.code == 1
    assert r.json["error"] == {
        "kind": "limit",
        "message": "--mc takes 2 to 10,000,000 draws, not 10,000,001",
    }


def test_an_optimizer_result_is_a_value_that_cannot_be_changed():
    """kills core/optimize.py:54: @dataclass(frozen=True) -> @dataclass(frozen=False).

    minimize, solve and critical return an OptimizeResult that, like the engine's other
    results, is a value: the CLI spells its messages on a copy (dataclasses.replace) and a
    caller cannot change a result another part of a program holds."""
    r = optimize.minimize(parse("(x - 1)**2"), {"x": 0.0})
    assert r.converged and r.x["x"] == pytest.approx(1.0, rel=1e-15)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.converged = False  # type: ignore[misc]
    copy = dataclasses.replace(r, message="changed")
    assert (copy.message, r.message) == ("changed", r.message)


def test_a_step_is_negligible_relative_to_the_point_it_reaches():
    """kills core/optimize.py:312: _negligible(theta, theta_old, f, f_old, xtol) ->
    _negligible(theta_old, theta, f, f_old, xtol).

    minimize stops when the last step moved the point by ``xtol`` relative to the new point,
    max|step| <= xtol (1 + max|theta|), and the value by rounding only (<= 1e-15 (1 + |f|)).
    f = 1e12 + 1e-4 (x - 1)^2 from x = 0: Newton's step lands on x = 1 (a quadratic), the
    value changes by 1e-4 <= 1e-15 (1 + 1e12) ~ 1e-3, and with xtol = 0.7 the step of 1 is
    within 0.7 (1 + 1) = 1.4: "the steps became negligible" after one iteration.  Measured
    from the old point, 0.7 (1 + 0) = 0.7 < 1, the run went on to stop at the gradient."""
    r = optimize.minimize(parse("1e12 + 1e-4*(x - 1)**2"), {"x": 0.0}, xtol=0.7)
    assert (r.converged, r.iterations, r.x) == (True, 1, {"x": 1.0})
    assert r.message == "the steps became negligible"


def test_the_sparse_newton_step_is_shifted_by_the_whole_diagonal_scale_before_giving_up():
    """kills core/optimize.py:588: for shift in (0.0, 1e-8, 1e-4, 1e-2, 1.0): -> the last
    shift 0.0.

    With 500 variables minimize takes the sparse Newton step (SPARSE_NEWTON_FROM): the
    Hessian shifted by t * scale * I, t = 0, 1e-8, 1e-4, 1e-2, 1 (scale the largest
    |diagonal| entry), until the step descends, else -g.  f = sum(0.5 x^2 + y^4 - 0.15 y^2
    + 1.5 y) over 250 x and 250 y from 0: H = diag(1, ..., -0.3, ...), scale 1, g = (0, 1.5).
    For t <= 0.01, H_yy + t < 0 and the step goes uphill; at t = 1 the y step is
    -1.5 / 0.7.  The line search halves it once (the full step, y = -2.14, raises f to
    about 17 per y), so the first iterate is y = -0.75 / 0.7 = -1.0714..., x = 0.  Steepest
    descent (-g) would have given y = -0.75."""
    n = optimize.SPARSE_NEWTON_FROM // 2
    text = "sum(0.5*x**2 + y**4 - 0.15*y**2 + 1.5*y)"
    r = optimize.minimize(parse(text), {"x": [0.0] * n, "y": [0.0] * n})
    first = r.trace[1]["x"]
    assert first["x"] == [0.0] * n
    assert first["y"] == pytest.approx([-0.75 / 0.7] * n, rel=1e-14)
    # and it goes on to the minimum: 4 y^3 - 0.3 y + 1.5 = 0
    y = np.array(r.x["y"])
    assert r.converged and np.allclose(4 * y**3 - 0.3 * y + 1.5, 0, atol=1e-9)


def test_a_hub_needs_ten_times_the_mean_degree_as_well_as_64():
    """kills core/sparsity.py:293: hub = degree > max(HUB_DEGREE, 10 * pattern.nnz /
    max(n, 1)) -> 10 / pattern.nnz / max(n, 1).

    A column is a hub (colored apart) where it holds more than HUB_DEGREE = 64 nonzeros and
    ten times its pattern's mean (the comment on HUB_DEGREE).  100 columns: 1,000 rows read
    columns i and i + 1 (mod 100), 20 each; 150 more rows read column 0 only (170) and 250
    more column 1 only (270).  nnz = 2,400, the mean 24, ten times it 240: column 1 is the
    only hub; column 0 (170 > 64) is not."""
    sp = pytest.importorskip("scipy.sparse")
    from autograd_cli.core.sparsity import HUB_DEGREE, _hubs

    assert HUB_DEGREE == 64
    i = np.arange(1000)
    rows = np.concatenate([i, i, 1000 + np.arange(150), 1150 + np.arange(250)])
    cols = np.concatenate([i % 100, (i + 1) % 100, np.zeros(150, int), np.ones(250, int)])
    pattern = sp.csr_matrix((np.ones(rows.size, dtype=bool), (rows, cols)), shape=(1400, 100))
    assert pattern.nnz == 2400
    hub = _hubs(pattern)
    assert hub is not None
    assert np.flatnonzero(hub).tolist() == [1]
