"""Tests written from the survivors of ``bench/mutate.py`` seed 179 (bench/results/
mutate-seed179.json), an untuned seed measured after seed 173's tests went in; the Dask
engine's survivor is in test_mutants_seed179_dask.py.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from
arithmetic by hand or the docs, never from the code under test.

Judged equivalent (bench/mutate_equivalent.txt): batch.py:807 (a seed handed to ``grad`` as
an array is wrapped without a copy), taylor_mode.py:449 (the same Cauchy product summed in
the other order: both within rounding, neither the right one), taylor_mode.py:797 (sinc's
first derivative is bounded, so its check never fires).
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from autograd_cli.core import limits
from autograd_cli.core.errors import LimitError
from autograd_cli.core.optimize import minimize
from autograd_cli.core.symbolic.differentiation import Builder
from autograd_cli.grammar import parse

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.mark.parametrize("ord_", ["1", "inf"])
def test_a_matrix_norm_with_one_extreme_sum_and_no_zero_has_no_kink_warning(cli, ord_):
    """kills core/ops/reductions.py:632: chosen.sum(...) > 1 -> > 0.

    [[1, 2], [3, 5]]: column sums 4 and 7, row sums 3 and 8, each maximum taken once, and
    no zero entry in the chosen column or row, so norm(A, ord=1) = 7 and norm(A, ord=inf) =
    8 are differentiable there: the gradient is the sign pattern of the chosen column (row),
    and no warning.  The mutant counted one chosen sum as a tie and always warned."""
    r = cli("grad", f"norm(A, ord={ord_})", "--A", "[[1,2],[3,5]]", "--json")
    assert r.code == 0, r.out
    want = [[0.0, 1.0], [0.0, 1.0]] if ord_ == "1" else [[0.0, 0.0], [1.0, 1.0]]
    assert r.json["value"] == (7.0 if ord_ == "1" else 8.0) and r.json["grad"]["A"] == want
    assert "warnings" not in r.json


@pytest.mark.parametrize("method, steps", [("newton", 100), ("bfgs", 1000)])
def test_the_default_iteration_counts_are_the_documented_ones(method, steps):
    """kills core/optimize.py:286: {"newton": 100, "bfgs": 1000, ...} -> "bfgs": 1001.

    docs/analyses.md: default 100 steps, bfgs 1,000 (gd 10,000: the same dict).  -x has no
    minimum: every step moves x by 1 (the gradient step, as the Hessian is 0 and bfgs's
    estimate never changes, y = 0), so from 0 the run stops at the default count with x
    equal to it, not converged."""
    r = minimize(parse("-x"), {"x": 0.0}, method=method)
    assert not r.converged and r.iterations == steps and r.x == {"x": float(steps)}
    assert r.message == f"no convergence in {steps} iterations (max_iter)"
    text = " ".join((DOCS / "analyses.md").read_text(encoding="utf-8").split())
    assert "(default 100 steps; bfgs 1,000, gd 10,000;" in text


def test_a_predicted_graph_past_64_bits_is_capped_in_the_error():
    """kills core/limits.py:180: int(min(predicted, 2**63 - 1)) -> 3**63 - 1.

    1, 100, 10,000 nodes, a hundredfold an order: 10,000 * 100**17 = 1e38 nodes by order
    20, past the largest 64-bit integer, which every JSON reader takes: predicted_nodes is
    capped there (as diff's is), and the message says 1e+38."""
    with pytest.raises(LimitError) as info:
        limits.check_growth([1, 100, 10_000], 20)
    assert info.value.details["predicted_nodes"] == 2**63 - 1
    assert "on course for 1e+38 nodes" in str(info.value)


def test_the_derivative_builders_own_limit_is_the_documented_one():
    """kills core/symbolic/differentiation.py:51: max_nodes: int = 2_000_000 -> 2000001.

    docs/limits-and-errors.md: with --max-nodes 0 no derivative is built past 2,000,000
    nodes (Builder's default); past it a limit error says so."""
    default = inspect.signature(Builder).parameters["max_nodes"].default
    text = " ".join((DOCS / "limits-and-errors.md").read_text(encoding="utf-8").split())
    assert f"no derivative is built past {default:,} nodes" in text
    builder = Builder(max_nodes=2)
    x, y = parse("x").output, parse("y").output
    builder.node("add", (x, y))
    builder.node("mul", (x, y))
    with pytest.raises(LimitError, match="grew past 2 nodes as it was built"):
        builder.node("sub", (x, y))
