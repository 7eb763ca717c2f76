"""The Dask engine's survivors of ``bench/mutate.py`` with seed 251 (bench/results/
mutate-seed251.json, 10 mutants a target).  Skipped where Dask (or, for Parquet, pyarrow)
is not installed.
"""

from __future__ import annotations

import types

import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask")

import test_batch_dask  # noqa: E402

from autograd_cli.cli.batch import dask as batch_dask  # noqa: E402
from autograd_cli.cli.batch import io as batch_io  # noqa: E402

cli = test_batch_dask.cli
dask = test_batch_dask.dask


def test_a_parquet_column_of_number_text_reads_as_the_csv_of_the_same_table(
    tmp_path, cli, scheduler
):
    """kills cli/batch/dask_parts.py:378: if isinstance(value, float): -> if not
    (isinstance(value, float)):.

    A Parquet cell is read as the text of the CSV cell of the same table (docs/batch.md: a
    CSV file and its Parquet copy give the same output): a string column holding "1.5", "2"
    and "[1, 2]" gives the CSV file's lines.  The mutant wrote every non-float cell with
    repr, so a string cell came quoted ("'1.5'": not a number, three error records)."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table({"x": ["1.5", "2", "[1, 2]"], "y": [1, 2, 3]})
    pq.write_table(table, tmp_path / "t.parquet")
    (tmp_path / "t.csv").write_text('x,y\n1.5,1\n2,2\n"[1, 2]",3\n', encoding="utf-8")
    local = cli("batch", tmp_path / "t.csv", "--expr", "sum(x)*y")
    assert local.code == 0 and [d["value"] for d in local.docs] == [1.5, 4.0, 9.0], local.out
    got = dask(cli, scheduler, tmp_path / "t.parquet", "--expr", "sum(x)*y")
    assert (got.code, got.out) == (0, local.out), got.err


@pytest.mark.parametrize("data_bytes, shown", [(1 << 20, True), ((1 << 20) - 32, False)])
def test_the_progress_bar_shows_from_one_mib_of_input(
    tmp_path, cli, scheduler, monkeypatch, data_bytes, shown
):
    """kills cli/batch/dask.py:483: total >= batch_io.PROGRESS_MIN_BYTES and ... -> total >
    batch_io.PROGRESS_MIN_BYTES and ....

    docs/batch.md: a bar on stderr when stderr is a terminal and the input is 1 MiB or
    more.  Exactly 1 MiB of lines after the header (32,768 lines of 32 bytes) shows it; one
    line less does not.  stderr is made a terminal for the engine; the bar's switch is
    recorded (and the bar itself not drawn)."""
    line = "1." + "0" * 29 + "\n"
    assert len(line) == 32
    path = tmp_path / "in.csv"
    path.write_text("x\n" + line * (data_bytes // 32), encoding="utf-8")
    asked = []

    class Recorded(batch_io.Progress):
        def __init__(self, enabled, total):
            asked.append((enabled, total))
            super().__init__(False, total)

    class Terminal:
        def isatty(self):
            return True

    monkeypatch.setattr(batch_io, "Progress", Recorded)
    monkeypatch.setattr(batch_dask, "sys", types.SimpleNamespace(stderr=Terminal()))
    got = dask(cli, scheduler, path, "--expr", "x", "--op", "eval")
    assert got.code == 0, got.err
    assert asked == [(shown, data_bytes)]
