"""Linear algebra functions of the language (issue 13): declared as in :mod:`.arrays`.

det, inv, solve, cholesky, trace, diag, outer, triu, tril, tensordot and einsum (svdvals and
svd: :mod:`.svd`; how generated code writes each: :mod:`.linalg_code`).  Each forward
follows NumPy (``numpy.linalg`` on the last two axes, broadcasting over leading ones) and
each gradient PyTorch's; where the two disagree, or where the tool chooses, the op's comment
says which was followed:

* det: the gradient is the cofactor matrix everywhere, at singular matrices too (PyTorch's
  with ``create_graph``; its first-order path gives 0 at an exactly singular matrix);
* inv, solve: a singular matrix is an error (NumPy and PyTorch raise too);
* inv, solve, cholesky: a matrix with a nan or inf entry gives nan, the matrix's own result
  only (PyTorch's inv and solve give nan for a nan entry and carry an inf through their LU;
  NumPy says "Singular matrix" for a nan; both call such a matrix not positive definite);
  det of a matrix with a nan entry is nan (as PyTorch; NumPy's LU can step over the nan);
* cholesky: A is read as symmetric, the factor of (A + Aᵀ)/2 (NumPy and PyTorch read the
  lower triangle only), so that PyTorch's symmetric gradient is this forward's derivative;
  not positive definite is an error, as in both;
* trace: of the last two axes of a stack (NumPy's default is the first two);
* triu, tril: an argument of rank below 2 is an error (PyTorch's; NumPy broadcasts it).

A matrix that cannot be factorised (singular, not positive definite) is an
:class:`~.errors.EvaluationError` (kind ``evaluation``, exit 1) in the tool's words; shapes
that do not fit are a ValueError, which the engine reports as a shape error.  The vjp and
jvp rules are written with engine ops (matmul, mT, getitem, sum and these ops themselves),
so second derivatives work.

Imported by the package's ``__init__`` before the table is made; every fact of an op (its kink, which
arguments are differentiated) is on its entry.
"""

from __future__ import annotations

import math

from .. import backend, limits
from ..errors import EvaluationError
from .linalg_code import (
    cholesky_code,
    det_code,
    inv_code,
    outer_code,
    solve_code,
    tensordot_code,
    trace_code,
)
from .rules import _array, add_tangents, call, conj, reshape, sum_to, where
from .rules import _xp as xp
from .table import ATOM, POWER, Op, Param, code, copying, function, register

# ---------------------------------------------------------------------------
# Checks and helpers on arrays (forwards)
# ---------------------------------------------------------------------------


def _any(mask) -> bool:
    """Whether any element of the boolean array ``mask`` is true: one number read back from
    the device (the host syncs of this module, each a flag that decides what to do next)."""
    return backend.any_nonzero(mask)


def _all(mask) -> bool:
    """Whether every element of the boolean array ``mask`` is true (one number read back)."""
    return not backend.any_nonzero(~mask)


def _described(a) -> str:
    if a.ndim == 0:
        return "a number"
    if a.ndim == 1:
        return f"a vector of shape {tuple(a.shape)}"
    return f"an array of shape {tuple(a.shape)}"


def _square(a, name: str, what: str = "") -> int:
    """The order n of the square matrices ``a`` holds (last two axes); else a ValueError."""
    if a.ndim < 2:
        raise ValueError(
            f"{name}() needs a square matrix{what} or a stack of them, not {_described(a)}"
        )
    if a.shape[-1] != a.shape[-2]:
        m, n = a.shape[-2:]
        raise ValueError(f"{name}() needs a square matrix{what}, not a {m}x{n} one")
    return a.shape[-1]


def _rank_two(a, name: str) -> None:
    if a.ndim < 2:
        raise ValueError(f"{name}() needs a matrix or a stack of them, not {_described(a)}")


def _where_stack(index: tuple, whole: str = "the matrix", stack: str = "the stack") -> str:
    """``whole`` (index ``()``: not a stack), or ``"matrix [1, 0] of the stack"``."""
    if not index:
        return whole
    return f"matrix [{', '.join(str(i) for i in index)}] of {stack}"


def _fails(run, m) -> bool:
    """Whether ``run`` cannot factorise the matrix ``m`` (LinAlgError, or a non-finite
    result of finite numbers)."""
    try:
        r = run(m)
    except backend.host.linalg.LinAlgError:
        return True
    return not _all(xp().isfinite(r))


def _first_failure(a, run):
    """The index (a tuple over the stack's axes) of the first matrix of ``a`` that ``run``
    cannot factorise (:func:`_fails`), or None."""
    for index in backend.host.ndindex(a.shape[:-2]):
        if _fails(run, a[index]):
            return index
    return None


def _raising(run):
    """``run`` as it is on the CPU (NumPy raises LinAlgError); on the GPU inside
    ``cupyx.errstate(linalg="raise")``, without which CuPy does not check the factorisation
    (a singular matrix or one that is not positive definite gives garbage, not an error)."""
    if backend.device == "cpu":
        return run
    import cupyx  # noqa: PLC0415 - only on the GPU path

    errstate = getattr(cupyx, "errstate", None)
    if errstate is None:  # an older CuPy: the finiteness check of _guarded remains
        return run

    def checked(a):
        with errstate(linalg="raise"):
            return run(a)

    return checked


def _guarded(a, run, failure):
    """``run(a)`` for the stack of square matrices ``a``: matrices with a nan or inf entry
    give nan (not NumPy's "Singular matrix"); one that cannot be factorised is an
    EvaluationError with the message ``failure(index)`` gives."""
    x = xp()
    run = _raising(run)
    finite = x.isfinite(a).all(axis=(-2, -1))
    some_bad = not _all(finite)
    if some_bad:  # factorise the identity in their place, then make them nan
        a = x.where(finite[..., None, None], a, x.eye(a.shape[-1], dtype=a.dtype))
    try:
        out = run(a)
    except backend.host.linalg.LinAlgError:
        raise EvaluationError(failure(_first_failure(a, run) or ())) from None
    if backend.device != "cpu" and not _all(x.isfinite(out)):
        # a CuPy that does not raise: a matrix that cannot be factorised gives inf or nan
        index = _first_failure(a, run)
        if index is not None:
            raise EvaluationError(failure(index))
    if some_bad:
        out = x.where(finite[..., None, None], out, x.nan)
    return out


def _swap(a):
    return xp().swapaxes(a, -1, -2)


def _unsqueeze(t):
    """``t`` with two axes of length 1 after its own: (...,) -> (..., 1, 1)."""
    return reshape(t, tuple(t.shape) + (1, 1))


def _matrix_op(name, node, forward, vjp, jvp, *, latex=None, printing=None, **more) -> None:
    """Register the matrix function ``name``: kind "linalg", batched over all but the
    trailing two dimensions (a stack of matrices), printed ``name(...)`` and in LaTeX
    ``latex`` (default ``\\operatorname{name}``) unless ``printing`` says otherwise."""
    if printing is None:
        printing = function(name, latex=latex or f"\\operatorname{{{name}}}")
    stack = ("trailing", 2)  # batched over all but the last two dimensions
    register(
        Op(name, node, forward, vjp, jvp, kind="linalg", printing=printing, batching=stack, **more)
    )


# ---- det(A): the determinant of a square matrix (a stack: one per matrix) -----------------
#
# d det / dA is the cofactor matrix C (adj(A)ᵀ), continuous everywhere.  Where det(A) != 0
# it is det(A) inv(A)ᵀ; at a singular matrix (det exactly 0, or not finite) it is made from
# the (n-1)x(n-1) minors: C_ij = (-1)^(i+j) det(A without row i and column j), so the
# gradient is finite there as in PyTorch, and is the derivative (PyTorch's first-order
# backward gives 0 at an exactly singular matrix, its create_graph backward the cofactors:
# this is the latter, always).  The minors cost n² determinants of order n-1 and n²(n-1)²
# numbers per matrix, checked against the memory limit.


def _det_forward(a):
    _square(a, "det")
    x = xp()
    out = x.linalg.det(a)
    # LAPACK can step over a nan pivot (NumPy's det([[nan, 1], [1, 1]]) is 0): a matrix with
    # a nan entry has det nan, as in PyTorch
    has_nan = x.isnan(a).any(axis=(-2, -1))
    return x.where(has_nan, x.nan, out) if _any(has_nan) else out


def _minors_cofactors(A):
    """The cofactor matrix of (each matrix of) A from its minors, with engine ops."""
    host = backend.host
    shape = tuple(A.shape)
    n = shape[-1]
    limits.check(
        math.prod(shape[:-2]) * n * n * max(n - 1, 0) ** 2,
        A.dtype.itemsize,
        "det's gradient at a singular matrix (its minors)",
    )
    keep = host.array([[j for j in range(n) if j != i] for i in range(n)], dtype=host.intp).reshape(
        n, n - 1
    )
    rows = xp().asarray(keep[:, None, :, None])
    cols = xp().asarray(keep[None, :, None, :])
    minors = call("getitem", A, index=(Ellipsis, rows, cols))  # (..., n, n, n-1, n-1)
    signs = host.array([[(-1.0) ** (i + j) for j in range(n)] for i in range(n)])
    return call("det", minors) * signs


def _cofactors(A, det):
    """d det(A) / dA (the cofactor matrix), in A's shape; ``det`` is det(A)."""
    n = A.shape[-1]
    if n == 0:
        return _unsqueeze(det) * call("mT", call("inv", A))
    d = _array(det)
    if d is None:  # a value with no data (generated code): one formula for every point
        return _cofactors_anywhere(A, det, n)
    singular = ~xp().isfinite(d) | (d == 0)
    if not _any(singular):
        return _unsqueeze(det) * call("mT", call("inv", A))
    minors = _minors_cofactors(A)
    if _all(singular):
        return minors
    # some matrices of the stack are singular: the others take det inv(A)ᵀ, computed with
    # the identity (and det 1) in the singular ones' place so that nothing there is inf
    mask = singular[..., None, None]
    safe = where(mask, backend.host.eye(n), A)
    regular = _unsqueeze(where(singular, 1.0, det)) * call("mT", call("inv", safe))
    return where(mask, minors, regular)


def _cofactors_anywhere(A, det, n):
    """:func:`_cofactors` as one formula, the branch taken per matrix: singular where
    det/det is not 1 (det 0, inf or nan)."""
    singular = call("ne", det / det, 1.0)
    mask = _unsqueeze(singular)
    safe = where(mask, backend.host.eye(n), A)
    regular = _unsqueeze(where(singular, 1.0, det)) * call("mT", call("inv", safe))
    # a 1x1 matrix's cofactor is det of the 0x0 minor: 1
    minors = _minors_cofactors(A) if n > 1 else call("zeros_like", A) + 1.0
    return where(mask, minors, regular)


def _det_vjp(n, g):
    return (_unsqueeze(g) * _cofactors(n.inputs[0], n.out),)


def _det_jvp(n, ts):
    if ts[0] is None:
        return None
    return call("sum", _cofactors(n.inputs[0], n.out) * ts[0], axis=(-2, -1), keepdims=False)


_matrix_op(
    "det",
    "LinalgDetBackward0",
    _det_forward,
    _det_vjp,
    _det_jvp,
    latex="\\det",
    code=code(det_code),
)


# ---- inv(A): the inverse of a square matrix ------------------------------------------------
#
# A singular matrix is an error (NumPy's LinAlgError, PyTorch's "input matrix is singular");
# a matrix with a nan or inf entry gives nan (see the module's docstring).
# vjp: -inv(A)ᵀ g inv(A)ᵀ; jvp: -inv(A) dA inv(A).


def _failure(name, what):
    def message(index):
        return f"{name}: {_where_stack(index)} {what}"

    return message


def _inv_forward(a):
    _square(a, "inv")
    return _guarded(a, xp().linalg.inv, _failure("inv", "is singular: it has no inverse"))


def _inv_vjp(n, g):
    t = conj(call("mT", n.out))  # the adjoint (PyTorch's convention on complex matrices)
    return (-call("matmul", call("matmul", t, g), t),)


def _inv_jvp(n, ts):
    if ts[0] is None:
        return None
    return -call("matmul", call("matmul", n.out, ts[0]), n.out)


_matrix_op(
    "inv",
    "LinalgInvExBackward0",
    _inv_forward,
    _inv_vjp,
    _inv_jvp,
    printing=function("inv", latex=((0, ATOM), "^{-1}"), latex_level=POWER),
    code=code(inv_code),
    on_complex="rules",
)


# ---- solve(A, b): x with A x = b -------------------------------------------------------------
#
# NumPy 2's rule: a 1-D b is one vector (the result a vector, or a stack of them where A is a
# stack); any other b is a matrix, or a stack of matrices whose leading axes broadcast with
# A's.  Singular A is an error (as inv).  vjp: gb = solve(Aᵀ, g), gA = -gb xᵀ; jvp:
# solve(A, tb - tA x).  The rules work on b and x as matrices (a vector as one column).


def _solve_shapes(a_shape, b_shape):
    """(batch shape, b's matrix shape, vector) for solve(A, b), or a ValueError."""
    if len(b_shape) == 0:
        raise ValueError("solve(A, b) needs b to be a vector or a matrix, not a number")
    vector = len(b_shape) == 1
    bm = tuple(b_shape) + (1,) if vector else tuple(b_shape)
    n = a_shape[-1]
    if bm[-2] != n:
        what = "entries" if vector else "rows"
        raise ValueError(f"solve(A, b): A is {n}x{n} but b has {bm[-2]} {what}, not {n}")
    try:
        batch = backend.host.broadcast_shapes(tuple(a_shape[:-2]), bm[:-2])
    except ValueError:
        raise ValueError(
            f"solve(A, b): the stacks of A {tuple(a_shape[:-2])} and of b {bm[:-2]} "
            "do not broadcast together"
        ) from None
    return batch, bm, vector


def _solve_forward(a, b):
    _square(a, "solve", " A")
    batch, bm, vector = _solve_shapes(a.shape, b.shape)
    x = xp()
    a = x.broadcast_to(a, batch + a.shape[-2:])
    b = x.broadcast_to(b.reshape(bm), batch + bm[-2:])
    # b's numbers do not make A singular: a nan in b gives nan, as in NumPy
    out = _guarded(
        a,
        lambda m: x.linalg.solve(m, b),
        lambda index: (
            f"solve: {_where_stack(index, 'A', 'A')} is singular: the system has no unique solution"
        ),
    )
    return out[..., 0] if vector else out


def _solve_size(shapes, attrs) -> int:
    try:
        batch, bm, _ = _solve_shapes(*shapes)
    except (ValueError, IndexError):
        return 0
    return math.prod(batch) * bm[-2] * bm[-1]


def _as_matrix(t, vector: bool):
    return reshape(t, tuple(t.shape) + (1,)) if vector else t


def _solve_vjp(n, g):
    A, _ = n.inputs
    vector = len(n.shapes[1]) == 1
    # the adjoints A^H and x^H (conj: a no-op on real matrices); matrix semantics: ndim >= 2
    gb = call("solve", conj(call("mT", A)), _as_matrix(g, vector))
    ga = None
    if n.needs[0]:
        x = _as_matrix(n.out, vector)
        ga = sum_to(-call("matmul", gb, conj(call("mT", x))), n.shapes[0])
    if not n.needs[1]:
        return ga, None
    if vector:
        gb = reshape(gb, tuple(gb.shape[:-1]))
    return ga, sum_to(gb, n.shapes[1])


def _solve_jvp(n, ts):
    ta, tb = ts
    if ta is None and tb is None:
        return None
    A, _ = n.inputs
    vector = len(n.shapes[1]) == 1
    rhs = None if tb is None else _as_matrix(tb, vector)
    if ta is not None:
        rhs = add_tangents(rhs, -call("matmul", ta, _as_matrix(n.out, vector)))
    dx = call("solve", A, rhs)
    return reshape(dx, tuple(n.out.shape)) if vector else dx


_matrix_op(
    "solve",
    "LinalgSolveExBackward0",
    _solve_forward,
    _solve_vjp,
    _solve_jvp,
    arity=2,
    size=_solve_size,
    code=code(solve_code),
    on_complex="rules",
    linear=(1,),  # in b: A^-1 b
)


# ---- cholesky(A): the lower-triangular L with A = L Lᵀ ---------------------------------------
#
# A is read as symmetric: the factor is that of (A + Aᵀ)/2, which is A itself (bit for bit) for
# the symmetric matrices a Cholesky factor is defined for.  NumPy and PyTorch read the lower
# triangle only, and PyTorch's gradient is symmetric (linalg_cholesky_backward symmetrizes
# it), which is not the derivative of a lower-triangle forward: with the symmetric part it
# is, so finite differences, `check` and second derivatives agree with it.  A matrix that is
# not positive definite is an error, as in both.  A matrix that is not symmetric is taken
# silently, as NumPy and PyTorch take it (they ignore its upper triangle).
#
# vjp (PyTorch's cholesky_backward, Murray 2016): P = Φ(Lᵀ gL), Φ taking the lower triangle
# with its diagonal halved, made symmetric; gA = L⁻ᵀ P L⁻¹, symmetrized.
# jvp: dL = L Φ(L⁻¹ sym(dA) L⁻ᵀ).


def _leading_order(a) -> int | None:
    """The order of the first leading minor of the matrix ``a`` that is not positive
    definite (the error's detail, as PyTorch gives it)."""
    run = _raising(xp().linalg.cholesky)
    for k in range(1, a.shape[-1] + 1):
        if _fails(run, a[:k, :k]):
            return k
    return None


def _cholesky_forward(a):
    _square(a, "cholesky")
    x = xp()
    at = _swap(a)
    if not _all(a == at):
        a = (a + at) * 0.5

    def failure(index):
        order = _leading_order(a[index])
        minor = f" (its leading minor of order {order} is not)" if order else ""
        return (
            f"cholesky: {_where_stack(index)} is not positive definite{minor}, so it has no "
            "Cholesky factor (that needs a symmetric positive-definite matrix)"
        )

    return _guarded(a, x.linalg.cholesky, failure)


def _phi(y):
    """The lower triangle of y with its diagonal halved."""
    return (call("tril", y, k=0) + call("tril", y, k=-1)) * 0.5


def _cholesky_vjp(n, g):
    L = n.out
    Lt = call("mT", L)
    p = call("tril", call("matmul", Lt, g), k=0)
    p = (p + call("mT", call("tril", p, k=-1))) * 0.5
    y = call("solve", Lt, p)  # L⁻ᵀ P
    ga = call("mT", call("solve", Lt, call("mT", y)))  # L⁻ᵀ P L⁻¹
    return ((ga + call("mT", ga)) * 0.5,)


def _cholesky_jvp(n, ts):
    if ts[0] is None:
        return None
    L = n.out
    ds = (ts[0] + call("mT", ts[0])) * 0.5
    y = call("solve", L, ds)  # L⁻¹ dS
    y = call("mT", call("solve", L, call("mT", y)))  # L⁻¹ dS L⁻ᵀ
    return call("matmul", L, _phi(y))


_matrix_op(
    "cholesky",
    "LinalgCholeskyExBackward0",
    _cholesky_forward,
    _cholesky_vjp,
    _cholesky_jvp,
    code=code(cholesky_code),
)


# ---- trace(A): the sum of the main diagonal --------------------------------------------------
#
# Of a matrix (not necessarily square, as NumPy and PyTorch), or of each matrix of a stack on
# its last two axes (NumPy's trace takes the first two by default; torch.trace takes 2-D only).


def _trace_forward(a):
    _rank_two(a, "trace")
    return xp().trace(a, axis1=-2, axis2=-1)


def _trace_vjp(n, g):
    m, k = n.shapes[0][-2:]
    return (_unsqueeze(g) * backend.host.eye(m, k),)


_matrix_op(
    "trace",
    "TraceBackward0",
    _trace_forward,
    _trace_vjp,
    lambda n, ts: None if ts[0] is None else call("trace", ts[0]),
    latex="\\operatorname{tr}",
    saves=False,
    code=code(trace_code),
    on_complex="rules",
    linear=True,
)


# ---- diag(v, k=0): NumPy's diag -------------------------------------------------------------
#
# A vector gives the square matrix with v on diagonal k (above the main one for k > 0); a
# matrix gives its k-th diagonal as a vector (empty past its corner).  Other ranks: an error.
# Evaluated row by row in batches (its rank decides what it does).


def _diag_index(shape, k):
    """The (rows, cols) of diagonal k of a matrix of ``shape``, as integer arrays."""
    host = backend.host
    m, n = shape
    length = max(0, min(m + min(k, 0), n - max(k, 0)))
    i = host.arange(length, dtype=host.intp)
    return xp().asarray(i + max(-k, 0)), xp().asarray(i + max(k, 0))


def _diag_size(shapes, attrs) -> int:
    (shape,) = shapes
    if len(shape) == 1:
        return (shape[0] + abs(attrs.get("k", 0))) ** 2
    return math.prod(shape)


def _diag_forward(a, k=0):
    if a.ndim == 1:
        # a unary op: the engine checks sizes of ops of several arguments only
        limits.check(_diag_size([a.shape], {"k": k}), a.dtype.itemsize, "diag's result")
        return xp().diag(a, k)
    if a.ndim == 2:
        return xp().diagonal(a, k).copy()
    raise ValueError(f"diag() takes a vector or a matrix, not {_described(a)}")


def _diag_vjp(n, g):
    k = n.attrs["k"]
    shape = n.shapes[0]
    if len(shape) == 1:
        return (call("diag", g, k=k),)
    return (call("scatter", g, index=_diag_index(shape, k), shape=tuple(shape)),)


register(
    copying(
        "diag",
        lambda n: "DiagEmbedBackward0" if len(n.shapes[0]) == 1 else "DiagonalBackward0",
        _diag_forward,
        _diag_vjp,
        lambda n, ts: None if ts[0] is None else call("diag", ts[0], k=n.attrs["k"]),
        printing=function("diag", latex="\\operatorname{diag}"),
        params=(Param("k", "int", 0),),
        size=_diag_size,
        batching=("rows",),
        code=code("{xp}.diag({0}, {k})"),
    )
)


# ---- outer(a, b): NumPy's outer product (both flattened): result[i, j] = a[i] b[j] ------------
#
# PyTorch records MulBackward0 for torch.outer (a broadcast product).


def _outer_size(shapes, attrs) -> int:
    return math.prod(shapes[0]) * math.prod(shapes[1])


def _flat(t):
    return reshape(t, (math.prod(t.shape),))


def _outer_vjp(n, g):
    a, b = n.inputs
    ga = gb = None
    if n.needs[0]:
        ga = reshape(call("matmul", g, _flat(b)), n.shapes[0])
    if n.needs[1]:
        gb = reshape(call("matmul", _flat(a), g), n.shapes[1])
    return ga, gb


def _outer_jvp(n, ts):
    a, b = n.inputs
    return add_tangents(
        None if ts[0] is None else call("outer", ts[0], b),
        None if ts[1] is None else call("outer", a, ts[1]),
    )


register(
    Op(
        "outer",
        "MulBackward0",
        lambda a, b: xp().outer(a, b),
        _outer_vjp,
        _outer_jvp,
        arity=2,
        kind="product",
        printing=function("outer", latex="\\operatorname{outer}"),
        size=_outer_size,
        batching=("rows",),
        code=code(outer_code),
        linear="each",
    )
)


# ---- triu(A, k=0), tril(A, k=0): the upper / lower triangle, the rest zero ------------------
#
# Of a matrix or of each matrix of a stack (last two axes); diagonal k and above (triu) or
# below (tril).  A vector or a number is an error, as in PyTorch (NumPy makes a matrix of a
# vector by broadcasting it, rarely what was meant).


def _triangle(name):
    def forward(a, k=0):
        _rank_two(a, name)
        return getattr(xp(), name)(a, k)

    def linear(n, t):
        return call(name, t, k=n.attrs["k"])

    register(
        copying(
            name,
            name.title() + "Backward0",
            forward,
            lambda n, g: (linear(n, g),),
            lambda n, ts: None if ts[0] is None else linear(n, ts[0]),
            printing=function(name, latex=f"\\operatorname{{{name}}}"),
            params=(Param("k", "int", 0),),
            batching=("trailing", 2),
            code=code(f"{{xp}}.{name}({{0}}, {{k}})"),
        )
    )


_triangle("triu")
_triangle("tril")


# ---- tensordot(a, b, axes=2): sum over the last `axes` axes of a and the first of b ----------
#
# NumPy's tensordot with an integer axes (a pair of axis lists is not supported); PyTorch
# records ViewBackward0 (a reshape of a matrix product), and the rules are that: a and b as
# matrices (free x summed, summed x free), g as (free a x free b).


def _tensordot_split(sa, sb, axes):
    if axes < 0:
        raise ValueError(f"tensordot(a, b, axes) needs axes >= 0, not {axes}")
    if axes > len(sa) or axes > len(sb):
        raise ValueError(
            f"tensordot(a, b, {axes}) sums over {axes} axes, but a has {len(sa)} and b {len(sb)}"
        )
    summed_a = tuple(sa[len(sa) - axes :])
    summed_b = tuple(sb[:axes])
    if summed_a != summed_b:
        raise ValueError(
            f"tensordot(a, b, {axes}): the last {axes} axes of a {summed_a} are not the "
            f"first {axes} of b {summed_b}"
        )
    return tuple(sa[: len(sa) - axes]), summed_a, tuple(sb[axes:])


def _tensordot_size(shapes, attrs) -> int:
    try:
        sa, sb = shapes
        free_a, _, free_b = _tensordot_split(sa, sb, attrs.get("axes", 2))
    except ValueError:
        return 0
    return math.prod(free_a) * math.prod(free_b)


def _tensordot_forward(a, b, axes=2):
    _tensordot_split(a.shape, b.shape, axes)
    return xp().tensordot(a, b, axes)


def _tensordot_vjp(n, g):
    a, b = n.inputs
    free_a, summed, free_b = _tensordot_split(n.shapes[0], n.shapes[1], n.attrs["axes"])
    fa, s, fb = math.prod(free_a), math.prod(summed), math.prod(free_b)
    g2 = reshape(g, (fa, fb))
    ga = gb = None
    if n.needs[0]:
        ga = reshape(call("matmul", g2, call("mT", reshape(b, (s, fb)))), n.shapes[0])
    if n.needs[1]:
        gb = reshape(call("matmul", call("mT", reshape(a, (fa, s))), g2), n.shapes[1])
    return ga, gb


def _tensordot_jvp(n, ts):
    a, b = n.inputs
    axes = n.attrs["axes"]
    return add_tangents(
        None if ts[0] is None else call("tensordot", ts[0], b, axes=axes),
        None if ts[1] is None else call("tensordot", a, ts[1], axes=axes),
    )


register(
    Op(
        "tensordot",
        "ViewBackward0",
        _tensordot_forward,
        _tensordot_vjp,
        _tensordot_jvp,
        arity=2,
        kind="product",
        printing=function("tensordot", latex="\\operatorname{tensordot}"),
        params=(Param("axes", "int", 2),),
        size=_tensordot_size,
        batching=("rows",),
        code=code(tensordot_code),
        linear="each",
    )
)


# ---- einsum(subscripts, *operands): NumPy's Einstein summation --------------------------------
#
# NumPy's explicit ('ij,jk->ik') and implicit ('ij,jk': the labels seen once, sorted) modes,
# with '...' for the leading axes of an operand (broadcast against the others', as NumPy).
# The subscripts are checked against the number of operands when the call is parsed
# (:func:`einsum_subscripts`) and kept explicit; against the operands' shapes when it is
# evaluated (:func:`_einsum_plan`: each '...' becomes letters no label uses, and an axis of
# length 1 broadcasts against the same label's length elsewhere, as NumPy does).  The result's
# size is checked against the memory limit first (Op.size), and NumPy's einsum runs without
# an optimized path, so nothing larger than the result is ever allocated.
#
# The gradient of each operand is itself an einsum (PyTorch's einsum backward is the chain
# rule through its own contraction, the same numbers): g with the other operands, contracted
# to the operand's subscripts.  A label repeated in the operand (a diagonal, 'ii') is renamed
# and tied by an identity matrix; a label only that operand has (summed out, 'ij->i') is
# spread by a vector of ones; an axis that broadcast (length 1) is summed back.

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _einsum_terms(text: str, what: str) -> list:
    """The labels of one side of the subscripts, each term a list of letters and '...'."""
    terms = []
    for term in text.split(","):
        items: list = []
        rest = term
        while rest:
            if rest.startswith("..."):
                if "..." in items:
                    raise ValueError(f"{what} {term!r} has '...' twice")
                items.append("...")
                rest = rest[3:]
            elif rest[0] in _LETTERS:
                items.append(rest[0])
                rest = rest[1:]
            elif rest[0] == ".":
                raise ValueError(f"{what} {term!r} has a '.' that is not part of '...'")
            else:
                raise ValueError(
                    f"{what} {term!r} has {rest[0]!r}: subscripts are letters (a-z, A-Z), "
                    "',' between the arrays, '->' before the output and '...'"
                )
        terms.append(items)
    return terms


def einsum_subscripts(text: str, count: int) -> str:
    """einsum's subscripts for ``count`` operands, checked (a ValueError says what is wrong)
    and made explicit: spaces dropped, and an implicit output (no '->') written out, as
    NumPy forms it ('...' first, then the labels seen once, sorted)."""
    spec = "".join(text.split())
    if spec.count("->") > 1:
        raise ValueError(f"the subscripts {text!r} have '->' more than once")
    if "->" in spec:
        left, out = spec.split("->")
    else:
        left, out = spec, None
    if "-" in left or ">" in left or (out is not None and ("-" in out or ">" in out)):
        raise ValueError(f"the subscripts {text!r} have a '-' or '>' that is not '->'")
    terms = _einsum_terms(left, "the subscripts of an array,")
    if len(terms) != count:
        raise ValueError(
            f"the subscripts {text!r} name {len(terms)} array(s) "
            f"({', '.join(repr(''.join(t)) for t in terms)}) but {count} are given"
        )
    seen: dict[str, int] = {}
    for term in terms:
        for c in term:
            if c != "...":
                seen[c] = seen.get(c, 0) + 1
    ellipsis = any("..." in t for t in terms)
    if out is None:
        once = sorted((c for c, k in seen.items() if k == 1), key=_LETTERS.index)
        out_items = (["..."] if ellipsis else []) + once
    else:
        (out_items,) = _einsum_terms(out, "the output's subscripts")
        for i, c in enumerate(out_items):
            if c in out_items[:i]:
                raise ValueError(f"the output's subscripts {out!r} name {c!r} twice")
            if c != "..." and c not in seen:
                raise ValueError(f"the output's subscripts {out!r} name {c!r}, which no array has")
    return ",".join("".join(t) for t in terms) + "->" + "".join(out_items)


def _einsum_plan(subscripts: str, shapes):
    """The explicit subscripts for these shapes ('...' replaced by free letters), as
    (terms, output, size of each label); a ValueError where the shapes do not fit."""
    left, out = subscripts.split("->")
    terms = left.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"the subscripts name {len(terms)} arrays, {len(shapes)} given")
    free = [c for c in _LETTERS if c not in subscripts]
    widths = []
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        letters = term.replace("...", "")
        if "..." in term:
            width = len(shape) - len(letters)
        else:
            width = 0 if len(shape) == len(letters) else -1
        if width < 0:
            raise ValueError(
                f"array {i + 1} has {len(shape)} dimension(s) but its subscripts "
                f"{term!r} name {len(letters)}" + ("" if "..." in term else " (and no '...')")
            )
        widths.append(width)
    span = max(widths, default=0)
    if span > len(free):
        raise ValueError("more dimensions than there are letters to label them (52)")
    dots = "".join(free[:span])
    if "..." not in out and any(widths):
        raise ValueError(
            "'...' stands for some axes of an array, so the output's subscripts need "
            "'...' too (write '->...' and its labels)"
        )
    terms = [t.replace("...", dots[span - w :]) for t, w in zip(terms, widths)]
    out = out.replace("...", dots)
    sizes: dict[str, int] = {}
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        own: dict[str, int] = {}
        for c, d in zip(term, shape):
            if c in own and own[c] != d:
                raise ValueError(
                    f"array {i + 1} repeats the label {c!r} on axes of lengths "
                    f"{own[c]} and {d} (a diagonal needs equal lengths)"
                )
            own[c] = d
            have = sizes.get(c)
            if have is None or have == 1:
                sizes[c] = d
            elif d not in (1, have):
                raise ValueError(
                    f"the label {c!r} is {have} long in one array and {d} in array "
                    f"{i + 1} (they must be equal, or 1)"
                )
    return terms, out, sizes


def einsum_code(args, node, target):
    """The subscripts with '...' written out for these shapes (the engine's plan)."""
    terms, out, _ = _einsum_plan(node.attrs["subscripts"], [a.value.shape for a in node.args])
    spec = ",".join(terms) + "->" + out
    if target == "numpy":
        return f"np.einsum({spec!r}, {', '.join(args)}, optimize=False)"
    return f"{{xp}}.einsum({spec!r}, {', '.join(args)})"


def batch_label(subscripts: str):
    """A letter the (explicit) subscripts do not use, for a batch axis (None: none is left)."""
    return next((c for c in _LETTERS if c not in subscripts), None)


def _einsum_size(shapes, attrs) -> int:
    try:
        _, out, sizes = _einsum_plan(attrs["subscripts"], shapes)
    except ValueError:
        return 0  # the forward says what is wrong
    return math.prod(sizes[c] for c in out)


def _einsum_forward(*arrays, subscripts):
    terms, out, _ = _einsum_plan(subscripts, [a.shape for a in arrays])
    return xp().einsum(",".join(terms) + "->" + out, *arrays, optimize=False)


def _einsum_vjp(n, g):
    terms, out, sizes = _einsum_plan(n.attrs["subscripts"], n.shapes)
    used = set("".join(terms) + out)
    fresh = iter(c for c in _LETTERS if c not in used)
    host = backend.host
    grads = []
    for k, (term, shape) in enumerate(zip(terms, n.shapes)):
        if not n.needs[k]:
            grads.append(None)
            continue
        others = [j for j in range(len(terms)) if j != k]
        # the length each label has where the gradient's einsum finds it without operand k
        found: dict[str, int] = {c: sizes[c] for c in out}
        for j in others:
            for c, d in zip(terms[j], n.shapes[j]):
                found[c] = max(found.get(c, 0), d)
        target, extra_terms, extra_arrays = [], [], []
        for c, d in zip(term, shape):
            if c in target:  # a diagonal: a new label, tied to c by the identity
                c2 = next(fresh)
                extra_terms.append(c + c2)
                extra_arrays.append(host.eye(d))
                target.append(c2)
                continue
            if found.get(c, 0) < d:  # nothing else spans this axis: ones spread the gradient
                extra_terms.append(c)
                extra_arrays.append(host.ones(d))
            target.append(c)
        spec = ",".join([out] + [terms[j] for j in others] + extra_terms) + "->" + "".join(target)
        r = call("einsum", g, *[n.inputs[j] for j in others], *extra_arrays, subscripts=spec)
        grads.append(sum_to(r, tuple(shape)))
    return tuple(grads)


def _einsum_jvp(n, ts):
    total = None
    for k, t in enumerate(ts):
        if t is None:
            continue
        args = list(n.inputs)
        args[k] = t
        total = add_tangents(total, call("einsum", *args, subscripts=n.attrs["subscripts"]))
    return total


register(
    Op(
        "einsum",
        "EinsumBackward0",
        _einsum_forward,
        _einsum_vjp,
        _einsum_jvp,
        arity=None,
        kind="product",
        printing=function("einsum", latex="\\operatorname{einsum}"),
        params=(Param("subscripts", "subscripts"),),
        size=_einsum_size,
        code=code(einsum_code),
        linear="each",
    )
)
