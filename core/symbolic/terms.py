"""The canonical algebra's terms, and what a term's values can be.

A :class:`Term` is hash-consed by :class:`~.algebra.Algebra`, so ``is`` is structural
equality.  The functions here read one term, given what is already known of its children
(whether they can be nan, vanish on a region, their constant values): the algebra's
cached, iterative walks (:meth:`~.algebra.Algebra.may_nan`) call them node by node.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..tensor import OPS
from ..toposort import toposort
from .numbers import _fold_float, _is_int, _num_label, np

NUM, VAR, NAMED, ADD, MUL, FN = "num", "var", "named", "add", "mul", "fn"

# Order of factors in a printed product: numbers' powers, atoms, sums, functions.
_FACTOR_RANK = {NUM: 0, VAR: 1, NAMED: 1, MUL: 2, ADD: 3, FN: 4}
_LABEL_MAX = 40


# eq=False: hash-consed, so identity is equality (and hashing by id is what the caches need)
@dataclass(slots=True, eq=False, repr=False)
class Term:
    """A node of the canonical algebra; hash-consed, so ``is`` is structural equality.

    ``kind`` is one of NUM (``data`` a number), VAR (``data`` a name), NAMED (a
    named constant: ``data`` = (name, value)), ADD (``data`` = (constant,
    coefficients), ``args`` the terms), MUL (``data`` = (coefficient,
    exponents), ``args`` the bases) or FN (``data`` the op name).
    """

    kind: str
    uid: int
    args: tuple
    data: Any
    degree: int
    label: str

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


_COMPARISONS = ("lt", "le", "gt", "ge", "eq", "ne")


def _coef_label(c) -> str:
    return "" if c == 1 else _num_label(c) + "*"


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
    if t.kind == NAMED:  # pi, e; an imaginary constant (2j) is no real number
        return not isinstance(t.data[1], complex) and t.data[1] >= 0
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
    if kind == NAMED:  # an imaginary constant is not folded: as a variable
        return None if isinstance(t.data[1], complex) else float(t.data[1])
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


class TermFacts:
    """What the terms' values can be, cached by term: nan or infinite on a region
    (:meth:`may_nan`), 0 on a region (:meth:`may_vanish`), a constant (and its value).
    One iterative walk per new term, each node read by the functions above; the
    :class:`~.algebra.Algebra` asks before every rule that could drop or combine a term.
    """

    def __init__(self) -> None:
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


def _term_order(root: Term) -> list[Term]:
    """Every term under ``root``, each after its children (iterative)."""
    return toposort([root], Term.children)
