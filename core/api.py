"""What the commands compute, as plain results (no printing here).

Each function takes a parsed :class:`~autograd_cli.core.program.Program`, the
variables' values and options, and returns a result object holding host
(NumPy) arrays; the command line hands those to a renderer.

>>> from autograd_cli.grammar import parse
>>> r = grad_of(parse("3*a**3 - b**2"), {"a": 2, "b": 6})
>>> float(r.value), {k: float(v) for k, v in r.grad.items()}
(-12.0, {'a': 36.0, 'b': -12.0})
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from . import analysis_docs, backend
from .autograd import grad as _grad
from .errors import (
    InputError,
    NonScalarOutputError,
    ShapeError,
    UnknownVariableError,
    UnsupportedError,
)
from .interpret import Dependence, interpret
from .ops.table import HOLOMORPHIC
from .program import (
    Program,
    RequestError,
    check_order,
    check_values,
    complex_output_error,
    non_scalar_error,
    resolve_wrt,
    topological,
)
from .recording import derivative_warnings, evaluate, parse_value
from .tensor import Tensor, no_grad

if TYPE_CHECKING:
    import numpy  # for annotations only: backend.py stays the one module importing NumPy


@dataclass(frozen=True)
class Result:
    """Value of the output and whatever derivatives were asked for (host arrays)."""

    value: numpy.ndarray
    warnings: list = field(default_factory=list)
    grad: dict | None = None
    hessian: dict | None = None  # name_i -> name_j -> block of shape(x_i) + shape(x_j)
    jacobian: dict | None = None  # name -> block of shape(output) + shape(name)
    jvp: object = None  # J v for --tangent (the output's shape)
    order: int | None = None  # grad --order N: `grad` holds the N-th derivative

    @property
    def shape(self) -> list:
        return list(self.value.shape)


# ---------------------------------------------------------------------------
# The one dispatcher: the facade, the commands and a batch row ask it by name
# ---------------------------------------------------------------------------

#: The computations :func:`compute` runs, by name: eval, grad (order 1: the gradient or a
#: vector-Jacobian product; order N: the N-th derivative in one variable), hessian,
#: jacobian, diff (symbolic), check (gradcheck), explain; and the analyses
#: (:data:`ANALYSES`: taylor, propagate, minimize, solve, critical).
DERIVATIVES = ("eval", "grad", "hessian", "jacobian", "diff", "check", "explain")
ANALYSES = analysis_docs.OPS
COMPUTATIONS = DERIVATIVES + ANALYSES


class _Holomorphic(Dependence):
    """:class:`Dependence` that refuses a non-holomorphic op the variables reach."""

    def apply(self, node, op, args: list) -> bool:
        reached = super().apply(node, op, args)
        if reached and op.on_complex not in HOLOMORPHIC:
            raise UnsupportedError(
                f"a holomorphic derivative f'(z) needs every function of z to be "
                f"complex-differentiable, and {op.printing.call or op.name} is not "
                f"(its derivative depends on the direction in the complex plane)",
                op=op.name,
            )
        return reached


def compute(
    name: str,
    program: Program,
    values: dict,
    wrt=None,
    order: int | None = None,
    grad_output=None,
    **options,
):
    """One computation of ``program`` at ``values``, asked by name (:data:`COMPUTATIONS`).

    ``wrt``: a name, ``"a, b"`` or a list (None or blank: every input variable); ``order``:
    grad's N-th derivative, diff's order; ``grad_output``: the v of grad's v^T J;
    ``options``: diff's ``max_nodes`` and ``mixed``, check's ``eps``, ``atol``, ``rtol``;
    an analysis's settings (:func:`~.analysis_docs.run`: taylor's ``at``, minimize's
    ``method``, ``gtol``, ``max_iter``, ``bounds``, ``trace``...).
    Each is checked here, once, before anything is evaluated: the computation's name, the
    order (:class:`RequestError`), the values (:func:`~.program.check_values`), then
    ``wrt`` (:func:`~.program.resolve_wrt`).  What a computation does not take (eval's
    wrt, hessian's grad_output) is ignored, as a batch row's unused keys are.

    >>> from autograd_cli.grammar import parse
    >>> r = compute("grad", parse("x**3"), {"x": 2.0}, order=2)
    >>> float(r.grad["x"]), r.order
    (12.0, 2)
    """
    if name not in COMPUTATIONS:
        raise RequestError(
            "unsupported",
            "the {name!r} operation is not available in this version of autograd-cli",
            name=name,
        )
    if name in ANALYSES:
        return _analysis(name, program, values, wrt, order, options)
    order = _checked_order(name, order, grad_output)
    check_values(program, values)
    if name == "eval":
        return _evaluated(program, values)
    names = resolve_wrt(program, wrt)
    if name == "grad" and order > 1:
        return _nth_derivative(program, values, names, order)
    if name == "grad":
        return _gradient(program, values, names, grad_output, **options)
    if name == "diff":
        return _derivative_expression(program, values, names, order, **options)
    run: dict[str, Callable] = {
        "hessian": _hessian,
        "jacobian": _jacobian,
        "check": _check,
        "explain": _explain,
    }
    return run[name](program, values, names, **options)


def _analysis(name, program, values, wrt, order, settings) -> object:
    """An analysis asked of :func:`compute`: the checks every computation has, then its
    library function (:func:`~.analysis_docs.run`, which checks the settings)."""
    if order is not None and name != "taylor":
        raise RequestError("unsupported", "{name} does not take an order", name=name)
    check_values(program, values)
    refuse_complex(name, program, values)
    names = resolve_wrt(program, wrt) if wrt else None
    _refuse_complex_output(name, program, values)
    return analysis_docs.run(name, program, values, names, order, settings)


def _refuse_complex_output(name: str, program: Program, values: dict) -> None:
    """The error of an analysis whose output is complex where its inputs are real (an
    intermediate such as polar(r, t) or fft(x) made it so): each takes real functions.  A
    complex intermediate with a real output (sum(abs(fft(x))**2)) is fine.  Looked at by
    one evaluation at the start point, before the analysis runs (a forward pass: little
    beside the analysis's own derivatives)."""
    with no_grad(), backend.quiet():
        out = evaluate(program, values, check_domain=False).output
    if backend.is_complex(out.data):
        raise UnsupportedError(
            f"{name} takes real functions: this one has complex values ({name} abs(...), "
            f"real(...) or imag(...) of it)",
            op=name,
        )


def refuse_complex(name: str, program: Program, values: Mapping) -> None:
    """The error of a computation that takes real numbers only, where a value, a constant or
    the dtype is complex."""
    if _complex_program(program, values):
        raise real_only_error(name)


def real_only_error(name: str) -> UnsupportedError:
    return UnsupportedError(
        f"{name} takes real numbers only in this version; for complex values use eval, grad "
        f"(PyTorch's convention, or holomorphic), jacobian and diff",
        op=name,
    )


def _complex_program(program: Program, values: Mapping) -> bool:
    """Whether a value, a constant of ``program`` or the dtype in force is complex."""
    if backend.is_complex(backend.default_dtype(0)):
        return True
    if any(backend.is_complex(parse_value(n, v)) for n, v in values.items()):
        return True
    return any(
        n.op == "const" and backend.is_complex(n.value) for n in topological([program.output])
    )


def _checked_order(name: str, order, grad_output) -> int:
    """The order ``name`` is asked for (its default when None), checked once
    (:func:`~.program.check_order`)."""
    if name == "eval":
        return 1  # eval takes no order (a batch row's is ignored)
    if name not in ("grad", "diff"):
        if order not in (None, 1):
            raise RequestError("unsupported", "{name} does not take an order", name=name)
        return 1
    if order is None:
        return 1
    order = check_order(order, 1 if name == "grad" else 0)
    if name == "grad" and order > 1 and grad_output is not None:
        raise RequestError(
            "combination", "{order} needs a scalar output; it cannot be combined with {grad_output}"
        )
    return order


# ---------------------------------------------------------------------------
# Each computation by name (what callers knew before the dispatcher: the same results)
# ---------------------------------------------------------------------------


def eval_of(program: Program, values: dict) -> Result:
    """The forward value of ``program`` at ``values``."""
    return compute("eval", program, values)


def _evaluated(program: Program, values: dict) -> Result:
    with no_grad():
        ev = evaluate(program, values)
    return Result(value=backend.to_numpy(ev.output.data), warnings=ev.warnings)


def grad_of(
    program: Program, values: dict, wrt=None, grad_output=None, holomorphic: bool = False
) -> Result:
    """Value and gradient of ``program`` w.r.t. ``wrt`` (default: every input variable);
    ``holomorphic``: f'(z) (JAX's holomorphic=True) instead of PyTorch's conj(f'(z)).

    A non-scalar output needs ``grad_output`` (the v of the vector-Jacobian product v^T J).
    A variable the output does not depend on gets a zero gradient.
    """
    return compute(
        "grad", program, values, wrt=wrt, grad_output=grad_output, holomorphic=holomorphic
    )


def _gradient(
    program: Program, values: dict, names: list, grad_output, holomorphic: bool = False
) -> Result:
    if holomorphic:
        values = _holomorphic_values(program, values, names)
    ev = evaluate(program, values, requires_grad=names)
    out = ev.output
    if grad_output is None:
        if out.size != 1:
            raise non_scalar_error(out.shape)
        if out.data.dtype.kind == "c" and not holomorphic:
            raise complex_output_error(out.shape)
        seed = Tensor._wrap(backend.xp.ones_like(out.data)) if holomorphic else None
    else:
        seed = _seed(grad_output, out)
    leaves = [ev.leaves[n] for n in names if n in ev.leaves]
    grads = {}
    if leaves and out.requires_grad:
        got = _grad(out, leaves, grad_outputs=seed, allow_unused=True)
        # PyTorch's gradient of a holomorphic f is conj(f'(z)): f'(z) is its conjugate
        # (+ 0: conj's -0.0 imaginary parts as +0.0)
        grads = {leaf.name: g.conj() + 0 if holomorphic else g for leaf, g in zip(leaves, got)}
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


def _holomorphic_values(program: Program, values: dict, names: list) -> dict:
    """The values of a holomorphic derivative (grad's f', hessian's f''): every op on the
    way from ``names`` holomorphic (:func:`check_holomorphic`), those variables complex."""
    check_holomorphic(program, values, names)
    return {n: _as_complex(n, v) if n in names else v for n, v in values.items()}


def _as_complex(name: str, value):
    data = parse_value(name, value)
    return data if data.dtype.kind == "c" else data.astype(backend.COMPLEX_OF[data.dtype.type])


def check_holomorphic(program: Program, values: dict, names: list) -> None:
    """Refuse a holomorphic derivative through an op that is not complex-differentiable
    (conj, abs, real, imag, angle, or one defined on real numbers only) where the variables
    ``names`` reach it."""
    interpret(program, _Holomorphic(names), values)


def _seed(grad_output, out: Tensor, shapes: bool = True) -> Tensor:
    """``grad_output`` (the v of v^T J) parsed in the output's dtype and checked against its
    shape; ``shapes``: the error carries the expected and given shapes (grad's does)."""
    seed = Tensor._wrap(parse_value("grad_output", grad_output, dtype=out.data.dtype))
    if tuple(seed.shape) != tuple(out.shape):
        details = {"expected": list(out.shape), "got": list(seed.shape)} if shapes else {}
        raise ShapeError.naming(
            "{grad_output} has shape {got} but the output has shape {expected}",
            {"got": tuple(seed.shape), "expected": tuple(out.shape)},
            **details,
        )
    return seed


@dataclass(frozen=True)
class GraphNode:
    """One node of the computation graph, for display: ids index ``GraphResult.nodes``."""

    id: int
    kind: str  # grad_fn name (MulBackward0), "leaf" or "constant"
    name: str | None  # variable or bound name
    is_leaf: bool
    requires_grad: bool
    value: object
    grad: object  # d(output)/d(this node), or None when no gradient reaches it
    inputs: list


@dataclass(frozen=True)
class GraphResult:
    value: object
    nodes: list  # topological order; the output is the last
    warnings: list = field(default_factory=list)
    grads_computed: bool = True


def graph_of(program: Program, values: dict, grad_output=None) -> GraphResult:
    """The computation graph of ``program`` at ``values``, with every node's value and gradient.

    Gradients (of the output w.r.t. each node) need a scalar output or ``grad_output``;
    otherwise only values are filled in.
    """
    check_values(program, values)
    names = list(program.inputs)
    order = topological([program.output])
    ev = evaluate(program, values, requires_grad=names)
    tensors = [ev.by_node[id(node)] for node in order]
    out = ev.output
    seed = None
    grads_computed = True
    if grad_output is not None:
        seed = _seed(grad_output, out, shapes=False)
    elif out.size != 1:
        grads_computed = False
    grads: dict[int, object] = {}
    if grads_computed and out.requires_grad:
        wanted = [(i, t) for i, t in enumerate(tensors) if t is not None and t.requires_grad]
        got = _grad(out, [t for _, t in wanted], grad_outputs=seed, allow_unused=True)
        grads = {
            i: (None if g is None else backend.to_numpy(g.data)) for (i, _), g in zip(wanted, got)
        }
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
        nodes.append(
            GraphNode(
                id=i,
                kind=kind,
                name=name,
                is_leaf=t.grad_fn is None,
                requires_grad=t.requires_grad,
                value=backend.to_numpy(t.data),
                grad=grads.get(i),
                inputs=[index[id(a)] for a in node.args],
            )
        )
    kinks = derivative_warnings(program.output, ev) if grads_computed else []
    return GraphResult(
        value=backend.to_numpy(out.data),
        nodes=nodes,
        warnings=ev.warnings + kinks,
        grads_computed=grads_computed,
    )


def _host(t):
    return backend.to_numpy(t.data)


def hessian_of(program: Program, values: dict, wrt=None, holomorphic: bool = False) -> Result:
    """Value, gradient and every second partial of a scalar ``program`` (forward-over-reverse);
    ``holomorphic``: f'(z) and f''(z) of a holomorphic f of complex variables (JAX's)."""
    return compute("hessian", program, values, wrt=wrt, holomorphic=holomorphic)


def _hessian(program: Program, values: dict, names: list, holomorphic: bool = False) -> Result:
    from .program_functional import program_hessian

    def blocks(r) -> dict:
        return {
            "grad": {n: _host(g) for n, g in r.gradient.items()},
            "hessian": {a: {b: _host(h) for b, h in row.items()} for a, row in r.hessian.items()},
        }

    if holomorphic:
        values = _holomorphic_values(program, values, names)

        def run(program, values, wrt):
            return program_hessian(program, values, wrt=wrt, holomorphic=True)

        def plus_zero(r) -> dict:  # the conjugates' -0.0 imaginary parts as +0.0, as grad's
            made = blocks(r)
            made["grad"] = {n: g + 0 for n, g in made["grad"].items()}
            made["hessian"] = {
                a: {b: h + 0 for b, h in row.items()} for a, row in made["hessian"].items()
            }
            return made

        return _derivatives(program, values, names, run, plus_zero)
    if _complex_program(program, values):
        raise UnsupportedError.naming(
            "the Hessian of complex values is f''(z) of a holomorphic f: give {holomorphic} "
            "(PyTorch has no Hessian of complex inputs; JAX's takes holomorphic functions)",
            {},
            op="hessian",
        )
    return _derivatives(program, values, names, program_hessian, blocks)


def _derivatives(program: Program, values: dict, names: list, run, blocks) -> Result:
    """``run`` (a function of program_functional) at ``values`` with respect to ``names``, as
    a Result holding ``blocks(its result)``; the value alone when ``names`` is empty."""
    if not names:
        return _evaluated(program, values)
    r = run(program, values, wrt=names)
    return Result(value=_host(r.value), warnings=list(r.warnings), **blocks(r))


def jacobian_of(program: Program, values: dict, wrt=None) -> Result:
    """Value and the Jacobian of the output w.r.t. each variable (shape output + variable)."""
    return compute("jacobian", program, values, wrt=wrt)


def _jacobian(program: Program, values: dict, names: list) -> Result:
    from .program_functional import program_jacobian

    def blocks(r) -> dict:
        return {"jacobian": {n: _host(block) for n, block in r.jacobian.items()}}

    return _derivatives(program, values, names, program_jacobian, blocks)


def nth_derivative_of(program: Program, values: dict, wrt=None, order: int = 1) -> Result:
    """The ``order``-th derivative of a scalar expression of one variable (repeated grad)."""
    if order != 1:
        return compute("grad", program, values, wrt=wrt, order=order)
    check_values(program, values)  # order 1 by this road: the first derivative, as a series
    return _nth_derivative(program, values, resolve_wrt(program, wrt), 1)


def _highest_derivative(program: Program, values: dict, name: str, order: int):
    """f^(order) in the one variable ``name``: a float by Taylor mode (one pass, its work
    linear in ``order``) where it gives the engine's numbers (a scalar variable, the CPU,
    float64, no point where the engine's derivative is a convention); else by repeated
    differentiation, a Tensor or None, whose graph can grow exponentially with ``order``
    (grad --order 16 of x**3*log(x) took 388 s and 20 GB that way, Taylor mode 0.4 s)."""
    from .program_functional import program_derivatives
    from .taylor_mode import NoTaylorMode, taylor_coefficients

    why = None
    if order > 1:
        try:
            return taylor_coefficients(program, values, name, order)[-1] * math.factorial(order)
        except NoTaylorMode as exc:
            why = str(exc)
    return program_derivatives(program, values, name, order, budget=True, why=why)[-1]


def _nth_derivative(program: Program, values: dict, names: list, order: int) -> Result:
    if len(names) != 1:
        raise InputError.naming(
            "{order} {n} needs one variable to differentiate with respect to; "
            "the expression has {names} (use {wrt} NAME)",
            {"n": order, "names": ", ".join(names) or "none"},
        )
    ev = evaluate(program, values, requires_grad=names)
    if ev.output.size != 1:
        raise NonScalarOutputError.naming(
            "{order} {n} needs a scalar output, but the output has shape {shape}; use the "
            "jacobian command for the derivatives of each entry",
            {"n": order, "shape": tuple(ev.output.shape)},
            shape=list(ev.output.shape),
        )
    warnings = ev.warnings + derivative_warnings(program.output, ev)
    leaf = ev.leaves[names[0]]
    last = _highest_derivative(program, values, names[0], order)
    if last is None:
        value = backend.host.zeros(leaf.shape, dtype=leaf.data.dtype)
    elif isinstance(last, float):
        value = backend.host.asarray(last, dtype=leaf.data.dtype).reshape(leaf.shape)
    else:
        value = _host(last).reshape(leaf.shape)
    return Result(
        value=_host(ev.output).reshape(ev.output.shape),
        warnings=warnings,
        grad={names[0]: value},
        order=order,
    )


def jvp_of(program: Program, values: dict, tangents: dict) -> Result:
    """Value and the Jacobian-vector product J v (forward mode: one dual-number pass)."""
    from .program_functional import program_jvp

    check_values(program, values)
    for name in tangents:
        if name not in program.inputs:
            raise UnknownVariableError.naming(
                "{tangent} names {name!r}, which is not a variable of the expression",
                {"name": name},
                variable=name,
            )
    with no_grad():  # the leaves of every variable with a tangent, reached or not
        ev = evaluate(program, values, requires_grad=list(tangents))
    ts = {}
    for name, t in tangents.items():
        arr = parse_value(name, t, ev.leaves[name].data.dtype, what=f"the tangent of {name!r}")
        if tuple(arr.shape) != tuple(ev.leaves[name].shape):
            raise ShapeError.naming(
                "{tangent} for {name!r} has shape {got} but {name!r} has shape {expected}",
                {"name": name, "got": tuple(arr.shape), "expected": tuple(ev.leaves[name].shape)},
            )
        ts[name] = Tensor._wrap(arr)
    out, jv = program_jvp(program, values, ts)
    return Result(value=_host(out), warnings=ev.warnings, jvp=_host(jv))


@dataclass(frozen=True)
class CheckResult:
    value: object
    passed: bool
    max_abs_error: float
    max_rel_error: float
    worst: dict | None
    analytic: dict
    numeric: dict
    eps: float
    atol: float
    rtol: float
    warnings: list = field(default_factory=list)


def check_of(
    program: Program,
    values: dict,
    wrt=None,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
) -> CheckResult:
    """Compare the analytic derivatives with central finite differences (like torch's gradcheck)."""
    return compute("check", program, values, wrt=wrt, eps=eps, atol=atol, rtol=rtol)


def _check(
    program: Program, values: dict, names: list, eps: float, atol: float, rtol: float
) -> CheckResult:
    settings = {"eps": eps, "atol": atol, "rtol": rtol}
    if names and _complex_program(program, values):
        # PyTorch's gradient against central differences along real and imaginary parts
        from .complex_check import complex_check

        ev, *found = complex_check(program, values, names, eps, atol, rtol)
        return _check_result(program, ev, *found, **settings)
    ev = evaluate(program, values, requires_grad=names)
    if ev.output.data.dtype.kind == "c":  # a complex output of real values (rfft(x))
        raise real_only_error("check")
    if not names:  # nothing to differentiate: nothing can disagree (as grad gives {})
        return _check_result(program, ev, {}, {}, None, 0.0, 0.0, True, **settings)
    return _checked_real(program, values, names, ev, settings)


def _checked_real(program, values: dict, names: list, ev, settings: dict) -> CheckResult:
    """gradcheck's comparison, reverse and forward mode (:func:`program_gradcheck`)."""
    from .program_functional import program_gradcheck

    r = program_gradcheck(program, values, wrt=names, check_forward_ad=True, **settings)
    out_shape = tuple(ev.output.shape)
    analytic, numeric = {}, {}
    for name, a, n in zip(names, r.analytic, r.numeric):
        shape = out_shape + tuple(ev.leaves[name].shape)
        analytic[name] = a.reshape(shape)
        numeric[name] = n.reshape(shape)
    worst = dict(r.worst) if r.worst else None
    if worst is not None:
        worst["input"] = (
            names[worst["input"]] if isinstance(worst["input"], int) else worst["input"]
        )
        worst["input_index"] = list(worst["input_index"])
        worst["output_index"] = list(worst["output_index"])
        worst.pop("output", None)
    found = (analytic, numeric, worst, float(r.max_abs_error), float(r.max_rel_error))
    return _check_result(program, ev, *found, bool(r.passed), **settings)


def _check_result(
    program, ev, analytic, numeric, worst, max_abs, max_rel, passed, eps, atol, rtol
) -> CheckResult:
    warnings = ev.warnings + (derivative_warnings(program.output, ev) if analytic else [])
    return CheckResult(
        value=_host(ev.output),
        passed=passed,
        max_abs_error=max_abs,
        max_rel_error=max_rel,
        worst=worst,
        analytic=analytic,
        numeric=numeric,
        eps=eps,
        atol=atol,
        rtol=rtol,
        warnings=warnings,
    )


_DEFAULT = object()  # diff_of's max_nodes not given: symbolic.diff's own default


def diff_of(
    program: Program,
    values: dict,
    wrt=None,
    order: int = 1,
    max_nodes=_DEFAULT,
    mixed: bool = False,
):
    """The derivative as an expression (symbolic, simplified); evaluated too when values are given.

    ``max_nodes``: refuse a derivative larger than this (None or 0: no limit; default
    :data:`~autograd_cli.core.symbolic.MAX_NODES`).  ``mixed`` (order 2): every second
    partial too, in the result's ``hessian`` (``diff --hessian``).

    Returns :class:`~autograd_cli.core.symbolic.DiffResult` (plain data; the command line renders it).
    """
    options = {} if max_nodes is _DEFAULT else {"max_nodes": max_nodes}
    return compute("diff", program, values, wrt=wrt, order=order, mixed=mixed, **options)


def _derivative_expression(
    program: Program, values: dict, names: list, order: int, max_nodes=_DEFAULT, mixed=False
):
    from .symbolic import diff

    if not names:
        raise InputError("the expression has no variables to differentiate")
    limit = {} if max_nodes is _DEFAULT else {"max_nodes": max_nodes}
    return diff(
        program,
        wrt=names,
        order=order,
        values=dict(values) if values else None,
        mixed=mixed,
        **limit,
    )


def explain_of(program: Program, values: dict, wrt=None):
    """The chain rule step by step at ``values`` (:class:`~autograd_cli.core.explain.Explanation`)."""
    return compute("explain", program, values, wrt=wrt)


def _explain(program: Program, values: dict, names: list):
    from .explain import explain

    return explain(program, values, names)
