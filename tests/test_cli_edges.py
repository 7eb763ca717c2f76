"""Edges of the command line (issue 16): the corners of ``batch`` and of the single commands
that the main tests do not reach.

Every test checks a right answer against an oracle that does not come from the code path
under test:

* SPEC.md / README.md: the documented exit code, error kind and message of each mistake;
* the single command's ``--json`` document for the same values (a batch line must be that
  document plus ``"line"``);
* numbers worked out here with NumPy / plain arithmetic, or PyTorch (``torch`` fixture).

Tests that need a real process (closed descriptors, odd stdin, non-blocking pipes) run the
installed console script, found with ``shutil.which("autograd-cli")``.
"""

from __future__ import annotations

import fcntl
import functools
import io
import itertools
import json
import math
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading

import numpy as np
import pytest

from autograd_cli.cli import batch as cli_batch
from autograd_cli.cli import files, options
from autograd_cli.cli.main import run

CLI = shutil.which("autograd-cli") or (
    os.path.join(os.path.dirname(sys.executable), "autograd-cli")
    if os.path.exists(os.path.join(os.path.dirname(sys.executable), "autograd-cli"))
    else None
)
needs_cli = pytest.mark.skipif(CLI is None, reason="the autograd-cli console script is missing")
posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX descriptors and signals")
TIMEOUT = 120


def _child_setup():
    for signum in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if signum is not None:
            signal.signal(signum, signal.SIG_DFL)


def run_cli(*args, **kwargs):
    kwargs.setdefault("stdin", subprocess.DEVNULL)
    kwargs.setdefault("stdout", subprocess.PIPE)
    kwargs.setdefault("stderr", subprocess.PIPE)
    kwargs.setdefault("timeout", TIMEOUT)
    preexec = kwargs.pop("preexec", None)

    def setup():
        _child_setup()
        if preexec is not None:
            preexec()

    return subprocess.run([CLI, *map(str, args)], preexec_fn=setup, **kwargs)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def jsonl(rows) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


def docs(out: str) -> list:
    return [json.loads(line) for line in out.splitlines()]


def single(cli, *argv):
    """The single command's --json document (the oracle for a batch line)."""
    r = cli(*argv, "--json")
    return r.json


# =============================================================================================
# batch: JSONL records
# =============================================================================================


def test_jsonl_wrt_spellings_match_the_single_command(tmp_path, cli):
    """ "wrt": null means every variable, "wrt": "y, x" is a comma list (like --wrt)."""
    path = write(
        tmp_path,
        "in.jsonl",
        jsonl(
            [
                {"expr": "x*y**2", "vars": {"x": 3, "y": 2}, "wrt": None},
                {"expr": "x*y**2", "vars": {"x": 3, "y": 2}, "wrt": "y, x"},
                {"expr": "x*y**2", "vars": {"x": 3, "y": 2}, "wrt": ["y"]},
            ]
        ),
    )
    r = cli("batch", path)
    assert r.code == 0, r.err
    got = docs(r.out)
    assert got[0] == {"line": 1, **single(cli, "grad", "x*y**2", "--x", "3", "--y", "2")}
    assert got[1] == {
        "line": 2,
        **single(cli, "grad", "x*y**2", "--x", "3", "--y", "2", "--wrt", "y,x"),
    }
    # d/dy x*y**2 = 2xy = 12, d/dx = y**2 = 4, and the order asked for is kept
    assert list(got[1]["grad"].items()) == [("y", 12.0), ("x", 4.0)]
    assert got[2]["grad"] == {"y": 12.0}


@pytest.mark.parametrize(
    "line, kind, words",
    [
        ({"expr": "x", "vars": {"x": 1}, "wrt": 5}, "bad_line", "'wrt' must be a list"),
        ({"expr": "x", "vars": {"x": 1}, "wrt": ["x", 2]}, "bad_line", "'wrt' must be a list"),
        ({"expr": "x", "vars": {"x": 1}, "wrt": ["1y"]}, "bad_line", "'1y' is not a variable"),
        ('{"expr": "x", "vars": {"x": 1}} trailing', "bad_line", "not valid JSON: Extra data"),
        ({"expr": "x", "vars": {"x": 1}, "bogus": 1}, "bad_line", "unknown key(s) 'bogus'"),
        ({"expr": "x", "vars": [1]}, "bad_line", '"vars" must be an object'),
        ({"vars": {"x": 1}}, "bad_line", "no expression"),
        ({"expr": 5, "vars": {"x": 1}}, "bad_line", '"expr" must be a string'),
        ({"expr": "x", "vars": {"1x": 1}}, "bad_value", "'1x' is not a valid variable name"),
        ({"expr": "x**3", "vars": {"x": 2}, "order": 0}, "bad_line", '"order" must be a positive'),
        ({"expr": "x**3", "vars": {"x": 2}, "order": True}, "bad_line", '"order" must be a pos'),
        ({"expr": "x**3", "vars": {"x": 2}, "order": 1.5}, "bad_line", '"order" must be a pos'),
        ({"expr": "x", "vars": {"x": [1, True]}}, "bad_value", "holds True, not a number"),
        ({"expr": "x", "vars": {"x": ["one"]}}, "bad_value", "holds 'one', not a number"),
        ("[" * 5000 + "]" * 5000, "bad_line", "nests too deeply"),
    ],
    ids=lambda v: v if isinstance(v, str) and len(v) < 40 else None,
)
def test_bad_records_get_their_error_and_the_good_lines_still_run(tmp_path, cli, line, kind, words):
    """SPEC: a bad line never stops or loses the others; the exit code is 1."""
    path = write(
        tmp_path,
        "in.jsonl",
        jsonl([{"expr": "x*2", "vars": {"x": 1}}, line, {"expr": "x*2", "vars": {"x": 5}}]),
    )
    r = cli("batch", path)
    assert r.code == 1
    assert "1 of 3 line(s) failed" in r.err
    first, bad, last = docs(r.out)
    assert first == {"line": 1, **single(cli, "grad", "x*2", "--x", "1")}
    assert last == {"line": 3, **single(cli, "grad", "x*2", "--x", "5")}
    assert bad["line"] == 2 and set(bad) == {"line", "error"}
    assert bad["error"]["kind"] == kind
    assert words in bad["error"]["message"]


def test_order_from_the_command_line_applies_to_jsonl_lines(tmp_path, cli):
    """--order is a default that a JSONL line may override (README, batch)."""
    path = write(tmp_path, "in.jsonl", jsonl([{"x": 2}, {"vars": {"x": 3}, "order": 1}, {"x": -1}]))
    r = cli("batch", path, "--expr", "x**4", "--order", "3")
    assert r.code == 0, r.err
    got = [d["grad"]["x"] for d in docs(r.out)]
    # d^3/dx^3 x**4 = 24 x; order 1: 4 x**3
    assert got == [48.0, 4 * 27.0, -24.0]
    assert docs(r.out)[0] == {
        "line": 1,
        **single(cli, "grad", "x**4", "--x", "2", "--order", "3"),
    }


def test_order_and_grad_output_together_are_a_bad_line(tmp_path, cli):
    path = write(
        tmp_path,
        "in.jsonl",
        jsonl([{"expr": "v*x", "vars": {"x": 2, "v": [1, 2]}, "order": 2, "grad_output": [1, 1]}]),
    )
    r = cli("batch", path)
    assert r.code == 1
    (doc,) = docs(r.out)
    assert doc["error"]["kind"] == "bad_line"
    assert "cannot be combined" in doc["error"]["message"]
    # the single command refuses the same combination (as a usage error)
    one = cli("grad", "v*x", "--x", "2", "--v", "[1,2]", "--order", "2", "--grad-output", "[1,1]")
    assert one.code == 2 and "cannot be combined" in one.err


def test_diff_lines_with_an_order_and_hessian_lines_without_one(tmp_path, cli):
    path = write(
        tmp_path,
        "in.jsonl",
        jsonl(
            [
                {"expr": "x**3*y", "vars": {"x": 2, "y": 5}, "op": "diff", "order": 2},
                {"expr": "x**3*y", "vars": {"x": 2, "y": 5}, "op": "hessian", "order": 2},
                {"expr": "x**3*y", "vars": {"x": 2, "y": 5}, "op": "jacobian", "order": 1},
            ]
        ),
    )
    r = cli("batch", path)
    assert r.code == 1
    diff_doc, hess_doc, jac_doc = docs(r.out)
    assert diff_doc == {
        "line": 1,
        **single(cli, "diff", "x**3*y", "--x", "2", "--y", "5", "--order", "2"),
    }
    # d2/dx2 x**3 y = 6 x y = 60; d2/dy2 = 0
    assert diff_doc["derivative_value"] == {"x": 60.0, "y": 0.0}
    assert hess_doc["error"] == {"kind": "unsupported", "message": "hessian does not take an order"}
    # order 1 is every op's own order: the Jacobian, as the single command gives it
    assert jac_doc == {"line": 3, **single(cli, "jacobian", "x**3*y", "--x", "2", "--y", "5")}


def test_a_bad_expression_on_a_row_by_row_line_reports_where(tmp_path, cli):
    path = write(
        tmp_path,
        "in.jsonl",
        jsonl(
            [
                {"expr": "x**", "vars": {"x": 2}, "op": "hessian"},
                {"expr": "foo(x)", "vars": {"x": 2}, "op": "jacobian"},
            ]
        ),
    )
    r = cli("batch", path)
    assert r.code == 1
    syntax, unknown = docs(r.out)
    expected = single(cli, "hessian", "x**", "--x", "2")["error"]
    assert syntax == {"line": 1, "error": expected}
    assert (expected["kind"], expected["line"], expected["column"]) == ("syntax", 1, 4)
    assert unknown["error"]["kind"] == "unknown_function"
    assert unknown["error"] == single(cli, "jacobian", "foo(x)", "--x", "2")["error"]


def test_eval_lines_that_carry_a_grad_output_are_plain_evaluations(tmp_path, cli):
    """grad_output only matters for grad; an eval line is evaluated as eval."""
    path = write(
        tmp_path,
        "in.jsonl",
        jsonl(
            [{"expr": "v * x", "vars": {"x": 3, "v": [1, 2]}, "op": "eval", "grad_output": [1, 1]}]
        ),
    )
    r = cli("batch", path)
    assert r.code == 0, r.err
    assert docs(r.out) == [{"line": 1, **single(cli, "eval", "v * x", "--x", "3", "--v", "[1,2]")}]
    assert docs(r.out)[0]["value"] == [3.0, 6.0]


def test_many_distinct_expressions_stay_exact(tmp_path, cli):
    """More expressions than the parse and line-template caches hold (512 and 1024)."""
    n = 1100
    rows = [{"expr": f"x*{i} + y", "vars": {"x": 1.5, "y": i / 4}} for i in range(n)]
    path = write(tmp_path, "in.jsonl", jsonl(rows))
    r = cli("batch", path)
    assert r.code == 0, r.err
    got = docs(r.out)
    assert len(got) == n
    for i, d in enumerate(got):
        assert d == {
            "line": i + 1,
            "expr": f"x*{i} + y",
            "value": 1.5 * i + i / 4,
            "shape": [],
            "grad": {"x": float(i), "y": 1.0},
        }


def test_rows_with_many_different_warning_sets(tmp_path, cli):
    """32 rows, each with its own set of kink warnings, in one vectorised group: every line is
    the single command's document for that row (values, gradients and warnings)."""
    expr = "abs(a) + relu(b) + sqrt(c) + max(d, h) + log(f)"
    rows = []
    for bits in itertools.product((0, 1), repeat=5):
        a, b, c, tie, f = bits
        rows.append(
            {
                "a": 0.0 if a else 1.5,
                "b": 0.0 if b else -2.0,
                "c": 0.0 if c else 4.0,
                "d": 1.0,
                "h": 1.0 if tie else 3.0,
                "f": 0.0 if f else 2.0,
            }
        )
    path = write(tmp_path, "in.jsonl", jsonl(rows))
    r = cli("batch", path, "--expr", expr)
    assert r.code == 0, r.err
    got = docs(r.out)
    assert len({tuple(d.get("warnings", ())) for d in got}) == 32
    for i, (row, d) in enumerate(zip(rows, got)):
        argv = ["grad", expr]
        for k, v in row.items():
            argv += [f"--{k}", str(v)]
        assert d == {"line": i + 1, **single(cli, *argv)}
    # spot check with arithmetic: all at the kinks
    last = got[-1]["grad"]
    assert last == {"a": 0.0, "b": 0.0, "c": "inf", "d": 0.5, "h": 0.5, "f": "inf"}


# =============================================================================================
# batch: CSV
# =============================================================================================


def test_csv_header_naming_a_column_twice_is_a_usage_error(tmp_path, cli):
    r = cli("batch", write(tmp_path, "d.csv", "x,x\n1,2\n"), "--expr", "x", "--json")
    assert r.code == 2
    assert r.json == {"error": {"kind": "usage", "message": "the CSV header names 'x' twice"}}


def test_csv_column_missing_for_the_expression_is_exit_2(tmp_path, cli):
    r = cli("batch", write(tmp_path, "p.csv", "x,y\n1,2\n"), "--expr", "x*y*z", "--json")
    assert r.code == 2
    assert r.json["error"]["kind"] == "missing_value"
    assert r.json["error"]["variable"] == "z"
    assert "no column 'z'" in r.json["error"]["message"]


def test_csv_wrt_naming_a_non_variable_is_exit_2(tmp_path, cli):
    """SPEC exit 2: --wrt naming a non-variable (found before any row is evaluated)."""
    path = write(tmp_path, "p.csv", "x,y\n1,2\n")
    r = cli("batch", path, "--expr", "x*y", "--wrt", "q", "--json")
    assert r.code == 2
    assert (
        r.json["error"] == single(cli, "grad", "x*y", "--x", "1", "--y", "2", "--wrt", "q")["error"]
    )
    assert r.json["error"]["kind"] == "unknown_variable"


def test_csv_rows_with_one_value_too_many(tmp_path, cli):
    """Every row has 3 cells under a 2-column header: each row is a bad line (not a shifted
    reading of the numbers)."""
    path = write(tmp_path, "w.csv", "x,y\n1,2,3\n4,5,6\n")
    r = cli("batch", path, "--expr", "x*y")
    assert r.code == 1
    assert docs(r.out) == [
        {"line": n, "error": {"kind": "bad_line", "message": "expected 2 value(s) (x, y), got 3"}}
        for n in (2, 3)
    ]


def test_csv_blank_stretches_longer_than_a_chunk(tmp_path, cli):
    path = write(tmp_path, "b.csv", "x,y\n1,2\n\n\n\n  \n3,4\n\n")
    r = cli("batch", path, "--expr", "x*y", "--op", "eval", "--chunk-size", "2")
    assert r.code == 0, r.err
    assert [(d["line"], d["value"]) for d in docs(r.out)] == [(2, 2.0), (7, 12.0)]


def test_csv_fail_fast_stops_at_the_first_bad_row(tmp_path, cli):
    path = write(tmp_path, "f.csv", 'x,v\n1,"[1, 2]"\n2,oops\n3,"[3, 4]"\n')
    r = cli("batch", path, "--expr", "x * sum(v)", "--fail-fast")
    assert r.code == 1
    assert "stopped there: --fail-fast" in r.err
    good, bad = docs(r.out)
    assert good == {"line": 2, **single(cli, "grad", "x * sum(v)", "--x", "1", "--v", "[1, 2]")}
    assert bad["line"] == 3 and bad["error"]["kind"] == "bad_value"


def test_jsonl_fail_fast_stops_at_a_line_that_is_not_json(tmp_path, cli):
    path = write(tmp_path, "f.jsonl", '{"x": 1}\n{"x": \n{"x": 3}\n')
    r = cli("batch", path, "--expr", "x+1", "--op", "eval", "--fail-fast")
    assert r.code == 1
    assert [d.get("error", {}).get("kind") for d in docs(r.out)] == [None, "bad_line"]
    assert docs(r.out)[0]["value"] == 2.0


def test_fail_fast_stops_at_an_overlong_line(tmp_path, cli):
    long = '{"x": 2' + " " * cli_batch.MAX_LINE_BYTES + "}"
    path = write(tmp_path, "f.jsonl", jsonl(['{"x": 1}', long, '{"x": 3}']))
    r = cli("batch", path, "--expr", "x+1", "--op", "eval", "--fail-fast")
    assert r.code == 1
    first, skipped = docs(r.out)
    assert first["value"] == 2.0
    assert skipped == {
        "line": 2,
        "error": {
            "kind": "limit",
            "message": "line 2 is longer than 1 MiB (the most a batch line may have); "
            "it was skipped",
        },
    }


def test_csv_header_longer_than_the_line_limit(tmp_path, cli):
    header = ",".join(f"x{i}" for i in range(cli_batch.MAX_LINE_BYTES // 3))
    assert len(header) > cli_batch.MAX_LINE_BYTES
    path = write(tmp_path, "h.csv", "\n" + header + "\n1\n")
    r = cli("batch", path, "--expr", "x1", "--json")
    assert r.code == 2
    assert r.json["error"] == {
        "kind": "usage",
        "message": "the CSV header (line 2) is longer than 1 MiB: is this a CSV file?",
    }


def test_deeply_nested_csv_cell_is_a_bad_value_record(tmp_path, cli):
    # A value has at most 32 dimensions (NumPy's limit): deeper is a bad value, said in a
    # short message however deep it goes.
    path = write(tmp_path, "n.csv", 'v\n"' + "[" * 5000 + "]" * 5000 + '"\n"[1, 2]"\n')
    r = cli("batch", path, "--expr", "sum(v)", "--op", "eval")
    assert r.code == 1
    deep, ok = docs(r.out)
    assert deep == {
        "line": 2,
        "error": {
            "kind": "bad_value",
            "message": "column 'v': an array nested far too deep; a value has at most 32 "
            "dimensions",
            # the cell is echoed shortened, never whole (10,000 characters here)
            "value": "[" * 100 + "...(9800 more characters)..." + "]" * 100,
        },
    }
    assert ok == {"line": 3, **single(cli, "eval", "sum(v)", "--v", "[1, 2]")}


def test_a_long_array_cell_in_csv_works_like_jsonl(tmp_path, cli):
    v = [0.5] * 40000  # about 200 KB of text: well under the 1 MiB line limit
    csv_path = write(tmp_path, "big.csv", 'v\n"' + json.dumps(v) + '"\n')
    jsonl_path = write(tmp_path, "big.jsonl", jsonl([{"v": v}]))
    from_jsonl = cli("batch", jsonl_path, "--expr", "sum(v)", "--op", "eval")
    assert from_jsonl.code == 0 and docs(from_jsonl.out)[0]["value"] == 20000.0
    from_csv = cli("batch", csv_path, "--expr", "sum(v)", "--op", "eval")
    assert docs(from_csv.out) == [{**docs(from_jsonl.out)[0], "line": 2}]
    assert from_csv.code == 0


def test_a_huge_integer_value_in_a_batch_line_is_not_an_internal_error(tmp_path, cli):
    big = "1" + "0" * 400  # an integer far beyond the largest float (about 1.8e308)
    lines = [
        '{"expr": "x*2", "vars": {"x": BIG}}',
        '{"expr": "sum(v)", "vars": {"v": [BIG, 1]}}',
    ]
    path = write(tmp_path, "big.jsonl", jsonl([line.replace("BIG", big) for line in lines]))
    r = cli("batch", path)
    got = docs(r.out)
    assert len(got) == 2
    # An internal error is not right; nor is inf, which would hide a slip of 400 digits: the
    # --x spelling of the same digits is refused too, as the expression's literal is
    # (1e400 is IEEE's inf, written as such).
    bare = cli("grad", "x*2", "--x", big, "--json")
    assert bare.code == 2 and bare.json["error"]["kind"] == "bad_value", bare.json
    as_inf = [
        {"line": 1, "expr": "x*2", "value": "inf", "shape": [], "grad": {"x": 2.0}},
        {"line": 2, "expr": "sum(v)", "value": "inf", "shape": [], "grad": {"v": [1.0, 1.0]}},
    ]
    # In --vars and in batch lines alike the integer is refused (bad_value), line by line,
    # and the run goes on; never an internal error.
    for doc, reference in zip(got, as_inf):
        assert doc["error"]["kind"] == "bad_value", doc
        assert doc["line"] == reference["line"]
    assert r.code == 1


@pytest.mark.parametrize(
    "argv", [["x*2", "--vars", '{"x": BIG}'], ["sum(v)", "--v", "[BIG, 1]"]], ids=["vars", "array"]
)
def test_a_huge_integer_in_a_value_is_not_an_internal_error(cli, argv):
    big = "1" + "0" * 400
    r = cli("grad", *[a.replace("BIG", big) for a in argv], "--json")
    # refused with a clear error naming the variable (inf would hide a typo of 400 digits)
    assert r.code == 2, r.json
    assert r.json["error"]["kind"] == "bad_value"
    assert "too large for a floating-point number" in r.json["error"]["message"]


def test_out_of_memory_on_a_line_is_a_limit_record(tmp_path, cli, monkeypatch):
    """An outer product of 10**15 elements cannot be allocated: kind "limit" for that line
    (the single command says the same), the next line still runs."""
    n = 100_000
    x = [1.0] * n
    expr = f"sum(reshape(x, [{n}, 1, 1]) * reshape(x, [1, {n}, 1]) * reshape(x, [1, 1, {n}]))"
    path = write(
        tmp_path,
        "m.jsonl",
        jsonl([{"expr": expr, "vars": {"x": x}}, {"expr": "x", "vars": {"x": 1}}]),
    )
    # The memory limit refuses it before allocating (core/limits.py), with the estimate...
    r = cli("batch", path, "--op", "eval")
    assert r.code == 1
    big, small = docs(r.out)
    assert big["error"]["kind"] == "limit"
    assert big["error"]["message"].startswith("mul's result would take 74.5 GiB")
    assert small == {"line": 2, "expr": "x", "value": 1.0, "shape": []}
    # ... and with no limit, NumPy's own MemoryError is a limit record too.
    monkeypatch.setenv("AUTOGRAD_CLI_MAX_MEMORY", "0")
    r = cli("batch", path, "--op", "eval")
    assert r.code == 1
    big, small = docs(r.out)
    assert big == {
        "line": 1,
        "error": {
            "kind": "limit",
            "message": "out of memory: the arrays are too large for this machine",
        },
    }
    assert small == {"line": 2, "expr": "x", "value": 1.0, "shape": []}
    vars_file = write(tmp_path, "x.json", json.dumps({"x": x}))
    one = cli("eval", expr, "--vars", "@" + vars_file, "--json")
    assert one.code == 1 and one.json == {"error": big["error"]}


# =============================================================================================
# batch: options, output, progress
# =============================================================================================


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["--op", "nope"],
            "--op must be one of eval, grad, hessian, jacobian, diff, taylor, propagate, "
            "minimize, solve, critical, not 'nope'",
        ),
        (["--order", "0"], "--order must be at least 1, not 0"),
        (["--device", "tpu"], "--device must be cpu or gpu, not 'tpu'"),
        (
            ["--dtype", "f16"],
            "--dtype must be float64, float32, complex128 or complex64, not 'f16'",
        ),
    ],
)
def test_bad_batch_options_are_usage_errors(tmp_path, cli, argv, message):
    path = write(tmp_path, "p.csv", "x\n1\n")
    r = cli("batch", path, "--expr", "x", *argv, "--json")
    assert r.code == 2
    assert r.json == {"error": {"kind": "usage", "message": message}}


def test_output_path_through_a_regular_file_is_a_usage_error(tmp_path, cli):
    path = write(tmp_path, "p.csv", "x\n1\n")
    blocker = write(tmp_path, "afile", "keep\n")
    r = cli("batch", path, "--expr", "x", "-o", os.path.join(blocker, "out.jsonl"), "--json")
    assert r.code == 2
    assert r.json["error"]["kind"] == "usage"
    assert r.json["error"]["message"] == (
        f"-o: cannot write {os.path.join(blocker, 'out.jsonl')!r}: Not a directory"
    )
    assert open(blocker).read() == "keep\n"


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no UNIX sockets here")
def test_output_to_a_socket_file_is_a_usage_error(tmp_path, cli):
    """A socket is neither a regular file nor something open() can write: exit 2, and it is
    left a socket."""
    path = write(tmp_path, "p.csv", "x\n1\n")
    sock_path = str(tmp_path / "s.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(sock_path)
        r = cli("batch", path, "--expr", "x", "-o", sock_path, "--json")
    finally:
        server.close()
    assert r.code == 2
    assert r.json["error"]["kind"] == "usage"
    assert r.json["error"]["message"].startswith(f"-o: cannot write {sock_path!r}: ")
    assert stat.S_ISSOCK(os.lstat(sock_path).st_mode)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0, reason="needs root to chown")
def test_output_file_keeps_its_owner_and_mode(tmp_path, cli):
    path = write(tmp_path, "p.csv", "x\n1\n2\n")
    target = tmp_path / "out.jsonl"
    target.write_text("old\n")
    os.chown(target, 4321, 4322)
    os.chmod(target, 0o640)
    r = cli("batch", path, "--expr", "x*3", "--op", "eval", "-o", str(target))
    assert r.code == 0, r.err
    st = os.stat(target)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (4321, 4322, 0o640)
    assert [d["value"] for d in docs(target.read_text())] == [3.0, 6.0]


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root may write anything")
def test_output_file_without_write_permission_is_refused(tmp_path, cli):
    path = write(tmp_path, "p.csv", "x\n1\n")
    target = tmp_path / "ro.jsonl"
    target.write_text("keep\n")
    os.chmod(target, 0o444)
    r = cli("batch", path, "--expr", "x", "-o", str(target), "--json")
    assert r.code == 2
    assert r.json["error"]["message"] == f"-o: cannot write {str(target)!r}: Permission denied"
    assert target.read_text() == "keep\n"


def test_standard_output_without_a_buffer_still_gets_the_lines(tmp_path, cli, monkeypatch):
    """A caller that swaps sys.stdout for a text-only stream (io.StringIO) gets the lines."""
    path = write(tmp_path, "p.csv", "x\n2\n3\n")
    sink = io.StringIO()
    monkeypatch.setattr(sys, "stdout", sink)
    code = run(["batch", path, "--expr", "x**2", "--op", "eval"])
    assert code == 0
    assert [(d["line"], d["value"]) for d in docs(sink.getvalue())] == [(2, 4.0), (3, 9.0)]


def test_progress_bar_on_stdin_input(cli, monkeypatch):
    """--progress with stdin (no size known): stdout is the same as without it."""
    data = jsonl([{"x": i} for i in range(20)])
    outs = []
    for flag in ("--progress", "--no-progress"):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data.encode())))
        r = cli("batch", "-", "--expr", "x/4", "--op", "eval", "--chunk-size", "7", flag)
        assert r.code == 0, r.err
        outs.append(r.out)
    assert outs[0] == outs[1]
    assert [d["value"] for d in docs(outs[0])] == [i / 4 for i in range(20)]


@posix_only
def test_nonblocking_output_descriptor_gets_every_byte(tmp_path, cli):
    """-o /dev/fd/N on a non-blocking pipe with a slow reader: the writer waits instead of
    failing, and every line arrives whole and in order."""
    n = 3000
    path = write(tmp_path, "p.csv", "x\n" + "".join(f"{i}\n" for i in range(n)))
    read_end, write_end = os.pipe()
    flags = fcntl.fcntl(write_end, fcntl.F_GETFL)
    fcntl.fcntl(write_end, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    chunks = []
    started = threading.Event()

    def reader():
        started.wait(5)  # let the writer fill the pipe first
        while True:
            data = os.read(read_end, 4096)
            if not data:
                break
            chunks.append(data)

    thread = threading.Thread(target=reader)
    thread.start()
    timer = threading.Timer(0.3, started.set)
    timer.start()
    try:
        r = cli("batch", path, "--expr", "x*2", "-o", f"/dev/fd/{write_end}")
    finally:
        os.close(write_end)
        started.set()
        thread.join(30)
        timer.cancel()
        os.close(read_end)
    assert r.code == 0, r.err
    got = docs(b"".join(chunks).decode())
    assert [(d["line"], d["value"], d["grad"]["x"]) for d in got] == [
        (i + 2, 2.0 * i, 2.0) for i in range(n)
    ]


@needs_cli
@posix_only
def test_batch_from_a_closed_stdin_is_a_usage_error():
    r = run_cli("batch", "-", "--expr", "x", "--json", preexec=lambda: os.close(0))
    assert r.returncode == 2
    assert json.loads(r.stdout) == {
        "error": {"kind": "usage", "message": "batch: '-' reads standard input, but there is none"}
    }


@needs_cli
@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="no /proc/self/mem here")
def test_input_that_fails_to_read_is_an_io_error():
    """Reading /proc/self/mem at offset 0 fails with EIO: kind "io", exit 1 (README)."""
    r = run_cli("batch", "/proc/self/mem", "--format", "jsonl", "--expr", "x", "--json")
    assert r.returncode == 1
    assert json.loads(r.stdout) == {"error": {"kind": "io", "message": "Input/output error"}}


# =============================================================================================
# batch: signals
# =============================================================================================


@pytest.fixture
def default_sigint():
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_a_second_ctrl_c_during_a_vectorised_group_stops_at_once(
    tmp_path, cli, monkeypatch, default_sigint
):
    """The first Ctrl-C asks to stop at the next safe point; a second stops at once.  The
    lines completed before it are written whole; exit 130."""
    from autograd_cli.core import batch as core_batch

    path = write(
        tmp_path,
        "in.jsonl",
        jsonl(
            [
                {"expr": "x+1", "vars": {"x": 1}},
                {"expr": "x*y", "vars": {"x": 2, "y": 3}},
                {"expr": "x*y", "vars": {"x": 4, "y": 5}},
            ]
        ),
    )
    original = core_batch.evaluate_batch

    def twice(program, *args, **kwargs):
        if program.source == "x*y":
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)
        return original(program, *args, **kwargs)

    monkeypatch.setattr(core_batch, "evaluate_batch", twice)
    r = cli("batch", path, "--op", "eval")
    assert r.code == 130
    assert docs(r.out) == [{"line": 1, "expr": "x+1", "value": 2.0, "shape": []}]
    assert "interrupted; 1 complete line(s) written" in r.err


def test_a_second_sigterm_during_a_row_by_row_line(tmp_path, cli, monkeypatch):
    from autograd_cli.core import api

    path = write(
        tmp_path,
        "in.jsonl",
        jsonl(
            [
                {"expr": "x**2", "vars": {"x": 3}, "op": "hessian"},
                {"expr": "x**3", "vars": {"x": 3}, "op": "hessian"},
            ]
        ),
    )
    original = api.compute  # a batch row asks the library's one dispatcher

    def twice(name, program, *args, **kwargs):
        if program.source == "x**3":
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGTERM)
        return original(name, program, *args, **kwargs)

    monkeypatch.setattr(api, "compute", twice)
    previous = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        r = cli("batch", path)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert r.code == 143
    assert docs(r.out) == [{"line": 1, **single(cli, "hessian", "x**2", "--x", "3")}]
    assert "terminated; 1 complete line(s) written" in r.err


def test_ctrl_c_before_the_first_line_writes_nothing(tmp_path, cli, monkeypatch, default_sigint):
    """Ctrl-C while the temporary output file is being made: nothing is half done there, the
    run stops before reading a line, the output holds 0 lines and no temporary stays."""
    path = write(tmp_path, "in.jsonl", jsonl([{"x": 1}, {"x": 2}]))
    target = tmp_path / "out.jsonl"
    original = files.tempfile.mkstemp

    def interrupted(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)
        return original(*args, **kwargs)

    monkeypatch.setattr(files.tempfile, "mkstemp", interrupted)
    r = cli("batch", path, "--expr", "x", "-o", str(target))
    assert r.code == 130
    assert "interrupted; 0 complete line(s) written" in r.err
    assert target.read_text() == ""
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl", "out.jsonl"]


def _in_a_thread(fn):
    """Run ``fn`` in a non-main thread (where signal handlers cannot be installed)."""
    box = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(60)
    if "error" in box:
        raise box["error"]
    return box["value"]


def test_batch_run_from_a_worker_thread(tmp_path, capsys):
    """An application that runs the CLI in a worker thread: no signal handlers can be set
    there, and the batch still runs and leaves the process's handlers alone."""
    path = write(tmp_path, "p.csv", "x,y\n1,2\n3,4\n")
    before = {s: signal.getsignal(s) for s in cli_batch.STOP_SIGNALS}
    capsys.readouterr()
    code = _in_a_thread(lambda: run(["batch", path, "--expr", "x*y"]))
    out = capsys.readouterr().out
    assert code == 0
    assert [(d["line"], d["value"], d["grad"]) for d in docs(out)] == [
        (2, 2.0, {"x": 2.0, "y": 1.0}),
        (3, 12.0, {"x": 4.0, "y": 3.0}),
    ]
    assert {s: signal.getsignal(s) for s in cli_batch.STOP_SIGNALS} == before


def test_console_entry_point_from_a_worker_thread(monkeypatch, capsys):
    from autograd_cli.cli import main as cli_main

    before = {s: signal.getsignal(s) for s in cli_batch.STOP_SIGNALS}
    monkeypatch.setattr(sys, "argv", ["autograd-cli", "grad", "x**3", "--x", "2", "--json"])
    capsys.readouterr()

    def call():
        try:
            cli_main.main()
        except SystemExit as exc:
            return exc.code
        return None

    code = _in_a_thread(call)
    assert code == 0
    assert json.loads(capsys.readouterr().out) == {
        "expr": "x**3",
        "value": 8.0,
        "shape": [],
        "grad": {"x": 12.0},
    }
    assert {s: signal.getsignal(s) for s in cli_batch.STOP_SIGNALS} == before


# =============================================================================================
# single commands: options and the command line
# =============================================================================================


@pytest.mark.parametrize(
    "argv, kind, message",
    [
        (
            ["eval", "x", "--x", "1", "--device", "tpu"],
            "usage",
            "--device must be cpu or gpu, not 'tpu'",
        ),
        (
            ["grad", "x", "--x", "1", "--dtype", "int8"],
            "usage",
            "--dtype must be float64, float32, complex128 or complex64, not 'int8'",
        ),
        (
            ["eval", "x", "--x", "1", "extra"],
            "usage",
            "unexpected argument(s): extra (variables are given as --NAME VALUE; quote the "
            "expression)",
        ),
        (["grad", "x**2", "--x", "1", "--order", "0"], "usage", "--order must be 1 or more, not 0"),
        (
            ["grad", "x*y", "--x", "1", "--y", "2", "--tangent", "x=1", "--grad-output", "1"],
            "usage",
            "--tangent (forward mode) cannot be combined with --grad-output or --order",
        ),
        (
            ["grad", "x*y", "--x", "1", "--y", "2", "--tangent", "x=1", "--order", "2"],
            "usage",
            "--tangent (forward mode) cannot be combined with --grad-output or --order",
        ),
        (
            ["grad", "x", "--x", "[true, 1]"],
            "bad_value",
            "--x: '[true, 1]' holds True, not a number",
        ),
        (
            ["grad", "x", "--x", '["one", 1]'],
            "bad_value",
            "--x: '[\"one\", 1]' holds 'one', not a number",
        ),
        (
            ["eval", "x", "--vars", '{"x": 1'],
            "bad_value",
            "--vars: not valid JSON (Expecting ',' delimiter at line 1, column 8)",
        ),
        (
            ["eval", "x", "--vars", "[1, 2]"],
            "bad_value",
            '--vars: expected a JSON object like {"x": 1, "W": [[1, 2]]}',
        ),
    ],
)
def test_command_line_mistakes_are_exit_2(cli, argv, kind, message):
    """SPEC exit 2: a bad option or value literal, found before evaluation."""
    r = cli(*argv, "--json")
    assert r.code == 2
    assert set(r.json) == {"error"}
    assert (r.json["error"]["kind"], r.json["error"]["message"]) == (kind, message)


def test_expression_and_vars_cannot_both_come_from_stdin(cli, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'{"x": 1}')))
    r = cli("eval", "-", "--vars", "-", "--json")
    assert r.code == 2
    assert r.json == {
        "error": {
            "kind": "usage",
            "message": "the expression and --vars cannot both come from stdin",
        }
    }


def test_a_negative_number_is_an_expression(cli):
    r = cli("eval", "-5", "--json")
    assert r.code == 0
    assert r.json == {"expr": "-5", "value": -5.0, "shape": []}
    r = cli("eval", "-2.5e1", "--json")
    assert r.json["value"] == -25.0


def test_a_trailing_double_dash_is_harmless(cli):
    assert (
        cli("eval", "x*2", "--x", "2", "--json", "--").json
        == cli("eval", "x*2", "--x", "2", "--json").json
        == {"expr": "x*2", "value": 4.0, "shape": []}
    )


def test_no_arguments_prints_the_commands_and_exits_2(cli):
    r = cli()
    assert r.code == 2
    for command in ("eval", "grad", "hessian", "jacobian", "diff", "graph", "batch", "check"):
        assert f"  {command} " in r.out


def test_vars_file_nesting_too_deeply_is_a_bad_value(tmp_path, cli):
    path = write(tmp_path, "v.json", '{"x": ' + "[" * 100000 + "]" * 100000 + "}")
    r = cli("eval", "x", "--vars", "@" + path, "--json")
    assert r.code == 2
    assert r.json == {
        "error": {
            "kind": "bad_value",
            "message": "--vars: an array nested far too deep; a value has at most 32 dimensions",
        }
    }


def test_two_arguments_that_are_not_utf8_are_noted_once(cli, monkeypatch):
    """Lone surrogates are how Python hands over argv bytes that are not UTF-8."""
    monkeypatch.setattr(options, "_REPLACED", [])
    r = cli("eval", "x\udcff", "--y", "\udcfe", "--json")
    assert r.code == 2
    message = r.json["error"]["message"]
    assert message.count("(note: an argument held bytes that are not valid UTF-8") == 1
    assert "\ufffd" in message


@needs_cli
@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="no /proc/self/mem here")
def test_stdin_that_fails_to_read_is_a_usage_error():
    """The expression from a stdin whose read fails (EIO): exit 2 with the reason."""
    with open("/proc/self/mem", "rb", buffering=0) as stdin:
        r = run_cli("eval", "-", "--json", stdin=stdin)
    assert r.returncode == 2
    assert json.loads(r.stdout) == {
        "error": {
            "kind": "usage",
            "message": "expression: cannot read standard input (Input/output error)",
        }
    }


# =============================================================================================
# single commands: renderers
# =============================================================================================


def test_forward_mode_row_in_the_table(cli):
    """J v for v = e_x: the x column of the Jacobian of [x*y, x+y], i.e. [y, 1] = [2, 1]."""
    table = cli("grad", "[x*y, x+y]", "--x", "1", "--y", "2", "--tangent", "x=1")
    assert table.code == 0
    rows = {
        line.split()[0]: [cell.strip() for cell in line.split(None, 2)[1:]]
        for line in table.out.splitlines()[3:]
    }
    assert rows["J·v"] == ["(2,)", "[2., 1.]"]
    assert rows["value"] == ["(2,)", "[2., 3.]"]
    doc = cli("grad", "[x*y, x+y]", "--x", "1", "--y", "2", "--tangent", "x=1", "--json").json
    assert doc["jvp"] == [2.0, 1.0]


def test_hessian_of_a_vector_variable_gets_a_block_table(cli):
    """sum(v**3): gradient 3 v**2, Hessian diag(6 v)."""
    v = np.array([1.0, 2.0])
    r = cli("hessian", "sum(v**3)", "--v", "[1, 2]")
    assert r.code == 0
    lines = r.out.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("Hessian")))
    block = "\n".join(lines[start:])
    assert "∂²/∂v∂v" in block and "(2, 2)" in block
    assert "[[ 6.,  0.]," in block and "[ 0., 12.]]" in block
    doc = cli("hessian", "sum(v**3)", "--v", "[1, 2]", "--json").json
    assert doc["grad"]["v"] == (3 * v**2).tolist()
    assert doc["hessian"]["v"]["v"] == np.diag(6 * v).tolist()


def test_jacobian_of_a_vector_variable_gets_a_block_table(cli):
    r = cli("jacobian", "v*2", "--v", "[1, 2]")
    assert r.code == 0
    block = r.out[r.out.index("Jacobian") :]
    assert "∂out/∂v" in block and "(2, 2)" in block
    assert "[[2., 0.]," in block and "[0., 2.]]" in block
    doc = cli("jacobian", "v*2", "--v", "[1, 2]", "--json").json
    assert doc["jacobian"]["v"] == (2 * np.eye(2)).tolist()


def test_hessian_as_plain_numbers(cli):
    """x**2*y at (1, 2): value 2, gradient (2xy, x**2) = (4, 1), Hessian [[2y, 2x], [2x, 0]]."""
    r = cli("hessian", "x**2*y", "--x", "1", "--y", "2", "--format", "plain")
    assert r.code == 0
    assert [float(t) for t in r.out.split()] == [2.0, 4.0, 1.0, 4.0, 2.0, 2.0, 0.0]


def test_jacobian_as_csv_rows(cli):
    """[x*y, x+y] at (1, 2): d/dx = [y, 1] = [2, 1], d/dy = [x, 1] = [1, 1]."""
    r = cli("jacobian", "[x*y, x+y]", "--x", "1", "--y", "2", "--format", "csv")
    assert r.code == 0
    assert r.out.splitlines() == [
        "quantity,index,value",
        "value,0,2.0",
        "value,1,3.0",
        "jacobian:x,0,2.0",
        "jacobian:x,1,1.0",
        "jacobian:y,0,1.0",
        "jacobian:y,1,1.0",
    ]


def test_diff_prints_a_note_when_simplification_runs_out(cli, monkeypatch):
    """With a tiny simplification budget (a slow machine), the derivative is printed
    unsimplified with a note under the table, and it still means d^3/dx^3."""
    sympy = pytest.importorskip("sympy")
    from autograd_cli.core import symbolic

    monkeypatch.setattr(symbolic, "diff", functools.partial(symbolic.diff, step_budget=50))
    expr = "x**2*exp(x)*sin(x)"
    table = cli("diff", expr, "--order", "3")
    assert table.code == 0
    assert (
        "note: d/dx: simplification ran out of its step budget; the derivative is printed "
        "unsimplified" in " ".join(table.out.split())
    )
    doc = cli("diff", expr, "--order", "3", "--x", "0.7", "--json").json
    x = sympy.Symbol("x")
    exact = float(sympy.diff(x**2 * sympy.exp(x) * sympy.sin(x), x, 3).subs(x, 0.7))
    assert math.isclose(doc["derivative_value"], exact, rel_tol=1e-12)
    assert doc["notes"] == [
        "d/dx: simplification ran out of its step budget; the derivative is printed unsimplified"
    ]


# =============================================================================================
# graph
# =============================================================================================


def test_graph_json_carries_the_evaluation_warnings(cli):
    doc = cli("graph", "log(x)", "--x", "0", "--json").json
    assert doc["value"] == "-inf"
    # graph takes the derivative too: grad's warnings (evaluation and derivative)
    assert doc["warnings"] == cli("grad", "log(x)", "--x", "0", "--json").json["warnings"]


def test_graph_warns_at_a_kink_like_grad(cli):
    doc = cli("graph", "abs(x)", "--x", "0", "--json").json
    assert doc["nodes"][0]["grad"] == 0.0  # abs'(0) = 0 was used...
    (kink,) = cli("grad", "abs(x)", "--x", "0", "--json").json["warnings"]
    assert kink in doc.get("warnings", [])  # ...and, as with grad, the output says so


def test_graph_shows_grad_none_for_an_input_only_a_comparison_uses(cli, torch):
    """As torch.autograd.grad(..., allow_unused=True): x reaches the output only through
    a comparison, so its gradient is None, not 0; y's is 1."""
    tx = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    ty = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    gx, gy = torch.autograd.grad((tx > 0) + ty, [tx, ty], allow_unused=True)
    assert gx is None and float(gy) == 1.0
    r = cli("graph", "(x > 0) + y", "--x", "2", "--y", "1")
    assert r.code == 0
    leaves = {
        line.split("leaf ")[1].split()[0]: line
        for line in r.out.splitlines()
        if "leaf x" in line or "leaf y" in line
    }
    assert leaves["x"].rstrip().endswith("grad None")
    assert leaves["y"].rstrip().endswith("grad 1.0")
    doc = cli("graph", "(x > 0) + y", "--x", "2", "--y", "1", "--json").json
    grads = {n["name"]: n["grad"] for n in doc["nodes"] if n["kind"] == "leaf"}
    assert grads == {"x": None, "y": float(gy)}


def test_graph_tree_draws_a_shared_node_once(cli):
    """y = x*2; y + y at x = 3: value 12, dy = 2, dx = 4; y's subtree is drawn once."""
    r = cli("graph", "y = x*2; y + y", "--x", "3")
    assert r.code == 0
    lines = r.out.splitlines()
    assert lines[0].startswith("AddBackward0") and "value 12.0" in lines[0]
    drawn = [line for line in lines if "MulBackward0 y" in line]
    assert len(drawn) == 2
    assert "value 6.0 grad 2.0" in drawn[0]
    assert drawn[1].rstrip().endswith("MulBackward0 y (#2, shown above)")
    assert sum("leaf x" in line for line in lines) == 1
    assert "value 3.0 grad 4.0" in next(line for line in lines if "leaf x" in line)


def test_graph_of_a_vector_output_says_why_there_are_no_gradients(cli):
    r = cli("graph", "[x, 2*x]", "--x", "1")
    assert r.code == 0
    assert "no gradients: the output is not a scalar (give --grad-output)" in r.out
    assert " grad " not in r.out
    shown = cli("graph", "[x, 2*x]", "--x", "1", "--grad-output", "[1, 1]")
    # d/dx (1*x + 1*2x) = 3
    assert "no gradients" not in shown.out
    assert "value 1.0 grad 3.0" in next(line for line in shown.out.splitlines() if "leaf x" in line)


# =============================================================================================
# batch: more corners of reading and writing
# =============================================================================================


def test_a_line_with_thousands_of_variables(tmp_path, cli):
    """More distinct names than the name-check cache keeps (4096): every name is still
    checked, and the values and gradients are right."""
    n = 4200
    names = [f"v{i}" for i in range(n)]
    values = {name: (i % 7) - 3.0 for i, name in enumerate(names)}
    expr = "sum([" + ", ".join(names) + "] * [" + ", ".join(str(i % 5) for i in range(n)) + "])"
    bad = dict(values, **{"9bad": 1.0})
    path = write(
        tmp_path, "many.jsonl", jsonl([{"expr": expr, "vars": values}, {"expr": expr, "vars": bad}])
    )
    r = cli("batch", path)
    assert r.code == 1
    good, wrong = docs(r.out)
    weights = np.array([i % 5 for i in range(n)], dtype=float)
    point = np.array([values[name] for name in names])
    assert good["value"] == float(np.sum(point * weights))
    assert good["grad"] == {name: float(w) for name, w in zip(names, weights)}
    assert wrong["error"] == {"kind": "bad_value", "message": "'9bad' is not a valid variable name"}


def test_output_temporary_removed_during_the_run(tmp_path, cli, monkeypatch):
    """Someone (a temp-file cleaner) removes the temporary output file during the run: the
    rename fails, the run says so and exits 1, and FILE is left as it was."""
    from autograd_cli.core import batch as core_batch

    path = write(tmp_path, "p.csv", "x\n1\n2\n")
    target = tmp_path / "out.jsonl"
    target.write_text("OLD\n")
    original = core_batch.evaluate_batch

    def cleaner(*args, **kwargs):
        for name in os.listdir(tmp_path):
            if name.endswith(".tmp"):
                os.unlink(tmp_path / name)
        return original(*args, **kwargs)

    monkeypatch.setattr(core_batch, "evaluate_batch", cleaner)
    r = cli("batch", path, "--expr", "x", "-o", str(target))
    assert r.code == 1
    assert r.err.strip() == (
        f"autograd-cli: error: cannot write {str(target)!r}: No such file or directory "
        f"({str(target)!r} is left as it was)"
    )
    assert target.read_text() == "OLD\n"
    assert sorted(os.listdir(tmp_path)) == ["out.jsonl", "p.csv"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_ctrl_c_while_waiting_for_a_fifo_reader(tmp_path, cli, default_sigint):
    """-o FIFO with no reader: opening it waits; Ctrl-C there ends the run with 130, nothing
    written, and the FIFO stays a FIFO."""
    path = write(tmp_path, "p.csv", "x\n1\n")
    fifo = str(tmp_path / "out.fifo")
    os.mkfifo(fifo)
    pid = os.getpid()
    wchan = f"/proc/self/task/{threading.main_thread().native_id}/wchan"

    def ctrl_c_once_blocked():
        for _ in range(200):  # until the main thread waits in open() for a reader
            try:
                with open(wchan) as f:
                    if f.read().strip() in ("wait_for_partner", "fifo_open"):
                        break
            except OSError:
                pass
            threading.Event().wait(0.05)
        os.kill(pid, signal.SIGINT)

    timer = threading.Timer(0.05, ctrl_c_once_blocked)

    def unblock():  # should the signal come before the open: a reader lets the run go on
        with open(fifo, "rb") as f:
            f.read()

    rescue = threading.Timer(10, unblock)
    timer.start()
    rescue.start()
    try:
        r = cli("batch", path, "--expr", "x", "-o", fifo)
    finally:
        timer.cancel()
        rescue.cancel()
    assert r.code == 130
    assert r.out == ""
    assert "interrupted; 0 complete line(s) written" in r.err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["out.fifo", "p.csv"]


@needs_cli
@posix_only
def test_batch_to_a_closed_stdout_is_exit_1():
    r = run_cli(
        "batch",
        "-",
        "--expr",
        "x",
        preexec=lambda: os.close(1),
        stdout=None,
        input=b'{"x": 1}\n',
        stdin=None,
    )
    assert r.returncode == 1
    assert r.stderr.decode().strip() == (
        "autograd-cli: error: cannot write to standard output: it is closed"
    )


def _buffered_env() -> dict:
    """Standard output block-buffered, as it is by default (PYTHONUNBUFFERED unset): a
    failure then shows at the final flush, not at the write."""
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    env.pop("AUTOGRAD_CLI_DEBUG", None)
    return env


@needs_cli
@posix_only
def test_stdout_file_that_cannot_grow_is_exit_1(tmp_path):
    """A file size limit (RLIMIT_FSIZE, like a quota) reached by standard output: the final
    flush fails with EFBIG: exit 1 and a message on stderr, the file not grown."""
    import resource

    limit = 8 << 20
    out = tmp_path / "out.txt"
    with open(out, "wb") as f:
        f.truncate(limit)  # already at the limit: the next byte is refused

    def cap():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    with open(out, "ab") as f:
        r = run_cli(
            "grad", "x**2", "--x", "3", "--json", stdout=f, env=_buffered_env(), preexec=cap
        )
    assert r.returncode == 1
    assert r.stderr.decode().strip() == (
        "autograd-cli: error: cannot write to standard output: File too large"
    )
    assert os.path.getsize(out) == limit


@needs_cli
@posix_only
def test_reader_gone_before_the_final_flush_ends_quietly_with_141():
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        r = run_cli("grad", "x**2", "--x", "3", "--json", stdout=write_end, env=_buffered_env())
    finally:
        os.close(write_end)
    assert r.returncode == 141
    assert r.stderr == b""


@needs_cli
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_a_stderr_that_cannot_be_written_keeps_the_exit_code():
    """The error message cannot be written (stderr is /dev/full): nobody can be told, and
    the exit code still says what went wrong (2: an unknown variable)."""
    with open("/dev/full", "wb") as full:
        r = run_cli("grad", "x*2", "--x", "1", "--zz", "1", stderr=full)
    assert r.returncode == 2
    assert r.stdout == b""


def test_internal_errors_are_reported_and_debug_shows_them(cli, monkeypatch):
    """The error boundary's last resort (main.py: AUTOGRAD_CLI_DEBUG=1 shows a traceback)."""
    from autograd_cli.core import api

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(api, "eval_of", broken)
    monkeypatch.delenv("AUTOGRAD_CLI_DEBUG", raising=False)
    r = cli("eval", "x", "--x", "1", "--json")
    assert r.code == 1
    assert r.json == {
        "error": {
            "kind": "internal",
            "message": "internal error: RuntimeError: boom (please report it; "
            "AUTOGRAD_CLI_DEBUG=1 shows a traceback)",
        }
    }
    monkeypatch.setenv("AUTOGRAD_CLI_DEBUG", "1")
    with pytest.raises(RuntimeError, match="boom"):
        run(["eval", "x", "--x", "1"])


def test_importing_the_package_main_module_runs_nothing(capsys):
    """``python -m autograd_cli`` runs the CLI; importing the module (pydoc, tooling) does not."""
    import importlib

    sys.modules.pop("autograd_cli.__main__", None)
    module = importlib.import_module("autograd_cli.__main__")
    assert callable(module.main)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


# ---- a digit that int() refuses ------------------------------------------------------------


@pytest.mark.parametrize("value", ["²", "٣"])
def test_a_precision_of_non_ascii_digits_is_a_usage_error(cli, value):
    # "²".isdigit() is True but int("²") fails: --precision ² was an internal error
    r = cli("grad", "x**2", "--x", "1", "--precision", value, "--json")
    assert r.code == 2, r.out
    assert r.json["error"]["message"] == (
        f"--precision takes 0 to 17 digits, or full, not {value!r}"
    )


def test_a_columns_variable_of_a_non_ascii_digit_is_ignored():
    # COLUMNS=² made the table renderer call int("²"): an internal error; it is no width
    env = {**os.environ, "COLUMNS": "²"}
    r = run_cli("grad", "x**2", "--x", "1", env=env)
    assert r.returncode == 0, r.stderr
    assert b"2.0" in r.stdout and not r.stderr
