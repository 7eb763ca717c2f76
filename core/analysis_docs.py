"""The analyses (taylor, propagate, minimize, solve, critical): settings, one run, documents.

One place for what the commands (``cli/analysis.py``) and the batch lines
(:mod:`autograd_cli.core.rows`, ``cli/batch.py``) share, so that a batch line's output is the
document the single command prints with ``--json``:

* :func:`run`: one analysis of a program at a point, the library's result, as the one
  dispatcher (:func:`autograd_cli.core.api.compute`) asks for it
  (:mod:`~autograd_cli.core.taylor`, :mod:`~autograd_cli.core.uncertainty`,
  :mod:`~autograd_cli.core.optimize`);
* :func:`document`: SPEC's JSON document of that result (what ``--json`` prints);
* the checks of each setting, their messages spelled as the user wrote the setting
  (``--max-iter`` on the command line, ``"max_iter"`` on a batch line): a wrong one is the
  usage error (:class:`~autograd_cli.core.values.UsageError`, the command line's), which a batch
  line reports as its ``bad_line`` record;
* :data:`KEYS` and :func:`settings`: what a batch line may set for each op, the command's
  options spelled as JSON keys, checked and converted to :func:`run`'s settings;
  :func:`split_uncertain` and :func:`parse_bounds`: a variable's value that carries an
  uncertainty (``"9.81+-0.02"``, propagate) or bounds (``"-1:2"``, minimize).

It is library code beside :mod:`autograd_cli.core.rows`, which runs a row's analysis
through it: a document is a plain dict (SPEC's shape; writing it as JSON text is the command
line's), and nothing here knows the grammar or the Typer commands.

>>> from autograd_cli.core.api import compute
>>> from autograd_cli.grammar import parse
>>> r = compute("taylor", parse("exp(x)"), {"x": 0.0}, order=2)
>>> document("taylor", "exp(x)", r)["coefficients"]
[1.0, 1.0, 0.5]
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Mapping

from .errors import spell
from .settings import MAX_ITER, check_max_iter, check_mc, check_positive, check_seed
from .settings import error as _setting
from .values import UsageError, parse_literal
from .values import numbers as _numbers

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .program import Program

__all__ = [
    "KEYS",
    "MAX_ITER",
    "OPS",
    "check_max_iter",
    "check_mc",
    "check_positive",
    "check_seed",
    "converged",
    "document",
    "parse_bounds",
    "parse_corr",
    "scalars",
    "settings",
    "split_uncertain",
]

OPS = ("taylor", "propagate", "minimize", "solve", "critical")

#: what a batch line may give for each op besides expr, vars and op: the command's options
#: as JSON keys (``--max-iter`` -> ``max_iter``).  A propagate input's uncertainty and a
#: minimize variable's bounds are its value in "vars", as the command takes them.
KEYS = {
    "taylor": ("wrt", "order", "at"),
    "propagate": ("corr", "mc", "seed"),
    "minimize": ("wrt", "method", "gtol", "max_iter", "trace"),
    "solve": ("wrt", "tol", "max_iter", "trace"),
    "critical": ("wrt", "gtol", "max_iter", "trace"),
}

#: the settings :func:`run` passes on to the library function of each op
_SETTINGS = {
    "taylor": ("at",),
    "propagate": ("uncertainties", "correlations", "mc", "seed"),
    "minimize": ("method", "gtol", "max_iter", "bounds"),
    "solve": ("tol", "max_iter"),
    "critical": ("gtol", "max_iter"),
}
#: the analyses that iterate (a trace of every iterate, kept where asked)
_ITERATIVE = ("minimize", "solve", "critical")


def _usage(message: str):
    return UsageError(message)


def parse_corr(items, what: str | None = None) -> dict:
    """``A,B=R`` items (the correlation of two scalar inputs) -> {(A, B): R}."""
    correlations = {}
    for item in items:
        m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*,\s*([A-Za-z_]\w*)\s*=\s*(.+)", item)
        if m is None:
            raise _setting(what, "corr", f" takes A,B=R (such as x,y=0.3), not {item!r}")
        try:
            r = float(m.group(3))
        except ValueError:
            raise _setting(what, "corr", f" {item!r}: {m.group(3)!r} is not a number") from None
        correlations[(m.group(1), m.group(2))] = r
    return correlations


def scalars(values: Mapping, what: str) -> dict:
    """name -> a number (``--at``'s values); an array is an error."""
    out = {}
    for name, v in values.items():
        if isinstance(v, (list, tuple)):
            raise _usage(f"{what} {name}: a number, not an array")
        if isinstance(v, complex):
            raise _usage(f"{what} {name}: a real number, not a complex one")
        out[name] = float(v)
    return out


_UNCERTAIN = re.compile(r"^(?P<value>.+?)\s*(?:\+-|\+/-|±)\s*(?P<u>.+)$", re.DOTALL)


def split_uncertain(text: str, name: str, what: str | None = None):
    """``"9.81+-0.02"`` / ``"9.81±0.02"`` / ``"[1,2]+-[0.1,0.2]"`` -> (value text, u);
    a plain value -> (text, None).  ``u`` is parsed (a number or a nested list); ``what``
    names it in an error (default: ``the uncertainty of 'NAME'``; the command line passes
    ``the uncertainty of --NAME``)."""
    m = _UNCERTAIN.match(text.strip())

    if m is None:
        stripped = text.strip()
        for pm in ("+/-", "+-", "±"):  # "9.81+-" or "+-0.02": one side of the ± is missing
            side = "uncertainty after" if stripped.endswith(pm) else None
            side = "value before" if stripped.startswith(pm) else side
            if side:
                from .errors import BadValueError
                from .safetext import shorten

                where = what.removeprefix("the uncertainty of ") if what else repr(name)
                raise BadValueError(
                    f"{where}: {shorten(text)!r} has no {side} {pm!r}; write VALUE+-U, "
                    f"such as 9.81+-0.02",
                    value=shorten(text),
                )
        return text, None

    return m.group("value"), parse_literal(m.group("u"), what or f"the uncertainty of {name!r}")


_BOUNDS = re.compile(r"\s*([^:\s]+)\s*:\s*([^:\s]+)\s*")


def parse_bounds(text: str, what: str):
    """``"LOW:HIGH"`` -> (low, high, start): the start mid-way (or at the finite end, or 0);
    None when ``text`` is not of that form.  ``what`` names the variable in an error."""
    m = _BOUNDS.fullmatch(text)
    if m is None:
        return None
    try:
        lo, hi = float(m.group(1)), float(m.group(2))
    except ValueError:
        raise _usage(f"{what} {text!r}: bounds are LOW:HIGH, two numbers") from None
    if math.isnan(lo) or math.isnan(hi) or lo > hi:
        raise _usage(f"{what} {text!r}: the bounds are empty")
    if math.isfinite(lo) and math.isfinite(hi):
        start = (lo + hi) / 2
    else:
        start = lo if math.isfinite(lo) else hi if math.isfinite(hi) else 0.0
    return lo, hi, start


# ---------------------------------------------------------------------------
# A batch line's settings
# ---------------------------------------------------------------------------


def _json_key(key: str) -> str:
    return f'"{key}"'


def _whole(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _usage(f"{what} must be a whole number, not {_shown(value)}")
    return value


def _number(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _usage(f"{what} must be a number, not {_shown(value)}")
    try:
        return float(value)
    except OverflowError:  # an integer beyond float range
        return math.inf


def _shown(value) -> str:
    from .safetext import shorten

    try:
        return shorten(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError):
        return shorten(repr(value))


def settings(op: str, given: Mapping, spell=_json_key) -> dict:
    """A batch line's keys for ``op``, checked like the command's options, as
    :func:`run`'s settings (``wrt`` and ``order`` are checked to be ``op``'s and left
    out: they are the row's own).  ``spell(key)`` is how an error names a key (default
    ``"max_iter"``).  A key ``op`` does not take is a usage error naming those it takes.

    >>> settings("minimize", {"method": "bfgs", "max_iter": 50})
    {'method': 'bfgs', 'max_iter': 50}
    >>> settings("propagate", {"corr": "g,t=0.3", "mc": 1000, "seed": 1})
    {'correlations': {('g', 't'): 0.3}, 'mc': 1000, 'seed': 1}
    """
    from .optimize import METHODS

    if op not in OPS:
        raise ValueError(f"op must be one of {', '.join(OPS)}, not {op!r}")
    wrong = [k for k in given if k not in KEYS[op]]
    if wrong:
        raise _usage(
            f"{op} takes no {', '.join(map(spell, wrong))} "
            f"(it takes {', '.join(map(spell, KEYS[op]))})"
        )
    out: dict = {}
    for key, value in given.items():
        what = spell(key)
        if key in ("wrt", "order"):
            continue
        if key == "at":
            if not isinstance(value, dict):
                raise _usage(f'{what} must be an object {{"name": value}}')
            out["at"] = scalars(
                {n: _numbers(v, f"{what} {n}", _shown(v)) for n, v in value.items()}, what
            )
        elif key == "corr":
            items = [value] if isinstance(value, str) else value
            if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
                raise _usage(f'{what} takes "A,B=R" or a list of them')
            out["correlations"] = parse_corr(items, what)
        elif key == "mc":
            out["mc"] = check_mc(_whole(value, what), what)
        elif key == "seed":
            out["seed"] = check_seed(_whole(value, what), what)
        elif key == "method":
            if value not in METHODS:
                raise _usage(f"{what} must be one of {', '.join(METHODS)}, not {_shown(value)}")
            out["method"] = value
        elif key in ("gtol", "tol"):
            out[key] = check_positive(_number(value, what), what)
        elif key == "max_iter":
            out["max_iter"] = check_max_iter(_whole(value, what), what)
        elif key == "trace":
            if not isinstance(value, bool):
                raise _usage(f"{what} must be true or false, not {_shown(value)}")
            out["trace"] = value
    return out


# ---------------------------------------------------------------------------
# One analysis, and its document
# ---------------------------------------------------------------------------


def run(op: str, program: Program, values: Mapping, wrt, order, settings: Mapping):
    """``op`` of ``program`` at ``values``: the library's result (TaylorResult,
    PropagateResult or OptimizeResult), as :func:`autograd_cli.core.api.compute`, the one
    dispatcher, asks for an analysis by name.

    ``settings`` (:func:`settings` makes them from a batch line): taylor ``at``; propagate
    ``uncertainties`` (name -> u), ``correlations``, ``mc``, ``seed``; minimize ``method``,
    ``gtol``, ``max_iter``, ``bounds`` (name -> (low, high)); solve ``tol``, ``max_iter``;
    critical ``gtol``, ``max_iter``; and ``trace`` (minimize, solve and critical keep
    every iterate only with it: see :func:`document`).
    A setting left None takes the library's default.
    """
    if op not in OPS:
        raise ValueError(f"op must be one of {', '.join(OPS)}, not {op!r}")
    given = {k: v for k, v in settings.items() if v is not None and k != "trace"}
    unknown = sorted(set(given) - set(_SETTINGS[op]))
    if unknown:
        raise TypeError(f"{op} takes no setting {', '.join(map(repr, unknown))}")
    if op in _ITERATIVE:
        given["trace"] = bool(settings.get("trace"))
    return _ANALYSES[op](program, values, wrt, order, given)


def _taylor(program, values, names, order, given):
    from .taylor import taylor

    return taylor(program, values, wrt=names, order=order, **given)


def _propagate(program, values, names, order, given):
    from .uncertainty import propagate

    return propagate(
        program,
        values,
        given.pop("uncertainties", {}),
        correlations=given.get("correlations") or {},
        mc=given.get("mc"),
        seed=given.get("seed"),
    )


def _minimize(program, values, names, order, given):
    from .optimize import minimize

    return minimize(program, values, wrt=names, **given)


def _solve(program, values, names, order, given):
    from .optimize import solve

    return solve(program, values, wrt=names, **given)


def _critical(program, values, names, order, given):
    from .optimize import critical

    return critical(program, values, wrt=names, **given)


#: the analyses by name (:data:`OPS`), each run as ``(program, values, wrt, order,
#: settings)``: the one place :func:`run` finds the library function of an op
_ANALYSES = {
    "taylor": _taylor,
    "propagate": _propagate,
    "minimize": _minimize,
    "solve": _solve,
    "critical": _critical,
}


def document(op: str, source: str, result, *, trace: bool = False) -> dict:
    """SPEC's document of ``result`` (from :func:`run` for ``op``; ``source``: the
    expression's text): what the command prints with ``--json``, and a batch line holds
    (after its ``"line"``).  ``trace``: minimize, solve, critical add every iterate."""
    r = result
    if op == "taylor":
        return _summary(
            source, r, ("at", "order", "coefficients", "polynomial", "value"), "remainder"
        )
    if op == "propagate":
        return _summary(source, r, ("value", "uncertainty", "budget", "second_order"), "mc")
    if op not in OPS:
        raise ValueError(f"op must be one of {', '.join(OPS)}, not {op!r}")
    doc = {
        "expr": source,
        "x": r.x,
        "value": r.value,
        "grad": r.grad,
        "iterations": r.iterations,
        "converged": r.converged,
        "method": r.method,
        "message": r.message,
    }
    if op == "solve":
        doc["residual"] = r.residual
    if op == "critical":
        doc["kind"] = r.kind
        doc["eigenvalues"] = r.eigenvalues
    if trace:
        doc["trace"] = r.trace
    return doc


def spelled(result, spelling):
    """``result`` (of :func:`run`) with its message and warnings naming the settings in a
    caller's spelling (:func:`~.errors.spell`: the command line's ``--max-iter``, a batch
    line's ``"max_iter"``); the library's own names ``max_iter``."""
    changes = {}
    if isinstance(getattr(result, "message", None), str):
        changes["message"] = spell(result.message, spelling)
    if getattr(result, "warnings", None):
        changes["warnings"] = [spell(w, spelling) for w in result.warnings]
    return dataclasses.replace(result, **changes) if changes else result


def _summary(source: str, r, keys: tuple, optional: str) -> dict:
    """A taylor or propagate document: ``keys`` in order, ``optional`` where the result has
    it, then the warnings where there are any."""
    doc = {"expr": source, **{key: getattr(r, key) for key in keys}}
    if getattr(r, optional) is not None:
        doc[optional] = getattr(r, optional)
    if r.warnings:
        doc["warnings"] = list(r.warnings)
    return doc


def converged(result) -> bool:
    """False for a minimize, solve or critical that did not converge (the command exits 1)."""
    return getattr(result, "converged", True) is not False
