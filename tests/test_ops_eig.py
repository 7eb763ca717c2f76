"""eig and eigvals (issue 27): complex eigenvalues and eigenvectors with torch.linalg.eig's
gradients, for real and complex matrices; losses blind to the eigenvectors' phases (the
only functions of V that are functions of A)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from autograd_cli.core import api
from autograd_cli.grammar import parse

REAL = [[1.0, 2.0, 0.3], [-3.0, 0.5, 1.0], [0.2, 0.1, 2.0]]
COMPLEX = (np.array(REAL) + 1j * np.array([[0.1, 0, 0.2], [0.3, -0.1, 0], [0, 0.5, 0]])).tolist()

# (the language's loss, torch's) of L, V = eig(A)
LOSSES = {
    "sum(abs(eigvals(A))**2)": lambda t, L, V: (L.abs() ** 2).sum(),
    "sum(real(eigvals(A)**2)) + sum(imag(eigvals(A)))": lambda t, L, V: (
        (L**2).real.sum() + L.imag.sum()
    ),
    "L, V = eig(A); sum(abs(V)**2*[1, 2, 3]) + sum(abs(V)**3)": lambda t, L, V: (
        (V.abs() ** 2 * t.arange(1, 4)).sum() + (V.abs() ** 3).sum()
    ),
    "L, V = eig(A); sum(abs(V)**3) + sum(real(L*conj(L)))": lambda t, L, V: (
        (V.abs() ** 3).sum() + (L * L.conj()).real.sum()
    ),
}


@pytest.mark.parametrize("matrix", [REAL, COMPLEX], ids=["real", "complex"])
@pytest.mark.parametrize("expr", sorted(LOSSES))
def test_gradients_are_torch_linalg_eigs(expr, matrix, torch):
    dtype = torch.complex128 if isinstance(matrix[0][0], complex) else torch.float64
    a = torch.tensor(matrix, dtype=dtype, requires_grad=True)
    L, V = torch.linalg.eig(a)
    LOSSES[expr](torch, L, V).backward()
    got = api.grad_of(parse(expr), {"A": matrix}).grad["A"]
    assert np.iscomplexobj(got) == np.iscomplexobj(np.asarray(matrix))
    np.testing.assert_allclose(got, a.grad.resolve_conj().numpy(), rtol=1e-10, atol=1e-12)


def test_values_are_numpys_as_complex_arrays():
    got = api.eval_of(parse("eigvals(A)"), {"A": [[0.0, 1.0], [-1.0, 0.0]]}).value
    assert sorted(got.tolist(), key=lambda z: z.imag) == [-1j, 1j]
    # all real eigenvalues: still complex, as torch.linalg.eigvals (NumPy gives reals)
    got = api.eval_of(parse("eigvals(A)"), {"A": [[2.0, 0.0], [0.0, 3.0]]}).value
    assert got.dtype == np.complex128 and got.tolist() == [2, 3]
    L, V = np.linalg.eig(np.array(REAL))
    np.testing.assert_array_equal(api.eval_of(parse("eig(A)[1]"), {"A": REAL}).value, V)
    np.testing.assert_array_equal(api.eval_of(parse("eig(A)[0]"), {"A": REAL}).value, L)


def test_tangents_are_central_differences():
    from autograd_cli.core import apply, tensor
    from autograd_cli.core.ops import OPS, RuleContext

    rng = np.random.default_rng(3)
    a = np.array(REAL)
    d = rng.normal(size=a.shape)
    h = 1e-6
    for name, attrs in (("eigvals", {}), ("eig", {"part": 0})):
        op = OPS[name]
        out = apply(op, tensor(a), **attrs)
        jt = op.jvp(RuleContext(op, (tensor(a),), out, attrs, (True,)), (tensor(d),))
        hi = np.linalg.eigvals(a + h * d)
        lo = np.linalg.eigvals(a - h * d)
        # match the eigenvalues by nearness (LAPACK's order may change)
        base = out.numpy()
        order_hi = [np.argmin(abs(hi - z)) for z in base]
        order_lo = [np.argmin(abs(lo - z)) for z in base]
        fd = (hi[order_hi] - lo[order_lo]) / (2 * h)
        np.testing.assert_allclose(jt.numpy(), fd, rtol=1e-6, atol=1e-8)


def test_repeated_eigenvalues_warn(cli):
    out = cli("grad", "sum(abs(eigvals(A))**2)", "--A", "[[1, 0], [0, 1]]", "--json")
    doc = json.loads(out.out)
    assert out.code == 0
    assert any("repeated eigenvalues" in w for w in doc["warnings"])


def test_the_command_line(cli):
    doc = json.loads(cli("eval", "eigvals(A)", "--A", "[[0, 1], [-1, 0]]", "--json").out)
    assert sorted(doc["value"], key=lambda z: z["im"]) == [
        {"re": 0.0, "im": -1.0},
        {"re": 0.0, "im": 1.0},
    ]
    out = cli("grad", "sum(eigvals(A))", "--A", "[[0, 1], [-1, 0]]", "--json")
    assert out.code == 1  # a complex output needs --grad-output (or a real loss)
    out = cli("grad", "sum(real(eigvals(A)))", "--A", "[[0, 1], [-1, 0]]", "--json")
    assert json.loads(out.out)["grad"]["A"] == [[1.0, 0.0], [0.0, 1.0]]  # d trace / dA = I


def test_a_non_square_matrix_is_a_shape_error(cli):
    out = cli("eval", "eig(A)[0]", "--A", "[[1, 2, 3]]", "--json")
    assert out.code != 0
    assert "square" in json.loads(out.out)["error"]["message"]
