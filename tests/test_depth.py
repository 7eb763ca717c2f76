"""Very deep and very long inputs: 100,000 levels parse, evaluate and differentiate.

Nothing in the parser, the expression graph or the engine may recurse per level:
each test here would raise RecursionError (or crash the interpreter) otherwise.

The cyclic garbage collector is paused while each test runs: the graphs here are
millions of live objects, and its full collections would dominate the run time
without changing any result.  Graphs are freed by reference counting alone (see
``test_dropped_graph_is_freed_without_the_cycle_collector``).
"""

from __future__ import annotations

import gc
import math
import sys
import weakref

import pytest

from autograd_cli.core import backward, grad, tensor
from autograd_cli.core.recording import evaluate
from autograd_cli.grammar import parse

N = 100_000


@pytest.fixture(autouse=True)
def _pause_cycle_collector():
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def test_recursion_limit_is_untouched():
    # The tests below prove iteration, not a raised recursion limit.
    assert sys.getrecursionlimit() < 10_000


def run(src: str, values: dict, wrt: list[str]):
    program = parse(src)
    ev = evaluate(program, values, requires_grad=wrt)
    grads = grad(ev.output, [ev.leaves[w] for w in wrt])
    return program, ev, grads


def test_deeply_parenthesized_variable():
    program, ev, (g,) = run("(" * N + "x" + ")" * N, {"x": 2.5}, ["x"])
    assert program.output.op == "var"
    assert ev.output.item() == 2.5
    assert g.item() == 1.0


def test_deep_unary_minus():
    program, ev, (g,) = run("-" * 20_001 + "x", {"x": 3.0}, ["x"])
    assert ev.output.item() == -3.0  # an odd number of minus signs
    assert g.item() == -1.0
    program, ev, (g,) = run("-" * 10 + "x", {"x": 3.0}, ["x"])
    assert (ev.output.item(), g.item()) == (3.0, 1.0)


def test_long_sum():
    src = "x" + " + x" * (N - 1)
    program, ev, (g,) = run(src, {"x": 2.0}, ["x"])
    assert ev.output.item() == 2.0 * N
    assert g.item() == float(N)


def test_long_sum_of_many_variables_backward():
    # 3,000 products over three variables, through backward() into .grad.
    src = " + ".join(("x*y", "y*z", "z*x")[i % 3] for i in range(3_000 + 1))
    ev = evaluate(parse(src), {"x": 1.0, "y": 2.0, "z": 3.0}, requires_grad=["x", "y", "z"])
    backward(ev.output)
    k = 1_000  # 1,000 of each product, and one more x*y
    assert ev.output.item() == (k + 1) * 2.0 + k * 6.0 + k * 3.0
    assert ev.leaves["x"].grad.item() == (k + 1) * 2.0 + k * 3.0
    assert ev.leaves["y"].grad.item() == (k + 1) * 1.0 + k * 3.0
    assert ev.leaves["z"].grad.item() == k * 2.0 + k * 1.0


def test_nested_sin_chain():
    depth = 20_000
    src = "sin(" * depth + "x" + ")" * depth
    program, ev, (g,) = run(src, {"x": 0.5}, ["x"])
    value, derivative = 0.5, 1.0
    for _ in range(depth):
        derivative *= math.cos(value)
        value = math.sin(value)
    assert ev.output.item() == pytest.approx(value, rel=1e-12)
    assert g.item() == pytest.approx(derivative, rel=1e-9)


def test_program_of_many_statements():
    lines = ["a1=x+1"] + [
        f"a{i}=a{i - 1}*1" if i % 2 else f"a{i}=a{i - 1}+x" for i in range(2, N + 1)
    ]
    program = parse(";".join(lines))
    assert len(program.statements) == N
    assert program.inputs == ["x"]
    assert program.output_name == f"a{N}"
    ev = evaluate(program, {"x": 2.0}, requires_grad=["x"])
    # a1 = x + 1, then a2, a4, ..., aN each add x: (N/2 + 1) * x + 1
    adds = N // 2 + 1
    assert ev.output.item() == adds * 2.0 + 1
    assert len(ev.intermediates) == N
    (g, g_mid) = grad(ev.output, [ev.leaves["x"], ev.intermediates["a50000"]])
    assert g.item() == float(adds)
    assert g_mid.item() == 1.0


def test_newline_program_of_many_statements():
    src = "a1 = x + 1\n" + "\n".join(f"a{i} = a{i - 1} * x" for i in range(2, 1001))
    ev = evaluate(parse(src), {"x": 1.0}, requires_grad=["x"])
    (g,) = grad(ev.output, ev.leaves["x"])
    # (x + 1) * x**999 at x = 1: value 2, derivative x**999 + 999 (x + 1) x**998 = 1999
    assert ev.output.item() == 2.0
    assert g.item() == 1999.0


def test_create_graph_on_long_chain():
    # y = sin(sin(...sin(x)...)) with 100,000 sin nodes; first derivative with
    # create_graph=True, then the second derivative through that graph.
    x = tensor(0.5, requires_grad=True)
    y = x
    for _ in range(N):
        y = y.sin()
    (d1,) = grad(y, x, create_graph=True)
    assert d1.requires_grad
    (d2,) = grad(d1, x)
    # Reference by the recurrence: v' = cos(v) v', v'' = cos(v) v'' - sin(v) v'^2.
    v, dv, ddv = 0.5, 1.0, 0.0
    for _ in range(N):
        v, dv, ddv = math.sin(v), math.cos(v) * dv, math.cos(v) * ddv - math.sin(v) * dv * dv
    assert y.item() == pytest.approx(v, rel=1e-12)
    assert d1.item() == pytest.approx(dv, rel=1e-9)
    assert d2.item() == pytest.approx(ddv, rel=1e-9)


def test_dropped_graph_is_freed_without_the_cycle_collector():
    # With the cycle collector paused, dropping the output must free the whole
    # graph: no op may leave a reference cycle between a tensor and its grad_fn.
    x = tensor(0.5, requires_grad=True)
    y = x
    for _ in range(1000):
        y = y.sin() * 1.0 + 0.0
    first = weakref.ref(y.grad_fn)
    del y
    assert first() is None

    y = x
    for _ in range(1000):
        y = (y * x).exp().log()
    node = weakref.ref(y.grad_fn)
    (g,) = grad(y, x)  # backward without retain_graph releases what it saved
    del y
    assert node() is None
    assert g.item() == pytest.approx(1000 * 0.5**999, rel=1e-12)


def test_graph_tree_of_a_100000_deep_chain_asking_for_every_level(cli, monkeypatch):
    # The tree stops where the terminal's width does and says so; drawing every level for
    # the terminal to cut away was quadratic (10,000 deep: 41 s; 100,000 deep: hours).
    monkeypatch.setenv("COLUMNS", "80")
    src = "sin(" * N + "x" + ")" * N
    r = cli("graph", src, "--x", "0.5", "--max-depth", str(2 * N))
    assert r.code == 0, r.err[:500]
    assert r.out.count("SinBackward0") == 15  # the root and the 14 levels 80 columns show
    assert "deeper than the 14 levels that 80 columns show" in " ".join(r.out.split())
