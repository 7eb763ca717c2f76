"""Every script in examples/ runs: through bash, against the installed autograd-cli.

A script says what it needs in its header comments: ``# requires: jq`` (a program on
PATH) or ``# requires-command: jacobian`` (a command of autograd-cli); the test skips
it, with the reason, where that is missing.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
SCRIPTS = sorted(EXAMPLES.glob("*.sh"))


def _env() -> dict:
    env = dict(os.environ)
    # The console script lives next to the interpreter running the tests (the venv's bin/).
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["STEPS"] = "6"  # gradient_descent.sh: a few steps are enough to see it descend
    env.pop("AUTOGRAD_CLI_DEBUG", None)
    return env


def _requirements(script: pathlib.Path):
    text = script.read_text(encoding="utf-8")
    programs = re.findall(r"^# requires: (.+)$", text, re.MULTILINE)
    commands = re.findall(r"^# requires-command: (.+)$", text, re.MULTILINE)
    return (
        [p.strip() for line in programs for p in line.split(",")],
        [c.strip() for line in commands for c in line.split(",")],
    )


def _skip_unless_runnable(script: pathlib.Path, env: dict) -> str:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    cli = shutil.which("autograd-cli", path=env["PATH"])
    if cli is None:
        pytest.skip("the autograd-cli console script is not on PATH (install the package)")
    programs, commands = _requirements(script)
    for program in programs:
        if shutil.which(program, path=env["PATH"]) is None:
            pytest.skip(f"{script.name} needs {program}, which is not installed")
    for command in commands:
        probe = subprocess.run([cli, command, "--help"], capture_output=True, text=True, env=env)
        if probe.returncode != 0:
            pytest.skip(
                f"{script.name} needs the '{command}' command, which this version of "
                f"autograd-cli does not have yet"
            )
    return bash


def test_there_are_examples():
    names = {p.name for p in SCRIPTS}
    assert {"gradient_descent.sh", "batch_csv.sh", "jacobian.sh"} <= names
    assert (EXAMPLES / "points.csv").exists() and (EXAMPLES / "requests.jsonl").exists()


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_example_runs(script, tmp_path):
    env = _env()
    bash = _skip_unless_runnable(script, env)
    proc = subprocess.run(
        [bash, str(script)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300
    )
    assert proc.returncode == 0, f"{script.name} failed:\n{proc.stdout}\n{proc.stderr}"
    assert proc.stdout.strip()
    assert "Traceback" not in proc.stderr
    check = CHECKS.get(script.name)
    if check:
        check(proc.stdout)


def _check_gradient_descent(out: str) -> None:
    values = [float(v) for v in re.findall(r"f = (\S+)", out)]
    assert len(values) == 6
    assert all(b < a for a, b in zip(values, values[1:])), values


def _check_batch_csv(out: str) -> None:
    docs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    csv_docs = [d for d in docs if d.get("expr") == "x*y + sin(x)"]
    assert [d["line"] for d in csv_docs] == [2, 3, 4, 5, 6, 7, 8]
    assert "7 lines in" in out
    jsonl = [d for d in docs if d not in csv_docs]
    assert [d["line"] for d in jsonl] == [1, 2, 3, 4, 5, 6]
    assert jsonl[3]["error"]["kind"] == "syntax"
    assert "exit code 1" in out


def _check_jacobian(out: str) -> None:
    docs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert docs[0]["jacobian"]["x"][0] == 2.0
    assert docs[1]["jacobian"]["v"] == [[2.0, 4.0, 6.0], [6.0, 3.0, 2.0]]


def _check_pipeline(out: str) -> None:
    rows = [line.split("\t") for line in out.splitlines()[1:]]
    assert len(rows) == 9
    assert [float(r[2]) for r in rows][4] == -2.0  # f'(0) = -2


CHECKS = {
    "gradient_descent.sh": _check_gradient_descent,
    "batch_csv.sh": _check_batch_csv,
    "jacobian.sh": _check_jacobian,
    "pipeline.sh": _check_pipeline,
}
