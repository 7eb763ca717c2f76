"""The FFT family, as numpy.fft spells it and torch.fft differentiates it.

``fft``, ``ifft``, ``rfft``, ``irfft`` (one axis: ``n=``, ``axis=``), ``fft2``, ``ifft2``,
``rfft2``, ``irfft2``, ``fftn``, ``ifftn``, ``rfftn``, ``irfftn`` (several axes: ``s=``,
``axes=``; the 2-d ones the last two by default), each with
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
from .table import REQUIRED, Code, Param, ParsedParam, Refused, copying, function, register
from .table import Op as _Op

# ---------------------------------------------------------------------------
# The attributes: lengths, norms and spacings, read by the grammar with each Param's parse
# ---------------------------------------------------------------------------

NORMS = ("backward", "ortho", "forward")
#: the norm of the adjoint transform: scaling by 1/n on one side is scaling on the other
_DUAL = {"backward": Word("forward"), "forward": Word("backward"), "ortho": Word("ortho")}
_MAX_LENGTH = 2**31


def _number(value, wanted="a real number") -> float:
    """A constant number as written (a ValueError for a list, a string or a complex one)."""
    if isinstance(value, (list, str, complex)) or backend.is_complex(value):
        kind = "a list" if isinstance(value, list) else "a complex number"
        kind = "a string" if isinstance(value, str) else kind
        raise ValueError(f"must be {wanted}, not {kind}")
    return float(value)


def _length(value) -> int:
    number = _number(value, "a whole number")
    if not (math.isfinite(number) and number == math.floor(number)):
        raise ValueError(f"must be a whole number, got {number!r}")
    if not 1 <= number <= _MAX_LENGTH:
        raise ValueError(f"must be a length from 1 to 2**31, got {number:.17g}")
    return int(number)


def _lengths(value) -> tuple:
    items = value if isinstance(value, list) else [value]
    return tuple(_length(v) for v in items)


def _norm_mode(value) -> Word:
    """NumPy's norm: a string (None: a name was written, not a string in quotes)."""
    if not isinstance(value, str) or value not in NORMS:
        shown = "a name (a string is in quotes)" if value is None else "a number"
        shown = "a list" if isinstance(value, list) else shown
        shown = repr(value) if isinstance(value, str) else shown
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


def _mode(norm) -> str:
    """``norm`` as a plain string (a :class:`Word` prints quoted); a ValueError for another
    (the Tensor API's ``apply`` does not go through the grammar's check)."""
    for mode in NORMS:
        if norm == mode:
            return mode
    raise ValueError(f'norm must be "backward", "ortho" or "forward", got {norm!r}')


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
        raise ValueError(
            "a number has no axis to transform (give an array)" if ndim == 0 else "no axes given"
        )
    if min(s) < 1:
        raise ValueError(f"the transform's lengths {list(s)} must be at least 1")
    return tuple(s), axes


def _half(length: int) -> int:
    """How many bins a real transform of ``length`` numbers keeps: n // 2 + 1."""
    return length // 2 + 1


@dataclass(frozen=True)
class _Transform:
    """One transform of the family: what its rules and its code read of it."""

    name: str
    adjoint: str  # the op its vjp applies (the other direction)
    kind: str  # "c2c", "r2c" (rfft: a real input, half the bins) or "c2r" (irfft)
    one_axis: bool  # n=, axis= (else s=, axes=)
    axes: tuple | None = None  # the default axes of an n-d transform (fft2's last two)

    def params(self) -> tuple:
        if self.one_axis:
            return (_n_param(), Param("axis", "axis", -1), _NORM)
        return (_S, Param("axes", "axes", self.axes), _NORM)

    def plan(self, shape, attrs) -> tuple[tuple, tuple]:
        """The lengths and the axes (from 0) it transforms an array of ``shape`` along."""
        c2r = self.kind == "c2r"
        if self.one_axis:
            n = attrs.get("n")
            return _plan(shape, None if n is None else (n,), (attrs.get("axis", -1),), c2r)
        return _plan(shape, attrs.get("s"), attrs.get("axes", self.axes), c2r)

    def out_shape(self, shape, attrs) -> tuple:
        s, axes = self.plan(shape, attrs)
        out = list(shape)
        for a, k in zip(axes, s):
            out[a] = k
        if self.kind == "r2c":
            out[axes[-1]] = _half(s[-1])
        return tuple(out)

    def explicit(self, s, axes, norm) -> dict:
        """Attributes that say ``s`` (None: the input's) and ``axes`` outright."""
        if self.one_axis:
            return {"n": None if s is None else s[0], "axis": axes[0], "norm": norm}
        return {"s": s, "axes": axes, "norm": norm}


# ---------------------------------------------------------------------------
# Forwards: NumPy's (CuPy's on the GPU) with the axes and lengths made explicit
# ---------------------------------------------------------------------------


def _forward(t: _Transform):
    """numpy.fft's function of the transform's name, with explicit lengths and axes (NumPy
    2 deprecates s without axes); a real forward transform takes a real array only."""

    def forward(a, norm="backward", **attrs):
        if t.kind == "r2c" and backend.is_complex(a):
            raise TypeError(
                f"{t.name}() takes a real array: {t.name[1:]}() transforms a complex one"
            )
        s, axes = t.plan(a.shape, attrs)
        fn = getattr(_xp().fft, t.name)
        if t.one_axis:
            return fn(a, n=s[0], axis=axes[0], norm=_mode(norm))
        return fn(a, s=s, axes=axes, norm=_mode(norm))

    forward.__name__ = f"_{t.name}_forward"
    return forward


def _size(t: _Transform):
    def size(shapes, attrs) -> int:
        try:
            return math.prod(t.out_shape(shapes[0], attrs))
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


def _bin_weights(g, axis: int, length: int, inner: float):
    """Weights of the ``length // 2 + 1`` bins of a real transform of ``length`` numbers
    along ``axis`` of ``g``: 1 at bin 0 and, for an even length, at bin n/2, which have no
    mirror image; ``inner`` at the others; in g's real dtype, shaped to broadcast."""
    count = _half(length)
    w = _host.full(count, inner)
    w[0] = 1.0
    if length % 2 == 0:
        w[-1] = 1.0
    # (a value with no dtype, explain's placeholder, takes float64)
    real = _host.empty(0, dtype=getattr(g, "dtype", _host.float64)).real.dtype
    shaped = w.astype(real).reshape((count,) + (1,) * (len(g.shape) - 1 - axis))
    return backend.asarray(shaped, dtype=real)


def _vjp(t: _Transform):
    """The adjoint: ``t.adjoint`` with the dual norm, fitted back to the input's lengths.

    c2c (torch's fft_c2c_backward): the other direction.  r2c (fft_r2c_backward: g
    zero-padded to the full length, inverted, its real part): ``irfft`` of g with the
    mirrored bins halved, as irfft counts them twice.  c2r (fft_c2r_backward): ``rfft`` of g,
    the mirrored bins doubled."""

    def vjp(n, g):
        s, axes = t.plan(n.shapes[0], n.attrs)
        norm = _DUAL[_mode(n.attrs.get("norm", "backward"))]
        last = axes[-1]
        if t.kind == "r2c":
            g = g * _bin_weights(g, last, s[-1], 0.5)
        back = call(t.adjoint, g, **t.explicit(s if t.kind == "r2c" else None, axes, norm))
        if t.kind == "c2r":
            back = back * _bin_weights(back, last, s[-1], 2.0)
        return (_fit(back, axes, [n.shapes[0][a] for a in axes]),)

    return vjp


def _linear_jvp(n, ts):
    """A linear op's jvp: the op on the tangent."""
    return None if ts[0] is None else call(n.op.name, ts[0], **n.attrs)


def _node(t: _Transform):
    """PyTorch's grad_fn: torch.fft.fft of a real array is a one-sided r2c made two-sided,
    ifft of one the conjugate of that."""
    if t.name not in ("fft", "ifft"):
        return {"c2c": "FftC2CBackward0", "r2c": "FftR2CBackward0"}.get(t.kind, "FftC2RBackward0")
    real = "FftR2CBackward0" if t.name == "fft" else "ConjBackward0"
    return lambda n: "FftC2CBackward0" if backend.is_complex(n.inputs[0]) else real


# ---------------------------------------------------------------------------
# Generated code: numpy.fft, torch.fft and jax.numpy.fft, with the axes and lengths explicit;
# C has no FFT in libm (and no complex values), so the family refuses it
# ---------------------------------------------------------------------------

_NO_C = "C99 with libm has no FFT (and the generated C computes with real numbers only)"


def _code(t: _Transform) -> Code:
    def spelled(args, node, target):
        s, axes = t.plan(node.args[0].value.shape, node.attrs)
        norm = repr(_mode(node.attrs.get("norm", "backward")))
        module = "torch.fft" if target == "torch" else "{xp}.fft"
        if t.one_axis:
            where = "dim" if target == "torch" else "axis"
            return f"{module}.{t.name}({args[0]}, n={s[0]}, {where}={axes[0]}, norm={norm})"
        where = "dim" if target == "torch" else "axes"
        return f"{module}.{t.name}({args[0]}, s={s!r}, {where}={axes!r}, norm={norm})"

    return Code(spelled, spelled, spelled, c=Refused(_NO_C))


# ---------------------------------------------------------------------------
# The table's entries
# ---------------------------------------------------------------------------

_TRANSFORMS = (
    _Transform("fft", "ifft", "c2c", True),
    _Transform("ifft", "fft", "c2c", True),
    _Transform("rfft", "irfft", "r2c", True),
    _Transform("irfft", "rfft", "c2r", True),
    _Transform("fft2", "ifft2", "c2c", False, (-2, -1)),
    _Transform("ifft2", "fft2", "c2c", False, (-2, -1)),
    _Transform("rfft2", "irfft2", "r2c", False, (-2, -1)),
    _Transform("irfft2", "rfft2", "c2r", False, (-2, -1)),
    _Transform("fftn", "ifftn", "c2c", False),
    _Transform("ifftn", "fftn", "c2c", False),
    _Transform("rfftn", "irfftn", "r2c", False),
    _Transform("irfftn", "rfftn", "c2r", False),
)

for _t in _TRANSFORMS:
    register(
        _Op(
            _t.name,
            _node(_t),
            _forward(_t),
            _vjp(_t),
            _linear_jvp,
            saves=False,
            kind="fft",
            printing=function(_t.name, latex=f"\\operatorname{{{_t.name}}}"),
            params=_t.params(),
            size=_size(_t),
            batching=("axes",),
            code=_code(_t),
            # complex-linear (c2c), real-linear (c2r: the Hermitian half read), real input (r2c)
            on_complex={"c2c": "rules", "c2r": "real_linear", "r2c": None}[_t.kind],
            linear=True,
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
        copying(
            _name,
            "RollBackward0",
            (lambda name: lambda a, axes=None: getattr(_xp().fft, name)(a, axes=axes))(_name),
            (lambda other: lambda n, g: (call(other, g, axes=n.attrs.get("axes")),))(_other),
            _linear_jvp,
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
