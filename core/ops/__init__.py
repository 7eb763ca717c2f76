"""The op table: every op's forward, derivative, printing and facts, each written once.

``table``        the machinery: :class:`Op` (an entry and every fact about it), :class:`Param`,
                 :class:`Printing`, :func:`register`, :func:`op_table`, the language's functions
``rules``        the helpers rules are written with (``chain``, ``where``, ``sum_to``...) and
                 the ones that make rules (``_unary``, ``_binary``, ``_at_zero``...)
``elementwise``  the elementwise ops, one line each; ``special``: their longer forwards
``shape``, ``reductions``, ``products``, ``arrays``, ``linalg``, ``svd``, ``fft``: the other
                 families

Importing this package declares every op (in this order, the table's order), then makes the
table (``tensor.OPS``) and the language's functions (:data:`FUNCTIONS`) once; the engine's
``__init__`` imports it first, so any ``autograd_cli.core`` module sees a full table.  The
names below are the ones the rest of the library and the tests take from ``core.ops``.
"""

# ruff: noqa: F401  (the names the library and the tests take from core.ops: re-exported)

from __future__ import annotations

# isort: off
# The families of ops, in the table's order: importing one declares its ops.
from . import elementwise, shape, reductions, products, arrays, linalg, svd, eigen, eig
from . import signal, fft
# isort: on

from ..tensor import OPS, apply, as_tensor
from .elementwise import _power
from .linalg import batch_label, einsum_subscripts
from .products import _matmul_forward
from .reductions import (
    KeywordParam,
    Word,
    _extreme_weights,
    _norm_partials,
    _prod_partials,
    norm_axes,
    norm_ord,
)
from .rules import (
    _all_finite,
    _any_zero,
    _xp,
    add_tangents,
    broadcast_to,
    call,
    chain,
    eq,
    expand_back,
    gt,
    lt,
    ne,
    reshape,
    sign,
    sqrt,
    sum_to,
    where,
    zeros_like,
)
from .shape import _scatter_forward, split_advanced, stack_shape
from .special import _cbrt_forward
from .table import (
    _DECLARED,
    ATOM,
    BOTTOM,
    CALL,
    COMPARE,
    FUNCTIONS,
    POWER,
    PRODUCT,
    REQUIRED,
    SUM,
    UNARY,
    Function,
    Op,
    Param,
    Printing,
    RuleContext,
    broadcast_size,
    function,
    infix,
    language_functions,
    op_table,
    register,
)

OPS.update(op_table(_DECLARED))
FUNCTIONS.update(language_functions())

__all__ = [
    "OPS",
    "Op",
    "Printing",
    "register",
    "chain",
    "sum_to",
    "broadcast_to",
    "where",
    "call",
    "as_tensor",
    "apply",
]
