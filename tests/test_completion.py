"""Shell completion (issue 13): `autograd-cli completion SHELL` prints the script; the
shell then calls the tool back with _AUTOGRAD_CLI_COMPLETE set, and it prints the command
and option names that fit."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest


def _command() -> list:
    exe = shutil.which("autograd-cli")
    return [exe] if exe else [sys.executable, "-m", "autograd_cli"]


def _complete(shell: str, **env) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k != "AUTOGRAD_CLI_DEBUG"}
    full.update(env, _AUTOGRAD_CLI_COMPLETE=f"complete_{shell}")
    return subprocess.run(
        _command(), env=full, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL
    )


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_script_names_the_tool_and_its_variable(cli, shell):
    r = cli("completion", shell)
    assert r.code == 0, r.err
    assert "autograd-cli" in r.out and "_AUTOGRAD_CLI_COMPLETE=complete_" + shell in r.out
    doc = cli("completion", shell, "--json").json
    assert doc["shell"] == shell and doc["script"] == r.out


def test_an_unknown_shell_is_a_usage_error(cli):
    r = cli("completion", "tcsh", "--json")
    assert r.code == 2 and r.json["error"]["kind"] == "usage"
    assert "bash, zsh, fish" in r.json["error"]["message"]


def test_bash_completes_commands_and_options():
    r = _complete("bash", COMP_WORDS="autograd-cli he", COMP_CWORD="1")
    assert r.returncode == 0 and r.stdout.split() == ["hessian"], r.stderr
    r = _complete("bash", COMP_WORDS="autograd-cli grad x --pre", COMP_CWORD="3")
    assert r.stdout.split() == ["--precision"]
    r = _complete("bash", COMP_WORDS="autograd-cli batch f.csv --str", COMP_CWORD="3")
    assert r.stdout.split() == ["--strict"]
    assert r.stderr == ""


def test_zsh_completes_with_help_texts():
    r = _complete("zsh", _TYPER_COMPLETE_ARGS="autograd-cli hes")
    assert r.returncode == 0 and '"hessian":"' in r.stdout


def test_a_broken_completion_request_prints_nothing_and_no_traceback():
    r = _complete("bash")  # no COMP_WORDS: the shell did not set what the script sets
    assert r.stdout == "" and "Traceback" not in r.stderr and r.returncode == 1


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_sources_the_script_and_completes(tmp_path):
    script = tmp_path / "complete.bash"
    script.write_text(
        subprocess.run(
            _command() + ["completion", "bash"], capture_output=True, text=True, timeout=300
        ).stdout
    )
    tool = " ".join(f"'{part}'" for part in _command())
    body = (
        f"source '{script}'\n"
        f'autograd-cli() {{ {tool} "$@"; }}\n'  # the function the script's $1 calls
        "COMP_WORDS=(autograd-cli jac); COMP_CWORD=1\n"
        "_autograd_cli_completion autograd-cli\n"
        'echo "${COMPREPLY[@]}"\n'
    )
    # the script runs the tool by name through env: the venv's bin on PATH, as activated
    bin_dir = os.path.dirname(sys.executable)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    r = subprocess.run(
        ["bash", "--norc", "-c", body], capture_output=True, text=True, timeout=300, env=env
    )
    assert r.stdout.split() == ["jacobian"], r.stderr
