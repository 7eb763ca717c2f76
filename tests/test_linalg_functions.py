"""The linear-algebra functions (core/ops/linalg.py) through the real command line.

* values and gradients of det, inv, solve, cholesky, trace, diag, outer, triu, tril and
  tensordot against closed forms and exact oracles, and the conventions: det's gradient at
  singular matrices (the cofactors), nan entries, cholesky of the symmetric part;
* Hessians of functions of det and inv (closed forms, and PyTorch);
* errors: shapes that do not fit, singular matrices, matrices that are not positive
  definite, wrong ranks, bad attributes: exit 1 or 2 with a message in the tool's words,
  never a traceback;
* printing: each form prints as text that parses back to the same expression and value,
  and ``graph`` names PyTorch's nodes;
* batch: a JSONL file of several rows gives what the single commands give, line for line,
  through the vectorised ("trailing", 2) rule and through the row-by-row path;
* PyTorch (the ``torch`` fixture: skipped cleanly without it): values and gradients of each
  function, and Hessians, in float64.

The op-wide checks (tests/test_ops_gradcheck.py: vjp, jvp and second order against central
differences; tests/test_forward_oracles.py; tests/test_op_table.py) take their cases from
tests/cases_linalg.py.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from cases_linalg import f_det, f_inv, singular, spd, well_conditioned

from autograd_cli.core import api
from autograd_cli.core import batch as core_batch
from autograd_cli.core.errors import EvaluationError
from autograd_cli.core.printing import to_text
from autograd_cli.grammar import parse

A2 = [[1.0, 2.0], [3.0, 4.0]]
A3 = [[2.0, -1.0, 0.5], [1.0, 3.0, -2.0], [0.25, 1.0, 4.0]]
SPD3 = [[4.0, 1.0, 0.5], [1.0, 3.0, -0.25], [0.5, -0.25, 2.0]]
SINGULAR2 = [[1.0, 2.0], [2.0, 4.0]]
SINGULAR3 = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]


def run(cli, command, expr, **values):
    """``autograd-cli COMMAND EXPR --NAME VALUE ... --json``: the JSON document (exit 0)."""
    argv = [command, expr]
    for name, value in values.items():
        argv += [f"--{name}", json.dumps(value)]
    r = cli(*argv, "--json")
    assert r.code == 0, r.out + r.err
    return r.json


def arr(x):
    return np.asarray(x, dtype=np.float64)


def cofactors(a) -> np.ndarray:
    """The cofactor matrix from exact determinants of the minors (fractions)."""
    a = [list(map(float, row)) for row in a]
    n = len(a)
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            minor = [row[:j] + row[j + 1 :] for k, row in enumerate(a) if k != i]
            out[i, j] = (-1) ** (i + j) * float(f_det(minor) if minor else 1)
    return out


# ---------------------------------------------------------------------------
# Values and gradients through the command line
# ---------------------------------------------------------------------------


def test_det_value_and_gradient(cli):
    doc = run(cli, "grad", "det(A)", A=A3)
    assert doc["value"] == pytest.approx(float(f_det(A3)), rel=1e-14)
    np.testing.assert_allclose(doc["grad"]["A"], cofactors(A3), rtol=1e-13)
    doc = run(cli, "grad", "det(A)", A=[[-3.5]])
    assert doc["value"] == -3.5 and doc["grad"]["A"] == [[1.0]]


@pytest.mark.parametrize("matrix", [SINGULAR2, SINGULAR3, [[0.0]], [[0.0, 0.0], [0.0, 0.0]]])
def test_det_gradient_at_a_singular_matrix_is_the_cofactor_matrix(cli, matrix):
    # finite (the derivative of a polynomial), made from the minors: PyTorch's create_graph
    # backward gives the same, its first-order backward gives 0 at det exactly 0
    doc = run(cli, "grad", "det(A)", A=matrix)
    assert doc["value"] == 0.0
    # (LU rounds: the 2x2 minors of SINGULAR3 come out within an ulp or two of the integers)
    np.testing.assert_allclose(doc["grad"]["A"], cofactors(matrix), rtol=1e-14, atol=1e-14)


def test_det_of_a_stack_with_some_singular_matrices(cli):
    doc = run(cli, "grad", "sum(det(A) * [1, 2, 3])", A=[A3, SINGULAR3, SPD3])
    np.testing.assert_allclose(
        doc["grad"]["A"],
        [cofactors(A3), 2 * cofactors(SINGULAR3), 3 * cofactors(SPD3)],
        rtol=1e-13,
        atol=1e-13,
    )


def test_the_singular_samplers_are_exactly_singular():
    # the op-wide gradient checks of det at singular matrices (tests/cases_linalg.py) take
    # the minors' way only if det is exactly 0 there
    rng = np.random.default_rng(0)
    for shape in ((2, 2), (3, 3), (5, 4, 4)):
        assert np.all(np.linalg.det(singular(rng, shape)) == 0)


def test_inv_value_and_gradient(cli):
    doc = run(cli, "grad", "sum(inv(A))", A=A3)
    inv = np.array([[float(x) for x in row] for row in f_inv(A3)])
    assert doc["value"] == pytest.approx(inv.sum(), rel=1e-13)
    # d sum(inv(A)) / dA = -inv(A)ᵀ 1 1ᵀ inv(A)ᵀ
    ones = np.ones((3, 3))
    np.testing.assert_allclose(doc["grad"]["A"], -inv.T @ ones @ inv.T, rtol=1e-13)
    doc = run(cli, "eval", "inv(A)", A=[[0.25]])
    assert doc["value"] == [[4.0]]


def test_inv_of_a_matrix_with_a_nan_entry_is_nan(cli):
    # as PyTorch: NumPy's inv says "Singular matrix" instead
    nan = float("nan")  # json.dumps writes NaN, which the command line reads
    doc = run(cli, "eval", "inv(A)", A=[[nan, 1.0], [1.0, 1.0]])
    assert doc["value"] == [["nan", "nan"], ["nan", "nan"]]
    doc = run(cli, "eval", "inv(A)", A=[[[nan, 1.0], [1.0, 1.0]], [[2.0, 0.0], [0.0, 4.0]]])
    assert doc["value"] == [[["nan", "nan"], ["nan", "nan"]], [[0.5, 0.0], [0.0, 0.25]]]


def test_solve_vector_and_matrix(cli):
    A = arr(A3)
    b = [1.0, -2.0, 0.5]
    doc = run(cli, "grad", "sum(solve(A, b))", A=A3, b=b)
    x = np.linalg.inv(A) @ b
    assert doc["value"] == pytest.approx(x.sum(), rel=1e-13)
    gb = np.linalg.inv(A).T @ np.ones(3)
    np.testing.assert_allclose(doc["grad"]["b"], gb, rtol=1e-13)
    np.testing.assert_allclose(doc["grad"]["A"], -np.outer(gb, x), rtol=1e-13)
    # NumPy 2: a 2-D b is a matrix, a 1-D b a vector, also beside a stack of A
    B = [[1.0, 0.0], [-2.0, 1.0], [0.5, 3.0]]
    doc = run(cli, "eval", "solve(A, B)", A=A3, B=B)
    np.testing.assert_allclose(doc["value"], np.linalg.inv(A) @ arr(B), rtol=1e-13)
    doc = run(cli, "eval", "solve(A, b)", A=[A3, SPD3], b=b)
    assert np.shape(doc["value"]) == (2, 3)
    np.testing.assert_allclose(doc["value"][1], np.linalg.inv(arr(SPD3)) @ b, rtol=1e-13)


def test_cholesky_value_gradient_and_symmetric_part(cli):
    doc = run(cli, "grad", "sum(cholesky(A))", A=SPD3)
    low = np.linalg.cholesky(arr(SPD3))
    assert doc["value"] == pytest.approx(low.sum(), rel=1e-14)
    g = arr(doc["grad"]["A"])
    np.testing.assert_array_equal(g, g.T)  # PyTorch's gradient is symmetric
    doc = run(cli, "eval", "cholesky(A)", A=SPD3)
    np.testing.assert_array_equal(doc["value"], low)  # a symmetric A as it is: NumPy's bits
    # not symmetric: the factor of (A + Aᵀ)/2
    doc = run(cli, "eval", "cholesky(A)", A=[[4.0, 3.0], [1.0, 5.0]])
    np.testing.assert_allclose(
        doc["value"], np.linalg.cholesky([[4.0, 2.0], [2.0, 5.0]]), rtol=1e-15
    )
    # ...and the gradient there is the symmetric part's (PyTorch's symmetric formula)
    doc = run(cli, "grad", "sum(cholesky(A))", A=[[4.0, 3.0], [1.0, 5.0]])
    sym = run(cli, "grad", "sum(cholesky(A))", A=[[4.0, 2.0], [2.0, 5.0]])
    np.testing.assert_allclose(doc["grad"]["A"], sym["grad"]["A"], rtol=1e-15)


def test_trace_diag_outer_triu_tril_tensordot(cli):
    M = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    doc = run(cli, "grad", "trace(A)", A=M)
    assert doc["value"] == 6.0 and doc["grad"]["A"] == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    doc = run(cli, "grad", "sum(trace(A) * [1, 2])", A=[A2, A2])
    assert doc["value"] == 15.0
    assert doc["grad"]["A"] == [[[1.0, 0.0], [0.0, 1.0]], [[2.0, 0.0], [0.0, 2.0]]]

    doc = run(cli, "grad", "sum(diag(v, 1) * [[1, 2, 3], [4, 5, 6], [7, 8, 9]])", v=[1.0, 2.0])
    assert doc["value"] == 1 * 2 + 2 * 6 and doc["grad"]["v"] == [2.0, 6.0]
    doc = run(cli, "grad", "sum(diag(A, k=-1) * [10, 20])", A=[[1, 2], [3, 4], [5, 6]])
    assert doc["value"] == 10 * 3 + 20 * 6
    assert doc["grad"]["A"] == [[0.0, 0.0], [10.0, 0.0], [0.0, 20.0]]
    doc = run(cli, "eval", "diag(A, 5)", A=A2)
    assert doc["value"] == [] and doc["shape"] == [0]

    doc = run(cli, "grad", "sum(outer(a, b) * [[1, 2, 3], [4, 5, 6]])", a=[1.0, -1.0], b=[1, 2, 3])
    assert doc["grad"]["a"] == [14.0, 32.0] and doc["grad"]["b"] == [-3.0, -3.0, -3.0]
    doc = run(cli, "eval", "outer(A, b)", A=A2, b=[1, 10])
    assert doc["value"] == [[1.0, 10.0], [2.0, 20.0], [3.0, 30.0], [4.0, 40.0]]

    doc = run(cli, "grad", "sum(triu(A, 1) * A)", A=A3)
    assert doc["grad"]["A"] == (2 * np.triu(arr(A3), 1)).tolist()
    doc = run(cli, "grad", "sum(tril(A, k=-1) * A)", A=A3)
    assert doc["grad"]["A"] == (2 * np.tril(arr(A3), -1)).tolist()
    doc = run(cli, "eval", "tril(A)", A=[A2, A2])
    assert doc["value"] == [[[1.0, 0.0], [3.0, 4.0]]] * 2

    doc = run(cli, "grad", "tensordot(A, B)", A=A2, B=[[1, 0], [2, -1]])
    assert doc["value"] == 1 + 6 - 4
    assert doc["grad"]["A"] == [[1.0, 0.0], [2.0, -1.0]] and doc["grad"]["B"] == A2
    doc = run(cli, "eval", "tensordot(A, v, axes=1)", A=A2, v=[1, -1])
    assert doc["value"] == [-1.0, -1.0]


# ---------------------------------------------------------------------------
# Hessians
# ---------------------------------------------------------------------------


def test_hessian_of_det_is_exact(cli):
    # det [[a, b], [c, d]] = a d - b c: d²/da dd = 1, d²/db dc = -1, the rest 0 (also at a
    # singular matrix, where the gradient is made from the minors)
    for matrix in (A2, SINGULAR2):
        h = arr(run(cli, "hessian", "det(A)", A=matrix)["hessian"]["A"]["A"]).reshape(4, 4)
        want = np.zeros((4, 4))
        want[0, 3] = want[3, 0] = 1.0
        want[1, 2] = want[2, 1] = -1.0
        np.testing.assert_allclose(h, want, atol=1e-14)


def test_hessian_of_log_det_and_of_inv(cli):
    # d² log det(A) / dA_ij dA_kl = -inv(A)_li inv(A)_jk
    A = arr(A3) + 2 * np.eye(3)
    inv = np.linalg.inv(A)
    h = arr(run(cli, "hessian", "log(det(A))", A=A.tolist())["hessian"]["A"]["A"])
    np.testing.assert_allclose(h, -np.einsum("li,jk->ijkl", inv, inv), rtol=1e-12, atol=1e-14)
    # sum(inv(A)): central differences of the gradient
    g = run(cli, "hessian", "sum(inv(A))", A=A.tolist())
    h = arr(g["hessian"]["A"]["A"]).reshape(9, 9)

    def grad_at(m):
        return np.asarray(api.grad_of(parse("sum(inv(A))"), {"A": m}).grad["A"]).ravel()

    step = 1e-6
    numeric = np.empty((9, 9))
    for k in range(9):
        e = np.zeros(9)
        e[k] = step
        numeric[:, k] = (grad_at(A + e.reshape(3, 3)) - grad_at(A - e.reshape(3, 3))) / (2 * step)
    np.testing.assert_allclose(h, numeric, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(h, h.T, rtol=1e-12, atol=1e-13)


def test_hessian_through_cholesky_and_solve(cli):
    doc = run(cli, "hessian", "sum(cholesky(A)) + sum(solve(A, b))", A=SPD3, b=[1.0, 2.0, 3.0])
    h = arr(doc["hessian"]["A"]["A"]).reshape(9, 9)
    np.testing.assert_allclose(h, h.T, rtol=1e-10, atol=1e-12)
    assert np.isfinite(h).all()


# ---------------------------------------------------------------------------
# Errors: exit 1 or 2, the tool's own words, no traceback
# ---------------------------------------------------------------------------

ERRORS = [
    # (command line, exit code, error kind, a fragment of the message)
    (["eval", "det(A)", "--A", "[[1,2,3],[4,5,6]]"], 1, "shape", "square matrix, not a 2x3"),
    (["grad", "det(x)", "--x", "3"], 1, "shape", "not a number"),
    (["eval", "inv(A)", "--A", "[1,2]"], 1, "shape", "not a vector of shape (2,)"),
    (["grad", "sum(inv(A))", "--A", "[[1,2],[2,4]]"], 1, "evaluation", "singular"),
    (
        ["eval", "inv(A)", "--A", "[[[1,0],[0,1]],[[1,1],[1,1]]]"],
        1,
        "evaluation",
        "matrix [1] of the stack is singular",
    ),
    (["eval", "solve(A, b)", "--A", "[[1,2],[2,4]]", "--b", "[1,2]"], 1, "evaluation", "singular"),
    (["eval", "solve(A, b)", "--A", "[[1,2],[3,4]]", "--b", "[1,2,3]"], 1, "shape", "3 entries"),
    (["eval", "solve(A, b)", "--A", "[[1,2],[3,4]]", "--b", "3"], 1, "shape", "not a number"),
    (["eval", "solve(A, b)", "--A", "[[1,2,3],[4,5,6]]", "--b", "[1,2]"], 1, "shape", "square"),
    (
        ["grad", "sum(cholesky(A))", "--A", "[[1,2],[2,1]]"],
        1,
        "evaluation",
        "not positive definite (its leading minor of order 2 is not)",
    ),
    (["eval", "cholesky(A)", "--A", "[[-1]]"], 1, "evaluation", "positive definite"),
    (["eval", "trace(v)", "--v", "[1,2]"], 1, "shape", "needs a matrix"),
    (["eval", "triu(v)", "--v", "[1,2]"], 1, "shape", "needs a matrix"),
    (["eval", "tril(x)", "--x", "2"], 1, "shape", "needs a matrix"),
    (["eval", "diag(A)", "--A", "[[[1]]]"], 1, "shape", "a vector or a matrix"),
    (["eval", "diag(x)", "--x", "1"], 1, "shape", "a vector or a matrix"),
    (["eval", "tensordot(A, b)", "--A", "[[1,2],[3,4]]", "--b", "[1,2]"], 1, "shape", "2 axes"),
    (
        ["eval", "tensordot(A, B, 1)", "--A", "[[1,2],[3,4]]", "--B", "[[1,2,3]]"],
        1,
        "shape",
        "are not the first 1",
    ),
    (["eval", "diag(v, 100000)", "--v", "[1]"], 1, "limit", "memory limit"),
    (["eval", "det(A, A)", "--A", "[[1]]"], 2, "arity", "det()"),
    (["eval", "triu(A, 1.5)", "--A", "[[1]]"], 2, "input", "must be an integer"),
    (["eval", "diag(v, k=x)", "--v", "[1]", "--x", "1"], 2, "input", "constant"),
    (["eval", "solve(A)", "--A", "[[1]]"], 2, "arity", "solve()"),
]


@pytest.mark.parametrize(
    ("argv", "code", "kind", "fragment"), ERRORS, ids=[" ".join(e[0][:2]) for e in ERRORS]
)
def test_errors_are_clear(cli, argv, code, kind, fragment):
    r = cli(*argv, "--json")
    assert r.code == code, r.out + r.err
    assert "Traceback" not in r.out + r.err
    error = r.json["error"]
    assert error["kind"] == kind, error
    assert fragment in error["message"], error
    assert "LinAlgError" not in error["message"] and "Singular matrix" not in error["message"]
    plain = cli(*argv)  # the same without --json: one line on stderr
    assert plain.code == code and "Traceback" not in plain.err
    assert plain.err.startswith("autograd-cli: error:"), plain.err


# ---------------------------------------------------------------------------
# Printing
# ---------------------------------------------------------------------------

PRINTED = [
    ("det(A) + trace(A)", {"A": A3}),
    ("inv(A @ A) + inv(A)", {"A": A3}),
    ("-inv(A)**2", {"A": A3}),
    ("solve(A, b)", {"A": A3, "b": [1.0, 2.0, 3.0]}),
    ("cholesky(A + 1)", {"A": SPD3}),
    ("diag(v, k=1) + diag(v, 1)", {"v": [1.0, 2.0]}),
    ("diag(diag(A, -1))", {"A": A3}),
    ("outer(a, a + 1)", {"a": [1.0, 2.0]}),
    ("triu(A, 1) - tril(A, k=-1) + triu(A)", {"A": A3}),
    ("tensordot(A, A) + tensordot(A, A, axes=1)[0, 0] + sum(tensordot(A, A, 0))", {"A": A3}),
]


@pytest.mark.parametrize(("text", "values"), PRINTED, ids=[p[0] for p in PRINTED])
def test_printed_text_parses_back(text, values):
    expr = parse(text).output
    printed = to_text(expr)
    again = parse(printed).output
    assert to_text(again) == printed
    want = api.eval_of(parse(text), values).value
    got = api.eval_of(parse(printed), values).value
    np.testing.assert_array_equal(got, want)


def test_graph_names_pytorch_nodes(cli):
    r = cli(
        "graph",
        "det(A) + trace(inv(A)) + sum(cholesky(S)) + sum(solve(A, v)) + sum(diag(v))"
        " + sum(diag(A)) + sum(outer(v, v)) + sum(triu(A)) + sum(tril(A)) + tensordot(A, A)",
        "--A",
        json.dumps(A3),
        "--S",
        json.dumps(SPD3),
        "--v",
        "[1, 2, 3]",
    )
    assert r.code == 0, r.err
    for name in (
        "LinalgDetBackward0",
        "LinalgInvExBackward0",
        "TraceBackward0",
        "LinalgCholeskyExBackward0",
        "LinalgSolveExBackward0",
        "DiagEmbedBackward0",
        "DiagonalBackward0",
        "MulBackward0",
        "TriuBackward0",
        "TrilBackward0",
        "ViewBackward0",
    ):
        assert name in r.out, name


# ---------------------------------------------------------------------------
# Batch
# ---------------------------------------------------------------------------


def _rows(expr, sampler_by_name, count=4, seed=0):
    rng = np.random.default_rng(seed)
    return [
        {"expr": expr, "vars": {n: s(rng).tolist() for n, s in sampler_by_name.items()}}
        for _ in range(count)
    ]


def square(n):
    return lambda rng: well_conditioned(rng, (n, n))


def positive(n):
    return lambda rng: spd(rng, (n, n))


def vector(n):
    return lambda rng: rng.uniform(-2, 2, size=n)


def matrix(m, n):
    return lambda rng: rng.uniform(-2, 2, size=(m, n))


TRAILING = [  # rows of rank 2: the ("trailing", 2) rule evaluates them together
    ("det(A)", {"A": square(3)}),
    ("sum(inv(A) * A)", {"A": square(3)}),
    ("sum(solve(A, B))", {"A": square(3), "B": matrix(3, 2)}),
    ("sum(cholesky(S))", {"S": positive(3)}),
    ("trace(A @ A)", {"A": matrix(3, 3)}),
    ("sum(triu(A, 1) * A) + sum(tril(A, k=-1))", {"A": matrix(3, 4)}),
    ("log(det(A)) + trace(inv(A))", {"A": positive(2)}),
]
ROWS = [  # evaluated row by row: diag's rank decides what it does; outer flattens
    ("sum(diag(v, 1))", {"v": vector(3)}),
    ("sum(outer(a, b))", {"a": vector(2), "b": vector(3)}),
    ("tensordot(A, B)", {"A": matrix(2, 3), "B": matrix(2, 3)}),
    ("sum(solve(A, b))", {"A": square(3), "b": vector(3)}),  # ranks 2 and 1
]


def _batch(cli, tmp_path, rows):
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    r = cli("batch", str(path))
    return r, [json.loads(line) for line in r.out.splitlines()]


def _single(cli, row):
    argv = [row.get("op", "grad"), row["expr"]]
    for name, value in row["vars"].items():
        argv += [f"--{name}", json.dumps(value)]
    r = cli(*argv, "--json")
    return r.json


@pytest.mark.parametrize(("expr", "samplers"), TRAILING + ROWS, ids=[t[0] for t in TRAILING + ROWS])
def test_batch_equals_single_commands(cli, tmp_path, expr, samplers):
    rows = _rows(expr, samplers)
    r, docs = _batch(cli, tmp_path, rows)
    assert r.code == 0, r.err
    assert [d.pop("line") for d in docs] == [1, 2, 3, 4]
    assert docs == [_single(cli, row) for row in rows]


@pytest.mark.parametrize(("expr", "samplers"), TRAILING, ids=[t[0] for t in TRAILING])
def test_trailing_rule_batches_rows_exactly(expr, samplers):
    rows = _rows(expr, samplers, count=5, seed=1)
    program = parse(expr)
    columns = {n: np.array([r["vars"][n] for r in rows]) for n in samplers}
    res = core_batch.evaluate_batch(program, columns, len(rows), grad=True)  # no Unbatchable
    for i, row in enumerate(rows):
        one = api.grad_of(program, row["vars"])
        np.testing.assert_array_equal(res.value[i], one.value)
        for name in one.grad:
            np.testing.assert_array_equal(res.grad[name][i], one.grad[name])


@pytest.mark.parametrize(("expr", "samplers"), ROWS, ids=[t[0] for t in ROWS])
def test_row_ops_are_refused_by_the_vectorised_evaluator(expr, samplers):
    rows = _rows(expr, samplers)
    columns = {n: np.array([r["vars"][n] for r in rows]) for n in samplers}
    with pytest.raises(core_batch.Unbatchable):
        core_batch.evaluate_batch(parse(expr), columns, len(rows), grad=True)


def test_batch_with_singular_rows(cli, tmp_path):
    # det's gradient at a singular row of a batch is its cofactor matrix, the other rows'
    # det inv(A)ᵀ, as one row at a time
    mats = [A3, SINGULAR3, SPD3, [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [0.0, 1.0, 5.0]]]
    rows = [{"expr": "det(A)", "vars": {"A": m}} for m in mats]
    columns = {"A": np.array(mats)}
    res = core_batch.evaluate_batch(parse("det(A)"), columns, len(mats), grad=True)
    for i, m in enumerate(mats):
        np.testing.assert_array_equal(
            res.grad["A"][i], api.grad_of(parse("det(A)"), {"A": m}).grad["A"]
        )
    r, docs = _batch(cli, tmp_path, rows)
    assert r.code == 0
    assert [{k: v for k, v in d.items() if k != "line"} for d in docs] == [
        _single(cli, row) for row in rows
    ]
    # inv of a singular row: that row fails with the single command's error, the others not
    rows = [{"expr": "sum(inv(A))", "vars": {"A": m}} for m in mats]
    with pytest.raises(EvaluationError):
        core_batch.evaluate_batch(parse("sum(inv(A))"), columns, len(mats), grad=True)
    r, docs = _batch(cli, tmp_path, rows)
    assert r.code == 1
    assert [("error" in d) for d in docs] == [False, True, False, True]
    assert docs[1]["error"]["kind"] == "evaluation" and "singular" in docs[1]["error"]["message"]
    assert {k: v for k, v in docs[2].items() if k != "line"} == _single(cli, rows[2])


# ---------------------------------------------------------------------------
# PyTorch
# ---------------------------------------------------------------------------


def _ours(expr, values):
    r = api.grad_of(parse(expr), values)
    return np.asarray(r.value), {k: np.asarray(v) for k, v in r.grad.items()}


def _theirs(torch, fn, values):
    leaves = {
        k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in values.items()
    }
    out = fn(**leaves)
    grads = torch.autograd.grad(out, list(leaves.values()))
    return out.detach().numpy(), {k: g.numpy() for k, g in zip(leaves, grads)}


RNG = np.random.default_rng(2024)
_W = well_conditioned(RNG, (3, 3))
_WS = well_conditioned(RNG, (2, 3, 3))
_P = spd(RNG, (3, 3))
_PS = spd(RNG, (2, 4, 4))
_V = RNG.uniform(-2, 2, size=3)
_M = RNG.uniform(-2, 2, size=(3, 2))
_R = RNG.uniform(-2, 2, size=(3, 4))
_U = RNG.uniform(-2, 2, size=(3, 4))  # weights that make each output's gradient distinct
_U3 = RNG.uniform(-2, 2, size=(3, 3))
_U4 = RNG.uniform(-2, 2, size=(4, 4))

# (expression, values, the same function in PyTorch: fn(torch, **leaves))
TORCH_CASES = [
    ("det(A)", {"A": _W}, lambda t, A: t.linalg.det(A)),
    (
        "sum(det(A) * [1, -2])",
        {"A": _WS},
        lambda t, A: (t.linalg.det(A) * t.tensor([1.0, -2.0])).sum(),
    ),
    ("sum(inv(A) * U)", {"A": _W, "U": _U3}, lambda t, A, U: (t.linalg.inv(A) * U).sum()),
    ("sum(inv(A) ** 2)", {"A": _WS}, lambda t, A: (t.linalg.inv(A) ** 2).sum()),
    ("sum(solve(A, b) * b)", {"A": _W, "b": _V}, lambda t, A, b: (t.linalg.solve(A, b) * b).sum()),
    (
        "sum(solve(A, B) ** 2)",
        {"A": _W, "B": _M},
        lambda t, A, B: (t.linalg.solve(A, B) ** 2).sum(),
    ),
    (
        "sum(solve(A, b) ** 2)",
        {"A": _WS, "b": _V},
        lambda t, A, b: (t.linalg.solve(A, b) ** 2).sum(),
    ),
    ("sum(cholesky(A) * U)", {"A": _P, "U": _U3}, lambda t, A, U: (t.linalg.cholesky(A) * U).sum()),
    ("sum(cholesky(A) ** 3)", {"A": _PS}, lambda t, A: (t.linalg.cholesky(A) ** 3).sum()),
    ("trace(A) * trace(B)", {"A": _W, "B": _R}, lambda t, A, B: t.trace(A) * t.trace(B)),
    ("sum(diag(v, 1) * U)", {"v": _V, "U": _U4}, lambda t, v, U: (t.diag(v, 1) * U).sum()),
    ("sum(diag(A, -1) ** 2)", {"A": _R}, lambda t, A: (t.diag(A, -1) ** 2).sum()),
    (
        "sum(outer(a, b) * U)",
        {"a": _V, "b": _U[0], "U": _U},
        lambda t, a, b, U: (t.outer(a, b) * U).sum(),
    ),
    ("sum(triu(A, 1) * U)", {"A": _R, "U": _U}, lambda t, A, U: (t.triu(A, 1) * U).sum()),
    ("sum(tril(A, k=-1) ** 2)", {"A": _WS}, lambda t, A: (t.tril(A, -1) ** 2).sum()),
    (
        "tensordot(A, U) + sum(tensordot(A, B, 1) ** 2)",
        {"A": _R, "U": _U, "B": _U.T},
        lambda t, A, U, B: t.tensordot(A, U, 2) + (t.tensordot(A, B, 1) ** 2).sum(),
    ),
]


@pytest.mark.parametrize(("expr", "values", "fn"), TORCH_CASES, ids=[c[0] for c in TORCH_CASES])
def test_values_and_gradients_match_pytorch(torch, expr, values, fn):
    value, grads = _ours(expr, {k: np.asarray(v).tolist() for k, v in values.items()})
    their_value, their_grads = _theirs(torch, lambda **leaves: fn(torch, **leaves), values)
    np.testing.assert_allclose(value, their_value, rtol=1e-12, atol=1e-13)
    assert grads.keys() == their_grads.keys()
    for name in grads:
        np.testing.assert_allclose(grads[name], their_grads[name], rtol=1e-11, atol=1e-12)


def test_every_function_is_compared_with_pytorch():
    used = {name for expr, _, _ in TORCH_CASES for name in re.findall(r"([a-z]+)\(", expr)}
    functions = {"det", "inv", "solve", "cholesky", "trace", "diag", "outer", "triu", "tril"}
    assert functions | {"tensordot"} <= used


@pytest.mark.parametrize("matrix", [SINGULAR2, SINGULAR3])
def test_det_at_a_singular_matrix_matches_pytorch_create_graph(torch, matrix):
    A = torch.tensor(matrix, dtype=torch.float64, requires_grad=True)
    (theirs,) = torch.autograd.grad(torch.linalg.det(A), A, create_graph=True)
    _, ours = _ours("det(A)", {"A": matrix})
    np.testing.assert_allclose(ours["A"], theirs.detach().numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("expr", "fn"),
    [
        ("log(det(A))", lambda t, A: t.log(t.linalg.det(A))),
        ("sum(inv(A) ** 2)", lambda t, A: (t.linalg.inv(A) ** 2).sum()),
        ("sum(cholesky(A) ** 2)", lambda t, A: (t.linalg.cholesky(A) ** 2).sum()),
        (
            "sum(solve(A, [1, 2, 3]) ** 2)",
            lambda t, A: (t.linalg.solve(A, t.tensor([1.0, 2.0, 3.0], dtype=t.float64)) ** 2).sum(),
        ),
    ],
    ids=["logdet", "inv", "cholesky", "solve"],
)
def test_hessians_match_pytorch(cli, torch, expr, fn):
    doc = run(cli, "hessian", expr, A=_P.tolist())
    ours = arr(doc["hessian"]["A"]["A"]).reshape(9, 9)
    theirs = (
        torch.autograd.functional.hessian(
            lambda A: fn(torch, A), torch.tensor(_P, dtype=torch.float64)
        )
        .numpy()
        .reshape(9, 9)
    )
    if "cholesky" in expr:
        # torch's cholesky reads the lower triangle, ours the symmetric part: the two
        # functions agree on symmetric matrices, so their second derivatives agree along
        # symmetric directions E1, E2 (E1 : H E2)
        basis = []
        for i in range(3):
            for j in range(i + 1):
                e = np.zeros((3, 3))
                e[i, j] = e[j, i] = 1.0
                basis.append(e.ravel())
        sym = np.array(basis).T
        ours, theirs = sym.T @ ours @ sym, sym.T @ theirs @ sym
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
