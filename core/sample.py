"""A function and its derivatives sampled over a range of one variable (for ``plot``).

The variable becomes a vector of the sample points and the program is evaluated
once over all of them; for an elementwise program each derivative is the
gradient of the sum (points are independent), repeated with ``create_graph``
for higher orders: exact, vectorised, one pass per order.  A program that is
not elementwise in the variable (``sum(x)``, ``x @ A``...) is sampled point by
point instead, with the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from . import backend
from .errors import InputError, LimitError, NonScalarOutputError, ShapeError, UnsupportedError
from .interpret import Dependence, interpret
from .program import Program, check_values

__all__ = ["Sampled", "sample", "MAX_POINTS"]

MAX_POINTS = 1_000_000


@dataclass(frozen=True)
class Sampled:
    x: list  # the sample points
    series: list  # [{"order": k, "values": [...]}, ...], k = 0..order


def sample(
    program: Program, values: Mapping, name: str, lo: float, hi: float, points: int, order: int
) -> Sampled:
    """f, f', ..., f^(order) of ``program`` in ``name`` at ``points`` points from lo to hi.

    >>> from autograd_cli.grammar import parse
    >>> s = sample(parse("x**3"), {}, "x", -1, 1, 3, 2)
    >>> s.x, [d["values"] for d in s.series]
    ([-1.0, 0.0, 1.0], [[-1.0, 0.0, 1.0], [3.0, 0.0, 3.0], [-6.0, 0.0, 6.0]])
    """
    np = backend.host
    if name not in program.inputs:
        raise InputError(f"{name!r} is not a variable of the expression", variable=name)
    check_values(program, {**values, name: 0.0})
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise InputError(f"the range of {name!r} must be two finite numbers LOW < HIGH")
    if not 2 <= points <= MAX_POINTS:
        raise LimitError.naming(
            "{points} takes 2 to {most:,}, not {given:,}", {"most": MAX_POINTS, "given": points}
        )
    xs = np.linspace(lo, hi, points)
    rows = None
    if _elementwise_in(program, name):
        try:
            rows = _vectorised(program, values, name, xs, order)
        except (NonScalarOutputError, ShapeError):  # other variables' shapes do not fit
            rows = None
    if rows is None:
        rows = _pointwise(program, values, name, xs, order)
    if any(np.iscomplexobj(row) for row in rows):
        raise _complex_values()
    return Sampled(
        [float(v) for v in xs],
        [{"order": k, "values": [float(v) for v in row]} for k, row in enumerate(rows)],
    )


def _complex_values() -> UnsupportedError:
    return UnsupportedError(
        "plot draws real functions: this one has complex values (plot abs(...), real(...) "
        "or imag(...) of it)",
        op="plot",
    )


def _vectorised(program, values, name, xs, order) -> list:
    from .forward import program_function
    from .functional import derivatives

    f = program_function(program, values, [name])
    series = derivatives(f, _tensor(xs), order, budget=True)
    if any(tuple(s.shape) not in ((), (len(xs),)) for s in series):
        raise NonScalarOutputError("not one value per point", shape=list(series[0].shape))
    return [backend.to_numpy(s.data).reshape(len(xs)) for s in series]


class _Elementwise(Dependence):
    """Whether a node depends on the variable, raising _NotElementwise where an op that
    mixes entries (a reduction, a product, a reshape, a literal array) reads it."""

    def apply(self, node, op, args: list) -> bool:
        depends = any(args)
        if depends and op.kind not in ("elementwise", "comparison", "constant"):
            raise _NotElementwise
        return depends


class _NotElementwise(Exception):
    pass


def _elementwise_in(program: Program, name: str) -> bool:
    """True when every op between ``name`` and the output acts entry by entry, so that a
    vector of points gives one independent value per point."""
    try:
        interpret(program, _Elementwise([name]))
    except _NotElementwise:
        return False
    return True


def _tensor(xs):
    from .tensor import Tensor

    return Tensor(backend.asarray(xs))


def _pointwise(program, values, name, xs, order) -> list:
    from .program_functional import program_derivatives

    np = backend.host
    rows = np.full((order + 1, len(xs)), np.nan)
    for i, x in enumerate(xs):
        env = {**values, name: float(x)}
        series = program_derivatives(program, env, name, order, budget=True)
        for k, s in enumerate(series):
            a = backend.to_numpy(s.data)
            if a.size != 1:
                raise NonScalarOutputError(
                    f"plot needs a scalar function of {name!r}; the output has shape "
                    f"{list(a.shape)}",
                    shape=list(a.shape),
                )
            if a.dtype.kind == "c":
                raise _complex_values()
            rows[k, i] = float(a.reshape(()))
    return list(rows)
