"""User text made safe to echo: control characters escaped, long text cut to a window.

Whatever a user typed can come back in an error message, a table title, a graph
label or a warning.  Printed raw, an ESC, CR or BEL in it could take over the
reader's terminal (move the cursor, rewrite a line, change colours), and a bidi
override could make the text read differently from what it is.  Every echo goes
through :func:`visible`, which writes such characters as Python-style escapes
(``\\x1b``, ``\\u202e``) in one linear pass; :func:`excerpt` and :func:`shorten`
keep a message short however large the input.

>>> visible("a\\x1b[31mb\\rc")
'a\\\\x1b[31mb\\\\rc'
>>> excerpt("x" * 1000, limit=20)
"'xxxxxxxxxx...(990 more characters)'"
"""

from __future__ import annotations

import re

#: characters shown as escapes: C0 controls except newline and tab, DEL, C1 controls,
#: the bidi marks, embeddings, overrides and isolates, and the line/paragraph separators
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029"
    "\u202a-\u202e\u2066-\u2069\ufff9-\ufffb\ud800-\udfff]"
)
_NAMED = {"\r": "\\r", "\x0b": "\\v", "\x0c": "\\f", "\x00": "\\0"}

#: the most characters of user text an error message quotes
WINDOW = 200


def _escape(match: re.Match) -> str:
    ch = match.group()
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, keep_newlines: bool = True) -> str:
    """``text`` with every character that could control a terminal shown as an escape."""
    text = _UNSAFE.sub(_escape, text)
    if not keep_newlines:
        text = text.replace("\n", "\\n").replace("\t", "\\t")
    return text


def shorten(text: str, limit: int = WINDOW) -> str:
    """``text`` cut to about ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[: limit // 2]}...({len(text) - limit} more characters)...{text[-(limit // 2) :]}"


def excerpt(text: str, limit: int = WINDOW) -> str:
    """A quoted, escaped excerpt of user text for a message: ``'abc'``, or its first
    ``limit // 2`` characters and a count of the rest when it is longer than ``limit``."""
    more = ""
    if len(text) > limit:
        more = f"...({len(text) - limit // 2} more characters)"
        text = text[: limit // 2]
    return "'" + visible(text, keep_newlines=False).replace("'", "\\'") + more + "'"


def safe_error(message: str, details: dict) -> tuple[str, dict]:
    """An error's message and string details made safe to show, as every error is shown:
    control characters escaped, the message cut to ``4 * WINDOW`` characters and each detail
    to ``WINDOW`` (``context``, the caret's text, is left to the caller)."""
    return shorten(visible(message), 4 * WINDOW), {
        k: shorten(visible(v), WINDOW) if isinstance(v, str) and k != "context" else v
        for k, v in details.items()
    }
