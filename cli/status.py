"""Exit codes and the signals that end a run, in one place (SPEC.md, "Exit codes")."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    #: found during evaluation: shapes, non-scalar output without --grad-output, GPU, limits;
    #: also output that could not be written completely (a full disk, EIO, a closed stdout)
    EVALUATION_ERROR = 1
    #: what the user typed is wrong, found before evaluation: syntax, names, values, options
    USAGE_ERROR = 2
    #: stopped by a hang-up (128 + SIGHUP)
    HANGUP = 129
    #: interrupted by Ctrl-C (128 + SIGINT)
    INTERRUPTED = 130
    #: the reader of stdout went away (128 + SIGPIPE, as `seq 1e9 | head -1` ends)
    BROKEN_PIPE = 141
    #: stopped by SIGTERM (128 + SIGTERM)
    TERMINATED = 143


#: the signals that end a run cleanly (temporary files removed, completed output kept)
STOP_SIGNALS = {signal.SIGINT: ExitCode.INTERRUPTED, signal.SIGTERM: ExitCode.TERMINATED}
if hasattr(signal, "SIGHUP"):
    STOP_SIGNALS[signal.SIGHUP] = ExitCode.HANGUP


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: unwind like KeyboardInterrupt does for SIGINT.

    A BaseException, so ``except Exception`` blocks do not swallow it and
    ``finally``/``except BaseException`` clean-ups (temporary files) still run.
    """

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return int(STOP_SIGNALS.get(self.signum, 128 + int(self.signum)))


class TimedOut(BaseException):
    """The ``--timeout`` ran out (SIGALRM): unwind like :class:`Terminated`, then report an
    error of kind ``limit`` with exit 1 (a limit exceeded, SPEC's "Exit codes").

    A BaseException, so ``except Exception`` blocks (a batch row's own error, a fallback)
    cannot take it for an error of the input.
    """

    def __init__(self, seconds: float):
        super().__init__(seconds)
        self.seconds = seconds

    @property
    def message(self) -> str:
        return (
            f"stopped after the --timeout of {format_seconds(self.seconds)} "
            f"(raise it with --timeout SECONDS or AUTOGRAD_CLI_TIMEOUT=SECONDS; 0 for none)"
        )


def format_seconds(seconds: float) -> str:
    return f"{seconds:g} s"


#: how often SIGALRM comes again after the deadline, until the block has ended
REPEAT_SECONDS = 1.0


@contextlib.contextmanager
def deadline(seconds: float | None, handler=None) -> Iterator[None]:
    """Within the block, SIGALRM arrives after ``seconds`` (None: never) and ``handler``
    (default: raise :class:`TimedOut`) runs.  The timer is stopped and the previous handler
    put back when the block ends, however it ends.  Where no timer can be set (not the main
    thread, no ``setitimer``), the block runs without one."""
    if not seconds or not hasattr(signal, "setitimer"):
        yield
        return

    def _raise(signum, frame):
        raise TimedOut(seconds)

    try:
        previous = signal.signal(signal.SIGALRM, handler or _raise)
    except (ValueError, OSError):  # not the main thread
        yield
        return
    try:
        # Repeating: a signal handler's exception raised while Python runs a garbage
        # collector callback or a __del__ is printed and dropped, not raised; the next
        # alarm, a second later, raises it again where it counts.
        signal.setitimer(signal.ITIMER_REAL, seconds, REPEAT_SECONDS)
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        try:
            signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)
        except (ValueError, OSError, TypeError):
            pass


def exit_code_for_signal(signum: int) -> int:
    return int(STOP_SIGNALS.get(signum, 128 + int(signum)))


def _raise_terminated(signum, frame):
    raise Terminated(signum)


def install_stop_handlers() -> None:
    """SIGTERM and SIGHUP raise :class:`Terminated` (SIGINT already raises KeyboardInterrupt)."""
    for signum in STOP_SIGNALS:
        if signum == signal.SIGINT:
            continue
        try:
            if signal.getsignal(signum) == signal.SIG_IGN:
                continue  # ignored on purpose (nohup, a background job): stay ignored
            signal.signal(signum, _raise_terminated)
        except (ValueError, OSError):  # not the main thread, or not allowed here
            pass
