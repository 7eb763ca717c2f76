"""The engine's fast paths (issue 12) give what the plain paths give, bit for bit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autograd_cli as ag
from autograd_cli.core import backend, no_grad, recording, tensor
from autograd_cli.core.ops import OPS, _scatter_forward


def test_quiet_silences_and_restores_the_error_state():
    before = np.geterr()
    token = backend.quiet_enter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert np.isinf(np.float64(1.0) / np.float64(0.0))
    finally:
        backend.quiet_exit(token)
    assert np.geterr() == before
    with np.errstate(divide="raise"):  # a state the caller set: still silenced, then restored
        token = backend.quiet_enter()
        try:
            assert np.isinf(np.divide(1.0, np.zeros(3))).all()
        finally:
            backend.quiet_exit(token)
        with pytest.raises(FloatingPointError):
            np.divide(1.0, np.zeros(3))


@pytest.mark.parametrize("size", [0, 1, 5, 3000])
@pytest.mark.parametrize("special", [None, np.inf, -np.inf, np.nan, 1e300, -1e200])
def test_all_finite_matches_isfinite(size, special):
    a = np.random.default_rng(size).normal(size=size)
    if special is not None and size:
        a[size // 2] = special
    with np.errstate(over="ignore"):  # 1e300 as float32 is inf: a case of its own
        single = a.astype(np.float32)
    for arr in (a, single, a[::2], a.reshape(1, -1)):
        assert backend.all_finite(arr) == bool(np.isfinite(arr).all())


@pytest.mark.parametrize("special", [0.0, -0.0, 1e-200, np.inf, np.nan])
def test_outer_vjp_is_matmuls_bits(special):
    rng = np.random.default_rng(0)
    g = rng.normal(size=(4, 1))
    x = rng.normal(size=(1, 3))
    g[1, 0] = special
    x[0, 2] = -1e-200 if special == 1e-200 else -x[0, 2]
    with np.errstate(all="ignore"):
        want = np.matmul(g, x)
    W = tensor(rng.normal(size=(4, 3)), requires_grad=True)
    v = tensor(x.reshape(3))
    y = W @ v
    y.backward(tensor(g.reshape(4)))
    assert W.grad.numpy().tobytes() == want.tobytes()


@pytest.mark.parametrize(
    "index",
    [(slice(1, None),), (slice(None, -1),), (slice(None, None, 2),), (1,), (None, slice(0, 2))],
)
def test_scatter_of_a_basic_index_is_add_at(index):
    g_full = np.random.default_rng(1).normal(size=(5,))
    g = g_full[index]
    g = np.where(np.arange(g.size).reshape(g.shape) == 0, -0.0, g)
    want = np.zeros((5,))
    np.add.at(want, index, g)
    got = _scatter_forward(np.asarray(g), index, (5,))
    assert np.asarray(got).tobytes() == want.tobytes()


def test_domain_warnings_of_a_masked_intermediate_and_of_inputs():
    # log(-1) is nan but where() hides it from the output: it still warns, once.
    r = ag.grad("where(x > 0, log(x), 0*x) + log(x)", {"x": -1.0})
    assert r.warnings[0].startswith("log gave nan")
    # a non-finite input is not a new domain problem: no warning for the ops it reaches
    assert ag.evaluate("x + 1", {"x": float("inf")}).warnings == []
    ev = recording.evaluate(ag.parse("sum(v*2) + 1/y"), {"v": [1.0, np.inf], "y": 0.0})
    assert ev.warnings == [
        "div gave inf (a pole, division by zero or overflow; IEEE arithmetic, not an error)"
    ]


def test_python_number_operands_keep_the_tensor_dtype():
    with backend.using(dtype="float32"):
        x = tensor(1.5, requires_grad=True)
        y = x * 3 + 0.1
        assert y.data.dtype == np.float32
        y.backward()
        assert x.grad.data.dtype == np.float32
    with no_grad():
        z = OPS["add"].forward(np.float64(1.0), np.float64(2.0))
    assert z == 3.0
