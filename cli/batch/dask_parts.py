"""The Dask engine's partitions (``batch --engine dask``): where they come from, what a
worker does with one, and the Parquet output.

* The input (client side, before any work): the files of a path, a glob or a folder
  (:func:`expand`), their formats, CSV headers and Parquet schemas checked against
  ``--expr`` as the local engine checks them (:func:`csv_columns`, :func:`parquet_columns`).
* A text partition is a byte range moved to line starts (:func:`measure`: ``\\n``,
  ``\\r\\n`` or a lone ``\\r`` ends a line, as the local reader splits them, and its
  line ends counted); a Parquet partition is a row group.
* On a worker (:func:`evaluate_part`): the range (or row group) read and run through the
  local engine's public seam, chunk by chunk: ``io.read_chunks`` (line limits included),
  ``engine.evaluate_chunk`` (the library's vectorised :mod:`autograd_cli.core.rows`), the same
  record and template writers.  It returns a :class:`Done`: the partition's JSONL bytes, or
  for ``-o DIR.parquet`` an Arrow table of them (:func:`lines_table`).
* :class:`ParquetSink`: ``-o DIR.parquet``, a folder of part files, through the one output
  policy (``files.open_target``).
"""

from __future__ import annotations

import glob
import json
import math
import os
import re
import stat
import threading
import time
from dataclasses import dataclass

from ...core.rows import batchable
from .. import files, options
from . import command, records
from . import engine as batch_engine
from . import io as batch_io
from .records import BatchOptions

__all__ = [
    "INSTALL_HINT",
    "PARQUET_EXTENSIONS",
    "STOP",
    "DaskOptions",
    "Done",
    "ParquetSink",
    "Part",
    "TextReader",
    "WorkerStop",
    "csv_columns",
    "evaluate_part",
    "expand",
    "format_of",
    "gradient_columns",
    "import_parquet",
    "labelled",
    "lines_table",
    "measure",
    "parquet_columns",
]

INSTALL_HINT = "pip install 'autograd-cli[dask]'"
PARQUET_EXTENSIONS = (".parquet", ".pq")
_READ = 1 << 20
#: a line start is looked for this far past a partition boundary; a line longer than this
#: is a runaway line (the local engine stops reading there too)
_SCAN_LIMIT = batch_io.MAX_RUNAWAY_BYTES + batch_io.MAX_LINE_BYTES
#: set on a stop (Ctrl-C, --timeout): in-process workers stop at their next check
STOP = threading.Event()


@dataclass
class DaskOptions:
    """The engine's own settings (``batch --engine dask``)."""

    scheduler: str | None = None  # an address; IN_PROCESS; None: a local cluster of processes
    workers: int | None = None  # a local cluster's workers (None: one per core)
    partition_size: int | None = None  # bytes of text per partition (None: automatic)
    device: str = "cpu"
    dtype: str = "float64"
    max_memory: float | None = None


@dataclass
class Part:
    """One partition: a byte range of a text file, or a row group of a Parquet file."""

    index: int
    path: str
    fmt: str  # csv, jsonl or parquet
    start: int  # text: a byte offset (moved to a line start by measure); parquet: the group
    end: int  # text: the end offset (likewise); parquet: rows in the group
    first_line: int | None = None  # the number of its first line, once known
    names: list | None = None  # CSV and Parquet: the columns
    skip: frozenset = frozenset()  # the columns the expression does not use
    label: str | None = None  # the "file" of every line, when there are several files
    weight: float = 0.0  # its share of the input's bytes (progress)
    range: tuple | None = None  # text: (first byte, end byte, line ends), from measure


@dataclass
class Done:
    """What a partition's task returns."""

    data: bytearray | None = None  # its JSONL lines as the output's bytes (None: none)
    table: object = None  # -o DIR.parquet: its lines as an Arrow table
    lines: int = 0
    failed: int = 0
    unconverged: int = 0
    stopped: bool = False  # --fail-fast stopped at a failed line of this partition
    runaway: int | None = None  # a line with no end: reading stopped there
    finished: bool = True  # False: stopped by Ctrl-C or the --timeout before its end
    last: int | None = None  # the number of its last line kept


class WorkerStop:
    """The ``interrupt`` of the local engine's reader and runner, on a worker: it asks to
    stop when the run's deadline has passed or (in process) the client said stop."""

    def __init__(self, deadline: float | None = None, stoppable: bool = True):
        self.deadline = deadline  # time.time() of the --timeout, or None
        self.stoppable = stoppable  # False: never (the client's own reads)
        self.state = "working"
        self.evaluating = False
        self.at_once = False
        self.blocking_input = False
        self.last_line = 0
        self.at_end = False

    @property
    def requested(self) -> bool:
        if not self.stoppable:
            return False
        return STOP.is_set() or (self.deadline is not None and time.time() >= self.deadline)


def import_parquet(what: str):
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet as pq
    except ImportError:
        raise options.UsageError(f"{what} needs pyarrow: {INSTALL_HINT}") from None
    return pq


# The input: files, formats, headers
# ---------------------------------------------------------------------------


def _natural(path: str) -> list:
    # isdecimal is what \d matches: isdigit also takes "²", which int() refuses
    return [(0, int(t), "") if t.isdecimal() else (1, 0, t) for t in re.split(r"(\d+)", path)]


def _known(name: str) -> bool:
    ext = os.path.splitext(name)[1].lower()
    return ext in batch_io.EXTENSIONS or ext in PARQUET_EXTENSIONS


def expand(source: str, given_format: str | None) -> list[str]:
    """The input files: ``source`` itself, the files a glob matches, or a folder's files
    (those with a known extension, or every one with --format; names starting with ``.``
    or ``_`` left out), in natural name order."""
    if source == "-":
        raise options.UsageError(
            "--engine dask reads files (a path, a glob or a folder), not standard input"
        )
    if os.path.isdir(source):
        files = [
            os.path.join(source, name)
            for name in os.listdir(source)
            if not name.startswith((".", "_"))
            and (given_format is not None or _known(name))
            and os.path.isfile(os.path.join(source, name))
        ]
        if not files:
            raise options.UsageError(
                f"batch: the folder {source!r} has no CSV, JSONL or Parquet files"
            )
    elif os.path.exists(source) or not glob.has_magic(source):
        files = [source]
    else:
        files = [p for p in glob.glob(source) if os.path.isfile(p)]
        if not files:
            raise options.UsageError(f"batch: no file matches {source!r}")
    files.sort(key=_natural)
    for path in files:
        try:
            st = os.stat(path)
            with open(path, "rb"):
                pass
        except OSError as exc:
            raise options.UsageError(
                f"batch: cannot read {path!r}: {exc.strerror or exc}"
            ) from None
        if stat.S_ISDIR(st.st_mode):
            raise options.UsageError(f"batch: cannot read {path!r}: Is a directory")
        if not stat.S_ISREG(st.st_mode):
            raise options.UsageError(
                f"batch: --engine dask reads regular files; {path!r} is not one"
            )
    return files


def format_of(path: str, given: str | None) -> str:
    if given is not None:
        fmt = given.lower()
        if fmt not in batch_io.FORMATS + ("parquet",):
            raise options.UsageError(f"--format must be jsonl, csv or parquet, not {given!r}")
        return fmt
    ext = os.path.splitext(path)[1].lower()
    if ext in PARQUET_EXTENSIONS:
        return "parquet"
    return batch_io.EXTENSIONS.get(ext, "jsonl")


def _line_start(f, x: int, size: int) -> int:
    """The first line start at or after byte ``x`` of the open file ``f`` (``size`` when
    none): 0, or a byte after ``\\n``, after ``\\r\\n``, or after a ``\\r`` not followed by
    ``\\n``.  Looked for at most _SCAN_LIMIT bytes on (a longer line runs away)."""
    if x <= 0:
        return 0
    if x >= size:
        return size
    f.seek(x - 1)
    pair = f.read(2)
    if pair[:1] == b"\n" or (pair[:1] == b"\r" and pair[1:2] != b"\n"):
        return x
    pos = x
    f.seek(x)
    stop = min(size, x + _SCAN_LIMIT)
    while pos < stop:
        data = f.read(min(_READ, stop - pos))
        if not data:
            return pos
        k = batch_io.first_break(data)
        if k >= 0:
            end = pos + k + 1
            if data[k] != 13:
                return end
            nxt = data[k + 1 : k + 2] if k + 1 < len(data) else (f.seek(end), f.read(1))[1]
            return end + 1 if nxt == b"\n" else end
        pos += len(data)
    return stop


def _count_ends(f, p0: int, p1: int) -> int:
    """Line ends in bytes [p0, p1) (``\\r\\n`` counts once; p0 and p1 are line starts)."""
    f.seek(p0)
    left = p1 - p0
    ends = 0
    cr = False
    while left > 0:
        data = f.read(min(_READ, left))
        if not data:
            break
        left -= len(data)
        ends += data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")
        if cr and data[:1] == b"\n":
            ends -= 1
        cr = data[-1:] == b"\r"
    return ends


def measure(path: str, start: int, end: int) -> tuple:
    """A text partition's (first byte, end byte, line ends): [start, end) moved to line starts."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        p0 = _line_start(f, start, size)
        p1 = _line_start(f, end, size)
        if p1 <= p0:
            return p0, p0, 0
        return p0, p1, _count_ends(f, p0, p1)


def _skip_lines(path: str, count: int) -> int:
    """The byte offset after the first ``count`` lines of a file."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        pos = 0
        for _ in range(count):
            if pos >= size:
                return size
            pos = _line_start(f, pos + 1, size)
        return pos


def csv_columns(path: str, program, opts: BatchOptions, warned: dict):
    """A CSV file's header checked against the expression, as the local engine checks it:
    (names, unused columns, byte offset of the first data line, its number); None for a
    file without a header (no lines)."""
    source = batch_io.Input(path)
    try:
        header, header_line = batch_io.read_header(source, WorkerStop(stoppable=False))
    finally:
        source.close()
    if header is None:
        return None
    names = records.csv_header(header)
    skip = _check_columns(program, names, opts, warned)
    return names, skip, _skip_lines(path, header_line), header_line + 1


def _check_columns(program, names: list, opts: BatchOptions, warned: dict) -> frozenset:
    """``_check_csv_program`` once per distinct set of columns (its warning said once)."""
    key = tuple(names)
    if key not in warned:
        warned[key] = command.check_csv_program(program, names, opts)
    return warned[key]


def parquet_columns(pq, path: str, program, opts: BatchOptions, warned: dict):
    """A Parquet file's columns checked like a CSV header: (names, unused, row counts of its
    row groups).  A column whose name is not a variable name is never used: ignored."""
    import pyarrow as pa

    try:
        meta = pq.ParquetFile(path).metadata
    except (OSError, pa.ArrowException) as exc:  # not a Parquet file (ArrowInvalid), unread
        raise options.UsageError(f"batch: cannot read {path!r} as Parquet: {exc}") from None
    names = list(meta.schema.to_arrow_schema().names)
    if len(set(names)) != len(names):
        raise options.UsageError(f"batch: {path!r} has two columns of the same name")
    skip = _check_columns(program, names, opts, warned)
    rows = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    return names, skip, rows


# ---------------------------------------------------------------------------
# On a worker
# ---------------------------------------------------------------------------


class _Range:
    """Bytes [start, end) of a file, read like a raw file (under the local ``_LineLimit``)."""

    def __init__(self, path: str, start: int, end: int):
        self.file = open(path, "rb", buffering=0)  # noqa: SIM115 - closed by close()
        self.file.seek(start)
        self.left = end - start

    def read(self, n: int = -1) -> bytes:
        if self.left <= 0:
            return b""
        if n is None or n < 0 or n > self.left:
            n = self.left
        data = self.file.read(n)
        self.left -= len(data)
        return data

    def close(self) -> None:
        self.file.close()


class TextReader:
    """A text partition's lines as the local engine reads them: ``chunks()`` yields
    ``io.read_chunks``' (numbers, texts, joined), lines cut at MAX_LINE_BYTES; ``limits.runaway``
    is then the line that ran away, if one did."""

    def __init__(self, part: Part, size: int, stop):
        p0, p1, _ = part.range
        self.part, self.size, self.stop = part, size, stop
        self.limits = batch_io.LineLimit(_Range(part.path, p0, p1), close_source=True)
        self.limits.breaks = part.first_line - 1  # its lines are numbered from first_line
        self.stream = batch_io.Input.text_stream(self.limits, "utf-8-sig" if p0 == 0 else "utf-8")

    def chunks(self):
        try:
            yield from batch_io.read_chunks(
                self.stream, self.part.first_line, self.size, self.stop, self.limits
            )
        finally:
            self.stream.close()


def _cell_text(value) -> str:
    """A Parquet cell as the text of a CSV cell (read by the CSV row parser)."""
    if value is None:
        return ""  # a missing value, as an empty CSV field
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple)):
        from .. import jsonout

        return jsonout.dumps(list(value))
    return str(value)


def _parquet_chunks(part: Part, runner, size: int):
    """(chunk, lines to write) of a Parquet row group, evaluated as CSV rows are."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    opts = runner.opts
    used = [n for n in part.names if n not in part.skip]
    table = pq.ParquetFile(part.path).read_row_group(part.start, columns=used)
    count = table.num_rows
    plain = batchable(opts.op, opts.order) and all(
        (pa.types.is_integer(table.column(n).type) or pa.types.is_floating(table.column(n).type))
        and table.column(n).null_count == 0
        for n in used
    )
    if plain:  # numbers only: columns, as the CSV reader's loadtxt path gives them
        columns = {n: np.asarray(table.column(n).to_numpy(), dtype=np.float64) for n in used}
    else:
        cells = {n: [_cell_text(v) for v in table.column(n).to_pylist()] for n in used}
        blank = [""] * count
    for a in range(0, count, size):
        b = min(count, a + size)
        chunk = runner.current = batch_engine.Chunk(
            list(range(part.first_line + a, part.first_line + b))
        )
        if plain:
            group = batch_engine.column_group(opts, {n: c[a:b] for n, c in columns.items()}, b - a)
            n = batch_engine.run_chunk(runner, chunk, [], [group], None)
        else:
            rows = [[(cells.get(n) or blank)[i] for n in part.names] for i in range(a, b)]
            tasks, stop_at = batch_engine.parse_each(
                chunk, rows, opts, records.csv_fields, part.names, opts, part.skip
            )
            n = batch_engine.run_chunk(runner, chunk, tasks, [], stop_at)
        yield chunk, n


def evaluate_part(part: Part, opts: BatchOptions, engine: DaskOptions, deadline, columns):
    """One partition, evaluated on a worker by the local engine's code: a ``Done``.

    Stopped by the deadline (or, in process, the client), it returns the lines finished
    so far, in order (``finished`` False, ``last``: the number of the last one).
    ``columns``: for -o DIR.parquet, the gradient columns (else None: JSONL text)."""
    from ...core import backend, limits

    stop = WorkerStop(deadline)
    done = Done()
    runner = batch_engine.Runner(opts, stop)
    lines: list = []  # -o DIR.parquet: the output lines, made a table at the end
    data = bytearray()  # else their bytes, chunk by chunk (the lines' text not kept)

    def keep(kept: list) -> None:
        if columns is not None:
            lines.extend(kept)
        elif kept:
            data.extend(_encoded(labelled(kept, part.label)))

    try:
        with _settings(backend, engine), limits.using(engine.max_memory):
            if part.fmt == "parquet":
                evaluated = _parquet_chunks(part, runner, opts.chunk_size)
                reader = None
            else:
                reader = TextReader(part, opts.chunk_size, stop)
                evaluated = _evaluated_text(part, runner, reader.chunks())
            for chunk, n in evaluated:
                _keep(done, keep, runner, chunk, n)
                if done.stopped:
                    break
            if reader is not None and not done.stopped:
                done.runaway = reader.limits.runaway
    except batch_io.Stop:
        done.finished = False
        chunk = runner.current
        if chunk is not None:
            _keep(done, keep, runner, chunk, chunk.done_prefix())
    done.lines, done.failed, done.unconverged = runner.written, runner.failed, runner.unconverged
    if columns is not None:
        done.table = lines_table(lines, part.label, columns)
    elif data:
        done.data = data
    return done


def _settings(backend, engine: DaskOptions):
    """--device and --dtype for this task: the settings live in a ContextVar, so a worker
    thread's choice is its own and ends with the block."""
    return backend.using(engine.device, engine.dtype)


def _keep(done: Done, keep, runner, chunk, n: int) -> None:
    """The first ``n`` lines of an evaluated chunk kept, ``keep(lines)`` (with --fail-fast,
    up to the first failed one: then ``done.stopped``)."""
    if runner.opts.fail_fast and any(chunk.failed[:n]):
        n = chunk.failed.index(True) + 1
        done.stopped = True
    keep(chunk.out[:n])
    runner.count(chunk, n)
    runner.current = None
    if n:
        done.last = chunk.lines[n - 1]


def _evaluated_text(part: Part, runner, reader):
    for numbers, texts, joined in reader:
        if not numbers:
            continue
        chunk = runner.current = batch_engine.Chunk(numbers)
        yield (
            chunk,
            batch_engine.evaluate_chunk(
                runner, chunk, part.fmt, texts, joined, part.names, part.skip
            ),
        )


def _encoded(text: str) -> bytes:
    """Lines joined as the local engine's ``_Sink.write_lines`` writes them (a partition's
    bytes are its chunks' bytes one after the other: each ends with its line end)."""
    return (text + "\n").encode("utf-8", "backslashreplace")


def labelled(lines: list, label: str | None) -> str:
    """The lines as one text; with several files each starts with its ``"file"``."""
    if label is None:
        return "\n".join(lines)
    head = '{"file": ' + json.dumps(label, ensure_ascii=False) + ", "
    return "\n".join(head + line[1:] for line in lines)


# ---------------------------------------------------------------------------
# Parquet output
# ---------------------------------------------------------------------------

_PLAIN_KEYS = frozenset({"file", "line", "expr", "value", "shape", "grad"})
_WORDS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _number(v):
    """A JSON number of the output (or "nan", "inf", "-inf") as a float; else None."""
    if type(v) is float or (type(v) is int):
        return float(v)
    if type(v) is str:
        return _WORDS.get(v)
    return None


def _schema(columns: dict):
    import pyarrow as pa

    fields = [pa.field("line", pa.int64())]
    if columns["file"]:
        fields.append(pa.field("file", pa.string()))
    fields += [pa.field("expr", pa.string()), pa.field("value", pa.float64())]
    fields += [pa.field(f"grad_{name}", pa.float64()) for name in columns["grad"]]
    fields += [pa.field("error", pa.string()), pa.field("document", pa.string())]
    return pa.schema(fields)


def lines_table(lines: list, label: str | None, columns: dict):
    """A partition's output lines as Parquet columns (README, "batch"): ``line``, ``file``
    (several files), ``expr``, ``value``, ``grad_<name>`` per gradient column, ``error`` (the
    kind), ``document`` (the line's JSON text where the other columns do not hold all of it)."""
    import pyarrow as pa

    try:
        import orjson

        loads = orjson.loads
    except ImportError:
        loads = json.loads
    grads = columns["grad"]
    want = set(grads)
    data: dict = {"line": [], "expr": [], "value": [], "error": [], "document": []}
    for name in grads:
        data[f"grad_{name}"] = []
    for text in lines:
        doc = loads(text)
        data["line"].append(doc.get("line"))
        expr = doc.get("expr")
        data["expr"].append(expr if type(expr) is str else None)
        value = _number(doc.get("value"))
        data["value"].append(value)
        grad = doc.get("grad")
        grad = grad if type(grad) is dict else {}
        numbers = {k: _number(v) for k, v in grad.items()}
        for name in grads:
            data[f"grad_{name}"].append(numbers.get(name))
        error = doc.get("error")
        data["error"].append(error.get("kind") if type(error) is dict else None)
        plain = (
            error is None
            and _PLAIN_KEYS.issuperset(doc)
            and doc.get("shape") == []
            and value is not None
            and ("grad" not in doc or (set(grad) == want and None not in numbers.values()))
        )
        data["document"].append(None if plain else labelled([text], label))
    if columns["file"]:
        data["file"] = [label] * len(lines)
    schema = _schema(columns)
    return pa.table({f.name: data[f.name] for f in schema}, schema=schema)


def gradient_columns(program, opts: BatchOptions, files: int) -> dict:
    """The Parquet output's columns: a ``grad_<name>`` for each name of --wrt, else each
    variable of --expr (op grad); none for op eval or without --expr."""
    names: list = []
    if opts.op == "grad":
        if opts.wrt:
            names = list(opts.wrt)
        elif program is not None:
            names = list(program.inputs)
    return {"grad": names, "file": files > 1}


class ParquetSink:
    """``-o DIR.parquet``: a folder of Parquet files ``part-00000.parquet``, ... (one per
    partition with lines, in input order), opened by the one output policy
    (``files.open_target`` with ``parts``): written into a temporary folder beside it,
    renamed over DIR.parquet at the end (an existing one is replaced only when it holds
    nothing but such part files); ``abort`` removes it."""

    PART = re.compile(r"part-\d+\.parquet\Z")

    def __init__(self, path: str, pq, columns: dict):
        self.pq = pq
        self.columns = columns
        self.path = path.rstrip("/" + os.sep) or path
        self.parts = 0
        try:
            self.folder = files.open_target(self.path, parts=self.PART)
        except files.Unwritable as exc:
            raise options.UsageError(_unwritable(path, exc)) from None

    def write(self, table) -> None:
        target = os.path.join(self.folder.tmp, f"part-{self.parts:05d}.parquet")
        try:
            self.pq.write_table(table, target)
        except OSError as exc:
            raise batch_io.OutputError(f"cannot write {self.path!r}: {exc}") from None
        self.parts += 1

    def commit(self) -> None:
        try:
            if self.parts == 0:  # no lines at all: one empty part, so the folder reads back
                self.write(_schema(self.columns).empty_table())
            self.folder.commit()
        except OSError as exc:
            raise batch_io.OutputError(f"cannot write {self.path!r}: {exc}") from None

    def abort(self) -> None:
        self.folder.abort()


def _unwritable(path: str, exc) -> str:
    """``-o DIR.parquet``'s usage error for a folder ``files.open_target`` refused."""
    if exc.problem == "file":
        return (
            f"-o: {path!r} exists and is not a folder; Parquet output is a folder of "
            f"part files: remove it or choose another name"
        )
    if exc.problem == "others":
        return (
            f"-o: the folder {path!r} holds other files than part-N.parquet "
            f"({exc.reason!r}); it is replaced only when it holds nothing else"
        )
    return f"-o: cannot write {path!r}: {exc.reason}"
