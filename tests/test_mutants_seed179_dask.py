"""The Dask engine's survivor of ``bench/mutate.py`` with seed 179 (bench/results/
mutate-seed179.json); the others are in test_mutants_seed179.py.  The expected lines are the
local engine's on the CSV file of the same table.  Skipped where Dask or PyArrow is not
installed.
"""

from __future__ import annotations

import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask")

import test_batch_dask  # noqa: E402

cli = test_batch_dask.cli
dask = test_batch_dask.dask


def test_a_parquet_row_group_read_in_several_chunks_keeps_its_line_numbers(
    tmp_path, cli, scheduler
):
    """kills cli/batch/dask_parts.py:410: range(part.first_line + a, ...) -> first_line - a.

    One row group of 5 rows read 2 rows at a time (--chunk-size 2): the chunks are rows
    1-2, 3-4 and 5, lines 2-3, 4-5 and 6 of the CSV file of the same table (its header is
    line 1).  Row 4 has no y: its error record is line 5, and every line is written once, in
    order.  The mutant numbered the second chunk from line 2 again (4 numbers for 2 rows)."""
    path, csv_path = test_batch_dask.write_parquet(
        tmp_path, "t", {"x": [1.0, 2.0, 3.0, 4.0, 5.0], "y": [1.0, 2.0, 3.0, None, 5.0]}, 5
    )
    local = cli("batch", csv_path, "--expr", "x*y", "--chunk-size", "2")
    got = dask(cli, scheduler, path, "--expr", "x*y", "--chunk-size", "2")
    assert [d["line"] for d in local.docs] == [2, 3, 4, 5, 6]
    assert "error" in local.docs[3] and local.code == 1
    assert got.code == 1 and got.out == local.out, got.err
