"""Jacobians, Hessians, products, n-th derivatives and gradcheck (core/functional.py, core/forward.py).

References: SymPy (symbolic derivatives evaluated in float64) everywhere, and
``torch.autograd.functional`` where PyTorch is installed (skipped otherwise).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from autograd_cli.core import Tensor, grad, tensor
from autograd_cli.core.errors import GradError, NonScalarOutputError, UnknownVariableError
from autograd_cli.core.forward import jvp as forward_jvp
from autograd_cli.core.forward import jvp_program, propagate
from autograd_cli.core.functional import (
    derivative,
    derivatives,
    hessian,
    hvp,
    jacobian,
    jvp,
    vhp,
    vjp,
)
from autograd_cli.core.gradcheck import gradcheck
from autograd_cli.core.ops import Op, call
from autograd_cli.core.program_functional import (
    program_derivatives,
    program_gradcheck,
    program_hessian,
    program_hvp,
    program_jacobian,
    program_jvp,
    program_vjp,
)
from autograd_cli.core.tensor import apply
from autograd_cli.grammar import parse

TOL = dict(rtol=1e-12, atol=1e-12)


def close(a, b, **tol):
    a = a.numpy() if isinstance(a, Tensor) else np.asarray(a, dtype=float)
    b = b.numpy() if isinstance(b, Tensor) else np.asarray(b, dtype=float)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, **(tol or TOL))


def sym_hessian(expr, symbols, point):
    subs = dict(zip(symbols, point))
    return np.array([[float(sp.diff(expr, a, b).subs(subs)) for b in symbols] for a in symbols])


def sym_jacobian(exprs, symbols, point):
    subs = dict(zip(symbols, point))
    return np.array([[float(sp.diff(e, s).subs(subs)) for s in symbols] for e in exprs])


# ---------------------------------------------------------------------------
# Against SymPy
# ---------------------------------------------------------------------------


def test_hessian_two_scalars_against_sympy():
    X, Y = sp.symbols("x y")
    expected = sym_hessian(X**2 * Y + sp.sin(X * Y), [X, Y], [1, 2])
    H = hessian(lambda x, y: x**2 * y + (x * y).sin(), (tensor(1.0), tensor(2.0)))
    assert isinstance(H, tuple) and len(H) == 2 and all(len(row) == 2 for row in H)
    for i in range(2):
        for j in range(2):
            assert H[i][j].shape == ()
            close(H[i][j], expected[i, j])
    # The same through the expression language (what the CLI calls).
    r = program_hessian(parse("x**2*y + sin(x*y)"), {"x": 1, "y": 2})
    close(r.value, 2 + math.sin(2))
    close(r.gradient["x"], 2 * 2 + 2 * math.cos(2))
    for i, a in enumerate("xy"):
        for j, b in enumerate("xy"):
            close(r.hessian[a][b], expected[i, j])


def test_jacobian_of_three_outputs_two_inputs_is_3x2():
    X, Y = sp.symbols("x y")
    expected = sym_jacobian([X * Y, X + Y, sp.sin(X)], [X, Y], [1, 2])
    # One vector input: a single 3x2 block.
    f = lambda v: call("stack", v[0] * v[1], v[0] + v[1], v[0].sin())  # noqa: E731
    for strategy in ("auto", "forward", "reverse"):
        J = jacobian(f, tensor([1.0, 2.0]), strategy=strategy)
        assert J.shape == (3, 2)
        close(J, expected)
    # Two scalar inputs: a tuple of two (3,) columns.
    g = lambda x, y: call("stack", x * y, x + y, x.sin())  # noqa: E731
    Jx, Jy = jacobian(g, (tensor(1.0), tensor(2.0)))
    close(Jx, expected[:, 0])
    close(Jy, expected[:, 1])
    # And from a program.
    r = program_jacobian(parse("[x*y, x+y, sin(x)]"), {"x": 1, "y": 2})
    close(r.value, [2, 3, math.sin(1)])
    close(r.jacobian["x"], expected[:, 0])
    close(r.jacobian["y"], expected[:, 1])


def test_derivatives_of_sin_up_to_order_6():
    x0 = 0.5
    ds = derivatives(lambda x: x.sin(), tensor(x0), 6)
    cycle = [math.sin, math.cos, lambda v: -math.sin(v), lambda v: -math.cos(v)]
    for k, d in enumerate(ds):
        close(d, cycle[k % 4](x0))
    close(derivative(lambda x: x.sin(), tensor(x0), 6), -math.sin(x0))


@pytest.mark.parametrize(
    "source",
    ["exp(x)*sin(x)/(1 + x**2)", "log(1 + x**2)*sqrt(x)", "tanh(x)**3 - x**5", "atan(x)*cosh(x)"],
)
def test_derivatives_up_to_order_6_against_sympy(source):
    X = sp.Symbol("x")
    expr = sp.sympify(source)
    x0 = 0.7
    got = program_derivatives(parse(source), {"x": x0}, "x", 6)
    for k in range(7):
        close(got[k], float(sp.diff(expr, X, k).subs(X, x0)), rtol=1e-10, atol=1e-10)


def test_second_derivative_of_3_x_plus_2_squared_is_6():
    f = lambda x: 3 * (x + 2) ** 2  # noqa: E731
    for x0 in (-2.0, 0.0, 1.0, 3.5):
        assert float(derivative(f, tensor(x0), 2)) == 6.0
        assert float(hessian(f, tensor(x0))) == 6.0
        assert float(program_hessian(parse("z = 3*(x+2)**2"), {"x": x0}).hessian["x"]["x"]) == 6.0
    assert float(derivative(f, tensor(1.0), 3)) == 0.0


def test_mixed_partials_against_sympy_and_symmetric():
    X, Y = sp.symbols("x y")
    expr = sp.exp(X * Y) + X**3 * Y**2 - sp.cos(X) / Y
    point = (0.7, -0.3)
    expected = sym_hessian(expr, [X, Y], point)
    f = lambda x, y: (x * y).exp() + x**3 * y**2 - x.cos() / y  # noqa: E731
    inputs = (tensor(point[0]), tensor(point[1]))
    for strategy in ("forward-mode", "reverse-mode"):
        H = hessian(f, inputs, outer_jacobian_strategy=strategy)
        close(H[0][1], expected[0, 1])
        close(H[1][0], expected[1, 0])
        close(H[0][1], H[1][0])
    # d/dy (df/dx) by two separate grads, as a user would write it.
    x, y = (tensor(p, requires_grad=True) for p in point)
    (dx,) = grad(f(x, y), x, create_graph=True)
    (dxy,) = grad(dx, y)
    close(dxy, expected[0, 1])


def test_vector_input_hessian_shape_and_values():
    xs = sp.symbols("x0:3")
    expr = sum(v**2 * sp.sin(v) for v in xs) + xs[0] * xs[1] * xs[2]
    point = [0.3, -1.2, 2.0]
    expected = sym_hessian(expr, list(xs), point)
    f = lambda x: (x**2 * x.sin()).sum() + x.prod()  # noqa: E731
    H = hessian(f, tensor(point))
    assert H.shape == (3, 3)
    close(H, expected)
    close(hessian(f, tensor(point), vectorize=False), expected)
    close(hessian(f, tensor(point), outer_jacobian_strategy="reverse-mode"), expected)


def test_matrix_and_mixed_tensor_inputs_hessian_shapes_against_sympy():
    # f(x, W) = sum(sin(W @ x)) + sum(x**3), x: (3,), W: (2, 3)
    xs = sp.symbols("x0:3")
    ws = sp.symbols("w0:6")
    W = sp.Matrix(2, 3, ws)
    expr = sum(sp.sin(e) for e in W * sp.Matrix(xs)) + sum(v**3 for v in xs)
    x0 = np.array([0.5, -0.4, 1.1])
    w0 = np.array([[0.2, -0.3, 0.7], [1.0, 0.1, -0.5]])
    symbols = list(xs) + list(ws)
    full = sym_hessian(expr, symbols, list(x0) + list(w0.reshape(-1)))
    f = lambda x, w: (w @ x).sin().sum() + (x**3).sum()  # noqa: E731
    H = hessian(f, (tensor(x0), tensor(w0)))
    assert H[0][0].shape == (3, 3)
    assert H[0][1].shape == (3, 2, 3)
    assert H[1][0].shape == (2, 3, 3)
    assert H[1][1].shape == (2, 3, 2, 3)
    close(H[0][0], full[:3, :3])
    close(H[0][1], full[:3, 3:].reshape(3, 2, 3))
    close(H[1][0], full[3:, :3].reshape(2, 3, 3))
    close(H[1][1], full[3:, 3:].reshape(2, 3, 2, 3))
    # Matrix-only input: block shape W.shape + W.shape.
    Hw = hessian(lambda w: f(tensor(x0), w), tensor(w0))
    assert Hw.shape == (2, 3, 2, 3)
    close(Hw, full[3:, 3:].reshape(2, 3, 2, 3))


def test_matrix_jacobian_block_shape_against_sympy():
    ms = sp.symbols("m0:4")
    M = sp.Matrix(2, 2, ms)
    P = M * M
    m0 = np.array([[1.0, 2.0], [-0.5, 0.3]])
    expected = sym_jacobian(list(P), list(ms), list(m0.reshape(-1))).reshape(2, 2, 2, 2)
    for strategy in ("forward", "reverse"):
        J = jacobian(lambda m: m @ m, tensor(m0), strategy=strategy)
        assert J.shape == (2, 2, 2, 2)
        close(J, expected)


def test_scalar_shapes():
    assert jacobian(lambda x: x.exp(), tensor(0.0)).shape == ()
    assert hessian(lambda x: x.exp(), tensor(0.0)).shape == ()
    J = jacobian(lambda x: x * tensor([1.0, 2.0, 3.0]), tensor(2.0))
    assert J.shape == (3,)
    close(J, [1, 2, 3])
    J = jacobian(lambda x: x.sum(), tensor([1.0, 2.0]))
    assert J.shape == (2,)
    close(J, [1, 1])


def test_higher_order_through_create_graph_against_sympy():
    X = sp.Symbol("x")
    x0 = 0.4
    f = lambda x: (x**2 * x.sin()).sum()  # noqa: E731
    x = tensor([x0], requires_grad=True)
    H = hessian(f, x, create_graph=True)  # (1, 1), differentiable
    assert H.requires_grad
    (third,) = grad(H.sum(), x)
    close(third, [float(sp.diff(X**2 * sp.sin(X), X, 3).subs(X, x0))])
    J = jacobian(lambda v: v.exp() * v, x, create_graph=True, strategy="forward")
    (dJ,) = grad(J.sum(), x)
    close(dJ, [float(sp.diff(sp.exp(X) * X, X, 2).subs(X, x0))])


# ---------------------------------------------------------------------------
# Forward vs reverse, batched vs one direction at a time
# ---------------------------------------------------------------------------

_rng = np.random.default_rng(7)


def _t(*shape):
    return tensor(_rng.uniform(0.2, 0.9, size=shape))


FUNCTIONS = {
    "elementwise": (
        lambda x: x.exp() * x.log() + x.sqrt() / x.cosh() - x.atan() ** 2 + x.sigmoid() * x.tanh(),
        (_t(4),),
    ),
    "broadcasting": (lambda a, b: a * b - b / a + b**a + call("maximum", a, b), (_t(), _t(3))),
    "where": (lambda a, b: call("where", a > 0.5, a * b, b.sin()), (_t(5), _t(5))),
    "shapes": (lambda a: (a.reshape(3, 2).T * 2).reshape(6)[1:4] + a.T[0, 1], (_t(2, 3),)),
    "transpose3d": (lambda a: a.T.sin() + a.mT.sum(), (_t(2, 3, 4),)),
    "stack": (lambda a, b: call("stack", a * b, a.exp(), b), (_t(3), _t(3))),
    "reductions": (
        lambda a: (
            a.sum(axis=1) * a.mean(axis=0).sum()
            + a.prod(axis=0).sum()
            + a.max(axis=1)
            + a.norm(axis=1)
        ),
        (_t(3, 4),),
    ),
    "products": (lambda a, b, c: a @ b @ c + (b @ c).dot(a[0]), (_t(2, 3), _t(3, 4), _t(4))),
    "batched_matmul": (lambda a, b: (a @ b).sin(), (_t(2, 2, 3), _t(3, 4))),
    "tuple_outputs": (lambda a, b: (a * b, (a + b).sum()), (_t(3), _t(3))),
}


def _flatten(x):
    if isinstance(x, tuple):
        return [z for y in x for z in _flatten(y)]
    return [x]


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_forward_and_reverse_jacobians_agree(name):
    f, xs = FUNCTIONS[name]
    reverse = jacobian(f, xs, strategy="reverse")
    for kwargs in (
        {"strategy": "forward"},
        {"strategy": "forward", "vectorize": False},
        {"strategy": "forward", "chunk_size": 2},
    ):
        other = jacobian(f, xs, **kwargs)
        for a, b in zip(_flatten(reverse), _flatten(other)):
            close(a, b, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_forward_over_reverse_hessian_agrees_with_reverse_over_reverse(name):
    f, xs = FUNCTIONS[name]

    def scalar(*args):
        out = f(*args)
        total = 0
        for k, o in enumerate(out if isinstance(out, tuple) else (out,)):
            total = total + (o * tensor(np.cos(np.arange(o.size) + k).reshape(o.shape))).sum()
        return total

    H1 = hessian(scalar, xs)
    H2 = hessian(scalar, xs, outer_jacobian_strategy="reverse-mode")
    H3 = hessian(scalar, xs, chunk_size=3)
    for a, b, c in zip(_flatten(H1), _flatten(H2), _flatten(H3)):
        close(a, b, rtol=1e-10, atol=1e-11)
        close(a, c, rtol=1e-10, atol=1e-11)


def test_products_match_jacobian_and_hessian():
    f = lambda x, w: (w @ x).sin() * x.sum()  # noqa: E731
    x, w = _t(3), _t(2, 3)
    Jx, Jw = jacobian(f, (x, w))
    v = tensor([0.3, -1.0])
    out, (gx, gw) = vjp(f, (x, w), v)
    close(out, f(x, w))
    close(gx, np.einsum("i,ij->j", v.numpy(), Jx.numpy()))
    close(gw, np.einsum("i,ijk->jk", v.numpy(), Jw.numpy()))
    tx, tw = tensor([1.0, 0.5, -2.0]), _t(2, 3)
    out, t = jvp(f, (x, w), (tx, tw))
    close(t, Jx.numpy() @ tx.numpy() + np.einsum("ijk,jk->i", Jw.numpy(), tw.numpy()))
    s = lambda x, w: f(x, w).sum()  # noqa: E731
    H = hessian(s, (x, w))
    _, (hx, hw) = hvp(s, (x, w), (tx, tw))
    close(hx, H[0][0].numpy() @ tx.numpy() + np.einsum("iab,ab->i", H[0][1].numpy(), tw.numpy()))
    close(
        hw,
        np.einsum("abi,i->ab", H[1][0].numpy(), tx.numpy())
        + np.einsum("abcd,cd->ab", H[1][1].numpy(), tw.numpy()),
    )
    _, (vx, vw) = vhp(s, (x, w), (tx, tw))
    close(vx, hx)
    close(vw, hw)


def test_forward_mode_is_a_forward_sweep_with_batched_tangents():
    f = lambda x: (x**3 * x.sin()).sum(axis=0)  # noqa: E731
    x = _t(2, 3)
    basis = tensor(np.eye(6).reshape(6, 2, 3))
    out, tb = forward_jvp(f, x, basis, batch=6)
    assert tb.shape == (6, 3)
    for k in range(6):
        _, tk = forward_jvp(f, x, tensor(basis.numpy()[k]))
        close(tb[k], tk)
    close(tb.numpy().T.reshape(3, 2, 3), jacobian(f, x, strategy="reverse"))
    # The tangent of the gradient (forward over reverse) is a Hessian-vector product.
    xl = tensor(x.numpy(), requires_grad=True)
    (g,) = grad(f(xl).sum(), xl, create_graph=True)
    (hv,) = propagate([g], [(xl, tensor(np.ones((2, 3))))])
    close(hv, hvp(lambda v: f(v).sum(), x, tensor(np.ones((2, 3))))[1])


def test_tangents_that_require_grad_stay_differentiable():
    f = lambda x: x.sin() * x.sum()  # noqa: E731
    x = _t(3)
    v = tensor([0.5, -1.0, 2.0], requires_grad=True)
    _, t = forward_jvp(f, x, v, create_graph=True)
    assert t.requires_grad
    (gv,) = grad(t.sum(), v)  # d/dv of 1^T J v = J^T 1
    close(gv, jacobian(f, x).numpy().sum(axis=0))


def test_elementwise_derivatives_over_a_vector_of_points():
    xs = np.array([-1.0, 0.2, 0.9])
    ds = derivatives(lambda x: x.exp() * x, tensor(xs), 4)
    for k, d in enumerate(ds):
        close(d, np.exp(xs) * (xs + k))


def test_jvp_program_dual_evaluation():
    program = parse("a = x*y; b = sin(a) + x**2; sum(b * [1, 2])")
    values = {"x": 0.5, "y": [1.0, -2.0]}
    out, t = jvp_program(program, values, {"x": 1.0})
    X = 0.5
    ys = np.array([1.0, -2.0])
    close(out, np.sum((np.sin(X * ys) + X**2) * [1, 2]))
    close(t, np.sum((np.cos(X * ys) * ys + 2 * X) * [1, 2]))
    _, t2 = jvp_program(program, values, {"y": np.eye(2)}, batch=2)
    close(t2, np.cos(X * ys) * X * [1, 2])
    value, tangent = program_jvp(program, values, {"x": 1.0})
    close(value, out)
    close(tangent, t)


def test_program_helpers():
    program = parse("sum(x**2 * sin(x)) + x[0]*y")
    values = {"x": [0.3, 1.2, -0.7], "y": 2.0}
    fwd = program_jacobian(program, values, strategy="forward")
    rev = program_jacobian(program, values, strategy="reverse")
    assert (fwd.strategy, rev.strategy) == ("forward", "reverse")
    for name in ("x", "y"):
        close(fwd.jacobian[name], rev.jacobian[name])
    hs = program_hessian(program, values)
    hr = program_hessian(program, values, strategy="reverse")
    assert hs.hessian["x"]["x"].shape == (3, 3)
    assert hs.hessian["x"]["y"].shape == (3,)
    for a in "xy":
        for b in "xy":
            close(hs.hessian[a][b], hr.hessian[a][b])
    close(hs.hessian["x"]["y"], [1, 0, 0])
    _, hv = program_hvp(program, values, {"y": 1.0})
    close(hv["x"], [1, 0, 0])
    close(hv["y"], 0.0)
    _, g = program_vjp(parse("x * y"), {"x": [1.0, 2.0], "y": 3.0}, tensor([1.0, 1.0]))
    close(g["x"], [3, 3])
    close(g["y"], 3)
    assert program_gradcheck(program, values).passed
    with pytest.raises(UnknownVariableError):
        program_hessian(program, values, wrt=["z"])
    with pytest.raises(NonScalarOutputError):
        program_hessian(parse("x * 2"), {"x": [1.0, 2.0]})


def test_independent_outputs_give_zero_blocks_and_strict_raises():
    f = lambda x, y: x.exp()  # noqa: E731
    Jx, Jy = jacobian(f, (tensor([1.0, 2.0]), tensor(3.0)))
    close(Jy, [0, 0])
    with pytest.raises(GradError):
        jacobian(f, (tensor([1.0, 2.0]), tensor(3.0)), strict=True)
    H = hessian(lambda x: x.sum(), tensor([1.0, 2.0]))
    close(H, np.zeros((2, 2)))
    with pytest.raises(NonScalarOutputError):
        hessian(lambda x: x * 2, tensor([1.0, 2.0]))


def test_inputs_are_not_modified_and_results_are_detached():
    x = tensor([1.0, 2.0], requires_grad=True)
    H = hessian(lambda v: (v**3).sum(), x)
    J = jacobian(lambda v: v**2, x)
    assert not H.requires_grad and not J.requires_grad
    assert x.grad is None and x.is_leaf


def test_larger_hessian_is_exact():
    n = 300
    xv = np.linspace(-1, 1, n)
    H = hessian(lambda x: (x**2 * x.sin()).sum() + x.sum() ** 2, tensor(xv))
    expected = np.diag(2 * np.sin(xv) + 4 * xv * np.cos(xv) - xv**2 * np.sin(xv)) + 2.0
    close(H, expected, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------
# gradcheck
# ---------------------------------------------------------------------------


def test_gradcheck_passes_on_correct_functions():
    r = gradcheck(lambda x, w: (w @ x).tanh() * x.sum(), (_t(3), _t(2, 3)), check_forward_ad=True)
    assert r.passed and bool(r)
    assert r.max_abs_error < 1e-7
    assert r.analytic[0].shape == (2, 3) and r.numeric[1].shape == (2, 6)


def _wrong_sin():
    # An op whose derivative is deliberately wrong: cos(x) + x instead of cos(x).
    def vjp_rule(n, g):
        x = n.inputs[0]
        return (g * (x.cos() + x),)

    def jvp_rule(n, ts):
        return ts[0] * n.inputs[0].cos()  # the forward rule is right

    return Op("wrong_sin", "WrongSinBackward0", lambda a: np.sin(a), vjp_rule, jvp_rule)


def test_gradcheck_fails_on_a_wrong_derivative_and_reports_the_worst_element():
    op = _wrong_sin()
    x = tensor([0.1, 0.5, 2.0, 1.0])
    r = gradcheck(lambda v: apply(op, v) * 3.0, x)
    assert not r.passed and not bool(r)
    # The error 3*x is largest at x = 2.0: output 2 w.r.t. input element 2.
    assert r.worst["input"] == 0
    assert r.worst["input_index"] == (2,)
    assert r.worst["output_index"] == (2,)
    assert r.worst["analytic"] == pytest.approx(3 * (math.cos(2.0) + 2.0))
    assert r.worst["numeric"] == pytest.approx(3 * math.cos(2.0), abs=1e-6)
    assert r.max_abs_error == pytest.approx(6.0, abs=1e-6)
    assert "FAILED" in r.summary()
    with pytest.raises(GradError):
        gradcheck(lambda v: apply(op, v), x, raise_exception=True)


def test_gradcheck_checks_forward_mode_when_asked():
    def jvp_wrong(n, ts):
        return ts[0] * 2.0

    op = Op("wrong_fwd", "WrongFwdBackward0", lambda a: a * 1.0, lambda n, g: (g,), jvp_wrong)
    x = tensor([0.5, 1.5])
    assert gradcheck(lambda v: apply(op, v), x).passed
    r = gradcheck(lambda v: apply(op, v), x, check_forward_ad=True)
    assert not r.passed and r.worst["mode"] == "forward"


# ---------------------------------------------------------------------------
# Against torch.autograd.functional (when PyTorch is installed)
# ---------------------------------------------------------------------------

# the `torch` fixture (tests/conftest.py): skipped without PyTorch, required in CI


def _both(torch, f, *arrays):
    ours = tuple(tensor(a) for a in arrays)
    theirs = tuple(torch.tensor(a, dtype=torch.float64) for a in arrays)
    return ours, theirs


TORCH_CASES = {
    "poly_trig": (
        lambda x, y: (x**2 * y).sum() + (x * y).sin().sum(),
        [np.array([1.0, 0.5]), np.array([2.0, -1.0])],
    ),
    "matrix": (
        lambda w, x: ((w @ x).tanh() * (w @ x).exp()).sum(),
        [np.array([[0.2, -0.3, 0.7], [1.0, 0.1, -0.5]]), np.array([0.5, -0.4, 1.1])],
    ),
    "sigmoid_log": (
        lambda x: ((x.sigmoid() + 1).log() * x.sqrt()).sum(),
        [np.array([0.3, 1.7, 2.2])],
    ),
}


@pytest.mark.parametrize("name", list(TORCH_CASES))
def test_hessian_and_jacobian_match_torch(torch, name):
    import torch.autograd.functional as TF

    f, arrays = TORCH_CASES[name]
    ours, theirs = _both(torch, f, *arrays)
    H = hessian(f, ours)
    Ht = TF.hessian(f, theirs)
    for a, b in zip(_flatten(H), _flatten(Ht)):
        close(a, b.detach().numpy())
    grads = lambda *xs: tuple(x.exp() * x.sum() for x in xs)  # noqa: E731
    J = jacobian(grads, ours)
    Jt = TF.jacobian(grads, theirs)
    for a, b in zip(_flatten(J), _flatten(Jt)):
        close(a, b.detach().numpy())
    vs = tuple(np.cos(np.arange(a.size)).reshape(a.shape) for a in arrays)
    ov, tv = _both(torch, f, *vs)
    _, hv = hvp(f, ours, ov)
    _, hvt = TF.hvp(f, theirs, tv)
    for a, b in zip(_flatten(hv), _flatten(hvt)):
        close(a, b.numpy())
    _, jv = jvp(grads, ours, ov)
    _, jvt = TF.jvp(grads, theirs, tv)
    for a, b in zip(_flatten(jv), _flatten(jvt)):
        close(a, b.numpy())
    _, vj = vjp(grads, ours, ov)
    _, vjt = TF.vjp(grads, theirs, tv)
    for a, b in zip(_flatten(vj), _flatten(vjt)):
        close(a, b.numpy())


def test_output_nesting_matches_torch(torch):
    import torch.autograd.functional as TF

    cases = [
        (lambda x: x * 2, [np.array([1.0, 2.0])], False),
        (lambda x, y: x * y, [np.array([1.0, 2.0]), np.array([3.0, 4.0])], True),
        (lambda x: (x * 2, x.sum()), [np.array([1.0, 2.0])], False),
        (lambda x, y: (x * y, (x + y).sum()), [np.array([1.0, 2.0]), np.array(3.0)], True),
    ]
    for f, arrays, as_tuple in cases:
        ours, theirs = _both(torch, f, *arrays)
        J = jacobian(f, ours if as_tuple else ours[0])
        Jt = TF.jacobian(f, theirs if as_tuple else theirs[0])

        def structure(v):
            return [structure(e) for e in v] if isinstance(v, tuple) else tuple(v.shape)

        assert structure(J) == structure(Jt)
        for a, b in zip(_flatten(J), _flatten(Jt)):
            close(a, b.numpy())
