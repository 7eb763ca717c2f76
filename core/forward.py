"""Forward mode: tangents pushed through the op table's ``jvp`` rules, in one forward sweep.

Two ways in, one set of rules:

* :func:`jvp_program` evaluates an expression graph (:mod:`.expr`) as dual
  numbers: node by node, the primal with ``apply`` and the tangent with the
  op's ``jvp`` rule, in the same walk.
* :func:`jvp` differentiates a Python callable of Tensors.  The callable runs
  once, recording the engine's ordinary graph (the *tape*); :class:`Tape` then
  sweeps that graph from the inputs towards the outputs, calling each Node's
  ``op.jvp(node, tangents)``.  A Node already has everything a rule reads
  (``inputs``, ``out``, ``attrs``, ``shapes``, ``needs``), so it is its own
  context.  The tape of a ``grad(..., create_graph=True)`` result contains the
  backward pass too, so sweeping it gives forward-over-reverse (Hessian-vector
  products, Hessians).

A tangent is a Tensor shaped like its primal, or None for an exact zero.
Tangents may require grad themselves: every rule is written with engine ops,
so with grad mode on the tangent computation is recorded and can be
differentiated again.

**Batched tangents.**  With ``batch=B`` every tangent carries an extra
leading axis of length B: B directions pushed through in one sweep (the
"stack the basis vectors" trick that makes Jacobians and Hessians one pass
instead of n).  The op table's rules are written for unbatched tangents, so
the batched sweep uses :func:`batched_rule`: elementwise ops take their local
partials from the same table (``Op.deriv``), linear ops are re-applied with
the batch axis accounted for, and any op it does not know falls back to the
op's own ``jvp`` once per direction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextvars import ContextVar

from . import backend
from .autograd import topological_nodes
from .errors import ShapeError, UnknownVariableError
from .interpret import Interpretation, interpret
from .ops import (
    RuleContext,
    _extreme_weights,
    _norm_partials,
    _prod_partials,
    add_tangents,
    broadcast_to,
    call,
    chain,
    norm_axes,
    reshape,
    split_advanced,
    sum_to,
)
from .ops.rules import CHAIN_LOCAL_MIN, _finite_factor, _tangent, _unit, host_unrecorded, is_complex
from .ops.shape import transpose_axes
from .program import Expr, Program, variables
from .recording import parse_value
from .tensor import OPS, Tensor, apply, enable_grad, no_grad

__all__ = [
    "TangentContext",
    "Tape",
    "tangent_rule",
    "batched_rule",
    "propagate",
    "jvp",
    "jvp_program",
    "evaluate_program",
    "program_function",
    "prepare_inputs",
    "basis",
    "zeros_tangent",
]

# Kept under its old name: forward mode was its first user.
TangentContext = RuleContext


# ---------------------------------------------------------------------------
# Rules
# ---------------------------------------------------------------------------


def _no_forward_rule(op, tangents: Sequence):
    """An op without a jvp rule: a zero tangent only where it is not differentiable at all.

    An op with a reverse rule but no forward one has a non-zero derivative that forward mode
    cannot compute: PyTorch raises NotImplementedError rather than return a wrong zero.
    """
    if op.vjp is None:  # comparisons and the like: no derivative, a zero tangent
        return None
    flags = op.flags(len(tangents))
    if any(t is not None and d for t, d in zip(tangents, flags)):
        raise NotImplementedError(
            f"Trying to use forward AD with {op.name} that does not support it because it has "
            "not been implemented yet."
        )
    return None


def tangent_rule(op, ctx, tangents: Sequence, batch: int | None = None):
    """The output tangent of one op application: ``op.jvp`` itself, or its batched form."""
    if all(t is None for t in tangents):
        return None
    if batch is None:
        if op.jvp is None:
            return _no_forward_rule(op, tangents)
        ts = _differentiated(op, tangents)
        return None if ts is None else op.jvp(ctx, ts)
    return batched_rule(op, ctx, tangents, batch)


def _differentiated(op, tangents: Sequence):
    """The tangents of the arguments ``op`` differentiates (None for the others), or None
    where none is left."""
    flags = op.flags(len(tangents))
    ts = tuple(t if d else None for t, d in zip(tangents, flags))
    return None if all(t is None for t in ts) else ts


def _pad(t: Tensor, ndim: int) -> Tensor:
    """A batched tangent (B, *s) as (B, 1, ..., 1, *s) with ``ndim`` dims after the batch axis."""
    extra = ndim - (t.ndim - 1)
    if extra <= 0:
        return t
    return reshape(t, (t.shape[0],) + (1,) * extra + tuple(t.shape[1:]))


def _shift_axis(axis, ndim: int):
    """A reduction axis of the primal, as the same axis of a batched tangent."""
    if axis is None:
        return tuple(range(1, ndim + 1))
    if isinstance(axis, tuple):
        return tuple(a + 1 if a >= 0 else a for a in axis)
    return axis + 1 if axis >= 0 else axis


#: The tangents of a batched sweep (:meth:`Tape.run`) that one rule may write into: made by
#: the rule of a node whose tangent has this one reader (id -> the tangent, kept alive so
#: that an id is never another object's).
_OWNED: ContextVar[dict | None] = ContextVar("owned_tangents", default=None)


def _elementwise(op, ctx, ts, batch):
    out = ctx.out
    args = tuple(ctx.inputs) + (out,)
    owned_here = _OWNED.get() or {}
    total = None
    owned = False  # total's array is this call's to write into (made here, or handed over)
    for i, t in enumerate(ts):
        if t is None:
            continue
        d = op.deriv[i](*args)
        mine = owned_here.get(id(t)) is t
        t = _pad(t, out.ndim)
        if op.on_complex == "real" and (is_complex(t) or is_complex(d)):
            # a real function of a complex argument: real(conj(d) t), as its jvp
            term, made = _tangent(op.on_complex, t, d), True
        elif isinstance(d, (int, float)):
            term, made = (t, mine) if d == 1 else ((-t if d == -1 else t * d), True)
        elif _by_ones(t, d):
            term, made = t, mine  # t * 1 is t, bit for bit: no pass over the tangents
        elif mine and _addable(t, d) and _finite_factor(t if op.selects else d):
            # chain(t, d): d has no inf/nan (a selecting d never has; then t must not either)
            backend.host.multiply(t.data, d.data, out=t.data)
            term, made = t, True
        else:
            term, made = chain(t, d, op.selects), True
        if total is None:
            total, owned = term, made
        elif owned and _addable(total, term):
            backend.host.add(total.data, term.data, out=total.data)  # total + term, in place
        elif made and _addable(term, total):
            backend.host.add(total.data, term.data, out=term.data)  # total + term, in place
            total = term
        else:
            total, owned = add_tangents(total, term), True
    assert total is not None  # batched_rule returned before when every tangent was None
    return broadcast_to(total, (batch,) + tuple(out.shape))


def _by_ones(t, d) -> bool:
    """``d`` is a broadcast of ones (a sum's cotangent expanded back, recorded in a
    gradient's graph) that leaves the tangent ``t``'s shape and dtype as they are."""
    if not host_unrecorded(t, d) or t.data.size < CHAIN_LOCAL_MIN:
        return False
    td, dd = t.data, d.data
    return (
        td.dtype == dd.dtype
        and backend.host.broadcast_shapes(td.shape, dd.shape) == td.shape
        and _unit(dd)
    )


def _addable(total, term) -> bool:
    """``total + term`` (or ``total * term``) fits in ``total``'s own array (its shape and
    dtype)."""
    if not host_unrecorded(total, term) or total.data.size < CHAIN_LOCAL_MIN:
        return False
    a, b = total.data, term.data
    return (
        a.dtype == b.dtype
        and a.flags.writeable
        and backend.host.broadcast_shapes(a.shape, b.shape) == a.shape
    )


def _where(op, ctx, ts, batch):
    _, ta, tb = ts
    cond = ctx.inputs[0]
    nd = ctx.out.ndim
    ta = 0.0 if ta is None else _pad(ta, nd)
    tb = 0.0 if tb is None else _pad(tb, nd)
    # where() needs a Tensor among its arguments: cond always is one.
    r = call("where", cond, ta, tb)
    return broadcast_to(r, (batch,) + tuple(ctx.out.shape))


def _broadcast_to(op, ctx, ts, batch):
    shape = tuple(ctx.attrs["shape"])
    return broadcast_to(_pad(ts[0], len(shape)), (batch,) + shape)


def _sum_to(op, ctx, ts, batch):
    t = ts[0]
    shape = tuple(ctx.attrs["shape"])
    lead = (t.ndim - 1) - len(shape)
    if lead > 0:
        t = t.sum(axis=tuple(range(1, 1 + lead)))
    return sum_to(t, (batch,) + shape)


def _reshape(op, ctx, ts, batch):
    return reshape(ts[0], (batch,) + tuple(ctx.attrs["shape"]))


def _transpose(op, ctx, ts, batch):
    t = ts[0]
    nd = len(ctx.shapes[0])
    axes = ctx.attrs.get("axes")
    if axes is not None:  # transpose(x, axes): the direction axis stays in front
        axes = (0,) + tuple(a + 1 for a in transpose_axes(axes, nd))
        return call("transpose", t, axes=axes)
    if nd <= 1:
        return t
    if nd == 2:
        return call("mT", t)
    # (B, *s) -> reversed whole (*rev s, B) -> batch axis back in front.
    rev = tuple(reversed(ctx.shapes[0]))
    size = 1
    for s in rev:
        size *= s
    r = reshape(call("transpose", t), (size, batch))
    return reshape(call("mT", r), (batch,) + rev)


def _mT(op, ctx, ts, batch):
    return call("mT", ts[0])


def _getitem(op, ctx, ts, batch):
    if split_advanced(ctx.attrs["index"]):  # the batch axis would not stay in front
        return _loop(op, ctx, ts, batch)
    return call("getitem", ts[0], index=(slice(None),) + tuple(ctx.attrs["index"]))


def _scatter(op, ctx, ts, batch):
    if split_advanced(ctx.attrs["index"]):
        return _loop(op, ctx, ts, batch)
    return call(
        "scatter",
        ts[0],
        index=(slice(None),) + tuple(ctx.attrs["index"]),
        shape=(batch,) + tuple(ctx.attrs["shape"]),
    )


def _stack(op, ctx, ts, batch):
    inner = tuple(ctx.out.shape[1:])
    k = len(ts)
    parts = []
    for x, t in zip(ctx.inputs, ts):
        if t is None:
            parts.append(Tensor._wrap(backend.xp.zeros((batch,) + inner, dtype=x.data.dtype)))
        else:
            parts.append(broadcast_to(_pad(t, len(inner)), (batch,) + inner))
    s = call("stack", *parts)  # (k, B, *inner)
    if not inner:
        return call("mT", s)  # (B, k)
    size = 1
    for d in inner:
        size *= d
    r = reshape(call("mT", reshape(s, (k, batch * size))), (batch, size, k))
    return reshape(call("mT", r), (batch, k) + inner)


def _linear_reduction(op, ctx, ts, batch):
    attrs = ctx.attrs
    nd = len(ctx.shapes[0])
    return call(
        op.name,
        ts[0],
        axis=_shift_axis(attrs.get("axis"), nd),
        keepdims=attrs.get("keepdims", False),
    )


_PARTIALS = {
    "prod": _prod_partials,
    "amax": _extreme_weights,
    "amin": _extreme_weights,
    "norm": _norm_partials,
}


def _weighted_reduction(op, ctx, ts, batch):
    attrs = ctx.attrs
    x = ctx.inputs[0]
    axis = attrs.get("axis")
    keepdims = attrs.get("keepdims", False)
    partials = _PARTIALS[op.name](x, ctx.out, axis, keepdims)
    return call("sum", chain(ts[0], partials), axis=_shift_axis(axis, x.ndim), keepdims=keepdims)


def _norm(op, ctx, ts, batch):
    """norm: without ord a weighted reduction as prod's; with ord its partials (d norm / d x,
    in x's shape, for any order) summed over the axes the order reduces."""
    attrs = ctx.attrs
    ord = attrs.get("ord")
    if ord is None:
        return _weighted_reduction(op, ctx, ts, batch)
    x = ctx.inputs[0]
    keepdims = attrs.get("keepdims", False)
    axes = norm_axes(x.ndim, attrs.get("axis"), ord)
    partials = _norm_partials(x, ctx.out, attrs.get("axis"), keepdims, ord)
    return call("sum", chain(ts[0], partials), axis=_shift_axis(axes, x.ndim), keepdims=keepdims)


def _dot(op, ctx, ts, batch):
    a, b = ctx.inputs
    ta, tb = ts
    return add_tangents(
        None if ta is None else call("matmul", ta, b), None if tb is None else call("matmul", tb, a)
    )


def _matmul(op, ctx, ts, batch):
    a, b = ctx.inputs
    ta, tb = ts
    sa, sb = tuple(a.shape), tuple(b.shape)
    out_shape = (batch,) + tuple(ctx.out.shape)
    if len(sa) <= 2 and len(sb) <= 2:
        return _matmul_2d(a, b, ta, tb, sa, sb, batch, out_shape)
    a2 = (1,) + sa if len(sa) == 1 else sa
    b2 = sb + (1,) if len(sb) == 1 else sb
    nb = max(len(a2), len(b2)) - 2  # batch rank of the (promoted) product
    total = None
    if ta is not None:
        lead = (1,) * (nb - (len(a2) - 2))
        ta2 = reshape(ta, (batch,) + lead + a2)
        bb = reshape(b, b2) if b2 != sb else b
        total = add_tangents(total, reshape(call("matmul", ta2, bb), out_shape))
    if tb is not None:
        lead = (1,) * (nb - (len(b2) - 2))
        tb2 = reshape(tb, (batch,) + lead + b2)
        aa = reshape(a, a2) if a2 != sa else a
        total = add_tangents(total, reshape(call("matmul", aa, tb2), out_shape))
    return total


def _matmul_2d(a, b, ta, tb, sa, sb, batch, out_shape):
    """Vectors and matrices: fold the B directions into the rows of one matrix product (one GEMM)."""
    total = None
    if ta is not None:
        rows = reshape(ta, (batch * (sa[0] if len(sa) == 2 else 1), sa[-1]))  # (B*m, k)
        total = add_tangents(total, reshape(call("matmul", rows, b), out_shape))
    if tb is not None:
        a_t = call("mT", a) if len(sa) == 2 else a  # (k, m) or (k,)
        if len(sb) == 1:
            r = call("matmul", tb, a_t)  # (B, m) or (B,)
        else:
            k, p = sb
            cols = reshape(call("mT", tb), (batch * p, k))  # (B*p, k)
            r = call("matmul", cols, a_t)  # (B*p, m) or (B*p,)
            if len(sa) == 2:
                r = call("mT", reshape(r, (batch, p, sa[0])))  # (B, m, p)
        total = add_tangents(total, reshape(r, out_shape))
    return total


def _loop(op, ctx, ts, batch):
    """Any op: its own unbatched jvp rule once per direction, stacked."""
    rows = []
    for i in range(batch):
        ti = tuple(None if t is None else call("getitem", t, index=(i,)) for t in ts)
        r = tangent_rule(op, ctx, ti, None)
        if r is None:
            r = Tensor._wrap(backend.xp.zeros(ctx.out.shape, dtype=ctx.out.data.dtype))
        rows.append(r)
    return call("stack", *rows)


# This interpretation's own rules for B tangent directions at once, keyed by the Op; an op
# without one batches by its partials (elementwise) or one direction at a time (_loop).
_BATCHED = {
    OPS["where"]: _where,
    OPS["broadcast_to"]: _broadcast_to,
    OPS["sum_to"]: _sum_to,
    OPS["reshape"]: _reshape,
    OPS["transpose"]: _transpose,
    OPS["mT"]: _mT,
    OPS["getitem"]: _getitem,
    OPS["scatter"]: _scatter,
    OPS["stack"]: _stack,
    OPS["sum"]: _linear_reduction,
    OPS["mean"]: _linear_reduction,
    OPS["prod"]: _weighted_reduction,
    OPS["amax"]: _weighted_reduction,
    OPS["amin"]: _weighted_reduction,
    OPS["norm"]: _norm,
    OPS["dot"]: _dot,
    OPS["matmul"]: _matmul,
}


def batched_rule(op, ctx, tangents: Sequence, batch: int):
    """The output tangent for B directions at once (each tangent shaped (B, *input shape))."""
    if getattr(op, "zero_grad", False):
        return None
    if op.jvp is None:
        return _no_forward_rule(op, tangents)
    ts = _differentiated(op, tangents)
    if ts is None:
        return None
    rule = _BATCHED.get(op)
    if rule is not None:
        return rule(op, ctx, ts, batch)
    if (
        op.deriv is not None
        and op.kind == "elementwise"
        and len(op.deriv) == len(ts)
        and op.on_complex != "real_linear"  # conj: its tangent is conj(t), no product
    ):
        return _elementwise(op, ctx, ts, batch)
    return _loop(op, ctx, ts, batch)


# ---------------------------------------------------------------------------
# Tangent propagation over a recorded graph
# ---------------------------------------------------------------------------


class Tape:
    """The recorded Nodes between some input tensors and some outputs, in forward order.

    ``Tape(outputs, inputs)`` walks back from ``outputs`` and stops at
    ``inputs`` (leaves, or non-leaf tensors whose Node is not entered), so a
    sweep only touches what lies downstream of them.  :meth:`run` may be
    called many times (one call per chunk of directions).
    """

    def __init__(self, outputs: Sequence[Tensor], inputs: Sequence[Tensor]):
        self.outputs = tuple(outputs)
        self.inputs = tuple(inputs)
        order = topological_nodes(
            self.outputs, stop=[t.grad_fn for t in self.inputs if t.grad_fn is not None]
        )
        self.order = order
        # How many Nodes of the tape read each Node's output (to free tangents early).
        uses: dict[int, int] = {}
        for node in order:
            for x in node.inputs:
                if x.grad_fn is not None:
                    uses[id(x.grad_fn)] = uses.get(id(x.grad_fn), 0) + 1
        self.uses = uses
        self.max_size = max(
            [t.size for t in self.outputs + self.inputs] + [node.out.size for node in order] + [1]
        )

    def run(self, tangents: Sequence, batch: int | None = None) -> list:
        """Output tangents (None = zero) for input ``tangents`` (one per input, None = zero)."""
        if len(tangents) != len(self.inputs):
            raise ValueError(f"{len(self.inputs)} inputs but {len(tangents)} tangents")
        leaf_tan: dict[int, Tensor] = {}
        node_tan: dict[int, Tensor] = {}
        for x, t in zip(self.inputs, tangents):
            if t is None:
                continue
            t = _check_tangent(x, t, batch)
            key = id(x.grad_fn) if x.grad_fn is not None else id(x)
            table = node_tan if x.grad_fn is not None else leaf_tan
            table[key] = add_tangents(table.get(key), t)
        keep = {id(o.grad_fn) for o in self.outputs if o.grad_fn is not None}
        keep.update(id(x.grad_fn) for x in self.inputs if x.grad_fn is not None)
        remaining = dict(self.uses)

        def lookup(x):
            if x.grad_fn is not None:
                return node_tan.get(id(x.grad_fn))
            return leaf_tan.get(id(x))

        owned: dict[int, Tensor] = {}
        token = _OWNED.set(owned)
        try:
            for node in self.order:
                ins = node.inputs
                ts = tuple(lookup(x) for x in ins)
                if any(t is not None for t in ts):
                    r = tangent_rule(node.op, node, ts, batch)
                    if r is not None:
                        node_tan[id(node)] = r
                        if batch is not None and self._one_reader(node, keep) and _fresh(r, ts):
                            owned[id(r)] = r
                for x in ins:
                    fn = x.grad_fn
                    if fn is not None and id(fn) in remaining:
                        remaining[id(fn)] -= 1
                        if remaining[id(fn)] == 0 and id(fn) not in keep:
                            t = node_tan.pop(id(fn), None)
                            owned.pop(id(t), None)
        finally:
            _OWNED.reset(token)
        return [lookup(o) for o in self.outputs]

    def _one_reader(self, node, keep) -> bool:
        """Exactly one argument of one Node reads ``node``'s tangent, and no caller does."""
        return self.uses.get(id(node)) == 1 and id(node) not in keep


def _fresh(r, ts) -> bool:
    """``r`` is an array of its own (not a view), shared with none of the tangents ``ts``
    it was made from: a tangent that its one reader may overwrite."""
    data = getattr(r, "data", None)
    if type(data) is not backend.host.ndarray or not data.flags.owndata:
        return False
    return not any(
        t is not None and (t is r or backend.host.may_share_memory(data, t.data)) for t in ts
    )


def _check_tangent(x: Tensor, t, batch):
    if not isinstance(t, Tensor):
        t = Tensor._wrap(backend.asarray(t, dtype=x.data.dtype))
    expected = tuple(x.shape) if batch is None else (batch,) + tuple(x.shape)
    if tuple(t.shape) != expected:
        if batch is None and t.size == x.size:
            return reshape(t, expected)
        raise ShapeError(
            f"tangent of shape {tuple(t.shape)} for an input of shape "
            f"{tuple(x.shape)}"
            + ("" if batch is None else f" with {batch} directions")
            + f" (expected {expected})",
            expected=list(expected),
            got=list(t.shape),
        )
    return t


def propagate(
    outputs: Sequence[Tensor], seeds: Iterable[tuple[Tensor, object]], batch: int | None = None
) -> list:
    """Tangents of ``outputs`` given ``seeds`` = [(input tensor, its tangent), ...] (None = zero)."""
    seeds = list(seeds)
    tape = Tape(outputs, [x for x, _ in seeds])
    return tape.run([t for _, t in seeds], batch)


def zeros_tangent(like: Tensor, batch: int | None = None) -> Tensor:
    shape = tuple(like.shape) if batch is None else (batch,) + tuple(like.shape)
    return Tensor._wrap(backend.xp.zeros(shape, dtype=like.data.dtype))


def basis(sizes: Sequence[int], shapes: Sequence[tuple], start: int, stop: int, dtype) -> list:
    """Rows ``start:stop`` of the identity over the concatenation of several inputs.

    Returns one batched tangent per input, shaped (stop - start, *shape), or
    None where the chunk does not touch that input.
    """
    xp = backend.xp
    out: list[Tensor | None] = []
    offset = 0
    for n, shape in zip(sizes, shapes):
        lo, hi = max(start, offset), min(stop, offset + n)
        if lo >= hi:
            out.append(None)
        else:
            e = xp.zeros((stop - start, n), dtype=dtype)
            rows = xp.arange(lo, hi)
            e[rows - start, rows - offset] = 1
            out.append(Tensor._wrap(e.reshape((stop - start,) + tuple(shape))))
        offset += n
    return out


# ---------------------------------------------------------------------------
# Function-level forward mode (torch.func.jvp style)
# ---------------------------------------------------------------------------


def _as_tuple(x) -> tuple:
    return tuple(x) if isinstance(x, (list, tuple)) else (x,)


def prepare_inputs(inputs: Sequence, create_graph: bool) -> tuple:
    """Fresh graph inputs for tracing: leaves, or views of ``inputs`` when the graph must connect."""
    prepared = []
    for x in inputs:
        if not isinstance(x, Tensor):
            x = Tensor(x)
        if create_graph and x.requires_grad:
            with enable_grad():
                prepared.append(reshape(x, x.shape))
        else:
            leaf = Tensor._wrap(x.data)
            leaf.requires_grad = True
            prepared.append(leaf)
    return tuple(prepared)


def jvp(f: Callable, primals, tangents, *, batch: int | None = None, create_graph: bool = False):
    """``(f(*primals), J_f(primals) @ tangents)`` in one forward sweep (like ``torch.func.jvp``).

    ``primals`` and ``tangents`` are a Tensor each or matching tuples; the
    outputs mirror what ``f`` returns (a Tensor or a tuple of Tensors).  With
    ``batch=B`` each tangent has a leading axis of B directions and so does
    each output tangent.  With ``create_graph=True`` the results stay
    differentiable (with respect to primals and tangents that require grad).

    >>> from autograd_cli.core import tensor
    >>> y, dy = jvp(lambda x: x.sin() * x, tensor(0.0), tensor(1.0))
    >>> float(dy)
    0.0
    """
    single = not isinstance(primals, (list, tuple))
    xs = prepare_inputs(_as_tuple(primals), create_graph)
    vs = _as_tuple(tangents)
    if len(vs) != len(xs):
        raise ValueError(f"{len(xs)} primals but {len(vs)} tangents")
    with enable_grad():
        out = f(*xs) if not single else f(xs[0])
    outs = _as_tuple(out)
    for o in outs:
        if not isinstance(o, Tensor):
            raise TypeError(f"the function must return Tensors, got {type(o).__name__}")
    mode = enable_grad() if create_graph else no_grad()
    with mode:
        tape = Tape(outs, xs)
        touts = tape.run(vs, batch)
        touts = [zeros_tangent(o, batch) if t is None else t for o, t in zip(outs, touts)]
    if not create_graph:
        outs = tuple(o.detach() for o in outs)
        touts = [t.detach() for t in touts]
    if isinstance(out, (list, tuple)):
        return tuple(outs), tuple(touts)
    return outs[0], touts[0]


# ---------------------------------------------------------------------------
# Programs: dual-number evaluation of an expression graph
# ---------------------------------------------------------------------------


class Duals(Interpretation):
    """Values are (primal, tangent) pairs: the tangent is None where it is zero.

    Values that are Tensors are used as they are, graph included; ``tangents``
    maps some input names to their tangents (shaped like the value, or
    (B, *shape) with ``batch=B``).
    """

    def __init__(self, tangents: dict, batch: int | None):
        self.tangents = tangents
        self.batch = batch

    def const(self, node: Expr) -> tuple:
        return Tensor._wrap(backend.asarray(node.value)), None

    def var(self, name: str, value) -> tuple:
        if isinstance(value, Tensor):
            x = value
        else:
            x = Tensor._wrap(parse_value(name, value))
            x.name = name
        t = self.tangents.get(name)
        return x, (None if t is None else _check_tangent(x, t, self.batch))

    def apply(self, node: Expr, op, args: list) -> tuple:
        primals = tuple(p for p, _ in args)
        out = apply(op, *primals, **node.attrs)
        ts = tuple(t for _, t in args)
        if all(t is None for t in ts):
            return out, None
        flags = op.flags(len(ts))
        needs = tuple(t is not None and d for t, d in zip(ts, flags))
        ctx = TangentContext(op, primals, out, node.attrs, needs)
        return out, tangent_rule(op, ctx, ts, self.batch)


def jvp_program(
    program: Program | Expr, values: dict, tangents: dict | None = None, batch: int | None = None
):
    """Evaluate ``program`` at ``values`` together with the tangent of its output.

    ``values`` maps input names to numbers, lists, arrays or Tensors (Tensors
    are used as they are, graph included); ``tangents`` maps some input names
    to their tangents (shaped like the value, or (B, *shape) with ``batch=B``);
    an input without one has a zero tangent.  Returns ``(output, tangent)``,
    the tangent None when the output does not depend on any tangent.

    >>> from autograd_cli.grammar import parse
    >>> out, dout = jvp_program(parse("x**2 * y"), {"x": 3, "y": 2}, {"x": 1})
    >>> float(out), float(dout)
    (18.0, 12.0)
    """
    tangents = dict(tangents or {})
    unknown = [name for name in tangents if name not in variables(program)]
    if unknown:
        raise UnknownVariableError(
            f"a tangent is given for {unknown[0]!r}, which is not a variable of the expression",
            variable=unknown[0],
        )
    return interpret(program, Duals(tangents, batch), values, bind=tangents).result


def evaluate_program(program: Program | Expr, values: dict) -> Tensor:
    """The output of ``program`` at ``values``; Tensor values keep their graph (unlike recording.evaluate)."""
    out, _ = jvp_program(program, values, None)
    return out


def program_function(program: Program | Expr, values: dict, wrt: Sequence[str]) -> Callable:
    """``program`` as a Python function of the variables ``wrt`` (the others fixed at ``values``)."""
    wrt = tuple(wrt)

    def f(*xs):
        env = dict(values)
        env.update(zip(wrt, xs))
        return evaluate_program(program, env)

    f.__name__ = "program"
    return f
