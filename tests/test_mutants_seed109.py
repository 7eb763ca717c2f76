"""Tests written from the survivors of ``bench/mutate.py`` seed 109 (bench/results/
mutate-seed109.json) in the op table, the batch engine, the simplifier, Taylor mode,
uncertainty and optimize.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from algebra
by hand, power series, the docs or the docstrings, never from the code under test.  The
survivors that no test can tell apart are in bench/mutate_equivalent.txt, with the reason.
"""

from __future__ import annotations

import pytest
from taylor_defers import bessel

from autograd_cli.core.symbolic import SimplifyBudgetExceeded
from autograd_cli.core.symbolic.algebra import simplify
from autograd_cli.core.taylor_mode import taylor_coefficients
from autograd_cli.grammar import parse

# ---- Taylor mode --------------------------------------------------------------------------


def test_taylor_mode_of_i0_and_i1_uses_the_modified_bessel_recurrence():
    """kills core/ops/special.py:230: f, pm = (special.jv, -1) if name[0] == "j" else
    (special.iv, 1) -> (special.iv, 0).

    The derivatives of I_v are 2^-m sum_k C(m, k) I_(v-m+2k) (all signs +): I0' = I1,
    I0'' = I1' = I0 - I1/x, I0''' = 3 I1 - I0 at x = 1; I1' = I0 - I1/x, I1'' = I1 - I0/x +
    2 I1/x**2, so at x = 1 the series of i1 is I1, I0 - I1, (3 I1 - I0)/2.  The mutant kept
    only the k = 0 term (0**0 = 1, 0**k = 0): I0' came out as I_-1/2 = I1/2."""
    pytest.importorskip("scipy.special")
    i0, i1 = bessel(0, 1.0, 1), bessel(1, 1.0, 1)
    got = taylor_coefficients(parse("i0(x)"), {"x": 1.0}, "x", 3)
    assert got == pytest.approx([i0, i1, (i0 - i1) / 2, (3 * i1 - i0) / 6], rel=1e-12)
    got = taylor_coefficients(parse("i1(x)"), {"x": 1.0}, "x", 2)
    assert got == pytest.approx([i1, i0 - i1, (3 * i1 - i0) / 2], rel=1e-12)


def test_an_incomplete_gamma_at_zero_in_a_branch_not_taken_leaves_the_series_alone(cli):
    """kills core/taylor_mode.py:816: if not 0 < u0 < (math.inf if b is None else 1): ->
    if not 0 <= u0 < (math.inf if b is None else 1):.

    gammainc(2, 0*x) (and gammaincc, betainc) has its argument at 0, the end of its domain,
    where its derivative is not finite: a soft poison, which the branch where does not take
    (or a factor 0) absorbs, as the engine's zero cotangent does (taylor_mode's docstring).  So
    taylor of where(x > 1, gammainc(2, 0*x), f) at x = 0.3 is Taylor mode's series of f, the
    same numbers as taylor of f itself.  The mutant let u_0 = 0 through into log(u), whose
    division by u_0 made a hard poison: the whole series fell back to repeated
    differentiation, whose coefficients differ from Taylor mode's in the last digits."""
    pytest.importorskip("scipy.special")
    f = "exp(sin(x))"

    def series(expr):
        r = cli("taylor", expr, "--x", "0.3", "--order", "12", "--json")
        assert r.code == 0, r.out
        return r.json["coefficients"]

    plain = series(f)
    for dead in ("gammainc(2, 0*x)", "gammaincc(2, 0*x)", "betainc(2, 3, 0*x)"):
        assert series(f"where(x > 1, {dead}, {f})") == plain, dead
        assert series(f"{f} + 0*{dead}") == plain, dead


# ---- the simplifier -----------------------------------------------------------------------


def test_a_symbolic_power_sorts_with_its_bases_degree(cli):
    """kills core/symbolic/algebra.py:412: degree += b.degree * (float(e.data) if e.kind == NUM
    else 1.0) -> ... else 0.0.

    A derivative prints its terms in descending degree (core/symbolic/__init__.py), a power
    x**y with a symbolic exponent counted as degree 1 (x's), so it leads x**(1/2) (degree
    1/2) and a named constant (degree 0).  The mutant gave x**y degree 0: it printed
    "x**(1/2) + x**y" and, tied with pi, sorted by text, "pi + x**y"."""
    r = cli("diff", "w*x**y + w*x**0.5", "--wrt", "w", "--json")
    assert r.json["derivative"] == "x**y + x**(1/2)"
    r = cli("diff", "w*x**y + w*pi", "--wrt", "w", "--json")
    assert r.json["derivative"] == "x**y + pi"


def test_a_function_application_costs_its_operand_and_itself_in_the_step_budget():
    """kills core/symbolic/algebra.py:468: self.spend(len(args) + 1) -> self.spend(len(args) + 0).

    Every constructor charges the operands it touches plus the node it builds (x + y costs 3,
    x + y + z 4), so a chain of ten functions sin(sin(...(x))) costs 20 steps: a budget of 20
    simplifies it, 19 raises SimplifyBudgetExceeded.  The mutant charged a function only its
    operand (10 steps), so a chain of calls never reached its budget as fast as sums."""
    chain = parse("sin(" * 10 + "x" + ")" * 10).output
    assert simplify(chain, budget=20).op == "sin"
    with pytest.raises(SimplifyBudgetExceeded):
        simplify(chain, budget=19)


# ---- optimize -----------------------------------------------------------------------------


def _zeros(n: int) -> str:
    return "[" + ",".join(["0"] * n) + "]"


def test_bfgs_checks_the_second_order_condition_for_1000_varied_entries_at_most(cli):
    """kills core/optimize.py:396: SECOND_ORDER_MAX = 1000 -> 1001.

    sum(x**2) - 2*x[0]**2 has a saddle at 0 (Hessian diag(-2, 2, ..., 2)), where bfgs starts
    with a zero gradient.  With 1000 entries the exact Hessian is checked: not a minimum, a
    saddle, exit 1.  Past 1000 (SECOND_ORDER_MAX, "this many varied entries at most") bfgs
    skips the dense Hessian and reports the zero gradient as converged; the mutant checked
    1001 entries too."""
    expr = "sum(x**2) - 2*x[0]**2"
    r = cli("minimize", expr, "--x", _zeros(1000), "--method", "bfgs", "--json")
    assert r.code == 1 and r.json["converged"] is False
    assert "saddle" in r.json["message"]
    r = cli("minimize", expr, "--x", _zeros(1001), "--method", "bfgs", "--json")
    assert r.code == 0 and r.json["converged"] is True
    assert r.json["message"] == "the gradient is zero (to --gtol)"


def test_newton_takes_a_gradient_step_where_its_step_overflows(cli):
    """kills core/optimize.py:575: return step if np.isfinite(step).all() else -g -> return step.

    x + exp(-x) at x = 740: the gradient is 1 - e**-740 = 1.0 and the Hessian e**-740 (about
    4e-322, subnormal but positive, so Cholesky succeeds), so the Newton step -g/H overflows
    to -inf.  minimize falls back to the steepest-descent step (the docs: "a gradient step
    where the Hessian is not positive definite"), which lowers the value from 740 to about 739
    in one iteration.  The mutant took the infinite step: every trial point was -inf (value
    nan), and the line search stopped at the start with no lower value."""
    r = cli("minimize", "x + exp(-x)", "--x", "740", "--max-iter", "1", "--json")
    assert r.json["iterations"] == 1
    assert r.json["value"] < 740.0
    assert r.json["x"]["x"] < 740.0


def test_solves_jacobian_is_sparse_past_a_million_entries_of_a_wide_system(cli):
    """kills core/optimize.py:739: if not isinstance(J, np.ndarray) and J.shape[0] * J.shape[1]
    <= DENSE_JACOBIAN_MAX: -> J.shape[0] * J.shape[0].

    docs/choices.md: solve's grad "stays SPEC's dense array up to 10^6 entries and is SPEC's
    sparse COO object past that".  x[:1000] - 1 in 1001 unknowns (sparse steps from 500) has
    a 1000 x 1001 Jacobian, 1,001,000 entries: COO, with shape [1000, 1001] and the 1000 ones
    of the identity block.  The mutant counted 1000 * 1000 = 10^6 entries and wrote it dense."""
    pytest.importorskip("scipy.sparse")
    r = cli("solve", "x[:1000] - 1", "--x", _zeros(1001), "--json")
    assert r.code == 0 and r.json["converged"] is True
    grad = r.json["grad"]["x"]
    assert isinstance(grad, dict) and grad["shape"] == [1000, 1001]
    assert grad["rows"] == list(range(1000)) and grad["cols"] == list(range(1000))
    assert grad["values"] == [1.0] * 1000


# ---- uncertainty: a product bug seen while arguing a survivor equivalent ---------------------


def test_propagate_with_an_overflowing_variance_and_correlations_is_no_internal_error(cli):
    """A product bug seen while arguing core/uncertainty.py:152 (max(1.0, ...) -> max(...,
    1.0)) equivalent: 1e200**2 overflows to an infinite variance, a correlation of 0 made
    its covariance 0 * inf = nan, and the positive-semidefinite check's eigvalsh raised
    (an internal error).  A correlation of 0 is no covariance; an infinite variance skips
    the check (it has no eigenvalues), and the answer is the uncorrelated one: an infinite
    uncertainty, y's and z's contributions 1 each."""
    argv = ["propagate", "x+y+z", "--x", "1+-1e200", "--y", "1+-1", "--z", "2+-1", "--json"]
    plain = cli(*argv)
    r = cli(*argv, "--corr", "x,y=0", "--corr", "y,z=0.5")
    assert r.code == 0 == plain.code, r.out
    assert r.json["uncertainty"] == "inf" == plain.json["uncertainty"]
    assert r.json["budget"] == plain.json["budget"]
    assert r.json["budget"]["y"]["contribution"] == 1.0
