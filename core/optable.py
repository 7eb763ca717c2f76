"""The op table, filled once from every module that declares ops.

:mod:`.ops` declares the elementwise ops, reductions, shapes and products and holds the
machinery (:class:`~.ops.Op`, :func:`~.ops.register`, the rule helpers); :mod:`.ops_arrays`
and :mod:`.ops_linalg` declare the array and linear-algebra functions with it.  This module
imports them all, then makes the table (``tensor.OPS``) and the language's functions
(``ops.FUNCTIONS``) from their declarations, which carry every fact about each op.  The
package's ``__init__`` imports it first, so any ``autograd_cli.core`` module sees a full
table.
"""

from __future__ import annotations

from . import ops, ops_arrays, ops_linalg  # noqa: F401  (the last two: their declarations)
from .tensor import OPS

OPS.update(ops.op_table(ops._DECLARED))
ops.FUNCTIONS.update(ops.language_functions())
