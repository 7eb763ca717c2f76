"""How generated code (core/codegen) writes the linear algebra ops of :mod:`.linalg`.

Each function here is the ``code=`` spelling of one op's entry, ``(args, node, target) ->
text`` (:class:`~.table.Code`): the op's forward as NumPy, PyTorch or JAX computes it, with
the engine's conventions written out where the libraries differ from it: a matrix with a
nan or inf entry gives nan (the identity factorised in its place, as ``_guarded`` does),
det of a matrix with a nan entry is nan, cholesky reads the symmetric part, solve's 1-D b is
one vector.  Kept apart from :mod:`.linalg` (its size); the entries there name them.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "cholesky_code",
    "det_code",
    "eigh_code",
    "eigvalsh_code",
    "finite_matrices",
    "inv_code",
    "outer_code",
    "pinv_code",
    "solve_code",
    "svd_code",
    "svdvals_code",
    "tensordot_code",
    "trace_code",
]


def finite_matrices(a: str, target: str) -> str:
    """Per matrix of the stack ``a``: all its entries finite, shaped (..., 1, 1)."""
    if target == "torch":
        return f"torch.isfinite({a}).all(dim=-1, keepdim=True).all(dim=-2, keepdim=True)"
    return f"{{xp}}.isfinite({a}).all(axis=(-2, -1), keepdims=True)"


def _eye(a: str, n: int, target: str) -> str:
    if target == "torch":
        return f"torch.eye({n}, dtype={a}.dtype, device={a}.device)"
    return f"{{xp}}.eye({n}, dtype={a}.dtype)"


def _nan_where_not(ok: str, value: str, target: str) -> str:
    if target == "torch":
        return f"torch.where({ok}, {value}, math.nan)"
    return f"{{xp}}.where({ok}, {value}, {{xp}}.nan)"


def _guarded(a: str, n: int, run, target: str, ok: str | None = None) -> str:
    """``run(matrix)`` on ``a`` with the identity in place of each matrix holding a nan or
    inf entry, whose result is then nan (the engine's ``_guarded``); ``ok``: how the
    finite mask is read off the result's shape (default (..., 1, 1))."""
    fin = finite_matrices(a, target)
    where = "torch.where" if target == "torch" else "{xp}.where"
    safe = f"{where}({fin}, {a}, {_eye(a, n, target)})"
    mask = fin if ok is None else ok.format(fin=fin)
    return _nan_where_not(mask, run(safe), target)


def _linalg(target: str) -> str:
    return {"numpy": "np.linalg", "torch": "torch.linalg", "jax": "jnp.linalg"}[target]


def det_code(args, node, target):
    # nan where the matrix has a nan entry (LAPACK can step over a nan pivot)
    a = args[0]
    if target == "torch":
        bad = f"torch.isnan({a}).any(dim=-1).any(dim=-1)"
    else:
        bad = f"{{xp}}.isnan({a}).any(axis=(-2, -1))"
    det = f"{_linalg(target)}.det({a})"
    if target == "torch":
        # 0 where the LU has a zero pivot, as NumPy's det and the inverse agree (on AVX-512
        # MKL torch.linalg.det gives -7e-16 for a matrix whose inv raises "singular")
        det = f"torch.where(torch.linalg.lu_factor_ex({a}).info != 0, 0.0, {det})"
        return f"torch.where({bad}, math.nan, {det})"
    return f"{{xp}}.where({bad}, {{xp}}.nan, {det})"


def inv_code(args, node, target):
    n = node.value.shape[-1]
    return _guarded(args[0], n, lambda m: f"{_linalg(target)}.inv({m})", target)


def solve_code(args, node, target):
    """A 1-D b is one vector (NumPy 2's rule), solved as one column in every target."""
    a, b = args
    n = node.args[0].value.shape[-1]
    vector = node.args[1].value.ndim == 1
    rhs = f"{b}[..., None]" if vector else b
    ok = "{fin}[..., 0]" if vector else None
    tail = "[..., 0]" if vector else ""
    return _guarded(a, n, lambda m: f"{_linalg(target)}.solve({m}, {rhs}){tail}", target, ok)


def cholesky_code(args, node, target):
    """The factor of the symmetric part (A + Aᵀ)/2: A itself, bit for bit, when symmetric."""
    a = args[0]
    n = node.value.shape[-1]
    swapped = f"{a}.mT" if target == "torch" else f"{{xp}}.swapaxes({a}, -1, -2)"
    sym = f"(({a} + {swapped}) * 0.5)"
    return _guarded(sym, n, lambda m: f"{_linalg(target)}.cholesky({m})", target)


def trace_code(args, node, target):
    if target == "torch":
        return f"torch.diagonal({args[0]}, dim1=-2, dim2=-1).sum(-1)"
    return f"{{xp}}.trace({args[0]}, axis1=-2, axis2=-1)"


def outer_code(args, node, target):
    a, b = args
    if target == "torch":
        return f"torch.outer({a}.reshape(-1), {b}.reshape(-1))"
    return f"{{xp}}.outer({a}, {b})"


def tensordot_code(args, node, target):
    axes = int(node.attrs.get("axes", 2))
    keyword = "dims" if target == "torch" else "axes"
    return f"{{xp}}.tensordot({args[0]}, {args[1]}, {keyword}={axes})"


def svdvals_text(a: str, target: str) -> str:
    """The singular values of each matrix of ``a`` (..., k), nan for a matrix with a nan or
    inf entry (zeros factorised in its place, as the engine's ``_svd_run``)."""
    if target == "torch":
        run = lambda m: f"torch.linalg.svdvals({m})"  # noqa: E731
    else:
        run = lambda m: f"{_linalg(target)}.svd({m}, compute_uv=False)"  # noqa: E731
    fin = finite_matrices(a, target)
    return _nan_where_not(f"{fin}[..., 0]", run(_zeroed(a, fin, target)), target)


def _zeroed(a: str, fin: str, target: str) -> str:
    where = "torch.where" if target == "torch" else "{xp}.where"
    return f"{where}({fin}, {a}, 0.0)"


def svdvals_code(args, node, target):
    return svdvals_text(args[0], target)


def svd_code(args, node, target):
    """U (part 0) or Vh (part 2) of NumPy's svd; nan for a matrix with a nan or inf entry.
    None (no spelling) in PyTorch: its LAPACK picks other signs for the singular vectors
    than NumPy's (and, for full_matrices, another basis past min(m, n))."""
    if target == "torch":
        return None
    a = args[0]
    part = node.attrs["part"]
    full = bool(node.attrs.get("full_matrices", True))
    fin = finite_matrices(a, target)
    run = f"{_linalg(target)}.svd({_zeroed(a, fin, target)}, full_matrices={full})[{part}]"
    return _nan_where_not(fin, run, target)


# ---- eigvalsh, eigh, pinv (core/ops/eigen.py) ----


def _finite_run(a: str, target: str, run, vector: bool = False) -> str:
    """``run(matrix)`` on ``a`` with zeros in place of each matrix holding a nan or inf
    entry, whose result is then nan; ``vector``: the result has one axis less per matrix."""
    fin = finite_matrices(a, target)
    mask = f"{fin}[..., 0]" if vector else fin
    return _nan_where_not(mask, run(_zeroed(a, fin, target)), target)


def _symmetric_part(a: str, target: str) -> str:
    swapped = f"{a}.mT" if target == "torch" else f"{{xp}}.swapaxes({a}, -1, -2)"
    return f"(({a} + {swapped}) * 0.5)"


def eigvalsh_code(args, node, target):
    """The eigenvalues of the symmetric part (A + Aᵀ)/2, ascending (A itself when symmetric)."""
    sym = _symmetric_part(args[0], target)
    return _finite_run(sym, target, lambda m: f"{_linalg(target)}.eigvalsh({m})", vector=True)


def eigh_code(args, node, target):
    """The eigenvectors of the symmetric part (eigh's part 1).  None (no spelling) in
    PyTorch: its LAPACK picks other signs for the eigenvectors than NumPy's."""
    if target == "torch":
        return None
    sym = _symmetric_part(args[0], target)
    return _finite_run(sym, target, lambda m: f"{_linalg(target)}.eigh({m})[1]")


def pinv_code(args, node, target):
    """Singular values up to max(m, n) eps times the largest taken as 0 (the engine's)."""
    value = node.args[0].value
    m, n = value.shape[-2:]
    rtol = repr(max(m, n) * float(np.finfo(value.dtype).eps))
    keyword = "rcond" if target == "numpy" else "rtol"
    return _finite_run(args[0], target, lambda a: f"{_linalg(target)}.pinv({a}, {keyword}={rtol})")
