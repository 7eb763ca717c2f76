"""Repeated differentiation (``grad --order N``, ``taylor`` where Taylor mode cannot be used)
refuses, before the next order, a derivative whose graph is on course past the memory limit
by order N (core/limits.check_growth): ``taylor "tan(x)" --x 1.5707963 --order 20`` ran
for hours before.  The prediction's arithmetic is checked by hand (growth_past), the count
against a full walk of the graph, and each refusal's figures against each other."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from autograd_cli.core import limits
from autograd_cli.core.autograd import grad, new_nodes, topological_nodes
from autograd_cli.core.errors import LimitError
from autograd_cli.core.recording import evaluate
from autograd_cli.core.taylor import taylor
from autograd_cli.core.tensor import enable_grad
from autograd_cli.grammar import parse

POLE = "1.5707963"  # 2.7e-8 from tan's pole: Taylor mode's overflow guard defers at order 20


def test_growth_past_predicts_from_the_smaller_of_the_last_two_ratios():
    # 10, 30, 90 then 3 times an order: 90 * 3**7 = 196,830 nodes at order 10
    assert limits.growth_past([10, 30, 90], 10, 196_830) is None
    assert limits.growth_past([10, 30, 90], 10, 196_829) == (3.0, 196_830.0)
    assert limits.growth_past([10, 40, 90], 10, 2e4) == (2.25, 90 * 2.25**7)  # 26,274: the smaller
    assert limits.growth_past([10, 30], 10, 1) is None  # two sizes predict nothing
    assert limits.growth_past([10, 30, 90], 3, 1) is None  # the order is reached
    assert limits.growth_past([30, 30, 30], 10, 1) is None  # not growing
    assert limits.growth_past([0, 30, 90], 10, 1) is None  # a graph that was cut
    assert limits.growth_past([1, 3, 9], 10, 1e3) == (3.0, 19_683.0)  # from one node: 9 * 3**7


def test_new_nodes_counts_a_growing_graph_once_as_a_full_walk_does():
    # the check counts each order's new nodes (ids kept between orders): the running total
    # is the full count of every order's graph together (topological_nodes, the oracle)
    with enable_grad():
        ev = evaluate(parse("tan(x) * exp(x)"), {"x": 0.5}, requires_grad=["x"])
        y, held, seen, total = ev.output, [], set(), 0
        for _ in range(5):
            (y,) = grad(y, [ev.leaves["x"]], create_graph=True)
            held.append(y)
            total += new_nodes([y], seen)
            assert total == len(topological_nodes(held))
        assert new_nodes(held, seen) == 0  # nothing new the second time


def test_the_multi_variable_count_is_a_full_walk_of_every_order(monkeypatch):
    """taylor of several variables keeps only the last order's derivative tensors: a Node
    freed with an earlier order could lend its id to a new one, which the running count
    (ids kept between orders) would then skip.  GraphGrowth holds what it counted, so its
    total at each order is a full walk of every order's graph up to it (topological_nodes,
    the oracle).  Without the holding this case counted 8,650 nodes at order 5, not 8,815."""
    from autograd_cli.core import autograd
    from autograd_cli.core.taylor import _derivative_tensors

    made = []
    real = autograd.GraphGrowth.__init__

    def record(self, *args, **kwargs):
        real(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(autograd.GraphGrowth, "__init__", record)
    program = parse("x*y*sin(x+y)*exp(x*y)")
    _derivative_tensors(program, {"x": 0.5, "y": 0.3}, ["x", "y"], 5)
    (growth,) = made
    counted = []
    for k in range(5):
        every = [t for order in growth._held[: k + 1] for t in order]
        counted.append(len(topological_nodes(every)))
    assert growth.sizes == counted and counted[-1] > counted[-2] > 0


def _refusal(error: dict, order: int, limit: int) -> str:
    """The refusal's figures, checked against each other: the message's nodes, order and
    estimate (at 512 bytes a node, past ``limit``) are the JSON's."""
    message = error["message"]
    assert error["kind"] == "limit" and error["limit_bytes"] == limit
    nodes, predicted = error["nodes"], error["predicted_nodes"]
    assert 0 < nodes < predicted and predicted * limits.NODE_BYTES > limit
    k = int(re.search(r"graph nodes at order (\d+) of (\d+)", message).group(1))
    assert f"has {nodes:,} graph nodes at order {k} of {order}" in message
    need = {limits.format_bytes(n * limits.NODE_BYTES) for n in (predicted, predicted + 1)}
    assert re.search(r"\(([^()]*)\) at order", message).group(1) in need  # JSON's is whole
    return message


@pytest.mark.parametrize("command", ["taylor", "grad"])
def test_order_20_near_tans_pole_is_refused_early_with_taylor_modes_reason(cli, command):
    r = cli(command, "tan(x)", "--x", POLE, "--order", "20", "--json")
    assert r.code == 1
    message = _refusal(r.json["error"], 20, 4 << 30)
    assert int(re.search(r"at order (\d+) of 20", message).group(1)) <= 6
    assert "Taylor mode, one pass for any order, cannot be used here: tan:" in message
    assert "ask for a lower --order, or raise the limit with --max-memory SIZE" in message


def test_the_memory_limit_sets_the_budget_and_lifts_it(cli):
    # tan(sum([x, 0])) always falls back (Taylor mode has no rule for a sum of an array);
    # order 8 fits the default, not 64 KiB; with no limit (0) nothing is checked
    expr = "tan(sum([x, 0]))"
    assert cli("taylor", expr, "--x", "1", "--order", "8", "--json").code == 0
    r = cli("taylor", expr, "--x", "1", "--order", "8", "--max-memory", "64K", "--json")
    assert r.code == 1, r.out
    message = _refusal(r.json["error"], 8, 64 << 10)
    assert "(Taylor mode, one pass for any order, cannot be used here: sum of an array)" in message
    ok = cli("taylor", expr, "--x", "1", "--order", "8", "--max-memory", "0", "--json")
    assert ok.code == 0


def test_the_library_refuses_as_the_command_line_does_naming_its_parameters():
    with pytest.raises(LimitError) as info:
        taylor(parse("tan(x)"), {"x": float(POLE)}, order=20)
    assert "ask for a lower order, or raise the limit with max_memory SIZE" in str(info.value)


def test_a_batch_line_names_its_order_key(cli, tmp_path):
    path = tmp_path / "lines.jsonl"
    line = {"expr": "tan(x)", "vars": {"x": float(POLE)}, "op": "taylor", "order": 20}
    path.write_text(json.dumps(line) + "\n")
    record = json.loads(cli("batch", str(path)).out)
    assert record["error"]["kind"] == "limit"
    assert (
        'ask for a lower "order", or raise the limit with --max-memory'
        in (record["error"]["message"])
    )


def test_plot_of_high_derivatives_is_checked_with_its_points_arrays(cli):
    # plot differentiates f at all its points at once: each graph node holds two arrays of
    # the 200 points (3,200 bytes) besides its own 512; order 20 of tan is refused early
    r = cli("plot", "tan(x)", "--x", "0:1", "--order", "20", "--json")
    assert r.code == 1, r.out
    error = r.json["error"]
    assert error["kind"] == "limit" and "Taylor mode" not in error["message"]
    node = limits.NODE_BYTES + 2 * 200 * 8
    need = {
        limits.format_bytes(n * node)
        for n in (error["predicted_nodes"], error["predicted_nodes"] + 1)
    }
    assert re.search(r"\(([^()]*)\) at order 20", error["message"]).group(1) in need
    assert cli("plot", "tan(x)", "--x", "0:1", "--order", "4", "--json").code == 0


def test_the_documented_size_of_a_node_is_the_one_the_prediction_uses():
    # docs/limits-and-errors.md tells users the figure the refusal is computed with (a
    # measured estimate: tan's derivatives to order 14, 1.6 million nodes in 0.85 GB); the
    # docs and the code change together
    docs = Path(__file__).resolve().parent.parent / "docs" / "limits-and-errors.md"
    said = re.findall(r"at (\d+) bytes\s+a graph node", docs.read_text(encoding="utf-8"))
    assert said == [str(limits.NODE_BYTES)]
    assert 1.6e6 * limits.NODE_BYTES == pytest.approx(0.85e9, rel=0.05)
