"""The analysis commands: taylor, propagate, minimize, solve, critical (issue 14).

Each is a thin layer over a library function (:mod:`autograd_cli.core.taylor`,
:mod:`~autograd_cli.core.uncertainty`, :mod:`~autograd_cli.core.optimize`):
read the expression and values as every command does (:class:`.common.Invocation`),
check the options and run the analysis, render a Rich table for people or SPEC's JSON
document.  The checks, the run and the document are :mod:`autograd_cli.core.analysis_docs`'s,
shared with the ``batch`` command's lines of these ops (a line's output is the document
printed here).  Importing this module registers the commands on :data:`.common.app`.
"""

from __future__ import annotations

from typing import Annotated

import typer

from ...core import analysis_docs as docs
from ...core.analysis_docs import split_uncertain  # noqa: F401 - the command's, from here too
from .. import options, render_analysis
from ..status import flag
from .common import Invocation, command, option
from .shared import ALL

MaxIter = Annotated[
    int | None,
    typer.Option(
        "--max-iter",
        help="Stop after this many iterations (default 100; minimize --method bfgs 1000, "
        "gd 10000).",
        show_default=False,
    ),
]
Trace = Annotated[
    bool, typer.Option("--trace", help="Also show every iterate (JSON: a 'trace' list).")
]
Gtol = Annotated[
    float,
    typer.Option("--gtol", help="Converged when every gradient entry is at most this in size."),
]


def _show(inv, op: str, r, table, **settings) -> None:
    """Print an analysis's result ``r`` with the library's setting names spelled as flags:
    SPEC's JSON document with --json (``settings`` go to it), else ``table(r)``."""
    r = docs.spelled(r, flag)
    if inv.json:
        from ..render import emit_json

        emit_json(docs.document(op, inv.source, r, **settings))
    else:
        table(r)


# ---------------------------------------------------------------------------
# taylor
# ---------------------------------------------------------------------------


_TaylorOrderOption = option(
    "--order",
    str,
    "The degree (default 5 for one variable, 2 for several).",
    metavar="K",
    show_default=False,
)
_TaylorAtOption = option(
    "--at",
    list[str],
    "Compare the polynomial with the function there (the remainder); repeatable.",
    metavar="NAME=VALUE",
)


@command("taylor")
def taylor_command(
    ctx: typer.Context,
    order_text: _TaylorOrderOption = None,
    at: _TaylorAtOption = None,
):
    """Compute the Taylor coefficients and polynomial at a point.

    Exact, from the engine's derivatives: for one variable c[k] = f^(k)/k!, for several the
    gradient, the Hessian / 2 and so on.  --at NAME=VALUE compares the polynomial with the
    function there.
    """
    from ...core import api

    inv = Invocation(ctx)
    order = None if order_text is None else options.parse_order(order_text, minimum=0)
    where = docs.scalars(options.named_literals(at or [], "--at"), "--at")
    r = api.compute("taylor", inv.program(), inv.values, inv.wrt, order=order, at=where)
    _show(inv, "taylor", r, lambda r: render_analysis.taylor_table(inv.source, r, inv.precision))


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
            value, u = split_uncertain(args[i + 1], token[2:], f"the uncertainty of {token}")
            if u is not None:
                args[i + 1] = value
                found[token[2:]] = u
    ctx.args[:] = args
    return found


_PropagateCorrOption = option(
    "--corr", list[str], "The correlation of two scalar inputs (repeatable).", metavar="A,B=R"
)
_PropagateMcOption = option("--mc", int, "Monte Carlo check with N draws (JCGM 101).", metavar="N")
_PropagateSeedOption = option("--seed", int, "Seed of the Monte Carlo draws.")


@command("propagate", shared=("expr", *ALL))
def propagate_command(
    ctx: typer.Context,
    corr: _PropagateCorrOption = None,
    mc: _PropagateMcOption = None,
    seed: _PropagateSeedOption = None,
):
    """Propagate the inputs' standard uncertainties to the value.

    Each uncertain input is --NAME VALUE+-U (or VALUE±U).  The result is the value, its
    standard uncertainty (GUM, with the second-order term) and each input's share;
    --mc N checks it by Monte Carlo.
    """
    from ...core import api

    uncertainties = _take_uncertainties(ctx)
    inv = Invocation(ctx)
    correlations = docs.parse_corr(corr or [])
    r = api.compute(
        "propagate",
        inv.program(),
        inv.values,
        uncertainties=uncertainties,
        correlations=correlations,
        mc=docs.check_mc(mc),
        seed=docs.check_seed(seed),
    )
    _show(inv, "propagate", r, lambda r: render_analysis.budget_table(inv.source, r, inv.precision))


# ---------------------------------------------------------------------------
# minimize, solve, critical
# ---------------------------------------------------------------------------


def _bounds_from_args(ctx) -> dict:
    """``--x -1:2`` (or ``--x=-1:2``) bounds x to [-1, 2] and starts it at the midpoint;
    the argument is rewritten to the start value."""
    bounds = {}
    given: dict = {}  # --NAME -> its first text, to name a bounded variable given twice
    args = list(ctx.args)
    for i, token in enumerate(args):
        if not options.is_option_name(token):
            continue
        name, joined, text = token.partition("=")
        if not joined and i + 1 == len(args):
            continue
        text = text if joined else args[i + 1]
        first = given.setdefault(name, text)
        found = docs.parse_bounds(text, name)
        if first != text and (found is not None or name[2:] in bounds):
            # said here, as written: the values' own check would see the starts
            raise options.UsageError(
                f"variable {name[2:]!r} is given twice with different values: {first!r} and "
                f"{text!r} ({name}); give it once"
            )
        if found is None:
            continue
        lo, hi, start = found
        bounds[name[2:]] = (lo, hi)
        if joined:
            args[i] = f"{name}={start!r}"
        else:
            args[i + 1] = repr(start)
    ctx.args[:] = args
    return bounds


def _optimize(op: str, inv, trace: bool, **settings) -> None:
    """Run minimize, solve or critical and print the result; exit 1 when not converged."""
    from ...core import api

    r = api.compute(op, inv.program(), inv.values, inv.wrt, trace=trace, **settings)

    def table(r):
        render_analysis.optimize_table(op, inv.source, r, trace, inv.precision)

    _show(inv, op, r, table, trace=trace)
    if not r.converged:
        raise typer.Exit(1)


@command("minimize")
def minimize_command(
    ctx: typer.Context,
    method: Annotated[
        str, typer.Option("--method", help="newton (exact Hessian), bfgs or gd.")
    ] = "newton",
    gtol: Gtol = 1e-10,
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
    inv = Invocation(ctx)
    _optimize(
        "minimize",
        inv,
        trace,
        method=method,
        gtol=gtol,
        max_iter=docs.check_max_iter(max_iter),
        bounds=bounds,
    )


@command("solve")
def solve_command(
    ctx: typer.Context,
    tol: Annotated[
        float, typer.Option("--tol", help="Converged when ||F|| is at most this times 1 + max|x|.")
    ] = 1e-12,
    max_iter: MaxIter = None,
    trace: Trace = False,
):
    """Find a root of an equation or of a system of equations.

    Each ';'-separated statement is one equation, F = 0, solved by Newton's method from
    the start point the values give.  Exit 1 when it does not converge (the last iterate
    is still printed).
    """
    inv = Invocation(ctx)
    _optimize("solve", inv, trace, tol=tol, max_iter=docs.check_max_iter(max_iter))


@command("critical")
def critical_command(
    ctx: typer.Context,
    gtol: Gtol = 1e-10,
    max_iter: MaxIter = None,
    trace: Trace = False,
):
    """Find a stationary point and tell its kind.

    Newton's method on gradient = 0 from a start point; the Hessian's eigenvalues tell a
    minimum, maximum, saddle or degenerate point.  Exit 1 when it does not converge.
    """
    inv = Invocation(ctx)
    _optimize("critical", inv, trace, gtol=gtol, max_iter=docs.check_max_iter(max_iter))
