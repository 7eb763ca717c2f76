"""Tests written from the survivors of ``bench/mutate.py`` seed 193 (bench/results/
mutate-seed193.json), an untuned seed measured after seed 191 with every test before it in.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from the docs
or arithmetic by hand, never from the code under test.

Judged equivalent (bench/mutate_equivalent.txt): taylor_mode.py:707 (a rule always has two
coefficients or more), sparsity.py:368 (array_equal is symmetric), sparsity.py:392 (a max that
is at least 1 already), limits.py:146 (min is symmetric).
"""

from __future__ import annotations

import numpy as np
import pytest

from autograd_cli.core import optimize
from autograd_cli.grammar import parse


def test_solves_jacobian_of_exactly_a_million_entries_is_still_dense():
    """kills core/optimize.py:773: J.shape[0] * J.shape[1] <= DENSE_JACOBIAN_MAX -> <.

    docs/choices.md: solve's grad "stays SPEC's dense array up to 10^6 entries" (and is
    SPEC's sparse COO object past that: tests/test_mutants_seed109.py).  x - 1 in 1000
    unknowns (the sparse steps from 500) has the 1000 x 1000 identity for its Jacobian,
    10^6 entries exactly: dense.  The mutant wrote it as COO."""
    pytest.importorskip("scipy.sparse")
    r = optimize.solve(parse("x - 1"), {"x": np.zeros(1000)})
    assert r.converged and r.x["x"] == [1.0] * 1000
    J = np.asarray(r.grad["x"])
    assert J.shape == (1000, 1000)
    assert (J == np.eye(1000)).all()
