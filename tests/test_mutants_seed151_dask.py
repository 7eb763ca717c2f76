"""The Dask engine's survivor of ``bench/mutate.py`` with seed 151 (bench/results/
mutate-seed151.json); the others are in test_mutants_seed151.py.  Expected lines come from
the local engine (the Dask engine's reference, line for line).  Skipped where Dask is not
installed.
"""

from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask")

import test_batch_dask  # noqa: E402
import test_mutants_seed71_dask as seed71  # noqa: E402

from autograd_cli.cli.batch import dask as batch_dask  # noqa: E402
from autograd_cli.cli.batch import dask_parts  # noqa: E402
from autograd_cli.cli.batch import engine as batch_engine  # noqa: E402

cli = test_batch_dask.cli
dask = test_batch_dask.dask

_REAL_EVALUATE = dask_parts.evaluate_part


def _evaluate_then_linger(part, *args):
    """The worker's task, which hands back what it finished half a second after its deadline
    stopped it (a slow worker): the client's own --timeout has run out by then."""
    out = _REAL_EVALUATE(part, *args)
    if threading.current_thread() is not threading.main_thread() and not out.finished:
        time.sleep(0.5)
    return out


def test_after_the_timeout_the_client_waits_its_grace_for_lines_a_worker_finished(
    tmp_path, cli, scheduler, monkeypatch
):
    """kills cli/batch/dask.py:613: if future is not None and not future.done() and ... ->
    if future is not None and future.done() and ...

    The --timeout runs out once a worker has finished two lines of a chunk; the worker
    hands them back half a second later.  The client waits up to TIMEOUT_GRACE for a task
    not done yet, so those two lines are written with their own results and the four
    others get limit records (nothing already computed is lost).  The mutant waited only
    for tasks already done: the two finished lines got limit records too."""
    path = tmp_path / "in.jsonl"
    path.write_text("".join(f'{{"expr": "x*{k} + 1", "vars": {{"x": 2}}}}\n' for k in range(6)))
    local = cli("batch", path).out.splitlines()
    assert len(local) == 6
    monkeypatch.setattr(batch_engine.Runner, "check", seed71._check_waiting_for_the_deadline)
    monkeypatch.setattr(dask_parts, "evaluate_part", _evaluate_then_linger)
    monkeypatch.setattr(batch_dask, "TIMEOUT_GRACE", 10.0)
    got = dask(cli, scheduler, path, "--timeout", "1")
    assert got.code == 1, got.err
    assert got.out.splitlines()[:2] == local[:2]
    assert [d["line"] for d in got.docs] == [1, 2, 3, 4, 5, 6]
    assert all(d["error"]["kind"] == "limit" for d in got.docs[2:])
    assert "6 line(s) written, 4 of them not finished" in got.err
