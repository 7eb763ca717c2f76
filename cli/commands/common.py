"""What every command module shares: the Typer app the commands register on, the
registration (:func:`command`), the expression argument and the options several commands
declare, and :class:`Invocation` (the expression, the values and the shared options of one
run, checked in one order).

The command modules import this module, never :mod:`autograd_cli.cli.app` (which imports
them all): the dependency runs one way.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ...core.safetext import visible
from .. import helptext, options
from .shared import EXPRESSION, attach, shared

app = typer.Typer(
    name="autograd-cli",
    help=helptext.ABOUT,
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

# Variables come as --NAME VALUE: unknown options are collected, not rejected.
VARIABLE_CONTEXT = {"allow_extra_args": True, "ignore_unknown_options": True}


def command(name: str, shared: tuple = EXPRESSION, variables: bool = True):
    """Register the decorated function as the command ``name``, taking the shared options
    ``shared`` (see :mod:`.shared`: by default the expression, --wrt and the global options)
    and, with ``variables``, ``--NAME VALUE`` pairs."""

    def register(function):
        function.shared_options = shared
        settings = VARIABLE_CONTEXT if variables else None
        return app.command(name, context_settings=settings)(function)

    return register


#: (command, option) -> the value an option takes when it is given without one
#: (``codegen --check`` is ``--check 100``): main.normalize_argv fills it in, as Typer has
#: no options with an optional value
OPTIONAL_VALUES: dict[tuple[str, str], str] = {
    ("codegen", "--check"): "100",
    ("jacobian", "--sparse"): "on",
    ("hessian", "--sparse"): "on",
}
#: the words such an option takes as its value (else a number: ``--check 50``)
OPTIONAL_WORDS: dict[tuple[str, str], tuple] = {
    ("jacobian", "--sparse"): ("on", "auto", "off"),
    ("hessian", "--sparse"): ("on", "auto", "off"),
}


def option(flag: str, kind, help: str, **settings):
    """A command's own option declared in one line: ``Annotated[kind | None,
    typer.Option(flag, help=help, **settings)]`` (its default, None, is the parameter's)."""
    return Annotated[kind | None, typer.Option(flag, help=help, **settings)]


def order_option(help: str, metavar: str = "N"):
    """A command's ``--order`` (read as text, checked by :func:`options.parse_order`): only
    its help and metavar differ from one command to the next; its default is in its help."""
    return option("--order", str, help, metavar=metavar, show_default=False)


def backend_dtypes() -> tuple:
    from ...core.backend import DTYPES  # noqa: PLC0415 - NumPy: only once a command runs

    return DTYPES


def check_backend(device: str, dtype: str) -> None:
    """--device and --dtype checked before any work (a usage error, exit 2)."""
    if dtype not in backend_dtypes():
        raise options.UsageError(
            f"--dtype must be float64, float32, complex128 or complex64, not {dtype!r}"
        )
    if device not in ("cpu", "gpu"):
        raise options.UsageError(f"--device must be cpu or gpu, not {device!r}")


class Invocation:
    """What every command shares: the expression, the values and the shared options."""

    def __init__(self, ctx: typer.Context):
        from ...core import backend

        given = shared(ctx)
        expr, dtype, device, vars_json = given.expr, given.dtype, given.device, given.vars_json
        assert expr is not None, f"{ctx.command.name} takes no EXPR (shared.EXPRESSION)"
        check_backend(device, dtype)
        enter_limits(ctx, given.max_memory, given.timeout)
        self.precision = parse_precision(given.precision, given.plain)  # tables' digits
        self.ctx = ctx
        self.shared = given
        self.dtype = dtype
        self._program = None
        if expr == "-" and vars_json == "-":
            raise options.UsageError("the expression and --vars cannot both come from stdin")
        self.source = options.read_expression(expr)
        self.json = given.json_out
        self.output_format = given.output_format  # checked where the result is shown
        self._check_option_names()
        from_vars: set = set()
        self.values, leftovers = options.collect_variables(
            list(ctx.args), given.var, vars_json, from_vars=from_vars
        )
        self.strict = given.strict
        self._check_leftovers(leftovers)
        if from_vars and not self.strict:
            self._ignore_unused(from_vars)
        # For the command's run only: Click closes the context, and so the block, when the
        # command returns or raises, and the previous device and dtype come back.
        ctx.with_resource(backend.using(device=device, dtype=dtype))

    @property
    def wrt(self) -> list[str]:
        """``--wrt``'s names, read when the command asks (a bad name is reported there,
        after the checks the command makes first)."""
        return options.split_names(self.shared.wrt)

    def program(self):
        if self._program is None:
            from ...grammar import parse

            self._program = parse(self.source)
        return self._program

    def _check_option_names(self) -> None:
        """``--NAME`` that is a misspelt option (``--jsn``), one of another command
        (``--order`` on eval) or ``--h``, and not a variable of the expression: a usage
        error naming the option meant.  A variable of the expression is never one."""
        names = [t[2:].split("=", 1)[0] for t in self.ctx.args if options.is_option_name(t)]
        suspects = [n for n in names if _option_hint(self.ctx, n)]
        if not suspects:
            return
        known = set(self.program().inputs)  # a syntax error is reported first
        for name in suspects:
            if name not in known:
                raise options.UsageError(_option_hint(self.ctx, name))

    def _ignore_unused(self, from_vars: set) -> None:
        """``--vars`` keys the expression does not use are dropped with one warning on
        stderr, so one file of values serves many expressions (``--strict``: an error, as
        for a ``--NAME VALUE`` the expression does not use)."""
        known = set(self.program().inputs)
        unused = [name for name in self.values if name in from_vars and name not in known]
        if not unused:
            return
        for name in unused:
            del self.values[name]
        from .. import streams

        names = ", ".join(repr(name) for name in unused[:10])
        if len(unused) > 10:
            names += f" and {len(unused) - 10} more"
        streams.say(
            f"autograd-cli: warning: --vars: ignoring {names}: not "
            f"{'a variable' if len(unused) == 1 else 'variables'} of the expression "
            f"(--strict makes this an error)"
        )

    def _check_leftovers(self, leftovers: list[str]) -> None:
        """Tokens that are not ``--NAME VALUE`` pairs: a ``--NAME`` with no value, ``-h``,
        ``-x`` for ``--x``, or stray words."""
        if not leftovers:
            return
        known = set(self.program().inputs)
        problems = []
        for token in leftovers:
            if options.is_option_name(token):  # --NAME with no value after it
                name = token[2:]
                raise options.UsageError(f"option --{name} needs a value (--{name} VALUE)")
            if token.startswith("-") and len(token) > 1 and not looks_numeric(token):
                name = token.lstrip("-")
                if token == "-h":
                    raise options.UsageError("-h is not an option (did you mean --help?)")
                if name in known or _is_option(self.ctx, name):
                    raise options.UsageError(
                        f"{token} is not an option (options and variables take two dashes: "
                        f"did you mean --{name}?)"
                    )
            problems.append(token)
        clashes = sorted(n for n in known if _is_option(self.ctx, n))
        if clashes:
            n = clashes[0]
            raise options.UsageError(
                f"unexpected argument(s): {' '.join(problems)} (--{n} is an option of this "
                f"command; give the variable {n} as --var {n}=VALUE)"
            )
        raise options.UsageError(
            f"unexpected argument(s): {' '.join(problems)} (variables are "
            f"given as --NAME VALUE; quote the expression)"
        )


def enter_limits(ctx: typer.Context, max_memory: str | None, timeout: str | None) -> float | None:
    """``--max-memory`` and ``--timeout`` (or their environment variables), checked before
    any work (a bad one is a usage error) and in force until the command ends; returns the
    timeout in seconds (None: none)."""
    from ...core import limits
    from ..status import deadline

    memory = options.parse_max_memory(max_memory)
    seconds = options.parse_timeout(timeout)
    ctx.with_resource(limits.using(memory))
    if seconds is not None:
        ctx.with_resource(deadline(seconds, _timeout_handler(seconds)))
    return seconds


def parse_precision(text: str | None, plain: bool = False) -> int | None:
    """``--precision N`` (0 to 17) or ``full``, and ``--plain``: the digits after the decimal
    point of the numbers in tables, None for every round-trip digit."""
    from ..render import DEFAULT_PRECISION, MAX_PRECISION

    if text is None:
        return None if plain else DEFAULT_PRECISION
    word = text.strip().lower()
    if word == "full":
        return None
    if not (word.isascii() and word.isdigit() and int(word) <= MAX_PRECISION):
        raise options.UsageError(
            f"--precision takes 0 to {MAX_PRECISION} digits, or full, not {text!r}"
        )
    if plain:
        raise options.UsageError(
            f"--plain (every digit) and --precision {text} disagree: give one of them"
        )
    return int(word)


def _timeout_handler(seconds: float):
    """SIGALRM during a command: stop it with TimedOut, unless its result is already being
    printed (then it finishes: a document is never cut, nor followed by a second one)."""
    from .. import streams
    from ..status import TimedOut

    def handler(signum, frame):
        if not streams.output_started():
            raise TimedOut(seconds)

    return handler


#: The long options of every command, without the dashes: so that a variable such as ``--x``
#: is known at once not to be another command's option without building every command
#: (a sixth of a cold start).  tests/test_startup.py checks it against the commands.
OPTION_NAMES = frozenset(
    """at atol check chunk-size corr device dot dtype engine eps expr fail-fast format
    grad-output gtol help hessian holomorphic json latex max-depth max-iter max-memory max-nodes max-steps
    mc method name no-progress no-prompt op order output partition-size plain png points
    precision progress rtol scheduler seed shape sparse strict svg tangent tangent-at target taylor
    timeout tol trace var vars workers wrt""".split()
)


def _long_options(command) -> list[str]:
    """A command's long option names, without the dashes (``json``, ``wrt``, ``help``)."""
    names = ["help"]
    for param in command.params:
        for opt in list(getattr(param, "opts", [])) + list(getattr(param, "secondary_opts", [])):
            if opt.startswith("--"):
                names.append(opt[2:])
    return names


def _is_option(ctx, name: str) -> bool:
    return name in _long_options(ctx.command)


def _option_hint(ctx, name: str) -> str | None:
    """The message for ``--name`` when it is probably a misspelt option: a close spelling of
    one of this command's options, or the commands that do take it.  None when it looks
    like nothing but a variable's name."""
    import difflib

    here = ctx.command.name or "this command"
    if name == "h":
        return f"{here} has no option --h (did you mean --help?)"
    if _is_option(ctx, name):
        return None
    takers = []
    if name in OPTION_NAMES:  # every command, not the parent group: a run builds only its own
        group = typer.main.get_command(app)
        attach(group)  # the shared options too
        commands = group.commands  # type: ignore[attr-defined]
        takers = sorted(cmd for cmd, sub in commands.items() if name in _long_options(sub))
    if takers:
        return f"{here} has no option --{name} (--{name} is an option of {', '.join(takers)})"
    close = difflib.get_close_matches(name, _long_options(ctx.command), n=1, cutoff=0.75)
    if close:
        return f"{here} has no option --{name} (did you mean --{close[0]}?)"
    return None


def looks_numeric(token: str) -> bool:
    try:
        float(token)
        return True
    except ValueError:
        return False


FORMATS = ("table", "json", "plain", "csv")


def show_result(inv: Invocation, result) -> None:
    """A result of eval, grad, hessian or jacobian, as --json and --format ask."""
    from .. import render

    output_format = inv.output_format
    if output_format not in FORMATS:
        raise options.UsageError(
            f"--format must be one of {', '.join(FORMATS)}, not {output_format!r}"
        )
    if inv.json or output_format == "json":
        render.emit_json(render.result_json(inv.source, result))
    elif output_format in ("plain", "csv"):
        (render.render_plain if output_format == "plain" else render.render_csv)(result)
        for warning in result.warnings:  # stdout holds only numbers here
            sys.stderr.write(f"autograd-cli: warning: {visible(warning)}\n")
    else:
        render.render_result(inv.source, result, kind="grad", precision=inv.precision)
