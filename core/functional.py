"""Whole-function derivatives with the conventions of ``torch.autograd.functional``.

``jacobian``, ``hessian``, ``vjp``, ``jvp``, ``hvp`` and ``vhp`` take a
function of Tensors and its inputs (a Tensor, or a tuple of Tensors) and
nest their results the way PyTorch does: a Tensor in and a Tensor out gives
a Tensor; a tuple on either side gives a tuple; tuples on both sides give a
tuple of tuples indexed ``[output][input]``.  A Jacobian block has shape
``output.shape + input.shape``; a Hessian block ``H[i][j]`` has shape
``inputs[i].shape + inputs[j].shape``.

How they are computed:

* reverse mode (``vjp``, reverse Jacobians): one backward pass per output element;
* forward mode (``jvp``, forward Jacobians): the tangent sweep of
  :mod:`.forward`, all basis directions at once (in chunks) with
  ``vectorize=True``;
* Hessians and ``hvp``: forward-over-reverse, i.e. the gradient is computed
  with ``create_graph=True`` and the forward sweep runs over its graph, all
  n directions in one batched sweep.  A 1,000-variable Hessian is one sweep
  over arrays of 1000 x 1000, not 1,000 backward passes.

``derivative`` and ``derivatives`` give n-th derivatives by repeated
``grad(..., create_graph=True)``.  ``gradcheck`` (analytic Jacobians against
central finite differences) is :mod:`.gradcheck`; the same operations on a
parsed program and a dict of values (``program_jacobian``, ...) are
:mod:`.program_functional`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from . import backend, limits
from .autograd import GraphGrowth, grad
from .errors import GradError, NonScalarOutputError, ShapeError
from .forward import Tape, basis, prepare_inputs, zeros_tangent
from .tensor import Tensor, enable_grad, no_grad

__all__ = [
    "jacobian",
    "hessian",
    "vjp",
    "jvp",
    "hvp",
    "vhp",
    "derivative",
    "derivatives",
]

# Largest batched tangent a chunk may hold, in elements (2**22 float64 = 32 MiB).
CHUNK_ELEMENTS = 1 << 22


# ---------------------------------------------------------------------------
# Plumbing
# ---------------------------------------------------------------------------


def _as_tuple(x) -> tuple:
    return tuple(x) if isinstance(x, (list, tuple)) else (x,)


def _check_inputs(inputs, what: str) -> tuple:
    xs = _as_tuple(inputs)
    out = []
    for i, x in enumerate(xs):
        if not isinstance(x, Tensor):
            raise TypeError(
                f"The inputs given to {what} must be Tensors; input {i} is a {type(x).__name__}"
            )
        if x.data.dtype.kind != "f":
            raise TypeError(f"{what}: input {i} has dtype {x.data.dtype}, expected floating point")
        out.append(x)
    return tuple(out)


def _check_outputs(out, what: str) -> tuple:
    outs = _as_tuple(out)
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            raise TypeError(
                f"The outputs of the function given to {what} must be Tensors; "
                f"output {i} is a {type(o).__name__}"
            )
    return outs


def _zeros(shape, like: Tensor) -> Tensor:
    return Tensor._wrap(backend.xp.zeros(tuple(shape), dtype=like.data.dtype))


def _numel(shape) -> int:
    return math.prod(shape) if shape else 1


def _finish(t: Tensor, create_graph: bool) -> Tensor:
    return t if create_graph else t.detach()


def _rows_to_block(rows: Tensor, out_shape: tuple, in_shape: tuple) -> Tensor:
    """(n_in, *out_shape), one row per input direction -> the block (*out_shape, *in_shape)."""
    n, m = _numel(in_shape), _numel(out_shape)
    flat = rows.reshape((n, m))
    return flat.mT.reshape(tuple(out_shape) + tuple(in_shape))


def _concat_rows(chunks: list, create_graph: bool) -> Tensor:
    """Chunks of shape (b_k, *s) stacked along axis 0 into (sum b_k, *s)."""
    if len(chunks) == 1:
        return chunks[0]
    if not create_graph:
        return Tensor._wrap(backend.xp.concatenate([c.data for c in chunks], axis=0))
    total = sum(c.shape[0] for c in chunks)
    shape = (total,) + tuple(chunks[0].shape[1:])
    result = None
    start = 0
    for c in chunks:
        stop = start + c.shape[0]
        placed = c._call("scatter", c, index=(slice(start, stop),), shape=shape)
        result = placed if result is None else result + placed
        start = stop
    assert result is not None  # chunks is not empty: chunks[0] was read above
    return result


def _slice_rows(t: Tensor, start: int, stop: int) -> Tensor:
    if start == 0 and stop == t.shape[0]:
        return t
    return t[start:stop]


def _nest(blocks, inputs_tuple: bool, outputs_tuple: bool):
    """blocks[i][j] ([output][input]) nested as torch.autograd.functional.jacobian does."""
    if outputs_tuple and inputs_tuple:
        return tuple(tuple(row) for row in blocks)
    if outputs_tuple:
        return tuple(row[0] for row in blocks)
    if inputs_tuple:
        return tuple(blocks[0])
    return blocks[0][0]


#: the strategies :func:`jacobian` and :func:`hessian` take (``forward-mode`` is ``forward``)
STRATEGIES = ("auto", "forward", "reverse")


def _strategy(name: str) -> str:
    mode = name.removesuffix("-mode") if name in ("forward-mode", "reverse-mode") else name
    if mode not in STRATEGIES:
        raise ValueError(f"unknown strategy {name!r} (choose auto, forward or reverse)")
    return mode


def _chunk_size(n: int, tape_max: int, chunk_size: int | None) -> int:
    if chunk_size is not None:
        return max(1, min(n, int(chunk_size)))
    return max(1, min(n, CHUNK_ELEMENTS // max(1, tape_max)))


# ---------------------------------------------------------------------------
# Jacobians
# ---------------------------------------------------------------------------


def _check_blocks(outs, xs, what: str) -> None:
    """Refuse derivative blocks over the memory limit before computing any (core.limits)."""
    n = sum(o.size for o in outs) * sum(x.size for x in xs)
    dtype = xs[0].data.dtype if xs else backend.default_dtype
    limits.check(n, backend.host.dtype(dtype).itemsize, what)


def _forward_blocks(outs, xs, create_graph, vectorize, chunk_size=None, what="the Jacobian"):
    """blocks[i][j] = d outs[i] / d xs[j] by forward sweeps over the recorded graph of ``outs``."""
    _check_blocks(outs, xs, what)
    sizes = [x.size for x in xs]
    shapes = [tuple(x.shape) for x in xs]
    total = sum(sizes)
    tape = Tape(outs, xs)
    dtype = xs[0].data.dtype if xs else backend.default_dtype
    per_output: list[list] = [[] for _ in outs]
    mode = enable_grad() if create_graph else no_grad()
    with mode:
        if vectorize:
            step = _chunk_size(total, tape.max_size, chunk_size)
            for start in range(0, total, step):
                stop = min(total, start + step)
                tangents = basis(sizes, shapes, start, stop, dtype)
                results = tape.run(tangents, stop - start)
                for i, (o, r) in enumerate(zip(outs, results)):
                    per_output[i].append(zeros_tangent(o, stop - start) if r is None else r)
        else:
            for k in range(total):
                tangents = [
                    None if t is None else t.reshape(t.shape[1:])
                    for t in basis(sizes, shapes, k, k + 1, dtype)
                ]
                results = tape.run(tangents, None)
                for i, (o, r) in enumerate(zip(outs, results)):
                    r = zeros_tangent(o) if r is None else r
                    per_output[i].append(r.reshape((1,) + tuple(o.shape)))
        blocks = []
        for i, o in enumerate(outs):
            if total == 0:  # no input entries: no sweeps, every block is empty
                blocks.append([_zeros(tuple(o.shape) + tuple(x.shape), x) for x in xs])
                continue
            rows = _concat_rows(per_output[i], create_graph)
            row_blocks = []
            offset = 0
            for x in xs:
                part = _slice_rows(rows, offset, offset + x.size)
                row_blocks.append(_rows_to_block(part, tuple(o.shape), tuple(x.shape)))
                offset += x.size
            blocks.append(row_blocks)
    return blocks


def _reverse_blocks(outs, xs, create_graph, what="the Jacobian"):
    """blocks[i][j] = d outs[i] / d xs[j] by one backward pass per output element."""
    _check_blocks(outs, xs, what)
    blocks = []
    xp = backend.xp
    for o in outs:
        m = o.size
        if not o.requires_grad or m == 0:  # no entries to seed: the blocks are zeros (or empty)
            blocks.append([_zeros(tuple(o.shape) + tuple(x.shape), x) for x in xs])
            continue
        rows: list[list] = [[] for _ in xs]
        for k in range(m):
            seed = xp.zeros(m, dtype=o.data.dtype)
            seed[k] = 1
            seed = Tensor._wrap(seed.reshape(o.data.shape))
            gs = grad(
                o,
                xs,
                grad_outputs=seed,
                retain_graph=True,
                create_graph=create_graph,
                allow_unused=True,
            )
            for j, (x, g) in enumerate(zip(xs, gs)):
                rows[j].append(_zeros(x.shape, x) if g is None else g)
        row_blocks = []
        for j, x in enumerate(xs):
            if create_graph:
                stacked = rows[j][0]._call("stack", *rows[j])
            else:
                stacked = Tensor._wrap(xp.stack([r.data for r in rows[j]]))
            row_blocks.append(stacked.reshape(tuple(o.shape) + tuple(x.shape)))
        blocks.append(row_blocks)
    return blocks


def _blocks(outs, xs, sweeps: tuple, strict: bool, name: str, what: str) -> list:
    """blocks[i][j] = d outs[i] / d xs[j], finished, for ``name``'s ``what`` (the Hessian is
    the Jacobian of the gradients): ``sweeps`` is (reverse, create_graph, vectorize,
    chunk_size), one backward pass per output element or forward sweeps; ``strict`` refuses
    a block of an output that does not depend on its input."""
    reverse, create_graph, vectorize, chunk_size = sweeps
    if reverse:
        blocks = _reverse_blocks(outs, xs, create_graph, what=what)
    else:
        blocks = _forward_blocks(outs, xs, create_graph, vectorize, chunk_size, what=what)
    if strict:
        _check_strict(blocks, outs, xs, name)
    return [[_finish(b, create_graph) for b in row] for row in blocks]


def _check_strict(blocks, outs, xs, what):
    for i, row in enumerate(blocks):
        for j, b in enumerate(row):
            if not backend.any_nonzero(b.data != 0) and not _depends(outs[i], xs[j]):
                raise GradError(
                    f"{what}: output {i} of the user-provided function is "
                    f"independent of input {j}. This is not allowed in strict mode."
                )


def _depends(out: Tensor, x: Tensor) -> bool:
    tape = Tape([out], [x])
    if out is x:
        return True
    target = id(x.grad_fn) if x.grad_fn is not None else None
    for node in tape.order:
        for inp in node.inputs:
            if inp is x or (target is not None and id(inp.grad_fn) == target):
                return True
    return False


def jacobian(
    func: Callable,
    inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = True,
    strategy: str = "auto",
    chunk_size: int | None = None,
):
    """The Jacobian of ``func`` at ``inputs`` (``torch.autograd.functional.jacobian``).

    ``strategy``: ``"reverse"`` (one backward pass per output element),
    ``"forward"`` (forward sweeps over the input directions, batched when
    ``vectorize``), or ``"auto"``: forward when the inputs have no more
    elements than the outputs, reverse otherwise.  PyTorch's spellings
    ``"reverse-mode"``/``"forward-mode"`` are accepted.

    >>> from autograd_cli.core import tensor
    >>> jacobian(lambda x: x ** 2, tensor([1., 2.]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    strategy = _strategy(strategy)
    inputs_tuple = isinstance(inputs, (list, tuple))
    xs0 = _check_inputs(inputs, "jacobian")
    xs = prepare_inputs(xs0, create_graph)
    with enable_grad():
        out = func(*xs)
    outputs_tuple = isinstance(out, (list, tuple))
    outs = _check_outputs(out, "jacobian")
    if strategy == "auto":
        n_in = sum(x.size for x in xs)
        n_out = sum(o.size for o in outs)
        strategy = "forward" if n_in <= n_out else "reverse"
    sweeps = (strategy == "reverse", create_graph, vectorize, chunk_size)
    blocks = _blocks(outs, xs, sweeps, strict, "jacobian", "the Jacobian")
    return _nest(blocks, inputs_tuple, outputs_tuple)


# ---------------------------------------------------------------------------
# Hessians
# ---------------------------------------------------------------------------


def _scalar_output(out, what: str) -> Tensor:
    if isinstance(out, (list, tuple)):
        if len(out) != 1:
            raise GradError(f"The function given to {what} should return a single Tensor")
        out = out[0]
    if not isinstance(out, Tensor):
        raise TypeError(
            f"The function given to {what} should return a Tensor, got {type(out).__name__}"
        )
    if out.size != 1:
        raise NonScalarOutputError(
            f"The Tensor returned by the function given to {what} should contain a single "
            f"element (it has shape {tuple(out.shape)})",
            shape=list(out.shape),
        )
    return out


def _gradients(y: Tensor, xs: tuple) -> list:
    """dy/dx for each x with create_graph=True; zeros (no graph) where y does not depend on x."""
    if not y.requires_grad:
        return [_zeros(x.shape, x) for x in xs]
    with enable_grad():
        gs = grad(y, xs, create_graph=True, allow_unused=True)
    return [_zeros(x.shape, x) if g is None else g for g, x in zip(gs, xs)]


def hessian(
    func: Callable,
    inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = True,
    outer_jacobian_strategy: str = "forward-mode",
    chunk_size: int | None = None,
):
    """The Hessian of a scalar ``func`` at ``inputs`` (``torch.autograd.functional.hessian``).

    A single input gives one Tensor of shape ``x.shape + x.shape``; a tuple
    gives ``H[i][j]`` of shape ``inputs[i].shape + inputs[j].shape``.

    ``outer_jacobian_strategy="forward-mode"`` (the default here) is
    forward-over-reverse: one batched tangent sweep over the gradient's graph
    (chunks of at most ``CHUNK_ELEMENTS`` tangent elements, or ``chunk_size``
    directions).  ``"reverse-mode"`` is reverse-over-reverse: one backward
    pass over the gradient's graph per input element.

    >>> from autograd_cli.core import tensor
    >>> hessian(lambda x: (x ** 3).sum(), tensor([1., 2.]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    strategy = _strategy(outer_jacobian_strategy)
    inputs_tuple = isinstance(inputs, (list, tuple))
    xs0 = _check_inputs(inputs, "hessian")
    xs = prepare_inputs(xs0, create_graph)
    with enable_grad():
        y = _scalar_output(func(*xs), "hessian")
    gs = _gradients(y, xs)
    sweeps = (strategy == "reverse", create_graph, vectorize, chunk_size)
    blocks = _blocks(gs, xs, sweeps, strict, "hessian", "the Hessian")
    if inputs_tuple:
        return tuple(tuple(row) for row in blocks)
    return blocks[0][0]


# ---------------------------------------------------------------------------
# Products: vjp, jvp, hvp, vhp
# ---------------------------------------------------------------------------


def _match(v, xs, what: str, name: str) -> tuple:
    if v is None:
        for x in xs:
            if x.size != 1:
                raise GradError(
                    f"The vector v can only be None if the {name} is a single "
                    f"element Tensor ({what})"
                )
        return tuple(Tensor._wrap(backend.xp.ones(x.data.shape, dtype=x.data.dtype)) for x in xs)
    vs = _as_tuple(v)
    if len(vs) != len(xs):
        raise ShapeError(f"{what}: v has {len(vs)} entries but there are {len(xs)} {name}s")
    out = []
    for i, (vi, x) in enumerate(zip(vs, xs)):
        if vi is None:  # PyTorch's check: a missing entry is not a zero (nor a nan)
            raise TypeError(
                f"The v given to {what} must be either a Tensor or a tuple of Tensors but the "
                f"value at index {i} has type NoneType"
            )
        vi = vi if isinstance(vi, Tensor) else Tensor(vi, dtype=x.data.dtype)
        if tuple(vi.shape) != tuple(x.shape):
            raise ShapeError(
                f"{what}: v has shape {tuple(vi.shape)} but the {name} has shape {tuple(x.shape)}",
                expected=list(x.shape),
                got=list(vi.shape),
            )
        out.append(vi)
    return tuple(out)


def _shape_like(result, template_is_tuple: bool):
    return tuple(result) if template_is_tuple else result[0]


def vjp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T J)`` by one backward pass (``torch.autograd.functional.vjp``).

    >>> from autograd_cli.core import tensor
    >>> vjp(lambda x: x ** 2, tensor([1., 2.]), tensor([1., 1.]))[1]
    tensor([2., 4.])
    """
    inputs_tuple = isinstance(inputs, (list, tuple))
    xs = prepare_inputs(_check_inputs(inputs, "vjp"), create_graph)
    with enable_grad():
        out = func(*xs)
    outputs_tuple = isinstance(out, (list, tuple))
    outs: Sequence[Tensor] = _check_outputs(out, "vjp")
    vs = _match(v, outs, "vjp", "output")
    gs = _pullback(outs, vs, xs, create_graph, retain_graph=create_graph)
    if strict and any(g is None for g in gs):
        raise GradError(
            "vjp: the output of the user-provided function is independent of an "
            "input. This is not allowed in strict mode."
        )
    gs = _filled(gs, xs, create_graph)
    outs = [_finish(o, create_graph) for o in outs]
    return _shape_like(outs, outputs_tuple), _shape_like(gs, inputs_tuple)


def _pullback(outs, vs, xs, create_graph: bool, retain_graph: bool):
    """The gradients of ``outs`` weighted by ``vs`` (a vector-Jacobian product) with respect
    to each of ``xs``; None for an x no output that requires grad reaches."""
    live = [(o, vi) for o, vi in zip(outs, vs) if o.requires_grad]
    if not live:
        return (None,) * len(xs)
    with enable_grad():
        return grad(
            [o for o, _ in live],
            xs,
            grad_outputs=[vi for _, vi in live],
            create_graph=create_graph,
            retain_graph=retain_graph,
            allow_unused=True,
        )


def _filled(gs, xs, create_graph: bool) -> list:
    """Each gradient finished, zeros (of its input's shape) where it is None."""
    return [_finish(_zeros(x.shape, x) if g is None else g, create_graph) for g, x in zip(gs, xs)]


def jvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), J v)`` by one forward sweep (``torch.autograd.functional.jvp``).

    Unlike PyTorch's double-backward trick, this is true forward mode: the
    tangent ``v`` is pushed through each op's ``jvp`` rule.

    >>> from autograd_cli.core import tensor
    >>> jvp(lambda x: x ** 2, tensor([1., 2.]), tensor([1., 0.]))[1]
    tensor([2., 0.])
    """
    xs = prepare_inputs(_check_inputs(inputs, "jvp"), create_graph)
    vs = _match(v, xs, "jvp", "input")
    with enable_grad():
        out = func(*xs)
    outputs_tuple = isinstance(out, (list, tuple))
    outs: Sequence[Tensor] = _check_outputs(out, "jvp")
    mode = enable_grad() if create_graph else no_grad()
    with mode:
        ts = Tape(outs, xs).run(vs)
    if strict and any(t is None for t in ts):
        raise GradError(
            "jvp: an output of the user-provided function is independent of the "
            "inputs. This is not allowed in strict mode."
        )
    ts = [_finish(zeros_tangent(o) if t is None else t, create_graph) for o, t in zip(outs, ts)]
    outs = [_finish(o, create_graph) for o in outs]
    return _shape_like(outs, outputs_tuple), _shape_like(ts, outputs_tuple)


def _strict_hessian(products, what: str) -> None:
    """PyTorch's strict check: no input's Hessian product may be identically zero."""
    for i, t in enumerate(products):
        if t is None:
            raise GradError(
                f"{what}: the Hessian of the user-provided function with respect to input {i} "
                "is independent of the input, which is not allowed in strict mode."
            )


def hvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), H v)``, forward-over-reverse (``torch.autograd.functional.hvp``).

    >>> from autograd_cli.core import tensor
    >>> hvp(lambda x: (x ** 3).sum(), tensor([1., 2.]), tensor([1., 1.]))[1]
    tensor([ 6., 12.])
    """
    inputs_tuple = isinstance(inputs, (list, tuple))
    xs = prepare_inputs(_check_inputs(inputs, "hvp"), create_graph)
    vs = _match(v, xs, "hvp", "input")
    with enable_grad():
        y = _scalar_output(func(*xs), "hvp")
    gs = _gradients(y, xs)
    mode = enable_grad() if create_graph else no_grad()
    with mode:
        ts = Tape(gs, xs).run(vs)
    if strict:
        _strict_hessian(ts, "hvp")
    ts = [_finish(zeros_tangent(x) if t is None else t, create_graph) for x, t in zip(xs, ts)]
    return _finish(y, create_graph), _shape_like(ts, inputs_tuple)


def vhp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T H)``, reverse-over-reverse (``torch.autograd.functional.vhp``)."""
    inputs_tuple = isinstance(inputs, (list, tuple))
    xs = prepare_inputs(_check_inputs(inputs, "vhp"), create_graph)
    vs = _match(v, xs, "vhp", "input")
    with enable_grad():
        y = _scalar_output(func(*xs), "vhp")
    hs = _pullback(_gradients(y, xs), vs, xs, create_graph, retain_graph=True)
    if strict:
        _strict_hessian(hs, "vhp")
    hs = _filled(hs, xs, create_graph)
    return _finish(y, create_graph), _shape_like(hs, inputs_tuple)


# ---------------------------------------------------------------------------
# n-th derivatives
# ---------------------------------------------------------------------------


def derivatives(
    f: Callable, x, order: int, create_graph: bool = False, *, budget: bool = False, why=None
) -> list:
    """``[f(x), f'(x), ..., f^(order)(x)]`` by repeated ``grad(create_graph=True)``.

    ``f`` is a scalar function of one variable; ``x`` may also be a Tensor of
    points when ``f`` acts elementwise (each derivative is then taken
    pointwise: the gradient of the sum).  Once a derivative no longer depends
    on ``x`` the higher ones are exactly zero.  ``budget``: refuse (LimitError) graphs on
    course for more than the memory limit by ``order``
    (:func:`.limits.check_growth`; ``why``: why Taylor mode could not be used).

    >>> from autograd_cli.core import tensor
    >>> [float(d) for d in derivatives(lambda x: 3 * (x + 2) ** 2, tensor(1.0), 3)]
    [27.0, 18.0, 6.0, 0.0]
    """
    if int(order) != order or order < 0:
        raise ValueError(f"order must be a non-negative integer, got {order!r}")
    (x0,) = _check_inputs(x if isinstance(x, Tensor) else Tensor(x), "derivative")
    (xi,) = prepare_inputs((x0,), create_graph)
    with enable_grad():
        y = f(xi)
        if not isinstance(y, Tensor):
            raise TypeError(f"the function must return a Tensor, got {type(y).__name__}")
        if tuple(y.shape) not in ((), tuple(xi.shape)) and y.size != 1:
            raise NonScalarOutputError(
                f"derivative needs a scalar function or an elementwise one: the output has "
                f"shape {tuple(y.shape)} and the input {tuple(xi.shape)}",
                shape=list(y.shape),
            )
        results = [y]
        current = y
        # a node holds its output and an input: two arrays of x's size (plot's points)
        arrays = 2 * xi.size * xi.data.itemsize if xi.size > 1 else 0
        growth = GraphGrowth(int(order), why, limits.NODE_BYTES + arrays) if budget else None
        for _ in range(int(order)):
            if not current.requires_grad:
                current = _zeros(xi.shape, xi)
            else:
                seed = None
                if current.size != 1 or tuple(current.shape) != ():
                    seed = Tensor._wrap(
                        backend.xp.ones(current.data.shape, dtype=current.data.dtype)
                    )
                (g,) = grad(current, xi, grad_outputs=seed, create_graph=True, allow_unused=True)
                current = _zeros(xi.shape, xi) if g is None else g
            results.append(current)
            if growth is not None:
                growth.add([current])
    return [_finish(r, create_graph) for r in results]


def derivative(f: Callable, x, order: int = 1, create_graph: bool = False) -> Tensor:
    """The ``order``-th derivative of a scalar (or elementwise) ``f`` at ``x``.

    >>> from autograd_cli.core import tensor
    >>> derivative(lambda x: 3 * (x + 2) ** 2, tensor(1.0), 2)
    tensor(6.)
    """
    return derivatives(f, x, order, create_graph)[-1]
