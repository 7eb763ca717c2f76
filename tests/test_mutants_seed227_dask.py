"""The Dask engine's survivors of ``bench/mutate.py`` with seed 227 (bench/results/
mutate-seed227.json); the others are in test_mutants_seed227.py.  The expected outcome is the
local engine's on the same input.  Skipped where Dask is not installed.
"""

from __future__ import annotations

import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask")

import test_batch_dask  # noqa: E402

cli = test_batch_dask.cli
dask = test_batch_dask.dask


@pytest.mark.parametrize(
    ("name", "text", "argv", "message"),
    [
        (
            "in.csv",
            "x,y\n1,2\n",
            ["--expr", "x*y", "--op", "taylor", "--method", "bfgs"],
            "--method applies to --op minimize, not --op taylor",
        ),
        (
            "in.jsonl",
            '{"expr": "x**2", "vars": {"x": 1}}\n',
            ["--op", "minimize", "--max-iter", "0"],
            "--max-iter must be 1 to 1,000,000, not 0",
        ),
    ],
)
def test_the_analysis_settings_are_checked_before_any_work(
    tmp_path, cli, scheduler, name, text, argv, message
):
    """kills cli/batch/dask.py:349: command.check_settings(opts, ...) -> pass.

    docs/batch.md: the command line is checked before any input is read, a bad one is a
    usage error (exit 2) and no line is written, whichever engine.  --method with --op taylor
    on CSV (a setting of another op), and --max-iter 0 on JSONL (out of range): the local
    engine refuses both; the mutant's Dask engine ran the first (exit 0, --method ignored)
    and gave the second's line an error record (exit 1)."""
    path = tmp_path / name
    path.write_text(text)
    local = cli("batch", path, *argv)
    assert local.code == 2 and message in local.err and local.out == "", local
    got = dask(cli, scheduler, path, *argv)
    assert got.code == 2 and message in got.err, got
    assert got.out == ""


def test_a_timeout_tail_cut_inside_the_only_partition(tmp_path, cli, scheduler, monkeypatch):
    """kills cli/batch/dask.py:643: run.parts[0].label -> run.parts[1].label.

    One small file is one partition.  Every partition here waits past the --timeout before
    it evaluates, so after the deadline each of its lines gets an error record of kind limit,
    at most TIMEOUT_TAIL_LINES of them (here 5: lines 2 to 6 of 21), and the message says
    where reading stopped, without a file name (one input file).  The mutant looked for the
    file label on a second partition, which one file of 20 lines does not have (an internal
    error)."""
    got = test_batch_dask.late_past_the_timeout(
        cli, scheduler, tmp_path, monkeypatch, rows=20, tail=5
    )
    assert "0 line(s) written" not in got.err and "5 of them not finished" in got.err
    assert "reading stopped after line 6: the lines after it" in got.err, got.err
