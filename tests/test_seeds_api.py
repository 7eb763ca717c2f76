"""Every worked example of the three seed tutorials, run through the Python API.

The seeds are PyTorch tutorials (two in Chinese, one bilingual English/Chinese):

* seeds/000 "PyTorch 折桂 4: torch.autograd" - computation graphs, y=(x+w)*(w+1),
  backward on 0-d and 1-d outputs, torch.autograd.grad with grad_outputs,
  the freed-graph error, create_graph for second derivatives, torch.autograd.backward.
* seeds/002 "Pytorch 自动梯度计算引擎 Autograd" - y = 2*x**2 + b, and W @ x + b summed.
* seeds/003 "A Gentle Introduction to torch.autograd" - Q = 3a**3 - b**2, the
  vector-Jacobian product, exclusion from the DAG (requires_grad=False, frozen
  parameters, no_grad).

Where the seed prints a value, the test asserts the exact printed text (``repr``)
that PyTorch prints for the same code.  Where the seed itself is wrong, the test
asserts what PyTorch really does and says why in a comment.
"""

from __future__ import annotations

import numpy as np
import pytest

from autograd_cli.core import (
    GradError,
    NonScalarOutputError,
    Tensor,
    backward,
    grad,
    no_grad,
    tensor,
)
from autograd_cli.core.recording import evaluate
from autograd_cli.grammar import parse

FREED = "Trying to backward through the graph a second time"
NON_SCALAR = "grad can be implicitly created only for scalar outputs"


def ones_like(t: Tensor) -> Tensor:
    return tensor(np.ones(t.shape))


# ---------------------------------------------------------------------------
# seeds/000, section 1: leaves and the dynamic graph
# ---------------------------------------------------------------------------


def test_seed000_is_leaf():
    a = tensor([1.0])
    b = tensor([2.0])
    c = a.add(b)
    assert a.is_leaf
    # The seed claims c.is_leaf is False; in PyTorch every tensor that does not
    # require grad is a leaf by convention, so c.is_leaf is True there (and here).
    assert c.is_leaf
    assert c.grad_fn is None
    # With a tracked input the result is a non-leaf, which is what the seed means.
    a.requires_grad_()
    c = a.add(b)
    assert not c.is_leaf
    assert repr(c) == "tensor([3.], grad_fn=<AddBackward0>)"


def test_seed000_dynamic_graph_loop():
    # while first_counter[0] < second_counter[0]: first += 2; second += 1
    first_counter = tensor([0.0])
    second_counter = tensor([10.0])
    steps = 0
    while first_counter[0] < second_counter[0]:
        first_counter = first_counter + 2
        second_counter = second_counter + 1
        steps += 1
    assert steps == 10
    assert repr(first_counter) == "tensor([20.])"
    assert repr(second_counter) == "tensor([20.])"


def test_seed000_dynamic_graph_loop_is_differentiable():
    # The point of a dynamic graph: control flow decided at run time is still recorded.
    x = tensor(1.5, requires_grad=True)
    y = x
    while y < 10:
        y = y * x
    # 1.5**k: the loop stops at k = 6 (11.39...), so dy/dx = 6 * 1.5**5.
    (dx,) = grad(y, x)
    assert dx.item() == pytest.approx(6 * 1.5**5, rel=1e-15)


# ---------------------------------------------------------------------------
# seeds/000, section 1.3: y = (x + w) * (w + 1) at x = 2, w = 1  ->  dy/dw = 5
# ---------------------------------------------------------------------------


def test_seed000_graph_example_methods():
    x = tensor([2.0], requires_grad=True)
    w = tensor([1.0], requires_grad=True)
    a = w.add(x)
    b = w.add(1)
    y = a.mul(b)
    assert repr(y) == "tensor([6.], grad_fn=<MulBackward0>)"
    y.backward()  # a one-element output may seed its gradient implicitly, as in PyTorch
    assert repr(w.grad) == "tensor([5.])"
    assert repr(x.grad) == "tensor([2.])"  # dy/dx = w + 1
    assert x.is_leaf and w.is_leaf and not a.is_leaf and not b.is_leaf and not y.is_leaf


def test_seed000_graph_example_operators():
    x = tensor(2.0, requires_grad=True)
    w = tensor(1.0, requires_grad=True)
    y = (x + w) * (w + 1)
    assert repr(y) == "tensor(6., grad_fn=<MulBackward0>)"
    y.backward()
    assert repr(w.grad) == "tensor(5.)"
    assert repr(x.grad) == "tensor(2.)"


def test_seed000_graph_example_as_program():
    program = parse("a = x + w; b = w + 1; a * b")
    assert program.inputs == ["x", "w"]
    ev = evaluate(program, {"x": 2.0, "w": 1.0}, requires_grad=["x", "w"])
    assert repr(ev.output) == "tensor(6., grad_fn=<MulBackward0>)"
    assert set(ev.intermediates) == {"a", "b"}
    assert ev.intermediates["a"].item() == 3.0
    assert ev.intermediates["b"].item() == 2.0
    dx, dw = grad(ev.output, [ev.leaves["x"], ev.leaves["w"]])
    assert repr(dw) == "tensor(5.)"
    assert repr(dx) == "tensor(2.)"
    # The chain rule of the seed, term by term: dy/da * da/dw + dy/db * db/dw = b + a.
    ev = evaluate(program, {"x": 2.0, "w": 1.0}, requires_grad=["x", "w"])
    da, db = grad(ev.output, [ev.intermediates["a"], ev.intermediates["b"]])
    assert (da.item(), db.item()) == (2.0, 3.0)


def test_seed000_graph_example_binding_as_output():
    ev = evaluate(parse("y = (x + w) * (w + 1)"), {"x": 2.0, "w": 1.0}, requires_grad=["w"])
    assert ev.output.item() == 6.0
    ev.output.backward()
    assert repr(ev.leaves["w"].grad) == "tensor(5.)"
    assert ev.leaves["x"].grad is None


# ---------------------------------------------------------------------------
# seeds/000, section 4.1: backward of a 0-d result
# ---------------------------------------------------------------------------


def test_seed000_requires_grad_default_and_propagation():
    a = tensor(2.0)
    assert a.requires_grad is False
    # The seed prints this tensor as tensor(1.); that is a typo: it holds 2.
    assert repr(a) == "tensor(2.)"
    b = a**2 + 1
    assert b.requires_grad is False
    assert repr(b) == "tensor(5.)"


def test_seed000_requires_grad_set_later():
    a = tensor(2.0)
    assert a.requires_grad_(True) is a
    assert repr(a) == "tensor(2., requires_grad=True)"
    a2 = tensor(2.0)
    a2.requires_grad = True  # "another way to write it"
    assert repr(a2) == "tensor(2., requires_grad=True)"
    b = a**2 + 1
    assert repr(b) == "tensor(5., grad_fn=<AddBackward0>)"
    assert b.requires_grad
    b.backward()
    assert repr(a.grad) == "tensor(4.)"


def test_requires_grad_only_on_leaves():
    a = tensor(2.0, requires_grad=True)
    b = a * 3
    with pytest.raises(GradError, match="leaf"):
        b.requires_grad_(False)
    a.requires_grad_(False)
    assert (a * 3).requires_grad is False


# ---------------------------------------------------------------------------
# seeds/000, section 4.2: backward of a 1-d result
# ---------------------------------------------------------------------------


def test_seed000_vector_output_needs_gradient():
    a = tensor([1.0, 2.0], requires_grad=True)
    b = a**2 + 1
    # The seed prints tensor([2., 3.], grad_fn=<AddBackward0>): a typo in the seed,
    # since [1, 2]**2 + 1 = [2, 5] (PyTorch prints tensor([2., 5.], ...)).
    assert repr(b) == "tensor([2., 5.], grad_fn=<AddBackward0>)"
    with pytest.raises(RuntimeError) as info:
        b.backward()
    assert str(info.value) == NON_SCALAR
    assert isinstance(info.value, NonScalarOutputError)
    assert a.grad is None  # the failed call accumulated nothing
    b.backward(gradient=tensor([1.0, 1.0]))
    assert repr(a.grad) == "tensor([2., 4.])"


def test_seed000_vector_output_ones_like():
    # The seed's alternative spelling, gradient=torch.ones_like(...), on a fresh graph.
    a = tensor([1.0, 2.0], requires_grad=True)
    b = a**2 + 1
    b.backward(gradient=ones_like(b))
    assert repr(a.grad) == "tensor([2., 4.])"
    # The seed runs both spellings one after the other; in PyTorch the second call
    # fails because the first freed the graph (PowBackward0 saved a).
    with pytest.raises(RuntimeError, match=FREED):
        b.backward(gradient=ones_like(b))
    assert repr(a.grad) == "tensor([2., 4.])"


def test_seed000_backward_accumulates_with_retain_graph():
    a = tensor([1.0, 2.0], requires_grad=True)
    b = a**2 + 1
    b.backward(gradient=tensor([1.0, 1.0]), retain_graph=True)
    b.backward(gradient=tensor([1.0, 1.0]))
    assert repr(a.grad) == "tensor([4., 8.])"


def test_grad_output_of_wrong_shape():
    a = tensor([1.0, 2.0], requires_grad=True)
    b = a**2 + 1
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        b.backward(gradient=tensor([1.0, 1.0, 1.0]))


# ---------------------------------------------------------------------------
# seeds/000, section 5: torch.autograd.grad
# ---------------------------------------------------------------------------


def _seed000_xyz():
    x = tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    y = x + 2
    z = y * y * 3
    return x, y, z


def test_seed000_autograd_grad():
    x, y, z = _seed000_xyz()
    dzdx = grad(inputs=x, outputs=z, grad_outputs=ones_like(x))
    assert isinstance(dzdx, tuple) and len(dzdx) == 1
    assert repr(dzdx) == "(tensor([[18., 24., 30.],\n        [36., 42., 48.]]),)"
    assert x.grad is None  # grad() accumulates nothing into .grad
    np.testing.assert_array_equal(dzdx[0].numpy(), 6 * (x.numpy() + 2))


def test_seed000_autograd_grad_second_time_fails():
    x, y, z = _seed000_xyz()
    grad(inputs=x, outputs=z, grad_outputs=ones_like(x))
    with pytest.raises(RuntimeError) as info:
        grad(inputs=x, outputs=z, grad_outputs=ones_like(x))
    assert str(info.value).startswith(FREED)
    assert "retain_graph=True" in str(info.value)


def test_seed000_autograd_grad_retain_graph_allows_second_call():
    x, y, z = _seed000_xyz()
    first = grad(inputs=x, outputs=z, grad_outputs=ones_like(x), retain_graph=True)
    second = grad(inputs=x, outputs=z, grad_outputs=ones_like(x))
    np.testing.assert_array_equal(first[0].numpy(), second[0].numpy())


def test_seed000_second_derivative():
    x, y, z = _seed000_xyz()
    dzdx = grad(inputs=x, outputs=z, grad_outputs=ones_like(x), create_graph=True)
    assert dzdx[0].requires_grad and dzdx[0].grad_fn is not None
    np.testing.assert_array_equal(dzdx[0].numpy(), [[18.0, 24.0, 30.0], [36.0, 42.0, 48.0]])
    dz2dx2 = grad(inputs=x, outputs=dzdx, grad_outputs=ones_like(x))
    assert repr(dz2dx2) == "(tensor([[6., 6., 6.],\n        [6., 6., 6.]]),)"
    # create_graph implies retain_graph: the first-order graph is still usable.
    again = grad(inputs=x, outputs=z, grad_outputs=ones_like(x))
    np.testing.assert_array_equal(again[0].numpy(), dzdx[0].numpy())


def test_seed000_grad_of_scalar_needs_no_grad_outputs():
    x, y, z = _seed000_xyz()
    (g,) = grad(z.sum(), x)
    np.testing.assert_array_equal(g.numpy(), [[18.0, 24.0, 30.0], [36.0, 42.0, 48.0]])


def test_seed000_grad_of_vector_needs_grad_outputs():
    x, y, z = _seed000_xyz()
    with pytest.raises(RuntimeError) as info:
        grad(z, x)
    assert str(info.value) == NON_SCALAR


# ---------------------------------------------------------------------------
# seeds/000, section 6: torch.autograd.backward
# ---------------------------------------------------------------------------


def test_seed000_autograd_backward_equals_method():
    a = tensor(2.0, requires_grad=True)
    backward(a**2 + 1)
    assert repr(a.grad) == "tensor(4.)"
    a2 = tensor([1.0, 2.0], requires_grad=True)
    backward(a2**2 + 1, grad_tensors=tensor([1.0, 1.0]))
    assert repr(a2.grad) == "tensor([2., 4.])"
    a3 = tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        backward(a3**2 + 1)
    assert str(info.value) == NON_SCALAR


# ---------------------------------------------------------------------------
# seeds/002: y = 2*x**2 + b, and a linear layer W @ x + b
# ---------------------------------------------------------------------------


def test_seed002_scalar_function():
    x = tensor(2.0, requires_grad=True)
    b = tensor(1.0)
    y = 2 * x**2 + b
    y.backward()
    assert repr(y) == "tensor(9., grad_fn=<AddBackward0>)"
    assert repr(x.grad) == "tensor(8.)"
    assert b.grad is None


def test_seed002_scalar_function_as_expression():
    ev = evaluate(parse("2*x**2 + b"), {"x": 2, "b": 1}, requires_grad=["x"])
    ev.output.backward()
    assert repr(ev.output) == "tensor(9., grad_fn=<AddBackward0>)"
    assert repr(ev.leaves["x"].grad) == "tensor(8.)"


def _seed002_layer():
    x = tensor([3.0, 2.0, 4.0, 5.0], requires_grad=False)
    W = tensor([[1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4]], requires_grad=True)
    b = tensor([4.0, 5.0, 8.0], requires_grad=True)
    return x, W, b


def test_seed002_linear_layer():
    x, W, b = _seed002_layer()
    output = W @ x + b
    y = output.sum()
    assert output.grad_fn.name() == "AddBackward0"
    assert f"the y grad is {output.grad_fn}".startswith("the y grad is <AddBackward0")
    assert output.grad_fn.next_functions[0][0].name() == "MvBackward0"
    assert repr(output) == "tensor([43., 44., 47.], grad_fn=<AddBackward0>)"
    assert repr(y) == "tensor(134., grad_fn=<SumBackward0>)"
    # The seed calls output.backward() but prints the gradients of y.backward():
    # output has 3 elements, so PyTorch would raise there.  y.backward() is meant.
    y.backward()
    assert x.grad is None
    assert repr(W.grad) == (
        "tensor([[3., 2., 4., 5.],\n        [3., 2., 4., 5.],\n        [3., 2., 4., 5.]])"
    )
    assert repr(b.grad) == "tensor([1., 1., 1.])"


def test_seed002_linear_layer_output_backward_as_written_fails():
    x, W, b = _seed002_layer()
    output = W @ x + b
    with pytest.raises(RuntimeError) as info:
        output.backward()
    assert str(info.value) == NON_SCALAR


def test_seed002_linear_layer_matmul_spelling_and_program():
    x, W, b = _seed002_layer()
    y = (W.matmul(x) + b).sum()
    y.backward()
    np.testing.assert_array_equal(W.grad.numpy(), np.tile([3.0, 2.0, 4.0, 5.0], (3, 1)))
    ev = evaluate(
        parse("output = W @ x + b; sum(output)"),
        {"W": [[1, 2, 3, 4]] * 3, "x": [3, 2, 4, 5], "b": [4, 5, 8]},
        requires_grad=["W", "b"],
    )
    assert repr(ev.output) == "tensor(134., grad_fn=<SumBackward0>)"
    ev.output.backward()
    assert ev.leaves["x"].grad is None
    np.testing.assert_array_equal(
        ev.leaves["W"].grad.numpy(), np.tile([3.0, 2.0, 4.0, 5.0], (3, 1))
    )
    assert repr(ev.leaves["b"].grad) == "tensor([1., 1., 1.])"


# ---------------------------------------------------------------------------
# seeds/003: Q = 3a**3 - b**2
# ---------------------------------------------------------------------------


def _seed003_ab():
    a = tensor([2.0, 3.0], requires_grad=True)
    b = tensor([6.0, 4.0], requires_grad=True)
    return a, b


def test_seed003_external_grad():
    a, b = _seed003_ab()
    Q = 3 * a**3 - b**2
    assert repr(Q) == "tensor([-12.,  65.], grad_fn=<SubBackward0>)"
    external_grad = tensor([1.0, 1.0])
    Q.backward(gradient=external_grad)
    assert repr(a.grad) == "tensor([36., 81.])"
    assert repr(b.grad) == "tensor([-12.,  -8.])"
    # "check if collected gradients are correct": 9*a**2 == a.grad, -2*b == b.grad
    assert bool((9 * a**2).eq(a.grad).min())
    assert bool((-2 * b).eq(b.grad).min())
    assert (9 * a**2).eq(a.grad).tolist() == [1.0, 1.0]


def test_seed003_sum_backward():
    a, b = _seed003_ab()
    Q = 3 * a**3 - b**2
    Q.sum().backward()
    assert a.grad.tolist() == [36.0, 81.0]
    assert b.grad.tolist() == [-12.0, -8.0]


def test_seed003_as_expression():
    ev = evaluate(parse("3*a**3 - b**2"), {"a": [2, 3], "b": [6, 4]}, requires_grad=["a", "b"])
    ev.output.backward(gradient=tensor([1.0, 1.0]))
    assert ev.leaves["a"].grad.tolist() == [36.0, 81.0]
    assert ev.leaves["b"].grad.tolist() == [-12.0, -8.0]


def test_seed003_vector_jacobian_product():
    # torch.autograd computes J^T v: check it against the explicit Jacobian of Q.
    a, b = _seed003_ab()
    Q = 3 * a**3 - b**2
    v = tensor([0.5, -2.0])
    ga, gb = grad(Q, (a, b), grad_outputs=v)
    J_a = np.diag(9 * a.numpy() ** 2)
    J_b = np.diag(-2 * b.numpy())
    np.testing.assert_array_equal(ga.numpy(), J_a.T @ v.numpy())
    np.testing.assert_array_equal(gb.numpy(), J_b.T @ v.numpy())


def test_seed003_graph_structure():
    a, b = _seed003_ab()
    Q = 3 * a**3 - b**2
    assert Q.grad_fn.name() == "SubBackward0"
    mul, pow_b = (f for f, _ in Q.grad_fn.next_functions)
    assert mul.name() == "MulBackward0" and pow_b.name() == "PowBackward0"
    pow_a = [f for f, _ in mul.next_functions if f is not None]
    assert [f.name() for f in pow_a] == ["PowBackward0"]
    assert pow_a[0].next_functions[0][0].name() == "AccumulateGrad"
    assert pow_a[0].next_functions[0][0].variable is a


# ---------------------------------------------------------------------------
# seeds/003: exclusion from the DAG
# ---------------------------------------------------------------------------


def test_seed003_requires_grad_of_results():
    rng = np.random.default_rng(0)
    x = tensor(rng.random((5, 5)))
    y = tensor(rng.random((5, 5)))
    z = tensor(rng.random((5, 5)), requires_grad=True)
    a = x + y
    assert a.requires_grad is False  # "Does `a` require gradients?: False"
    b = x + z
    assert b.requires_grad is True  # "Does `b` require gradients?: True"


def test_seed003_frozen_parameters():
    # A two-layer "model" whose first layer is frozen, like the resnet18 fine-tuning example.
    rng = np.random.default_rng(1)
    W1 = tensor(rng.standard_normal((4, 3)), requires_grad=True)
    W_fc = tensor(rng.standard_normal((2, 4)), requires_grad=True)
    b_fc = tensor(rng.standard_normal(2), requires_grad=True)
    for p in (W1,):
        p.requires_grad = False  # freeze
    data = tensor(rng.standard_normal(3))
    loss = ((W_fc @ (W1 @ data).tanh() + b_fc) ** 2).sum()
    loss.backward()
    assert W1.grad is None
    assert W_fc.grad is not None and W_fc.grad.shape == (2, 4)
    assert b_fc.grad is not None and b_fc.grad.shape == (2,)
    h = np.tanh(W1.numpy() @ data.numpy())
    out = W_fc.numpy() @ h + b_fc.numpy()
    np.testing.assert_allclose(b_fc.grad.numpy(), 2 * out, rtol=1e-14)
    np.testing.assert_allclose(W_fc.grad.numpy(), np.outer(2 * out, h), rtol=1e-14)


def test_seed003_no_grad():
    x = tensor(2.0, requires_grad=True)
    with no_grad():
        y = x * 2
        z = (x**2).sin()
    assert y.requires_grad is False and y.grad_fn is None
    assert z.requires_grad is False and z.grad_fn is None
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.backward()
    w = x * 2  # grad mode is back on after the block
    assert repr(w) == "tensor(4., grad_fn=<MulBackward0>)"


def test_no_grad_mixed_with_tracked_ops():
    x = tensor(3.0, requires_grad=True)
    with no_grad():
        c = x * x  # a constant 9 as far as the graph knows
    y = c * x
    y.backward()
    assert repr(x.grad) == "tensor(9.)"


def test_detach_cuts_the_graph():
    x = tensor(3.0, requires_grad=True)
    y = (x * x).detach() * x
    (g,) = grad(y, x)
    assert g.item() == 9.0
