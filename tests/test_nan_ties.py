"""max and min where a NaN is involved follow PyTorch's gradients (issue 11).

Full reductions share the gradient among the NaNs (evenly_distribute_backward), a
reduction along an axis gives NaN weights in a NaN slice (amax/amin backward), and the
two-argument max/min give the whole gradient to both sides when they are unordered
(maximum/minimum backward). The expected numbers are PyTorch 2.13's; where torch is
installed it is asked too.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from autograd_cli import grad

NAN = math.nan

CASES = [
    # (expression, values, expected gradients)
    ("max(x)", {"x": [1.0, NAN, 3.0]}, {"x": [0.0, 1.0, 0.0]}),
    ("min(x)", {"x": [1.0, NAN, 3.0]}, {"x": [0.0, 1.0, 0.0]}),
    ("max(x)", {"x": [NAN, NAN, 3.0]}, {"x": [0.5, 0.5, 0.0]}),
    ("min(x)", {"x": [2.0, NAN, 2.0, NAN]}, {"x": [0.0, 0.5, 0.0, 0.5]}),
    ("max(x)", {"x": [2.0, 1.0, 2.0]}, {"x": [0.5, 0.0, 0.5]}),  # an ordinary tie
    ("sum(max(x, axis=0))", {"x": [[1.0, NAN], [NAN, 2.0]]}, {"x": [[NAN, NAN], [NAN, NAN]]}),
    ("sum(max(x, axis=0))", {"x": [[1.0, 5.0], [3.0, 2.0]]}, {"x": [[0.0, 1.0], [1.0, 0.0]]}),
    ("max(x, y)", {"x": NAN, "y": 1.0}, {"x": 1.0, "y": 1.0}),
    ("max(x, y)", {"x": 1.0, "y": NAN}, {"x": 1.0, "y": 1.0}),
    ("min(x, y)", {"x": NAN, "y": NAN}, {"x": 1.0, "y": 1.0}),
    ("max(x, y)", {"x": 2.0, "y": 2.0}, {"x": 0.5, "y": 0.5}),
    ("min(x, y)", {"x": 1.0, "y": 2.0}, {"x": 1.0, "y": 0.0}),
    (
        "sum(maximum(x, y))",
        {"x": [NAN, 1.0, 3.0], "y": [2.0, NAN, 1.0]},
        {"x": [1.0, 1.0, 1.0], "y": [1.0, 1.0, 0.0]},
    ),
    (
        "sum(minimum(x, y))",
        {"x": [NAN, 1.0, 3.0], "y": [2.0, NAN, 1.0]},
        {"x": [1.0, 1.0, 0.0], "y": [1.0, 1.0, 1.0]},
    ),
]


def _same(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


@pytest.mark.parametrize("expr, values, expected", CASES)
def test_nan_and_ties_follow_pytorch(expr, values, expected):
    r = grad(expr, values)
    for name, want in expected.items():
        assert _same(r.grad[name], want), (expr, name, r.grad[name], want)


def _torch_grads(torch, expr, values):
    ts = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in values.items()}
    x, y = ts.get("x"), ts.get("y")
    out = {
        "max(x)": lambda: x.max(),
        "min(x)": lambda: x.min(),
        "sum(max(x, axis=0))": lambda: x.amax(dim=0).sum(),
        "max(x, y)": lambda: torch.maximum(x, y),
        "min(x, y)": lambda: torch.minimum(x, y),
        "sum(maximum(x, y))": lambda: torch.maximum(x, y).sum(),
        "sum(minimum(x, y))": lambda: torch.minimum(x, y).sum(),
    }[expr]()
    out.backward()
    return {k: t.grad.tolist() for k, t in ts.items()}


@pytest.mark.parametrize("expr, values, expected", CASES)
def test_the_expected_numbers_are_pytorchs(torch, expr, values, expected):
    got = _torch_grads(torch, expr, values)
    for name, want in expected.items():
        assert _same(got[name], want), (expr, name, got[name], want)
