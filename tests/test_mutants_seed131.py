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
