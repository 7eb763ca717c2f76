"""The diff command: the derivative as a simplified expression (text or LaTeX), with its
value at the point when values are given."""

from __future__ import annotations

from typing import Annotated

import typer

from .. import options
from .common import Invocation, command, order_option

DiffOrder = order_option(
    f"Differentiate N times (0 to {options.MAX_ORDER}; 0 gives the expression itself).  "
    "[default: 1]"
)


@command("diff")
def diff_command(
    ctx: typer.Context,
    order_text: DiffOrder = None,
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
):
    """Print the derivative as a simplified expression.

    Symbolic, in the tool's own language (it parses back); --order N differentiates N
    times, --hessian gives every second partial, --latex prints LaTeX.  With values, the
    derivative's value too.
    """
    from ...core import api
    from .. import render

    inv = Invocation(ctx)
    order = 1 if order_text is None else options.parse_order(order_text, minimum=0)
    if hessian:
        if order_text is not None and order != 2:
            raise options.UsageError(
                f"--hessian gives the second partials: it takes --order 2 (or no --order), "
                f"not --order {order}"
            )
        order = 2
    names = inv.wrt
    limit = options.parse_count(max_nodes, "--max-nodes")
    result = api.diff_of(
        inv.program(), inv.values, wrt=names, order=order, max_nodes=limit, mixed=hessian
    )
    if inv.json:
        render.emit_json(_diff_document(render.result_json(inv.source, result), result))
    else:
        render.render_diff(inv.source, result, latex=latex, precision=inv.precision)
        _render_mixed(result, latex, inv.precision)


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


def _render_mixed(result, latex: bool, precision: int | None) -> None:
    """For a person: the mixed partials under diff's table (``--hessian``), or a hint that
    ``--hessian`` gives them (``--order 2`` with several variables)."""
    from .. import render

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
    notation = render.column_notation(values, precision) if evaluated else None  # one per column
    for (a, b), value in zip(pairs, values):
        d = result.hessian[a][b]
        row = [escape(f"d^2/d{a}d{b}"), render.user_text(d.text)]
        if evaluated:
            row.append(escape(render.format_value(value, precision, notation=notation)))
        table.add_row(*row)
    console.print(table)
