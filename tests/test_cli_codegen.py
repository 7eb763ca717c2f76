"""The codegen command: SPEC's JSON keys, -o, --check's verdicts and exit codes, the errors,
and the library's and the REPL's ways in."""

from __future__ import annotations

import importlib.util
import json
import os

import numpy as np
import pytest

import autograd_cli as ag
from autograd_cli.core.codegen import check as checking


def _load(code: str, name: str = "f"):
    namespace: dict = {}
    exec(compile(code, "<generated>", "exec"), namespace)
    return namespace[name]


def test_the_json_document_has_specs_keys_and_the_code_runs(cli):
    r = cli("codegen", "3*a**3 - b**2", "--a", "2", "--b", "6", "--json")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert list(doc) == ["target", "name", "inputs", "outputs", "code"]
    assert doc["target"] == "numpy" and doc["name"] == "f"
    assert doc["inputs"] == {"a": [], "b": []}
    assert doc["outputs"] == ["value", "grad_a", "grad_b"]
    value, ga, gb = _load(doc["code"])(2.0, 6.0)
    assert (float(value), float(ga), float(gb)) == (-12.0, 36.0, -12.0)


def test_check_reports_each_output_and_passes(cli):
    r = cli("codegen", "x*sin(y) + sqrt(abs(x))", "--x", "2", "--y", "1", "--check", "30", "--json")
    assert r.code == 0, r.err
    check = json.loads(r.out)["check"]
    assert list(check) == ["points", "max_rel_diff", "passed", "by_output"]
    assert check["points"] == 30 and check["passed"] is True
    assert set(check["by_output"]) == {"value", "grad_x", "grad_y"}
    assert check["max_rel_diff"] == max(check["by_output"].values()) <= 1e-12


def test_check_without_a_number_takes_100_points_and_reports_on_stderr(cli):
    r = cli("codegen", "x**2", "--check")
    assert r.code == 0
    assert r.out.startswith("# autograd-cli")  # stdout holds the code alone
    assert "check: 100 points, numpy against the engine" in r.err


def test_a_check_that_disagrees_exits_1_and_keeps_the_output(cli, monkeypatch):
    engine = checking._engine

    def off(program, point, wrt, hessian):
        return [v + 1e-9 for v in engine(program, point, wrt, hessian)]

    monkeypatch.setattr(checking, "_engine", off)
    r = cli("codegen", "x*x", "--x", "3", "--check", "5", "--json")
    assert r.code == 1
    doc = json.loads(r.out)
    assert doc["check"]["passed"] is False and doc["code"].startswith("# autograd-cli")


def test_a_missing_runtime_is_exit_2_never_a_pass(cli, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a)
    )
    r = cli("codegen", "x*x", "--target", "torch", "--check", "--json")
    assert r.code == 2
    error = json.loads(r.out)["error"]
    assert error["kind"] == "check_unavailable"
    assert "--check" in error["message"] and "PyTorch" in error["message"]


def test_output_file_gets_the_code_whole(cli, tmp_path):
    target = tmp_path / "grad_f.py"
    r = cli("codegen", "exp(x)*y", "-o", str(target), "--name", "grad_f")
    assert r.code == 0 and r.out == ""
    f = _load(target.read_text(), "grad_f")
    assert [float(v) for v in f(0.0, 2.0)] == [2.0, 2.0, 1.0]
    folder = cli("codegen", "x", "-o", str(tmp_path))
    assert folder.code == 1 and "-o: cannot write" in folder.err


@pytest.mark.parametrize(
    "argv, code, kind",
    [
        (["x", "--target", "fortran"], 2, "input"),
        (["x", "--name", "1f"], 2, "input"),
        (["x", "--name", "lambda"], 2, "input"),
        (["x", "--check", "0"], 2, "usage"),
        (["x", "--shape", "x=3,a"], 2, "usage"),
        (["x", "--shape", "y=3"], 2, "unknown_variable"),
        (["x*y", "--wrt", "z"], 2, "unknown_variable"),
        (["x*y", "--x", "[1, 2]"], 1, "non_scalar_output"),
        (["sort(x)[0]", "--x", "[3, 1, 2]"], 1, "unsupported"),
        # sizes refused before anything is allocated: the traced value, the check's points
        (["sum(x)", "--shape", "x=1000000,1000000"], 1, "limit"),
        (["sum(x)", "--shape", "x=100000", "--check", "100000"], 1, "limit"),
    ],
)
def test_errors_have_their_kind_and_exit_code(cli, argv, code, kind):
    r = cli("codegen", *argv, "--json")
    assert r.code == code, r.out
    assert json.loads(r.out)["error"]["kind"] == kind


def test_a_shape_without_a_value_fixes_the_inputs_shape(cli):
    r = cli("codegen", "sum(x*x) + y", "--shape", "x=3", "--json")
    assert r.code == 0, r.out
    doc = json.loads(r.out)
    assert doc["inputs"] == {"x": [3], "y": []}
    f = _load(doc["code"])
    value, gx, gy = f(np.array([1.0, 2.0, 3.0]), 1.0)
    assert float(value) == 15.0 and gx.tolist() == [2.0, 4.0, 6.0] and float(gy) == 1.0
    with pytest.raises(ValueError, match="must have shape"):
        f(np.ones(4), 1.0)


def test_names_the_target_language_reserves_are_renamed_and_the_program_comments(cli):
    text = "y = np*2\nz = y*lambda_\nz + def_"
    r = cli("codegen", text, "--json")
    code = json.loads(r.out)["code"]
    assert "def f(np_, lambda_, def_):" in code
    assert "# expression: y = np*2\n#             z = y*lambda_" in code
    value, *grads = _load(code)(1.0, 3.0, 4.0)
    assert float(value) == 10.0 and [float(g) for g in grads] == [6.0, 2.0, 1.0]


def test_the_library_and_the_engine_give_the_same_numbers():
    code = ag.codegen("x*sin(y) + relu(x)", {"x": 0.0, "y": 2.0}, hessian=True)
    got = _load(code)(0.0, 2.0)
    want = ag.hessian("x*sin(y) + relu(x)", {"x": 0.0, "y": 2.0})
    expected = [want.value, want.grad["x"], want.grad["y"]]
    expected += [want.hessian[a][b] for a in "xy" for b in "xy"]
    assert [float(v) for v in got] == [float(v) for v in expected]


def test_batched_numpy_code_is_each_point_on_its_own():
    code = ag.codegen("log1p(x*x)*y - max(x, y)", {"x": 1.0, "y": 2.0})
    f = _load(code)
    rng = np.random.default_rng(3)
    xs, ys = rng.integers(-2, 3, 50).astype(float), rng.integers(-2, 3, 50).astype(float)
    batch = f(xs, ys)
    for i in range(50):
        one = ag.grad("log1p(x*x)*y - max(x, y)", {"x": xs[i], "y": ys[i]})
        assert batch[0][i] == one.value
        assert (batch[1][i], batch[2][i]) == (one.grad["x"], one.grad["y"])


def test_the_repl_runs_codegen(tmp_path):
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "autograd_cli", "repl", "--json"],
        input="x = 2\n:codegen x*sin(x) --check 5\n",
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(tmp_path)},
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout.splitlines()[-1])
    assert doc["outputs"] == ["value", "grad_x"] and doc["check"]["passed"] is True
