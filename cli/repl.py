"""The interactive session: ``autograd-cli repl`` (or ``autograd-cli`` alone on a terminal).

A line is one of:

* ``NAME = EXPR``: evaluate EXPR with the session's variables and keep it as NAME;
* ``:grad EXPR [options]`` (also ``:eval :hessian :jacobian :diff :explain :check
  :graph :taylor :plot :propagate :minimize :solve :critical :codegen``): run that command on
  EXPR, with the session's variables that EXPR uses (options as on the command line:
  ``:diff x**3 --order 2``, ``:plot sin(x) --x -3:3``);
* ``:vars`` lists the variables, ``:del NAME`` forgets one, ``:functions`` lists the
  language's functions, ``:help``, ``:quit``;
* anything else is an expression (or a ``;``-separated program) to evaluate.

The parser and the engine are loaded once, so each line costs only its own work.  On
a terminal the session uses prompt_toolkit (history kept in the user's data folder,
completion of commands, functions and variables); with stdin not a terminal it reads
the same lines and prints one result per line (with ``--json``, one JSON document per
line), so it can be scripted.  Either way a line ending in a backslash continues on the
next, as in Python and the shell.  Piped lines end with exit code 1 when any line failed,
else 0 (a script's status); a session typed at a terminal ends with 0 (its errors were
answered line by line).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import textwrap
from pathlib import Path

import typer

COMMANDS = (
    "eval",
    "grad",
    "hessian",
    "jacobian",
    "diff",
    "explain",
    "check",
    "graph",
    "taylor",
    "plot",
    "propagate",
    "minimize",
    "solve",
    "critical",
    "codegen",
)
META = ("vars", "del", "functions", "help", "quit", "exit", "q")
# words that get the colon hint when typed without it: not the ones that end the session
# ("q x" typed for q*x must not be answered with ":q x", which quits)
_HINTED = COMMANDS + ("vars", "del", "functions", "help")
_ASSIGN = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=(?!=)\s*(.+)$", re.DOTALL)

HELP = """\
x = 2                 set a variable (any expression of the session's variables)
x*sin(x)              evaluate an expression (or a ';'-separated program)
:grad EXPR [opts]     run a command on EXPR with the session's variables:
                      :eval :grad :hessian :jacobian :diff :explain :check :graph
                      :taylor :plot :propagate :minimize :solve :critical
                      :codegen (the value and gradient as code: --target numpy|torch|jax|c)
:vars                 the variables;  :del NAME  forget one
:functions            the language's functions
... \\                 a trailing backslash continues the line on the next
:help                 this text;  :quit  (or Ctrl-D) leave"""


class Session:
    """The variables and the options every line shares; :meth:`line` runs one line.

    ``run`` runs a command line in this process and returns its exit code (the command
    line's :func:`autograd_cli.cli.main.run`, which the repl command hands in)."""

    def __init__(self, json_out: bool = False, device: str = "cpu", dtype: str = "float64", *, run):
        self.run = run
        self.json = json_out
        self.globals = ["--device", device, "--dtype", dtype] + (["--json"] if json_out else [])
        self.variables: dict = {}
        self.failed = 0
        self._parsed: tuple = (None, [], True)

    # ---- one line --------------------------------------------------------------------------
    def line(self, text: str) -> bool:
        """Run one line; False when the session should end."""
        text = text.strip()
        if not text or text.startswith("#"):
            return True
        if text.startswith(":"):
            return self._meta(text[1:])
        m = _ASSIGN.match(text)
        if m is not None and ";" not in m.group(2) and "\n" not in m.group(2):
            self._assign(m.group(1), m.group(2))
            return True
        word, _, rest = text.partition(" ")
        if word in _HINTED and word not in self.variables and rest and not self._parses(text):
            # "grad x**2" is no expression (the parser would suggest grad*x): a command
            # typed without its colon
            self._error("usage", f"a command starts with a colon in the session: :{text}")
            return True
        if not self._missing(text):
            self._run("eval", [text])
        return True

    def _meta(self, text: str) -> bool:
        word, _, rest = text.partition(" ")
        word = word.strip()
        if word in ("quit", "exit", "q"):
            return False
        if word == "help":
            self._say(HELP, {"help": HELP})
        elif word == "vars":
            self._say(
                "\n".join(_show(k, v) for k, v in self.variables.items()) or "(none)",
                {"vars": self.variables},
            )
        elif word == "functions":
            from ..core.ops import FUNCTIONS

            names = sorted(FUNCTIONS)
            self._say(textwrap.fill(" ".join(names), 88), {"functions": names})
        elif word == "del":
            names = rest.split()
            unknown = [n for n in names if n not in self.variables]
            if unknown or not names:
                self._error("usage", f":del takes variable names of the session, not {rest!r}")
            for n in names:
                self.variables.pop(n, None)
        elif word in COMMANDS:
            try:
                argv = shlex.split(rest)
            except ValueError as exc:
                self._error("usage", f"cannot split the line: {exc}")
                return True
            if not argv:
                self._error("usage", f":{word} needs an expression: :{word} EXPR [options]")
                return True
            self._run(word, argv)
        else:
            self._error(
                "usage",
                f"unknown command :{word} (:help lists them: :{', :'.join(COMMANDS[:4])}...)",
            )
        return True

    def _assign(self, name: str, text: str) -> None:
        from ..core.program import CONSTANTS

        if name in CONSTANTS:
            self._error("usage", f"{name!r} is a constant of the language; choose another name")
            return
        if self._missing(text):
            return
        doc = self._run("eval", [text], capture=True)
        if doc is None:
            return
        value = doc["value"]
        self.variables[name] = value
        self._say(_show(name, value), {"name": name, "value": value})

    # ---- running a command -----------------------------------------------------------------
    def _inputs(self, expr: str) -> list:
        """The input variables of ``expr`` (none when it does not parse: the command that
        runs it reports the syntax error itself); the last answer is kept, as a line asks
        twice."""
        from ..core.errors import AutogradCliError
        from ..grammar import parse

        if self._parsed[0] != expr:
            try:
                self._parsed = (expr, parse(expr).inputs, True)
            # text the parser refuses, or too deep or large for this machine: the command
            # that runs it reports the error itself (a bug in the parser is not hidden)
            except (AutogradCliError, RecursionError, MemoryError):
                self._parsed = (expr, [], False)
        return self._parsed[1]

    def _parses(self, expr: str) -> bool:
        self._inputs(expr)
        return self._parsed[2]

    def _used(self, expr: str) -> dict:
        """The session's variables that ``expr`` reads (others would be 'unknown variable')."""
        inputs = self._inputs(expr)
        return {k: v for k, v in self.variables.items() if k in inputs}

    def _missing(self, expr: str) -> bool:
        """Report the first variable of ``expr`` that the session has no value for, in the
        session's words (``x = VALUE``, not the command line's ``--x VALUE``); True if one
        was.  Only for the lines the session evaluates itself: on a ``:grad`` line, the
        command's own ``--x VALUE`` is what can be typed there."""
        from ..core.program import missing_value

        for name in self._inputs(expr):
            if name not in self.variables:
                command = f"; the command is :{name}" if name in COMMANDS + META else ""
                exc = missing_value(name, f" (set it first: {name} = VALUE{command})")
                self._error(exc.kind, exc.message, **exc.details)
                return True
        return False

    def _run(self, command: str, argv: list, capture: bool = False):
        """Run ``command`` on argv (the expression first) in this process; with ``capture``,
        return its JSON document (None after an error, which is reported)."""
        expr = argv[0]
        used = self._used(expr)
        extra = ["--vars", json.dumps(used, allow_nan=True)] if used else []
        args = [command, *argv, *extra, *self.globals]
        if capture:
            args = [a for a in args if a != "--json"] + ["--json"]
            import contextlib
            import io

            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer):
                code = self.run(args)
            self._check_stop(code)
            text = buffer.getvalue()
            try:
                doc = json.loads(text) if text.strip() else {}
            except ValueError:
                doc = {}
            if code != 0 or "error" in doc:
                self.failed += 1
                err = doc.get("error", {})
                self._error(
                    err.get("kind", "evaluation"), err.get("message", "failed"), count=False
                )
                return None
            return doc
        code = self.run(args)
        self._check_stop(code)
        if code != 0:
            self.failed += 1
        return None

    @staticmethod
    def _check_stop(code: int) -> None:
        """A line stopped by Ctrl-C (or SIGTERM/SIGHUP) stops the session too, except at an
        interactive prompt, which catches KeyboardInterrupt and asks for the next line."""
        from .status import ExitCode

        if code in (ExitCode.INTERRUPTED, ExitCode.TERMINATED, ExitCode.HANGUP):
            raise typer.Exit(code)  # the line has said so already: end with its code

    # ---- output ----------------------------------------------------------------------------
    def _say(self, text: str, doc: dict) -> None:
        from .render import emit_json

        if self.json:
            emit_json(doc)
        else:
            sys.stdout.write(text + "\n")
        sys.stdout.flush()

    def _error(self, kind: str, message: str, count: bool = True, **details) -> None:
        from ..core.safetext import safe_error
        from .render import emit_json, error_json, error_text

        # the line's own text comes back in some messages: shown as the command line's are
        message, details = safe_error(message, details)
        if count:
            self.failed += 1
        if self.json:
            emit_json(error_json(kind, message, **details))
            sys.stdout.flush()
        else:
            sys.stderr.write(error_text(message) + "\n")
            sys.stderr.flush()


def _show(name: str, value) -> str:
    """``name = value`` with the value as the tables print it (``[[1., 2.]]``; NumPy's
    lines of a matrix aligned under the first)."""
    import numpy

    from .render import format_value

    # a value of a JSON document: numbers, nested lists, and "nan"/"inf"/"-inf" as strings
    lines = format_value(numpy.asarray(value, dtype=float)).splitlines()
    indent = " " * (len(name) + 3)
    return f"{name} = " + f"\n{indent}".join(lines)


def _continues(line: str) -> bool:
    """Whether a line goes on at the next: it ends in a backslash outside a comment.  Each
    line is looked at on its own (the lines before it continued, so they hold no comment),
    so a long run of continued lines costs time linear in their length."""
    return line.endswith("\\") and "#" not in _STRINGS.sub("", line)


#: string literals, whose text may hold a '#'
_STRINGS = re.compile(r""""[^"\n]*"|'[^'\n]*'""")


def _joined(lines: list[str]) -> str:
    """Continued lines as one: each continuing backslash becomes a space, as in Python and
    the shell (``a = 1 + \\`` then ``2`` is ``a = 1 +  2``); the last line is kept whole."""
    return " ".join([line[:-1] for line in lines[:-1]] + lines[-1:])


def history_path() -> Path:
    """Where the interactive history lives: $XDG_DATA_HOME/autograd-cli/history."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
    return Path(base) / "autograd-cli" / "history"


def serve(session: Session, prompt: bool = True) -> int:
    """Run the session on stdin (with the interactive prompt when ``prompt`` and both stdin
    and stdout are terminals); its exit code: 1 when piped lines failed, else 0."""
    if prompt and sys.stdin.isatty() and sys.stdout.isatty():
        _interactive(session)
    else:
        _plain_lines(session)
    return 1 if session.failed and not typed_at_a_terminal() else 0


def _interactive(session: Session) -> None:
    try:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.completion import WordCompleter
        from prompt_toolkit.history import FileHistory, InMemoryHistory
    except ImportError:  # pragma: no cover - prompt_toolkit is a dependency
        return _plain_lines(session, interactive=True)
    from ..core.ops import FUNCTIONS

    path = history_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        history = FileHistory(str(path))
    except OSError:
        history = InMemoryHistory()

    def words():
        return [":" + c for c in COMMANDS + META] + sorted(FUNCTIONS) + list(session.variables)

    prompt = PromptSession(history=history)
    sys.stdout.write("autograd-cli: an interactive session (:help, :quit or Ctrl-D to leave)\n")
    while True:
        try:
            lines = [
                prompt.prompt(
                    "> ",
                    completer=WordCompleter(words(), sentence=True),
                    complete_while_typing=False,
                )
            ]
            while _continues(lines[-1]):
                lines.append(prompt.prompt("… "))
            text = _joined(lines)
        except KeyboardInterrupt:
            continue
        except EOFError:
            break
        if not session.line(text):
            break


def _plain_lines(session: Session, interactive: bool = False) -> None:
    lines: list[str] = []
    for raw in sys.stdin:
        lines.append(raw.rstrip("\n"))
        if _continues(lines[-1]):
            continue
        text, lines = _joined(lines), []
        if not session.line(text):
            break
    if lines:  # the input ended after a backslash
        session.line(_joined(lines)[:-1])


def typed_at_a_terminal() -> bool:
    """Whether a person types the lines (stdin is a terminal, with or without the prompt):
    the session then ends with exit code 0 after Ctrl-D or :quit, whatever errors it
    showed, as each was answered where it happened; piped lines end with 1 if any failed."""
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError, OSError):  # closed or replaced by a test's stream
        return False
