"""Behaviours of the batch engine (core/batch.py) pinned down for mutants of bench/mutate.py.

Each test names the behaviour it pins; its comment names the mutant (``file:line: original ->
mutant``, line numbers as they were when it was found) that it kills.  The reference is the
single command run on each line alone (the contract of ``batch``), never the batch engine.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_batch_property import assert_same_as_single_lines, run_batch_file

from autograd_cli.core import apply, tensor
from autograd_cli.core import batch as core_batch
from autograd_cli.core.errors import ShapeError
from autograd_cli.core.functional import jvp


@pytest.mark.parametrize(
    "expr, op, word",
    [
        ("x + log(-1)", "eval", "log gave nan"),  # a constant node: nan in every row
        ("x + 1/0", "eval", "div gave inf"),
        ("x*sqrt(-4)", "grad", "sqrt gave nan"),
    ],
)
def test_a_non_finite_constant_node_warns_in_every_row(expr, op, word):
    # kills core/batch.py:585: messages = {True: (_describe_nonfinite(op, data), rows)} ->
    #   {True: (_describe_nonfinite(data, op), rows)}   (a node whose value is the same in
    #   every row, not finite while its arguments are: the batch raised a TypeError)
    records = [{"expr": expr, "vars": {"x": x}, "op": op} for x in (1.0, 2.0, -3.0)]
    lines, code, spy = run_batch_file(records)
    assert code == 0
    assert_same_as_single_lines(records, lines, spy)
    for line in lines:
        assert any(word in w for w in json.loads(line)["warnings"]), line
    assert spy.groups and not spy.singles  # the vectorised path answered, not the fallback


@pytest.mark.parametrize("expr", ["inv(x)", "det(x)", "sum(triu(x))", "trace(x)"])
def test_a_matrix_function_of_vector_rows_is_each_rows_shape_error(expr):
    # kills core/batch.py:488: raise Unbatchable(f"{op}() of rows of rank below ...") -> pass
    #   (two rows of 2-vectors were taken for one 2x2 matrix: inv(x) gave every row a
    #   number, det(x) raised an IndexError; one line alone is a shape error)
    records = [{"expr": expr, "vars": {"x": x}, "op": "eval"} for x in ([1.0, 2.0], [3.0, 4.0])]
    lines, code, _ = run_batch_file(records)
    assert code == 1
    for line in lines:
        error = json.loads(line)["error"]
        assert error["kind"] == "shape" and "not a vector" in error["message"], line


def test_a_group_error_says_what_its_error_says():
    # kills core/batch.py:77: super().__init__(str(error)) -> pass   (a GroupError printed,
    #   logged or re-raised as it is would be an empty message)
    error = ShapeError("x: shapes (2,) and (3,) do not fit")
    group = core_batch.GroupError(error)
    assert str(group) == "x: shapes (2,) and (3,) do not fit"
    assert group.args == ("x: shapes (2,) and (3,) do not fit",) and group.error is error


@pytest.mark.parametrize("axes", [(0, 2, 1), (0, 1, 2), (0, 1)])
def test_the_batch_permute_op_pushes_tangents_through(axes):
    # kills core/batch.py:113: return None if ts[0] is None else apply(_PERMUTE, ts[0], ...)
    #   -> None if ts[0] is not None else ...   (forward mode lost the tangent: J v = 0)
    rng = np.random.default_rng(3)
    shape = (2, 3, 4)[: len(axes)]
    x, v = rng.standard_normal(shape), rng.standard_normal(shape)
    out, tangent = jvp(lambda t: apply(core_batch._PERMUTE, t, axes=axes), tensor(x), tensor(v))
    np.testing.assert_array_equal(out.numpy(), np.transpose(x, axes))
    np.testing.assert_array_equal(tangent.numpy(), np.transpose(v, axes))  # a linear op


@pytest.mark.parametrize(
    "expr, x, op",
    [
        ("cumsum(x, axis=-1)", [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "eval"),
        ("cumsum(x, axis=-2)", [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "eval"),
        ("cumsum(x, axis=-1)", [1.0, 2.0, 4.0], "eval"),
        ("sum(cumsum(x, axis=-1) * [1, 2, 3])", [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "grad"),
        ("sum(x, axis=-1) + max(x, axis=-2)", [[1.0, 2.0], [4.0, 3.0]], "eval"),
    ],
)
def test_a_negative_axis_counts_from_the_end_of_each_row(expr, x, op):
    # kills core/batch.py:480 (and the same in _reduction, 373):
    #   shifted = tuple(a + 1 if a >= 0 else a for a in axes) -> tuple(a + 1 for a in axes)
    #   a negative axis stays where it is when the batch axis is put in front (-1 is still
    #   each row's last axis): moved like a positive one (-1 -> 0) it was the batch axis, and
    #   cumsum(x, axis=-1) summed down the rows (the lines) instead of along each row
    scale = [1.0, -2.0, 0.5]
    records = [{"expr": expr, "vars": {"x": (np.asarray(x) * s).tolist()}, "op": op} for s in scale]
    lines, code, spy = run_batch_file(records)
    assert code == 0
    assert_same_as_single_lines(records, lines, spy)
    assert spy.groups and not spy.singles  # the vectorised path answered, not the fallback
