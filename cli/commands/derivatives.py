"""The derivative commands: eval, grad, hessian, jacobian and check.

Each reads the expression and the values (:class:`.common.Invocation`), calls a library
function of :mod:`autograd_cli.core.api` and hands the plain result to a renderer.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from typing import Annotated

import typer

from .. import options
from .common import Invocation, command, option, order_option, show_result
from .shared import ALL, RESULT

GradOrder = order_option(
    "The N-th derivative of a scalar expression of one "
    f"variable (repeated differentiation; 1 to {options.MAX_ORDER}).  [default: 1]"
)
GradOutput = option(
    "--grad-output",
    str,
    "For a non-scalar output: the vector v of the vector-Jacobian product v^T J (a JSON array).",
    metavar="ARRAY",
)
Holomorphic = Annotated[
    bool,
    typer.Option(
        "--holomorphic",
        help="f'(z) of a holomorphic f of complex variables (JAX's holomorphic=True): "
        "real values are taken as complex; an op that is not complex-differentiable "
        "(conj, abs, real, imag, angle) is an error.",
    ),
]
Tangent = option(
    "--tangent",
    list[str],
    "Forward mode, J v for the direction v (repeatable; other variables get a zero tangent).",
    metavar="NAME=VALUE",
)
#: check's tolerances: their defaults depend on the dtype, so their help gives them
_TOLERANCES = "[default: {} for float64, {} for float32]"
Eps = option(
    "--eps",
    float,
    "Finite-difference step, > 0.  " + _TOLERANCES.format("1e-6", "1e-3"),
    show_default=False,
)
Atol = option(
    "--atol",
    float,
    "Absolute tolerance, >= 0.  " + _TOLERANCES.format("1e-5", "1e-3"),
    show_default=False,
)
Rtol = option(
    "--rtol",
    float,
    "Relative tolerance, >= 0.  " + _TOLERANCES.format("1e-3", "1e-2"),
    show_default=False,
)


@command("eval", shared=("expr", "output_format", *ALL))
def eval_command(ctx: typer.Context):
    """Evaluate the expression: its value and shape."""
    from ...core import api

    inv = Invocation(ctx)
    show_result(inv, api.eval_of(inv.program(), inv.values))


@command("grad", shared=RESULT)
def grad_command(
    ctx: typer.Context,
    grad_output: GradOutput = None,
    order_text: GradOrder = None,
    tangent: Tangent = None,
    holomorphic: Holomorphic = False,
):
    """Compute the value and the gradient.

    With respect to every input variable (not the NAME = EXPR intermediates), or those
    named by --wrt.  A non-scalar output needs --grad-output V (the vector-Jacobian
    product V^T J); --order N gives the N-th derivative in one variable, --tangent forward
    mode (J v).
    """
    from ...core import api

    inv = Invocation(ctx)
    names = inv.wrt
    order = 1 if order_text is None else options.parse_order(order_text, minimum=1)
    if holomorphic and (tangent or order != 1 or grad_output is not None):
        raise options.UsageError(
            "--holomorphic (f'(z)) cannot be combined with --tangent, --order or --grad-output"
        )
    if tangent:
        if grad_output is not None or order != 1:
            raise options.UsageError(
                "--tangent (forward mode) cannot be combined with --grad-output or --order"
            )
        tangents = options.named_literals(tangent, "--tangent")
        result = api.jvp_of(inv.program(), inv.values, tangents)
    elif order > 1:
        if grad_output is not None:
            raise options.UsageError(
                "--order needs a scalar output; it cannot be combined with --grad-output"
            )
        result = api.nth_derivative_of(inv.program(), inv.values, wrt=names, order=order)
    else:
        seed = None if grad_output is None else options.parse_literal(grad_output, "--grad-output")
        result = api.grad_of(
            inv.program(), inv.values, wrt=names, grad_output=seed, holomorphic=holomorphic
        )
    show_result(inv, result)


@command("hessian", shared=RESULT)
def hessian_command(
    ctx: typer.Context,
    holomorphic: Holomorphic = False,
    sparse: Sparse = None,
    output: SparseOutput = None,
):
    """Compute the value, the gradient and the Hessian.

    The Hessian holds every second partial of a scalar expression, with respect to every
    variable (or those named by --wrt).
    """
    from ...core import api

    inv = Invocation(ctx)
    names = inv.wrt
    if sparse not in (None, "off"):
        from .sparse import sparse_derivatives

        if sparse_derivatives(inv, names, "hessian", output, sparse):
            return
    result = api.hessian_of(inv.program(), inv.values, wrt=names, holomorphic=holomorphic)
    show_result(inv, result)
    hint = None if names or inv.json or inv.output_format == "json" else _wrt_hint(result)
    if hint and inv.output_format == "table":
        from .. import render

        render.make_console().print(f"[dim]note: {render.user_text(hint)}[/dim]")
    elif hint:  # plain, csv: stdout holds only numbers
        sys.stderr.write(f"autograd-cli: note: {hint}\n")


def _wrt_hint(result) -> str | None:
    """With the default --wrt (every input, as PyTorch's), a hint naming --wrt when array
    inputs have all-zero second derivatives of their own (d²/dA² of x@A@x: 81 zeros printed).
    Nothing is wrong, so it is a note for people, not one of JSON's warnings."""
    blocks = result.hessian or {}
    zero = [n for n in blocks if result.grad[n].ndim and not blocks[n][n].any()]
    rest = [n for n in blocks if n not in zero]
    if not zero or not rest:
        return None
    count = sum(blocks[n][n].size for n in zero)
    which = " and ".join(f"∂²/∂{n}∂{n}" for n in zero)
    return (
        f"{which} {'is' if len(zero) == 1 else 'are'} all zero ({count:,} entries); "
        f"try --wrt {','.join(rest)}"
    )


SparseOutput = option(
    "-o",
    str,
    "With --sparse: the whole matrix to FILE.npz (scipy.sparse) or FILE.mtx (Matrix Market).",
    metavar="FILE",
)
Sparse = option(
    "--sparse",
    str,
    "Structural sparsity: the pattern, colored columns, one forward sweep per color; JSON "
    "blocks as COO (shape, rows, cols, values, colors).  --sparse auto: sparse where the "
    "colors are at most a quarter of the variables (with a note), else dense.",
    metavar="[auto]",
)


@command("jacobian", shared=RESULT)
def jacobian_command(
    ctx: typer.Context,
    sparse: Sparse = None,
    output: SparseOutput = None,
):
    """Compute the value and the Jacobian.

    The Jacobian of the output with respect to a variable has the output's shape followed
    by the variable's.
    """
    from ...core import api

    inv = Invocation(ctx)
    if sparse not in (None, "off"):
        from .sparse import sparse_derivatives

        if sparse_derivatives(inv, inv.wrt, "jacobian", output, sparse):
            return
    show_result(inv, api.jacobian_of(inv.program(), inv.values, wrt=inv.wrt))


@command("check")
def check_command(
    ctx: typer.Context,
    eps: Eps = None,
    atol: Atol = None,
    rtol: Rtol = None,
):
    """Compare the gradient with central finite differences.

    The gradient by reverse mode against central differences of step --eps; they agree
    where |analytic - numeric| <= atol + rtol * |numeric|.  Exit 1 when they do not.
    """
    from ...core import api
    from ...core.gradcheck import gradcheck_defaults
    from .. import render

    inv = Invocation(ctx)
    defaults = gradcheck_defaults(inv.dtype)
    eps = defaults["eps"] if eps is None else eps
    atol = defaults["atol"] if atol is None else atol
    rtol = defaults["rtol"] if rtol is None else rtol
    if not (math.isfinite(eps) and eps > 0):
        raise options.UsageError(f"--eps must be a finite number above 0, not {eps:g}")
    for name, tolerance in (("--atol", atol), ("--rtol", rtol)):
        if not (math.isfinite(tolerance) and tolerance >= 0):
            raise options.UsageError(
                f"{name} must be a finite number, 0 or more, not {tolerance:g}"
            )
    names = inv.wrt
    _check_step(inv.values, names or list(inv.program().inputs), eps, inv.dtype)
    result = api.check_of(inv.program(), inv.values, wrt=names, eps=eps, atol=atol, rtol=rtol)
    if not result.analytic:  # no variables: nothing can disagree, so it passes (exit 0)
        result = dataclasses.replace(result, warnings=[*result.warnings, NOTHING_TO_CHECK])
    if inv.json:
        render.emit_json(render.check_json(inv.source, result))
    else:
        render.render_check(inv.source, result, inv.precision)
    if not result.passed:
        raise typer.Exit(1)


NOTHING_TO_CHECK = (
    "nothing to check: the expression has no variables, so it has no gradient to compare"
)


def _check_step(values: dict, names: list, eps: float, dtype: str) -> None:
    """Every checked value is finite, and --eps moves it in its dtype (1e-12 does not move
    1.0 in float32): else a usage error naming the variable."""
    import numpy

    from ...core import backend
    from ...core.recording import parse_value

    for name in names:
        if name not in values:
            continue  # a missing value is reported by check_of, as by every command
        parsed = parse_value(name, values[name])  # a ragged or deep value: its error first
        # a complex value moves part by part (by eps along each axis): its parts' precision
        kind = backend.complex_name(dtype) if parsed.dtype.kind == "c" else dtype
        with numpy.errstate(all="ignore"):
            x = numpy.asarray(values[name], dtype=kind)
            step = numpy.asarray(eps, dtype=kind)
            stuck = numpy.real((x + step) - (x - step))
        if not numpy.isfinite(x).all():
            where = x[~numpy.isfinite(x)].flat[0]
            raise options.UsageError(
                f"--{name} = {where:g}: a gradient check needs finite values (no finite "
                f"difference can be taken there)"
            )
        stuck = ~(stuck > 0)
        if stuck.any():
            where = x[stuck].flat[0]
            raise options.UsageError(
                f"--eps {eps:g} is too small to move --{name} = {where:g} in {kind}; "
                f"give a larger --eps"
            )
