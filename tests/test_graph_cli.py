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
