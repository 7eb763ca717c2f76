"""Taylor mode: truncated Taylor polynomials pushed through the expression graph.

Univariate Taylor arithmetic (Griewank & Walther, *Evaluating Derivatives*, ch. 13; JAX's
``jet``): every node of the program carries the K + 1 coefficients of its own Taylor
polynomial in the one variable ``x`` around the point, ``c[k] = (d/dx)^k node / k!``, and
each op maps its arguments' coefficients to its result's with an O(K^2) rule: the Cauchy
product for ``*``, a recurrence for ``/``, ``sqrt`` and ``a**p``, and for a function with
a known derivative, ``y' = g * u'`` integrated term by term (``y_k = sum_j j u_j g_(k-j) / k``),
where ``g`` is itself a series (``exp``: ``g = y``; ``sin``/``cos``: each other's;
``tan``: ``1 + y**2``; ``atan``: ``1/(1 + u**2)``).  One walk of :func:`~.interpret.interpret`
gives all K + 1 coefficients of the output, where the repeated reverse-mode differentiation
of :mod:`.taylor` builds and differentiates a graph K times, at a cost that grows much faster
than K^2.

Only the variable expanded in varies: every other variable, constant, and node that does not
depend on it is a constant, evaluated by the engine (any shape, any op).  A node that depends
on it is *live*; its value (coefficient 0) is always the engine's own forward value, bit for
bit, so the value and ``c[0]`` equal the old path's exactly.

The numbers must be the engine's: the old path differentiates the op table's derivative rules,
with PyTorch's conventions, and this one must give the same numbers up to rounding.  So a live
node is *poisoned* (with a reason) where the two could differ, and an output that depends on a
poisoned node makes :func:`taylor_coefficients` raise :class:`NoTaylorMode`, on which
:func:`.taylor.taylor` falls back to the old path:

* an op without a Taylor rule (reductions of arrays, indexing, linear algebra, matmul), or a
  live node that is not a scalar;
* a singular point: a zero base of ``sqrt``, ``cbrt`` or a non-integer power, ``asin`` or
  ``acos`` at +-1, ``atan2`` and ``hypot`` at the origin, a variable exponent of a base <= 0;
* ``a ** b`` with both live and ``b`` a whole number 0..K at the point: the engine (like
  PyTorch) pins ``d(a**b)/da`` to 0 where ``b == 0`` with a ``where``, which cuts the
  derivatives of that partial, so its coefficients from order ``b + 2`` on are not those of
  ``a**b`` (``x**x`` at 1 or 2); the old path keeps giving them;
* a derivative coefficient that is not finite, a derivative ``|c_k| * k!`` above 1e300, a
  local partial derivative above 1e300, or an op near a singularity (a pole, a branch point)
  so close that its derivatives up to order K, which the engine's graphs compute, overflow
  (``x/x`` at 1e-80: its series is 1, 0, 0, ..., the engine's is nan from order 4): where the
  engine overflows, its inf or nan is the answer;
* a value that is not finite, read by an op not linear in it, or made by a zero partial
  absorbing a poison.  Otherwise its derivatives are the series' (``log(x)`` at -1: nan,
  then -1, -1/2, ..., the engine's ``1/x`` and its derivatives; ``acosh(x)`` at -2, whose
  engine derivative is PyTorch's 1/sqrt(x*x - 1)), and ops linear in it pass them on, so
  Taylor mode answers.  tests/test_taylor_mode.py sweeps every rule at points where values
  are not finite against the old path: an op whose engine derivative reads its own value
  there would fail it by name.

Piecewise ops take the branch the point is on, with the engine's own local partials
(``abs``: ``sign(u)``, ``relu``: ``u > 0``, ``max``/``min``: 1, 0 or 1/2 at a tie, ``clip``,
``mod``): read from the op table (``Op.deriv``) at the point, they are constants, so these ops
are linear there.  An argument whose partial is exactly 0 there (the branch ``where`` does not
take, ``sign``, ``floor``, the inactive side of ``max``, a factor 0, an exponent 0) passes
nothing on, in the engine (a zero cotangent stays zero through an inf or nan partial, see
``ops.chain``) as here: a node poisoned by an exactly non-finite value or partial there, or
by an op without a rule, does not poison the result.  A node poisoned by a risk of overflow
(a *hard* poison: finite numbers too large) always does, since the engine's zero times an
inf that its own products made is nan (``sign(log(x))`` at 1e-100).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from operator import mul

import numpy

from . import backend
from .errors import AutogradCliError
from .interpret import Interpretation, interpret
from .ops.special import bessel_derivatives, sinc_derivatives
from .program import Expr, Program
from .recording import parse_value
from .tensor import OPS, Tensor, apply, no_grad

__all__ = ["NoTaylorMode", "TaylorJets", "Jet", "RULES", "taylor_coefficients"]

#: the largest derivative or local partial derivative trusted not to overflow in the engine
LIMIT = 1e300
#: exponents a power is taken to by repeated multiplication of series (0 base allowed)
MAX_INTEGER_POWER = 1024

LN2 = math.log(2.0)
LN10 = math.log(10.0)
TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0


class NoTaylorMode(Exception):
    """Taylor mode does not give the engine's numbers here (the message says why): the
    caller falls back to repeated differentiation."""


class _Poisoned(Exception):
    """Raised inside a rule: this node has no trustworthy series (the message says why).

    ``hard``: where the engine's derivatives may overflow (finite numbers, but too large),
    as opposed to an exactly non-finite value or partial at the point, or no rule at all.
    Only a soft poison can be absorbed by a zero partial (see :class:`TaylorJets`).
    """

    def __init__(self, reason: str, hard: bool = False):
        super().__init__(reason)
        self.hard = hard


@dataclass(eq=False, slots=True)
class Jet:
    """A node's value: the engine's ``value`` (a Tensor), and, for a live node, either its
    Taylor coefficients ``c`` (K + 1 floats) or the reason it has none (``poison``; ``hard``:
    see :class:`_Poisoned`)."""

    value: Tensor
    c: list[float] | None = None
    poison: str | None = None
    hard: bool = False
    #: why the value ``c[0]`` is not finite (``log(x)`` at -1: nan), where the coefficients
    #: from 1 on are: an op linear in this node passes them on, as the engine's derivatives
    #: do (they never read a linear op's argument); to any other op the node is poisoned
    nonfinite: str | None = None
    #: a polynomial's degree in x by the graph's shape (x: 1, x*x: 2, an op linear in it:
    #: its argument's), None for any other function: coefficients past it are exact +0.0,
    #: as the engine's derivatives there are (their graph no longer reaches x: zeros)
    degree: int | None = None

    @property
    def live(self) -> bool:
        return self.c is not None or self.poison is not None

    def __repr__(self) -> str:
        if self.poison is not None:
            return f"Jet(poisoned: {self.poison})"
        return f"Jet({self.c if self.c is not None else 'constant'})"


class _Args:
    """What a rule reads: the order, the op, its arguments and its (engine) result."""

    __slots__ = ("n", "op", "node", "jets", "live", "out", "out0")

    def __init__(self, n: int, op, node: Expr, jets: list, live: tuple, out: Tensor):
        self.n = n  # K + 1 coefficients
        self.op = op
        self.node = node
        self.jets = jets
        self.live = live  # live[i]: argument i depends on x and the op differentiates it
        self.out = out
        self.out0 = float(out.data)

    def v(self, i: int) -> float:
        """Argument ``i``'s value at the point (a scalar)."""
        data = self.jets[i].value.data
        if data.ndim != 0:
            raise _Poisoned(f"{self.op.name} of an array")
        return float(data)

    def s(self, i: int) -> list[float]:
        """Argument ``i``'s coefficients: a constant's are its value and zeros."""
        jet = self.jets[i]
        if not self.live[i]:
            return [self.v(i)] + [0.0] * (self.n - 1)
        if jet.c is None:
            raise _Poisoned(jet.poison or "no series", jet.hard)
        return jet.c

    def zeros(self) -> list[float]:
        """The result's value with zero derivatives."""
        return [self.out0] + [0.0] * (self.n - 1)


Rule = Callable[[_Args], list]
RULES: dict[str, Rule] = {}
#: the ops whose rule multiplies the result's own series by a series (tan: y' = (1 + y*y) u',
#: gamma: y' = y digamma(u) u'): the result's products are checked too
MULTIPLIES_OUT: set[str] = set()


def _rule(*names: str, multiplies_out: bool = False):
    """Register the decorated function as the Taylor rule of the ops ``names`` (each an op of
    the table: tests/test_taylor_mode.py names any that is not), with what the overflow
    guard needs to know of its arithmetic (that of the op's own: its entry's ``linear``)."""

    def register(fn: Rule) -> Rule:
        for name in names:
            RULES[name] = fn
            if multiplies_out:
                MULTIPLIES_OUT.add(name)
        return fn

    return register


# ---------------------------------------------------------------------------
# Series arithmetic on lists of floats (n coefficients)
# ---------------------------------------------------------------------------


def _partial(p: float, what: str) -> None:
    """Poison unless the engine's local partial derivative ``p`` is safely finite."""
    if not abs(p) <= LIMIT:  # nan fails too; finite but large: the engine may overflow
        raise _Poisoned(f"{what}: a local derivative of {p!r} at the point", math.isfinite(p))


_LOG_LIMIT = math.log(LIMIT)


#: the highest order the guards look at: beyond it k! is not a float, and the old path,
#: which divides by it, gives no numbers to agree with
_GUARDED_ORDER = 170


def _growth(u: list) -> float:
    """How fast the derivatives of a series grow: ``max_j (j! |u_j|)**(1/j)``, j <= 170, so
    that a product of derivatives of total order k is at most ``growth**k``."""
    g, fact = 0.0, 1.0
    for j in range(1, min(len(u), _GUARDED_ORDER + 1)):
        fact *= j
        if u[j]:
            g = max(g, (fact * abs(u[j])) ** (1.0 / j))
    return g


def _near_singularity(u: list, rho: float, scale: float, what: str) -> None:
    """Poison where the engine's derivatives of this op, up to order K, could overflow.

    A function with a singularity at distance ``rho`` from its argument's value has m-th
    derivatives of about ``scale * m! / rho**m``, and the engine's derivative graphs
    multiply them by products of the argument's derivatives of total order up to K (at most
    ``growth**K``, :func:`_growth`).  ``d^k/dx^k (x/x)`` at 1e-80 overflows there, not here:
    its series is exactly 1, 0, 0, ....
    """
    n = min(len(u), _GUARDED_ORDER + 1)
    growth = _growth(u)
    if growth == 0:
        return
    if not rho > 0:
        raise _Poisoned(f"{what} at a singular point")
    k = n - 1
    local = max(0.0, math.lgamma(k + 1.0) - k * math.log(rho))  # max over m <= k (convex)
    size = local + k * math.log(max(1.0, growth)) + math.log(max(1.0, abs(scale)))
    if not size <= _LOG_LIMIT:
        raise _Poisoned(
            f"{what} near a singular point: its derivatives overflow the engine", hard=True
        )


def _products_fit(u: list, what: str) -> None:
    """Poison unless products of ``u``'s derivatives of total order K fit a float:
    ``growth(u)**K`` (:func:`_growth`).  ``u`` is an argument of a nonlinear op in the
    engine's derivative graphs (an argument of the op, or an intermediate of its derivative
    formula, such as ``x*x + y*y`` in atan2's), whose graphs multiply that many of them
    before the op's own small factors can bring the product back (``atan2(x, 1e288**x)``:
    ``u'**3`` is inf there)."""
    k = min(len(u) - 1, _GUARDED_ORDER)
    growth = _growth(u)
    if growth > 1 and k * math.log(growth) > _LOG_LIMIT:
        raise _Poisoned(f"{what}: products of derivatives overflow the engine", hard=True)


def _pole_distance(x: float) -> float:
    """How far x is from the poles of gamma and its relatives, 0, -1, -2, ..."""
    if x != x:
        return x  # nan: no distance (a singular point to the guards)
    return x if x > 0 else abs(x - round(x))


def _times(a: list, w: float) -> list:
    return [w * x for x in a]


def _product(a: list, b: list, n: int) -> list:
    """The Cauchy product: c_k = sum_j a_j b_(k-j)."""
    return [sum(map(mul, a[: k + 1], b[k::-1])) for k in range(n)]


def _quotient(a: list, b: list, q0: float, n: int) -> list:
    """a / b: q_k = (a_k - sum_(j>=1) b_j q_(k-j)) / b_0."""
    b0 = b[0]
    q = [q0]
    for k in range(1, n):
        q.append((a[k] - sum(map(mul, b[1 : k + 1], q[k - 1 :: -1]))) / b0)
    return q


def _weighted(u: list, n: int) -> list:
    """j * u_j: the coefficients of t * u'(t)."""
    return [j * u[j] for j in range(n)]


def _integral(du: list, g: list, y0: float, n: int) -> list:
    """y with y' = g * u' (``du = _weighted(u)``): y_k = sum_(j=1..k) j u_j g_(k-j) / k."""
    y = [y0]
    for k in range(1, n):
        y.append(sum(map(mul, du[1 : k + 1], g[k - 1 :: -1])) / k)
    return y


def _exp(u: list, e0: float, n: int) -> list:
    """exp(u) with exp(u_0) = ``e0``: e' = e u'."""
    du = _weighted(u, n)
    e = [e0]
    for k in range(1, n):
        e.append(sum(map(mul, du[1 : k + 1], e[k - 1 :: -1])) / k)
    return e


def _log(u: list, l0: float, n: int) -> list:
    """log(u) with log(u_0) = ``l0``: u l' = u'."""
    u0 = u[0]
    dl = [0.0]
    out = [l0]
    for k in range(1, n):
        lk = (u[k] - sum(map(mul, dl[1:k], u[k - 1 : 0 : -1])) / k) / u0
        out.append(lk)
        dl.append(k * lk)
    return out


def _sqrt(u: list, s0: float, n: int) -> list:
    """sqrt(u) with sqrt(u_0) = ``s0`` (not 0): s * s = u."""
    s = [s0]
    two_s0 = 2.0 * s0
    for k in range(1, n):
        s.append((u[k] - sum(map(mul, s[1:k], s[k - 1 : 0 : -1]))) / two_s0)
    return s


def _power(a: list, p: float, y0: float, n: int) -> list:
    """a ** p (a_0 not 0) with a_0 ** p = ``y0``: a y' = p a' y, so
    y_k = sum_(j=1..k) ((p + 1) j - k) a_j y_(k-j) / (k a_0)."""
    a0 = a[0]
    da = _weighted(a, n)
    y = [y0]
    for k in range(1, n):
        s1 = sum(map(mul, da[1 : k + 1], y[k - 1 :: -1]))
        s2 = sum(map(mul, a[1 : k + 1], y[k - 1 :: -1]))
        y.append(((p + 1.0) * s1 - k * s2) / (k * a0))
    return y


def _integer_power(a: list, p: int, n: int) -> list:
    """a ** p for a whole p >= 1 by repeated squaring of series (exact polynomial
    arithmetic: a zero a_0 is fine)."""
    result: list | None = None
    base = a
    while True:
        if p & 1:
            result = base if result is None else _product(result, base, n)
        p >>= 1
        if not p:
            assert result is not None
            return list(result) if result is a else result  # never the argument's own list
        base = _product(base, base, n)


def _compose(u: list, derivatives: list, n: int) -> list:
    """f(u) from f's derivatives at u_0 (``derivatives[m]`` = f^(m)(u_0), m >= 1): the
    Taylor polynomial of f in powers of u - u_0 (Faa di Bruno; O(K^3), for the special
    functions only).  Coefficient 0 is left to the caller."""
    delta = [0.0] + list(u[1:n])
    out = [0.0] * n
    power = delta
    scale = 1.0
    for m in range(1, n):
        scale /= m
        coef = derivatives[m] * scale
        for k in range(m, n):
            out[k] += coef * power[k]
        if m + 1 < n:
            power = _product(power, delta, n)
    return out


def _value(name: str, *xs: float) -> float:
    """The engine's forward of op ``name`` at the numbers ``xs`` (a partner function's value:
    ``cos`` for ``sin``)."""
    host = backend.host
    return float(OPS[name].forward(*[host.asarray(x, dtype=host.float64) for x in xs]))


# ---------------------------------------------------------------------------
# The rules: each returns the n coefficients (coefficient 0 is then set to the engine's)
# ---------------------------------------------------------------------------


@_rule("add", "sub")
def _add(r: _Args) -> list:
    sign = 1.0 if r.op.name == "add" else -1.0
    if not r.live[1]:
        return [r.out0] + list(r.s(0)[1:])
    if not r.live[0]:
        return [r.out0] + [sign * x for x in r.s(1)[1:]]
    a, b = r.s(0), r.s(1)
    return [x + sign * y for x, y in zip(a, b)]


@_rule("neg")
def _neg(r: _Args) -> list:
    return [-x for x in r.s(0)]


@_rule("sum", "mean", "reshape", "transpose", "broadcast_to", "sum_to", "real", "conj")
def _identity(r: _Args) -> list:
    # linear ops, at a scalar: the identity (a scalar in, a scalar out)
    r.v(0)
    return list(r.s(0))


@_rule("mul")
def _mul(r: _Args) -> list:
    for i in (0, 1):
        if not r.live[1 - i]:  # times a constant, which may be an exact 0 (absorbing)
            w = r.v(1 - i)
            return r.zeros() if w == 0 else _times(r.s(i), w)
    return _product(r.s(0), r.s(1), r.n)


@_rule("div", multiplies_out=True)
def _div(r: _Args) -> list:
    b0 = r.v(1)
    if b0 == 0:
        raise _Poisoned("division by zero")
    _partial(1.0 / b0, "div")
    if not r.live[1]:
        return _times(r.s(0), 1.0 / b0)
    _partial(r.out0 / b0, "div")
    b = r.s(1)
    _near_singularity(b, abs(b0), max(abs(r.out0), abs(1.0 / b0)), "div")
    return _quotient(r.s(0), b, r.out0, r.n)


@_rule("pow", multiplies_out=True)
def _pow(r: _Args) -> list:
    n, y0 = r.n, r.out0
    a0, b0 = r.v(0), r.v(1)
    if not r.live[1]:  # a constant exponent
        p = b0
        if p == 0:  # the engine pins d(a**0)/da to 0, a zero base included
            return r.zeros()
        a = r.s(0)
        if p.is_integer() and 1 <= p <= MAX_INTEGER_POWER:
            return _integer_power(a, int(p), n)
        if a0 == 0:
            raise _Poisoned(f"pow: a zero base to the power {p!r}")
        _partial(p * y0 / a0, "pow")
        _near_singularity(a, abs(a0), y0, "pow")
        return _power(a, p, y0, n)
    # a variable exponent: exp(b * log(a))
    if not a0 > 0:
        raise _Poisoned("pow: a variable exponent of a base <= 0")
    b = r.s(1)
    _partial(y0 * math.log(a0), "pow")
    if r.live[0]:
        if b0.is_integer() and 0 <= b0 <= n:
            raise _Poisoned("pow: a whole exponent at the point, where the engine pins d(a**b)/da")
        _partial(b0 * y0 / a0, "pow")
        a = r.s(0)
        _near_singularity(a, a0, y0, "pow")
        log_a = _log(a, math.log(a0), n)
        exponent = _product(b, log_a, n)
    else:
        exponent = _times(b, math.log(a0))
    return _exp(exponent, y0, n)


@_rule("exp")
def _exp_rule(r: _Args) -> list:
    return _exp(r.s(0), r.out0, r.n)


@_rule("expm1")
def _expm1(r: _Args) -> list:
    u = r.s(0)
    return [r.out0] + _exp(u, _value("exp", u[0]), r.n)[1:]


@_rule("log", "log2", "log10")
def _log_rule(r: _Args) -> list:
    u = r.s(0)
    u0 = u[0]
    scale = {"log": 1.0, "log2": LN2, "log10": LN10}[r.op.name]
    if u0 == 0:
        raise _Poisoned(f"{r.op.name} of zero")
    _partial(1.0 / (u0 * scale), r.op.name)
    _near_singularity(u, abs(u0), 1.0, r.op.name)
    series = _log(u, math.nan, r.n)
    return [r.out0] + [x / scale for x in series[1:]]


@_rule("log1p")
def _log1p(r: _Args) -> list:
    u = r.s(0)
    base = [1.0 + u[0]] + list(u[1:])
    if base[0] == 0:
        raise _Poisoned("log1p of -1")
    _partial(1.0 / base[0], "log1p")
    _near_singularity(u, abs(base[0]), 1.0, "log1p")
    return _log(base, r.out0, r.n)


@_rule("sqrt", multiplies_out=True)
def _sqrt_rule(r: _Args) -> list:
    if r.out0 == 0:
        raise _Poisoned("sqrt of zero")
    _partial(1.0 / (2.0 * r.out0), "sqrt")
    u = r.s(0)
    _near_singularity(u, abs(u[0]), r.out0, "sqrt")
    return _sqrt(u, r.out0, r.n)


@_rule("cbrt", multiplies_out=True)
def _cbrt(r: _Args) -> list:
    u = r.s(0)
    if u[0] == 0:
        raise _Poisoned("cbrt of zero")
    _partial(1.0 / (3.0 * (r.out0 * r.out0)), "cbrt")
    _near_singularity(u, abs(u[0]), r.out0, "cbrt")
    return _power(u, 1.0 / 3.0, r.out0, r.n)


def _coupled(u: list, y0: float, z0: float, sign: float, n: int) -> tuple[list, list]:
    """(y, z) with y' = z u' and z' = sign * y u': (sin, cos) with sign -1, (sinh, cosh) +1."""
    du = _weighted(u, n)
    y, z = [y0], [z0]
    for k in range(1, n):
        y.append(sum(map(mul, du[1 : k + 1], z[k - 1 :: -1])) / k)
        z.append(sign * sum(map(mul, du[1 : k + 1], y[k - 1 :: -1])) / k)
    return y, z


@_rule("sin", "cos")
def _sin_cos(r: _Args) -> list:
    u = r.s(0)
    if r.op.name == "sin":
        return _coupled(u, r.out0, _value("cos", u[0]), -1.0, r.n)[0]
    return _coupled(u, _value("sin", u[0]), r.out0, -1.0, r.n)[1]


@_rule("sinh", "cosh")
def _sinh_cosh(r: _Args) -> list:
    u = r.s(0)
    if r.op.name == "sinh":
        return _coupled(u, r.out0, _value("cosh", u[0]), 1.0, r.n)[0]
    return _coupled(u, _value("sinh", u[0]), r.out0, 1.0, r.n)[1]


def _riccati(u: list, y0: float, w0: float, a: float, b: float, n: int) -> list:
    """y with y' = w u', where w = a * y + b * y**2 (+ the constant in ``w0`` = w(y_0)):
    tan (w = 1 + y^2), tanh (1 - y^2), sigmoid (y - y^2), built one order at a time."""
    du = _weighted(u, n)
    y, w = [y0], [w0]
    for k in range(1, n):
        y.append(sum(map(mul, du[1 : k + 1], w[k - 1 :: -1])) / k)
        w.append(a * y[k] + b * sum(map(mul, y[: k + 1], y[k::-1])))
    return y


@_rule("tan", multiplies_out=True)
def _tan(r: _Args) -> list:
    y0 = r.out0
    w0 = 1 + y0 * y0
    _partial(w0, "tan")
    _near_singularity(r.s(0), abs(_value("cos", r.s(0)[0])), y0, "tan")
    return _riccati(r.s(0), y0, w0, 0.0, 1.0, r.n)


@_rule("tanh", multiplies_out=True)
def _tanh(r: _Args) -> list:
    y0 = r.out0
    return _riccati(r.s(0), y0, 1 - y0 * y0, 0.0, -1.0, r.n)


@_rule("sigmoid", multiplies_out=True)
def _sigmoid(r: _Args) -> list:
    y0 = r.out0
    return _riccati(r.s(0), y0, y0 * (1 - y0), 1.0, -1.0, r.n)


@_rule("softplus")
def _softplus(r: _Args) -> list:
    u, n = r.s(0), r.n
    s0 = _value("sigmoid", u[0])
    sigma = _riccati(u, s0, s0 * (1 - s0), 1.0, -1.0, n)
    return _integral(_weighted(u, n), sigma, r.out0, n)


@_rule("asin", "acos")
def _asin_acos(r: _Args) -> list:
    u, n = r.s(0), r.n
    w = [-x for x in _product(u, u, n)]
    w[0] = 1 - u[0] * u[0]
    _products_fit(w, r.op.name)  # the engine's 1/sqrt(1 - x*x)
    if not w[0] > 0:
        raise _Poisoned(f"{r.op.name} at +-1")
    root0 = math.sqrt(w[0])
    _partial(1.0 / root0, r.op.name)
    _near_singularity(u, 1.0 - abs(u[0]), 1.0, r.op.name)
    d = _quotient([1.0] + [0.0] * (n - 1), _sqrt(w, root0, n), 1.0 / root0, n)
    if r.op.name == "acos":
        d = [-x for x in d]
    return _integral(_weighted(u, n), d, r.out0, n)


@_rule("asinh", "acosh")
def _asinh_acosh(r: _Args) -> list:
    # d asinh = du / sqrt(u*u + 1), d acosh = du / sqrt(u*u - 1)
    u, n = r.s(0), r.n
    w = _product(u, u, n)
    w[0] = u[0] * u[0] + (1.0 if r.op.name == "asinh" else -1.0)
    _products_fit(w, r.op.name)  # the engine's 1/sqrt(x*x +- 1)
    if not w[0] > 0:
        raise _Poisoned(f"{r.op.name} at +-1")
    root0 = math.sqrt(w[0])
    _partial(1.0 / root0, r.op.name)
    if r.op.name == "acosh":
        _near_singularity(u, abs(u[0]) - 1.0, 1.0, "acosh")
    d = _quotient([1.0] + [0.0] * (n - 1), _sqrt(w, root0, n), 1.0 / root0, n)
    return _integral(_weighted(u, n), d, r.out0, n)


@_rule("atanh")
def _atanh(r: _Args) -> list:
    # d atanh = du / (1 - u*u)
    u, n = r.s(0), r.n
    q = [-x for x in _product(u, u, n)]
    q[0] = 1 - u[0] * u[0]
    _products_fit(q, "atanh")  # the engine's 1/(1 - x*x)
    if q[0] == 0:
        raise _Poisoned("atanh at +-1")
    _near_singularity(u, 1.0 - abs(u[0]), 1.0, "atanh")
    d = _quotient([1.0] + [0.0] * (n - 1), q, 1.0 / q[0], n)
    return _integral(_weighted(u, n), d, r.out0, n)


@_rule("atan")
def _atan(r: _Args) -> list:
    u, n = r.s(0), r.n
    q = _product(u, u, n)
    q[0] = 1 + u[0] * u[0]
    _products_fit(q, "atan")  # the engine's 1/(1 + x*x)
    d = _quotient([1.0] + [0.0] * (n - 1), q, 1.0 / q[0], n)
    return _integral(_weighted(u, n), d, r.out0, n)


@_rule("erf", "erfc")
def _erf(r: _Args) -> list:
    u, n = r.s(0), r.n
    minus_square = [-x for x in _product(u, u, n)]
    _products_fit(minus_square, r.op.name)  # the engine's exp(-(x*x))
    e = _exp(minus_square, _value("exp", -(u[0] * u[0])), n)
    scale = TWO_OVER_SQRT_PI if r.op.name == "erf" else -TWO_OVER_SQRT_PI
    return _integral(_weighted(u, n), _times(e, scale), r.out0, n)


@_rule("erfcx", multiplies_out=True)
def _erfcx(r: _Args) -> list:
    # y' = (2 u y - 2/sqrt(pi)) u', with g = 2 u y - 2/sqrt(pi) built alongside y
    u, n = r.s(0), r.n
    du = _weighted(u, n)
    y = [r.out0]
    g = [2.0 * u[0] * y[0] - TWO_OVER_SQRT_PI]
    _partial(g[0], "erfcx")
    for k in range(1, n):
        y.append(sum(map(mul, du[1 : k + 1], g[k - 1 :: -1])) / k)
        g.append(2.0 * sum(map(mul, u[: k + 1], y[k::-1])))
    return y


@_rule("erfinv", multiplies_out=True)
def _erfinv(r: _Args) -> list:
    # y' = sqrt(pi)/2 * exp(y^2) u', with exp(y^2) built alongside y
    u, n = r.s(0), r.n
    du = _weighted(u, n)
    y = [r.out0]
    square = [y[0] * y[0]]
    e = [_value("exp", square[0])]
    _partial(SQRT_PI_OVER_TWO * e[0], "erfinv")
    _near_singularity(u, 1.0 - abs(u[0]), y[0], "erfinv")
    g = [SQRT_PI_OVER_TWO * e[0]]
    for k in range(1, n):
        y.append(sum(map(mul, du[1 : k + 1], g[k - 1 :: -1])) / k)
        square.append(sum(map(mul, y[: k + 1], y[k::-1])))
        ds = [j * square[j] for j in range(k + 1)]
        e.append(sum(map(mul, ds[1 : k + 1], e[k - 1 :: -1])) / k)
        g.append(SQRT_PI_OVER_TWO * e[k])
    return y


def _polygammas(first: float, x0: float, n: int) -> list:
    """[unused, polygamma(first, x0), polygamma(first + 1, x0), ...]: the derivatives
    1..n-1 of polygamma(first - 1, .) (digamma: first = 1), by the engine's forward."""
    out = [math.nan]
    for m in range(1, n):
        d = _value("polygamma", first + m - 1, x0)
        _partial(d, "polygamma")
        out.append(d)
    return out


@_rule("digamma")
def _digamma(r: _Args) -> list:
    u = r.s(0)
    _near_singularity(u, _pole_distance(u[0]), r.out0, "digamma")
    return _compose(u, _polygammas(1.0, u[0], r.n), r.n)


@_rule("polygamma")
def _polygamma(r: _Args) -> list:
    order, u = r.v(0), r.s(1)
    _near_singularity(u, _pole_distance(u[0]), r.out0, "polygamma")
    return _compose(u, _polygammas(order + 1.0, u[0], r.n), r.n)


def _lgamma_series(u: list, n: int) -> list:
    """lgamma(u) (log|gamma|, whose derivative is digamma), coefficient 0 left at 0."""
    _near_singularity(u, _pole_distance(u[0]), 1.0, "lgamma")
    derivs = [math.nan]
    if n > 1:
        derivs.append(_value("digamma", u[0]))
        _partial(derivs[1], "lgamma")
        derivs += _polygammas(1.0, u[0], n - 1)[1:]
    return _compose(u, derivs, n)


@_rule("lgamma")
def _lgamma(r: _Args) -> list:
    return _lgamma_series(r.s(0), r.n)


@_rule("gamma", multiplies_out=True)
def _gamma(r: _Args) -> list:
    # gamma' = gamma * digamma: gamma(u) = gamma(u_0) * exp(lgamma(u) - lgamma(u_0))
    _near_singularity(r.s(0), _pole_distance(r.s(0)[0]), r.out0, "gamma")
    return _exp(_lgamma_series(r.s(0), r.n), r.out0, r.n)


@_rule("beta", multiplies_out=True)
def _beta(r: _Args) -> list:
    # log|beta(a, b)| = lgamma(a) + lgamma(b) - lgamma(a + b): beta' = beta * (its derivative)
    n = r.n
    a, b = r.s(0), r.s(1)
    total = [0.0] * n
    for series, live in ((a, r.live[0]), (b, r.live[1])):
        if live:
            total = [t + x for t, x in zip(total, _lgamma_series(series, n))]
    both = _lgamma_series([x + y for x, y in zip(a, b)], n)
    total = [t - x for t, x in zip(total, both)]
    return _exp(total, r.out0, n)


def _larger(a: list, b: list) -> list:
    return [max(abs(p), abs(q)) for p, q in zip(a, b)]


@_rule("atan2")
def _atan2(r: _Args) -> list:
    # d atan2(y, x) = (x dy - y dx) / (x^2 + y^2)
    y, x, n = r.s(0), r.s(1), r.n
    r2 = x[0] * x[0] + y[0] * y[0]
    if r2 == 0:
        raise _Poisoned("atan2 at the origin")
    _partial(x[0] / r2, "atan2")
    _partial(y[0] / r2, "atan2")
    _near_singularity(_larger(x, y), math.sqrt(r2), 1.0, "atan2")
    dy = [(m + 1) * y[m + 1] for m in range(n - 1)]
    dx = [(m + 1) * x[m + 1] for m in range(n - 1)]
    numerator = [p - q for p, q in zip(_product(x, dy, n - 1), _product(y, dx, n - 1))]
    squares = [p + q for p, q in zip(_product(x, x, n), _product(y, y, n))]
    squares[0] = r2
    _products_fit(squares, "atan2")  # the engine divides by x*x + y*y
    rate = _quotient(numerator, squares, numerator[0] / r2, n - 1)
    return [r.out0] + [rate[k - 1] / k for k in range(1, n)]


@_rule("logaddexp")
def _logaddexp(r: _Args) -> list:
    # y' = b' + (a - b)' sigmoid(a - b)
    a, b, n = r.s(0), r.s(1), r.n
    w = [p - q for p, q in zip(a, b)]
    if not math.isfinite(w[0]):
        raise _Poisoned("logaddexp with an infinite argument")
    s0 = _value("sigmoid", w[0])
    s = _riccati(w, s0, s0 * (1 - s0), 1.0, -1.0, n)
    q = _integral(_weighted(w, n), s, 0.0, n)
    return [r.out0] + [q[k] + b[k] for k in range(1, n)]


@_rule("hypot", multiplies_out=True)
def _hypot(r: _Args) -> list:
    a, b, n = r.s(0), r.s(1), r.n
    h0 = r.out0
    if h0 == 0:
        raise _Poisoned("hypot at the origin")
    _near_singularity(_larger(a, b), h0, h0, "hypot")
    squares = [p + q for p, q in zip(_product(a, a, n), _product(b, b, n))]
    _products_fit(squares, "hypot")
    return _sqrt(squares, h0, n)


@_rule("sinc")
def _sinc(r: _Args) -> list:
    # sinc(u) from its derivatives at u_0, at 0 too: there they are sinc's Maclaurin
    # coefficients times k!, which the engine's derivative series gives to --order's cap
    u = r.s(0)
    if not math.isfinite(math.pi * u[0]):  # sin(pi u) has no value there (math.sin raises)
        raise _Poisoned("sinc where pi x is not finite")
    d = sinc_derivatives(u[0], r.n)
    _partial(d[1] if r.n > 1 else 0.0, "sinc")
    return _compose(u, d, r.n)


@_rule("j0", "j1", "i0", "i1", "i0e", "i1e")
def _bessel(r: _Args) -> list:
    # f(u) from f's derivatives at u_0 (SciPy's Bessel functions of whole order)
    u, name = r.s(0), r.op.name
    if not abs(u[0]) > 2.220446049250313e-16:
        raise _Poisoned(f"{name} at 0, where the engine's derivative is a limit")
    d = bessel_derivatives(name, u[0], r.n)
    _partial(sum(map(abs, d[1:])), name)
    return _compose(u, d, r.n)


@_rule("gammainc", "gammaincc", "betainc")
def _incomplete(r: _Args) -> list:
    # y' = +-exp(w) u', the integrand: w = (a-1) log u - u - lgamma(a) for gammainc (PyTorch's),
    # (a-1) log u + (b-1) log1p(-u) - lbeta(a, b) for betainc (JAX's); its ends are singular
    name, n, u, a = r.op.name, r.n, r.s(r.op.arity - 1), r.v(0)
    u0, b = u[0], r.v(1) if name == "betainc" else None
    if not 0 < u0 < (math.inf if b is None else 1):
        raise _Poisoned(f"{name} at the end of its domain")
    _near_singularity(u, u0 if b is None else min(u0, 1 - u0), 1.0, name)
    w = _times(_log(u, _value("log", u0), n), a - 1)
    if b is None:
        w = [p - q for p, q in zip(w, u)]
        w[0] -= _value("lgamma", a)
    else:
        rest = _times(_log([1 - u0] + [-x for x in u[1:]], _value("log1p", -u0), n), b - 1)
        w = [p + q for p, q in zip(w, rest)]
        w[0] -= _value("lgamma", a) + _value("lgamma", b) - _value("lgamma", a + b)
    e = _exp(w, _value("exp", w[0]), n)
    _partial(e[0], name)
    return _integral(_weighted(u, n), _times(e, -1.0 if name == "gammaincc" else 1.0), r.out0, n)


@_rule("where")
def _where(r: _Args) -> list:
    taken = 1 if bool(r.jets[0].value.data != 0) else 2
    return list(r.s(taken))


#: the ops linear on each piece, with constant partials there (``Op.piecewise_linear``)
PIECEWISE_LINEAR = tuple(name for name, op in OPS.items() if op.piecewise_linear)


@_rule(*PIECEWISE_LINEAR)
def _piecewise(r: _Args) -> list:
    """Locally linear: the result moves with each argument times the engine's own partial
    at the point, a constant there (built from comparisons, sign and round, whose derivative
    is zero).  An argument whose partial is 0 is not read at all."""
    inputs = tuple(jet.value for jet in r.jets)
    total = r.zeros()
    for i, live in enumerate(r.live):
        if not live:
            continue
        d = r.op.deriv[i](*inputs, r.out)
        w = 0.0 if d is None else float(d.data if isinstance(d, Tensor) else d)
        if not math.isfinite(w):
            raise _Poisoned(f"{r.op.name}: a local derivative of {w!r} at the point")
        if w == 0:
            continue
        s = r.s(i)
        for k in range(1, r.n):
            total[k] += w * s[k]
    return total


# ---------------------------------------------------------------------------
# The interpretation and the entry point
# ---------------------------------------------------------------------------


def _log_factorials(n: int) -> list:
    return [math.lgamma(k + 1.0) for k in range(n)]


class TaylorJets(Interpretation):
    """Values are :class:`Jet`: the engine's value, and for the nodes that depend on the
    variable ``name``, the ``order`` + 1 Taylor coefficients around its value (or why not)."""

    def __init__(self, name: str, order: int):
        self.name = name
        self.n = order + 1
        self._log_limit = math.log(LIMIT)
        self._log_fact = _log_factorials(self.n)

    def const(self, node: Expr) -> Jet:
        return Jet(Tensor._wrap(backend.asarray(node.value)))

    def var(self, name: str, value) -> Jet:
        t = Tensor._wrap(parse_value(name, value))
        if name != self.name:
            return Jet(t)
        if t.data.ndim != 0:
            raise NoTaylorMode(f"{name!r} is not a scalar")
        c = [float(t.data)] + [1.0] + [0.0] * (self.n - 2)
        return Jet(t, c[: self.n], degree=1)

    def apply(self, node: Expr, op, args: list) -> Jet:
        try:
            out = apply(op, *[a.value for a in args], **node.attrs)
        except (AutogradCliError, ArithmeticError, ValueError, TypeError) as exc:
            # the engine's own error: the old path raises it again, in its own words
            raise NoTaylorMode(f"{op.name}: {exc}") from exc
        if not op.differentiable_any:
            return Jet(out)
        live = tuple(f and a.live for a, f in zip(args, op.flags(len(args))))
        if not any(live):
            return Jet(out)
        rule = RULES.get(op.name)
        for a, f in zip(args, live):
            if f and a.hard:  # never absorbed: the engine's zero partials need not stop it
                return Jet(out, poison=a.poison, hard=True)
        linear = op.linear_in(live)
        if not linear:  # a non-finite value: a soft poison to a nonlinear op
            args = [Jet(a.value, poison=a.nonfinite) if a.nonfinite else a for a in args]
        if backend.is_complex(out.data) or any(backend.is_complex(a.value.data) for a in args):
            return Jet(out, poison=f"{op.name} of complex numbers")  # real series only
        if rule is None:
            return Jet(out, poison=f"no Taylor rule for {op.name}")
        if out.data.ndim != 0:
            return Jet(out, poison=f"{op.name} gives an array")
        r = _Args(self.n, op, node, args, live, out)
        try:
            c = rule(r) if self.n > 1 else [r.out0]
            c[0] = r.out0
            nonfinite = self._check(c, op.name)
            if nonfinite is not None and any(f and a.c is None for a, f in zip(args, live)):
                # a poison absorbed by a zero partial, into a value that is not finite: the
                # engine's derivatives need not be zeros (relu(sinc(x)) at 1e308: nan from 4)
                raise _Poisoned(nonfinite)
            if not linear:  # products of series: may they overflow?
                for a, f in zip(args, live):
                    if f and a.c is not None:
                        _products_fit(a.c, op.name)
                if op.name in MULTIPLIES_OUT:
                    _products_fit(c, op.name)
        except _Poisoned as why:
            return Jet(out, poison=str(why), hard=why.hard)
        except (ZeroDivisionError, OverflowError) as exc:
            return Jet(out, poison=f"{op.name}: {exc}", hard=True)
        degree = _degree(op, args, live)
        if degree is not None:  # -x's c2 is +0.0, not -0.0: the engine's d2/dx2 (-x) is
            c[degree + 1 :] = [0.0] * len(c[degree + 1 :])  # zeros, its graph cut
        return Jet(out, c, degree=degree, nonfinite=nonfinite)

    def _check(self, c: list, name: str) -> str | None:
        """Poison a series with a derivative coefficient that is not finite, or a derivative
        ``|c_k| * k!`` above :data:`LIMIT` (up to order 170, beyond which k! is not a float);
        a value ``c[0]`` that is not finite is returned, as the reason (:attr:`Jet.nonfinite`)."""
        log_fact, log_limit = self._log_fact, self._log_limit
        nonfinite = None
        for k, ck in enumerate(c):
            if not math.isfinite(ck):  # the value: see Jet.nonfinite; a derivative: hard
                if k > 0:
                    raise _Poisoned(f"{name}: coefficient {k} is {ck!r}", hard=True)
                nonfinite = f"{name}: coefficient 0 is {ck!r}"
            elif ck and k <= 170 and math.log(abs(ck)) + log_fact[k] > log_limit:
                raise _Poisoned(f"{name}: derivative {k} is above {LIMIT:g}", hard=True)
        return nonfinite


def _degree(op, args: list, live: tuple) -> int | None:
    """The degree of an op's result as a polynomial in x, from its live arguments' (see
    :attr:`Jet.degree`), read from the op's entry: an op linear in them keeps the highest,
    one linear in each apart (``linear="each"``: mul) adds them; None where any is not a
    polynomial, or for any other op."""
    degrees = [a.degree for a, f in zip(args, live) if f]
    if None in degrees:
        return None
    if op.linear_in(live):
        return max(degrees)
    return sum(degrees) if op.linear == "each" else None


def taylor_coefficients(
    program: Program | Expr, values: Mapping, name: str, order: int
) -> list[float]:
    """The Taylor coefficients ``c[k] = f^(k)(a) / k!``, k = 0..order, of the scalar
    ``program`` in the variable ``name`` at ``values`` (``a = values[name]``), by Taylor mode.

    Raises :class:`NoTaylorMode` (with the reason) where the engine's repeated
    differentiation is needed to give its numbers: see the module's docstring.

    >>> from autograd_cli.grammar import parse
    >>> taylor_coefficients(parse("exp(sin(x))"), {"x": 0}, "x", 4)
    [1.0, 1.0, 0.5, 0.0, -0.125]
    >>> taylor_coefficients(parse("sqrt(x)"), {"x": 0}, "x", 2)
    Traceback (most recent call last):
    ...
    autograd_cli.core.taylor_mode.NoTaylorMode: sqrt of zero
    """
    if backend.xp is not numpy or backend.default_dtype is not numpy.float64:
        raise NoTaylorMode("Taylor mode runs on the CPU in float64")
    jets = TaylorJets(name, order)
    token = backend.quiet_enter()
    try:
        with no_grad():
            out = interpret(program, jets, values, bind=[name]).result
    finally:
        backend.quiet_exit(token)
    if out.poison is not None:
        raise NoTaylorMode(out.poison)
    if out.c is not None:
        return list(out.c)
    data = out.value.data
    if data.ndim != 0:
        raise NoTaylorMode("the output is not a scalar")
    return [float(data)] + [0.0] * order
