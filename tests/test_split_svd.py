"""split, svdvals and svd (issue 13), and the language's values of several arrays.

* split: numpy.split's equal sections and indices (unequal sections are an error, as
  numpy.split, not array_split), indexed (``split(x, 3)[1]``, negative from the end) or
  unpacked (``a, b, c = split(x, 3)``); gradients, printing, batch;
* a value of several arrays anywhere else (``split(x, 2) + 1``, an argument, a binding to
  one name, the output) and a count that does not match are clear input errors (exit 2);
* svdvals and svd: values against NumPy, gradients against central differences and
  PyTorch (U diag(g) Vh for svdvals; PyTorch's svd backward for U and Vh, the extra columns
  of full_matrices ignored), the error where U's or Vh's derivative is not defined
  (repeated singular values), batch, printing, diff's refusal.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from autograd_cli.core import api
from autograd_cli.core import batch as core_batch
from autograd_cli.core.printing import to_text
from autograd_cli.grammar import parse

RNG = np.random.default_rng(5)
A34 = RNG.uniform(-2, 2, size=(3, 4))
A43 = RNG.uniform(-2, 2, size=(4, 3))
A33 = RNG.uniform(-2, 2, size=(3, 3))
S233 = RNG.uniform(-2, 2, size=(2, 3, 3))


def ev(expr, **values):
    return api.eval_of(parse(expr), {k: np.asarray(v).tolist() for k, v in values.items()}).value


def grad(expr, **values):
    return api.grad_of(parse(expr), {k: np.asarray(v).tolist() for k, v in values.items()})


def central(expr, name, values, h=1e-6):
    x = np.asarray(values[name], dtype=np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        for sign in (1, -1):
            y = x.copy()
            y[i] += sign * h
            g[i] += sign * float(ev(expr, **{**values, name: y}))
    return g / (2 * h)


# ---------------------------------------------------------------------------
# split
# ---------------------------------------------------------------------------

SPLITS = [
    ("split(x, 3)", (6,), 3, {}),
    ("split(x, 2, axis=1)", (3, 4), 2, {"axis": 1}),
    ("split(x, 2, -1)", (3, 4), 2, {"axis": -1}),
    ("split(x, [1, 3])", (5, 2), [1, 3], {}),
    ("split(x, [1, 3], axis=-1)", (2, 5), [1, 3], {"axis": -1}),
    ("split(x, [2, 10])", (4,), [2, 10], {}),
    ("split(x, [3, 1])", (4,), [3, 1], {}),
    ("split(x, [-1])", (4,), [-1], {}),
    ("split(x, [])", (4,), [], {}),
    ("split(x, 1)", (4,), 1, {}),
]


@pytest.mark.parametrize(("call", "shape", "sections", "kw"), SPLITS, ids=[s[0] for s in SPLITS])
def test_split_parts_match_numpy(call, shape, sections, kw):
    x = RNG.uniform(-2, 2, size=shape)
    want = np.split(x, sections, **kw)
    for k in range(len(want)):
        np.testing.assert_array_equal(ev(f"{call}[{k}]", x=x), want[k])
        np.testing.assert_array_equal(ev(f"{call}[{k - len(want)}]", x=x), want[k])
    names = [f"p{k}" for k in range(len(want))]
    if len(names) > 1:
        for k, name in enumerate(names):
            program = f"{', '.join(names)} = {call}; {name}"
            np.testing.assert_array_equal(ev(program, x=x), want[k])


@pytest.mark.parametrize(("call", "shape", "sections", "kw"), SPLITS, ids=[s[0] for s in SPLITS])
def test_split_gradients(call, shape, sections, kw):
    x = RNG.uniform(-2, 2, size=shape)
    parts = np.split(x, sections, **kw)
    terms = " + ".join(f"sum({call}[{k}] ** 2) * {k + 1}" for k in range(len(parts)))
    result = grad(terms, x=x).grad["x"]
    np.testing.assert_allclose(result, central(terms, "x", {"x": x}), rtol=1e-6, atol=1e-8)


def test_split_through_the_command_line(cli):
    r = cli(
        "grad", "a, b, c = split(x, 3); sum(a * c) + b[0]", "--x", "[1, 2, 3, 4, 5, 6]", "--json"
    )
    assert r.code == 0, r.out
    assert r.json["value"] == 1 * 5 + 2 * 6 + 3
    assert r.json["grad"]["x"] == [5.0, 6.0, 1.0, 0.0, 1.0, 2.0]


SEVERAL_ERRORS = [
    ("split(x, 2) + 1", "gives 2 arrays"),
    ("sin(split(x, 2))", "gives 2 arrays"),
    ("[split(x, 2), x]", "gives 2 arrays"),
    ("sum(x, axis=split(x, 2))", "gives 2 arrays"),
    ("split(x, 2)", "gives 2 arrays"),
    ("split(x, 2).T", "gives 2 arrays"),
    ("-split(x, 2)", "gives 2 arrays"),
    ("split(x, 2) < 1", "gives 2 arrays"),
    ("a = split(x, 2); a", "unpack them into 2 names"),
    ("a, b, c = split(x, 2); a", "gives 2 arrays, but 3 names"),
    ("a, b = split(x, 3); a", "gives 3 arrays, but 2 names"),
    ("a, b = x; a", "cannot unpack one array"),
    ("a, a = split(x, 2); a", "named twice"),
    ("pi, b = split(x, 2); b", "constant"),
    ("a, b = split(x, 2)", "ends with an unpacking"),
    ("split(x, 2)[2]", "from -2 to 1"),
    ("split(x, 2)[0:1]", "one constant integer"),
    ("split(x, 2)[0, 0]", "one constant integer"),
    ("split(x, 2)[y]", "constant"),
    ("split(x, 0)[0]", "from 1"),
    ("split(x, 1.5)[0]", "integer"),
    ("split(x, 2, part=5)", "from 0 to 1"),
    ("svd(x) * 2", "gives 3 arrays"),
    ("U, S = svd(x); U", "gives 3 arrays, but 2 names"),
]


@pytest.mark.parametrize(("expr", "fragment"), SEVERAL_ERRORS, ids=[e[0] for e in SEVERAL_ERRORS])
def test_several_arrays_where_one_is_wanted_is_an_input_error(cli, expr, fragment):
    values = ["--x", "[1, 2, 3, 4]"] + (["--y", "1"] if "y" in expr else [])
    r = cli("eval", expr, *values, "--json")
    assert r.code == 2, r.out
    assert fragment in r.json["error"]["message"], r.json
    plain = cli("eval", expr, *values)
    assert plain.err.startswith("autograd-cli: error:") and "Traceback" not in plain.err


def test_unequal_sections_are_a_shape_error(cli):
    r = cli("eval", "split(x, 3)[0]", "--x", "[1, 2, 3, 4]", "--json")
    assert r.code == 1 and r.json["error"]["kind"] == "shape"
    assert "3 equal sections do not divide" in r.json["error"]["message"]
    r = cli("eval", "split(x, 2)[0]", "--x", "1", "--json")
    assert r.code == 1 and "a number has none" in r.json["error"]["message"]


def test_split_prints_as_parts_that_parse_back():
    # equal sections need x's length: a part of the split op, printed with part=
    assert to_text(parse("split(x, 3)[1]").output) == "split(x, 3, part=1)"
    assert to_text(parse("split(x, 2, axis=-1)[0]").output) == "split(x, 2, axis=-1, part=0)"
    # indices and a nonnegative axis: the slice itself
    assert to_text(parse("split(x, [2, 5], axis=1)[1]").output) == "x[:, 2:5]"
    assert to_text(parse("a, b = split(x, [2]); a + b[0]").output) == "x[:2] + x[2:][0]"
    x = RNG.uniform(size=(4, 6))
    for text in ("split(x, 2, axis=-1)[1] * 2", "split(x, [1], axis=-1)[1]"):
        printed = to_text(parse(text).output)
        np.testing.assert_array_equal(ev(printed, x=x), ev(text, x=x))


def test_split_batches_and_diff_refuses_it(cli):
    expr = "a, b = split(v, 2); sum(a * b) + sum(split(A, [1], axis=-1)[1])"
    rows = [
        {"v": RNG.normal(size=4).tolist(), "A": RNG.normal(size=(2, 3)).tolist()} for _ in range(3)
    ]
    columns = {k: np.array([r[k] for r in rows]) for k in ("v", "A")}
    res = core_batch.evaluate_batch(parse(expr), columns, 3, grad=True)
    for i, row in enumerate(rows):
        one = api.grad_of(parse(expr), row)
        np.testing.assert_array_equal(res.value[i], one.value)
        for name in one.grad:
            np.testing.assert_array_equal(res.grad[name][i], one.grad[name])
    r = cli("diff", "split(x, 2)[0] * 2", "--json")
    assert r.code == 1 and r.json["error"]["kind"] == "unsupported"


# ---------------------------------------------------------------------------
# svdvals and svd
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("a", [A34, A43, A33, S233], ids=["3x4", "4x3", "3x3", "stack"])
def test_svd_values_match_numpy(a):
    np.testing.assert_allclose(
        ev("svdvals(A)", A=a), np.linalg.svd(a, compute_uv=False), rtol=1e-13
    )
    u, s, vh = np.linalg.svd(a)
    np.testing.assert_allclose(ev("svd(A)[0]", A=a), u, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ev("svd(A)[1]", A=a), s, rtol=1e-13)
    np.testing.assert_allclose(ev("svd(A)[2]", A=a), vh, rtol=1e-12, atol=1e-14)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    rebuilt = ev(
        "U, S, Vh = svd(A, full_matrices=0); U @ (reshape(S, [-1, 1]) * Vh)"
        if a.ndim == 2
        else "U, S, Vh = svd(A, 0); U @ (Vh * [[[1], [1], [1]]] * reshape(S, [2, 3, 1]))",
        A=a,
    )
    np.testing.assert_allclose(rebuilt, a, atol=1e-13)


def test_a_matrix_with_nan_gives_nan(cli):
    r = cli("eval", "svdvals(A)", "--A", "[[1, nan], [2, 3]]", "--json")
    assert r.json["value"] == ["nan", "nan"]


SVD_GRADS = [  # (expression, A, the shape of W or None)
    ("sum(svdvals(A) * [1, 2, 3])", A34, None),
    ("sum(svdvals(A) * [1, 2, 3])", A43, None),
    ("sum(svd(A, full_matrices=0)[0] ** 2 * W)", A43, (4, 3)),
    ("sum(svd(A, full_matrices=0)[2] ** 3 * W)", A34, (3, 4)),
    ("sum(svd(A)[0] * W) + sum(svd(A)[2] ** 2)", A33, (3, 3)),
    ("U, S, Vh = svd(A); sum(U[:, 0] * Vh[0]) * S[1]", A33, None),
    ("sum(svd(A, 0)[0] * W)", A34, (3, 3)),
    ("sum(svd(A, 0)[2] * W)", A43, (3, 3)),
    ("sum(svd(A)[2][:3] * W)", A34, (3, 4)),  # full Vh of a wide matrix: its first k rows
]


@pytest.mark.parametrize(
    ("expr", "a", "wshape"), SVD_GRADS, ids=[f"{e}#{i}" for i, (e, _, _) in enumerate(SVD_GRADS)]
)
def test_svd_gradients_against_central_differences(expr, a, wshape):
    values = {"A": a}
    if wshape is not None:
        values["W"] = RNG.uniform(-1, 1, size=wshape)
    result = grad(expr, **values).grad["A"]
    np.testing.assert_allclose(result, central(expr, "A", values), rtol=1e-6, atol=1e-7)


def test_svdvals_gradient_is_u_vh():
    u, _, vh = np.linalg.svd(A34, full_matrices=False)
    np.testing.assert_allclose(grad("sum(svdvals(A))", A=A34).grad["A"], u @ vh, atol=1e-14)


def test_full_matrices_ignores_the_extra_columns():
    # U's columns past min(m, n) are any basis of the rest: PyTorch ignores their gradient
    assert not np.any(grad("sum(svd(A)[0][:, 3])", A=A43).grad["A"])
    w = RNG.uniform(size=(4, 3))
    np.testing.assert_array_equal(
        grad("sum(svd(A)[0][:, :3] * W)", A=A43, W=w).grad["A"],
        grad("sum(svd(A, 0)[0] * W)", A=A43, W=w).grad["A"],
    )


def test_repeated_singular_values_are_an_error_for_u_not_for_svdvals(cli):
    eye = json.dumps([[2.0, 0.0], [0.0, 2.0]])
    r = cli("grad", "sum(svd(A)[0])", "--A", eye, "--json")
    assert r.code == 1 and r.json["error"]["kind"] == "evaluation", r.out
    assert "repeat" in r.json["error"]["message"]
    r = cli("grad", "sum(svdvals(A))", "--A", eye, "--json")
    assert r.code == 0 and r.json["grad"]["A"] == [[1.0, 0.0], [0.0, 1.0]]
    r = cli("eval", "svd(A)[0]", "--A", eye, "--json")  # the value is fine
    assert r.code == 0


def test_svd_prints_parses_back_batches_and_diff_refuses(cli):
    assert to_text(parse("svd(A)[0] + svd(A)[2]").output) == "svd(A, part=0) + svd(A, part=2)"
    assert to_text(parse("svd(A, 0)[1]").output) == "svdvals(A)"
    assert to_text(parse("U, S, Vh = svd(A, full_matrices=0); Vh").output) == (
        "svd(A, full_matrices=0, part=2)"
    )
    expr = "sum(svdvals(A)) + sum(svd(A)[0] ** 2 * [1, 2, 3]) + sum(svd(A)[2][0] ** 2)"
    rows = [{"A": RNG.normal(size=(3, 3)).tolist()} for _ in range(3)]
    columns = {"A": np.array([r["A"] for r in rows])}
    res = core_batch.evaluate_batch(parse(expr), columns, 3, grad=True)  # ("trailing", 2)
    for i, row in enumerate(rows):
        one = api.grad_of(parse(expr), row)
        np.testing.assert_array_equal(res.value[i], one.value)
        np.testing.assert_array_equal(res.grad["A"][i], one.grad["A"])
    r = cli("diff", "svdvals(A)[0]", "--json")
    assert r.code == 1 and r.json["error"]["kind"] == "unsupported"
    r = cli("eval", "svdvals(v)", "--v", "[1, 2]", "--json")
    assert r.code == 1 and "a matrix" in r.json["error"]["message"]


@pytest.mark.parametrize("a", [A34, A43, A33], ids=["3x4", "4x3", "3x3"])
def test_svd_gradients_match_pytorch(torch, a):
    t = torch.tensor(a, dtype=torch.float64, requires_grad=True)
    u, s, vh = torch.linalg.svd(t, full_matrices=False)
    w1 = RNG.uniform(-1, 1, size=tuple(u.shape))
    w2 = RNG.uniform(-1, 1, size=tuple(vh.shape))
    # sign-invariant in each singular pair (u_i, v_i): products u_i v_iᵀ and squares
    out = ((u**2) * torch.tensor(w1)).sum() + ((vh**2) * torch.tensor(w2)).sum() + (s * s).sum()
    (theirs,) = torch.autograd.grad(out, t)
    expr = "U, S, Vh = svd(A, full_matrices=0); sum(U ** 2 * W1) + sum(Vh ** 2 * W2) + sum(S * S)"
    ours = api.grad_of(
        parse(expr), {"A": a.tolist(), "W1": w1.tolist(), "W2": w2.tolist()}, wrt=["A"]
    )
    np.testing.assert_allclose(ours.value, out.item(), rtol=1e-12)
    np.testing.assert_allclose(ours.grad["A"], theirs.numpy(), rtol=1e-10, atol=1e-12)
    (sv,) = torch.autograd.grad(torch.linalg.svdvals(t).sum(), t)
    np.testing.assert_allclose(grad("sum(svdvals(A))", A=a).grad["A"], sv.numpy(), atol=1e-13)
