"""The import layers, read from the source, and the text-accepting library facade.

Layers (ARCHITECTURE): ``core/`` is the library and knows nothing of the expression language's
parser, the command line or its renderers; ``grammar/`` turns text into a ``core`` Program;
``cli/`` sits on both; the top package ``autograd_cli`` (the folder ``facade/``: text in, the
library's results out) sits on grammar and core and is imported by nothing in the project;
only its ``__main__`` (``python -m autograd_cli``) starts the command line.
Every module is parsed with ``ast``: imports at any depth count (a function-local import is
still a dependency, only a later one), relative imports are resolved against the package.

The facade example at the end is the README's ("The library"), checked against SymPy and
closed forms.
"""

from __future__ import annotations

import ast
import math
import subprocess
import sys
from pathlib import Path

import pytest

import autograd_cli as ag
from autograd_cli.core.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
# Source folder -> the package it installs as (pyproject.toml's package-dir).
PACKAGES = {
    "core": "autograd_cli.core",
    "grammar": "autograd_cli.grammar",
    "cli": "autograd_cli.cli",
    "facade": "autograd_cli",
}


def _modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the three code folders."""
    found = {}
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if any(other != folder and path.is_relative_to(ROOT / other) for other in PACKAGES):
                continue  # a folder of its own (facade/ is not under cli/, but say so anyway)
            dotted = ".".join((package, *parts))
            found[dotted.removesuffix(".__init__")] = path
    return found


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES[name].stem == "__init__"


def _imports(name: str) -> set[str]:
    """Every module ``name`` imports, at any depth, as absolute dotted names.

    ``from X import y`` counts as X.y when that is a module of this project (``from . import
    backend``), else as X (a name defined in X, its ``__init__`` for a package).
    """
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"), filename=str(MODULES[name]))
    package = name if _is_package(name) else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                found.add(submodule if submodule in MODULES else module)
    return found


IMPORTS = {name: _imports(name) for name in MODULES}


def _in(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _layer(name: str) -> str:
    for layer in ("core", "grammar", "cli"):
        if _in(name, f"autograd_cli.{layer}"):
            return layer
    return "top"


def test_the_folders_are_pyprojects_packages():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    package_dir = config["tool"]["setuptools"]["package-dir"]
    assert {folder: package for package, folder in package_dir.items()} == PACKAGES
    assert not (ROOT / "autograd_cli").exists()  # it would shadow the installed package
    # The package list is explicit: a sub-package it leaves out is not installed by `pip install .`
    # (an editable install would still find it, so only this test says so).
    subpackages = {n for n, path in MODULES.items() if path.name == "__init__.py"}
    assert subpackages == set(config["tool"]["setuptools"]["packages"])
    assert not (ROOT / "cli" / "root").exists()


def test_every_folder_has_modules():
    layers = {_layer(name) for name in MODULES}
    assert layers == {"core", "grammar", "cli", "top"}
    assert "autograd_cli.core.tensor" in MODULES
    assert "autograd_cli.grammar.parser" in MODULES


def test_the_scanner_sees_relative_and_function_local_imports():
    # core/api.py imports program_functional only inside functions, relatively.
    assert "autograd_cli.core.program_functional" in IMPORTS["autograd_cli.core.api"]
    assert "autograd_cli.core.errors" in IMPORTS["autograd_cli.grammar.parser"]


@pytest.mark.parametrize("name", sorted(n for n in MODULES if _layer(n) == "core"))
def test_core_imports_no_upper_layer(name):
    banned = ("autograd_cli.grammar", "autograd_cli.cli", "rich", "typer", "click", "lark")
    wrong = sorted(m for m in IMPORTS[name] if any(_in(m, b) for b in banned))
    # The top package is the facade over core and grammar: core may not use it either.
    wrong += sorted(m for m in IMPORTS[name] if m == "autograd_cli")
    assert not wrong, f"{name} imports {wrong}"


@pytest.mark.parametrize("name", sorted(n for n in MODULES if _layer(n) == "grammar"))
def test_grammar_imports_no_cli(name):
    wrong = sorted(
        m
        for m in IMPORTS[name]
        if _in(m, "autograd_cli.cli") or m in ("autograd_cli", "rich", "typer")
    )
    assert not wrong, f"{name} imports {wrong}"


#: The top of core: the plain results the commands and the facade hand on (api), many rows
#: at once (rows), the analyses' settings and documents, explain's text, codegen's check of
#: generated code against the engine.  Nothing else in core builds on them (the evaluators
#: check values and wrt through core/program.py).
TOP_OF_CORE = {
    "autograd_cli.core.api",
    "autograd_cli.core.codegen.check",
    "autograd_cli.core.rows",
    "autograd_cli.core.analysis_docs",
    "autograd_cli.core.explanation",
}


def test_the_command_results_are_the_top_of_core():
    assert TOP_OF_CORE <= set(MODULES)
    users = sorted(
        (n, sorted(IMPORTS[n] & TOP_OF_CORE))
        for n in MODULES
        if IMPORTS[n] & TOP_OF_CORE and _layer(n) == "core" and n not in TOP_OF_CORE
    )
    assert users == []


def test_the_facade_imports_no_cli():
    # autograd_cli (facade/__init__.py) is text in, the library's results out: grammar and
    # core only.  Its __main__ alone starts the command line.
    wrong = sorted(m for m in IMPORTS["autograd_cli"] if _in(m, "autograd_cli.cli"))
    wrong += sorted(m for m in IMPORTS["autograd_cli"] if m in ("rich", "typer", "click"))
    assert not wrong
    assert IMPORTS["autograd_cli.__main__"] == {"autograd_cli.cli.entry"}


def test_the_facade_folder_holds_the_facade_alone():
    # facade/: the facade (__init__) and python -m autograd_cli (__main__); the library's
    # modules (rows, analysis_docs, ...) live in core/, not beside it.
    top = sorted(n for n in MODULES if _layer(n) == "top")
    assert top == ["autograd_cli", "autograd_cli.__main__"]


def test_nothing_in_the_project_imports_the_facade():
    # The top package is the outside world's entry: no module of the project builds on it,
    # so it can change (or grow) without a cycle (cli imports neither it nor its __main__).
    top = {n for n in MODULES if _layer(n) == "top"}
    users = sorted(n for n in MODULES if IMPORTS[n] & top)
    assert users == []


def test_no_upward_import_between_layers():
    # The layers as one graph: top -> cli? no; cli -> grammar -> core; top -> grammar, core.
    allowed = {
        "core": {"core"},
        "grammar": {"grammar", "core"},
        "cli": {"cli", "grammar", "core"},
        "top": {"top", "grammar", "core"},
    }
    wrong = sorted(
        (n, m)
        for n in MODULES
        for m in IMPORTS[n]
        if m in MODULES
        and _layer(m) not in allowed[_layer(n)]
        and n != "autograd_cli.__main__"  # python -m autograd_cli runs the command line
    )
    assert wrong == []


def test_program_is_below_every_evaluator():
    # The checks against a program (values, wrt, order, missing values) live in one module
    # that imports only the errors and the light text and value helpers, so every evaluator
    # can use them.
    assert IMPORTS["autograd_cli.core.program"] <= {
        "__future__",
        "math",
        "re",
        "autograd_cli.core.safetext",
        "autograd_cli.core.values",
        "collections.abc",
        "dataclasses",
        "operator",
        "autograd_cli.core.errors",
        "autograd_cli.core.toposort",
        # resolve_wrt's check of the ops' no_derivative arguments reads the op table, in the
        # function (imported by core.ops first: no cycle)
        "autograd_cli.core.tensor",
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in graph[node]:
                        components.append(sorted(component))
    return components


def test_no_import_cycles_among_core_modules():
    core = {n for n in MODULES if _layer(n) == "core"}
    # The package __init__ counts too: a module taking a name from "autograd_cli.core" itself
    # depends on everything the __init__ loads.
    graph = {n: {m for m in IMPORTS[n] if m in core and m != n} for n in core}
    assert not _cycles(graph)


def _project_cycles() -> list[list[str]]:
    graph = {n: {m for m in IMPORTS[n] if m in MODULES and m != n} for n in MODULES}
    return _cycles(graph)


def test_no_import_cycles_anywhere():
    # Every module of every folder, lazy imports included: no circle of any length (the
    # circle inside cli/ has a test of its own, below).
    inside_cli = [c for c in _project_cycles() if all(_layer(n) == "cli" for n in c)]
    assert [c for c in _project_cycles() if c not in inside_cli] == []


def test_no_import_cycle_inside_cli():
    assert [c for c in _project_cycles() if all(_layer(n) == "cli" for n in c)] == []


def test_the_cycle_finder_finds_cycles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


# ---------------------------------------------------------------------------
# The facade: text in, the library's results out (README, "The library")
# ---------------------------------------------------------------------------


def test_importing_the_package_loads_nothing_else():
    # The facade imports what it needs when called: the command line's start-up stays as it was.
    code = "import sys, autograd_cli; print(sorted(m for m in sys.modules if 'autograd_cli.' in m))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_readme_facade_example():
    sympy = pytest.importorskip("sympy")
    program = ag.parse("y = 3*a**3 - b**2")
    assert program.inputs == ["a", "b"]

    r = ag.evaluate("3*a**3 - b**2", {"a": 2, "b": 6})
    assert float(r.value) == -12.0

    r = ag.grad("3*a**3 - b**2", {"a": 2, "b": 6})
    assert {k: float(v) for k, v in r.grad.items()} == {"a": 36.0, "b": -12.0}
    r = ag.grad(program, {"a": 2, "b": 6}, wrt="b")  # a parsed Program works as well as text
    assert list(r.grad) == ["b"]

    # The fifth derivative of x*sin(x): 5*sin(x) + x*cos(x), and SymPy agrees.
    x, a, b = sympy.symbols("x a b")
    r = ag.grad("sin(x)*x", {"x": 0.7}, order=5)
    closed = 5 * math.sin(0.7) + 0.7 * math.cos(0.7)
    assert math.isclose(float(r.grad["x"]), closed, rel_tol=1e-12)
    assert (
        sympy.simplify(sympy.diff(sympy.sin(x) * x, x, 5) - (5 * sympy.sin(x) + x * sympy.cos(x)))
        == 0
    )

    r = ag.hessian("x**2*y + y**3", {"x": 1.5, "y": -2.0})
    h = r.hessian
    assert [[float(h[i][j]) for j in "xy"] for i in "xy"] == [[-4.0, 3.0], [3.0, -12.0]]

    r = ag.jacobian("[x*y, x + y, sin(x)]", {"x": 2.0, "y": 3.0})
    assert r.jacobian["x"].tolist() == [3.0, 1.0, math.cos(2.0)]
    assert r.jacobian["y"].tolist() == [2.0, 1.0, 0.0]

    d = ag.diff("3*a**3 - b**2", "a")
    assert d.texts() == {"a": "9*a**2"}
    assert sympy.simplify(sympy.sympify(d.texts()["a"]) - sympy.diff(3 * a**3 - b**2, a)) == 0
    d = ag.diff("x**3", "x", order=2, values={"x": 2})
    assert d.derivatives["x"].value == 12.0

    ex = ag.explain("a = x + w; b = w + 1; a * b", {"x": 2, "w": 1}, "w")
    assert ex.gradient == {"w": 5.0}


def test_facade_takes_text_or_a_program_only():
    with pytest.raises(TypeError, match="program's text or a parsed Program"):
        ag.grad(42, {})
    with pytest.raises(AttributeError):
        ag.no_such_function  # noqa: B018
    # The library names its parameters as Python does (the command line says --order)
    with pytest.raises(InputError, match="^order must be 1 or more, not 0$"):
        ag.grad("x**2", {"x": 1}, order=0)
    with pytest.raises(InputError, match="^order needs a scalar output; .* with grad_output$"):
        ag.grad("x**2", {"x": 1}, order=2, grad_output=1.0)
    with pytest.raises(TypeError, match=r"^evaluate\(\) takes"):
        ag.evaluate(42)


def test_core_functions_take_a_program_not_text():
    from autograd_cli.core.explain import explain
    from autograd_cli.core.symbolic import diff

    with pytest.raises(TypeError, match="autograd_cli.diff"):
        diff("x**2", "x")
    with pytest.raises(TypeError, match="autograd_cli.explain"):
        explain("x**2", {"x": 1})
