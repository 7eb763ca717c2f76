"""The batch package's seam: the Dask engine uses only the public names of the local engine's
modules (each module's ``__all__``), and no module of the package is over 1,000 lines or has a
function over 80 (issue 24, step 4)."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

FOLDER = Path(__file__).resolve().parent.parent / "cli" / "batch"
SIBLINGS = ("io", "records", "engine", "command", "dask_parts")


def _imports(tree: ast.Module) -> tuple[dict, list]:
    """(alias -> sibling module, [(sibling, name)]) of a module's relative imports."""
    aliases, names = {}, []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module is None:  # from . import io as batch_io
                for a in node.names:
                    if a.name in SIBLINGS:
                        aliases[a.asname or a.name] = a.name
            elif node.module in SIBLINGS:  # from .records import BatchOptions
                names += [(node.module, a.name) for a in node.names]
    return aliases, names


@pytest.mark.parametrize("name", ["dask", "dask_parts"])
def test_the_dask_engine_uses_only_public_names(name):
    text = (FOLDER / f"{name}.py").read_text(encoding="utf-8")
    aliases, names = _imports(ast.parse(text))
    for alias, module in aliases.items():
        names += [(module, n) for n in re.findall(rf"\b{alias}\.(\w+)", text)]
    assert names, "the search found nothing"
    for module, used in names:
        public = importlib.import_module(f"autograd_cli.cli.batch.{module}").__all__
        assert used in public, f"{name}.py uses {module}.{used}, not in {module}.__all__"


@pytest.mark.parametrize("path", sorted(FOLDER.glob("*.py")), ids=lambda p: p.name)
def test_modules_and_functions_stay_small(path):
    text = path.read_text(encoding="utf-8")
    assert text.count("\n") <= 1000
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            assert node.end_lineno - node.lineno + 1 <= 80, f"{path.name}: {node.name}"
