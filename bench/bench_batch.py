"""Batch throughput: one expression over 10^4 .. 10^7 CSV rows, end to end and in parts.

Not a test: run it by hand with the project installed, e.g.
``python bench/bench_batch.py`` (sizes 1e4 1e5 1e6) or
``python bench/bench_batch.py --sizes 1e4 1e5 1e6 1e7 --verify 1000``.

For each size N:

* an N-row CSV (``x,y``, standard normal, written with ``repr``) is made in a temporary
  directory (not timed);
* ``autograd-cli batch FILE --expr EXPR -o OUT`` runs in a fresh process: ``wall`` is
  its wall-clock time (start-up included), ``peak RSS`` its maximum resident memory
  (``os.wait4``), so memory growth with N shows directly;
* with ``--verify K``: K random rows of the output are compared, as exact text, with
  the one-at-a-time evaluation (``api.grad_of`` -> ``render.result_json`` ->
  ``jsonout.dumps``, i.e. what ``grad --json`` prints, plus ``"line"``).

Then, in this process, for the largest size up to 10^6 (``--parts-size``):

* ``parts``: where the end-to-end time goes (read+parse CSV, evaluate, format, write),
  through the same functions the command uses: the text path, and (``parts_pyarrow``)
  the PyArrow path a large CSV file takes where PyArrow is installed;
* ``eval vs numpy``: ``core.batch.evaluate_batch`` (value and gradient, in chunks of
  ``--chunk-size`` rows like the command, and in one piece) against a hand-written NumPy
  computation of the same value and both partial derivatives (best of ``--repeat``).

Results go to stdout (a table) and to ``bench/results/batch.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

DEFAULT_EXPR = "x*y + sin(x)*exp(y/3)"


def numpy_reference(x, y):
    """Hand-written value and gradient of x*y + sin(x)*exp(y/3)."""
    e = np.exp(y / 3)
    s = np.sin(x)
    value = x * y + s * e
    return value, {"x": y + np.cos(x) * e, "y": x + s * e / 3}


def make_csv(path: str, n: int, seed: int = 0) -> None:
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


def cli_command() -> list[str]:
    exe = shutil.which(
        "autograd-cli",
        path=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
    )
    return [exe] if exe else [sys.executable, "-m", "autograd_cli"]


def _vm_hwm_kib(pid: int) -> int | None:
    """The process's peak resident memory so far (Linux: VmHWM of /proc/PID/status)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def run_cli(args: list[str]) -> tuple[float, int, int]:
    """(wall seconds, peak RSS in MiB, exit code) of one run in a fresh process.

    The peak is VmHWM polled from /proc while the command runs (exec starts a fresh
    address space, so it is the command's own peak); ``ru_maxrss`` of ``wait4`` would
    also count the pages of this (larger) process that the child had before its exec.
    """
    start = time.perf_counter()
    proc = subprocess.Popen(cli_command() + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    while proc.poll() is None:
        hwm = _vm_hwm_kib(proc.pid)
        if hwm:
            peak = max(peak, hwm)
        time.sleep(0.02)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if proc.returncode != 0:
        raise SystemExit(f"autograd-cli {' '.join(args)} failed ({proc.returncode}): {err}")
    return wall, peak // 1024, proc.returncode


def verify(csv_path: str, out_path: str, expr: str, k: int, seed: int = 1) -> int:
    """Compare k random output lines with one-at-a-time evaluation; returns the mismatches."""
    from autograd_cli.cli import jsonout, render
    from autograd_cli.core import api
    from autograd_cli.grammar import parse

    with open(csv_path, encoding="utf-8") as f:
        rows = f.read().splitlines()[1:]
    with open(out_path, encoding="utf-8") as f:
        out = f.read().splitlines()
    assert len(out) == len(rows), (len(out), len(rows))
    program = parse(expr)
    bad = 0
    for i in random.Random(seed).sample(range(len(rows)), min(k, len(rows))):
        x, y = (float(v) for v in rows[i].split(","))
        result = api.grad_of(program, {"x": x, "y": y})
        expected = jsonout.dumps({"line": i + 2, **render.result_json(expr, result)})
        if out[i] != expected:
            bad += 1
            if bad <= 3:
                print(
                    f"  MISMATCH at line {i + 2}:\n    got      {out[i]}\n    expected {expected}"
                )
    return bad


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def parts(csv_path: str, expr: str, chunk: int) -> dict:
    """Seconds spent reading+parsing, evaluating, formatting and writing, in this process."""
    from autograd_cli.cli import batch as cli_batch
    from autograd_cli.cli.batch.records import csv_fast
    from autograd_cli.core import batch as core_batch
    from autograd_cli.grammar import parse

    program = parse(expr)
    opts = cli_batch.BatchOptions(source=csv_path, expr=expr)
    runner = cli_batch.Runner(opts, cli_batch.Interrupt())
    t = {"read": 0.0, "evaluate": 0.0, "format": 0.0, "write": 0.0}
    sink = open(os.devnull, "wb")
    with open(csv_path, encoding="utf-8") as f:
        f.readline()
        stream = cli_batch.read_chunks(f, 2, chunk, cli_batch.Interrupt())
        while True:
            s = time.perf_counter()
            item = next(stream, None)
            if item is None:
                break
            numbers, texts, joined = item
            arr = csv_fast(texts, 2, joined)
            t["read"] += time.perf_counter() - s
            s = time.perf_counter()
            res = core_batch.evaluate_batch(
                program, {"x": arr[:, 0], "y": arr[:, 1]}, len(numbers), grad=True
            )
            t["evaluate"] += time.perf_counter() - s
            s = time.perf_counter()
            ch = cli_batch.Chunk(numbers)
            runner.write_group(ch, expr, list(range(len(numbers))), res)
            t["format"] += time.perf_counter() - s
            s = time.perf_counter()
            sink.write(("\n".join(ch.out) + "\n").encode())
            t["write"] += time.perf_counter() - s
    sink.close()
    return t


def parts_fast(csv_path: str, expr: str, chunk: int) -> dict | None:
    """``parts`` on the PyArrow path (cli/batch/columnar.py: the file read as bytes, PyArrow's
    CSV reader, the lines made by Arrow); None where PyArrow (or orjson) is absent."""
    from autograd_cli.cli import batch as cli_batch
    from autograd_cli.cli.batch import columnar
    from autograd_cli.cli.batch import io as batch_io
    from autograd_cli.core import batch as core_batch
    from autograd_cli.grammar import parse

    program = parse(expr)
    runner = cli_batch.Runner(cli_batch.BatchOptions(source=csv_path, expr=expr), None)
    interrupt = cli_batch.Interrupt()
    source = batch_io.Input(csv_path)
    header, line = batch_io.read_header(source, interrupt)
    saved, columnar.MIN_BYTES = columnar.MIN_BYTES, 0
    try:
        offset = columnar.start(source, header, line)
    finally:
        columnar.MIN_BYTES = saved
    if offset is None:
        source.close()
        return None
    t = {"read": 0.0, "evaluate": 0.0, "format": 0.0, "write": 0.0}
    stream = columnar.chunks(source, offset, line + 1, chunk, interrupt)
    with open(os.devnull, "wb") as sink:
        while True:
            s = time.perf_counter()
            numbers, block, _ = next(stream, (None, None, None))
            if numbers is None:
                break
            x, y = columnar.parse_block(block, 2)
            t["read"] += time.perf_counter() - s
            s = time.perf_counter()
            res = core_batch.evaluate_batch(program, {"x": x, "y": y}, len(numbers), grad=True)
            t["evaluate"] += time.perf_counter() - s
            s = time.perf_counter()
            ch = cli_batch.Chunk(numbers)
            runner.write_group(ch, expr, range(len(numbers)), res)
            t["format"] += time.perf_counter() - s
            s = time.perf_counter()
            sink.write(ch.data)
            t["write"] += time.perf_counter() - s
    source.close()
    return t


def eval_vs_numpy(n: int, expr: str, chunk: int, repeat: int) -> dict:
    from autograd_cli.core import batch as core_batch
    from autograd_cli.grammar import parse

    program = parse(expr)
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=n), rng.normal(size=n)

    def chunked():
        for lo in range(0, n, chunk):
            core_batch.evaluate_batch(
                program,
                {"x": x[lo : lo + chunk], "y": y[lo : lo + chunk]},
                min(chunk, n - lo),
                grad=True,
            )

    def whole():
        return core_batch.evaluate_batch(program, {"x": x, "y": y}, n, grad=True)

    def reference():
        return numpy_reference(x, y)

    r = whole()
    v, g = reference()
    same = bool(
        np.allclose(r.value, v, rtol=1e-13, atol=0)
        and all(np.allclose(r.grad[k], g[k], rtol=1e-13, atol=0) for k in g)
    )
    out = {
        "numpy": best(reference, repeat),
        "batched_chunked": best(chunked, repeat),
        "batched_whole": best(whole, repeat),
        "agrees_with_numpy": same,
    }
    out["ratio_chunked"] = out["batched_chunked"] / out["numpy"]
    out["ratio_whole"] = out["batched_whole"] / out["numpy"]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", nargs="+", type=float, default=[1e4, 1e5, 1e6])
    ap.add_argument("--expr", default=DEFAULT_EXPR)
    ap.add_argument("--chunk-size", type=int, default=65536)
    ap.add_argument(
        "--verify",
        type=int,
        default=1000,
        help="random rows compared with per-row evaluation (sizes <= 1e6; 0: none)",
    )
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--parts-size", type=float, default=1e6)
    ap.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "results", "batch.json")
    )
    args = ap.parse_args(argv)
    if args.expr != DEFAULT_EXPR:
        print(
            "note: the NumPy reference is written for the default expression; "
            "eval-vs-numpy is skipped",
            file=sys.stderr,
        )
    sizes = sorted(int(s) for s in args.sizes)
    work = tempfile.mkdtemp(prefix="bench_batch_")
    results = {
        "expr": args.expr,
        "chunk_size": args.chunk_size,
        "cpus": os.cpu_count(),
        "numpy": np.__version__,
        "python": sys.version.split()[0],
        "runs": [],
    }
    try:
        print(f"expr: {args.expr}   chunk: {args.chunk_size}   cpus: {os.cpu_count()}")
        print(
            f"{'rows':>10} {'wall s':>8} {'rows/s':>10} {'peak RSS MiB':>13} "
            f"{'input MB':>9} {'verified':>10}"
        )
        for n in sizes:
            csv_path = os.path.join(work, f"pts_{n}.csv")
            make_csv(csv_path, n)
            out_path = os.path.join(work, f"out_{n}.jsonl")
            wall, rss, _ = run_cli(
                [
                    "batch",
                    csv_path,
                    "--expr",
                    args.expr,
                    "-o",
                    out_path,
                    "--chunk-size",
                    str(args.chunk_size),
                    "--no-progress",
                ]
            )
            checked = ""
            mismatches = None
            if args.verify and n <= 1_000_000:
                mismatches = verify(csv_path, out_path, args.expr, args.verify)
                checked = f"{min(args.verify, n)}: {'ok' if not mismatches else 'FAIL'}"
            size_mb = os.path.getsize(csv_path) / 1e6
            print(
                f"{n:>10} {wall:>8.2f} {n / wall:>10.0f} {rss:>13} {size_mb:>9.1f} {checked:>10}",
                flush=True,
            )
            results["runs"].append(
                {
                    "rows": n,
                    "wall_s": wall,
                    "peak_rss_mib": rss,
                    "input_mb": size_mb,
                    "verified_rows": min(args.verify, n) if mismatches is not None else 0,
                    "mismatches": mismatches,
                }
            )
            os.remove(out_path)
            if n != int(args.parts_size):
                os.remove(csv_path)
        n = int(args.parts_size)
        csv_path = os.path.join(work, f"pts_{n}.csv")
        if not os.path.exists(csv_path):
            make_csv(csv_path, n)
        for name, measure in (("parts", parts), ("parts_pyarrow", parts_fast)):
            t = measure(csv_path, args.expr, args.chunk_size)
            if t is None:
                print(f"\n{name}: not measured (PyArrow or orjson not installed)")
                continue
            results[name] = {"rows": n, **t}
            print(
                f"\n{name} for {n} rows (in-process, seconds): "
                + ", ".join(f"{k} {v:.2f}" for k, v in t.items())
                + f"; total {sum(t.values()):.2f}"
            )
        if args.expr == DEFAULT_EXPR:
            e = eval_vs_numpy(n, args.expr, args.chunk_size, args.repeat)
            results["eval_vs_numpy"] = {"rows": n, **e}
            print(
                f"evaluation of value+gradient for {n} rows: numpy {e['numpy']:.3f} s, "
                f"batched {e['batched_chunked']:.3f} s in chunks of {args.chunk_size} "
                f"({e['ratio_chunked']:.2f}x numpy), {e['batched_whole']:.3f} s in one "
                f"piece ({e['ratio_whole']:.2f}x); agrees with numpy: "
                f"{e['agrees_with_numpy']}"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(results, f, indent=2)
    print(f"\nresults written to {args.out}")
    bad = sum(r["mismatches"] or 0 for r in results["runs"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
