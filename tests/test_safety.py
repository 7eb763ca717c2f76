"""Issue 9: output is complete or the exit code says it is not; interrupts, broken pipes,
hostile environments and terminal-control characters never give a traceback.

Every test runs the installed console script in a subprocess: signals, /dev/full,
closed descriptors and locales only mean something for a real process.  The batch
command's `-o` and signal handling are in test_batch_safety.py; the parser tables
(nothing unpickled from a shared folder) in test_parser_tables.py.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

HEADLINE = ["grad", "3*a**3-b**2", "--a", "2", "--b", "6"]
EXPECTED = {"expr": "3*a**3-b**2", "value": -12.0, "shape": [], "grad": {"a": 36.0, "b": -12.0}}

#: every way the tool prints a result for a person or a program
RENDERERS = [
    HEADLINE,
    HEADLINE + ["--json"],
    HEADLINE + ["--format", "plain"],
    HEADLINE + ["--format", "csv"],
    ["hessian", "x**2*y", "--x", "1", "--y", "2"],
    ["diff", "x**3"],
    ["graph", "x*y+sin(x)", "--x", "1", "--y", "2"],
    ["graph", "x*y", "--x", "1", "--y", "2", "--dot"],
    ["explain", "x*y", "--x", "1", "--y", "2"],
    ["check", "x**2", "--x", "3"],
    ["grad", "abs(x)", "--x", "0"],  # with a warning
]


def _default_signals() -> None:
    """In the child: SIGINT and SIGHUP as a terminal delivers them (a test run under nohup,
    or a shell that ignores SIGINT in background jobs, would pass SIG_IGN on)."""
    for name in ("SIGINT", "SIGHUP", "SIGTERM"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)


def _command() -> list:
    exe = shutil.which("autograd-cli")
    return [exe] if exe else [sys.executable, "-m", "autograd_cli"]


def _env(**extra) -> dict:
    env = dict(os.environ)
    env.pop("AUTOGRAD_CLI_DEBUG", None)
    env.update(extra)
    return env


def run_cli(args, *, env=None, **kwargs) -> subprocess.CompletedProcess:
    kwargs.setdefault("stdout", subprocess.PIPE)
    kwargs.setdefault("stderr", subprocess.PIPE)
    kwargs.setdefault("stdin", subprocess.DEVNULL)
    # The timeout only catches a hang (tests assert no speed): generous for a loaded CI machine
    # running under coverage.
    return subprocess.run(_command() + list(args), env=env or _env(), timeout=300, **kwargs)


def assert_no_traceback(*texts) -> None:
    for text in texts:
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        assert "Traceback" not in text and "Exception ignored" not in text, text


def one_json_document(out: bytes) -> dict:
    text = out.decode("utf-8")  # strict: stdout with --json is always valid UTF-8
    assert text.endswith("\n") and text.count("\n") == 1, text
    return json.loads(text)


# ---- 2. output is complete or the exit code says it is not ----------------------------------


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this platform")
@pytest.mark.parametrize("args", RENDERERS, ids=lambda a: " ".join(a[:3] + a[-1:]))
def test_dev_full_is_exit_1_with_a_message(args):
    with open("/dev/full", "wb") as full:
        r = run_cli(args, stdout=full)
    assert r.returncode == 1, r.stderr
    err = r.stderr.decode()
    assert err.startswith("autograd-cli: error: cannot write to standard output: "), err
    assert "No space left on device" in err
    assert err.count("\n") == 1, err  # one message, not one per failed flush
    assert_no_traceback(err)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this platform")
def test_dev_full_json_error_still_exits_nonzero():
    with open("/dev/full", "wb") as full:
        r = run_cli(["grad", "(", "--json"], stdout=full)
    assert r.returncode == 2  # the syntax error keeps its own code
    assert "syntax error" in r.stderr.decode()  # said on stderr, since stdout took nothing
    assert_no_traceback(r.stderr)


@pytest.fixture
def full_tmpfs(tmp_path):
    """A small tmpfs filled to the last byte (needs root and mount; skipped otherwise)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], capture_output=True
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode().strip()}")
    try:
        (mnt / "out.txt").touch()  # the file the test redirects to, made while there is room
        fd = os.open(mnt / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:
            pass
        finally:
            os.close(fd)
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def test_full_filesystem_is_exit_1(full_tmpfs):
    target = full_tmpfs / "out.txt"
    with open(target, "wb") as f:
        r = run_cli(HEADLINE + ["--json"], stdout=f)
    assert r.returncode == 1
    assert "No space left on device" in r.stderr.decode()
    assert_no_traceback(r.stderr)


def _closed_reader_run(args):
    """Run with stdout a pipe whose reader is already gone: every write gets EPIPE."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        p = subprocess.Popen(
            _command() + list(args),
            stdout=write_end,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=_env(),
        )
    finally:
        os.close(write_end)
    err = p.stderr.read()
    p.wait(timeout=60)
    return p.returncode, err


@pytest.mark.parametrize("args", RENDERERS, ids=lambda a: " ".join(a[:3] + a[-1:]))
def test_reader_gone_ends_quietly_with_141(args):
    code, err = _closed_reader_run(args)
    assert code == 141
    assert err == b""


def test_head_reads_one_line_then_the_tool_ends_quietly(tmp_path):
    """`| head -1` with more output than a pipe holds."""
    values = tmp_path / "big.json"
    values.write_text(json.dumps({"x": list(range(200_000))}))
    p = subprocess.Popen(
        _command() + ["eval", "x*2", "--vars", f"@{values}", "--format", "plain"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    first = p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read()
    p.wait(timeout=60)
    assert first == b"0.0\n"
    assert p.returncode in (0, 141)  # 0 only when everything fit before the reader left
    assert err == b""


@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_a_reader_gone_mid_output_is_exit_141_even_unbuffered(tmp_path, unbuffered):
    """Output far larger than a pipe holds, its reader gone after one line: 141, never 0.
    With PYTHONUNBUFFERED, Python's stdout took a short write as complete (output cut,
    exit 0); the tool writes through a buffered writer, which writes the rest or fails."""
    values = tmp_path / "big.json"
    values.write_text(json.dumps({"x": list(range(400_000))}))
    p = subprocess.Popen(
        _command() + ["eval", "x*2", "--vars", f"@{values}", "--format", "plain"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(PYTHONUNBUFFERED=unbuffered),
    )
    first = p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read()
    p.wait(timeout=120)
    assert first == b"0.0\n"
    assert p.returncode == 141, err
    assert err == b""


def test_closed_stdout_is_exit_1():
    r = run_cli(HEADLINE, stdout=None, preexec_fn=lambda: os.close(1))
    assert r.returncode == 1
    assert "cannot write to standard output: it is closed" in r.stderr.decode()
    assert_no_traceback(r.stderr)


def test_closed_stdin_and_stderr_are_survivable():
    r = run_cli(["grad", "-", "--x", "1"], stdin=None, preexec_fn=lambda: os.close(0))
    assert r.returncode == 2
    assert "standard input" in r.stderr.decode()
    r = run_cli(HEADLINE + ["--json"], stderr=None, preexec_fn=lambda: os.close(2))
    assert r.returncode == 0
    assert one_json_document(r.stdout) == EXPECTED


# ---- 4. interrupts --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "signum, code, words",
    [
        (signal.SIGINT, 130, "interrupted"),
        (signal.SIGTERM, 143, "interrupted (SIGTERM)"),
        (
            getattr(signal, "SIGHUP", signal.SIGTERM),
            129 if hasattr(signal, "SIGHUP") else 143,
            "interrupted (SIGHUP)" if hasattr(signal, "SIGHUP") else "interrupted (SIGTERM)",
        ),
    ],
)
@pytest.mark.parametrize("json_out", [False, True])
def test_signal_during_a_command(signum, code, words, json_out):
    """The command waits for its expression on stdin; the signal arrives meanwhile."""
    args = ["grad", "-", "--x", "1"] + (["--json"] if json_out else [])
    p = subprocess.Popen(
        _command() + args,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
        preexec_fn=_default_signals,  # as at a terminal, even under nohup
    )
    time.sleep(1.5)  # past start-up, blocked reading stdin
    p.send_signal(signum)
    out, err = p.communicate(timeout=60)
    assert p.returncode == code, (out, err)
    if json_out:
        assert one_json_document(out) == {"error": {"kind": "interrupted", "message": words}}
    else:
        assert out == b""
        assert err.decode() == f"autograd-cli: error: {words}\n"


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP on this platform")
def test_an_ignored_hangup_stays_ignored():
    """`nohup autograd-cli ...`: SIGHUP was ignored when the tool started, so it goes on."""

    def ignore_hup():
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    p = subprocess.Popen(
        _command() + ["grad", "-", "--x", "3", "--json"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
        preexec_fn=ignore_hup,
    )
    time.sleep(1.5)
    p.send_signal(signal.SIGHUP)
    out, err = p.communicate(b"x**2", timeout=60)
    assert p.returncode == 0, err
    assert one_json_document(out)["grad"] == {"x": 6.0}


# ---- 5. never a traceback, whatever the environment -----------------------------------------


def test_non_utf8_argument_gives_one_utf8_json_document():
    r = run_cli([b"grad", b"x\xff\xfe+1", b"--x", b"1", b"--json"])
    assert r.returncode == 2
    doc = one_json_document(r.stdout)
    assert doc["error"]["kind"] == "syntax"
    assert "not valid UTF-8" in doc["error"]["message"]


def test_non_utf8_stdin_expression_and_vars_file(tmp_path):
    r = run_cli(["grad", "-", "--x", "1", "--json"], input=b"x \xff+ 1", stdin=None)
    assert r.returncode == 2
    assert "not valid UTF-8" in one_json_document(r.stdout)["error"]["message"]
    values = tmp_path / "vars.json"
    values.write_bytes(b'{"x": 1, "\xff": 2}')
    r = run_cli(["grad", "x", "--vars", f"@{values}", "--json"])
    assert r.returncode == 2
    doc = one_json_document(r.stdout)
    assert "not valid UTF-8" in doc["error"]["message"]


def test_non_utf8_value_in_a_good_expression_still_works():
    r = run_cli([b"grad", b"x**2", b"--x", b"3", b"--json"])
    assert r.returncode == 0 and one_json_document(r.stdout)["grad"] == {"x": 6.0}


@pytest.mark.parametrize(
    "env",
    [
        {"PYTHONIOENCODING": "ascii:strict"},
        {"PYTHONIOENCODING": "latin-1:strict"},
        {"LANG": "C", "LC_ALL": "C"},
        {"LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"},
    ],
    ids=["ascii", "latin-1", "C", "C-no-coercion"],
)
def test_any_locale_prints_the_table_and_utf8_json(env):
    r = run_cli(HEADLINE, env=_env(**env))
    assert r.returncode == 0, r.stderr
    assert b"-12.0" in r.stdout and b"36.0" in r.stdout
    assert_no_traceback(r.stderr)
    r = run_cli(HEADLINE + ["--json"], env=_env(**env))
    assert r.returncode == 0
    assert one_json_document(r.stdout) == EXPECTED
    r = run_cli(["grad", "sin(x) # \u2202 comment", "--x", "0", "--json"], env=_env(**env))
    assert r.returncode == 0 and one_json_document(r.stdout)["grad"] == {"x": 1.0}


def test_stdin_dev_zero_stops_in_bounded_time():
    with open("/dev/zero", "rb") as zero:
        r = run_cli(["grad", "-", "--x", "1", "--json"], stdin=zero)  # run_cli's timeout: a hang
    assert r.returncode == 1
    error = one_json_document(r.stdout)["error"]
    assert error["kind"] == "limit" and "MiB" in error["message"]


def test_stdin_fifo(tmp_path):
    fifo = tmp_path / "expr.fifo"
    os.mkfifo(fifo)
    # the writer opens the FIFO in the background; the tool reads it as its stdin
    r = subprocess.run(
        [
            "sh",
            "-c",
            f'printf "x**2" > "{fifo}" & exec "$@" < "{fifo}"',
            "sh",
            *_command(),
            "grad",
            "-",
            "--x",
            "3",
            "--json",
        ],
        capture_output=True,
        timeout=60,
        env=_env(),
    )
    assert r.returncode == 0, r.stderr
    assert one_json_document(r.stdout)["grad"] == {"x": 6.0}


def test_stdin_a_folder_is_refused_without_a_traceback(tmp_path):
    """Python itself refuses to start with a folder as stdin (before any of our code runs):
    the message is the interpreter's, the exit code 1, and there is no traceback."""
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        r = run_cli(["grad", "-", "--x", "1"], stdin=fd)
    finally:
        os.close(fd)
    assert r.returncode != 0
    assert b"directory" in r.stderr
    assert_no_traceback(r.stderr)


def test_vars_from_a_folder_or_dev_zero(tmp_path):
    r = run_cli(["grad", "x", "--vars", f"@{tmp_path}", "--json"])
    assert r.returncode == 2
    assert one_json_document(r.stdout)["error"]["kind"] == "usage"
    r = run_cli(["grad", "x", "--vars", "@/dev/zero", "--json"])
    assert r.returncode == 1
    assert one_json_document(r.stdout)["error"]["kind"] == "limit"


# ---- 6. what the tool prints cannot take over the terminal ----------------------------------

HOSTILE = "\x1b]0;owned\x07\x1b[2J\r\x9b31m\u202egnp.exe\x08\x7f"  # no NUL: argv cannot hold one
RAW = [b"\x1b", b"\x07", b"\r", b"\xc2\x9b", "\u202e".encode(), b"\x08", b"\x7f"]


def assert_no_raw_controls(data: bytes) -> None:
    for raw in RAW:
        assert raw not in data, (raw, data[:500])


@pytest.mark.parametrize(
    "args",
    [
        ["grad", "x*2 # " + HOSTILE, "--x", "1"],  # table title (a comment)
        ["graph", "x*2 # " + HOSTILE, "--x", "1", "--dot"],  # DOT label
        ["graph", "x*2 # " + HOSTILE, "--x", "1"],  # tree
        ["diff", "x**2 # " + HOSTILE],  # diff table title
        ["check", "x**2 # " + HOSTILE, "--x", "1"],  # check title
        ["explain", "x*y # " + HOSTILE, "--x", "1", "--y", "2"],
        ["grad", "x" + HOSTILE, "--x", "1"],  # syntax error + caret line
        ["grad", "x", "--x", HOSTILE],  # bad value
        ["grad", "x", "--var", HOSTILE],  # bad --var
        ["grad", "x", "--x", "1", "--wrt", HOSTILE],  # bad --wrt
        ["grad", "x", "--vars", json.dumps({HOSTILE: 1})],  # bad name in --vars
        ["grad", "x", "--x", "1", "--" + HOSTILE, "1"],  # bad --NAME
        [HOSTILE],  # unknown command
    ],
)
def test_user_text_is_never_echoed_raw(args):
    r = run_cli(args)
    assert_no_raw_controls(r.stdout)
    assert_no_raw_controls(r.stderr)
    assert_no_traceback(r.stderr)
    assert r.returncode in (0, 1, 2)
    shown = r.stdout + r.stderr
    if b"owned" in shown:  # the text was echoed: then with its escapes visible
        assert b"x1b]0;owned" in shown and b"\\x1b" in shown, shown[-500:]


def test_escapes_are_visible_in_the_table_title():
    r = run_cli(["grad", "x*2 # \x1b[31mred", "--x", "1"])
    assert r.returncode == 0
    assert b"\\x1b[31mred" in r.stdout


def test_error_messages_quote_a_short_window():
    huge = "x+" * 500_000 + "+)"  # a 1 MB expression with the fault at the very end
    r = run_cli(["grad", "-", "--x", "1", "--json"], input=huge.encode(), stdin=None)
    assert r.returncode == 2
    doc = one_json_document(r.stdout)
    assert len(r.stdout) < 2000, len(r.stdout)
    assert doc["error"]["column"] == len(huge)  # the ")" at the very end
    r = run_cli(["grad", "-", "--x", "1"], input=huge.encode(), stdin=None)
    assert r.returncode == 2 and len(r.stderr) < 2000
    big_value = "[" + "1," * 50_000 + "oops]"  # 100 KB: under the 128 KB argument limit
    r = run_cli(["grad", "x", "--vars", json.dumps({"x": 1}), "--y", big_value])
    assert r.returncode == 2 and len(r.stderr) < 2000, len(r.stderr)
    r = run_cli(["grad", "x", "--x", big_value, "--json"])
    assert r.returncode == 2 and len(r.stdout) < 2000, len(r.stdout)


@pytest.mark.parametrize("json_out", [False, True])
def test_ctrl_c_while_the_command_line_loads(monkeypatch, capsys, json_out):
    # the console script's entry (cli/entry.py): a Ctrl-C while NumPy and the op table load
    # is `interrupted` and exit 130, not Python's traceback
    import sys as _sys

    from autograd_cli.cli import entry

    class Loading:
        def __getattr__(self, name):
            raise KeyboardInterrupt

    monkeypatch.setitem(_sys.modules, "autograd_cli.cli.main", Loading())
    monkeypatch.setattr(
        _sys, "argv", ["autograd-cli", "eval", "x"] + (["--json"] if json_out else [])
    )
    with pytest.raises(SystemExit) as stop:
        entry.main()
    assert stop.value.code == 130
    out, err = capsys.readouterr()
    if json_out:
        assert json.loads(out) == {"error": {"kind": "interrupted", "message": "interrupted"}}
    else:
        assert err == "autograd-cli: error: interrupted\n" and out == ""
