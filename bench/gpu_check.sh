#!/usr/bin/env bash
# gpu_check.sh - does --device gpu work here, and what does it buy?  (issues 15 and 25)
#
# On a machine with an NVIDIA GPU and CuPy (pip install '.[gpu]' with the test extra), from
# anywhere:
#
#     bench/gpu_check.sh                  # PYTHON=... picks the interpreter (default: python3)
#     BENCH=1 POINTS=0 bench/gpu_check.sh # the tests, then bench/run.py --gpu (issue 25's table)
#
# 1. runs tests/test_gpu.py (the CLI's numbers on the GPU against the CPU's); a skipped test
#    counts as a failure here, since the point is to run them.  When a test fails, each
#    failing test's name and message is printed (from pytest's JUnit XML; the log's tail where
#    pytest wrote none), and the log is kept (see LOGS below);
# 2. measures value and gradient (core.batch.evaluate_batch, op grad, in one piece, the
#    columns uploaded and the results copied back included) of EXPR over POINTS points
#    (default 10^7; POINTS=0 skips this step), on the CPU and the GPU, in float64 and float32:
#    best of REPEAT runs (default 3) after a small warm-up run (CuPy compiles its kernels
#    then), checking that the GPU's numbers are the CPU's (rtol 1e-9 in float64, 1e-4 in
#    float32);
# 3. with BENCH=1, runs `bench/run.py --gpu` (bench/gpu_rows.py: issue 25's four GPU rows and
#    the --device gpu cold start, ours beside PyTorch CUDA, JAX and CuPy by hand) and writes
#    its Markdown table to LOGS/gpu_table.md (printed too).  Budget: 240 s (BENCH_LIMIT).
#
# On the project's lent GPU machine (the `device` tool; CuPy, PyTorch, JAX, pytest, Typer and
# Rich are installed there, Lark, uniplot, prompt_toolkit and orjson are not, and none of
# those four is needed by these steps), one prepared command does it all, from the checkout:
#
#     INSTALL=1 BENCH=1 POINTS=0 PYTHONUNBUFFERED=1 bash bench/gpu_check.sh
#
# INSTALL=1 first makes this checkout importable where it is not: `pip install --no-deps
# --no-build-isolation --no-index -e .` (offline), or, where pip lacks its build tools, a
# package folder of links on PYTHONPATH.  The device tool's `timeout_s` for that command: 480.
#
# LOGS: the folder the logs and the table are written to: $GPU_CHECK_LOGS, else $OUT (the
# device tool's folder that comes back), else a new temporary folder; kept, and named in a
# "gpu_check: logs in ..." line.  Files: gpu_tests.log, gpu_tests.xml, gpu_bench.log,
# gpu_table.md.
#
# Output (stdout), one line per measurement, in this order (cpu before gpu, float64 before
# float32), fields separated by one space, always these keys:
#
#     measure device=cpu dtype=float64 points=10000000 seconds=0.8123 points_per_s=12310720 ratio=1.00
#
# seconds: best wall time of one evaluation (4 decimals); points_per_s: points / seconds
# (an integer); ratio: points_per_s over the CPU's for the same dtype (2 decimals; the CPU's
# own lines say 1.00).  Other lines start with "gpu_check: " (a failing test: "gpu_check:
# failure: NODEID" or "gpu_check: error: NODEID", then its message's lines as "gpu_check:
# ..."), except the bench's table with BENCH=1.  The last line is "gpu_check: ok" on success.
# Budget: under five minutes; each step is stopped at its limit (pytest 120 s, measurements
# 150 s, the bench BENCH_LIMIT, default 240 s).
#
# Exit status: 0 ok; 1 the tests, the measurement or the bench failed (or ran out of time);
# 2 nothing to check here: CuPy is not installed, CUDA has no device, or autograd_cli or
# pytest is not importable by $PYTHON.
# Every failure ends with one line on stderr, "gpu_check: FAIL: <why>".
#
# GPU_CHECK_STAND_IN=1 is a dry run without a GPU: tests/strict_xp.py (NumPy behind CuPy's
# manners) stands in for CuPy, tests/test_strict_backend.py replaces tests/test_gpu.py, the
# bench runs `bench/run.py --gpu-dry`, and the device is reported as "stand-in"; it exercises
# this script, it measures no GPU.  GPU_CHECK_TESTS=FILES runs those test files instead.

set -u

fail() { # fail STATUS MESSAGE...
    local status=$1
    shift
    printf 'gpu_check: FAIL: %s\n' "$*" >&2
    exit "$status"
}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd) || fail 1 "cannot find the repository"
cd "$ROOT" || fail 1 "cannot enter $ROOT"
PYTHON=${PYTHON:-python3}
POINTS=${POINTS:-10000000}
REPEAT=${REPEAT:-3}
EXPR=${EXPR:-x*y + sin(x)*exp(y)}
STAND_IN=${GPU_CHECK_STAND_IN:-0}
BENCH=${BENCH:-0}
BENCH_LIMIT=${BENCH_LIMIT:-240}
export POINTS REPEAT EXPR STAND_IN

command -v "$PYTHON" >/dev/null 2>&1 || fail 2 "no Python interpreter '$PYTHON' (set PYTHON=...)"

# ---- INSTALL=1: this checkout made importable, offline, without its dependencies -----------
if [ "${INSTALL:-0}" = 1 ] && ! "$PYTHON" -c "import autograd_cli.core" >/dev/null 2>&1; then
    if "$PYTHON" -m pip install -q --no-deps --no-build-isolation --no-index -e "$ROOT" >/dev/null 2>&1; then
        echo "gpu_check: installed $ROOT (pip install --no-deps -e)"
    else # no build tools for pip: a package folder of links (no console script: bench/run.py
        # then times `python -m autograd_cli` and says so)
        site=$(mktemp -d) && mkdir "$site/autograd_cli" || fail 1 "cannot make a temporary folder"
        ln -s "$ROOT"/facade/* "$ROOT/cli" "$ROOT/core" "$ROOT/grammar" "$site/autograd_cli/" ||
            fail 1 "cannot link the package into $site"
        export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
        echo "gpu_check: $ROOT linked as the package autograd_cli in $site (pip could not install it)"
    fi
fi
limit() { # limit SECONDS COMMAND...: the command, stopped after SECONDS where timeout exists
    local seconds=$1
    shift
    if command -v timeout >/dev/null 2>&1; then
        timeout "$seconds" "$@"
    else
        "$@"
    fi
}

failures() { # failures XML LOG: each failing test's name and message, on stdout
    "$PYTHON" - "$1" "$2" <<'EOF'
import os
import sys
import xml.etree.ElementTree as ET

xml_path, log_path = sys.argv[1], sys.argv[2]
shown = 0
if os.path.exists(xml_path):
    try:
        cases = ET.parse(xml_path).getroot().iter("testcase")
    except ET.ParseError:
        cases = []
    for case in cases:
        for bad in [*case.findall("failure"), *case.findall("error")]:
            path = case.get("classname", "").replace(".", "/")
            print(f"gpu_check: {bad.tag}: {path}.py::{case.get('name')}")
            text = (bad.text or "").splitlines()
            lines = [x for x in text if x.startswith("E ")] or text[-12:]
            message = (bad.get("message") or "").splitlines()[:1]
            for line in (lines[:20] or message):
                print(f"gpu_check:     {line.rstrip()}"[:400])
            shown += 1
if not shown:  # no XML (pytest crashed or ran out of time): the log's tail
    print(f"gpu_check: no failing test recorded in {xml_path}; the log's last lines:")
    with open(log_path, encoding="utf-8", errors="replace") as f:
        for line in f.read().splitlines()[-40:]:
            print(f"gpu_check:     {line}"[:400])
EOF
}

# ---- is there a GPU to check? ------------------------------------------------------------
why=$("$PYTHON" - <<'EOF' 2>&1
import os, sys
try:
    import autograd_cli.core  # noqa: F401
except Exception as exc:
    print(f"autograd_cli is not importable by {sys.executable} ({exc.__class__.__name__}: {exc})")
    sys.exit(2)
try:
    import pytest  # noqa: F401
except Exception:
    print(f"pytest is not installed for {sys.executable}; install the [test] extra")
    sys.exit(2)
if os.environ["STAND_IN"] == "1":
    sys.exit(0)
try:
    import cupy
except Exception as exc:
    print(f"CuPy is not installed for {sys.executable} ({exc.__class__.__name__}: {exc}); "
          "install the [gpu] extra on a machine with CUDA")
    sys.exit(2)
try:
    count = cupy.cuda.runtime.getDeviceCount()
except Exception as exc:
    print(f"no CUDA device ({exc.__class__.__name__}: {exc})".replace("\n", " "))
    sys.exit(2)
if count < 1:
    print("no CUDA device (CUDA reports 0 devices)")
    sys.exit(2)
EOF
)
status=$?
[ "$status" -eq 0 ] || fail "$status" "$(printf '%s' "$why" | tail -n 1)"

# ---- the CuPy tests ------------------------------------------------------------------------
if [ "$STAND_IN" = 1 ]; then
    tests=${GPU_CHECK_TESTS:-tests/test_strict_backend.py}
    echo "gpu_check: stand-in run (GPU_CHECK_STAND_IN=1): no GPU is measured"
else
    tests=${GPU_CHECK_TESTS:-tests/test_gpu.py}
fi
logs=${GPU_CHECK_LOGS:-${OUT:-}}
if [ -z "$logs" ]; then
    logs=$(mktemp -d) || fail 1 "cannot make a temporary folder"
fi
mkdir -p "$logs" || fail 1 "cannot make the folder $logs"
echo "gpu_check: logs in $logs"
log=$logs/gpu_tests.log
xml=$logs/gpu_tests.xml
rm -f "$xml"
# shellcheck disable=SC2086 # $tests: one or more test files
limit 120 "$PYTHON" -m pytest -q -rfEs -p no:cacheprovider --junitxml="$xml" $tests >"$log" 2>&1
status=$?
summary=$(grep -E '[0-9]+ (passed|failed|error|skipped)' "$log" | tail -n 1)
if [ "$status" -ne 0 ]; then
    failures "$xml" "$log"
fi
if [ "$status" -eq 124 ]; then
    fail 1 "$tests ran out of time (120 s; log: $log)"
elif [ "$status" -ne 0 ]; then
    fail 1 "$tests failed: ${summary:-pytest exit status $status} (log: $log; rerun: $PYTHON -m pytest $tests)"
elif [ "$STAND_IN" != 1 ] && grep -qE '[0-9]+ skipped' <<<"$summary"; then
    grep -E '^SKIPPED' "$log" | sed 's/^/gpu_check:     /'
    fail 1 "$tests skipped tests, so the GPU was not checked: $summary"
fi
echo "gpu_check: $tests: $summary"

# ---- throughput ----------------------------------------------------------------------------
if [ "$POINTS" != 0 ]; then
echo "gpu_check: expr=\"$EXPR\" op=grad (value and gradient) points=$POINTS best of $REPEAT"
limit 150 "$PYTHON" - <<'EOF'
import os
import sys
import time

import numpy as np

from autograd_cli.core import backend
from autograd_cli.core.batch import evaluate_batch
from autograd_cli.grammar import parse

points, repeat, expr = int(os.environ["POINTS"]), int(os.environ["REPEAT"]), os.environ["EXPR"]
label = "gpu"
if os.environ["STAND_IN"] == "1":  # a dry run: tests/strict_xp.py plays CuPy
    sys.path.insert(0, "tests")
    import strict_xp

    original = backend._array_module
    backend._array_module = lambda n: (strict_xp.xp, "gpu") if n == "gpu" else original(n)
    sys.modules.update(strict_xp.cupyx_modules())
    label = "stand-in"


def fail(message):
    print(f"gpu_check: FAIL: {message}".replace("\n", " "), file=sys.stderr)
    sys.exit(1)


def run(program, base, device, dtype, size):
    columns = {n: c[:size].astype(dtype) for n, c in base.items()}
    with backend.using(device=device, dtype=dtype):
        start = time.perf_counter()
        r = evaluate_batch(program, columns, size, grad=True)
        return time.perf_counter() - start, r


def main():
    program = parse(expr)
    names = sorted({n for n in "xy" if n in expr})
    rng = np.random.default_rng(15)
    base = {n: rng.uniform(-1.0, 1.0, points) for n in names}
    for dtype in ("float64", "float32"):
        cpu_rate = None
        results = {}
        for device in ("cpu", "gpu"):
            run(program, base, device, dtype, min(points, 1000))  # warm-up: kernels compiled
            best, r = min(
                (run(program, base, device, dtype, points) for _ in range(repeat)),
                key=lambda t: t[0],
            )
            results[device] = r
            rate = points / best
            cpu_rate = cpu_rate or rate
            name = "cpu" if device == "cpu" else label
            print(
                f"measure device={name} dtype={dtype} points={points} seconds={best:.4f} "
                f"points_per_s={rate:.0f} ratio={rate / cpu_rate:.2f}",
                flush=True,
            )
        rtol = 1e-9 if dtype == "float64" else 1e-4
        cpu, gpu = results["cpu"], results["gpu"]
        pairs = [("value", cpu.value, gpu.value)]
        pairs += [(f"d/d{n}", cpu.grad[n], gpu.grad[n]) for n in names]
        for what, a, b in pairs:
            if a.dtype != np.dtype(dtype) or b.dtype != np.dtype(dtype):
                fail(f"{dtype}: the {what} came back as {a.dtype} (cpu) and {b.dtype} (gpu)")
            if not np.allclose(a, b, rtol=rtol, atol=rtol, equal_nan=True):
                worst = float(np.nanmax(np.abs(a.astype(float) - b.astype(float))))
                fail(f"{dtype}: the GPU's {what} is not the CPU's (max abs difference {worst:g})")


try:
    main()
except MemoryError:
    fail(f"out of memory at {points} points (set POINTS=...)")
except Exception as exc:  # noqa: BLE001 - one line, whatever went wrong
    fail(f"measuring: {exc.__class__.__name__}: {exc}")
EOF
status=$?
[ "$status" -eq 124 ] && fail 1 "the measurements ran out of time (150 s)"
[ "$status" -eq 0 ] || exit 1 # the one line is already on stderr
fi

# ---- the bench's GPU rows (BENCH=1) ----------------------------------------------------------
if [ "$BENCH" = 1 ]; then
    if [ "$STAND_IN" = 1 ]; then flag=--gpu-dry; else flag=--gpu; fi
    table=$logs/gpu_table.md
    echo "gpu_check: bench/run.py $flag (budget $BENCH_LIMIT s; table: $table)"
    limit "$BENCH_LIMIT" "$PYTHON" bench/run.py "$flag" --out "$table" >"$logs/gpu_bench.log" 2>&1
    status=$?
    [ -f "$table" ] && cat "$table"
    if [ "$status" -ne 0 ]; then
        tail -n 40 "$logs/gpu_bench.log" | sed 's/^/gpu_check:     /'
        [ "$status" -eq 124 ] && fail 1 "bench/run.py $flag ran out of time ($BENCH_LIMIT s)"
        fail 1 "bench/run.py $flag failed (exit status $status; a FAILED row or an error; log: $logs/gpu_bench.log)"
    fi
fi
echo "gpu_check: ok"
