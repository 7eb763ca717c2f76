"""Help and conventions (issue 23): what the command line says about itself.

The top-level help lists every command with its whole one-sentence summary, ``--version``
and the global options; ``help``, ``help CMD``, ``version`` and ``-V`` are what users of
git and Click type; an unknown command names the one meant; every command's ``--help``
ends with an example that runs; ``--json`` with ``--help`` anywhere is one JSON document;
running the command line again and again leaves the Click command it used as it was.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys

import pytest

from autograd_cli.cli import helptext
from autograd_cli.cli.main import GLOBAL_FLAGS, GLOBAL_VALUED, click_command, run

COMMANDS = list(helptext.COMMANDS)


@pytest.fixture(scope="module")
def group():
    return click_command([])  # every command, as Typer builds them


def _paragraphs(text: str) -> list[str]:
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", text.strip())]


# ---- the summaries ------------------------------------------------------------------------------


def test_the_table_names_every_command_once(group):
    assert sorted(COMMANDS) == sorted(group.commands)


@pytest.mark.parametrize("name", COMMANDS)
def test_a_summary_is_one_whole_sentence_and_opens_the_commands_help(group, name):
    summary = helptext.COMMANDS[name][0]
    # one sentence: a capital first, one full stop, at the end (no "w.r.t." cut short)
    assert re.fullmatch(r"[A-Z][^.]*\.", summary), summary
    assert len(summary) <= 60, "a short sentence: it fits the top-level help's line"
    sub = group.commands[name]
    assert sub.get_short_help_str(limit=45) == summary  # Click's own limit cuts nothing
    assert _paragraphs(sub.help)[0] == summary  # NAME --help opens with the same sentence


def test_the_top_level_help_lists_each_summary_whole(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    r = cli("--help")
    assert r.code == 0 and r.err == ""
    assert r.out.startswith("Usage: autograd-cli [OPTIONS] COMMAND [ARGS]...")
    for name, (summary, _) in helptext.COMMANDS.items():
        lines = [line for line in r.out.splitlines() if line.startswith(f"  {name} ")]
        assert len(lines) == 1, name
        assert lines[0].split(None, 1)[1] == summary, "cut, or wrapped onto a second line"
    for line in r.out.splitlines():
        assert len(line) <= 78, line


def test_the_top_level_help_lists_version_and_the_global_options(cli):
    text = cli("--help").out
    assert "-V, --version" in text and "-h, --help" in text
    section = text.split("Global options (before the command's name or after it):\n")[1]
    section = section.split("\n\n")[0]
    listed = [line.split()[0] for line in section.splitlines() if line.startswith("  --")]
    # exactly the options main.hoist_global_options moves from before the command's name
    assert sorted(listed) == sorted(GLOBAL_FLAGS + GLOBAL_VALUED)


@pytest.mark.parametrize("option", GLOBAL_FLAGS + GLOBAL_VALUED)
def test_each_global_option_before_the_command_is_taken(cli, option):
    value = {"--device": ["cpu"], "--dtype": ["float64"], "--precision": ["3"]}.get(
        option, ["0"] if option in GLOBAL_VALUED else []
    )
    r = cli(option, *value, "grad", "x**2", "--x", "3", "--json")
    assert r.code == 0, r.out
    assert r.json["grad"] == {"x": 6.0}


# ---- help, help CMD, version, -V ----------------------------------------------------------------


def test_help_is_the_top_level_help(cli):
    top = cli("--help")
    for argv in (["help"], ["-h"], ["help", "help"], ["--json", "help"]):
        r = cli(*argv)
        assert (r.code, r.err) == (0, ""), argv
        if "--json" in argv:
            assert r.json == {"command": "autograd-cli", "help": top.out.rstrip("\n")}
        else:
            assert r.out == top.out, argv


@pytest.mark.parametrize("name", ["grad", "batch", "solve", "completion"])
def test_help_command_is_the_commands_help(cli, name):
    expected = cli(name, "--help")
    assert expected.code == 0 and expected.out.startswith(f"Usage: autograd-cli {name} ")
    for argv in (["help", name], ["-h", name], [name, "-h"], ["--help", "help", name]):
        r = cli(*argv)
        assert (r.code, r.out, r.err) == (0, expected.out, ""), argv
    doc = cli("help", name, "--json").json
    assert doc == {"command": f"autograd-cli {name}", "help": expected.out.rstrip("\n")}


def test_version_v_and_dash_v_are_the_version(cli):
    from autograd_cli import __version__

    for argv in (["--version"], ["version"], ["-V"], ["--dtype", "float32", "-V"]):
        r = cli(*argv)
        assert (r.code, r.out, r.err) == (0, f"autograd-cli {__version__}\n", ""), argv
    for argv in (["version", "--json"], ["-V", "--json"]):
        assert cli(*argv).json == {"version": __version__}
    # after the command's name, -V and version are the expression's business
    r = cli("eval", "version*2", "--version", "3", "--json")
    assert r.code == 0 and r.json["value"] == 6.0


@pytest.mark.parametrize(
    "word, meant",
    [("derivative", "diff"), ("gradient", "grad"), ("gard", "grad"), ("optimize", "minimize")],
)
def test_an_unknown_command_names_the_one_meant(cli, word, meant):
    r = cli(word, "x**2", "--x", "1", "--json")
    assert r.code == 2 and r.json["error"]["kind"] == "usage"
    message = r.json["error"]["message"]
    assert message.startswith(f"no command '{word}': did you mean {meant}? (autograd-cli {meant} ")
    example = message.split("(", 1)[1].rsplit(")", 1)[0]
    assert example == helptext.COMMANDS[meant][1]
    r = cli("help", word)
    assert r.code == 2 and f"did you mean {meant}?" in r.err and r.out == ""


def test_an_expression_in_the_commands_place_says_the_command_comes_first(cli):
    r = cli("x**2", "--x", "3")
    assert r.code == 2 and r.out == ""
    assert "no command 'x**2': the command comes first" in r.err
    r = cli("bogus")
    assert r.code == 2 and "the commands are eval, grad, hessian" in r.err


def test_global_options_alone_are_no_command(cli):
    r = cli("--dtype", "float32")
    assert r.code == 2 and r.err.startswith("autograd-cli: error: no command given")


# ---- every command's --help ends with an example that runs ---------------------------------------


def _example(help_text: str) -> str:
    lines = help_text.rstrip("\n").splitlines()
    assert lines[-2].strip() == "Example:", lines[-3:]
    assert help_text.count("Example:") == 1
    return lines[-1].strip()


@pytest.mark.parametrize("name", COMMANDS)
def test_each_commands_help_ends_with_its_example(cli, name):
    r = cli(name, "--help")
    assert r.code == 0
    example = _example(r.out)
    assert example == helptext.COMMANDS[name][1]  # on one line: never run into other text
    assert re.match(rf"(echo '[^']*' \| )?autograd-cli {name}( |$)", example), example


@pytest.mark.parametrize("name", COMMANDS)
def test_each_commands_example_runs(cli, monkeypatch, tmp_path, name):
    example = helptext.COMMANDS[name][1]
    text = ""
    if " | " in example:  # echo 'TEXT' | autograd-cli ...: TEXT on stdin
        producer, example = example.split(" | ", 1)
        words = shlex.split(producer)
        assert words[0] == "echo" and len(words) == 2
        text = words[1] + "\n"
    (tmp_path / "stdin").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with open(tmp_path / "stdin", encoding="utf-8") as stdin:
        monkeypatch.setattr("sys.stdin", stdin)
        argv = shlex.split(example)
        assert argv[0] == "autograd-cli"
        r = cli(*argv[1:])
    assert r.code == 0, r.out + r.err
    assert r.out.strip() or name == "repl"  # a session on an empty stdin prints nothing


# ---- --precision's help names --format only where the command has it -----------------------------


@pytest.mark.parametrize("name", COMMANDS)
def test_precision_help_names_only_options_the_command_has(group, name):
    params = {p.name: p for p in group.commands[name].params}
    if "precision" not in params:
        return
    options = {opt for p in params.values() for opt in getattr(p, "opts", [])}
    mentioned = set(re.findall(r"--[a-z-]+", params["precision"].help))
    assert mentioned <= options, f"{name}: --precision's help names {mentioned - options}"
    assert ("--format" in mentioned) == ("--format" in options)


# ---- --json with --help anywhere ------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["eval", "--json", "--", "x", "--x", "1", "--help"],
        ["grad", "--json", "x", "--x", "1", "--help"],
        ["--json", "hessian", "--", "-x**2", "--help", "--x", "2"],
        ["taylor", "exp(x)", "--x", "0", "--help", "--json"],
    ],
)
def test_json_and_help_anywhere_is_one_json_document(cli, argv):
    r = cli(*argv)
    assert r.code == 0, r.out + r.err
    doc = json.loads(r.out)  # exactly one document
    name = next(a for a in argv if a in helptext.COMMANDS)
    assert doc["command"] == f"autograd-cli {name}"
    assert doc["help"] + "\n" == cli(name, "--help").out


def test_help_as_the_expression_is_an_expression(cli):
    # after --, the next word is the expression, whatever it looks like: -(-help)
    r = cli("eval", "--json", "--", "--help", "--var", "help=3")
    assert r.code == 0 and r.json["value"] == 3.0
    r = cli("eval", "--json", "--", "--help")
    assert r.code == 2 and r.json["error"]["kind"] == "missing_value"


# ---- a run leaves no trace in shared objects -------------------------------------------------------


def test_runs_without_a_command_leave_a_reused_click_command_as_it_was(monkeypatch, capsys):
    """A caller that keeps the Click command (here: Typer's get_command memoised, as a test
    harness or a library user might) runs the command line on it 5,000 times: each run gets
    the same answer, and nothing is wrapped once more per run (a thousand wrappers deep,
    Click's parsing would exceed the recursion limit: 'the input nests too deeply')."""
    import typer

    built = typer.main.get_command
    shared = {}
    calls = []

    def memoised(app):
        calls.append(app)
        if "group" not in shared:
            shared["group"] = built(app)
        return shared["group"]

    monkeypatch.setattr(typer.main, "get_command", memoised)
    for argv in (["bogus"], ["--help"], [], ["help"], ["--json"]):
        run(argv)
    assert calls == [], "a run that names no command builds no command"
    for i in range(5000):
        code = run(["--dtype", "float32", "--bogus"])  # Click's error, from the full group
        assert code == 2, i
    err = capsys.readouterr().err
    # Click's wording: "No such option: --bogus" (Typer's Click) or "No such option '--bogus'."
    assert len(re.findall(r"No such option:? '?--bogus", err)) == 5000
    assert "nests too deeply" not in err
    group = shared["group"]
    with group.make_context("autograd-cli", ["grad", "--help"], resilient_parsing=True) as ctx:
        assert group.get_help_option(ctx) is not None


def test_a_command_module_imported_first_still_gets_its_summary_and_example():
    """``import autograd_cli.cli.commands.analysis`` before the app: its commands register after
    app.py's last line, and the Click command built for a run still describes them."""
    code = (
        "import autograd_cli.cli.commands.analysis\n"
        "from autograd_cli.cli.main import run\n"
        "raise SystemExit(run(['taylor', '--help']))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    summary, example = helptext.COMMANDS["taylor"][:2]
    assert summary in r.stdout
    assert r.stdout.rstrip().endswith(example)


# ---- the shared options are declared once ------------------------------------------------------


def test_the_shared_options_are_declared_once_and_given_to_each_command(group):
    """Every command with an expression takes the shared options, after its own, in one
    order; no command module declares one of them again (batch's own --json and --strict
    say what they mean there)."""
    import importlib
    import inspect
    import pkgutil

    from autograd_cli.cli import commands
    from autograd_cli.cli.commands import shared

    with_expression = [n for n, sub in group.commands.items() if sub.params[0].name == "expr"]
    assert len(with_expression) == 16
    for name in with_expression:
        names = [p.name for p in group.commands[name].params]
        taken = [n for n in shared.ALL if n in names]
        expected = shared.ALL if name != "plot" else shared.ALL[:3] + shared.ALL[5:]
        assert tuple(taken) == expected, name
        assert names[-len(taken) :] == taken, f"{name}: the shared options come last"
    for info in pkgutil.iter_modules(commands.__path__):
        if info.name in ("shared", "batch"):
            continue
        source = inspect.getsource(importlib.import_module(f"{commands.__name__}.{info.name}"))
        for option in ("--json", "--device", "--dtype", "--precision", "--var", "--strict"):
            assert f'"{option}"' not in source, f"{info.name} declares {option}"
