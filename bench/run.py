"""The benchmark suite of issue 12: nine rows, each autograd-cli against a reference.

Not a test: run it by hand with the project installed, e.g.

    python bench/run.py                 # full sizes (a few minutes), bench/results/latest.md
    python bench/run.py --quick         # smaller sizes, fewer repeats (under a minute)
    python bench/run.py --only 3,7 --sizes tiny --out /tmp/t.md

Every row times our side and the row's reference (and peers that are installed: PyTorch,
JAX, HIPS autograd, qalc; an absent one is a note, not an error), prints a Markdown table
(median, min-max, ratio = time / the reference's time, the issue's target and whether it is
met) and writes it to ``--out``.  Each row also checks that our result agrees with the
reference (or with a closed form) at the points timed; a mismatch marks the row FAILED, so
the suite cannot time a wrong computation.

Rows:

1. cold start of ``autograd-cli grad "3*a**3-b**2" --a 2 --b 6`` (the console script next to
   ``sys.executable``) vs the floor F: ``python -c "import numpy, lark, typer, rich.console"``;
2. ``autograd-cli batch`` of an N-row CSV (x,y) to JSONL, the whole command, vs Polars by
   hand (``pl.read_csv``, the value and the hand-written derivatives as Polars expressions,
   ``write_ndjson`` of the same fields; a bench-only dependency, not rated where absent),
   and vs ``numpy.loadtxt`` merely reading the file (rated too), each in a subprocess;
3. vectorised value+gradient at N points in process (``autograd_cli.core.rows.evaluate_group``,
   the batch command's path) vs hand-written NumPy;
4. per-node overhead of the Tensor API on a chain of N scalar ops (forward+backward) vs
   PyTorch eager;
5. an N-deep ``sin(sin(...(x)...))`` as text to gradient (``autograd_cli.grad``) vs PyTorch
   eager building and differentiating the same chain;
6. the Hessian of ``sum(sin(x[:-1])*x[1:]) + sum(x**4)`` (``autograd_cli.hessian``) vs
   ``torch.autograd.functional.hessian(f, x, vectorize=True)``;
7. ``sum(tanh(W@x+b))`` with W n x n: value and gradient w.r.t. W, x, b vs hand NumPy;
8. peak memory (max RSS) of ``autograd-cli batch`` over N rows vs a hand NumPy script
   (``numpy.loadtxt``, value and gradient, written with ``tofile``);
9. ``autograd-cli batch --engine dask`` on a local Dask cluster (one worker process per
   core) vs the local engine, the whole command, over the same N-row CSV (issue 15): the
   ratio, and the peak memory (VmHWM) of each worker, of the client and of the local run;
   the two outputs must be the same bytes.  Without Dask installed the row is not rated;
10. cold start of ``autograd-cli --version`` and ``autograd-cli --help`` vs the floor F of
    row 1 (rated by the slower of the two); a run that imports NumPy or the op table
    (``autograd_cli.core``), seen with ``-X importtime``, marks the row FAILED;
11-13. issue 26's ``codegen`` rows (bench/codegen_rows.py): generated NumPy value + gradient
    at N points vs hand NumPy; one generated C scalar call (``cc -O2``, through ctypes) vs
    ``autograd_cli.grad`` in process; the code of the 6th derivative of the nested sine vs
    SymPy's ``diff`` + ``lambdify`` (characters and seconds).

Disk: the full mode's rows 8 and 9 each write a 10^7-row CSV (~400 MB) and JSONL output
(~1 GB; row 9 two of them) into a temporary folder (``TMPDIR``), removed at the end.

Every library runs on ``--threads`` threads (default 1, set before NumPy and PyTorch load),
which keeps ratios steady on small shared machines.  Timings use ``time.perf_counter``; our
side and the reference are interleaved repeat by repeat so that drift in the machine's load
hits both.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import importlib
import importlib.metadata
import importlib.util
import json
import math
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field


def _threads_from_argv(argv) -> int:
    """``--threads N`` must act before NumPy and PyTorch load their thread pools."""
    for i, arg in enumerate(argv):
        if arg == "--threads" and i + 1 < len(argv):
            return int(argv[i + 1])
        if arg.startswith("--threads="):
            return int(arg.split("=", 1)[1])
    return 1


# Set only when run as a script: importing this module (tests/test_bench_run.py) changes nothing.
THREADS = _threads_from_argv(sys.argv[1:]) if __name__ == "__main__" else 0
if THREADS > 0:
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = str(THREADS)

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "results", "latest.md")

BATCH_EXPR = "x*sin(y)+y**2"
HESSIAN_EXPR = "sum(sin(x[:-1])*x[1:]) + sum(x**4)"
LAYER_EXPR = "sum(tanh(W@x+b))"

# Sizes and repeats per mode.  "tiny" exists for the test (seconds in all).
SIZES = {
    "full": {
        "cold_repeat": 11,
        "batch_rows": 10**6,
        "batch_repeat": 3,
        "vec_points": 10**6,
        "vec_repeat": 11,
        "chain_nodes": 10**4,
        "chain_repeat": 9,
        "text_depth": 10**5,
        "text_repeat": 3,
        "hess_n": 1000,
        "hess_repeat": 3,
        "layer_n": 1000,
        "layer_repeat": 15,
        "mem_rows": 10**7,
        "dask_rows": 10**7,
        "verify_rows": 300,
        "codegen_points": 10**6,
        "codegen_repeat": 15,
        "c_repeat": 9,
        "deriv_order": 6,
        "sympy_timeout": 120,
    },
    "quick": {
        "cold_repeat": 5,
        "batch_rows": 10**5,
        "batch_repeat": 2,
        "vec_points": 10**6,
        "vec_repeat": 5,
        "chain_nodes": 10**4,
        "chain_repeat": 3,
        "text_depth": 10**4,
        "text_repeat": 2,
        "hess_n": 200,
        "hess_repeat": 5,
        "layer_n": 1000,
        "layer_repeat": 7,
        "mem_rows": 10**6,
        "dask_rows": 10**6,
        "verify_rows": 100,
        "codegen_points": 10**6,
        "codegen_repeat": 7,
        "c_repeat": 5,
        "deriv_order": 3,
        "sympy_timeout": 60,
    },
    "tiny": {
        "cold_repeat": 1,
        "batch_rows": 1000,
        "batch_repeat": 1,
        "vec_points": 1000,
        "vec_repeat": 1,
        "chain_nodes": 200,
        "chain_repeat": 1,
        "text_depth": 200,
        "text_repeat": 1,
        "hess_n": 20,
        "hess_repeat": 1,
        "layer_n": 20,
        "layer_repeat": 1,
        "mem_rows": 1000,
        "dask_rows": 1000,
        "verify_rows": 20,
        "codegen_points": 1000,
        "codegen_repeat": 1,
        "c_repeat": 1,
        "deriv_order": 2,
        "sympy_timeout": 60,
    },
}

# The targets: ratio (ours / reference) at most this.  None: no target set.
# In-process rows: one timed sample lasts at least this long (several calls when fast).
MIN_SAMPLE = 0.05

TARGETS = {1: 1.0, 2: 1.0, 3: 1.1, 4: 1.0, 5: 1.5, 6: 1.0, 7: 1.1, 8: 1.0, 9: None, 10: 0.4}
TARGETS.update({11: 1.05, 12: 0.05, 13: None})  # issue 26 (bench/codegen_rows.py)
TARGETS.update({14: None, 15: 1.0, 16: None, 17: None, 18: None})  # issue 28 (sparse_rows.py)
TARGET_TEXT = {
    1: "≤ 1.0x F",
    2: "≤ 1.0x Polars by hand, and ≤ 1.0x numpy.loadtxt",
    3: "≤ 1.1x",
    4: "≤ PyTorch (1.0x)",
    5: "≤ 1.5x PyTorch eager (issue 25)",
    6: "≤ torch hessian, vectorize=True (1.0x)",
    7: "≤ 1.1x",
    8: "≤ hand NumPy (1.0x)",
    9: "none set (issue 15 asks for the ratio and the memory per worker)",
    10: "≤ 0.4x F, no NumPy, no op table",
    11: "≤ 1.05x hand NumPy (each expression)",
    12: "≥ 20x faster than in-process grad (≤ 0.05x)",
    13: "none set (issue 26 asks for the sizes, vs SymPy's)",
    14: "<= 5 s, <= 3 colors (issue 28)",
    15: "equal to 1e-12 and faster: <= 1.0x",
    16: "<= 3 s, 3 colors",
    17: "side by side (issue 28)",
    18: "the chain at 10^5 in <= 30 s (issue 28): out of reach, see the note",
}


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------


@dataclass
class Line:
    """One implementation's measurements in a row (seconds, or MiB when ``unit`` says so)."""

    who: str
    samples: list = field(default_factory=list)
    unit: str = "s"  # "s", "s/node", "MiB" or "chars"
    missing: str | None = None  # why there is no measurement (a peer not installed)
    reference: bool = False
    ours: bool = False
    #: ours is also rated against this line (besides the reference): at most this ratio
    target: float | None = None

    @property
    def median(self):
        return statistics.median(self.samples) if self.samples else None


@dataclass
class Row:
    number: int
    title: str
    size: str
    lines: list = field(default_factory=list)
    check: str = ""  # how the results were compared, and how close they were
    failed: str | None = None  # a mismatch or an error: the row is FAILED
    notes: list = field(default_factory=list)

    def line(self, **kw) -> Line:
        item = Line(**kw)
        self.lines.append(item)
        return item

    @property
    def reference(self):
        return next((x for x in self.lines if x.reference), None)

    @property
    def ours(self):
        return next((x for x in self.lines if x.ours), None)

    def ratio(self, line: Line):
        ref = self.reference
        if ref is None or ref.median is None or line.median is None or ref.median <= 0:
            return None
        return line.median / ref.median

    def status(self) -> str:
        if self.failed:
            return f"FAILED: {self.failed}"
        # A row with several lines of ours (row 10: --version and --help) is rated by the worst.
        ratios = [self.ratio(x) for x in self.lines if x.ours]
        ratio = None if not ratios or None in ratios else max(ratios)
        if ratio is None:
            ref = self.reference
            why = ref.missing if ref is not None and ref.missing else "no reference measured"
            return f"not rated ({why})"
        target = TARGETS[self.number]
        if target is None:
            return "no target"
        missed = [ratio / target] if ratio > target else []
        for line in self.lines:
            if line.target is not None and line.median and line.median > 0:
                against = self.ours.median / line.median
                if against > line.target:
                    missed.append(against / line.target)
        if not missed:
            return "met"
        return f"missed by {max(missed):.2f}x"


# ---------------------------------------------------------------------------
# Timing helpers
# ---------------------------------------------------------------------------


def interleaved(fns: dict, repeat: int, warmup: int = 1, min_sample: float = 0.0):
    """Time each function ``repeat`` times, round-robin; returns (samples, last results).

    A sample is the mean over ``k`` back-to-back calls, ``k`` chosen from the warm-up so that
    one sample lasts at least ``min_sample`` seconds (fast functions on a noisy machine).
    """
    results = {}
    loops = {name: 1 for name in fns}
    for w in range(warmup):
        for name, fn in fns.items():
            start = time.perf_counter()
            results[name] = fn()
            took = time.perf_counter() - start
            if w == warmup - 1 and min_sample > 0:
                loops[name] = max(1, min(1000, math.ceil(min_sample / max(took, 1e-9))))
    samples: dict = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            k = loops[name]
            start = time.perf_counter()
            for _ in range(k):
                results[name] = fn()
            samples[name].append((time.perf_counter() - start) / k)
    return samples, results


def run_cmd(cmd: list, capture: bool = False, env: dict | None = None) -> tuple[float, str]:
    """Wall seconds of one subprocess (raises on a non-zero exit), and its stdout if asked."""
    start = time.perf_counter()
    proc = subprocess.run(
        cmd,
        stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip()[-500:]
        raise RuntimeError(f"{' '.join(cmd[:3])}... exited {proc.returncode}: {err}")
    return wall, (proc.stdout.decode(errors="replace") if capture else "")


def _vm_hwm_kib(pid: int):
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


TIME_V = "/usr/bin/time"


def peak_rss(cmd: list, workdir: str) -> tuple[float, float, str]:
    """(wall seconds, max RSS in MiB, method) of one subprocess.

    GNU time's ``%M`` (the child's own ru_maxrss: time is a small C process that forks and
    execs it) where /usr/bin/time exists; else VmHWM polled from /proc.  ``ru_maxrss`` of a
    child this (large) Python process starts would be wrong: subprocess uses vfork, and
    Linux records the parent's RSS into the child's maximum at exec.
    """
    if os.path.exists(TIME_V):
        report = os.path.join(workdir, "time.txt")
        wall, _ = run_cmd([TIME_V, "-f", "%M", "-o", report, *cmd])
        with open(report, encoding="ascii") as f:
            kib = int(f.read().split()[-1])
        return wall, kib / 1024, "GNU time %M"
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, _vm_hwm_kib(proc.pid) or 0)
        time.sleep(0.01)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])}... exited {proc.returncode}: {err[-500:]}")
    return wall, peak / 1024, "VmHWM polled every 10 ms"


def max_rel_err(a, b) -> float:
    """max |a - b| / max(|b|, 1e-300) over the elements, NaN-safe (equal NaNs agree)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise AssertionError(f"shapes differ: {a.shape} vs {b.shape}")
    both_nan = np.isnan(a) & np.isnan(b)
    scale = np.maximum(np.abs(b), 1e-300)
    err = np.where(both_nan, 0.0, np.abs(a - b) / scale)
    return float(np.max(err)) if err.size else 0.0


def agree(row: Row, pairs, rtol: float, label: str, atol: float = 0.0) -> None:
    """Compare (ours, theirs) arrays; record the worst relative error or mark the row FAILED."""
    worst = 0.0
    for ours, theirs in pairs:
        ours = np.asarray(ours, dtype=np.float64)
        theirs = np.asarray(theirs, dtype=np.float64)
        if ours.shape != theirs.shape or not np.allclose(
            ours, theirs, rtol=rtol, atol=atol, equal_nan=True
        ):
            row.failed = row.failed or f"disagrees with {label}"
            if ours.shape != theirs.shape:
                row.failed = f"disagrees with {label} (shapes {ours.shape} vs {theirs.shape})"
                return
            worst = max(worst, max_rel_err(ours, theirs))
        elif atol == 0:
            worst = max(worst, max_rel_err(ours, theirs))
        elif ours.size:
            worst = max(worst, float(np.max(np.abs(ours - theirs))))
    text = f"vs {label}: max {'rel' if atol == 0 else 'abs'} err {worst:.1e}"
    row.check = f"{row.check}; {text}" if row.check else text


# ---------------------------------------------------------------------------
# Peers
# ---------------------------------------------------------------------------


class Peers:
    """The optional libraries and tools, loaded once (or marked absent, with the reason)."""

    def __init__(self, enabled: bool):
        self.torch = self.jax = self.jnp = self.hips = self.hips_np = None
        self.qalc = None
        self.why: dict = {}
        if not enabled:
            for name in ("torch", "jax", "autograd (HIPS)", "qalc"):
                self.why[name] = "peers disabled (--no-peers)"
            return
        try:
            import torch

            if THREADS > 0:
                torch.set_num_threads(THREADS)
            self.torch = torch
        except ImportError:
            self.why["torch"] = "not installed"
        try:
            import jax

            jax.config.update("jax_enable_x64", True)
            import jax.numpy as jnp

            self.jax, self.jnp = jax, jnp
        except ImportError:
            self.why["jax"] = "not installed"
        try:
            import autograd as hips
            import autograd.numpy as hips_np

            if not hasattr(hips, "grad"):
                raise ImportError("not HIPS autograd")
            self.hips, self.hips_np = hips, hips_np
        except ImportError:
            self.why["autograd (HIPS)"] = "not installed"
        self.qalc = shutil.which("qalc")
        if self.qalc is None:
            self.why["qalc"] = "not installed"
        # Importing torch and JAX leaves hundreds of thousands of objects that Python's cyclic
        # GC would scan again and again while any engine builds graphs (ours went from ~13 to
        # ~22 us per node): moved out of the GC's generations, as a process that imported
        # only one of them would have them.
        gc.collect()
        gc.freeze()

    def missing(self, name: str) -> str:
        return f"{name}: {self.why.get(name, 'not available')}"


def versions(peers: Peers) -> list:
    def dist(name):
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return None

    items = [
        ("python", platform.python_version()),
        ("numpy", np.__version__),
        ("autograd-cli", dist("autograd-cli")),
        ("lark", dist("lark")),
        ("typer", dist("typer")),
        ("rich", dist("rich")),
        ("torch", peers.torch.__version__ if peers.torch else None),
        ("jax", peers.jax.__version__ if peers.jax else None),
        ("autograd (HIPS)", dist("autograd") if peers.hips else None),
    ]
    if peers.qalc:
        try:
            out = subprocess.run(
                [peers.qalc, "--version"], capture_output=True, text=True, timeout=10
            )
            items.append(("qalc", out.stdout.strip() or "?"))
        except (OSError, subprocess.SubprocessError):
            items.append(("qalc", "?"))
    else:
        items.append(("qalc", None))
    return items


def git_commit() -> str:
    try:
        rev = subprocess.run(
            ["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", HERE, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"
    return f"{rev}{' (with uncommitted changes)' if dirty else ''}" if rev else "?"


# ---------------------------------------------------------------------------
# Shared pieces
# ---------------------------------------------------------------------------


def count(n: int) -> str:
    """10^6 for powers of ten, 1,234 otherwise."""
    k = round(math.log10(n)) if n > 0 else 0
    return f"10^{k}" if n == 10**k and k > 2 else f"{n:,}"


def runs(k: int) -> str:
    return f"{k} run{'s' if k != 1 else ''}"


def cli_command() -> tuple[list, str | None]:
    """The installed console script in the same environment as sys.executable."""
    exe = os.path.join(os.path.dirname(sys.executable), "autograd-cli")
    if os.path.exists(exe):
        return [exe], None
    return [sys.executable, "-m", "autograd_cli"], (
        f"no console script at {exe}: timed `{sys.executable} -m autograd_cli` instead"
    )


def compile_package() -> str | None:
    """Write the byte code of autograd-cli's modules (``compileall``) where it is missing, as
    installing a package does, so that a subprocess row times the command and not Python
    compiling every module from source at each run (an editable checkout under
    ``PYTHONDONTWRITEBYTECODE=1`` has none; NumPy, PyArrow and Polars have theirs).  Returns
    a note when it could not."""
    import compileall

    folders = set()
    for name in ("autograd_cli", "autograd_cli.cli", "autograd_cli.core", "autograd_cli.grammar"):
        spec = importlib.util.find_spec(name)
        folders.update((spec and spec.submodule_search_locations) or [])
    if not folders or not all(compileall.compile_dir(f, quiet=2) for f in sorted(folders)):
        return "could not write the byte code of every autograd-cli module: timed as it is"
    return None


def make_csv(path: str, n: int, seed: int = 0) -> None:
    """An n-row CSV ``x,y`` of standard normal numbers written with repr (exact round trip)."""
    rng = np.random.default_rng(seed)
    block = 1_000_000
    with open(path, "w", encoding="utf-8") as f:
        f.write("x,y\n")
        done = 0
        while done < n:
            m = min(block, n - done)
            a = rng.normal(size=(m, 2))
            f.write("".join(f"{x!r},{y!r}\n" for x, y in a.tolist()))
            done += m


def batch_reference(x, y):
    """Hand-written value and gradient of x*sin(y)+y**2."""
    s = np.sin(y)
    return x * s + y * y, {"x": s, "y": x * np.cos(y) + 2.0 * y}


def verify_jsonl(csv_path: str, out_path: str, n: int, k: int, seed: int = 1) -> tuple:
    """Stream both files: the output has one line per row, and k sampled lines (the first and
    last included) hold the value and gradient of BATCH_EXPR at that row.  Returns
    (ours, expected) pairs of arrays for :func:`agree`, or raises AssertionError."""
    picks = set(random.Random(seed).sample(range(n), min(k, n))) | {0, n - 1}
    got, want = [], []
    count = 0
    with open(csv_path, encoding="utf-8") as fin, open(out_path, encoding="utf-8") as fout:
        fin.readline()
        for i, (src, res) in enumerate(zip(fin, fout)):
            count += 1
            if i in picks:
                x, y = (float(v) for v in src.split(","))
                doc = json.loads(res)
                if doc.get("line") != i + 2 or "error" in doc:
                    raise AssertionError(f"output line {i + 1} is {res[:200]!r}")
                got.append([doc["value"], doc["grad"]["x"], doc["grad"]["y"]])
                v, g = batch_reference(np.float64(x), np.float64(y))
                want.append([v, g["x"], g["y"]])
        rest = fout.read(1)
    if count != n or rest:
        raise AssertionError(f"{count}{'+' if rest else ''} output lines for {n} rows")
    return [(np.array(got), np.array(want))]


def python_chain(x0: float, ops: list) -> tuple[float, float]:
    """Value and derivative of a scalar chain computed with ``math``, the closed-form oracle."""
    v, d = x0, 1.0
    for kind, c in ops:
        if kind == "mul":
            v, d = v * c, d * c
        elif kind == "add":
            v = v + c
        else:
            v, d = math.sin(v), d * math.cos(v)
    return v, d


def chain_ops(n: int) -> list:
    """n scalar ops cycling multiply, add, sin (values stay in a sane range)."""
    cycle = [("mul", 1.0001), ("add", 0.1), ("sin", None)]
    return [cycle[i % 3] for i in range(n)]


# ---------------------------------------------------------------------------
# The rows
# ---------------------------------------------------------------------------


#: the reference of the cold-start rows (1 and 10): the libraries a run of the command line uses
FLOOR = [sys.executable, "-c", "import numpy, lark, typer, rich.console"]
FLOOR_WHO = 'floor F: `python -c "import numpy, lark, typer, rich.console"`'


def shell_env() -> dict:
    """The environment as a user's shell runs a command: with bytecode caches (a
    PYTHONDONTWRITEBYTECODE in the caller's environment would make every start compile the
    package again)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def cold_starts(cmds: dict, repeat: int) -> dict:
    """Wall seconds of each command line, interleaved; the warm-up round writes the caches."""
    env = shell_env()
    samples, _ = interleaved(
        {k: (lambda c=c: run_cmd(c, env=env)[0]) for k, c in cmds.items()}, repeat
    )
    return samples


def row_cold_start(cfg, peers: Peers, work: str) -> Row:
    cli, note = cli_command()
    args = ["grad", "3*a**3-b**2", "--a", "2", "--b", "6"]
    repeat = cfg["cold_repeat"]
    row = Row(1, 'cold start: `autograd-cli grad "3*a**3-b**2" --a 2 --b 6`', runs(repeat))
    if note:
        row.notes.append(note)
    numpy_only = [sys.executable, "-c", "import numpy"]
    cmds = {"ours": cli + args, "floor": FLOOR, "numpy": numpy_only}
    if peers.qalc:
        cmds["qalc"] = [peers.qalc, "-t", "3*2^3-6^2"]
    samples = cold_starts(cmds, repeat)
    row.line(who="autograd-cli (console script)", samples=samples["ours"], ours=True)
    row.line(who=FLOOR_WHO, samples=samples["floor"], reference=True)
    row.line(who='`python -c "import numpy"`', samples=samples["numpy"])
    if peers.qalc:
        row.line(who='qalc `-t "3*2^3-6^2"`', samples=samples["qalc"])
    else:
        row.line(who="qalc", missing=peers.missing("qalc"))
    _, out = run_cmd(cli + args + ["--json"], capture=True)
    doc = json.loads(out)
    agree(
        row,
        [(doc["value"], -12.0), (doc["grad"]["a"], 36.0), (doc["grad"]["b"], -12.0)],
        1e-15,
        "closed form (--json run)",
    )
    return row


# Row 2's reference: what a data person would write with Polars (the same file, the value
# and the hand-written derivatives of BATCH_EXPR as expressions, the same fields as JSONL).
POLARS_SCRIPT = """
import sys
import polars as pl
df = pl.read_csv(sys.argv[1], schema={"x": pl.Float64, "y": pl.Float64})
x, y = pl.col("x"), pl.col("y")
s = y.sin()
out = df.select(
    line=pl.int_range(2, pl.len() + 2),
    value=x * s + y * y,
    grad=pl.struct(x=s, y=x * y.cos() + 2.0 * y),
)
out.write_ndjson(sys.argv[2])
"""


def row_batch(cfg, peers: Peers, work: str) -> Row:
    n = cfg["batch_rows"]
    repeat = cfg["batch_repeat"]
    row = Row(
        2,
        f"`autograd-cli batch` CSV -> JSONL, grad of `{BATCH_EXPR}`",
        f"{count(n)} rows, {runs(repeat)}",
    )
    cli, note = cli_command()
    if note:
        row.notes.append(note)
    csv_path = os.path.join(work, f"batch_{n}.csv")
    out_path = os.path.join(work, f"batch_{n}.jsonl")
    polars_out = os.path.join(work, f"batch_{n}.polars.jsonl")
    make_csv(csv_path, n)
    compiled = compile_package()
    if compiled:
        row.notes.append(compiled)
    ours = cli + ["batch", csv_path, "--expr", BATCH_EXPR, "-o", out_path, "--no-progress"]
    loadtxt = [
        sys.executable,
        "-c",
        "import sys, numpy; a = numpy.loadtxt(sys.argv[1], delimiter=',', skiprows=1, ndmin=2);"
        " assert a.shape == (int(sys.argv[2]), 2), a.shape",
        csv_path,
        str(n),
    ]
    fns = {"ours": lambda: run_cmd(ours)[0], "loadtxt": lambda: run_cmd(loadtxt)[0]}
    has_polars = importlib.util.find_spec("polars") is not None
    if has_polars:
        # one thread, as every library here (--threads); Polars reads POLARS_MAX_THREADS
        env = dict(os.environ, POLARS_MAX_THREADS=str(THREADS)) if THREADS > 0 else None
        polars = [sys.executable, "-c", POLARS_SCRIPT, csv_path, polars_out]
        fns["polars"] = lambda: run_cmd(polars, env=env)[0]
    samples, _ = interleaved(fns, repeat, warmup=1 if n <= 10**6 else 0)
    row.line(who="autograd-cli batch (whole command)", samples=samples["ours"], ours=True)
    if has_polars:
        row.line(
            who="Polars by hand: `read_csv`, value and derivatives as expressions, "
            "`write_ndjson` (subprocess)",
            samples=samples["polars"],
            reference=True,
        )
    else:
        row.line(who="Polars by hand", missing="polars: not installed", reference=True)
    rated = row.line(
        who="`numpy.loadtxt` of the same file (subprocess)",
        samples=samples["loadtxt"],
        target=1.0,
    )
    row.notes.append(
        f"autograd-cli / numpy.loadtxt = {statistics.median(samples['ours']) / rated.median:.2f}x"
        " (target ≤ 1.0x)"
    )
    mb = os.path.getsize(csv_path) / 1e6
    out_mb = os.path.getsize(out_path) / 1e6
    row.notes.append(f"input {mb:.0f} MB, JSONL output {out_mb:.0f} MB (`-o`, a temporary folder)")
    try:
        pairs = verify_jsonl(csv_path, out_path, n, cfg["verify_rows"])
        agree(row, pairs, 1e-12, f"NumPy at {min(cfg['verify_rows'], n)} sampled lines", atol=1e-12)
        if has_polars:
            pairs = verify_jsonl(csv_path, polars_out, n, cfg["verify_rows"])
            agree(row, pairs, 1e-12, "Polars' output: NumPy at the sampled lines", atol=1e-12)
            os.remove(polars_out)
    except AssertionError as exc:
        row.failed = str(exc)
    os.remove(out_path)
    os.remove(csv_path)
    return row


def row_vectorised(cfg, peers: Peers, work: str) -> Row:
    from autograd_cli import parse
    from autograd_cli.core import rows
    from autograd_cli.core.batch import BatchResult

    n = cfg["vec_points"]
    repeat = cfg["vec_repeat"]
    row = Row(
        3,
        f"vectorised value+grad of `{BATCH_EXPR}` in process (`rows.evaluate_group`)",
        f"{count(n)} points, {runs(repeat)}",
    )
    program = parse(BATCH_EXPR)
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=n), rng.normal(size=n)
    chunk = 65536

    def ours():
        return rows.evaluate_group(program, n, {"x": x, "y": y}, op="grad")

    def chunked():
        out = []
        for lo in range(0, n, chunk):
            hi = min(n, lo + chunk)
            out.append(rows.evaluate_group(program, hi - lo, {"x": x[lo:hi], "y": y[lo:hi]}))
        return out

    def reference():
        return batch_reference(x, y)

    fns = {"ours": ours, "chunked": chunked, "ref": reference}
    if peers.torch is not None:
        torch = peers.torch
        xt = torch.from_numpy(x)
        yt = torch.from_numpy(y)

        def torch_eager():
            a = xt.detach().requires_grad_(True)
            b = yt.detach().requires_grad_(True)
            v = a * torch.sin(b) + b**2
            v.sum().backward()
            return v.detach().numpy(), a.grad.numpy(), b.grad.numpy()

        fns["torch"] = torch_eager
    samples, results = interleaved(fns, repeat, min_sample=MIN_SAMPLE)
    row.line(who="autograd-cli, one group of N rows", samples=samples["ours"], ours=True)
    row.line(
        who="hand-written NumPy value and both partials", samples=samples["ref"], reference=True
    )
    row.line(
        who=f"autograd-cli in {chunk}-row groups (as `batch` chunks)", samples=samples["chunked"]
    )
    if "torch" in samples:
        row.line(who="PyTorch eager (value, `sum().backward()`)", samples=samples["torch"])
    else:
        row.line(who="PyTorch eager", missing=peers.missing("torch"))
    res = results["ours"]
    if not isinstance(res, BatchResult):
        row.failed = "the group was not vectorised (evaluate_group fell back to row by row)"
        return row
    v, g = results["ref"]
    agree(row, [(res.value, v), (res.grad["x"], g["x"]), (res.grad["y"], g["y"])], 1e-12, "NumPy")
    parts = results["chunked"]
    agree(
        row,
        [(np.concatenate([p.value for p in parts]), v)],
        1e-12,
        "NumPy (chunked run)",
    )
    if "torch" in results:
        tv, tgx, tgy = results["torch"]
        agree(row, [(res.value, tv), (res.grad["x"], tgx), (res.grad["y"], tgy)], 1e-12, "torch")
    return row


def row_per_node(cfg, peers: Peers, work: str) -> Row:
    from autograd_cli.core import tensor

    n = cfg["chain_nodes"]
    repeat = cfg["chain_repeat"]
    row = Row(
        4,
        "per-node overhead: Tensor API scalar chain (×1.0001, +0.1, sin, ...), forward+backward",
        f"{count(n)} ops, {runs(repeat)}",
    )
    ops = chain_ops(n)
    x0 = 0.5

    def ours():
        x = tensor(x0, requires_grad=True)
        y = x
        for kind, c in ops:
            if kind == "mul":
                y = y * c
            elif kind == "add":
                y = y + c
            else:
                y = y.sin()
        y.backward()
        return y.item(), x.grad.item()

    fns = {"ours": ours}
    if peers.torch is not None:
        torch = peers.torch

        def torch_eager():
            x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
            y = x
            for kind, c in ops:
                if kind == "mul":
                    y = y * c
                elif kind == "add":
                    y = y + c
                else:
                    y = y.sin()
            y.backward()
            return y.item(), x.grad.item()

        fns["torch"] = torch_eager
    if peers.hips is not None:
        hnp = peers.hips_np

        def f(x):
            y = x
            for kind, c in ops:
                if kind == "mul":
                    y = y * c
                elif kind == "add":
                    y = y + c
                else:
                    y = hnp.sin(y)
            return y

        vg = peers.hips.value_and_grad(f)

        def hips_chain():
            v, d = vg(x0)
            return float(v), float(d)

        fns["hips"] = hips_chain
    samples, results = interleaved(fns, repeat, min_sample=MIN_SAMPLE)
    per = {k: [s / n for s in v] for k, v in samples.items()}
    row.line(who="autograd-cli Tensor API", samples=per["ours"], unit="s/node", ours=True)
    if "torch" in per:
        row.line(who="PyTorch eager", samples=per["torch"], unit="s/node", reference=True)
    else:
        row.line(who="PyTorch eager", missing=peers.missing("torch"), reference=True)
    if "hips" in per:
        row.line(who="HIPS autograd `value_and_grad`", samples=per["hips"], unit="s/node")
    else:
        row.line(who="HIPS autograd", missing=peers.missing("autograd (HIPS)"))
    want = python_chain(x0, ops)
    agree(row, [(results["ours"], want)], 1e-10, "math (closed form)")
    if "torch" in results:
        agree(row, [(results["ours"], results["torch"])], 1e-12, "torch")
    if "hips" in results:
        agree(row, [(results["ours"], results["hips"])], 1e-12, "HIPS autograd")
    return row


def row_text_chain(cfg, peers: Peers, work: str) -> Row:
    import autograd_cli as ag
    from autograd_cli.core import tensor

    n = cfg["text_depth"]
    repeat = cfg["text_repeat"]
    row = Row(
        5,
        "deep chain as text: `sin(sin(...(x)...))`, text to gradient (`autograd_cli.grad`)",
        f"depth {count(n)}, {runs(repeat)}",
    )
    text = "sin(" * n + "x" + ")" * n
    x0 = 0.5

    def ours():
        r = ag.grad(text, {"x": x0})
        return float(r.value), float(r.grad["x"])

    def ours_tensor():
        x = tensor(x0, requires_grad=True)
        y = x
        for _ in range(n):
            y = y.sin()
        y.backward()
        return y.item(), x.grad.item()

    fns = {"ours": ours, "tensor": ours_tensor}
    if peers.torch is not None:
        torch = peers.torch

        def torch_eager():
            x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
            y = x
            for _ in range(n):
                y = torch.sin(y)
            y.backward()
            return y.item(), x.grad.item()

        fns["torch"] = torch_eager
    ag.grad("sin(sin(x))", {"x": x0})  # the parser's tables load once, outside the timing
    samples, results = interleaved(fns, repeat, warmup=0)
    row.line(who="autograd-cli `grad(text, values)`", samples=samples["ours"], ours=True)
    if "torch" in samples:
        row.line(who="PyTorch eager (build + backward)", samples=samples["torch"], reference=True)
    else:
        row.line(who="PyTorch eager", missing=peers.missing("torch"), reference=True)
    row.line(who="autograd-cli Tensor API, same chain (no text)", samples=samples["tensor"])
    row.notes.append("no warm-up run: the first (timed) run of each side is included")
    want = python_chain(x0, [("sin", None)] * n)
    agree(row, [(results["ours"], want), (results["tensor"], want)], 1e-10, "math (closed form)")
    if "torch" in results:
        agree(row, [(results["ours"], results["torch"])], 1e-12, "torch")
    return row


def hessian_closed_form(x):
    """The Hessian of sum(sin(x[:-1])*x[1:]) + sum(x**4): tridiagonal."""
    n = len(x)
    h = np.diag(12.0 * x**2)
    idx = np.arange(n - 1)
    h[idx, idx] += -np.sin(x[:-1]) * x[1:]
    h[idx, idx + 1] = np.cos(x[:-1])
    h[idx + 1, idx] = np.cos(x[:-1])
    return h


def row_hessian(cfg, peers: Peers, work: str) -> Row:
    import autograd_cli as ag

    n = cfg["hess_n"]
    repeat = cfg["hess_repeat"]
    row = Row(
        6, f"Hessian of `{HESSIAN_EXPR}` (`autograd_cli.hessian`)", f"n = {n}, {runs(repeat)}"
    )
    x = np.linspace(-1.0, 1.0, n) + 0.1
    program = ag.parse(HESSIAN_EXPR)

    def ours():
        return ag.hessian(program, {"x": x}).hessian["x"]["x"]

    fns = {"ours": ours}
    if peers.torch is not None:
        torch = peers.torch
        xt = torch.tensor(x, dtype=torch.float64)

        def f(v):
            return (torch.sin(v[:-1]) * v[1:]).sum() + (v**4).sum()

        def torch_hessian():
            return torch.autograd.functional.hessian(f, xt, vectorize=True).numpy()

        fns["torch"] = torch_hessian
    if peers.jax is not None:
        jax, jnp = peers.jax, peers.jnp
        hj = jax.jit(jax.hessian(lambda v: jnp.sum(jnp.sin(v[:-1]) * v[1:]) + jnp.sum(v**4)))
        xj = jnp.asarray(x)
        fns["jax"] = lambda: np.asarray(hj(xj).block_until_ready())
    samples, results = interleaved(fns, repeat, min_sample=MIN_SAMPLE)
    row.line(who="autograd-cli (parsed once)", samples=samples["ours"], ours=True)
    if "torch" in samples:
        row.line(
            who="PyTorch `hessian(f, x, vectorize=True)`", samples=samples["torch"], reference=True
        )
    else:
        row.line(who="PyTorch `hessian`", missing=peers.missing("torch"), reference=True)
    if "jax" in samples:
        row.line(who="JAX `jit(hessian(f))` (compile excluded)", samples=samples["jax"])
    else:
        row.line(who="JAX", missing=peers.missing("jax"))
    want = hessian_closed_form(x)
    agree(row, [(results["ours"], want)], 1e-12, "closed form", atol=1e-12)
    for peer in ("torch", "jax"):
        if peer in results:
            agree(row, [(results["ours"], results[peer])], 1e-12, peer, atol=1e-12)
    return row


def row_layer(cfg, peers: Peers, work: str) -> Row:
    import autograd_cli as ag

    n = cfg["layer_n"]
    repeat = cfg["layer_repeat"]
    row = Row(
        7,
        f"`{LAYER_EXPR}`: value and grads w.r.t. W, x, b (`autograd_cli.grad`)",
        f"W {n}x{n}, {runs(repeat)}",
    )
    rng = np.random.default_rng(0)
    W = rng.normal(size=(n, n)) / math.sqrt(n)
    x = rng.normal(size=n)
    b = rng.normal(size=n)
    program = ag.parse(LAYER_EXPR)
    values = {"W": W, "x": x, "b": b}

    def ours():
        r = ag.grad(program, values)
        return r.value, r.grad["W"], r.grad["x"], r.grad["b"]

    def reference():
        t = np.tanh(W @ x + b)
        d = 1.0 - t * t
        return t.sum(), np.outer(d, x), W.T @ d, d

    fns = {"ours": ours, "ref": reference}
    if peers.torch is not None:
        torch = peers.torch
        Wt, xt, bt = (torch.from_numpy(a) for a in (W, x, b))

        def torch_eager():
            Wg, xg, bg = (a.detach().requires_grad_(True) for a in (Wt, xt, bt))
            v = torch.tanh(Wg @ xg + bg).sum()
            v.backward()
            return v.item(), Wg.grad.numpy(), xg.grad.numpy(), bg.grad.numpy()

        fns["torch"] = torch_eager
    if peers.jax is not None:
        jax, jnp = peers.jax, peers.jnp
        vg = jax.jit(jax.value_and_grad(lambda W, x, b: jnp.sum(jnp.tanh(W @ x + b)), (0, 1, 2)))
        Wj, xj, bj = (jnp.asarray(a) for a in (W, x, b))

        def jax_vg():
            v, (gW, gx, gb) = vg(Wj, xj, bj)
            gW.block_until_ready()
            return float(v), np.asarray(gW), np.asarray(gx), np.asarray(gb)

        fns["jax"] = jax_vg
    samples, results = interleaved(fns, repeat, min_sample=MIN_SAMPLE)
    row.line(who="autograd-cli (parsed once)", samples=samples["ours"], ours=True)
    row.line(who="hand-written NumPy", samples=samples["ref"], reference=True)
    if "torch" in samples:
        row.line(who="PyTorch eager", samples=samples["torch"])
    else:
        row.line(who="PyTorch eager", missing=peers.missing("torch"))
    if "jax" in samples:
        row.line(who="JAX `jit(value_and_grad)` (compile excluded)", samples=samples["jax"])
    else:
        row.line(who="JAX", missing=peers.missing("jax"))
    for peer, label in (("ref", "NumPy"), ("torch", "torch"), ("jax", "jax")):
        if peer in results:
            agree(row, list(zip(results["ours"], results[peer])), 1e-10, label, atol=1e-12)
    return row


HAND_NUMPY_SCRIPT = """
import sys
import numpy as np
a = np.loadtxt(sys.argv[1], delimiter=",", skiprows=1, ndmin=2)
x, y = a[:, 0], a[:, 1]
s = np.sin(y)
value = x * s + y * y
gx = s
gy = x * np.cos(y) + 2.0 * y
with open(sys.argv[2], "wb") as f:
    for column in (value, gx, gy):
        column.tofile(f)
"""


def row_memory(cfg, peers: Peers, work: str) -> Row:
    n = cfg["mem_rows"]
    row = Row(
        8,
        f"peak memory (max RSS) of `autograd-cli batch`, grad of `{BATCH_EXPR}`",
        f"{count(n)} rows, 1 run",
    )
    cli, note = cli_command()
    if note:
        row.notes.append(note)
    csv_path = os.path.join(work, f"mem_{n}.csv")
    out_path = os.path.join(work, f"mem_{n}.jsonl")
    ref_out = os.path.join(work, f"mem_{n}.bin")
    start = time.perf_counter()
    make_csv(csv_path, n)
    made = time.perf_counter() - start
    ours_cmd = cli + ["batch", csv_path, "--expr", BATCH_EXPR, "-o", out_path, "--no-progress"]
    ref_cmd = [sys.executable, "-c", HAND_NUMPY_SCRIPT, csv_path, ref_out]
    ours_wall, ours_mib, method = peak_rss(ours_cmd, work)
    ref_wall, ref_mib, _ = peak_rss(ref_cmd, work)
    row.line(who="autograd-cli batch", samples=[ours_mib], unit="MiB", ours=True)
    row.line(
        who="hand NumPy: `loadtxt`, value+grads, `tofile`",
        samples=[ref_mib],
        unit="MiB",
        reference=True,
    )
    mb = os.path.getsize(csv_path) / 1e6
    out_mb = os.path.getsize(out_path) / 1e6
    row.notes.append(
        f"{method}; input {mb:.0f} MB (made in {made:.0f} s), JSONL output {out_mb:.0f} MB;"
        " wall time of the measured runs:"
        f" ours {ours_wall:.1f} s, hand NumPy {ref_wall:.1f} s"
    )
    try:
        pairs = verify_jsonl(csv_path, out_path, n, cfg["verify_rows"])
        agree(row, pairs, 1e-12, f"NumPy at {min(cfg['verify_rows'], n)} sampled lines", atol=1e-12)
        ref = np.fromfile(ref_out).reshape(3, n)
        first = json.loads(open(out_path, encoding="utf-8").readline())
        agree(
            row,
            [([first["value"], first["grad"]["x"], first["grad"]["y"]], ref[:, 0])],
            1e-12,
            "the hand NumPy script's output (row 1)",
            atol=1e-12,
        )
    except AssertionError as exc:
        row.failed = str(exc)
    for path in (csv_path, out_path, ref_out):
        os.remove(path)
    return row


def peak_tree(cmd: list, stdout=None) -> tuple[float, dict]:
    """(wall seconds, {pid: (VmHWM in MiB, command line)}) of a subprocess and every process
    it starts (a Dask cluster's workers), /proc polled every 20 ms (Linux)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=stdout or subprocess.DEVNULL, stderr=subprocess.PIPE)
    peaks: dict = {}
    while proc.poll() is None:
        for pid in [proc.pid, *_descendants(proc.pid)]:
            kib = _vm_hwm_kib(pid)
            if kib is not None and kib / 1024 > peaks.get(pid, (0.0, ""))[0]:
                peaks[pid] = (kib / 1024, peaks.get(pid, (0, None))[1] or _cmdline(pid))
        time.sleep(0.02)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])}... exited {proc.returncode}: {err[-500:]}")
    return wall, peaks


def _descendants(root: int) -> list:
    children: dict = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _same_bytes(a: str, b: str) -> bool:
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(1 << 20), fb.read(1 << 20)
            if x != y:
                return False
            if not x:
                return True


def row_dask(cfg, peers: Peers, work: str) -> Row:
    n = cfg["dask_rows"]
    workers = os.cpu_count() or 1
    row = Row(
        9,
        f"`autograd-cli batch --engine dask` (a local cluster, {workers} worker processes) vs "
        f"the local engine, CSV -> JSONL, grad of `{BATCH_EXPR}`",
        f"{count(n)} rows, 1 run",
    )
    cli, note = cli_command()
    if note:
        row.notes.append(note)
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError as exc:
        why = f"{exc.name}: not installed (pip install 'autograd-cli[dask]')"
        row.line(who="autograd-cli batch --engine dask", missing=why, ours=True)
        row.line(who="autograd-cli batch (local engine)", missing=why, reference=True)
        return row
    if not os.path.isdir("/proc"):
        row.notes.append("no /proc: peak memory not measured")
    csv_path = os.path.join(work, f"dask_{n}.csv")
    local_out = os.path.join(work, f"dask_{n}.local.jsonl")
    dask_out = os.path.join(work, f"dask_{n}.dask.jsonl")
    make_csv(csv_path, n)
    base = cli + ["batch", csv_path, "--expr", BATCH_EXPR, "--no-progress"]
    dask_cmd = base + ["-o", dask_out, "--engine", "dask", "--workers", str(workers)]
    local_wall, local_peaks = peak_tree(base + ["-o", local_out])
    dask_wall, dask_peaks = peak_tree(dask_cmd)
    row.line(
        who=f"autograd-cli batch --engine dask ({workers} workers)", samples=[dask_wall], ours=True
    )
    row.line(who="autograd-cli batch (local engine)", samples=[local_wall], reference=True)
    worker_mib = [
        mib
        for mib, line in dask_peaks.values()
        if "multiprocessing" in line and "resource_tracker" not in line
    ]
    client_mib = max(
        (mib for mib, line in dask_peaks.values() if "multiprocessing" not in line), default=0
    )
    local_mib = max((mib for mib, _ in local_peaks.values()), default=0)
    if worker_mib:
        row.notes.append(
            f"peak memory (VmHWM): each Dask worker {min(worker_mib):.0f}-{max(worker_mib):.0f} "
            f"MiB ({len(worker_mib)} workers), the Dask client {client_mib:.0f} MiB, the local "
            f"engine {local_mib:.0f} MiB"
        )
    mb = os.path.getsize(csv_path) / 1e6
    row.notes.append(
        f"input {mb:.0f} MB; both wall times include start-up (the cluster's: a few seconds)"
    )
    try:
        if not _same_bytes(local_out, dask_out):
            raise AssertionError("the Dask engine's output differs from the local engine's")
        pairs = verify_jsonl(csv_path, dask_out, n, cfg["verify_rows"])
        agree(row, pairs, 1e-12, f"NumPy at {min(cfg['verify_rows'], n)} sampled lines", atol=1e-12)
        row.check += "; the same bytes as the local engine's output"
    except AssertionError as exc:
        row.failed = str(exc)
    for path in (csv_path, local_out, dask_out):
        os.remove(path)
    return row


def row_version_help(cfg, peers: Peers, work: str) -> Row:
    cli, note = cli_command()
    repeat = cfg["cold_repeat"]
    row = Row(10, "cold start: `autograd-cli --version` and `autograd-cli --help`", runs(repeat))
    if note:
        row.notes.append(note)
    cmds = {
        "version": cli + ["--version"],
        "help": cli + ["--help"],
        "floor": FLOOR,
        "bare": [sys.executable, "-c", "pass"],
    }
    samples = cold_starts(cmds, repeat)
    row.line(who="autograd-cli --version", samples=samples["version"], ours=True)
    row.line(who="autograd-cli --help", samples=samples["help"], ours=True)
    row.line(who=FLOOR_WHO, samples=samples["floor"], reference=True)
    row.line(who='`python -c "pass"` (the interpreter alone)', samples=samples["bare"])
    version = importlib.metadata.version("autograd-cli")
    for flag, wanted in (("--version", f"autograd-cli {version}\n"), ("--help", "Usage: ")):
        proc = subprocess.run(
            cli + [flag],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            env={**shell_env(), "PYTHONPROFILEIMPORTTIME": "1"},
        )
        if not proc.stdout.startswith(wanted):
            row.failed = f"`{flag}` printed {proc.stdout[:80]!r}"
        # -X importtime's lines on stderr: "import time: self | cumulative | name"
        names = [ln.rsplit("|", 1)[-1].strip() for ln in proc.stderr.splitlines() if "|" in ln]
        heavy = sorted({n for n in names if n == "numpy" or n.startswith("autograd_cli.core")})
        if heavy:
            row.failed = f"`{flag}` imported {', '.join(heavy[:3])}"
        row.notes.append(f"`{flag}` imports {len(names) - 1} modules, start-up included")
    row.check = "the output of each (the installed version; the help's first line)"
    return row


def module_row(module: str, number: int):
    """Row ``number`` of the module bench/``module``.py (rows 11-13 of issue 26 in
    codegen_rows, 14-17 of issue 28 in sparse_rows), imported when the row runs."""

    def run(cfg, peers: Peers, work: str) -> Row:
        if HERE not in sys.path:
            sys.path.insert(0, HERE)
        rows = importlib.import_module(module).ROWS
        return rows[number](sys.modules[__name__], cfg, peers, work)

    run.__name__ = f"row_{module}_{number}"
    return run


ROWS = {
    1: row_cold_start,
    2: row_batch,
    3: row_vectorised,
    4: row_per_node,
    5: row_text_chain,
    6: row_hessian,
    7: row_layer,
    8: row_memory,
    9: row_dask,
    10: row_version_help,
    11: module_row("codegen_rows", 11),
    12: module_row("codegen_rows", 12),
    13: module_row("codegen_rows", 13),
    14: module_row("sparse_rows", 14),
    15: module_row("sparse_rows", 15),
    16: module_row("sparse_rows", 16),
    17: module_row("sparse_rows", 17),
    18: module_row("sparse_rows", 18),
}


# ---------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------


def fmt_value(v, unit: str) -> str:
    if v is None:
        return "–"
    if unit == "MiB":
        return f"{v:.0f} MiB"
    if unit == "chars":
        return f"{v:,.0f} chars"
    suffix = "/node" if unit == "s/node" else ""
    for scale, name in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if abs(v) >= scale or scale == 1e-9:
            x = v / scale
            digits = 0 if x >= 100 else 1 if x >= 10 else 2
            return f"{x:.{digits}f} {name}{suffix}"
    return f"{v:g}"


def fmt_range(line: Line) -> str:
    if not line.samples:
        return "–"
    if len(line.samples) == 1:
        return "(1 run)"
    lo, hi = min(line.samples), max(line.samples)
    return f"{fmt_value(lo, line.unit)} – {fmt_value(hi, line.unit)}"


def cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(rows: list, meta: dict) -> str:
    out = [
        "# autograd-cli benchmark suite (issue 12)",
        "",
        f"Date: {meta['date']}. Mode: `{meta['mode']}`. Command: `{meta['command']}`.",
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"] if v) + ".",
        "",
        f"Machine: {meta['machine']}. Commit: {meta['commit']}.",
        "",
        "Times are the median of the runs (min – max beside it); ratio = this line's median /",
        "the row's reference median (the line marked *ref*), so a ratio above 1 means slower",
        "(for row 8, more memory). A target is met when autograd-cli's ratio is at most the",
        "target; *missed by X* is ratio / target. Each row's results were compared with the",
        "reference or a closed form (column *agrees*); a mismatch makes the row FAILED.",
        "",
        "| # | benchmark | size | implementation | median | min – max | ratio | target | result "
        "| agrees |",
        "| ---: | --- | --- | --- | ---: | ---: | ---: | --- | --- | --- |",
    ]
    for row in rows:
        first = True
        lines = row.lines or [Line(who="–", missing=row.failed or "no measurement")]
        for line in lines:
            ratio = row.ratio(line)
            who = line.who + (" (*ref*)" if line.reference else "")
            if line.ours:
                who = f"**{who}**"
            if line.missing:
                median, rng, ratio_text = f"skipped: {line.missing}", "", ""
            else:
                median, rng = fmt_value(line.median, line.unit), fmt_range(line)
                ratio_text = "" if ratio is None else f"{ratio:.2f}x"
                if line.ours and ratio is not None:
                    ratio_text = f"**{ratio_text}**"
            out.append(
                "| "
                + " | ".join(
                    cell(c)
                    for c in (
                        row.number if first else "",
                        row.title if first else "",
                        row.size if first else "",
                        who,
                        median,
                        rng,
                        ratio_text,
                        TARGET_TEXT[row.number] if first else "",
                        row.status() if first else "",
                        ("FAILED" if row.failed else "yes" if row.check else "–") if first else "",
                    )
                )
                + " |"
            )
            first = False
    out += ["", "## Checks and notes", ""]
    for row in rows:
        bits = []
        if row.check:
            bits.append(f"checked {row.check}")
        if row.failed:
            bits.append(f"**FAILED: {row.failed}**")
        bits += row.notes
        out.append(f"- Row {row.number}: " + ("; ".join(bits) if bits else "–") + ".")
    if meta["skipped"]:
        out += ["", "Peers not run: " + "; ".join(meta["skipped"]) + "."]
    out += ["", f"Total wall time of the run: {meta['total']:.0f} s.", ""]
    return "\n".join(out)


def parse_only(text: str | None) -> list:
    if not text:
        return list(ROWS)
    chosen = []
    for part in text.split(","):
        part = part.strip()
        if "-" in part:
            lo, hi = (int(v) for v in part.split("-", 1))
            chosen += range(lo, hi + 1)
        elif part:
            chosen.append(int(part))
    bad = [k for k in chosen if k not in ROWS]
    if bad:
        raise SystemExit(f"--only: no row {bad[0]} (rows are 1-{len(ROWS)})")
    return sorted(set(chosen))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats (< 1 min)")
    ap.add_argument("--sizes", choices=sorted(SIZES), help="full, quick or tiny (for tests)")
    ap.add_argument("--only", help="rows to run, e.g. 3 or 1,4-6 (default: all)")
    ap.add_argument("--repeat", type=int, help="override every row's number of timed runs")
    ap.add_argument("--out", default=DEFAULT_OUT, help=f"Markdown file (default {DEFAULT_OUT})")
    ap.add_argument("--no-peers", action="store_true", help="do not import torch, jax, autograd")
    ap.add_argument(
        "--gpu",
        action="store_true",
        help="the GPU rows G1-G5 (bench/gpu_rows.py); CPU rows then only those --only names",
    )
    ap.add_argument(
        "--gpu-dry",
        action="store_true",
        help="--gpu's code at tiny sizes with no GPU (a NumPy stand-in for CuPy); measures no GPU",
    )
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="BLAS/OpenMP/torch threads for every library (0: leave their defaults)",
    )
    args = ap.parse_args(argv)
    mode = args.sizes or ("quick" if args.quick else "full")
    cfg = dict(SIZES[mode])
    if args.repeat is not None:
        if args.repeat < 1:
            raise SystemExit("--repeat must be at least 1")
        for key in cfg:
            if key.endswith("_repeat"):
                cfg[key] = args.repeat
    gpu = args.gpu or args.gpu_dry
    chosen = parse_only(args.only) if args.only or not gpu else []
    if gpu:  # before Peers: bench/gpu_rows.py keeps JAX from taking the GPU's memory
        sys.path.insert(0, HERE)
        import gpu_rows

        ROWS.update(gpu_rows.rows(sys.modules[__name__], mode, dry=args.gpu_dry))
        chosen += [k for k in ROWS if str(k).startswith("G")]
    began = time.perf_counter()
    # byte code first, for every row that starts the console script (1, 2, 8, 9, 10): row 2
    # asks again (a no-op then) and notes it where it could not be written
    compile_package()
    peers = Peers(enabled=not args.no_peers)
    results = []
    with tempfile.TemporaryDirectory(prefix="autograd-cli-bench-") as work:
        for number in chosen:
            print(f"row {number} ...", file=sys.stderr, flush=True)
            t0 = time.perf_counter()
            try:
                row = ROWS[number](cfg, peers, work)
            except Exception as exc:  # noqa: BLE001 - one broken row must not hide the others
                traceback.print_exc()
                row = Row(number, ROWS[number].__name__, "–")
                row.failed = f"error: {type(exc).__name__}: {str(exc)[:300]}"
            print(
                f"row {number}: {row.status()} ({time.perf_counter() - t0:.1f} s)",
                file=sys.stderr,
                flush=True,
            )
            results.append(row)
    meta = {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "mode": mode,
        "command": " ".join(["python bench/run.py", *(sys.argv[1:] if argv is None else argv)]),
        "versions": versions(peers),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.system()} "
        f"{platform.release()}; threads per library: {THREADS or 'library defaults'}",
        "commit": git_commit(),
        "skipped": [f"{k}: {v}" for k, v in peers.why.items()],
        "total": time.perf_counter() - began,
    }
    text = render(results, meta)
    print(text)
    out_dir = os.path.dirname(os.path.abspath(args.out))
    os.makedirs(out_dir, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"written to {args.out}", file=sys.stderr)
    return 1 if any(r.failed for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
