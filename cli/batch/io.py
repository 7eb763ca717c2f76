"""Batch input and output: the reader, the sink, the stop signals, the progress bar.

* The reader (:class:`Input`, :func:`read_chunks`): the input's text lines, in chunks of
  ``--chunk-size`` lines (bounded memory), blank lines left out.  A :class:`LineLimit`
  under the text layer cuts every line at ``MAX_LINE_BYTES`` (1 MiB): a longer line comes
  alone as an :class:`Overlong` (its record is a ``limit`` error) and is skipped in
  bounded memory; a "line" that goes on for more than ``MAX_RUNAWAY_BYTES`` (64 MiB, e.g.
  ``/dev/zero``) ends the input there.  A chunk also ends once ``MAX_CHUNK_BYTES`` are
  read for it.
* The sink (:class:`Sink`): standard output, or ``-o FILE`` opened by the one output
  policy, :func:`autograd_cli.cli.files.open_target` (a temporary file renamed over FILE
  at the end, a FIFO or device written through, a folder or the input a usage error).
  Every write is checked: a failed one is :class:`OutputError` (exit 1, FILE as it was).
* :class:`Interrupt`: SIGINT, SIGTERM, SIGHUP and ``--timeout`` as a flag checked at safe
  points (:class:`Stop`), never inside a write.

The seam other modules use (the Dask engine among them) is ``__all__``.
"""

from __future__ import annotations

import collections
import contextlib
import io
import itertools
import os
import re
import signal
import sys

from .. import files, options
from ..status import (
    REPEAT_SECONDS,
    STOP_SIGNALS,
    Terminated,
    TimedOut,
    exit_code_for_signal,
    unprinted_timeouts,
)

__all__ = [
    "EXTENSIONS",
    "FORMATS",
    "MAX_CHUNK_BYTES",
    "MAX_LINE_BYTES",
    "MAX_RUNAWAY_BYTES",
    "PROGRESS_MIN_BYTES",
    "STOPS",
    "Input",
    "Interrupt",
    "LineLimit",
    "OutputError",
    "Overlong",
    "Progress",
    "Sink",
    "Stop",
    "first_break",
    "read_chunks",
    "read_header",
    "size_text",
]

FORMATS = ("jsonl", "csv")
PROGRESS_MIN_BYTES = 1 << 20
#: the longest input line (bytes of UTF-8 text, the line end not counted); a longer one
#: gets an error record of kind "limit" and is skipped without being held in memory
MAX_LINE_BYTES = 1 << 20
#: a line still without its end after this many bytes (``/dev/zero``) ends the run: exit 1
MAX_RUNAWAY_BYTES = 64 << 20
_READ_SIZE = 1 << 16  # bytes per read of the input (below MAX_LINE_BYTES: see LineLimit)
#: a chunk ends early once this much input is read for it (long lines: bounded memory)
MAX_CHUNK_BYTES = 16 << 20
EXTENSIONS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".csv": "csv"}


class Stop(Exception):
    """A stop signal (Ctrl-C, SIGTERM, SIGHUP) arrived: stop at the next safe point."""


#: what a stop signal raises, at a safe point or (a second signal) at once; and --timeout
STOPS = (Stop, KeyboardInterrupt, Terminated, TimedOut)


class OutputError(Exception):
    """Writing the output failed (a full disk, EIO, a short write): exit 1 with this message."""


def _safe_point(attribute: str, stoppable):
    """A property whose every assignment is a safe point: a --timeout that ran out between
    safe points is raised there when ``stoppable(self, value)``."""

    def get(self):
        return getattr(self, attribute)

    def put(self, value) -> None:
        setattr(self, attribute, value)
        self._time_out_if(stoppable(self, value))

    return property(get, put)


class Interrupt:
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
        self._quiet = contextlib.ExitStack()  # the repeating timer's unprinted_timeouts

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
                # repeating, as status.deadline: a handler's exception raised inside a garbage
                # collector callback or a __del__ is dropped (unprinted), not raised; the next
                # alarm, a second later, raises it again where it counts
                signal.setitimer(signal.ITIMER_REAL, self.timeout, REPEAT_SECONDS)
                self._quiet.enter_context(unprinted_timeouts())
            except (ValueError, OSError):  # not the main thread: no timer
                pass
        self.installed = bool(self.previous)
        return self

    def stop_timer(self) -> None:
        """No more --timeout alarms: the run is stopping (its records are being written,
        which a repeat of the alarm must not interrupt)."""
        if self.timeout and hasattr(signal, "setitimer"):
            signal.setitimer(signal.ITIMER_REAL, 0)

    def __exit__(self, *exc):
        self.stop_timer()  # before the handler goes
        self._quiet.close()
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

    #: what the run is doing ("working", "reading", "writing"); reading input that may block
    #: is a point where a --timeout that ran out stops it
    state = _safe_point("_state", lambda self, value: value == "reading" and self.blocking_input)
    #: a chunk is being evaluated (a point where a --timeout that ran out stops the run)
    evaluating = _safe_point("_evaluating", lambda self, value: value)

    def _time_out_if(self, stoppable: bool) -> None:
        """The --timeout that ran out between safe points: raised now, at one."""
        if self._late and stoppable:
            self._late = False
            raise TimedOut(self.timeout)

    def _alarm(self, signum, frame):
        """The --timeout ran out: stop now while a chunk is evaluated (its lines are all in
        ``runner.current``) or while waiting for input that may never come; anywhere else
        (a write, a regular file's read, lines between the reader and the chunk) at the
        next of those points, so the reader is left where it can go on."""
        if self.timed_out is None:
            self.timed_out = self._state
        if (self._state == "reading" and self.blocking_input) or (
            self._state == "working" and self._evaluating
        ):
            # (again at each repeat while still here: the last one was dropped, raised in a
            # GC callback, such as hypothesis's, or a __del__)
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


def size_text(n: int) -> str:
    return f"{n >> 20} MiB" if n % (1 << 20) == 0 else f"{n} bytes"


class Overlong:
    """Stands for an input line longer than MAX_LINE_BYTES (its text was never kept)."""

    def __init__(self, line: int, runaway: bool):
        self.line = line
        self.runaway = runaway

    def message(self) -> str:
        if self.runaway:
            return (
                f"line {self.line} goes on for more than {size_text(MAX_RUNAWAY_BYTES)} "
                f"without a line end; reading stopped there"
            )
        return (
            f"line {self.line} is longer than {size_text(MAX_LINE_BYTES)} (the most a batch "
            f"line may have); it was skipped"
        )


class LineLimit(io.BufferedIOBase):
    """The input bytes, with every line cut to its first MAX_LINE_BYTES bytes.

    It sits under the ``TextIOWrapper`` that splits the lines, so a line never takes more
    memory than that, however long it is: the rest of an overlong line is read and dropped
    here, and its number goes to ``events`` (as ``[line, runaway]``) for ``read_chunks`` to
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
            end = first_break(data)
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
        first = first_break(data) if has_cr else data.find(b"\n")
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


def first_break(data: bytes) -> int:
    """The index of the first \\n or \\r in ``data``, or -1."""
    n = data.find(b"\n")
    r = data.find(b"\r", 0, n if n >= 0 else len(data))
    return r if r >= 0 else n


class Sink:
    """Where the output lines go: standard output, or ``-o PATH``, opened by the one output
    policy (:func:`autograd_cli.cli.files.open_target`: a regular file gets a temporary file
    renamed over it by ``commit``, a FIFO or device is written through, ``/dev/stdout`` is
    that descriptor); a folder, or the input file itself (same device and inode, however
    spelled), is ``options.UsageError`` before anything is read or created.

    Lines are written as UTF-8 bytes, a chunk at a time, with ``os.write`` until every
    byte is out; a failure is ``OutputError`` (``BrokenPipeError`` goes through as it
    is, for the error boundary's quiet exit 141).
    """

    def __init__(self, path: str | None, source_stat=None, interrupt=None):
        self.path = None if path in (None, "-") else path
        self.file = None  # the opened -o target (files.Target)
        self.fd = None  # the descriptor written to
        self.text = None  # standard output: flushed before each write
        self.binary = None  # standard output without a descriptor (tests): its buffer
        if self.path is None:
            self.name = "standard output"
            self._open_stdout()
            return
        self.name = repr(self.path)
        try:
            self.file = files.open_target(
                self.path, source_stat=source_stat, blocking=_waiting(interrupt)
            )
        except files.Unwritable as exc:
            raise options.UsageError(_unwritable(self.path, exc)) from None
        self.fd = self.file.fd

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

    def _failed(self, exc: OSError) -> OutputError:
        reason = exc.strerror or str(exc) or exc.__class__.__name__
        where = "to standard output" if self.path is None else self.name
        kept = ""
        if self.file is not None and self.file.tmp is not None:
            kept = (
                f" ({self.path!r} is left as it was)"
                if self.file.existed
                else f" ({self.path!r} was not created)"
            )
        return OutputError(f"cannot write {where}: {reason}{kept}")

    @contextlib.contextmanager
    def _writing(self):
        """A write of the output: an OSError is the OutputError that names the target (a
        closed pipe stays a BrokenPipeError, which ends the run quietly)."""
        try:
            yield
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise self._failed(exc) from None

    def write_lines(self, lines: list) -> None:
        if not lines:
            return
        self.write_data(("\n".join(lines) + "\n").encode("utf-8", "backslashreplace"))

    def write_data(self, data) -> None:
        """Whole lines as UTF-8 bytes (``write_lines``' encoding; any bytes-like object),
        written out."""
        with self._writing():
            if self.fd is not None:
                if self.text is not None:
                    self.text.flush()
                files.write_all(self.fd, data)
            elif self.binary is not None:
                self.text.flush()
                self.binary.write(data)
                self.binary.flush()
            else:
                self.text.write(bytes(data).decode("utf-8"))
                self.text.flush()

    def commit(self) -> None:
        """The output is complete: flush it, or close the temporary file and rename it."""
        with self._writing():
            if self.file is None:
                if self.text is not None:
                    self.text.flush()
                return
            self.fd = None
            self.file.commit()

    def abort(self) -> None:
        """Something went wrong: close, and remove the temporary file (FILE stays as it was)."""
        if self.file is not None:
            self.fd = None
            self.file.abort()


def _unwritable(path: str, exc) -> str:
    """``-o``'s usage error for a target ``files.open_target`` refused."""
    if exc.problem == "folder":
        return f"-o: {path!r} is a directory; give the name of the file to write"
    if exc.problem == "input":
        return f"-o: {path!r} is the input file; write the output to another file"
    return f"-o: cannot write {path!r}: {exc.reason}"


def _waiting(interrupt):
    """Around opening a FIFO, which waits for a reader: a stop signal stops it at once."""
    if interrupt is None:
        return None

    @contextlib.contextmanager
    def waiting():
        saved, interrupt.state = interrupt.state, "reading"
        try:
            yield
        finally:
            interrupt.state = saved

    return waiting


class Input:
    """The input as text lines (UTF-8, a BOM skipped, bad bytes replaced), each line at
    most MAX_LINE_BYTES (``limits``: a ``LineLimit`` underneath, when there are bytes)."""

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
                self.limits = LineLimit(buffer, close_source=False)
                self.stream = self.text_stream(self.limits)
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
        self.limits = LineLimit(self._raw, close_source=True)
        self.stream = self.text_stream(self.limits)

    @staticmethod
    def text_stream(binary, encoding: str = "utf-8-sig") -> io.TextIOWrapper:
        """Text lines of ``binary`` (``encoding="utf-8"``: a part of a file after its start)."""
        stream = io.TextIOWrapper(binary, encoding=encoding, errors="replace")
        stream._CHUNK_SIZE = _READ_SIZE
        return stream

    def position(self) -> int | None:
        return self.limits.position if self._raw is not None else None

    def fd(self) -> int | None:
        """The descriptor of an input file opened by its path (None: standard input)."""
        return self._raw.fileno() if self._raw is not None else None

    def resume(self, offset: int, lines_before: int) -> None:
        """Read the text lines from byte ``offset`` of the file on, the start of line
        ``lines_before + 1`` (a reader that read the bytes before it hands over): a fresh
        ``LineLimit`` that numbers lines from there, its text stream in ``stream``."""
        self.limits.close_source = False  # the old layers go; the file stays open
        self.stream.detach()
        self._raw.seek(offset)
        self.limits = LineLimit(self._raw, close_source=True)
        self.limits.breaks = lines_before
        self.limits.position = offset
        self.stream = self.text_stream(self.limits, "utf-8")

    def overlong(self, line: int) -> Overlong | None:
        """The stand-in for line ``line`` if it was too long (events before it dropped)."""
        events = self.limits.events if self.limits is not None else None
        while events and events[0][0] < line:
            events.popleft()
        if events and events[0][0] == line:
            number, runaway = events.popleft()
            return Overlong(number, runaway)
        return None

    def close(self) -> None:
        if self._detach:
            try:
                self.stream.detach()
            except (ValueError, OSError):
                pass
        elif self._raw is not None:
            self.stream.close()


class Progress:
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


def read_chunks(stream, first_line: int, size: int, interrupt: Interrupt, limits=None):
    """(line numbers, texts, joined text) of the next ``size`` physical lines, blank ones
    left out (the joined text is None when some were).

    With ``limits`` (the input's ``LineLimit``), a line that was too long comes alone, as
    ``([number], [Overlong], None)``, between the lines before and after it.
    """
    line = first_line - 1
    events = limits.events if limits is not None else None
    while True:
        if interrupt.requested:
            raise Stop()
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


def _read_block(stream, size: int, limits: LineLimit) -> list:
    """The next ``size`` lines, or fewer: those that end within MAX_CHUNK_BYTES of input
    (``LineLimit`` pauses there), so that many long lines never make a chunk too large
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
            yield [number], [Overlong(number, runaway)], None
        elif text.strip():
            numbers.append(line)
            texts.append(text)
    if numbers:
        yield numbers, texts, None


# ---------------------------------------------------------------------------
# The command


def read_header(source: Input, interrupt) -> tuple[str | None, int]:
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
                    f"than {size_text(MAX_LINE_BYTES)}: "
                    f"is this a CSV file?"
                )
            if text.strip():
                return text, header_line
    finally:
        interrupt.state = "working"
    return None, header_line
