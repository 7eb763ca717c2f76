"""The autograd engine: a small PyTorch-like library the command line is a thin layer over.

>>> from autograd_cli.core import tensor
>>> x = tensor(2.0, requires_grad=True)
>>> y = 2 * x ** 2 + 1
>>> y.backward()
>>> y, x.grad
(tensor(9., grad_fn=<AddBackward0>), tensor(8.))
"""

from . import ops as _ops  # noqa: F401  (fills the op table)
from .autograd import backward, grad, topological_nodes
from .errors import (
    AutogradCliError,
    EvaluationError,
    GradError,
    InputError,
    NonScalarOutputError,
    ShapeError,
)
from .tensor import (
    OPS,
    Node,
    Tensor,
    apply,
    enable_grad,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
    tensor,
)

__all__ = [
    "OPS",
    "Node",
    "Tensor",
    "apply",
    "backward",
    "enable_grad",
    "grad",
    "is_grad_enabled",
    "no_grad",
    "set_grad_enabled",
    "tensor",
    "topological_nodes",
    "AutogradCliError",
    "EvaluationError",
    "GradError",
    "InputError",
    "NonScalarOutputError",
    "ShapeError",
]

_FUNCTIONAL = {"derivative", "gradcheck", "hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"}


def __getattr__(name):
    # torch.autograd.functional-style helpers load on first use: commands that do not
    # need them (eval, grad) start faster.
    if name in _FUNCTIONAL:
        from . import functional

        return getattr(functional, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
