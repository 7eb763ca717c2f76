"""norm with an ord (issue 13): NumPy's numpy.linalg.norm, PyTorch's gradients.

* values against NumPy (``np.linalg.norm(x, ord, axis, keepdims)``) for vector orders (any
  real p, 0, 1, 2, inf, -inf) and matrix orders ('fro', 'nuc', 1, -1, 2, -2, inf, -inf),
  over default axes, chosen axes (swapped, not the last two) and stacks, with keepdims;
* gradients against central differences (float64) through the library and the command
  line; the conventions at kinks (0, ties, zero entries for p <= 1) with their warning;
* the argument order: ``norm(x, axis)`` keeps axis second (SPEC, tests and README pin it),
  ``ord=`` and ``keepdims=`` are keyword-only; ``ord=inf`` is the constant inf; strings
  'fro' and 'nuc' are ord's only;
* errors in the tool's words (exit 1 or 2, never a traceback), printing that parses back,
  ``diff``'s refusal, batch rows equal to single commands, and PyTorch (``torch`` fixture).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from autograd_cli.core import api
from autograd_cli.core import batch as core_batch
from autograd_cli.core.printing import to_text
from autograd_cli.grammar import parse

INF = math.inf
VECTOR_ORDS = [None, 1, 2, 3, 0.5, -1, -1.5, INF, -INF, 0]
MATRIX_ORDS = ["fro", "nuc", 1, -1, 2, -2, INF, -INF]


def spelled(ord) -> str:
    if ord is None:
        return ""
    if isinstance(ord, str):
        return f", ord='{ord}'"
    return f", ord={'inf' if ord == INF else '-inf' if ord == -INF else ord}"


def axis_text(axis) -> str:
    if axis is None:
        return ""
    if isinstance(axis, tuple):
        return f", axis=[{', '.join(map(str, axis))}]"
    return f", axis={axis}"


def value(expr, **values):
    return api.eval_of(parse(expr), {k: np.asarray(v).tolist() for k, v in values.items()}).value


def central(expr, name, values, h=1e-6):
    """d expr / d values[name] by central differences (float64)."""
    x = np.asarray(values[name], dtype=np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        for sign in (1, -1):
            y = x.copy()
            y[i] += sign * h
            g[i] += sign * float(value(expr, **{**values, name: y}))
    return g / (2 * h)


RNG = np.random.default_rng(13)
V = RNG.uniform(-2, 2, size=5)
M = RNG.uniform(-2, 2, size=(3, 4))
T = RNG.uniform(-2, 2, size=(2, 3, 4))


# ---------------------------------------------------------------------------
# Values against NumPy
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("ord", VECTOR_ORDS, ids=repr)
@pytest.mark.parametrize(
    ("x", "axis"), [(V, None), (M, 1), (M, 0), (M, -1), (T, 2), (T, (0,))], ids=str
)
@pytest.mark.parametrize("keepdims", [False, True])
def test_vector_norms_match_numpy(x, axis, ord, keepdims):
    if axis is None and x.ndim != 1 and ord is not None:
        return
    keep = ", keepdims=1" if keepdims else ""
    got = value(f"norm(x{axis_text(axis)}{keep}{spelled(ord)})", x=x)
    want = np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    assert np.shape(got) == np.shape(want)


@pytest.mark.parametrize("ord", MATRIX_ORDS, ids=repr)
@pytest.mark.parametrize(
    ("x", "axis"), [(M, None), (M, (1, 0)), (T, (1, 2)), (T, (2, 0)), (T, (-1, -3))], ids=str
)
@pytest.mark.parametrize("keepdims", [False, True])
def test_matrix_norms_match_numpy(x, axis, ord, keepdims):
    keep = ", keepdims=1" if keepdims else ""
    got = value(f"norm(x{axis_text(axis)}{keep}{spelled(ord)})", x=x)
    want = np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    assert np.shape(got) == np.shape(want)


def test_without_ord_norm_is_unchanged():
    # norm(x) and norm(x, axis) are the 2-norm as before ord: any number of axes
    np.testing.assert_array_equal(value("norm(x)", x=T), np.sqrt(np.sum(T * T)))
    np.testing.assert_array_equal(value("norm(x, axis=0)", x=M), np.sqrt(np.sum(M * M, axis=0)))
    np.testing.assert_array_equal(value("norm(A, 1)", A=M), np.sqrt(np.sum(M * M, axis=1)))
    np.testing.assert_array_equal(
        value("norm(x, axis=[0, 2])", x=T), np.sqrt(np.sum(T * T, axis=(0, 2)))
    )


def test_ord_is_a_keyword_and_inf_is_the_constant(cli):
    r = cli("eval", "norm(v, ord=inf) + norm(v, ord=-inf)", "--v", "[3, -4, 0.5]", "--json")
    assert r.code == 0 and r.json["value"] == 4.5
    r = cli("eval", "norm(A, 1)", "--A", "[[3, 4], [6, 8]]", "--json")  # axis, not ord
    assert r.json["value"] == [5.0, 10.0]
    r = cli("eval", "norm(v, 0, 1)", "--v", "[1, 2]", "--json")
    assert r.code == 2 and r.json["error"]["kind"] == "arity"
    assert "keyword" in r.json["error"]["message"] and "ord" in r.json["error"]["message"]
    r = cli("eval", 'norm(A, ord="fro")', "--A", "[[3, 4], [0, 0]]", "--json")
    assert r.json["value"] == 5.0  # double quotes too
    r = cli("eval", "norm(A, ord='f')", "--A", "[[3, 4], [0, 0]]", "--json")
    assert r.json["value"] == 5.0  # NumPy's other spelling of 'fro'


# ---------------------------------------------------------------------------
# Gradients against central differences
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("ord", [o for o in VECTOR_ORDS if o != 0], ids=repr)
@pytest.mark.parametrize(("x", "axis"), [(V, None), (M, 1), (T, 0)], ids=str)
def test_vector_norm_gradients(x, axis, ord):
    w = RNG.uniform(0.5, 1.5, size=np.shape(np.linalg.norm(x, ord=ord, axis=axis)))
    expr = f"sum(norm(x{axis_text(axis)}{spelled(ord)}) * w)"
    got = api.grad_of(parse(expr), {"x": x.tolist(), "w": w.tolist()}, wrt=["x"]).grad["x"]
    np.testing.assert_allclose(got, central(expr, "x", {"x": x, "w": w}), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("ord", MATRIX_ORDS, ids=repr)
@pytest.mark.parametrize(("x", "axis"), [(M, None), (M, (1, 0)), (T, (2, 0))], ids=str)
def test_matrix_norm_gradients(x, axis, ord):
    w = RNG.uniform(0.5, 1.5, size=np.shape(np.linalg.norm(x, ord=ord, axis=axis)))
    expr = f"sum(norm(x{axis_text(axis)}{spelled(ord)}) * w)"
    got = api.grad_of(parse(expr), {"x": x.tolist(), "w": w.tolist()}, wrt=["x"]).grad["x"]
    np.testing.assert_allclose(got, central(expr, "x", {"x": x, "w": w}), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("ord", ["nuc", 2, 3, INF, "fro"], ids=repr)
def test_hessians_against_differences_of_the_gradient(cli, ord):
    x = M if isinstance(ord, str) or ord == 2 else V
    r = cli("hessian", f"norm(x{spelled(ord)})", "--x", json.dumps(x.tolist()), "--json")
    assert r.code == 0, r.out
    h = np.asarray(r.json["hessian"]["x"]["x"]).reshape(x.size, x.size)
    fd = np.zeros_like(h)
    for i in range(x.size):
        for sign in (1, -1):
            y = x.copy().ravel()
            y[i] += sign * 1e-6
            fd[:, i] += sign * np.asarray(
                api.grad_of(parse(f"norm(x{spelled(ord)})"), {"x": y.reshape(x.shape).tolist()})
                .grad["x"]
                .ravel()
            )
    np.testing.assert_allclose(h, fd / 2e-6, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------
# Kinks: PyTorch's convention, with a warning
# ---------------------------------------------------------------------------

KINKS = [
    ("norm(v, ord=3)", {"v": [0.0, 0.0]}, [0.0, 0.0], "at 0"),
    ("norm(v, ord=1)", {"v": [0.0, -2.0]}, [0.0, -1.0], "entry is 0"),
    ("norm(v, ord=0.5)", {"v": [0.0, 4.0]}, [0.0, 1.0], "entry is 0"),
    ("norm(v, ord=inf)", {"v": [2.0, -2.0, 1.0]}, [0.5, -0.5, 0.0], "tied"),
    ("norm(v, ord=inf)", {"v": [0.0, 0.0]}, [0.0, 0.0], "tied"),
    # one entry, 0: no tie of |x|, but the norm is 0 (a tie of signs), a kink all the same
    ("norm(v, ord=inf)", {"v": [0.0]}, [0.0], "tied"),
    ("norm(v, ord=-inf)", {"v": [3.0, 0.0]}, [0.0, 0.0], "tied"),
    ("norm(A, ord='fro')", {"A": [[0.0, 0.0], [0.0, 0.0]]}, [[0.0, 0.0], [0.0, 0.0]], "at 0"),
    ("norm(A, ord=1)", {"A": [[1.0, -1.0], [1.0, 1.0]]}, [[0.5, -0.5], [0.5, 0.5]], "tie"),
    ("norm(A, ord=2)", {"A": [[2.0, 0.0], [0.0, 2.0]]}, [[0.5, 0.0], [0.0, 0.5]], "repeated"),
    ("norm(A, ord='nuc')", {"A": [[1.0, 0.0], [0.0, 0.0]]}, [[1.0, 0.0], [0.0, 1.0]], "zero"),
    ("norm(v, ord=0)", {"v": [1.0, 2.0]}, [0.0, 0.0], "zero almost everywhere"),
]


@pytest.mark.parametrize(("expr", "values", "grad", "fragment"), KINKS, ids=[k[0] for k in KINKS])
def test_kinks_follow_pytorch_and_warn(cli, expr, values, grad, fragment):
    argv = ["grad", expr]
    for k, v in values.items():
        argv += [f"--{k}", json.dumps(v)]
    r = cli(*argv, "--json")
    assert r.code == 0, r.out
    name = next(iter(values))
    np.testing.assert_allclose(r.json["grad"][name], grad, atol=1e-15)
    assert any(fragment in w and "norm" in w for w in r.json.get("warnings", [])), r.json


def test_no_warning_away_from_kinks(cli):
    for expr in ("norm(v, ord=1)", "norm(v, ord=inf)", "norm(v, ord=3)"):
        r = cli("grad", expr, "--v", "[1, -2.5, 3]", "--json")
        assert "warnings" not in r.json, (expr, r.json)
    r = cli("grad", "norm(A, ord='nuc') + norm(A, ord=-2)", "--A", "[[3, 1], [1, 2]]", "--json")
    assert "warnings" not in r.json


# ---------------------------------------------------------------------------
# Errors, printing, diff, batch
# ---------------------------------------------------------------------------

ERRORS = [
    ("norm(v, ord='fro')", {"v": [1, 2]}, 1, "shape", "matrix norm"),
    ("norm(A, ord=3)", {"A": [[1, 2], [3, 4]]}, 1, "shape", "not a matrix norm"),
    ("norm(T, ord=1)", {"T": [[[1]]]}, 1, "shape", "needs an axis"),
    ("norm(T, axis=[0, 0], ord=2)", {"T": [[1]]}, 1, "shape", "must differ"),
    ("norm(T, axis=[0, 1, 2], ord=2)", {"T": [[[1]]]}, 1, "shape", "one axis"),
    ("norm(v, ord=inf)", {"v": []}, 1, "shape", "empty"),
    ("norm(v, ord='abc')", {"v": [1]}, 2, "input", "'fro' or 'nuc'"),
    ("norm(v, ord=nan)", {"v": [1]}, 2, "input", "nan"),
    ("norm(v, ord=y)", {"v": [1], "y": 1}, 2, "input", "constant"),
    ("norm(v, ord=fro)", {"v": [1]}, 2, "input", "'fro' or 'nuc' in quotes, got a name"),
    ("norm(v, ord=2*3)", {"v": [1]}, 2, "input", "must be a constant number"),
    ("norm(v, ord=[1])", {"v": [1]}, 2, "input", "list"),
    ("norm(v, 'fro')", {"v": [1]}, 2, "input", "string"),
    ("norm(v, keepdims=2)", {"v": [1]}, 2, "input", "0 or 1"),
    ("norm(v, p=2)", {"v": [1]}, 2, "arity", "unexpected keyword"),
]


@pytest.mark.parametrize(
    ("expr", "values", "code", "kind", "fragment"), ERRORS, ids=[e[0] for e in ERRORS]
)
def test_errors_are_clear(cli, expr, values, code, kind, fragment):
    argv = ["eval", expr]
    for k, v in values.items():
        argv += [f"--{k}", json.dumps(v)]
    r = cli(*argv, "--json")
    assert r.code == code, r.out
    error = r.json["error"]
    assert error["kind"] == kind and fragment in error["message"], error
    plain = cli(*argv)
    assert "Traceback" not in plain.err and plain.err.startswith("autograd-cli: error:")


PRINTED = [
    "norm(A, ord='fro') + norm(A, ord='nuc')",
    "norm(A, axis=1, keepdims=1, ord=inf)",
    "sum(norm(A, 0, ord=-inf)) + sum(norm(A, 1, ord=0.5))",
    "norm(A, axis=[1, 0], ord=-2)",
    "norm(A, keepdims=1)",
]


@pytest.mark.parametrize("text", PRINTED)
def test_printed_text_parses_back(text):
    printed = to_text(parse(text).output)
    assert to_text(parse(printed).output) == printed
    values = {"A": M.tolist()}
    np.testing.assert_array_equal(
        api.eval_of(parse(printed), values).value, api.eval_of(parse(text), values).value
    )


def test_diff_refuses_as_for_the_other_reductions(cli):
    r = cli("diff", "norm(x, ord=1)", "--json")
    assert r.code == 1 and r.json["error"]["kind"] == "unsupported"
    assert "norm" in r.json["error"]["message"]


BATCHED = [
    ("norm(v, ord=3) + norm(v, ord=inf)", {"v": (4,)}),
    ("norm(A, ord='nuc') + norm(A, ord=1) + sum(norm(A, 0, ord=0.5))", {"A": (3, 2)}),
    ("sum(norm(T, axis=[0, 2], ord=2))", {"T": (2, 3, 2)}),
]


@pytest.mark.parametrize(("expr", "shapes"), BATCHED, ids=[b[0] for b in BATCHED])
def test_batch_rows_equal_single_rows(cli, tmp_path, expr, shapes):
    rows = [
        {"expr": expr, "vars": {k: RNG.uniform(-2, 2, size=s).tolist() for k, s in shapes.items()}}
        for _ in range(4)
    ]
    program = parse(expr)
    columns = {k: np.array([r["vars"][k] for r in rows]) for k in shapes}
    res = core_batch.evaluate_batch(program, columns, len(rows), grad=True)  # vectorised
    for i, row in enumerate(rows):
        one = api.grad_of(program, row["vars"])
        np.testing.assert_array_equal(res.value[i], one.value)
        for name in one.grad:
            np.testing.assert_array_equal(res.grad[name][i], one.grad[name])
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    r = cli("batch", str(path))
    assert r.code == 0, r.err
    docs = [json.loads(line) for line in r.out.splitlines()]
    for doc, row in zip(docs, rows):
        argv = ["grad", expr]
        for k, v in row["vars"].items():
            argv += [f"--{k}", json.dumps(v)]
        doc.pop("line")
        assert doc == cli(*argv, "--json").json


# ---------------------------------------------------------------------------
# PyTorch
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("ord", VECTOR_ORDS, ids=repr)
def test_vector_norms_match_pytorch(torch, ord):
    t = torch.tensor(M, dtype=torch.float64, requires_grad=True)
    w = torch.tensor(RNG.uniform(0.5, 1.5, size=3), dtype=torch.float64)
    out = (torch.linalg.vector_norm(t, ord=2 if ord is None else ord, dim=1) * w).sum()
    (theirs,) = torch.autograd.grad(out, t, allow_unused=True)
    if theirs is None:  # ord=0: the count of nonzero entries does not use t's values
        theirs = torch.zeros_like(t)
    ours = api.grad_of(
        parse(f"sum(norm(x, 1{spelled(ord)}) * w)"), {"x": M.tolist(), "w": w.tolist()}
    )
    np.testing.assert_allclose(ours.value, out.item(), rtol=1e-13)
    np.testing.assert_allclose(ours.grad["x"], theirs.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("ord", MATRIX_ORDS, ids=repr)
@pytest.mark.parametrize("axis", [None, (1, 0)])
def test_matrix_norms_match_pytorch(torch, ord, axis):
    t = torch.tensor(M, dtype=torch.float64, requires_grad=True)
    out = torch.linalg.matrix_norm(t, ord=ord, dim=(-2, -1) if axis is None else axis)
    (theirs,) = torch.autograd.grad(out, t)
    ours = api.grad_of(parse(f"norm(x{axis_text(axis)}{spelled(ord)})"), {"x": M.tolist()})
    np.testing.assert_allclose(ours.value, out.item(), rtol=1e-13)
    np.testing.assert_allclose(ours.grad["x"], theirs.numpy(), rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize(
    ("expr", "values", "fn"),
    [
        ("norm(v, ord=inf)", {"v": [2.0, -2.0, 1.0]}, lambda t, v: t.linalg.vector_norm(v, INF)),
        ("norm(v, ord=0.5)", {"v": [0.0, 4.0]}, lambda t, v: t.linalg.vector_norm(v, 0.5)),
        ("norm(v, ord=3)", {"v": [0.0, 0.0]}, lambda t, v: t.linalg.vector_norm(v, 3)),
        (
            "norm(A, ord=1)",
            {"A": [[1.0, -1.0], [1.0, 1.0]]},
            lambda t, A: t.linalg.matrix_norm(A, 1),
        ),
    ],
    ids=["inf tie", "p<1 zero", "zero vector", "column tie"],
)
def test_kinks_match_pytorch(torch, expr, values, fn):
    name, v = next(iter(values.items()))
    t = torch.tensor(v, dtype=torch.float64, requires_grad=True)
    (theirs,) = torch.autograd.grad(fn(torch, t), t)
    ours = api.grad_of(parse(expr), values).grad[name]
    np.testing.assert_allclose(ours, theirs.numpy(), atol=1e-15)
