"""Issue 23, batch items: integers of more digits than Python reads, the temporary file a
killed ``batch -o`` leaves (and the next run removes), ``--order``'s help, and the checks
of the command line made once before any input is read."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
from test_batch_safety import (
    TIMEOUT,
    big_csv,
    check_complete_lines,
    needs_cli,
    popen_cli,
    posix_only,
    run_cli,
)

from autograd_cli.cli import files, options

#: past Python's int-to-text limit (4,300 digits); 4,000 and 400 digits are below it
DIGITS = [5000, 4000, 400]


def _write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _refused(r) -> dict:
    """A command's --json error document: a bad value, exit 2, never an internal error."""
    assert r.code == 2, (r.code, r.out[:300])
    error = r.json["error"]
    assert error["kind"] == "bad_value", error
    assert "too large for a floating-point number" in error["message"]
    return error


# ---- integers too large for a float, however long --------------------------------------------


@pytest.mark.parametrize("digits", DIGITS)
@pytest.mark.parametrize(
    "argv",
    [
        ["--x", "BIG"],
        ["--x", "[BIG, 1]"],
        ["--x=-BIG"],
        ["--var", "x=BIG"],
        ["--vars", '{"x": BIG}'],
        ["--vars", '{"x": [1, BIG]}'],
        ["--x", "1", "--grad-output", "[BIG]"],
    ],
    ids=["bare", "array", "negative", "var", "vars", "vars-array", "grad-output"],
)
def test_a_huge_integer_on_the_command_line_is_a_bad_value(cli, argv, digits):
    big = "1" * digits
    r = cli("grad", "x*2", *[a.replace("BIG", big) for a in argv], "--json")
    _refused(r)


@pytest.mark.parametrize("digits", DIGITS)
def test_a_huge_integer_in_a_file_or_on_stdin_is_a_bad_value(tmp_path, cli, monkeypatch, digits):
    big = "1" * digits
    _refused(cli("eval", "x", "--x", "@" + _write(tmp_path, "x.json", f"[{big}]"), "--json"))
    vars_file = _write(tmp_path, "v.json", f'{{"x": {big}}}')
    _refused(cli("eval", "x", "--vars", "@" + vars_file, "--json"))
    monkeypatch.setattr(sys, "stdin", io.StringIO(f'{{"x": {big}}}'))
    _refused(cli("eval", "x", "--vars", "-", "--json"))


def test_a_huge_integer_in_the_repl_is_a_bad_value_and_the_session_goes_on(cli, monkeypatch):
    big = "1" * 5000
    text = f":eval x --x [{big}]\n:eval x --x {big}\n:eval x --x 2\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    r = cli("repl", "--json")
    docs = [json.loads(line) for line in r.out.splitlines()]
    assert [d.get("error", {}).get("kind") for d in docs] == ["bad_value", "bad_value", None]
    assert docs[2]["value"] == 2.0


@pytest.mark.parametrize("digits", DIGITS)
def test_a_huge_integer_in_a_batch_line_is_that_lines_bad_value(tmp_path, cli, digits):
    big = "1" * digits
    lines = [
        f'{{"x": {big}, "y": 1}}',
        '{"x": 2, "y": 3}',
        f'{{"x": [{big}], "y": 1}}',
        f'{{"vars": {{"x": 1, "y": 1}}, "grad_output": {big}}}',
    ]
    r = cli("batch", _write(tmp_path, "in.jsonl", "\n".join(lines) + "\n"), "--expr", "x*y")
    docs = [json.loads(line) for line in r.out.splitlines()]
    assert [d["line"] for d in docs] == [1, 2, 3, 4]
    assert [d.get("error", {}).get("kind") for d in docs] == [
        "bad_value",
        None,
        "bad_value",
        "bad_value",
    ]
    assert docs[1]["grad"] == {"x": 3.0, "y": 2.0}
    assert all(
        "too large for a floating-point number" in docs[i]["error"]["message"] for i in (0, 2)
    )
    assert r.code == 1


@pytest.mark.parametrize("digits", DIGITS)
def test_a_huge_integer_in_a_csv_cell_is_that_rows_bad_value(tmp_path, cli, digits):
    big = "1" * digits
    rows = ["x,y", f"{big},1", "2,3", f'"[{big}]",1', "1e400,1"]  # 1e400 is IEEE's inf
    r = cli(
        "batch", _write(tmp_path, "in.csv", "\n".join(rows) + "\n"), "-e", "x*y", "--op", "eval"
    )
    docs = [json.loads(line) for line in r.out.splitlines()]
    assert [d.get("error", {}).get("kind") for d in docs] == ["bad_value", None, "bad_value", None]
    assert [d.get("value") for d in docs[1::2]] == [6.0, "inf"]
    assert "column 'x'" in docs[0]["error"]["message"]
    assert r.code == 1


def test_a_message_about_an_integer_never_raises_however_long_it_is():
    # an int past the limit of str() itself (sys.get_int_max_str_digits) is shown by its size
    assert options.too_large_integer(10**5000).startswith("an integer of about 5,001 digits")
    text = options.too_large_integer("-" + "9" * 6000)
    assert text.startswith("the integer -999999999999...999999 (6,000 digits)")


# ---- batch -o FILE after SIGKILL -----------------------------------------------------------


def _leftovers(folder, base="out.jsonl") -> list:
    return sorted(n for n in os.listdir(folder) if n.startswith(f".{base}.") and n.endswith(".tmp"))


@needs_cli
@posix_only
def test_a_run_killed_outright_leaves_its_temporary_file_and_the_next_run_removes_it(tmp_path):
    src = big_csv(tmp_path, 2_000_000)
    work = tmp_path / "work"
    work.mkdir()
    out = work / "out.jsonl"
    out.write_text("OLD\n")
    proc = popen_cli("batch", src, "-e", "x*y + sin(x)", "-o", out, "--chunk-size", "20000")
    try:
        deadline = time.monotonic() + TIMEOUT
        while not any(os.path.getsize(work / n) > 0 for n in _leftovers(work)):
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline, "no output appeared in time"
            time.sleep(0.02)
        proc.kill()  # SIGKILL: nothing of the tool runs after it
        proc.wait(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    # the leftover: .FILE.PID.XXXXXXXX.tmp beside FILE, PID the killed process; FILE as it was
    (left,) = _leftovers(work)
    assert re.fullmatch(rf"\.out\.jsonl\.{proc.pid}\.[a-z0-9_]{{8}}\.tmp", left), left
    assert out.read_text() == "OLD\n"
    # what is not a leftover of FILE stays: another FILE's, a live process's (this one's)
    others = [f".other.jsonl.{proc.pid}.abcdefgh.tmp", f".out.jsonl.{os.getpid()}.abcdefgh.tmp"]
    for name in others:
        (work / name).write_text("keep\n")
    r = run_cli("batch", big_csv(tmp_path, 10_000, "small.csv"), "-e", "x*y", "-o", out)
    assert r.returncode == 0, r.stderr
    assert len(check_complete_lines(out.read_bytes())) == 10_000
    assert sorted(os.listdir(work)) == sorted(["out.jsonl", *others])
    assert f"removed {str(work / left)!r}, left by an earlier run that was killed" in (
        r.stderr.decode()
    )


@posix_only
def test_a_leftover_is_removed_only_when_its_process_is_gone_and_nobody_holds_it(tmp_path):
    import fcntl

    child = subprocess.Popen(["true"])
    child.wait()
    dead = child.pid  # a process that is gone
    locked = tmp_path / f".f.txt.{dead}.aaaaaaaa.tmp"
    free = tmp_path / f".f.txt.{dead}.bbbbbbbb.tmp"
    folder = tmp_path / f".f.txt.{dead}.cccccccc.tmp"  # not a regular file
    odd = tmp_path / f".f.txt.{dead}.dddddddd.tmp.bak"  # not the pattern
    for path in (locked, free, odd):
        path.write_text("x")
    folder.mkdir()
    with open(locked) as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # a writer that is still at work (another host...)
        removed = files.remove_leftovers(str(tmp_path), "f.txt")
    assert removed == [free.name]
    assert sorted(os.listdir(tmp_path)) == sorted([locked.name, folder.name, odd.name])


# ---- batch --help ----------------------------------------------------------------------------


def test_batch_help_says_order_is_taylors_degree_too(cli):
    r = cli("batch", "--help")
    assert r.code == 0
    text = " ".join(r.out.split())
    help_order = text[text.index("--order N") : text.index("--json")]
    assert "taylor" in help_order and "0 to 20" in help_order, help_order


# ---- what depends on the command line alone: one usage error, before reading -----------------


@pytest.mark.parametrize(
    "options_, kind",
    [
        (["--expr", "x*y", "--order", "2"], "usage"),  # grad of order 2 of two variables
        (["--expr", "x*y", "--order", "2", "--wrt", "x,y"], "usage"),
        (["--expr", "x*y", "--op", "hessian", "--order", "2"], "usage"),
        (["--op", "jacobian", "--order", "3"], "usage"),  # no --expr: still no line could
        (["--expr", "x*y", "--wrt", "z"], "unknown_variable"),
        (["--expr", "x*y", "--op", "minimize", "--wrt", "z"], "unknown_variable"),
        (["--expr", "x*y", "--op", "taylor", "--at", "z=1"], "usage"),
        (["--expr", "x*y", "--op", "taylor", "--wrt", "y", "--at", "x=1"], "usage"),
    ],
)
@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_a_command_line_no_line_can_run_is_one_usage_error_before_reading(
    tmp_path, cli, options_, kind, fmt
):
    if fmt == "csv" and "--expr" not in options_:
        pytest.skip("CSV needs --expr")
    if fmt == "jsonl":
        text = "".join(json.dumps({"x": i, "y": 1}) + "\n" for i in range(500))
    else:
        text = "x,y\n" + "".join(f"{i},1\n" for i in range(500))
    r = cli("batch", _write(tmp_path, f"in.{fmt}", text), *options_, "--json")
    assert r.code == 2, r.out[:300]
    (doc,) = [json.loads(line) for line in r.out.splitlines()]  # one document, no line's
    assert doc["error"]["kind"] == kind and "line" not in doc, doc


def test_options_a_line_may_use_stay_defaults(tmp_path, cli):
    """--order with eval or minimize, --wrt with eval: ignored by those lines, used by lines
    that bring an op that takes them (JSONL)."""
    lines = ['{"x": 2, "y": 1}', '{"vars": {"x": 2, "y": 1}, "op": "diff", "wrt": ["x"]}']
    path = _write(tmp_path, "in.jsonl", "\n".join(lines) + "\n")
    r = cli("batch", path, "--expr", "x**3*y", "--op", "eval", "--order", "2", "--wrt", "z")
    assert r.code == 0, r.out
    docs = [json.loads(line) for line in r.out.splitlines()]
    assert docs[0]["value"] == 8.0 and docs[1]["derivative_value"] == 12.0
