"""The parsed program and the checks every layer makes against it.

An :class:`Expr` is a node of a DAG: a constant, an input variable, or an op
of the op table applied to other Exprs (with attributes such as ``axis``).
A :class:`Program` is the parse of a whole input: its statements, the names
bound by ``name = expr``, its input variables and its output.  The grammar
builds them; every evaluator walks them (:func:`topological`: nothing here
recurses, so expressions nested 100,000 deep work like shallow ones).

The checks against a program live here once, below every layer that makes
them: which values belong to it (:func:`check_values`), which variables to
differentiate (:func:`split_names` reads ``wrt``, :func:`resolve_wrt` checks it: for
the library, the commands and a batch line alike), a derivative's order
(:func:`check_order`), and the errors for a missing value, an unknown ``wrt`` name and a
non-scalar output.  A message names a parameter as the library does (``wrt``); the command
line spells it as its flag (``--wrt``: :meth:`~.errors.AutogradCliError.spelled`).  This
module imports only the errors and the value parsing: no arrays, no tensors.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter

from .errors import (
    InputError,
    MissingValueError,
    NonScalarOutputError,
    UnknownVariableError,
    UnsupportedError,
)
from .safetext import excerpt
from .toposort import toposort

CONSTANTS = {"pi": math.pi, "e": math.e, "inf": math.inf, "nan": math.nan}


class Expr:
    """One node of an expression graph.

    ``op`` is ``"const"`` (``value`` holds a number or nested list),
    ``"var"`` (``name`` is the variable) or the name of an op in the op table.
    """

    __slots__ = ("op", "args", "attrs", "value", "name", "label")

    def __init__(
        self,
        op: str,
        args: tuple = (),
        attrs: dict | None = None,
        value=None,
        name: str | None = None,
    ):
        self.op = op
        self.args = tuple(args)
        self.attrs = attrs or {}
        self.value = value
        self.name = name
        self.label: str | None = None  # the name a `name = expr` binding gave it

    @staticmethod
    def const(value) -> Expr:
        return Expr("const", value=value)

    @staticmethod
    def var(name: str) -> Expr:
        return Expr("var", name=name)

    @property
    def is_const(self) -> bool:
        return self.op == "const"

    def __repr__(self) -> str:
        if self.op == "const":
            return f"Expr(const {self.value!r})"
        if self.op == "var":
            return f"Expr(var {self.name})"
        return f"Expr({self.op}, {len(self.args)} args)"


def topological(roots: Iterable[Expr]) -> list[Expr]:
    """Every Expr reachable from ``roots``, each after its arguments (iterative post-order:
    a depth-first walk, arguments left to right, each node listed once, where first reached;
    :func:`~.toposort.toposort`).
    """
    return toposort(roots, _arguments)


_arguments = attrgetter("args")


@dataclass
class Program:
    """A parsed input: statements, bindings, inputs and the output expression."""

    source: str
    output: Expr
    statements: list = field(default_factory=list)  # (name or None, Expr)
    bindings: dict = field(default_factory=dict)  # name -> Expr (the last binding)
    inputs: list = field(default_factory=list)  # input variable names, first use first
    _order: list | None = field(default=None, repr=False, compare=False)

    @property
    def output_name(self) -> str | None:
        return self.output.label

    def order(self) -> list:
        """Every node, each after its arguments (:func:`topological` of the output), found
        once: the interpreter and the checks before it walk the same graph."""
        if self._order is None:
            self._order = topological([self.output])
        return self._order


# ---------------------------------------------------------------------------
# Checks against a program, shared by the library, batch and the commands
# ---------------------------------------------------------------------------


def variables(program: Program | Expr) -> list[str]:
    """The input variables: a Program's, or an Expr's own in order of first use."""
    if isinstance(program, Program):
        return list(program.inputs)
    names: list[str] = []
    for node in topological([program]):
        if node.op == "var" and node.name not in names:
            assert node.name is not None  # a "var" node always has a name (Expr.var)
            names.append(node.name)
    return names


#: a variable's name, as the grammar reads one
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def split_names(wrt: str | Sequence[str] | None, names_only: bool = False) -> list[str]:
    """``"a, b"`` or ``["a", "b"]`` as a list of names (blank entries dropped): the one
    reading of ``wrt``.  ``names_only``: an entry that is not a name at all is a usage error
    (the command line's check of its ``--wrt`` text)."""
    if wrt is None:
        return []
    items = wrt.split(",") if isinstance(wrt, str) else wrt
    names = [w.strip() for w in items if w.strip()]
    for name in names if names_only else ():
        if not NAME.match(name):
            from .values import UsageError

            raise UsageError.naming("{wrt}: {text} is not a variable name", {"text": excerpt(name)})
    return names


def missing_value(name: str, detail: str | None = None) -> MissingValueError:
    """The error for a variable without a value, ``detail`` its caller's hint (the REPL's,
    a batch line's).  Without one the message names no way of giving the value: how is the
    caller's to say (the command line adds its flags: ``cli.status.classify``)."""
    error = MissingValueError(f"no value for variable {name!r}{detail or ''}", variable=name)
    error.hinted = detail is not None
    return error


def unknown_wrt(name: str, program: Program | Expr | None = None) -> UnknownVariableError:
    """The error for differentiating with respect to ``name``, which is not an input
    variable (of ``program``, whose variables it lists): why, and the variables."""
    if program is not None and name in getattr(program, "bindings", {}):
        reason = f"{name!r} is an intermediate ('{name} = ...'), not an input variable"
    else:
        reason = f"{name!r} is not a variable of the expression"
    if program is None:
        return UnknownVariableError.naming("{wrt}: {reason}", {"reason": reason}, variable=name)
    return UnknownVariableError.naming(
        "{wrt}: {reason}; the variables are {variables}",
        {"reason": reason, "variables": ", ".join(variables(program)) or "(none)"},
        variable=name,
    )


class RequestError(InputError):
    """What a computation cannot be asked: an order it has no meaning for, an order out of
    range, ``order`` with ``grad_output``.  ``reason``: ``unsupported`` (the computation does
    not take it), ``combination`` or ``range``.  The message names the parameters as the
    library does; :meth:`spelled` gives it in a caller's spelling."""

    def __init__(self, reason: str, template: str, **fields):
        self.reason = reason
        super().__init__(InputError.naming(template, fields).message)
        self.template, self.fields = template, fields


def check_order(order, least: int | None = 1, most: int | None = None, text: bool = False) -> int:
    """The one check of a derivative's order: an int from ``least`` to ``most`` (None: no
    bound); with ``text`` (the command line's), any whole number in text, ``2.0`` too.
    Raises :class:`RequestError` (reason ``range``).

    >>> check_order("2.0", 0, text=True), check_order(3)
    (2, 3)
    """
    value = order
    if text:
        order = str(order)
        written = order.strip()
        try:
            number = float(written)
        except ValueError:
            number = math.nan
        if not math.isfinite(number) or not number.is_integer():
            raise RequestError(
                "range", "{order} must be a whole number, not {text}", text=excerpt(written)
            )
        order = value = int(number)
    too_low = least is not None and isinstance(order, int) and order < least
    if isinstance(order, bool) or not isinstance(order, int) or too_low:
        raise RequestError(
            "range", "{order} must be {least} or more, not {value!r}", least=least or 0, value=value
        )
    if most is not None and order > most:
        raise RequestError(
            "range", "{order} must be at most {most}, not {value!r}", most=most, value=value
        )
    return order


def non_scalar_error(shape, command: str = "grad") -> NonScalarOutputError:
    """Why ``command`` (``grad`` or ``hessian``) needs a scalar output, and the ways out."""
    if command == "grad":
        template = (
            "grad can be implicitly created only for scalar outputs: the output has shape "
            "{shape}. Give {grad_output} ARRAY of shape {shape} (the vector of a "
            "vector-Jacobian product), use the jacobian command, or wrap the expression in "
            "sum(...)"
        )
    else:
        template = (
            "{command} needs a scalar output: the output has shape {shape}. Use the "
            "jacobian command (the first derivatives of each entry), or wrap the expression "
            "in sum(...)"
        )
    fields = {"shape": tuple(shape), "command": command}
    return NonScalarOutputError.naming(template, fields, shape=list(shape))


def complex_output_error(shape) -> NonScalarOutputError:
    """Why grad needs a real output, and the ways out (PyTorch's rule, JAX's holomorphic)."""
    return NonScalarOutputError.naming(
        "grad can be implicitly created only for real scalar outputs: the output is complex. "
        "Give {grad_output} V (the vector-Jacobian product, PyTorch's convention), "
        "{holomorphic} for f'(z) of a holomorphic f, or take abs(...)**2, real(...) or "
        "imag(...) of it",
        {},
        shape=list(shape),
    )


def check_values(program: Program, values: Mapping) -> None:
    """Every value must belong to an input variable (SPEC: an unknown variable is exit 2).

    This catches typos like ``--xx`` (naming the closest variable that has no value yet:
    "did you mean 'x'?") and values given to ``name = expr`` intermediates.
    """
    known = set(program.inputs)
    for name in values:
        if name in known:
            continue
        where = (
            f"the expression's variables are {', '.join(program.inputs)}"
            if program.inputs
            else "the expression has no variables"
        )
        hint = ""
        if name in program.bindings:
            hint = f" ({name!r} is an intermediate bound by '{name} = ...', not an input)"
        elif name in CONSTANTS:
            constant = name if name in ("inf", "nan") else f"{name} = {CONSTANTS[name]!r}"
            raise UnknownVariableError(
                f"unknown variable {name!r}: in expressions {name!r} is the constant "
                f"{constant}, not a variable; give the variable another name, such as "
                f"{name}_ ({where})",
                variable=name,
            )
        else:
            close = closest_name(name, [n for n in program.inputs if n not in values])
            if close is not None:
                hint = f" (did you mean {close!r}?)"
        raise UnknownVariableError(f"unknown variable {name!r}{hint}: {where}", variable=name)


def closest_name(name: str, candidates: Sequence[str], cutoff: float = 0.6) -> str | None:
    """The candidate most like ``name`` (difflib's measure, 2 * common / total length, with
    the longest common subsequence as the common part), if it reaches ``cutoff``; the first
    one on a tie.  Written out here so that this module keeps importing only the errors."""
    best, best_score = None, cutoff
    for candidate in candidates:
        total = len(name) + len(candidate)
        if not name or not candidate or 2 * min(len(name), len(candidate)) < cutoff * total:
            continue  # too different in length to reach the cutoff
        if len(name) * len(candidate) > 1_000_000:
            continue  # names this long are not typos worth the quadratic table
        row = [0] * (len(candidate) + 1)  # the LCS table, one row at a time
        for ch in name:
            prev_diag = 0
            for j, other in enumerate(candidate, 1):
                prev_diag, row[j] = (
                    row[j],
                    prev_diag + 1 if ch == other else max(row[j], row[j - 1]),
                )
        score = 2 * row[-1] / total
        if score > best_score or (best is None and score >= cutoff):
            best, best_score = candidate, score
    return best


def _checked(names: Iterable[str], known: Sequence[str], error) -> list[str]:
    """``names`` without repeats, each one of ``known`` (else ``error(name)`` is raised)."""
    out: list[str] = []
    for name in names:
        if name not in known:
            raise error(name)
        if name not in out:
            out.append(name)
    return out


def resolve_wrt(program: Program | Expr, wrt: str | Sequence[str] | None) -> list[str]:
    """The variables to differentiate: ``wrt`` (a name, ``"a, b"`` or a list: the library's,
    the commands' and a batch line's) read by :func:`split_names` and checked, without
    repeats; None or blank: every input variable.  The error (:func:`unknown_wrt`) says why
    a name is not an input and lists the variables."""
    known = variables(program)
    names = split_names(wrt)
    names = _checked(names, known, lambda name: unknown_wrt(name, program)) if names else known
    _check_derivatives_exist(program, names)
    return names


def _check_derivatives_exist(program: Program | Expr, names: Sequence[str]) -> None:
    """An argument whose derivative the op does not implement (``Op.no_derivative``:
    gammainc's a) that depends on one of ``names`` along a differentiable path: an error
    naming it, as PyTorch's and JAX's, where a zero would be a wrong number."""
    from .tensor import OPS  # noqa: PLC0415 - the op table, filled by core.ops once imported

    order = program.order() if isinstance(program, Program) else topological([program])
    if not any(node.op in OPS and OPS[node.op].no_derivative for node in order):
        return
    depends: dict[int, bool] = {}
    for node in order:
        if node.op in ("const", "var"):
            depends[id(node)] = node.op == "var" and node.name in names
            continue
        op = OPS[node.op]
        for i in op.no_derivative:
            if depends[id(node.args[i])]:
                which = ("first", "second", "third")[i] if i < 3 else f"number {i + 1}"
                raise UnsupportedError.naming(
                    "{wrt}: " + f"{op.name} has no derivative along its {which} argument "
                    "(PyTorch and JAX do not implement it): leave the variables it depends on "
                    "out of {wrt}",
                )
        flags = op.flags(len(node.args))
        depends[id(node)] = op.vjp is not None and any(
            depends[id(a)] and f for a, f in zip(node.args, flags)
        )
