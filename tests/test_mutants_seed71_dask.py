"""The Dask engine's survivors of ``bench/mutate.py`` with seed 71 (bench/results/mutate-seed71.json).

Each test's comment names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from the local
engine (the Dask engine's reference, line for line, docs/batch.md) or from counting by hand,
never from the code under test.  Skipped where Dask is not installed.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

distributed = pytest.importorskip("distributed")
pytest.importorskip("dask")

import test_batch_dask  # noqa: E402

from autograd_cli.cli.batch import dask as batch_dask  # noqa: E402
from autograd_cli.cli.batch import dask_parts  # noqa: E402
from autograd_cli.cli.batch import engine as batch_engine  # noqa: E402
from autograd_cli.cli.batch import io as batch_io  # noqa: E402

# the Dask engine's test fixtures (a local cluster of threads for the module, the runner)
cli = test_batch_dask.cli
dask = test_batch_dask.dask
EXPR = test_batch_dask.EXPR

_REAL_EVALUATE = dask_parts.evaluate_part
_REAL_MEASURE = dask_parts.measure
_REAL_CHECK = batch_engine.Runner.check


def _jsonl(tmp_path, count: int):
    """``count`` JSONL lines of 18 bytes each (x from 10): 5 lines are 90 bytes."""
    path = tmp_path / "in.jsonl"
    path.write_text("".join(f'{{"x": {10 + k}, "y": 2}}\n' for k in range(count)))
    assert all(len(line) == 18 for line in path.read_bytes().splitlines(keepends=True))
    return path


# ---- --scheduler in-process: threads in this process --------------------------------------

_PIDS: list = []


def _evaluate_noting_the_process(part, *args):
    _PIDS.append(os.getpid())
    return _REAL_EVALUATE(part, *args)


def test_scheduler_in_process_runs_the_partitions_in_this_process(tmp_path, cli, monkeypatch):
    # kills cli/batch/dask.py:155: in_process = engine.scheduler == IN_PROCESS -> !=
    #   (--scheduler in-process started a cluster of worker processes, and the default a
    #   cluster of threads).  --scheduler in-process is "a local cluster of threads in this
    #   process" (tests, debugging): what this process sets up (here a wrapper of the
    #   partition's task) is what its workers run.
    path = _jsonl(tmp_path, 12)
    local = cli("batch", path, "--expr", EXPR)
    monkeypatch.setattr(dask_parts, "evaluate_part", _evaluate_noting_the_process)
    _PIDS.clear()
    got = cli(
        "batch", path, "--expr", EXPR, "--engine", "dask", "--scheduler", "in-process",
        "--workers", "2", "--partition-size", "90",
    )  # fmt: skip
    assert got.code == 0 and got.out == local.out, got.err
    # 12 lines of 18 bytes, 90 bytes a partition: 3 partitions, each run here
    assert _PIDS == [os.getpid()] * 3


# ---- Ctrl-C: the partitions finished by then are all written, in order ----------------------

_FINISHED = [threading.Event() for _ in range(3)]


def _evaluate_first_one_last(part, *args):
    """Partition 0 finishes after partitions 1 and 2 (the workers are threads here)."""
    if part.index == 0:
        for event in _FINISHED[1:]:
            event.wait(10)
        time.sleep(0.5)  # their results reach the client meanwhile
    done = _REAL_EVALUATE(part, *args)
    if part.index < len(_FINISHED):
        _FINISHED[part.index].set()
    return done


class _CtrlCAfterFirstWrite:
    """A progress display (off) through which Ctrl-C arrives once the first partition is
    written: partitions 1 and 2 are finished by then."""

    def __init__(self, enabled, total):
        self.sent = False

    def update(self, position, lines):
        if not self.sent:
            self.sent = True
            time.sleep(0.5)  # a wide margin for partitions 1 and 2's results to arrive
            os.kill(os.getpid(), signal.SIGINT)  # this (the main) thread's handler: a stop

    def stop(self):
        pass


def test_ctrl_c_writes_every_partition_finished_before_it(tmp_path, cli, scheduler, monkeypatch):
    # kills cli/batch/dask.py:569: run.next += 1 -> run.next -= 1   (in _drain: after a stop
    #   signal the partitions already finished are written in order; the mutant wrote the
    #   first of them and stopped, losing lines already computed)
    path = _jsonl(tmp_path, 40)
    local = cli("batch", path, "--expr", EXPR).out.splitlines()
    assert len(local) == 40
    for event in _FINISHED:
        event.clear()
    monkeypatch.setattr(dask_parts, "evaluate_part", _evaluate_first_one_last)
    monkeypatch.setattr(batch_io, "Progress", _CtrlCAfterFirstWrite)
    out = tmp_path / "out.jsonl"
    saved = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        # 18-byte lines, 90 bytes a partition: 5 lines each, 8 partitions
        got = dask(cli, scheduler, path, "--expr", EXPR, "--partition-size", "90", "-o", out)
    finally:
        signal.signal(signal.SIGINT, saved)
    assert got.code == 130 and "interrupted;" in got.err, got.err
    written = out.read_text().splitlines()
    assert written == local[: len(written)]
    # partition 0 (written before Ctrl-C), then 1 and 2 (finished before it): 15 lines at least
    assert 15 <= len(written) < 40, got.err
    assert f"{len(written)} complete line(s) written" in got.err


# ---- --timeout while the line ends are still being counted ----------------------------------


def _measure_slowly_on_workers(path, start, end):
    """Pass 1 on a worker: the ranges after the first are counted only after the stop (the
    client's own calls, on its main thread, as usual)."""
    if start > 0 and threading.current_thread() is not threading.main_thread():
        dask_parts.STOP.wait(10)  # set by the client once the --timeout ran out
    return _REAL_MEASURE(path, start, end)


def test_timeout_while_counting_lines_still_gives_every_line_its_record(
    tmp_path, cli, scheduler, monkeypatch
):
    # kills cli/batch/dask.py:607: part.range = dask_parts.measure(part.path, part.start,
    #   part.end) -> measure(part.start, part.path, part.end)   (the --timeout ran out before
    #   the workers had counted the line ends of every range: the client counts the rest
    #   itself, and every line read gets its record, numbered as the local engine numbers it)
    path = tmp_path / "in.csv"
    # 600 data lines of 20 bytes after a 4-byte header; 4000 bytes a partition: 4 of them
    path.write_text("x,y\n" + "".join(f"{k:09d},{k:09d}\n" for k in range(600)))
    local = cli("batch", path, "--expr", EXPR)
    assert local.code == 0 and len(local.docs) == 600
    monkeypatch.setattr(dask_parts, "measure", _measure_slowly_on_workers)
    got = dask(cli, scheduler, path, "--expr", EXPR, "--partition-size", "4000", "--timeout", "1")
    assert got.code == 1, got.err
    assert "stopped after the --timeout of 1 s: 600 line(s) written, 600 of them" in got.err
    assert [d["line"] for d in got.docs] == [d["line"] for d in local.docs]
    assert all(d["error"]["kind"] == "limit" for d in got.docs)


# ---- --timeout in the middle of a chunk: the lines done before it are kept ------------------


def _check_waiting_for_the_deadline(self):
    """Once two lines of a chunk are done, the --timeout runs out (the worker's check waits
    for its deadline: then it says stop)."""
    chunk = self.current
    if chunk is not None and chunk.done_prefix() >= 2:
        until = time.monotonic() + 10
        while not self.interrupt.requested and time.monotonic() < until:
            time.sleep(0.01)
    return _REAL_CHECK(self)


def test_timeout_mid_chunk_keeps_the_lines_finished_before_it(
    tmp_path, cli, scheduler, monkeypatch
):
    # kills cli/batch/dask_parts.py:461: _keep(done, keep, runner, chunk, chunk.done_prefix())
    #   -> pass   (a partition stopped by the --timeout in the middle of a chunk dropped the
    #   chunk's lines already evaluated: they got limit records instead of their results;
    #   nothing already computed is lost)
    path = tmp_path / "in.jsonl"
    # a different expression on each line: evaluated one line at a time, in order
    path.write_text("".join(f'{{"expr": "x*{k} + 1", "vars": {{"x": 2}}}}\n' for k in range(6)))
    local = cli("batch", path).out.splitlines()
    assert len(local) == 6
    monkeypatch.setattr(batch_engine.Runner, "check", _check_waiting_for_the_deadline)
    monkeypatch.setattr(batch_dask, "TIMEOUT_GRACE", 10.0)  # wide margin for the worker's lines
    got = dask(cli, scheduler, path, "--timeout", "1")
    assert got.code == 1 and "stopped after the --timeout of 1 s" in got.err, got.err
    lines = got.out.splitlines()
    assert lines[:2] == local[:2]  # done before the deadline: their own results
    assert [d["line"] for d in got.docs] == [1, 2, 3, 4, 5, 6]
    assert all(d["error"]["kind"] == "limit" for d in got.docs[2:])
    assert "6 line(s) written, 4 of them not finished" in got.err
