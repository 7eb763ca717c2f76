"""Edges of the op table (core/ops.py) that smooth random tests never reach.

* Zero tangents and cotangents against infinite local derivatives: ``chain(g, d)`` keeps an
  exactly-zero ``g`` zero, so the argument order of every ``chain`` call is behaviour: an
  explicit zero tangent must give what an omitted one gives, and the untaken branch of
  ``where`` must not reach the gradient (README, "The expression language").
* Ops that save nothing (``sub``, ``transpose``, ``mT``, ...) may be backpropagated through
  twice without ``retain_graph``, as in PyTorch; ops that save tensors may not.
* ``prod`` at points with one, two and three or more zeros: gradients and Hessians against
  the exact ones (SymPy, and the closed form H_ij = prod_{k != i, j} x_k).
* ``dot`` takes only 1-D vectors (API error and CLI exit code).
* ``grad_fn`` names of matmul by operand rank: PyTorch's names, written out literally here
  so a run without torch checks them too (tests/test_torch_oracle.py compares with torch).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy

from autograd_cli.core import OPS, GradError, ShapeError, apply, forward, grad, hessian, jvp, tensor

# ---------------------------------------------------------------------------
# Zero tangents stay zero through an infinite derivative (forward mode)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn, point, tangent, value, expected",
    [
        # d/dt sqrt([0, 4] + t [0, 1]) at t = 0: the first entry is the constant sqrt(0).
        (lambda x: x.sqrt(), [0.0, 4.0], [0.0, 1.0], [0.0, 2.0], [0.0, 0.25]),
        # log(0) = -inf is constant along a zero tangent too.
        (lambda x: x.log(), [0.0, 1.0], [0.0, 1.0], [-math.inf, 0.0], [0.0, 1.0]),
        (
            lambda x: x.log2(),
            [0.0, 2.0],
            [0.0, 1.0],
            [-math.inf, 1.0],
            [0.0, 1 / (2 * math.log(2))],
        ),
    ],
    ids=["sqrt", "log", "log2"],
)
def test_zero_tangent_through_infinite_derivative_stays_zero(fn, point, tangent, value, expected):
    for run in (jvp, forward.jvp):  # torch.autograd.functional.jvp- and torch.func.jvp-style
        out, dout = run(fn, tensor(point), tensor(tangent))
        np.testing.assert_array_equal(out.numpy(), value)
        np.testing.assert_allclose(dout.numpy(), expected, rtol=1e-15, atol=0)
        assert not np.isnan(dout.numpy()).any()


def test_explicit_zero_tangent_equals_omitted_tangent_in_the_cli(cli):
    # An input without --tangent has a zero tangent; saying so explicitly changes nothing,
    # even where that input's local derivative is infinite (sqrt'(0) = inf).
    base = ("grad", "sqrt(y) + x * y", "--x", "3", "--y", "0", "--tangent", "x=1", "--json")
    omitted = cli(*base)
    explicit = cli(*base, "--tangent", "y=0")
    assert omitted.code == 0 and explicit.code == 0, (omitted.out, explicit.out)
    assert omitted.json["jvp"] == 0.0  # d/dt sqrt(0) + (3 + t) * 0
    assert explicit.json["jvp"] == omitted.json["jvp"]
    # ... and a vector with a zero entry exactly where sqrt'(0) = inf
    r = cli("grad", "sqrt(x)", "--x", "[0, 4]", "--tangent", "x=[0, 1]", "--json")
    assert r.code == 0 and r.json["jvp"] == [0.0, 0.25]


def test_zero_tangent_reaching_sqrt_from_upstream():
    # sqrt(x * y) at x = y = 0 along x: x * y stays 0, so the derivative is exactly 0.
    zero, one = tensor(0.0), tensor(1.0)
    for run in (jvp, forward.jvp):
        out, dout = run(lambda x, y: (x * y).sqrt(), (zero, zero), (one, zero))
        assert float(out) == 0.0 and float(dout) == 0.0


# ---------------------------------------------------------------------------
# Zero cotangents stay zero through an infinite partial (reverse mode, binary ops)
# ---------------------------------------------------------------------------


def test_where_division_by_zero_branch_keeps_gradient_zero():
    # f(x, y) = where(y > 0, x / y, 0): at y = 0, f(x, 0) = 0 for every x, so df/dx = 0
    # there (the untaken x / y has the infinite partial 1/y).  PyTorch gives nan (0 * inf),
    # a documented departure (README: "a cotangent that is exactly zero stays zero").
    x = tensor([1.0, 2.0, -3.0], requires_grad=True)
    y = tensor([0.0, 4.0, 0.0], requires_grad=True)
    out = apply(OPS["where"], y > 0, x / y, 0.0)
    gx, gy = grad(out.sum(), (x, y))
    np.testing.assert_array_equal(gx.numpy(), [0.0, 0.25, 0.0])
    np.testing.assert_array_equal(gy.numpy(), [0.0, -2.0 / 16.0, 0.0])


def test_where_division_by_zero_branch_in_the_cli(cli):
    r = cli("grad", "sum(where(y > 0, x / y, 0))", "--x", "[1, 2]", "--y", "[0, 4]", "--json")
    assert r.code == 0, r.out
    assert r.json["grad"] == {"x": [0.0, 0.25], "y": [0.0, -0.125]}


def test_where_product_with_log_branch_keeps_gradient_zero():
    # mul's partial d(a*b)/da = b = log(x) = -inf at x = 0, behind an untaken branch.
    x = tensor([0.0, 1.0], requires_grad=True)
    c = tensor([2.0, 3.0], requires_grad=True)
    out = apply(OPS["where"], x > 0, x.log() * c, 0.0)
    gx, gc = grad(out.sum(), (x, c))
    np.testing.assert_array_equal(gc.numpy(), [0.0, 0.0])  # log(1) = 0
    np.testing.assert_array_equal(gx.numpy(), [0.0, 3.0])


# ---------------------------------------------------------------------------
# Ops that save nothing may be backpropagated through twice (as in PyTorch)
# ---------------------------------------------------------------------------


def _twice(make, x):
    out = make(x)
    out.backward()
    first = x.grad.numpy().copy()
    out.backward()  # no retain_graph: fine when no op on the path saved a tensor
    np.testing.assert_array_equal(x.grad.numpy(), 2 * first)
    return first


SAVE_NOTHING = {
    "sub": (lambda x: (x - 1.0).sum(), [1.0, 2.0, 3.0], [1.0, 1.0, 1.0]),
    "rsub": (lambda x: (1.0 - x).sum(), [1.0, 2.0, 3.0], [-1.0, -1.0, -1.0]),
    "x.T": (lambda x: x.T.sum(), [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.ones((2, 3))),
    "x.mT": (lambda x: x.mT.sum(), [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.ones((2, 3))),
    "x.T - x.mT": (lambda x: (x.T - x.mT).sum(), np.eye(2), np.zeros((2, 2))),
    "add, neg, sum": (lambda x: (-(x + x)).sum(), [1.0, 2.0], [-2.0, -2.0]),
}


@pytest.mark.parametrize("label", sorted(SAVE_NOTHING))
def test_ops_that_save_nothing_allow_a_second_backward(label):
    make, value, expected = SAVE_NOTHING[label]
    x = tensor(value, requires_grad=True)
    first = _twice(make, x)
    np.testing.assert_array_equal(first, expected)


@pytest.mark.parametrize(
    "make",
    [lambda x: (x * x).sum(), lambda x: (x - x * 2).sum(), lambda x: (x.T * x.T).sum()],
    ids=["mul", "sub of mul", "mul of transposes"],
)
def test_ops_that_save_tensors_refuse_a_second_backward(make):
    x = tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    out = make(x)
    out.backward()
    with pytest.raises(GradError, match="backward through the graph a second time"):
        out.backward()


# ---------------------------------------------------------------------------
# prod at zeros: first and second derivatives
# ---------------------------------------------------------------------------


def _exact_prod_derivatives(value):
    syms = sympy.symbols(f"x0:{len(value)}")
    f = sympy.prod(syms)
    at = dict(zip(syms, value))
    g = [float(sympy.diff(f, s).subs(at)) for s in syms]
    h = [[float(sympy.diff(f, a, b).subs(at)) for b in syms] for a in syms]
    return np.array(g), np.array(h)


def _closed_form_hessian(value):
    n = len(value)
    h = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j:
                h[i, j] = math.prod(value[k] for k in range(n) if k not in (i, j))
    return h


def _double_grad_hessian(fn, value):
    x = tensor(value, requires_grad=True)
    (g,) = grad(fn(x), x, create_graph=True)
    rows = [grad(g[i], x, retain_graph=True)[0] for i in range(len(value))]
    return g.detach().numpy(), np.array([r.numpy() for r in rows])


PROD_POINTS = {
    "no zero": [2.0, -1.5, 3.0],
    "one zero": [2.0, 0.0, 3.0],
    "one zero, 4 entries": [2.0, 0.0, 3.0, -5.0],
    "two zeros": [0.0, 3.0, 0.0, 5.0],
    "two zeros, 3 entries": [0.0, 2.0, 0.0],
    "three zeros": [0.0, 0.0, 0.0, 4.0],
    "all zero": [0.0, 0.0, 0.0],
}


@pytest.mark.parametrize("label", list(PROD_POINTS))
def test_prod_gradient_and_hessian_at_zeros_are_exact(label):
    value = PROD_POINTS[label]
    g_exact, h_exact = _exact_prod_derivatives(value)
    np.testing.assert_array_equal(h_exact, _closed_form_hessian(value))  # the oracle agrees
    x = tensor(value, requires_grad=True)
    (g,) = grad(x.prod(), x)
    np.testing.assert_array_equal(g.numpy(), g_exact)
    g2, h_rr = _double_grad_hessian(lambda t: t.prod(), value)  # reverse over reverse
    np.testing.assert_array_equal(g2, g_exact)
    np.testing.assert_array_equal(h_rr, h_exact)
    h_fr = hessian(lambda t: t.prod(), tensor(value))  # forward over reverse
    np.testing.assert_array_equal(h_fr.numpy(), h_exact)


def test_prod_with_three_zeros_has_zero_gradient_everywhere():
    # With three or more zeros every partial still contains a zero factor.
    for value in ([0.0, 0.0, 0.0], [0.0, 7.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, -2.0]):
        x = tensor(value, requires_grad=True)
        (g,) = grad(x.prod(), x)
        np.testing.assert_array_equal(g.numpy(), np.zeros(len(value)))


def test_prod_along_an_axis_with_zeros_matches_sympy():
    # Rows with 0, 1, 2 and 3 zeros at once: sum(prod(A, 1)).
    value = [
        [2.0, -1.0, 3.0],
        [2.0, 0.0, 3.0],
        [0.0, 5.0, 0.0],
        [0.0, 0.0, 0.0],
    ]
    syms = sympy.symbols("a0:12")
    rows = [syms[3 * i : 3 * i + 3] for i in range(4)]
    f = sum(sympy.prod(r) for r in rows)
    at = dict(zip(syms, [v for row in value for v in row]))
    g_exact = np.array([float(sympy.diff(f, s).subs(at)) for s in syms]).reshape(4, 3)
    h_exact = np.array([[float(sympy.diff(f, a, b).subs(at)) for b in syms] for a in syms])
    for keepdims in (False, True):
        a = tensor(value, requires_grad=True)
        (g,) = grad(a.prod(axis=1, keepdims=keepdims).sum(), a, create_graph=True)
        np.testing.assert_array_equal(g.detach().numpy(), g_exact)
        h = hessian(lambda t, k=keepdims: t.prod(axis=1, keepdims=k).sum(), tensor(value))
        np.testing.assert_array_equal(h.numpy().reshape(12, 12), h_exact)


def test_prod_hessian_at_zeros_matches_finite_differences_of_the_gradient():
    # Independent of SymPy: central differences of the analytic gradient (prod is a
    # polynomial of degree 1 in each entry, so the difference quotient is exact to rounding).
    value = [0.0, 3.0, 0.0, 5.0]
    step = 1e-3
    _, h = _double_grad_hessian(lambda t: t.prod(), value)
    for j in range(len(value)):
        up, down = list(value), list(value)
        up[j] += step
        down[j] -= step
        gu, _ = _double_grad_hessian(lambda t: t.prod(), up)
        gd, _ = _double_grad_hessian(lambda t: t.prod(), down)
        np.testing.assert_allclose(h[:, j], (gu - gd) / (2 * step), rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------------------
# dot takes two 1-D vectors
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sa, sb, dims",
    [((2, 3), (3, 2), "2-D and 2-D"), ((3,), (3, 2), "1-D and 2-D"), ((2, 3), (3,), "2-D and 1-D")],
)
def test_dot_of_non_vectors_raises(sa, sb, dims):
    a = tensor(np.ones(sa), requires_grad=True)
    b = tensor(np.ones(sb), requires_grad=True)
    with pytest.raises(ShapeError, match=f"dot needs two 1-D vectors, got {dims}"):
        apply(OPS["dot"], a, b)


def test_dot_of_vectors_works():
    a = tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = tensor([4.0, 5.0, 6.0], requires_grad=True)
    out = apply(OPS["dot"], a, b)
    assert float(out) == 32.0 and out.grad_fn.name() == "DotBackward0"


def test_dot_of_matrices_is_a_shape_error_in_the_cli(cli):
    argv = ("eval", "dot(A, B)", "--A", "[[1, 2], [3, 4]]", "--B", "[[1, 0], [0, 1]]")
    r = cli(*argv, "--json")
    assert r.code == 1, r.out
    assert r.json["error"]["kind"] == "shape"
    assert "dot needs two 1-D vectors, got 2-D and 2-D" in r.json["error"]["message"]
    assert "as torch.dot; for matrices write a @ b" in r.json["error"]["message"]
    r = cli(*argv)
    assert r.code == 1 and r.out == "" and "Traceback" not in r.err
    assert "dot needs two 1-D vectors" in r.err


# ---------------------------------------------------------------------------
# matmul's grad_fn name by operand rank (PyTorch's names; see test_torch_oracle.py)
# ---------------------------------------------------------------------------

MATMUL_NAMES = [
    # shape of a, shape of b, the grad_fn name torch gives a @ b (contiguous operands)
    ((3,), (3,), "DotBackward0"),
    ((2, 3), (3,), "MvBackward0"),
    ((3,), (3, 2), "SqueezeBackward4"),
    ((2, 3), (3, 2), "MmBackward0"),
    ((4, 2, 3), (3,), "UnsafeViewBackward0"),
    ((3,), (4, 3, 2), "UnsafeViewBackward0"),
    ((4, 2, 3), (3, 2), "UnsafeViewBackward0"),
    ((4, 2, 3), (4, 3, 2), "UnsafeViewBackward0"),
]


@pytest.mark.parametrize("sa, sb, name", MATMUL_NAMES, ids=[f"{a}@{b}" for a, b, _ in MATMUL_NAMES])
def test_matmul_grad_fn_names(sa, sb, name):
    a = tensor(np.ones(sa), requires_grad=True)
    b = tensor(np.ones(sb), requires_grad=True)
    out = a @ b
    assert out.grad_fn.name() == name
    assert repr(out.grad_fn) == f"<{name}>"
    # only one operand differentiated: the name depends on the shapes alone
    assert (tensor(np.ones(sa)) @ b).grad_fn.name() == name


# ---------------------------------------------------------------------------
# Values that are not numbers: an error, as torch.tensor and torch.autograd.functional
# give, never a silent nan (tensor(None) once was tensor(nan))
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data, error, kind",
    [
        (None, RuntimeError, "NoneType"),
        ([1.0, None], RuntimeError, "NoneType"),
        ("a", TypeError, "str"),
    ],
)
def test_a_tensor_of_something_else_than_numbers_is_refused(data, error, kind):
    with pytest.raises(error, match=f"Could not infer dtype of {kind}"):
        tensor(data)


def test_a_missing_entry_in_v_is_refused_not_a_nan():
    from autograd_cli.core.functional import jvp, vjp

    x, y = tensor(0.0), tensor(0.0)
    with pytest.raises(TypeError, match="value at index 1 has type NoneType"):
        jvp(lambda a, b: a * b, (x, y), (tensor(1.0), None))
    with pytest.raises(TypeError, match="value at index 1 has type NoneType"):
        vjp(lambda a, b: (a * b, a + b), (tensor(1.0), tensor(2.0)), (tensor(1.0), None))


# ---------------------------------------------------------------------------
# Shapes at the edges: empty broadcasts, scalars in @, mixed float dtypes
# ---------------------------------------------------------------------------


def test_gradient_through_a_broadcast_against_an_empty_array_is_zero():
    # x (1,) + y (0,) is (0,): x's gradient sums over no entries, 0 of x's shape (torch too).
    x = tensor([1.5], requires_grad=True)
    y = tensor(np.zeros(0), requires_grad=True)
    gx, gy = grad((x + y).sum(), (x, y))
    assert gx.numpy().tolist() == [0.0] and gy.numpy().shape == (0,)
    gx, gy = grad((x * y).sum(), (x, y))
    assert gx.numpy().tolist() == [0.0] and gy.numpy().shape == (0,)


@pytest.mark.parametrize("expr", ["2 @ x", "x @ 2"])
def test_matmul_with_a_scalar_says_to_use_star(expr, cli):
    r = cli("eval", expr, "--x", "[1, 2]", "--json")
    assert r.code == 1
    assert r.json["error"]["kind"] == "shape"
    assert "use * for scalars" in r.json["error"]["message"]


def test_comparisons_of_mixed_float_types_promote_like_numpy():
    a32 = tensor(np.array([1.0, 2.0], dtype=np.float32))
    b64 = tensor([2.0, 1.0])
    for r in (a32 < b64, b64 < a32, a32 >= b64):
        assert r.data.dtype == np.float64  # float32 with float64 is float64, either order
    assert (a32 < a32).data.dtype == np.float32
    assert (a32 < 1.5).data.dtype == np.float32  # a Python number takes the tensor's type
    assert (a32 < b64).numpy().tolist() == [1.0, 0.0]


# ---------------------------------------------------------------------------
# sum_to saves nothing; max(x, c) at a signed zero (PyTorch's clamp_min)
# ---------------------------------------------------------------------------


def test_the_sum_to_of_a_broadcast_gradient_allows_a_second_backward(torch):
    # x is broadcast against w, so dx = sum_to(v, ()) of the cotangent v: with create_graph
    # that is a SumToSizeBackward0 node, which (like torch's) saves no tensor, so its graph
    # may be backpropagated through twice without retain_graph.
    def run(lib, grad_fn, make):
        x = make(1.5, requires_grad=True)
        w = make([1.0, 2.0], requires_grad=True)
        v = make([3.0, 4.0], requires_grad=True)
        (dx,) = grad_fn(x + w, x, grad_outputs=v, create_graph=True)
        dx.backward()
        dx.backward()  # no retain_graph
        return float(dx.detach().numpy()), v.grad.numpy().tolist()

    mine = run(None, grad, tensor)
    theirs = run(
        torch,
        torch.autograd.grad,
        lambda value, **kw: torch.tensor(value, dtype=torch.float64, **kw),
    )
    assert mine == theirs == (7.0, [2.0, 2.0])


@pytest.mark.xfail(
    strict=True,
    reason="bug: max(x, c) (clamp_min) is numpy.maximum(x, c), which at a tie of signed zeros "
    "returns c; torch.clamp_min returns x (max(-0.0, 0) is -0.0 in torch, 0.0 here)",
)
@pytest.mark.parametrize("x, c", [(-0.0, 0.0), (0.0, -0.0)])
def test_max_with_a_constant_keeps_the_sign_of_a_zero_argument_like_torch(x, c, torch):
    mine = float(apply(OPS["clamp_min"], tensor(x), c).numpy())
    theirs = float(torch.clamp_min(torch.tensor(x, dtype=torch.float64), c))
    assert (mine, math.copysign(1.0, mine)) == (theirs, math.copysign(1.0, theirs))


def test_reshape_saves_nothing_so_allows_a_second_backward(torch):
    # reshape (ViewBackward0) keeps only the input's shape, as in torch: a second backward
    # through it (and sum, neg, sub, which save nothing either) needs no retain_graph.
    def run(x):
        out = (1.0 - x.reshape((3, 2))).sum()
        out.backward()
        out.backward()  # no retain_graph
        return x.grad.numpy().tolist()

    value = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    mine = run(tensor(value, requires_grad=True))
    theirs = run(torch.tensor(value, dtype=torch.float64, requires_grad=True))
    assert mine == theirs == [[-2.0] * 3] * 2
