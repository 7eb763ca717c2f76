"""A value as a person types it: a number or a JSON array literal, checked.

The command line's options and a batch line's keys, and the analyses' settings
(:mod:`autograd_cli.core.analysis_docs`), read values the same way: ``inf``/``nan`` and
``1.``/``.5`` accepted, an integer past the largest float refused (``1e400`` is inf; 400
digits are a slip), a JSON array holding only numbers.  Complex numbers as Python writes them
(``3+4j``, ``2j``, also inside an array: ``[1+2j, 3j]``) or as SPEC's JSON object
``{"re": 3, "im": 4}`` (in a value, an array, a ``--vars`` document or a batch line).
``what`` names where the value was (``--grad-output``, ``"at" x``) in the error.
Library code: it imports only the errors.
"""

from __future__ import annotations

import json
import math
import re

from .errors import BadValueError, InputError
from .safetext import excerpt, shorten


class UsageError(InputError):
    """A setting or option given in a form it does not take (exit 2, kind ``usage``)."""

    kind = "usage"


_WORDS = {
    "inf": math.inf,
    "+inf": math.inf,
    "-inf": -math.inf,
    "nan": math.nan,
    "infinity": math.inf,
    "-infinity": -math.inf,
}


#: a JSON value nested past what the decoder can follow (thousands deep)
_TOO_DEEP = "{what}: an array nested far too deep; a value has at most 32 dimensions"


def parse_literal(text: str, what: str):
    """A number or a JSON array literal (``inf``/``nan`` accepted too)."""
    s = text.strip()
    low = s.lower()
    if low in _WORDS:
        return _WORDS[low]
    try:
        number = float(s)
    except ValueError:
        pass
    else:
        if math.isinf(number) and _INTEGER.fullmatch(s):  # 1e400 is inf; 400 digits a slip
            raise BadValueError(f"{what}: {too_large_integer(s)}", value=shorten(s))
        return number
    if "j" in low and _COMPLEX.fullmatch(s):
        return complex(s.replace(" ", ""))
    # JSON, plus what people type after PyTorch and NumPy: 1. and .5, inf and nan, 3+4j.
    if "j" in low:
        s = _COMPLEX_IN_ARRAY.sub(_complex_json, s)
    text_json = re.sub(r"(?<![\d.])(\d+)\.(?![\d])", r"\1.0", s)
    text_json = re.sub(r"(?<![\d])\.(\d)", r"0.\1", text_json)
    text_json = re.sub(
        r"(?<![A-Za-z\"])(-?)inf(?![A-Za-z\"])", r'"\1inf"', _BARE_NAN.sub('"nan"', text_json)
    )
    try:
        value = load_json(text_json, what)
    except json.JSONDecodeError:
        hint = " (an imaginary unit is written j, as in Python: 3+4j)" if _WITH_I.search(s) else ""
        raise BadValueError(
            f"{what}: {excerpt(text)} is not a number or a JSON array{hint}", value=shorten(text)
        ) from None
    except RecursionError:
        raise BadValueError(_TOO_DEEP.format(what=what), value=shorten(text)) from None
    return _numbers(value, what, text)


#: a real number's text (Python's, without underscores) and a complex number as Python
#: writes it: an imaginary part with j, maybe after a real part (3+4j, -2.5e-3j, (1-1j))
_REAL = r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|nan"
_COMPLEX_TEXT = rf"[+-]?(?:(?:{_REAL})\s*[+-]\s*)?(?:{_REAL})[jJ]"
_COMPLEX = re.compile(rf"\s*(?:{_COMPLEX_TEXT}|\(\s*{_COMPLEX_TEXT}\s*\))\s*", re.IGNORECASE)
#: one inside an array's text (not inside a word or a quoted string)
_COMPLEX_IN_ARRAY = re.compile(rf"(?<![\w.\"])(?:{_COMPLEX_TEXT})(?![\w.\"])", re.IGNORECASE)


_WITH_I = re.compile(rf"(?:{_REAL})[iI](?![A-Za-z])")
_BARE_NAN = re.compile(r"(?<![A-Za-z\"])nan(?![A-Za-z\"])")


def _complex_json(m: re.Match) -> str:
    """A complex number's text in an array as SPEC's JSON object (its parts' words quoted)."""
    z = complex(m.group(0).replace(" ", ""))
    return json.dumps({"re": _json_part(z.real), "im": _json_part(z.imag)})


def _json_part(x: float):
    return x if math.isfinite(x) else ("nan" if x != x else ("inf" if x > 0 else "-inf"))


def complex_object(item) -> complex | None:
    """SPEC's ``{"re": x, "im": y}`` (each part a number or nan/inf/-inf) as a complex
    number; None for anything else."""
    if type(item) is not dict or item.keys() != {"re", "im"}:
        return None
    parts = []
    for part in (item["re"], item["im"]):
        if isinstance(part, str) and part.lower() in _WORDS:
            part = _WORDS[part.lower()]
        if isinstance(part, bool) or not isinstance(part, (int, float)):
            return None
        if type(part) is int and not -_FLOAT_LIMIT < part < _FLOAT_LIMIT:
            return None
        parts.append(float(part))
    return complex(parts[0], parts[1])


#: an integer literal (digits, maybe a sign; float() also takes underscores)
_INTEGER = re.compile(r"\s*[+-]?[0-9_]+\s*")
#: the integers float() refuses (OverflowError): those that round past the largest float
_FLOAT_LIMIT = 2**1024 - 2**970


def too_large_integer(digits) -> str:
    """Why an integer (its text, or an int) is refused: past the largest float, or past the
    digits Python turns into an int (``sys.get_int_max_str_digits``).  Never raises, however
    many digits (an int too long for ``str`` is shown by its size)."""
    try:
        text = str(digits).strip().replace("_", "")
    except ValueError:  # an int of more digits than str() writes
        size = f"about {int(abs(digits).bit_length() * math.log10(2)) + 1:,} digits"
        return f"an integer of {size} is too large for a floating-point number"
    sign = "-" if text.startswith("-") else ""
    text = text.lstrip("+-").lstrip("0") or "0"
    shown = text if len(text) <= 24 else f"{text[:12]}...{text[-6:]}"
    return (
        f"the integer {sign}{shown} ({len(text):,} digits) is too large for a floating-point "
        f"number (the largest is about 1.8e308); write 1e400 or inf for infinity"
    )


def load_json(text: str, what: str | None = None, **hooks):
    """``json.loads(text, **hooks)`` of user text (the same ``JSONDecodeError``), where an
    integer of more digits than Python reads (4,300 by default: a ValueError that would be
    an internal error) is a bad value, ``what`` naming where it was."""
    try:
        return json.loads(text, **hooks)
    except json.JSONDecodeError:
        raise
    except ValueError:  # found again, to say which integer
        pass

    def integer(digits: str) -> int:
        try:
            return int(digits)
        except ValueError:
            found = too_large_integer(digits)
            raise BadValueError(f"{what}: {found}" if what else found) from None

    return json.loads(text, parse_int=integer, **hooks)


def _numbers(value, what: str, text: str):
    """Check a decoded JSON value holds only numbers (or the strings nan/inf) in lists (an
    integer past the largest float is a bad value: 1e400 is inf, 400 digits a slip)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif type(item) is int and not -_FLOAT_LIMIT < item < _FLOAT_LIMIT:
            raise BadValueError(f"{what}: {too_large_integer(item)}", value=shorten(text))
        elif type(item) is dict and complex_object(item) is not None:
            continue
        elif isinstance(item, bool) or not isinstance(item, (int, float, str, complex)):
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
    if type(value) is dict:
        return complex_object(value)
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
            elif type(item) is dict:
                lst[i] = complex_object(item)
    return root[0]


#: :func:`_numbers` under its public name
numbers = _numbers
