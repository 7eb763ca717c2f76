"""Tests written from the survivors of ``bench/mutate.py`` seeds 257 and 263 (bench/results/
mutate-seed257.json, mutate-seed263.json), untuned seeds measured at 10 mutants a target with every test
before it in.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from the docs
or arithmetic by hand, never from the code under test.
"""

from __future__ import annotations

import numpy as np
import pytest

from autograd_cli.core import codegen
from autograd_cli.core.program import Expr, Program, variables


@pytest.mark.parametrize("step", [1, 2])
def test_torch_code_indexes_a_positive_step_as_a_view(step):
    """kills core/ops/shape.py:260: ... or i.step > 0 for i in index) -> ... or i.step > 1
    for i in index).

    torch has no negative slice steps, so the code gathers those by a list of flat
    positions; any positive step, 1 included, is torch's own slice (a view, its scatter an
    assignment): no list of positions the size of the array is written into the code."""
    x = Expr.var("x")
    part = Expr("getitem", (x,), {"index": (slice(None, None, step),)})
    out = Expr("sum", (Expr("mul", (part, part)),), {"axis": None, "keepdims": False})
    program = Program(source="", output=out, inputs=variables(out))
    code = codegen.generate(program, {"x": np.arange(5.0)}, target="torch").code
    assert f"x[(slice(None, None, {step}), )]" in code, code
    assert "reshape(-1)[" not in code and "index_add_" not in code, code


@pytest.mark.parametrize(
    ("expr", "derivative"),
    [("x/2**62*2**62", "1"), ("x*2**62/2**62", "1"), ("3*x/2**62*2**62", "3")],
)
def test_a_power_of_two_and_its_inverse_cancel_exactly(cli, expr, derivative):
    """kills core/symbolic/numbers.py:26: ... or v.denominator > _BIG: -> ... or
    v.denominator >= _BIG:.

    Exact rationals are kept up to 2**62 in numerator and denominator (numbers.py's _BIG),
    both ends included: 1/2**62 is exact, so x/2**62*2**62 differentiates to 1, not to
    4.611686018427388e+18/4.611686018427388e+18."""
    r = cli("diff", expr, "--wrt", "x", "--json")
    assert r.code == 0, r.out
    assert r.json["derivative"] == derivative


# --- seed 263 (bench/results/mutate-seed263.json), measured after the tests above ---------


def _taylor_refusal(cli, expr: str, x: str) -> str:
    """The reason Taylor mode gives for leaving an order-20 series to repeated
    differentiation, which then runs past a small memory limit (the limit error names it)."""
    r = cli("taylor", expr, "--x", x, "--order", "20", "--max-memory", "100K", "--json")
    assert r.code == 1, r.out
    message = r.json["error"]["message"]
    assert "cannot be used here: " in message, message
    return message.split("cannot be used here: ", 1)[1]


def test_taylor_mode_says_log1p_has_a_nan_derivative_at_nan(cli):
    """kills core/taylor_mode.py:485: _partial(1.0 / base[0], "log1p") -> pass.

    At x = nan, log1p's local derivative 1/(1 + x) is nan: that is the reason given, not
    the singular-point guard's (which only sees a distance of nan)."""
    reason = _taylor_refusal(cli, "log1p(x)", "nan")
    assert reason.startswith("log1p: a local derivative of nan at the point"), reason


@pytest.mark.parametrize(
    ("expr", "x"), [("erfinv(1e12*x)", "0.9999e-12"), ("erfinv(x)", "0.9999999999999999")]
)
def test_taylor_mode_guards_erfinv_near_its_pole(cli, expr, x):
    """kills core/taylor_mode.py:667: _near_singularity(u, 1.0 - abs(u[0]), y[0], "erfinv")
    -> pass.

    erfinv's derivatives grow as m!/rho**m at a distance rho from its poles at +-1 (here
    1e-4 after the argument's factor 1e12, or 1e-16), so the order-20 ones overflow: the
    guard refuses Taylor mode at the rule, before any coefficient is formed, and says why
    ("near a singular point: its derivatives overflow"), rather than a later "derivative 18
    is above 1e+300".  (At 0.5e-12 the series is finite, 1.29e244 at order 20: no refusal.)"""
    reason = _taylor_refusal(cli, expr, x)
    assert reason.startswith("erfinv near a singular point: its derivatives overflow"), reason
