"""The Dask engine's survivor of ``bench/mutate.py`` with seed 167 (bench/results/
mutate-seed167.json); the others are in test_mutants_seed167.py.  Skipped where Dask is not
installed.
"""

from __future__ import annotations

import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask")

import test_batch_dask  # noqa: E402

cli = test_batch_dask.cli


def test_the_local_cluster_a_run_starts_is_closed_when_it_ends(tmp_path, cli, monkeypatch):
    """kills cli/batch/dask.py:182: cluster.close() -> pass.

    A run without --scheduler ADDRESS starts its own local cluster (here in-process:
    threads); when the run ends the cluster is closed, its workers and scheduler stopped,
    not left running in the process (a library caller, the REPL, a test run).  The mutant
    closed the client only."""
    started = test_batch_dask.recorded_clusters(monkeypatch)
    path = tmp_path / "in.csv"
    path.write_text("x\n1\n2\n", encoding="utf-8")
    r = cli("batch", path, "--expr", "x*x", "--engine", "dask", "--scheduler", "in-process")
    assert r.code == 0 and [d["value"] for d in r.docs] == [1.0, 4.0], r.err
    assert len(started) == 1
    assert started[0][1].status.name == "closed"
