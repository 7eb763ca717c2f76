"""Entry point and the error boundary: every exception becomes a message and an exit code.

No input ever produces a Python traceback (set AUTOGRAD_CLI_DEBUG=1 to see one
for an internal error).  With ``--json`` anywhere on the command line, errors
are a JSON document on stdout too.  Exit codes are in :mod:`.status`: 0, 1
(evaluation, or output that could not be written), 2 (usage), 129/130/143
(SIGHUP, Ctrl-C, SIGTERM) and 141 (the reader of stdout went away).
"""

from __future__ import annotations

import contextvars
import os
import sys

from . import helptext, streams
from .completion import COMPLETE_VAR, completion_class
from .status import ExitCode, install_stop_handlers
from .streams import interrupted

# Nothing above loads NumPy, the op table or Typer: ``--version`` and the top-level help
# answer without them (see ``_answer_at_once``).  The rest is imported where it is used.


def _report(json_mode: bool, kind: str, message: str, caret: str | None = None, **details) -> None:
    """The error, made safe to show: control characters escaped, long text cut short.

    With ``--json`` it is one JSON document on stdout; when stdout cannot take it
    (full, closed, gone), the message goes to stderr instead.
    """
    from ..core.safetext import safe_error, visible
    from . import render

    message, details = safe_error(message, details)
    if json_mode:
        try:
            render.emit_json(render.error_json(kind, message, **details))
            streams.flush_stdout()
            return
        except (OSError, streams.OutputError):
            streams.silence_stdout()
    streams.say(render.error_text(message, None if caret is None else visible(caret)))


def _json_requested(argv: list[str]) -> bool:
    return any(a in ("--json", "--format=json") for a in argv) or any(
        a == "--format" and b == "json" for a, b in zip(argv, argv[1:])
    )


def normalize_argv(command, argv: list[str]) -> list[str]:
    """Put the expression first among a command's arguments, so Click assigns it right.

    Variables are unknown options (``--a 2``), which Click passes through
    without knowing that ``2`` belongs to ``--a``: ``grad --a 2 "a*2"`` would
    otherwise take ``--a`` as the expression.  Here the command's own options
    keep their values, every other ``--NAME VALUE`` pair stays a pair, and the
    first remaining token (or the one after ``--``) is the expression.  An
    expression starting with ``-`` gets a leading space so Click does not read
    it as an option (the command strips it again).
    """
    from . import options
    from .commands.common import OPTIONAL_VALUES, OPTIONAL_WORDS, looks_numeric

    if not argv or not hasattr(command, "commands") or argv[0] not in command.commands:
        return argv
    sub = command.commands[argv[0]]
    takes_value = {}
    for param in sub.params:
        for opt in getattr(param, "opts", []) + getattr(param, "secondary_opts", []):
            if opt.startswith("-"):
                takes_value[opt] = not getattr(param, "is_flag", False)
    rest = argv[1:]
    expression = None
    others: list[str] = []
    i = 0
    while i < len(rest):
        token = rest[i]
        if token == "--":
            if expression is None and i + 1 < len(rest):
                expression = rest[i + 1]
                i += 2
                continue
            others.extend(rest[i:])
            break
        name = token.split("=", 1)[0]
        optional = OPTIONAL_VALUES.get((argv[0], name))
        if optional is not None and "=" not in token:
            # an option whose value may be left out (``--check`` or ``--check 50``)
            words = OPTIONAL_WORDS.get((argv[0], name))
            given = i + 1 < len(rest) and (rest[i + 1] in words if words else rest[i + 1].isdigit())
            others.extend([token, rest[i + 1] if given else optional])
            i += 2 if given else 1
            continue
        if name in takes_value:
            others.append(token)
            if takes_value[name] and "=" not in token and i + 1 < len(rest):
                others.append(rest[i + 1])
                i += 1
        elif token.startswith("--") and len(token) > 2:
            others.append(token)
            # ``--a --b 1``: --a has no value (the command says so), --b is not its value
            if "=" not in token and i + 1 < len(rest) and not options.is_option_name(rest[i + 1]):
                others.append(rest[i + 1])
                i += 1
        elif expression is None and not (
            token.startswith("-") and len(token) > 1 and not looks_numeric(token)
        ):
            expression = token
        else:
            others.append(token)
        i += 1
    if expression is None:
        return argv
    if expression.startswith("-") and expression != "-":
        expression = " " + expression
    return [argv[0], expression] + others


#: the options every command takes (SPEC: "Global options on every command"), as the
#: top-level help lists them; before the command's name they are moved after it
#: (``autograd-cli --json grad ...``)
GLOBAL_FLAGS = tuple(name for name, value, _ in helptext.GLOBAL_OPTIONS if not value)
GLOBAL_VALUED = tuple(name for name, value, _ in helptext.GLOBAL_OPTIONS if value)
HELP = "--help"
VERSION = "--version"


def _lead(argv: list[str]) -> tuple[list[int], int]:
    """The global options, ``--help`` and ``--version`` (``-V``) that lead ``argv``: the
    indexes of the flags among them, and the index of the first token after them (where
    the command's name is, when there is one)."""
    flags: list[int] = []
    i = 0
    while i < len(argv):
        token = argv[i]
        name = token.split("=", 1)[0]
        if token in GLOBAL_FLAGS or token in (HELP, VERSION, "-V"):
            flags.append(i)
            i += 1
        elif name in GLOBAL_VALUED and "=" in token:
            i += 1
        elif name in GLOBAL_VALUED and i + 1 < len(argv):
            i += 2
        else:
            break
    return flags, i


def global_options_end(argv: list[str]) -> int:
    """The index of the first token after the global options (and ``--help``, ``--version``)
    that lead ``argv``: where the command's name is, when there is one."""
    return _lead(argv)[1]


def conventions(argv: list[str]) -> list[str]:
    """What Unix, Click and git users type, spelt as the command line reads it.

    ``-h`` is ``--help`` (anywhere before ``--``) and ``-V`` before the command is
    ``--version``; in the command's place, ``help`` is ``--help`` (``help grad`` is
    ``grad --help``) and ``version`` is ``--version``.
    """
    argv = _dash_h_is_help(argv)
    flags, i = _lead(argv)
    argv = [VERSION if k in flags and t == "-V" else t for k, t in enumerate(argv)]
    if i < len(argv) and argv[i] == "version":
        argv[i] = VERSION
    elif i < len(argv) and argv[i] == "help":
        rest = argv[i + 1 :]
        if rest[:1] == ["help"]:  # help help: the top-level help
            rest = rest[1:]
        named = rest[:1] if rest and not rest[0].startswith("-") else []
        argv = argv[:i] + named + [HELP] + rest[len(named) :]
    return argv


def click_command(argv: list[str]):
    """The Click command for ``argv``, finished (``app.finish``: the shared options, the
    plain converters).

    Building Click commands from the typed signatures of every command is a sixth of a cold
    start (issue 12), so when ``argv`` names a command (after any global options) the group
    is built with that command alone: it parses, converts and helps exactly as in the full
    group, which is built only when no command is named (shell completion, an unknown
    option before any command: Click's messages).
    """
    import copy

    import typer

    from .app import app, describe_commands, finish

    describe_commands()
    i = global_options_end(argv)
    infos = [c for c in app.registered_commands if i < len(argv) and c.name == argv[i]]
    if len(infos) == 1:
        one = copy.copy(app)  # a shallow copy: the app's own list of commands is not touched
        one.registered_commands = infos
        command = typer.main.get_group(one)
    else:
        command = typer.main.get_command(app)
    finish(command)
    return command


def hoist_global_options(command, argv: list[str]) -> list[str]:
    """Global options given before the command's name go after it.

    ``autograd-cli --json --dtype float32 grad x --x 1`` is ``autograd-cli grad --json
    --dtype float32 x --x 1``.  With no command after them they are dropped (``--help``
    stays), so ``autograd-cli --json --help`` is the top-level help.
    """
    commands = getattr(command, "commands", {})
    i = global_options_end(argv)
    moved = argv[:i]
    if not moved:
        return argv
    if i < len(argv) and argv[i] in commands:
        return [argv[i]] + moved + argv[i + 1 :]
    # No command next: the top level (its help, "no command", or Click's "No such command")
    return ([HELP] if HELP in moved else []) + argv[i:]


def _help_document(command, argv: list[str]) -> dict | None:
    """With ``--json``, ``--help`` is one JSON document: ``{"command": ..., "help": text}``.

    ``argv`` is what Click is about to parse (the command's name first, the expression
    placed, see :func:`normalize_argv`); the help was asked for when Click's own parser
    finds ``--help`` in it, wherever it stands (``eval --json -- x --x 1 --help``), and not
    when ``--help`` is the expression (``eval -- --help``) or an option's value.
    """
    from .clicompat import click

    commands = getattr(command, "commands", {})
    if not argv or argv[0] not in commands:
        return None
    name, sub = argv[0], commands[argv[0]]
    with click.Context(command, info_name="autograd-cli") as ctx:
        settings = dict(sub.context_settings)
        with sub.context_class(sub, info_name=name, parent=ctx, **settings) as sub_ctx:
            try:
                found, _, _ = sub.make_parser(sub_ctx).parse_args(list(argv[1:]))
            except click.ClickException:
                return None  # Click reports it when the command runs
            helper = sub.get_help_option(sub_ctx)  # "help", or Click's own name for it
            if helper is None or not found.get(helper.name):
                return None
            return {"command": f"autograd-cli {name}", "help": sub.get_help(sub_ctx)}


def _no_command_message() -> str:
    names = ", ".join(helptext.COMMANDS)
    return f"no command given: the commands are {names} (autograd-cli --help describes them)"


def _sanitize_argv(argv: list[str]) -> list[str]:
    """Arguments that held bytes which are not UTF-8 (Python keeps them as lone
    surrogates) get U+FFFD in their place, so every echo of them is valid UTF-8."""
    out = []
    for arg in argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            arg = arg.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            from . import options

            options.note_replaced("an argument")
        out.append(arg)
    return out


def shell_complete(instruction: str) -> int:
    """Print the completions (``complete_SHELL``) or the script (``source_SHELL``)."""
    action, _, shell = instruction.partition("_")
    try:
        command = click_command([])  # every command: completion lists them
        completer = completion_class(shell)(command, {}, "autograd-cli", COMPLETE_VAR)
        text = completer.source() if action == "source" else completer.complete()
        sys.stdout.write(text + ("\n" if text else ""))
        sys.stdout.flush()
    except BrokenPipeError:
        streams.silence_stdout()
        return ExitCode.BROKEN_PIPE
    # Nothing narrower will do: this is the error boundary of a completion request (a Tab
    # in the user's shell, no --json, no message): Click's resolver parses the half-typed
    # line through every command's parameters and Typer's shell classes read the shell's
    # variables (a KeyError when one is missing), and whatever fails, the shell must get
    # no completions and no traceback on its prompt.
    except Exception:  # noqa: BLE001 - see above
        return ExitCode.EVALUATION_ERROR
    return ExitCode.OK


def _answer(json_mode: bool, text: str, document: dict, code: int = ExitCode.OK) -> int:
    """Print ``text`` (with --json: ``document``, one JSON document) and return ``code``;
    a failed write is reported as every run reports it."""
    streams.prepare(json_mode)
    try:
        if json_mode:
            from .jsonout import dumps

            text = dumps(document)
        sys.stdout.write(text.rstrip("\n") + "\n")
        streams.flush_stdout()
    except (BrokenPipeError, streams.OutputError) as exc:
        return _write_failed(exc)
    return code


def _write_failed(exc: BrokenPipeError | streams.OutputError) -> int:
    """A failed write to stdout: nothing more goes there.  The reader went away (`| head
    -1`): end quietly, as `seq 1e9 | head -1` does; any other failure is said on stderr."""
    streams.silence_stdout()
    if isinstance(exc, BrokenPipeError):
        return ExitCode.BROKEN_PIPE
    streams.say(f"autograd-cli: error: {exc}")
    return ExitCode.EVALUATION_ERROR


def _answer_at_once(argv: list[str] | None) -> int | None:
    """``--version`` and the top-level help, answered before NumPy, the op table or Typer
    load (a few hundred milliseconds); None for any other command line.

    ``--version`` (``-V``, ``version``) among the options before the command: the version,
    exit 0 (``{"version": ...}`` with ``--json``).  ``--help`` (``-h``, ``help``) with no
    command: the commands and the global options, exit 0 (with ``--json``,
    ``{"command": "autograd-cli", "help": text}``); no arguments at all, not on a terminal:
    the same help, exit 2.
    """
    if argv is None:
        if os.environ.get(COMPLETE_VAR):
            return None  # the shell asks for completions
        argv = sys.argv[1:]
    argv = conventions(list(argv))
    flags, end = _lead(argv)
    json_mode = _json_requested(argv)
    if any(argv[k] == VERSION for k in flags):
        from importlib.metadata import version  # the facade's __version__, as installed

        __version__ = version("autograd-cli")
        text = f"autograd-cli {__version__}"
        return _answer(json_mode, text, {"version": __version__})
    asked = any(argv[k] == HELP for k in flags) and end == len(argv)
    if not (asked or (not argv and not _on_a_terminal())):
        return None
    text = helptext.top_level_help()
    document = {"command": "autograd-cli", "help": text.rstrip("\n")}  # as Click's get_help
    return _answer(json_mode, text, document, ExitCode.OK if argv else ExitCode.USAGE_ERROR)


def _dash_h_is_help(argv: list[str]) -> list[str]:
    """``-h`` is ``--help`` (the Unix convention), as a token of its own before ``--``.

    Not a Click short option: Click would read ``-tanh(x)`` (an expression that should
    have come after ``--``) as a cluster of short options holding ``h``, and print help.
    """
    end = argv.index("--") if "--" in argv else len(argv)
    return [HELP if i < end and t == "-h" else t for i, t in enumerate(argv)]


def _on_a_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def run(argv: list[str] | None = None) -> int:
    """Run the command line on ``argv``; return the exit code (see :func:`_run`).

    ``--version`` and the top-level help are answered first, with nothing heavy loaded.
    Otherwise the process is left as the run found it, however the run ends: grad mode,
    the device and dtype, and every ContextVar (NumPy's error state, the memory limit) are
    the caller's again.  A ``--timeout`` alarm or a Ctrl-C can arrive between a block's
    setup and its ``try`` (``no_grad``, ``backend.using``) and skip the block's restore; in
    a one-shot run that dies with the process, but the REPL, a library caller or a test
    suite runs on in the same process (CI once saw grad mode left off for every later test).
    """
    try:
        code = _answer_at_once(argv)
        if code is not None:
            return code
        from ..core import autograd, backend  # NumPy and the op table: the heavy part
    except KeyboardInterrupt:
        return interrupted(_json_requested(list(sys.argv[1:] if argv is None else argv)))

    grad_enabled = autograd.is_grad_enabled()
    settings = backend._settings()
    try:
        return contextvars.copy_context().run(_run, argv)
    finally:
        autograd.set_grad_enabled(grad_enabled)
        backend._install(*settings)


def _run(argv: list[str] | None = None) -> int:
    """Run the command line on ``argv``; return the exit code.

    Every way a run can end is mapped here to a message on stderr (or one JSON
    document on stdout with ``--json``) and an exit code from ``status.ExitCode``.
    Output is flushed inside the boundary, so a write that fails at the end (a full
    disk, ``/dev/full``) is reported like one that fails in the middle.
    """
    from . import options

    options.forget_replaced()  # a run in the same process (repl, tests) starts clean
    instruction = os.environ.get(COMPLETE_VAR)
    if instruction and argv is None:  # the shell asks for completions (see `completion`)
        return shell_complete(instruction)
    argv = conventions(_sanitize_argv(list(sys.argv[1:] if argv is None else argv)))
    if not argv and _on_a_terminal():  # `autograd-cli` alone at a terminal: a session
        argv = ["repl"]
    json_mode = _json_requested(argv)
    streams.prepare(json_mode)
    try:
        import typer

        from .clicompat import click
        from .commands.shared import RUNNER

        end = global_options_end(argv)
        if end == len(argv):  # global options only (--help and --version were answered)
            raise click.exceptions.UsageError(_no_command_message())
        if argv[end] not in helptext.COMMANDS and not argv[end].startswith("-"):
            raise click.exceptions.UsageError(helptext.unknown_command(argv[end]))
        command = click_command(argv)
        argv = normalize_argv(command, hoist_global_options(command, argv))
        if json_mode:
            document = _help_document(command, argv)
            if document is not None:
                from . import render

                render.emit_json(document)
                streams.flush_stdout()
                return ExitCode.OK
        try:
            # Not ``command.main``: Typer's wrapper there turns Ctrl-C into a silent exit
            # 130 and a broken pipe into exit 1; every ending is decided here instead.
            with command.make_context("autograd-cli", argv) as ctx:
                ctx.meta[RUNNER] = run  # the session runs each of its lines through it
                code = command.invoke(ctx)
            code = code if isinstance(code, int) else ExitCode.OK
        except typer.Exit as exc:  # --help and friends
            code = exc.exit_code
        except click.exceptions.NoArgsIsHelpError as exc:
            sys.stdout.write(exc.format_message() + "\n")
            code = ExitCode.USAGE_ERROR
        streams.flush_stdout()
        return code
    except (BrokenPipeError, streams.OutputError) as exc:
        return _write_failed(exc)
    except BaseException as exc:  # noqa: BLE001 - the one place every error is caught
        return _failure(json_mode, exc)


def _failure(json_mode: bool, exc: BaseException) -> int:
    """Report ``exc`` (not a failed write to stdout) and return its exit code: its kind,
    message and code are ``status.classify``'s, as a batch line's error record's are."""
    from . import options
    from .status import classify

    if isinstance(exc, SystemExit):
        return exc.code if isinstance(exc.code, int) else ExitCode.EVALUATION_ERROR
    failure = classify(exc)
    message, details = failure.message, failure.details
    caret = details.get("context")  # a parse error's caret text: JSON output holds it
    if caret is not None and not json_mode:
        details = {**details, "context": None}
    if not failure.known:
        if os.environ.get("AUTOGRAD_CLI_DEBUG"):
            raise exc
        message += " (please report it; AUTOGRAD_CLI_DEBUG=1 shows a traceback)"
    _report(json_mode, failure.kind, message + options.replaced_note(), caret, **details)
    return failure.code


def main() -> None:
    """The console script: SIGTERM/SIGHUP end a run like Ctrl-C does, then ``run``."""
    import warnings

    # NumPy's floating-point RuntimeWarnings are never output (the tool reports nan and inf
    # in its own warnings); core computes under errstate, and this keeps any path it missed
    # off stderr.  Other warnings still show.
    warnings.filterwarnings(
        "ignore",
        message=r"(invalid value|overflow|divide by zero|underflow) encountered",
        category=RuntimeWarning,
    )
    install_stop_handlers()
    code = run()
    streams.finish()
    sys.exit(code)
