"""Tests written from the survivors of a hunting run, ``bench/mutate.py --target batch --target
limits --target taylor_mode --target uncertainty --sample 15 --seed 1013``: a seed chosen to
find gaps, not one of the untuned seeds that measure the net.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from
arithmetic by hand or another path of the tool, never from the code under test.

Judged equivalent (bench/mutate_equivalent.txt): taylor_mode.py:341 (x**1's series handed on
as the argument's own list: nothing writes to it after), taylor_mode.py:585 (asin's local
derivative check cannot fire on a float64 point), taylor_mode.py:734 (a float sum in the other
order).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import erfcx

from autograd_cli.core import limits
from autograd_cli.core.batch import evaluate_batch
from autograd_cli.core.errors import LimitError
from autograd_cli.core.taylor_mode import LIMIT, NoTaylorMode, taylor_coefficients
from autograd_cli.grammar import parse


def test_a_constant_vector_times_a_batch_of_matrices_is_sized_before_it_is_made():
    """kills core/batch.py:304: sa[:-1] + (1, sa[-1]) -> sa[:1] + (1, sa[-1]) (ra == 1).

    [1, 2] @ A over 3 rows of 2 x 10 matrices: a constant vector (no batch axis) promoted to
    a 1 x 2 row, so each row's result has 10 numbers, 30 in all: 240 bytes, over a limit of
    200 and under one of 240 (limits are checked before allocating).  The mutant promoted
    the unbatched (2,) to (2, 1, 2), whose leading 2 does not broadcast with the 3 rows: the
    size rule said 0 and the check let it through."""
    program = parse("sum([1, 2] @ A)")
    columns = {"A": np.ones((3, 2, 10))}
    with limits.using(200), pytest.raises(LimitError) as e:
        evaluate_batch(program, columns, 3)
    assert "240 bytes (30 numbers)" in str(e.value)
    with limits.using(240):
        assert evaluate_batch(program, columns, 3).value.tolist() == [30.0, 30.0, 30.0]


def test_the_products_of_erfcx_derivatives_are_guarded_like_its_arguments():
    """kills core/taylor_mode.py:644: @_rule("erfcx", multiplies_out=True) -> False.

    erfcx's derivative multiplies its own value (y' = (2 u y - 2/sqrt(pi)) u'), so the
    engine's second-order graph multiplies the output's derivatives, and Taylor mode is used
    only where their products fit its LIMIT (1e300).  erfcx(c x - 5) at 0 with c = 1e140:
    y = erfcx(-5) = 1.44e11, y' = c (2 (-5) y - 2/sqrt(pi)) = -1.44e152, whose square 2.1e304
    is past LIMIT though each coefficient (y'' / 2 = 7.3e292) is not: not Taylor mode (the
    engine's path answers instead).  The argument c x - 5 (growth c, 1e280 at order 2) fits,
    so only the output's own check sees it; the mutant dropped that check."""
    c = 1e140
    y = float(erfcx(-5.0))
    y1 = c * (2 * -5.0 * y - 2 / math.sqrt(math.pi))
    assert y1 * y1 > LIMIT and c * c < LIMIT
    with pytest.raises(NoTaylorMode, match="erfcx: products of derivatives overflow"):
        taylor_coefficients(parse(f"erfcx({c!r}*x - 5)"), {"x": 0.0}, "x", 2)
    # a thousand times smaller c, y'**2 = 2.1e304 * 1e-6 fits: Taylor mode, y' by hand
    got = taylor_coefficients(parse(f"erfcx({c / 1000!r}*x - 5)"), {"x": 0.0}, "x", 2)
    assert got[:2] == pytest.approx([y, y1 / 1000], rel=1e-13)
