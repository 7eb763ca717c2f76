"""Taylor expansions at a point, with the engine's exact derivatives.

One variable: ``c[k] = f^(k)(a) / k!`` for k = 0..order.  Two methods, the same numbers
(to float64 rounding):

* Taylor mode (:mod:`.taylor_mode`, the default): one walk of the expression graph that
  carries the order + 1 Taylor coefficients of every node, with an O(order^2) rule per op
  (Griewank & Walther ch. 13, JAX's ``jet``).  Every elementwise op of the op table has a
  rule; nodes that do not depend on the variable can be anything (arrays, reductions, ...).
* Repeated differentiation of the recorded graph (``create_graph``, ``order`` times), whose
  cost grows much faster than order^2.  It is used where Taylor mode cannot promise the
  engine's numbers: an op without a Taylor rule on the variable's path (reductions or
  indexing of arrays, linear algebra), a singular point (``sqrt`` or a fractional power of 0,
  ``asin(1)``, a pole: wherever a derivative or a local derivative is not finite or
  overflows, or a value that is not finite reaches a nonlinear op), ``a**b`` with both
  variable and ``b`` a whole number at the point (the engine pins ``d(a**b)/da`` there, as
  PyTorch does), a device or dtype other than CPU float64.
  :mod:`.taylor_mode` lists the conditions.

Several variables: the k-th derivative tensors D^k f(a) / k! (k = 0: the value, 1: the
gradient, 2: the Hessian / 2, ...), by repeated differentiation.  Never finite differences.
The polynomial is written in the tool's own language, so it parses back; with ``at``, the
expansion is compared with the function at another point (the remainder).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import product

from . import backend
from .errors import InputError, LimitError, NonScalarOutputError
from .program import Program, check_order, check_values, resolve_wrt
from .taylor_mode import NoTaylorMode, taylor_coefficients

__all__ = ["TaylorResult", "taylor", "MAX_TERMS"]

MAX_TERMS = 100_000  # derivative entries (n ** order summed over the orders) computed at most


@dataclass(frozen=True)
class TaylorResult:
    at: dict  # name -> the expansion point
    order: int
    coefficients: object  # one variable: [c0, c1, ...]; several: {"0": value, "1": [...], ...}
    polynomial: str  # in the tool's language (parses back)
    value: float  # f at the expansion point
    remainder: dict | None = None  # with `at`: {"at", "value", "polynomial", "remainder"}
    warnings: list = field(default_factory=list)  # a coefficient that is not finite


def taylor(
    program: Program,
    values: Mapping,
    wrt=None,
    order: int | None = None,
    at: Mapping | None = None,
) -> TaylorResult:
    """The Taylor expansion of a scalar ``program`` at ``values`` in the variables ``wrt``.

    ``order`` defaults to 5 for one variable and 2 for several.

    >>> from autograd_cli.grammar import parse
    >>> r = taylor(parse("exp(sin(x))"), {"x": 0}, order=4)
    >>> r.coefficients, r.polynomial
    ([1.0, 1.0, 0.5, 0.0, -0.125], '1 + x + 0.5*x**2 - 0.125*x**4')
    """
    check_values(program, values)
    names = resolve_wrt(program, wrt)
    if not names:
        raise InputError("the expression has no variables to expand in")
    if order is None:
        order = 5 if len(names) == 1 else 2
    order = check_order(order, 0)
    point = {}
    for name in names:
        if name not in values:
            from .program import missing_value

            raise missing_value(name)
        a = backend.host.asarray(values[name], dtype=float)
        if a.ndim != 0:
            raise InputError(
                f"taylor expands in scalar variables: {name!r} has shape {list(a.shape)}",
                variable=name,
            )
        point[name] = float(a)
    n = len(names)
    terms = sum(n**k for k in range(order + 1))
    if terms > MAX_TERMS:
        raise LimitError.naming(
            f"taylor of {n} variables to order {order} needs {terms:,} derivative entries "
            f"(more than {MAX_TERMS:,}); lower {{order}} or expand in fewer variables ({{wrt}})"
        )
    coefficients: list | dict
    if n == 1:
        coefficients = _one_variable(program, values, names[0], order)
        value = coefficients[0]
        monomials = [((k,), coefficients[k]) for k in range(order + 1)]
    else:
        tensors = _derivative_tensors(program, values, names, order)
        value = tensors[0][()]
        coefficients = {
            str(k): (tensors[k] / math.factorial(k)).tolist() if k else float(value)
            for k in range(order + 1)
        }
        monomials = _monomials(tensors, n, order)
    text = polynomial_text(monomials, names, [point[nm] for nm in names])
    remainder = None
    if at:
        remainder = _remainder(program, values, names, point, monomials, at)
    warnings = _no_series(coefficients, point)
    return TaylorResult(point, order, coefficients, text, float(value), remainder, warnings)


def _no_series(coefficients, point: dict) -> list:
    """A warning for the first coefficient that is not finite (1/x or sqrt(x) at 0): the
    function has no Taylor series there, whatever the polynomial's text."""
    np = backend.host
    one = isinstance(coefficients, list)
    entries = enumerate(coefficients) if one else coefficients.items()
    where = ", ".join(f"{name} = {_number(a)}" for name, a in point.items())
    for k, c in entries:
        a = np.asarray(c, dtype=float).ravel()
        bad = a[~np.isfinite(a)]
        if bad.size:
            what = "nan" if np.isnan(bad[0]) else "inf" if bad[0] > 0 else "-inf"
            which = (
                f"the coefficient c{k} is {what}"
                if one
                else f"a coefficient of order {k} is {what}"
            )
            why = "its value" if int(k) == 0 else "a derivative"
            return [
                f"{which}: the function has no Taylor series at {where} ({why} there is not finite)"
            ]
    return []


def _one_variable(program, values, name: str, order: int) -> list:
    """[c0, c1, ..., c_order]: by Taylor mode where it gives the engine's numbers, else by
    repeated differentiation (:func:`_repeated`)."""
    try:
        return taylor_coefficients(program, values, name, order)
    except NoTaylorMode as exc:
        return _repeated(program, values, name, order, str(exc))


def _repeated(program, values, name: str, order: int, why: str | None = None) -> list:
    """[c0, c1, ..., c_order] by differentiating the recorded graph ``order`` times
    (``why``: why Taylor mode could not be used)."""
    tensors = _derivative_tensors(program, values, [name], order, why)
    return [float(tensors[k][(0,) * k]) / math.factorial(k) for k in range(order + 1)]


def _derivative_tensors(program, values, names, order, why: str | None = None) -> list:
    """D^k f at the point for k = 0..order, each an ndarray of shape (n,) * k; graphs on
    course for too many nodes by ``order`` refused (:func:`.limits.check_growth`)."""
    from .autograd import GraphGrowth, grad
    from .recording import evaluate
    from .tensor import enable_grad

    np = backend.host
    n = len(names)
    with enable_grad():
        ev = evaluate(program, values, requires_grad=names, check_domain=False)
        y = ev.output
        if y.size != 1:
            raise NonScalarOutputError(
                f"taylor needs a scalar output, but it has shape {tuple(y.shape)}",
                shape=list(y.shape),
            )
        y = y.reshape(())
        xs = [ev.leaves[nm] for nm in names]
        current = [y]  # the entries of D^k f, flattened in row-major order
        growth = GraphGrowth(order, why)
        tensors = [np.asarray(float(backend.to_numpy(y.data)))]
        for _ in range(order):
            nxt: list = []
            for t in current:
                if t is None or not t.requires_grad:
                    nxt.extend([None] * n)
                    continue
                gs = grad(t, xs, create_graph=True, allow_unused=True)
                nxt.extend(gs)
            current = nxt
            growth.add([t for t in current if t is not None])
            k = len(tensors)
            flat = [0.0 if t is None else float(backend.to_numpy(t.data)) for t in current]
            tensors.append(np.asarray(flat, dtype=float).reshape((n,) * k))
    return tensors


def _monomials(tensors, n: int, order: int) -> list:
    """(exponents per variable, coefficient) for every monomial of degree <= order:
    D^α f / α!, read from the symmetric derivative tensors at a sorted index."""
    out = []
    for k in range(order + 1):
        for idx in product(range(n), repeat=k):
            if list(idx) != sorted(idx):
                continue
            exps = tuple(idx.count(i) for i in range(n))
            coef = float(tensors[k][idx]) / math.prod(math.factorial(e) for e in exps)
            out.append((exps, coef))
    return out


def _number(c: float) -> str:
    """A number as the language writes it: ``2``, ``0.5``, ``1e-20``, ``-inf``, ``nan``."""
    if math.isnan(c):
        return "nan"
    if math.isinf(c):
        return "inf" if c > 0 else "-inf"
    text = repr(float(c))
    return text[:-2] if text.endswith(".0") and "e" not in text else text


def _base(name: str, a: float) -> str:
    if a == 0:
        return name
    return f"({name} - {_number(a)})" if a > 0 else f"({name} + {_number(-a)})"


def polynomial_text(monomials, names, point) -> str:
    """``1 + x + 0.5*x**2`` (around 0) or ``2 + 3*(x - 1) + ...``: parses back as the tool's
    language; zero coefficients are left out."""
    text = ""
    for exps, coef in monomials:
        if coef == 0:
            continue
        factors = [
            _base(name, a) if e == 1 else f"{_base(name, a)}**{e}"
            for name, a, e in zip(names, point, exps)
            if e
        ]
        negative = coef < 0  # False for nan
        magnitude = -coef if negative else coef
        if factors and magnitude == 1:
            body = "*".join(factors)
        else:
            body = "*".join([_number(magnitude)] + factors)
        if not text:
            text = ("-" if negative else "") + body
        else:
            text += (" - " if negative else " + ") + body
    return text or "0"


def _remainder(program, values, names, point, monomials, at) -> dict:
    from .recording import evaluate
    from .tensor import no_grad

    unknown = sorted(set(at) - set(names))
    if unknown:
        raise InputError.naming(
            "{at} names {name!r}, which is not a variable of the expansion ({names})",
            {"name": unknown[0], "names": ", ".join(names)},
            variable=unknown[0],
        )
    where = {nm: float(at.get(nm, point[nm])) for nm in names}
    env = dict(values)
    env.update(where)
    with no_grad():
        f = float(backend.to_numpy(evaluate(program, env, check_domain=False).output.data))
    np = backend.host
    with np.errstate(all="ignore"):  # IEEE: a point far out gives inf or nan, not an error
        terms = [
            float(
                coef
                * np.prod([np.float64(where[nm] - point[nm]) ** e for nm, e in zip(names, exps)])
            )
            for exps, coef in monomials
            if coef != 0  # a zero term is 0 at any point (0 * inf is not)
        ]
        finite = all(math.isfinite(t) for t in terms)
        p = math.fsum(terms) if finite else float(np.sum(np.array(terms)))
    return {"at": where, "value": f, "polynomial": p, "remainder": f - p}
