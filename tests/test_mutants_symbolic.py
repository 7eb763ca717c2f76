"""Behaviours of the simplifier and diff (core/symbolic.py) pinned down for mutants of
bench/mutate.py.

Each test names the behaviour it pins; its comment names the mutant (``file:line: original ->
mutant``, line numbers as they were when it was found) that it kills.  Expected values come
from SymPy or from the documented contract, never from the code under test.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from autograd_cli import diff
from autograd_cli.core.errors import LimitError
from autograd_cli.core.printing import to_text
from autograd_cli.core.program import topological
from autograd_cli.core.symbolic import (
    Algebra,
    SimplifyBudgetExceeded,
    UnsupportedDiffError,
    simplify,
)
from autograd_cli.grammar import parse

sympy = pytest.importorskip("sympy")


@pytest.mark.parametrize("expr", ["x**2*y + sin(x*y)", "exp(x)*y**3 - x/y", "x**3*y**3"])
def test_the_mixed_partials_of_diff_are_sympys(expr):
    # kills core/symbolic.py:1801: row = grad_exprs(first[a], names[i:], builder) ->
    #   row = grad_exprs(names[i:], first[a], builder)   (diff --hessian failed outright)
    texts = diff(expr, order=2, mixed=True).hessian_texts()
    x, y = sympy.symbols("x y")
    f = sympy.sympify(expr)
    assert list(texts) == ["x", "y"] and all(list(row) == ["x", "y"] for row in texts.values())
    for a in (x, y):
        for b in (x, y):
            got = sympy.sympify(texts[str(a)][str(b)])
            assert sympy.simplify(got - sympy.diff(f, a, b)) == 0, (a, b, got)


def test_a_second_derivative_past_the_node_budget_names_its_variable_and_order():
    # kills core/symbolic.py:1806: _check_size(e, a if a == b else f"{a} and {b}", 2, 2, ...)
    #   -> a if a != b else ... ("x and x")  and  -> ..., 3, 2, ...  ("at order 3 of 2")
    # d/dx sin(x)**5 = 5 sin(x)**4 cos(x) fits 10 nodes; its second derivative does not
    with pytest.raises(LimitError) as info:
        diff("sin(x)**5", order=2, mixed=True, max_nodes=10)
    message = str(info.value)
    assert "the derivative with respect to x grew to" in message, message
    assert " at order 2 of 2, past the size budget of 10 " in message, message
    assert "x and x" not in message


@pytest.mark.parametrize(
    "text, what",
    [("sum(x) + 0", "sum"), ("x[0] + x[1]", "indexing"), ("[x, 1] - [x, 1]", "array")],
)
def test_simplify_refuses_an_op_it_has_no_rules_for(text, what):
    # kills core/symbolic.py:748: raise _unsupported(node) -> pass   (an op without rules went
    #   through: x[0] + x[1] then failed with a KeyError, [x, 1] - [x, 1] became 0*[x, 1])
    with pytest.raises(UnsupportedDiffError, match=what):
        simplify(parse(text).output)


_SHARED_DAG = """
from autograd_cli.core.printing import to_text
from autograd_cli.core.symbolic import simplify
from autograd_cli.grammar import parse
n = 40
lines = ["a0 = sin(x)"] + [f"a{k + 1} = sin(a{k}) + cos(a{k})" for k in range(n)]
print(to_text(simplify(parse("; ".join(lines + [f"a{n}**2 + 0*log(y)"])).output)))
"""


def test_the_nan_reach_search_visits_each_shared_term_once():
    # kills core/symbolic.py:362: seen.add(u.uid) -> pass   (without the visited set the
    #   search for a nan of log(y) walks every path of a DAG whose terms each hold the one
    #   before twice: 2**40 paths; with it, about 80 terms, well under a second)
    done = subprocess.run(
        [sys.executable, "-c", _SHARED_DAG], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    # log(y) is nan for y < 0, and 0*nan is nan: the trace stays
    assert done.stdout.strip().endswith("**2 + 0*log(y)"), done.stdout


def test_a_square_of_a_three_term_sum_is_expanded_and_cancels():
    # kills core/symbolic.py:496: and len(b.args) + (b.data[0] != 0) <= 3 -> ... == 0) <= 3
    #   (a sum of three terms and no constant counted as four: (x + y + z)**2 stayed whole)
    text = "(x + y + z)**2 - (x**2 + y**2 + z**2 + 2*x*y + 2*x*z + 2*y*z)"
    x, y, z = sympy.symbols("x y z")
    assert sympy.expand(sympy.sympify(text)) == 0  # the closed form: the difference is 0
    assert to_text(simplify(parse(text).output)) == "0"


def test_where_of_a_comparison_with_one_and_zero_is_the_comparison():
    # kills core/symbolic.py:1249: and _is_num(t.args[1], 1) -> and _is_num(t.args[1], 0)
    #   (comparisons are 0 or 1, so where(x > 0, 1, 0) is x > 0; it stayed a where)
    assert to_text(simplify(parse("where(x > 0, 1, 0)").output)) == "x > 0"
    assert to_text(simplify(parse("where(x <= y, 1, 0)").output)) == "x <= y"


def test_every_function_application_counts_against_the_budget():
    # kills core/symbolic.py:723: self.spend(len(args) + 1) -> self.spend(len(args) - 1)
    #   (a one-argument function cost nothing: 1000 nested sines simplified on a budget of 500
    #   operand visits, and an Algebra reported 0 steps for them)
    chain = "x"
    for _ in range(1000):
        chain = f"sin({chain})"
    expr = parse(chain).output
    with pytest.raises(SimplifyBudgetExceeded):
        simplify(expr, budget=500)
    algebra = Algebra()
    assert to_text(simplify(expr, algebra=algebra)) == chain
    assert algebra.steps >= 1000  # at least one step per function applied


def test_the_default_budget_is_the_documented_one():
    # kills core/symbolic.py:1588: MIN_STEPS = 200_000 -> MIN_STEPS = 200001
    #   (simplify's docstring: "default max(200000, 64 * size)", size in nodes of the input)
    algebra = Algebra()
    simplify(parse("x + 1").output, algebra=algebra)
    assert algebra.budget == 200_000
    terms = " + ".join(f"{k}*x**{k}" for k in range(1, 1001))
    expr = parse(terms).output
    algebra = Algebra()
    simplify(expr, algebra=algebra)
    assert algebra.budget == max(200_000, 64 * len(topological([expr])))


@pytest.mark.parametrize("text", ["sin(x**A) + sin(x**(1/3))", "sin(x**(1/3)) + sin(x**A)"])
def test_a_fraction_sorts_by_its_text(text):
    # kills core/symbolic.py:834: if isinstance(v, Fraction): return str(v) -> if not (...)
    #   (a fraction's label became repr, "Fraction(1, 3)", which sorts after the capital A:
    #   the canonical order of the terms changed)
    got = to_text(simplify(parse(text).output))
    assert got == "sin(x**(1/3)) + sin(x**A)"  # by label: "1/3" before "A" (ASCII)
    x, a = sympy.symbols("x A")
    assert (
        sympy.simplify(
            sympy.sympify(got) - (sympy.sin(x ** sympy.Rational(1, 3)) + sympy.sin(x**a))
        )
        == 0
    )


def test_the_mixed_partials_are_evaluated_at_the_point_given():
    # kills core/symbolic.py:1866: entries.update((id(d), d) for d in row.values()) -> pass
    #   (diff --hessian with values: the off-diagonal entries had no value)
    x, y = sympy.symbols("x y")
    f = x**2 * y + sympy.sin(x * y)
    point = {"x": 0.7, "y": -1.3}
    r = diff("x**2*y + sin(x*y)", order=2, values=point, mixed=True)
    for a in (x, y):
        for b in (x, y):
            want = float(sympy.diff(f, a, b).subs({x: point["x"], y: point["y"]}))
            assert r.hessian[str(a)][str(b)].value == pytest.approx(want, rel=1e-12), (a, b)
