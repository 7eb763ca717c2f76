"""The Dask engine's survivors of ``bench/mutate.py`` with seed 223 (bench/results/
mutate-seed223.json); the others are in test_mutants_seed223.py.  The expected lines are the
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


def test_a_plain_parquet_row_group_read_in_several_chunks(tmp_path, cli, scheduler):
    """kills cli/batch/dask_parts.py:413: column_group(opts, {...c[a:b]...}, b - a) -> b + a.

    One row group of 5 rows of plain numbers (no nulls: the columns go to the vectorised
    engine as they are) read 2 rows at a time: the chunks hold 2, 2 and 1 rows.  Each line's
    record is the local engine's on the CSV file of the same table, lines 2 to 6, once each;
    the mutant gave the second chunk 2 + 2 = 4 rows for its 2."""
    path, csv_path = test_batch_dask.write_parquet(
        tmp_path, "t", {"x": [1.0, 2.0, 3.0, 4.0, 5.0], "y": [2.0, 3.0, 4.0, 5.0, 6.0]}, 5
    )
    local = cli("batch", csv_path, "--expr", "x*y", "--op", "grad", "--chunk-size", "2")
    got = dask(cli, scheduler, path, "--expr", "x*y", "--op", "grad", "--chunk-size", "2")
    assert [d["line"] for d in local.docs] == [2, 3, 4, 5, 6] and local.code == 0
    assert [d["value"] for d in local.docs] == [2.0, 6.0, 12.0, 20.0, 30.0]
    assert got.code == 0 and got.out == local.out, got.err


def test_a_timeout_tail_holds_exactly_the_cap_of_limit_records(
    tmp_path, cli, scheduler, monkeypatch
):
    """kills cli/batch/dask.py:636: if unfinished >= command.TIMEOUT_TAIL_LINES -> >.

    After a --timeout the lines not finished get an error record of kind limit each, at most
    TIMEOUT_TAIL_LINES of them (here 5), as with the local engine; the lines after those get
    none, and the message names the last line that got one.  The Dask engine wrote a whole
    partition's records before it looked at the cap (a partition of 100 bytes holds about
    16 of these lines: 16 records for 5), and where the cap was reached inside the last
    partition it said nothing of the lines left without a record."""
    from autograd_cli.cli.batch import command

    path = tmp_path / "in.csv"
    path.write_text("x,y\n" + "".join(f"{k},{k + 1}\n" for k in range(60)))
    monkeypatch.setattr(command, "TIMEOUT_TAIL_LINES", 5)
    test_batch_dask._slow_after_first(monkeypatch, test_batch_dask._wait_for_the_deadline)
    expr = "x*y"
    got = dask(cli, scheduler, path, "--expr", expr, "--partition-size", "100", "--timeout", "1")
    assert got.code == 1 and "stopped after the --timeout of 1 s" in got.err
    limited = [d for d in got.docs if d.get("error", {}).get("kind") == "limit"]
    assert len(limited) == 5, got.err
    assert got.docs[-5:] == limited  # the tail: after the finished lines, in order
    last = limited[-1]["line"]
    assert "5 of them not finished" in got.err
    assert f"reading stopped after line {last}:" in got.err, (last, got.err)


def test_a_timeout_tail_that_fills_the_cap_at_a_partition_end(
    tmp_path, cli, scheduler, monkeypatch
):
    """The cap reached exactly at the end of a partition's lines: the next partition's lines
    get no record, and the message still says where reading stopped (the branch that finds
    no room left before a chunk; the test above reaches the cap inside a chunk).

    The cap is set to the line count of the first partition not finished (partition 2,
    measured as the engine measures it: [4 + 100, 4 + 200) moved to line starts)."""
    from autograd_cli.cli.batch import command, dask_parts

    path = tmp_path / "in.csv"
    path.write_text("x,y\n" + "".join(f"{k},{k + 1}\n" for k in range(10, 70)))
    size = path.stat().st_size
    bounds = list(range(4, size, 100)) + [size]
    lines = dask_parts.measure(str(path), bounds[1], bounds[2])[2]
    assert 10 < lines < 20 and len(bounds) > 3  # partitions after it are left
    monkeypatch.setattr(command, "TIMEOUT_TAIL_LINES", lines)
    test_batch_dask._slow_after_first(monkeypatch, test_batch_dask._wait_for_the_deadline)
    got = dask(cli, scheduler, path, "--expr", "x*y", "--partition-size", "100", "--timeout", "1")
    assert got.code == 1 and "stopped after the --timeout of 1 s" in got.err
    limited = [d for d in got.docs if d.get("error", {}).get("kind") == "limit"]
    assert len(limited) == lines and got.docs[-lines:] == limited, got.err
    last = limited[-1]["line"]
    assert f"{lines} of them not finished" in got.err
    assert f"reading stopped after line {last}:" in got.err, (last, got.err)
    assert last < 61  # lines after it were left: 60 data lines end at line 61
