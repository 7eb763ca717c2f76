"""Tests written from the survivors of ``bench/mutate.py`` seed 103 (bench/results/
mutate-seed103.json) in the core modules and their commands: the op table, the symbolic
differentiator, Taylor mode, uncertainty, optimize and sparsity.  (The op table's three
survivors are equivalent: bench/mutate_equivalent.txt.)

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from algebra
by hand, the docs or the docstrings, never from the code under test.  The survivors that no
test can tell apart are in bench/mutate_equivalent.txt, with the reason.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from autograd_cli.core.errors import NonScalarOutputError
from autograd_cli.core.optimize import critical, minimize, solve
from autograd_cli.core.taylor_mode import taylor_coefficients
from autograd_cli.grammar import parse

# ---- the symbolic differentiator ----------------------------------------------------------


def test_a_product_of_two_floats_that_is_exact_stays_exact_in_diff(cli):
    """kills core/symbolic/numbers.py:62: return _nice(float(a) * float(b)) ->
    return float(a) * float(b).

    1e300 and 1e-300 are floats to the simplifier (too long to be short exact numbers), but
    their product is 1.0 exactly, which is a short exact number: 1.  So 1e300*(1e-300*x**2 + y)
    is x**2 + 1e300*y, and a third of its x-derivative is 2*x/3 exactly.  The mutant kept the
    1 a float, and 1.0/3 printed 0.6666666666666666*x."""
    r = cli("diff", "1/3*(1e300*(1e-300*x**2 + y))", "--wrt", "x", "--json")
    assert r.code == 0, r.out
    assert r.json["derivative"] == "2*x/3"


def test_a_coefficient_goes_into_a_where_whose_taken_branch_is_zero(cli):
    """kills core/symbolic/algebra.py:426: (_is_num(b.args[1], 0) or _is_num(b.args[2], 0)) ->
    (_is_num(b.args[1], 1) or ...).

    The simplifier writes k*where(c, 0, q) as where(c, 0, k*q), as it does k*where(c, p, 0)
    (docstring of _into_where: so where-terms can merge in sums).  d/dx of
    x*where(x > 0, 0, x**2) = where(x > 0, 0, x**3) is where(x > 0, 0, 3*x**2); the mutant only
    pushed the factor in when the taken branch was 1 and printed
    2*x*where(x > 0, 0, x) + where(x > 0, 0, x**2)."""
    r = cli("diff", "x*where(x > 0, 0, x**2)", "--json")
    assert r.code == 0, r.out
    assert r.json["derivative"] == "where(x > 0, 0, 3*x**2)"


@pytest.mark.parametrize("length, noted", [(10_000, False), (10_001, True)])
def test_diff_notes_a_derivative_longer_than_10000_characters(cli, length, noted):
    """kills core/symbolic/command.py:246: if len(text) > LARGE_TEXT -> >=.

    A derivative printed longer than 10,000 characters gets a note with its size; one of
    exactly 10,000 does not.  d/dx of x*vvv...v is the variable vvv...v, as long as its name."""
    name = "v" * length
    r = cli("diff", f"x*{name}", "--wrt", "x", "--json")
    assert r.code == 0, r.err
    assert r.json["derivative"] == name
    if noted:
        assert r.json["notes"] == [f"d/dx: a large result: {length:,} characters, 1 nodes"]
    else:
        assert "notes" not in r.json


# ---- Taylor mode --------------------------------------------------------------------------


def test_taylor_mode_guards_orders_up_to_170_only():
    """kills core/taylor_mode.py:194: _GUARDED_ORDER = 170 -> 171.

    The overflow guards look at the argument's derivatives j! * |u_j| up to order 170: 171!
    is not a float (inf).  log(2 + exp(x)) at 0 has an argument with u_j = 1/j! (j >= 1), far
    from log's pole, and Taylor mode gives its 172 coefficients.  The mutant took order 171
    into the guard, where inf * u_171 made the argument grow infinitely fast, and refused it
    as 'near a singular point'."""
    cs = taylor_coefficients(parse("log(2 + exp(x))"), {"x": 0.0}, "x", 171)
    assert len(cs) == 172
    assert cs[:2] == [pytest.approx(np.log(3.0), rel=1e-15), pytest.approx(1 / 3, rel=1e-15)]
    # c_2 = (d/dx)^2 / 2! = (e^x (2 + e^x) - e^2x) / (2 + e^x)^2 / 2 = 2/9 / 2 at 0
    assert cs[2] == pytest.approx(1 / 9, rel=1e-14)
    assert all(np.isfinite(cs)) and abs(cs[-1]) < 1e-80


def test_taylor_mode_takes_log1p_of_a_huge_argument():
    """kills core/taylor_mode.py:479: _partial(1.0 / base[0], "log1p") -> 1.0 * base[0].

    log1p's local derivative is 1/(1 + u); Taylor mode defers to the engine only where that
    is too large (1 + u near 0).  At x = 1e301 it is 1e-301, harmless: the coefficients are
    log1p(1e301), 1/(1 + 1e301) and -1/(2 (1 + 1e301)**2) (-0.0 after underflow).  The mutant
    checked 1 + u itself, 1e301 > 1e300, and deferred."""
    cs = taylor_coefficients(parse("log1p(x)"), {"x": 1e301}, "x", 2)
    assert cs[0] == pytest.approx(np.log1p(1e301), rel=1e-15)
    assert cs[1] == pytest.approx(1e-301, rel=1e-14)
    assert cs[2] == 0.0


# ---- uncertainty --------------------------------------------------------------------------


@pytest.mark.parametrize("r, warned", [("0", False), ("1", True), ("0.5", True)])
def test_propagate_warns_of_correlated_inputs_only_when_they_are(cli, r, warned):
    """kills core/uncertainty.py:82: any(r != 0 ...) -> any(r != 1 ...).

    --corr a,b=R with R != 0 makes the shares leave out the correlation terms, and propagate
    says so; R = 0 is no correlation (no warning).  For a + b with u = 0.1 each the
    uncertainty is sqrt(0.02 + 0.02 R).  The mutant warned at R = 0 and was silent at R = 1."""
    out = cli("propagate", "a+b", "--a", "1+-0.1", "--b", "2+-0.1", "--corr", f"a,b={r}", "--json")
    assert out.code == 0, out.err
    doc = out.json
    assert doc["uncertainty"] == pytest.approx(np.sqrt(0.02 + 0.02 * float(r)), rel=1e-14)
    correlated = [w for w in doc.get("warnings", []) if "inputs are correlated" in w]
    assert bool(correlated) == warned, doc


# ---- optimize -----------------------------------------------------------------------------


@pytest.mark.parametrize("command, fn", [("minimize", minimize), ("critical", critical)])
def test_a_non_scalar_function_of_many_unknowns_is_refused_by_name(command, fn):
    """kills core/optimize.py:202: raise _non_scalar(what, e.details["shape"]) from None -> pass.

    From 500 unknowns the Hessian is sparse (issue 28), and a vector-valued function is
    refused there as with fewer: minimize and critical need a scalar output, and the error
    names the command.  The mutant swallowed the error and failed on an unset variable
    (UnboundLocalError: an internal error)."""
    with pytest.raises(NonScalarOutputError) as exc:
        fn(parse("x**2"), {"x": np.full(500, 1.0)})
    assert str(exc.value).startswith(f"{command} needs a scalar output, but it has shape (500,)")
    assert exc.value.details["shape"] == [500]


def test_a_step_that_changes_a_large_value_by_rounding_only_is_negligible():
    """kills core/optimize.py:386: abs(f - f_old) <= 1e-15 * (1 + abs(f)) -> 1e-15 / (...).

    The step stop is "moved the point by xtol (relative) or less and the value by rounding
    only", rounding relative to the value.  On x**2/2 + 10 from 1e-7 (xtol 1e-7) Newton's
    step lands on 0, having moved 1e-7 = xtol * (1 + 0), and the value fell from 10 + 5e-15
    to 10: a few units in the last place of 10, within 1e-15 * 11.  The mutant divided by
    1 + |f|, asking for a change below 1e-16, under one unit in the last place of 10, so it
    never took the stop for a value above 2."""
    r = minimize(parse("x**2/2 + 10"), {"x": 1e-7}, xtol=1e-7)
    assert r.x == {"x": 0.0} and r.value == 10.0
    assert (r.converged, r.iterations) == (True, 1)
    assert r.message == "the steps became negligible"


def test_a_zero_eigenvalue_with_a_slope_left_is_no_internal_error(cli):
    """kills core/optimize.py:470: if lam <= 0 or slope == 0 -> lam < 0.

    x**2 + 1e-12*y: the gradient in y is 1e-12, zero to --gtol, and the Hessian's eigenvalue
    along y exactly 0.  That direction's distance to the stationary point (slope/lambda) has
    no meaning there and is taken as 0; the check then steps 2e-6 along y and sees the value
    fall by rounding only.  The mutant divided by lambda**2 = 0: ZeroDivisionError, an
    internal error."""
    r = cli("minimize", "x**2 + 1e-12*y", "--x", "1", "--y", "1", "--json")
    assert r.code == 0, r.out
    doc = r.json
    assert doc["converged"] is True and doc["message"] == "the gradient is zero (to --gtol)"
    assert doc["x"]["x"] == 0.0 and doc["grad"]["y"] == 1e-12


ZERO = "1e-200*sin(1e200*x) - 1e-200*sin(1e200*x)"  # 0, whose third derivative is nan


def test_an_inflection_with_a_nan_third_derivative_is_no_minimum(cli):
    """kills core/optimize.py:473: the distance's 1 - r floored at 0.1 with r nan kept, and
    :func:`_kind`'s check that an eigenvalue is resolved taking nan for resolved.

    x**5 + ZERO is x**5 (the two terms are the same number): the same value, gradient and
    Hessian at every point Newton visits, so minimize must say what it says of x**5, an
    inflection, not a minimum; critical calls x**3 + ZERO degenerate, as x**3.  The engine's
    third derivative of the zero pair is inf - inf = nan.  max(1 - r, 0.1) kept that nan
    (max returns its first argument when the comparison is false), the probe stepped by nan
    and saw no fall: minimize said converged, critical "minimum"; a product bug found through
    the mutant max(0.1, 1 - r), which gave x**5's answer."""
    plain = cli("minimize", "x**5", "--x", "1", "--json")
    assert plain.code == 1 and "inflection" in plain.json["message"]
    r = cli("minimize", f"x**5 + {ZERO}", "--x", "1", "--json")
    assert r.json["x"] == plain.json["x"]
    assert r.json["converged"] is False and "inflection" in r.json["message"], r.out
    c = cli("critical", f"x**3 + {ZERO}", "--x", "1", "--json")
    assert (
        c.json["kind"] == "degenerate" == cli("critical", "x**3", "--x", "1", "--json").json["kind"]
    )


def test_critical_takes_the_third_derivative_of_a_variable_that_drops_out(cli):
    """kills core/optimize.py:530: zip(gs, vs) ... if gi is not None -> zip(vs, gs).

    D³f(v, v, v) is three reverse sweeps; a variable whose derivative no longer depends on
    anything (y in y*y after two sweeps) has no gradient (None) in the next one and adds
    nothing.  On x**3 + y*y that leaves x**3's 6 v_x**3, which makes Newton's last iterate
    near 0 unsure: critical calls the point degenerate (an inflection along x), minimize no
    minimum.  The mutant tested the directions, never None, multiplied by the missing
    gradient, got nan, and called the point a minimum."""
    r = cli("critical", "x**3 + y*y", "--x", "0.3", "--y", "0.2", "--json")
    assert r.code == 0, r.err
    assert r.json["kind"] == "degenerate"
    m = cli("minimize", "x**3 + y*y", "--x", "0.3", "--y", "0.2", "--json")
    assert m.code == 1 and m.json["converged"] is False
    assert "inflection" in m.json["message"]


def test_solve_an_overdetermined_system_of_many_unknowns_by_least_squares():
    """kills core/optimize.py:817: if J.shape[0] == J.shape[1] -> !=.

    From 500 unknowns solve's Jacobian is sparse; a square one is solved (sparse LU), any
    other by least squares (LSQR).  x**2 - 4 = 0 and 2*x - 4 = 0 for each of 500 entries are
    1000 equations in 500 unknowns with the root x = 2.  The mutant handed the 1000 x 500
    Jacobian to spsolve: ValueError (matrix must be square)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no SciPy warning either
        r = solve(parse("x**2 - 4; 2*x - 4"), {"x": np.full(500, 3.0)})
    assert r.converged and r.message == "the residual is zero (to tol)"
    assert np.array_equal(np.asarray(r.x["x"]), np.full(500, 2.0))


# ---- sparsity -----------------------------------------------------------------------------


def test_a_banded_hessian_gets_a_star_coloring_of_five(cli):
    """kills core/sparsity.py:445: colors = np.full(n, -1) -> np.full(n, -0).

    A Hessian with two bands on each side of the diagonal (x_i x_(i+1) and x_i x_(i+2) terms)
    takes 5 colors as columns and a star coloring of 5 (sparsity.coloring: the fewest colors,
    a tie going to the star coloring).  The star
    coloring starts with every column uncolored (-1); the mutant started them all at color 0,
    so each column saw color 0 taken around it, and its star coloring needed 6: the columns'
    coloring was printed instead."""
    x = str(list(range(1, 13)))
    r = cli("hessian", "sum(x[:-2]*x[2:]) + sum(x[:-1]*x[1:]) + sum(x**3)", "--x", x,
            "--sparse", "on")  # fmt: skip
    assert r.code == 0, r.err
    assert "5 color(s) (a star coloring): 5 forward sweep(s)" in r.out, r.out
