"""Tests written from the survivors of ``bench/mutate.py`` seed 229 (bench/results/
mutate-seed229.json), an untuned seed measured after seed 227 at the tool's default sample
(40 mutants a target) with every test before it in.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from the docs,
PyTorch or arithmetic by hand, never from the code under test.

Judged equivalent (bench/mutate_equivalent.txt, each with its reason): 12 new ones, among
them two deadline comparisons (> against >= on a monotonic clock), a float subclass, an
unreachable or, a list cut to its length on the next line, two Dask reader edges that
return the same.  A listed equivalent was found wrong and removed: taylor_mode.py's whole
exponent guard `0 <= b0 <= n` made `< n` gives x**(x+1)'s coefficients one ulp apart at 2.
Three real survivors are left, two of them cost constants at their boundary:
core/symbolic/algebra.py:199 (the simplifier's step count charging a gather call 1 more),
core/limits.py:44 (NODE_BYTES, the measured memory of a node, 512 made 513) and
cli/batch/dask.py:486 (the Dask reader waiting on a partition's line count without watching
for a stop signal: a stop is then seen once the count is done, not during it; at the
--timeout nothing changes, the tail waits for the counts either way).
"""

from __future__ import annotations

import numpy as np
import pytest

from autograd_cli.core.autograd import grad
from autograd_cli.core.ops import OPS
from autograd_cli.core.tensor import apply, tensor


def test_a_selecting_partials_mend_gives_the_same_bits_with_and_without_create_graph():
    """kills core/ops/rules.py:228: where(eq(d, 0), where(eq(r - r, 0), r, 0.0), r) ->
    where(eq(d, 0), where(r, eq(r - r, 0), 0.0), r).

    relu's backward is g*(x > 0), an inf or nan in g zeroed where the partial is 0 (PyTorch's
    where).  ``_selected`` mends the product in place when nothing is recorded and with a
    where when create_graph records it, and says the two give the same bits.  At x = [-1, 2,
    -3] with the cotangent [-1, inf, 2] the product is [-0.0, inf, 0.0]: nothing to mend
    (the inf sits where the partial is 1), and both paths hand back [-0.0, inf, 0.0], the
    zero's sign included; the mutant's where gave +0.0 for the first with create_graph."""
    x = tensor(np.array([-1.0, 2.0, -3.0]), requires_grad=True)
    y = apply(OPS["relu"], x)
    g = tensor(np.array([-1.0, np.inf, 2.0]))
    got = []
    for create_graph in (False, True):
        (gx,) = grad([y], [x], [g], create_graph=create_graph, retain_graph=True)
        got.append(np.asarray(gx.data))
    for data in got:
        assert data.tolist() == [0.0, np.inf, 0.0]
        assert np.signbit(data).tolist() == [True, False, False]


def test_a_constant_vector_left_of_batched_matrices_is_batched():
    """kills core/batch.py:304: sa[:-1] + (1, sa[-1]) if ra == 1 -> sa[:-1] + (1, sa[1]) if ra == 1.

    ``[1, 2] @ A`` with A a per-row 2 x 4 matrix: the constant vector (shape (2,), no batch
    axis) is promoted to a (1, 2) matrix for the size rule as for the product.  Each row's
    answer by hand: A's first row plus twice its second, summed; the gradient is the outer
    product of [1, 2] with ones.  The mutant read the promoted vector's length from position
    1 of a shape that has one entry (IndexError, not a result)."""
    from autograd_cli.core import batch as core_batch
    from autograd_cli.grammar import parse

    A = np.arange(24.0).reshape(3, 2, 4)  # noqa: N806 - a matrix
    result = core_batch.evaluate_batch(parse("sum([1, 2] @ A)"), {"A": A}, 3, grad=True)
    assert result.value.tolist() == [float(np.sum(a[0] + 2 * a[1])) for a in A]
    assert result.grad["A"].tolist() == [[[1.0] * 4, [2.0] * 4]] * 3


def test_batched_vectors_left_of_batched_matrices_count_one_result_row_each():
    """kills core/batch.py:304: sa[:-1] + (1, sa[-1]) if ra == 1 -> ... if ra == 0.

    ``x @ A``, x a per-row vector of 2 and A a per-row 2 x 10 matrix: each row's result is 10
    numbers, 100 rows 1,000 numbers (8 kB), well under a 100K memory limit, so it runs (each
    entry 1 + 1 = 2).  Unpromoted, the size rule took the batch of vectors for one 100 x 2
    matrix times 100 matrices: 100 x 100 x 10 numbers (800 kB), over the limit."""
    from autograd_cli.core import batch as core_batch
    from autograd_cli.core import limits
    from autograd_cli.grammar import parse

    columns = {"x": np.ones((100, 2)), "A": np.ones((100, 2, 10))}
    with limits.using("100K"):
        result = core_batch.evaluate_batch(parse("x @ A"), columns, 100, grad=False)
    assert result.value.tolist() == [[2.0] * 10] * 100


@pytest.mark.parametrize(
    "rowshape, target, resolved",
    [
        ((6,), [-1, 2], (3, 2)),
        ((2, 3), [3, -1], (3, 2)),
        ((6,), [1, -1, 1], (1, 6, 1)),
        ((0,), [-1, 1], (0, 1)),
        ((6,), [2, 3], (2, 3)),
    ],
)
def test_a_reshape_targets_unknown_is_resolved_to_a_size(rowshape, target, resolved):
    """kills core/batch.py:435: math.prod(s for s in target if s != -1) -> ... if s != 1.

    The batched reshape's per-row target has its -1 replaced by the size that fits, as NumPy
    infers it: (6,) to [-1, 2] is (3, 2).  The mutant counted the -1 into the known part and
    wrote the negated size (-3) there, which NumPy's reshape happens to read as "unknown"
    too (so no answer changed), but a resolved shape with a negative entry is not a
    resolved shape: the next reader of it would see -3."""
    from autograd_cli.core.batch import _resolve_shape

    assert _resolve_shape(rowshape, target) == resolved


def test_an_overflow_risk_in_an_argument_is_never_absorbed_by_a_zero_partial():
    """kills core/taylor_mode.py:246: _Poisoned(... "products of derivatives overflow the
    engine", hard=True) -> hard=False.

    The module's rule: a node poisoned by a risk of overflow (finite numbers too large for
    the engine's products) poisons the result even behind a zero partial (sign's, a factor
    0), since the engine's zero times an inf its own products made can be nan; only an exactly
    non-finite value is absorbed.  atan2(1e200 + x, x) at x = 1 is such a node (its sum of
    squares has the derivative 2e200, two of them multiply to inf), so sign of it, and 0
    times it, defer to the engine, as atan2 alone does.  The mutant let the zero partial
    absorb it and answered in Taylor mode."""
    from autograd_cli.core.taylor_mode import NoTaylorMode, taylor_coefficients
    from autograd_cli.grammar import parse

    for expr in ("atan2(1e200 + x, x)", "sign(atan2(1e200 + x, x))", "0*atan2(1e200 + x, x)"):
        with pytest.raises(NoTaylorMode, match="atan2: products of derivatives overflow"):
            taylor_coefficients(parse(expr), {"x": 1.0}, "x", 2)


def test_the_first_power_of_a_zero_base_has_a_taylor_series():
    """kills core/taylor_mode.py:430: 1 <= p <= MAX_INTEGER_POWER -> 1 < p <= MAX_INTEGER_POWER.

    x**1 is x: at 0 its series is 0 + 1*x, in Taylor mode as for any whole power (the
    binomial rule needs no division by the base).  The mutant sent p = 1 to the general
    power rule, which divides by the base and gave up at a zero base ("a zero base to the
    power 1.0"), deferring to the engine; (x**1)*sin(x) at 0 is x*sin(x): 0, 0, 1, 0, -1/6."""
    from autograd_cli.core.taylor_mode import taylor_coefficients
    from autograd_cli.grammar import parse

    assert taylor_coefficients(parse("x**1"), {"x": 0.0}, "x", 3) == [0.0, 1.0, 0.0, 0.0]
    got = taylor_coefficients(parse("(x**1)*sin(x)"), {"x": 0.0}, "x", 4)
    assert got == pytest.approx([0.0, 0.0, 1.0, 0.0, -1 / 6], rel=1e-15, abs=1e-300)


def test_sqrt_at_infinity_defers_to_the_engine_in_taylor_modes_own_words():
    """kills core/taylor_mode.py:494: _partial(1.0 / (2.0 * r.out0), "sqrt") ->
    _partial(1.0 / (2.0 / r.out0), "sqrt").

    sqrt's local derivative is 1/(2 sqrt(x)): at x = inf it is 0, a safe partial, and the
    value inf makes the bound on the engine's derivatives infinite, so Taylor mode defers
    with "sqrt near a singular point: its derivatives overflow the engine" (the reason the
    engine's repeated differentiation reports if it too gives up).  The mutant's
    1/(2/sqrt(x)) divided by zero there and deferred with Python's "float division by
    zero"."""
    from autograd_cli.core.taylor_mode import NoTaylorMode, taylor_coefficients
    from autograd_cli.grammar import parse

    for expr in ("sqrt(x)", "sign(sqrt(x))"):
        with pytest.raises(NoTaylorMode, match="^sqrt near a singular point: its derivatives"):
            taylor_coefficients(parse(expr), {"x": np.inf}, "x", 2)


def test_the_documented_iteration_defaults_are_the_code_s(cli):
    """kills core/optimize.py:286: {"newton": 100, "bfgs": 1000, "gd": 10000}[method] ->
    ... "gd": 10001 (now optimize.MAX_ITER).

    docs/analyses.md and --max-iter's help promise each method's default (100 steps; bfgs
    1,000, gd 10,000), where minimize stops unless told otherwise.  A run to gd's limit takes
    seconds (ten thousand gradient steps), so the promise is checked against the table the
    code reads, ``MAX_ITER``; the mutant's 10001 no longer matched what both texts say.
    """
    from pathlib import Path

    from autograd_cli.core.optimize import MAX_ITER, METHODS

    assert set(MAX_ITER) == set(METHODS)
    docs = (Path(__file__).parents[1] / "docs" / "analyses.md").read_text(encoding="utf-8")
    said = f"default {MAX_ITER['newton']} steps; bfgs {MAX_ITER['bfgs']:,}, gd {MAX_ITER['gd']:,}"
    assert said in docs
    r = cli("minimize", "--help")
    assert r.code == 0
    text = " ".join(r.out.split())
    assert (
        f"(default {MAX_ITER['newton']}; minimize --method bfgs {MAX_ITER['bfgs']}, gd "
        f"{MAX_ITER['gd']})" in text.replace("│ ", "").replace(" │", "")
    ), text


def test_propagate_names_a_value_for_no_variable_before_any_work():
    """kills core/uncertainty.py:114: check_values(program, values) -> pass.

    SPEC: a value for a name that is not an input is an unknown variable (exit 2), said with
    the variables there are (and a hint for an intermediate or a constant's name).  The
    library's propagate checks that first, as every command does; the mutant let the
    values through, and the error came from the evaluator's row machinery as a GroupError
    (not an AutogradCliError, so not an exit code), or, with an uncertainty for the stray
    name too, as a different complaint about the uncertainty."""
    from autograd_cli.core.errors import UnknownVariableError
    from autograd_cli.core.uncertainty import propagate
    from autograd_cli.grammar import parse

    cases = [
        ("x*2", {"x": 1.0, "xx": 2.0}, {"x": 0.1}, "unknown variable 'xx'"),
        ("x*2", {"x": 1.0, "xx": 2.0}, {"x": 0.1, "xx": 0.2}, "unknown variable 'xx'"),
        ("y = x*2\ny + 1", {"x": 1.0, "y": 3.0}, {"x": 0.1}, "an intermediate bound by"),
    ]
    for source, values, uncertainties, said in cases:
        with pytest.raises(UnknownVariableError, match=said):
            propagate(parse(source), values, uncertainties)


def test_the_band_coloring_of_a_diagonal_past_the_greedy_limit_is_one_color():
    """kills core/sparsity.py:383: last = np.full(csr.shape[0], -1) -> np.full(..., 1).

    Past GREEDY_MAX columns the columns are colored j mod w, w the widest row's span (last
    column - first column + 1).  A diagonal pattern's rows each hold one entry: w = 1, one
    color, one forward sweep for the whole Jacobian of an elementwise function.  The mutant
    started each row's last column at 1, so row 0 (whose only column is 0) spanned 2 and
    every diagonal Jacobian past the limit took two sweeps."""
    import scipy.sparse

    from autograd_cli.core.sparsity import GREEDY_MAX, color_columns

    n = GREEDY_MAX + 1
    colors, k = color_columns(scipy.sparse.identity(n, dtype=bool, format="csr"))
    assert k == 1 and not colors.any()


def test_empty_rows_do_not_make_a_band_look_wide():
    """kills core/sparsity.py:387: np.median(spans[counts > 0]) -> np.median(spans[counts >= 0]).

    The band coloring (past GREEDY_MAX columns) leaves out of its width w only rows far
    wider than the rest: more than 8 times the median span of the rows that hold entries.
    100 rows of span 70 (columns 3i and 3i + 69) among 20,001 rows otherwise empty are the
    rest, not outliers: w = 70, 70 colors.  The mutant counted the empty rows' span 0 into
    the median, took all 100 rows for outliers and gave each of their 123 distinct columns a
    color of its own (124 colors)."""
    import scipy.sparse

    from autograd_cli.core.sparsity import GREEDY_MAX, color_columns

    n = GREEDY_MAX + 1
    rows = np.repeat(np.arange(100), 2)
    cols = np.column_stack([3 * np.arange(100), 3 * np.arange(100) + 69]).ravel()
    pattern = scipy.sparse.csr_matrix((np.ones(200, dtype=bool), (rows, cols)), shape=(n, n))
    colors, k = color_columns(pattern)
    assert k == 70 and colors.tolist() == (np.arange(n) % 70).tolist()


def test_the_star_coloring_takes_up_to_greedy_max_columns():
    """kills core/sparsity.py:442: if n > GREEDY_MAX or ... -> if n >= GREEDY_MAX or ...

    The star coloring (a Hessian's) says it gives up only *past* GREEDY_MAX columns (a
    Python loop each; past it the vectorized band coloring).  At exactly GREEDY_MAX it
    colors: a diagonal Hessian pattern, no edges between columns, one color; one column
    more and it declines (None).  The mutant declined at the limit itself."""
    import scipy.sparse

    from autograd_cli.core.sparsity import GREEDY_MAX, _star_colors

    star = _star_colors(scipy.sparse.identity(GREEDY_MAX, dtype=bool, format="csr"))
    assert star is not None and (star.k, star.mode) == (1, "star")
    assert _star_colors(scipy.sparse.identity(GREEDY_MAX + 1, dtype=bool, format="csr")) is None
