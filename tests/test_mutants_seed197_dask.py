"""The Dask engine's survivor of ``bench/mutate.py`` seed 197 (bench/results/
mutate-seed197.json); the other real one is in tests/test_analysis.py
(``test_a_step_onto_a_bound_lands_on_the_bound_itself``).  Skipped where Dask is not
installed (the module under test is the Dask engine's).

Judged equivalent (bench/mutate_equivalent.txt): taylor_mode.py:358 (one more power of the
series after its last use), taylor_mode.py:670 (a reversed slice's start clamps), sparsity.py:452
(the extra entries are uncolored, -1, dropped by ``taken >= 0``), dask_parts.py:95 (every
partition's weight is set: Parquet's in _plan, text ranges' in _split).
"""

from __future__ import annotations

import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask")

from autograd_cli.cli.batch import dask_parts  # noqa: E402


def test_a_line_start_is_looked_for_at_most_the_scan_limit_on(tmp_path, monkeypatch):
    """kills cli/batch/dask_parts.py:231: f.read(min(_READ, stop - pos)) -> stop + pos.

    A partition boundary inside a line moves to the next line start, looked for at most
    _SCAN_LIMIT bytes on (past that the line runs away, and the worker before it reports
    it): the boundary then falls at the limit, not at a break found beyond it.  With the
    limit at 10 bytes, from byte 1 of twelve "a"s and a line end (byte 12): the scan stops
    at 1 + 10 = 11 and the line start at 13 is not seen; from byte 3 it is (3 + 10 = 13)."""
    monkeypatch.setattr(dask_parts, "_SCAN_LIMIT", 10)
    path = tmp_path / "in.csv"
    path.write_bytes(b"a" * 12 + b"\nz\n")
    with open(path, "rb") as f:
        assert dask_parts._line_start(f, 1, 15) == 11
        assert dask_parts._line_start(f, 3, 15) == 13
