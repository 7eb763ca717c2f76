"""Numbers of the symbolic differentiator: exact rationals where the input is exact, IEEE
floats otherwise, and ops of the table applied to numbers (constant folding).

A number is a :class:`~fractions.Fraction` when it is short and exact (``3``, ``2.5``,
``1/3``) and a float otherwise (``sqrt(2)``, inf, nan); arithmetic on them follows
NumPy's float64 semantics wherever a float is involved.
"""

from __future__ import annotations

import math
from fractions import Fraction

from .. import backend
from ..tensor import OPS

np = backend.host  # host-side scalar arithmetic (constant folding); arrays go through backend

_BIG = 1 << 62
_INF = math.inf


def _nice(v):
    """``v`` in canonical number form: a Fraction for short exact values (3, 2.5), else a float."""
    if isinstance(v, Fraction):
        if abs(v.numerator) > _BIG or v.denominator > _BIG:
            return _nice(float(v))
        return v
    v = float(v)
    if v - v != 0:  # inf or nan
        return v
    n, d = v.as_integer_ratio()
    if d <= (1 << 20) and abs(n) < (1 << 53):
        return Fraction(n, d)
    return v


def _ieee(fn, *args) -> float:
    with np.errstate(all="ignore"):
        return float(fn(*(np.float64(a) for a in args)))


def _is_exact(v) -> bool:
    return isinstance(v, Fraction)


def _is_int(v) -> bool:
    return isinstance(v, Fraction) and v.denominator == 1


# Python's float + and * are IEEE double operations (overflow gives inf, never an
# exception), the same as NumPy's float64; only ** needs NumPy's semantics.
def n_add(a, b):
    if _is_exact(a) and _is_exact(b):
        return _nice(a + b)
    return _nice(float(a) + float(b))


def n_mul(a, b):
    if _is_exact(a) and _is_exact(b):
        return _nice(a * b)
    return _nice(float(a) * float(b))


def n_pow(a, b):
    """``a**b`` with NumPy's float semantics (0**-1 = inf, (-8)**(1/3) = nan), exact when it can be."""
    if _is_exact(a) and _is_int(b):
        e = int(b)
        if a == 0:
            return Fraction(1) if e == 0 else (Fraction(0) if e > 0 else _INF)
        bits = max(a.numerator.bit_length(), a.denominator.bit_length())
        if abs(e) * bits <= 256:
            return _nice(a**e)
    return _nice(_ieee(np.power, a, b))


def _nkey(v) -> tuple:
    if isinstance(v, Fraction):
        return ("q", v.numerator, v.denominator)
    return ("f", repr(float(v)))


ZERO = Fraction(0)
ONE = Fraction(1)


def _num_label(v) -> str:
    if isinstance(v, Fraction):
        return str(v)
    return repr(v)


# ---- ops of the table applied to numbers ---------------------------------------


def _fold_float(op: str, values: list):
    """The op's forward at these numbers, as a float; None when the forward refuses them
    (or a number is complex: an imaginary constant is never folded)."""
    if any(backend.is_complex(v) for v in values):
        return None
    # a real constant folds in the real dtype of the run's precision (complex128: float64)
    real = backend.host.finfo(backend.default_dtype).dtype
    arrays = [backend.asarray(float(v), dtype=real) for v in values]
    with backend.errstate():
        try:
            out = OPS[op].forward(*arrays)
        except (ArithmeticError, ValueError, TypeError):
            # a forward that refuses these numbers (a domain or type error) leaves the op
            # unfolded; any other exception is a bug or a device failure, and propagates
            return None
    out = backend.to_numpy(out)
    return None if backend.is_complex(out) else float(out)  # polar(1, 2): stays unfolded


_EXACT_FOLD = (
    "abs",
    "sign",
    "relu",
    "floor",
    "ceil",
    "round",
    "maximum",
    "minimum",
    "where",
    "lt",
    "le",
    "gt",
    "ge",
    "eq",
    "ne",
    "neg",
    "add",
    "sub",
    "mul",
)


def _fold(name: str, values: list):
    """The op applied to numbers with the engine's forward, or None when the result is inexact.

    ``exp(0)`` folds to 1 and ``sqrt(4)`` to 2; ``sqrt(2)`` and ``log(2)`` stay
    symbolic (their exact inputs would turn into a rounded float).
    """
    r = _fold_float(name, values)
    if r is None:
        return None
    if not all(_is_exact(v) for v in values) or name in _EXACT_FOLD:
        return _nice(r)
    nice = _nice(r)
    if _is_exact(nice) and (nice.denominator <= 1024 or nice == 0):
        return nice
    return None
