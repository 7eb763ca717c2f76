"""bench/run.py (the benchmark suite of issue 12) produces a well-formed table.

Never asserts a time: one tiny, fast run of two rows (in-process, NumPy references, no
peers) checks the Markdown file's shape, and the rating logic is checked on made-up numbers.
"""

from __future__ import annotations

import importlib.util
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "run.py"


def _module():
    spec = importlib.util.spec_from_file_location("bench_run", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _table(text: str) -> list[list[str]]:
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    return [[c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]] for line in rows]


def test_tiny_run_writes_a_well_formed_table(tmp_path):
    out = tmp_path / "bench.md"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--sizes", "tiny", "--only", "3,7", "--no-peers"]
        + ["--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = out.read_text(encoding="utf-8")
    assert text in proc.stdout  # printed and written alike
    assert "Versions: python " in text and "numpy " in text and "Date: " in text
    table = _table(text)
    header, rule, body = table[0], table[1], table[2:]
    assert header[:5] == ["#", "benchmark", "size", "implementation", "median"]
    assert "ratio" in header and "target" in header and "result" in header
    assert all(set(c) <= set("-: ") for c in rule) and len(rule) == len(header)
    assert all(len(r) == len(header) for r in body)
    numbered = [r for r in body if r[0]]
    assert [r[0] for r in numbered] == ["3", "7"]
    col = {name: i for i, name in enumerate(header)}
    for r in numbered:
        assert re.fullmatch(r"met|missed by \d+\.\d\dx", r[col["result"]]), r
        assert r[col["agrees"]] == "yes"
        assert re.fullmatch(r"\*\*\d+\.\d\dx\*\*", r[col["ratio"]]), r
    refs = [r for r in body if "(*ref*)" in r[col["implementation"]]]
    assert len(refs) == 2 and all(r[col["ratio"]] == "1.00x" for r in refs)
    assert "skipped: torch: peers disabled" in text


def test_rating_and_failure():
    run = _module()
    row = run.Row(3, "t", "s")
    row.line(who="ours", samples=[1.2, 1.0, 1.1], ours=True)
    row.line(who="ref", samples=[1.0, 1.0, 1.0], reference=True)
    assert row.status() == "met"  # 1.1 <= 1.1
    row.lines[0].samples = [2.2]
    assert row.status() == "missed by 2.00x"
    row.failed = "disagrees with NumPy"
    assert row.status().startswith("FAILED")
    bad = run.Row(7, "t", "s")
    run.agree(bad, [(run.np.array([1.0, 2.0]), run.np.array([1.0, 2.1]))], 1e-12, "NumPy")
    assert bad.failed == "disagrees with NumPy"
    absent = run.Row(4, "t", "s")
    absent.line(who="ours", samples=[1.0], ours=True)
    absent.line(who="PyTorch", missing="torch: not installed", reference=True)
    assert absent.status() == "not rated (torch: not installed)"
    assert "| 4 |" in run.render(
        [absent],
        {
            "date": "d",
            "mode": "tiny",
            "command": "c",
            "versions": [("python", "3")],
            "machine": "m",
            "commit": "x",
            "skipped": [],
            "total": 0.0,
        },
    )
