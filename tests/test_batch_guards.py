"""Lines the vectorised evaluator must refuse: the same answer as one line at a time.

A batching rule in core/batch.py turns a per-row op into one op over a leading batch axis.
Some per-row shapes have no such rewrite (a reshape target that does not fit the row, an
index with more entries than the row has axes, a matmul with a scalar, rows that do not
stack); for those the rule raises ``Unbatchable`` and the batch command evaluates the rows
one by one, so each line gets the error its single command prints.  Without the guard the
batched op can *succeed* on the stacked array where every row fails: ``reshape(x, [-1, -1])``
of a batch of vectors is a valid NumPy reshape of the (B, 6) array once the rule has filled
in one of the two unknowns.  Mutation testing (bench/mutate.py) showed no test built these
shapes.

Each case is checked twice: ``evaluate_batch`` raises ``Unbatchable`` itself (not some other
exception that the batch command happens to catch), and the batch command's output lines
are, as text, what the single command prints with ``--json``.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from test_batch_property import assert_same_as_single_lines, reference_line, run_batch_file

from autograd_cli.cli import jsonout, render
from autograd_cli.core import batch as core_batch
from autograd_cli.core.errors import AutogradCliError
from autograd_cli.grammar import parse

ROWS = [
    {"x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "u": [1.0, 2.0], "w": [1.0, 2.0, 3.0], "s": 2.0},
    {"x": [0.5, -1.0, 2.0, 0.0, 3.0, -2.0], "u": [-1.0, 0.5], "w": [3.0, 0.0, 1.0], "s": -1.5},
    {"x": [6.0, 5.0, 4.0, 3.0, 2.0, 1.0], "u": [2.0, 2.0], "w": [0.0, 1.0, -1.0], "s": 0.25},
]

#: (expression, the reason its rows cannot be batched).  Every row of every case fails
#: on its own with a ``shape`` error.
REFUSED = [
    ("sum(reshape(x, [-1, -1]))", "two unknown dimensions"),
    ("sum(reshape(x, [0, -1]))", "a zero-sized known part"),
    ("sum(reshape(x, [4, -1]))", "a known part that does not divide the row"),
    ("sum(reshape(x, [4]))", "a target of another size"),
    ("sum(reshape(x, [5, 2]))", "a target of another size, two dimensions"),
    ("x[0, 1]", "more indices than the row has axes"),
    ("x[1:, 0]", "a slice and an index on a vector"),
    ("sum([u, w])", "rows that do not stack"),
    ("sum([[u], [w]])", "nested rows that do not stack"),
    ("sum(s @ u)", "a scalar on the left of @"),
    ("sum(u @ s)", "a scalar on the right of @"),
    ("sum(u, 1)", "an axis beyond the row's rank"),
    ("dot(u, w)", "dot of vectors of different lengths"),
]


def _columns(expr: str) -> tuple:
    program = parse(expr)
    columns = {n: np.array([r[n] for r in ROWS], dtype=np.float64) for n in program.inputs}
    return program, columns


def _records(expr: str, op: str) -> list:
    program, columns = _columns(expr)
    return [
        {"op": op, "expr": expr, "vars": {n: ROWS[i][n] for n in columns}} for i in range(len(ROWS))
    ]


@pytest.mark.parametrize("grad", [False, True], ids=["eval", "grad"])
@pytest.mark.parametrize("expr, why", REFUSED, ids=[e for e, _ in REFUSED])
def test_the_vectorised_evaluator_refuses(expr, why, grad):
    program, columns = _columns(expr)
    with pytest.raises(core_batch.Unbatchable):
        core_batch.evaluate_batch(program, columns, len(ROWS), grad=grad)


def _single_line_error(line: int, record: dict) -> str:
    """What the single command prints with --json for a record that fails, plus "line"."""
    with pytest.raises(AutogradCliError) as info:
        reference_line(line, record)
    exc = info.value
    return jsonout.dumps({"line": line, **render.error_json(exc.kind, str(exc), **exc.details)})


@pytest.mark.parametrize("op", ["eval", "grad"])
@pytest.mark.parametrize(
    "expr, why", REFUSED + [("sum(u @ x)", "vectors of different lengths")], ids=str
)
def test_refused_lines_get_their_single_line_errors(expr, why, op):
    records = _records(expr, op)
    lines, code, _ = run_batch_file(records)
    expected = [_single_line_error(i + 1, r) for i, r in enumerate(records)]
    assert lines == expected
    assert all('"kind": "shape"' in line for line in lines), lines
    assert code == 1


#: Near misses: shapes the rules do batch, with the per-row answer.
BATCHED = [
    ("sum(reshape(x, [-1, 2]) ** 2)", lambda r: float(np.sum(np.square(r["x"])))),
    ("sum(reshape(x, [2, 3]) @ w)", lambda r: float(np.sum(np.reshape(r["x"], (2, 3)) @ r["w"]))),
    ("x[1] * s", lambda r: r["x"][1] * r["s"]),
    ("sum([u, u * s])", lambda r: float(np.sum(r["u"]) * (1 + r["s"]))),
    ("sum([s, u[0]])", lambda r: r["s"] + r["u"][0]),
    ("dot(u, u * s)", lambda r: float(np.dot(r["u"], np.multiply(r["u"], r["s"])))),
    ("u @ u", lambda r: float(np.dot(r["u"], r["u"]))),
]


@pytest.mark.parametrize("expr, expected", BATCHED, ids=[e for e, _ in BATCHED])
def test_near_misses_are_batched_and_exact(expr, expected):
    program, columns = _columns(expr)
    result = core_batch.evaluate_batch(program, columns, len(ROWS), grad=True)
    assert result.value.tolist() == [expected(r) for r in ROWS]
    records = _records(expr, "grad")
    lines, code, spy = run_batch_file(records)
    assert code == 0
    assert_same_as_single_lines(records, lines, spy)


def test_a_zero_cotangent_through_dot_keeps_inf_rows_exact():
    # 0*dot(u, w) with an inf in w: the cotangent reaching dot is 0, and a zero cotangent
    # stays zero (core.ops.chain), so du = 0 where one line alone gives 0 (not 0*inf = nan).
    rows = [
        {"u": [1.0, 2.0], "w": [math.inf, 1.0]},
        {"u": [3.0, -1.0], "w": [2.0, -math.inf]},
        {"u": [0.5, 0.5], "w": [1.0, 2.0]},
    ]
    records = [{"op": "grad", "expr": "0*dot(u, w) + sum(u)", "vars": r} for r in rows]
    lines, code, spy = run_batch_file(records)
    assert_same_as_single_lines(records, lines, spy)
    assert [json.loads(line)["grad"]["u"] for line in lines] == [[1.0, 1.0]] * 3
    # and the other partial: an inf in u with a zero cotangent leaves dw = 0 (times 1)
    rows = [{"u": [math.inf, 1.0], "w": [1.0, 2.0]}, {"u": [1.0, -math.inf], "w": [3.0, 4.0]}]
    records = [{"op": "grad", "expr": "0*dot(u, w) + sum(w)", "vars": r} for r in rows]
    lines, code, spy = run_batch_file(records)
    assert_same_as_single_lines(records, lines, spy)
    assert [json.loads(line)["grad"]["w"] for line in lines] == [[1.0, 1.0]] * 2


def test_a_batched_matmul_over_the_memory_limit_names_matmul():
    # the batched product is a private op of core.batch; its limit message names the public
    # one, as the line alone would ("matmul's result would take ...", not the private name)
    from autograd_cli.core import limits
    from autograd_cli.core.errors import LimitError

    expr = "x @ [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]]"
    with limits.using("100K"), pytest.raises(LimitError) as info:
        core_batch.evaluate_batch(parse(expr), {"x": np.ones((5000, 2))}, 5000, grad=False)
    assert str(info.value).startswith("matmul's result would take"), str(info.value)


def test_a_program_with_one_ellipsis_index_is_batched():
    # The language has no "...", but a Program built in Python may index with one Ellipsis;
    # the batch rule puts the batch axis in front of it (two Ellipses are refused).
    from autograd_cli.core.program import Expr, Program

    x = Expr.var("x")
    SUM_ALL = {"axis": None, "keepdims": False}  # noqa: N806 - what the parser gives sum(x)
    out = Expr("sum", (Expr("getitem", (x,), attrs={"index": (Ellipsis, 0)}),), attrs=SUM_ALL)
    program = Program(source="sum(x[..., 0])", output=out, inputs=["x"])
    data = np.arange(12.0).reshape(2, 2, 3)  # two rows of (2, 3)
    result = core_batch.evaluate_batch(program, {"x": data}, 2, grad=True)
    assert result.value.tolist() == [data[i][..., 0].sum() for i in range(2)]
    expected_grad = np.zeros((2, 2, 3))
    expected_grad[..., 0] = 1.0
    assert result.grad["x"].tolist() == expected_grad.tolist()
    two = Expr("getitem", (x,), attrs={"index": (Ellipsis, Ellipsis)})
    with pytest.raises(core_batch.Unbatchable):
        core_batch.evaluate_batch(
            Program(source="x[..., ...]", output=Expr("sum", (two,), attrs=SUM_ALL), inputs=["x"]),
            {"x": data},
            2,
        )


# ---------------------------------------------------------------------------
# Constants and lower-rank rows mixed with batched operands
# ---------------------------------------------------------------------------

#: (expression, columns of three rows, the per-row value, the per-row gradient) computed
#: with NumPy from each row alone.
_U = np.array([[1.0, 2.0], [3.0, -4.0], [0.5, 6.0]])
_S = np.array([7.0, -8.0, 9.5])
_X = np.arange(18.0).reshape(3, 6) - 4.0
MIXED = [
    # a per-row scalar stacked with a per-row vector: the scalar broadcasts within its row
    (
        "sum([s, u] @ [1, 3])",
        {"s": _S, "u": _U},
        lambda r: float(np.sum(np.array([[r["s"], r["s"]], r["u"]]) @ [1.0, 3.0])),
        lambda r: {"s": 4.0, "u": [1.0, 3.0]},
    ),
    # a constant vector on the left of @ and a per-row matrix on the right
    (
        "sum([1, 2] @ reshape(x, [2, 3]))",
        {"x": _X},
        lambda r: float(np.sum(np.array([1.0, 2.0]) @ np.reshape(r["x"], (2, 3)))),
        lambda r: {"x": [1.0, 1.0, 1.0, 2.0, 2.0, 2.0]},
    ),
    # dot of a constant vector and a per-row vector: the gradient is the constant, per row
    (
        "dot([1, 2], u)",
        {"u": _U},
        lambda r: float(np.dot([1.0, 2.0], r["u"])),
        lambda r: {"u": [1.0, 2.0]},
    ),
]


@pytest.mark.parametrize("rows", [2, 3])
@pytest.mark.parametrize("expr, columns, value, gradient", MIXED, ids=[m[0] for m in MIXED])
def test_constants_and_lower_rank_rows_are_batched_and_exact(expr, columns, value, gradient, rows):
    columns = {n: c[:rows] for n, c in columns.items()}
    per_row = [{n: c[i].tolist() for n, c in columns.items()} for i in range(rows)]
    result = core_batch.evaluate_batch(parse(expr), columns, rows, grad=True)
    assert result.value.tolist() == [value(r) for r in per_row]
    for name in columns:
        assert result.grad[name].tolist() == [gradient(r)[name] for r in per_row]
    records = [{"op": "grad", "expr": expr, "vars": r} for r in per_row]
    lines, code, spy = run_batch_file(records)
    assert code == 0
    assert_same_as_single_lines(records, lines, spy)
    assert [json.loads(line)["value"] for line in lines] == [value(r) for r in per_row]


def test_a_program_with_mT_of_per_row_matrices_is_batched():
    # The language has no .mT, but a Program built in Python may use it; a per-row matrix
    # is rank 2, which the mT rule batches as the (B, 2, 3) array's own mT.
    from autograd_cli.core.program import Expr, Program

    x = Expr.var("x")
    mt = Expr("mT", (x,))
    weights = Expr.const([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    out = Expr("sum", (Expr("mul", (mt, weights)),), attrs={"axis": None, "keepdims": False})
    program = Program(source="sum(x.mT * W)", output=out, inputs=["x"])
    data = np.arange(12.0).reshape(2, 2, 3) - 5.0
    w = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    result = core_batch.evaluate_batch(program, {"x": data}, 2, grad=True)
    assert result.value.tolist() == [float(np.sum(data[i].T * w)) for i in range(2)]
    assert result.grad["x"].tolist() == [w.T.tolist()] * 2


@pytest.mark.parametrize(
    "expr, values",
    [
        ("abs(x) + max(y, 0)", {"x": 0.0, "y": 0.0}),
        ("relu(x) * y", {"x": 0.0, "y": 2.0}),
        ("abs(x) + max(y, 0)", {"x": 0.0, "y": 1.0}),
    ],
)
def test_a_batch_of_one_row_at_a_kink_warns_as_the_single_line_does(expr, values):
    # A group of one row: each per-row scalar is a (1,) array, so the kink rules are asked
    # about one-element slices; the warnings must be the ones the single command prints.
    record = {"op": "grad", "expr": expr, "vars": values}
    expected = json.loads(reference_line(1, record))["warnings"]
    columns = {n: np.array([v]) for n, v in values.items()}
    result = core_batch.evaluate_batch(parse(expr), columns, 1, grad=True)
    assert result.row_warnings(0) == expected
    lines, code, spy = run_batch_file([record])
    assert code == 0
    assert_same_as_single_lines([record], lines, spy)


def test_a_batched_matmul_with_a_vector_on_the_right_checks_its_result_size():
    # A @ v with v a per-row vector: v is promoted to a (2, 1) matrix and the size rule sees
    # that promoted shape: 5000 rows of 10 numbers (400 kB) are over a 100K limit, as for the
    # lines one at a time (a promoted (2, 0) would count an empty result and let it through)
    from autograd_cli.core import limits
    from autograd_cli.core.errors import LimitError

    matrix = "[" + ", ".join(["[1, 2]"] * 10) + "]"
    program = parse(f"{matrix} @ v")
    with limits.using("100K"), pytest.raises(LimitError) as info:
        core_batch.evaluate_batch(program, {"v": np.ones((5000, 2))}, 5000, grad=False)
    assert str(info.value).startswith("matmul's result would take"), str(info.value)
    # under the limit it runs: 50 rows of 10 numbers (4 kB), each row's A @ v = 3 each
    with limits.using("100K"):
        result = core_batch.evaluate_batch(program, {"v": np.ones((50, 2))}, 50, grad=False)
    assert result.value.tolist() == [[3.0] * 10] * 50
