"""A Program as plain data, for comparing two parses (tests/test_lalr.py, test_parser_tables.py)."""

from __future__ import annotations

from autograd_cli.core.program import topological


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


def outcome(parser, text: str) -> tuple:
    """What a user sees of ``parser.parse(text)``: the Program as :func:`dump` gives it, or
    the error's message and position."""
    from autograd_cli.core.errors import AutogradCliError, ParseError

    try:
        return ("ok", dump(parser.parse(text)))
    except ParseError as exc:
        return ("syntax", exc.message, exc.line, exc.column, exc.context)
    except AutogradCliError as exc:
        return (type(exc).__name__, exc.message, tuple(sorted(exc.details.items())))
