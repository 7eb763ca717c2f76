"""The Recording interpretation: a program evaluated on the engine's tensors, which record
the graph (values and reverse mode), and the warnings of an evaluation.

:func:`evaluate` walks a program once through :func:`~.interpret.interpret` with a
:class:`Recording` (each node an ``apply`` that records a Node); :func:`domain_warnings`
reports ops that gave nan or inf from finite arguments, :func:`derivative_warnings` the
kinks a gradient passed through (the op table's ``kink`` rules); :func:`parse_value`
turns a variable's value into a backend array.  The program itself (:class:`Expr`,
:class:`Program`, :func:`topological`) is :mod:`.program`'s.

Nothing here recurses: every walk is over an explicit stack, so expressions
nested 100,000 deep evaluate like shallow ones.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from . import backend
from .autograd import gc_paused
from .errors import BadValueError, UnsupportedError
from .interpret import Interpretation, interpret
from .program import Expr, Program, topological, unknown_wrt, variables
from .tensor import OPS, Tensor, apply

__all__ = [
    "Evaluation",
    "Recording",
    "all_finite",
    "derivative_warnings",
    "domain_warnings",
    "evaluate",
    "parse_value",
]


@dataclass
class Evaluation:
    """The result of evaluating a program: the output tensor, the leaves and named intermediates."""

    output: Tensor
    leaves: dict  # input name -> leaf Tensor
    intermediates: dict  # bound name -> Tensor
    warnings: list
    by_node: dict = field(default_factory=dict)  # id(Expr) -> Tensor, for every node evaluated
    order: list = field(default_factory=list)  # the nodes evaluated, each after its arguments


def parse_value(name: str, value, dtype=None, what: str | None = None):
    """A variable's value (number, nested list or array) as a backend array; ragged -> BadValueError
    (``what``: the value's name in the message, default the variable's, quoted)."""
    if isinstance(value, Tensor):
        return value.data
    if value.__class__ is backend.host.ndarray and value.ndim <= 32 and backend.xp is backend.host:
        if value.dtype == (dtype or backend.default_dtype):
            return value  # what the conversions below give of it: the array itself
    # At most 32 dimensions: NumPy broadcasts no more (and a Jacobian of a 32-dimensional
    # output by a 32-dimensional input needs 64, NumPy's maximum).  The nesting is measured
    # along the first elements, before NumPy walks a list nested thousands deep.
    max_dims = 32
    label = repr(name) if what is None else what

    def too_deep(shape: str) -> str:
        return (
            f"bad value for {label}: an array {shape}; a value has at most {max_dims} "
            "dimensions (NumPy's limit for broadcasting)"
        )

    depth, probe = 0, value
    while isinstance(probe, (list, tuple)) and depth <= max_dims:
        depth, probe = depth + 1, (probe[0] if probe else None)
    if depth > max_dims:
        raise BadValueError(too_deep(f"nested more than {max_dims} deep"), variable=name)
    try:
        host = backend.asarray(value, dtype, xp=backend.host)
    except OverflowError:  # a JSON integer beyond float range (1e400 written out)
        raise BadValueError(
            f"bad value for {label}: an integer too large for a floating-point number "
            "(write it as 1e400 for inf, or scale it)",
            variable=name,
        ) from None
    except (ValueError, TypeError):
        raise BadValueError(
            f"bad value for {label}: {value!r} is not a number or a rectangular array of "
            "numbers (rows of different lengths, or an element that is not a number)",
            variable=name,
        ) from None
    if host.ndim > max_dims:
        raise BadValueError(too_deep(f"of {host.ndim} dimensions"), variable=name)
    return backend.xp.asarray(host)


def all_finite(data) -> bool:
    """True when every element is finite (0-d arrays take a fast scalar path)."""
    return backend.all_finite(data)


def domain_warnings(order: list, values: dict, key=id) -> list[str]:
    """The domain warnings of an evaluated program, in program order, each message once.

    An op whose result is not finite although its arguments are gets a warning.  ``order``:
    the nodes, each after its arguments; ``values``: ``key(node)`` -> its Tensor.  Each op's
    result is scanned at most once, the output's first: a finite result of an op vouches
    for the arguments whose inf or nan it always spreads (``Op.spreads_nonfinite``: inf and
    nan survive +, -, *, a numerator, a sum, a reshape; exp(-inf) = 0 and x / inf = 0 do
    not), and an input is scanned only when a non-finite result of an op asks whether its
    arguments were finite.
    """
    finite: dict[int, bool] = {}
    all_finite = backend.all_finite
    some_not_finite = False
    for node in reversed(order):  # from the output back: results vouch for their arguments
        name = node.op
        if name == "const" or name == "var":
            continue
        k = key(node)
        if k not in finite:  # (an entry there is True: only arguments are vouched for)
            if not all_finite(values[k].data):
                finite[k] = False
                some_not_finite = True
                continue
            finite[k] = True
        spread = OPS[name].spreads_nonfinite
        if spread and values[k].data.size:
            args = node.args
            for i in spread:
                finite[key(args[i])] = True
    messages: list[str] = []
    if not some_not_finite:
        return messages  # every op's result is finite: nothing to report
    for node in order:
        if node.op in ("const", "var") or finite[key(node)]:
            continue
        for a in node.args:
            ka = key(a)
            ok = finite.get(ka)
            if ok is None:
                ok = finite[ka] = backend.all_finite(values[ka].data)
            if not ok:
                break
        else:
            message = _describe_nonfinite(node.op, values[key(node)].data)
            if message not in messages:
                messages.append(message)
    return messages


def _describe_nonfinite(op_name: str, data) -> str:
    xp = backend.xp
    has_nan = backend.any_nonzero(xp.isnan(data))
    what = "nan" if has_nan else "inf"
    reason = "an input outside its domain" if has_nan else "a pole, division by zero or overflow"
    hint = ""
    if has_nan and data.dtype.kind != "c" and OPS[op_name].on_complex == "holomorphic":
        # NumPy's and PyTorch's rule: a real argument gives a real result, nan off the domain
        op = OPS[op_name]
        example = "(-1+0j)**0.5" if op_name == "pow" else f"{op.printing.call or op_name}(-1+0j)"
        hint = "; a complex argument gives its complex value" + (
            f", as {example}" if op.arity == 1 or op_name == "pow" else ""
        )
    return f"{op_name} gave {what} ({reason}; IEEE arithmetic, not an error{hint})"


class Recording(Interpretation):
    """Values are engine tensors that record the graph (the variables in ``wanted`` require grad).

    With ``check_domain``, an op whose result is not finite although its
    arguments are gets a warning (once per message, in program order):
    :meth:`finish` makes them, from the walk, once it is done.
    """

    def __init__(self, wanted: Iterable[str] = (), check_domain: bool = True):
        self.wanted = frozenset(wanted)
        self.check_domain = check_domain
        self.warnings: list[str] = []
        self.intermediates: dict[str, Tensor] = {}
        self.complex = backend.is_complex(backend.default_dtype(0))  # a complex value seen

    def const(self, node: Expr) -> Tensor:
        value = node.value
        if backend.is_complex(value):
            self.complex = True
        if type(value) is float and backend.xp is backend.host:
            # a NumPy scalar, as tensor.as_tensor makes of a number: the same number as a
            # 0-d array (and what an op on 0-d arrays returns), a third of the time to make
            # and of the memory, and cheaper to compute with
            return Tensor._wrap(backend.REAL_OF[backend.default_dtype](value))
        return Tensor._wrap(backend.asarray(value))

    def var(self, name: str, value) -> Tensor:
        t = Tensor._wrap(parse_value(name, value))
        if t.data.dtype.kind == "c":
            self.complex = True
        t.requires_grad = name in self.wanted
        t.name = name
        return t

    def apply(self, node: Expr, op, args: list) -> Tensor:
        attrs = node.attrs
        if self.complex and op.on_complex is None:
            _real_only(op, args)
        t = apply(op, *args, **attrs) if attrs else apply(op, *args)
        if node.label is not None and t.name is None:
            t.name = node.label
            self.intermediates[node.label] = t
        return t

    def finish(self, walk) -> None:
        """The domain warnings of a finished walk (:func:`domain_warnings`)."""
        if self.check_domain:
            self.warnings = domain_warnings(walk.order, walk.values)


def _real_only(op, args) -> None:
    """Refuse a complex argument of an op defined on real numbers only (its ``on_complex``
    is None): NumPy would order complex numbers lexicographically (maximum, relu) or fail."""
    for a in args:
        if a.data.dtype.kind == "c":
            raise UnsupportedError(
                f"{op.printing.call or op.name} is defined on real numbers only, and its "
                f"argument here is complex (take real(z), imag(z) or abs(z) first)",
                op=op.name,
            )


def evaluate(
    program: Program | Expr,
    values: dict,
    requires_grad: Iterable[str] = (),
    check_domain: bool = True,
) -> Evaluation:
    """Evaluate ``program`` at ``values`` (name -> number/list/array), building the autograd graph.

    Variables named in ``requires_grad`` become leaves with ``requires_grad=True``;
    each must be an input of the program (a variable the output does not reach
    still gets its leaf, and so a zero gradient).

    >>> from autograd_cli.grammar import parse
    >>> ev = evaluate(parse("3*a**3 - b**2"), {"a": 2, "b": 6}, requires_grad=["a", "b"])
    >>> ev.output
    tensor(-12., grad_fn=<SubBackward0>)
    """
    wanted = list(dict.fromkeys(requires_grad))
    if wanted:
        known = variables(program)
        for name in wanted:
            if name not in known:
                raise unknown_wrt(name, program)
    recording = Recording(wanted, check_domain)
    token = backend.quiet_enter()  # once for the whole walk, not once per op
    try:
        with gc_paused():
            walk = interpret(program, recording, values, bind=wanted)
    finally:
        backend.quiet_exit(token)
    recording.finish(walk)
    return Evaluation(
        walk.result,
        walk.inputs,
        recording.intermediates,
        recording.warnings,
        walk.values,
        walk.order,
    )


def evaluation_warnings(program: Program | Expr, ev: Evaluation) -> list[str]:
    """Domain warnings of the evaluation plus those of derivatives taken at kinks."""
    output = program.output if isinstance(program, Program) else program
    return list(ev.warnings) + derivative_warnings(output, ev)


def derivative_warnings(output: Expr, ev: Evaluation) -> list[str]:
    """Warnings for derivatives taken where they are undefined (the op table's ``kink`` rules).

    A kink counts when the op lies on a path from a differentiated variable.  Ops
    whose gradient is zero almost everywhere (comparisons, sign, rounding) count
    when their result flows into a differentiable argument of another op, i.e.
    when they really cut a gradient path (the condition of ``where`` does not).
    """
    messages: list[str] = []
    by_node = ev.by_node
    # the evaluation's own order when it is this output's (not walked again); batch's
    # per-row evaluations have none
    order = getattr(ev, "order", None)
    if not order or order[-1] is not output:
        order = topological([output])
    used = {node.op for node in order}
    used.discard("const")
    used.discard("var")
    if all(OPS[name].kink is None for name in used):
        return messages  # no op of the program has a kink to report (the common case)
    cutting: set[int] = set()
    for node in order:
        if node.op in ("const", "var"):
            continue
        op = OPS[node.op]
        flags = op.flags(len(node.args))
        for arg, differentiable in zip(node.args, flags):
            if (
                differentiable
                and arg.op not in ("const", "var")
                and OPS[arg.op].zero_grad
                or differentiable
                and arg.op not in ("const", "var")
                and OPS[arg.op].kind == "comparison"
            ):
                cutting.add(id(arg))
    if (
        id(output) in by_node
        and output.op not in ("const", "var")
        and (OPS[output.op].zero_grad or OPS[output.op].kind == "comparison")
    ):
        cutting.add(id(output))
    for node in order:
        if node.op in ("const", "var"):
            continue
        op = OPS[node.op]
        if op.kink is None:
            continue
        t = by_node.get(id(node))
        if t is None:  # pragma: no cover - an evaluation of another graph than the program's
            continue
        inputs = [by_node[id(a)] for a in node.args]
        if op.zero_grad or op.kind == "comparison":
            if id(node) not in cutting or not any(i.requires_grad for i in inputs):
                continue
        elif not t.requires_grad:
            continue
        message = op.kink([i.data for i in inputs], t.data, node.attrs)
        if message and message not in messages:
            messages.append(message)
    return messages
