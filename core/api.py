"""What the commands compute, as plain results (no printing here).

Each function takes a parsed :class:`~autograd_cli.core.expr.Program`, the
variables' values and options, and returns a result object holding host
(NumPy) arrays; the command line hands those to a renderer.

>>> from autograd_cli.grammar import parse
>>> r = grad_of(parse("3*a**3 - b**2"), {"a": 2, "b": 6})
>>> float(r.value), {k: float(v) for k, v in r.grad.items()}
(-12.0, {'a': 36.0, 'b': -12.0})
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import backend
from .autograd import grad as _grad
from .errors import NonScalarOutputError, ShapeError, UnknownVariableError
from .expr import Program, derivative_warnings, evaluate, parse_value
from .tensor import Tensor


@dataclass
class Result:
    """Value of the output and whatever derivatives were asked for (host arrays)."""

    value: object
    warnings: list = field(default_factory=list)
    grad: dict | None = None

    @property
    def shape(self) -> list:
        return list(self.value.shape)


def check_values(program: Program, values: dict) -> None:
    """Every value must belong to an input variable of the program (catches typos like --xx)."""
    known = set(program.inputs)
    for name in values:
        if name not in known:
            where = (f"the expression's variables are {', '.join(program.inputs)}"
                     if program.inputs else "the expression has no variables")
            hint = ""
            if name in program.bindings:
                hint = f" ({name!r} is an intermediate bound by '{name} = ...', not an input)"
            raise UnknownVariableError(f"unknown variable {name!r}{hint}: {where}", variable=name)


def resolve_wrt(program: Program, wrt) -> list[str]:
    """The variables to differentiate with respect to: ``wrt`` checked, or every input."""
    if not wrt:
        return list(program.inputs)
    names = []
    for name in wrt:
        if name not in program.inputs:
            if name in program.bindings:
                reason = f"{name!r} is an intermediate ('{name} = ...'), not an input variable"
            else:
                reason = f"{name!r} is not a variable of the expression"
            raise UnknownVariableError(
                f"--wrt: {reason}; the variables are {', '.join(program.inputs) or '(none)'}",
                variable=name)
        if name not in names:
            names.append(name)
    return names


def eval_of(program: Program, values: dict) -> Result:
    """The forward value of ``program`` at ``values``."""
    check_values(program, values)
    from .tensor import no_grad

    with no_grad():
        ev = evaluate(program, values)
    return Result(value=backend.to_numpy(ev.output.data), warnings=ev.warnings)


def non_scalar_message(shape) -> str:
    return (f"grad can be implicitly created only for scalar outputs: the output has shape "
            f"{tuple(shape)}. Give --grad-output ARRAY of shape {tuple(shape)} (the vector of a "
            f"vector-Jacobian product), use the jacobian command, or wrap the expression in sum(...)")


def grad_of(program: Program, values: dict, wrt=None, grad_output=None) -> Result:
    """Value and gradient of ``program`` w.r.t. ``wrt`` (default: every input variable).

    A non-scalar output needs ``grad_output`` (the v of the vector-Jacobian product v^T J).
    A variable the output does not depend on gets a zero gradient.
    """
    check_values(program, values)
    names = resolve_wrt(program, wrt)
    ev = evaluate(program, values, requires_grad=names)
    out = ev.output
    if grad_output is None:
        if out.size != 1:
            raise NonScalarOutputError(non_scalar_message(out.shape), shape=list(out.shape))
        seed = None
    else:
        seed = Tensor._wrap(parse_value("--grad-output", grad_output, dtype=out.data.dtype))
        if tuple(seed.shape) != tuple(out.shape):
            raise ShapeError(f"--grad-output has shape {tuple(seed.shape)} but the output has "
                             f"shape {tuple(out.shape)}", expected=list(out.shape),
                             got=list(seed.shape))
    leaves = [ev.leaves[n] for n in names if n in ev.leaves]
    grads = {}
    if leaves and out.requires_grad:
        got = _grad(out, leaves, grad_outputs=seed, allow_unused=True)
        grads = {leaf.name: g for leaf, g in zip(leaves, got)}
    result = {}
    for name in names:
        g = grads.get(name)
        leaf = ev.leaves.get(name)
        if g is None:
            shape = leaf.shape if leaf is not None else ()
            result[name] = backend.host.zeros(shape, dtype=out.data.dtype)
        else:
            result[name] = backend.to_numpy(g.data)
    warnings = ev.warnings + derivative_warnings(program.output, ev)
    return Result(value=backend.to_numpy(out.data), warnings=warnings, grad=result)


@dataclass
class GraphNode:
    """One node of the computation graph, for display: ids index ``GraphResult.nodes``."""

    id: int
    kind: str            # grad_fn name (MulBackward0), "leaf" or "constant"
    name: str | None     # variable or bound name
    is_leaf: bool
    requires_grad: bool
    value: object
    grad: object         # d(output)/d(this node), or None when no gradient reaches it
    inputs: list


@dataclass
class GraphResult:
    value: object
    nodes: list          # topological order; the output is the last
    warnings: list = field(default_factory=list)
    grads_computed: bool = True


def graph_of(program: Program, values: dict, grad_output=None) -> GraphResult:
    """The computation graph of ``program`` at ``values``, with every node's value and gradient.

    Gradients (of the output w.r.t. each node) need a scalar output or ``grad_output``;
    otherwise only values are filled in.
    """
    from .expr import topological

    check_values(program, values)
    names = list(program.inputs)
    order = topological([program.output])
    ev = evaluate(program, values, requires_grad=names)
    tensors = [ev.by_node[id(node)] for node in order]
    out = ev.output
    seed = None
    grads_computed = True
    if grad_output is not None:
        seed = Tensor._wrap(parse_value("--grad-output", grad_output, dtype=out.data.dtype))
        if tuple(seed.shape) != tuple(out.shape):
            raise ShapeError(f"--grad-output has shape {tuple(seed.shape)} but the output has "
                             f"shape {tuple(out.shape)}")
    elif out.size != 1:
        grads_computed = False
    grads: dict[int, object] = {}
    if grads_computed and out.requires_grad:
        wanted = [(i, t) for i, t in enumerate(tensors) if t is not None and t.requires_grad]
        got = _grad(out, [t for _, t in wanted], grad_outputs=seed, allow_unused=True)
        grads = {i: (None if g is None else backend.to_numpy(g.data))
                 for (i, _), g in zip(wanted, got)}
    index = {id(node): i for i, node in enumerate(order)}
    nodes = []
    for i, node in enumerate(order):
        t = tensors[i]
        if node.op == "const":
            kind, name = "constant", None
        elif node.op == "var":
            kind, name = "leaf", node.name
        else:
            kind = t.grad_fn.name() if t.grad_fn is not None else f"{node.op} (no grad)"
            name = node.label
        nodes.append(GraphNode(
            id=i, kind=kind, name=name, is_leaf=t.grad_fn is None,
            requires_grad=t.requires_grad, value=backend.to_numpy(t.data),
            grad=grads.get(i), inputs=[index[id(a)] for a in node.args]))
    return GraphResult(value=backend.to_numpy(out.data), nodes=nodes, warnings=ev.warnings,
                       grads_computed=grads_computed)
