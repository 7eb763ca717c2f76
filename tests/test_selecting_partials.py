"""Ops whose partials select (``Op.selects``: relu, clip, maximum/minimum, clamp_min/max).

Where such a partial is 0 the argument takes no gradient at all, even from an infinite or nan
cotangent, as PyTorch's ``where``/``masked_fill`` in their backward: ``sqrt(relu(x))`` at
x < 0 has gradient 0 (sqrt'(0) = inf meets relu'(x) = 0), not 0 * inf = nan.  Checked in
every place the product is taken: reverse mode on scalars and on arrays large enough for
``chain_local``'s in-place path, ``create_graph`` (Hessians), forward mode (one tangent and
the batched directions of ``core/forward.py``), batch rows and generated code; against
PyTorch where it is installed.  A finite product keeps its bits (a negative cotangent times
relu'(x) = 0 is -0.0, as before).
"""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

from autograd_cli import codegen
from autograd_cli.core import forward, grad, hessian, jvp, tensor
from autograd_cli.core.ops.table import OPS

SELECTING = ("relu", "maximum", "minimum", "clamp_min", "clamp_max", "clip")

# (expression, point, gradient, the same in PyTorch): an infinite cotangent meets a 0 partial
CLI_CASES = [
    ("sqrt(relu(x))", {"x": -1}, {"x": 0.0}, lambda t, x: t.sqrt(t.relu(x))),
    ("log(relu(x))", {"x": -2}, {"x": 0.0}, lambda t, x: t.log(t.relu(x))),
    ("sqrt(clip(x, 0, 1))", {"x": -1}, {"x": 0.0}, lambda t, x: t.sqrt(t.clamp(x, 0, 1))),
    # a constant bound: clamp_min and clamp_max
    ("sqrt(maximum(x, 0))", {"x": -1}, {"x": 0.0}, lambda t, x: t.sqrt(t.clamp_min(x, 0))),
    ("sqrt(-minimum(x, 0))", {"x": 3}, {"x": 0.0}, lambda t, x: t.sqrt(-t.clamp_max(x, 0))),
    (
        "sqrt(maximum(x, y))",
        {"x": -1, "y": 0},
        {"x": 0.0, "y": math.inf},
        lambda t, x, y: t.sqrt(t.maximum(x, y)),
    ),
    (
        "sqrt(-minimum(x, y))",
        {"x": 1, "y": 0},
        {"x": 0.0, "y": math.inf},  # sqrt(-0.0): sqrt' is -inf there
        lambda t, x, y: t.sqrt(-t.minimum(x, y)),
    ),
    (
        "sqrt(clip(x, lo, hi))",
        {"x": -1, "lo": 0, "hi": 2},
        {"x": 0.0, "lo": math.inf, "hi": 0.0},
        lambda t, x, lo, hi: t.sqrt(t.clamp(x, lo, hi)),
    ),
]
IDS = [c[0] for c in CLI_CASES]


def test_the_selecting_ops_are_the_ones_declared():
    assert {n for n, op in OPS.items() if op.selects} == set(SELECTING)


@pytest.mark.parametrize(("text", "point", "expected", "_"), CLI_CASES, ids=IDS)
def test_a_zero_partial_passes_no_infinite_cotangent_in_the_cli(cli, text, point, expected, _):
    args = [a for k, v in point.items() for a in (f"--{k}", str(v))]
    out = cli("grad", text, *args, "--json").json
    shown = {k: (float(v) if isinstance(v, str) else v) for k, v in out["grad"].items()}
    assert shown == expected


@pytest.mark.parametrize(("text", "point", "expected", "same"), CLI_CASES, ids=IDS)
def test_as_pytorch(torch, text, point, expected, same):
    xs = [torch.tensor(float(v), dtype=torch.float64, requires_grad=True) for v in point.values()]
    got = torch.autograd.grad(same(torch, *xs), xs)
    assert dict(zip(point, map(float, got))) == expected


@pytest.mark.parametrize("n", [3, 600])  # 600: chain_local's in-place path (>= 512 entries)
def test_arrays_on_both_paths_of_chain_local(n):
    data = np.linspace(-2.0, 2.0, n)
    data[0] = -1.0  # relu(x) = 0 there
    x = tensor(data, requires_grad=True)
    (gx,) = grad((x.relu().sqrt() * 3.0).sum(), [x])
    with np.errstate(divide="ignore"):
        expected = np.where(data > 0, 1.5 / np.sqrt(np.maximum(data, 0)), 0.0)
    assert not np.isnan(gx.numpy()).any()
    np.testing.assert_allclose(gx.numpy(), expected, rtol=1e-15, atol=0)


def test_a_finite_product_keeps_its_bits():
    # -1 * relu'(-1) = -0.0: only inf or nan products are mended
    x = tensor([-1.0, 2.0], requires_grad=True)
    (gx,) = grad((-x.relu()).sum(), [x])
    assert math.copysign(1.0, gx.numpy()[0]) == -1.0
    assert gx.numpy()[1] == -1.0


def test_nan_cotangent_is_selected_away_too():
    # 0 * inf = nan reaches relu as its cotangent where x < 0: PyTorch's where gives 0
    x = tensor([-1.0, 4.0], requires_grad=True)
    (gx,) = grad((x.relu().sqrt() * x.relu().sqrt()).sum(), [x])
    np.testing.assert_array_equal(gx.numpy(), [0.0, 1.0])


def test_second_order_through_a_selecting_op():
    # create_graph=True: the recorded product is mended the same way; d2/dx2 x**2 is 2
    h = hessian(lambda x: x.relu().sqrt() + x * x, tensor(-1.0))
    assert float(h.numpy()) == 2.0


def test_forward_mode_an_infinite_tangent_meets_a_zero_partial():
    # relu(sqrt(x)) at x = 0: sqrt's tangent is inf, relu'(0) = 0 (PyTorch's forward AD: 0)
    for run in (jvp, forward.jvp):
        out, dout = run(lambda x: x.sqrt().relu() + x, tensor([0.0, 4.0]), tensor([1.0, 1.0]))
        np.testing.assert_array_equal(dout.numpy(), [1.0, 1.25])


@pytest.mark.parametrize("n", [2, 600])  # 600: the in-place product (>= 512 numbers)
def test_forward_mode_batched_directions(n):
    # core/forward.py's own elementwise path: two directions in one sweep; relu(sqrt(x)) at
    # x = 0 meets sqrt's infinite tangent with relu'(0) = 0
    x = np.full(n, 4.0)
    x[0] = 0.0
    directions = np.zeros((2, n))
    directions[0] = 1.0
    directions[1, 1] = 1.0
    _, out = forward.jvp(lambda v: v.sqrt().relu(), tensor(x), tensor(directions), batch=2)
    expected = directions * np.where(x > 0, 0.25, 0.0)
    np.testing.assert_array_equal(out.numpy(), expected)


def test_batch_rows(cli, tmp_path):
    lines = tmp_path / "in.jsonl"
    lines.write_text(
        '{"expr": "sqrt(relu(x))", "vars": {"x": -1}}\n{"expr": "sqrt(relu(x))", "vars": {"x": 4}}\n'
    )
    out = cli("batch", str(lines), "--json")
    grads = [r["grad"]["x"] for r in out.docs]
    assert grads == [0.0, 0.25]


@pytest.mark.parametrize("target", ["numpy"])
def test_generated_code(tmp_path, target):
    text = codegen("sqrt(relu(x)) + sqrt(clip(x, 0, 1))", {"x": 0.5}, target=target)
    path = tmp_path / "gen.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("gen_selects", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with np.errstate(all="ignore"):
        value, gx = module.f(np.array([-1.0, 4.0]))
    np.testing.assert_array_equal(gx, [0.0, 0.25])
