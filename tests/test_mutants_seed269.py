"""Tests written from the survivors of ``bench/mutate.py`` seeds 269, 271, 283, 293 and 307
(bench/results/mutate-seedN.json), untuned seeds measured at 10 mutants a target with every
test before them in.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from the docs
or arithmetic by hand, never from the code under test.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from taylor_defers import bits, defers_to_engine

from autograd_cli import diff
from autograd_cli.core.symbolic.algebra import Algebra
from autograd_cli.core.symbolic.support import SimplifyBudgetExceeded
from autograd_cli.core.taylor import _repeated
from autograd_cli.core.taylor_mode import NoTaylorMode, taylor_coefficients
from autograd_cli.core.tensor import tensor
from autograd_cli.grammar import parse


def test_cbrt_at_zero_is_a_soft_refusal_that_a_branch_not_taken_absorbs(cli):
    """kills core/taylor_mode.py:504: raise _Poisoned("cbrt of zero") -> pass.

    cbrt(x) at 0 has no series (cbrt' = inf there): Taylor mode refuses it with "cbrt of zero"
    and ``taylor`` gives the engine's numbers (by hand: 0, then inf for d/dx, and the engine's
    nan and inf after).  The refusal is *soft*, an exactly non-finite partial, which a branch
    that ``where`` does not take absorbs, as the engine's zero cotangent does: ``where(x > 0,
    cbrt(x), x)`` at 0 is x there, 0, 1, 0, 0 in one pass.  Without the raise, 1/(3*0**2) in
    the partial's check raises ZeroDivisionError, a hard poison that nothing absorbs (and
    another reason: "cbrt: float division by zero")."""
    engine = defers_to_engine("cbrt(x)", 0.0, 3, "^cbrt of zero$", cli)
    assert engine[:2] == bits([0.0, math.inf])
    text, point = "where(x > 0, cbrt(x), x)", {"x": 0.0}
    assert taylor_coefficients(parse(text), point, "x", 3) == [0.0, 1.0, 0.0, 0.0]
    assert _repeated(parse(text), point, "x", 3) == [0.0, 1.0, 0.0, 0.0]


@pytest.mark.parametrize("text", ["abs(log(x))", "2*clip(log(x), 0, 1) + x"])
def test_a_piecewise_op_at_a_nan_argument_is_refused_for_its_partial(text):
    """kills core/taylor_mode.py:857: raise _Poisoned(f"{r.op.name}: a local derivative of
    {w!r} at the point") -> pass.

    log(x) at -1 is nan with the finite derivatives of 1/x, which ops linear in it pass on
    (abs and clip are, on the branch the point is on).  But the branch of a nan is nobody's:
    abs's partial there is sign(nan) = nan, so Taylor mode refuses, saying so, and the old path
    gives the engine's numbers.  (clip's partials at nan are comparisons, 0: no refusal, the
    series of a constant.)  Without the raise the nan partial multiplies the series, and the
    refusal names "coefficient 1 is nan" instead of the partial."""
    point = {"x": -1.0}
    if text.startswith("abs"):
        with pytest.raises(NoTaylorMode, match=r"^abs: a local derivative of nan at the point$"):
            taylor_coefficients(parse(text), point, "x", 3)
    else:
        got = taylor_coefficients(parse(text), point, "x", 3)
        assert bits(got) == bits([math.nan, 1.0, 0.0, 0.0])
        assert _repeated(parse(text), point, "x", 3)[1:] == [1.0, 0.0, 0.0]  # -0.0 there


@pytest.mark.parametrize(
    "text, kind",
    [
        ("5e-6*x**2 - y**2", "degenerate"),
        ("6e-6*x**2 - y**2", "saddle"),
        ("5e-6*x**2 + y**2", "degenerate"),
        ("6e-6*x**2 + y**2", "minimum"),
    ],
)
def test_an_eigenvalue_exactly_at_the_zero_bound_counts_as_zero(cli, text, kind):
    """kills core/optimize.py:972 (seed 271): if any(abs(v) <= tiny for v in eigenvalues) ->
    if any(abs(v) < tiny ...).

    docs/analyses.md: the kind is degenerate for "an eigenvalue within sqrt(--gtol) of zero",
    the bound included.  5e-6*x**2 has the curvature 1e-5, which is sqrt(1e-10), the default
    --gtol's, exactly (5e-6*2 and the square root are exact in float64): degenerate, beside
    -y**2 too (a zero eigenvalue, not a saddle: the mutant's answer); 6e-6*x**2 (1.2e-5) is
    past it.  (Beside +y**2 the mutant is not seen: the direction of a curvature within the
    bound is also "unsure", which makes any kind but saddle degenerate.)"""
    r = cli("critical", text, "--x", "0", "--y", "0", "--json")
    assert r.code == 0, r.out
    assert r.json["kind"] == kind
    sign = -1.0 if "- y" in text else 1.0
    assert sorted(r.json["eigenvalues"]) == sorted([2 * float(text.split("*")[0]), 2 * sign])


def test_the_simplifier_reads_the_clock_by_its_4096th_step():
    """kills core/symbolic/algebra.py:143 (seed 283): if self.steps >= self._next_check ->
    if self.steps > self._next_check.

    The simplifier's deadline (diff's 10 s) costs no clock read per step: Algebra.spend reads
    the clock once in 4096 steps, so it overruns the deadline by 4096 steps at most, and the
    4096th step is the one that reads it.  With a deadline already past, 4095 steps pass and
    the 4096th raises; the mutant lets it through (and every later check is one step late)."""
    alg = Algebra(deadline=time.monotonic() - 1.0)
    alg.spend(4095)
    with pytest.raises(SimplifyBudgetExceeded, match="time"):
        alg.spend(1)
    later = Algebra(deadline=time.monotonic() + 3600.0)
    later.spend(4096)  # read the clock: in time; the next read is 4096 steps on
    later.deadline = time.monotonic() - 1.0
    later.spend(4095)
    with pytest.raises(SimplifyBudgetExceeded, match="time"):
        later.spend(1)


def test_the_sparse_newton_direction_descends_strictly():
    """kills core/optimize.py:606 (seed 293): if np.isfinite(step).all() and g @ step < 0 ->
    ... g @ step <= 0.

    The sparse Newton step (many variables) is shifted toward steepest descent "until it
    descends; -g when nothing does" (its docstring): a step along which the value neither
    falls nor rises is no descent direction.  With H = diag(2, -2) (x**2 - y**2) and g = (1,
    1), the Newton step -H^-1 g = (-0.5, 0.5) has slope g.step = 0 exactly: the value is flat
    along it (from (0.5, -0.5) it runs into the saddle at the origin).  The shifted steps rise
    (slope +5e-9 at the first shift) and the last shift makes H + 2 I singular, so the answer
    is -g, whose slope is -2; the mutant returns the flat step."""
    scipy_sparse = pytest.importorskip("scipy.sparse")
    import numpy as np

    from autograd_cli.core import optimize

    g = np.array([1.0, 1.0])
    step = optimize._sparse_newton_direction(scipy_sparse.diags([2.0, -2.0]).tocsr(), g)
    assert float(g @ step) < 0
    assert step.tolist() == [-1.0, -1.0]


@pytest.mark.parametrize("hub_degree, is_hub", [(80, True), (76, False)])
def test_a_hub_is_a_column_past_ten_times_the_mean_degree(hub_degree, is_hub):
    """kills core/sparsity.py:292 (seed 293): degree > max(HUB_DEGREE, 10 * nnz / n) ->
    ... 11 * nnz / n.

    A column is a hub (colored apart, the last color, alone) where it holds more than
    HUB_DEGREE (64) nonzeros and ten times its pattern's mean (sparsity.py's comment).  Here
    99 columns hold 7 nonzeros each and column 0 holds d: with d = 80 the mean is 773/100,
    ten times it 77.3 < 80 (a hub; eleven times it, 85.03, is not passed); with d = 76, 76.9
    is not passed.  Without the hub the greedy coloring, largest degree first, gives column 0
    the first color."""
    scipy_sparse = pytest.importorskip("scipy.sparse")
    import numpy as np

    from autograd_cli.core import sparsity

    n, m = 100, 200
    rng = np.random.default_rng(293)
    rows = [np.arange(hub_degree)] + [rng.choice(m, 7, replace=False) for _ in range(n - 1)]
    cols = [np.full(r.size, j) for j, r in enumerate(rows)]
    data = np.ones(sum(r.size for r in rows), dtype=bool)
    pattern = scipy_sparse.csr_matrix(
        (data, (np.concatenate(rows), np.concatenate(cols))), shape=(m, n)
    )
    colors, k = sparsity.color_columns(pattern)
    alone = int(colors[0]) == k - 1 and int((colors == colors[0]).sum()) == 1
    assert alone is is_hub
    # a valid coloring either way: the columns of one color share no row
    dense = pattern.toarray()
    for c in range(k):
        assert dense[:, colors == c].sum(axis=1).max() <= 1


def test_a_gradient_wider_than_its_local_derivative_is_not_rounded_to_it():
    """kills core/ops/rules.py:282: or gd.dtype != dd.dtype -> or gd.dtype == dd.dtype.

    chain_local multiplies a large cotangent into a fresh local derivative in place (``out=``)
    only when both have one dtype.  Here a is float32 and b float64: sin's cotangent (b) is
    float64, its local derivative cos(a*a) float32, so the product must be taken in float64,
    as ``g * d`` promotes.  Written into the float32 derivative it is rounded there, and again
    in the float32 products after it: the gradient differs in its last bits.  By hand: each of
    a*a's two edges gets (b*cos(a*a))*a in float64, summed."""
    x = np.linspace(0.1, 1, 1000).astype(np.float32)
    w = np.linspace(1, 2, 1000) + 1e-9
    a = tensor(x, requires_grad=True)
    b = tensor(w, requires_grad=True)
    ((a * a).sin() * b).sum().backward()
    part = w * np.cos(x * x).astype(np.float64) * x
    # compared in float32: the leaf's own dtype, where PyTorch leaves its gradient
    assert np.array_equal(np.asarray(a.grad.data, np.float32), (part + part).astype(np.float32))


@pytest.mark.parametrize(
    "text, printed",
    [("(x*0**-0.5)**2", "2*x/0"), ("x*0**-0.5*0**-0.5", "1/0"), ("x**2*(0**-1.5)**2", "2*x/0**3")],
)
def test_a_zero_base_counts_as_never_negative(text, printed):
    """kills core/symbolic/terms.py:82: return t.data >= 0 -> return t.data > 0.

    0 is never negative, so (0**-0.5)**2 is 0**-1 (a fractional power of a base that may be
    negative is kept apart: (x**0.5)**2 is not x for x < 0), and 0**-0.5*0**-0.5 is 0**-1 too:
    1/0 (inf, as the expression is).  Counted as possibly negative, they print
    ``2*x/(0**(1/2)*0**(1/2))`` and ``2*x*(1/0**(3/2))**2``: the same values, worse text."""
    assert diff(text, "x").derivatives["x"].text == printed


def test_a_literal_past_2_to_the_53_is_its_double_in_diff_as_in_grad(cli):
    """kills core/symbolic/numbers.py:33: if d <= (1 << 20) and abs(n) < (1 << 53): -> ...
    abs(n) < (1 << 54):.

    The parser reads 9007199254740994 (2**53 + 2) as a double, where 9007199254740994 + 1 is
    not representable and rounds to 9007199254740996: the engine's x*(9007199254740994 + 1 -
    9007199254740994) has slope 2.  diff takes a double as exact only below 2**53 (where every
    whole number is one), so it folds the sum in float64 too and agrees.  Held exactly from
    2**54 down, the literal's sum would be 9007199254740995 and the slope 1, which grad
    contradicts."""
    text = "x*(9007199254740994 + 1 - 9007199254740994)"
    r = cli("diff", text, "--x", "1", "--json")
    assert r.code == 0 and r.json["derivative"] == "2", r.out
    g = cli("grad", text, "--x", "1", "--json")
    assert g.code == 0 and float(g.json["grad"]["x"]) == 2.0, g.out


def test_tan_is_refused_where_its_derivatives_pass_the_limit_even_at_its_centre():
    """kills core/taylor_mode.py:563: _near_singularity(r.s(0), abs(_value("cos", r.s(0)[0])),
    y0, "tan") -> pass.

    tan at 0 is a distance |cos 0| = 1 from its poles by the check's measure, so its m-th
    derivatives are counted as m!: ln 167! = 692.0 passes ln 1e300 = 690.8 where ln 166! =
    686.9 does not.  Taylor mode gives the series to order 166 and refuses 167 for the engine
    (whose derivative graphs would overflow first); no other guard refuses there, since tan's
    own coefficients at 0 are small (2/pi)**k."""
    program = parse("tan(x)")
    assert math.lgamma(167) < math.log(1e300) < math.lgamma(168)
    assert len(taylor_coefficients(program, {"x": 0.0}, "x", 166)) == 167
    with pytest.raises(NoTaylorMode, match="^tan near a singular point"):
        taylor_coefficients(program, {"x": 0.0}, "x", 167)


def test_a_coefficient_of_exactly_the_limit_is_not_above_it():
    """kills core/taylor_mode.py:967: ... + log_fact[k] > log_limit: -> ... >= log_limit:.

    A series is refused where a derivative |c_k| k! is *above* 1e300.  1e300*x at 1 has value
    and slope exactly 1e300 (ln|c_k| + ln k! equal to ln 1e300 to the bit): not above, so
    Taylor mode gives them; at 1.001 the value is above and it refuses."""
    program = parse("1e300*x")
    assert taylor_coefficients(program, {"x": 1.0}, "x", 2) == [1e300, 1e300, 0.0]
    with pytest.raises(NoTaylorMode, match=r"^mul: derivative 0 is above 1e\+300$"):
        taylor_coefficients(program, {"x": 1.001}, "x", 2)
