"""Reductions: sum, mean, prod, amax/amin, norm, logsumexp, var, std.

Each takes ``axis`` and ``keepdims``; :func:`~.table.op_table` adds the check that a number
has no axis to every op of kind ``"reduction"``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import backend
from ..tensor import OPS
from .linalg_code import svdvals_text
from .rules import (
    _any_zero,
    _keepdims_shape,
    _reduced_shape,
    _tie_kink,
    _xp,
    broadcast_to,
    call,
    chain,
    eq,
    expand_back,
    ne,
    reshape,
    sign,
    where,
    zeros_like,
)
from .shape import axis_of
from .table import Code, Op, Param, ParsedParam, code, function, register

# ---------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------


def _reduce_name(full, partial):
    return lambda n: full if n.attrs.get("axis") is None else partial


def _line_axes(axes, ord) -> tuple:
    """A matrix norm of ord 1, -1, inf or -inf over ``axes`` (rows, columns): (the axis its
    lines are summed over, the axis the extreme sum is picked along).  1, -1: the column
    sums (over rows) of |x|; inf, -inf: the row sums (over columns)."""
    r, c = axes
    return (r, c) if ord in (1, -1) else (c, r)


def _reduced_count(shape, axis) -> int:
    n = 1
    for s in shape:
        n *= s
    m = 1
    for s in _reduced_shape(shape, axis, True):
        m *= s
    return n // m if m else 0


# ---- How generated code writes a reduction (core/codegen) ---------------------------------
#
# The axes are counted from the end (axis 0 of a vector is -1), so that a reduction of a
# number, which reduces nothing, leaves the leading batch axes of batched generated code
# alone; a reduction over no axes is written as the value itself (PyTorch reads dim=() as
# all of them).


def _code_axes(node) -> tuple:
    """The axes the reduction ``node`` reduces, negative, sorted."""
    ndim = node.args[0].value.ndim
    axis = node.attrs.get("axis")
    if ndim == 0:
        return ()
    if axis is None:
        return tuple(range(-ndim, 0))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(sorted({a % ndim - ndim for a in axes}))


def _reduce_text(fn: str, x: str, axes: tuple, keepdims, target: str, **more) -> str:
    """``fn`` (sum, amax, amin, var) of ``x`` over ``axes`` as ``target`` writes it."""
    if not axes:
        return f"(+{x})"
    extra = "".join(f", {k}={v}" for k, v in more.items())
    if target == "torch":
        return f"torch.{fn}({x}, dim={axes}, keepdim={bool(keepdims)}{extra})"
    return f"{{xp}}.{fn}({x}, axis={axes}, keepdims={bool(keepdims)}{extra})"


def _reduction_code(fn: str) -> Code:
    def spelling(args, node, target):
        return _reduce_text(fn, args[0], _code_axes(node), node.attrs.get("keepdims"), target)

    return code(spelling)


def _mean_code(args, node, target):
    axes = _code_axes(node)
    total = _reduce_text("sum", args[0], axes, node.attrs.get("keepdims"), target)
    if not axes:
        return total
    return f"({total} / {_reduced_count(node.args[0].value.shape, node.attrs.get('axis'))})"


def _prod_code(args, node, target):
    axes = _code_axes(node)
    keepdims = node.attrs.get("keepdims")
    if target != "torch" or not axes:
        return _reduce_text("prod", args[0], axes, keepdims, target)
    text = args[0]  # torch.prod takes one dim: one call per axis (a fixed shape here)
    for a in axes:
        text = f"torch.prod({text}, dim={a}, keepdim=True)"
    return text if keepdims else f"{text}.reshape({tuple(node.value.shape)})"


register(
    Op(
        "sum",
        _reduce_name("SumBackward0", "SumBackward1"),
        lambda a, axis=None, keepdims=False: a.sum(axis=axis, keepdims=keepdims),
        lambda n, g: (expand_back(g, n.shapes[0], n.attrs["axis"], n.attrs["keepdims"]),),
        lambda n, ts: None if ts[0] is None else call("sum", ts[0], **n.attrs),
        saves=False,
        kind="reduction",
        printing=function("sum", latex="\\operatorname{sum}"),
        spreads_nonfinite=(0,),
        code=_reduction_code("sum"),
        on_complex="rules",
        linear=True,
    )
)


def _mean_forward(a, axis=None, keepdims=False):
    # sum / count, which is how NumPy's mean computes it (the same bits), minus NumPy's
    # "Mean of empty slice" RuntimeWarning: the mean of nothing is 0/0 = nan (IEEE, as in
    # PyTorch), reported like any other nan, never as a Python warning on stderr.
    return a.sum(axis=axis, keepdims=keepdims) / _reduced_count(a.shape, axis)


register(
    Op(
        "mean",
        _reduce_name("MeanBackward0", "MeanBackward1"),
        _mean_forward,
        lambda n, g: (
            expand_back(g, n.shapes[0], n.attrs["axis"], n.attrs["keepdims"])
            / _reduced_count(n.shapes[0], n.attrs["axis"]),
        ),
        lambda n, ts: None if ts[0] is None else call("mean", ts[0], **n.attrs),
        saves=False,
        kind="reduction",
        printing=function("mean", latex="\\operatorname{mean}"),
        spreads_nonfinite=(0,),
        code=code(_mean_code),
        on_complex="rules",
        linear=True,
    )
)


def _by_partials(partials):
    """The vjp and jvp of a reduction whose derivative is elementwise: ``partials(x, out,
    axis, keepdims)`` gives d out / d x_i in x's shape (prod, norm)."""

    def local(n):
        return partials(n.inputs[0], n.out, n.attrs["axis"], n.attrs["keepdims"])

    def vjp(n, g):
        return (chain(expand_back(g, n.shapes[0], n.attrs["axis"], n.attrs["keepdims"]), local(n)),)

    def jvp(n, ts):
        return None if ts[0] is None else call("sum", chain(ts[0], local(n)), **n.attrs)

    return vjp, jvp


def _prod_partials(x, out, axis, keepdims):
    """d prod / d x_i = product of the others, also where some x are 0."""
    out_k = expand_back(out, x.shape, axis, keepdims)
    if not _any_zero(x):
        return out_k / x
    zero = eq(x, 0)
    safe = where(zero, 1.0, x)

    def along(t):  # reduced over the axis, broadcast back to x's shape
        return expand_back(call(t[0], t[1], axis=axis, keepdims=True), x.shape, axis, True)

    prod_nonzero = along(("prod", safe))
    zeros_count = along(("sum", zero))
    # The sum of the zero entries: its value is 0, but it carries their derivatives, so
    # a partial that is 0 at the point (a product with a zero factor left in it) still has
    # the right derivative: the second derivative at zeros is exact (H_ij = prod_{k!=i,j}).
    zero_sum = along(("sum", where(zero, x, 0.0)))
    at_zero = where(
        eq(zeros_count, 1),
        prod_nonzero,
        where(eq(zeros_count, 2), (zero_sum - x) * prod_nonzero, 0.0),
    )
    elsewhere = where(
        eq(zeros_count, 0),
        out_k / safe,
        where(eq(zeros_count, 1), zero_sum * prod_nonzero / safe, 0.0),
    )
    return where(zero, at_zero, elsewhere)


register(
    Op(
        "prod",
        _reduce_name("ProdBackward0", "ProdBackward1"),
        lambda a, axis=None, keepdims=False: a.prod(axis=axis, keepdims=keepdims),
        *_by_partials(_prod_partials),
        kind="reduction",
        printing=function("prod", latex="\\operatorname{prod}"),
        code=code(_prod_code),
    )
)


def _extreme_weights(x, out, axis, keepdims):
    # Ties share the gradient evenly (PyTorch's amax/amin and full max/min). A full
    # reduction that is NaN shares it among the NaNs, as PyTorch's evenly_distribute_backward
    # does; a reduction along an axis compares with ==, so a NaN result gives NaN weights
    # there (PyTorch's amax/amin backward, scale_grad_by_count, does the same).
    if axis is None:
        hit = eq(x, out) + ne(x, x) * ne(out, out)
        return hit / call("sum", hit)
    hit = eq(x, expand_back(out, x.shape, axis, keepdims))
    count = expand_back(call("sum", hit, axis=axis, keepdims=True), x.shape, axis, True)
    return hit / count


def _extreme(name, fn, full, partial, printing):
    register(
        Op(
            name,
            _reduce_name(full, partial),
            lambda a, axis=None, keepdims=False: getattr(_xp(), fn)(
                a, axis=axis, keepdims=keepdims
            ),
            lambda n, g: (
                chain(
                    expand_back(g, n.shapes[0], n.attrs["axis"], n.attrs["keepdims"]),
                    _extreme_weights(n.inputs[0], n.out, n.attrs["axis"], n.attrs["keepdims"]),
                ),
            ),
            lambda n, ts: (
                None
                if ts[0] is None
                else call(
                    "sum",
                    chain(
                        ts[0],
                        _extreme_weights(n.inputs[0], n.out, n.attrs["axis"], n.attrs["keepdims"]),
                    ),
                    **n.attrs,
                )
            ),
            kind="reduction",
            kink=_tie_kink(fn),
            printing=printing,
            code=_reduction_code(name),
        )
    )


_extreme("amax", "max", "MaxBackward1", "AmaxBackward0", function("max", latex="\\max"))
_extreme("amin", "min", "MinBackward1", "AminBackward0", function("min", latex="\\min"))


# ---- norm(x, axis=None, keepdims=0, ord=None): NumPy's numpy.linalg.norm ------------------
#
# Without ord: the 2-norm over the axes given (all of them by default), as before ord existed:
# sqrt(sum(x*x)) over any number of axes.  With ord (keyword only: NumPy's second positional
# argument is ord, ours is axis, as every reduction's): a vector norm over one axis (a vector
# by default) or a matrix norm over two (a matrix by default), NumPy's orders:
#   vectors   ord = any real p: sum(|x|^p)^(1/p); 0: the count of nonzero entries; inf, -inf:
#             max |x|, min |x|; 1 and 2 as p.
#   matrices  'fro' (the 2-norm of the entries), 'nuc' (the sum of the singular values), 2, -2
#             (the largest, smallest singular value), 1, -1 (max, min column sum of |x|), inf,
#             -inf (max, min row sum of |x|).
# Gradients are PyTorch's (linalg.vector_norm, linalg.matrix_norm): d norm / d x is a partial
# in x's shape for every order (x/|x| pinned to 0 at 0; sign(x)|x|^(p-1) |x|_p^(1-p), with
# PyTorch's pins; ties of inf-norms split evenly; U diag(w) Vᵀ for the orders made from
# singular values, w the weights of the singular values chosen), so one vjp and one jvp
# (:func:`_by_partials`) serve them all.  A kink (0, ties, a zero entry for p <= 1, repeated
# or zero singular values) warns, as the other ops' conventions do.


@dataclass(frozen=True)
class KeywordParam(ParsedParam):
    """A :class:`Param` that a call gives by keyword only (norm's ``keepdims`` and ``ord``:
    NumPy's second positional argument of norm is ord, the language's is axis); with
    ``parse``, one that reads its own value (:class:`ParsedParam`: norm's ord)."""

    keyword_only: bool = True


class Word(str):
    """A string attribute: norm's ``ord='fro'``, einsum's subscripts.  It prints quoted, as the
    language writes a string (``str()`` is what the printers write for an attribute)."""

    __slots__ = ()

    def __str__(self) -> str:
        return "'" + self.__add__("'")

    def __repr__(self) -> str:
        return self.__str__()


_MATRIX_ORDS = "'fro', 'nuc', 1, -1, 2, -2, inf, -inf"


def norm_ord(value):
    """The ``ord`` of norm as given (a number, or a string: ``'fro'``, ``'nuc'``, ``'f'``),
    as the op keeps it: None, an int for a whole number, a float, or a :class:`Word`; a
    ValueError saying what ord can be for anything else (nan, another word)."""
    if value is None:
        return None
    try:
        return _ord_param(value)
    except ValueError as exc:
        raise ValueError(f"ord of norm() {exc}") from None


def _ord_param(value):
    """norm's ord as the language writes it (:class:`ParsedParam`'s parse, None a name
    written where a string was meant); its ValueError says what ord must be, the call
    whose param it is."""
    if value is None:
        raise ValueError("must be a constant number, or 'fro' or 'nuc' in quotes, got a name")
    if isinstance(value, str):
        word = {"fro": "fro", "f": "fro", "nuc": "nuc"}.get(value)
        if word is None:
            raise ValueError(
                f"must be a number (a vector norm: any p, inf, -inf, 0) or 'fro' or 'nuc' "
                f"(matrix norms), got {value!r}"
            )
        return Word(word)
    if isinstance(value, list):
        raise ValueError("must be a number, 'fro' or 'nuc', got a list")
    number = float(value)
    if math.isnan(number):
        raise ValueError("must be a number, 'fro' or 'nuc', got nan")
    if math.isfinite(number) and number == math.floor(number) and abs(number) < 2**53:
        return int(number)
    return number


def _ord_text(ord) -> str:
    if isinstance(ord, float) and math.isinf(ord):
        return "inf" if ord > 0 else "-inf"
    return str(ord)


def _have(ndim: int) -> str:
    return "a number" if ndim == 0 else f"an array of {ndim} dimension(s)"


def norm_axes(ndim: int, axis, ord) -> tuple:
    """The axes norm(x, axis, ord=ord) reduces (from 0), for an ord given: one (a vector norm)
    or two (a matrix norm); a ValueError in the tool's words otherwise."""
    shown = _ord_text(ord)
    if axis is None:
        if ndim not in (1, 2):
            raise ValueError(
                f"norm(x, ord={shown}) of {_have(ndim)} needs an axis: one (axis=0) for a "
                "vector norm, two (axis=[0, 1]) for a matrix norm"
            )
        axes = tuple(range(ndim))
    else:
        axes = axis if isinstance(axis, tuple) else (axis,)
    if len(axes) not in (1, 2):
        raise ValueError(
            f"norm(x, ord={shown}) reduces one axis (a vector norm) or two (a matrix norm), "
            f"not {len(axes)}"
        )
    out = [axis_of(a, ndim, "norm", _have(ndim)) for a in axes]
    if len(out) == 2 and out[0] == out[1]:
        raise ValueError(f"norm(x, ord={shown}): the two axes of a matrix norm must differ")
    if len(out) == 1 and isinstance(ord, str):
        raise ValueError(
            f"norm(x, ord={shown}) is a matrix norm: give it a matrix or two axes (axis=[0, 1])"
        )
    if (
        len(out) == 2
        and not isinstance(ord, str)
        and ord not in (1, -1, 2, -2, math.inf, -math.inf)
    ):
        raise ValueError(f"norm(): ord={shown} is not a matrix norm (those are {_MATRIX_ORDS})")
    return tuple(out)


def _moved(a, axes):
    """``a`` with the two ``axes`` moved last, in that order (a host or device array)."""
    return _xp().moveaxis(a, axes, (-2, -1))


def _nonempty(a, axes, shown):
    if any(a.shape[k] == 0 for k in axes):
        raise ValueError(
            f"norm(x, ord={shown}) of an empty array has no value (no largest element)"
        )


def _vector_norm(a, k: int, ord):
    xp = _xp()
    if ord == 2:
        return xp.sqrt((a * a).sum(axis=k, keepdims=True))
    if ord == 1:
        return xp.abs(a).sum(axis=k, keepdims=True)
    if ord == 0:
        return (a != 0).sum(axis=k, keepdims=True, dtype=a.dtype)
    if ord in (math.inf, -math.inf):
        _nonempty(a, (k,), _ord_text(ord))
        fn = xp.max if ord > 0 else xp.min
        return fn(xp.abs(a), axis=k, keepdims=True)
    # NumPy's: abs(x)**p summed, then to the power 1/p
    return (xp.abs(a) ** ord).sum(axis=k, keepdims=True) ** (1.0 / ord)


def _matrix_norm(a, axes, ord):
    xp = _xp()
    if ord == "fro":
        return xp.sqrt((a * a).sum(axis=axes, keepdims=True))
    if ord in ("nuc", 2, -2):
        s = OPS["svdvals"].forward(_moved(a, axes))  # (..., k): nan where a matrix is not finite
        if ord == "nuc":
            v = s.sum(axis=-1)
        else:
            _nonempty(a, axes, _ord_text(ord))
            v = s.max(axis=-1) if ord == 2 else s.min(axis=-1)
        return v.reshape(_keepdims_shape(a.shape, axes))
    _nonempty(a, axes, _ord_text(ord))
    summed, picked = _line_axes(axes, ord)
    sums = xp.abs(a).sum(axis=summed, keepdims=True)
    return (xp.max if ord > 0 else xp.min)(sums, axis=picked, keepdims=True)


def _norm_forward(a, axis=None, keepdims=False, ord=None):
    if axis is not None and a.ndim == 0:
        raise ValueError(
            f"norm() of a number has no axis {axis}: a number has no axes (leave the axis out)"
        )
    if ord is None:
        return _xp().sqrt((a * a).sum(axis=axis, keepdims=keepdims))
    axes = norm_axes(a.ndim, axis, ord)
    r = _vector_norm(a, axes[0], ord) if len(axes) == 1 else _matrix_norm(a, axes, ord)
    return r if keepdims else r.reshape(_reduced_shape(a.shape, axes, False))


def _index_arange(n: int, at: int, ndim: int):
    """arange(n) as an index array along axis ``at`` of ``ndim`` (ones elsewhere)."""
    host = backend.host
    shape = [1] * ndim
    shape[at] = n
    return _xp().asarray(host.arange(n, dtype=host.intp).reshape(shape))


def _permute(x, perm):
    """``x`` with its axes in the order ``perm`` (x.transpose(perm)), as an engine getitem of
    open index arrays, so that it differentiates (the table has no permute op)."""
    n = len(perm)
    if tuple(perm) == tuple(range(n)):
        return x
    if tuple(perm) == tuple(range(n - 2)) + (n - 1, n - 2):
        return call("mT", x)
    shape = tuple(x.shape)
    where = {a: k for k, a in enumerate(perm)}
    index = tuple(_index_arange(shape[a], where[a], n) for a in range(n))
    return call("getitem", x, index=index)


def _to_end_perm(ndim: int, axes) -> tuple:
    return tuple(a for a in range(ndim) if a not in axes) + tuple(axes)


def _sv_weights(s, ord):
    """The weights of the singular values ``s`` (..., k) in a norm made from them: all 1 for
    'nuc'; for 2 (-2) the largest (smallest), ties sharing evenly, as amax/amin backward."""
    if ord == "nuc":
        return call("zeros_like", s) + 1.0
    ref = call("amax" if ord == 2 else "amin", s, axis=-1, keepdims=True)
    hit = eq(s, ref)
    return hit / call("sum", hit, axis=-1, keepdims=True)


def _svd_partials(x, axes, ord):
    """d norm / d x for 'nuc', 2, -2: U diag(w) Vᵀ (reduced SVD) of each matrix."""
    nd = len(x.shape)
    perm = _to_end_perm(nd, axes)
    xm = _permute(x, perm)
    u = call("svd", xm, full_matrices=False, part=0)
    vh = call("svd", xm, full_matrices=False, part=2)
    w = _sv_weights(call("svdvals", xm), ord)
    d = call("matmul", u * reshape(w, tuple(w.shape[:-1]) + (1, w.shape[-1])), vh)
    inverse = [0] * nd
    for k, a in enumerate(perm):
        inverse[a] = k
    return _permute(d, inverse)


def _norm_partials(x, out, axis, keepdims, ord=None):
    # d|x|/dx = x/|x|, pinned to 0 at |x| = 0 (PyTorch's convention).
    if ord is None:
        out_k = expand_back(out, x.shape, axis, keepdims)
        return where(eq(out_k, 0), 0.0, x / out_k)
    axes = norm_axes(len(x.shape), axis, ord)
    out_k = expand_back(out, x.shape, axes, keepdims)
    if ord in (2, "fro") and (len(axes) == 1 or ord == "fro"):
        return where(eq(out_k, 0), 0.0, x / out_k)
    if len(axes) == 2:
        if ord in ("nuc", 2, -2):
            return _svd_partials(x, axes, ord)
        # 1, -1, inf, -inf: sign(x) times the weight of its column (row) sum, ties even
        summed, picked = _line_axes(axes, ord)
        sums = call("sum", call("abs", x), axis=summed, keepdims=True)
        ref = out if keepdims else reshape(out, _keepdims_shape(x.shape, axes))
        weights = _extreme_weights(sums, ref, picked, True)
        return sign(x) * broadcast_to(weights, tuple(x.shape))
    if ord == 1:
        return sign(x)
    if ord == 0:
        return zeros_like(x)
    if ord in (math.inf, -math.inf):
        # PyTorch's: sign(x) on the entries whose |x| is the norm (or nan), shared evenly
        hit = eq(call("abs", x), out_k) + ne(x, x)
        count = expand_back(call("sum", hit, axis=axes, keepdims=True), x.shape, axes, True)
        return sign(x) * hit / count
    scaled = sign(x) * call("abs", x) ** (ord - 1)
    if ord < 1:  # PyTorch pins the entries that are 0 (their derivative is infinite)
        return where(eq(x, 0), 0.0, scaled) * out_k ** (1 - ord)
    return scaled * where(eq(out_k, 0), 0.0, out_k ** (1 - ord))


def _norm_rule(n):
    """(the partials of the norm, the axes it reduces, keepdims): shared by vjp and jvp."""
    a = n.attrs
    keepdims = a.get("keepdims", False)
    d = _norm_partials(n.inputs[0], n.out, a.get("axis"), keepdims, a.get("ord"))
    axes = (
        a.get("axis")
        if a.get("ord") is None
        else norm_axes(len(n.shapes[0]), a.get("axis"), a["ord"])
    )
    return d, axes, keepdims


def _norm_vjp(n, g):
    d, axes, keepdims = _norm_rule(n)
    return (chain(expand_back(g, n.shapes[0], axes, keepdims), d),)


def _norm_jvp(n, ts):
    if ts[0] is None:
        return None
    d, axes, keepdims = _norm_rule(n)
    return call("sum", chain(ts[0], d), axis=axes, keepdims=keepdims)


def _norm_node(n):
    ord = n.attrs.get("ord")
    if ord is None:
        return "NormBackward1"
    if ord in ("nuc",):
        return "SumBackward1"
    if len(norm_axes(len(n.shapes[0]), n.attrs.get("axis"), ord)) == 2 and ord != "fro":
        return "AmaxBackward0" if ord > 0 else "AminBackward0"
    return "LinalgVectorNormBackward0"


def _norm_kink(inputs, out, attrs):
    """The kink of norm at this point, for its ord (None: no kink)."""
    with backend.errstate():
        return _norm_kink_at(inputs, out, attrs)


def _norm_kink_at(inputs, out, attrs):
    xp = _xp()
    x = inputs[0]
    ord = attrs.get("ord")
    if ord is None:
        return (
            "norm is not differentiable at 0; used gradient 0 (PyTorch)"
            if backend.any_nonzero(out == 0)
            else None
        )
    shown = _ord_text(ord)
    axes = norm_axes(x.ndim, attrs.get("axis"), ord)
    if x.size == 0:
        return None
    if ord == 0:
        return "norm(x, ord=0) counts the nonzero entries: its gradient is zero almost everywhere"
    if (
        ord == "fro"
        or (ord == 2 and len(axes) == 1)
        or (len(axes) == 1 and ord > 1 and ord != math.inf)
    ):
        if backend.any_nonzero(out == 0):
            return f"norm(x, ord={shown}) is not differentiable at 0; used gradient 0 (PyTorch)"
        return None
    if len(axes) == 1 and ord not in (math.inf, -math.inf):  # p <= 1: |x|'s kink at each 0
        if backend.any_nonzero(x == 0):
            return (
                f"norm(x, ord={shown}) is not differentiable where an entry is 0; used "
                "gradient 0 for it (PyTorch)"
            )
        return None
    keep = _keepdims_shape(x.shape, axes)
    ref = out.reshape(keep)
    if len(axes) == 1:  # inf, -inf: ties of |x| (0 is a tie of signs too)
        hits = (xp.abs(x) == ref).sum(axis=axes)
        if backend.any_nonzero((hits > 1) | (ref.reshape(hits.shape) == 0)):
            return (
                f"norm(x, ord={shown}) has tied extreme entries (or is 0), where it is not "
                "differentiable; the gradient was split evenly among them (PyTorch)"
            )
        return None
    if ord in ("nuc", 2, -2):
        s = OPS["svdvals"].forward(_moved(x, axes))
        if ord == "nuc":
            bad = (s == 0).any(axis=-1)
            why = "has a zero singular value (it is rank-deficient); used U Vᵀ of its reduced SVD"
        else:
            pick = s.max(axis=-1, keepdims=True) if ord == 2 else s.min(axis=-1, keepdims=True)
            bad = ((s == pick).sum(axis=-1) > 1) | (pick[..., 0] == 0)
            why = "has its extreme singular value repeated (or 0); the gradient was split evenly"
        if backend.any_nonzero(bad):
            return f"norm(x, ord={shown}) is not differentiable where the matrix {why} (PyTorch)"
        return None
    summed, picked = _line_axes(axes, ord)
    sums = xp.abs(x).sum(axis=summed, keepdims=True)
    chosen = sums == ref
    tied = chosen.sum(axis=picked, keepdims=True) > 1
    zero = ((x == 0) & chosen).any(axis=summed, keepdims=True)
    if backend.any_nonzero(tied | zero):
        line = "column" if ord in (1, -1) else "row"
        return (
            f"norm(x, ord={shown}) is not differentiable where its extreme {line} sums tie or the "
            f"chosen {line} has a zero entry; used PyTorch's gradient (ties split evenly)"
        )
    return None


def _module(target: str) -> str:
    return "torch" if target == "torch" else "{xp}"


def _vector_norm_text(x: str, k: int, ord, target: str) -> str:
    """:func:`_vector_norm` (keepdims) as ``target`` writes it."""
    w = _module(target)
    axes = (k,)
    if ord == 2:
        return f"{w}.sqrt({_reduce_text('sum', f'({x} * {x})', axes, True, target)})"
    if ord == 1:
        return _reduce_text("sum", f"{w}.abs({x})", axes, True, target)
    if ord == 0:
        return _reduce_text("sum", f"({x} != 0)", axes, True, target, dtype=f"{x}.dtype")
    if ord in (math.inf, -math.inf):
        return _reduce_text("amax" if ord > 0 else "amin", f"{w}.abs({x})", axes, True, target)
    powers = _reduce_text("sum", f"({w}.abs({x}) ** {ord!r})", axes, True, target)
    return f"({powers} ** {1.0 / ord!r})"


def _matrix_norm_text(x: str, axes: tuple, ord, shape: tuple, target: str) -> str:
    """:func:`_matrix_norm` (keepdims) as ``target`` writes it; ``axes`` negative."""
    w = _module(target)
    if ord == "fro":
        return f"{w}.sqrt({_reduce_text('sum', f'({x} * {x})', axes, True, target)})"
    if ord in ("nuc", 2, -2):
        move = "torch.movedim" if target == "torch" else "{xp}.moveaxis"
        s = svdvals_text(f"{move}({x}, {axes}, (-2, -1))", target)
        fn = "sum" if ord == "nuc" else "amax" if ord == 2 else "amin"
        keep = _keepdims_shape(shape, tuple(a % len(shape) for a in axes))
        return f"{_reduce_text(fn, s, (-1,), False, target)}.reshape({keep})"
    summed, picked = _line_axes(axes, ord)
    sums = _reduce_text("sum", f"{w}.abs({x})", (summed,), True, target)
    return _reduce_text("amax" if ord > 0 else "amin", sums, (picked,), True, target)


def _norm_code(args, node, target):
    x = args[0]
    keepdims = bool(node.attrs.get("keepdims", False))
    ord = node.attrs.get("ord")
    if ord is None:
        total = _reduce_text("sum", f"({x} * {x})", _code_axes(node), keepdims, target)
        return f"{_module(target)}.sqrt({total})"
    shape = tuple(node.args[0].value.shape)
    axes = tuple(k - len(shape) for k in norm_axes(len(shape), node.attrs.get("axis"), ord))
    if len(axes) == 1:
        r = _vector_norm_text(x, axes[0], ord, target)
    else:
        r = _matrix_norm_text(x, axes, ord, shape, target)
    return r if keepdims else f"{r}.reshape({tuple(node.value.shape)})"


register(
    Op(
        "norm",
        _norm_node,
        _norm_forward,
        _norm_vjp,
        _norm_jvp,
        # a reduction with an ord; its kind is linalg because a reduction's forward takes
        # axis and keepdims only (core/batch.py batches it as a reduction all the same)
        kind="linalg",
        kink=_norm_kink,
        printing=function("norm", latex="\\operatorname{norm}"),
        params=(
            Param("axis", "axes", None),
            KeywordParam("keepdims", "flag", False),
            KeywordParam("ord", "ord", None, parse=_ord_param, strings=True),
        ),
        code=code(_norm_code),
    )
)


def _logsumexp_forward(a, axis=None, keepdims=False):
    # log(sum(exp(x - m))) + m with m the largest element (0 where that is not finite, so
    # all -inf gives -inf and any +inf gives +inf, as torch.logsumexp).
    xp = _xp()
    m = xp.max(a, axis=axis, keepdims=True) if a.size else xp.zeros((1,) * a.ndim, a.dtype)
    m = xp.where(xp.isfinite(m), m, 0)
    r = xp.log(xp.exp(a - m).sum(axis=axis, keepdims=True)) + m
    return r if keepdims else xp.squeeze(r, axis=axis)


def _logsumexp_code(args, node, target):
    """log(sum(exp(x - m))) + m, m the largest element where it is finite, else 0."""
    x, w = args[0], _module(target)
    axes = _code_axes(node)
    big = _reduce_text("amax", x, axes, True, target)
    total = _reduce_text("sum", f"{w}.exp({x} - m)", axes, True, target)
    shifted = f"(lambda m: {w}.log({total}) + m)"
    r = f"(lambda M: {shifted}({w}.where({w}.isfinite(M), M, 0.0)))({big})"
    if node.attrs.get("keepdims") or not axes:
        return r
    return f"{r}.reshape({tuple(node.value.shape)})"


register(
    Op(
        "logsumexp",
        "LogsumexpBackward0",
        _logsumexp_forward,
        # d/dx_i = exp(x_i - logsumexp(x)), the softmax (nan where the result is +-inf, as
        # in PyTorch)
        *_by_partials(
            lambda x, out, axis, keepdims: call(
                "exp", x - expand_back(out, x.shape, axis, keepdims)
            )
        ),
        kind="reduction",
        printing=function("logsumexp", latex="\\operatorname{logsumexp}"),
        code=code(_logsumexp_code),
    )
)


def _centered(x, axis):
    """x minus its mean along ``axis``, in x's shape."""
    return x - expand_back(call("mean", x, axis=axis, keepdims=True), x.shape, axis, True)


def _var_forward(a, axis=None, keepdims=False):
    # NumPy's var with ddof=0 (the population variance; PyTorch's var(correction=0)),
    # the variance of nothing nan without a RuntimeWarning.
    if _reduced_count(a.shape, axis) == 0:
        return _mean_forward(a, axis, keepdims) * _xp().nan
    return _xp().var(a, axis=axis, keepdims=keepdims)


def _var_text(args, node, target) -> str:
    """NumPy's var (ddof=0; PyTorch's correction=0); of a number, (x - x)²."""
    x = args[0]
    axes = _code_axes(node)
    if not axes:
        return f"(({x} - {x}) * ({x} - {x}))"
    more = {"correction": 0} if target == "torch" else {}
    return _reduce_text("var", x, axes, node.attrs.get("keepdims"), target, **more)


# The op is "variance": "var" is the op of a variable's node (Expr.var); the language
# spells it var().
register(
    Op(
        "variance",
        "VarBackward0",
        _var_forward,
        # d var/dx_i = 2 (x_i - mean)/N
        *_by_partials(
            lambda x, out, axis, keepdims: (
                _centered(x, axis) * (2.0 / _reduced_count(x.shape, axis))
            )
        ),
        kind="reduction",
        printing=function("var", latex="\\operatorname{var}"),
        code=code(_var_text),
    )
)


def _std_partials(x, out, axis, keepdims):
    # d std/dx_i = (x_i - mean)/(N std), pinned to 0 where std = 0 (PyTorch's std_backward).
    out_k = expand_back(out, x.shape, axis, keepdims)
    d = _centered(x, axis) / (out_k * _reduced_count(x.shape, axis))
    return where(eq(out_k, 0), 0.0, d)


register(
    Op(
        "std",
        "StdBackward0",
        lambda a, axis=None, keepdims=False: _xp().sqrt(_var_forward(a, axis, keepdims)),
        *_by_partials(_std_partials),
        kind="reduction",
        printing=function("std", latex="\\operatorname{std}"),
        code=code(lambda args, node, t: f"{_module(t)}.sqrt({_var_text(args, node, t)})"),
    )
)
