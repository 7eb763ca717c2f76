"""Tests written from the survivors of a hunting run, ``bench/mutate.py --target optimize
--target symbolic --sample 20 --seed 1009``: a seed chosen to find gaps in the two targets
with the most real survivors so far (optimize, symbolic), not one of the untuned seeds that
measure the net.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from
arithmetic by hand, the docs, or another path of the tool, never from the code under test.

Judged equivalent (bench/mutate_equivalent.txt): symbolic/algebra.py:211 (n_add commutes).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from autograd_cli.core import optimize
from autograd_cli.core.optimize import _SecondOrder
from autograd_cli.grammar import parse


def _one_direction(lam: float, slope: float, third: float) -> _SecondOrder:
    one = np.array([lam])
    return _SecondOrder(
        "degenerate", one, np.eye(1), np.array([third]), np.array([slope]),
        np.array([True]), 1e-5, np.array([True]), 1,
    )  # fmt: skip


@pytest.mark.parametrize("r", [0.9, 1.0, 1.5, 1.85, 4.0, math.inf])
def test_the_distance_to_a_stationary_point_is_widest_where_the_curvature_decides_nothing(r):
    """kills core/optimize.py:493: (1 - r if r < 0.9 else 0.1) -> (1 - r if r < 1.9 else 0.1).

    The distance is the Newton step |g.v|/λ divided by 1 - r, r = |g.v| |D³f| / λ²; from r
    = 0.9 on the curvature says nothing about where the stationary point is, and the divisor
    is held at 0.1: the widest distance, ten Newton steps (its docstring and comment).  With
    λ = 2 and |g.v| = 1 (a Newton step of 1/2), D³f = 4 r makes r exact.  The mutant
    divided by 1 - r up to 1.9: a distance of -2/3 at r = 1.5 (a step of the wrong sign
    width), and ZeroDivisionError at r = 1."""
    s = _one_direction(2.0, 1.0, 4.0 * r)
    assert s.distance(0) == 0.5 / 0.1


def test_the_distance_divides_by_one_minus_r_below_the_cut():
    """The same rule below r = 0.9: x**3's r of 1/2 (Newton's last iterate) doubles the
    Newton step: 1/2 / (1 - 1/2) = 1."""
    assert _one_direction(2.0, 1.0, 2.0).distance(0) == 1.0


def test_sparse_gauss_newton_takes_the_dense_steps(monkeypatch):
    """kills core/optimize.py:874: lsqr(J, -F, atol=1e-14, ...) -> atol=1.00000000000001.

    Two equations in 500 unknowns (the sparse path: a 2 x 500 Jacobian, LSQR's least-squares
    step) against the same system on the dense path (NumPy's lstsq): both steps are the
    minimum-norm solution of J s = -F, so the iterations are the same and so is the point.
    LSQR with atol 1 stops after one step of its own (its test ||A^T r|| <= atol ||A|| ||r||
    always holds), an inexact Gauss-Newton step: the mutant took 59 iterations, not 8."""
    n = optimize.SPARSE_NEWTON_FROM
    values = {"x": list(np.linspace(0.1, 1.0, n)), "w": list(np.linspace(-1.0, 2.0, n))}
    system = parse("[sum(x**2) - 4, sum(w*x) - 1]")
    sparse = optimize.solve(system, values, wrt=["x"])
    monkeypatch.setattr(optimize, "SPARSE_NEWTON_FROM", 10 * n)
    dense = optimize.solve(system, values, wrt=["x"])
    assert sparse.converged and dense.converged
    assert sparse.iterations == dense.iterations
    assert sparse.x["x"] == pytest.approx(dense.x["x"], rel=1e-12, abs=1e-14)
    x = np.array(sparse.x["x"])
    assert abs(x @ x - 4) < 1e-11 and abs(np.array(values["w"]) @ x - 1) < 1e-11


def test_a_printed_product_puts_a_power_of_a_number_first(cli):
    """kills core/symbolic/terms.py:22: _FACTOR_RANK = {NUM: 0, ...} -> {NUM: 1, ...}.

    Factors print in the order numbers' powers, atoms, sums, functions (terms.py).  A number
    base whose label sorts after a variable's, inf, shows it: d/dx (a**x * inf**x) is
    inf**x*a**x*(log(inf) + log(a)) with log(inf) = inf, printed
    inf*inf**x*a**x + inf**x*a**x*log(a).  The mutant ranked numbers with atoms, sorting
    by label: a**x before inf**x."""
    r = cli("diff", "a**x*inf**x", "--wrt", "x", "--json")
    assert r.code == 0, r.out
    assert r.json["derivative"] == "inf*inf**x*a**x + inf**x*a**x*log(a)"
