"""Evaluation of a parsed program on the engine's tensors.

The program itself (:class:`Expr`, :class:`Program`, :func:`topological`) is
defined in :mod:`.program` and re-exported here, where the parser and the
printers have always found it.

Nothing here recurses: every walk is over an explicit stack, so expressions
nested 100,000 deep evaluate like shallow ones.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from . import backend
from .errors import BadValueError
from .interpret import Interpretation, interpret
from .program import CONSTANTS, Expr, Program, topological, unknown_wrt, variables
from .tensor import OPS, Tensor, apply

__all__ = [
    "CONSTANTS",
    "Evaluation",
    "Expr",
    "Program",
    "all_finite",
    "derivative_warnings",
    "evaluate",
    "parse_value",
    "topological",
]


@dataclass
class Evaluation:
    """The result of evaluating a program: the output tensor, the leaves and named intermediates."""

    output: Tensor
    leaves: dict  # input name -> leaf Tensor
    intermediates: dict  # bound name -> Tensor
    warnings: list
    by_node: dict = field(default_factory=dict)  # id(Expr) -> Tensor, for every node evaluated


def parse_value(name: str, value, dtype=None):
    """A variable's value (number, nested list or array) as a backend array; ragged -> BadValueError."""
    if isinstance(value, Tensor):
        return value.data
    try:
        host = backend.host.asarray(value, dtype=dtype or backend.default_dtype)
    except OverflowError:  # a JSON integer beyond float range (1e400 written out)
        raise BadValueError(
            f"bad value for {name!r}: an integer too large for a floating-point number "
            "(write it as 1e400 for inf, or scale it)",
            variable=name,
        ) from None
    except (ValueError, TypeError) as exc:
        raise BadValueError(
            f"bad value for {name!r}: {value!r} is not a number or a "
            f"rectangular array of numbers ({exc})",
            variable=name,
        ) from None
    return backend.xp.asarray(host)


def all_finite(data) -> bool:
    """True when every element is finite (0-d arrays take a fast scalar path)."""
    if data.ndim == 0:
        return math.isfinite(data)
    return bool(backend.xp.isfinite(data).all())


def _describe_nonfinite(op_name: str, data) -> str:
    xp = backend.xp
    has_nan = bool(xp.isnan(data).any())
    what = "nan" if has_nan else "inf"
    reason = "an input outside its domain" if has_nan else "a pole, division by zero or overflow"
    return f"{op_name} gave {what} ({reason}; IEEE arithmetic, not an error)"


class Recording(Interpretation):
    """Values are engine tensors that record the graph (the variables in ``wanted`` require grad).

    With ``check_domain``, an op whose result is not finite although its
    arguments are gets a warning (once per message, in program order).
    """

    def __init__(self, wanted: Iterable[str] = (), check_domain: bool = True):
        self.wanted = frozenset(wanted)
        self.check_domain = check_domain
        self.warnings: list[str] = []
        self.intermediates: dict[str, Tensor] = {}
        self._finite: dict[int, bool] = {}  # id(Tensor) -> all finite

    def const(self, node: Expr) -> Tensor:
        t = Tensor._wrap(backend.asarray(node.value))
        if self.check_domain:
            self._finite[id(t)] = all_finite(t.data)
        return t

    def var(self, name: str, value) -> Tensor:
        t = Tensor._wrap(parse_value(name, value))
        t.requires_grad = name in self.wanted
        t.name = name
        if self.check_domain:
            self._finite[id(t)] = all_finite(t.data)
        return t

    def apply(self, node: Expr, op, args: list) -> Tensor:
        t = apply(op, *args, **node.attrs)
        if node.label is not None and t.name is None:
            t.name = node.label
            self.intermediates[node.label] = t
        if self.check_domain:
            finite = self._finite
            ok = finite[id(t)] = all_finite(t.data)
            if not ok and all(finite[id(a)] for a in args):
                message = _describe_nonfinite(node.op, t.data)
                if message not in self.warnings:
                    self.warnings.append(message)
        return t


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
                raise unknown_wrt(name)
    recording = Recording(wanted, check_domain)
    walk = interpret(program, recording, values, bind=wanted)
    return Evaluation(
        walk.result, walk.inputs, recording.intermediates, recording.warnings, walk.values
    )


def derivative_warnings(output: Expr, ev: Evaluation) -> list[str]:
    """Warnings for derivatives taken where they are undefined (the op table's ``kink`` rules).

    A kink counts when the op lies on a path from a differentiated variable.  Ops
    whose gradient is zero almost everywhere (comparisons, sign, rounding) count
    when their result flows into a differentiable argument of another op, i.e.
    when they really cut a gradient path (the condition of ``where`` does not).
    """
    messages: list[str] = []
    by_node = ev.by_node
    order = topological([output])
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
