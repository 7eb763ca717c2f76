"""Tests written from the survivors of ``bench/mutate.py`` seed 163 (bench/results/
mutate-seed163.json), an untuned seed measured after seed 157's tests went in.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from
arithmetic by hand or the docs, never from the code under test.

Judged equivalent (bench/mutate_equivalent.txt): batch.py:304 ``sa[-0]`` (the size rule of
matmul never reads the contracted length), taylor_mode.py:395 (the identity rule's copy: the
only writes to a result's series, its value and the zeros past its degree, leave an
identity op's argument as it was), taylor_mode.py:619 (a scale of 0 or 1 adds log(max(1,
scale)) = 0 either way).
"""

from __future__ import annotations

import numpy as np
import pytest

from autograd_cli.core import limits
from autograd_cli.core.batch import evaluate_batch
from autograd_cli.core.errors import LimitError
from autograd_cli.grammar import parse


def test_a_batched_vector_times_a_batched_matrix_is_sized_per_row():
    """kills core/batch.py:304: sa[:-1] + (1, sa[-1]) if ra == 1 else sa -> ... if ra != 1.

    100 rows, each a vector x of 2 times its own 2x5 matrix M: the result is 100 x 5 = 500
    numbers (3.91 KiB), well under a limit of 100,000 bytes (M itself is 1,000 numbers).  Each
    row's vector is promoted to a 1x2 matrix before the size rule.  The mutant left the rows
    of vectors as one 100x2 matrix, whose product with 100 stacked matrices would be
    100 x 100 x 5 = 50,000 numbers (391 KiB): refused."""
    rng = np.random.default_rng(163)
    x, M = rng.random((100, 2)), rng.random((100, 2, 5))
    with limits.using(100_000):
        got = evaluate_batch(parse("x @ M"), {"x": x, "M": M}, 100).value
    assert got.shape == (100, 5)
    assert np.allclose(got[7], x[7] @ M[7], rtol=1e-15, atol=0)
    with limits.using(3_000), pytest.raises(LimitError, match=r"3\.91 KiB \(500 numbers\)"):
        evaluate_batch(parse("x @ M"), {"x": x, "M": M}, 100)


def test_diffs_predicted_size_is_capped_at_the_largest_64_bit_integer(cli):
    """kills core/symbolic/command.py:338: int(min(predicted, 2**63 - 1)) -> 2**64 - 1.

    x**x**x**x**x at --order 20 grows about 9.2 times an order: on course for some 1e+20
    nodes, which the message says; the JSON field predicted_nodes is capped at 2^63 - 1, the
    largest 64-bit integer (docs/limits-and-errors.md), which every JSON reader takes.  The
    mutant capped it at 2^64 - 1, past a signed 64-bit integer."""
    r = cli("diff", "x**x**x**x**x", "--order", "20", "--json")
    assert r.code == 1, r.out
    err = r.json["error"]
    assert err["kind"] == "limit" and "on course for 1e+20 nodes at order 20" in err["message"]
    assert err["predicted_nodes"] == 9_223_372_036_854_775_807
