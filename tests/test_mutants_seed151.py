"""Tests written from the survivors of ``bench/mutate.py`` seed 151 (bench/results/
mutate-seed151.json), an untuned seed measured after seeds 137, 139 and 149.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from algebra
by hand, never from the code under test.  The Dask survivor's test is in
test_mutants_seed151_dask.py (skipped where Dask is not installed).

Judged equivalent (bench/mutate_equivalent.txt): taylor_mode.py:396 ``for i in (1, 1)``
(mul's shortcut for a constant factor on the left only: on the right the Cauchy product
gives the same series, its zeros past the degree made +0.0, and a factor 0 beside a poisoned
series hands the case to the engine, whose numbers are the same), batch.py:338 ``slots=False`` (a ``_V`` is
given no attribute but its fields: memory only), optimize.py:733 ``or norm == 0`` dropped (a
tolerance is a finite number above 0, checked on entry, so a zero residual is always within
it: ``tol * (1 + max|theta|)`` is above 0 or inf).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from autograd_cli.core.optimize import critical, minimize, solve
from autograd_cli.core.taylor_mode import taylor_coefficients
from autograd_cli.core.uncertainty import propagate
from autograd_cli.core.values import UsageError
from autograd_cli.grammar import parse


@pytest.mark.parametrize("text", ["exp(100*x)*0", "0*exp(100*x)"])
def test_a_factor_zero_absorbs_a_series_that_overflows_on_either_side(text, cli):
    """exp(100 x) at 7: c_k = e^700 100^k / k!, which is inf from k = 2 on.  Times a constant
    0 the function is 0: its coefficients are 0, 0, 0, 0 and so are the engine's derivatives
    (a zero partial passes nothing on, not inf * 0).  Written for core/taylor_mode.py:396
    (mul's shortcut for a constant factor taken on the left only), which it does not kill:
    Taylor mode hands this case to the engine either way (the overflow poisons exp's
    series); that mutant is judged equivalent (bench/mutate_equivalent.txt)."""
    r = cli("taylor", text, "--x", "7", "--order", "3", "--json")
    assert r.code == 0, r.out
    assert r.json["coefficients"] == [0.0, 0.0, 0.0, 0.0]
    r = cli("grad", text, "--x", "7", "--order", "3", "--json")
    assert r.code == 0 and r.json["grad"]["x"] == 0.0, r.out


@pytest.mark.parametrize(
    "text, want",
    [
        ("(-x)*2", [-2.0, -2.0, 0.0, 0.0]),
        ("2-x", [1.0, -1.0, 0.0, 0.0]),
        ("-(x*x)", [-1.0, -2.0, -1.0, 0.0]),
    ],
)
def test_a_polynomial_s_coefficients_past_its_degree_are_plus_zero(text, want, cli):
    """Past its degree a polynomial's Taylor coefficients are +0.0, as the engine's
    derivatives there are (their graph no longer reaches x: zeros), not the -0.0 that
    negating a 0.0 gives: grad "2-x" --order 2 printed -0.0 once grad --order went through
    Taylor mode (seed 151's mul survivor showed it)."""
    r = cli("taylor", text, "--x", "1", "--order", "3", "--json")
    assert r.code == 0, r.out
    got = r.json["coefficients"]
    assert got == want
    assert [math.copysign(1.0, c) for c in got] == [math.copysign(1.0, c) for c in want]
    r = cli("grad", text, "--x", "1", "--order", "3", "--json")
    assert r.code == 0, r.out
    assert math.copysign(1.0, r.json["grad"]["x"]) == 1.0 and r.json["grad"]["x"] == 0.0


def test_tan_is_not_near_its_pole_where_only_its_argument_grows_fast():
    """kills core/taylor_mode.py:548: _near_singularity(r.s(0), abs(cos(u_0)), ...) ->
    abs(cos(u_1)).

    tan(u), u = (pi/2) x + 1e100 x^2, at x = 0: u = 0, a distance of pi/2 from tan's poles,
    so Taylor mode gives the series (its derivatives up to order 5 are about 1e202, far from
    overflow).  By hand from tan(u) = u + u^3/3 + 2u^5/15 + ...: c1 = a, c2 = b,
    c3 = a^3/3, c4 = a^2 b, c5 = a b^2 + 2a^5/15 (a = pi/2, b = 1e100).  The mutant measured
    the distance at cos(u_1) = cos(pi/2), about 6e-17, and refused: "tan near a singular
    point"."""
    a, b = 1.5707963267948966, 1e100
    got = taylor_coefficients(parse(f"tan({a!r}*x + 1e100*x**2)"), {"x": 0.0}, "x", 5)
    want = [0.0, a, b, a**3 / 3, a * a * b, a * b * b + 2 * a**5 / 15]
    assert got == pytest.approx(want, rel=1e-14, abs=0.0)


def test_propagate_second_order_over_inputs_of_different_sizes():
    """kills core/uncertainty.py:242: H[oi:oi+na, oj:oj+nb] = ...reshape(na, nb) ->
    reshape(nb, na).

    f = a x0 x1 with a scalar a (u 0.1) and a vector x of size 2 (u 0.2, 0.3): the Hessian
    blocks are 1x1, 1x2, 2x1, 2x2.  Its nonzero entries are d2f/da dx0 = x1 = 3,
    d2f/da dx1 = x0 = 1, d2f/dx0 dx1 = a = 2, so the second-order term 1/2 tr(H S H S) with
    S = diag(u^2) is the sum over pairs of H_ij^2 u_i^2 u_j^2:
    9 * 0.01 * 0.04 + 1 * 0.01 * 0.09 + 4 * 0.04 * 0.09 = 0.0189.  The first-order
    uncertainty is sqrt((x0 x1 u_a)^2 + (a x1 u_x0)^2 + (a x0 u_x1)^2) = sqrt(0.09 + 1.44 +
    0.36).  The mutant's 1x2 block was reshaped 2x1 and did not fit (an internal error)."""
    r = propagate(parse("a*x[0]*x[1]"), {"a": 2.0, "x": [1.0, 3.0]}, {"a": 0.1, "x": [0.2, 0.3]})
    assert r.value == 6.0
    assert r.uncertainty == pytest.approx(math.sqrt(0.09 + 1.44 + 0.36), rel=1e-14)
    assert r.second_order == pytest.approx(0.0189, rel=1e-12)


@pytest.mark.parametrize("method", ["newton", "bfgs", "gd"])
def test_minimize_takes_a_step_that_rounding_hides_from_the_value(method):
    """kills core/optimize.py:606: f_trial <= f + c1 * g.(trial - theta) -> f_trial < ...

    1e20 + x**2 from x = 1: the value is 1e20 at every x near 0 (1 is below its rounding),
    but the gradient 2x is not.  The Armijo test accepts a step that does not raise the
    value (<=, as in Nocedal & Wright), so the step to 0 is taken and the gradient is zero
    there.  With < nothing was ever accepted: "the line search found no lower value" at
    x = 1, not converged.  gd's full step goes past 0 to -1, where the value is 1e20 too:
    it is refused because the gradients at both ends (2 and -2) say the value did not fall
    (it went from 1 to -1 and back for all 10,000 iterations), and the half step to 0 is
    taken."""
    r = minimize(parse("1e20 + x**2"), {"x": 1.0}, method=method)
    assert r.converged, r.message
    assert abs(r.x["x"]) < 1e-15 and r.iterations == 1


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda p: solve(p, {"x": 0.0}, tol=math.nan), "tol must be a finite number above 0"),
        (lambda p: solve(p, {"x": 0.0}, tol=0.0), "tol must be a finite number above 0"),
        (lambda p: minimize(p, {"x": 0.0}, xtol=-1.0), "xtol must be a finite number above 0"),
        (lambda p: minimize(p, {"x": 0.0}, gtol="small"), "gtol must be a finite number"),
        (lambda p: critical(p, {"x": 0.0}, gtol=math.inf), "gtol must be a finite number"),
        (lambda p: critical(p, {"x": 0.0}, max_iter=-1), "max_iter must be 0 to 1,000,000"),
        (lambda p: solve(p, {"x": 0.0}, max_iter=2.5), "max_iter must be 0 to 1,000,000"),
    ],
)
def test_the_library_refuses_a_tolerance_or_max_iter_it_cannot_use(call, message):
    """The library, not only the command line, refuses its settings in its own names (a nan
    tolerance was taken: solve stopped "converged" only by its zero-residual escape, minimize
    ran every iteration), and the command line spells them as its flags (--tol)."""
    with pytest.raises(UsageError, match=message):
        call(parse("(x - 1)**2"))


def test_the_command_line_spells_the_library_settings_as_flags(cli):
    r = cli("solve", "x - 1", "--x", "0", "--tol", "nan", "--json")
    assert r.code == 2
    assert r.json["error"]["message"] == "--tol must be a finite number above 0, not nan"
    r = cli("minimize", "x**2", "--x", "1", "--max-iter", "0", "--json")
    assert r.code == 2
    assert r.json["error"]["message"] == "--max-iter must be 1 to 1,000,000, not 0"


def test_a_sparse_hessian_with_no_nonzero_is_empty(cli):
    """kills core/sparsity.py:381: return np.zeros(n, dtype=np.int64) -> return n.

    sum(x) is linear: its Hessian's pattern has no nonzero.  Its columns still get a color
    each (all one color: no two share a row), and the sparse Hessian is the empty COO
    matrix.  The mutant's band coloring of an empty pattern was an int (an internal
    error)."""
    r = cli("hessian", "sum(x)", "--x", "[1, 2, 3]", "--sparse", "--json")
    assert r.code == 0, r.out
    block = r.json["hessian"]["x"]["x"]
    assert (block["shape"], block["rows"], block["cols"], block["values"]) == ([3, 3], [], [], [])


def test_star_colored_says_no_to_a_two_colored_path_of_four():
    """kills core/sparsity.py:619: mirror = (keys[at] == mirrored) & (counts[at] == 1) -> |.

    The path 0-1-2-3 (a tridiagonal symmetric pattern) colored 0, 1, 0, 1: neighbours
    differ, but the path of four is two-colored, so it is not a star coloring: the nonzero
    (1, 2) is not alone of its color in row 1 (columns 0 and 2 are both color 0) nor is its
    mirror (2, 1) in row 2 (columns 1 and 3 are both color 1).  Colored 0, 1, 2, 0 it is one.
    The mutant took a mirror found with a color repeated as alone."""
    sp = pytest.importorskip("scipy.sparse")
    from autograd_cli.core.sparsity import star_colored

    path = sp.csr_matrix(np.eye(4) + np.eye(4, k=1) + np.eye(4, k=-1))
    assert star_colored(path, np.array([0, 1, 0, 1])) is False
    assert star_colored(path, np.array([0, 1, 2, 0])) is True


def test_the_compressed_jacobian_is_checked_against_the_memory_limit_before_it_is_made(cli):
    """kills core/sparsity.py:695: limits.check(k * width, ...) -> limits.check(k / width, ...).

    x[1:]*x[:-1] over 1,000 entries: a two-band Jacobian, 2 colors of 999 rows, so the
    compressed Jacobian is 2 x 999 numbers (15.6 KiB); every other array is about 1,000
    (7.8 KiB).  Under a limit of 12,000 bytes the refusal names the compressed Jacobian,
    before it is made.  The mutant checked 2/999 numbers, made it, and the limit struck
    later at the batched product ("mul's result")."""
    x = str(list(range(1000)))
    r = cli("jacobian", "x[1:]*x[:-1]", "--x", x, "--sparse", "--max-memory", "12000", "--json")
    assert r.code == 1, r.out
    assert r.json["error"]["kind"] == "limit"
    assert r.json["error"]["message"].startswith(
        "the compressed Jacobian would take 15.6 KiB (1,998 numbers)"
    )
