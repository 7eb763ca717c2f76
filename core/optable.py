"""The op table, filled once from every module that declares ops.

:mod:`.ops` declares the elementwise ops, reductions, shapes and products and holds the
machinery (:class:`~.ops.Op`, :func:`~.ops.register`, the rule helpers); :mod:`.ops_arrays`
declares the array functions with it.  This module imports them all, then makes the table
(``tensor.OPS``) and the language's functions (``ops.FUNCTIONS``) from their declarations
and facts.  The package's ``__init__`` imports it first, so any ``autograd_cli.core`` module
sees a full table.
"""

from __future__ import annotations

from . import ops, ops_arrays
from .tensor import OPS

ops.KINKS.update(ops_arrays.KINKS)
ops.DIFFERENTIABLE.update(ops_arrays.DIFFERENTIABLE)
OPS.update(ops.op_table(ops._DECLARED, kinks=ops.KINKS, differentiable=ops.DIFFERENTIABLE))
ops.FUNCTIONS.update(ops.language_functions())
