"""Tests written from the survivors of ``bench/mutate.py`` seed 97 (drawn as a measurement
seed on 2026-12-05; these tests came after it was measured) in sparsity and the Dask engine:
each pins a behaviour one surviving mutant changed.  The equivalent ones are in
``bench/mutate_equivalent.txt``."""

from __future__ import annotations

import types

import pytest


def test_the_hessian_pattern_is_sized_before_it_is_made(cli):
    # kills core/sparsity.py:543: limits.check(int((counts_p * counts_q).sum()), 24, ...) ->
    #   counts_p / counts_q.  sum(x)*sum(x) over 1000 entries: one product whose two factors
    #   each read all 1000 entries, so its Hessian pattern holds 1000 * 1000 pairs (by hand),
    #   asked of the memory limit before the pattern is built (the quotient would ask for one)
    ones = "[" + ", ".join(["1"] * 1000) + "]"
    r = cli("hessian", "--sparse", "sum(x)*sum(x)", "--x", ones, "--max-memory", "10M", "--json")
    assert r.code == 1, r.out
    error = r.json["error"]
    assert error["kind"] == "limit"
    assert "the Hessian's sparsity pattern" in error["message"]
    assert "1,000,000 numbers" in error["message"]
    # under a limit it fits, the Hessian: every entry 2 (d2/dxi dxj of (sum x)**2)
    r = cli("hessian", "--sparse", "sum(x)*sum(x)", "--x", ones, "--max-memory", "64M", "--json")
    assert r.code == 0, r.out


def test_the_automatic_partition_size_is_at_least_one_mebibyte():
    # kills cli/batch/dask.py:62: MIN_PARTITION_BYTES = 1 << 20 -> 1 << 21.  Without
    #   --partition-size a text input is cut into pieces of its size over 4 per thread, but no
    #   smaller than 1 MiB (docs/batch.md): 3 MiB of rows on one thread (3/4 MiB a piece by
    #   the rule) make 3 partitions of 1 MiB, not 2 of 1.5 MiB
    pytest.importorskip("distributed")
    pytest.importorskip("dask")
    from autograd_cli.cli.batch import dask as batch_dask
    from autograd_cli.cli.batch import dask_parts

    body = 3 << 20
    part = dask_parts.Part(0, "in.jsonl", "jsonl", 0, body, 1, None)
    run = types.SimpleNamespace(parts=[part], engine=dask_parts.DaskOptions())
    batch_dask._split(run, 1)
    assert len(run.parts) == 3
    assert run.parts[0].start == 0 and run.parts[-1].end == body
    assert all(abs(p.end - p.start - (1 << 20)) <= 4 for p in run.parts)


def test_a_parquet_file_with_two_columns_of_one_name_is_refused(tmp_path, cli):
    # kills cli/batch/dask_parts.py:320: raise options.UsageError(f"batch: {path!r} has two
    #   columns of the same name") -> pass.  Which column is x?  The input is refused, exit 2
    #   (a usage error), as a CSV header naming a column twice is
    pytest.importorskip("distributed")
    pytest.importorskip("dask")
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.Table.from_arrays([pa.array([1.0, 2.0]), pa.array([3.0, 4.0])], names=["x", "x"])
    path = tmp_path / "twice.parquet"
    pq.write_table(table, path)
    r = cli("batch", str(path), "--expr", "x**2", "--engine", "dask", "--scheduler", "in-process")
    assert r.code == 2, (r.out, r.err)
    assert "has two columns of the same name" in r.err
    assert r.out == ""
