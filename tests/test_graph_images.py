"""graph --svg/--png (issue 13): the DOT text drawn by Graphviz's dot, written whole.

A fake ``dot`` on PATH (a script that checks its arguments and stdin) tests the plumbing
everywhere; the last test uses the real one where it is installed."""

from __future__ import annotations

import os
import shutil
import stat
import sys

import pytest

ARGS = ("graph", "x*y + sin(x)", "--x", "1", "--y", "2")


def _fake_dot(folder, body: str):
    folder.mkdir(exist_ok=True)
    script = folder / "dot"
    script.write_text(f"#!{sys.executable}\nimport sys\n{body}\n")
    script.chmod(0o755)
    return folder


WORKING = (
    "fmt = sys.argv[1]\n"
    "text = sys.stdin.read()\n"
    "assert text.startswith('digraph autograd {'), text\n"
    "sys.stdout.write(f'<{fmt}>' + str(text.count('->')) + f' edges</{fmt}>')"
)


@pytest.fixture
def fake_dot(tmp_path, monkeypatch):
    folder = _fake_dot(tmp_path / "bin", WORKING)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    return folder


def test_svg_and_png_are_drawn_by_dot(cli, tmp_path, fake_dot):
    svg, png = tmp_path / "g.svg", tmp_path / "g.png"
    r = cli(*ARGS, "--svg", str(svg), "--png", str(png))
    assert r.code == 0, r.err
    assert r.out == ""  # the files are the output
    assert svg.read_text() == "<-Tsvg>5 edges</-Tsvg>"  # x, y -> mul; x -> sin; mul, sin -> add
    assert png.read_text() == "<-Tpng>5 edges</-Tpng>"
    r = cli(*ARGS, "--svg", str(svg), "--json")  # and the JSON too when asked
    assert r.code == 0 and r.json["nodes"]


def test_a_failing_dot_leaves_the_old_file(cli, tmp_path, monkeypatch):
    folder = _fake_dot(tmp_path / "bad", "sys.stderr.write('Error: syntax\\n'); sys.exit(3)")
    monkeypatch.setenv("PATH", str(folder))
    target = tmp_path / "g.svg"
    target.write_text("the old drawing")
    r = cli(*ARGS, "--svg", str(target), "--json")
    assert r.code == 1 and r.json["error"]["kind"] == "unsupported"
    assert "dot failed (exit 3): Error: syntax" in r.json["error"]["message"]
    assert target.read_text() == "the old drawing"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad", "g.svg"]  # no temporary left


def test_without_dot_the_message_says_how_to_get_it(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    r = cli(*ARGS, "--png", str(tmp_path / "g.png"), "--json")
    assert r.code == 1 and r.json["error"]["kind"] == "unsupported"
    assert "install Graphviz" in r.json["error"]["message"]
    assert not (tmp_path / "g.png").exists()


def test_a_dot_anyone_can_replace_is_not_run(cli, tmp_path, monkeypatch):
    folder = _fake_dot(tmp_path / "open", WORKING)
    folder.chmod(0o777)  # world-writable, no sticky bit
    monkeypatch.setenv("PATH", str(folder))
    r = cli(*ARGS, "--svg", str(tmp_path / "g.svg"), "--json")
    assert r.code == 1 and "writable by every user" in r.json["error"]["message"]
    assert not (tmp_path / "g.svg").exists()


def test_a_folder_or_an_unwritable_place_is_a_clear_error(cli, tmp_path, fake_dot):
    r = cli(*ARGS, "--svg", str(tmp_path), "--json")
    assert r.code == 1 and r.json["error"]["kind"] == "io"
    assert "it is a folder" in r.json["error"]["message"]
    r = cli(*ARGS, "--svg", str(tmp_path / "missing" / "g.svg"), "--json")
    assert r.code == 1 and "--svg: cannot write" in r.json["error"]["message"]


def test_an_existing_file_keeps_its_mode(cli, tmp_path, fake_dot):
    target = tmp_path / "g.svg"
    target.write_text("old")
    target.chmod(0o640)
    assert cli(*ARGS, "--svg", str(target)).code == 0
    assert stat.S_IMODE(target.stat().st_mode) == 0o640 and target.read_text().startswith("<")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_the_real_dot_draws_an_svg(cli, tmp_path):
    target = tmp_path / "g.svg"
    assert cli(*ARGS, "--svg", str(target)).code == 0
    assert "<svg" in target.read_text() and "MulBackward0" in target.read_text()


def test_a_device_is_written_to_not_replaced(cli, tmp_path, fake_dot):
    # --svg /dev/full: the device stays a device (a rename would put a file in its place, as
    # root), and the full disk is an io error
    r = cli(*ARGS, "--svg", "/dev/full", "--json")
    assert r.code == 1 and r.json["error"]["kind"] == "io"
    assert not os.path.isfile("/dev/full") and stat.S_ISCHR(os.stat("/dev/full").st_mode)
    assert cli(*ARGS, "--svg", "/dev/null").code == 0
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
