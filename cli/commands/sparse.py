"""Sparse derivatives (issue 28): ``jacobian --sparse``, ``hessian --sparse`` and the
``sparsity`` command, on core/sparsity.py (the structural pattern, its coloring, one forward
sweep per color).  JSON as SPEC writes a sparse matrix: ``{"shape", "rows", "cols",
"values", "colors"}`` (COO, 0-based, sorted row-major) in place of each dense block."""

from __future__ import annotations

import sys

import typer

from .common import Invocation, command

SHOWN = 20  # the entries a table lists before it says how many more there are


def write_matrix(path: str, matrix) -> None:
    """The whole matrix (the variables in order along rows and columns, SciPy CSR) to
    ``path``: ``.npz`` SciPy's ``save_npz``, ``.mtx`` Matrix Market; whole or not at all."""
    import io

    import scipy.io
    import scipy.sparse as sp

    from ...core.errors import InputError
    from .. import files

    buffer = io.BytesIO()
    if path.endswith(".npz"):
        sp.save_npz(buffer, matrix)
    elif path.endswith(".mtx"):
        scipy.io.mmwrite(buffer, matrix.tocoo())
    else:
        raise InputError(f"-o {path!r}: a sparse matrix is written as FILE.npz or FILE.mtx")
    files.write_atomically(path, buffer.getvalue(), "-o")


#: --sparse auto takes the sparse path where the colors are at most this share of the columns
AUTO_SHARE = 0.25


def sparse_derivatives(inv: Invocation, wrt, which: str, output=None, mode: str = "on") -> bool:
    """``jacobian --sparse`` (which="jacobian") or ``hessian --sparse``; ``output``: the
    whole matrix to FILE.npz or FILE.mtx too.  ``mode`` "auto": False (nothing written: the
    caller takes the dense path) where the pattern is not sparse enough; "on": always."""
    from ...core import sparsity
    from ...core.program import check_values, resolve_wrt
    from .. import options, render

    if mode not in ("on", "auto"):
        raise options.UsageError(f"--sparse takes no value or auto, not {mode!r}")
    program = inv.program()
    check_values(program, inv.values)
    names = resolve_wrt(program, inv.shared.wrt)
    note, pattern, memo = None, None, {}  # memo: the coloring, found once
    if mode == "auto":
        find = sparsity.jacobian_pattern if which == "jacobian" else sparsity.hessian_pattern
        pattern, _, _ = find(program, inv.values, names)
        k = sparsity.colored(pattern, memo, which).k
        n = pattern.shape[1]
        if k > AUTO_SHARE * n:
            if output is not None:
                raise options.UsageError("-o writes a sparse matrix: give --sparse, not auto")
            sys.stderr.write(
                f"autograd-cli: note: --sparse auto: {k} colors for {n} columns is not sparse "
                "enough; the dense result\n"
            )
            return False
        note = f"--sparse auto: {k} colors for {n} columns: the sparse result"
    warnings: list = []  # as the dense result's: a domain, a derivative at a kink
    if which == "jacobian":
        value, blocks, k, matrix = sparsity.sparse_jacobian(
            program, inv.values, names, pattern, memo, warnings
        )
        doc = {"jacobian": {n: blocks[n].document() for n in names}}
        shown = [(f"∂out/∂{n}", blocks[n]) for n in names]
    else:
        value, blocks, k, matrix, gradient = sparsity.sparse_hessian(
            program, inv.values, names, pattern, memo, warnings
        )
        doc = {
            "grad": gradient,
            "hessian": {a: {b: blocks[a][b].document() for b in names} for a in names},
        }
        shown = [(f"∂²/∂{a}∂{b}", blocks[a][b]) for a in names for b in names]
    if output is not None:
        write_matrix(output, matrix)
    if note is not None:
        doc["notes"] = [note]
        sys.stderr.write(f"autograd-cli: note: {note}\n")
    if warnings:
        doc["warnings"] = warnings
    if inv.json:
        render.emit_json({"expr": inv.source, "value": value, "shape": list(value.shape), **doc})
        return True
    print(inv.source)
    print(
        f"value {render.format_scalar(value.reshape(()), inv.precision) if value.size == 1 else value.shape}"
    )
    sweeps = "reverse" if memo["coloring"].mode == "rows" else "forward"
    print(f"{k} color(s){_HOW[memo['coloring'].mode]}: {k} {sweeps} sweep(s)")
    for label, m in shown:
        print(f"{label}: shape {list(m.shape)}, {m.values.size} nonzero(s)")
        for r, c, v in list(zip(m.rows.tolist(), m.cols.tolist(), m.values.tolist()))[:SHOWN]:
            print(f"  [{r}, {c}] {v!r}")
        if m.values.size > SHOWN:
            print(f"  ... {m.values.size - SHOWN} more (--json writes them all)")
    render.print_warnings(warnings)
    return True


#: how the colors compress, said after their count (columns: the plain case)
_HOW = {"columns": "", "rows": " of the rows", "star": " (a star coloring)"}


@command("sparsity")
def sparsity_command(ctx: typer.Context):
    """Show the sparsity pattern of the Jacobian or Hessian.

    The Hessian's for a scalar output, the Jacobian's otherwise: which input elements each
    output element depends on (structurally, from the program), and its coloring.
    """
    from ...core import sparsity
    from ...core.program import check_values, resolve_wrt
    from .. import render

    inv = Invocation(ctx)
    program = inv.program()
    check_values(program, inv.values)
    names = resolve_wrt(program, inv.shared.wrt)
    pattern, ev, _ = sparsity.jacobian_pattern(program, inv.values, names)
    kind = "jacobian"
    if ev.output.data.size == 1:
        pattern, ev, _ = sparsity.hessian_pattern(program, inv.values, names)
        kind = "hessian"
    coloring = sparsity.coloring(pattern, kind)
    k = coloring.k
    coo = pattern.tocoo()
    import numpy as np

    order = np.lexsort((coo.col, coo.row))
    rows, cols = coo.row[order].tolist(), coo.col[order].tolist()
    band = max((abs(r - c) for r, c in zip(rows, cols)), default=0)
    if inv.json:
        render.emit_json(
            {
                "expr": inv.source,
                "of": kind,
                "shape": list(pattern.shape),
                "nnz": int(pattern.nnz),
                "rows": rows,
                "cols": cols,
                "colors": k,
                "bandwidth": band,
            }
        )
        return
    m, n = pattern.shape
    print(inv.source)
    print(
        f"{kind} pattern: shape [{m}, {n}], {pattern.nnz} nonzero(s), bandwidth {band}, "
        f"{k} color(s){_HOW[coloring.mode]}"
    )
    if m <= 40 and n <= 80:
        dense = pattern.toarray()
        for row in dense:
            print("  " + "".join("■" if v else "·" for v in row))
