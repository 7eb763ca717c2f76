"""The elementwise ops, one line each: the table of the language's elementwise functions.

Each row is one op with every fact about it, as in HIPS autograd's numpy_vjps.py or
PyTorch's derivatives.yaml: its name, PyTorch's ``grad_fn`` name, the forward (on the
backend's arrays), the local derivative (written with engine ops, so the same formula serves
reverse mode, forward mode, higher orders and ``diff``), how it is spelled and printed, and
its facts (:class:`~.table.Op`: ``kink``, ``total``, ``nonneg``, ``piecewise``,
``piecewise_linear``, ``spreads_nonfinite``, ``zero_grad``, ``differentiable``).
:func:`~.rules._unary` and :func:`~.rules._binary` make the vjp and jvp of a row from its
derivative.  The forwards that take more than a line are in :mod:`.special`; the partials
that take more than a line are just above the table that uses them.  An op whose rules are
not made from partials (neg, add, sub: no saved inputs; clip, the comparisons, where) is a
declaration of its own, in the table's order.

Kinks follow PyTorch: abs'(0) = 0, relu'(0) = 0, sqrt'(0) = inf, ties of max/min split the
gradient evenly, sign/floor/comparisons pass no gradient.
"""

# ruff: noqa: E501  (a table: one op a line)

from __future__ import annotations

import math

import numpy as np

from ..tensor import is_grad_enabled
from .rules import (
    _all_finite,
    _any_zero,
    _at_origin,
    _at_tie,
    _at_zero,
    _binary,
    _constant_pieces,
    _data,
    _declare,
    _elementwise_op,
    _np,
    _unary,
    _where_kink,
    _xp,
    _zero_almost_everywhere,
    add_tangents,
    broadcast_to,
    call,
    conj,
    eq,
    gt,
    is_complex,
    lt,
    power,
    sign,
    sqrt,
    sum_to,
    where,
    zeros_like,
)
from .special import (
    SQRT_PI_OVER_TWO,
    TWO_OVER_SQRT_PI,
    _betainc_dx,
    _cbrt_forward,
    _erfcx_forward,
    _erfinv_forward,
    _gamma_forward,
    _gammainc_dx,
    _i1_d,
    _i1e_d,
    _j1_d,
    _lgamma_forward,
    _polygamma_forward,
    _sinc_d,
    _sp,
    _special,
)
from .table import (
    ATOM,
    COMPARE,
    POWER,
    PRODUCT,
    SUM,
    UNARY,
    Code,
    Op,
    Printing,
    code,
    function,
    infix,
    register,
)

LN2 = math.log(2.0)
LN10 = math.log(10.0)


def _flat(x, out):
    """The derivative of a piecewise-constant op: 0 wherever it exists (PyTorch's zeros)."""
    return zeros_like(x)


# ---------------------------------------------------------------------------
# Functions of one argument: _unary(name, grad_fn, forward(a), d/dx(x, out), printing, facts)
# (latex= alone: a call of the name printed as that LaTeX function; aliases= more names)
# ---------------------------------------------------------------------------


def _abs_direction(x, out):
    # sign(x) on the real line (abs'(0) = 0, PyTorch's); on complex numbers sgn(z) = z/|z|,
    # 0 at 0 (torch's abs_backward), written with differentiable ops: sign's derivative is 0,
    # but sgn(z)'s is not (a second derivative of abs(z) needs it)
    if not is_complex(x):
        return sign(x)
    return where(eq(out, 0), 0.0, x / where(eq(out, 0), 1.0, out))


def _acosh_derivative(x, out):
    # PyTorch's 1/sqrt(x*x - 1), bit for bit (JAX's too, to rounding): finite below -1, where
    # acosh is nan (as log's 1/x is below 0), and +inf at -1 as at 1 ((x - 1)*(x + 1) would
    # keep more digits near 1 but is -0.0 at -1, so -inf).  On complex numbers the principal
    # branch's 1/(sqrt(z - 1)*sqrt(z + 1)), of the other sign where Re z < 0
    if is_complex(x):
        return 1 / (sqrt(x - 1) * sqrt(x + 1))
    return 1 / sqrt(x * x - 1)


# fmt: off
#      name         grad_fn                  forward               d/dx (x, out)                                     printing                                                                       facts
_unary("exp",       "ExpBackward0",          _np("exp"),           lambda x, out: out,                               printing=function("exp", latex=("e^{", 0, "}"), latex_level=POWER),             total=True, nonneg=True, on_complex="holomorphic")
_unary("log",       "LogBackward0",          _np("log"),           lambda x, out: 1 / x,                             latex="\\log",                                                                  kink=_at_zero("log'(0) is infinite (1/0 = inf)"), spreads_nonfinite=(0,), on_complex="holomorphic")
_unary("log2",      "Log2Backward0",         _np("log2"),          lambda x, out: 1 / (x * LN2),                     latex="\\log_{2}",                                                              kink=_at_zero("log2'(0) is infinite (1/0 = inf)"), spreads_nonfinite=(0,), on_complex="holomorphic")
_unary("log10",     "Log10Backward0",        _np("log10"),         lambda x, out: 1 / (x * LN10),                    latex="\\log_{10}",                                                             kink=_at_zero("log10'(0) is infinite (1/0 = inf)"), spreads_nonfinite=(0,), on_complex="holomorphic")
_unary("sqrt",      "SqrtBackward0",         _np("sqrt"),          lambda x, out: 1 / (2 * out),                     printing=function("sqrt", latex=("\\sqrt{", 0, "}"), latex_level=ATOM),         kink=_at_zero("sqrt'(0) is infinite; used sqrt'(0) = inf (PyTorch)"), nonneg=True, spreads_nonfinite=(0,), on_complex="holomorphic")
_unary("sin",       "SinBackward0",          _np("sin"),           lambda x, out: call("cos", x),                    latex="\\sin",                                                                  total=True, spreads_nonfinite=(0,), on_complex="holomorphic")
_unary("cos",       "CosBackward0",          _np("cos"),           lambda x, out: -call("sin", x),                   latex="\\cos",                                                                  total=True, spreads_nonfinite=(0,), on_complex="holomorphic")
_unary("tan",       "TanBackward0",          _np("tan"),           lambda x, out: 1 + out * out,                     latex="\\tan",                                                                  total=True, spreads_nonfinite=(0,), on_complex="holomorphic")
_unary("asin",      "AsinBackward0",         _np("arcsin", c="asin({0})"),        lambda x, out: 1 / sqrt(1 - x * x),               latex="\\arcsin", aliases=("arcsin",),                                          spreads_nonfinite=(0,), on_complex="holomorphic")
_unary("acos",      "AcosBackward0",         _np("arccos", c="acos({0})"),        lambda x, out: -(1 / sqrt(1 - x * x)),            latex="\\arccos", aliases=("arccos",),                                          nonneg=True, spreads_nonfinite=(0,), on_complex="holomorphic")  # in [0, pi]
_unary("atan",      "AtanBackward0",         _np("arctan", c="atan({0})"),        lambda x, out: 1 / (1 + x * x),                   latex="\\arctan", aliases=("arctan",),                                          total=True, on_complex="holomorphic")
_unary("sinh",      "SinhBackward0",         _np("sinh"),          lambda x, out: call("cosh", x),                   latex="\\sinh",                                                                 total=True, spreads_nonfinite=(0,), on_complex="holomorphic")
_unary("cosh",      "CoshBackward0",         _np("cosh"),          lambda x, out: call("sinh", x),                   latex="\\cosh",                                                                 total=True, nonneg=True, spreads_nonfinite=(0,), on_complex="holomorphic")
_unary("tanh",      "TanhBackward0",         _np("tanh"),          lambda x, out: 1 - out * out,                     latex="\\tanh",                                                                 total=True, on_complex="holomorphic")
# the inverse hyperbolic functions (NumPy's arcsinh...; libm's asinh...): asinh is total; acosh is
# nan below 1 and inf at inf; atanh is nan outside [-1, 1] and +-inf at +-1 (PyTorch's and NumPy's)
_unary("asinh",     "AsinhBackward0",        _np("arcsinh", c="asinh({0})"),   lambda x, out: 1 / sqrt(x * x + 1),  latex="\\operatorname{arsinh}", aliases=("arcsinh",),                                total=True, spreads_nonfinite=(0,), on_complex="holomorphic")
_unary("acosh",     "AcoshBackward0",        _np("arccosh", c="acosh({0})"),   _acosh_derivative,                   latex="\\operatorname{arcosh}", aliases=("arccosh",),                                nonneg=True, spreads_nonfinite=(0,), on_complex="holomorphic")
_unary("atanh",     "AtanhBackward0",        _np("arctanh", c="atanh({0})"),   lambda x, out: 1 / (1 - x * x),      latex="\\operatorname{artanh}", aliases=("arctanh",),                                spreads_nonfinite=(0,), on_complex="holomorphic")
_unary("abs",       "AbsBackward0",          _np("abs", c="fabs({0})"),         _abs_direction,                                   printing=function("abs", latex=("\\left|", 0, "\\right|"), latex_level=ATOM),   kink=_at_zero("abs is not differentiable at 0; used abs'(0) = 0 (PyTorch)"), total=True, nonneg=True, piecewise_linear=True, spreads_nonfinite=(0,), on_complex="real")
def _angle_direction(x, out):
    # d angle = Im(conj(z) dz)/|z|**2: the gradient direction 1j*z/|z|**2, 0 at z = 0; on the
    # real line (diff's variables too) 0: angle is 0 or pi there
    if not is_complex(x):
        return 0.0
    r2 = x * conj(x)
    # x * 1j, not 1j * x: complex's own product takes a NumPy scalar as a Python complex
    return where(eq(x, 0), 0.0, x * 1j / where(eq(x, 0), 1.0, r2))


# complex numbers: the parts, the conjugate, the argument (issue 27).  real, imag and angle are
# real functions of a complex z, each derivative PyTorch's gradient direction (grad = g*d: 1, 1j,
# 1j*z/|z|**2, 0 at z = 0 as torch's angle_backward); on a real x, real is x, imag 0 and angle
# 0 or pi (atan2(0, x): pi at -0.0), neither of the last two passing a gradient
_unary("real",      "RealBackward0",         _np("real", c="{0}"),      lambda x, out: 1.0,                               latex="\\operatorname{Re}",                                                    total=True, spreads_nonfinite=(0,), on_complex="real", linear=True)
_unary("imag",      "ImagBackward0",         _np("imag", c="0.0"),      lambda x, out: 1j if is_complex(x) else 0.0,       latex="\\operatorname{Im}",                                                    total=True, nonneg=True, piecewise_linear=True, on_complex="real", code=code("{xp}.imag({0})", torch="(torch.imag({0}) if torch.is_complex({0}) else torch.zeros_like({0}))", c="0.0"))
_unary("angle",     "AngleBackward0",        _np("angle", c="atan2(0.0, {0})"), _angle_direction,                     latex="\\arg",                                                                 total=True, nonneg=True, piecewise_linear=True, on_complex="real", kink=_at_zero("angle is not differentiable at 0 (on the real line it jumps from 0 to pi there); used angle'(0) = 0 (PyTorch)"), code=code("{xp}.angle({0})", jax="{xp}.angle({0}).astype({0}.real.dtype)", c="atan2(0.0, {0})"))
# 1/(1+exp(-x)) is exact to rounding in float64 for every x once overflow is allowed (exp(-x)=inf -> 0).
_unary("sigmoid",   "SigmoidBackward0",      lambda a: 1 / (1 + _xp().exp(-a)), lambda x, out: out * (1 - out),      latex="\\sigma",                                                                total=True, nonneg=True, code=code("1 / (1 + {xp}.exp(-{0}))", c="1.0 / (1.0 + exp(-{0}))"))
# relu'(0) = 0, as in PyTorch: the mask is x > 0, not x >= 0.
_unary("relu",      "ReluBackward0",         lambda a: _xp().maximum(a, 0), lambda x, out: gt(x, 0),                 latex="\\operatorname{relu}",                                                   kink=_at_zero("relu is not differentiable at 0; used relu'(0) = 0 (PyTorch)"), total=True, nonneg=True, piecewise_linear=True, selects=True, code=code("{xp}.maximum({0}, 0.0)", torch="torch.clamp_min({0}, 0.0)", c="({0} > 0.0 || {0} != {0} ? {0} : 0.0)"))
# log(1 + exp(x)) computed without overflow.
_unary("softplus",  "SoftplusBackward0",     lambda a: _xp().logaddexp(0, a), lambda x, out: call("sigmoid", x),     latex="\\operatorname{softplus}",                                               total=True, nonneg=True, code=code("{xp}.logaddexp(0.0, {0})", torch="torch.logaddexp(torch.zeros_like({0}), {0})", c="(fmax({0}, 0.0) + log1p(exp(-fabs({0}))))"))
# Piecewise-constant functions: the derivative is 0 wherever it exists (PyTorch returns zeros).
_unary("sign",      "SignBackward0",         _np("sign", c="({0} > 0.0 ? 1.0 : {0} < 0.0 ? -1.0 : {0})"),         _flat,                                            latex="\\operatorname{sign}",                                                   zero_grad=True, kink=_constant_pieces("sign"), total=True, piecewise_linear=True)  # sign(inf) = 1
_unary("floor",     "FloorBackward0",        _np("floor"),         _flat,                                            latex="\\operatorname{floor}",                                                  zero_grad=True, kink=_constant_pieces("floor"), total=True, piecewise_linear=True, spreads_nonfinite=(0,))
_unary("ceil",      "CeilBackward0",         _np("ceil"),          _flat,                                            latex="\\operatorname{ceil}",                                                   zero_grad=True, kink=_constant_pieces("ceil"), total=True, piecewise_linear=True, spreads_nonfinite=(0,))
_unary("round",     "RoundBackward0",        _np("round", c="nearbyint({0})"),         _flat,                                            latex="\\operatorname{round}",                                                  zero_grad=True, kink=_constant_pieces("round"), total=True, piecewise_linear=True, spreads_nonfinite=(0,))
# log(1 + x) and exp(x) - 1, accurate near 0.
_unary("log1p",     "Log1PBackward0",        _np("log1p"),         lambda x, out: 1 / (1 + x),                       latex="\\operatorname{log1p}",                                                  spreads_nonfinite=(0,), on_complex="holomorphic")
_unary("expm1",     "Expm1Backward0",        _np("expm1"),         lambda x, out: call("exp", x),                    latex="\\operatorname{expm1}",                                                  total=True, on_complex="holomorphic")
# Special functions (see .special): SciPy's (CuPy's on the GPU), imported on first use.
# The real cube root (cbrt(-8) = -2); cbrt'(0) = 1/(3*0) = inf, as sqrt'(0).
_unary("cbrt",      "CbrtBackward0",         _cbrt_forward,        lambda x, out: 1 / (3 * (out * out)),             printing=function("cbrt", latex=("\\sqrt[3]{", 0, "}"), latex_level=ATOM),      kink=_at_zero("cbrt'(0) is infinite; used cbrt'(0) = inf (as sqrt'(0))"), total=True, spreads_nonfinite=(0,), code=code("{xp}.cbrt({0})", torch="(torch.sign({0}) * torch.abs({0}) ** (1.0 / 3.0))", c="cbrt({0})"))
_unary("erf",       "ErfBackward0",          _sp("erf"),           lambda x, out: TWO_OVER_SQRT_PI * call("exp", -(x * x)),    latex="\\operatorname{erf}",                                          total=True, code=code("{sp}.erf({0})", c="erf({0})"))
_unary("erfc",      "ErfcBackward0",         _sp("erfc"),          lambda x, out: -(TWO_OVER_SQRT_PI * call("exp", -(x * x))), latex="\\operatorname{erfc}",                                         total=True, nonneg=True, code=code("{sp}.erfc({0})", c="erfc({0})"))
# erfcx(x) = exp(x**2) erfc(x), the scaled erfc: no underflow for large x (~ 1/(x sqrt(pi))),
# inf below -26.6; its derivative is PyTorch's, 2 x erfcx(x) - 2/sqrt(pi).
_unary("erfcx",     "SpecialErfcxBackward0", _erfcx_forward,       lambda x, out: 2 * x * out - TWO_OVER_SQRT_PI,    latex="\\operatorname{erfcx}",                                                  total=True, nonneg=True, code=code("{sp}.erfcx({0})", jax=None))
# erfinv on [-1, 1] (+-inf at +-1, nan outside); erfinv'(+-1) = inf.
_unary("erfinv",    "ErfinvBackward0",       _erfinv_forward,      lambda x, out: SQRT_PI_OVER_TWO * call("exp", out * out), latex="\\operatorname{erfinv}",                                         spreads_nonfinite=(0,), code=code("{xp}.where({0} == 0, {0}, {sp}.erfinv({0}))"))
# gamma: inf at +0, -inf at -0, nan at the negative integers (poles), as C's tgamma.
_unary("gamma",     "GammaBackward0",        _gamma_forward,       lambda x, out: out * call("digamma", x),          latex="\\Gamma",                                                                spreads_nonfinite=(0,), code=code("{sp}.gamma({0})", torch=None, c="tgamma({0})"))
_unary("lgamma",    "LgammaBackward0",       _lgamma_forward,      lambda x, out: call("digamma", x),                latex="\\operatorname{lgamma}",                                                 spreads_nonfinite=(0,), code=code("{xp}.where({0} == -{xp}.inf, {xp}.inf, {sp}.gammaln({0}))", torch="torch.where({0} == -math.inf, math.inf, torch.lgamma({0}))", c="({0} == -INFINITY ? INFINITY : lgamma({0}))"))
# digamma(+-0) = -+inf, nan at the negative integers (PyTorch's and SciPy's convention).
_unary("digamma",   "DigammaBackward0",      _sp("psi"),           lambda x, out: call("polygamma", 1.0, x),         latex="\\psi",                                                                  spreads_nonfinite=(0,), code=code("{sp}.digamma({0})", numpy="scipy.special.psi({0})"))
# fmt: on


# ---------------------------------------------------------------------------
# Issue 27's special functions (their partials longer than a line: .special).  sinc and
# the Bessel functions J0, J1 (POSIX's j0, j1), I0, I1 and the scaled i0e = exp(-|x|) I0,
# i1e = exp(-|x|) I1 (scipy.special's, torch.special's); the regularized incomplete gamma
# P(a, x), Q(a, x) = 1 - P (torch.special.gammainc/gammaincc: a gradient in x only) and
# beta I_x(a, b) (scipy.special.betainc; JAX's gradient, in x only)
# ---------------------------------------------------------------------------

# fmt: off
#      name         grad_fn                     forward                          d/dx (x, out)                                    printing                                                                   facts
# sinc(x) = sin(pi x)/(pi x), 1 at 0 (NumPy's and torch.sinc, normalized); its derivative 0 at 0
_unary("sinc",      "SincBackward0",            lambda a: _xp().sinc(a),         _sinc_d,                                         latex="\\operatorname{sinc}",                                              total=True, spreads_nonfinite=(0,), code=code("{xp}.sinc({0})", c="({0} == 0.0 ? 1.0 : sin(3.141592653589793 * {0}) / (3.141592653589793 * {0}))"))
# PyTorch has bessel_j0/j1 without a derivative: J0' = -J1 and J1' = J0 - J1/x (1/2 at 0) as JAX;
# nan at +-inf (SciPy's and PyTorch's)
_unary("j0",        "SpecialBesselJ0Backward0", _sp("j0"),                       lambda x, out: -call("j1", x),                   printing=function("j0", "bessel_j0", latex=("J_{0}\\left(", 0, "\\right)"), latex_level=ATOM), total=True, spreads_nonfinite=(0,), code=code("{sp}.j0({0})", torch="torch.special.bessel_j0({0})", jax=None, c="ag_j0({0})"))
_unary("j1",        "SpecialBesselJ1Backward0", _sp("j1"),                       _j1_d,                                           printing=function("j1", "bessel_j1", latex=("J_{1}\\left(", 0, "\\right)"), latex_level=ATOM), total=True, spreads_nonfinite=(0,), code=code("{sp}.j1({0})", torch="torch.special.bessel_j1({0})", jax=None, c="ag_j1({0})"))
_unary("i0",        "I0Backward0",              _sp("i0"),                       lambda x, out: call("i1", x),                    printing=function("i0", latex=("I_{0}\\left(", 0, "\\right)"), latex_level=ATOM), total=True, nonneg=True, spreads_nonfinite=(0,), code=code("{sp}.i0({0})"))
# i0e(x) = exp(-|x|) I0(x) has a corner at 0 (slopes -+1): PyTorch's i0e' = i1e - sign(x) i0e is 0
# there (piecewise: the simplifier's caution, as for abs)
_unary("i0e",       "SpecialI0EBackward0",      _sp("i0e"),                      lambda x, out: call("i1e", x) - sign(x) * out,   latex="\\operatorname{i0e}",                                               kink=_at_zero("i0e(x) = exp(-|x|) I0(x) is not differentiable at 0; used i0e'(0) = 0 (PyTorch)"), total=True, nonneg=True, piecewise=True, code=code("{sp}.i0e({0})"))
_unary("i1",        "SpecialI1Backward0",       _sp("i1"),                       _i1_d,                                           printing=function("i1", latex=("I_{1}\\left(", 0, "\\right)"), latex_level=ATOM), total=True, spreads_nonfinite=(0,), code=code("{sp}.i1({0})"))
_unary("i1e",       "SpecialI1EBackward0",      _sp("i1e"),                      _i1e_d,                                          latex="\\operatorname{i1e}",                                               total=True, code=code("{sp}.i1e({0})"))
# fmt: on

# gammainc(0, x) = 1 for x > 0 (SciPy's and PyTorch's), a flat piece: piecewise, as betainc.
# At x = 0, the end of the domain, the derivative is one-sided: PyTorch's formula says inf,
# nan or 0 there, with a warning
_GAMMAINC_END = _where_kink(
    lambda i, o, a: i[1] == 0,
    "gammainc(a, x) and gammaincc(a, x) at x = 0, the end of their domain: used PyTorch's "
    "derivative exp((a - 1) log(x) - x - lgamma(a)) there (inf for a < 1, nan for a = 1, 0 "
    "for a > 1)",
)
# fmt: off
#       name         grad_fn               forward                                    d/da                          d/db                          d/dx                 printing and facts
_binary("gammainc",  "IgammaBackward0",    lambda a, x: _special().gammainc(a, x),    lambda a, x, out: None,       _gammainc_dx,                                      printing=function("gammainc", latex="P"), differentiable=(False, True), kink=_GAMMAINC_END, no_derivative=(0,), nonneg=True, piecewise=True, code=code("{sp}.gammainc({0}, {1})", numpy="scipy.special.gammainc({0}, {1}).astype({dtype})"))
_binary("gammaincc", "IgammacBackward0",   lambda a, x: _special().gammaincc(a, x),   lambda a, x, out: None,       lambda a, x, out: -_gammainc_dx(a, x, out),        printing=function("gammaincc", latex="Q"), differentiable=(False, True), kink=_GAMMAINC_END, no_derivative=(0,), nonneg=True, piecewise=True, code=code("{sp}.gammaincc({0}, {1})", numpy="scipy.special.gammaincc({0}, {1}).astype({dtype})"))
_elementwise_op("betainc", "BetaincBackward0", lambda a, b, x: _special().betainc(a, b, x), (lambda a, b, x, out: None, lambda a, b, x, out: None, _betainc_dx), printing=function("betainc", latex=("I_{", 2, "}\\left(", 0, ", ", 1, "\\right)"), latex_level=ATOM), differentiable=(False, False, True), kink=_where_kink(lambda i, o, a: (i[2] == 0) | (i[2] == 1), "betainc(a, b, x) at x = 0 or 1, an end of its domain: used JAX's derivative exp((a - 1) log(x) + (b - 1) log1p(-x) - lbeta(a, b)) there (inf, nan or 0 as a, or b, is below, at or above 1)"), no_derivative=(0, 1), nonneg=True, piecewise=True, spreads_nonfinite=(2,), code=code("{sp}.betainc({0}, {1}, {2})", torch=None))
# fmt: on


# ---------------------------------------------------------------------------
# neg, add and sub: rules that save nothing (saves=False), so not made from partials
# ---------------------------------------------------------------------------


def _conj_vjp(n, g):
    return (conj(g),)


register(
    Op(
        "conj",
        "ConjBackward0",
        lambda a: _xp().conj(a),
        _conj_vjp,
        lambda n, ts: None if ts[0] is None else conj(ts[0]),
        saves=False,
        arrays=True,
        deriv=(lambda x, out: 1.0,),
        code=code("{xp}.conj({0})", c="{0}"),
        total=True,
        spreads_nonfinite=(0,),
        on_complex="real_linear",
        printing=function("conj", "conjugate", latex=("\\overline{", 0, "}"), latex_level=ATOM),
        linear=True,
    )
)


def _neg_vjp(n, g):
    return (-g,)


register(
    Op(
        "neg",
        "NegBackward0",
        lambda a: -a,
        _neg_vjp,
        lambda n, ts: None if ts[0] is None else -ts[0],
        saves=False,
        arrays=True,
        deriv=(lambda x, out: -1.0,),
        code=code("-{0}", c="-{0}"),
        total=True,
        spreads_nonfinite=(0,),
        printing=Printing(form="prefix", symbol="-", level=UNARY, operands=(POWER,), latex="-"),
        on_complex="rules",
        linear=True,
    )
)


def _add_vjp(n, g):
    return (
        sum_to(g, n.shapes[0]) if n.needs[0] else None,
        sum_to(g, n.shapes[1]) if n.needs[1] else None,
    )


def _add_jvp(n, ts):
    r = add_tangents(ts[0], ts[1])
    return None if r is None else broadcast_to(r, n.out.shape)


def _sub_vjp(n, g):
    return (
        sum_to(g, n.shapes[0]) if n.needs[0] else None,
        sum_to(-g, n.shapes[1]) if n.needs[1] else None,
    )


def _sub_jvp(n, ts):
    ta, tb = ts
    r = add_tangents(ta, None if tb is None else -tb)
    return None if r is None else broadcast_to(r, n.out.shape)


def _sum_of_two(name: str, node: str, forward, vjp, jvp, sign: float) -> None:
    """Register add (``sign`` 1) or sub (-1): a + sign*b, linear, its partials 1 and sign."""
    symbol = "+" if sign > 0 else "-"
    facts = {
        "saves": False,
        "code": code(f"{{0}} {symbol} {{1}}", c=f"{{0}} {symbol} {{1}}"),
        "total": True,
        "spreads_nonfinite": (0, 1),
        "on_complex": "rules",
        "linear": True,
    }
    partials = (lambda a, b, out: 1.0, lambda a, b, out: sign)
    printing = infix(symbol, SUM, (SUM, PRODUCT), f" {symbol} ")
    _declare(name, node, forward, vjp, jvp, partials, printing, facts)


_sum_of_two("add", "AddBackward0", lambda a, b: a + b, _add_vjp, _add_jvp, 1.0)
_sum_of_two("sub", "SubBackward0", lambda a, b: a - b, _sub_vjp, _sub_jvp, -1.0)


# ---------------------------------------------------------------------------
# The partials of the functions of two arguments that take more than a line
# ---------------------------------------------------------------------------


def _pow_da(a, b, out):
    # d(a**b)/da = b * a**(b-1); PyTorch pins it to 0 where b == 0 (so x**0 has gradient 0 at x=0).
    if _host_two(b) and not is_grad_enabled():
        return b * a  # x**2's: a**1 is a, bit for bit (tests/test_speed_arrays.py), one pass
    d = b * power(a, b - 1)
    if _any_zero(b):
        d = where(eq(b, 0), 0.0, d)
    return d


def _host_two(b) -> bool:
    """``b`` is the exponent 2 as a host number (a constant on the CPU): no sync to ask."""
    data = _data(b)
    return data is not None and type(data) in _HOST_SCALARS and data.ndim == 0 and data == 2


def _pow_kinks(i, o, a):
    # x**p with p < 1, p != 0 at x == 0; the exponent's test first, which for a constant
    # exponent on the host is one number: when it fails x is not scanned (a pass saved;
    # on the device the whole test, as one sync)
    low = (i[1] < 1) & (i[1] != 0)
    if isinstance(low, (np.ndarray, np.bool_)) and low.ndim == 0 and not low:
        return low
    return (i[0] == 0) & low


def _pow_db(a, b, out):
    # d(a**b)/db = a**b * log(a); PyTorch pins it to 0 where a == 0 and b >= 0.
    d = out * call("log", a)
    if _any_zero(a):
        d = where(eq(a, 0) * call("ge", b, 0), 0.0, d)
    return d


def _pow_node(n):
    if not n.needs[1]:
        return "PowBackward0"
    return "PowBackward1" if n.needs[0] else "PowBackward2"


_HOST_SCALARS = (np.ndarray, np.floating)  # an exponent on the host (a constant, on the CPU)


def _power(a, b):
    # np.power, not a ** b: on NumPy scalars ** calls C pow(), which can differ in the last
    # bit from the ufunc loop that arrays (and batch rows) use; one kernel for both keeps
    # single lines and batch identical.  A constant exponent of -0.5 is PyTorch's rsqrt:
    # (-inf)**-0.5 is nan there (as (-inf)**0.5 is nan in both), not C's +0, so x**0.5 has
    # gradient nan at -inf in grad, in diff's printed 1/(2*x**(1/2)) and in PyTorch alike.
    xp = _xp()
    if isinstance(b, _HOST_SCALARS):
        if b.ndim == 0:  # a host constant: 2 and -0.5 have their own kernels
            if b == 2 and getattr(a, "dtype", None) == b.dtype:
                # x**2 by square: the same bits (both are the exact square, rounded once),
                # and NumPy's power takes its slow path for large or tiny values (7x slower)
                return xp.square(a)
            if b == -0.5:
                return xp.where(a == -math.inf, math.nan, xp.power(a, b))
        return xp.power(a, b)
    r = xp.power(a, b)
    if getattr(b, "ndim", None) == 0:  # a device scalar: decided on the device, no sync
        r = xp.where((a == -math.inf) & (b == -0.5), math.nan, r)
    return r


def _atan2_partials(y, x):
    # d/dy atan2(y, x) = x/(x^2 + y^2), d/dx = -y/(x^2 + y^2); both pinned to 0 at the
    # origin, where atan2 is not continuous (PyTorch's atan2_backward does the same).
    r2 = x * x + y * y
    dy, dx = x / r2, -y / r2
    if _any_zero(r2):
        dy, dx = where(eq(r2, 0), 0.0, dy), where(eq(r2, 0), 0.0, dx)
    return dy, dx


def _mod_db(a, b, out):
    # d mod(a, b)/db = -(a // b), the floored quotient (PyTorch's remainder_backward).  It is
    # (a - mod(a, b))/b rounded, exact where floor(a/b) rounds wrongly (mod(1, 0.1) =
    # 0.09999..., whose quotient is 9, not floor(1/0.1) = 10); where that is nan (b = 0),
    # floor(a/b).
    q = call("round", (a - out) / b)
    if not _all_finite(q):
        q = where(eq(q, q), q, call("floor", a / b))
    return -q


def _pow_code(target):
    """pow as the engine computes it: NumPy's power, except that a constant exponent of
    -0.5 gives nan at -inf (PyTorch's rsqrt; C's pow gives +0 there)."""
    power = {"numpy": "np.power", "torch": "torch.pow", "jax": "jnp.power", "c": "pow"}[target]
    inf = "-INFINITY" if target == "c" else "-math.inf" if target == "torch" else "-{xp}.inf"

    def spell(args, node, target):
        a, b = args
        exponent = node.args[1]
        if exponent.op == "const" and exponent.value.ndim == 0 and exponent.value == -0.5:
            if target == "c":
                return f"({a} == -INFINITY ? NAN : pow({a}, {b}))"
            nan = "math.nan" if target == "torch" else "{xp}.nan"
            return f"{{xp}}.where({a} == {inf}, {nan}, {power}({a}, {b}))"
        if exponent.value.ndim == 0 and exponent.op != "const":
            # a number that varies: the engine's rule asks its value (rsqrt's nan at -inf)
            if target == "c":
                return f"({a} == -INFINITY && {b} == -0.5 ? NAN : pow({a}, {b}))"
            nan = "math.nan" if target == "torch" else "{xp}.nan"
            return f"{{xp}}.where(({a} == {inf}) & ({b} == -0.5), {nan}, {power}({a}, {b}))"
        if exponent.op == "const" and exponent.value.ndim == 0 and target != "c":
            # x**2 by square, as the engine (the same bits); x**3 as two products, within
            # an ulp of NumPy's power, which takes its slow path for it (100x slower)
            if exponent.value == 2:
                return f"{{xp}}.square({a})"
            if exponent.value == 3:
                return f"{a} * {a} * {a}"
        return f"{power}({a}, {b})"

    return spell


def _polygamma_code(args, node, target):
    """polygamma of a whole constant order (digamma's and lgamma's derivatives: the order is
    a literal), NaN at -inf as the forward has it; torch and JAX take the order as an int,
    and SciPy's answer is cast back to the dtype (it computes float32 in float64)."""
    n = node.args[0]
    if n.op != "const" or n.value.ndim != 0 or not (n.value >= 0 and n.value == int(n.value)):
        return None
    k, x = int(n.value), args[1]
    if target == "torch":
        return f"torch.where({x} == -math.inf, math.nan, torch.special.polygamma({k}, {x}))"
    value = f"{{sp}}.polygamma({k}, {x})"
    if target == "numpy":
        value += ".astype({dtype})"
    return f"{{xp}}.where({x} == -{{xp}}.inf, {{xp}}.nan, {value})"


# max/min as NumPy's maximum/minimum: a NaN on either side gives NaN (C's fmax does not)
_MAXIMUM = code("{xp}.maximum({0}, {1})", c="ag_max({0}, {1})")
_MINIMUM = code("{xp}.minimum({0}, {1})", c="ag_min({0}, {1})")


def _mod_node(n):
    # PyTorch's overloads: remainder(Tensor, Scalar) is RemainderBackward0, (Tensor, Tensor)
    # RemainderBackward1; a divisor that takes no gradient is the Scalar one (as pow's)
    return "RemainderBackward1" if n.needs[1] else "RemainderBackward0"


# ---------------------------------------------------------------------------
# Functions of two arguments: _binary(name, grad_fn, forward(a, b), d/da(a, b, out),
# d/db(a, b, out), printing, facts)
# ---------------------------------------------------------------------------

# fmt: off
#       name         grad_fn               forward                             d/da (a, b, out)                                   d/db (a, b, out)                                      printing and facts
_binary("mul",       "MulBackward0",       lambda a, b: a * b,                 lambda a, b, out: b,                               lambda a, b, out: a,                                  printing=infix("*", PRODUCT, (PRODUCT, POWER), " ", spaced=False), total=True, spreads_nonfinite=(0, 1), code=code("{0} * {1}", c="{0} * {1}"), on_complex="holomorphic", linear="each")
_binary("div",       "DivBackward0",       lambda a, b: a / b,                 lambda a, b, out: 1 / b,                           lambda a, b, out: -(out / b),                         printing=infix("/", PRODUCT, (PRODUCT, POWER), ("\\frac{", 0, "}{", 1, "}"), spaced=False, latex_level=POWER), spreads_nonfinite=(0,), code=code("{0} / {1}", c="{0} / {1}"), on_complex="holomorphic", linear=(0,))
_binary("pow",       _pow_node,            _power,                             _pow_da,                                           _pow_db,                                              printing=infix("**", POWER, (ATOM, UNARY), ((0, ATOM), "^{", 1, "}"), spaced=False, names=("pow",)), kink=_where_kink(_pow_kinks, "x**p with p < 1 is not differentiable at x = 0; its derivative there is inf or nan"), code=Code(_pow_code("numpy"), _pow_code("torch"), _pow_code("jax"), _pow_code("c"), numbers=(0, 1)), on_complex="holomorphic")
# max/min of two arguments: ties split the gradient evenly between them, and an argument
# takes the whole gradient unless it lost: with a NaN (no order) both do, as in PyTorch's
# maximum/minimum (grad.masked_fill_(self < other, 0) after halving the ties).
_binary("maximum",   "MaximumBackward0",   lambda a, b: _xp().maximum(a, b),   lambda a, b, out: 1 - lt(a, b) - 0.5 * eq(a, b),   lambda a, b, out: 1 - gt(a, b) - 0.5 * eq(a, b),      printing=function("max", "maximum", latex="\\max", with_constant="clamp_min"), kink=_at_tie("max(a, b) at a tie a == b is not differentiable; the gradient was split evenly"), total=True, piecewise_linear=True, selects=True, code=_MAXIMUM)
_binary("minimum",   "MinimumBackward0",   lambda a, b: _xp().minimum(a, b),   lambda a, b, out: 1 - gt(a, b) - 0.5 * eq(a, b),   lambda a, b, out: 1 - lt(a, b) - 0.5 * eq(a, b),      printing=function("min", "minimum", latex="\\min", with_constant="clamp_max"), kink=_at_tie("min(a, b) at a tie a == b is not differentiable; the gradient was split evenly"), total=True, piecewise_linear=True, selects=True, code=_MINIMUM)
# max/min against a constant (max(x, 0), min(x, 1)): at a tie the constant takes the
# gradient, so max(x, 0) has the same derivative at 0 as relu(x) and where(x > 0, x, 0);
# c is a bound, as in torch.clamp: it takes no gradient.  They print as max(x, c), min(x, c).
_binary("clamp_min", "ClampMinBackward0",  lambda a, b: _xp().maximum(a, b),   lambda a, b, out: gt(a, b),                        lambda a, b, out: None,                               printing=Printing(call="max", latex="\\operatorname{max}"), differentiable=(True, False), kink=_at_tie("max(x, c) at x == c is not differentiable; used 0 for x, as relu'(0) = 0"), total=True, piecewise_linear=True, selects=True, code=_MAXIMUM)
_binary("clamp_max", "ClampMaxBackward0",  lambda a, b: _xp().minimum(a, b),   lambda a, b, out: lt(a, b),                        lambda a, b, out: None,                               printing=Printing(call="min", latex="\\operatorname{min}"), differentiable=(True, False), kink=_at_tie("min(x, c) at x == c is not differentiable; used 0 for x, as relu'(0) = 0"), total=True, piecewise_linear=True, selects=True, code=_MINIMUM)
# polygamma(n, x): see .special; n is an order, not a variable: it takes no gradient, and
# d/dx polygamma(n, x) = polygamma(n + 1, x).
_binary("polygamma", "PolygammaBackward0", _polygamma_forward,                 lambda n, x, out: None,                            lambda n, x, out: call("polygamma", n + 1, x),        printing=function("polygamma", latex=("\\psi^{(", 0, ")}\\left(", 1, "\\right)"), latex_level=ATOM), differentiable=(False, True), spreads_nonfinite=(0,), code=code(_polygamma_code))
# atan2(y, x): the angle of the point (x, y), in [-pi, pi] (NumPy's and PyTorch's order);
# atan2(0, x) is 0 for x > 0 and pi for x < 0 (piecewise).
_binary("atan2",     "Atan2Backward0",     lambda y, x: _xp().arctan2(y, x),   lambda y, x, out: _atan2_partials(y, x)[0],        lambda y, x, out: _atan2_partials(y, x)[1],           printing=function("atan2", "arctan2", latex="\\operatorname{atan2}"), kink=_at_origin("atan2(y, x) is not differentiable at (0, 0); used gradient 0 there (PyTorch)"), total=True, piecewise=True, code=code("{xp}.arctan2({0}, {1})", torch="torch.atan2({0}, {1})", c="atan2({0}, {1})"))
# beta(a, b) = gamma(a) gamma(b) / gamma(a + b) (SciPy's, no overflow for large a, b);
# d/da = beta(a, b) (digamma(a) - digamma(a + b)), and the same in b.
_binary("beta",      "BetaBackward0",      lambda a, b: _special().beta(a, b), lambda a, b, out: out * (call("digamma", a) - call("digamma", a + b)), lambda a, b, out: out * (call("digamma", b) - call("digamma", a + b)), printing=function("beta", latex="\\mathrm{B}"), code=code("{sp}.beta({0}, {1})", torch=None))
# hypot(a, b) = sqrt(a^2 + b^2) without overflow, a length; hypot(x, 0) is abs(x) (piecewise);
# at (0, 0) its partials a/0, b/0 are nan, as in PyTorch.
_binary("hypot",     "HypotBackward0",     lambda a, b: _xp().hypot(a, b),     lambda a, b, out: a / out,                         lambda a, b, out: b / out,                            printing=function("hypot", latex="\\operatorname{hypot}"), kink=_at_origin("hypot(a, b) is not differentiable at (0, 0); its gradient there is 0/0 = nan (PyTorch)"), total=True, nonneg=True, piecewise=True, spreads_nonfinite=(0, 1), code=code("{xp}.hypot({0}, {1})", c="hypot({0}, {1})"))
# logaddexp(a, b) = log(exp(a) + exp(b)) without overflow (NumPy's, torch.logaddexp): d/da is
# 1/(1 + exp(b - a)), PyTorch's form; logaddexp(x, x) is x + log(2), so inf at (inf, inf)
_binary("logaddexp", "LogaddexpBackward0", lambda a, b: _xp().logaddexp(a, b), lambda a, b, out: 1 / (1 + call("exp", b - a)), lambda a, b, out: 1 / (1 + call("exp", a - b)), printing=function("logaddexp", latex="\\operatorname{logaddexp}"), total=True, code=code("{xp}.logaddexp({0}, {1})", c="({0} == {1} ? {0} + 0.6931471805599453 : fmax({0}, {1}) + log1p(exp(-fabs({0} - {1}))))"))
# polar(r, theta) = r*exp(1j*theta) (torch.polar; complex from real r and theta): d/dr = exp(1j*theta),
# d/dtheta = 1j*out (written x * 1j: complex's own product makes a NumPy scalar a Python complex),
# each taken conjugate in reverse mode (a real argument keeps the real part)
_binary("polar",     "PolarBackward0",     lambda a, b: a * _xp().exp(1j * b), lambda a, b, out: call("exp", b * 1j), lambda a, b, out: out * 1j, printing=function("polar", latex="\\operatorname{polar}"), total=True, spreads_nonfinite=(0, 1), on_complex="holomorphic", linear=(0,), code=Code(refused="its values are complex, which generated code does not write yet"))
# mod(a, b): NumPy's np.mod, Python's % (the result has b's sign: mod(-1, 3) = 2), which is
# PyTorch's remainder, not C's fmod.  It jumps where a is a whole multiple of b;
# x - mod(x, 1) is floor(x) (piecewise linear).
_binary("mod",       _mod_node,            lambda a, b: _xp().mod(a, b),       lambda a, b, out: 1.0,                             _mod_db,                                              printing=function("mod", "remainder", latex="\\operatorname{mod}"), kink=_where_kink(lambda i, o, a: o == 0, "mod(a, b) jumps where a is a whole multiple of b; used d/da = 1, d/db = -floor(a/b) (PyTorch's remainder)"), piecewise_linear=True, spreads_nonfinite=(0,), code=code("{xp}.mod({0}, {1})", torch="torch.remainder({0}, {1})", c="ag_mod({0}, {1})"))
# fmt: on


# clip(x, lo, hi) = min(max(x, lo), hi), PyTorch's clamp with tensor bounds, gradients
# included: x takes the gradient where lo <= x <= hi (at the bounds too), lo where x < lo
# < hi, hi where x > hi or hi < lo (then clip is hi everywhere).  NaN propagates.
_elementwise_op(
    "clip",
    # clamp(Tensor, Tensor, Tensor) is ClampBackward0, clamp(Tensor, Scalar, Scalar)
    # ClampBackward1: bounds that take no gradient are the Scalar overload's
    lambda n: "ClampBackward0" if n.needs[1] or n.needs[2] else "ClampBackward1",
    lambda x, lo, hi: _xp().minimum(_xp().maximum(x, lo), hi),
    (
        lambda x, lo, hi, out: call("ge", x, lo) * call("le", x, hi),
        lambda x, lo, hi, out: lt(x, lo) * lt(lo, hi),
        lambda x, lo, hi, out: call("maximum", gt(x, hi), lt(hi, lo)),
    ),
    printing=function("clip", "clamp", latex="\\operatorname{clip}"),
    code=code(
        "{xp}.minimum({xp}.maximum({0}, {1}), {2})",
        c="ag_min(ag_max({0}, {1}), {2})",
    ),
    kink=_where_kink(
        # with lo > hi clip is hi on a whole neighbourhood: no kink there
        lambda i, o, a: ((i[0] == i[1]) | (i[0] == i[2])) & (i[1] <= i[2]),
        "clip(x, lo, hi) at x == lo or x == hi is not differentiable; used gradient 1 for x "
        "and 0 for the bound (PyTorch's clamp)",
    ),
    total=True,
    piecewise_linear=True,
    selects=True,
)


# Comparisons: 0/1 values of the inputs' dtype; no gradient flows through them.
def _comparison(name, symbol, fn, latex):
    def forward(a, b):
        r = getattr(_xp(), fn)(a, b)
        return r.astype(_xp().result_type(a, b, _xp().float16))  # NumPy's promotion, a float

    register(
        Op(
            name,
            name.capitalize() + "Backward0",
            forward,
            None,
            None,
            arity=2,
            differentiable=(False, False),
            kind="comparison",
            code=code(
                f"({{0}} {symbol} {{1}}).astype({{dtype}})",
                torch=f"({{0}} {symbol} {{1}}).to({{dtype}})",
                c=f"({{dtype}})({{0}} {symbol} {{1}})",
            ),
            kink=_zero_almost_everywhere(
                "comparisons pass no gradient (their derivative is zero almost everywhere)"
            ),
            total=True,
            nonneg=True,
            piecewise=True,
            # (SUM, SUM): a comparison operand of a comparison keeps its parentheses, since
            # a < b < c is a chain, as in Python, not (a < b) < c.
            printing=infix(symbol, COMPARE, (SUM, SUM), latex),
        )
    )


for _name, _symbol, _fn, _latex in (
    ("lt", "<", "less", " < "),
    ("le", "<=", "less_equal", " \\leq "),
    ("gt", ">", "greater", " > "),
    ("ge", ">=", "greater_equal", " \\geq "),
    ("eq", "==", "equal", " = "),
    ("ne", "!=", "not_equal", " \\neq "),
):
    _comparison(_name, _symbol, _fn, _latex)


def _where_vjp(n, g):
    cond = n.inputs[0]
    ga = sum_to(where(cond, g, 0.0), n.shapes[1]) if n.needs[1] else None
    gb = sum_to(where(cond, 0.0, g), n.shapes[2]) if n.needs[2] else None
    return None, ga, gb


def _where_jvp(n, ts):
    _, ta, tb = ts
    if ta is None and tb is None:
        return None
    cond = n.inputs[0]
    ta = zeros_like(n.inputs[1]) if ta is None else ta
    tb = zeros_like(n.inputs[2]) if tb is None else tb
    return broadcast_to(where(cond, ta, tb), n.out.shape)


register(
    Op(
        "where",
        "WhereBackward0",
        lambda c, a, b: _xp().where(c != 0, a, b),
        _where_vjp,
        _where_jvp,
        arity=3,
        differentiable=(False, True, True),
        printing=function("where", latex="\\operatorname{where}"),
        code=code("{xp}.where({0} != 0, {1}, {2})", c="({0} != 0.0 ? {1} : {2})", numbers=(1, 2)),
        total=True,
        piecewise=True,
        on_complex="rules",
        linear=True,
    )
)


def _zeros_like_forward(a):
    return _xp().zeros_like(a)


register(
    Op(
        "zeros_like",
        "ZerosLikeBackward0",
        _zeros_like_forward,
        None,
        None,
        differentiable=(False,),
        kind="constant",
        internal=True,
        code=code("{xp}.zeros_like({0})", c="0.0"),
        on_complex="rules",
    )
)
