"""The ``batch`` command: many evaluations from JSONL or CSV, one JSONL line out per line in.

Output: one JSON document per non-blank input line, in input order, each the same
document the single command prints with ``--json`` plus ``"line"`` (the line number
as an editor shows it; a CSV header is line 1), or ``{"line": N, "error": {...}}``.
The parts: :mod:`.records` (a line read into its record), :mod:`.engine` (a chunk of
records evaluated), :mod:`.io` (reading, writing, stop signals); this module checks the
command line once, drives the run (:func:`run_batch`) and reports (:class:`Summary`);
the Typer command (cli/commands/batch.py) picks the engine and calls :func:`run_batch` or the
Dask engine's runner.

* The input is read in chunks of ``--chunk-size`` lines, so memory stays bounded; a
  chunk's lines are written in input order once the chunk is done.
* ``-o FILE``: opened by the one output policy (``files.open_target``): a regular file is
  replaced at the end (a temporary file renamed over it, its permission bits kept), a FIFO
  or device written through; a folder, or the input file itself, is a usage error (exit 2)
  before anything is read.  A failed write ends the run with ``autograd-cli: error: cannot
  write ...`` and exit 1, FILE as it was.  A run killed outright (SIGKILL) leaves the
  temporary file ``.FILE.PID.XXXXXXXX.tmp``, which the next run to the same FILE removes.
* Lines are at most ``io.MAX_LINE_BYTES`` (1 MiB) long: a longer line gets an error record
  of kind ``limit``; a "line" of more than ``io.MAX_RUNAWAY_BYTES`` (64 MiB) ends the run
  there: its record, a message on stderr, exit 1.
* Ctrl-C, SIGTERM and SIGHUP: the lines completed so far are written (never a partial
  line), FILE (with ``-o``) is replaced by them, the temporary file never stays behind,
  and the exit code is 130, 143 or 129.  A second signal stops at once (still never
  inside a write), as the first does during an analysis line.  A closed stdout (``| head
  -1``) raises ``BrokenPipeError`` for the error boundary (a quiet exit 141).
* Exit code: 0 when every line succeeded, 1 when some line failed (a one-line summary goes
  to stderr; stdout holds only the lines, ``--json`` or not) or the output could not be
  written, 2 for a bad command line (missing file, bad ``--format``, CSV header against
  ``--expr``, ``-o`` a folder or the input, options that fail every line that gives only
  its variables: see :func:`check_command_line`; the usual error document), 130/143/129
  when stopped by SIGINT/SIGTERM/SIGHUP.

The seam other modules use (the Dask engine among them) is ``__all__``.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass

from ...core import analysis_docs
from ...core.errors import UnknownVariableError
from ...core.program import missing_value
from ...core.rows import ANALYSIS_OPS, OPS, batchable
from .. import options
from ..status import ExitCode, Terminated, TimedOut
from . import columnar
from . import io as batch_io  # its limits read at use: tests lower them
from .engine import Chunk, Programs, Runner, evaluate_chunk
from .io import (
    EXTENSIONS,
    FORMATS,
    PROGRESS_MIN_BYTES,
    STOPS,
    Input,
    Interrupt,
    OutputError,
    Progress,
    Sink,
    Stop,
    read_chunks,
    read_header,
    size_text,
)
from .records import BatchOptions, LineError, csv_header, limit_docs

__all__ = [
    "TIMEOUT_TAIL_LINES",
    "Summary",
    "check_command_line",
    "check_csv_program",
    "check_options",
    "check_settings",
    "run_batch",
    "runaway_message",
]

#: after a --timeout, at most this many more input lines (of a regular file, within
#: MAX_CHUNK_BYTES) are read to give each its ``limit`` record; the rest are not read
TIMEOUT_TAIL_LINES = 100_000
_SIGNAL_WORDS = {
    ExitCode.INTERRUPTED: "interrupted",
    ExitCode.TERMINATED: "terminated",
    ExitCode.HANGUP: "hung up",
}


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

        from .. import streams

        message = self.message()
        if message:
            streams.say(f"autograd-cli: {message}")  # a stderr gone with a hang-up: silence
        if self.code != ExitCode.OK:
            raise typer.Exit(int(self.code))


def _input_format(opts: BatchOptions) -> str:
    if opts.input_format is not None:
        fmt = opts.input_format.lower()
        if fmt not in FORMATS:
            raise options.UsageError(f"--format must be jsonl or csv, not {opts.input_format!r}")
        return fmt
    if opts.source == "-":
        return "jsonl"
    _no_parquet(opts.source, "input")
    return EXTENSIONS.get(os.path.splitext(opts.source)[1].lower(), "jsonl")


def _no_parquet(path: str | None, what: str) -> None:
    """The local engine reads and writes text: a Parquet file is the Dask engine's."""
    if path and os.path.splitext(path.rstrip("/"))[1].lower() in (".parquet", ".pq"):
        raise options.UsageError(
            f"batch: Parquet {what} ({path!r}) needs --engine dask (pip install "
            "'autograd-cli[dask]'); the local engine reads JSONL or CSV and writes JSONL"
        )


def check_options(opts: BatchOptions) -> None:
    if opts.op not in OPS:
        raise options.UsageError(f"--op must be one of {', '.join(OPS)}, not {opts.op!r}")
    if opts.chunk_size < 1:
        raise options.UsageError(f"--chunk-size must be at least 1, not {opts.chunk_size}")
    least = 0 if opts.op == "taylor" else 1  # taylor's degree 0 is the value
    if opts.order is not None and opts.order < least:
        raise options.UsageError(f"--order must be at least {least}, not {opts.order}")
    if opts.order is not None and opts.order > options.MAX_ORDER:
        raise options.UsageError(f"--order must be at most {options.MAX_ORDER}, not {opts.order}")


def check_command_line(program, opts: BatchOptions, fmt: str) -> None:
    """The checks that depend on the command line alone, made once before any input is read:
    one usage error (exit 2) rather than the same error record on every line.

    The options are checked as a line that gives only its variables takes them (``program``:
    --expr's; None when each line gives its own expression, and the checks that need one
    wait for the lines).  A JSONL line that brings its own expr, op, wrt or order is still
    checked alone; --order and --wrt stay defaults for the lines whose op takes them (eval
    and an analysis op without them ignore them).  CSV rows take op, --wrt and --order from
    the command line, so there an option that no row can use is an error too.
    """
    from ...core.program import resolve_wrt

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


def check_settings(opts: BatchOptions, fmt: str) -> None:
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


def check_csv_program(program, names: list[str], opts: BatchOptions) -> frozenset:
    """Problems of the command itself (header against expression, --wrt): exit 2, not N errors.

    Returns the columns the expression does not use: they are ignored, with one warning on
    stderr (one file of points serves many expressions), and their cells are not read.
    """
    from ...core.program import topological
    from .. import streams

    used = set(program.inputs)
    unused = [n for n in names if n not in used]
    if unused:
        shown = ", ".join(repr(n) for n in unused[:10])
        if len(unused) > 10:
            shown += f" and {len(unused) - 10} more"
        columns = f"CSV column{'s' if len(unused) > 1 else ''} {shown}"
        what = f"not {'a variable' if len(unused) == 1 else 'variables'} of the expression"
        if opts.strict:
            raise UnknownVariableError(
                f"batch: {columns}: {what} (without --strict they are ignored)",
                variable=unused[0],
            )
        streams.say(f"autograd-cli: warning: batch: ignoring {columns}: {what}")
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
    check_options(opts)
    fmt = _input_format(opts)
    check_settings(opts, fmt)
    programs = Programs()
    program = None
    if opts.expr is not None:
        program, error = programs.get(opts.expr)
        if error is not None:
            raise error  # the command line itself is wrong: exit 2 like the other commands
    elif fmt == "csv":
        raise options.UsageError("batch: CSV input needs --expr (and --op, default grad)")
    check_command_line(program, opts, fmt)
    source = Input(opts.source)
    interrupt = Interrupt(timeout=opts.timeout)
    runner = Runner(opts, interrupt)
    runner.programs = programs
    run = _Local(runner, source, interrupt)
    try:
        with interrupt:
            run.code, run.error = _run_local(run, fmt, opts)
            interrupt.state = "writing"
            run.stop_progress()
            if run.sink is not None:
                run.sink.commit()
            if interrupt.requested:  # a stop signal, even one that came at the very end
                run.code = interrupt.exit_code
    except OutputError as exc:
        run.error = str(exc)
        run.code = ExitCode.EVALUATION_ERROR
    finally:  # the output complete (committed), or cut short: the temporary file removed
        run.stop_progress()
        if run.sink is not None:
            run.sink.abort()
        source.close()
    limits = source.limits
    error, code = run.error, run.code
    if error is None and limits is not None and limits.runaway is not None and code == ExitCode.OK:
        error = runaway_message(limits.runaway, runner.written)
    if code == ExitCode.OK and (runner.failed or error):
        code = ExitCode.EVALUATION_ERROR
    return Summary(code, runner.written, runner.failed, runner.stopped, error, runner.unconverged)


class _Local:
    """One local run's state: the runner, the input, the signals, the sink, the bar."""

    def __init__(self, runner: Runner, source: Input, interrupt: Interrupt):
        self.runner = runner
        self.source = source
        self.interrupt = interrupt
        self.sink: Sink | None = None
        self.progress: Progress | None = None
        self.code = ExitCode.OK
        self.error: str | None = None

    def stop_progress(self) -> None:
        if self.progress is not None:
            self.progress.stop()


def _run_local(run: _Local, fmt: str, opts: BatchOptions) -> tuple:
    """Open the sink and drive the run to its end or to a stop: (exit code, error)."""
    runner, source, interrupt = run.runner, run.source, run.interrupt
    try:
        interrupt.state = "writing"  # the temporary file is made whole or not at all
        run.sink = Sink(opts.output, source.stat, interrupt)
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
        run.progress = Progress(show, source.size)
        _drive(runner, source, run.sink, fmt, opts, run.progress, interrupt)
    except STOPS as exc:
        interrupt.stop_timer()  # stopping: a repeated alarm must not cut the records short
        chunk = runner.current
        if isinstance(exc, TimedOut):  # every line read gets its line: exit 1
            interrupt.state = "writing"
            message = _after_timeout(runner, source, run.sink, interrupt, exc.seconds)
            return ExitCode.EVALUATION_ERROR, message
        if chunk is not None and run.sink is not None:  # the completed prefix
            n = chunk.done_prefix()
            interrupt.state = "writing"
            run.sink.write_lines(chunk.out[:n])
            runner.count(chunk, n)
        if isinstance(exc, Terminated) and interrupt.signum is None:
            return exc.exit_code, None
        return interrupt.exit_code, None
    return ExitCode.OK, None


def runaway_message(line: int, written: int) -> str:
    return (
        f"line {line} goes on for more than {size_text(batch_io.MAX_RUNAWAY_BYTES)} "
        f"without a line end (is the input a text file?); reading stopped there, "
        f"after {written} output line(s), the last one its error record"
    )


def _regular(source: Input) -> bool:
    """The input is a regular file: a read never waits for more to come."""
    return source.stat is not None and stat.S_ISREG(source.stat.st_mode)


def _after_timeout(runner: Runner, source: Input, sink, interrupt: Interrupt, seconds) -> str:
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
                chunk.fail(pos, LineError("limit", message))
                unfinished += 1
        sink.write_lines(chunk.out)
        runner.count(chunk, len(chunk.out))
        runner.current = None
    if runner.chunks is not None and not interrupt.blocking_input:
        start = interrupt.last_line
        try:
            for numbers, texts, _ in runner.chunks:  # the same reader, where it stopped
                docs = limit_docs(numbers, texts, message)
                sink.write_lines(docs)
                runner.written += len(docs)
                runner.failed += len(docs)
                unfinished += len(docs)
                if interrupt.last_line - start >= TIMEOUT_TAIL_LINES:
                    break
        except STOPS:  # a stop signal now: what is written stays; its exit code follows
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


def _reader(source: Input, fmt: str, opts: BatchOptions, interrupt: Interrupt, first_line, header):
    """The input's chunks: a large CSV file of plain numbers read as bytes where PyArrow is
    installed (``columnar.chunks``), else by the text reader."""
    size = opts.chunk_size
    if fmt == "csv" and batchable(opts.op, opts.order):
        offset = columnar.start(source, header, first_line - 1)
        if offset is not None:
            return columnar.chunks(source, offset, first_line, size, interrupt)
    return read_chunks(source.stream, first_line, size, interrupt, source.limits)


def _drive(
    runner: Runner,
    source: Input,
    sink: Sink,
    fmt: str,
    opts: BatchOptions,
    progress: Progress,
    interrupt: Interrupt,
):
    names = None
    header = None
    skip: frozenset = frozenset()  # CSV columns the expression does not use
    first_line = 1
    if fmt == "csv":
        header, header_line = read_header(source, interrupt)
        if header is None:
            return
        names = csv_header(header)
        program, _ = runner.programs.get(opts.expr)
        skip = check_csv_program(program, names, opts)
        first_line = header_line + 1
    runner.chunks = _reader(source, fmt, opts, interrupt, first_line, header)
    for numbers, texts, joined in runner.chunks:
        if not numbers:
            continue
        chunk = Chunk(numbers)
        runner.current = chunk
        interrupt.evaluating = True  # from here a --timeout gives the chunk's lines records
        n = evaluate_chunk(runner, chunk, fmt, texts, joined, names, skip)
        interrupt.evaluating = False
        interrupt.state = "writing"  # written and counted, or neither: no stop in between
        if chunk.data is not None and n == len(numbers):
            sink.write_data(chunk.data)
        else:
            sink.write_lines(chunk.out[:n])
        runner.count(chunk, n)
        runner.current = None
        interrupt.state = "working"
        progress.update(source.position(), runner.written)
        if opts.fail_fast and any(chunk.failed[:n]):
            runner.stopped = True
            return
        if interrupt.requested:
            raise Stop()
