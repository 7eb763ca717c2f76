"""The Dask engine's survivor of ``bench/mutate.py`` with seed 157 (bench/results/
mutate-seed157.json); the others are in test_mutants_seed157.py.  Expected lines come from
the local engine reading the CSV file of the same table, written by hand.  Skipped where Dask
or PyArrow is not installed.
"""

from __future__ import annotations

import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask")

import test_batch_dask  # noqa: E402

cli = test_batch_dask.cli
dask = test_batch_dask.dask


def test_a_parquet_integer_column_beside_a_missing_value_reads_as_the_csv_does(
    tmp_path, cli, scheduler
):
    """kills cli/batch/dask_parts.py:384 (seed 157): return str(value) -> return value.

    A column with a missing value is read cell by cell, as CSV text; an integer column
    beside it too, each cell as its text ("2").  The CSV file of the same table, written
    here by hand, is the reference (the local engine).  The mutant handed the CSV row
    parser an int, not text."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"x": [1.5, None, 0.5], "y": [2, 4, -3]}), path)
    csv_path = tmp_path / "t.csv"
    csv_path.write_text("x,y\n1.5,2\n,4\n0.5,-3\n", encoding="utf-8")
    local = cli("batch", csv_path, "--expr", "x*y")
    got = dask(cli, scheduler, path, "--expr", "x*y")
    assert local.code == 1 and [d.get("value") for d in local.docs] == [3.0, None, -1.5]
    assert got.code == 1 and got.out == local.out, got.err
