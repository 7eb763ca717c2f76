"""How a call in the language maps onto ops: the function's name and arguments checked
against the op table, each kind of call (with parameters, a reduction, einsum, several
arrays, a plain elementwise function) built as its node."""

from __future__ import annotations

import difflib
import math

from ..core.errors import ArityError, InputError, LimitError, UnknownFunctionError
from ..core.ops import FUNCTIONS, OPS, Word
from ..core.ops.linalg import einsum_subscripts
from ..core.program import Expr
from . import limits
from .values import (
    _AXIS,
    _STRING_KINDS,
    _const_int,
    _const_value,
    _expr,
    _integer,
    _Keyword,
    _position,
    _Slice,
    _String,
    _takes_string,
    _Tuple,
)

#: functions of other languages and libraries that the language spells differently
_OTHER_SPELLINGS = {
    "ln": "log",
    "lg": "log10",
    "sgn": "sign",
    "fabs": "abs",
    "absolute": "abs",
    "power": "pow",
    "average": "mean",
    "amax": "max",
    "amin": "min",
}


def build_call(tok, arguments=None):
    """The call ``name(arguments)`` at ``tok``: its node (or, for a function that gives
    several arrays, a :class:`_Tuple`)."""
    fn = FUNCTIONS.get(tok)  # a token is a str
    if (
        fn is not None
        and fn.unary
        and arguments is not None
        and len(arguments) == 1
        and arguments[0].__class__ is Expr
        and not (fn.with_params or fn.reduce or tok == "reshape")
    ):
        # f(x) of a plain function (the common call): what the general path below gives
        # one argument that is an array, without its checks (none can fail here)
        return Expr(fn.unary, (arguments[0],))
    name = str(tok)
    if fn is None:
        suggestion = _suggestion(name)
        raise UnknownFunctionError(
            f"unknown function {name!r} at line {tok.line}, column {tok.column}{suggestion} "
            f"(type :functions in `autograd-cli repl` to list all {len(FUNCTIONS)})",
            function=name,
            **_position(tok),
        )
    op = OPS[fn.with_params] if fn.with_params else None
    positional, keywords = _arguments(name, arguments or [], op, tok)
    n = len(positional)
    if name == "reshape":
        if n != 2 or keywords:
            raise _arity_error(name, fn, n, keywords, tok)
        return _reshape_call(positional, tok)
    if op is not None:
        return _call_with_op(name, op, positional, keywords, tok)
    if fn.reduce and n == 1 or (fn.reduce and n == 2 and fn.positional_axis):
        return _reduction_call(name, fn.reduce, positional, keywords, tok)
    if keywords:
        raise ArityError(f"{name}() takes no keyword arguments", function=name, **_position(tok))
    node = _elementwise_call(fn, positional)
    if node is None:
        raise _arity_error(name, fn, n, keywords, tok)
    return node


def _arguments(name: str, args: list, op, tok) -> tuple[list, dict]:
    """A call's positional and keyword arguments, each an array (several arrays nowhere; a
    string only where ``op`` has a parameter that takes one: checked there)."""
    positional = [a for a in args if not isinstance(a, _Keyword)]
    keywords = {a.name: a for a in args if isinstance(a, _Keyword)}
    if len(keywords) != len([a for a in args if isinstance(a, _Keyword)]):
        raise ArityError(f"{name}(): a keyword argument is repeated", **_position(tok))
    for a in args:
        value = a.expr if isinstance(a, _Keyword) else a
        if isinstance(value, _Tuple):
            raise value.misuse()
    if op is None or not any(_takes_string(p) for p in op.params):
        for a in args:
            _expr(a.expr if isinstance(a, _Keyword) else a)
    return positional, keywords


def _arity_error(name: str, fn, n: int, keywords: dict, tok) -> ArityError:
    takes = fn.arities()
    return ArityError(
        f"{name}() takes {takes} argument{'' if takes == '1' else 's'}, got {n}"
        + (f" and keyword(s) {', '.join(keywords)}" if keywords else ""),
        function=name,
        **_position(tok),
    )


def _reshape_call(positional: list, tok) -> Expr:
    """``reshape(x, shape)``: the shape a constant list of integers (-1 for one of them)."""
    shape = _const_value(positional[1], "the shape of reshape()", tok)
    shape = shape if isinstance(shape, list) else [shape]
    if any(isinstance(s, list) or not math.isfinite(s) or s != math.floor(s) for s in shape):
        raise InputError("the shape of reshape() must be a list of integers", **_position(tok))
    if len(shape) > limits.MAX_DIMS:
        raise InputError(
            f"the shape of reshape() has {len(shape)} dimensions; an array has at "
            f"most {limits.MAX_DIMS}",
            **_position(tok),
        )
    dims = tuple(
        _integer(s, "a dimension of reshape()", tok, low=-1, high=limits.INT64[1]) for s in shape
    )
    return Expr("reshape", (positional[0],), {"shape": dims})


def _call_with_op(name: str, op, positional: list, keywords: dict, tok):
    """A call of a function with parameters (its op's ``params``): einsum, a norm (a
    reduction), or any other, which may give several arrays."""
    n = len(positional)
    if any(p.kind == "subscripts" for p in op.params):
        return _einsum_call(name, op, positional, keywords, tok)
    if [p.name for p in op.params[:2]] == ["axis", "keepdims"]:  # norm: a reduction
        if n not in (1, 2):
            extra = ", ".join(p.name for p in op.params[1:])
            raise ArityError(
                f"{name}() takes 1 or 2 arguments (the array and its axis; {extra} by "
                f"keyword only: {name}(x, {op.params[-1].name}=...)), got {n}",
                function=name,
                **_position(tok),
            )
        return _reduction_call(name, op.name, positional, keywords, tok, op.params)
    return _several(_call_with_params(name, op, positional, keywords, tok), name, tok)


def _elementwise_call(fn, positional: list) -> Expr | None:
    """A call of a unary, binary or ternary function with that many arrays, else None."""
    n = len(positional)
    if fn.unary and n == 1:
        return Expr(fn.unary, tuple(positional))
    if fn.binary and n == 2:
        a, b = positional
        variant = OPS[fn.binary].printing.with_constant
        if variant and a.is_const != b.is_const:
            # max(x, c) with a constant c: the clamp op, whose tie convention matches relu.
            x, c = (b, a) if a.is_const else (a, b)
            return Expr(variant, (x, c))
        return Expr(fn.binary, tuple(positional))
    if fn.ternary and n == 3:
        return Expr(fn.ternary, tuple(positional))
    return None


def _index_array(value) -> tuple:
    """A constant list of integers as an index (nested tuples, the shape of the list): each
    element a whole number, checked without recursion; an empty list selects nothing."""
    out: list = []
    stack = [(value, out)]
    while stack:
        items, into = stack.pop()
        for v in items:
            if isinstance(v, list):
                inner: list = []
                into.append(inner)
                stack.append((v, inner))
            else:
                into.append(_integer(v, "an index in a list of indices"))
    frozen: dict[int, tuple] = {}
    work = [(out, False)]
    while work:  # lists to tuples, innermost first, still without recursion
        node, done = work.pop()
        if done:
            frozen[id(node)] = tuple(frozen.get(id(v), v) for v in node)
        else:
            work.append((node, True))
            work.extend((v, False) for v in node if isinstance(v, list))
    return frozen[id(out)]


def _call_with_params(name: str, op, positional: list, keywords: dict, tok) -> Expr:
    """``f(arrays..., params...)`` for an op with Params:
    its array arguments first (for a variadic op, one list of them: ``concatenate([a, b])``),
    then its params by position or keyword (a keyword-only one by keyword), each a constant
    checked by its kind."""
    names = ", ".join(p.name for p in op.params)
    where = _position(tok)
    if op.arity is None:
        if not positional:
            raise ArityError(
                f"{name}() takes a list of arrays first: {name}([a, b], ...)",
                function=name,
                **where,
            )
        arrays = _list_items(positional[0], name, tok)
        rest = positional[1:]
    else:
        if len(positional) < op.arity:
            raise ArityError(
                f"{name}() takes {op.arity} array argument{'s' if op.arity > 1 else ''} "
                f"then {names}; got {len(positional)} argument(s)",
                function=name,
                **where,
            )
        arrays, rest = positional[: op.arity], positional[op.arity :]
    arrays = [_expr(a) for a in arrays]
    by_position = [p for p in op.params if not getattr(p, "keyword_only", False)]
    if len(rest) > len(by_position):
        keyword_only = [p.name for p in op.params if getattr(p, "keyword_only", False)]
        by_keyword = f"; {', '.join(keyword_only)} by keyword only" if keyword_only else ""
        raise ArityError(
            f"{name}() takes at most {len(by_position)} argument(s) after its array"
            f"{'s' if op.arity != 1 else ''} ({', '.join(p.name for p in by_position)}"
            f"{by_keyword}), got {len(rest)}",
            function=name,
            **where,
        )
    given = {p.name: (e, tok) for p, e in zip(by_position, rest)}
    for key, keyword in keywords.items():
        if key not in {p.name for p in op.params}:
            raise ArityError(
                f"{name}(): unexpected keyword argument {key} (it takes {names})",
                function=name,
                **_position(keyword.token),
            )
        if key in given:
            raise ArityError(
                f"{name}(): {key} is given twice", function=name, **_position(keyword.token)
            )
        given[key] = (keyword.expr, keyword.token)
    attrs = {}
    for p in op.params:
        if p.name not in given:
            if p.required:
                raise ArityError(f"{name}() needs its {p.name} argument", function=name, **where)
            attrs[p.name] = p.default
            continue
        expr, token = given[p.name]
        attrs[p.name] = _value_of(f"{p.name} of {name}()", p, expr, token)
    return Expr(op.name, tuple(arrays), attrs)


def _value_of(what: str, param, expr, token):
    """The value of ``param`` written as ``expr``: read by the Param itself where it has a
    ``parse`` (the FFT's lengths, norm's ord), else by its kind."""
    if getattr(param, "parse", None):
        return _own_value(what, param, expr, token)
    return _param_value(what, param.kind, expr, token)


def _list_items(expr: Expr, name: str, tok) -> list:
    """The arrays of a list argument, ``[a, b]``: a stack's elements, or a constant's rows."""
    expr = _expr(expr)
    if expr.op == "stack":
        items = list(expr.args)
    elif expr.is_const and isinstance(expr.value, list):
        items = [Expr.const(v) for v in expr.value]
    else:
        raise InputError(
            f"{name}() takes a list of arrays first: {name}([a, b], ...)", **_position(tok)
        )
    if not items:
        raise InputError(f"{name}() needs at least one array", **_position(tok))
    return items


def _own_value(what: str, param, expr, token):
    """A Param's value read by its own ``parse`` (a number, a list or a string as written ->
    the attribute; None: a name where it takes a string; a ValueError says what it must be)."""
    if isinstance(expr, _String):
        value = expr.text
    elif _takes_string(param) and isinstance(expr, Expr) and expr.op == "var":
        value = None  # a name: parse says a string is in quotes
    else:
        value = _const_value(expr, what, token)
    try:
        return param.parse(value)
    except ValueError as exc:
        raise InputError(f"{what} {exc}", **_position(getattr(expr, "token", token))) from None


def _param_value(what: str, kind: str, expr: Expr, token):
    if kind in _STRING_KINDS and isinstance(expr, _String):
        return Word(expr.text)  # subscripts: checked against the operands by the call (_einsum)
    value = _const_value(expr, what, token)
    if kind == "subscripts":
        raise InputError(
            f"{what} must be a string of subscripts, such as 'ij,jk->ik'", **_position(token)
        )
    if kind == "counts":  # tile's reps: a count, or a list of counts (one per axis)
        if not isinstance(value, list):
            return _integer(value, what, token, low=0)
        if len(value) > limits.MAX_DIMS:
            raise InputError(
                f"{what} has {len(value)} counts; an array has at most {limits.MAX_DIMS} "
                "dimensions",
                **_position(token),
            )
        return tuple(_integer(v, f"each count of {what}", token, low=0) for v in value)
    if kind == "sections":  # split's: a number of equal sections, or a list of indices
        if isinstance(value, list):
            return tuple(_integer(v, f"each index of {what}", token) for v in value)
        return _integer(value, what, token, low=1, high=2**31)
    if kind == "part":
        return _integer(value, what, token, low=0, high=2**31)
    if kind == "int":
        return _integer(value, what, token)
    if kind == "count":
        return _integer(value, what, token, low=0)
    if kind == "axis":
        return _integer(value, what, token, **_AXIS)
    if kind == "axes":
        if isinstance(value, list):
            return tuple(_integer(v, f"each axis of {what}", token, **_AXIS) for v in value)
        return _integer(value, what, token, **_AXIS)
    if kind == "flag":
        if isinstance(value, list) or float(value) not in (0.0, 1.0):
            shown = "a list" if isinstance(value, list) else repr(float(value))
            raise InputError(f"{what} must be 0 or 1, got {shown}", **_position(token))
        return float(value) == 1.0
    raise ValueError(f"unknown param kind {kind!r}")  # a mistake in the op table


def _reduction_call(name: str, op_name: str, positional: list, keywords: dict, tok, params=()):
    """``f(x)``, ``f(x, axis)``, ``f(x, axis=k, keepdims=1)`` for a reduction; ``params``, an
    op's Params beyond axis and keepdims (norm's ``ord``), are taken by keyword only."""
    extra = {p.name: p for p in params if p.name not in ("axis", "keepdims")}
    n = len(positional)
    unknown = set(keywords) - {"axis", "keepdims"} - set(extra)
    if unknown or ("axis" in keywords and n == 2):
        raise ArityError(
            f"{name}(): unexpected keyword argument(s) "
            f"{', '.join(sorted(unknown)) or 'axis (given twice)'}",
            function=name,
            **_position(tok),
        )
    axis_expr = positional[1] if n == 2 else (keywords["axis"].expr if "axis" in keywords else None)
    axis: int | tuple[int, ...] | None = None
    if axis_expr is not None:
        what = f"the axis of {name}()"
        value = _const_value(axis_expr, what, tok)
        if isinstance(value, list):
            axis = tuple(_integer(v, f"each axis of {name}()", tok, **_AXIS) for v in value)
        else:
            axis = _integer(value, what, tok, **_AXIS)
    keepdims = False
    if "keepdims" in keywords:
        keyword = keywords["keepdims"]
        flag = _const_value(keyword.expr, f"keepdims of {name}()", keyword.token)
        if isinstance(flag, list) or float(flag) not in (0.0, 1.0):
            shown = "a list" if isinstance(flag, list) else repr(float(flag))
            raise InputError(
                f"keepdims of {name}() must be 0 or 1, got {shown}",
                **_position(keyword.token),
            )
        keepdims = float(flag) == 1.0
    attrs = {"axis": axis, "keepdims": keepdims}
    for key, p in extra.items():
        keyword = keywords.get(key)
        attrs[key] = (
            p.default
            if keyword is None
            else _value_of(f"{key} of {name}()", p, keyword.expr, keyword.token)
        )
    return Expr(op_name, (_expr(positional[0]),), attrs)


def _einsum_call(name: str, op, positional: list, keywords: dict, tok) -> Expr:
    """``einsum('ij,jk->ik', a, b)`` (NumPy's order), or ``einsum([a, b], 'ij,jk->ik')`` (how
    it prints: a variadic op's arrays come first as a list); the subscripts are checked
    against the number of arrays here, before anything is evaluated."""
    where = _position(tok)
    if keywords:
        raise ArityError(
            f"{name}() takes no keyword arguments: {name}('ij,jk->ik', a, b)",
            function=name,
            **where,
        )
    if positional and isinstance(positional[0], _String):
        text, operands = positional[0], positional[1:]
    elif (
        len(positional) == 2
        and isinstance(positional[1], _String)
        and isinstance(positional[0], Expr)
        and (positional[0].op == "stack" or isinstance(positional[0].value, list))
    ):
        text, operands = positional[1], _list_items(positional[0], name, tok)
    else:
        for a in positional:
            if isinstance(a, _String):
                raise InputError(
                    f"{name}() takes its subscripts first: {name}('ij,jk->ik', a, b)",
                    **_position(a.token),
                )
        raise ArityError(
            f"{name}() takes a string of subscripts, then the arrays: {name}('ij,jk->ik', a, b)",
            function=name,
            **where,
        )
    operands = [_expr(o) for o in operands]
    if not operands:
        raise ArityError(
            f"{name}() needs at least one array after its subscripts", function=name, **where
        )
    try:
        subscripts = einsum_subscripts(text.text, len(operands))
    except ValueError as exc:
        raise InputError(f"{name}(): {exc}", **_position(text.token)) from None
    return Expr(op.name, tuple(operands), {"subscripts": Word(subscripts)})


def _split_parts(expr: Expr) -> list:
    """The arrays of ``split(x, sections or indices, axis)``: slices of x (``x[:, 2:5]``) where
    the indices and a nonnegative axis say where they are, else parts of the split op (equal
    sections need x's length, known only when it is evaluated)."""
    sections, axis = expr.attrs["indices_or_sections"], expr.attrs["axis"]
    if isinstance(sections, tuple) and axis >= 0:
        bounds = [None, *sections, None]
        lead = (slice(None),) * axis
        return [
            Expr("getitem", expr.args, {"index": lead + (slice(lo, hi),)})
            for lo, hi in zip(bounds, bounds[1:])
        ]
    count = len(sections) + 1 if isinstance(sections, tuple) else sections
    return [Expr(expr.op, expr.args, {**expr.attrs, "part": k}) for k in range(count)]


def _svd_parts(expr: Expr) -> list:
    """U, S, Vh of ``svd(A)``: S is ``svdvals(A)``."""
    return [
        Expr(expr.op, expr.args, {**expr.attrs, "part": 0}),
        Expr("svdvals", expr.args),
        Expr(expr.op, expr.args, {**expr.attrs, "part": 2}),
    ]


def _eigh_parts(expr: Expr) -> list:
    """L, V of ``eigh(A)``: L is ``eigvalsh(A)``."""
    return [Expr("eigvalsh", expr.args), Expr(expr.op, expr.args, {**expr.attrs, "part": 1})]


def _eig_parts(expr: Expr) -> list:
    """L, V of ``eig(A)`` (L is also ``eigvals(A)``)."""
    return [Expr(expr.op, expr.args, {**expr.attrs, "part": k}) for k in (0, 1)]


#: the functions whose value is several arrays: op -> its parts (each an Expr)
_SEVERAL = {"split": _split_parts, "svd": _svd_parts, "eigh": _eigh_parts, "eig": _eig_parts}


def _several(expr: Expr, name: str, tok):
    """A call of split(), svd() or eigh(): its several arrays (a :class:`_Tuple`), or the one array a
    ``part=`` names (how a part prints: ``split(x, 3, part=1)`` is ``split(x, 3)[1]``)."""
    make = _SEVERAL.get(expr.op)
    if make is None:
        return expr
    part = expr.attrs["part"]
    parts = make(Expr(expr.op, expr.args, {**expr.attrs, "part": None}))
    if part is None:
        if len(parts) > limits.MAX_ARRAY_ELEMENTS:
            raise LimitError(f"{name}() would give more than {limits.MAX_ARRAY_ELEMENTS:,} arrays")
        return _Tuple(parts, name, tok)
    if part >= len(parts):
        raise InputError(
            f"part of {name}() must be from 0 to {len(parts) - 1} (it gives {len(parts)} "
            f"arrays), got {part}",
            **_position(tok),
        )
    return parts[part]


def _part_of(several: _Tuple, items: list) -> Expr:
    """``split(x, 3)[1]``: one of several arrays, by a constant integer (negative from the end)."""
    n = len(several.parts)
    what = f"the index of {several.name}()'s {n} arrays"
    if len(items) != 1 or isinstance(items[0], _Slice):
        raise InputError(
            f"{what} is one constant integer from 0 to {n - 1} ({several.name}(...)[0]); "
            f"index the array it picks for more",
            **_position(several.token),
        )
    k = _const_int(items[0], what, several.token, low=-n, high=n - 1)
    return several.parts[k]


def _suggestion(name: str) -> str:
    """``; did you mean 'log'?`` for an unknown function: another language's spelling of
    one (``ln``), else the closest known name (difflib), else nothing."""
    hint = _OTHER_SPELLINGS.get(name.lower())
    if hint is None:
        lowered = {f.lower(): f for f in FUNCTIONS}
        if name.lower() in lowered:
            hint = lowered[name.lower()]
        else:
            close = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)
            hint = lowered[close[0]] if close else None
    return f"; did you mean {hint!r}?" if hint in FUNCTIONS else ""
