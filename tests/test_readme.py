"""Every `$ autograd-cli ...` example in the README runs and prints what the README shows.

So does every ```python block: each is a doctest, run on its own.
"""

from __future__ import annotations

import doctest
import re
import shlex
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def _examples():
    text = README.read_text(encoding="utf-8")
    for block in re.findall(r"```console\n(.*?)```", text, flags=re.S):
        command, expected = None, []
        for line in block.splitlines():
            if line.startswith("$ "):
                if command is not None:
                    yield command, expected
                command, expected = line[2:], []
            else:
                expected.append(line)
        if command is not None:
            yield command, expected


EXAMPLES = list(_examples())


def test_readme_has_examples():
    assert len(EXAMPLES) >= 8


@pytest.mark.parametrize("command, expected", EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_readme_example(cli, monkeypatch, command, expected):
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.chdir(README.parent)  # examples refer to files like examples/points.csv
    argv = shlex.split(command)
    assert argv[0] == "autograd-cli"
    r = cli(*argv[1:])
    shown = [line.rstrip() for line in (r.out + r.err).splitlines()]
    assert shown == [line.rstrip() for line in expected]


PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_has_library_examples():
    assert len(PYTHON_BLOCKS) >= 2


@pytest.mark.parametrize(
    "block", PYTHON_BLOCKS, ids=[f"python-{i}" for i in range(len(PYTHON_BLOCKS))]
)
def test_readme_python_example(block):
    test = doctest.DocTestParser().get_doctest(block, {}, "README", str(README), 0)
    assert test.examples, "a python block of the README without >>> examples"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)
