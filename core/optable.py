"""The op table, filled once from every module that declares ops.

:mod:`.ops` declares the elementwise ops, reductions, shapes and products and holds the
machinery (:class:`~.ops.Op`, :func:`~.ops.register`, the rule helpers); :mod:`.ops_arrays`
and :mod:`.ops_linalg` declare the array and linear-algebra functions with it.  This module
imports them all, then makes the table (``tensor.OPS``) and the language's functions
(``ops.FUNCTIONS``) from their declarations and facts.  The package's ``__init__`` imports
it first, so any ``autograd_cli.core`` module sees a full table.
"""

from __future__ import annotations

from . import ops, ops_arrays, ops_linalg
from .tensor import OPS

for _module in (ops_arrays, ops_linalg):
    ops.KINKS.update(_module.KINKS)
    ops.DIFFERENTIABLE.update(_module.DIFFERENTIABLE)
OPS.update(ops.op_table(ops._DECLARED, kinks=ops.KINKS, differentiable=ops.DIFFERENTIABLE))
ops.FUNCTIONS.update(ops.language_functions())
