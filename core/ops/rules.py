"""The helpers every op's rules are written with, and the helpers that make rules.

The rules are written with the engine's own differentiable ops (operators and the functions
here: ``call``, ``where``, ``sum_to``...), never with raw arrays: the same rule then serves
first-order backward, ``create_graph=True`` (higher order) and forward mode.  What they are
handed decides what they compute: Tensors record (or not) as the engine's ops, the symbolic
differentiator's values build expressions, and host arrays, which backward without
``create_graph`` hands the elementwise rules (:func:`_saved`), compute at once: ``call``
runs the op's forward on them, with the constants the engine op would make (the same NumPy
calls in the same order, so the same bits, without a Tensor or a Node per step).  Two
conventions hold throughout:

* An absent cotangent stays absent: ``chain(g, d)`` is ``g * d`` except that
  where ``g`` is exactly 0 the product is 0 even when ``d`` is inf or nan, so
  the untaken branch of ``where`` never poisons a gradient with ``0 * inf``; an op
  whose partials select (``Op.selects``: relu, clip, max/min) passes nothing where its
  partial is 0, an inf or nan cotangent included, as PyTorch's ``where`` does.
* Kinks follow PyTorch: abs'(0) = 0, relu'(0) = 0, sqrt'(0) = inf, ties of
  max/min split the gradient evenly, sign/floor/comparisons pass no gradient.

:func:`_unary`, :func:`_binary` and :func:`_elementwise_op` make an elementwise op's vjp and
jvp from its local derivatives; :func:`_at_zero`, :func:`_at_tie`, :func:`_where_kink`... make
its ``kink=`` (the warning where a convention was used at a point where the derivative is
undefined).
"""

from __future__ import annotations

import math
from contextvars import ContextVar

import numpy as _host

from .. import backend
from ..autograd import Node
from ..autograd import _state as _grad_mode
from ..errors import ShapeError
from ..tensor import OPS, Tensor, check_size, constant_data, is_grad_enabled
from .table import Op, function, register, ufunc_code

# ---------------------------------------------------------------------------
# Generic helpers the rules are written with.  They dispatch on the graph value
# type (Tensor here; the symbolic differentiator supplies its own; a host array
# computes at once), so a rule is written once for all of them.
# ---------------------------------------------------------------------------

_ARRAYS = (_host.ndarray, _host.generic)  # what the rules' array form computes on
#: The data of a cotangent whose rule may run on the arrays (host memory: the device path
#: keeps its Tensors, and with them its syncs, as they were)
_HOST_DATA = frozenset((_host.ndarray, _host.float64, _host.float32))


def call(name: str, *args, **attrs):
    """The op ``name`` on ``args``: recorded on a Tensor (or a symbolic value) among them,
    else computed on the arrays among them (:func:`_array_call`)."""
    numbers = False
    for a in args:
        if not isinstance(a, _ARRAYS):
            if hasattr(a, "_call"):
                return a._call(name, *args, **attrs)
            numbers = True
    return _array_call(OPS[name], _constants(args) if numbers else args, attrs)


def _constants(args) -> list:
    """``args`` with each Python number made the constant ``tensor.apply`` makes of it,
    beside the first array among them."""
    like = next((a for a in args if isinstance(a, _ARRAYS)), None)
    if like is None:
        raise TypeError("no tensor among the arguments")
    return [a if isinstance(a, _ARRAYS) else constant_data(a, like) for a in args]


def _array_call(op, arrays, attrs):
    """``op``'s forward on ``arrays``, its result an array as ``tensor.apply``'s: the engine
    op without its Tensor and Node, under the walk's IEEE semantics."""
    check_size(op, arrays, attrs)  # before allocating, as tensor.apply
    forward = op.forward if _quiet() else backend.ignoring(op.forward)
    try:
        data = forward(*arrays, **attrs)
    except (ValueError, IndexError, TypeError) as exc:  # as tensor.apply reports it
        raise ShapeError(op.shape_message(arrays, attrs, exc)) from None
    if data.__class__ not in _HOST_DATA and not hasattr(data, "dtype"):
        data = backend.asarray(data, dtype=arrays[0].dtype)
    return data


_quiet = backend.QUIET.get  # True inside a walk that has set the IEEE error state already


def power(a, b):
    """``a ** b``; on arrays pow's forward (NumPy's ufunc, as the engine op: Python's ``**``
    on a NumPy number is C's pow(), which can differ in the last bit)."""
    if isinstance(a, _ARRAYS) or isinstance(b, _ARRAYS):
        return call("pow", a, b)
    return a**b


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
    if x is None:
        return x
    have = x.shape
    if have == shape or tuple(have) == tuple(shape):
        return x
    return call("sum_to", x, shape=tuple(shape))


def zeros_like(x):
    return call("zeros_like", x)


def _is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def _data(x):
    """The array of ``x``: a Tensor's data, an array itself; anything else (a number, a
    symbolic value, None) is returned as it is."""
    return x.data if isinstance(x, Tensor) else x


def _array(x):
    """The array of ``x``, a Tensor (of any backend) or a host array; else None."""
    if isinstance(x, Tensor):
        return x.data
    return x if isinstance(x, _ARRAYS) else None


def _all_finite(x) -> bool:
    """``x`` holds finite numbers only; a value that is no array says what it knows of
    itself (``finite``: generated code's values, which hold no numbers yet), else True."""
    a = _array(x)
    return getattr(x, "finite", True) if a is None else backend.all_finite(a)


def _finite_factor(d) -> bool:
    """True when ``d`` (a Tensor, an array or a Python number) is known to hold finite
    numbers only."""
    kind = d.__class__
    if kind is _host.float64 or kind is float or kind is int:
        return math.isfinite(d)
    d = _array(d)
    return d is not None and backend.all_finite(d)


def _any_zero(x) -> bool:
    d = _array(x)
    if d is not None:
        return backend.any_nonzero(d == 0)
    return getattr(x, "maybe_zero", True)


def chain(g, d, selects: bool = False):
    """``g * d`` where an exactly-zero cotangent stays zero even if ``d`` is inf/nan; with
    ``selects`` (``d`` is a selecting partial, :attr:`~.table.Op.selects`) an exactly-zero
    ``d`` gives zero even where ``g`` is inf/nan."""
    if g is None or d is None:
        return None
    r = g * d
    if selects:
        return _selected(r, d)
    # Only an entry where d is inf or nan can be a 0 * inf/nan: with a finite d (often
    # smaller than g, never larger than the product) the mended product has r's values, and
    # when nothing is recorded (no create_graph) it is r itself, bit for bit.
    if not _grad_mode.grad_enabled and _finite_factor(d):
        return r
    guarded = getattr(r.__class__, "_guarded", None)
    if guarded is not None:  # a value that writes the mend itself (generated code)
        return guarded(r, g, d)
    if not _all_finite(r):
        # only the entries that are 0 * inf/nan: r - r is nan there (0 where r is finite),
        # so every other entry, a signed zero included, is what g * d gives, row by row
        r = where(eq(g, 0), where(eq(r - r, 0), r, 0.0), r)
    return r


def _selected(r, d):
    """The product ``r = g*d`` of a selecting partial ``d`` (0, 1 or 0.5, so finite: only
    ``g`` can make ``r`` inf or nan): 0 where ``d`` is 0 and ``r`` is not finite, as
    PyTorch's ``where`` in relu's and clamp's backward; every other entry is ``r``'s."""
    if _all_finite(r):
        return r
    rd, dd = _array(r), _array(d)
    if not _grad_mode.grad_enabled and type(rd) is _host.ndarray and type(dd) is _host.ndarray:
        # r is the fresh product g*d: mended in place, the same bits as the where below in
        # a third of its passes (nothing recorded, host memory)
        _host.copyto(rd, 0.0, where=(dd == 0) & ~_host.isfinite(rd))
        return r
    return where(eq(d, 0), where(eq(r - r, 0), r, 0.0), r)


#: Elements below which :func:`chain_local` takes the generic path: its checks cost more
#: than the pass they save.  The two paths give the same bits, so the choice is free.
CHAIN_LOCAL_MIN = 512


#: True inside a caller whose intermediates nobody else sees and that copies each gradient
#: sharing memory with an input, a constant or the value before handing it out
#: (core/batch.py): any saved array may then be handed on as a cotangent (in row 3, sin(y)
#: as x's gradient, x as sin's cotangent), a copy made only if it reaches the caller.
LEAVES_COPIED_AT_EXIT: ContextVar[bool] = ContextVar("leaves_copied_at_exit", default=False)


def _unit(data) -> bool:
    """``data`` is a cotangent of ones made without a pass: a stride-0 broadcast of 1 (the
    seed of a batch, a sum's cotangent expanded back).  ``1 * d`` is ``d`` exactly in IEEE
    arithmetic (-0.0, inf and nan with its payload included), so a product with it is d."""
    return not any(data.strides) and data[(0,) * data.ndim] == 1


def host_unrecorded(*tensors) -> bool:
    """Nothing is recorded and each argument holds a NumPy array: a rule may then work on
    the arrays themselves (the same NumPy calls its engine ops would make)."""
    return not is_grad_enabled() and all(
        type(getattr(t, "data", None)) is _host.ndarray for t in tensors
    )


def chain_local(g, d, saved, selects: bool = False):
    """:func:`chain` of a cotangent ``g`` and a local derivative ``d`` that a rule has just
    computed from ``saved`` (the node's inputs and output), the same bits with fewer passes
    when nothing is recorded and both are large NumPy arrays of one shape and dtype:

    * ``g`` all ones (:func:`_unit`): the product is ``d`` itself, with no multiply and no
      finiteness scan (g has no zero, so nothing needs mending); ``d`` is handed on when
      the rule made it (*fresh*: it owns its memory, shared with nothing saved), or when
      the caller copies at its exit what it shares (:data:`LEAVES_COPIED_AT_EXIT`);
      otherwise it is copied: an input or output of the node may be a tensor the user
      holds (the Tensor API), and a gradient must not be a view of it, as in PyTorch;
    * otherwise, a fresh ``d`` takes the product in place (``out=``): one temporary less.

    Everything else, and every recorded (``create_graph``) product, is :func:`chain`'s
    (``selects`` as there).
    """
    dd = d.data if isinstance(d, Tensor) else d
    if type(dd) is not _host.ndarray:
        return chain(g, d, selects)
    gd = g.data if isinstance(g, Tensor) else g
    if (
        type(gd) is not _host.ndarray
        or dd.size < CHAIN_LOCAL_MIN
        or gd.shape != dd.shape
        or gd.dtype != dd.dtype
        or is_grad_enabled()
    ):
        return chain(g, d, selects)
    fresh = dd.flags.owndata and not any(_host.may_share_memory(dd, _data(s)) for s in saved)
    if _unit(gd):
        if fresh or LEAVES_COPIED_AT_EXIT.get():
            return d
        return _like(g, dd.copy())
    if not fresh or (selects and not backend.all_finite(gd)):
        return chain(g, d, selects)  # a selecting d's mend reads d: not overwritten
    finite = selects or backend.all_finite(dd)  # chain's test, before d is overwritten
    r = _like(g, _host.multiply(gd, dd, out=dd))
    if finite or backend.all_finite(dd):
        return r
    return where(eq(g, 0), where(eq(r - r, 0), r, 0.0), r)


def _like(g, data):
    """``data`` as what ``g`` is: a Tensor's, or the array itself."""
    return Tensor._wrap(data) if isinstance(g, Tensor) else data


# How an elementwise rule reads its cotangent (the rules' array form, see the module's doc):
_TENSORS = 0  # as Tensors (recorded under create_graph; any device)
_ARRAY = 1  # a host array (backward without create_graph): arrays in, arrays out
_WRAPPED = 2  # a host Tensor, nothing recorded (batch, explain): on its array, Tensors out


def _form(g) -> int:
    """How the rule given the cotangent ``g`` works (``_TENSORS``, ``_ARRAY``, ``_WRAPPED``)."""
    if isinstance(g, _ARRAYS):
        return _ARRAY
    if not _grad_mode.grad_enabled and isinstance(g, Tensor) and g.data.__class__ in _HOST_DATA:
        return _WRAPPED
    return _TENSORS


def _quietly(rule, n, g):
    """``rule(n, g)`` under IEEE semantics, marked quiet: a rule on arrays computes with
    NumPy directly, where the Tensor form's ops each entered them (1/(2*sqrt(0)) is inf,
    never a RuntimeWarning on the user's screen)."""
    token = backend.quiet_enter()
    try:
        return rule(n, g)
    finally:
        backend.quiet_exit(token)


def _saved(n, form: int) -> tuple:
    """The node's inputs and output as the rule of ``form`` reads them: Tensors, or their
    arrays (the output's read from the Node without rebuilding its Tensor)."""
    if not form:
        return tuple(n.inputs) + (n.out,)
    if n.__class__ is Node:  # the walk has checked that it is not released
        ins, out = n.saved_inputs, n.saved_data
        assert ins is not None  # (a released Node has None: the walk raised before)
    else:
        ins, out = n.inputs, n.out.data
    if len(ins) == 1:
        return (ins[0].data, out)
    return tuple([t.data for t in ins]) + (out,)


def _handed(form: int, grads: tuple) -> tuple:
    """The cotangents as the rule of ``form`` hands them back: ``_WRAPPED``'s as Tensors."""
    if form != _WRAPPED:
        return grads
    return tuple([None if gi is None else Tensor._wrap(gi) for gi in grads])


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
    """Undo a reduction's shape: reshape ``g`` to keepdims form and broadcast to ``shape``
    (nothing recorded, on the host: the same two NumPy calls without two engine ops)."""
    if host_unrecorded(g):
        data = g.data if keepdims else g.data.reshape(_keepdims_shape(shape, axis))
        shape = tuple(shape)
        return Tensor._wrap(data if data.shape == shape else _host.broadcast_to(data, shape))
    if not keepdims:
        g = reshape(g, _keepdims_shape(shape, axis))
    return broadcast_to(g, shape)


def _xp():
    return backend.settings().xp  # the ContextVar read directly: the per-op path


# ---------------------------------------------------------------------------
# Elementwise ops built from local derivatives
# ---------------------------------------------------------------------------


def is_complex(d) -> bool:
    """Whether ``d`` (a Tensor, an array or a number) holds complex numbers."""
    return backend.is_complex(d.data if isinstance(d, Tensor) else d)


#: the classes of a real local derivative that conj hands back at once (the vjp's hot path)
_REAL_CLASSES = frozenset((float, int, _host.float64, _host.float32))


def conj(d):
    """``conj(d)`` (recorded on a Tensor), ``d`` itself when it is real."""
    cls = d.__class__
    if cls in _REAL_CLASSES or (cls is _host.ndarray and d.dtype.kind != "c"):
        return d
    if not is_complex(d):
        return d
    if d.__class__ is complex:
        return d.conjugate()
    return call("conj", d)


def real_part(d):
    """``real(d)`` (recorded on a Tensor), ``d`` itself when it is real."""
    return call("real", d) if is_complex(d) else d


def _local(d, conjugate: bool):
    """The local derivative ``d`` as reverse mode multiplies a cotangent by it (PyTorch's
    convention, grad = dL/dRe z + i dL/dIm z): ``conj(d)`` for a holomorphic op (grad_in =
    g * conj(f'(z))), ``d`` itself for the others (a real-valued function's derivative is
    declared as that gradient's direction: abs's sgn(z))."""
    return conj(d) if conjugate else d


def _tangent(on_complex, t, d, selects: bool = False):
    """Forward mode's ``t * d`` (:func:`chain`, ``selects`` as there); a real-valued function
    of a complex argument takes ``real(conj(d) * t)`` (its derivative being the gradient's
    direction)."""
    if on_complex == "real" and (is_complex(t) or is_complex(d)):
        return real_part(chain(t, conj(d)))
    return chain(t, d, selects)


def _unary(name, node, forward, deriv, *, latex=None, aliases=(), printing=None, **facts):
    """deriv(x, out) -> dout/dx, written with engine ops.  The op is a function of the
    language called ``name`` (or one of ``aliases``), in LaTeX the function ``latex``,
    unless ``printing`` says otherwise; ``facts`` are the :class:`Op`'s (``kink``,
    ``total``, ``nonneg``, ``zero_grad``, ``on_complex``...)."""
    on_complex = facts.get("on_complex")
    conjugate = on_complex == "holomorphic"  # else no call on the vjp's path
    selects = facts.get("selects", False)

    def local(n, g, saved):
        d = deriv(*saved)
        if conjugate and d.__class__ not in _REAL_CLASSES:  # a real number: no call at all
            d = conj(d)
        return (chain_local(g, d, saved, selects),)

    def jvp(n, tangents):
        t = tangents[0]
        if t is None:
            return None
        return _tangent(on_complex, t, deriv(n.inputs[0], n.out), selects)

    printing = printing or function(name, *aliases, latex=latex)
    return _declare(name, node, forward, _vjp_of(local), jvp, (deriv,), printing, facts)


def _binary(name, node, forward, deriv_a, deriv_b, *, printing, **facts):
    """deriv_a(a, b, out), deriv_b(a, b, out): the two partials, written with engine ops;
    ``facts`` are the :class:`Op`'s (the two-argument :func:`_elementwise_op`)."""
    return _elementwise_op(name, node, forward, (deriv_a, deriv_b), printing=printing, **facts)


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


def _elementwise_op(name, node, forward, derivs, *, printing, **facts):
    """An elementwise op of ``len(derivs)`` arguments from its partials ``derivs[i](*args,
    out)``, written with engine ops (the n-ary :func:`_binary`)."""

    on_complex = facts.get("on_complex")
    conjugate = on_complex == "holomorphic"  # else no call on the vjp's path
    selects = facts.get("selects", False)

    def local(n, g, args):
        needs, shapes = n.needs, n.shapes
        return tuple(
            [
                sum_to(chain_local(g, _local(d(*args), conjugate), args, selects), shapes[i])
                if needs[i]
                else None
                for i, d in enumerate(derivs)
            ]
        )

    def jvp(n, tangents):
        args = tuple(n.inputs) + (n.out,)
        r = None
        for t, d in zip(tangents, derivs):
            if t is not None:
                r = add_tangents(r, _tangent(on_complex, t, d(*args), selects))
        return None if r is None else broadcast_to(r, n.out.shape)

    return _declare(name, node, forward, _vjp_of(local), jvp, derivs, printing, facts)


def _vjp_of(local):
    """An elementwise op's vjp from ``local(n, g, saved) -> its inputs' gradients`` (``saved``
    its inputs and output): the same on the engine's walk and on arrays outside every walk
    (explain's numeric vjp, run quietly and handed back in the cotangent's form)."""

    def vjp(n, g):
        form = _form(g)
        if form and not _quiet():
            return _quietly(vjp, n, g)
        return _handed(form, local(n, g.data if form == _WRAPPED else g, _saved(n, form)))

    return vjp


def _declare(name, node, forward, vjp, jvp, derivs, printing, facts) -> Op:
    """Register the elementwise op whose vjp and jvp were made from its partials ``derivs``."""
    facts.setdefault("code", getattr(forward, "code", None))
    return register(
        Op(
            name,
            node,
            forward,
            vjp,
            jvp,
            arity=len(derivs),
            deriv=tuple(derivs),
            printing=printing,
            arrays=True,
            **facts,
        )
    )


def _at_origin(message):
    """The kink of a binary op at (0, 0)."""
    return _where_kink(lambda i, o, a: (i[0] == 0) & (i[1] == 0), message)


def _constant_pieces(name):
    """The "kink" of a piecewise-constant op: its gradient is zero almost everywhere."""
    return _zero_almost_everywhere(
        f"{name} is piecewise constant: its gradient is zero almost everywhere"
    )


def _np(name, **spelling):
    """The forward ``a -> xp.name(a)``: the backend's elementwise function ``name``; its
    ``code`` is NumPy's ufunc's in each target (``spelling``: :func:`~.table.ufunc_code`'s
    ``c`` or ``torch`` where they differ)."""

    def forward(a):
        return getattr(_xp(), name)(a)

    forward.code = ufunc_code(name, **spelling)  # type: ignore[attr-defined]
    return forward
