"""Tests written from the survivors of ``bench/mutate.py --sample 10 --seed 61`` (a seed the
tests had not been written against): each pins a behaviour one surviving mutant changed."""

from __future__ import annotations

import json

import numpy as np
import pytest

from autograd_cli.core import OPS
from autograd_cli.grammar import parse


def test_matmul_sizes_a_vector_as_a_column_or_a_row():
    # the memory limit asks the op for the result's size before it is allocated
    size = OPS["matmul"].size
    assert size([(3, 4), (4,)], {}) == 3
    assert size([(4,), (4, 5)], {}) == 5
    assert size([(2, 3, 4), (4,)], {}) == 6


def test_an_input_without_uncertainty_has_no_share(cli):
    out = cli("propagate", "x + 1", "--x", "2+-0", "--json")
    doc = json.loads(out.out)
    assert doc["uncertainty"] == 0.0 and doc["budget"]["x"]["share"] == 0.0


def test_a_one_element_vector_takes_a_1x1_uncertainty_as_its_standard_uncertainty():
    # a scalar's (1, 1) array is its covariance matrix (a variance); a one-element vector's is
    # one number per entry, the standard uncertainty, as any array of one number per entry
    from autograd_cli.core.uncertainty import propagate

    one = np.array([[0.04]])
    vector = propagate(parse("sum(x)"), {"x": np.array([2.0])}, {"x": one})
    scalar = propagate(parse("x"), {"x": np.float64(2.0)}, {"x": one})
    assert vector.uncertainty == pytest.approx(0.04) and scalar.uncertainty == pytest.approx(0.2)


def test_monte_carlo_draws_that_are_not_finite_are_counted_in_a_warning(cli):
    out = cli("propagate", "sqrt(x)", "--x", "0.01+-1", "--mc", "1000", "--seed", "1", "--json")
    warnings = json.loads(out.out)["warnings"]
    assert any(
        w.endswith("of 1,000 Monte Carlo draws gave a value that is not finite; they are left out")
        for w in warnings
    ), warnings


def test_batch_gradients_leave_the_leaf_copy_flag_as_they_found_it():
    from autograd_cli.core.batch import evaluate_batch
    from autograd_cli.core.ops.rules import LEAVES_COPIED_AT_EXIT

    token = LEAVES_COPIED_AT_EXIT.set(False)  # the default (whatever ran before in this context)
    try:
        values = {"x": np.arange(3.0), "y": np.ones(3)}
        r = evaluate_batch(parse("x**2 * y"), values, 3, grad=True)
        np.testing.assert_array_equal(r.grad["x"], 2 * np.arange(3.0))
        assert LEAVES_COPIED_AT_EXIT.get() is False
    finally:
        LEAVES_COPIED_AT_EXIT.reset(token)


def test_the_sparse_coo_output_is_in_row_major_order(cli):
    # a product of patterns (A @ x routed through A) leaves a row's columns unordered; the
    # output puts the entries in order itself (checked while triaging a mutant of the
    # pattern's own sort, which turned out equivalent)
    rng = np.random.default_rng(3)
    a = np.where(rng.random((6, 6)) < 0.5, rng.integers(1, 5, (6, 6)), 0).astype(float).tolist()
    values = ("--A", json.dumps(a), "--x", json.dumps(list(np.arange(1.0, 7.0))))
    for argv in (("sparsity", "exp(A @ x)"), ("jacobian", "--sparse", "exp(A @ x)")):
        doc = json.loads(cli(*argv, *values, "--wrt", "x", "--json").out)
        block = doc if argv[0] == "sparsity" else doc["jacobian"]["x"]
        pairs = list(zip(block["rows"], block["cols"]))
        assert pairs == sorted(pairs) and len(pairs) == int((np.array(a) != 0).sum())


def test_a_hub_column_of_a_jacobian_with_more_rows_than_columns(cli):
    # 200 residuals on 100 x and one parameter p that all of them read: p is a hub
    n = 100
    values = ("--x", json.dumps(list(np.linspace(0.5, 2.0, n))), "--p", "1.5")
    text = "concatenate([x, x**2]) * p"
    out = cli("jacobian", "--sparse", text, *values, "--json")
    doc = json.loads(out.out)
    dense = json.loads(cli("jacobian", text, *values, "--json").out)["jacobian"]
    for name in ("x", "p"):
        block = doc["jacobian"][name]
        got = np.zeros(block["shape"])
        got[block["rows"], block["cols"]] = block["values"]
        np.testing.assert_allclose(got, np.reshape(dense[name], block["shape"]), rtol=1e-14)
    assert doc["jacobian"]["x"]["colors"] <= 3


def test_batch_warns_where_an_op_makes_a_nan_in_a_row_whose_argument_is_finite():
    # the inner log is nan in row 2 only; the outer log makes a new nan in row 1: each row
    # gets the warnings its line alone gets (the argument's nan in another row changes nothing)
    from test_batch_property import assert_same_as_single_lines, run_batch_file

    records = [{"expr": "log(log(x))", "vars": {"x": x}, "op": "grad"} for x in (0.5, -1.0, 3.0)]
    lines, code, spy = run_batch_file(records)
    assert code == 0 and spy.groups and not spy.singles  # the vectorised path answered
    assert_same_as_single_lines(records, lines, spy)
    assert any("log gave nan" in w for w in json.loads(lines[0])["warnings"])
