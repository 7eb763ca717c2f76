"""The Dask engine's lines that no test ran (bench/mutate.py's coverage of cli/batch/dask.py
and cli/batch/dask_parts.py), pinned.

Each test's docstring names the line(s) it covers (line numbers as they were when it was
written) and the behaviour it pins.  The reference is the local engine (its output is the
Dask engine's, line for line: docs/batch.md) and values worked out by hand, never the code
under test.  A stop, a --timeout or a failing worker is made deterministic with a small
monkeypatch (the client's wait, the workers' clock, the task function), as in
tests/test_mutants_seed109_dask.py.  Skipped where Dask is not installed.  The fixtures
(``cli``, ``scheduler``: a local cluster of two threads in this process, for the module)
are conftest's.
"""

from __future__ import annotations

import json
import logging
import signal
import sys
import threading
import types

import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask")

from autograd_cli.cli import files  # noqa: E402
from autograd_cli.cli.batch import dask as batch_dask  # noqa: E402
from autograd_cli.cli.batch import dask_parts  # noqa: E402
from autograd_cli.cli.batch import io as batch_io  # noqa: E402
from autograd_cli.cli.status import Terminated  # noqa: E402

_REAL_WAIT = batch_dask._Run.wait
_REAL_EVALUATE = dask_parts.evaluate_part


def _dask(cli, scheduler, *argv):
    return cli("batch", *argv, "--engine", "dask", "--scheduler", scheduler)


def _read_parquet(folder):
    """-o DIR.parquet read back: (its part files' names, its rows as dicts, column names)."""
    pq = pytest.importorskip("pyarrow.parquet")
    names = sorted(p.name for p in folder.iterdir())
    tables = [pq.read_table(folder / name) for name in names]
    rows = [row for t in tables for row in t.to_pylist()]
    return names, rows, tables[0].column_names


# ---------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------


def test_the_local_engine_without_dask_settings_has_no_dask_options():
    """Covers cli/batch/dask.py:84 (engine_options: return None for --engine local).

    ``--engine local`` with none of --scheduler, --workers, --partition-size is the local
    engine: no DaskOptions (the command then runs ``run_batch`` itself); ``--engine dask``
    gets its settings.  A fall-through would hand the local run to the Dask engine."""
    assert batch_dask.engine_options("local", None, None, None, "cpu", "float64", None) is None
    got = batch_dask.engine_options("dask", None, 3, "1K", "cpu", "float64", None)
    assert (got.scheduler, got.workers, got.partition_size) == (None, 3, 1024)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--workers", "0"], "--workers must be at least 1, not 0"),
        (["--workers", "-2"], "--workers must be at least 1, not -2"),
        (
            ["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"],
            "--workers applies to a local cluster, not to --scheduler ADDRESS",
        ),
        (["--partition-size", "lots"], "--partition-size: 'lots' is not a size"),
    ],
)
def test_bad_dask_settings_are_usage_errors_before_any_work(tmp_path, cli, argv, message):
    """Covers cli/batch/dask.py:86, 88, 96-97 (engine_options' usage errors).

    --workers below 1, --workers with a cluster joined by address (its workers are not
    ours to start), and a --partition-size that is not a size are usage errors: exit 2
    and the message, no output, before any cluster starts (none is reachable at
    tcp://127.0.0.1:1: only the usage error can answer).  --workers 1 is the least taken."""
    path = tmp_path / "in.csv"
    path.write_text("x\n1\n", encoding="utf-8")
    got = cli("batch", path, "--expr", "x", "--engine", "dask", *argv)
    assert got.code == 2, got.err
    assert message in got.err
    assert got.out == ""
    ok = batch_dask.engine_options("dask", "in-process", 1, None, "cpu", "float64", None)
    assert ok.workers == 1


def test_a_scheduler_address_that_does_not_speak_dask_is_a_usage_error(tmp_path, cli, monkeypatch):
    """Covers cli/batch/dask.py:149 (_cluster: MemoryError -> "it does not speak Dask's
    protocol").

    Something that is not a Dask scheduler answering at --scheduler's address makes the
    client read its first bytes as the length of an impossible frame (MemoryError); the
    run is a usage error (exit 2) that says so, not a traceback.  The client's failure is
    made here by replacing distributed.Client (no server needed)."""
    import distributed

    def not_dask(*args, **kwargs):
        raise MemoryError()

    monkeypatch.setattr(distributed, "Client", not_dask)
    path = tmp_path / "in.csv"
    path.write_text("x\n1\n", encoding="utf-8")
    got = cli("batch", path, "--expr", "x", "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9")
    assert got.code == 2, got.err
    assert (
        "--scheduler: cannot reach a Dask scheduler at 'tcp://127.0.0.1:9': "
        "it does not speak Dask's protocol"
    ) in got.err
    assert got.out == ""


def test_the_worker_plugin_ignores_interrupts_on_each_worker_it_sets_up(monkeypatch):
    """Covers cli/batch/dask.py:199 (IgnoreInterrupt.setup).

    A local cluster's worker processes ignore SIGINT (docs/batch.md: Ctrl-C reaches the
    whole process group; the client answers it): the plugin registered on them calls
    _ignore_interrupt with the worker at each setup (a restarted worker too)."""
    import distributed

    seen = []
    monkeypatch.setattr(batch_dask, "_ignore_interrupt", seen.append)
    plugin = batch_dask._worker_plugin(distributed)()
    assert isinstance(plugin, distributed.WorkerPlugin)
    plugin.setup("worker-1")
    plugin.setup("worker-2")
    assert seen == ["worker-1", "worker-2"]


def test_an_expression_that_does_not_parse_is_a_usage_error_as_locally(tmp_path, cli, scheduler):
    """Covers cli/batch/dask.py:354 (_prepare: raise the --expr's parse error).

    A bad --expr ends the run before any work, as the local engine ends it: exit 2, the
    same message, no output (not a parse error on every line)."""
    path = tmp_path / "in.csv"
    path.write_text("x\n1\n2\n", encoding="utf-8")
    local = cli("batch", path, "--expr", "x+")
    assert local.code == 2 and local.out == ""
    got = _dask(cli, scheduler, path, "--expr", "x+")
    assert got.code == 2, got.err
    assert got.out == ""
    assert "syntax error at line 1, column 3" in got.err
    assert got.err == local.err


def test_csv_and_parquet_input_without_expr_are_usage_errors(tmp_path, cli, scheduler):
    """Covers cli/batch/dask.py:356-357 (_prepare: tabular input needs --expr).

    CSV and Parquet rows are variables only: without --expr there is nothing to evaluate,
    a usage error (exit 2) naming the format (CSV where any file is CSV, as locally; a
    folder of Parquet files: Parquet)."""
    path = tmp_path / "in.csv"
    path.write_text("x\n1\n", encoding="utf-8")
    local = cli("batch", path)
    got = _dask(cli, scheduler, path)
    assert (got.code, local.code) == (2, 2), got.err
    assert "batch: CSV input needs --expr (and --op, default grad)" in got.err
    assert got.err == local.err and got.out == ""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    folder = tmp_path / "pq"
    folder.mkdir()
    pq.write_table(pa.table({"x": [1.0]}), folder / "a.parquet")
    got = _dask(cli, scheduler, folder)
    assert got.code == 2, got.err
    assert "batch: Parquet input needs --expr (and --op, default grad)" in got.err
    (folder / "b.csv").write_text("x\n1\n", encoding="utf-8")
    got = _dask(cli, scheduler, folder)
    assert got.code == 2, got.err
    assert "batch: CSV input needs --expr" in got.err


def test_output_onto_an_input_file_of_a_folder_is_a_usage_error(tmp_path, cli, scheduler):
    """Covers cli/batch/dask.py:365 (_prepare: -o is one of the input files).

    -o naming an input file (here the second file of a folder, by another spelling of its
    path) is refused before anything is written: exit 2, the input left as it was."""
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.csv").write_text("x\n1\n", encoding="utf-8")
    (folder / "b.csv").write_text("x\n2\n", encoding="utf-8")
    target = f"{folder}/../in/b.csv"
    got = _dask(cli, scheduler, folder, "--expr", "x", "-o", target)
    assert got.code == 2, got.err
    assert f"-o: {target!r} is an input file; write the output to another file" in got.err
    assert (folder / "b.csv").read_text(encoding="utf-8") == "x\n2\n"
    assert sorted(p.name for p in folder.iterdir()) == ["a.csv", "b.csv"]


@pytest.mark.parametrize("given", ["CSV", "Csv"])
def test_format_is_taken_in_any_case(tmp_path, cli, scheduler, given):
    """Covers cli/batch/dask_parts.py:205, 208 (format_of with --format).

    --format CSV reads a file of any name as CSV, as the local engine does (the format's
    case does not matter): the same output.  By hand: x*2 of 1 and 3."""
    path = tmp_path / "points.txt"
    path.write_text("x\n1\n3\n", encoding="utf-8")
    local = cli("batch", path, "--expr", "x*2", "--op", "eval", "--format", given)
    assert local.code == 0, local.err
    assert [(d["line"], d["value"]) for d in local.docs] == [(2, 2.0), (3, 6.0)]
    got = _dask(cli, scheduler, path, "--expr", "x*2", "--op", "eval", "--format", given)
    assert got.code == 0, got.err
    assert got.out == local.out


def test_an_unknown_format_is_a_usage_error(tmp_path, cli, scheduler):
    """Covers cli/batch/dask_parts.py:206-207 (format_of: --format not jsonl, csv or parquet).

    The Dask engine takes --format jsonl, csv or parquet; anything else is a usage error
    (exit 2, as locally), no output."""
    path = tmp_path / "in.csv"
    path.write_text("x\n1\n", encoding="utf-8")
    assert cli("batch", path, "--expr", "x", "--format", "xml").code == 2
    got = _dask(cli, scheduler, path, "--expr", "x", "--format", "xml")
    assert got.code == 2, got.err
    assert "--format must be jsonl, csv or parquet, not 'xml'" in got.err
    assert got.out == ""


def test_a_missing_file_and_a_device_are_usage_errors(tmp_path, cli, scheduler):
    """Covers cli/batch/dask_parts.py:190-191 (expand: the file cannot be opened) and 197
    (not a regular file).

    A path that does not exist is a usage error (exit 2: "a missing file", docs/batch.md)
    with the system's reason; a device such as /dev/null is refused by the Dask engine,
    which cuts files into byte ranges ("reads regular files")."""
    missing = tmp_path / "nope.csv"
    got = _dask(cli, scheduler, missing, "--expr", "x")
    assert got.code == 2, got.err
    assert f"batch: cannot read {str(missing)!r}: No such file or directory" in got.err
    got = _dask(cli, scheduler, "/dev/null", "--expr", "x")
    assert got.code == 2, got.err
    assert "batch: --engine dask reads regular files; '/dev/null' is not one" in got.err
    assert got.out == ""


# ---------------------------------------------------------------------------
# The input: empty and header-only files, row groups
# ---------------------------------------------------------------------------


_NO_ROWS = [(c, "x", "x\n5\n", 5.0) for c in (b"", b"\n\n", b"\r\n \r\n")] + [
    (c, "x*y", "y,x\n3,2\n", 6.0) for c in (b"x,y\n", b"x,y", b"\r\nx,y\r\n", b"\rx,y\r")
]


@pytest.mark.parametrize("content, expr, other, value", _NO_ROWS)
def test_a_csv_without_rows_gives_no_lines_as_locally(
    tmp_path, cli, scheduler, content, expr, other, value
):
    """Covers cli/batch/dask.py:431 (_plan: a CSV without a header is skipped) and
    cli/batch/dask_parts.py:296 (csv_columns: None without a header); cli/batch/dask.py:435
    (_plan: no bytes after the header).

    An empty CSV, one of blank lines only, or one whose header is its last line (with or
    without a line end, after blank lines) has no rows: no output, exit 0, as the local
    engine, whatever the partition size.  In a folder, the other file's lines are still
    written (with their "file").  By hand: x = 5; x*y = 2*3 = 6, on line 2."""
    path = tmp_path / "none.csv"
    path.write_bytes(content)
    local = cli("batch", path, "--expr", expr)
    assert (local.code, local.out) == (0, ""), local.err
    got = _dask(cli, scheduler, path, "--expr", expr, "--partition-size", "1")
    assert (got.code, got.out) == (0, ""), got.err
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.csv").write_bytes(content)
    (folder / "b.csv").write_text(other, encoding="utf-8")
    got = _dask(cli, scheduler, folder, "--expr", expr, "--op", "eval")
    assert got.code == 0, got.err
    assert [(d["file"], d["line"], d["value"]) for d in got.docs] == [
        (str(folder / "b.csv"), 2, value)
    ]


def test_parquet_output_of_no_lines_is_one_empty_part_file(tmp_path, cli, scheduler):
    """Covers cli/batch/dask_parts.py:633 (ParquetSink.commit: no lines, one empty part).

    -o DIR.parquet of an input with no rows is a folder of one part file with the columns
    and no rows ("so the folder reads back"): line, expr, value, grad_x, grad_y (op grad
    of x*y), error, document."""
    path = tmp_path / "head.csv"
    path.write_text("x,y\n", encoding="utf-8")
    out = tmp_path / "out.parquet"
    got = _dask(cli, scheduler, path, "--expr", "x*y", "-o", out)
    assert (got.code, got.out) == (0, ""), got.err
    names, rows, columns = _read_parquet(out)
    assert names == ["part-00000.parquet"]
    assert rows == []
    assert columns == ["line", "expr", "value", "grad_x", "grad_y", "error", "document"]


def test_empty_parquet_row_groups_are_no_partitions_and_keep_the_numbering(
    tmp_path, cli, scheduler
):
    """Covers cli/batch/dask.py:408->423 (_plan: a row group of no rows).

    A Parquet file may hold row groups of no rows; they are no task, and the rows after
    them keep their numbers (row r is line r + 2, as the same table written as CSV).
    By hand: groups of 0, 2, 0 and 2 rows, x = 1, 2, 3, 4 on lines 2 to 5; the CSV copy
    gives the same output."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "in.parquet"
    table = pa.table({"x": [1.0, 2.0, 3.0, 4.0]})
    with pq.ParquetWriter(path, table.schema) as writer:
        writer.write_table(table.slice(0, 0))
        writer.write_table(table.slice(0, 2))
        writer.write_table(table.slice(0, 0))
        writer.write_table(table.slice(2, 2))
    meta = pq.ParquetFile(path).metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [0, 2, 0, 2]
    csv = tmp_path / "in.csv"
    csv.write_text("x\n1.0\n2.0\n3.0\n4.0\n", encoding="utf-8")
    local = cli("batch", csv, "--expr", "x*x", "--op", "eval")
    got = _dask(cli, scheduler, path, "--expr", "x*x", "--op", "eval")
    assert got.code == 0, got.err
    assert got.out == local.out
    assert [(d["line"], d["value"]) for d in got.docs] == [
        (2, 1.0),
        (3, 4.0),
        (4, 9.0),
        (5, 16.0),
    ]


def test_a_file_that_is_not_parquet_is_a_usage_error(tmp_path, cli, scheduler):
    """Covers cli/batch/dask_parts.py:317-318 (parquet_columns: unreadable as Parquet).

    A .parquet file that is not Parquet is a usage error (exit 2) naming it, checked
    before any work, not a traceback."""
    pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "bad.parquet"
    path.write_bytes(b"x\n1\n2\n")
    got = _dask(cli, scheduler, path, "--expr", "x")
    assert got.code == 2, got.err
    assert f"batch: cannot read {str(path)!r} as Parquet: " in got.err
    assert got.out == ""


# ---------------------------------------------------------------------------
# Line ends at partition boundaries (a sweep of --partition-size)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        b"x,y\r\n1,2\r\n\r\n3,4\r5,6\n\n7,8",  # \r\n, \r, \n, blank lines, no final end
        b"\r\r\nx,y\r1,2\r\r\n3,4\r\n" + b"5," + b"6" * 40 + b"\r\n7,8\r",
    ],
)
def test_every_partition_size_gives_the_local_output(tmp_path, cli, scheduler, content):
    """Partition boundaries anywhere (inside a line, between \\r and \\n, on blank lines,
    in the last line without a line end): every --partition-size from 1 byte to the whole
    file gives the local engine's output, each line once, with its number."""
    path = tmp_path / "in.csv"
    path.write_bytes(content)
    local = cli("batch", path, "--expr", "x+y", "--op", "eval")
    assert local.code == 0, local.err
    assert len(local.docs) == 4
    for size in range(1, len(content) + 1, 3):
        got = _dask(cli, scheduler, path, "--expr", "x+y", "--op", "eval", "--partition-size", size)
        assert got.code == 0, (size, got.err)
        assert got.out == local.out, size


# ---------------------------------------------------------------------------
# Parquet output
# ---------------------------------------------------------------------------


def test_parquet_output_grad_columns_follow_wrt_or_are_none_without_expr(tmp_path, cli, scheduler):
    """Covers cli/batch/dask_parts.py:597 and the branch 598->600 (gradient_columns).

    -o DIR.parquet has a grad_<name> column for each name of --wrt (only those), else each
    variable of --expr; JSONL lines without --expr have no program: no grad column (their
    gradients stay in "document").  By hand: grad of x*y at (2, 3) w.r.t. y is 2."""
    path = tmp_path / "in.csv"
    path.write_text("x,y\n2,3\n", encoding="utf-8")
    out = tmp_path / "wrt.parquet"
    got = _dask(cli, scheduler, path, "--expr", "x*y", "--wrt", "y", "-o", out)
    assert got.code == 0, got.err
    _, rows, columns = _read_parquet(out)
    assert columns == ["line", "expr", "value", "grad_y", "error", "document"]
    assert [(r["line"], r["value"], r["grad_y"], r["document"]) for r in rows] == [
        (2, 6.0, 2.0, None)
    ]
    lines = tmp_path / "in.jsonl"
    lines.write_text('{"expr": "x*y", "vars": {"x": 2, "y": 3}}\n', encoding="utf-8")
    out = tmp_path / "plain.parquet"
    got = _dask(cli, scheduler, lines, "-o", out)
    assert got.code == 0, got.err
    _, rows, columns = _read_parquet(out)
    assert columns == ["line", "expr", "value", "error", "document"]
    assert [(r["line"], r["value"]) for r in rows] == [(1, 6.0)]
    assert json.loads(rows[0]["document"])["grad"] == {"x": 3.0, "y": 2.0}


def test_a_partition_of_blank_lines_writes_no_parquet_part(tmp_path, cli, scheduler):
    """Covers the branch cli/batch/dask.py:264->268 (_Run.write: a table of no lines).

    -o DIR.parquet has one part file per partition *with lines* (docs/batch.md): a
    partition of blank lines only (here the middle one, bytes 8 to 15) writes none.  By
    hand: {"x":1} and {"x":2} on lines 1 and 10, in part-00000 and part-00001."""
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'{"x":1}\n' + b"\n" * 8 + b'{"x":2}\n')
    out = tmp_path / "out.parquet"
    local = cli("batch", path, "--expr", "x", "--op", "eval")
    got = _dask(cli, scheduler, path, "--expr", "x", "--op", "eval", "--partition-size", "8")
    assert got.code == 0, got.err
    assert got.out == local.out
    got = _dask(
        cli, scheduler, path, "--expr", "x", "--op", "eval", "--partition-size", "8", "-o", out
    )
    assert got.code == 0, got.err
    names, rows, _ = _read_parquet(out)
    assert names == ["part-00000.parquet", "part-00001.parquet"]
    assert [(r["line"], r["value"]) for r in rows] == [(1, 1.0), (10, 2.0)]


def test_parquet_output_onto_a_file_is_a_usage_error(tmp_path, cli, scheduler):
    """Covers cli/batch/dask_parts.py:620, 645 (ParquetSink: the target is a file) and the
    branch cli/batch/dask.py:320->322 (no sink to abort).

    -o DIR.parquet names a folder of part files: an existing regular file there is a
    usage error (exit 2) that says so, and the file is left as it was."""
    path = tmp_path / "in.csv"
    path.write_text("x\n1\n", encoding="utf-8")
    out = tmp_path / "out.parquet"
    out.write_text("mine", encoding="utf-8")
    got = _dask(cli, scheduler, path, "--expr", "x", "-o", out)
    assert got.code == 2, got.err
    assert (
        f"-o: {str(out)!r} exists and is not a folder; Parquet output is a folder of "
        "part files: remove it or choose another name"
    ) in got.err
    assert out.read_text(encoding="utf-8") == "mine"
    assert got.out == ""


def test_parquet_output_in_a_missing_folder_is_a_usage_error(tmp_path, cli, scheduler):
    """Covers cli/batch/dask_parts.py:654 and the branch 649->654 (_unwritable: the system
    refused).

    -o DIR.parquet whose parent folder does not exist: a usage error with the system's
    reason (exit 2), nothing created."""
    path = tmp_path / "in.csv"
    path.write_text("x\n1\n", encoding="utf-8")
    out = tmp_path / "no" / "out.parquet"
    got = _dask(cli, scheduler, path, "--expr", "x", "-o", out)
    assert got.code == 2, got.err
    assert f"-o: cannot write {str(out)!r}: No such file or directory" in got.err
    assert not (tmp_path / "no").exists()


def test_a_parquet_part_that_cannot_be_written_ends_the_run(tmp_path, cli, scheduler, monkeypatch):
    """Covers cli/batch/dask_parts.py:626-627 (ParquetSink.write: OSError) and
    cli/batch/dask.py:316-317 (run_dask: an output error).

    A part file that cannot be written (a full disk) ends the run with exit 1 and the
    error on stderr; nothing is left at -o (the temporary folder removed)."""
    import errno

    pq = pytest.importorskip("pyarrow.parquet")

    def full(table, where, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pq, "write_table", full)
    path = tmp_path / "in.csv"
    path.write_text("x\n1\n2\n", encoding="utf-8")
    out = tmp_path / "out.parquet"
    got = _dask(cli, scheduler, path, "--expr", "x", "-o", out)
    assert got.code == 1, got.err
    assert f"cannot write {str(out)!r}: [Errno 28] No space left on device" in got.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def test_a_parquet_folder_that_cannot_be_put_in_place_ends_the_run(
    tmp_path, cli, scheduler, monkeypatch
):
    """Covers cli/batch/dask_parts.py:635-636 (ParquetSink.commit: OSError).

    The folder of part files renamed over -o at the end: when that fails, exit 1 with the
    error on stderr, and the temporary folder is removed."""
    import errno

    pytest.importorskip("pyarrow.parquet")

    def refused(self):
        raise OSError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(files.FolderTarget, "commit", refused)
    path = tmp_path / "in.csv"
    path.write_text("x\n1\n", encoding="utf-8")
    out = tmp_path / "out.parquet"
    got = _dask(cli, scheduler, path, "--expr", "x", "-o", out)
    assert got.code == 1, got.err
    assert f"cannot write {str(out)!r}: [Errno 13] Permission denied" in got.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def test_lines_table_without_orjson_reads_the_lines_with_json(monkeypatch):
    """Covers cli/batch/dask_parts.py:556-557 (lines_table: orjson not installed).

    orjson is optional: without it the output lines are read with json, into the same
    columns.  By hand: line 2, value 6.0, grad_x 3.0; an error line's kind and document."""
    pytest.importorskip("pyarrow")
    monkeypatch.setitem(sys.modules, "orjson", None)
    lines = [
        '{"line": 2, "expr": "x*y", "value": 6.0, "shape": [], "grad": {"x": 3.0}}',
        '{"line": 3, "error": {"kind": "bad_value", "message": "no"}}',
    ]
    table = dask_parts.lines_table(lines, None, {"grad": ["x"], "file": False})
    assert table.to_pylist() == [
        {
            "line": 2,
            "expr": "x*y",
            "value": 6.0,
            "grad_x": 3.0,
            "error": None,
            "document": None,
        },
        {
            "line": 3,
            "expr": None,
            "value": None,
            "grad_x": None,
            "error": "bad_value",
            "document": lines[1],
        },
    ]


# ---------------------------------------------------------------------------
# A failing worker, a stop signal, the --timeout (made deterministic)
# ---------------------------------------------------------------------------


def _failing_second_part(part, *args):
    """evaluate_part, whose task fails on the second partition (a worker lost)."""
    if part.index == 1:
        raise RuntimeError("worker lost")
    return _REAL_EVALUATE(part, *args)


def _wait_then_raise(exc, lost=None):
    """_Run.wait that, at the first partition of pass 2, waits for every partition
    submitted to be done (finished or failed), then raises ``exc`` (a signal arriving, or
    the --timeout running out).  With ``lost`` (a set): the second partition's result is
    lost after it finished (see _lose_results)."""

    def wait(self, future):
        _REAL_WAIT(self, future)
        if self.futures and self.futures.get(self.next) is future:
            from distributed import wait as wait_all

            wait_all(list(self.futures.values()))
            if lost is not None:
                lost.add(self.futures[1].key)
            raise exc

    return wait


def _lose_results(monkeypatch):
    """A set of task keys whose futures are finished but whose results cannot be fetched
    (the worker holding them died after finishing): ``result()`` raises for them."""
    from distributed.client import Future

    lost: set = set()
    real = Future.result

    def result(self, *args, **kwargs):
        if self.key in lost:
            raise OSError("the worker holding the result is gone")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Future, "result", result)
    return lost


# 5 bytes a partition after the header: lines 2-3, 4-5, 6-7 (three partitions)
_SIX = "x\n1\n2\n3\n4\n5\n6\n"


def _eval_by_fours(cli, scheduler, path, *more):
    """The Dask run of eval of x over ``path`` in partitions of 4 bytes."""
    return _dask(
        cli, scheduler, path, "--expr", "x", "--op", "eval", "--partition-size", "4", *more
    )


def test_a_failing_task_ends_the_run_after_the_lines_before_it(
    tmp_path, cli, scheduler, monkeypatch
):
    """Covers cli/batch/dask.py:515-516, 520 (_execute: a task failed), 543, 546
    (_outcome: the task's exception).

    A task that fails on its worker ends the run with exit 1 and a message naming the
    file, the partition's first line and the error; the partitions before it are written
    (the local engine's lines 2-3), none after it.  By hand: the second partition starts
    at line 4."""
    path = tmp_path / "in.csv"
    path.write_text(_SIX, encoding="utf-8")
    local = cli("batch", path, "--expr", "x", "--op", "eval")
    assert local.code == 0
    monkeypatch.setattr(dask_parts, "evaluate_part", _failing_second_part)
    got = _eval_by_fours(cli, scheduler, path)
    assert got.code == 1, got.err
    assert got.out == "".join(local.out.splitlines(keepends=True)[:2])
    assert [d["line"] for d in got.docs] == [2, 3]
    assert (
        f"the Dask cluster failed on {str(path)!r} (from line 4): RuntimeError: worker lost"
    ) in got.err


_STARTED = threading.Event()  # a held task has started on its worker
_RELEASE = threading.Event()  # ... and may go on


def _held(real):
    def held(*args):
        _STARTED.set()
        _RELEASE.wait(60)
        return real(*args)

    return held


_held_measure = _held(dask_parts.measure)
_held_measure.__qualname__ = _held_measure.__name__ = "_held_measure"  # pickled by name
_held_evaluate = _held(_REAL_EVALUATE)
_held_evaluate.__qualname__ = _held_evaluate.__name__ = "_held_evaluate"


@pytest.mark.parametrize(
    "task, held", [("measure", _held_measure), ("evaluate_part", _held_evaluate)]
)
def test_a_scheduler_lost_mid_run_is_the_runs_one_message(tmp_path, cli, monkeypatch, task, held):
    """Covers cli/batch/dask.py's _Run.wait (a cancelled future), pass 1's failed count and
    _cluster's logging turned off (before: an internal error, or a traceback on stderr).

    The scheduler closes while the first range is counted (pass 1) or evaluated (pass 2):
    distributed cancels the run's futures, and its wait raises CancelledError.  The run ends
    with exit 1 and the run's one message naming the file and the first line, nothing
    written; before, pass 1 reported an internal error ("please report it"), and either way
    distributed's client logged the lost connection at ERROR with a 35-line traceback
    (checked on a real scheduler process killed mid-run): no Dask log record of WARNING or
    above is emitted while the run goes."""
    distributed = pytest.importorskip("distributed")
    dask = pytest.importorskip("dask")
    path = tmp_path / "in.csv"
    path.write_text(_SIX, encoding="utf-8")
    _STARTED.clear()
    _RELEASE.clear()
    monkeypatch.setattr(dask_parts, task, held)
    cluster = distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0"
    )

    def lose_the_scheduler():
        if _STARTED.wait(60):
            cluster.sync(cluster.scheduler.close)

    records = []
    keep = logging.Handler(logging.WARNING)
    keep.emit = records.append
    loggers = [logging.getLogger(name) for name in ("distributed", "distributed.client")]
    for log in loggers:
        log.addHandler(keep)
    killer = threading.Thread(target=lose_the_scheduler, daemon=True)
    killer.start()
    try:
        got = _dask(cli, cluster.scheduler_address, path, "--expr", "x", "--op", "eval")
    finally:
        for log in loggers:
            log.removeHandler(keep)
        _RELEASE.set()
        killer.join(60)
        # the cluster's close asks its closed scheduler first: 30 s of connect timeout
        with dask.config.set({"distributed.comm.timeouts.connect": "0.5s"}):
            cluster.close()
    assert _STARTED.is_set()
    assert got.code == 1, got.err
    assert got.out == ""
    assert f"autograd-cli: error: the Dask cluster failed on {str(path)!r} (from line 2): " in (
        got.err
    )
    assert "internal error" not in got.err and "Traceback" not in got.err
    assert [f"{r.name}: {r.levelname}" for r in records] == []


def test_a_stop_signal_while_a_range_is_counted_stops_the_run_then(
    tmp_path, cli, scheduler, monkeypatch
):
    """Covers cli/batch/dask.py's pass 1 waiting with _Run.wait (the stop signals watched).

    SIGTERM arrives (its handler called, as the signal would, from another thread) while
    the first range's line count is still running on its worker: the run stops there, exit
    143, nothing written, without waiting for the count.  The count is held until the run
    has returned (or 30 s): a run that waited for it returns only after the count was let
    go."""
    path = tmp_path / "in.csv"
    path.write_text(_SIX, encoding="utf-8")
    _STARTED.clear()
    _RELEASE.clear()
    monkeypatch.setattr(dask_parts, "measure", _held_measure)
    made = []

    class Recorded(batch_io.Interrupt):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(batch_io, "Interrupt", Recorded)
    returned = threading.Event()

    def terminate_then_release():
        if _STARTED.wait(60):
            made[-1]._handler(signal.SIGTERM, None)
            returned.wait(30)
        _RELEASE.set()

    signaller = threading.Thread(target=terminate_then_release, daemon=True)
    signaller.start()
    try:
        got = _dask(cli, scheduler, path, "--expr", "x", "--op", "eval")
        held = not _RELEASE.is_set()
    finally:
        returned.set()
        signaller.join(60)
    assert got.code == 128 + signal.SIGTERM, got.err
    assert got.out == ""
    assert held, "the run waited for the count before seeing the signal"


@pytest.mark.parametrize("rows, written", [(6, 6), (10, 8)])
def test_sigterm_writes_the_finished_partitions_in_order(
    tmp_path, cli, scheduler, monkeypatch, rows, written
):
    """Covers cli/batch/dask.py:388 (SIGTERM raised outside the run's own handler: its exit
    code) and the branch 559->exit (_drain: no more partitions, or the next one never
    submitted).

    SIGTERM arriving once every partition submitted is done: they are written, in order
    (the local engine's lines), and the run exits 143 (128 + SIGTERM), not 130.  By hand:
    2 lines a partition; the fixture's cluster has 2 threads, so 4 partitions are
    submitted ahead: of 3 partitions all 6 lines, of 5 the first 8 lines (the fifth was
    never submitted: none of its lines)."""
    path = tmp_path / "in.csv"
    path.write_text("x\n" + "".join(f"{k}\n" for k in range(1, rows + 1)), encoding="utf-8")
    local = cli("batch", path, "--expr", "x", "--op", "eval")
    assert batch_dask.WINDOW_PER_THREAD * 2 == 4
    monkeypatch.setattr(batch_dask._Run, "wait", _wait_then_raise(Terminated(signal.SIGTERM)))
    got = _eval_by_fours(cli, scheduler, path)
    assert got.code == 128 + signal.SIGTERM == 143, got.err
    assert got.out == "".join(local.out.splitlines(keepends=True)[:written])
    assert [d["value"] for d in got.docs] == [float(k) for k in range(1, written + 1)]


def test_ctrl_c_after_a_fail_fast_stop_writes_nothing_after_the_failed_line(
    tmp_path, cli, scheduler, monkeypatch
):
    """Covers cli/batch/dask.py:571-572 (_drain: a partition stopped by --fail-fast).

    After Ctrl-C the finished partitions are written in order; one stopped by --fail-fast
    at a failed line is the end of the output (the local --fail-fast output: lines 2 to
    4, line 4 the error), though the partitions after it are finished too.  Exit 130."""
    path = tmp_path / "in.csv"
    path.write_text("x\n1\n2\nabc\n4\n5\n6\n", encoding="utf-8")
    local = cli("batch", path, "--expr", "x", "--op", "eval", "--fail-fast")
    assert [d["line"] for d in local.docs] == [2, 3, 4]
    monkeypatch.setattr(batch_dask._Run, "wait", _wait_then_raise(KeyboardInterrupt()))
    got = _dask(
        cli,
        scheduler,
        path,
        "--expr",
        "x",
        "--op",
        "eval",
        "--fail-fast",
        "--partition-size",
        "4",
    )
    assert got.code == 130, got.err
    assert got.out == local.out
    assert got.docs[-1]["error"]["kind"] == "bad_value"


def test_ctrl_c_writes_the_partitions_before_a_failed_task(tmp_path, cli, scheduler, monkeypatch):
    """Covers cli/batch/dask.py:565 (_drain: a failed task after a stop).

    After Ctrl-C the finished partitions are written in order up to the first that is not
    a result: a task that failed ends the writing there (its failure not reported after a
    stop), the partitions after it not written.  By hand: lines 2 and 3 only; exit 130."""
    path = tmp_path / "in.csv"
    path.write_text(_SIX, encoding="utf-8")
    monkeypatch.setattr(dask_parts, "evaluate_part", _failing_second_part)
    monkeypatch.setattr(batch_dask._Run, "wait", _wait_then_raise(KeyboardInterrupt()))
    got = _eval_by_fours(cli, scheduler, path)
    assert got.code == 130, got.err
    assert [(d["line"], d["value"]) for d in got.docs] == [(2, 1.0), (3, 2.0)]
    assert "worker lost" not in got.err


def test_ctrl_c_writes_the_partitions_before_a_lost_result(tmp_path, cli, scheduler, monkeypatch):
    """Covers cli/batch/dask.py:565 (_drain: a finished task whose result is not a Done).

    After Ctrl-C the finished partitions are written in order up to the first whose
    result cannot be had (its worker died after finishing it): not reported after a stop,
    nothing from it or after it written.  By hand: lines 2 and 3 only; exit 130."""
    path = tmp_path / "in.csv"
    path.write_text(_SIX, encoding="utf-8")
    lost = _lose_results(monkeypatch)
    monkeypatch.setattr(batch_dask._Run, "wait", _wait_then_raise(KeyboardInterrupt(), lost))
    got = _eval_by_fours(cli, scheduler, path)
    assert got.code == 130, got.err
    assert [(d["line"], d["value"]) for d in got.docs] == [(2, 1.0), (3, 2.0)]
    assert "gone" not in got.err


def test_a_result_lost_at_the_timeout_gets_limit_records(tmp_path, cli, scheduler, monkeypatch):
    """Covers cli/batch/dask.py:620 (_after_timeout: a finished task whose result is not a
    Done).

    After the --timeout, a partition whose result cannot be had (its worker died after
    finishing it) counts as not finished: a limit record for each of its lines, in their
    place; the partitions after it that finished are written.  By hand: lines 2, 3, 6, 7
    evaluated (1, 2, 5, 6), lines 4 and 5 limit records; exit 1."""
    from autograd_cli.cli.status import TimedOut

    path = tmp_path / "in.csv"
    path.write_text(_SIX, encoding="utf-8")
    local = cli("batch", path, "--expr", "x", "--op", "eval")
    lost = _lose_results(monkeypatch)
    monkeypatch.setattr(batch_dask._Run, "wait", _wait_then_raise(TimedOut(600), lost))
    got = _eval_by_fours(cli, scheduler, path, "--timeout", "600")
    assert got.code == 1, got.err
    assert [(d["line"], d.get("value"), d.get("error", {}).get("kind")) for d in got.docs] == [
        (2, 1.0, None),
        (3, 2.0, None),
        (4, None, "limit"),
        (5, None, "limit"),
        (6, 5.0, None),
        (7, 6.0, None),
    ]
    kept = local.out.splitlines(keepends=True)
    assert got.out.splitlines(keepends=True)[:2] + got.out.splitlines(keepends=True)[4:] == (
        kept[:2] + kept[4:]
    )
    assert "6 line(s) written, 2 of them not finished" in got.err


def _late_workers(monkeypatch):
    """The workers' clock reads long past any --timeout (the client's does not): each
    task stops at its first look and hands back no line."""
    monkeypatch.setattr(dask_parts, "time", types.SimpleNamespace(time=lambda: 1e12))


def test_tasks_stopped_by_the_deadline_give_a_limit_record_for_every_line(
    tmp_path, cli, scheduler, monkeypatch
):
    """Covers cli/batch/dask.py:522-523 (_execute: a task stopped at the deadline).

    A task that stopped at the --timeout's deadline before its end is the timeout, even
    if the client's own clock has not reached it yet: every line read gets an error
    record of kind limit, in input order, with its number (the local engine's numbers),
    exit 1 and stderr says so.  By hand: lines 2 to 7."""
    path = tmp_path / "in.csv"
    path.write_text(_SIX, encoding="utf-8")
    local = cli("batch", path, "--expr", "x", "--op", "eval")
    _late_workers(monkeypatch)
    got = _eval_by_fours(cli, scheduler, path, "--timeout", "600")
    assert got.code == 1, got.err
    assert [d["line"] for d in got.docs] == [d["line"] for d in local.docs] == [2, 3, 4, 5, 6, 7]
    assert {d["error"]["kind"] for d in got.docs} == {"limit"}
    assert (
        "stopped after the --timeout of 600 s: 6 line(s) written, 6 of them not finished"
    ) in got.err


def test_limit_records_after_the_timeout_go_to_parquet_output(
    tmp_path, cli, scheduler, monkeypatch
):
    """Covers cli/batch/dask.py:276 (_Run.write_records: -o DIR.parquet).

    After the --timeout, the limit records of the lines not finished go to -o DIR.parquet
    as any line does: their line, error "limit", the record in "document", no value.  By
    hand: lines 2 to 7, in order."""
    pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "in.csv"
    path.write_text(_SIX, encoding="utf-8")
    out = tmp_path / "out.parquet"
    _late_workers(monkeypatch)
    got = _dask(
        cli,
        scheduler,
        path,
        "--expr",
        "x",
        "--partition-size",
        "4",
        "--timeout",
        "600",
        "-o",
        out,
    )
    assert got.code == 1, got.err
    _, rows, columns = _read_parquet(out)
    assert columns == ["line", "expr", "value", "grad_x", "error", "document"]
    assert [(r["line"], r["error"], r["value"]) for r in rows] == [
        (n, "limit", None) for n in range(2, 8)
    ]
    assert [json.loads(r["document"])["line"] for r in rows] == list(range(2, 8))


def test_limit_records_of_a_partition_not_numbered_or_all_written_are_none(tmp_path):
    """Covers cli/batch/dask.py:663 (_limit_records: no first line number) and the branch
    668->664 (a chunk whose lines are all written).

    A text partition whose first line number is not known has no records (none can be
    numbered); one whose lines are all written up to ``after`` (its last line) has none
    either, and one written up to its first line gets records for the others only.  By
    hand: "1\\n2\\n3\\n" numbered from 2: lines 2, 3, 4."""
    path = tmp_path / "in.csv"
    path.write_bytes(b"x\n1\n2\n3\n")
    stop = dask_parts.WorkerStop(stoppable=False)
    part = dask_parts.Part(0, str(path), "csv", 2, 8, None, ["x"])
    part.range = dask_parts.measure(str(path), 2, 8)
    assert part.range == (2, 8, 3)
    assert list(batch_dask._limit_records(part, "late", stop)) == []
    part.first_line = 2
    assert list(batch_dask._limit_records(part, "late", stop, after=4)) == []
    chunks = list(batch_dask._limit_records(part, "late", stop, after=2))
    assert [numbers for numbers, _ in chunks] == [[3, 4]]
    docs = [json.loads(text) for text in chunks[0][1]]
    assert [(d["line"], d["error"]["kind"]) for d in docs] == [(3, "limit"), (4, "limit")]


# ---------------------------------------------------------------------------
# dask_parts: a file shorter than its size said (read while it shrinks)
# ---------------------------------------------------------------------------


def test_line_start_and_line_ends_stop_at_the_end_of_a_file_that_shrank(tmp_path):
    """Covers cli/batch/dask_parts.py:233 (_line_start: the data ends before ``size``)
    and 254 (_count_ends: likewise).

    A file may shrink between its size and its reading: the line start looked for past
    the data is the data's end (not the size said), and the line ends counted are those
    of the data.  By hand: b"ab\\ncd" is 5 bytes; from byte 4 (inside "cd") the next line
    start is its end, 5; bytes 0 to 100 hold one line end."""
    path = tmp_path / "in.csv"
    path.write_bytes(b"ab\ncd")
    with open(path, "rb") as f:
        assert dask_parts._line_start(f, 4, 100) == 5
        assert dask_parts._line_start(f, 1, 100) == 3
        assert dask_parts._count_ends(f, 0, 100) == 1
        assert dask_parts._count_ends(f, 3, 100) == 0


def test_skipping_more_lines_than_a_file_has_ends_at_its_end(tmp_path):
    """Covers cli/batch/dask_parts.py:281 (_skip_lines: the file ends first).

    The byte offset after the first ``count`` lines is the file's size when it has fewer
    lines.  By hand: b"a\\r\\nb\\r" has lines ending at bytes 3 and 5."""
    path = tmp_path / "in.csv"
    path.write_bytes(b"a\r\nb\r")
    assert dask_parts._skip_lines(str(path), 1) == 3
    assert dask_parts._skip_lines(str(path), 2) == 5
    assert dask_parts._skip_lines(str(path), 3) == 5
    assert dask_parts._skip_lines(str(path), 7) == 5
