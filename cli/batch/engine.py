"""Batch evaluation: a chunk of parsed lines run and turned into output lines.

* Within a chunk, lines that share the expression, op, ``wrt`` and variable shapes form a
  group, evaluated at once by :mod:`autograd_cli.core.batch` (vectorised over a batch axis,
  identical to one-at-a-time evaluation).  A group the batch evaluator cannot take is
  evaluated row by row, as are ``hessian``, ``jacobian``, ``diff`` and the analysis ops.
  The grouping, the vectorised call, the named fallbacks and one row alone are the
  library's :mod:`autograd_cli.core.rows`; :class:`Runner` runs them in the order of
  ``rows.plan`` and puts each line's text in :class:`Chunk` ``.out``.  With
  ``--fail-fast``, a line or group that starts after a failed line is not evaluated.
* Writing: for scalar results one line template per group (:func:`line_template`: the
  text between the numbers, rendered part by part; filled a column at a time by
  :func:`fill`), else ``jsonout.dumps`` of ``render.result_json``.
* A line's error is its record (:meth:`Chunk.fail`, through ``records.exception_doc``).

The seam other modules use (the Dask engine among them) is ``__all__``.
"""

from __future__ import annotations

import functools
import json

import numpy as np

from ...core import analysis_docs
from ...core.batch import BatchResult
from ...core.errors import AutogradCliError
from ...core.rows import (
    ANALYSIS_OPS,
    batchable,
    evaluate_group,
    outcome,
    plan,
    row_result,
    stack_rows,
)
from .. import jsonout
from ..status import flag
from . import columnar
from .io import Overlong, Stop
from .records import (
    BatchOptions,
    Task,
    csv_fast,
    csv_row,
    exception_doc,
    overlong_error,
    parse_jsonl,
    result_doc,
)

__all__ = [
    "FAILED",
    "Chunk",
    "Programs",
    "Runner",
    "Templates",
    "column_group",
    "evaluate_chunk",
    "fill",
    "line_template",
    "parse_each",
    "run_chunk",
]

#: what :meth:`Chunk.attempt` returns for a line that failed (its record is written)
FAILED = object()


class Programs:
    """Parsed expressions (or their parse errors), cached by text."""

    def __init__(self, limit: int = 512):
        self.cache: dict = {}
        self.limit = limit

    def get(self, text: str):
        hit = self.cache.get(text)
        if hit is None:
            from ...grammar import parse

            try:
                hit = (parse(text), None)
            except AutogradCliError as exc:
                hit = (None, exc)
            except RecursionError as exc:
                hit = (None, exc)
            if len(self.cache) >= self.limit:
                self.cache.clear()
            self.cache[text] = hit
        return hit


class Templates:
    """Templates of a result line with a scalar value and scalar gradients, per expression,
    gradient names and warnings: the text between the numbers, and which number goes where
    (cached)."""

    def __init__(self):
        self.cache: dict = {}

    def get(self, expr: str, grad_names, warnings=()):
        key = (expr, grad_names, warnings)
        if key not in self.cache:
            if len(self.cache) >= 1024:
                self.cache.clear()
            self.cache[key] = line_template(expr, grad_names, warnings)
        return self.cache[key]


def line_template(expr: str, grad_names, warnings=()) -> tuple[list, list]:
    """A scalar result's line, ``{"line": L, "expr": ..., "value": V, "shape": [], "grad":
    {"a": G, ...}, "warnings": [...]}``, as ``(parts, order)``: the texts between its numbers
    and the number each gap takes (``"line"``, ``"value"``, ``("grad", name)``), rendered
    part by part with the keys and separators ``jsonout.dumps(result_doc(...))`` writes
    (``render.result_json``'s order; tests/test_batch.py compares the two paths' bytes)."""
    parts = ['{"line": ', ', "expr": ' + json.dumps(expr, ensure_ascii=False) + ', "value": ']
    order: list = ["line", "value"]
    text = ', "shape": []'
    if grad_names is not None:
        text += ', "grad": {'
        for i, name in enumerate(grad_names):
            parts.append(text + (", " if i else "") + jsonout.dumps(name) + ": ")
            order.append(("grad", name))
            text = ""
        text += "}"
    if warnings:
        text += ', "warnings": ' + jsonout.dumps(list(warnings))
    parts.append(text + "}")
    return parts, order


def fill(parts: list, columns: list) -> list:
    """Row i's line: ``parts[0] + columns[0][i] + parts[1] + ... + parts[-1]`` (texts).

    An f-string with the parts in local names, written out for each common number of
    columns (line, value and one to four partials): 2.5 times as fast as %-formatting,
    which was the largest cost of a batch run (issue 12)."""
    rows = zip(*columns)
    if len(columns) == 3:
        p0, p1, p2, p3 = parts
        return [f"{p0}{a}{p1}{b}{p2}{c}{p3}" for a, b, c in rows]
    if len(columns) == 4:
        p0, p1, p2, p3, p4 = parts
        return [f"{p0}{a}{p1}{b}{p2}{c}{p3}{d}{p4}" for a, b, c, d in rows]
    if len(columns) == 5:
        p0, p1, p2, p3, p4, p5 = parts
        return [f"{p0}{a}{p1}{b}{p2}{c}{p3}{d}{p4}{e}{p5}" for a, b, c, d, e in rows]
    if len(columns) == 6:
        p0, p1, p2, p3, p4, p5, p6 = parts
        return [f"{p0}{a}{p1}{b}{p2}{c}{p3}{d}{p4}{e}{p5}{f}{p6}" for a, b, c, d, e, f in rows]
    text = "%s".join(part.replace("%", "%%") for part in parts)
    return [text % row for row in rows]


class Chunk:
    """One chunk of input lines: their numbers, and the output line of each once done.

    ``data``: the whole chunk's output as UTF-8 bytes (each line with its line end) when it
    was made at once (``columnar.lines_data``); ``out`` splits it into the lines on demand.
    """

    def __init__(self, lines: list[int]):
        self.lines = lines
        self._out: list = [None] * len(lines)
        self.data = None
        self.failed: list = [False] * len(lines)
        self.unconverged: list = [False] * len(lines)  # failed, with a "converged": false doc
        self.first_failed = len(lines)  # the first failed position (len(lines): none yet)

    @property
    def out(self) -> list:
        """Each line's output text (None: not done yet)."""
        if self.data is not None:
            self._out[:] = bytes(self.data).decode("utf-8").split("\n")[:-1]
            self.data = None
        return self._out

    def fail(self, pos: int, exc: BaseException) -> None:
        self.out[pos] = exception_doc(self.lines[pos], exc)
        self.failed[pos] = True
        self.first_failed = min(self.first_failed, pos)

    def attempt(self, pos: int, make, *args):
        """``make(*args)``, or FAILED with line ``pos`` failed by what it raised."""
        try:
            return make(*args)
        except Exception as exc:  # noqa: BLE001 - a line's error is its record: whatever a
            # line's own text or values make the parser or a renderer raise (as rows.outcome
            # takes every exception of its evaluation), never a stop signal (BaseException).
            # Not rows.outcome's catch again: this one holds what comes before the evaluation
            # (the line's parse) and after it (an analysis result's document).
            self.fail(pos, exc)
            return FAILED

    def done_prefix(self) -> int:
        n = 0
        for o in self.out:
            if o is None:
                break
            n += 1
        return n


class Runner:
    def __init__(self, opts: BatchOptions, interrupt):
        self.opts = opts
        self.current: Chunk | None = None  # the chunk being evaluated
        self.written = 0  # lines written so far
        self.failed = 0  # of which error records (or "converged": false documents)
        self.unconverged = 0  # of which "converged": false documents
        self.stopped = False  # --fail-fast stopped the run
        self.programs = Programs()
        self.templates = Templates()
        self.interrupt = interrupt
        self.chunks = None  # the input's chunks (read_chunks), once reading them has begun

    def count(self, chunk: Chunk, n: int) -> None:
        self.written += n
        if chunk.first_failed < n:  # (an unconverged line is a failed one too)
            self.failed += sum(chunk.failed[:n])
            self.unconverged += sum(chunk.unconverged[:n])

    def check(self) -> None:
        if self.interrupt.requested:
            raise Stop()

    # ---- one chunk -------------------------------------------------------------------
    def run_chunk(self, chunk: Chunk, tasks: list, groups=None) -> None:
        """Evaluate ``tasks`` (or ready-made CSV ``groups``) into ``chunk.out``, in the order
        of ``rows.plan`` (groups and single lines by their first line: a prefix completes
        early), ``check()`` before each."""
        if groups:
            for group in groups:
                self.check()
                self.run_group(chunk, *group)
            return
        for batched, positions in plan(tasks, [t.expr for t in tasks]):
            if self.opts.fail_fast and chunk.first_failed < positions[0]:
                return  # every line from here on comes after the first failure: not written
            self.check()
            if not batched:
                self.run_single(chunk, tasks[positions[0]])
                continue
            members = [tasks[p] for p in positions]
            first = members[0]
            self.run_group(
                chunk,
                first.expr,
                first.op,
                first.wrt,
                first.shapes,
                [t.pos for t in members],
                functools.partial(stack_rows, members, first.shapes),
                members,
            )

    def run_group(
        self, chunk: Chunk, expr, op, wrt, shapes, positions, make_columns, members=None
    ) -> None:
        program, error = self.programs.get(expr)
        if error is not None:
            for pos in positions:
                chunk.fail(pos, error)
            return
        got = evaluate_group(
            program,
            len(positions),
            make_columns,
            op=op,
            wrt=wrt,
            rows=None if members is None else members.__getitem__,
            check=self.check,
        )
        if isinstance(got, BatchResult):
            self.write_group(chunk, expr, positions, got)
            return
        for pos, result in zip(positions, got):  # one by one: each row written when done
            self.write_one(chunk, pos, expr, result)

    def write_group(self, chunk: Chunk, expr, positions, result) -> None:
        """The output lines of a group's batched result."""
        value = result.value
        grad = result.grad
        n = len(positions)
        whole = n == len(chunk.lines)  # the group is the whole chunk, in order
        lines = chunk.lines if whole else [chunk.lines[p] for p in positions]
        general: list = []
        scalar = value.ndim == 1 and (grad is None or all(g.ndim == 1 for g in grad.values()))
        if not scalar:
            general = list(range(n))
        else:
            # Rows sharing their warnings (usually none) share a line template.
            warned = result.warnings or {}
            if not warned:
                subsets = [((), None)]
            else:
                by_key: dict = {}
                for j in range(n):
                    by_key.setdefault(tuple(warned.get(j, ())), []).append(j)
                subsets = list(by_key.items())
            names = tuple(grad) if grad is not None else None
            for number, (warnings, idx) in enumerate(subsets):
                template = self.templates.get(expr, names, warnings) if number < 16 else None
                if template is None:
                    general.extend(range(n) if idx is None else idx)
                    continue
                if idx is None and whole and _fill_at_once(chunk, template, value, grad):
                    continue
                self.fill_subset(chunk, template, positions, idx, whole, (value, grad, lines))
        for j in sorted(general):
            chunk.out[positions[j]] = result_doc(lines[j], expr, row_result(result, j))

    @staticmethod
    def fill_subset(chunk: Chunk, template, positions, idx, whole, found) -> None:
        """The lines of the rows ``idx`` (None: all) of a group, from their line template;
        ``found``: the group's (value, grad, line numbers)."""
        parts, order = template
        value, grad, lines = found
        if idx is None:
            v, g, ls = value, grad, lines
        else:
            pick = np.asarray(idx)
            v = value[pick]
            g = None if grad is None else {k: a[pick] for k, a in grad.items()}
            ls = [lines[j] for j in idx]
        # Every cell as its JSON text first (jsonout.number_texts: a column at a
        # time), so that the %-formatting of a line only pastes text together.
        cells = {"line": jsonout.int_texts(ls), "value": jsonout.number_texts(v)}
        if g is not None:
            for name, a in g.items():
                cells[("grad", name)] = jsonout.number_texts(a)
        formatted = fill(parts, [cells[k] for k in order])
        if idx is None and whole:
            chunk.out[:] = formatted
        else:
            targets = positions if idx is None else [positions[j] for j in idx]
            for pos, line_text in zip(targets, formatted):
                chunk.out[pos] = line_text

    def run_single(self, chunk: Chunk, task: Task) -> None:
        program, error = self.programs.get(task.expr)
        if error is not None:
            chunk.fail(task.pos, error)
            return
        if task.op not in ANALYSIS_OPS:
            self.write_one(chunk, task.pos, task.expr, outcome(program, task))
            return
        self.interrupt.at_once = True  # Ctrl-C: not after a long minimize, now
        try:
            result = outcome(program, task)
        finally:
            self.interrupt.at_once = False
        if isinstance(result, BaseException):
            chunk.fail(task.pos, result)
        else:
            self.write_analysis(chunk, task, result)

    @staticmethod
    def write_analysis(chunk: Chunk, task: Task, result) -> None:
        """An analysis line's output: the command's --json document (``analysis_docs``); one
        that did not converge keeps it and counts as failed, as the command exits 1."""
        pos = task.pos
        text = chunk.attempt(pos, _analysis_line, chunk.lines[pos], task, result)
        if text is FAILED:
            return
        chunk.out[pos] = text
        if not analysis_docs.converged(result):
            chunk.failed[pos] = chunk.unconverged[pos] = True
            chunk.first_failed = min(chunk.first_failed, pos)

    @staticmethod
    def write_one(chunk: Chunk, pos: int, expr: str, result) -> None:
        """A line's output: its result, or its error record."""
        if isinstance(result, BaseException):
            chunk.fail(pos, result)
        else:
            chunk.out[pos] = result_doc(chunk.lines[pos], expr, result)


def _fill_at_once(chunk: Chunk, template, value, grad) -> bool:
    """The whole chunk's lines from one template as one buffer (``columnar.lines_data``,
    where PyArrow is in use): True when done."""
    if not columnar.active():
        return False
    parts, order = template
    lines = chunk.lines
    first = lines[0]
    if lines[-1] - first == len(lines) - 1:  # increasing: consecutive numbers
        numbers = np.arange(first, first + len(lines), dtype=np.int64)
    else:
        numbers = np.asarray(lines, dtype=np.int64)
    cells = {"line": numbers, "value": value}
    if grad is not None:
        cells.update((("grad", k), a) for k, a in grad.items())
    data = columnar.lines_data(parts, [cells[k] for k in order])
    if data is None:
        return False
    chunk.data = data
    return True


def _analysis_line(line: int, task: Task, result) -> str:
    """An analysis line's text: the command's --json document with ``"line"`` first."""
    trace = bool((task.settings or {}).get("trace"))
    doc = {"line": line}
    # the single command's document, byte for byte (docs/batch.md): a setting, from the line
    # or the command line, is named by the command's flag
    result = analysis_docs.spelled(result, flag)
    doc.update(analysis_docs.document(task.op, task.expr, result, trace=trace))
    return jsonout.dumps(doc)


def evaluate_chunk(
    runner: Runner,
    chunk: Chunk,
    fmt: str,
    texts: list,
    joined: str | None = None,
    names: list | None = None,
    skip: frozenset = frozenset(),
) -> int:
    """One chunk's lines (``texts``, CSV or JSONL) parsed and evaluated into ``chunk.out``;
    returns how many of them are to be written: all, or with --fail-fast those up to and
    including the first failed one."""
    opts = runner.opts
    tasks: list = []
    groups: list = []
    stop_at = None  # with --fail-fast: a line that fails before evaluation
    if type(texts) is not columnar.CleanBlock and type(texts[0]) is Overlong:
        chunk.fail(0, overlong_error(texts[0]))  # a line too long to read: alone in its chunk
        if opts.fail_fast:
            stop_at = 0
    elif fmt == "csv":
        fast = None
        if batchable(opts.op, opts.order):
            fast = _csv_columns(texts, len(names), joined)
        if fast is not None:
            columns = {n: fast[i] for i, n in enumerate(names) if n not in skip}
            groups.append(column_group(opts, columns, len(texts)))
        else:
            texts = texts.lines() if type(texts) is columnar.CleanBlock else texts
            tasks, stop_at = parse_each(chunk, texts, opts, csv_row, names, opts, skip)
    else:
        tasks, stop_at = parse_each(chunk, texts, opts, parse_jsonl, opts)
    return run_chunk(runner, chunk, tasks, groups, stop_at)


def _csv_columns(texts, ncols: int, joined: str | None) -> list | None:
    """A CSV chunk's columns of plain numbers (float64 arrays), or None: PyArrow's reading
    of a clean chunk read as bytes, else (or where it declines) ``csv_fast``'s."""
    if type(texts) is columnar.CleanBlock:
        fast = columnar.parse_block(texts, ncols)
        if fast is not None:
            return fast
        texts, joined = texts.lines(), texts.text()
    fast = csv_fast(texts, ncols, joined)
    return None if fast is None else [fast[:, i] for i in range(ncols)]


def column_group(opts: BatchOptions, columns: dict, size: int) -> tuple:
    """A ready-made group of ``size`` rows of --expr from columns of plain numbers (name ->
    float64 array, in the header's order), for ``Runner.run_chunk``."""
    return (
        opts.expr,
        opts.op,
        tuple(opts.wrt) if opts.wrt and opts.op != "eval" else None,
        tuple((n, ()) for n in columns),
        range(size),
        lambda: columns,
        None,
    )


def parse_each(chunk: Chunk, items: list, opts: BatchOptions, parse, *args) -> tuple:
    """``parse(pos, item, *args)`` for each line of the chunk: (tasks, the position where
    --fail-fast stopped or None); a line that does not parse gets its error record."""
    tasks = []
    for pos, item in enumerate(items):
        task = chunk.attempt(pos, parse, pos, item, *args)
        if task is not FAILED:
            tasks.append(task)
        elif opts.fail_fast:
            return tasks, pos
    return tasks, None


def run_chunk(runner: Runner, chunk: Chunk, tasks: list, groups: list, stop_at) -> int:
    """Evaluate a parsed chunk; returns the number of its lines to write (see evaluate_chunk)."""
    runner.run_chunk(chunk, tasks, groups)
    n = len(chunk.lines) if stop_at is None else stop_at + 1
    if runner.opts.fail_fast:
        for i in range(n):
            if chunk.failed[i]:
                return i + 1
    return n
