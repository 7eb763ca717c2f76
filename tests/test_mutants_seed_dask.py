"""The Dask engine's survivors of ``bench/mutate.py --sample 10`` with seeds 101 and 202.

Seeds nobody had tuned the tests against (issue 24).  Apart from tests/test_mutants_seed101.py
and test_mutants_seed202.py because it needs Dask (skipped without it).  Each test's comment
names the mutant it kills (``file:line: original -> mutant``, line numbers as they were when it
was found); the expected values come from the local engine (the Dask engine's reference, line
for line), from counting by hand or from the docstrings, never from the code under test.
"""

from __future__ import annotations

import pytest

distributed = pytest.importorskip("distributed")
pytest.importorskip("dask")

import test_batch_dask  # noqa: E402

from autograd_cli.cli.batch import dask as batch_dask  # noqa: E402
from autograd_cli.cli.batch import dask_parts  # noqa: E402
from autograd_cli.cli.batch import io as batch_io  # noqa: E402

# the Dask engine's test fixtures (a local cluster for the module, the command's runner)
cli = test_batch_dask.cli
dask = test_batch_dask.dask
EXPR = test_batch_dask.EXPR


class _Client:
    def __init__(self, nthreads):
        self._nthreads = nthreads

    def nthreads(self):
        return self._nthreads


def test_a_cluster_without_workers_yet_counts_as_one_thread():
    # kills cli/batch_dask.py:801: return max(1, sum(client.nthreads().values())) ->
    #   max(0, ...)   (seed 202; a scheduler whose workers have not joined yet reported 0
    #   threads, and the input was split for none)
    assert batch_dask._threads(_Client({})) == 1
    assert batch_dask._threads(_Client({"tcp://a": 2, "tcp://b": 3})) == 5


def test_an_aborted_parquet_output_leaves_no_temporary_folder(tmp_path):
    # kills cli/batch_dask.py:724: if self.tmp is not None: -> if self.tmp is None:
    #   (seed 202; abort, after an error, left the hidden .o.parquet.*.tmp folder behind)
    pq = pytest.importorskip("pyarrow.parquet")
    sink = dask_parts.ParquetSink(str(tmp_path / "o.parquet"), pq, {})
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # its work folder
    sink.abort()
    assert list(tmp_path.iterdir()) == []
    sink.abort()  # twice: nothing left to remove, no error
    assert list(tmp_path.iterdir()) == []


def test_a_runaway_line_says_how_many_lines_were_written_before_it(
    tmp_path, cli, scheduler, monkeypatch
):
    # kills cli/batch_dask.py:859: self.written += done.lines -> self.written -= done.lines
    #   (seed 202; the error said "after -4 output line(s)")
    monkeypatch.setattr(batch_io, "MAX_LINE_BYTES", 12)
    monkeypatch.setattr(batch_io, "MAX_RUNAWAY_BYTES", 40)
    monkeypatch.setattr(batch_io, "_READ_SIZE", 5)
    monkeypatch.setattr(dask_parts, "_SCAN_LIMIT", 52)
    path = tmp_path / "in.csv"
    path.write_text("x,y\n1,2\n3," + "4" * 20 + "\n5,6\n7," + "8" * 60 + "\n9,10\n")
    # lines 2-4 and the runaway line 5's error record: 4 output lines
    local = cli("batch", path, "--expr", EXPR)
    assert local.code == 1 and len(local.out.splitlines()) == 4
    said = [line for line in local.err.splitlines() if "goes on for more than" in line]
    assert said and "after 4 output line(s)" in said[0], local.err
    for size in ("4", "1M"):
        got = dask(cli, scheduler, path, "--expr", EXPR, "--partition-size", size)
        assert got.code == 1 and got.out == local.out
        assert [line for line in got.err.splitlines() if "goes on for more than" in line] == said


def test_file_names_sort_naturally():
    # the key's shape: text and number pieces alternate from a text piece, so pieces at the
    # same place are always of one kind (see bench/mutate_equivalent.txt, _natural)
    names = ["in10.csv", "in9.csv", "in1.csv", "a.csv", "in2b.csv", "in2a.csv"]
    assert sorted(names, key=dask_parts._natural) == [
        "a.csv",
        "in1.csv",
        "in2a.csv",
        "in2b.csv",
        "in9.csv",
        "in10.csv",
    ]


class _FailingProgress:
    """A progress display whose update fails (an unexpected error mid-run): it records
    whether it was stopped, as the real one must be (its refresh thread draws on stderr)."""

    made: list = []

    def __init__(self, enabled, total):
        self.stopped = False
        _FailingProgress.made.append(self)

    def update(self, position, lines):
        raise RuntimeError("a progress display that fails")

    def stop(self):
        self.stopped = True


def test_an_unexpected_error_mid_run_stops_the_progress_display(
    tmp_path, cli, scheduler, monkeypatch
):
    # kills cli/batch_dask.py:962: run.progress.stop() -> pass   (seed 202; after an
    #   unexpected error the display's thread went on drawing on stderr after the command)
    path = tmp_path / "in.csv"
    path.write_text("x,y\n1,2\n3,4\n")
    monkeypatch.setattr(batch_io, "Progress", _FailingProgress)
    _FailingProgress.made = []
    got = dask(cli, scheduler, path, "--expr", EXPR)
    assert got.code != 0
    assert _FailingProgress.made and all(p.stopped for p in _FailingProgress.made)


@pytest.mark.parametrize(
    "text",
    [
        "x,y\r1,2\r3," + "4" * 20 + "\r5,6\r7," + "8" * 60 + "\r9,10\r",
        "x,y\r1,2\r" + "8" * 60 + "\r9,10\r",
        "x,y\r\n1,2\r" + "8" * 60 + "\r\n9,10\r",
    ],
    ids=["cr", "cr-runaway-first", "mixed"],
)
def test_overlong_and_runaway_lines_after_lone_carriage_returns(
    tmp_path, cli, scheduler, monkeypatch, text
):
    # kills cli/batch_dask.py:288: if pair[:1] == b"\n" or (pair[:1] == b"\r" and
    #   pair[1:2] != b"\n"): -> ... (pair[:0] == b"\r" ...)   (seed 101; a partition that
    #   began right after a lone \r, an old Mac line end, was not taken as a line start: the
    #   next one was looked for, which a runaway line puts out of reach, and the output
    #   differed from the local engine's)
    # Every partition size from 1 byte: each line start is some partition's first byte.
    monkeypatch.setattr(batch_io, "MAX_LINE_BYTES", 12)
    monkeypatch.setattr(batch_io, "MAX_RUNAWAY_BYTES", 40)
    monkeypatch.setattr(batch_io, "_READ_SIZE", 5)
    monkeypatch.setattr(dask_parts, "_SCAN_LIMIT", 52)
    path = tmp_path / "in.csv"
    path.write_bytes(text.encode("ascii"))
    test_batch_dask.same(
        cli, scheduler, path, "--expr", EXPR, sizes=("1", "2", "3", "4", "5", "8", "1M")
    )


def test_a_timeout_tail_cut_short_names_the_last_line_given_a_record(
    tmp_path, cli, scheduler, monkeypatch
):
    # kills cli/batch/dask.py:634 (seed 101, after the rebuild): last = (path, numbers[-1])
    #   -> numbers[1].  When the limit records of the unfinished lines reach
    #   TIMEOUT_TAIL_LINES, reading stops and the message names the last line that got one,
    #   which is the last line of the output.
    from autograd_cli.cli.batch import command

    path = tmp_path / "in.csv"
    path.write_text("x,y\n" + "".join(f"{k},{k + 1}\n" for k in range(60)))
    monkeypatch.setattr(command, "TIMEOUT_TAIL_LINES", 5)
    test_batch_dask._slow_after_first(monkeypatch, test_batch_dask._wait_for_the_deadline)
    got = dask(cli, scheduler, path, "--expr", EXPR, "--partition-size", "100", "--timeout", "1")
    assert got.code == 1 and "stopped after the --timeout of 1 s" in got.err
    last = got.docs[-1]["line"]
    assert f"reading stopped after line {last}:" in got.err, (last, got.err)
    assert last < 61  # cut short: not every line has a record
