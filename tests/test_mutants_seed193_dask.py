"""The Dask engine's survivor of ``bench/mutate.py`` seed 193 (bench/results/
mutate-seed193.json); the others are in test_mutants_seed193.py.  Skipped where Dask is not
installed (the module under test is the Dask engine's)."""

from __future__ import annotations

import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask")

from autograd_cli.cli.batch import dask_parts  # noqa: E402


def test_a_workers_byte_range_closes_its_file(tmp_path):
    """kills cli/batch/dask_parts.py:350: self.file.close() -> pass.

    A worker reads its partition through a byte range of the input file, which it closes
    when the partition is done: a long run over many partitions must not hold one open file
    a partition until the garbage collector finds them (a process has a limit on open
    files).  The range reads bytes [2, 5) and nothing after them; closed, its file is."""
    path = tmp_path / "in.csv"
    path.write_bytes(b"x\n1\n2\n3\n")
    r = dask_parts._Range(str(path), 2, 5)
    assert r.read() == b"1\n2" and r.read() == b""
    r.close()
    assert r.file.closed
