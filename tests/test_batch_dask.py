"""``batch --engine dask``: the same output as the local engine, byte for byte, from a cluster.

One in-process local cluster (threads) serves the module, joined with ``--scheduler
ADDRESS``; one test runs ``--scheduler in-process`` (a cluster of its own).  Every test
compares with the local engine run on the same input (``"file"`` added for several files).
Skipped where Dask is not installed (Parquet: where pyarrow is not).
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import signal
import sys
import threading
import time

import pytest

distributed = pytest.importorskip("distributed")
pytest.importorskip("dask")

from autograd_cli.cli.batch import dask_parts  # noqa: E402
from autograd_cli.cli.batch import io as batch_io  # noqa: E402
from autograd_cli.cli.main import run  # noqa: E402

EXPR = "x*sin(y) + y**2"


class Out:
    def __init__(self, code, out, err):
        self.code, self.out, self.err = code, out, err

    @property
    def docs(self):
        return [json.loads(line) for line in self.out.splitlines()]


def recorded_clusters(monkeypatch) -> list:
    """Each local cluster a run starts, as (the keywords it was asked for, the cluster),
    started as threads whatever was asked, so that a test spawns no processes."""
    started = []

    class Recorded(distributed.LocalCluster):
        def __init__(self, *args, **kwargs):
            asked = dict(kwargs)
            kwargs["processes"] = False
            super().__init__(*args, **kwargs)
            started.append((asked, self))

    monkeypatch.setattr(distributed, "LocalCluster", Recorded)
    return started


@pytest.fixture
def cli(capsys):
    def invoke(*argv):
        capsys.readouterr()
        code = run([str(a) for a in argv])
        captured = capsys.readouterr()
        return Out(int(code), captured.out, captured.err)

    return invoke


def dask(cli, scheduler, *argv):
    return cli("batch", *argv, "--engine", "dask", "--scheduler", scheduler)


def same(cli, scheduler, *argv, sizes=("7", "1M")):
    """The local engine's output and exit code, and the Dask engine's at each partition size."""
    local = cli("batch", *argv)
    for size in sizes:
        got = dask(cli, scheduler, *argv, "--partition-size", size)
        assert got.out == local.out, (size, got.err)
        assert got.code == local.code, (size, got.err)
    return local


def with_file(out: str, path) -> list:
    """The local engine's lines with "file" first, as the Dask engine writes several files."""
    head = '{"file": ' + json.dumps(str(path)) + ", "
    return [head + line[1:] for line in out.splitlines()]


# ---- CSV and JSONL: the local engine's bytes ---------------------------------------------------

CSV_TEXT = (
    "\ufeffx,y\r\n1,2\r\n3,4\r\n\r\n5,oops\r\n0.5,0.25\r-1,2\r\n"
    '"[1, 2]",3\n7\n,8\n  \n1e400,2\n-0.0,0\n9,10'
)


def test_csv_with_bad_lines_and_odd_line_ends(tmp_path, cli, scheduler):
    path = tmp_path / "in.csv"
    path.write_bytes(CSV_TEXT.encode("utf-8"))
    local = same(cli, scheduler, path, "--expr", EXPR, sizes=("1", "5", "23", "1M"))
    assert local.code == 1 and len(local.docs) == 11
    same(cli, scheduler, path, "--expr", EXPR, "--op", "hessian", "--chunk-size", "2")


def test_a_line_end_split_across_reads_counts_once(tmp_path, cli, scheduler, monkeypatch):
    # reads of 4 bytes: many a \r\n has its \r at the end of one read and its \n at the
    # start of the next; counted twice, every line number after it would shift by one
    monkeypatch.setattr(dask_parts, "_READ", 4)
    data = ("x,y\r\n" + "".join(f"{i},{i % 3}\r\n" for i in range(12)) + "oops\r\n1,2\r\n").encode()
    path = tmp_path / "in.csv"
    path.write_bytes(data)
    with open(path, "rb") as f:
        for start in range(len(data)):
            p0 = dask_parts._line_start(f, start, len(data))
            want = len(re.findall(rb"\r\n|\r|\n", data[p0:]))
            assert dask_parts._count_ends(f, p0, len(data)) == want, (start, p0)
    local = same(cli, scheduler, path, "--expr", EXPR, sizes=("9", "23", "1M"))
    assert local.code == 1 and local.docs[-2]["line"] == 14  # "oops", after 1 + 12 lines


def test_csv_numbers_only_and_chunks(tmp_path, cli, scheduler):
    rows = "".join(f"{i * 0.37 - 3!r},{i % 7 - 2.5!r}\n" for i in range(400))
    path = tmp_path / "in.csv"
    path.write_text("x,y,unused\n" + rows.replace("\n", ",0\n"), encoding="utf-8")
    local = same(cli, scheduler, path, "--expr", EXPR, "--chunk-size", "64", sizes=("1K", "1M"))
    assert local.code == 0 and "ignoring CSV column 'unused'" in local.err


JSONL_LINES = [
    '{"x": 1, "y": 2}',
    '{"x": 3}',
    "not json",
    "",
    '{"x": 0.5, "y": [1, 2]}',
    '{"expr": "x**2", "vars": {"x": 3}, "op": "hessian"}',
    '{"expr": "x**3", "vars": {"x": 2}, "op": "diff", "order": 2}',
    '{"expr": "x**2 - 4*x", "vars": {"x": 0}, "op": "minimize"}',
    '{"vars": {"x": "nan", "y": "inf"}}',
    "[1, 2]",
    '{"x": 2, "y": 1, "z": 3}',
    '{"expr": "sum(x*y)", "vars": {"x": [1, 2], "y": [3, 4]}, "op": "eval"}',
]


def test_jsonl_with_bad_lines_and_every_kind_of_op(tmp_path, cli, scheduler):
    path = tmp_path / "in.jsonl"
    path.write_text("\ufeff" + "\n".join(JSONL_LINES) + "\n\n", encoding="utf-8")
    local = same(cli, scheduler, path, "--expr", "x*y", sizes=("3", "40", "1M"))
    assert local.code == 1 and len(local.docs) == len(JSONL_LINES) - 1
    same(cli, scheduler, path, "--expr", "x*y", "--fail-fast", sizes=("3", "1M"))


def test_overlong_and_runaway_lines(tmp_path, cli, scheduler, monkeypatch):
    monkeypatch.setattr(batch_io, "MAX_LINE_BYTES", 12)
    monkeypatch.setattr(batch_io, "MAX_RUNAWAY_BYTES", 40)
    monkeypatch.setattr(batch_io, "_READ_SIZE", 5)
    monkeypatch.setattr(dask_parts, "_SCAN_LIMIT", 52)
    path = tmp_path / "in.csv"
    path.write_text("x,y\n1,2\n3," + "4" * 20 + "\n5,6\n7," + "8" * 60 + "\n9,10\n")
    local = same(cli, scheduler, path, "--expr", EXPR, sizes=("4", "1M"))
    assert local.code == 1 and "goes on for more than 40 bytes" in local.err
    assert [d["line"] for d in local.docs] == [2, 3, 4, 5]


# ---- Parquet input: as the same table in CSV ----------------------------------------------------


def write_parquet(tmp_path, name, columns: dict, row_group_size: int):
    """A Parquet file and the CSV file of the same table (cells as the engine reads them;
    a column whose name is not a variable name left out: the Parquet reader ignores it)."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / f"{name}.parquet"
    pq.write_table(pa.table(columns), path, row_group_size=row_group_size)
    columns = {k: v for k, v in columns.items() if k.isidentifier()}
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(list(columns))
    for row in zip(*columns.values()):
        writer.writerow([dask_parts._cell_text(v) for v in row])
    csv_path = tmp_path / f"{name}.csv"
    csv_path.write_text(text.getvalue(), encoding="utf-8")
    return path, csv_path


def test_parquet_input_matches_the_csv_of_the_same_table(tmp_path, cli, scheduler):
    plain, plain_csv = write_parquet(
        tmp_path,
        "plain",
        {"x": [1.0, 3.0, 0.5, -1.0, 2.5], "y": [2, 4, 1, 2, -3], "junk col": list("abcde")},
        2,
    )
    local = cli("batch", plain_csv, "--expr", EXPR)
    got = dask(cli, scheduler, plain, "--expr", EXPR)
    assert local.code == 0 and got.code == 0 and got.out == local.out
    assert "ignoring CSV column 'junk col'" in got.err
    odd, odd_csv = write_parquet(
        tmp_path,
        "odd",
        {
            "x": [1.0, None, 0.5, float("nan"), 2.0, 1.0],
            "y": ["2", "oops", "[1, 2]", "inf", "", "3"],
        },
        4,
    )
    for op in ("grad", "eval", "jacobian"):
        local = cli("batch", odd_csv, "--expr", EXPR, "--op", op)
        got = dask(cli, scheduler, odd, "--expr", EXPR, "--op", op)
        assert local.code == 1 and got.code == 1
        assert got.out == local.out, op


# ---- several files ------------------------------------------------------------------------------


def test_glob_and_folder_of_several_files(tmp_path, cli, scheduler):
    folder = tmp_path / "parts"
    folder.mkdir()
    texts = {}
    for i in (1, 2, 10):
        rows = "".join(f"{i + k / 8!r},{k - 2!r}\n" for k in range(6))
        texts[i] = "x,y\n" + rows + ("bad,row\n" if i == 2 else "")
        (folder / f"part.{i}.csv").write_text(texts[i], encoding="utf-8")
    (folder / "_SUCCESS").write_text("")
    (folder / "notes.txt").write_text("not data")
    expected = []
    for i in (1, 2, 10):  # numbers in names compared as numbers
        path = folder / f"part.{i}.csv"
        expected += with_file(cli("batch", path, "--expr", EXPR).out, path)
    got = dask(cli, scheduler, folder, "--expr", EXPR, "--partition-size", "9")
    assert got.code == 1 and got.out.splitlines() == expected, got.err
    got = dask(cli, scheduler, str(folder / "part.*.csv"), "--expr", EXPR)
    assert got.code == 1 and got.out.splitlines() == expected
    one = dask(cli, scheduler, str(folder / "part.1*.csv"), "--expr", EXPR, "--op", "eval")
    assert one.code == 0 and all(d["file"].endswith((".1.csv", ".10.csv")) for d in one.docs)


def test_a_file_name_with_a_quote_is_written_as_json(tmp_path, cli, scheduler):
    # the "file" of each line is a JSON string: a quote or a backslash in the name escaped
    folder = tmp_path / "parts"
    folder.mkdir()
    paths = [folder / 'a"1.csv', folder / "b\\2.csv"]
    for path in paths:
        path.write_text("x,y\n1,2\n3,4\n", encoding="utf-8")
    expected = []
    for path in paths:
        expected += with_file(cli("batch", path, "--expr", EXPR).out, path)
    got = dask(cli, scheduler, folder, "--expr", EXPR)
    assert got.code == 0 and got.out.splitlines() == expected, got.err
    assert [d["file"] for d in got.docs] == [str(p) for p in paths for _ in range(2)]


# ---- Parquet output -----------------------------------------------------------------------------


def test_parquet_output_reads_back_as_the_jsonl(tmp_path, cli, scheduler):
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "in.csv"
    path.write_text("x,y\n1,2\n3,4\nbad,1\n0.5,0.25\n-1,nan\n\n2,3\n", encoding="utf-8")
    jsonl = cli("batch", path, "--expr", EXPR)
    out = tmp_path / "out.parquet"
    got = dask(cli, scheduler, path, "--expr", EXPR, "-o", out, "--partition-size", "8")
    assert got.code == jsonl.code == 1 and got.out == ""
    table = pq.read_table(out)
    assert table.column_names == [
        "line",
        "expr",
        "value",
        "grad_x",
        "grad_y",
        "error",
        "document",
    ]
    rows = table.to_pylist()
    docs = jsonl.docs
    assert [r["line"] for r in rows] == [d["line"] for d in docs]
    for row, doc, text in zip(rows, docs, jsonl.out.splitlines()):
        if "error" in doc:
            assert row["error"] == doc["error"]["kind"] and row["document"] == text
            assert row["value"] is None
            continue
        assert row["error"] is None and row["document"] is None and row["expr"] == EXPR
        for got_v, want in [(row["value"], doc["value"])] + [
            (row[f"grad_{k}"], v) for k, v in doc["grad"].items()
        ]:
            assert json.dumps(got_v if got_v == got_v else "nan") == json.dumps(want)
    # written again: the folder of part files is replaced
    again = dask(cli, scheduler, path, "--expr", EXPR, "--op", "eval", "-o", out)
    assert again.code == 1 and pq.read_table(out).column_names[:3] == ["line", "expr", "value"]
    assert "grad_x" not in pq.read_table(out).column_names


def test_parquet_output_of_several_files_and_other_results(tmp_path, cli, scheduler):
    pq = pytest.importorskip("pyarrow.parquet")
    for i in (1, 2):
        (tmp_path / f"in{i}.jsonl").write_text("\n".join(JSONL_LINES[:7]) + "\n")
    out = tmp_path / "res.parquet"
    got = dask(cli, scheduler, str(tmp_path / "in*.jsonl"), "--expr", "x*y", "-o", out)
    assert got.code == 1
    rows = pq.read_table(out).to_pylist()
    local = cli("batch", tmp_path / "in1.jsonl", "--expr", "x*y").out.splitlines()
    assert [r["file"] for r in rows] == [str(tmp_path / "in1.jsonl")] * 6 + [
        str(tmp_path / "in2.jsonl")
    ] * 6
    head = '{"file": ' + json.dumps(str(tmp_path / "in1.jsonl")) + ", "
    documents = [None] + [head + line[1:] for line in local[1:]]  # all but a plain result
    assert [r["document"] for r in rows[:6]] == documents
    (tmp_path / "res.parquet" / "mine.txt").write_text("keep me")
    refused = dask(cli, scheduler, str(tmp_path / "in*.jsonl"), "--expr", "x*y", "-o", out)
    assert refused.code == 2 and "mine.txt" in refused.err


# ---- errors, Ctrl-C, --timeout ------------------------------------------------------------------


def test_without_dask_it_is_a_usage_error(tmp_path, cli, monkeypatch):
    path = tmp_path / "in.csv"
    path.write_text("x,y\n1,2\n")
    monkeypatch.setitem(sys.modules, "dask", None)
    got = cli("batch", path, "--expr", EXPR, "--engine", "dask")
    assert got.code == 2 and got.out == ""
    assert "pip install 'autograd-cli[dask]'" in got.err


def test_without_pyarrow_parquet_is_a_usage_error(tmp_path, cli, monkeypatch, scheduler):
    path = tmp_path / "in.csv"
    path.write_text("x,y\n1,2\n")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    got = dask(cli, scheduler, path, "--expr", EXPR, "-o", tmp_path / "o.parquet")
    assert got.code == 2 and "needs pyarrow: pip install 'autograd-cli[dask]'" in got.err
    assert not (tmp_path / "o.parquet").exists()
    (tmp_path / "t.parquet").write_bytes(b"PAR1")
    got = dask(cli, scheduler, tmp_path / "t.parquet", "--expr", EXPR)
    assert got.code == 2 and "Parquet input needs pyarrow" in got.err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["-", "--engine", "dask"], "not standard input"),
        (["{d}/nothing*.csv", "--engine", "dask"], "no file matches"),
        (
            ["{d}/in.csv", "--scheduler", "tcp://127.0.0.1:1"],
            "--scheduler applies to --engine dask",
        ),
        (["{d}/in.csv", "--engine", "spark"], "--engine must be local or dask"),
        (["{d}/in.csv", "--engine", "dask", "--partition-size", "0"], "at least 1 byte"),
        # under a byte, not the "0" that means no limit (seed 313's survivor: 0 <= size)
        (["{d}/in.csv", "--engine", "dask", "--partition-size", "0.5"], "at least 1 byte"),
        (["{d}/in.csv", "--engine", "dask", "--partition-size", "0B"], "at least 1 byte"),
        (["{d}", "--engine", "dask"], "has no CSV, JSONL or Parquet files"),
    ],
)
def test_usage_errors(tmp_path, cli, argv, message):
    (tmp_path / "in.csv").write_text("x,y\n1,2\n")
    if argv[0] == "{d}":
        (tmp_path / "in.csv").rename(tmp_path / "in.txt")
    got = cli("batch", *[a.format(d=tmp_path) for a in argv], "--expr", EXPR)
    assert got.code == 2 and message in got.err, got.err


def test_in_process_cluster_of_its_own(tmp_path, cli):
    path = tmp_path / "in.csv"
    path.write_text("x,y\n1,2\n3,4\n")
    local = cli("batch", path, "--expr", EXPR, "--op", "eval")
    got = cli(
        "batch", path, "--expr", EXPR, "--op", "eval", "--engine", "dask",
        "--scheduler", "in-process", "--workers", "1", "--dtype", "float32",
    )  # fmt: skip
    assert got.code == 0 and len(got.docs) == 2
    assert got.out != local.out  # float32 reached the workers
    assert got.docs[0]["value"] == pytest.approx(local.docs[0]["value"], rel=1e-6)


_REAL_EVALUATE = dask_parts.evaluate_part
_ACTION: list = []  # what partitions after the first do first (the workers are threads here)
_SENT = threading.Event()


def _evaluate_after(part, *args):
    if part.index > 0:
        _ACTION[0]()
    return _REAL_EVALUATE(part, *args)


def _slow_after_first(monkeypatch, action):
    """Partitions after the first run ``action()`` first (a signal, a wait)."""
    monkeypatch.setattr(dask_parts, "evaluate_part", _evaluate_after)
    monkeypatch.setattr(sys.modules[__name__], "_ACTION", [action])


def _wait_for_the_deadline():
    time.sleep(1.5)


def _evaluate_late(part, *args):
    _wait_for_the_deadline()
    return _REAL_EVALUATE(part, *args)


def every_part_late(monkeypatch):
    """Every partition waits 1.5 s before it evaluates: past a --timeout of 1 s."""
    monkeypatch.setattr(dask_parts, "evaluate_part", _evaluate_late)


def late_past_the_timeout(cli, scheduler, tmp_path, monkeypatch, rows: int, tail: int):
    """A CSV of ``rows`` lines run by the Dask engine with every partition late
    (:func:`every_part_late`) past a --timeout of 1 s and a tail cap of ``tail`` lines:
    exit 1, the timeout said, and the first five lines' records all of kind limit."""
    from autograd_cli.cli.batch import command

    path = tmp_path / "in.csv"
    path.write_text("x,y\n" + "".join(f"{k},{k + 1}\n" for k in range(rows)))
    monkeypatch.setattr(command, "TIMEOUT_TAIL_LINES", tail)
    every_part_late(monkeypatch)
    got = dask(cli, scheduler, path, "--expr", "x*y", "--timeout", "1")
    assert got.code == 1 and "stopped after the --timeout of 1 s" in got.err, got
    assert [d["line"] for d in got.docs] == [2, 3, 4, 5, 6]
    assert all(d["error"]["kind"] == "limit" for d in got.docs)
    return got


def _interrupt():
    if not _SENT.is_set():
        _SENT.set()
        time.sleep(0.3)
        os.kill(os.getpid(), signal.SIGINT)  # the main thread's handler: a stop
    time.sleep(0.5)


def test_timeout_gives_every_line_its_record(tmp_path, cli, scheduler, monkeypatch):
    path = tmp_path / "in.csv"
    path.write_text("x,y\n" + "".join(f"{k},{k + 1}\n" for k in range(60)))
    local = cli("batch", path, "--expr", EXPR)
    _slow_after_first(monkeypatch, _wait_for_the_deadline)
    got = dask(cli, scheduler, path, "--expr", EXPR, "--partition-size", "100", "--timeout", "1")
    assert got.code == 1 and "stopped after the --timeout of 1 s" in got.err
    assert [d["line"] for d in got.docs] == [d["line"] for d in local.docs]
    lines = got.out.splitlines()
    limited = [d["error"]["kind"] == "limit" for d in got.docs if "error" in d]
    assert lines[0] == local.out.splitlines()[0] and limited and all(limited)
    for mine, theirs in zip(lines, local.out.splitlines()):
        assert mine == theirs or '"kind": "limit"' in mine


def test_ctrl_c_keeps_the_finished_lines_in_order(tmp_path, cli, scheduler, monkeypatch):
    path = tmp_path / "in.jsonl"
    path.write_text("".join(f'{{"x": {k}, "y": 2}}\n' for k in range(80)))
    out = tmp_path / "out.jsonl"
    local = cli("batch", path, "--expr", EXPR).out.splitlines()
    _SENT.clear()
    _slow_after_first(monkeypatch, _interrupt)
    # Ctrl-C as at a terminal: a runner started in the background (`cmd &` in a script, as
    # CI may be) inherits SIGINT ignored, and the tool keeps an ignored SIGINT ignored
    saved = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        got = dask(cli, scheduler, path, "--expr", EXPR, "--partition-size", "200", "-o", out)
    finally:
        signal.signal(signal.SIGINT, saved)
    assert got.code == 130 and "interrupted;" in got.err
    written = out.read_text().splitlines()
    assert written == local[: len(written)] and len(written) < len(local)
    assert f"{len(written)} complete line(s) written" in got.err


def test_a_local_cluster_of_processes_and_ctrl_c_at_the_terminal(tmp_path):
    """The default cluster (worker processes), through the console script: the output of a
    run, then Ctrl-C sent to the whole process group as a terminal does: exit 130, the lines
    written a prefix of the full output, and no worker traceback (they ignore SIGINT)."""
    import subprocess

    path = tmp_path / "in.csv"
    path.write_text("x,y\n" + "".join(f"{k / 7!r},{k % 5 - 2}\n" for k in range(60000)))
    cmd = [sys.executable, "-m", "autograd_cli", "batch", str(path), "--expr", EXPR]
    cmd += ["--no-progress"]
    local = subprocess.run(cmd, capture_output=True, timeout=120).stdout
    proc = subprocess.Popen(
        cmd + ["--engine", "dask", "--workers", "1", "--partition-size", "16K"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        # SIGINT at its default, as at a terminal, even when the runner ignores it
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        first = proc.stdout.readline()  # the first partition is written: the run is going
        os.killpg(proc.pid, signal.SIGINT)
        rest = proc.stdout.read()  # (communicate would skip what readline has buffered)
        err = proc.stderr.read()
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    out = first + rest
    assert proc.returncode == 130, err.decode()[-2000:]
    assert out and local.startswith(out) and len(out) < len(local)
    assert b"Traceback" not in err and b"interrupted;" in err


def test_a_scheduler_address_that_is_not_dask_is_a_usage_error(cli, tmp_path):
    # something else listening there: its first bytes read as an impossible frame length
    # (Dask then asks NumPy for exabytes): a usage error naming the address, not "out of memory"
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    port = server.getsockname()[1]

    def answer():
        for _ in range(4):
            try:
                conn, _ = server.accept()
            except OSError:
                return
            conn.sendall(b"\xff" * 64)
            conn.close()

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    path = tmp_path / "p.csv"
    path.write_text("x\n1\n")
    try:
        got = cli(
            "batch",
            path,
            "--expr",
            "x",
            "--engine",
            "dask",
            "--scheduler",
            f"tcp://127.0.0.1:{port}",
            "--json",
        )
    finally:
        server.close()
    assert got.code == 2
    message = json.loads(got.out)["error"]["message"]
    assert "--scheduler: cannot reach a Dask scheduler" in message
