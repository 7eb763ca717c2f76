"""Complex numbers (issue 27): literals, values, JSON, and PyTorch's gradient convention.

For a real loss L of a complex z, the gradient is dL/dRe(z) + i dL/dIm(z) (PyTorch's); with
``holomorphic`` it is f'(z) (JAX's ``holomorphic=True``).  Checked against central
differences along the real and the imaginary directions, and against PyTorch (complex128)
where it is installed.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from autograd_cli.core import OPS, api
from autograd_cli.core.errors import NonScalarOutputError, UnsupportedError
from autograd_cli.core.printing import format_number, to_text
from autograd_cli.core.values import parse_literal
from autograd_cli.grammar import parse

# -- the language --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, want",
    [("2j", 2j), ("1.5e3j", 1500j), ("3+4j", 3 + 4j), ("(1-1j)*2", 2 - 2j), (".5J", 0.5j)],
)
def test_imaginary_literals_are_pythons(text, want):
    assert complex(api.eval_of(parse(text), {}).value) == want


def test_i_stays_a_variable_name():
    assert float(api.eval_of(parse("i*2"), {"i": 3.0}).value) == 6.0


@pytest.mark.parametrize("z", [2j, -0.5j, 3 + 4j, 1 - 1j, 1e-5j, -2.5 + 1e300j])
def test_complex_constants_print_back_to_themselves(z):
    text = format_number(z)
    assert complex(api.eval_of(parse(text), {}).value) == z
    printed = to_text(parse(f"x*{text}").output)  # 3+4j is a sum: it prints as one
    assert complex(api.eval_of(parse(printed), {"x": 1.0}).value) == z


@pytest.mark.parametrize(
    "text, want",
    [
        ("3+4j", 3 + 4j),
        ("-2j", -2j),
        ("(1-1j)", 1 - 1j),
        ("inf+nanj", complex(math.inf, math.nan)),
        ("[1+2j, 3j, 4]", [1 + 2j, 3j, 4]),
        ('[{"re": 1, "im": -2}, 5]', [1 - 2j, 5]),
        ('{"re": 0.5, "im": "inf"}', complex(0.5, math.inf)),
    ],
)
def test_values_as_people_type_them(text, want):
    got = parse_literal(text, "--z")
    assert np.array_equal(np.asarray(got), np.asarray(want), equal_nan=True)


@pytest.mark.parametrize("text", ["3+4i", "j", "[1+j]", '{"re": 1}', '[{"re": 1, "im": true}]'])
def test_bad_complex_values_are_refused(text):
    from autograd_cli.core.errors import BadValueError

    with pytest.raises(BadValueError):
        parse_literal(text, "--z")


def test_an_i_suffix_gets_a_hint():
    from autograd_cli.core.errors import BadValueError

    with pytest.raises(BadValueError, match="written j"):
        parse_literal("3+4i", "--z")


# -- the engine: PyTorch's convention -------------------------------------------------------

# real-valued losses of complex z and w (each op of the list on the way)
LOSSES = [
    "abs(z)**2",
    "abs(exp(z) * w)",
    "real(z**3 + w)",
    "imag(log(z) * w)",
    "angle(z * w)",
    "real(conj(z) * w)",
    "abs(sqrt(z) + sin(w))**2",
    "real(tan(z) / cosh(w))",
    "imag(asin(z) + acos(w) + atan(z*w))",
    "abs(asinh(z) + acosh(w) + atanh(z/4))",
    "real(log1p(z) * expm1(w) + log2(z) - log10(w))",
    "abs(z**w)",
    "real(tanh(z) * sinh(w) * cos(z))",
    "sum(abs(A @ v)**2)",
]
POINT = {"z": 0.7 - 0.4j, "w": -0.3 + 1.1j, "A": [[1, 2j], [3 - 1j, 0.5]], "v": [1 + 1j, -2j]}


def _values(expr: str) -> dict:
    names = parse(expr).inputs
    return {n: POINT[n] for n in names}


def _central(expr: str, values: dict, name: str, h: float = 1e-6) -> np.ndarray:
    """dL/dRe + i dL/dIm by central differences, element by element."""
    base = np.asarray(values[name], dtype=complex)
    grad = np.zeros(base.shape, dtype=complex)
    for idx in np.ndindex(base.shape):
        for unit in (1.0, 1j):
            parts = []
            for sign in (1, -1):
                moved = base.copy()
                moved[idx] += sign * h * unit
                value = api.eval_of(parse(expr), {**values, name: moved}).value
                parts.append(float(np.real(value)))
            grad[idx] += unit * (parts[0] - parts[1]) / (2 * h)
    return grad


@pytest.mark.parametrize("expr", LOSSES)
def test_gradients_are_pytorchs_convention_by_central_differences(expr):
    values = _values(expr)
    result = api.grad_of(parse(expr), values)
    assert np.isrealobj(result.value)
    for name in values:
        want = _central(expr, values, name)
        np.testing.assert_allclose(result.grad[name], want, rtol=1e-6, atol=1e-7)


TORCH_LOSSES = {
    "abs(z)**2": lambda t, z, w: z.abs() ** 2,
    "abs(exp(z) * w)": lambda t, z, w: (t.exp(z) * w).abs(),
    "real(z**3 + w)": lambda t, z, w: (z**3 + w).real,
    "imag(log(z) * w)": lambda t, z, w: (t.log(z) * w).imag,
    "angle(z * w)": lambda t, z, w: (z * w).angle(),
    "real(conj(z) * w)": lambda t, z, w: (z.conj() * w).real,
    "abs(sqrt(z) + sin(w))**2": lambda t, z, w: (t.sqrt(z) + t.sin(w)).abs() ** 2,
    "abs(asinh(z) + acosh(w) + atanh(z/4))": lambda t, z, w: (
        t.asinh(z) + t.acosh(w) + t.atanh(z / 4)
    ).abs(),
    "abs(z**w)": lambda t, z, w: (z**w).abs(),
}


@pytest.mark.parametrize("expr", sorted(TORCH_LOSSES))
def test_gradients_equal_pytorchs(expr, torch):
    values = _values(expr)
    z = torch.tensor(POINT["z"], dtype=torch.complex128, requires_grad=True)
    w = torch.tensor(POINT["w"], dtype=torch.complex128, requires_grad=True)
    TORCH_LOSSES[expr](torch, z, w).backward()
    result = api.grad_of(parse(expr), values)
    for name, t in (("z", z), ("w", w)):
        if name in values:
            np.testing.assert_allclose(result.grad[name], t.grad.resolve_conj().numpy(), rtol=1e-12)


def test_a_real_input_of_a_complex_op_gets_a_real_gradient():
    result = api.grad_of(parse("abs(x * (1+2j) + y)**2"), {"x": 0.5, "y": 1 - 1j})
    assert np.isrealobj(result.grad["x"])
    # |x(1+2j) + y|^2 = (x + 1)^2 + (2x - 1)^2: d/dx = 2(x + 1) + 4(2x - 1) = 3 at x = 0.5
    assert float(result.grad["x"]) == pytest.approx(3.0)


def test_a_complex_output_needs_a_grad_output_or_holomorphic():
    with pytest.raises(NonScalarOutputError, match="real scalar outputs"):
        api.grad_of(parse("z**2"), {"z": 1 + 2j})
    # PyTorch: z.backward(1) gives conj(f'(z)) = conj(2z)
    got = api.grad_of(parse("z**2"), {"z": 1 + 2j}, grad_output=1)
    assert complex(got.grad["z"]) == 2 - 4j


@pytest.mark.parametrize(
    "expr, values, wrt, want",
    [
        ("z**2", {"z": 1 + 2j}, "z", 2 + 4j),
        ("exp(1j*w*t)", {"w": 2.0, "t": 0.5}, "t", 2j * np.exp(1j)),
        ("x**3", {"x": 2.0}, "x", 12 + 0j),
        ("sin(z) * log(z)", {"z": 0.3 + 0.2j}, "z", None),
    ],
)
def test_holomorphic_gives_f_prime(expr, values, wrt, want):
    got = complex(api.grad_of(parse(expr), values, wrt=wrt, holomorphic=True).grad[wrt])
    if want is None:  # the complex derivative along the real axis, by central differences
        z, h = values[wrt], 1e-6
        f = lambda u: complex(api.eval_of(parse(expr), {wrt: u}).value)  # noqa: E731
        want = (f(z + h) - f(z - h)) / (2 * h)
        assert got == pytest.approx(want, rel=1e-8)
    else:
        assert got == pytest.approx(want, rel=1e-14)
    assert math.copysign(1.0, got.imag) > 0 or got.imag != 0  # no -0j from the conjugate


@pytest.mark.parametrize("op", ["conj(z)", "abs(z)", "real(z)", "imag(z)", "angle(z)"])
def test_holomorphic_refuses_what_is_not_complex_differentiable(op):
    with pytest.raises(UnsupportedError, match=op.split("(")[0]):
        api.grad_of(parse(f"{op} * z"), {"z": 1 + 1j}, holomorphic=True)


@pytest.mark.parametrize("op", ["relu", "floor", "sign", "erf", "gamma"])
def test_a_real_only_function_refuses_a_complex_argument(op):
    with pytest.raises(UnsupportedError, match="real numbers only"):
        api.eval_of(parse(f"{op}(z)"), {"z": 1 + 1j})


def test_real_arguments_are_unchanged():
    # a real program never meets the complex checks: the same numbers as before
    got = api.grad_of(parse("3*a**3 - b**2"), {"a": 2.0, "b": 6.0})
    assert float(got.value) == -12.0
    assert np.isrealobj(got.grad["a"]) and float(got.grad["a"]) == 36.0


# -- the command line ---------------------------------------------------------------------


def test_json_writes_complex_numbers_as_objects(cli):
    out = cli("eval", "[z, 2*z, abs(z)]", "--z", "3+4j", "--json")
    doc = json.loads(out.out)
    assert doc["value"] == [
        {"re": 3.0, "im": 4.0},
        {"re": 6.0, "im": 8.0},
        {"re": 5.0, "im": 0.0},
    ]
    out = cli("grad", "abs(z)**2", "--z", "1+2j", "--json")
    doc = json.loads(out.out)
    assert doc["value"] == pytest.approx(5.0) and doc["grad"] == {"z": {"re": 2.0, "im": 4.0}}


def test_json_non_finite_parts_are_strings(cli):
    doc = json.loads(cli("eval", "z + 0", "--z", "inf+nanj", "--json").out)
    assert doc["value"] == {"re": "inf", "im": "nan"}


def test_vars_take_complex_objects(cli):
    doc = json.loads(
        cli("eval", "sum(z)", "--vars", '{"z": [{"re": 1, "im": 2}, 3]}', "--json").out
    )
    assert doc["value"] == {"re": 4.0, "im": 2.0}


def test_the_command_line_holomorphic_and_errors(cli):
    out = cli("grad", "z**2", "--z", "1+2j", "--holomorphic", "--json")
    assert json.loads(out.out)["grad"] == {"z": {"re": 2.0, "im": 4.0}}
    out = cli("grad", "z**2", "--z", "1+2j", "--json")
    assert out.code == 1
    assert json.loads(out.out)["error"]["kind"] == "non_scalar_output"
    out = cli("grad", "conj(z)*z", "--z", "1+2j", "--holomorphic")
    assert out.code == 1 and "conj" in out.err
    out = cli("grad", "z**2", "--z", "1+2j", "--holomorphic", "--order", "2")
    assert out.code == 2


def test_dtype_complex128_makes_every_value_complex(cli):
    out = cli("eval", "sqrt(x)", "--x", "-1", "--dtype", "complex128", "--json")
    assert json.loads(out.out)["value"] == {"re": 0.0, "im": 1.0}


def test_a_table_prints_complex_numbers_as_numpy(cli):
    out = cli("eval", "z*2", "--z", "3+4j")
    assert "(6+8j)" in out.out


# -- the other commands ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "expr, want",
    [
        ("exp(1j*w*t)", "1j*w*exp(1j*t*w)"),
        ("sin(2j*t)*t", "2j*t*cos(2j*t) + sin(2j*t)"),
        ("t**2*1j - 1j*t**2", "0"),
    ],
)
def test_diff_of_holomorphic_expressions(expr, want):
    from autograd_cli.core.symbolic import diff

    assert diff(parse(expr), "t").derivatives["t"].text == want


def test_diff_agrees_with_sympy_on_a_holomorphic_expression():
    sympy = pytest.importorskip("sympy")
    from autograd_cli.core.symbolic import diff

    got = diff(parse("exp(1j*w*t)*t**2"), "t").derivatives["t"].text
    t, w = sympy.symbols("t w")
    want = sympy.diff(sympy.exp(sympy.I * w * t) * t**2, t)
    ours = sympy.sympify(got.replace("1j", "I"), locals={"t": t, "w": w})
    assert sympy.simplify(ours - want) == 0


@pytest.mark.parametrize("op", ["abs", "conj", "real", "imag", "angle"])
def test_diff_refuses_what_is_not_holomorphic(op):
    from autograd_cli.core.symbolic import UnsupportedDiffError, diff

    with pytest.raises(UnsupportedDiffError, match=f"{op} is not holomorphic"):
        diff(parse(f"{op}(1j*t)"), "t")


def test_hessian_of_complex_values_is_refused_as_pytorch_does(cli):
    # torch.autograd.functional.hessian and torch.func.hessian refuse complex inputs too
    out = cli("hessian", "abs(z)**2", "--z", "1+2j", "--json")
    assert out.code == 1
    assert json.loads(out.out)["error"]["kind"] == "unsupported"


def test_explain_walks_complex_values_with_pytorchs_gradient(cli):
    out = cli("explain", "abs(sin(z)*w)", "--z", "1+2j", "--w", "0.5", "--json")
    doc = json.loads(out.out)
    want = api.grad_of(parse("abs(sin(z)*w)"), {"z": 1 + 2j, "w": 0.5}).grad
    assert doc["gradient"]["z"]["re"] == pytest.approx(complex(want["z"]).real, rel=1e-12)
    assert doc["gradient"]["z"]["im"] == pytest.approx(complex(want["z"]).imag, rel=1e-12)
    assert doc["gradient"]["w"] == pytest.approx(float(want["w"]), rel=1e-12)  # real
    assert any("conj(d)" in w for w in doc["warnings"])


def test_jacobian_rows_are_pytorch_gradients(cli):
    doc = json.loads(cli("jacobian", "abs(z)**2", "--z", "[1+2j, 3]", "--json").out)
    assert doc["jacobian"]["z"] == [
        [{"re": 2.0, "im": 4.0}, {"re": 0.0, "im": 0.0}],
        [{"re": 0.0, "im": 0.0}, {"re": 6.0, "im": 0.0}],
    ]


def test_batch_lines_take_and_give_complex_numbers(cli, tmp_path):
    lines = tmp_path / "in.jsonl"
    lines.write_text(
        '{"expr": "z*2", "op": "eval", "vars": {"z": [1, {"re": 1, "im": 2}]}}\n'
        '{"expr": "abs(z)**2", "op": "grad", "vars": {"z": {"re": 1, "im": 2}}}\n'
        '{"expr": "x*2", "op": "grad", "vars": {"x": 3}}\n'
    )
    out = cli("batch", str(lines))
    docs = [json.loads(line) for line in out.out.splitlines()]
    assert docs[0]["value"] == [{"re": 2.0, "im": 0.0}, {"re": 2.0, "im": 4.0}]
    assert docs[1]["grad"] == {"z": {"re": 2.0, "im": 4.0}}
    assert docs[2]["grad"] == {"x": 2.0}


def test_a_csv_column_meets_an_imaginary_constant(cli, tmp_path):
    table = tmp_path / "in.csv"
    table.write_text("x,y\n1,2\n3,4\n")
    out = cli("batch", str(table), "--expr", "x*1j + y", "--op", "eval")
    values = [json.loads(line)["value"] for line in out.out.splitlines()]
    assert values == [{"re": 2.0, "im": 1.0}, {"re": 4.0, "im": 3.0}]


# -- random complex graphs against PyTorch ----------------------------------------------------

UNARY_GRAPH = ["exp", "sin", "cos", "tanh", "sqrt", "log", "conj", "sinh", "atan", "expm1"]
BINARY_GRAPH = ["+", "-", "*", "/"]


def _random_graph(rng, depth: int) -> str:
    """An expression of z, w and complex constants: each step a unary function of the
    expression so far or a binary operator with a leaf (kept small: no overflow)."""
    expr = str(rng.choice(["z", "w"]))
    for _ in range(depth):
        if rng.random() < 0.5:
            expr = f"{rng.choice(UNARY_GRAPH)}({expr} / 2)"
        else:
            leaf = str(rng.choice(["z", "w", "(0.5-1j)", "2j"]))
            expr = f"({expr} {rng.choice(BINARY_GRAPH)} {leaf})"
    return expr


def _torch_eval(torch, expr: str, z, w):
    """The same expression in PyTorch (our language is Python's for these functions)."""
    names = {name: getattr(torch, name) for name in UNARY_GRAPH}
    names.update({"z": z, "w": w, "abs": torch.abs, "real": torch.real, "imag": torch.imag})
    return eval(expr, {"__builtins__": {}}, names)  # noqa: S307 - our own generated text


@pytest.mark.parametrize("seed", range(30))
def test_random_complex_graphs_equal_pytorch(seed, torch):
    rng = np.random.default_rng(seed)
    expr = _random_graph(rng, int(rng.integers(2, 6)))
    loss = f"abs({expr})**2 + real({expr})" if seed % 2 else f"imag({expr}) * abs({expr})"
    point = {"z": complex(*rng.uniform(-1, 1, 2)), "w": complex(*rng.uniform(-1, 1, 2))}
    values = {name: point[name] for name in parse(loss).inputs}
    z = torch.tensor(point["z"], dtype=torch.complex128, requires_grad=True)
    w = torch.tensor(point["w"], dtype=torch.complex128, requires_grad=True)
    want = _torch_eval(torch, loss, z, w)
    want.backward()
    got = api.grad_of(parse(loss), values)
    assert float(got.value) == pytest.approx(want.item(), rel=1e-12, abs=1e-12), loss
    for name, t in (("z", z), ("w", w)):
        if name in values:
            np.testing.assert_allclose(
                got.grad[name], t.grad.resolve_conj().numpy(), rtol=1e-10, atol=1e-12, err_msg=loss
            )


@pytest.mark.parametrize(
    "argv",
    [
        ["taylor", "abs(z)**2", "--z", "1+2j"],
        ["minimize", "abs(z)**2", "--z", "1+2j"],
        ["solve", "z**2 + 1", "--z", "1+2j"],
        ["critical", "abs(z)**2", "--z", "1+2j"],
        ["propagate", "abs(z)", "--z", "1+2j+-0.1"],
        ["plot", "x*1j", "--x", "-1:1"],
        ["codegen", "abs(z)", "--z", "1+2j"],
        ["codegen", "abs(x*1j)", "--x", "2", "--target", "c"],
        ["codegen", "abs(polar(r, t))", "--r", "1", "--t", "2"],
        # real inputs, a complex output (taylor was an internal error, minimize and critical
        # said "needs a scalar output, but it has shape ()", solve dropped the imaginary part)
        ["taylor", "polar(x, 1)", "--x", "1"],
        ["taylor", "polar(x, 1)*0", "--x", "1"],
        ["propagate", "polar(x, 1)", "--x", "1+-0.1"],
        ["minimize", "polar(x, 1)", "--x", "1"],
        ["solve", "polar(x, 1)", "--x", "1"],
        ["critical", "polar(x, 1)", "--x", "1"],
    ],
)
def test_the_analyses_and_codegen_refuse_complex_values_by_name(cli, argv):
    out = cli(*argv, "--json")
    assert out.code == 1, out.out
    error = json.loads(out.out)["error"]
    assert error["kind"] == "unsupported" and "internal" not in error["message"]


def test_codegen_writes_complex_steps_between_real_values(cli):
    # a complex constant on the way, real value and gradient: NumPy code, checked
    out = cli("codegen", "abs(x*(1+2j))**2", "--x", "2", "--check", "5", "--json")
    doc = json.loads(out.out)
    assert out.code == 0 and doc["check"]["passed"], doc
    assert "(1-2j)" in doc["code"]  # the conjugate of the constant: PyTorch's convention
    # a complex output is grad's error (no implicit seed)
    out = cli("codegen", "x*1j", "--x", "2", "--json")
    assert out.code == 1 and json.loads(out.out)["error"]["kind"] == "non_scalar_output"


def test_polar_is_r_exp_i_theta_with_pytorchs_gradient(torch):
    r = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    t = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    (torch.polar(r, t) + 1).abs().pow(2).backward()
    got = api.grad_of(parse("abs(polar(r, t) + 1)**2"), {"r": 2.0, "t": 0.5})
    assert float(got.grad["r"]) == pytest.approx(r.grad.item(), rel=1e-13)
    assert float(got.grad["t"]) == pytest.approx(t.grad.item(), rel=1e-13)
    assert complex(api.eval_of(parse("polar(2, pi/2)"), {}).value) == pytest.approx(2j)


# -- complex steps between real values ---------------------------------------------------------


def test_jacobian_of_a_complex_output_is_forward_modes(cli):
    doc = json.loads(cli("jacobian", "rfft(x)", "--x", "[1, 2, 3]", "--json").out)
    got = np.array(
        [[complex(e["re"], e["im"]) for e in row] for row in doc["jacobian"]["x"]], dtype=complex
    )
    want = np.fft.fft(np.eye(3), axis=0)[:2]  # the DFT matrix's first two rows
    np.testing.assert_allclose(got, want, atol=1e-15)
    doc = json.loads(cli("jacobian", "z**2", "--z", "[1+1j, 2]", "--json").out)
    assert doc["jacobian"]["z"][0][0] == {"re": 2.0, "im": 2.0}  # f'(z), holomorphic


def test_check_passes_through_complex_steps_and_refuses_a_complex_output(cli):
    argv = ("X = rfft(a*sin(2*pi*f*t/8) + b); abs(X[3])**2", "--t", "[0,1,2,3,4,5,6,7]")
    out = cli("check", *argv, "--a", "2", "--b", "0.5", "--f", "2.8", "--json")
    assert out.code == 0 and json.loads(out.out)["passed"], out.out
    out = cli("check", "rfft(x)", "--x", "[1, 2, 3]", "--json")
    assert out.code == 1 and json.loads(out.out)["error"]["kind"] == "unsupported"


def test_hessian_through_a_spectrum_equals_pytorchs(torch):
    x = np.array([1.0, 2.0, 3.0, -0.5])
    t = torch.tensor(x, requires_grad=True)
    want = torch.autograd.functional.hessian(
        lambda v: (torch.fft.rfft(v).abs() ** 2 * torch.tensor([1.0, 2.0, 3.0])).sum(), t
    )
    got = api.hessian_of(parse("sum(abs(rfft(x))**2 * [1, 2, 3])"), {"x": x}).hessian["x"]["x"]
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-12, atol=1e-12)


def test_explain_writes_complex_steps(cli):
    out = cli("explain", "sum(abs(rfft(x))**2)", "--x", "[1, 2, 3]")
    assert out.code == 0 and "(-1.5+0.866025j)" in out.out


def test_check_of_complex_values_moves_each_part(cli):
    out = cli("check", "sum(abs(exp(z)*w))", "--z", "[1+2j, 0.5]", "--w", "2", "--json")
    doc = json.loads(out.out)
    assert out.code == 0 and doc["passed"], doc
    z = doc["numeric"]["z"][0]
    assert z["re"] == pytest.approx(2 * np.e, rel=1e-6)  # |2 e^z| = 2 e^(Re z)
    assert abs(z["im"]) < 1e-6  # |exp(z)| does not move along Im z
    out = cli("check", "abs(z)**2 + imag(z)", "--z", "1+2j", "--json")
    assert out.code == 0 and json.loads(out.out)["passed"]
    out = cli("check", "z**2", "--z", "1+2j", "--json")
    assert out.code == 1 and json.loads(out.out)["error"]["kind"] == "non_scalar_output"


def test_complex_check_fails_a_wrong_rule(monkeypatch):
    # sin's gradient without PyTorch's conjugate (g*cos(z)): right on the real line, wrong off
    assert api.check_of(parse("abs(sin(z))**2"), {"z": 0.3 + 0.7j}).passed
    from autograd_cli.core.ops import call

    monkeypatch.setattr(OPS["sin"], "vjp", lambda n, g: (g * call("cos", n.inputs[0]),))
    assert not api.check_of(parse("abs(sin(z))**2"), {"z": 0.3 + 0.7j}).passed


def test_forward_mode_along_a_complex_direction(cli):
    doc = json.loads(cli("grad", "z**2", "--z", "1+2j", "--tangent", "z=1j", "--json").out)
    assert doc["jvp"] == {"re": -4.0, "im": 2.0}  # 2z * 1j
    doc = json.loads(cli("grad", "abs(z)**2", "--z", "1+2j", "--tangent", "z=1j", "--json").out)
    assert doc["jvp"] == pytest.approx(4.0)  # d|z|^2 / d(Im z) = 2 Im z


@pytest.mark.parametrize(
    "expr, values, want",
    [
        ("z**3", {"z": 1 + 2j}, {("z", "z"): 6 * (1 + 2j)}),
        (
            "exp(z*w)",
            {"z": 1 + 2j, "w": 0.5j},
            {
                ("z", "z"): (0.5j) ** 2 * np.exp((1 + 2j) * 0.5j),
                ("z", "w"): np.exp((1 + 2j) * 0.5j) * (1 + (1 + 2j) * 0.5j),
                ("w", "w"): (1 + 2j) ** 2 * np.exp((1 + 2j) * 0.5j),
            },
        ),
        ("sin(z)*log(z)", {"z": 0.3 + 0.2j}, None),
    ],
)
def test_hessian_holomorphic_gives_f_second(expr, values, want):
    got = api.hessian_of(parse(expr), values, holomorphic=True)
    names = list(values)
    if want is None:  # f'' by central differences of f' (grad --holomorphic) along Re z
        (name,) = names
        h, z = 1e-6, values[name]

        def fp(u):
            return complex(api.grad_of(parse(expr), {name: u}, holomorphic=True).grad[name])

        want = {(name, name): (fp(z + h) - fp(z - h)) / (2 * h)}
        assert complex(got.hessian[name][name]) == pytest.approx(want[name, name], rel=1e-7)
        return
    for (a, b), w in want.items():
        assert complex(got.hessian[a][b]) == pytest.approx(w, rel=1e-13)
        assert complex(got.hessian[b][a]) == pytest.approx(w, rel=1e-13)  # symmetric


def test_hessian_holomorphic_from_the_command_line(cli):
    doc = json.loads(cli("hessian", "z**3", "--z", "1+2j", "--holomorphic", "--json").out)
    assert doc["grad"]["z"] == {"re": -9.0, "im": 12.0}  # 3z^2
    assert doc["hessian"]["z"]["z"] == {"re": 6.0, "im": 12.0}  # 6z
    out = cli("hessian", "abs(z)**2", "--z", "1+2j", "--holomorphic", "--json")
    assert out.code == 1 and "abs" in json.loads(out.out)["error"]["message"]
