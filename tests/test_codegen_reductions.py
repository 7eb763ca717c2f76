"""Generated code of the reductions, products and linear algebra ops (issue 26).

Each program is generated once, traced at one point, then run at three other random
points in NumPy, PyTorch and JAX (each where installed): value, gradient and Hessian agree
with ``autograd_cli.grad`` / ``hessian`` there (rtol 1e-12), so the code is one formula
for every point, not the traced point's branch.  Batched reductions: stacks reduced along
an axis, with and without keepdims, and numbers (which reduce nothing) on leading batch
axes.  The points where a rule has a branch are run too: prod at zero entries, det at a
singular matrix, norm at 0.
"""

from __future__ import annotations

import numpy as np
import pytest

import autograd_cli as ag
from autograd_cli.core.codegen import generate
from autograd_cli.core.errors import UnsupportedError
from autograd_cli.grammar import parse

RTOL = 1e-12


def _normal(shape):
    return lambda rng: rng.normal(size=shape)


def _spd(n):
    def make(rng):
        m = rng.normal(size=(n, n))
        return m @ m.T + n * np.eye(n)

    return make


X34, X234, V4, V3 = _normal((3, 4)), _normal((2, 3, 4)), _normal(4), _normal(3)
A3, B32 = _normal((3, 3)), _normal((3, 2))

#: (id, expression, how each variable is drawn)
CASES = [
    # reductions
    ("sum-axis", "sum(sin(sum(X, axis=0))) + sum(x)", {"X": X34, "x": V4}),
    ("sum-keepdims", "sum(exp(sum(X, axis=1, keepdims=1)) * X)", {"X": X34}),
    ("sum-stack", "sum(cos(sum(T, axis=[0, 2], keepdims=1)) * T)", {"T": X234}),
    ("mean", "sum(cos(mean(X, axis=-1)) * mean(X)) + mean(T, axis=1)[0, 2]", {"X": X34, "T": X234}),
    (
        "prod",
        "prod(x) + sum(prod(X, axis=0)) + sum(prod(T, axis=1, keepdims=1))",
        {"x": V4, "X": X34, "T": X234},
    ),
    (
        "amax-amin",
        "sum(max(X, axis=0) * min(X, axis=0, keepdims=1)) + max(x) * min(x)",
        {"X": X34, "x": V4},
    ),
    (
        "logsumexp",
        "logsumexp(x) + sum(logsumexp(X, axis=0, keepdims=1) * X) + sum(logsumexp(T, axis=2))",
        {"x": V4, "X": X34, "T": X234},
    ),
    (
        "var-std",
        "var(x) * std(x) + sum(std(X, axis=1)) + sum(var(T, axis=0, keepdims=1) * T)",
        {"x": V4, "X": X34, "T": X234},
    ),
    (
        "norm",
        "norm(x) + sum(norm(X, axis=0)) + sum(norm(T, axis=-1, keepdims=1) * T)",
        {"x": V4, "X": X34, "T": X234},
    ),
    (
        "norm-vector-ords",
        "norm(x, ord=3) + norm(x, ord=1) * norm(x, ord=inf) + norm(x, ord=-inf)"
        " + norm(x, ord=0.5) + sum(norm(X, axis=1, ord=2.5))",
        {"x": V4, "X": X34},
    ),
    (
        "norm-matrix-ords",
        # not symmetric in 1 and inf, -1 and -inf: a rule that swapped them would agree
        "norm(X, ord='fro') + norm(X, ord=inf) * norm(X, ord=1) ** 2 + "
        "norm(X, ord=-1) - 3 * norm(X, ord=-inf)",
        {"X": X34},
    ),
    (
        "norm-singular-values",
        "norm(X, ord='nuc') + norm(X, ord=2) * norm(X, ord=-2) + "
        "sum(norm(T, axis=[2, 1], ord='nuc', keepdims=1) * T)",
        {"X": X34, "T": X234},
    ),
    # products
    ("matmul", "sum(sin(A @ B)) + x @ A @ x + sum(A @ x)", {"A": A3, "B": B32, "x": V3}),
    ("matmul-stack", "sum(tanh(T @ X.T))", {"T": X234, "X": X34}),
    ("dot", "dot(x, y) ** 2 + dot(sin(x), y)", {"x": V4, "y": V4}),
    ("outer", "sum(outer(x, y) * X) + sum(outer(x, y) ** 2)", {"x": V3, "y": V4, "X": X34}),
    (
        "tensordot",
        "sum(sin(tensordot(T, X, 2))) + tensordot(x, y, 1) ** 2",
        {"T": X234, "X": X34, "x": V4, "y": V4},
    ),
    (
        "einsum",
        "sum(sin(einsum('ij,jk->ik', A, B))) + einsum('i,ij,j', x, A, x) + "
        "sum(einsum('...ij,...j->...i', T, y) ** 2)",
        {"A": A3, "B": B32, "x": V3, "T": X234, "y": V4},
    ),
    # linear algebra
    ("det", "det(A) ** 2 + det(A)", {"A": A3}),
    ("inv", "sum(inv(A) * A) + sum(sin(inv(A)))", {"A": A3}),
    ("solve", "sum(solve(A, x) ** 2) + sum(sin(solve(A, B)))", {"A": A3, "x": V3, "B": B32}),
    ("cholesky", "sum(cholesky(S) ** 2) + sum(sin(cholesky(S)))", {"S": _spd(3)}),
    (
        "trace-diag",
        "trace(A @ A) + sum(diag(x) * A) + sum(diag(A) ** 3) + sum(diag(A, 1) ** 2)",
        {"A": A3, "x": V3},
    ),
    (
        "triu-tril",
        "sum(triu(A) * tril(A, -1).T) + sum(sin(triu(A, 1))) + sum(tril(A) ** 2)",
        {"A": A3},
    ),
    (
        "stacks",
        "det(S[0]) + sum(det(S) ** 2) + sum(inv(S) ** 2) + sum(solve(S, B) ** 2) + "
        "sum(solve(S, x) ** 2) + sum(trace(T) ** 2) + sum(x @ T) + sum(T @ y)",
        {"S": _normal((2, 3, 3)), "B": B32, "x": V3, "y": V4, "T": X234},
    ),
    (
        "broadcast-and-axes",
        "sum(einsum('ij,ij->i', C, X) ** 2) + sum(sin(tensordot(x, y, 0))) + "
        "sum(norm(T, axis=[0, 2], ord=-1) * T[:, 0, 0:1]) + sum(norm(T, axis=1, ord=0) * T[:, 0]) "
        "+ sum(prod(T, axis=[0, 2]) ** 2) + sum(logsumexp(T, axis=[0, 2]) ** 2)",
        {"C": _normal((3, 1)), "X": X34, "x": V3, "y": V4, "T": X234},
    ),
    ("svdvals", "sum(svdvals(X) ** 3) + sum(sin(svdvals(A)))", {"X": X34, "A": A3}),
    (
        "svd",
        "sum(svd(A)[0] * B) + sum(svd(X, 0)[2] ** 3) + sum(svd(X.T, 0)[0] ** 3)",
        {"A": A3, "B": A3, "X": X34},
    ),
]


#: the cases whose gradient has svd's U and Vh, which PyTorch has no spelling of (its
#: LAPACK's signs are not NumPy's): an unsupported error naming svd there
NO_TORCH = {"norm-singular-values", "svdvals", "svd"}


def _runner(target):
    """Run generated code of ``target`` (skipped where its library is missing): the
    function's outputs as NumPy arrays."""
    if target == "torch":
        torch = pytest.importorskip("torch")

        def convert(v):
            return v.detach().cpu().numpy() if isinstance(v, torch.Tensor) else np.asarray(v)

    elif target == "jax":
        jax = pytest.importorskip("jax")
        jax.config.update("jax_enable_x64", True)
        convert = np.asarray
    else:
        convert = np.asarray

    def run(g, point):
        namespace: dict = {}
        exec(compile(g.code, "<codegen>", "exec"), namespace)
        with np.errstate(all="ignore"):
            out = namespace[g.name](*[point[v] for v in g.inputs])
        return [convert(v) for v in out]

    return run


def _engine(source, point, wrt):
    r = ag.hessian(source, point, wrt)
    return [r.value] + [r.grad[v] for v in wrt] + [r.hessian[a][b] for a in wrt for b in wrt]


def _agree(g, got, want, where):
    for label, a, b in zip(g.outputs, got, want):
        b = np.asarray(b, dtype=np.float64)
        assert a.shape == b.shape, f"{where} {label}: shape {a.shape}, engine {b.shape}"
        scale = float(np.max(np.abs(b), initial=0.0)) if np.all(np.isfinite(b)) else 0.0
        np.testing.assert_allclose(
            a, b, rtol=RTOL, atol=RTOL * max(scale, 1.0), equal_nan=True, err_msg=f"{where} {label}"
        )


def _check(target, source, traced, points):
    run = _runner(target)
    g = generate(parse(source), traced, target=target, hessian=True)
    wrt = list(g.wrt)
    for k, point in enumerate(points):
        _agree(g, run(g, point), _engine(source, point, wrt), f"{target} point {k}:")
    return g


@pytest.mark.parametrize("target", ["numpy", "torch", "jax"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_agrees_with_the_engine_away_from_the_traced_point(case, target):
    name, source, draw = case
    rng = np.random.default_rng(sum(map(ord, name)))
    traced, *points = [{v: make(rng) for v, make in draw.items()} for _ in range(4)]
    if target == "torch" and name in NO_TORCH:
        pytest.importorskip("torch")
        with pytest.raises(UnsupportedError, match="svd"):
            generate(parse(source), traced, target=target)
        return
    _check(target, source, traced, points)


@pytest.mark.parametrize("target", ["numpy", "torch", "jax"])
def test_reductions_of_numbers_keep_the_batch_axes(target):
    """Numbers reduce nothing: the code stays batched, one point per element."""
    source = "sum(x) * mean(x) + prod(x) * max(x) + var(x) + std(x) + logsumexp(x) + norm(x)"
    run = _runner(target)
    g = generate(parse(source), {"x": 0.5}, target=target, hessian=True)
    assert g.batched
    xs = np.array([-1.5, -0.25, 0.0, 0.75, 2.0])
    got = run(g, {"x": xs})
    for k, x in enumerate(xs):
        want = _engine(source, {"x": x}, ["x"])
        _agree(g, [o[k] for o in got], want, f"{target} x={x}:")


@pytest.mark.parametrize("target", ["numpy", "torch", "jax"])
def test_the_branches_of_the_rules_are_written_for_every_point(target):
    """Traced where nothing is 0 or singular, run where something is."""
    prod_points = [{"x": np.array([0.5, 0.0, -1.5, 2.0])}, {"x": np.array([0.0, 0.0, 3.0, 1.0])}]
    _check(target, "prod(x) + prod(x) ** 2", {"x": np.array([0.5, 1.0, -1.5, 2.0])}, prod_points)
    singular = [{"A": np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 2.0]])}]
    _check(target, "det(A) + det(A) ** 2", {"A": np.eye(3) + 0.1}, singular)
    ones = [{"A": np.array([[0.0]])}, {"A": np.array([[-3.0]])}]
    _check(target, "det(A) + det(A) ** 2", {"A": np.array([[2.0]])}, ones)
    stack = [{"A": np.array([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.5], [0.0, 2.0]]])}]
    _check(target, "sum(det(A) ** 2) + sum(det(A))", {"A": np.eye(2) + np.zeros((2, 1, 1))}, stack)
    zero = [{"x": np.zeros(4)}, {"x": np.array([0.0, 1.0, 0.0, -2.0])}]
    _check(target, "norm(x) + norm(x, ord=1) + norm(x, ord=3)", {"x": np.ones(4)}, zero)


def test_the_matrix_with_a_nan_entry_gives_nan_as_the_engine():
    """inv, solve, det, cholesky, svdvals of a matrix with a nan entry: nan, as grad."""
    bad = np.array([[1.0, np.nan], [0.5, 2.0]])
    for source in (
        "sum(inv(A))",
        "sum(solve(A, x))",
        "det(A)",
        "sum(cholesky(A))",
        "sum(svdvals(A))",
    ):
        good = {"A": np.array([[2.0, 0.5], [0.5, 3.0]]), "x": np.array([1.0, -1.0])}
        names = [v for v in ("A", "x") if v in source]
        g = generate(parse(source), {v: good[v] for v in names})
        namespace: dict = {}
        exec(compile(g.code, "<codegen>", "exec"), namespace)
        point = {"A": bad, "x": good["x"]}
        with np.errstate(all="ignore"):
            value = namespace["f"](*[point[v] for v in g.inputs])[0]
        want = ag.grad(source, {v: point[v] for v in names}, names).value
        assert np.isnan(value) and np.isnan(want), source


def test_torch_has_no_spelling_for_the_singular_vectors():
    """PyTorch's LAPACK picks other signs than NumPy's: svd's U, Vh (and the gradients
    made of them, U diag(w) Vh: svdvals', norm's for 'nuc', 2, -2) are an unsupported error
    there, naming svd."""
    pytest.importorskip("torch")
    x = {"X": np.arange(12.0).reshape(4, 3) ** 0.5}
    for source in ("sum(svd(X, 0)[0])", "norm(X, ord='nuc')", "sum(svdvals(X))"):
        with pytest.raises(UnsupportedError, match="svd"):
            generate(parse(source), x, target="torch")
