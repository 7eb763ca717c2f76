"""The array-level fast paths of issue 25 give the same bits as the paths they replace.

Each fast path (a product with a cotangent of ones skipped, a product taken in place, x**2's
derivative without a power, the batch seed of ones as a broadcast, the pow kink's short cut)
is compared with the generic path forced on the same inputs, non-finite ones included, so
that no fast path can change a number, a warning, or hand a caller an array it shares.
"""

from __future__ import annotations

import numpy as np
import pytest

import autograd_cli as ag
from autograd_cli.core import batch, forward, rows
from autograd_cli.core.ops import elementwise, rules
from autograd_cli.core.tensor import Tensor, no_grad
from autograd_cli.grammar import parse

N = 3 * rules.CHAIN_LOCAL_MIN  # above the threshold: the fast paths run


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.uint64 if a.dtype == np.float64 else np.uint32)


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_array_equal(_bits(a), _bits(b))


def _column(seed: int, dtype=np.float64):
    """Normal numbers with 0, -0, inf, -inf, nan and huge values mixed in."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=N)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e308, -1e-310, 1.0])
    x[rng.integers(0, N, size=200)] = rng.choice(special, size=200)
    with np.errstate(over="ignore"):
        return x.astype(dtype)


def _generic(monkeypatch):
    """Every fast path of this change off: the code as it was."""
    monkeypatch.setattr(rules, "CHAIN_LOCAL_MIN", 10**18)
    monkeypatch.setattr(elementwise, "_host_two", lambda b: False)
    monkeypatch.setattr(
        batch,
        "_seed",
        lambda out: Tensor._wrap(np.ones(out.data.shape, dtype=out.data.dtype)),
    )


# ---------------------------------------------------------------------------
# chain_local against chain
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", ["unit", "zeros-and-nonfinite", "plain"])
def test_chain_local_is_chain(kind, dtype):
    d_values = _column(1, dtype)
    if kind == "unit":
        g = Tensor._wrap(np.broadcast_to(np.ones((), dtype=dtype), (N,)))
    elif kind == "plain":
        g = Tensor._wrap(np.random.default_rng(2).normal(size=N).astype(dtype))
    else:
        g = Tensor._wrap(_column(3, dtype))
        g.data[:50] = 0.0  # zero cotangents where d is inf or nan: the mended entries
        d_values[:50:2] = np.inf
        d_values[1:50:2] = np.nan
    with no_grad(), np.errstate(all="ignore"):
        want = rules.chain(g, Tensor._wrap(d_values.copy()))
        saved = Tensor._wrap(d_values.copy())  # a saved input: read, never written
        before = saved.data.copy()
        got_saved = rules.chain_local(g, saved, (saved,))
        fresh = Tensor._wrap(d_values.copy())  # made by the rule: may be reused
        got_fresh = rules.chain_local(g, fresh, (saved,))
    _same(got_saved.data, want.data)
    _same(got_fresh.data, want.data)
    _same(saved.data, before)
    assert not np.may_share_memory(got_saved.data, saved.data)


def test_chain_local_copies_what_it_did_not_make_unless_the_caller_copies_at_exit():
    """A gradient is never a view of a tensor the user may hold (an input, an intermediate
    of the Tensor API, the output), except inside a caller that copies at its exit."""
    g = Tensor._wrap(np.broadcast_to(np.ones(()), (N,)))
    leaf = Tensor._wrap(_column(4))
    inner = Tensor._wrap(_column(5), grad_fn=object())  # an intermediate of the graph
    out = Tensor._wrap(_column(6), grad_fn=object())
    saved = (leaf, inner, out)
    with no_grad():
        for d in saved:
            r = rules.chain_local(g, d, saved)
            _same(r.data, d.data)
            assert not np.may_share_memory(r.data, d.data)
        token = rules.LEAVES_COPIED_AT_EXIT.set(True)
        try:
            assert all(rules.chain_local(g, d, saved) is d for d in saved)
        finally:
            rules.LEAVES_COPIED_AT_EXIT.reset(token)


def test_tensor_api_gradient_is_not_a_view_of_an_intermediate():
    from autograd_cli.core import tensor

    x = tensor(_column(12), requires_grad=True)
    e = tensor(_column(13), requires_grad=True).exp()  # an intermediate with a grad_fn
    with np.errstate(all="ignore"):
        (x * e).sum().backward()
    _same(x.grad.data, e.data)
    assert not np.may_share_memory(x.grad.data, e.data)


# ---------------------------------------------------------------------------
# The batch path against the generic one, values, gradients and warnings
# ---------------------------------------------------------------------------

EXPRESSIONS = [
    "x*sin(y)+y**2",  # bench/run.py row 3
    "x*y",
    "x+y",
    "exp(x)",
    "x**2 + y**0.5",
    "sqrt(x) * log(y) + tanh(x*y)",
    "x**2",
    "abs(x) + max(x, y)",
    "1/x + x**-0.5",
    "log(x) * y",  # nan and inf from finite arguments: warnings in many rows
    "x*y + y",  # y's column handed on as x's cotangent: copied at the exit
    "sum([x, y] * [2, 3])",
]


def _run(program, x, y, op="grad"):
    cols = {"x": x, "y": y}
    names = [n for n in ("x", "y") if n in program.inputs]
    return rows.evaluate_group(program, N, {n: cols[n] for n in names}, op=op)


@pytest.mark.parametrize("text", EXPRESSIONS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_batch_grad_is_the_generic_path(text, dtype, monkeypatch):
    program = parse(text)
    x, y = _column(7, dtype), _column(8, dtype)
    x_before, y_before = x.copy(), y.copy()
    fast = _run(program, x, y)
    with monkeypatch.context() as m:
        _generic(m)
        slow = _run(program, x.copy(), y.copy())
    assert isinstance(fast, batch.BatchResult) and isinstance(slow, batch.BatchResult)
    _same(fast.value, slow.value)
    assert fast.grad.keys() == slow.grad.keys()
    for name, g in fast.grad.items():
        _same(g, slow.grad[name])
        assert g.flags.writeable
        for other in (x, y, fast.value):  # the caller's arrays (grads may view one array)
            assert not np.may_share_memory(g, other), name
    assert fast.warnings == slow.warnings
    if text.startswith("log"):  # a fast path that dropped the scans would lose these
        assert fast.warnings
    _same(x, x_before)
    _same(y, y_before)


def test_row_three_pinned():
    """Row 3's gradient is the hand-written formula's, bit for bit, at finite points."""
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=N), rng.normal(size=N)
    r = _run(parse("x*sin(y)+y**2"), x, y)
    s = np.sin(y)
    _same(r.value, x * s + np.square(y))
    _same(r.grad["x"], s)
    _same(r.grad["y"], 2.0 * y + x * np.cos(y))
    assert r.warnings is None


def test_power_one_is_exact():
    """x**2's derivative skips the power a**1: NumPy's power by 1 is the identity, bit for
    bit, on every float (payloads of nan, subnormals and -0.0 included)."""
    rng = np.random.default_rng(9)
    for dtype, ints in ((np.float64, np.uint64), (np.float32, np.uint32)):
        a = rng.integers(0, np.iinfo(ints).max, size=200_000, dtype=ints).view(dtype)
        a = np.concatenate([a, np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dtype=dtype)])
        with np.errstate(all="ignore"):
            _same(np.power(a, np.asarray(1.0, dtype=dtype)), a)
            _same(np.power(a, dtype(1.0)), a)


@pytest.mark.parametrize(
    ("text", "exponent"),
    [("x**0.5", 0.5), ("x**-1.5", -1.5), ("x**2", 2.0), ("x**0", 0.0), ("x**y", None)],
)
def test_pow_kink_rows(text, exponent):
    """The pow kink's exponent test first: the rows that warn are those where the whole
    test holds, x == 0 with an exponent below 1 and not 0, and only those."""
    program = parse(text)
    x = np.abs(_column(10))
    x[::7] = 0.0
    y = np.where(np.arange(N) % 3 == 0, 0.5, 2.0)
    p = y if exponent is None else np.full(N, exponent)
    want = set(np.flatnonzero((x == 0) & (p < 1) & (p != 0)).tolist())
    got = _run(program, x, y).warnings or {}
    kinked = {i for i, ms in got.items() if any(m.startswith("x**p") for m in ms)}
    assert kinked == want


# ---------------------------------------------------------------------------
# The Hessian's tangent sweep (bench/run.py row 6) against the generic one
# ---------------------------------------------------------------------------

HESSIANS = [
    "sum(sin(x[:-1])*x[1:]) + sum(x**4)",  # bench/run.py row 6
    "sum(x**2*sin(x))",
    "sum(exp(x) * x) + sum(x)**2",
    "sum(x[1:] * x[:-1] * cos(x[:-1]))",
    "sum(log(x) * x**3)",  # nan where x < 0, -inf at 0
    "sum(x*x*x) + sum(exp(x)*exp(x))",  # one tangent read twice by one op: never overwritten
    "u = x**2; sum(u*u + u*sin(u))",  # an intermediate read by several ops
    "sum(x*y) + sum(x**2*y) + sum(y**4)",  # two inputs: the blocks and the basis split
]


@pytest.mark.parametrize("text", HESSIANS)
@pytest.mark.parametrize("finite", [True, False])
def test_hessian_is_the_generic_sweep(text, finite, monkeypatch):
    n = 120  # n * n above the threshold
    x = np.linspace(-1.0, 1.3, n)
    if not finite:
        x[[3, 50, 77]] = [np.inf, np.nan, 0.0]
    program = ag.parse(text)
    values = {"x": x, "y": x[::-1] * 0.7}
    values = {k: v for k, v in values.items() if k in program.inputs}
    fast = ag.hessian(program, values)
    monkeypatch.setattr(forward, "CHAIN_LOCAL_MIN", 10**18)
    monkeypatch.setattr(rules, "CHAIN_LOCAL_MIN", 10**18)
    slow = ag.hessian(program, values)
    for a in values:
        _same(fast.grad[a], slow.grad[a])
        for b in values:
            _same(fast.hessian[a][b], slow.hessian[a][b])
    _same(fast.value, slow.value)
    assert fast.warnings == slow.warnings


# ---------------------------------------------------------------------------
# matmul's vjp on the host arrays (bench/run.py row 7) against the rule through the ops
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sa", "sb"),
    [((5, 3), (3,)), ((1, 3), (3,)), ((5, 3), (3, 4)), ((5, 3), (3, 1)), ((1, 3), (3, 1))],
)
def test_matrix_vjp_is_the_rule(sa, sb, monkeypatch):
    from autograd_cli.core import tensor
    from autograd_cli.core.autograd import grad
    from autograd_cli.core.ops import products

    rng = np.random.default_rng(11)
    a = tensor(rng.normal(size=sa), requires_grad=True)
    b = tensor(rng.normal(size=sb), requires_grad=True)
    a.data[0, 0], b.data.flat[-1] = -0.0, np.inf  # signed zeros and inf through the products
    gout = tensor(rng.normal(size=np.matmul(a.data, b.data).shape))
    with np.errstate(all="ignore"):
        fast = grad(a @ b, [a, b], grad_outputs=gout)
        monkeypatch.setattr(products, "_host_unrecorded", lambda *t: False)
        slow = grad(a @ b, [a, b], grad_outputs=gout)
    for f, s in zip(fast, slow):
        _same(f.data, s.data)


def test_layer_gradients_pinned():
    """Row 7's gradients are the hand-written formulas', bit for bit."""
    rng = np.random.default_rng(0)
    W, x, b = rng.normal(size=(60, 60)) / 8, rng.normal(size=60), rng.normal(size=60)
    r = ag.grad("sum(tanh(W@x+b))", {"W": W, "x": x, "b": b})
    t = np.tanh(W @ x + b)
    d = 1 - np.square(t)
    _same(r.grad["b"], d)
    _same(r.grad["W"], np.outer(d, x))
    _same(r.grad["x"], W.T @ d[:, None].reshape(60, 1).reshape(60))


def test_scatter_is_zero_plus_g():
    """A basic index's scatter is 0 + g (add.at's), written g + 0: the same bits."""
    from autograd_cli.core.ops.shape import _scatter_forward

    for dtype in (np.float64, np.float32):
        g = _column(14, dtype).reshape(-1, 3)[:, :2].copy()
        for index in ((slice(None), slice(1, None)), (slice(2, None, 3), 0)):
            shape = (g.shape[0], 3) if index[1] != 0 else (3 * g.shape[0] + 2, 3)
            view_shape = np.zeros(shape)[index].shape
            gi = np.resize(g, view_shape).astype(dtype)
            want = np.zeros(shape, dtype=dtype)
            np.add.at(want, index, gi)
            got = _scatter_forward(gi, index, shape)
            _same(got, want)
