"""bench/mutate_equivalent.txt stays true to the code: each entry names mutants that exist.

An entry whose line was edited or reformatted no longer matches any mutant, so a survivor it
once explained would be counted as a plain survivor (or, worse, a new mutant on a similar
line could be matched by a stale reason).  Each entry must match a mutant that
bench/mutate.py generates from today's code.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _mutate_module():
    spec = importlib.util.spec_from_file_location("mutate", ROOT / "bench" / "mutate.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("mutate", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_every_equivalent_entry_matches_a_mutant_of_todays_code():
    mutate = _mutate_module()
    # code_of (tokenizing a line) is a pure function of its text, asked again for every
    # (entry, mutant) pair: remembered, the check takes a second instead of half a minute.
    mutate.code_of = functools.cache(mutate.code_of)
    entries = mutate.load_equivalents(mutate.EQUIVALENT_FILE)
    assert entries, "the list is empty or unreadable"
    mutants = [m for target in mutate.TARGETS for m in mutate.find_mutants(target, ROOT)]
    siblings: dict = {}
    for m in mutants:
        siblings.setdefault((m.file, m.text_key), set()).add(m.line)
    stale = []
    for entry in entries:
        # match_equivalent only ever matches an entry of the mutant's own file, and of the
        # same text on several lines only the one nearest the entry's
        same_file = [m for m in mutants if m.file == entry["file"]]
        hits = [
            m
            for m in same_file
            if mutate.match_equivalent(m, [entry], sorted(siblings[(m.file, m.text_key)]))
        ]
        if not hits:  # (one entry may explain the same line written twice, e.g. max and min)
            stale.append(f"{entry['file']}:{entry['line']}: no mutant of today's code")
    assert not stale, "stale entries in bench/mutate_equivalent.txt:\n" + "\n".join(stale)


def test_an_entry_explains_only_the_nearest_line_of_a_change_made_on_several():
    """The same change on two lines may be equivalent on one and real on the other (seed
    271: taylor_mode's reversed slice g[k + 1 :: -1] clamps to g[k - 1 :: -1] where g holds k
    entries, in erfcx's rule, and not in _integral, where g is the whole series); an entry
    near the first explains it and not the second, whatever other entries there are."""
    mutate = _mutate_module()
    line = "y = g[k - 1 :: -1]"

    def at(n):
        return mutate.Mutant("t", "core/f.py", n, 0, "arith", line, line.replace("- 1", "+ 1"))

    entry = {"file": "core/f.py", "line": 662, "rest": at(664).text_key + " # k entries"}
    assert mutate.match_equivalent(at(664), [entry], [294, 664]) == "k entries"
    assert mutate.match_equivalent(at(294), [entry], [294, 664]) is None
    assert mutate.match_equivalent(at(294), [entry]) == "k entries"  # without the lines


# ---------------------------------------------------------------------------
# The JSON report holds no path of the machine it ran on (the results are committed)
# ---------------------------------------------------------------------------

# An absolute path of a POSIX or Windows machine, as test output or options would show one.
_ABSOLUTE = re.compile(r"(?<![\w.~<>])/(?:tmp|work|home|Users|usr|opt|var|root|private)/|[A-Z]:\\")


def _machine_strings() -> list[str]:
    out = {str(ROOT), sys.executable, sys.prefix, sys.base_prefix, tempfile.gettempdir()}
    return sorted(s for s in out if s and s != os.sep)


def test_the_json_report_holds_no_absolute_path(tmp_path):
    mutate = _mutate_module()
    copy = tmp_path / "w0" / "repo"
    traceback = (
        f'File "{copy}/core/ops.py", line 3, in f\n'
        f'File "{sys.prefix}/lib/site-packages/_pytest/main.py", line 1\n'
        f"ModuleNotFoundError: {ROOT}/core"
    )
    m = mutate.Mutant("ops", "core/ops.py", 3, 4, "arith", "    a + b", "    a - b")
    m.status, m.killed_by = "tool-error", f"RuntimeError: {copy}/core/ops.py:3 changed"
    tr = mutate.TargetResult("ops", ["core/ops.py"], ["tests/test_ops_gradcheck.py"])
    tr.mutants, tr.setup_problem = [m], traceback
    tr.deselected = [f"{copy}/tests/test_x.py::test_y"]
    report = mutate.build_report(
        [tr],
        seed=1,
        sample_per_target=40,
        jobs=1,
        wall=1.0,
        pytest_args=["--rootdir", str(copy)],
        env={"SOME_DIR": str(tmp_path)},
        python=mutate.interpreter_version(sys.executable),
        rerun=mutate.relative_to(str(ROOT / "bench" / "results" / "r.json"), ROOT),
        machine_paths=mutate.machine_paths(ROOT, tmp_path, 1, sys.executable),
    )
    text = json.dumps(report)
    for s in _machine_strings() + [str(tmp_path)]:
        assert s not in text, s
    assert not _ABSOLUTE.search(text), _ABSOLUTE.search(text)
    assert "repo" not in report
    # the interpreter by its version, the paths relative to the repository (not deleted)
    assert re.fullmatch(r"\w+ \d+\.\d+\.\d+\S*", report["python"]), report["python"]
    assert report["rerun"] == "bench/results/r.json"
    target = report["targets"]["ops"]
    assert 'File "./core/ops.py", line 3' in target["setup_problem"]
    assert "<python>/lib/site-packages/_pytest/main.py" in target["setup_problem"]
    assert target["deselected_baseline_failures"] == ["./tests/test_x.py::test_y"]
    assert target["mutants"][0]["killed_by"] == "RuntimeError: ./core/ops.py:3 changed"
    assert report["env"] == {"SOME_DIR": "<tmp>"}
    # the code of the mutant is stored as it is
    assert target["mutants"][0]["original"] == "    a + b"


def test_committed_mutation_results_hold_no_absolute_path():
    files = sorted((ROOT / "bench" / "results").glob("mutate-*.json"))
    assert files, "no committed mutation results"
    for path in files:
        text = path.read_text(encoding="utf-8")
        report = json.loads(text)
        assert "repo" not in report, path.name
        assert not os.path.isabs(report["python"]), path.name
        hit = _ABSOLUTE.search(text)
        assert hit is None, f"{path.name}: {text[max(0, hit.start() - 60) : hit.end() + 60]!r}"
        for s in _machine_strings():
            assert s not in text, f"{path.name} holds {s}"


def test_machine_paths_are_absolute_even_for_a_bare_interpreter_name(tmp_path):
    # ``--python python`` names no folder: "python" or "." must never be replaced in the text
    mutate = _mutate_module()
    paths = mutate.machine_paths(ROOT, tmp_path, 2, "python")
    assert paths and all(os.path.isabs(p) and p != os.sep for p in paths), sorted(paths)
    assert paths[str(ROOT)] == "." and paths[str(tmp_path / "w1" / "repo")] == "."
    text = "tests/test_x.py::test_y[python] ./core/ops.py"
    assert mutate.scrub(text, paths) == text


# ---------------------------------------------------------------------------
# A failing baseline stops the run (exit 2, the target and the test named), never a skip
# ---------------------------------------------------------------------------


class _FailingBaseline:
    """A stand-in for mutate.Copy: imports fine, every pytest run fails in one test."""

    runs: list = []

    def __init__(self, repo, root, files, python, env=None):
        self.tree = ROOT  # the mutants are found in today's code

    def check_imports(self, modules):
        return []

    def pytest(self, tests, timeout, extra):
        self.runs.append(list(tests))
        return "killed", 0.5, "tests/test_cbrt_exact.py::test_cbrt_is_exact", "1 failed"


def test_a_failing_baseline_is_an_error_naming_the_target_and_the_test(monkeypatch, capsys):
    mutate = _mutate_module()
    monkeypatch.setattr(mutate, "Copy", _FailingBaseline)
    monkeypatch.setattr(mutate, "repo_files", lambda repo: [])
    _FailingBaseline.runs = []
    code = mutate.main(["--target", "limits", "--target", "ops", "--sample", "1", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert "mutate: error: target limits: the baseline fails" in err, err
    assert "tests/test_cbrt_exact.py::test_cbrt_is_exact fails" in err, err
    # the run stopped there: no other target's baseline, no mutant
    assert _FailingBaseline.runs == [mutate.TARGETS["limits"]["tests"]]


# ---------------------------------------------------------------------------
# What a mutant's pytest run counts as
# ---------------------------------------------------------------------------


class _Runs:
    """Stands for a Copy: its ``python`` is a script that prints ``text`` and exits ``code``
    whatever it is asked (pytest's own exit codes)."""

    def __init__(self, tmp_path, code: int, text: str):
        script = tmp_path / "python"
        script.write_text(f"#!/bin/sh\ncat <<'END'\n{text}\nEND\nexit {code}\n")
        script.chmod(0o755)
        self.python, self.tree, self.env = str(script), tmp_path, dict(os.environ)


@pytest.mark.parametrize(
    "code, text, status, by",
    [
        (1, "FAILED tests/test_a.py::test_b - assert 1 == 2", "killed", "tests/test_a.py::test_b"),
        # the package no longer imports: conftest.py imports it (the baseline ran this command)
        (
            4,
            "ImportError while loading conftest '/x/tests/conftest.py'.\nE   TypeError: no",
            "error",
            "tests/conftest.py (import)",
        ),
        (
            4,
            "ERROR: usage: pytest [options]\npytest: error: unrecognized arguments",
            "tool-error",
            "",
        ),
        (3, "INTERNALERROR> Traceback", "tool-error", ""),
        (0, "3 passed", "survived", ""),
    ],
)
def test_a_mutant_that_breaks_the_import_is_killed_and_a_usage_error_is_not(
    tmp_path, code, text, status, by
):
    mutate = _mutate_module()
    got, _, killed_by, _ = mutate.Copy.pytest(_Runs(tmp_path, code, text), ["tests/x.py"], 30, [])
    assert (got, killed_by) == (status, by)
