"""Every error ``kind`` the code can produce is in the documented table, with the right exit code.

SPEC: "Every error `kind` is listed, with its exit code, in the README's table"; the table
is the README's, under "Exit codes and error kinds".  The kinds
are found in the code, not listed here: the ``kind`` of every ``AutogradCliError`` subclass
(all modules of the package imported), plus the kinds the command line and batch write
themselves (``Failure("io", ...)`` in cli/status.py's classifier, ``LineError("bad_line",
...)``, ``RowError("unsupported", ...)``, ``error_doc(n, "limit", ...)``).  Then each kind's exit
code is checked by raising it through the real command line.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import signal
from pathlib import Path

import pytest

import autograd_cli
from autograd_cli.core.errors import AutogradCliError, InputError, ParseError

ROOT = Path(__file__).resolve().parent.parent
TABLE_PAGE = ROOT / "README.md"  # SPEC: the README's table of error kinds
SOURCES = [p for d in ("cli", "core", "grammar") for p in sorted((ROOT / d).rglob("*.py"))]

#: patterns that write a kind directly (not through an error class's ``kind`` attribute)
EMITTERS = [
    re.compile(r'\bFailure\(\s*"(\w+)"'),  # cli/status.py's classify: Failure("io", ...)
    re.compile(r'\b_?(?:LineError|RowError)\(\s*"(\w+)"'),
    re.compile(r'\b_?error_doc\(\s*[\w.]+,\s*"(\w+)"'),
    re.compile(r'error_json\(\s*"(\w+)"'),
    re.compile(r'"kind":\s*"(\w+)"'),
]

#: kinds only a batch record carries (the run's exit code is then 1)
BATCH_ONLY = {"bad_line"}


def _all_error_classes() -> list[type]:
    packages = [autograd_cli] + [
        importlib.import_module(f"autograd_cli.{name}") for name in ("core", "cli", "grammar")
    ]
    for package in packages:
        for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if not module.name.endswith("__main__"):
                importlib.import_module(module.name)
    found, todo = [], [AutogradCliError]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            found.append(sub)
            todo.append(sub)
    return found


def class_kinds() -> dict:
    """kind -> the error class that declares it (a class attribute of its own)."""
    out = {}
    for cls in _all_error_classes():
        if "kind" in vars(cls) and isinstance(vars(cls)["kind"], str):
            out.setdefault(vars(cls)["kind"], cls)
    return out


def emitted_kinds() -> set:
    kinds = set()
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        for pattern in EMITTERS:
            kinds.update(pattern.findall(text))
    # "kind": "define"/"local"/"accumulate" are explain's step kinds, not errors
    return kinds - {"define", "local", "accumulate"}


def readme_table() -> dict:
    """kind -> set of exit codes, from the `| kind | exit | meaning |` table of
    the README."""
    text = TABLE_PAGE.read_text(encoding="utf-8")
    section = text[text.index("## Exit codes and error kinds") :]
    section = section[: section.index("\n## ", 1)]
    table = section[section.index("| kind | exit | meaning |") :]
    rows = {}
    for line in table.splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        kind = cells[0].strip("`")
        rows[kind] = {int(n) for n in re.findall(r"\d+", cells[1])}
    return rows


def all_kinds() -> set:
    return set(class_kinds()) | emitted_kinds()


# ---- the table against the code ------------------------------------------------------------------


def test_the_search_finds_the_kinds_we_know():
    """A guard on the search itself: if a pattern stops matching, this fails."""
    kinds = all_kinds()
    for kind in ("syntax", "usage", "unsupported", "gradcheck", "bad_line", "io", "internal"):
        assert kind in kinds, kind
    assert "interrupted" in kinds and "limit" in kinds


def test_the_abstract_base_kind_is_never_raised():
    """AutogradCliError's own kind ("error") is not in the table: nothing raises the base."""
    assert AutogradCliError.kind == "error"
    for path in SOURCES:
        assert not re.search(r"raise AutogradCliError\(", path.read_text(encoding="utf-8")), path


def test_every_kind_is_in_the_readme_table():
    table = readme_table()
    missing = sorted(all_kinds() - {"error"} - set(table))
    assert not missing, f"kinds missing from the table in {TABLE_PAGE.name}: {missing}"


def test_the_readme_table_lists_no_stale_kind():
    stale = sorted(set(readme_table()) - all_kinds())
    assert not stale, f"{TABLE_PAGE.name} lists kinds the code never produces: {stale}"


def test_class_kinds_exit_codes_in_the_table():
    """InputError and its subclasses are exit 2, every other error class exit 1."""
    table = readme_table()
    for kind, cls in class_kinds().items():
        if kind == "error":
            continue
        expected = 2 if issubclass(cls, InputError) else 1
        assert table[kind] == {expected}, (kind, cls, table[kind])


# ---- the exit codes, through the real command line -----------------------------------------------


def _instance(cls):
    if issubclass(cls, ParseError):
        return cls("bad", line=1, column=2, context="x +\n   ^")
    return cls(f"a {cls.__name__} for the test")


@pytest.mark.parametrize("kind", sorted(k for k in class_kinds() if k != "error"))
def test_each_error_class_exits_as_the_table_says(cli, monkeypatch, kind):
    from autograd_cli.core import api

    cls = class_kinds()[kind]
    exc = _instance(cls)

    def fail(*args, **kwargs):
        raise exc

    monkeypatch.setattr(api, "eval_of", fail)
    r = cli("eval", "x", "--x", "1", "--json")
    assert r.json["error"]["kind"] == kind
    assert {r.code} == readme_table()[kind]


def _raise(exc):
    def fail(*args, **kwargs):
        raise exc

    return fail


@pytest.mark.parametrize(
    "kind, make",
    [
        ("io", lambda: OSError(2, "No such file or directory", "f.txt")),
        ("limit", lambda: MemoryError()),
        ("limit", lambda: RecursionError()),
        ("internal", lambda: ZeroDivisionError("a bug")),
        ("interrupted", lambda: KeyboardInterrupt()),
    ],
)
def test_kinds_the_command_line_writes_exit_as_the_table_says(cli, monkeypatch, kind, make):
    from autograd_cli.core import api

    monkeypatch.delenv("AUTOGRAD_CLI_DEBUG", raising=False)
    monkeypatch.setattr(api, "eval_of", _raise(make()))
    r = cli("eval", "x", "--x", "1", "--json")
    assert r.json["error"]["kind"] == kind
    assert r.code in readme_table()[kind]


@pytest.mark.parametrize("signum, code", [("SIGTERM", 143), ("SIGHUP", 129)])
def test_interrupted_by_a_signal(cli, monkeypatch, signum, code):
    from autograd_cli.cli.status import Terminated
    from autograd_cli.core import api

    if not hasattr(signal, signum):
        pytest.skip(f"no {signum} here")
    monkeypatch.setattr(api, "eval_of", _raise(Terminated(getattr(signal, signum))))
    r = cli("eval", "x", "--x", "1", "--json")
    assert r.json["error"]["kind"] == "interrupted"
    assert r.code == code and code in readme_table()["interrupted"]


def test_usage_exits_as_the_table_says(cli):
    r = cli("eval", "x", "--x", "1", "--format", "nope", "--json")
    assert r.json["error"]["kind"] == "usage"
    assert {r.code} == readme_table()["usage"]
    r = cli("eval", "--json")  # Click's own usage error: a missing argument
    assert r.json["error"]["kind"] == "usage"
    assert {r.code} == readme_table()["usage"]


def test_batch_only_kinds_exit_as_the_table_says(cli, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text('{"expr": "x", "vars": {"x": 1}}\nnot json\n')
    r = cli("batch", str(path), "--no-progress")
    records = [__import__("json").loads(line) for line in r.out.splitlines()]
    assert records[1]["error"]["kind"] == "bad_line"
    for kind in BATCH_ONLY:
        assert {r.code} == readme_table()[kind]


def test_exit_code_mapping_in_main_matches_status():
    """cli/main.py maps InputError to USAGE_ERROR (2) and other errors to EVALUATION_ERROR (1)."""
    from autograd_cli.cli.status import ExitCode

    table = readme_table()
    assert ExitCode.USAGE_ERROR == 2 and table["usage"] == {2}
    assert ExitCode.EVALUATION_ERROR == 1 and table["evaluation"] == {1}
    assert {ExitCode.HANGUP, ExitCode.INTERRUPTED, ExitCode.TERMINATED} == table["interrupted"]
