"""Tests written from the survivors of ``bench/mutate.py`` seed 71 in the core modules (ops,
symbolic, Taylor mode, uncertainty): each pins a behaviour one surviving mutant changed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from taylor_defers import defers_to_engine

from autograd_cli.core import batch as core_batch
from autograd_cli.core.ops import split_advanced
from autograd_cli.grammar import parse


def _nan(v) -> bool:
    """A JSON number that is nan (written "nan" by --json)."""
    return isinstance(v, str) and v == "nan" or isinstance(v, float) and math.isnan(v)


# ---- indexing: integer arrays after a slice stay batchable ---------------------------------


@pytest.mark.parametrize(
    "index",
    [
        (slice(None), (0, 2)),  # x[:, [0, 2]]
        (1, (0, 2)),  # x[1, [0, 2]]
        (slice(None), 1, (0, 2)),  # x[:, 1, [0, 2]]
        ((0, 1), slice(None), (0, 2)),  # x[[0, 1], :, [0, 2]]: apart
        (0, slice(None), (0, 2)),  # x[0, :, [0, 2]]: an int and an array apart
        ((1, 0), (0, 2), slice(None)),  # together, in front
    ],
)
def test_split_advanced_is_numpys_rule_for_moving_the_selected_axes_first(index):
    # kills core/ops/shape.py:192: where[-1] - where[0] + 1 -> where[-1] + where[0] + 1
    # oracle: NumPy itself.  A batch axis put in front of the index stays in front (row i
    # of X[:, *index] is X[i][index]) exactly when the advanced parts are side by side.
    X = np.arange(2 * 2 * 3 * 3, dtype=np.float64).reshape(2, 2, 3, 3)
    np_index = tuple(list(i) if type(i) is tuple else i for i in index)
    batched = X[(slice(None),) + np_index]
    rows = np.stack([row[np_index] for row in X])
    stays_in_front = batched.shape == rows.shape and np.array_equal(batched, rows)
    assert split_advanced(index) is (not stays_in_front), index


def test_an_integer_array_after_a_slice_is_evaluated_as_one_batch():
    # kills core/ops/shape.py:192 (as above): x[:, [0, 2]] and x[:, 1, [0, 2]] have their
    # arrays side by side (after a slice), so the batch evaluator vectorises them, with
    # each row's own value and gradient; the mutant called them apart (Unbatchable)
    X = np.arange(12, dtype=np.float64).reshape(2, 2, 3)
    r = core_batch.evaluate_batch(parse("sum(x[:, [0, 2]]**2)"), {"x": X}, 2, grad=True)
    want = [float((row[:, [0, 2]] ** 2).sum()) for row in X]
    assert r.value.tolist() == want
    g = np.zeros_like(X)
    g[:, :, [0, 2]] = 2 * X[:, :, [0, 2]]
    assert np.array_equal(r.grad["x"], g)
    Y = np.arange(24, dtype=np.float64).reshape(2, 2, 2, 3)
    r = core_batch.evaluate_batch(parse("sum(x[:, 1, [0, 2]])"), {"x": Y}, 2)
    assert r.value.tolist() == [float(row[:, 1, [0, 2]].sum()) for row in Y]
    # apart (NumPy moves the selected axes first): one row at a time
    with pytest.raises(core_batch.Unbatchable):
        core_batch.evaluate_batch(parse("sum(x[[0, 1], :, [0, 2]])"), {"x": Y}, 2)


# ---- norm: the spectral norms of an empty matrix --------------------------------------------


@pytest.mark.parametrize("order", ["2", "-2"])
def test_the_spectral_norm_of_an_empty_matrix_says_it_has_no_value(cli, order):
    # kills core/ops/reductions.py:415: _nonempty(a, axes, _ord_text(ord)) -> pass
    # (NumPy's own "zero-size array to reduction operation maximum" then surfaces)
    r = cli("eval", f"norm(x, ord={order})", "--x", "[[]]", "--json")
    assert r.code == 1, r.out
    error = r.json["error"]
    assert error["kind"] == "shape", error
    assert f"norm(x, ord={order}) of an empty array has no value" in error["message"], error
    assert "zero-size" not in error["message"]


# ---- inner: its result's size, for the memory limit -----------------------------------------


def test_inner_is_refused_by_the_size_of_its_result_not_of_an_outer_product(cli):
    # kills core/ops/products.py:280: if not sa or not sb -> if not (not sa or not sb)
    # inner of two 100-vectors is one number (8 bytes): well within 1 KiB (the mutant took
    # it for 100 * 100 numbers); a number times a 100-vector is 100 numbers, 800 bytes, over
    # a limit of 512 bytes (the mutant took it for one number)
    ones = "[" + ", ".join(["1"] * 100) + "]"
    r = cli("eval", "inner(x, y)", "--x", ones, "--y", ones, "--max-memory", "1K", "--json")
    assert r.code == 0, r.out
    assert r.json["value"] == 100.0
    for text in ("inner(2, x)", "inner(x, 2)"):
        r = cli("eval", text, "--x", ones, "--max-memory", "512", "--json")
        assert r.code == 1, (text, r.out)
        error = r.json["error"]
        assert error["kind"] == "limit" and error["needed_bytes"] == 800, error
        assert error["message"].startswith("inner's result would take 800 bytes"), error


# ---- symbolic: a where with one branch that can be nan --------------------------------------


@pytest.mark.parametrize(
    "w",
    ["where(y < 0, log(y), 1)", "where(y > 0, 1, log(y))"],
)
def test_a_where_with_one_branch_that_can_be_nan_is_not_cancelled_to_zero(cli, w):
    # kills core/symbolic/terms.py:147: memo[args[1]] or memo[args[2]] -> ... and ...
    # x*w - x*w: its derivative w - w is nan where w takes its log branch at y < 0 (the
    # engine's grad says so), so diff keeps a trace of w (0*w), not the number 0
    text = f"x*{w} - x*{w}"
    g = cli("grad", text, "--x", "2", "--y", "-1", "--json")
    assert g.code == 0 and _nan(g.json["grad"]["x"]), g.out
    d = cli("diff", text, "--wrt", "x", "--x", "2", "--y", "-1", "--json")
    assert d.code == 0, d.out
    assert d.json["derivative"] != "0", d.json
    assert _nan(d.json["derivative_value"]), d.json


# ---- symbolic: the degree of a product, for the order of a sum's terms ----------------------


def test_a_sums_terms_of_one_degree_are_in_name_order(cli):
    # kills core/symbolic/algebra.py:410: degree = 0.0 -> degree = 1.0
    # terms in descending degree (the symbolic package's docs): a and x*sin(y) are both of
    # degree 1 (sin(y) has none), so they come by name: a first; x**2 (degree 2) first of all
    r = cli("diff", "a*x + x**2*sin(y)/2", "--wrt", "x", "--json")
    assert r.code == 0, r.out
    assert r.json["derivative"] == "a + x*sin(y)"
    r = cli("diff", "z*x + x**2*sin(y)/2", "--wrt", "x", "--json")
    assert r.json["derivative"] == "x*sin(y) + z"
    r = cli("diff", "a*x + x**3/3", "--wrt", "x", "--json")
    assert r.json["derivative"] == "x**2 + a"


# ---- Taylor mode: tan defers to the engine where its series' products overflow -------------


def test_taylor_mode_defers_tan_to_the_engine_where_its_series_products_overflow(cli):
    # kills core/taylor_mode.py:541: @_rule("tan", multiplies_out=True) -> False
    # tan(1e98*x) at 1.5e-98 (tan(1.5) = 14.1): the series 14.1, 2e100, 2.8e199, 4e298 is
    # finite, and so are the argument's products (1e98**3), but the engine's graphs multiply
    # tan's own derivatives (tan' = 1 + tan**2): (2e100)**3 is past 1e300.  Taylor mode
    # refuses, and taylor gives the engine's repeated differentiation, bit for bit (its
    # 2.818169404329037e+199, where Taylor mode's recurrence rounds to ...0362e+199)
    defers_to_engine("tan(1e98*x)", 1.5e-98, 3, "tan: products of derivatives overflow", cli)


# ---- propagate: an input whose sensitivity is nan contributes nan, not 0 -------------------


def test_a_nan_sensitivity_gives_a_nan_contribution_not_zero(cli):
    # kills core/uncertainty.py:174: math.sqrt(max(part, 0.0)) -> math.sqrt(max(0.0, part))
    # sqrt(x) at x = -1: d/dx is nan, so x's part of the variance, (nan * 0.1)**2, is nan and
    # so is its contribution; max(0.0, nan) is 0.0 (Python keeps the first of an unordered
    # pair), which would say x adds nothing to an uncertainty that is nan
    r = cli("propagate", "sqrt(x) + y", "--x", "-1+-0.1", "--y", "2+-0.5", "--json")
    assert r.code == 0, r.out
    budget = r.json["budget"]
    assert _nan(budget["x"]["sensitivity"]), budget
    assert _nan(budget["x"]["contribution"]), budget
    assert budget["y"]["contribution"] == 0.5  # |1| * 0.5
    assert _nan(r.json["uncertainty"])
    # and no input's share of a nan variance is known (y's 0.25 of nan is not 0 %)
    assert _nan(budget["x"]["share"]) and _nan(budget["y"]["share"]), budget
