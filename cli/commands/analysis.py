"""The analysis commands: taylor, propagate, minimize, solve, critical (issue 14).

Each is a thin layer over a library function (:mod:`autograd_cli.core.taylor`,
:mod:`~autograd_cli.core.uncertainty`, :mod:`~autograd_cli.core.optimize`):
read the expression and values as every command does (:class:`.common.Invocation`),
check the options and run the analysis, render a Rich table for people or SPEC's JSON
document.  The checks, the run and the document are :mod:`autograd_cli.analysis_docs`'s,
shared with the ``batch`` command's lines of these ops (a line's output is the document
printed here).  Importing this module registers the commands on :data:`.common.app`.
"""

from __future__ import annotations

from typing import Annotated

import typer

from ... import analysis_docs as docs
from ...analysis_docs import split_uncertain  # noqa: F401 - the command's, from here too
from .. import options
from .common import Expr, Invocation, Wrt, command

MaxIter = Annotated[
    int | None,
    typer.Option("--max-iter", help="Stop after this many iterations.", show_default=False),
]
Trace = Annotated[
    bool, typer.Option("--trace", help="Also show every iterate (JSON: a 'trace' list).")
]


# ---------------------------------------------------------------------------
# taylor
# ---------------------------------------------------------------------------


@command("taylor")
def taylor_command(
    ctx: typer.Context,
    expr: Expr,
    wrt: Wrt = None,
    order_text: Annotated[
        str | None,
        typer.Option(
            "--order",
            metavar="K",
            help="The degree (default 5 for one variable, 2 for several).",
            show_default=False,
        ),
    ] = None,
    at: Annotated[
        list[str] | None,
        typer.Option(
            "--at",
            metavar="NAME=VALUE",
            help="Compare the polynomial with the function there (the remainder); repeatable.",
        ),
    ] = None,
):
    """Compute the Taylor coefficients and polynomial at a point.

    Exact, from the engine's derivatives: for one variable c[k] = f^(k)/k!, for several the
    gradient, the Hessian / 2 and so on.  --at NAME=VALUE compares the polynomial with the
    function there.
    """
    inv = Invocation(ctx, expr)
    order = None if order_text is None else options.parse_order(order_text, minimum=0)
    where = docs.scalars(options.named_literals(at or [], "--at"), "--at")
    r = docs.analyse(
        "taylor",
        inv.program(),
        inv.values,
        wrt=options.split_names(wrt),
        order=order,
        settings={"at": where},
    )
    if inv.json:
        from ..render import emit_json

        emit_json(docs.document("taylor", inv.source, r))
        return
    rows = [("point", ", ".join(f"{k} = {_num(v)}" for k, v in r.at.items()))]
    if isinstance(r.coefficients, list):
        rows += [(f"c{k}", text) for k, text in enumerate(_nums(r.coefficients))]
    else:
        rows += [(f"order {k}", _compact(c)) for k, c in r.coefficients.items()]
    rows.append(("polynomial", r.polynomial))
    if r.remainder is not None:
        rem = r.remainder
        at_text = ", ".join(f"{k} = {_num(v)}" for k, v in rem["at"].items())
        rows.append(
            (
                f"at {at_text}",
                f"f = {_num(rem['value'])}, polynomial = "
                f"{_num(rem['polynomial'])}, remainder = {_num(rem['remainder'])}",
            )
        )
    _print_rows(inv.source, rows, r.warnings)


# ---------------------------------------------------------------------------
# propagate
# ---------------------------------------------------------------------------


def _take_uncertainties(ctx) -> dict:
    """Rewrite ``--NAME V+-U`` in the command's extra arguments to ``--NAME V`` and return
    ``{NAME: U}`` (the values are then read as every command reads them)."""
    found = {}
    args = list(ctx.args)
    for i in range(len(args) - 1):
        token = args[i]
        if options.is_option_name(token) and "=" not in token:
            value, u = split_uncertain(args[i + 1], token[2:])
            if u is not None:
                args[i + 1] = value
                found[token[2:]] = u
    ctx.args[:] = args
    return found


@command("propagate")
def propagate_command(
    ctx: typer.Context,
    expr: Expr,
    corr: Annotated[
        list[str] | None,
        typer.Option(
            "--corr",
            metavar="A,B=R",
            help="The correlation of two scalar inputs (repeatable).",
        ),
    ] = None,
    mc: Annotated[
        int | None,
        typer.Option("--mc", metavar="N", help="Monte Carlo check with N draws (JCGM 101)."),
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Seed of the Monte Carlo draws.")
    ] = None,
):
    """Propagate the inputs' standard uncertainties to the value.

    Each uncertain input is --NAME VALUE+-U (or VALUE±U).  The result is the value, its
    standard uncertainty (GUM, with the second-order term) and each input's share;
    --mc N checks it by Monte Carlo.
    """
    uncertainties = _take_uncertainties(ctx)
    inv = Invocation(ctx, expr)
    correlations = docs.parse_corr(corr or [])
    r = docs.analyse(
        "propagate",
        inv.program(),
        inv.values,
        settings={
            "uncertainties": uncertainties,
            "correlations": correlations,
            "mc": docs.check_mc(mc),
            "seed": docs.check_seed(seed),
        },
    )
    if inv.json:
        from ..render import emit_json

        emit_json(docs.document("propagate", inv.source, r))
        return
    _print_budget(inv.source, r)


# ---------------------------------------------------------------------------
# minimize, solve, critical
# ---------------------------------------------------------------------------


def _bounds_from_args(ctx) -> dict:
    """``--x -1:2`` bounds x to [-1, 2] and starts it at the midpoint; the argument is
    rewritten to the start value."""
    bounds = {}
    args = list(ctx.args)
    for i in range(len(args) - 1):
        token = args[i]
        if not (options.is_option_name(token) and "=" not in token):
            continue
        found = docs.parse_bounds(args[i + 1], token)
        if found is None:
            continue
        lo, hi, start = found
        bounds[token[2:]] = (lo, hi)
        args[i + 1] = repr(start)
    ctx.args[:] = args
    return bounds


def _optimize(op: str, inv, wrt, trace: bool, **settings) -> None:
    """Run minimize, solve or critical and print the result; exit 1 when not converged."""
    r = docs.analyse(op, inv.program(), inv.values, wrt=options.split_names(wrt), settings=settings)
    if inv.json:
        from ..render import emit_json

        emit_json(docs.document(op, inv.source, r, trace=trace))
    else:
        from ...core.optimize import NOT_A_MINIMUM

        rows = [  # "point", not "x": a variable may be named x (the JSON key stays "x")
            ("point", ", ".join(f"{k} = {_compact(v)}" for k, v in r.x.items())),
            ("value", _compact(r.value)),
        ]
        if op == "solve":
            rows.append(("residual", _num(r.residual)))
        label = "Jacobian" if op == "solve" else "gradient"
        rows.append((label, ", ".join(f"{k}: {_compact(v)}" for k, v in r.grad.items())))
        if op == "critical":
            rows.append(("kind", r.kind))
            rows.append(("eigenvalues", _compact(r.eigenvalues)))
        rows.append(("iterations", f"{r.iterations} ({r.method})"))
        rows.append(("converged", f"{'yes' if r.converged else 'NO'}: {r.message}"))
        stopped = (
            r.message if r.message.startswith(NOT_A_MINIMUM) else f"did not converge: {r.message}"
        )
        warnings = [] if r.converged else [stopped]
        _print_rows(inv.source, rows, warnings)
        if trace:
            _print_trace(r.trace)
    if not r.converged:
        raise typer.Exit(1)


@command("minimize")
def minimize_command(
    ctx: typer.Context,
    expr: Expr,
    wrt: Wrt = None,
    method: Annotated[
        str, typer.Option("--method", help="newton (exact Hessian), bfgs or gd.")
    ] = "newton",
    gtol: Annotated[
        float, typer.Option("--gtol", help="Converged when every gradient entry is below this.")
    ] = 1e-10,
    max_iter: MaxIter = None,
    trace: Trace = False,
):
    """Find a local minimum from a start point.

    Newton's method on the exact Hessian (--method bfgs or gd: others).  --x LOW:HIGH
    bounds x and starts it mid-way.  Exit 1 when it does not converge, or converges where
    the gradient is zero but the exact Hessian shows no minimum (a saddle, a maximum, an
    inflection); the last iterate is still printed.
    """
    bounds = _bounds_from_args(ctx)
    inv = Invocation(ctx, expr)
    docs.check_positive(gtol, "--gtol")
    _optimize(
        "minimize",
        inv,
        wrt,
        trace,
        method=method,
        gtol=gtol,
        max_iter=docs.check_max_iter(max_iter),
        bounds=bounds,
    )


@command("solve")
def solve_command(
    ctx: typer.Context,
    expr: Expr,
    wrt: Wrt = None,
    tol: Annotated[
        float, typer.Option("--tol", help="Converged when ||F|| is below this.")
    ] = 1e-12,
    max_iter: MaxIter = None,
    trace: Trace = False,
):
    """Find a root of an equation or of a system of equations.

    Each ';'-separated statement is one equation, F = 0, solved by Newton's method from
    the start point the values give.  Exit 1 when it does not converge (the last iterate
    is still printed).
    """
    inv = Invocation(ctx, expr)
    docs.check_positive(tol, "--tol")
    _optimize("solve", inv, wrt, trace, tol=tol, max_iter=docs.check_max_iter(max_iter))


@command("critical")
def critical_command(
    ctx: typer.Context,
    expr: Expr,
    wrt: Wrt = None,
    gtol: Annotated[
        float, typer.Option("--gtol", help="Converged when every gradient entry is below this.")
    ] = 1e-10,
    max_iter: MaxIter = None,
    trace: Trace = False,
):
    """Find a stationary point and tell its kind.

    Newton's method on gradient = 0 from a start point; the Hessian's eigenvalues tell a
    minimum, maximum, saddle or degenerate point.  Exit 1 when it does not converge.
    """
    inv = Invocation(ctx, expr)
    docs.check_positive(gtol, "--gtol")
    _optimize("critical", inv, wrt, trace, gtol=gtol, max_iter=docs.check_max_iter(max_iter))


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def _nums(xs) -> list[str]:
    """Numbers of one column at the table's precision, in one notation (NumPy's rule over
    them all: ``1.0000e+00`` ... ``1.3889e+03`` rather than ``1.0`` beside ``1388.8889``)."""
    from ..render import _number_text, column_notation, current_precision, format_value

    if current_precision() is None:
        return [_number_text(x) for x in xs]
    notation = column_notation(xs)
    return [format_value(x, notation=notation) for x in xs]


def _num(x) -> str:
    """A number at the table's precision (``--precision``); every digit with ``--plain``."""
    from ..render import _number_text, current_precision, format_scalar

    if current_precision() is None:
        return _number_text(x)
    return format_scalar(x)


def _compact(v) -> str:
    """A number or nested list on one line: NumPy's array text at the table's precision."""
    from ..render import current_precision, one_line

    if current_precision() is None:
        if isinstance(v, list):
            return "[" + ", ".join(_compact(x) for x in v) + "]"
        return _num(v)
    if isinstance(v, list):
        import numpy

        return one_line(numpy.asarray(v, dtype=float), limit=10**6)
    return _num(v)


def _print_rows(title: str, rows: list, warnings: list) -> None:
    from rich.table import Table

    from ..render import make_console, print_warnings, user_text

    table = Table(title=user_text(title), box=None, title_justify="left", show_header=False)
    table.add_column("", style="bold", no_wrap=True)
    table.add_column("", overflow="fold")
    for label, text in rows:
        table.add_row(user_text(label), user_text(text))
    make_console().print(table)
    print_warnings(warnings)


def _print_budget(title: str, r) -> None:
    from rich import box
    from rich.table import Table

    from ..render import make_console, print_warnings, user_text

    console = make_console()
    console.print(
        user_text(f"{title} = {_num(r.value)} ± {_num(r.uncertainty)} (standard uncertainty)")
    )
    table = Table(box=box.SIMPLE_HEAD, show_edge=False)
    for column in ("input", "value", "u(x)", "sensitivity", "contribution", "share %"):
        table.add_column(column, overflow="fold")
    for name, b in r.budget.items():
        table.add_row(
            user_text(name),
            _compact(b["value"]),
            _compact(b["uncertainty"]),
            _compact(b["sensitivity"]),
            _num(b["contribution"]),
            f"{b['share']:.3g}",
        )
    console.print(table)
    console.print(f"second-order variance term: {_num(r.second_order)}")
    if r.mc is not None:
        lo, hi = r.mc["interval"]
        console.print(
            f"Monte Carlo ({r.mc['draws']:,} draws): mean {_num(r.mc['mean'])}, "
            f"std {_num(r.mc['std'])}, 95 % interval [{_num(lo)}, {_num(hi)}]"
        )
    print_warnings(r.warnings)


def _print_trace(trace: list) -> None:
    from rich import box
    from rich.table import Table

    from ..render import make_console

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, title="iterates", title_justify="left")
    keys = [k for k in trace[0] if k != "iteration"] if trace else []
    table.add_column("#", no_wrap=True)
    for k in keys:
        table.add_column("point" if k == "x" else k, overflow="fold")
    for row in trace:
        cells = []
        for k in keys:
            v = row[k]
            cells.append(
                ", ".join(f"{n} = {_compact(x)}" for n, x in v.items())
                if isinstance(v, dict)
                else _compact(v)
            )
        table.add_row(str(row["iteration"]), *cells)
    make_console().print(table)
