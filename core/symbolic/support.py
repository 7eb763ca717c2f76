"""What symbolic ``diff`` supports, and its errors.

Scope: scalar expressions of elementwise ops (arithmetic, the unary functions, ``max``/``min``
of two arguments, ``where``, comparisons).  Reductions, shape ops and products of arrays
raise :class:`UnsupportedDiffError`.
"""

from __future__ import annotations

from ..errors import UnsupportedError
from ..program import Expr
from ..tensor import OPS


class UnsupportedDiffError(UnsupportedError):
    """The expression uses an op the symbolic differentiator does not handle."""


class SimplifyBudgetExceeded(Exception):
    """The simplifier's step or time budget ran out (the caller keeps the unsimplified form)."""


# Ops the differentiator accepts: elementwise arithmetic and functions, where,
# comparisons (no gradient), and zeros_like (a rule may produce it).
def _supported(op_name: str) -> bool:
    op = OPS.get(op_name)
    return op is not None and op.kind in ("elementwise", "comparison", "constant")


def _unsupported(node: Expr) -> UnsupportedDiffError:
    spelled = {
        "amax": "max",
        "amin": "min",
        "getitem": "indexing",
        "stack": "array literals",
        "mT": "transpose",
    }.get(node.op, node.op)
    return UnsupportedDiffError(
        f"diff supports elementwise scalar expressions; use grad for {spelled} "
        f"(reductions, indexing, reshapes, matrix products and arrays have no symbolic form here)",
        op=node.op,
    )
