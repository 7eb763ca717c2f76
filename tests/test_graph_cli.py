"""The graph command: tree, DOT and JSON views of the computation graph."""

from __future__ import annotations


def test_graph_json_seed_chain_rule(cli):
    r = cli("graph", "y = (x + w) * (w + 1)", "--x", "2", "--w", "1", "--json")
    assert r.code == 0, r.err
    doc = r.json
    nodes = {n["id"]: n for n in doc["nodes"]}
    out = nodes[doc["output"]]
    assert out["kind"] == "MulBackward0" and out["name"] == "y" and out["value"] == 6.0
    leaves = {n["name"]: n for n in doc["nodes"] if n["kind"] == "leaf"}
    assert leaves["w"]["grad"] == 5.0 and leaves["x"]["grad"] == 2.0
    assert all(leaves[k]["is_leaf"] for k in leaves)
    adds = [n for n in doc["nodes"] if n["kind"] == "AddBackward0"]
    assert sorted(n["grad"] for n in adds) == [2.0, 3.0]  # dy/da = b = 2, dy/db = a = 3


def test_graph_tree_and_dot(cli):
    r = cli(
        "graph",
        "output = W @ x + b; y = sum(output)",
        "--W",
        "[[1,2],[3,4]]",
        "--x",
        "[1, 1]",
        "--b",
        "[0, 0]",
    )
    assert r.code == 0
    assert "SumBackward0 y" in r.out and "AddBackward0 output" in r.out
    assert "MvBackward0" in r.out and "leaf W" in r.out
    r = cli("graph", "x*x", "--x", "3", "--dot")
    assert r.out.startswith("digraph autograd {") and r.out.count("n0 -> n1") == 2


def test_graph_non_scalar_without_grad_output(cli):
    r = cli("graph", "x*2", "--x", "[1, 2]", "--json")
    assert r.code == 0
    assert all(n["grad"] is None for n in r.json["nodes"])
    r = cli("graph", "x*2", "--x", "[1, 2]", "--grad-output", "[1, 1]", "--json")
    assert [n["grad"] for n in r.json["nodes"] if n["kind"] == "leaf"] == [[2.0, 2.0]]


def test_graph_deep_expression(cli):
    depth = 100_000
    src = "(" * depth + "x" + "+1)" * depth
    r = cli("graph", src, "--x", "0", "--dot")
    assert r.code == 0, r.err[:500]
    assert r.out.count("->") == 2 * depth
    r = cli("graph", src, "--x", "0", "--max-depth", "10")
    assert r.code == 0
    assert "deeper than 10 levels" in r.out


def _tree_work(monkeypatch, depth: int, max_depth: int, width: int = 80) -> tuple[int, str]:
    """The guide segments Rich measures to draw ``sin`` nested ``depth`` deep (for each node
    it measures the guides of every level above it: drawing all levels of a chain costs
    the square of its depth), and the printed text."""
    import io

    from rich.console import Console
    from rich.segment import Segment

    from autograd_cli.cli import graph, render
    from autograd_cli.core import api
    from autograd_cli.grammar import parse

    out = io.StringIO()
    monkeypatch.setattr(render, "make_console", lambda: Console(file=out, width=width))
    measured = 0
    cell_length = Segment.cell_length

    def counted(self):
        nonlocal measured
        measured += 1
        return cell_length.fget(self)

    monkeypatch.setattr(Segment, "cell_length", property(counted))
    result = api.graph_of(parse("sin(" * depth + "x" + ")" * depth), {"x": 0.5})
    graph.render_tree("", result, max_depth=max_depth)
    return measured, out.getvalue()


def test_graph_tree_work_does_not_grow_with_depth_past_the_width(monkeypatch):
    # graph - --max-depth 200000 on sin(...(x)...) 10,000 deep took 41 s of CPU to print
    # 6 KB: every level was drawn and then cut away at the terminal's edge.  Now the tree
    # stops where the width does, and says so.
    small, text = _tree_work(monkeypatch, 500, 200_000)
    large, _ = _tree_work(monkeypatch, 2_000, 200_000)
    assert large <= small * 1.1  # was 16x: four times as deep, sixteen times the guides
    assert text.count("SinBackward0") == 15  # the root and 14 levels: (80 - 24) // 4
    assert "1 input(s) deeper than the 14 levels that 80 columns show" in " ".join(text.split())
    _, wide = _tree_work(monkeypatch, 40, 200_000, width=400)
    assert wide.count("SinBackward0") == 40 and "deeper" not in wide


def test_graph_max_depth_message_is_singular_for_one_level(cli):
    r = cli("graph", "sin(sin(x))", "--x", "1", "--max-depth", "1")
    assert r.code == 0
    assert "deeper than 1 level " in r.out and "1 levels" not in r.out
    r = cli("graph", "sin(sin(sin(x)))", "--x", "1", "--max-depth", "2")
    assert "deeper than 2 levels " in r.out
