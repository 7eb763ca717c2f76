"""The singular value decomposition: svdvals(A) and svd(A, full_matrices=1) (issue 13).

Declared as the other matrix functions of :mod:`.linalg` (kind "linalg", batched over the
leading axes), from whose helpers it is made; a module of its own for its size.
"""

from __future__ import annotations

from .. import backend
from ..errors import EvaluationError
from .linalg import _all, _any, _matrix_op, _rank_two
from .linalg_code import svd_code, svdvals_code
from .rules import _array, call, reshape
from .rules import _xp as xp
from .table import Param, code

# ---- svdvals(A), svd(A, full_matrices=1): the singular value decomposition A = U diag(S) Vh ----
#
# NumPy's numpy.linalg.svd on the last two axes (stacks broadcast), singular values in
# descending order; svd(A) gives three arrays (U, S, Vh: the language's several-array values,
# indexed svd(A)[0] or unpacked U, S, Vh = svd(A)).  Each of U and Vh is a part of one op
# "svd" (part 0, 2: the value prints as svd(A, part=0)), S is svdvals(A) (PyTorch's
# torch.linalg.svdvals): their gradients add up to linalg_svd's.  NumPy's default
# full_matrices=1 gives U m x m and Vh n x n; full_matrices=0 the reduced k = min(m, n).
#
# Gradients are PyTorch's (svd_backward, linalg_svd_jvp): svdvals' is U diag(g) Vh, defined
# everywhere.  U's and Vh's divide by s_j² - s_i², so where singular values repeat (or, for a
# matrix that is not square, where one is 0) they are not defined: PyTorch gives inf or nan
# there, this is an evaluation error that says why (never a wrong number).  With
# full_matrices=1 the columns of U (rows of Vh) past k are any basis of the complement: their
# gradient is ignored and their tangent is 0 (PyTorch's).  A matrix
# with a nan or inf entry gives nan.


def _svd_run(a, full_matrices: bool, compute_uv: bool):
    """NumPy's svd of the stack ``a``, matrices with a nan or inf entry made nan (not NumPy's
    LinAlgError "SVD did not converge")."""
    x = xp()
    finite = x.isfinite(a).all(axis=(-2, -1))
    some_bad = not _all(finite)
    if some_bad:
        a = x.where(finite[..., None, None], a, 0.0)
    try:
        out = x.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    except backend.host.linalg.LinAlgError:
        raise EvaluationError(
            "svd: the decomposition did not converge (LAPACK gave up on this matrix)"
        ) from None
    if not compute_uv:
        return x.where(finite[..., None], out, x.nan) if some_bad else out
    u, s, vh = out
    if some_bad:
        u = x.where(finite[..., None, None], u, x.nan)
        s = x.where(finite[..., None], s, x.nan)
        vh = x.where(finite[..., None, None], vh, x.nan)
    return u, s, vh


def _svdvals_forward(a):
    _rank_two(a, "svdvals")
    return _svd_run(a, False, False)


def _svd_forward(a, full_matrices=True, part=None):
    _rank_two(a, "svd")
    if part not in (0, 1, 2):
        raise ValueError("svd() gives three arrays (U, S, Vh): take one, svd(A)[0]")
    return _svd_run(a, bool(full_matrices), True)[part]


def _column(s):
    """(..., k) -> (..., 1, k)."""
    return reshape(s, tuple(s.shape[:-1]) + (1, s.shape[-1]))


def _row(s):
    """(..., k) -> (..., k, 1)."""
    return reshape(s, tuple(s.shape) + (1,))


def _reduced(A):
    """U, S, Vh of the reduced SVD of A, as engine values (so rules written with them
    differentiate again)."""
    u = call("svd", A, full_matrices=False, part=0)
    return u, call("svdvals", A), call("svd", A, full_matrices=False, part=2)


def _gap(s):
    """E with E_ij = s_j² - s_i², 1 on the diagonal (PyTorch's, for 0 / E there)."""
    s2 = s * s
    k = s.shape[-1]
    return _column(s2) - _row(s2) + backend.host.eye(k)


def _svd_backward(A, gU, gS, gVh):
    """PyTorch's svd_backward (real), for the reduced U, S, Vh of A: gA."""
    m, n = A.shape[-2:]
    U, S, Vh = _reduced(A)
    if gU is None and gVh is None:
        return call("matmul", U * _column(gS), Vh)
    mT = lambda t: call("mT", t)  # noqa: E731
    mm = lambda a, b: call("matmul", a, b)  # noqa: E731
    E = _gap(S)
    if gU is not None:
        UhgU = mm(mT(U), gU)
        UhgU = UhgU - mT(UhgU)
    if gVh is not None:
        VhgV = mm(Vh, mT(gVh))
        VhgV = VhgV - mT(VhgV)
    if gU is not None and gVh is not None:
        ret = (UhgU * _column(S) + _row(S) * VhgV) / E
    elif gU is not None:
        ret = UhgU * (_column(S) / E)
    else:
        ret = _row(S) * (VhgV / E)
    if gS is not None:
        ret = ret + _row(gS) * backend.host.eye(S.shape[-1])
    if m > n and gU is not None:
        gA = mm(U, ret)
        gUSinv = gU / _column(S)
        gA = gA + gUSinv - mm(U, mm(mT(U), gUSinv))
        return mm(gA, Vh)
    if m < n and gVh is not None:
        gA = mm(ret, Vh)
        SinvgVh = gVh / _row(S)
        gA = gA + SinvgVh - mm(mm(SinvgVh, mT(Vh)), Vh)
        return mm(U, gA)
    return mm(U, mm(ret, Vh))


def _narrow(g, k: int, part: int):
    """The first k columns of g (U's gradient) or rows (Vh's): the rest is ignored."""
    if g.shape[-1 if part == 0 else -2] == k:
        return g
    index = (
        (Ellipsis, slice(None), slice(0, k)) if part == 0 else (Ellipsis, slice(0, k), slice(None))
    )
    return call("getitem", g, index=index)


def _svd_vjp(n, g):
    A = n.inputs[0]
    part = n.attrs["part"]
    k = min(n.shapes[0][-2:])
    if part != 1:
        _require_distinct(call("svdvals", A), n.shapes[0], part)
    grads = [None, None, None]
    grads[part] = g if part == 1 else _narrow(g, k, part)
    return (_svd_backward(A, *grads),)


def _svd_jvp(n, ts):
    """PyTorch's linalg_svd_jvp: the tangent of the part asked for."""
    dA = ts[0]
    if dA is None:
        return None
    A = n.inputs[0]
    part = n.attrs["part"]
    m, nn = n.shapes[0][-2:]
    mT = lambda t: call("mT", t)  # noqa: E731
    mm = lambda a, b: call("matmul", a, b)  # noqa: E731
    U, S, Vh = _reduced(A)
    V = mT(Vh)
    dP = mm(mT(U), mm(dA, V))
    k = S.shape[-1]
    eye = backend.host.eye(k)
    dS = call("sum", dP * eye, axis=-1, keepdims=False)
    if part == 1:
        return dS
    _require_distinct(S, n.shapes[0], part)
    dP = dP - _row(dS) * eye
    E = _gap(S)
    if part == 0:
        X = dP * _column(S)
        dU = mm(U, (X + mT(X)) / E)
        if m > nn:
            dAVSinv = mm(dA, V / _column(S))
            dU = dU + dAVSinv - mm(U, mm(mT(U), dAVSinv))
        if tuple(dU.shape) != tuple(n.out.shape):  # full_matrices: 0 for the extra columns
            index = (Ellipsis, slice(None), slice(0, k))
            dU = call("scatter", dU, index=index, shape=tuple(n.out.shape))
        return dU
    X = dP * _row(-S)
    dVh = mm((X + mT(X)) / E, Vh)
    if m < nn:
        UHdASinv = mm(mT(U) / _row(S), dA)
        dVh = dVh + UHdASinv - mm(mm(UHdASinv, V), Vh)
    if tuple(dVh.shape) != tuple(n.out.shape):
        index = (Ellipsis, slice(0, k), slice(None))
        dVh = call("scatter", dVh, index=index, shape=tuple(n.out.shape))
    return dVh


_matrix_op(
    "svdvals",
    "LinalgSvdBackward0",
    _svdvals_forward,
    lambda n, g: (_svd_backward(n.inputs[0], None, g, None),),
    lambda n, ts: None if ts[0] is None else _svd_jvp_values(n, ts[0]),
    code=code(svdvals_code),
)


def _svd_jvp_values(n, dA):
    """dS = diag(Uᵀ dA V) for the reduced U, V."""
    U, _, Vh = _reduced(n.inputs[0])
    return call("sum", U * call("matmul", dA, call("mT", Vh)), axis=-2, keepdims=False)


_matrix_op(
    "svd",
    "LinalgSvdBackward0",
    _svd_forward,
    _svd_vjp,
    _svd_jvp,
    params=(Param("full_matrices", "flag", True), Param("part", "part", None)),
    code=code(svd_code),
)


def _repeated(s, square: bool):
    """Per matrix: singular values that repeat, or (a matrix not square) one that is 0."""
    x = xp()
    if s.shape[-1] == 0:
        return x.zeros(s.shape[:-1], dtype=bool)
    if s.shape[-1] > 1:
        rep = (s[..., 1:] == s[..., :-1]).any(axis=-1)
    else:
        rep = x.zeros(s.shape[:-1], dtype=bool)
    return rep if square else rep | (s == 0).any(axis=-1)


def _require_distinct(S, shape, part: int) -> None:
    """U's and Vh's derivatives divide by s_j² - s_i² (and, for a matrix that is not square,
    by s): where those are 0 the singular vectors are not unique and there is no derivative.
    PyTorch returns inf or nan there; this says so instead (an evaluation error)."""
    m, n = shape[-2:]
    s = _array(S)
    if s is None:  # generated code: no values to check (it gives inf or nan there, as PyTorch)
        return
    if _any(_repeated(s, m == n)):
        which = "U" if part == 0 else "Vh"
        extra = "" if m == n else " or one is 0 (the matrix is not square)"
        raise EvaluationError(
            f"svd: the derivative of {which} is not defined where singular values repeat"
            f"{extra}: the singular vectors are not unique there (PyTorch gives inf or nan). "
            "A function of the singular values alone (svdvals, norm) has one"
        )
