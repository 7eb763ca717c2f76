"""The examples in the library's docstrings run, and print what they say they print."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest


def _modules() -> list[str]:
    """Every module of the package, sub-packages included (core/ops/, core/symbolic/, ...)."""
    names = ["autograd_cli"]
    for top in ("core", "grammar", "cli"):  # installed from folders of their own (package-dir)
        package = importlib.import_module(f"autograd_cli.{top}")
        names.append(package.__name__)
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name.rpartition(".")[2] != "__main__":  # it would run the command line
                names.append(info.name)
    return names


MODULES = _modules()


def test_the_library_has_examples():
    # The walk must find the modules whose examples the README and ARCHITECTURE.md cite.
    for name in ("autograd_cli.core.interpret", "autograd_cli.core.api", "autograd_cli.core.rows"):
        assert name in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(
        module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False
    )
    assert result.failed == 0, f"{result.failed} docstring example(s) of {name} failed"
