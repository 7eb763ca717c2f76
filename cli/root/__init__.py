"""autograd-cli: a command-line gradient calculator with PyTorch's autograd semantics.

The library lives in :mod:`autograd_cli.core` (tensors, backward, grad), the
expression language in :mod:`autograd_cli.grammar`, and the command line in
:mod:`autograd_cli.cli`.
"""

__version__ = "0.1.0"
