"""The Dask engine's survivors of ``bench/mutate.py`` seed 103 (bench/results/mutate-seed103.json).

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from the local
engine (the Dask engine's reference, line for line, docs/batch.md), from docs/batch.md or from
counting by hand, never from the code under test.  Skipped where Dask is not installed.  The
fixtures (``cli``, ``scheduler``: a local cluster of threads for the module) are conftest's.
"""

from __future__ import annotations

import json
import math
import types

import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask")

from autograd_cli.cli.batch import dask as batch_dask  # noqa: E402
from autograd_cli.cli.batch import dask_parts  # noqa: E402

MIB = 1 << 20


def _dask(cli, scheduler, *argv):
    return cli("batch", *argv, "--engine", "dask", "--scheduler", scheduler)


def test_the_automatic_partition_size_is_at_most_16_mib():
    """kills cli/batch/dask.py:63: MAX_PARTITION_BYTES = 16 << 20 -> 16 << 21.

    docs/batch.md: without --partition-size a text file is cut into ranges of a size "from the
    input's size and the cluster's threads, 1 MiB to 16 MiB".  256 MiB of JSONL on one thread
    asks for 256/4 = 64 MiB, so the cap decides: 16 ranges of 16 MiB (the mutant's cap of
    32 MiB made 8).  The planner only cuts byte ranges, so no such file is needed."""
    part = dask_parts.Part(0, "big.jsonl", "jsonl", 0, 256 * MIB, 1)
    run = types.SimpleNamespace(parts=[part], engine=types.SimpleNamespace(partition_size=None))
    batch_dask._split(run, 1)
    assert [(p.start, p.end) for p in run.parts] == [
        (k * 16 * MIB, (k + 1) * 16 * MIB) for k in range(16)
    ]
    assert [p.index for p in run.parts] == list(range(16))
    assert run.parts[0].first_line == 1 and run.parts[1].first_line is None


def test_a_minimize_setting_with_jsonl_input_is_no_usage_error(tmp_path, cli, scheduler):
    """kills cli/batch/dask.py:349: check_settings(opts, "csv" if fmt == "parquet" else fmt)
    -> "csv" if fmt != "parquet" else fmt.

    --method is a setting of the minimize lines.  With CSV input every line runs --op, so
    --method with --op grad is a usage error; a JSONL line picks its own op, so there it
    applies to the lines whose op is minimize and is no error.  The mutant checked JSONL input
    as CSV and refused the command (exit 2); the local engine runs it."""
    path = tmp_path / "in.jsonl"
    lines = [
        {"op": "minimize", "expr": "(x - 1)**2", "vars": {"x": 3}},
        {"expr": "x*y", "vars": {"x": 2, "y": 3}},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    local = cli("batch", path, "--method", "bfgs")
    assert local.code == 0, local.err
    got = _dask(cli, scheduler, path, "--method", "bfgs")
    assert (got.code, got.out) == (0, local.out), got.err
    assert got.docs[0]["method"] == "bfgs" and got.docs[1]["grad"] == {"x": 3.0, "y": 2.0}


def test_parquet_output_keeps_a_value_of_minus_infinity(tmp_path, cli, scheduler):
    """kills cli/batch/dask_parts.py:521: "-inf": -math.inf -> "-inf": math.inf.

    The JSONL output writes an infinite value as the text "-inf" or "inf"; the Parquet
    output's float columns must hold the number itself: log(x) at 0 is -inf, its gradient
    +inf.  The mutant read "-inf" as +inf."""
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "in.csv"
    path.write_text("x\n0\n1\n", encoding="utf-8")
    local = cli("batch", path, "--expr", "log(x)")
    assert local.code == 0 and local.docs[0]["value"] == "-inf", local.out
    out = tmp_path / "out.parquet"
    got = _dask(cli, scheduler, path, "--expr", "log(x)", "-o", out)
    assert got.code == 0, got.err
    rows = pq.read_table(out).to_pylist()
    assert [(r["line"], r["value"], r["grad_x"]) for r in rows] == [
        (2, -math.inf, math.inf),
        (3, 0.0, 1.0),
    ]
