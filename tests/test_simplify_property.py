"""The simplifier keeps the meaning: random expressions, before and after, by value and by nan.

Hypothesis builds expressions in the tool's language (nested quotients such as
``w*(x/(y/z))`` and ``(x/y)/(z/w)``, powers with whole, fractional, negative and
symbolic exponents, powers of powers, logs and exps of products and quotients,
sqrt, abs, relu, where, sums that cancel) as text, and the same expression in SymPy beside
it.  The text is parsed, simplified with the simplifier ``diff`` uses, printed and
parsed again, and compared with the original *by meaning* at exact points (multiples
of 1/8 in [-3, 3]: negatives, zero, points where the original is nan or infinite),
evaluated by the engine in float64:

* where the original is a number, the simplified form is the same number (1e-9
  relative to the largest intermediate value, or to SymPy's exact value);
* where the original is nan or infinite, so is the simplified form, with one
  exception, the one the simplifier's docstring makes (and SymPy): an isolated 0/0 or
  inf - inf, ``x/x -> 1`` at x = 0, may be filled in, if near by the original is a
  number (then with its limit) or outside its domain.  A domain error (log(-1),
  sqrt(-1), (-1)**0.5) is never filled in: ``log(x) - log(x) -> 0``,
  ``sqrt(x)/sqrt(x) -> 1``, ``(x**0.5)**2 -> x`` and ``(x**y)**2 -> x**(2*y)`` (at
  y = 1/2) all fail here, and so does a 0/0 that is not isolated: ``(x - abs(x))/(x -
  abs(x)) -> 1`` (nan for every x >= 0).

Float64 artifacts are not judged: overflow and underflow, sin of 1e23, a power of a
negative number whose exponent rounding moved off a whole number (the simplifier folds
exact fractions), the side of a pole a signed zero picks, 1**nan = 1, a sum that
cancels to rounding noise (see :class:`Value`).

``diff``'s printed derivatives are checked the same way against the unsimplified
derivative graph, must parse back, and agree with SymPy's derivative wherever the
expression and its raw derivative are numbers.

Everything is derandomized: the same examples on every run and under every
PYTHONHASHSEED.  ``SIMPLIFY_PROPERTY_EXAMPLES=3000`` searches longer (derivatives get
two thirds as many).
"""

from __future__ import annotations

import math
import os
import random
from fractions import Fraction

import numpy as np
import pytest

sympy = pytest.importorskip("sympy")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from autograd_cli import diff  # noqa: E402  (the facade: core's diff takes a parsed Program)
from autograd_cli.core.printing import to_text  # noqa: E402
from autograd_cli.core.program import Expr, topological  # noqa: E402
from autograd_cli.core.recording import evaluate  # noqa: E402
from autograd_cli.core.symbolic import Builder, grad_exprs, simplify  # noqa: E402
from autograd_cli.core.tensor import OPS  # noqa: E402
from autograd_cli.grammar import parse  # noqa: E402

NAMES = ("x", "y", "z", "w")
SYM = {n: sympy.Symbol(n, real=True) for n in NAMES}
RTOL = 1e-9
EXAMPLES = int(os.environ.get("SIMPLIFY_PROPERTY_EXAMPLES", "500"))

# ---------------------------------------------------------------------------
# Expressions: (text in the tool's language, the same in SymPy)
# ---------------------------------------------------------------------------

R = sympy.Rational
CONSTANTS = [
    ("1", sympy.Integer(1)),
    ("2", sympy.Integer(2)),
    ("3", sympy.Integer(3)),
    ("0.5", R(1, 2)),
    ("(-1)", sympy.Integer(-1)),
    ("(1/3)", R(1, 3)),
]
EXPONENTS = [
    ("2", 2),
    ("3", 3),
    ("(-1)", -1),
    ("(-2)", -2),
    ("0.5", R(1, 2)),
    ("1.5", R(3, 2)),
    ("(1/3)", R(1, 3)),
    ("(-0.5)", R(-1, 2)),
    ("0", 0),
    ("1", 1),
    ("(2/3)", R(2, 3)),
    ("0.25", R(1, 4)),
]
# Exponent pairs whose product is whole though the inner one is not: (x**0.5)**2 is nan
# for x < 0, x is not.
WHOLE_PAIRS = [
    (("0.5", R(1, 2)), ("2", 2)),
    (("0.5", R(1, 2)), ("(-2)", -2)),
    (("1.5", R(3, 2)), ("2", 2)),
    (("(-0.5)", R(-1, 2)), ("2", 2)),
    (("(1/3)", R(1, 3)), ("3", 3)),
    (("(2/3)", R(2, 3)), ("(-3)", -3)),
    (("0.25", R(1, 4)), ("4", 4)),
    (("1.5", R(3, 2)), ("(2/3)", R(2, 3))),
]

# Variables twice as likely as numbers.
leaves = st.sampled_from([(n, SYM[n]) for n in NAMES] * 2 + CONSTANTS)


class Relu(sympy.Function):
    """relu in SymPy: max(a, 0) for a real number, relu'(0) = 0 as in the engine (PyTorch)."""

    @classmethod
    def eval(cls, a):
        if a.is_extended_real and a.is_comparable:
            try:
                return sympy.Max(a, 0)
            except ValueError:  # SymPy took a complex number for a real one
                return None
        return None

    def fdiff(self, argindex=1):
        return sympy.Heaviside(self.args[0], 0)


class Where(sympy.Function):
    """``where(a > 0, b, c)`` in SymPy; left unevaluated (no value) where a is not real."""

    @classmethod
    def eval(cls, a, b, c):
        if a.is_extended_real and a.is_comparable:
            return b if a > 0 else c
        return None

    def fdiff(self, argindex=1):
        a = self.args[0]
        return {1: sympy.Integer(0), 2: Where(a, 1, 0), 3: Where(a, 0, 1)}[argindex]


UNARY = {
    "sqrt": sympy.sqrt,
    "abs": sympy.Abs,
    "log": sympy.log,
    "exp": sympy.exp,
    "sin": sympy.sin,
    "atan": sympy.atan,
    "relu": Relu,
}

# Shapes the simplifier has rules for, by name: {0}, {1}, ... are subexpressions.
TEMPLATES = {
    "times_quotient_of_quotient": (
        "({0})*(({1})/(({2})/({3})))",
        lambda a, b, c, d: a * (b / (c / d)),
    ),
    "quotient_of_quotients": ("(({0})/({1}))/(({2})/({3}))", lambda a, b, c, d: (a / b) / (c / d)),
    "quotient_over_quotient": ("({0})/(({1})/({2}))", lambda a, b, c: a / (b / c)),
    "quotient_over_product": ("(({0})/({1}))/(({2})*({1}))", lambda a, b, c: (a / b) / (c * b)),
    "log_of_product": ("log(({0})*({1}))", lambda a, b: sympy.log(a * b)),
    "log_of_quotient": ("log(({0})/({1}))", lambda a, b: sympy.log(a / b)),
    "exp_of_product": ("exp(({0})*({1}))", lambda a, b: sympy.exp(a * b)),
    "exp_of_quotient": ("exp(({0})/({1}))", lambda a, b: sympy.exp(a / b)),
    "exp_times_exp": ("exp({0})*exp({1})", lambda a, b: sympy.exp(a) * sympy.exp(b)),
    "symbolic_power": ("({0})**({1})", lambda a, b: a**b),
    "symbolic_power_squared": ("(({0})**({1}))**2", lambda a, b: (a**b) ** 2),
    "power_product": ("({0})**({2})*({0})**({1})", lambda a, b, c: a**c * a**b),
    "sum_cancels": ("(({0}) + ({1})) - ({0})", lambda a, b: (a + b) - a),
    "difference_cancels": ("({0})*({1}) - ({1})*({0})", lambda a, b: a * b - b * a),
    "distributed_cancels": (
        "(({0}) + ({1}))*({2}) - ({0})*({2})",
        lambda a, b, c: (a + b) * c - a * c,
    ),
    "quotient_cancels": ("({0})/({0})", lambda a: a / a),
    "times_inverse": ("({0})*(({0})**(-1))", lambda a: a * a**-1),
    "zero_times": ("0*({0}) + ({1})", lambda a, b: 0 * a + b),
    "sqrt_squared": ("sqrt({0})**2", lambda a: sympy.sqrt(a) ** 2),
    "sqrt_times_sqrt": ("sqrt({0})*sqrt({0})", lambda a: sympy.sqrt(a) * sympy.sqrt(a)),
    "piecewise_quotient": (
        "(({0}) - abs({0}))/(({0}) - abs({0}))",
        lambda a: (a - sympy.Abs(a)) / (a - sympy.Abs(a)),
    ),
    "where_scaled": ("({0})*where(({1}) > 0, {2}, 0)", lambda a, b, c: a * Where(b, c, 0)),
    "wheres_merged": (
        "where(({0}) > 0, {1}, {2}) + where(({0}) > 0, {3}, 0)",
        lambda a, b, c, d: Where(a, b, c) + Where(a, d, 0),
    ),
}


BINARY = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
}
# (kind, number of operands): what a node of a random expression can be.
KINDS = (
    [("unary", 1), ("neg", 1), ("power", 1)]
    + [("power_of_power", 1)] * 2
    + [("binary", 2)] * 3
    + [("template", 0)] * 4
)


@st.composite
def expressions(draw, ops=None):
    """A random expression with ``ops`` operations (drawn: 2 to 9), as (text, sympy)."""
    if ops is None:
        ops = draw(st.integers(2, 9))
    if ops == 0:
        return draw(leaves)
    kind, arity = draw(st.sampled_from(KINDS))
    if kind == "template":
        name = draw(st.sampled_from(sorted(TEMPLATES)))
        form, build = TEMPLATES[name]
        arity = build.__code__.co_argcount
    budget = ops - 1
    cuts = sorted(draw(st.integers(0, budget)) for _ in range(arity - 1))
    shares = [b - a for a, b in zip([0] + cuts, cuts + [budget])]
    args = [draw(expressions(ops=k)) for k in shares]
    texts, syms = [a[0] for a in args], [a[1] for a in args]
    if kind == "unary":
        f = draw(st.sampled_from(sorted(UNARY)))
        return f"{f}({texts[0]})", UNARY[f](syms[0])
    if kind == "neg":
        return f"-({texts[0]})", -syms[0]
    if kind == "power":
        k, kv = draw(st.sampled_from(EXPONENTS))
        return f"({texts[0]})**{k}", syms[0] ** kv
    if kind == "power_of_power":
        (k1, v1), (k2, v2) = draw(
            st.one_of(
                st.sampled_from(WHOLE_PAIRS),
                st.tuples(st.sampled_from(EXPONENTS), st.sampled_from(EXPONENTS)),
            )
        )
        return f"(({texts[0]})**{k1})**{k2}", (syms[0] ** v1) ** v2
    if kind == "binary":
        op = draw(st.sampled_from(sorted(BINARY)))
        return f"({texts[0]}) {op} ({texts[1]})", BINARY[op](*syms)
    return form.format(*texts), build(*syms)


# Exact binary fractions: the engine's float and SymPy's rational are the same number.
coordinate = st.one_of(st.sampled_from([0, 8, -8, 4, -4, 16]), st.integers(-24, 24)).map(
    lambda k: Fraction(k, 8)
)
points = st.lists(st.fixed_dictionaries({n: coordinate for n in NAMES}), min_size=3, max_size=3)

# ---------------------------------------------------------------------------
# Evaluation: the engine (float64) and SymPy (exact, 30 digits)
# ---------------------------------------------------------------------------


def _names(expr: Expr) -> list[str]:
    return sorted({n.name for n in topological([expr]) if n.op == "var"})


class Value:
    """The engine's value of an expression at a point, and what its intermediate values say.

    ``scale``: the largest finite intermediate magnitude (float64's rounding in a sum that
    cancels is relative to it); ``finite``: every intermediate is a number; ``overflow``:
    some intermediate overflowed or underflowed in float64 (exp(3/x) near x = 0), or an
    exponent of a negative number missed a whole number by rounding; there float64 and
    the real numbers part ways and nothing is compared (the simplifier folds exact
    rationals, and its docstring scopes overflow out).  ``undefined_by``: why the value is
    not a number, as the set of the kinds of failure it comes from: ``"pole"`` (1/0,
    0**-1, log(0), then inf - inf, 0*inf, ...) or ``"domain"`` (a function of a number
    outside its domain: log(-1), sqrt(-1), (-1)**0.5); a failure swallowed on the way
    (by a comparison, an untaken ``where`` branch) does not count.  ``absorbed``: a sum
    lost an operand to rounding (3 + 1e-22 - 3 is 0); ``noisy``: a sum cancelled to
    rounding noise (a + b - (a + b) computed in another order is 1e-17, not 0);
    ``via_inf``: an intermediate was infinite (a finite value is then a one-sided limit,
    exp(-1/0), whose side the sign of a zero picks); ``swallowed``: a nan vanished into a
    power (1**nan and nan**0 are 1).
    """

    __slots__ = (
        "value",
        "scale",
        "finite",
        "overflow",
        "undefined_by",
        "absorbed",
        "noisy",
        "via_inf",
        "swallowed",
    )

    def __init__(self, expr: Expr, point: dict):
        used = {n: float(point[n]) for n in _names(expr)}
        self.value = float(evaluate(expr, used, check_domain=False).output.data)
        vals: dict[int, float] = {}
        why: dict[int, frozenset] = {}
        self.scale, self.finite, self.overflow = 1.0, True, False
        self.absorbed = self.noisy = self.via_inf = self.swallowed = False
        with np.errstate(all="ignore"):
            for n in topological([expr]):
                cause = frozenset()
                if n.op == "const":
                    v = float(n.value)
                elif n.op == "var":
                    v = used[n.name]
                else:
                    args = [vals[id(a)] for a in n.args]
                    v = float(OPS[n.op].forward(*map(np.float64, args), **n.attrs))
                    self.overflow = self.overflow or _overflowed(n.op, args, v)
                    self.swallowed |= n.op == "pow" and v == v and any(a != a for a in args)
                    if (
                        n.op in ("add", "sub")
                        and math.isfinite(v)
                        and all(map(math.isfinite, args))
                    ):
                        a, b = args[0], args[1] if n.op == "add" else -args[1]
                        self.absorbed |= (v == a and b != 0) or (v == b and a != 0)
                        self.noisy |= v != 0 and abs(v) <= 1e-12 * max(abs(a), abs(b))
                    if not math.isfinite(v):
                        cause = frozenset().union(*(why[id(a)] for a in n.args))
                        if all(math.isfinite(a) for a in args):
                            cause |= {_failure(n.op, args)}
                        elif not cause:  # an inf from a constant (1e309, inf) met something
                            cause = frozenset({"pole"})
                        elif v != v and not any(a != a for a in args):
                            cause |= {"pole"}  # inf - inf, 0*inf, inf/inf
                vals[id(n)] = v
                why[id(n)] = cause
                if math.isfinite(v):
                    self.scale = max(self.scale, abs(v))
                else:
                    self.finite = False
                    self.via_inf |= v == v
        self.undefined_by = why[id(expr)] if not math.isfinite(self.value) else frozenset()


def _failure(op: str, args: list) -> str:
    """The kind of failure of ``op(*args)``, numbers whose value is not a number."""
    if (
        (op == "div" and args[1] == 0)
        or (op == "pow" and args[0] == 0)
        or (op in ("log", "log2", "log10") and args[0] == 0)
    ):
        return "pole"
    return "domain"


def _overflowed(op: str, args: list, v: float) -> bool:
    """Whether ``op(*args) = v`` is a float64 artifact: inf from numbers other than at a
    pole (1/0, 0**-1, log(0)), 0 from exp, *, / or ** of nonzero numbers, nan from a
    negative number to a power that rounding moved off a whole number, a fractional
    power of -inf (a number in float64, where the reals have none), or sin/cos/tan of an
    argument so large that its rounding error is more than a period."""
    if (
        op == "pow"
        and args[0] == -math.inf
        and math.isfinite(args[1])
        and args[1] != round(args[1])
    ):
        return True  # (-inf)**0.25 is inf in float64, (-x)**0.25 nan for every number x
    if not all(math.isfinite(a) for a in args):
        return False
    if op in ("sin", "cos", "tan") and abs(args[0]) > 1e5:
        return True  # sin(1e23): the argument's rounding is more than a period
    if math.isinf(v):
        if (op == "div" and args[1] == 0) or (op == "pow" and args[0] == 0):
            return False
        return op not in ("log", "log2", "log10")
    if op == "pow" and args[0] < 0 and v != v and abs(args[1] - round(args[1])) < 1e-9:
        return True  # (-2)**((1/3)**-2): 9.000000000000002 in float64, 9 in the reals
    if v == 0:
        if op == "exp":
            return True
        if op in ("mul", "div"):
            return args[0] != 0 and (op == "div" or args[1] != 0)
        if op == "pow":
            return args[0] != 0
    return False


def exact(expr, point: dict):
    """SymPy's value at the exact point, as a float, or None where it is not a real number."""
    try:
        v = expr.xreplace({SYM[n]: R(point[n].numerator, point[n].denominator) for n in NAMES})
        if v.has(sympy.zoo, sympy.oo, -sympy.oo, sympy.nan, sympy.AccumBounds):
            return None
        c = complex(sympy.N(v, 30))
    except (TypeError, ValueError):  # a comparison of complex numbers, an unevaluated form
        return None
    if not (math.isfinite(c.real) and math.isfinite(c.imag)) or abs(c.imag) > 1e-20 * max(
        1, abs(c.real)
    ):
        return None
    return c.real


def _near(point: dict, delta: float, k: int) -> dict:
    """A point near ``point``; every coordinate moves by a different amount (so x - y = 0
    does not stay 0), in fixed directions."""
    rng = random.Random(k)
    return {
        n: float(v) + rng.choice((-1.0, 1.0)) * rng.uniform(0.5, 1.5) * delta * (1 + abs(float(v)))
        for n, v in point.items()
    }


def _isolated_ok(before: Value, expr: Expr, point: dict, after: float) -> str | None:
    """Where ``before`` (the original ``expr`` at ``point``) is nan/inf and ``after`` a
    number: None if this is an isolated singular point of the original, a 0/0 or inf - inf
    that the simplified form may fill in (``x/x -> 1`` at x = 0), else why not.

    A domain error (log(-1), sqrt(-1), (-1)**0.5) is never filled in: ``log(x) - log(x)``
    and ``(x**y)**2`` at y = 1/2 are nan there and must stay so.  A pole-type failure is,
    when near by the original is a number (then ``after`` must be its limit) or outside its
    domain, not when it fails the same way all around (``(x - x)/(x - x)``).
    """
    if "domain" in before.undefined_by:
        return f"the original is not a number here by a domain error, the simplified is {after!r}"
    far = [Value(expr, _near(point, 1e-5, k)) for k in range(6)]
    close = [Value(expr, _near(point, 1e-11, k)) for k in range(6)]
    if any(v.overflow for v in far + close):
        return None  # float64 overflows near by (exp(3/x) near 0): nothing to judge
    if any(
        not math.isfinite(v.value) and "domain" not in v.undefined_by and not v.absorbed
        for v in far + close
    ):
        return "the original is undefined all around this point: not an isolated point"
    if not all(math.isfinite(v.value) for v in far + close):
        return None  # next to points outside the original's domain: any value
    near = [v.value for v in close]
    if max(near) - min(near) > 1e-3 * max(1.0, *map(abs, near)):
        return None  # no limit here (a jump: sign(x) for x/(x/abs(x))'): any value
    # Near a pole, (z/w**2 + y) - z/w**2 rounds y away: tolerance relative to the scale.
    tol = 1e-4 * max(1.0, abs(after)) + RTOL * max(v.scale for v in close)
    d_far = max(abs(v.value - after) for v in far)
    d_close = max(abs(x - after) for x in near)
    if d_close <= tol or d_close < 0.5 * d_far:
        return None
    return f"not the original's limit here (near by: {near[:3]})"


def same_meaning(before: Expr, after: Expr, point: dict, reference=None) -> str | None:
    """None if ``after`` means ``before`` at ``point``, else what is wrong.

    ``reference``: a SymPy expression equal to ``before`` (checked where before is a number).
    """
    bv, av = Value(before, point), Value(after, point)
    if bv.overflow or av.overflow:
        return None  # float64 out of range on one side: nothing to judge
    b, a = bv.value, av.value
    if math.isfinite(b):
        # A finite value through an infinity (exp(z/(x - x)) is exp(-inf), 0) or a nan
        # swallowed by a power (1**(0/0) is 1) is no number in the reals: at such a pole,
        # the sign of a zero (x - x or -(x - x)) picks the side, any side will do.
        one_sided = bv.via_inf and (av.via_inf or not math.isfinite(a))
        if not math.isfinite(a):
            if one_sided or bv.swallowed or bv.noisy:
                return None  # (noisy: 1/(1/3 + 1/2 - 1/3 - 1/2) is 1/1e-16 in float64)
            return f"the original is {b!r} here, the simplified form {a!r}"
        scale = max(bv.scale, av.scale, abs(b))
        if abs(a - b) <= RTOL * scale or one_sided:
            return None
        # A sum that cancels in float64: the exact value decides.
        ref = exact(reference, point) if reference is not None else None
        if ref is not None and abs(a - ref) <= RTOL * max(scale, abs(ref)):
            return None
        if ref is None and bv.noisy:
            return None  # the original's value is rounding noise, and there is no exact one
        return f"values differ: original {b!r}, simplified {a!r}, exact {ref!r}"
    if not math.isfinite(a):
        return None  # both undefined here (nan, or +-inf at a pole)
    if av.via_inf and "domain" not in bv.undefined_by:
        return None  # exp(w/0) at a pole of both: a one-sided limit (the sign of a zero)
    if av.noisy or av.scale > 1e12 * max(1.0, abs(a)):
        # Rounding noise, not a number: 0/0 rewritten as (a + b - (a + b))/(...) cancels
        # to 1e-17 instead of 0, and x/1e-17 at x = 0 or 1/1e-17 - 1/1e-17 + ... to anything.
        return None
    return _isolated_ok(bv, before, point, a)


def _show(point: dict) -> dict:
    return {n: str(v) for n, v in point.items()}


# ---------------------------------------------------------------------------
# The properties
# ---------------------------------------------------------------------------

SETTINGS = dict(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
)


@settings(max_examples=EXAMPLES, **SETTINGS)
@given(expressions(), points)
def test_simplified_form_means_the_original(pair, pts):
    text, ref = pair
    original = parse(text).output
    simple = simplify(original)
    back = parse(to_text(simple)).output  # the printed form parses, and means the same
    for point in pts:
        # SymPy's expression is the oracle's oracle: where the engine's original is a
        # number and SymPy's value real, they agree (else the pairing above is wrong).
        v = Value(original, point)
        if v.finite and not v.overflow:
            r = exact(ref, point)
            assert r is None or abs(v.value - r) <= 1e-7 * max(v.scale, abs(r)), (
                text,
                _show(point),
                v.value,
                r,
            )
        for after in (simple, back):
            why = same_meaning(original, after, point, ref)
            assert why is None, (text, to_text(after), _show(point), why)


def _raw_derivative(expr: Expr, name: str) -> Expr:
    return grad_exprs(expr, [name], Builder())[name]


@settings(max_examples=max(1, EXAMPLES * 2 // 3), **SETTINGS)
@given(expressions(), points)
def test_printed_derivatives_mean_the_derivative(pair, pts):
    text, ref = pair
    original = parse(text).output
    names = _names(original)
    assume(names)
    result = diff(original, names)
    for name in names:
        printed = result.derivatives[name].text
        program = parse(printed)  # the printed derivative parses back
        got = program.output
        raw = _raw_derivative(original, name)
        theirs = sympy.diff(ref, SYM[name])
        # d/dx abs(x) = sign(x) is 0 at 0 in both; relu'(0) is 0 in the engine (PyTorch).
        theirs = theirs.replace(sympy.DiracDelta, lambda *args: sympy.Integer(0)).replace(
            sympy.Heaviside, lambda a, *h: sympy.Heaviside(a, 0)
        )
        for point in pts:
            # The printed derivative means the unsimplified one (nan for nan) ...
            why = same_meaning(raw, got, point, theirs)
            assert why is None, (text, name, printed, _show(point), why)
            # ... and equals SymPy's where the expression and the raw derivative are numbers.
            f, d, mine = Value(original, point), Value(raw, point), Value(got, point)
            if not (f.finite and d.finite) or f.overflow or d.overflow or mine.overflow:
                continue
            want = exact(theirs, point)
            if want is None:
                continue
            scale = max(f.scale, d.scale, mine.scale)
            assert abs(mine.value - want) <= 1e-8 * max(scale, abs(want)), (
                text,
                name,
                printed,
                _show(point),
                mine.value,
                want,
            )


# ---------------------------------------------------------------------------
# Regression tests: the rewrites mutation testing and this property found wrong or untested
# ---------------------------------------------------------------------------


def _simplified(text: str) -> str:
    return to_text(simplify(parse(text).output))


def _value(text: str, **point) -> float:
    expr = parse(text).output
    return float(
        evaluate(expr, {n: point[n] for n in _names(expr)}, check_domain=False).output.data
    )


def _agrees_everywhere(text: str, grid=(-2.5, -1, -0.5, 0, 0.5, 1, 2, 3)):
    """The simplified form of ``text`` means it at every point of a small grid."""
    expr = parse(text).output
    simple = simplify(expr)
    names = _names(expr)
    rng = random.Random(text)
    for _ in range(40):
        point = {n: Fraction(rng.choice(grid)).limit_denominator(8) for n in names}
        why = same_meaning(expr, simple, point)
        assert why is None, (text, to_text(simple), _show(point), why)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("w*(x/(y/z))", "w*x*z/y"),  # inner quotient inlined: z goes up, y down
        ("x/(y/z)", "x*z/y"),
        ("w/(x/(y/z))", "w*y/(x*z)"),
        ("(x/y)/(z/w)", "w*x/(y*z)"),
        ("w*(x/(y*z))", "w*x/(y*z)"),
        ("a = y/z; w*(x/a) + a", "w*x*z/y + y/z"),  # a shared quotient: built once, then inverted
    ],
)
def test_quotient_of_quotient_rewrite(text, expected):
    assert _simplified(text) == expected
    _agrees_everywhere(text)
    # And by value at a point where every factor differs (a swap of any two would show).
    point = dict(w=3.0, x=5.0, y=7.0, z=11.0)
    assert math.isclose(_value(_simplified(text), **point), _value(text, **point), rel_tol=1e-12)


@pytest.mark.parametrize(
    "text",
    [
        "(x**0.5)**2",
        "(x**1.5)**2",
        "(x**(1/3))**3",
        "(x**0.5)**(-2)",
        "(x**(-0.5))**(-2)",
        "(x**0.25)**4",
        "(2*x**0.5)**2",
        "(x*y**0.5)**2",
        "sqrt(x)**2",
        "sqrt(x)*sqrt(x)",
        "x**0.5*x**0.5",
        "x**0.5*x**1.5",
        "x**(1/3)*x**(2/3)",
    ],
)
def test_fractional_power_made_whole_stays_nan_for_negative_base(text):
    # (x**0.5)**2 is nan at x = -1; x is not.  SymPy makes sqrt(x)**2 x even for a real x
    # (true in the complex numbers); the engine's float64 is real, so it must not.
    simple = _simplified(text)
    point = {"x": -1.0, "y": -4.0}
    assert math.isnan(_value(text, **point))
    assert math.isnan(_value(simple, **point)), (text, simple)
    _agrees_everywhere(text)


@pytest.mark.parametrize(
    "text",
    [
        "(x**y)**2",
        "(x**y)**(-2)",
        "x**y*x**y",
        "x**y*x**0.5",
        "x**y/x**(-y)",
        "x**y*x**z",
        "((x**y)**3)**(1/3)",
        "(-2)**y*(-2)**y",
        "((-2)**y)**2",
    ],
)
def test_symbolic_exponents_do_not_combine_into_whole_ones(text):
    # At y = z = 1/2 and x = -1 the original is nan (a fractional power of a negative
    # number); x**(2*y) or x**(y + 1/2) would be -1 there, (-2)**(2*y) -2.
    point = {"x": -1.0, "y": 0.5, "z": 0.5}
    assert math.isnan(_value(text, **point))
    assert math.isnan(_value(_simplified(text), **point)), (text, _simplified(text))
    _agrees_everywhere(text)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("x**y*x**2", "x**(y + 2)"),  # a whole number added keeps wholeness
        ("x**y/x", "x**(y - 1)"),
        ("(x**y)**-1", "x**-y"),
        ("(exp(x)**y)**2", "exp(x)**(2*y)"),  # a base that is never negative
        ("2**y*2**y", "2**(2*y)"),
        ("(2**y)**2", "2**(2*y)"),
        ("abs(x)**0.5*abs(x)**0.5", "abs(x)"),
        ("(abs(x)**0.5)**2", "abs(x)"),
        ("(x**2)**3", "x**6"),
        ("x**0.5*x**0.25", "x**(3/4)"),
        ("(x**0.5)**3", "x**(3/2)"),
    ],
)
def test_safe_power_rewrites_still_happen(text, expected):
    assert _simplified(text) == expected
    _agrees_everywhere(text)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("log(x) - log(x)", "0*log(x)"),  # nan for x < 0, not 0
        ("sqrt(x) - sqrt(x) + y", "y + 0*sqrt(x)"),
        ("0*log(x)", "0*log(x)"),
        ("0*x**0.5 + 1", "1 + 0*x**(1/2)"),
        ("sqrt(x)/sqrt(x)", "sqrt(x)/sqrt(x)"),  # nan for x < 0, not 1
        ("log(x)*log(x)**-1*y", "log(x)/log(x)*y"),  # the guard first: 1 before it meets y
        ("(x + log(y))*z - z*log(y)", "x*z + 0*log(y)"),
        ("log(x)*where(x > 1, x, 0)", "where(x > 1, x*log(x), 0*log(x))"),
        ("log(x) - log(x) + log(x)**2", "log(x)**2"),  # log(x)**2 is nan there already
        ("sqrt(x)/sqrt(x)*sqrt(x)", "sqrt(x)"),
        # Terms that are numbers wherever defined still cancel: nan only at isolated points.
        ("x - x", "0"),
        ("x/x", "1"),
        ("0*x", "0"),
        ("exp(x)/exp(x)", "1"),
        ("sin(x) - sin(x)", "0"),
        ("(log(x) > 0) - (log(x) > 0)", "0"),  # a comparison is never nan
    ],
)
def test_cancelled_terms_keep_their_nans(text, expected):
    assert _simplified(text) == expected
    _agrees_everywhere(text)
    assert _simplified(expected) == expected  # the trace is a fixed point


def test_cancelled_terms_are_nan_where_the_original_is():
    for text in (
        "log(x) - log(x)",
        "sqrt(x)/sqrt(x)",
        "0*log(x)",
        "(x + log(y))*z - z*log(y)",
        "log(x)*where(x > 1, x, 0)",
    ):
        point = {"x": -1.0, "y": -1.0, "z": 2.0}
        assert math.isnan(_value(text, **point)), text
        assert math.isnan(_value(_simplified(text), **point)), (text, _simplified(text))


@pytest.mark.parametrize(
    "text",
    [
        "(x - x)/(x - x)",
        "0/0",
        "0*(1/0)",
        "1/(x - x) - 1/(x - x)",
        "log(0) - log(0)",
        "x/(x - x) - x/(x - x)",
        "0*log(0) + x",
        "(1/0)*0*y",
    ],
)
def test_constant_infinities_do_not_cancel(text):
    # 0*inf and inf - inf are nan: (x - x)/(x - x) used to simplify to 0, a number everywhere
    # where the original is nan everywhere.
    assert _simplified(text) == "nan"
    _agrees_everywhere(text)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("(x - abs(x))/(x - abs(x))", "(x - abs(x))/(x - abs(x))"),  # nan for every x >= 0
        ("(x > 0)/(x > 0)", "(x > 0)/(x > 0)"),  # nan for every x <= 0
        ("relu(x)**2/relu(x)", "relu(x)**2/relu(x)"),  # 0*inf for every x <= 0
        ("relu(x)**y*relu(x)**z", "relu(x)**y*relu(x)**z"),
        ("0**y*0**-1", "0**y/0"),  # not 0**(y - 1)
        ("x*((x - abs(x))/(x - abs(x)) - (x - abs(x))/(x - abs(x)))", "0/(x - abs(x))"),
        # 0 at a point only: these still simplify.
        ("abs(x)**2/abs(x)", "abs(x)"),
        ("sign(x)/sign(x)", "1"),
        ("x**2/x", "x"),
    ],
)
def test_bases_that_are_zero_on_a_region_keep_their_quotients(text, expected):
    assert _simplified(text) == expected
    _agrees_everywhere(text)


@pytest.mark.parametrize(
    "text",
    [
        "log(y)**2*log(y)**z",
        "log(y)**z/log(y)**z",
        "sqrt(y)**z*sqrt(y)**(-z)",
    ],
)
def test_symbolic_exponents_of_a_base_that_can_be_nan_stay_apart(text):
    # log(-1)**2*log(-1)**-2 is nan*nan; log(-1)**0 would be 1.
    point = {"y": -1.0, "z": -2.0}
    assert math.isnan(_value(text, **point))
    assert math.isnan(_value(_simplified(text), **point)), (text, _simplified(text))
    _agrees_everywhere(text)


def test_derivative_of_sqrt_squared_keeps_the_domain():
    # d/dx sqrt(x)**2 = 2*sqrt(x)*(1/(2*sqrt(x))): 1 for x > 0, nan for x < 0 (as grad).
    d = diff("sqrt(x)**2", "x").derivatives["x"].text
    assert math.isnan(_value(d, x=-1.0)) and _value(d, x=2.0) == 1.0
    assert diff("sqrt(x)**2", "x", order=2).texts() == {"x": "0/sqrt(x)"}  # nan for x < 0
    d = diff("log(x)*x", "x").derivatives["x"].text
    assert d == "log(x) + 1"
