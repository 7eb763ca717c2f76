"""Tests written from the survivors of ``bench/mutate.py`` seed 173 (bench/results/
mutate-seed173.json), an untuned seed measured after seed 167's tests went in; the Dask
engine's survivor is in test_mutants_seed173_dask.py.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from
arithmetic by hand or the docs, never from the code under test.

Judged equivalent as measured: symbolic/command.py:326 ``growth <= 0`` (diff refuses a
derivative past its budget before predicting, so a growth of at most 1 never predicts past
twice the budget).  That rule now lives in ``limits.growth_past``, shared with repeated
differentiation's memory check, where it is observable: tests/test_repeated_growth.py
checks that a graph that stops growing is not refused.
"""

from __future__ import annotations

import pytest

from autograd_cli.core.optimize import classify
from autograd_cli.core.taylor_mode import NoTaylorMode, taylor_coefficients
from autograd_cli.grammar import parse


def test_diff_expands_a_power_of_a_short_sum_up_to_the_eighth(cli):
    """kills core/symbolic/algebra.py:240: 1 < e.data <= EXPAND_MAX_POWER -> < ....

    docs/commands.md: a power of a sum of at most 3 terms is expanded where the exponent is
    2 to 8.  d/dx x(x+1)**8 = (x+1)**8 + 8x(x+1)**7; by the binomial theorem its
    coefficients from x**8 down are 1+8, 8+56, 28+168, 56+280, 70+280, 56+168, 28+56, 8+8,
    1.  The ninth power keeps its factor.  The mutant stopped at the seventh."""
    r = cli("diff", "x*(x+1)**8", "--wrt", "x", "--json")
    assert r.json["derivative"] == (
        "9*x**8 + 64*x**7 + 196*x**6 + 336*x**5 + 350*x**4 + 224*x**3 + 84*x**2 + 16*x + 1"
    )
    r = cli("diff", "x*(x+1)**9", "--wrt", "x", "--json")
    assert r.json["derivative"] == "9*x*(x + 1)**8 + (x + 1)**9"


def test_atan2_whose_sum_of_squares_overflows_the_engine_defers_to_it(cli):
    """kills core/taylor_mode.py:759: _products_fit(squares, "atan2") -> pass.

    atan2(1e200 + x, x) at x = 1: the engine divides by x*x + y*y, whose derivative
    2(1e200 + 1) + 2 is 2e200, and its second-order graph multiplies two of them (4e400:
    inf), so Taylor mode, which would not overflow, defers to the engine's numbers: c1 =
    (x - y)/(x*x + y*y) is a finite number over inf, +0.0.  The mutant's Taylor mode gave
    -0.0."""
    with pytest.raises(NoTaylorMode, match="atan2: products of derivatives overflow"):
        taylor_coefficients(parse("atan2(1e200 + x, x)"), {"x": 1.0}, "x", 2)
    r = cli("taylor", "atan2(1e200 + x, x)", "--x", "1", "--order", "2", "--json")
    c1 = r.json["coefficients"][1]
    assert c1 == 0.0 and str(c1) == "0.0"


def test_a_saddle_whose_positive_curvatures_are_below_one_is_a_saddle(cli):
    """kills core/optimize.py:965: all(v < 0 ...) -> all(v < 1 ...).

    x**2/4 - y**2 at 0: the Hessian is diag(1/2, -2), one curvature of each sign, a saddle.
    The mutant called every point whose curvatures are all below 1 a maximum."""
    assert classify([-2.0, 0.5]) == "saddle"
    r = cli("critical", "x**2/4 - y**2", "--x", "1", "--y", "1", "--json")
    assert r.json["kind"] == "saddle" and r.json["eigenvalues"] == [-2.0, 0.5]
