"""The message of a syntax error: where (line, column, the line with a caret), what was
found, what was expected (in readable names), and a hint for the usual slips (``2x``,
``sin x``, ``30 deg``)."""

from __future__ import annotations

import re
from typing import Any, cast

from ..core.errors import ParseError
from ..core.ops import FUNCTIONS, OPS
from ..core.safetext import WINDOW, visible
from .values import _takes_string

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
        params = [p for p in op.params if _takes_string(p)] if op else []
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
