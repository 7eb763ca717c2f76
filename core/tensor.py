"""Tensor: the data structure of the engine, and ``apply``, which records ops on it.

A :class:`Tensor` wraps one array of the backend (NumPy, or CuPy on the GPU).
A tensor made by the user is a *leaf*; a tensor made by an op while grad mode
is on, from inputs of which at least one requires grad, carries a
:class:`Node` in ``grad_fn`` (``MulBackward0`` ...), as in PyTorch.  Nodes,
grad mode and the backward pass live below this module, in :mod:`.autograd`
(which never imports it), and are re-exported here.

Ops are looked up by name in the op table (:mod:`autograd_cli.core.ops`);
this module only knows how to apply one.
"""

from __future__ import annotations

import builtins
import numbers
from typing import Any

from . import autograd as _autograd
from . import backend, limits
from .autograd import (
    AccumulateGrad,
    Node,
    backward,
    enable_grad,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from .errors import GradError, ShapeError

__all__ = [
    "OPS",
    "AccumulateGrad",
    "Node",
    "Tensor",
    "apply",
    "as_tensor",
    "enable_grad",
    "is_grad_enabled",
    "no_grad",
    "set_grad_enabled",
    "tensor",
]

# name -> Op, filled once by the package core/ops/ (its __init__, by ``op_table``).  Kept here
# so Tensor methods find ops without a circular import at module load time.
OPS: dict[str, Any] = {}


def _not_a_number(data) -> str | None:
    """The type name of the first entry of ``data`` that is not a real number, else None."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        elif not isinstance(item, numbers.Real):
            return type(item).__name__
    return None


def _op_method(name: str, op: str | None = None):
    """Tensor's method ``name`` applying the op ``op`` (by default ``name``) to the tensor
    alone: ``t.sin()``, ``t.conj()``; as a property, ``t.T``."""
    key = op or name

    def method(self):
        return apply(OPS[key], self)

    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    return method


def _reduction(name: str, op: str):
    """Tensor's method ``name`` for the reduction ``op``: ``t.sum(axis=None, keepdims=False)``."""

    def method(self, axis=None, keepdims: bool = False):
        return apply(OPS[op], self, axis=_normalize_axis(axis), keepdims=keepdims)

    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    return method


class Tensor:
    """An array with autograd metadata, modelled on ``torch.Tensor``.

    >>> a = tensor(2.0, requires_grad=True)
    >>> b = a ** 2 + 1
    >>> b
    tensor(5., grad_fn=<AddBackward0>)
    >>> b.backward()
    >>> a.grad
    tensor(4.)
    """

    __slots__ = ("data", "requires_grad", "grad", "grad_fn", "name", "__weakref__")
    __array_priority__ = 1000  # so ndarray <op> Tensor defers to Tensor's reflected ops

    def __init__(self, data, requires_grad: bool = False, dtype=None, name: str | None = None):
        if isinstance(data, Tensor):
            data = data.data
        elif not hasattr(data, "dtype"):
            probe = backend.host.asarray(data)
            # None and strings are not numbers (as torch.tensor); ints beyond int64 make an
            # object array too, but they are numbers and become floats.
            kind = _not_a_number(data) if probe.dtype.kind not in "biufc" else None
            if kind is not None:
                error = RuntimeError if kind == "NoneType" else TypeError
                raise error(f"Could not infer dtype of {kind}")
        if dtype is None and hasattr(data, "dtype") and data.dtype.kind in "fc":
            dtype = data.dtype
        # An ndarray of the backend (NumPy, or CuPy on the GPU), hence Any.
        self.data: Any = backend.asarray(data, dtype=dtype)
        self.requires_grad = bool(requires_grad)
        self.grad: Tensor | None = None
        self.grad_fn: Node | None = None
        self.name = name

    @classmethod
    def _wrap(cls, array, grad_fn=None) -> Tensor:
        t = cls.__new__(cls)
        t.data = array
        t.requires_grad = grad_fn is not None
        t.grad = None
        t.grad_fn = grad_fn
        t.name = None
        return t

    # ---- metadata -----------------------------------------------------------
    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def shape(self) -> tuple:
        return self.data.shape  # a tuple already (NumPy's and CuPy's)

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def size(self) -> int:
        return int(self.data.size)

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.data.shape[0]

    def numpy(self):
        return backend.to_numpy(self.data)

    def item(self) -> float | complex:
        """The one number (a Python float, or complex as torch's item of a complex tensor)."""
        if self.data.size != 1:
            raise ShapeError(
                f"a Tensor with {self.data.size} elements cannot be converted to Scalar"
            )
        a = backend.to_numpy(self.data).reshape(())
        return complex(a) if a.dtype.kind == "c" else float(a)

    def tolist(self):
        return self.numpy().tolist()

    def detach(self) -> Tensor:
        """A new leaf sharing this tensor's data, cut off from the graph."""
        return Tensor._wrap(self.data)

    def to(self, dtype) -> Tensor:
        """This tensor as ``dtype`` (a NumPy float or complex dtype, or its name: "float32"),
        as torch's ``t.to(dtype)``: itself where it has that dtype, else a copy, recorded
        (ToCopyBackward0: its gradient comes back in this tensor's dtype)."""
        name = backend.host.dtype(dtype).name
        if name[0] not in "fc":
            raise TypeError(f"to() takes a float or complex dtype, not {name}")
        if name == self.data.dtype.name:
            return self
        return apply(OPS["astype"], self, dtype=name, source=self.data.dtype.name)

    def double(self) -> Tensor:
        """``self.to("float64")`` (torch's ``t.double()``)."""
        return self.to("float64")

    def float(self) -> Tensor:
        """``self.to("float32")`` (torch's ``t.float()``)."""
        return self.to("float32")

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if not self.is_leaf:
            raise GradError("you can only change requires_grad flags of leaf variables.")
        self.requires_grad = bool(requires_grad)
        return self

    def zero_(self) -> Tensor:
        self.data = backend.xp.zeros_like(self.data)  # not data * 0: inf * 0 is nan
        return self

    def __float__(self) -> builtins.float:  # builtins: the class has a method float
        value = self.item()
        if isinstance(value, complex):  # as torch: float() of a complex tensor is an error
            raise TypeError("can't convert a complex tensor to float (take .real or abs)")
        return value

    def __bool__(self) -> bool:
        if self.data.size != 1:
            raise ShapeError("the truth value of a tensor with more than one element is ambiguous")
        return bool(backend.to_numpy(self.data).reshape(()))

    def __repr__(self) -> str:
        from .format import tensor_repr

        return tensor_repr(self)

    __hash__ = object.__hash__

    # ---- autograd -----------------------------------------------------------
    def backward(self, gradient=None, retain_graph=None, create_graph: bool = False, inputs=None):
        """Accumulate d(self)/d(leaf) into each leaf's ``.grad`` (``torch.Tensor.backward``)."""
        backward(
            self, gradient, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs
        )

    # ---- op application -----------------------------------------------------
    def _call(self, name: str, *args, **attrs) -> Tensor:
        return apply(OPS[name], *args, **attrs)

    def __add__(self, other):
        return apply(OPS["add"], self, other)

    def __radd__(self, other):
        return apply(OPS["add"], other, self)

    def __sub__(self, other):
        return apply(OPS["sub"], self, other)

    def __rsub__(self, other):
        return apply(OPS["sub"], other, self)

    def __mul__(self, other):
        return apply(OPS["mul"], self, other)

    def __rmul__(self, other):
        return apply(OPS["mul"], other, self)

    def __truediv__(self, other):
        return apply(OPS["div"], self, other)

    def __rtruediv__(self, other):
        return apply(OPS["div"], other, self)

    def __pow__(self, other):
        return apply(OPS["pow"], self, other)

    def __rpow__(self, other):
        return apply(OPS["pow"], other, self)

    def __matmul__(self, other):
        return apply(OPS["matmul"], self, other)

    def __rmatmul__(self, other):
        return apply(OPS["matmul"], other, self)

    def __neg__(self):
        return apply(OPS["neg"], self)

    def __pos__(self):
        return self

    def __lt__(self, other):
        return apply(OPS["lt"], self, other)

    def __le__(self, other):
        return apply(OPS["le"], self, other)

    def __gt__(self, other):
        return apply(OPS["gt"], self, other)

    def __ge__(self, other):
        return apply(OPS["ge"], self, other)

    def eq(self, other):
        return apply(OPS["eq"], self, other)

    def ne(self, other):
        return apply(OPS["ne"], self, other)

    def __getitem__(self, index):
        return apply(OPS["getitem"], self, index=_normalize_index(index))

    T = property(_op_method("T", "transpose"))
    mT = property(_op_method("mT"))
    real = property(_op_method("real"))
    imag = property(_op_method("imag"))
    conj = _op_method("conj")

    def is_complex(self) -> bool:
        return self.data.dtype.kind == "c"

    # Elementwise functions as methods (torch style).
    sin = _op_method("sin")
    cos = _op_method("cos")
    tan = _op_method("tan")
    asin = _op_method("asin")
    acos = _op_method("acos")
    atan = _op_method("atan")
    sinh = _op_method("sinh")
    cosh = _op_method("cosh")
    tanh = _op_method("tanh")
    exp = _op_method("exp")
    log = _op_method("log")
    log2 = _op_method("log2")
    log10 = _op_method("log10")
    sqrt = _op_method("sqrt")
    abs = _op_method("abs")
    sign = _op_method("sign")
    sigmoid = _op_method("sigmoid")
    relu = _op_method("relu")
    softplus = _op_method("softplus")

    def __abs__(self):
        return self.abs()

    def add(self, other):
        return self + other

    def mul(self, other):
        return self * other

    def pow(self, other):
        return self**other

    def matmul(self, other):
        return self @ other

    sum = _reduction("sum", "sum")
    mean = _reduction("mean", "mean")
    prod = _reduction("prod", "prod")
    max = _reduction("max", "amax")
    min = _reduction("min", "amin")
    norm = _reduction("norm", "norm")

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return apply(OPS["reshape"], self, shape=tuple(int(s) for s in shape))

    transpose = _op_method("transpose")

    def dot(self, other):
        return apply(OPS["dot"], self, other)


def _normalize_axis(axis):
    if axis is None:
        return None
    if isinstance(axis, (list, tuple)):
        return tuple(int(a) for a in axis)
    return int(axis)


def _normalize_index(index):
    if not isinstance(index, tuple):
        index = (index,)
    out = []
    for item in index:
        if isinstance(item, Tensor):
            item = item.item()
        if isinstance(item, slice) or item is None or item is Ellipsis:
            out.append(item)
        else:
            as_float = float(item)
            if as_float != int(as_float):
                raise ShapeError(f"index {item} is not an integer")
            out.append(int(as_float))
    return tuple(out)


def as_tensor(value, like: Tensor | None = None) -> Tensor:
    """``value`` as a Tensor; Python numbers take the dtype of ``like`` (a constant, no grad)."""
    if isinstance(value, Tensor):
        return value
    if value.__class__ is float and like is not None:  # ``t * 2.5``: the common case
        kind = like.data.__class__
        if (kind is _host.float64 or kind is _host.float32) and _settings().xp is _host:
            return Tensor._wrap(kind(value))  # that NumPy scalar type: dtype.type(value)
    return Tensor._wrap(constant_data(value, None if like is None else like.data))


def constant_data(value, like=None):
    """The array :func:`as_tensor` makes of ``value`` (a Python number or array) beside the
    array ``like``: the constants of an op applied on arrays (the rules' array form)."""
    dtype = like.dtype if like is not None else None
    now = _settings()
    if now.xp is _host and (
        type(value) is float or (type(value) is int and -_INT_LIMIT < value < _INT_LIMIT)
    ):
        # A NumPy scalar: the same number as a 0-d array of that dtype (and what an op on
        # 0-d arrays returns), and NumPy's arithmetic on scalars is much cheaper.
        data = dtype.type(value) if dtype is not None else now.dtype(value)
    else:
        if dtype is not None and dtype.kind != "c" and backend.is_complex(value):
            dtype = backend.COMPLEX_OF[dtype.type]  # a complex number beside a real array
        data = backend.asarray(value, dtype=dtype)
    return data


_settings = backend.settings  # the backend's settings in force (a ContextVar's get)
_host = backend.host
_INT_LIMIT = 2**53  # ints up to here are exact floats


def tensor(data, requires_grad: bool = False, dtype=None, name: str | None = None) -> Tensor:
    """Make a leaf tensor (float64 unless ``dtype`` or the default says otherwise).

    >>> tensor([1., 2.], requires_grad=True)
    tensor([1., 2.], requires_grad=True)
    """
    return Tensor(data, requires_grad=requires_grad, dtype=dtype, name=name)


def check_size(op, arrays, attrs) -> None:
    """Refuse ``op``'s result on ``arrays`` (the operands' data) over the memory limit before
    allocating it (core.limits): for ``tensor.apply`` and for a rule computing on arrays
    (``rules.call``) alike.

    Operands of one shape (or scalars beside them) give a result no larger than the inputs
    already are, so the common case costs a comparison of shapes; one operand with a size
    rule (``x[[0, 0, 0]]``) is always asked.
    """
    if op.size is None:
        return
    shapes = [a.shape for a in arrays]
    if len(shapes) > 1:
        common = None
        for shape in shapes:
            if shape == ():
                continue
            if common is None:
                common = shape
            elif shape != common:
                break
        else:
            if op.kind != "product":
                return
    n = op.size(shapes, attrs)
    limits.check(n, arrays[0].dtype.itemsize, f"{op.name}'s result")


# Shared tuples of a Node's ``needs`` (indexed by 2*needs[0] + needs[1]) and ``shapes`` for
# the common cases: no tuple made per op for them.
_NEEDS2 = ((False, False), (False, True), (True, False), (True, True))
_NEED1 = (True,)
_SCALAR1 = ((),)
_SCALAR2 = ((), ())
_BOTH = (True, True)
# What a forward returns that is an array already (else it is made one: a Python number)
_ARRAY_TYPES = frozenset((backend.host.ndarray, backend.host.float64, backend.host.float32))
_grad_mode = _autograd._state  # grad mode's thread-local (is_grad_enabled, read inline)
_quiet = backend.QUIET.get  # True inside a walk that has set the IEEE error state already
_ignoring = backend.ignoring  # an op's forward with IEEE semantics, made once per forward


def apply(op, *args, **attrs) -> Tensor:
    """Run ``op`` forward on ``args`` and, in grad mode, record its Node: the per-op path of
    the whole engine (the cases of one and two operands written out)."""
    for a in args:
        if not isinstance(a, Tensor):  # a Python number or array among the arguments
            args = _as_inputs(args)
            break
    n = len(args)
    if op.arity is not None and n != op.arity:
        noun = "argument" if op.arity == 1 else "arguments"
        raise TypeError(f"{op.name}() takes {op.arity} {noun}, got {n}")
    if op.size is not None:
        if n == 2 and op.kind != "product":  # check_size's common case, inline
            sa = args[0].data.shape
            sb = args[1].data.shape
            if sa != sb and sa != () and sb != ():
                check_size(op, (args[0].data, args[1].data), attrs)
        else:
            check_size(op, [t.data for t in args], attrs)
    # IEEE semantics (inf and nan, no warnings): inside a walk already in force; an op applied
    # on its own (the Tensor API) enters them for its call
    forward = op.forward if _quiet() else _ignoring(op.forward)
    try:
        if n == 1:
            data = forward(args[0].data, **attrs) if attrs else forward(args[0].data)
        elif n == 2:
            if attrs:
                data = forward(args[0].data, args[1].data, **attrs)
            else:
                data = forward(args[0].data, args[1].data)
        else:
            data = forward(*[t.data for t in args], **attrs)
    except (ValueError, IndexError, TypeError) as exc:
        raise ShapeError(op.shape_message(args, attrs, exc)) from None
    if data.__class__ not in _ARRAY_TYPES and not hasattr(data, "dtype"):
        data = backend.asarray(data, dtype=args[0].data.dtype if args else None)
    out = Tensor.__new__(Tensor)
    out.data = data
    out.grad = None
    out.name = None
    out.requires_grad = False
    out.grad_fn = None
    if op.differentiable_any and _grad_mode.grad_enabled:
        if n == 1:
            x = args[0]
            if x.requires_grad:  # arity 1 (or variadic): differentiable_any is its flag
                shape = x.data.shape
                out.requires_grad = True
                out.grad_fn = Node(
                    op,
                    args,
                    data,
                    attrs,
                    (x.grad_fn or x,),
                    _NEED1,
                    _SCALAR1 if shape == () else (shape,),
                )
        elif n == 2:
            a, b = args
            fa, fb = op.differentiable or _BOTH
            ra = fa and a.requires_grad
            rb = fb and b.requires_grad
            if ra or rb:
                sa = a.data.shape
                sb = b.data.shape
                edges = (a.grad_fn or a if ra else None, b.grad_fn or b if rb else None)
                shapes = _SCALAR2 if sa == () and sb == () else (sa, sb)
                out.requires_grad = True
                out.grad_fn = Node(op, args, data, attrs, edges, _NEEDS2[2 * ra + rb], shapes)
        else:
            _record(op, args, out, attrs)
    return out


def _record(op, inputs: tuple, out: Tensor, attrs: dict) -> None:
    """Record the Node of ``out`` (an op of three or more operands) when an input it
    differentiates requires grad."""
    flags = op.flags(len(inputs))  # () for variadic ops: all inputs
    if not any(d and t.requires_grad for t, d in zip(inputs, flags)):
        return
    edges = [t.grad_fn or (t if t.requires_grad else None) for t in inputs]
    for i, differentiable in enumerate(flags):
        if not differentiable:
            edges[i] = None
    needs = tuple([e is not None for e in edges])
    shapes = tuple([tuple(t.data.shape) for t in inputs])
    out.requires_grad = True
    out.grad_fn = Node(op, inputs, out.data, attrs, tuple(edges), needs, shapes)


def _as_inputs(args: tuple) -> tuple:
    """``args`` with each Python number or array made a constant tensor (``as_tensor``)."""
    if len(args) == 2:  # ``t * 2``, ``2 * t``: the common case, without the generators
        a, b = args
        if isinstance(a, Tensor):
            return (a, as_tensor(b, a))
        if isinstance(b, Tensor):
            return (as_tensor(a, b), b)
    like = next((b for b in args if isinstance(b, Tensor)), None)
    return tuple(b if isinstance(b, Tensor) else as_tensor(b, like) for b in args)
