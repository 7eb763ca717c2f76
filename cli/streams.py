"""Standard streams that cannot fail silently, whatever state the process starts in.

* Output is complete or the exit code says it is not: every write to stdout (and
  the final flush) that fails with ENOSPC, EIO, EBADF ... raises :class:`OutputError`,
  which the error boundary reports on stderr with exit 1.  ``BrokenPipeError`` passes
  through unchanged: the reader went away, and the boundary ends quietly.
* After a failed write the pending bytes are sent to ``/dev/null``
  (:func:`silence_stdout`), so the interpreter's own flush at exit cannot print
  "Exception ignored" or change the exit code.
* File descriptors 0-2 closed at start are held open on ``/dev/null``, so no file the
  tool opens later (a batch ``-o`` file) can land on them; a closed stdout still
  reports every write as an error.
* Characters the terminal's encoding cannot show are written as escapes
  (``errors="backslashreplace"``), never an exception; with ``--json`` stdout is
  UTF-8 whatever the locale says.
"""

from __future__ import annotations

import errno
import io
import os
import sys


class OutputError(Exception):
    """Standard output could not take what was written (full, broken, closed)."""


#: set by the first write to stdout: the result is being printed (a --timeout that runs out
#: now lets it finish, so a document or a line is never cut, nor followed by an error one)
_output_started = False


def output_started() -> bool:
    return _output_started


class _Checked:
    """A stream wrapper: OSError (other than a broken pipe) from a write or flush
    becomes :class:`OutputError`; everything else is the wrapped stream's."""

    def __init__(self, stream, name: str):
        self._stream = stream
        self._name = name

    def _failed(self, exc: OSError) -> OutputError:
        reason = exc.strerror or str(exc)
        if exc.errno == errno.EBADF:
            reason = "it is closed"
        return OutputError(f"cannot write to {self._name}: {reason}")

    def write(self, data):
        global _output_started
        _output_started = True
        try:
            return self._stream.write(data)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise self._failed(exc) from None

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        try:
            return self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise self._failed(exc) from None

    @property
    def buffer(self):
        return _Checked(self._stream.buffer, self._name)

    def __getattr__(self, name):
        return getattr(self._stream, name)


class _Closed(io.TextIOBase):
    """What ``sys.stdout`` is when file descriptor 1 was closed at start."""

    encoding = "utf-8"
    errors = "strict"

    def writable(self):
        return True

    def write(self, data):
        raise OSError(errno.EBADF, "Bad file descriptor")

    def isatty(self):
        return False

    @property
    def buffer(self):
        return self


def _hold_standard_fds() -> set:
    """Open /dev/null on any of fds 0-2 that is closed; return the ones that were."""
    closed = set()
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.add(fd)
    for fd in sorted(closed):
        try:
            new = os.open(os.devnull, os.O_RDWR)
            if new != fd:
                os.dup2(new, fd)
                os.close(new)
        except OSError:
            pass
    return closed


def _buffered(stream):
    """``stream``, over a buffered writer.  With PYTHONUNBUFFERED (or ``python -u``)
    sys.stdout writes straight to the file, and a short write (the reader of a pipe going
    away mid-write) is taken as complete: output cut, exit 0.  A BufferedWriter writes
    the rest, so the reader's going away is an error (EPIPE) as it is without the setting."""
    buffer = getattr(stream, "buffer", None)
    if not isinstance(stream, io.TextIOWrapper) or not isinstance(buffer, io.RawIOBase):
        return stream
    return io.TextIOWrapper(
        io.BufferedWriter(buffer),
        encoding=stream.encoding,
        errors=stream.errors,
        line_buffering=True,  # unbuffered was asked for: each line goes out at once
        write_through=True,
    )


def prepare(json_mode: bool) -> None:
    """Make the standard streams safe to use; called first thing in a run."""
    global _output_started
    _output_started = False
    closed = _hold_standard_fds()
    if sys.stdout is None or 1 in closed:
        sys.stdout = _Closed()
    if sys.stderr is None or 2 in closed:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")
    if 0 in closed:
        sys.stdin = None
    sys.stdout = _buffered(sys.stdout)
    for stream, utf8 in ((sys.stdout, json_mode), (sys.stderr, False)):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is None:
            continue
        try:
            if utf8:
                reconfigure(encoding="utf-8", errors="backslashreplace")
            else:
                reconfigure(errors="backslashreplace")
        except (ValueError, OSError, LookupError):
            pass
    if not isinstance(sys.stdout, _Checked):
        sys.stdout = _Checked(sys.stdout, "standard output")


def flush_stdout() -> None:
    sys.stdout.flush()


def _silence(fd: int) -> None:
    """Point ``fd`` at /dev/null, so what is still buffered for it goes nowhere quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)
    except OSError:
        pass


def silence_stdout() -> None:
    """Send whatever is still buffered for stdout to /dev/null, from now on."""
    _silence(1)
    sys.stdout = open(os.devnull, "w", encoding="utf-8")


def say(text: str) -> None:
    """A line on stderr; if stderr itself cannot be written, there is nobody to tell."""
    try:
        sys.stderr.write(text.rstrip("\n") + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        _silence_stderr()


def _silence_stderr() -> None:
    _silence(2)
    sys.stderr = open(os.devnull, "w", encoding="utf-8")


def finish() -> None:
    """Flush stderr before the interpreter does, so a failure there cannot print."""
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        _silence_stderr()


def interrupted(json_mode: bool) -> int:
    """Report a Ctrl-C that came before the error boundary; return its exit code, 130."""
    if json_mode:
        sys.stdout.write('{"error": {"kind": "interrupted", "message": "interrupted"}}\n')
    else:
        sys.stderr.write("autograd-cli: error: interrupted\n")
    return 130
