"""The op table is made once, by ``ops.op_table``, from the declarations and the facts
declared apart from them (kinks, differentiable inputs): no entry is patched in later."""

from __future__ import annotations

import importlib

import pytest

from autograd_cli.core import OPS, ops
from autograd_cli.core.ops import CALL, DIFFERENTIABLE, KINKS, Op, op_table

# The module (the package's attribute `tensor` is the function that makes a tensor).
tensor_module = importlib.import_module("autograd_cli.core.tensor")


def _op(name: str) -> Op:
    return Op(name, f"{name.title()}Backward0", lambda a: a, None, arity=1, printing=CALL)


def test_the_table_is_made_of_the_declarations_in_order():
    assert OPS is tensor_module.OPS and OPS is ops.OPS  # one dict, the one every layer reads
    made = op_table(ops._DECLARED, kinks=KINKS, differentiable=DIFFERENTIABLE)
    assert made is not OPS
    assert list(made.items()) == list(OPS.items())


def test_the_facts_declared_apart_are_in_the_entries():
    assert {name for name, op in OPS.items() if op.kink is not None} == set(KINKS)
    assert all(OPS[name].kink is kink for name, kink in KINKS.items())
    assert all(OPS[name].differentiable == flags for name, flags in DIFFERENTIABLE.items())


def test_a_name_declared_twice_is_an_error():
    with pytest.raises(ValueError, match="op 'twice' is declared twice"):
        op_table([_op("twice"), _op("other"), _op("twice")], kinks={}, differentiable={})


def test_a_fact_about_an_undeclared_op_is_an_error():
    with pytest.raises(ValueError, match="facts about undeclared ops: nowhere, sqrt"):
        op_table([_op("here")], kinks={"sqrt": KINKS["sqrt"]}, differentiable={"nowhere": ()})


def test_making_a_table_changes_no_other_table():
    before = dict(OPS)
    kink = KINKS["abs"]
    made = op_table([_op("fresh")], kinks={"fresh": kink}, differentiable={"fresh": (False,)})
    assert made["fresh"].kink is kink and made["fresh"].differentiable == (False,)
    assert "fresh" not in OPS and OPS == before
