"""The one interpreter (core/interpret.py) and what every evaluator gets from it.

Every evaluator of a program (tensors, forward-mode duals, batches, the
dependence analysis behind diff and explain) is an Interpretation run by
``interpret``; these tests check the walk's contract, that a new value kind
plugs in with three methods, and the behaviour the walk gives all evaluators
at once (a variable bound by an unused statement is an input like any other).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from autograd_cli.core import batch as core_batch
from autograd_cli.core import forward, recording
from autograd_cli.core.errors import MissingValueError
from autograd_cli.core.interpret import Dependence, Interpretation, interpret
from autograd_cli.core.program import Expr
from autograd_cli.grammar import parse


class Floats(Interpretation):
    """A fourth value kind, written here in a few lines: plain Python floats via each op's
    NumPy forward. Counts the calls, to check each node is visited once."""

    def __init__(self):
        self.calls = []

    def const(self, node):
        self.calls.append("const")
        return np.asarray(node.value, dtype=float)

    def var(self, name, value):
        self.calls.append(("var", name))
        return np.asarray(value, dtype=float)

    def apply(self, node, op, args):
        self.calls.append(node.op)
        return op.forward(*args, **node.attrs)


def test_a_new_value_kind_plugs_in_and_agrees_with_the_engine():
    program = parse("a = x*y + sin(x); b = a**2; b - exp(y)/a")
    values = {"x": 0.7, "y": -1.3}
    floats = Floats()
    walk = interpret(program, floats, values)
    engine = recording.evaluate(program, values).output.data
    assert float(walk.result) == pytest.approx(float(engine), rel=0, abs=0)
    # x is read three times and y twice, but each variable is bound once; every op once.
    assert floats.calls.count(("var", "x")) == 1 and floats.calls.count(("var", "y")) == 1
    ops = [c for c in floats.calls if isinstance(c, str) and c != "const"]
    assert sorted(ops) == sorted(["mul", "sin", "add", "pow", "exp", "div", "sub"])
    assert walk.order[-1] is program.output and walk[program.output] is walk.result
    assert set(walk.inputs) == {"x", "y"}


def test_missing_value_is_reported_by_the_walk_for_every_evaluator():
    program = parse("x + q")
    calls = [
        lambda: interpret(program, Floats(), {"x": 1.0}),
        lambda: recording.evaluate(program, {"x": 1.0}),
        lambda: forward.jvp_program(program, {"x": 1.0}, {"x": 1.0}),
    ]
    for call in calls:
        with pytest.raises(MissingValueError, match="no value for variable 'q'"):
            call()
    with pytest.raises(core_batch.GroupError, match="no value for variable 'q'"):
        core_batch.evaluate_batch(program, {"x": np.ones(3)}, 3)


def test_bind_binds_unreached_variables_and_needs_their_values():
    program = parse("a = z*2; x*3")
    walk = interpret(program, Floats(), {"x": 1.0, "z": 5.0}, bind=["z"])
    assert float(walk.inputs["z"]) == 5.0 and float(walk.result) == 3.0
    with pytest.raises(MissingValueError, match="'z'"):
        interpret(program, Floats(), {"x": 1.0}, bind=["z"])


def test_dependence_follows_differentiable_paths_only():
    program = parse("c = x > y; where(c, y*2, 3) + floor(x)")
    walk = interpret(program, Dependence({"x"}))
    # x reaches the output only through the condition of where (not differentiable) and
    # floor (differentiable by its declaration: a zero gradient, but a path).
    assert walk.result is True
    walk = interpret(parse("where(x > 0, 1, 2)"), Dependence({"x"}))
    assert walk.result is False
    walk = interpret(parse("where(x > 0, y, 2)"), Dependence({"y"}))
    assert walk.result is True


def test_interpret_is_iterative():
    root = Expr.var("x")
    for _ in range(100_000):
        root = Expr("neg", (root,))
    walk = interpret(root, Floats(), {"x": 2.0})
    assert float(walk.result) == 2.0
    assert interpret(root, Dependence({"x"})).result is True


# ---- a variable bound by an unused statement is an input like any other ------------------------

UNUSED = "a = z*2; x*3"


@pytest.mark.parametrize("command", ["grad", "hessian", "jacobian", "diff", "explain"])
def test_unused_binding_gives_a_zero_derivative(cli, command):
    r = cli(command, UNUSED, "--x", "1", "--z", "5", "--json")
    assert r.code == 0, r.err
    doc = r.json
    key = {
        "grad": "grad",
        "hessian": "grad",
        "jacobian": "jacobian",
        "diff": "derivative_value",
        "explain": "gradient",
    }[command]
    assert doc[key] == {"z": 0.0, "x": 3.0}
    if command == "hessian":
        assert doc["hessian"]["z"] == {"z": 0.0, "x": 0.0}
    if command == "explain":
        assert doc["paths"]["z"] == [] and doc["point"] == {"x": 1.0, "z": 5.0}


def test_unused_binding_in_forward_mode_and_higher_orders(cli):
    r = cli("grad", UNUSED, "--x", "1", "--z", "5", "--tangent", "z=1", "--json")
    assert r.code == 0, r.err
    assert r.json["jvp"] == 0.0
    r = cli("grad", UNUSED, "--x", "1", "--z", "5", "--tangent", "x=2", "--json")
    assert r.json["jvp"] == 6.0
    r = cli("grad", UNUSED, "--x", "1", "--z", "5", "--order", "2", "--wrt", "z", "--json")
    assert r.code == 0 and r.json["grad"] == {"z": 0.0}


def test_unused_binding_needs_its_value_for_a_gradient_but_not_for_a_value(cli):
    r = cli("grad", UNUSED, "--x", "1", "--json")
    assert r.code == 2 and r.json["error"]["kind"] == "missing_value"
    assert "'z'" in r.json["error"]["message"]
    r = cli("grad", UNUSED, "--x", "1", "--wrt", "x", "--json")
    assert r.code == 0 and r.json["grad"] == {"x": 3.0}
    r = cli("eval", UNUSED, "--x", "1", "--json")
    assert r.code == 0 and r.json["value"] == 3.0


def test_unused_binding_in_batch_and_in_the_library(cli, tmp_path):
    path = tmp_path / "points.csv"
    path.write_text("x,z\n1,5\n2,6\n", encoding="utf-8")
    r = cli("batch", str(path), "--expr", UNUSED)
    assert r.code == 0, r.err
    docs = [json.loads(line) for line in r.out.splitlines()]
    assert [d["grad"] for d in docs] == [{"z": 0.0, "x": 3.0}] * 2
    # vector-valued unused inputs get a zero gradient of their own shape
    values = {"x": 1.0, "z": np.arange(3.0)}
    r = core_batch.evaluate_batch(
        parse(UNUSED), {k: np.stack([v, v]) for k, v in values.items()}, 2, grad=True
    )
    assert r.grad["z"].shape == (2, 3) and not r.grad["z"].any()
    out, tangent = forward.jvp_program(parse(UNUSED), {"x": 1.0, "z": 5.0}, {"z": 1.0})
    assert float(out.data) == 3.0 and tangent is None
    ev = recording.evaluate(parse(UNUSED), {"x": 2.0, "z": 5.0}, requires_grad=["z", "x"])
    assert set(ev.leaves) == {"x", "z"} and math.isclose(float(ev.output.data), 6.0)


# ---- explain of big graphs: a summary, every number still exact ------------------------------


def test_explain_lists_a_bounded_number_of_steps_and_counts_the_rest():
    from autograd_cli.core.explain import explain

    n = 300
    text = " + ".join(f"sin(x*{i})" for i in range(1, n + 1))
    ex = explain(parse(text), {"x": 0.5}, max_steps=10)
    kinds = [s["kind"] for s in ex.steps]
    assert kinds.count("define") == 10 and kinds.count("local") == 10
    # 3n - 1 intermediates (n products, n sines, n - 1 sums); 4n - 2 edges lead to x
    assert ex.elided["define"] == 3 * n - 1 - 10
    assert ex.elided["local"] == (n - 1) * 2 + 2 * n - 10
    # the gradient is exact, and x's own accumulation is listed with its terms counted
    expected = math.fsum(i * math.cos(0.5 * i) for i in range(1, n + 1))
    assert ex.gradient["x"] == pytest.approx(expected, rel=1e-12)
    last = [s for s in ex.steps if s["kind"] == "accumulate" and s["wrt"] == "x"]
    assert len(last) == 1 and len(last[0]["terms"]) == 10 and last[0]["more_terms"] == n - 10
    assert last[0]["text"].endswith(f"... ({n - 10:,} more terms) = {last[0]['text'].split()[-1]}")
    everything = explain(parse(text), {"x": 0.5}, max_steps=None)
    assert everything.elided == {} and everything.gradient == ex.gradient
    assert [s["kind"] for s in everything.steps].count("local") == 4 * n - 2
