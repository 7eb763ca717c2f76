"""The ``batch`` command: many evaluations from JSONL or CSV, one JSONL line out per line in.

Input (SPEC.md, "Batch"):

* JSONL: each line an object ``{"expr": ..., "vars": {...}, "op": "grad", "wrt": [...]}``
  (``op``, ``wrt`` and, with ``--expr``, ``expr`` default to the command line; with
  ``--expr`` a line may also be just the variables object).  A line may also carry
  ``"grad_output"`` (for ``grad`` of a non-scalar output) and ``"order"`` (for ``diff``,
  and ``grad`` of one variable).
* The analysis ops (taylor, propagate, minimize, solve, critical): a line may also carry
  the command's options as keys (:data:`autograd_cli.analysis_docs.KEYS`: taylor ``order``,
  ``at``; propagate ``corr``, ``mc``, ``seed``; minimize ``method``, ``gtol``, ``max_iter``,
  ``trace``; solve ``tol``, ...; ``wrt`` where the command has ``--wrt``); a key its op does
  not take is a ``bad_line`` error.  A propagate input's value may be ``"9.81+-0.02"`` and a
  minimize variable's ``"-1:2"`` (bounds), as on the command line (also in a CSV cell).
  The output line is the command's ``--json`` document (``analysis_docs.document``); a
  minimize, solve or critical that does not converge keeps its document
  (``"converged": false``) and counts as a failed line, as the command exits 1.
* CSV: a header of variable names, then one point per row; a cell is a number or a
  JSON array in quotes (``"[1, 2]"``).  ``--expr`` and ``--op`` come from the command line.

Output: one JSON document per non-blank input line, in input order, each the same
document the single command prints with ``--json`` plus ``"line"`` (the line number
as an editor shows it; a CSV header is line 1), or ``{"line": N, "error": {...}}``.

How it runs:

* The input is read in chunks of ``--chunk-size`` lines, so memory stays bounded.
* Within a chunk, lines that share the expression, op, ``wrt`` and variable shapes form
  a group, evaluated at once by :mod:`autograd_cli.core.batch` (vectorised over a batch
  axis, identical to one-at-a-time evaluation).  A group the batch evaluator cannot take
  is evaluated row by row, as are ``hessian``, ``jacobian``, ``diff`` and the analysis
  ops.  The chunk's lines are written in input order once the chunk is done.  The
  evaluation (grouping, the vectorised call, the named fallbacks, one row alone) is the
  library's :mod:`autograd_cli.rows`; this module reads the lines, writes them, and
  reports.  With ``--fail-fast``, a line or group that starts after a failed line is not
  evaluated (it would not be written).
* Reading CSV: numbers only, no quotes -> one ``numpy.loadtxt`` per chunk; anything
  else (quoted arrays, a bad line) -> the ``csv`` module line by line for that chunk.
* Writing: for scalar results one line template per group (made from ``render.result_json``
  itself, so the text is exactly what ``jsonout.dumps`` gives; filled by ``fill``), else
  ``jsonout.dumps``.
* ``-o FILE`` (see ``_Sink``): a regular file (or a new one) gets a temporary file next to
  it, renamed over it at the end, with the old file's permission bits; a symlink is
  followed and its final target replaced (a dangling one: its target is created); a FIFO
  or a device (``/dev/null``, a terminal) is written straight through; a folder, or the
  input file itself (also through a link), is a usage error (exit 2) before anything is
  read.  Every write is checked: a failed one (a full disk, EIO) ends the run with
  ``autograd-cli: error: cannot write ...`` and exit 1, the temporary file removed and
  FILE as it was.  The temporary file is ``.FILE.PID.XXXXXXXX.tmp`` (``files.make_temporary``):
  a run killed outright (SIGKILL) leaves it, FILE as it was, and the next run to the same
  FILE removes it (a note on stderr).
* Lines are at most ``MAX_LINE_BYTES`` (1 MiB) long: a longer line gets an error record of
  kind ``limit`` and is skipped in bounded memory; a "line" that goes on for more than
  ``MAX_RUNAWAY_BYTES`` (64 MiB, e.g. ``/dev/zero``) ends the run there: its record, a
  message on stderr, exit 1.
* Ctrl-C, SIGTERM and SIGHUP: the lines completed so far are written (never a partial
  line), FILE (with ``-o``) is replaced by them, the temporary file never stays behind,
  and the exit code is 130, 143 or 129.  A second signal stops at once (still never
  inside a write), as the first does during an analysis line (a minimize may run long:
  that line is left unfinished).  A closed stdout (``| head -1``) raises
  ``BrokenPipeError`` for the error boundary (a quiet exit 141).
* Exit code: 0 when every line succeeded, 1 when some line failed (a one-line summary goes
  to stderr; stdout holds only the lines, ``--json`` or not) or the output could not be
  written, 2 for a bad command line (missing file, bad ``--format``, CSV header against
  ``--expr``, ``-o`` a folder or the input, options that fail every line that gives only
  its variables: see ``_check_command_line``; the usual error document), 130/143/129 when
  stopped by SIGINT/SIGTERM/SIGHUP.
"""

from __future__ import annotations

import collections
import csv
import errno
import functools
import io
import itertools
import json
import os
import re
import select
import signal
import stat
import sys
from dataclasses import dataclass

import numpy as np

from .. import analysis_docs
from ..core.batch import BatchResult
from ..core.errors import AutogradCliError, BadValueError, ParseError, UnknownVariableError
from ..core.program import missing_value
from ..rows import (
    ANALYSIS_OPS,
    OPS,
    Row,
    batchable,
    evaluate_group,
    outcome,
    plan,
    row_result,
    stack_rows,
)
from . import files, jsonout, options, render
from .status import STOP_SIGNALS, ExitCode, Terminated, TimedOut, exit_code_for_signal

FORMATS = ("jsonl", "csv")
DEFAULT_CHUNK_SIZE = 65536
PROGRESS_MIN_BYTES = 1 << 20
#: the longest input line (bytes of UTF-8 text, the line end not counted); a longer one
#: gets an error record of kind "limit" and is skipped without being held in memory
MAX_LINE_BYTES = 1 << 20
#: a line still without its end after this many bytes (``/dev/zero``) ends the run: exit 1
MAX_RUNAWAY_BYTES = 64 << 20
_READ_SIZE = 1 << 16  # bytes per read of the input (below MAX_LINE_BYTES: see _LineLimit)
#: a chunk ends early once this much input is read for it (long lines: bounded memory)
MAX_CHUNK_BYTES = 16 << 20
_EXTENSIONS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".csv": "csv"}
_RECORD_KEYS = {"expr", "vars", "op", "wrt", "grad_output", "order"}.union(
    *analysis_docs.KEYS.values()
)
#: a line's keys that are an analysis op's settings (analysis_docs.settings checks them)
_SETTING_KEYS = frozenset(_RECORD_KEYS - {"expr", "vars", "op", "wrt", "grad_output", "order"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

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


class _Stop(Exception):
    """A stop signal (Ctrl-C, SIGTERM, SIGHUP) arrived: stop at the next safe point."""


#: what a stop signal raises, at a safe point or (a second signal) at once; and --timeout
_STOPS = (_Stop, KeyboardInterrupt, Terminated, TimedOut)
#: after a --timeout, at most this many more input lines (of a regular file, within
#: MAX_CHUNK_BYTES) are read to give each its ``limit`` record; the rest are not read
TIMEOUT_TAIL_LINES = 100_000
_SIGNAL_WORDS = {
    ExitCode.INTERRUPTED: "interrupted",
    ExitCode.TERMINATED: "terminated",
    ExitCode.HANGUP: "hung up",
}


class _OutputError(Exception):
    """Writing the output failed (a full disk, EIO, a short write): exit 1 with this message."""


@dataclass
class Summary:
    code: int  # ExitCode: OK, EVALUATION_ERROR, or 130/143/129 (stopped by a signal)
    lines: int = 0  # output lines written
    failed: int = 0  # of which errors (or a minimize/solve/critical that did not converge)
    stopped: bool = False  # --fail-fast stopped early
    error: str | None = None  # the run could not go on (output not writable, endless line)
    unconverged: int = 0  # of the failed: "converged": false documents, not error records

    def message(self) -> str | None:
        if self.error:
            return f"error: {self.error}"
        if self.code in _SIGNAL_WORDS:
            return f"{_SIGNAL_WORDS[self.code]}; {self.lines} complete line(s) written"
        if self.failed:
            how = " (stopped there: --fail-fast)" if self.stopped else ""
            if not self.unconverged:
                return (
                    f"{self.failed} of {self.lines} line(s) failed{how}; each has an error "
                    f"record in the output"
                )
            return (
                f"{self.failed} of {self.lines} line(s) failed{how}; "
                f"{self.unconverged} did not converge (their documents say "
                f'"converged": false), the others have an error record in the output'
            )
        return None

    def exit(self) -> None:
        """Say on stderr what went wrong, if anything, and leave with the exit code.

        Never a JSON document on stdout (not even with --json): stdout holds exactly one
        line per input line.
        """
        import typer

        from . import streams

        message = self.message()
        if message:
            streams.say(f"autograd-cli: {message}")  # a stderr gone with a hang-up: silence
        if self.code != ExitCode.OK:
            raise typer.Exit(int(self.code))


# ---------------------------------------------------------------------------
# Line records
# ---------------------------------------------------------------------------


class _Task(Row):
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


class _LineError(Exception):
    def __init__(self, kind: str, message: str, **details):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.details = details


def _error_doc(line_number: int, kind: str, message: str, details: dict | None = None) -> str:
    doc = {"line": line_number}
    doc.update(render.error_json(kind, message, **(details or {})))
    return jsonout.dumps(doc)


def _exception_doc(line_number: int, exc: BaseException) -> str:
    if isinstance(exc, _LineError):
        return _error_doc(line_number, exc.kind, exc.message, exc.details)
    if isinstance(exc, ParseError):
        return _error_doc(
            line_number, exc.kind, exc.message, {**exc.details, "context": exc.context}
        )
    if isinstance(exc, AutogradCliError):
        return _error_doc(line_number, exc.kind, exc.message, exc.details)
    if isinstance(exc, MemoryError):
        return _error_doc(
            line_number, "limit", "out of memory: the arrays are too large for this machine"
        )
    if isinstance(exc, RecursionError):
        return _error_doc(line_number, "limit", "the input nests too deeply")
    return _error_doc(
        line_number,
        "internal",
        f"internal error: {exc.__class__.__name__}: {exc} (please report it)",
    )


def _result_doc(line: int, expr: str, result) -> str:
    doc = {"line": line}
    doc.update(render.result_json(expr, result))
    return jsonout.dumps(doc)


def _check_wrt(value, what="wrt") -> tuple | None:
    if value is None:
        return None
    if isinstance(value, str):
        names = [n.strip() for n in value.split(",") if n.strip()]
    elif isinstance(value, list) and all(isinstance(n, str) for n in value):
        names = [n.strip() for n in value]
    else:
        raise _LineError("bad_line", f"{what!r} must be a list of variable names")
    for n in names:
        if not _NAME.match(n):
            raise _LineError("bad_line", f"{what!r}: {n!r} is not a variable name")
    return tuple(names) or None


def _value_shape(name: str, value, what: str):
    """A decoded JSON value checked (numbers, nan/inf strings, lists) -> (value, shape)."""
    value = options._numbers(value, what, json.dumps(value))
    if not isinstance(value, list):
        return value, ()
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (ValueError, TypeError, OverflowError):
        from ..core.recording import parse_value

        parse_value(name, value)  # raises the usual "bad value" error
        raise BadValueError(f"bad value for {name!r}") from None
    if arr.ndim > 32:  # more dimensions than a value may have: parse_value's error
        from ..core.recording import parse_value

        parse_value(name, value)
    return arr, arr.shape


_SCAN = json.JSONDecoder().scan_once


def _loads(text: str):
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


def _parse_jsonl(pos: int, text: str, opts: BatchOptions) -> _Task:
    try:
        obj = _loads(text)
    except json.JSONDecodeError as exc:
        raise _LineError("bad_line", f"not valid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise _LineError("bad_line", "the JSON nests too deeply") from None
    if not isinstance(obj, dict):
        raise _LineError(
            "bad_line",
            'each line must be a JSON object: {"expr": ..., '
            '"vars": {...}} (or, with --expr, the variables object)',
        )
    if opts.expr is not None and "expr" not in obj and "vars" not in obj:
        record, variables = {}, obj
    else:
        record = obj
        unknown = sorted(set(obj) - _RECORD_KEYS)
        if unknown:
            raise _LineError(
                "bad_line",
                f"unknown key(s) {', '.join(map(repr, unknown))}; a line "
                f"has {', '.join(sorted(_RECORD_KEYS))}",
            )
        variables = obj.get("vars", {})
        if not isinstance(variables, dict):
            raise _LineError("bad_line", '"vars" must be an object {"name": value}')
    expr = record.get("expr", opts.expr)
    if expr is None:
        raise _LineError("bad_line", 'no expression: give "expr" on the line or --expr')
    if not isinstance(expr, str):
        raise _LineError("bad_line", '"expr" must be a string')
    op = record.get("op", opts.op)
    if op not in OPS:
        raise _LineError("bad_line", f'"op" must be one of {", ".join(OPS)}, not {op!r}')
    settings = None
    takes_wrt = True
    if op in ANALYSIS_OPS:
        settings = _analysis_settings(op, record, opts)
        takes_wrt = "wrt" in analysis_docs.KEYS[op]
    elif not _SETTING_KEYS.isdisjoint(record):
        keys = [k for k in record if k in _SETTING_KEYS]
        owners = [o for o in ANALYSIS_OPS if any(k in analysis_docs.KEYS[o] for k in keys)]
        raise _LineError(
            "bad_line",
            f"{op} takes no {', '.join(json.dumps(k) for k in keys)} (a setting of "
            f"{', '.join(owners)})",
        )
    if "wrt" in record:
        wrt = _check_wrt(record["wrt"])
    else:
        wrt = tuple(opts.wrt) if opts.wrt and takes_wrt else None
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
        if kind is str and op in _SPECIAL_VALUES:  # "9.81+-0.02", "-1:2"
            found = _special_value(op, name, value, name, settings)
            if found is not None:
                value = found
        values[name], shape = _value_shape(name, value, name)
        shapes.append((name, shape))
    grad_output = None
    if record.get("grad_output") is not None:
        grad_output, _ = _value_shape("grad_output", record["grad_output"], "grad_output")
    order = opts.order
    if settings is not None and "order" not in analysis_docs.KEYS[op]:
        order = None  # --order is not this op's (a line's own "order" is a bad_line above)
    if "order" in record:
        order = record["order"]
        if op == "taylor":  # degree 0 (the value) is a Taylor polynomial too
            if isinstance(order, bool) or not isinstance(order, int) or order < 0:
                raise _LineError("bad_line", '"order" must be a whole number, 0 or more')
        elif isinstance(order, bool) or not isinstance(order, int) or order < 1:
            raise _LineError("bad_line", '"order" must be a positive integer')
        if order > options.MAX_ORDER:
            raise _LineError("bad_line", f'"order" must be at most {options.MAX_ORDER}')
    wrt = wrt if op != "eval" else None
    return _Task(pos, expr, values, op, wrt, order, grad_output, tuple(shapes), settings)


#: the ops whose variables may carry more than a value, and what: propagate's "V+-U" (an
#: uncertainty), minimize's "LOW:HIGH" (bounds; the start is mid-way), as the commands take them
_SPECIAL_VALUES = {"propagate": "uncertainties", "minimize": "bounds"}


def _analysis_settings(op: str, record: dict, opts: BatchOptions) -> dict:
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
        raise _LineError("bad_line", exc.message) from None
    if op in _SPECIAL_VALUES:
        settings[_SPECIAL_VALUES[op]] = {}  # filled by _special_value, variable by variable
    return settings


def _special_value(op: str, name: str, text: str, what: str, settings: dict):
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
        raise _LineError("bad_line", exc.message) from None


# ---------------------------------------------------------------------------
# CSV
# ---------------------------------------------------------------------------


def _csv_header(text: str) -> list[str]:
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


def _csv_fast(texts: list[str], ncols: int, joined: str | None = None):
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


def _csv_row(
    pos: int, text: str, names: list[str], opts: BatchOptions, skip: frozenset = frozenset()
) -> _Task:
    try:
        fields = next(csv.reader([text]))
    except csv.Error as exc:
        raise _LineError("bad_line", f"not a CSV row: {exc}") from None
    return _csv_fields(pos, fields, names, opts, skip)


def _csv_fields(
    pos: int, fields: list, names: list[str], opts: BatchOptions, skip: frozenset = frozenset()
) -> _Task:
    """A row's cells (text, one per column of ``names``) -> its task, as for a CSV line (also
    the Dask engine's Parquet rows, cells written as text)."""
    if len(fields) != len(names):
        raise _LineError(
            "bad_line", f"expected {len(names)} value(s) ({', '.join(names)}), got {len(fields)}"
        )
    values = {}
    shapes = []
    op = opts.op
    settings = _analysis_settings(op, {}, opts) if op in ANALYSIS_OPS else None
    for name, cell in zip(names, fields):
        if name in skip:  # a column the expression does not use: not read
            continue
        cell = cell.strip()
        if not cell:
            raise missing_value(name, " (an empty field)")
        value = None
        if op in _SPECIAL_VALUES:  # "9.81+-0.02", "-1:2"
            value = _special_value(op, name, cell, f"column {name!r}", settings)
        if value is None:
            value = options.parse_literal(cell, f"column {name!r}")
        if isinstance(value, list):
            value, shape = _value_shape(name, value, f"column {name!r}")
        else:
            shape = ()
        values[name] = value
        shapes.append((name, shape))
    wrt = tuple(opts.wrt) if opts.wrt and op != "eval" else None
    return _Task(pos, opts.expr, values, op, wrt, opts.order, None, tuple(shapes), settings)


# ---------------------------------------------------------------------------
# Evaluation of a chunk
# ---------------------------------------------------------------------------


class _Programs:
    """Parsed expressions (or their parse errors), cached by text."""

    def __init__(self, limit: int = 512):
        self.cache: dict = {}
        self.limit = limit

    def get(self, text: str):
        hit = self.cache.get(text)
        if hit is None:
            from ..grammar import parse

            try:
                hit = (parse(text), None)
            except AutogradCliError as exc:
                hit = (None, exc)
            except RecursionError as exc:
                hit = (None, exc)
            if len(self.cache) >= self.limit:
                self.cache.clear()
            self.cache[text] = hit
        return hit


class _Marker:
    """Stands in for a number when building a line template from ``render.result_json``."""

    shape = ()

    def __init__(self, text: str):
        self.text = text

    def tolist(self):
        return self.text


class _Templates:
    """Templates of a result line with a scalar value and scalar gradients, per expression,
    gradient names and warnings: the text between the numbers, and which number goes where."""

    def __init__(self):
        self.cache: dict = {}

    def get(self, expr: str, grad_names, warnings=()):
        key = (expr, grad_names, warnings)
        if key not in self.cache:
            if len(self.cache) >= 1024:
                self.cache.clear()
            self.cache[key] = self._make(expr, grad_names, warnings)
        return self.cache[key]

    @staticmethod
    def _make(expr: str, grad_names, warnings=()):
        from ..core.api import Result

        markers = {"line": "@@agl@@", "expr": "@@age@@", "value": "@@agv@@"}
        grad = None
        if grad_names is not None:
            grad = {}
            for i, name in enumerate(grad_names):
                markers[("grad", name)] = f"@@agg{i}@@"
                grad[name] = _Marker(f"@@agg{i}@@")
        try:
            result = Result(value=_Marker(markers["value"]), warnings=list(warnings), grad=grad)
            doc = {"line": _Marker(markers["line"])}
            doc.update(render.result_json(markers["expr"], result))
            text = jsonout.dumps(doc)
        except Exception:  # noqa: BLE001 - a renderer that wants more: use the general path
            return None
        places = []
        for key, marker in markers.items():
            quoted = f'"{marker}"'
            if text.count(quoted) != 1:
                return None
            places.append((text.index(quoted), key))
        order = [key for _, key in sorted(places)]
        order = [key for key in order if key != "expr"]
        parts = []
        for key in order:
            head, text = text.split(f'"{markers[key]}"')
            parts.append(head)
        expr_json = json.dumps(expr, ensure_ascii=False)  # after the split: it is user text
        parts = [part.replace(f'"{markers["expr"]}"', expr_json) for part in parts + [text]]
        return parts, order


def fill(parts: list, columns: list) -> list:
    """Row i's line: ``parts[0] + columns[0][i] + parts[1] + ... + parts[-1]`` (texts).

    An f-string with the parts in local names, written out for each common number of
    columns (line, value and one to four partials): 2.5 times as fast as %-formatting,
    which was the largest cost of a batch run (issue 12)."""
    rows = zip(*columns)
    if len(columns) == 3:
        p0, p1, p2, p3 = parts
        return [f"{p0}{a}{p1}{b}{p2}{c}{p3}" for a, b, c in rows]
    if len(columns) == 4:
        p0, p1, p2, p3, p4 = parts
        return [f"{p0}{a}{p1}{b}{p2}{c}{p3}{d}{p4}" for a, b, c, d in rows]
    if len(columns) == 5:
        p0, p1, p2, p3, p4, p5 = parts
        return [f"{p0}{a}{p1}{b}{p2}{c}{p3}{d}{p4}{e}{p5}" for a, b, c, d, e in rows]
    if len(columns) == 6:
        p0, p1, p2, p3, p4, p5, p6 = parts
        return [f"{p0}{a}{p1}{b}{p2}{c}{p3}{d}{p4}{e}{p5}{f}{p6}" for a, b, c, d, e, f in rows]
    text = "%s".join(part.replace("%", "%%") for part in parts)
    return [text % row for row in rows]


class _Chunk:
    """One chunk of input lines: their numbers, and the output line of each once done."""

    def __init__(self, lines: list[int]):
        self.lines = lines
        self.out: list = [None] * len(lines)
        self.failed: list = [False] * len(lines)
        self.unconverged: list = [False] * len(lines)  # failed, with a "converged": false doc
        self.first_failed = len(lines)  # the first failed position (len(lines): none yet)

    def fail(self, pos: int, exc: BaseException) -> None:
        self.out[pos] = _exception_doc(self.lines[pos], exc)
        self.failed[pos] = True
        self.first_failed = min(self.first_failed, pos)

    def done_prefix(self) -> int:
        n = 0
        for o in self.out:
            if o is None:
                break
            n += 1
        return n


class _Runner:
    def __init__(self, opts: BatchOptions, interrupt):
        self.opts = opts
        self.current: _Chunk | None = None  # the chunk being evaluated
        self.written = 0  # lines written so far
        self.failed = 0  # of which error records (or "converged": false documents)
        self.unconverged = 0  # of which "converged": false documents
        self.stopped = False  # --fail-fast stopped the run
        self.programs = _Programs()
        self.templates = _Templates()
        self.interrupt = interrupt
        self.chunks = None  # the input's chunks (_chunks), once reading them has begun

    def count(self, chunk: _Chunk, n: int) -> None:
        self.written += n
        self.failed += sum(chunk.failed[:n])
        self.unconverged += sum(chunk.unconverged[:n])

    def check(self) -> None:
        if self.interrupt.requested:
            raise _Stop()

    # ---- one chunk -------------------------------------------------------------------
    def run_chunk(self, chunk: _Chunk, tasks: list, groups=None) -> None:
        """Evaluate ``tasks`` (or ready-made CSV ``groups``) into ``chunk.out``, in the order
        of ``rows.plan`` (groups and single lines by their first line: a prefix completes
        early), ``check()`` before each."""
        if groups:
            for group in groups:
                self.check()
                self.run_group(chunk, *group)
            return
        for batched, positions in plan(tasks, [t.expr for t in tasks]):
            if self.opts.fail_fast and chunk.first_failed < positions[0]:
                return  # every line from here on comes after the first failure: not written
            self.check()
            if not batched:
                self.run_single(chunk, tasks[positions[0]])
                continue
            members = [tasks[p] for p in positions]
            first = members[0]
            self.run_group(
                chunk,
                first.expr,
                first.op,
                first.wrt,
                first.shapes,
                [t.pos for t in members],
                functools.partial(stack_rows, members, first.shapes),
                members,
            )

    def run_group(
        self, chunk: _Chunk, expr, op, wrt, shapes, positions, make_columns, members=None
    ) -> None:
        program, error = self.programs.get(expr)
        if error is not None:
            for pos in positions:
                chunk.fail(pos, error)
            return
        got = evaluate_group(
            program,
            len(positions),
            make_columns,
            op=op,
            wrt=wrt,
            rows=None if members is None else members.__getitem__,
            check=self.check,
        )
        if isinstance(got, BatchResult):
            self.write_group(chunk, expr, positions, got)
            return
        for pos, result in zip(positions, got):  # one by one: each row written when done
            self.write_one(chunk, pos, expr, result)

    def write_group(self, chunk: _Chunk, expr, positions, result) -> None:
        """The output lines of a group's batched result."""
        value = result.value
        grad = result.grad
        n = len(positions)
        whole = n == len(chunk.lines)  # the group is the whole chunk, in order
        lines = chunk.lines if whole else [chunk.lines[p] for p in positions]
        general: list = []
        scalar = value.ndim == 1 and (grad is None or all(g.ndim == 1 for g in grad.values()))
        if not scalar:
            general = list(range(n))
        else:
            # Rows sharing their warnings (usually none) share a line template.
            warned = result.warnings or {}
            if not warned:
                subsets = [((), None)]
            else:
                by_key: dict = {}
                for j in range(n):
                    by_key.setdefault(tuple(warned.get(j, ())), []).append(j)
                subsets = list(by_key.items())
            names = tuple(grad) if grad is not None else None
            for number, (warnings, idx) in enumerate(subsets):
                template = self.templates.get(expr, names, warnings) if number < 16 else None
                if template is None:
                    general.extend(range(n) if idx is None else idx)
                    continue
                parts, order = template
                if idx is None:
                    v, g, ls = value, grad, lines
                else:
                    pick = np.asarray(idx)
                    v = value[pick]
                    g = None if grad is None else {k: a[pick] for k, a in grad.items()}
                    ls = [lines[j] for j in idx]
                # Every cell as its JSON text first (jsonout.number_texts: a column at a
                # time), so that the %-formatting of a line only pastes text together.
                cells = {"line": jsonout.int_texts(ls), "value": jsonout.number_texts(v)}
                if g is not None:
                    for name, a in g.items():
                        cells[("grad", name)] = jsonout.number_texts(a)
                formatted = fill(parts, [cells[k] for k in order])
                if idx is None and whole:
                    chunk.out[:] = formatted
                else:
                    targets = positions if idx is None else [positions[j] for j in idx]
                    for pos, line_text in zip(targets, formatted):
                        chunk.out[pos] = line_text
        for j in sorted(general):
            chunk.out[positions[j]] = _result_doc(lines[j], expr, row_result(result, j))

    def run_single(self, chunk: _Chunk, task: _Task) -> None:
        program, error = self.programs.get(task.expr)
        if error is not None:
            chunk.fail(task.pos, error)
            return
        if task.op not in ANALYSIS_OPS:
            self.write_one(chunk, task.pos, task.expr, outcome(program, task))
            return
        self.interrupt.at_once = True  # Ctrl-C: not after a long minimize, now
        try:
            result = outcome(program, task)
        finally:
            self.interrupt.at_once = False
        if isinstance(result, BaseException):
            chunk.fail(task.pos, result)
        else:
            self.write_analysis(chunk, task, result)

    @staticmethod
    def write_analysis(chunk: _Chunk, task: _Task, result) -> None:
        """An analysis line's output: the command's --json document (``analysis_docs``); one
        that did not converge keeps it and counts as failed, as the command exits 1."""
        pos = task.pos
        trace = bool((task.settings or {}).get("trace"))
        try:
            doc = {"line": chunk.lines[pos]}
            doc.update(analysis_docs.document(task.op, task.expr, result, trace=trace))
            chunk.out[pos] = jsonout.dumps(doc)
        except Exception as exc:  # noqa: BLE001 - a line's error is its record
            chunk.fail(pos, exc)
            return
        if not analysis_docs.converged(result):
            chunk.failed[pos] = chunk.unconverged[pos] = True
            chunk.first_failed = min(chunk.first_failed, pos)

    @staticmethod
    def write_one(chunk: _Chunk, pos: int, expr: str, result) -> None:
        """A line's output: its result, or its error record."""
        if isinstance(result, BaseException):
            chunk.fail(pos, result)
        else:
            chunk.out[pos] = _result_doc(chunk.lines[pos], expr, result)


# ---------------------------------------------------------------------------
# Input, output, Ctrl-C, progress
# ---------------------------------------------------------------------------


class _Interrupt:
    """SIGINT, SIGTERM and SIGHUP (``status.STOP_SIGNALS``) set a flag checked at safe
    points; a second one (or one while waiting for input) stops at once, except in the
    middle of a write.  The previous handlers come back on exit.

    ``state`` says where the run is: "working" (stop at the next check), "reading" (stop
    now: nothing is half done), "writing" (never stop here: a line is half written or the
    temporary file is being made or renamed).
    """

    def __init__(self, signals=None, timeout: float | None = None):
        self.requested = False
        self.signum = None  # the first stop signal that arrived
        self._state = "working"
        self.timeout = timeout  # --timeout: SIGALRM after this many seconds (None: none)
        self.timed_out = None  # the state the run was in when the --timeout ran out
        self._late = False  # it ran out between safe points: TimedOut at the next one
        self._evaluating = False  # a chunk is being parsed and evaluated (runner.current)
        #: an analysis line (a minimize may run long) is being evaluated: a stop signal
        #: stops it at once, as a second signal does elsewhere (it is left unfinished)
        self.at_once = False
        #: a read may wait for ever (a pipe, a terminal, a FIFO to open): a --timeout stops
        #: it at once; reading a regular file ends soon, and the timeout waits for it
        self.blocking_input = True
        self.last_line = 0  # the last physical input line read so far
        self.at_end = False  # the whole input has been read
        self.signals = tuple(STOP_SIGNALS) if signals is None else tuple(signals)
        self.previous: dict = {}
        self.installed = False

    def __enter__(self):
        for signum in self.signals:
            try:
                if signal.getsignal(signum) == signal.SIG_IGN:
                    continue  # ignored on purpose (nohup, a background job): stays so
                self.previous[signum] = signal.signal(signum, self._handler)
            except (ValueError, OSError):  # not the main thread, or not allowed here
                pass
        if self.timeout and hasattr(signal, "setitimer"):
            try:
                self.previous[signal.SIGALRM] = signal.signal(signal.SIGALRM, self._alarm)
                signal.setitimer(signal.ITIMER_REAL, self.timeout)
            except (ValueError, OSError):  # not the main thread: no timer
                pass
        self.installed = bool(self.previous)
        return self

    def __exit__(self, *exc):
        if self.timeout and hasattr(signal, "setitimer"):
            signal.setitimer(signal.ITIMER_REAL, 0)  # before the handler goes
        previous, self.previous = self.previous, {}
        for signum, handler in previous.items():
            try:
                signal.signal(signum, signal.SIG_DFL if handler is None else handler)
            except (ValueError, OSError, TypeError):
                pass
        self.installed = False
        return False

    @property
    def exit_code(self) -> int:
        return exit_code_for_signal(signal.SIGINT if self.signum is None else self.signum)

    @property
    def state(self) -> str:
        return self._state

    @state.setter
    def state(self, value: str) -> None:
        self._state = value
        if self._late and value == "reading" and self.blocking_input:
            self._late = False
            raise TimedOut(self.timeout)

    @property
    def evaluating(self) -> bool:
        return self._evaluating

    @evaluating.setter
    def evaluating(self, value: bool) -> None:
        self._evaluating = value
        if self._late and value:
            self._late = False
            raise TimedOut(self.timeout)

    def _alarm(self, signum, frame):
        """The --timeout ran out: stop now while a chunk is evaluated (its lines are all in
        ``runner.current``) or while waiting for input that may never come; anywhere else
        (a write, a regular file's read, lines between the reader and the chunk) at the
        next of those points, so the reader is left where it can go on."""
        if self.timed_out is not None:
            return
        self.timed_out = self._state
        if (self._state == "reading" and self.blocking_input) or (
            self._state == "working" and self._evaluating
        ):
            raise TimedOut(self.timeout)
        self._late = True

    def _handler(self, signum, frame):
        if self.signum is None:
            self.signum = signum
        if self.state == "writing":
            self.requested = True
            return
        if self.requested or self.state == "reading" or self.at_once:
            self.requested = True
            if signum == signal.SIGINT:
                raise KeyboardInterrupt
            raise Terminated(signum)
        self.requested = True


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n % (1 << 20) == 0 else f"{n} bytes"


class _Overlong:
    """Stands for an input line longer than MAX_LINE_BYTES (its text was never kept)."""

    def __init__(self, line: int, runaway: bool):
        self.line = line
        self.runaway = runaway

    def message(self) -> str:
        if self.runaway:
            return (
                f"line {self.line} goes on for more than {_size(MAX_RUNAWAY_BYTES)} "
                f"without a line end; reading stopped there"
            )
        return (
            f"line {self.line} is longer than {_size(MAX_LINE_BYTES)} (the most a batch "
            f"line may have); it was skipped"
        )

    def error(self) -> _LineError:
        return _LineError("limit", self.message())


class _LineLimit(io.BufferedIOBase):
    """The input bytes, with every line cut to its first MAX_LINE_BYTES bytes.

    It sits under the ``TextIOWrapper`` that splits the lines, so a line never takes more
    memory than that, however long it is: the rest of an overlong line is read and dropped
    here, and its number goes to ``events`` (as ``[line, runaway]``) for ``_chunks`` to
    replace it with an error record.  After MAX_RUNAWAY_BYTES of one line the input ends
    (``runaway`` is its number).  Lines are numbered the way the text layer splits them
    (universal newlines: ``\n``, ``\r\n`` and ``\r`` each end one), from 1.

    Reads are at most _READ_SIZE (< MAX_LINE_BYTES) bytes, so a line that both starts and
    ends inside one read is never too long: only a read's first line (continuing the
    previous read's last) and a read without any line end need a look.

    ``budget(n)``: after about n more bytes, reads stop at a line end (``paused``: an end
    of input for the text layer, which then has no partial line) until the next budget;
    ``_read_block`` ends a chunk there.
    """

    def __init__(self, source, close_source: bool):
        super().__init__()
        self.source = source
        self._read = getattr(source, "read1", None) or source.read
        self.close_source = close_source
        self.breaks = 0  # line ends so far
        self.run = 0  # bytes of the current line so far
        self.cr = False  # the last byte passed on was \r
        self.skipping = False  # dropping the rest of an overlong line
        self.events: collections.deque = collections.deque()
        self.runaway = None
        self.eof = False
        self.position = 0  # bytes read from the source
        self.delivered = 0  # bytes passed on
        self.stop_at = None  # pause at the first line end past this many delivered
        self.paused = False  # reads end here (a soft end of input) until budget()
        self.pending = b""  # filtered bytes held back by the pause
        self.sent_cr = False  # the last byte passed on was \r

    def readable(self) -> bool:
        return True

    def budget(self, n: int) -> None:
        """Pass on about ``n`` more bytes, then pause at a line end (end a chunk there)."""
        self.stop_at = self.delivered + n
        self.paused = False

    def read(self, n=-1) -> bytes:
        return self.read1(n)

    def read1(self, n=-1) -> bytes:
        if self.paused:
            return b""
        if self.pending:
            out, self.pending = self.pending, b""
            return self._deliver(out)
        if self.eof:
            return b""
        if n is None or n <= 0 or n > _READ_SIZE:
            n = _READ_SIZE
        while True:
            data = self._read(n)
            if not data:
                self.eof = True
                return b""
            self.position += len(data)
            out = self._filter(data)
            if out:
                return self._deliver(out)
            if self.eof:
                return b""

    def _deliver(self, out: bytes) -> bytes:
        if self.stop_at is not None and self.delivered + len(out) > self.stop_at:
            cut = _cut_point(out, self.stop_at - self.delivered, self.sent_cr)
            if cut is not None:
                out, self.pending = out[:cut], out[cut:]
                self.paused = True
                self.sent_cr = False  # the pause ends that line: the text layer sees an end
        if out:
            self.delivered += len(out)
            self.sent_cr = out[-1] == 13
        return out

    def _filter(self, data: bytes) -> bytes:
        if self.skipping:
            end = _first_break(data)
            if self.run + (len(data) if end < 0 else end) > MAX_RUNAWAY_BYTES:
                self.runaway = self.events[-1][0]  # the input ends here
                self.events[-1][1] = True
                self.eof = True
                return b""
            if end < 0:
                self.run += len(data)
                return b""
            self.skipping = False
            self.run = 0
            self.cr = False
            data = data[end:]
        has_cr = b"\r" in data
        first = _first_break(data) if has_cr else data.find(b"\n")
        if first < 0:  # no line end in this read
            if self.run + len(data) > MAX_LINE_BYTES:
                return self._overflow(data)
            self.run += len(data)
            self.cr = False
            return data
        if self.run + first > MAX_LINE_BYTES:
            return self._overflow(data)
        breaks = data.count(b"\n")
        if has_cr:
            breaks += data.count(b"\r") - data.count(b"\r\n")
            last = max(data.rfind(b"\n"), data.rfind(b"\r"))
        else:
            last = data.rfind(b"\n")
        if self.cr and data[0] == 10:  # \r at the end of the last read, \n now: one line end
            breaks -= 1
        self.breaks += breaks
        self.run = len(data) - last - 1
        self.cr = data[-1] == 13
        return data

    def _overflow(self, data: bytes) -> bytes:
        keep = MAX_LINE_BYTES - self.run
        self.events.append([self.breaks + 1, False])
        self.skipping = True
        self.run = MAX_LINE_BYTES
        return data[:keep] + self._filter(data[keep:])

    def close(self) -> None:
        if not self.closed and self.close_source:
            self.source.close()
        super().close()


_LINE_END = re.compile(rb"\r\n|\n|\r(?=[^\n])")  # a lone \r only when the next byte shows it


def _cut_point(data: bytes, room: int, after_cr: bool) -> int | None:
    """Where to pause in ``data``: after its last line end within ``room`` bytes, else after
    its first line end; None when it has none.  ``after_cr``: the bytes before ``data``
    ended with \r, so its start is a line end too unless \n follows."""
    best = 0 if after_cr and data[:1] != b"\n" else None
    if best is not None and room <= 0:
        return best
    for m in _LINE_END.finditer(data):
        if m.end() <= room or best is None:
            best = m.end()
        if m.end() >= room:
            break
    return best


def _first_break(data: bytes) -> int:
    """The index of the first \\n or \\r in ``data``, or -1."""
    n = data.find(b"\n")
    r = data.find(b"\r", 0, n if n >= 0 else len(data))
    return r if r >= 0 else n


#: paths that name one of this process's open descriptors
_FD_PATH = re.compile(
    r"/(?:dev/(?:fd/(\d+)|(stdout)|(stderr))"
    r"|proc/(?:self|thread-self)/fd/(\d+))\Z"
)


def _descriptor_of(path: str) -> int | None:
    """N for ``/dev/stdout`` (1), ``/dev/stderr`` (2), ``/dev/fd/N``, ``/proc/self/fd/N``."""
    m = _FD_PATH.match(os.path.abspath(path))
    if m is None:
        return None
    fd, out, err, proc = m.groups()
    return 1 if out else 2 if err else int(fd or proc)


class _Sink:
    """Where the output lines go: standard output, or ``-o PATH``.

    * a regular file, or a new one: a temporary file next to the file (a symlink is
      followed to its final target, a dangling one to the file it names), with the
      file's permission bits (and owner, where allowed), renamed over it by ``commit``;
      ``abort`` removes it and the file stays as it was.
    * a FIFO or a device: opened for writing (never truncated) and written straight
      through; ``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``: that descriptor itself
      (duplicated, never reopened: ``>> log`` keeps appending).
    * a folder, or the input file itself (same device and inode, however spelled):
      ``options.UsageError`` before anything is read or created.

    Lines are written as UTF-8 bytes, a chunk at a time, with ``os.write`` until every
    byte is out; a failure is ``_OutputError`` (``BrokenPipeError`` goes through as it
    is, for the error boundary's quiet exit 141).
    """

    def __init__(self, path: str | None, source_stat=None, interrupt=None):
        self.path = None if path in (None, "-") else path
        self.tmp = None  # the temporary file, until renamed or removed
        self.target = None  # the file it replaces
        self.fd = None  # the descriptor written to
        self.own_fd = False  # opened here (closed by commit/abort)
        self.text = None  # standard output: flushed before each write
        self.binary = None  # standard output without a descriptor (tests): its buffer
        self.existed = False  # -o named an existing file (replaced only on success)
        if self.path is None:
            self.name = "standard output"
            self._open_stdout()
            return
        self.name = repr(self.path)
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            raise options.UsageError(
                f"-o: cannot write {self.path!r}: {exc.strerror or exc}"
            ) from None
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise options.UsageError(
                f"-o: {self.path!r} is a directory; give the name of the file to write"
            )
        if (
            st is not None
            and source_stat is not None
            and not stat.S_ISCHR(st.st_mode)
            and (st.st_dev, st.st_ino) == (source_stat.st_dev, source_stat.st_ino)
        ):
            raise options.UsageError(
                f"-o: {self.path!r} is the input file; write the output to another file"
            )
        number = _descriptor_of(self.path) if st is not None else None
        if number is not None:  # written through that descriptor: its offset, its O_APPEND
            try:
                self.fd = os.dup(number)
            except OSError as exc:
                raise options.UsageError(
                    f"-o: cannot write {self.path!r}: {exc.strerror or exc}"
                ) from None
            self.own_fd = True
        elif st is not None and not stat.S_ISREG(st.st_mode):
            self._open_direct(interrupt)
        else:
            self._open_temporary(st)

    def _open_stdout(self) -> None:
        out = sys.stdout
        if out is None:
            raise options.UsageError("batch: there is no standard output; use -o FILE")
        self.text = out
        try:
            self.fd = out.fileno()
        except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation: a test's
            self.fd = None
            self.binary = getattr(out, "buffer", None)

    def _open_direct(self, interrupt) -> None:
        """A FIFO or a device: opened for writing (never truncated) and written through."""
        flags = os.O_WRONLY | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
        saved = None
        if interrupt is not None:  # opening a FIFO waits for a reader: a signal stops it
            saved, interrupt.state = interrupt.state, "reading"
        try:
            self.fd = os.open(self.path, flags)
        except OSError as exc:
            raise options.UsageError(
                f"-o: cannot write {self.path!r}: {exc.strerror or exc}"
            ) from None
        finally:
            if interrupt is not None:
                interrupt.state = saved
        self.own_fd = True

    def _open_temporary(self, st) -> None:
        target = os.path.realpath(self.path)  # a symlink's final target (existing or not)
        if st is not None and not os.access(target, os.W_OK):
            raise options.UsageError(f"-o: cannot write {self.path!r}: {os.strerror(errno.EACCES)}")
        directory, base = os.path.split(target)
        try:
            fd, tmp = files.make_temporary(directory, base)
        except OSError as exc:
            raise options.UsageError(
                f"-o: cannot write {self.path!r}: {exc.strerror or exc}"
            ) from None
        self.fd, self.tmp, self.target, self.own_fd = fd, tmp, target, True
        self.existed = st is not None
        fchmod, fchown = getattr(os, "fchmod", None), getattr(os, "fchown", None)
        try:
            if fchmod is None:
                pass
            elif st is None:  # a new file: the mode `>` would give it (mkstemp's is 0600)
                umask = os.umask(0)
                os.umask(umask)
                fchmod(fd, 0o666 & ~umask)
            else:
                mine = os.fstat(fd)
                if fchown is not None and (mine.st_uid, mine.st_gid) != (st.st_uid, st.st_gid):
                    try:
                        fchown(fd, st.st_uid, st.st_gid)
                    except OSError:
                        try:
                            fchown(fd, -1, st.st_gid)
                        except OSError:
                            pass
                fchmod(fd, stat.S_IMODE(st.st_mode))  # after chown, which may clear set-id
        except OSError:
            pass

    def _failed(self, exc: OSError) -> _OutputError:
        reason = exc.strerror or str(exc) or exc.__class__.__name__
        where = "to standard output" if self.path is None else self.name
        kept = ""
        if self.tmp is not None:
            kept = (
                f" ({self.path!r} is left as it was)"
                if self.existed
                else f" ({self.path!r} was not created)"
            )
        return _OutputError(f"cannot write {where}: {reason}{kept}")

    def write_lines(self, lines: list) -> None:
        if not lines:
            return
        self.write_data(("\n".join(lines) + "\n").encode("utf-8", "backslashreplace"))

    def write_data(self, data: bytes) -> None:
        """Whole lines as UTF-8 bytes (``write_lines``' encoding), written out."""
        try:
            if self.fd is not None:
                if self.text is not None:
                    self.text.flush()
                _write_all(self.fd, data)
            elif self.binary is not None:
                self.text.flush()
                self.binary.write(data)
                self.binary.flush()
            else:
                self.text.write(data.decode("utf-8"))
                self.text.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise self._failed(exc) from None

    def commit(self) -> None:
        """The output is complete: flush it, or close the temporary file and rename it."""
        try:
            if not self.own_fd:
                if self.text is not None:
                    self.text.flush()
                return
            fd, self.fd = self.fd, None
            if fd is not None:
                os.close(fd)  # NFS and friends report a full disk here
            if self.tmp is not None:
                os.replace(self.tmp, self.target)
                self.tmp = None
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise self._failed(exc) from None

    def abort(self) -> None:
        """Something went wrong: close, and remove the temporary file (FILE stays as it was)."""
        if self.own_fd and self.fd is not None:
            fd, self.fd = self.fd, None
            try:
                os.close(fd)
            except OSError:
                pass
        if self.tmp is not None:
            tmp, self.tmp = self.tmp, None
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _write_all(fd: int, data: bytes) -> None:
    """``os.write`` until every byte is written (a short write is retried, then an error)."""
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except BlockingIOError:  # a non-blocking descriptor (inherited): wait until writable
            select.select([], [fd], [])
            continue
        if n <= 0:
            raise OSError(errno.EIO, "short write: the output took no more bytes")
        view = view[n:]


class _Input:
    """The input as text lines (UTF-8, a BOM skipped, bad bytes replaced), each line at
    most MAX_LINE_BYTES (``limits``: a ``_LineLimit`` underneath, when there are bytes)."""

    def __init__(self, source: str):
        self.size = None
        self.stat = None  # os.stat_result of the input, for the -o check
        self.limits = None
        self._raw = None
        self._detach = False
        if source == "-":
            stdin = sys.stdin
            if stdin is None or stdin.closed:
                raise options.UsageError("batch: '-' reads standard input, but there is none")
            try:
                self.stat = os.fstat(stdin.fileno())
            except (AttributeError, OSError, ValueError):
                self.stat = None
            buffer = getattr(stdin, "buffer", None)
            if buffer is not None:
                self.limits = _LineLimit(buffer, close_source=False)
                self.stream = self._text(self.limits)
                self._detach = True
            else:
                self.stream = stdin
            return
        try:
            self._raw = open(source, "rb", buffering=0)
            if os.path.isdir(source):
                raise IsADirectoryError(21, "Is a directory")
        except OSError as exc:
            if self._raw is not None:
                self._raw.close()
            raise options.UsageError(
                f"batch: cannot read {source!r}: {exc.strerror or exc}"
            ) from None
        try:
            self.stat = os.fstat(self._raw.fileno())
            self.size = self.stat.st_size if self.stat.st_size > 0 else None
        except OSError:
            self.size = None
        self.limits = _LineLimit(self._raw, close_source=True)
        self.stream = self._text(self.limits)

    @staticmethod
    def _text(binary, encoding: str = "utf-8-sig") -> io.TextIOWrapper:
        """Text lines of ``binary`` (``encoding="utf-8"``: a part of a file after its start)."""
        stream = io.TextIOWrapper(binary, encoding=encoding, errors="replace")
        stream._CHUNK_SIZE = _READ_SIZE
        return stream

    def position(self) -> int | None:
        return self.limits.position if self._raw is not None else None

    def overlong(self, line: int) -> _Overlong | None:
        """The stand-in for line ``line`` if it was too long (events before it dropped)."""
        events = self.limits.events if self.limits is not None else None
        while events and events[0][0] < line:
            events.popleft()
        if events and events[0][0] == line:
            number, runaway = events.popleft()
            return _Overlong(number, runaway)
        return None

    def close(self) -> None:
        if self._detach:
            try:
                self.stream.detach()
            except (ValueError, OSError):
                pass
        elif self._raw is not None:
            self.stream.close()


class _Progress:
    def __init__(self, enabled: bool, total: int | None):
        self.bar = None
        if not enabled:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        columns = [
            TextColumn("batch"),
            BarColumn(),
            TextColumn("{task.fields[lines]} lines"),
            TimeElapsedColumn(),
        ]
        if total:
            columns.append(TimeRemainingColumn())
        self.bar = Progress(*columns, console=Console(stderr=True), transient=True)
        self.task = self.bar.add_task("batch", total=total, lines=0)
        self.bar.start()

    def update(self, position: int | None, lines: int) -> None:
        if self.bar is not None:
            if position is not None:
                self.bar.update(self.task, completed=position, lines=lines)
            else:
                self.bar.update(self.task, lines=lines)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


_LINE_STARTS_BLANK = re.compile(r"\n\s")  # a line that starts with white space (or is empty)


def _chunks(stream, first_line: int, size: int, interrupt: _Interrupt, limits=None):
    """(line numbers, texts, joined text) of the next ``size`` physical lines, blank ones
    left out (the joined text is None when some were).

    With ``limits`` (the input's ``_LineLimit``), a line that was too long comes alone, as
    ``([number], [_Overlong], None)``, between the lines before and after it.
    """
    line = first_line - 1
    events = limits.events if limits is not None else None
    while True:
        if interrupt.requested:
            raise _Stop()
        interrupt.state = "reading"
        try:
            if limits is None:
                block = list(itertools.islice(stream, size))
            else:
                block = _read_block(stream, size, limits)
        finally:
            interrupt.state = "working"
        if not block:
            interrupt.at_end = True
            return
        interrupt.last_line = line + len(block)
        if events:
            while events and events[0][0] <= line:
                events.popleft()
            if events and events[0][0] <= line + len(block):
                yield from _split_overlong(block, line, events)
                line += len(block)
                continue
        joined = "".join(block)
        body = joined[:-1] if joined.endswith("\n") else joined
        if (
            body
            and not body[0].isspace()
            and block[-1] != "\n"
            and _LINE_STARTS_BLANK.search(body) is None
        ):
            # the usual case: no line starts with white space, so none is blank
            numbers = list(range(line + 1, line + 1 + len(block)))
            line += len(block)
            yield numbers, block, joined
            continue
        numbers = []
        texts = []
        for text in block:
            line += 1
            if text.strip():
                numbers.append(line)
                texts.append(text)
        yield numbers, texts, None


def _read_block(stream, size: int, limits: _LineLimit) -> list:
    """The next ``size`` lines, or fewer: those that end within MAX_CHUNK_BYTES of input
    (``_LineLimit`` pauses there), so that many long lines never make a chunk too large
    for memory.  No cost per line: the pause is a line end at which reading stops."""
    while True:
        limits.budget(MAX_CHUNK_BYTES)
        block = list(itertools.islice(stream, size))
        if block or not limits.paused:
            return block


def _split_overlong(block: list, line: int, events):
    numbers: list = []
    texts: list = []
    for text in block:
        line += 1
        if events and events[0][0] == line:
            number, runaway = events.popleft()
            if numbers:
                yield numbers, texts, None
                numbers, texts = [], []
            yield [number], [_Overlong(number, runaway)], None
        elif text.strip():
            numbers.append(line)
            texts.append(text)
    if numbers:
        yield numbers, texts, None


# ---------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------


def _input_format(opts: BatchOptions) -> str:
    if opts.input_format is not None:
        fmt = opts.input_format.lower()
        if fmt not in FORMATS:
            raise options.UsageError(f"--format must be jsonl or csv, not {opts.input_format!r}")
        return fmt
    if opts.source == "-":
        return "jsonl"
    _no_parquet(opts.source, "input")
    return _EXTENSIONS.get(os.path.splitext(opts.source)[1].lower(), "jsonl")


def _no_parquet(path: str | None, what: str) -> None:
    """The local engine reads and writes text: a Parquet file is the Dask engine's."""
    if path and os.path.splitext(path.rstrip("/"))[1].lower() in (".parquet", ".pq"):
        raise options.UsageError(
            f"batch: Parquet {what} ({path!r}) needs --engine dask (pip install "
            "'autograd-cli[dask]'); the local engine reads JSONL or CSV and writes JSONL"
        )


def _check_options(opts: BatchOptions) -> None:
    if opts.op not in OPS:
        raise options.UsageError(f"--op must be one of {', '.join(OPS)}, not {opts.op!r}")
    if opts.chunk_size < 1:
        raise options.UsageError(f"--chunk-size must be at least 1, not {opts.chunk_size}")
    least = 0 if opts.op == "taylor" else 1  # taylor's degree 0 is the value
    if opts.order is not None and opts.order < least:
        raise options.UsageError(f"--order must be at least {least}, not {opts.order}")
    if opts.order is not None and opts.order > options.MAX_ORDER:
        raise options.UsageError(f"--order must be at most {options.MAX_ORDER}, not {opts.order}")


def _check_command_line(program, opts: BatchOptions, fmt: str) -> None:
    """The checks that depend on the command line alone, made once before any input is read:
    one usage error (exit 2) rather than the same error record on every line.

    The options are checked as a line that gives only its variables takes them (``program``:
    --expr's; None when each line gives its own expression, and the checks that need one
    wait for the lines).  A JSONL line that brings its own expr, op, wrt or order is still
    checked alone; --order and --wrt stay defaults for the lines whose op takes them (eval
    and an analysis op without them ignore them).  CSV rows take op, --wrt and --order from
    the command line, so there an option that no row can use is an error too.
    """
    from ..core.program import resolve_wrt

    op, order = opts.op, opts.order
    ignores = op == "eval" or op in ANALYSIS_OPS  # an option they do not take: not theirs
    if (
        order not in (None, 1)
        and op not in ("grad", "diff", "taylor")
        and (fmt == "csv" or not ignores)
    ):
        raise options.UsageError(
            f"--order applies to --op grad and --op diff and --op taylor, not --op {op}"
        )
    takes_wrt = op not in ANALYSIS_OPS or "wrt" in analysis_docs.KEYS[op]
    if opts.wrt and not takes_wrt and fmt == "csv":
        raise options.UsageError(f"--wrt does not apply to --op {op}")
    if program is None:
        return
    names = None
    if opts.wrt and op != "eval" and takes_wrt:
        names = resolve_wrt(program, opts.wrt)  # a name that is not a variable: exit 2
    if op == "grad" and order not in (None, 1):
        count = len(opts.wrt) if opts.wrt else len(program.inputs)
        if count != 1:
            have = ", ".join(program.inputs) or "none"
            raise options.UsageError(
                f"--order {order} with --op grad needs one variable to differentiate "
                f"with respect to; the expression has {have}: give --wrt NAME"
            )
    at = (opts.settings or {}).get("at")
    if op == "taylor" and at:
        names = names or resolve_wrt(program, None)
        unknown = [name for name in at if name not in names]
        if unknown:
            raise options.UsageError(
                f"--at names {unknown[0]!r}, which is not a variable of the expansion "
                f"({', '.join(names) or 'none'})"
            )


def _option(key: str) -> str:
    """A line's key as the command line spells it: max_iter -> --max-iter."""
    return "--" + key.replace("_", "-")


def _check_settings(opts: BatchOptions, fmt: str) -> None:
    """``opts.settings`` (the analysis ops' settings for every line), checked before any
    input is read: each taken by some analysis op (CSV: by --op) and a good value."""
    for key, value in (opts.settings or {}).items():
        ops = [op for op in ANALYSIS_OPS if key in analysis_docs.KEYS[op]]
        if key in ("wrt", "order") or not ops:
            raise options.UsageError(f"batch: {key!r} is not a setting of the analysis ops")
        if fmt == "csv" and opts.op not in ops:
            raise options.UsageError(
                f"{_option(key)} applies to --op {', '.join(ops)}, not --op {opts.op}"
            )
        analysis_docs.settings(opts.op if opts.op in ops else ops[0], {key: value}, _option)


def _check_csv_program(program, names: list[str], opts: BatchOptions) -> frozenset:
    """Problems of the command itself (header against expression, --wrt): exit 2, not N errors.

    Returns the columns the expression does not use: they are ignored, with one warning on
    stderr (one file of points serves many expressions), and their cells are not read.
    """
    from ..core.program import topological
    from . import streams

    used = set(program.inputs)
    unused = [n for n in names if n not in used]
    if unused and opts.strict:
        shown = ", ".join(repr(n) for n in unused[:10])
        raise UnknownVariableError(
            f"batch: CSV column{'s' if len(unused) > 1 else ''} {shown}"
            f"{f' and {len(unused) - 10} more' if len(unused) > 10 else ''}: not "
            f"{'a variable' if len(unused) == 1 else 'variables'} of the expression "
            f"(without --strict they are ignored)",
            variable=unused[0],
        )
    if unused:
        shown = ", ".join(repr(n) for n in unused[:10])
        if len(unused) > 10:
            shown += f" and {len(unused) - 10} more"
        streams.say(
            f"autograd-cli: warning: batch: ignoring CSV column{'s' if len(unused) > 1 else ''} "
            f"{shown}: not {'a variable' if len(unused) == 1 else 'variables'} of the expression"
        )
    for node in topological([program.output]):
        if node.op == "var" and node.name not in names:
            raise missing_value(
                node.name,
                f": the CSV header has no column {node.name!r} (columns: {', '.join(names)})",
            )
    return frozenset(unused)


def run_batch(opts: BatchOptions) -> Summary:
    """Run a batch: the output lines are written; returns what happened (see ``Summary``)."""
    _no_parquet(opts.output, "output")
    _check_options(opts)
    fmt = _input_format(opts)
    _check_settings(opts, fmt)
    programs = _Programs()
    program = None
    if opts.expr is not None:
        program, error = programs.get(opts.expr)
        if error is not None:
            raise error  # the command line itself is wrong: exit 2 like the other commands
    elif fmt == "csv":
        raise options.UsageError("batch: CSV input needs --expr (and --op, default grad)")
    _check_command_line(program, opts, fmt)
    source = _Input(opts.source)
    interrupt = _Interrupt(timeout=opts.timeout)
    runner = _Runner(opts, interrupt)
    runner.programs = programs
    sink = None
    progress = None
    code = ExitCode.OK
    error = None
    try:
        with interrupt:
            try:
                interrupt.state = "writing"  # the temporary file is made whole or not at all
                sink = _Sink(opts.output, source.stat, interrupt)
                interrupt.state = "working"
                interrupt.blocking_input = not _regular(source)
                show = opts.progress
                if show is None:
                    show = bool(
                        source.size
                        and source.size >= PROGRESS_MIN_BYTES
                        and sys.stderr is not None
                        and sys.stderr.isatty()
                    )
                progress = _Progress(show, source.size)
                _drive(runner, source, sink, fmt, opts, progress, interrupt)
            except _STOPS as exc:
                chunk = runner.current
                if isinstance(exc, TimedOut):  # every line read gets its line: exit 1
                    interrupt.state = "writing"
                    error = _after_timeout(runner, source, sink, interrupt, exc.seconds)
                    code = ExitCode.EVALUATION_ERROR
                elif chunk is not None and sink is not None:  # the completed prefix
                    n = chunk.done_prefix()
                    interrupt.state = "writing"
                    sink.write_lines(chunk.out[:n])
                    runner.count(chunk, n)
                if not isinstance(exc, TimedOut):
                    code = (
                        exc.exit_code
                        if isinstance(exc, Terminated) and interrupt.signum is None
                        else interrupt.exit_code
                    )
            interrupt.state = "writing"
            if progress is not None:
                progress.stop()
            if sink is not None:
                sink.commit()
            if interrupt.requested:  # a stop signal, even one that came at the very end
                code = interrupt.exit_code
    except _OutputError as exc:
        if progress is not None:
            progress.stop()
        sink.abort()
        error = str(exc)
        code = ExitCode.EVALUATION_ERROR
    except BaseException:
        if progress is not None:
            progress.stop()
        if sink is not None:
            sink.abort()
        raise
    finally:
        source.close()
    limits = source.limits
    if error is None and limits is not None and limits.runaway is not None and code == ExitCode.OK:
        error = _runaway_message(limits.runaway, runner.written)
    if code == ExitCode.OK and (runner.failed or error):
        code = ExitCode.EVALUATION_ERROR
    return Summary(code, runner.written, runner.failed, runner.stopped, error, runner.unconverged)


def _runaway_message(line: int, written: int) -> str:
    return (
        f"line {line} goes on for more than {_size(MAX_RUNAWAY_BYTES)} "
        f"without a line end (is the input a text file?); reading stopped there, "
        f"after {written} output line(s), the last one its error record"
    )


def _regular(source: _Input) -> bool:
    """The input is a regular file: a read never waits for more to come."""
    return source.stat is not None and stat.S_ISREG(source.stat.st_mode)


def _after_timeout(runner: _Runner, source: _Input, sink, interrupt: _Interrupt, seconds) -> str:
    """The --timeout ran out: the lines finished so far are written whole, each line read
    but not finished gets an error record of kind ``limit``, in input order; then, from a
    regular file whose reading was not cut short, at most TIMEOUT_TAIL_LINES more lines
    (within MAX_CHUNK_BYTES) get theirs.  The rest of the input is not read (a pipe may never
    end).  Returns the message for stderr."""
    message = f"not finished before the --timeout of {seconds:g} s"
    chunk = runner.current
    if sink is None:
        return f"stopped after the --timeout of {seconds:g} s, before any line"
    unfinished = 0
    if chunk is not None:
        for pos, out in enumerate(chunk.out):
            if out is None:
                chunk.fail(pos, _LineError("limit", message))
                unfinished += 1
        sink.write_lines(chunk.out)
        runner.count(chunk, len(chunk.out))
        runner.current = None
    if runner.chunks is not None and not interrupt.blocking_input:
        start = interrupt.last_line
        try:
            for numbers, texts, _ in runner.chunks:  # the same reader, where it stopped
                docs = _limit_docs(numbers, texts, message)
                sink.write_lines(docs)
                runner.written += len(docs)
                runner.failed += len(docs)
                unfinished += len(docs)
                if interrupt.last_line - start >= TIMEOUT_TAIL_LINES:
                    break
        except _STOPS:  # a stop signal now: what is written stays; its exit code follows
            pass
    note = (
        f"; reading stopped after line {interrupt.last_line}: the lines after it were not "
        f"reached (no record)"
        if not interrupt.at_end
        else ""
    )
    done = f"{runner.written} line(s) written"
    if unfinished:
        done += f", {unfinished} of them not finished (an error record of kind limit each)"
    return f"stopped after the --timeout of {seconds:g} s: {done}{note}"


def _limit_docs(numbers: list, texts: list, message: str) -> list:
    """The records of lines read after a --timeout: each a ``limit`` error with ``message``
    (an overlong line: its own record)."""
    return [
        _exception_doc(n, t.error()) if type(t) is _Overlong else _error_doc(n, "limit", message)
        for n, t in zip(numbers, texts)
    ]


def _drive(
    runner: _Runner,
    source: _Input,
    sink: _Sink,
    fmt: str,
    opts: BatchOptions,
    progress: _Progress,
    interrupt: _Interrupt,
):
    stream = source.stream
    names = None
    skip: frozenset = frozenset()  # CSV columns the expression does not use
    first_line = 1
    if fmt == "csv":
        header, header_line = _read_header(source, interrupt)
        if header is None:
            return
        names = _csv_header(header)
        program, _ = runner.programs.get(opts.expr)
        skip = _check_csv_program(program, names, opts)
        first_line = header_line + 1
    runner.chunks = _chunks(stream, first_line, opts.chunk_size, interrupt, source.limits)
    for numbers, texts, joined in runner.chunks:
        if not numbers:
            continue
        chunk = _Chunk(numbers)
        runner.current = chunk
        interrupt.evaluating = True  # from here a --timeout gives the chunk's lines records
        n = _evaluate_chunk(runner, chunk, fmt, texts, joined, names, skip)
        interrupt.evaluating = False
        interrupt.state = "writing"  # written and counted, or neither: no stop in between
        sink.write_lines(chunk.out[:n])
        runner.count(chunk, n)
        runner.current = None
        interrupt.state = "working"
        progress.update(source.position(), runner.written)
        if opts.fail_fast and any(chunk.failed[:n]):
            runner.stopped = True
            return
        if interrupt.requested:
            raise _Stop()


def _read_header(source: _Input, interrupt) -> tuple[str | None, int]:
    """A CSV file's header: its first non-blank line (None: there is none) and its number."""
    interrupt.state = "reading"
    try:
        header_line = 0
        for text in source.stream:
            header_line += 1
            overlong = source.overlong(header_line)
            if overlong is not None:
                raise options.UsageError(
                    f"the CSV header (line {header_line}) is longer "
                    f"than {_size(MAX_LINE_BYTES)}: "
                    f"is this a CSV file?"
                )
            if text.strip():
                return text, header_line
    finally:
        interrupt.state = "working"
    return None, header_line


def _evaluate_chunk(
    runner: _Runner,
    chunk: _Chunk,
    fmt: str,
    texts: list,
    joined: str | None = None,
    names: list | None = None,
    skip: frozenset = frozenset(),
) -> int:
    """One chunk's lines (``texts``, CSV or JSONL) parsed and evaluated into ``chunk.out``;
    returns how many of them are to be written: all, or with --fail-fast those up to and
    including the first failed one."""
    opts = runner.opts
    tasks: list = []
    groups: list = []
    stop_at = None  # with --fail-fast: a line that fails before evaluation
    if type(texts[0]) is _Overlong:  # a line too long to read: alone in its chunk
        chunk.fail(0, texts[0].error())
        if opts.fail_fast:
            stop_at = 0
    elif fmt == "csv":
        fast = _csv_fast(texts, len(names), joined) if batchable(opts.op, opts.order) else None
        if fast is not None:
            columns = {n: fast[:, i] for i, n in enumerate(names) if n not in skip}
            groups.append(_column_group(opts, columns, len(texts)))
        else:
            tasks, stop_at = _parse_each(chunk, texts, opts, _csv_row, names, opts, skip)
    else:
        tasks, stop_at = _parse_each(chunk, texts, opts, _parse_jsonl, opts)
    return _run_chunk(runner, chunk, tasks, groups, stop_at)


def _column_group(opts: BatchOptions, columns: dict, size: int) -> tuple:
    """A ready-made group of ``size`` rows of --expr from columns of plain numbers (name ->
    float64 array, in the header's order), for ``_Runner.run_chunk``."""
    return (
        opts.expr,
        opts.op,
        tuple(opts.wrt) if opts.wrt and opts.op != "eval" else None,
        tuple((n, ()) for n in columns),
        list(range(size)),
        lambda: columns,
        None,
    )


def _parse_each(chunk: _Chunk, items: list, opts: BatchOptions, parse, *args) -> tuple:
    """``parse(pos, item, *args)`` for each line of the chunk: (tasks, the position where
    --fail-fast stopped or None); a line that does not parse gets its error record."""
    tasks = []
    for pos, item in enumerate(items):
        try:
            tasks.append(parse(pos, item, *args))
        except Exception as exc:  # noqa: BLE001
            chunk.fail(pos, exc)
            if opts.fail_fast:
                return tasks, pos
    return tasks, None


def _run_chunk(runner: _Runner, chunk: _Chunk, tasks: list, groups: list, stop_at) -> int:
    """Evaluate a parsed chunk; returns the number of its lines to write (see _evaluate_chunk)."""
    runner.run_chunk(chunk, tasks, groups)
    n = len(chunk.lines) if stop_at is None else stop_at + 1
    if runner.opts.fail_fast:
        for i in range(n):
            if chunk.failed[i]:
                return i + 1
    return n
