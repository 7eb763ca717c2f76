"""The plot command: f and its derivatives over a range, in the terminal or to an image.

The numbers come from :func:`autograd_cli.core.sample.sample` (exact derivatives,
vectorised), the overlays from :func:`autograd_cli.core.taylor.taylor`; the drawing is
:mod:`autograd_cli.cli.plot`'s.
"""

from __future__ import annotations

import math
import re
from typing import Annotated

import typer

from .. import options, plot
from .common import Invocation, command, option
from .shared import ALL

#: plot draws: no table, so no --precision or --plain
SHARED = ("expr", *(name for name in ALL if name not in ("precision", "plain")))

_RANGE = re.compile(r"\s*([^:\s]+)\s*:\s*([^:\s]+)\s*")


def _take_range(ctx) -> tuple[str, float, float]:
    """The one ``--NAME LOW:HIGH`` among the extra arguments (removed from them)."""
    args = list(ctx.args)
    found = []
    for i in range(len(args) - 1):
        if options.is_option_name(args[i]) and "=" not in args[i]:
            m = _RANGE.fullmatch(args[i + 1])
            if m is not None:
                found.append((i, args[i][2:], m.group(1), m.group(2)))
    if len(found) != 1:
        raise options.UsageError(
            "plot needs exactly one variable with a range, such as --x -4:4"
            + (f" (got {len(found)})" if found else "")
        )
    i, name, lo_text, hi_text = found[0]
    try:
        lo, hi = float(lo_text), float(hi_text)
    except ValueError:
        raise options.UsageError(f"--{name} {args[i + 1]!r}: a range is LOW:HIGH") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise options.UsageError(f"--{name} {args[i + 1]!r}: the range needs finite LOW < HIGH")
    del args[i : i + 2]
    ctx.args[:] = args
    return name, lo, hi


_PlotOrderOption = option(
    "--order",
    str,
    "Also draw the derivatives up to order K (default 1: f and f').",
    metavar="K",
    show_default=False,
)
_PlotTangentAtOption = option(
    "--tangent-at", float, "Overlay the tangent line at x = A.", metavar="A"
)
_PlotTaylorOption = option(
    "--taylor",
    int,
    "Overlay the degree-K Taylor polynomial (at --tangent-at, else mid-range).",
    metavar="K",
)
_PlotPngOption = option("--png", str, "Save a PNG (matplotlib).", metavar="FILE")
_PlotSvgOption = option("--svg", str, "Save an SVG (matplotlib).", metavar="FILE")


@command("plot", shared=SHARED)
def plot_command(
    ctx: typer.Context,
    order_text: _PlotOrderOption = None,
    points: Annotated[int, typer.Option("--points", help="How many sample points.")] = 200,
    tangent_at: _PlotTangentAtOption = None,
    taylor_k: _PlotTaylorOption = None,
    png: _PlotPngOption = None,
    svg: _PlotSvgOption = None,
):
    """Plot a function and its derivatives over a range.

    Of one variable, given as --NAME LOW:HIGH; --order K draws the derivatives up to K.  In
    the terminal, or to an image with --png/--svg.  NaN and inf leave gaps.  --json gives
    the sample points and each series.
    """
    from ...core.sample import sample

    name, lo, hi = _take_range(ctx)
    inv = Invocation(ctx)
    order = 1 if order_text is None else options.parse_order(order_text, minimum=0)
    program = inv.program()
    s = sample(program, inv.values, name, lo, hi, points, order)
    overlays = []
    if taylor_k is not None and not 0 <= taylor_k <= options.MAX_ORDER:
        raise options.UsageError(f"--taylor must be 0 to {options.MAX_ORDER}, not {taylor_k}")
    a = tangent_at if tangent_at is not None else (lo + hi) / 2
    # --tangent-at draws the tangent, --taylor K the degree-K polynomial (at --tangent-at,
    # else mid-range): both when both are given (one curve when K is 1)
    degrees = ([1] if tangent_at is not None else []) + ([taylor_k] if taylor_k is not None else [])
    for k in dict.fromkeys(degrees):
        overlays.append(_polynomial_series(program, inv.values, name, a, k, s.x))
    doc = {"expr": inv.source, "x": s.x, "series": s.series}
    if overlays:
        doc["overlays"] = overlays
    for path, fmt in ((png, "png"), (svg, "svg")):
        if path is not None:
            plot.save_image(path, fmt, inv.source, name, s, overlays)
    if inv.json:
        from ..render import emit_json

        emit_json(doc)
        return
    plot.draw(inv.source, name, s, overlays)


def _polynomial_series(program, values, name, a, k, xs) -> dict:
    from ...core.taylor import taylor

    r = taylor(program, {**values, name: a}, wrt=[name], order=k)
    coefficients = r.coefficients
    ys = [math.fsum(c * (x - a) ** j for j, c in enumerate(coefficients)) for x in xs]
    what = "tangent" if k == 1 else f"taylor {k}"
    return {
        "label": f"{what} at {a:g}",
        "at": a,
        "order": k,
        "polynomial": r.polynomial,
        "values": ys,
    }
