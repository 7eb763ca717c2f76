"""Batch lines as records: a JSONL or CSV line read into the :class:`Task` the engine
evaluates (a library ``Row`` with its position and expression), or the :class:`LineError`
that is its record; and the per-line output records (a result document, an error document:
``{"line": N, ...}`` as ``jsonout.dumps`` writes it).

* JSONL: each line an object ``{"expr": ..., "vars": {...}, "op": "grad", "wrt": [...]}``
  (``op``, ``wrt`` and, with ``--expr``, ``expr`` default to the command line; with
  ``--expr`` a line may also be just the variables object).  A line may also carry
  ``"grad_output"`` (for ``grad`` of a non-scalar output) and ``"order"`` (for ``diff``,
  and ``grad`` of one variable).
* The analysis ops (taylor, propagate, minimize, solve, critical): a line may also carry
  the command's options as keys (:data:`autograd_cli.core.analysis_docs.KEYS`); a key its op
  does not take is a ``bad_line`` error.  A propagate input's value may be
  ``"9.81+-0.02"`` and a minimize variable's ``"-1:2"`` (bounds), as on the command line
  (also in a CSV cell).
* CSV: a header of variable names, then one point per row; a cell is a number or a JSON
  array in quotes (``"[1, 2]"``).  Numbers only, no quotes: one ``numpy.loadtxt`` per chunk
  (:func:`csv_fast`); anything else: the ``csv`` module line by line (:func:`csv_row`).

A line's exception becomes its error record through :func:`exception_doc`, which asks
``status.classify`` (the error boundary's map) for its kind and message.  The seam other
modules use (the Dask engine among them) is ``__all__``.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass

import numpy as np

from ...core import analysis_docs
from ...core.errors import BadValueError
from ...core.program import NAME, RequestError, check_order, missing_value, split_names
from ...core.rows import ANALYSIS_OPS, OPS, Row
from .. import jsonout, options, render
from ..status import classify, flag
from .io import MAX_LINE_BYTES, Overlong

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "RECORD_KEYS",
    "BatchOptions",
    "LineError",
    "Task",
    "csv_fast",
    "csv_fields",
    "csv_header",
    "csv_row",
    "error_doc",
    "exception_doc",
    "limit_docs",
    "overlong_error",
    "parse_jsonl",
    "result_doc",
]

DEFAULT_CHUNK_SIZE = 65536
RECORD_KEYS = {"expr", "vars", "op", "wrt", "grad_output", "order"}.union(
    *analysis_docs.KEYS.values()
)
#: a line's keys that are an analysis op's settings (analysis_docs.settings checks them)
_SETTING_KEYS = frozenset(RECORD_KEYS - {"expr", "vars", "op", "wrt", "grad_output", "order"})
_NAME = NAME  # a variable's name, as the grammar reads one

# A CSV cell may be as long as a line (the csv module's own default is 128 KiB).
csv.field_size_limit(MAX_LINE_BYTES)
_GOOD_NAMES: set = set()  # variable names already checked against _NAME


@dataclass
class BatchOptions:
    source: str  # a path, or "-" for stdin
    expr: str | None = None
    op: str = "grad"
    wrt: list | None = None
    input_format: str | None = None  # jsonl | csv | None (from the extension)
    output: str | None = None  # None or "-": stdout
    chunk_size: int = DEFAULT_CHUNK_SIZE
    fail_fast: bool = False
    progress: bool | None = None  # None: when stderr is a terminal and the input is large
    order: int | None = None
    timeout: float | None = None  # --timeout in seconds (None: none)
    strict: bool = False  # a CSV column the expression does not use is an error
    #: the analysis ops' settings for every line, as a line's keys ({"method": "bfgs", ...}):
    #: a line's own keys override them; a line whose op does not take one ignores it (CSV:
    #: each must be --op's)
    settings: dict | None = None


class Task(Row):
    """One input line to evaluate: a library ``Row``, its index in the chunk, its expression."""

    __slots__ = ("pos", "expr")

    def __init__(
        self,
        pos: int,
        expr: str,
        values: dict,
        op: str,
        wrt,
        order,
        grad_output,
        shapes,
        settings=None,
    ):
        self.pos = pos
        self.expr = expr
        super().__init__(values, op, wrt, order, grad_output, shapes, settings)


class LineError(Exception):
    def __init__(self, kind: str, message: str, **details):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.details = details


def error_doc(line_number: int, kind: str, message: str, details: dict | None = None) -> str:
    doc = {"line": line_number}
    doc.update(render.error_json(kind, message, **(details or {})))
    return jsonout.dumps(doc)


def exception_doc(line_number: int, exc: BaseException) -> str:
    """A line's error record: its own ``LineError``, else ``status.classify``'s kind and
    message (the error boundary's), naming parameters as the line's keys."""
    if isinstance(exc, LineError):
        return error_doc(line_number, exc.kind, exc.message, exc.details)
    failure = classify(exc, _key, ' (give it in the line\'s "vars")')
    message = failure.message if failure.known else f"{failure.message} (please report it)"
    return error_doc(line_number, failure.kind, message, failure.details)


def _key(parameter: str) -> str:
    """A parameter a library message names, as a line names it: its key, quoted (``"wrt"``,
    as the line's own messages name keys), where it is one; else the command's flag
    (``--max-memory``: a setting of the whole run, not of a line)."""
    parameter = _KEYS.get(parameter, parameter)
    return f'"{parameter}"' if parameter in RECORD_KEYS else flag(parameter)


#: the library's parameters a line names by another key
_KEYS = {"values": "vars"}  # a program's variables' values (values= in the library)


def overlong_error(item: Overlong) -> LineError:
    """The error of a line too long to read (its record: kind ``limit``)."""
    return LineError("limit", item.message())


def result_doc(line: int, expr: str, result) -> str:
    doc = {"line": line}
    doc.update(render.result_json(expr, result))
    return jsonout.dumps(doc)


def check_wrt(value, what="wrt") -> tuple | None:
    if value is None:
        return None
    if isinstance(value, str):
        names = split_names(value)  # the library's one reading of "a, b"
    elif isinstance(value, list) and all(isinstance(n, str) for n in value):
        names = [n.strip() for n in value]
    else:
        raise LineError("bad_line", f"{what!r} must be a list of variable names")
    for n in names:
        if not _NAME.match(n):
            raise LineError("bad_line", f"{what!r}: {n!r} is not a variable name")
    return tuple(names) or None


def value_shape(name: str, value, what: str):
    """A decoded JSON value checked (numbers, nan/inf strings, lists) -> (value, shape)."""
    value = options._numbers(value, what, json.dumps(value))
    if not isinstance(value, list):
        return value, ()
    try:
        arr = np.asarray(value)
        arr = arr.astype(np.complex128 if arr.dtype.kind == "c" else np.float64)
    except (ValueError, TypeError, OverflowError):
        from ...core.recording import parse_value

        parse_value(name, value)  # raises the usual "bad value" error
        raise BadValueError(f"bad value for {name!r}") from None
    if arr.ndim > 32:  # more dimensions than a value may have: parse_value's error
        from ...core.recording import parse_value

        parse_value(name, value)
    return arr, arr.shape


_SCAN = json.JSONDecoder().scan_once


def loads(text: str):
    """``json.loads`` without its per-call overhead (the same errors, from json.loads; an
    integer of more digits than Python reads: ``BadValueError``, see options.load_json)."""
    start = len(text) - len(text.lstrip())
    try:
        obj, end = _SCAN(text, start)
    except (StopIteration, ValueError):
        return options.load_json(text)  # raises the usual error
    if end != len(text) and not text[end:].isspace():
        return options.load_json(text)
    return obj


def parse_jsonl(pos: int, text: str, opts: BatchOptions) -> Task:
    """A JSONL line -> its task (a ``LineError`` or the usual input errors: its record)."""
    record, variables = _jsonl_object(text, opts)
    expr = record.get("expr", opts.expr)
    if expr is None:
        raise LineError("bad_line", 'no expression: give "expr" on the line or --expr')
    if not isinstance(expr, str):
        raise LineError("bad_line", '"expr" must be a string')
    op = record.get("op", opts.op)
    if op not in OPS:
        raise LineError("bad_line", f'"op" must be one of {", ".join(OPS)}, not {op!r}')
    settings = None
    takes_wrt = True
    if op in ANALYSIS_OPS:
        settings = analysis_settings(op, record, opts)
        takes_wrt = "wrt" in analysis_docs.KEYS[op]
    elif not _SETTING_KEYS.isdisjoint(record):
        keys = [k for k in record if k in _SETTING_KEYS]
        owners = [o for o in ANALYSIS_OPS if any(k in analysis_docs.KEYS[o] for k in keys)]
        raise LineError(
            "bad_line",
            f"{op} takes no {', '.join(json.dumps(k) for k in keys)} (a setting of "
            f"{', '.join(owners)})",
        )
    if "wrt" in record:
        wrt = check_wrt(record["wrt"])
    else:
        wrt = tuple(opts.wrt) if opts.wrt and takes_wrt else None
    values, shapes = _jsonl_values(variables, op, settings)
    grad_output = None
    if record.get("grad_output") is not None:
        grad_output, _ = value_shape("grad_output", record["grad_output"], "grad_output")
    order = _jsonl_order(record, op, settings, opts)
    wrt = wrt if op != "eval" else None
    return Task(pos, expr, values, op, wrt, order, grad_output, tuple(shapes), settings)


def _jsonl_object(text: str, opts: BatchOptions) -> tuple[dict, dict]:
    """A JSONL line's (record, variables): the object with its keys checked, and its
    variables (the whole object when, with --expr, the line is just the variables)."""
    try:
        obj = loads(text)
    except json.JSONDecodeError as exc:
        raise LineError("bad_line", f"not valid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise LineError("bad_line", "the JSON nests too deeply") from None
    if not isinstance(obj, dict):
        raise LineError(
            "bad_line",
            'each line must be a JSON object: {"expr": ..., '
            '"vars": {...}} (or, with --expr, the variables object)',
        )
    if opts.expr is not None and "expr" not in obj and "vars" not in obj:
        return {}, obj
    unknown = sorted(set(obj) - RECORD_KEYS)
    if unknown:
        raise LineError(
            "bad_line",
            f"unknown key(s) {', '.join(map(repr, unknown))}; a line "
            f"has {', '.join(sorted(RECORD_KEYS))}",
        )
    variables = obj.get("vars", {})
    if not isinstance(variables, dict):
        raise LineError("bad_line", '"vars" must be an object {"name": value}')
    return obj, variables


def _jsonl_values(variables: dict, op: str, settings) -> tuple[dict, list]:
    """A JSONL line's variables checked: (values, [(name, shape), ...])."""
    values = {}
    shapes = []
    for name, value in variables.items():
        if name not in _GOOD_NAMES:
            if not _NAME.match(name):
                raise BadValueError(f"{name!r} is not a valid variable name")
            if len(_GOOD_NAMES) < 4096:
                _GOOD_NAMES.add(name)
        kind = type(value)
        if kind is float or kind is int:  # the usual case: a plain number
            values[name] = value
            shapes.append((name, ()))
            continue
        if kind is str and op in SPECIAL_VALUES:  # "9.81+-0.02", "-1:2"
            found = special_value(op, name, value, name, settings)
            if found is not None:
                value = found
        values[name], shape = value_shape(name, value, name)
        shapes.append((name, shape))
    return values, shapes


def _jsonl_order(record: dict, op: str, settings, opts: BatchOptions):
    """A JSONL line's order: its own ``"order"`` (checked), else --order where ``op``
    takes one."""
    order = opts.order
    if settings is not None and "order" not in analysis_docs.KEYS[op]:
        order = None  # --order is not this op's (a line's own "order" is a bad_line above)
    if "order" in record:
        least = 0 if op == "taylor" else 1  # degree 0 (the value) is a Taylor polynomial too
        try:
            order = check_order(record["order"], least, options.MAX_ORDER)  # the library's
        except RequestError as exc:  # in a batch line's words
            which = least if "most" not in exc.fields else None
            raise LineError("bad_line", _ORDER_ERRORS[which]) from None
    return order


#: a line's "order" refused (:func:`check_order`): below its least (0 or 1), or too high
_ORDER_ERRORS = {
    0: '"order" must be a whole number, 0 or more',
    1: '"order" must be a positive integer',
    None: f'"order" must be at most {options.MAX_ORDER}',
}


#: the ops whose variables may carry more than a value, and what: propagate's "V+-U" (an
#: uncertainty), minimize's "LOW:HIGH" (bounds; the start is mid-way), as the commands take them
SPECIAL_VALUES = {"propagate": "uncertainties", "minimize": "bounds"}


def analysis_settings(op: str, record: dict, opts: BatchOptions) -> dict:
    """An analysis line's settings: ``opts.settings`` (those ``op`` takes) updated with the
    line's own keys, checked by ``analysis_docs.settings`` (a wrong one: bad_line)."""
    takes = analysis_docs.KEYS[op]
    given = {k: v for k, v in (opts.settings or {}).items() if k in takes}
    given.update((k, v) for k, v in record.items() if k not in ("expr", "vars", "op"))
    if given.get("grad_output", 0) is None:  # null: absent, as on any line
        del given["grad_output"]
    try:
        settings = analysis_docs.settings(op, given)
    except options.UsageError as exc:
        raise LineError("bad_line", exc.message) from None
    if op in SPECIAL_VALUES:
        settings[SPECIAL_VALUES[op]] = {}  # filled by special_value, variable by variable
    return settings


def special_value(op: str, name: str, text: str, what: str, settings: dict):
    """A propagate input's ``"V+-U"`` or a minimize variable's ``"LOW:HIGH"``: the value
    (minimize: the start, mid-way), its uncertainty or bounds put in ``settings``; None for
    other text (read as any value is).  ``what`` names the value in an error."""
    try:
        if op == "propagate":
            value, u = analysis_docs.split_uncertain(text, name, f"the uncertainty of {what}")
            if u is None:
                return None
            settings["uncertainties"][name] = u
            return options.parse_literal(value, what)
        found = analysis_docs.parse_bounds(text, what)
        if found is None:
            return None
        settings["bounds"][name] = found[:2]
        return found[2]
    except options.UsageError as exc:
        raise LineError("bad_line", exc.message) from None


# ---------------------------------------------------------------------------
# CSV
# ---------------------------------------------------------------------------


def csv_header(text: str) -> list[str]:
    fields = next(csv.reader([text]))
    names = [f.strip() for f in fields]
    for n in names:
        if not _NAME.match(n):
            raise options.UsageError(
                f"the CSV header names the variables; {n!r} is not a "
                f"variable name (header: {text.strip()!r})"
            )
    seen = set()
    for n in names:
        if n in seen:
            raise options.UsageError(f"the CSV header names {n!r} twice")
        seen.add(n)
    return names


def csv_fast(texts: list[str], ncols: int, joined: str | None = None):
    """All rows at once when they are plain numbers (no quotes), else None."""
    if ('"' in joined) if joined is not None else any('"' in t for t in texts):
        return None
    try:
        arr = np.loadtxt(texts, delimiter=",", dtype=np.float64, ndmin=2, comments=None)
    except (ValueError, TypeError):
        return None
    if arr.shape != (len(texts), ncols):
        return None
    if np.isinf(arr).any():  # inf, or an integer past the largest float (a bad value)
        return None
    return arr


def csv_row(
    pos: int, text: str, names: list[str], opts: BatchOptions, skip: frozenset = frozenset()
) -> Task:
    try:
        fields = next(csv.reader([text]))
    except csv.Error as exc:
        raise LineError("bad_line", f"not a CSV row: {exc}") from None
    return csv_fields(pos, fields, names, opts, skip)


def csv_fields(
    pos: int, fields: list, names: list[str], opts: BatchOptions, skip: frozenset = frozenset()
) -> Task:
    """A row's cells (text, one per column of ``names``) -> its task, as for a CSV line (also
    the Dask engine's Parquet rows, cells written as text)."""
    if len(fields) != len(names):
        raise LineError(
            "bad_line", f"expected {len(names)} value(s) ({', '.join(names)}), got {len(fields)}"
        )
    values = {}
    shapes = []
    op = opts.op
    settings = analysis_settings(op, {}, opts) if op in ANALYSIS_OPS else None
    for name, cell in zip(names, fields):
        if name in skip:  # a column the expression does not use: not read
            continue
        cell = cell.strip()
        if not cell:
            raise missing_value(name, " (an empty field)")
        value = None
        if op in SPECIAL_VALUES:  # "9.81+-0.02", "-1:2"
            value = special_value(op, name, cell, f"column {name!r}", settings)
        if value is None:
            value = options.parse_literal(cell, f"column {name!r}")
        if isinstance(value, list):
            value, shape = value_shape(name, value, f"column {name!r}")
        else:
            shape = ()
        values[name] = value
        shapes.append((name, shape))
    wrt = tuple(opts.wrt) if opts.wrt and op != "eval" else None
    return Task(pos, opts.expr, values, op, wrt, opts.order, None, tuple(shapes), settings)


# ---------------------------------------------------------------------------
# Evaluation of a chunk
# ---------------------------------------------------------------------------


def limit_docs(numbers: list, texts: list, message: str) -> list:
    """The records of lines read after a --timeout: each a ``limit`` error with ``message``
    (an overlong line: its own record)."""
    return [
        exception_doc(n, overlong_error(t))
        if type(t) is Overlong
        else error_doc(n, "limit", message)
        for n, t in zip(numbers, texts)
    ]
