"""Differentiation: the derivative as an Expr graph, by the op table's own rules.

Reverse accumulation over the expression DAG, iteratively (:func:`grad_exprs`).  At each
node the op table's ``vjp`` rule is called with :class:`Sym` values in place of tensors: a
``Sym`` wraps an :class:`~autograd_cli.core.program.Expr`, and its operators and ``_call``
build new Expr nodes through a :class:`Builder`.  So the calculus is the op table's,
written once; there is no second table of derivative rules here.  The new nodes are
hash-consed (a subexpression built twice is one node) and trivially folded (``x*1``,
``x + 0``, numbers); :func:`~.algebra.simplify` does the rest.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..autograd import gc_paused
from ..backend import is_complex
from ..errors import LimitError
from ..interpret import Dependence, interpret
from ..ops import RuleContext
from ..ops.table import HOLOMORPHIC, operators
from ..printing import to_text
from ..program import Expr, topological
from ..tensor import OPS
from .numbers import _fold, _nice, np
from .support import UnsupportedDiffError, _supported, _unsupported

#: the identities the builder applies as it records, tried in order for each binary op:
#: (the argument that is a constant, its value, the result: the operand ``"a"`` or ``"b"``,
#: its negation ``"-a"``/``"-b"``, or a constant)
_IDENTITIES: dict[str, tuple] = {
    "add": ((0, 0, "b"), (1, 0, "a")),
    "sub": ((1, 0, "a"), (0, 0, "-b")),
    "mul": ((0, 1, "b"), (1, 1, "a"), (0, 0, 0.0), (1, 0, 0.0), (0, -1, "-b"), (1, -1, "-a")),
    "div": ((1, 1, "a"),),
    "pow": ((1, 1, "a"), (1, 0, 1.0)),
}


class Builder:
    """Makes the Expr nodes of a derivative: hash-consed, with trivial folding only.

    ``guards``: when False (the default), every non-constant ``Sym`` reports
    ``maybe_zero = False``, so the rules leave out the ``where(...)`` guards that
    pin a derivative at isolated points (d/dx x**y at y == 0, d/dy x**y at
    x == 0); the printed derivative is then the formula valid at every point
    where the function is smooth, like SymPy's.  With True the guards stay and
    the expression agrees with ``grad`` at those points too.
    """

    def __init__(self, guards: bool = False, max_nodes: int = 2_000_000):
        self.guards = guards
        self.max_nodes = max_nodes
        self.table: dict = {}

    def const(self, value: float | complex) -> Expr:
        value = complex(value) if isinstance(value, (complex, np.complexfloating)) else float(value)
        key = ("const", repr(value))
        node = self.table.get(key)
        if node is None:
            node = self.table[key] = Expr.const(value)
        return node

    def node(self, op: str, args: tuple, attrs: dict | None = None) -> Expr:
        key = (op,) + tuple(id(a) for a in args) + ((repr(sorted(attrs.items())),) if attrs else ())
        node = self.table.get(key)
        if node is None:
            if len(self.table) >= self.max_nodes:
                raise LimitError(
                    f"the derivative grew past {self.max_nodes:,} nodes as it was built (a "
                    f"limit of its own, whatever the size budget)"
                )
            # The key holds the arguments' ids; the node keeps the arguments alive.
            node = self.table[key] = Expr(op, args, attrs)
        return node

    def as_expr(self, x) -> Expr:
        if isinstance(x, Sym):
            return x.expr
        if isinstance(x, Expr):
            return x
        if isinstance(x, (bool, int, float, np.floating, np.integer)):
            return self.const(float(x))
        if is_complex(x):
            return self.const(complex(x))
        raise TypeError(f"cannot use {type(x).__name__} in a symbolic rule")

    def call(self, name: str, args: tuple, attrs: dict) -> Sym:
        if name in ("reshape", "broadcast_to", "sum_to"):
            shape = tuple(attrs.get("shape", ()))
            if shape == ():
                return self.wrap(self.as_expr(args[0]))
            raise UnsupportedDiffError(
                f"diff supports elementwise scalar expressions; use grad for {name}", op=name
            )
        if name == "zeros_like":
            return self.wrap(self.const(0.0))
        if not _supported(name):
            raise UnsupportedDiffError(
                f"diff supports elementwise scalar expressions; use grad for {name}", op=name
            )
        exprs = tuple(self.as_expr(a) for a in args)
        return self.wrap(self.apply(name, exprs, attrs))

    def apply(self, op: str, args: tuple, attrs: dict | None = None) -> Expr:
        consts = [a.op == "const" for a in args]
        if all(consts):
            # numbers fold where the result is exact (2*3, sqrt(4)); 1/9 and sqrt(2) stay
            # nodes, which the algebra keeps exact (1/9) or symbolic (sqrt(2))
            values = [a.value for a in args]
            r = None if any(map(is_complex, values)) else _fold(op, [_nice(v) for v in values])
            if r is not None:
                return self.const(r)
        if op in _IDENTITIES:
            a, b = args
            known = (a.value if consts[0] else None, b.value if consts[1] else None)
            for i, value, result in _IDENTITIES[op]:
                if known[i] == value:
                    return self._identity(result, a, b)
        elif op == "neg" and args[0].op == "neg":
            return args[0].args[0]
        elif op == "where" and consts[0]:
            return args[1] if args[0].value != 0 else args[2]
        return self.node(op, args, attrs)

    def _identity(self, result, a: Expr, b: Expr) -> Expr:
        """An entry of :data:`_IDENTITIES`: a constant, an operand, or its negation."""
        if isinstance(result, float):
            return self.const(result)
        operand = a if result[-1] == "a" else b
        return self.apply("neg", (operand,)) if result[0] == "-" else operand

    def wrap(self, expr: Expr) -> Sym:
        return Sym(expr, self)


class Sym:
    """A scalar symbolic value: the op table's rules run on it to build derivative graphs.

    It has what the rules use of a tensor: arithmetic operators, ``_call``
    (which :func:`~autograd_cli.core.ops.call` and friends dispatch to),
    ``shape == ()`` and ``maybe_zero`` (read by the rules' zero guards).

    >>> b = Builder()
    >>> x = b.wrap(Expr.var("x"))
    >>> from autograd_cli.core.printing import to_text
    >>> to_text((x * x + 1).expr), to_text(OPS["sin"].deriv[0](x, None).expr)
    ('x*x + 1', 'cos(x)')
    """

    __slots__ = ("expr", "builder")
    shape = ()
    ndim = 0

    def __init__(self, expr: Expr, builder: Builder):
        self.expr = expr
        self.builder = builder

    @property
    def maybe_zero(self) -> bool:
        if self.expr.op == "const":
            return not (float(self.expr.value) != 0)  # nan counts as maybe zero
        return self.builder.guards

    def _call(self, name: str, *args, **attrs) -> Sym:
        return self.builder.call(name, args, attrs)

    def _binary(self, op: str, a, b) -> Sym:
        bl = self.builder
        return bl.wrap(bl.apply(op, (bl.as_expr(a), bl.as_expr(b))))

    __add__, __radd__ = operators("add")
    __sub__, __rsub__ = operators("sub")
    __mul__, __rmul__ = operators("mul")
    __truediv__, __rtruediv__ = operators("div")
    __pow__, __rpow__ = operators("pow")

    def __neg__(self):
        bl = self.builder
        return bl.wrap(bl.apply("neg", (self.expr,)))

    def __pos__(self):
        return self

    def __bool__(self):
        raise TypeError("a symbolic value has no truth value")

    def __repr__(self) -> str:
        return f"Sym({to_text(self.expr)})"


def local_vjp(node: Expr, g: Sym, builder: Builder, inputs=None, out=None, needs=None) -> tuple:
    """The op table's vjp of ``node`` applied to the cotangent ``g``: one Expr (or None) per input.

    ``inputs``/``out`` default to the node's own arguments and itself; passing
    other Exprs (names) gives the rule in terms of those.
    """
    op = OPS[node.op]
    if op.vjp is None:
        return (None,) * len(node.args)
    ins = tuple(builder.wrap(a) for a in (inputs if inputs is not None else node.args))
    o = builder.wrap(out if out is not None else node)
    if needs is None:
        needs = tuple(True for _ in node.args)
    flags = op.flags(len(node.args))
    needs = tuple(bool(n and f) for n, f in zip(needs, flags))
    grads = op.vjp(RuleContext(op, ins, o, node.attrs, needs), g)
    return tuple(
        None if (gi is None or not need) else builder.as_expr(gi) for gi, need in zip(grads, needs)
    )


def grad_exprs(output: Expr, wrt: Sequence[str], builder: Builder | None = None) -> dict[str, Expr]:
    """d(output)/d(name) for each name in ``wrt``, as (unsimplified) Expr graphs.

    One reverse pass serves every name.  Iterative: the graph may be 100,000 deep.

    >>> from autograd_cli.grammar import parse
    >>> from autograd_cli.core.printing import to_text
    >>> to_text(grad_exprs(parse("x*sin(x)").output, ["x"])["x"])
    'sin(x) + x*cos(x)'
    """
    with gc_paused():
        return _grad_exprs(output, wrt, builder or Builder())


class _Differentiable(Dependence):
    """:class:`Dependence`, refusing what ``diff`` cannot print (array literals, some ops;
    in an expression with complex constants, an op that is not holomorphic: its derivative
    in z is no formula of z)."""

    def __init__(self, wanted, complex_constants: bool = False):
        super().__init__(wanted)
        self.complex_constants = complex_constants

    def const(self, node: Expr) -> bool:
        if isinstance(node.value, (list, tuple)):
            raise UnsupportedDiffError(
                "diff supports elementwise scalar expressions; use grad for array literals",
                op="const",
            )
        return False

    def apply(self, node: Expr, op, args: list) -> bool:
        if not _supported(node.op):
            raise _unsupported(node)
        if self.complex_constants and op.on_complex not in HOLOMORPHIC:
            raise UnsupportedDiffError(
                f"diff gives derivatives of holomorphic expressions of complex numbers, and "
                f"{op.printing.call or op.name} is not holomorphic (use grad: PyTorch's "
                f"convention for a real function of complex variables)",
                op=node.op,
            )
        return super().apply(node, op, args)


def _has_complex_constant(output: Expr) -> bool:
    return any(n.op == "const" and is_complex(n.value) for n in topological([output]))


def _grad_exprs(output: Expr, wrt: Sequence[str], builder: Builder) -> dict[str, Expr]:
    walk = interpret(output, _Differentiable(wrt, _has_complex_constant(output)))
    order, depends = walk.order, walk.values
    results: dict[str, Expr] = {}
    cotangent: dict[int, Expr] = {}
    if depends[id(output)]:
        cotangent[id(output)] = builder.const(1.0)
    for node in reversed(order):
        g = cotangent.pop(id(node), None)
        if g is None:
            continue
        if node.op == "var":
            assert node.name is not None  # a "var" node always has a name (Expr.var)
            prev = results.get(node.name)
            results[node.name] = g if prev is None else builder.apply("add", (prev, g))
            continue
        needs = tuple(depends[id(a)] for a in node.args)
        grads = local_vjp(node, builder.wrap(g), builder, needs=needs)
        for a, gi in zip(node.args, grads):
            if gi is None:
                continue
            prev = cotangent.get(id(a))
            cotangent[id(a)] = gi if prev is None else builder.apply("add", (prev, gi))
    zero = builder.const(0.0)
    return {name: results.get(name, zero) for name in wrt}
