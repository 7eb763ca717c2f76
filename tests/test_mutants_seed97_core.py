"""Tests written from the survivors of ``bench/mutate.py`` seed 97 in the core modules (the op
table, Taylor mode, uncertainty): each pins a behaviour one surviving mutant changed."""

from __future__ import annotations

import pytest
from taylor_defers import defers_to_engine

from autograd_cli.core.errors import InputError
from autograd_cli.core.uncertainty import propagate
from autograd_cli.grammar import parse

EPS = 2.220446049250313e-16  # 2**-52


# ---- the op table: how many arguments a function takes, in its arity error ------------------


@pytest.mark.parametrize(
    "expr, takes",
    [("exp(x, x)", "exp() takes 1 argument, got 2"), ("sum(x, 0, 1)", "sum() takes 1 or 2")],
)
def test_an_arity_error_says_a_unary_function_takes_one_argument(cli, expr, takes):
    # kills core/ops/table.py:525: 1 if self.name != "reshape" else 2 -> == "reshape"
    # reshape has its own rule (its Params); every other unary function or reduction takes
    # one argument (a reduction one or two): the mutant said 2 for all of them
    r = cli("eval", expr, "--x", "1", "--json")
    assert r.code == 2, r.out
    error = r.json["error"]
    assert error["kind"] == "arity", error
    assert error["message"].startswith(takes), error
    if expr.startswith("exp"):
        assert error["message"] == takes, error


# ---- Taylor mode: gamma near a pole defers to the engine ------------------------------------


def test_taylor_mode_defers_gamma_near_its_pole_to_the_engine(cli):
    # kills core/taylor_mode.py:716: _near_singularity(..., r.out0, "gamma") -> pass
    # gamma(1e-100 + x**2) at 0: gamma is 1e100 there, 1e-100 from its pole at 0, so the
    # engine's second-order graph multiplies numbers of about gamma * 2!/rho**2 = 2e300:
    # gamma's guard (scaled by gamma's value; lgamma's own, scaled by 1, passes) makes Taylor
    # mode defer, and taylor gives the engine's numbers bit for bit, its first coefficient
    # -0.0 (d/dx at 0 is gamma'(u) * 2x, a negative times +0), where Taylor mode's is 0.0
    engine = defers_to_engine("gamma(1e-100 + x**2)", 0.0, 2, "gamma near a singular point", cli)
    assert engine == ["1e+100", "-0.0", "-1e+200"]


# ---- Taylor mode: the Bessel functions within 2**-52 of 0 -----------------------------------


@pytest.mark.parametrize("x0", [EPS, -EPS])
def test_taylor_mode_defers_j1_at_machine_epsilon_where_the_engine_takes_its_limit(cli, x0):
    # kills core/taylor_mode.py:803: if not abs(u[0]) > 2.22e-16 -> >= 2.22e-16
    # At |x| == 2**-52 the engine's derivatives of j1 are its limits at 0 (j1'' = 0 there);
    # Taylor mode defers, and taylor gives the engine's numbers.  The mutant ran Taylor mode
    # at exactly that point: j1's coefficient 2 of -+4.16e-17, where the engine's is 0.0
    engine = defers_to_engine("j1(x)", x0, 3, "j1 at 0", cli)
    assert engine[1:] == ["0.5", "0.0", "0.0"]


# ---- Taylor mode: a hard poison passes through the ops above it -----------------------------


@pytest.mark.parametrize(
    "text, x0, why",
    [
        ("sign(2*polygamma(1, x))", 1e-80, "polygamma near a singular point"),
        ("sign(-log(x))", 1e-100, "log near a singular point"),
    ],
)
def test_a_hard_poison_is_not_absorbed_by_sign_through_an_op_between(text, x0, why):
    # kills core/taylor_mode.py:909: return Jet(out, poison=a.poison, hard=True) -> hard=False
    # polygamma(1, x) at 1e-80 and log(x) at 1e-100 are hard poisons (the engine's derivative
    # graphs overflow).  The op above them (2*..., -...) must stay hard, so that sign's zero
    # partial does not absorb it: Taylor mode defers, and taylor gives the engine's numbers,
    # its -0.0 (0 times a negative partial), where Taylor mode's own constant gives 0.0
    engine = defers_to_engine(text, x0, 3, why)
    assert engine[1] == "-0.0", engine


# ---- uncertainty: a negative standard uncertainty is refused --------------------------------


@pytest.mark.parametrize(
    "expr, value, u", [("2*x", 1.0, -0.1), ("sum(x)", [1.0, 2.0], [0.1, -0.2])]
)
def test_propagate_refuses_a_negative_standard_uncertainty(expr, value, u):
    # kills core/uncertainty.py:200: raise InputError("... cannot be negative ...") -> pass
    # the mutant squared it into the covariance and went on as if it were +0.1
    with pytest.raises(InputError, match=r"a standard uncertainty cannot be negative \('x'\)"):
        propagate(parse(expr), {"x": value}, {"x": u})


@pytest.mark.parametrize("expr, given", [("2*x", "1+--0.1"), ("sum(x)", "[1,2]+-[0.1,-0.2]")])
def test_the_propagate_command_refuses_a_negative_standard_uncertainty(cli, expr, given):
    # kills core/uncertainty.py:200 through the CLI, which hands the number on as given
    r = cli("propagate", expr, "--x", given, "--json")
    assert r.code == 2, r.out
    error = r.json["error"]
    assert error["kind"] == "input", error
    assert error["message"] == "a standard uncertainty cannot be negative ('x')", error
