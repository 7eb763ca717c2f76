"""The op table: every op's forward, derivative and printing, each written once.

Format of an entry (an :class:`Op`), in the spirit of PyTorch's derivatives.yaml:

``name``
    the op's key; the expression language and ``Tensor`` methods find it here.
``node``
    the ``grad_fn`` name PyTorch gives the same op (``MulBackward0``), or a
    function of the Node choosing between variants (``MmBackward0``/``MvBackward0``).
``forward(*arrays, **attrs)``
    the value, computed with the backend's array module (``backend.xp``).
``vjp(node, g)``
    the vector-Jacobian product: a tuple with one cotangent per input (None
    where the input needs none).  ``node.inputs``, ``node.out``,
    ``node.attrs``, ``node.shapes`` and ``node.needs`` are available.
``jvp(node, tangents)``
    the Jacobian-vector product for forward mode: the output tangent from the
    input tangents (None stands for a zero tangent).
``deriv``
    for elementwise ops, the local partial derivatives; vjp and jvp are both
    made from them, so each calculus rule is written exactly once.
``printing``
    how the op is spelled in the language and printed as text and LaTeX (a
    :class:`Printing`): the printers and the parser read it, nothing else says it.
``internal``
    True for ops only the rules and the batch path make (``broadcast_to``,
    ``sum_to``, ``scatter``, ``mT``, ``zeros_like``): the language has no spelling for them.
``differentiable``, ``zero_grad``, ``kink``
    the arguments that take a gradient; piecewise constant (its gradient is zero); the
    warning where the derivative is taken at a point where it is undefined.
``total``, ``nonneg``, ``piecewise``, ``piecewise_linear``, ``spreads_nonfinite``
    what the simplifier, Taylor mode and the non-finite checks know of its values (see
    :class:`Op`); tests/test_op_table.py checks each against the op's values.

Every fact about an op is on its entry: nothing keyed by its name stands apart.

The rules are written with the engine's own differentiable ops (operators and
the functions at the bottom of this file), never with raw arrays: the same rule
then serves first-order backward, ``create_graph=True`` (higher order) and
forward mode.  Two conventions hold throughout:

* An absent cotangent stays absent: ``chain(g, d)`` is ``g * d`` except that
  where ``g`` is exactly 0 the product is 0 even when ``d`` is inf or nan, so
  the untaken branch of ``where`` never poisons a gradient with ``0 * inf``.
* Kinks follow PyTorch: abs'(0) = 0, relu'(0) = 0, sqrt'(0) = inf, ties of
  max/min split the gradient evenly, sign/floor/comparisons pass no gradient.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import backend
from .errors import UnsupportedError
from .tensor import OPS, Tensor, apply, as_tensor, is_grad_enabled

# ---------------------------------------------------------------------------
# How an op is spelled and printed
# ---------------------------------------------------------------------------

# How tightly a printed form binds: the grammar's levels (grammar/expr.lark), loosest to
# tightest.  A child is parenthesized when it binds more loosely than its place requires.
BOTTOM, COMPARE, SUM, PRODUCT, UNARY, POWER, ATOM = 0, 10, 20, 30, 40, 50, 60


@dataclass(frozen=True)
class Printing:
    """How an op is written in the expression language and in LaTeX.

    ``form``
        ``"call"`` ``f(x, axis=0)`` (the default), ``"infix"`` ``a + b``, ``"prefix"``
        ``-x``, ``"array"`` ``[a, b]`` or ``"subscript"`` ``x[i, 1:2]``.
    ``symbol``, ``spaced``
        the operator's token in the language (``"+"``, ``"<="``; ``"-"`` for neg), and
        whether the text puts spaces around it (``a + b`` but ``a*b``).
    ``level``, ``operands``
        how tightly the form binds (``ATOM`` for calls), and the level each operand
        needs: a looser operand is parenthesized.  Left-associative operators accept
        their own level on the left only; ``**`` is right-associative and its exponent
        may be unary (``2**-1``); the right operand of ``*`` and ``/`` must be tighter
        than unary, so ``x*(-y)`` keeps its parentheses although the grammar reads ``x*-y``.
    ``names``
        the functions of the language that build the op (``max`` and ``maximum``): the
        first is how a call prints; ``()`` for an op written only with its symbol or
        built by a rewrite.
    ``call``
        the function name a call prints with, for an op without ``names`` (``clamp_min``
        prints as ``max``); neither: the op's own name.
    ``with_constant``
        the op a call builds instead when exactly one of its two arguments is a
        constant: ``max(x, 0)`` is ``clamp_min``, whose tie convention is relu's.
    ``attr_args``
        attributes printed as extra positional arguments (``reshape(x, [2, 3])``).
    ``latex``, ``latex_level``
        the LaTeX: an infix operator with its spacing (``" \\leq "``; ``" "`` is
        juxtaposition, which becomes ``\\cdot`` before a digit), a function
        (``"\\sin"``, followed by its arguments in ``\\left(...\\right)``), or a
        layout of strings and argument positions, where a position with a level is
        parenthesized when looser (``("\\frac{", 0, "}{", 1, "}")``); and how tightly
        that LaTeX binds when it is not ``level`` (``\\frac`` groups itself).
    """

    form: str = "call"
    symbol: str | None = None
    spaced: bool = False
    level: int = ATOM
    operands: tuple[int, ...] = ()
    names: tuple[str, ...] = ()
    call: str | None = None
    with_constant: str | None = None
    attr_args: tuple[str, ...] = ()
    latex: str | tuple | None = None
    latex_level: int | None = None

    @property
    def text_symbol(self) -> str | None:
        """The operator as the text prints it: ``" + "``, ``"*"``."""
        if self.symbol is None:
            return None
        return f" {self.symbol} " if self.spaced else self.symbol


def infix(
    symbol: str, level: int, operands: tuple[int, int], latex: str | tuple, *, spaced=True, **more
) -> Printing:
    """The :class:`Printing` of a binary operator."""
    return Printing(
        form="infix",
        symbol=symbol,
        spaced=spaced,
        level=level,
        operands=operands,
        latex=latex,
        **more,
    )


def function(*names: str, latex: str | tuple, **more) -> Printing:
    """The :class:`Printing` of a function of the language, called by ``names`` (the
    first is how it prints)."""
    return Printing(names=names, latex=latex, **more)


CALL = Printing()  # an op printed as a call of its own name (the internal ops)

REQUIRED = object()  # a Param without a default


@dataclass(frozen=True)
class Param:
    """An attribute argument of a function of the language: ``cumsum(x, axis=0)``,
    ``triu(A, k=1)``, ``roll(x, 2)``.  After the op's array arguments come its params, by
    position or by keyword, each a constant the parser checks by ``kind``:

    ``"int"``   a whole number (``k``, ``shift``);
    ``"count"`` a whole number >= 0 (``repeats``, ``reps``);
    ``"axis"``  one axis, within an array's 64 dimensions (-64 to 63);
    ``"axes"``  an axis or a list of axes (a tuple);
    ``"flag"``  0 or 1, a bool.

    A param with a default prints only where it differs from it, as a keyword
    (``cumsum(x, axis=1)``); a required one prints by position.
    """

    name: str
    kind: str
    default: object = REQUIRED

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


class Op:
    __slots__ = (
        "name",
        "node",
        "forward",
        "vjp",
        "jvp",
        "arity",
        "saves",
        "differentiable",
        "differentiable_any",
        "kind",
        "deriv",
        "zero_grad",
        "kink",
        "total",
        "nonneg",
        "piecewise",
        "piecewise_linear",
        "spreads_nonfinite",
        "printing",
        "internal",
        "size",
        "params",
        "batching",
    )

    def __init__(
        self,
        name: str,
        node,
        forward: Callable,
        vjp=None,
        jvp=None,
        *,
        arity=1,
        saves=True,
        differentiable=None,
        kind="elementwise",
        deriv=None,
        zero_grad=False,
        kink=None,
        total=False,
        nonneg=False,
        piecewise=False,
        piecewise_linear=False,
        spreads_nonfinite: tuple[int, ...] = (),
        printing: Printing = CALL,
        internal=False,
        size=None,
        params: tuple = (),
        batching: tuple | None = None,
    ):
        self.name = name
        # how core/batch.py evaluates the op for many rows at once when its kind does not
        # say (elementwise ops broadcast, reductions shift their axes):
        #   ("axes",)      its "axis"/"axes" params move past the batch axis (None: row by row)
        #   ("trailing", k) it works on its operands' last k axes, as NumPy's linalg does,
        #                   so a leading batch axis passes through (rows of rank >= k)
        #   ("rows",)      none on purpose (diag of a vector): a graph using it is evaluated
        #                  row by row, exactly, just slower
        # None: its kind says (elementwise, reductions), or core/batch.py has a rule by name.
        self.batching = batching
        # the attribute arguments of its function of the language (see Param): an op with
        # params is parsed by them, its array arguments first (arity None: one list of them)
        self.params = tuple(params)
        if any(a.required > b.required for a, b in zip(self.params[1:], self.params)):
            raise ValueError(f"{name}: a required param follows an optional one")
        self.node = node
        self.forward = forward
        self.vjp = vjp
        self.jvp = jvp
        self.arity = arity
        self.saves = saves
        if differentiable is None:
            differentiable = (True,) * (arity or 0)
        self.differentiable = tuple(differentiable)
        # Variadic ops (arity None) have differentiable == (): every input is differentiable.
        self.differentiable_any = vjp is not None and (any(self.differentiable) or arity is None)
        self.kind = kind
        self.deriv = deriv
        self.zero_grad = zero_grad
        # kink(input arrays, output array, attrs) -> a warning when the derivative is taken
        # where it is undefined and a convention was used ("Conventions at kinks" below).
        self.kink = kink
        # What the simplifier, Taylor mode and the non-finite checks know of the values (of
        # an elementwise op; tests/test_op_table.py checks each against the op's values):
        #   total        a number at every finite input (tan's poles are never hit exactly):
        #                not nan or infinite on a region, as log, sqrt, gamma are
        #   nonneg       never negative (nan aside): any power of it is a number
        #   piecewise    constant on whole regions, or making a sum that is (x - abs(x),
        #                atan2(0, x), hypot(x, 0) = abs(x)): it may vanish on a region
        #   piecewise_linear  linear on each piece, with partials that are constant there
        #                (abs, max, floor): Taylor mode takes the piece the point is on
        #                (implies piecewise)
        #   spreads_nonfinite  the argument positions whose inf or nan always makes some
        #                element of the result inf or nan (a finite result vouches for them)
        self.total = total
        self.nonneg = nonneg
        self.piecewise = piecewise or piecewise_linear
        self.piecewise_linear = piecewise_linear
        self.spreads_nonfinite = tuple(spreads_nonfinite)
        self.printing = printing
        self.internal = internal
        # size(input shapes, attrs) -> how many numbers the result holds, for an op whose
        # result can be larger than its inputs (checked against core.limits before it runs;
        # elementwise ops of several arguments get the broadcast's size from op_table).
        self.size = size

    def flags(self, n: int) -> tuple:
        """Which of ``n`` arguments are differentiated (all of a variadic op's)."""
        return self.differentiable or (True,) * n

    def node_name(self, node) -> str:
        return self.node(node) if callable(self.node) else self.node

    def shape_message(self, inputs, attrs, exc) -> str:
        shapes = ", ".join(str(tuple(t.shape)) for t in inputs)
        detail = str(exc).split("\n")[0]
        return f"{self.name}: shapes {shapes} do not fit ({detail})"

    def __repr__(self) -> str:
        return f"Op({self.name})"


class RuleContext:
    """What an op's vjp/jvp rule reads, for an op applied outside a recorded graph.

    Mirrors :class:`~.tensor.Node`: ``inputs``, ``out``, ``attrs``, ``shapes``
    and ``needs`` (``needs[i]``: input i is differentiated).  The forward-mode
    sweep, the symbolic differentiator and ``explain`` hand their own values here.
    """

    __slots__ = ("op", "inputs", "out", "attrs", "shapes", "needs")

    def __init__(self, op, inputs: tuple, out, attrs: dict, needs: tuple):
        self.op = op
        self.inputs = inputs
        self.out = out
        self.attrs = attrs
        self.shapes = tuple(tuple(t.shape) for t in inputs)
        self.needs = needs


# The declarations below, in order: ``register(Op(...))`` adds one, :func:`op_table`
# makes the table of them (once, at the end of this module).
_DECLARED: list[Op] = []


def register(op: Op) -> Op:
    """Declare ``op``: an entry of the table :func:`op_table` makes at the end of this module."""
    _DECLARED.append(op)
    return op


# ---------------------------------------------------------------------------
# Generic helpers the rules are written with.  They dispatch on the graph value
# type (Tensor here; the symbolic differentiator supplies its own), so a rule
# never touches raw arrays.
# ---------------------------------------------------------------------------


def _anchor(args):
    for a in args:
        if hasattr(a, "_call"):
            return a
    raise TypeError("no tensor among the arguments")


def call(name: str, *args, **attrs):
    return _anchor(args)._call(name, *args, **attrs)


def where(cond, a, b):
    return call("where", cond, a, b)


def eq(a, b):
    return call("eq", a, b)


def gt(a, b):
    return call("gt", a, b)


def lt(a, b):
    return call("lt", a, b)


def ne(a, b):
    return call("ne", a, b)


def sqrt(x):
    return call("sqrt", x)


def sign(x):
    return call("sign", x)


def reshape(x, shape):
    return call("reshape", x, shape=tuple(shape))


def broadcast_to(x, shape):
    if tuple(x.shape) == tuple(shape):
        return x
    return call("broadcast_to", x, shape=tuple(shape))


def sum_to(x, shape):
    """Sum ``x`` down to ``shape``: the one un-broadcast helper every binary rule uses."""
    if x is None or tuple(x.shape) == tuple(shape):
        return x
    return call("sum_to", x, shape=tuple(shape))


def zeros_like(x):
    return call("zeros_like", x)


def _is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def _all_finite(x) -> bool:
    if _is_tensor(x):
        return backend.all_finite(x.data)
    return True


def _finite_factor(d) -> bool:
    """True when ``d`` (a Tensor or a Python number) is known to hold finite numbers only."""
    if type(d) is float or type(d) is int:
        return math.isfinite(d)
    return _is_tensor(d) and backend.all_finite(d.data)


def _any_zero(x) -> bool:
    if _is_tensor(x):
        return backend.any_nonzero(x.data == 0)
    return getattr(x, "maybe_zero", True)


def chain(g, d):
    """``g * d`` where an exactly-zero cotangent stays zero even if ``d`` is inf/nan."""
    if g is None or d is None:
        return None
    r = g * d
    # Only an entry where d is inf or nan can be a 0 * inf/nan: with a finite d (often
    # smaller than g, never larger than the product) the mended product has r's values, and
    # when nothing is recorded (no create_graph) it is r itself, bit for bit.
    if not is_grad_enabled() and _finite_factor(d):
        return r
    if not _all_finite(r):
        # only the entries that are 0 * inf/nan: r - r is nan there (0 where r is finite),
        # so every other entry, a signed zero included, is what g * d gives, row by row
        r = where(eq(g, 0), where(eq(r - r, 0), r, 0.0), r)
    return r


def add_tangents(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _reduced_shape(shape, axis, keepdims):
    if axis is None:
        return tuple(1 for _ in shape) if keepdims else ()
    axes = axis if isinstance(axis, tuple) else (axis,)
    nd = len(shape)
    if nd == 0:
        return ()  # a number along axis 0 or -1, as NumPy and PyTorch take it: itself
    axes = {a % nd for a in axes}
    if keepdims:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def _keepdims_shape(shape, axis):
    return _reduced_shape(shape, axis, True)


def expand_back(g, shape, axis, keepdims):
    """Undo a reduction's shape: reshape ``g`` to keepdims form and broadcast to ``shape``."""
    if not keepdims:
        g = reshape(g, _keepdims_shape(shape, axis))
    return broadcast_to(g, shape)


def _xp():
    return backend.xp


# ---------------------------------------------------------------------------
# Elementwise ops built from local derivatives
# ---------------------------------------------------------------------------


def _unary(name, node, forward, deriv, *, latex=None, aliases=(), printing=None, **facts):
    """deriv(x, out) -> dout/dx, written with engine ops.  The op is a function of the
    language called ``name`` (or one of ``aliases``), in LaTeX the function ``latex``,
    unless ``printing`` says otherwise; ``facts`` are the :class:`Op`'s (``kink``,
    ``total``, ``nonneg``, ``zero_grad``...)."""

    def vjp(n, g):
        x = n.inputs[0]
        return (chain(g, deriv(x, n.out)),)

    def jvp(n, tangents):
        t = tangents[0]
        if t is None:
            return None
        return chain(t, deriv(n.inputs[0], n.out))

    return register(
        Op(
            name,
            node,
            forward,
            vjp,
            jvp,
            deriv=(deriv,),
            printing=printing or function(name, *aliases, latex=latex),
            **facts,
        )
    )


def _binary(name, node, forward, deriv_a, deriv_b, *, printing, **facts):
    """deriv_a(a, b, out), deriv_b(a, b, out): the two partials, written with engine ops;
    ``facts`` are the :class:`Op`'s."""

    def vjp(n, g):
        a, b = n.inputs
        out = n.out
        ga = sum_to(chain(g, deriv_a(a, b, out)), n.shapes[0]) if n.needs[0] else None
        gb = sum_to(chain(g, deriv_b(a, b, out)), n.shapes[1]) if n.needs[1] else None
        return ga, gb

    def jvp(n, tangents):
        a, b = n.inputs
        out = n.out
        ta, tb = tangents
        r = add_tangents(
            chain(ta, deriv_a(a, b, out)) if ta is not None else None,
            chain(tb, deriv_b(a, b, out)) if tb is not None else None,
        )
        return None if r is None else broadcast_to(r, out.shape)

    return register(
        Op(
            name,
            node,
            forward,
            vjp,
            jvp,
            arity=2,
            deriv=(deriv_a, deriv_b),
            printing=printing,
            **facts,
        )
    )


# ---------------------------------------------------------------------------
# Conventions at kinks: where an op's derivative is undefined at the point and
# one of the conventions above was used, `kink` says so (commands show it as a
# warning).  Ops whose gradient is zero almost everywhere say that instead.
# ---------------------------------------------------------------------------


def _where_kink(test, message):
    def kink(inputs, out, attrs):
        with backend.errstate():
            return message if backend.any_nonzero(test(inputs, out, attrs)) else None

    return kink


def _tie_kink(name):
    def kink(inputs, out, attrs):
        x = inputs[0]
        axis = attrs.get("axis")
        full = (
            out
            if attrs.get("keepdims")
            else _xp().expand_dims(out, axis if axis is not None else tuple(range(x.ndim)))
        )
        hits = (x == full).sum(axis=axis)
        if backend.any_nonzero(hits > 1):
            extreme = "maximal" if name == "max" else "minimal"
            return (
                f"{name}(x) has tied {extreme} elements, where it is not differentiable; "
                f"the gradient was split evenly among them"
            )
        return None

    return kink


def _at_zero(message):
    """The kink of a unary op at 0."""
    return _where_kink(lambda i, o, a: i[0] == 0, message)


def _at_tie(message):
    """The kink of a binary op where its arguments are equal."""
    return _where_kink(lambda i, o, a: i[0] == i[1], message)


def _zero_almost_everywhere(message):
    """The "kink" of an op whose gradient is zero almost everywhere: always said."""
    return lambda inputs, out, attrs: message


LN2 = math.log(2.0)
LN10 = math.log(10.0)

_unary(
    "exp",
    "ExpBackward0",
    lambda a: _xp().exp(a),
    lambda x, out: out,
    printing=function("exp", latex=("e^{", 0, "}"), latex_level=POWER),
    total=True,
    nonneg=True,
)
_unary(
    "log",
    "LogBackward0",
    lambda a: _xp().log(a),
    lambda x, out: 1 / x,
    latex="\\log",
    kink=_at_zero("log'(0) is infinite (1/0 = inf)"),
    spreads_nonfinite=(0,),
)
_unary(
    "log2",
    "Log2Backward0",
    lambda a: _xp().log2(a),
    lambda x, out: 1 / (x * LN2),
    latex="\\log_{2}",
    kink=_at_zero("log2'(0) is infinite (1/0 = inf)"),
    spreads_nonfinite=(0,),
)
_unary(
    "log10",
    "Log10Backward0",
    lambda a: _xp().log10(a),
    lambda x, out: 1 / (x * LN10),
    latex="\\log_{10}",
    kink=_at_zero("log10'(0) is infinite (1/0 = inf)"),
    spreads_nonfinite=(0,),
)
# sqrt'(0) = 1/(2*0) = inf, as in PyTorch.
_unary(
    "sqrt",
    "SqrtBackward0",
    lambda a: _xp().sqrt(a),
    lambda x, out: 1 / (2 * out),
    printing=function("sqrt", latex=("\\sqrt{", 0, "}"), latex_level=ATOM),
    kink=_at_zero("sqrt'(0) is infinite; used sqrt'(0) = inf (PyTorch)"),
    nonneg=True,
    spreads_nonfinite=(0,),
)
_unary(
    "sin",
    "SinBackward0",
    lambda a: _xp().sin(a),
    lambda x, out: call("cos", x),
    latex="\\sin",
    total=True,
    spreads_nonfinite=(0,),
)
_unary(
    "cos",
    "CosBackward0",
    lambda a: _xp().cos(a),
    lambda x, out: -call("sin", x),
    latex="\\cos",
    total=True,
    spreads_nonfinite=(0,),
)
_unary(
    "tan",
    "TanBackward0",
    lambda a: _xp().tan(a),
    lambda x, out: 1 + out * out,
    latex="\\tan",
    total=True,
    spreads_nonfinite=(0,),
)
_unary(
    "asin",
    "AsinBackward0",
    lambda a: _xp().arcsin(a),
    lambda x, out: 1 / sqrt(1 - x * x),
    latex="\\arcsin",
    aliases=("arcsin",),
    spreads_nonfinite=(0,),
)
_unary(
    "acos",
    "AcosBackward0",
    lambda a: _xp().arccos(a),
    lambda x, out: -(1 / sqrt(1 - x * x)),
    latex="\\arccos",
    aliases=("arccos",),
    nonneg=True,  # in [0, pi]
    spreads_nonfinite=(0,),
)
_unary(
    "atan",
    "AtanBackward0",
    lambda a: _xp().arctan(a),
    lambda x, out: 1 / (1 + x * x),
    latex="\\arctan",
    aliases=("arctan",),
    total=True,
)
_unary(
    "sinh",
    "SinhBackward0",
    lambda a: _xp().sinh(a),
    lambda x, out: call("cosh", x),
    latex="\\sinh",
    total=True,
    spreads_nonfinite=(0,),
)
_unary(
    "cosh",
    "CoshBackward0",
    lambda a: _xp().cosh(a),
    lambda x, out: call("sinh", x),
    latex="\\cosh",
    total=True,
    nonneg=True,
    spreads_nonfinite=(0,),
)
_unary(
    "tanh",
    "TanhBackward0",
    lambda a: _xp().tanh(a),
    lambda x, out: 1 - out * out,
    latex="\\tanh",
    total=True,
)
# abs'(0) = sign(0) = 0, as in PyTorch.
_unary(
    "abs",
    "AbsBackward0",
    lambda a: _xp().abs(a),
    lambda x, out: sign(x),
    printing=function("abs", latex=("\\left|", 0, "\\right|"), latex_level=ATOM),
    kink=_at_zero("abs is not differentiable at 0; used abs'(0) = 0 (PyTorch)"),
    total=True,
    nonneg=True,
    piecewise_linear=True,
    spreads_nonfinite=(0,),
)
# 1/(1+exp(-x)) is exact to rounding in float64 for every x once overflow is allowed (exp(-x)=inf -> 0).
_unary(
    "sigmoid",
    "SigmoidBackward0",
    lambda a: 1 / (1 + _xp().exp(-a)),
    lambda x, out: out * (1 - out),
    latex="\\sigma",
    total=True,
    nonneg=True,
)
# relu'(0) = 0, as in PyTorch: the mask is x > 0, not x >= 0.
_unary(
    "relu",
    "ReluBackward0",
    lambda a: _xp().maximum(a, 0),
    lambda x, out: gt(x, 0),
    latex="\\operatorname{relu}",
    kink=_at_zero("relu is not differentiable at 0; used relu'(0) = 0 (PyTorch)"),
    total=True,
    nonneg=True,
    piecewise_linear=True,
)
# log(1 + exp(x)) computed without overflow.
_unary(
    "softplus",
    "SoftplusBackward0",
    lambda a: _xp().logaddexp(0, a),
    lambda x, out: call("sigmoid", x),
    latex="\\operatorname{softplus}",
    total=True,
    nonneg=True,
)
# Piecewise-constant functions: the derivative is 0 wherever it exists (PyTorch returns zeros).
for _name, _node, _fn in (
    ("sign", "SignBackward0", "sign"),
    ("floor", "FloorBackward0", "floor"),
    ("ceil", "CeilBackward0", "ceil"),
    ("round", "RoundBackward0", "round"),
):
    _unary(
        _name,
        _node,
        (lambda f: lambda a: getattr(_xp(), f)(a))(_fn),
        lambda x, out: zeros_like(x),
        zero_grad=True,
        latex="\\operatorname{" + _name + "}",
        spreads_nonfinite=() if _name == "sign" else (0,),  # sign(inf) = 1
        kink=_zero_almost_everywhere(
            f"{_name} is piecewise constant: its gradient is zero almost everywhere"
        ),
        total=True,
        piecewise_linear=True,
    )


# ---------------------------------------------------------------------------
# Special functions (issue 13).  erf, erfc, erfinv, gamma, lgamma, digamma and
# polygamma come from scipy.special (cupyx.scipy.special on the GPU), imported on first
# use only: start-up never pays for SciPy, and without it these ops say how to get it.
# ---------------------------------------------------------------------------


def _special():
    """The module of special functions for the current device (SciPy's or CuPy's)."""
    if backend.device == "gpu":  # pragma: no cover - CuPy with a GPU
        import cupyx.scipy.special as special  # noqa: PLC0415 - only on the GPU path

        return special
    try:
        import scipy.special as special  # type: ignore[import-untyped]  # noqa: PLC0415
    except ImportError:
        raise UnsupportedError(
            "erf, erfc, erfcx, erfinv, gamma, lgamma, digamma, polygamma and beta need SciPy: "
            "pip install scipy"
        ) from None
    return special


def _erfinv_forward(a):
    # scipy gives erfinv(-0.0) = +0.0; PyTorch (and oddness) keep the sign of zero.
    r = _special().erfinv(a)
    return _xp().where(a == 0, a, r)


def _lgamma_forward(a):
    # log|gamma(x)|; lgamma(-inf) = +inf as in C99 and PyTorch (scipy's gammaln says -inf).
    r = _special().gammaln(a)
    return _xp().where(a == -_xp().inf, _xp().inf, r)


TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0

# log(1 + x) and exp(x) - 1, accurate near 0.
_unary(
    "log1p",
    "Log1PBackward0",
    lambda a: _xp().log1p(a),
    lambda x, out: 1 / (1 + x),
    latex="\\operatorname{log1p}",
    spreads_nonfinite=(0,),
)
_unary(
    "expm1",
    "Expm1Backward0",
    lambda a: _xp().expm1(a),
    lambda x, out: call("exp", x),
    latex="\\operatorname{expm1}",
    total=True,
)


def _two_product(u, v):
    """u*v as p + e exactly (Dekker's product with Veltkamp's split; no FMA needed)."""
    p = u * v
    c = 134217729.0 * u  # 2**27 + 1
    uh = c - (c - u)
    ul = u - uh
    c = 134217729.0 * v
    vh = c - (c - v)
    vl = v - vh
    return p, ((uh * vh - p) + uh * vl + ul * vh) + ul * vl


def _cbrt_forward(a):
    """The real cube root within 1/2 ulp, so exact cubes come out exact on every CPU.

    NumPy's cbrt depends on the SIMD loop the CPU gets: without AVX-512 an array's
    cbrt(27) is 3.0000000000000004.  One Newton step on the residual a - y**3, computed
    exactly in float64 (y**3 = q + e2 + e1*y by two error-free products; a - q is exact
    as q is within a few ulps of a), moves y to the nearest double of the true root.  The
    step runs where its products stay normal and finite (|a| in [1e-200, 1e300]); elsewhere
    (0, inf, nan, the extremes) the library's value stands.  float32 is computed in
    float64 and rounded once.
    """
    xp = _xp()
    a = xp.asarray(a)
    if a.dtype == xp.float32:
        return _cbrt_forward(a.astype(xp.float64)).astype(xp.float32)
    y = xp.cbrt(a)
    if y.dtype != xp.float64:
        return y
    mag = xp.abs(a)
    safe = (mag >= 1e-200) & (mag <= 1e300)
    a1 = xp.where(safe, a, 1.0)
    y1 = xp.where(safe, y, 1.0)
    p, e1 = _two_product(y1, y1)
    q, e2 = _two_product(p, y1)
    residual = ((a1 - q) - e2) - e1 * y1
    return xp.where(safe, y1 + residual / (3.0 * p), y)


# The real cube root (cbrt(-8) = -2); cbrt'(0) = 1/(3*0) = inf, as sqrt'(0).
_unary(
    "cbrt",
    "CbrtBackward0",
    _cbrt_forward,
    lambda x, out: 1 / (3 * (out * out)),
    printing=function("cbrt", latex=("\\sqrt[3]{", 0, "}"), latex_level=ATOM),
    kink=_at_zero("cbrt'(0) is infinite; used cbrt'(0) = inf (as sqrt'(0))"),
    total=True,
    spreads_nonfinite=(0,),
)
_unary(
    "erf",
    "ErfBackward0",
    lambda a: _special().erf(a),
    lambda x, out: TWO_OVER_SQRT_PI * call("exp", -(x * x)),
    latex="\\operatorname{erf}",
    total=True,
)
_unary(
    "erfc",
    "ErfcBackward0",
    lambda a: _special().erfc(a),
    lambda x, out: -(TWO_OVER_SQRT_PI * call("exp", -(x * x))),
    latex="\\operatorname{erfc}",
    total=True,
    nonneg=True,
)


def _erfcx_forward(a):
    special = _special()
    if not hasattr(special, "erfcx"):  # pragma: no cover - a CuPy before erfcx
        raise UnsupportedError("erfcx on the GPU needs a CuPy with cupyx.scipy.special.erfcx")
    return special.erfcx(a)


# erfcx(x) = exp(x**2) erfc(x), the scaled erfc: no underflow for large x (~ 1/(x sqrt(pi))),
# inf below -26.6; its derivative is PyTorch's, 2 x erfcx(x) - 2/sqrt(pi).
_unary(
    "erfcx",
    "SpecialErfcxBackward0",
    _erfcx_forward,
    lambda x, out: 2 * x * out - TWO_OVER_SQRT_PI,
    latex="\\operatorname{erfcx}",
    total=True,
    nonneg=True,
)
# erfinv on [-1, 1] (+-inf at +-1, nan outside); erfinv'(+-1) = inf.
_unary(
    "erfinv",
    "ErfinvBackward0",
    _erfinv_forward,
    lambda x, out: SQRT_PI_OVER_TWO * call("exp", out * out),
    latex="\\operatorname{erfinv}",
    spreads_nonfinite=(0,),
)


def _gamma_forward(a):
    xp = _xp()
    r = _special().gamma(a)
    # The poles as C99's tgamma and PyTorch have them, whatever the SciPy release (before
    # 1.15 SciPy gave +inf at the negative integers and at -0.0): +-inf at +-0, nan at the
    # negative integers and at -inf
    r = xp.where(a == 0, xp.copysign(xp.inf, a), r)
    r = xp.where((a < 0) & (a == xp.floor(a)), xp.nan, r)
    # SciPy's gamma underflows to 0 below -171, where gamma is still a subnormal number
    # (gamma(-171.5) = 1.9e-310, as C's tgamma and mpmath): there |gamma| = exp(lgamma),
    # with the sign of (-1)**(floor(-x) + 1) between the poles
    deep = (a < -171.0) & (a > -190.0) & (a != xp.floor(a))
    if backend.any_nonzero(deep):
        sign = xp.where(xp.floor(-a) % 2 == 0, -1.0, 1.0)
        r = xp.where(deep, sign * xp.exp(_special().gammaln(a)), r)
    return r


# gamma: inf at +0, -inf at -0, nan at the negative integers (poles), as C's tgamma.
_unary(
    "gamma",
    "GammaBackward0",
    _gamma_forward,
    lambda x, out: out * call("digamma", x),
    latex="\\Gamma",
    spreads_nonfinite=(0,),
)
_unary(
    "lgamma",
    "LgammaBackward0",
    _lgamma_forward,
    lambda x, out: call("digamma", x),
    latex="\\operatorname{lgamma}",
    spreads_nonfinite=(0,),
)
# digamma(+-0) = -+inf, nan at the negative integers (PyTorch's and SciPy's convention).
_unary(
    "digamma",
    "DigammaBackward0",
    lambda a: _special().psi(a),
    lambda x, out: call("polygamma", 1.0, x),
    latex="\\psi",
    spreads_nonfinite=(0,),
)


def _neg_vjp(n, g):
    return (-g,)


register(
    Op(
        "neg",
        "NegBackward0",
        lambda a: -a,
        _neg_vjp,
        lambda n, ts: None if ts[0] is None else -ts[0],
        saves=False,
        deriv=(lambda x, out: -1.0,),
        total=True,
        spreads_nonfinite=(0,),
        printing=Printing(form="prefix", symbol="-", level=UNARY, operands=(POWER,), latex="-"),
    )
)


def _add_vjp(n, g):
    return (
        sum_to(g, n.shapes[0]) if n.needs[0] else None,
        sum_to(g, n.shapes[1]) if n.needs[1] else None,
    )


def _add_jvp(n, ts):
    r = add_tangents(ts[0], ts[1])
    return None if r is None else broadcast_to(r, n.out.shape)


def _sub_vjp(n, g):
    return (
        sum_to(g, n.shapes[0]) if n.needs[0] else None,
        sum_to(-g, n.shapes[1]) if n.needs[1] else None,
    )


def _sub_jvp(n, ts):
    ta, tb = ts
    r = add_tangents(ta, None if tb is None else -tb)
    return None if r is None else broadcast_to(r, n.out.shape)


register(
    Op(
        "add",
        "AddBackward0",
        lambda a, b: a + b,
        _add_vjp,
        _add_jvp,
        arity=2,
        saves=False,
        deriv=(lambda a, b, out: 1.0, lambda a, b, out: 1.0),
        total=True,
        spreads_nonfinite=(0, 1),
        printing=infix("+", SUM, (SUM, PRODUCT), " + "),
    )
)
register(
    Op(
        "sub",
        "SubBackward0",
        lambda a, b: a - b,
        _sub_vjp,
        _sub_jvp,
        arity=2,
        saves=False,
        deriv=(lambda a, b, out: 1.0, lambda a, b, out: -1.0),
        total=True,
        spreads_nonfinite=(0, 1),
        printing=infix("-", SUM, (SUM, PRODUCT), " - "),
    )
)
_binary(
    "mul",
    "MulBackward0",
    lambda a, b: a * b,
    lambda a, b, out: b,
    lambda a, b, out: a,
    printing=infix("*", PRODUCT, (PRODUCT, POWER), " ", spaced=False),
    total=True,
    spreads_nonfinite=(0, 1),
)
_binary(
    "div",
    "DivBackward0",
    lambda a, b: a / b,
    lambda a, b, out: 1 / b,
    lambda a, b, out: -(out / b),
    printing=infix(
        "/",
        PRODUCT,
        (PRODUCT, POWER),
        ("\\frac{", 0, "}{", 1, "}"),
        spaced=False,
        latex_level=POWER,
    ),
    spreads_nonfinite=(0,),
)


def _pow_da(a, b, out):
    # d(a**b)/da = b * a**(b-1); PyTorch pins it to 0 where b == 0 (so x**0 has gradient 0 at x=0).
    d = b * a ** (b - 1)
    if _any_zero(b):
        d = where(eq(b, 0), 0.0, d)
    return d


def _pow_db(a, b, out):
    # d(a**b)/db = a**b * log(a); PyTorch pins it to 0 where a == 0 and b >= 0.
    d = out * call("log", a)
    if _any_zero(a):
        d = where(eq(a, 0) * call("ge", b, 0), 0.0, d)
    return d


def _pow_node(n):
    if not n.needs[1]:
        return "PowBackward0"
    return "PowBackward1" if n.needs[0] else "PowBackward2"


_HOST_SCALARS = (np.ndarray, np.floating)  # an exponent on the host (a constant, on the CPU)


def _power(a, b):
    # np.power, not a ** b: on NumPy scalars ** calls C pow(), which can differ in the last
    # bit from the ufunc loop that arrays (and batch rows) use; one kernel for both keeps
    # single lines and batch identical.  A constant exponent of -0.5 is PyTorch's rsqrt:
    # (-inf)**-0.5 is nan there (as (-inf)**0.5 is nan in both), not C's +0, so x**0.5 has
    # gradient nan at -inf in grad, in diff's printed 1/(2*x**(1/2)) and in PyTorch alike.
    xp = _xp()
    if isinstance(b, _HOST_SCALARS):
        if b.ndim == 0:  # a host constant: 2 and -0.5 have their own kernels
            if b == 2 and getattr(a, "dtype", None) == b.dtype:
                # x**2 by square: the same bits (both are the exact square, rounded once),
                # and NumPy's power takes its slow path for large or tiny values (7x slower)
                return xp.square(a)
            if b == -0.5:
                return xp.where(a == -math.inf, math.nan, xp.power(a, b))
        return xp.power(a, b)
    r = xp.power(a, b)
    if getattr(b, "ndim", None) == 0:  # a device scalar: decided on the device, no sync
        r = xp.where((a == -math.inf) & (b == -0.5), math.nan, r)
    return r


_binary(
    "pow",
    _pow_node,
    _power,
    _pow_da,
    _pow_db,
    printing=infix(
        "**", POWER, (ATOM, UNARY), ((0, ATOM), "^{", 1, "}"), spaced=False, names=("pow",)
    ),
    kink=_where_kink(
        lambda i, o, a: (i[0] == 0) & (i[1] < 1) & (i[1] != 0),
        "x**p with p < 1 is not differentiable at x = 0; its derivative there is inf or nan",
    ),
)
# max/min of two arguments: ties split the gradient evenly between them, and an argument
# takes the whole gradient unless it lost: with a NaN (no order) both do, as in PyTorch's
# maximum/minimum (grad.masked_fill_(self < other, 0) after halving the ties).
_binary(
    "maximum",
    "MaximumBackward0",
    lambda a, b: _xp().maximum(a, b),
    lambda a, b, out: 1 - lt(a, b) - 0.5 * eq(a, b),
    lambda a, b, out: 1 - gt(a, b) - 0.5 * eq(a, b),
    printing=function("max", "maximum", latex="\\max", with_constant="clamp_min"),
    kink=_at_tie("max(a, b) at a tie a == b is not differentiable; the gradient was split evenly"),
    total=True,
    piecewise_linear=True,
)
_binary(
    "minimum",
    "MinimumBackward0",
    lambda a, b: _xp().minimum(a, b),
    lambda a, b, out: 1 - gt(a, b) - 0.5 * eq(a, b),
    lambda a, b, out: 1 - lt(a, b) - 0.5 * eq(a, b),
    printing=function("min", "minimum", latex="\\min", with_constant="clamp_max"),
    kink=_at_tie("min(a, b) at a tie a == b is not differentiable; the gradient was split evenly"),
    total=True,
    piecewise_linear=True,
)

# max/min against a constant (max(x, 0), min(x, 1)): at a tie the constant takes the
# gradient, so max(x, 0) has the same derivative at 0 as relu(x) and where(x > 0, x, 0).
_binary(
    "clamp_min",
    "ClampMinBackward0",
    lambda a, b: _xp().maximum(a, b),
    lambda a, b, out: gt(a, b),
    lambda a, b, out: None,
    printing=Printing(call="max", latex="\\operatorname{max}"),  # max(x, c): see maximum
    differentiable=(True, False),  # c is a bound, as in torch.clamp
    kink=_at_tie("max(x, c) at x == c is not differentiable; used 0 for x, as relu'(0) = 0"),
    total=True,
    piecewise_linear=True,
)
_binary(
    "clamp_max",
    "ClampMaxBackward0",
    lambda a, b: _xp().minimum(a, b),
    lambda a, b, out: lt(a, b),
    lambda a, b, out: None,
    printing=Printing(call="min", latex="\\operatorname{min}"),  # min(x, c): see minimum
    differentiable=(True, False),  # c is a bound, as in torch.clamp
    kink=_at_tie("min(x, c) at x == c is not differentiable; used 0 for x, as relu'(0) = 0"),
    total=True,
    piecewise_linear=True,
)


# polygamma(n, x): the n-th derivative of digamma, for a whole n >= 0 (nan for any other
# n, as torch.polygamma takes integers only); +-inf at the poles 0, -1, -2, ... (PyTorch's
# trigamma gives a large finite number there).  n is an order, not a variable: it takes no
# gradient (differentiable=), and d/dx polygamma(n, x) = polygamma(n + 1, x).
def _polygamma_forward(n, x):
    xp = _xp()
    whole = (n >= 0) & (n == xp.floor(n)) & (n != xp.inf)  # inf == floor(inf), not whole
    r = _special().polygamma(xp.where(whole, n, 0), x)
    # nan at -inf, where digamma is nan too (scipy says inf for n >= 1)
    return xp.where(whole & (x != -xp.inf), r, xp.nan)


_binary(
    "polygamma",
    "PolygammaBackward0",
    _polygamma_forward,
    lambda n, x, out: None,
    lambda n, x, out: call("polygamma", n + 1, x),
    printing=function(
        "polygamma", latex=("\\psi^{(", 0, ")}\\left(", 1, "\\right)"), latex_level=ATOM
    ),
    differentiable=(False, True),  # the order n of polygamma(n, x) is not a variable
    spreads_nonfinite=(0,),
)


def _atan2_partials(y, x):
    # d/dy atan2(y, x) = x/(x^2 + y^2), d/dx = -y/(x^2 + y^2); both pinned to 0 at the
    # origin, where atan2 is not continuous (PyTorch's atan2_backward does the same).
    r2 = x * x + y * y
    dy, dx = x / r2, -y / r2
    if _any_zero(r2):
        dy, dx = where(eq(r2, 0), 0.0, dy), where(eq(r2, 0), 0.0, dx)
    return dy, dx


# atan2(y, x): the angle of the point (x, y), in [-pi, pi] (NumPy's and PyTorch's order).
_binary(
    "atan2",
    "Atan2Backward0",
    lambda y, x: _xp().arctan2(y, x),
    lambda y, x, out: _atan2_partials(y, x)[0],
    lambda y, x, out: _atan2_partials(y, x)[1],
    printing=function("atan2", "arctan2", latex="\\operatorname{atan2}"),
    kink=_where_kink(
        lambda i, o, a: (i[0] == 0) & (i[1] == 0),
        "atan2(y, x) is not differentiable at (0, 0); used gradient 0 there (PyTorch)",
    ),
    total=True,
    piecewise=True,  # atan2(0, x) is 0 for x > 0 and pi for x < 0
)
# beta(a, b) = gamma(a) gamma(b) / gamma(a + b) (SciPy's, no overflow for large a, b);
# d/da = beta(a, b) (digamma(a) - digamma(a + b)), and the same in b.
_binary(
    "beta",
    "BetaBackward0",
    lambda a, b: _special().beta(a, b),
    lambda a, b, out: out * (call("digamma", a) - call("digamma", a + b)),
    lambda a, b, out: out * (call("digamma", b) - call("digamma", a + b)),
    printing=function("beta", latex="\\mathrm{B}"),
)
# hypot(a, b) = sqrt(a^2 + b^2) without overflow; at (0, 0) its partials a/0, b/0 are nan,
# as in PyTorch.
_binary(
    "hypot",
    "HypotBackward0",
    lambda a, b: _xp().hypot(a, b),
    lambda a, b, out: a / out,
    lambda a, b, out: b / out,
    printing=function("hypot", latex="\\operatorname{hypot}"),
    kink=_where_kink(
        lambda i, o, a: (i[0] == 0) & (i[1] == 0),
        "hypot(a, b) is not differentiable at (0, 0); its gradient there is 0/0 = nan (PyTorch)",
    ),
    total=True,
    nonneg=True,  # a length
    piecewise=True,  # hypot(x, 0) is abs(x)
    spreads_nonfinite=(0, 1),
)


def _mod_db(a, b, out):
    # d mod(a, b)/db = -(a // b), the floored quotient (PyTorch's remainder_backward).  It is
    # (a - mod(a, b))/b rounded, exact where floor(a/b) rounds wrongly (mod(1, 0.1) =
    # 0.09999..., whose quotient is 9, not floor(1/0.1) = 10); where that is nan (b = 0),
    # floor(a/b).
    q = call("round", (a - out) / b)
    if not _all_finite(q):
        q = where(eq(q, q), q, call("floor", a / b))
    return -q


# mod(a, b): NumPy's np.mod, Python's % (the result has b's sign: mod(-1, 3) = 2), which is
# PyTorch's remainder, not C's fmod.  It jumps where a is a whole multiple of b.
_binary(
    "mod",
    # PyTorch's overloads: remainder(Tensor, Scalar) is RemainderBackward0, (Tensor, Tensor)
    # RemainderBackward1; a divisor that takes no gradient is the Scalar one (as pow's)
    lambda n: "RemainderBackward1" if n.needs[1] else "RemainderBackward0",
    lambda a, b: _xp().mod(a, b),
    lambda a, b, out: 1.0,
    _mod_db,
    printing=function("mod", "remainder", latex="\\operatorname{mod}"),
    kink=_where_kink(
        lambda i, o, a: o == 0,
        "mod(a, b) jumps where a is a whole multiple of b; used d/da = 1, d/db = -floor(a/b) "
        "(PyTorch's remainder)",
    ),
    piecewise_linear=True,  # x - mod(x, 1) is floor(x)
    spreads_nonfinite=(0,),
)


def _elementwise_op(name, node, forward, derivs, *, printing, **facts):
    """An elementwise op of ``len(derivs)`` arguments from its partials ``derivs[i](*args,
    out)``, written with engine ops (the n-ary :func:`_binary`)."""
    arity = len(derivs)

    def vjp(n, g):
        args = tuple(n.inputs) + (n.out,)
        return tuple(
            sum_to(chain(g, d(*args)), n.shapes[i]) if n.needs[i] else None
            for i, d in enumerate(derivs)
        )

    def jvp(n, tangents):
        args = tuple(n.inputs) + (n.out,)
        r = None
        for t, d in zip(tangents, derivs):
            if t is not None:
                r = add_tangents(r, chain(t, d(*args)))
        return None if r is None else broadcast_to(r, n.out.shape)

    return register(
        Op(
            name,
            node,
            forward,
            vjp,
            jvp,
            arity=arity,
            deriv=tuple(derivs),
            printing=printing,
            **facts,
        )
    )


# clip(x, lo, hi) = min(max(x, lo), hi), PyTorch's clamp with tensor bounds, gradients
# included: x takes the gradient where lo <= x <= hi (at the bounds too), lo where x < lo
# < hi, hi where x > hi or hi < lo (then clip is hi everywhere).  NaN propagates.
_elementwise_op(
    "clip",
    # clamp(Tensor, Tensor, Tensor) is ClampBackward0, clamp(Tensor, Scalar, Scalar)
    # ClampBackward1: bounds that take no gradient are the Scalar overload's
    lambda n: "ClampBackward0" if n.needs[1] or n.needs[2] else "ClampBackward1",
    lambda x, lo, hi: _xp().minimum(_xp().maximum(x, lo), hi),
    (
        lambda x, lo, hi, out: call("ge", x, lo) * call("le", x, hi),
        lambda x, lo, hi, out: lt(x, lo) * lt(lo, hi),
        lambda x, lo, hi, out: call("maximum", gt(x, hi), lt(hi, lo)),
    ),
    printing=function("clip", "clamp", latex="\\operatorname{clip}"),
    kink=_where_kink(
        # with lo > hi clip is hi on a whole neighbourhood: no kink there
        lambda i, o, a: ((i[0] == i[1]) | (i[0] == i[2])) & (i[1] <= i[2]),
        "clip(x, lo, hi) at x == lo or x == hi is not differentiable; used gradient 1 for x "
        "and 0 for the bound (PyTorch's clamp)",
    ),
    total=True,
    piecewise_linear=True,
)


# Comparisons: 0/1 values of the inputs' dtype; no gradient flows through them.
def _comparison(name, symbol, fn, latex):
    def forward(a, b):
        r = getattr(_xp(), fn)(a, b)
        return r.astype(_xp().result_type(a, b, _xp().float16))  # NumPy's promotion, a float

    register(
        Op(
            name,
            name.capitalize() + "Backward0",
            forward,
            None,
            None,
            arity=2,
            differentiable=(False, False),
            kind="comparison",
            kink=_zero_almost_everywhere(
                "comparisons pass no gradient (their derivative is zero almost everywhere)"
            ),
            total=True,
            nonneg=True,
            piecewise=True,
            # (SUM, SUM): a comparison operand of a comparison keeps its parentheses, since
            # a < b < c is a chain, as in Python, not (a < b) < c.
            printing=infix(symbol, COMPARE, (SUM, SUM), latex),
        )
    )


for _name, _symbol, _fn, _latex in (
    ("lt", "<", "less", " < "),
    ("le", "<=", "less_equal", " \\leq "),
    ("gt", ">", "greater", " > "),
    ("ge", ">=", "greater_equal", " \\geq "),
    ("eq", "==", "equal", " = "),
    ("ne", "!=", "not_equal", " \\neq "),
):
    _comparison(_name, _symbol, _fn, _latex)


def _where_vjp(n, g):
    cond = n.inputs[0]
    ga = sum_to(where(cond, g, 0.0), n.shapes[1]) if n.needs[1] else None
    gb = sum_to(where(cond, 0.0, g), n.shapes[2]) if n.needs[2] else None
    return None, ga, gb


def _where_jvp(n, ts):
    _, ta, tb = ts
    if ta is None and tb is None:
        return None
    cond = n.inputs[0]
    ta = zeros_like(n.inputs[1]) if ta is None else ta
    tb = zeros_like(n.inputs[2]) if tb is None else tb
    return broadcast_to(where(cond, ta, tb), n.out.shape)


register(
    Op(
        "where",
        "WhereBackward0",
        lambda c, a, b: _xp().where(c != 0, a, b),
        _where_vjp,
        _where_jvp,
        arity=3,
        differentiable=(False, True, True),
        printing=function("where", latex="\\operatorname{where}"),
        total=True,
        piecewise=True,
    )
)


def _zeros_like_forward(a):
    return _xp().zeros_like(a)


register(
    Op(
        "zeros_like",
        "ZerosLikeBackward0",
        _zeros_like_forward,
        None,
        None,
        differentiable=(False,),
        kind="constant",
        internal=True,
    )
)


# ---------------------------------------------------------------------------
# Shape ops (linear: the jvp is the op applied to the tangent)
# ---------------------------------------------------------------------------


def _broadcast_to_forward(a, shape):
    return _xp().broadcast_to(a, shape)


def _sum_to_forward(a, shape):
    lead = a.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and a.shape[i + lead] != 1
    )
    r = a.sum(axis=axes, keepdims=True) if axes else a
    return r.reshape(shape)


register(
    Op(
        "broadcast_to",
        "ExpandBackward0",
        _broadcast_to_forward,
        lambda n, g: (sum_to(g, n.shapes[0]),),
        lambda n, ts: None if ts[0] is None else broadcast_to(ts[0], n.attrs["shape"]),
        saves=False,
        kind="shape",
        internal=True,
    )
)
register(
    Op(
        "sum_to",
        "SumToSizeBackward0",
        _sum_to_forward,
        lambda n, g: (broadcast_to(g, n.shapes[0]),),
        lambda n, ts: None if ts[0] is None else sum_to(ts[0], n.attrs["shape"]),
        saves=False,
        kind="shape",
        internal=True,
    )
)
register(
    Op(
        "reshape",
        "ViewBackward0",
        lambda a, shape: a.reshape(shape),
        lambda n, g: (reshape(g, n.shapes[0]),),
        lambda n, ts: None if ts[0] is None else reshape(ts[0], n.attrs["shape"]),
        saves=False,
        kind="shape",
        printing=function("reshape", latex="\\operatorname{reshape}", attr_args=("shape",)),
        spreads_nonfinite=(0,),
    )
)
register(
    Op(
        "transpose",
        "PermuteBackward0",
        lambda a: a.T,
        lambda n, g: (call("transpose", g),),
        lambda n, ts: None if ts[0] is None else call("transpose", ts[0]),
        saves=False,
        kind="shape",
        printing=function("transpose", latex="\\operatorname{transpose}"),
        spreads_nonfinite=(0,),
    )
)
register(
    Op(
        "mT",
        "TransposeBackward0",
        lambda a: _xp().swapaxes(a, -1, -2),
        lambda n, g: (call("mT", g),),
        lambda n, ts: None if ts[0] is None else call("mT", ts[0]),
        saves=False,
        kind="shape",
        internal=True,
    )
)


def _getitem_node(n):
    index = n.attrs["index"]
    if all(isinstance(i, int) for i in index):
        return "SelectBackward0"
    if all(isinstance(i, slice) for i in index):
        return "SliceBackward0"
    return "IndexBackward0"


def _basic_index(index) -> bool:
    """An index of ints, slices, None and Ellipsis only: it selects each element at most once."""
    return all(i is None or i is Ellipsis or type(i) in (int, slice) for i in index)


def split_advanced(index) -> bool:
    """Whether an index with integer arrays (``x[[0, 2]]``) has its advanced parts (the arrays
    and, among them, plain ints) apart, separated by a slice, None or Ellipsis.  NumPy then
    puts the selected axes first, so a batch axis put in front of the index does not stay
    in front: batched rules fall back to one row (or direction) at a time."""
    if not any(type(i) is tuple for i in index):
        return False
    where = [k for k, i in enumerate(index) if type(i) in (int, tuple)]
    return where[-1] - where[0] + 1 != len(where)


def _getitem_size(shapes, attrs) -> int:
    """How many numbers ``x[index]`` holds: integer arrays can select more than x has."""
    index = attrs["index"]
    if not any(type(i) is tuple for i in index):
        return 0  # a view of x: never larger
    import numpy as host

    arrays = [host.shape(i) for i in index if type(i) is tuple]
    try:
        count = math.prod(host.broadcast_shapes(*arrays))
    except ValueError:
        return 0  # the forward reports the shapes
    shape = shapes[0]
    used = sum(1 for i in index if i is not None and i is not Ellipsis)
    if used > len(shape):
        return 0  # too many indices: the forward says so
    fill = len(shape) - used  # the axes an Ellipsis stands for
    pos = 0
    for i in index:
        if i is None:
            continue
        if i is Ellipsis:
            count *= math.prod(shape[pos : pos + fill])
            pos += fill
            fill = 0
            continue
        if type(i) is slice:
            count *= len(range(*i.indices(shape[pos])))
        pos += 1
    return count * math.prod(shape[pos:])


def _scatter_forward(g, index, shape):
    xp = _xp()
    out = xp.zeros(shape, dtype=g.dtype)
    if xp is backend.host and isinstance(index, tuple) and _basic_index(index):
        # No element is selected twice, so adding in place into the view is add.at's
        # 0 + g, element for element, without add.at's per-element indexing.
        view = out[index]
        if isinstance(view, xp.ndarray):
            view += g
            return out
    if backend.device == "gpu" and not hasattr(xp.add, "at"):  # older CuPy
        import cupyx  # noqa: PLC0415 - only on the GPU path

        cupyx.scatter_add(out, index, g)
    else:
        xp.add.at(out, index, g)
    return out


register(
    Op(
        "getitem",
        _getitem_node,
        lambda a, index: a[index],
        lambda n, g: (call("scatter", g, index=n.attrs["index"], shape=n.shapes[0]),),
        lambda n, ts: None if ts[0] is None else call("getitem", ts[0], index=n.attrs["index"]),
        saves=False,
        kind="shape",
        printing=Printing(form="subscript", latex="\\operatorname{getitem}"),
        size=_getitem_size,
    )
)
register(
    Op(
        "scatter",
        "IndexPutBackward0",
        _scatter_forward,
        lambda n, g: (call("getitem", g, index=n.attrs["index"]),),
        lambda n, ts: (
            None
            if ts[0] is None
            else call("scatter", ts[0], index=n.attrs["index"], shape=n.attrs["shape"])
        ),
        saves=False,
        kind="shape",
        internal=True,
    )
)


def _stack_forward(*arrays):
    xp = _xp()
    shapes = {a.shape for a in arrays}
    if len(shapes) > 1:
        # A number among arrays is repeated to their shape ([v, 1] for a vector v); arrays
        # of different shapes are ragged, as in NumPy and PyTorch, not broadcast.
        shape = stack_shape(shapes)
        arrays = [xp.broadcast_to(a, shape) for a in arrays]
    return xp.stack(arrays)


def stack_shape(shapes) -> tuple:
    """The common shape of an array literal's elements: numbers take the arrays' shape;
    arrays of different shapes raise ValueError (the literal is ragged)."""
    arrays = {tuple(s) for s in shapes if len(s)}
    if len(arrays) > 1:
        listed = ", ".join(str(s) for s in sorted(arrays))
        raise ValueError(f"the elements of an array literal must have one shape, not {listed}")
    return arrays.pop() if arrays else ()


def _stack_size(shapes, attrs) -> int:
    try:
        return len(shapes) * math.prod(stack_shape(shapes))
    except ValueError:  # ragged: the forward says so
        return 0


def _stack_vjp(n, g):
    return tuple(
        sum_to(call("getitem", g, index=(i,)), n.shapes[i]) if need else None
        for i, need in enumerate(n.needs)
    )


def _stack_jvp(n, ts):
    if all(t is None for t in ts):
        return None
    parts = [zeros_like(x) if t is None else t for x, t in zip(n.inputs, ts)]
    shape = n.out.shape[1:]
    return call("stack", *[broadcast_to(p, shape) for p in parts])


register(
    Op(
        "stack",
        "StackBackward0",
        _stack_forward,
        _stack_vjp,
        _stack_jvp,
        arity=None,
        kind="shape",
        printing=Printing(form="array", latex="\\operatorname{stack}"),
        size=_stack_size,
    )
)


# ---------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------


def _reduce_name(full, partial):
    return lambda n: full if n.attrs.get("axis") is None else partial


def _reduced_count(shape, axis) -> int:
    n = 1
    for s in shape:
        n *= s
    m = 1
    for s in _reduced_shape(shape, axis, True):
        m *= s
    return n // m if m else 0


register(
    Op(
        "sum",
        _reduce_name("SumBackward0", "SumBackward1"),
        lambda a, axis=None, keepdims=False: a.sum(axis=axis, keepdims=keepdims),
        lambda n, g: (expand_back(g, n.shapes[0], n.attrs["axis"], n.attrs["keepdims"]),),
        lambda n, ts: None if ts[0] is None else call("sum", ts[0], **n.attrs),
        saves=False,
        kind="reduction",
        printing=function("sum", latex="\\operatorname{sum}"),
        spreads_nonfinite=(0,),
    )
)


def _mean_forward(a, axis=None, keepdims=False):
    # sum / count, which is how NumPy's mean computes it (the same bits), minus NumPy's
    # "Mean of empty slice" RuntimeWarning: the mean of nothing is 0/0 = nan (IEEE, as in
    # PyTorch), reported like any other nan, never as a Python warning on stderr.
    return a.sum(axis=axis, keepdims=keepdims) / _reduced_count(a.shape, axis)


register(
    Op(
        "mean",
        _reduce_name("MeanBackward0", "MeanBackward1"),
        _mean_forward,
        lambda n, g: (
            expand_back(g, n.shapes[0], n.attrs["axis"], n.attrs["keepdims"])
            / _reduced_count(n.shapes[0], n.attrs["axis"]),
        ),
        lambda n, ts: None if ts[0] is None else call("mean", ts[0], **n.attrs),
        saves=False,
        kind="reduction",
        printing=function("mean", latex="\\operatorname{mean}"),
        spreads_nonfinite=(0,),
    )
)


def _by_partials(partials):
    """The vjp and jvp of a reduction whose derivative is elementwise: ``partials(x, out,
    axis, keepdims)`` gives d out / d x_i in x's shape (prod, norm)."""

    def local(n):
        return partials(n.inputs[0], n.out, n.attrs["axis"], n.attrs["keepdims"])

    def vjp(n, g):
        return (chain(expand_back(g, n.shapes[0], n.attrs["axis"], n.attrs["keepdims"]), local(n)),)

    def jvp(n, ts):
        return None if ts[0] is None else call("sum", chain(ts[0], local(n)), **n.attrs)

    return vjp, jvp


def _prod_partials(x, out, axis, keepdims):
    """d prod / d x_i = product of the others, also where some x are 0."""
    out_k = expand_back(out, x.shape, axis, keepdims)
    if not _any_zero(x):
        return out_k / x
    zero = eq(x, 0)
    safe = where(zero, 1.0, x)

    def along(t):  # reduced over the axis, broadcast back to x's shape
        return expand_back(call(t[0], t[1], axis=axis, keepdims=True), x.shape, axis, True)

    prod_nonzero = along(("prod", safe))
    zeros_count = along(("sum", zero))
    # The sum of the zero entries: its value is 0, but it carries their derivatives, so
    # a partial that is 0 at the point (a product with a zero factor left in it) still has
    # the right derivative: the second derivative at zeros is exact (H_ij = prod_{k!=i,j}).
    zero_sum = along(("sum", where(zero, x, 0.0)))
    at_zero = where(
        eq(zeros_count, 1),
        prod_nonzero,
        where(eq(zeros_count, 2), (zero_sum - x) * prod_nonzero, 0.0),
    )
    elsewhere = where(
        eq(zeros_count, 0),
        out_k / safe,
        where(eq(zeros_count, 1), zero_sum * prod_nonzero / safe, 0.0),
    )
    return where(zero, at_zero, elsewhere)


register(
    Op(
        "prod",
        _reduce_name("ProdBackward0", "ProdBackward1"),
        lambda a, axis=None, keepdims=False: a.prod(axis=axis, keepdims=keepdims),
        *_by_partials(_prod_partials),
        kind="reduction",
        printing=function("prod", latex="\\operatorname{prod}"),
    )
)


def _extreme_weights(x, out, axis, keepdims):
    # Ties share the gradient evenly (PyTorch's amax/amin and full max/min). A full
    # reduction that is NaN shares it among the NaNs, as PyTorch's evenly_distribute_backward
    # does; a reduction along an axis compares with ==, so a NaN result gives NaN weights
    # there (PyTorch's amax/amin backward, scale_grad_by_count, does the same).
    if axis is None:
        hit = eq(x, out) + ne(x, x) * ne(out, out)
        return hit / call("sum", hit)
    hit = eq(x, expand_back(out, x.shape, axis, keepdims))
    count = expand_back(call("sum", hit, axis=axis, keepdims=True), x.shape, axis, True)
    return hit / count


def _extreme(name, fn, full, partial, printing):
    register(
        Op(
            name,
            _reduce_name(full, partial),
            lambda a, axis=None, keepdims=False: getattr(_xp(), fn)(
                a, axis=axis, keepdims=keepdims
            ),
            lambda n, g: (
                chain(
                    expand_back(g, n.shapes[0], n.attrs["axis"], n.attrs["keepdims"]),
                    _extreme_weights(n.inputs[0], n.out, n.attrs["axis"], n.attrs["keepdims"]),
                ),
            ),
            lambda n, ts: (
                None
                if ts[0] is None
                else call(
                    "sum",
                    chain(
                        ts[0],
                        _extreme_weights(n.inputs[0], n.out, n.attrs["axis"], n.attrs["keepdims"]),
                    ),
                    **n.attrs,
                )
            ),
            kind="reduction",
            kink=_tie_kink(fn),
            printing=printing,
        )
    )


_extreme("amax", "max", "MaxBackward1", "AmaxBackward0", function("max", latex="\\max"))
_extreme("amin", "min", "MinBackward1", "AminBackward0", function("min", latex="\\min"))


# ---- norm(x, axis=None, keepdims=0, ord=None): NumPy's numpy.linalg.norm ------------------
#
# Without ord: the 2-norm over the axes given (all of them by default), as before ord existed:
# sqrt(sum(x*x)) over any number of axes.  With ord (keyword only: NumPy's second positional
# argument is ord, ours is axis, as every reduction's): a vector norm over one axis (a vector
# by default) or a matrix norm over two (a matrix by default), NumPy's orders:
#   vectors   ord = any real p: sum(|x|^p)^(1/p); 0: the count of nonzero entries; inf, -inf:
#             max |x|, min |x|; 1 and 2 as p.
#   matrices  'fro' (the 2-norm of the entries), 'nuc' (the sum of the singular values), 2, -2
#             (the largest, smallest singular value), 1, -1 (max, min column sum of |x|), inf,
#             -inf (max, min row sum of |x|).
# Gradients are PyTorch's (linalg.vector_norm, linalg.matrix_norm): d norm / d x is a partial
# in x's shape for every order (x/|x| pinned to 0 at 0; sign(x)|x|^(p-1) |x|_p^(1-p), with
# PyTorch's pins; ties of inf-norms split evenly; U diag(w) Vᵀ for the orders made from
# singular values, w the weights of the singular values chosen), so one vjp and one jvp
# (:func:`_by_partials`) serve them all.  A kink (0, ties, a zero entry for p <= 1, repeated
# or zero singular values) warns, as the other ops' conventions do.


@dataclass(frozen=True)
class KeywordParam(Param):
    """A :class:`Param` that a call gives by keyword only (norm's ``keepdims`` and ``ord``:
    NumPy's second positional argument of norm is ord, the language's is axis)."""

    keyword_only: bool = True


class Word(str):
    """A string attribute: norm's ``ord='fro'``, einsum's subscripts.  It prints quoted, as the
    language writes a string (``str()`` is what the printers write for an attribute)."""

    __slots__ = ()

    def __str__(self) -> str:
        return "'" + self.__add__("'")

    def __repr__(self) -> str:
        return self.__str__()


_MATRIX_ORDS = "'fro', 'nuc', 1, -1, 2, -2, inf, -inf"


def norm_ord(value):
    """The ``ord`` of norm as given (a number, or a string: ``'fro'``, ``'nuc'``, ``'f'``),
    as the op keeps it: None, an int for a whole number, a float, or a :class:`Word`; a
    ValueError saying what ord can be for anything else (nan, another word)."""
    if value is None:
        return None
    if isinstance(value, str):
        word = {"fro": "fro", "f": "fro", "nuc": "nuc"}.get(value)
        if word is None:
            raise ValueError(
                f"ord of norm() must be a number (a vector norm: any p, inf, -inf, 0) or "
                f"'fro' or 'nuc' (matrix norms), got {value!r}"
            )
        return Word(word)
    if isinstance(value, list):
        raise ValueError("ord of norm() must be a number, 'fro' or 'nuc', got a list")
    number = float(value)
    if math.isnan(number):
        raise ValueError("ord of norm() must be a number, 'fro' or 'nuc', got nan")
    if math.isfinite(number) and number == math.floor(number) and abs(number) < 2**53:
        return int(number)
    return number


def _ord_text(ord) -> str:
    if isinstance(ord, float) and math.isinf(ord):
        return "inf" if ord > 0 else "-inf"
    return str(ord)


def _have(ndim: int) -> str:
    return "a number" if ndim == 0 else f"an array of {ndim} dimension(s)"


def norm_axes(ndim: int, axis, ord) -> tuple:
    """The axes norm(x, axis, ord=ord) reduces (from 0), for an ord given: one (a vector norm)
    or two (a matrix norm); a ValueError in the tool's words otherwise."""
    shown = _ord_text(ord)
    if axis is None:
        if ndim not in (1, 2):
            raise ValueError(
                f"norm(x, ord={shown}) of {_have(ndim)} needs an axis: one (axis=0) for a "
                "vector norm, two (axis=[0, 1]) for a matrix norm"
            )
        axes = tuple(range(ndim))
    else:
        axes = axis if isinstance(axis, tuple) else (axis,)
    if len(axes) not in (1, 2):
        raise ValueError(
            f"norm(x, ord={shown}) reduces one axis (a vector norm) or two (a matrix norm), "
            f"not {len(axes)}"
        )
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} of norm() is out of range for {_have(ndim)}")
        out.append(a + ndim if a < 0 else a)
    if len(out) == 2 and out[0] == out[1]:
        raise ValueError(f"norm(x, ord={shown}): the two axes of a matrix norm must differ")
    if len(out) == 1 and isinstance(ord, str):
        raise ValueError(
            f"norm(x, ord={shown}) is a matrix norm: give it a matrix or two axes (axis=[0, 1])"
        )
    if (
        len(out) == 2
        and not isinstance(ord, str)
        and ord not in (1, -1, 2, -2, math.inf, -math.inf)
    ):
        raise ValueError(f"norm(): ord={shown} is not a matrix norm (those are {_MATRIX_ORDS})")
    return tuple(out)


def _moved(a, axes):
    """``a`` with the two ``axes`` moved last, in that order (a host or device array)."""
    return _xp().moveaxis(a, axes, (-2, -1))


def _nonempty(a, axes, shown):
    if any(a.shape[k] == 0 for k in axes):
        raise ValueError(
            f"norm(x, ord={shown}) of an empty array has no value (no largest element)"
        )


def _vector_norm(a, k: int, ord):
    xp = _xp()
    if ord == 2:
        return xp.sqrt((a * a).sum(axis=k, keepdims=True))
    if ord == 1:
        return xp.abs(a).sum(axis=k, keepdims=True)
    if ord == 0:
        return (a != 0).sum(axis=k, keepdims=True, dtype=a.dtype)
    if ord in (math.inf, -math.inf):
        _nonempty(a, (k,), _ord_text(ord))
        fn = xp.max if ord > 0 else xp.min
        return fn(xp.abs(a), axis=k, keepdims=True)
    # NumPy's: abs(x)**p summed, then to the power 1/p
    return (xp.abs(a) ** ord).sum(axis=k, keepdims=True) ** (1.0 / ord)


def _matrix_norm(a, axes, ord):
    xp = _xp()
    r, c = axes
    if ord == "fro":
        return xp.sqrt((a * a).sum(axis=axes, keepdims=True))
    if ord in ("nuc", 2, -2):
        s = OPS["svdvals"].forward(_moved(a, axes))  # (..., k): nan where a matrix is not finite
        if ord == "nuc":
            v = s.sum(axis=-1)
        else:
            _nonempty(a, axes, _ord_text(ord))
            v = s.max(axis=-1) if ord == 2 else s.min(axis=-1)
        return v.reshape(_keepdims_shape(a.shape, axes))
    _nonempty(a, axes, _ord_text(ord))
    # 1, -1: the column sums (over rows) of |x|; inf, -inf: the row sums (over columns)
    summed, picked = (r, c) if ord in (1, -1) else (c, r)
    sums = xp.abs(a).sum(axis=summed, keepdims=True)
    return (xp.max if ord > 0 else xp.min)(sums, axis=picked, keepdims=True)


def _norm_forward(a, axis=None, keepdims=False, ord=None):
    if axis is not None and a.ndim == 0:
        raise ValueError(
            f"norm() of a number has no axis {axis}: a number has no axes (leave the axis out)"
        )
    if ord is None:
        return _xp().sqrt((a * a).sum(axis=axis, keepdims=keepdims))
    axes = norm_axes(a.ndim, axis, ord)
    r = _vector_norm(a, axes[0], ord) if len(axes) == 1 else _matrix_norm(a, axes, ord)
    return r if keepdims else r.reshape(_reduced_shape(a.shape, axes, False))


def _index_arange(n: int, at: int, ndim: int):
    """arange(n) as an index array along axis ``at`` of ``ndim`` (ones elsewhere)."""
    host = backend.host
    shape = [1] * ndim
    shape[at] = n
    return _xp().asarray(host.arange(n, dtype=host.intp).reshape(shape))


def _permute(x, perm):
    """``x`` with its axes in the order ``perm`` (x.transpose(perm)), as an engine getitem of
    open index arrays, so that it differentiates (the table has no permute op)."""
    n = len(perm)
    if tuple(perm) == tuple(range(n)):
        return x
    if tuple(perm) == tuple(range(n - 2)) + (n - 1, n - 2):
        return call("mT", x)
    shape = tuple(x.shape)
    where = {a: k for k, a in enumerate(perm)}
    index = tuple(_index_arange(shape[a], where[a], n) for a in range(n))
    return call("getitem", x, index=index)


def _to_end_perm(ndim: int, axes) -> tuple:
    return tuple(a for a in range(ndim) if a not in axes) + tuple(axes)


def _sv_weights(s, ord):
    """The weights of the singular values ``s`` (..., k) in a norm made from them: all 1 for
    'nuc'; for 2 (-2) the largest (smallest), ties sharing evenly, as amax/amin backward."""
    if ord == "nuc":
        return call("zeros_like", s) + 1.0
    ref = call("amax" if ord == 2 else "amin", s, axis=-1, keepdims=True)
    hit = eq(s, ref)
    return hit / call("sum", hit, axis=-1, keepdims=True)


def _svd_partials(x, axes, ord):
    """d norm / d x for 'nuc', 2, -2: U diag(w) Vᵀ (reduced SVD) of each matrix."""
    nd = len(x.shape)
    perm = _to_end_perm(nd, axes)
    xm = _permute(x, perm)
    u = call("svd", xm, full_matrices=False, part=0)
    vh = call("svd", xm, full_matrices=False, part=2)
    w = _sv_weights(call("svdvals", xm), ord)
    d = call("matmul", u * reshape(w, tuple(w.shape[:-1]) + (1, w.shape[-1])), vh)
    inverse = [0] * nd
    for k, a in enumerate(perm):
        inverse[a] = k
    return _permute(d, inverse)


def _norm_partials(x, out, axis, keepdims, ord=None):
    # d|x|/dx = x/|x|, pinned to 0 at |x| = 0 (PyTorch's convention).
    if ord is None:
        out_k = expand_back(out, x.shape, axis, keepdims)
        return where(eq(out_k, 0), 0.0, x / out_k)
    axes = norm_axes(len(x.shape), axis, ord)
    out_k = expand_back(out, x.shape, axes, keepdims)
    if ord in (2, "fro") and (len(axes) == 1 or ord == "fro"):
        return where(eq(out_k, 0), 0.0, x / out_k)
    if len(axes) == 2:
        if ord in ("nuc", 2, -2):
            return _svd_partials(x, axes, ord)
        # 1, -1, inf, -inf: sign(x) times the weight of its column (row) sum, ties even
        summed, picked = (axes[0], axes[1]) if ord in (1, -1) else (axes[1], axes[0])
        sums = call("sum", call("abs", x), axis=summed, keepdims=True)
        ref = out if keepdims else reshape(out, _keepdims_shape(x.shape, axes))
        weights = _extreme_weights(sums, ref, picked, True)
        return sign(x) * broadcast_to(weights, tuple(x.shape))
    if ord == 1:
        return sign(x)
    if ord == 0:
        return zeros_like(x)
    if ord in (math.inf, -math.inf):
        # PyTorch's: sign(x) on the entries whose |x| is the norm (or nan), shared evenly
        hit = eq(call("abs", x), out_k) + ne(x, x)
        count = expand_back(call("sum", hit, axis=axes, keepdims=True), x.shape, axes, True)
        return sign(x) * hit / count
    scaled = sign(x) * call("abs", x) ** (ord - 1)
    if ord < 1:  # PyTorch pins the entries that are 0 (their derivative is infinite)
        return where(eq(x, 0), 0.0, scaled) * out_k ** (1 - ord)
    return scaled * where(eq(out_k, 0), 0.0, out_k ** (1 - ord))


def _norm_rule(n):
    """(the partials of the norm, the axes it reduces, keepdims): shared by vjp and jvp."""
    a = n.attrs
    keepdims = a.get("keepdims", False)
    d = _norm_partials(n.inputs[0], n.out, a.get("axis"), keepdims, a.get("ord"))
    axes = (
        a.get("axis")
        if a.get("ord") is None
        else norm_axes(len(n.shapes[0]), a.get("axis"), a["ord"])
    )
    return d, axes, keepdims


def _norm_vjp(n, g):
    d, axes, keepdims = _norm_rule(n)
    return (chain(expand_back(g, n.shapes[0], axes, keepdims), d),)


def _norm_jvp(n, ts):
    if ts[0] is None:
        return None
    d, axes, keepdims = _norm_rule(n)
    return call("sum", chain(ts[0], d), axis=axes, keepdims=keepdims)


def _norm_node(n):
    ord = n.attrs.get("ord")
    if ord is None:
        return "NormBackward1"
    if ord in ("nuc",):
        return "SumBackward1"
    if len(norm_axes(len(n.shapes[0]), n.attrs.get("axis"), ord)) == 2 and ord != "fro":
        return "AmaxBackward0" if ord > 0 else "AminBackward0"
    return "LinalgVectorNormBackward0"


def _norm_kink(inputs, out, attrs):
    """The kink of norm at this point, for its ord (None: no kink)."""
    with backend.errstate():
        return _norm_kink_at(inputs, out, attrs)


def _norm_kink_at(inputs, out, attrs):
    xp = _xp()
    x = inputs[0]
    ord = attrs.get("ord")
    if ord is None:
        return (
            "norm is not differentiable at 0; used gradient 0 (PyTorch)"
            if backend.any_nonzero(out == 0)
            else None
        )
    shown = _ord_text(ord)
    axes = norm_axes(x.ndim, attrs.get("axis"), ord)
    if x.size == 0:
        return None
    if ord == 0:
        return "norm(x, ord=0) counts the nonzero entries: its gradient is zero almost everywhere"
    if (
        ord == "fro"
        or (ord == 2 and len(axes) == 1)
        or (len(axes) == 1 and ord > 1 and ord != math.inf)
    ):
        if backend.any_nonzero(out == 0):
            return f"norm(x, ord={shown}) is not differentiable at 0; used gradient 0 (PyTorch)"
        return None
    if len(axes) == 1 and ord not in (math.inf, -math.inf):  # p <= 1: |x|'s kink at each 0
        if backend.any_nonzero(x == 0):
            return (
                f"norm(x, ord={shown}) is not differentiable where an entry is 0; used "
                "gradient 0 for it (PyTorch)"
            )
        return None
    keep = _keepdims_shape(x.shape, axes)
    ref = out.reshape(keep)
    if len(axes) == 1:  # inf, -inf: ties of |x| (0 is a tie of signs too)
        hits = (xp.abs(x) == ref).sum(axis=axes)
        if backend.any_nonzero((hits > 1) | (ref.reshape(hits.shape) == 0)):
            return (
                f"norm(x, ord={shown}) has tied extreme entries (or is 0), where it is not "
                "differentiable; the gradient was split evenly among them (PyTorch)"
            )
        return None
    if ord in ("nuc", 2, -2):
        s = OPS["svdvals"].forward(_moved(x, axes))
        if ord == "nuc":
            bad = (s == 0).any(axis=-1)
            why = "has a zero singular value (it is rank-deficient); used U Vᵀ of its reduced SVD"
        else:
            pick = s.max(axis=-1, keepdims=True) if ord == 2 else s.min(axis=-1, keepdims=True)
            bad = ((s == pick).sum(axis=-1) > 1) | (pick[..., 0] == 0)
            why = "has its extreme singular value repeated (or 0); the gradient was split evenly"
        if backend.any_nonzero(bad):
            return f"norm(x, ord={shown}) is not differentiable where the matrix {why} (PyTorch)"
        return None
    summed, picked = (axes[0], axes[1]) if ord in (1, -1) else (axes[1], axes[0])
    sums = xp.abs(x).sum(axis=summed, keepdims=True)
    chosen = sums == ref
    tied = chosen.sum(axis=picked, keepdims=True) > 1
    zero = ((x == 0) & chosen).any(axis=summed, keepdims=True)
    if backend.any_nonzero(tied | zero):
        line = "column" if ord in (1, -1) else "row"
        return (
            f"norm(x, ord={shown}) is not differentiable where its extreme {line} sums tie or the "
            f"chosen {line} has a zero entry; used PyTorch's gradient (ties split evenly)"
        )
    return None


register(
    Op(
        "norm",
        _norm_node,
        _norm_forward,
        _norm_vjp,
        _norm_jvp,
        # a reduction with an ord; its kind is linalg because a reduction's forward takes
        # axis and keepdims only (core/batch.py batches it as a reduction all the same)
        kind="linalg",
        kink=_norm_kink,
        printing=function("norm", latex="\\operatorname{norm}"),
        params=(
            Param("axis", "axes", None),
            KeywordParam("keepdims", "flag", False),
            KeywordParam("ord", "ord", None),
        ),
    )
)


def _logsumexp_forward(a, axis=None, keepdims=False):
    # log(sum(exp(x - m))) + m with m the largest element (0 where that is not finite, so
    # all -inf gives -inf and any +inf gives +inf, as torch.logsumexp).
    xp = _xp()
    m = xp.max(a, axis=axis, keepdims=True) if a.size else xp.zeros((1,) * a.ndim, a.dtype)
    m = xp.where(xp.isfinite(m), m, 0)
    r = xp.log(xp.exp(a - m).sum(axis=axis, keepdims=True)) + m
    return r if keepdims else xp.squeeze(r, axis=axis)


register(
    Op(
        "logsumexp",
        "LogsumexpBackward0",
        _logsumexp_forward,
        # d/dx_i = exp(x_i - logsumexp(x)), the softmax (nan where the result is +-inf, as
        # in PyTorch)
        *_by_partials(
            lambda x, out, axis, keepdims: call(
                "exp", x - expand_back(out, x.shape, axis, keepdims)
            )
        ),
        kind="reduction",
        printing=function("logsumexp", latex="\\operatorname{logsumexp}"),
    )
)


def _centered(x, axis):
    """x minus its mean along ``axis``, in x's shape."""
    return x - expand_back(call("mean", x, axis=axis, keepdims=True), x.shape, axis, True)


def _var_forward(a, axis=None, keepdims=False):
    # NumPy's var with ddof=0 (the population variance; PyTorch's var(correction=0)),
    # the variance of nothing nan without a RuntimeWarning.
    if _reduced_count(a.shape, axis) == 0:
        return _mean_forward(a, axis, keepdims) * _xp().nan
    return _xp().var(a, axis=axis, keepdims=keepdims)


# The op is "variance": "var" is the op of a variable's node (Expr.var); the language
# spells it var().
register(
    Op(
        "variance",
        "VarBackward0",
        _var_forward,
        # d var/dx_i = 2 (x_i - mean)/N
        *_by_partials(
            lambda x, out, axis, keepdims: (
                _centered(x, axis) * (2.0 / _reduced_count(x.shape, axis))
            )
        ),
        kind="reduction",
        printing=function("var", latex="\\operatorname{var}"),
    )
)


def _std_partials(x, out, axis, keepdims):
    # d std/dx_i = (x_i - mean)/(N std), pinned to 0 where std = 0 (PyTorch's std_backward).
    out_k = expand_back(out, x.shape, axis, keepdims)
    d = _centered(x, axis) / (out_k * _reduced_count(x.shape, axis))
    return where(eq(out_k, 0), 0.0, d)


register(
    Op(
        "std",
        "StdBackward0",
        lambda a, axis=None, keepdims=False: _xp().sqrt(_var_forward(a, axis, keepdims)),
        *_by_partials(_std_partials),
        kind="reduction",
        printing=function("std", latex="\\operatorname{std}"),
    )
)


# ---------------------------------------------------------------------------
# Products
# ---------------------------------------------------------------------------


def _dot_forward(a, b):
    if a.ndim != 1 or b.ndim != 1:
        # PyTorch's rule (torch.dot: 1-D only), not NumPy's (np.dot of matrices multiplies them)
        raise ValueError(
            f"dot needs two 1-D vectors, got {a.ndim}-D and {b.ndim}-D "
            "(as torch.dot; for matrices write a @ b)"
        )
    return _xp().dot(a, b)


register(
    Op(
        "dot",
        "DotBackward0",
        _dot_forward,
        lambda n, g: (
            chain(g, n.inputs[1]) if n.needs[0] else None,
            chain(g, n.inputs[0]) if n.needs[1] else None,
        ),
        lambda n, ts: add_tangents(
            None if ts[0] is None else call("dot", ts[0], n.inputs[1]),
            None if ts[1] is None else call("dot", n.inputs[0], ts[1]),
        ),
        arity=2,
        kind="product",
        printing=function("dot", latex="\\operatorname{dot}"),
    )
)


def broadcast_size(shapes, attrs) -> int:
    """How many numbers broadcasting ``shapes`` together gives (0 when they do not fit:
    the op itself then says why)."""
    try:
        return math.prod(backend.host.broadcast_shapes(*shapes))
    except ValueError:
        return 0


def _matmul_size(shapes, attrs) -> int:
    a, b = shapes
    if not a or not b:
        return 0
    a = a if len(a) > 1 else (1,) + tuple(a)
    b = b if len(b) > 1 else tuple(b) + (1,)
    return broadcast_size([a[:-2], b[:-2]], attrs) * a[-2] * b[-1]


def _matmul_forward(a, b):
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("both arguments to matmul need to be at least 1-D (use * for scalars)")
    return _xp().matmul(a, b)


def _matmul_node(n):
    da, db = len(n.shapes[0]), len(n.shapes[1])
    if da == 2 and db == 2:
        return "MmBackward0"
    if da == 2 and db == 1:
        return "MvBackward0"
    if da == 1 and db == 1:
        return "DotBackward0"
    if da == 1 and db == 2:
        return "SqueezeBackward4"
    return "UnsafeViewBackward0"


def _matmul_vjp(n, g):
    a, b = n.inputs
    sa, sb = n.shapes
    # Promote vectors to matrices, use the matrix rule, then restore the shapes.
    a2 = reshape(a, (1,) + sa) if len(sa) == 1 else a
    b2 = reshape(b, sb + (1,)) if len(sb) == 1 else b
    g2 = g
    if len(sa) == 1 and len(sb) == 1:
        g2 = reshape(g, (1, 1))
    elif len(sa) == 1:
        g2 = reshape(g, g.shape[:-1] + (1,) + g.shape[-1:])
    elif len(sb) == 1:
        g2 = reshape(g, g.shape + (1,))
    ga = gb = None
    if n.needs[0]:
        ga = _outer(g2, b2, True) if g2.shape[-1] == 1 else None
        if ga is None:
            ga = call("matmul", g2, call("mT", b2))
        ga = reshape(sum_to(ga, a2.shape), sa)
    if n.needs[1]:
        gb = _outer(a2, g2, False) if a2.shape[-2] == 1 else None
        if gb is None:
            gb = call("matmul", call("mT", a2), g2)
        gb = reshape(sum_to(gb, b2.shape), sb)
    return ga, gb


def _outer(x, y, left: bool):
    """``x @ mT(y)`` (left) or ``mT(x) @ y``, whose inner dimension is 1, when nothing is
    recorded: each entry is one product, and matmul's 0 + x*y (which makes a -0.0 product
    +0.0) is what multiply and then += 0 give, bit for bit, without a GEMM.  None: use
    matmul (a graph is being recorded, or the arrays are not NumPy's)."""
    xp = backend.xp
    if is_grad_enabled() or xp is not backend.host or not (_is_tensor(x) and _is_tensor(y)):
        return None
    a, b = x.data, y.data
    if left:
        b = xp.swapaxes(b, -1, -2)
    else:
        a = xp.swapaxes(a, -1, -2)
    token = backend.quiet_enter()
    try:
        r = xp.multiply(a, b)
        # Adding 0 changes only a -0.0 entry.  Factors without a zero whose smallest
        # magnitudes multiply to a normal number make no zero product at all (not even by
        # underflow): the pass over the product is then skipped.  nan fails the test.
        if not xp.abs(a).min(initial=xp.inf) * xp.abs(b).min(initial=xp.inf) >= _TINY:
            r += r.dtype.type(0)
    finally:
        backend.quiet_exit(token)
    return Tensor._wrap(r)


_TINY = 1e-30  # far above the underflow threshold of float64 and float32 products


def _matmul_jvp(n, ts):
    a, b = n.inputs
    ta, tb = ts
    return add_tangents(
        None if ta is None else call("matmul", ta, b), None if tb is None else call("matmul", a, tb)
    )


register(
    Op(
        "matmul",
        _matmul_node,
        _matmul_forward,
        _matmul_vjp,
        _matmul_jvp,
        arity=2,
        kind="product",
        printing=infix("@", PRODUCT, (PRODUCT, POWER), " ", names=("matmul",)),
        size=_matmul_size,
    )
)


__all__ = [
    "OPS",
    "Op",
    "Printing",
    "register",
    "chain",
    "sum_to",
    "broadcast_to",
    "where",
    "call",
    "as_tensor",
    "apply",
]


# ---------------------------------------------------------------------------
# The functions of the expression language, and how a call maps onto ops.
#   unary:   f(x)                    -> op
#   binary:  f(a, b)                 -> op
#   reduce:  f(x), f(x, axis), f(x, axis=k)  (max/min: axis by keyword only;
#            with two positional arguments they are the elementwise binary op)
# ---------------------------------------------------------------------------


class Function:
    __slots__ = (
        "name",
        "unary",
        "binary",
        "ternary",
        "reduce",
        "with_params",
        "positional_axis",
        "doc",
    )

    def __init__(
        self,
        name,
        *,
        unary=None,
        binary=None,
        ternary=None,
        reduce=None,
        with_params=None,
        positional_axis=True,
        doc="",
    ):
        self.name = name
        self.unary = unary
        self.binary = binary
        self.ternary = ternary
        self.reduce = reduce
        self.with_params = with_params  # an op with Params: parsed by them alone
        self.positional_axis = positional_axis
        self.doc = doc

    def arities(self) -> str:
        if self.with_params:
            op = OPS[self.with_params]
            least = (op.arity or 1) + sum(p.required for p in op.params)
            most = (op.arity or 1) + len(op.params)
            return str(least) if least == most else f"{least} to {most}"
        counts = []
        if self.unary or self.reduce or self.name == "reshape":
            counts.append(1 if self.name != "reshape" else 2)
        if self.binary or (self.reduce and self.positional_axis):
            counts.append(2)
        if self.ternary:
            counts.append(3)
        return " or ".join(str(c) for c in sorted(set(counts)))


def language_functions() -> dict[str, Function]:
    """The functions of the language, from the ``names`` each op's :class:`Printing` gives.

    A name's role follows from the op: a reduction is ``reduce``, otherwise the arity
    picks ``unary``/``binary``/``ternary``; an op with attribute arguments (``reshape``)
    is parsed by its own rule.  Two ops may share a name in different roles only
    (``max``: the reduction ``amax`` and the binary ``maximum``).
    """
    table: dict[str, Function] = {}
    for op in OPS.values():
        if op.internal:
            continue
        if op.params:
            role = "with_params"
        elif op.kind == "reduction":
            role = "reduce"
        elif op.printing.attr_args:
            role = None
        else:
            role = {1: "unary", 2: "binary", 3: "ternary"}.get(op.arity)
        for name in op.printing.names:
            fn = table.setdefault(name, Function(name))
            if role is None:
                continue
            if getattr(fn, role) is not None:
                raise ValueError(f"{name}(): both {getattr(fn, role)} and {op.name} are its {role}")
            setattr(fn, role, op.name)
    for fn in table.values():
        if fn.with_params and any((fn.unary, fn.binary, fn.ternary, fn.reduce)):
            raise ValueError(f"{fn.name}(): an op with params cannot share its name")
        # max(x, 1) is the binary op, so such a reduction takes its axis by keyword only.
        fn.positional_axis = not (fn.reduce and fn.binary)
    return table


# ---------------------------------------------------------------------------
# The table, made once from the declarations above
# ---------------------------------------------------------------------------


def op_table(declared) -> dict[str, Op]:
    """The op table, name -> :class:`Op`, from the declared ops (each with all its facts).

    A name declared twice is an error.  It makes a new dict, and completes what follows
    from an op's kind (the size of a broadcast, a reduction's check of its axis).
    """
    table: dict[str, Op] = {}
    for op in declared:
        if op.name in table:
            raise ValueError(f"op {op.name!r} is declared twice")
        table[op.name] = op
    for op in table.values():
        if op.size is None and op.kind in ("elementwise", "comparison") and op.arity != 1:
            op.size = broadcast_size
        if op.kind == "reduction":
            op.forward = _axis_checked(op.forward, (op.printing.names or (op.name,))[0])
    return table


def _axis_checked(forward, name: str):
    """A reduction's forward that refuses an axis of a number (NumPy takes axis 0 of a 0-d
    array as no axis at all, var and std do not; one rule for all: a shape error)."""

    def checked(a, axis=None, keepdims=False):
        if axis is not None and a.ndim == 0:
            raise ValueError(
                f"{name}() of a number has no axis {axis}: a number has no axes (leave the "
                "axis out)"
            )
        return forward(a, axis=axis, keepdims=keepdims)

    checked.__wrapped__ = forward  # type: ignore[attr-defined]
    return checked


# The table is filled once, by core/optable.py, after this module and the modules of more
# functions (core/ops_arrays.py) have declared their ops: ``tensor.OPS`` is the dict every
# layer reads (Tensor methods find their ops there without importing this module), and
# FUNCTIONS the functions of the language, made from it.
FUNCTIONS: dict[str, Function] = {}
