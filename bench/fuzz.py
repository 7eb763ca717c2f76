"""Fuzz the command line in-process: N generated inputs against the contract.

    python bench/fuzz.py --n 100000 [--seed S] [--jobs 2] [--timeout 10] [--out report.json]

The generators and the properties are tests/fuzzgen.py's, the same ones tests/test_fuzz.py
runs under Hypothesis: random text, near-valid mutations of valid expressions and programs,
valid invocations of every command with random flags, and random expression trees whose
``eval``/``grad`` must equal a NumPy evaluation built from the tree.  Input ``i`` is drawn
from ``random.Random(f"{seed}:{i}")`` and its category is ``i % 4``, so a run is the same
whatever ``--jobs`` is, and any input can be replayed alone (``--replay I``).

Findings are grouped by class (exit code outside the contract, traceback, internal kind,
kind not in the README's table, kind/exit mismatch, bad JSON, wrong value, hang past
``--timeout`` seconds, a per-input ``signal.alarm``); each class gets its smallest
reproducer, shrunk further (flags dropped, the expression cut, a wrong value's tree pruned).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import fuzzgen as fg  # noqa: E402

CATEGORIES = list(fg.GENERATORS)
CLASSES = [
    "exit_code",
    "traceback",
    "internal",
    "kind_not_in_table",
    "kind_exit_mismatch",
    "bad_json",
    "wrong_value",
    "hang",
]


class _Hang(BaseException):
    """Raised by the alarm; the tool's boundary may report it as internal, so the flag
    below is what says an input hung."""


_ALARM = {"fired": False}


def _on_alarm(signum, frame):
    _ALARM["fired"] = True
    raise _Hang()


def case_of(seed, i: int) -> fg.Case:
    import random

    rng = random.Random(f"{seed}:{i}")
    return fg.generate(rng, CATEGORIES[i % len(CATEGORIES)])


def run_case(case: fg.Case, folder: str, table: dict, timeout: float) -> tuple:
    """(findings, exit code, seconds) of one case, with a per-input alarm."""
    argv = case.materialize(folder)
    _ALARM["fired"] = False
    signal.setitimer(signal.ITIMER_REAL, timeout)
    start = time.perf_counter()
    try:
        code, out, err = fg.run_inprocess(argv)
    except _Hang:
        code, out, err = -1, "", ""
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    seconds = time.perf_counter() - start
    if _ALARM["fired"]:
        return [("hang", f"over {timeout:g} s")], code, seconds
    return fg.case_findings(case, argv, code, out, err, table), code, seconds


def _import_all():
    """Every module of the tool, imported now (the commands import some lazily)."""
    import importlib
    import pkgutil

    import autograd_cli

    packages = [autograd_cli] + [
        importlib.import_module(f"autograd_cli.{name}") for name in ("core", "cli", "grammar")
    ]
    for package in packages:
        for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if not module.name.endswith("__main__"):
                importlib.import_module(module.name)
    for argv in (["eval", "x", "--x", "1"], ["diff", "sin(x)"], ["explain", "x*y", "--x", "1"]):
        fg.run_inprocess(argv)


def _worker_init():
    os.environ.pop("AUTOGRAD_CLI_DEBUG", None)
    signal.signal(signal.SIGALRM, _on_alarm)
    _import_all()


def _work(task):
    seed, indices, timeout = task
    table = fg.readme_table()
    counts, codes, found = Counter(), Counter(), []
    slowest = (0.0, None)
    with tempfile.TemporaryDirectory(prefix="fuzz-") as folder:
        for i in indices:
            case = case_of(seed, i)
            counts[case.category] += 1
            try:
                pairs, code, seconds = run_case(case, folder, table, timeout)
            except Exception as exc:  # noqa: BLE001 - a bug of the harness, not the tool
                pairs, code, seconds = [("harness", f"{type(exc).__name__}: {exc}")], -1, 0.0
            codes[(case.category, code)] += 1
            if seconds > slowest[0]:
                slowest = (seconds, i)
            for cls, detail in pairs:
                found.append((cls, i, detail))
    return counts, codes, found, slowest


def _size(case: fg.Case) -> int:
    return len(json.dumps(case.describe(), ensure_ascii=False))


def _reproduces(case: fg.Case, cls: str, folder: str, table: dict, timeout: float) -> bool:
    try:
        pairs, _, _ = run_case(case, folder, table, timeout)
    except Exception:  # noqa: BLE001
        return False
    return any(c == cls for c, _ in pairs)


def shrink(case: fg.Case, cls: str, table: dict, timeout: float, budget: int = 300) -> fg.Case:
    """A smaller case with the same class of finding (greedy; at most ``budget`` runs)."""
    if cls == "hang":
        return case
    runs = 0
    with tempfile.TemporaryDirectory(prefix="fuzz-shrink-") as folder:

        def holds(candidate) -> bool:
            nonlocal runs
            runs += 1
            return _reproduces(candidate, cls, folder, table, timeout)

        if case.oracle is not None:
            changed = True
            while changed and runs < budget:
                changed = False
                for smaller in fg.subtrees(case.oracle.tree):
                    if runs >= budget:
                        break
                    oc = fg.make_oracle_case(smaller, case.oracle.env)
                    argv = fg.oracle_argv(oc, case.op)
                    if not argv:
                        continue
                    candidate = fg.Case(case.category, argv, oracle=oc, op=case.op)
                    if holds(candidate):
                        case, changed = candidate, True
                        break
            return case
        # drop arguments (the command's name stays)
        i = 1
        while i < len(case.argv) and runs < budget:
            for width in (2, 1):
                argv = case.argv[:i] + case.argv[i + width :]
                candidate = fg.Case(case.category, argv, case.file_name, case.file_text)
                if len(argv) > 1 and holds(candidate):
                    case = candidate
                    break
            else:
                i += 1
        # cut the text arguments and the batch file, chunk by chunk
        for slot in range(len(case.argv) + 1):
            is_file = slot == len(case.argv)
            if is_file and case.file_text is None:
                continue
            text = case.file_text if is_file else case.argv[slot]
            if not is_file and (slot == 0 or text.startswith("--") or text == "@INPUT"):
                continue
            chunk = max(1, len(text) // 2)
            while chunk >= 1 and runs < budget:
                cut = False
                start = 0
                while start < len(text) and runs < budget:
                    smaller = text[:start] + text[start + chunk :]
                    if is_file:
                        candidate = fg.Case(case.category, case.argv, case.file_name, smaller)
                    else:
                        argv = list(case.argv)
                        argv[slot] = smaller
                        candidate = fg.Case(case.category, argv, case.file_name, case.file_text)
                    if holds(candidate):
                        case, text, cut = candidate, smaller, True
                    else:
                        start += chunk
                if not cut:
                    chunk //= 2
    return case


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="inputs to try")
    parser.add_argument("--seed", default="0")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per input")
    parser.add_argument("--out", help="write the report here as JSON")
    parser.add_argument(
        "--max-seconds",
        type=float,
        help="stop starting new inputs after this long and report those finished",
    )
    parser.add_argument("--no-shrink", action="store_true")
    parser.add_argument("--replay", type=int, help="print input I's case and findings")
    args = parser.parse_args(argv)

    table = fg.readme_table()
    if args.replay is not None:
        _worker_init()
        case = case_of(args.seed, args.replay)
        with tempfile.TemporaryDirectory() as folder:
            pairs, code, seconds = run_case(case, folder, table, args.timeout)
        print(json.dumps({"case": case.describe(), "exit": code, "findings": pairs}, indent=1))
        return 0

    start = time.time()
    block = 100
    tasks = [
        (args.seed, range(lo, min(lo + block, args.n)), args.timeout)
        for lo in range(0, args.n, block)
    ]
    counts, codes, found = Counter(), Counter(), []
    slowest = (0.0, None)
    # Import the whole tool once, here, before the workers fork: every input then runs the
    # same code, even if the working tree changes during a long run.
    _worker_init()
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    ctx = multiprocessing.get_context("fork")
    done = 0
    stopped = False
    with ctx.Pool(args.jobs, initializer=_worker_init) as pool:
        for c, k, f, s in pool.imap_unordered(_work, tasks):
            counts.update(c)
            codes.update(k)
            found.extend(f)
            slowest = max(slowest, s, key=lambda p: p[0])
            done += sum(c.values())
            elapsed = time.time() - start
            print(
                f"\r{done}/{args.n} inputs, {len(found)} findings, {elapsed:.0f} s",
                end="",
                file=sys.stderr,
                flush=True,
            )
            if args.max_seconds is not None and elapsed > args.max_seconds:
                stopped = True
                pool.terminate()
                break
    print(file=sys.stderr)
    elapsed = time.time() - start

    _worker_init()
    by_class: dict = {}
    for cls, i, detail in found:
        by_class.setdefault(cls, []).append((i, detail))
    tried = sum(counts.values())
    report = {
        "n": tried,
        "asked": args.n,
        "stopped_by_time_limit": stopped,
        "seed": args.seed,
        "jobs": args.jobs,
        "timeout_s": args.timeout,
        "seconds": round(elapsed, 1),
        "slowest_input": {"index": slowest[1], "seconds": round(slowest[0], 3)},
        "inputs": {c: counts[c] for c in CATEGORIES},
        "exit_codes": {
            c: {str(code): n for (cat, code), n in sorted(codes.items()) if cat == c}
            for c in CATEGORIES
        },
        "findings": {},
    }
    for cls in sorted(by_class, key=lambda c: (CLASSES + [c]).index(c)):
        hits = by_class[cls]
        cases = [(i, d, case_of(args.seed, i)) for i, d in hits[:200]]
        i, detail, smallest = min(cases, key=lambda t: _size(t[2]))
        shrunk = smallest if args.no_shrink else shrink(smallest, cls, table, args.timeout)
        categories = Counter(CATEGORIES[j % len(CATEGORIES)] for j, _ in hits)
        report["findings"][cls] = {
            "count": len(hits),
            "by_category": dict(categories),
            "first_indices": [j for j, _ in hits[:10]],
            "detail": detail,
            "reproducer": shrunk.describe(),
            "original_index": i,
        }

    note = f" (of {args.n} asked; stopped by --max-seconds)" if stopped else ""
    print(f"autograd-cli fuzz: {tried} inputs{note}, seed {args.seed}, {elapsed:.0f} s")
    print(f"{'category':<12} {'inputs':>8}  exit codes")
    for c in CATEGORIES:
        spread = ", ".join(f"{k}: {v}" for k, v in report["exit_codes"][c].items())
        print(f"{c:<12} {counts[c]:>8}  {spread}")
    print(f"\n{'finding':<20} {'count':>7}  minimal reproducer")
    for cls in CLASSES + sorted(set(by_class) - set(CLASSES)):
        entry = report["findings"].get(cls)
        if entry is None:
            print(f"{cls:<20} {0:>7}")
            continue
        repro = json.dumps(entry["reproducer"], ensure_ascii=True)
        print(f"{cls:<20} {entry['count']:>7}  {repro[:400]}")
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1, ensure_ascii=True) + "\n")
    return 1 if by_class else 0


if __name__ == "__main__":
    sys.exit(main())
