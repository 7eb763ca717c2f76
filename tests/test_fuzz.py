"""Property-based fuzzing of the command line against the contract (issue 11).

The generators and the properties live in tests/fuzzgen.py, shared with bench/fuzz.py (which
runs the same generators for 100,000 inputs).  Here Hypothesis drives them, derandomized, so
CI sees the same inputs every run; the whole module takes well under a minute.

Properties, for every input (SPEC "Exit codes", README "JSON output and exit codes"): the exit
code is 0, 1, 2 or 130; no "Traceback" on either stream; with --json exactly one valid UTF-8
JSON document on stdout (batch: one per line); an error's kind is in the README's table and
its exit code is the table's; never kind ``internal``.  For valid generated expressions the
value, gradient and symbolic derivative equal an independent NumPy evaluation of the same tree.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys

import fuzzgen as fg
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

TABLE = fg.readme_table()

FUZZ = settings(
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
RNG = st.randoms(use_true_random=False)


@pytest.fixture
def invoke(cli, tmp_path):
    """Run a generated case in-process and return its findings (empty: the contract holds)."""

    def go(case: fg.Case):
        argv = case.materialize(str(tmp_path))
        try:
            r = cli(*argv)
        finally:
            fg.forget_run_state()
        return fg.case_findings(case, argv, r.code, r.out, r.err, TABLE), r

    return go


def _assert_clean(case, found, r):
    assert not found, (case.describe(), r.code, r.out[-2000:], r.err[-2000:], found)


# ---- the table the properties read ------------------------------------------------------------


def test_the_table_is_parsed():
    assert TABLE["syntax"] == {2} and TABLE["shape"] == {1} and TABLE["bad_line"] == {1}
    assert TABLE["interrupted"] == {129, 130, 143} and "internal" in TABLE


def test_the_properties_catch_what_they_should():
    """A guard on the checker: each class of finding is recognised."""
    ok = '{"expr": "x", "value": 1.0, "shape": []}'

    def classes(argv, code, out, err=""):
        return {c for c, _ in fg.findings(argv, code, out, err, TABLE)}

    assert classes(["eval", "x", "--json"], 0, ok) == set()
    assert classes(["eval", "x", "--json"], 3, ok) == {"exit_code", "kind_exit_mismatch"}
    assert classes(["eval", "x"], 1, "", "Traceback (most recent call last):") == {"traceback"}
    assert classes(["eval", "x", "--json"], 0, ok + ok) == {"bad_json"}
    assert classes(["eval", "x", "--json"], 0, '{"a": "\udcff"}') == {"bad_json"}
    internal = '{"error": {"kind": "internal", "message": "internal error: ..."}}'
    assert classes(["eval", "x", "--json"], 1, internal) == {"internal"}
    assert classes(["eval", "x", "--json"], 1, '{"error": {"kind": "oops"}}') == {
        "kind_not_in_table"
    }
    assert classes(["eval", "x", "--json"], 1, '{"error": {"kind": "syntax"}}') == {
        "kind_exit_mismatch"
    }
    batch = '{"line": 1, "value": 1}\n{"line": 2, "error": {"kind": "syntax"}}\n'
    assert classes(["batch", "f", "--json"], 1, batch) == set()
    assert classes(["batch", "f"], 0, batch) == {"kind_exit_mismatch"}
    assert classes(["batch", "f"], 1, batch + "{\n") == {"bad_json"}
    oc = fg.make_oracle_case(("+", ("var", "x"), ("const", 1.0)), {"x": np.float64(2.0)})
    assert fg.oracle_findings(oc, "eval", 0, '{"value": 3.0}') == []
    assert fg.oracle_findings(oc, "eval", 0, '{"value": 3.1}')[0][0] == "wrong_value"
    assert fg.oracle_findings(oc, "grad", 0, '{"grad": {"x": 1.0}}') == []
    assert fg.oracle_findings(oc, "grad", 0, '{"grad": {"x": "nan"}}')[0][0] == "wrong_value"


# ---- (a) random text, (b) near-valid mutations, (c) valid invocations ---------------------------


@settings(FUZZ, max_examples=150)
@given(rng=RNG)
def test_random_text(invoke, rng):
    case = fg.random_text_case(rng)
    _assert_clean(case, *invoke(case))


@settings(FUZZ, max_examples=200)
@given(rng=RNG)
def test_mutations_of_valid_programs(invoke, rng):
    case = fg.mutated_case(rng)
    _assert_clean(case, *invoke(case))


@pytest.mark.parametrize("command", fg.ALL_COMMANDS)
@settings(FUZZ, max_examples=25)
@given(rng=RNG)
def test_valid_invocations(invoke, command, rng):
    case = fg.valid_case(rng, command)
    found, r = invoke(case)
    _assert_clean(case, found, r)


# ---- values against an independent evaluation --------------------------------------------------


@pytest.mark.parametrize("op", ["eval", "grad", "diff"])
@settings(FUZZ, max_examples=80)
@given(rng=RNG)
def test_values_equal_an_independent_evaluation(invoke, op, rng):
    oc = fg.oracle_case(rng)
    argv = fg.oracle_argv(oc, op)
    if not argv:  # diff takes scalar values only
        return
    case = fg.Case("oracle", argv, oracle=oc, op=op)
    found, r = invoke(case)
    assert r.code == 0, (argv, r.out)
    _assert_clean(case, found, r)


@settings(FUZZ, max_examples=25)
@given(rng=RNG)
def test_the_oracle_agrees_with_sympy(rng):
    """The NumPy oracle itself, checked against SymPy's derivative of the same tree."""
    sympy = pytest.importorskip("sympy")
    oc = fg.oracle_case(rng)
    if any(np.ndim(v) for v in oc.env.values()):
        return
    symbols = {n: sympy.Symbol(n, real=True) for n in oc.env}
    fns = {
        "sin": sympy.sin, "cos": sympy.cos, "exp": sympy.exp, "log": sympy.log,
        "sqrt": sympy.sqrt, "tanh": sympy.tanh, "abs": sympy.Abs, "neg": lambda a: -a,
        "sinh": sympy.sinh, "cosh": sympy.cosh, "atan": sympy.atan, "tan": sympy.tan,
        "log2": lambda a: sympy.log(a, 2), "log10": lambda a: sympy.log(a, 10),
        "sigmoid": lambda a: 1 / (1 + sympy.exp(-a)), "softplus": lambda a: sympy.log(1 + sympy.exp(a)),
        # relu as a Piecewise, not Max: at 0 its derivative is then 0 (PyTorch's relu'(0)),
        # where Max's is Heaviside(0) = 1/2
        "relu": lambda a: sympy.Piecewise((a, a > 0), (0, True)),
    }  # fmt: skip

    def build(t):
        if t[0] == "var":
            return symbols[t[1]]
        if t[0] == "const":
            return sympy.Float(t[1], 30)
        if t[0] == "pow":
            return build(t[1]) ** sympy.nsimplify(t[2])
        if t[0] in fg.BINARY:
            a, b = build(t[1]), build(t[2])
            return {"+": a + b, "-": a - b, "*": a * b, "/": a / b}[t[0]]
        return fns[t[0]](build(t[1]))

    f = build(oc.tree)
    value, grad, _ = fg.oracle(oc.tree, oc.env)
    at = {symbols[n]: sympy.Float(float(v), 30) for n, v in oc.env.items()}
    for name, want in grad.items():
        if not np.isfinite(want) or not np.isfinite(value) or abs(want) > 1e12:
            continue
        exact = complex(sympy.diff(f, symbols[name]).evalf(30, subs=at))
        if abs(exact.imag) > 1e-12 or not math.isfinite(exact.real):
            continue
        assert exact.real == pytest.approx(float(want), rel=1e-6, abs=1e-9), (oc.text, name)


# ---- a few runs through the real entry point -----------------------------------------------------


def _command() -> list:
    exe = shutil.which("autograd-cli")
    return [exe] if exe else [sys.executable, "-m", "autograd_cli"]


@pytest.mark.parametrize(
    "category, seed", [(c, s) for c in ("random_text", "mutated", "valid") for s in (1, 2)]
)
def test_the_real_entry_point(tmp_path, category, seed):
    """stdout's bytes are strictly UTF-8 here: the JSON check is on what a pipe gets."""
    import random

    case = fg.generate(random.Random(f"subprocess:{category}:{seed}"), category)
    argv = case.materialize(str(tmp_path)) + ["--json"]
    env = {k: v for k, v in os.environ.items() if k != "AUTOGRAD_CLI_DEBUG"}
    r = subprocess.run(
        _command() + argv, capture_output=True, stdin=subprocess.DEVNULL, env=env, timeout=120
    )
    out = r.stdout.decode("utf-8")  # strict: a bad byte fails the test
    err = r.stderr.decode("utf-8", errors="replace")
    found = fg.case_findings(case, argv, r.returncode, out, err, TABLE)
    assert not found, (case.describe(), r.returncode, out[-2000:], err[-2000:])
    if fg.command_of(argv) != "batch":
        json.loads(out)
