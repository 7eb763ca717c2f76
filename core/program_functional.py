"""The functional API on a parsed program: ``program_jacobian``, ``program_hessian``, ...

Each takes a :class:`~autograd_cli.core.program.Program` (or an Expr) and a dict of values,
evaluates it (:func:`.expr.evaluate`), and runs the operation of :mod:`.functional` (or
:func:`.gradcheck.gradcheck`) on the variables ``wrt`` (default: all), returning Tensors and
dicts keyed by variable name.  :mod:`.api` turns these into the host-array results the
command line and the facade hand on; :mod:`.optimize`, :mod:`.uncertainty` and
:mod:`.sample` use them directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import backend
from .autograd import grad
from .forward import Tape, basis, jvp_program, program_function, zeros_tangent
from .functional import (
    _as_tuple,
    _check_blocks,
    _chunk_size,
    _concat_rows,
    _forward_blocks,
    _gradients,
    _reverse_blocks,
    _rows_to_block,
    _scalar_output,
    _slice_rows,
    _strategy,
    _zeros,
    derivatives,
    hvp,
    vjp,
)
from .gradcheck import GradcheckResult, gradcheck
from .program import Expr, Program, non_scalar_error, resolve_wrt, unknown_wrt, variables
from .recording import evaluate, evaluation_warnings
from .tensor import Tensor, enable_grad, no_grad

__all__ = [
    "HessianResult",
    "JacobianResult",
    "program_derivatives",
    "program_gradcheck",
    "program_hessian",
    "program_hvp",
    "program_jacobian",
    "program_jvp",
    "program_vjp",
]


@dataclass
class JacobianResult:
    """``value``: the output; ``jacobian[name]``: d output / d name, shape output.shape + shape(name)."""

    value: Tensor
    jacobian: dict
    strategy: str
    warnings: list = field(default_factory=list)


@dataclass
class HessianResult:
    """``value``; ``gradient[name]``; ``hessian[a][b]``: d2 out / d a d b, shape shape(a) + shape(b)."""

    value: Tensor
    gradient: dict
    hessian: dict
    warnings: list = field(default_factory=list)


def program_jacobian(
    program: Program | Expr, values: dict, wrt=None, strategy: str = "auto"
) -> JacobianResult:
    """The Jacobian of a program's output with respect to the variables ``wrt`` (default: all).

    ``jacobian[name]`` has shape ``value.shape + shape(name)`` (for a scalar
    output: the gradient).  ``strategy``: ``auto``, ``forward`` (a batched
    dual-number evaluation of the expression) or ``reverse``.

    >>> from autograd_cli.grammar import parse
    >>> r = program_jacobian(parse("[x*y, x+y, sin(x)]"), {"x": 1, "y": 2})
    >>> r.jacobian["x"].shape, r.jacobian["y"].tolist()
    ((3,), [1.0, 1.0, 0.0])
    """
    strategy = _strategy(strategy)
    names = resolve_wrt(program, wrt)
    ev = evaluate(program, values, requires_grad=names)
    xs = [ev.leaves[n] for n in names]
    out = ev.output
    if strategy == "auto":
        strategy = "forward" if sum(x.size for x in xs) <= out.size else "reverse"
    if out.data.dtype.kind == "c":
        # a complex output: d f / d (Re x) by forward mode (f'(z) where f is holomorphic,
        # as JAX's jacfwd), where reverse mode's rows would keep only real parts
        strategy = "forward"
    elif any(x.data.dtype.kind == "c" for x in xs):
        # a real output of complex inputs: each row PyTorch's gradient, dL/dRe z + i dL/dIm z
        # (forward mode would give dL/dRe z alone)
        strategy = "reverse"
    _check_blocks([out], xs, "the Jacobian")
    if strategy == "reverse":
        with enable_grad():
            blocks = _reverse_blocks([out], xs, False)[0]
        jac = dict(zip(names, blocks))
    else:
        sizes = [x.size for x in xs]
        shapes = [tuple(x.shape) for x in xs]
        total = sum(sizes)
        env = dict(values)
        env.update({n: Tensor._wrap(x.data) for n, x in zip(names, xs)})
        step = _chunk_size(total, Tape([out], xs).max_size, None)
        # the directions in the inputs' own type: real unit tangents of real inputs (rfft
        # takes real arrays), and of complex ones along the real axis
        dtype = backend.host.result_type(*[x.data.dtype for x in xs]) if xs else out.data.dtype
        if dtype.kind not in "fc":
            dtype = out.data.dtype
        chunks = []
        with no_grad():
            for start in range(0, total, step):
                stop = min(total, start + step)
                ts = basis(sizes, shapes, start, stop, dtype)
                _, t = jvp_program(program, env, dict(zip(names, ts)), batch=stop - start)
                chunks.append(zeros_tangent(out, stop - start) if t is None else t)
            # no chunks when every input is empty: zero rows
            rows = _concat_rows(chunks, False) if chunks else _zeros((0, *out.shape), out)
            jac = {}
            offset = 0
            for n, x in zip(names, xs):
                part = _slice_rows(rows, offset, offset + x.size)
                jac[n] = _rows_to_block(part, tuple(out.shape), tuple(x.shape)).detach()
                offset += x.size
    return JacobianResult(out.detach(), jac, strategy, evaluation_warnings(program, ev))


def program_hessian(
    program: Program | Expr,
    values: dict,
    wrt=None,
    strategy: str = "forward",
    holomorphic: bool = False,
) -> HessianResult:
    """Value, gradient and Hessian blocks of a program with a scalar output.

    ``hessian[a][b]`` has shape ``shape(a) + shape(b)``; computed
    forward-over-reverse (batched) or, with ``strategy="reverse"``,
    reverse-over-reverse.

    >>> from autograd_cli.grammar import parse
    >>> r = program_hessian(parse("3*(x+2)**2"), {"x": 1})
    >>> float(r.hessian["x"]["x"])
    6.0
    """
    strategy = _strategy(strategy)
    names = resolve_wrt(program, wrt)
    ev = evaluate(program, values, requires_grad=names)
    xs = tuple(ev.leaves[n] for n in names)
    if ev.output.size != 1:  # the command's advice, not hessian()'s PyTorch wording
        shape = tuple(ev.output.shape)
        raise non_scalar_error(shape, "hessian")
    y = _scalar_output(ev.output, "hessian")
    gs = _holomorphic_gradients(y, xs) if holomorphic else _gradients(y, xs)
    with enable_grad():
        if strategy == "reverse":
            blocks = _reverse_blocks(gs, xs, False, what="the Hessian")
        else:
            blocks = _forward_blocks(gs, xs, False, True, what="the Hessian")
    gradient = {n: g.detach() for n, g in zip(names, gs)}
    hess = {a: {b: blocks[i][j].detach() for j, b in enumerate(names)} for i, a in enumerate(names)}
    return HessianResult(y.detach(), gradient, hess, evaluation_warnings(program, ev))


def _holomorphic_gradients(y: Tensor, xs: tuple) -> list:
    """f'(z) of a holomorphic scalar f, recorded (create_graph): the conjugate of PyTorch's
    gradient for the seed 1, so that forward mode over it along the real axis gives f''(z)
    (the conjugations recorded too: conj's tangent is conj(t))."""
    if not y.requires_grad:
        return [Tensor._wrap(backend.xp.zeros_like(x.data)) for x in xs]
    with enable_grad():
        seed = Tensor._wrap(backend.xp.ones_like(y.data))
        gs = grad(y, xs, grad_outputs=seed, create_graph=True, allow_unused=True)
        return [
            Tensor._wrap(backend.xp.zeros_like(x.data)) if g is None else g.conj()
            for g, x in zip(gs, xs)
        ]


def program_jvp(program: Program | Expr, values: dict, tangents: dict) -> tuple:
    """``(value, J v)`` of a program: one dual-number evaluation; ``tangents``: name -> tangent."""
    with no_grad():
        out, t = jvp_program(program, values, tangents)
    return out.detach(), (zeros_tangent(out) if t is None else t).detach()


def program_vjp(program: Program | Expr, values: dict, v, wrt=None) -> tuple:
    """``(value, {name: v^T J})`` of a program: one backward pass."""
    names = resolve_wrt(program, wrt)
    ev = evaluate(program, values, requires_grad=names)
    xs = tuple(ev.leaves[n] for n in names)
    f = program_function(program, values, names)
    out, gs = vjp(f, xs, v)
    gs = _as_tuple(gs)
    return out, dict(zip(names, gs))


def program_hvp(program: Program | Expr, values: dict, v: dict, wrt=None) -> tuple:
    """``(value, {name: (H v)[name]})`` of a scalar program; ``v``: name -> direction."""
    names = resolve_wrt(program, wrt)
    ev = evaluate(program, values, requires_grad=names)
    xs = tuple(ev.leaves[n] for n in names)
    vs = tuple(
        v[n] if n in v else Tensor._wrap(backend.xp.zeros(x.data.shape, dtype=x.data.dtype))
        for n, x in zip(names, xs)
    )
    f = program_function(program, values, names)
    out, hs = hvp(f, xs, vs)
    return out, dict(zip(names, _as_tuple(hs)))


def program_derivatives(
    program: Program | Expr, values: dict, wrt: str, order: int, **budget
) -> list:
    """``[f, f', ..., f^(order)]`` of a program in the one variable ``wrt`` (others fixed);
    ``budget``: :func:`~.functional.derivatives`'s ``budget`` and ``why``."""
    name = wrt
    if name not in variables(program):
        raise unknown_wrt(name, program)
    ev = evaluate(program, values, requires_grad=[name])
    f = program_function(program, values, [name])
    return derivatives(f, ev.leaves[name].detach(), order, **budget)


def program_gradcheck(
    program: Program | Expr, values: dict, wrt=None, **options
) -> GradcheckResult:
    """:func:`gradcheck` of a program with respect to the variables ``wrt`` (default: all)."""
    names = resolve_wrt(program, wrt)
    ev = evaluate(program, values, requires_grad=names)
    xs = tuple(ev.leaves[n].detach() for n in names)
    return gradcheck(program_function(program, values, names), xs, **options)
