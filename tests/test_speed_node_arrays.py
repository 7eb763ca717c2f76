"""The rules' array form (issue 25): one derivative rule, computed on host arrays when
backward records nothing, gives the bits its Tensor form gives.

Backward without ``create_graph`` hands each op whose rules take arrays (``Op.arrays``) its
cotangent as an array and gets arrays back; with ``create_graph`` the same rule runs on
Tensors and records.  For every such op, on values with zeros, signed zeros, infinities and
nan, in float64 and float32, as 0-d arrays, NumPy numbers and vectors, both forms are run on
the same Node and must agree bit for bit, in dtype and in kind (a NumPy number or an array).
"""

from __future__ import annotations

import numpy as np
import pytest

from autograd_cli.core import backend
from autograd_cli.core.autograd import enable_grad, grad, no_grad
from autograd_cli.core.tensor import OPS, Tensor, apply, tensor

SPECIAL = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -3.7, 1e-300, np.inf, -np.inf, np.nan]
ARRAY_OPS = sorted(name for name, op in OPS.items() if op.arrays)


def _key(g):
    if g is None:
        return None
    data = g.data if isinstance(g, Tensor) else g
    return type(data).__name__, str(data.dtype), np.asarray(data).tobytes()


def _leaf(value, dtype, kind):
    data = np.asarray(value, dtype=dtype)
    if kind == "number":
        data = data[()]  # a NumPy number, as the engine's scalar ops make
    t = Tensor._wrap(data)
    t.requires_grad = True
    return t


def _both_forms(node, g):
    """The node's vjp on the array ``g`` (nothing recorded) and on a Tensor of it (recorded)."""
    token = backend.quiet_enter()
    try:
        with no_grad():
            arrays = node.op.vjp(node, g)
        with enable_grad():
            tensors = node.op.vjp(node, Tensor._wrap(g))
    finally:
        backend.quiet_exit(token)
    return [_key(a) for a in arrays], [_key(t) for t in tensors]


def test_the_ops_taking_arrays_are_the_elementwise_ones():
    assert {"add", "sub", "neg", "mul", "div", "pow", "sin", "sqrt", "abs", "clip"} <= set(
        ARRAY_OPS
    )
    assert "matmul" not in ARRAY_OPS and "sum" not in ARRAY_OPS


@pytest.mark.parametrize("name", ARRAY_OPS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", ["vector", "number"])
def test_array_form_gives_the_tensor_forms_bits(name, dtype, kind):
    op = OPS[name]
    arity = op.arity or 1
    if kind == "vector":
        grid = np.meshgrid(*[np.array(SPECIAL)] * arity, indexing="ij")
        points = [tuple(axis.ravel() for axis in grid)]
    else:
        points = [tuple([v] * arity) for v in SPECIAL] + [
            tuple(SPECIAL[(i + k) % len(SPECIAL)] for k in range(arity)) for i in range(9)
        ]
    checked = 0
    for point in points:
        if name == "polygamma":  # an order first: a small whole number
            point = (np.abs(np.nan_to_num(np.round(point[0]), posinf=2, neginf=1)) % 3,) + point[1:]
        leaves = [_leaf(v, dtype, kind) for v in point]
        with backend.errstate():
            out = apply(op, *leaves)
        if out.grad_fn is None:
            continue
        g = np.asarray(np.linspace(-1.5, 2.0, out.data.size).reshape(out.data.shape), dtype)
        for seed in (g, np.zeros_like(g)):  # a zero cotangent: chain's 0 * inf mending
            if kind == "number":
                seed = seed[()]
            arrays, tensors = _both_forms(out.grad_fn, seed)
            assert arrays == tensors, (name, point)
            checked += 1
    assert checked


def test_backward_hands_gradients_of_their_own_as_tensors():
    x = tensor([1.0, 2.0], requires_grad=True)
    y = x + x  # add hands both inputs the same cotangent
    (gx,) = grad(y.sum(), x)
    assert isinstance(gx, Tensor) and not gx.requires_grad
    z = tensor(3.0, requires_grad=True)
    w = tensor(2.0, requires_grad=True)
    a, b = grad(z * w + w, [z, w])  # mul's and add's cotangents, made Tensors at the end
    assert a is not b and (a.item(), b.item()) == (2.0, 4.0)
    assert isinstance(a.data, np.float64) == isinstance((z * w).data, np.float64)


def test_a_rule_on_arrays_outside_every_walk_keeps_ieee_semantics_silently(recwarn):
    # explain's numeric vjp hands the rule a Tensor with nothing recorded: its array form
    # computes 1/(2*sqrt(0)) with NumPy directly, which must be inf without a RuntimeWarning
    # (the Tensor form's ops each entered IEEE semantics; the array form enters them once)
    import warnings

    from autograd_cli import explain

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ex = explain("sqrt(x)*x", {"x": 0})
    assert ex.gradient["x"] == 0.0
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_explain_at_an_infinite_partial_prints_no_numpy_warning():
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "autograd_cli", "explain", "sqrt(x)*x", "--x", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert "RuntimeWarning" not in r.stderr and "Warning:" not in r.stderr, r.stderr
