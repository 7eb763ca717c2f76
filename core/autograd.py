"""Reverse mode: grad mode, the graph's Nodes, and ``backward`` and ``grad`` with PyTorch's semantics.

The graph is walked without recursion: one iterative pass counts, for every
Node reachable from the outputs, how many consumers it has; a second pass
processes a Node once all its consumers have handed it their cotangents
(Kahn's algorithm).  Each cotangent is dropped as soon as it is used, and a
gradient that never arrives stays absent (None) instead of becoming a zero.

This module sits below :mod:`.tensor` and never imports it (``Tensor.backward``
calls :func:`backward` here): the tensors it makes (seeds, reshaped gradients)
are of the class of the tensors it is given.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterable, Sequence
from operator import attrgetter
from typing import Any

from . import backend, limits
from .errors import GradError, NonScalarOutputError, ShapeError
from .toposort import toposort

# A core.tensor.Tensor: not imported, as tensor.py imports this module.
TensorLike = Any


class _GradMode(threading.local):
    """Grad mode, per thread (as PyTorch's): on until a thread turns it off."""

    grad_enabled = True  # the class attribute: a new thread's value, without a getattr default


_state = _GradMode()


def is_grad_enabled() -> bool:
    return _state.grad_enabled


def set_grad_enabled(mode: bool) -> None:
    _state.grad_enabled = bool(mode)


@contextlib.contextmanager
def no_grad():
    """Context manager: ops inside record no graph (like ``torch.no_grad()``).

    >>> from autograd_cli.core import tensor
    >>> x = tensor(2.0, requires_grad=True)
    >>> with no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """
    previous = is_grad_enabled()
    set_grad_enabled(False)
    try:
        yield
    finally:
        set_grad_enabled(previous)


@contextlib.contextmanager
def enable_grad():
    """Context manager: turn grad mode back on inside a ``no_grad`` block."""
    previous = is_grad_enabled()
    set_grad_enabled(True)
    try:
        yield
    finally:
        set_grad_enabled(previous)


@contextlib.contextmanager
def gc_paused():
    """Pause the cyclic garbage collector while a graph is built or walked.

    Each op allocates a few small objects (a tensor, a Node, tuples) and no reference
    cycles; the collector's repeated scans of a heap that keeps growing only add time.
    Reference counting still frees everything.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class AccumulateGrad:
    """The graph node standing for a leaf that requires grad (as in PyTorch)."""

    __slots__ = ("variable",)

    def __init__(self, variable: TensorLike):
        self.variable = variable

    def name(self) -> str:
        return "AccumulateGrad"

    @property
    def next_functions(self):
        return ()

    def __repr__(self) -> str:
        return "<AccumulateGrad>"


class Node:
    """One recorded op application: the ``grad_fn`` of the tensor it produced.

    ``edges[i]`` says where the gradient for input i goes: the input's own Node,
    the input tensor itself when it is a leaf that requires grad, or None;
    ``needs[i]`` is whether it goes anywhere, ``shapes[i]`` input i's shape.
    ``saved_inputs`` and ``saved_data`` (the output's array) are what the op's rules
    read; backward without ``retain_graph`` releases them.  :func:`.tensor.apply` makes
    them (with the shapes and needs it has at hand: a pair of numbers shares one tuple).
    """

    __slots__ = (
        "op",
        "attrs",
        "edges",
        "saved_inputs",
        "saved_data",
        "shapes",
        "needs",
        "released",
        "__weakref__",
    )

    def __init__(self, op, inputs: tuple, data, attrs: dict, edges: tuple, needs, shapes):
        self.op = op
        self.attrs = attrs
        self.edges = edges
        self.needs = needs
        self.shapes = shapes
        # The output is kept as its array, never as the Tensor itself: out.grad_fn is this
        # Node, so a reference to it would make every recorded op a reference cycle, freed
        # only by the cyclic garbage collector.  ``out`` rebuilds it (same data, this Node).
        self.saved_inputs: tuple | None = inputs
        self.saved_data: Any = data
        self.released = False

    # The op rules read these -------------------------------------------------
    @property
    def inputs(self) -> tuple:
        if self.released:
            _freed()
        assert self.saved_inputs is not None  # not released, so release() has not cleared it
        return self.saved_inputs

    @property
    def out(self) -> TensorLike:
        """The output tensor: a tensor of the inputs' class on the output's array, whose
        ``grad_fn`` is this Node (a Node always has inputs: apply records one only when an
        input requires grad)."""
        if self.released:
            _freed()
        assert self.saved_inputs is not None
        return self.saved_inputs[0].__class__._wrap(self.saved_data, self)

    def _check_saved(self) -> None:
        if self.released:
            _freed()

    def release(self) -> None:
        if self.op.saves:
            self.saved_inputs = self.saved_data = None
            self.released = True

    # PyTorch-like introspection ---------------------------------------------
    def name(self) -> str:
        return self.op.node_name(self)

    @property
    def next_functions(self):
        result = []
        for e in self.edges:
            if e is None:
                result.append((None, 0))
            elif isinstance(e, Node):
                result.append((e, 0))
            else:
                result.append((AccumulateGrad(e), 0))
        return tuple(result)

    def __repr__(self) -> str:
        return f"<{self.name()}>"


def _freed():
    raise GradError(
        "Trying to backward through the graph a second time, but the buffers have "
        "already been freed. Specify retain_graph=True when calling backward the first time."
    )


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    if isinstance(x, (list, tuple)):
        return tuple(x)
    return (x,)


def _as_tensor(value, like: TensorLike) -> TensorLike:
    """``value`` as a tensor of ``like``'s class, a number taking its dtype (``tensor.as_tensor``)."""
    cls = type(like)
    if isinstance(value, cls):
        return value
    return cls._wrap(backend.asarray(value, dtype=like.data.dtype))


def _single(tensors) -> bool:
    """One tensor rather than a list or tuple of them (see ``_as_tuple``)."""
    return tensors is not None and not isinstance(tensors, (list, tuple))


def _make_seeds(
    outputs: Sequence[TensorLike], grad_outputs, create_graph: bool
) -> list[TensorLike]:
    grad_outputs = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise GradError(
            f"grad_outputs has {len(grad_outputs)} entries but there are {len(outputs)} outputs"
        )
    seeds = []
    for out, g in zip(outputs, grad_outputs):
        if g is None:
            if out.size != 1:
                raise NonScalarOutputError(
                    "grad can be implicitly created only for scalar outputs", shape=list(out.shape)
                )
            if out.data.dtype.kind == "c":
                raise NonScalarOutputError(
                    "grad can be implicitly created only for real scalar outputs",
                    shape=list(out.shape),
                )
            g = _as_tensor(1.0, like=out)
            g = type(out)._wrap(g.data.reshape(out.data.shape))
        else:
            g = _as_tensor(g, like=out)
            if tuple(g.shape) != tuple(out.shape):
                raise ShapeError(
                    f"Mismatch in shape: grad_output has shape {tuple(g.shape)} and output has "
                    f"shape {tuple(out.shape)}",
                    expected=list(out.shape),
                    got=list(g.shape),
                )
            if not create_graph:
                g = g.detach()
        seeds.append(g)
    return seeds


def _accumulate(buffer: dict, key, g):
    prev = buffer.get(key)
    buffer[key] = g if prev is None else prev + g


def _run(outputs, seeds, retain_graph: bool, create_graph: bool, capture: dict | None):
    """Propagate ``seeds`` back from ``outputs``.

    Returns {leaf tensor: gradient} for every leaf reached.  When ``capture``
    maps Nodes to None, the total cotangent reaching each of those Nodes is
    stored there (this is how ``grad`` gets gradients of non-leaf inputs).
    """
    deps = _consumers(outputs)
    buffers: dict[Node, TensorLike] = {}
    leaves: dict[TensorLike, TensorLike] = {}
    cls = type(outputs[0].detach())  # the class of what detach makes: a gradient's
    # Without create_graph, on the host, the cotangents travel as arrays: an op whose rules
    # take them (Op.arrays, the rules' array form) computes on its saved arrays with no
    # Tensor made; another is handed a Tensor of it (_tensor_rule). Each gradient becomes a
    # tensor of its own at the end (as ``detach`` makes one), never shared with another.
    arrays = not create_graph and all(s.data.__class__ in _HOST_DATA for s in seeds)
    ready = _seeded(outputs, [s.data for s in seeds] if arrays else seeds, deps, buffers, leaves)

    # Pass 2: process each Node after all its consumers.  Without create_graph, the rules run
    # in no-grad mode, so what they return records nothing: a cotangent is detached only if it
    # is a tensor of the graph (a rule handing back a saved input), and each one reaching a
    # leaf becomes a tensor of its own (as ``detach`` makes one), never shared with another.
    token = backend.quiet_enter()  # every rule's ops run with the IEEE semantics already set
    mode = _state.grad_enabled  # grad mode, set for the walk (no_grad/enable_grad, inline)
    _state.grad_enabled = bool(create_graph)
    detach = not create_graph and not arrays
    capture = capture or None  # an empty one asks for nothing: no lookup per Node
    try:
        with gc_paused():
            while ready:
                node, g = ready.pop()
                if capture is not None and g is not None and node in capture:
                    capture[node] = cls._wrap(g) if arrays else g.detach() if detach else g
                op = node.op
                if g is None:
                    grads: Any = _NO_GRADS
                elif arrays and not op.arrays:
                    grads = _tensor_rule(node, cls._wrap(g))
                else:
                    if op.saves and node.released:
                        _freed()
                    grads = op.vjp(node, g)
                for edge, gi in zip(node.edges, grads or _NO_GRADS):
                    if edge is None:
                        continue
                    if edge.__class__ is Node:
                        if gi is not None and detach and gi.requires_grad:
                            gi = gi.detach()
                        left = deps[edge] - 1
                        deps[edge] = left
                        prev = buffers.pop(edge, None) if buffers else None
                        if prev is not None:
                            gi = prev if gi is None else prev + gi
                        if left == 0:
                            ready.append((edge, gi))
                        elif gi is not None:
                            buffers[edge] = gi
                    elif gi is not None:
                        if detach:
                            gi = gi.detach()
                        prev = leaves.get(edge)
                        leaves[edge] = gi if prev is None else prev + gi
                if not retain_graph and op.saves:
                    node.saved_inputs = node.saved_data = None  # node.release(), inline
                    node.released = True
    finally:
        backend.quiet_exit(token)
        _state.grad_enabled = mode
    if arrays:
        return {leaf: cls._wrap(g) for leaf, g in leaves.items()}
    return leaves


def _seeded(outputs, seeds, deps: dict, buffers: dict, leaves: dict) -> list:
    """Hand each output its seed (a leaf's to ``leaves``): the (node, its total cotangent)
    ready to run: a Node is ready once its last consumer has handed it its part; the parts
    of the consumers before the last wait in ``buffers``."""
    roots: list[Node] = []
    for out, g in zip(outputs, seeds):
        if out.grad_fn is not None:
            _accumulate(buffers, out.grad_fn, g)
            if out.grad_fn not in roots:
                roots.append(out.grad_fn)
        elif out.requires_grad:
            _accumulate(leaves, out, g)
    return [(n, buffers.pop(n, None)) for n in roots if deps[n] == 0]


def _tensor_rule(node, g):
    """The cotangents of ``node``, whose rules take Tensors, for the Tensor ``g``, as the
    arrays the walk of :func:`_run` carries (nothing is recorded: none is of a graph)."""
    if node.op.saves and node.released:
        _freed()
    grads = node.op.vjp(node, g)
    if grads is None:
        return None
    return tuple([None if gi is None else gi.data for gi in grads])


#: The classes of a host array (NumPy's; the device's keep their Tensors in the walk)
_HOST_DATA = frozenset((backend.host.ndarray, backend.host.float64, backend.host.float32))


class _NoGrads:
    """The cotangents of a Node no gradient reached (or whose rule gave None): None for
    each of its inputs, however many."""

    __slots__ = ()

    def __getitem__(self, i):
        return None

    def __iter__(self):
        return self

    def __next__(self):
        return None


_NO_GRADS = _NoGrads()


def _consumers(outputs) -> dict:
    """For every Node reachable from ``outputs``: how many Nodes consume it (iteratively)."""
    deps: dict[Node, int] = {}
    stack: list[Node] = []
    for out in outputs:
        if out.grad_fn is not None and out.grad_fn not in deps:
            deps[out.grad_fn] = 0
            stack.append(out.grad_fn)
    pop, push = stack.pop, stack.append
    while stack:
        for edge in pop().edges:
            if edge.__class__ is Node:
                if edge in deps:
                    deps[edge] += 1
                else:
                    deps[edge] = 1
                    push(edge)
    return deps


def backward(
    tensors, grad_tensors=None, retain_graph=None, create_graph: bool = False, inputs=None
) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves (``torch.autograd.backward``).

    >>> from autograd_cli.core import tensor
    >>> a = tensor([1., 2.], requires_grad=True)
    >>> b = a ** 2 + 1
    >>> backward(b, tensor([1., 1.]))
    >>> a.grad
    tensor([2., 4.])
    """
    if _single(tensors):
        grad_tensors = None if grad_tensors is None else (grad_tensors,)
    outputs = _as_tuple(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    for out in outputs:
        if not out.requires_grad:
            raise GradError(
                "element 0 of tensors does not require grad and does not have a grad_fn"
            )
    seeds = _make_seeds(outputs, grad_tensors, create_graph)
    leaves = _run(outputs, seeds, retain_graph, create_graph, None)
    wanted = None if inputs is None else {id(t) for t in _as_tuple(inputs)}
    for leaf, g in leaves.items():
        if wanted is not None and id(leaf) not in wanted:
            continue
        g = _in_dtype_of(leaf, g)
        if g.shape != leaf.shape:
            g = type(leaf)._wrap(g.data.reshape(leaf.data.shape))
        leaf.grad = g if leaf.grad is None else leaf.grad + g


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph: bool = False,
    allow_unused: bool = False,
):
    """Gradients of ``outputs`` with respect to ``inputs`` (``torch.autograd.grad``), as a tuple.

    Nothing is accumulated into ``.grad``.  With ``create_graph=True`` the
    results carry their own graph, so they can be differentiated again.

    >>> from autograd_cli.core import tensor
    >>> x = tensor(2.0, requires_grad=True)
    >>> (dx,) = grad(3 * (x + 2) ** 2, x, create_graph=True)
    >>> dx, grad(dx, x)[0]
    (tensor(24., grad_fn=<MulBackward0>), tensor(6.))
    """
    if _single(outputs):
        grad_outputs = None if grad_outputs is None else (grad_outputs,)
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    if retain_graph is None:
        retain_graph = create_graph
    for i, out in enumerate(outs):
        if not out.requires_grad:
            raise GradError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
    for t in ins:
        if not t.requires_grad:
            raise GradError("One of the differentiated Tensors does not require grad")
    seeds = _make_seeds(outs, grad_outputs, create_graph)
    capture = {t.grad_fn: None for t in ins if t.grad_fn is not None}
    leaves = _run(outs, seeds, retain_graph, create_graph, capture)
    result = []
    for t in ins:
        g = capture.get(t.grad_fn) if t.grad_fn is not None else leaves.get(t)
        if g is not None:
            g = _in_dtype_of(t, g)
        if g is None and not allow_unused:
            raise GradError(
                "One of the differentiated Tensors appears to not have been used in the graph. "
                "Set allow_unused=True if this is the desired behavior."
            )
        if g is not None and g.shape != t.shape:
            g = g.reshape(t.shape) if create_graph else type(t)._wrap(g.data.reshape(t.data.shape))
        result.append(g)
    return tuple(result)


def _in_dtype_of(t, g):
    """``t``'s gradient ``g`` in ``t``'s dtype, as PyTorch hands it: a real tensor's is the
    real part of a complex one (a real input of an op with a complex result, PyTorch's
    handle_r_to_c), and one the graph computed in another dtype is cast (a float32 leaf in a
    float64 graph: ToCopyBackward0); both recorded under create_graph."""
    dtype = t.data.dtype
    if g.data.dtype.kind == "c" and dtype.kind != "c":
        g = g.real
    if g.data.dtype == dtype:
        return g
    return g._call("astype", g, dtype=dtype.name, source=g.data.dtype.name)


def new_nodes(outputs: Iterable[TensorLike], seen: set[int]) -> int:
    """How many Nodes reachable from ``outputs`` are not in ``seen`` (their ids), which gets
    them: a graph grown step by step (repeated differentiation) is counted in time linear
    in its final size, not once per step."""
    roots = [out.grad_fn for out in outputs if out.grad_fn is not None]
    return len(toposort(roots, attrgetter("edges"), seen, kind=Node))


class GraphGrowth:
    """Repeated differentiation's graph, counted order by order as it grows (only the new
    Nodes each time: :func:`new_nodes`) and refused once on course past the memory limit by
    ``order`` (:func:`.limits.check_growth`: ``why`` Taylor mode was not used, ``node_bytes``
    a Node).  It holds what it counted, so that a Node freed with an earlier order cannot
    lend its id to a new one, which would then go uncounted."""

    def __init__(self, order: int, why: str | None = None, node_bytes: int = limits.NODE_BYTES):
        self.order = order
        self.why = why
        self.node_bytes = node_bytes
        self.sizes: list[int] = []  # the nodes up to each order
        self._seen: set[int] = set()
        self._held: list = []

    def add(self, outputs: Sequence[TensorLike]) -> None:
        """Count the next order's ``outputs`` in, and refuse where the growth says to."""
        self._held.append(outputs)
        new = new_nodes(outputs, self._seen)
        self.sizes.append(new + (self.sizes[-1] if self.sizes else 0))
        limits.check_growth(self.sizes, self.order, self.why, self.node_bytes)


def topological_nodes(outputs: Iterable[TensorLike], stop: Iterable[Node] = ()) -> list[Node]:
    """Every Node reachable from ``outputs``, each after all of its inputs (iterative post-order).

    The walk does not enter the Nodes in ``stop`` (nor what lies behind them).
    """
    roots = [out.grad_fn for out in outputs if out.grad_fn is not None]
    roots.reverse()  # the last output's graph first, as the walk has always taken them
    return toposort(roots, attrgetter("edges"), {id(n) for n in stop}, kind=Node)
