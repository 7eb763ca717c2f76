"""The plain tables written without Rich (issue 12: start-up) are Rich's, byte for byte.

``render.plain_table`` writes the value/gradient table itself when stdout is not a terminal
and Rich would print no styles; otherwise (a table or a title wider than the console,
characters that are not one cell wide, a terminal, FORCE_COLOR) it declines and Rich
renders.  Each case here renders the same table both ways and compares.  Neither ends a line
with spaces, and the title is laid out at the console's width, not the table's.
"""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograd_cli.cli import render

TEXT = st.text(alphabet=st.sampled_from("abxyz_019*+-()/. ∂·é中"), min_size=1, max_size=30)
#: a title as the commands give one: stripped, spaces inside
TITLE = (
    st.text(alphabet=st.sampled_from("abxyz_019*+-()/. ∂·é中 "), min_size=1, max_size=130)
    .map(str.strip)
    .filter(bool)
)


def rich_text(title: str, rows: list[list[str]], width: int) -> str:
    from rich.markup import escape

    console = render.make_console(file=io.StringIO(), width=width, color_system=None)
    table = render._table(escape(title))
    for label, shape, value in rows:
        table.add_row(escape(label), shape, escape(value))
    console.print(table)
    return console.file.getvalue()


def plain_text(monkeypatch, capsys, title, rows, width) -> str | None:
    monkeypatch.setenv("COLUMNS", str(width))
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    capsys.readouterr()
    written = render.plain_table(title, ["", "shape", "value"], rows)
    out = capsys.readouterr().out
    assert written or out == ""
    return out if written else None


# monkeypatch and capsys are set afresh by each example (COLUMNS, readouterr)
@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    title=TITLE,
    rows=st.lists(st.tuples(TEXT, TEXT), min_size=1, max_size=4),
    width=st.integers(5, 120),
)
def test_plain_table_is_rich_table_or_declines(monkeypatch, capsys, title, rows, width):
    rows = [[label, "()", value] for label, value in rows]
    got = plain_text(monkeypatch, capsys, title, rows, width)
    if got is not None:
        assert got == rich_text(title, rows, width)


def test_the_readme_table_is_written_without_rich(monkeypatch, capsys):
    rows = [["value", "()", "-12.0"], ["∂/∂a", "()", "36.0"], ["∂/∂b", "()", "-12.0"]]
    got = plain_text(monkeypatch, capsys, "3*a**3-b**2", rows, 80)
    assert got == rich_text("3*a**3-b**2", rows, 80)
    assert got.splitlines()[2] == "─" * 23


@pytest.mark.parametrize(
    "title, rows, width",
    [
        ("x" * 81, [["value", "()", "1.0"]], 80),  # the title is wider than the console
        ("x", [["value", "()", "1.0" * 30]], 40),  # the table is wider than the console
        ("中文", [["value", "()", "1.0"]], 80),  # a wide character
        ("x", [["é", "()", "1.0"]], 80),  # not ASCII
    ],
)
def test_plain_table_declines_what_rich_lays_out(monkeypatch, capsys, title, rows, width):
    assert plain_text(monkeypatch, capsys, title, rows, width) is None


def test_styles_or_a_terminal_go_to_rich(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert render.plain_width() is None
    monkeypatch.setenv("FORCE_COLOR", "")
    assert render.plain_width() == 80
    monkeypatch.delenv("FORCE_COLOR")
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    assert render.plain_width() is None
    monkeypatch.setenv("TTY_COMPATIBLE", "0")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert render.plain_width() == 80  # TTY_COMPATIBLE=0 wins, as in Rich
    monkeypatch.delenv("TTY_COMPATIBLE")
    monkeypatch.delenv("FORCE_COLOR")
    monkeypatch.setattr(sys, "stdout", _Tty())
    assert render.plain_width() is None


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_width_is_rich_console_width(monkeypatch):
    from rich.console import Console

    for columns in ("37", "200", None, "x"):
        if columns is None:
            monkeypatch.delenv("COLUMNS", raising=False)
        else:
            monkeypatch.setenv("COLUMNS", columns)
        monkeypatch.delenv("FORCE_COLOR", raising=False)
        monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
        assert render.plain_width() == Console().width


@pytest.mark.parametrize(
    "argv",
    [
        ["grad", "3*a**3-b**2", "--a", "2", "--b", "6"],
        ["eval", "sin(1)+x", "--x", "0.5", "--precision", "8"],
        ["grad", "x**3", "--x", "2", "--order", "2"],
        ["grad", "x*y", "--x", "1", "--y", "2", "--plain"],
        ["grad", "sum(x*y)", "--x", "[1,2]", "--y", "2"],  # an array: Rich
        ["grad", "abs(x)", "--x", "0"],  # a warning: Rich
    ],
)
def test_console_script_tables_are_rich_tables(tmp_path, argv):
    """Through the console script, the table written without Rich equals the one Rich
    writes for the same run (with ``plain_table`` turned off)."""
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    env["COLUMNS"] = "100"
    fast = subprocess.run(
        [sys.executable, "-m", "autograd_cli", *argv], capture_output=True, text=True, env=env
    )
    code = (
        "import sys, autograd_cli.cli.render as r; r.plain_table = lambda *a: False; "
        "from autograd_cli.cli.main import run; sys.exit(run(sys.argv[1:]))"
    )
    slow = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env
    )
    assert fast.returncode == slow.returncode == 0, fast.stderr + slow.stderr
    assert fast.stdout == slow.stdout
    assert fast.stderr == slow.stderr
