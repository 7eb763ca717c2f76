"""Batched ("vmapped") evaluation: one expression graph over many points at once.

Every input variable gets a leading *batch axis* of size B (one entry per
point, or "row"); constants do not.  Each op has a batching rule that keeps
the per-row semantics exact: the result for row i is what evaluating the
expression at row i alone gives (:func:`autograd_cli.core.api.eval_of` and
``grad_of``), including the domain warnings.

The rules, for an op whose arguments have per-row shapes s_1, s_2, ...:

* elementwise (``+ * where`` ...): per-row shapes align to the right *after*
  the batch axis, so a batched operand with fewer per-row dims than another
  operand gets singleton axes inserted after its batch axis (and its gradient is
  summed over them, as one row's un-broadcast sums over its leading axes);
* reductions shift their axes by one (``axis=None`` reduces every per-row
  axis, never the batch axis; negative axes are unchanged);
* ``transpose`` reverses only the per-row axes; ``reshape`` prepends B;
  indexing prepends a full slice; ``[a, b]`` stacks along axis 1;
* ``@`` and ``dot`` promote 1-D per-row operands explicitly (so a batch of
  vectors is never mistaken for a matrix) and use NumPy's stacked matmul,
  which runs the same kernel per row as the one-row product does.

The rules are written with the engine's own ops and their own vjp rules (wrapped,
where operands need padding or promoting, in private ops defined here, so that
the batched graph has one node per node of a row's graph: backward sums
cotangents in an order the graph's shape decides), so backward works unchanged:
rows are independent, so the gradient of the batch *sum* of a scalar-per-row
output with respect to a batched leaf is, row by row, each row's own gradient.

Anything without a rule (an op added to the table later, an axis out of range
for the per-row shape, ...) raises :class:`Unbatchable` and the caller
evaluates those rows one by one.  Errors that depend only on the names and
shapes shared by the whole batch (an unknown variable, a non-scalar output
for ``grad``) raise :class:`GroupError`: every row gets that same error.

>>> import numpy as np
>>> from autograd_cli.grammar import parse
>>> r = evaluate_batch(parse("sum(x**2)"), {"x": np.array([[1., 2.], [3., 4.]])}, 2, grad=True)
>>> r.value.tolist(), r.grad["x"].tolist()
([5.0, 25.0], [[2.0, 4.0], [6.0, 8.0]])
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from . import backend
from .autograd import grad as _grad
from .errors import (
    AutogradCliError,
    EvaluationError,
    InputError,
    MissingValueError,
)
from .interpret import Interpretation, interpret
from .ops import Op, RuleContext, chain, split_advanced, stack_shape, sum_to
from .ops.linalg import batch_label
from .ops.rules import LEAVES_COPIED_AT_EXIT
from .ops.shape import transpose_axes
from .program import (
    Expr,
    Program,
    check_values,
    non_scalar_error,
    resolve_wrt,
    topological,
)
from .recording import _describe_nonfinite
from .tensor import OPS, Tensor, apply, enable_grad, no_grad

__all__ = ["BatchResult", "GroupError", "Unbatchable", "evaluate_batch", "BATCHABLE_OPS"]


class Unbatchable(Exception):
    """This graph (or this op with these shapes) has no exact batching rule: evaluate row by row."""


class GroupError(Exception):
    """An error every row of the batch gets, identically (it depends only on names and shapes)."""

    def __init__(self, error: AutogradCliError):
        super().__init__(str(error))
        self.error = error


@dataclass
class BatchResult:
    """Per-row results as host arrays with a leading batch axis of size ``size``."""

    size: int
    value: object  # (B,) + per-row output shape
    grad: dict | None = None  # name -> (B,) + per-row shape of that variable
    warnings: dict | None = None  # row index -> list of warning strings (rows with none absent)

    def row_warnings(self, i: int) -> list:
        if not self.warnings:
            return []
        return self.warnings.get(i, [])


# ---------------------------------------------------------------------------
# Two private shape ops (not in the op table): permute and stack-along-axis-1.
# ---------------------------------------------------------------------------


def _inverse(axes):
    inv = [0] * len(axes)
    for i, a in enumerate(axes):
        inv[a] = i
    return tuple(inv)


def _permute_vjp(n, g):
    return (apply(_PERMUTE, g, axes=_inverse(n.attrs["axes"])),)


def _permute_jvp(n, ts):
    return None if ts[0] is None else apply(_PERMUTE, ts[0], axes=n.attrs["axes"])


_PERMUTE = Op(
    "batch_permute",
    "PermuteBackward0",
    lambda a, axes: backend.xp.transpose(a, axes),
    _permute_vjp,
    _permute_jvp,
    saves=False,
    kind="shape",
)


# One node per op, as one row has: the batched graph must have the same shape as the
# row's graph, node for node, because backward (Kahn's algorithm, a LIFO of ready nodes)
# sums the cotangents reaching a tensor in an order the graph's shape decides, and a sum
# of three or more floats depends on that order.  An extra node (a reshape padding an
# operand) or a missing one (the transpose of a vector) changed the last bit of gradients
# such as d/dx of ``sum(x * sin(u * x)) + x * y``.  So padding, promoting vectors and
# broadcasting happen inside one private op (forward and vjp), never as nodes of their own.


def _pad_array(a, k: int):
    """(B,) + s -> (B,) + (1,)*k + s: per-row shapes align to the right after the batch axis."""
    return a if k == 0 else a.reshape(_padded_shape(a.shape, k))


def _padded_shape(shape: tuple, k: int) -> tuple:
    """:func:`_pad_array`'s shape: what the size rules of the padded ops read."""
    return shape if k == 0 else shape[:1] + (1,) * k + shape[1:]


def _unpad(g, k: int):
    # One row's un-broadcast (``sum_to``) sums over every leading axis an operand lacks,
    # those of size 1 too, and a NumPy sum starts from +0.0 (a -0.0 cotangent comes back
    # as 0.0): so the padded axes are summed over, not reshaped away.
    if g is None or k == 0:
        return g
    return apply(OPS["sum"], g, axis=tuple(range(1, k + 1)), keepdims=False)


def _view(t: Tensor, data) -> Tensor:
    v = Tensor._wrap(data)
    v.requires_grad = t.requires_grad
    return v


_FUSED: dict = {}


def _fused(key, make) -> Op:
    op = _FUSED.get(key)
    if op is None:
        if len(_FUSED) >= 4096:
            _FUSED.clear()
        op = _FUSED[key] = make()
    return op


def _padded_op(op: Op, pads: tuple) -> Op:
    """``op`` on operands that first get pads[i] singleton axes after the batch axis."""

    def make():
        def forward(*arrays, **attrs):
            return op.forward(*[_pad_array(a, k) for a, k in zip(arrays, pads)], **attrs)

        def vjp(n, g):
            inputs = tuple(_view(t, _pad_array(t.data, k)) for t, k in zip(n.inputs, pads))
            grads = op.vjp(RuleContext(op, inputs, n.out, n.attrs, n.needs), g)
            return tuple(_unpad(gi, k) for gi, k in zip(grads, pads))

        def size(shapes, attrs):  # op's size rule on the padded shapes: the memory limit
            return op.size([_padded_shape(s, k) for s, k in zip(shapes, pads)], attrs)

        return Op(
            f"batch_{op.name}",
            op.node,
            forward,
            vjp if op.vjp is not None else None,
            None,
            arity=op.arity,
            saves=True,
            differentiable=op.differentiable,
            kind=op.kind,
            size=size if op.size is not None else None,
        )

    return _fused(("pad", op, pads), make)  # the Op itself: a table entry replaced is new


def _stack_op(batched: tuple, pads: tuple, shape: tuple) -> Op:
    """``[a, b, ...]`` along axis 1: each batched operand padded, then broadcast to
    (B,) + ``shape``; constants broadcast as they are (they need no gradient)."""

    def parts(arrays):
        size = next(a.shape[0] for a, b in zip(arrays, batched) if b)
        xp = backend.xp
        return [
            xp.broadcast_to(_pad_array(a, k) if b else a, (size,) + shape)
            for a, b, k in zip(arrays, batched, pads)
        ]

    def forward(*arrays):
        return backend.xp.stack(parts(arrays), axis=1)

    def vjp(n, g):
        grads = []
        for i, (t, b, k) in enumerate(zip(n.inputs, batched, pads)):
            if not n.needs[i] or not b:
                grads.append(None)
                continue
            gi = apply(OPS["getitem"], g, index=(slice(None), i))
            grads.append(_unpad(sum_to(gi, (t.shape[0],) + (1,) * k + tuple(t.shape[1:])), k))
        return tuple(grads)

    def size(shapes, attrs):  # (B,) + (len(arrays),) + shape: the memory limit
        rows = next(s[0] for s, b in zip(shapes, batched) if b)
        return rows * len(shapes) * math.prod(shape)

    return _fused(
        ("stack", batched, pads, shape),
        lambda: Op(
            "batch_stack",
            "StackBackward0",
            forward,
            vjp,
            None,
            arity=None,
            saves=True,
            kind="shape",
            size=size,
        ),
    )


def _matmul_op(ra: int, rb: int, a_batched: bool, b_batched: bool) -> Op:
    """``a @ b`` for per-row ranks ra, rb >= 1: a per-row vector a is promoted to (1, k), b
    to (k, 1) (so a batch of vectors is never taken for a matrix), batched operands are
    padded to the same per-row rank for NumPy's stacked matmul, the promoted axes are
    dropped from the result.  The vjp is matmul's own, on the promoted operands."""
    matmul = OPS["matmul"]
    ash = (1,) * (ra == 1) + (None,) * ra  # per-row shapes after promotion: ranks only
    bsh = (None,) * rb + (1,) * (rb == 1)
    rank = max(len(ash), len(bsh))
    pa = rank - len(ash) if a_batched else 0
    pb = rank - len(bsh) if b_batched else 0

    def operands(a, b):
        if ra == 1:
            a = a.reshape(a.shape[:-1] + (1, a.shape[-1]))
        if rb == 1:
            b = b.reshape(b.shape + (1,))
        return _pad_array(a, pa), _pad_array(b, pb)

    def result_shape(shape):
        if ra == 1 and rb == 1:
            return shape[:-2]
        if ra == 1:
            return shape[:-2] + shape[-1:]
        if rb == 1:
            return shape[:-1]
        return shape

    def forward(a, b):
        out = matmul.forward(*operands(a, b))
        return out.reshape(result_shape(out.shape))

    def vjp(n, g):
        a, b = n.inputs
        a2, b2 = operands(a.data, b.data)
        a2, b2 = _view(a, a2), _view(b, b2)
        full = backend.host.broadcast_shapes(a2.shape[:-2], b2.shape[:-2]) + (
            a2.shape[-2],
            b2.shape[-1],
        )
        out = Tensor._wrap(n.out.data.reshape(full))
        ga, gb = matmul.vjp(RuleContext(matmul, (a2, b2), out, {}, n.needs), _reshape(g, full))
        ga = None if ga is None else _reshape(_unpad(ga, pa), a.shape)
        gb = None if gb is None else _reshape(_unpad(gb, pb), b.shape)
        return ga, gb

    def size(shapes, attrs):  # matmul's size rule on the promoted, padded operands
        sa, sb = shapes
        sa = sa[:-1] + (1, sa[-1]) if ra == 1 else sa
        sb = sb + (1,) if rb == 1 else sb
        return matmul.size([_padded_shape(sa, pa), _padded_shape(sb, pb)], attrs)

    return _fused(
        ("matmul", matmul, ra, rb, a_batched, b_batched),
        lambda: Op("matmul", matmul.node, forward, vjp, None, arity=2, kind="product", size=size),
    )


def _dot_forward(a, b):
    # The same BLAS dot per row as numpy.dot on two vectors (matmul's vector-vector kernel).
    xp = backend.xp
    return xp.matmul(a[..., None, :], b[..., :, None])[..., 0, 0]


def _dot_vjp(n, g):
    a, b = n.inputs
    g1 = apply(OPS["reshape"], g, shape=tuple(g.shape) + (1,))
    ga = sum_to(chain(g1, b), n.shapes[0]) if n.needs[0] else None
    gb = sum_to(chain(g1, a), n.shapes[1]) if n.needs[1] else None
    return ga, gb


_DOT = Op("dot", "DotBackward0", _dot_forward, _dot_vjp, None, arity=2, kind="product")


# ---------------------------------------------------------------------------
# Batching rules
# ---------------------------------------------------------------------------


@dataclass(eq=False, repr=False, slots=True)
class _V:
    """A value of the batched graph: a tensor, and whether its axis 0 is the batch axis."""

    t: Tensor
    batched: bool

    @property
    def rowshape(self) -> tuple:
        shape = tuple(self.t.shape)
        return shape[1:] if self.batched else shape


def _reshape(t: Tensor, shape) -> Tensor:
    shape = tuple(shape)
    if tuple(t.shape) == shape:
        return t
    return apply(OPS["reshape"], t, shape=shape)


def _pads(args, rank: int) -> tuple:
    """How many singleton axes each operand gets after its batch axis (constants none:
    NumPy aligns them to the right, as one row does)."""
    return tuple(rank - len(a.rowshape) if a.batched else 0 for a in args)


# Which rule batches an op follows from its kind in the op table: an elementwise op (and a
# comparison, and zeros_like) broadcasts over the leading batch axis; a reduction shifts its
# axes past it.  A new op of these kinds batches with no edit here.
ELEMENTWISE = frozenset(
    name for name, op in OPS.items() if op.kind in ("elementwise", "comparison", "constant")
)
REDUCTIONS = frozenset(name for name, op in OPS.items() if op.kind == "reduction")


# Each rule returns (output tensor, the op's actual input tensors, its actual attrs): the
# last two let a kink rule (core.ops, "Conventions at kinks") be asked about the batch;
# None where the rule changed the op itself (its kinks are then checked row by row).


def _elementwise(op, node, args, B):
    rank = max(len(a.rowshape) for a in args)
    pads = _pads(args, rank)
    if not any(pads):
        return apply(OPS[op], *[a.t for a in args], **node.attrs), args, node.attrs
    inputs = [_V(_view(a.t, _pad_array(a.t.data, k)), a.batched) for a, k in zip(args, pads)]
    out = apply(_padded_op(OPS[op], pads), *[a.t for a in args], **node.attrs)
    return out, inputs, node.attrs


def _reduction(op, node, args, B):
    (x,) = args
    r = len(x.rowshape)
    attrs = dict(node.attrs)
    axis = attrs.get("axis")
    if axis is None:
        baxis = tuple(range(1, r + 1))
    else:
        axes = axis if isinstance(axis, tuple) else (axis,)
        for a in axes:
            if not -r <= a < r:
                raise Unbatchable(f"axis {a} out of range for per-row rank {r}")
        shifted = tuple(a + 1 if a >= 0 else a for a in axes)
        baxis = shifted if isinstance(axis, tuple) else shifted[0]
    attrs["axis"] = baxis
    return apply(OPS[op], x.t, **attrs), [x], attrs


def _transpose(op, node, args, B):
    (x,) = args
    r = len(x.rowshape)
    axes = node.attrs.get("axes")
    if axes is not None:  # transpose(x, axes): the batch axis stays in front
        try:
            axes = transpose_axes(axes, r)
        except ValueError:  # the rows' own evaluation says why
            raise Unbatchable("transpose axes") from None
        return apply(_PERMUTE, x.t, axes=(0,) + tuple(a + 1 for a in axes)), None, None
    if r <= 1:  # the transpose of a scalar or a vector is itself, but still a node (above)
        return apply(_PERMUTE, x.t, axes=tuple(range(r + 1))), None, None
    if r == 2:
        return apply(OPS["mT"], x.t), None, None
    return apply(_PERMUTE, x.t, axes=(0,) + tuple(range(r, 0, -1))), None, None


def _mT(op, node, args, B):
    (x,) = args
    if len(x.rowshape) < 2:
        raise Unbatchable("mT needs two per-row dims")
    return apply(OPS["mT"], x.t), None, None


def _resolve_shape(rowshape, shape) -> tuple:
    size = math.prod(rowshape)
    target = [int(s) for s in shape]
    unknown = [i for i, s in enumerate(target) if s == -1]
    if len(unknown) > 1 or any(s < -1 for s in target):
        raise Unbatchable("reshape target")
    if unknown:
        known = math.prod(s for s in target if s != -1)
        if known == 0 or size % known:
            raise Unbatchable("reshape target")
        target[unknown[0]] = size // known
    elif math.prod(target) != size:
        raise Unbatchable("reshape size")
    return tuple(target)


def _reshape_rule(op, node, args, B):
    (x,) = args
    shape = (B,) + _resolve_shape(x.rowshape, node.attrs["shape"])
    return apply(OPS["reshape"], x.t, shape=shape), None, None


def _getitem(op, node, args, B):
    (x,) = args
    index = tuple(node.attrs["index"])
    used = sum(1 for i in index if i is not None and i is not Ellipsis)
    if used > len(x.rowshape) or sum(1 for i in index if i is Ellipsis) > 1:
        raise Unbatchable("too many indices")
    if split_advanced(index):
        raise Unbatchable("integer arrays apart in an index: NumPy moves their axes first")
    return apply(OPS["getitem"], x.t, index=(slice(None),) + index), None, None


def _stack(op, node, args, B):
    try:
        shape = stack_shape([a.rowshape for a in args])
    except ValueError:
        raise Unbatchable("stack shapes") from None
    batched = tuple(a.batched for a in args)
    return (
        apply(_stack_op(batched, _pads(args, len(shape)), shape), *[a.t for a in args]),
        None,
        None,
    )


def _dot(op, node, args, B):
    a, b = args
    if len(a.rowshape) != 1 or len(b.rowshape) != 1 or a.rowshape != b.rowshape:
        raise Unbatchable("dot shapes")
    return apply(_DOT, a.t, b.t), None, None


def _matmul(op, node, args, B):
    a, b = args
    ra, rb = len(a.rowshape), len(b.rowshape)
    if ra == 0 or rb == 0:
        raise Unbatchable("matmul of a scalar")
    return apply(_matmul_op(ra, rb, a.batched, b.batched), a.t, b.t), None, None


def _same_rank(args) -> int:
    """The common per-row rank of operands that are all batched (else Unbatchable)."""
    if not all(a.batched for a in args):
        raise Unbatchable("an operand that is the same for every row")
    ranks = {len(a.rowshape) for a in args}
    if len(ranks) != 1:
        raise Unbatchable("operands of different per-row ranks")
    return ranks.pop()


def _shifted_axes(op, node, args, B):
    """An op whose "axis"/"axes" params say where it works: each moves past the batch axis."""
    r = _same_rank(args)
    attrs = dict(node.attrs)
    for p in OPS[op].params:
        if p.kind not in ("axis", "axes"):
            continue
        axis = attrs[p.name]
        if axis is None:
            raise Unbatchable(f"{op}() without an axis")
        axes = axis if isinstance(axis, tuple) else (axis,)
        if any(not -r <= a < r for a in axes):
            raise Unbatchable(f"axis out of range for per-row rank {r}")
        shifted = tuple(a + 1 if a >= 0 else a for a in axes)
        attrs[p.name] = shifted if isinstance(axis, tuple) else shifted[0]
    return apply(OPS[op], *[a.t for a in args], **attrs), [*args], attrs


def _trailing(op, node, args, B):
    """An op on its operands' last k axes (NumPy's linalg, triu): the batch axis leads."""
    rank = OPS[op].batching[1]
    rank = rank(node.attrs) if callable(rank) else rank  # tile's: as many as its counts
    if _same_rank(args) < rank:
        raise Unbatchable(f"{op}() of rows of rank below {rank}")
    return apply(OPS[op], *[a.t for a in args], **node.attrs), [*args], node.attrs


def _einsum(op, node, args, B):
    """einsum: a batched operand's subscripts and the output's get a leading label of their
    own (a letter the subscripts do not use), unbatched operands (constants) keep theirs."""
    subscripts = node.attrs["subscripts"]
    label = batch_label(subscripts)
    if label is None:
        raise Unbatchable("einsum uses every letter")
    left, out = subscripts.split("->")
    terms = [label + t if a.batched else t for t, a in zip(left.split(","), args)]
    attrs = {"subscripts": ",".join(terms) + "->" + label + out}
    return apply(OPS[op], *[a.t for a in args], **attrs), [*args], attrs


_BY_DECLARATION = {"axes": _shifted_axes, "trailing": _trailing}

# The rules of the shape and product ops, which neither their kind nor a declaration gives:
# this interpretation's own table, keyed by the Op (tests/test_op_table.py's batching check
# names any op of the table without a rule here, a kind that batches or Op.batching).  norm
# takes an ord beside axis and keepdims, so its kind is not "reduction"; it batches as one
# (without an axis: every per-row axis, which with an ord is the row's vector or matrix).
_OWN_RULES = {
    OPS["norm"]: _reduction,
    OPS["einsum"]: _einsum,
    OPS["transpose"]: _transpose,
    OPS["mT"]: _mT,
    OPS["reshape"]: _reshape_rule,
    OPS["getitem"]: _getitem,
    OPS["stack"]: _stack,
    OPS["dot"]: _dot,
    OPS["matmul"]: _matmul,
}


def _rule_of(op):
    """The batching rule of ``op``: its own above, else the one its kind or its
    ``Op.batching`` declaration gives; None: a graph using it is evaluated row by row."""
    if op in _OWN_RULES:
        return _OWN_RULES[op]
    if op.name in REDUCTIONS:
        return _reduction
    if op.batching is not None and op.batching[0] != "rows":
        return _BY_DECLARATION[op.batching[0]]
    return _elementwise if op.name in ELEMENTWISE else None


_RULES = {op: rule for op in OPS.values() if (rule := _rule_of(op)) is not None}

#: The ops with a batching rule; a graph using any other op is evaluated row by row.
BATCHABLE_OPS = frozenset(op.name for op in _RULES)


def unbatchable_ops(program: Program) -> set:
    """The ops of ``program`` without a batching rule (empty: it can be batched)."""
    return {
        n.op
        for n in topological([program.output])
        if n.op not in ("const", "var") and OPS.get(n.op) not in _RULES
    }


# ---------------------------------------------------------------------------
# Per-row domain warnings (the same messages, per row, as core.recording.evaluate)
# ---------------------------------------------------------------------------


def _row_finite(data, batched: bool, B: int):
    """True when every element is finite; else a per-row bool array (batched) or False."""
    xp = backend.xp
    if backend.all_finite(data):
        return True
    if not batched:
        return False
    return backend.to_numpy(xp.isfinite(data.reshape(B, -1)).all(axis=1))


def _add_warnings(warnings: dict, op: str, v: _V, fin, arg_fins, B: int) -> None:
    """Warn in each row where this node is non-finite although all its arguments are finite."""
    np = backend.host
    if fin is True:
        return
    bad = ~fin if isinstance(fin, np.ndarray) else np.ones(B, dtype=bool)
    for f in arg_fins:
        if f is True:
            continue
        if f is False:  # an argument that is the same non-finite value in every row
            return
        bad = bad & f
    rows = np.flatnonzero(bad)
    if rows.size == 0:
        return
    xp = backend.xp
    data = v.t.data
    if v.batched:
        has_nan = backend.to_numpy(xp.isnan(data.reshape(B, -1)).any(axis=1))
        messages = {}
        for flag in (True, False):
            pick = rows[has_nan[rows] == flag]
            if pick.size:
                messages[flag] = (_describe_nonfinite(op, data[int(pick[0])]), pick)
    else:
        messages = {True: (_describe_nonfinite(op, data), rows)}
    for message, pick in messages.values():
        for i in pick.tolist():
            row = warnings.setdefault(i, [])
            if message not in row:
                row.append(message)


# ---------------------------------------------------------------------------
# The batched evaluation
# ---------------------------------------------------------------------------


def evaluate_batch(
    program: Program,
    columns: dict,
    size: int,
    *,
    grad: bool = False,
    wrt=None,
    check_domain: bool = True,
) -> BatchResult:
    """Evaluate ``program`` at ``size`` points at once.

    ``columns`` maps each variable to an array of shape ``(size,) + per-row shape``.
    With ``grad=True`` the gradient w.r.t. ``wrt`` (default: every input) is
    computed too, exactly as :func:`autograd_cli.core.api.grad_of` does per row.

    Raises :class:`GroupError` (every row gets the same error),
    :class:`Unbatchable` or any engine error (evaluate the rows one by one).
    """
    try:
        check_values(program, columns)
        names = resolve_wrt(program, wrt) if grad else []
    except InputError as exc:
        raise GroupError(exc) from None
    bad = unbatchable_ops(program)
    if bad:
        raise Unbatchable(f"no batching rule for {', '.join(sorted(bad))}")
    context = enable_grad() if grad else no_grad()
    with context:
        return _evaluate(program, columns, size, grad, names, check_domain)


class Batched(Interpretation):
    """Values are :class:`_V`: tensors whose axis 0, when ``batched``, holds the B rows.

    Input columns carry the batch axis, constants do not; an op whose
    arguments are all unbatched runs as it is, any other through its batching
    rule.  Records per-row domain warnings and the nodes a kink rule watches.
    """

    def __init__(self, B: int, wanted: Iterable[str], grad: bool, check_domain: bool):
        self.B = B
        self.wanted = frozenset(wanted)
        self.grad = grad
        self.check_domain = check_domain
        self.kinks: list = []  # (node, output, actual inputs or None, actual attrs)
        self.finite: dict[int, object] = {}  # id(Expr) -> _row_finite
        self.warnings: dict[int, list] = {}  # row -> messages

    def const(self, node: Expr) -> _V:
        if node.value.__class__ is complex:  # complex numbers: row by row, the engine's path
            raise Unbatchable("a complex constant")
        return _V(Tensor._wrap(backend.asarray(node.value)), False)

    def var(self, name: str, value) -> _V:
        if backend.is_complex(value) or backend.is_complex(backend.default_dtype(0)):
            raise Unbatchable(f"column {name!r} is complex")
        data = backend.xp.asarray(value, dtype=backend.default_dtype)
        if data.ndim == 0 or data.shape[0] != self.B:
            raise Unbatchable(f"column {name!r} has no batch axis of size {self.B}")
        t = Tensor._wrap(data)
        t.requires_grad = name in self.wanted
        t.name = name
        return _V(t, True)

    def apply(self, node: Expr, op, args: list) -> _V:
        if not any(a.batched for a in args):
            inputs, attrs = args, node.attrs
            v = _V(apply(op, *[a.t for a in args], **attrs), False)
        else:
            t, inputs, attrs = _RULES[op](node.op, node, args, self.B)
            v = _V(t, True)
        if self.grad and op.kink is not None:
            self.kinks.append((node, v, inputs, attrs))
        return v

    def finish(self, walk) -> None:
        """The per-row domain warnings of a finished walk (as :func:`.expr.domain_warnings`,
        row by row): each result is scanned at most once, the output's first, and a finite
        result of an op that spreads inf and nan vouches for its arguments."""
        if not self.check_domain:
            return
        B = self.B
        values = walk.values
        finite = self.finite
        for node in reversed(walk.order):
            if node.op in ("const", "var"):
                continue
            k = id(node)
            fin = finite.get(k)
            if fin is None:
                v = values[k]
                fin = finite[k] = _row_finite(v.t.data, v.batched, B)
            if fin is True:
                spread = OPS[node.op].spreads_nonfinite
                if spread and values[k].t.data.size:
                    for i in spread:
                        finite[id(node.args[i])] = True
        for node in walk.order:
            if node.op in ("const", "var"):
                continue
            fin = finite[id(node)]
            if fin is True:
                continue
            arg_fins = []
            for a in node.args:
                f = finite.get(id(a))
                if f is None:
                    v = values[id(a)]
                    f = finite[id(a)] = _row_finite(v.t.data, v.batched, B)
                arg_fins.append(f)
                if f is False:  # _add_warnings stops there: no row warns
                    break
            _add_warnings(self.warnings, node.op, values[id(node)], fin, arg_fins, B)


def _evaluate(program, columns, B, grad, names, check_domain) -> BatchResult:
    np = backend.host
    batched = Batched(B, names, grad, check_domain)
    token = backend.quiet_enter()  # once for the whole walk, not once per op
    try:
        walk = interpret(program, batched, columns, bind=names)
    except MissingValueError as exc:
        raise GroupError(exc) from None
    finally:
        backend.quiet_exit(token)
    batched.finish(walk)
    out = walk.result
    rowshape = out.rowshape
    value = backend.to_numpy(out.t.data)
    if not out.batched:
        value = np.broadcast_to(value, (B,) + tuple(value.shape))
    result = BatchResult(size=B, value=value, warnings=batched.warnings or None)
    if not grad:
        return result
    if math.prod(rowshape) != 1:
        raise GroupError(non_scalar_error(rowshape))
    dtype = out.t.data.dtype
    got = {}
    ordered = [walk.inputs[n].t for n in names]
    if ordered and out.t.requires_grad:
        token = LEAVES_COPIED_AT_EXIT.set(True)  # _owned below copies what a caller shares
        try:
            grads = _grad(out.t, ordered, grad_outputs=_seed(out.t), allow_unused=True)
        finally:
            LEAVES_COPIED_AT_EXIT.reset(token)
        got = {leaf.name: g for leaf, g in zip(ordered, grads)}
    result.grad = {}
    own = [v.t.data for v in walk.inputs.values()] + [out.t.data]
    own += [walk.values[id(n)].t.data for n in walk.order if n.op == "const"]
    for name in names:
        g = got.get(name)
        if g is None:
            result.grad[name] = np.zeros(tuple(walk.inputs[name].t.shape), dtype=dtype)
        else:
            result.grad[name] = _owned(backend.to_numpy(g.data), own)
    _derivative_warnings(program, walk.order, walk.values, batched.kinks, B, result)
    return result


def _seed(out: Tensor) -> Tensor:
    """The cotangent of ones for every row.  On the host a broadcast of one 1 (no pass, no
    memory): the op rules take a product with it as the other factor itself
    (:func:`~.ops.rules.chain_local`), bit for bit what multiplying by ones gives."""
    xp = backend.xp
    data = out.data
    if xp is backend.host:
        return Tensor._wrap(xp.broadcast_to(xp.ones((), dtype=data.dtype), data.shape))
    return Tensor._wrap(xp.ones(data.shape, dtype=data.dtype))


def _owned(g, own: list):
    """A gradient as a caller's array of its own: the seed's broadcast (``x + y``) or an array
    shared with an input column, a constant or the value is copied (the same numbers)."""
    np = backend.host
    if backend.xp is not np:  # to_numpy made a host copy of a device array
        return g
    if not g.flags.writeable or any(np.may_share_memory(g, a) for a in own):
        return np.array(g)
    return g


# ---------------------------------------------------------------------------
# Per-row derivative warnings (core.recording.derivative_warnings, as grad_of adds them)
# ---------------------------------------------------------------------------


def _slice_rows(data, batched: bool, lo: int, hi: int):
    return data[lo:hi] if batched else data


def _kink_rows(node, v: _V, inputs, attrs, B: int):
    """Rows where this node's kink rule may fire: ``set()``, a set of rows, or ``None`` for
    "a message that does not depend on the data" (the same in every row)."""
    kink = OPS[node.op].kink
    if inputs is None:  # the rule changed the op: ask row by row
        return set(range(B))

    def ask(lo, hi):
        with backend.errstate():
            return kink(
                [_slice_rows(i.t.data, i.batched, lo, hi) for i in inputs],
                _slice_rows(v.t.data, v.batched, lo, hi),
                attrs,
            )

    try:
        if ask(0, 0):
            return None
        if not ask(0, B):
            return set()
        rows = set()
        stack = [(0, B)]
        while stack:  # bisect down to the rows where it fires
            lo, hi = stack.pop()
            if hi - lo == 1:
                rows.add(lo)
                continue
            mid = (lo + hi) // 2
            for a, b in ((lo, mid), (mid, hi)):
                if ask(a, b):
                    stack.append((a, b))
        return rows
    except (ValueError, IndexError, ArithmeticError, EvaluationError):
        # A kink rule is written for one row's arrays; a slice of rows may not fit it (a shape
        # or an axis it does not expect: ValueError, IndexError, NumPy's AxisError and
        # LinAlgError among them; an overflow; a factorisation the engine refuses, as
        # EvaluationError).  Every row is then asked on its own, exactly, only slower; any
        # other exception (TypeError, AttributeError...) is a bug in the rule and propagates.
        return set(range(B))


def _derivative_warnings(program, order, computed, kinks, B, result) -> None:
    try:
        from .recording import derivative_warnings
    except ImportError:  # an engine without derivative warnings
        return
    if not kinks:
        return
    hit: set = set()
    constant = False
    for node, v, inputs, attrs in kinks:
        if inputs is not None and not any(i.t.requires_grad for i in inputs):
            continue  # no gradient path through this node, in any row
        rows = _kink_rows(node, v, inputs, attrs, B)
        if rows is None:
            constant = True
        else:
            hit |= rows
    if not hit and not constant:
        return
    hit_rows = sorted(hit)
    rest = None
    if len(hit_rows) < B:
        hit_set = set(hit_rows)
        rest = next(i for i in range(B) if i not in hit_set)
    per_row = {}
    for i in hit_rows + ([rest] if rest is not None else []):
        row = _row_evaluation(order, computed, i)
        per_row[i] = derivative_warnings(program.output, row)
    common = per_row.get(rest, []) if rest is not None else []
    if not common and not any(per_row[i] for i in hit_rows):
        return
    merged = dict(result.warnings or {})
    for i in range(B):
        extra = per_row[i] if i in hit else common
        if extra:
            merged[i] = merged.get(i, []) + list(extra)
    result.warnings = merged or None


def _row_evaluation(order, computed, i):
    """Row i's tensors by node, as ``evaluate`` would give them for that row alone."""
    from types import SimpleNamespace

    by_node = {}
    for node in order:
        v = computed[id(node)]
        t = Tensor._wrap(v.t.data[i] if v.batched else v.t.data)
        t.requires_grad = v.t.requires_grad
        t.name = v.t.name
        by_node[id(node)] = t
    return SimpleNamespace(by_node=by_node)  # all derivative_warnings reads
