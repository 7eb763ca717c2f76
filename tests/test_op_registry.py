"""The op table is made once, by ``ops.op_table``, from the declarations, each of which
carries every fact about its op (its kink, differentiable inputs, the value facts the
simplifier, Taylor mode and the non-finite checks read): no entry is patched in later, and
no table keyed by op name stands apart from the entries."""

from __future__ import annotations

import importlib

import pytest

from autograd_cli.core import OPS, ops, recording, symbolic, taylor_mode
from autograd_cli.core.ops import CALL, Op, op_table

# The module (the package's attribute `tensor` is the function that makes a tensor).
tensor_module = importlib.import_module("autograd_cli.core.tensor")


def _op(name: str, **facts) -> Op:
    return Op(name, f"{name.title()}Backward0", lambda a: a, None, arity=1, printing=CALL, **facts)


def test_the_table_is_made_of_the_declarations_in_order():
    assert OPS is tensor_module.OPS and OPS is ops.OPS  # one dict, the one every layer reads
    made = op_table(ops._DECLARED)
    assert made is not OPS
    assert list(made.items()) == list(OPS.items())


def test_no_facts_are_kept_apart_from_the_entries():
    gone = {
        ops: ("KINKS", "DIFFERENTIABLE"),
        symbolic: ("_TOTAL_FNS", "_NONNEG_FNS", "_PIECEWISE_FNS"),
        recording: ("_SPREADS_NONFINITE",),
    }
    for module, names in gone.items():
        for name in names:
            assert not hasattr(module, name), f"{module.__name__}.{name}"
    # Taylor mode's piecewise rule serves the ops that declare themselves piecewise linear
    assert {n for n, op in OPS.items() if op.piecewise_linear} <= set(taylor_mode.RULES)


def test_a_name_declared_twice_is_an_error():
    with pytest.raises(ValueError, match="op 'twice' is declared twice"):
        op_table([_op("twice"), _op("other"), _op("twice")])


def test_the_facts_are_the_declared_ones():
    def kink(inputs, out, attrs):
        return "a kink"

    made = op_table(
        [_op("fresh", kink=kink, differentiable=(False,), total=True, piecewise_linear=True)]
    )
    fresh = made["fresh"]
    assert fresh.kink is kink and fresh.differentiable == (False,) and fresh.total
    assert fresh.piecewise  # piecewise linear is piecewise
    assert not fresh.nonneg and fresh.spreads_nonfinite == ()


def test_making_a_table_changes_no_other_table():
    before = dict(OPS)
    made = op_table([_op("fresh")])
    assert "fresh" in made and "fresh" not in OPS and OPS == before
