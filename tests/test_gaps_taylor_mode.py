"""Lines of core/taylor_mode.py that no test of the mutation tool's list executed.

Each test names the lines it covers and pins their behaviour, so that a mutant of the line
(a dropped ``raise``, a flipped comparison, a changed constant) fails it.  Where Taylor mode
refuses a point, ``taylor`` must give the engine's repeated differentiation bit for bit
(tests/taylor_defers.py); the expected numbers come from power series worked by hand or from
the engine's ``_repeated``, never from Taylor mode's own output.

Not tested: line 701's false branch (``if n > 1`` in ``_lgamma_series``), which no input
reaches: ``TaylorJets.apply`` calls a rule only when ``self.n > 1`` (order >= 1), and every
caller of ``_lgamma_series`` (the lgamma, gamma and beta rules) passes that same ``r.n``.
"""

from __future__ import annotations

import math

import pytest
from taylor_defers import bits, defers_to_engine

from autograd_cli.core.errors import ShapeError
from autograd_cli.core.interpret import interpret
from autograd_cli.core.taylor import _repeated, taylor
from autograd_cli.core.taylor_mode import NoTaylorMode, TaylorJets, taylor_coefficients
from autograd_cli.grammar import parse


def _jet(text: str, values: dict, order: int = 2):
    """The output node's Jet, from one walk of Taylor mode in x."""
    return interpret(parse(text), TaylorJets("x", order), values, bind=["x"]).result


# ---- Jet.__repr__ -------------------------------------------------------------------------


def test_a_jets_repr_says_poisoned_series_or_constant():
    """Lines 116-118 (both branches of 116): ``repr(Jet)`` is "Jet(poisoned: why)" for a node
    without a series, "Jet([c0, ..., cK])" for a live one, "Jet(constant)" for one that does not
    depend on x.  exp(x) at 0 to order 2 is 1 + x + x**2/2 (by hand); sqrt(x) at 0 is refused
    with "sqrt of zero" (the module's doctest); 3*y does not depend on x.  Kills 116's
    ``is not None`` -> ``is None`` (a poisoned Jet would print as constant)."""
    assert repr(_jet("sqrt(x)", {"x": 0.0})) == "Jet(poisoned: sqrt of zero)"
    assert repr(_jet("exp(x)", {"x": 0.0})) == "Jet([1.0, 1.0, 0.5])"
    assert repr(_jet("z = x; 3*y", {"x": 1.0, "y": 2.0})) == "Jet(constant)"


# ---- singular points of single rules: refused, and the engine's numbers ------------------


def test_log1p_at_minus_one_defers_to_the_engine(cli):
    """Line 478: log1p's argument at -1 (1 + u_0 == 0) is refused with "log1p of -1", and
    ``taylor`` (and the CLI) gives the engine's numbers.  By hand, d^k log1p(x) =
    (-1)**(k-1) (k-1)! / (1 + x)**k: at -1 the value is -inf and the derivatives alternate
    +inf, -inf, +inf.  Without the raise, 1/0 in the partial's check raises ZeroDivisionError,
    a different poison ("log1p: float division by zero")."""
    engine = defers_to_engine("log1p(x)", -1.0, 3, "^log1p of -1$", cli)
    assert engine == bits([-math.inf, math.inf, -math.inf, math.inf])


@pytest.mark.parametrize("x0", [1.0, 0.5, -1.0])
def test_acosh_at_and_inside_plus_minus_one_defers_to_the_engine(x0):
    """Line 595: acosh where u_0**2 - 1 <= 0 (|x| <= 1: at its branch point 1, and inside,
    where it is nan) is refused with "acosh at +-1", and ``taylor`` gives the engine's bits.
    By hand acosh(1) = 0 and acosh' = 1/sqrt(x**2 - 1) is inf at 1; inside (-1, 1) and at -1
    acosh is nan (no real value).  Dropping the raise divides by sqrt(0) (another poison's
    message) at 1."""
    engine = defers_to_engine("acosh(x)", x0, 3, r"^acosh at \+-1$")
    if x0 == 1.0:
        assert engine[:2] == bits([0.0, math.inf])
    else:
        assert engine[0] == "nan"


@pytest.mark.parametrize("x0, first", [(1.0, math.inf), (-1.0, -math.inf)])
def test_atanh_at_plus_minus_one_defers_to_the_engine(x0, first):
    """Line 612: atanh at +-1 (1 - u_0**2 == 0) is refused with "atanh at +-1", and ``taylor``
    gives the engine's bits: by hand atanh(+-1) = +-inf and atanh' = 1/(1 - x**2) = +inf.
    Without the raise the singularity guard refuses instead, with "atanh at a singular
    point"."""
    engine = defers_to_engine("atanh(x)", x0, 3, r"^atanh at \+-1$")
    assert engine[:2] == bits([first, math.inf])


def test_polar_is_refused_and_its_real_part_comes_from_the_engine():
    """polar has complex values, which Taylor mode's real series cannot hold, so it is
    refused ("polar of complex numbers"; real is refused too, its argument complex);
    real(polar(x, 1)) = x cos 1, whose series at x = 1 is cos 1, cos 1, 0, 0 (by hand), comes
    from the engine."""
    engine = defers_to_engine("real(polar(x, 1))", 1.0, 3, "^(real|polar) of complex numbers")
    c = math.cos(1.0)
    assert [float(v) for v in engine] == pytest.approx([c, c, 0.0, 0.0], rel=1e-12)


@pytest.mark.parametrize("text, x0", [("logaddexp(x, log(0))", 1.0), ("logaddexp(x, 1)", math.inf)])
def test_logaddexp_with_an_infinite_argument_defers_to_the_engine(text, x0):
    """Line 769: logaddexp(a, b) with a - b not finite (b = log(0) = -inf; a = x = inf) is
    refused with "logaddexp with an infinite argument", and ``taylor`` gives the engine's bits.
    logaddexp(x, -inf) is x: by hand 1, 1, 0, 0 at 1 (the engine's c3 is -0.0, which Taylor
    mode's own series, 0.0, would not give bit for bit).  Without the raise Taylor mode
    returns a series instead of deferring."""
    engine = defers_to_engine(text, x0, 3, "^logaddexp with an infinite argument$")
    if x0 == 1.0:
        assert [float(v) for v in engine] == [1.0, 1.0, 0.0, 0.0]
    else:
        assert engine[:2] == bits([math.inf, 1.0])  # logaddexp(x, 1)' = sigmoid(x - 1) -> 1


def _sinc_series(x0: float, order: int) -> list[float]:
    """sinc(x) = sin(pi x)/(pi x) = sum_j (-1)^j (pi x)^(2j) / (2j+1)!: its Taylor coefficients
    at x0 to ``order``, summed exactly in fractions of pi's float (x0 = 0 or tiny)."""
    coeffs = [0.0] * (order + 1)
    for j in range(order // 2 + 1):
        # d^k/dx^k of (pi x)^(2j) at x0, over k!: binomial(2j, k) pi^(2j) x0^(2j-k)
        for k in range(min(2 * j, order) + 1):
            term = math.comb(2 * j, k) * math.pi ** (2 * j) * x0 ** (2 * j - k)
            coeffs[k] += (-1) ** j * term / math.factorial(2 * j + 1)
    return coeffs


@pytest.mark.parametrize("x0", [0.0, 1e-170, -1e-170])
def test_sinc_at_zero_is_expanded_by_taylor_mode_to_the_order_cap(x0, cli):
    """sinc at 0 (and where pi x0**2 underflows) is Taylor mode's own: its series is sinc's
    Maclaurin series, c[2j] = (-1)^j pi^(2j)/(2j+1)! and c[2j+1] = 0 at 0, to --order's cap of
    20.  Before, Taylor mode refused sinc there and ``taylor`` differentiated 20 times over,
    which grows exponentially (order 14 at 0 took over a minute and 3 GB); the CLI's answer
    now comes in one pass.  At order 6 it agrees with the engine's repeated derivatives,
    which run through sinc's derivative series (core/ops/special.py)."""
    want = _sinc_series(x0, 20)
    got = taylor_coefficients(parse("sinc(x)"), {"x": x0}, "x", 20)
    assert [float(v) for v in got] == pytest.approx(want, rel=1e-13, abs=1e-300)
    r = cli("taylor", "sinc(x)", "--x", repr(x0), "--order", "20", "--json")
    assert r.code == 0, r.out
    assert r.json["coefficients"] == pytest.approx(want, rel=1e-13, abs=1e-300)
    engine = _repeated(parse("sinc(x)"), {"x": x0}, "x", 6)
    assert [float(v) for v in engine] == pytest.approx(want[:7], rel=1e-13, abs=1e-300)


# ---- the interpretation: inputs, the engine's errors, ops without a rule -----------------


def test_an_array_valued_expansion_variable_is_refused():
    """Line 891: the variable expanded in must be a scalar; an array value is refused with
    "'x' is not a scalar" (``taylor`` itself says "taylor expands in scalar variables" before
    Taylor mode runs).  Without the raise, its coefficient 0 is float() of an array: a
    TypeError."""
    with pytest.raises(NoTaylorMode, match=r"^'x' is not a scalar$"):
        taylor_coefficients(parse("sum(x)"), {"x": [1.0, 2.0]}, "x", 2)


def test_the_engines_own_error_is_refused_and_raised_again_by_the_old_path():
    """Lines 898 and 900: an op whose forward fails in the engine (shapes (2,) and (3,) do not
    broadcast) is refused with "op: the engine's message" (chained to that error), and
    ``taylor`` then raises the engine's own error (ShapeError) in its own words, as the old
    path does.  Without the raise, ``out`` is unbound: a NameError escapes."""
    text, point = "sum(x * [1, 2] + [1, 2, 3])", {"x": 1.0}
    with pytest.raises(NoTaylorMode, match=r"^add: add: shapes \(2,\), \(3,\) do not fit") as ei:
        taylor_coefficients(parse(text), point, "x", 3)
    assert isinstance(ei.value.__cause__, ShapeError)
    with pytest.raises(ShapeError) as old:
        _repeated(parse(text), point, "x", 3)
    with pytest.raises(ShapeError) as new:
        taylor(parse(text), point, order=3)
    assert str(new.value) == str(old.value)


def test_a_live_op_without_a_rule_is_refused_and_comes_from_the_engine():
    """Line 911: det has no Taylor rule; a live det node is poisoned "no Taylor rule for det",
    and ``taylor`` gives the engine's bits.  det([[x, 1], [2, 3]]) = 3x - 2: by hand 1, 3, 0, 0
    at x = 1.  The mutant ``return out`` (no Jet) breaks the walk."""
    engine = defers_to_engine("det([[x, 1], [2, 3]])", 1.0, 3, "^no Taylor rule for det$")
    assert [float(v) for v in engine] == [1.0, 3.0, 0.0, 0.0]


def test_an_overflow_error_in_a_rule_is_a_hard_poison():
    """Lines 927-928: an OverflowError inside a rule (lgamma's pole distance rounds x = -inf:
    "cannot convert float infinity to integer") poisons the node, "lgamma: <the message>",
    and ``taylor`` gives the engine's bits (by hand lgamma(-inf) = +inf).  The poison is hard,
    so a zero partial does not absorb it: sign(lgamma(x)) is refused too, though its engine
    series is 1, 0, 0, 0 (sign(inf) = 1, sign' = 0).  Kills dropping OverflowError from the
    ``except`` (it would escape), ``return out`` and ``hard=True`` -> ``hard=False`` (sign
    would absorb it and Taylor mode would answer)."""
    engine = defers_to_engine("lgamma(x)", -math.inf, 3, "^lgamma: .*infinity")
    assert engine[0] == "inf"
    engine = defers_to_engine("sign(lgamma(x))", -math.inf, 3, "^lgamma: .*infinity")
    assert [float(v) for v in engine] == [1.0, 0.0, 0.0, 0.0]


def test_an_array_output_that_does_not_depend_on_x_is_refused():
    """Line 974: an output that does not depend on x has zero derivatives if it is a scalar,
    but an array output (y * [1, 2]) has no series of a scalar: refused, "the output is not a
    scalar".  Without the raise, float() of the array raises TypeError."""
    with pytest.raises(NoTaylorMode, match="^the output is not a scalar$"):
        taylor_coefficients(parse("z = x; y * [1, 2]"), {"x": 1.0, "y": 2.0}, "x", 2)
    assert taylor_coefficients(parse("z = x; y * 2"), {"x": 1.0, "y": 2.0}, "x", 2) == [
        4.0,
        0.0,
        0.0,
    ]


# ---- product bugs found on the way ---------------------------------------------------------


@pytest.mark.parametrize("text", ["gamma(x)", "digamma(x)", "lgamma(x)", "beta(x, 2)"])
def test_gamma_at_nan_gives_the_engines_nans(text, cli):
    """gamma and its relatives at x = nan: every coefficient is nan (the engine's, by hand:
    nothing is defined at nan).  A product bug found here: Taylor mode's rule called
    round(nan) for the distance to the poles, whose ValueError escaped, and ``taylor`` and the
    CLI ended in an internal error; nan is now no distance, a singular point, and the series
    comes from the engine."""
    want = bits([math.nan] * 4)
    assert bits(_repeated(parse(text), {"x": math.nan}, "x", 3)) == want
    assert bits(taylor(parse(text), {"x": math.nan}, order=3).coefficients) == want
    r = cli("taylor", text, "--x", "nan", "--order", "3", "--json")
    assert r.code == 0 and r.json["coefficients"] == ["nan"] * 4, r.out


def test_abs_of_polar_gives_the_engines_series():
    """abs(polar(x, 1)) = |x e**i| = |x|: at x = 1 its series is 1, 1, 0, 0 (by hand), which the
    engine's repeated differentiation gives.  A product bug found here: Taylor mode's piecewise
    rule read abs's partial at the complex point with float(), a TypeError that escaped
    ``taylor``; a complex node is now refused (real series only) and the engine answers."""
    with pytest.raises(NoTaylorMode, match="of complex numbers"):
        taylor_coefficients(parse("abs(polar(x, 1))"), {"x": 1.0}, "x", 3)
    assert _repeated(parse("abs(polar(x, 1))"), {"x": 1.0}, "x", 3) == [1.0, 1.0, 0.0, 0.0]
    got = taylor(parse("abs(polar(x, 1))"), {"x": 1.0}, order=3).coefficients
    assert got == [1.0, 1.0, 0.0, 0.0]


@pytest.mark.parametrize("x0", [math.inf, -math.inf, math.nan, 1e308, -1e308])
def test_sinc_where_pi_x_is_not_finite_defers_to_the_engine(x0, cli):
    """sinc at +-inf, nan, and +-1e308 (where pi x overflows) has no series: Taylor mode
    refuses ("sinc where pi x is not finite") and taylor and grad --order give the engine's
    numbers, nan (sin(pi x) of inf is nan in IEEE arithmetic, NumPy's sinc too).  Before,
    sinc_derivatives' math.sin(inf) raised ValueError there: an internal error of taylor,
    and of grad --order once it used Taylor mode."""
    engine = defers_to_engine("sinc(x)", x0, 3, r"^sinc where pi x is not finite$", cli)
    assert all(math.isnan(float(v)) for v in engine)
    r = cli("grad", "sinc(x)", "--x", repr(x0), "--order", "3", "--json")
    assert r.code == 0, r.out
    assert (r.json["value"], r.json["grad"]["x"]) == ("nan", "nan")
