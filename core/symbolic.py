"""Symbolic differentiation: the derivative as an expression, from the same op table.

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

from __future__ import annotations

import contextlib
import gc
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from . import backend
from .errors import InputError, LimitError, UnsupportedError
from .interpret import Dependence, interpret
from .ops import RuleContext
from .program import Expr, Program, topological, wrt_names
from .recording import evaluate
from .tensor import OPS

np = backend.host  # host-side scalar arithmetic (constant folding); arrays go through backend

# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Numbers: exact rationals where the input is exact, IEEE floats otherwise
# ---------------------------------------------------------------------------

_BIG = 1 << 62
_INF = math.inf


def _nice(v):
    """``v`` in canonical number form: a Fraction for short exact values (3, 2.5), else a float."""
    if isinstance(v, Fraction):
        if abs(v.numerator) > _BIG or v.denominator > _BIG:
            return _nice(float(v))
        return v
    v = float(v)
    if v - v != 0:  # inf or nan
        return v
    n, d = v.as_integer_ratio()
    if d <= (1 << 20) and abs(n) < (1 << 53):
        return Fraction(n, d)
    return v


def _ieee(fn, *args) -> float:
    with np.errstate(all="ignore"):
        return float(fn(*(np.float64(a) for a in args)))


def _is_exact(v) -> bool:
    return isinstance(v, Fraction)


def _is_int(v) -> bool:
    return isinstance(v, Fraction) and v.denominator == 1


# Python's float + and * are IEEE double operations (overflow gives inf, never an
# exception), the same as NumPy's float64; only ** needs NumPy's semantics.
def n_add(a, b):
    if _is_exact(a) and _is_exact(b):
        return _nice(a + b)
    return _nice(float(a) + float(b))


def n_mul(a, b):
    if _is_exact(a) and _is_exact(b):
        return _nice(a * b)
    return _nice(float(a) * float(b))


def n_pow(a, b):
    """``a**b`` with NumPy's float semantics (0**-1 = inf, (-8)**(1/3) = nan), exact when it can be."""
    if _is_exact(a) and _is_int(b):
        e = int(b)
        if a == 0:
            return Fraction(1) if e == 0 else (Fraction(0) if e > 0 else _INF)
        bits = max(a.numerator.bit_length(), a.denominator.bit_length())
        if abs(e) * bits <= 256:
            return _nice(a**e)
    return _nice(_ieee(np.power, a, b))


def _nkey(v) -> tuple:
    if isinstance(v, Fraction):
        return ("q", v.numerator, v.denominator)
    return ("f", repr(float(v)))


ZERO = Fraction(0)
ONE = Fraction(1)

# ---------------------------------------------------------------------------
# The canonical algebra
# ---------------------------------------------------------------------------

NUM, VAR, NAMED, ADD, MUL, FN = "num", "var", "named", "add", "mul", "fn"

# Order of factors in a printed product: numbers' powers, atoms, sums, functions.
_FACTOR_RANK = {NUM: 0, VAR: 1, NAMED: 1, MUL: 2, ADD: 3, FN: 4}
_LABEL_MAX = 40


class Term:
    """A node of the canonical algebra; hash-consed, so ``is`` is structural equality.

    ``kind`` is one of NUM (``data`` a number), VAR (``data`` a name), NAMED (a
    named constant: ``data`` = (name, value)), ADD (``data`` = (constant,
    coefficients), ``args`` the terms), MUL (``data`` = (coefficient,
    exponents), ``args`` the bases) or FN (``data`` the op name).
    """

    __slots__ = ("kind", "uid", "args", "data", "degree", "label")

    def __init__(self, kind, uid, args, data, degree, label):
        self.kind = kind
        self.uid = uid
        self.args = args
        self.data = data
        self.degree = degree
        self.label = label

    def children(self) -> tuple:
        if self.kind == MUL:
            return self.args + self.data[1]
        return self.args

    def __repr__(self) -> str:
        return f"Term({self.kind}, {self.label!r})"


def _is_num(t: Term, value=None) -> bool:
    return t.kind == NUM and (value is None or t.data == value)


def _is_int_term(t: Term) -> bool:
    return t.kind == NUM and _is_int(t.data)


class Algebra:
    """Constructors of canonical terms; each applies the simplification rules as it builds.

    ``budget`` is the number of operand visits allowed (None: ``max(200000, 64 * n)``
    for an input of n nodes, set by :meth:`from_expr`; ``math.inf``: unlimited) and
    ``deadline`` a ``time.monotonic()`` value; past either,
    :class:`SimplifyBudgetExceeded` is raised.
    """

    def __init__(self, budget: int | None = None, deadline: float | None = None):
        self.table: dict = {}
        self.uid = 0
        self.budget = budget
        self.deadline = deadline
        self.steps = 0
        self._next_check = 4096
        self._stripped: dict[int, Term] = {}
        self._nan: dict[int, bool] = {}
        self._cval: dict[int, float | None] = {}
        self._vanish: dict[int, bool] = {}
        self._piecewise: dict[int, bool] = {}

    # ---- where a term can be nan ---------------------------------------------
    def may_nan(self, t: Term) -> bool:
        """Whether ``t`` can be nan (or infinite) on a whole region of finite inputs, not
        only at isolated points.

        ``log(x)``, ``sqrt(x)``, ``x**0.5`` and ``x**y`` are nan for every x < 0, ``1/0``
        and ``log(0)`` are infinite everywhere (so ``1/0 - 1/0`` is nan), and so
        is anything that takes them as an operand (a ``where`` only through its branches,
        a comparison never).  A rule that would drop such a term (``log(x) - log(x)``,
        ``0*sqrt(x)``, ``sqrt(x)/sqrt(x)``) would turn those nans into numbers, so the
        algebra keeps a trace of it instead (``0*log(x)``, ``sqrt(x)/sqrt(x)``).
        Conservative, cached, iterative.  Overflow (``exp(1000) - exp(1000)``) is not counted.

        The same walk finds the terms that can be 0 on a whole region (:meth:`may_vanish`):
        ``1/(x - abs(x))`` is infinite for every x > 0.
        """
        memo = self._nan
        got = memo.get(t.uid)
        if got is not None:
            return got
        stack = [(t, False)]
        while stack:
            u, ready = stack.pop()
            if u.uid in memo:
                continue
            if not ready:
                stack.append((u, True))
                stack.extend((c, False) for c in u.children() if c.uid not in memo)
                continue
            value = self._cval[u.uid] = _constant_value(u, self._cval)
            if value is not None:  # no variables: nan or infinite is decided, here it is
                self._vanish[u.uid] = value == 0 or not math.isfinite(value)
                self._piecewise[u.uid] = False
                memo[u.uid] = not math.isfinite(value)
            else:
                self._piecewise[u.uid] = (u.kind == FN and _fn_fact(u.data, "piecewise")) or any(
                    self._piecewise[c.uid] for c in u.children()
                )
                self._vanish[u.uid] = _local_may_vanish(u, self._vanish, self._piecewise)
                memo[u.uid] = _local_may_nan(u, memo, self._cval, self._vanish)
        return memo[t.uid]

    def may_vanish(self, t: Term) -> bool:
        """Whether ``t`` can be 0 (or, a constant, infinite) on a whole region: the number 0,
        or a term built on a piecewise function (``x - abs(x)`` for x > 0, ``relu(-x)``,
        ``(x > 0)``, ``floor(x)``; not ``abs(x)`` itself).  Then ``t**-1`` is infinite
        there, and ``t**2*t**-1`` (0*inf, nan) is not ``t``.  Other terms are 0 only at
        points (conservatively)."""
        self.may_nan(t)
        return self._vanish[t.uid]

    def _constant(self, t: Term) -> bool:
        """Whether ``t`` has no variables (after :meth:`may_nan` has seen it)."""
        self.may_nan(t)
        return self._cval[t.uid] is not None

    def _factor_may_nan(self, b: Term, e: Term) -> bool:
        """Whether the factor ``b**e`` can be nan (or infinite) on a region."""
        self.may_nan(b)
        self.may_nan(e)
        return _factor_fails(b, e, self._nan, self._cval, self._vanish)

    def _nan_part(self, t: Term) -> Term:
        """The factors of ``t`` that can be nan (all of ``t`` unless it is a product)."""
        if t.kind != MUL:
            return t
        return self.mul(ONE, self._trace_factors(zip(t.args, t.data[1])))

    def _trace_factors(self, factors) -> list:
        """The factors that can be nan, a whole exponent taken down to its sign (b**-2 is
        nan or infinite where b**-1 is): what 0*product keeps of a product."""
        out: list = []
        for b, e in factors:
            if self._factor_may_nan(b, e):
                if _is_int_term(e):
                    e = self.num(ONE if e.data > 0 else -ONE)
                if not any(b is b2 and e is e2 for b2, e2 in out):
                    out.append((b, e))
        return out

    def _reaches(self, roots: list, target: Term, limit: int = 256) -> bool:
        """Whether a nan in ``target`` reaches one of ``roots`` (a bounded search)."""
        seen: set[int] = set()
        stack = list(roots)
        while stack and len(seen) < limit:
            u = stack.pop()
            if u is target:
                return True
            if u.uid in seen:
                continue
            seen.add(u.uid)
            if u.kind == FN and (u.data in _COMPARISONS or u.data == "where"):
                continue  # a comparison is never nan; a where's branch only where taken
            stack.extend(u.children())
        self.spend(len(seen))
        return False

    def _remnants(self, gone: list, kept: list) -> list:
        """Traces of cancelled terms that can be nan: their nan parts, less those a nan of
        which already reaches the sum (log(x)**2 + 0*log(x) is log(x)**2) or another trace."""
        parts: dict[int, Term] = {}
        for t in gone:
            r = self._nan_part(t)
            if r.kind != NUM or not math.isfinite(r.data):
                parts.setdefault(r.uid, r)
        out = []
        for r in parts.values():
            others = [t for _, t in kept] + [q for q in parts.values() if q is not r]
            if r.kind == MUL:
                pieces = [self.mul(ONE, [(b, e)]) for b, e in zip(r.args, r.data[1])]
            else:
                pieces = [r]
            if not all(self._reaches(others, q) for q in pieces):
                out.append(r)
        return out

    # ---- bookkeeping ---------------------------------------------------------
    def spend(self, n: int) -> None:
        self.steps += n
        if self.budget is not None and self.steps > self.budget:
            raise SimplifyBudgetExceeded(f"{self.steps} steps")
        if self.steps >= self._next_check:
            self._next_check = self.steps + 4096
            if self.deadline is not None and time.monotonic() > self.deadline:
                raise SimplifyBudgetExceeded("time")

    def _intern(self, key, kind, args, data, degree, label) -> Term:
        t = self.table.get(key)
        if t is None:
            self.uid += 1
            t = Term(kind, self.uid, args, data, degree, label[:_LABEL_MAX])
            self.table[key] = t
        return t

    # ---- atoms ---------------------------------------------------------------
    def num(self, v) -> Term:
        v = _nice(v)
        key = ("n",) + _nkey(v)
        t = self.table.get(key)
        return t if t is not None else self._intern(key, NUM, (), v, 0, _num_label(v))

    def var(self, name: str) -> Term:
        return self._intern(("v", name), VAR, (), name, 1, name)

    def named(self, name: str, value: float) -> Term:
        return self._intern(("c", name), NAMED, (), (name, value), 0, name)

    def const(self, value) -> Term:
        """A constant of an Expr: pi, e, log(2) and log(10) keep their names."""
        if isinstance(value, (list, tuple)):
            raise UnsupportedDiffError(
                "diff supports elementwise scalar expressions; use grad for array literals",
                op="const",
            )
        v = float(value)
        if v == math.pi:
            return self.named("pi", math.pi)
        if v == math.e:
            return self.named("e", math.e)
        if v == _LN2:
            return self.fn("log", (self.num(2),))
        if v == _LN10:
            return self.fn("log", (self.num(10),))
        return self.num(v)

    # ---- sums ----------------------------------------------------------------
    def _strip(self, t: Term) -> Term:
        """A MUL term without its numeric coefficient (cached)."""
        s = self._stripped.get(t.uid)
        if s is None:
            s = self.mul(ONE, list(zip(t.args, t.data[1])))
            self._stripped[t.uid] = s
        return s

    def _gather(self, acc: dict, items: list, const):
        """Add ``items`` ((coefficient, term) pairs) into ``acc``; returns the new constant.

        Nested sums are flattened, numbers folded into the constant, numeric
        coefficients taken off products (so 2*x and 3*x meet as x), and a
        numeric multiple of a sum distributed: 2*(x + 1) + x -> 3*x + 2.
        """
        pending = list(items)
        self.spend(len(pending) + 1)
        while pending:
            c, t = pending.pop()
            c = _nice(c)
            if c == 0 and not self.may_nan(t):
                continue  # 0*t with t a number wherever defined (a trace is kept otherwise)
            kind = t.kind
            if kind == NUM:
                const = n_add(const, n_mul(c, t.data))
            elif kind == ADD:
                tconst, coefs = t.data
                self.spend(len(coefs))
                const = n_add(const, n_mul(c, tconst))
                for ci, ti in zip(coefs, t.args):
                    _accumulate(acc, ti, n_mul(c, ci))
            elif kind == MUL and t.data[0] != 1:
                pending.append((n_mul(c, t.data[0]), self._strip(t)))
            else:
                _accumulate(acc, t, c)
        return const

    def _monomials(self, items: list) -> list:
        """(coefficient, term) pairs with the coefficients taken off products (for matching)."""
        out = []
        for c, t in items:
            if t.kind == MUL and t.data[0] != 1:
                c, t = n_mul(c, t.data[0]), self._strip(t)
            out.append((c, t))
        return out

    def _expand_product(self, t: Term):
        """``k*(a + b + c0)`` (one sum factor of a product, or a small power of a short sum)
        as monomials [(1, k*a), (1, k*b), (c0, k)]; None if it has no such factor."""
        coeff, exps = t.data
        for j, (b, e) in enumerate(zip(t.args, exps)):  # noqa: B007 (j is used after the loop)
            if b.kind != ADD:
                continue
            if _is_num(e, 1) and len(b.args) <= EXPAND_MAX_TERMS:
                break
            if (
                _is_int_term(e)
                and 1 < e.data <= EXPAND_MAX_POWER
                and len(b.args) + (b.data[0] != 0) <= 3
            ):
                break
        else:
            return None
        rest = self.mul(coeff, [(b, e) for k, (b, e) in enumerate(zip(t.args, exps)) if k != j])
        poly = self._sum_items(t.args[j])
        for _ in range(int(exps[j].data) - 1):
            poly = self._sum_items(self.add(self._times(poly, self._sum_items(t.args[j]))))
        items = self._times([(ONE, rest)], poly)
        self.spend(len(items))
        return self._monomials(items)

    def _sum_items(self, s: Term) -> list:
        """A sum's terms as (coefficient, term) pairs, its constant as (c, 1)."""
        if s.kind != ADD:
            return [(ONE, s)]
        const, coefs = s.data
        items = list(zip(coefs, s.args))
        if const != 0:
            items.append((const, self.num(ONE)))
        return items

    def _times(self, xs: list, ys: list) -> list:
        one = self.num(ONE)
        self.spend(len(xs) * len(ys))
        return [
            (n_mul(cx, cy), self.mul(ONE, [(x, one), (y, one)])) for cx, x in xs for cy, y in ys
        ]

    def _expand_where_needed(self, acc: dict, const):
        """Expand products of sums whose monomials meet other terms, so like terms collect.

        (16*cos(x) + 16*sin(x))*exp(x) - 16*exp(x)*sin(x) -> 16*cos(x)*exp(x);
        but (x + 1)*cos(x) + sin(x) keeps its factor, having nothing to collect.
        """
        plans = []
        counts: dict[int, int] = {uid: 1 for uid in acc}
        for c, t in list(acc.values()):
            if t.kind != MUL or c == 0:
                continue
            monomials = self._expand_product(t)
            if monomials is None:
                continue
            plans.append((t, monomials))
            for _, m in monomials:
                if m.kind != NUM:
                    counts[m.uid] = counts.get(m.uid, 0) + 1
        for t, monomials in plans:
            if any(m.kind != NUM and counts[m.uid] >= 2 for _, m in monomials):
                c = acc.pop(t.uid)[0]
                const = self._gather(acc, [(n_mul(c, ci), m) for ci, m in monomials], const)
        return const

    def _merge_wheres(self, acc: dict, const):
        """Merge the where() terms that share a condition.

        where(c, p, q) + where(c, r, s) = where(c, p + r, q + s), exactly.
        """
        groups: dict[int, list] = {}
        for uid, (c, t) in acc.items():
            if t.kind == FN and t.data == "where" and c != 0:
                groups.setdefault(t.args[0].uid, []).append(uid)
        for uids in groups.values():
            if len(uids) < 2:
                continue
            slots = [acc.pop(uid) for uid in uids]
            cond = slots[0][1].args[0]
            taken = self.add([(c, t.args[1]) for c, t in slots])
            other = self.add([(c, t.args[2]) for c, t in slots])
            # The merged term may be a number, a sum or carry a coefficient: gather it.
            const = self._gather(acc, [(ONE, self.fn("where", (cond, taken, other)))], const)
        return const

    def add(self, items: Iterable[tuple], const=ZERO) -> Term:
        """The sum ``const + sum(c*t for c, t in items)``, canonical."""
        acc: dict[int, list] = {}
        const = self._gather(acc, list(items), _nice(const))
        if const != const:
            return self.num(math.nan)  # nan + anything is nan
        if len(acc) > 1:
            const = self._expand_where_needed(acc, const)
            const = self._merge_wheres(acc, const)
        items_out = [(c, t) for c, t in acc.values() if c != 0]
        gone = [t for c, t in acc.values() if c == 0 and self.may_nan(t)]
        if gone:
            # log(x) - log(x) is nan for x < 0, not 0: the cancelled term stays as 0*log(x).
            traces = self._remnants(gone, items_out)
            if any(self._constant(r) for r in traces):
                return self.num(math.nan)  # log(0) - log(0), 1/0 - 1/0: nan everywhere
            items_out.extend((ZERO, r) for r in traces)
        if not items_out:
            return self.num(const)
        if len(items_out) == 1 and const == 0:
            c, t = items_out[0]
            return t if c == 1 else self.mul(c, [(t, self.num(ONE))])
        items_out.sort(key=lambda ct: ct[1].uid)
        key = ("a", _nkey(const)) + tuple((t.uid,) + _nkey(c) for c, t in items_out)
        got = self.table.get(key)
        if got is not None:
            return got
        ordered = sorted(items_out, key=lambda ct: (-ct[1].degree, ct[1].label, ct[1].uid))
        degree = max(t.degree for _, t in items_out)
        label = "+".join(_coef_label(c) + t.label for c, t in ordered[:4])
        coefs = tuple(c for c, _ in items_out)
        terms = tuple(t for _, t in items_out)
        return self._intern(key, ADD, terms, (const, coefs), degree, label)

    # ---- products ------------------------------------------------------------
    def mul(self, coeff, items: Iterable[tuple]) -> Term:
        """The product ``coeff * prod(b**e for b, e in items)``, canonical."""
        coeff = _nice(coeff)
        factors: dict[int, list] = {}  # base uid -> [base, [exponents...]]
        pending = list(items)
        self.spend(len(pending) + 1)
        while pending:
            b, e = pending.pop()
            if _is_num(e, 0):
                continue  # x**0 = 1 for every x, nan and inf included
            if b.kind == NUM:
                if b.data == 1:
                    continue  # 1**x = 1 for every x
                if e.kind == NUM:
                    r = n_pow(b.data, e.data)
                    if _is_exact(r) or not (_is_exact(b.data) and _is_exact(e.data)):
                        coeff = n_mul(coeff, r)
                        continue
            elif b.kind == MUL and _is_int_term(e):
                expanded = self._power_of_product(b, e)
                if expanded is not None:
                    c, parts = expanded
                    # the inner product's factors are work too: without this a product of
                    # products went unpaid, and the deadline, checked by spend(), came late
                    self.spend(len(parts))
                    coeff = n_mul(coeff, c)
                    pending.extend(parts)
                    continue
            _add_factor(self, factors, b, e)
        if coeff != coeff:
            return self.num(math.nan)  # nan*anything is nan
        flat = []
        for base, exps in factors.values():
            for e in exps:
                if not _is_num(e, 0):
                    flat.append((base, e))
                elif self.may_nan(base) or self.may_vanish(base):
                    # b**a*b**-a is nan where b is (sqrt(x)/sqrt(x) for x < 0), or 0 on a
                    # region ((x > 0)/(x > 0) for x <= 0): it stays b/b.
                    flat.append((base, self.num(ONE)))
                    flat.append((base, self.num(-ONE)))
        if coeff == 0:
            # 0*log(x) is nan for x < 0: the factors that can be nan stay, times 0.
            flat = self._trace_factors(flat)
            if not flat:
                return self.num(ZERO)
            if any(self._constant(b) and self._constant(e) for b, e in flat):
                return self.num(math.nan)  # 0*0**-1 (0/(x - x)), 0*log(0): 0*inf is nan
        if not flat:
            return self.num(coeff)
        if coeff == 1 and len(flat) == 1 and _is_num(flat[0][1], 1):
            return flat[0][0]
        pushed = self._into_where(coeff, flat)
        if pushed is not None:
            return pushed
        flat.sort(key=lambda be: (be[0].uid, be[1].uid))
        key = ("m", _nkey(coeff)) + tuple((b.uid, e.uid) for b, e in flat)
        got = self.table.get(key)
        if got is not None:
            return got
        degree = 0.0
        for b, e in flat:
            degree += b.degree * (float(e.data) if e.kind == NUM else 1.0)
        ordered = sorted(flat, key=_factor_order)
        label = "*".join(b.label + ("" if _is_num(e, 1) else "^" + e.label) for b, e in ordered[:4])
        return self._intern(
            key, MUL, tuple(b for b, _ in flat), (coeff, tuple(e for _, e in flat)), degree, label
        )

    def _into_where(self, coeff, flat: list):
        """``k*where(c, p, 0)`` as ``where(c, k*p, 0)`` (so where-terms can merge in sums)."""
        for i, (b, e) in enumerate(flat):
            if (
                b.kind == FN
                and b.data == "where"
                and _is_num(e, 1)
                and (_is_num(b.args[1], 0) or _is_num(b.args[2], 0))
            ):
                rest = self.mul(coeff, flat[:i] + flat[i + 1 :])
                one = self.num(ONE)
                return self.fn(
                    "where",
                    (
                        b.args[0],
                        self.mul(ONE, [(rest, one), (b.args[1], one)]),
                        self.mul(ONE, [(rest, one), (b.args[2], one)]),
                    ),
                )
        return None

    def _power_of_product(self, b: Term, e: Term):
        """``(c*x**a*...)**n`` for an integer n as ``c**n * x**(a*n) * ...``, or None if unsafe."""
        n = e.data
        c, exps = b.data
        if c == 0 and n < 0:
            return None  # (0*log(x))**-1: no 1/0 coefficient
        parts = []
        for base, x in zip(b.args, exps):
            if x.kind == NUM:
                y = n_mul(x.data, n)
                # (x**a)**n = x**(a*n) unless a is fractional and a*n whole ((x**0.5)**2 != x for x < 0).
                if not _is_int(x.data) and _is_int(y) and not _nonneg(base):
                    return None
                parts.append((base, self.num(y)))
            else:
                # A symbolic a may be 0.5 where a*n is whole ((x**y)**2 != x**(2*y) at y = 0.5,
                # x < 0); only n = +-1 keeps a*n whole exactly when a is, unless x >= 0.
                if abs(n) != 1 and not _nonneg(base):
                    return None
                parts.append((base, self.mul(n, [(x, self.num(ONE))])))
        return n_pow(c, n), parts

    def pow(self, a: Term, b: Term) -> Term:
        return self.mul(ONE, [(a, b)])

    # ---- functions -----------------------------------------------------------
    def fn(self, name: str, args: Sequence[Term]) -> Term:
        args = tuple(args)
        self.spend(len(args) + 1)
        if name == "where":
            cond, a, b = args
            if a is b:
                return a
            if cond.kind == NUM:
                return a if cond.data != 0 else b
        if all(a.kind == NUM for a in args) and name in OPS:
            folded = _fold(name, [a.data for a in args])
            if folded is not None:
                return self.num(folded)
        key = ("f", name) + tuple(a.uid for a in args)
        label = name + "(" + ",".join(a.label for a in args[:3]) + ")"
        return self._intern(key, FN, args, name, 0, label)

    # ---- from an Expr --------------------------------------------------------
    def from_expr(self, root: Expr) -> Term:
        """The canonical term of ``root`` (iterative; sums and products are gathered whole)."""
        order = topological([root])
        if self.budget is None:  # the default budget: linear in the input's size
            self.budget = self.steps + max(MIN_STEPS, STEPS_PER_NODE * len(order))
        refs: dict[int, int] = {}
        parent_op: dict[int, str] = {}
        for node in order:
            if node.op not in ("const", "var") and not _supported(node.op):
                raise _unsupported(node)
            for a in node.args:
                refs[id(a)] = refs.get(id(a), 0) + 1
                parent_op[id(a)] = node.op
        # A sum (product) node used once, by a sum (product), is gathered into its user:
        # a chain of 100,000 additions becomes one n-ary sum, in linear time.
        inner = set()
        for node in order:
            fam = _FAMILY.get(node.op)
            if (
                fam is not None
                and refs.get(id(node)) == 1
                and _FAMILY.get(parent_op[id(node)]) == fam
            ):
                inner.add(id(node))
        terms: dict[int, Term] = {}
        for node in order:
            if id(node) in inner:
                continue
            op = node.op
            if op == "const":
                t = self.const(node.value)
            elif op == "var":
                assert node.name is not None  # a "var" node always has a name (Expr.var)
                t = self.var(node.name)
            elif _FAMILY.get(op) == "sum":
                items = []
                stack = [(node, ONE)]
                while stack:
                    n, c = stack.pop()
                    if n is node or id(n) in inner:
                        if n.op == "add":
                            stack.append((n.args[1], c))
                            stack.append((n.args[0], c))
                        elif n.op == "sub":
                            stack.append((n.args[1], -c))
                            stack.append((n.args[0], c))
                        else:  # neg
                            stack.append((n.args[0], -c))
                    else:
                        items.append((c, terms[id(n)]))
                t = self.add(items)
            elif _FAMILY.get(op) == "prod":
                # Not `items`/`stack`: the sum branch above types those with Fraction coefficients.
                factors = []
                one, minus_one = self.num(ONE), self.num(-ONE)
                pending = [(node, one)]
                while pending:
                    n, e = pending.pop()
                    if n is node or id(n) in inner:
                        pending.append(
                            (n.args[1], e if n.op == "mul" else (minus_one if e is one else one))
                        )
                        pending.append((n.args[0], e))
                    else:
                        factors.append((terms[id(n)], e))
                t = self.mul(ONE, factors)
            elif op == "pow":
                t = self.pow(terms[id(node.args[0])], terms[id(node.args[1])])
            elif op == "zeros_like":
                t = self.num(ZERO)
            else:
                t = self.fn(op, [terms[id(a)] for a in node.args])
            terms[id(node)] = t
        return terms[id(root)]

    # ---- back to an Expr -----------------------------------------------------
    def to_expr(self, root: Term) -> Expr:
        """``root`` written as an Expr a person reads (coefficients first, ``-`` and ``/``)."""
        built: dict[int, Expr] = {}
        order = _term_order(root)
        for t in order:
            built[t.uid] = _present(t, built)
        return built[root.uid]


_COMPARISONS = ("lt", "le", "gt", "ge", "eq", "ne")
EXPAND_MAX_TERMS = 64  # a product's sum factor is expanded into a sum only up to this size
EXPAND_MAX_POWER = 8  # ... and a power of a sum of at most 3 terms up to this exponent

_FAMILY = {"add": "sum", "sub": "sum", "neg": "sum", "mul": "prod", "div": "prod"}
_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


def _num_label(v) -> str:
    if isinstance(v, Fraction):
        return str(v)
    return repr(v)


def _coef_label(c) -> str:
    return "" if c == 1 else _num_label(c) + "*"


def _accumulate(acc: dict, t: Term, c) -> None:
    slot = acc.get(t.uid)
    if slot is None:
        acc[t.uid] = [c, t]
    else:
        slot[0] = n_add(slot[0], c)


def _add_factor(alg: Algebra, factors: dict, b: Term, e: Term) -> None:
    slot = factors.get(b.uid)
    if slot is None:
        factors[b.uid] = [b, [e]]
        return
    exps = slot[1]
    for i, old in enumerate(exps):
        combined = _combine_exponents(alg, b, old, e)
        if combined is not None:
            exps[i] = combined
            return
    exps.append(e)


def _combine_exponents(alg: Algebra, x: Term, a: Term, b: Term):
    """``a + b`` if ``x**a * x**b == x**(a + b)`` wherever the left side is defined, else None.

    Whole exponents combine, and so does anything for a base that is never negative.
    Otherwise the sum must be whole exactly when both exponents are: for
    x < 0, x**0.5 * x**0.5 is nan but x**1 is not.  So two fractions combine only into
    a fraction, and a symbolic exponent only with a whole number (x**y*x**2 is
    x**(y + 2), but x**y*x**y stays: at y = 0.5 it is nan for x < 0, x**(2*y) is not).
    """
    numeric = a.kind == NUM and b.kind == NUM
    if alg.may_vanish(x):
        # Where x is 0, x**a*x**b is 0*inf, nan, for exponents of opposite signs: fine at
        # a point (x**2/x -> x), not for a base that is 0 on a region (relu(x)**2/relu(x)
        # for x < 0, the number 0).
        if not numeric or (a.data > 0) != (b.data > 0):
            return None
    elif alg.may_nan(x) and not numeric:
        return None  # log(x)**y*log(x)**-y is nan for x < 0; log(x)**0 is 1
    if _is_int_term(a) and _is_int_term(b):
        return alg.num(a.data + b.data)
    if _nonneg(x):
        return alg.add([(ONE, a), (ONE, b)])
    if not (_is_int_term(a) or _is_int_term(b) or numeric):
        return None
    s = alg.add([(ONE, a), (ONE, b)])
    if _is_int_term(s):
        return None
    return s


# What the simplifier knows of a function's values is on its op (Op.total, Op.nonneg,
# Op.piecewise): a number at every finite input (sin; not log, sqrt, gamma, nan on a
# region), never negative (exp, hypot), or constant on whole regions (abs, floor, max).


def _fn_fact(name: str, fact: str) -> bool:
    """The fact ``fact`` ("total", "nonneg", "piecewise") of the function ``name``."""
    op = OPS.get(name)
    return op is not None and getattr(op, fact)


def _nonneg(t: Term) -> bool:
    """Whether ``t`` is never negative (it may be nan): ``t**0.5`` is nan only where ``t`` is."""
    if t.kind == NUM:
        return t.data >= 0
    if t.kind == NAMED:
        return t.data[1] >= 0
    if t.kind == FN:
        return _fn_fact(t.data, "nonneg")  # comparisons too: 0 or 1
    if t.kind == MUL:
        return t.data[0] > 0 and all(
            (_is_int_term(e) and e.data % 2 == 0) or (b.kind != MUL and _nonneg(b))
            for b, e in zip(t.args, t.data[1])
        )
    return False


def _factor_fails(b: Term, e: Term, memo: dict, values: dict, vanish: dict) -> bool:
    """Whether the factor ``b**e`` can be nan or infinite on a region (``memo``: may_nan of
    ``b`` and ``e``; ``values``: their values if constant; ``vanish``: may_vanish): x**0.5
    and (-1)**y for a fractional exponent, 0**-1, 0**y, 1/relu(x)."""
    vb, ve = values[b.uid], values[e.uid]
    if vb is not None and ve is not None:  # a constant: exp(1/0)**-1 is 0, a number
        with np.errstate(all="ignore"):
            return not math.isfinite(float(np.power(np.float64(vb), np.float64(ve))))
    if memo[b.uid] or memo[e.uid]:
        return True
    if not _is_int_term(e) and not _nonneg(b):
        return True
    if vanish[b.uid]:
        return not (e.kind == NUM and e.data > 0)
    return False


def _local_may_vanish(t: Term, vanish: dict, piecewise: dict) -> bool:
    """:meth:`Algebra.may_vanish` of a term with variables, given its children's
    (``piecewise``: whether a term has a piecewise function in it)."""
    kind = t.kind
    if kind in (VAR, NAMED, NUM):
        return False
    if kind == ADD:  # a sum of piecewise terms may cancel on a region: x - abs(x)
        return any(piecewise[c.uid] for c in t.args)
    if kind == MUL:
        return t.data[0] == 0 or any(vanish[c.uid] for c in t.children())
    if t.data in ("abs", "sign", "neg"):
        return vanish[t.args[0].uid]  # 0 exactly where the argument is
    if _fn_fact(t.data, "piecewise"):
        return True
    return t.data != "exp" and any(piecewise[c.uid] for c in t.args)  # sin(relu(x))


def _local_may_nan(t: Term, memo: dict, values: dict, vanish: dict) -> bool:
    """:meth:`Algebra.may_nan` of ``t``, given its children's."""
    kind = t.kind
    if kind == NUM:
        return not math.isfinite(t.data)  # nan, or inf: inf - inf and 0*inf are nan
    if kind in (VAR, NAMED):
        return False
    if kind == ADD:
        const = t.data[0]
        return const != const or any(memo[a.uid] for a in t.args)
    if kind == MUL:
        return not math.isfinite(t.data[0]) or any(
            _factor_fails(b, e, memo, values, vanish) for b, e in zip(t.args, t.data[1])
        )
    name = t.data
    if name in _COMPARISONS:
        return False  # nan < 0 is false, a number
    if name == "where":
        return memo[t.args[1].uid] or memo[t.args[2].uid]
    return not _fn_fact(name, "total") or any(memo[a.uid] for a in t.args)


def _constant_value(t: Term, values: dict):
    """The float value of a term without variables (log(2), 2**(1/2), 1/0), given its
    children's (``values``: uid -> float or None); None for a term with variables."""
    kind = t.kind
    if kind == NUM:
        return float(t.data)
    if kind == NAMED:
        return float(t.data[1])
    if kind == VAR:
        return None
    kids = [values[c.uid] for c in t.children()]
    if any(v is None for v in kids):
        return None
    with np.errstate(all="ignore"):
        if kind == ADD:
            const, coefs = t.data
            return float(np.float64(const) + sum(np.float64(c) * v for c, v in zip(coefs, kids)))
        if kind == MUL:
            coeff, exps = t.data
            out = np.float64(coeff)
            for b, e in zip(t.args, exps):
                out = out * np.power(np.float64(values[b.uid]), np.float64(values[e.uid]))
            return float(out)
    return _fold_float(t.data, kids)


def _factor_order(be) -> tuple:
    b, e = be
    return (_FACTOR_RANK[b.kind], b.label, b.uid, e.uid)


_EXACT_FOLD = (
    "abs",
    "sign",
    "relu",
    "floor",
    "ceil",
    "round",
    "maximum",
    "minimum",
    "where",
    "lt",
    "le",
    "gt",
    "ge",
    "eq",
    "ne",
    "neg",
    "add",
    "sub",
    "mul",
)


def _fold(name: str, values: list):
    """The op applied to numbers with the engine's forward, or None when the result is inexact.

    ``exp(0)`` folds to 1 and ``sqrt(4)`` to 2; ``sqrt(2)`` and ``log(2)`` stay
    symbolic (their exact inputs would turn into a rounded float).
    """
    r = _fold_float(name, values)
    if r is None:
        return None
    if not all(_is_exact(v) for v in values) or name in _EXACT_FOLD:
        return _nice(r)
    nice = _nice(r)
    if _is_exact(nice) and (nice.denominator <= 1024 or nice == 0):
        return nice
    return None


def _term_order(root: Term) -> list[Term]:
    order: list[Term] = []
    seen: set[int] = set()
    stack: list = [(root, False)]
    while stack:
        t, expanded = stack.pop()
        if expanded:
            order.append(t)
            continue
        if t.uid in seen:
            continue
        seen.add(t.uid)
        stack.append((t, True))
        for c in reversed(t.children()):
            if c.uid not in seen:
                stack.append((c, False))
    return order


# ---- presentation: canonical terms written back as Exprs -------------------


def _number_expr(v) -> Expr:
    """A number as an Expr: a float constant, or (-)p/q for a non-integer fraction."""
    if isinstance(v, Fraction) and v.denominator != 1:
        return Expr("div", (Expr.const(float(v.numerator)), Expr.const(float(v.denominator))))
    return Expr.const(float(v))


def _left_spine(e: Expr) -> list[Expr]:
    """``e`` and its leftmost operands down through products and quotients (iteratively)."""
    spine = [e]
    while spine[-1].op in ("mul", "div"):
        spine.append(spine[-1].args[0])
    return spine


def _rebuild_spine(spine: list[Expr], leaf: Expr) -> Expr:
    out = leaf
    for node in reversed(spine[:-1]):
        out = Expr(node.op, (out, node.args[1]))
    return out


def _negate_leftmost(e: Expr) -> Expr:
    """``-e`` written by negating its leftmost factor: -2*x, -x**2/3, -sin(x)*y."""
    spine = _left_spine(e)
    leaf = spine[-1]
    if leaf.op == "const" and not isinstance(leaf.value, (list, tuple)):
        return _rebuild_spine(spine, Expr.const(-leaf.value))
    return _rebuild_spine(spine, Expr("neg", (leaf,)))


def _is_negative_expr(e: Expr) -> bool:
    leaf = _left_spine(e)[-1]
    return leaf.op == "neg" or (
        leaf.op == "const" and not isinstance(leaf.value, list) and leaf.value < 0
    )


def _abs_expr(e: Expr) -> Expr:
    """Undo :func:`_negate_leftmost`."""
    spine = _left_spine(e)
    leaf = spine[-1]
    return _rebuild_spine(spine, leaf.args[0] if leaf.op == "neg" else Expr.const(-leaf.value))


def _present_power(b: Term, e, built: dict) -> Expr:
    """``b**e`` for an exponent that is a Term or a number."""
    if isinstance(e, Term):
        if e.kind != NUM:
            return Expr("pow", (built[b.uid], built[e.uid]))
        e = e.data
    if e == 1:
        return built[b.uid]
    return Expr("pow", (built[b.uid], _number_expr(e)))


def _product_expr(coeff, bases: Sequence[Term], exps: Sequence, built: dict) -> Expr:
    """``coeff * prod(b**e)`` as numerator/denominator, the sign on the leftmost factor."""
    negative = coeff < 0
    a = -coeff if negative else coeff
    numer: list[Expr] = []
    denom: list[Expr] = []
    pairs = sorted(
        zip(bases, exps), key=lambda be: (_FACTOR_RANK[be[0].kind], be[0].label, be[0].uid)
    )
    # A kept guard pair b/b (b**1*b**-1, kept because b can be nan) prints first, so it is 1
    # before it meets the other factors: exp(z)*sqrt(exp(z))/sqrt(exp(z)) overflows at z = 700
    # where sqrt(exp(z))/sqrt(exp(z))*exp(z) does not.
    signs: dict[int, set] = {}
    for b, e in pairs:
        v = e.data if isinstance(e, Term) and e.kind == NUM else e
        if not isinstance(v, Term) and v in (1, -1):
            signs.setdefault(b.uid, set()).add(v)
    guarded = {uid for uid, seen in signs.items() if len(seen) == 2}
    guards: list[Expr] = []
    for b, e in pairs:
        if isinstance(e, Term) and e.kind == NUM:
            e = e.data
        if b.uid in guarded and not isinstance(e, Term) and e in (1, -1):
            if e == 1:
                guards.append(Expr("div", (built[b.uid], built[b.uid])))
            continue
        if not isinstance(e, Term) and e < 0:
            denom.append(_present_power(b, -e, built))  # x**-2 prints as 1/x**2
        else:
            numer.append(_present_power(b, e, built))
    p, q = (a.numerator, a.denominator) if isinstance(a, Fraction) else (a, 1)
    numer[:0] = guards
    if p != 1 or not numer:
        numer.insert(0, Expr.const(float(p)))
    if q != 1:
        denom.insert(0, Expr.const(float(q)))
    top = numer[0]
    for f in numer[1:]:
        top = Expr("mul", (top, f))
    if denom:
        bottom = denom[0]
        for f in denom[1:]:
            bottom = Expr("mul", (bottom, f))
        top = Expr("div", (top, bottom))
    return _negate_leftmost(top) if negative else top


def _signed_number_expr(v) -> Expr:
    if isinstance(v, Fraction) and v.denominator != 1 and v < 0:
        return _negate_leftmost(_number_expr(-v))
    return _number_expr(v)


def _present(t: Term, built: dict) -> Expr:
    kind = t.kind
    if kind == NUM:
        return _signed_number_expr(t.data)
    if kind == VAR:
        return Expr.var(t.data)
    if kind == NAMED:
        return Expr.const(t.data[1])
    if kind == FN:
        if (
            t.data == "where"
            and t.args[0].kind == FN
            and t.args[0].data in _COMPARISONS
            and _is_num(t.args[1], 1)
            and _is_num(t.args[2], 0)
        ):
            return built[t.args[0].uid]  # where(x > 0, 1, 0) is (x > 0): comparisons are 0 or 1
        return Expr(t.data, tuple(built[a.uid] for a in t.args))
    if kind == MUL:
        return _product_expr(t.data[0], t.args, t.data[1], built)
    # ADD: descending degree, a positive term first where there is one, the constant last.
    const, coefs = t.data
    parts = sorted(zip(coefs, t.args), key=lambda ct: (-ct[1].degree, ct[1].label, ct[1].uid))
    exprs: list[Expr] = []
    traces: list[Expr] = []  # cancelled terms that can be nan, as 0*t (see Algebra.may_nan): last
    for c, term in parts:
        if term.kind == MUL:  # terms of a sum have coefficient 1
            e = _product_expr(c, term.args, term.data[1], built)
        else:
            e = _product_expr(c, (term,), (ONE,), built)
        (traces if c == 0 else exprs).append(e)
    if const != 0:
        exprs.append(_signed_number_expr(const))
    exprs.extend(traces)
    first = next((i for i, e in enumerate(exprs) if not _is_negative_expr(e)), 0)
    if first:
        exprs.insert(0, exprs.pop(first))
    out = exprs[0]
    for e in exprs[1:]:
        if _is_negative_expr(e):
            out = Expr("sub", (out, _abs_expr(e)))
        else:
            out = Expr("add", (out, e))
    return out


# ---------------------------------------------------------------------------
# Sym: the value type the op table's rules run on to build derivative graphs
# ---------------------------------------------------------------------------


class Builder:
    """Makes the Expr nodes of a derivative: hash-consed, with trivial folding only.

    ``guards``: when False (the default), every non-constant ``Sym`` reports
    ``maybe_zero = False``, so the rules leave out the ``where(...)`` guards that
    pin a derivative at isolated points (d/dx x**y at y == 0, d/dy x**y at
    x == 0); the printed derivative is then the formula valid at every point
    where the function is smooth, like SymPy's.  With True the guards stay and
    the expression agrees with ``grad`` at those points too.
    """

    def __init__(self, guards: bool = False, max_nodes: int = 2_000_000):
        self.guards = guards
        self.max_nodes = max_nodes
        self.table: dict = {}

    def const(self, value: float) -> Expr:
        value = float(value)
        key = ("const", repr(value))
        node = self.table.get(key)
        if node is None:
            node = self.table[key] = Expr.const(value)
        return node

    def node(self, op: str, args: tuple, attrs: dict | None = None) -> Expr:
        key = (op,) + tuple(id(a) for a in args) + ((repr(sorted(attrs.items())),) if attrs else ())
        node = self.table.get(key)
        if node is None:
            if len(self.table) >= self.max_nodes:
                raise LimitError(f"the derivative grew past {self.max_nodes} nodes")
            # The key holds the arguments' ids; the node keeps the arguments alive.
            node = self.table[key] = Expr(op, args, attrs)
        return node

    def as_expr(self, x) -> Expr:
        if isinstance(x, Sym):
            return x.expr
        if isinstance(x, Expr):
            return x
        if isinstance(x, (bool, int, float, np.floating, np.integer)):
            return self.const(float(x))
        raise TypeError(f"cannot use {type(x).__name__} in a symbolic rule")

    def call(self, name: str, args: tuple, attrs: dict) -> Sym:
        if name in ("reshape", "broadcast_to", "sum_to"):
            shape = tuple(attrs.get("shape", ()))
            if shape == ():
                return self.wrap(self.as_expr(args[0]))
            raise UnsupportedDiffError(
                f"diff supports elementwise scalar expressions; use grad for {name}", op=name
            )
        if name == "zeros_like":
            return self.wrap(self.const(0.0))
        if not _supported(name):
            raise UnsupportedDiffError(
                f"diff supports elementwise scalar expressions; use grad for {name}", op=name
            )
        exprs = tuple(self.as_expr(a) for a in args)
        return self.wrap(self.apply(name, exprs, attrs))

    def apply(self, op: str, args: tuple, attrs: dict | None = None) -> Expr:
        consts = [a.op == "const" for a in args]
        if all(consts):
            r = _fold_float(op, [a.value for a in args])
            if r is not None:
                return self.const(r)
        if op in ("add", "sub", "mul", "div", "pow"):
            a, b = args
            av = a.value if consts[0] else None
            bv = b.value if consts[1] else None
            if op == "add":
                if av == 0:
                    return b
                if bv == 0:
                    return a
            elif op == "sub":
                if bv == 0:
                    return a
                if av == 0:
                    return self.apply("neg", (b,))
            elif op == "mul":
                if av == 1:
                    return b
                if bv == 1:
                    return a
                if av == 0 or bv == 0:
                    return self.const(0.0)
                if av == -1:
                    return self.apply("neg", (b,))
                if bv == -1:
                    return self.apply("neg", (a,))
            elif op == "div":
                if bv == 1:
                    return a
            elif op == "pow":
                if bv == 1:
                    return a
                if bv == 0:
                    return self.const(1.0)
        elif op == "neg" and args[0].op == "neg":
            return args[0].args[0]
        elif op == "where" and consts[0]:
            return args[1] if args[0].value != 0 else args[2]
        return self.node(op, args, attrs)

    def wrap(self, expr: Expr) -> Sym:
        return Sym(expr, self)


def _fold_float(op: str, values: list):
    arrays = [backend.asarray(float(v)) for v in values]
    with backend.errstate():
        try:
            out = OPS[op].forward(*arrays)
        except Exception:  # noqa: BLE001
            return None
    return float(backend.to_numpy(out))


class Sym:
    """A scalar symbolic value: the op table's rules run on it to build derivative graphs.

    It has what the rules use of a tensor: arithmetic operators, ``_call``
    (which :func:`~autograd_cli.core.ops.call` and friends dispatch to),
    ``shape == ()`` and ``maybe_zero`` (read by the rules' zero guards).

    >>> b = Builder()
    >>> x = b.wrap(Expr.var("x"))
    >>> from autograd_cli.core.printing import to_text
    >>> to_text((x * x + 1).expr), to_text(OPS["sin"].deriv[0](x, None).expr)
    ('x*x + 1', 'cos(x)')
    """

    __slots__ = ("expr", "builder")
    shape = ()
    ndim = 0

    def __init__(self, expr: Expr, builder: Builder):
        self.expr = expr
        self.builder = builder

    @property
    def maybe_zero(self) -> bool:
        if self.expr.op == "const":
            return not (float(self.expr.value) != 0)  # nan counts as maybe zero
        return self.builder.guards

    def _call(self, name: str, *args, **attrs) -> Sym:
        return self.builder.call(name, args, attrs)

    def _binary(self, op: str, a, b) -> Sym:
        bl = self.builder
        return bl.wrap(bl.apply(op, (bl.as_expr(a), bl.as_expr(b))))

    def __add__(self, other):
        return self._binary("add", self, other)

    def __radd__(self, other):
        return self._binary("add", other, self)

    def __sub__(self, other):
        return self._binary("sub", self, other)

    def __rsub__(self, other):
        return self._binary("sub", other, self)

    def __mul__(self, other):
        return self._binary("mul", self, other)

    def __rmul__(self, other):
        return self._binary("mul", other, self)

    def __truediv__(self, other):
        return self._binary("div", self, other)

    def __rtruediv__(self, other):
        return self._binary("div", other, self)

    def __pow__(self, other):
        return self._binary("pow", self, other)

    def __rpow__(self, other):
        return self._binary("pow", other, self)

    def __neg__(self):
        bl = self.builder
        return bl.wrap(bl.apply("neg", (self.expr,)))

    def __pos__(self):
        return self

    def __bool__(self):
        raise TypeError("a symbolic value has no truth value")

    def __repr__(self) -> str:
        from .printing import to_text

        return f"Sym({to_text(self.expr)})"


def local_vjp(node: Expr, g: Sym, builder: Builder, inputs=None, out=None, needs=None) -> tuple:
    """The op table's vjp of ``node`` applied to the cotangent ``g``: one Expr (or None) per input.

    ``inputs``/``out`` default to the node's own arguments and itself; passing
    other Exprs (names) gives the rule in terms of those.
    """
    op = OPS[node.op]
    if op.vjp is None:
        return (None,) * len(node.args)
    ins = tuple(builder.wrap(a) for a in (inputs if inputs is not None else node.args))
    o = builder.wrap(out if out is not None else node)
    if needs is None:
        needs = tuple(True for _ in node.args)
    flags = op.flags(len(node.args))
    needs = tuple(bool(n and f) for n, f in zip(needs, flags))
    grads = op.vjp(RuleContext(op, ins, o, node.attrs, needs), g)
    return tuple(
        None if (gi is None or not need) else builder.as_expr(gi) for gi, need in zip(grads, needs)
    )


def grad_exprs(output: Expr, wrt: Sequence[str], builder: Builder | None = None) -> dict[str, Expr]:
    """d(output)/d(name) for each name in ``wrt``, as (unsimplified) Expr graphs.

    One reverse pass serves every name.  Iterative: the graph may be 100,000 deep.

    >>> from autograd_cli.grammar import parse
    >>> from autograd_cli.core.printing import to_text
    >>> to_text(grad_exprs(parse("x*sin(x)").output, ["x"])["x"])
    'sin(x) + x*cos(x)'
    """
    with _gc_paused():
        return _grad_exprs(output, wrt, builder or Builder())


class _Differentiable(Dependence):
    """:class:`Dependence`, refusing what ``diff`` cannot print (array literals, some ops)."""

    def const(self, node: Expr) -> bool:
        if isinstance(node.value, (list, tuple)):
            raise UnsupportedDiffError(
                "diff supports elementwise scalar expressions; use grad for array literals",
                op="const",
            )
        return False

    def apply(self, node: Expr, op, args: list) -> bool:
        if not _supported(node.op):
            raise _unsupported(node)
        return super().apply(node, op, args)


def _grad_exprs(output: Expr, wrt: Sequence[str], builder: Builder) -> dict[str, Expr]:
    walk = interpret(output, _Differentiable(wrt))
    order, depends = walk.order, walk.values
    results: dict[str, Expr] = {}
    cotangent: dict[int, Expr] = {}
    if depends[id(output)]:
        cotangent[id(output)] = builder.const(1.0)
    for node in reversed(order):
        g = cotangent.pop(id(node), None)
        if g is None:
            continue
        if node.op == "var":
            assert node.name is not None  # a "var" node always has a name (Expr.var)
            prev = results.get(node.name)
            results[node.name] = g if prev is None else builder.apply("add", (prev, g))
            continue
        needs = tuple(depends[id(a)] for a in node.args)
        grads = local_vjp(node, builder.wrap(g), builder, needs=needs)
        for a, gi in zip(node.args, grads):
            if gi is None:
                continue
            prev = cotangent.get(id(a))
            cotangent[id(a)] = gi if prev is None else builder.apply("add", (prev, gi))
    zero = builder.const(0.0)
    return {name: results.get(name, zero) for name in wrt}


@contextlib.contextmanager
def _gc_paused():
    """Pause the cyclic garbage collector while building big acyclic graphs.

    Building a derivative allocates many small objects and no cycles; the
    collector's repeated scans of a large heap would only add time (2x on
    100,000-node graphs).  Reference counting still frees everything.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# ---------------------------------------------------------------------------
# Public API: simplify and diff
# ---------------------------------------------------------------------------

STEPS_PER_NODE = 64
MIN_STEPS = 200_000
MAX_NODES = 100_000  # a derivative larger than this (as a DAG) is refused: its text would run
# to megabytes and differentiating it again takes minutes (diff --max-nodes raises it)
#: a derivative whose growth would carry it past this many times ``MAX_NODES`` (or
#: ``--max-nodes``) by the order asked for is refused before the next order (_predict_size)
PREDICTED_MARGIN = 2
LARGE_TEXT = 10_000  # a derivative printed longer than this gets a note with its size
TIME_BUDGET = 10.0  # seconds for a whole diff call's simplification (a safety net; the step
# budget, linear in the size, is what normally bounds the work)


def simplify(
    expr: Expr,
    *,
    budget: int | None = None,
    deadline: float | None = None,
    algebra: Algebra | None = None,
) -> Expr:
    """``expr`` simplified (same value wherever it is defined), as a new Expr graph.

    ``budget`` caps the work (operand visits; default ``max(200000, 64 * size)``)
    and ``deadline`` is a ``time.monotonic()`` time; past either,
    :class:`SimplifyBudgetExceeded` is raised.

    >>> from autograd_cli.grammar import parse
    >>> from autograd_cli.core.printing import to_text
    >>> to_text(simplify(parse("x*x*1 + 2*x + 3*x - -y + 0*z + x**1/x**0").output))
    'x**2 + 6*x + y'
    """
    alg = algebra or Algebra(budget=budget, deadline=deadline)
    with _gc_paused():
        return alg.to_expr(alg.from_expr(expr))


@dataclass
class Derivative:
    """One derivative: d^order(output)/d(wrt)^order."""

    wrt: str
    order: int
    expr: Expr  # the derivative's graph (simplified unless noted)
    text: str  # in the tool's own language; grammar.parse reads it back
    simplified: bool = True
    note: str | None = None  # why it is printed unsimplified, if it is
    value: object = None  # at the given values: a float or nested lists

    @property
    def latex(self) -> str:
        from .printing import to_latex  # noqa: PLC0415

        return to_latex(self.expr)


@dataclass
class DiffResult:
    """What :func:`diff` returns: the derivatives by variable, and values when asked.

    Plain data: values are floats or nested lists (nan and inf stay floats); SPEC's JSON
    document is built by the command line (``autograd_cli.cli.render.diff_json``).
    """

    source: str | None
    order: int
    derivatives: dict  # name -> Derivative, in --wrt (or first-use) order
    value: object = None  # the expression's value at the given values
    warnings: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    # mixed=True: every second partial, a -> b -> Derivative of d2/(da db) (symmetric: the
    # entry below the diagonal is the one above it; the diagonal is ``derivatives``)
    hessian: dict | None = None

    def texts(self) -> dict:
        """name -> the derivative in the tool's own language."""
        return {name: d.text for name, d in self.derivatives.items()}

    def hessian_texts(self) -> dict | None:
        """a -> b -> d2/(da db) in the tool's own language (None unless ``mixed=True``)."""
        if self.hessian is None:
            return None
        return {a: {b: d.text for b, d in row.items()} for a, row in self.hessian.items()}

    def hessian_values(self) -> dict | None:
        """a -> b -> the second partial's value at the point (None without values)."""
        if self.hessian is None or self.value is None:
            return None
        return {a: {b: d.value for b, d in row.items()} for a, row in self.hessian.items()}


def diff(
    source,
    wrt: str | Sequence[str] | None = None,
    order: int = 1,
    values: dict | None = None,
    *,
    guards: bool = False,
    time_budget: float = TIME_BUDGET,
    step_budget: int | None = None,
    max_nodes: int | None = MAX_NODES,
    mixed: bool = False,
) -> DiffResult:
    """Differentiate ``source`` (a parsed Program or an Expr) symbolically, then simplify.

    ``wrt``: a name, ``"a,b"`` or a list (None: every variable, in order of first
    use); ``order``: how many times (each variable separately: d^n/da^n).
    ``values`` (name -> number or nested list): also evaluate the expression
    and each derivative there.  ``guards`` keeps the op table's zero guards
    (see :class:`Builder`).  Simplification gets ``time_budget`` seconds and
    ``step_budget`` steps per pass (default proportional to the size); a
    derivative whose simplification runs out is printed unsimplified, with a
    note.

    ``mixed=True`` (``order`` must be 2): every second partial as well, the Hessian
    as expressions, in :attr:`DiffResult.hessian` (``a -> b -> Derivative``);
    ``derivatives`` still holds the pure ones (its diagonal).  Each first
    derivative is simplified, then differentiated with respect to each variable
    from its own on (one reverse pass a row) and simplified under the same budgets;
    the entries below the diagonal are those above it (the partials commute).

    Raises UnknownVariableError (an InputError) for a ``wrt`` that is not a
    variable, InputError for a bad order, UnsupportedDiffError for ops with no
    symbolic form here, LimitError when the unsimplified graph grows too big.

    Text is for :func:`autograd_cli.diff`, which parses it first:

    >>> from autograd_cli.grammar import parse
    >>> r = diff(parse("2*x**2 + b"), "x", values={"x": 3, "b": 1})
    >>> r.texts(), r.value, r.derivatives["x"].value
    ({'x': '4*x'}, 19.0, 12.0)
    >>> diff(parse("x**2*y"), order=2, mixed=True).hessian_texts()
    {'x': {'x': '2*y', 'y': '2*x'}, 'y': {'x': '2*x', 'y': '0'}}
    """
    from .printing import to_text  # noqa: PLC0415

    if isinstance(source, Program):
        text, output = source.source, source.output
    elif isinstance(source, Expr):
        text, output = None, source  # an Expr given directly has no source text
    else:
        raise TypeError(
            "diff() takes a parsed Program or an Expr; autograd_cli.diff takes the text"
        )
    if isinstance(order, bool) or not isinstance(order, int) or order < 0:
        raise InputError(f"--order must be a whole number >= 0, got {order!r}")
    if mixed and order != 2:
        raise InputError(f"mixed partials are second derivatives: order must be 2, not {order}")
    names = wrt_names(source, wrt)
    deadline = time.monotonic() + time_budget
    builder = Builder(guards=guards)
    notes: list[str] = []
    current = {name: output for name in names}
    simplified: dict = {name: True for name in names}  # name, or (a, b) for --hessian
    why: dict = {name: None for name in names}  # name, or (a, b): why it is unsimplified

    def tidy(name: str, raw: Expr) -> Expr:
        try:
            if time.monotonic() > deadline:
                # spent by an earlier order or variable: none left to start another pass
                raise SimplifyBudgetExceeded("time")
            return simplify(raw, budget=step_budget, deadline=deadline)
        except SimplifyBudgetExceeded as exc:
            simplified[name] = False
            reason = "time" if str(exc) == "time" else "step"
            why[name] = (
                f"simplification ran out of its {reason} budget; "
                f"the derivative is printed unsimplified"
            )
            return raw

    if order == 0:
        for name in names:
            current[name] = tidy(name, output)
    hessian: dict | None = None
    if mixed:
        hessian = _mixed_partials(output, names, builder, tidy, max_nodes, simplified, why)
        for name in names:
            current[name] = hessian[name][name]
            simplified[name], why[name] = simplified[(name, name)], why[(name, name)]
    sizes: dict = {name: [] for name in names}  # each order's size, for _predict_size
    for k in range(0 if mixed else order):
        if k == 0:
            raws = grad_exprs(output, names, builder)
        else:
            raws = {name: grad_exprs(current[name], [name], builder)[name] for name in names}
        for name in names:
            current[name] = tidy(name, raws[name])
            sizes[name].append(_check_size(current[name], name, k + 1, order, max_nodes))
            _predict_size(sizes[name], name, order, max_nodes)
    derivatives = {}
    for name in names:
        e = current[name]
        derivative = to_text(e)
        derivatives[name] = Derivative(name, order, e, derivative, simplified[name], why[name])
        if why[name]:
            notes.append(f"d/d{name}: {why[name]}")
        if len(derivative) > LARGE_TEXT:
            notes.append(
                f"d/d{name}: a large result: {len(derivative):,} characters, "
                f"{len(topological([e])):,} nodes"
            )
    if hessian is not None:
        hessian = _hessian_entries(hessian, names, derivatives, simplified, why, notes)
    # ``text``: the source differentiated (None for an Expr given directly)
    result = DiffResult(text, order, derivatives, notes=notes, hessian=hessian)
    if values is not None:
        _evaluate_at(result, output, values)
    return result


def _mixed_partials(output, names, builder, tidy, max_nodes, simplified, why) -> dict:
    """a -> b -> d2(output)/(da db) as (simplified) Expr graphs, for b from a on (the rest
    mirrored).  ``tidy(key, raw)`` simplifies under diff's budgets, recording by ``key``
    (a name for a first derivative, ``(a, b)`` for a second) whether it could."""
    firsts = grad_exprs(output, names, builder)
    first: dict = {}
    for name in names:
        first[name] = tidy(name, firsts[name])
        _check_size(first[name], name, 1, 2, max_nodes)
    rows: dict = {name: {} for name in names}
    for i, a in enumerate(names):
        row = grad_exprs(first[a], names[i:], builder)
        for b in names[i:]:
            key = (a, b)
            simplified[key], why[key] = simplified[a], why[a]
            e = tidy(key, row[b])
            _check_size(e, a if a == b else f"{a} and {b}", 2, 2, max_nodes)
            rows[a][b] = e
            if b != a:
                simplified[(b, a)], why[(b, a)] = simplified[key], why[key]
    # in --wrt order on both sides, each entry below the diagonal the one above it
    return {a: {b: rows[a][b] if b in rows[a] else rows[b][a] for b in names} for a in names}


def _hessian_entries(graphs, names, derivatives, simplified, why, notes) -> dict:
    """The Hessian's Expr graphs as Derivative objects (the diagonal: ``derivatives``')."""
    from .printing import to_text  # noqa: PLC0415

    out: dict = {a: {} for a in names}
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if a == b:
                out[a][b] = derivatives[a]
            elif j < i:
                out[a][b] = out[b][a]
            else:
                e = graphs[a][b]
                text = to_text(e)
                key = (a, b)
                out[a][b] = Derivative(f"{a},{b}", 2, e, text, simplified[key], why[key])
                label = f"d^2/d{a}d{b}"
                if why[key]:
                    notes.append(f"{label}: {why[key]}")
                if len(text) > LARGE_TEXT:
                    notes.append(
                        f"{label}: a large result: {len(text):,} characters, "
                        f"{len(topological([e])):,} nodes"
                    )
    return out


def _check_size(e: Expr, name: str, k: int, order: int, max_nodes: int | None) -> int:
    """Refuse a derivative past ``max_nodes`` before differentiating or printing it further;
    its size (0 when there is no budget: not measured)."""
    if not max_nodes:
        return 0
    n = len(topological([e]))
    if n <= max_nodes:
        return n
    at = f" at order {k} of {order}" if order > 1 else ""
    raise LimitError(
        f"diff: the derivative with respect to {name} grew to {n:,} nodes{at}, past the size "
        f"budget of {max_nodes:,} (its text would run to megabytes); for its value at a point "
        f"use grad --order {order} (forward mode, no expression), or raise --max-nodes",
        nodes=n,
        max_nodes=max_nodes,
    )


def _predict_size(sizes: list, name: str, order: int, max_nodes: int | None) -> None:
    """Refuse, before the next orders are taken, a derivative whose growth would carry it
    well past ``max_nodes`` by ``order``: each order costs about as much as the size it makes
    (the last ones most), so ``sin`` nested 8 deep was refused only at order 6 of 6, after
    seconds spent on 40,000- and 110,000-node graphs.

    ``sizes``: the sizes of orders 1..k.  The growth is the smaller of the last two
    order-to-order ratios (ratios shrink as a derivative grows: this errs towards going
    on), and the derivative is refused only when that growth, kept up to ``order``, passes
    ``PREDICTED_MARGIN`` times the budget."""
    k = len(sizes)
    if not max_nodes or k < 3 or k >= order or min(sizes[-3:]) <= 0:
        return
    growth = min(sizes[-1] / sizes[-2], sizes[-2] / sizes[-3])
    if growth <= 1:
        return
    predicted = sizes[-1] * growth ** (order - k)
    if predicted <= PREDICTED_MARGIN * max_nodes:
        return
    raise LimitError(
        f"diff: the derivative with respect to {name} has {sizes[-1]:,} nodes at order {k} "
        f"of {order}, growing about {growth:.1f} times an order: on course for "
        f"{_about(predicted)} nodes at order {order}, past the size budget of {max_nodes:,} "
        f"(its text would run to megabytes); for its value at a point use grad --order "
        f"{order} (forward mode, no expression), or raise --max-nodes",
        nodes=sizes[-1],
        predicted_nodes=int(min(predicted, 2**63 - 1)),
        max_nodes=max_nodes,
    )


def _about(n: float) -> str:
    """``296,000`` for 295,812.4: three significant digits, ``1e+40`` past a trillion."""
    if n >= 1e12:
        return f"{n:.0e}"
    return f"{float(f'{n:.3g}'):,.0f}"


def _evaluate_at(result: DiffResult, output: Expr, values: dict) -> None:
    """Fill in the expression's value and each derivative's, broadcast to the value's shape."""
    ev = evaluate(output, values)
    result.value = _plain(ev.output.data)
    result.warnings.extend(ev.warnings)
    shape = tuple(ev.output.data.shape)
    entries = {id(d): d for d in result.derivatives.values()}
    for row in (result.hessian or {}).values():
        entries.update((id(d), d) for d in row.values())
    for d in entries.values():
        dv = evaluate(d.expr, values)
        for w in dv.warnings:
            if w not in result.warnings:
                result.warnings.append(w)
        data = backend.to_numpy(dv.output.data)
        if tuple(data.shape) != shape:
            try:
                data = np.broadcast_to(data, np.broadcast_shapes(shape, data.shape))
            except ValueError:
                pass
        d.value = _plain(data)


def _plain(data):
    a = backend.to_numpy(data)
    if a.ndim == 0:
        return float(a)
    return a.astype(float).tolist()


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
]
