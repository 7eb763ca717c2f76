"""Reading what the user typed: the expression, variable values, --wrt lists.

Variables arrive three ways (SPEC.md, "Commands"): ``--NAME VALUE`` (any
option that is not one of the command's own; also ``--NAME=VALUE``),
``--var NAME=VALUE`` (repeatable) and ``--vars JSON`` (``-`` reads stdin).
A VALUE is a number or a JSON array literal, or ``@FILE``: an array read from a
``.npy``, ``.npz`` (``@FILE.npz:KEY``), ``.csv``/``.txt`` or ``.json`` file
(:func:`read_value_file`); ``--vars @FILE`` reads a JSON object or a ``.npz`` archive.
"""

from __future__ import annotations

import json
import math
import re
import sys

from ..core.errors import BadValueError, LimitError
from ..core.program import NAME
from ..core.safetext import excerpt, shorten
from ..core.values import (  # noqa: F401 - the value parsing is the library's; its names here too
    _TOO_DEEP,
    _WORDS,
    UsageError,
    _numbers,
    load_json,
    parse_literal,
    too_large_integer,
)
from .status import flag

_NAME = NAME  # a variable's name, as the grammar reads one
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
        if path.lower().endswith(".npz"):
            return vars_from_npz(path)
        if path.lower().endswith(".npy"):
            raise UsageError(
                f"--vars: {excerpt(path)} holds one array; give it as --NAME @{excerpt(path)} "
                "(--vars reads a JSON object or a .npz archive, a variable per key)"
            )
        try:
            with open(path, "rb") as f:
                text = _read_bounded(f, "--vars", excerpt(path))
        except OSError as exc:
            raise UsageError(f"--vars: cannot read {excerpt(path)}: {exc.strerror}") from None
    try:
        data = load_json(text, "--vars", object_pairs_hook=_unique_keys)
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
    extra_args: list[str],
    var_options: list[str] | None,
    vars_json: str | None,
    from_vars: set | None = None,
) -> tuple[dict, list[str]]:
    """Values from ``--NAME VALUE`` pairs, ``--var`` and ``--vars``; returns (values, leftovers).

    Leftovers are tokens that are neither (the caller reports them), including a
    ``--NAME`` with no value after it (the last token, or one followed by another
    ``--NAME``): the caller knows whether NAME is a variable or a misspelt option.
    A variable given twice with different values is an error (the same value twice is
    not), whichever ways it was given.  A VALUE may be ``@FILE`` (:func:`read_value_file`).
    ``from_vars``, when given, receives the names that only ``--vars`` gave (the caller
    may ignore those the expression does not use).
    """
    values: dict = {}
    sources: dict = {}  # name -> how it was given, for the message about a conflict
    explicit: set = set()

    def put(name: str, value, how: str) -> None:
        if name in values and not same_value(values[name], value):
            raise UsageError(
                f"variable {name!r} is given twice with different values: "
                f"{_show(values[name])} ({sources[name]}) and {_show(value)} ({how}); "
                f"give it once"
            )
        values.setdefault(name, value)
        sources.setdefault(name, how)
        if how != "--vars":
            explicit.add(name)

    if vars_json is not None:
        for name, value in vars_from_json(vars_json).items():
            put(name, value, "--vars")
    for name, value in named_literals(var_options or [], "--var", files=True).items():
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
            put(name, read_value(value, f"--{name}"), f"--{name}")
        else:
            leftovers.append(token)
        i += 1
    if from_vars is not None:
        from_vars.update(name for name in values if name not in explicit)
    return values, leftovers


def is_option_name(token: str) -> bool:
    """``--NAME`` or ``--NAME=...``: an option or a variable's name, never a value."""
    return token.startswith("--") and bool(_NAME.match(token[2:].split("=", 1)[0]))


def _show(value) -> str:
    if hasattr(value, "shape"):  # an array read from a file
        return f"an array of shape {tuple(value.shape)}" if value.shape else _show(float(value))
    return shorten(json.dumps(value))


def same_value(a, b) -> bool:
    """Two parsed values are the same (nan equals nan, 1 equals 1.0, lists elementwise)."""
    if hasattr(a, "shape") or hasattr(b, "shape"):  # an array read from a file
        import numpy

        try:
            x, y = numpy.asarray(a, dtype=float), numpy.asarray(b, dtype=float)
        except (TypeError, ValueError):
            return False
        return x.shape == y.shape and bool(numpy.array_equal(x, y, equal_nan=True))
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
    """``--order``: a whole number (``2.0`` counts) from ``minimum`` to :data:`MAX_ORDER`,
    checked by the library's one check (:func:`~autograd_cli.core.program.check_order`), its
    message spelled with the flag.

    ``minimum=None`` leaves the lower bound to the caller (batch checks its own).
    """
    from ..core.program import RequestError, check_order

    try:
        return check_order(text, minimum, MAX_ORDER, text=True)
    except RequestError as exc:
        raise UsageError(exc.spelled(flag)) from None


def split_names(text: str | None) -> list[str]:
    """``--wrt``'s names, read by the library's one reader
    (:func:`~autograd_cli.core.program.split_names`), its message spelled with the flag."""
    from ..core.program import split_names as read

    try:
        return read(text or None, names_only=True)
    except UsageError as exc:
        raise UsageError(exc.spelled(flag)) from None


def named_literals(items: list[str], what: str, files: bool = False) -> dict:
    """``NAME=VALUE`` items (as for --var) as a dict of parsed values (``files``: a VALUE
    may be ``@FILE``).

    The same NAME twice with different values is an error; with the same value it passes.
    """
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not _NAME.match(name):
            raise UsageError(f"{what} expects NAME=VALUE, got {excerpt(item)}")
        parsed = (read_value if files else parse_literal)(value, f"{what} {name}")
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
        raise UsageError(exc.spelled(flag)) from None
    return None


def parse_count(value: int, option: str) -> int | None:
    """A count option where 0 means no limit (``--max-steps``, ``--max-nodes``)."""
    if value < 0:
        raise UsageError(f"{option} must be 0 (no limit) or more, not {value}")
    return value or None


# ---------------------------------------------------------------------------
# Values from files: --x @x.npy, @x.npz[:KEY], @x.csv, @x.txt, @x.json; --vars @vars.npz
# ---------------------------------------------------------------------------

#: a value file's form, by its extension (case does not matter)
VALUE_FILES = {
    ".npy": "npy",
    ".npz": "npz",
    ".csv": "text",
    ".txt": "text",
    ".tsv": "text",
    ".json": "json",
}
_NPZ_KEY = re.compile(r"(?P<path>.+\.npz):(?P<key>[^:/\\]*)\Z", re.IGNORECASE)
_FILE_FORMS = ".npy, .npz (@FILE.npz:KEY), .csv, .txt or .json"


def is_file_value(text: str) -> bool:
    """``@PATH``: a value read from a file (a literal never starts with ``@``)."""
    return text.startswith("@")


def read_value(text: str, what: str):
    """A VALUE as typed: ``@FILE`` (see :func:`read_value_file`), else a literal."""
    if is_file_value(text.strip()):
        return read_value_file(text.strip()[1:], what)
    return parse_literal(text, what)


def read_value_file(spec: str, what: str):
    """One variable's value from a file: ``x.npy``, ``x.npz:KEY`` (the key may be left out
    when the archive holds one array), ``x.csv``/``x.txt`` (``numpy.loadtxt``: comma- or
    whitespace-separated; one row or one column is a vector), ``x.json`` (a number or
    array).  NumPy files are read with ``allow_pickle=False`` (never unpickled), after
    their headers' shapes are checked against the memory limit; text files are read up to
    :data:`MAX_INPUT_BYTES`.  A missing or unreadable file is a usage error, a malformed
    one a bad value (both exit 2), one past a limit a limit error (exit 1)."""
    if not spec:
        raise UsageError(f"{what}: '@' needs a file name (@FILE with FILE ending {_FILE_FORMS})")
    key = None
    m = _NPZ_KEY.match(spec)
    if m is not None:
        spec, key = m.group("path"), m.group("key")
    kind = _file_kind(spec, what)
    where = excerpt(spec)
    label = f"{what} (@{where})"
    if kind == "npz":
        arrays = _read_npz(spec, what, None if key is None else [key])
        if key is None and len(arrays) != 1:
            keys = ", ".join(excerpt(k) for k in arrays) or "none"
            raise UsageError(
                f"{what}: {where} holds {len(arrays)} arrays ({keys}); name one after "
                f"the file name: @FILE.npz:KEY"
            )
        return next(iter(arrays.values()))
    if kind == "npy":
        with _open_binary(spec, what) as f:
            return _read_npy(f, label, where)
    with _open_binary(spec, what, regular=False) as f:
        try:
            text = _read_bounded(f, what, where)
        except OSError as exc:
            raise UsageError(f"{what}: cannot read {where}: {exc.strerror or exc}") from None
    if kind == "json":
        if text.lstrip().startswith("{"):  # a variable per key: what --vars reads
            raise UsageError(
                f"{what}: {where} holds a JSON object, a variable per key: give it as "
                f"--vars @{where} ({what} @FILE.json reads one number or array)"
            )
        return parse_literal(text, label)
    return _read_table(text, label, where)


def _file_kind(path: str, what: str) -> str:
    import os.path

    ext = os.path.splitext(path)[1].lower()
    kind = VALUE_FILES.get(ext)
    if kind is None:
        raise UsageError(
            f"{what}: cannot tell the form of {excerpt(path)} from its name; "
            f"a value file ends {_FILE_FORMS}"
        )
    return kind


def _open_binary(path: str, what: str, regular: bool = True):
    """The file, open for reading; a NumPy file (``regular``) must be a regular file no
    larger than the memory limit."""
    import contextlib
    import os
    import stat

    try:
        f = open(path, "rb")  # noqa: SIM115 - closed by the caller's with-block
    except OSError as exc:
        raise UsageError(f"{what}: cannot read {excerpt(path)}: {exc.strerror}") from None
    if regular:
        with contextlib.ExitStack() as on_error:  # closes the file if a check fails
            on_error.callback(f.close)
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise UsageError(f"{what}: {excerpt(path)} is not a regular file")
            _check_file_size(st.st_size, what, path)
            on_error.pop_all()  # checked: the caller's with-block closes it
    return f


def _check_file_size(size: int, what: str, path: str) -> None:
    from ..core import limits

    limit = limits.max_bytes()
    if size > limit:
        raise LimitError(
            f"{what}: {excerpt(path)} is {limits.format_bytes(size)}, over the memory limit "
            f"of {limits.format_bytes(limit)}; raise it with --max-memory SIZE or "
            f"{limits.ENV}=SIZE",
            needed_bytes=size,
            limit_bytes=limit,
        )


def _npy_header(f, label: str, where: str):
    """(shape, dtype) from a .npy header, refusing what is not an array of plain numbers."""
    from numpy.lib import format as npy_format

    try:
        version = npy_format.read_magic(f)
        if version == (1, 0):
            shape, _, dtype = npy_format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, _, dtype = npy_format.read_array_header_2_0(f)
        else:
            raise ValueError(f"format version {version[0]}.{version[1]} holds no plain numbers")
    except (ValueError, EOFError, OSError, SyntaxError, TypeError) as exc:
        raise BadValueError(f"{label}: {where} is not a valid .npy array ({exc})") from None
    if dtype.hasobject:
        raise BadValueError(
            f"{label}: {where} holds Python objects (a pickle); only arrays of numbers are "
            "read, and a file is never unpickled"
        )
    if dtype.kind not in "biufc" or dtype.fields is not None or dtype.subdtype is not None:
        raise BadValueError(f"{label}: {where} holds {dtype} values, not numbers")
    return shape, dtype


def _check_array_size(shape, dtype, label: str) -> None:
    import math as _math

    from ..core import limits

    # as float64 (complex128), the engine's widest dtypes: the array is converted once read
    limits.check(_math.prod(shape), max(dtype.itemsize, 16 if dtype.kind == "c" else 8), label)


def _read_npy(f, label: str, where: str):
    import numpy

    shape, dtype = _npy_header(f, label, where)
    _check_array_size(shape, dtype, label)
    f.seek(0)
    try:
        return numpy.load(f, allow_pickle=False)
    except (ValueError, EOFError, OSError) as exc:
        raise BadValueError(f"{label}: {where} is not a valid .npy array ({exc})") from None


def _read_npz(path: str, what: str, keys: list | None) -> dict:
    """Arrays from a .npz archive: those of ``keys`` (None: every one, each key a variable's
    name), by key; each member's header is checked before it is read."""
    import zipfile

    import numpy

    where = excerpt(path)
    with _open_binary(path, what) as f:
        try:
            archive = numpy.load(f, allow_pickle=False)
        except (ValueError, EOFError, OSError, zipfile.BadZipFile) as exc:
            raise BadValueError(f"{what}: {where} is not a valid .npz archive ({exc})") from None
        if not isinstance(archive, numpy.lib.npyio.NpzFile):
            raise BadValueError(f"{what}: {where} is not a .npz archive (it is a .npy array)")
        with archive:
            available = list(archive.files)
            members = set(archive.zip.namelist())
            if keys is None:
                keys = available
                for key in keys:
                    if not _NAME.match(key):
                        raise BadValueError(
                            f"{what}: {where} holds an array {excerpt(key)}, whose key is "
                            f"not a valid variable name"
                        )
            out = {}
            for key in keys:
                label = f"{what} (@{where}:{excerpt(key)})"
                if key not in available:
                    raise UsageError(
                        f"{what}: {where} has no array {excerpt(key)} (its keys: "
                        f"{', '.join(excerpt(k) for k in available) or 'none'})"
                    )
                member = key if key in members else key + ".npy"
                try:
                    with archive.zip.open(member) as stream:
                        shape, dtype = _npy_header(stream, label, f"{where}:{excerpt(key)}")
                    _check_array_size(shape, dtype, label)
                    out[key] = archive[key]
                except (ValueError, EOFError, OSError, zipfile.BadZipFile) as exc:
                    raise BadValueError(
                        f"{label}: {where}:{excerpt(key)} is not a valid array ({exc})"
                    ) from None
            return out


def _read_table(text: str, label: str, where: str):
    """Numbers in rows (``numpy.loadtxt``): commas or whitespace between them, ``#``
    comments; its shape is loadtxt's (one row or one column: a vector, one number: a
    scalar)."""
    import io
    import warnings

    import numpy

    rows = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if not rows:
        raise BadValueError(f"{label}: {where} holds no numbers")
    delimiter = "," if any("," in ln for ln in rows) else None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = numpy.loadtxt(io.StringIO(text), delimiter=delimiter, dtype=float)
    except (ValueError, TypeError, IndexError) as exc:
        hint = " (a header line? begin it with #)" if "row 0" in str(exc) else ""
        raise BadValueError(
            f"{label}: {where} is not a table of numbers: {shorten(str(exc))}{hint}"
        ) from None
    from ..core import limits

    limits.check(table.size, 8, label)
    return table


def vars_from_npz(path: str) -> dict:
    """``--vars @vars.npz``: every array of the archive, its key the variable's name."""
    return _read_npz(path, "--vars", None)
