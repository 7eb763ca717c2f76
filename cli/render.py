"""Renderers: Rich tables for people, JSON documents for programs.

Computation never prints; commands hand a result here.  Rich is imported
only when rendering for a person, so ``--json`` runs never pay for it.  How many digits
tables show is an argument (``precision``: ``--precision``, ``--plain``), never module state.
"""

from __future__ import annotations

import re
import sys

from ..core.format import Notation, shown
from ..core.safetext import visible
from . import jsonout

#: Digits after the decimal point in tables, PyTorch's default print precision.
DEFAULT_PRECISION = 4
#: The most ``--precision`` takes (a float64 holds about 17 digits; ``--plain``: all of them).
MAX_PRECISION = 17
#: NumPy's ``set_printoptions`` defaults: arrays of more elements than this are summarised
#: with ``...`` and ``EDGE_ITEMS`` elements at each end of each axis.
SUMMARY_THRESHOLD = 1000
EDGE_ITEMS = 3
#: With full digits (``--plain``) nothing is summarised below this many elements.
FULL_THRESHOLD = 10**6
#: Arrays of more elements than this, with full digits, are measured without formatting.
EDGE_BIG = 10**4


def format_scalar(x, precision: int | None = DEFAULT_PRECISION) -> str:
    """One number as NumPy prints a scalar, rounded to ``precision`` digits after the
    decimal point and trimmed (``-12.0``, ``1.8186``, ``1.2346e-05``, ``nan``, ``inf``);
    ``precision=None``: every round-trip digit of its dtype (``1.8185948536513634``)."""
    return Notation([x], precision).scalar(x)


def _summary(precision, edgeitems=None) -> tuple[int, int]:
    """(threshold, edgeitems) of ``array2string``'s summary at ``precision``."""
    if edgeitems is not None:
        return 0, edgeitems
    return (FULL_THRESHOLD, EDGE_ITEMS) if precision is None else (SUMMARY_THRESHOLD, EDGE_ITEMS)


def column_notation(values, precision: int | None = DEFAULT_PRECISION) -> Notation:
    """The one notation of a table column holding ``values`` (numbers and arrays): NumPy's
    rule over every number the column shows (see :class:`~autograd_cli.core.format.Notation`)."""
    import numpy

    threshold, edge = _summary(precision)
    return Notation([shown(numpy.asarray(v), threshold, edge) for v in values], precision)


def format_value(
    value,
    precision: int | None = DEFAULT_PRECISION,
    width: int | None = None,
    edgeitems=None,
    notation=None,
) -> str:
    """A number or array for a person: the one formatter of every table, tree and row.

    A scalar is :func:`format_scalar`'s.  An array is NumPy's ``array2string`` with
    PyTorch's separators: ``precision`` digits after the decimal point at most
    (``floatmode="maxprec"``: ``[2.    , 3.    , 0.8415]``, ``[2., 4.]``), summarised with
    ``...`` past 1000 elements (3 at each end), lines at most ``width`` long and broken
    only between numbers.  ``precision=None`` (``--plain``): every round-trip digit,
    nothing summarised below a million elements.  ``edgeitems`` forces a summary with
    that many elements at each end (for one-line labels).  ``notation``: the column's
    (:func:`column_notation`), else the value's own.
    """
    import numpy

    a = numpy.asarray(value)
    threshold, edge = _summary(precision, edgeitems)
    if notation is None:
        notation = Notation([shown(a, threshold, edge)], precision)
    if a.ndim == 0:
        return notation.scalar(a)
    options: dict = {"separator": ", ", "threshold": threshold, "edgeitems": edge}
    options["max_line_width"] = width if width else 10**6 if a.ndim <= 1 else 75
    if a.dtype.kind == "f":
        options["formatter"] = {"float_kind": notation.formatter(shown(a, threshold, edge))}
    return numpy.array2string(a, **options)


def one_line(value, precision: int | None = DEFAULT_PRECISION, limit: int = 60) -> str:
    """:func:`format_value` on one line of at most about ``limit`` characters (a graph
    node's label, a row of text): a long array is summarised with fewer edge items, and
    cut only between numbers."""
    text = _joined(format_value(value, precision))
    for edge in (3, 2, 1):
        if len(text) <= limit:
            return text
        text = _joined(format_value(value, precision, edgeitems=edge))
    if len(text) <= limit:
        return text
    cut = text.rfind(", ", 0, limit - 5)
    return (text[:cut] if cut > 0 else text[: limit - 3]) + ", ..."


def _joined(text: str) -> str:
    """NumPy's lines as one, without the padding that aligned them: ``[0.1, 0.4, 1.]``."""
    text = re.sub(r"\s+", " ", text)
    return re.sub(r"\s+(?=[,\]])|(?<=\[)\s+", "", text)


class ValueCell:
    """A table cell holding a number or array, formatted for the width Rich gives its
    column: the lines are NumPy's, broken between numbers, never folded inside one."""

    def __init__(self, value, precision: int | None = DEFAULT_PRECISION, notation=None):
        import numpy

        self.array = numpy.asarray(value)
        self.precision = precision
        self.notation = notation  # the column's (column_notation), else the value's own
        self._texts: dict = {}
        self._measure: tuple | None = None

    def text(self, width: int | None) -> str:
        for made_at, (text, widest) in self._texts.items():
            if width is not None and made_at is not None and made_at >= width >= widest:
                return text  # the same lines: every one fits, and no break moves
        if width not in self._texts:
            text = format_value(self.array, self.precision, width=width, notation=self.notation)
            self._texts[width] = (text, max(len(line) for line in text.splitlines()))
        return self._texts[width][0]

    def __str__(self) -> str:
        return self.text(None)

    def __rich_measure__(self, console, options):
        from rich.measure import Measurement

        # Measured once, at the most the table can give (Rich clamps a measure to its
        # max_width, which only shrinks as the table lays out): formatting a large array
        # with every digit takes seconds, so it is done here and at the final width only.
        if self._measure is None and self.precision is None and self.array.size > EDGE_BIG:
            # Every digit of a large array: it fills the line; a number is 25 wide at most
            self._measure = (min(options.max_width, 25 + 2 * self.array.ndim + 2), 10**6)
        if self._measure is None:
            text = self.text(max(1, options.max_width))
            widest = max(len(line) for line in text.splitlines())
            # The narrowest it can go: one number a line, with its brackets and separator.
            number = max(len(t) for t in re.split(r"[\s,\[\]]+", text))
            narrowest = widest if self.array.ndim == 0 else number + 2 * self.array.ndim + 2
            self._measure = (min(widest, narrowest), widest)
        return Measurement(*self._measure)

    def __rich_console__(self, console, options):
        from rich.segment import Segment

        for line in self.text(max(1, options.max_width)).splitlines():
            yield Segment(line)
            yield Segment.line()


def shape_text(shape) -> str:
    shape = tuple(shape)
    return (
        "()"
        if not shape
        else "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
    )


def emit_json(doc: dict) -> None:
    sys.stdout.write(jsonout.dumps(doc) + "\n")


def user_text(text: str) -> str:
    """User text for Rich: control characters escaped (never raw), markup escaped."""
    from rich.markup import escape

    return escape(visible(text))


def make_console(stderr: bool = False, **options):
    """The console every command prints through: tables without trailing spaces, their
    titles laid out at the console's width (see :class:`_TidyTables`)."""
    from rich.console import Console

    console = Console(stderr=stderr, highlight=False, soft_wrap=False, **options)
    console.on_broken_pipe = _broken_pipe  # Rich's default exits 1; the boundary decides
    console.push_render_hook(_TidyTables())
    return console


class _TidyTables:
    """A Rich render hook: each table printed as :class:`_Tidy` prints it, and text (a
    warning, a note) wrapped without the space Rich leaves at the end of each broken line."""

    def process_renderables(self, renderables: list) -> list:
        from rich.table import Table
        from rich.text import Text

        return [
            _Tidy(r) if isinstance(r, Table) else _Trimmed(r) if isinstance(r, Text) else r
            for r in renderables
        ]


class _Trimmed:
    """Text as Rich wraps it, less the blanks that end its lines."""

    def __init__(self, text):
        self.text = text

    def __rich_console__(self, console, options):
        from rich.segment import Segment

        for line in console.render_lines(self.text, options, pad=False):
            yield from _without_trailing_space(line)
            yield Segment.line()


class _Tidy:
    """A table as Rich lays it out, less the spaces that end its lines (Rich pads every
    cell and the title to the table's width), and with its title laid out at the width of
    the console, not of the table: a long expression over a narrow table stays one line."""

    def __init__(self, table):
        self.table = table

    def __rich_console__(self, console, options):
        import copy

        from rich.segment import Segment
        from rich.style import Style

        table = self.table
        parts = [(table, options)]
        if table.title:  # Rich draws no title line for "" either
            title = table.title
            if isinstance(title, str):
                style = Style.pick_first(table.title_style, "table.title")
                title = console.render_str(title, style=style, highlight=False)
            untitled = copy.copy(table)
            untitled.title = None
            parts = [(title, options.update(justify=table.title_justify)), (untitled, options)]
        for part, part_options in parts:
            for line in console.render_lines(part, part_options, pad=False):
                yield from _without_trailing_space(line)
                yield Segment.line()


def _without_trailing_space(line: list) -> list:
    """A line's segments without the blanks that end it (unless a background shows them)."""
    line = list(line)
    while line:
        last = line[-1]
        if last.control or (last.style is not None and (last.style.bgcolor or last.style.reverse)):
            break
        text = last.text.rstrip(" ")
        if text:
            line[-1] = type(last)(text, last.style, last.control)
            break
        line.pop()
    return line


def _broken_pipe():
    raise BrokenPipeError(32, "Broken pipe")


def _table(title: str | None):
    from rich import box
    from rich.table import Table

    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", show_edge=False)
    table.add_column("", style="bold", no_wrap=True)
    table.add_column("shape", no_wrap=True)
    table.add_column("value")  # ValueCells: lines broken between numbers, never inside one
    return table


def print_warnings(warnings) -> None:
    if not warnings:
        return
    console = make_console()
    for w in warnings:
        console.print(f"[yellow]warning:[/yellow] {user_text(w)}", markup=True, highlight=False)


#: Text that Rich lays out one terminal cell per character: printable ASCII and the symbols
#: of our labels.  Anything else (wide or combining characters) is left to Rich.
_ONE_CELL = re.compile(r"[ -~∂·]*")


def plain_width() -> int | None:
    """The width Rich's console would give stdout when it prints no styles there (not a
    terminal, no FORCE_COLOR/TTY_COMPATIBLE asking for them): ``COLUMNS``, else the size of
    the first of stdin, stdout, stderr that is a terminal, else 80, as ``rich.Console.size``
    decides.  None when Rich would style the output (or on Windows): Rich renders it."""
    import os

    env = os.environ
    if os.name == "nt" or env.get("TTY_COMPATIBLE", "") == "1":
        return None
    if env.get("TTY_COMPATIBLE", "") != "0":
        force = env.get("FORCE_COLOR")
        if force is not None and force != "":
            return None
        if force is None:
            try:
                if sys.stdout.isatty():
                    return None
            except (AttributeError, ValueError):
                pass
    columns = env.get("COLUMNS")
    if columns is not None and columns.isascii() and columns.isdigit():  # not "²"
        return int(columns)
    width = None
    for fd in (0, 1, 2):
        try:
            width = os.get_terminal_size(fd).columns
        except (AttributeError, ValueError, OSError):
            continue
        break
    return width or 80


def plain_table(title: str, header: list[str], rows: list[list[str]]) -> bool:
    """Write the table ``_table`` would print (``box.SIMPLE_HEAD``, no edges, the title on
    the left, no line ending in spaces: see :class:`_Tidy`) without Rich, when that is
    exactly what Rich prints: no styles (see ``plain_width``), every cell one line of
    one-cell characters, the title and the table no wider than the console.  Returns False
    (nothing written) otherwise, and the caller uses Rich.  Importing and running Rich was a
    tenth of a cold start (issue 12); tests/test_plain_table.py compares the two on random
    tables."""
    cells = [title, *header, *(c for row in rows for c in row)]
    if not title or not all(_ONE_CELL.fullmatch(c) for c in cells):
        return False
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    total = sum(widths) + 3 * len(widths) - 1  # one space each side, one between columns
    space = plain_width()
    if space is None or total > space or len(title) > space:
        return False

    def line(row):
        return " ".join(f" {c.ljust(w)} " for c, w in zip(row, widths)).rstrip(" ")

    text = [title.rstrip(" "), line(header), "─" * total, *(line(row) for row in rows)]
    sys.stdout.write("\n".join(text) + "\n")
    return True


def render_result(
    expr: str, result, *, kind: str, precision: int | None = DEFAULT_PRECISION
) -> None:
    """A table: the value, then a row per variable's gradient (when there is one), with
    ``precision`` digits after the point (None: every digit)."""
    order = getattr(result, "order", None)
    rows = [("value", result.value)]
    if result.grad is not None:
        for name, g in result.grad.items():
            label = f"∂/∂{name}" if not order or order == 1 else f"∂^{order}/∂{name}^{order}"
            rows.append((label, g))
    if getattr(result, "jvp", None) is not None:
        rows.append(("J·v", result.jvp))
    blocks = getattr(result, "hessian", None) or getattr(result, "jacobian", None)
    title = visible(expr.strip())
    notation = column_notation([v for _, v in rows], precision)
    if (
        not blocks
        and not result.warnings
        and all(v.ndim == 0 for _, v in rows)
        and plain_table(
            title,
            ["", "shape", "value"],
            [[label, "()", format_value(v, precision, notation=notation)] for label, v in rows],
        )
    ):
        return
    from rich.markup import escape

    table = _table(escape(title))
    for label, v in rows:
        table.add_row(escape(label), shape_text(v.shape), ValueCell(v, precision, notation))
    console = make_console()
    console.print(table)
    if getattr(result, "hessian", None):
        _print_blocks(console, "Hessian", result.hessian, precision, nested=True)
    if getattr(result, "jacobian", None):
        _print_blocks(
            console,
            "Jacobian",
            result.jacobian,
            precision,
            nested=False,
            output_shape=result.value.shape,
        )
    print_warnings(result.warnings)


def _print_blocks(console, title, blocks, precision, nested, output_shape=()):
    """A matrix table when every block is a scalar (or a vector of a scalar variable);
    otherwise one table row per block."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    names = list(blocks)
    if nested and all(b.ndim == 0 for row in blocks.values() for b in row.values()):
        table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", show_edge=False)
        table.add_column("", style="bold")
        for n in names:
            table.add_column(escape(n), justify="right")
        columns = {b: column_notation([blocks[a][b] for a in names], precision) for b in names}
        for a in names:
            table.add_row(
                escape(a),
                *[
                    escape(format_value(blocks[a][b], precision, notation=columns[b]))
                    for b in names
                ],
            )
        console.print(table)
        return
    if (
        not nested
        and len(output_shape) <= 1
        and all(b.ndim == len(output_shape) for b in blocks.values())
    ):
        # Scalar variables: rows are output elements, columns the variables (an m x n matrix).
        table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", show_edge=False)
        table.add_column("", style="bold")
        for n in names:
            table.add_column(f"∂/∂{escape(n)}", justify="right")
        columns = {n: column_notation([blocks[n]], precision) for n in names}
        rows = output_shape[0] if output_shape else 1
        for i in range(rows):
            label = f"out[{i}]" if output_shape else "out"
            cells = [blocks[n][i] if output_shape else blocks[n] for n in names]
            table.add_row(
                label,
                *[
                    escape(format_value(c, precision, notation=columns[n]))
                    for c, n in zip(cells, names)
                ],
            )
        console.print(table)
        return
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", show_edge=False)
    table.add_column("block", style="bold", no_wrap=True)
    table.add_column("shape", no_wrap=True)
    table.add_column("value")
    items = (
        [(f"∂²/∂{a}∂{b}", blk) for a, row in blocks.items() for b, blk in row.items()]
        if nested
        else [(f"∂out/∂{n}", blk) for n, blk in blocks.items()]
    )
    notation = column_notation([blk for _, blk in items], precision)
    for label, blk in items:
        table.add_row(escape(label), shape_text(blk.shape), ValueCell(blk, precision, notation))
    console.print(table)


def check_json(expr: str, result) -> dict:
    doc = {
        "expr": expr,
        "value": result.value,
        "shape": list(result.value.shape),
        "passed": result.passed,
        "max_abs_error": result.max_abs_error,
        "max_rel_error": result.max_rel_error,
        "worst": result.worst,
        "eps": result.eps,
        "atol": result.atol,
        "rtol": result.rtol,
        "analytic": result.analytic,
        "numeric": result.numeric,
    }
    if result.warnings:
        doc["warnings"] = list(result.warnings)
    return doc


def render_check(expr: str, result, precision: int | None = DEFAULT_PRECISION) -> None:
    from rich.markup import escape

    table = _table(user_text(expr.strip()))
    table.columns[2].header = "analytic"
    table.add_column("numeric (central differences)")
    analytic = column_notation(result.analytic.values(), precision)
    numeric = column_notation(result.numeric.values(), precision)
    for name in result.analytic:
        a, n = result.analytic[name], result.numeric[name]
        table.add_row(
            f"∂/∂{escape(name)}",
            shape_text(a.shape),
            ValueCell(a, precision, analytic),
            ValueCell(n, precision, numeric),
        )
    console = make_console()
    console.print(table)
    verdict = "[green]PASS[/green]" if result.passed else "[red]FAIL[/red]"
    console.print(
        f"{verdict}  max abs error {result.max_abs_error:.3g}, max rel error "
        f"{result.max_rel_error:.3g} (eps={result.eps:g}, atol={result.atol:g}, "
        f"rtol={result.rtol:g})"
    )
    if result.worst and not result.passed:
        w = result.worst
        console.print(
            f"worst element: d out{_index_text(w['output_index'])} / "
            f"d {escape(str(w['input']))}{_index_text(w['input_index'])} ({w['mode']} mode): "
            f"analytic {w['analytic']:.10g}, numeric {w['numeric']:.10g}"
        )
    print_warnings(result.warnings)


def _index_text(index) -> str:
    """An element's index as Python writes it, ``[1, 0]``; nothing for a scalar (``out``,
    not ``out[]``)."""
    index = list(index)
    return str(index) if index else ""


def result_json(expr: str, result) -> dict:
    """The SPEC document of a command's result (numbers as they are; :mod:`jsonout` encodes)."""
    if hasattr(result, "derivatives"):  # diff's DiffResult
        return diff_json(expr, result)
    doc = {"expr": expr, "value": result.value, "shape": list(result.value.shape)}
    if getattr(result, "order", None) is not None:
        doc["order"] = result.order
    if result.grad is not None:
        doc["grad"] = result.grad
    if getattr(result, "hessian", None) is not None:
        doc["hessian"] = result.hessian
    if getattr(result, "jacobian", None) is not None:
        doc["jacobian"] = result.jacobian
    if getattr(result, "jvp", None) is not None:
        doc["jvp"] = result.jvp
    if result.warnings:
        doc["warnings"] = list(result.warnings)
    return doc


def diff_json(expr: str, result) -> dict:
    """diff's document (SPEC): ``derivative`` a string for one variable, else an object
    ``{name: string}``; ``order`` when not 1; with values, ``value`` and ``derivative_value``."""
    one = len(result.derivatives) == 1
    texts = result.texts()
    doc: dict = {"expr": expr, "derivative": next(iter(texts.values())) if one else texts}
    if result.order != 1:
        doc["order"] = result.order
    if result.value is not None:
        doc["value"] = result.value
        values = {name: d.value for name, d in result.derivatives.items()}
        doc["derivative_value"] = next(iter(values.values())) if one else values
    if result.notes:
        doc["notes"] = list(result.notes)
    if result.warnings:
        doc["warnings"] = list(result.warnings)
    return doc


def explain_json(ex) -> dict:
    """explain's document: the :class:`~autograd_cli.core.explain.Explanation`'s fields.

    The array walk adds ``shapes`` (each variable's and the output's; and ``warnings`` when
    there are any); its steps' values
    are nested lists up to :data:`SUMMARY_THRESHOLD` elements, larger ones a summary
    ``{"shape", "min", "max", "mean"}``.  ``point`` and ``gradient`` are always whole, as
    ``grad`` gives them."""
    steps = ex.steps
    if ex.arrays:
        steps = [_summarised_step(s) for s in steps]
    return {
        "expr": ex.source,
        "output": ex.output,
        "wrt": list(ex.wrt),
        "point": dict(ex.point),
        "value": ex.value,
        "steps": steps,
        "gradient": dict(ex.gradient),
        "paths": dict(ex.paths),
        **({"elided": dict(ex.elided)} if ex.elided else {}),
        **({"shapes": dict(ex.shapes)} if ex.arrays else {}),
        **({"warnings": list(ex.warnings)} if ex.warnings else {}),
    }


def _summarised_step(step: dict) -> dict:
    out = {k: _summarised(v) if k == "value" else v for k, v in step.items()}
    if "terms" in step:
        out["terms"] = [{**t, "value": _summarised(t["value"])} for t in step["terms"]]
    return out


def _summarised(value):
    """A value of the array walk for JSON: itself up to SUMMARY_THRESHOLD elements, else
    its shape and three numbers."""
    import numpy

    a = numpy.asarray(value)
    if a.size <= SUMMARY_THRESHOLD:
        return value
    with numpy.errstate(all="ignore"):
        return {
            "shape": list(a.shape),
            "min": float(a.min()),
            "max": float(a.max()),
            "mean": float(a.mean()),
        }


#: ``explain_text(ex, precision=EXPLAIN_DIGITS)``: explain's own numbers (6 significant digits).
EXPLAIN_DIGITS = object()


def explain_number(precision=EXPLAIN_DIGITS):
    """How explain's text writes a number or an array: six significant digits, ``2``, ``0.5``,
    ``[[1, 2], [3, 4]]`` (explain's own), or ``--precision``'s digits after the point; an
    array of more than EXPLAIN_ITEMS elements summarised, on one line."""
    import numpy

    from ..core.explanation import number_writer  # loaded with the explanation's module

    if precision is EXPLAIN_DIGITS:
        return number_writer()
    return number_writer(
        lambda x: format_scalar(numpy.float64(x) if isinstance(x, float) else x, precision)
    )


def explain_text(ex, precision=EXPLAIN_DIGITS) -> str:
    """The explanation as plain text (:func:`autograd_cli.core.explanation.explain_text`'s
    layout); ``precision``: ``--precision``'s digits after the point (None: every digit),
    else explain's own six significant digits."""
    from ..core.explanation import explain_text as layout
    from .status import flag

    return layout(ex, explain_number(precision), flag)


def error_json(kind: str, message: str, **details) -> dict:
    error = {"kind": kind, "message": message}
    for key, value in details.items():
        if value is not None:
            error[key] = value
    return {"error": error}


def error_text(message: str, context: str | None = None) -> str:
    """An error for a person (plain text for stderr: errors must work without a terminal)."""
    text = f"autograd-cli: error: {message}"
    if context:
        text += "\n" + "\n".join("  " + line for line in context.splitlines())
    return text


def number_text(x) -> str:
    """Shortest text that gives ``x`` back in its own dtype (float32 1.8185948, not
    1.8185948133468628); nan/inf/-inf as words (as JSON writes a number)."""
    value = jsonout.plain(x)
    return value if isinstance(value, str) else repr(float(value))


def _quantities(result):
    """(name, array) pairs of a result in output order: the value, then each gradient."""
    yield "value", result.value
    for name, g in (result.grad or {}).items():
        yield f"grad:{name}", g
    for name_i, row in (getattr(result, "hessian", None) or {}).items():
        for name_j, block in row.items():
            yield f"hessian:{name_i}:{name_j}", block
    for name, block in (getattr(result, "jacobian", None) or {}).items():
        yield f"jacobian:{name}", block


def render_plain(result) -> None:
    """Plain numbers, one per line: the value's elements, then each gradient's (row-major)."""
    import numpy

    lines = []
    for _, array in _quantities(result):
        lines.extend(number_text(v) for v in numpy.asarray(array).ravel())
    sys.stdout.write("\n".join(lines) + "\n")


def render_csv(result) -> None:
    """CSV for spreadsheets: quantity,index,value with one row per element."""
    import numpy

    rows = ["quantity,index,value"]
    for name, array in _quantities(result):
        a = numpy.asarray(array)
        if a.ndim == 0:
            rows.append(f"{name},,{number_text(a[()])}")
            continue
        for index in numpy.ndindex(a.shape):
            label = ";".join(str(i) for i in index)
            rows.append(f"{name},{label},{number_text(a[index])}")
    sys.stdout.write("\n".join(rows) + "\n")


def render_diff(
    expr: str, result, latex: bool = False, precision: int | None = DEFAULT_PRECISION
) -> None:
    """The derivatives as expressions (and their values at the point, when given)."""
    from rich.markup import escape

    if latex:
        sys.stdout.write("".join(line + "\n" for line in diff_latex(expr, result, precision)))
        return
    console = make_console()
    from rich import box
    from rich.table import Table

    table = Table(
        title=user_text(expr.strip()), box=box.SIMPLE_HEAD, title_justify="left", show_edge=False
    )
    table.add_column("", style="bold", no_wrap=True)
    table.add_column("derivative", overflow="fold")
    evaluated = result.value is not None
    if evaluated:
        table.add_column("value at the point")
    n = result.order
    values = {name: _number_array(d.value) for name, d in result.derivatives.items()}
    notation = column_notation(values.values(), precision) if evaluated else None
    for name, d in result.derivatives.items():
        label = f"d/d{name}" if n == 1 else f"d^{n}/d{name}^{n}"
        row = [escape(label), user_text(d.text)]
        if evaluated:
            row.append(ValueCell(values[name], precision, notation))
        table.add_row(*row)
    console.print(table)
    if evaluated:
        width = max(20, console.width - 6)
        text = format_value(_number_array(result.value), precision, width=width)
        console.print("value " + escape(text.replace("\n", "\n      ")))
    for note in result.notes:
        console.print(f"[dim]note: {user_text(note)}[/dim]")
    print_warnings(result.warnings)


def _number_array(v):
    """A value as an array of numbers: floats, or complex ones where it is complex (diff at a
    complex point)."""
    import numpy

    array = numpy.asarray(v)
    return array if array.dtype.kind == "c" else array.astype(float)


def diff_latex(expr: str, result, precision: int | None = DEFAULT_PRECISION) -> list[str]:
    """diff's LaTeX lines, each an equation that says what it is: ``f = <the expression>``,
    then ``\\frac{\\partial f}{\\partial x} = <derivative>`` for each variable (``d``, not
    ``\\partial``, when the expression has one variable; ``\\partial^{2} f`` ... for
    ``--order 2``), then with ``--hessian`` ``\\mathbf{H}_f = \\begin{pmatrix}...``.  With
    values, each line ends with ``= <its value>`` (one notation per line, as in tables)."""
    from ..core.printing import latex_name, to_latex
    from ..grammar import parse

    program = parse(expr)  # ``expr`` (diff's text, parsed once already) is f
    f = next(s for s in ("f", "g", "h", "F", "G", "H") if s not in program.inputs)
    d = "d" if len(program.inputs) == 1 else "\\partial"
    evaluated = result.value is not None
    n = result.order

    def equation(label: str, latex: str, value) -> str:
        return f"{label} = {latex}" + (f" = {latex_value(value, precision)}" if evaluated else "")

    if n == 0:  # f itself, simplified (the same for every variable)
        return [equation(f, next(iter(result.derivatives.values())).latex, result.value)]
    lines = [equation(f, to_latex(program.output), result.value)]
    for name, derivative in result.derivatives.items():
        x = latex_name(name)
        if n == 1:
            label = f"\\frac{{{d} {f}}}{{{d} {x}}}"
        else:
            label = f"\\frac{{{d}^{{{n}}} {f}}}{{{d} {x}^{{{n}}}}}"
        lines.append(equation(label, derivative.latex, derivative.value))
    if result.hessian is not None:
        names = list(result.hessian)
        rows = [[result.hessian[a][b] for b in names] for a in names]
        matrix = " \\\\ ".join(" & ".join(e.latex for e in row) for row in rows)
        line = f"\\mathbf{{H}}_{f} = \\begin{{pmatrix}} {matrix} \\end{{pmatrix}}"
        values = [[_number_array(e.value) for e in row] for row in rows] if evaluated else []
        if evaluated and all(v.ndim == 0 for row in values for v in row):
            line += " = " + latex_value(values, precision)  # a matrix of numbers
        lines.append(line)
    return lines


def latex_value(value, precision: int | None = DEFAULT_PRECISION) -> str:
    """A value in LaTeX: a number as tables print it (``1.0806``, ``1.2346 \\times
    10^{-5}``, ``\\infty``), a vector or matrix as a ``pmatrix`` in one notation, an array
    of more dimensions as its table text."""
    a = _number_array(value)
    notation = column_notation([a], precision)
    if a.ndim == 0:
        return _latex_number(notation.scalar(a))
    if a.ndim > 2:
        return "\\text{" + one_line(a, precision) + "}"
    rows = a.reshape(1, -1) if a.ndim == 1 else a
    body = " \\\\ ".join(" & ".join(_latex_number(notation.scalar(x)) for x in row) for row in rows)
    return f"\\begin{{pmatrix}} {body} \\end{{pmatrix}}"


def _latex_number(text: str) -> str:
    """``1.2346e-05`` as ``1.2346 \\times 10^{-5}``; inf and nan as LaTeX writes them."""
    words = {"inf": "\\infty", "-inf": "-\\infty", "nan": "\\mathrm{NaN}"}
    if text in words:
        return words[text]
    mantissa, e, exponent = text.partition("e")
    if not e:
        return text
    return f"{mantissa} \\times 10^{{{int(exponent)}}}"
