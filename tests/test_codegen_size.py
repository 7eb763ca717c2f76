"""The size of generated code is linear in the program's (issue 26).

Reverse mode writes a bounded number of statements per node of the program (its forward
statement, its local vector-Jacobian products, the sums of cotangents), never a formula
per path as symbolic differentiation does; forward over reverse (``hessian=True``) one
tangent sweep per variable over that.  So a program of 10^4 nodes (a chain of random
elementwise ops mixing ``x`` and ``y``, each a ``name = expr`` binding) gives code of a few
times 10^4 lines, doubling the program roughly doubles the code, and an expression
100,000 deep (``x+x+...+x``, ``sin(sin(...(x)))``) generates without a RecursionError: the
traversals are iterative.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import autograd_cli
from autograd_cli.core.codegen import generate
from autograd_cli.core.program import topological
from autograd_cli.grammar import parse

UNARY = [
    "sin({})",
    "cos({})",
    "tanh({})",
    "exp({} / 4)",
    "sqrt({}**2 + 1)",
    "sigmoid({})",
    "softplus({})",
    "abs({})",
    "relu({})",
    "log(1 + {}**2)",
]
BINARY = [
    "{} + {}",
    "{} - {}",
    "{} * {}",
    "{} / (1 + {}**2)",
    "max({}, {})",
    "where({0} > {1}, {0}, {1})",
    "maximum({}, {})",
]
POINT = {"x": 0.3, "y": -0.7}


def chain(ops: int, seed: int = 26) -> str:
    """A program of ``ops`` bindings, each a random elementwise op of the previous one (and
    of ``x`` or ``y``); the first ``ops`` of a longer chain of the same seed are these."""
    rng = np.random.default_rng(seed)
    lines = ["a0 = x * y"]
    for i in range(1, ops):
        prev = f"a{i - 1}"
        if rng.random() < 0.5:
            expr = UNARY[rng.integers(len(UNARY))].format(prev)
        else:
            other = "xy"[rng.integers(2)]
            a, b = (prev, other) if rng.random() < 0.5 else (other, prev)
            expr = BINARY[rng.integers(len(BINARY))].format(a, b)
        lines.append(f"a{i} = {expr}")
    lines.append(f"a{ops - 1}")
    return ";\n".join(lines)


def nodes(program) -> int:
    """The program's size: the nodes of its expression graph (variables and constants
    included)."""
    return len(topological([program.output]))


def lines(code: str) -> int:
    return len(code.splitlines())


def test_a_program_of_ten_thousand_nodes_gives_code_of_a_few_times_that():
    program = parse(chain(5_500))
    size = nodes(program)
    assert size >= 10_000
    g = generate(program, POINT)
    assert lines(g.code) <= 10 * size, (lines(g.code), size)
    # and the code is right: the engine's numbers at another point
    namespace: dict = {}
    exec(compile(g.code, "<codegen>", "exec"), namespace)  # noqa: S102 - our own code
    with np.errstate(all="ignore"):
        value, gx, gy = namespace["f"](1.25, 0.5)
    want = autograd_cli.grad(program, {"x": 1.25, "y": 0.5})
    np.testing.assert_allclose(
        [value, gx, gy], [want.value, want.grad["x"], want.grad["y"]], rtol=1e-12
    )


def test_doubling_the_program_doubles_the_code():
    small, large = parse(chain(2_750)), parse(chain(5_500))
    assert 1.8 <= nodes(large) / nodes(small) <= 2.2
    a = lines(generate(small, POINT).code)
    b = lines(generate(large, POINT).code)
    assert 1.5 <= b / a <= 2.5, (a, b)


def test_the_hessian_of_two_variables_is_linear_too():
    small, large = parse(chain(1_400)), parse(chain(2_800))
    a = lines(generate(small, POINT, hessian=True).code)
    g = generate(large, POINT, hessian=True)
    b = lines(g.code)
    assert 1.5 <= b / a <= 2.5, (a, b)
    # one forward sweep, one reverse, one tangent sweep per variable: a bounded multiple
    assert b <= 30 * nodes(large), (b, nodes(large))
    assert g.outputs[-4:] == ["hessian_x_x", "hessian_x_y", "hessian_y_x", "hessian_y_y"]


def _generated_in_time(text: str, depth: int, seconds: float):
    start = time.perf_counter()
    program = parse(text)
    g = generate(program, {"x": 0.5})
    took = time.perf_counter() - start
    assert took < seconds, took
    assert depth <= lines(g.code) <= 10 * depth
    return g


def test_a_sum_a_hundred_thousand_long_generates_without_recursion():
    depth = 100_000
    g = _generated_in_time("x" + "+x" * depth, depth, 120)
    assert g.outputs == ["value", "grad_x"]


def test_a_sine_nested_a_hundred_thousand_deep_generates_without_recursion():
    depth = 100_000
    g = _generated_in_time("sin(" * depth + "x" + ")" * depth, depth, 240)
    body = g.code[g.code.index("\ndef ") :]
    assert body.count("np.sin(") == depth and body.count("np.cos(") == depth


@pytest.mark.parametrize("depth", [3, 12])
def test_nested_sines_are_right_where_they_are_small(depth):
    """The same generator on a nesting Python can run quickly: the engine's numbers."""
    text = "sin(" * depth + "x" + ")" * depth
    g = generate(parse(text), {"x": 0.5}, hessian=True)
    namespace: dict = {}
    exec(compile(g.code, "<codegen>", "exec"), namespace)  # noqa: S102 - our own code
    got = namespace["f"](0.9)
    want = autograd_cli.hessian(text, {"x": 0.9})
    np.testing.assert_allclose(
        got, [want.value, want.grad["x"], want.hessian["x"]["x"]], rtol=1e-12
    )
