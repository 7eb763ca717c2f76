"""The FFT family, as numpy.fft spells it and torch.fft differentiates it.

``fft``, ``ifft``, ``rfft``, ``irfft`` (one axis: ``n=``, ``axis=``), ``fft2``, ``ifft2``,
``fftn``, ``ifftn``, ``rfftn``, ``irfftn`` (several axes: ``s=``, ``axes=``), each with
NumPy's ``norm="backward"|"ortho"|"forward"``; ``fftshift``, ``ifftshift`` (``axes=``) and
``fftfreq``, ``rfftfreq`` (``n``, ``d=1.0``: no array argument, no gradient).

Every transform is linear, so its jvp is the op applied to the tangent and its vjp is the
adjoint (PyTorch's convention for complex gradients, dL/dRe z + i dL/dIm z, makes the vjp of
``y = A x`` the conjugate transpose ``A^H g``), written with the family's own ops so that
higher orders and ``create_graph`` work:

* ``fft`` with a norm is adjoint to ``ifft`` with the *dual* norm (backward <-> forward, ortho
  itself): ``fft``'s vjp is ``n ifft(g)`` (torch's fft_c2c_backward); the length ``n=``
  (zero-padding or truncating the input) is undone by truncating or zero-padding back;
* ``rfft``'s vjp zero-pads g to the full length and inverts (torch's fft_r2c_backward), the
  real part of that: ``irfft`` of g with the bins that have a mirror image halved (what
  ``irfft`` counts twice), so the rule stays real and needs no real-part op;
* ``irfft``'s vjp is ``rfft`` of g with the bins that have a mirror image doubled (torch's
  fft_c2r_backward); the n-d forms do the same along their last axis.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as _host

from .. import backend, limits
from .reductions import Word
from .rules import _xp, call
from .table import REQUIRED, Code, Param, Refused, function, register
from .table import Op as _Op

# ---------------------------------------------------------------------------
# The attributes: lengths, norms and spacings, read by the grammar with each Param's parse
# ---------------------------------------------------------------------------

NORMS = ("backward", "ortho", "forward")
#: the norm of the adjoint transform: scaling by 1/n on one side is scaling on the other
_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}
_MAX_LENGTH = 2**31


@dataclass(frozen=True)
class ParsedParam(Param):
    """A :class:`Param` the grammar reads with its own ``parse`` (the constant as written:
    a number, a list or, where ``strings``, a string -> the attribute; a ValueError says
    what it must be)."""

    parse: object = None
    strings: bool = False


def _number(value) -> float:
    """A constant number as written (a ValueError for a list, a string or a complex one)."""
    if isinstance(value, (list, str, complex)) or backend.is_complex(value):
        kind = {list: "a list", str: "a string"}.get(type(value), "a complex number")
        raise ValueError(f"must be a real number, not {kind}")
    return float(value)


def _length(value) -> int:
    number = _number(value)
    if not (math.isfinite(number) and number == math.floor(number)):
        raise ValueError(f"must be a whole number, got {number!r}")
    if not 1 <= number <= _MAX_LENGTH:
        raise ValueError(f"must be a length from 1 to 2**31, got {number:.17g}")
    return int(number)


def _lengths(value) -> tuple:
    items = value if isinstance(value, list) else [value]
    return tuple(_length(v) for v in items)


def _norm_mode(value) -> Word:
    if not isinstance(value, str) or value not in NORMS:
        shown = repr(value) if isinstance(value, str) else "a number"
        raise ValueError(f'must be "backward", "ortho" or "forward", got {shown}')
    return Word(value)


def _spacing(value) -> float:
    number = _number(value)
    if not math.isfinite(number) or number == 0:
        raise ValueError(f"must be a finite number other than 0, got {number!r}")
    return number


def _n_param(required=False) -> ParsedParam:
    return ParsedParam("n", "length", REQUIRED if required else None, parse=_length)


_NORM = ParsedParam("norm", "norm", "backward", parse=_norm_mode, strings=True)
_S = ParsedParam("s", "lengths", None, parse=_lengths)
_ONE_AXIS = (_n_param(), Param("axis", "axis", -1), _NORM)


def _mode(norm) -> str:
    """``norm`` as a plain string (a :class:`Word` prints quoted)."""
    return {m: m for m in NORMS}[norm]


# ---------------------------------------------------------------------------
# Which axes and lengths a transform works on
# ---------------------------------------------------------------------------


def _axis(ndim: int, axis: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of range for an array of {ndim} dimension(s)")
    return axis % ndim


def _plan(shape, s, axes, inverse_real=False) -> tuple[tuple, tuple]:
    """The axes (from 0) and the lengths an n-d transform of an array of ``shape`` works on,
    as NumPy and torch take ``s`` and ``axes``: no axes: the last len(s) axes, or all; no s:
    the input's lengths (``irfftn``'s last: 2 (m - 1)).  Repeated axes are refused, as
    torch refuses them."""
    ndim = len(shape)
    if axes is None:
        axes = tuple(range(ndim - (ndim if s is None else len(s)), ndim))
    elif not isinstance(axes, tuple):
        axes = (axes,)
    if s is not None and len(s) > ndim:
        raise ValueError(f"s has {len(s)} lengths for an array of {ndim} dimension(s)")
    axes = tuple(_axis(ndim, a) for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"the axes {list(axes)} repeat an axis")
    if s is None:
        s = tuple(shape[a] for a in axes)
        if inverse_real and axes:
            s = s[:-1] + (2 * (s[-1] - 1),)
    elif len(s) != len(axes):
        raise ValueError(f"s has {len(s)} lengths for {len(axes)} axes")
    if not axes:
        raise ValueError("a transform of a number: it has no axis (give an array)")
    if min(s) < 1:
        raise ValueError(f"the transform's lengths {list(s)} must be at least 1")
    return tuple(s), axes


def _one_axis(shape, n, axis, inverse_real=False) -> tuple[tuple, tuple]:
    return _plan(shape, None if n is None else (n,), (axis,), inverse_real)


def _half(length: int) -> int:
    """How many bins a real transform of ``length`` numbers keeps: n // 2 + 1."""
    return length // 2 + 1


def _out_shape(name, shape, attrs) -> tuple:
    """The shape of ``name``'s result on an array of ``shape``."""
    s, axes = _lengths_axes(name, shape, attrs)
    out = list(shape)
    for a, k in zip(axes, s):
        out[a] = k
    if name in ("rfft", "rfftn"):
        out[axes[-1]] = _half(s[-1])
    return tuple(out)


#: the transforms along one axis (``n=``, ``axis=``); the others take ``s=``, ``axes=``
_ONE_AXIS_OPS = ("fft", "ifft", "rfft", "irfft")
#: the default axes of the 2-d transforms
_LAST_TWO = (-2, -1)


def _lengths_axes(name, shape, attrs) -> tuple[tuple, tuple]:
    inverse_real = name in ("irfft", "irfftn")
    if name in _ONE_AXIS_OPS:
        return _one_axis(shape, attrs.get("n"), attrs.get("axis", -1), inverse_real)
    axes = attrs.get("axes", _LAST_TWO if name.endswith("2") else None)
    return _plan(shape, attrs.get("s"), axes, inverse_real)


def _explicit(name, s, axes, norm) -> dict:
    """The attributes of ``name`` that say ``s`` (None: the input's) and ``axes`` outright."""
    if name in _ONE_AXIS_OPS:
        return {"n": None if s is None else s[0], "axis": axes[0], "norm": norm}
    return {"s": s, "axes": axes, "norm": norm}


# ---------------------------------------------------------------------------
# Forwards: NumPy's (CuPy's on the GPU) with the axes and lengths made explicit
# ---------------------------------------------------------------------------


def _real_input(name, a):
    if backend.is_complex(a):
        raise TypeError(f"{name}() takes a real array: fft() transforms a complex one")


def _transform(name: str):
    """The forward of ``name`` (numpy.fft's function of that name): n-d ones get explicit
    axes (NumPy 2 deprecates s without axes), real forward transforms a real input."""

    def forward(a, norm="backward", **attrs):
        if name.startswith("rfft"):
            _real_input(name, a)
        s, axes = _lengths_axes(name, a.shape, attrs)
        fn = getattr(_xp().fft, name)
        if name in _ONE_AXIS_OPS:
            return fn(a, n=s[0], axis=axes[0], norm=_mode(norm))
        return fn(a, s=s, axes=axes, norm=_mode(norm))

    forward.__name__ = f"_{name}_forward"
    return forward


def _transform_size(name):
    def size(shapes, attrs) -> int:
        try:
            return math.prod(_out_shape(name, shapes[0], attrs))
        except ValueError:  # the forward says why
            return 0

    return size


# ---------------------------------------------------------------------------
# The rules (engine ops only: higher orders and create_graph differentiate them again)
# ---------------------------------------------------------------------------


def _fit(g, axes, lengths):
    """``g`` made ``lengths`` long along ``axes``: truncated, or zero-padded at the end (the
    adjoint of the length a transform's ``n=``/``s=`` gives its input)."""
    for a, k in zip(axes, lengths):
        have = g.shape[a]
        if have == k:
            continue
        index = (slice(None),) * a + (slice(0, min(have, k)),)
        if have > k:
            g = call("getitem", g, index=index)
        else:
            shape = tuple(g.shape[:a]) + (k,) + tuple(g.shape[a + 1 :])
            g = call("scatter", g, index=index, shape=shape)
    return g


def _bin_weights(g, axis: int, length: int, count: int, inner: float):
    """Weights along ``axis`` of ``g`` (``count`` bins of a real transform of ``length``
    numbers): 1 at the bin 0 and, for an even length, the last (n/2), which have no mirror
    image; ``inner`` at the others, in g's real dtype, shaped to broadcast against g."""
    w = _host.full(count, inner)
    w[0] = 1.0
    if length % 2 == 0 and count == _half(length):
        w[-1] = 1.0
    real = _host.empty(0, dtype=g.dtype).real.dtype
    w = w.astype(real).reshape((count,) + (1,) * (len(g.shape) - 1 - axis))
    return backend.asarray(w, dtype=real)


def _lengths_in(n, axes) -> list:
    return [n.shapes[0][a] for a in axes]


def _adjoint_plan(n) -> tuple[tuple, tuple, str]:
    """The lengths and axes of the node's transform, and the dual of its norm."""
    s, axes = _lengths_axes(n.op.name, n.shapes[0], n.attrs)
    return s, axes, _DUAL[_mode(n.attrs.get("norm", "backward"))]


def _c2c_vjp(inverse: str):
    """The vjp of a complex transform: the other direction with the dual norm, its result
    fitted back to the input's lengths (torch's fft_c2c_backward)."""

    def vjp(n, g):
        s, axes, norm = _adjoint_plan(n)
        back = call(inverse, g, **_explicit(inverse, None, axes, norm))
        return (_fit(back, axes, _lengths_in(n, axes)),)

    return vjp


def _r2c_vjp(inverse: str):
    """rfft's vjp: Re(unnormalized inverse of g zero-padded to the full length), which is
    ``irfft`` of g with the mirrored bins halved (torch's fft_r2c_backward)."""

    def vjp(n, g):
        s, axes, norm = _adjoint_plan(n)
        last = axes[-1]
        half = g * _bin_weights(g, last, s[-1], g.shape[last], 0.5)
        back = call(inverse, half, **_explicit(inverse, s, axes, norm))
        return (_fit(back, axes, _lengths_in(n, axes)),)

    return vjp


def _c2r_vjp(forward: str):
    """irfft's vjp: ``rfft`` of g with the dual norm, the bins with a mirror image doubled
    (torch's fft_c2r_backward), fitted back to the input's lengths."""

    def vjp(n, g):
        s, axes, norm = _adjoint_plan(n)
        gi = call(forward, g, **_explicit(forward, None, axes, norm))
        last = axes[-1]
        gi = gi * _bin_weights(gi, last, s[-1], gi.shape[last], 2.0)
        return (_fit(gi, axes, _lengths_in(n, axes)),)

    return vjp


def _linear_jvp(n, ts):
    """A linear op's jvp: the op on the tangent."""
    return None if ts[0] is None else call(n.op.name, ts[0], **n.attrs)


# ---------------------------------------------------------------------------
# Generated code: numpy.fft, torch.fft and jax.numpy.fft, with the axes and lengths explicit;
# C has no FFT in libm (and no complex values), so the family refuses it
# ---------------------------------------------------------------------------

_NO_C = "C99 with libm has no FFT (and the generated C computes with real numbers only)"


def _transform_code(name: str):
    def spelled(args, node, target):
        s, axes = _lengths_axes(name, node.args[0].value.shape, node.attrs)
        norm = repr(_mode(node.attrs.get("norm", "backward")))
        module = "torch.fft" if target == "torch" else "{xp}.fft"
        where = "dim" if target == "torch" else "axis"
        if name in _ONE_AXIS_OPS:
            return f"{module}.{name}({args[0]}, n={s[0]}, {where}={axes[0]}, norm={norm})"
        where = "dim" if target == "torch" else "axes"
        return f"{module}.{name}({args[0]}, s={s!r}, {where}={axes!r}, norm={norm})"

    return Code(spelled, spelled, spelled, c=Refused(_NO_C))


# ---------------------------------------------------------------------------
# The table's entries
# ---------------------------------------------------------------------------

#: name -> (the op of its vjp, the vjp's maker, PyTorch's grad_fn)
_TRANSFORMS = {
    "fft": ("ifft", _c2c_vjp, "FftC2CBackward0"),
    "ifft": ("fft", _c2c_vjp, "FftC2CBackward0"),
    "fft2": ("ifft2", _c2c_vjp, "FftC2CBackward0"),
    "ifft2": ("fft2", _c2c_vjp, "FftC2CBackward0"),
    "fftn": ("ifftn", _c2c_vjp, "FftC2CBackward0"),
    "ifftn": ("fftn", _c2c_vjp, "FftC2CBackward0"),
    "rfft": ("irfft", _r2c_vjp, "FftR2CBackward0"),
    "irfft": ("rfft", _c2r_vjp, "FftC2RBackward0"),
    "rfftn": ("irfftn", _r2c_vjp, "FftR2CBackward0"),
    "irfftn": ("rfftn", _c2r_vjp, "FftC2RBackward0"),
}


def _params(name: str) -> tuple:
    if name in _ONE_AXIS_OPS:
        return _ONE_AXIS
    axes = _LAST_TWO if name.endswith("2") else None
    return (_S, Param("axes", "axes", axes), _NORM)


for _name, (_other, _rule, _node) in _TRANSFORMS.items():
    register(
        _Op(
            _name,
            _node,
            _transform(_name),
            _rule(_other),
            _linear_jvp,
            saves=False,
            kind="fft",
            printing=function(_name, latex=f"\\operatorname{{{_name}}}"),
            params=_params(_name),
            size=_transform_size(_name),
            batching=("axes",),
            code=_transform_code(_name),
        )
    )


def _shift_code(name: str) -> Code:
    def spelled(args, node, target):
        axes = node.attrs.get("axes")
        if target == "torch":
            return f"torch.fft.{name}({args[0]}, dim={axes!r})"
        return f"{{xp}}.fft.{name}({args[0]}, axes={axes!r})"

    return Code(spelled, spelled, spelled)


for _name, _other in (("fftshift", "ifftshift"), ("ifftshift", "fftshift")):
    register(
        _Op(
            _name,
            "RollBackward0",
            (lambda name: lambda a, axes=None: getattr(_xp().fft, name)(a, axes=axes))(_name),
            (lambda other: lambda n, g: (call(other, g, axes=n.attrs.get("axes")),))(_other),
            _linear_jvp,
            saves=False,
            kind="shape",
            printing=function(_name, latex=f"\\operatorname{{{_name}}}"),
            params=(Param("axes", "axes", None),),
            batching=("axes",),
            spreads_nonfinite=(0,),
            code=_shift_code(_name),
        )
    )


def _frequencies(name: str):
    def forward(n, d=1.0):
        real = _host.empty(0, dtype=backend.settings().dtype).real.dtype
        count = n // 2 + 1 if name == "rfftfreq" else n
        limits.check(count, real.itemsize, f"{name}'s result")  # no input: checked here
        return getattr(_xp().fft, name)(n, d).astype(real, copy=False)

    forward.__name__ = f"_{name}_forward"
    return forward


def _frequencies_code(name: str) -> Code:
    def spelled(args, node, target):
        n, d = node.attrs["n"], float(node.attrs.get("d", 1.0))
        if target == "torch":
            return f"torch.fft.{name}({n}, d={d!r}, dtype={{dtype}})"
        return f"{{xp}}.fft.{name}({n}, d={d!r}).astype({{dtype}})"

    return Code(spelled, spelled, spelled, c=Refused(_NO_C))


for _name in ("fftfreq", "rfftfreq"):
    register(
        _Op(
            _name,
            None,
            _frequencies(_name),
            arity=0,
            saves=False,
            kind="fft",
            printing=function(_name, latex=f"\\operatorname{{{_name}}}"),
            params=(_n_param(required=True), ParsedParam("d", "number", 1.0, parse=_spacing)),
            batching=("rows",),
            code=_frequencies_code(_name),
        )
    )
