"""A Program as plain data, for comparing two parses (tests/test_lalr.py, test_parser_tables.py)."""

from __future__ import annotations

from autograd_cli.core.expr import topological


def dump(program) -> tuple:
    """The whole Program as plain data: every node once, arguments by number (sharing kept)."""
    roots = [expr for _, expr in program.statements] + list(program.bindings.values())
    nodes = topological(roots)
    number = {id(n): i for i, n in enumerate(nodes)}
    graph = tuple(
        (n.op, tuple(number[id(a)] for a in n.args), repr(sorted(n.attrs.items())))
        + (repr(n.value), n.name, n.label)
        for n in nodes
    )
    return (
        program.source,
        graph,
        number[id(program.output)],
        tuple((name, number[id(e)]) for name, e in program.statements),
        tuple((name, number[id(e)]) for name, e in program.bindings.items()),
        tuple(program.inputs),
    )
