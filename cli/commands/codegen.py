"""The codegen command: the value and gradient (and Hessian) as straight-line code in NumPy,
PyTorch, JAX or C, optionally checked against the engine at many points."""

from __future__ import annotations

from typing import Annotated

import typer

from .. import options
from .common import Invocation, command, option

Target = Annotated[
    str,
    typer.Option(
        "--target",
        metavar="TARGET",
        help="numpy (default), torch, jax or c: the language of the code.",
    ),
]
Output = option(
    "-o", str, "Write the code to FILE (whole, or not at all) instead of stdout.", metavar="FILE"
)
Name = Annotated[
    str,
    typer.Option("--name", metavar="NAME", help="The generated function's name.  [default: f]"),
]
Check = option(
    "--check",
    str,
    "Run the code at N random points (100 without N) around the values given (in [-1, 1] "
    "without values) against the engine; exit 1 past rtol 1e-12 (float64).",
    metavar="[N]",
)
Shape = option(
    "--shape",
    list[str],
    "A variable's shape without giving its value: x=3,4 (repeatable; a number without).",
    metavar="NAME=DIMS",
)


@command("codegen")
def codegen_command(
    ctx: typer.Context,
    target: Target = "numpy",
    hessian: Annotated[
        bool,
        typer.Option("--hessian", help="The Hessian too (forward over reverse)."),
    ] = False,
    output: Output = None,
    name: Name = "f",
    check_text: Check = None,
    shape: Shape = None,
):
    """Write the value and gradient as NumPy, torch, JAX or C code.

    One self-contained function in NumPy, PyTorch, JAX or C99 that returns the value, the
    gradient (and with --hessian the Hessian): one statement per step of the program and per
    step of its reverse pass, shared steps once, so the code grows linearly with the
    expression.  The numbers are grad's, conventions included.  --check [N] runs it against
    the engine at N points.
    """
    from ...core import codegen
    from ...core.codegen import check as checking
    from .. import files, render

    inv = Invocation(ctx)
    points = None if check_text is None else _points(check_text)
    shapes = _shapes(shape or [])
    program = inv.program()
    generated = codegen.generate(
        program,
        inv.values,
        wrt=inv.wrt or None,
        target=target,
        hessian=hessian,
        name=name,
        shapes=shapes,
        dtype=inv.dtype,
        text=inv.source,
    )
    result = None
    if points is not None:
        result = checking.check(generated, program, inv.values, points)
    if output is not None:
        files.write_atomically(output, generated.code.encode(), "-o")
    if inv.json:
        render.emit_json(_document(generated, result))
    else:
        if output is None:
            import sys

            sys.stdout.write(generated.code)
            sys.stdout.flush()
        if result is not None:
            _report(generated, result, inv.precision)
    if result is not None and not result.passed:
        raise typer.Exit(1)


def _points(text: str) -> int:
    from ...core.codegen.check import MAX_POINTS

    try:
        n = int(text)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_POINTS:
        raise options.UsageError(
            f"--check takes a number of points, 1 to {MAX_POINTS}, not {text!r} (give the "
            "expression before --check, or --check=100)"
        )
    return n


def _shapes(given: list[str]) -> dict[str, tuple]:
    """``--shape x=3,4`` read: name -> shape (``x=`` or ``x=()``: a number)."""
    out: dict[str, tuple] = {}
    for item in given:
        key, sep, dims = item.partition("=")
        key, dims = key.strip(), dims.strip().strip("()[]")
        try:
            shape = tuple(int(d) for d in dims.split(",") if d.strip()) if sep else None
        except ValueError:
            shape = None
        if not key.isidentifier() or shape is None or any(d < 1 or d > 1_000_000 for d in shape):
            raise options.UsageError(
                f"--shape takes NAME=DIMS, whole numbers 1 or more separated by commas "
                f"(x=3,4), not {item!r}"
            )
        if len(shape) > 8:
            raise options.UsageError(f"--shape: at most 8 dimensions, not {len(shape)}")
        out[key] = shape
    return out


def _document(generated, result) -> dict:
    doc = {
        "target": generated.target,
        "name": generated.name,
        "inputs": generated.inputs,
        "outputs": generated.outputs,
        "code": generated.code,
    }
    if result is not None:
        doc["check"] = {
            "points": result.points,
            "max_rel_diff": result.worst,
            "passed": result.passed,
            "by_output": result.max_rel_diff,
        }
    return doc


def _report(generated, result, precision) -> None:
    """The check for a person, on stderr (stdout holds the code)."""
    from rich import box
    from rich.table import Table

    from .. import render

    console = render.make_console(stderr=True)
    verdict = "passed" if result.passed else "FAILED"
    table = Table(
        title=f"check: {result.points} points, {generated.target} against the engine "
        f"(rtol {result.rtol:g}): {verdict}",
        box=box.SIMPLE_HEAD,
        title_justify="left",
        show_edge=False,
    )
    table.add_column("output", style="bold", no_wrap=True)
    table.add_column("largest relative difference", justify="right")
    for label, diff in result.max_rel_diff.items():
        table.add_row(label, f"{diff:.3g}")
    console.print(table)
