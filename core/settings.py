"""The checks of an analysis's settings (a tolerance, ``max_iter``, a draw count, a seed).

Each check names the setting as ``what`` says, the way its user spelled it (a batch line's
``"max_iter"``); with no ``what``, by the library's parameter name (``{max_iter}``), which a
caller spells its own way (the command line: ``--max-iter``,
:meth:`~.errors.AutogradCliError.spelled`).  The library's analyses
(:mod:`~autograd_cli.core.optimize`) check their own settings here, and the documents of the
analyses (:mod:`~autograd_cli.core.analysis_docs`) check a batch line's.
"""

from __future__ import annotations

import math
import numbers

from .values import UsageError

__all__ = ["MAX_ITER", "check_max_iter", "check_mc", "check_positive", "check_seed", "error"]

#: max_iter at most (a slip like 10**9 is an error at once, not hours of work)
MAX_ITER = 1_000_000


def error(what: str | None, parameter: str, rest: str) -> UsageError:
    """The error of a setting: ``what`` (as its user spelled it) then ``rest``; with no
    ``what``, the library's ``parameter``, spelled by the caller."""
    label = "{" + parameter + "}" if what is None else _braced(what)
    return UsageError.naming(label + _braced(rest))


def _braced(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def check_max_iter(n: int | None, what: str | None = None, low: int = 1) -> int | None:
    """None (the analysis's default), or a whole number from ``low`` (the library takes 0:
    the start point evaluated, no step) to MAX_ITER."""
    if n is None:
        return None
    whole = isinstance(n, numbers.Integral) and not isinstance(n, bool)
    if not (whole and low <= n <= MAX_ITER):
        raise error(what, "max_iter", f" must be {low} to {MAX_ITER:,}, not {n!r}")
    return n


def check_positive(x: float, what: str | None = None, parameter: str = "tol") -> float:
    """A tolerance: a finite number above 0 (nan never stops a loop, 0 or less never lets it
    converge)."""
    real = isinstance(x, numbers.Real) and not isinstance(x, bool)
    if not (real and math.isfinite(x) and x > 0):
        shown = f"{x:g}" if real else repr(x)
        raise error(what, parameter, f" must be a finite number above 0, not {shown}")
    return float(x)


def check_mc(n: int | None, what: str | None = None) -> int | None:
    if n is not None and n < 2:
        raise error(what, "mc", f" takes a number of draws of 2 or more, not {n}")
    return n


def check_seed(seed: int | None, what: str | None = None) -> int | None:
    if seed is not None and seed < 0:
        raise error(what, "seed", f" must be 0 or more, not {seed}")
    return seed
