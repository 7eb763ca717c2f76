"""The options the commands share (SPEC: "Global options on every command"), declared once.

A command declares only its own options; it names the shared ones it takes when it
registers (``common.command(..., shared=EXPRESSION)``): the expression (EXPR), ``--wrt``,
``--format`` and the global options.  When a run builds the Click command
(:func:`autograd_cli.cli.app.click_command`), :func:`attach` adds the shared options to it,
EXPR and ``--wrt`` before its own and the others after, as Typer would have built them from
a signature (the same help, values and errors: they are built by Typer, from
:func:`_declarations`' signature), and the values given reach the command body as one
:class:`Shared` (``shared(ctx)``), not as arguments.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from typing import Annotated

import typer

#: ``--precision``'s help, where the command also has ``--format`` (FORMAT) or not
_PRECISION = (
    "Digits after the decimal point in tables (0 to 17), or 'full' for every round-trip "
    "digit; {keep} every digit.  [default: 4]"
)
_KEEP = "--json keeps"
_KEEP_FORMAT = "--json and --format json, plain or csv keep"

Expr = Annotated[
    str,
    typer.Argument(
        metavar="EXPR",
        help="The expression or program ('-' reads stdin). One starting with '-' goes after '--'.",
        show_default=False,
    ),
]
Wrt = Annotated[
    str | None,
    typer.Option(
        "--wrt",
        metavar="NAMES",
        help="Differentiate only with respect to these variables (comma-separated).",
    ),
]
OutputFormat = Annotated[
    str,
    typer.Option(
        "--format",
        metavar="FORMAT",
        help="table (default, for people), json, plain (numbers one per line: the "
        "value, then each gradient) or csv (quantity,index,value).",
    ),
]


def _declarations(
    expr: Expr,
    wrt: Wrt = None,
    output_format: OutputFormat = "table",
    json_out: Annotated[
        bool, typer.Option("--json", help="Print one JSON document (for programs).")
    ] = False,
    device: Annotated[
        str, typer.Option("--device", metavar="cpu|gpu", help="cpu (NumPy) or gpu (CuPy).")
    ] = "cpu",
    dtype: Annotated[
        str,
        typer.Option(
            "--dtype",
            metavar="float64|float32|complex128|complex64",
            help="The number type (complex: every value complex).",
        ),
    ] = "float64",
    precision: Annotated[
        str | None,
        typer.Option(
            "--precision", metavar="N", help=_PRECISION.format(keep=_KEEP), show_default=False
        ),
    ] = None,
    plain: Annotated[
        bool,
        typer.Option("--plain", help="Every round-trip digit in tables (--precision full)."),
    ] = False,
    max_memory: Annotated[
        str | None,
        typer.Option(
            "--max-memory",
            metavar="SIZE",
            help="The most memory one array or result may take: 512M, 16G, 0 for no limit.  "
            "[default: AUTOGRAD_CLI_MAX_MEMORY, else 4G]",
            show_default=False,
        ),
    ] = None,
    timeout: Annotated[
        str | None,
        typer.Option(
            "--timeout",
            metavar="SECONDS",
            help="Stop with an error (kind limit, exit 1) after this many seconds; 0 for "
            "none.  [default: AUTOGRAD_CLI_TIMEOUT, else none]",
            show_default=False,
        ),
    ] = None,
    var: Annotated[
        list[str] | None,
        typer.Option(
            "--var",
            metavar="NAME=VALUE",
            help="A variable's value (repeatable), for names that clash with options.",
        ),
    ] = None,
    vars_json: Annotated[
        str | None,
        typer.Option(
            "--vars",
            metavar="JSON",
            help="All values as a JSON object ('-' reads stdin, @FILE a file).",
        ),
    ] = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="A --vars key the expression does not use is an error, not a warning.",
        ),
    ] = False,
):
    """The shared options, in the order every command's help lists them (EXPR and --wrt
    before the command's own, the others after: see :data:`LEADING`); never called: Typer
    builds the options from this signature."""


@dataclasses.dataclass(frozen=True)
class Shared:
    """The shared options' values as given (checked by the command, where its run checks
    them: see ``common.Invocation``); an option the command does not take keeps its
    default."""

    expr: str | None = None
    wrt: str | None = None
    output_format: str = "table"
    json_out: bool = False
    device: str = "cpu"
    dtype: str = "float64"
    precision: str | None = None
    plain: bool = False
    max_memory: str | None = None
    timeout: str | None = None
    var: list | None = None
    vars_json: str | None = None
    strict: bool = False


#: what a command's help lists before its own options: the expression, then --wrt
LEADING = ("expr", "wrt")
#: every global option (SPEC), by its parameter's name, in help order
ALL = tuple(
    field.name
    for field in dataclasses.fields(Shared)
    if field.name not in (*LEADING, "output_format")
)
#: what a command of one expression takes (most do): EXPR, --wrt and every global option
EXPRESSION = (*LEADING, *ALL)
#: eval, grad, hessian and jacobian: their result as --format asks too
RESULT = (*EXPRESSION, "output_format")
#: what the interactive session takes (each line is a command line of its own)
SESSION = ("json_out", "device", "dtype", "max_memory", "timeout")
#: where the values are kept for the command body (Click shares ``meta`` with every
#: context of a run)
_KEY = "autograd_cli.shared"
#: where the error boundary leaves its ``run`` (the session runs each line through it:
#: handed down, so that no command module imports the boundary, which imports them all)
RUNNER = "autograd_cli.run"


def shared(ctx) -> Shared:
    """The shared options' values of the command running in ``ctx``."""
    return ctx.meta.get(_KEY) or Shared()


@functools.cache
def _built() -> dict:
    """The shared options as Typer builds them from ``_declarations``, by name (built once:
    each command gets copies, which the run's converters may change)."""
    one = typer.Typer(add_completion=False)
    one.command("shared")(_declarations)
    group = typer.main.get_group(one)  # as click_command builds a command: see app.py
    return {param.name: param for param in group.commands["shared"].params}


def attach(command) -> None:
    """Give ``command`` (a group: each of its commands) the shared options its callback
    declares (``shared_options``), :data:`LEADING` ones before its own and the others after,
    in :func:`_declarations`' order, and a callback that hands their values to the body as
    :class:`Shared` (see :func:`shared`).  Idempotent: a command given twice (a caller that
    keeps the Click command and runs on it again) is left as it is."""
    built: dict | None = None
    for sub in [command, *getattr(command, "commands", {}).values()]:
        names = getattr(sub.callback, "shared_options", ())
        if not names or getattr(sub, "shared_attached", False):
            continue
        built = built or _built()
        taken = [copy.copy(param) for name, param in built.items() if name in names]
        for param in taken:
            if param.name == "precision" and "output_format" in names:
                param.help = _PRECISION.format(keep=_KEEP_FORMAT)
        leading = [param for param in taken if param.name in LEADING]
        rest = [param for param in taken if param.name not in LEADING]
        sub.params[:] = [*leading, *sub.params, *rest]
        sub.callback = _collecting(sub.callback, names)
        sub.shared_attached = True


def _collecting(callback, names: tuple):
    """``callback`` (Typer's, which takes the command's own parameters) run with the shared
    options' values taken out of its arguments and kept for :func:`shared`."""
    from ..clicompat import click

    @functools.wraps(callback)
    def run(**kwargs):
        given = {name: kwargs.pop(name) for name in names if name in kwargs}
        if given.get("var") is not None:
            given["var"] = list(given["var"]) or None
        click.globals.get_current_context().meta[_KEY] = Shared(**given)
        return callback(**kwargs)

    return run
