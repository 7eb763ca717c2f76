"""Shape ops: broadcast_to, sum_to, reshape, transpose, mT, astype, getitem, scatter, stack.

They are linear: each jvp is the op applied to the tangent.
"""

from __future__ import annotations

import math

from .. import backend
from .rules import _xp, broadcast_to, call, reshape, sum_to, zeros_like
from .table import Op, Param, Printing, code, copying, function, register

# ---------------------------------------------------------------------------
# Shape ops (linear: the jvp is the op applied to the tangent)
# ---------------------------------------------------------------------------


def _broadcast_to_forward(a, shape):
    return _xp().broadcast_to(a, shape)


def _summed_axes(have, shape) -> tuple:
    """The axes of an array of shape ``have`` that summing it to ``shape`` adds up."""
    lead = len(have) - len(shape)
    return tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and have[i + lead] != 1
    )


def _sum_to_forward(a, shape):
    axes = _summed_axes(a.shape, shape)
    r = a.sum(axis=axes, keepdims=True) if axes else a
    return r.reshape(shape)


def _sum_to_code(args, node, target):
    axes = _summed_axes(node.args[0].value.shape, node.attrs["shape"])
    shape = node.attrs["shape"]
    if not axes:  # torch.sum over dim=() would sum every axis
        return f"{args[0]}.reshape({shape})"
    if target == "torch":
        return f"torch.sum({args[0]}, dim={axes}, keepdim=True).reshape({shape})"
    return f"{{xp}}.sum({args[0]}, axis={axes}, keepdims=True).reshape({shape})"


_BROADCAST_CODE = code("{xp}.broadcast_to({0}, {shape})")
_SUM_TO_CODE = code(_sum_to_code)


def _broadcast_pair(name, node, forward, itself, adjoint, spelling) -> None:
    """Register broadcast_to or sum_to (internal): each is the other's vjp (``adjoint``, back
    to the input's shape) and, being linear, its own jvp (``itself``, on the tangent)."""
    register(
        Op(
            name,
            node,
            forward,
            lambda n, g: (adjoint(g, n.shapes[0]),),
            lambda n, ts: None if ts[0] is None else itself(ts[0], n.attrs["shape"]),
            saves=False,
            kind="shape",
            internal=True,
            code=spelling,
            on_complex="rules",
            copies=name == "broadcast_to",  # sum_to adds
            linear=True,
        )
    )


_broadcast_pair(
    "broadcast_to", "ExpandBackward0", _broadcast_to_forward, broadcast_to, sum_to, _BROADCAST_CODE
)
_broadcast_pair("sum_to", "SumToSizeBackward0", _sum_to_forward, sum_to, broadcast_to, _SUM_TO_CODE)
register(
    copying(
        "reshape",
        "ViewBackward0",
        lambda a, shape: a.reshape(shape),
        lambda n, g: (reshape(g, n.shapes[0]),),
        lambda n, ts: None if ts[0] is None else reshape(ts[0], n.attrs["shape"]),
        printing=function("reshape", latex="\\operatorname{reshape}", attr_args=("shape",)),
        code=code("{0}.reshape({shape})"),
        spreads_nonfinite=(0,),
    )
)


def axis_of(axis: int, ndim: int, name: str, have: str | None = None) -> int:
    """``axis`` of an ndim-dimensional argument of ``name()``, from 0; out of range is a
    ValueError in the tool's words (the engine reports it as a shape error), saying what the
    argument has: ``have``, by default "an array of n dimension(s)"."""
    if not -ndim <= axis < ndim:
        if have is None:
            shown = "a number, which has no axes" if ndim == 0 else f"{ndim} dimension(s)"
            have = f"an array of {shown}"
        raise ValueError(f"axis {axis} of {name}() is out of range for {have}")
    return axis + ndim if axis < 0 else axis


def transpose_axes(axes, ndim: int):
    """transpose's ``axes`` for an ndim-dimensional array: None (every axis reversed, NumPy's
    a.T) or a permutation of the axes, each from 0 (NumPy's and torch.permute's check)."""
    if axes is None:
        return None
    given = axes if isinstance(axes, tuple) else (axes,)
    if len(given) != ndim:
        raise ValueError(
            f"transpose() needs one axis per dimension: {len(given)} given for an array of "
            f"{ndim} dimension(s)"
        )
    out = [axis_of(a, ndim, "transpose", f"{ndim} dimension(s)") for a in given]
    if len(set(out)) != ndim:
        raise ValueError(f"the axes of transpose() repeat an axis: {list(given)}")
    return tuple(out)


def _transpose_forward(a, axes=None):
    return _xp().transpose(a, transpose_axes(axes, a.ndim))


def _transpose_inverse(n):
    """The axes that undo node ``n``'s transpose (None: reversing them again)."""
    axes = transpose_axes(n.attrs.get("axes"), len(n.shapes[0]))
    if axes is None:
        return None
    back = [0] * len(axes)
    for i, a in enumerate(axes):
        back[a] = i
    return tuple(back)


def _transpose_code(args, node, target):
    # NumPy's a.T reverses every axis (torch's .T is for matrices only)
    ndim = node.args[0].value.ndim
    axes = transpose_axes(node.attrs.get("axes"), ndim)
    if target == "torch":
        order = tuple(reversed(range(ndim))) if axes is None else axes
        return f"torch.permute({args[0]}, {order!r})"
    return f"{{xp}}.transpose({args[0]}, {axes!r})"


register(
    copying(
        "transpose",
        "PermuteBackward0",
        _transpose_forward,
        lambda n, g: (call("transpose", g, axes=_transpose_inverse(n)),),
        lambda n, ts: None if ts[0] is None else call("transpose", ts[0], axes=n.attrs.get("axes")),
        printing=function("transpose", latex="\\operatorname{transpose}"),
        params=(Param("axes", "axes", None),),
        spreads_nonfinite=(0,),
        code=code(_transpose_code),
    )
)
register(
    copying(
        "mT",
        "TransposeBackward0",
        lambda a: _xp().swapaxes(a, -1, -2),
        lambda n, g: (call("mT", g),),
        lambda n, ts: None if ts[0] is None else call("mT", ts[0]),
        internal=True,
        code=code("{xp}.swapaxes({0}, -1, -2)"),
    )
)


def _astype_forward(a, dtype, source):
    # complex to real keeps the real part, as PyTorch's gradient of a real input of a complex op
    return (a.real if a.dtype.kind == "c" and dtype[0] != "c" else a).astype(dtype)


def astype(t, dtype: str):
    """``t`` as an array of ``dtype`` (a NumPy dtype's name), recorded (ToCopyBackward0):
    the engine casts each gradient to its tensor's dtype with it, as PyTorch does."""
    return call("astype", t, dtype=dtype, source=t.dtype.name)


# internal: the language has one dtype per program; Tensor.to and the engine's gradient of a
# leaf of another dtype than its graph's make it (its vjp casts back, its jvp forward)
register(
    copying(
        "astype",
        "ToCopyBackward0",
        _astype_forward,
        lambda n, g: (astype(g, n.attrs["source"]),),
        lambda n, ts: None if ts[0] is None else astype(ts[0], n.attrs["dtype"]),
        internal=True,
        code=None,  # no program of the language has it: codegen writes one dtype throughout
    )
)


def _getitem_node(n):
    index = n.attrs["index"]
    if all(isinstance(i, int) for i in index):
        return "SelectBackward0"
    if all(isinstance(i, slice) for i in index):
        return "SliceBackward0"
    return "IndexBackward0"


def _basic_index(index) -> bool:
    """An index of ints, slices, None and Ellipsis only: it selects each element at most once."""
    return all(i is None or i is Ellipsis or type(i) in (int, slice) for i in index)


def split_advanced(index) -> bool:
    """Whether an index with integer arrays (``x[[0, 2]]``) has its advanced parts (the arrays
    and, among them, plain ints) apart, separated by a slice, None or Ellipsis.  NumPy then
    puts the selected axes first, so a batch axis put in front of the index does not stay
    in front: batched rules fall back to one row (or direction) at a time."""
    if not any(type(i) is tuple for i in index):
        return False
    where = [k for k, i in enumerate(index) if type(i) in (int, tuple)]
    return where[-1] - where[0] + 1 != len(where)


def _getitem_size(shapes, attrs) -> int:
    """How many numbers ``x[index]`` holds: integer arrays can select more than x has."""
    index = attrs["index"]
    if not any(type(i) is tuple for i in index):
        return 0  # a view of x: never larger
    import numpy as host

    arrays = [host.shape(i) for i in index if type(i) is tuple]
    try:
        count = math.prod(host.broadcast_shapes(*arrays))
    except ValueError:
        return 0  # the forward reports the shapes
    shape = shapes[0]
    used = sum(1 for i in index if i is not None and i is not Ellipsis)
    if used > len(shape):
        return 0  # too many indices: the forward says so
    fill = len(shape) - used  # the axes an Ellipsis stands for
    pos = 0
    for i in index:
        if i is None:
            continue
        if i is Ellipsis:
            count *= math.prod(shape[pos : pos + fill])
            pos += fill
            fill = 0
            continue
        if type(i) is slice:
            count *= len(range(*i.indices(shape[pos])))
        pos += 1
    return count * math.prod(shape[pos:])


def _index_part(item, target: str) -> str:
    """One element of an index as a Python expression of the target (an integer array as
    the target's array of indices)."""
    if item is None:
        return "None"
    if item is Ellipsis:
        return "Ellipsis"
    if type(item) is slice:
        return f"slice({item.start!r}, {item.stop!r}, {item.step!r})"
    if isinstance(item, (tuple, list)) or hasattr(item, "shape"):
        listed = repr(backend.host.asarray(item, dtype=backend.host.intp).tolist())
        if target == "torch":
            return f"torch.tensor({listed}, dtype=torch.long)"
        # int32 in JAX: its int64 needs x64 (an array's indices fit either way)
        dtype = "jnp.int32" if target == "jax" else "np.intp"
        return f"{{xp}}.asarray({listed}, dtype={dtype})"
    return repr(int(item))


def index_code(index, target: str) -> str:
    """``index`` (getitem's attribute: ints, slices, None, Ellipsis and integer arrays as
    nested tuples) as a Python tuple expression of the target, for ``x[...]``."""
    return "(" + "".join(_index_part(i, target) + ", " for i in index) + ")"


def _positions(shape, index):
    """The flat position in an array of ``shape`` of each element ``x[index]`` selects."""
    host = backend.host
    return host.arange(math.prod(shape), dtype=host.intp).reshape(shape)[index]


def _torch_native(index) -> bool:
    """Whether torch indexes as NumPy does with ``index``: it has no negative steps."""
    return all(type(i) is not slice or i.step is None or i.step > 0 for i in index)


def getitem_code(args, node, target, index=None):
    """``x[index]``; in torch, an index with a negative step as a gather of flat positions."""
    index = node.attrs["index"] if index is None else index
    if target == "torch" and not _torch_native(index):
        listed = _positions(node.args[0].value.shape, index).tolist()
        return f"{args[0]}.reshape(-1)[torch.tensor({listed}, dtype=torch.long)]"
    return f"{args[0]}[{index_code(index, target)}]"


def _scatter_code(args, node, target):
    """NumPy's ``add.at`` into zeros, as the forward (the sum of 0 and g where nothing repeats);
    JAX's ``.at[].add``; torch's ``index_add_`` of flat positions (or a plain assignment of
    g + 0 into zeros where the index selects each element once)."""
    index, shape, g = node.attrs["index"], tuple(node.attrs["shape"]), args[0]
    if target == "numpy":
        zeros = f"np.zeros({shape!r}, dtype={g}.dtype)"
        return f"(lambda o: (np.add.at(o, {index_code(index, target)}, {g}), o)[1])({zeros})"
    if target == "jax":
        return f"jnp.zeros({shape!r}, dtype={g}.dtype).at[{index_code(index, target)}].add({g})"
    zeros = f"torch.zeros({{size}}, dtype={g}.dtype, device={g}.device)"
    if _basic_index(index) and _torch_native(index):
        fill = f"(lambda o: (o.__setitem__({index_code(index, target)}, {g} + 0.0), o)[1])"
        return fill + f"({zeros.format(size=repr(shape))})"
    listed = _positions(shape, index).reshape(-1).tolist()
    flat = f"torch.tensor({listed}, dtype=torch.long)"
    size = math.prod(shape)
    return f"{zeros.format(size=size)}.index_add_(0, {flat}, {g}.reshape(-1)).reshape({shape!r})"


def _scatter_forward(g, index, shape):
    xp = _xp()
    out = xp.zeros(shape, dtype=g.dtype)
    if xp is backend.host and isinstance(index, tuple) and _basic_index(index):
        # No element is selected twice, so adding in place into the view is add.at's
        # 0 + g, element for element, without add.at's per-element indexing; written as
        # g + 0 into the view (the same sum: -0.0 becomes +0.0, a nan stays g's), which
        # writes the fresh zero pages once instead of reading them first.
        view = out[index]
        if isinstance(view, xp.ndarray):
            xp.add(g, out.dtype.type(0), out=view)
            return out
    if backend.device == "gpu" and not hasattr(xp.add, "at"):  # older CuPy
        import cupyx  # noqa: PLC0415 - only on the GPU path

        cupyx.scatter_add(out, index, g)
    else:
        xp.add.at(out, index, g)
    return out


register(
    copying(
        "getitem",
        _getitem_node,
        lambda a, index: a[index],
        lambda n, g: (call("scatter", g, index=n.attrs["index"], shape=n.shapes[0]),),
        lambda n, ts: None if ts[0] is None else call("getitem", ts[0], index=n.attrs["index"]),
        printing=Printing(form="subscript", latex="\\operatorname{getitem}"),
        size=_getitem_size,
        code=code(getitem_code),
    )
)
register(
    Op(
        "scatter",
        "IndexPutBackward0",
        _scatter_forward,
        lambda n, g: (call("getitem", g, index=n.attrs["index"]),),
        lambda n, ts: (
            None
            if ts[0] is None
            else call("scatter", ts[0], index=n.attrs["index"], shape=n.attrs["shape"])
        ),
        saves=False,
        kind="shape",
        internal=True,
        code=code(_scatter_code),
        on_complex="rules",
        linear=True,
    )
)


def _stack_forward(*arrays):
    xp = _xp()
    shapes = {a.shape for a in arrays}
    if len(shapes) > 1:
        # A number among arrays is repeated to their shape ([v, 1] for a vector v); arrays
        # of different shapes are ragged, as in NumPy and PyTorch, not broadcast.
        shape = stack_shape(shapes)
        arrays = [xp.broadcast_to(a, shape) for a in arrays]
    return xp.stack(arrays)


def stack_shape(shapes) -> tuple:
    """The common shape of an array literal's elements: numbers take the arrays' shape;
    arrays of different shapes raise ValueError (the literal is ragged)."""
    arrays = {tuple(s) for s in shapes if len(s)}
    if len(arrays) > 1:
        listed = ", ".join(str(s) for s in sorted(arrays))
        raise ValueError(f"the elements of an array literal must have one shape, not {listed}")
    return arrays.pop() if arrays else ()


def _stack_size(shapes, attrs) -> int:
    try:
        return len(shapes) * math.prod(stack_shape(shapes))
    except ValueError:  # ragged: the forward says so
        return 0


def _stack_vjp(n, g):
    return tuple(
        sum_to(call("getitem", g, index=(i,)), n.shapes[i]) if need else None
        for i, need in enumerate(n.needs)
    )


def _stack_jvp(n, ts):
    if all(t is None for t in ts):
        return None
    parts = [zeros_like(x) if t is None else t for x, t in zip(n.inputs, ts)]
    shape = n.out.shape[1:]
    return call("stack", *[broadcast_to(p, shape) for p in parts])


def join_parts(args, node, target, shape=None) -> str:
    """The arguments of a join (stack, concatenate) as a list: a number written inline made an
    array of the code's dtype (NumPy would join it as float64), and, where ``shape`` is given,
    each argument of another shape broadcast to it (the array literal's numbers)."""
    parts = []
    for a, n in zip(args, node.args):
        if n.op == "const" and target != "torch":
            a = f"{{xp}}.asarray({a}, dtype={{dtype}})"
        if shape is not None and n.value.shape != shape:
            a = f"{{xp}}.broadcast_to({a}, {shape!r})"
        parts.append(a)
    return "[" + ", ".join(parts) + "]"


def _stack_code(args, node, target):
    """The array literal: its numbers repeated to the arrays' shape, as the forward does."""
    return f"{{xp}}.stack({join_parts(args, node, target, node.value.shape[1:])})"


register(
    copying(
        "stack",
        "StackBackward0",
        _stack_forward,
        _stack_vjp,
        _stack_jvp,
        arity=None,
        printing=Printing(form="array", latex="\\operatorname{stack}"),
        size=_stack_size,
        code=code(_stack_code),
    )
)
