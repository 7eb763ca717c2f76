"""The Tensor API (core/tensor.py) and reverse mode (core/autograd.py), used as a library.

Each test first checks the engine against a closed form (d/dx x**3 = 3x**2, d sin = cos,
NumPy values, the exact error kind and message), so the file checks right answers where
torch is not installed; then, where PyTorch is available (the ``torch_or_none`` fixture:
torch, or None where it is missing, except in CI, which promises torch with
AUTOGRAD_CLI_REQUIRE_TORCH=1 and then fails without it), the same computation in float64
PyTorch: values, gradients, ``grad_fn`` names, graph structure (``next_functions``), the
printed form, grad mode (thread-local too), and the kind and message of each error (the
engine's errors subclass ``RuntimeError`` as PyTorch's do, most with PyTorch's own words).

Where the project's names differ from PyTorch's by design (reflected ``2 - x`` and ``2 / x``,
``norm``, indices mixing kinds, float indices), only values and gradients are compared.
"""

from __future__ import annotations

import gc
import math
import os
import threading

import numpy as np
import pytest

from autograd_cli.core import (
    OPS,
    GradError,
    NonScalarOutputError,
    ShapeError,
    Tensor,
    apply,
    backward,
    enable_grad,
    grad,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
    tensor,
    topological_nodes,
)
from autograd_cli.core.ops import Op, broadcast_to

FREED = "Trying to backward through the graph a second time"

X = [0.3, 0.7, -0.2]
M = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
A = [0.5, 1.25, 2.0]
B = [1.5, 0.75, 3.0]


@pytest.fixture
def torch_or_none():
    """PyTorch as a second oracle, or None where it is not installed (the closed-form checks
    still run); with AUTOGRAD_CLI_REQUIRE_TORCH set (CI), a missing torch fails the test."""
    if os.environ.get("AUTOGRAD_CLI_REQUIRE_TORCH"):
        import torch as module

        return module
    try:
        import torch as module
    except ImportError:
        return None
    return module


def T(torch, data, requires_grad=False):
    return torch.tensor(data, dtype=torch.float64, requires_grad=requires_grad)


def tname(node):
    return type(node).__name__


def close(ours, theirs, rtol=1e-12, atol=1e-14):
    """Our Tensor (or None) against a torch tensor (or None): shape and values."""
    if theirs is None:
        assert ours is None
        return
    assert ours is not None
    want = theirs.detach().numpy()
    assert ours.shape == tuple(want.shape)
    np.testing.assert_allclose(ours.numpy(), want, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------
# Grad mode
# ---------------------------------------------------------------------------


def test_no_grad_records_nothing_and_restores_the_mode(torch_or_none):
    x = tensor(X, requires_grad=True)
    with no_grad():
        assert is_grad_enabled() is False
        y = x * 2
    assert is_grad_enabled() is True
    assert y.requires_grad is False and y.grad_fn is None and y.is_leaf
    np.testing.assert_array_equal(y.numpy(), [0.6, 1.4, -0.4])
    torch = torch_or_none
    if torch is None:
        return
    with torch.no_grad():
        ty = T(torch, X, True) * 2
    assert (ty.requires_grad, ty.grad_fn, ty.is_leaf) == (False, None, True)


def test_grad_mode_is_restored_when_the_block_raises():
    with pytest.raises(ZeroDivisionError):
        with no_grad():
            raise ZeroDivisionError
    assert is_grad_enabled() is True
    with no_grad():
        with pytest.raises(KeyError):
            with enable_grad():
                assert is_grad_enabled() is True
                raise KeyError("boom")
        assert is_grad_enabled() is False
    assert is_grad_enabled() is True


def test_enable_grad_inside_no_grad_records_again(torch_or_none):
    x = tensor(2.0, requires_grad=True)
    with no_grad():
        with enable_grad():
            y = x**3
        z = x**3
    assert y.grad_fn.name() == "PowBackward0" and z.grad_fn is None
    y.backward()
    assert x.grad.item() == 3 * 2.0**2  # d/dx x**3 = 3x**2
    torch = torch_or_none
    if torch is None:
        return
    tx = T(torch, 2.0, True)
    with torch.no_grad():
        with torch.enable_grad():
            ty = tx**3
        tz = tx**3
    assert tname(ty.grad_fn) == "PowBackward0" and tz.grad_fn is None
    ty.backward()
    close(x.grad, tx.grad)


def test_set_grad_enabled_switches_recording(torch_or_none):
    x = tensor(X, requires_grad=True)
    try:
        set_grad_enabled(False)
        off = x.exp()
        set_grad_enabled(True)
        on = x.exp()
    finally:
        set_grad_enabled(True)
    assert off.requires_grad is False and off.grad_fn is None
    assert on.requires_grad is True and on.grad_fn.name() == "ExpBackward0"
    torch = torch_or_none
    if torch is None:
        return
    try:
        torch.set_grad_enabled(False)
        toff = T(torch, X, True).exp()
    finally:
        torch.set_grad_enabled(True)
    assert toff.requires_grad is False
    assert tname(T(torch, X, True).exp().grad_fn) == "ExpBackward0"


def test_grad_mode_is_per_thread(torch_or_none):
    # A new thread starts in grad mode whatever the spawning thread does (as in torch).
    torch = torch_or_none
    seen = []
    with no_grad():
        worker = threading.Thread(target=lambda: seen.append(is_grad_enabled()))
        worker.start()
        worker.join()
        assert is_grad_enabled() is False
    assert seen == [True]
    if torch is None:
        return
    with torch.no_grad():
        worker = threading.Thread(target=lambda: seen.append(torch.is_grad_enabled()))
        worker.start()
        worker.join()
    assert seen == [True, True]


# ---------------------------------------------------------------------------
# Construction and metadata
# ---------------------------------------------------------------------------


def test_new_tensor_is_a_float64_leaf(torch_or_none):
    t = tensor([1, 2, 3], name="v")  # integers become the default float dtype (float64)
    assert t.dtype == np.float64 and t.name == "v"
    assert t.is_leaf and t.requires_grad is False and t.grad is None and t.grad_fn is None
    a = tensor(M)
    assert (a.shape, a.ndim, a.size, len(a)) == ((2, 3), 2, 6, 2)
    assert a.tolist() == M
    np.testing.assert_array_equal(a.numpy(), np.array(M))
    torch = torch_or_none
    if torch is None:
        return
    ta = T(torch, M)
    assert (tuple(ta.shape), ta.dim(), ta.numel(), len(ta)) == ((2, 3), 2, 6, 2)
    assert ta.tolist() == M


def test_float_dtype_of_the_data_is_kept():
    f32 = tensor(np.array([1.5, 2.5], dtype=np.float32))
    assert f32.dtype == np.float32
    assert tensor(np.array([1, 2], dtype=np.int64)).dtype == np.float64
    assert tensor([1.0, 2.0], dtype=np.float32).dtype == np.float32
    assert Tensor(f32).dtype == np.float32  # wrapping a Tensor keeps its float dtype


@pytest.mark.parametrize(
    "data,kind,message",
    [
        (None, RuntimeError, "Could not infer dtype of NoneType"),
        ([1.0, None], RuntimeError, "Could not infer dtype of NoneType"),
        ([[1.0, 2.0], [3.0, "x"]], TypeError, None),
        ("a", TypeError, None),
    ],
    ids=["None", "None inside", "str inside", "str"],
)
def test_data_that_is_not_numbers_is_refused(torch_or_none, data, kind, message):
    # PyTorch's kinds (and for None its message); a str is a TypeError in both engines.
    with pytest.raises(kind) as ours:
        tensor(data)
    if message is not None:
        assert str(ours.value) == message
    else:
        assert "str" in str(ours.value)
    torch = torch_or_none
    if torch is not None:
        with pytest.raises(kind) as theirs:
            torch.tensor(data)
        if message is not None:
            assert str(theirs.value) == message


def test_python_int_beyond_int64_is_a_number():
    # Python numbers become the default float dtype: tensor(3) is 3.0, so tensor(2**70) is
    # float(2**70), exactly as a constant of the same size is inside an expression.
    big = 2**70
    x = tensor([1.0, 2.0])
    np.testing.assert_array_equal((x * big).numpy(), [float(big), 2 * float(big)])
    assert tensor(big).item() == float(big)
    np.testing.assert_array_equal(tensor([1, big]).numpy(), [1.0, float(big)])


def test_wrapping_a_tensor_makes_an_unrelated_leaf():
    x = tensor(X, requires_grad=True)
    y = x * 3
    w = Tensor(y)
    assert w.is_leaf and w.requires_grad is False and w.grad_fn is None
    np.testing.assert_allclose(w.numpy(), np.array(X) * 3)
    leaf = Tensor(y, requires_grad=True)
    (leaf * leaf).sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), 2 * np.array(X) * 3)  # d sum(w^2) = 2w
    assert x.grad is None  # nothing flowed back into y's graph


def test_scalar_conversions(torch_or_none):
    torch = torch_or_none
    for value in (2.5, 0.0, -1.0):
        assert tensor(value).item() == float(tensor([value])) == value
        assert bool(tensor(value)) is bool(tensor([[value]])) is (value != 0)
        if torch is not None:
            assert T(torch, value).item() == float(T(torch, [value])) == value
            assert bool(T(torch, value)) is (value != 0)


def test_item_of_several_elements(torch_or_none):
    with pytest.raises(ShapeError) as ours:
        tensor([1.0, 2.0]).item()
    message = "a Tensor with 2 elements cannot be converted to Scalar"
    assert str(ours.value) == message and isinstance(ours.value, RuntimeError)
    with pytest.raises(ShapeError, match=message):
        float(tensor([1.0, 2.0]))
    torch = torch_or_none
    if torch is not None:
        with pytest.raises(RuntimeError) as theirs:
            T(torch, [1.0, 2.0]).item()
        assert str(theirs.value) == message


def test_bool_of_several_elements_is_ambiguous(torch_or_none):
    with pytest.raises(ShapeError, match="ambiguous"):
        bool(tensor([1.0, 2.0]))
    torch = torch_or_none
    if torch is not None:
        with pytest.raises(RuntimeError, match="ambiguous"):
            bool(T(torch, [1.0, 2.0]))


def test_len_of_a_0d_tensor(torch_or_none):
    with pytest.raises(TypeError) as ours:
        len(tensor(1.0))
    assert str(ours.value) == "len() of a 0-d tensor"
    torch = torch_or_none
    if torch is not None:
        with pytest.raises(TypeError) as theirs:
            len(T(torch, 1.0))
        assert str(theirs.value) == str(ours.value)


def test_tensors_hash_by_identity(torch_or_none):
    a, b = tensor(1.0), tensor(1.0)
    table = {a: "a", b: "b"}
    assert table[a] == "a" and table[b] == "b" and len(table) == 2
    torch = torch_or_none
    if torch is not None:
        assert len({T(torch, 1.0): 0, T(torch, 1.0): 1}) == 2


def test_repr_is_pytorchs(torch_or_none):
    x = tensor(X, requires_grad=True)
    cases = [
        (x, "tensor([ 0.3000,  0.7000, -0.2000], requires_grad=True)"),
        (x * 2, "tensor([ 0.6000,  1.4000, -0.4000], grad_fn=<MulBackward0>)"),
        (tensor(0.1), "tensor(0.1000)"),
        (tensor(2.0), "tensor(2.)"),
    ]
    assert [repr(t) for t, _ in cases] == [text for _, text in cases]
    assert repr(tensor([1.0, 2.0], dtype=np.float32)) == "tensor([1., 2.], dtype=float32)"
    torch = torch_or_none
    if torch is None:
        return
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # torch then prints float64 without a dtype=
    try:
        tx = torch.tensor(X, requires_grad=True)
        theirs = [tx, tx * 2, torch.tensor(0.1), torch.tensor(2.0)]
        assert [repr(t) for t in theirs] == [text for _, text in cases]
    finally:
        torch.set_default_dtype(previous)


# ---------------------------------------------------------------------------
# detach, requires_grad_, zero_
# ---------------------------------------------------------------------------


def test_detach_cuts_the_graph(torch_or_none):
    x = tensor(X, requires_grad=True)
    d = (x * 2).detach()
    assert d.is_leaf and d.requires_grad is False and d.grad_fn is None
    np.testing.assert_allclose(d.numpy(), 2 * np.array(X))
    (x * x.detach()).sum().backward()  # y = x * stopgrad(x): dy/dx = x, not 2x
    np.testing.assert_allclose(x.grad.numpy(), X)
    torch = torch_or_none
    if torch is None:
        return
    tx = T(torch, X, True)
    (tx * tx.detach()).sum().backward()
    close(x.grad, tx.grad)


def test_requires_grad_toggles_a_leaf(torch_or_none):
    x = tensor(X)
    assert x.requires_grad_() is x and x.requires_grad is True
    assert (x * 2).grad_fn.name() == "MulBackward0"
    assert x.requires_grad_(False) is x
    assert (x * 2).grad_fn is None and (x * 2).requires_grad is False
    torch = torch_or_none
    if torch is not None:
        tx = T(torch, X)
        assert tx.requires_grad_() is tx and tname((tx * 2).grad_fn) == "MulBackward0"


def test_requires_grad_of_a_non_leaf(torch_or_none):
    x = tensor(X, requires_grad=True)
    with pytest.raises(GradError) as ours:
        (x * 2).requires_grad_(False)
    assert str(ours.value) == "you can only change requires_grad flags of leaf variables."
    torch = torch_or_none
    if torch is not None:
        with pytest.raises(RuntimeError) as theirs:
            (T(torch, X, True) * 2).requires_grad_(False)
        assert str(theirs.value).startswith(str(ours.value))


def test_zero_grad_between_steps(torch_or_none):
    x = tensor(X, requires_grad=True)
    for _ in range(2):
        (x**3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * 3 * np.array(X) ** 2)  # accumulated twice
    assert x.grad.zero_() is x.grad
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0])
    (x**3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.array(X) ** 2)
    torch = torch_or_none
    if torch is None:
        return
    tx = T(torch, X, True)
    for _ in range(2):
        (tx**3).sum().backward()
    tx.grad.zero_()
    (tx**3).sum().backward()
    close(x.grad, tx.grad)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_zero_of_non_finite_entries_gives_zeros(torch_or_none):
    values = [math.inf, -math.inf, math.nan, 2.0]
    ours = tensor(values).zero_()
    torch = torch_or_none
    if torch is not None:
        assert T(torch, values).zero_().tolist() == [0.0] * 4
    np.testing.assert_array_equal(ours.numpy(), np.zeros(4))


# ---------------------------------------------------------------------------
# Operators: values, gradients and grad_fn names
# ---------------------------------------------------------------------------

# (label, function of (a, b) for both engines, closed-form (da, db), node name)
BINARY = [
    ("add", lambda a, b: a + b, lambda a, b: (1 + 0 * a, 1 + 0 * b), "AddBackward0"),
    ("sub", lambda a, b: a - b, lambda a, b: (1 + 0 * a, -1 + 0 * b), "SubBackward0"),
    ("mul", lambda a, b: a * b, lambda a, b: (b, a), "MulBackward0"),
    ("div", lambda a, b: a / b, lambda a, b: (1 / b, -a / b**2), "DivBackward0"),
    ("pow", lambda a, b: a**b, lambda a, b: (b * a ** (b - 1), a**b * np.log(a)), "PowBackward1"),
    ("add()", lambda a, b: a.add(b), lambda a, b: (1 + 0 * a, 1 + 0 * b), "AddBackward0"),
    ("mul()", lambda a, b: a.mul(b), lambda a, b: (b, a), "MulBackward0"),
    (
        "pow()",
        lambda a, b: a.pow(b),
        lambda a, b: (b * a ** (b - 1), a**b * np.log(a)),
        "PowBackward1",
    ),
]


@pytest.mark.parametrize("label,fn,partials,node", BINARY, ids=[b[0] for b in BINARY])
def test_binary_operator_between_tensors(torch_or_none, label, fn, partials, node):
    a, b = tensor(A, requires_grad=True), tensor(B, requires_grad=True)
    y = fn(a, b)
    assert y.grad_fn.name() == node
    plain = {"add()": "add", "mul()": "mul", "pow()": "pow"}.get(label, label)
    value = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}
    value["pow"] = np.power
    np.testing.assert_allclose(y.numpy(), value[plain](A, B), rtol=1e-15)
    y.sum().backward()
    da, db = partials(np.array(A), np.array(B))
    np.testing.assert_allclose(a.grad.numpy(), da, rtol=1e-14)
    np.testing.assert_allclose(b.grad.numpy(), db, rtol=1e-14)
    torch = torch_or_none
    if torch is None:
        return
    ta, tb = T(torch, A, True), T(torch, B, True)
    ty = fn(ta, tb)
    assert tname(ty.grad_fn) == node
    close(y, ty)
    ty.sum().backward()
    close(a.grad, ta.grad)
    close(b.grad, tb.grad)


# Python number on either side: (label, expression, closed-form d/dx, node name or None
# where torch names its node differently)
SCALAR = [
    ("x+c", lambda x: x + 2.0, lambda x: 1 + 0 * x, "AddBackward0"),
    ("c+x", lambda x: 2.0 + x, lambda x: 1 + 0 * x, "AddBackward0"),
    ("x-c", lambda x: x - 2.0, lambda x: 1 + 0 * x, "SubBackward0"),
    ("c-x", lambda x: 2.0 - x, lambda x: -1 + 0 * x, None),  # torch: RsubBackward1
    ("x*c", lambda x: x * 3.0, lambda x: 3 + 0 * x, "MulBackward0"),
    ("c*x", lambda x: 3.0 * x, lambda x: 3 + 0 * x, "MulBackward0"),
    ("x/c", lambda x: x / 4.0, lambda x: 0.25 + 0 * x, "DivBackward0"),
    ("c/x", lambda x: 4.0 / x, lambda x: -4.0 / x**2, None),  # torch: MulBackward0
    ("x**c", lambda x: x**3.0, lambda x: 3.0 * x**2, "PowBackward0"),
    ("c**x", lambda x: 2.0**x, lambda x: 2.0**x * math.log(2.0), "PowBackward2"),
    ("-x", lambda x: -x, lambda x: -1 + 0 * x, "NegBackward0"),
    ("abs", lambda x: abs(x), np.sign, "AbsBackward0"),
]


@pytest.mark.parametrize("label,fn,deriv,node", SCALAR, ids=[s[0] for s in SCALAR])
def test_operator_with_a_python_number(torch_or_none, label, fn, deriv, node):
    values = [0.5, -1.25, 2.0]
    x = tensor(values, requires_grad=True)
    y = fn(x)
    np.testing.assert_allclose(y.numpy(), fn(np.array(values)), rtol=1e-15)
    if node is not None:
        assert y.grad_fn.name() == node
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), deriv(np.array(values)), rtol=1e-14)
    torch = torch_or_none
    if torch is None:
        return
    tx = T(torch, values, True)
    ty = fn(tx)
    close(y, ty)
    if node is not None:
        assert tname(ty.grad_fn) == node
    ty.sum().backward()
    close(x.grad, tx.grad)


def test_unary_plus_is_the_tensor_itself():
    x = tensor(X, requires_grad=True)
    assert +x is x
    (+x * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_ndarray_on_the_left_defers_to_the_tensor(torch_or_none):
    x = tensor(A, requires_grad=True)
    c, mat = np.array(B), np.array(M)
    y = (c + x) * (c - x) / (c * x)  # every ndarray-on-the-left op is the Tensor's reflected op
    z = mat @ x
    assert isinstance(y, Tensor) and isinstance(z, Tensor)
    assert z.grad_fn.name() == "MvBackward0"
    (y.sum() + z.sum()).backward()
    # (c^2 - x^2)/(c x) = c/x - x/c, so d/dx = -c/x^2 - 1/c; plus the column sums of M.
    a = np.array(A)
    np.testing.assert_allclose(x.grad.numpy(), -c / a**2 - 1 / c + mat.sum(axis=0), rtol=1e-13)
    w = tensor([1.0, 2.0], requires_grad=True)
    v = np.array([3.0, 5.0]) @ tensor([[1.0, 2.0], [3.0, 4.0]]) @ w  # [18, 26] . w
    assert v.item() == 18 * 1.0 + 26 * 2.0
    v.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [18.0, 26.0])
    torch = torch_or_none
    if torch is None:
        return
    tx, tc, tm = T(torch, A, True), T(torch, B), T(torch, M)
    ty = (tc + tx) * (tc - tx) / (tc * tx)
    tz = tm @ tx
    close(y, ty)
    close(z, tz)
    (ty.sum() + tz.sum()).backward()
    close(x.grad, tx.grad)


@pytest.mark.parametrize(
    "sa,sb,node",
    [((2, 3), (3, 2), "MmBackward0"), ((2, 3), (3,), "MvBackward0"), ((3,), (3, 2), None)],
)
def test_matmul_operator_and_method(torch_or_none, sa, sb, node):
    rng = np.random.default_rng(7)
    a0, b0 = rng.standard_normal(sa), rng.standard_normal(sb)
    a, b = tensor(a0, requires_grad=True), tensor(b0, requires_grad=True)
    y = a.matmul(b)
    np.testing.assert_allclose(y.numpy(), a0 @ b0, rtol=1e-13)
    assert (a @ b).grad_fn.name() == y.grad_fn.name()
    if node:
        assert y.grad_fn.name() == node
    y.sum().backward()
    # d sum(a @ b)/da = G b^T and d/db = a^T G for G = ones; an outer product for a vector
    g = np.ones(y.shape)
    np.testing.assert_allclose(a.grad.numpy(), np.outer(g, b0) if b0.ndim == 1 else g @ b0.T)
    np.testing.assert_allclose(b.grad.numpy(), np.outer(a0, g) if a0.ndim == 1 else a0.T @ g)
    torch = torch_or_none
    if torch is None:
        return
    ta, tb = T(torch, a0, True), T(torch, b0, True)
    ty = ta @ tb
    close(y, ty)
    assert tname(ty.grad_fn) == y.grad_fn.name()
    ty.sum().backward()
    close(a.grad, ta.grad)
    close(b.grad, tb.grad)


def test_dot_method(torch_or_none):
    a, b = tensor(A, requires_grad=True), tensor(B, requires_grad=True)
    y = a.dot(b)
    assert y.grad_fn.name() == "DotBackward0"
    assert y.item() == pytest.approx(0.5 * 1.5 + 1.25 * 0.75 + 2.0 * 3.0, rel=1e-15)
    y.backward()
    np.testing.assert_array_equal(a.grad.numpy(), B)  # d(a.b)/da = b
    np.testing.assert_array_equal(b.grad.numpy(), A)
    torch = torch_or_none
    if torch is not None:
        ta, tb = T(torch, A, True), T(torch, B, True)
        ty = ta.dot(tb)
        assert tname(ty.grad_fn) == "DotBackward0"
        close(y, ty)


COMPARISONS = [
    ("lt", lambda a, b: a < b, [1, 0, 0]),
    ("le", lambda a, b: a <= b, [1, 1, 0]),
    ("gt", lambda a, b: a > b, [0, 0, 1]),
    ("ge", lambda a, b: a >= b, [0, 1, 1]),
    ("eq", lambda a, b: a.eq(b), [0, 1, 0]),
    ("ne", lambda a, b: a.ne(b), [1, 0, 1]),
]


@pytest.mark.parametrize("label,fn,expected", COMPARISONS, ids=[c[0] for c in COMPARISONS])
def test_comparisons_give_float_masks_without_a_graph(torch_or_none, label, fn, expected):
    left, right = [1.0, 2.0, 3.0], [2.0, 2.0, 1.0]
    a, b = tensor(left, requires_grad=True), tensor(right, requires_grad=True)
    r = fn(a, b)
    assert r.requires_grad is False and r.grad_fn is None
    assert r.dtype == np.float64  # 0/1 in the inputs' float dtype (torch gives bool)
    np.testing.assert_array_equal(r.numpy(), expected)
    ufunc = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}
    ufunc.update({"eq": np.equal, "ne": np.not_equal})
    np.testing.assert_array_equal(fn(a, 2.5).numpy(), ufunc[label](left, 2.5))
    torch = torch_or_none
    if torch is not None:
        tr = fn(T(torch, left, True), T(torch, right, True))
        assert tr.requires_grad is False and tr.grad_fn is None
        np.testing.assert_array_equal(r.numpy(), tr.numpy().astype(float))


# ---------------------------------------------------------------------------
# Elementwise methods
# ---------------------------------------------------------------------------

# method -> (inputs in its domain, closed-form derivative, torch function if not the method)
UNARY = {
    "sin": ([-0.8, 0.3, 1.1], np.cos, None),
    "cos": ([-0.8, 0.3, 1.1], lambda x: -np.sin(x), None),
    "tan": ([-0.8, 0.3, 1.1], lambda x: 1 / np.cos(x) ** 2, None),
    "asin": ([-0.8, 0.3, 0.6], lambda x: 1 / np.sqrt(1 - x**2), None),
    "acos": ([-0.8, 0.3, 0.6], lambda x: -1 / np.sqrt(1 - x**2), None),
    "atan": ([-0.8, 0.3, 1.1], lambda x: 1 / (1 + x**2), None),
    "sinh": ([-0.8, 0.3, 1.1], np.cosh, None),
    "cosh": ([-0.8, 0.3, 1.1], np.sinh, None),
    "tanh": ([-0.8, 0.3, 1.1], lambda x: 1 / np.cosh(x) ** 2, None),
    "exp": ([-0.8, 0.3, 1.1], np.exp, None),
    "log": ([0.2, 1.3, 4.0], lambda x: 1 / x, None),
    "log2": ([0.2, 1.3, 4.0], lambda x: 1 / (x * math.log(2)), None),
    "log10": ([0.2, 1.3, 4.0], lambda x: 1 / (x * math.log(10)), None),
    "sqrt": ([0.2, 1.3, 4.0], lambda x: 0.5 / np.sqrt(x), None),
    "abs": ([-0.8, 0.3, 1.1], np.sign, None),
    "sign": ([-0.8, 0.3, 1.1], np.zeros_like, None),
    "sigmoid": ([-0.8, 0.3, 1.1], lambda x: np.exp(-x) / (1 + np.exp(-x)) ** 2, None),
    "relu": ([-0.8, 0.3, 1.1], lambda x: (x > 0).astype(float), None),
    "softplus": (
        [-0.8, 0.3, 1.1],
        lambda x: 1 / (1 + np.exp(-x)),
        lambda t, x: t.nn.functional.softplus(x),
    ),
}
VALUES = {
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "relu": lambda x: np.maximum(x, 0),
    "softplus": lambda x: np.log1p(np.exp(x)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_elementwise_method(torch_or_none, name):
    values, deriv, torch_fn = UNARY[name]
    x = tensor(values, requires_grad=True)
    y = getattr(x, name)()
    value = VALUES.get(name, getattr(np, name, None))
    np.testing.assert_allclose(y.numpy(), value(np.array(values)), rtol=1e-14)
    assert y.grad_fn.name() == "".join(p.capitalize() for p in name.split("_")) + "Backward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), deriv(np.array(values)), rtol=1e-13, atol=1e-15)
    torch = torch_or_none
    if torch is None:
        return
    tx = T(torch, values, True)
    ty = torch_fn(torch, tx) if torch_fn else getattr(tx, name)()
    close(y, ty, rtol=1e-14)
    assert tname(ty.grad_fn) == y.grad_fn.name()
    ty.sum().backward()
    close(x.grad, tx.grad, rtol=1e-13)


# ---------------------------------------------------------------------------
# Indexing, transposes, reshape
# ---------------------------------------------------------------------------

# (label, our index, the same index for NumPy/torch, our node name, torch's is the same)
INDICES = [
    ("int", 1, 1, "SelectBackward0", True),
    ("negative", -1, -1, "SelectBackward0", True),
    ("slice", slice(1, None), slice(1, None), "SliceBackward0", True),
    ("int,int", (1, 2), (1, 2), "SelectBackward0", True),
    ("slices", (slice(0, 1), slice(1, 3)), (slice(0, 1), slice(1, 3)), "SliceBackward0", True),
    ("int,slice", (0, slice(1, 3)), (0, slice(1, 3)), "IndexBackward0", False),
    ("None", None, None, "IndexBackward0", False),
    ("Ellipsis,int", (Ellipsis, 0), (Ellipsis, 0), "IndexBackward0", False),
    ("float", 1.0, 1, "SelectBackward0", False),  # an integral float is an integer
    ("0-d tensor", "tensor", 1, "SelectBackward0", False),
]


@pytest.mark.parametrize("label,index,plain,node,same", INDICES, ids=[i[0] for i in INDICES])
def test_getitem(torch_or_none, label, index, plain, node, same):
    x = tensor(M, requires_grad=True)
    if isinstance(index, str):
        index = tensor(1.0)
    y = x[index]
    np.testing.assert_array_equal(y.numpy(), np.array(M)[plain])
    assert y.grad_fn.name() == node
    (y * y).sum().backward()
    expected = np.zeros((2, 3))
    expected[plain] = 2 * np.array(M)[plain]  # d sum(y^2) = 2y at the picked entries
    np.testing.assert_array_equal(x.grad.numpy(), expected)
    torch = torch_or_none
    if torch is None:
        return
    tx = T(torch, M, True)
    ty = tx[plain]
    close(y, ty)
    if same:
        assert tname(ty.grad_fn) == node
    (ty * ty).sum().backward()
    close(x.grad, tx.grad)


@pytest.mark.parametrize("index", [1.5, (0, 0.25), "tensor"])
def test_non_integer_index_is_an_error(index):
    x = tensor(M)
    if index == "tensor":
        index = tensor(1.5)
    with pytest.raises(ShapeError, match=r"^index (1\.5|0\.25) is not an integer$"):
        x.__getitem__(index)


def test_transposes(torch_or_none):
    x = tensor(M, requires_grad=True)
    cases = [(x.T, "PermuteBackward0"), (x.transpose(), "PermuteBackward0")]
    cases.append((x.mT, "TransposeBackward0"))
    for ours, node in cases:
        np.testing.assert_array_equal(ours.numpy(), np.array(M).T)
        assert ours.grad_fn.name() == node
    w = np.arange(6.0).reshape(3, 2)
    (x.T * w).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), w.T)
    torch = torch_or_none
    if torch is None:
        return
    tx = T(torch, M, True)
    assert [tname(tx.T.grad_fn), tname(tx.mT.grad_fn)] == ["PermuteBackward0", "TransposeBackward0"]
    (tx.T * T(torch, w)).sum().backward()
    close(x.grad, tx.grad)


@pytest.mark.parametrize("shape", [(3, 2), ((3, 2),), ([6],), (-1,), (1, 6)])
def test_reshape_spellings(torch_or_none, shape):
    x = tensor(M, requires_grad=True)
    y = x.reshape(*shape)
    target = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    np.testing.assert_array_equal(y.numpy(), np.array(M).reshape(target))
    assert y.grad_fn.name() == "ViewBackward0"
    weights = np.arange(1.0, 7.0).reshape(y.shape)
    (y * weights).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.arange(1.0, 7.0).reshape(2, 3))
    torch = torch_or_none
    if torch is None:
        return
    tx = T(torch, M, True)
    ty = tx.reshape(*target)
    assert tname(ty.grad_fn) == "ViewBackward0"
    (ty * T(torch, weights)).sum().backward()
    close(x.grad, tx.grad)


# ---------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------

R = [[1.0, 3.0, 3.0], [3.0, 0.5, 2.0]]  # ties for max (in rows and overall), positive


def _numpy_reduce(method, a, axis, keepdims):
    if method == "norm":
        return np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdims))
    return getattr(np, method)(a, axis=axis, keepdims=keepdims)


def _torch_reduce(torch, x, method, axis, keepdims):
    if axis is None and not keepdims:
        if method == "norm":
            return torch.linalg.vector_norm(x)
        return getattr(x, method)()
    if method == "prod":  # torch.prod takes one dim: a product over all of them is a flat one
        if isinstance(axis, tuple):
            assert axis == (0, 1) and not keepdims
            return x.reshape(-1).prod(0)
        return x.prod(dim=axis, keepdim=keepdims)
    fn = {"max": torch.amax, "min": torch.amin, "norm": torch.linalg.vector_norm}
    return fn.get(method, getattr(torch, method))(x, dim=axis, keepdim=keepdims)


def _numeric_gradient(f, a, h=1e-6):
    """Central differences in float64 (the reductions are smooth at R away from ties)."""
    out = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        up, down = a.copy(), a.copy()
        up[i] += h
        down[i] -= h
        out[i] = (f(up) - f(down)) / (2 * h)
    return out


@pytest.mark.parametrize("method", ["sum", "mean", "prod", "max", "min", "norm"])
@pytest.mark.parametrize(
    "axis,keepdims", [(None, False), (0, False), (-1, True), (1, False), ([0, 1], False)]
)
def test_reduction_methods(torch_or_none, method, axis, keepdims):
    x = tensor(R, requires_grad=True)
    y = getattr(x, method)(axis=axis, keepdims=keepdims)
    np_axis = tuple(axis) if isinstance(axis, list) else axis
    expected = _numpy_reduce(method, np.array(R), np_axis, keepdims)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-14)
    weights = np.arange(1.0, 1.0 + y.size).reshape(y.shape)
    (y * weights).sum().backward()
    if method not in ("max", "min"):  # smooth at R: central differences
        numeric = _numeric_gradient(
            lambda a: float(np.sum(_numpy_reduce(method, a, np_axis, keepdims) * weights)),
            np.array(R),
        )
        np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-7, atol=1e-8)
    torch = torch_or_none
    if torch is None:
        return
    tx = T(torch, R, True)
    ty = _torch_reduce(torch, tx, method, np_axis, keepdims)
    close(y, ty, rtol=1e-14)
    if method != "norm" and not isinstance(axis, list):
        assert tname(ty.grad_fn) == y.grad_fn.name()
    (ty * T(torch, weights)).sum().backward()
    close(x.grad, tx.grad, rtol=1e-13)


def test_max_and_min_ties_share_the_gradient_evenly(torch_or_none):
    x = tensor(R, requires_grad=True)
    x.max().backward()
    # three entries equal the maximum 3.0: each gets a third
    np.testing.assert_allclose(x.grad.numpy(), [[0, 1 / 3, 1 / 3], [1 / 3, 0, 0]], rtol=1e-15)
    m = tensor(R, requires_grad=True)
    (m.max(axis=1).sum() + m.min(axis=0, keepdims=True).sum()).backward()
    np.testing.assert_allclose(m.grad.numpy(), [[1, 0.5, 0.5], [1, 1, 1]])
    torch = torch_or_none
    if torch is None:
        return
    tx, tm = T(torch, R, True), T(torch, R, True)
    tx.max().backward()
    (tm.amax(1).sum() + tm.amin(0, keepdim=True).sum()).backward()
    close(x.grad, tx.grad)
    close(m.grad, tm.grad)


def test_reduction_node_names():
    x = tensor(R, requires_grad=True)
    names = {
        "sum": ("SumBackward0", "SumBackward1"),
        "mean": ("MeanBackward0", "MeanBackward1"),
        "prod": ("ProdBackward0", "ProdBackward1"),
        "max": ("MaxBackward1", "AmaxBackward0"),
        "min": ("MinBackward1", "AminBackward0"),
    }
    for method, (full, partial) in names.items():
        assert getattr(x, method)().grad_fn.name() == full
        assert getattr(x, method)(axis=0).grad_fn.name() == partial


# ---------------------------------------------------------------------------
# apply: constants, dtypes, arity and shape errors, non-differentiable inputs
# ---------------------------------------------------------------------------


def test_python_numbers_take_the_tensors_dtype(torch_or_none):
    x = tensor([1.0, 2.0], dtype=np.float32, requires_grad=True)
    y = 0.1 * x + 2.0
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y.numpy(), np.float32(0.1) * np.float32([1, 2]) + np.float32(2))
    y.sum().backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad.numpy(), np.float32([0.1, 0.1]))
    torch = torch_or_none
    if torch is None:
        return
    tx = torch.tensor([1.0, 2.0], dtype=torch.float32, requires_grad=True)
    ty = 0.1 * tx + 2.0
    assert ty.dtype == torch.float32
    np.testing.assert_array_equal(y.numpy(), ty.detach().numpy())
    ty.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_apply_on_constants_only():
    r = apply(OPS["add"], 1.5, 2.0)
    assert isinstance(r, Tensor) and r.dtype == np.float64
    assert r.item() == 3.5 and r.requires_grad is False and r.grad_fn is None


def test_a_forward_returning_a_python_number():
    # An op of the extension point (core.ops.Op) may compute a plain Python number: the result
    # is still a 0-d Tensor, in the dtype of its input, and differentiable.
    exact_sum = Op(
        "exact_sum",
        "ExactSumBackward",
        lambda a: math.fsum(a.ravel().tolist()),
        lambda n, g: (broadcast_to(g, n.shapes[0]),),
        kind="reduction",
    )
    values = [0.1, 0.2, 0.3, 1e16, -1e16]
    x = tensor(values, requires_grad=True)
    y = apply(exact_sum, x)
    assert isinstance(y, Tensor) and y.shape == () and y.dtype == np.float64
    assert y.item() == math.fsum(values) and y.grad_fn.name() == "ExactSumBackward"
    (y * 2).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0] * 5)
    f32 = apply(exact_sum, tensor([0.5, 0.25], dtype=np.float32))
    assert f32.dtype == np.float32 and f32.item() == 0.75 and f32.grad_fn is None


def test_apply_checks_the_arity():
    x = tensor(1.0)
    with pytest.raises(TypeError, match=r"^add\(\) takes 2 arguments, got 1$"):
        apply(OPS["add"], x)
    with pytest.raises(TypeError, match=r"^exp\(\) takes 1 argument, got 2$"):
        apply(OPS["exp"], x, x)


def test_shape_mismatch_is_a_shape_error(torch_or_none):
    with pytest.raises(ShapeError, match=r"^add: shapes \(3,\), \(2,\) do not fit") as info:
        tensor([1.0, 2.0, 3.0]) + tensor([1.0, 2.0])
    assert isinstance(info.value, RuntimeError) and info.value.kind == "shape"
    with pytest.raises(ShapeError, match=r"^matmul: shapes \(2, 3\), \(2, 3\) do not fit"):
        tensor(M) @ tensor(M)
    torch = torch_or_none
    if torch is not None:
        with pytest.raises(RuntimeError, match="must match"):
            T(torch, [1.0, 2.0, 3.0]) + T(torch, [1.0, 2.0])


def test_stack_of_several_tensors(torch_or_none):
    a, b = tensor(A, requires_grad=True), tensor(B)
    y = apply(OPS["stack"], a, b)
    np.testing.assert_array_equal(y.numpy(), [A, B])
    assert y.grad_fn.name() == "StackBackward0"
    nexts = [f.name() if f else None for f, _ in y.grad_fn.next_functions]
    assert nexts == ["AccumulateGrad", None]
    w = np.arange(6.0).reshape(2, 3)
    (y * w).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), w[0])
    assert apply(OPS["stack"], tensor(A), tensor(B)).grad_fn is None  # nothing needs grad
    torch = torch_or_none
    if torch is None:
        return
    ta = T(torch, A, True)
    ty = torch.stack([ta, T(torch, B)])
    assert tname(ty.grad_fn) == "StackBackward0"
    assert [f and tname(f) for f, _ in ty.grad_fn.next_functions] == nexts
    (ty * T(torch, w)).sum().backward()
    close(a.grad, ta.grad)


def test_grad_only_through_non_differentiable_positions_records_nothing():
    # where's condition and clamp_min's bound pass no gradient: an input that requires grad
    # only there leaves the result a constant (torch.where's condition is a bool, likewise).
    cond = tensor([1.0, 0.0, 1.0], requires_grad=True)
    r = apply(OPS["where"], cond, tensor(A), tensor(B))
    assert r.requires_grad is False and r.grad_fn is None
    np.testing.assert_array_equal(r.numpy(), [A[0], B[1], A[2]])
    bound = tensor(1.0, requires_grad=True)
    r = apply(OPS["clamp_min"], tensor(A), bound)
    assert r.grad_fn is None
    np.testing.assert_array_equal(r.numpy(), np.maximum(A, 1.0))


def test_clamp_min_bound_gets_no_gradient():
    x = tensor(A, requires_grad=True)
    bound = tensor(1.0, requires_grad=True)
    y = apply(OPS["clamp_min"], x, bound)
    assert [f.name() if f else None for f, _ in y.grad_fn.next_functions] == [
        "AccumulateGrad",
        None,
    ]
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), (np.array(A) > 1.0).astype(float))
    assert bound.grad is None


# ---------------------------------------------------------------------------
# Graph nodes: next_functions, AccumulateGrad, saved values, freed graphs
# ---------------------------------------------------------------------------


def _names(node, name=lambda f: f.name()):
    return [None if f is None else name(f) for f, _ in node.next_functions]


def test_next_functions(torch_or_none):
    x, s = tensor(X, requires_grad=True), tensor(1.5, requires_grad=True)
    y = (x * 2).exp() * s
    assert _names(y.grad_fn) == ["ExpBackward0", "AccumulateGrad"]
    mul = y.grad_fn.next_functions[0][0].next_functions[0][0]
    assert _names(mul) == ["AccumulateGrad", None]  # the constant 2 has no edge
    assert all(i == 0 for _, i in y.grad_fn.next_functions)
    acc = mul.next_functions[0][0]
    assert acc.variable is x and acc.next_functions == ()
    assert y.grad_fn.next_functions[1][0].variable is s
    assert repr(acc) == "<AccumulateGrad>" and repr(mul) == "<MulBackward0>"
    torch = torch_or_none
    if torch is None:
        return
    tx, ts = T(torch, X, True), T(torch, 1.5, True)
    ty = (tx * 2).exp() * ts
    assert _names(ty.grad_fn, tname) == _names(y.grad_fn)
    tmul = ty.grad_fn.next_functions[0][0].next_functions[0][0]
    assert _names(tmul, tname) == _names(mul)
    tacc = tmul.next_functions[0][0]
    assert tacc.variable is tx and tacc.next_functions == ()


def test_backward_after_the_output_tensor_is_gone(torch_or_none):
    # exp's rule reads its own output; that output Tensor is dropped before backward runs.
    x = tensor(X, requires_grad=True)
    y = x.exp()
    total = (y * 3).sum()
    del y
    gc.collect()
    total.backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.exp(X), rtol=1e-15)
    torch = torch_or_none
    if torch is not None:
        tx = T(torch, X, True)
        (tx.exp() * 3).sum().backward()
        close(x.grad, tx.grad)


def test_second_backward_through_a_freed_graph(torch_or_none):
    x = tensor(X, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(GradError) as ours:
        y.backward()
    assert str(ours.value).startswith(FREED) and "retain_graph=True" in str(ours.value)
    with pytest.raises(GradError, match=FREED):
        grad(y, x)
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.array(X))  # the first one counted once
    torch = torch_or_none
    if torch is not None:
        ty = (T(torch, X, True) ** 2).sum()
        ty.backward()
        with pytest.raises(RuntimeError, match=FREED):
            ty.backward()


def test_retain_graph_allows_a_second_backward(torch_or_none):
    x = tensor(X, requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * 2 * np.array(X))  # 2x, accumulated twice
    torch = torch_or_none
    if torch is not None:
        tx = T(torch, X, True)
        ty = (tx * tx).sum()
        ty.backward(retain_graph=True)
        ty.backward()
        close(x.grad, tx.grad)


def test_graph_without_saved_values_can_be_walked_twice(torch_or_none):
    # add, neg, reshape and sum save nothing, so (as in torch) nothing is freed.
    x = tensor(X, requires_grad=True)
    y = (-(x + 1.0)).reshape(3, 1).sum()
    for _ in range(3):
        y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [-3.0, -3.0, -3.0])
    torch = torch_or_none
    if torch is not None:
        tx = T(torch, X, True)
        ty = (-(tx + 1.0)).reshape(3, 1).sum()
        for _ in range(3):
            ty.backward()
        close(x.grad, tx.grad)


# ---------------------------------------------------------------------------
# backward()
# ---------------------------------------------------------------------------


def test_backward_of_a_leaf(torch_or_none):
    x = tensor(2.0, requires_grad=True)
    x.backward()
    assert x.grad.item() == 1.0  # dx/dx
    v = tensor(X, requires_grad=True)
    v.backward(tensor([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(v.grad.numpy(), [1.0, 2.0, 3.0])
    torch = torch_or_none
    if torch is not None:
        tv = T(torch, X, True)
        tv.backward(T(torch, [1.0, 2.0, 3.0]))
        close(v.grad, tv.grad)


def test_backward_with_a_gradient_is_a_vjp(torch_or_none):
    x = tensor(M, requires_grad=True)
    gout = [[1.0, -1.0, 0.5], [2.0, 0.0, -3.0]]
    (x**2).backward(tensor(gout))
    np.testing.assert_array_equal(x.grad.numpy(), 2 * np.array(M) * np.array(gout))
    z = tensor(X, requires_grad=True)
    (z * 3).backward([1.0, 1.0, 2.0])  # a plain list works as a gradient as well
    np.testing.assert_array_equal(z.grad.numpy(), [3.0, 3.0, 6.0])
    torch = torch_or_none
    if torch is not None:
        tx = T(torch, M, True)
        (tx**2).backward(T(torch, gout))
        close(x.grad, tx.grad)


def test_backward_of_several_outputs(torch_or_none):
    x = tensor(X, requires_grad=True)
    backward([(x**2).sum(), x.sin()], [tensor(2.0), tensor([1.0, 0.0, -1.0])])
    a = np.array(X)
    np.testing.assert_allclose(x.grad.numpy(), 2 * 2 * a + np.cos(a) * [1, 0, -1], rtol=1e-15)
    torch = torch_or_none
    if torch is not None:
        tx = T(torch, X, True)
        gs = [T(torch, 2.0), T(torch, [1.0, 0.0, -1.0])]
        torch.autograd.backward([(tx**2).sum(), tx.sin()], gs)
        close(x.grad, tx.grad)


def test_backward_of_the_same_output_twice_in_one_call(torch_or_none):
    x = tensor(X, requires_grad=True)
    y = (x**3).sum()
    backward([y, y])
    np.testing.assert_allclose(x.grad.numpy(), 2 * 3 * np.array(X) ** 2, rtol=1e-15)
    torch = torch_or_none
    if torch is not None:
        tx = T(torch, X, True)
        ty = (tx**3).sum()
        torch.autograd.backward([ty, ty])
        close(x.grad, tx.grad)


def test_backward_inputs_restricts_accumulation(torch_or_none):
    x, w = tensor(X, requires_grad=True), tensor(B, requires_grad=True)
    (x * w).sum().backward(inputs=[x])
    np.testing.assert_array_equal(x.grad.numpy(), B)
    assert w.grad is None
    backward((x * w).sum(), inputs=w)  # one tensor instead of a list
    np.testing.assert_array_equal(w.grad.numpy(), X)
    np.testing.assert_array_equal(x.grad.numpy(), B)  # unchanged
    torch = torch_or_none
    if torch is not None:
        tx, tw = T(torch, X, True), T(torch, B, True)
        (tx * tw).sum().backward(inputs=[tx])
        close(x.grad, tx.grad)
        assert tw.grad is None


def test_gradients_accumulate_across_calls(torch_or_none):
    x = tensor(X, requires_grad=True)
    x.sin().sum().backward()
    x.cos().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(X) - np.sin(X), rtol=1e-15)
    torch = torch_or_none
    if torch is not None:
        tx = T(torch, X, True)
        tx.sin().sum().backward()
        tx.cos().sum().backward()
        close(x.grad, tx.grad)


def test_backward_of_a_constant(torch_or_none):
    with pytest.raises(GradError) as ours:
        tensor(X).sum().backward()
    message = "element 0 of tensors does not require grad and does not have a grad_fn"
    assert str(ours.value) == message
    torch = torch_or_none
    if torch is not None:
        with pytest.raises(RuntimeError) as theirs:
            T(torch, X).sum().backward()
        assert str(theirs.value) == message


def test_implicit_gradient_needs_a_scalar(torch_or_none):
    x = tensor(M, requires_grad=True)
    with pytest.raises(NonScalarOutputError) as ours:
        (x * 2).backward()
    message = "grad can be implicitly created only for scalar outputs"
    assert str(ours.value) == message and isinstance(ours.value, GradError)
    assert ours.value.kind == "non_scalar_output" and ours.value.details == {"shape": [2, 3]}
    t = tensor([[2.0]], requires_grad=True)  # one element of any shape is fine
    (t**2).backward()
    assert t.grad.shape == (1, 1) and t.grad.item() == 4.0
    torch = torch_or_none
    if torch is not None:
        with pytest.raises(RuntimeError) as theirs:
            (T(torch, M, True) * 2).backward()
        assert str(theirs.value) == message


def test_gradient_of_the_wrong_shape(torch_or_none):
    x = tensor(X, requires_grad=True)
    with pytest.raises(ShapeError, match="^Mismatch in shape") as ours:
        (x * 2).backward(tensor([1.0, 1.0]))
    assert ours.value.details == {"expected": [3], "got": [2]}
    torch = torch_or_none
    if torch is not None:
        with pytest.raises(RuntimeError, match="^Mismatch in shape"):
            (T(torch, X, True) * 2).backward(T(torch, [1.0, 1.0]))


def test_number_of_gradients_must_match_the_outputs(torch_or_none):
    x = tensor(X, requires_grad=True)
    with pytest.raises(GradError, match="^grad_outputs has 1 entries but there are 2 outputs$"):
        backward([x.sum(), x.prod()], [tensor(1.0)])
    torch = torch_or_none
    if torch is not None:
        tx = T(torch, X, True)
        with pytest.raises(RuntimeError, match="got 2 tensors and 1 gradients"):
            torch.autograd.backward([tx.sum(), tx.prod()], [T(torch, 1.0)])


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True:UserWarning")
def test_create_graph_makes_differentiable_gradients(torch_or_none):
    x = tensor(1.5, requires_grad=True)
    (x**3).backward(create_graph=True)
    assert x.grad.grad_fn is not None
    assert x.grad.item() == pytest.approx(3 * 1.5**2, rel=1e-15)
    (second,) = grad(x.grad, x)
    assert second.item() == pytest.approx(6 * 1.5, rel=1e-15)  # d^2/dx^2 x^3 = 6x
    torch = torch_or_none
    if torch is not None:
        tx = T(torch, 1.5, True)
        (tx**3).backward(create_graph=True)
        (tsecond,) = torch.autograd.grad(tx.grad, tx)
        close(x.grad, tx.grad)
        close(second, tsecond)


def test_create_graph_keeps_the_graph_of_grad_outputs(torch_or_none):
    # the vjp of y = x**2 with cotangent v is 2 x v; its derivative in v (summed) is 2x
    x, v = tensor(X, requires_grad=True), tensor([1.0, -2.0, 0.5], requires_grad=True)
    (gx,) = grad(x**2, x, grad_outputs=v, create_graph=True)
    np.testing.assert_allclose(gx.numpy(), 2 * np.array(X) * [1.0, -2.0, 0.5])
    (gv,) = grad(gx.sum(), v)
    np.testing.assert_allclose(gv.numpy(), 2 * np.array(X))
    (flat,) = grad(x**2, x, grad_outputs=v)  # without create_graph: a constant
    assert flat.grad_fn is None and flat.requires_grad is False
    torch = torch_or_none
    if torch is not None:
        tx, tv = T(torch, X, True), T(torch, [1.0, -2.0, 0.5], True)
        (tgx,) = torch.autograd.grad(tx**2, tx, grad_outputs=tv, create_graph=True)
        (tgv,) = torch.autograd.grad(tgx.sum(), tv)
        close(gx, tgx)
        close(gv, tgv)


# ---------------------------------------------------------------------------
# grad()
# ---------------------------------------------------------------------------


def test_grad_returns_a_tuple_and_accumulates_nothing(torch_or_none):
    x, s = tensor(X, requires_grad=True), tensor(2.0, requires_grad=True)
    gx, gs = grad((s * x**2).sum(), [x, s])
    np.testing.assert_allclose(gx.numpy(), 2 * 2.0 * np.array(X))
    assert gs.item() == pytest.approx(float(np.sum(np.array(X) ** 2)), rel=1e-15)
    assert x.grad is None and s.grad is None
    torch = torch_or_none
    if torch is not None:
        tx, ts = T(torch, X, True), T(torch, 2.0, True)
        tgx, tgs = torch.autograd.grad((ts * tx**2).sum(), [tx, ts])
        close(gx, tgx)
        close(gs, tgs)


def test_grad_of_a_non_leaf_input(torch_or_none):
    x = tensor(X, requires_grad=True)
    y = x * 2
    (gy,) = grad((y**2).sum() + y.sum(), y)
    np.testing.assert_allclose(gy.numpy(), 2 * 2 * np.array(X) + 1)  # 2y + 1
    torch = torch_or_none
    if torch is not None:
        ty = T(torch, X, True) * 2
        (tgy,) = torch.autograd.grad((ty**2).sum() + ty.sum(), ty)
        close(gy, tgy)


def test_grad_of_a_leaf_output_with_respect_to_itself(torch_or_none):
    x = tensor(X, requires_grad=True)
    (g,) = grad(x, x, grad_outputs=tensor([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(g.numpy(), [1.0, 2.0, 3.0])  # the identity's vjp
    torch = torch_or_none
    if torch is not None:
        tx = T(torch, X, True)
        (tg,) = torch.autograd.grad(tx, tx, grad_outputs=T(torch, [1.0, 2.0, 3.0]))
        close(g, tg)


def test_grad_of_several_outputs_with_grad_outputs(torch_or_none):
    x = tensor(X, requires_grad=True)
    gouts = [[1.0, 0.0, 2.0], 3.0]
    (g,) = grad([x.exp(), x.sum()], [x], grad_outputs=[tensor(gouts[0]), tensor(gouts[1])])
    np.testing.assert_allclose(g.numpy(), np.exp(X) * gouts[0] + 3.0, rtol=1e-15)
    torch = torch_or_none
    if torch is not None:
        tx = T(torch, X, True)
        (tg,) = torch.autograd.grad(
            [tx.exp(), tx.sum()], [tx], grad_outputs=[T(torch, gouts[0]), T(torch, gouts[1])]
        )
        close(g, tg)


def test_grad_of_an_unused_input(torch_or_none):
    x, u = tensor(X, requires_grad=True), tensor(1.0, requires_grad=True)
    gx, gu = grad((x * 2).sum(), [x, u], allow_unused=True)
    np.testing.assert_array_equal(gx.numpy(), [2.0, 2.0, 2.0])
    assert gu is None
    with pytest.raises(GradError, match="appears to not have been used in the graph") as ours:
        grad((x * 2).sum(), [x, u])
    assert "allow_unused=True" in str(ours.value)
    torch = torch_or_none
    if torch is not None:
        tx, tu = T(torch, X, True), T(torch, 1.0, True)
        tgx, tgu = torch.autograd.grad((tx * 2).sum(), [tx, tu], allow_unused=True)
        close(gx, tgx)
        assert tgu is None
        with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
            torch.autograd.grad((tx * 2).sum(), [tx, tu])


def test_grad_argument_errors(torch_or_none):
    x = tensor(X, requires_grad=True)
    with pytest.raises(GradError) as input_error:
        grad(x.sum(), [tensor(1.0)])
    assert str(input_error.value) == "One of the differentiated Tensors does not require grad"
    with pytest.raises(GradError) as output_error:
        grad([x.sum(), tensor(1.0)], [x])
    message = "element 1 of tensors does not require grad and does not have a grad_fn"
    assert str(output_error.value) == message
    torch = torch_or_none
    if torch is None:
        return
    tx = T(torch, X, True)
    with pytest.raises(RuntimeError) as theirs:
        torch.autograd.grad(tx.sum(), [T(torch, 1.0)])
    assert str(theirs.value) == str(input_error.value)
    with pytest.raises(RuntimeError) as theirs:
        torch.autograd.grad([tx.sum(), T(torch, 1.0)], [tx])
    assert str(theirs.value) == message


# ---------------------------------------------------------------------------
# A rule that returns no gradient for an input, as a torch.autograd.Function may
# ---------------------------------------------------------------------------


def test_an_absent_gradient_stays_absent(torch_or_none):
    # a * b through an op of the op table's extension point (core.ops.Op) whose rule passes a
    # gradient to a only: b's side of the graph gets nothing, and its leaves keep grad None.
    op = Op(
        "first_only",
        "FirstOnlyBackward",
        lambda a, b: a * b,
        lambda n, g: (g * n.inputs[1], None),
        arity=2,
    )
    wv = [0.5, 1.0, -1.0]
    a, w, v = (tensor(d, requires_grad=True) for d in (A, wv, B))
    # w.exp() is a non-leaf (its Node receives no cotangent at all); v is a leaf given None
    out = (apply(op, a, w.exp()) + apply(op, a, v)).sum()
    np.testing.assert_allclose(out.item(), np.sum(np.array(A) * (np.exp(wv) + np.array(B))))
    ga, gw, gv = grad(out, [a, w, v], allow_unused=True, retain_graph=True)
    np.testing.assert_allclose(ga.numpy(), np.exp(wv) + np.array(B), rtol=1e-15)
    assert gw is None and gv is None
    out.backward()
    np.testing.assert_allclose(a.grad.numpy(), np.exp(wv) + np.array(B), rtol=1e-15)
    assert w.grad is None and v.grad is None
    torch = torch_or_none
    if torch is None:
        return

    class FirstOnly(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            (b,) = ctx.saved_tensors
            return g * b, None

    ta, tw, tv = (T(torch, d, True) for d in (A, wv, B))
    tout = (FirstOnly.apply(ta, tw.exp()) + FirstOnly.apply(ta, tv)).sum()
    tga, tgw, tgv = torch.autograd.grad(tout, [ta, tw, tv], allow_unused=True, retain_graph=True)
    close(ga, tga)
    assert tgw is None and tgv is None
    tout.backward()
    close(a.grad, ta.grad)
    assert tw.grad is None and tv.grad is None


# ---------------------------------------------------------------------------
# topological_nodes
# ---------------------------------------------------------------------------


def _assert_inputs_first(order):
    position = {id(n): i for i, n in enumerate(order)}
    assert len(position) == len(order)  # each node once
    for node in order:
        for f, _ in node.next_functions:
            if id(f) in position:
                assert position[id(f)] < position[id(node)]


def test_topological_nodes_orders_inputs_first_and_visits_each_once():
    x = tensor(X, requires_grad=True)
    e = x.exp()
    y = e * e  # a diamond: both edges of the product lead to the same node
    sy, se = y.sum(), e.sum()
    z = sy + se
    order = topological_nodes([z])
    assert order[0] is e.grad_fn and order[-1] is z.grad_fn  # the only source and sink
    assert {id(n) for n in order} == {id(t.grad_fn) for t in (e, y, sy, se, z)}
    _assert_inputs_first(order)
    # stop: the walk enters neither the stop node nor what lies only behind it
    stopped = topological_nodes([z], stop=[y.grad_fn])
    assert {id(n) for n in stopped} == {id(t.grad_fn) for t in (e, sy, se, z)}
    _assert_inputs_first(stopped)
    assert topological_nodes([sy], stop=[y.grad_fn]) == [sy.grad_fn]
    assert topological_nodes([z], stop=[z.grad_fn]) == []
    # leaves and constants contribute no nodes; an output listed twice is walked once
    assert topological_nodes([x, tensor(1.0)]) == []
    assert topological_nodes([e, e]) == [e.grad_fn]


# ---------------------------------------------------------------------------
# Mixed dtypes: a gradient has its tensor's dtype (PyTorch casts it back)
# ---------------------------------------------------------------------------


def _mixed_sin_times(a_dtype=np.float32):
    a = tensor(np.array(A, dtype=a_dtype), requires_grad=True)
    b = tensor(B, requires_grad=True)
    return a, b, (a.sin() * b).sum()


def test_a_float32_leaf_in_a_float64_graph_gets_a_float32_gradient(torch_or_none):
    """d/da sum(sin(a) * b) = cos(a) * b, computed in float64 (b is) and handed back to the
    float32 leaf as float32, as PyTorch does; b's, sin(a) (float32) promoted, stays float64."""
    a, b, y = _mixed_sin_times()
    assert y.dtype == np.float64
    y.backward()
    assert a.grad.dtype == np.float32 and b.grad.dtype == np.float64
    a32 = np.array(A, dtype=np.float32)
    want = (np.cos(a32) * np.array(B)).astype(np.float32)  # sin's rule: cos(a), float32
    np.testing.assert_allclose(a.grad.numpy(), want, rtol=1e-6)
    np.testing.assert_array_equal(b.grad.numpy(), np.sin(a32).astype(np.float64))
    # accumulating a second backward keeps the leaf's dtype
    (a * tensor(2.0)).sum().backward()
    assert a.grad.dtype == np.float32
    np.testing.assert_allclose(a.grad.numpy(), want + 2, rtol=1e-6)
    torch = torch_or_none
    if torch is None:
        return
    ta = torch.tensor(A, dtype=torch.float32, requires_grad=True)
    tb = T(torch, B, True)
    (ta.sin() * tb).sum().backward()
    assert ta.grad.dtype == torch.float32 and tb.grad.dtype == torch.float64
    np.testing.assert_allclose(a.grad.numpy() - 2, ta.grad.numpy(), rtol=1e-6)


def test_a_mixed_gradient_with_create_graph_is_cast_on_the_graph(torch_or_none):
    """With create_graph the cast is recorded (ToCopyBackward0), so the float32 gradient
    is differentiated again: d2/da2 sum(sin(a) * b) = -sin(a) * b, float32 as PyTorch's."""
    a, b, y = _mixed_sin_times()
    (g,) = grad(y, [a], create_graph=True)
    assert g.dtype == np.float32 and g.requires_grad
    assert g.grad_fn.name() == "ToCopyBackward0"
    (h,) = grad(g.sum(), [a])
    assert h.dtype == np.float32
    a64 = np.array(A, dtype=np.float32).astype(np.float64)
    np.testing.assert_allclose(h.numpy(), -np.sin(a64) * np.array(B), rtol=1e-6)
    torch = torch_or_none
    if torch is None:
        return
    ta = torch.tensor(A, dtype=torch.float32, requires_grad=True)
    (tg,) = torch.autograd.grad((ta.sin() * T(torch, B)).sum(), [ta], create_graph=True)
    (th,) = torch.autograd.grad(tg.sum(), [ta])
    assert tg.dtype == th.dtype == torch.float32
    np.testing.assert_allclose(g.numpy(), tg.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(h.numpy(), th.numpy(), rtol=1e-6)


def test_to_casts_on_the_graph_and_its_gradient_comes_back_in_the_leafs_dtype(torch_or_none):
    x = tensor(X, requires_grad=True)
    assert x.to(np.float64) is x and x.double() is x  # already that dtype: itself, as torch
    y = x.float()
    assert y.dtype == np.float32 and y.grad_fn.name() == "ToCopyBackward0"
    assert [tname(e) for e, _ in y.grad_fn.next_functions] == ["AccumulateGrad"]
    (y * y).sum().backward()  # 2y, in float32, handed back as float64
    assert x.grad.dtype == np.float64
    np.testing.assert_array_equal(x.grad.numpy(), (2 * np.array(X, np.float32)).astype(np.float64))
    z = tensor(X, requires_grad=True)
    abs(z.to("complex128") * tensor(np.array([1j, 2, 1 + 1j]))).sum().backward()
    assert z.grad.dtype == np.float64  # the real part of the complex cotangent (PyTorch's rule)
    np.testing.assert_allclose(z.grad.numpy(), np.sign(X) * np.abs([1j, 2, 1 + 1j]), rtol=1e-15)
    with pytest.raises(TypeError, match="float or complex dtype"):
        x.to("int64")
    torch = torch_or_none
    if torch is None:
        return
    tx = T(torch, X, True)
    ty = tx.float()
    assert tname(ty.grad_fn) == "ToCopyBackward0"
    (ty * ty).sum().backward()
    assert tx.grad.dtype == torch.float64
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_grad_of_a_float32_intermediate_comes_back_in_float32(torch_or_none):
    """grad with respect to a non-leaf: its gradient has its dtype too (here b itself,
    rounded to float32), as PyTorch's."""
    a, b, _ = _mixed_sin_times()
    s = a.sin()
    (g,) = grad((s * b).sum(), [s])
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g.numpy(), np.array(B, dtype=np.float32))
    torch = torch_or_none
    if torch is None:
        return
    ts = torch.tensor(A, dtype=torch.float32, requires_grad=True).sin()
    (tg,) = torch.autograd.grad((ts * T(torch, B)).sum(), [ts])
    assert tg.dtype == torch.float32
    np.testing.assert_array_equal(g.numpy(), tg.numpy())


def test_a_cast_inside_the_graph_is_differentiated_twice(torch_or_none):
    """x (float64) -> x.float() -> sin -> times b (float64): d/dx = cos(x) b through the cast
    (ToCopyBackward0 both ways), d2/dx2 = -sin(x) b, float64 as x; torch's values and name."""
    x = tensor(X, requires_grad=True)
    b = tensor(B)
    (g,) = grad((x.float().sin() * b).sum(), [x], create_graph=True)
    assert g.dtype == np.float64 and g.grad_fn.name() == "ToCopyBackward0"
    (h,) = grad(g.sum(), [x])
    assert h.dtype == np.float64
    x32 = np.array(X, np.float32).astype(np.float64)
    np.testing.assert_allclose(g.numpy(), np.cos(x32) * np.array(B), rtol=1e-6)
    np.testing.assert_allclose(h.numpy(), -np.sin(x32) * np.array(B), rtol=1e-6)
    torch = torch_or_none
    if torch is None:
        return
    tx = T(torch, X, True)
    (tg,) = torch.autograd.grad((tx.float().sin() * T(torch, B)).sum(), [tx], create_graph=True)
    (th,) = torch.autograd.grad(tg.sum(), [tx])
    assert tname(tg.grad_fn) == "ToCopyBackward0"
    np.testing.assert_allclose(g.numpy(), tg.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(h.numpy(), th.numpy(), rtol=1e-6)
