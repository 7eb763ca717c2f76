"""Tests written from the survivors of ``bench/mutate.py`` seed 227 (bench/results/
mutate-seed227.json), an untuned seed measured after seed 223 at the tool's default sample
(40 mutants a target) with every test before it in.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from the docs,
PyTorch or arithmetic by hand, never from the code under test.

Killed elsewhere: core/batch.py:305 (a batched A @ v's size rule on the promoted vector,
tests/test_batch_guards.py) and the Dask engine's two (test_mutants_seed227_dask.py).  Judged
equivalent (bench/mutate_equivalent.txt, each with its reason): 18 new ones, among them a
division that is exact either way, a generator consumed once, a fast path switched off (the
same lines), defaults never read, a Cauchy product's operands swapped.  One real survivor is
left, core/optimize.py:444 (the probes' slack of 64 ulps made 65): it changes the answer
only for x**3 + c with c in a band about 1862 to 1891, where the fall along the probe is
within one ulp-step of that slack; a test would pin the constant, not a behaviour.
"""

from __future__ import annotations

import pytest

NOT_DIFFERENTIABLE = "is not differentiable where its extreme column sums tie"


def test_norm_ord_minus_1_warns_where_its_smallest_column_sums_tie(cli):
    """kills core/ops/reductions.py:629: ord in (1, -1) -> ord in (1, -0).

    norm(A, ord=-1) is the smallest column sum of |A|, as ord=1 is the largest; where two
    column sums tie it is not differentiable and says so.  [[1, 1], [2, 2]]: both columns sum
    to 3 (a tie: the warning, the gradient split evenly, 0.5 each, as PyTorch); its row sums
    (2 and 4) do not tie and neither is 3, so the mutant, which summed the rows for ord=-1,
    found nothing to warn of.  [[1, 2], [3, 4]] (column sums 4 and 6): no warning."""
    r = cli("grad", "norm(A, ord=-1)", "--A", "[[1, 1], [2, 2]]", "--json")
    assert r.code == 0 and r.json["value"] == 3.0, r.out
    assert r.json["grad"]["A"] == [[0.5, 0.5], [0.5, 0.5]]
    assert any(NOT_DIFFERENTIABLE in w for w in r.json.get("warnings", [])), r.json
    r = cli("grad", "norm(A, ord=-1)", "--A", "[[1, 2], [3, 4]]", "--json")
    assert r.code == 0 and r.json["value"] == 4.0, r.out
    assert r.json["grad"]["A"] == [[1.0, 0.0], [1.0, 0.0]] and "warnings" not in r.json


def test_norms_gradient_keeps_the_zero_cotangent_promise_both_ways(cli):
    """kills core/ops/reductions.py:549: chain(expand_back(g, ...), d) -> chain(d, expand_back(g, ...)).

    docs/language.md: an exactly-zero cotangent stays zero even where the local derivative is
    inf or nan; the reverse is not promised.  0*norm(x) at x = [inf, 1]: norm's cotangent is
    exactly 0 and its partials are [inf/inf, 1/inf] = [nan, 0]: the gradient is [0, 0] (the
    value is 0*inf = nan).  sqrt(norm(x)) at x = [0, 0]: the cotangent is sqrt'(0) = inf and
    norm's partials at 0 are 0 (its subgradient): inf*0 = nan, as PyTorch gives
    (torch.sqrt(torch.linalg.vector_norm(x)).backward() -> [nan, nan]).  The mutant swapped
    the roles: nan for the first, 0 for the second."""
    r = cli("grad", "0*norm(x)", "--x", "[inf, 1]", "--json")
    assert r.code == 0 and r.json["value"] == "nan", r.out
    assert r.json["grad"]["x"] == [0.0, 0.0]
    r = cli("grad", "sqrt(norm(x))", "--x", "[0, 0]", "--json")
    assert r.code == 0 and r.json["value"] == 0.0, r.out
    assert r.json["grad"]["x"] == ["nan", "nan"]


def test_diffs_exact_folding_falls_back_to_float64_past_2_to_the_62(cli):
    """kills core/symbolic/numbers.py:19: _BIG = 1 << 62 -> _BIG = 1 << 63.

    docs/commands.md: diff folds constants with exact fractions, and a numerator or
    denominator past 2**62 falls back to float64.  2147483648*4294967296 is 2**63 and
    4294967297*2147483647 is 2**63 - 2**31 - 1: both past 2**62, so both are doubles, the
    second rounded to 2**63 - 2**31 (doubles there are 1024 apart), and the difference is
    2**31 = 2147483648.  The mutant kept both exact (up to 2**63) and printed 2147483649."""
    r = cli("diff", "(2147483648*4294967296 - 4294967297*2147483647)*x", "--json")
    assert r.code == 0 and r.json["derivative"] == "2147483648", r.out


def test_diff_orders_terms_by_the_first_40_characters_of_their_text(cli):
    """kills core/symbolic/terms.py:23: _LABEL_MAX = 40 -> _LABEL_MAX = 41.

    docs/commands.md: the terms of a printed sum are ordered by their text's first 40
    characters, then as the differentiator built them.  Two names that differ in their 40th
    character print alphabetically whichever way the sum was written; two that agree in
    their first 40 and differ after keep the built order, so the two ways of writing the
    sum print in opposite orders (the mutant compared 41 characters and sorted them)."""
    for common in (39, 40):
        b, z = "a" * common + "b", "a" * common + "z"
        one = cli("diff", f"y*{z} + y*{b}", "--wrt", "y", "--json")
        other = cli("diff", f"y*{b} + y*{z}", "--wrt", "y", "--json")
        assert one.code == 0 and other.code == 0, (one.out, other.out)
        printed = {one.json["derivative"], other.json["derivative"]}
        if common == 39:
            assert printed == {f"{b} + {z}"}
        else:
            assert printed == {f"{b} + {z}", f"{z} + {b}"}


def test_log1p_defers_to_the_engine_where_its_derivatives_would_overflow():
    """kills core/taylor_mode.py:486: _near_singularity(u, abs(base[0]), ...) -> abs(base[1]).

    log1p(x) at -0.5 is 0.5 from its singular point -1: its m-th derivatives are about
    m! / 0.5**m, and ln(146!) + 146 ln 2 = 686.2 is under ln(1e300) = 690.8 while ln(147!) +
    147 ln 2 = 691.9 is over it (math.lgamma, by hand), as for atanh at 0.5.  Taylor mode
    answers at order 146 and defers to the engine at 147; the mutant measured the distance
    as |x'| = 1 and answered at 147 too (its own coefficients still fit: (k-1)! 2**k)."""
    from autograd_cli.core.taylor_mode import NoTaylorMode, taylor_coefficients
    from autograd_cli.grammar import parse

    program = parse("log1p(x)")
    coefficients = taylor_coefficients(program, {"x": -0.5}, "x", 146)
    assert len(coefficients) == 147
    assert coefficients[1] == 2.0 and coefficients[2] == -2.0  # 1/(1+x), -1/(2 (1+x)**2)
    with pytest.raises(NoTaylorMode, match="^log1p near a singular point"):
        taylor_coefficients(program, {"x": -0.5}, "x", 147)


def test_taylor_mode_says_why_an_argument_has_no_series():
    """kills core/taylor_mode.py:152: raise _Poisoned(jet.poison or "no series", ...) ->
    jet.poison and "no series".

    sqrt(x) at 0 has no Taylor series (sqrt'(0) is infinite): Taylor mode stops with the
    reason "sqrt of zero", and an op applied to it (exp, sin, log1p) hands that reason on,
    so the fallback to repeated differentiation says why; the mutant replaced it by "no
    series"."""
    from autograd_cli.core.taylor_mode import NoTaylorMode, taylor_coefficients
    from autograd_cli.grammar import parse

    for expr in ("sqrt(x)", "exp(sqrt(x))", "2*sin(sqrt(x))", "log1p(sqrt(x))"):
        with pytest.raises(NoTaylorMode, match="^sqrt of zero$"):
            taylor_coefficients(parse(expr), {"x": 0.0}, "x", 3)


def test_propagate_warns_only_where_the_second_order_term_exceeds_1_percent(cli):
    """kills core/uncertainty.py:96: var2 > 0.01 * var1 -> var2 >= 0.01 * var1.

    docs/analyses.md: a warning says when the second-order variance term exceeds 1 % of the
    first-order variance.  10*x + x*y at x = y = 0, each +-1: the gradient is (10, 0), so the
    first-order variance is 100; the Hessian is [[0, 1], [1, 0]], so 1/2 tr(H S H S) = 1:
    exactly 1 %, which does not exceed it (no warning; the mutant warned).  With 1.01*x*y the
    term is 1.0201: over 1 %, the warning."""
    r = cli("propagate", "10*x + x*y", "--x", "0+-1", "--y", "0+-1", "--json")
    assert r.code == 0 and r.json["uncertainty"] == 10.0 and r.json["second_order"] == 1.0
    assert "warnings" not in r.json, r.json
    r = cli("propagate", "10*x + 1.01*x*y", "--x", "0+-1", "--y", "0+-1", "--json")
    assert r.code == 0 and r.json["second_order"] == pytest.approx(1.0201)
    assert any("the second-order term is 1.02 %" in w for w in r.json["warnings"]), r.json


def test_a_tiny_step_that_lowers_the_value_is_not_negligible(cli):
    """kills core/optimize.py:394: abs(f - f_old) <= 1e-15 * (1 + abs(f)) -> <= 1.000000000000001 * (...).

    A step is negligible when it moves the point by xtol (1e-12, relative) or less and the
    value by rounding only.  Newton on 1e20*(x-1)**2 from x = 1 + 1e-13 lands on 1 in one step
    of 1e-13 (below xtol), but the value falls from 1e-6 to 0: not rounding, so the loop goes
    on and stops on the gradient, exactly 0 there.  The mutant took a fall of up to 1 + |f|
    for rounding and stopped with "the steps became negligible"."""
    r = cli("minimize", "1e20*(x-1)**2", "--x", "1.0000000000001", "--method", "newton", "--json")
    assert r.code == 0, r.out
    assert r.json["x"] == {"x": 1.0} and r.json["value"] == 0.0 and r.json["iterations"] == 1
    assert r.json["converged"] is True
    assert r.json["message"] == "the gradient is zero (to --gtol)", r.json


def test_solves_jacobian_is_sparse_past_a_million_entries_of_a_tall_system(cli):
    """kills core/optimize.py:781: J.shape[0] * J.shape[1] <= DENSE_JACOBIAN_MAX ->
    J.shape[1] * J.shape[1].

    docs/choices.md: solve's grad stays SPEC's dense array up to 10^6 entries and is SPEC's
    sparse COO object past that.  concatenate([x - 1, x[:1] - 1]) is 1001 equations in 1000
    unknowns: a 1001 x 1000 Jacobian, 1,001,000 entries: COO, shape [1001, 1000], the
    identity's 1000 ones and a last 1 in row 1000, column 0 (the wide system of seed 109 has
    the other shape).  The mutant counted the columns twice, 10^6, and wrote it dense."""
    pytest.importorskip("scipy.sparse")
    zeros = "[" + ",".join(["0"] * 1000) + "]"
    r = cli("solve", "concatenate([x - 1, x[:1] - 1])", "--x", zeros, "--json")
    assert r.code == 0 and r.json["converged"] is True, r.out[:300]
    grad = r.json["grad"]["x"]
    assert isinstance(grad, dict) and grad["shape"] == [1001, 1000]
    entries = sorted(zip(grad["rows"], grad["cols"], grad["values"]))
    assert entries == [(i, i, 1.0) for i in range(1000)] + [(1000, 0, 1.0)]
