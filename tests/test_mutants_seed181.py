"""Tests written from the survivors of ``bench/mutate.py`` seed 181 (bench/results/
mutate-seed181.json), an untuned seed measured after seed 179's tests went in.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from
arithmetic by hand, the docs, or another command of the tool, never from the code under test.

Judged equivalent (bench/mutate_equivalent.txt): symbolic/algebra.py:573 (n_add commutes),
taylor_mode.py:505 (cbrt's local derivative check cannot fire on a float64 point),
uncertainty.py:175 (an all-zero covariance is semidefinite either way), batch/dask.py:478
(no two measuring tasks share their arguments).
"""

from __future__ import annotations

import json

import numpy as np

from autograd_cli.core.limits import about
from autograd_cli.core.optimize import _Flat, _third_derivative
from autograd_cli.grammar import parse

LOG_NAN = "log gave nan"


def test_an_empty_result_does_not_vouch_for_its_arguments_in_a_batch_group(cli, tmp_path):
    """kills core/batch.py:735: if spread and values[k].t.data.size -> spread or ....

    log(x) * [1,2][2:] is an empty array (a row times an empty vector), so sum(...) is 0
    whatever log(x) is.  A finite result of * vouches for its arguments' finiteness, but an
    empty one has no entries to carry a nan: log(-1)'s nan must still warn, on its own row
    only, as `eval` warns for that point alone.  Three rows with one expression are evaluated
    as one batched group; the mutant let the empty product vouch for log(x) and lost row 1's
    warning."""
    expr = "sum(log(x)*[1,2][2:])"
    alone = cli("eval", expr, "--x", "-1", "--json")
    assert alone.code == 0 and any(LOG_NAN in w for w in alone.json["warnings"])
    path = tmp_path / "rows.jsonl"
    path.write_text(
        "".join(json.dumps({"expr": expr, "vars": {"x": x}}) + "\n" for x in (-1, 2, 3))
    )
    r = cli("batch", str(path))
    assert r.code == 0, r.out + r.err
    rows = [json.loads(line) for line in r.out.splitlines()]
    assert [row["value"] for row in rows] == [0.0, 0.0, 0.0]
    assert rows[0]["warnings"] == alone.json["warnings"]
    assert "warnings" not in rows[1] and "warnings" not in rows[2]


def test_diff_hessian_refuses_a_first_derivative_past_the_budget_at_order_1(cli):
    """kills core/symbolic/command.py:261: _check_size(first[name], ...) -> pass.

    `diff --hessian` differentiates twice; a first derivative already past --max-nodes is
    refused there, before a second derivative (larger still) is built from it.  The size
    refused is the first derivative's own: the one `diff --order 1` reports at the same budget.
    The mutant went on and refused the second derivative instead ("at order 2 of 2", a
    larger count)."""
    expr, budget = "sin(x*y)*exp(x+y)", "6"
    first = cli("diff", expr, "--wrt", "x", "--max-nodes", budget, "--json")
    assert first.code == 1 and first.json["error"]["kind"] == "limit"
    n = first.json["error"]["nodes"]
    r = cli("diff", expr, "--wrt", "x,y", "--hessian", "--max-nodes", budget, "--json")
    assert r.code == 1, r.out
    error = r.json["error"]
    assert error["kind"] == "limit" and error["nodes"] == n
    assert f"with respect to x grew to {n:,} nodes at order 1 of 2" in error["message"]


def test_an_eigenvalue_of_exactly_minus_sqrt_gtol_counts_as_zero(cli):
    """kills core/optimize.py:429: (s.eigenvalues < -s.zero) -> <= -s.zero.

    docs/analyses.md: an eigenvalue within sqrt(--gtol) of zero is zero (degenerate), the
    default gtol 1e-10 making that 1e-5.  x**4 - 5e-6*x**2 at 0: gradient 0, Hessian
    -1e-5 exactly (5e-6 * 2 is exact), so `critical` calls it degenerate, and minimize, whose
    message must agree, falls back on the value a step away (lower both ways: -5e-6 s**2 wins
    for small s), a flat maximum, not "a negative eigenvalue".  The mutant counted -1e-5 as
    negative."""
    expr = "x**4 - 5e-6*x**2"
    c = cli("critical", expr, "--x", "0", "--json")
    assert c.json["kind"] == "degenerate" and c.json["eigenvalues"] == [-1e-05]
    r = cli("minimize", expr, "--x", "0", "--json")
    assert r.code == 1 and r.json["converged"] is False
    assert "singular along a direction in which the value falls both ways" in r.json["message"]
    assert "negative eigenvalue" not in r.json["message"]


def test_the_third_derivative_of_a_linear_or_quadratic_function_is_zero():
    """kills core/optimize.py:549: return 0.0 -> return 1.0.

    D³f(v, v, v) is 0 along any v for a linear function and for |x| away from 0 (a constant
    slope): there the engine's first or second derivative is a constant, which nothing is
    left to differentiate, and _third_derivative stops early (the mutant's 1.0).  A quadratic
    (its third derivative a graph whose value is 0) and a cubic check the full path:
    x**3 + x*y**2 along (1, 2) from 0 is t**3 + 4 t**3, so D³ = 6 * 5 = 30."""
    cases = [
        ("2*x - 3*y + 1", {"x": 1.0, "y": -2.0}, 0.0),
        ("abs(x) + y", {"x": 1.5, "y": -2.0}, 0.0),
        ("3*x**2 + x*y - y**2 + 2*x", {"x": 1.0, "y": -2.0}, 0.0),
        ("x**3 + x*y**2", {"x": 0.0, "y": 0.0}, 30.0),
    ]
    for expr, values, want in cases:
        flat = _Flat(parse(expr), values, ["x", "y"])
        assert _third_derivative(flat, flat.theta0, np.array([1.0, 2.0])) == want, expr


def test_a_step_rounding_hides_needs_no_hessian(cli, tmp_path):
    """kills core/optimize.py:625: _scalar_value_grad_hess(flat, trial, False) -> True.

    gd on 1e20 + sum(x)**2/3000 from 3,000 ones: the full step lands on the minimum (0),
    but 1e20 hides the value's fall, so the step is judged by the gradient there
    (docs/analyses.md: one more gradient).  gd needs no Hessian (past 1,000 variables not
    even for the second-order check), so under --max-memory 30M, far below the Hessian's
    dense pattern (3000**2 entries, about 200 MiB), the run converges in one step.  The
    mutant computed the Hessian at the trial point too and hit the memory limit."""
    path = tmp_path / "x.json"
    path.write_text(json.dumps([1.0] * 3000))
    r = cli(
        "minimize", "1e20 + sum(x)**2/3000", "--x", f"@{path}",
        "--method", "gd", "--max-memory", "30M", "--json",
    )  # fmt: skip
    assert r.code == 0, r.out[:500]
    assert r.json["converged"] is True and r.json["iterations"] == 1
    assert r.json["x"]["x"] == [0.0] * 3000


def test_about_writes_a_trillion_as_a_power_of_ten_after_rounding():
    """kills core/limits.py:131: if n >= 1e12 -> if n > 1e12.

    about() writes predicted sizes in limit messages: three significant digits, and from a
    trillion on a power of ten.  1e12 itself is "1e+12", and so is 999,999,999,999, which
    three digits round to a trillion (before the fix it read 1,000,000,000,000); just below,
    999,000,000,000 keeps its digits.  The mutant wrote 1e12 out in full."""
    assert about(1e12) == "1e+12"
    assert about(999_999_999_999) == "1e+12"
    assert about(999_000_000_000) == "999,000,000,000"
    assert about(295_812.4) == "296,000"
    assert about(3e40) == "3e+40"
