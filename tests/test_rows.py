"""The batch command's evaluation as a library: ``autograd_cli.core.rows``, used from Python.

Rows of one program go in (plain ``{name: value}`` dicts, or ``Row`` objects that carry
their own op); per row comes out the Result the single command computes there, or the row's
error as an object.  Values are checked against closed forms (NumPy), and each row's Result
against ``core.api`` evaluating that row alone.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from autograd_cli import parse
from autograd_cli.core import api, rows
from autograd_cli.core import batch as core_batch
from autograd_cli.core.errors import (
    AutogradCliError,
    BadValueError,
    MissingValueError,
    NonScalarOutputError,
)

EXPR = "x*y + sin(x)*exp(y/3)"
POINTS = [(0.5, -1.0), (1.25, 2.0), (-3.0, 0.75), (2.0, 0.0)]


def closed_form(x: float, y: float):
    e, s = math.exp(y / 3), math.sin(x)
    return x * y + s * e, {"x": y + math.cos(x) * e, "y": x + s * e / 3}


def same(a, b) -> None:
    """Two Results alike: values, gradients (bit for bit) and warnings."""
    assert np.array_equal(a.value, b.value, equal_nan=True)
    assert (a.grad is None) == (b.grad is None)
    if a.grad is not None:
        assert list(a.grad) == list(b.grad)
        for name in a.grad:
            assert np.array_equal(a.grad[name], b.grad[name], equal_nan=True)
    assert a.warnings == b.warnings


@pytest.fixture
def calls(monkeypatch):
    """How many groups went through ``evaluate_batch``, how many rows one at a time."""
    seen = {"batch": [], "row": 0}
    batch, row = core_batch.evaluate_batch, rows.evaluate_row

    def spy_batch(program, columns, size, **kwargs):
        seen["batch"].append(size)
        return batch(program, columns, size, **kwargs)

    def spy_row(program, r):
        seen["row"] += 1
        return row(program, r)

    monkeypatch.setattr(core_batch, "evaluate_batch", spy_batch)
    monkeypatch.setattr(rows, "evaluate_row", spy_row)
    return seen


def test_grad_of_many_points_matches_the_closed_form_in_one_batch(calls):
    program = parse(EXPR)
    out = rows.evaluate_rows(program, [{"x": x, "y": y} for x, y in POINTS])
    assert calls == {"batch": [len(POINTS)], "row": 0}  # vectorised: one group, no row alone
    for (x, y), r in zip(POINTS, out):
        value, grad = closed_form(x, y)
        assert math.isclose(float(r.value), value, rel_tol=1e-14, abs_tol=1e-15)
        assert list(r.grad) == ["x", "y"]
        for name in grad:
            assert math.isclose(float(r.grad[name]), grad[name], rel_tol=1e-14, abs_tol=1e-15)
        same(r, api.grad_of(program, {"x": x, "y": y}))


def test_eval_and_wrt_take_keywords_and_vectors_group_by_shape(calls):
    program = parse("sum(v**2) * x")
    points = [
        {"v": [1.0, 2.0], "x": 3.0},
        {"v": [1.0, 2.0, 3.0], "x": -1.0},  # another shape: another group
        {"v": [0.5, -0.5], "x": 2.0},
    ]
    out = rows.evaluate_rows(program, points, op="grad", wrt="v")
    assert sorted(calls["batch"]) == [1, 2] and calls["row"] == 0
    for p, r in zip(points, out):
        v = np.array(p["v"])
        assert list(r.grad) == ["v"]
        np.testing.assert_array_equal(r.grad["v"], 2 * v * p["x"])
        assert float(r.value) == float(np.sum(v**2) * p["x"])
    values = rows.evaluate_rows(program, points, op="eval")
    assert [r.grad for r in values] == [None] * 3
    assert [float(r.value) for r in values] == [15.0, -14.0, 1.0]


def test_an_error_row_next_to_good_rows():
    program = parse("x * y")
    points = [
        {"x": 2.0, "y": 3.0},
        {"x": 1.0},  # y missing: a group of its own, every row of it gets the same error
        {"x": [1.0, 2.0], "y": 4.0},  # a vector output: grad needs a scalar
        {"x": -1.0, "y": 0.5},
    ]
    out = rows.evaluate_rows(program, points)
    assert float(out[0].value) == 6.0 and float(out[0].grad["x"]) == 3.0
    assert float(out[3].value) == -0.5 and float(out[3].grad["y"]) == -1.0
    assert isinstance(out[1], MissingValueError)
    assert isinstance(out[2], NonScalarOutputError)
    for p, error in ((points[1], out[1]), (points[2], out[2])):  # the single command's message
        with pytest.raises(AutogradCliError) as alone:
            api.grad_of(program, p)
        assert (error.kind, error.message) == (alone.value.kind, alone.value.message)


def test_rows_that_cannot_batch_go_one_at_a_time(calls):
    # 10**400 does not fit a float: the group's columns cannot be stacked (Unbatchable), so
    # each row is evaluated alone; only that row fails, with its own bad_value error.
    program = parse("x**2")
    out = rows.evaluate_rows(program, [{"x": 3.0}, {"x": 10**400}, {"x": -0.5}])
    assert calls == {"batch": [], "row": 3}
    assert [float(out[0].grad["x"]), float(out[2].grad["x"])] == [6.0, -1.0]
    assert isinstance(out[1], BadValueError)


def test_a_rule_that_refuses_falls_back_with_each_rows_own_error(calls):
    program = parse("sum(u, 1)")  # axis 1 is beyond a vector row's rank: Unbatchable
    points = [{"u": [1.0, 2.0]}, {"u": [3.0, 4.0]}]
    out = rows.evaluate_rows(program, points, op="eval")
    assert calls == {"batch": [2], "row": 2}
    for p, error in zip(points, out):
        with pytest.raises(AutogradCliError) as alone:
            api.eval_of(program, p)
        assert (error.kind, error.message) == (alone.value.kind, alone.value.message)


def test_a_bug_in_the_vectorised_path_is_raised_not_hidden(monkeypatch):
    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(core_batch, "evaluate_batch", broken)
    with pytest.raises(ZeroDivisionError):
        rows.evaluate_rows(parse("x + 1"), [{"x": 1.0}, {"x": 2.0}])


def test_warnings_per_row_as_alone():
    program = parse("log(x) + abs(y)")
    points = [{"x": 1.0, "y": 0.0}, {"x": -1.0, "y": 2.0}, {"x": 0.0, "y": -1.0}]
    out = rows.evaluate_rows(program, points)
    for p, r in zip(points, out):
        same(r, api.grad_of(program, p))
    assert out[1].warnings and out[2].warnings and out[0].warnings != out[1].warnings


def test_row_objects_carry_their_own_op():
    program = parse("x**2 * y")
    items = [
        rows.Row({"x": 1.5, "y": -2.0}, op="hessian"),
        rows.Row({"x": 2.0, "y": 1.0}, op="grad", wrt=("x",)),
        rows.Row({"x": 0.5, "y": 1.0}, op="grad", wrt=("x",), order=3),
        rows.Row({"x": 0.5, "y": 1.0}, op="grad", order=2, grad_output=1.0),
    ]
    hess, grad, third, bad = rows.evaluate_rows(program, items)
    h = hess.hessian
    assert [[float(h[i][j]) for j in "xy"] for i in "xy"] == [[-4.0, 3.0], [3.0, 0.0]]
    assert list(grad.grad) == ["x"] and float(grad.grad["x"]) == 4.0
    assert float(third.grad["x"]) == 0.0  # d3/dx3 of x**2 * y
    assert isinstance(bad, rows.RowError) and bad.kind == "bad_line"


def test_check_is_called_between_groups_and_rows_and_may_stop():
    program = parse("x + y")
    points = [{"x": 1.0, "y": 2.0}, {"x": 10**400, "y": 1.0}, {"x": 3.0, "y": 4.0}]
    seen = []
    rows.evaluate_rows(program, points, check=lambda: seen.append(1))
    assert len(seen) == 1 + 3  # the group, then each of its rows alone (one cannot stack)

    class Stop(Exception):
        pass

    def stop():
        raise Stop

    with pytest.raises(Stop):
        rows.evaluate_rows(program, points, check=stop)


def test_plan_groups_in_order_of_first_row():
    items = [
        rows.Row({"x": 1.0}),
        rows.Row({"x": 1.0}, op="hessian"),
        rows.Row({"x": [1.0, 2.0]}),
        rows.Row({"x": 2.0}),
    ]
    assert rows.plan(items) == [(True, [0, 3]), (False, [1]), (True, [2])]
    assert rows.plan(items, ["a", "a", "a", "b"]) == [
        (True, [0]),
        (False, [1]),
        (True, [2]),
        (True, [3]),
    ]


def test_wrt_as_text_or_list_on_a_row():
    program = parse("x * y")
    a, b = rows.evaluate_rows(
        program,
        [rows.Row({"x": 2.0, "y": 3.0}, wrt="y"), rows.Row({"x": 1.0, "y": 5.0}, wrt=["y"])],
    )
    assert list(a.grad) == list(b.grad) == ["y"]
    assert [float(a.grad["y"]), float(b.grad["y"])] == [2.0, 1.0]
    with pytest.raises(ValueError, match="not 'hessian'"):
        rows.evaluate_group(program, 1, {"x": np.ones(1), "y": np.ones(1)}, op="hessian")


def test_a_ragged_value_is_that_rows_error():
    # np.shape() of a ragged list raises: the row is evaluated alone and gets bad_value.
    import autograd_cli as ag
    from autograd_cli.core.errors import BadValueError
    from autograd_cli.core.rows import evaluate_rows

    out = evaluate_rows(ag.parse("sum(x)"), [{"x": [1.0, 2.0]}, {"x": [1, [2]]}, {"x": [3.0, 4.0]}])
    assert float(out[0].value) == 3.0 and float(out[2].value) == 7.0
    assert isinstance(out[1], BadValueError)
