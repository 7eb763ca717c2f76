"""Rendering the computation graph: a Rich tree, Graphviz DOT, JSON, or an SVG/PNG by dot.

All three walk the graph with explicit stacks (no recursion), so a
100,000-deep graph renders; the tree stops after ``max_depth`` levels, or
after as many as the terminal's width leaves room for, and says so (DOT and
JSON always hold the whole graph).  Its work is linear in what it prints: Rich
draws each line's guides afresh, so a line at depth d costs d, and a chain
drawn 10,000 deep would cost 10,000**2 / 2 to print a few kilobytes (the lines
past the width are cut away).
"""

from __future__ import annotations

import os

from ..core.safetext import visible
from .render import DEFAULT_PRECISION, format_value, one_line, shape_text


def _label(node) -> str:
    parts = [node.kind]
    if node.name:
        parts.append(node.name)
    return " ".join(parts)


def _short(array) -> str:
    """A value for a DOT label: every digit (DOT is for Graphviz, as before), cut at 60."""
    text = format_value(array, precision=None)
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def graph_json(expr: str, result) -> dict:
    nodes = []
    for n in result.nodes:
        nodes.append(
            {
                "id": n.id,
                "kind": n.kind,
                "name": n.name,
                "is_leaf": n.is_leaf,
                "requires_grad": n.requires_grad,
                "value": n.value,
                "shape": list(n.value.shape),
                "grad": n.grad,
                "inputs": n.inputs,
            }
        )
    doc = {
        "expr": expr,
        "value": result.value,
        "shape": list(result.value.shape),
        "nodes": nodes,
        "output": result.nodes[-1].id,
    }
    if result.warnings:
        doc["warnings"] = list(result.warnings)
    return doc


def graph_dot(expr: str, result) -> str:
    """Graphviz DOT: an edge from each input to the node that consumes it (forward direction)."""

    def quote(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

    lines = [
        "digraph autograd {",
        "  rankdir=BT;",
        f"  label={quote(visible(expr.strip(), keep_newlines=False))};",
        '  node [shape=box, fontname="monospace"];',
    ]
    for n in result.nodes:
        text = f"{_label(n)}\\nvalue {_short(n.value)}"
        if n.grad is not None:
            text += f"\\ngrad {_short(n.grad)}"
        style = ""
        if n.kind == "leaf":
            style = ", style=filled, fillcolor=lightblue"
        elif n.kind == "constant":
            style = ", style=dashed"
        lines.append(
            f"  n{n.id} [label={quote(text).replace(chr(92) * 2 + 'n', chr(92) + 'n')}{style}];"
        )
    for n in result.nodes:
        for i in n.inputs:
            lines.append(f"  n{i} -> n{n.id};")
    lines.append("}")
    return "\n".join(lines)


#: the columns a node's text keeps at the deepest level the tree draws; each level is indented
#: by 4 columns (Rich's guides), so an 80-column terminal shows 14 levels
MIN_LABEL_COLUMNS = 24


def _levels(n: int) -> str:
    return f"{n} level" if n == 1 else f"{n} levels"


def drawn_depth(width: int, max_depth: int) -> tuple[int, bool]:
    """How many levels below the root the tree draws in ``width`` columns, and whether the
    width (not ``max_depth``) is what stops it."""
    fits = max(1, (width - MIN_LABEL_COLUMNS) // 4)
    return (fits, True) if fits < max_depth else (max_depth, False)


def render_tree(
    expr: str, result, max_depth: int = 60, precision: int | None = DEFAULT_PRECISION
) -> None:
    """The graph as a Rich tree, each node's value and gradient at ``precision`` digits."""
    from rich.markup import escape
    from rich.tree import Tree

    from . import render

    def describe(n) -> str:
        leafness = "leaf" if n.is_leaf else "non-leaf"
        text = f"[bold]{escape(_label(n))}[/bold] ({leafness}"
        if n.requires_grad:
            text += ", requires_grad"
        text += f") shape {shape_text(n.value.shape)} value {escape(one_line(n.value, precision))}"
        if n.grad is not None:
            text += f" grad {escape(one_line(n.grad, precision))}"
        elif n.requires_grad and result.grads_computed:
            text += " grad None"
        return text

    console = render.make_console()
    limit, by_width = drawn_depth(console.width, max_depth)
    if by_width:
        why = (
            f"than the {_levels(limit)} that {console.width} columns show (use --dot or "
            f"--json for the whole graph, or COLUMNS=N)"
        )
    else:
        why = f"than {_levels(max_depth)} (use --dot or --json for the whole graph)"
    nodes = result.nodes
    root_node = nodes[-1]
    root = Tree(describe(root_node), guide_style="dim")
    shown: set[int] = {root_node.id}
    stack = [(root, root_node, 0)]
    while stack:
        tree, node, depth = stack.pop()
        if depth >= limit and node.inputs:
            tree.add(f"[dim]... {len(node.inputs)} input(s) deeper {why}[/dim]")
            continue
        children = []
        for i in node.inputs:
            child = nodes[i]
            if child.id in shown and child.inputs:
                tree.add(f"[dim]{escape(_label(child))} (#{child.id}, shown above)[/dim]")
                continue
            shown.add(child.id)
            children.append((tree.add(describe(child)), child, depth + 1))
        stack.extend(reversed(children))
    console.print(root)
    if not result.grads_computed:
        console.print("[dim]no gradients: the output is not a scalar (give --grad-output)[/dim]")
    from .render import print_warnings

    print_warnings(result.warnings)


def dot_image(dot: str, fmt: str, timeout: float = 120.0) -> bytes:
    """The graph drawn by Graphviz's ``dot`` as ``fmt`` (svg or png) bytes.

    ``dot`` is found on PATH and run with the DOT text on stdin (no shell, no file); one in a
    folder anyone may write to is refused, as is a missing one (with how to get it)."""
    import shutil
    import stat
    import subprocess

    from ..core.errors import UnsupportedError

    exe = shutil.which("dot")
    if exe is None:
        raise UnsupportedError(
            f"--{fmt} needs Graphviz's dot, which is not on PATH: install Graphviz "
            "(apt install graphviz, brew install graphviz, conda install graphviz); --dot "
            "prints the DOT text without it"
        )
    folder = os.path.dirname(os.path.realpath(exe))
    mode = os.stat(folder).st_mode
    if mode & stat.S_IWOTH and not mode & stat.S_ISVTX:
        raise UnsupportedError(
            f"--{fmt}: not running {exe}: its folder {folder} is writable by every user"
        )
    try:
        done = subprocess.run(
            [exe, f"-T{fmt}"],
            input=dot.encode("utf-8"),
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise UnsupportedError(f"--{fmt}: dot did not finish in {timeout:g} s") from None
    if done.returncode != 0 or not done.stdout:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UnsupportedError(
            f"--{fmt}: dot failed (exit {done.returncode})" + (f": {why[-1]}" if why else "")
        )
    return done.stdout
