"""Exit codes and the signals that end a run, in one place (SPEC.md, "Exit codes")."""

from __future__ import annotations

import signal
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
