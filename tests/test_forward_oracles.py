"""Every op's forward value against an independent oracle (issue 16).

The op tests elsewhere compare a forward value with the same op (``forward(case, ...)``), so
a wrong forward survives them: ``round`` as truncation, ``<=`` as ``<``, ``where`` testing
``c > 0``, ``max(nan, 0)`` giving 0.  Here each op of the op table gets cases whose expected
values come from somewhere else:

* ``math`` and plain Python float arithmetic (IEEE 754, the same as NumPy's for ``+ - * /``,
  comparisons, ``round`` (half to even) and ``floor``/``ceil``), ``math.fsum``/``math.prod``
  for reductions, loops for products, indexing and shapes;
* literal tables of the IEEE 754 / C99 Annex F special values (``log(-0.0) = -inf``,
  ``sqrt(-0.0) = -0.0``, ``1/-0.0 = -inf``, ``pow(1, nan) = 1``, ...), NumPy's and PyTorch's
  conventions where IEEE leaves a choice (NaN propagates through ``max``/``min``, ``sign(-0.0)``
  is ``+0.0``, ``where`` takes any nonzero condition, NaN included, as true);
* mpmath (SymPy's arbitrary-precision library) at 40 digits for ``sigmoid``, ``softplus``,
  ``cbrt``, ``erfinv``, the gamma family (``gamma``, ``lgamma``, ``digamma``, ``polygamma``)
  and the reductions ``logsumexp``, ``var`` and ``std``, which ``math`` lacks or rounds less
  well (``math.cbrt(27.0)`` is 3.0000000000000004, ``math.gamma`` is good to some 10 ulp);
* Python's ``%`` for ``mod`` (NumPy's ``np.mod``: the result takes the divisor's sign).

Each case goes through three public paths: the Python API the commands call
(``api.eval_of(parse(expr), values)``), the real command line (``eval --json``, in process),
and ``batch`` (all cases in one JSONL input, so rows sharing an expression are evaluated
together, vectorised).  Ops with no spelling in the language (``zeros_like``, ``broadcast_to``,
``sum_to``, ``mT``, ``scatter``) go through ``core.apply``.  Exact oracles are compared
exactly (NaN positions equal, and the sign of every zero), the others with
``assert_allclose(rtol=1e-14)``.  ``test_every_op_has_an_oracle_case`` enumerates the op
table, so a new op without a case fails.
"""

from __future__ import annotations

import cmath
import functools
import json
import math
import warnings
from dataclasses import dataclass, field

import cases_arrays
import cases_fft
import cases_linalg
import mpmath
import numpy as np
import pytest

from autograd_cli.core import OPS, api, apply, no_grad, tensor
from autograd_cli.core.program import topological
from autograd_cli.grammar import parse

NAN = math.nan
INF = math.inf
TINY = 5e-324  # the smallest subnormal
RTOL = 1e-14


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------


@dataclass
class Case:
    op: str  # the op-table entry this case checks
    expr: str | None  # the expression (None: an internal op, through core.apply)
    values: dict  # variable -> number or nested list (may hold nan, inf, -0.0)
    expected: object  # the oracle's value (number or nested list)
    exact: bool = True
    zero_sign: bool = True  # the sign of each zero in `expected` must match too
    attrs: dict = field(default_factory=dict)  # core.apply path only
    label: str = ""
    id: str = ""


CASES: list[Case] = []


def add(op, expr, values, expected, *, exact=True, zero_sign=True, attrs=None, label=""):
    c = Case(op, expr, values, expected, exact, zero_sign, attrs or {}, label)
    c.id = f"{op}:{expr or 'apply'}{'[' + label + ']' if label else ''}#{len(CASES)}"
    CASES.append(c)
    return c


def elementwise(fn, *arrays):
    """Apply the scalar oracle ``fn`` element by element, broadcasting as NumPy does.

    NumPy only lays out the broadcast indices; every value comes from ``fn``.
    """
    arrs = np.broadcast_arrays(*[np.asarray(a, dtype=np.float64) for a in arrays])
    out = np.empty(arrs[0].shape)
    for idx in np.ndindex(out.shape):
        out[idx] = fn(*(float(a[idx]) for a in arrs))
    return out.tolist()


def is_nan(x):
    return x != x


# ---- scalar oracles (plain Python / math; NumPy is not consulted) -----------------------------


def o_round(x):
    # Python's round() on a float rounds half to even (as NumPy's and PyTorch's round do);
    # a zero result keeps the sign of x (IEEE roundToIntegralTiesToEven).
    if not math.isfinite(x):
        return x
    return math.copysign(float(round(x)), x)


def o_floor(x):
    return x if not math.isfinite(x) else math.copysign(float(math.floor(x)), x)


def o_ceil(x):
    return x if not math.isfinite(x) else math.copysign(float(math.ceil(x)), x)


def o_sign(x):
    # NumPy's and PyTorch's sign: +0.0 for both zeros, nan for nan.
    if is_nan(x):
        return NAN
    return 1.0 if x > 0 else -1.0 if x < 0 else 0.0


def o_relu(x):
    return NAN if is_nan(x) else (x if x > 0 else 0.0)


def o_sigmoid(x):
    with mpmath.workdps(40):
        return float(1 / (1 + mpmath.exp(-mpmath.mpf(x))))


def o_softplus(x):
    with mpmath.workdps(40):
        return float(mpmath.log1p(mpmath.exp(mpmath.mpf(x))))


def _mp(fn, *xs):
    with mpmath.workdps(40):
        return float(fn(*(mpmath.mpf(x) for x in xs)))


def o_cbrt(x):
    # the real cube root (mpmath's cbrt of a negative number is the complex principal one)
    return math.copysign(_mp(mpmath.cbrt, abs(x)), x)


def o_erfinv(x):
    return _mp(mpmath.erfinv, x)


def o_gamma(x):
    return _mp(mpmath.gamma, x)


def o_lgamma(x):
    # log|gamma(x)| (C's lgamma; mpmath's loggamma is complex for x < 0)
    return _mp(lambda v: mpmath.log(abs(mpmath.gamma(v))), x)


def o_erfcx(x):
    # exp(x**2) erfc(x) at 50 digits: the product of a huge and a tiny number, exactly
    with mpmath.workdps(50):
        v = mpmath.mpf(x)
        return float(mpmath.erfc(v) * mpmath.exp(v * v))


def o_digamma(x):
    return _mp(mpmath.digamma, x)


def o_polygamma(n, x):
    return _mp(lambda m, v: mpmath.polygamma(int(m), v), n, x)


def o_mod(a, b):
    # Python's float % (NumPy's np.mod, PyTorch's remainder): the result takes b's sign;
    # % raises at b == 0, where np.mod and torch.remainder give nan.
    return NAN if b == 0 else a % b


def o_max(a, b):
    # NaN propagates (NumPy's maximum, PyTorch's max/maximum); not Python's max().
    if is_nan(a) or is_nan(b):
        return NAN
    return a if a >= b else b


def o_min(a, b):
    if is_nan(a) or is_nan(b):
        return NAN
    return a if a <= b else b


def o_where(c, a, b):
    # A condition is true when nonzero, NaN included (NumPy's truth value of a float).
    return a if bool(c) else b


# ---------------------------------------------------------------------------
# Unary elementwise ops: ordinary points (math oracle) and special points (literals)
# ---------------------------------------------------------------------------

GENERAL = [-3.7, -1.0, -0.3, 0.0, 0.25, 1.0, 2.5, 7.0]
POSITIVE = [1e-300, 0.01, 0.5, 1.0, 2.0, 10.0, 1e300]
UNIT = [-0.99, -0.5, -0.1, 0.0, 0.3, 0.75, 0.99]
HALF_PI = math.pi / 2

UNARY = {
    # op: (spellings, oracle for ordinary points, exact?, ordinary points)
    "exp": (["exp(x)"], math.exp, False, GENERAL + [-700.0, 700.0]),
    "log": (["log(x)"], math.log, False, POSITIVE + [math.e]),
    "log2": (["log2(x)"], math.log2, False, POSITIVE + [8.0, 0.125]),
    "log10": (["log10(x)"], math.log10, False, POSITIVE + [1000.0]),
    "sqrt": (["sqrt(x)"], math.sqrt, True, POSITIVE + [0.0, 2.0, 16.0, TINY]),
    "sin": (["sin(x)"], math.sin, False, GENERAL),
    "cos": (["cos(x)"], math.cos, False, GENERAL),
    "tan": (["tan(x)"], math.tan, False, [-1.5, -0.7, 0.0, 0.3, 1.2, 1.5]),
    "asin": (["asin(x)", "arcsin(x)"], math.asin, False, UNIT + [1.0, -1.0]),
    "acos": (["acos(x)", "arccos(x)"], math.acos, False, UNIT + [1.0, -1.0]),
    "atan": (["atan(x)", "arctan(x)"], math.atan, False, GENERAL + [1e300, -1e300]),
    "asinh": (["asinh(x)", "arcsinh(x)"], math.asinh, False, GENERAL + [1e300, -1e300]),
    "acosh": (["acosh(x)", "arccosh(x)"], math.acosh, False, [1.0, 1.0001, 1.5, 2.0, 10.0, 1e300]),
    "atanh": (["atanh(x)", "arctanh(x)"], math.atanh, False, UNIT),
    "sinh": (["sinh(x)"], math.sinh, False, GENERAL),
    "cosh": (["cosh(x)"], math.cosh, False, GENERAL),
    "tanh": (["tanh(x)"], math.tanh, False, GENERAL + [20.0, -20.0]),
    "abs": (["abs(x)"], math.fabs, True, GENERAL + [-1e300, TINY, -TINY]),
    # the complex functions on the real line (complex arguments: tests/test_complex.py)
    "real": (["real(x)"], lambda x: x, True, GENERAL + [-0.0]),
    "imag": (["imag(x)"], lambda x: 0.0, True, GENERAL),
    "conj": (["conj(x)", "conjugate(x)"], lambda x: x, True, GENERAL + [-0.0]),
    "angle": (["angle(x)"], lambda x: math.atan2(0.0, x), True, GENERAL + [-0.0]),
    "sigmoid": (["sigmoid(x)"], o_sigmoid, False, GENERAL + [-30.0, 30.0, -700.0, 40.0]),
    "relu": (["relu(x)"], o_relu, True, GENERAL + [-TINY, TINY, 1e300]),
    "softplus": (["softplus(x)"], o_softplus, False, GENERAL + [-30.0, 30.0, 40.0, -700.0]),
    "sign": (["sign(x)"], o_sign, True, GENERAL + [TINY, -TINY, 1e300]),
    "floor": (
        ["floor(x)"],
        o_floor,
        True,
        GENERAL + [-0.5, 0.5, 1.5, -2.5, 0.999, -0.001, 4503599627370497.0],
    ),
    "ceil": (
        ["ceil(x)"],
        o_ceil,
        True,
        GENERAL + [-0.5, 0.5, 1.5, -2.5, 0.001, -0.999, 4503599627370497.0],
    ),
    "round": (
        ["round(x)"],
        o_round,
        True,
        GENERAL
        + [
            0.5,
            1.5,
            2.5,
            3.5,
            -0.5,
            -1.5,
            -2.5,
            -0.4,
            0.49999999999999994,
            2.4,
            2.6,
            -2.6,
            4503599627370497.0,
        ],
    ),
    "neg": (["-x"], lambda x: -x, True, GENERAL + [-1e300]),
    "log1p": (
        ["log1p(x)"],
        math.log1p,
        False,
        [-0.99, -0.5, -1e-10, 0.0, 1e-300, 0.25, 1.0, 7.0, 1e300],
    ),
    "expm1": (["expm1(x)"], math.expm1, False, GENERAL + [-1e-10, 1e-300, -700.0, 700.0]),
    "cbrt": (["cbrt(x)"], o_cbrt, False, GENERAL + [1e-300, -1e300, TINY, 1e-3]),
    "erf": (["erf(x)"], math.erf, False, GENERAL + [1e-300, -1e-10, 5.0]),
    "erfc": (["erfc(x)"], math.erfc, False, GENERAL + [10.0, 26.0, -6.0]),
    # where erfc underflows (26: 1e-296) and exp(x**2) overflows, and up to erfcx's own
    # overflow below -26.6 (-26: 7.7e293)
    "erfcx": (["erfcx(x)"], o_erfcx, False, GENERAL + [26.0, 1e5, 1e150, 1e-300, -26.0]),
    "erfinv": (["erfinv(x)"], o_erfinv, False, UNIT + [1e-300, -0.999999, 0.9999999999]),
    # between the poles at the whole numbers <= 0, and up to gamma's overflow at 171.6
    "gamma": (
        ["gamma(x)"],
        o_gamma,
        False,
        [-3.7, -2.5, -0.3, 1e-300, 0.25, 2.5, 7.0, 30.0, 170.5, -170.5],
    ),
    "lgamma": (
        ["lgamma(x)"],
        o_lgamma,
        False,
        [-3.7, -2.5, -0.3, 1e-300, 0.25, 1.5, 2.5, 7.0, 1e5, 1e300],
    ),
    "digamma": (
        ["digamma(x)"],
        o_digamma,
        False,
        [-3.7, -2.5, -0.3, 1e-300, 0.25, 1.0, 2.5, 7.0, 1e8, 1e300],
    ),
}

# (x, expected); "~" marks a value compared with rtol (irrational results).
UNARY_SPECIAL = {
    "exp": [(-INF, 0.0), (INF, INF), (NAN, NAN), (-0.0, 1.0), (710.0, INF), (-746.0, 0.0)],
    "log": [
        (0.0, -INF),
        (-0.0, -INF),
        (-1.0, NAN),
        (-TINY, NAN),
        (INF, INF),
        (-INF, NAN),
        (NAN, NAN),
        (1.0, 0.0),
    ],
    "log2": [
        (0.0, -INF),
        (-0.0, -INF),
        (-1.0, NAN),
        (INF, INF),
        (NAN, NAN),
        (1.0, 0.0),
        (8.0, 3.0),
        (0.5, -1.0),
    ],
    "log10": [(0.0, -INF), (-0.0, -INF), (-1.0, NAN), (INF, INF), (NAN, NAN), (1.0, 0.0)],
    "sqrt": [
        (-0.0, -0.0),
        (0.0, 0.0),
        (-1.0, NAN),
        (-TINY, NAN),
        (INF, INF),
        (-INF, NAN),
        (NAN, NAN),
        (4.0, 2.0),
    ],
    "sin": [(-0.0, -0.0), (0.0, 0.0), (INF, NAN), (-INF, NAN), (NAN, NAN)],
    "cos": [(-0.0, 1.0), (INF, NAN), (-INF, NAN), (NAN, NAN)],
    "tan": [(-0.0, -0.0), (INF, NAN), (NAN, NAN)],
    "asin": [
        (-0.0, -0.0),
        (1.5, NAN),
        (-1.0000000000000002, NAN),
        (INF, NAN),
        (NAN, NAN),
        (1.0, "~", HALF_PI),
    ],
    "acos": [(1.0, 0.0), (1.5, NAN), (-INF, NAN), (NAN, NAN), (-1.0, "~", math.pi)],
    "atan": [(-0.0, -0.0), (NAN, NAN), (INF, "~", HALF_PI), (-INF, "~", -HALF_PI)],
    "asinh": [(-0.0, -0.0), (INF, INF), (-INF, -INF), (NAN, NAN)],
    "real": [(INF, INF), (-INF, -INF), (NAN, NAN)],
    "imag": [(INF, 0.0), (NAN, 0.0), (-0.0, 0.0)],
    "conj": [(INF, INF), (-INF, -INF), (NAN, NAN)],
    "angle": [(INF, 0.0), (-INF, "~", math.pi), (NAN, NAN), (-0.0, "~", math.pi)],
    "acosh": [(1.0, 0.0), (0.5, NAN), (-INF, NAN), (INF, INF), (NAN, NAN)],
    "atanh": [(-0.0, -0.0), (1.0, INF), (-1.0, -INF), (1.5, NAN), (INF, NAN), (NAN, NAN)],
    "sinh": [(-0.0, -0.0), (INF, INF), (-INF, -INF), (1000.0, INF), (-1000.0, -INF), (NAN, NAN)],
    "cosh": [(-0.0, 1.0), (INF, INF), (-INF, INF), (1000.0, INF), (NAN, NAN)],
    "tanh": [(-0.0, -0.0), (INF, 1.0), (-INF, -1.0), (1000.0, 1.0), (NAN, NAN)],
    "abs": [(-0.0, 0.0), (-INF, INF), (INF, INF), (NAN, NAN), (-2.5, 2.5)],
    "sigmoid": [
        (-INF, 0.0),
        (INF, 1.0),
        (NAN, NAN),
        (0.0, 0.5),
        (-0.0, 0.5),
        (1000.0, 1.0),
        (-1000.0, 0.0),
    ],
    "relu": [(-INF, 0.0), (INF, INF), (NAN, NAN), (-1e-300, 0.0), (1e-300, 1e-300)],
    "softplus": [
        (-INF, 0.0),
        (INF, INF),
        (NAN, NAN),
        (1000.0, 1000.0),
        (-1000.0, 0.0),
        (0.0, "~", math.log(2.0)),
    ],
    "sign": [
        (-0.0, 0.0),
        (0.0, 0.0),
        (NAN, NAN),
        (INF, 1.0),
        (-INF, -1.0),
        (TINY, 1.0),
        (-TINY, -1.0),
    ],
    "floor": [
        (-0.0, -0.0),
        (-0.5, -1.0),
        (0.5, 0.0),
        (-1e-300, -1.0),
        (INF, INF),
        (-INF, -INF),
        (NAN, NAN),
        (-2.5, -3.0),
        (1e300, 1e300),
    ],
    "ceil": [
        (-0.0, -0.0),
        (-0.5, -0.0),
        (0.5, 1.0),
        (1e-300, 1.0),
        (INF, INF),
        (-INF, -INF),
        (NAN, NAN),
        (-2.5, -2.0),
    ],
    # NumPy/PyTorch round half to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> -0, -2.5 -> -2.
    "round": [
        (0.5, 0.0),
        (1.5, 2.0),
        (2.5, 2.0),
        (3.5, 4.0),
        (-0.5, -0.0),
        (-1.5, -2.0),
        (-2.5, -2.0),
        (-0.4, -0.0),
        (-0.0, -0.0),
        (0.49999999999999994, 0.0),
        (2.6, 3.0),
        (-2.6, -3.0),
        (INF, INF),
        (-INF, -INF),
        (NAN, NAN),
    ],
    "neg": [(0.0, -0.0), (-0.0, 0.0), (INF, -INF), (-INF, INF), (NAN, NAN)],
    # C99 Annex F.9.3.9: log1p(+-0) = +-0, log1p(-1) = -inf, nan below -1
    "log1p": [
        (0.0, 0.0),
        (-0.0, -0.0),
        (-1.0, -INF),
        (-2.0, NAN),
        (-1.0000000000000002, NAN),
        (INF, INF),
        (-INF, NAN),
        (NAN, NAN),
        (TINY, TINY),
        (-TINY, -TINY),
    ],
    # F.9.3.3: expm1(+-0) = +-0, expm1(-inf) = -1
    "expm1": [
        (0.0, 0.0),
        (-0.0, -0.0),
        (INF, INF),
        (-INF, -1.0),
        (NAN, NAN),
        (710.0, INF),
        (-800.0, -1.0),
        (TINY, TINY),
    ],
    # F.9.4.1: cbrt(+-0) = +-0, cbrt(+-inf) = +-inf; the cubes of dyadic numbers exactly
    "cbrt": [
        (0.0, 0.0),
        (-0.0, -0.0),
        (INF, INF),
        (-INF, -INF),
        (NAN, NAN),
        (27.0, 3.0),
        (-8.0, -2.0),
        (0.125, 0.5),
        (-1000.0, -10.0),
        (64.0, 4.0),
    ],
    # F.9.5.1-2: erf(+-0) = +-0, erf(+-inf) = +-1, erfc(-inf) = 2, erfc(+inf) = +0
    "erf": [
        (0.0, 0.0),
        (-0.0, -0.0),
        (INF, 1.0),
        (-INF, -1.0),
        (NAN, NAN),
        (6.0, 1.0),
        (-6.0, -1.0),
    ],
    "erfc": [
        (INF, 0.0),
        (-INF, 2.0),
        (NAN, NAN),
        (0.0, 1.0),
        (-0.0, 1.0),
        (30.0, 0.0),
        (-30.0, 2.0),
    ],
    # erfcx(x) = exp(x**2) erfc(x): 0 at +inf (as 1/(x sqrt(pi))), inf at -inf and below
    # -26.6 (2 exp(x**2) overflows), as SciPy and PyTorch
    "erfcx": [
        (INF, 0.0),
        (-INF, INF),
        (NAN, NAN),
        (0.0, 1.0),
        (-0.0, 1.0),
        (-27.0, INF),
    ],
    # PyTorch's (and SciPy's) erfinv: +-inf at +-1, nan outside [-1, 1], the sign of zero kept
    "erfinv": [
        (0.0, 0.0),
        (-0.0, -0.0),
        (1.0, INF),
        (-1.0, -INF),
        (1.5, NAN),
        (-1.0000000000000002, NAN),
        (INF, NAN),
        (-INF, NAN),
        (NAN, NAN),
        (TINY, TINY),
        (0.5, "~", o_erfinv(0.5)),
    ],
    # F.9.5.4 (tgamma): +-inf at +-0, nan at the negative integers and -inf; gamma(-180.5)
    # is -1.2e-330, below the smallest subnormal
    "gamma": [
        (0.0, INF),
        (-0.0, -INF),
        (-1.0, NAN),
        (-2.0, NAN),
        (-170.0, NAN),
        (INF, INF),
        (-INF, NAN),
        (NAN, NAN),
        (172.0, INF),
        (1.0, 1.0),
        (2.0, 1.0),
        (5.0, 24.0),
        (-180.5, -0.0),
        (0.5, "~", math.sqrt(math.pi)),
    ],
    # F.9.5.3 (lgamma): +0 at 1 and 2, +inf at +-0, the negative integers and +-inf
    "lgamma": [
        (1.0, 0.0),
        (2.0, 0.0),
        (0.0, INF),
        (-0.0, INF),
        (-1.0, INF),
        (-2.0, INF),
        (INF, INF),
        (-INF, INF),
        (NAN, NAN),
        (1e307, INF),
        (0.5, "~", math.log(math.pi) / 2),
    ],
    # PyTorch's digamma: -+inf at +-0, nan at the negative integers and -inf
    "digamma": [
        (0.0, -INF),
        (-0.0, INF),
        (-1.0, NAN),
        (-2.0, NAN),
        (INF, INF),
        (-INF, NAN),
        (NAN, NAN),
        (1.0, "~", -float(mpmath.euler)),
    ],
}


def _special_split(rows):
    exact = [(r[0], r[1]) for r in rows if len(r) == 2]
    approx = [(r[0], r[2]) for r in rows if len(r) == 3]
    return exact, approx


def _build_unary():
    for op, (spellings, oracle, exact, points) in UNARY.items():
        main = spellings[0]
        add(
            op,
            main,
            {"x": points},
            [oracle(p) for p in points],
            exact=exact,
            label="ordinary",
        )
        add(op, main, {"x": points[1]}, oracle(points[1]), exact=exact, label="scalar")
        grid = [points[:3], points[-3:]]
        add(
            op,
            main,
            {"x": grid},
            [[oracle(p) for p in row] for row in grid],
            exact=exact,
            label="2-D",
        )
        for alias in spellings[1:]:
            add(op, alias, {"x": points}, [oracle(p) for p in points], exact=exact, label="alias")
        ex, ap = _special_split(UNARY_SPECIAL[op])
        if ex:
            add(op, main, {"x": [x for x, _ in ex]}, [y for _, y in ex], label="special")
        if ap:
            add(
                op,
                main,
                {"x": [x for x, _ in ap]},
                [y for _, y in ap],
                exact=False,
                label="special~",
            )
    # relu(-0.0) is +0.0, as NumPy's maximum(x, 0) and JAX's relu give; PyTorch's is -0.0
    # (docs/choices.md).  maximum(0, x) would give -0.0 (NumPy returns the second of a tie).
    add("relu", "relu(x)", {"x": [-0.0, 0.0]}, [0.0, 0.0], label="zeros")


# ---------------------------------------------------------------------------
# Binary elementwise ops
# ---------------------------------------------------------------------------

PAIRS = [
    (1.5, -2.25),
    (0.1, 0.2),
    (-3.0, 7.0),
    (2.0, 2.0),
    (-0.5, -0.5),
    (1e300, 1e-300),
    (5.0, 0.3),
    (-7.5, 2.0),
]


def _pairs_case(op, expr, fn, pairs, *, exact=True, zero_sign=True, label=""):
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    add(
        op,
        expr,
        {"a": a, "b": b},
        [fn(x, y) for x, y in pairs],
        exact=exact,
        zero_sign=zero_sign,
        label=label,
    )


ARITH = {
    "add": (
        "a + b",
        lambda a, b: a + b,
        [
            (-0.0, -0.0, -0.0),
            (-0.0, 0.0, 0.0),
            (INF, -INF, NAN),
            (INF, 1.0, INF),
            (NAN, 1.0, NAN),
            (1e308, 1e308, INF),
            (1.0, -1.0, 0.0),
        ],
    ),
    "sub": (
        "a - b",
        lambda a, b: a - b,
        [
            (0.0, 0.0, 0.0),
            (-0.0, 0.0, -0.0),
            (INF, INF, NAN),
            (-INF, INF, -INF),
            (1.0, NAN, NAN),
            (-1e308, 1e308, -INF),
        ],
    ),
    "mul": (
        "a * b",
        lambda a, b: a * b,
        [
            (-0.0, 1.0, -0.0),
            (-1.0, 0.0, -0.0),
            (-0.0, -0.0, 0.0),
            (INF, 0.0, NAN),
            (-INF, 2.0, -INF),
            (NAN, 0.0, NAN),
            (1e200, 1e200, INF),
            (1e-200, 1e-200, 0.0),
        ],
    ),
    "div": (
        "a / b",
        lambda a, b: a / b,
        [
            (1.0, -0.0, -INF),
            (1.0, 0.0, INF),
            (-1.0, 0.0, -INF),
            (-1.0, -0.0, INF),
            (0.0, 0.0, NAN),
            (-0.0, 0.0, NAN),
            (INF, INF, NAN),
            (1.0, INF, 0.0),
            (-1.0, INF, -0.0),
            (0.0, -1.0, -0.0),
            (NAN, 1.0, NAN),
            (INF, -0.0, -INF),
            (1e300, 1e-300, INF),
        ],
    ),
}

POW_ORDINARY = [
    (2.0, 10.0),
    (2.0, -1.0),
    (9.0, 0.5),
    (0.5, 3.3),
    (3.7, -2.2),
    (-2.0, 3.0),
    (-2.0, -2.0),
    (-1.5, 4.0),
    (10.0, 0.0),
    (7.0, 1.0),
    (1e-3, 0.25),
]
# C99 Annex F.9.4.4 (pow) and NumPy/PyTorch: inf and nan, never an exception.
POW_SPECIAL = [
    (0.0, -1.0, INF),
    (-0.0, -1.0, -INF),
    (-0.0, -2.0, INF),
    (0.0, -0.5, INF),
    (0.0, 0.5, 0.0),
    (-0.0, 3.0, -0.0),
    (-0.0, 0.5, 0.0),
    (0.0, 0.0, 1.0),
    (-8.0, 1 / 3, NAN),
    (-1.0, 0.5, NAN),
    (1.0, NAN, 1.0),
    (NAN, 0.0, 1.0),
    (NAN, -0.0, 1.0),
    (NAN, 1.0, NAN),
    (2.0, NAN, NAN),
    (-1.0, INF, 1.0),
    (-1.0, -INF, 1.0),
    (2.0, INF, INF),
    (0.5, INF, 0.0),
    (2.0, -INF, 0.0),
    (0.5, -INF, INF),
    (INF, -1.0, 0.0),
    (INF, 0.5, INF),
    (-INF, 3.0, -INF),
    (-INF, 2.0, INF),
    (-INF, -3.0, -0.0),
    (-INF, -2.0, 0.0),
    (10.0, 400.0, INF),
    (10.0, -400.0, 0.0),
    (-2.0, 3.0, -8.0),
    (4.0, 0.5, 2.0),
]

# Ties, NaN in both argument orders, infinities.
MAXMIN_PAIRS = [
    (1.0, 2.0),
    (2.0, 1.0),
    (2.0, 2.0),
    (-3.0, -3.0),
    (NAN, 0.0),
    (0.0, NAN),
    (NAN, NAN),
    (NAN, -INF),
    (INF, NAN),
    (INF, -INF),
    (-INF, 5.0),
    (1e-300, -1e-300),
    (-1.0, 0.0),
    (0.0, -1.0),
]

COMPARISONS = {
    "lt": ("<", lambda a, b: float(a < b)),
    "le": ("<=", lambda a, b: float(a <= b)),
    "gt": (">", lambda a, b: float(a > b)),
    "ge": (">=", lambda a, b: float(a >= b)),
    "eq": ("==", lambda a, b: float(a == b)),
    "ne": ("!=", lambda a, b: float(a != b)),
}
# Equal operands, both sides, zeros of both signs, the nearest neighbours, nan and inf.
COMPARE_PAIRS = [
    (1.0, 1.0),
    (1.0, 2.0),
    (2.0, 1.0),
    (-0.0, 0.0),
    (0.0, -0.0),
    (0.0, 0.0),
    (1.0, 1.0000000000000002),
    (1.0000000000000002, 1.0),
    (TINY, 0.0),
    (0.0, TINY),
    (-2.5, -2.5),
    (NAN, 1.0),
    (1.0, NAN),
    (NAN, NAN),
    (INF, INF),
    (-INF, INF),
    (INF, 1e308),
    (-INF, -INF),
]

BCAST_A = [[1.5], [-2.0], [0.0]]  # (3, 1)
BCAST_B = [2.0, -2.0, 0.5, 1.5]  # (4,)


def _build_binary():
    for op, (expr, fn, special) in ARITH.items():
        _pairs_case(op, expr, fn, PAIRS, label="ordinary")
        add(
            op,
            expr,
            {"a": [r[0] for r in special], "b": [r[1] for r in special]},
            [r[2] for r in special],
            label="special",
        )
        add(
            op,
            expr,
            {"a": BCAST_A, "b": BCAST_B},
            elementwise(fn, BCAST_A, BCAST_B),
            label="bcast (3,1)x(4,)",
        )
        add(
            op,
            expr,
            {"a": 2.5, "b": [[1.0, -2.0, 4.0], [0.5, 8.0, -0.25]]},
            elementwise(fn, 2.5, [[1.0, -2.0, 4.0], [0.5, 8.0, -0.25]]),
            label="bcast ()x(2,3)",
        )
        add(op, expr, {"a": 3.0, "b": -0.75}, fn(3.0, -0.75), label="scalar")

    # pow: three spellings, ordinary points against math.pow, specials against C99.
    for expr in ("a ** b", "pow(a, b)", "a ^ b"):
        _pairs_case("pow", expr, math.pow, POW_ORDINARY, exact=False, label="ordinary")
    add(
        "pow",
        "a ** b",
        {"a": [p[0] for p in POW_SPECIAL], "b": [p[1] for p in POW_SPECIAL]},
        [p[2] for p in POW_SPECIAL],
        label="special",
    )
    base = [[0.5], [2.0], [9.0]]
    exps = [-1.0, 0.0, 0.5, 2.0]
    add(
        "pow",
        "a ** b",
        {"a": base, "b": exps},
        elementwise(math.pow, base, exps),
        exact=False,
        label="bcast (3,1)x(4,)",
    )
    add("pow", "x ** 3", {"x": [-2.0, 0.5, -0.0]}, [-8.0, 0.125, -0.0], label="const exponent")
    add(
        "pow",
        "2 ** x",
        {"x": [-1.0, 10.0, 0.5]},
        [0.5, 1024.0, math.sqrt(2.0)],
        exact=False,
        label="const base",
    )

    # maximum/minimum: max(a, b)/min(a, b) of two variables, and the explicit spellings.
    for op, fn, spellings in (
        ("maximum", o_max, ("max(a, b)", "maximum(a, b)")),
        ("minimum", o_min, ("min(a, b)", "minimum(a, b)")),
    ):
        for expr in spellings:
            _pairs_case(op, expr, fn, MAXMIN_PAIRS, label="ties,nan,inf")
        a = [[1.0], [NAN], [2.0]]
        b = [2.0, 1.0, NAN, -INF]
        add(op, spellings[0], {"a": a, "b": b}, elementwise(fn, a, b), label="bcast nan")
        add(op, spellings[0], {"a": NAN, "b": 0.0}, NAN, label="scalar nan first")
        add(op, spellings[0], {"a": 0.0, "b": NAN}, NAN, label="scalar nan second")
        add(op, spellings[0], {"a": 4.0, "b": 4.0}, 4.0, label="scalar tie")
        # a tie of zeros of opposite signs is a zero; its sign is left open
        add(
            op,
            spellings[0],
            {"a": [-0.0, 0.0], "b": [0.0, -0.0]},
            [0.0, 0.0],
            zero_sign=False,
            label="signed-zero tie",
        )

    # max(x, c)/min(x, c) against a constant: the clamp ops.
    xs = [-1.0, 0.0, 1.0, NAN, INF, -INF, 1e-300, -1e-300, 2.0, 1.5]
    for op, fn, exprs in (
        (
            "clamp_min",
            o_max,
            (
                ("max(x, 0)", 0.0),
                ("max(0, x)", 0.0),
                ("max(x, 1.5)", 1.5),
                ("max(-1, x)", -1.0),
                ("max(x, nan)", NAN),
            ),
        ),
        (
            "clamp_max",
            o_min,
            (
                ("min(x, 0)", 0.0),
                ("min(0, x)", 0.0),
                ("min(x, 1.5)", 1.5),
                ("min(-1, x)", -1.0),
                ("min(x, -inf)", -INF),
            ),
        ),
    ):
        for expr, c in exprs:
            add(op, expr, {"x": xs}, [fn(x, c) for x in xs], label="ties,nan,inf")
        add(op, exprs[0][0], {"x": NAN}, NAN, label="scalar nan")
        add(
            op,
            exprs[0][0],
            {"x": [[-1.0, 2.0], [0.0, NAN]]},
            [[fn(v, 0.0) for v in row] for row in [[-1.0, 2.0], [0.0, NAN]]],
            label="2-D",
        )
        add(op, exprs[2][0], {"x": [-0.0]}, [fn(-0.0, 1.5)], label="-0.0")

    for op, (symbol, fn) in COMPARISONS.items():
        _pairs_case(op, f"a {symbol} b", fn, COMPARE_PAIRS, label="equality,both sides,nan")
        add(
            op,
            f"a {symbol} b",
            {"a": BCAST_A, "b": BCAST_B},
            elementwise(fn, BCAST_A, BCAST_B),
            label="bcast",
        )
        for x in (0.9, 1.0, 1.1):
            add(op, f"x {symbol} 1", {"x": x}, fn(x, 1.0), label=f"scalar {x} vs const")
            add(op, f"1 {symbol} x", {"x": x}, fn(1.0, x), label=f"const vs scalar {x}")

    # where(c, a, b): any nonzero condition (negative, fractional, > 1, nan, inf) takes a.
    conds = [-2.0, 0.0, 0.5, 3.0, NAN, -0.0, INF, -INF, 1e-300, -TINY, 1.0]
    a = [10.0 + i for i in range(len(conds))]
    b = [-10.0 - i for i in range(len(conds))]
    add(
        "where",
        "where(c, a, b)",
        {"c": conds, "a": a, "b": b},
        [o_where(c, x, y) for c, x, y in zip(conds, a, b)],
        label="conditions",
    )
    add(
        "where",
        "where(c, a, b)",
        {"c": conds, "a": a, "b": b},
        [10.0, -11.0, 12.0, 13.0, 14.0, -15.0, 16.0, 17.0, 18.0, 19.0, 20.0],
        label="literal",
    )
    for c, expected in ((-2.0, 1.0), (0.0, 2.0), (0.5, 1.0), (3.0, 1.0), (NAN, 1.0), (-0.0, 2.0)):
        add(
            "where",
            "where(c, a, b)",
            {"c": c, "a": 1.0, "b": 2.0},
            expected,
            label=f"scalar cond {c}",
        )
    # the untaken branch's nan/inf never leaks; signed zeros pass through unchanged
    add(
        "where",
        "where(c, a, b)",
        {"c": [0.0, 1.0, 1.0, 0.0], "a": [NAN, -0.0, INF, 1.0], "b": [5.0, NAN, 0.0, -0.0]},
        [5.0, -0.0, INF, -0.0],
        label="untaken nan, signed zeros",
    )
    cb = [[1.0], [0.0], [-1.0]]
    ab = [1.0, 2.0, 3.0, 4.0]
    add(
        "where",
        "where(c, a, b)",
        {"c": cb, "a": ab, "b": -5.0},
        elementwise(o_where, cb, ab, -5.0),
        label="bcast (3,1),(4,),()",
    )
    add(
        "where",
        "where(x > 0, x, -x)",
        {"x": [-2.0, 0.0, 3.0, NAN]},
        [2.0, -0.0, 3.0, NAN],
        label="composite",
    )
    add("where", "where(x >= 1, 1, 0)", {"x": [0.5, 1.0, 1.5]}, [0.0, 1.0, 1.0], label="constants")


# ---------------------------------------------------------------------------
# The binary and ternary functions of issue 13: polygamma, atan2, hypot, mod, clip
# ---------------------------------------------------------------------------

POLYGAMMA_X = [-1.5, -0.3, 1e-3, 0.25, 1.0, 2.5, 40.0, 1e8]
# (n, x, expected): the order must be a whole number >= 0 (nan otherwise: torch.polygamma
# takes an int); +-inf at the poles 0, -1, -2, ... with (-1)^(n+1)'s sign for n >= 1
# (PyTorch's zeta, and the limit 1/x^2 of trigamma, where torch's trigamma says 6.6e32);
# digamma's (n = 0) conventions as above; the limit (-1)^(n+1) * 0 at +inf; nan at -inf,
# where there is no limit (torch's zeta gives +-inf there for n >= 2, and nan at +inf).
POLYGAMMA_SPECIAL = [
    (0.5, 1.0, NAN),
    (-1.0, 1.0, NAN),
    (1.5, 0.3, NAN),
    (NAN, 1.0, NAN),
    (1.0, NAN, NAN),
    (0.0, 0.0, -INF),
    (0.0, -0.0, INF),
    (0.0, -1.0, NAN),
    (1.0, 0.0, INF),
    (1.0, -0.0, INF),
    (1.0, -1.0, INF),
    (1.0, -2.0, INF),
    (2.0, 0.0, -INF),
    (2.0, -2.0, -INF),
    (3.0, -1.0, INF),
    (0.0, INF, INF),
    (1.0, INF, 0.0),
    (2.0, INF, -0.0),
    (3.0, INF, 0.0),
    (0.0, -INF, NAN),
    (1.0, -INF, NAN),
    (2.0, -INF, NAN),
    (1.0, 1.0, "~", math.pi**2 / 6),
]

# C99 Annex F.9.1.4 (atan2), all its cases: signed zeros exactly, multiples of pi with rtol.
ATAN2_SPECIAL = [
    (0.0, 0.0, 0.0),
    (-0.0, 0.0, -0.0),
    (0.0, 1.0, 0.0),
    (-0.0, 2.0, -0.0),
    (0.0, INF, 0.0),
    (-0.0, INF, -0.0),
    (1.0, INF, 0.0),
    (-1.0, INF, -0.0),
    (NAN, 1.0, NAN),
    (1.0, NAN, NAN),
    (NAN, NAN, NAN),
    (INF, NAN, NAN),
    (0.0, -0.0, "~", math.pi),
    (-0.0, -0.0, "~", -math.pi),
    (0.0, -1.0, "~", math.pi),
    (-0.0, -1.0, "~", -math.pi),
    (1.0, 0.0, "~", HALF_PI),
    (1.0, -0.0, "~", HALF_PI),
    (-1.0, 0.0, "~", -HALF_PI),
    (1.0, -INF, "~", math.pi),
    (-1.0, -INF, "~", -math.pi),
    (INF, 1.0, "~", HALF_PI),
    (-INF, -1.0, "~", -HALF_PI),
    (INF, -INF, "~", 3 * math.pi / 4),
    (-INF, -INF, "~", -3 * math.pi / 4),
    (INF, INF, "~", math.pi / 4),
    (-INF, INF, "~", -math.pi / 4),
]


# F.9.4.3 (hypot): +inf if either argument is infinite, even with a nan; no overflow
def o_logaddexp(a: float, b: float) -> float:
    """log(exp(a) + exp(b)) at 40 digits."""
    with mpmath.workdps(40):
        return float(mpmath.log(mpmath.exp(a) + mpmath.exp(b)))


LOGADDEXP_SPECIAL = [
    (INF, INF, INF),
    (-INF, -INF, -INF),
    (INF, 1.0, INF),
    (-INF, 1.0, 1.0),
    (NAN, 1.0, NAN),
    (1000.0, 1000.0, 1000.0 + math.log(2.0)),
    (0.0, 0.0, math.log(2.0)),
]

HYPOT_SPECIAL = [
    (3.0, 4.0, 5.0),
    (-3.0, -4.0, 5.0),
    (0.0, -0.0, 0.0),
    (-0.0, -0.0, 0.0),
    (-5.0, 0.0, 5.0),
    (TINY, 0.0, TINY),
    (INF, NAN, INF),
    (NAN, -INF, INF),
    (-INF, 1.0, INF),
    (1.0, INF, INF),
    (NAN, 1.0, NAN),
    (1.0, NAN, NAN),
    (1e308, 1e308, "~", math.sqrt(2.0) * 1e308),
    (1e-200, 1e-200, "~", math.sqrt(2.0) * 1e-200),
]

# mod: Python's % (NumPy's np.mod), nan where b is 0 or a is infinite; a finite a and an
# infinite b of the other sign give b.  A zero result's sign is left open: Python and NumPy
# give it b's sign, PyTorch's remainder a's (remainder(-0.0, 3) is -0.0, np.mod gives 0.0).
MOD_PAIRS = [
    (7.0, 3.0),
    (-7.0, 3.0),
    (7.0, -3.0),
    (-7.0, -3.0),
    (5.5, 2.0),
    (1.0, 0.1),
    (-0.3, 0.7),
    (1e10, 3.0),
    (1e300, 1e-300),
    (-7.5, 2.0),
    (0.1, 0.2),
    (3.0, INF),
    (-3.0, INF),
    (3.0, -INF),
    (-3.0, -INF),
]
MOD_SPECIAL = [
    (3.0, 0.0, NAN),
    (-3.0, -0.0, NAN),
    (0.0, 0.0, NAN),
    (INF, 2.0, NAN),
    (-INF, 2.0, NAN),
    (INF, INF, NAN),
    (NAN, 2.0, NAN),
    (2.0, NAN, NAN),
    (1.0, 0.1, 1.0 % 0.1),
    (-3.0, INF, INF),
    (3.0, -INF, -INF),
]
MOD_ZEROS = [(-0.0, 3.0), (0.0, -3.0), (6.0, -3.0), (-6.0, 3.0), (2.5, 2.5), (0.0, 1.0)]


def o_clip(x, lo, hi):
    # PyTorch's clamp with tensor bounds: min(max(x, lo), hi), nan anywhere gives nan, and
    # hi everywhere when lo > hi.
    return o_min(o_max(x, lo), hi)


# (x, lo, hi): inside, at each bound, beyond, lo == hi, lo > hi, nan in each place, inf.
CLIP_POINTS = [
    (0.5, 0.0, 1.0),
    (0.0, 0.0, 1.0),
    (1.0, 0.0, 1.0),
    (-1.0, 0.0, 1.0),
    (2.0, 0.0, 1.0),
    (1.0, 1.0, 1.0),
    (3.0, 1.0, 1.0),
    (0.0, 2.0, 1.0),
    (1.5, 2.0, 1.0),
    (3.0, 2.0, 1.0),
    (NAN, 0.0, 1.0),
    (0.5, NAN, 1.0),
    (0.5, 0.0, NAN),
    (INF, 0.0, 1.0),
    (-INF, 0.0, 1.0),
    (5.0, -INF, INF),
    (-INF, -INF, INF),
    (INF, -INF, 2.0),
    (-1e300, -TINY, TINY),
    (-2.5, -3.0, -0.0),
]


def _special_rows(op, expr, names, rows, zero_sign=True):
    """Literal rows (args..., expected) exactly, and (args..., "~", expected) with rtol."""
    for exact in (True, False):
        picked = [r for r in rows if (r[-2] != "~") == exact]
        if not picked:
            continue
        k = len(names)
        add(
            op,
            expr,
            {name: [r[i] for r in picked] for i, name in enumerate(names)},
            [r[-1] for r in picked],
            exact=exact,
            zero_sign=zero_sign,
            label="special" if exact else "special~",
        )
        assert all(len(r) == k + (1 if exact else 2) for r in picked), (op, picked)


def _build_polar():
    # polar(r, theta) = r*exp(1j*theta): cmath's rect at ordinary points; at the edges NumPy's
    # complex product (inf*(1+0j) is inf+nanj: inf*0 is nan), as torch.polar's
    pairs = [(2.0, 0.5), (1.0, -math.pi / 3), (0.5, 3.0), (3.0, 0.0), (0.0, 1.0), (-1.0, 2.0)]
    _pairs_case("polar", "polar(a, b)", cmath.rect, pairs, exact=False, zero_sign=False)
    rows = [
        (NAN, 1.0, complex(NAN, NAN)),
        (INF, 0.0, complex(INF, NAN)),
        (1.0, INF, complex(NAN, NAN)),
    ]
    _special_rows("polar", "polar(a, b)", ("a", "b"), rows, zero_sign=False)


def _build_new_binary():
    # polygamma(n, x) against mpmath, orders 0 to 3, x on both sides of the poles
    grid = [(float(n), x) for n in range(4) for x in POLYGAMMA_X]
    _pairs_case("polygamma", "polygamma(a, b)", o_polygamma, grid, exact=False, label="ordinary")
    _special_rows("polygamma", "polygamma(a, b)", ("a", "b"), POLYGAMMA_SPECIAL)
    xs = [[0.25], [2.5], [-1.5]]
    add(
        "polygamma",
        "polygamma(1, x)",
        {"x": xs},
        elementwise(lambda x: o_polygamma(1.0, x), xs),
        exact=False,
        label="const order",
    )
    n, x = [[0.0], [1.0], [2.0]], [0.5, 3.0]
    add(
        "polygamma",
        "polygamma(n, x)",
        {"n": n, "x": x},
        elementwise(o_polygamma, n, x),
        exact=False,
        label="bcast (3,1)x(2,)",
    )
    add("polygamma", "polygamma(n, x)", {"n": 0.0, "x": 2.0}, o_polygamma(0.0, 2.0), exact=False)

    # beta(a, b) against mpmath's (gamma(a) gamma(b) / gamma(a + b) at 30 digits)
    beta_pairs = [(2.0, 3.0), (0.5, 0.5), (10.5, 0.25), (30.0, 40.0), (1e-3, 4.0), (-0.5, 1.0)]
    _pairs_case(
        "beta", "beta(a, b)", lambda a, b: float(mpmath.beta(a, b)), beta_pairs, exact=False
    )
    _special_rows(
        "beta",
        "beta(a, b)",
        ("a", "b"),
        [(0.0, 1.0, INF), (INF, 1.0, 0.0), (NAN, 1.0, NAN), (1.0, 1.0, 1.0)],
    )

    for op, fn, special, spellings in (
        ("atan2", math.atan2, ATAN2_SPECIAL, ("atan2(a, b)", "arctan2(a, b)")),
        ("hypot", math.hypot, HYPOT_SPECIAL, ("hypot(a, b)",)),
        ("logaddexp", o_logaddexp, LOGADDEXP_SPECIAL, ("logaddexp(a, b)",)),
    ):
        for expr in spellings:
            _pairs_case(op, expr, fn, PAIRS, exact=False, label="ordinary")
        _special_rows(op, spellings[0], ("a", "b"), special)
        add(
            op,
            spellings[0],
            {"a": BCAST_A, "b": BCAST_B},
            elementwise(fn, BCAST_A, BCAST_B),
            exact=False,
            label="bcast (3,1)x(4,)",
        )
        add(op, spellings[0], {"a": 3.0, "b": -0.75}, fn(3.0, -0.75), exact=False, label="scalar")

    for expr in ("mod(a, b)", "remainder(a, b)"):
        _pairs_case("mod", expr, o_mod, MOD_PAIRS, label="ordinary")
    _special_rows("mod", "mod(a, b)", ("a", "b"), MOD_SPECIAL)
    _pairs_case("mod", "mod(a, b)", o_mod, MOD_ZEROS, zero_sign=False, label="zeros")
    add(
        "mod",
        "mod(a, b)",
        {"a": BCAST_A, "b": BCAST_B},
        elementwise(o_mod, BCAST_A, BCAST_B),
        zero_sign=False,
        label="bcast (3,1)x(4,)",
    )
    add("mod", "mod(x, 2.5)", {"x": [-1.0, 7.0, 2.6]}, [o_mod(v, 2.5) for v in (-1.0, 7.0, 2.6)])

    x, lo, hi = (list(c) for c in zip(*CLIP_POINTS))
    for expr in ("clip(x, lo, hi)", "clamp(x, lo, hi)"):
        add("clip", expr, {"x": x, "lo": lo, "hi": hi}, elementwise(o_clip, x, lo, hi))
    # a tie of zeros of opposite signs is a zero; its sign is left open (NumPy's maximum
    # gives its second argument, PyTorch's clamp x)
    add(
        "clip",
        "clip(x, lo, hi)",
        {"x": [-0.0, 0.0], "lo": [0.0, -0.0], "hi": [1.0, 1.0]},
        [0.0, 0.0],
        zero_sign=False,
        label="signed-zero tie",
    )
    xb, lob = [[-2.0], [0.5], [NAN]], [0.0, 1.0, -INF, 3.0]
    add(
        "clip",
        "clip(x, lo, hi)",
        {"x": xb, "lo": lob, "hi": 2.0},
        elementwise(o_clip, xb, lob, 2.0),
        label="bcast (3,1),(4,),()",
    )
    xs = [-1.0, 0.0, 0.5, 1.0, 2.0, NAN, INF, -INF]
    add("clip", "clip(x, 0, 1)", {"x": xs}, [o_clip(v, 0.0, 1.0) for v in xs], label="constants")
    add("clip", "clip(x, lo, hi)", {"x": 4.0, "lo": 5.0, "hi": 6.0}, 5.0, label="scalar")


# ---------------------------------------------------------------------------
# Reductions (axis, keepdims, negative and tuple axes, ties, nan, empty)
# ---------------------------------------------------------------------------


def o_reduce(fn, x, axis=None, keepdims=False):
    """Reduce nested list ``x`` with the Python reducer ``fn`` (list of floats -> float)."""
    arr = np.asarray(x, dtype=np.float64)
    nd = arr.ndim
    if axis is None:
        axes = tuple(range(nd))
    else:
        axes = tuple(a % nd for a in (axis if isinstance(axis, tuple) else (axis,)))
    keep = [i for i in range(nd) if i not in axes]
    groups: dict = {}
    for idx in np.ndindex(arr.shape):
        groups.setdefault(tuple(idx[i] for i in keep), []).append(float(arr[idx]))
    out_shape = tuple(arr.shape[i] for i in keep)
    out = np.empty(out_shape)
    for key in np.ndindex(out_shape):
        out[key] = fn(groups.get(key, []))
    if keepdims:
        out = out.reshape(tuple(1 if i in axes else s for i, s in enumerate(arr.shape)))
    return out.tolist()


def r_sum(xs):
    return math.fsum(xs)


def r_mean(xs):
    return math.fsum(xs) / len(xs) if xs else NAN


def r_prod(xs):
    return math.prod(xs)


def r_max(xs):
    return NAN if any(is_nan(v) for v in xs) else max(xs)


def r_min(xs):
    return NAN if any(is_nan(v) for v in xs) else min(xs)


def r_norm(xs):
    return math.sqrt(math.fsum(v * v for v in xs))


def r_logsumexp(xs):
    # log(sum(exp)) at 40 digits, no overflow: -inf for nothing (log 0), as torch.logsumexp
    with mpmath.workdps(40):
        return float(mpmath.log(mpmath.fsum(mpmath.exp(mpmath.mpf(v)) for v in xs)))


def _mp_var(xs):
    # the population variance (ddof=0, torch's correction=0) at 40 digits; nan for nothing
    if not xs:
        return mpmath.mpf("nan")
    vs = [mpmath.mpf(v) for v in xs]
    mean = mpmath.fsum(vs) / len(vs)
    return mpmath.fsum((v - mean) ** 2 for v in vs) / len(vs)


def r_var(xs):
    with mpmath.workdps(40):
        return float(_mp_var(xs))


def r_std(xs):
    with mpmath.workdps(40):
        return float(mpmath.sqrt(_mp_var(xs)))


REDUCERS = {
    "sum": r_sum,
    "mean": r_mean,
    "prod": r_prod,
    "amax": r_max,
    "amin": r_min,
    "norm": r_norm,
    "logsumexp": r_logsumexp,
    "variance": r_var,
    "std": r_std,
}
SPELLING = {
    "sum": "sum",
    "mean": "mean",
    "prod": "prod",
    "amax": "max",
    "amin": "min",
    "norm": "norm",
    "logsumexp": "logsumexp",
    "variance": "var",
    "std": "std",
}

# Dyadic values (multiples of 1/4): sums, products and squares are exact in float64, so the
# oracle is exact whatever the summation order; RANDOM data is compared with rtol.
DYADIC = np.arange(24, dtype=np.float64).reshape(2, 3, 4) / 4 - 2.75
DYADIC[0, 1, 2] = DYADIC[1, 0, 3] = 1.25  # ties for max/min
RANDOM = np.random.default_rng(16).uniform(0.5, 2.0, size=(3, 5))
AXES = [
    (None, False),
    (0, False),
    (1, False),
    (2, False),
    (-1, False),
    (0, True),
    (-2, True),
    ((0, 2), False),
    ((1, 2), True),
    (None, True),
]


def _axis_text(axis, keepdims):
    parts = []
    if axis is not None:
        parts.append("axis=" + (str(list(axis)) if isinstance(axis, tuple) else str(axis)))
    if keepdims:
        parts.append("keepdims=1")
    return ", ".join(parts)


def _build_reductions():
    for op, fn in REDUCERS.items():
        name = SPELLING[op]
        # norm: sqrt of an exact sum of squares, compared with rtol anyway; logsumexp, var
        # and std round (a log, a mean of 24 numbers, a sqrt)
        exact_ok = op not in ("norm", "logsumexp", "variance", "std")
        for axis, keepdims in AXES:
            extra = _axis_text(axis, keepdims)
            expr = f"{name}(A{', ' + extra if extra else ''})"
            add(
                op,
                expr,
                {"A": DYADIC.tolist()},
                o_reduce(fn, DYADIC.tolist(), axis, keepdims),
                exact=exact_ok,
                label="dyadic",
            )
        for axis in (None, 0, 1):
            expr = f"{name}(A)" if axis is None else f"{name}(A, axis={axis})"
            add(
                op,
                expr,
                {"A": RANDOM.tolist()},
                o_reduce(fn, RANDOM.tolist(), axis),
                exact=op in ("amax", "amin"),
                label="random",
            )
        add(op, f"{name}(x)", {"x": 2.5}, fn([2.5]), exact=exact_ok, label="scalar")
        add(
            op,
            f"{name}(v)",
            {"v": [3.0, -1.0, 0.5]},
            fn([3.0, -1.0, 0.5]),
            exact=exact_ok,
            label="vector",
        )
        if op in ("sum", "mean", "prod", "norm"):
            # the positional axis form, sum(A, 1)
            add(
                op,
                f"{name}(A, 1)",
                {"A": DYADIC[0].tolist()},
                o_reduce(fn, DYADIC[0].tolist(), 1),
                exact=exact_ok,
                label="positional axis",
            )

    # max/min: NaN propagates wherever it stands, in full and axis reductions; ties.
    for op, name in (("amax", "max"), ("amin", "min")):
        fn = REDUCERS[op]
        for v in (
            [NAN, 1.0, 2.0],
            [1.0, NAN, 2.0],
            [1.0, 2.0, NAN],
            [NAN, NAN],
            [NAN, -INF],
            [INF, NAN],
            [3.0, 1.0, 3.0],
            [-INF, INF, 0.0],
            [-2.0, -2.0],
        ):
            add(op, f"{name}(v)", {"v": v}, fn(v), label=f"{v}")
        m = [[1.0, NAN, 3.0], [4.0, 5.0, -INF]]
        for axis in (0, 1, -1):
            add(op, f"{name}(A, axis={axis})", {"A": m}, o_reduce(fn, m, axis), label="nan axis")
        add(
            op,
            f"{name}(A, axis=1, keepdims=1)",
            {"A": m},
            o_reduce(fn, m, 1, True),
            label="nan keepdims",
        )

    specials = {
        "sum": [
            ([INF, -INF], NAN),
            ([INF, 1.0], INF),
            ([NAN, 1.0], NAN),
            ([1e308, 1e308], INF),
            ([], 0.0),
        ],
        "mean": [([INF, -INF], NAN), ([NAN, 1.0], NAN), ([-INF, 1.0], -INF), ([], NAN)],
        "prod": [
            ([0.0, INF], NAN),
            ([-1.0, 0.0], -0.0),
            ([1e200, 1e200], INF),
            ([NAN, 0.0], NAN),
            ([], 1.0),
        ],
        "norm": [
            ([INF, 1.0], INF),
            ([-INF], INF),
            ([NAN, 1.0], NAN),
            ([3.0, -4.0], 5.0),
            ([0.0, -0.0], 0.0),
            ([], 0.0),
        ],
        # torch.logsumexp: -inf for nothing and for all -inf, +inf for any +inf
        "logsumexp": [
            ([-INF, -INF], -INF),
            ([INF, 1.0], INF),
            ([INF, -INF], INF),
            ([INF, INF], INF),
            ([NAN, 1.0], NAN),
            ([NAN, INF], NAN),
            ([-INF, 0.0], 0.0),
            ([], -INF),
        ],
        # torch.var/std(correction=0): nan with an inf (inf - inf) and for nothing, 0 for a
        # constant; var overflows to inf past the largest float
        "variance": [
            ([INF, 1.0], NAN),
            ([-INF], NAN),
            ([NAN, 1.0], NAN),
            ([2.0, 2.0, 2.0], 0.0),
            ([1e200, -1e200], INF),
            ([1.0, 2.0, 4.0, 7.0], 5.25),
            ([], NAN),
        ],
        "std": [
            ([INF, 1.0], NAN),
            ([NAN, 1.0], NAN),
            ([-3.0, -3.0], 0.0),
            ([1.0, 3.0], 1.0),
            ([], NAN),
        ],
    }
    for op, rows in specials.items():
        for v, expected in rows:
            add(op, f"{SPELLING[op]}(v)", {"v": v}, expected, label=f"special {v}")
    # reductions over an empty axis
    empty = [[], []]
    add("sum", "sum(A, axis=1)", {"A": empty}, [0.0, 0.0], label="empty axis")
    add("prod", "prod(A, axis=1)", {"A": empty}, [1.0, 1.0], label="empty axis")
    add("mean", "mean(A, axis=0)", {"A": empty}, [], label="empty result")
    add("norm", "norm(A, axis=1)", {"A": empty}, [0.0, 0.0], label="empty axis")
    add("logsumexp", "logsumexp(A, axis=1)", {"A": empty}, [-INF, -INF], label="empty axis")
    add("variance", "var(A, axis=1)", {"A": empty}, [NAN, NAN], label="empty axis")
    add("std", "std(A, axis=1, keepdims=1)", {"A": empty}, [[NAN], [NAN]], label="empty axis")
    # logsumexp without overflow or underflow, along an axis with infinities and nan
    big = [[1000.0, 1000.0], [-1000.0, -1001.0], [-INF, 5.0], [INF, NAN]]
    for axis in (1, -1):
        add(
            "logsumexp",
            f"logsumexp(A, axis={axis})",
            {"A": big},
            o_reduce(r_logsumexp, big, axis),
            exact=False,
            label="large",
        )
    m = [[1.0, NAN, 3.0], [4.0, 5.0, -INF]]
    for op in ("variance", "std"):
        add(
            op,
            f"{SPELLING[op]}(A, axis=0)",
            {"A": m},
            o_reduce(REDUCERS[op], m, 0),
            exact=False,
            label="nan inf axis",
        )


# ---------------------------------------------------------------------------
# Products, shapes, indexing, array literals
# ---------------------------------------------------------------------------


def o_matmul(a, b):
    """NumPy's matmul semantics (vector promotion, batch broadcasting) with fsum loops."""
    A = np.asarray(a, dtype=np.float64)
    B = np.asarray(b, dtype=np.float64)
    va, vb = A.ndim == 1, B.ndim == 1
    if va:
        A = A[None, :]
    if vb:
        B = B[:, None]
    batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    A = np.broadcast_to(A, batch + A.shape[-2:])
    B = np.broadcast_to(B, batch + B.shape[-2:])
    n, k, m = A.shape[-2], A.shape[-1], B.shape[-1]
    out = np.empty(batch + (n, m))
    for bi in np.ndindex(batch):
        for i in range(n):
            for j in range(m):
                out[bi + (i, j)] = math.fsum(
                    float(A[bi + (i, t)]) * float(B[bi + (t, j)]) for t in range(k)
                )
    if va:
        out = out[..., 0, :]
    if vb:
        out = out[..., 0]
    return out.tolist() if out.ndim else float(out)


def _dyadic(shape, seed):
    rng = np.random.default_rng(seed)
    return (rng.integers(-12, 13, size=shape) / 4).tolist()


def _flatten(x):
    if not isinstance(x, list):
        return [x]
    return [v for item in x for v in _flatten(item)]


def _group(flat, shape):
    if not shape:
        return flat[0]
    step = len(flat) // shape[0] if shape[0] else 0
    return [_group(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


def _build_products_and_shapes():
    for sa, sb, seed in (
        ((4,), (4,), 1),
        ((3, 4), (4,), 2),
        ((4,), (4, 3), 3),
        ((3, 4), (4, 2), 4),
        ((2, 3, 4), (4, 5), 5),
        ((2, 1, 2, 3), (3, 3, 2), 6),
        ((4,), (2, 4, 3), 7),
        ((2, 3, 4), (4,), 8),
        ((1, 1), (1, 1), 9),
    ):
        a, b = _dyadic(sa, seed), _dyadic(sb, seed + 100)
        add("matmul", "A @ B", {"A": a, "B": b}, o_matmul(a, b), label=f"{sa}@{sb}")
    a, b = _dyadic((2, 3), 10), _dyadic((3, 2), 11)
    add("matmul", "matmul(A, B)", {"A": a, "B": b}, o_matmul(a, b), label="spelled")
    rng = np.random.default_rng(12)
    a, b = rng.uniform(0.5, 2, size=(3, 5)).tolist(), rng.uniform(0.5, 2, size=(5, 2)).tolist()
    add("matmul", "A @ B", {"A": a, "B": b}, o_matmul(a, b), exact=False, label="random")
    add("matmul", "A @ B", {"A": [[INF, 1.0]], "B": [[0.0], [1.0]]}, [[NAN]], label="inf*0")
    add("matmul", "u @ v", {"u": [], "v": []}, 0.0, label="empty")

    for u, v, label in (
        (_dyadic((5,), 13), _dyadic((5,), 14), "dyadic"),
        ([1.0, INF], [1.0, 1.0], "inf"),
        ([INF, 1.0], [0.0, 1.0], "inf*0"),
        ([NAN, 1.0], [0.0, 1.0], "nan"),
        ([], [], "empty"),
    ):
        add("dot", "dot(u, v)", {"u": u, "v": v}, o_matmul(u, v) if u else 0.0, label=label)
    u, v = rng.uniform(0.5, 2, size=7).tolist(), rng.uniform(0.5, 2, size=7).tolist()
    add("dot", "dot(u, v)", {"u": u, "v": v}, o_matmul(u, v), exact=False, label="random")

    T = _dyadic((2, 3, 4), 15)
    M = _dyadic((3, 4), 16)
    add("transpose", "M.T", {"M": M}, [[M[i][j] for i in range(3)] for j in range(4)], label=".T")
    add(
        "transpose",
        "transpose(M)",
        {"M": M},
        [[M[i][j] for i in range(3)] for j in range(4)],
        label="call",
    )
    add(
        "transpose",
        "T.T",
        {"T": T},
        [[[T[i][j][k] for i in range(2)] for j in range(3)] for k in range(4)],
        label="3-D",
    )
    add("transpose", "v.T", {"v": [1.0, NAN, -0.0]}, [1.0, NAN, -0.0], label="1-D")
    add("transpose", "x.T", {"x": 3.5}, 3.5, label="scalar")

    flat = _flatten(T)
    for shape in ((4, 6), (24,), (2, 12), (3, 2, 4), (-1,), (6, -1)):
        target = tuple(24 // -math.prod(shape) if s == -1 else s for s in shape)
        add(
            "reshape",
            f"reshape(T, {list(shape)})",
            {"T": T},
            _group(flat, target),
            label=str(shape),
        )
    add("reshape", "reshape(x, [1, 1])", {"x": -0.0}, [[-0.0]], label="scalar")
    add("reshape", "reshape(v, [])", {"v": [NAN]}, NAN, label="to scalar")

    v = [10.0, 11.0, NAN, -0.0, 14.0]
    for index, expected in (
        ("2", v[2]),
        ("-1", v[-1]),
        ("3", v[3]),
        ("1:3", v[1:3]),
        (":2", v[:2]),
        ("3:", v[3:]),
        ("0:-1", v[0:-1]),
        ("-2:", v[-2:]),
        ("4:1", v[4:1]),
    ):
        add("getitem", f"v[{index}]", {"v": v}, expected, label=index)
    for index, expected in (
        ("1", M[1]),
        ("1, 2", M[1][2]),
        ("-1, -1", M[-1][-1]),
        ("1, 0:2", M[1][0:2]),
        (":, 1", [row[1] for row in M]),
        ("0:2", M[0:2]),
        ("1:, 2:", [row[2:] for row in M[1:]]),
    ):
        add("getitem", f"M[{index}]", {"M": M}, expected, label=index)
    add("getitem", "T[1, 2, 3]", {"T": T}, T[1][2][3], label="3-D")
    add("getitem", "T[0][1]", {"T": T}, T[0][1], label="chained")
    v = [1.5, NAN, -0.0, 4.0]
    add("getitem", "v[[3, 0, 0]]", {"v": v}, [4.0, 1.5, 1.5], label="int array")
    add("getitem", "v[[-1, 2]]", {"v": v}, [4.0, -0.0], label="negative")
    add("getitem", "v[[[0, 1], [3, 3]]]", {"v": v}, [[1.5, NAN], [4.0, 4.0]], label="2-D ints")
    add("getitem", "M[[2, 0], [1, 3]]", {"M": M}, [M[2][1], M[0][3]], label="pairs")
    add("getitem", "M[:, [3, 0]]", {"M": M}, [[row[3], row[0]] for row in M], label="columns")
    add(
        "getitem",
        "T[[1, 0], :, [0, 3]]",
        {"T": T},
        [[T[1][j][0] for j in range(len(T[0]))], [T[0][j][3] for j in range(len(T[0]))]],
        label="apart",
    )

    add("stack", "[a, b]", {"a": 1.5, "b": NAN}, [1.5, NAN], label="scalars")
    add("stack", "[a * 2, b + 1, -a]", {"a": 1.5, "b": -0.5}, [3.0, 0.5, -1.5], label="exprs")
    add(
        "stack",
        "[[a, 1], [2, b]]",
        {"a": -0.0, "b": INF},
        [[-0.0, 1.0], [2.0, INF]],
        label="nested",
    )
    add("stack", "[v, 1]", {"v": [2.0, 3.0]}, [[2.0, 3.0], [1.0, 1.0]], label="broadcast const")
    add(
        "stack",
        "[v, w]",
        {"v": [1.0, 2.0], "w": [3.0, NAN]},
        [[1.0, 2.0], [3.0, NAN]],
        label="vectors",
    )
    add("stack", "[a]", {"a": 4.0}, [4.0], label="one")


# ---------------------------------------------------------------------------
# Array functions (core/ops/arrays.py): running sums, flips, joins, by Python loops
# ---------------------------------------------------------------------------


def o_cumsum(xs):
    out, total = [], 0.0
    for x in xs:
        total = total + x  # left to right, as NumPy's cumsum adds
        out.append(total)
    return out


def _build_array_functions():
    v = [1.5, -0.0, NAN, 2.0]
    add("cumsum", "cumsum(v)", {"v": v}, o_cumsum(v), label="nan carries on")
    w = [1e308, 1e308, -INF]
    add("cumsum", "cumsum(w)", {"w": w}, o_cumsum(w), label="overflow")
    M = [[1.0, 2.0, 3.0], [0.5, -0.0, 4.0]]
    add("cumsum", "cumsum(M)", {"M": M}, o_cumsum([x for row in M for x in row]), label="flat")
    add("cumsum", "cumsum(M, axis=1)", {"M": M}, [o_cumsum(row) for row in M], label="rows")
    cols = [o_cumsum([row[j] for row in M]) for j in range(3)]
    add("cumsum", "cumsum(M, 0)", {"M": M}, [[c[i] for c in cols] for i in range(2)], label="cols")
    add("cumsum", "cumsum(x)", {"x": -0.0}, [-0.0], label="scalar")

    add("flip", "flip(v)", {"v": v}, v[::-1], label="vector")
    add("flip", "flip(M, axis=0)", {"M": M}, M[::-1], label="rows")
    add("flip", "flip(M, 1)", {"M": M}, [row[::-1] for row in M], label="cols")
    add("flip", "flip(M)", {"M": M}, [row[::-1] for row in M[::-1]], label="all")
    add("flip", "flip(M, [0, -1])", {"M": M}, [row[::-1] for row in M[::-1]], label="list")
    add("flip", "flip(x)", {"x": NAN}, NAN, label="scalar")

    add("concatenate", "concatenate([v, w])", {"v": v, "w": w}, v + w, label="vectors")
    add("concatenate", "cat([M, M], axis=0)", {"M": M}, M + M, label="rows")
    add(
        "concatenate",
        "concatenate([M, [[9], [8]]], 1)",
        {"M": M},
        [M[0] + [9.0], M[1] + [8.0]],
        label="const column",
    )
    add("concatenate", "concatenate([v])", {"v": v}, v, label="one")


# ---------------------------------------------------------------------------
# Internal ops (no spelling in the language): through core.apply
# ---------------------------------------------------------------------------


def _build_internal():
    x = [[1.0, NAN], [INF, -0.0], [-3.0, 2.0]]
    add("zeros_like", None, {"x": x}, [[0.0, 0.0]] * 3, label="nan inf -0")
    add("zeros_like", None, {"x": -2.0}, 0.0, label="scalar")
    v = [1.0, NAN, -0.0]
    add("broadcast_to", None, {"x": v}, [v, v], attrs={"shape": (2, 3)}, label="(3,)->(2,3)")
    add("broadcast_to", None, {"x": 7.0}, [[7.0, 7.0]], attrs={"shape": (1, 2)}, label="()->(1,2)")
    add(
        "broadcast_to",
        None,
        {"x": [[1.0], [2.0]]},
        [[[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]] * 2,
        attrs={"shape": (2, 2, 3)},
        label="(2,1)->(2,2,3)",
    )
    T = DYADIC.tolist()
    add(
        "sum_to",
        None,
        {"x": T},
        o_reduce(r_sum, T, (0, 2), True)[0],
        attrs={"shape": (3, 1)},
        label="(2,3,4)->(3,1)",
    )
    add(
        "sum_to",
        None,
        {"x": T},
        o_reduce(r_sum, T, (0, 1), False),
        attrs={"shape": (4,)},
        label="(2,3,4)->(4,)",
    )
    add("sum_to", None, {"x": T}, r_sum(_flatten(T)), attrs={"shape": ()}, label="->()")
    add(
        "sum_to",
        None,
        {"x": [[1.0, INF], [NAN, 2.0]]},
        [[NAN, INF]],
        attrs={"shape": (1, 2)},
        label="nan inf",
    )
    add(
        "mT",
        None,
        {"x": T},
        [[[T[b][i][j] for i in range(3)] for j in range(4)] for b in range(2)],
        label="(2,3,4)",
    )
    add("mT", None, {"x": [[1.0, NAN]]}, [[1.0], [NAN]], label="(1,2)")
    add(
        "scatter",
        None,
        {"x": [5.0, NAN]},
        [0.0, 5.0, NAN, 0.0],
        attrs={"index": (slice(1, 3),), "shape": (4,)},
        label="slice",
    )
    # scatter adds into zeros (the VJP of indexing accumulates): 0.0 + -0.0 is +0.0
    add(
        "scatter",
        None,
        {"x": [1.5, -0.0]},
        [[0.0, 0.0], [0.0 + 1.5, 0.0 + -0.0], [0.0, 0.0]],
        attrs={"index": (1, slice(None)), "shape": (3, 2)},
        label="row",
    )
    add(
        "scatter",
        None,
        {"x": 2.0},
        [[0.0, 0.0, 0.0], [0.0, 0.0, 2.0]],
        attrs={"index": (1, 2), "shape": (2, 3)},
        label="element",
    )
    # a cast to float64 (to float32 and complex: tests/test_tensor_api.py), every value kept
    add(
        "astype",
        None,
        {"x": x},
        x,
        attrs={"dtype": "float64", "source": "float64"},
        label="nan inf -0",
    )


# ---------------------------------------------------------------------------
# Issue 27's special functions: sinc, the Bessel functions, the incomplete gamma and beta
# functions against mpmath at 40 digits (sincpi, besselj, besseli, gammainc, betainc); at
# the edges SciPy's and PyTorch's conventions (nan at +-inf for j0, j1, i0 and i1)
# ---------------------------------------------------------------------------


def _mp_of(fn):
    return lambda *xs: _mp(fn, *xs)


def _scaled_bessel(order):
    return _mp_of(lambda v: mpmath.besseli(order, v) * mpmath.exp(-abs(v)))


BESSEL_POINTS = [-3.7, -1.0, -0.3, 0.0, 0.25, 1.0, 2.5, 7.0, 10.0, 30.0, 1e-300, -50.0]
SPECIAL_UNARY = {
    # op: (oracle, ordinary points, special rows (x, expected) or (x, "~", expected))
    "sinc": (
        _mp_of(mpmath.sincpi),
        [-3.7, -0.3, 0.0, 0.25, 2.5, 1e-300, 1e-10, 1e5 + 0.5],
        [(0.0, 1.0), (-0.0, 1.0), (TINY, 1.0), (INF, NAN), (-INF, NAN), (NAN, NAN)],
    ),
    "j0": (
        _mp_of(lambda v: mpmath.besselj(0, v)),
        BESSEL_POINTS,
        [(0.0, 1.0), (-0.0, 1.0), (INF, NAN), (-INF, NAN), (NAN, NAN)],
    ),
    "j1": (
        _mp_of(lambda v: mpmath.besselj(1, v)),
        BESSEL_POINTS,
        [(0.0, 0.0), (-0.0, -0.0), (INF, NAN), (-INF, NAN), (NAN, NAN)],
    ),
    "i0": (
        _mp_of(lambda v: mpmath.besseli(0, v)),
        BESSEL_POINTS + [700.0],
        [(0.0, 1.0), (INF, NAN), (-INF, NAN), (1000.0, INF), (NAN, NAN)],
    ),
    "i0e": (
        _scaled_bessel(0),
        BESSEL_POINTS + [700.0, 1e5],
        [(0.0, 1.0), (-0.0, 1.0), (INF, 0.0), (-INF, 0.0), (NAN, NAN)],
    ),
    "i1": (
        _mp_of(lambda v: mpmath.besseli(1, v)),
        BESSEL_POINTS + [700.0],
        [(0.0, 0.0), (INF, NAN), (-INF, NAN), (1000.0, INF), (-1000.0, -INF), (NAN, NAN)],
    ),
    "i1e": (
        _scaled_bessel(1),
        BESSEL_POINTS + [700.0, 1e5],
        [(0.0, 0.0), (INF, 0.0), (-INF, -0.0), (NAN, NAN)],
    ),
}

GAMMAINC_PAIRS = [(0.5, 0.3), (2.0, 1.0), (5.5, 7.0), (1e-3, 2.0), (30.0, 25.0), (100.0, 90.0)]
# (a, x, P(a, x)): Q = 1 - P there; 0 at x = 0, 1 at x = inf or a = 0 < x, nan off the domain
GAMMAINC_SPECIAL = [
    (1.0, 0.0, 0.0),
    (0.5, -0.0, 0.0),
    (0.0, 1.0, 1.0),
    (2.0, INF, 1.0),
    (INF, 2.0, 0.0),
    (0.0, 0.0, NAN),
    (-1.0, 1.0, NAN),
    (1.0, -1.0, NAN),
    (INF, INF, NAN),
    (NAN, 1.0, NAN),
    (1.0, NAN, NAN),
]
BETAINC_POINTS = [
    (2.0, 3.0, 0.3),
    (0.5, 0.5, 0.1),
    (5.0, 1.5, 0.9),
    (10.0, 20.0, 0.33),
    (1e-3, 2.0, 0.5),
    (2.5, 1.5, 0.999),
    (1.0, 1.0, 0.25),
]
# (a, b, x, I_x(a, b)): 0 and 1 at the ends, nan outside [0, 1] and for a negative a or b
BETAINC_SPECIAL = [
    (2.0, 3.0, 0.0, 0.0),
    (2.0, 3.0, 1.0, 1.0),
    (2.0, 3.0, -0.5, NAN),
    (2.0, 3.0, 1.5, NAN),
    (-1.0, 2.0, 0.5, NAN),
    (NAN, 3.0, 0.5, NAN),
    (2.0, 3.0, NAN, NAN),
    (2.0, 3.0, INF, NAN),
    (2.0, 3.0, -INF, NAN),
]


def o_gammainc(a, x):
    with mpmath.workdps(40):
        return float(mpmath.gammainc(a, 0, x, regularized=True))


def o_gammaincc(a, x):
    with mpmath.workdps(40):
        return float(mpmath.gammainc(a, x, mpmath.inf, regularized=True))


def o_betainc(a, b, x):
    with mpmath.workdps(40):
        return float(mpmath.betainc(a, b, 0, x, regularized=True))


def _build_special_functions():
    for op, (oracle, points, special) in SPECIAL_UNARY.items():
        expr = f"{op}(x)"
        add(op, expr, {"x": points}, [oracle(p) for p in points], exact=False, label="ordinary")
        add(
            op,
            expr,
            {"x": [points[:3]]},
            [[oracle(p) for p in points[:3]]],
            exact=False,
            label="2-D",
        )
        _special_rows(op, expr, ("x",), special)
    add("j0", "bessel_j0(x)", {"x": 2.5}, SPECIAL_UNARY["j0"][0](2.5), exact=False, label="alias")
    add("j1", "bessel_j1(x)", {"x": 2.5}, SPECIAL_UNARY["j1"][0](2.5), exact=False, label="alias")
    complement = [(a, x, 1.0 - p if p == p else p) for a, x, p in GAMMAINC_SPECIAL]
    for op, fn, special in (
        ("gammainc", o_gammainc, GAMMAINC_SPECIAL),
        ("gammaincc", o_gammaincc, complement),
    ):
        _pairs_case(op, f"{op}(a, b)", fn, GAMMAINC_PAIRS, exact=False, label="ordinary")
        _special_rows(op, f"{op}(a, b)", ("a", "b"), special)
        a, x = [[0.5], [2.0], [5.5]], [0.3, 3.0, 7.0, 12.0]
        add(
            op,
            f"{op}(a, x)",
            {"a": a, "x": x},
            elementwise(fn, a, x),
            exact=False,
            label="bcast (3,1)x(4,)",
        )
        add(
            op,
            f"{op}(2.5, x)",
            {"x": x},
            elementwise(functools.partial(fn, 2.5), x),
            exact=False,
            label="const a",
        )
    names = ("a", "b", "x")
    columns = {n: [r[i] for r in BETAINC_POINTS] for i, n in enumerate(names)}
    add(
        "betainc",
        "betainc(a, b, x)",
        columns,
        [o_betainc(*r) for r in BETAINC_POINTS],
        exact=False,
        label="ordinary",
    )
    _special_rows("betainc", "betainc(a, b, x)", names, BETAINC_SPECIAL)
    x = [0.1, 0.5, 0.95]
    add(
        "betainc",
        "betainc(2, 3.5, x)",
        {"x": x},
        elementwise(lambda v: o_betainc(2.0, 3.5, v), x),
        exact=False,
        label="const a, b",
    )


_build_unary()
_build_binary()
_build_new_binary()
_build_polar()
_build_special_functions()
_build_reductions()
_build_products_and_shapes()
_build_array_functions()
for _module in (cases_linalg, cases_arrays, cases_fft):  # beside the ops' other cases
    for _kw in _module.FORWARD_CASES:
        add(**_kw)
_build_internal()

LANGUAGE = [c for c in CASES if c.expr is not None]
INTERNAL = [c for c in CASES if c.expr is None]
assert len({c.id for c in CASES}) == len(CASES)


# ---------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------


def _dtype(case: Case):
    """float64, or complex128 for a case whose expected value is complex (eigvals)."""
    return np.complex128 if np.asarray(case.expected).dtype.kind == "c" else np.float64


def check(actual, case: Case):
    expected = np.asarray(case.expected, dtype=_dtype(case))
    actual = np.asarray(actual)
    assert actual.dtype == _dtype(case), (case.id, actual.dtype)
    assert actual.shape == expected.shape, (case.id, actual.shape, expected.shape)
    if case.exact:
        np.testing.assert_array_equal(actual, expected, err_msg=case.id, strict=True)
    else:
        np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=0, err_msg=case.id)
    if case.zero_sign:
        zeros = expected == 0
        np.testing.assert_array_equal(
            np.signbit(actual[zeros]),
            np.signbit(expected[zeros]),
            err_msg=f"{case.id}: sign of zero",
        )


def decode(value):
    """A JSON value of the tool (non-finite numbers are strings) as floats."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, str):
        return {"nan": NAN, "inf": INF, "-inf": -INF}[value]
    if isinstance(value, dict):  # SPEC's complex number
        return complex(decode(value["re"]), decode(value["im"]))
    return float(value)


def encode(value):
    """Variables as JSON (the tool reads "nan", "inf", "-inf" strings)."""
    if isinstance(value, dict):
        return {k: encode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


# ---------------------------------------------------------------------------
# The tests
# ---------------------------------------------------------------------------


def test_every_op_has_an_oracle_case():
    covered = {c.op for c in CASES}
    missing = sorted(set(OPS) - covered)
    assert not missing, f"ops of the op table without a forward oracle case: {missing}"
    assert covered <= set(OPS), sorted(covered - set(OPS))


def test_every_elementwise_op_meets_nan_and_inf():
    # The edges, per op: a nan input and an infinite input somewhere in its cases.
    for name, op in OPS.items():
        if op.kind not in ("elementwise", "comparison", "reduction"):
            continue
        flat = [
            v for c in CASES if c.op == name for val in c.values.values() for v in _flatten(val)
        ]
        assert any(math.isnan(v) for v in flat), f"{name}: no nan input"
        assert any(math.isinf(v) for v in flat), f"{name}: no inf input"


def test_every_reduction_has_axis_and_keepdims_cases():
    for name, op in OPS.items():
        if op.kind == "reduction":
            exprs = [c.expr for c in CASES if c.op == name]
            assert any("axis=" in e for e in exprs), name
            assert any("keepdims" in e for e in exprs), name


@pytest.mark.parametrize("case", LANGUAGE, ids=[c.id for c in LANGUAGE])
def test_value_through_the_api(case: Case):
    program = parse(case.expr)
    assert case.op in {n.op for n in topological([program.output])}, (
        f"{case.expr!r} does not use {case.op}"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no Python warning may escape the engine
        result = api.eval_of(program, case.values)
    check(result.value, case)


@pytest.mark.parametrize("case", INTERNAL, ids=[c.id for c in INTERNAL])
def test_value_of_internal_ops_through_apply(case: Case):
    with no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error")
        out = apply(OPS[case.op], tensor(case.values["x"]), **case.attrs)
    check(out.numpy(), case)


def test_values_through_the_command_line(cli):
    """Every language case through ``eval --json`` (the real CLI, in process)."""
    failures = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for case in LANGUAGE:
            argv = ["eval", case.expr, "--json"]
            for name, value in case.values.items():
                argv += ["--var", f"{name}={value!r}"]
            r = cli(*argv)
            try:
                assert r.code == 0, (r.out, r.err)
                doc = r.json
                assert doc["shape"] == list(np.shape(case.expected))
                check(np.asarray(decode(doc["value"]), dtype=_dtype(case)), case)
            except AssertionError as exc:
                failures.append(f"{case.id}: {str(exc)[:300]}")
    assert not failures, "\n".join(failures)
    assert [str(w.message) for w in caught] == [], "Python warnings escaped the engine"


def test_values_through_batch(tmp_path, cli):
    """Every language case as one line of a single JSONL batch (vectorised groups)."""
    lines = [json.dumps({"expr": c.expr, "vars": encode(c.values), "op": "eval"}) for c in LANGUAGE]
    # each expression twice more with the same shapes, so groups of rows are evaluated together
    lines += lines[::-1]
    cases = LANGUAGE + LANGUAGE[::-1]
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = cli("batch", str(path), "--no-progress")
    assert [str(w.message) for w in caught] == [], "Python warnings escaped the engine"
    assert r.code == 0, r.err[-2000:]
    docs = [json.loads(line) for line in r.out.splitlines()]
    assert [d["line"] for d in docs] == list(range(1, len(cases) + 1))
    failures = []
    for case, doc in zip(cases, docs):
        try:
            assert "error" not in doc, doc
            check(np.asarray(decode(doc["value"]), dtype=_dtype(case)), case)
        except AssertionError as exc:
            failures.append(f"{case.id}: {str(exc)[:300]}")
    assert not failures, "\n".join(failures)


# ---------------------------------------------------------------------------
# The named edges, spelled out (the same points are in the table above)
# ---------------------------------------------------------------------------


def _value(expr, **values):
    return np.asarray(api.eval_of(parse(expr), values).value)


def test_round_is_half_to_even_not_truncation():
    xs = [0.5, 1.5, 2.5, -0.5, -2.5, 2.7, -2.7, 0.4]
    np.testing.assert_array_equal(
        _value("round(x)", x=xs), [0.0, 2.0, 2.0, -0.0, -2.0, 3.0, -3.0, 0.0], strict=True
    )
    assert np.signbit(_value("round(x)", x=-0.5))


def test_every_comparison_at_equality_and_on_both_sides():
    table = {
        "<": (0, 1, 0),
        "<=": (1, 1, 0),
        ">": (0, 0, 1),
        ">=": (1, 0, 1),
        "==": (1, 0, 0),
        "!=": (0, 1, 1),
    }
    for symbol, (equal, below, above) in table.items():
        got = _value(f"a {symbol} b", a=[2.0, 1.0, 3.0], b=[2.0, 2.0, 2.0])
        np.testing.assert_array_equal(
            got, np.array([equal, below, above], dtype=np.float64), err_msg=symbol, strict=True
        )
        # every comparison with nan is false, except !=
        got = _value(f"a {symbol} b", a=[NAN, 1.0], b=[1.0, NAN])
        expected = 1.0 if symbol == "!=" else 0.0
        np.testing.assert_array_equal(got, [expected, expected], err_msg=symbol)


def test_where_takes_every_nonzero_condition():
    got = _value("where(c, 1, 2)", c=[-2.0, 0.0, 0.5, 3.0, NAN, -0.0, -INF])
    np.testing.assert_array_equal(got, [1.0, 2.0, 1.0, 1.0, 1.0, 2.0, 1.0], strict=True)


def test_max_min_propagate_nan():
    for expr in (
        "max(a, b)",
        "max(b, a)",
        "min(a, b)",
        "min(b, a)",
        "maximum(a, b)",
        "minimum(b, a)",
    ):
        assert np.isnan(_value(expr, a=NAN, b=0.0)), expr
    for expr in ("max(x, 0)", "max(0, x)", "min(x, 0)", "min(0, x)", "relu(x)"):
        assert np.isnan(_value(expr, x=NAN)), expr
    for expr in ("max(v)", "min(v)"):
        for v in ([NAN, 0.0], [0.0, NAN]):
            assert np.isnan(_value(expr, v=v)), (expr, v)
    np.testing.assert_array_equal(_value("max(A, axis=0)", A=[[0.0, NAN], [1.0, 2.0]]), [1.0, NAN])


def test_signed_zeros():
    assert _value("1 / x", x=-0.0) == -INF
    assert _value("1 / x", x=0.0) == INF
    assert np.signbit(_value("sqrt(x)", x=-0.0))
    assert not np.signbit(_value("abs(x)", x=-0.0))
    assert _value("sign(x)", x=-0.0) == 0.0
    assert np.signbit(_value("-x", x=0.0))
    assert np.signbit(_value("ceil(x)", x=-0.5))


def test_max_of_empty_is_a_shape_error(cli):
    # No identity for max/min over nothing: an error (PyTorch raises too), not a traceback.
    for expr in ("max(v)", "min(v)", "max(A, axis=1)"):
        value = "[]" if "v" in expr else "[[], []]"
        name = "v" if "v" in expr else "A"
        r = cli("eval", expr, "--var", f"{name}={value}", "--json")
        assert r.code == 1, (expr, r.out, r.err)
        assert r.json["error"]["kind"] == "shape", r.out
        assert "Traceback" not in r.err


def test_mean_of_nothing_is_nan_without_a_python_warning(cli):
    # mean([]) is nan (0/0, as in NumPy and PyTorch), reported as a domain warning in the
    # document, never as a Python RuntimeWarning ("Mean of empty slice") on stderr.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = cli("eval", "mean(v)", "--var", "v=[]", "--json")
        assert r.code == 0
        assert r.json["value"] == "nan"
        assert any(w.startswith("mean gave nan") for w in r.json["warnings"])
        r = cli("grad", "mean(A, axis=1) @ [1, 1]", "--var", "A=[[], []]", "--json")
        assert r.code == 0, r.out
        assert r.json["value"] == "nan" and r.json["grad"] == {"A": [[], []]}
        r = cli("eval", "mean(A, axis=0)", "--var", "A=[[], []]", "--json")
        assert r.code == 0 and r.json["value"] == [] and r.json["shape"] == [0]
    assert [str(w.message) for w in caught] == []
