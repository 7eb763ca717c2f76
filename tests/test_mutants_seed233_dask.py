"""The Dask engine's survivor of ``bench/mutate.py`` with seed 233 (bench/results/
mutate-seed233.json, 10 mutants a target); the others were equivalent.  Skipped where Dask
is not installed.
"""

from __future__ import annotations

import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask")

import test_batch_dask  # noqa: E402

cli = test_batch_dask.cli
dask = test_batch_dask.dask


def test_a_timeout_tail_that_holds_every_line_says_nothing_of_lines_not_reached(
    tmp_path, cli, scheduler, monkeypatch
):
    """kills cli/batch/dask.py:642: if cut and last is not None -> if cut or last is not None.

    After the --timeout every unfinished line gets an error record of kind limit, up to
    TIMEOUT_TAIL_LINES; only where that cap cut the tail does the message add where reading
    stopped ("the lines after it were not reached").  Five lines under a cap of 10: each gets
    its record, and the message says so and no more.  The mutant
    added the "reading stopped" clause whenever a record was written."""
    got = test_batch_dask.late_past_the_timeout(
        cli, scheduler, tmp_path, monkeypatch, rows=5, tail=10
    )
    assert "5 of them not finished" in got.err and "reading stopped" not in got.err, got.err
