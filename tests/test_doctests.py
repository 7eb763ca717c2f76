"""The examples in the library's docstrings run, and print what they say they print."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

PACKAGES = (
    "autograd_cli",
    "autograd_cli.core",
    "autograd_cli.core.symbolic",
    "autograd_cli.grammar",
    "autograd_cli.cli",
)


def _modules() -> list[str]:
    names = []
    for package in PACKAGES:
        for info in pkgutil.iter_modules(importlib.import_module(package).__path__):
            if info.name == "__main__":  # importing it would run the command line
                continue
            names.append(f"{package}.{info.name}")
    return names


MODULES = _modules()


def test_the_library_has_examples():
    # The walk must find the modules whose examples the README and ARCHITECTURE.md cite.
    for name in ("autograd_cli.core.interpret", "autograd_cli.core.api", "autograd_cli.rows"):
        assert name in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(
        module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False
    )
    assert result.failed == 0, f"{result.failed} docstring example(s) of {name} failed"
