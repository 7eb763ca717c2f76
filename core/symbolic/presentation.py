"""Printing, the symbolic part: canonical terms written back as Exprs a person reads.

Numeric coefficient first, terms in descending degree, subtraction and division instead of
negative coefficients and exponents (``a - -b -> a + b``), a positive term first where
there is one.  :mod:`autograd_cli.core.printing` then writes the Expr as text or LaTeX.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from ..printing import format_number
from ..program import Expr
from .numbers import ONE
from .terms import _COMPARISONS, _FACTOR_RANK, FN, MUL, NAMED, NUM, VAR, Term, _is_num, _term_order


def present(root: Term) -> Expr:
    """``root`` written as an Expr a person reads (coefficients first, ``-`` and ``/``)."""
    built: dict[int, Expr] = {}
    for t in _term_order(root):
        built[t.uid] = _present(t, built)
    return built[root.uid]


def _number_expr(v) -> Expr:
    """A number as an Expr: a float constant, or (-)p/q for a non-integer fraction."""
    if isinstance(v, Fraction):
        if v.denominator != 1:
            return Expr("div", (_integer_expr(v.numerator), _integer_expr(v.denominator)))
        return _integer_expr(v.numerator)
    return Expr.const(float(v))


def _integer_expr(p: int) -> Expr:
    """An exact whole number as an Expr: a constant, or ``b**e`` (or ``m*b**e``, m small,
    whichever is shorter) for one of 1e16 and over whose float is not exact or is long (3**39,
    not 4.052555153018976e+18; 2**62, not 4.611686018427388e+18; 2*3**34, not
    3.3354363399333136e+16; 10**17 stays 1e+17), so that it reads, and parses back, exactly."""
    if abs(p) < 10**16:
        return Expr.const(float(p))
    power = _power_of(abs(p))
    scaled = _scaled_power(abs(p))  # 2*3**34, not 3.3354363399333136e+16
    if scaled is not None and (power is None or len(scaled[0]) < len(f"{power[0]}**{power[1]}")):
        _, m, b, k = scaled  # 4*3**34, not 258280326**2
        e = Expr("pow", (Expr.const(float(b)), Expr.const(float(k))))
        return Expr("mul", (Expr.const(float(-m if p < 0 else m)), e))
    if power is None:
        return Expr.const(float(p))
    e = Expr("pow", (Expr.const(float(power[0])), Expr.const(float(power[1]))))
    return Expr("neg", (e,)) if p < 0 else e


def _scaled_power(n: int) -> tuple[str, int, int, int] | None:
    """``(text, m, b, e)`` with ``m*b**e == n``, ``b`` up to 1000, ``m`` from 2 to 10**6 and
    the text shortest, where ``n``'s float is not exact or is long; None where there is none
    (a pure power is :func:`_power_of`'s; a product of large primes prints as its float)."""
    if _short_float(n):
        return None
    best = None
    for b in range(2, 1001):
        if n % (b * b):
            continue
        m, e = n, 0
        while m % b == 0:
            m, e = m // b, e + 1
        text = f"{m}*{b}**{e}"
        if 1 < m < 10**6 and (best is None or len(text) < len(best[0])):
            best = (text, m, b, e)
    return best


def _short_float(n: int) -> bool:
    """``n``'s float is exact and takes at most 6 digits (1e+17, 2.5e+16): it prints as that."""
    f = float(n)
    return f == n and len(repr(f).split("e")[0].replace(".", "").rstrip("0")) <= 6


def _power_of(n: int) -> tuple[int, int] | None:
    """``(b, e)`` with ``b**e == n``, ``e`` as high as it goes, where ``n``'s float is not
    exact or takes more than 6 digits; None for any other ``n``."""
    if _short_float(n):
        return None
    f = float(n)
    for e in range(n.bit_length(), 1, -1):
        b = round(f ** (1.0 / e))
        for c in (b - 1, b, b + 1):
            if c > 1 and c**e == n:
                return c, e
    return None


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
        leaf.op == "const"
        and not isinstance(leaf.value, list)
        and format_number(leaf.value).startswith("-")
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
        numer.insert(0, _integer_expr(p) if isinstance(p, int) else Expr.const(float(p)))
    if q != 1:
        denom.insert(0, _integer_expr(q))
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
