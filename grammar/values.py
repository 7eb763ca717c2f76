"""The values of a parse that are not graph nodes (assignments, keywords, slices, strings,
several arrays, comparison chains) and the checks that read a constant out of a node
(an integer, an axis, a shape)."""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

from ..core.errors import InputError
from ..core.ops import OPS
from ..core.program import Expr
from ..core.safetext import visible
from . import limits

if TYPE_CHECKING:
    from .lalr import Token


class _Assignment:
    __slots__ = ("name", "expr")

    def __init__(self, name: str, expr: Expr):
        self.name = name
        self.expr = expr


class _Keyword:
    __slots__ = ("name", "expr", "token")

    def __init__(self, token: Token, expr: Expr):
        self.name = str(token)
        self.token = token
        self.expr = expr


class _Slice:
    __slots__ = ("start", "stop")

    def __init__(self, start, stop):
        self.start = start
        self.stop = stop


class _Value:
    """A value of the parse that is not an array: a string literal, or the several arrays of
    a function such as split().  Each is accepted in its own places only (a string as a
    parameter that takes one, several arrays indexed or unpacked); anywhere else
    :meth:`misuse` is the error."""

    __slots__ = ()

    def misuse(self) -> InputError:  # pragma: no cover - overridden
        raise NotImplementedError


def _string_params() -> str:
    """Where the language takes a string: "einsum's subscripts or norm's ord or the norm of
    fft, ifft, ...", from the table (the functions sharing a param named together)."""
    by_param: dict[str, list] = {}
    for op in OPS.values():
        for p in op.params:
            if _takes_string(p):
                by_param.setdefault(p.name, []).append((op.printing.names or (op.name,))[0])
    places = [
        f"{names[0]}'s {param}" if len(names) == 1 else f"the {param} of {', '.join(names)}"
        for param, names in by_param.items()
    ]
    return " or ".join(sorted(places)) or "nothing"


#: the Param kinds that take a string
_STRING_KINDS = ("subscripts",)  # the others read their own strings (ParsedParam)


def _takes_string(param) -> bool:
    """Whether a Param takes a string: one of the string kinds, or a Param that reads its
    own value and says it takes one (``strings``: the FFT's norm)."""
    return param.kind in _STRING_KINDS or getattr(param, "strings", False)


class _String(_Value):
    """A string literal, ``'ij,jk->ik'`` or ``"fro"``: only a Param of a string kind takes it."""

    __slots__ = ("text", "token")

    def __init__(self, token: Token):
        self.token = token
        self.text = str(token)[1:-1]

    def misuse(self) -> InputError:
        shown = visible(str(self.token)[:40], keep_newlines=False)
        return InputError(
            f"a string ({shown}) at line {self.token.line}, column {self.token.column} is not "
            f"an array: the language takes a string only as {_string_params()}",
            **_position(self.token),
        )


class _Tuple(_Value):
    """The several arrays of one call (``split(x, 3)``, ``svd(A)``): indexed with a constant
    integer (``split(x, 3)[1]``) or unpacked in a binding (``a, b, c = split(x, 3)``)."""

    __slots__ = ("parts", "name", "token")

    def __init__(self, parts: list, name: str, token: Token):
        self.parts = parts
        self.name = name
        self.token = token

    def misuse(self) -> InputError:
        n = len(self.parts)
        names = ", ".join(f"p{i}" for i in range(1, n + 1)) if n <= 4 else "p1, p2, ..."
        return InputError(
            f"{self.name}() at line {self.token.line}, column {self.token.column} gives {n} "
            f"arrays, not one array: take one of them ({self.name}(...)[0]) or unpack them "
            f"in a binding ({names} = {self.name}(...))",
            **_position(self.token),
        )


def _expr(value) -> Expr:
    """``value`` where an array is wanted: an Expr, else the misuse error of a string or of
    several arrays."""
    if isinstance(value, _Value):
        raise value.misuse()
    return value


def _arrays(method):
    """A Builder callback whose arguments must all be arrays (operators, ``.T``)."""

    @functools.wraps(method)
    def checked(self, *args):
        for a in args:
            if isinstance(a, _Value):
                raise a.misuse()
        return method(self, *args)

    return checked


def _binary(op: str):
    """The callback of a binary operator (``a + b``): the op's node, both operands arrays
    (as :func:`_arrays` checks, without its extra call: a long sum makes one per term)."""

    def build(self, a, b):
        if isinstance(a, _Value):
            raise a.misuse()
        if isinstance(b, _Value):
            raise b.misuse()
        return Expr(op, (a, b))

    build.__name__ = build.__qualname__ = op
    return build


class _Unpack:
    __slots__ = ("names", "parts")

    def __init__(self, names: list, parts: list):
        self.names = names
        self.parts = parts


def _position(token) -> dict:
    return {"line": getattr(token, "line", None), "column": getattr(token, "column", None)}


def _const_value(expr: Expr, what: str, token=None):
    if isinstance(expr, _Value):
        raise expr.misuse()
    if not expr.is_const:
        raise InputError(f"{what} must be a constant number", **_position(token))
    return expr.value


def _integer(
    value, what: str, token=None, low: int = limits.INT64[0], high: int = limits.INT64[1]
) -> int:
    """``value`` (a constant) as an int: a finite whole number from ``low`` to ``high``, else
    an input error (exit 2) naming ``what``.  ``1.0`` is 1; ``0.5``, ``nan``, ``inf``, a list
    and ``1e30`` as an axis are refused here, before NumPy could misread them."""
    if isinstance(value, list):
        raise InputError(f"{what} must be an integer, got a list", **_position(token))
    number = float(value)
    if not math.isfinite(number) or number != math.floor(number):
        raise InputError(f"{what} must be an integer, got {number!r}", **_position(token))
    if not low <= number <= high:
        lowest = "-2**63" if low == limits.INT64[0] else str(low)
        span = f"{lowest} to {'2**63-1' if high == limits.INT64[1] else high}"
        why = (
            f" (an array has at most {limits.MAX_DIMS} dimensions)"
            if high < limits.MAX_DIMS
            else ""
        )
        raise InputError(
            f"{what} must be an integer from {span}{why}, got {number:.17g}", **_position(token)
        )
    return int(number)


def _const_int(expr: Expr, what: str, token=None, **bounds) -> int:
    return _integer(_const_value(expr, what, token), what, token, **bounds)


_AXIS = {"low": -limits.MAX_DIMS, "high": limits.MAX_DIMS - 1}


def _list_shape(value) -> tuple[tuple[int, ...], bool]:
    """The shape of a nested list of numbers built by :meth:`Builder.array` (rectangular by
    construction): the lengths along its first elements, walked iteratively."""
    shape = []
    while isinstance(value, list):
        shape.append(len(value))
        if not value:
            break
        value = value[0]
    return tuple(shape), True


def _describe(shape: tuple[int, ...], complete: bool) -> str:
    if complete and not shape:
        return "is a number"
    if complete:
        return f"has shape {shape}"
    return f"has shape ({', '.join(str(n) for n in shape)}, ...)"


class _Chain:
    """A comparison chain being built: its value so far and its last operand (the left
    operand of the next comparison, which the chain shares rather than repeats)."""

    __slots__ = ("value", "last")

    def __init__(self, value: Expr, last: Expr):
        self.value = value
        self.last = last
