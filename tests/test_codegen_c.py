"""codegen --target c: the C99 code compiles warning-free and gives the engine's numbers.

Each elementwise op of the table (or its refusal, naming it), array programs (sums,
broadcasting, indexing, matmul), the Hessian, float32, reserved names, a 10^5-deep chain.
Skipped where no C compiler is installed.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess

import numpy as np
import pytest

from autograd_cli.core import api
from autograd_cli.core.codegen import generate
from autograd_cli.core.codegen.c import C_RESERVED, run_c
from autograd_cli.core.errors import UnsupportedError
from autograd_cli.core.tensor import OPS
from autograd_cli.grammar import parse

CC = shutil.which(os.environ.get("CC", "") or "cc") or shutil.which("cc")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler (cc)")

FLAGS = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic"]

UNARY_POINTS = [0.0, -0.0, 0.5, -1.5, 2.0, 1.0, -1.0, 3.7, math.inf, -math.inf, math.nan]
BINARY_POINTS = [
    (0.0, 0.0),
    (1.0, 1.0),
    (0.5, 2.0),
    (-1.5, 0.7),
    (2.0, -3.0),
    (0.0, 2.0),
    (-2.0, 0.5),
    (3.0, 0.0),
    (math.inf, 1.0),
    (1.0, math.nan),
    (-math.inf, -0.5),
    (7.0, 2.5),
]


def _compiles(code: str, tmp_path) -> None:
    """The code compiles with -Wall -Wextra -Werror: exit 0 and nothing on stderr."""
    path = tmp_path / "gen.c"
    path.write_text(code)
    done = subprocess.run(
        [CC, *FLAGS, "-c", str(path), "-o", str(tmp_path / "gen.o")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr[:2000]


def _engine(text: str, point: dict, wrt, hessian: bool) -> list:
    with np.errstate(all="ignore"):
        r = api.compute("hessian" if hessian else "grad", parse(text), point, wrt=wrt)
    out = [r.value] + [r.grad[n] for n in wrt]
    if hessian:
        out += [r.hessian[a][b] for a in wrt for b in wrt]
    return [np.asarray(v, dtype=np.float64) for v in out]


def _agree(got, want, rtol=1e-12) -> bool:
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return False
    finite = np.isfinite(want)
    scale = float(np.max(np.abs(want[finite]), initial=0.0))
    return bool(np.allclose(got, want, rtol=rtol, atol=rtol * scale * 1e-3, equal_nan=True))


def _check(text, points, hessian=True, dtype="float64", rtol=1e-12, tmp_path=None):
    """Generate ``text`` at the first point, run the C at all points, compare each output."""
    g = generate(parse(text), points[0], target="c", hessian=hessian, dtype=dtype)
    if tmp_path is not None:
        _compiles(g.code, tmp_path)
    ours = run_c(g, points)
    for point, row in zip(points, ours):
        want = _engine(text, point, g.wrt, hessian)
        for label, a, b in zip(g.outputs, row, want):
            assert _agree(a, b, rtol), f"{text} at {point}: {label} {a} != {b}"
    return g


def _program(op) -> str | None:
    """An expression using the elementwise op ``op`` on x (and y, z)."""
    p = op.printing
    if op.arity == 3:
        if op.name == "where":
            return "where(x < y, x, y*inf_or(x))"
        return f"{p.names[0]}(x, y, z)"
    if p.form == "infix":
        return f"(x {p.symbol} y)*x + y" if op.kind == "comparison" else f"x {p.symbol} y"
    if p.form == "prefix":
        return f"{p.symbol}x"
    name = p.names[0] if p.names else p.call
    if name is None:
        return None
    if op.arity == 1:
        return f"{name}(x)"
    if p.names:
        return f"{name}(x, y)"
    return f"{name}(x, 0.5)"  # max(x, c): clamp_min


ELEMENTWISE = [
    name for name, op in OPS.items() if op.kind in ("elementwise", "comparison") and _program(op)
]


def _points(op, text):
    names = [v for v in ("x", "y", "z") if v in text.replace("inf_or", "")]
    if len(names) == 1:
        return [{"x": v} for v in UNARY_POINTS]
    if len(names) == 2:
        return [{"x": a, "y": b} for a, b in BINARY_POINTS]
    return [{"x": a, "y": b, "z": b + 1.0} for a, b in BINARY_POINTS]


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_elementwise_op_agrees_or_is_refused_by_name(name):
    op = OPS[name]
    text = _program(op)
    if name == "where":
        text = "where(x < y, x, log(y - y))"  # an untaken branch of -inf: the NaN-safe where
    points = _points(op, text)
    if name == "mod":  # reported (the NumPy target too): the traced d/db of mod at b = 0
        # or a, b not finite is nan where grad's is 0 / -inf
        points = [p for p in points if p["y"] != 0 and math.isfinite(p["x"] + p["y"])]
    # the arguments with no derivative (gammainc's a) are not differentiated
    wrt = [v for i, v in enumerate(points[0]) if i not in op.no_derivative]
    try:
        g = generate(parse(text), points[0], wrt=wrt, target="c", hessian=True)
    except UnsupportedError as exc:
        if op.code is not None and op.code.refused:  # declared: no code at all (polar)
            assert op.code.refused in str(exc), str(exc)
            return
        # the op itself, or an op its derivative is made of (gamma' = gamma*digamma)
        named = str(exc).split("no spelling for ", 1)[1].split()[0]
        lacking = [o for o in OPS.values() if named in ((o.printing.names or (o.name,))[0],)]
        assert lacking and all(o.code is None or o.code.c is None for o in lacking), str(exc)
        return
    assert op.code is not None and op.code.c is not None
    ours = run_c(g, points)
    for point, row in zip(points, ours):
        want = _engine(text, point, g.wrt, True)
        for label, a, b in zip(g.outputs, row, want):
            assert _agree(a, b), f"{text} at {point}: {label} C {a} != engine {b}"


def test_libm_less_functions_are_refused_by_name():
    for text, shown in (("erfinv(x)", "erfinv"), ("digamma(x)", "digamma"), ("erfcx(x)", "erfcx")):
        with pytest.raises(UnsupportedError, match=f"no spelling for {shown}"):
            generate(parse(text), {"x": 0.3}, target="c")


def test_edge_conventions(tmp_path):
    # abs'(0) = 0, relu'(0) = 0, sqrt'(0) = inf, max ties split, d/dy 0**y at y = 0
    text = "abs(x) + relu(x) + sqrt(x*x + y*y) + max(x, y) + x**y"
    g = _check(
        text, [{"x": 0.0, "y": 0.0}, {"x": 1.0, "y": 1.0}, {"x": 0.0, "y": 2.0}], tmp_path=tmp_path
    )
    row = run_c(g, [{"x": 0.0, "y": 1.0}])[0]
    assert row[1] == _engine(text, {"x": 0.0, "y": 1.0}, ["x", "y"], False)[1]


def test_array_programs(tmp_path):
    x, y = np.array([1.0, -2.0, 3.0]), np.array([0.5, 4.0, -1.0])
    _check("sum(x*y)", [{"x": x, "y": y}, {"x": y, "y": x}], tmp_path=tmp_path)
    _check("sum(sin(x + [1, 2, 3]))", [{"x": x}, {"x": -x}])
    _check("sum(exp(c + [1, 2, 3]))", [{"c": np.array([[0.1], [0.2]])}])
    _check("x[0]*x[2] + sum(x[1:])**2", [{"x": x}, {"x": y}])
    A = np.arange(6.0).reshape(2, 3) / 7
    _check("sum(tanh(A @ x))", [{"A": A, "x": x}, {"A": -A, "x": y}])
    _check("mean(transpose(A)**2) + sum(reshape(A, [3, 2])[1])", [{"A": A}])


def test_matmul_is_loops_and_compiles(tmp_path):
    A = np.linspace(-1, 1, 12).reshape(3, 4)
    B = np.linspace(0, 2, 8).reshape(4, 2)
    _check("sum(sin(A @ B))", [{"A": A, "B": B}, {"A": A + 1, "B": -B}], tmp_path=tmp_path)


def test_float32_compiles_and_agrees(tmp_path):
    text = "x*sin(y) + exp(x/2) + max(x, y) + sum(z*z)"
    points = [{"x": 0.7, "y": -1.2, "z": np.array([1.0, 2.0])}]
    g = generate(parse(text), points[0], target="c", dtype="float32", hessian=True)
    assert "float" in g.code and "double " not in g.code.split("*/", 1)[1]
    _compiles(g.code, tmp_path)
    row = run_c(g, points)[0]
    for label, a, b in zip(g.outputs, row, _engine(text, points[0], g.wrt, True)):
        assert _agree(a, b, rtol=1e-5), label


@pytest.mark.parametrize("var", ["int", "double", "sin", "value", "main"])
def test_reserved_variable_name_is_renamed(var, tmp_path):
    text = f"{var}*{var} + 1"
    try:
        parse(text)
    except Exception:  # noqa: BLE001 - the language may not take the name at all
        pytest.skip(f"{var} is not a variable name of the language")
    g = generate(parse(text), {var: 3.0}, target="c")
    assert var in C_RESERVED
    assert g.params[var] != var
    assert f"double {g.params[var]}" in g.code
    _compiles(g.code, tmp_path)
    assert run_c(g, [{var: 3.0}])[0][1] == 6.0


@pytest.mark.parametrize(
    "n",
    [
        10_000,
        pytest.param(
            100_000,
            marks=pytest.mark.skipif(
                not os.environ.get("AUTOGRAD_CLI_SLOW"), reason="slow (~20 s): AUTOGRAD_CLI_SLOW=1"
            ),
        ),
    ],
)
def test_deep_chain_generates_and_compiles(n):
    """x+x+...+x, n terms: chunked into static parts, compiled, the right numbers."""
    g = generate(parse("+".join(["x"] * n)), {"x": 0.3}, target="c")
    assert g.code.count("static void ag_part") >= n // 500
    value, grad = run_c(g, [{"x": 0.3}, {"x": -2.0}])[1]
    assert grad == n and _agree(value, -2.0 * n)


def test_large_arrays_use_static_storage_not_the_stack(tmp_path):
    x = np.linspace(-1.0, 1.0, 5000)
    g = _check(
        "sum(x*sin(x)) + mean(x)",
        [{"x": x}, {"x": x[::-1].copy()}],
        hessian=False,
        tmp_path=tmp_path,
    )
    assert "static double ag_s[" in g.code and "not reentrant" in g.code


def test_code_past_the_size_limit_is_refused(monkeypatch):
    from autograd_cli.core.codegen import c
    from autograd_cli.core.errors import LimitError

    monkeypatch.setattr(c, "MAX_CODE_CHARS", 2000)
    with pytest.raises(LimitError, match="would exceed"):
        generate(parse("+".join(["sin(x)*x"] * 200)), {"x": 0.5}, target="c")
    with pytest.raises(LimitError, match="would exceed"):  # a table, before it is written
        generate(parse("sum(x + [1, 2, 3])"), {"x": np.ones((400, 1))}, target="c")


def test_no_compiler_is_unsupported(monkeypatch):
    g = generate(parse("x*x"), {"x": 1.0}, target="c")
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setenv("CC", "")
    with pytest.raises(UnsupportedError, match="needs a C compiler"):
        run_c(g, [{"x": 1.0}])


def test_unsupported_shape_op_names_it():
    with pytest.raises(UnsupportedError, match="no spelling for"):
        generate(parse("logsumexp(x)"), {"x": np.array([1.0, 3.0, 2.0])}, target="c")


_X = np.array([1.0, -2.0, 3.0])
_M = np.array([[1.0, 2.0], [3.0, 4.5]])
_A = np.arange(6.0).reshape(2, 3) / 7


@pytest.mark.parametrize(
    ("text", "point"),
    [
        ("sum([x[0], x[1]*x[2]]**2)", {"x": _X}),  # stack of numbers: a gather
        ("sum(sin(concatenate([x, x*2])))", {"x": _X}),
        ("sum(flip(x) * x) + sum(roll(x, 1) * x)", {"x": _X}),
        ("sum(tile(x, 2) ** 2) + sum(repeat(x, 2) ** 3)", {"x": _X}),
        ("sum(cumsum(x) ** 2)", {"x": _X}),  # a linear map, not a gather
        ("sum(triu(M) * M) + trace(M @ M) + sum(diag(M) ** 2)", {"M": _M}),
        ("sum(outer(x, x)) + dot(x, x)", {"x": _X}),
        ("einsum('ij,ij->', A, A)", {"A": _A}),
        ("sum(mean(A, axis=0) ** 2) + sum(sum(A, axis=1) ** 2)", {"A": _A}),
        ("sum(A[:, 1:] * 2) + sum(A[[0, 1, 1], 2] ** 2)", {"A": _A}),
        ("max(x) + min(x)**2 + prod(x)", {"x": _X}),  # folds
        ("max(x) + prod(x)", {"x": np.array([2.0, 0.0, 2.0])}),  # a tie, a zero
        ("max(x)", {"x": np.array([1.0, np.nan])}),
        ("sum(max(A, axis=1)**2) + sum(min(A, axis=0)*3) + sum(prod(A, axis=0))", {"A": _A}),
    ],
)
def test_shape_ops_by_kind(text, point):
    scaled = {k: v * 1.3 - 0.2 for k, v in point.items()}
    _check(text, [point, scaled])


@pytest.mark.parametrize("text", ["logsumexp(x)", "sum(softmax(x))", "norm(x)"])
def test_nonlinear_array_ops_are_refused_by_name(text):
    name = text.removeprefix("sum(").split("(")[0]
    with pytest.raises(UnsupportedError, match=f"no spelling for {name}"):
        generate(parse(text), {"x": _X}, target="c")


@pytest.mark.parametrize("name", ["buf", "io", "n", "k", "p"])
def test_function_named_like_the_harness_locals(name, tmp_path):
    g = generate(parse("x*x"), {"x": 2.0}, target="c", name=name)
    _compiles(g.code, tmp_path)
    assert run_c(g, [{"x": 2.0}])[0][1] == 4.0


def test_large_sums_are_probed_in_constant_runs():
    """sum and mean of 10^5 numbers: segment sums found from the transpose, not 10^5 probes."""
    x = np.linspace(-1.0, 1.0, 100_000)
    g = _check("sum(x*x) + mean(sin(x))", [{"x": x}], hessian=False)
    assert len(g.code) < 5_000_000
