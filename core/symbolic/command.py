"""The command-level ``diff``: differentiate, simplify, check the size, print, evaluate.

:func:`diff` takes a parsed Program (or an Expr), differentiates it by each variable asked
for, ``order`` times (:func:`~.differentiation.grad_exprs`), simplifies each order under
one call's step and time budgets (:func:`~.algebra.simplify`; a derivative whose budget
runs out is printed unsimplified, with a note), refuses a derivative growing past its size
budget, prints each (:func:`~autograd_cli.core.printing.to_text`) and, given values,
evaluates them.  It returns a :class:`DiffResult`, plain data the command line renders.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from .. import backend
from ..errors import InputError, LimitError
from ..limits import about, growth_past
from ..printing import to_latex, to_text
from ..program import Expr, Program, check_order, resolve_wrt, topological
from ..recording import evaluate
from .algebra import simplify
from .differentiation import Builder, grad_exprs
from .numbers import np
from .support import SimplifyBudgetExceeded

MAX_NODES = 100_000  # a derivative larger than this (as a DAG) is refused: its text would run
# to megabytes and differentiating it again takes minutes (diff --max-nodes raises it)
#: a derivative whose growth would carry it past this many times ``MAX_NODES`` (or
#: ``--max-nodes``) by the order asked for is refused before the next order (_predict_size)
PREDICTED_MARGIN = 2
LARGE_TEXT = 10_000  # a derivative printed longer than this gets a note with its size
TIME_BUDGET = 10.0  # seconds for a whole diff call's simplification (a safety net; the step
# budget, linear in the size, is what normally bounds the work)

#: a size refusal's ways out (``{n}``: the order; the parameters spelled by the caller)
_WAYS_OUT = (
    " (its text would run to megabytes); for its value at a point use grad {order} {n} "
    "(forward mode, no expression), or raise {max_nodes}"
)


def _braced(text: str) -> str:
    """``text`` as it stands inside a message template (its braces doubled)."""
    return text.replace("{", "{{").replace("}", "}}")


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
    text, output = _source_and_output(source)
    _check_order(order, mixed)
    names = resolve_wrt(source, wrt)
    tidy = _Tidy(names, time.monotonic() + time_budget, step_budget)
    builder = Builder(guards=guards)
    current, graphs = _derivative_graphs(output, names, order, builder, tidy, max_nodes, mixed)
    notes: list[str] = []
    derivatives = {}
    for name in names:
        e = current[name]
        printed = to_text(e)
        derivatives[name] = Derivative(
            name, order, e, printed, tidy.simplified[name], tidy.why[name]
        )
        _note(notes, f"d/d{name}", tidy.why[name], printed, e)
    hessian = None
    if graphs is not None:
        hessian = _hessian_entries(graphs, names, derivatives, tidy.simplified, tidy.why, notes)
    # ``text``: the source differentiated (None for an Expr given directly)
    result = DiffResult(text, order, derivatives, notes=notes, hessian=hessian)
    if values is not None:
        _evaluate_at(result, output, values)
    return result


def _source_and_output(source) -> tuple:
    """The source text (None for an Expr given directly) and the output Expr of ``source``."""
    if isinstance(source, Program):
        return source.source, source.output
    if isinstance(source, Expr):
        return None, source  # an Expr given directly has no source text
    raise TypeError("diff() takes a parsed Program or an Expr; autograd_cli.diff takes the text")


def _check_order(order, mixed: bool) -> None:
    check_order(order, 0)  # an int from 0: the library's one check
    if mixed and order != 2:
        raise InputError.naming(
            "mixed partials are second derivatives: {order} must be 2, not {n}", {"n": order}
        )


class _Tidy:
    """Simplification under one diff call's budgets: ``tidy(key, raw)`` is ``raw`` simplified,
    or ``raw`` itself once a budget has run out, recording by ``key`` (a name for a derivative
    by one variable, ``(a, b)`` for a mixed partial) whether it was simplified and why not."""

    def __init__(self, names: Sequence[str], deadline: float, step_budget: int | None):
        self.deadline = deadline
        self.step_budget = step_budget
        self.simplified: dict = {name: True for name in names}
        self.why: dict = {name: None for name in names}

    def __call__(self, key, raw: Expr) -> Expr:
        try:
            if time.monotonic() > self.deadline:
                # spent by an earlier order or variable: none left to start another pass
                raise SimplifyBudgetExceeded("time")
            return simplify(raw, budget=self.step_budget, deadline=self.deadline)
        except SimplifyBudgetExceeded as exc:
            self.simplified[key] = False
            reason = "time" if str(exc) == "time" else "step"
            self.why[key] = (
                f"simplification ran out of its {reason} budget; "
                f"the derivative is printed unsimplified"
            )
            return raw


def _derivative_graphs(output, names, order, builder, tidy, max_nodes, mixed) -> tuple:
    """name -> the ``order``-th derivative by that name (simplified where the budgets allow),
    and with ``mixed`` the Hessian's graphs (a -> b -> d2/(da db); else None).  Each order is
    measured against ``max_nodes`` before the next is taken (_check_size, _predict_size)."""
    current = {name: output for name in names}
    if order == 0:
        for name in names:
            current[name] = tidy(name, output)
    hessian: dict | None = None
    if mixed:
        hessian = _mixed_partials(
            output, names, builder, tidy, max_nodes, tidy.simplified, tidy.why
        )
        for name in names:
            current[name] = hessian[name][name]
            tidy.simplified[name] = tidy.simplified[(name, name)]
            tidy.why[name] = tidy.why[(name, name)]
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
    return current, hessian


def _note(notes: list, label: str, why: str | None, text: str, e: Expr) -> None:
    """The notes on one derivative: why it is unsimplified, and its size when it is large."""
    if why:
        notes.append(f"{label}: {why}")
    if len(text) > LARGE_TEXT:
        notes.append(
            f"{label}: a large result: {len(text):,} characters, {len(topological([e])):,} nodes"
        )


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
                _note(notes, f"d^2/d{a}d{b}", why[key], text, e)
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
    raise LimitError.naming(
        f"diff: the derivative with respect to {_braced(name)} grew to {n:,} nodes{at}, past "
        f"the size budget of {max_nodes:,}{_WAYS_OUT}",
        {"n": order},
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
    past = growth_past(sizes, order, PREDICTED_MARGIN * max_nodes) if max_nodes else None
    if past is None:
        return
    k, (growth, predicted) = len(sizes), past
    raise LimitError.naming(
        f"diff: the derivative with respect to {_braced(name)} has {sizes[-1]:,} nodes at "
        f"order {k} of {order}, growing about {growth:.1f} times an order: on course for "
        f"{about(predicted)} nodes at order {order}, past the size budget of "
        f"{max_nodes:,}{_WAYS_OUT}",
        {"n": order},
        nodes=sizes[-1],
        predicted_nodes=int(min(predicted, 2**63 - 1)),
        max_nodes=max_nodes,
    )


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
    """``data`` as Python numbers; a float32 (complex64) one as its own shortest decimals,
    as JSON writes grad's (cli/jsonout.shortest): float32 1.331 is 1.3310001, not the double
    1.3310000896453857."""
    a = backend.to_numpy(data)
    kind = complex if a.dtype.kind == "c" else float
    if a.dtype in (np.float32, np.complex64):  # NumPy's str of one is its shortest text
        a = a.real.astype(str).astype(float) + 1j * a.imag.astype(str).astype(float)
        a = a if kind is complex else a.real
    if a.ndim == 0:
        return kind(a)
    return a.astype(kind).tolist()
