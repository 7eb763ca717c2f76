"""The canonical algebra: constructors of terms that simplify as they build, and
:func:`simplify`.

Each constructor (:meth:`Algebra.add`, :meth:`~Algebra.mul`, :meth:`~Algebra.fn`) applies
the value-preserving rewrites listed in the package's docstring as it builds, hash-consing
the result; :meth:`Algebra.from_expr` gathers an Expr's chains of sums and products into
n-ary terms, :meth:`Algebra.to_expr` writes a term back (:mod:`.presentation`).  The work is
charged against a step budget and a deadline (:meth:`Algebra.spend`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence

from ..autograd import gc_paused
from ..backend import is_complex
from ..printing import format_number
from ..program import Expr, topological
from ..tensor import OPS
from .numbers import ONE, ZERO, _fold, _is_exact, _is_int, _nice, _nkey, n_add, n_mul, n_pow
from .presentation import present
from .support import SimplifyBudgetExceeded, UnsupportedDiffError, _supported, _unsupported
from .terms import (
    _COMPARISONS,
    _LABEL_MAX,
    ADD,
    FN,
    MUL,
    NAMED,
    NUM,
    VAR,
    Term,
    TermFacts,
    _coef_label,
    _factor_order,
    _is_int_term,
    _is_num,
    _nonneg,
    _num_label,
)

STEPS_PER_NODE = 64
MIN_STEPS = 200_000
EXPAND_MAX_TERMS = 64  # a product's sum factor is expanded into a sum only up to this size
EXPAND_MAX_POWER = 8  # ... and a power of a sum of at most 3 terms up to this exponent

_FAMILY = {"add": "sum", "sub": "sum", "neg": "sum", "mul": "prod", "div": "prod"}
_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_ROOTS = {"sqrt": ONE / 2, "cbrt": ONE / 3}


def _positive_number(t: Term) -> bool:
    """Whether the product ``t`` is a positive number kept as powers (``2**70``): a positive
    coefficient, and non-negative numbers to numbers (a zero base is kept only with a
    negative exponent, as inf, whose powers are zero's: ``(0**-2)**(1/2)`` is ``1/0``)."""
    c, exps = t.data
    return c > 0 and all(
        b.kind == NUM and b.data >= 0 and e.kind == NUM for b, e in zip(t.args, exps)
    )


class Algebra(TermFacts):
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
        super().__init__()

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

    def named(self, name: str, value: float | complex) -> Term:
        return self._intern(("c", name), NAMED, (), (name, value), 0, name)

    def const(self, value) -> Term:
        """A constant of an Expr: pi, e, log(2) and log(10) keep their names."""
        if isinstance(value, (list, tuple)):
            raise UnsupportedDiffError(
                "diff supports elementwise scalar expressions; use grad for array literals",
                op="const",
            )
        if is_complex(value):
            # an imaginary constant is a named number (as pi): never folded, printed as written
            z = complex(value)
            if z.real != 0:
                return self.add([(ONE, self.const(complex(0.0, z.imag)))], const=z.real)
            return self.named(format_number(z), z)
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
            products = self._times(poly, self._sum_items(t.args[j]))
            if not _representable(products):
                return None
            poly = self._sum_items(self.add(products))
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
            elif b.kind == MUL and (_is_int_term(e) or (e.kind == NUM and _positive_number(b))):
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
        coeff = self._fold_number_powers(coeff, factors)
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

    def _fold_number_powers(self, coeff, factors: dict):
        """``coeff`` with the powers of a whole-number base kept as a power (``3**40``, past
        the exact numbers' bound) moved between it and that power: ``3**40/3**39`` is 3 (the
        exact 1/3**39 and the power never met), ``2*2**63`` is ``2**64``; the power is folded
        into the coefficient where the product is exact again.  Returns the new coefficient."""
        if not _is_exact(coeff) or coeff == 0:
            return coeff
        for uid, (b, exps) in list(factors.items()):
            # a number's exponents are one (they always combine: _combine_exponents)
            if not (b.kind == NUM and _is_int(b.data) and b.data > 1 and _is_int_term(exps[0])):
                continue
            base, e, c = int(b.data), int(exps[0].data), coeff
            while c.denominator % base == 0:
                c, e = c * base, e - 1
            while c.numerator % base == 0:
                c, e = c / base, e + 1
            whole = n_mul(c, n_pow(b.data, e))
            if _is_exact(whole):
                del factors[uid]
                coeff = whole
            else:
                exps[0] = self.num(e)
                coeff = c
        return coeff

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
        """``(c*x**a*...)**n`` for an integer n as ``c**n * x**(a*n) * ...``, or None if unsafe;
        any number n where every base and c are positive numbers (``(2**70)**(1/2)`` is 2**35:
        2**70 is past the exact numbers' bound, so it is kept as a power)."""
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
        if name in _ROOTS and args[0].kind == MUL and _positive_number(args[0]):
            # sqrt(2**70) is 2**35: a positive number kept as powers, rooted to whole
            # exponents and an exact coefficient (sqrt(2**71) stays)
            root = self._power_of_product(args[0], self.num(_ROOTS[name]))
            if root is not None and _is_exact(root[0]) and all(_is_int_term(e) for _, e in root[1]):
                return self.mul(*root)
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
        return present(root)


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


def _representable(items: list) -> bool:
    """Whether every coefficient of an expansion's products is a non-zero finite number: one
    that under- or overflowed (1e-200 * 1e-200) would drop or blow up a term that is not
    small where its variables are large ((1e-200*x)**2 at x = 1e200 is 1), so the power of
    the sum keeps its factor instead."""
    return all(c != 0 and math.isfinite(abs(c)) for c, _ in items)


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
    with gc_paused():
        return alg.to_expr(alg.from_expr(expr))
