"""Parse the expression language into an expression graph, during the LALR parse.

Each rule's callback is a method of the :class:`Builder`, run as the LALR parser reduces
the rule: the graph is built bottom-up on the parser's own stack, without a tree and
without recursion, however deep the input nests.  The LALR tables ship inside the package
as ``_tables.py``, a module of plain literals that Lark generates from ``expr.lark``
(``python -m autograd_cli.grammar.build_tables``), and :mod:`.lalr` runs them the way Lark
does, without importing Lark (a tenth of a cold start).  Nothing is cached on disk and
nothing is unpickled: Lark's ``cache=True`` would unpickle a file from the shared temp
folder, whose name anyone can predict.  When the runtime cannot run the tables (they use a
feature it does not reproduce), Lark loads them; when they do not fit (an edited grammar),
the parser is built by Lark from ``expr.lark`` in memory instead: slower, never a file.

A :class:`Parser` pairs the engine with its builder; :func:`parse` uses the one
:func:`default_parser` builds on first use and keeps (a cache, the module's only state).
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import math
import os
import re
import threading
from typing import TYPE_CHECKING, Any, cast

from ..core.errors import (
    ArityError,
    BadValueError,
    InputError,
    LimitError,
    ParseError,
    UnknownFunctionError,
)
from ..core.ops import FUNCTIONS, OPS, Word, norm_ord
from ..core.ops_linalg import einsum_subscripts
from ..core.program import CONSTANTS, Expr, Program
from ..core.safetext import WINDOW, visible
from . import lalr

if TYPE_CHECKING:
    from .lalr import Token

_READABLE = {
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "COMMA": "','",
    "PLUS": "'+'",
    "MINUS": "'-'",
    "STAR": "'*'",
    "SLASH": "'/'",
    "AT": "'@'",
    "POW": "'**'",
    "COMPARE": "a comparison",
    "EQUAL": "'='",
    "SEMICOLON": "';'",
    "COLON": "':'",
    "NAME": "a name",
    "NUMBER": "a number",
    "STRING": "a string",
    "TRANSPOSE": "'.T'",
    "_NL": "a newline",
    "$END": "the end of the input",
}

# ---- limits (README "Safety"): each a clear `limit` error (exit 1), never a crash ------------

#: the most characters of text one parse reads (the command line reads at most 16 MiB too)
MAX_SOURCE_CHARS = 16 * 1024 * 1024
#: the deepest nesting of brackets: ( ) of groups and calls, [ ] of arrays and indexing
MAX_NESTING = 200_000
#: the most statements in one program
MAX_STATEMENTS = 200_000
#: the most numbers, names, strings and operators in one program (brackets, commas and
#: separators are not counted): x+x+... with 1,000,000 terms, which parses, evaluates and
#: differentiates in about 10 s; a longer one is refused as it is read, before anything
#: is evaluated (a 10 MB sum of constants took 220 s and 5 GB)
MAX_TOKENS = 2_000_000
#: the deepest array literal: NumPy arrays have at most 64 dimensions, and a Jacobian of a
#: 32-dimensional output with respect to a 32-dimensional input needs all 64
MAX_ARRAY_DEPTH = 32
#: the most numbers (or elements) one array literal holds
MAX_ARRAY_ELEMENTS = 1_000_000

#: NumPy's most dimensions: an axis outside -64..63 fits no array
_MAX_DIMS = 64
#: an index, a slice bound or a reshape dimension is a C integer (int64) in NumPy
_INT64 = (-(2**63), 2**63 - 1)

#: functions of other languages and libraries that the language spells differently
_OTHER_SPELLINGS = {
    "ln": "log",
    "lg": "log10",
    "sgn": "sign",
    "fabs": "abs",
    "absolute": "abs",
    "power": "pow",
    "average": "mean",
    "amax": "max",
    "amin": "min",
}


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
    """Where the language takes a string: "einsum's subscripts or norm's ord", from the table."""
    places = [
        f"{(op.printing.names or (op.name,))[0]}'s {p.name}"
        for op in OPS.values()
        for p in op.params
        if p.kind in _STRING_KINDS
    ]
    return " or ".join(sorted(places)) or "nothing"


#: the Param kinds that take a string
_STRING_KINDS = ("ord", "subscripts")


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


class _NewlinesInBrackets:
    """Post-lexer: newlines inside () or [] are whitespace, elsewhere they separate statements.

    It also enforces :data:`MAX_NESTING`, :data:`MAX_STATEMENTS` and :data:`MAX_TOKENS` as the tokens stream
    by, so an input past a limit stops there, before the rest of it is parsed.
    """

    always_accept = ("_NL",)

    def process(self, stream):
        depth = 0
        statements = 0
        counted = 0  # numbers, names, strings and operators (MAX_TOKENS)
        after_separator = True  # the next token at depth 0 starts a statement
        for tok in stream:
            kind = tok.type
            if kind in _PUNCTUATION:
                if kind == "LPAR" or kind == "LSQB":
                    depth += 1
                    if depth > MAX_NESTING:
                        raise LimitError(
                            f"the expression nests brackets more than {MAX_NESTING:,} deep "
                            f"(line {tok.line}, column {tok.column})",
                            **_position(tok),
                        )
                elif kind == "RPAR" or kind == "RSQB":
                    depth = max(0, depth - 1)
                elif kind == "_NL" and depth:
                    continue
            else:
                counted += 1
                if counted > MAX_TOKENS:
                    raise LimitError(
                        _too_many_tokens(f"line {tok.line}, column {tok.column}"),
                        **_position(tok),
                    )
            if (kind == "_NL" or kind == "SEMICOLON") and not depth:
                after_separator = True
            elif after_separator:
                after_separator = False
                statements += 1
                if statements > MAX_STATEMENTS:
                    raise LimitError(
                        f"the program has more than {MAX_STATEMENTS:,} statements "
                        f"(line {tok.line}, column {tok.column})",
                        **_position(tok),
                    )
            yield tok


#: the tokens MAX_TOKENS does not count: brackets (bounded by what they hold), commas and
#: statement separators
_PUNCTUATION = frozenset(("LPAR", "RPAR", "LSQB", "RSQB", "COMMA", "SEMICOLON", "_NL"))

# What _fewest_tokens reads: strings and comments (whose text is no token), names and
# numbers (expr.lark's NAME and NUMBER), and the characters of operators ('**' and the
# two-character comparisons are the longest: two of them).
_STRINGS_AND_COMMENTS = re.compile(r"\"[^\"\n]*\"|'[^'\n]*'|#[^\n]*")
_WORDS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_OPERATOR_CHARS = "+-*/@^<>=!:"


def _fewest_tokens(text: str) -> int:
    """At most as many as the tokens :data:`MAX_TOKENS` counts in ``text``, found at the
    speed of ``str.count`` and one regular expression (a second a 10 MB text, where parsing
    up to the limit takes several): every name and number, and half the operator
    characters (an operator has at most two, a number's exponent sign is in the number)."""
    if '"' in text or "'" in text or "#" in text:
        text = _STRINGS_AND_COMMENTS.sub(" ", text)
    operators = (sum(map(text.count, _OPERATOR_CHARS)) + 1) // 2
    if operators > MAX_TOKENS:
        return operators
    rest, words = _WORDS.subn("", text)
    return words + (sum(map(rest.count, _OPERATOR_CHARS)) + 1) // 2


def _too_many_tokens(where: str) -> str:
    return (
        f"the expression has more than {MAX_TOKENS:,} numbers, names and operators ({where}); "
        f"give large arrays as values (--vars @FILE) and reduce them (sum(x), x @ y) instead "
        f"of writing out each term"
    )


def _position(token) -> dict:
    return {"line": getattr(token, "line", None), "column": getattr(token, "column", None)}


def _const_value(expr: Expr, what: str, token=None):
    if isinstance(expr, _Value):
        raise expr.misuse()
    if not expr.is_const:
        raise InputError(f"{what} must be a constant number", **_position(token))
    return expr.value


def _integer(value, what: str, token=None, low: int = _INT64[0], high: int = _INT64[1]) -> int:
    """``value`` (a constant) as an int: a finite whole number from ``low`` to ``high``, else
    an input error (exit 2) naming ``what``.  ``1.0`` is 1; ``0.5``, ``nan``, ``inf``, a list
    and ``1e30`` as an axis are refused here, before NumPy could misread them."""
    if isinstance(value, list):
        raise InputError(f"{what} must be an integer, got a list", **_position(token))
    number = float(value)
    if not math.isfinite(number) or number != math.floor(number):
        raise InputError(f"{what} must be an integer, got {number!r}", **_position(token))
    if not low <= number <= high:
        lowest = "-2**63" if low == _INT64[0] else str(low)
        span = f"{lowest} to {'2**63-1' if high == _INT64[1] else high}"
        why = f" (an array has at most {_MAX_DIMS} dimensions)" if high < _MAX_DIMS else ""
        raise InputError(
            f"{what} must be an integer from {span}{why}, got {number:.17g}", **_position(token)
        )
    return int(number)


def _const_int(expr: Expr, what: str, token=None, **bounds) -> int:
    return _integer(_const_value(expr, what, token), what, token, **bounds)


_AXIS = {"low": -_MAX_DIMS, "high": _MAX_DIMS - 1}


def _index_array(value) -> tuple:
    """A constant list of integers as an index (nested tuples, the shape of the list): each
    element a whole number, checked without recursion; an empty list selects nothing."""
    out: list = []
    stack = [(value, out)]
    while stack:
        items, into = stack.pop()
        for v in items:
            if isinstance(v, list):
                inner: list = []
                into.append(inner)
                stack.append((v, inner))
            else:
                into.append(_integer(v, "an index in a list of indices"))
    frozen: dict[int, tuple] = {}
    work = [(out, False)]
    while work:  # lists to tuples, innermost first, still without recursion
        node, done = work.pop()
        if done:
            frozen[id(node)] = tuple(frozen.get(id(v), v) for v in node)
        else:
            work.append((node, True))
            work.extend((v, False) for v in node if isinstance(v, list))
    return frozen[id(out)]


def _call_with_params(name: str, op, positional: list, keywords: dict, tok) -> Expr:
    """``f(arrays..., params...)`` for an op with Params:
    its array arguments first (for a variadic op, one list of them: ``concatenate([a, b])``),
    then its params by position or keyword (a keyword-only one by keyword), each a constant
    checked by its kind."""
    names = ", ".join(p.name for p in op.params)
    where = _position(tok)
    if op.arity is None:
        if not positional:
            raise ArityError(
                f"{name}() takes a list of arrays first: {name}([a, b], ...)",
                function=name,
                **where,
            )
        arrays = _list_items(positional[0], name, tok)
        rest = positional[1:]
    else:
        if len(positional) < op.arity:
            raise ArityError(
                f"{name}() takes {op.arity} array argument{'s' if op.arity > 1 else ''} "
                f"then {names}; got {len(positional)} argument(s)",
                function=name,
                **where,
            )
        arrays, rest = positional[: op.arity], positional[op.arity :]
    arrays = [_expr(a) for a in arrays]
    by_position = [p for p in op.params if not getattr(p, "keyword_only", False)]
    if len(rest) > len(by_position):
        keyword_only = [p.name for p in op.params if getattr(p, "keyword_only", False)]
        by_keyword = f"; {', '.join(keyword_only)} by keyword only" if keyword_only else ""
        raise ArityError(
            f"{name}() takes at most {len(by_position)} argument(s) after its array"
            f"{'s' if op.arity != 1 else ''} ({', '.join(p.name for p in by_position)}"
            f"{by_keyword}), got {len(rest)}",
            function=name,
            **where,
        )
    given = {p.name: (e, tok) for p, e in zip(by_position, rest)}
    for key, keyword in keywords.items():
        if key not in {p.name for p in op.params}:
            raise ArityError(
                f"{name}(): unexpected keyword argument {key} (it takes {names})",
                function=name,
                **_position(keyword.token),
            )
        if key in given:
            raise ArityError(
                f"{name}(): {key} is given twice", function=name, **_position(keyword.token)
            )
        given[key] = (keyword.expr, keyword.token)
    attrs = {}
    for p in op.params:
        if p.name not in given:
            if p.required:
                raise ArityError(f"{name}() needs its {p.name} argument", function=name, **where)
            attrs[p.name] = p.default
            continue
        expr, token = given[p.name]
        attrs[p.name] = _param_value(f"{p.name} of {name}()", p.kind, expr, token)
    return Expr(op.name, tuple(arrays), attrs)


def _list_items(expr: Expr, name: str, tok) -> list:
    """The arrays of a list argument, ``[a, b]``: a stack's elements, or a constant's rows."""
    expr = _expr(expr)
    if expr.op == "stack":
        items = list(expr.args)
    elif expr.is_const and isinstance(expr.value, list):
        items = [Expr.const(v) for v in expr.value]
    else:
        raise InputError(
            f"{name}() takes a list of arrays first: {name}([a, b], ...)", **_position(tok)
        )
    if not items:
        raise InputError(f"{name}() needs at least one array", **_position(tok))
    return items


def _param_value(what: str, kind: str, expr: Expr, token):
    if kind in _STRING_KINDS and isinstance(expr, _String):
        if kind == "subscripts":
            return Word(expr.text)  # checked against the operands by the call (_einsum)
        try:
            return norm_ord(expr.text)
        except ValueError as exc:
            raise InputError(str(exc), **_position(expr.token)) from None
    value = _const_value(expr, what, token)
    if kind == "ord":
        try:
            return norm_ord(value)
        except ValueError as exc:
            raise InputError(str(exc), **_position(token)) from None
    if kind == "subscripts":
        raise InputError(
            f"{what} must be a string of subscripts, such as 'ij,jk->ik'", **_position(token)
        )
    if kind == "sections":  # split's: a number of equal sections, or a list of indices
        if isinstance(value, list):
            return tuple(_integer(v, f"each index of {what}", token) for v in value)
        return _integer(value, what, token, low=1, high=2**31)
    if kind == "part":
        return _integer(value, what, token, low=0, high=2**31)
    if kind == "int":
        return _integer(value, what, token)
    if kind == "count":
        return _integer(value, what, token, low=0)
    if kind == "axis":
        return _integer(value, what, token, **_AXIS)
    if kind == "axes":
        if isinstance(value, list):
            return tuple(_integer(v, f"each axis of {what}", token, **_AXIS) for v in value)
        return _integer(value, what, token, **_AXIS)
    if kind == "flag":
        if isinstance(value, list) or float(value) not in (0.0, 1.0):
            shown = "a list" if isinstance(value, list) else repr(float(value))
            raise InputError(f"{what} must be 0 or 1, got {shown}", **_position(token))
        return float(value) == 1.0
    raise ValueError(f"unknown param kind {kind!r}")  # a mistake in the op table


def _reduction_call(name: str, op_name: str, positional: list, keywords: dict, tok, params=()):
    """``f(x)``, ``f(x, axis)``, ``f(x, axis=k, keepdims=1)`` for a reduction; ``params``, an
    op's Params beyond axis and keepdims (norm's ``ord``), are taken by keyword only."""
    extra = {p.name: p for p in params if p.name not in ("axis", "keepdims")}
    n = len(positional)
    unknown = set(keywords) - {"axis", "keepdims"} - set(extra)
    if unknown or ("axis" in keywords and n == 2):
        raise ArityError(
            f"{name}(): unexpected keyword argument(s) "
            f"{', '.join(sorted(unknown)) or 'axis (given twice)'}",
            function=name,
            **_position(tok),
        )
    axis_expr = positional[1] if n == 2 else (keywords["axis"].expr if "axis" in keywords else None)
    axis: int | tuple[int, ...] | None = None
    if axis_expr is not None:
        what = f"the axis of {name}()"
        value = _const_value(axis_expr, what, tok)
        if isinstance(value, list):
            axis = tuple(_integer(v, f"each axis of {name}()", tok, **_AXIS) for v in value)
        else:
            axis = _integer(value, what, tok, **_AXIS)
    keepdims = False
    if "keepdims" in keywords:
        keyword = keywords["keepdims"]
        flag = _const_value(keyword.expr, f"keepdims of {name}()", keyword.token)
        if isinstance(flag, list) or float(flag) not in (0.0, 1.0):
            shown = "a list" if isinstance(flag, list) else repr(float(flag))
            raise InputError(
                f"keepdims of {name}() must be 0 or 1, got {shown}",
                **_position(keyword.token),
            )
        keepdims = float(flag) == 1.0
    attrs = {"axis": axis, "keepdims": keepdims}
    for key, p in extra.items():
        keyword = keywords.get(key)
        attrs[key] = (
            p.default
            if keyword is None
            else _param_value(f"{key} of {name}()", p.kind, keyword.expr, keyword.token)
        )
    return Expr(op_name, (_expr(positional[0]),), attrs)


def _einsum_call(name: str, op, positional: list, keywords: dict, tok) -> Expr:
    """``einsum('ij,jk->ik', a, b)`` (NumPy's order), or ``einsum([a, b], 'ij,jk->ik')`` (how
    it prints: a variadic op's arrays come first as a list); the subscripts are checked
    against the number of arrays here, before anything is evaluated."""
    where = _position(tok)
    if keywords:
        raise ArityError(
            f"{name}() takes no keyword arguments: {name}('ij,jk->ik', a, b)",
            function=name,
            **where,
        )
    if positional and isinstance(positional[0], _String):
        text, operands = positional[0], positional[1:]
    elif (
        len(positional) == 2
        and isinstance(positional[1], _String)
        and isinstance(positional[0], Expr)
        and (positional[0].op == "stack" or isinstance(positional[0].value, list))
    ):
        text, operands = positional[1], _list_items(positional[0], name, tok)
    else:
        for a in positional:
            if isinstance(a, _String):
                raise InputError(
                    f"{name}() takes its subscripts first: {name}('ij,jk->ik', a, b)",
                    **_position(a.token),
                )
        raise ArityError(
            f"{name}() takes a string of subscripts, then the arrays: {name}('ij,jk->ik', a, b)",
            function=name,
            **where,
        )
    operands = [_expr(o) for o in operands]
    if not operands:
        raise ArityError(
            f"{name}() needs at least one array after its subscripts", function=name, **where
        )
    try:
        subscripts = einsum_subscripts(text.text, len(operands))
    except ValueError as exc:
        raise InputError(f"{name}(): {exc}", **_position(text.token)) from None
    return Expr(op.name, tuple(operands), {"subscripts": Word(subscripts)})


def _split_parts(expr: Expr) -> list:
    """The arrays of ``split(x, sections or indices, axis)``: slices of x (``x[:, 2:5]``) where
    the indices and a nonnegative axis say where they are, else parts of the split op (equal
    sections need x's length, known only when it is evaluated)."""
    sections, axis = expr.attrs["indices_or_sections"], expr.attrs["axis"]
    if isinstance(sections, tuple) and axis >= 0:
        bounds = [None, *sections, None]
        lead = (slice(None),) * axis
        return [
            Expr("getitem", expr.args, {"index": lead + (slice(lo, hi),)})
            for lo, hi in zip(bounds, bounds[1:])
        ]
    count = len(sections) + 1 if isinstance(sections, tuple) else sections
    return [Expr(expr.op, expr.args, {**expr.attrs, "part": k}) for k in range(count)]


def _svd_parts(expr: Expr) -> list:
    """U, S, Vh of ``svd(A)``: S is ``svdvals(A)``."""
    return [
        Expr(expr.op, expr.args, {**expr.attrs, "part": 0}),
        Expr("svdvals", expr.args),
        Expr(expr.op, expr.args, {**expr.attrs, "part": 2}),
    ]


#: the functions whose value is several arrays: op -> its parts (each an Expr)
_SEVERAL = {"split": _split_parts, "svd": _svd_parts}


def _several(expr: Expr, name: str, tok):
    """A call of split() or svd(): its several arrays (a :class:`_Tuple`), or the one array a
    ``part=`` names (how a part prints: ``split(x, 3, part=1)`` is ``split(x, 3)[1]``)."""
    make = _SEVERAL.get(expr.op)
    if make is None:
        return expr
    part = expr.attrs["part"]
    parts = make(Expr(expr.op, expr.args, {**expr.attrs, "part": None}))
    if part is None:
        if len(parts) > MAX_ARRAY_ELEMENTS:
            raise LimitError(f"{name}() would give more than {MAX_ARRAY_ELEMENTS:,} arrays")
        return _Tuple(parts, name, tok)
    if part >= len(parts):
        raise InputError(
            f"part of {name}() must be from 0 to {len(parts) - 1} (it gives {len(parts)} "
            f"arrays), got {part}",
            **_position(tok),
        )
    return parts[part]


def _part_of(several: _Tuple, items: list) -> Expr:
    """``split(x, 3)[1]``: one of several arrays, by a constant integer (negative from the end)."""
    n = len(several.parts)
    what = f"the index of {several.name}()'s {n} arrays"
    if len(items) != 1 or isinstance(items[0], _Slice):
        raise InputError(
            f"{what} is one constant integer from 0 to {n - 1} ({several.name}(...)[0]); "
            f"index the array it picks for more",
            **_position(several.token),
        )
    k = _const_int(items[0], what, several.token, low=-n, high=n - 1)
    return several.parts[k]


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


def _suggestion(name: str) -> str:
    """``; did you mean 'log'?`` for an unknown function: another language's spelling of
    one (``ln``), else the closest known name (difflib), else nothing."""
    hint = _OTHER_SPELLINGS.get(name.lower())
    if hint is None:
        lowered = {f.lower(): f for f in FUNCTIONS}
        if name.lower() in lowered:
            hint = lowered[name.lower()]
        else:
            close = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)
            hint = lowered[close[0]] if close else None
    return f"; did you mean {hint!r}?" if hint in FUNCTIONS else ""


# A comparison's token names its op: "<=" builds le (the op table's spelling, read once).
_COMPARISONS = {op.printing.symbol: name for name, op in OPS.items() if op.kind == "comparison"}


class Builder:
    """Callbacks run by the LALR parser: each returns a graph node (an :class:`Expr`).

    A rule's callback is the method named by the rule's alias (else by the rule), called
    with the rule's kept children as arguments (Lark's ``v_args(inline=True)``)."""

    def __init__(self):
        self.reset("")

    def reset(self, source: str) -> None:
        self.source = source
        self.bindings: dict[str, Expr] = {}
        self.variables: dict[str, Expr] = {}
        self.statements: list = []
        # What is known of each array literal's shape before evaluation, by id(): the
        # literal itself (kept alive, so no id is reused), its leading dimensions, and
        # whether those are all of them (a literal of numbers) or only the first ones.
        self.literal_shapes: dict[int, tuple[Expr, tuple[int, ...], bool]] = {}

    # ---- atoms ----------------------------------------------------------------
    def number(self, tok):
        value = float(tok)  # no length limit here: float() reads any number of digits
        if math.isinf(value) and not any(c in tok for c in ".eE"):
            # An integer literal past the largest float (about 1.8e308): Python refuses to
            # make it a float; 1e400 and 1.0e400 are IEEE's inf, written as such.
            digits = str(tok).lstrip("0")
            shown = digits if len(digits) <= 24 else f"{digits[:12]}...{digits[-6:]}"
            raise BadValueError(
                f"the integer {shown} ({len(digits):,} digits) at line {tok.line}, column "
                f"{tok.column} is too large for a float (the largest is about 1.8e308); "
                f"write 1e400 or inf for infinity",
                **_position(tok),
            )
        return Expr.const(value)

    def name(self, tok):
        name = str(tok)
        if name in self.bindings:
            return self.bindings[name]
        if name in CONSTANTS:
            return Expr.const(CONSTANTS[name])
        node = self.variables.get(name)
        if node is None:
            node = self.variables[name] = Expr.var(name)
        return node

    def known_shape(self, expr: Expr) -> tuple[tuple[int, ...], bool] | None:
        """What is known of ``expr``'s shape before evaluation: a number's ``()``, an array
        literal's leading dimensions (and whether they are all), or None (a variable, a
        call...: known only when evaluated)."""
        entry = self.literal_shapes.get(id(expr))
        if entry is not None:
            return entry[1], entry[2]
        if expr.is_const:
            return _list_shape(expr.value) if isinstance(expr.value, list) else ((), True)
        return None

    def array(self, bracket, elements=None):
        """``[a, b, ...]``: a constant when every element is one, else a stack.

        Rows whose shapes are known here must agree (a ragged literal is exit 2 with its
        position); a row known only when evaluated (a variable) may be a number, which
        broadcasts, as in ``[v, 1]``."""
        items = [] if elements is None else elements
        where = f"at line {bracket.line}, column {bracket.column}"
        known = [(i, s) for i, s in enumerate(map(self.known_shape, items)) if s is not None]

        def ragged(i: int, j: int) -> BadValueError:
            return BadValueError(
                f"ragged array literal {where}: element {i + 1} {_describe(*shapes[i])} but "
                f"element {j + 1} {_describe(*shapes[j])} (every row must have the same length)",
                **_position(bracket),
            )

        shapes = dict(known)
        longest = known[0][0] if known else -1  # the row with the most known dimensions
        for i, (shape, _) in known[1:]:
            prefix = shapes[longest][0]
            common = min(len(shape), len(prefix))
            if shape[:common] != prefix[:common]:
                raise ragged(i, longest)
            if len(shape) > len(prefix):
                longest = i
        for i, (shape, complete) in known:
            if complete and len(shape) < len(shapes[longest][0]):
                raise ragged(i, longest)  # a row of numbers beside a row of rows
        if len(known) == len(items):
            inner = shapes[longest][0] if items else ()
            shape, complete = (len(items),) + inner, all(c for _, (_, c) in known)
        else:
            shape, complete = (len(items),), False
        if len(shape) > MAX_ARRAY_DEPTH:
            raise LimitError(
                f"the array literal {where} nests more than {MAX_ARRAY_DEPTH} deep",
                **_position(bracket),
            )
        if math.prod(shape) > MAX_ARRAY_ELEMENTS:
            raise LimitError(
                f"the array literal {where} has more than {MAX_ARRAY_ELEMENTS:,} elements "
                f"(give a large array as a variable's value instead: --vars @FILE)",
                **_position(bracket),
            )
        if all(e.is_const for e in items):
            node = Expr.const([e.value for e in items])
        else:
            node = Expr("stack", tuple(items))
        self.literal_shapes[id(node)] = (node, shape, complete)
        return node

    def elements(self, *items):
        return [_expr(e) for e in items if e is not None]

    def string(self, tok):
        return _String(tok)

    # ---- operators ------------------------------------------------------------
    add = _binary("add")
    sub = _binary("sub")
    mul = _binary("mul")
    div = _binary("div")
    matmul = _binary("matmul")

    @_arrays
    def pow(self, a, _tok, b):
        return Expr("pow", (a, b))

    @_arrays
    def neg(self, a):
        if a.is_const and not isinstance(a.value, list):
            return Expr.const(-a.value)
        return Expr("neg", (a,))

    @_arrays
    def pos(self, a):
        return a

    @_arrays
    def chain_start(self, a, tok, b):
        return _Chain(Expr(_COMPARISONS[str(tok)], (a, b)), b)

    @_arrays
    def chain_next(self, chain, tok, b):
        # a < b < c is (a < b) and (b < c), as in Python: a product of 0/1 values, with b
        # one shared node (evaluated once); the text printer writes (a < b)*(b < c).
        step = Expr(_COMPARISONS[str(tok)], (chain.last, b))
        return _Chain(Expr("mul", (chain.value, step)), b)

    def compare(self, chain):
        return chain.value

    @_arrays
    def dot_t(self, a, _tok):
        return Expr("transpose", (a,))

    # ---- indexing -------------------------------------------------------------
    def slice(self, start=None, stop=None):
        return _Slice(
            None if start is None else _expr(start), None if stop is None else _expr(stop)
        )

    def subscripts(self, *items):
        return [i if isinstance(i, _Slice) else _expr(i) for i in items]

    def index(self, target, items):
        if isinstance(target, _Tuple):
            return _part_of(target, items)
        index = []
        for item in items:
            if isinstance(item, _Slice):
                start = None if item.start is None else _const_int(item.start, "a slice bound")
                stop = None if item.stop is None else _const_int(item.stop, "a slice bound")
                index.append(slice(start, stop))
            elif item.is_const and isinstance(item.value, list):
                index.append(_index_array(item.value))  # x[[0, 2]]: NumPy's integer arrays
            else:
                index.append(_const_int(item, "an index"))
        return Expr("getitem", (target,), {"index": tuple(index)})

    # ---- calls ----------------------------------------------------------------
    def keyword(self, tok, expr):
        return _Keyword(tok, expr)

    def arguments(self, *items):
        return list(items)

    def call(self, tok, arguments=None):
        name = str(tok)
        fn = FUNCTIONS.get(name)
        if fn is None:
            suggestion = _suggestion(name)
            raise UnknownFunctionError(
                f"unknown function {name!r} at line {tok.line}, column {tok.column}{suggestion} "
                f"(type :functions in `autograd-cli repl` to list all {len(FUNCTIONS)})",
                function=name,
                **_position(tok),
            )
        args = arguments or []
        positional = [a for a in args if not isinstance(a, _Keyword)]
        keywords = {a.name: a for a in args if isinstance(a, _Keyword)}
        if len(keywords) != len([a for a in args if isinstance(a, _Keyword)]):
            raise ArityError(f"{name}(): a keyword argument is repeated", **_position(tok))
        n = len(positional)
        for a in args:
            value = a.expr if isinstance(a, _Keyword) else a
            if isinstance(value, _Tuple):
                raise value.misuse()
        op = OPS[fn.with_params] if fn.with_params else None
        if op is None or not any(p.kind in _STRING_KINDS for p in op.params):
            for a in args:
                _expr(a.expr if isinstance(a, _Keyword) else a)

        def arity_error():
            return ArityError(
                f"{name}() takes {fn.arities()} arguments, got {n}"
                + (f" and keyword(s) {', '.join(keywords)}" if keywords else ""),
                function=name,
                **_position(tok),
            )

        if name == "reshape":
            if n != 2 or keywords:
                raise arity_error()
            shape = _const_value(positional[1], "the shape of reshape()", tok)
            shape = shape if isinstance(shape, list) else [shape]
            if any(
                isinstance(s, list) or not math.isfinite(s) or s != math.floor(s) for s in shape
            ):
                raise InputError(
                    "the shape of reshape() must be a list of integers", **_position(tok)
                )
            if len(shape) > _MAX_DIMS:
                raise InputError(
                    f"the shape of reshape() has {len(shape)} dimensions; an array has at "
                    f"most {_MAX_DIMS}",
                    **_position(tok),
                )
            dims = tuple(
                _integer(s, "a dimension of reshape()", tok, low=-1, high=_INT64[1]) for s in shape
            )
            return Expr("reshape", (positional[0],), {"shape": dims})
        if op is not None:
            if any(p.kind == "subscripts" for p in op.params):
                return _einsum_call(name, op, positional, keywords, tok)
            if [p.name for p in op.params[:2]] == ["axis", "keepdims"]:  # norm: a reduction
                if n not in (1, 2):
                    extra = ", ".join(p.name for p in op.params[1:])
                    raise ArityError(
                        f"{name}() takes 1 or 2 arguments (the array and its axis; {extra} by "
                        f"keyword only: {name}(x, {op.params[-1].name}=...)), got {n}",
                        function=name,
                        **_position(tok),
                    )
                return _reduction_call(name, op.name, positional, keywords, tok, op.params)
            return _several(_call_with_params(name, op, positional, keywords, tok), name, tok)
        if fn.reduce and n == 1 or (fn.reduce and n == 2 and fn.positional_axis):
            return _reduction_call(name, fn.reduce, positional, keywords, tok)
        if keywords:
            raise ArityError(
                f"{name}() takes no keyword arguments", function=name, **_position(tok)
            )
        if fn.unary and n == 1:
            return Expr(fn.unary, tuple(positional))
        if fn.binary and n == 2:
            a, b = positional
            variant = OPS[fn.binary].printing.with_constant
            if variant and a.is_const != b.is_const:
                # max(x, c) with a constant c: the clamp op, whose tie convention matches relu.
                x, c = (b, a) if a.is_const else (a, b)
                return Expr(variant, (x, c))
            return Expr(fn.binary, tuple(positional))
        if fn.ternary and n == 3:
            return Expr(fn.ternary, tuple(positional))
        raise arity_error()

    # ---- statements -----------------------------------------------------------
    def assign(self, tok, expr):
        if isinstance(expr, _Tuple):
            n = len(expr.parts)
            raise InputError(
                f"{expr.name}() gives {n} arrays: unpack them into {n} names "
                f"({', '.join(f'{tok}{i}' for i in range(1, min(n, 3) + 1))}"
                f"{', ...' if n > 3 else ''} = {expr.name}(...)) or take one "
                f"({tok} = {expr.name}(...)[0])",
                **_position(expr.token),
            )
        expr = _expr(expr)
        self._bind(tok, expr)
        return _Assignment(str(tok), expr)

    def unpack(self, *items):
        tokens, value = items[:-1], items[-1]
        names = [str(t) for t in tokens]
        if not isinstance(value, _Tuple):
            _expr(value)  # a string: its own error
            raise InputError(
                f"cannot unpack one array into {len(names)} names ({', '.join(names)}): only "
                "a function that gives several arrays (split, svd) can be unpacked",
                **_position(tokens[0]),
            )
        if len(value.parts) != len(names):
            raise InputError(
                f"{value.name}() gives {len(value.parts)} arrays, but {len(names)} names "
                f"({', '.join(names)}) unpack them: give one name for each array",
                **_position(tokens[0]),
            )
        for i, name in enumerate(names):
            if name in names[:i]:
                raise InputError(
                    f"{name!r} is named twice in one unpacking", **_position(tokens[i])
                )
        for token, part in zip(tokens, value.parts):
            self._bind(token, part)
        return _Unpack(names, value.parts)

    def _bind(self, tok, expr):
        name = str(tok)
        if name in CONSTANTS:
            raise InputError(f"cannot assign to the constant {name!r}", **_position(tok))
        if name in self.variables and name not in self.bindings:
            raise InputError(
                f"{name!r} is used as an input before it is assigned", **_position(tok)
            )
        if expr.op not in ("var", "const"):
            expr.label = name
        self.bindings[name] = expr

    def program(self, *statements):
        items = [s for s in statements if s is not None]
        statements_out = []
        for s in items:
            if isinstance(s, _Assignment):
                statements_out.append((s.name, s.expr))
            elif isinstance(s, _Unpack):
                statements_out.extend(zip(s.names, s.parts))
            else:
                statements_out.append((None, _expr(s)))
        if isinstance(items[-1], _Unpack):
            names = items[-1].names
            raise InputError(
                f"the program ends with an unpacking ({', '.join(names)} = ...), which gives "
                f"{len(names)} arrays: end it with the one to output, such as {names[-1]}"
            )
        output = statements_out[-1][1]
        return Program(
            source=self.source,
            output=output,
            statements=statements_out,
            bindings=dict(self.bindings),
            inputs=list(self.variables),
        )


class _LarkCallbacks:
    """The :class:`Builder` as Lark's parser wants its callbacks (for the Lark fallbacks): a
    rule's callback takes the list of children; a name the builder lacks, or an inlined
    ``_rule``, is no callback (Lark then builds a Tree), as in :mod:`.lalr`."""

    __slots__ = ("_builder",)

    def __init__(self, builder: Builder):
        self._builder = builder

    def __getattr__(self, name: str):
        method = None if name.startswith("_") else getattr(self._builder, name, None)
        if method is None:
            raise AttributeError(name)
        return lambda children: method(*children)


#: The options the parser is built with, here and by ``build_tables`` (the one place
#: they are written).  ``transformer`` and ``postlex`` are objects, passed on each build.
LARK_OPTIONS = {"parser": "lalr", "lexer": "contextual", "maybe_placeholders": True}

GRAMMAR_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "expr.lark")


def grammar_bytes() -> bytes:
    """The bytes of the shipped ``expr.lark`` (the one source of truth for the language)."""
    with open(GRAMMAR_PATH, "rb") as f:
        return f.read()


def build_from_grammar(grammar: bytes, builder: Builder, postlex) -> Any:
    """Lark's parser built from the grammar text, in memory (no ``cache``: no file is read
    or written).

    ``build_tables`` serializes a parser built here, so the tables and this fallback
    always use the same options.
    """
    from lark import Lark

    return Lark(
        grammar.decode("utf-8"),
        transformer=_LarkCallbacks(builder),
        postlex=postlex,
        **LARK_OPTIONS,
    )


def load_tables(grammar: bytes, builder: Builder, postlex) -> Any:
    """The engine that runs the shipped ``_tables`` module, or None when they do not fit.

    They fit when they were generated from these options and from these grammar bytes.
    Reading and hashing the 2 KB grammar costs about 0.01 ms per start; it is done so that
    an edited ``expr.lark`` whose tables were not regenerated still parses by the grammar
    (slowly) instead of by stale tables.  (``tests/test_parser_tables.py`` fails on stale
    tables too.)  The engine is :mod:`.lalr`'s runtime, which needs no Lark; where it
    refuses the tables, Lark's own loader, if the tables were written by the installed Lark
    (its serialization format is internal: Lark's own cache is keyed by its version too).
    """
    try:
        from . import _tables
    except (ImportError, SyntaxError):
        return None
    if getattr(_tables, "GRAMMAR_SHA256", None) != hashlib.sha256(grammar).hexdigest():
        return None
    try:
        options = _tables.DATA["options"]
        if any(options.get(k) != v for k, v in LARK_OPTIONS.items()):
            return None
    except (KeyError, TypeError, AttributeError):
        return None
    runtime = lalr.load(_tables.DATA, _tables.MEMO, builder, postlex)
    if runtime is not None:
        return runtime
    import lark
    from lark.exceptions import LarkError

    if getattr(_tables, "LARK_VERSION", None) != lark.__version__:
        return None
    try:
        return lark.Lark._load_from_dict(
            _tables.DATA, _tables.MEMO, transformer=_LarkCallbacks(builder), postlex=postlex
        )
    except (LarkError, KeyError, IndexError, TypeError, ValueError, AttributeError, AssertionError):
        # A format this Lark cannot read after all: build from the grammar instead.
        return None


class Parser:
    """A parser of the expression language: an LALR engine and the :class:`Builder` it runs.

    Build one with :meth:`from_tables` (the shipped tables, fast), :meth:`from_grammar`
    (``expr.lark`` in memory, slow) or :meth:`build` (the first, else the second); or
    use the one :func:`default_parser` keeps.  A parser parses one text at a time (its
    builder holds the text being parsed), so :meth:`parse` holds the parser's lock: threads
    that share it (a Dask worker's, a server's) take turns, and none sees another's names.

    ``engine`` is "runtime" (:mod:`.lalr` on the shipped tables), "lark-tables" (Lark on
    the shipped tables) or "lark-grammar" (Lark, built from ``expr.lark``).
    """

    __slots__ = ("engine", "builder", "_parse", "_errors", "_lock")

    def __init__(self, engine: Any, builder: Builder):
        self.builder = builder
        self._parse = engine.parse
        if isinstance(engine, lalr.Runtime):
            self.engine = "runtime"
            self._errors: tuple = (lalr.UnexpectedInput,)
        else:
            from lark.exceptions import UnexpectedInput

            self.engine = (
                "lark-tables" if engine.source_path == "<deserialized>" else "lark-grammar"
            )  # Lark's mark for a parser loaded from data
            self._errors = (UnexpectedInput,)
        self._lock = threading.Lock()

    @classmethod
    def from_tables(cls, grammar: bytes | None = None) -> Parser | None:
        """The parser from the shipped tables, or None when they do not fit (:func:`load_tables`)."""
        builder = Builder()
        grammar = grammar_bytes() if grammar is None else grammar
        engine = load_tables(grammar, builder, _NewlinesInBrackets())
        return None if engine is None else cls(engine, builder)

    @classmethod
    def from_grammar(cls, grammar: bytes | None = None) -> Parser:
        """The parser built from the grammar text, in memory (:func:`build_from_grammar`)."""
        builder = Builder()
        grammar = grammar_bytes() if grammar is None else grammar
        return cls(build_from_grammar(grammar, builder, _NewlinesInBrackets()), builder)

    @classmethod
    def build(cls) -> Parser:
        """The parser from the shipped tables when they fit, else from the grammar."""
        grammar = grammar_bytes()
        return cls.from_tables(grammar) or cls.from_grammar(grammar)

    @property
    def uses_shipped_tables(self) -> bool:
        return self.engine != "lark-grammar"

    def parse(self, text: str) -> Program:
        """Parse ``text`` (an expression or a program) into a :class:`Program`."""
        if len(text) > MAX_SOURCE_CHARS:
            raise LimitError(
                f"the expression is {len(text):,} characters long; the limit is "
                f"{MAX_SOURCE_CHARS:,} (16 MiB)"
            )
        if not text.strip():
            raise ParseError("empty expression", line=1, column=1, context="\n^")
        if len(text) > MAX_TOKENS:  # a shorter text cannot hold more tokens
            fewest = _fewest_tokens(text)
            if fewest > MAX_TOKENS:  # refused at once; the parse would stop there too, later
                raise LimitError(_too_many_tokens(f"at least {fewest:,}"))
        with self._lock:
            self.builder.reset(text)
            try:
                # what Builder.program returns (Lark types its parse() as giving a Tree)
                return cast(Program, self._parse(text))
            except self._errors as exc:
                raise _syntax_error(text, exc) from None
            except RecursionError:  # pragma: no cover - the build is iterative; a guard
                raise InputError("expression nests too deeply to parse") from None
            finally:
                self.builder.reset("")


@functools.cache
def default_parser() -> Parser:
    """The parser :func:`parse` uses: built by :meth:`Parser.build` on the first call, then
    the same object on every call.  The state of this module is this cache and nothing
    else; ``default_parser.cache_clear()`` forgets it (the next call builds it again).
    """
    return Parser.build()


def _caret_context(text: str, line: int, column: int) -> str:
    """The faulty line with a caret under ``column``: a window of about ``WINDOW``
    characters around it (``...`` where cut), control characters made visible."""
    lines = text.split("\n")  # Lark counts lines by "\n" only (not splitlines' \f, \x1c ...)
    shown = lines[line - 1].rstrip("\r") if 0 < line <= len(lines) else ""
    at = max(column, 1) - 1
    start = max(0, at - WINDOW // 2)
    end = start + WINDOW
    before = ("..." if start else "") + visible(shown[start:at], keep_newlines=False)
    after = visible(shown[at:end], keep_newlines=False) + ("..." if end < len(shown) else "")
    return f"{before}{after}\n{' ' * len(before)}^"


def _readable(names) -> str:
    names = sorted({_READABLE.get(n, n) for n in names})
    return ", ".join(names)


#: what the text before a syntax error is made of, enough to tell where a string may stand
_SCAN = re.compile(
    r"""(?P<string>"[^"\n]*"|'[^'\n]*')|#[^\n]*|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"""
    r"|(?P<keyword>[A-Za-z_][A-Za-z0-9_]*)\s*=(?!=)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P<call>\s*\()?"
    r"|[<>!=]=|(?P<open>[(\[])|(?P<close>[)\]])|(?P<comma>,)|\S"
)


def _string_places() -> dict:
    """Where each function takes a string, from the op table: {name: (argument positions,
    keywords)}: einsum's subscripts first, norm's ord by keyword (see Builder.call)."""
    places = {}
    for name, fn in FUNCTIONS.items():
        op = OPS[fn.with_params] if fn.with_params else None
        params = [p for p in op.params if p.kind in _STRING_KINDS] if op else []
        if params:
            first = {0} if any(p.kind == "subscripts" for p in params) else set()
            places[name] = (first, {p.name for p in params if getattr(p, "keyword_only", False)})
    return places


_STRING_PLACES = _string_places()


def _string_may_follow(text: str) -> bool:
    """Whether a string literal could come at the end of ``text``: where a function takes
    one (``einsum(``, ``norm(x, ord=``).  Elsewhere a syntax error does not offer "a
    string" (``x**`` wants a number, a name, '(' ...)."""
    if not any(name in text for name in _STRING_PLACES):
        return False
    frames: list = []  # per open bracket: [the function it calls or None, argument, keyword]
    at = None  # the frame whose argument starts at the end of the text, if one does
    for m in _SCAN.finditer(text):
        kind, at = m.lastgroup, None
        if kind in ("call", "open"):
            frames.append([m.group("name") if kind == "call" else None, 0, None])
            at = frames[-1]
        elif kind == "close" and frames:
            frames.pop()
        elif kind == "comma" and frames:
            frames[-1][1:] = [frames[-1][1] + 1, None]
            at = frames[-1]
        elif kind == "keyword" and frames:
            frames[-1][2] = m.group("keyword")
            at = frames[-1]
    if at is None or at[0] not in _STRING_PLACES:
        return False
    positions, keywords = _STRING_PLACES[at[0]]
    return at[2] in keywords if at[2] else at[1] in positions


#: units of angle written after a number (``sin(30 deg)``): what converts to radians
_ANGLE_UNITS = dict.fromkeys(("deg", "degree", "degrees"), "*pi/180")
_ANGLE_UNITS.update(dict.fromkeys(("rad", "radian", "radians"), ""))

_ENDS_OPERAND = ("NUMBER", "NAME", "RPAR", "RSQB", "TRANSPOSE")
_STARTS_OPERAND = ("NUMBER", "NAME", "LPAR")


def _juxtaposition_hint(exc) -> str:
    """For two operands side by side (``2x``, ``(a)(b)``, ``sin x``): what to write."""
    history = getattr(exc, "token_history", None) or []
    if not history or history[-1] is None or exc.token.type not in _STARTS_OPERAND:
        return ""
    before, token = history[-1], exc.token
    if before.type not in _ENDS_OPERAND:
        return ""
    left = str(before) if before.type in ("NUMBER", "NAME") else "(...)"
    left = left if len(left) <= 20 else "..."
    right = str(token) if token.type != "LPAR" else "(...)"
    right = right if len(right) <= 20 else "..."
    if before.type == "NAME" and str(before) in FUNCTIONS:
        return f" (a function is called with parentheses: {left}({right}))"
    if token.type == "NAME" and str(token).lower() in _ANGLE_UNITS:
        factor = _ANGLE_UNITS[str(token).lower()]
        return f" (angles are in radians, and there is no unit {right!r}: write {left}{factor})"
    return f" (implicit multiplication is not supported: write {left}*{right})"


def _syntax_error(text: str, exc: Any) -> ParseError:
    """The message of a syntax error that :mod:`.lalr` or Lark raised (the same classes by
    name and attributes)."""
    kind = type(exc).__name__
    line = getattr(exc, "line", -1)
    column = getattr(exc, "column", -1)
    expected = getattr(exc, "expected", None) or getattr(exc, "allowed", None) or set()
    at = getattr(exc, "pos_in_stream", None)  # where the text went wrong
    if kind == "UnexpectedToken" and exc.token.type == "$END" or kind == "UnexpectedEOF":
        # LALR reports the end of input at the last token: put the caret after the text.
        at = len(text)
        lines = text.splitlines() or [""]
        line = len(lines)
        column = len(lines[-1]) + 1
        found = "end of input"
    elif kind == "UnexpectedToken":
        found = repr(str(exc.token)) if exc.token.type != "_NL" else "a newline"
    elif kind == "UnexpectedCharacters":
        pos = cast(int, exc.pos_in_stream)  # the lexer's position
        found = repr(text[pos]) if 0 <= pos < len(text) else "?"
    else:
        found = "input"
    line = max(line, 1)
    column = max(column, 1)
    message = f"syntax error at line {line}, column {column}: unexpected {found}"
    if "STRING" in expected and not _string_may_follow(text[: len(text) if at is None else at]):
        expected = set(expected) - {"STRING"}
    if expected:
        message += f"; expected {_readable(expected)}"
    if kind == "UnexpectedToken":
        message += _juxtaposition_hint(exc)
    return ParseError(message, line=line, column=column, context=_caret_context(text, line, column))


def parse(text: str) -> Program:
    """Parse ``text`` (an expression or a program) into a :class:`Program`, with the
    :func:`default_parser`.

    >>> parse("-x**2").output.op
    'neg'
    """
    return default_parser().parse(text)
