"""Array functions of the language (issue 13): running sums and products, flips, rolls, sorts,
repeats, joins and stacks, softmax and log_softmax.

Each op is declared as in :mod:`.elementwise` (forward on arrays, ``vjp`` and ``jvp`` written with
engine ops, so second derivatives work) and takes its attribute arguments as
:class:`~.table.Param`\\ s, which the parser checks and the printer writes back.  This module
is imported by the package's ``__init__`` before the table is made; every fact of an op (its kink, which
arguments are differentiated) is on its entry.
"""

from __future__ import annotations

import math

from .. import limits
from .rules import _any_zero, call, eq, reshape, where, zeros_like
from .rules import _xp as xp
from .shape import axis_of, getitem_code, join_parts
from .table import Code, Op, Param, code, copying, function, register


def axes_of(axis, ndim: int, name: str):
    """None (all axes), one axis or a tuple of them, each checked by :func:`axis_of`."""
    if axis is None:
        return None
    if isinstance(axis, tuple):
        return tuple(axis_of(a, ndim, name) for a in axis)
    return axis_of(axis, ndim, name)


# ---- how generated code writes them (core/codegen) -------------------------------------------


def _axis_code(name: str):
    """The :class:`~.table.Code` of ``{xp}.name(x, axis=axis)`` over one axis or, without
    one, the flattened array (NumPy's and JAX's own; torch's ``dim`` needs the flat array)."""

    def torch(args, node, target):
        axis = node.attrs["axis"]
        if axis is None:
            return f"torch.{name}({args[0]}.reshape(-1), dim=0)"
        return f"torch.{name}({args[0]}, dim={axis!r})"

    return code(f"{{xp}}.{name}({{0}}, axis={{axis}})", torch=torch)


def _flip_code(args, node, target):
    axis = node.attrs["axis"]
    if target != "torch":
        return f"{{xp}}.flip({args[0]}, axis={axis!r})"
    if axis is None:
        axis = tuple(range(node.args[0].value.ndim))
    return f"torch.flip({args[0]}, dims={axis if isinstance(axis, tuple) else (axis,)!r})"


def _join_code(numpy: str, torch: str):
    """concatenate and stack(axis=): a join of the arguments along the ``axis``."""

    def spell(args, node, target):
        axis = (
            f"dim={node.attrs['axis']!r}" if target == "torch" else f"axis={node.attrs['axis']!r}"
        )
        name = f"torch.{torch}" if target == "torch" else f"{{xp}}.{numpy}"
        return f"{name}({join_parts(args, node, target)}, {axis})"

    return code(spell)


def _roll_code(args, node, target):
    """NumPy's roll with the shifts taken modulo each length, as the forward takes them."""
    shape, shift, axis = node.args[0].value.shape, node.attrs["shift"], node.attrs["axis"]
    if axis is None:
        shifts, axes = shift % max(math.prod(shape), 1), None
    else:
        axes = tuple(a % len(shape) for a in (axis if isinstance(axis, tuple) else (axis,)))
        shifts = tuple(shift % max(shape[a], 1) for a in axes)
    dim = "dims" if target == "torch" else "axis"
    return f"{{xp}}.roll({args[0]}, {shifts!r}, {dim}={axes!r})"


def _normalized_code(log: bool):
    """softmax and log_softmax with the forward's shift by the largest element of each slice
    (and, for log_softmax, its log1p of the sum split at the maxima)."""

    def spell(args, node, target):
        x, ndim = args[0], node.args[0].value.ndim
        ax = axis_of(node.attrs["axis"], ndim, "softmax")
        if node.args[0].value.shape[ax] == 0:
            return f"({x} + 0.0)"
        kw = f"dim={ax}, keepdim=True" if target == "torch" else f"axis={ax}, keepdims=True"
        top = "torch.amax" if target == "torch" else "{xp}.max"
        shifted = f"({x} - {top}({x}, {kw}))"
        if not log:
            return f"(lambda e: e / e.sum({kw}))({{xp}}.exp{shifted})"
        zero = "torch.zeros_like(s)" if target == "torch" else "0.0"
        rest = f"{{xp}}.where(s == 0, {zero}, {{xp}}.exp(s)).sum({kw})"
        # the count of maxima in the code's dtype (an integer count would make float32 float64)
        top = f"(s == 0).{'to' if target == 'torch' else 'astype'}(s.dtype).sum({kw})"
        return f"(lambda s: s - {{xp}}.log1p({rest} + ({top} - 1)))({shifted})"

    return code(spell)


def _split_code(args, node, target):
    a = node.attrs
    shape = node.args[0].value.shape
    index = _split_index(shape, a["indices_or_sections"], a["axis"], a["part"])
    return getitem_code(args, node, target, index)


# ---- flip(x, axis=None): reverse the order of elements along axes (all by default) --------


def flip(x, axis=None):
    return call("flip", x, axis=axis)


register(
    copying(
        "flip",
        "FlipBackward0",
        lambda a, axis=None: xp().flip(a, axis=axes_of(axis, a.ndim, "flip")),
        lambda n, g: (flip(g, n.attrs["axis"]),),
        lambda n, ts: None if ts[0] is None else flip(ts[0], n.attrs["axis"]),
        printing=function("flip", latex="\\operatorname{flip}"),
        params=(Param("axis", "axes", None),),
        batching=("axes",),
        code=code(_flip_code),
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


def _running(name: str, node: str, vjp, jvp, **facts) -> None:
    """Register cumsum or cumprod: NumPy's ``name`` along ``axis`` (None: the flattened
    array), each element on those of its fiber up to it (``fiber="prefix"``)."""
    register(
        Op(
            name,
            node,
            lambda a, axis=None: getattr(xp(), name)(a, axis=axes_of(axis, a.ndim, name)),
            vjp,
            jvp,
            kind="shape",
            printing=function(name, latex=f"\\operatorname{{{name}}}"),
            params=(Param("axis", "axis", None),),
            batching=("axes",),
            code=_axis_code(name),
            fiber="prefix",
            **facts,
        )
    )


_running(
    "cumsum",
    "CumsumBackward0",
    _cumsum_vjp,
    _cumsum_jvp,
    saves=False,
    on_complex="rules",
    linear=True,
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


def _join_jvp(name: str):
    """The jvp of an op that joins its inputs (concatenate, stack): the same join of the
    tangents, zeros for the inputs without one."""

    def jvp(n, ts):
        if all(t is None for t in ts):
            return None
        parts = [zeros_like(x) if t is None else t for x, t in zip(n.inputs, ts)]
        return call(name, *parts, axis=n.attrs["axis"])

    return jvp


register(
    copying(
        "concatenate",
        "CatBackward0",
        _concatenate_forward,
        _concatenate_vjp,
        _join_jvp("concatenate"),
        arity=None,
        printing=function("concatenate", "cat", latex="\\operatorname{concatenate}"),
        params=(Param("axis", "axis", 0),),
        batching=("axes",),
        code=_join_code("concatenate", "cat"),
    )
)


# ---- helpers of the rules below -------------------------------------------------------------


def _sum(x, axis=None, keepdims=False):
    # both attributes, always: sum's own rules read them
    return call("sum", x, axis=axis, keepdims=keepdims)


def _sum_keep(x, axis):
    return _sum(x, axis, keepdims=True)


def _reversed_cumsum(x, axis):
    """sum_{j >= i} x_j along ``axis``: the adjoint of a running sum."""
    return flip(cumsum(flip(x, axis), axis), axis)


class _Spelled(Op):
    """An op whose shape errors name the function the user wrote (``stack``, not the op's
    key ``stack_axis``)."""

    __slots__ = ()

    def shape_message(self, inputs, attrs, exc) -> str:
        message = super().shape_message(inputs, attrs, exc)
        return self.printing.names[0] + message[len(self.name) :]


# ---- softmax(x, axis=-1), log_softmax(x, axis=-1) -----------------------------------------
# Stable: the largest element of each slice is subtracted first.  A slice holding +inf, nan
# or only -inf is nan throughout, as torch.softmax and torch.log_softmax give (x - max is
# nan there); -inf beside finite numbers is 0 (softmax) and -inf (log_softmax).


def _shifted(a, axis, name):
    """``a`` minus the largest element of its slice along ``axis`` (checked), and the axis."""
    ax = axis_of(axis, a.ndim, name)
    if a.shape[ax] == 0:  # nothing to normalize (and NumPy's max of nothing is an error)
        return a + 0.0, ax
    return a - xp().max(a, axis=ax, keepdims=True), ax


def _softmax_forward(a, axis=-1):
    s, ax = _shifted(a, axis, "softmax")
    e = xp().exp(s)
    return e / e.sum(axis=ax, keepdims=True)


def _log_softmax_forward(a, axis=-1):
    # s - log(sum(exp(s))) with the sum split as (count of maxima) + (the rest): the log is
    # log1p(count - 1 + rest), accurate where the result is near 0 (log of a sum near 1 is
    # not: 1e-14 relative off there).  A slice that is nan after the shift stays nan.
    xps = xp()
    s, ax = _shifted(a, axis, "log_softmax")
    top = s == 0
    rest = xps.where(top, 0.0, xps.exp(s)).sum(axis=ax, keepdims=True)
    return s - xps.log1p(rest + (top.sum(axis=ax, keepdims=True) - 1))


def _softmax_vjp(n, g):
    # PyTorch's _softmax_backward_data: y * (g - sum(g * y)); the Jacobian is symmetric, so
    # the jvp is the same with the tangent for g
    y = n.out
    return (y * (g - _sum_keep(g * y, n.attrs["axis"])),)


def _softmax_jvp(n, ts):
    if ts[0] is None:
        return None
    y = n.out
    return y * (ts[0] - _sum_keep(ts[0] * y, n.attrs["axis"]))


def _log_softmax_vjp(n, g):
    # PyTorch's _log_softmax_backward_data: g - exp(out) * sum(g)
    return (g - call("exp", n.out) * _sum_keep(g, n.attrs["axis"]),)


def _log_softmax_jvp(n, ts):
    if ts[0] is None:
        return None
    return ts[0] - _sum_keep(call("exp", n.out) * ts[0], n.attrs["axis"])


# The two normalisations along ``axis`` (default the last), batched over the other axes.
for _name, _node, _latex, _rules in (
    ("softmax", "SoftmaxBackward0", "softmax", (_softmax_forward, _softmax_vjp, _softmax_jvp)),
    (
        "log_softmax",
        "LogSoftmaxBackward0",
        "log\\_softmax",
        (_log_softmax_forward, _log_softmax_vjp, _log_softmax_jvp),
    ),
):
    register(
        Op(
            _name,
            _node,
            *_rules,
            kind="shape",
            printing=function(_name, latex=f"\\operatorname{{{_latex}}}"),
            params=(Param("axis", "axis", -1),),
            batching=("axes",),
            code=_normalized_code(_name == "log_softmax"),
            fiber="whole",
        )
    )


# ---- cumprod(x, axis=None): running products; without an axis over the flattened array ----
#
# d out_j / d x_i = prod_{m <= j, m != i} x_m for i <= j.  Where x has no zero that is
# out_j / x_i, and the vjp is the reversed running sum of g * out divided by x (PyTorch's
# fast path).  A zero makes that 0/0, so there, as PyTorch's cumprod_backward, the
# derivative with respect to each zero is the product of the others: exact for the first two
# zeros of a slice (every later one has two zero factors, so its derivative is 0, and so is
# the first derivative of that), which keeps the values and the Hessian exact at any zeros.


def cumprod(x, axis=None):
    return call("cumprod", x, axis=axis)


def _cumprod_zeros(x, axis):
    """What both rules need where x (flattened when ``axis`` is None) has zeros: the masks of
    its zeros and of the first and second zero of each slice, x with its zeros set to 1,
    and ``f1``/``f2``: prod_{m <= j, m != k} x_m for the first / second zero k (to first
    order in the zeros: a product with two zero factors is dropped)."""
    zero = eq(x, 0)
    count = cumsum(zero, axis)  # zeros up to and including each element
    one, two = eq(count, 1), eq(count, 2)
    first, second = zero * one, zero * two
    safe = where(zero, 1.0, x)
    kept = cumprod(safe, axis)  # the product of the nonzero elements so far
    # each of the first two zeros carried on from its place: value 0, derivative to it
    x1 = cumsum(where(first, x, 0.0), axis)
    x2 = cumsum(where(second, x, 0.0), axis)
    f1 = kept * (one + two * x2)
    f2 = kept * (two * x1)
    return zero, first, second, safe, f1, f2


def _cumprod_axis(n):
    """The rules' view of the node: input, output and the axis they work along."""
    x, out, axis = n.inputs[0], n.out, n.attrs["axis"]
    if axis is None:
        return reshape(x, (-1,)), out, 0
    return x, out, axis


def _cumprod_vjp(n, g):
    x, out, axis = _cumprod_axis(n)
    if not _any_zero(x):
        grad = _reversed_cumsum(g * out, axis) / x
    else:
        zero, first, second, safe, f1, f2 = _cumprod_zeros(x, axis)
        grad = where(
            zero,
            where(
                first,
                _reversed_cumsum(g * f1, axis),
                where(second, _reversed_cumsum(g * f2, axis), 0.0),
            ),
            _reversed_cumsum(g * out, axis) / safe,
        )
    return (reshape(grad, n.shapes[0]) if n.attrs["axis"] is None else grad,)


def _cumprod_jvp(n, ts):
    if ts[0] is None:
        return None
    x, out, axis = _cumprod_axis(n)
    t = reshape(ts[0], (-1,)) if n.attrs["axis"] is None else ts[0]
    if not _any_zero(x):
        return out * cumsum(t / x, axis)
    zero, first, second, safe, f1, f2 = _cumprod_zeros(x, axis)
    return (
        out * cumsum(where(zero, 0.0, t / safe), axis)
        + f1 * cumsum(first * t, axis)
        + f2 * cumsum(second * t, axis)
    )


_running("cumprod", "CumprodBackward0", _cumprod_vjp, _cumprod_jvp)


# ---- roll(x, shift, axis=None): NumPy's roll; without an axis over the flattened array ----
# A list of axes rolls each by ``shift`` (NumPy's roll with one shift and several axes).


def roll(x, shift, axis=None):
    return call("roll", x, shift=shift, axis=axis)


def _roll_along(a, shift, ax):
    size = a.shape[ax]
    # the shift taken modulo the length here, in Python: any int64 shift (and its negation,
    # which the vjp uses) is fine
    return a if size == 0 else xp().roll(a, shift % size, axis=ax)


def _roll_forward(a, shift, axis=None):
    axes = axes_of(axis, a.ndim, "roll")
    if axes is None:
        return _roll_along(a.reshape(-1), shift, 0).reshape(a.shape)
    for ax in axes if isinstance(axes, tuple) else (axes,):
        a = _roll_along(a, shift, ax)
    return a


register(
    copying(
        "roll",
        "RollBackward0",
        _roll_forward,
        lambda n, g: (roll(g, -n.attrs["shift"], n.attrs["axis"]),),
        lambda n, ts: None if ts[0] is None else roll(ts[0], n.attrs["shift"], n.attrs["axis"]),
        printing=function("roll", latex="\\operatorname{roll}"),
        params=(Param("shift", "int"), Param("axis", "axes", None)),
        batching=("axes",),
        code=code(_roll_code),
    )
)


# ---- sort(x, axis=-1): ascending along an axis, NaN last (NumPy's) ---------------------------
# Ties keep their order (NumPy's kind="stable"), and the gradient follows that permutation:
# element i of the result takes its gradient back to the element it came from.


def _sort_index(a, axis: int):
    """The index that sorts the array ``a`` along ``axis`` (stable, NaN last), and the one that
    undoes it, each a tuple of integer arrays for getitem."""
    xps = xp()
    order = xps.argsort(a, axis=axis, kind="stable")
    back = xps.argsort(order, axis=axis, kind="stable")
    mesh = [
        xps.arange(size).reshape(tuple(size if d == e else 1 for e in range(a.ndim)))
        for d, size in enumerate(a.shape)
    ]

    def index(along):
        return tuple(along if d == axis else m for d, m in enumerate(mesh))

    return index(order), index(back)


def _sort_forward(a, axis=-1):
    ax = axis_of(axis, a.ndim, "sort")
    return a[_sort_index(a, ax)[0]]


def _sort_node_index(n):
    x = n.inputs[0]
    return _sort_index(x.data, axis_of(n.attrs["axis"], x.data.ndim, "sort"))


register(
    Op(
        "sort",
        "SortBackward0",
        _sort_forward,
        # a permutation's adjoint is its inverse: gather g by the inverse permutation
        lambda n, g: (call("getitem", g, index=_sort_node_index(n)[1]),),
        lambda n, ts: (
            None if ts[0] is None else call("getitem", ts[0], index=_sort_node_index(n)[0])
        ),
        kind="shape",
        printing=function("sort", latex="\\operatorname{sort}"),
        params=(Param("axis", "axis", -1),),
        batching=("axes",),
        code=Code(
            refused="sort's gradient follows the permutation that sorts the values at each point "
            "(its rule reads the values): no one formula of the table's ops for every point"
        ),
        fiber="whole",  # which element lands where depends on the values
    )
)


# ---- repeat(x, repeats, axis=None): each element `repeats` times in a row (NumPy's) -------
# Without an axis over the flattened array.  The result is `repeats` times the input: its size
# is checked against the memory limit before it is made.


def repeat(x, repeats, axis=None):
    return call("repeat", x, repeats=repeats, axis=axis)


def _count(value: int, what: str) -> int:
    if value < 0:
        raise ValueError(f"{what} must be 0 or more, got {value}")
    return value


def _repeat_size(shapes, attrs) -> int:
    return math.prod(shapes[0]) * max(attrs["repeats"], 0)


def _repeat_forward(a, repeats, axis=None):
    _count(repeats, "repeats of repeat()")
    ax = None if axis is None else axis_of(axis, a.ndim, "repeat")
    limits.check(a.size * repeats, a.dtype.itemsize, "repeat's result")
    return xp().repeat(a, repeats, axis=ax)


def _repeat_vjp(n, g):
    shape, r, axis = n.shapes[0], n.attrs["repeats"], n.attrs["axis"]
    if axis is None:  # g is flat: one row of r copies per element
        return (reshape(_sum(reshape(g, (math.prod(shape), r)), 1), shape),)
    ax = axis_of(axis, len(shape), "repeat")
    split = shape[:ax] + (shape[ax], r) + shape[ax + 1 :]
    return (_sum(reshape(g, split), ax + 1),)


register(
    copying(
        "repeat",
        "ViewBackward0",  # what torch.repeat_interleave records (a view of an expand)
        _repeat_forward,
        _repeat_vjp,
        lambda n, ts: None if ts[0] is None else repeat(ts[0], **n.attrs),
        printing=function("repeat", latex="\\operatorname{repeat}"),
        params=(Param("repeats", "count"), Param("axis", "axis", None)),
        size=_repeat_size,
        batching=("axes",),
        code=code(
            "{xp}.repeat({0}, {repeats}, axis={axis})",
            torch="torch.repeat_interleave({0}, {repeats}, dim={axis})",
        ),
    )
)


# ---- tile(x, reps): NumPy's tile; reps a count (along the last axis) or a list of counts ----
# A list repeats along the last len(reps) axes: x is promoted to that many dimensions with
# leading 1s, or reps is padded with leading 1s (NumPy's and torch.tile's rule).  A number
# becomes a vector of `reps` copies.


def tile(x, reps):
    return call("tile", x, reps=reps)


def _tile_layout(shape, reps) -> tuple:
    """The input's shape and the counts, both padded with leading 1s to the result's rank."""
    counts = reps if isinstance(reps, tuple) else (reps,)
    ndim = max(len(shape), len(counts))
    return (1,) * (ndim - len(shape)) + tuple(shape), (1,) * (ndim - len(counts)) + counts


def _tile_size(shapes, attrs) -> int:
    shape, counts = _tile_layout(shapes[0], attrs["reps"])
    return math.prod(shape) * math.prod(max(c, 0) for c in counts)


def _tile_forward(a, reps):
    for c in reps if isinstance(reps, tuple) else (reps,):
        _count(c, "reps of tile()")
    limits.check(_tile_size((a.shape,), {"reps": reps}), a.dtype.itemsize, "tile's result")
    return xp().tile(a, reps)


def _tile_vjp(n, g):
    # g holds the copies: split each axis into (count, length) and add the copies up
    shape, counts = _tile_layout(n.shapes[0], n.attrs["reps"])
    split = tuple(d for pair in zip(counts, shape) for d in pair)
    summed = tuple(2 * i for i, c in enumerate(counts) if c != 1)
    copies = reshape(g, split)
    if summed:
        copies = _sum(copies, summed[0] if len(summed) == 1 else summed)
    return (reshape(copies, n.shapes[0]),)


def _tile_code(args, node, target):
    reps = node.attrs["reps"]
    if target == "torch":
        return f"torch.tile({args[0]}, {reps if isinstance(reps, tuple) else (reps,)!r})"
    return f"{{xp}}.tile({args[0]}, {reps!r})"


def _tile_rank(attrs) -> int:
    """The per-row rank tile's batching needs: the counts act on that many trailing axes, so
    a leading batch axis passes through."""
    reps = attrs["reps"]
    return max(len(reps), 1) if isinstance(reps, tuple) else 1


register(
    copying(
        "tile",
        "RepeatBackward0",  # torch.tile records Tensor.repeat's node
        _tile_forward,
        _tile_vjp,
        lambda n, ts: None if ts[0] is None else tile(ts[0], n.attrs["reps"]),
        printing=function("tile", latex="\\operatorname{tile}"),
        params=(Param("reps", "counts"),),
        size=_tile_size,
        code=code(_tile_code),
        # it works on the trailing axes alone: a leading batch axis passes through
        batching=("trailing", _tile_rank),
    )
)


# ---- stack([a, b, ...], axis=0): join arrays of one shape along a new axis (NumPy's) -------
# The array literal [a, b] is the op "stack" (a new first axis, numbers repeated to the
# arrays' shape); this is the function of the language, its key stack_axis.


def _stack_axis_forward(*arrays, axis=0):
    shapes = sorted({a.shape for a in arrays})
    if len(shapes) > 1:
        raise ValueError("stack() joins arrays of one shape")
    ndim = arrays[0].ndim
    if not -ndim - 1 <= axis <= ndim:
        raise ValueError(
            f"axis {axis} of stack() is out of range: arrays of {ndim} dimension(s) "
            f"stack along an axis from {-ndim - 1} to {ndim}"
        )
    return xp().stack(arrays, axis=axis)


def _stack_axis_vjp(n, g):
    axis = n.attrs["axis"]
    ax = axis + len(n.shapes[0]) + 1 if axis < 0 else axis
    return tuple(
        call("getitem", g, index=(slice(None),) * ax + (i,)) if need else None
        for i, need in enumerate(n.needs)
    )


register(
    _Spelled(
        "stack_axis",
        "StackBackward0",
        _stack_axis_forward,
        _stack_axis_vjp,
        _join_jvp("stack_axis"),
        arity=None,
        saves=False,
        kind="shape",
        printing=function("stack", latex="\\operatorname{stack}"),
        params=(Param("axis", "axis", 0),),
        batching=("axes",),
        code=_join_code("stack", "stack"),
        on_complex="rules",
        copies=True,
    )
)


# ---- split(x, indices_or_sections, axis=0): numpy.split, one of its arrays ------------------
#
# split(x, 3) cuts axis 0 into 3 equal sections (a length 3 does not divide is an error, as
# numpy.split: array_split's unequal sections are not wanted); split(x, [2, 5]) cuts before
# indices 2 and 5 (x[:2], x[2:5], x[5:], as slices: out-of-range indices give empty parts).
# Its value is several arrays: the language indexes them (split(x, 3)[1]) or unpacks them
# (a, b, c = split(x, 3)).  Each array is one node, of this op with part=k (how it prints:
# split(x, 3, part=1)), or, where the indices and a nonnegative axis say where it lies, the
# slice itself (x[:, 2:5]): the parser makes them.  vjp: the gradient in its place, zeros
# elsewhere (scatter); jvp: the same part of the tangent.


def split_count(indices_or_sections) -> int:
    """How many arrays split() gives."""
    if isinstance(indices_or_sections, tuple):
        return len(indices_or_sections) + 1
    return int(indices_or_sections)


def _split_index(shape, indices_or_sections, axis, part) -> tuple:
    """The index of part ``part`` of split(x, indices_or_sections, axis) for x of ``shape``."""
    if part is None:
        raise ValueError("split() gives several arrays: take one, split(x, 2)[0]")
    if len(shape) == 0:
        raise ValueError("split() cuts an array along an axis; a number has none")
    ax = axis_of(axis, len(shape), "split")
    count = split_count(indices_or_sections)
    if not 0 <= part < count:
        raise ValueError(f"split() gives {count} arrays, so there is no part {part}")
    if isinstance(indices_or_sections, tuple):
        bounds = [None, *indices_or_sections, None]
        cut = slice(bounds[part], bounds[part + 1])
    else:
        length = shape[ax]
        if length % count:
            raise ValueError(
                f"split(x, {count}): axis {axis} has length {length}, which {count} equal "
                f"sections do not divide (numpy.split; cut it at indices instead, "
                f"split(x, [i, j]))"
            )
        size = length // count
        cut = slice(part * size, (part + 1) * size)
    return (slice(None),) * ax + (cut,)


def _split_forward(a, indices_or_sections, axis=0, part=None):
    return a[_split_index(a.shape, indices_or_sections, axis, part)]


def _split_vjp(n, g):
    a = n.attrs
    index = _split_index(n.shapes[0], a["indices_or_sections"], a["axis"], a["part"])
    return (call("scatter", g, index=index, shape=tuple(n.shapes[0])),)


register(
    copying(
        "split",
        "SplitBackward0",
        _split_forward,
        _split_vjp,
        lambda n, ts: None if ts[0] is None else call("split", ts[0], **n.attrs),
        printing=function("split", latex="\\operatorname{split}"),
        params=(
            Param("indices_or_sections", "sections"),
            Param("axis", "axis", 0),
            Param("part", "part", None),
        ),
        batching=("axes",),
        code=code(_split_code),
    )
)
