"""The analyses' tables for people: taylor's coefficients, propagate's uncertainty budget,
minimize/solve/critical's result and iterates (their JSON documents are
:func:`autograd_cli.analysis_docs.document`'s).  Every number is written at the
``precision`` the command was given (None: every round-trip digit), by :class:`Numbers`.
"""

from __future__ import annotations

from .render import DEFAULT_PRECISION


class Numbers:
    """How the analyses' tables write numbers: ``precision`` digits after the point (None:
    every round-trip digit, as ``--plain``)."""

    def __init__(self, precision: int | None = DEFAULT_PRECISION):
        self.precision = precision

    def nums(self, xs) -> list[str]:
        """Numbers of one column, in one notation (NumPy's rule over them all:
        ``1.0000e+00`` ... ``1.3889e+03`` rather than ``1.0`` beside ``1388.8889``)."""
        from .render import column_notation, format_value, number_text

        if self.precision is None:
            return [number_text(x) for x in xs]
        notation = column_notation(xs, self.precision)
        return [format_value(x, self.precision, notation=notation) for x in xs]

    def num(self, x) -> str:
        """A number (every digit with ``--plain``)."""
        from .render import format_scalar, number_text

        if self.precision is None:
            return number_text(x)
        return format_scalar(x, self.precision)

    def compact(self, v) -> str:
        """A number or nested list on one line: NumPy's array text."""
        from .render import one_line

        if self.precision is None:
            if isinstance(v, list):
                return "[" + ", ".join(self.compact(x) for x in v) + "]"
            return self.num(v)
        if isinstance(v, list):
            import numpy

            return one_line(numpy.asarray(v, dtype=float), self.precision, limit=10**6)
        return self.num(v)


def taylor_table(source: str, r, precision: int | None = DEFAULT_PRECISION) -> None:
    """taylor's point, coefficients, polynomial and remainder."""
    n = Numbers(precision)
    rows = [("point", ", ".join(f"{k} = {n.num(v)}" for k, v in r.at.items()))]
    if isinstance(r.coefficients, list):
        rows += [(f"c{k}", text) for k, text in enumerate(n.nums(r.coefficients))]
    else:
        rows += [(f"order {k}", n.compact(c)) for k, c in r.coefficients.items()]
    rows.append(("polynomial", r.polynomial))
    if r.remainder is not None:
        rem = r.remainder
        at_text = ", ".join(f"{k} = {n.num(v)}" for k, v in rem["at"].items())
        rows.append(
            (
                f"at {at_text}",
                f"f = {n.num(rem['value'])}, polynomial = "
                f"{n.num(rem['polynomial'])}, remainder = {n.num(rem['remainder'])}",
            )
        )
    print_rows(source, rows, r.warnings)


def optimize_table(op: str, source: str, r, trace: bool, precision=DEFAULT_PRECISION) -> None:
    """minimize's, solve's or critical's result (and its iterates, with ``trace``)."""
    from ..core.optimize import NOT_A_MINIMUM

    n = Numbers(precision)
    rows = [  # "point", not "x": a variable may be named x (the JSON key stays "x")
        ("point", ", ".join(f"{k} = {n.compact(v)}" for k, v in r.x.items())),
        ("value", n.compact(r.value)),
    ]
    if op == "solve":
        rows.append(("residual", n.num(r.residual)))
    label = "Jacobian" if op == "solve" else "gradient"
    rows.append((label, ", ".join(f"{k}: {n.compact(v)}" for k, v in r.grad.items())))
    if op == "critical":
        rows.append(("kind", r.kind))
        rows.append(("eigenvalues", n.compact(r.eigenvalues)))
    rows.append(("iterations", f"{r.iterations} ({r.method})"))
    rows.append(("converged", f"{'yes' if r.converged else 'NO'}: {r.message}"))
    stopped = r.message if r.message.startswith(NOT_A_MINIMUM) else f"did not converge: {r.message}"
    warnings = [] if r.converged else [stopped]
    print_rows(source, rows, warnings)
    if trace:
        print_trace(r.trace, n)


def print_rows(title: str, rows: list, warnings: list) -> None:
    """A table of (label, text) rows under ``title``, then the warnings."""
    from rich.table import Table

    from .render import make_console, print_warnings, user_text

    table = Table(title=user_text(title), box=None, title_justify="left", show_header=False)
    table.add_column("", style="bold", no_wrap=True)
    table.add_column("", overflow="fold")
    for label, text in rows:
        table.add_row(user_text(label), user_text(text))
    make_console().print(table)
    print_warnings(warnings)


def budget_table(title: str, r, precision: int | None = DEFAULT_PRECISION) -> None:
    """propagate's value, uncertainty and budget (each input's share)."""
    from rich import box
    from rich.table import Table

    from .render import make_console, print_warnings, user_text

    n = Numbers(precision)
    console = make_console()
    console.print(
        user_text(f"{title} = {n.num(r.value)} ± {n.num(r.uncertainty)} (standard uncertainty)")
    )
    table = Table(box=box.SIMPLE_HEAD, show_edge=False)
    for column in ("input", "value", "u(x)", "sensitivity", "contribution", "share %"):
        table.add_column(column, overflow="fold")
    for name, b in r.budget.items():
        table.add_row(
            user_text(name),
            n.compact(b["value"]),
            n.compact(b["uncertainty"]),
            n.compact(b["sensitivity"]),
            n.num(b["contribution"]),
            f"{b['share']:.3g}",
        )
    console.print(table)
    console.print(f"second-order variance term: {n.num(r.second_order)}")
    if r.mc is not None:
        lo, hi = r.mc["interval"]
        console.print(
            f"Monte Carlo ({r.mc['draws']:,} draws): mean {n.num(r.mc['mean'])}, "
            f"std {n.num(r.mc['std'])}, 95 % interval [{n.num(lo)}, {n.num(hi)}]"
        )
    print_warnings(r.warnings)


def print_trace(trace: list, numbers: Numbers) -> None:
    """The iterates, one row each."""
    from rich import box
    from rich.table import Table

    from .render import make_console

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, title="iterates", title_justify="left")
    keys = [k for k in trace[0] if k != "iteration"] if trace else []
    table.add_column("#", no_wrap=True)
    for k in keys:
        table.add_column("point" if k == "x" else k, overflow="fold")
    for row in trace:
        cells = []
        for k in keys:
            v = row[k]
            cells.append(
                ", ".join(f"{name} = {numbers.compact(x)}" for name, x in v.items())
                if isinstance(v, dict)
                else numbers.compact(v)
            )
        table.add_row(str(row["iteration"]), *cells)
    make_console().print(table)
