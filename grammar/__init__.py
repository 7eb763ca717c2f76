"""The expression language: a Lark LALR grammar (``expr.lark``) and the graph builder.

>>> program = parse("a = x + w; b = w + 1; a * b")
>>> program.inputs
['x', 'w']
"""

from .parser import Parser, default_parser, parse

__all__ = ["Parser", "default_parser", "parse"]
