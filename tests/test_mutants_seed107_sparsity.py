"""Tests written from the survivors of ``bench/mutate.py`` seed 107 (bench/results/
mutate-seed107.json) in core/sparsity.py.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values are counted by
hand, never taken from the code under test.  The survivors that no test can tell apart are in
bench/mutate_equivalent.txt, with the reason.
"""

from __future__ import annotations

import pytest

#: 3 rows of 4: the fibers along axis 1 are the rows
X = "[[1,2,3,4],[5,6,7,8],[9,10,11,12]]"
#: bytes the sparsity pattern asks the memory limit for each (row, column) pair a fiber op
#: mixes: 12 for the pattern's index and flag, 16 for the pair's two indices
PAIR_BYTES = 28


def _sparsity(cli, text, limit):
    return cli("sparsity", text, "--x", X, "--max-memory", limit, "--json")


def test_a_prefix_fiber_asks_the_memory_limit_for_its_pairs_up_to_each_element(cli):
    """kills core/sparsity.py:166: pairs = length * (length + 1) // 2 if prefix else
    length * length -> length * (length - 1) // 2 if prefix else ...; and -> ... if not
    (prefix) else length * length.

    cumsum(x, axis=1) of a 3x4 array: element j of a row is on the row's elements 0..j, so each
    row of 4 holds 1 + 2 + 3 + 4 = 10 pairs, the pattern 3 * 10 = 30 entries.  The pattern asks
    the memory limit for those 30 pairs, 840 bytes, before it builds them: a limit one byte
    short is a limit error naming them, a limit of 840 bytes gives the pattern.  The first
    mutant counted 3 * 6 = 18 pairs (the diagonal left out) and built the pattern under a
    limit of 839 bytes; the second counted a whole fiber's 3 * 16 = 48 and refused 840."""
    short = _sparsity(cli, "cumsum(x, axis=1)", 30 * PAIR_BYTES - 1)
    assert short.code == 1, short.out
    error = short.json["error"]
    assert error["kind"] == "limit" and error["needed_bytes"] == 30 * PAIR_BYTES
    assert error["message"].startswith("the sparsity pattern would take 840 bytes (30 numbers)")

    enough = _sparsity(cli, "cumsum(x, axis=1)", 30 * PAIR_BYTES)
    assert enough.code == 0, enough.out
    got = enough.json
    assert got["shape"] == [12, 12] and got["nnz"] == 30
    # row r of the 3x4 array: element 4r + j on elements 4r .. 4r + j
    expected = [(4 * r + j, 4 * r + i) for r in range(3) for j in range(4) for i in range(j + 1)]
    assert list(zip(got["rows"], got["cols"])) == expected


@pytest.mark.parametrize("op", ["softmax", "sort"])
def test_a_whole_fiber_asks_the_memory_limit_for_every_pair_of_its_elements(cli, op):
    """kills core/sparsity.py:166: pairs = length * (length + 1) // 2 if prefix else
    length * length -> ... if not (prefix) else length * length.

    softmax(x, axis=1) and sort(x, axis=1) of a 3x4 array: each element is on every element
    of its row, 4 * 4 = 16 pairs a row, 48 in all, 1344 bytes asked of the memory limit.  The
    mutant counted a whole fiber as a prefix's 3 * 10 = 30 pairs (840 bytes) and built the
    pattern under a limit of 1343 bytes, past the limit it was given."""
    short = _sparsity(cli, f"{op}(x, axis=1)", 48 * PAIR_BYTES - 1)
    assert short.code == 1, short.out
    error = short.json["error"]
    assert error["kind"] == "limit" and error["needed_bytes"] == 48 * PAIR_BYTES
    assert "(48 numbers)" in error["message"]

    enough = _sparsity(cli, f"{op}(x, axis=1)", 48 * PAIR_BYTES)
    assert enough.code == 0, enough.out
    got = enough.json
    assert got["nnz"] == 48
    expected = [(4 * r + j, 4 * r + i) for r in range(3) for j in range(4) for i in range(4)]
    assert list(zip(got["rows"], got["cols"])) == expected
