"""The command line as one Typer app: every command module imported (each registers its
commands on :data:`.commands.common.app`), and what a run does to the Click command Typer
builds from them (:func:`finish`: each command's summary and example, the shared options,
converters that need no Pydantic).

Commands, by family, are in :mod:`autograd_cli.cli.commands`: a command module declares
its command and its own options and calls the library; the options every command shares
are declared once, in :mod:`.commands.shared`.  Errors are raised, not printed:
:mod:`autograd_cli.cli.main` turns them into a message and an exit code at one boundary.
"""

from __future__ import annotations

import dataclasses
import re

from . import helptext
from .commands import (  # noqa: F401
    analysis,
    batch,
    codegen,
    derivatives,
    diff,
    explain,
    plot,
    shell,
    sparse,
)
from .commands.common import app
from .commands.shared import attach

__all__ = ["app", "describe_commands", "finish", "plain_converters", "plain_value"]

# Startup time (issue 12): Typer >= 0.2x converts every parameter's value with a Pydantic
# TypeAdapter, built on first use; importing Pydantic for that is half of a cold start.
# ``plain_converters`` gives each parameter a converter that takes the values our options
# have (text, flags, a plain integer or decimal number, lists of text) as Pydantic would,
# and hands anything else to Typer's own converter, so every value converts (or fails, with
# the same message) exactly as before.  tests/test_startup.py compares the two.
_PLAIN_INT = re.compile(r"[+-]?[0-9]{1,18}")
_PLAIN_FLOAT = re.compile(
    r"[+-]?(?:[0-9]{1,30}\.?[0-9]{0,30}|\.[0-9]{1,30})(?:[eE][+-]?[0-9]{1,3})?"
)
_PLAIN = {int: _PLAIN_INT, float: _PLAIN_FLOAT}  # the text each type converts from here

try:
    from typer._coercion import RuntimeParam as _RuntimeParam
    from typer._coercion import build_runtime_param as _typer_converter
except ImportError:  # pragma: no cover - a Typer without runtime converters: nothing to do
    _RuntimeParam = None


def plain_value(annotation, value):
    """``value`` converted for a parameter of type ``annotation`` without Pydantic, or
    ``NotImplemented`` when Typer's own converter must decide."""
    kind = type(value)
    if annotation is str or annotation is bool:
        return value if kind is annotation else NotImplemented
    if annotation is int or annotation is float:
        if kind is annotation:
            return value
        if kind is str and _PLAIN[annotation].fullmatch(value):
            return annotation(value)
        return NotImplemented
    if annotation == list[str] and kind in (list, tuple) and all(type(v) is str for v in value):
        return list(value)
    return NotImplemented


if _RuntimeParam is not None:

    @dataclasses.dataclass(frozen=True)
    class _PlainParam(_RuntimeParam):
        descriptor: object = None

        def _coerce_value(self, value, param, ctx):
            got = plain_value(self.annotation, value)
            if got is NotImplemented:
                got = _typer_converter(self.descriptor)._coerce_value(value, param=param, ctx=ctx)
            return got


def _plain_converter(param) -> None:
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None or getattr(param, "_runtime_param", False) is not None:
        return
    info = descriptor.parameter_info
    if (
        descriptor.file_annotation is not None
        or info.parser is not None
        or info.min is not None
        or info.max is not None
        or info.clamp
    ):
        return  # not a plain value: Typer's converter
    param._runtime_param = _PlainParam(
        parameter_info=info, annotation=descriptor.annotation, descriptor=descriptor
    )


def plain_converters(command) -> None:
    """Give the parameters of ``command`` (a group: of each command) the converters above,
    ``--help`` (made by Click when first asked for) included.

    Idempotent: a command given twice (a caller that keeps the Click command Typer built and
    runs the command line on it again and again) is left as it is, not wrapped once more
    per call (a thousand wrappers deep, asking for ``--help`` would exceed Python's
    recursion limit)."""
    if _RuntimeParam is None:
        return
    for sub in [command, *getattr(command, "commands", {}).values()]:
        for param in sub.params:
            _plain_converter(param)
        get_help_option = getattr(sub, "get_help_option", None)
        if get_help_option is not None and not getattr(get_help_option, "plain", False):

            def help_option(ctx, _get=get_help_option):
                option = _get(ctx)
                if option is not None:
                    _plain_converter(option)
                return option

            help_option.plain = True  # type: ignore[attr-defined]
            sub.get_help_option = help_option


def describe_commands() -> None:
    """Every command's summary (the top-level help lists it whole; Click would cut a
    docstring's at 45 characters or at the first full stop) and example (the end of its
    --help) are helptext.COMMANDS', which the top-level help reads without loading this
    module.  Called here and again when a Click command is built (:func:`finish`): a
    command module imported before this one (``import autograd_cli.cli.commands.analysis``)
    registers its commands after this module's last line has run."""
    for info in app.registered_commands:
        info.short_help = helptext.COMMANDS[info.name][0]
        info.epilog = helptext.example_epilog(info.name)


def finish(command) -> None:
    """What a run adds to the Click command Typer built (a group: to each of its commands):
    the shared options (:func:`.commands.shared.attach`), then the plain converters.
    Idempotent, as both are."""
    attach(command)
    plain_converters(command)  # no Pydantic at startup (see plain_converters)


describe_commands()
