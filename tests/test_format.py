"""Tensor printing follows PyTorch's: integral values as `2.`, others with 4 decimals."""

from autograd_cli.core import tensor


def test_repr_like_pytorch():
    assert repr(tensor(0.1)) == "tensor(0.1000)"
    assert repr(tensor([0.0, 0.5, 0.5])) == "tensor([0.0000, 0.5000, 0.5000])"
    assert repr(tensor(1.00001e10)) == "tensor(1.0000e+10)"
    assert repr(tensor([2.0, 4.0])) == "tensor([2., 4.])"
    assert repr(tensor([[18.0, 24.0], [36.0, 42.0]])) == "tensor([[18., 24.],\n        [36., 42.]])"
    assert repr(tensor(2.0, requires_grad=True)) == "tensor(2., requires_grad=True)"
    assert repr(tensor(float("nan"))) == "tensor(nan)"
