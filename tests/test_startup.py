"""Startup cost (issue 12): what a run imports.

A plain ``grad``/``eval`` run needs NumPy, Lark (to parse) and Typer; Rich only to print a
table, and Pydantic never (Typer 0.2x converts option values with Pydantic TypeAdapters:
``app.plain_converters`` gives every parameter a converter that takes our plain values
without it).  Each run here is a fresh interpreter, so the modules it lists are exactly
what that command line loaded.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys

import pytest

from autograd_cli.cli.app import plain_value

SCRIPT = """
import json, sys
from autograd_cli.cli.main import run
code = run(sys.argv[2:])
sys.stdout.flush()
with open(sys.argv[1], "w") as f:
    json.dump({"code": int(code), "modules": sorted(sys.modules)}, f)
"""


def loaded(tmp_path, *argv) -> tuple[int, set, str]:
    """Run the command line in a fresh interpreter: (exit code, modules loaded, stdout)."""
    report = tmp_path / "modules.json"
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(report), *argv],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert report.exists(), proc.stderr
    doc = json.loads(report.read_text())
    return doc["code"], set(doc["modules"]), proc.stdout


def tops(modules: set) -> set:
    return {m.split(".")[0] for m in modules}


@pytest.mark.parametrize(
    "argv",
    [
        ["grad", "3*a**3-b**2", "--a", "2", "--b", "6", "--json"],
        ["eval", "sin(x)", "--x", "1", "--format", "plain"],
        ["grad", "x*y", "--x", "1", "--y", "2", "--format", "csv"],
        ["--json", "eval", "x+", "--x", "1"],  # a parse error, as a JSON document
        ["check", "x**2", "--x", "1", "--eps", "1e-4", "--json"],
    ],
    ids=["grad-json", "eval-plain", "grad-csv", "error-json", "check-json"],
)
def test_machine_output_loads_neither_rich_nor_pydantic(tmp_path, argv):
    code, modules, out = loaded(tmp_path, *argv)
    assert out.strip(), "the command printed nothing"
    assert not {"rich", "pydantic", "pydantic_core"} & tops(modules), sorted(
        m for m in modules if m.startswith(("rich", "pydantic"))
    )


def test_batch_loads_neither_rich_nor_pydantic(tmp_path):
    (tmp_path / "in.csv").write_text("x,y\n1,2\n3,4\n", encoding="utf-8")
    code, modules, out = loaded(
        tmp_path, "batch", "in.csv", "--expr", "x*sin(y)", "--chunk-size", "10", "--no-progress"
    )
    assert code == 0 and len(out.splitlines()) == 2
    assert not {"rich", "pydantic", "pydantic_core"} & tops(modules)


def test_a_table_of_numbers_loads_neither_rich_nor_pydantic(tmp_path):
    """The README's command, its output a pipe: the table is written without Rich (see
    tests/test_plain_table.py), and nothing converts values with Pydantic."""
    code, modules, out = loaded(tmp_path, "grad", "3*a**3-b**2", "--a", "2", "--b", "6")
    assert code == 0 and "36.0" in out
    assert not {"rich", "pydantic", "pydantic_core"} & tops(modules)


def test_a_table_of_arrays_loads_rich_but_not_pydantic(tmp_path):
    code, modules, out = loaded(tmp_path, "grad", "sum(x**2)", "--x", "[1,2]")
    assert code == 0 and "[2., 4.]" in out
    assert "rich" in tops(modules)
    assert not {"pydantic", "pydantic_core"} & tops(modules)


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["--version"], ["help"], ["-V"], ["version"], ["--json", "-h"], ["-V", "--json"]],
)
def test_version_and_the_top_level_help_load_nothing_heavy(tmp_path, argv):
    """``--version`` and ``--help`` answer from the standard library alone (issue 23: they
    took 0.68 s and 0.82 s loading NumPy, the op table, Typer and every command)."""
    code, modules, out = loaded(tmp_path, *argv)
    assert code == 0 and out.strip()
    heavy = {"numpy", "typer", "click", "rich", "lark", "pydantic"} & tops(modules)
    assert not heavy, heavy
    assert not [m for m in modules if m.startswith(("autograd_cli.core", "autograd_cli.grammar"))]


def _console_script() -> list:
    exe = shutil.which("autograd-cli")
    return [exe] if exe else [sys.executable, "-m", "autograd_cli"]


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_the_console_script_answers_version_and_help_without_numpy(tmp_path, flag):
    """The installed ``autograd-cli`` itself (its entry module included), as bench/run.py's
    row 10 times it: Python's ``-X importtime`` lists every module the run imported, and
    neither NumPy nor anything of the op table (``autograd_cli.core``) is among them."""
    proc = subprocess.run(
        _console_script() + [flag],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"},
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("autograd-cli " if flag == "--version" else "Usage: ")
    names = {ln.rsplit("|", 1)[-1].strip() for ln in proc.stderr.splitlines() if "|" in ln}
    assert "autograd_cli.cli.main" in names  # the listing is there: the check means something
    heavy = {n for n in names if n.split(".")[0] in ("numpy", "typer", "click", "rich", "lark")}
    heavy |= {n for n in names if n.startswith(("autograd_cli.core", "autograd_cli.grammar"))}
    assert not heavy, sorted(heavy)


# ---- the converters match Typer's (Pydantic's) -------------------------------------------------

INTS = ["0", "7", "-3", "+5", "007", "-0", "123456789012345678", "9" * 19, "1_000", " 12", "12 "]
INTS += ["1.0", "1.5", "1e3", "0x10", "", "abc", "٣", "--1", "+-1"]
FLOATS = ["1", "1.", ".5", "+.5", "-0", "1e-6", "1E5", "1e400", "1e-400", "0.1", "00.5"]
FLOATS += ["1.7976931348623157e308", "4.9e-324", "2.2250738585072011e-308", "123456789.123456789"]
FLOATS += ["inf", "-inf", "nan", "1_0", " 1", "1e", "e5", ".", "", "0x1p3", "1e1000", "１"]


def _typer_convert(annotation, value):
    from typer._adapters import try_build_adapter
    from typer.models import OptionInfo

    adapter = try_build_adapter(annotation, OptionInfo())
    try:
        return "ok", adapter.validate_python(value)
    except Exception as exc:  # noqa: BLE001 - the error itself is what is compared
        return "error", type(exc).__name__


@pytest.mark.parametrize(
    "annotation, values",
    [
        (int, INTS + [5, 65536]),
        (float, FLOATS + [0.5, -0.0]),
        (str, ["", "x", " -x", "3*a**3", "é", "\x00"]),
        (bool, [True, False]),
        (list[str], [(), ("a=1",), ["a=1", "b=[1, 2]"]]),
    ],
    ids=["int", "float", "str", "bool", "list"],
)
def test_plain_values_convert_as_typer_does(annotation, values):
    pytest.importorskip("typer._adapters")
    for value in values:
        got = plain_value(annotation, value)
        if got is NotImplemented:
            continue  # Typer's own converter decides: the same by construction
        kind, expected = _typer_convert(annotation, value)
        assert kind == "ok", (annotation, value, expected)
        assert type(got) is type(expected), (annotation, value)
        if isinstance(got, float) and math.isnan(got):
            assert math.isnan(expected)
        else:
            assert got == expected, (annotation, value)
            if isinstance(got, float):
                assert math.copysign(1, got) == math.copysign(1, expected)


def test_unusual_values_are_left_to_typer():
    for text in ("1_000", " 12", "1.0", "inf", "nan", "1e1000000", "١٢"):
        assert plain_value(int, text) is NotImplemented
    assert plain_value(float, "inf") is NotImplemented
    assert plain_value(float, "1_0") is NotImplemented
    assert plain_value(str, b"x") is NotImplemented
    assert plain_value(bool, "yes") is NotImplemented
    assert plain_value(int, True) is NotImplemented
    assert plain_value(list[str], ("a", 1)) is NotImplemented


def _help(command, name: str) -> str:
    import click

    group_ctx = click.Context(command, info_name="autograd-cli")
    sub = command.commands[name]
    with click.Context(sub, info_name=name, parent=group_ctx) as ctx:
        return sub.get_help(ctx)


def test_a_named_command_is_built_alone_and_as_in_the_full_group():
    """A run builds only the command it names (a sixth of a cold start), and that command
    has the same parameters, converters and help as in the group of every command."""
    from autograd_cli.cli.app import app
    from autograd_cli.cli.main import click_command

    full = click_command([])
    names = sorted(full.commands)
    assert {"eval", "grad", "batch", "repl", "taylor"} <= set(names)
    for name in names:
        for argv in ([name, "x"], ["--json", "--dtype", "float32", name], ["--help", name]):
            alone = click_command(argv)
            assert list(alone.commands) == [name], argv
            assert _help(alone, name) == _help(full, name)
            params = [(p.name, p.opts, type(p).__name__) for p in alone.commands[name].params]
            assert params == [
                (p.name, p.opts, type(p).__name__) for p in full.commands[name].params
            ]
    # The app itself keeps every command (the single-command group is built from a copy).
    assert sorted(c.name for c in app.registered_commands) == names
    # A value of a global option that spells a command is not taken for the command.
    assert list(click_command(["--dtype", "grad", "eval"]).commands) == ["eval"]
    assert sorted(click_command(["gradd", "x"]).commands) == names  # misspelt: all listed


def test_option_names_are_every_commands_options():
    """``common.OPTION_NAMES`` (the shortcut that spares a run building every command to tell
    a variable from another command's option) is exactly the commands' long options."""
    from autograd_cli.cli.commands.common import OPTION_NAMES, _long_options
    from autograd_cli.cli.main import click_command

    every = {n for sub in click_command([]).commands.values() for n in _long_options(sub)}
    assert OPTION_NAMES == every, (
        f"update cli/commands/common.py OPTION_NAMES: add {sorted(every - OPTION_NAMES)}, "
        f"remove {sorted(OPTION_NAMES - every)}"
    )
