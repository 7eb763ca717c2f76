"""Printing expression graphs: the tool's own language (it parses back) and LaTeX.

Both printers read how each op is written from its entry in the op table (its
:class:`~.ops.Printing`: form, symbol, call name, LaTeX) and take their
parentheses from its binding level (the grammar's levels, loosest to tightest),
in the manner of SymPy's ``printing/precedence.py``: a child is wrapped in
parentheses only when it binds more loosely than its place in the parent
requires, so ``-x**2`` and ``(-x)**2``, ``a - (b - c)`` and ``2**-1`` all come
out as the grammar reads them.

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

from .backend import is_complex
from .ops import ATOM, BOTTOM, CALL, OPS, UNARY, Printing
from .program import Expr, topological

# The binding levels (ATOM, POWER, ...) are the grammar's, declared with the op table.


def printing_of(op: str) -> Printing:
    """How ``op`` is written (an op the table does not know prints as a call of its name)."""
    entry = OPS.get(op)
    return CALL if entry is None else entry.printing


def call_name(op: str) -> str:
    """The function name a call of ``op`` prints with: ``max`` for ``maximum``."""
    p = printing_of(op)
    return p.names[0] if p.names else (p.call or op)


# Numbers that print as the language's names for them (they evaluate to the same float).
NAMED_NUMBERS = {math.pi: "pi", math.e: "e", math.log(2.0): "log(2)", math.log(10.0): "log(10)"}


def format_number(value) -> str:
    """A number as the language writes it: ``2``, ``0.5``, ``1e-05``, ``-inf``, ``pi``.

    >>> format_number(2.0), format_number(-0.25), format_number(float("nan")), format_number(math.pi)
    ('2', '-0.25', 'nan', 'pi')
    """
    if is_complex(value):
        return _format_complex(complex(value))
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


def _format_complex(z: complex) -> str:
    """A complex number as Python writes it, in a form the language parses back: ``2j``,
    ``-0.5j``, ``(3+4j)``, ``(1-inf*1j)`` (a non-finite imaginary part times 1j)."""
    b = abs(z.imag)
    imaginary = (
        f"{format_number(b)}*1j" if not math.isfinite(b) else f"{repr(b).removesuffix('.0')}j"
    )
    minus = math.copysign(1.0, z.imag) < 0
    if z.real == 0:  # -2j is -(2j): a real part of -0.0, as Python makes it
        return ("-" if minus else "") + imaginary
    return f"({format_number(z.real)}{'-' if minus else '+'}{imaginary})"


def _format_list(value) -> str:
    """A nested list literal ``[[1, 2], [3, 4]]``, built without recursion (:func:`_emit`)."""
    return _emit(value, _list_layout, {})


def _list_layout(item) -> list:
    """A list as its brackets, separators and elements; a number as its text."""
    if not isinstance(item, (list, tuple)):
        return [format_number(item)]
    parts: list = ["["]
    for i, v in enumerate(item):
        if i:
            parts.append(", ")
        parts.append(v)
    parts.append("]")
    return parts


def _is_negative_number(node: Expr) -> bool:
    if node.op != "const" or isinstance(node.value, (list, tuple)):
        return False
    return format_number(node.value).startswith("-")


def precedence(node: Expr) -> int:
    """How tightly ``node`` binds when printed (a level of the op table: ``ATOM``, ``POWER``...)."""
    if node.op == "const":
        return UNARY if _is_negative_number(node) else ATOM  # -2 binds like -x
    return printing_of(node.op).level


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
        if node.args and printing_of(node.op).symbol is None:
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


def _emit(top, layout: Callable[..., list], names: dict[int, str]) -> str:
    """Expand ``top`` with ``layout`` (node -> list of str and child nodes) on an explicit stack
    (a node named in ``names``, other than ``top``, is written as its name)."""
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

    def symbol(self, p: Printing) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def operator(self, node: Expr, p: Printing) -> list:
        """An infix (``a + b``) or prefix (``-x``) operator, its operands wrapped as they need."""
        if p.form == "prefix":
            return [self.symbol(p)] + self.wrap(node.args[0], p.operands[0])
        left, right = node.args
        lreq, rreq = p.operands
        return self.wrap(left, lreq) + [self.symbol(p)] + self.wrap(right, rreq)


class TextPrinter(_Printer):
    """The tool's own language; the output parses back to the same values."""

    def symbol(self, p: Printing) -> str:
        assert p.text_symbol is not None  # an operator's Printing has its symbol
        return p.text_symbol

    def layout(self, node: Expr) -> list:
        op = node.op
        if op == "const":
            if isinstance(node.value, (list, tuple)):
                return [_format_list(node.value)]
            return [format_number(node.value)]
        if op == "var":
            return [node.name]
        p = printing_of(op)
        if p.form in ("infix", "prefix"):
            return self.operator(node, p)
        if p.form == "array":
            return self.call_pieces("", node.args, (), brackets="[]")
        if p.form == "subscript":
            return self.wrap(node.args[0], ATOM) + ["[" + _format_index(node.attrs["index"]) + "]"]
        params = OPS[op].params if op in OPS else ()
        if params:
            extra = _param_texts(node, params)
            if OPS[op].arity is None:  # concatenate([a, b], axis=1): the arrays as a list
                pieces = [call_name(op) + "("] + self.call_pieces("", node.args, (), "[]")
                for e in extra:
                    pieces += [", ", e]
                return pieces + [")"]
            return self.call_pieces(call_name(op), node.args, extra)
        extra = [_format_list(list(node.attrs[a])) for a in p.attr_args]
        if "axis" in node.attrs and node.attrs["axis"] is not None:
            axis = node.attrs["axis"]
            extra.append(
                "axis=" + (_format_list(list(axis)) if isinstance(axis, tuple) else str(axis))
            )
        if node.attrs.get("keepdims"):
            extra.append("keepdims=1")
        return self.call_pieces(call_name(op), node.args, extra)

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


def _param_texts(node: Expr, params) -> list[str]:
    """An op's params as its call writes them: required ones by position, the others as
    ``name=value`` where they differ from their default."""
    texts = []
    for p in params:
        v = node.attrs.get(p.name, p.default)  # x.T recorded by a Tensor: no attrs
        if isinstance(v, tuple):
            text = _format_list(list(v))
        else:
            text = str(int(v)) if isinstance(v, bool) else str(v)
        if p.required:
            texts.append(text)
        elif v != p.default:
            texts.append(f"{p.name}={text}")
    return texts


def _format_index(index) -> str:
    parts = []
    for i in index:
        if isinstance(i, slice):
            parts.append(
                ("" if i.start is None else str(i.start))
                + ":"
                + ("" if i.stop is None else str(i.stop))
            )
        elif isinstance(i, tuple):  # an integer array: x[[0, 2]]
            parts.append(_format_list(i))
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
    """A number in LaTeX: ``2``, ``0.5``, ``1.5 \\cdot 10^{-5}``, ``\\pi``, ``\\infty``;
    an imaginary one with ``i``: ``2i``, ``\\left(3 + 4i\\right)``."""
    if is_complex(value):
        z = complex(value)
        imaginary = ("-" if math.copysign(1.0, z.imag) < 0 else "") + latex_number(abs(z.imag))
        imaginary += "i"
        if z.real == 0:
            return imaginary
        sign = " - " if imaginary.startswith("-") else " + "
        return f"\\left({latex_number(z.real)}{sign}{imaginary.lstrip('-')}\\right)"
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

    open_paren, close_paren = "\\left(", "\\right)"

    def level(self, node: Expr) -> int:
        if id(node) in self.names:
            return ATOM
        # \frac and e^{x} group themselves except as the base of a power; \sqrt{x}, |x| always.
        latex_level = printing_of(node.op).latex_level
        return precedence(node) if latex_level is None else latex_level

    def symbol(self, p: Printing) -> str:
        assert isinstance(p.latex, str)  # an operator's LaTeX is a string
        return p.latex

    @staticmethod
    def leading_level(p: Printing) -> int | None:
        """The level the first argument needs when the LaTeX starts with it (``x^{2}``,
        ``x y``), else None (``\\frac{...}``, ``\\sin``, ``-x``)."""
        if isinstance(p.latex, tuple):
            first = p.latex[0]
            if isinstance(first, tuple):
                return first[1]
            return BOTTOM if isinstance(first, int) else None
        return p.operands[0] if p.form == "infix" else None

    def starts_with_digit(self, node: Expr) -> bool:
        # The leftmost leaf decides whether juxtaposition would merge two numbers.
        while True:
            if id(node) in self.names:
                return False
            if node.op == "const":
                if isinstance(node.value, (list, tuple)):  # an array literal starts with "["
                    return False
                return not _is_negative_number(node) and format_number(node.value)[:1].isdigit()
            need = self.leading_level(printing_of(node.op))
            if need is not None and self.level(node.args[0]) >= need:
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
        p = printing_of(op)
        if isinstance(p.latex, tuple):
            return self.template(node, p.latex)
        if p.form == "infix" and p.latex == " ":
            # juxtaposition: "2 x", but "x \\cdot 2" so that two numbers do not merge
            left, right = node.args
            lreq, rreq = p.operands
            r = self.wrap(right, rreq)
            sep = " \\cdot " if (len(r) == 1 and self.starts_with_digit(right)) else " "
            return self.wrap(left, lreq) + [sep] + r
        if p.form in ("infix", "prefix"):
            return self.operator(node, p)
        name = p.latex if isinstance(p.latex, str) else "\\operatorname{" + call_name(op) + "}"
        pieces: list = [name + "\\left("]
        for i, a in enumerate(node.args):
            if i:
                pieces.append(", ")
            pieces.append(a)
        params = OPS[op].params if op in OPS else ()
        for k, text in enumerate(_param_texts(node, params) if params else ()):  # diag(v, k=1)
            key, eq, value = text.partition("=")
            shown = f"\\mathrm{{{key}}}={value}" if eq else key
            comma = ", " if node.args or k else ""  # fftfreq(8): no array before it
            pieces.append(comma + shown.replace("[", "\\left[").replace("]", "\\right]"))
        pieces.append("\\right)")
        return pieces

    def template(self, node: Expr, layout: tuple) -> list:
        """A LaTeX layout: strings, argument positions, (position, level) wrapped when looser."""
        pieces: list = []
        for item in layout:
            if isinstance(item, str):
                pieces.append(item)
            elif isinstance(item, tuple):
                pieces.extend(self.wrap(node.args[item[0]], item[1]))
            else:
                pieces.append(node.args[item])
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
    "printing_of",
    "call_name",
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
