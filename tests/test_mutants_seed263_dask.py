"""The Dask engine's survivors of ``bench/mutate.py`` with seeds 263 and 293 (bench/results/
mutate-seed263.json, mutate-seed293.json, 10 mutants a target).  Skipped where Dask is not
installed.
"""

from __future__ import annotations

import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask")

import test_batch_dask  # noqa: E402

from autograd_cli.cli.batch import io as batch_io  # noqa: E402

cli = test_batch_dask.cli
dask = test_batch_dask.dask


def test_the_progress_bar_is_gone_before_the_output_is_completed(
    tmp_path, cli, scheduler, monkeypatch
):
    """kills cli/batch/dask.py:321: run.stop_progress() -> pass.

    The bar (stderr) is stopped before the output is completed (flushed to stdout, or the
    temporary file renamed over -o's target): on a terminal the last lines never print
    over the bar's line.  The order of the two is recorded (the bar itself not drawn)."""
    path = tmp_path / "in.csv"
    path.write_text("x\n1\n2\n", encoding="utf-8")
    events = []

    class Recorded(batch_io.Progress):
        def __init__(self, enabled, total):
            super().__init__(False, total)

        def stop(self):
            events.append("bar stopped")
            super().stop()

    real_commit = batch_io.Sink.commit

    def commit(self):
        events.append("output completed")
        real_commit(self)

    monkeypatch.setattr(batch_io, "Progress", Recorded)
    monkeypatch.setattr(batch_io.Sink, "commit", commit)
    out = tmp_path / "out.jsonl"
    got = dask(cli, scheduler, path, "--expr", "x", "--op", "eval", "-o", out)
    assert got.code == 0, got.err
    assert events[:2] == ["bar stopped", "output completed"], events
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_the_command_line_is_checked_once_before_any_input_is_read(tmp_path, cli, scheduler, fmt):
    """kills cli/batch/dask.py:369 (seed 293): command.check_command_line(program, opts, ...)
    -> pass.

    docs/batch.md: the command line is checked before any input is read, and an option that
    would fail every line is one usage error (exit 2), not an error on every line; the Dask
    engine says it as the local one does (``--order 2`` with ``--op hessian``).  Without the
    check it evaluated every line and exited 0."""
    path = tmp_path / f"in.{fmt}"
    path.write_text("x,y\n1,2\n" if fmt == "csv" else '{"x": 1, "y": 2}\n', encoding="utf-8")
    argv = (path, "--expr", "x*y", "--op", "hessian", "--order", "2")
    local = cli("batch", *argv)
    got = dask(cli, scheduler, *argv)
    message = "--order applies to --op grad and --op diff and --op taylor, not --op hessian"
    assert local.code == 2 and message in local.err, local.err
    assert got.code == 2 and message in got.err, got.err
    assert got.out == ""
