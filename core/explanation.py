"""What :func:`autograd_cli.explain` returns: core's plain Explanation, with its text.

The text is the layout ``autograd-cli explain`` prints (:func:`explain_text`): plain text,
no terminal or Rich, so it lives in the library; the command line passes its
``--precision`` as the way to write a number (``cli/render.py:explain_text``).
"""

from __future__ import annotations

import re
from dataclasses import fields

from . import explain as core_explain
from .errors import Spelled, spell
from .explain import GRAD, accumulate_text, d_label, format_value, local_text
from .safetext import shorten

#: Elements of an array that explain's text lists before it summarises it with ``...``.
EXPLAIN_ITEMS = 12


class Explanation(core_explain.Explanation):
    """An :class:`autograd_cli.core.explain.Explanation` (plain data) plus ``text``."""

    @property
    def text(self) -> str:
        """The explanation laid out as ``autograd-cli explain`` prints it."""
        return explain_text(self)

    @classmethod
    def of(cls, plain: core_explain.Explanation) -> Explanation:
        return cls(**{f.name: getattr(plain, f.name) for f in fields(plain)})


def number_writer(scalar=None):
    """How explain's text writes a number or an array: ``scalar(x)`` for each number
    (default: six significant digits, ``2``, ``0.5``), an array on one line (``[[1, 2], [3,
    4]]``), summarised past EXPLAIN_ITEMS elements."""
    import numpy

    if scalar is None:

        def scalar(x) -> str:
            if isinstance(x, complex) or numpy.iscomplexobj(x):  # rfft's steps: 6 digits a part
                return format_value(complex(x))
            return format_value(float(x))

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
        # NumPy's lines as one, without the padding that aligned them: [0.1, 0.4, 1.]
        return re.sub(r"\s+(?=[,\]])|(?<=\[)\s+", "", re.sub(r"\s+", " ", text))

    return number


def explain_text(ex, number=None, spelling=None) -> str:
    """The explanation as plain text (the layout of :mod:`autograd_cli.core.explain`'s docstring):
    the point, the forward values, the local derivatives, the chain rule, the paths; for the
    array walk, the vector-Jacobian product of each edge and the gradient.  ``number``: how
    a number or array is written (default :func:`number_writer`'s six significant digits;
    the command line passes ``--precision``'s); ``spelling``: how the note on steps not
    listed names the ``max_steps`` setting (:func:`~.errors.spell`; the command line's
    ``--max-steps``)."""
    if number is None:
        number = number_writer()
    at = ", ".join(f"{k} = {number(v)}" for k, v in ex.point.items())
    source = shorten(ex.source.strip(), 2000)  # a 100,000-node program is not echoed whole
    lines = [f"{source}  at {at}" if at else source]

    def more(kind: str) -> list:
        n = ex.elided.get(kind, 0)
        note = Spelled("  ... {n:,} more not listed ({max_steps} 0 lists every step)", {"n": n})
        return [spell(note, spelling or {})] if n else []

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
