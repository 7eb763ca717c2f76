"""Many points of one expression: the ``batch`` command's evaluation, as a library.

Each point (a *row*) is a :class:`Row`: the variables' values and what to compute there
(``op``: eval, grad, hessian, jacobian or diff; ``wrt``; ``order``; ``grad_output``; or an
analysis, :data:`ANALYSIS_OPS`, with its ``settings``).
:func:`evaluate_rows` evaluates a list of rows of one program and returns, row by row, the
:class:`~autograd_cli.core.api.Result` that the single command computes at that point (for
an analysis: the library's result, whose document is
:func:`autograd_cli.core.analysis_docs.document`), or the row's error (an exception object, not
raised): the same numbers, warnings and messages.

How: rows that share ``op``, ``wrt`` and the variables' shapes (and can be vectorised:
``eval``, and ``grad`` of order 1 without ``grad_output``) form a group, evaluated at once
by :func:`autograd_cli.core.batch.evaluate_batch` along a leading batch axis.  A group falls
back to one row at a time only for named reasons: the batch evaluator has no rule for it
(:class:`~autograd_cli.core.batch.Unbatchable`), an engine error each row must get in its
own words (:class:`~autograd_cli.core.errors.EvaluationError`), or a ``MemoryError``; any
other exception is a bug and is raised.  Every other row is evaluated on its own, an
analysis (taylor, propagate, minimize, solve, critical) always.

>>> import autograd_cli as ag
>>> out = evaluate_rows(ag.parse("x*y"), [{"x": 1.0, "y": 2.0}, {"x": 3.0, "y": 4.0}])
>>> [float(r.value) for r in out], [float(r.grad["x"]) for r in out]
([2.0, 12.0], [2.0, 4.0])

The parts, for a caller that groups and writes on its own (the ``batch`` command):
:func:`plan` (the order of evaluation), :func:`evaluate_group` (one group: a
``BatchResult`` or the rows one by one), :func:`row_result` (one row of a
``BatchResult``), :func:`evaluate_row` (one row alone).

This module is the top of ``core`` with :mod:`~autograd_cli.core.api` (its one-row path is
api's): nothing else in ``core`` builds on either (tests/test_layers.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from . import analysis_docs, api
from . import batch as _batch
from .errors import AutogradCliError, EvaluationError

if TYPE_CHECKING:
    from .program import Program

__all__ = [
    "ANALYSIS_OPS",
    "BATCHED_OPS",
    "OPS",
    "Row",
    "RowError",
    "batchable",
    "evaluate_group",
    "evaluate_row",
    "evaluate_rows",
    "plan",
    "row_result",
    "stack_rows",
]

#: the analyses (the commands of :mod:`autograd_cli.core.analysis_docs`): one row at a time
ANALYSIS_OPS = analysis_docs.OPS
OPS = ("eval", "grad", "hessian", "jacobian", "diff") + ANALYSIS_OPS
#: the ops whose rows can be evaluated together, vectorised
BATCHED_OPS = ("eval", "grad")

#: why a group falls back to one row at a time (anything else is a bug, raised)
FALLBACK = (_batch.Unbatchable, EvaluationError, MemoryError)


class RowError(AutogradCliError):
    """A row that asks for something its op cannot do (``kind``: bad_line or unsupported)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class Row:
    """One point: the variables' values (name -> number or array) and what to compute.

    ``shapes`` (``((name, shape), ...)`` in the values' order) decides, with ``op`` and
    ``wrt``, which rows are evaluated together; it is computed when not given.
    ``settings``: an analysis op's, as :func:`autograd_cli.core.analysis_docs.run` takes them
    (:func:`autograd_cli.core.analysis_docs.settings` makes them from a batch line's keys).
    """

    __slots__ = ("values", "op", "wrt", "order", "grad_output", "shapes", "settings")

    def __init__(
        self,
        values: dict,
        op: str = "grad",
        wrt: tuple | None = None,
        order: int | None = None,
        grad_output=None,
        shapes: tuple | None = None,
        settings: dict | None = None,
    ):
        self.values = values
        self.settings = settings
        self.op = op
        if wrt is not None and type(wrt) is not tuple:  # "a, b" or a list of names
            wrt = _names(wrt)
        self.wrt = wrt  # a tuple of names, or None (every input)
        self.order = order
        self.grad_output = grad_output
        if shapes is None:
            try:
                shapes = tuple((name, np.shape(v)) for name, v in values.items())
            except ValueError:  # a ragged value: evaluated alone, it gets its bad_value error
                shapes = None
        self.shapes = shapes

    @property
    def batchable(self) -> bool:
        return batchable(self.op, self.order, self.grad_output)


def batchable(op: str, order: int | None = None, grad_output=None) -> bool:
    """Rows evaluated together, vectorised: eval, and grad of order 1 without grad_output."""
    return op in BATCHED_OPS and grad_output is None and order in (None, 1)


# ---------------------------------------------------------------------------
# One row
# ---------------------------------------------------------------------------


def line_spelling(parameter: str) -> str:
    """A batch line's spelling of a parameter a library message names
    (:meth:`~.errors.AutogradCliError.spelled`): its JSON key, quoted (``"order"``)."""
    return f'"{parameter}"'


#: a request the dispatcher refuses, as a row's error kind
_ROW_KINDS = {"combination": "bad_line", "unsupported": "unsupported"}


def evaluate_row(program: Program, row: Row):
    """``row`` evaluated alone, as the single command does it: a Result (raises its error)."""
    wrt = list(row.wrt) if row.wrt else None
    if row.op in ANALYSIS_OPS:
        _check_analysis(row, wrt)
    elif row.settings:
        raise RowError("bad_line", f"{row.op} takes no settings (only an analysis does)")
    try:
        return api.compute(
            row.op,
            program,
            row.values,
            wrt,
            order=row.order,
            grad_output=row.grad_output,
            **(row.settings or {}),
        )
    except api.RequestError as exc:
        if exc.reason not in _ROW_KINDS:
            raise
        raise RowError(_ROW_KINDS[exc.reason], exc.spelled(line_spelling)) from None


def _check_analysis(row: Row, wrt) -> None:
    """An analysis row's keys: what its op does not take is the line's error."""
    takes = analysis_docs.KEYS[row.op]
    if row.grad_output is not None:
        raise RowError("bad_line", f'{row.op} takes no "grad_output"')
    if row.order is not None and "order" not in takes:
        raise RowError("bad_line", f'{row.op} takes no "order"')
    if wrt and "wrt" not in takes:
        raise RowError("bad_line", f'{row.op} takes no "wrt"')


def outcome(program: Program, row: Row):
    """:func:`evaluate_row`'s Result, or the exception it raised (every failure is the row's)."""
    try:
        return evaluate_row(program, row)
    # Broad on purpose: a row's failure, whatever its class, is that row's outcome (the
    # batch command writes it as the line's error record, an unexpected class as kind
    # "internal"), so that one bad row never stops the others.  Nothing narrower will do:
    # the classes a row can raise are every op's, NumPy's and the analyses'.  KeyboardInterrupt
    # and SystemExit (not Exception) still stop the run.
    except Exception as exc:  # noqa: BLE001
        return exc


# ---------------------------------------------------------------------------
# A group of rows
# ---------------------------------------------------------------------------


def stack_rows(rows: Sequence[Row], shapes) -> dict:
    """The rows' values as columns: name -> array ``(len(rows),) + shape``."""
    columns = {}
    try:
        for name, shape in shapes:
            if shape == ():
                columns[name] = np.array([r.values[name] for r in rows], dtype=np.float64)
            else:
                columns[name] = np.stack([r.values[name] for r in rows])
    except OverflowError:  # an integer beyond float range: each row gets its bad_value
        raise _batch.Unbatchable("a value does not fit a float") from None
    except TypeError:  # a complex number: the rows one at a time (the engine's own path)
        raise _batch.Unbatchable("a complex value") from None
    return columns


def evaluate_group(
    program: Program,
    size: int,
    columns: dict | Callable[[], dict],
    *,
    op: str = "grad",
    wrt: Sequence[str] | None = None,
    rows: Callable[[int], Row] | None = None,
    check: Callable[[], None] | None = None,
):
    """``size`` rows of ``program`` (op ``eval`` or ``grad``, one ``wrt``) evaluated at once.

    ``columns``: name -> array ``(size,) + shape``, or a function making them (called here,
    so rows that cannot be stacked fall back like an unbatchable group).  ``rows(j)``: row j
    for the fallback (default: read from the columns).

    Returns a :class:`~autograd_cli.core.batch.BatchResult` (row j: :func:`row_result`), or
    else an iterator over the rows' outcomes (a Result or an exception), in order: every
    row's same error for a group error (an unknown variable, a non-scalar output), or the
    rows evaluated one at a time as the iterator is consumed, ``check()`` called before
    each (a stop it raises goes through).
    """
    if op not in BATCHED_OPS:
        raise ValueError(f"a group is evaluated at once for {' or '.join(BATCHED_OPS)}, not {op!r}")
    made = None
    try:
        made = columns() if callable(columns) else columns
        return _batch.evaluate_batch(
            program, made, size, grad=(op == "grad"), wrt=list(wrt) if wrt else None
        )
    except _batch.GroupError as exc:
        return iter([exc.error] * size)
    except FALLBACK:
        # Named reasons only: a rule that cannot batch these shapes, an engine error whose
        # message each row must get in its own words, or a batch too big for memory at
        # once.  Any other exception is a bug and surfaces as one.
        if rows is None:
            if made is None:
                raise
            rows = _from_columns(made, op, wrt)
        return _one_by_one(program, size, rows, check)


def _from_columns(columns: dict, op: str, wrt) -> Callable[[int], Row]:
    wrt = tuple(wrt) if wrt else None
    return lambda j: Row({n: c[j] for n, c in columns.items()}, op, wrt, shapes=())


def _one_by_one(program, size, rows, check) -> Iterator:
    for j in range(size):
        if check is not None:
            check()
        yield outcome(program, rows(j))


def row_result(result, j: int):
    """Row ``j`` of a BatchResult as the Result its row alone gives."""
    grad = result.grad
    return api.Result(
        value=result.value[j, ...],
        warnings=list(result.row_warnings(j)),
        grad=None if grad is None else {k: a[j, ...] for k, a in grad.items()},
    )


# ---------------------------------------------------------------------------
# Many rows
# ---------------------------------------------------------------------------


def plan(rows: Sequence[Row], keys: Sequence | None = None) -> list:
    """The order of evaluation of ``rows``: ``(batched, positions)`` pairs, each a group of
    batchable rows sharing op, wrt, shapes (and ``keys[i]``, e.g. the expression) or one
    other row, in order of their first row (so a prefix of the rows completes early)."""
    by_key: dict = {}
    items = []
    for i, row in enumerate(rows):
        if (
            row.op in BATCHED_OPS
            and row.grad_output is None
            and row.order in (None, 1)
            and row.shapes is not None
        ):
            key = (
                (row.op, row.wrt, row.shapes)
                if keys is None
                else (keys[i], row.op, row.wrt, row.shapes)
            )
            members = by_key.get(key)
            if members is None:
                members = by_key[key] = []
                items.append((i, 0, members))
            members.append(i)
        else:
            items.append((i, 1, [i]))
    items.sort(key=lambda x: (x[0], x[1]))
    return [(kind == 0, positions) for _, kind, positions in items]


def _as_row(item, op, wrt, order, grad_output, settings=None) -> Row:
    if isinstance(item, Row):
        return item
    if op not in OPS:
        raise ValueError(f"op must be one of {', '.join(OPS)}, not {op!r}")
    names = _names(wrt) if op != "eval" else None
    return Row(dict(item), op, names, order, grad_output, settings=settings)


def _names(wrt) -> tuple | None:
    from .program import split_names

    return tuple(split_names(wrt)) or None


def evaluate_rows(
    program: Program,
    rows: Iterable[Row | Mapping],
    *,
    op: str = "grad",
    wrt: str | Sequence[str] | None = None,
    order: int | None = None,
    grad_output=None,
    settings: dict | None = None,
    check: Callable[[], None] | None = None,
) -> list:
    """Each row of ``program`` evaluated: per row a Result (an analysis: the library's
    result), or the row's error (not raised).

    ``rows``: :class:`Row` objects, or plain ``{name: value}`` dicts that take ``op``,
    ``wrt``, ``order``, ``grad_output`` and ``settings`` from the keywords.  ``check()`` is
    called before each group and each row evaluated alone (to stop early, raise from it).

    >>> import autograd_cli as ag
    >>> r, = evaluate_rows(ag.parse("x**2 - 4*x"), [{"x": 0.0}], op="minimize")
    >>> r.converged, round(r.x["x"], 9)
    (True, 2.0)
    """
    items = [_as_row(r, op, wrt, order, grad_output, settings) for r in rows]
    out: list = [None] * len(items)
    for batched, positions in plan(items):
        if check is not None:
            check()
        if not batched:
            out[positions[0]] = outcome(program, items[positions[0]])
            continue
        members = [items[p] for p in positions]
        first = members[0]
        got = evaluate_group(
            program,
            len(members),
            functools.partial(stack_rows, members, first.shapes),
            op=first.op,
            wrt=first.wrt,
            rows=members.__getitem__,
            check=check,
        )
        if isinstance(got, _batch.BatchResult):
            for j, p in enumerate(positions):
                out[p] = row_result(got, j)
        else:
            for p, o in zip(positions, got):
                out[p] = o
    return out
