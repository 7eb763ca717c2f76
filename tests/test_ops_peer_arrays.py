"""The peers' array functions of issue 27: tile with a list of counts, transpose with axes,
kron, inner, cross, convolve and correlate.

Values against NumPy (the same functions, at many shapes, counts, axes and modes);
gradients against central differences of NumPy's forward and against PyTorch (float64:
torch.tile, torch.permute, torch.kron, torch.inner, torch.linalg.cross, and conv1d for the
convolutions), with PyTorch's grad_fn names; Hessians against torch's; the command line
(``grad --json``, ``hessian``, ``diff``'s refusal, ``explain``, ``batch`` equal to one row at
a time, the errors a user can make and the memory limit asked before a result is made);
printing that parses back to the same value.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from autograd_cli.core import OPS, api
from autograd_cli.core.printing import to_latex, to_text
from autograd_cli.grammar import parse

H = 1e-6


def _rand(shape, seed):
    return np.random.default_rng(seed).uniform(-2.0, 2.0, size=shape)


# ---------------------------------------------------------------------------
# Cases: (expression, {name: shape}, NumPy's function of the values, torch's)
# ---------------------------------------------------------------------------


def _tile(reps):
    return (
        f"tile(x, {list(reps) if isinstance(reps, tuple) else reps})",
        lambda x: np.tile(x, reps),
        lambda t, x: t.tile(x, reps if isinstance(reps, tuple) else (reps,)),
    )


def _transpose(axes):
    return (
        f"transpose(x, {list(axes)})",
        lambda x: np.transpose(x, axes),
        lambda t, x: t.permute(x, axes),
    )


def _torch_convolve(t, a, v, mode, flipped):
    n, m = a.shape[0], v.shape[0]
    kernel = v if flipped else t.flip(v, (0,))
    full = t.nn.functional.conv1d(a.reshape(1, 1, -1), kernel.reshape(1, 1, -1), padding=m - 1)
    full = full.reshape(-1)
    if mode == "full":
        return full
    short, long = min(n, m), max(n, m)
    if mode == "valid":
        return full[short - 1 : long]
    start = n // 2 if flipped and m > n else (short - 1) // 2
    return full[start : start + long]


def _signal(name, mode):
    np_fn = getattr(np, name)
    return (
        f"{name}(x, y, '{mode}')",
        lambda a, v: np_fn(a, v, mode),
        lambda t, a, v: _torch_convolve(t, a, v, mode, name == "correlate"),
    )


UNARY = [  # (case, shape of x)
    (_tile((2, 3)), (3,)),
    (_tile((2, 1)), (2, 3)),
    (_tile((3,)), (2, 3)),
    (_tile((1, 3, 2)), (2, 1, 2)),
    (_tile((2, 2)), ()),
    (_tile(()), (2, 2)),
    (_tile((2, 0)), (3,)),
    (_tile(2), (2, 3)),
    (_transpose((1, 0, 2)), (2, 3, 4)),
    (_transpose((-1, 0, 1)), (2, 3, 4)),
    (_transpose((2, 0, 1)), (2, 3, 4)),
    (_transpose((0, 1)), (3, 2)),
    (_transpose((0,)), (4,)),
]

BINARY = [  # (case, shape of x, shape of y)
    (("kron(x, y)", np.kron, lambda t, a, b: t.kron(a, b)), (3,), (2,)),
    (("kron(x, y)", np.kron, lambda t, a, b: t.kron(a, b)), (2, 2), (3, 2)),
    (("kron(x, y)", np.kron, lambda t, a, b: t.kron(a, b)), (3,), (2, 2)),
    (("kron(x, y)", np.kron, lambda t, a, b: t.kron(a, b)), (2, 1, 2), (2, 3)),
    (("inner(x, y)", np.inner, lambda t, a, b: t.inner(a, b)), (3,), (3,)),
    (("inner(x, y)", np.inner, lambda t, a, b: t.inner(a, b)), (2, 3), (4, 3)),
    (("inner(x, y)", np.inner, lambda t, a, b: t.inner(a, b)), (2, 2, 3), (3,)),
    (("inner(x, y)", np.inner, lambda t, a, b: t.inner(a, b)), (), (2, 3)),
    (("cross(x, y)", np.cross, lambda t, a, b: t.linalg.cross(a, b)), (3,), (3,)),
    (("cross(x, y)", np.cross, lambda t, a, b: t.linalg.cross(a, b)), (4, 3), (4, 3)),
    (
        ("cross(x, y)", np.cross, lambda t, a, b: t.linalg.cross(*t.broadcast_tensors(a, b))),
        (4, 1, 3),
        (2, 3),
    ),
] + [
    (_signal(name, mode), (n,), (m,))
    for name in ("convolve", "correlate")
    for mode in ("full", "same", "valid")
    for n, m in ((5, 3), (3, 5), (4, 4), (1, 4), (4, 1), (2, 5), (6, 2), (7, 7))
]

CASES = [(c, {"x": s}) for c, s in UNARY] + [(c, {"x": a, "y": b}) for c, a, b in BINARY]
IDS = [f"{c[0]}-{'-'.join(map(str, s.values()))}" for c, s in CASES]


def _values(shapes):
    return {n: _rand(s, i) for i, (n, s) in enumerate(sorted(shapes.items()))}


def _loss_weights(case, values):
    """Fixed weights w of the same shape as the result: the loss is sum(f * w)."""
    out = np.asarray(case[1](*values.values()))
    return out, _rand(out.shape, 99)


@pytest.mark.parametrize(("case", "shapes"), CASES, ids=IDS)
def test_values_are_numpys(case, shapes):
    values = _values(shapes)
    got = api.eval_of(parse(case[0]), values).value
    want = case[1](*values.values())
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def _loss_program(case, w):
    return parse(f"sum({case[0]} * w)"), w


@pytest.mark.parametrize(("case", "shapes"), CASES, ids=IDS)
def test_gradients_are_central_differences(case, shapes):
    values = _values(shapes)
    _, w = _loss_weights(case, values)
    program, _ = _loss_program(case, w)
    result = api.grad_of(program, {**values, "w": w}, wrt=list(values))

    def loss(vals):
        return float(np.sum(case[1](*vals.values()) * w))

    for name, x in values.items():
        fd = np.zeros_like(x)
        for j in np.ndindex(x.shape):
            hi, lo = dict(values), dict(values)
            hi[name], lo[name] = x.copy(), x.copy()
            hi[name][j] += H
            lo[name][j] -= H
            fd[j] = (loss(hi) - loss(lo)) / (2 * H)
        np.testing.assert_allclose(result.grad[name], fd, rtol=1e-6, atol=1e-7, err_msg=name)


@pytest.mark.parametrize(("case", "shapes"), CASES, ids=IDS)
def test_gradients_and_hessians_are_torchs(case, shapes):
    torch = pytest.importorskip("torch")
    values = _values(shapes)
    _, w = _loss_weights(case, values)
    program, _ = _loss_program(case, w)
    names = list(values)
    ours = api.hessian_of(program, {**values, "w": w}, wrt=names)
    tw = torch.tensor(w)

    def loss(*xs):
        return (case[2](torch, *xs) * tw).sum()

    inputs = tuple(torch.tensor(values[n], requires_grad=True) for n in names)
    grads = torch.autograd.grad(loss(*inputs), inputs, allow_unused=True)
    for name, g in zip(names, grads):
        want = np.zeros(values[name].shape) if g is None else g.numpy()
        np.testing.assert_allclose(ours.grad[name], want, rtol=1e-12, atol=1e-12, err_msg=name)
    hess = torch.autograd.functional.hessian(loss, tuple(torch.tensor(values[n]) for n in names))
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            want = hess[i][j].numpy().reshape(values[a].shape + values[b].shape)
            got = np.asarray(ours.hessian[a][b]).reshape(want.shape)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=f"{a},{b}")


@pytest.mark.parametrize(("case", "shapes"), CASES, ids=IDS)
def test_forward_mode_is_the_gradient_along_a_tangent(case, shapes):
    values = _values(shapes)
    _, w = _loss_weights(case, values)
    program, _ = _loss_program(case, w)
    tangents = {n: _rand(np.shape(v), 7 + i) for i, (n, v) in enumerate(values.items())}
    got = api.jvp_of(program, {**values, "w": w}, tangents)
    grads = api.grad_of(program, {**values, "w": w}, wrt=list(values)).grad
    want = sum(float(np.sum(grads[n] * tangents[n])) for n in values)
    assert float(np.asarray(got.jvp if hasattr(got, "jvp") else got.tangent)) == pytest.approx(
        want, rel=1e-12, abs=1e-12
    )


NODES = [  # (op, torch's function of float64 tensors that require grad)
    ("tile", lambda t, x: t.tile(x, (2, 2))),
    ("transpose", lambda t, x: t.permute(x.reshape(2, 2), (1, 0))),
    ("kron", lambda t, x: t.kron(x, x)),
    ("inner", lambda t, x: t.inner(x, x)),
    ("cross", lambda t, x: t.linalg.cross(x[:3], x[1:])),
    # torch has no convolve: conv1d (whose node this is) of the reshaped vectors
    ("convolve", lambda t, x: t.nn.functional.conv1d(x.reshape(1, 1, -1), x.reshape(1, 1, -1))),
    ("correlate", lambda t, x: t.nn.functional.conv1d(x.reshape(1, 1, -1), x.reshape(1, 1, -1))),
]


@pytest.mark.parametrize(("name", "fn"), NODES, ids=[n for n, _ in NODES])
def test_grad_fn_names_are_torchs(name, fn):
    torch = pytest.importorskip("torch")
    x = torch.arange(1.0, 5.0, dtype=torch.float64, requires_grad=True)
    out = fn(torch, x)
    node = OPS[name].node
    assert node == type(out.grad_fn).__name__, (name, node, out.grad_fn)


# ---------------------------------------------------------------------------
# Printing and parsing
# ---------------------------------------------------------------------------

PRINTED = [
    ("tile(x, [2, 1, 3]) + 1", {"x": [[1.0, 2.0]]}, "tile(x, [2, 1, 3]) + 1"),
    ("tile(x, 2)", {"x": [1.0, 2.0]}, "tile(x, 2)"),
    ("transpose(x, [1, 0])", {"x": [[1.0, 2.0]]}, "transpose(x, axes=[1, 0])"),
    ("transpose(x, axes=[2, 0, 1])", {"x": [[[1.0, 2.0]]]}, "transpose(x, axes=[2, 0, 1])"),
    ("x.T", {"x": [[1.0, 2.0]]}, "transpose(x)"),
    ("transpose(x)", {"x": [[1.0, 2.0]]}, "transpose(x)"),
    ("kron(x, y) * 2", {"x": [1.0, 2.0], "y": [3.0, 4.0]}, "kron(x, y)*2"),
    ("inner(x, y)", {"x": [1.0, 2.0], "y": [3.0, 4.0]}, "inner(x, y)"),
    ("cross(x, y)", {"x": [1.0, 2.0, 3.0], "y": [3.0, 4.0, 6.0]}, "cross(x, y)"),
    ("convolve(x, y)", {"x": [1.0, 2.0], "y": [3.0, 4.0, 5.0]}, "convolve(x, y)"),
    ("convolve(x, y, 'same')", {"x": [1.0, 2.0], "y": [3.0, 4.0, 5.0]}, None),
    ("correlate(x, y)", {"x": [1.0, 2.0, 4.0], "y": [3.0, 4.0]}, "correlate(x, y)"),
    ("correlate(x, y, mode='full')", {"x": [1.0, 2.0], "y": [3.0, 4.0]}, None),
]


@pytest.mark.parametrize(("text", "values", "printed"), PRINTED, ids=[p[0] for p in PRINTED])
def test_printed_text_parses_back(text, values, printed):
    expr = parse(text).output
    shown = to_text(expr)
    if printed is not None:
        assert shown.replace(",", ", ").replace(",  ", ", ") == printed or shown == printed
    again = parse(shown).output
    assert to_text(again) == shown
    np.testing.assert_array_equal(
        api.eval_of(parse(shown), values).value, api.eval_of(parse(text), values).value
    )
    name = text.split("(")[0]
    assert "(" not in text or f"\\operatorname{{{name}}}" in to_latex(expr)


def test_mode_prints_quoted_and_only_where_not_the_default():
    assert to_text(parse("convolve(x, y, 'same')").output) == "convolve(x, y, mode='same')"
    assert to_text(parse("convolve(x, y, 'full')").output) == "convolve(x, y)"
    assert to_text(parse("correlate(x, y, 'valid')").output) == "correlate(x, y)"
    assert to_text(parse("correlate(x, y, 'full')").output) == "correlate(x, y, mode='full')"


# ---------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------


def _run(cli, *argv):
    r = cli(*argv, "--json")
    assert r.code == 0, r.out + r.err
    return r.json


def test_grad_json_of_each_function_is_torchs(cli):
    torch = pytest.importorskip("torch")
    expr = (
        "sum(tile(x, [2, 1]) * tile(x, [2, 1])) + inner(x, x) + sum(kron(x, y))"
        " + sum(cross(x, y)) + sum(convolve(x, y)**2) + sum(correlate(x, y, 'same'))"
        " + sum(transpose(reshape(y, [1, 3]), [1, 0]) * x)"
    )
    doc = _run(cli, "grad", expr, "--x", "[1, 2, 3]", "--y", "[0.5, -1, 2]")
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    y = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    loss = (
        (x.tile((2, 1)) ** 2).sum()
        + torch.inner(x, x)
        + torch.kron(x, y).sum()
        + torch.linalg.cross(x, y).sum()
        + (_torch_convolve(torch, x, y, "full", False) ** 2).sum()
        + _torch_convolve(torch, x, y, "same", True).sum()
        + (y.reshape(1, 3).permute(1, 0) * x).sum()
    )
    gx, gy = torch.autograd.grad(loss, (x, y))
    assert doc["value"] == pytest.approx(loss.item(), rel=1e-14)
    np.testing.assert_allclose(doc["grad"]["x"], gx.numpy(), rtol=1e-13)
    np.testing.assert_allclose(doc["grad"]["y"], gy.numpy(), rtol=1e-13)


def test_hessian_of_a_bilinear_function_is_its_matrix(cli):
    doc = _run(cli, "hessian", "inner(x, y)", "--x", "[1, 2]", "--y", "[3, 4]")
    np.testing.assert_array_equal(doc["hessian"]["x"]["y"], np.eye(2))
    np.testing.assert_array_equal(doc["hessian"]["x"]["x"], np.zeros((2, 2)))


@pytest.mark.parametrize(
    "expr", ["kron(x, y)", "inner(x, y)", "cross(x, y)", "convolve(x, y)", "tile(x, [2])"]
)
def test_diff_refuses_clearly(cli, expr):
    r = cli("diff", expr, "--wrt", "x")
    assert r.code == 1 and "Traceback" not in r.err, r.err
    assert r.err.startswith("autograd-cli: error:") and "use grad" in r.err


def test_explain_walks_the_rules(cli):
    r = cli("explain", "sum(correlate(x, y, 'same')**2)", "--x", "[1, 2, 3]", "--y", "[1, -1]")
    assert r.code == 0, r.err
    assert "correlate(x, y, mode='same')" in r.out and "df/dx = [0, 0, 2]" in r.out


ERRORS = [
    (["eval", "tile(x, [2, -1])", "--x", "1"], 2, "input", "each count of reps"),
    (["eval", "tile(x, [2, 1.5])", "--x", "1"], 2, "input", "must be an integer"),
    (["eval", "convolve(x, x, 'ful')", "--x", "[1]"], 2, "input", "'full', 'same' or 'valid'"),
    (["eval", "convolve(x, x, 1)", "--x", "[1]"], 2, "input", "'full', 'same' or 'valid'"),
    (["eval", "correlate(x, x, mode=valid)", "--x", "[1]"], 2, "input", "a string in quotes"),
    (["eval", "convolve(x, x)", "--x", "[[1]]"], 1, "shape", "1-D"),
    (["eval", "correlate(x, x)", "--x", "[]"], 1, "shape", "non-empty"),
    (["eval", "cross(x, x)", "--x", "[1, 2]"], 1, "shape", "3-vectors"),
    (["eval", "inner(x, y)", "--x", "[1, 2]", "--y", "[1, 2, 3]"], 1, "shape", "inner()"),
    (["eval", "transpose(x, [0, 0])", "--x", "[[1]]"], 1, "shape", "repeat an axis"),
    (["eval", "transpose(x, [1, 0])", "--x", "[1]"], 1, "shape", "one axis per dimension"),
    (["eval", "transpose(x, [0, 2])", "--x", "[[1]]"], 1, "shape", "out of range"),
]


@pytest.mark.parametrize(
    ("argv", "code", "kind", "fragment"), ERRORS, ids=[e[0][1] for e in ERRORS]
)
def test_errors_are_clear(cli, argv, code, kind, fragment):
    r = cli(*argv, "--json")
    assert r.code == code, r.out + r.err
    assert "Traceback" not in r.out + r.err
    error = r.json["error"]
    assert error["kind"] == kind, error
    assert fragment in error["message"], error


LARGE = [  # results that outgrow their inputs: asked of the memory limit before they are made
    ("sum(tile(x, [40, 1]))", {"x": [1.0] * 40}),
    ("sum(kron(x, x))", {"x": [1.0] * 40}),
    ("sum(inner(x, x))", {"x": [[1.0]] * 40}),
    ("sum(cross(x, y))", {"x": [[[1.0, 2.0, 3.0]]] * 40, "y": [[1.0, 2.0, 3.0]] * 40}),
]


@pytest.mark.parametrize(("expr", "values"), LARGE, ids=[e for e, _ in LARGE])
def test_results_larger_than_the_inputs_ask_the_memory_limit(cli, expr, values):
    argv = [a for n, v in values.items() for a in (f"--{n}", json.dumps(v))]
    r = cli("grad", expr, *argv, "--max-memory", "4K", "--json")
    assert r.code == 1, r.out + r.err
    error = r.json["error"]
    assert error["kind"] == "limit", error
    # the size the entry declares, asked before the result is made: 1600 float64 numbers
    assert error["needed_bytes"] >= 1600 * 8, error
    ok = cli("grad", expr, *argv, "--json")
    assert ok.code == 0, ok.out + ok.err


# ---------------------------------------------------------------------------
# batch: many rows at once equal one row at a time
# ---------------------------------------------------------------------------

BATCH = [
    ("sum(tile(x, [2, 1]) * tile(x, [2, 1]))", {"x": (2, 3)}),  # rank 2 rows: batched
    ("sum(tile(x, [2, 1, 1]) ** 2)", {"x": (3,)}),  # rank 1 rows, 3 counts: row by row
    ("sum(tile(x, 3) ** 2)", {"x": (3,)}),
    ("sum(transpose(x, [2, 0, 1]) * x[0, 0, 0])", {"x": (2, 3, 2)}),
    ("sum(kron(x, y) ** 2)", {"x": (2,), "y": (3,)}),
    ("inner(x, y) ** 2", {"x": (3,), "y": (3,)}),
    ("sum(cross(x, y) ** 2)", {"x": (2, 3), "y": (2, 3)}),
    ("sum(convolve(x, y, 'same') ** 2)", {"x": (4,), "y": (3,)}),
    ("sum(correlate(x, y) ** 2)", {"x": (4,), "y": (3,)}),
]


def _rows(expr, shapes, count=4):
    rng = np.random.default_rng(5)
    return [
        {"expr": expr, "vars": {n: rng.uniform(-2, 2, size=s).tolist() for n, s in shapes.items()}}
        for _ in range(count)
    ]


@pytest.mark.parametrize(("expr", "shapes"), BATCH, ids=[b[0] for b in BATCH])
def test_batch_equals_single_commands(cli, tmp_path, expr, shapes):
    rows = _rows(expr, shapes)
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    r = cli("batch", str(path))
    assert r.code == 0, r.err
    docs = [json.loads(line) for line in r.out.splitlines()]
    assert [d.pop("line") for d in docs] == [1, 2, 3, 4]
    for row, doc in zip(rows, docs):
        argv = [a for n, v in row["vars"].items() for a in (f"--{n}", json.dumps(v))]
        assert doc == _run(cli, "grad", expr, *argv)


BATCHED = [b for b in BATCH if "kron" not in b[0] and "inner" not in b[0] and "olve" not in b[0]]
BATCHED = [b for b in BATCHED if "correlate" not in b[0] and "[2, 1, 1]" not in b[0]]


@pytest.mark.parametrize(("expr", "shapes"), BATCHED, ids=[b[0] for b in BATCHED])
def test_declared_rules_batch_the_rows_together(expr, shapes):
    from autograd_cli.core import batch as core_batch

    rows = _rows(expr, shapes, count=5)
    columns = {n: np.array([r["vars"][n] for r in rows]) for n in shapes}
    res = core_batch.evaluate_batch(parse(expr), columns, len(rows), grad=True)  # no Unbatchable
    for i, row in enumerate(rows):
        one = api.grad_of(parse(expr), {k: np.asarray(v) for k, v in row["vars"].items()})
        assert float(res.value[i]) == pytest.approx(float(one.value), rel=1e-13)
        for n in shapes:
            np.testing.assert_allclose(res.grad[n][i], one.grad[n], rtol=1e-13, atol=1e-15)


def test_tile_with_more_counts_than_the_rows_rank_is_not_batched_wrongly():
    from autograd_cli.core import batch as core_batch

    expr = "sum(tile(x, [2, 1, 1]) ** 2)"
    columns = {"x": np.arange(6.0).reshape(2, 3)}
    with pytest.raises(core_batch.Unbatchable):
        core_batch.evaluate_batch(parse(expr), columns, 2, grad=True)
