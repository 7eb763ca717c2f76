"""The batch command: JSONL and CSV in, one JSONL line out per input line, vectorised groups.

Everything goes through the real command line (``cli.main.run``, the error boundary
included).  The reference for every batched result is the one-at-a-time evaluation:
the document ``grad --json``/``eval --json`` prints for that line's values, plus
``"line"``, compared as exact text (values, gradients, signs of zeros and warnings).
"""

from __future__ import annotations

import io
import json
import os
import random
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from autograd_cli.cli import batch as cli_batch
from autograd_cli.cli import jsonout, render
from autograd_cli.cli.main import run
from autograd_cli.core import api, backend
from autograd_cli.core import batch as core_batch
from autograd_cli.grammar import parse


class Out:
    def __init__(self, code, out, err):
        self.code = code
        self.out = out
        self.err = err

    @property
    def lines(self):
        return self.out.splitlines()

    @property
    def docs(self):
        return [json.loads(line) for line in self.lines]


def _default_signals() -> None:
    """In the child: SIGINT and SIGHUP as a terminal delivers them (a test run under nohup,
    or a shell that ignores SIGINT in background jobs, would pass SIG_IGN on)."""
    for name in ("SIGINT", "SIGHUP", "SIGTERM"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)


@pytest.fixture
def cli(capsys):
    def invoke(*argv):
        capsys.readouterr()
        code = run([str(a) for a in argv])
        captured = capsys.readouterr()
        return Out(int(code), captured.out, captured.err)

    return invoke


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def single(expr, values, op="grad", wrt=None):
    """The reference: what the single command prints with --json for these values."""
    program = parse(expr)
    result = api.eval_of(program, values) if op == "eval" else api.grad_of(program, values, wrt=wrt)
    return render.result_json(expr, result)


def reference_line(line, expr, values, op="grad", wrt=None):
    doc = {"line": line}
    doc.update(single(expr, values, op, wrt))
    return jsonout.dumps(doc)


# ---- JSONL -------------------------------------------------------------------------------------


def test_jsonl_file_matches_single_commands(tmp_path, cli):
    rows = [
        {"expr": "3*a**3 - b**2", "vars": {"a": 2, "b": 6}},
        {"expr": "3*a**3 - b**2", "vars": {"a": -1.5, "b": 0.25}},
        {"expr": "sum(v * v)", "vars": {"v": [1, 2, 3]}, "op": "eval"},
        {"expr": "x * y", "vars": {"x": 2, "y": 5}, "wrt": ["y"]},
    ]
    path = write(tmp_path, "in.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    r = cli("batch", path)
    assert r.code == 0, r.err
    assert r.lines == [
        reference_line(i + 1, row["expr"], row["vars"], row.get("op", "grad"), row.get("wrt"))
        for i, row in enumerate(rows)
    ]
    # ...and the reference really is the single command's document
    single_cmd = cli("grad", "3*a**3 - b**2", "--a", "2", "--b", "6", "--json")
    expected = json.loads(single_cmd.out)
    expected = {"line": 1, **expected}
    assert r.docs[0] == expected
    assert r.docs[3]["grad"] == {"y": 2.0}


def test_jsonl_with_expr_lines_are_just_variables(tmp_path, cli):
    path = write(
        tmp_path,
        "in.jsonl",
        '{"x": 1}\n{"x": 2}\n{"vars": {"x": 3}, "op": "eval"}\n'
        '{"expr": "x**3", "vars": {"x": 2}}\n',
    )
    r = cli("batch", path, "--expr", "x**2", "--op", "grad")
    assert r.code == 0, r.err
    docs = r.docs
    assert [d["line"] for d in docs] == [1, 2, 3, 4]
    assert [d["value"] for d in docs] == [1.0, 4.0, 9.0, 8.0]
    assert docs[0]["grad"] == {"x": 2.0} and "grad" not in docs[2]
    assert docs[3]["expr"] == "x**3" and docs[3]["grad"] == {"x": 12.0}


def test_stdin_is_jsonl(cli, monkeypatch):
    data = (
        '{"expr": "x*y", "vars": {"x": 2, "y": 3}}\n\n{"expr": "x*y", "vars": {"x": 4, "y": 5}}\n'
    )
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data.encode())))
    r = cli("batch", "-")
    assert r.code == 0, r.err
    assert [(d["line"], d["value"], d["grad"]) for d in r.docs] == [
        (1, 6.0, {"x": 3.0, "y": 2.0}),
        (3, 20.0, {"x": 5.0, "y": 4.0}),
    ]


def test_stdin_csv_with_format(cli, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("x,y\n1,2\n3,4\n"))
    r = cli("batch", "-", "--format", "csv", "--expr", "x+y", "--op", "eval")
    assert r.code == 0, r.err
    assert [(d["line"], d["value"]) for d in r.docs] == [(2, 3.0), (3, 7.0)]


def test_bad_lines_in_the_middle_one_output_line_each(tmp_path, cli):
    text = (
        "\n".join(
            [
                '{"expr": "x**2", "vars": {"x": 1}}',
                '{"expr": "x**2", "vars": {"x": ',  # malformed JSON
                '{"expr": "x**2", "vars": {"x": 2, "zz": 1}}',  # unknown variable
                '{"expr": "x**", "vars": {"x": 2}}',  # parse error
                '{"expr": "log(x)", "vars": {"x": -1}}',  # domain: nan + warning
                '{"expr": "x + [1, 2]", "vars": {"x": [1, 2, 3]}}',  # shapes do not fit
                "[1, 2]",  # not an object
                '{"expr": "x**2", "vars": {"x": 3}, "op": "nope"}',  # bad op
                '{"expr": "x**2", "vars": {"x": [1, [2]]}}',  # ragged
                '{"expr": "v", "vars": {"v": [1, 2]}}',  # grad of a non-scalar
                '{"expr": "x**2", "vars": {"x": 4}}',
            ]
        )
        + "\n"
    )
    path = write(tmp_path, "in.jsonl", text)
    r = cli("batch", path)
    assert r.code == 1
    assert "failed" in r.err
    docs = r.docs
    assert [d["line"] for d in docs] == list(range(1, 12))
    kinds = [d.get("error", {}).get("kind") for d in docs]
    assert kinds == [
        None,
        "bad_line",
        "unknown_variable",
        "syntax",
        None,
        "shape",
        "bad_line",
        "bad_line",
        "bad_value",
        "non_scalar_output",
        None,
    ]
    assert docs[0]["value"] == 1.0 and docs[10]["value"] == 16.0
    assert docs[4]["value"] == "nan" and docs[4]["warnings"]
    assert docs[3]["error"]["line"] == 1 and docs[3]["error"]["column"] == 4
    # --json changes nothing: still exactly one line per input line (the summary is on stderr)
    again = cli("batch", path, "--json")
    assert again.code == 1 and again.out == r.out
    # every error carries the message the single command gives
    assert (
        docs[2]["error"]["message"]
        == json.loads(cli("grad", "x**2", "--x", "2", "--zz", "1", "--json").out)["error"][
            "message"
        ]
    )


def test_fail_fast_stops_at_first_error(tmp_path, cli):
    path = write(tmp_path, "in.jsonl", '{"x": 1}\n{"x": 2}\n{"y": 3}\n{"x": 4}\n')
    r = cli("batch", path, "--expr", "x*2", "--fail-fast")
    assert r.code == 1
    docs = r.docs
    assert [d["line"] for d in docs] == [1, 2, 3]
    assert "error" in docs[2]
    r = cli("batch", path, "--expr", "x*2")
    assert r.code == 1 and len(r.docs) == 4


def test_blank_lines_are_skipped_and_numbered_like_an_editor(tmp_path, cli):
    path = write(tmp_path, "in.jsonl", '\n{"x": 1}\n   \n\n{"x": 2}\r\n\t\n')
    r = cli("batch", path, "--expr", "x+1", "--op", "eval")
    assert r.code == 0
    assert [(d["line"], d["value"]) for d in r.docs] == [(2, 2.0), (5, 3.0)]


def test_mixed_expressions_keep_input_order(tmp_path, cli):
    exprs = ["x*y", "sin(x) + y", "sum(v) * x", "x*y"]
    lines, expected = [], []
    rng = random.Random(3)
    for i in range(40):
        e = exprs[rng.randrange(len(exprs))]
        values = {"x": rng.uniform(-2, 2), "y": rng.uniform(-2, 2)}
        if "v" in e:
            values = {
                "v": [rng.uniform(-1, 1) for _ in range(rng.choice([2, 3]))],
                "x": values["x"],
            }
        else:
            values = {k: values[k] for k in ("x", "y")}
        lines.append(json.dumps({"expr": e, "vars": values}))
        expected.append(reference_line(i + 1, e, values))
    path = write(tmp_path, "in.jsonl", "\n".join(lines) + "\n")
    for chunk in ("7", "65536"):
        r = cli("batch", path, "--chunk-size", chunk)
        assert r.code == 0, r.err
        assert r.lines == expected


def test_hessian_and_jacobian_lines(tmp_path, cli):
    path = write(
        tmp_path,
        "in.jsonl",
        '{"expr": "x**3*y", "vars": {"x": 2, "y": 1}, "op": "hessian"}\n'
        '{"expr": "[x*y, x+y]", "vars": {"x": 1, "y": 2}, "op": "jacobian"}\n'
        '{"expr": "x**3", "vars": {"x": 2}, "op": "diff", "wrt": ["x"]}\n',
    )
    r = cli("batch", path)
    docs = r.docs
    assert len(docs) == 3
    for doc, command in (
        (docs[0], ["hessian", "x**3*y", "--x", "2", "--y", "1"]),
        (docs[1], ["jacobian", "[x*y, x+y]", "--x", "1", "--y", "2"]),
    ):
        if hasattr(api, command[0] + "_of"):
            assert doc == {"line": doc["line"], **json.loads(cli(*command, "--json").out)}
        else:
            assert doc["error"]["kind"] == "unsupported"
    if not hasattr(api, "diff_of"):
        assert docs[2]["error"]["kind"] == "unsupported"
        assert r.code == 1
    else:
        assert "derivative" in docs[2] or "error" in docs[2]


def test_grad_output_and_order_per_line(tmp_path, cli):
    path = write(
        tmp_path,
        "in.jsonl",
        '{"expr": "x*v", "vars": {"x": 2, "v": [1, 2]}, "grad_output": [1, 1]}\n'
        '{"expr": "x**3", "vars": {"x": 2}, "order": 2}\n',
    )
    r = cli("batch", path)
    assert r.code == 0, r.out
    assert r.docs[0]["grad"] == {"x": 3.0, "v": [2.0, 2.0]}
    assert r.docs[1]["grad"] == {"x": 12.0}


# ---- CSV ---------------------------------------------------------------------------------------


def test_csv_lines_and_values(tmp_path, cli):
    path = write(tmp_path, "pts.csv", "x,y\n1,2\n\n3,4\n-0.0,inf\n")
    r = cli("batch", path, "--expr", "x*y")
    assert r.code == 0, r.err
    assert r.lines == [
        reference_line(2, "x*y", {"x": 1.0, "y": 2.0}),
        reference_line(4, "x*y", {"x": 3.0, "y": 4.0}),
        reference_line(5, "x*y", {"x": -0.0, "y": float("inf")}),
    ]
    assert r.docs[2]["value"] == "nan" and r.docs[2]["grad"] == {"x": "inf", "y": -0.0}


def test_csv_bad_rows_and_tensor_cells(tmp_path, cli):
    path = write(tmp_path, "pts.csv", 'x,v\n1,"[1, 2]"\n2\nabc,"[1]"\n3,"[3, 4]"\n4,\n5,"[5]"\n')
    r = cli("batch", path, "--expr", "x * sum(v)")
    assert r.code == 1
    docs = r.docs
    assert [d["line"] for d in docs] == [2, 3, 4, 5, 6, 7]
    assert [d.get("error", {}).get("kind") for d in docs] == [
        None,
        "bad_line",
        "bad_value",
        None,
        "missing_value",
        None,
    ]
    assert docs[0]["grad"] == {"x": 3.0, "v": [1.0, 1.0]}
    assert docs[3]["value"] == 21.0 and docs[5]["grad"]["v"] == [5.0]


def test_csv_command_problems_exit_2(tmp_path, cli):
    path = write(tmp_path, "pts.csv", "x,y\n1,2\n")
    assert cli("batch", path).code == 2  # no --expr
    r = cli("batch", path, "--expr", "x*z", "--json")  # y unused (ignored, issue 13), z missing
    assert r.code == 2 and json.loads(r.out)["error"]["kind"] == "missing_value"
    assert "ignoring CSV column 'y'" in r.err
    assert cli("batch", path, "--expr", "x", "--wrt", "q").code == 2  # --wrt not a var
    assert cli("batch", write(tmp_path, "h.csv", "x,1x\n1,2\n"), "--expr", "x").code == 2
    assert cli("batch", tmp_path / "missing.csv", "--expr", "x").code == 2
    r = cli("batch", path, "--expr", "x", "--format", "xml", "--json")
    assert r.code == 2 and json.loads(r.out)["error"]["kind"] == "usage"
    r = cli("batch", path, "--expr", "x*", "--json")
    assert r.code == 2 and json.loads(r.out)["error"]["kind"] == "syntax"
    assert cli("batch", path, "--expr", "x", "--chunk-size", "0").code == 2
    assert cli("batch", write(tmp_path, "e.csv", ""), "--expr", "x").out == ""


def test_float32(tmp_path, cli):
    path = write(tmp_path, "pts.csv", "x\n0.1\n0.2\n")
    r = cli("batch", path, "--expr", "x*3", "--dtype", "float32")
    with backend.using(dtype="float32"):
        expected = [reference_line(2, "x*3", {"x": 0.1}), reference_line(3, "x*3", {"x": 0.2})]
    assert r.lines == expected


# ---- output file, progress, Ctrl-C -------------------------------------------------------------


def test_output_file_is_written_atomically(tmp_path, cli, monkeypatch):
    path = write(tmp_path, "pts.csv", "x\n" + "".join(f"{i}\n" for i in range(10)))
    target = tmp_path / "out.jsonl"
    r = cli("batch", path, "--expr", "x**2", "-o", target, "--chunk-size", "3")
    assert r.code == 0 and r.out == ""
    assert len(target.read_text().splitlines()) == 10
    assert sorted(os.listdir(tmp_path)) == ["out.jsonl", "pts.csv"]

    # A crash half-way leaves the previous file in place and no temporary file behind.
    target.write_text("OLD\n")
    calls = {"n": 0}
    original = cli_batch.Runner.write_group

    def crash(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("simulated crash")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cli_batch.Runner, "write_group", crash)
    r = cli("batch", path, "--expr", "x**2", "-o", target, "--chunk-size", "3")
    assert r.code == 1 and "simulated crash" in r.err
    assert target.read_text() == "OLD\n"
    assert sorted(os.listdir(tmp_path)) == ["out.jsonl", "pts.csv"]
    assert cli("batch", path, "--expr", "x", "-o", tmp_path / "no" / "dir.jsonl").code == 2


def test_progress_bar_never_touches_stdout(tmp_path, cli):
    path = write(tmp_path, "pts.csv", "x\n" + "".join(f"{i}\n" for i in range(50)))
    plain = cli("batch", path, "--expr", "x*2", "--no-progress")
    shown = cli("batch", path, "--expr", "x*2", "--progress", "--chunk-size", "10")
    assert plain.code == shown.code == 0
    assert shown.out == plain.out and len(plain.lines) == 50


def test_ctrl_c_mid_chunk_flushes_the_completed_prefix(tmp_path, cli, monkeypatch):
    path = write(
        tmp_path,
        "in.jsonl",
        '{"expr": "x+1", "vars": {"x": 1}}\n'
        '{"expr": "x+2", "vars": {"x": 1}}\n'
        '{"expr": "x+1", "vars": {"x": 2}}\n'
        '{"expr": "x+2", "vars": {"x": 2}}\n',
    )
    original = core_batch.evaluate_batch

    def interrupted(program, *args, **kwargs):
        if program.source == "x+1":
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the first group runs
        return original(program, *args, **kwargs)

    monkeypatch.setattr(core_batch, "evaluate_batch", interrupted)
    # a runner started in the background (SIGINT ignored) would make batch ignore it too
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        r = cli("batch", path, "--op", "eval")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert r.code == 130
    # the x+1 group finished (lines 1 and 3), but only the completed prefix is written
    assert [(d["line"], d["value"]) for d in r.docs] == [(1, 2.0)]
    assert r.out.endswith("\n")


def test_ctrl_c_while_reading_stdin(tmp_path):
    exe = os.path.join(os.path.dirname(sys.executable), "autograd-cli")
    if not os.path.exists(exe):
        pytest.skip("the autograd-cli console script is not installed next to this Python")
    proc = subprocess.Popen(
        [exe, "batch", "-", "--expr", "x*2", "--chunk-size", "1"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C at its default even when the runner ignores it
        preexec_fn=_default_signals,  # as at a terminal, even under nohup
    )
    try:
        for i in range(3):
            proc.stdin.write(json.dumps({"x": i}) + "\n")
            proc.stdin.flush()
            assert json.loads(proc.stdout.readline())["line"] == i + 1
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert out == "" and "Traceback" not in err


# ---- batched evaluation == one row at a time ---------------------------------------------------

_LEAVES = [
    "x",
    "y",
    "sum(v)",
    "mean(A, axis=0) @ v",
    "max(v)",
    "min(A, axis=1)[0]",
    "norm(v)",
    "A[1, 2]",
    "sum(A @ v)",
    "dot(v, v)",
    "sum(transpose(A) @ [1, 2])",
    "prod(v)",
    "sum(reshape(A, [3, 2])[2])",
    "sum([x, y] * [1, 2])",
    "v[0]",
    "sum(A.T * A.T)",
    "mean(A)",
    "sum(max(A, axis=0))",
    "sum([x, 1, y] @ transpose(A))",
    "max(x, 0)",
    "sum(where(v > 0, v, 0))",
    "x @ [2]" if False else "sum(x * v)",
    "norm(A, 1) @ [1, 1]",
]
_UNARY = [
    "sin({})",
    "cos({})",
    "tanh({})",
    "exp({} / 4)",
    "sqrt(abs({}))",
    "log(1 + ({})**2)",
    "relu({})",
    "sigmoid({})",
    "softplus({})",
    "abs({})",
    "-({})",
    "({})**2",
]
_BINARY = [
    "({}) + ({})",
    "({}) - ({})",
    "({}) * ({})",
    "({}) / (1 + ({})**2)",
    "max({}, {})",
    "where(({}) > ({}), x, y)",
    "min({}, {})",
]


def _random_expr(rng: random.Random, depth: int) -> str:
    if depth == 0 or rng.random() < 0.25:
        return rng.choice(_LEAVES)
    if rng.random() < 0.5:
        return rng.choice(_UNARY).format(_random_expr(rng, depth - 1))
    template = rng.choice(_BINARY)
    a, b = _random_expr(rng, depth - 1), _random_expr(rng, depth - 1)
    return template.format(a, b, b) if template.count("{}") == 3 else template.format(a, b)


def _random_values(rng: np.random.Generator, n: int) -> list:
    rows = []
    for _ in range(n):
        ints = rng.random() < 0.3  # zeros and ties: kinks, warnings, split gradients
        draw = (
            (lambda *s: rng.integers(-2, 3, size=s).astype(float))
            if ints
            else (lambda *s: rng.normal(size=s))
        )
        rows.append(
            {
                "x": float(draw(1)[0]),
                "y": float(draw(1)[0]),
                "v": draw(3).tolist(),
                "A": draw(2, 3).tolist(),
            }
        )
    return rows


def test_batched_equals_per_row_on_random_expressions(tmp_path, cli):
    rng = random.Random(7)
    nrng = np.random.default_rng(7)
    exprs = sorted({_random_expr(rng, 3) for _ in range(40)})
    lines, expected = [], []
    for expr in exprs:
        program = parse(expr)
        for values in _random_values(nrng, 12):
            values = {k: v for k, v in values.items() if k in program.inputs}
            op = "grad" if nrng.random() < 0.8 else "eval"
            lines.append(json.dumps({"expr": expr, "vars": values, "op": op}))
            expected.append(reference_line(len(lines), expr, values, op))
    path = write(tmp_path, "in.jsonl", "\n".join(lines) + "\n")
    r = cli("batch", path)
    assert r.code == 0, r.err
    got = r.lines
    assert len(got) == len(expected)
    mismatches = [(e, g) for e, g in zip(expected, got) if e != g]
    assert not mismatches, mismatches[:3]


def test_core_batch_rows_match_and_reductions_stay_in_a_row():
    rng = np.random.default_rng(0)
    B = 6
    columns = {"A": rng.normal(size=(B, 2, 3)), "v": rng.normal(size=(B, 3))}
    for expr in [
        "sum(A)",
        "mean(A, axis=0) @ v",
        "sum(v) + max(A)",
        "norm(A, -1) @ [1, 1]",
        "sum(transpose(A) @ [1, 2])",
        "prod(v)",
        "sum(A @ v)",
    ]:
        program = parse(expr)
        cols = {k: c for k, c in columns.items() if k in program.inputs}
        res = core_batch.evaluate_batch(program, cols, B, grad=True)
        for i in range(B):
            one = api.grad_of(program, {k: c[i] for k, c in cols.items()})
            assert np.array_equal(res.value[i], one.value), expr
            for name in one.grad:
                assert np.array_equal(res.grad[name][i], one.grad[name]), (expr, name)
    # sum(x) of a vector per row is that row's sum, never the sum over rows
    res = core_batch.evaluate_batch(parse("sum(x)"), {"x": np.array([[1.0, 2.0], [3.0, 4.0]])}, 2)
    assert res.value.tolist() == [3.0, 7.0]
    res = core_batch.evaluate_batch(
        parse("mean(x, axis=0)"), {"x": np.array([[[1.0, 2.0], [3.0, 4.0]]] * 2)}, 2
    )
    assert res.value.tolist() == [[2.0, 3.0], [2.0, 3.0]]


def test_group_wide_errors_and_fallback():
    program = parse("x * y")
    with pytest.raises(core_batch.GroupError) as info:
        core_batch.evaluate_batch(program, {"x": np.ones(3)}, 3, grad=True)
    assert info.value.error.kind == "missing_value"
    with pytest.raises(core_batch.GroupError) as info:
        core_batch.evaluate_batch(parse("v * 2"), {"v": np.ones((3, 2))}, 3, grad=True)
    assert info.value.error.kind == "non_scalar_output"
    with pytest.raises(core_batch.Unbatchable):  # an axis out of range for one row
        core_batch.evaluate_batch(parse("sum(v, axis=-2)"), {"v": np.ones((3, 2))}, 3)


def test_fast_line_template_equals_jsonout(tmp_path):
    values = np.array([0.1, -0.0, float("nan"), float("inf"), -float("inf"), 1e-300, 1e300, 3.0])
    result = core_batch.BatchResult(
        size=len(values),
        value=values,
        grad={"x": values[::-1].copy(), "y%": values * 2},
        warnings={2: ["a warning"], 3: ["100% sure", "b"], 5: ["a warning"]},
    )
    chunk = cli_batch.Chunk(list(range(10, 10 + len(values))))
    runner = cli_batch.Runner(cli_batch.BatchOptions(source="-"), cli_batch.Interrupt())
    expr = 'x "%s" é'
    runner.write_group(chunk, expr, list(range(len(values))), result)
    for j, text in enumerate(chunk.out):
        r = api.Result(
            value=values[j, ...],
            warnings=result.row_warnings(j),
            grad={"x": result.grad["x"][j, ...], "y%": result.grad["y%"][j, ...]},
        )
        assert text == jsonout.dumps({"line": 10 + j, **render.result_json(expr, r)})
        json.loads(text)


def test_large_csv_chunks_bad_line_in_the_middle_and_sample_equality(tmp_path, cli):
    rng = np.random.default_rng(11)
    n = 20000
    data = rng.normal(size=(n, 2))
    lines = [f"{x!r},{y!r}" for x, y in data.tolist()]
    lines[9999] = "1.5,oops"  # a bad line in the middle (line 10001 of the file)
    lines[15000] = ""  # a blank line: no output for it
    path = write(tmp_path, "big.csv", "x,y\n" + "\n".join(lines) + "\n")
    expr = "x*y + sin(x)*exp(y/3) + sum([x, y] ** 2)"
    target = tmp_path / "out.jsonl"
    r = cli("batch", path, "--expr", expr, "--chunk-size", "4096", "-o", target)
    assert r.code == 1 and "1 of 19999 line(s) failed" in r.err
    out = target.read_text().splitlines()
    assert len(out) == n - 1
    numbers = [json.loads(line)["line"] for line in out]
    assert numbers == [i + 2 for i in range(n) if i != 15000]
    assert json.loads(out[9999]) == {
        "line": 10001,
        "error": {
            "kind": "bad_value",
            "message": "column 'y': 'oops' is not a number or a JSON array",
            "value": "oops",
        },
    }
    by_line = dict(zip(numbers, out))
    for i in random.Random(5).sample([i for i in range(n) if i not in (9999, 15000)], 200):
        x, y = data[i].tolist()
        assert by_line[i + 2] == reference_line(i + 2, expr, {"x": x, "y": y})


def test_rows_with_warnings_keep_their_own(tmp_path, cli):
    # every row warns about the comparison on the gradient path; some also about abs at 0
    rng = np.random.default_rng(4)
    xs = rng.normal(size=3000)
    ys = np.where(rng.random(3000) < 0.1, 0.0, rng.normal(size=3000))
    path = write(
        tmp_path,
        "w.csv",
        "x,y\n" + "".join(f"{x!r},{y!r}\n" for x, y in zip(xs.tolist(), ys.tolist())),
    )
    expr = "(x > 0) * x + abs(y) + log(abs(y))"
    r = cli("batch", path, "--expr", expr, "--chunk-size", "1000")
    assert r.code == 0
    assert r.lines == [
        reference_line(i + 2, expr, {"x": x, "y": y})
        for i, (x, y) in enumerate(zip(xs.tolist(), ys.tolist()))
    ]
    assert len({tuple(d.get("warnings", ())) for d in r.docs}) >= 2


def test_the_local_engine_refuses_parquet_and_says_which_engine_reads_it(cli, tmp_path):
    csv = tmp_path / "p.csv"
    csv.write_text("x\n1\n")
    for argv in (
        ["batch", str(tmp_path / "p.parquet"), "--expr", "x"],
        ["batch", str(csv), "--expr", "x", "-o", str(tmp_path / "out.parquet")],
    ):
        r = cli(*argv, "--json")
        assert r.code == 2 and "needs --engine dask" in json.loads(r.out)["error"]["message"]
    assert not (tmp_path / "out.parquet").exists()
