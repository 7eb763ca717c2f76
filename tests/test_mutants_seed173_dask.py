"""The Dask engine's survivor of ``bench/mutate.py`` with seed 173 (bench/results/
mutate-seed173.json); the others are in test_mutants_seed173.py.  Skipped where Dask is not
installed.
"""

from __future__ import annotations

import os

import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask")

import test_batch_dask  # noqa: E402

from autograd_cli.cli.batch import dask_parts  # noqa: E402

cli = test_batch_dask.cli


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_a_run_that_fails_to_write_tells_in_process_workers_to_stop(tmp_path, cli):
    """kills cli/batch/dask.py:309: dask_parts.STOP.set() -> pass.

    A run whose output cannot be written (/dev/full) ends with an error (exit 1) while
    in-process workers (threads, --scheduler in-process) may still be evaluating lines
    nobody will read: the run sets the stop flag they check between lines, as a timeout or
    Ctrl-C does.  The mutant left it clear (a run clears it when it starts), and such a
    worker would go on to the end of its partition."""
    path = tmp_path / "in.csv"
    path.write_text("x\n1\n2\n", encoding="utf-8")
    argv = ["batch", path, "--expr", "x*x", "--engine", "dask", "--scheduler", "in-process"]
    r = cli(*argv, "-o", "/dev/full")
    assert r.code == 1 and "No space left on device" in r.err
    assert dask_parts.STOP.is_set()
