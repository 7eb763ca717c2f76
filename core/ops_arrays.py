"""Array functions of the language: running sums, flips, joins (issue 13).

Each op is declared as in :mod:`.ops` (forward on arrays, ``vjp`` and ``jvp`` written with
engine ops, so second derivatives work) and takes its attribute arguments as
:class:`~.ops.Param`\\ s, which the parser checks and the printer writes back.  This module
is imported by :mod:`.ops` just before the table is made; ``KINKS`` and ``DIFFERENTIABLE``
here join the table's.
"""

from __future__ import annotations

from .ops import Op, Param, call, function, register, reshape, zeros_like
from .ops import _xp as xp

KINKS: dict = {}
DIFFERENTIABLE: dict = {}


def axis_of(axis: int, ndim: int, name: str) -> int:
    """``axis`` of an ndim-dimensional argument of ``name()``, from 0; out of range is a
    ValueError in the tool's words (the engine reports it as a shape error)."""
    if not -ndim <= axis < ndim:
        have = "a number, which has no axes" if ndim == 0 else f"{ndim} dimension(s)"
        raise ValueError(f"axis {axis} of {name}() is out of range for an array of {have}")
    return axis + ndim if axis < 0 else axis


def axes_of(axis, ndim: int, name: str):
    """None (all axes), one axis or a tuple of them, each checked by :func:`axis_of`."""
    if axis is None:
        return None
    if isinstance(axis, tuple):
        return tuple(axis_of(a, ndim, name) for a in axis)
    return axis_of(axis, ndim, name)


# ---- flip(x, axis=None): reverse the order of elements along axes (all by default) --------


def flip(x, axis=None):
    return call("flip", x, axis=axis)


register(
    Op(
        "flip",
        "FlipBackward0",
        lambda a, axis=None: xp().flip(a, axis=axes_of(axis, a.ndim, "flip")),
        lambda n, g: (flip(g, n.attrs["axis"]),),
        lambda n, ts: None if ts[0] is None else flip(ts[0], n.attrs["axis"]),
        saves=False,
        kind="shape",
        printing=function("flip", latex="\\operatorname{flip}"),
        params=(Param("axis", "axes", None),),
        batching=("axes",),
    )
)


# ---- cumsum(x, axis=None): running sums; without an axis over the flattened array (NumPy) --


def cumsum(x, axis=None):
    return call("cumsum", x, axis=axis)


def _cumsum_vjp(n, g):
    # the adjoint of a running sum is the running sum from the end: flip, cumsum, flip
    axis = n.attrs["axis"]
    if axis is None:
        return (reshape(flip(cumsum(flip(g))), n.shapes[0]),)
    return (flip(cumsum(flip(g, axis), axis), axis),)


def _cumsum_jvp(n, ts):
    return None if ts[0] is None else cumsum(ts[0], n.attrs["axis"])


register(
    Op(
        "cumsum",
        "CumsumBackward0",
        lambda a, axis=None: xp().cumsum(a, axis=axes_of(axis, a.ndim, "cumsum")),
        _cumsum_vjp,
        _cumsum_jvp,
        saves=False,
        kind="shape",
        printing=function("cumsum", latex="\\operatorname{cumsum}"),
        params=(Param("axis", "axis", None),),
        batching=("axes",),
    )
)


# ---- concatenate([a, b, ...], axis=0): join arrays along an existing axis ------------------


def _concatenate_forward(*arrays, axis=0):
    if any(a.ndim == 0 for a in arrays):
        raise ValueError("concatenate() joins arrays along an axis; a number has none")
    return xp().concatenate(arrays, axis=axis_of(axis, arrays[0].ndim, "concatenate"))


def _concatenate_vjp(n, g):
    axis = axis_of(n.attrs["axis"], len(n.shapes[0]), "concatenate")
    grads = []
    start = 0
    for shape, need in zip(n.shapes, n.needs):
        stop = start + shape[axis]
        index = (slice(None),) * axis + (slice(start, stop),)
        grads.append(call("getitem", g, index=index) if need else None)
        start = stop
    return tuple(grads)


def _concatenate_jvp(n, ts):
    if all(t is None for t in ts):
        return None
    parts = [zeros_like(x) if t is None else t for x, t in zip(n.inputs, ts)]
    return call("concatenate", *parts, axis=n.attrs["axis"])


register(
    Op(
        "concatenate",
        "CatBackward0",
        _concatenate_forward,
        _concatenate_vjp,
        _concatenate_jvp,
        arity=None,
        saves=False,
        kind="shape",
        printing=function("concatenate", "cat", latex="\\operatorname{concatenate}"),
        params=(Param("axis", "axis", 0),),
        batching=("axes",),
    )
)
