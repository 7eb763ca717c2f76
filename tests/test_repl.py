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
