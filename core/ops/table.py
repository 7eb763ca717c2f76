"""The op table's machinery: :class:`Op` (an entry), :class:`Param`, :class:`Printing`,
:func:`register`, :func:`op_table` and the functions of the language made from the table.

The entries themselves are declared by the modules of the families of ops beside this one
(:mod:`.elementwise`, :mod:`.shape`, :mod:`.reductions`, :mod:`.products`, :mod:`.arrays`,
:mod:`.linalg`), with the rule helpers of :mod:`.rules`; the package's ``__init__`` imports
them all, then makes the table once.

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
``on_complex``
    what it does with complex arguments (:data:`ON_COMPLEX`): none, holomorphic, a real
    function of them, or rules of its own (complex-linear, or linear over the reals only).
``copies``
    each element of its result is a copy of one element of its arguments or 0 (indexing,
    reshape, transpose, concatenate, tile, triu...): the sparsity pattern follows the copies
    (core/sparsity.py probes the forward with element numbers).
``no_derivative``
    the arguments (not differentiable) whose derivative exists but is not implemented, as
    PyTorch and JAX leave it (gammainc's a): a derivative asked along one is an error
    (:func:`~..program.resolve_wrt`), not a zero.
``total``, ``nonneg``, ``piecewise``, ``piecewise_linear``, ``spreads_nonfinite``
    what the simplifier, Taylor mode and the non-finite checks know of its values (see
    :class:`Op`); tests/test_op_table.py checks each against the op's values.

Every fact about an op is on its entry: nothing keyed by its name stands apart.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from .. import backend
from ..tensor import OPS

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

# ---------------------------------------------------------------------------
# How generated code writes an op (core/codegen)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Code:
    """How ``codegen`` writes the op in each target's language: ``numpy``, ``torch``,
    ``jax`` (Python) and ``c`` (C99 with libm, one number: the C generator loops it over a
    fixed-shape array).  Each is a template or a function, or None where the target has
    no spelling (the generator then names the op as unsupported there).

    A template fills ``{0}``, ``{1}``... with the arguments' code, ``{args}`` with all of
    them, comma-separated, ``{xp}`` with the target's array module (``np``, ``torch``,
    ``jnp``), ``{sp}`` with its special functions (``scipy.special``, ``torch.special``,
    ``jax.scipy.special``), ``{dtype}`` with its dtype (``np.float64``; C's ``double``) and
    ``{name}`` with the attribute ``name`` as Python writes it (``(-1,)``, ``None``).  A
    function ``(args, node, target) -> text`` is for what a template cannot say (the
    exponent of pow, an axis that depends on the shape): ``node`` is the statement
    (core/codegen/trace.py: its ``attrs``, its ``args``' values at the traced point, its own
    ``value``)."""

    numpy: object = None
    torch: object = None
    jax: object = None
    c: object = None
    #: why the op has no generated code in any target (its derivative is not one formula
    #: for every point: sort's permutation), where that is so
    refused: str | None = None
    #: the argument positions where its PyTorch spelling takes a Python number (pow's,
    #: where's values); a template of operators (``{0} * {1}``) takes them everywhere, and
    #: elsewhere a number is made a tensor once
    numbers: tuple[int, ...] = ()

    def spelling(self, target: str):
        return getattr(self, target)

    def refusal(self, target: str) -> str | None:
        """Why ``target`` has no code for the op: ``refused`` (every target's), or the
        target's own :class:`Refused`; None where it has a spelling (or none declared)."""
        how = getattr(self, target)
        return self.refused or (str(how) if isinstance(how, Refused) else None)


class Refused(str):
    """A target's spelling in :class:`Code` that is a refusal, with the reason: the other
    targets write the op and this one cannot (the FFT in C: libm has none)."""

    __slots__ = ()


_SAME = object()  # a target of code() written as the others are


def code(array=None, *, numpy=_SAME, torch=_SAME, jax=_SAME, c=None, numbers=()) -> Code:
    """The :class:`Code` written ``array`` in NumPy, PyTorch and JAX alike (``{xp}``),
    unless a target is given its own (None: no spelling there)."""

    def pick(given):
        return array if given is _SAME else given

    return Code(pick(numpy), pick(torch), pick(jax), c, numbers=tuple(numbers))


def ufunc_code(name: str, c: object = "", torch: str | None = None) -> Code:
    """The :class:`Code` of NumPy's ufunc ``name``: ``np.name``, ``torch.name`` (or
    ``torch``), ``jnp.name`` and libm's function of the same name (or ``c``; None: none)."""
    return code(
        f"{{xp}}.{name}({{0}})",
        torch=f"torch.{torch or name}({{0}})",
        c=f"{name}({{0}})" if c == "" else c,
    )


REQUIRED = object()  # a Param without a default


@dataclass(frozen=True)
class Param:
    """An attribute argument of a function of the language: ``cumsum(x, axis=0)``,
    ``triu(A, k=1)``, ``roll(x, 2)``.  After the op's array arguments come its params, by
    position or by keyword, each a constant the parser checks by ``kind``:

    ``"int"``   a whole number (``k``, ``shift``);
    ``"count"`` a whole number >= 0 (``repeats``);
    ``"counts"`` a count or a list of counts, one per axis (tile's ``reps``);
    ``"axis"``  one axis, within an array's 64 dimensions (-64 to 63);
    ``"axes"``  an axis or a list of axes (a tuple);
    ``"flag"``  0 or 1, a bool;

    or a :class:`ParsedParam`, which reads its own value (the FFT's lengths and norm,
    convolve's mode).

    A param with a default prints only where it differs from it, as a keyword
    (``cumsum(x, axis=1)``); a required one prints by position.
    """

    name: str
    kind: str
    default: object = REQUIRED

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True)
class ParsedParam(Param):
    """A :class:`Param` that reads its own value: the grammar hands ``parse`` the constant as
    written (a number, a list or, where ``strings``, a string; None for a name written where
    a string was meant) and takes what it returns as the attribute; its ValueError says what
    the value must be (the FFT's ``n=`` and ``s=`` lengths, ``norm="ortho"``, fftfreq's
    ``d``).  ``kind`` then only names it."""

    parse: Callable | None = None
    strings: bool = False


@dataclass(eq=False, repr=False, slots=True)
class Op:
    """An entry of the table: one op and every fact about it (the module's docstring lists
    the rules; these are the facts the evaluators and the checks read).

    ``batching``
        how core/batch.py evaluates the op for many rows at once when its kind does not say
        (elementwise ops broadcast, reductions shift their axes): ``("axes",)`` its
        "axis"/"axes" params move past the batch axis (None: row by row); ``("trailing",
        k)`` it works on its operands' last k axes, as NumPy's linalg does, so a leading batch
        axis passes through (rows of rank >= k; k may be a function of the node's attrs:
        tile's counts); ``("rows",)`` none on purpose (diag of a
        vector): a graph using it is evaluated row by row, exactly, just slower.  None: its
        kind says (elementwise, reductions), or core/batch.py has a rule by name.
    ``arrays``
        its vjp also takes a host array as the cotangent and then works on the saved
        arrays, returning arrays (the rules' array form, core/ops/rules.py): backward without
        ``create_graph`` hands it its cotangent so, with no Tensor made between two such ops.
    ``params``
        the attribute arguments of its function of the language (see :class:`Param`): an op
        with params is parsed by them, its array arguments first (arity None: one list).
    ``kink(input arrays, output array, attrs)``
        a warning when the derivative is taken where it is undefined and a convention was
        used (core/ops/rules.py, "Conventions at kinks").
    ``on_complex``
        what it does with complex arguments (:data:`ON_COMPLEX`): none, holomorphic, a real
        function of them, or rules of its own (complex-linear, or linear over the reals only).
    ``saves``
        its vjp reads the node's inputs or output, which a backward without retain_graph
        then frees (a second backward through it is PyTorch's error); an op whose vjp reads
        neither saves nothing, so it can be backpropagated through twice, as in PyTorch
        (tests/test_ops_gradcheck.py checks the flag against what the vjp reads).
    ``selects``
        its partials are selectors (each 0 or 1, 0.5 at a tie): where one is 0 the argument
        takes no gradient at all, an inf or nan cotangent or tangent included, as PyTorch's
        ``where``/``masked_fill`` in relu, clamp and maximum (``sqrt(relu(x))`` at x < 0 has
        gradient 0, not 0 * inf = nan); :func:`~.rules.chain` reads it.
    ``total``, ``nonneg``, ``piecewise``, ``piecewise_linear``, ``spreads_nonfinite``
        what the simplifier, Taylor mode and the non-finite checks know of the values (of an
        elementwise op; tests/test_op_table.py checks each against the op's values):

        * ``total``: a number at every finite input (tan's poles are never hit exactly): not
          nan or infinite on a region, as log, sqrt, gamma are;
        * ``nonneg``: never negative (nan aside): any power of it is a number;
        * ``piecewise``: constant on whole regions, or making a sum that is (x - abs(x),
          atan2(0, x), hypot(x, 0) = abs(x)): it may vanish on a region;
        * ``piecewise_linear``: linear on each piece, with partials that are constant there
          (abs, max, floor): Taylor mode takes the piece the point is on (implies piecewise);
        * ``spreads_nonfinite``: the argument positions whose inf or nan always makes some
          element of the result inf or nan (a finite result vouches for them).
    ``linear``
        where its second derivative is zero whatever the values (Taylor mode's overflow
        guard, the Hessian's sparsity pattern: :meth:`linear_in`): True, linear in its
        arguments together (add, sum, reshape, where); "each", in each argument alone, so
        only products of two arguments are left (mul, matmul); a tuple, the argument
        positions it is linear in (div: (0,)); False, none.  ``piecewise_linear``,
        ``copies`` and ``zero_grad`` ops are linear too.
    ``fiber``
        an op along ``axis`` (None: the flattened array) whose result element depends on
        its fiber's elements: "prefix", those up to it (cumsum, cumprod); "whole", all of
        them (sort, softmax).  The sparsity pattern reads it (else: every input element).
    ``code``
        how generated code writes it, per target (a :class:`Code`; core/codegen): the
        backward pass is the op table's own rules traced, so an op needs only this.
    ``size(input shapes, attrs)``
        how many numbers the result holds, for an op whose result can be larger than its
        inputs (checked against core.limits before it runs; elementwise ops of several
        arguments get the broadcast's size from :func:`op_table`).
    """

    name: str
    node: Any  # the grad_fn name, a function of the Node choosing it, or None
    forward: Callable
    vjp: Callable | None = None
    jvp: Callable | None = None
    _: KW_ONLY
    arity: int | None = 1
    saves: bool = True
    differentiable: tuple | None = None
    kind: str = "elementwise"
    deriv: tuple | None = None
    zero_grad: bool = False
    kink: Callable | None = None
    selects: bool = False
    total: bool = False
    nonneg: bool = False
    piecewise: bool = False
    piecewise_linear: bool = False
    spreads_nonfinite: tuple[int, ...] = ()
    printing: Printing = CALL
    internal: bool = False
    size: Callable | None = None
    params: tuple = ()
    batching: tuple | None = None
    arrays: bool = False
    code: Code | None = None
    on_complex: str | None = None
    no_derivative: tuple[int, ...] = ()
    copies: bool = False
    linear: bool | str | tuple = False
    fiber: str | None = None
    #: any argument takes a gradient (made from ``vjp`` and ``differentiable``)
    differentiable_any: bool = field(init=False)

    def __post_init__(self):
        name, arity = self.name, self.arity
        if self.on_complex not in ON_COMPLEX:
            raise ValueError(f"{name}: on_complex={self.on_complex!r} is not one of {ON_COMPLEX}")
        self.params = tuple(self.params)
        if any(a.required > b.required for a, b in zip(self.params[1:], self.params)):
            raise ValueError(f"{name}: a required param follows an optional one")
        if self.differentiable is None:
            self.differentiable = (True,) * (arity or 0)
        self.differentiable = tuple(self.differentiable)
        # Variadic ops (arity None) have differentiable == (): every input is differentiable.
        self.differentiable_any = self.vjp is not None and (
            any(self.differentiable) or arity is None
        )
        self.piecewise = self.piecewise or self.piecewise_linear
        self.spreads_nonfinite = tuple(self.spreads_nonfinite)
        self.no_derivative = tuple(self.no_derivative)
        if self.fiber not in (None, "prefix", "whole"):
            raise ValueError(f"{name}: fiber={self.fiber!r} is not None, 'prefix' or 'whole'")
        if not (isinstance(self.linear, (bool, tuple)) or self.linear == "each"):
            raise ValueError(f"{name}: linear={self.linear!r} is not a bool, 'each' or a tuple")

    def linear_in(self, live) -> bool:
        """Linear in the arguments ``live`` says vary (the others held constant): its
        second derivative along them is zero everywhere (see ``linear``)."""
        if self.linear is True or self.piecewise_linear or self.copies or self.zero_grad:
            return True
        if self.linear == "each":
            return sum(1 for f in live if f) <= 1
        if self.linear:
            return all(i in self.linear for i, f in enumerate(live) if f)
        return False

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


def operators(op: str) -> tuple:
    """A stand-in's ``__OP__`` and ``__rOP__`` (``self OP other``, ``other OP self``), each
    made by the stand-in's ``_binary(op, a, b)``: the operators the op table's rules use,
    on the symbolic differentiator's ``Sym`` and codegen's ``Traced``."""

    def method(self, other):
        return self._binary(op, self, other)

    def reflected(self, other):
        return self._binary(op, other, self)

    return method, reflected


#: what an op does with complex arguments (its ``on_complex`` fact): None, it takes real
#: numbers only (relu, floor, maximum: a complex argument is an error); "holomorphic", it is
#: complex-differentiable and its derivative is f'(z) (reverse mode multiplies by its
#: conjugate, PyTorch's convention); "real", a real-valued function of a complex argument
#: (abs, angle, real, imag), its derivative declared as PyTorch's gradient direction
#: (abs: sgn(z)); "rules", the op's own rules handle complex values (sum, reshape, matmul:
#: linear maps and their adjoints, holomorphic); "real_linear", its own rules, linear over the
#: reals but not holomorphic (conj, irfft)
ON_COMPLEX = (None, "holomorphic", "real", "rules", "real_linear")
#: the on_complex facts of a holomorphic op (f'(z) exists: what a holomorphic gradient needs)
HOLOMORPHIC = ("holomorphic", "rules")


# The declarations, in order: ``register(Op(...))`` adds one (in the modules of the families
# of ops), :func:`op_table` makes the table of them (once, in the package's __init__).
_DECLARED: list[Op] = []


def copying(name: str, node, forward, vjp, jvp, **facts) -> Op:
    """The entry of an op whose result's elements are copies of its arguments' (or zeros):
    reshape, transpose, indexing, concatenate, tile, triu...  They share their facts: kind
    "shape", nothing saved (``saves=True`` where the rules read the inputs), complex-linear
    rules (``on_complex="rules"``), ``copies`` (the sparsity pattern probes the forward on
    element numbers) and ``linear``."""
    shared = {
        "saves": False,
        "kind": "shape",
        "on_complex": "rules",
        "copies": True,
        "linear": True,
    }
    return Op(name, node, forward, vjp, jvp, **{**shared, **facts})


def register(op: Op) -> Op:
    """Declare ``op``: an entry of the table :func:`op_table` makes of the declarations."""
    _DECLARED.append(op)
    return op


def broadcast_size(shapes, attrs) -> int:
    """How many numbers broadcasting ``shapes`` together gives (0 when they do not fit:
    the op itself then says why)."""
    try:
        return math.prod(backend.host.broadcast_shapes(*shapes))
    except ValueError:
        return 0


# ---------------------------------------------------------------------------
# The functions of the expression language, and how a call maps onto ops.
#   unary:   f(x)                    -> op
#   binary:  f(a, b)                 -> op
#   reduce:  f(x), f(x, axis), f(x, axis=k)  (max/min: axis by keyword only;
#            with two positional arguments they are the elementwise binary op)
# ---------------------------------------------------------------------------


@dataclass(eq=False, repr=False, slots=True)
class Function:
    name: str
    _: KW_ONLY
    unary: str | None = None
    binary: str | None = None
    ternary: str | None = None
    reduce: str | None = None
    with_params: str | None = None  # an op with Params: parsed by them alone
    positional_axis: bool = True
    doc: str = ""

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
# The table, made once from the declarations
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
    array as no axis at all, var and std do not; one rule for all: a shape error).  A forward
    that checks already is returned as it is: making the table again wraps nothing twice."""
    if getattr(forward, "checks_axis", False):
        return forward

    def checked(a, axis=None, keepdims=False):
        if axis is not None and a.ndim == 0:
            raise ValueError(
                f"{name}() of a number has no axis {axis}: a number has no axes (leave the "
                "axis out)"
            )
        return forward(a, axis=axis, keepdims=keepdims)

    checked.__wrapped__ = forward  # type: ignore[attr-defined]
    checked.checks_axis = True  # type: ignore[attr-defined]
    return checked


# The table is filled once, by the package's __init__, after the modules of the families of
# ops (elementwise, shape, reductions, products, arrays, linalg) have declared their ops:
# ``tensor.OPS`` is the dict every layer reads (Tensor methods find their ops there without
# importing this package), and FUNCTIONS the functions of the language, made from it.
FUNCTIONS: dict[str, Function] = {}
