"""Drawing plot's curves: in the terminal (uniplot's braille-resolution lines: NumPy
only, fast, imported only here) or to an image (``--png``/``--svg``: matplotlib, when it
is installed, the ``plot`` extra).  The command is :mod:`autograd_cli.cli.commands.plot`.
"""

from __future__ import annotations

import math


def series_label(name: str, k: int) -> str:
    return "f" + "'" * k if k <= 3 else f"f^({k})"


def draw(title: str, name: str, s, overlays) -> None:
    import sys

    import numpy as np
    from uniplot import plot

    from .render import user_text

    ys, labels = [], []
    for d in s.series:
        ys.append(_finite(np.asarray(d["values"], dtype=float)))
        labels.append(series_label(name, d["order"]))
    for o in overlays:
        ys.append(_finite(np.asarray(o["values"], dtype=float)))
        labels.append(o["label"])
    x = np.asarray(s.x)
    from .render import print_warnings

    empty = [label for y, label in zip(ys, labels) if np.isnan(y).all()]
    keep = [(y, label) for y, label in zip(ys, labels) if not np.isnan(y).all()]
    if not keep:
        print_warnings(["nothing to draw: every value in the range is nan or inf"])
        return
    ys, labels = [y for y, _ in keep], [label for _, label in keep]
    color = sys.stdout.isatty()
    # Without colour, curves drawn in blocks all look alike: each gets its own character
    # instead (uniplot's ASCII set: + x o * ~ .), the legend showing which is which.
    glyphs = {} if color or len(ys) == 1 else {"character_set": "ascii"}
    plot(
        ys=ys,
        xs=[x] * len(ys),
        legend_labels=labels,
        title=user_text(title),
        color=color,
        lines=True,
        **glyphs,
    )
    if empty:
        print_warnings([f"not drawn, nan or inf over the whole range: {', '.join(empty)}"])


def _finite(y):
    import numpy as np

    y = y.copy()
    y[~np.isfinite(y)] = np.nan  # a gap
    return y


def save_image(path: str, fmt: str, title: str, name: str, s, overlays) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        from ..core.errors import UnsupportedError

        raise UnsupportedError(
            f"--{fmt} needs matplotlib, which is not installed: pip install "
            "'autograd-cli[plot]' (or pip install matplotlib); the terminal plot and --json "
            "work without it"
        ) from None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for d in s.series:
        ax.plot(s.x, _finite_list(d["values"]), label=series_label(name, d["order"]))
    for o in overlays:
        ax.plot(s.x, _finite_list(o["values"]), "--", label=o["label"])
    ax.set_xlabel(name)
    ax.set_title(title)
    ax.legend()
    ax.grid(alpha=0.3)
    import io

    from .files import write_atomically

    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format=fmt)
    finally:
        plt.close(fig)
    write_atomically(path, buffer.getvalue(), f"--{fmt}")  # whole, or the old file stays


def _finite_list(values):
    return [v if math.isfinite(v) else math.nan for v in values]
