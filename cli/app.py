"""The Typer application: one function per command, each a thin layer over core.

A command reads the expression and the values, calls a library function in
:mod:`autograd_cli.core.api` and hands the plain result to a renderer.  Errors
are raised, not printed: :mod:`autograd_cli.cli.main` turns them into a
message and an exit code at one boundary.
"""

from __future__ import annotations

import dataclasses
import math
import re
import sys
from typing import Annotated

import typer

from ..core.safetext import visible
from . import helptext, options

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
    if annotation is int:
        if kind is int:
            return value
        if kind is str and _PLAIN_INT.fullmatch(value):
            return int(value)
        return NotImplemented
    if annotation is float:
        if kind is float:
            return value
        if kind is str and _PLAIN_FLOAT.fullmatch(value):
            return float(value)
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


Expr = Annotated[
    str,
    typer.Argument(
        metavar="EXPR",
        help="The expression or program ('-' reads stdin). One starting with '-' goes after '--'.",
        show_default=False,
    ),
]
Json = Annotated[bool, typer.Option("--json", help="Print one JSON document (for programs).")]
Device = Annotated[
    str, typer.Option("--device", metavar="cpu|gpu", help="cpu (NumPy) or gpu (CuPy).")
]
Dtype = Annotated[
    str, typer.Option("--dtype", metavar="float64|float32", help="The floating-point type.")
]
_PRECISION = (
    "Digits after the decimal point in tables (0 to 17), or 'full' for every round-trip "
    "digit; {keep} every digit.  [default: 4]"
)
Precision = Annotated[
    str | None,
    typer.Option(
        "--precision",
        metavar="N",
        help=_PRECISION.format(keep="--json keeps"),
        show_default=False,
    ),
]
#: --precision on the commands that also take --format
FormatPrecision = Annotated[
    str | None,
    typer.Option(
        "--precision",
        metavar="N",
        help=_PRECISION.format(keep="--json and --format json, plain or csv keep"),
        show_default=False,
    ),
]
Plain = Annotated[
    bool,
    typer.Option("--plain", help="Every round-trip digit in tables (--precision full)."),
]
MaxMemory = Annotated[
    str | None,
    typer.Option(
        "--max-memory",
        metavar="SIZE",
        help="The most memory one array or result may take: 512M, 16G, 0 for no limit.  "
        "[default: AUTOGRAD_CLI_MAX_MEMORY, else 4G]",
        show_default=False,
    ),
]
Timeout = Annotated[
    str | None,
    typer.Option(
        "--timeout",
        metavar="SECONDS",
        help="Stop with an error (kind limit, exit 1) after this many seconds; 0 for none.  "
        "[default: AUTOGRAD_CLI_TIMEOUT, else none]",
        show_default=False,
    ),
]
Var = Annotated[
    list[str] | None,
    typer.Option(
        "--var",
        metavar="NAME=VALUE",
        help="A variable's value (repeatable), for names that clash with options.",
    ),
]
Vars = Annotated[
    str | None,
    typer.Option(
        "--vars",
        metavar="JSON",
        help="All values as a JSON object ('-' reads stdin, @FILE a file).",
    ),
]
Strict = Annotated[
    bool,
    typer.Option(
        "--strict",
        help="A --vars key the expression does not use is an error, not a warning.",
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
Wrt = Annotated[
    str | None,
    typer.Option(
        "--wrt",
        metavar="NAMES",
        help="Differentiate only with respect to these variables (comma-separated).",
    ),
]


class Invocation:
    """What every command shares: the expression, the values and the global options."""

    def __init__(
        self,
        ctx: typer.Context,
        expr: str,
        json_out: bool,
        device: str,
        dtype: str,
        var: list | None,
        vars_json: str | None,
    ):
        from ..core import backend

        if dtype not in ("float64", "float32"):
            raise options.UsageError(f"--dtype must be float64 or float32, not {dtype!r}")
        if device not in ("cpu", "gpu"):
            raise options.UsageError(f"--device must be cpu or gpu, not {device!r}")
        enter_limits(ctx, ctx.params.get("max_memory"), ctx.params.get("timeout"))
        enter_precision(ctx, ctx.params.get("precision"), ctx.params.get("plain", False))
        self.ctx = ctx
        self.dtype = dtype
        self._program = None
        if expr == "-" and vars_json == "-":
            raise options.UsageError("the expression and --vars cannot both come from stdin")
        self.source = options.read_expression(expr)
        self.json = json_out
        self._check_option_names()
        from_vars: set = set()
        self.values, leftovers = options.collect_variables(
            list(ctx.args), var, vars_json, from_vars=from_vars
        )
        self.strict = bool(ctx.params.get("strict"))
        self._check_leftovers(leftovers)
        if from_vars and not self.strict:
            self._ignore_unused(from_vars)
        # For the command's run only: Click closes the context, and so the block, when the
        # command returns or raises, and the previous device and dtype come back.
        ctx.with_resource(backend.using(device=device, dtype=dtype))

    def program(self):
        if self._program is None:
            from ..grammar import parse

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
        from . import streams

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
            if token.startswith("-") and len(token) > 1 and not _looks_numeric(token):
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
    from ..core import limits
    from .status import deadline

    memory = options.parse_max_memory(max_memory)
    seconds = options.parse_timeout(timeout)
    ctx.with_resource(limits.using(memory))
    if seconds is not None:
        ctx.with_resource(deadline(seconds, _timeout_handler(seconds)))
    return seconds


def parse_precision(text: str | None, plain: bool = False) -> int | None:
    """``--precision N`` (0 to 17) or ``full``, and ``--plain``: the digits after the decimal
    point of the numbers in tables, None for every round-trip digit."""
    from .render import DEFAULT_PRECISION, MAX_PRECISION

    if text is None:
        return None if plain else DEFAULT_PRECISION
    word = text.strip().lower()
    if word == "full":
        return None
    if not (word.isdigit() and int(word) <= MAX_PRECISION):
        raise options.UsageError(
            f"--precision takes 0 to {MAX_PRECISION} digits, or full, not {text!r}"
        )
    if plain:
        raise options.UsageError(
            f"--plain (every digit) and --precision {text} disagree: give one of them"
        )
    return int(word)


def enter_precision(ctx: typer.Context, text: str | None, plain: bool) -> None:
    """The tables' precision for the command's run (checked before any work)."""
    from .render import using_precision

    ctx.with_resource(using_precision(parse_precision(text, plain)))


def _timeout_handler(seconds: float):
    """SIGALRM during a command: stop it with TimedOut, unless its result is already being
    printed (then it finishes: a document is never cut, nor followed by a second one)."""
    from . import streams
    from .status import TimedOut

    def handler(signum, frame):
        if not streams.output_started():
            raise TimedOut(seconds)

    return handler


#: The long options of every command, without the dashes: so that a variable such as ``--x``
#: is known at once not to be another command's option without building every command
#: (a sixth of a cold start).  tests/test_startup.py checks it against the commands.
OPTION_NAMES = frozenset(
    """at atol chunk-size corr device dot dtype engine eps expr fail-fast format grad-output
    gtol help hessian json latex max-depth max-iter max-memory max-nodes max-steps mc method
    no-progress no-prompt op order output partition-size plain png points precision progress
    rtol scheduler seed strict svg tangent tangent-at taylor timeout tol trace var vars workers
    wrt""".split()
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
        commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
        takers = sorted(cmd for cmd, sub in commands.items() if name in _long_options(sub))
    if takers:
        return f"{here} has no option --{name} (--{name} is an option of {', '.join(takers)})"
    close = difflib.get_close_matches(name, _long_options(ctx.command), n=1, cutoff=0.75)
    if close:
        return f"{here} has no option --{name} (did you mean --{close[0]}?)"
    return None


def _looks_numeric(token: str) -> bool:
    try:
        float(token)
        return True
    except ValueError:
        return False


FORMATS = ("table", "json", "plain", "csv")


def _render(inv: Invocation, result, output_format: str = "table") -> None:
    from . import render

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
        render.render_result(inv.source, result, kind="grad")


@app.command("eval", context_settings=VARIABLE_CONTEXT)
def eval_command(
    ctx: typer.Context,
    expr: Expr,
    output_format: OutputFormat = "table",
    json_out: Json = False,
    device: Device = "cpu",
    dtype: Dtype = "float64",
    precision: FormatPrecision = None,
    plain: Plain = False,
    max_memory: MaxMemory = None,
    timeout: Timeout = None,
    var: Var = None,
    vars_json: Vars = None,
    strict: Strict = False,
):
    """Evaluate the expression: its value and shape."""
    from ..core import api

    inv = Invocation(ctx, expr, json_out, device, dtype, var, vars_json)
    _render(inv, api.eval_of(inv.program(), inv.values), output_format)


@app.command("grad", context_settings=VARIABLE_CONTEXT)
def grad_command(
    ctx: typer.Context,
    expr: Expr,
    wrt: Wrt = None,
    grad_output: Annotated[
        str | None,
        typer.Option(
            "--grad-output",
            metavar="ARRAY",
            help="For a non-scalar output: the vector v of the "
            "vector-Jacobian product v^T J (a JSON array).",
        ),
    ] = None,
    order_text: Annotated[
        str | None,
        typer.Option(
            "--order",
            metavar="N",
            help="The N-th derivative of a scalar expression of one "
            f"variable (repeated differentiation; 1 to {options.MAX_ORDER}).  [default: 1]",
            show_default=False,
        ),
    ] = None,
    tangent: Annotated[
        list[str] | None,
        typer.Option(
            "--tangent",
            metavar="NAME=VALUE",
            help="Forward mode, J v for the direction v "
            "(repeatable; other variables get a zero tangent).",
        ),
    ] = None,
    output_format: OutputFormat = "table",
    json_out: Json = False,
    device: Device = "cpu",
    dtype: Dtype = "float64",
    precision: FormatPrecision = None,
    plain: Plain = False,
    max_memory: MaxMemory = None,
    timeout: Timeout = None,
    var: Var = None,
    vars_json: Vars = None,
    strict: Strict = False,
):
    """Compute the value and the gradient.

    With respect to every input variable (not the NAME = EXPR intermediates), or those
    named by --wrt.  A non-scalar output needs --grad-output V (the vector-Jacobian
    product V^T J); --order N gives the N-th derivative in one variable, --tangent forward
    mode (J v).
    """
    from ..core import api

    inv = Invocation(ctx, expr, json_out, device, dtype, var, vars_json)
    names = options.split_names(wrt)
    order = 1 if order_text is None else options.parse_order(order_text, minimum=1)
    if tangent:
        if grad_output is not None or order != 1:
            raise options.UsageError(
                "--tangent (forward mode) cannot be combined with --grad-output or --order"
            )
        tangents = options.named_literals(tangent, "--tangent")
        result = api.jvp_of(inv.program(), inv.values, tangents)
    elif order > 1:
        if grad_output is not None:
            raise options.UsageError(
                "--order needs a scalar output; it cannot be combined with --grad-output"
            )
        result = api.nth_derivative_of(inv.program(), inv.values, wrt=names, order=order)
    else:
        seed = None if grad_output is None else options.parse_literal(grad_output, "--grad-output")
        result = api.grad_of(inv.program(), inv.values, wrt=names, grad_output=seed)
    _render(inv, result, output_format)


@app.command("hessian", context_settings=VARIABLE_CONTEXT)
def hessian_command(
    ctx: typer.Context,
    expr: Expr,
    wrt: Wrt = None,
    output_format: OutputFormat = "table",
    json_out: Json = False,
    device: Device = "cpu",
    dtype: Dtype = "float64",
    precision: FormatPrecision = None,
    plain: Plain = False,
    max_memory: MaxMemory = None,
    timeout: Timeout = None,
    var: Var = None,
    vars_json: Vars = None,
    strict: Strict = False,
):
    """Compute the value, the gradient and the Hessian.

    The Hessian holds every second partial of a scalar expression, with respect to every
    variable (or those named by --wrt).
    """
    from ..core import api

    inv = Invocation(ctx, expr, json_out, device, dtype, var, vars_json)
    names = options.split_names(wrt)
    result = api.hessian_of(inv.program(), inv.values, wrt=names)
    _render(inv, result, output_format)
    hint = None if names or inv.json or output_format == "json" else _wrt_hint(result)
    if hint and output_format == "table":
        from . import render

        render.make_console().print(f"[dim]note: {render.user_text(hint)}[/dim]")
    elif hint:  # plain, csv: stdout holds only numbers
        sys.stderr.write(f"autograd-cli: note: {hint}\n")


def _wrt_hint(result) -> str | None:
    """With the default --wrt (every input, as PyTorch's), a hint naming --wrt when array
    inputs have all-zero second derivatives of their own (d²/dA² of x@A@x: 81 zeros printed).
    Nothing is wrong, so it is a note for people, not one of JSON's warnings."""
    blocks = result.hessian or {}
    zero = [n for n in blocks if result.grad[n].ndim and not blocks[n][n].any()]
    rest = [n for n in blocks if n not in zero]
    if not zero or not rest:
        return None
    count = sum(blocks[n][n].size for n in zero)
    which = " and ".join(f"∂²/∂{n}∂{n}" for n in zero)
    return (
        f"{which} {'is' if len(zero) == 1 else 'are'} all zero ({count:,} entries); "
        f"try --wrt {','.join(rest)}"
    )


@app.command("jacobian", context_settings=VARIABLE_CONTEXT)
def jacobian_command(
    ctx: typer.Context,
    expr: Expr,
    wrt: Wrt = None,
    output_format: OutputFormat = "table",
    json_out: Json = False,
    device: Device = "cpu",
    dtype: Dtype = "float64",
    precision: FormatPrecision = None,
    plain: Plain = False,
    max_memory: MaxMemory = None,
    timeout: Timeout = None,
    var: Var = None,
    vars_json: Vars = None,
    strict: Strict = False,
):
    """Compute the value and the Jacobian.

    The Jacobian of the output with respect to a variable has the output's shape followed
    by the variable's.
    """
    from ..core import api

    inv = Invocation(ctx, expr, json_out, device, dtype, var, vars_json)
    _render(
        inv, api.jacobian_of(inv.program(), inv.values, wrt=options.split_names(wrt)), output_format
    )


@app.command("check", context_settings=VARIABLE_CONTEXT)
def check_command(
    ctx: typer.Context,
    expr: Expr,
    wrt: Wrt = None,
    eps: Annotated[
        float | None,
        typer.Option(
            "--eps",
            help="Finite-difference step, > 0.  [default: 1e-6 for float64, 1e-3 for float32]",
            show_default=False,
        ),
    ] = None,
    atol: Annotated[
        float | None,
        typer.Option(
            "--atol",
            help="Absolute tolerance, >= 0.  [default: 1e-5 for float64, 1e-3 for float32]",
            show_default=False,
        ),
    ] = None,
    rtol: Annotated[
        float | None,
        typer.Option(
            "--rtol",
            help="Relative tolerance, >= 0.  [default: 1e-3 for float64, 1e-2 for float32]",
            show_default=False,
        ),
    ] = None,
    json_out: Json = False,
    device: Device = "cpu",
    dtype: Dtype = "float64",
    precision: Precision = None,
    plain: Plain = False,
    max_memory: MaxMemory = None,
    timeout: Timeout = None,
    var: Var = None,
    vars_json: Vars = None,
    strict: Strict = False,
):
    """Compare the gradient with central finite differences.

    The gradient by reverse mode against central differences of step --eps; they agree
    where |analytic - numeric| <= atol + rtol * |numeric|.  Exit 1 when they do not.
    """
    from ..core import api
    from ..core.functional import gradcheck_defaults
    from . import render

    inv = Invocation(ctx, expr, json_out, device, dtype, var, vars_json)
    defaults = gradcheck_defaults(dtype)
    eps = defaults["eps"] if eps is None else eps
    atol = defaults["atol"] if atol is None else atol
    rtol = defaults["rtol"] if rtol is None else rtol
    if not (math.isfinite(eps) and eps > 0):
        raise options.UsageError(f"--eps must be a finite number above 0, not {eps:g}")
    for option, tolerance in (("--atol", atol), ("--rtol", rtol)):
        if not (math.isfinite(tolerance) and tolerance >= 0):
            raise options.UsageError(
                f"{option} must be a finite number, 0 or more, not {tolerance:g}"
            )
    names = options.split_names(wrt)
    _check_step(inv.values, names or list(inv.program().inputs), eps, dtype)
    result = api.check_of(inv.program(), inv.values, wrt=names, eps=eps, atol=atol, rtol=rtol)
    if not result.analytic:  # no variables: nothing can disagree, so it passes (exit 0)
        result = dataclasses.replace(result, warnings=[*result.warnings, NOTHING_TO_CHECK])
    if inv.json:
        render.emit_json(render.check_json(inv.source, result))
    else:
        render.render_check(inv.source, result)
    if not result.passed:
        raise typer.Exit(1)


NOTHING_TO_CHECK = (
    "nothing to check: the expression has no variables, so it has no gradient to compare"
)


def _check_step(values: dict, names: list, eps: float, dtype: str) -> None:
    """Every checked value is finite, and --eps moves it in its dtype (1e-12 does not move
    1.0 in float32): else a usage error naming the variable."""
    import numpy

    from ..core.recording import parse_value

    for name in names:
        if name not in values:
            continue  # a missing value is reported by check_of, as by every command
        parse_value(name, values[name])  # a ragged or deep value: its bad_value error first
        with numpy.errstate(all="ignore"):
            x = numpy.asarray(values[name], dtype=dtype)
            stuck = (x + numpy.asarray(eps, dtype=dtype)) - (x - numpy.asarray(eps, dtype=dtype))
        if not numpy.isfinite(x).all():
            where = float(x[~numpy.isfinite(x)].flat[0])
            raise options.UsageError(
                f"--{name} = {where:g}: a gradient check needs finite values (no finite "
                f"difference can be taken there)"
            )
        stuck = ~(stuck > 0)
        if stuck.any():
            where = float(x[stuck].flat[0])
            raise options.UsageError(
                f"--eps {eps:g} is too small to move --{name} = {where:g} in {dtype}; "
                f"give a larger --eps"
            )


@app.command("diff", context_settings=VARIABLE_CONTEXT)
def diff_command(
    ctx: typer.Context,
    expr: Expr,
    wrt: Wrt = None,
    order_text: Annotated[
        str | None,
        typer.Option(
            "--order",
            metavar="N",
            help=f"Differentiate N times (0 to {options.MAX_ORDER}; 0 gives the expression "
            "itself).  [default: 1]",
            show_default=False,
        ),
    ] = None,
    latex: Annotated[bool, typer.Option("--latex", help="Print LaTeX.")] = False,
    max_nodes: Annotated[
        int,
        typer.Option(
            "--max-nodes",
            metavar="N",
            help="Refuse a derivative larger than N nodes (its text would run to "
            "megabytes); 0 for no limit.",
        ),
    ] = 100_000,
    hessian: Annotated[
        bool,
        typer.Option(
            "--hessian",
            help="Every second partial, mixed ones included (the Hessian as expressions; "
            "JSON: hessian, and hessian_value with values).  Implies --order 2.",
        ),
    ] = False,
    json_out: Json = False,
    device: Device = "cpu",
    dtype: Dtype = "float64",
    precision: Precision = None,
    plain: Plain = False,
    max_memory: MaxMemory = None,
    timeout: Timeout = None,
    var: Var = None,
    vars_json: Vars = None,
    strict: Strict = False,
):
    """Print the derivative as a simplified expression.

    Symbolic, in the tool's own language (it parses back); --order N differentiates N
    times, --hessian gives every second partial, --latex prints LaTeX.  With values, the
    derivative's value too.
    """
    from ..core import api
    from . import render

    inv = Invocation(ctx, expr, json_out, device, dtype, var, vars_json)
    order = 1 if order_text is None else options.parse_order(order_text, minimum=0)
    if hessian:
        if order_text is not None and order != 2:
            raise options.UsageError(
                f"--hessian gives the second partials: it takes --order 2 (or no --order), "
                f"not --order {order}"
            )
        order = 2
    names = options.split_names(wrt)
    limit = options.parse_count(max_nodes, "--max-nodes")
    result = api.diff_of(
        inv.program(), inv.values, wrt=names, order=order, max_nodes=limit, mixed=hessian
    )
    if inv.json:
        render.emit_json(_diff_document(render.result_json(inv.source, result), result))
    else:
        render.render_diff(inv.source, result, latex=latex)
        _render_mixed(result, latex)


def _diff_document(doc: dict, result) -> dict:
    """diff's JSON document, with ``hessian`` (``{a: {b: string}}``) after ``derivative`` and
    ``hessian_value`` after ``derivative_value`` when the mixed partials were asked for."""
    if result.hessian is None:
        return doc
    out: dict = {}
    for key, value in doc.items():
        out[key] = value
        if key == "order":
            out["hessian"] = result.hessian_texts()
        elif key == "derivative_value":
            out["hessian_value"] = result.hessian_values()
    out.setdefault("hessian", result.hessian_texts())
    if result.value is not None:
        out.setdefault("hessian_value", result.hessian_values())
    return out


def _render_mixed(result, latex: bool) -> None:
    """For a person: the mixed partials under diff's table (``--hessian``), or a hint that
    ``--hessian`` gives them (``--order 2`` with several variables)."""
    from . import render

    console = render.make_console()
    names = list(result.derivatives)
    if result.hessian is None:
        if result.order == 2 and len(names) > 1 and not latex:
            console.print("[dim]note: --hessian adds the mixed partials (d^2/dxdy)[/dim]")
        return
    if latex:
        return  # render.diff_latex wrote the Hessian, labelled, with the other lines
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    if not pairs:
        return
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    table = Table(
        title="mixed partials (the Hessian is symmetric)",
        box=box.SIMPLE_HEAD,
        title_justify="left",
        show_edge=False,
    )
    table.add_column("", style="bold", no_wrap=True)
    table.add_column("derivative", overflow="fold")
    evaluated = result.value is not None
    if evaluated:
        table.add_column("value at the point", overflow="fold")
    import numpy

    values = [numpy.asarray(result.hessian[a][b].value, dtype=float) for a, b in pairs]
    notation = render.column_notation(values) if evaluated else None  # one per column
    for (a, b), value in zip(pairs, values):
        d = result.hessian[a][b]
        row = [escape(f"d^2/d{a}d{b}"), render.user_text(d.text)]
        if evaluated:
            row.append(escape(render.format_value(value, notation=notation)))
        table.add_row(*row)
    console.print(table)


@app.command("explain", context_settings=VARIABLE_CONTEXT)
def explain_command(
    ctx: typer.Context,
    expr: Expr,
    wrt: Wrt = None,
    max_steps: Annotated[
        int,
        typer.Option(
            "--max-steps",
            metavar="N",
            help="List at most N steps of each kind (the rest are counted); 0 lists every step.",
        ),
    ] = 100,
    json_out: Json = False,
    device: Device = "cpu",
    dtype: Dtype = "float64",
    precision: Precision = None,
    plain: Plain = False,
    max_memory: MaxMemory = None,
    timeout: Timeout = None,
    var: Var = None,
    vars_json: Vars = None,
    strict: Strict = False,
):
    """Show the chain rule step by step.

    The intermediates, each local derivative, and the sum over the paths into each
    variable; over arrays, the vector-Jacobian product each op applies (the output must be
    a number: a loss).
    """
    from . import render

    inv = Invocation(ctx, expr, json_out, device, dtype, var, vars_json)
    steps = options.parse_count(max_steps, "--max-steps")
    result = _explain(inv.program(), inv.values, options.split_names(wrt), steps)
    if inv.json:
        render.emit_json(render.explain_json(result))
    else:
        # explain's own numbers (six significant digits) unless --precision or --plain says
        digits = render.EXPLAIN_DIGITS
        if precision is not None or plain:
            digits = render.current_precision()
        text = render.explain_text(result, digits)
        sys.stdout.write(visible(text.rstrip("\n")) + "\n")


def _explain(program, values: dict, wrt: list, max_steps: int | None):
    """``api.explain_of`` with ``--max-steps`` (None: every step)."""
    from ..core.explain import explain
    from ..core.program import check_values, resolve_wrt

    check_values(program, values)
    return explain(program, values, resolve_wrt(program, wrt), max_steps=max_steps)


@app.command("completion")
def completion_command(
    shell: Annotated[str, typer.Argument(metavar="SHELL", help="bash, zsh or fish.")],
    json_out: Json = False,
):
    """Print the shell's completion script.

    It completes the commands and their options.  To install it:

    \b
    bash: eval "$(autograd-cli completion bash)" in ~/.bashrc
    zsh:  the same line in ~/.zshrc, after compinit
    fish: autograd-cli completion fish > ~/.config/fish/completions/autograd-cli.fish
    """
    from .main import COMPLETE_VAR, completion_class

    completer = completion_class(shell)(
        typer.main.get_command(app), {}, "autograd-cli", COMPLETE_VAR
    )
    script = completer.source().strip("\n") + "\n"
    if json_out:
        from .render import emit_json

        emit_json({"shell": shell, "script": script})
    else:
        sys.stdout.write(script)


@app.command("graph", context_settings=VARIABLE_CONTEXT)
def graph_command(
    ctx: typer.Context,
    expr: Expr,
    dot: Annotated[bool, typer.Option("--dot", help="Print Graphviz DOT.")] = False,
    svg: Annotated[
        str | None,
        typer.Option("--svg", metavar="FILE", help="Save the graph as SVG (Graphviz's dot)."),
    ] = None,
    png: Annotated[
        str | None,
        typer.Option("--png", metavar="FILE", help="Save the graph as PNG (Graphviz's dot)."),
    ] = None,
    grad_output: Annotated[
        str | None,
        typer.Option(
            "--grad-output",
            metavar="ARRAY",
            help="For a non-scalar output: the v of v^T J, so the nodes' gradients can be shown.",
        ),
    ] = None,
    max_depth: Annotated[int, typer.Option("--max-depth", help="Levels of the tree to draw.")] = 60,
    json_out: Json = False,
    device: Device = "cpu",
    dtype: Dtype = "float64",
    precision: Precision = None,
    plain: Plain = False,
    max_memory: MaxMemory = None,
    timeout: Timeout = None,
    var: Var = None,
    vars_json: Vars = None,
    strict: Strict = False,
):
    """Show the computation graph as a tree, in DOT, SVG or PNG.

    Each node's kind (MulBackward0 ...), whether it is a leaf, its value and its gradient.
    --dot prints Graphviz DOT; --svg FILE and --png FILE save an image (Graphviz's dot).
    """
    from ..core import api
    from . import graph, render

    inv = Invocation(ctx, expr, json_out, device, dtype, var, vars_json)
    seed = None if grad_output is None else options.parse_literal(grad_output, "--grad-output")
    result = api.graph_of(inv.program(), inv.values, grad_output=seed)
    images = [(path, fmt) for path, fmt in ((svg, "svg"), (png, "png")) if path is not None]
    if images:
        from .files import write_atomically

        text = graph.graph_dot(inv.source, result)
        for path, fmt in images:  # drawn first: an error leaves no file and prints nothing
            write_atomically(path, graph.dot_image(text, fmt), f"--{fmt}")
        if not (inv.json or dot):
            return
    if inv.json:
        render.emit_json(graph.graph_json(inv.source, result))
    elif dot:
        print(graph.graph_dot(inv.source, result))
    else:
        graph.render_tree(inv.source, result, max_depth=max_depth)


@app.command("batch")
def batch_command(
    file: Annotated[
        str,
        typer.Argument(
            metavar="FILE", help="JSONL or CSV input ('-' reads stdin).", show_default=False
        ),
    ],
    expr: Annotated[
        str | None,
        typer.Option(
            "--expr",
            "-e",
            help="The expression for every line (CSV: required; JSONL: the "
            "default, and a line may then be just its variables).",
        ),
    ] = None,
    op: Annotated[
        str,
        typer.Option(
            "--op",
            help="eval, grad, hessian, jacobian, diff, taylor, propagate, minimize, solve or "
            'critical (a JSONL line\'s "op" overrides it).',
        ),
    ] = "grad",
    wrt: Wrt = None,
    input_format: Annotated[
        str | None,
        typer.Option(
            "--format", help="jsonl or csv (default: from the file's extension; stdin: jsonl)."
        ),
    ] = None,
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            "-o",
            help="Write the JSONL here instead of stdout: a regular file "
            "is replaced atomically (a temporary file renamed at the "
            "end, its permissions kept); a FIFO or device is written "
            "through; a symlink's target is replaced.",
        ),
    ] = None,
    chunk_size: Annotated[
        int, typer.Option("--chunk-size", help="Lines read and evaluated together (bounds memory).")
    ] = 65536,
    fail_fast: Annotated[
        bool, typer.Option("--fail-fast", help="Stop after the first line that fails.")
    ] = False,
    progress: Annotated[
        bool | None,
        typer.Option(
            "--progress/--no-progress",
            help="A progress bar on stderr (default: when stderr "
            "is a terminal and the input is large).",
        ),
    ] = None,
    order_text: Annotated[
        str | None,
        typer.Option(
            "--order",
            metavar="N",
            help="For diff, and grad of one variable: the order of the derivative "
            f"(1 to {options.MAX_ORDER}); for taylor: the degree (0 to {options.MAX_ORDER}).",
        ),
    ] = None,
    json_out: Annotated[
        bool,
        typer.Option(
            "--json", help="Accepted like on every command; batch output is always JSONL."
        ),
    ] = False,
    device: Device = "cpu",
    dtype: Dtype = "float64",
    max_memory: MaxMemory = None,
    timeout: Timeout = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict", help="A CSV column the expression does not use is an error, not a warning."
        ),
    ] = False,
    method: Annotated[
        str | None, typer.Option("--method", help="minimize lines: newton, bfgs or gd.")
    ] = None,
    gtol: Annotated[
        float | None,
        typer.Option("--gtol", help="minimize and critical lines: gradient tolerance."),
    ] = None,
    tol: Annotated[
        float | None, typer.Option("--tol", help="solve lines: residual tolerance.")
    ] = None,
    max_iter: Annotated[
        int | None, typer.Option("--max-iter", help="minimize, solve, critical lines: at most.")
    ] = None,
    trace: Annotated[
        bool, typer.Option("--trace", help="minimize, solve, critical lines: every iterate.")
    ] = False,
    at: Annotated[
        list[str] | None,
        typer.Option("--at", metavar="NAME=VALUE", help="taylor lines: the remainder's point."),
    ] = None,
    corr: Annotated[
        list[str] | None,
        typer.Option("--corr", metavar="A,B=R", help="propagate lines: a correlation."),
    ] = None,
    mc: Annotated[
        int | None, typer.Option("--mc", metavar="N", help="propagate lines: Monte Carlo draws.")
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", help="propagate lines: the draws' seed.")
    ] = None,
    engine: Annotated[
        str,
        typer.Option(
            "--engine",
            help="local (this process) or dask (a Dask cluster: FILE may also be a glob or a "
            "folder of CSV, JSONL and Parquet files, and -o DIR.parquet writes Parquet).",
        ),
    ] = "local",
    scheduler: Annotated[
        str | None,
        typer.Option(
            "--scheduler",
            metavar="ADDRESS",
            help="--engine dask: the scheduler of an existing cluster (tcp://host:8786), or "
            "in-process (threads in this process); default: a new local cluster.",
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            help="--engine dask, local cluster: worker processes (default: one per core).",
        ),
    ] = None,
    partition_size: Annotated[
        str | None,
        typer.Option(
            "--partition-size",
            metavar="SIZE",
            help="--engine dask: bytes of CSV/JSONL per task, like 16M (default: from the input's "
            "size and the cluster's threads, 1M to 16M); Parquet: one task per row group.",
        ),
    ] = None,
):
    """Evaluate many lines of a JSONL or CSV file.

    One JSONL result per input line, in order.  Exit code 0 when every line succeeded, 1
    when any line failed (its output line holds the error; a summary goes to stderr), 2 for
    a bad command line, 130/143/129 when stopped by SIGINT/SIGTERM/SIGHUP (the lines
    completed so far are kept), 141 when the reader of stdout goes away.  With --engine
    dask the lines are evaluated on a Dask cluster (FILE may be a glob or a folder; Parquet
    too): the same output, in order.
    """
    from ..core import backend, limits
    from . import batch

    if dtype not in ("float64", "float32"):
        raise options.UsageError(f"--dtype must be float64 or float32, not {dtype!r}")
    if device not in ("cpu", "gpu"):
        raise options.UsageError(f"--device must be cpu or gpu, not {device!r}")
    memory = options.parse_max_memory(max_memory)
    seconds = options.parse_timeout(timeout)  # batch sets its own timer: lines are kept
    dask = None  # --engine dask's settings (its module is loaded on that path only)
    if engine != "local" or (scheduler, workers, partition_size) != (None, None, None):
        from . import batch_dask

        dask = batch_dask.engine_options(
            engine, scheduler, workers, partition_size, device, dtype, memory
        )
    with backend.using(device=device, dtype=dtype), limits.using(memory):
        summary = (batch.run_batch if dask is None else batch_dask.runner(dask))(
            batch.BatchOptions(
                source=file,
                expr=expr,
                op=op,
                wrt=options.split_names(wrt) or None,
                input_format=input_format,
                output=output,
                chunk_size=chunk_size,
                fail_fast=fail_fast,
                progress=progress,
                order=None if order_text is None else options.parse_order(order_text, None),
                timeout=seconds,
                strict=strict,
                settings=_analysis_defaults(
                    method=method,
                    gtol=gtol,
                    tol=tol,
                    max_iter=max_iter,
                    trace=trace or None,
                    at=None if at is None else options.named_literals(at, "--at"),
                    corr=corr,
                    mc=mc,
                    seed=seed,
                ),
            )
        )
    summary.exit()


def _analysis_defaults(**given) -> dict | None:
    """The analysis settings given on batch's command line, keyed as a line's keys: each
    applies to the lines whose op takes it (a line's own key wins)."""
    settings = {key: value for key, value in given.items() if value is not None}
    return settings or None


# The analysis commands (taylor, propagate, minimize, solve, critical) and plot live in
# their own modules; importing them registers them on `app`.
from . import analysis, plot, repl  # noqa: E402,F401


def describe_commands() -> None:
    """Every command's summary (the top-level help lists it whole; Click would cut a
    docstring's at 45 characters or at the first full stop) and example (the end of its
    --help) are helptext.COMMANDS', which the top-level help reads without loading this
    module.  Called here and again when a Click command is built (cli.main.click_command):
    a command module imported before this one (``import autograd_cli.cli.analysis``)
    registers its commands after this module's last line has run."""
    for info in app.registered_commands:
        info.short_help = helptext.COMMANDS[info.name][0]
        info.epilog = helptext.example_epilog(info.name)


describe_commands()
