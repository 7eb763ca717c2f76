"""The symmetric eigendecomposition and the pseudo-inverse (issue 27): eigvalsh(A), eigh(A)
and pinv(A), declared as the other matrix functions of :mod:`.linalg` (kind "linalg",
batched over the leading axes) and built as svd/svdvals are in :mod:`.svd`.

eigh(A) gives two arrays, as torch.linalg.eigh: the eigenvalues L in ascending order and
the eigenvectors V (columns, A = V diag(L) Vᵀ): the language's several-array value, indexed
eigh(A)[1] or unpacked ``L, V = eigh(A)``.  L is eigvalsh(A) (torch.linalg.eigvalsh), V the
part 1 of the op "eigh" (it prints as eigh(A, part=1)); their gradients add up to
linalg_eigh's.

A is read as symmetric: the decomposition of (A + Aᵀ)/2 (A itself, bit for bit, when it is
symmetric), as cholesky reads it.  NumPy and PyTorch read the lower triangle only, and
PyTorch's gradient is symmetric, which is not the derivative of a lower-triangle forward:
with the symmetric part it is, so central differences, `check` and second derivatives agree
with it.  The eigenvectors' signs are LAPACK's (NumPy's); only a function that does not
depend on them (V diag(f(L)) Vᵀ, the squares of V's entries) is one function of A.

Gradients are PyTorch's (linalg_eig_backward and linalg_eig_jvp, the Hermitian case), with
E_ij = L_j - L_i (1 on the diagonal):

* eigvalsh: gA = V diag(gL) Vᵀ; dL = diag(Vᵀ dA V);
* eigh's V: gA = V (skew(Vᵀ gV) / E) Vᵀ, skew(X) = (X - Xᵀ)/2; dV = V (Vᵀ dA V / E), its
  diagonal 0.

Where eigenvalues repeat, V is not unique and E has zeros off its diagonal: V's derivative
is not defined there (PyTorch gives inf or nan, and so does this), and each eigenvalue is
not differentiable either (only functions that treat the repeated ones alike, their sum,
are).  Both ops warn there (their ``kink=``), with eigenvalues within n·eps·max|L| of each
other counted as repeated (the numbers past that are rounding's; eps of A's dtype).

pinv(A) is the Moore-Penrose pseudo-inverse of any m x n matrix (NumPy's and PyTorch's),
singular values up to max(m, n)·eps·σ_max taken as 0 (PyTorch's default rtol, NumPy's
API-standard one).  Its gradient is PyTorch's pinv_backward: the derivative among matrices
of A's rank, which is the derivative where A has full rank; where A is rank-deficient a
small change can raise the rank and make pinv jump, which the op warns.  A matrix with a nan
or inf entry gives nan (all three ops).
"""

from __future__ import annotations

from .. import backend
from ..errors import EvaluationError
from .linalg import _all, _matrix_op, _rank_two, _square, _swap
from .linalg_code import eigh_code, eigvalsh_code, pinv_code
from .rules import _xp as xp
from .rules import call, reshape
from .table import Param, code


def _eps(a) -> float:
    """The machine epsilon of ``a``'s dtype (float64's, float32's)."""
    return float(backend.host.finfo(a.dtype).eps)


def _finite_or_zero(a):
    """``a`` with each matrix holding a nan or inf entry made 0, and the per-matrix mask of
    the finite ones (None where all are), for factorisations that would raise on them."""
    x = xp()
    finite = x.isfinite(a).all(axis=(-2, -1))
    if _all(finite):
        return a, None
    return x.where(finite[..., None, None], a, 0.0), finite


def _symmetric(a):
    """(A + Aᵀ)/2, or A itself where it is symmetric (bit for bit)."""
    at = _swap(a)
    return a if _all(a == at) else (a + at) * 0.5


def _eigh_run(a, vectors: bool):
    """NumPy's eigh (or eigvalsh) of the symmetric part of the stack ``a``: matrices with a
    nan or inf entry give nan."""
    x = xp()
    a, finite = _finite_or_zero(_symmetric(a))
    try:
        out = x.linalg.eigh(a) if vectors else x.linalg.eigvalsh(a)
    except backend.host.linalg.LinAlgError:
        raise EvaluationError(
            "eigh: the decomposition did not converge (LAPACK gave up on this matrix)"
        ) from None
    if finite is None:
        return out
    if not vectors:
        return x.where(finite[..., None], out, x.nan)
    w, v = out
    return x.where(finite[..., None], w, x.nan), x.where(finite[..., None, None], v, x.nan)


def _eigvalsh_forward(a):
    _square(a, "eigvalsh")
    return _eigh_run(a, False)


def _eigh_forward(a, part=None):
    _square(a, "eigh")
    if part not in (0, 1):
        raise ValueError("eigh() gives two arrays (L, V): take one, eigh(A)[1]")
    if part == 0:
        return _eigh_run(a, False)
    return _eigh_run(a, True)[1]


def _column(s):
    """(..., k) -> (..., 1, k): s_j along each row."""
    return reshape(s, tuple(s.shape[:-1]) + (1, s.shape[-1]))


def _gaps(L):
    """E with E_ij = L_j - L_i, 1 on the diagonal (PyTorch's, for 0 / E there)."""
    eye = backend.host.eye(L.shape[-1])
    col = _column(L)
    return col - call("mT", col) + eye


def _eigh_backward(A, gL, gV):
    """PyTorch's linalg_eig_backward (real symmetric): gA from the cotangents of L and V."""
    mT = lambda t: call("mT", t)  # noqa: E731
    mm = lambda a, b: call("matmul", a, b)  # noqa: E731
    V = call("eigh", A, part=1)
    if gV is None:
        return mm(V * _column(gL), mT(V))
    VtgV = mm(mT(V), gV)
    inner = (VtgV - mT(VtgV)) * 0.5 / _gaps(call("eigvalsh", A))
    if gL is not None:
        inner = inner + mT(_column(gL)) * backend.host.eye(gL.shape[-1])
    return mm(V, mm(inner, mT(V)))


def _part_vjp(backward):
    """The vjp of a decomposition's part (0: the eigenvalues L, 1: the eigenvectors V) from
    its ``backward(A, gL, gV)`` (eigh's and eig's)."""

    def vjp(n, g):
        if n.attrs["part"] == 0:
            return (backward(n.inputs[0], g, None),)
        return (backward(n.inputs[0], None, g),)

    return vjp


def _eigenvalue_tangent(A, dA):
    """dL = diag(Vᵀ dA V)."""
    V = call("eigh", A, part=1)
    return call("sum", V * call("matmul", dA, V), axis=-2, keepdims=False)


def _eigh_jvp(n, ts):
    """PyTorch's linalg_eig_jvp (real symmetric): the tangent of the part asked for."""
    dA = ts[0]
    if dA is None:
        return None
    A = n.inputs[0]
    if n.attrs["part"] == 0:
        return _eigenvalue_tangent(A, dA)
    mm = lambda a, b: call("matmul", a, b)  # noqa: E731
    V = call("eigh", A, part=1)
    dS = (dA + call("mT", dA)) * 0.5
    dP = mm(call("mT", V), mm(dS, V))
    off = 1.0 - backend.host.eye(V.shape[-1])
    return mm(V, dP / _gaps(call("eigvalsh", A)) * off)


def _repeated(w):
    """Per matrix of the stack of ascending eigenvalues ``w``: two within n·eps·max|w|."""
    x = xp()
    n = w.shape[-1]
    if n < 2:
        return x.zeros(w.shape[:-1], dtype=bool)
    scale = n * _eps(w) * x.abs(w).max(axis=-1)
    return ((w[..., 1:] - w[..., :-1]) <= scale[..., None]).any(axis=-1)


def _repeated_kinks(values: str, vectors: str, eigenvalues, repeated, gradient: str):
    """The kinks of the eigenvalues' op ``values`` and of the decomposition ``vectors`` (part
    0 the eigenvalues, 1 the eigenvectors): eigenvalues that repeat, as ``repeated`` finds
    them among ``eigenvalues(A)``; ``gradient`` is the eigenvalues' formula used there.
    Gives ``kink(which)``, the kink of the op named ``which``."""
    on_values = (
        f"{values}(A) has repeated eigenvalues, where each one is not differentiable "
        "(a function that treats them alike, their sum, is); used PyTorch's gradient "
        f"{gradient} with LAPACK's eigenvectors"
    )
    on_vectors = (
        f"{vectors}(A) has repeated eigenvalues, where its eigenvectors are not unique and "
        "have no derivative; used PyTorch's formula, which divides by their differences "
        "(inf or nan, as PyTorch)"
    )

    def kink_of(which: str):
        def kink(inputs, out, attrs):
            a = inputs[0]
            if a.shape[-1] < 2:
                return None
            of_values = which == values or attrs.get("part") == 0
            if not backend.any_nonzero(repeated(out if of_values else eigenvalues(a))):
                return None
            return on_values if of_values else on_vectors

        return kink

    return kink_of


def _eigen_pair(names, node, forwards, jvps, backward, degenerate, codes, **facts):
    """An eigenvalue op and its decomposition (``names``, as ``("eigvalsh", "eigh")``), one
    entry each: ``forwards``, ``jvps`` and ``codes`` are the two ops' own; one
    ``backward(A, gL, gV)`` and one kink finder (``degenerate``: :func:`_repeated_kinks`'
    arguments after the names) serve both. The decomposition's param ``part`` picks the
    eigenvalues (0) or the eigenvectors (1)."""
    values, vectors = names
    kink = _repeated_kinks(values, vectors, *degenerate)
    _matrix_op(
        values,
        node,
        forwards[0],
        lambda n, g: (backward(n.inputs[0], g, None),),
        jvps[0],
        kink=kink(values),
        code=codes[0],
        **facts,
    )
    _matrix_op(
        vectors,
        node,
        forwards[1],
        _part_vjp(backward),
        jvps[1],
        params=(Param("part", "part", None),),
        kink=kink(vectors),
        code=codes[1],
        **facts,
    )


_eigen_pair(
    ("eigvalsh", "eigh"),
    "LinalgEighBackward0",
    (_eigvalsh_forward, _eigh_forward),
    (
        lambda n, ts: None if ts[0] is None else _eigenvalue_tangent(n.inputs[0], ts[0]),
        _eigh_jvp,
    ),
    _eigh_backward,
    (lambda a: _eigh_run(a, False), _repeated, "V diag(g) Vᵀ"),
    (code(eigvalsh_code), code(eigh_code)),
)


# ---- pinv(A): the Moore-Penrose pseudo-inverse -------------------------------------------
#
# With P = pinv(A) (n x m for A m x n), PyTorch's pinv_jvp and pinv_backward (one formula for
# both shapes; PyTorch orders the products by the smaller side):
#   dP = -P dA P + P Pᵀ dAᵀ (I - A P) + (I - P A) dAᵀ Pᵀ P
#   gA = -Pᵀ g Pᵀ + (I - A P) gᵀ P Pᵀ + Pᵀ P gᵀ (I - P A)


def _pinv_rtol(a) -> float:
    return max(a.shape[-2], a.shape[-1]) * _eps(a)


def _pinv_forward(a):
    _rank_two(a, "pinv")
    x = xp()
    a, finite = _finite_or_zero(a)
    out = x.linalg.pinv(a, rcond=_pinv_rtol(a))
    return out if finite is None else x.where(finite[..., None, None], out, x.nan)


def _pinv_vjp(n, g):
    mm = lambda a, b: call("matmul", a, b)  # noqa: E731
    A, P = n.inputs[0], n.out
    Pt, gt = call("mT", P), call("mT", g)
    left = mm(gt, mm(P, Pt))
    left = left - mm(A, mm(P, left))  # (I - A P) gᵀ P Pᵀ
    right = mm(mm(Pt, P), gt)
    right = right - mm(mm(right, P), A)  # Pᵀ P gᵀ (I - P A)
    return (left + right - mm(Pt, mm(g, Pt)),)


def _pinv_jvp(n, ts):
    dA = ts[0]
    if dA is None:
        return None
    mm = lambda a, b: call("matmul", a, b)  # noqa: E731
    A, P = n.inputs[0], n.out
    dAt = call("mT", dA)
    left = mm(mm(P, call("mT", P)), dAt)
    left = left - mm(mm(left, A), P)  # P Pᵀ dAᵀ (I - A P)
    right = mm(dAt, mm(call("mT", P), P))
    right = right - mm(P, mm(A, right))  # (I - P A) dAᵀ Pᵀ P
    return left + right - mm(P, mm(dA, P))


def _rank_deficient(inputs, out, attrs):
    """pinv's kink: a matrix whose rank is below min(m, n) (a singular value cut to 0)."""
    a = inputs[0]
    if min(a.shape[-2:]) == 0:
        return None
    zeroed, finite = _finite_or_zero(a)
    s = xp().linalg.svd(zeroed, compute_uv=False)
    low = (s <= _pinv_rtol(a) * s[..., :1]).any(axis=-1)
    if not backend.any_nonzero(low if finite is None else low & finite):
        return None
    return (
        "pinv(A) is not differentiable where A is rank-deficient (a small change can raise "
        "its rank and make pinv jump); used PyTorch's gradient, the derivative among "
        "matrices of the same rank"
    )


_matrix_op(
    "pinv",
    "LinalgPinvBackward0",
    _pinv_forward,
    _pinv_vjp,
    _pinv_jvp,
    kink=_rank_deficient,
    code=code(pinv_code),
)
