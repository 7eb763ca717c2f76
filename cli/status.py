"""Exit codes, the signals that end a run, and what each exception means, in one place
(SPEC.md, "Exit codes"): :func:`classify` maps an exception to its error kind, message and
exit code for both the error boundary (cli/main.py) and a batch line's error record; a
library message's parameters (``wrt``) come out spelled as the command line's flags
(:func:`flag`: ``--wrt``) or, in a batch line's record, as its keys (``"wrt"``)."""

from __future__ import annotations

import contextlib
import functools
import signal
import sys
from collections.abc import Callable, Iterator
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
        # collector callback or a __del__ is dropped, not raised (and not printed:
        # unprinted_timeouts); the next alarm, a second later, raises it again where it counts.
        signal.setitimer(signal.ITIMER_REAL, seconds, REPEAT_SECONDS)
        with unprinted_timeouts():
            yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        try:
            signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)
        except (ValueError, OSError, TypeError):
            pass


@contextlib.contextmanager
def unprinted_timeouts() -> Iterator[None]:
    """While a repeating --timeout alarm is set: a :class:`TimedOut` that Python drops (raised
    inside a garbage collector callback or a ``__del__``, where no exception can propagate)
    is not printed as "Exception ignored in ..." on stderr, since the next alarm raises it
    again where it counts.  Any other exception dropped so goes to the hook that was there."""
    previous = sys.unraisablehook

    def hook(unraisable) -> None:
        if not (unraisable.exc_type and issubclass(unraisable.exc_type, TimedOut)):
            previous(unraisable)

    sys.unraisablehook = hook
    try:
        yield
    finally:
        if sys.unraisablehook is hook:  # (not replaced meanwhile by someone else)
            sys.unraisablehook = previous


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


#: the library's parameters the command line spells other than as ``--`` and the name
_FLAGS = {"values": "--vars"}  # a program's variables' values (values= in the library)


def flag(parameter: str) -> str:
    """The command line's spelling of a parameter a library message names (``grad_output``:
    ``--grad-output``; :meth:`~autograd_cli.core.errors.AutogradCliError.spelled`)."""
    return _FLAGS.get(parameter) or "--" + parameter.replace("_", "-")


#: how the command line says a missing variable is given, after the error's message
GIVE_FLAGS = " (give --{name} VALUE, --var {name}=VALUE or --vars JSON)"


class Failure:
    """What an exception means to the user: SPEC's error ``kind``, the ``message``, the
    exit ``code``, the error document's extra ``details``; ``known`` is False for an
    exception nothing expects (kind ``internal``: a bug, to be reported).

    A plain class, not a dataclass: ``dataclasses`` imports ``inspect`` (a tenth of
    ``--version``'s start-up), and this module loads on every run."""

    __slots__ = ("kind", "message", "code", "details", "known")

    def __init__(
        self,
        kind: str,
        message: str,
        code: int = ExitCode.EVALUATION_ERROR,
        details: dict | None = None,
        known: bool = True,
    ):
        self.kind, self.message, self.code = kind, message, code
        self.details = {} if details is None else details
        self.known = known

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"Failure({fields})"

    def __eq__(self, other) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass was


@functools.cache
def _classes() -> tuple:
    """The exception classes ``classify`` tells apart, imported once, on first use (this
    module stays light: ``--version`` answers without Typer or NumPy)."""
    import typer

    from ..core.errors import AutogradCliError, InputError, ParseError
    from .clicompat import click

    click_errors = (click.ClickException, click.exceptions.NoSuchOption)
    return (typer.Abort, *click_errors, AutogradCliError, InputError, ParseError)


def classify(
    exc: BaseException, spell: Callable[[str], str] = flag, give: str = GIVE_FLAGS
) -> Failure:
    """The one map from an exception to its :class:`Failure` (SystemExit is not an error:
    the boundary returns its code).  A parse error's details carry its ``context`` (the
    caret text), which only JSON output shows.  ``spell``: how the message names the
    parameters a library message names, ``give`` how a missing value is given (the command
    line's flags; a batch line's keys, ``records.exception_doc``)."""
    Abort, ClickException, NoSuchOption, AutogradCliError, InputError, ParseError = _classes()
    # the errors of the input first (a batch line's usual case), then the run's endings
    if isinstance(exc, ParseError):
        details = {**exc.details, "context": exc.context}
        return Failure(exc.kind, exc.message, ExitCode.USAGE_ERROR, details)
    if isinstance(exc, AutogradCliError):  # its message in the caller's words
        code = ExitCode.USAGE_ERROR if isinstance(exc, InputError) else ExitCode.EVALUATION_ERROR
        message = exc.spelled(spell)
        if exc.kind == "missing_value" and not getattr(exc, "hinted", True):
            message += give.format(name=exc.details.get("variable"))
        return Failure(exc.kind, message, code, exc.details)
    if isinstance(exc, (KeyboardInterrupt, Abort)):
        return Failure("interrupted", "interrupted", ExitCode.INTERRUPTED)
    if isinstance(exc, Terminated):
        name = {ExitCode.HANGUP: "SIGHUP", ExitCode.TERMINATED: "SIGTERM"}.get(
            exc.exit_code, f"signal {exc.signum}"
        )
        return Failure("interrupted", f"interrupted ({name})", exc.exit_code)
    if isinstance(exc, TimedOut):
        return Failure("limit", exc.message)
    if isinstance(exc, ClickException):
        message = exc.format_message()
        if isinstance(exc, NoSuchOption) and exc.option_name == "-h":
            message += " (did you mean --help?)"
        return Failure("usage", message, ExitCode.USAGE_ERROR)
    if isinstance(exc, MemoryError):
        return Failure("limit", "out of memory: the arrays are too large for this machine")
    if isinstance(exc, RecursionError):
        return Failure("limit", "the input nests too deeply")
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return Failure("io", f"{where}{exc.strerror or exc}")
    message = f"internal error: {exc.__class__.__name__}: {exc}"
    return Failure("internal", message, known=False)
