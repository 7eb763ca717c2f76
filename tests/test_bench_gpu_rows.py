"""bench/gpu_rows.py (``bench/run.py --gpu``, issue 25) and bench/gpu_check.sh, without a GPU.

Never asserts a time.  Where CuPy is missing or CUDA has no device, every GPU row is a note
("not run: no GPU (...)") and the run succeeds; ``--gpu-dry`` runs every row's code end to
end (ours over the strict CuPy stand-in, the hand-written CuPy floor over it too, PyTorch and
JAX on the CPU where installed) through bench/gpu_check.sh's stand-in mode, which also shows
that the script prints a failing test's name and message and keeps its logs; and a peer whose
numbers differ, or an array in the wrong dtype, marks the row FAILED.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from test_strict_backend import NO_DEVICE_CUPY  # a CuPy whose CUDA has no device

from autograd_cli.core import backend

ROOT = pathlib.Path(__file__).resolve().parent.parent
RUN = ROOT / "bench" / "run.py"
GPU_CHECK = ROOT / "bench" / "gpu_check.sh"
ROWS = ["G1", "G2", "G3", "G4", "G5"]


def _modules():
    """bench/run.py as a module (as tests/test_bench_run.py loads it) and bench/gpu_rows.py."""
    spec = importlib.util.spec_from_file_location("bench_run_gpu", RUN)
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench  # dataclasses look their module up there
    spec.loader.exec_module(bench)
    spec = importlib.util.spec_from_file_location("gpu_rows", RUN.parent / "gpu_rows.py")
    gpu_rows = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_rows)
    return bench, gpu_rows


def _table(text: str) -> dict:
    """Row number -> the table's lines of that row (cells stripped)."""
    rows: dict = {}
    number = None
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith("| #"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            if set("".join(cells)) <= set("-: "):
                continue
            number = cells[0] or number
            rows.setdefault(number, []).append(cells)
    return rows


def _run_gpu_rows(tmp_path, more: list, timeout: int) -> tuple:
    """``bench/run.py --gpu --no-peers`` with ``tmp_path`` (the fake packages made there)
    first on PYTHONPATH: its Markdown table and the finished process (exit 0 checked)."""
    paths = [str(tmp_path), os.environ.get("PYTHONPATH")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, paths)))
    out = tmp_path / "gpu.md"
    proc = subprocess.run(
        [sys.executable, str(RUN), "--gpu", *more, "--no-peers", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out.read_text(encoding="utf-8"), proc


@pytest.mark.parametrize("cupy", ["raise ImportError('no CuPy in this test')", NO_DEVICE_CUPY])
def test_without_a_gpu_each_row_says_not_run(tmp_path, cupy):
    (tmp_path / "cupy").mkdir()
    (tmp_path / "cupy" / "__init__.py").write_text(cupy)
    text, proc = _run_gpu_rows(tmp_path, [], timeout=120)
    why = "cupy not importable: no CuPy" if "ImportError" in cupy else "CUDA: RuntimeError: cuda"
    table = _table(text)
    assert list(table) == ROWS  # the GPU rows only: --only names no CPU row
    for number, lines in table.items():
        assert f"not rated (not run: no GPU ({why}" in lines[0][8], lines[0]
        assert all(cell.startswith("skipped: not run: no GPU") for cell in (r[4] for r in lines))
        assert f"- Row {number}: not run: no GPU ({why}" in text
    assert "**FAILED" not in text and "Traceback" not in proc.stderr


# A CuPy "with a device" made of the strict stand-in: the real (not dry) path of every row
FAKE_CUPY = """
import sys
sys.path.insert(0, {tests!r})
import strict_xp
__version__ = "0+strict_xp"
class _Runtime:
    @staticmethod
    def getDeviceCount():
        return 1
    @staticmethod
    def getDeviceProperties(i):
        return {{"name": b"Fake GPU (strict_xp)"}}
    @staticmethod
    def runtimeGetVersion():
        return 0
class cuda:
    runtime = _Runtime
def __getattr__(name):
    return getattr(strict_xp.xp, name)
"""
FAKE_CUPYX = """
import sys
sys.path.insert(0, {tests!r})
import strict_xp
_modules = strict_xp.cupyx_modules()
sys.modules.update({{k: v for k, v in _modules.items() if k != "cupyx"}})
scipy = _modules["cupyx.scipy"]
scatter_add = _modules["cupyx"].scatter_add
"""


def test_the_real_path_over_a_cupy_made_of_the_stand_in(tmp_path):
    """``--gpu`` (not dry) where "CuPy" imports and reports a device: the probe, the device
    note, the hand-written floor through ``cupy``, the cold start's CuPy floor and the CLI's
    ``--device gpu`` in a subprocess all run, and every row agrees."""
    for name, source in (("cupy", FAKE_CUPY), ("cupyx", FAKE_CUPYX)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(source.format(tests=str(ROOT / "tests")))
    text, proc = _run_gpu_rows(tmp_path, ["--sizes", "tiny"], timeout=300)
    table = _table(text)
    assert list(table) == ROWS
    for number, lines in table.items():
        head = lines[0]
        assert head[9] == "yes" and "(dry run)" not in head[2], head
        assert re.fullmatch(r"[0-9.]+ (s|ms|µs)", head[4]), head  # ours was timed
        assert re.search(rf"- Row {number}: checked .*GPU: Fake GPU \(strict_xp\); CuPy 0", text)
        want = "no target" if number == "G5" else "not rated (torch: peers disabled (--no-peers))"
        assert head[8] == want, head
    floors = [r for lines in table.values() for r in lines if "CuPy" in r[3]]
    assert [r[4].startswith("skipped") for r in floors] == [False, False, False, True, False]
    assert "DRY RUN" not in text and "**FAILED" not in text


def test_the_dry_run_through_gpu_check_runs_every_row(tmp_path):
    """bench/gpu_check.sh's stand-in mode with BENCH=1: a passing test file, then
    ``bench/run.py --gpu-dry``, whose table comes back under the logs folder."""
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    (tmp_path / "test_passes.py").write_text("def test_passes():\n    assert True\n")
    logs = tmp_path / "logs"
    env = dict(os.environ, PYTHON=sys.executable, GPU_CHECK_STAND_IN="1", BENCH="1", POINTS="0")
    env.update(GPU_CHECK_TESTS=str(tmp_path / "test_passes.py"), GPU_CHECK_LOGS=str(logs))
    proc = subprocess.run(
        [bash, str(GPU_CHECK)], capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert proc.stdout.splitlines()[-1] == "gpu_check: ok"
    text = (logs / "gpu_table.md").read_text(encoding="utf-8")
    assert text in proc.stdout and (logs / "gpu_tests.xml").exists()
    table = _table(text)
    assert list(table) == ROWS
    for number, lines in table.items():
        head = lines[0]
        # ran, agreed, not rated: a dry run has no target; without PyTorch (the rows'
        # reference) a row says that instead
        rated = {"no target"} | (
            set() if importlib.util.find_spec("torch") else {"not rated (torch: not installed)"}
        )
        assert head[8] in rated and head[9] == "yes", head
        assert head[2].endswith("(dry run)") and "[stand-in]" in head[3]
        assert re.fullmatch(r"[0-9.]+ (s|ms|µs)", head[4]), head  # ours was timed
        assert re.search(rf"- Row {number}: checked .*DRY RUN \(--gpu-dry\)", text)
    timed = [r[3] for lines in table.values() for r in lines if not r[4].startswith("skipped")]
    for peer, mark in (("torch", "PyTorch"), ("jax", "JAX")):
        if importlib.util.find_spec(peer) is not None:  # the peer's code ran (on the CPU)
            assert sum(mark in who for who in timed) == 5, (peer, timed)
    hand = [who for who in timed if who.startswith("CuPy by hand")]
    assert len(hand) == 3 and all(who.endswith("[stand-in]") for who in hand)  # G1, G2, G3
    assert "vs float64 NumPy at 1000 points" in text and "vs closed form" in text


def test_gpu_check_prints_the_failing_tests_and_keeps_the_log(tmp_path):
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    (tmp_path / "test_fails.py").write_text(
        "import pytest\n"
        "def test_ok():\n    pass\n"
        "def test_nested():\n    assert [[1.0]] == pytest.approx([[1.0]], rel=1e-12)\n"
        "def test_value():\n    assert 1 == 2, 'one element differs'\n"
    )
    logs = tmp_path / "logs"
    env = dict(os.environ, PYTHON=sys.executable, GPU_CHECK_STAND_IN="1", POINTS="0")
    env.update(GPU_CHECK_TESTS=str(tmp_path / "test_fails.py"), GPU_CHECK_LOGS=str(logs))
    proc = subprocess.run(
        [bash, str(GPU_CHECK)], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 1
    out = proc.stdout
    # the test ids as pytest names them, relative to the rootdir it picks (the test file's
    # folder, or an ancestor where pytest runs under coverage's subprocess patch)
    assert re.search(r"gpu_check: failure: \S*test_fails\.py::test_nested\n", out), out
    assert "TypeError: pytest.approx() does not support nested data structures" in out
    assert re.search(r"gpu_check: failure: \S*test_fails\.py::test_value\n", out), out
    assert "AssertionError: one element differs" in out and "test_ok" not in out
    assert f"gpu_check: logs in {logs}\n" in out
    assert "2 failed, 1 passed" in (logs / "gpu_tests.log").read_text(encoding="utf-8")
    assert proc.stderr.startswith("gpu_check: FAIL: ") and proc.stderr.count("\n") == 1
    assert "2 failed, 1 passed" in proc.stderr and str(logs / "gpu_tests.log") in proc.stderr


@pytest.fixture
def dry(monkeypatch):
    """bench/run.py, bench/gpu_rows.py's dry rows and no peers, the stand-in installed for
    this test only."""
    monkeypatch.setattr(backend, "_array_module", backend._array_module)  # put back after
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in ("cupyx", "cupyx.scipy", "cupyx.scipy.special"):
        monkeypatch.setitem(sys.modules, name, sys.modules.get(name))
    bench, gpu_rows = _modules()
    return bench, gpu_rows, bench.Peers(enabled=False), gpu_rows.rows(bench, "full", dry=True)


def test_a_peer_that_disagrees_fails_the_row(dry, monkeypatch):
    bench, gpu_rows, peers, found = dry
    row = found["G1"]({}, peers, "")
    assert row.failed is None and "vs cupy: max abs err 0.0e+00" in row.check
    assert row.size == "10^3 points, float32, best of 2 (dry run)"
    wrong = [lambda v, g, h: (v, g * (1 + 1e-3), h), lambda v, g, h: (v, g, h.astype(np.float64))]
    whys = ["disagrees with cupy", "cupy returned float64, not a host float32 array"]
    for spoil, why in zip(wrong, whys):
        spoilt = lambda cp, x, y, s=spoil: s(*gpu_rows.ew_numpy(x, y))  # noqa: E731
        monkeypatch.setattr(gpu_rows, "ew_cupy", spoilt)
        row = found["G1"]({}, peers, "")
        assert row.failed is not None and row.failed.startswith(why), row.failed
        assert row.status().startswith("FAILED")
    monkeypatch.setattr(gpu_rows, "layer_cupy", lambda cp, W, x, b: (np.asarray(0.0), W, x, b))
    assert found["G3"]({}, peers, "").failed.startswith("disagrees with cupy")


def test_rows_registers_its_targets_and_imports_nothing_until_a_row_runs():
    bench, gpu_rows = _modules()
    found = gpu_rows.rows(bench, "full")
    assert list(found) == ROWS and bench.TARGETS["G1"] == 1.0 and bench.TARGETS["G5"] is None
    assert "lead kept" in bench.TARGET_TEXT["G4"]
    gpu_rows.rows(bench, "full", dry=True)
    assert bench.TARGETS["G1"] is None and bench.TARGET_TEXT["G1"] == "dry run: not rated"
    assert os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE") == "false"
