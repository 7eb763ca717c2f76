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
  :func:`autograd_cli.cli.batch.io.read_chunks` to read the lines (line limits included),
  :func:`~autograd_cli.cli.batch.engine.evaluate_chunk` to parse and evaluate them (the
  library's vectorised :mod:`autograd_cli.core.rows`), the same record and template writers
  (:mod:`.dask_parts`).  It returns the partition's JSONL text (or, for ``-o
  DIR.parquet``, an Arrow table of it).
* The client submits at most two partitions per worker thread beyond the first one not yet
  written (bounded memory), and writes each partition when it and all before it are done.

The output is byte for byte the local engine's for one input file; with several files each
line also says ``"file"`` (the path as the glob or the folder listing gives it), first in
the document, and ``"line"`` counts within that file.

This module is the client; :mod:`.dask_parts` the partitions and what a worker does.  Both
use only the public names (``__all__``) of the local engine's modules.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import math
import os
import signal
import sys
import threading
import time

from .. import options
from ..status import ExitCode, Terminated, TimedOut
from . import command, dask_parts, records
from . import engine as batch_engine
from . import io as batch_io
from .command import Summary
from .dask_parts import INSTALL_HINT, PARQUET_EXTENSIONS, DaskOptions
from .records import BatchOptions

__all__ = ["IN_PROCESS", "DaskOptions", "engine_options", "run_dask", "runner"]

#: ``--scheduler in-process``: a local cluster of threads in this process (tests, debugging)
IN_PROCESS = "in-process"
#: the automatic partition size stays within these bounds (bytes of text input)
MIN_PARTITION_BYTES = 1 << 20
MAX_PARTITION_BYTES = 16 << 20
#: partitions submitted beyond the first one not yet written, per worker thread
WINDOW_PER_THREAD = 2
_POLL = 0.05  # seconds between looks at the stop signals and the --timeout
#: after the --timeout, how long the client waits for the running tasks' finished lines
TIMEOUT_GRACE = 1.0


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
        from ...core import limits
        from ...core.errors import BadValueError

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


# The cluster
# ---------------------------------------------------------------------------


@contextlib.contextmanager
def _cluster(distributed, engine: DaskOptions):
    """A connected ``distributed.Client``: to ``engine.scheduler``, or to a new local cluster
    (processes, one thread each; IN_PROCESS: threads here), closed on leaving."""
    cluster = None
    client = None
    # Dask's own log lines are not shown, up to ERROR: here (its client, a local cluster's
    # scheduler and nannies, tornado's event loop: loggers of their own levels and handlers,
    # so all of them) and on a local cluster's workers (their handlers).  A failure is the
    # run's one message: a scheduler lost mid-run logged a 35-line traceback before it.
    disabled = logging.root.manager.disable
    logging.disable(logging.ERROR)
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
                silence_logs=logging.CRITICAL,
            )
            client = distributed.Client(cluster)
            if not in_process:
                # Ctrl-C at a terminal reaches the whole process group: the workers ignore
                # it from here on (this process answers it, then closes the cluster).
                # Best effort: a worker that missed it answers a Ctrl-C with its own exit,
                # which the client reports as usual.  What registering raises: the cluster's
                # comms (OSError: CommClosedError, TimeoutError), a closing client
                # (ClosedClientError, RuntimeError from a closed loop), or the worker's own
                # setup re-raised here (signal.signal: ValueError, OSError).
                with contextlib.suppress(
                    OSError, RuntimeError, ValueError, distributed.client.ClosedClientError
                ):
                    client.register_plugin(_worker_plugin(distributed)(), name="autograd-cli")
        yield client
    finally:
        try:
            if client is not None:
                client.close()
            if cluster is not None:
                cluster.close()
        finally:
            logging.disable(disabled)


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
    except (OSError, RuntimeError):  # the scheduler's comms closed, the client closing
        return 1


# ---------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------


class _Run:
    """The client's side of one run: partitions, futures, the sink, the counts."""

    def __init__(self, opts: BatchOptions, engine: DaskOptions):
        self.opts = opts
        self.engine = engine
        self.parts: list[dask_parts.Part] = []
        self.written = 0
        self.failed = 0
        self.unconverged = 0
        self.stopped = False
        self.error: str | None = None
        self.next = 0  # the first partition not yet written
        self.futures: dict = {}  # partition index -> its dask_parts.evaluate_part future
        self.measures: dict = {}  # partition index -> its dask_parts.measure future
        self.columns = None  # -o DIR.parquet: the gradient columns
        self.deadline = None  # time.monotonic() of the --timeout
        self.wall_deadline = None  # time.time() of the same, for the workers
        self.interrupt = None
        self.sink = None
        self.progress = None

    def stop_progress(self) -> None:
        if self.progress is not None:
            self.progress.stop()

    # ---- waiting ----------------------------------------------------------------------
    def check(self) -> None:
        if self.interrupt is not None and self.interrupt.requested:
            raise batch_io.Stop()
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise TimedOut(self.opts.timeout)

    def wait(self, future) -> None:
        """Until ``future`` is done, looking at stop signals and the deadline meanwhile."""
        # what distributed.wait raises for a cancelled future (FuturesCancelledError is one)
        from concurrent.futures import CancelledError

        from distributed import wait

        while not future.done():
            self.check()
            try:
                wait([future], timeout=_POLL)
            except TimeoutError:
                pass
            except CancelledError:  # cancelled (its scheduler lost): done, its outcome says why
                break
        self.check()

    # ---- writing ----------------------------------------------------------------------
    def write(self, part: dask_parts.Part, done: dask_parts.Done) -> None:
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

    def write_records(self, part: dask_parts.Part, docs: list) -> None:
        """Error records (after a --timeout) written and counted as failed lines."""
        if self.columns is not None:
            self.sink.write(dask_parts.lines_table(docs, part.label, self.columns))
        else:
            self.sink.write_lines([dask_parts.labelled(docs, part.label)])
        self.written += len(docs)
        self.failed += len(docs)


def run_dask(opts: BatchOptions, engine: DaskOptions) -> Summary:
    """``batch --engine dask``: the output written; returns what happened (``Summary``)."""
    distributed = _import_dask()
    run = _Run(opts, engine)
    pq, program, count = _prepare(run)
    parquet_out = _parquet_output(opts)
    if parquet_out:
        run.columns = dask_parts.gradient_columns(program, opts, count)
    dask_parts.STOP.clear()
    interrupt = run.interrupt = batch_io.Interrupt()
    code = ExitCode.OK
    try:
        with interrupt:
            interrupt.state = "writing"
            if parquet_out:
                run.sink = dask_parts.ParquetSink(opts.output, pq, run.columns)
            else:
                run.sink = batch_io.Sink(opts.output, None, interrupt)
            interrupt.state = "working"
            if opts.timeout:
                run.deadline = time.monotonic() + opts.timeout
                run.wall_deadline = time.time() + opts.timeout
            try:
                with _cluster(distributed, engine) as client:
                    code = _execute_until_stopped(run, client)
            finally:
                dask_parts.STOP.set()  # in-process workers still busy: stop at their next check
            interrupt.state = "writing"
            run.stop_progress()
            run.sink.commit()
            if interrupt.requested:
                code = interrupt.exit_code
    except batch_io.OutputError as exc:
        run.error = str(exc)
        code = ExitCode.EVALUATION_ERROR
    finally:  # the output complete (committed), or cut short: the temporary file removed
        run.stop_progress()
        if run.sink is not None:
            run.sink.abort()
    if code == ExitCode.OK and (run.failed or run.error):
        code = ExitCode.EVALUATION_ERROR
    return Summary(code, run.written, run.failed, run.stopped, run.error, run.unconverged)


def _parquet_output(opts: BatchOptions) -> bool:
    """``-o DIR.parquet`` (or ``.pq``): Parquet output."""
    if opts.output in (None, "-"):
        return False
    return opts.output.rstrip("/" + os.sep).lower().endswith(PARQUET_EXTENSIONS)


def _prepare(run: _Run) -> tuple:
    """The command line and every input file checked, as the local engine checks them (usage
    errors, exit 2, before any work), and the partitions planned: (pyarrow.parquet or None,
    --expr's program or None, the number of input files)."""
    opts = run.opts
    command.check_options(opts)
    files = dask_parts.expand(opts.source, opts.input_format)
    formats = [dask_parts.format_of(path, opts.input_format) for path in files]
    pq = None
    if "parquet" in formats:
        pq = dask_parts.import_parquet("Parquet input")
    if _parquet_output(opts):
        pq = dask_parts.import_parquet(f"-o {opts.output!r} (Parquet output)")
    tabular = [fmt for fmt in formats if fmt != "jsonl"]
    for fmt in sorted(set(formats)):
        command.check_settings(opts, "csv" if fmt == "parquet" else fmt)
    program = None
    if opts.expr is not None:
        program, error = batch_engine.Programs().get(opts.expr)
        if error is not None:
            raise error
    elif tabular:
        what = "CSV" if "csv" in tabular else "Parquet"
        raise options.UsageError(f"batch: {what} input needs --expr (and --op, default grad)")
    for fmt in sorted(set(formats)):
        command.check_command_line(program, opts, "csv" if fmt == "parquet" else fmt)
    _plan(run, files, formats, program, pq)
    if opts.output not in (None, "-"):
        for path in files:
            with contextlib.suppress(OSError):
                if os.path.samefile(opts.output, path):
                    raise options.UsageError(
                        f"-o: {opts.output!r} is an input file; write the output to another file"
                    )
    return pq, program, len(files)


def _execute_until_stopped(run: _Run, client) -> int:
    """``_execute`` on the cluster; after a stop signal or the --timeout, what is finished
    written in order (the timeout: each line read gets its record): the exit code."""
    interrupt = run.interrupt
    code = ExitCode.OK
    try:
        _execute(run, client)
    except (batch_io.Stop, KeyboardInterrupt, Terminated, TimedOut) as exc:
        interrupt.stop_timer()  # stopping: a repeated alarm must not cut the records short
        dask_parts.STOP.set()
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
    return code


def _plan(run: _Run, files: list, formats: list, program, pq) -> None:
    """The partitions of every file, headers and schemas checked (usage errors now)."""
    opts = run.opts
    warned: dict = {}
    several = len(files) > 1
    for path, fmt in zip(files, formats):
        label = path if several else None
        if fmt == "parquet":
            names, skip, rows = dask_parts.parquet_columns(pq, path, program, opts, warned)
            size = os.path.getsize(path)
            total = sum(rows) or 1
            line = 2  # as the same table written as CSV: the header is line 1
            for group, count in enumerate(rows):
                if count:
                    run.parts.append(
                        dask_parts.Part(
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
            found = dask_parts.csv_columns(path, program, opts, warned)
            if found is None:
                continue
            names, skip, start, first = found
        size = os.path.getsize(path)
        if start >= size:
            continue
        part = dask_parts.Part(len(run.parts), path, fmt, start, size, first, names, skip, label)
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
            total >= batch_io.PROGRESS_MIN_BYTES and sys.stderr is not None and sys.stderr.isatty()
        )
    run.progress = batch_io.Progress(show, int(total) or None)
    # Pass 1: each text range moved to line starts and its line ends counted, on the workers.
    run.measures = {
        p.index: client.submit(dask_parts.measure, p.path, p.start, p.end, pure=False)
        for p in run.parts
        if p.fmt != "parquet"
    }
    previous = None
    for p in run.parts:
        if p.fmt == "parquet":
            continue
        _number_from(p, previous)
        run.wait(run.measures[p.index])
        counted = _outcome(run.measures[p.index])
        if isinstance(counted, Exception):  # a worker's failure ends the run: exit 1
            run.error = _failed(p, counted)
            return
        p.range = counted
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
                dask_parts.evaluate_part,
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
        done = _outcome(future)
        if isinstance(done, Exception):  # a worker's failure ends the run: exit 1
            run.error = _failed(parts[run.next], done)
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
            run.error = where + command.runaway_message(done.runaway, run.written)
            return


def _outcome(future):
    """A finished task's result (a partition's ``Done``, a range's line count), or the
    exception its task raised."""
    try:
        return future.result()
    except Exception as exc:  # noqa: BLE001 - Dask raises a task's own exception here, of any
        # type (the worker's code, pickling, the cluster's comms): it is the run's error,
        # reported as such; a stop signal (BaseException) still goes through
        return exc


def _failed(part: dask_parts.Part, exc: Exception) -> str:
    """The run's message when a task fails on its worker (or the cluster fails it)."""
    return (
        f"the Dask cluster failed on {part.path!r} (from line {part.first_line}): "
        f"{type(exc).__name__}: {exc}"
    )


def _number_from(part: dask_parts.Part, previous: dask_parts.Part | None) -> None:
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
        done = _outcome(future)
        if isinstance(done, Exception):  # its failure is not reported after a stop
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
        from distributed.client import ClosedClientError

        # Best effort: the cluster is closed next anyway.  Cancelling only sends a message:
        # a client no longer running refuses it (ClosedClientError), a closed event loop
        # cannot run it (RuntimeError).
        with contextlib.suppress(ClosedClientError, RuntimeError, OSError):
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
    stop = dask_parts.WorkerStop(stoppable=False)
    previous = None
    grace = time.monotonic() + TIMEOUT_GRACE
    from distributed import wait

    for index in range(run.next, len(run.parts)):
        part = run.parts[index]
        if part.fmt != "parquet":
            if part.range is None:
                part.range = dask_parts.measure(part.path, part.start, part.end)
            if part.first_line is None and previous is not None:
                _number_from(part, previous)
            previous = part
        future = run.futures.get(index)
        done = None
        if future is not None and not future.done() and time.monotonic() < grace:
            # the workers stop at the same deadline: what they finished comes back soon
            with contextlib.suppress(TimeoutError):
                wait([future], timeout=max(0.0, grace - time.monotonic()))
        if future is not None and future.status == "finished":
            done = _outcome(future)
            if isinstance(done, Exception):  # its failure is not reported after the timeout
                done = None
        after = None  # the lines up to this one are written
        if done is not None:
            run.write(part, done)
            if done.stopped or done.runaway is not None:
                break
            if done.finished:
                continue
            after = done.last
        for numbers, docs in _limit_records(part, message, stop, after):
            room = command.TIMEOUT_TAIL_LINES - unfinished
            if room <= 0:  # the cap reached: this chunk's lines are left without a record
                cut = True
                break
            if len(docs) > room:  # at most TIMEOUT_TAIL_LINES records, as the local engine
                numbers, docs, cut = numbers[:room], docs[:room], True
            run.write_records(part, docs)
            unfinished += len(docs)
            last = (part.path, numbers[-1])
        if cut:
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


def _limit_records(part: dask_parts.Part, message: str, stop, after: int | None = None):
    """(line numbers, their ``limit`` records) of a partition's lines after line ``after``
    (None: all), chunk by chunk."""
    size = 65536
    if part.fmt == "parquet":
        first = part.first_line if after is None else after + 1
        last = part.first_line + part.end  # past the last row
        for a in range(first, last, size):
            numbers = list(range(a, min(last, a + size)))
            yield numbers, records.limit_docs(numbers, numbers, message)
        return
    if part.first_line is None:
        return
    for numbers, texts, _ in dask_parts.TextReader(part, size, stop).chunks():
        if after is not None and numbers and numbers[0] <= after:
            keep = [i for i, n in enumerate(numbers) if n > after]
            numbers, texts = [numbers[i] for i in keep], [texts[i] for i in keep]
        if numbers:
            yield numbers, records.limit_docs(numbers, texts, message)
