"""The interactive session, driven through stdin (not a terminal: one result per line)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

SCRIPT = """\
x = 2
x**2 + 1
:grad x*sin(x)
y = [1, 2, 3]
sum(y*x)
# a comment, then a blank line

:vars
:diff x**3 --order 2
:taylor exp(x) --order 2
"""


def repl(cli, monkeypatch, text, *args):
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    return cli("repl", *args)


def test_a_session_in_json_one_document_per_line(cli, monkeypatch):
    r = repl(cli, monkeypatch, SCRIPT, "--json")
    assert r.code == 0, r.err
    docs = [json.loads(line) for line in r.out.splitlines()]
    assert docs[0] == {"name": "x", "value": 2.0}
    assert docs[1]["value"] == 5.0
    assert docs[2]["grad"] == {"x": pytest.approx(0.0770037537313969)}
    assert docs[3] == {"name": "y", "value": [1.0, 2.0, 3.0]}
    assert docs[4]["value"] == 12.0
    assert docs[5] == {"vars": {"x": 2.0, "y": [1.0, 2.0, 3.0]}}
    assert docs[6]["derivative"] == "6*x" and docs[6]["derivative_value"] == 12.0
    assert docs[7]["coefficients"][2] == pytest.approx(7.38905609893065 / 2)
    assert len(docs) == 8


def test_errors_are_reported_and_the_session_goes_on(cli, monkeypatch):
    r = repl(cli, monkeypatch, "1 +\n:foo\nz\nx = 3\nx*2\n:del x\nx\n", "--json")
    assert r.code == 1  # some lines failed
    docs = [json.loads(line) for line in r.out.splitlines()]
    kinds = [d.get("error", {}).get("kind") for d in docs]
    assert kinds == ["syntax", "usage", "missing_value", None, None, "missing_value"]
    assert docs[4]["value"] == 6.0


def test_quit_stops_and_plain_text_output(cli, monkeypatch):
    r = repl(cli, monkeypatch, "a = 4\nsqrt(a)\n:quit\nnever\n")
    assert r.code == 0, r.err
    assert r.out.splitlines()[0] == "a = 4.0"
    assert "2.0" in r.out and "never" not in r.out + r.err
    r = repl(cli, monkeypatch, "e = 1\n")
    assert r.code == 1 and "'e' is a constant" in r.err


def test_continuation_lines_and_programs(cli, monkeypatch):
    r = repl(cli, monkeypatch, "a = x + 1; \\\na*2\n", "--json")
    assert r.code == 2 or r.code == 1  # x has no value in the session
    r = repl(cli, monkeypatch, "x = 1\nb = x + 1; \\\nb*3\n", "--json")
    docs = [json.loads(line) for line in r.out.splitlines()]
    assert r.code == 0 and docs[-1]["value"] == 6.0


def test_through_the_console_script():
    env = dict(os.environ, COLUMNS="80")
    p = subprocess.run(
        [sys.executable, "-m", "autograd_cli", "repl", "--json"],
        input="x = 0.5\n:grad exp(x)*x\n",
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert p.returncode == 0, p.stderr
    docs = [json.loads(line) for line in p.stdout.splitlines()]
    assert docs[1]["grad"]["x"] == pytest.approx(1.5 * 1.6487212707001282)


# ---- issue 23: continued lines, the session's words, the status at a terminal, the echo -----


def test_a_continued_assignment_sets_the_variable(cli, monkeypatch):
    # "a = 1 + \" then "2" was a syntax error (the lines were joined by a newline, which
    # ends a statement); "b = (1 + \" then "2)" printed 3 without setting b
    text = "a = 1 + \\\n2\nb = (1 + \\\n2)\nc = a + \\\n  b \\\n  * 2\n:vars\n"
    r = repl(cli, monkeypatch, text, "--json")
    assert r.code == 0, r.out
    docs = [json.loads(line) for line in r.out.splitlines()]
    assert docs[:3] == [
        {"name": "a", "value": 3.0},
        {"name": "b", "value": 3.0},
        {"name": "c", "value": 9.0},
    ]
    assert docs[3] == {"vars": {"a": 3.0, "b": 3.0, "c": 9.0}}


def test_a_backslash_in_a_comment_or_at_the_end_of_the_input(cli, monkeypatch):
    # a comment's backslash is part of the comment (as in Python); the input's last line
    # may end in one
    r = repl(cli, monkeypatch, "x = 2 # two \\\nx*3\ny = x + \\\n", "--json")
    docs = [json.loads(line) for line in r.out.splitlines()]
    assert docs[0] == {"name": "x", "value": 2.0}
    assert docs[1]["value"] == 6.0
    assert docs[2]["error"]["kind"] == "syntax"  # "y = x + " and nothing after it
    assert len(docs) == 3


def test_a_missing_value_is_told_in_the_sessions_words(cli, monkeypatch):
    r = repl(cli, monkeypatch, "clear\ny = clear + 1\nquit\n")
    assert r.code == 1
    lines = r.err.splitlines()
    assert lines[0].endswith("no value for variable 'clear' (set it first: clear = VALUE)")
    assert "clear = VALUE" in lines[1] and "--clear" not in r.err
    assert lines[2].endswith("(set it first: quit = VALUE; the command is :quit)")
    r = repl(cli, monkeypatch, "clear\n", "--json")
    assert json.loads(r.out)["error"] == {
        "kind": "missing_value",
        "message": "no value for variable 'clear' (set it first: clear = VALUE)",
        "variable": "clear",
    }
    # on a command's line the command's options are what can be typed: --y VALUE works there
    r = repl(cli, monkeypatch, ":grad y**2\n:grad y**2 --y 3\n", "--json")
    docs = [json.loads(line) for line in r.out.splitlines()]
    assert "--y VALUE" in docs[0]["error"]["message"] and docs[1]["grad"] == {"y": 6.0}


class _Terminal(io.StringIO):
    """Lines typed at a terminal, as far as the session can tell."""

    def isatty(self):
        return True


@pytest.mark.parametrize("flags", [(), ("--json",)])
def test_a_session_typed_at_a_terminal_ends_with_0_whatever_its_errors(cli, monkeypatch, flags):
    # stdin a terminal, stdout not (as here): the lines are read without the prompt
    monkeypatch.setattr(sys, "stdin", _Terminal("1 +\nx\nx = 2\n"))
    r = cli("repl", *flags)
    assert r.code == 0
    assert "syntax error" in r.out + r.err and "no value" in r.out + r.err
    # the same lines piped: a script's status, 1 as some failed (README, repl)
    r = repl(cli, monkeypatch, "1 +\nx\nx = 2\n", *flags)
    assert r.code == 1


def wait(pid: int, timeout: float):
    """The child's wait status, or None (the child killed) when it runs past ``timeout``."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return None


@pytest.mark.skipif(not hasattr(os, "fork"), reason="a pseudo-terminal needs POSIX")
@pytest.mark.parametrize("flags", [(), ("--no-prompt",)])
def test_ctrl_d_at_a_real_terminal(tmp_path, flags):
    """The console script on a pseudo-terminal (prompt_toolkit's prompt, and plain lines with
    --no-prompt): a continued line sets its variable, an error is shown, Ctrl-D ends with 0."""
    import pty
    import select
    import time

    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path), COLUMNS="80", PROMPT_TOOLKIT_NO_CPR="1")
    pid, fd = pty.fork()
    if pid == 0:  # the child: the session, on the terminal (never back into pytest)
        try:
            os.execve(sys.executable, [sys.executable, "-m", "autograd_cli", "repl", *flags], env)
        finally:
            os._exit(127)
    seen = b""

    def until(marker: bytes, after: int = 0, timeout: float = 60) -> None:
        """Read until ``marker`` appears in what was shown from offset ``after`` on."""
        nonlocal seen
        deadline = time.monotonic() + timeout
        while marker not in seen[after:]:
            left = deadline - time.monotonic()
            assert left > 0, f"no {marker!r} in {seen[-400:]!r}"
            if select.select([fd], [], [], left)[0]:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # the child has gone
                    chunk = b""
                assert chunk, f"no {marker!r} in {seen[-400:]!r}"
                seen += chunk

    try:
        if not flags:
            until(b">")
        for line in (b"a = 1 + \\\r", b"2\r"):
            os.write(fd, line)
        until(b"a = 3.0")
        os.write(fd, b"1 +\r")
        until(b"syntax error")
        until(b"^")
        if not flags:  # Ctrl-D at the next prompt, not while the error is being shown
            until(b">", after=seen.rindex(b"^"))
        os.write(fd, b"\x04")  # Ctrl-D
        status = wait(pid, 60)
    finally:
        os.close(fd)
    assert status is not None, f"the session did not end after Ctrl-D: {seen[-400:]!r}"
    assert os.waitstatus_to_exitcode(status) == 0, seen[-400:]


def test_values_are_echoed_as_the_tables_print_them(cli, monkeypatch):
    from autograd_cli.cli.render import format_value

    r = repl(cli, monkeypatch, "W = [[1, 2], [3, 4.5]]\nn = [nan, 1, -inf]\nk = 2\nW\n:vars\n")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    w = format_value([[1.0, 2.0], [3.0, 4.5]]).splitlines()
    assert lines[:2] == ["W = " + w[0], "    " + w[1]]
    assert lines[:2] == ["W = [[1. , 2. ],", "     [3. , 4.5]]"]
    assert lines[2] == "n = [ nan,   1., -inf]" and lines[3] == "k = 2.0"
    # the table of W prints the same lines
    table = "\n".join(lines[4:-4])
    assert w[0] in table and w[1].strip() in table
    assert lines[-4:] == lines[:4]  # :vars lists them the same way


def test_functions_lists_the_languages_functions(cli, monkeypatch):
    from autograd_cli.core.ops import FUNCTIONS

    r = repl(cli, monkeypatch, ":functions\n", "--json")
    assert json.loads(r.out) == {"functions": sorted(FUNCTIONS)}
    r = repl(cli, monkeypatch, ":functions\n")
    assert r.code == 0 and r.out.split() == sorted(FUNCTIONS)


def test_a_long_run_of_continued_lines_looks_at_each_line_once(cli, monkeypatch):
    """200,000 continued lines: each line is checked on its own (the check once scanned the
    whole joined text at every line: quadratic, 300 s), and the joined line is evaluated."""
    from autograd_cli.cli import repl as repl_module

    seen = []
    continues = repl_module._continues
    monkeypatch.setattr(
        repl_module, "_continues", lambda line: seen.append(len(line)) or continues(line)
    )
    n = 200_000
    r = repl(cli, monkeypatch, "s = 1 \\\n" + "+ 1 \\\n" * n + "+ 0\ns\n", "--json")
    assert r.code == 0, r.err
    assert json.loads(r.out.splitlines()[0]) == {"name": "s", "value": n + 1.0}
    assert len(seen) == n + 3 and max(seen) == len("s = 1 \\")


def test_a_command_typed_without_its_colon_is_told_so(cli, monkeypatch):
    # "grad x**2" is no expression; the parser alone would suggest implicit multiplication
    # (grad*x), where the user meant the command :grad
    r = repl(cli, monkeypatch, "x = 3\ngrad x**2\n:grad x**2\n", "--json")
    docs = [json.loads(line) for line in r.out.splitlines()]
    assert docs[1]["error"] == {
        "kind": "usage",
        "message": "a command starts with a colon in the session: :grad x**2",
    }
    assert docs[2]["grad"] == {"x": 6.0} and r.code == 1
    # a session variable of that name keeps the parser's own message (grad*x is meant)
    r = repl(cli, monkeypatch, "x = 3\ngrad = 2\ngrad x\ngrad*x\n", "--json")
    docs = [json.loads(line) for line in r.out.splitlines()]
    assert docs[2]["error"]["kind"] == "syntax" and "grad*x" in docs[2]["error"]["message"]
    assert docs[3]["value"] == 6.0
    # and a line that parses is evaluated: "eval" alone is a variable with no value
    r = repl(cli, monkeypatch, "eval\n", "--json")
    assert json.loads(r.out)["error"]["kind"] == "missing_value"


def test_a_session_command_typed_without_its_colon_is_told_so(cli, monkeypatch):
    r = repl(cli, monkeypatch, "help me\ndel x\nq x\n", "--json")
    docs = [json.loads(line) for line in r.out.splitlines()]
    assert [d["error"]["message"] for d in docs[:2]] == [
        "a command starts with a colon in the session: :help me",
        "a command starts with a colon in the session: :del x",
    ]
    # the words that end the session are not offered with a colon ("q x" meant q*x)
    assert docs[2]["error"]["kind"] == "syntax" and "q*x" in docs[2]["error"]["message"]


def test_the_sessions_own_errors_are_made_safe_to_show(cli, monkeypatch):
    # a line's text echoed in the session's own messages (the colon hint, an unknown
    # command) gets what every error of the command line gets: control characters escaped
    # (an ESC must not reach the terminal) and a huge line cut short
    r = repl(cli, monkeypatch, "help \x1b[31mred x\n:\x1b]0;title\x07\n", "--json")
    docs = [json.loads(line) for line in r.out.splitlines()]
    assert docs[0]["error"]["message"].endswith(":help \\x1b[31mred x")
    assert docs[1]["error"]["message"].startswith("unknown command :\\x1b]0;title\\x07 ")
    assert "\x1b" not in r.out and "\x07" not in r.out
    r = repl(cli, monkeypatch, "help " + "x " * 300_000 + "\n", "--json")
    message = json.loads(r.out)["error"]["message"]
    assert len(message) < 1000 and "more characters" in message
