"""The general eigendecomposition (issue 27): eigvals(A) and eig(A), complex as
torch.linalg.eigvals and torch.linalg.eig (always complex, even where every eigenvalue is
real; NumPy's eig gives real arrays then), declared as the other matrix functions of
:mod:`.linalg` (kind "linalg", batched over the leading axes).

eig(A) gives two arrays: the eigenvalues L and the eigenvectors V (columns, A V = V diag(L)),
each of unit norm with LAPACK's phase (its largest component real): the language's
several-array value, ``L, V = eig(A)`` or ``eig(A)[1]``.  L is eigvals(A), V the part 1 of the
op "eig".  Only a function that does not depend on V's phases (abs(V)**2, V diag(f(L)) V^-1)
is one function of A.

Gradients are PyTorch's (linalg_eig_backward and linalg_eig_jvp), with E_ij = L_j - L_i (1 on
the diagonal), for a real or a complex A (a real A takes the real part, as PyTorch):

* eigvals: gA = V^-H diag(gL) V^H; dL = diag(V^-1 dA V);
* eig's V: gA = V^-H ((W - V^H V diag(Re diag W)) / conj(E), its diagonal 0) V^H with
  W = V^H gV; dV = dX - V diag(Re diag(V^H dX)), dX = V ((V^-1 dA V) / E, its diagonal 0).

Where eigenvalues repeat, E has zeros off its diagonal: V has no derivative there and L's
is not each eigenvalue's (PyTorch gives inf or nan, and so does this); both ops warn (their
``kink=``), eigenvalues within n·eps·max|L| of each other counted as repeated.
"""

from __future__ import annotations

from .. import backend
from ..errors import EvaluationError
from .eigen import (
    _column,
    _eigen_pair,
    _eps,
    _finite_or_zero,
    _gaps,  # E_ij = L_j - L_i, as eigh
)
from .linalg import _square
from .rules import _xp as xp
from .rules import call, conj, is_complex, real_part
from .table import Code

_REFUSED = Code(
    refused="eig and eigvals have complex values, which generated code does not write yet"
)


def _eig_run(a):
    """NumPy's eig of the stack ``a`` as complex arrays (L, V): a matrix with a nan or inf
    entry gives nan."""
    x = xp()
    zeroed, finite = _finite_or_zero(a)
    try:
        w, v = x.linalg.eig(zeroed)
    except backend.host.linalg.LinAlgError:
        raise EvaluationError(
            "eig: the decomposition did not converge (LAPACK gave up on this matrix)"
        ) from None
    kind = backend.COMPLEX_OF[a.dtype.type]
    w, v = w.astype(kind, copy=False), v.astype(kind, copy=False)
    if finite is None:
        return w, v
    return x.where(finite[..., None], w, x.nan), x.where(finite[..., None, None], v, x.nan)


def _eigvals_forward(a):
    _square(a, "eigvals")
    return _eig_run(a)[0]


def _eig_forward(a, part=None):
    _square(a, "eig")
    if part not in (0, 1):
        raise ValueError("eig() gives two arrays (L, V): take one, eig(A)[1]")
    return _eig_run(a)[part]


def _eye(n: int):
    return backend.host.eye(n)


def _diagonal(m):
    """The diagonal of each matrix of the stack ``m`` (..., n)."""
    return call("sum", m * _eye(m.shape[-1]), axis=-1, keepdims=False)


def _mm(a, b):
    return call("matmul", a, b)


def _mh(m):
    return conj(call("mT", m))


def _eig_backward(A, gL, gV):
    """PyTorch's linalg_eig_backward: gA from the cotangents of L and V."""
    V = call("eig", A, part=1)
    Vh = _mh(V)
    n = V.shape[-1]
    if gV is None:
        inner = _column(gL) * _eye(n)
    else:
        W = _mm(Vh, gV)
        W = W - _mm(Vh, V * _column(call("real", _diagonal(W))))
        inner = W / conj(_gaps(call("eigvals", A))) * (1.0 - _eye(n))
        if gL is not None:
            inner = inner + _column(gL) * _eye(n)
    gA = call("solve", Vh, _mm(inner, Vh))
    return gA if is_complex(A) else real_part(gA)


def _eig_jvp(n, ts):
    """PyTorch's linalg_eig_jvp: the tangent of the part asked for."""
    dA = ts[0]
    if dA is None:
        return None
    A = n.inputs[0]
    V = call("eig", A, part=1)
    dP = call("solve", V, _mm(dA, V))  # V^-1 dA V
    if n.attrs.get("part", 0) == 0:
        return _diagonal(dP)
    k = V.shape[-1]
    dX = _mm(V, dP / _gaps(call("eigvals", A)) * (1.0 - _eye(k)))
    return dX - V * _column(call("real", _diagonal(_mm(_mh(V), dX))))


def _repeated(w):
    """Per matrix of the stack of eigenvalues ``w``: two within n·eps·max|w|."""
    x = xp()
    n = w.shape[-1]
    if n < 2:
        return x.zeros(w.shape[:-1], dtype=bool)
    scale = n * _eps(w.real) * x.abs(w).max(axis=-1)
    gaps = x.where(x.eye(n, dtype=bool), x.inf, x.abs(w[..., :, None] - w[..., None, :]))
    return (gaps <= scale[..., None, None]).any(axis=(-2, -1))


_eigen_pair(
    ("eigvals", "eig"),
    "LinalgEigBackward0",
    (_eigvals_forward, _eig_forward),
    (lambda n, ts: None if ts[0] is None else _eig_jvp(n, ts), _eig_jvp),
    _eig_backward,
    (lambda a: _eig_run(a)[0], _repeated, "V^-H diag(g) V^H"),
    (_REFUSED, _REFUSED),
    on_complex="rules",
)
