"""batch safety (issue 9): what ``-o`` may replace, signals, broken pipes, hostile input.

Most tests run the installed console script in a subprocess, because signals, devices,
FIFOs and closed pipes are properties of a real process.  Each asserts the exact exit
code and the exact state of the files afterwards (type, mode, bytes, no temporary file).
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time

import pytest

from autograd_cli.cli import batch as cli_batch
from autograd_cli.cli.batch import io as batch_io


def _console_script() -> str | None:
    here = os.path.join(os.path.dirname(sys.executable), "autograd-cli")
    return shutil.which("autograd-cli") or (here if os.path.exists(here) else None)


CLI = _console_script()
needs_cli = pytest.mark.skipif(
    CLI is None, reason="the autograd-cli console script is not installed"
)
posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX signals, FIFOs and devices")
TIMEOUT = 120
COUNT = re.compile(
    r"autograd-cli: (interrupted|terminated|hung up); (\d+) complete line\(s\) "
    r"written"
)


def _child_setup():
    """In the child: the stop signals at their defaults (the test runner may ignore some,
    e.g. under nohup), and a known umask."""
    for signum in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if signum is not None:
            signal.signal(signum, signal.SIG_DFL)
    os.umask(0o022)


def run_cli(*args, stdin=None, stdout=subprocess.PIPE, timeout=TIMEOUT, input=None):
    return subprocess.run(
        [CLI, *map(str, args)],
        stdin=stdin,
        stdout=stdout,
        stderr=subprocess.PIPE,
        input=input,
        timeout=timeout,
        preexec_fn=_child_setup,
    )


def popen_cli(*args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL):
    return subprocess.Popen(
        [CLI, *map(str, args)],
        stdin=stdin,
        stdout=stdout,
        stderr=subprocess.PIPE,
        preexec_fn=_child_setup,
    )


def small_csv(tmp_path, rows=5, name="in.csv"):
    path = tmp_path / name
    path.write_text("x,y\n" + "".join(f"{i},{i + 1}\n" for i in range(rows)))
    return path


def big_csv(tmp_path, rows=2_000_000, name="big.csv"):
    block = "".join(f"{i % 97}.25,{i % 13}.5\n" for i in range(10_000))
    path = tmp_path / name
    with open(path, "w") as f:
        f.write("x,y\n")
        for _ in range(rows // 10_000):
            f.write(block)
    return path


def temporaries(folder) -> list:
    return [n for n in os.listdir(folder) if n.endswith(".tmp")]


def check_complete_lines(data: bytes) -> list:
    """Every line is a whole JSON document, lines numbered 2, 3, ... without a gap."""
    assert data == b"" or data.endswith(b"\n")
    docs = [json.loads(line) for line in data.decode().splitlines()]
    assert [d["line"] for d in docs] == list(range(2, 2 + len(docs)))
    assert all("error" not in d for d in docs)
    return docs


# ---- -o: what gets replaced, and what never does ----------------------------------------------


@needs_cli
@posix_only
def test_symlink_stays_a_link_and_its_target_gets_the_output(tmp_path):
    src = small_csv(tmp_path)
    real = tmp_path / "data" / "real.jsonl"
    real.parent.mkdir()
    real.write_text("OLD\n")
    os.chmod(real, 0o640)
    link = tmp_path / "link.jsonl"
    link.symlink_to(os.path.join("data", "real.jsonl"))
    r = run_cli("batch", src, "-e", "x*y", "-o", link)
    assert r.returncode == 0, r.stderr
    assert os.path.islink(link) and os.readlink(link) == os.path.join("data", "real.jsonl")
    assert stat.S_ISREG(os.lstat(real).st_mode)
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o640
    assert len(check_complete_lines(real.read_bytes())) == 5
    assert temporaries(tmp_path) == [] and temporaries(real.parent) == []


@needs_cli
@posix_only
def test_dangling_symlink_creates_its_target(tmp_path):
    src = small_csv(tmp_path)
    link = tmp_path / "link.jsonl"
    link.symlink_to("made.jsonl")
    r = run_cli("batch", src, "-e", "x+y", "-o", link)
    assert r.returncode == 0, r.stderr
    assert os.path.islink(link)
    made = tmp_path / "made.jsonl"
    assert stat.S_IMODE(os.stat(made).st_mode) == 0o644  # 0666 & ~umask 022
    assert len(check_complete_lines(made.read_bytes())) == 5


@needs_cli
@posix_only
@pytest.mark.parametrize("mode", [0o600, 0o640, 0o604])
def test_existing_file_keeps_its_permission_bits(tmp_path, mode):
    src = small_csv(tmp_path)
    out = tmp_path / "out.jsonl"
    out.write_text("OLD\n")
    os.chmod(out, mode)
    r = run_cli("batch", src, "-e", "x+y", "-o", out)
    assert r.returncode == 0, r.stderr
    assert stat.S_IMODE(os.stat(out).st_mode) == mode
    assert len(check_complete_lines(out.read_bytes())) == 5
    new = tmp_path / "new.jsonl"
    assert run_cli("batch", src, "-e", "x+y", "-o", new).returncode == 0
    assert stat.S_IMODE(os.stat(new).st_mode) == 0o644
    assert temporaries(tmp_path) == []


@needs_cli
@posix_only
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_gets_the_lines_and_stays_a_fifo(tmp_path):
    src = small_csv(tmp_path, rows=300)
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got = {}

    def reader():
        with open(fifo, "rb") as f:
            got["data"] = f.read()

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    r = run_cli("batch", src, "-e", "x*y", "-o", fifo, "--chunk-size", "7")
    thread.join(timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert len(check_complete_lines(got["data"])) == 300
    assert temporaries(tmp_path) == []


def _device(tmp_path, name: str, minor: int) -> str:
    """A character device to write to as ``-o``: a private node (1, minor) in tmp_path
    where the system lets us make one, so that a broken implementation replaces that node,
    never the real /dev/NAME.  As root without one: skip (root could replace /dev/NAME)."""
    node = str(tmp_path / name)
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, minor))
        with open(node, "wb") as f:
            f.write(b"" if name == "full" else b"probe")
        return node
    except (OSError, AttributeError):
        if os.path.exists(node):
            os.unlink(node)
    if os.geteuid() == 0:
        pytest.skip(
            f"cannot make a private device node (nodev?), and /dev/{name} is not risked as root"
        )
    if not os.path.exists(f"/dev/{name}"):
        pytest.skip(f"no /dev/{name}")
    return f"/dev/{name}"


@needs_cli
@posix_only
def test_dev_null_stays_a_character_device(tmp_path):
    device = _device(tmp_path, "null", 3)
    before = os.stat(device)
    r = run_cli("batch", small_csv(tmp_path), "-e", "x+y", "-o", device)
    assert r.returncode == 0, r.stderr
    after = os.lstat(device)
    assert stat.S_ISCHR(after.st_mode)
    assert (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)
    assert temporaries(os.path.dirname(device)) == []


@needs_cli
@posix_only
@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="no /dev/fd here")
def test_dev_fd_is_written_through_the_descriptor(tmp_path):
    # (/dev/fd/1 rather than /dev/stdout: a broken version cannot replace anything in /dev)
    log = tmp_path / "log.txt"
    log.write_text("FIRST\n")
    with open(log, "ab") as out:  # `>> log`: appended to, never truncated
        r = run_cli("batch", small_csv(tmp_path), "-e", "x+y", "-o", "/dev/fd/1", stdout=out)
    assert r.returncode == 0, r.stderr
    text = log.read_text()
    assert text.startswith("FIRST\n")
    assert len(check_complete_lines(text[len("FIRST\n") :].encode())) == 5
    assert temporaries(tmp_path) == []


@needs_cli
@posix_only
def test_output_that_is_the_input_is_refused_before_reading(tmp_path):
    src = small_csv(tmp_path)
    before = src.read_bytes()
    (tmp_path / "link.csv").symlink_to("in.csv")
    os.link(src, tmp_path / "hard.csv")
    (tmp_path / "sub").mkdir()
    for out in (
        src,
        tmp_path / "link.csv",
        tmp_path / "sub" / ".." / "in.csv",
        tmp_path / "hard.csv",
    ):
        r = run_cli("batch", src, "-e", "x+y", "-o", out)
        assert r.returncode == 2, (out, r.stderr)
        assert b"is the input file" in r.stderr and r.stdout == b""
        assert src.read_bytes() == before
        assert os.path.islink(tmp_path / "link.csv")
    # through a symlink on the input side, and standard input that is the file
    r = run_cli("batch", tmp_path / "link.csv", "-e", "x+y", "-o", src)
    assert r.returncode == 2 and src.read_bytes() == before
    with open(src, "rb") as stdin:
        r = run_cli("batch", "-", "--format", "csv", "-e", "x+y", "-o", src, stdin=stdin)
    assert r.returncode == 2 and src.read_bytes() == before
    assert temporaries(tmp_path) == []


@needs_cli
@posix_only
def test_output_folder_is_a_usage_error_before_reading_anything(tmp_path):
    folder = tmp_path / "outdir"
    folder.mkdir()
    # stdin stays open and empty: reading it would hang, so exit 2 proves nothing was read
    proc = popen_cli(
        "batch", "-", "-e", "x+y", "-o", folder, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 2, err
    assert b"is a directory" in err and out == b""
    assert os.listdir(folder) == [] and temporaries(tmp_path) == []


@needs_cli
@posix_only
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_dev_full_output_exits_1_with_a_message(tmp_path):
    src = small_csv(tmp_path)
    full = _device(tmp_path, "full", 7)
    r = run_cli("batch", src, "-e", "x+y", "-o", full)
    assert r.returncode == 1
    err = r.stderr.decode()
    assert err == f"autograd-cli: error: cannot write {full!r}: No space left on device\n"
    assert stat.S_ISCHR(os.lstat(full).st_mode)
    # the same through standard output: one message, no second error at exit
    with open(full, "wb") as stdout:
        r = run_cli("batch", src, "-e", "x+y", stdout=stdout)
    assert r.returncode == 1
    assert r.stderr.decode() == (
        "autograd-cli: error: cannot write to standard output: No space left on device\n"
    )


@pytest.fixture
def small_tmpfs(tmp_path):
    mnt = tmp_path / "small"
    mnt.mkdir()
    try:
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"cannot mount a small tmpfs: {exc}")
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs: {done.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True, timeout=30)


@needs_cli
@posix_only
def test_full_disk_leaves_the_target_as_it_was(tmp_path, small_tmpfs):
    src = small_csv(tmp_path, rows=20_000)  # about 2 MB of output for a 64 KiB disk
    out = small_tmpfs / "out.jsonl"
    out.write_text("OLD\n")
    os.chmod(out, 0o600)
    r = run_cli("batch", src, "-e", "x*y", "-o", out, "--chunk-size", "100")
    assert r.returncode == 1
    err = r.stderr.decode()
    assert err.startswith(
        f"autograd-cli: error: cannot write {str(out)!r}: No space left on device"
    ), err
    assert "Traceback" not in err and err.count("\n") == 1
    assert out.read_bytes() == b"OLD\n"
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    assert os.listdir(small_tmpfs) == ["out.jsonl"]
    # a new file on a full disk: nothing is left behind at all
    r = run_cli("batch", src, "-e", "x*y", "-o", small_tmpfs / "new.jsonl")
    assert r.returncode == 1 and os.listdir(small_tmpfs) == ["out.jsonl"]
    assert r.stderr.decode().rstrip().endswith("was not created)")


# ---- signals ----------------------------------------------------------------------------------


def _wait_for_output(path_or_folder, predicate, proc, seconds=TIMEOUT):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(
                f"the run ended before the signal (exit {proc.returncode}): "
                f"{proc.stderr.read().decode()}"
            )
        if predicate():
            return
        time.sleep(0.02)
    pytest.fail("no output appeared in time")


def _temporary_size(folder) -> int:
    sizes = [os.path.getsize(os.path.join(folder, n)) for n in temporaries(folder)]
    return max(sizes, default=0)


@needs_cli
@posix_only
@pytest.mark.parametrize(
    "name, code, word",
    [("SIGTERM", 143, "terminated"), ("SIGHUP", 129, "hung up"), ("SIGINT", 130, "interrupted")],
)
def test_stop_signal_mid_run_keeps_complete_lines_and_no_temporary(tmp_path, name, code, word):
    signum = getattr(signal, name, None)
    if signum is None:
        pytest.skip(f"no {name} here")
    rows = 2_000_000
    src = big_csv(tmp_path, rows)
    # an expression of some weight, so that the run outlasts the wait for its first chunk
    # by seconds: with the PyArrow path a light one ended (its last chunk written and the
    # signal landing in the final commit, exit 0) before a loaded machine sent the signal
    heavy = " + ".join(f"sin(x*{k} + y)" for k in range(1, 21))
    for attempt in range(3):
        work = tmp_path / f"work{attempt}"
        work.mkdir()
        out = work / "out.jsonl"
        out.write_text("OLD\n")
        proc = popen_cli("batch", src, "-e", heavy, "-o", out, "--chunk-size", "20000")
        try:
            _wait_for_output(work, lambda work=work: _temporary_size(work) > 0, proc)
            proc.send_signal(signum)
            _, err = proc.communicate(timeout=TIMEOUT)
        finally:
            if proc.poll() is None:
                proc.kill()
        err = err.decode()
        if proc.returncode != 0:
            break
        # the run ended before the signal took effect (a machine busy enough to delay the
        # test for the seconds it runs: CI once): then it must be whole, and the attempt is
        # void; anything else is the stop's to answer for
        assert len(check_complete_lines(out.read_bytes())) == rows, err
    else:
        pytest.fail("three runs ended before the signal reached them")
    assert proc.returncode == code, err
    docs = check_complete_lines(out.read_bytes())
    assert 0 < len(docs) < rows
    m = COUNT.search(err)
    assert m and m.group(1) == word and int(m.group(2)) == len(docs), err
    assert "Traceback" not in err
    assert os.listdir(work) == ["out.jsonl"]


@needs_cli
@posix_only
def test_sigterm_mid_run_on_stdout_writes_only_complete_lines(tmp_path):
    rows = 2_000_000
    src = big_csv(tmp_path, rows)
    proc = popen_cli("batch", src, "-e", "x*y", "--chunk-size", "20000", stdout=subprocess.PIPE)
    try:
        first = proc.stdout.readline()  # the run is under way
        proc.send_signal(signal.SIGTERM)
        rest = proc.stdout.read()  # (communicate() would miss what readline() buffered)
        err = proc.stderr.read()
        proc.wait(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, err
    docs = check_complete_lines(first + rest)
    assert 0 < len(docs) < rows
    m = COUNT.search(err.decode())
    assert m and m.group(1) == "terminated" and int(m.group(2)) == len(docs)


def _temporary_lines(folder) -> int:
    names = temporaries(folder)
    if not names:
        return 0
    with open(os.path.join(folder, names[0]), "rb") as f:
        return f.read().count(b"\n")


@needs_cli
@posix_only
@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP here")
def test_sighup_while_waiting_for_input_commits_what_was_done(tmp_path):
    out = tmp_path / "out.jsonl"
    proc = popen_cli(
        "batch", "-", "-e", "x*2", "-o", out, "--chunk-size", "1", stdin=subprocess.PIPE
    )
    try:
        for i in range(3):
            proc.stdin.write(json.dumps({"x": i}).encode() + b"\n")
        proc.stdin.flush()
        _wait_for_output(tmp_path, lambda: _temporary_lines(tmp_path) == 3, proc)
        proc.send_signal(signal.SIGHUP)  # the run is waiting for line 4
        _, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 129, err
    docs = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(d["line"], d["value"]) for d in docs] == [(1, 0.0), (2, 2.0), (3, 4.0)]
    assert b"hung up; 3 complete line(s) written" in err
    assert sorted(os.listdir(tmp_path)) == ["out.jsonl"]


@needs_cli
@posix_only
def test_closed_pipe_ends_quietly_with_141(tmp_path):
    src = big_csv(tmp_path, 200_000)
    proc = popen_cli("batch", src, "-e", "x*y", stdout=subprocess.PIPE)
    try:
        line = proc.stdout.readline()  # `| head -1`
        proc.stdout.close()
        err = proc.stderr.read()
        proc.wait(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert json.loads(line)["line"] == 2
    assert proc.returncode == 141
    assert err == b""


# ---- hostile input ----------------------------------------------------------------------------


@needs_cli
@posix_only
@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
@pytest.mark.parametrize("how", ["file", "stdin"])
def test_dev_zero_input_ends_in_bounded_time(tmp_path, how):
    if how == "file":
        r = run_cli("batch", "/dev/zero", "-e", "x", timeout=60)
    else:
        with open("/dev/zero", "rb") as zero:
            r = run_cli("batch", "-", "-e", "x", stdin=zero, timeout=60)
    assert r.returncode == 1  # (a run that reads without bound ends in TimeoutExpired)
    docs = [json.loads(line) for line in r.stdout.decode().splitlines()]
    assert len(docs) == 1 and docs[0]["line"] == 1
    assert docs[0]["error"]["kind"] == "limit"
    assert "64 MiB" in docs[0]["error"]["message"]
    err = r.stderr.decode()
    assert (
        err.startswith("autograd-cli: error: line 1 goes on for more than 64 MiB")
        and err.count("\n") == 1
    ), err


@needs_cli
def test_overlong_lines_between_good_ones(tmp_path):
    limit = batch_io.MAX_LINE_BYTES
    exact = '{"x": 4' + " " * (limit - len('{"x": 4}')) + "}"
    assert len(exact) == limit  # the longest line allowed: evaluated
    lines = [
        '{"x": 1}',
        '{"x": 2' + " " * limit + "}",
        '{"x": 3}',
        exact,
        "\t" * (limit + 1),
        '{"x": 6}\r',
        '{"x": 7}',
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n")
    r = run_cli("batch", path, "-e", "x*10", "--op", "eval")
    assert r.returncode == 1, r.stderr
    docs = [json.loads(line) for line in r.stdout.decode().splitlines()]
    assert [d["line"] for d in docs] == [1, 2, 3, 4, 5, 6, 7]
    assert [d.get("value") for d in docs] == [10.0, None, 30.0, 40.0, None, 60.0, 70.0]
    for d in (docs[1], docs[4]):
        assert d["error"]["kind"] == "limit"
        assert d["error"]["message"] == (
            f"line {d['line']} is longer than 1 MiB (the most a "
            f"batch line may have); it was skipped"
        )
    assert b"2 of 7 line(s) failed" in r.stderr


@needs_cli
def test_overlong_csv_row_never_reaches_the_fast_path(tmp_path):
    # the row's first MiB alone would read as the valid row "3,444...4"
    path = tmp_path / "in.csv"
    path.write_text("x,y\n1,2\n3," + "4" * (batch_io.MAX_LINE_BYTES + 10) + "\n5,6\n")
    r = run_cli("batch", path, "-e", "x+y", "--op", "eval")
    assert r.returncode == 1
    docs = [json.loads(line) for line in r.stdout.decode().splitlines()]
    assert [(d["line"], d.get("value"), d.get("error", {}).get("kind")) for d in docs] == [
        (2, 3.0, None),
        (3, None, "limit"),
        (4, 11.0, None),
    ]


def _reference_lines(data: bytes, limit: int, runaway: int):
    """What ``_chunks`` should give for ``data``: (number, text or "LONG"/"RUNAWAY")."""
    pieces = re.split(rb"(\r\n|\r|\n)", data)
    out = []
    number = 0
    for i in range(0, len(pieces), 2):
        body = pieces[i]
        end = pieces[i + 1] if i + 1 < len(pieces) else b""
        if not body and not end:
            break
        number += 1
        if len(body) > runaway:
            out.append((number, "RUNAWAY"))
            return out
        if len(body) > limit:
            out.append((number, "LONG"))
            continue
        text = body.decode("utf-8", "replace")
        if number == 1 and text.startswith("\ufeff"):
            text = text[1:]
        if text.strip():
            out.append((number, text))
    return out


def test_line_limit_matches_a_plain_split_on_random_input(tmp_path, monkeypatch):
    """The bounded reader, with tiny limits, against splitting the whole input at once:
    universal newlines (\\n, \\r\\n, \\r, also across reads and chunk pauses), blank
    lines, UTF-8; and no chunk holds much more than MAX_CHUNK_BYTES of input."""
    monkeypatch.setattr(batch_io, "MAX_LINE_BYTES", 12)
    monkeypatch.setattr(batch_io, "MAX_RUNAWAY_BYTES", 40)
    monkeypatch.setattr(batch_io, "_READ_SIZE", 5)
    rng = random.Random(9)
    alphabet = [b"a", b"b", b" ", b"\t", "é".encode(), b"\xff", b"\n", b"\r", b"\r\n"]
    for trial in range(400):
        parts = []
        for _ in range(rng.randint(0, 12)):
            length = rng.choice([0, 1, 3, 11, 12, 13, 20, 39, 40, 41, 60])
            parts.append(b"".join(rng.choice(alphabet[:6]) for _ in range(length)))
            parts.append(rng.choice(alphabet[6:]))
        if rng.random() < 0.3 and parts:
            parts.pop()  # no final line end
        data = (b"\xef\xbb\xbf" if rng.random() < 0.1 else b"") + b"".join(parts)
        path = tmp_path / f"t{trial}.jsonl"
        path.write_bytes(data)
        budget = rng.choice([1, 7, 30, 64 << 20])
        monkeypatch.setattr(batch_io, "MAX_CHUNK_BYTES", budget)
        source = cli_batch.Input(str(path))
        stream = source.stream
        stream._CHUNK_SIZE = rng.choice([1, 3, 5])
        got = []
        try:
            for numbers, texts, _ in cli_batch.read_chunks(
                stream, 1, rng.randint(1, 40), cli_batch.Interrupt(), source.limits
            ):
                held = sum(len(t) for t in texts if isinstance(t, str))
                assert held <= budget + 12 + 2 * 5 + 4  # + a line + two reads (+ "\r\n")
                for number, text in zip(numbers, texts):
                    if isinstance(text, cli_batch.Overlong):
                        assert text.line == number
                        got.append((number, "RUNAWAY" if text.runaway else "LONG"))
                    else:
                        got.append((number, text.rstrip("\n")))
        finally:
            source.close()
        assert got == _reference_lines(data, 12, 40), data


def test_interrupt_keeps_its_constructor_and_restores_handlers():
    before = {s: signal.getsignal(s) for s in cli_batch.STOP_SIGNALS}
    interrupt = cli_batch.Interrupt()
    with interrupt:
        for s in cli_batch.STOP_SIGNALS:
            if before[s] != signal.SIG_IGN:
                assert signal.getsignal(s) == interrupt._handler
        os.kill(os.getpid(), signal.SIGTERM)  # a flag, not an exception, while working
        assert interrupt.requested and interrupt.exit_code == 143
    assert {s: signal.getsignal(s) for s in cli_batch.STOP_SIGNALS} == before


def test_sink_write_errors_become_one_message(tmp_path, monkeypatch):
    sink = cli_batch.Sink(str(tmp_path / "out.jsonl"))
    tmp = sink.file.tmp

    def full(fd, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(batch_io.os, "write", full)
    with pytest.raises(cli_batch.OutputError, match="No space left on device"):
        sink.write_lines(['{"line": 1}'])
    monkeypatch.undo()
    sink.abort()
    assert not os.path.exists(tmp) and os.listdir(tmp_path) == []

    # a short write is retried until every byte is out
    sink = cli_batch.Sink(str(tmp_path / "out.jsonl"))
    real_write = os.write
    monkeypatch.setattr(batch_io.os, "write", lambda fd, data: real_write(fd, data[:3]))
    sink.write_lines(['{"line": 1}', '{"line": 2}'])
    monkeypatch.undo()
    sink.commit()
    assert (tmp_path / "out.jsonl").read_text() == '{"line": 1}\n{"line": 2}\n'
    assert os.listdir(tmp_path) == ["out.jsonl"]


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP here")
def test_ignored_signals_stay_ignored():
    """nohup (SIGHUP) and background jobs (SIGINT) start with the signal ignored: batch
    must not turn it back on."""
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        interrupt = cli_batch.Interrupt()
        with interrupt:
            assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) == interrupt._handler
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)


@needs_cli
def test_blank_line_at_the_end_of_a_chunk_is_skipped(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text('{"x": 1}\n\n{"x": 2}\n\n')
    for size in ("2", "65536"):
        r = run_cli("batch", path, "-e", "x", "--op", "eval", "--chunk-size", size)
        assert r.returncode == 0, r.stderr
        assert [json.loads(line)["line"] for line in r.stdout.decode().splitlines()] == [1, 3]
