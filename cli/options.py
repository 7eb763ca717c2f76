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


#: a JSON value nested past what the decoder can follow (thousands deep)
_TOO_DEEP = "{what}: an array nested far too deep; a value has at most 32 dimensions"


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
            f"{what}: {excerpt(text)} is not a number or a JSON array", value=shorten(text)
        ) from None
    except RecursionError:
        raise BadValueError(_TOO_DEEP.format(what=what), value=shorten(text)) from None
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
                f"{what}: {excerpt(text)} holds {shorten(repr(item))}, not a number",
                value=shorten(text),
            )
        elif isinstance(item, str) and item.lower() not in _WORDS:
            raise BadValueError(
                f"{what}: {excerpt(text)} holds {shorten(repr(item))}, not a number",
                value=shorten(text),
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


def forget_replaced() -> None:
    """A new run starts with no note (the list is per run, not per process)."""
    _REPLACED.clear()


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
        data = json.loads(text, object_pairs_hook=_unique_keys)
    except RecursionError:
        raise BadValueError(_TOO_DEEP.format(what="--vars")) from None
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


def _unique_keys(pairs: list) -> dict:
    """A --vars object, refusing a name given twice with different values."""
    out: dict = {}
    for name, value in pairs:
        if name in out and not _same_json(out[name], value):
            raise UsageError(
                f"--vars: {excerpt(name)} is given twice with different values; give it once"
            )
        out[name] = value
    return out


def _same_json(a, b) -> bool:
    try:
        return same_value(a, b)
    except (TypeError, ValueError):  # not numbers: reported as such afterwards
        return a == b


def collect_variables(
    extra_args: list[str], var_options: list[str] | None, vars_json: str | None
) -> tuple[dict, list[str]]:
    """Values from ``--NAME VALUE`` pairs, ``--var`` and ``--vars``; returns (values, leftovers).

    Leftovers are tokens that are neither (the caller reports them), including a
    ``--NAME`` with no value after it (the last token, or one followed by another
    ``--NAME``): the caller knows whether NAME is a variable or a misspelt option.
    A variable given twice with different values is an error (the same value twice is
    not), whichever ways it was given.
    """
    values: dict = {}
    sources: dict = {}  # name -> how it was given, for the message about a conflict

    def put(name: str, value, how: str) -> None:
        if name in values and not same_value(values[name], value):
            raise UsageError(
                f"variable {name!r} is given twice with different values: "
                f"{_show(values[name])} ({sources[name]}) and {_show(value)} ({how}); "
                f"give it once"
            )
        values.setdefault(name, value)
        sources.setdefault(name, how)

    if vars_json is not None:
        for name, value in vars_from_json(vars_json).items():
            put(name, value, "--vars")
    for name, value in named_literals(var_options or [], "--var").items():
        put(name, value, "--var")
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
                if i + 1 >= len(extra_args) or is_option_name(extra_args[i + 1]):
                    leftovers.append(token)  # no value: the caller says what was meant
                    i += 1
                    continue
                value = extra_args[i + 1]
                i += 1
            put(name, parse_literal(value, f"--{name}"), f"--{name}")
        else:
            leftovers.append(token)
        i += 1
    return values, leftovers


def is_option_name(token: str) -> bool:
    """``--NAME`` or ``--NAME=...``: an option or a variable's name, never a value."""
    return token.startswith("--") and bool(_NAME.match(token[2:].split("=", 1)[0]))


def _show(value) -> str:
    return shorten(json.dumps(value))


def same_value(a, b) -> bool:
    """Two parsed values are the same (nan equals nan, 1 equals 1.0, lists elementwise)."""
    if isinstance(a, list) or isinstance(b, list):
        return (
            isinstance(a, list)
            and isinstance(b, list)
            and len(a) == len(b)
            and all(same_value(x, y) for x, y in zip(a, b))
        )
    a, b = float(a), float(b)
    return a == b or (math.isnan(a) and math.isnan(b))


#: the highest --order accepted (diff, grad, batch): far above any use we know of, low
#: enough that a slip like --order 1000 is an error at once, not an hour of work
MAX_ORDER = 20


def parse_order(text, minimum: int | None = 1) -> int:
    """``--order``: a whole number (``2.0`` counts) from ``minimum`` to :data:`MAX_ORDER`.

    ``minimum=None`` leaves the lower bound to the caller (batch checks its own).
    """
    s = str(text).strip()
    try:
        number = float(s)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or not number.is_integer():
        raise UsageError(f"--order must be a whole number, not {excerpt(s)}")
    order = int(number)
    if minimum is not None and order < minimum:
        raise UsageError(f"--order must be {minimum} or more, not {order}")
    if order > MAX_ORDER:
        raise UsageError(f"--order must be at most {MAX_ORDER}, not {order}")
    return order


def split_names(text: str | None) -> list[str]:
    if not text:
        return []
    names = [n.strip() for n in text.split(",") if n.strip()]
    for n in names:
        if not _NAME.match(n):
            raise UsageError(f"--wrt: {excerpt(n)} is not a variable name")
    return names


def named_literals(items: list[str], what: str) -> dict:
    """``NAME=VALUE`` items (as for --var) as a dict of parsed values.

    The same NAME twice with different values is an error; with the same value it passes.
    """
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not _NAME.match(name):
            raise UsageError(f"{what} expects NAME=VALUE, got {excerpt(item)}")
        parsed = parse_literal(value, f"{what} {name}")
        if name in out and not same_value(out[name], parsed):
            raise UsageError(f"{what}: {name!r} is given twice with different values; give it once")
        out.setdefault(name, parsed)
    return out


#: the environment variable that sets --timeout when the option is not given
TIMEOUT_ENV = "AUTOGRAD_CLI_TIMEOUT"
#: the longest --timeout accepted (a year): setitimer takes no more on every platform
MAX_TIMEOUT = 365 * 24 * 3600.0


def parse_timeout(text: str | None) -> float | None:
    """``--timeout SECONDS`` (else ``AUTOGRAD_CLI_TIMEOUT``): seconds above 0, or None for no
    limit (the option and the variable absent, empty or ``0``).  Anything else (a negative,
    non-finite or non-numeric value) is a usage error, before any work."""
    import os

    source = "--timeout"
    if text is None:
        text = os.environ.get(TIMEOUT_ENV)
        source = TIMEOUT_ENV
        if text is None or not text.strip():
            return None
    s = str(text).strip()
    try:
        seconds = float(s)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds < 0:
        raise UsageError(
            f"{source} must be a number of seconds, 0 or more (0: no limit), not {excerpt(s)}"
        )
    if seconds == 0:
        return None
    if seconds > MAX_TIMEOUT:
        raise UsageError(f"{source} must be at most {MAX_TIMEOUT:.0f} seconds, not {excerpt(s)}")
    return max(seconds, 1e-3)


def parse_max_memory(text: str | None) -> float | None:
    """``--max-memory SIZE`` in bytes (``math.inf``: no limit), or None when the option is
    absent (the environment's ``AUTOGRAD_CLI_MAX_MEMORY`` or the default then).  A bad SIZE,
    given here or in the environment, is a usage error before any work."""
    from ..core import limits

    try:
        if text is not None:
            return limits.parse_size(str(text))
        limits.max_bytes()  # the environment's value, checked now rather than mid-run
    except BadValueError as exc:
        raise UsageError(exc.message) from None
    return None


def parse_count(value: int, option: str) -> int | None:
    """A count option where 0 means no limit (``--max-steps``, ``--max-nodes``)."""
    if value < 0:
        raise UsageError(f"{option} must be 0 (no limit) or more, not {value}")
    return value or None
