"""explain over arrays (reductions, matmul, indexing, broadcasting: the chain rule as
vector-Jacobian products, with grad's numbers), --precision, and explain's time: linear in
the program's size however deep it nests."""

from __future__ import annotations

import gc
import time

from autograd_cli.core.explain import explain
from autograd_cli.grammar import parse

# ---- linear time -------------------------------------------------------------------------


def _seconds(n: int) -> float:
    program = parse("sin(" * n + "x" + ")" * n)
    best = float("inf")
    for _ in range(2):
        gc.collect()
        start = time.perf_counter()
        ex = explain(program, {"x": 0.5})
        best = min(best, time.perf_counter() - start)
    assert [p["path"][-1] for p in ex.paths["x"]] == ["x"] and len(
        ex.paths["x"][0]["path"]
    ) == n + 1
    return best


def test_explain_of_a_deep_chain_takes_time_linear_in_its_depth():
    # sin(sin(...(x)...)): one path n + 1 nodes long.  Copying the path at every step of the
    # walk along it made this quadratic (8x the depth took over 30x the time); now 8x the
    # depth takes about 8x the time.  Timing noise is a factor, not a power: the bound is loose.
    small, large = _seconds(4_000), _seconds(32_000)
    assert large / small < 16, (small, large)
