"""Tests written from the survivors of ``bench/mutate.py`` seed 131 (bench/results/
mutate-seed131.json).

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from algebra
by hand or the docs, never from the code under test.

Judged equivalent (bench/mutate_equivalent.txt): rules.py:293 (a selecting partial is
built of comparisons, 0/1 or 0.5, never inf/nan, so all_finite(dd) holds whenever selects
does); batch.py:263 (bsh is read only through len(bsh)); optimize.py:561 (the extra entries
have g == 0, already 0 in the copy pg, which is read only through abs); algebra.py:240
(e.data == 1 already breaks on the line before, _is_num(e, 1) with <= 64 terms).
"""

from __future__ import annotations

import numpy as np
import pytest


def test_minimize_probes_an_unsure_direction_with_unit_slope_far_enough(cli):
    """kills core/optimize.py:486: if lam <= 0 or slope == 0: -> if lam <= 0 or slope == 1:.

    f = x + 0.01*x**2 - x**3 from x = 0 with --gtol 1: f'(0) = 1 <= gtol, so the iteration
    stops at once; the Hessian 0.02 is within sqrt(gtol) = 1 of zero (docs/analyses.md: such
    a point is checked, an inflection is not a minimum), and f is a cubic with a negative
    leading coefficient, unbounded below (f(10) = 10 + 1 - 1000), so 0 is no minimum: by hand,
    "converged": false with "not a minimum: ... inflection".  The probe's step is 100 times
    the distance |g.v| / lambda / 0.1 = 1 / 0.02 / 0.1 (r >= 0.9 here), far enough to see the
    cubic fall; the mutant took that distance as 0 where |g.v| is exactly 1, probed only
    1e-6 away, where the linear term hides the fall, and called 0 a minimum."""
    r = cli("minimize", "x + 0.01*x**2 - x**3", "--x", "0", "--gtol", "1", "--json")
    assert r.code == 1, r.out
    assert r.json["converged"] is False
    assert r.json["message"].startswith("not a minimum:")
    assert "inflection" in r.json["message"]
    assert r.json["x"] == {"x": 0.0}
    assert r.json["grad"] == {"x": 1.0}


def test_past_the_pair_cap_the_columns_take_the_band_coloring():
    """kills core/sparsity.py:325: GREEDY_PAIRS_MAX = 2 * 10**7 -> 3 * 10**7.

    The greedy coloring lists every pair of columns that share a row (P^T P's nonzeros), so
    past GREEDY_PAIRS_MAX pairs (each row's count squared, summed) color_columns does not
    build it and takes the band coloring, j mod w with w the widest row's span.  2,500 rows
    of 100 columns each, r + 200 j (mod 20,000): 2.5e7 pairs, columns read about 12 times
    (no hub), each row 19,801 wide (row 0 reads 0, 200, ..., 19,800; the others wrap round to
    the same span), so the band takes 19,801 colors where the greedy coloring would take at
    most about 1,200 (a column meets about 12 * 99 others)."""
    sp = pytest.importorskip("scipy.sparse")
    from autograd_cli.core.sparsity import (
        GREEDY_MAX,
        color_columns,
        structurally_orthogonal,
    )

    n, m, per = 20_000, 2_500, 100
    assert n <= GREEDY_MAX
    rows = np.repeat(np.arange(m), per)
    cols = (rows + 200 * np.tile(np.arange(per), m)) % n
    pattern = sp.csr_matrix((np.ones(rows.size, dtype=bool), (rows, cols)), shape=(m, n))
    assert 2 * 10**7 < m * per * per <= 3 * 10**7
    colors, k = color_columns(pattern)
    assert k == 19_801
    assert structurally_orthogonal(pattern, colors)
