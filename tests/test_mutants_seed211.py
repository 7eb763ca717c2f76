"""Tests written from the survivors of ``bench/mutate.py`` seed 211 (bench/results/
mutate-seed211.json), an untuned seed measured after seed 199 with every test before it in.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from the docs
or arithmetic by hand, never from the code under test.

Judged equivalent (bench/mutate_equivalent.txt): taylor_mode.py:221 (min of two ints is
symmetric), taylor_mode.py:515 (a reversed slice's start clamps), dask_parts.py:107 (every
Done's count is set before it is returned).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from autograd_cli.core import optimize
from autograd_cli.core.taylor_mode import NoTaylorMode, taylor_coefficients
from autograd_cli.grammar import parse


@pytest.mark.parametrize("other", ["[1e400, 1]", "[nan, 1]"])
def test_dots_zero_cotangent_stays_zero_against_an_infinite_operand(cli, other):
    """kills core/ops/products.py:34: chain(g, n.inputs[1]) -> chain(n.inputs[1], g).

    docs/language.md: `where` never lets the untaken branch's inf/nan into the gradient, a
    cotangent that is exactly zero staying zero even against an infinite local derivative.
    where(c > 0, dot(a, b), 0) at c = -1 sends dot a zero cotangent: a's gradient is 0 * b,
    mended to [0, 0] where b holds inf or nan (the zero is the cotangent, so chain's first
    argument).  The mutant passed b as the cotangent: 1e400 * 0 stayed nan.  b's gradient, 0
    * a with a finite, is [0, 0] both ways; the same with the operands' roles swapped."""
    r = cli(
        "grad", "where(c > 0, dot(a, b), 0)", "--a", "[1, 2]", "--b", other, "--c", "-1", "--json"
    )
    assert r.code == 0 and r.json["value"] == 0.0
    assert r.json["grad"] == {"c": 0.0, "a": [0.0, 0.0], "b": [0.0, 0.0]}
    r = cli(
        "grad", "where(c > 0, dot(b, a), 0)", "--a", "[1, 2]", "--b", other, "--c", "-1", "--json"
    )
    assert r.code == 0 and r.json["grad"] == {"c": 0.0, "b": [0.0, 0.0], "a": [0.0, 0.0]}


def test_taylor_mode_checks_the_derivative_of_order_170():
    """kills core/taylor_mode.py:945: if ck and k <= 170 and ... -> k < 170.

    Taylor mode defers to the engine where a derivative |c_k| k! passes 1e300, up to order
    170 (past it k! is not a float).  exp(59*x) at 0: its k-th derivative is 59**k, which
    is 10**299.27 at k = 169 (under) and 10**301.04 at k = 170 (over; 170 log10(59) =
    301.04 by hand), so order 169 is answered and order 170 refused by that check.  The
    mutant stopped checking at 169 and answered order 170."""
    program = parse("exp(59*x)")
    c = taylor_coefficients(program, {"x": 0.0}, "x", 169)
    assert c[169] == pytest.approx(59.0**169 / math.factorial(169), rel=1e-12)
    with pytest.raises(NoTaylorMode, match="^exp: derivative 170 is above 1e\\+300"):
        taylor_coefficients(program, {"x": 0.0}, "x", 170)


def test_the_rounding_noise_is_sampled_at_16_points():
    """kills core/optimize.py:468: for j in range(-8, 9) -> range(-9, 9).

    _rounding_noise's documented sample: f and the value at 16 points, j * hop for j = -8
    .. 8 but 0.  (x < -8.5) is 0 at every one of them from theta = 0 with hop = 1, so the
    spread is 0; at -9, a 17th point the mutant took, it is 1."""
    flat = optimize._variables(parse("x < -8.5"), {"x": 0.0}, None)
    theta = np.array([0.0])
    assert optimize._rounding_noise(flat, theta, 0.0, np.array([1.0]), None) == 0.0
    # and every one of the 16 is taken: a step at -7.5 is seen
    flat = optimize._variables(parse("x < -7.5"), {"x": 0.0}, None)
    assert optimize._rounding_noise(flat, theta, 0.0, np.array([1.0]), None) == 1.0
