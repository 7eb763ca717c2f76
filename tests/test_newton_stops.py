"""solve and critical share one Newton loop (core/optimize.py ``_newton``): how each of its
four stops reports itself.  ``iterations`` counts the steps taken (the trace has one row per
step after the start's), ``converged`` is true only where the size reached zero, and the
message says which stop it was."""

from __future__ import annotations

import pytest

from autograd_cli.core.optimize import critical, solve
from autograd_cli.grammar import parse

SOLVE = "the residual is zero"
CRITICAL = "the gradient is zero"


def _run(which, text, values, **settings):
    r = which(parse(text), values, **settings)
    assert len(r.trace) == r.iterations + 1  # the start, then one row per step taken
    assert [row["iteration"] for row in r.trace] == list(range(r.iterations + 1))
    return r


@pytest.mark.parametrize(
    "which, text, message",
    [
        (solve, "log(x)", "the equations are not finite here"),
        (critical, "log(x)", "the value or its derivatives are not finite here"),
    ],
)
def test_a_start_where_it_is_not_finite_takes_no_step(which, text, message):
    r = _run(which, text, {"x": -1.0})
    assert (r.converged, r.iterations, r.message) == (False, 0, message)


@pytest.mark.parametrize(
    "which, text, start, steps, message",
    [
        # x**2 + 1 has no real root: Newton's steps shrink |F| to x = 0, where J = 0
        (solve, "x**2 + 1", 0.0, 0, "no step reduces the residual: stopped (no root nearby?)"),
        (solve, "x**2 + 1", 3.0, 16, "no step reduces the residual: stopped (no root nearby?)"),
        # x**3 + x has no stationary point: the gradient 3x**2 + 1 stops shrinking at x = 0
        (critical, "x**3 + x", 1.0, 2, "no step makes the gradient smaller: stopped"),
    ],
)
def test_where_no_step_is_smaller_it_stops_after_the_steps_it_took(
    which, text, start, steps, message
):
    r = _run(which, text, {"x": start})
    assert (r.converged, r.iterations, r.message) == (False, steps, message)


@pytest.mark.parametrize(
    "which, text, start",
    [(solve, "exp(x) - 5", 10.0), (critical, "x**4", 1.0)],
)
@pytest.mark.parametrize("max_iter", [1, 2, 3])
def test_max_iter_steps_are_taken_and_then_it_says_so(which, text, start, max_iter):
    r = _run(which, text, {"x": start}, max_iter=max_iter)
    assert (r.converged, r.iterations) == (False, max_iter)
    assert r.message == f"no convergence in {max_iter} iterations (max_iter)"


@pytest.mark.parametrize(
    "which, text, start, message",
    [(solve, "exp(x) - 5", 10.0, SOLVE), (critical, "x**4 - 4*x", 3.0, CRITICAL)],
)
def test_converging_counts_the_steps_to_the_root(which, text, start, message):
    r = _run(which, text, {"x": start})
    assert r.converged and r.message.startswith(message)
    assert 3 <= r.iterations < 100
    # one step fewer than it needed is not enough
    fewer = _run(which, text, {"x": start}, max_iter=r.iterations - 1)
    assert not fewer.converged and fewer.iterations == r.iterations - 1
