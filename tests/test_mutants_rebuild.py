"""Tests for the survivors of the mutation sample run after the rebuild (issue 24, seed 101 at
5 mutants a target, on the new layout).  Each names the mutant it kills."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_cli.core import limits, tensor
from autograd_cli.core.errors import ShapeError
from autograd_cli.core.tensor import OPS, apply


def test_shapes_that_do_not_broadcast_are_a_shape_error_even_under_a_tiny_memory_limit():
    # kills core/ops/table.py:340 (broadcast_size): return 0 -> return 1.  Shapes that do not
    # broadcast make no result at all (0 numbers), so the memory limit has nothing to refuse
    # and the op says why the shapes do not fit; a result of 1 number (8 bytes) would be
    # over a 4-byte limit and answered as a limit error instead.
    with limits.using(4):
        with pytest.raises(ShapeError, match=r"shapes \(2,\), \(3,\) do not fit"):
            apply(OPS["add"], tensor(np.ones(2)), tensor(np.ones(3)))


def test_a_gradient_of_operands_of_one_shape_is_the_products_own_node():
    # kills core/ops/rules.py:86 (sum_to): `x is None or shapes agree` -> `and`: every
    # gradient would then pass through a SumToBackward0 node even when nothing is summed.
    # torch.autograd.grad(x * y, x, create_graph=True)[0].grad_fn is a MulBackward0 (y * 1).
    from autograd_cli.core import grad

    x = tensor(2.0, requires_grad=True)
    y = tensor(3.0, requires_grad=True)
    (gx,) = grad(x * y, x, create_graph=True)
    assert float(gx) == 3.0 and gx.grad_fn.name() == "MulBackward0"
    torch = pytest.importorskip("torch")
    a = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    b = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    (ga,) = torch.autograd.grad(a * b, a, create_graph=True)
    assert type(ga.grad_fn).__name__ == gx.grad_fn.name()


def test_propagate_refuses_fewer_than_two_monte_carlo_draws_itself():
    # kills core/uncertainty.py:232: the library's own check of mc (the command line checks
    # it earlier; a library caller reaches this one): one draw has no spread to report
    from autograd_cli.core.errors import LimitError
    from autograd_cli.core.uncertainty import propagate
    from autograd_cli.grammar import parse

    with pytest.raises(LimitError, match="mc takes 2 to"):
        propagate(parse("2*x"), {"x": 1.0}, {"x": 0.1}, mc=1)


def test_two_monte_carlo_draws_give_a_mean_and_a_spread():
    # kills core/uncertainty.py:275: `y.size < 2` -> `<= 2`.  Two finite draws have a mean
    # and a sample standard deviation (ddof=1), so nothing is nan; of 2*x the draws are
    # 2*(1 + 0.1 z) and their mean lies within a few u of 2.
    from autograd_cli.core.uncertainty import propagate
    from autograd_cli.grammar import parse

    mc = propagate(parse("2*x"), {"x": 1.0}, {"x": 0.1}, mc=2, seed=1).mc
    assert mc["draws"] == 2
    assert np.isfinite([mc["mean"], mc["std"], *mc["interval"]]).all()
    assert abs(mc["mean"] - 2.0) < 1.0 and mc["std"] > 0


def test_a_minimum_at_the_upper_bound_is_a_minimum():
    # kills core/optimize.py:365: `theta < box[1]` -> `<=`: a variable held at its upper
    # bound is not free, so the second-order check does not look along it.  -(x**2) on
    # [-1, 2] falls all the way to x = 2 (value -4), where it is concave: a maximum of the
    # free function, but the minimum on the box.
    from autograd_cli.core.optimize import minimize
    from autograd_cli.grammar import parse

    r = minimize(parse("-(x**2)"), {"x": 0.5}, bounds={"x": (-1.0, 2.0)})
    assert r.converged and r.x["x"] == 2.0 and r.value == -4.0


@pytest.mark.parametrize(
    ("expr", "x", "order"),
    [("x**(x+1)", 2.0, 3), ("x**(2*x-1)", 2.0, 3), ("x**(x+2)", 1.0, 3), ("x**(x+1)", 2.0, 4)],
)
def test_taylor_coefficients_of_a_variable_power_are_the_engines_derivatives(expr, x, order):
    # for core/taylor_mode.py:448 (`0 <= b0 <= n` -> `< n`): where the exponent is a whole
    # number up to the order, Taylor mode hands the point to the engine; c[k] is f^(k)/k! of
    # the engine's own derivatives (taylor's contract), to the last bit
    import math

    import autograd_cli as ag
    from autograd_cli.core.taylor import taylor
    from autograd_cli.grammar import parse

    program = parse(expr)
    c = taylor(program, {"x": x}, order=order).coefficients
    engine = [
        float(ag.grad(program, {"x": x}, order=k).grad["x"]) / math.factorial(k)
        for k in range(1, order + 1)
    ]
    assert c[1:] == engine


def test_solve_with_no_iterations_allowed_reports_none_taken():
    # kills core/optimize.py:585 (seed 202): `it = 0` -> `it = 1` before the loop: with
    # max_iter=0 the loop never runs and no Newton step is taken, so iterations is 0
    from autograd_cli.core.optimize import solve
    from autograd_cli.grammar import parse

    r = solve(parse("x - 1"), {"x": 3.0}, max_iter=0)
    assert (r.iterations, r.converged, r.x["x"]) == (0, False, 3.0)


def test_critical_stops_where_the_gradient_is_exactly_gtol():
    # kills core/optimize.py:698 (seed 202): `gnorm <= gtol` -> `<`: converged means the
    # largest partial is at most gtol (SPEC's and the help's "to --gtol").  At x = 0.5 the
    # gradient of x**2 is exactly 1.0: with gtol=1.0 that is the answer, no step taken.
    from autograd_cli.core.optimize import critical
    from autograd_cli.grammar import parse

    r = critical(parse("x**2"), {"x": 0.5}, gtol=1.0)
    assert (r.converged, r.iterations, r.x["x"]) == (True, 0, 0.5)


def test_a_loose_gtol_leaves_the_kind_unsure_where_the_third_derivative_matters():
    # kills core/optimize.py:458 (seed 202): `slope == 0` -> `== 1`.  x**3/3 at x = 1 with
    # gtol=1: the gradient is 1 (accepted), f'' = 2 and f''' = 2.  The stationary point the
    # quadratic model puts 0.5 away is where the curvature has changed by 1, half of itself:
    # the Hessian cannot say minimum, and the kind is degenerate (the mutant skipped the
    # third derivative exactly where the slope is 1 and said minimum).
    from autograd_cli.core.optimize import critical
    from autograd_cli.grammar import parse

    r = critical(parse("x**3/3"), {"x": 1.0}, gtol=1.0)
    assert (r.converged, r.iterations, r.kind) == (True, 0, "degenerate")
