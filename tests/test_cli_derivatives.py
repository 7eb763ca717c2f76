"""hessian, jacobian, grad --order/--tangent and check through the command line, against SymPy."""

from __future__ import annotations

import json
import math

import pytest

sympy = pytest.importorskip("sympy")


def test_hessian_matches_sympy(cli):
    x, y = sympy.symbols("x y")
    f = x**2 * y + sympy.sin(x * y)
    point = {x: 1, y: 2}
    r = cli("hessian", "x**2*y + sin(x*y)", "--x", "1", "--y", "2", "--json")
    assert r.code == 0, r.out
    doc = r.json
    assert doc["value"] == pytest.approx(float(f.subs(point)), rel=1e-14)
    for a, sa in (("x", x), ("y", y)):
        assert doc["grad"][a] == pytest.approx(float(sympy.diff(f, sa).subs(point)), rel=1e-14)
        for b, sb in (("x", x), ("y", y)):
            expected = float(sympy.diff(f, sa, sb).subs(point))
            assert doc["hessian"][a][b] == pytest.approx(expected, rel=1e-13, abs=1e-15)
    table = cli("hessian", "x**2*y + sin(x*y)", "--x", "1", "--y", "2").out
    assert "Hessian" in table and "0.3628" in table  # 4 digits (issue 13)


def test_hessian_tensor_blocks_shapes(cli):
    r = cli("hessian", "sum(x**2) * y", "--x", "[1, 2]", "--y", "3", "--json")
    h = r.json["hessian"]
    assert h["x"]["x"] == [[6.0, 0.0], [0.0, 6.0]]
    assert h["x"]["y"] == [2.0, 4.0] and h["y"]["x"] == [2.0, 4.0] and h["y"]["y"] == 0.0


def test_hessian_needs_scalar_output(cli):
    r = cli("hessian", "x * 2", "--x", "[1, 2]", "--json")
    assert r.code == 1 and r.json["error"]["kind"] == "non_scalar_output"


def test_seed_second_derivative_is_6(cli):
    r = cli("hessian", "z = 3*(x+2)**2", "--x", "1", "--json")
    assert r.json["hessian"]["x"]["x"] == 6.0
    r = cli("grad", "z = 3*(x+2)**2", "--x", "1", "--order", "2", "--json")
    assert r.json["grad"]["x"] == 6.0 and r.json["order"] == 2


def test_jacobian_3x2(cli):
    r = cli("jacobian", "[x*y, x+y, sin(x)]", "--x", "1", "--y", "2", "--json")
    assert r.code == 0
    assert r.json["jacobian"] == {"x": [2.0, 1.0, math.cos(1.0)], "y": [1.0, 1.0, 0.0]}
    table = cli("jacobian", "[x*y, x+y, sin(x)]", "--x", "1", "--y", "2").out
    assert "out[2]" in table and "0.5403" in table  # 4 digits (issue 13)


def test_jacobian_matrix_shapes(cli):
    r = cli("jacobian", "A @ x", "--A", "[[1,2],[3,4]]", "--x", "[1, 1]", "--json")
    assert r.json["jacobian"]["x"] == [[1.0, 2.0], [3.0, 4.0]]
    assert r.json["jacobian"]["A"] == [[[1.0, 1.0], [0.0, 0.0]], [[0.0, 0.0], [1.0, 1.0]]]


@pytest.mark.parametrize("order", [1, 2, 3, 4, 5, 6])
def test_grad_order_matches_sympy(cli, order):
    x = sympy.symbols("x")
    for src, f in (
        ("sin(x)", sympy.sin(x)),
        ("exp(x)*x**3", sympy.exp(x) * x**3),
        ("log(1 + x**2)", sympy.log(1 + x**2)),
    ):
        r = cli("grad", src, "--x", "0.5", "--order", str(order), "--json")
        expected = float(sympy.diff(f, x, order).subs(x, 0.5))
        assert r.json["grad"]["x"] == pytest.approx(expected, rel=1e-12, abs=1e-14), (src, order)


def test_grad_order_4_of_sin(cli):
    r = cli("grad", "sin(x)", "--x", "0.5", "--order", "4", "--json")
    assert r.json["grad"]["x"] == pytest.approx(math.sin(0.5), rel=1e-15)


def test_grad_order_needs_one_variable(cli):
    r = cli("grad", "x*y", "--x", "1", "--y", "2", "--order", "2", "--json")
    assert r.code == 2
    r = cli("grad", "x*y", "--x", "1", "--y", "2", "--order", "2", "--wrt", "x", "--json")
    assert r.code == 0 and r.json["grad"] == {"x": 0.0}


def test_grad_tangent_is_forward_mode_jvp(cli):
    r = cli("grad", "[x*y, x+y, sin(x)]", "--x", "1", "--y", "2", "--tangent", "x=1", "--json")
    assert r.json["jvp"] == [2.0, 1.0, math.cos(1.0)]
    r = cli(
        "grad",
        "[x*y, x+y]",
        "--x",
        "1",
        "--y",
        "2",
        "--tangent",
        "x=1",
        "--tangent",
        "y=1",
        "--json",
    )
    assert r.json["jvp"] == [3.0, 2.0]
    r = cli("grad", "x*y", "--x", "1", "--y", "2", "--tangent", "z=1", "--json")
    assert r.code == 2


def test_check_passes_and_fails(cli):
    r = cli("check", "x**2*y + sin(x*y)", "--x", "1", "--y", "2", "--json")
    assert r.code == 0 and r.json["passed"] is True and r.json["max_abs_error"] < 1e-6
    r = cli("check", "floor(x) + x", "--x", "1", "--json")
    assert r.code == 1 and r.json["passed"] is False
    assert r.json["worst"]["input"] == "x"
    human = cli("check", "floor(x) + x", "--x", "1")
    assert human.code == 1 and "FAIL" in human.out and "worst element" in human.out


@pytest.mark.parametrize(
    "point", [[2.0, 0.0, 3.0], [0.0, 2.0, 0.0], [0.0, 0.0, 0.0], [1.5, -2.0, 4.0]]
)
def test_hessian_of_prod_at_zeros_equals_the_written_out_product(cli, point):
    # prod's partials that are 0 at the point used to be constants: H_ij was lost there.
    x, y, z = point
    vector = cli("hessian", "prod(v)", "--v", json.dumps(point), "--json")
    scalars = cli("hessian", "x*y*z", "--x", str(x), "--y", str(y), "--z", str(z), "--json")
    assert vector.code == 0 and scalars.code == 0
    names = ("x", "y", "z")
    written_out = [[scalars.json["hessian"][a][b] for b in names] for a in names]
    assert vector.json["hessian"]["v"]["v"] == written_out
    assert written_out == [[0.0, z, y], [z, 0.0, x], [y, x, 0.0]]
