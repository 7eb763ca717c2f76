"""eigvalsh, eigh and pinv (issue 27; core/ops/eigen.py).

* values against NumPy (eigh of the symmetric part (A + Aᵀ)/2, A = V diag(L) Vᵀ; pinv with
  PyTorch's default cut-off), a matrix with a nan entry gives nan;
* gradients, tangents (forward mode) and Hessians against PyTorch (torch.linalg.eigh,
  eigvalsh, pinv, float64) and central differences, with losses that do not depend on the
  eigenvectors' signs (their squares, V diag(f(L)) Vᵀ);
* the warnings where the derivatives are not defined (repeated eigenvalues, a rank-deficient
  pinv) and the inf or nan PyTorch gives there;
* the language: eigh(A)'s two arrays (indexed, unpacked), printing that parses back, batch
  row by row, diff's refusal, codegen (torch refuses eigh's vectors: other signs), errors.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_split_svd import central

from autograd_cli.core import api
from autograd_cli.core import batch as core_batch
from autograd_cli.core.printing import to_text
from autograd_cli.grammar import parse

RNG = np.random.default_rng(27)
EPS = np.finfo(np.float64).eps


def symmetric(shape):
    a = RNG.uniform(-2, 2, size=shape)
    return (a + np.swapaxes(a, -1, -2)) / 2


S4 = symmetric((4, 4))
S233 = symmetric((2, 3, 3))
N3 = RNG.uniform(-2, 2, size=(3, 3))  # not symmetric
W4 = RNG.uniform(-1, 1, size=(4, 4))
W3 = RNG.uniform(-1, 1, size=(3, 3))


def values_of(**values):
    return {k: np.asarray(v).tolist() for k, v in values.items()}


def used(program, values: dict) -> dict:
    """The values of the program's own variables, as lists."""
    return {k: np.asarray(v).tolist() for k, v in values.items() if k in program.inputs}


def ev(expr, **values):
    program = parse(expr)
    return api.eval_of(program, used(program, values)).value


def grad(expr, wrt=("A",), **values):
    program = parse(expr)
    return api.grad_of(program, used(program, values), wrt=list(wrt))


def sym(a):
    return (a + np.swapaxes(a, -1, -2)) / 2


# ---------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("a", [S4, S233, N3], ids=["4x4", "stack", "not symmetric"])
def test_eigh_values_match_numpy_of_the_symmetric_part(a):
    w, v = np.linalg.eigh(sym(a))
    np.testing.assert_allclose(ev("eigvalsh(A)", A=a), w, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(ev("eigh(A)[0]", A=a), w, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(ev("eigh(A)[1]", A=a), v, rtol=1e-12, atol=1e-14)
    assert np.all(np.diff(ev("eigvalsh(A)", A=a), axis=-1) > 0)  # ascending


@pytest.mark.parametrize("a", [S4, N3], ids=["4x4", "not symmetric"])
def test_v_diag_l_vt_gives_back_the_symmetric_part(a):
    n = a.shape[-1]
    rebuilt = ev(f"L, V = eigh(A); (V * reshape(L, [1, {n}])) @ transpose(V)", A=a)
    np.testing.assert_allclose(rebuilt, sym(a), atol=1e-13)
    orth = ev("V = eigh(A)[1]; transpose(V) @ V", A=a)
    np.testing.assert_allclose(orth, np.eye(n), atol=1e-14)


@pytest.mark.parametrize(
    "shape", [(3, 3), (2, 4), (4, 2), (2, 3, 4), (1, 1), (1, 3)], ids=lambda s: str(s)
)
def test_pinv_matches_numpy_with_torch_cutoff(shape):
    a = RNG.uniform(-2, 2, size=shape)
    want = np.linalg.pinv(a, rcond=max(shape[-2:]) * EPS)
    np.testing.assert_allclose(ev("pinv(A)", A=a), want, rtol=1e-13, atol=1e-14)


def test_pinv_of_a_rank_deficient_matrix_cuts_its_small_singular_values():
    u, _ = np.linalg.qr(RNG.normal(size=(3, 3)))
    a = (u * [4.0, 1.0, 1e-17]) @ u.T  # the third singular value is below 3 eps 4
    want = (u[:, :2] / [4.0, 1.0]) @ u[:, :2].T
    np.testing.assert_allclose(ev("pinv(A)", A=a), want, atol=1e-13)


def test_a_matrix_with_nan_or_inf_gives_nan_only_for_itself(cli):
    stack = [[[1.0, np.nan], [np.nan, 2.0]], [[2.0, 1.0], [1.0, 3.0]]]
    w = ev("eigvalsh(A)", A=stack)
    assert np.isnan(w[0]).all()
    np.testing.assert_allclose(w[1], np.linalg.eigvalsh(stack[1]), rtol=1e-15)
    v = ev("eigh(A)[1]", A=[[[np.inf, 0.0], [0.0, 1.0]], stack[1]])
    assert np.isnan(v[0]).all() and np.isfinite(v[1]).all()
    p = ev("pinv(A)", A=[[[1.0, np.nan, 0.0]], [[1.0, 2.0, 2.0]]])
    assert np.isnan(p[0]).all()
    np.testing.assert_allclose(p[1], [[1 / 9], [2 / 9], [2 / 9]], rtol=1e-14)
    r = cli("eval", "eigvalsh(A)", "--A", "[[1, nan], [2, 3]]", "--json")
    assert r.code == 0 and r.json["value"] == ["nan", "nan"]


# ---------------------------------------------------------------------------
# Gradients against PyTorch and central differences
# ---------------------------------------------------------------------------

# gauge-invariant losses: L, V's squares, V diag(f(L)) Vᵀ, pinv
EIGH_LOSSES = [
    ("sum(eigvalsh(A) * w)", lambda t, L, V, w, W: (L * w).sum()),
    ("L, V = eigh(A); sum(V ** 2 * W)", lambda t, L, V, w, W: (V**2 * W).sum()),
    (
        "L, V = eigh(A); sum(V ** 2 * W) + sum(L ** 3 * w)",
        lambda t, L, V, w, W: (V**2 * W).sum() + (L**3 * w).sum(),
    ),
    (
        "L, V = eigh(A); sum(einsum('...ij,...j,...kj->...ik', V, exp(L), V) * W)",
        lambda t, L, V, w, W: (((V * t.exp(L)[..., None, :]) @ V.mT) * W).sum(),
    ),
]


@pytest.mark.parametrize(("expr", "loss"), EIGH_LOSSES, ids=[e for e, _ in EIGH_LOSSES])
@pytest.mark.parametrize("a", [S4, symmetric((2, 4, 4))], ids=["4x4", "stack"])
def test_eigh_gradients_match_pytorch(torch, expr, loss, a):
    w = RNG.uniform(-1, 1, size=a.shape[:-1])
    W = RNG.uniform(-1, 1, size=a.shape)
    t = torch.tensor(a, dtype=torch.float64, requires_grad=True)
    L, V = torch.linalg.eigh(t)
    out = loss(torch, L, V, torch.tensor(w), torch.tensor(W))
    (theirs,) = torch.autograd.grad(out, t)
    ours = grad(expr, A=a, w=w, W=W)
    np.testing.assert_allclose(ours.value, out.item(), rtol=1e-12)
    np.testing.assert_allclose(ours.grad["A"], theirs.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(("expr", "loss"), EIGH_LOSSES, ids=[e for e, _ in EIGH_LOSSES])
def test_eigh_hessians_match_pytorch(torch, expr, loss):
    a, w, W = symmetric((3, 3)), RNG.uniform(-1, 1, size=3), W3
    f = lambda t: loss(torch, *torch.linalg.eigh(t), torch.tensor(w), torch.tensor(W))  # noqa: E731
    theirs = torch.autograd.functional.hessian(f, torch.tensor(a, dtype=torch.float64))
    program = parse(expr)
    ours = api.hessian_of(program, used(program, {"A": a, "w": w, "W": W}), wrt=["A"])
    np.testing.assert_allclose(ours.hessian["A"]["A"], theirs.numpy(), rtol=1e-9, atol=1e-11)


def test_eigh_tangents_match_pytorch_forward_mode(torch):
    a, da = S4, symmetric((4, 4))
    ta, tda = torch.tensor(a), torch.tensor(da)
    _, (dL, dV) = torch.func.jvp(torch.linalg.eigh, (ta,), (tda,))
    _, V = torch.linalg.eigh(ta)
    ours = api.jvp_of(parse("eigvalsh(A)"), values_of(A=a), {"A": da.tolist()})
    np.testing.assert_allclose(ours.jvp, dL.numpy(), rtol=1e-12, atol=1e-13)
    # V's tangent up to each column's sign: the tangent of V's squares
    ours = api.jvp_of(parse("eigh(A)[1] ** 2"), values_of(A=a), {"A": da.tolist()})
    np.testing.assert_allclose(ours.jvp, (2 * V * dV).numpy(), rtol=1e-10, atol=1e-12)


def test_a_matrix_not_symmetric_is_its_symmetric_part(torch):
    # the gradient is symmetric (PyTorch's formula) and is the derivative of this forward
    expr = "L, V = eigh(A); sum(V ** 2 * W) + sum(L ** 3)"
    values = {"A": N3, "W": W3}
    ours = grad(expr, **values).grad["A"]
    np.testing.assert_allclose(ours, ours.T, atol=1e-15)
    np.testing.assert_allclose(ours, central(expr, "A", values), rtol=1e-6, atol=1e-7)
    t = torch.tensor(sym(N3), requires_grad=True)
    L, V = torch.linalg.eigh(t)
    (theirs,) = torch.autograd.grad((V**2 * torch.tensor(W3)).sum() + (L**3).sum(), t)
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4), (4, 2), (2, 3, 4)], ids=lambda s: str(s))
def test_pinv_derivatives_match_pytorch(torch, shape):
    a = RNG.uniform(-2, 2, size=shape)
    g = RNG.uniform(-1, 1, size=shape[:-2] + (shape[-1], shape[-2]))
    da = RNG.uniform(-1, 1, size=shape)
    t = torch.tensor(a, requires_grad=True)
    out = (torch.linalg.pinv(t) ** 2 * torch.tensor(g)).sum()
    (theirs,) = torch.autograd.grad(out, t)
    ours = grad("sum(pinv(A) ** 2 * G)", A=a, G=g)
    np.testing.assert_allclose(ours.value, out.item(), rtol=1e-12)
    np.testing.assert_allclose(ours.grad["A"], theirs.numpy(), rtol=1e-10, atol=1e-12)
    _, tangent = torch.func.jvp(torch.linalg.pinv, (torch.tensor(a),), (torch.tensor(da),))
    jv = api.jvp_of(parse("pinv(A)"), values_of(A=a), {"A": da.tolist()}).jvp
    np.testing.assert_allclose(jv, tangent.numpy(), rtol=1e-10, atol=1e-12)
    f = lambda x: (torch.linalg.pinv(x) ** 2 * torch.tensor(g)).sum()  # noqa: E731
    hess = torch.autograd.functional.hessian(f, torch.tensor(a))
    ours = api.hessian_of(parse("sum(pinv(A) ** 2 * G)"), values_of(A=a, G=g), wrt=["A"])
    np.testing.assert_allclose(ours.hessian["A"]["A"], hess.numpy(), rtol=1e-8, atol=1e-10)


GRAD_EXPRS = [
    ("sum(eigvalsh(A) * [1, -2, 0.5])", N3),
    ("L, V = eigh(A); sum(V ** 2 * W)", N3),
    ("sum(pinv(A) * W)", N3),
    ("sum(pinv(A[:2]) ** 2)", N3),
    ("sum(pinv(transpose(A[:2])) * A[:2])", N3),
]


@pytest.mark.parametrize(("expr", "a"), GRAD_EXPRS, ids=[e for e, _ in GRAD_EXPRS])
def test_gradients_against_central_differences(expr, a):
    values = used(parse(expr), {"A": a, "W": W3})
    np.testing.assert_allclose(
        grad(expr, **values).grad["A"], central(expr, "A", values), rtol=1e-6, atol=1e-7
    )


# ---------------------------------------------------------------------------
# Where there is no derivative: repeated eigenvalues, a rank-deficient pinv
# ---------------------------------------------------------------------------


def test_repeated_eigenvalues_warn_and_give_pytorchs_numbers(cli, torch):
    eye = json.dumps([[2.0, 0.0], [0.0, 2.0]])
    r = cli("grad", "sum(eigh(A)[1] ** 2 * [[1, 2], [3, 4]])", "--A", eye, "--json")
    assert r.code == 0, r.out
    assert any("eigh(A) has repeated eigenvalues" in w for w in r.json["warnings"])
    t = torch.tensor([[2.0, 0.0], [0.0, 2.0]], dtype=torch.float64, requires_grad=True)
    (theirs,) = torch.autograd.grad(
        (torch.linalg.eigh(t)[1] ** 2 * torch.tensor([[1.0, 2.0], [3.0, 4.0]])).sum(), t
    )
    assert np.isnan(theirs.numpy()).all() and r.json["grad"]["A"] == [["nan"] * 2] * 2
    r = cli("grad", "sum(eigvalsh(A))", "--A", eye, "--json")  # their sum: the identity
    assert r.code == 0 and r.json["grad"]["A"] == [[1.0, 0.0], [0.0, 1.0]]
    assert any("eigvalsh(A) has repeated eigenvalues" in w for w in r.json["warnings"])
    r = cli("grad", "sum(eigvalsh(A))", "--A", "[[2, 1], [1, 2]]", "--json")
    assert "warnings" not in r.json
    r = cli("eval", "eigh(A)[1]", "--A", eye, "--json")  # the value is fine, no warning
    assert r.code == 0 and "warnings" not in r.json


def test_a_rounding_gap_counts_as_repeated():
    # Q diag(1, 1, 3) Qᵀ: LAPACK's two 1s differ in their last bits; V's gradient is noise
    q, _ = np.linalg.qr(RNG.normal(size=(3, 3)))
    a = sym((q * [1.0, 1.0, 3.0]) @ q.T)
    r = grad("sum(eigh(A)[1] ** 2 * W)", A=a, W=W3)
    assert any("repeated eigenvalues" in w for w in r.warnings)


def test_a_rank_deficient_pinv_warns_and_keeps_pytorchs_gradient(cli, torch):
    a = [[1.0, 2.0], [2.0, 4.0]]
    r = cli("grad", "sum(pinv(A) * [[1, 2], [3, 4]])", "--A", json.dumps(a), "--json")
    assert r.code == 0 and any("rank-deficient" in w for w in r.json["warnings"])
    t = torch.tensor(a, dtype=torch.float64, requires_grad=True)
    (theirs,) = torch.autograd.grad(
        (torch.linalg.pinv(t) * torch.tensor([[1.0, 2.0], [3.0, 4.0]])).sum(), t
    )
    np.testing.assert_allclose(r.json["grad"]["A"], theirs.numpy(), rtol=1e-12, atol=1e-14)
    r = cli("grad", "sum(pinv(A))", "--A", "[[1, 2], [2, 5]]", "--json")
    assert r.code == 0 and "warnings" not in r.json


# ---------------------------------------------------------------------------
# The language
# ---------------------------------------------------------------------------


def test_eigh_prints_parses_back_and_unpacks():
    assert to_text(parse("eigh(A)[1]").output) == "eigh(A, part=1)"
    assert to_text(parse("eigh(A)[0]").output) == "eigvalsh(A)"
    assert to_text(parse("eigh(A)[-1]").output) == "eigh(A, part=1)"
    assert to_text(parse("L, V = eigh(A); V").output) == "eigh(A, part=1)"
    assert to_text(parse("eigh(A, part=1)").output) == "eigh(A, part=1)"
    assert to_text(parse("pinv(A) @ A").output) == "pinv(A) @ A"
    np.testing.assert_array_equal(ev("eigh(A, part=1)", A=S4), ev("eigh(A)[1]", A=S4))


@pytest.mark.parametrize(
    ("expr", "fragment"),
    [
        ("eigh(A)", "gives 2 arrays"),
        ("eigh(A)[2]", "from -2 to 1"),
        ("L, V, W = eigh(A); L", "gives 2 arrays"),
        ("eigh(A) + 1", "gives 2 arrays"),
    ],
)
def test_several_arrays_misused_is_an_input_error(cli, expr, fragment):
    r = cli("eval", expr, "--A", "[[1, 0], [0, 2]]", "--json")
    assert r.code == 2, r.out
    assert fragment in r.json["error"]["message"], r.json


@pytest.mark.parametrize(
    ("expr", "value", "fragment"),
    [
        ("eigvalsh(A)", "[[1, 2, 3], [4, 5, 6]]", "square matrix"),
        ("eigh(A)[1]", "[1, 2]", "square matrix"),
        ("pinv(A)", "[1, 2]", "a matrix"),
    ],
)
def test_shapes_that_do_not_fit_are_errors(cli, expr, value, fragment):
    r = cli("eval", expr, "--A", value, "--json")
    assert r.code == 1, r.out
    assert fragment in r.json["error"]["message"], r.json


def test_batch_is_row_by_row_and_diff_refuses(cli):
    expr = "L, V = eigh(A); sum(V ** 2 * [[1, 2, 3]]) + sum(L ** 3) + sum(pinv(A[:2]) ** 2)"
    rows = [{"A": symmetric((3, 3)).tolist()} for _ in range(3)]
    columns = {"A": np.array([r["A"] for r in rows])}
    res = core_batch.evaluate_batch(parse(expr), columns, 3, grad=True)  # ("trailing", 2)
    for i, row in enumerate(rows):
        one = api.grad_of(parse(expr), row)
        np.testing.assert_allclose(res.value[i], one.value, rtol=1e-14)
        np.testing.assert_allclose(res.grad["A"][i], one.grad["A"], rtol=1e-12, atol=1e-14)
    for source in ("sum(eigvalsh(A))", "sum(pinv(A))", "eigh(A)[1][0, 0]"):
        r = cli("diff", source, "--wrt", "A", "--json")
        assert r.code == 1 and r.json["error"]["kind"] == "unsupported", r.out


def test_check_and_explain_through_the_command_line(cli):
    a = json.dumps(S4.tolist())
    r = cli(
        "check",
        "L, V = eigh(A); sum(V ** 2 * A) + sum(L ** 3) + sum(pinv(A) ** 2)",
        "--A",
        a,
        "--json",
    )
    assert r.code == 0 and r.json["passed"], r.out
    r = cli("explain", "sum(eigvalsh(A))", "--A", a)
    assert r.code == 0 and "eigvalsh" in r.out


@pytest.mark.parametrize("target", ["numpy", "jax", "torch"])
def test_codegen_writes_them_or_refuses_eigh_in_torch(cli, target):
    if target != "numpy":
        pytest.importorskip(target)
    a = json.dumps(S4.tolist())

    def codegen(expr, *more):
        return cli("codegen", expr, "--A", a, "--target", target, *more)

    r = codegen("sum(pinv(A) ** 2) + sum(eigvalsh(A) ** 3)", "--check", "5", "--hessian")
    if target == "torch":  # eigvalsh's gradient is made with eigh's vectors
        assert r.code == 1 and "eigh" in r.err, r.err
        r = codegen("sum(pinv(A) ** 2)", "--check", "5", "--hessian")
    assert r.code == 0 and "passed" in r.err, r.err
    if target != "torch":
        r = codegen("sum(eigh(A)[1] ** 2 * A)", "--check", "5")
        assert r.code == 0 and "passed" in r.err, r.err
    r = cli("codegen", "sum(pinv(A))", "--A", a, "--target", "c")
    assert r.code == 1 and "pinv" in r.err


def test_float32_counts_its_own_rounding(cli):
    # 1 and the next float32 after it: repeated in float32 (eps 1.2e-7), not in float64
    a = "[[1, 0], [0, 1.0000001]]"
    r = cli("--dtype", "float32", "grad", "sum(eigvalsh(A))", "--A", a, "--json")
    assert r.code == 0 and any("repeated" in w for w in r.json["warnings"]), r.out
    r = cli("grad", "sum(eigvalsh(A))", "--A", a, "--json")
    assert r.code == 0 and "warnings" not in r.json, r.out
    r = cli("--dtype", "float32", "eval", "pinv(A)", "--A", "[[1, 0], [0, 1e-7]]", "--json")
    assert r.json["value"] == [[1.0, 0.0], [0.0, 0.0]], r.out  # 1e-7 <= 2 eps32: cut
    r = cli("eval", "pinv(A)", "--A", "[[1, 0], [0, 1e-7]]", "--json")
    assert r.json["value"][1][1] == pytest.approx(1e7), r.out
