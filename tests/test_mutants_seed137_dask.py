"""The Dask engine's survivors of ``bench/mutate.py`` seed 137 (bench/results/
mutate-seed137.json).

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from the local
engine (the Dask engine's reference) or from working them out by hand, never from the code
under test.  Skipped where Dask is not installed.  The fixtures (``cli``, ``scheduler``: a
local cluster of threads for the module) are conftest's.
"""

from __future__ import annotations

import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask")

from autograd_cli.cli.batch import dask as batch_dask  # noqa: E402
from autograd_cli.cli.batch import dask_parts  # noqa: E402
from autograd_cli.cli.batch import io as batch_io  # noqa: E402


class _Bar:
    """Stands for batch_io.Progress: keeps the total and every position shown."""

    made: list = []

    def __init__(self, enabled, total):
        self.total, self.positions = total, []
        _Bar.made.append(self)

    def update(self, position, lines):
        self.positions.append((position, lines))

    def stop(self):
        pass


def test_the_progress_bar_counts_the_bytes_of_the_partitions_written(
    tmp_path, cli, scheduler, monkeypatch
):
    """kills cli/batch/dask.py:528: done_weight += part.weight -> done_weight -= part.weight.

    --progress shows how much of the input is done: after each partition written, the bytes
    of every partition written so far, out of the input's total (the bar's total), and the
    lines written.  A CSV of a header and 200 lines in partitions of 512 bytes: the positions
    grow to the total of the data's bytes, and the lines to 200."""
    monkeypatch.setattr(_Bar, "made", [])
    monkeypatch.setattr(batch_io, "Progress", _Bar)
    path = tmp_path / "in.csv"
    body = "".join(f"{i},{i + 1}\n" for i in range(200))
    path.write_text("x,y\n" + body)
    argv = ["batch", path, "--expr", "x*y", "--engine", "dask", "--scheduler", scheduler]
    r = cli(*argv, "--partition-size", "512", "--progress")
    assert r.code == 0, r.err
    assert len(r.out.splitlines()) == 200
    (bar,) = _Bar.made
    assert bar.total == len(body.encode())
    positions = [p for p, _ in bar.positions]
    assert len(positions) >= len(body) // 512  # one per partition written
    assert positions == sorted(positions) and positions[0] > 0
    assert bar.positions[-1] == (len(body.encode()), 200)


class _Interrupt:
    signum = None
    exit_code = 130
    state = "working"

    def stop_timer(self):
        pass


class _Client:
    def __init__(self):
        self.cancelled = []

    def cancel(self, futures):
        self.cancelled.extend(futures)


def test_a_stopped_run_cancels_the_tasks_still_on_the_cluster(monkeypatch):
    """kills cli/batch/dask.py:391: _cancel(run, client) -> pass.

    After a stop signal (or the --timeout) the partitions submitted but not written, and the
    line counts still being measured, are cancelled on the cluster: on a shared scheduler
    (--scheduler) they would otherwise run on until the client disconnects.  The run's
    execution stops at once (a Stop as a signal raises it); the finished partitions are
    drained (none here), and the client is asked to cancel every future left."""

    def stopped(run, client):
        raise batch_io.Stop()

    monkeypatch.setattr(batch_dask, "_execute", stopped)
    monkeypatch.setattr(batch_dask, "_drain", lambda run: None)

    class Run:
        interrupt = _Interrupt()
        futures = {3: "partition 3", 4: "partition 4"}
        measures = {5: "count of 5"}

    client = _Client()
    try:
        code = batch_dask._execute_until_stopped(Run(), client)
    finally:
        dask_parts.STOP.clear()
    assert code == 130
    assert client.cancelled == ["partition 3", "partition 4", "count of 5"]
