"""Reading what the user typed: the expression, variable values, --wrt lists.

Variables arrive three ways (SPEC.md, "Commands"): ``--NAME VALUE`` (any
option that is not one of the command's own; also ``--NAME=VALUE``),
``--var NAME=VALUE`` (repeatable) and ``--vars JSON`` (``-`` reads stdin).
A VALUE is a number or a JSON array literal.
"""

from __future__ import annotations

import json
import math
import re
import sys

from ..core.errors import BadValueError, InputError, LimitError
from ..core.safetext import excerpt, shorten

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_WORDS = {
    "inf": math.inf,
    "+inf": math.inf,
    "-inf": -math.inf,
    "nan": math.nan,
    "infinity": math.inf,
    "-infinity": -math.inf,
}


class UsageError(InputError):
    kind = "usage"


def parse_literal(text: str, what: str):
    """A number or a JSON array literal (``inf``/``nan`` accepted too)."""
    s = text.strip()
    low = s.lower()
    if low in _WORDS:
        return _WORDS[low]
    try:
        return float(s)
    except ValueError:
        pass
    # JSON, plus what people type after PyTorch and NumPy: 1. and .5, inf and nan.
    text_json = re.sub(r"(?<![\d.])(\d+)\.(?![\d])", r"\1.0", s)
    text_json = re.sub(r"(?<![\d])\.(\d)", r"0.\1", text_json)
    text_json = re.sub(
        r"(?<![A-Za-z\"])(-?)inf(?![A-Za-z\"])", r'"\1inf"', text_json.replace("nan", '"nan"')
    )
    try:
        value = json.loads(text_json)
    except json.JSONDecodeError:
        raise BadValueError(
            f"{what}: {excerpt(text)} is not a number or a JSON array", value=text
        ) from None
    return _numbers(value, what, text)


def _numbers(value, what: str, text: str):
    """Check a decoded JSON value holds only numbers (or the strings nan/inf) in lists."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, bool) or not isinstance(item, (int, float, str)):
            raise BadValueError(
                f"{what}: {excerpt(text)} holds {shorten(repr(item))}, not a number", value=text
            )
        elif isinstance(item, str) and item.lower() not in _WORDS:
            raise BadValueError(
                f"{what}: {excerpt(text)} holds {shorten(repr(item))}, not a number", value=text
            )
    if isinstance(value, str):
        return _WORDS[value.lower()]
    if isinstance(value, list):
        return _decode_words(value)
    return value


def _decode_words(value):
    # Replace "nan"/"inf" strings in nested lists (iteratively).
    root = [value]
    stack = [root]
    while stack:
        lst = stack.pop()
        for i, item in enumerate(lst):
            if isinstance(item, list):
                stack.append(item)
            elif isinstance(item, str):
                lst[i] = _WORDS[item.lower()]
    return root[0]


#: the most bytes read for an expression or a --vars document (stdin or @FILE):
#: far above any real expression, far below what would exhaust memory
MAX_INPUT_BYTES = 16 * 1024 * 1024

#: where input that was not valid UTF-8 was read (its bad bytes became U+FFFD)
_REPLACED: list = []


def note_replaced(where: str) -> None:
    if where not in _REPLACED:
        _REPLACED.append(where)


def replaced_note() -> str:
    """A note for error messages when some input was not valid UTF-8."""
    if not _REPLACED:
        return ""
    return (
        f" (note: {' and '.join(_REPLACED)} held bytes that are not valid UTF-8; "
        f"they are shown as U+FFFD)"
    )


def _read_bounded(stream, what: str, where: str) -> str:
    """At most MAX_INPUT_BYTES from a binary stream, decoded as UTF-8 (bad bytes replaced)."""
    data = stream.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise LimitError(
            f"{what}: {where} is larger than the limit of {MAX_INPUT_BYTES // (1024 * 1024)} MiB"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        note_replaced(f"{what} ({where})")
        return data.decode("utf-8", "replace")


def read_stdin(what: str) -> str:
    if sys.stdin is None or sys.stdin.closed:
        raise UsageError(f"{what}: '-' reads standard input, but there is none")
    try:
        buffer = getattr(sys.stdin, "buffer", None)
        if buffer is None:  # a text stream handed in by a caller (tests)
            return sys.stdin.read(MAX_INPUT_BYTES + 1)
        return _read_bounded(buffer, what, "standard input")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise UsageError(f"{what}: cannot read standard input ({reason})") from None


def read_expression(text: str) -> str:
    """The expression: ``-`` reads stdin (without its final newline)."""
    if text == "-":
        return read_stdin("expression").rstrip("\r\n")
    if text.startswith(" -"):  # protected from Click by cli.main.normalize_argv
        return text[1:]
    return text


def vars_from_json(text: str) -> dict:
    if text == "-":
        text = read_stdin("--vars")
    elif text.startswith("@"):
        path = text[1:]
        try:
            with open(path, "rb") as f:
                text = _read_bounded(f, "--vars", excerpt(path))
        except OSError as exc:
            raise UsageError(f"--vars: cannot read {excerpt(path)}: {exc.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadValueError(
            f"--vars: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    if not isinstance(data, dict):
        raise BadValueError('--vars: expected a JSON object like {"x": 1, "W": [[1, 2]]}')
    out = {}
    for name, value in data.items():
        if not _NAME.match(name):
            raise BadValueError(f"--vars: {excerpt(name)} is not a valid variable name")
        out[name] = _numbers(value, f"--vars {name}", json.dumps(value))
    return out


def collect_variables(
    extra_args: list[str], var_options: list[str] | None, vars_json: str | None
) -> tuple[dict, list[str]]:
    """Values from ``--NAME VALUE`` pairs, ``--var`` and ``--vars``; returns (values, leftovers).

    Leftovers are tokens that are neither (the caller reports them).
    """
    values: dict = {}
    if vars_json is not None:
        values.update(vars_from_json(vars_json))
    values.update(named_literals(var_options or [], "--var"))
    leftovers = []
    i = 0
    while i < len(extra_args):
        token = extra_args[i]
        if token.startswith("--") and len(token) > 2:
            name, sep, value = token[2:].partition("=")
            if not _NAME.match(name):
                raise UsageError(
                    f"{excerpt(token)} is not a valid --NAME VALUE pair (NAME must be a "
                    f"variable name)"
                )
            if not sep:
                if i + 1 >= len(extra_args):
                    raise UsageError(f"option --{name} needs a value (--{name} VALUE)")
                value = extra_args[i + 1]
                i += 1
            values[name] = parse_literal(value, f"--{name}")
        else:
            leftovers.append(token)
        i += 1
    return values, leftovers


def split_names(text: str | None) -> list[str]:
    if not text:
        return []
    names = [n.strip() for n in text.split(",") if n.strip()]
    for n in names:
        if not _NAME.match(n):
            raise UsageError(f"--wrt: {excerpt(n)} is not a variable name")
    return names


def named_literals(items: list[str], what: str) -> dict:
    """``NAME=VALUE`` items (as for --var) as a dict of parsed values."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not _NAME.match(name):
            raise UsageError(f"{what} expects NAME=VALUE, got {excerpt(item)}")
        out[name] = parse_literal(value, f"{what} {name}")
    return out
