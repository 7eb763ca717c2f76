"""Batched ("vmapped") evaluation: one expression graph over many points at once.

Every input variable gets a leading *batch axis* of size B (one entry per
point, or "row"); constants do not.  Each op has a batching rule that keeps
the per-row semantics exact: the result for row i is what evaluating the
expression at row i alone gives (:func:`autograd_cli.core.api.eval_of` and
``grad_of``), including the domain warnings.

The rules, for an op whose arguments have per-row shapes s_1, s_2, ...:

* elementwise (``+ * where`` ...): per-row shapes align to the right *after*
  the batch axis, so a batched operand with fewer per-row dims than another
  operand gets singleton axes inserted after its batch axis;
* reductions shift their axes by one (``axis=None`` reduces every per-row
  axis, never the batch axis; negative axes are unchanged);
* ``transpose`` reverses only the per-row axes; ``reshape`` prepends B;
  indexing prepends a full slice; ``[a, b]`` stacks along axis 1;
* ``@`` and ``dot`` promote 1-D per-row operands explicitly (so a batch of
  vectors is never mistaken for a matrix) and use NumPy's stacked matmul,
  which runs the same kernel per row as the one-row product does.

The rules are written with the engine's own ops (plus two private shape ops
defined here), so backward works unchanged: rows are independent, so the
gradient of the batch *sum* of a scalar-per-row output with respect to a
batched leaf is, row by row, each row's own gradient.

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
from dataclasses import dataclass

from . import backend
from .autograd import grad as _grad
from .errors import (AutogradCliError, InputError, MissingValueError, NonScalarOutputError,
                     UnknownVariableError)
from .expr import Program, _describe_nonfinite, topological
from .ops import Op, chain, sum_to
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
    value: object                  # (B,) + per-row output shape
    grad: dict | None = None       # name -> (B,) + per-row shape of that variable
    warnings: dict | None = None   # row index -> list of warning strings (rows with none absent)

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


_PERMUTE = Op("batch_permute", "PermuteBackward0",
              lambda a, axes: backend.xp.transpose(a, axes), _permute_vjp, _permute_jvp,
              saves=False, kind="shape")


def _stack1_vjp(n, g):
    return tuple(apply(OPS["getitem"], g, index=(slice(None), i)) if need else None
                 for i, need in enumerate(n.needs))


def _stack1_jvp(n, ts):
    if all(t is None for t in ts):
        return None
    parts = [apply(OPS["zeros_like"], x) if t is None else t for x, t in zip(n.inputs, ts)]
    return apply(_STACK1, *parts)


_STACK1 = Op("batch_stack", "StackBackward0", lambda *arrays: backend.xp.stack(arrays, axis=1),
             _stack1_vjp, _stack1_jvp, arity=None, saves=False, kind="shape")


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


_DOT = Op("batch_dot", "DotBackward0", _dot_forward, _dot_vjp, None, arity=2, kind="product")


# ---------------------------------------------------------------------------
# Batching rules
# ---------------------------------------------------------------------------

class _V:
    """A value of the batched graph: a tensor, and whether its axis 0 is the batch axis."""

    __slots__ = ("t", "batched")

    def __init__(self, t: Tensor, batched: bool):
        self.t = t
        self.batched = batched

    @property
    def rowshape(self) -> tuple:
        shape = tuple(self.t.shape)
        return shape[1:] if self.batched else shape


def _reshape(t: Tensor, shape) -> Tensor:
    shape = tuple(shape)
    if tuple(t.shape) == shape:
        return t
    return apply(OPS["reshape"], t, shape=shape)


def _pad(v: _V, rank: int, B: int) -> Tensor:
    """A batched operand as (B,) + (1,)*k + rowshape with ``rank`` per-row dims."""
    rs = v.rowshape
    if not v.batched or len(rs) >= rank:
        return v.t
    return _reshape(v.t, (B,) + (1,) * (rank - len(rs)) + rs)


ELEMENTWISE = frozenset({
    "exp", "log", "log2", "log10", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
    "cosh", "tanh", "abs", "sigmoid", "relu", "softplus", "sign", "floor", "ceil", "round", "neg",
    "add", "sub", "mul", "div", "pow", "maximum", "minimum", "lt", "le", "gt", "ge", "eq", "ne",
    "where", "zeros_like", "clamp_min", "clamp_max",
})
REDUCTIONS = frozenset({"sum", "mean", "prod", "amax", "amin", "norm"})


# Each rule returns (output tensor, the op's actual input tensors, its actual attrs): the
# last two let a kink rule (core.ops, "Conventions at kinks") be asked about the batch;
# None where the rule changed the op itself (its kinks are then checked row by row).

def _elementwise(op, node, args, B):
    rank = max(len(a.rowshape) for a in args)
    inputs = [_V(_pad(a, rank, B), a.batched) for a in args]
    return apply(OPS[op], *[i.t for i in inputs], **node.attrs), inputs, node.attrs


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
    if r <= 1:
        return x.t, None, None  # the transpose of a scalar or a vector is itself
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
    return apply(OPS["getitem"], x.t, index=(slice(None),) + index), None, None


def _stack(op, node, args, B):
    try:
        shape = tuple(backend.host.broadcast_shapes(*[a.rowshape for a in args]))
    except ValueError:
        raise Unbatchable("stack shapes") from None
    parts = []
    for a in args:
        t = _pad(a, len(shape), B) if a.batched else a.t
        if tuple(t.shape) != (B,) + shape:
            t = apply(OPS["broadcast_to"], t, shape=(B,) + shape)
        parts.append(t)
    return apply(_STACK1, *parts), None, None


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
    at, ash = a.t, a.rowshape
    bt, bsh = b.t, b.rowshape
    if ra == 1:  # a row vector: (k,) -> (1, k)
        ash = (1,) + ash
        at = _reshape(at, ((B,) if a.batched else ()) + ash)
    if rb == 1:  # a column vector: (k,) -> (k, 1)
        bsh = bsh + (1,)
        bt = _reshape(bt, ((B,) if b.batched else ()) + bsh)
    rank = max(len(ash), len(bsh))
    if a.batched:
        at = _pad(_V(at, True), rank, B)
    if b.batched:
        bt = _pad(_V(bt, True), rank, B)
    out = apply(OPS["matmul"], at, bt)
    if ra == 1 or rb == 1:
        shape = tuple(out.shape)
        core = shape[:-2] + ((shape[-2],) if ra > 1 else ()) + ((shape[-1],) if rb > 1 else ())
        out = _reshape(out, core)
    return out, None, None


_RULES = {name: _elementwise for name in ELEMENTWISE}
_RULES.update({name: _reduction for name in REDUCTIONS})
_RULES.update({"transpose": _transpose, "mT": _mT, "reshape": _reshape_rule, "getitem": _getitem,
               "stack": _stack, "dot": _dot, "matmul": _matmul})

#: The ops with a batching rule; a graph using any other op is evaluated row by row.
BATCHABLE_OPS = frozenset(_RULES)


def unbatchable_ops(program: Program) -> set:
    """The ops of ``program`` without a batching rule (empty: it can be batched)."""
    return {n.op for n in topological([program.output])
            if n.op not in ("const", "var") and n.op not in _RULES}


# ---------------------------------------------------------------------------
# Per-row domain warnings (the same messages, per row, as core.expr.evaluate)
# ---------------------------------------------------------------------------

def _row_finite(data, batched: bool, B: int):
    """True when every element is finite; else a per-row bool array (batched) or False."""
    xp = backend.xp
    if bool(xp.isfinite(data).all()):
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

def evaluate_batch(program: Program, columns: dict, size: int, *, grad: bool = False, wrt=None,
                   check_domain: bool = True) -> BatchResult:
    """Evaluate ``program`` at ``size`` points at once.

    ``columns`` maps each variable to an array of shape ``(size,) + per-row shape``.
    With ``grad=True`` the gradient w.r.t. ``wrt`` (default: every input) is
    computed too, exactly as :func:`autograd_cli.core.api.grad_of` does per row.

    Raises :class:`GroupError` (every row gets the same error),
    :class:`Unbatchable` or any engine error (evaluate the rows one by one).
    """
    from . import api

    try:
        api.check_values(program, columns)
        names = api.resolve_wrt(program, wrt) if grad else []
    except InputError as exc:
        raise GroupError(exc) from None
    bad = unbatchable_ops(program)
    if bad:
        raise Unbatchable(f"no batching rule for {', '.join(sorted(bad))}")
    context = enable_grad() if grad else no_grad()
    with context:
        return _evaluate(program, columns, size, grad, names, check_domain)


def _evaluate(program, columns, B, grad, names, check_domain) -> BatchResult:
    from .api import non_scalar_message

    xp = backend.xp
    np = backend.host
    wanted = set(names)
    leaves: dict[str, Tensor] = {}
    computed: dict[int, _V] = {}
    kinks: list = []          # (node, output, actual inputs or None, actual attrs)
    finite: dict[int, object] = {}
    warnings: dict[int, list] = {}
    output = program.output
    order = topological([output])
    for node in order:
        op = node.op
        if op == "const":
            v = _V(Tensor._wrap(backend.asarray(node.value)), False)
        elif op == "var":
            t = leaves.get(node.name)
            if t is None:
                if node.name not in columns:
                    raise GroupError(MissingValueError(
                        f"no value for variable {node.name!r} (give --{node.name} VALUE, "
                        f"--var {node.name}=VALUE or --vars JSON)", variable=node.name))
                data = xp.asarray(columns[node.name], dtype=backend.default_dtype)
                if data.ndim == 0 or data.shape[0] != B:
                    raise Unbatchable(f"column {node.name!r} has no batch axis of size {B}")
                t = Tensor._wrap(data)
                t.requires_grad = node.name in wanted
                t.name = node.name
                leaves[node.name] = t
            v = _V(t, True)
        else:
            args = [computed[id(a)] for a in node.args]
            if not any(a.batched for a in args):
                inputs = args
                v = _V(apply(OPS[op], *[a.t for a in args], **node.attrs), False)
                attrs = node.attrs
            else:
                t, inputs, attrs = _RULES[op](op, node, args, B)
                v = _V(t, True)
            if grad and getattr(OPS[op], "kink", None) is not None:
                kinks.append((node, v, inputs, attrs))
            if check_domain:
                fin = _row_finite(v.t.data, v.batched, B)
                finite[id(node)] = fin
                _add_warnings(warnings, op, v, fin, [finite.get(id(a), True) for a in node.args],
                              B)
            computed[id(node)] = v
            continue
        if check_domain:
            finite[id(node)] = _row_finite(v.t.data, v.batched, B)
        computed[id(node)] = v
    for name in names:
        if name not in leaves:
            raise GroupError(UnknownVariableError(
                f"--wrt names {name!r}, which is not a variable of the expression", variable=name))
    out = computed[id(output)]
    rowshape = out.rowshape
    value = backend.to_numpy(out.t.data)
    if not out.batched:
        value = np.broadcast_to(value, (B,) + tuple(value.shape))
    result = BatchResult(size=B, value=value, warnings=warnings or None)
    if not grad:
        return result
    if math.prod(rowshape) != 1:
        raise GroupError(NonScalarOutputError(non_scalar_message(rowshape), shape=list(rowshape)))
    dtype = out.t.data.dtype
    got = {}
    ordered = [leaves[n] for n in names if n in leaves]
    if ordered and out.t.requires_grad:
        seed = Tensor._wrap(xp.ones(out.t.shape, dtype=dtype))
        grads = _grad(out.t, ordered, grad_outputs=seed, allow_unused=True)
        got = {leaf.name: g for leaf, g in zip(ordered, grads)}
    result.grad = {}
    for name in names:
        g = got.get(name)
        if g is None:
            leaf = leaves.get(name)
            shape = tuple(leaf.shape) if leaf is not None else (B,)
            result.grad[name] = np.zeros(shape, dtype=dtype)
        else:
            result.grad[name] = backend.to_numpy(g.data)
    _derivative_warnings(program, order, computed, leaves, kinks, B, result)
    return result


# ---------------------------------------------------------------------------
# Per-row derivative warnings (core.expr.derivative_warnings, as grad_of adds them)
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
            return kink([_slice_rows(i.t.data, i.batched, lo, hi) for i in inputs],
                        _slice_rows(v.t.data, v.batched, lo, hi), attrs)

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
    except Exception:  # noqa: BLE001 - a rule that cannot read a batch: ask every row
        return set(range(B))


def _derivative_warnings(program, order, computed, leaves, kinks, B, result) -> None:
    try:
        from .expr import derivative_warnings
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
        row = _row_evaluation(order, computed, leaves, i)
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


def _row_evaluation(order, computed, leaves, i):
    """What ``evaluate`` returns for row i alone, enough for ``derivative_warnings``."""
    from types import SimpleNamespace

    by_node = {}
    for node in order:
        v = computed[id(node)]
        t = Tensor._wrap(v.t.data[i] if v.batched else v.t.data)
        t.requires_grad = v.t.requires_grad
        t.name = v.t.name
        by_node[id(node)] = t
    output = by_node[id(order[-1])]
    row_leaves = {name: by_node[id(n)] for n in order if n.op == "var" for name in (n.name,)}
    return SimpleNamespace(output=output, leaves=row_leaves, intermediates={}, warnings=[],
                           by_node=by_node)
