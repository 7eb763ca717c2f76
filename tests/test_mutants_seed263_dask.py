"""The Dask engine's survivors of ``bench/mutate.py`` with seed 263 (bench/results/
mutate-seed263.json, 10 mutants a target).  Skipped where Dask is not installed.
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
