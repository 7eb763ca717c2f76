"""Tests written from the survivors of ``bench/mutate.py`` seed 107 (bench/results/
mutate-seed107.json) in the op table, the batch engine, the simplifier, Taylor mode,
uncertainty and optimize.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from algebra
by hand, the docs or the docstrings (and PyTorch where it is installed), never from the code
under test.  The survivors that no test can tell apart are in bench/mutate_equivalent.txt,
with the reason.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from autograd_cli.core import OPS, grad, tensor
from autograd_cli.core.optimize import classify
from autograd_cli.core.taylor_mode import NoTaylorMode, taylor_coefficients
from autograd_cli.grammar import parse

# ---- the op table -------------------------------------------------------------------------


def test_an_ops_code_spelling_is_a_frozen_value():
    """kills core/ops/table.py:159: @dataclass(frozen=True) -> @dataclass(frozen=False).

    An op's ``code=`` fact (table.Code: how codegen writes it in each target) lives in the one
    op table every codegen call of the process reads, so it is a value: no field can be
    assigned (a codegen run could otherwise change sin's spelling for every later one), and
    equal spellings are equal and hash alike (usable as keys).  The mutant made it a plain
    mutable dataclass: the assignment went through, and with eq=True and no frozen it had no
    __hash__ (TypeError: unhashable)."""
    code = OPS["sin"].code
    assert code.numpy == "{xp}.sin({0})"
    with pytest.raises(dataclasses.FrozenInstanceError):
        code.numpy = "{xp}.cos({0})"
    assert code.numpy == "{xp}.sin({0})"
    twin = dataclasses.replace(code)
    assert twin == code and hash(twin) == hash(code)
    assert {code: "sin"}[twin] == "sin"


def _reciprocal_gradient_with_a_zero_cotangent():
    # sum(w * (1/x)) at x = [0, 1] with w = [1, 0]: div's partial in x is -1/x**2 =
    # [-inf, -1], the cotangent reaching it is w = [1, 0], so the gradient is
    # [1 * -inf, 0 * -1] = [-inf, -0.0] (IEEE: +0 times a negative number is -0).
    x = tensor([0.0, 1.0], requires_grad=True)
    w = tensor([1.0, 0.0])
    (g,) = grad((w * (1 / x)).sum(), x)
    return g.numpy()


def test_a_zero_cotangent_keeps_the_sign_of_its_product_where_chain_mends_another_entry():
    """kills core/ops/rules.py:212: r = where(eq(g, 0), where(eq(r - r, 0), r, 0.0), r) ->
    r = where(eq(g, 0), where(r, eq(r - r, 0), 0.0), r).

    chain(g, d) mends only the entries that are 0 * inf/nan (to 0, PyTorch's convention for a
    zero cotangent); every other entry is g * d as IEEE gives it, a signed zero included.  In
    sum([1, 0] * (1/x)) at x = [0, 1] the product is [-inf, 0 * -1] = [-inf, -0.0]: not all
    finite, so the mend runs, and x's gradient must be [-inf, -0.0].  The mutant's inner where
    took r itself as the condition: -0.0 is false there, and the entry became +0.0."""
    g = _reciprocal_gradient_with_a_zero_cotangent()
    assert g[0] == -math.inf
    assert g[1] == 0.0 and np.signbit(g[1]), g


def test_the_sign_of_that_zero_gradient_is_pytorchs(torch):
    """The same gradient as PyTorch's (kills the mutant of the test above where torch is
    installed, from an independent oracle): torch gives [-inf, -0.0] too."""
    x = torch.tensor([0.0, 1.0], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([1.0, 0.0], dtype=torch.float64)
    (want,) = torch.autograd.grad((w * (1 / x)).sum(), x)
    want = want.numpy()
    got = _reciprocal_gradient_with_a_zero_cotangent()
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


# ---- the batch engine ---------------------------------------------------------------------


def test_transpose_with_explicit_axes_runs_vectorised():
    """kills core/batch.py:412: axes = transpose_axes(axes, r) -> transpose_axes(r, axes).

    transpose(T, [1, 2, 0]) has a batching rule: the rows' axes are permuted by the given
    axes, the batch axis kept in front, so a batch file of such lines is evaluated as one
    vectorised group, and each line's value is NumPy's np.transpose(T, (1, 2, 0)).  The mutant
    passed the arguments swapped, transpose_axes refused them, and every line fell back to
    one-at-a-time evaluation (same numbers, the batch engine's speed lost)."""
    from test_batch_property import assert_same_as_single_lines, run_batch_file

    rng = np.random.default_rng(107)
    tensors = [rng.normal(size=(2, 3, 4)) for _ in range(3)]
    records = [
        {"expr": "transpose(T, [1, 2, 0])", "vars": {"T": t.tolist()}, "op": "eval"}
        for t in tensors
    ]
    lines, code, spy = run_batch_file(records)
    assert code == 0
    assert spy.groups and not spy.singles, (spy.groups, spy.singles)  # vectorised
    assert all(g[2] is None for g in spy.groups), spy.groups  # and it did not raise
    assert_same_as_single_lines(records, lines, spy)
    for t, line in zip(tensors, lines):
        doc = json.loads(line)
        assert doc["shape"] == [3, 4, 2]
        assert np.array_equal(doc["value"], np.transpose(t, (1, 2, 0)))


# ---- the simplifier -----------------------------------------------------------------------


def test_a_cancelled_product_whose_nans_the_sum_keeps_leaves_no_trace(cli):
    """kills core/symbolic/algebra.py:120: pieces = [self.mul(ONE, [(b, e)]) for b, e in
    zip(r.args, r.data[1])] -> zip(r.data[1], r.args).

    A cancelled term that can be nan stays as 0*term (log(x) - log(x) is nan for x < 0), unless
    a nan of each of its factors already reaches the sum.  asin(x)*acos(y) - asin(x)*acos(y)
    + asin(x) + acos(y) is nan exactly where asin(x) + acos(y) is (|x| > 1 or |y| > 1, nan in;
    both are bounded, so no 0*inf either), so d/dz of z times it is asin(x) + acos(y) and
    nothing more.  The mutant took the product's factors as (exponent, base) pairs, found
    none of them in the sum and kept a needless + 0*acos(y)*asin(x)."""
    expr = "z*asin(x)*acos(y) - z*asin(x)*acos(y) + z*asin(x) + z*acos(y)"
    r = cli("diff", expr, "--wrt", "z", "--json")
    assert r.code == 0, r.out
    assert r.json["derivative"] == "acos(y) + asin(x)"


# ---- Taylor mode --------------------------------------------------------------------------


def test_taylor_mode_takes_a_zero_base_to_the_power_1024():
    """kills core/taylor_mode.py:424: 1 <= p <= MAX_INTEGER_POWER -> 1 <= p < MAX_INTEGER_POWER.

    Whole exponents from 1 to MAX_INTEGER_POWER = 1024 are taken by repeated multiplication of
    series, where a zero base is allowed (its docstring).  x**1024 at 0 has the series
    0 + 0 x + ... + x**1024: coefficients 0 up to order 4.  A whole exponent past 1024 at a
    zero base is not taken by Taylor mode (the engine's repeated differentiation answers).
    The mutant stopped at 1023 and refused x**1024 at 0 as 'a zero base'."""
    assert taylor_coefficients(parse("x**1024"), {"x": 0.0}, "x", 4) == [0.0] * 5
    with pytest.raises(NoTaylorMode, match="zero base"):
        taylor_coefficients(parse("x**1025"), {"x": 0.0}, "x", 4)


# ---- uncertainty --------------------------------------------------------------------------


def test_monte_carlo_draws_exactly_the_number_asked_for_past_one_chunk(cli):
    """kills core/uncertainty.py:240: m = min(_MC_CHUNK, n - done) -> min(_MC_CHUNK, n + done).

    --mc N evaluates N draws, in chunks of 100,000.  log(-1 - x**2) is nan for every real x,
    so each of the 150,000 draws (a full chunk and one of 50,000) gives nan, and the warning
    counts them: 150,000 of 150,000.  The mutant's second chunk was a full 100,000 too:
    200,000 draws for 150,000 asked, and the warning said 200,000 of 150,000."""
    r = cli("propagate", "log(-1 - x**2)", "--x", "0+-1", "--mc", "150000", "--seed", "1", "--json")
    assert r.code == 0, r.out
    mc = r.json["mc"]
    assert mc["draws"] == 150_000
    assert mc["mean"] == "nan" and mc["std"] == "nan"
    want = "150,000 of 150,000 Monte Carlo draws gave a value that is not finite"
    assert any(w.startswith(want) for w in r.json["warnings"]), r.json["warnings"]


# ---- optimize -----------------------------------------------------------------------------


def test_newtons_default_iteration_limit_is_100(cli):
    """kills core/optimize.py:282: {"newton": 100, ...}[method] -> {"newton": 101, ...}.

    minimize --help: --max-iter defaults to 100 (bfgs 1000, gd 10000).  Newton's step on
    exp(x) is -exp(x)/exp(x) = -1 exactly, so from x = 600 it walks down by 1 a step and is
    nowhere near a zero gradient after 100 steps: x = 500, not converged, 100 iterations.
    The mutant took 101 steps, to x = 499."""
    r = cli("minimize", "exp(x)", "--x", "600", "--json")
    assert r.code == 1, r.out
    doc = r.json
    assert (doc["iterations"], doc["converged"], doc["x"]["x"]) == (100, False, 500.0)
    assert doc["message"] == "no convergence in 100 iterations (--max-iter)"


def test_classify_counts_an_exact_zero_eigenvalue_as_zero_next_to_a_nan_or_inf():
    """A product bug found through core/optimize.py:938: max(rtol * max(abs(float(v)) ...),
    atol) -> max(atol, rtol * ...) (the mutant gave what the docstring says).

    classify's docstring: an eigenvalue counts as zero below atol or rtol times the largest,
    and a zero makes the point degenerate.  0.0 is below atol = 1e-5 whatever the other
    eigenvalues are, so [nan, 0.0] is degenerate as [0.0, nan] is, and with rtol = 0 [inf, 0.0]
    is degenerate (no negative eigenvalue: never a saddle).  The tolerance was max(nan,
    atol) = nan (nan the largest |v| when it came first; 0 * inf is nan), no eigenvalue is
    <= nan, and both were called saddles.  Now a nan eigenvalue is a curvature not known
    (degenerate) and the scale is the largest finite |v|.  critical and minimize were not
    affected: eigh gives them all-nan or no-nan eigenvalues, and rtol is 1e-8 there."""
    assert classify([0.0, math.nan]) == "degenerate"
    assert classify([math.nan, 0.0]) == "degenerate"
    assert classify([math.nan, 1.0]) == "degenerate"  # not a saddle: a curvature not known
    assert classify([math.inf, 0.0], rtol=0.0) == "degenerate"
    assert classify([math.inf, 1e-3]) == "minimum"  # inf sets no scale: 1e-3 is no zero
    assert classify([math.inf, -1.0]) == "saddle"
