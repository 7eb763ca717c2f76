"""Tests written from the survivors of ``bench/mutate.py`` seed 199 (bench/results/
mutate-seed199.json), an untuned seed measured after seed 197 with every test before it in.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from the docs
or arithmetic by hand, never from the code under test.

Judged equivalent (bench/mutate_equivalent.txt): taylor_mode.py:253 (at x = +-0 both
distances are a zero, which the singularity check refuses either way) and limits.py:185 (min
of a finite or infinite prediction and 2**63 - 1 is symmetric; the prediction is never nan).
The third unlisted survivor was an equivalence already listed for seed 197 (sparsity.py:452).
"""

from __future__ import annotations

import pytest

from autograd_cli.core.taylor_mode import NoTaylorMode, taylor_coefficients
from autograd_cli.grammar import parse


def test_a_variable_power_of_a_live_base_defers_where_the_engine_would_overflow():
    """kills core/taylor_mode.py:447: _near_singularity(a, a0, y0, "pow") -> pass (the
    variable exponent's branch, a base that depends on the variable).

    x**x at 0.5: the base's distance from pow's singular point (a zero base) is 0.5, so the
    m-th derivatives are about m! / 0.5**m, and the engine's graphs for order k hold up to
    k! 2**k: ln(146!) + 146 ln 2 = 686.2 is under ln(1e300) = 690.8 and ln(147!) + 147 ln 2
    = 691.9 is over it (by hand, math.lgamma).  Taylor mode gives the series at order 146
    and defers to the engine at 147; the mutant skipped the check and answered at 147
    (the base's own series is 0.5, 1, 0, ...: no other guard sees the growth)."""
    program = parse("x**x")
    assert len(taylor_coefficients(program, {"x": 0.5}, "x", 146)) == 147
    with pytest.raises(NoTaylorMode, match="^pow near a singular point"):
        taylor_coefficients(program, {"x": 0.5}, "x", 147)
