"""The survivors of ``bench/mutate.py`` seeds 61 and 67 in batch, sparsity, optimize and the
Dask engine that their first tests (tests/test_mutants_seed61.py, test_mutants_seed67.py)
left open: each test pins the behaviour one surviving mutant changed.

Each test's comment names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found).  The expected values come from the one-line commands (the
batch engines' reference), from the docstrings and docs/batch.md, or from counting by hand,
never from the code under test.  The Dask tests skip where Dask is not installed.
"""

from __future__ import annotations

import csv
import io
import json
import time
import types

import numpy as np
import pytest

from autograd_cli.grammar import parse

# ---- core/batch.py ------------------------------------------------------------------------------


def test_batched_cross_of_a_vector_and_a_stack_of_vectors_keeps_each_row_apart(tmp_path, cli):
    # kills core/batch.py:497: raise Unbatchable("operands of different per-row ranks") -> pass
    #   (seed 67).  cross(a, b) of a per-row vector a (3,) and a per-row stack b (2, 3)
    #   broadcasts a over b's rows in one row; batched as they are, a (B, 3) against b (B, 2, 3)
    #   aligns a's *batch* axis with b's stack axis, and with B == 2 NumPy broadcasts it
    #   without a word: row i got cross(a[j], b[i, j]), other rows' vectors.  Such operands
    #   must be evaluated row by row, so each line equals its single command.
    rows = [
        {"a": [1.0, 0.0, 0.0], "b": [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]},
        {"a": [0.0, 1.0, 0.0], "b": [[6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]},
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    expr = "sum(cross(a, b) * [[1, 2, 3], [4, 5, 6]])"
    got = cli("batch", path, "--expr", expr)
    assert got.code == 0, got.err
    for doc, row in zip(got.docs, rows):
        argv = ("--a", json.dumps(row["a"]), "--b", json.dumps(row["b"]), "--json")
        single = cli("grad", expr, *argv)
        assert single.code == 0, single.err
        assert {"line": doc["line"], **json.loads(single.out)} == doc
    # by hand, row 0: cross(e1, (0,1,2)) = (0,-2,1), cross(e1, (3,4,5)) = (0,-5,4)
    assert got.docs[0]["value"] == 0 * 1 - 2 * 2 + 1 * 3 + 0 * 4 - 5 * 5 + 4 * 6


def test_the_memory_limit_counts_every_element_of_a_batched_stack():
    # kills core/batch.py:238: return rows * len(shapes) * math.prod(shape) ->
    #   rows / len(shapes) * ...   (seed 61).  [x, v, w] of a number and two 2-vectors per row
    #   is a (B, 3, 2) array over B rows: its size, asked of the memory limit before it is
    #   made, is 6B numbers, not 2B/3.  Past the limit the batch raises LimitError (the batch
    #   command then evaluates the rows one by one).
    from autograd_cli.core import limits
    from autograd_cli.core.batch import evaluate_batch
    from autograd_cli.core.errors import LimitError

    B = 1000
    columns = {"x": np.arange(float(B)), "v": np.ones((B, 2)), "w": np.full((B, 2), 2.0)}
    program = parse("sum([x, v, w])")
    # the columns take 8,000 and 16,000 bytes, the stack 48,000
    with limits.using(40_000), pytest.raises(LimitError, match="6,000 numbers"):
        evaluate_batch(program, columns, B)
    with limits.using(48_000):
        r = evaluate_batch(program, columns, B)
    np.testing.assert_array_equal(r.value, 2 * np.arange(float(B)) + 6)


# ---- core/optimize.py ---------------------------------------------------------------------------


def test_newton_halves_its_step_at_most_sixty_times(cli):
    # kills core/optimize.py:593: def _halving(theta, step, accept, tries=60): -> tries=61
    #   (seed 61).  Damped Newton tries theta + step, + step/2, ..., + step/2**59 (60 tries)
    #   and stops ("no step reduces the residual") when none is smaller.  Here F(x) =
    #   1 + x + 10*(x < -1e-18) - 0.5*(x < 0) at x = 0: F = 1, F' = 1, the step is -1; every
    #   step down to 2**-59 (1.7e-18) lands past -1e-18 (F = 10.5 - t), and only a 61st try,
    #   2**-60 (8.7e-19), would land on F = 0.5.
    expr = "1 + x + 10*(x < -1e-18) - 0.5*(x < 0)"
    out = cli("solve", expr, "--x", "0", "--json")
    doc = json.loads(out.out)
    assert out.code == 1 and not doc["converged"]
    assert doc["iterations"] == 0 and doc["x"] == {"x": 0.0} and doc["residual"] == 1.0
    assert doc["message"].startswith("no step reduces the residual")


# ---- core/sparsity.py ---------------------------------------------------------------------------


def _arrows(hubs: int, n: int):
    """The symmetric pattern of n variables of which the first ``hubs`` meet every variable
    (an arrowhead of several heads), the others only those."""
    sp = pytest.importorskip("scipy.sparse")
    dense = np.zeros((n, n), dtype=bool)
    dense[:hubs, :] = dense[:, :hubs] = True
    dense[np.arange(n), np.arange(n)] = True
    return sp.csr_matrix(dense)


def test_a_star_coloring_is_not_tried_past_its_work_limit():
    # kills core/sparsity.py:328: STAR_WORK_MAX = 5 * 10**8 -> 5 * 10**9   (seed 67).  The star
    #   coloring (a Python loop) is tried only up to 5 * 10**8 steps, the sum of the columns'
    #   squared degrees off the diagonal (a second or so); past it the Hessian is colored by
    #   columns.  An arrowhead of 257 heads (too many to color apart as hubs) on 1400
    #   variables takes 257 * 1399**2 + 1143 * 257**2 = 5.8 * 10**8 steps: its star coloring
    #   (a color per head, one for the rest: 258) is not tried, the columns take 1400
    #   (the mutant spends some ten seconds on it and answers 258).
    from autograd_cli.core.sparsity import HUBS_MAX, coloring, structurally_orthogonal

    small = coloring(_arrows(3, 40), "hessian")
    assert (small.mode, small.k) == ("star", 4)  # far below the limit: the star coloring wins
    hubs, n = HUBS_MAX + 1, 1400
    assert 5 * 10**8 < hubs * (n - 1) ** 2 + (n - hubs) * hubs**2 < 5 * 10**9
    pattern = _arrows(hubs, n)
    big = coloring(pattern, "hessian")
    assert (big.mode, big.k) == ("columns", n)
    assert structurally_orthogonal(pattern, big.colors)


def test_a_band_with_exactly_hubs_max_wide_row_columns_colors_them_apart():
    # kills core/sparsity.py:390: if apart is None or apart.size > HUBS_MAX: -> >=
    #   (seed 61).  The band coloring j mod w leaves out of w the few rows far wider than the
    #   rest and gives their columns a color each, for at most HUBS_MAX (256) such columns.
    #   A bidiagonal band of 20,224 columns (past GREEDY_MAX: the band coloring alone) with
    #   one row reading 256 columns spread over all of them: 2 + 256 colors, not one per
    #   column of that row's span.
    sp = pytest.importorskip("scipy.sparse")
    from autograd_cli.core.sparsity import (
        GREEDY_MAX,
        HUBS_MAX,
        color_columns,
        structurally_orthogonal,
    )

    n = 256 * 79
    assert HUBS_MAX == 256 and n > GREEDY_MAX
    i = np.arange(n - 1)
    rows = np.concatenate([i, i, np.full(256, n - 1)])
    cols = np.concatenate([i, i + 1, np.arange(256) * 79])
    pattern = sp.csr_matrix((np.ones(rows.size, dtype=bool), (rows, cols)), shape=(n, n))
    colors, k = color_columns(pattern)
    assert k == 2 + 256
    assert structurally_orthogonal(pattern, colors)
    # one more wide column is past the limit: the band is then as wide as that row
    rows = np.concatenate([rows, [n - 1]])
    cols = np.concatenate([cols, [n - 1]])
    wider = sp.csr_matrix((np.ones(rows.size, dtype=bool), (rows, cols)), shape=(n, n))
    assert color_columns(wider)[1] == n


def test_star_colored_of_a_pattern_without_the_mirrors_says_no():
    # kills core/sparsity.py:618: np.minimum(np.searchsorted(keys, mirrored), keys.size - 1)
    #   -> keys.size + 1   (seed 61; an IndexError instead of the answer).  star_colored asks
    #   of each nonzero (i, j) that it be alone of its color in row i or that its mirror (j, i)
    #   be alone in row j.  Row 0 of [[0, 1, 1], [0, 0, 0], [0, 0, 0]] holds columns 1 and 2,
    #   both of color 1, and their mirrors (1, 0) and (2, 0) are not in the pattern (whose
    #   nonzeros' keys all sort before theirs): neither entry can be read, so no.  The same
    #   coloring of the symmetric pattern reads each from its mirror: yes.
    sp = pytest.importorskip("scipy.sparse")
    from autograd_cli.core.sparsity import star_colored

    colors = np.array([0, 1, 1])
    upper = sp.csr_matrix(np.array([[0, 1, 1], [0, 0, 0], [0, 0, 0]], dtype=bool))
    assert star_colored(upper, colors) is False
    assert star_colored((upper + upper.T).tocsr(), colors) is True


# ---- the Dask engine (cli/batch/dask.py, cli/batch/dask_parts.py) --------------------------------


def dask(cli, scheduler, *argv):
    return cli("batch", *argv, "--engine", "dask", "--scheduler", scheduler)


def _dask_modules():
    pytest.importorskip("distributed")
    pytest.importorskip("dask")
    from autograd_cli.cli.batch import dask as batch_dask
    from autograd_cli.cli.batch import dask_parts

    return batch_dask, dask_parts


def test_a_local_cluster_has_workers_threads_else_one_per_core(monkeypatch):
    # kills cli/batch/dask.py:154: workers = engine.workers or os.cpu_count() or 1 ->
    #   engine.workers and os.cpu_count() or 1   (seed 67).  --workers N makes the local
    #   cluster N workers (in process: N threads); without it, one per core (docs/batch.md).
    batch_dask, dask_parts = _dask_modules()
    import distributed

    monkeypatch.setattr(batch_dask.os, "cpu_count", lambda: 3)
    for workers, threads in ((None, 3), (2, 2)):
        engine = dask_parts.DaskOptions(scheduler=batch_dask.IN_PROCESS, workers=workers)
        with batch_dask._cluster(distributed, engine) as client:
            assert batch_dask._threads(client) == threads, workers


def test_the_automatic_partition_size_counts_the_bytes_after_a_csv_header():
    # kills cli/batch/dask.py:446: total = sum(p.end - p.start for p in texts) -> p.end + p.start
    #   (seed 61).  Without --partition-size a text input is cut into pieces of its size over
    #   4 per thread (1 MiB to 16 MiB): a CSV file's part starts after its header, and only
    #   its rows (end - start bytes) count.  8 MiB of rows after a 4 MiB header, one thread:
    #   4 partitions of 2 MiB, not 2 of 4 MiB.
    batch_dask, dask_parts = _dask_modules()
    header, body = 4 << 20, 8 << 20
    part = dask_parts.Part(0, "in.csv", "csv", header, header + body, 2, ["x"])
    run = types.SimpleNamespace(parts=[part], engine=dask_parts.DaskOptions())
    batch_dask._split(run, 1)
    assert len(run.parts) == 4
    assert run.parts[0].start == header and run.parts[-1].end == header + body
    assert all(abs(p.end - p.start - body / 4) <= 4 for p in run.parts)


def _write_parquet(path, columns: dict):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.table(columns), path)


def test_a_parquet_list_column_is_read_as_a_csv_cell_of_json_text(tmp_path, cli, scheduler):
    # kills cli/batch/dask_parts.py:382: return jsonout.dumps(list(value)) -> return list(value)
    #   (seed 67; every line an internal error, "'list' object has no attribute 'strip'").
    #   docs/batch.md: Parquet is read like CSV, so a list cell (a vector per row) reads as the
    #   CSV cell of its JSON text does, and the two files give the same output.
    _dask_modules()
    v = [[1.0, 2.0], [0.5, -1.0], [3.0, 0.25]]
    y = [3.0, 2.0, -1.0]
    _write_parquet(tmp_path / "in.parquet", {"v": v, "y": y})
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(["v", "y"])
    writer.writerows([json.dumps(a), repr(b)] for a, b in zip(v, y))
    (tmp_path / "in.csv").write_text(text.getvalue(), encoding="utf-8")
    expr = "sum(v*v)*y"
    local = cli("batch", tmp_path / "in.csv", "--expr", expr)
    got = dask(cli, scheduler, tmp_path / "in.parquet", "--expr", expr)
    assert local.code == 0 and got.code == 0, got.err
    assert got.out == local.out
    assert got.docs[0]["grad"] == {"v": [6.0, 12.0], "y": 5.0}


def test_a_parquet_output_keeps_the_document_of_a_vector_gradient(tmp_path, cli, scheduler):
    # kills cli/batch/dask_parts.py:581: and ("grad" not in doc or (set(grad) == want and None
    #   not in numbers.values())) -> "grad" in doc or ...; and -> ... == want or None not in
    #   ... (seed 61).  docs/batch.md: the document column holds the line's JSONL document
    #   wherever the other columns do not hold all of it.  The gradient of a vector v fits no
    #   float64 grad_v column (null there), so the document is kept; a line without a grad
    #   (op eval) among grad lines has none to lose and is a plain scalar result.
    pq = pytest.importorskip("pyarrow.parquet")
    _dask_modules()
    path = tmp_path / "in.jsonl"
    path.write_text(
        '{"v": [1.0, 2.0], "y": 3.0}\n{"vars": {"v": [0.5, -1.0], "y": 2.0}, "op": "eval"}\n',
        encoding="utf-8",
    )
    expr = "sum(v*v)*y"
    local = cli("batch", path, "--expr", expr)
    out = tmp_path / "out.parquet"
    got = dask(cli, scheduler, path, "--expr", expr, "-o", out)
    assert local.code == 0 and got.code == 0, got.err
    rows = pq.read_table(out).to_pylist()
    first, second = local.out.splitlines()
    assert rows[0]["grad_v"] is None and rows[0]["grad_y"] == 5.0
    assert rows[0]["document"] == first
    assert json.loads(rows[0]["document"])["grad"]["v"] == [6.0, 12.0]
    assert rows[1]["value"] == 2.5 and rows[1]["grad_v"] is None
    assert rows[1]["document"] is None, second


_REAL_EVALUATE = None


def _first_after_the_deadline(part, opts, engine, deadline, columns):
    """Partition 0 starts only after the --timeout (and the client's grace after it) has run
    out; the others at once."""
    if part.index == 0:
        time.sleep(1.5)
    return _REAL_EVALUATE(part, opts, engine, deadline, columns)


def test_after_a_timeout_the_partitions_finished_behind_an_unfinished_one_are_written(
    tmp_path, cli, scheduler, monkeypatch
):
    # kills cli/batch/dask.py:617: if future is not None and future.status == "finished": ->
    #   if not (...)   (seed 61).  After the --timeout the client writes, in order, each
    #   partition's own lines where its task had finished, else a limit record per line.
    #   The first partition is held past the deadline; the next ones (submitted with it, two
    #   per thread) finish at once: their lines are written as the local engine writes them,
    #   between the limit records of the first partition and of those never submitted.
    global _REAL_EVALUATE
    batch_dask, dask_parts = _dask_modules()
    path = tmp_path / "in.csv"
    path.write_text("x,y\n" + "".join(f"{k},{k + 1}\n" for k in range(120)), encoding="utf-8")
    local = cli("batch", path, "--expr", "x*y")
    _REAL_EVALUATE = dask_parts.evaluate_part
    monkeypatch.setattr(dask_parts, "evaluate_part", _first_after_the_deadline)
    got = dask(cli, scheduler, path, "--expr", "x*y", "--partition-size", "100", "--timeout", "1")
    assert got.code == 1 and "stopped after the --timeout of 1 s" in got.err
    assert [d["line"] for d in got.docs] == [d["line"] for d in local.docs]
    mine, theirs = got.out.splitlines(), local.out.splitlines()
    limited = ['"kind": "limit"' in line for line in mine]
    assert limited[0] and limited[-1]  # the held partition's lines, the unsubmitted ones
    computed = [a for a, lim in zip(mine, limited) if not lim]
    assert computed, got.out  # the finished partitions' lines, as the local engine's
    assert all(a in theirs for a in computed)
