"""What explain's two walks share: the :class:`Explanation` they return, the names of
the nodes they show, numbers as they print, and the order of the backward sweep.

The walks themselves: :mod:`.explain` (the scalar one, and :func:`~.explain.explain`, which
picks the walk) and :mod:`.explain_arrays` (vector-Jacobian products over arrays).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from .interpret import Dependence, interpret
from .ops import FUNCTIONS
from .program import CONSTANTS, Expr, Program

# Automatic names: short letters first (skipping e, the constant; d, which would
# read as "dd/dc"; and letters that read as indices or look like digits), then t1, t2, ...
AUTO_NAMES = ("a", "b", "c", "f", "g", "h", "k", "m", "n", "p", "q", "r", "s", "u", "v")
OUTPUT_NAMES = ("y", "f", "z", "out")
MAX_STEPS = 100  # steps of each kind listed (the rest counted in Explanation.elided)
MAX_PATHS = 16  # paths are listed one by one up to this many per variable


def format_value(v: float | complex) -> str:
    """A number for the explanation's text: ``5``, ``0.5``, ``-1.41421``, ``inf``; a complex
    one part by part, ``(1+2j)``."""
    if isinstance(v, complex):
        sign = "-" if math.copysign(1.0, v.imag) < 0 else "+"
        return f"({format_value(v.real)}{sign}{format_value(abs(v.imag))}j)"
    if v != v:
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if float(v).is_integer() and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.6g}"


def factor_text(v: float) -> str:
    """A number as a factor of a product: negative ones in parentheses, ``2*(-1)``."""
    s = format_value(v)
    return f"({s})" if s.startswith("-") else s


@dataclass(frozen=True)
class Explanation:
    """The chain rule for one program at one point; see the module docstring.

    Plain data: numbers stay floats (nan and inf included).  The command line renders it
    (``autograd_cli.cli.render.explain_text`` and ``explain_json``, SPEC's document).
    """

    source: str
    output: str  # the output's name
    wrt: list  # the variables differentiated against
    point: dict  # variable -> value
    value: float | complex  # the output's value (complex between real values: rfft)
    steps: list = field(default_factory=list)  # dicts: define / local / accumulate
    gradient: dict = field(default_factory=dict)  # variable -> d(output)/d(variable)
    paths: dict = field(default_factory=dict)  # variable -> list of paths, or None
    elided: dict = field(default_factory=dict)  # kind -> steps computed but not listed
    # The array walk (see the module docstring) fills these: each variable's shape (and the
    # output's), and the warnings grad gives at this point.
    arrays: bool = False
    shapes: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)


def d_label(of: str, wrt: str) -> str:
    """The derivative's name: ``dy/da``."""
    return f"d{of}/d{wrt}"


def _names(order: list[Expr], output: Expr, inputs: Sequence[str]) -> tuple[dict, set]:
    """A name for every intermediate: the user's label, else an automatic one."""
    taken = set(inputs) | set(CONSTANTS) | set(FUNCTIONS)
    names: dict[int, str] = {}
    auto: set[int] = set()
    for node in order:
        if node.op == "var":
            assert node.name is not None  # a "var" node always has a name (Expr.var)
            names[id(node)] = node.name
        elif node.label and node.label not in taken:
            names[id(node)] = node.label
            taken.add(node.label)
    pool = iter(AUTO_NAMES)
    counter = 0

    def fresh(candidates=()):
        nonlocal counter
        for c in candidates:
            if c not in taken:
                return c
        for c in pool:
            if c not in taken:
                return c
        while True:
            counter += 1
            if f"t{counter}" not in taken:
                return f"t{counter}"

    if id(output) not in names and output.op != "const":
        names[id(output)] = fresh(OUTPUT_NAMES)
        taken.add(names[id(output)])
        auto.add(id(output))
    for node in order:
        if id(node) in names or node.op in ("const", "var"):
            continue
        names[id(node)] = fresh()
        taken.add(names[id(node)])
        auto.add(id(node))
    return names, auto


def local_text(step: dict, number=format_value) -> str:
    """A local step of the scalar walk as text: ``dy/da = b = 2`` (the value is left out
    where the expression is that number); ``number`` writes the numbers."""
    text = f"{d_label(step['of'], step['wrt'])} = {step['expr']}"
    if step["expr"] != format_value(step["value"]):
        text += f" = {number(step['value'])}"
    return text


def accumulate_numbers(step: dict, number=format_value) -> str:
    """The products of an accumulate step of the scalar walk: ``2*1 + 3*1``."""

    def factor(v: float) -> str:
        s = number(v)
        return f"({s})" if s.startswith("-") else s

    more = step.get("more_terms")
    return " + ".join(
        factor(t["local_value"])
        if t["direct"]
        else f"{factor(t['adjoint_value'])}*{factor(t['local_value'])}"
        for t in step["terms"]
    ) + (f" + ... ({more:,} more terms)" if more else "")


def accumulate_text(step: dict, number=format_value) -> str:
    """An accumulate step of the scalar walk as text:
    ``dy/dw = dy/da*da/dw + dy/db*db/dw = 2*1 + 3*1 = 5``."""
    numbers = accumulate_numbers(step, number)
    return f"{step['formula']} = {numbers} = {number(step['value'])}"


def _shallow(node: Expr, names: dict) -> Expr:
    """The node with its named arguments as variables: y = a*b."""
    return Expr(
        node.op,
        tuple(Expr.var(names[id(a)]) if id(a) in names else a for a in node.args),
        node.attrs,
    )


def _backward_order(output: Expr, order: list[Expr]) -> list[Expr]:
    """Every node after all of its users, the output first; ties in argument order (Kahn)."""
    users: dict[int, int] = {}
    for node in order:
        for a in _unique(node.args):
            users[id(a)] = users.get(id(a), 0) + 1
    out = [output]
    i = 0
    while i < len(out):
        for a in _unique(out[i].args):
            users[id(a)] -= 1
            if users[id(a)] == 0:
                out.append(a)
        i += 1
    return out


def _unique(args) -> list:
    out: list[Expr] = []
    for a in args:
        if all(a is not b for b in out):
            out.append(a)
    return out


GRAD = "grad_"  # grad_n is d(output)/dn, an array of n's shape (PyTorch's n.grad)


def _walk_facts(program: Program, order: list, wanted: list):
    """What both walks need of the program: which nodes depend differentiably on the
    variables asked about (``depends``), which on any variable at all (``variable``; the
    others are constants, shown inline), and the names of the nodes shown."""
    output = program.output
    depends = interpret(program, Dependence(wanted)).values
    variable: dict[int, bool] = {}
    for node in order:
        variable[id(node)] = node.op == "var" or any(variable[id(a)] for a in node.args)
    shown = [n for n in order if variable[id(n)] or n is output]
    names, auto = _names(shown, output, list(program.inputs))
    return depends, variable, names, auto
