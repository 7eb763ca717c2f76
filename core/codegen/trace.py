"""The program and its derivatives as one straight-line graph, for code generation.

:class:`Tracing` is an interpretation of the one interpreter whose values are
:class:`Traced`: each wraps a :class:`Node` of a :class:`Graph` (an op of the table applied
to earlier nodes, an input, or a constant) and knows its value at the point the program
was traced at, so the rules can read shapes.  The reverse sweep (:func:`gradients`) then
calls each op's own ``vjp`` rule with Traced values, as the symbolic differentiator does
with its Sym values, so the backward pass is made of the table's ops too; forward over
that (:func:`hessian`) calls the ``jvp`` rules.  Nothing here knows a derivative.

The graph is built as it is emitted later: hash-consed (a subexpression built twice is one
node), constants folded, a product by 1 or a sum with 0 dropped.  A product by 0 is kept:
``0*inf`` is nan.  The nodes that are not ops of the table are ``chain``, the rules'
NaN-safe product of a cotangent and a local derivative (:func:`~..ops.rules.chain`), which
generated code writes as one statement and the engine as a test and a product, and ``mend``,
its derivative's mend (:meth:`Graph.mend`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..autograd import gc_paused
from ..backend import is_complex
from ..errors import LimitError, ShapeError, UnsupportedError
from ..interpret import Interpretation, interpret
from ..ops import RuleContext, chain
from ..ops.table import operators
from ..program import Expr, Program, non_scalar_error
from ..recording import parse_value
from ..tensor import OPS, Tensor, check_size

__all__ = [
    "Graph",
    "Node",
    "Trace",
    "Traced",
    "Tracing",
    "Untraceable",
    "gradients",
    "hessian",
    "reached",
    "tangents",
    "trace",
]

#: How many nodes a graph may hold (a program of the parser's largest size and its
#: derivatives fit many times over; a Hessian of many inputs grows with their number).
MAX_NODES = 2_000_000


class Untraceable(UnsupportedError):
    """An op's rule reads the values of its inputs (sort's permutation, a decomposition's
    degenerate case): its derivative is not one formula for every point."""


@dataclass(eq=False, slots=True)
class Node:
    """One statement of the generated code: ``op`` applied to ``args`` with ``attrs``, or an
    ``input`` (``name``), or a ``const`` (its ``value``).  ``value`` is its value at the
    traced point: its shape and dtype are the generated code's."""

    op: str
    args: tuple
    attrs: dict
    value: Any
    name: str | None
    index: int

    @property
    def shape(self) -> tuple:
        return self.value.shape

    def __repr__(self) -> str:
        if self.op == "input":
            return f"Node(input {self.name})"
        if self.op == "const":
            return f"Node(const {self.value!r})"
        return f"Node({self.op} #{self.index})"


def _attrs_key(attrs: dict):
    """A hashable key of ``attrs``, or None when one holds an array (never shared then)."""
    parts = []
    for k in sorted(attrs):
        v = attrs[k]
        if _holds_array(v):
            return None
        parts.append((k, repr(v)))
    return tuple(parts)


def _holds_array(v) -> bool:
    stack = [v]
    while stack:
        item = stack.pop()
        if isinstance(item, (np.ndarray, Tensor)):
            return True
        if isinstance(item, (tuple, list)):
            stack.extend(item)
    return False


def _same(a, b) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype


class Graph:
    """The nodes, in the order they were made (each after its arguments)."""

    def __init__(self, max_nodes: int = MAX_NODES):
        self.nodes: list[Node] = []
        self.table: dict = {}
        self.max_nodes = max_nodes

    def _add(self, op, args, attrs, value, name=None) -> Node:
        if len(self.nodes) >= self.max_nodes:
            raise LimitError(f"the generated code grew past {self.max_nodes} statements")
        if op == "input" and is_complex(value):
            # complex steps between real inputs and real outputs are written (rfft, abs(x*1j));
            # a complex input or output is not, yet
            raise UnsupportedError(
                "codegen writes programs of real numbers only in this version, and a value "
                f"given for {name} is complex",
                op=op,
            )
        node = Node(op, args, attrs, value, name, len(self.nodes))
        self.nodes.append(node)
        return node

    def input(self, name: str, value) -> Node:
        return self._add("input", (), {}, value, name)

    def const(self, value) -> Node:
        value = np.asarray(value)
        if value.dtype.kind == "b":
            value = value.astype(np.float64)
        key = ("const", value.dtype.str, value.shape, value.tobytes())
        node = self.table.get(key)
        if node is None:
            node = self.table[key] = self._add("const", (), {}, value)
        return node

    def as_node(self, x, like: Node | None = None) -> Node:
        if isinstance(x, Traced):
            return x.node
        if isinstance(x, Node):
            return x
        if isinstance(x, Tensor):
            x = x.data
        if isinstance(x, (bool, int, float, np.number, np.bool_)):
            dtype = like.value.dtype if like is not None and like.value.dtype.kind == "f" else None
            return self.const(np.asarray(x, dtype=dtype or np.float64))
        if is_complex(x):
            return self.const(np.asarray(x, dtype=np.complex128))
        if isinstance(x, np.ndarray):
            return self.const(x)
        raise TypeError(f"cannot use {type(x).__name__} in generated code")

    def apply(self, name: str, args: Sequence, attrs: dict | None = None) -> Node:
        attrs = dict(attrs or {})
        like = next((a.node for a in args if isinstance(a, Traced)), None)
        nodes = tuple(self.as_node(a, like) for a in args)
        op = OPS[name]
        check_size(op, [n.value for n in nodes], attrs)  # before allocating, as tensor.apply
        with np.errstate(all="ignore"):
            try:
                value = op.forward(*[n.value for n in nodes], **attrs)
            except (ValueError, IndexError, TypeError) as exc:
                raise ShapeError(op.shape_message([n.value for n in nodes], attrs, exc)) from None
        value = np.asarray(value)
        if all(n.op == "const" for n in nodes):
            return self.const(value)
        same = _identity(name, nodes, value)
        if same is not None:
            return same
        akey = _attrs_key(attrs)
        key = None if akey is None else (name, tuple(n.index for n in nodes), akey)
        if key is not None:
            node = self.table.get(key)
            if node is not None:
                return node
        node = self._add(name, nodes, attrs, value)
        if key is not None:
            self.table[key] = node
        return node

    def chain(self, g: Node, d: Node, r: Node) -> Node:
        """The NaN-safe product ``r = g*d`` (0 where ``g`` is 0 and ``r`` is not finite)."""
        if g.op == "const" and not np.any(g.value == 0):
            return r  # the mend never applies: g has no zero
        if d.op == "const" and np.all(np.isfinite(d.value)):
            return r  # ... or d is finite, so g*d is where g is 0
        if g.op == "const" and d.op == "const":
            return self.const(_mended(g.value, r.value))
        key = ("chain", g.index, d.index)
        node = self.table.get(key)
        if node is None:
            node = self.table[key] = self._add("chain", (g, d), {}, _mended(g.value, r.value))
        return node

    def mend(self, t: Node, g: Node, r: Node) -> Node:
        """``t``, but 0 where ``g`` is 0 and ``r`` is not finite: where the product r = g*d
        was mended, its derivative is too (the engine's recorded where(g == 0, where(r - r
        == 0, t, 0), t), one statement here)."""
        key = ("mend", t.index, g.index, r.index)
        node = self.table.get(key)
        if node is None:
            with np.errstate(all="ignore"):
                bad = (g.value == 0) & ~np.isfinite(r.value)
                value = np.asarray(np.where(bad, 0.0, t.value)).astype(t.value.dtype)
            node = self.table[key] = self._add("mend", (t, g, r), {}, value)
        return node


def _mended(g, r):
    with np.errstate(all="ignore"):
        return np.asarray(np.where((g == 0) & ~np.isfinite(r), 0.0, r)).astype(r.dtype)


def _is(node: Node, number: float) -> bool:
    return node.op == "const" and node.value.ndim == 0 and node.value == number


def _identity(name: str, nodes: tuple, value) -> Node | None:
    """The operand ``name`` of ``nodes`` leaves as it is (``x*1``, ``x + 0``, ``x/1``,
    ``x**1``, ``--x``), where the result has its shape and dtype; else None."""
    if name == "neg" and nodes[0].op == "neg" and _same(nodes[0].args[0].value, value):
        return nodes[0].args[0]
    if name in ("reshape", "broadcast_to", "sum_to") and _same(nodes[0].value, value):
        return nodes[0]  # to its own shape: nothing (and batch axes pass through)
    if len(nodes) != 2:
        return None
    a, b = nodes
    keep = None
    if name == "mul":
        keep = b if _is(a, 1.0) else a if _is(b, 1.0) else None
    elif name == "add":
        keep = b if _is(a, 0.0) else a if _is(b, 0.0) else None
    elif name == "sub" or name == "div" or name == "pow":
        keep = a if _is(b, 0.0 if name == "sub" else 1.0) else None
    if keep is not None and _same(keep.value, value):
        return keep
    return None


@dataclass(eq=False, slots=True)
class Traced:
    """A value of the generated code: its node and its value at the traced point.  It has
    what the op table's rules use of a tensor (operators, ``_call``, ``shape``, ``ndim``,
    ``dtype``, ``maybe_zero``, ``finite``); reading its data raises :class:`Untraceable`."""

    node: Node
    graph: Graph

    @property
    def shape(self) -> tuple:
        return self.node.value.shape

    @property
    def ndim(self) -> int:
        return self.node.value.ndim

    @property
    def dtype(self):
        return self.node.value.dtype

    @property
    def size(self) -> int:
        return int(self.node.value.size)

    @property
    def maybe_zero(self) -> bool:
        return self.node.op != "const" or bool(np.any(self.node.value == 0))

    @property
    def finite(self) -> bool:
        return self.node.op == "const" and bool(np.all(np.isfinite(self.node.value)))

    @property
    def data(self):
        raise Untraceable("a rule reads the values of its inputs")

    def _apply(self, name: str, args, attrs=None) -> Traced:
        return Traced(self.graph.apply(name, args, attrs), self.graph)

    def _call(self, name: str, *args, **attrs) -> Traced:
        return self._apply(name, args, attrs)

    def _guarded(self, g, d) -> Traced:
        """:func:`~..ops.rules.chain`'s mend of this product ``g*d`` (see :meth:`Graph.chain`)."""
        graph = self.graph
        gn, dn = graph.as_node(g, self.node), graph.as_node(d, self.node)
        return Traced(graph.chain(gn, dn, self.node), graph)

    def _binary(self, op: str, a, b) -> Traced:
        return self._apply(op, (a, b))

    __add__, __radd__ = operators("add")
    __sub__, __rsub__ = operators("sub")
    __mul__, __rmul__ = operators("mul")
    __truediv__, __rtruediv__ = operators("div")
    __pow__, __rpow__ = operators("pow")
    __matmul__, __rmatmul__ = operators("matmul")
    __lt__, __le__, __gt__, __ge__ = (operators(c)[0] for c in ("lt", "le", "gt", "ge"))

    def __neg__(self) -> Traced:
        return self._apply("neg", (self,))

    def __pos__(self) -> Traced:
        return self

    def __bool__(self):
        raise Untraceable("a rule branches on the values of its inputs")

    def __repr__(self) -> str:
        return f"Traced({self.node!r}, shape={self.shape})"


class Tracing(Interpretation):
    """The program as nodes of ``graph``: each variable an input with its value."""

    def __init__(self, graph: Graph):
        self.graph = graph

    def const(self, node: Expr) -> Traced:
        value = node.value
        kind = np.complex128 if isinstance(value, complex) else np.float64
        return Traced(self.graph.const(np.asarray(value, dtype=kind)), self.graph)

    def var(self, name: str, value) -> Traced:
        return Traced(self.graph.input(name, np.asarray(parse_value(name, value))), self.graph)

    def apply(self, node: Expr, op, args: list) -> Traced:
        return Traced(self.graph.apply(op.name, args, node.attrs), self.graph)


class Trace:
    """A traced program: its graph, its inputs (name -> node, in the order given) and output."""

    def __init__(self, graph: Graph, inputs: dict[str, Node], output: Node):
        self.graph = graph
        self.inputs = inputs
        self.output = output


def trace(program: Program | Expr, values: Mapping, names: Iterable[str]) -> Trace:
    """``program`` traced at ``values``, with the inputs ``names`` (each needs a value)."""
    graph = Graph()
    names = list(dict.fromkeys(names))
    with gc_paused():
        walk = interpret(program, Tracing(graph), values, bind=names)
    inputs = {name: walk.inputs[name].node for name in names}
    for name, value in walk.inputs.items():
        inputs.setdefault(name, value.node)
    return Trace(graph, inputs, walk.result.node)


def reached(outputs: Iterable[Node]) -> list[Node]:
    """The nodes the outputs read, in the graph's order."""
    seen: dict[int, Node] = {}
    stack = list(outputs)
    while stack:
        node = stack.pop()
        if node.index in seen:
            continue
        seen[node.index] = node
        stack.extend(node.args)
    return [seen[i] for i in sorted(seen)]


def _rule(node: Node, which: str):
    op = OPS.get(node.op)
    rule = None if op is None else getattr(op, which)
    return op, rule


def gradients(trace: Trace, output: Node, wrt: Sequence[str]) -> dict[str, Node]:
    """d output / d name for each name of ``wrt`` (a scalar ``output``): the reverse sweep
    over the traced graph, each node's ``vjp`` rule called on Traced values."""
    graph = trace.graph
    wanted = {trace.inputs[name].index for name in wrt}
    order = reached([output])
    depends: dict[int, bool] = {}
    for node in order:
        if node.op == "input":
            depends[node.index] = node.index in wanted
        elif node.op == "const":
            depends[node.index] = False
        else:
            op, rule = _rule(node, "vjp")
            flags = (True, True) if op is None else op.flags(len(node.args))
            depends[node.index] = (op is None or rule is not None) and any(
                depends[a.index] and f for a, f in zip(node.args, flags)
            )
    cotangent: dict[int, Node] = {}
    if depends[output.index]:
        cotangent[output.index] = graph.const(np.ones_like(output.value))
    found: dict[int, Node] = {}
    with gc_paused():
        for node in reversed(order):
            g = cotangent.pop(node.index, None)
            if g is None:
                continue
            if node.op == "input":
                found[node.index] = g
                continue
            for arg, gi in zip(node.args, _vjp(graph, node, g, depends)):
                if gi is None:
                    continue
                prev = cotangent.get(arg.index)
                cotangent[arg.index] = gi if prev is None else graph.apply("add", (prev, gi))
    result = {}
    for name in wrt:
        node = trace.inputs[name]
        g = found.get(node.index)
        if g is not None and g.value.dtype.kind == "c" and node.value.dtype.kind != "c":
            g = graph.apply("real", (g,))  # a real input's gradient is real (as the engine's)
        result[name] = g if g is not None else graph.const(np.zeros_like(node.value))
    return result


def _vjp(graph: Graph, node: Node, g: Node, depends) -> tuple:
    needs = tuple(depends[a.index] for a in node.args)
    op = OPS[node.op]
    flags = op.flags(len(node.args))
    needs = tuple(bool(n and f) for n, f in zip(needs, flags))
    ins = tuple(Traced(a, graph) for a in node.args)
    ctx = RuleContext(op, ins, Traced(node, graph), node.attrs, needs)
    try:
        grads = op.vjp(ctx, Traced(g, graph))
    except (Untraceable, AttributeError) as exc:
        raise Untraceable(_refusal(node.op, "gradient", exc)) from None
    return tuple(
        None if gi is None or not need else graph.as_node(gi, g) for gi, need in zip(grads, needs)
    )


def _refusal(name: str, what: str, exc) -> str:
    op = OPS.get(name)
    if op is not None and op.code is not None and op.code.refused:
        return f"codegen cannot write {name}: {op.code.refused}"
    return (
        f"codegen cannot write the {what} of {name} as one formula for every point "
        f"(its rule reads the values: {exc})"
    )


def tangents(trace: Trace, outputs: Sequence[Node], seeds: Mapping[int, Node]) -> list:
    """Forward mode over the traced graph: the tangent of each of ``outputs`` (None: zero)
    when the inputs (node index -> tangent) move by ``seeds``."""
    graph = trace.graph
    tangent: dict[int, Node | None] = {}
    for node in reached(outputs):
        if node.op == "input":
            tangent[node.index] = seeds.get(node.index)
            continue
        if node.op == "const":
            tangent[node.index] = None
            continue
        ts = [tangent[a.index] for a in node.args]
        if all(t is None for t in ts):
            tangent[node.index] = None
            continue
        tangent[node.index] = _jvp(graph, node, ts)
    return [tangent[o.index] for o in outputs]


def _jvp(graph: Graph, node: Node, ts: list) -> Node | None:
    if node.op == "chain":
        return _chain_tangent(graph, node, ts)
    if node.op == "mend":  # piecewise the identity in t: the mend of t's tangent
        return None if ts[0] is None else graph.mend(ts[0], node.args[1], node.args[2])
    op = OPS[node.op]
    if op.jvp is None or op.zero_grad:  # as the engine's forward sweep: no tangent at all
        return None
    ts = [t if f else None for t, f in zip(ts, op.flags(len(ts)))]
    if all(t is None for t in ts):
        return None
    needs = tuple(t is not None for t in ts)
    ins = tuple(Traced(a, graph) for a in node.args)
    ctx = RuleContext(op, ins, Traced(node, graph), node.attrs, needs)
    traced = [None if t is None else Traced(t, graph) for t in ts]
    try:
        t = op.jvp(ctx, traced)
    except (Untraceable, AttributeError) as exc:
        raise Untraceable(_refusal(node.op, "second derivative", exc)) from None
    return None if t is None else graph.as_node(t, node)


def _chain_tangent(graph: Graph, node: Node, ts: list) -> Node:
    """The tangent of the mended product r = g*d as the engine's recorded graph has it: the
    product's own (chain(dg, d) + chain(dd, g), mul's jvp), mended where r was (g == 0 and
    g*d not finite: where(g == 0, where(r - r == 0, t, 0), t), the ops the engine records)."""
    g, d = (Traced(a, graph) for a in node.args)
    t = None
    for tangent, other in zip(ts, (d, g)):
        if tangent is not None:
            part = chain(Traced(tangent, graph), other)
            t = part if t is None else t + part
    assert t is not None  # (a node with no tangent is not swept)
    r = g * d
    if graph.chain(g.node, d.node, r.node) is r.node:
        return t.node  # the mend never applies (g has no zero, or d is finite)
    return graph.mend(graph.as_node(t, node), g.node, r.node)


def hessian(trace: Trace, grads: Mapping[str, Node], wrt: Sequence[str]) -> dict:
    """Forward over reverse: H[a][b] = d grad_a / d b, one tangent sweep per element of each
    ``b`` (shape(a) + shape(b) each)."""
    graph = trace.graph
    outputs = [grads[a] for a in wrt]
    sweeps = sum(trace.inputs[b].value.size for b in wrt)
    statements = len(reached(outputs)) * sweeps
    if statements > graph.max_nodes:
        raise LimitError(
            f"the Hessian's code would take about {statements:,} statements (one forward "
            f"sweep of the gradient's {len(reached(outputs)):,} per input element, {sweeps:,} "
            f"of them); at most {graph.max_nodes:,}"
        )
    result: dict[str, dict[str, Node]] = {a: {} for a in wrt}
    for b in wrt:
        node = trace.inputs[b]
        size = node.value.size
        columns: dict[str, list] = {a: [] for a in wrt}
        for k in range(size):
            seed = np.zeros_like(node.value)
            seed.flat[k] = 1.0
            for a, t in zip(wrt, tangents(trace, outputs, {node.index: graph.const(seed)})):
                zero = graph.const(np.zeros_like(trace.inputs[a].value))
                columns[a].append(zero if t is None else _shaped(graph, t, trace.inputs[a]))
        for a in wrt:
            result[a][b] = _assemble(graph, columns[a], trace.inputs[a].value, node.value)
    return result


def _shaped(graph: Graph, t: Node, like: Node) -> Node:
    if t.value.shape == like.value.shape:
        return t
    return graph.apply("broadcast_to", (t,), {"shape": like.value.shape})


def _assemble(graph: Graph, columns: list, a_value, b_value) -> Node:
    """The block shape(a) + shape(b) of the columns d grad_a / d b_k."""
    if b_value.ndim == 0:
        return columns[0]
    stacked = (
        graph.apply("stack_axis", tuple(columns), {"axis": -1})
        if len(columns) > 1
        else (graph.apply("reshape", (columns[0],), {"shape": a_value.shape + (1,)}))
    )
    return graph.apply("reshape", (stacked,), {"shape": a_value.shape + b_value.shape})


def check_scalar(node: Node, command: str = "grad") -> None:
    """A gradient needs a scalar output (grad's error, and its ways out)."""
    if node.value.ndim != 0:
        raise non_scalar_error(node.value.shape, command)
