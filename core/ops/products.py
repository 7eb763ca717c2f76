"""Products: dot, matmul (``@``), kron, inner and cross."""

from __future__ import annotations

import math

from .. import backend
from ..tensor import Tensor, is_grad_enabled
from .rules import _is_tensor, _xp, add_tangents, call, chain, conj, reshape, sum_to
from .rules import host_unrecorded as _host_unrecorded
from .table import POWER, PRODUCT, Op, broadcast_size, code, function, infix, register

# ---------------------------------------------------------------------------
# Products
# ---------------------------------------------------------------------------


def _dot_forward(a, b):
    if a.ndim != 1 or b.ndim != 1:
        # PyTorch's rule (torch.dot: 1-D only), not NumPy's (np.dot of matrices multiplies them)
        raise ValueError(
            f"dot needs two 1-D vectors, got {a.ndim}-D and {b.ndim}-D "
            "(as torch.dot; for matrices write a @ b)"
        )
    return _xp().dot(a, b)


register(
    Op(
        "dot",
        "DotBackward0",
        _dot_forward,
        lambda n, g: (
            chain(g, n.inputs[1]) if n.needs[0] else None,
            chain(g, n.inputs[0]) if n.needs[1] else None,
        ),
        lambda n, ts: add_tangents(
            None if ts[0] is None else call("dot", ts[0], n.inputs[1]),
            None if ts[1] is None else call("dot", n.inputs[0], ts[1]),
        ),
        arity=2,
        kind="product",
        printing=function("dot", latex="\\operatorname{dot}"),
        code=code("{xp}.dot({0}, {1})"),
        linear="each",
    )
)


def _matmul_size(shapes, attrs) -> int:
    a, b = shapes
    if not a or not b:
        return 0
    a = a if len(a) > 1 else (1,) + tuple(a)
    b = b if len(b) > 1 else tuple(b) + (1,)
    if len(a) == 2 and len(b) == 2:  # no batch axes: nothing to broadcast (the common case)
        return a[-2] * b[-1]
    return broadcast_size([a[:-2], b[:-2]], attrs) * a[-2] * b[-1]


def _matmul_forward(a, b):
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("both arguments to matmul need to be at least 1-D (use * for scalars)")
    return _xp().matmul(a, b)


def _matmul_node(n):
    da, db = len(n.shapes[0]), len(n.shapes[1])
    if da == 2 and db == 2:
        return "MmBackward0"
    if da == 2 and db == 1:
        return "MvBackward0"
    if da == 1 and db == 1:
        return "DotBackward0"
    if da == 1 and db == 2:
        return "SqueezeBackward4"
    return "UnsafeViewBackward0"


def _matmul_vjp(n, g):
    a, b = (conj(t) for t in n.inputs)  # the adjoint: g @ b^H, a^H @ g (PyTorch's convention)
    sa, sb = n.shapes
    if len(sa) == 2 and len(sb) in (1, 2) and _host_unrecorded(a, b, g):
        return _matrix_vjp(n, a.data, b.data, g.data)
    # Promote vectors to matrices, use the matrix rule, then restore the shapes.
    a2 = reshape(a, (1,) + sa) if len(sa) == 1 else a
    b2 = reshape(b, sb + (1,)) if len(sb) == 1 else b
    g2 = g
    if len(sa) == 1 and len(sb) == 1:
        g2 = reshape(g, (1, 1))
    elif len(sa) == 1:
        g2 = reshape(g, g.shape[:-1] + (1,) + g.shape[-1:])
    elif len(sb) == 1:
        g2 = reshape(g, g.shape + (1,))
    ga = gb = None
    if n.needs[0]:
        ga = _outer(g2, b2, True) if g2.shape[-1] == 1 else None
        if ga is None:
            ga = call("matmul", g2, call("mT", b2))
        ga = reshape(sum_to(ga, a2.shape), sa)
    if n.needs[1]:
        gb = _outer(a2, g2, False) if a2.shape[-2] == 1 else None
        if gb is None:
            gb = call("matmul", call("mT", a2), g2)
        gb = reshape(sum_to(gb, b2.shape), sb)
    return ga, gb


def _matrix_vjp(n, a, b, g):
    """The rule below for a matrix ``a`` times a vector or a matrix ``b`` (no batch axes, so
    no sum_to), on the host arrays when nothing is recorded: the same NumPy calls that the
    rule makes through the engine's ops (reshape, mT, matmul, the outer product), so the
    same bits, without a Tensor and an op dispatch for each reshape."""
    xp = backend.host
    b2 = b.reshape(b.shape + (1,)) if b.ndim == 1 else b
    g2 = g.reshape(g.shape + (1,)) if b.ndim == 1 else g
    ga = gb = None
    if n.needs[0]:
        bt = b2.T  # 2-D: swapaxes(b2, -1, -2)
        ga = _outer_product(xp, g2, bt) if g2.shape[-1] == 1 else xp.matmul(g2, bt)
        ga = Tensor._wrap(ga.reshape(a.shape))
    if n.needs[1]:
        at = a.T  # 2-D: swapaxes(a, -1, -2)
        gb = _outer_product(xp, at, g2) if a.shape[-2] == 1 else xp.matmul(at, g2)
        gb = Tensor._wrap(gb.reshape(b.shape))
    return ga, gb


def _outer(x, y, left: bool):
    """``x @ mT(y)`` (left) or ``mT(x) @ y``, whose inner dimension is 1, when nothing is
    recorded: each entry is one product, and matmul's 0 + x*y (which makes a -0.0 product
    +0.0) is what multiply and then += 0 give, bit for bit, without a GEMM.  None: use
    matmul (a graph is being recorded, or the arrays are not NumPy's)."""
    xp = backend.xp
    if is_grad_enabled() or xp is not backend.host or not (_is_tensor(x) and _is_tensor(y)):
        return None
    a, b = x.data, y.data
    if left:
        b = xp.swapaxes(b, -1, -2)
    else:
        a = xp.swapaxes(a, -1, -2)
    return Tensor._wrap(backend.quiet_call(_outer_product, xp, a, b))


def _outer_product(xp, a, b):
    r = xp.multiply(a, b)
    # Adding 0 changes only a -0.0 entry.  Factors without a zero whose smallest
    # magnitudes multiply to a normal number make no zero product at all (not even by
    # underflow): the pass over the product is then skipped.  nan fails the test.  A small
    # product takes the pass: cheaper than the test's four reductions.
    if r.size <= _SMALL or not (
        xp.abs(a).min(initial=xp.inf) * xp.abs(b).min(initial=xp.inf) >= _TINY
    ):
        r += r.dtype.type(0)
    return r


_TINY = 1e-30  # far above the underflow threshold of float64 and float32 products
_SMALL = 1024  # elements up to which the pass over the product costs less than the test


def _matmul_jvp(n, ts):
    a, b = n.inputs
    ta, tb = ts
    return add_tangents(
        None if ta is None else call("matmul", ta, b), None if tb is None else call("matmul", a, tb)
    )


register(
    Op(
        "matmul",
        _matmul_node,
        _matmul_forward,
        _matmul_vjp,
        _matmul_jvp,
        arity=2,
        kind="product",
        printing=infix("@", PRODUCT, (PRODUCT, POWER), " ", names=("matmul",)),
        size=_matmul_size,
        code=code("{xp}.matmul({0}, {1})"),
        on_complex="rules",
        linear="each",
    )
)


# ---------------------------------------------------------------------------
# kron, inner, cross (issue 27): NumPy's, with torch.kron's, torch.inner's and
# torch.linalg.cross's gradients.  Each is bilinear: its jvp is the op on one tangent and the
# other input, summed; its vjp is written with the table's ops, so second order works.
# ---------------------------------------------------------------------------


def bilinear_jvp(name: str):
    """The jvp of an op linear in each of its two arguments: the op on each tangent with
    the other input (and the node's attributes), summed."""

    def jvp(n, ts):
        a, b = n.inputs
        return add_tangents(
            None if ts[0] is None else call(name, ts[0], b, **n.attrs),
            None if ts[1] is None else call(name, a, ts[1], **n.attrs),
        )

    return jvp


def bilinear(name: str, node: str, forward, vjp, size, batching: tuple, spelling, **facts):
    """Register a product of two arrays (kron, inner, cross, convolve): its jvp is the op on
    each tangent with the other input; ``facts`` are the :class:`Op`'s others (params)."""
    register(
        Op(
            name,
            node,
            forward,
            vjp,
            bilinear_jvp(name),
            arity=2,
            kind="product",
            printing=function(name, latex=f"\\operatorname{{{name}}}"),
            size=size,
            batching=batching,
            code=spelling,
            linear="each",
            **facts,
        )
    )


def _kron_layout(sa, sb) -> tuple:
    """Both shapes padded with leading 1s to one rank (NumPy's kron)."""
    ndim = max(len(sa), len(sb))
    return (1,) * (ndim - len(sa)) + tuple(sa), (1,) * (ndim - len(sb)) + tuple(sb)


def _kron_size(shapes, attrs) -> int:
    pa, pb = _kron_layout(*shapes)
    return math.prod(pa) * math.prod(pb)


def _kron_forward(a, b):
    return _xp().kron(a, b)


def _kron_vjp(n, g):
    # out[i*nb + j] = a[i] b[j] along each axis: g split into (a's, b's) pairs of axes
    a, b = n.inputs
    pa, pb = _kron_layout(*n.shapes)
    split = reshape(g, tuple(d for pair in zip(pa, pb) for d in pair))
    spread_a = tuple(d for s in pa for d in (s, 1))  # a's axes at the even places
    spread_b = tuple(d for s in pb for d in (1, s))
    ga = gb = None
    if n.needs[0]:
        ga = _sum_axes(split * reshape(b, spread_b), tuple(range(1, 2 * len(pa), 2)))
        ga = reshape(ga, n.shapes[0])
    if n.needs[1]:
        gb = _sum_axes(split * reshape(a, spread_a), tuple(range(0, 2 * len(pa), 2)))
        gb = reshape(gb, n.shapes[1])
    return ga, gb


def _sum_axes(x, axes: tuple):
    return call("sum", x, axis=axes, keepdims=False) if axes else x


bilinear(
    "kron",
    "UnsafeViewBackward0",  # what torch.kron's reshape of the products records
    _kron_forward,
    _kron_vjp,
    _kron_size,
    ("rows",),
    code("{xp}.kron({0}, {1})"),
)


def _inner_size(shapes, attrs) -> int:
    sa, sb = shapes
    if not sa or not sb:  # a number times an array
        return math.prod(sa) * math.prod(sb)
    return math.prod(sa[:-1]) * math.prod(sb[:-1])


def _inner_forward(a, b):
    if a.ndim and b.ndim and a.shape[-1] != b.shape[-1]:
        raise ValueError(
            f"inner() sums over the last axes, which must have one length: {a.shape[-1]} "
            f"and {b.shape[-1]}"
        )
    return _xp().inner(a, b)


def _inner_vjp(n, g):
    a, b = n.inputs
    sa, sb = n.shapes
    if not sa or not sb:  # a number: inner is the product
        return (
            sum_to(g * b, sa) if n.needs[0] else None,
            sum_to(g * a, sb) if n.needs[1] else None,
        )
    # as matrices: a2 (A, k) and b2 (B, k), out = a2 @ b2.T of shape (A, B)
    k = sa[-1]
    g2 = reshape(g, (math.prod(sa[:-1]), math.prod(sb[:-1])))
    ga = gb = None
    if n.needs[0]:
        ga = reshape(call("matmul", g2, reshape(b, (-1, k))), sa)
    if n.needs[1]:
        gb = reshape(call("matmul", call("mT", g2), reshape(a, (-1, k))), sb)
    return ga, gb


bilinear(
    "inner",
    "ViewBackward0",  # torch.inner's reshape of a tensordot
    _inner_forward,
    _inner_vjp,
    _inner_size,
    ("rows",),
    code("{xp}.inner({0}, {1})"),
)


def _cross_forward(a, b):
    if a.ndim == 0 or b.ndim == 0 or a.shape[-1] != 3 or b.shape[-1] != 3:
        shown = [list(a.shape), list(b.shape)]
        raise ValueError(
            f"cross() takes 3-vectors along the last axis (torch.linalg.cross), got shapes "
            f"{shown[0]} and {shown[1]}"
        )
    return _xp().cross(a, b)


def _cross_vjp(n, g):
    # <g, a x b> = <a, b x g> = <b, g x a>; broadcast inputs take their sums back
    a, b = n.inputs
    return (
        sum_to(call("cross", b, g), n.shapes[0]) if n.needs[0] else None,
        sum_to(call("cross", g, a), n.shapes[1]) if n.needs[1] else None,
    )


bilinear(
    "cross",
    "LinalgCrossBackward0",
    _cross_forward,
    _cross_vjp,
    broadcast_size,
    ("trailing", 1),
    # torch.linalg.cross broadcasts only arguments of one rank
    code("{xp}.cross({0}, {1})", torch="torch.linalg.cross(*torch.broadcast_tensors({0}, {1}))"),
)
