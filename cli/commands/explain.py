"""How a result comes about: explain (the chain rule step by step) and graph (the
computation graph as a tree, DOT, SVG or PNG)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ...core.safetext import visible
from .. import options
from .common import Invocation, command, option
from .shared import ALL


@command("explain")
def explain_command(
    ctx: typer.Context,
    max_steps: Annotated[
        int,
        typer.Option(
            "--max-steps",
            metavar="N",
            help="List at most N steps of each kind (the rest are counted); 0 lists every step.",
        ),
    ] = 100,
):
    """Show the chain rule step by step.

    The intermediates, each local derivative, and the sum over the paths into each
    variable; over arrays, the vector-Jacobian product each op applies (the output must be
    a number: a loss).
    """
    from .. import render

    inv = Invocation(ctx)
    steps = options.parse_count(max_steps, "--max-steps")
    result = _explain(inv.program(), inv.values, inv.wrt, steps)
    if inv.json:
        render.emit_json(render.explain_json(result))
    else:
        # explain's own numbers (six significant digits) unless --precision or --plain says
        digits = render.EXPLAIN_DIGITS
        if inv.shared.precision is not None or inv.shared.plain:
            digits = inv.precision
        text = render.explain_text(result, digits)
        sys.stdout.write(visible(text.rstrip("\n")) + "\n")


def _explain(program, values: dict, wrt: list, max_steps: int | None):
    """``api.explain_of`` with ``--max-steps`` (None: every step)."""
    from ...core.explain import explain
    from ...core.program import check_values, resolve_wrt

    check_values(program, values)
    return explain(program, values, resolve_wrt(program, wrt), max_steps=max_steps)


_GraphSvgOption = option("--svg", str, "Save the graph as SVG (Graphviz's dot).", metavar="FILE")
_GraphPngOption = option("--png", str, "Save the graph as PNG (Graphviz's dot).", metavar="FILE")
_GraphGradOutputOption = option(
    "--grad-output",
    str,
    "For a non-scalar output: the v of v^T J, so the nodes' gradients can be shown.",
    metavar="ARRAY",
)


@command("graph", shared=("expr", *ALL))
def graph_command(
    ctx: typer.Context,
    dot: Annotated[bool, typer.Option("--dot", help="Print Graphviz DOT.")] = False,
    svg: _GraphSvgOption = None,
    png: _GraphPngOption = None,
    grad_output: _GraphGradOutputOption = None,
    max_depth: Annotated[int, typer.Option("--max-depth", help="Levels of the tree to draw.")] = 60,
):
    """Show the computation graph as a tree, in DOT, SVG or PNG.

    Each node's kind (MulBackward0 ...), whether it is a leaf, its value and its gradient.
    --dot prints Graphviz DOT; --svg FILE and --png FILE save an image (Graphviz's dot).
    """
    from ...core import api
    from .. import graph, render

    inv = Invocation(ctx)
    seed = None if grad_output is None else options.parse_literal(grad_output, "--grad-output")
    result = api.graph_of(inv.program(), inv.values, grad_output=seed)
    images = [(path, fmt) for path, fmt in ((svg, "svg"), (png, "png")) if path is not None]
    if images:
        from ..files import write_atomically

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
        graph.render_tree(inv.source, result, max_depth=max_depth, precision=inv.precision)
