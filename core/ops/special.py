"""The forwards of the special functions (issue 13) that take more than a line, and the
partials of those of issue 27 that take more than a line.

erf, erfc, erfcx, erfinv, gamma, lgamma, digamma, polygamma, beta, the Bessel functions
(j0, j1, i0, i0e, i1, i1e) and the incomplete gamma and beta functions (gammainc, gammaincc,
betainc) come from scipy.special (cupyx.scipy.special on the GPU), imported on first use
only: start-up never pays for SciPy, and without it these ops say how to get it.  cbrt is
here too: NumPy's is not exact on every CPU.  Their entries are lines of
:mod:`.elementwise`'s table.
"""

from __future__ import annotations

import math

from .. import backend
from ..errors import UnsupportedError
from .rules import _array, _xp, call, where


def _special():
    """The module of special functions for the current device (SciPy's or CuPy's)."""
    if backend.device == "gpu":  # pragma: no cover - CuPy with a GPU
        import cupyx.scipy.special as special  # noqa: PLC0415 - only on the GPU path

        return special
    try:
        import scipy.special as special  # type: ignore[import-untyped]  # noqa: PLC0415
    except ImportError:
        raise UnsupportedError(
            "erf, erfc, erfcx, erfinv, gamma, lgamma, digamma, polygamma, beta, j0, j1, i0, "
            "i0e, i1, i1e, gammainc, gammaincc and betainc need SciPy: pip install scipy"
        ) from None
    return special


def _erfinv_forward(a):
    # scipy gives erfinv(-0.0) = +0.0; PyTorch (and oddness) keep the sign of zero.
    r = _special().erfinv(a)
    return _xp().where(a == 0, a, r)


def _lgamma_forward(a):
    # log|gamma(x)|; lgamma(-inf) = +inf as in C99 and PyTorch (scipy's gammaln says -inf).
    r = _special().gammaln(a)
    return _xp().where(a == -_xp().inf, _xp().inf, r)


TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0


def _two_product(u, v):
    """u*v as p + e exactly (Dekker's product with Veltkamp's split; no FMA needed)."""
    p = u * v
    c = 134217729.0 * u  # 2**27 + 1
    uh = c - (c - u)
    ul = u - uh
    c = 134217729.0 * v
    vh = c - (c - v)
    vl = v - vh
    return p, ((uh * vh - p) + uh * vl + ul * vh) + ul * vl


def _cbrt_forward(a):
    """The real cube root within 1/2 ulp, so exact cubes come out exact on every CPU.

    NumPy's cbrt depends on the SIMD loop the CPU gets: without AVX-512 an array's
    cbrt(27) is 3.0000000000000004.  One Newton step on the residual a - y**3, computed
    exactly in float64 (y**3 = q + e2 + e1*y by two error-free products; a - q is exact
    as q is within a few ulps of a), moves y to the nearest double of the true root.  The
    step runs where its products stay normal and finite (|a| in [1e-200, 1e300]); elsewhere
    (0, inf, nan, the extremes) the library's value stands.  float32 is computed in
    float64 and rounded once.
    """
    xp = _xp()
    a = xp.asarray(a)
    if a.dtype == xp.float32:
        return _cbrt_forward(a.astype(xp.float64)).astype(xp.float32)
    y = xp.cbrt(a)
    if y.dtype != xp.float64:
        return y
    mag = xp.abs(a)
    safe = (mag >= 1e-200) & (mag <= 1e300)
    a1 = xp.where(safe, a, 1.0)
    y1 = xp.where(safe, y, 1.0)
    p, e1 = _two_product(y1, y1)
    q, e2 = _two_product(p, y1)
    residual = ((a1 - q) - e2) - e1 * y1
    return xp.where(safe, y1 + residual / (3.0 * p), y)


def _erfcx_forward(a):
    special = _special()
    if not hasattr(special, "erfcx"):  # pragma: no cover - a CuPy before erfcx
        raise UnsupportedError("erfcx on the GPU needs a CuPy with cupyx.scipy.special.erfcx")
    return special.erfcx(a)


def _gamma_forward(a):
    xp = _xp()
    r = _special().gamma(a)
    # The poles as C99's tgamma and PyTorch have them, whatever the SciPy release (before
    # 1.15 SciPy gave +inf at the negative integers and at -0.0): +-inf at +-0, nan at the
    # negative integers and at -inf
    r = xp.where(a == 0, xp.copysign(xp.inf, a), r)
    r = xp.where((a < 0) & (a == xp.floor(a)), xp.nan, r)
    # SciPy's gamma underflows to 0 below -171, where gamma is still a subnormal number
    # (gamma(-171.5) = 1.9e-310, as C's tgamma and mpmath): there |gamma| = exp(lgamma),
    # with the sign of (-1)**(floor(-x) + 1) between the poles
    deep = (a < -171.0) & (a > -190.0) & (a != xp.floor(a))
    if backend.any_nonzero(deep):
        sign = xp.where(xp.floor(-a) % 2 == 0, -1.0, 1.0)
        r = xp.where(deep, sign * xp.exp(_special().gammaln(a)), r)
    return r


# polygamma(n, x): the n-th derivative of digamma, for a whole n >= 0 (nan for any other
# n, as torch.polygamma takes integers only); +-inf at the poles 0, -1, -2, ... (PyTorch's
# trigamma gives a large finite number there).  n is an order, not a variable: it takes no
# gradient (differentiable=), and d/dx polygamma(n, x) = polygamma(n + 1, x).
def _polygamma_forward(n, x):
    xp = _xp()
    whole = (n >= 0) & (n == xp.floor(n)) & (n != xp.inf)  # inf == floor(inf), not whole
    r = _special().polygamma(xp.where(whole, n, 0), x)
    # nan at -inf, where digamma is nan too (scipy says inf for n >= 1)
    return xp.where(whole & (x != -xp.inf), r, xp.nan)


def _sp(name):
    """The forward ``a -> special.name(a)``: the device's special function ``name``."""
    return lambda a: getattr(_special(), name)(a)


# ---------------------------------------------------------------------------
# The partials of issue 27's special functions that take more than a line, each as PyTorch
# (or, where PyTorch has no derivative, JAX) writes it
# ---------------------------------------------------------------------------

PI = math.pi
EPS = 2.220446049250313e-16  # float64's machine epsilon: PyTorch's "tiny" in i1_backward


def _any_tiny(x) -> bool:
    """Some element of ``x`` is within machine epsilon of 0 (a symbolic or traced value:
    whether it may be zero)."""
    return _any_small(x, EPS)


def _any_small(x, bound: float) -> bool:
    """Some element of ``x`` is within ``bound`` of 0 (a symbolic or traced value: whether
    it may be zero)."""
    a = _array(x)
    if a is not None:
        with backend.errstate():
            return backend.any_nonzero(_xp().abs(a) <= bound)
    return getattr(x, "maybe_zero", True)


#: sinc'(x) = pi * sum_k c_k u^(2k-1), u = pi x: the series' coefficients, highest first
#: (c_k = (-1)^k 2k / (2k+1)!, k = 20..1), summed where |u| < 0.1.  Five terms give sinc' to
#: rounding, but the engine differentiates this polynomial for the higher derivatives
#: (grad --order, taylor at 0): k up to 20 keeps every order up to --order's cap of 20 exact
#: at 0 and to rounding for |u| < 0.1 (with k <= 5 sinc's 12th derivative was 0 there).
_SINC_D_SERIES = tuple((-1) ** k * 2 * k / math.factorial(2 * k + 1) for k in range(20, 0, -1))


def _sinc_d(x, out):
    """PyTorch's sinc_backward, (pi x cos(pi x) - sin(pi x)) / (pi x^2), and near 0 (|pi x|
    < 0.1, x = 0 included) its series: the quotient loses all its digits there (at x = 1e-8
    a third of them, its derivative sinc'' -5.66 for -3.29), the series none, and its own
    derivatives are right too: 0 at 0 as PyTorch has it, sinc''(0) = -pi^2/3 (PyTorch's
    double backward is nan there).  The quotient is taken at 1 where the series is used:
    its derivatives at 0 (0/0) would make the higher ones nan through where's zeros."""
    if not _any_small(x * PI, 0.1):
        return _sinc_quotient(x)
    px = x * PI
    small = call("lt", call("abs", px), 0.1)
    u2 = px * px
    poly = _SINC_D_SERIES[0]
    for c in _SINC_D_SERIES[1:]:
        poly = poly * u2 + c
    away = _sinc_quotient(where(small, 1.0, x))
    return where(small, px * poly * PI + 0.0, away)  # + 0.0: no -0 at 0


def _sinc_quotient(x):
    px = x * PI
    return (px * call("cos", px) - call("sin", px)) / (x * x * PI)


def _tiny_limit(x, d, limit: float):
    """``d``, and ``limit`` where |x| <= machine epsilon (PyTorch's i1_backward)."""
    if _any_tiny(x):
        d = where(call("le", call("abs", x), EPS), limit, d)
    return d


def _j1_d(x, out):
    # J1' = J0 - J1/x, 1/2 at 0 (as i1's, PyTorch's form for I1)
    return _tiny_limit(x, call("j0", x) - out / x, 0.5)


def _i1_d(x, out):
    # PyTorch's i1_backward: I1' = I0 - I1/x, 1/2 where |x| <= eps
    return _tiny_limit(x, call("i0", x) - out / x, 0.5)


def _i1e_d(x, out):
    # PyTorch's i1e_backward: i1e' = i0e - i1e (sign(x) + 1/x), 1/2 where |x| <= eps
    return _tiny_limit(x, call("i0e", x) - out * (call("sign", x) + 1 / x), 0.5)


def _gammainc_dx(a, x, out):
    """PyTorch's d/dx of gammainc(a, x) (igamma's): exp((a - 1) log x - x - lgamma(a)), the
    integrand x^(a-1) e^(-x) / Gamma(a) (nan at a = 1, x = 0, where 0 * log 0 is nan)."""
    return call("exp", (a - 1) * call("log", x) - x - call("lgamma", a))


def _betainc_dx(a, b, x, out):
    """JAX's d/dx of betainc(a, b, x): exp((b - 1) log1p(-x) + (a - 1) log x - lbeta(a,
    b)), the integrand x^(a-1) (1-x)^(b-1) / B(a, b)."""
    lbeta = call("lgamma", a) + call("lgamma", b) - call("lgamma", a + b)
    return call("exp", (b - 1) * call("log1p", -x) + (a - 1) * call("log", x) - lbeta)


def bessel_derivatives(name: str, x: float, n: int) -> list[float]:
    """[f(x), f'(x), ..., f^(n-1)(x)] of the Bessel function ``name`` (j0, j1, i0, i1, i0e,
    i1e; x not 0) for Taylor mode: f_v^(m) = 2^-m sum_k (-+1)^k C(m, k) f_(v-m+2k) for f_v = J_v
    (-) or I_v (+), SciPy's of whole order; the scaled exp(-s x) I_v (s = sign x) by
    Leibniz's rule, with SciPy's ive = exp(-|x|) I_v."""
    special, v = _special(), int(name[1])
    f, pm = (special.jv, -1) if name[0] == "j" else (special.iv, 1)
    if name[-1] == "e":
        f = special.ive
    d = [
        float(sum(math.comb(m, k) * pm**k * f(v - m + 2 * k, x) for k in range(m + 1))) / 2**m
        for m in range(n)
    ]
    if name[-1] != "e":
        return d
    s = -math.copysign(1.0, x)
    return [sum(math.comb(m, j) * s ** (m - j) * d[j] for j in range(m + 1)) for m in range(n)]


def sinc_derivatives(x: float, n: int) -> list[float]:
    """[sinc(x), sinc'(x), ..., sinc^(n-1)(x)] for Taylor mode (0 included): for |pi x| < 4 from
    sinc's Maclaurin series, sum_j (-1)^j (pi x)^(2j) / (2j+1)!, differentiated term by term
    (no cancellation near 0); else by x f^(m) + m f^(m-1) = pi^(m-1) sin(pi x + m pi/2)."""
    px = PI * x
    if abs(px) >= 4:
        turns = (math.sin(px), math.cos(px), -math.sin(px), -math.cos(px))  # sin(px + m pi/2)
        d = [turns[0] / px]
        for m in range(1, n):
            d.append((PI ** (m - 1) * turns[m % 4] - m * d[m - 1]) / x)
        return d
    return [
        PI**m
        * math.fsum(
            (-1) ** j * px ** (2 * j - m) / ((2 * j + 1) * math.factorial(2 * j - m))
            for j in range((m + 1) // 2, m // 2 + 60)
        )
        for m in range(n)
    ]
