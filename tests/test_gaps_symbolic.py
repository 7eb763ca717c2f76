"""Tests for the lines of the symbolic differentiator (core/symbolic/) that the mutation tool's
test list never ran (bench/mutate.py, target ``symbolic``), so that their mutants die.

Each test's docstring names the line(s) it covers (``file:line``, as they are when written) and
the behaviour it pins.  Expected values come from algebra by hand, exact rational arithmetic
(:mod:`fractions`), SymPy as an independent oracle, or the modules' docstrings; never from the
output of the code under test.

Lines no input reaches, so no test here: numbers.py:110 and :145 (every supported op's forward
is a NumPy/SciPy ufunc under errstate(all="ignore"), which answers nan or inf for any real
scalar, never an exception), terms.py:133 (a NUM always has a constant value, so may_nan
never asks _local_may_nan about one), presentation.py:79 (_product_expr turns a NUM exponent
into its number before calling _present_power), command.py:368-369 (a derivative's variables
are among the expression's and every supported op is elementwise, so its shape always
broadcasts to the value's).
"""

from __future__ import annotations

import cmath
from fractions import Fraction

import pytest

from autograd_cli.core.printing import to_text
from autograd_cli.core.program import Expr
from autograd_cli.core.symbolic import (
    Algebra,
    Builder,
    Sym,
    UnsupportedDiffError,
    diff,
    local_vjp,
    simplify,
)
from autograd_cli.core.symbolic.numbers import n_add, n_mul
from autograd_cli.grammar import parse


def _simplified(text: str) -> str:
    return to_text(simplify(parse(text).output))


# ---- numbers.py: exact numbers ------------------------------------------------------------


def test_an_exact_result_past_62_bits_is_rounded_then_made_canonical_again():
    """covers core/symbolic/numbers.py:27: return _nice(float(v)).

    A Fraction whose numerator or denominator passes 2**62 is rounded to float64, and the
    float goes through the canonical form once more: "a Fraction when it is short and exact,
    a float otherwise" (the module's docstring).  (1 - 3**-39)*(1 + 5**-26) is
    1 + (5**-26 - 3**-39 - 3**-39*5**-26), about 1 + 4e-19: its denominator 3**39*5**26 is
    past 2**62, and the nearest float64 is 1.0 (half an ulp of 1 is 1.1e-16), which is short:
    the exact 1.  So the product is Fraction(1), and exact arithmetic goes on from it
    (1 * 1/3 is the exact third).  The same for a sum.  Returning the bare float 1.0 would
    make every later product inexact."""
    a, b = Fraction(3**39 - 1, 3**39), Fraction(5**26 + 1, 5**26)
    assert max(a.denominator * b.denominator, a.numerator * b.numerator) > 2**62
    got = n_mul(a, b)
    assert isinstance(got, Fraction) and got == 1
    assert n_mul(got, Fraction(1, 3)) == Fraction(1, 3)
    total = n_add(a, Fraction(1, 5**26))  # 1 - 3**-39 + 5**-26
    assert isinstance(total, Fraction) and total == 1
    # a result that is not short stays a float: 1/3**39 + 1/5**26 rounds to no short value
    tiny = n_add(Fraction(1, 3**39), Fraction(1, 5**26))
    assert isinstance(tiny, float) and tiny == float(Fraction(1, 3**39) + Fraction(1, 5**26))


def test_an_exact_power_of_a_short_fraction_is_rounded_once(cli):
    """pins core/symbolic/numbers.py:72-73: if abs(e) * bits <= 256: return _nice(a**e)
    (the mutant ``< 256`` sends 3**-128 down the float path).

    A power of an exact number is computed exactly while ``|e| * bits <= 256`` and rounded
    once at the end: (x/3)**128 distributes to 3**-128 * x**128 (an integer power of a
    product), and 3**-128 as the exact rational rounded to float64 is
    8.481631423210552e-62.  Float64's pow of the already rounded 1/3 is
    8.481631423210492e-62: 128 times the rounding error of 1/3.  d/dy of y*(x/3)**128 is
    (x/3)**128, printed with that coefficient; SymPy's value agrees at x = 3/2."""
    want = float(Fraction(1, 3**128))
    assert repr(want) == "8.481631423210552e-62"
    r = cli("diff", "y*(x/3)**128", "--wrt", "y", "--x", "1.5", "--y", "1", "--json")
    assert r.code == 0, r.out
    assert r.json["derivative"] == f"{want!r}*x**128"
    sympy = pytest.importorskip("sympy")
    x, y = sympy.symbols("x y")
    oracle = sympy.diff(y * (x / 3) ** 128, y).subs({x: sympy.Rational(3, 2), y: 1})
    assert r.json["derivative_value"] == pytest.approx(float(oracle), rel=1e-13)


def test_an_exact_power_too_large_to_compute_exactly_is_an_ieee_power(cli):
    """covers core/symbolic/numbers.py:72->74 (the branch past ``abs(e) * bits <= 256``).

    10**400 has 400 * 4 = 1600 > 256 bits of work: it is NumPy's float64 power, inf, never
    the exact 10**400 (whose conversion to float raises OverflowError: the mutant
    ``abs(e) / bits`` took that path and failed with an internal error).  An exact base and
    exponent whose power is no exact number stay symbolic, as sqrt(2) does (numbers.py's
    docstring), so d/dy of y*10**400 prints as 10**400; its value is inf, as grad's."""
    r = cli("diff", "y*10**400", "--wrt", "y", "--y", "2", "--json")
    assert r.code == 0, r.out
    assert r.json["derivative"] == "10**400"
    assert r.json["derivative_value"] == "inf"
    g = cli("grad", "y*10**400", "--y", "2", "--json")
    assert g.code == 0 and g.json["grad"]["y"] == "inf", g.out


@pytest.mark.parametrize(
    "text, derivative",
    [
        ("3**39*x", "3**39"),  # was 4.052555153018976e+18, which is not 3**39
        ("-3**39*x", "-3**39"),
        ("x/3**39", "1/3**39"),
        ("x*2**-62", "1/2**62"),  # exact as a float, but 4.611686018427388e+18 does not read
        ("x*6**22", "6**22"),
        ("3**40*x/3**41", "1/3"),  # 3**40 and 3**41 are past 2**62: powers that cancel
        ("x*10**17", "1e+17"),  # short and exact: as before
        ("x*(3**39 + 1)", "4.052555153018976e+18"),  # no power: the float, as before
        ("2*3**39*x", "8.105110306037953e+18"),
    ],
)
def test_an_exact_whole_number_of_1e16_and_over_prints_as_its_power(cli, text, derivative):
    """An exact integer past 1e16 whose float is long or not exact prints as ``b**e``
    (presentation.py's _integer_expr), so it reads and parses back exactly: the printed
    derivative times x differentiates to itself."""
    r = cli("diff", text, "--json")
    assert r.code == 0 and r.json["derivative"] == derivative, r.out
    again = cli("diff", f"({derivative})*x", "--json")
    assert again.code == 0 and again.json["derivative"] == derivative, again.out


def _diff_agrees_with_grad(cli, text, derivative, x):
    """``diff`` prints ``derivative`` for ``text`` at x, and its value is grad's."""
    r = cli("diff", text, "--x", x, "--json")
    assert r.code == 0 and r.json["derivative"] == derivative, r.out
    g = cli("grad", text, "--x", x, "--json")
    assert g.code == 0, g.out
    assert float(r.json["derivative_value"]) == pytest.approx(
        float(g.json["grad"]["x"]), rel=1e-15, nan_ok=True
    )


@pytest.mark.parametrize(
    "text, derivative",
    [
        ("x/9", "1/9"),  # was 0.1111111111111111: the rule's 1/9 folded in float64
        ("x**2/3 + x/6", "2*x/3 + 1/6"),
        ("tan(x)/7", "(tan(x)**2 + 1)/7"),
        ("atan(x/3)", "1/(3*(x**2/9 + 1))"),
        ("x**-0.5/3", "-1/(6*x**(3/2))"),
        ("relu(x)/3", "(x > 0)/3"),
        ("x/0.1", "10"),  # 1/0.1 is 10 exactly in float64 too
        ("sqrt(2)*x", "sqrt(2)"),  # inexact: kept symbolic, as before
        ("x*1e-300/3", "3.3333333333333334e-301"),  # a decimal past 2**62: float64, as before
    ],
)
def test_a_rules_own_numbers_fold_exactly(cli, text, derivative):
    """The differentiator's builder folds numbers only where the result is exact (its
    Builder.apply asks numbers._fold), so 1/9 reaches the algebra as a division, which keeps
    it exact; the value agrees with grad's to the last bit or one."""
    _diff_agrees_with_grad(cli, text, derivative, "1.5")


@pytest.mark.parametrize(
    "text, derivative",
    [
        ("3**40*x/3**39", "3"),  # was 3**40/3**39: 3**39 is an exact number, 3**40 a power
        ("x/3**40*3**41", "3"),
        ("x*3**41/3**39", "9"),
        ("x*2**63/2", "2**62"),  # exact again, and long: printed as its power
        ("2*x*2**63 - x*2**64", "0"),  # 2*2**63 is 2**64: the two terms meet
        ("x*2**-70*4", "1/2**68"),
        ("x*3**40/9", "3**38"),  # 3**38 is exact: folded into the coefficient
        ("x*(3**40 + 1)/3**39", "(3**40 + 1)/3**39"),  # a sum, not a power: kept
        ("x*(-3)**40/3**39", "(-3)**40/3**39"),  # only whole-number bases above 1 move
        ("sqrt(2**70)*x", "34359738368"),  # a root to whole exponents folds
        ("sqrt(9*2**70)*x", "103079215104"),
        ("cbrt(3**60)*x", "3486784401"),
        ("sqrt(3**80)*x", "3**40"),
        ("sqrt(2**-70)*x", "1/34359738368"),
        ("sqrt(2**71)*x", "sqrt(2**71)"),  # a half exponent: kept
        ("sqrt(3*2**70)*x", "sqrt(3*2**70)"),  # an inexact root of the coefficient: kept
        ("sqrt((-2)**70)*x", "sqrt((-2)**70)"),  # a negative base: kept ((-2)**35 < 0)
        ("sqrt(-2**70)*x", "sqrt(-2**70)"),  # nan, as grad says
        ("x*(0**-2)**(1/2)", "1/0"),  # a zero base is kept as inf: its powers are 0's
        ("x*sqrt(0**-2)", "1/0"),
        ("x*(0**-2)**(-1/2)", "0"),
    ],
)
def test_a_number_kept_as_powers_meets_its_coefficient_and_roots(cli, text, derivative):
    """A power kept symbolic (past the exact numbers' bound) and an exact coefficient with
    powers of the same base meet (algebra.py's _fold_number_powers), and sqrt or cbrt of such
    a number folds where the root has whole exponents (Algebra.fn); the printed derivative
    agrees with grad's value and parses back to itself."""
    _diff_agrees_with_grad(cli, text, derivative, "2")
    again = cli("diff", f"({derivative})*x", "--json")
    assert again.code == 0 and again.json["derivative"] == derivative, again.out


@pytest.mark.parametrize(
    "text, derivative",
    [
        ("x**2*3**34", "2*3**34*x"),  # was 3.3354363399333136e+16*x: 2*3**34 is exact
        ("-x**2*3**34", "-2*3**34*x"),
        ("x*3**34*5", "5*3**34"),
        ("x*7**19*11", "11*7**19"),
        ("x*2**55*3**2", "9*2**55"),
        ("x**3*3**34/7", "3**35*x**2/7"),  # a pure power still prints as one
        ("x*10**17*3", "3e+17"),  # short as a float: a float
        ("x*(2**61 + 1)", "2.305843009213694e+18"),  # no small factor times a power: its float
    ],
)
def test_an_exact_whole_number_past_1e16_prints_as_a_small_number_times_a_power(
    cli, text, derivative
):
    """A whole number the algebra holds exactly (below 2**62) whose float is inexact or long
    prints as m*b**e with m small (presentation._scaled_power), so that it reads, and parses
    back, exactly, as a pure power does; its value is grad's."""
    _diff_agrees_with_grad(cli, text, derivative, "2")
    again = cli("diff", f"y*({derivative})", "--wrt", "y", "--json")
    assert again.code == 0 and again.json["derivative"] == derivative, again.out


@pytest.mark.parametrize(
    "text, derivative",
    [
        ("x*(2**70)**(1/2)", "34359738368"),  # 2**35: it stayed (2**70)**(1/2)
        ("x*(2**70)**-0.5", "1/34359738368"),
        ("x*(2**70)**(1/7)", "1024"),
        ("x*(2**70)**(1/3)", "2**(70/3)"),
        ("x*(2**70)**y", "(2**70)**y"),  # a symbolic exponent: kept
        ("x*((-2)**71)**(1/2)", "((-2)**71)**(1/2)"),  # a negative base: nan, kept
    ],
)
def test_a_number_kept_as_a_power_to_a_fraction_multiplies_the_exponents(cli, text, derivative):
    """(b**a)**f = b**(a*f) for positive numbers b (algebra.py's _positive_number): the power
    of a number past the exact bound (2**70) folds when taken to a fraction, as (3**40)**2
    already did; the value is grad's."""
    r = cli("diff", text, "--wrt", "x", "--json")
    assert r.code == 0 and r.json["derivative"] == derivative, r.out
    if "y" not in text:
        g = cli("grad", text, "--x", "1", "--json")
        v = cli("eval", derivative, "--json")  # the printed number, evaluated
        assert g.code == 0 and v.code == 0, (g.out, v.out)
        if v.json["value"] == "nan":
            assert g.json["grad"]["x"] == "nan"
        else:
            assert g.json["grad"]["x"] == pytest.approx(v.json["value"], rel=1e-15)


def test_a_complex_valued_op_of_real_constants_is_no_internal_error(cli):
    """core/symbolic/numbers.py:111 (a product bug found next to line 110).

    polar(1, 2) = exp(2j) is a constant, so d/dx of x*polar(1, 2) is that constant,
    cos(2) + 1j*sin(2) at every x.  diff failed with an internal error (TypeError: float()
    of a complex) both in the builder's folding and in the simplifier's; an op of the
    table on real numbers whose value is complex now stays unfolded (as an imaginary
    constant does)."""
    r = cli("diff", "x*polar(1, 2)", "--x", "1", "--json")
    assert r.code == 0, r.out
    want = cmath.exp(2j)
    got = r.json["derivative_value"]
    assert got["re"] == pytest.approx(want.real) and got["im"] == pytest.approx(want.imag)


# ---- terms.py: what a term's values can be ------------------------------------------------


def test_a_term_prints_its_kind_and_label():
    """covers core/symbolic/terms.py:50: Term.__repr__.

    A term of the algebra (Algebra is exported by core.symbolic) shows its kind and its
    label, the short text the algebra sorts by: Term(var, 'x'), Term(num, '3/2')."""
    alg = Algebra()
    assert repr(alg.var("x")) == "Term(var, 'x')"
    assert repr(alg.num(Fraction(3, 2))) == "Term(num, '3/2')"


def test_a_power_of_pi_cancels_without_a_trace(cli):
    """covers core/symbolic/terms.py:84: return not isinstance(t.data[1], complex) and
    t.data[1] >= 0 (a named constant is never negative: pi, e).

    pi**x is a positive number for every real x, so it can never be nan: pi**x - pi**x is
    exactly 0 and needs no trace (algebra.py keeps 0*t only for a t that can be nan on a
    region).  (-pi)**x is nan for every non-integer x, so its difference keeps the trace
    0*(-pi)**x, nan there as the expression (grad: nan at x = 1/2).  Mutants that called pi
    possibly negative printed 0*pi**x; one that compared the name "pi" with 0 raised."""
    for expr in ("y*(pi**x - pi**x)", "y*(e**x - e**x)"):
        r = cli("diff", expr, "--wrt", "y", "--json")
        assert r.code == 0 and r.json["derivative"] == "0", r.out
    r = cli("diff", "pi**x - pi**x", "--json")
    assert r.code == 0 and r.json["derivative"] == "0", r.out
    expr = "y*((-pi)**x - (-pi)**x)"
    r = cli("diff", expr, "--wrt", "y", "--x", "0.5", "--y", "1", "--json")
    g = cli("grad", expr, "--x", "0.5", "--y", "1", "--json")
    assert r.code == 0 and g.code == 0, r.out + g.out
    assert r.json["derivative"] == "0*(-pi)**x"
    assert r.json["derivative_value"] == "nan" == g.json["grad"]["y"]


def test_a_named_constant_is_never_negative_by_its_value():
    """covers core/symbolic/terms.py:84 through the public Algebra.named: whether a named
    constant is never negative is read from its value.

    c**x - c**x for a named constant c: with c = 0.5 or 3, c**x is a positive number for
    every real x, so the difference is exactly 0 (no trace); with c = -2, (-2)**x is nan for
    every non-integer x, so the cancellation keeps the trace 0*(-2)**x (a named constant
    prints as its value).  The mutants that dropped the comparison (every real constant
    non-negative) or compared with 1 instead of 0 got one of them wrong; the parser's own
    named constants, pi and e, are both above 1, so only a caller's constant tells.

    The same fact lets a whole power of a product distribute over a symbolic exponent:
    (c**y*w)**2 is c**(2*y)*w**2 for c >= 0, 0 included (both sides are 0, inf or w**2 as y
    is positive, negative or 0), but not for c = -2: at y = 1/2, ((-2)**0.5)**2 is nan and
    (-2)**1 is not (core/symbolic/__init__.py).  The mutant ``> 0`` kept 0's power whole."""
    for value, want in ((0.5, "0"), (3.0, "0"), (-2.0, "0*(-2)**x")):
        alg = Algebra()
        t = alg.pow(alg.named("c", value), alg.var("x"))
        assert to_text(alg.to_expr(alg.add([(1, t), (-1, t)]))) == want, value
    for value, want in ((0.0, "0**(2*y)*w**2"), (0.5, "0.5**(2*y)*w**2"), (-2.0, "((-2)**y*w)**2")):
        alg = Algebra()
        base = alg.mul(1, [(alg.named("c", value), alg.var("y")), (alg.var("w"), alg.num(1))])
        assert to_text(alg.to_expr(alg.pow(base, alg.num(2)))) == want, value


def test_a_power_of_an_imaginary_constant_is_no_real_number_and_no_error():
    """covers core/symbolic/terms.py:84 with an imaginary named constant.

    2j is no real number, so it is not known to be >= 0 (and a complex has no order: the
    ``not isinstance(..., complex)`` must come first, short-circuiting ``2j >= 0``).  So
    (2j)**x may be nan for the algebra and its cancellation keeps the trace 0*2j**x, which
    is 0 at every x.  The mutants ``or``, ``isinstance(t.data[0], ...)`` and the negation
    compared 2j with 0: TypeError."""
    assert _simplified("(2j)**x - (2j)**x") == "0*2j**x"
    assert _simplified("(2j)**x*y - y*(2j)**x + y") == "y + 0*2j**x"


# ---- algebra.py: the simplifier ------------------------------------------------------------


def test_a_cancelled_overflowing_exact_power_leaves_no_trace(cli):
    """covers core/symbolic/algebra.py:114->112 (a cancelled term's nan part is a finite
    number: no trace).

    The algebra's numbers are exact where the input is: 10**400 is the exact integer, kept
    symbolic (its float64 value overflows), so 10**400*x - 10**400*x is exactly 0, as
    2**70 + 1 - 2**70 is exactly 1.  The term 10**400*x counts as possibly infinite (its
    constant factor is inf in float64) and its trace would be its failing factor with the
    exponent taken down to its sign: 10**1 = 10, a finite number, which can never be nan, so
    nothing stays.  float64 overflow is outside the algebra's promise (Algebra.may_nan:
    "Overflow ... is not counted"; tests/test_simplify_property.py: "Float64 artifacts are not
    judged: overflow"): evaluated in float64 the expression is inf - inf = nan.  The mutants
    that kept the number 10 as a trace turned the whole sum into nan.  A real trace stays
    beside it: log(x) - log(x) keeps 0*log(x)."""
    r = cli("diff", "10**400*x - 10**400*x", "--json")
    assert r.code == 0 and r.json["derivative"] == "0", r.out
    assert _simplified("10**400*x - 10**400*x") == "0"
    assert _simplified("10**400*x - 10**400*x + log(x) - log(x)") == "0*log(x)"


def test_an_array_literal_is_refused_by_the_simplifier_itself(cli):
    """covers core/symbolic/algebra.py:161: raise UnsupportedDiffError (an array constant).

    simplify() works on scalar expressions of elementwise ops; an array literal of numbers
    (a constant whose value is a list) is refused with the kind "unsupported" and the way
    out (grad), by the simplifier itself: diff --order 0 simplifies the expression without
    differentiating it, and a Python caller may simplify any Expr."""
    with pytest.raises(UnsupportedDiffError, match="use grad for array literals") as info:
        simplify(parse("x*[1, 2]").output)
    assert info.value.details["op"] == "const"
    r = cli("diff", "x*[1, 2]", "--order", "0", "--json")
    assert r.code == 1, r.out
    assert r.json["error"]["kind"] == "unsupported"
    assert "use grad for array literals" in r.json["error"]["message"]


def test_a_power_of_a_sum_whose_expansion_underflows_keeps_its_factor(cli):
    """covers core/symbolic/algebra.py:204 (a 0*t, t never nan, is dropped from a sum) and
    algebra.py:257 (the terms of a non-sum: the expansion of a power that came out a number).

    In a sum, a product with a sum factor is expanded only when its terms meet other terms
    (core/symbolic/__init__.py).  (1e-200*x + 1e-200*y)**2 expands to terms whose
    coefficients are 1e-400 = 0 in float64: each 0*t is dropped (t = x**2, x*y, y**2 are
    never nan), the expansion is the number 0, which meets nothing, so the power keeps its
    form.  Expanding it would have lost it: at x = y = 1e150 it is (2e-50)**2 = 4e-100,
    which d/dw of w*((...)**2 + z) gives, as SymPy does."""
    expr = "w*((1e-200*x + 1e-200*y)**2 + z)"
    point = ("--w", "1", "--x", "1e150", "--y", "1e150", "--z", "0")
    r = cli("diff", expr, "--wrt", "w", *point, "--json")
    assert r.code == 0, r.out
    assert r.json["derivative"] == "(1e-200*x + 1e-200*y)**2 + z"
    assert r.json["derivative_value"] == pytest.approx(4e-100, rel=1e-12)
    sympy = pytest.importorskip("sympy")
    w, x, y, z = sympy.symbols("w x y z")
    k = sympy.Rational(1, 10**200)
    f = w * ((k * x + k * y) ** 2 + z)
    at = {w: 1, x: 10**150, y: 10**150, z: 0}
    assert float(sympy.diff(f, w).subs(at)) == pytest.approx(r.json["derivative_value"])


@pytest.mark.parametrize(
    "inner, x, y",
    [
        # (y + 1e-200 x)**2 - y**2 = 2e-200 x y + 1e-400 x**2: at x = 1e200, y = 1, 2 + 1
        ("(y + 1e-200*x)**2 - y**2", "1e200", "1"),
        # (1e-200 x + 1e-150 y)**2 - 1e-300 y**2 = 1e-400 x**2 + 2e-350 x y: at x = 1e200,
        # y = 1e150, 1 + 2
        ("(1e-200*x + 1e-150*y)**2 - 1e-300*y**2", "1e200", "1e150"),
        # and one that overflows: 1e400 x**2 is inf*x**2, nan at x = 1e-200 (1 + 1)**2 - 1 = 3
        ("(y + 1e200*x)**2 - y**2", "1e-200", "1"),
    ],
)
def test_an_expansion_keeps_the_terms_whose_coefficients_underflow(cli, inner, x, y):
    """core/symbolic/algebra.py:204 (each 0*t of the expansion is dropped) and :257 (the
    expansion of the power is one term), a product bug.

    The square of the sum is expanded because one of its terms meets the one subtracted,
    but the square of the small term has the coefficient 1e-400, 0 in float64, and is
    was dropped: the printed d/dw of w*(...) was 2e-200*x*y (resp. 0).  At the point given
    the dropped term is 1, and the derivative is 3: as grad says (the expression evaluated in
    float64 is (1 + 1)**2 - 1 = 3, resp. (1 + 1)**2 - 1 = 3) and as SymPy says exactly.
    The power now keeps its factor when the expansion's coefficients do not survive."""
    expr = f"w*({inner})"
    point = ("--w", "1", "--x", x, "--y", y)
    g = cli("grad", expr, *point, "--json")
    assert g.code == 0 and g.json["grad"]["w"] == 3.0, g.out
    sympy = pytest.importorskip("sympy")
    exact = sympy.sympify(inner, rational=True)  # 1e-200 as the rational 10**-200
    at = {sympy.Symbol(n): sympy.sympify(v, rational=True) for n, v in (("x", x), ("y", y))}
    assert exact.subs(at) == 3
    r = cli("diff", expr, "--wrt", "w", *point, "--json")
    assert r.code == 0, r.out
    assert r.json["derivative_value"] == pytest.approx(3.0)


def test_zeros_like_simplifies_to_zero():
    """covers core/symbolic/algebra.py:553: zeros_like -> num(0).

    zeros_like(x) is 0 wherever x is, nan and inf included (the op rules use it; the grammar
    has no spelling for it, so a Python caller builds it): simplify() of x + zeros_like(x)
    is x, of zeros_like(x) alone 0, and diff() at order 0 prints the same."""
    x = Expr.var("x")
    z = Expr("zeros_like", (x,))
    assert to_text(simplify(z)) == "0"
    assert to_text(simplify(Expr("add", (x, z)))) == "x"
    assert diff(Expr("mul", (x, Expr("add", (z, Expr.const(2.0))))), "x", order=0).texts() == {
        "x": "2*x"
    }


# ---- differentiation.py: the builder and symbolic values -----------------------------------


def test_the_builder_takes_exprs_complex_numbers_and_nothing_else():
    """covers core/symbolic/differentiation.py:78 (an Expr is its own Expr), 81-82 (a complex
    number is a complex constant, hash-consed) and 83 (anything else is a TypeError naming
    its type).

    A rule may hand the builder Syms, Exprs, real or complex numbers.  A string is none of
    them: complex("a") would be a ValueError, so the mutant that tested ``not is_complex``
    failed with the wrong error."""
    b = Builder()
    x = Expr.var("x")
    assert b.as_expr(x) is x
    c = b.as_expr(2j)
    assert isinstance(c, Expr) and c.op == "const" and c.value == 2j
    assert b.as_expr(complex(0, 2)) is c  # one node per constant
    with pytest.raises(TypeError, match="cannot use str in a symbolic rule"):
        b.as_expr("a")


def test_polar_differentiates_with_an_imaginary_unit_from_its_rule(cli):
    """covers core/symbolic/differentiation.py:81-82 from the command line.

    polar(r, t) = r*exp(1j*t); its rule writes d/dt as ``out * 1j``, a complex number the
    builder turns into the constant 1j: d/dt = 1j*polar(r, t), d/dr = exp(1j*t).  SymPy's
    derivatives of r*exp(I*t) give the same values at r = 2, t = 1/2."""
    r = cli("diff", "polar(r, t)", "--r", "2", "--t", "0.5", "--json")
    assert r.code == 0, r.out
    assert r.json["derivative"] == {"r": "exp(1j*t)", "t": "1j*polar(r, t)"}
    sympy = pytest.importorskip("sympy")
    rs, ts = sympy.symbols("r t")
    f = rs * sympy.exp(sympy.I * ts)
    for name, s in (("r", rs), ("t", ts)):
        want = complex(sympy.diff(f, s).subs({rs: 2, ts: sympy.Rational(1, 2)}).evalf())
        got = r.json["derivative_value"][name]
        assert got["re"] == pytest.approx(want.real, rel=1e-13)
        assert got["im"] == pytest.approx(want.imag, rel=1e-13)


def test_the_builder_refuses_array_shapes_and_ops_with_no_symbolic_form():
    """covers core/symbolic/differentiation.py:90 (a reshape, broadcast_to or sum_to to a
    non-scalar shape) and :96 (an op diff does not support, called by a rule).

    Symbolic values are scalars (Sym.shape is ()): a reshape to () is the value itself, to
    any other shape an UnsupportedDiffError naming the op, as is a reduction such as sum."""
    b = Builder()
    s = b.wrap(Expr.var("x"))
    assert b.call("reshape", (s,), {"shape": ()}).expr is s.expr
    for name in ("reshape", "broadcast_to", "sum_to"):
        with pytest.raises(UnsupportedDiffError, match=f"use grad for {name}") as info:
            b.call(name, (s,), {"shape": (2,)})
        assert info.value.details["op"] == name
    with pytest.raises(UnsupportedDiffError, match="use grad for sum") as info:
        b.call("sum", (s,), {})
    assert info.value.details["op"] == "sum"


def test_a_symbolic_value_has_unary_plus_a_repr_and_no_truth_value():
    """covers core/symbolic/differentiation.py:177 (+s is s), 180 (bool(s) raises) and 183
    (repr).

    A Sym stands for a number not known yet: +s is s itself; whether it is true is not known,
    so bool() raises a TypeError saying so (the mutant that dropped the raise made __bool__
    return None, which Python reports as a different TypeError); repr shows the expression
    as the printer writes it (x*x + 1, the builder folds nothing more)."""
    b = Builder()
    s = b.wrap(Expr.var("x"))
    assert +s is s
    with pytest.raises(TypeError, match="a symbolic value has no truth value"):
        bool(s)
    assert repr(s * s + 1) == "Sym(x*x + 1)"
    assert isinstance(s * s, Sym)


def test_local_vjp_of_an_op_without_a_rule_gives_one_none_per_input():
    """covers core/symbolic/differentiation.py:194: return (None,) * len(node.args).

    A comparison has no vjp (its gradient is 0 everywhere it is defined): local_vjp gives
    None for each of its inputs, x < y two of them; a one-argument op would give one."""
    b = Builder()
    g = b.wrap(b.const(1.0))
    assert local_vjp(parse("x < y").output, g, b) == (None, None)
    assert local_vjp(parse("x != 2").output, g, b) == (None, None)


def test_a_non_holomorphic_function_with_complex_constants_is_refused(cli):
    """covers core/symbolic/differentiation.py:242: raise UnsupportedDiffError (an op that is
    not holomorphic, in an expression with complex constants).

    With a complex constant the variables are complex, and d/dz of abs(z) is no formula of z
    (abs is not holomorphic): diff refuses with the kind "unsupported", naming abs and
    pointing at grad.  A holomorphic one is fine: d/dx (exp(x) + 1j) = exp(x)."""
    r = cli("diff", "abs(x) + 1j", "--json")
    assert r.code == 1, r.out
    err = r.json["error"]
    assert err["kind"] == "unsupported" and err["op"] == "abs"
    assert "abs is not holomorphic" in err["message"] and "use grad" in err["message"]
    r = cli("diff", "exp(x) + 1j", "--json")
    assert r.code == 0 and r.json["derivative"] == "exp(x)", r.out


# ---- command.py: the diff command's library function ----------------------------------------


def test_hessian_texts_and_values_are_none_without_a_hessian():
    """covers core/symbolic/command.py:90 and :96 (return None).

    DiffResult.hessian_texts() is None unless diff() was asked for mixed partials, and
    hessian_values() is None without them or without values; with both, each entry is the
    second partial's value: x**2*y at x = 3, y = 2 has d2/dx2 = 2y = 4, d2/dxdy = 2x = 6,
    d2/dy2 = 0."""
    plain = diff(parse("x**2*y"), values={"x": 3, "y": 2})
    assert plain.hessian_texts() is None and plain.hessian_values() is None
    mixed = diff(parse("x**2*y"), order=2, mixed=True)
    assert mixed.hessian_texts() == {"x": {"x": "2*y", "y": "2*x"}, "y": {"x": "2*x", "y": "0"}}
    assert mixed.hessian_values() is None
    valued = diff(parse("x**2*y"), order=2, mixed=True, values={"x": 3, "y": 2})
    assert valued.hessian_values() == {"x": {"x": 4.0, "y": 6.0}, "y": {"x": 6.0, "y": 0.0}}


def test_a_predicted_size_past_a_trillion_is_written_as_a_power_of_ten(cli):
    """covers core/symbolic/command.py:346: return f"{n:.0e}" (command._about).

    diff refuses a derivative whose growth would carry it past the size budget by the order
    asked for; the predicted size is written with three significant digits and commas, or,
    past a trillion (1e12), as a power of ten ("1e+40", _about's docstring).  x**x**x**x
    grows about six times an order: at order 15 it is on course for some 4e12 nodes (just
    past a trillion), written as the JSON field predicted_nodes formatted with ``.0e``; at
    order 14, some 6.7e11, under a trillion, with commas."""
    r = cli("diff", "x**x**x**x", "--order", "15", "--json")
    assert r.code == 1, r.out
    err = r.json["error"]
    assert err["kind"] == "limit" and 1e12 <= err["predicted_nodes"] < 1e13
    assert (
        f"on course for {float(err['predicted_nodes']):.0e} nodes at order 15" in (err["message"])
    )
    r = cli("diff", "x**x**x**x", "--order", "14", "--json")
    err = r.json["error"]
    assert err["kind"] == "limit" and 2e5 < err["predicted_nodes"] < 1e12
    p = float(f"{err['predicted_nodes']:.3g}")
    assert f"on course for {p:,.0f} nodes at order 14" in err["message"]
