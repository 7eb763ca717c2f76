"""Printing expression graphs: the tool's own language (it parses back) and LaTeX.

Both printers dispatch on the node kind and take their parentheses from one
precedence table (the grammar's levels, loosest to tightest), in the manner of
SymPy's ``printing/precedence.py``: a child is wrapped in parentheses only when
it binds more loosely than its place in the parent requires, so ``-x**2`` and
``(-x)**2``, ``a - (b - c)`` and ``2**-1`` all come out as the grammar reads
them.

Nothing recurses: a node is turned into a list of pieces (strings and child
nodes) and an explicit stack expands them, so a 100,000-deep graph prints like
a shallow one, in time linear in the output.

A graph that shares subexpressions (a DAG) can print exponentially long as a
tree; when the inlined text would be long, every shared subexpression of some
size gets a name and is printed once, as a binding of the language:
``t1 = sin(x); t1*cos(t1)`` (``share="auto"``).

>>> from autograd_cli.grammar import parse
>>> to_text(parse("(-x)**2 - -x**2 + 2**-1").output)
'(-x)**2 - -x**2 + 2**-1'
>>> to_latex(parse("x**2/(2*sqrt(y))").output)
'\\\\frac{x^{2}}{2 \\\\sqrt{y}}'
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from .expr import Expr, topological
from .ops import OP_SPELLING

# ---------------------------------------------------------------------------
# Precedence: the grammar's levels (grammar/expr.lark), loosest to tightest.
# ---------------------------------------------------------------------------

BOTTOM, COMPARE, SUM, PRODUCT, UNARY, POWER, ATOM = 0, 10, 20, 30, 40, 50, 60

PRECEDENCE = {
    "lt": COMPARE,
    "le": COMPARE,
    "gt": COMPARE,
    "ge": COMPARE,
    "eq": COMPARE,
    "ne": COMPARE,
    "add": SUM,
    "sub": SUM,
    "mul": PRODUCT,
    "div": PRODUCT,
    "matmul": PRODUCT,
    "neg": UNARY,
    "pow": POWER,
}

# What each side of a binary operator requires of its operand (a looser operand
# is parenthesized).  Left-associative operators accept their own level on the
# left only; ** is right-associative and its exponent may be unary (2**-1).
# The right operand of * and / must be tighter than unary, so x*(-y) keeps its
# parentheses although the grammar would read x*-y.
OPERAND_LEVELS = {
    "add": (SUM, PRODUCT),
    "sub": (SUM, PRODUCT),
    "mul": (PRODUCT, POWER),
    "div": (PRODUCT, POWER),
    "matmul": (PRODUCT, POWER),
    "pow": (ATOM, UNARY),
    "lt": (COMPARE, SUM),
    "le": (COMPARE, SUM),
    "gt": (COMPARE, SUM),
    "ge": (COMPARE, SUM),
    "eq": (COMPARE, SUM),
    "ne": (COMPARE, SUM),
}

TEXT_SYMBOLS = {
    "add": " + ",
    "sub": " - ",
    "mul": "*",
    "div": "/",
    "matmul": " @ ",
    "pow": "**",
    "lt": " < ",
    "le": " <= ",
    "gt": " > ",
    "ge": " >= ",
    "eq": " == ",
    "ne": " != ",
}

# Numbers that print as the language's names for them (they evaluate to the same float).
NAMED_NUMBERS = {math.pi: "pi", math.e: "e", math.log(2.0): "log(2)", math.log(10.0): "log(10)"}

# Ops printed as a call of another name than their own (the parser maps them back).
CALL_NAMES = {"maximum": "max", "minimum": "min", "amax": "max", "amin": "min"}


def format_number(value) -> str:
    """A number as the language writes it: ``2``, ``0.5``, ``1e-05``, ``-inf``, ``pi``.

    >>> format_number(2.0), format_number(-0.25), format_number(float("nan")), format_number(math.pi)
    ('2', '-0.25', 'nan', 'pi')
    """
    v = float(value)
    if v != v:
        return "nan"
    sign = "-" if math.copysign(1.0, v) < 0 else ""  # -0.0 prints as -0: 1/-0 is -inf
    a = abs(v)
    if a == math.inf:
        return sign + "inf"
    named = NAMED_NUMBERS.get(a)
    if named is not None:
        return sign + named
    if a.is_integer() and a < 1e16:
        return sign + str(int(a))
    return sign + repr(a)


def _format_list(value) -> str:
    """A nested list literal ``[[1, 2], [3, 4]]``, built without recursion."""
    out: list[str] = []
    stack: list = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, (list, tuple)):
            parts: list = ["["]
            for i, v in enumerate(item):
                if i:
                    parts.append(", ")
                parts.append(v)
            parts.append("]")
            stack.extend(reversed(parts))
        else:
            out.append(format_number(item))
    return "".join(out)


def _is_negative_number(node: Expr) -> bool:
    if node.op != "const" or isinstance(node.value, (list, tuple)):
        return False
    v = float(node.value)
    return v < 0


def precedence(node: Expr) -> int:
    """How tightly ``node`` binds when printed (one of the levels above)."""
    if node.op == "const":
        return UNARY if _is_negative_number(node) else ATOM
    return PRECEDENCE.get(node.op, ATOM)


# ---------------------------------------------------------------------------
# Sharing: which nodes of a DAG get a name
# ---------------------------------------------------------------------------

INLINE_LIMIT = 240  # tokens: a longer inlined text names its shared subexpressions
SHARED_MIN_TOKENS = 6  # a shared subexpression shorter than this is never named


def _inline_tokens(order: list[Expr]) -> dict[int, int]:
    """Roughly how many tokens each node prints as, fully inlined (exact ints, may be huge)."""
    size: dict[int, int] = {}
    for node in order:
        n = 1 + sum(size[id(a)] for a in node.args)
        if node.args and node.op not in PRECEDENCE:
            n += 1 + len(node.args)  # call parentheses and commas
        elif node.args:
            n += 2  # parentheses it may need
        size[id(node)] = n
    return size


def shared_nodes(root: Expr, share="auto") -> list[Expr]:
    """The nodes of ``root``'s graph that print as a binding, children before parents.

    ``share`` is ``True`` (name every shared subexpression of at least
    ``SHARED_MIN_TOKENS`` tokens), ``False`` (inline everything) or ``"auto"``
    (name them only when the inlined text would exceed ``INLINE_LIMIT`` tokens).
    """
    return _sharing(root, share)[0]


def _sharing(root: Expr, share) -> tuple[list[Expr], dict[int, str]]:
    """The shared nodes to name and their names (``t1``, ``t2``... avoiding the variables)."""
    if share is False or not root.args:
        return [], {}
    order = topological([root])
    refs: dict[int, int] = {}
    for node in order:
        for a in node.args:
            refs[id(a)] = refs.get(id(a), 0) + 1
    size = _inline_tokens(order)
    if share == "auto" and size[id(root)] <= INLINE_LIMIT:
        return [], {}
    shared = [
        n
        for n in order
        if n is not root
        and n.op not in ("const", "var")
        and refs.get(id(n), 0) >= 2
        and size[id(n)] >= SHARED_MIN_TOKENS
    ]
    taken = {n.name for n in order if n.op == "var"}
    names: dict[int, str] = {}
    i = 0
    for node in shared:
        i += 1
        while f"t{i}" in taken:
            i += 1
        names[id(node)] = f"t{i}"
    return shared, names


# ---------------------------------------------------------------------------
# The emitter shared by both printers
# ---------------------------------------------------------------------------


def _emit(top: Expr, layout: Callable[[Expr], list], names: dict[int, str]) -> str:
    """Expand ``top`` with ``layout`` (node -> list of str and child nodes) on an explicit stack."""
    out: list[str] = []
    stack: list = [top]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        if item is not top and id(item) in names:
            out.append(names[id(item)])
            continue
        stack.extend(reversed(layout(item)))
    return "".join(out)


class _Printer:
    """Common machinery: precedence-driven wrapping, bindings, statements."""

    symbols = TEXT_SYMBOLS
    open_paren, close_paren = "(", ")"

    def __init__(self, names: dict[int, str]):
        self.names = names

    def level(self, node: Expr) -> int:
        if id(node) in self.names:
            return ATOM
        return precedence(node)

    def wrap(self, node: Expr, required: int) -> list:
        if self.level(node) < required:
            return [self.open_paren, node, self.close_paren]
        return [node]

    def layout(self, node: Expr) -> list:  # pragma: no cover - overridden
        raise NotImplementedError

    def binary(self, node: Expr) -> list:
        left, right = node.args
        lreq, rreq = OPERAND_LEVELS[node.op]
        return self.wrap(left, lreq) + [self.symbols[node.op]] + self.wrap(right, rreq)


class TextPrinter(_Printer):
    """The tool's own language; the output parses back to the same values."""

    def layout(self, node: Expr) -> list:
        op = node.op
        if op == "const":
            if isinstance(node.value, (list, tuple)):
                return [_format_list(node.value)]
            return [format_number(node.value)]
        if op == "var":
            return [node.name]
        if op in OPERAND_LEVELS:
            return self.binary(node)
        if op == "neg":
            return ["-"] + self.wrap(node.args[0], POWER)
        if op == "stack":
            return self.call_pieces("", node.args, (), brackets="[]")
        if op == "getitem":
            return self.wrap(node.args[0], ATOM) + ["[" + _format_index(node.attrs["index"]) + "]"]
        if op == "reshape":
            return self.call_pieces("reshape", node.args, [_format_list(list(node.attrs["shape"]))])
        extra = []
        if "axis" in node.attrs and node.attrs["axis"] is not None:
            axis = node.attrs["axis"]
            extra.append(
                "axis=" + (_format_list(list(axis)) if isinstance(axis, tuple) else str(axis))
            )
        if node.attrs.get("keepdims"):
            extra.append("keepdims=1")
        name = CALL_NAMES.get(op) or OP_SPELLING.get(op, op)
        return self.call_pieces(name, node.args, extra)

    def call_pieces(self, name: str, args, extra, brackets: str = "()") -> list:
        pieces: list = [name + brackets[0]]
        for i, a in enumerate(args):
            if i:
                pieces.append(", ")
            pieces.append(a)
        for i, e in enumerate(extra):
            if i or args:
                pieces.append(", ")
            pieces.append(e)
        pieces.append(brackets[1])
        return pieces


def _format_index(index) -> str:
    parts = []
    for i in index:
        if isinstance(i, slice):
            parts.append(
                ("" if i.start is None else str(i.start))
                + ":"
                + ("" if i.stop is None else str(i.stop))
            )
        else:
            parts.append(str(i))
    return ", ".join(parts)


def to_text(expr: Expr, *, share="auto") -> str:
    """``expr`` in the tool's own language, with as few parentheses as the grammar allows.

    A shared graph that would print long comes out as a program whose bindings
    name the shared parts (``t1 = ...; ...``); either way ``grammar.parse`` reads
    it back to the same values.

    >>> from autograd_cli.grammar import parse
    >>> to_text(parse("a - (b - c) + -(x*y) / (2*z)").output)
    'a - (b - c) + -(x*y)/(2*z)'
    """
    shared, names = _sharing(expr, share)
    printer = TextPrinter(names)
    statements = [f"{names[id(n)]} = {_emit(n, printer.layout, names)}" for n in shared]
    statements.append(_emit(expr, printer.layout, names))
    return "; ".join(statements)


# ---------------------------------------------------------------------------
# LaTeX
# ---------------------------------------------------------------------------

LATEX_SYMBOLS = {
    "add": " + ",
    "sub": " - ",
    "mul": " ",
    "matmul": " ",
    "lt": " < ",
    "le": " \\leq ",
    "gt": " > ",
    "ge": " \\geq ",
    "eq": " = ",
    "ne": " \\neq ",
}

LATEX_FUNCTIONS = {
    "sin": "\\sin",
    "cos": "\\cos",
    "tan": "\\tan",
    "asin": "\\arcsin",
    "acos": "\\arccos",
    "atan": "\\arctan",
    "sinh": "\\sinh",
    "cosh": "\\cosh",
    "tanh": "\\tanh",
    "log": "\\log",
    "log2": "\\log_{2}",
    "log10": "\\log_{10}",
    "maximum": "\\max",
    "minimum": "\\min",
    "amax": "\\max",
    "amin": "\\min",
    "sigmoid": "\\sigma",
}

_GREEK = {
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "nu",
    "xi",
    "rho",
    "sigma",
    "tau",
    "upsilon",
    "phi",
    "chi",
    "psi",
    "omega",
    "Gamma",
    "Delta",
    "Theta",
    "Lambda",
    "Xi",
    "Sigma",
    "Upsilon",
    "Phi",
    "Psi",
    "Omega",
}


def latex_name(name: str) -> str:
    """A variable name in LaTeX: ``x``, ``x_{1}``, ``\\alpha``, ``\\mathrm{rate}``."""
    m = re.fullmatch(r"([A-Za-z]+)_?(\d+)", name)
    if m:
        return f"{latex_name(m.group(1))}_{{{m.group(2)}}}"
    if name in _GREEK:
        return "\\" + name
    if "_" in name.strip("_"):
        head, tail = name.strip("_").split("_", 1)
        return f"{latex_name(head)}_{{{latex_name(tail)}}}"
    if len(name) == 1:
        return name
    return "\\mathrm{" + name.replace("_", "\\_") + "}"


def latex_number(value) -> str:
    """A number in LaTeX: ``2``, ``0.5``, ``1.5 \\cdot 10^{-5}``, ``\\pi``, ``\\infty``."""
    text = format_number(value)
    sign = "-" if text.startswith("-") else ""
    body = text[len(sign) :]
    special = {
        "pi": "\\pi",
        "e": "e",
        "inf": "\\infty",
        "nan": "\\mathrm{NaN}",
        "log(2)": "\\log\\left(2\\right)",
        "log(10)": "\\log\\left(10\\right)",
    }
    if body in special:
        return sign + special[body]
    if "e" in body:
        mantissa, exponent = body.split("e")
        exponent = str(int(exponent))
        if mantissa == "1":
            return f"{sign}10^{{{exponent}}}"
        return f"{sign}{mantissa} \\cdot 10^{{{exponent}}}"
    return sign + body


class LatexPrinter(_Printer):
    """LaTeX for display (not meant to be parsed back)."""

    symbols = LATEX_SYMBOLS
    open_paren, close_paren = "\\left(", "\\right)"

    def level(self, node: Expr) -> int:
        if id(node) in self.names:
            return ATOM
        # \frac and e^{x} group themselves except as the base of a power.
        if node.op == "div" or node.op == "exp":
            return POWER
        if node.op in ("sqrt", "abs"):
            return ATOM
        return precedence(node)

    def starts_with_digit(self, node: Expr) -> bool:
        # The leftmost leaf decides whether juxtaposition would merge two numbers.
        while True:
            if id(node) in self.names:
                return False
            if node.op == "const":
                return not _is_negative_number(node) and format_number(node.value)[:1].isdigit()
            if (
                node.op in ("pow", "mul", "matmul")
                and self.level(node.args[0]) >= OPERAND_LEVELS[node.op][0]
            ):
                node = node.args[0]
                continue
            return False

    def layout(self, node: Expr) -> list:
        op = node.op
        if op == "const":
            if isinstance(node.value, (list, tuple)):
                return ["\\left[" + _format_list(node.value)[1:-1] + "\\right]"]
            return [latex_number(node.value)]
        if op == "var":
            assert node.name is not None  # a "var" node always has a name (Expr.var)
            return [latex_name(node.name)]
        if op == "div":
            return ["\\frac{", node.args[0], "}{", node.args[1], "}"]
        if op == "pow":
            return self.wrap(node.args[0], ATOM) + ["^{", node.args[1], "}"]
        if op in ("mul", "matmul"):
            left, right = node.args
            lreq, rreq = OPERAND_LEVELS[op]
            r = self.wrap(right, rreq)
            sep = " \\cdot " if (len(r) == 1 and self.starts_with_digit(right)) else " "
            return self.wrap(left, lreq) + [sep] + r
        if op in OPERAND_LEVELS:
            return self.binary(node)
        if op == "neg":
            return ["-"] + self.wrap(node.args[0], POWER)
        if op == "exp":
            return ["e^{", node.args[0], "}"]
        if op == "sqrt":
            return ["\\sqrt{", node.args[0], "}"]
        if op == "abs":
            return ["\\left|", node.args[0], "\\right|"]
        name = LATEX_FUNCTIONS.get(op) or ("\\operatorname{" + OP_SPELLING.get(op, op) + "}")
        pieces: list = [name + "\\left("]
        for i, a in enumerate(node.args):
            if i:
                pieces.append(", ")
            pieces.append(a)
        pieces.append("\\right)")
        return pieces


def to_latex(expr: Expr, *, share="auto") -> str:
    """``expr`` as LaTeX (shared parts of a long graph become ``t_{1} = ...`` lines).

    >>> from autograd_cli.grammar import parse
    >>> to_latex(parse("-2*sin(x)*exp(-x**2) + (x > 0)").output)
    '-2 \\\\sin\\\\left(x\\\\right) e^{-x^{2}} + \\\\left(x > 0\\\\right)'
    """
    shared, names = _sharing(expr, share)
    printer = LatexPrinter({k: latex_name(v) for k, v in names.items()})
    lines = [f"{printer.names[id(n)]} = {_emit(n, printer.layout, printer.names)}" for n in shared]
    lines.append(_emit(expr, printer.layout, printer.names))
    return ", \\quad ".join(lines)


# ---------------------------------------------------------------------------
# Token counting (used to compare printed lengths, e.g. against SymPy)
# ---------------------------------------------------------------------------

_TOKEN = re.compile(
    r"\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|[A-Za-z_]\w*"
    r"|\*\*|<=|>=|==|!=|\S"
)


def count_tokens(text: str) -> int:
    """The number of lexical tokens in ``text`` (numbers, names, operators, brackets, commas).

    >>> count_tokens("9*a**2"), count_tokens("6*(x + 2)")
    (5, 7)
    """
    return len(_TOKEN.findall(text))


__all__ = [
    "PRECEDENCE",
    "OPERAND_LEVELS",
    "precedence",
    "format_number",
    "to_text",
    "to_latex",
    "latex_name",
    "latex_number",
    "count_tokens",
    "shared_nodes",
    "TextPrinter",
    "LatexPrinter",
]
