"""Tests written from the survivors of ``bench/mutate.py`` seed 89 in the core modules (ops,
symbolic, Taylor mode, uncertainty): each pins a behaviour one surviving mutant changed."""

from __future__ import annotations

import math

import pytest
from taylor_defers import defers_to_engine

from autograd_cli.core.errors import InputError
from autograd_cli.core.program import Expr
from autograd_cli.core.symbolic import Builder, local_vjp
from autograd_cli.core.symbolic.command import diff
from autograd_cli.core.taylor import _repeated
from autograd_cli.core.taylor_mode import NoTaylorMode, taylor_coefficients
from autograd_cli.core.uncertainty import propagate
from autograd_cli.grammar import parse


def _nan(v) -> bool:
    """A JSON number that is nan (written "nan" by --json)."""
    return isinstance(v, str) and v == "nan" or isinstance(v, float) and math.isnan(v)


# ---- ops: a power's partial on host arrays is pow's own forward -----------------------------


def test_the_gradient_of_a_square_root_power_at_minus_infinity_is_nan(cli):
    # kills core/ops/rules.py:92: if isinstance(a, _ARRAYS) or ... -> if not (...)
    # d(x**0.5)/dx = 0.5 * x**-0.5: on host arrays (backward without create_graph) the rule's
    # power must be pow's forward, whose exponent -0.5 is PyTorch's rsqrt: (-inf)**-0.5 is
    # nan there (as (-inf)**0.5 is nan), where NumPy's ``**`` gives C's +0 (a gradient of 0).
    # PyTorch: torch.tensor(-inf, requires_grad=True)**0.5 has gradient nan.
    r = cli("grad", "x**0.5", "--x", "-inf", "--json")
    assert r.code == 0, r.out
    assert _nan(r.json["value"]), r.json
    assert _nan(r.json["grad"]["x"]), r.json


# ---- norm: the max/min matrix norms of an empty matrix --------------------------------------


@pytest.mark.parametrize(
    "order, value",
    [("1", "[[]]"), ("-1", "[[]]"), ("inf", "[[]]"), ("-inf", "[[], []]")],
)
def test_the_max_and_min_matrix_norms_of_an_empty_matrix_say_they_have_no_value(cli, order, value):
    # kills core/ops/reductions.py:418: _nonempty(a, axes, _ord_text(ord)) -> pass
    # ord=+-1 is the largest (smallest) column sum, ord=+-inf the largest (smallest) row sum:
    # a matrix with no elements has none to pick.  Without the check, ord=+-1 of a 1x0 matrix
    # surfaced NumPy's "zero-size array to reduction operation", and ord=+-inf, whose row sums
    # (over no columns) are 0, gave the number 0
    r = cli("eval", f"norm(x, ord={order})", "--x", value, "--json")
    assert r.code == 1, r.out
    error = r.json["error"]
    assert error["kind"] == "shape", error
    assert f"norm(x, ord={order}) of an empty array has no value" in error["message"], error
    assert "zero-size" not in error["message"], error


# ---- symbolic: a complex constant with a real part ------------------------------------------


def test_a_complex_constant_given_as_one_number_keeps_its_real_part_in_diff():
    # kills core/symbolic/algebra.py:169: self.const(complex(0.0, z.imag)) -> complex(1.0, ...)
    # An Expr given to diff directly may hold a complex constant with both parts (the
    # language writes 2+3j as a sum of 2 and 3j): d/dx (x * (2+3j)) = 2+3j, printed as the
    # language's sum "3j + 2" (the mutant added 1 to the real part)
    e = Expr("mul", (Expr.var("x"), Expr.const(complex(2.0, 3.0))))
    r = diff(e, "x", values={"x": 1.0})
    assert r.texts() == {"x": "3j + 2"}
    assert r.derivatives["x"].value == complex(2.0, 3.0)
    # and the printed derivative parses back to the same number
    printed = parse(r.texts()["x"]).output
    assert diff(Expr("mul", (Expr.var("x"), printed)), "x").texts() == {"x": "3j + 2"}


# ---- symbolic: a reshape of a scalar is the scalar itself -----------------------------------


@pytest.mark.parametrize("text", ["sum(x)", "mean(x)", "reshape(x, [1])"])
def test_a_rules_reshape_of_a_symbolic_scalar_to_a_scalar_is_the_identity(text):
    # kills core/symbolic/differentiation.py:88: if shape == (): -> if shape != ():
    # The symbolic values are scalars (shape ()): the rules' reshape (and broadcast_to,
    # sum_to) to shape () leaves them as they are, so the op table's vjp of sum, mean or
    # reshape of a scalar x, written down by local_vjp, is the cotangent itself: d/dx = 1
    # (the mutant refused it as an array op, UnsupportedDiffError)
    b = Builder()
    (g,) = local_vjp(parse(text).output, b.wrap(b.const(1.0)), b)
    assert g.op == "const" and g.value == 1.0, g


# ---- Taylor mode: the growth of a series counts its derivative of order 170 ----------------


def test_taylor_mode_guards_a_series_whose_only_derivative_is_of_order_170():
    # kills core/taylor_mode.py:201: min(len(u), _GUARDED_ORDER + 1) -> _GUARDED_ORDER - 1
    # log(1 + (x/8)**170) at 0, order 170: its argument's only nonzero derivative is the
    # 170th (170! / 8**170), and log's 170th derivative at distance 1 from its pole is
    # 169! ~ 4e304, past 1e300: Taylor mode defers to the engine ("near a singular point").
    # The mutant's growth stopped at order 168, saw none, and took the argument for a constant
    text = "log(1 + (x/8)**170)"
    with pytest.raises(NoTaylorMode, match="log near a singular point"):
        taylor_coefficients(parse(text), {"x": 0.0}, "x", 170)
    # one order less, the argument has no derivative at all: Taylor mode, all zeros
    c = taylor_coefficients(parse(text), {"x": 0.0}, "x", 169)
    assert c == [0.0] * 170


# ---- Taylor mode: log2's local derivative above 1e300 ---------------------------------------


def test_taylor_mode_defers_log2_where_its_local_derivative_is_above_the_limit(cli):
    # kills core/taylor_mode.py:467: _partial(1.0 / (u0 * scale), ...) -> 0.0 / (u0 * scale)
    # log2(x/4) at x = 4.8e-300: u = 1.2e-300, log2's partial 1/(u ln 2) = 1.2e300 is past
    # 1e300 (the module's "a local partial derivative above 1e300"), though the coefficient
    # 0.25 * 1.2e300 = 3e299 is not, and log's own singularity guard (at distance 1.2e-300)
    # passes at order 1.  Taylor mode defers, and taylor gives the engine's number bit for
    # bit: 3.0056146685186738e+299 (Taylor mode's 0.25/u/ln 2 rounds to ...674e+299)
    defers_to_engine("log2(x/4)", 4.8e-300, 1, "log2: a local derivative of", cli)


# ---- Taylor mode: acosh near 1 --------------------------------------------------------------


def test_taylor_mode_defers_acosh_near_its_branch_point_at_one(cli):
    # kills core/taylor_mode.py:599: abs(u[0]) - 1.0 -> abs(u[0]) + 1.0
    # acosh(1 + 1e60*x) at 4.44e-76: the argument is 1 + 4.4e-16, 4.4e-16 from acosh's
    # branch point at 1, and moves at 1e60 a unit: its derivatives up to order 4, which the
    # engine's graphs compute, are about 4!/(4.4e-16)**4 * 1e240, past 1e300.  Taylor mode
    # defers (the mutant measured the distance from -1, 2, and went on), and taylor gives
    # the engine's repeated differentiation bit for bit (its 3.355443199999999e+67, where
    # Taylor mode's recurrence gives 3.3554432e+67)
    x0 = 4.440892098500626e-76
    assert 1.0 + 1e60 * x0 == 1.0 + 2.0**-51  # two floats above 1
    defers_to_engine("acosh(1 + 1e60*x)", x0, 4, "acosh near a singular point", cli)


# ---- Taylor mode: atanh's series ------------------------------------------------------------


def test_taylor_mode_gives_atanhs_series(cli):
    # kills core/taylor_mode.py:614: _quotient(..., 1.0 / q[0], n) -> 0.0 / q[0]
    # atanh at 1/2 (SymPy's series): atanh(1/2) + 4/3 h + 8/9 h**2 + 112/81 h**3 + 160/81 h**4;
    # d = 1/(1 - u*u) starts at 1/(1 - 1/4) = 4/3 (the mutant's 0 made every term wrong)
    want = [math.atanh(0.5), 4 / 3, 8 / 9, 112 / 81, 160 / 81]
    c = taylor_coefficients(parse("atanh(x)"), {"x": 0.5}, "x", 4)
    assert c == pytest.approx(want, rel=1e-14, abs=0)
    r = cli("taylor", "atanh(x)", "--x", "0.5", "--order", "4", "--json")
    assert r.code == 0, r.out
    assert r.json["coefficients"] == pytest.approx(want, rel=1e-14, abs=0)
    # and the engine's repeated differentiation says the same
    assert _repeated(parse("atanh(x)"), {"x": 0.5}, "x", 4) == pytest.approx(want, rel=1e-14)


# ---- propagate: an uncertainty for a name that is not a variable ----------------------------


def test_an_uncertainty_for_a_name_that_is_not_a_variable_is_an_input_error():
    # kills core/uncertainty.py:108: variable=unknown[0] -> unknown[1]
    # one such name: an InputError that names it (detail "variable": "y"), where the mutant
    # raised IndexError (reported as an internal error)
    with pytest.raises(InputError, match="an uncertainty is given for 'y'") as info:
        propagate(parse("x + 1"), {"x": 1.0}, {"x": 0.1, "y": 0.5})
    assert info.value.details == {"variable": "y"}
    # two: the first in name order
    with pytest.raises(InputError) as info:
        propagate(parse("x + 1"), {"x": 1.0}, {"x": 0.1, "z": 0.5, "y": 0.5})
    assert info.value.details == {"variable": "y"}
