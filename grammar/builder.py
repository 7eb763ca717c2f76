"""The graph builder: each rule of ``expr.lark`` has a callback here, run as the LALR parser
reduces the rule, which makes the rule's graph node from its children's.  Calls are built
by :mod:`.calls`; the values that are not nodes are in :mod:`.values`."""

from __future__ import annotations

import math

from ..core.errors import BadValueError, InputError, LimitError
from ..core.ops import OPS
from ..core.program import CONSTANTS, Expr, Program
from . import limits
from .calls import _index_array, _part_of, build_call
from .values import (
    _arrays,
    _Assignment,
    _binary,
    _Chain,
    _const_int,
    _describe,
    _expr,
    _Keyword,
    _list_shape,
    _position,
    _Slice,
    _String,
    _Tuple,
    _Unpack,
)

# A comparison's token names its op: "<=" builds le (the op table's spelling, read once).
_COMPARISONS = {op.printing.symbol: name for name, op in OPS.items() if op.kind == "comparison"}


class Builder:
    """Callbacks run by the LALR parser: each returns a graph node (an :class:`Expr`).

    A rule's callback is the method named by the rule's alias (else by the rule), called
    with the rule's kept children as arguments (Lark's ``v_args(inline=True)``)."""

    def __init__(self):
        self.reset("")

    def reset(self, source: str) -> None:
        self.source = source
        self.bindings: dict[str, Expr] = {}
        self.variables: dict[str, Expr] = {}
        self.statements: list = []
        # What is known of each array literal's shape before evaluation, by id(): the
        # literal itself (kept alive, so no id is reused), its leading dimensions, and
        # whether those are all of them (a literal of numbers) or only the first ones.
        self.literal_shapes: dict[int, tuple[Expr, tuple[int, ...], bool]] = {}

    # ---- atoms ----------------------------------------------------------------
    def number(self, tok):
        if tok[-1] in "jJ":  # an imaginary literal, as Python's 2j (nan/inf parts stay IEEE)
            return Expr.const(complex(0.0, float(tok[:-1])))
        value = float(tok)  # no length limit here: float() reads any number of digits
        if math.isinf(value) and not any(c in tok for c in ".eE"):
            # An integer literal past the largest float (about 1.8e308): Python refuses to
            # make it a float; 1e400 and 1.0e400 are IEEE's inf, written as such.
            digits = str(tok).lstrip("0")
            shown = digits if len(digits) <= 24 else f"{digits[:12]}...{digits[-6:]}"
            raise BadValueError(
                f"the integer {shown} ({len(digits):,} digits) at line {tok.line}, column "
                f"{tok.column} is too large for a float (the largest is about 1.8e308); "
                f"write 1e400 or inf for infinity",
                **_position(tok),
            )
        return Expr.const(value)

    def name(self, tok):
        name = str(tok)
        if name in self.bindings:
            return self.bindings[name]
        if name in CONSTANTS:
            return Expr.const(CONSTANTS[name])
        node = self.variables.get(name)
        if node is None:
            node = self.variables[name] = Expr.var(name)
        return node

    def known_shape(self, expr: Expr) -> tuple[tuple[int, ...], bool] | None:
        """What is known of ``expr``'s shape before evaluation: a number's ``()``, an array
        literal's leading dimensions (and whether they are all), or None (a variable, a
        call...: known only when evaluated)."""
        entry = self.literal_shapes.get(id(expr))
        if entry is not None:
            return entry[1], entry[2]
        if expr.is_const:
            return _list_shape(expr.value) if isinstance(expr.value, list) else ((), True)
        return None

    def array(self, bracket, elements=None):
        """``[a, b, ...]``: a constant when every element is one, else a stack.

        Rows whose shapes are known here must agree (a ragged literal is exit 2 with its
        position); a row known only when evaluated (a variable) may be a number, which
        broadcasts, as in ``[v, 1]``."""
        items = [] if elements is None else elements
        where = f"at line {bracket.line}, column {bracket.column}"
        known = [(i, s) for i, s in enumerate(map(self.known_shape, items)) if s is not None]

        def ragged(i: int, j: int) -> BadValueError:
            return BadValueError(
                f"ragged array literal {where}: element {i + 1} {_describe(*shapes[i])} but "
                f"element {j + 1} {_describe(*shapes[j])} (every row must have the same length)",
                **_position(bracket),
            )

        shapes = dict(known)
        longest = known[0][0] if known else -1  # the row with the most known dimensions
        for i, (shape, _) in known[1:]:
            prefix = shapes[longest][0]
            common = min(len(shape), len(prefix))
            if shape[:common] != prefix[:common]:
                raise ragged(i, longest)
            if len(shape) > len(prefix):
                longest = i
        for i, (shape, complete) in known:
            if complete and len(shape) < len(shapes[longest][0]):
                raise ragged(i, longest)  # a row of numbers beside a row of rows
        if len(known) == len(items):
            inner = shapes[longest][0] if items else ()
            shape, complete = (len(items),) + inner, all(c for _, (_, c) in known)
        else:
            shape, complete = (len(items),), False
        if len(shape) > limits.MAX_ARRAY_DEPTH:
            raise LimitError(
                f"the array literal {where} nests more than {limits.MAX_ARRAY_DEPTH} deep",
                **_position(bracket),
            )
        if math.prod(shape) > limits.MAX_ARRAY_ELEMENTS:
            raise LimitError.naming(
                "the array literal {where} has more than {limit} elements (give a large array "
                "as a variable's value instead: {values})",
                {"where": where, "limit": f"{limits.MAX_ARRAY_ELEMENTS:,}"},
                **_position(bracket),
            )
        if all(e.is_const for e in items):
            node = Expr.const([e.value for e in items])
        else:
            node = Expr("stack", tuple(items))
        self.literal_shapes[id(node)] = (node, shape, complete)
        return node

    def elements(self, *items):
        return [_expr(e) for e in items if e is not None]

    def string(self, tok):
        return _String(tok)

    # ---- operators ------------------------------------------------------------
    add = _binary("add")
    sub = _binary("sub")
    mul = _binary("mul")
    div = _binary("div")
    matmul = _binary("matmul")

    @_arrays
    def pow(self, a, _tok, b):
        return Expr("pow", (a, b))

    @_arrays
    def neg(self, a):
        if a.is_const and not isinstance(a.value, list):
            return Expr.const(-a.value)
        return Expr("neg", (a,))

    @_arrays
    def pos(self, a):
        return a

    @_arrays
    def chain_start(self, a, tok, b):
        return _Chain(Expr(_COMPARISONS[str(tok)], (a, b)), b)

    @_arrays
    def chain_next(self, chain, tok, b):
        # a < b < c is (a < b) and (b < c), as in Python: a product of 0/1 values, with b
        # one shared node (evaluated once); the text printer writes (a < b)*(b < c).
        step = Expr(_COMPARISONS[str(tok)], (chain.last, b))
        return _Chain(Expr("mul", (chain.value, step)), b)

    def compare(self, chain):
        return chain.value

    @_arrays
    def dot_t(self, a, _tok):
        return Expr("transpose", (a,), {"axes": None})

    # ---- indexing -------------------------------------------------------------
    def slice(self, start=None, stop=None):
        return _Slice(
            None if start is None else _expr(start), None if stop is None else _expr(stop)
        )

    def subscripts(self, *items):
        return [i if isinstance(i, _Slice) else _expr(i) for i in items]

    def index(self, target, items):
        if isinstance(target, _Tuple):
            return _part_of(target, items)
        index = []
        for item in items:
            if isinstance(item, _Slice):
                start = None if item.start is None else _const_int(item.start, "a slice bound")
                stop = None if item.stop is None else _const_int(item.stop, "a slice bound")
                index.append(slice(start, stop))
            elif item.is_const and isinstance(item.value, list):
                index.append(_index_array(item.value))  # x[[0, 2]]: NumPy's integer arrays
            else:
                index.append(_const_int(item, "an index"))
        return Expr("getitem", (target,), {"index": tuple(index)})

    # ---- calls ----------------------------------------------------------------
    def keyword(self, tok, expr):
        return _Keyword(tok, expr)

    def arguments(self, *items):
        return list(items)

    # call(tok, arguments=None): the callback is build_call itself (a frame less a call)
    call = staticmethod(build_call)

    # ---- statements -----------------------------------------------------------
    def assign(self, tok, expr):
        if isinstance(expr, _Tuple):
            n = len(expr.parts)
            raise InputError(
                f"{expr.name}() gives {n} arrays: unpack them into {n} names "
                f"({', '.join(f'{tok}{i}' for i in range(1, min(n, 3) + 1))}"
                f"{', ...' if n > 3 else ''} = {expr.name}(...)) or take one "
                f"({tok} = {expr.name}(...)[0])",
                **_position(expr.token),
            )
        expr = _expr(expr)
        self._bind(tok, expr)
        return _Assignment(str(tok), expr)

    def unpack(self, *items):
        tokens, value = items[:-1], items[-1]
        names = [str(t) for t in tokens]
        if not isinstance(value, _Tuple):
            _expr(value)  # a string: its own error
            raise InputError(
                f"cannot unpack one array into {len(names)} names ({', '.join(names)}): only "
                "a function that gives several arrays (split, svd, eigh) can be unpacked",
                **_position(tokens[0]),
            )
        if len(value.parts) != len(names):
            raise InputError(
                f"{value.name}() gives {len(value.parts)} arrays, but {len(names)} names "
                f"({', '.join(names)}) unpack them: give one name for each array",
                **_position(tokens[0]),
            )
        for i, name in enumerate(names):
            if name in names[:i]:
                raise InputError(
                    f"{name!r} is named twice in one unpacking", **_position(tokens[i])
                )
        for token, part in zip(tokens, value.parts):
            self._bind(token, part)
        return _Unpack(names, value.parts)

    def _bind(self, tok, expr):
        name = str(tok)
        if name in CONSTANTS:
            raise InputError(f"cannot assign to the constant {name!r}", **_position(tok))
        if name in self.variables and name not in self.bindings:
            raise InputError(
                f"{name!r} is used as an input before it is assigned", **_position(tok)
            )
        if expr.op not in ("var", "const"):
            expr.label = name
        self.bindings[name] = expr

    def program(self, *statements):
        items = [s for s in statements if s is not None]
        statements_out = []
        for s in items:
            if isinstance(s, _Assignment):
                statements_out.append((s.name, s.expr))
            elif isinstance(s, _Unpack):
                statements_out.extend(zip(s.names, s.parts))
            else:
                statements_out.append((None, _expr(s)))
        if isinstance(items[-1], _Unpack):
            names = items[-1].names
            raise InputError(
                f"the program ends with an unpacking ({', '.join(names)} = ...), which gives "
                f"{len(names)} arrays: end it with the one to output, such as {names[-1]}"
            )
        output = statements_out[-1][1]
        return Program(
            source=self.source,
            output=output,
            statements=statements_out,
            bindings=dict(self.bindings),
            inputs=list(self.variables),
        )


class _LarkCallbacks:
    """The :class:`Builder` as Lark's parser wants its callbacks (for the Lark fallbacks): a
    rule's callback takes the list of children; a name the builder lacks, or an inlined
    ``_rule``, is no callback (Lark then builds a Tree), as in :mod:`.lalr`."""

    __slots__ = ("_builder",)

    def __init__(self, builder: Builder):
        self._builder = builder

    def __getattr__(self, name: str):
        method = None if name.startswith("_") else getattr(self._builder, name, None)
        if method is None:
            raise AttributeError(name)
        return lambda children: method(*children)
