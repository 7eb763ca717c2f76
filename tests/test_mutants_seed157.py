"""Tests written from the survivors of ``bench/mutate.py`` seed 157 (bench/results/
mutate-seed157.json), an untuned seed measured after seed 151's tests went in.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from algebra
by hand or the docs, never from the code under test.  The Dask survivor's test is in
test_mutants_seed157_dask.py.

Judged equivalent (bench/mutate_equivalent.txt): batch.py:265 (an operand that no row
varies padded with a leading axis of 1, which broadcasts away; it never needs a gradient),
taylor_mode.py:620 (a longer numerator series than the quotient reads), uncertainty.py:279
(the Monte Carlo draws' per-row domain warnings computed and dropped: speed only),
optimize.py:948 (an eigenvalue of 0 is "degenerate" before the test for a maximum).
"""

from __future__ import annotations

import numpy as np
import pytest

from autograd_cli.core import limits
from autograd_cli.core.batch import evaluate_batch
from autograd_cli.core.errors import LimitError
from autograd_cli.core.optimize import solve
from autograd_cli.core.taylor_mode import NoTaylorMode, taylor_coefficients
from autograd_cli.grammar import parse


def test_a_linear_map_through_a_constant_matrix_has_an_empty_hessian(cli):
    """kills core/sparsity.py:518: live = tuple(bool(f and p.nnz) ...) -> bool(f or p.nnz).

    sum(A @ x) with a constant A is linear in x: its Hessian's pattern has no nonzero, so the
    sparse Hessian is the empty COO matrix.  The mutant took the constant A for a live
    argument, so matmul was not linear in its live arguments, and the pattern was dense
    (four stored zeros)."""
    r = cli("hessian", "sum([[1,2],[3,4]] @ x)", "--x", "[1, 2]", "--sparse", "--json")
    assert r.code == 0, r.out
    block = r.json["hessian"]["x"]["x"]
    assert (block["rows"], block["cols"], block["values"]) == ([], [], [])
    assert r.json["grad"]["x"] == [4.0, 6.0]  # the column sums of A


def test_a_square_of_three_variables_and_a_constant_stays_factored(cli):
    """kills core/symbolic/algebra.py:241: len(b.args) + (b.data[0] != 0) <= 3 -> ... - ...

    diff expands a power of a sum of at most 3 terms, the constant counted
    (docs/commands.md, diff): x*(x+y+z)**2 expands, x*(x+y+z+1)**2 (four terms) keeps its
    factor.  The mutant subtracted the constant and expanded the four-term sum into ten
    terms."""
    r = cli("diff", "x*(x+y+z+1)**2", "--wrt", "x", "--json")
    assert r.json["derivative"] == "2*x*(x + y + z + 1) + (x + y + z + 1)**2"
    r = cli("diff", "x*(x+y+z)**2", "--wrt", "x", "--json")
    assert r.json["derivative"] == "4*x*y + 4*x*z + 3*x**2 + 2*y*z + y**2 + z**2"


def test_a_batched_vector_times_a_matrix_is_checked_against_the_memory_limit():
    """kills core/batch.py:304: sa[:-1] + (1, sa[-1]) -> sa[:-1] + (0, sa[-1]).

    100 rows of x (a vector of 2) times a constant 2x50 matrix: the result is 100 x 50 =
    5,000 numbers (39.1 KiB), over a limit of 20,000 bytes, refused before it is made.  The
    mutant's size rule took each row's vector for a 0 x 2 matrix: a result of no numbers,
    and the 39 KiB were made."""
    program = parse(f"x @ {[[1.0] * 50, [2.0] * 50]}")
    x = np.arange(200.0).reshape(100, 2)
    with limits.using(20_000), pytest.raises(LimitError, match=r"39\.1 KiB \(5,000 numbers\)"):
        evaluate_batch(program, {"x": x}, 100)
    with limits.using(50_000):
        got = evaluate_batch(program, {"x": x}, 100).value
    assert got.shape == (100, 50) and got[3, 0] == 6.0 + 7.0 * 2.0


def test_batched_gradients_are_arrays_of_the_callers_own():
    """kills core/batch.py:817: if not g.flags.writeable or ... -> if g.flags.writeable or ...

    x + y's gradients are ones, made from a read-only broadcast of one 1 (no memory); the
    caller gets arrays of its own, which it may write to.  The mutant handed back the
    read-only broadcast."""
    x, y = np.arange(3.0), np.arange(3.0) + 1
    r = evaluate_batch(parse("x + y"), {"x": x, "y": y}, 3, grad=True)
    for g in r.grad.values():
        assert g.flags.writeable and g.tolist() == [1.0, 1.0, 1.0]
        g[0] = 5.0  # the caller's to change
    assert x.tolist() == [0.0, 1.0, 2.0] and y.tolist() == [1.0, 2.0, 3.0]


def test_solve_is_converged_where_the_residual_is_exactly_the_tolerance(cli):
    """kills core/optimize.py:744: norm <= tol * (1 + max|theta|) -> norm < ...

    solve stops where ||F|| <= tol * (1 + max|x|) (docs/analyses.md), the equality
    included, as critical's gtol is.  x + 0.5 from 0 with --tol 0.5: ||F|| = 0.5 =
    0.5 * (1 + 0), converged with no step taken.  The mutant took a step to -0.5."""
    r = solve(parse("x + 0.5"), {"x": 0.0}, tol=0.5)
    assert (r.converged, r.iterations, r.x["x"]) == (True, 0, 0.0)
    r = cli("solve", "x + 0.5", "--x", "0", "--tol", "0.5", "--json")
    assert r.code == 0 and r.json["iterations"] == 0 and r.json["x"] == {"x": 0.0}


def test_asin_next_to_1_defers_where_the_engines_derivatives_would_overflow():
    """kills core/taylor_mode.py:586: _near_singularity(u, 1 - |u0|, 1.0, name) -> pass.

    asin at 1 - 2^-53, a distance rho = 2^-53 from its branch point: its m-th derivative is
    about m! / rho^m, which with 18! passes 1e300 (ln 18! + 18 ln 2^53 = 697 > ln 1e300 =
    690.8), so Taylor mode refuses at order 18 and the engine's numbers are the answer; at
    order 17 (ln 17! + 17 ln 2^53 = 658) it gives the series.  The mutant skipped the check:
    its own coefficients at order 18 are still under the limit, so it answered."""
    program = parse("asin(x)")
    assert len(taylor_coefficients(program, {"x": 1 - 2**-53}, "x", 17)) == 18
    with pytest.raises(NoTaylorMode, match="^asin near a singular point"):
        taylor_coefficients(program, {"x": 1 - 2**-53}, "x", 18)


def test_the_singularity_check_reaches_order_170():
    """kills core/taylor_mode.py:221: n = min(len(u), _GUARDED_ORDER + 1) -> ... - 1.

    sqrt at 1.062, a distance 1.062 from its branch point, scale sqrt(1.062): the check's
    size ln k! - (k - 1/2) ln 1.062 is 686.2 at k = 168 (under ln 1e300 = 690.8: the series)
    and 696.4 at k = 170 (refused).  The mutant stopped the check at order 168."""
    program = parse("sqrt(x)")
    assert len(taylor_coefficients(program, {"x": 1.062}, "x", 168)) == 169
    with pytest.raises(NoTaylorMode, match="^sqrt near a singular point"):
        taylor_coefficients(program, {"x": 1.062}, "x", 170)
