"""The Dask engine's survivors of ``bench/mutate.py`` seed 113 (bench/results/mutate-seed113.json).

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from the local
engine (the Dask engine's reference, line for line, docs/batch.md) or from working them out by
hand, never from the code under test.  Skipped where Dask is not installed.  The fixtures
(``cli``, ``scheduler``: a local cluster of threads for the module) are conftest's.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask")

from autograd_cli.cli.batch import dask as batch_dask  # noqa: E402
from autograd_cli.cli.batch import dask_parts  # noqa: E402


def _dask(cli, scheduler, *argv):
    return cli("batch", *argv, "--engine", "dask", "--scheduler", scheduler)


@pytest.mark.parametrize("lead", ["\n", "\n\n", "\r\n"])
def test_a_csv_whose_header_follows_blank_lines_keeps_its_first_data_line(
    tmp_path, cli, scheduler, lead
):
    """kills cli/batch/dask_parts.py:278: pos = 0 -> pos = 1 (in _skip_lines).

    Blank lines before a CSV's header are skipped (the header is the first non-blank line),
    and the data starts on the line after it.  The Dask engine finds that line's byte offset
    by counting lines from byte 0; the mutant counted from byte 1, so a blank first line (its
    line end at byte 0) was never seen and the first data line was taken for the header's
    end: it had no record, and the next line was written under its number.  By hand: x*y of
    (1, 2) and (3, 4) is 2 and 12."""
    path = tmp_path / "in.csv"
    path.write_bytes(lead.encode() + b"x,y\n1,2\n3,4\n")
    local = cli("batch", path, "--expr", "x*y")
    assert local.code == 0, local.err
    first = lead.count("\n") + 2
    assert [(d["line"], d["value"]) for d in local.docs] == [(first, 2.0), (first + 1, 12.0)]
    got = _dask(cli, scheduler, path, "--expr", "x*y")
    assert got.code == 0, got.err
    assert got.out == local.out


def test_a_parquet_group_cut_by_the_timeout_gets_limit_records_after_its_last_written_row():
    """kills cli/batch/dask.py:656: first = part.first_line if after is None else after + 1
    -> after - 1.

    After the --timeout, a partition whose task wrote its lines up to line ``after`` and then
    stopped gets a ``limit`` record for each line after that one, and only those (its lines
    up to ``after`` are written already; _limit_records' docstring).  A Parquet row group of
    rows numbered 1 to 5, written up to row 3: rows 4 and 5.  The mutant gave rows 2 to 5, two
    lines twice."""
    part = dask_parts.Part(0, "in.parquet", "parquet", 0, 5, first_line=1)
    stop = dask_parts.WorkerStop(stoppable=False)
    chunks = list(batch_dask._limit_records(part, "late", stop, after=3))
    assert [numbers for numbers, _ in chunks] == [[4, 5]]
    docs = [json.loads(text) for text in chunks[0][1]]
    assert [(d["line"], d["error"]["kind"], d["error"]["message"]) for d in docs] == [
        (4, "limit", "late"),
        (5, "limit", "late"),
    ]
    whole = list(batch_dask._limit_records(part, "late", stop))
    assert [numbers for numbers, _ in whole] == [[1, 2, 3, 4, 5]]
