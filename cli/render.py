"""Renderers: Rich tables for people, JSON documents for programs.

Computation never prints; commands hand a result here.  Rich is imported
only when rendering for a person, so ``--json`` runs never pay for it.
"""

from __future__ import annotations

import contextlib
import re
import sys

from ..core.safetext import shorten, visible
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

_settings: dict = {"precision": DEFAULT_PRECISION}
_CURRENT = object()


def current_precision() -> int | None:
    """Digits after the decimal point for tables now; None: full round-trip digits."""
    return _settings["precision"]


@contextlib.contextmanager
def using_precision(precision: int | None):
    """Tables print numbers with ``precision`` digits (None: full) inside the block."""
    before = _settings["precision"]
    _settings["precision"] = precision
    try:
        yield
    finally:
        _settings["precision"] = before


def format_scalar(x, precision=_CURRENT) -> str:
    """One number as NumPy prints a scalar, rounded to ``precision`` digits after the
    decimal point and trimmed (``-12.0``, ``1.8186``, ``1.2346e-05``, ``nan``, ``inf``);
    ``precision=None``: NumPy's own scalar text, every digit (``1.8185948536513634``)."""
    import numpy

    if precision is _CURRENT:
        precision = _settings["precision"]
    x = numpy.asarray(x)[()]
    if precision is None or not isinstance(x, numpy.floating) or not numpy.isfinite(x):
        return str(x)
    size = abs(x)
    if size == 0 or 1e-4 <= size < 1e16:  # NumPy's scalar rule for positional notation
        return numpy.format_float_positional(x, precision=precision, unique=True, trim="0")
    return numpy.format_float_scientific(x, precision=precision, unique=True, trim="-")


def format_value(value, precision=_CURRENT, width: int | None = None, edgeitems=None) -> str:
    """A number or array for a person: the one formatter of every table, tree and row.

    A scalar is :func:`format_scalar`'s.  An array is NumPy's ``array2string`` with
    PyTorch's separators: ``precision`` digits after the decimal point at most
    (``floatmode="maxprec"``: ``[2.    , 3.    , 0.8415]``, ``[2., 4.]``), summarised with
    ``...`` past 1000 elements (3 at each end), lines at most ``width`` long and broken
    only between numbers.  ``precision=None`` (``--plain``): every round-trip digit,
    nothing summarised below a million elements.  ``edgeitems`` forces a summary with
    that many elements at each end (for one-line labels).
    """
    import numpy

    if precision is _CURRENT:
        precision = _settings["precision"]
    a = numpy.asarray(value)
    if a.ndim == 0:
        return format_scalar(a, precision)
    options: dict = {"separator": ", "}
    options["max_line_width"] = width if width else 10**6 if a.ndim <= 1 else 75
    if precision is None:
        options.update(floatmode="unique", threshold=FULL_THRESHOLD)
    else:
        options.update(
            floatmode="maxprec",
            precision=precision,
            suppress_small=False,
            threshold=SUMMARY_THRESHOLD,
            edgeitems=EDGE_ITEMS,
        )
    if edgeitems is not None:
        options.update(threshold=0, edgeitems=edgeitems)
    return numpy.array2string(a, **options)


def one_line(value, precision=_CURRENT, limit: int = 60) -> str:
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

    def __init__(self, value, precision=_CURRENT):
        import numpy

        self.array = numpy.asarray(value)
        self.precision = _settings["precision"] if precision is _CURRENT else precision
        self._texts: dict = {}
        self._measure: tuple | None = None

    def text(self, width: int | None) -> str:
        for made_at, (text, widest) in self._texts.items():
            if width is not None and made_at is not None and made_at >= width >= widest:
                return text  # the same lines: every one fits, and no break moves
        if width not in self._texts:
            text = format_value(self.array, self.precision, width=width)
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


def make_console(stderr: bool = False):
    from rich.console import Console

    console = Console(stderr=stderr, highlight=False, soft_wrap=False)
    console.on_broken_pipe = _broken_pipe  # Rich's default exits 1; the boundary decides
    return console


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
    if columns is not None and columns.isdigit():
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
    the left) without Rich, when that is exactly what Rich prints: no styles (see
    ``plain_width``), every cell one line of one-cell characters, the title no wider than
    the table and the table no wider than the console.  Returns False (nothing written)
    otherwise, and the caller uses Rich.  Importing and running Rich was a tenth of a cold
    start (issue 12); tests/test_format.py compares the two on random tables."""
    cells = [title, *header, *(c for row in rows for c in row)]
    if not title or not all(_ONE_CELL.fullmatch(c) for c in cells):
        return False
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    total = sum(widths) + 3 * len(widths) - 1  # one space each side, one between columns
    space = plain_width()
    if space is None or total > space or len(title) > total:
        return False

    def line(row):
        return " ".join(f" {c.ljust(w)} " for c, w in zip(row, widths))

    text = [title.ljust(total), line(header), "─" * total, *(line(row) for row in rows)]
    sys.stdout.write("\n".join(text) + "\n")
    return True


def render_result(expr: str, result, *, kind: str) -> None:
    """A table: the value, then a row per variable's gradient (when there is one)."""
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
    if (
        not blocks
        and not result.warnings
        and all(v.ndim == 0 for _, v in rows)
        and plain_table(
            title,
            ["", "shape", "value"],
            [[label, "()", format_value(v)] for label, v in rows],
        )
    ):
        return
    from rich.markup import escape

    table = _table(escape(title))
    for label, v in rows:
        table.add_row(escape(label), shape_text(v.shape), ValueCell(v))
    console = make_console()
    console.print(table)
    if getattr(result, "hessian", None):
        _print_blocks(console, "Hessian", result.hessian, nested=True)
    if getattr(result, "jacobian", None):
        _print_blocks(
            console, "Jacobian", result.jacobian, nested=False, output_shape=result.value.shape
        )
    print_warnings(result.warnings)


def _print_blocks(console, title, blocks, nested, output_shape=()):
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
        for a in names:
            table.add_row(escape(a), *[escape(format_value(blocks[a][b])) for b in names])
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
        rows = output_shape[0] if output_shape else 1
        for i in range(rows):
            label = f"out[{i}]" if output_shape else "out"
            table.add_row(
                label,
                *[escape(format_value(blocks[n][i] if output_shape else blocks[n])) for n in names],
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
    for label, blk in items:
        table.add_row(escape(label), shape_text(blk.shape), ValueCell(blk))
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


def render_check(expr: str, result) -> None:
    from rich.markup import escape

    table = _table(user_text(expr.strip()))
    table.columns[2].header = "analytic"
    table.add_column("numeric (central differences)")
    for name in result.analytic:
        a, n = result.analytic[name], result.numeric[name]
        table.add_row(
            f"∂/∂{escape(name)}",
            shape_text(a.shape),
            ValueCell(a),
            ValueCell(n),
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
            f"worst element: d out{w['output_index']} / d {escape(str(w['input']))}"
            f"{w['input_index']} ({w['mode']} mode): analytic {w['analytic']:.10g}, "
            f"numeric {w['numeric']:.10g}"
        )
    print_warnings(result.warnings)


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


#: Elements of an array that explain's text lists before it summarises it with ``...``.
EXPLAIN_ITEMS = 12
#: ``explain_text(ex, precision=EXPLAIN_DIGITS)``: explain's own numbers (6 significant digits).
EXPLAIN_DIGITS = object()


def explain_number(precision=EXPLAIN_DIGITS):
    """How explain's text writes a number or an array: six significant digits, ``2``, ``0.5``,
    ``[[1, 2], [3, 4]]`` (explain's own), or ``--precision``'s digits after the point; an
    array of more than EXPLAIN_ITEMS elements summarised, on one line."""
    import numpy

    from ..core.explain import format_value as six  # loaded with the explanation's module

    def scalar(x) -> str:
        if precision is EXPLAIN_DIGITS:
            return six(float(x))
        return format_scalar(numpy.float64(x) if isinstance(x, float) else x, precision)

    def number(value) -> str:
        a = numpy.asarray(value)
        if a.ndim == 0:
            return scalar(value if isinstance(value, float) else a[()])
        text = numpy.array2string(
            a,
            separator=", ",
            formatter={"all": scalar},
            threshold=EXPLAIN_ITEMS,
            edgeitems=2,
            max_line_width=10**6,
        )
        return _joined(text)

    return number


def explain_text(ex, precision=EXPLAIN_DIGITS) -> str:
    """The explanation as plain text (the layout of :mod:`autograd_cli.core.explain`'s docstring):
    the point, the forward values, the local derivatives, the chain rule, the paths; for the
    array walk, the vector-Jacobian product of each edge and the gradient.  ``precision``:
    ``--precision``'s digits after the point (None: every digit), else explain's own six
    significant digits."""
    from ..core.explain import accumulate_text, d_label, local_text

    number = explain_number(precision)
    at = ", ".join(f"{k} = {number(v)}" for k, v in ex.point.items())
    source = shorten(ex.source.strip(), 2000)  # a 100,000-node program is not echoed whole
    lines = [f"{source}  at {at}" if at else source]

    def more(kind: str) -> list:
        n = ex.elided.get(kind, 0)
        return [f"  ... {n:,} more not listed (--max-steps 0 lists every step)"] if n else []

    defines = [s for s in ex.steps if s["kind"] == "define"]
    if defines:
        lines.append("Forward:")
        lines += [
            f"  {s['name']} = {s['expr']} = {number(s['value'])}" + _shape_note(s) for s in defines
        ]
        lines += more("define")
    if ex.arrays:
        return "\n".join(lines + _array_backward(ex, number, more))
    locals_ = [s for s in ex.steps if s["kind"] == "local"]
    if locals_:
        lines.append("Local derivatives:")
        lines += [f"  {local_text(s, number)}" for s in locals_]
        lines += more("local")
    accumulations = [s for s in ex.steps if s["kind"] == "accumulate"]
    lines.append("Chain rule (backward, summing over the paths into each node):")
    lines += [f"  {accumulate_text(s, number)}" for s in accumulations]
    lines += more("accumulate")
    shown = {s["wrt"] for s in accumulations}
    for name in ex.wrt:
        if name not in shown:
            lines.append(f"  {d_label(ex.output, name)} = {number(ex.gradient[name])}")

    def factor(v) -> str:
        s = number(v)
        return f"({s})" if s.startswith("-") else s

    for name in ex.wrt:
        paths = ex.paths.get(name)
        if paths and len(paths) > 1:
            parts = [
                " -> ".join(p["path"])
                + ": "
                + ("*".join(factor(f) for f in p["factors"]) or "1")
                + f" = {number(p['value'])}"
                for p in paths
            ]
            lines.append(
                f"Paths from {ex.output} to {name}: "
                + "; ".join(parts)
                + f"; sum = {number(ex.gradient[name])}"
            )
    return "\n".join(lines)


def _shape_note(step: dict) -> str:
    shape = step.get("shape")
    return f"  (shape {shape})" if shape else ""


def _array_backward(ex, number, more) -> list:
    """The array walk's backward lines: each node's rule once, then the vector-Jacobian
    product of each argument; a sum where a node has several users; the gradient."""
    from ..core.explain import GRAD, d_label

    lines = []
    if any(s["kind"] != "define" for s in ex.steps):
        lines.append(
            f"Backward (vector-Jacobian products: {GRAD}n = d{ex.output}/dn, of n's shape; "
            f"{GRAD}{ex.output} = 1):"
        )
    value = {s["name"]: s["value"] for s in ex.steps if s["kind"] == "define"}
    header = None
    for s in ex.steps:
        if s["kind"] == "local":
            if (s["node"], s["rule"]) != header:  # the node, its value and its rule, once
                header = (s["node"], s["rule"])
                known = f" = {number(value[s['of']])}" if s["of"] in value else ""
                lines += [f"  {s['node']}{known}", f"    {s['rule']}"]
            note = f"  ({s['local']})" if "local" in s else ""
            lines.append(f"    {s['vjp']} = {number(s['value'])}{note}")
        elif s["kind"] == "accumulate":
            header = None
            values = " + ".join(number(t["value"]) for t in s["terms"])
            if s.get("more_terms"):
                values += f" + ... ({s['more_terms']:,} more terms)"
            via = ", ".join(t["via"] for t in s["terms"])
            lines.append(
                f"  {GRAD}{s['wrt']} = {values} = {number(s['value'])}"
                f"  (the sum of what its users {via} pass back)"
            )
    lines += more("local") + more("accumulate")
    lines += ["Gradient:"] if ex.wrt else []
    lines += [f"  {d_label(ex.output, name)} = {number(ex.gradient[name])}" for name in ex.wrt]
    lines += [f"warning: {w}" for w in ex.warnings]
    return lines


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


def _number_text(x: float) -> str:
    """Shortest round-trip text of a float; nan/inf/-inf as words."""
    return jsonout.plain(float(x)) if not _finite(x) else repr(float(x))


def _finite(x) -> bool:
    import math

    return math.isfinite(float(x))


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
        lines.extend(_number_text(v) for v in numpy.asarray(array).ravel())
    sys.stdout.write("\n".join(lines) + "\n")


def render_csv(result) -> None:
    """CSV for spreadsheets: quantity,index,value with one row per element."""
    import numpy

    rows = ["quantity,index,value"]
    for name, array in _quantities(result):
        a = numpy.asarray(array)
        if a.ndim == 0:
            rows.append(f"{name},,{_number_text(a[()])}")
            continue
        for index in numpy.ndindex(a.shape):
            label = ";".join(str(i) for i in index)
            rows.append(f"{name},{label},{_number_text(a[index])}")
    sys.stdout.write("\n".join(rows) + "\n")


def render_diff(expr: str, result, latex: bool = False) -> None:
    """The derivatives as expressions (and their values at the point, when given)."""
    from rich.markup import escape

    console = make_console()
    if latex:
        for d in result.derivatives.values():
            sys.stdout.write(d.latex + "\n")
        return
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
    for name, d in result.derivatives.items():
        label = f"d/d{name}" if n == 1 else f"d^{n}/d{name}^{n}"
        row = [escape(label), user_text(d.text)]
        if evaluated:
            row.append(ValueCell(_float_array(d.value)))
        table.add_row(*row)
    console.print(table)
    if evaluated:
        text = format_value(_float_array(result.value), width=max(20, console.width - 6))
        console.print("value " + escape(text.replace("\n", "\n      ")))
    for note in result.notes:
        console.print(f"[dim]note: {user_text(note)}[/dim]")
    print_warnings(result.warnings)


def _float_array(v):
    import numpy

    return numpy.asarray(v, dtype=float)
