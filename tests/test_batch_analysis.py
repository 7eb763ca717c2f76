"""batch lines of the analysis ops: taylor, propagate, minimize, solve, critical (issue 14).

The reference for every line is the single command: its ``--json`` document for the same
input, plus ``"line"``, compared as exact text.  Then the per-line keys (each op takes its
command's options; anything else is a ``bad_line`` record), values with an uncertainty or
bounds (JSONL and CSV), a non-converged iteration (its document, and a failed line), and the
batch machinery around these rows: a bad line among good ones, --fail-fast, -o, --timeout,
Ctrl-C.
"""

from __future__ import annotations

import json
import os
import signal

import pytest

from autograd_cli.cli import batch as cli_batch
from autograd_cli.cli import options
from autograd_cli.core import analysis_docs, optimize, rows
from autograd_cli.grammar import parse


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def lines(r) -> list:
    return [json.loads(line) for line in r.out.splitlines()]


def _argv(op, expr, variables, keys) -> list:
    """The single command's argv for a batch line's input."""
    argv = [op, expr]
    for name, value in variables.items():
        argv += [f"--{name}", value if isinstance(value, str) else json.dumps(value)]
    for key, value in keys.items():
        option = "--" + key.replace("_", "-")
        if key == "at":
            for name, v in value.items():
                argv += ["--at", f"{name}={v!r}"]
        elif key == "wrt":
            argv += ["--wrt", ",".join(value)]
        elif key == "corr":
            for item in [value] if isinstance(value, str) else value:
                argv += ["--corr", item]
        elif key == "trace":
            argv += ["--trace"] if value else []
        else:
            argv += [option, repr(value) if isinstance(value, float) else str(value)]
    return argv + ["--json"]


def reference(cli, line, op, expr, variables, keys=None):
    """``{"line": N, ...}`` as text: the single command's --json document for this input,
    with its exit code."""
    r = cli(*_argv(op, expr, variables, keys or {}))
    out = r.out.strip()
    assert out.startswith('{"expr": '), (op, expr, r.out, r.err)
    return f'{{"line": {line}, {out[1:]}', r.code


# op, expr, vars, the line's own keys
CASES = [
    ("taylor", "exp(sin(x))", {"x": 0}, {"order": 4}),
    ("taylor", "exp(x)*sin(y) + x*y**2", {"x": 0.5, "y": 1.0}, {"order": 3}),
    ("taylor", "exp(x)*sin(y)", {"x": 0.5, "y": 1}, {"wrt": ["x"], "order": 0, "at": {"x": 0.6}}),
    ("taylor", "log(x)", {"x": 1}, {"at": {"x": 1.1}}),
    ("propagate", "g*t**2/2", {"g": "9.81+-0.02", "t": "1.5±0.01"}, {}),
    (
        "propagate",
        "g*t**2/2",
        {"g": "9.81+/-0.02", "t": "1.5+-0.01"},
        {"corr": "g,t=0.3", "mc": 2000, "seed": 7},
    ),
    ("propagate", "exp(a)*b", {"a": "1+-0.5", "b": 2}, {"corr": [], "mc": 100, "seed": 0}),
    ("propagate", "sum(x**2)", {"x": "[1, 2]+-[0.1, 0.2]"}, {}),
    ("propagate", "sum(x)", {"x": "[1, 2]+-[[0.01, 0.005], [0.005, 0.04]]"}, {}),
    (
        "minimize",
        "(1-x)**2 + 100*(y-x**2)**2",
        {"x": -1, "y": 1},
        {"method": "newton", "max_iter": 200},
    ),
    (
        "minimize",
        "(1-x)**2 + 100*(y-x**2)**2",
        {"x": -1.2, "y": 1},
        {"method": "bfgs", "gtol": 1e-8},
    ),
    ("minimize", "x**2 + y", {"x": 1, "y": "-1:1"}, {"trace": True}),
    (
        "minimize",
        "(x - 3)**2 + z",
        {"x": "0:inf", "z": 5},
        {"wrt": ["x"], "method": "gd", "max_iter": 500},
    ),
    ("minimize", "sum(x**2)", {"x": [1, 2]}, {}),
    ("solve", "x**2 + y**2 - 4; x - y", {"x": 1, "y": 0}, {}),
    (
        "solve",
        "x**2 - a",
        {"x": 1, "a": 2},
        {"wrt": ["x"], "tol": 1e-10, "max_iter": 50, "trace": True},
    ),
    ("critical", "x**3 - 3*x + y**2", {"x": -0.8, "y": 0.1}, {}),
    ("critical", "x**2 - y**2", {"x": 0.5, "y": 0.5}, {"gtol": 1e-9, "max_iter": 20}),
]


def test_each_op_jsonl_line_is_the_single_commands_document(tmp_path, cli):
    text = "".join(
        json.dumps({"expr": expr, "vars": variables, "op": op, **keys}) + "\n"
        for op, expr, variables, keys in CASES
    )
    r = cli("batch", write(tmp_path, "in.jsonl", text))
    assert r.code == 0, r.err
    got = r.out.splitlines()
    assert len(got) == len(CASES)
    for i, (op, expr, variables, keys) in enumerate(CASES):
        want, code = reference(cli, i + 1, op, expr, variables, keys)
        assert code == 0
        assert got[i] == want, (op, expr)
    docs = lines(r)
    assert docs[0]["coefficients"] == [1.0, 1.0, 0.5, 0.0, -0.125]
    assert set(docs[5]["mc"]) >= {"mean", "std", "interval"} and docs[5]["warnings"]
    assert docs[11]["x"]["y"] == -1.0 and docs[11]["trace"][0]["iteration"] == 0
    assert docs[16]["kind"] == "saddle" and "residual" in docs[14]


def test_op_from_the_command_line_and_lines_of_just_variables(tmp_path, cli):
    path = write(tmp_path, "in.jsonl", '{"x": 0}\n{"x": 1}\n')
    r = cli("batch", path, "--expr", "exp(sin(x))", "--op", "taylor", "--order", "3")
    assert r.code == 0, r.err
    for i, x in enumerate((0, 1)):
        assert (
            r.out.splitlines()[i]
            == reference(cli, i + 1, "taylor", "exp(sin(x))", {"x": x}, {"order": 3})[0]
        )
    # --wrt and --order are the defaults of the lines whose op takes them
    text = (
        '{"op": "minimize", "vars": {"x": 1, "y": 2}}\n'
        '{"op": "propagate", "vars": {"x": "1+-0.1", "y": 2}}\n'
        '{"op": "grad", "vars": {"x": 1, "y": 2}}\n'
    )
    expr = "(x - y)**2 + y**2"
    r = cli(
        "batch", write(tmp_path, "mixed.jsonl", text), "--expr", expr, "--wrt", "x", "--order", "2"
    )
    assert r.code == 0, r.err
    got = r.out.splitlines()
    assert got[0] == reference(cli, 1, "minimize", expr, {"x": 1, "y": 2}, {"wrt": ["x"]})[0]
    assert got[1] == reference(cli, 2, "propagate", expr, {"x": "1+-0.1", "y": 2})[0]
    assert json.loads(got[2])["grad"] == {"x": 2.0}  # d2/dx2


def test_csv_per_op_matches_the_single_command(tmp_path, cli):
    cases = [
        (
            "taylor",
            "exp(x)*sin(y)",
            "x,y\n0,1\n0.5,2\n",
            ["--order", "4", "--wrt", "x"],
            {"order": 4, "wrt": ["x"]},
        ),
        ("taylor", "exp(x)*sin(y)", "x,y\n0,1\n", ["--order", "0"], {"order": 0}),
        ("propagate", "g*t**2/2", 'g,t\n9.81+-0.02,1.5+-0.01\n9.81±0.05,"1.5+/-0.02"\n', [], {}),
        ("minimize", "(1-x)**2 + 100*(y-x**2)**2", "x,y\n-1,1\n-1:2,0:3\n", [], {}),
        ("solve", "x**2 + y**2 - 4; x - y", "x,y\n1,0\n-1,-0.5\n", [], {}),
        ("critical", "x**3 - 3*x + y**2", "x,y\n-0.8,0.1\n0.9,-0.2\n", [], {}),
    ]
    for op, expr, text, extra, keys in cases:
        r = cli("batch", write(tmp_path, f"{op}.csv", text), "--expr", expr, "--op", op, *extra)
        assert r.code == 0, (op, r.err)
        header, *cells = [row.split(",") for row in text.replace('"', "").splitlines()]
        got = r.out.splitlines()
        assert len(got) == len(cells)
        for i, row in enumerate(cells):
            variables = dict(zip(header, row))
            assert got[i] == reference(cli, i + 2, op, expr, variables, keys)[0], (op, row)


def test_csv_settings_that_no_line_could_use_are_usage_errors(tmp_path, cli):
    path = write(tmp_path, "p.csv", "x,y\n1,2\n")
    r = cli("batch", path, "--expr", "x*y", "--op", "minimize", "--order", "2", "--json")
    assert (
        r.code == 2
        and "--order applies to --op grad and --op diff and --op taylor"
        in r.json["error"]["message"]
    )
    r = cli("batch", path, "--expr", "x*y", "--op", "propagate", "--wrt", "x", "--json")
    assert r.code == 2 and "--wrt does not apply to --op propagate" in r.json["error"]["message"]
    r = cli("batch", path, "--expr", "x*y", "--op", "minimise", "--json")
    assert r.code == 2 and "minimize" in r.json["error"]["message"]  # the ops are listed


def test_run_batch_settings_for_every_line(tmp_path, capsys):
    # BatchOptions.settings: the analysis keys for every line (the command line's, for CSV)
    path = write(tmp_path, "m.csv", "x,y\n-1.2,1\n")
    expr = "(1-x)**2 + 100*(y-x**2)**2"
    opts = cli_batch.BatchOptions(
        source=path, expr=expr, op="minimize", settings={"method": "bfgs", "max_iter": 500}
    )
    assert cli_batch.run_batch(opts).code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["method"] == "bfgs" and doc["converged"]
    for settings, message in [
        ({"method": "bfgs"}, "--method applies to --op minimize, not --op taylor"),
        ({"mc": 1}, "--mc applies to --op propagate"),
        ({"banana": 1}, "'banana' is not a setting"),
    ]:
        opts = cli_batch.BatchOptions(source=path, expr=expr, op="taylor", settings=settings)
        with pytest.raises(options.UsageError, match=message):
            cli_batch.run_batch(opts)
    opts = cli_batch.BatchOptions(source=path, expr=expr, op="minimize", settings={"max_iter": 0})
    with pytest.raises(options.UsageError, match="--max-iter must be 1 to"):
        cli_batch.run_batch(opts)


# ---- not converged ---------------------------------------------------------------------------


def test_not_converged_keeps_its_document_and_fails_the_line(tmp_path, cli):
    text = (
        '{"expr": "x", "vars": {"x": 1}, "op": "minimize", "max_iter": 3}\n'
        '{"expr": "x**2 + 1", "vars": {"x": 1}, "op": "solve"}\n'
        '{"expr": "x**2", "vars": {"x": 1}, "op": "taylor", "order": 2}\n'
    )
    r = cli("batch", write(tmp_path, "in.jsonl", text))
    assert r.code == 1
    got = r.out.splitlines()
    want, code = reference(cli, 1, "minimize", "x", {"x": 1}, {"max_iter": 3})
    assert got[0] == want and code == 1
    want, code = reference(cli, 2, "solve", "x**2 + 1", {"x": 1})
    assert got[1] == want and code == 1
    assert [d["converged"] for d in lines(r)[:2]] == [False, False]
    assert "coefficients" in lines(r)[2]
    assert "2 of 3 line(s) failed; 2 did not converge" in r.err
    # a CSV line the same
    r = cli("batch", write(tmp_path, "m.csv", "x\n1\n"), "--expr", "x**2 + 1", "--op", "solve")
    assert r.code == 1 and lines(r)[0]["converged"] is False


# ---- bad lines -------------------------------------------------------------------------------

BAD = [
    # (line, kind, part of the message)
    ({"op": "taylor", "vars": {"x": 1}, "foo": 1}, "bad_line", "unknown key(s) 'foo'"),
    ({"op": "taylor", "vars": {"x": 1}, "method": "bfgs"}, "bad_line", 'taylor takes no "method"'),
    (
        {"op": "propagate", "vars": {"x": "1+-0.1"}, "wrt": ["x"]},
        "bad_line",
        'propagate takes no "wrt"',
    ),
    (
        {"op": "minimize", "vars": {"x": 1}, "tol": 1e-3},
        "bad_line",
        '(it takes "wrt", "method", "gtol"',
    ),
    ({"op": "critical", "vars": {"x": 1}, "order": 2}, "bad_line", 'critical takes no "order"'),
    (
        {"op": "solve", "vars": {"x": 1}, "grad_output": 1},
        "bad_line",
        'solve takes no "grad_output"',
    ),
    (
        {"op": "grad", "vars": {"x": 1}, "mc": 10},
        "bad_line",
        'grad takes no "mc" (a setting of propagate)',
    ),
    ({"op": "banana", "vars": {"x": 1}}, "bad_line", '"op" must be one of eval, grad'),
    (
        {"op": "taylor", "vars": {"x": 1}, "order": -1},
        "bad_line",
        '"order" must be a whole number, 0 or more',
    ),
    (
        {"op": "taylor", "vars": {"x": 1}, "order": 2.5},
        "bad_line",
        '"order" must be a whole number',
    ),
    ({"op": "taylor", "vars": {"x": 1}, "order": 21}, "bad_line", '"order" must be at most 20'),
    ({"op": "taylor", "vars": {"x": 1}, "at": [1.1]}, "bad_line", '"at" must be an object'),
    (
        {"op": "taylor", "vars": {"x": 1}, "at": {"x": [1, 2]}},
        "bad_line",
        '"at" x: a number, not an array',
    ),
    ({"op": "taylor", "vars": {"x": 1}, "at": {"x": "near"}}, "bad_value", '"at" x'),
    ({"op": "taylor", "vars": {"x": 1}, "at": {"y": 1}}, "input", "\"at\" names 'y'"),
    ({"op": "taylor", "vars": {"x": [1, 2]}}, "input", "taylor expands in scalar variables"),
    (
        {"op": "propagate", "vars": {"x": "1+-0.1"}, "mc": 1},
        "bad_line",
        '"mc" takes a number of draws of 2 or more',
    ),
    (
        {"op": "propagate", "vars": {"x": "1+-0.1"}, "mc": True},
        "bad_line",
        '"mc" must be a whole number',
    ),
    (
        {"op": "propagate", "vars": {"x": "1+-0.1"}, "mc": 10, "seed": -1},
        "bad_line",
        '"seed" must be 0 or more',
    ),
    (
        {"op": "propagate", "vars": {"x": "1+-0.1"}, "corr": "x=0.3"},
        "bad_line",
        '"corr" takes A,B=R',
    ),
    (
        {"op": "propagate", "vars": {"x": "1+-0.1"}, "corr": {"x,y": 1}},
        "bad_line",
        '"corr" takes "A,B=R"',
    ),
    (
        {"op": "propagate", "vars": {"x": "1+-0.1"}, "corr": "x,x=0.5"},
        "input",
        "a correlation must be",
    ),
    ({"op": "propagate", "vars": {"x": "1+-abc"}}, "bad_value", "the uncertainty of x"),
    ({"op": "propagate", "vars": {"x": "1 ±"}}, "bad_value", "x: '1 ±' has no uncertainty after"),
    (
        {"op": "propagate", "vars": {"x": 1}},
        "input",
        # in a line's words too: no command-line flag (it said "give one as --x VALUE+-U")
        "no input has an uncertainty: give one with its value as VALUE+-U (or VALUE±U), "
        "for example 1.5+-0.01 for x",
    ),
    (
        {"op": "minimize", "vars": {"x": 1}, "method": "newtn"},
        "bad_line",
        '"method" must be one of newton, bfgs, gd',
    ),
    (
        {"op": "minimize", "vars": {"x": 1}, "gtol": -1},
        "bad_line",
        '"gtol" must be a finite number above 0',
    ),
    ({"op": "minimize", "vars": {"x": 1}, "gtol": "small"}, "bad_line", '"gtol" must be a number'),
    (
        {"op": "minimize", "vars": {"x": 1}, "max_iter": 0},
        "bad_line",
        '"max_iter" must be 1 to 1,000,000',
    ),
    (
        {"op": "minimize", "vars": {"x": 1}, "trace": "yes"},
        "bad_line",
        '"trace" must be true or false',
    ),
    ({"op": "minimize", "vars": {"x": "3:1"}}, "bad_line", "x '3:1': the bounds are empty"),
    ({"op": "minimize", "vars": {"x": "a:1"}}, "bad_line", "bounds are LOW:HIGH"),
    ({"op": "minimize", "vars": {"x": "nan"}}, "input", "the start value of 'x' must be finite"),
    ({"op": "solve", "vars": {"x": "0:1"}}, "bad_value", "x:"),  # bounds are minimize's
    (
        {"op": "solve", "vars": {"x": 1}, "tol": 0},
        "bad_line",
        '"tol" must be a finite number above 0',
    ),
    (
        {"op": "critical", "vars": {"x": 1}, "max_iter": "5"},
        "bad_line",
        '"max_iter" must be a whole number',
    ),
    ({"op": "critical", "vars": {"x": 1}, "wrt": ["y"]}, "unknown_variable", "\"wrt\": 'y'"),
    ({"op": "minimize", "vars": {"x": 1, "z": 2}}, "unknown_variable", "'z'"),
    ({"expr": "x +", "op": "minimize", "vars": {"x": 1}}, "syntax", ""),
]


def test_bad_lines_are_records_among_good_ones(tmp_path, cli):
    good = {"op": "taylor", "vars": {"x": 0}, "order": 2}
    records = []
    for bad, _, _ in BAD:
        records += [good, bad]
    records.append(good)
    text = "".join(json.dumps({"expr": "x**2 + sin(x)", **r}) + "\n" for r in records)
    r = cli("batch", write(tmp_path, "in.jsonl", text))
    assert r.code == 1 and "Traceback" not in r.err
    docs = lines(r)
    assert [d["line"] for d in docs] == list(range(1, len(records) + 1))
    want = reference(cli, 1, "taylor", "x**2 + sin(x)", {"x": 0}, {"order": 2})[0]
    for i in range(0, len(records), 2):  # every good line, whatever came before it
        assert r.out.splitlines()[i] == want.replace('"line": 1,', f'"line": {i + 1},', 1)
    for (bad, kind, part), doc in zip(BAD, docs[1::2]):
        assert set(doc) == {"line", "error"}, (bad, doc)
        assert doc["error"]["kind"] == kind, (bad, doc)
        assert part in doc["error"]["message"], (bad, doc)
    assert f"{len(BAD)} of {len(records)} line(s) failed" in r.err


def test_bad_csv_cells(tmp_path, cli):
    text = "g,t\n9.81+-0.02,1.5\n9.81+-zz,1.5\n,1\n9.81+-0.02,1.5+-0.1\n"
    r = cli("batch", write(tmp_path, "p.csv", text), "--expr", "g*t", "--op", "propagate")
    assert r.code == 1
    docs = lines(r)
    assert [d["line"] for d in docs] == [2, 3, 4, 5]
    assert docs[0]["uncertainty"] == pytest.approx(0.03)
    assert docs[1]["error"]["kind"] == "bad_value"
    assert "the uncertainty of column 'g'" in docs[1]["error"]["message"]
    assert docs[2]["error"]["kind"] == "missing_value"
    assert set(docs[3]["budget"]) == {"g", "t"}
    r = cli(
        "batch", write(tmp_path, "m.csv", "x\n2:1\n0:1\n"), "--expr", "x**2", "--op", "minimize"
    )
    assert r.code == 1
    docs = lines(r)
    assert docs[0]["error"] == {
        "kind": "bad_line",
        "message": "column 'x' '2:1': the bounds are empty",
    }
    assert docs[1]["x"]["x"] == pytest.approx(0.0, abs=1e-12) and docs[1]["converged"]


# ---- the batch machinery around these rows ---------------------------------------------------


def test_fail_fast_stops_at_the_first_failed_line(tmp_path, cli):
    text = (
        '{"expr": "x**2", "vars": {"x": 1}, "op": "taylor"}\n'
        '{"expr": "x**2", "vars": {"x": 1}, "op": "minimize", "max_iter": 0}\n'
        '{"expr": "x**2", "vars": {"x": 1}, "op": "minimize"}\n'
    )
    r = cli("batch", write(tmp_path, "bad.jsonl", text), "--fail-fast")
    assert r.code == 1 and "--fail-fast" in r.err
    docs = lines(r)
    assert [d["line"] for d in docs] == [1, 2] and docs[1]["error"]["kind"] == "bad_line"
    # a line that does not converge stops the run the same way
    text = (
        '{"expr": "x**2", "vars": {"x": 1}, "op": "critical"}\n'
        '{"expr": "x", "vars": {"x": 1}, "op": "minimize", "max_iter": 2}\n'
        '{"expr": "x**2", "vars": {"x": 1}, "op": "solve"}\n'
    )
    r = cli("batch", write(tmp_path, "slow.jsonl", text), "--fail-fast")
    assert r.code == 1 and "did not converge" in r.err and "--fail-fast" in r.err
    assert [d["line"] for d in lines(r)] == [1, 2] and lines(r)[1]["converged"] is False


def test_fail_fast_evaluates_nothing_after_the_failure(tmp_path, cli, monkeypatch):
    calls = []
    original = optimize.solve

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(optimize, "solve", counted)
    text = '{"x": 1}\n{"x": "nan"}\n' + '{"x": 2}\n' * 5
    r = cli(
        "batch",
        write(tmp_path, "in.jsonl", text),
        "--expr",
        "x**2 - 2",
        "--op",
        "solve",
        "--fail-fast",
    )
    assert r.code == 1 and [d["line"] for d in lines(r)] == [1, 2]
    assert len(calls) == 2  # lines 1 and 2, not the five after them


def test_output_file(tmp_path, cli):
    text = '{"x": 0}\n{"x": 1}\n'
    out = tmp_path / "out.jsonl"
    path = write(tmp_path, "in.jsonl", text)
    r = cli("batch", path, "--expr", "cos(x)", "--op", "taylor", "-o", str(out))
    assert r.code == 0 and r.out == ""
    assert out.read_text() == cli("batch", path, "--expr", "cos(x)", "--op", "taylor").out


def test_timeout_during_a_long_minimize(tmp_path, cli):
    text = (
        '{"expr": "x**2", "vars": {"x": 1}, "op": "taylor"}\n'
        '{"expr": "x", "vars": {"x": 1}, "op": "minimize", "method": "gd", "max_iter": 1000000}\n'
        '{"expr": "x**2", "vars": {"x": 2}, "op": "taylor"}\n'
    )
    r = cli("batch", write(tmp_path, "in.jsonl", text), "--timeout", "1")
    assert r.code == 1 and "--timeout of 1 s" in r.err
    docs = lines(r)
    assert [d["line"] for d in docs] == [1, 2, 3]
    assert "coefficients" in docs[0]
    assert docs[1]["error"]["kind"] == docs[2]["error"]["kind"] == "limit"


def test_ctrl_c_stops_an_analysis_line_at_once(tmp_path, cli, monkeypatch):
    original = optimize.minimize
    finished = []

    def interrupted(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the minimize runs
        result = original(*args, **kwargs)
        finished.append(1)
        return result

    monkeypatch.setattr(optimize, "minimize", interrupted)
    text = (
        '{"expr": "x**2", "vars": {"x": 1}, "op": "taylor"}\n'
        '{"expr": "x**2", "vars": {"x": 1}, "op": "minimize"}\n'
        '{"expr": "x**2", "vars": {"x": 1}, "op": "taylor"}\n'
    )
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        r = cli("batch", write(tmp_path, "in.jsonl", text))
    finally:
        signal.signal(signal.SIGINT, previous)
    assert r.code == 130 and "Traceback" not in r.err
    assert [d["line"] for d in lines(r)] == [1]  # the completed prefix, never the stopped line
    assert finished == []  # stopped inside the minimize, not after it


# ---- the library -----------------------------------------------------------------------------


def test_rows_evaluates_analysis_rows_one_by_one():
    program = parse("(x - 1)**2 + (y + 2)**2")
    points = [{"x": 0.0, "y": 0.0}, {"x": 5.0, "y": -5.0}]
    out = rows.evaluate_rows(program, points, op="minimize", settings={"method": "bfgs"})
    assert [r.method for r in out] == ["bfgs", "bfgs"]
    assert all(r.x == {"x": pytest.approx(1.0), "y": pytest.approx(-2.0)} for r in out)
    assert rows.plan([rows.Row(p, op="minimize") for p in points]) == [(False, [0]), (False, [1])]
    taylor_row = rows.Row({"x": 0.0, "y": 0.0}, op="taylor", wrt=("x",), order=2)
    bad = rows.Row({"x": 0.0, "y": 0.0}, op="solve", order=2)
    good, error = rows.evaluate_rows(program, [taylor_row, bad])
    assert good.coefficients == [5.0, -2.0, 1.0]
    assert isinstance(error, rows.RowError) and error.kind == "bad_line"
    doc = analysis_docs.document("taylor", "(x - 1)**2 + (y + 2)**2", good)
    assert list(doc) == ["expr", "at", "order", "coefficients", "polynomial", "value"]


def test_settings_table_mirrors_the_commands_options(cli):
    # every per-line key is an option of its command (spelled --max-iter for max_iter)
    for op, keys in analysis_docs.KEYS.items():
        help_text = cli(op, "--help").out
        for key in keys:
            assert "--" + key.replace("_", "-") in help_text, (op, key)


def test_command_line_settings_apply_to_csv_lines(cli, tmp_path):
    # batch --method/--max-iter/--mc/--seed/--corr/--at: what a line's keys would say
    path = tmp_path / "start.csv"
    path.write_text("x,y\n-1.2,1\n")
    expr = "(1-x)**2 + 100*(y-x**2)**2"
    got = cli(
        "batch", str(path), "--op", "minimize", "--expr", expr, "--method", "gd", "--max-iter", "3"
    )
    one = cli(
        "minimize", expr, "--x", "-1.2", "--y", "1", "--method", "gd", "--max-iter", "3", "--json"
    )
    assert got.code == 1 and one.code == 1  # not converged in 3 steps: a failed line
    assert json.loads(got.out) == {"line": 2, **one.json}
    path = tmp_path / "m.csv"
    path.write_text("g,t\n9.81+-0.02,1.5+-0.01\n")
    argv = ("--mc", "2000", "--seed", "7", "--corr", "g,t=0.3")
    got = cli("batch", str(path), "--op", "propagate", "--expr", "g*t**2/2", *argv)
    one = cli("propagate", "g*t**2/2", "--g", "9.81+-0.02", "--t", "1.5+-0.01", *argv, "--json")
    assert got.code == 0 and json.loads(got.out) == {"line": 2, **one.json}
    path = tmp_path / "t.csv"
    path.write_text("x\n0\n")
    got = cli(
        "batch", str(path), "--op", "taylor", "--expr", "exp(x)", "--order", "3", "--at", "x=0.5"
    )
    one = cli("taylor", "exp(x)", "--x", "0", "--order", "3", "--at", "x=0.5", "--json")
    assert got.code == 0 and json.loads(got.out) == {"line": 2, **one.json}
    bad = cli("batch", str(path), "--op", "minimize", "--expr", "x**2", "--method", "foo", "--json")
    assert bad.code == 2 and json.loads(bad.out)["error"]["kind"] == "usage"
