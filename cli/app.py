"""The Typer application: one function per command, each a thin layer over core.

A command reads the expression and the values, calls a library function in
:mod:`autograd_cli.core.api` and hands the plain result to a renderer.  Errors
are raised, not printed: :mod:`autograd_cli.cli.main` turns them into a
message and an exit code at one boundary.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ..core.safetext import visible
from . import options

app = typer.Typer(
    name="autograd-cli",
    help="A command-line gradient calculator and expression differentiator "
    "(PyTorch autograd semantics). Variables are given as --NAME VALUE.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

# Variables come as --NAME VALUE: unknown options are collected, not rejected.
VARIABLE_CONTEXT = {"allow_extra_args": True, "ignore_unknown_options": True}

Expr = Annotated[
    str,
    typer.Argument(
        help="The expression or program ('-' reads stdin). One starting with '-' goes after '--'.",
        show_default=False,
    ),
]
Json = Annotated[bool, typer.Option("--json", help="Print one JSON document (for programs).")]
Device = Annotated[str, typer.Option("--device", help="cpu (NumPy) or gpu (CuPy).")]
Dtype = Annotated[str, typer.Option("--dtype", help="float64 (default) or float32.")]
Var = Annotated[
    list[str] | None,
    typer.Option("--var", help="NAME=VALUE (repeatable), for names that clash with options."),
]
Vars = Annotated[
    str | None,
    typer.Option("--vars", help="All values as a JSON object ('-' reads stdin, @FILE a file)."),
]
OutputFormat = Annotated[
    str,
    typer.Option(
        "--format",
        help="table (default, for people), json, plain (numbers one per line: the "
        "value, then each gradient) or csv (quantity,index,value).",
    ),
]
Wrt = Annotated[
    str | None,
    typer.Option("--wrt", help="Differentiate only w.r.t. these variables (comma-separated)."),
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
        self.values, leftovers = options.collect_variables(list(ctx.args), var, vars_json)
        if leftovers:
            raise options.UsageError(
                f"unexpected argument(s): {' '.join(leftovers)} (variables are "
                f"given as --NAME VALUE; quote the expression)"
            )
        if expr == "-" and vars_json == "-":
            raise options.UsageError("the expression and --vars cannot both come from stdin")
        self.source = options.read_expression(expr)
        self.json = json_out
        # For the command's run only: Click closes the context, and so the block, when the
        # command returns or raises, and the previous device and dtype come back.
        ctx.with_resource(backend.using(device=device, dtype=dtype))

    def program(self):
        from ..grammar import parse

        return parse(self.source)


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
    var: Var = None,
    vars_json: Vars = None,
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
            help="For a non-scalar output: the vector v of the "
            "vector-Jacobian product v^T J (a JSON array).",
        ),
    ] = None,
    order: Annotated[
        int,
        typer.Option(
            "--order",
            help="The N-th derivative of a scalar expression of one "
            "variable (repeated differentiation).",
        ),
    ] = 1,
    tangent: Annotated[
        list[str] | None,
        typer.Option(
            "--tangent",
            help="NAME=VALUE: forward mode, J v for the direction v "
            "(repeatable; other variables get a zero tangent).",
        ),
    ] = None,
    output_format: OutputFormat = "table",
    json_out: Json = False,
    device: Device = "cpu",
    dtype: Dtype = "float64",
    var: Var = None,
    vars_json: Vars = None,
):
    """Value and gradient w.r.t. every input variable (or those named by --wrt)."""
    from ..core import api

    inv = Invocation(ctx, expr, json_out, device, dtype, var, vars_json)
    names = options.split_names(wrt)
    if order < 1:
        raise options.UsageError(f"--order must be 1 or more, not {order}")
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
    var: Var = None,
    vars_json: Vars = None,
):
    """Value, gradient and all second partials of a scalar expression."""
    from ..core import api

    inv = Invocation(ctx, expr, json_out, device, dtype, var, vars_json)
    _render(
        inv, api.hessian_of(inv.program(), inv.values, wrt=options.split_names(wrt)), output_format
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
    var: Var = None,
    vars_json: Vars = None,
):
    """Value and the Jacobian of the output w.r.t. each variable (shape output + variable)."""
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
    eps: Annotated[float, typer.Option("--eps", help="Finite-difference step.")] = 1e-6,
    atol: Annotated[float, typer.Option("--atol")] = 1e-5,
    rtol: Annotated[float, typer.Option("--rtol")] = 1e-3,
    json_out: Json = False,
    device: Device = "cpu",
    dtype: Dtype = "float64",
    var: Var = None,
    vars_json: Vars = None,
):
    """Gradient check: analytic derivatives vs central finite differences; exit 1 on failure."""
    from ..core import api
    from . import render

    inv = Invocation(ctx, expr, json_out, device, dtype, var, vars_json)
    result = api.check_of(
        inv.program(), inv.values, wrt=options.split_names(wrt), eps=eps, atol=atol, rtol=rtol
    )
    if inv.json:
        render.emit_json(render.check_json(inv.source, result))
    else:
        render.render_check(inv.source, result)
    if not result.passed:
        raise typer.Exit(1)


@app.command("diff", context_settings=VARIABLE_CONTEXT)
def diff_command(
    ctx: typer.Context,
    expr: Expr,
    wrt: Wrt = None,
    order: Annotated[int, typer.Option("--order", help="Differentiate N times.")] = 1,
    latex: Annotated[bool, typer.Option("--latex", help="Print LaTeX.")] = False,
    json_out: Json = False,
    device: Device = "cpu",
    dtype: Dtype = "float64",
    var: Var = None,
    vars_json: Vars = None,
):
    """The derivative as an expression (symbolic, simplified); with values, also its value."""
    from ..core import api
    from . import render

    inv = Invocation(ctx, expr, json_out, device, dtype, var, vars_json)
    result = api.diff_of(inv.program(), inv.values, wrt=options.split_names(wrt), order=order)
    if inv.json:
        render.emit_json(render.result_json(inv.source, result))
    else:
        render.render_diff(inv.source, result, latex=latex)


@app.command("explain", context_settings=VARIABLE_CONTEXT)
def explain_command(
    ctx: typer.Context,
    expr: Expr,
    wrt: Wrt = None,
    json_out: Json = False,
    device: Device = "cpu",
    dtype: Dtype = "float64",
    var: Var = None,
    vars_json: Vars = None,
):
    """Walk the chain rule: intermediates, local derivatives, and the sum over paths."""
    from ..core import api
    from . import render

    inv = Invocation(ctx, expr, json_out, device, dtype, var, vars_json)
    result = api.explain_of(inv.program(), inv.values, wrt=options.split_names(wrt))
    if inv.json:
        render.emit_json(render.explain_json(result))
    else:
        sys.stdout.write(visible(render.explain_text(result).rstrip("\n")) + "\n")


@app.command("graph", context_settings=VARIABLE_CONTEXT)
def graph_command(
    ctx: typer.Context,
    expr: Expr,
    dot: Annotated[bool, typer.Option("--dot", help="Print Graphviz DOT.")] = False,
    grad_output: Annotated[
        str | None,
        typer.Option(
            "--grad-output",
            help="For a non-scalar output: the v of v^T J, so the nodes' gradients can be shown.",
        ),
    ] = None,
    max_depth: Annotated[int, typer.Option("--max-depth", help="Levels of the tree to draw.")] = 60,
    json_out: Json = False,
    device: Device = "cpu",
    dtype: Dtype = "float64",
    var: Var = None,
    vars_json: Vars = None,
):
    """The computation graph as a tree: node kinds (MulBackward0 ...), leaves, values and grads."""
    from ..core import api
    from . import graph, render

    inv = Invocation(ctx, expr, json_out, device, dtype, var, vars_json)
    seed = None if grad_output is None else options.parse_literal(grad_output, "--grad-output")
    result = api.graph_of(inv.program(), inv.values, grad_output=seed)
    if inv.json:
        render.emit_json(graph.graph_json(inv.source, result))
    elif dot:
        print(graph.graph_dot(inv.source, result))
    else:
        graph.render_tree(inv.source, result, max_depth=max_depth)


@app.command("batch")
def batch_command(
    file: Annotated[
        str, typer.Argument(help="JSONL or CSV input ('-' reads stdin).", show_default=False)
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
            help='eval, grad, hessian, jacobian or diff (a JSONL line\'s "op" overrides it).',
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
    order: Annotated[
        int | None,
        typer.Option(
            "--order", help="For diff, and grad of one variable: the order of the derivative."
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
):
    """Many evaluations from a JSONL or CSV file: one JSONL result per input line, in order.

    Exit code 0 when every line succeeded, 1 when any line failed (its output line holds
    the error; a summary goes to stderr), 2 for a bad command line, 130/143/129 when
    stopped by SIGINT/SIGTERM/SIGHUP (the lines completed so far are kept), 141 when the
    reader of stdout goes away.
    """
    from ..core import backend
    from . import batch

    if dtype not in ("float64", "float32"):
        raise options.UsageError(f"--dtype must be float64 or float32, not {dtype!r}")
    if device not in ("cpu", "gpu"):
        raise options.UsageError(f"--device must be cpu or gpu, not {device!r}")
    with backend.using(device=device, dtype=dtype):
        summary = batch.run_batch(
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
                order=order,
            )
        )
    summary.exit()
