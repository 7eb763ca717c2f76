"""Tests written from the survivors of ``bench/mutate.py`` seed 257 (bench/results/
mutate-seed257.json), an untuned seed measured at 10 mutants a target with every test
before it in.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from the docs
or arithmetic by hand, never from the code under test.
"""

from __future__ import annotations

import numpy as np
import pytest

from autograd_cli.core import codegen
from autograd_cli.core.program import Expr, Program, variables


@pytest.mark.parametrize("step", [1, 2])
def test_torch_code_indexes_a_positive_step_as_a_view(step):
    """kills core/ops/shape.py:260: ... or i.step > 0 for i in index) -> ... or i.step > 1
    for i in index).

    torch has no negative slice steps, so the code gathers those by a list of flat
    positions; any positive step, 1 included, is torch's own slice (a view, its scatter an
    assignment): no list of positions the size of the array is written into the code."""
    x = Expr.var("x")
    part = Expr("getitem", (x,), {"index": (slice(None, None, step),)})
    out = Expr("sum", (Expr("mul", (part, part)),), {"axis": None, "keepdims": False})
    program = Program(source="", output=out, inputs=variables(out))
    code = codegen.generate(program, {"x": np.arange(5.0)}, target="torch").code
    assert f"x[(slice(None, None, {step}), )]" in code, code
    assert "reshape(-1)[" not in code and "index_add_" not in code, code


@pytest.mark.parametrize(
    ("expr", "derivative"),
    [("x/2**62*2**62", "1"), ("x*2**62/2**62", "1"), ("3*x/2**62*2**62", "3")],
)
def test_a_power_of_two_and_its_inverse_cancel_exactly(cli, expr, derivative):
    """kills core/symbolic/numbers.py:26: ... or v.denominator > _BIG: -> ... or
    v.denominator >= _BIG:.

    Exact rationals are kept up to 2**62 in numerator and denominator (numbers.py's _BIG),
    both ends included: 1/2**62 is exact, so x/2**62*2**62 differentiates to 1, not to
    4.611686018427388e+18/4.611686018427388e+18."""
    r = cli("diff", expr, "--wrt", "x", "--json")
    assert r.code == 0, r.out
    assert r.json["derivative"] == derivative
