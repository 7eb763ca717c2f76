"""explain's array walk: the chain rule as vector-Jacobian products (see :mod:`.explain`
for the layout): each edge's rule in words from the op's ``kind``, its formula traced from
the op's own ``vjp``, and the engine's numbers."""

from __future__ import annotations

import math

from . import backend
from .autograd import enable_grad
from .autograd import grad as engine_grad
from .errors import AutogradCliError, NonScalarOutputError
from .explain_steps import (
    GRAD,
    Explanation,
    _backward_order,
    _shallow,
    _unique,
    _walk_facts,
    format_value,
)
from .ops import POWER, PRODUCT, SUM, RuleContext
from .printing import to_text
from .program import Expr, Program
from .recording import derivative_warnings, evaluate
from .symbolic import Algebra, Builder, UnsupportedDiffError, local_vjp
from .tensor import OPS, Tensor, no_grad

# ---------------------------------------------------------------------------
# The array walk: the chain rule as vector-Jacobian products
# ---------------------------------------------------------------------------

MAX_RULE = 160  # a traced rule longer than this is written as "vjp of NAME applied to g"


def _host(t: Tensor):
    """A tensor's value for the explanation: a float (complex) for a 0-d one, else a host
    array."""
    a = backend.to_numpy(t.data)
    if a.ndim:
        return a
    return complex(a) if a.dtype.kind == "c" else float(a)


def explain_arrays(
    program: Program, values: dict, wanted: list, max_steps: int | None, order: list
) -> Explanation:
    """The chain rule over arrays: each node's value, each edge's vector-Jacobian product
    (the op table's vjp, applied to the node's gradient ``grad_n``) with its rule in words
    and as a formula, the sums where a node has several users, and the gradient.

    The gradient of every node is the engine's own (one ``grad`` call asked for all of
    them), so the numbers are ``grad``'s; each edge's share is the op's vjp at the point.
    """
    output = program.output
    with enable_grad():
        ev = evaluate(program, values, requires_grad=wanted)
    tensors = ev.by_node
    out = ev.output
    if out.size != 1:
        raise _non_scalar(list(out.shape))
    depends, variable, names, auto = _walk_facts(program, order, wanted)
    out_name = names.get(id(output), "y")

    adjoint = _adjoints(out, order, depends, tensors)

    cap = max_steps or math.inf
    elided = {"define": 0, "local": 0, "accumulate": 0}
    steps = _define_steps(order, names, auto, tensors, cap, elided)
    users = _users(order, depends)
    terms: dict[int, list] = {}  # node -> what its users passed back (the first `cap`)
    counted: dict[int, int] = {}  # node -> how many users passed it a gradient
    listed = accumulated = 0
    for node in _backward_order(output, order):
        if not depends[id(node)]:
            continue
        if id(node) in counted and users.get(id(node), 0) > 1:
            if accumulated >= cap:
                elided["accumulate"] += 1
            else:
                accumulated += 1
                more = counted[id(node)] - len(terms[id(node)])
                total = adjoint.get(id(node))
                steps.append(
                    _accumulate_step(names[id(node)], out_name, terms[id(node)], more, total)
                )
            terms.pop(id(node), None)
        g = adjoint.get(id(node))
        if node.op in ("const", "var") or g is None:
            continue
        op = OPS[node.op]
        flags = op.flags(len(node.args))
        needs = tuple(bool(f and depends[id(a)]) for a, f in zip(node.args, flags))
        for child, share in _shares(node, op, needs, tensors, g):
            several = users.get(id(child), 0) > 1
            if several:
                counted[id(child)] = counted.get(id(child), 0) + 1
                kept = terms.setdefault(id(child), [])
                if len(kept) < cap:
                    kept.append({"via": names[id(node)], "value": _host(share)})
            if listed >= cap:
                elided["local"] += 1
                continue
            listed += 1
            steps.append(_local_step(node, child, names, tensors, needs, share, several))

    gradient = _gradient(wanted, order, ev, adjoint)
    shapes = {name: list(t.shape) for name, t in ev.leaves.items()}
    shapes.setdefault(out_name, list(out.shape))
    return Explanation(
        program.source,
        out_name,
        wanted,
        {name: _host(t) for name, t in ev.leaves.items()},
        out.item(),
        steps,
        gradient,
        {},
        {kind: n for kind, n in elided.items() if n},
        True,
        shapes,
        ev.warnings + derivative_warnings(output, ev) + _complex_note(ev),
    )


#: how the rules shown read on complex numbers (the traced formulas are the derivatives)
COMPLEX_NOTE = (
    "complex values: the gradient is PyTorch's, dy/dRe z + i dy/dIm z: a holomorphic "
    "function's local derivative d enters each product as conj(d); those of abs, angle, real "
    "and imag are the gradient's direction (sign(z) = z/|z| for abs); a real variable keeps "
    "the real part of its gradient (the numbers shown are so computed)"
)


def _complex_note(ev) -> list:
    return [COMPLEX_NOTE] if any(t.is_complex() for t in ev.by_node.values()) else []


def _non_scalar(shape: list) -> NonScalarOutputError:
    return NonScalarOutputError(
        "explain walks the chain rule back from a scalar output (a loss), but this output "
        f"has shape {shape}: explain one number of it, such as "
        'explain "sum(...)" or explain "(...)[0]"',
        shape=shape,
    )


def _adjoints(out: Tensor, order: list, depends: dict, tensors: dict) -> dict:
    """Every node's gradient, by the engine: one reverse sweep, asked for all of them."""
    targets = [n for n in order if depends[id(n)] and tensors[id(n)].requires_grad]
    if not (out.requires_grad and targets):
        return {}
    got = engine_grad(out, [tensors[id(n)] for n in targets], allow_unused=True)
    return {id(n): g for n, g in zip(targets, got) if g is not None}


def _local_step(node, child, names, tensors, needs, share, several: bool) -> dict:
    """One edge: the gradient ``node`` passes ``child``, its rule in words and as a
    formula (``+=`` where the child has several users), and its value."""
    rule, local_words, local, vjp = _rule(node, child, names, tensors, needs)
    return {
        "kind": "local",
        "of": names[id(node)],
        "wrt": names[id(child)],
        "node": f"{names[id(node)]} = {to_text(_shallow(node, names))}",
        "op": OPS[node.op].name,
        "rule": rule,
        **({"local": local_words, "expr": local} if local is not None else {}),
        "vjp": f"{GRAD}{names[id(child)]} {'+=' if several else '='} {vjp}",
        "value": _host(share),
        "shape": list(tensors[id(child)].shape),
    }


def _define_steps(order, names: dict, auto: set, tensors: dict, cap, elided: dict) -> list:
    """The forward steps: each named node's value (the first ``cap``; the rest counted)."""
    steps: list[dict] = []
    for node in order:
        if node.op in ("const", "var") or id(node) not in names:
            continue
        if len(steps) >= cap:
            elided["define"] += 1
            continue
        t = tensors[id(node)]
        steps.append(
            {
                "kind": "define",
                "name": names[id(node)],
                "expr": to_text(_shallow(node, names)),
                "value": _host(t),
                "auto": id(node) in auto,
                "shape": list(t.shape),
            }
        )
    return steps


def _users(order, depends: dict) -> dict:
    """How many nodes pass each node a gradient: one with several gets their sum."""
    users: dict[int, int] = {}
    for node in order:
        if node.op in ("const", "var") or not depends[id(node)]:
            continue
        flags = OPS[node.op].flags(len(node.args))
        for a in _unique([a for a, f in zip(node.args, flags) if f and depends[id(a)]]):
            users[id(a)] = users.get(id(a), 0) + 1
    return users


def _shares(node: Expr, op, needs: tuple, tensors: dict, g) -> list:
    """(child, the gradient ``node`` passes it): the op's vjp at the point, the parts for a
    child that stands in several argument places summed."""
    ins = tuple(tensors[id(a)] for a in node.args)
    token = backend.quiet_enter()  # the engine runs every rule with these IEEE semantics
    try:
        with no_grad():
            grads = op.vjp(RuleContext(op, ins, tensors[id(node)], node.attrs, needs), g)
    finally:
        backend.quiet_exit(token)
    out = []
    for child in _unique([a for a, n in zip(node.args, needs) if n]):
        parts = [gi for a, gi, n in zip(node.args, grads, needs) if a is child and n]
        parts = [p for p in parts if p is not None]
        if parts:
            share = parts[0]
            for p in parts[1:]:
                share = share + p
            out.append((child, share))
    return out


def _accumulate_step(name: str, out_name: str, terms: list, more: int, total) -> dict:
    """The sum of what a node's users passed back: ``grad_c = grad_c from a + ...``."""
    formula = f"{GRAD}{name} = " + " + ".join(f"{GRAD}{name} from {t['via']}" for t in terms)
    return {
        "kind": "accumulate",
        "of": out_name,
        "wrt": name,
        "terms": terms,
        **({"more_terms": more} if more else {}),
        "formula": formula + (f" + ... ({more:,} more terms)" if more else ""),
        "value": _host(total) if total is not None else 0.0,
    }


def _gradient(wanted: list, order, ev, adjoint: dict) -> dict:
    """The gradient of each variable asked about (zeros where the output does not reach it),
    the engine's numbers."""
    gradient: dict = {}
    var_nodes = {n.name: n for n in order if n.op == "var"}
    for name in wanted:
        leaf = ev.leaves[name]
        node = var_nodes.get(name)
        g = adjoint.get(id(node)) if node is not None else None
        if g is None:
            a = backend.host.zeros(leaf.shape, dtype=backend.to_numpy(leaf.data).dtype)
        else:
            a = backend.to_numpy(g.data).reshape(leaf.shape)
            if a.dtype.kind == "c" and leaf.data.dtype.kind != "c":
                a = a.real  # a real variable's gradient is real (autograd._in_dtype_of)
        gradient[name] = a if a.ndim else (complex(a) if a.dtype.kind == "c" else float(a))
    return gradient


def _spelled(op) -> str:
    """How the language writes ``op``: its function's name, its operator, or what it is."""
    p = op.printing
    if p.names:
        return p.names[0]
    if p.call:
        return p.call
    if p.form == "subscript":
        return "indexing"
    if p.form == "array":
        return "an array literal"
    return p.symbol.strip() if p.symbol else op.name


_ELEMENTWISE = ("elementwise", "comparison", "constant")
_ELEMENTWISE_WORDS = "elementwise: the gradient times each element's local derivative"


def _rule(node: Expr, child: Expr, names: dict, tensors: dict, needs: tuple) -> tuple:
    """The edge node -> child in words: (the node's rule; for an elementwise op the local
    derivative in words and its expression, else None and None; the right-hand side of
    the vector-Jacobian product).

    What is said comes from the op's entry in the op table: its ``kind`` gives the words
    and its ``vjp`` the formula (symbolically for an elementwise op, by the same rule as
    the scalar walk; traced on placeholders for any other op, see :class:`_Sym`)."""
    op = OPS[node.op]
    p, c = names[id(node)], names[id(child)]
    g = GRAD + p
    shape = tuple(tensors[id(child)].shape)
    broadcast = shape != tuple(tensors[id(node)].shape)
    if op.kind in _ELEMENTWISE:
        local = _elementwise_local(node, child, names, needs)
        if local is not None:
            factor = local if _atomic(local) else f"({local})"
            rhs = g if local == "1" else f"-{g}" if local == "-1" else f"{g}*{factor}"
            words = f"d{p}/d{c} = {local}"
            if broadcast:
                rhs = f"sum({rhs})" if shape == () else f"sum_to({rhs}, {list(shape)})"
                words += f", summed over the axes broadcasting added to {c}"
            return _ELEMENTWISE_WORDS, words, local, rhs
    rhs, used = _traced_vjp(node, child, names, tensors, needs)
    copies = rhs is not None and not used - {"leaf", "broadcast_to", "reshape"}
    if rhs is None:
        rhs = f"vjp of {op.name} applied to {g}"
    spelled = _spelled(op)
    if op.kind == "reduction":
        axis = node.attrs.get("axis")
        over = "every element" if axis is None else f"axis {_attr_text(axis)}"
        words = (
            f"{spelled} reduces over {over}: each element of {c} feeds one element of {p}, "
            f"so {g} is copied back along the reduced axes"
        )
        if not copies:
            words += f" and multiplied by each element's partial d{p}/d{c}"
    elif op.kind == "product":
        words = f"{spelled} is linear in each argument: {g} is multiplied back by the other one"
    elif op.kind == "shape":
        back = f"{c}'s shape" if len(node.args) == 1 else "each argument's shape"
        words = f"{spelled} moves or combines elements: its vjp takes {g} back to {back}"
        if "scatter" in used:
            words += ", zero where nothing was taken (repeats add up)"
    elif op.kind in _ELEMENTWISE:
        words = _ELEMENTWISE_WORDS
    else:
        words = f"{spelled} ({op.kind}): its vector-Jacobian product"
    return words, None, None, rhs


def _atomic(text: str) -> bool:
    return text.replace("_", "").replace(".", "").isalnum()


def _attr_text(v) -> str:
    return str(list(v)) if isinstance(v, tuple) else str(v)


def _elementwise_local(node: Expr, child: Expr, names: dict, needs: tuple) -> str | None:
    """d node / d child of an elementwise op in terms of the names (the scalar walk's rule,
    from the op table's derivative); None where an argument has no symbolic form (an array
    literal)."""
    if any(a.op == "const" and isinstance(a.value, (list, tuple)) for a in node.args):
        return None  # symbolic rules take numbers: the traced rule writes the literal
    builder = Builder()
    one = builder.wrap(builder.const(1.0))
    args = tuple(Expr.var(names[id(a)]) if id(a) in names else a for a in node.args)
    try:
        sym = local_vjp(node, one, builder, inputs=args, out=Expr.var(names[id(node)]), needs=needs)
    except UnsupportedDiffError:
        return None
    parts = [s for a, s in zip(node.args, sym) if a is child and s is not None]
    if not parts:
        return None
    total = parts[0]
    for s in parts[1:]:
        total = builder.apply("add", (total, s))
    alg = Algebra()
    try:
        return to_text(alg.to_expr(alg.from_expr(total)))
    except UnsupportedDiffError:  # a constant operand no symbol writes (cumsum([1, 2]))
        return None


class _Sym:
    """A placeholder an op's vjp runs on to write its rule down: the tree of calls the rule
    makes, and the shape of each value (rules read shapes; the shape of a call is its
    forward's on zeros).  Python numbers among the arguments stay numbers."""

    __slots__ = ("op", "args", "attrs", "shape", "text")
    maybe_zero = True  # the rules' zero guards take the general branch

    def __init__(self, op: str, args: tuple, attrs: dict, shape: tuple, text: str = ""):
        self.op, self.args, self.attrs, self.shape, self.text = op, args, attrs, shape, text

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def _call(self, name: str, *args, **attrs):
        return _trace(name, args, attrs)

    def __add__(self, o):
        return _trace("add", (self, o), {})

    def __radd__(self, o):
        return _trace("add", (o, self), {})

    def __sub__(self, o):
        return _trace("sub", (self, o), {})

    def __rsub__(self, o):
        return _trace("sub", (o, self), {})

    def __mul__(self, o):
        return _trace("mul", (self, o), {})

    def __rmul__(self, o):
        return _trace("mul", (o, self), {})

    def __truediv__(self, o):
        return _trace("div", (self, o), {})

    def __rtruediv__(self, o):
        return _trace("div", (o, self), {})

    def __pow__(self, o):
        return _trace("pow", (self, o), {})

    def __rpow__(self, o):
        return _trace("pow", (o, self), {})

    def __matmul__(self, o):
        return _trace("matmul", (self, o), {})

    def __rmatmul__(self, o):
        return _trace("matmul", (o, self), {})

    def __neg__(self):
        return _trace("neg", (self,), {})

    def __pos__(self):
        return self

    def __getitem__(self, index):
        return _trace(
            "getitem", (self,), {"index": index if isinstance(index, tuple) else (index,)}
        )

    @property
    def T(self):
        return _trace("transpose", (self,), {"axes": None})

    @property
    def mT(self):
        return _trace("mT", (self,), {})


def _number(v, n) -> bool:
    return type(v) in (int, float) and v == n


def _trace(name: str, args: tuple, attrs: dict):
    """``name`` applied to placeholders: a :class:`_Sym` (x*1, x/1, x + 0 and a reshape
    to the same shape are left out, so the rule reads as written)."""
    if (
        name == "mul"
        and _number(args[1], 1)
        or name in ("div", "add", "sub")
        and (_number(args[1], 1 if name == "div" else 0))
    ):
        return args[0]
    if name in ("mul", "add") and _number(args[0], 1 if name == "mul" else 0):
        return args[1]
    if name in ("reshape", "broadcast_to", "sum_to") and tuple(attrs["shape"]) == args[0].shape:
        return args[0]
    xp = backend.host
    arrays = [xp.zeros(a.shape) if isinstance(a, _Sym) else a for a in args]
    with backend.using(device="cpu"), backend.quiet():
        shape = tuple(xp.shape(OPS[name].forward(*arrays, **attrs)))
    return _Sym(name, args, attrs, shape)


def _traced_vjp(node: Expr, child: Expr, names: dict, tensors: dict, needs: tuple) -> tuple:
    """The op's vjp for ``child`` as a formula of the names and the set of ops it uses, or
    (None, set()) where the rule does more than the placeholders can follow (it reads its
    operands' numbers) or reads too long."""
    op = OPS[node.op]
    ins = tuple(
        _Sym("leaf", (), {}, tuple(tensors[id(a)].shape), names.get(id(a)) or to_text(a))
        for a in node.args
    )
    shape = tuple(tensors[id(node)].shape)
    out = _Sym("leaf", (), {}, shape, names[id(node)])
    g = _Sym("leaf", (), {}, shape, GRAD + names[id(node)])
    try:
        with no_grad():
            grads = op.vjp(RuleContext(op, ins, out, node.attrs, needs), g)
        parts = [gi for a, gi, n in zip(node.args, grads, needs) if a is child and n]
        parts = [p for p in parts if p is not None]
        total = parts[0]
        for p in parts[1:]:
            total = _trace("add", (total, p), {})
        text = _sym_text(total)
    # What a rule the placeholders cannot follow raises (then the generic line is shown):
    # AttributeError or TypeError where it reads its operands' numbers (a placeholder has
    # none), ValueError or IndexError from NumPy on the zero stand-ins of the operands, and
    # the library's own errors from an op's check on them (a zero matrix is singular).
    except (AttributeError, TypeError, ValueError, IndexError, AutogradCliError):
        return None, set()
    if len(text) > MAX_RULE:
        return None, set()
    used, stack = set(), [total]
    while stack:
        v = stack.pop()
        if isinstance(v, _Sym):
            used.add(v.op)
            stack.extend(v.args)
    return text, used


#: how tightly this printer's infix arithmetic binds, by the grammar's level on the op's entry
#: (its Printing): a sum 1, a product 2, a power 4; a negation is 3 and ``ᵀ`` or an index 5
_RANK = {SUM: 1, PRODUCT: 2, POWER: 4}


def _infix(op: str) -> tuple[str, int] | None:
    """An arithmetic operator's symbol and rank, from its entry (None: not one)."""
    printing = OPS[op].printing
    if printing.form != "infix" or printing.level not in _RANK or op == "matmul":
        return None
    return printing.text_symbol, _RANK[printing.level]


def _sym_text(v, level: int = 0) -> str:
    """A traced rule as text: infix arithmetic, ``Aᵀ``, ``A @ B``, ``a ⊗ b`` (a column times a
    row), other calls as calls.  A reshape that NumPy's reading makes implicit is left out
    (leading axes of length 1, which broadcasting adds; a vector as matmul's row or column),
    so the text means what it says in NumPy's terms: ``reshape(g, [2, 1])`` stays."""
    if not isinstance(v, _Sym):
        return format_value(float(v)) if isinstance(v, (int, float)) else str(v)
    if v.op == "leaf":
        return v.text
    a, op = v.args, v.op
    infix = _infix(op)
    if infix is not None:
        symbol, own = infix
        left = _sym_text(a[0], own)
        right = _sym_text(a[1], own + 1)
        text = f"{left}{symbol}{right}"
        return f"({text})" if own < level else text
    if op == "neg":
        text = "-" + _sym_text(a[0], 3)
        return f"({text})" if level > 2 else text
    if op == "reshape" and (
        _strip_leading(a[0].shape) == _strip_leading(v.shape)  # broadcasting reads them alike
        or a[0].op == "matmul"  # and _squeezed(...) equal: the vectors matmul made matrices of
        and _squeezed(a[0].shape) == _squeezed(v.shape)
    ):
        return _sym_text(a[0], level)
    if op == "mT" or (op == "transpose" and v.attrs.get("axes") is None):
        return _sym_text(a[0], 5) + "ᵀ"
    if op == "matmul":
        left, right = a
        column, row = _vector_of(left, -1), _vector_of(right, -2)
        if column is not None and row is not None:  # an outer product (a number: a product)
            times = "*" if column.shape == () or row.shape == () else " ⊗ "
            text = f"{_sym_text(column, 3)}{times}{_sym_text(row, 3)}"
        else:  # matmul takes a vector on the left as a row, on the right as a column
            left = _vector_of(left, -2) or left
            right = _vector_of(right, -1) or right
            text = f"{_sym_text(left, 3)} @ {_sym_text(right, 3)}"
        return f"({text})" if level > 2 else text
    if op == "getitem":
        return _sym_text(a[0], 5) + _index_text(v.attrs["index"])
    if op == "scatter":
        at = _index_text(v.attrs["index"])
        return f"scatter({_sym_text(a[0])}, at {at}, into zeros {list(v.attrs['shape'])})"
    shown = [_sym_text(x) for x in a]
    shown += [
        f"{k}={list(x) if isinstance(x, tuple) else x}" if k != "shape" else str(list(x))
        for k, x in v.attrs.items()
        if x is not None
    ]
    return f"{_spelled(OPS[op]) if OPS[op].printing.names else op}({', '.join(shown)})"


def _squeezed(shape: tuple) -> tuple:
    return tuple(s for s in shape if s != 1)


def _strip_leading(shape: tuple) -> tuple:
    shape = tuple(shape)
    while shape and shape[0] == 1:
        shape = shape[1:]
    return shape


def _vector_of(v, axis: int):
    """``x`` where ``v`` is a number or vector ``x`` reshaped to a column (``axis`` -1: shape
    (n, 1)) or a row (-2: (1, n)), as matmul takes a vector by itself; else None."""
    if not isinstance(v, _Sym) or len(v.shape) != 2 or v.shape[axis] != 1:
        return None
    if v.op == "mT" or (v.op == "transpose" and v.attrs.get("axes") is None):
        # the transpose of a row is a column, and back
        return _vector_of(v.args[0], -1 if axis == -2 else -2)
    if v.op == "reshape" and len(v.args[0].shape) <= 1:
        return v.args[0]
    return None


def _index_text(index) -> str:
    """``[0, :]``: the index as the language writes it."""
    return to_text(Expr("getitem", (Expr.var("x"),), {"index": index}))[1:]
