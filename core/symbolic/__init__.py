"""Symbolic differentiation: the derivative as an expression, from the same op table.

The package, by concern (each module imports only those listed before it):

* :mod:`.numbers`: exact rationals and IEEE floats, ops of the table applied to numbers;
* :mod:`.support`: what ``diff`` supports, and its errors;
* :mod:`.terms`: the canonical algebra's terms, and what a term's values can be;
* :mod:`.presentation`: canonical terms written back as Exprs a person reads (printing);
* :mod:`.algebra`: the constructors that simplify as they build, and :func:`simplify`;
* :mod:`.differentiation`: the reverse sweep over the op table's rules (:func:`grad_exprs`);
* :mod:`.command`: :func:`diff`, the command's whole computation (:class:`DiffResult`).

How it works
------------
1. **Differentiate** (:func:`grad_exprs`).  Reverse accumulation over the
   expression DAG, iteratively.  At each node the op table's own ``vjp`` rule
   is called, with :class:`Sym` values in place of tensors: a ``Sym`` wraps an
   :class:`~autograd_cli.core.program.Expr` and its operators and ``_call`` build
   new Expr nodes.  So the calculus is the op table's, written once; there is
   no second table of derivative rules here.  The new nodes are hash-consed
   (a subexpression built twice is one node), which is the common
   subexpression sharing, and trivially folded (``x*1``, ``x + 0``, numbers).

2. **Simplify** (:func:`simplify`).  The derivative graph is rebuilt in a
   canonical algebra (:class:`Algebra`), whose constructors do a fixed set of
   rewrites, each value-preserving at every point where the expression is
   defined and smooth:

   * constant folding with exact rationals (``1/3`` stays a third) and
     IEEE floats, using the engine's own forward functions;
   * n-ary sums: nested sums flattened, like terms collected with numeric
     coefficients (``2*x + 3*x -> 5*x``), zero terms dropped (``x + 0``), a
     numeric multiple of a sum distributed when it sits inside a sum
     (``2*(x + 1) + x -> 3*x + 2``; standing alone, ``6*(x + 2)`` keeps its
     factor); a product with a sum factor (or a small power of a short sum)
     expanded only when its terms meet other terms of the sum, so that like
     terms collect (``(16*cos(x) + 16*sin(x))*exp(x) - 16*exp(x)*sin(x)``
     becomes ``16*cos(x)*exp(x)``, while ``(x + 1)*cos(x) + sin(x)`` stays);
     ``where`` terms with the same condition merged into one ``where``;
   * n-ary products: numeric coefficient in front, powers of the same base
     collected (``x*x -> x**2``, ``x**a*x**b -> x**(a + b)`` when that cannot
     turn a nan into a number), ``x*1``, ``x*0`` (``0*log(x)`` keeps its nans),
     ``x**1``, ``x**0``,
     integer powers of products distributed, a factor moved into a ``where``
     with a zero branch (``k*where(c, p, 0) -> where(c, k*p, 0)``);
   * functions of numbers folded when the result is exact (``exp(0) -> 1``,
     ``sqrt(4) -> 2``), ``where`` with a constant condition or equal branches.

   "Value-preserving" is meant as SymPy means it: at isolated points (x = 0
   in ``x/x -> 1``, an inf meeting a 0 in ``0*x -> 0``) the simplified form
   may be defined where the input was not.  Never on a region, though: where the
   input is nan for every x < 0 (a log, a sqrt, a fractional or symbolic power)
   or 0 for every x > 0 (``x - abs(x)``), so is the result.  So ``(x**0.5)**2``,
   ``(x**y)**2`` and ``x**y*x**y`` keep their form (``x`` and ``x**(2*y)`` are
   numbers at x = -1, y = 1/2), a product's fraction exponents combine only into a
   fraction, and a term that can be nan on a region leaves a trace when it cancels:
   ``log(x) - log(x) -> 0*log(x)``, ``sqrt(x)/sqrt(x)`` stays, ``0*(1/0) -> nan``
   (see :meth:`Algebra.may_nan`).  The tests check every rule by evaluating
   before and after at random points, nan for nan (tests/test_simplify_property.py).

   The algebra's nodes are hash-consed, so equal subexpressions are one node
   and stay shared in the result.  Then the canonical form is written back as
   an Expr a person reads: numeric coefficient first, terms in descending
   degree, subtraction and division instead of negative coefficients and
   exponents (``a - -b -> a + b``), a positive term first where there is one.

   The work is bounded: every constructor charges the number of operands it
   touches against a budget proportional to the input's size, and a wall-clock
   deadline is checked as it goes.  When either runs out,
   :class:`SimplifyBudgetExceeded` is raised and :func:`diff` prints the
   unsimplified derivative with a note.

Nothing here recurses on the expression: every walk is over an explicit stack
or a topological order, so 100,000-deep inputs work.

Scope: scalar expressions of elementwise ops (arithmetic, the unary functions,
``max``/``min`` of two arguments, ``where``, comparisons).  Reductions, shape
ops and products of arrays raise :class:`UnsupportedDiffError`.

>>> from autograd_cli.grammar import parse
>>> diff(parse("3*a**3 - b**2")).texts()
{'a': '9*a**2', 'b': '-2*b'}
>>> diff(parse("3*(x + 2)**2"), "x").texts()
{'x': '6*(x + 2)'}
"""

from .algebra import MIN_STEPS, STEPS_PER_NODE, Algebra, simplify
from .command import (
    LARGE_TEXT,
    MAX_NODES,
    PREDICTED_MARGIN,
    TIME_BUDGET,
    Derivative,
    DiffResult,
    diff,
)
from .differentiation import Builder, Sym, grad_exprs, local_vjp
from .support import SimplifyBudgetExceeded, UnsupportedDiffError
from .support import _supported as _supported  # explain walks what diff supports

__all__ = [
    "diff",
    "simplify",
    "grad_exprs",
    "local_vjp",
    "Derivative",
    "DiffResult",
    "Sym",
    "Builder",
    "Algebra",
    "UnsupportedDiffError",
    "SimplifyBudgetExceeded",
    "LARGE_TEXT",
    "MAX_NODES",
    "MIN_STEPS",
    "PREDICTED_MARGIN",
    "STEPS_PER_NODE",
    "TIME_BUDGET",
]
