"""Tests written from the survivors of ``bench/mutate.py --sample 10 --seed 67`` (drawn after
the seed-61 tests): each pins a behaviour one surviving mutant changed."""

from __future__ import annotations

import dataclasses
import json

import pytest

from autograd_cli.grammar import parse


def test_minimize_takes_exactly_max_iter_steps_before_it_gives_up(cli):
    # Newton on x**4 shrinks x by 2/3 a step: not converged in 3, and 3 steps were taken
    out = cli("minimize", "x**4", "--x", "1", "--max-iter", "3", "--method", "newton", "--json")
    doc = json.loads(out.out)
    assert out.code == 1 and doc["iterations"] == 3 and not doc["converged"]
    assert doc["x"]["x"] == pytest.approx((2 / 3) ** 3)


def test_minimize_names_itself_and_the_shape_of_a_non_scalar_output(cli):
    out = cli("minimize", "x*[1,2]", "--x", "1", "--method", "newton", "--json")
    error = json.loads(out.out)["error"]
    assert error["kind"] == "non_scalar_output" and error["shape"] == [2]
    assert error["message"].startswith("minimize needs a scalar output, but it has shape (2,)")


def test_a_propagate_result_is_immutable():
    from autograd_cli.core.uncertainty import propagate

    r = propagate(parse("2*x"), {"x": 1.0}, {"x": 0.1})
    assert r.uncertainty == pytest.approx(0.2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.uncertainty = 0.0
