"""Entry point and the error boundary: every exception becomes a message and an exit code.

No input ever produces a Python traceback (set AUTOGRAD_CLI_DEBUG=1 to see one
for an internal error).  With ``--json`` anywhere on the command line, errors
are a JSON document on stdout too.
"""

from __future__ import annotations

import os
import sys

from ..core.errors import AutogradCliError, InputError, ParseError
from .clicompat import click
from .status import ExitCode


def _report(json_mode: bool, kind: str, message: str, caret: str | None = None,
            **details) -> None:
    from . import render

    if json_mode:
        render.emit_json(render.error_json(kind, message, **details))
    else:
        render.print_error(message, caret)


def _json_requested(argv: list[str]) -> bool:
    return "--json" in argv


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
        if name in takes_value:
            others.append(token)
            if takes_value[name] and "=" not in token and i + 1 < len(rest):
                others.append(rest[i + 1])
                i += 1
        elif token.startswith("--") and len(token) > 2:
            others.append(token)
            if "=" not in token and i + 1 < len(rest):
                others.append(rest[i + 1])
                i += 1
        elif expression is None and not (token.startswith("-") and len(token) > 1
                                          and not _looks_numeric(token)):
            expression = token
        else:
            others.append(token)
        i += 1
    if expression is None:
        return argv
    if expression.startswith("-") and expression != "-":
        expression = " " + expression
    return [argv[0], expression] + others


def _looks_numeric(token: str) -> bool:
    try:
        float(token)
        return True
    except ValueError:
        return False


def run(argv: list[str] | None = None) -> int:
    """Run the command line on ``argv``; return the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    json_mode = _json_requested(argv)
    from .app import app
    import typer

    command = typer.main.get_command(app)
    argv = normalize_argv(command, argv)
    try:
        code = command.main(args=argv, prog_name="autograd-cli", standalone_mode=False)
        # Without standalone mode Click returns typer.Exit's code instead of raising it.
        return code if isinstance(code, int) else ExitCode.OK
    except typer.Exit as exc:  # --help and friends
        return exc.exit_code
    except click.exceptions.NoArgsIsHelpError as exc:
        sys.stdout.write(exc.format_message() + "\n")
        return ExitCode.USAGE_ERROR
    except typer.Abort:
        _report(json_mode, "interrupted", "interrupted")
        return ExitCode.INTERRUPTED
    except click.ClickException as exc:
        message = exc.format_message()
        _report(json_mode, "usage", message)
        return ExitCode.USAGE_ERROR
    except ParseError as exc:
        _report(json_mode, exc.kind, exc.message, exc.context, line=exc.line, column=exc.column,
                context=exc.context if json_mode else None)
        return ExitCode.USAGE_ERROR
    except AutogradCliError as exc:
        code = ExitCode.USAGE_ERROR if isinstance(exc, InputError) else ExitCode.EVALUATION_ERROR
        _report(json_mode, exc.kind, exc.message, **exc.details)
        return code
    except KeyboardInterrupt:
        _report(json_mode, "interrupted", "interrupted")
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): not an error worth a message.
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return ExitCode.OK
    except MemoryError:
        _report(json_mode, "limit", "out of memory: the arrays are too large for this machine")
        return ExitCode.EVALUATION_ERROR
    except RecursionError:
        _report(json_mode, "limit", "the input nests too deeply")
        return ExitCode.EVALUATION_ERROR
    except Exception as exc:  # noqa: BLE001 - the one place every other error is caught
        if os.environ.get("AUTOGRAD_CLI_DEBUG"):
            raise
        _report(json_mode, "internal", f"internal error: {exc.__class__.__name__}: {exc} "
                                       f"(please report it; AUTOGRAD_CLI_DEBUG=1 shows a traceback)")
        return ExitCode.EVALUATION_ERROR


def main() -> None:
    sys.exit(run())
