"""The ``batch`` command's Dask engine (``--engine dask``): the same lines out, from a cluster.

What runs where:

* The client (this process) expands the input (a file, a glob, or a folder: its CSV, JSONL
  and Parquet files, in name order with numbers compared as numbers, ``part.2`` before
  ``part.10``), reads every CSV header and Parquet schema and checks them against ``--expr``
  as the local engine does (usage errors, exit 2, before any work), starts or joins the
  cluster, and writes the output in input order.
* A text file (CSV, JSONL) is cut into byte ranges of about ``--partition-size`` bytes, each
  moved to the next line start (``\\n``, ``\\r\\n`` or a lone ``\\r`` ends a line, as the
  local engine's reader splits them).  A first pass on the workers counts the line ends of
  each range; their running sums give each range the number of its first line, so that
  every line keeps the number the local engine gives it.  A Parquet file is cut at its row
  groups; its rows are numbered as the same table written as CSV would be (header line 1,
  the first row line 2), so a CSV file and its Parquet copy give the same output.
* Each partition is one task on a worker: it reads its range (or row group) itself and runs
  the local engine's own code on it, chunk by chunk (``--chunk-size``):
  :func:`autograd_cli.cli.batch._chunks` to read the lines (line limits included),
  :func:`~autograd_cli.cli.batch._evaluate_chunk` to parse and evaluate them (the library's
  vectorised :mod:`autograd_cli.core.rows`), the same record and template writers.  It returns
  the partition's JSONL text (or, for ``-o DIR.parquet``, an Arrow table of it).
* The client submits at most two partitions per worker thread beyond the first one not yet
  written (bounded memory), and writes each partition when it and all before it are done.

The output is byte for byte the local engine's for one input file; with several files each
line also says ``"file"`` (the path as the glob or the folder listing gives it), first in
the document, and ``"line"`` counts within that file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import glob
import json
import logging
import math
import os
import re
import shutil
import signal
import stat
import sys
import tempfile
import threading
import time
from dataclasses import dataclass

from . import batch as local
from . import options
from .batch import BatchOptions, Summary
from .status import ExitCode, Terminated, TimedOut

INSTALL_HINT = "pip install 'autograd-cli[dask]'"
#: ``--scheduler in-process``: a local cluster of threads in this process (tests, debugging)
IN_PROCESS = "in-process"
PARQUET_EXTENSIONS = (".parquet", ".pq")
#: the automatic partition size stays within these bounds (bytes of text input)
MIN_PARTITION_BYTES = 1 << 20
MAX_PARTITION_BYTES = 16 << 20
#: partitions submitted beyond the first one not yet written, per worker thread
WINDOW_PER_THREAD = 2
_POLL = 0.05  # seconds between looks at the stop signals and the --timeout
#: after the --timeout, how long the client waits for the running tasks' finished lines
TIMEOUT_GRACE = 1.0
_READ = 1 << 20
#: a line start is looked for this far past a partition boundary; a line longer than this
#: is a runaway line (the local engine stops reading there too)
_SCAN_LIMIT = local.MAX_RUNAWAY_BYTES + local.MAX_LINE_BYTES
#: set on a stop (Ctrl-C, --timeout): in-process workers stop at their next check
_STOP = threading.Event()


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
class _Part:
    """One partition: a byte range of a text file, or a row group of a Parquet file."""

    index: int
    path: str
    fmt: str  # csv, jsonl or parquet
    start: int  # text: a byte offset (moved to a line start by _measure); parquet: the group
    end: int  # text: the end offset (likewise); parquet: rows in the group
    first_line: int | None = None  # the number of its first line, once known
    names: list | None = None  # CSV and Parquet: the columns
    skip: frozenset = frozenset()  # the columns the expression does not use
    label: str | None = None  # the "file" of every line, when there are several files
    weight: float = 0.0  # its share of the input's bytes (progress)
    range: tuple | None = None  # text: (first byte, end byte, line ends), from _measure


@dataclass
class _Done:
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


class _WorkerStop:
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
        return _STOP.is_set() or (self.deadline is not None and time.time() >= self.deadline)


def engine_options(engine, scheduler, workers, partition_size, device, dtype, memory):
    """``batch``'s --engine and its settings (the command line's values): None for the
    local engine, else the ``DaskOptions``; a bad one is a usage error."""
    if engine not in ("local", "dask"):
        raise options.UsageError(f"--engine must be local or dask, not {engine!r}")
    if engine == "local":
        for given, name in (
            (scheduler, "--scheduler"),
            (workers, "--workers"),
            (partition_size, "--partition-size"),
        ):
            if given is not None:
                raise options.UsageError(f"{name} applies to --engine dask")
        return None
    if workers is not None and workers < 1:
        raise options.UsageError(f"--workers must be at least 1, not {workers}")
    if workers is not None and scheduler not in (None, IN_PROCESS):
        raise options.UsageError("--workers applies to a local cluster, not to --scheduler ADDRESS")
    size = None
    if partition_size is not None:
        from ..core import limits
        from ..core.errors import BadValueError

        try:
            size = limits.parse_size(partition_size, "--partition-size")
        except BadValueError as exc:
            raise options.UsageError(exc.message) from None
        if not 1 <= size < math.inf:
            raise options.UsageError(
                f"--partition-size must be at least 1 byte, not {partition_size!r}"
            )
        size = int(size)
    return DaskOptions(scheduler, workers, size, device, dtype, memory)


def runner(engine: DaskOptions):
    """``run_batch``'s stand-in: ``runner(engine)(opts)`` is ``run_dask(opts, engine)``."""
    return functools.partial(run_dask, engine=engine)


# ---------------------------------------------------------------------------
# Imports on this path only
# ---------------------------------------------------------------------------


def _import_dask():
    try:
        import dask  # noqa: F401
        import distributed
    except ImportError as exc:
        raise options.UsageError(
            f"--engine dask needs Dask and distributed ({exc.name or exc} is not installed): "
            f"{INSTALL_HINT}"
        ) from None
    return distributed


def _import_parquet(what: str):
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet as pq
    except ImportError:
        raise options.UsageError(f"{what} needs pyarrow: {INSTALL_HINT}") from None
    return pq


# ---------------------------------------------------------------------------
# The input: files, formats, headers
# ---------------------------------------------------------------------------


def _natural(path: str) -> list:
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", path)]


def _known(name: str) -> bool:
    ext = os.path.splitext(name)[1].lower()
    return ext in local._EXTENSIONS or ext in PARQUET_EXTENSIONS


def _expand(source: str, given_format: str | None) -> list[str]:
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


def _format_of(path: str, given: str | None) -> str:
    if given is not None:
        fmt = given.lower()
        if fmt not in local.FORMATS + ("parquet",):
            raise options.UsageError(f"--format must be jsonl, csv or parquet, not {given!r}")
        return fmt
    ext = os.path.splitext(path)[1].lower()
    if ext in PARQUET_EXTENSIONS:
        return "parquet"
    return local._EXTENSIONS.get(ext, "jsonl")


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
        k = local._first_break(data)
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


def _measure(path: str, start: int, end: int) -> tuple:
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


def _csv_columns(path: str, program, opts: BatchOptions, warned: dict):
    """A CSV file's header checked against the expression, as the local engine checks it:
    (names, unused columns, byte offset of the first data line, its number); None for a
    file without a header (no lines)."""
    source = local._Input(path)
    try:
        header, header_line = local._read_header(source, _WorkerStop(stoppable=False))
    finally:
        source.close()
    if header is None:
        return None
    names = local._csv_header(header)
    skip = _check_columns(program, names, opts, warned)
    return names, skip, _skip_lines(path, header_line), header_line + 1


def _check_columns(program, names: list, opts: BatchOptions, warned: dict) -> frozenset:
    """``_check_csv_program`` once per distinct set of columns (its warning said once)."""
    key = tuple(names)
    if key not in warned:
        warned[key] = local._check_csv_program(program, names, opts)
    return warned[key]


def _parquet_columns(pq, path: str, program, opts: BatchOptions, warned: dict):
    """A Parquet file's columns checked like a CSV header: (names, unused, row counts of its
    row groups).  A column whose name is not a variable name is never used: ignored."""
    try:
        meta = pq.ParquetFile(path).metadata
    except Exception as exc:  # noqa: BLE001 - pyarrow's errors: not a Parquet file
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


class _TextReader:
    """A text partition's lines as the local engine reads them: ``chunks()`` yields
    ``_chunks``' (numbers, texts, joined), lines cut at MAX_LINE_BYTES; ``limits.runaway``
    is then the line that ran away, if one did."""

    def __init__(self, part: _Part, size: int, stop):
        p0, p1, _ = part.range
        self.part, self.size, self.stop = part, size, stop
        self.limits = local._LineLimit(_Range(part.path, p0, p1), close_source=True)
        self.limits.breaks = part.first_line - 1  # its lines are numbered from first_line
        self.stream = local._Input._text(self.limits, "utf-8-sig" if p0 == 0 else "utf-8")

    def chunks(self):
        try:
            yield from local._chunks(
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
        from . import jsonout

        return jsonout.dumps(list(value))
    return str(value)


def _parquet_chunks(part: _Part, runner, size: int):
    """(chunk, lines to write) of a Parquet row group, evaluated as CSV rows are."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    opts = runner.opts
    used = [n for n in part.names if n not in part.skip]
    table = pq.ParquetFile(part.path).read_row_group(part.start, columns=used)
    count = table.num_rows
    plain = local.batchable(opts.op, opts.order) and all(
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
        chunk = runner.current = local._Chunk(list(range(part.first_line + a, part.first_line + b)))
        if plain:
            group = local._column_group(opts, {n: c[a:b] for n, c in columns.items()}, b - a)
            n = local._run_chunk(runner, chunk, [], [group], None)
        else:
            rows = [[(cells.get(n) or blank)[i] for n in part.names] for i in range(a, b)]
            tasks, stop_at = local._parse_each(
                chunk, rows, opts, local._csv_fields, part.names, opts, part.skip
            )
            n = local._run_chunk(runner, chunk, tasks, [], stop_at)
        yield chunk, n


def _evaluate_part(part: _Part, opts: BatchOptions, engine: DaskOptions, deadline, columns):
    """One partition, evaluated on a worker by the local engine's code: a ``_Done``.

    Stopped by the deadline (or, in process, the client), it returns the lines finished
    so far, in order (``finished`` False, ``last``: the number of the last one).
    ``columns``: for -o DIR.parquet, the gradient columns (else None: JSONL text)."""
    from ..core import backend, limits

    stop = _WorkerStop(deadline)
    done = _Done()
    runner = local._Runner(opts, stop)
    lines: list = []  # -o DIR.parquet: the output lines, made a table at the end
    data = bytearray()  # else their bytes, chunk by chunk (the lines' text not kept)

    def keep(kept: list) -> None:
        if columns is not None:
            lines.extend(kept)
        elif kept:
            data.extend(_encoded(_labelled(kept, part.label)))

    try:
        with _settings(backend, engine), limits.using(engine.max_memory):
            if part.fmt == "parquet":
                evaluated = _parquet_chunks(part, runner, opts.chunk_size)
                reader = None
            else:
                reader = _TextReader(part, opts.chunk_size, stop)
                evaluated = _evaluated_text(part, runner, reader.chunks())
            for chunk, n in evaluated:
                _keep(done, keep, runner, chunk, n)
                if done.stopped:
                    break
            if reader is not None and not done.stopped:
                done.runaway = reader.limits.runaway
    except local._Stop:
        done.finished = False
        chunk = runner.current
        if chunk is not None:
            _keep(done, keep, runner, chunk, chunk.done_prefix())
    done.lines, done.failed, done.unconverged = runner.written, runner.failed, runner.unconverged
    if columns is not None:
        done.table = _table(lines, part.label, columns)
    elif data:
        done.data = data
    return done


def _settings(backend, engine: DaskOptions):
    """--device and --dtype on a worker; in process, where they are in force already,
    left alone (``backend.using`` is process-wide: a thread must not restore them late)."""
    if (backend.device, backend.default_dtype.__name__) == (engine.device, engine.dtype):
        return contextlib.nullcontext()
    return backend.using(engine.device, engine.dtype)


def _keep(done: _Done, keep, runner, chunk, n: int) -> None:
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


def _evaluated_text(part: _Part, runner, reader):
    for numbers, texts, joined in reader:
        if not numbers:
            continue
        chunk = runner.current = local._Chunk(numbers)
        yield (
            chunk,
            local._evaluate_chunk(runner, chunk, part.fmt, texts, joined, part.names, part.skip),
        )


def _encoded(text: str) -> bytes:
    """Lines joined as the local engine's ``_Sink.write_lines`` writes them (a partition's
    bytes are its chunks' bytes one after the other: each ends with its line end)."""
    return (text + "\n").encode("utf-8", "backslashreplace")


def _labelled(lines: list, label: str | None) -> str:
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


def _table(lines: list, label: str | None, columns: dict):
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
        data["document"].append(None if plain else _labelled([text], label))
    if columns["file"]:
        data["file"] = [label] * len(lines)
    schema = _schema(columns)
    return pa.table({f.name: data[f.name] for f in schema}, schema=schema)


def _gradient_columns(program, opts: BatchOptions, files: int) -> dict:
    """The Parquet output's columns: a ``grad_<name>`` for each name of --wrt, else each
    variable of --expr (op grad); none for op eval or without --expr."""
    names: list = []
    if opts.op == "grad":
        if opts.wrt:
            names = list(opts.wrt)
        elif program is not None:
            names = list(program.inputs)
    return {"grad": names, "file": files > 1}


class _ParquetSink:
    """``-o DIR.parquet``: a folder of Parquet files ``part-00000.parquet``, ... (one per
    partition with lines, in input order).  Written into a temporary folder beside it,
    renamed over DIR.parquet at the end (an existing one is replaced only when it holds
    nothing but such part files); ``abort`` removes it."""

    PART = re.compile(r"part-\d+\.parquet\Z")

    def __init__(self, path: str, pq, columns: dict):
        self.pq = pq
        self.columns = columns
        self.path = path.rstrip("/" + os.sep) or path
        self.parts = 0
        self.tmp = None
        if os.path.lexists(self.path):
            if not os.path.isdir(self.path) or os.path.islink(self.path):
                raise options.UsageError(
                    f"-o: {path!r} exists and is not a folder; Parquet output is a folder of "
                    f"part files: remove it or choose another name"
                )
            others = [n for n in os.listdir(self.path) if not self.PART.match(n)]
            if others:
                raise options.UsageError(
                    f"-o: the folder {path!r} holds other files than part-N.parquet "
                    f"({others[0]!r}); it is replaced only when it holds nothing else"
                )
        parent, base = os.path.split(os.path.abspath(self.path))
        try:
            self.tmp = tempfile.mkdtemp(prefix=f".{base}.", suffix=".tmp", dir=parent)
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(self.tmp, 0o777 & ~umask)  # as `mkdir` would make it (mkdtemp: 0700)
        except OSError as exc:
            raise options.UsageError(f"-o: cannot write {path!r}: {exc.strerror or exc}") from None

    def write(self, table) -> None:
        target = os.path.join(self.tmp, f"part-{self.parts:05d}.parquet")
        try:
            self.pq.write_table(table, target)
        except OSError as exc:
            raise local._OutputError(f"cannot write {self.path!r}: {exc}") from None
        self.parts += 1

    def commit(self) -> None:
        try:
            if self.parts == 0:  # no lines at all: one empty part, so the folder reads back
                self.write(_schema(self.columns).empty_table())
            old = None
            if os.path.isdir(self.path):
                old = tempfile.mkdtemp(
                    prefix=f".{os.path.basename(self.path)}.old.",
                    dir=os.path.dirname(os.path.abspath(self.path)),
                )
                os.replace(self.path, os.path.join(old, "x"))
            os.replace(self.tmp, self.path)
            self.tmp = None
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
        except OSError as exc:
            raise local._OutputError(f"cannot write {self.path!r}: {exc}") from None

    def abort(self) -> None:
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None


# ---------------------------------------------------------------------------
# The cluster
# ---------------------------------------------------------------------------


@contextlib.contextmanager
def _cluster(distributed, engine: DaskOptions):
    """A connected ``distributed.Client``: to ``engine.scheduler``, or to a new local cluster
    (processes, one thread each; IN_PROCESS: threads here), closed on leaving."""
    cluster = None
    client = None
    quiet = logging.getLogger("distributed")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        if engine.scheduler not in (None, IN_PROCESS):
            try:
                client = distributed.Client(engine.scheduler, timeout="10s")
            except (OSError, TimeoutError, ValueError, MemoryError) as exc:
                # MemoryError: something that is not a Dask scheduler answered, and its first
                # bytes read as the length of an impossible frame
                if isinstance(exc, MemoryError):
                    exc = "it does not speak Dask's protocol"  # type: ignore[assignment]
                raise options.UsageError(
                    f"--scheduler: cannot reach a Dask scheduler at {engine.scheduler!r}: {exc}"
                ) from None
        else:
            workers = engine.workers or os.cpu_count() or 1
            in_process = engine.scheduler == IN_PROCESS
            cluster = distributed.LocalCluster(
                n_workers=1 if in_process else workers,
                threads_per_worker=workers if in_process else 1,
                processes=not in_process,
                dashboard_address=":0",  # any free port (its HTTP server always runs)
                silence_logs=logging.ERROR,
            )
            client = distributed.Client(cluster)
            if not in_process:
                # Ctrl-C at a terminal reaches the whole process group: the workers ignore
                # it from here on (this process answers it, then closes the cluster).
                with contextlib.suppress(Exception):
                    client.register_plugin(_worker_plugin(distributed)(), name="autograd-cli")
        yield client
    finally:
        try:
            if client is not None:
                client.close()
            if cluster is not None:
                cluster.close()
        finally:
            quiet.setLevel(level)


def _ignore_interrupt(worker=None) -> None:
    """On a worker process: SIGINT ignored (its main thread runs the worker's event loop)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _worker_plugin(distributed):
    """A WorkerPlugin class whose ``setup`` is ``_ignore_interrupt`` (also on a worker the
    nanny restarts)."""

    class IgnoreInterrupt(distributed.WorkerPlugin):
        def setup(self, worker):
            _ignore_interrupt(worker)

    return IgnoreInterrupt


def _threads(client) -> int:
    try:
        return max(1, sum(client.nthreads().values()))
    except Exception:  # noqa: BLE001 - a scheduler without workers yet
        return 1


# ---------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------


class _Run:
    """The client's side of one run: partitions, futures, the sink, the counts."""

    def __init__(self, opts: BatchOptions, engine: DaskOptions):
        self.opts = opts
        self.engine = engine
        self.parts: list[_Part] = []
        self.written = 0
        self.failed = 0
        self.unconverged = 0
        self.stopped = False
        self.error: str | None = None
        self.next = 0  # the first partition not yet written
        self.futures: dict = {}  # partition index -> its _evaluate_part future
        self.measures: dict = {}  # partition index -> its _measure future
        self.columns = None  # -o DIR.parquet: the gradient columns
        self.deadline = None  # time.monotonic() of the --timeout
        self.wall_deadline = None  # time.time() of the same, for the workers
        self.interrupt = None
        self.sink = None
        self.progress = None

    # ---- waiting ----------------------------------------------------------------------
    def check(self) -> None:
        if self.interrupt is not None and self.interrupt.requested:
            raise local._Stop()
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise TimedOut(self.opts.timeout)

    def wait(self, future) -> None:
        """Until ``future`` is done, looking at stop signals and the deadline meanwhile."""
        from distributed import wait

        while not future.done():
            self.check()
            with contextlib.suppress(TimeoutError):
                wait([future], timeout=_POLL)
        self.check()

    # ---- writing ----------------------------------------------------------------------
    def write(self, part: _Part, done: _Done) -> None:
        """A finished partition's lines written and counted (no stop in between)."""
        saved, self.interrupt.state = self.interrupt.state, "writing"
        if done.table is not None:
            if done.lines:
                self.sink.write(done.table)
        elif done.data is not None:
            self.sink.write_data(done.data)
        self.written += done.lines
        self.failed += done.failed
        self.unconverged += done.unconverged
        self.interrupt.state = saved

    def write_records(self, part: _Part, docs: list) -> None:
        """Error records (after a --timeout) written and counted as failed lines."""
        if self.columns is not None:
            self.sink.write(_table(docs, part.label, self.columns))
        else:
            self.sink.write_lines([_labelled(docs, part.label)])
        self.written += len(docs)
        self.failed += len(docs)


def run_dask(opts: BatchOptions, engine: DaskOptions) -> Summary:
    """``batch --engine dask``: the output written; returns what happened (``Summary``)."""
    distributed = _import_dask()
    local._check_options(opts)
    files = _expand(opts.source, opts.input_format)
    formats = [_format_of(path, opts.input_format) for path in files]
    parquet_out = opts.output not in (None, "-") and opts.output.rstrip(
        "/" + os.sep
    ).lower().endswith(PARQUET_EXTENSIONS)
    pq = None
    if "parquet" in formats:
        pq = _import_parquet("Parquet input")
    if parquet_out:
        pq = _import_parquet(f"-o {opts.output!r} (Parquet output)")
    tabular = [fmt for fmt in formats if fmt != "jsonl"]
    for fmt in sorted(set(formats)):
        local._check_settings(opts, "csv" if fmt == "parquet" else fmt)
    program = None
    if opts.expr is not None:
        program, error = local._Programs().get(opts.expr)
        if error is not None:
            raise error
    elif tabular:
        what = "CSV" if "csv" in tabular else "Parquet"
        raise options.UsageError(f"batch: {what} input needs --expr (and --op, default grad)")
    for fmt in sorted(set(formats)):
        local._check_command_line(program, opts, "csv" if fmt == "parquet" else fmt)
    run = _Run(opts, engine)
    _plan(run, files, formats, program, pq)
    if opts.output not in (None, "-"):
        for path in files:
            with contextlib.suppress(OSError):
                if os.path.samefile(opts.output, path):
                    raise options.UsageError(
                        f"-o: {opts.output!r} is an input file; write the output to another file"
                    )
    if parquet_out:
        run.columns = _gradient_columns(program, opts, len(files))
    code = ExitCode.OK
    _STOP.clear()
    interrupt = local._Interrupt()
    run.interrupt = interrupt
    try:
        with interrupt:
            interrupt.state = "writing"
            if parquet_out:
                run.sink = _ParquetSink(opts.output, pq, run.columns)
            else:
                run.sink = local._Sink(opts.output, None, interrupt)
            interrupt.state = "working"
            if opts.timeout:
                run.deadline = time.monotonic() + opts.timeout
                run.wall_deadline = time.time() + opts.timeout
            try:
                with _cluster(distributed, engine) as client:
                    try:
                        _execute(run, client)
                    except (local._Stop, KeyboardInterrupt, Terminated, TimedOut) as exc:
                        _STOP.set()
                        interrupt.state = "writing"
                        if isinstance(exc, TimedOut):  # every line read gets its line: exit 1
                            run.error = _after_timeout(run)
                            code = ExitCode.EVALUATION_ERROR
                        else:  # the partitions finished by now, in order
                            _drain(run)
                            if isinstance(exc, Terminated) and interrupt.signum is None:
                                code = exc.exit_code
                            else:
                                code = interrupt.exit_code
                        _cancel(run, client)
                    else:
                        _cancel(run, client)
            finally:
                _STOP.set()  # in-process workers still busy: stop at their next check
            interrupt.state = "writing"
            if run.progress is not None:
                run.progress.stop()
            run.sink.commit()
            if interrupt.requested:
                code = interrupt.exit_code
    except local._OutputError as exc:
        if run.progress is not None:
            run.progress.stop()
        run.sink.abort()
        run.error = str(exc)
        code = ExitCode.EVALUATION_ERROR
    except BaseException:
        if run.progress is not None:
            run.progress.stop()
        if run.sink is not None:
            run.sink.abort()
        raise
    if code == ExitCode.OK and (run.failed or run.error):
        code = ExitCode.EVALUATION_ERROR
    return Summary(code, run.written, run.failed, run.stopped, run.error, run.unconverged)


def _plan(run: _Run, files: list, formats: list, program, pq) -> None:
    """The partitions of every file, headers and schemas checked (usage errors now)."""
    opts = run.opts
    warned: dict = {}
    several = len(files) > 1
    for path, fmt in zip(files, formats):
        label = path if several else None
        if fmt == "parquet":
            names, skip, rows = _parquet_columns(pq, path, program, opts, warned)
            size = os.path.getsize(path)
            total = sum(rows) or 1
            line = 2  # as the same table written as CSV: the header is line 1
            for group, count in enumerate(rows):
                if count:
                    run.parts.append(
                        _Part(
                            len(run.parts),
                            path,
                            fmt,
                            group,
                            count,
                            line,
                            names,
                            skip,
                            label,
                            size * count / total,
                        )
                    )
                line += count
            continue
        names = None
        skip: frozenset = frozenset()
        start, first = 0, 1
        if fmt == "csv":
            found = _csv_columns(path, program, opts, warned)
            if found is None:
                continue
            names, skip, start, first = found
        size = os.path.getsize(path)
        if start >= size:
            continue
        part = _Part(len(run.parts), path, fmt, start, size, first, names, skip, label)
        run.parts.append(part)


def _split(run: _Run, threads: int) -> None:
    """Cut each text file's part into ranges of --partition-size (default: from the total
    size and the cluster's threads)."""
    texts = [p for p in run.parts if p.fmt != "parquet"]
    size = run.engine.partition_size
    if size is None:
        total = sum(p.end - p.start for p in texts)
        size = min(MAX_PARTITION_BYTES, max(MIN_PARTITION_BYTES, total // (4 * threads) + 1))
    parts = []
    for p in run.parts:
        if p.fmt == "parquet":
            parts.append(p)
            continue
        bounds = list(range(p.start, p.end, max(1, size))) + [p.end]
        for k, (a, b) in enumerate(zip(bounds, bounds[1:])):
            parts.append(
                dataclasses.replace(
                    p, start=a, end=b, weight=b - a, first_line=p.first_line if k == 0 else None
                )
            )
    for i, p in enumerate(parts):
        p.index = i
    run.parts = parts


def _execute(run: _Run, client) -> None:
    threads = _threads(client)
    _split(run, threads)
    opts = run.opts
    show = opts.progress
    total = sum(p.weight for p in run.parts)
    if show is None:
        show = bool(
            total >= local.PROGRESS_MIN_BYTES and sys.stderr is not None and sys.stderr.isatty()
        )
    run.progress = local._Progress(show, int(total) or None)
    # Pass 1: each text range moved to line starts and its line ends counted, on the workers.
    run.measures = {
        p.index: client.submit(_measure, p.path, p.start, p.end, pure=False)
        for p in run.parts
        if p.fmt != "parquet"
    }
    previous = None
    for p in run.parts:
        if p.fmt == "parquet":
            continue
        run.wait(run.measures[p.index])
        p.range = run.measures[p.index].result()
        _number_from(p, previous)
        previous = p
    # Pass 2: the partitions evaluated, at most `window` beyond the first one not written.
    window = WINDOW_PER_THREAD * threads
    parts = [p for p in run.parts if p.fmt == "parquet" or p.range[1] > p.range[0]]
    for i, p in enumerate(parts):
        p.index = i
    run.parts = parts
    run.measures = {}
    done_weight = 0.0
    submitted = 0
    while run.next < len(parts):
        while submitted < len(parts) and submitted < run.next + window:
            run.futures[submitted] = client.submit(
                _evaluate_part,
                parts[submitted],
                opts,
                run.engine,
                run.wall_deadline,
                run.columns,
                pure=False,
            )
            submitted += 1
        future = run.futures[run.next]
        run.wait(future)
        try:
            done = future.result()
        except Exception as exc:  # noqa: BLE001 - a worker's failure ends the run: exit 1
            part = parts[run.next]
            run.error = (
                f"the Dask cluster failed on {part.path!r} (from line {part.first_line}): "
                f"{type(exc).__name__}: {exc}"
            )
            return
        if not done.finished:  # stopped at the deadline: the next look says so
            run.check()
            raise TimedOut(opts.timeout)
        part = parts[run.next]
        run.write(part, done)
        del run.futures[run.next]
        run.next += 1
        done_weight += part.weight
        run.progress.update(int(done_weight), run.written)
        if done.stopped:
            run.stopped = True
            return
        if done.runaway is not None:
            where = f"{part.path}: " if part.label is not None else ""
            run.error = where + local._runaway_message(done.runaway, run.written)
            return


def _number_from(part: _Part, previous: _Part | None) -> None:
    """A text partition's first line number: after the lines of the one before it (the
    first partition of a file has its own)."""
    if part.first_line is None:
        part.first_line = previous.first_line + previous.range[2]


def _drain(run: _Run) -> None:
    """After a stop signal: the partitions already finished that follow those written,
    written in order (up to the first one not finished)."""
    while run.next < len(run.parts) and run.next in run.futures:
        future = run.futures[run.next]
        if future.status != "finished":
            return
        try:
            done = future.result()
        except Exception:  # noqa: BLE001 - its failure is not reported after a stop
            return
        if not done.finished:
            return
        run.write(run.parts[run.next], done)
        run.next += 1
        if done.stopped or done.runaway is not None:
            run.stopped = done.stopped
            return


def _cancel(run: _Run, client) -> None:
    futures = list(run.futures.values()) + list(run.measures.values())
    if futures:
        with contextlib.suppress(Exception):
            client.cancel(futures)


def _after_timeout(run: _Run) -> str:
    """The --timeout ran out: after the partitions written, in input order, each next
    partition's lines: its own where its task had finished, else an error record of kind
    ``limit`` for each (the lines read here), until TIMEOUT_TAIL_LINES lines have such a
    record; the lines after those are not reached (no record), as with the local engine.
    Returns the message for stderr."""
    seconds = run.opts.timeout
    message = f"not finished before the --timeout of {seconds:g} s"
    unfinished = 0
    last = None  # (path, number) of the last line given a record
    cut = False  # lines were left without a record
    stop = _WorkerStop(stoppable=False)
    previous = None
    grace = time.monotonic() + TIMEOUT_GRACE
    from distributed import wait

    for index in range(run.next, len(run.parts)):
        part = run.parts[index]
        if part.fmt != "parquet":
            if part.range is None:
                part.range = _measure(part.path, part.start, part.end)
            if part.first_line is None and previous is not None:
                _number_from(part, previous)
            previous = part
        future = run.futures.get(index)
        done = None
        if future is not None and not future.done() and time.monotonic() < grace:
            # the workers stop at the same deadline: what they finished comes back soon
            with contextlib.suppress(Exception):
                wait([future], timeout=max(0.0, grace - time.monotonic()))
        if future is not None and future.status == "finished":
            with contextlib.suppress(Exception):
                done = future.result()
        after = None  # the lines up to this one are written
        if done is not None:
            run.write(part, done)
            if done.stopped or done.runaway is not None:
                break
            if done.finished:
                continue
            after = done.last
        if unfinished >= local.TIMEOUT_TAIL_LINES:
            cut = True
            break
        for numbers, docs in _limit_records(part, message, stop, after):
            run.write_records(part, docs)
            unfinished += len(docs)
            last = (part.path, numbers[-1])
            if unfinished >= local.TIMEOUT_TAIL_LINES:
                break
    note = ""
    if cut and last is not None:
        where = f" of {last[0]!r}" if run.parts[0].label is not None else ""
        note = (
            f"; reading stopped after line {last[1]}{where}: the lines after it were not "
            f"reached (no record)"
        )
    text = f"{run.written} line(s) written"
    if unfinished:
        text += f", {unfinished} of them not finished (an error record of kind limit each)"
    return f"stopped after the --timeout of {seconds:g} s: {text}{note}"


def _limit_records(part: _Part, message: str, stop, after: int | None = None):
    """(line numbers, their ``limit`` records) of a partition's lines after line ``after``
    (None: all), chunk by chunk."""
    size = 65536
    if part.fmt == "parquet":
        first = part.first_line if after is None else after + 1
        last = part.first_line + part.end  # past the last row
        for a in range(first, last, size):
            numbers = list(range(a, min(last, a + size)))
            yield numbers, local._limit_docs(numbers, numbers, message)
        return
    if part.first_line is None:
        return
    for numbers, texts, _ in _TextReader(part, size, stop).chunks():
        if after is not None and numbers and numbers[0] <= after:
            keep = [i for i, n in enumerate(numbers) if n > after]
            numbers, texts = [numbers[i] for i in keep], [texts[i] for i in keep]
        if numbers:
            yield numbers, local._limit_docs(numbers, texts, message)
