"""``codegen``: the value and gradient (and Hessian) of a program as straight-line code.

The program is traced (:mod:`.trace`: an interpretation of the one interpreter whose values
are the nodes of a graph), its gradient is the op table's own ``vjp`` rules traced over
that graph (reverse mode: one statement per local vector-Jacobian product), its Hessian
the ``jvp`` rules over the gradient's graph (forward over reverse).  The code is then
written node by node, each op as its entry's ``code`` says for the target (:mod:`.python`
for NumPy, PyTorch and JAX; :mod:`.c` for C99).  Its size is linear in the program's: the
backward pass has a bounded number of statements per node, never a formula per path.

>>> from autograd_cli.grammar import parse
>>> g = generate(parse("x*sin(x)"), {"x": 1.0})
>>> g.outputs
['value', 'grad_x']
>>> namespace = {}
>>> exec(g.code, namespace)
>>> [round(float(v), 12) for v in namespace["f"](1.0)]
[0.841470984808, 1.381773290676]
"""

from __future__ import annotations

import keyword
import math
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .. import limits
from ..errors import InputError
from ..program import Expr, Program, check_values, complex_output_error, resolve_wrt, variables
from . import trace as _trace
from .python import emit_python

__all__ = ["TARGETS", "Generated", "generate", "CONVENTIONS"]

TARGETS = ("numpy", "torch", "jax", "c")
DTYPES = ("float64", "float32")

#: What the generated code does at the points where a derivative is a convention (the
#: header says it; the same as ``grad``'s, as the rules are the same)
CONVENTIONS = (
    "conventions (PyTorch's, as grad): abs'(0) = 0, relu'(0) = 0, sqrt'(0) = inf, ties of "
    "max/min split the gradient evenly, d/dx x**y = 0 where y == 0, sign/floor/round and "
    "comparisons pass no gradient, a zero cotangent times inf or nan is 0 (the untaken "
    "branch of where), broadcasting summed back (sum_to); inf and nan as IEEE"
)

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

#: Names a parameter of the generated Python must not take (the modules it imports, its
#: helper); C's reserved words are the C generator's
_PYTHON_TAKEN = frozenset({"np", "torch", "jnp", "jax", "math", "scipy", "_chain"})


@dataclass
class Generated:
    """Generated code and what a caller needs to run it (SPEC's ``codegen`` keys)."""

    target: str
    name: str
    inputs: dict[str, list[int]]  # variable -> its shape
    outputs: list[str]  # "value", "grad_x", "hessian_x_y" in the order returned
    code: str
    params: dict[str, str] = field(default_factory=dict)  # variable -> parameter name
    batched: bool = False  # the code takes leading batch axes on its inputs
    dtype: str = "float64"
    wrt: list[str] = field(default_factory=list)
    hessian: bool = False


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415 - the header

    try:
        return version("autograd-cli")
    except PackageNotFoundError:  # an uninstalled checkout: no version to name
        return "unknown"


def check_name(name: str, target: str) -> str:
    """The function's name: an identifier that is not a reserved word of the target."""
    if not isinstance(name, str) or not _IDENTIFIER.match(name) or len(name) > 200:
        raise InputError.naming(
            "{name}: the function's name must be an identifier (letters, digits and _, not "
            "starting with a digit), not {value!r}",
            {"value": name},
        )
    reserved = _reserved(target)
    if name in reserved or name in _PYTHON_TAKEN or name.startswith("ag_"):
        raise InputError.naming(
            "{name}: {value!r} is a reserved word or a name the generated code uses; "
            "choose another",
            {"value": name},
        )
    return name


def _reserved(target: str) -> frozenset:
    if target == "c":
        from .c import C_RESERVED  # noqa: PLC0415 - the C generator only for C

        return C_RESERVED
    return frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)


def _param_names(names: Sequence[str], target: str, function: str) -> dict[str, str]:
    """Each variable's parameter name: itself, or with a ``_`` appended where it is a
    reserved word, a name the code uses, or the function's name."""
    reserved = _reserved(target) | _PYTHON_TAKEN | {function, "value"}
    out: dict[str, str] = {}
    used: set[str] = set()
    for name in names:
        # the outputs' names (grad_x, hessian_x_y) and the generator's own (ag_...) are
        # taken: such a variable is v_NAME; a reserved word gets a _ (lambda_)
        p = "v_" + name if name.startswith(("ag_", "grad_", "hessian_")) else name
        while p in reserved or p in used:
            p = p + "_"
        used.add(p)
        out[name] = p
    return out


def _point(program: Program, values: Mapping, shapes: Mapping) -> dict:
    """The values to trace at: those given, else 0.5 in the shape ``shapes`` gives (a
    number by default)."""
    point = {}
    for name in variables(program):
        if name in values:
            point[name] = values[name]
        else:
            shape = tuple(shapes.get(name, ()))
            limits.check(math.prod(shape), 8, f"{name}'s value")  # before allocating it
            point[name] = np.full(shape, 0.5)
    return point


def _header_lines(text: str, target: str, g: Generated, conventions: str) -> list[str]:
    lines = [
        f"autograd-cli {_version()} codegen --target {target}" + (" --hessian" if g.hessian else "")
    ]
    for i, line in enumerate(text.splitlines()[:200] or [""]):
        clean = "".join(ch if ch.isprintable() else "?" for ch in line)
        if target == "c":
            clean = clean.replace("*/", "* /").replace("/*", "/ *")
        lines.append(("expression: " if i == 0 else "            ") + clean[:2000])
    shapes = ", ".join(
        f"{g.params[n]}: {'a number' if not s else 'shape ' + str(tuple(s))}"
        for n, s in g.inputs.items()
    )
    lines.append("inputs: " + (shapes or "none"))
    lines.append("returns: " + ", ".join(g.outputs))
    if g.batched and target != "c":
        lines.append(
            "leading batch axes: inputs of any common broadcast shape, one point per element"
        )
    elif target != "c":
        lines.append("shapes: fixed to the inputs' shapes above")
    if target == "jax" and g.dtype == "float64":
        lines.append(
            "float64 needs jax.config.update('jax_enable_x64', True) before the first call"
        )
    lines.extend(textwrap.wrap(conventions, 88, break_on_hyphens=False))
    return lines


def generate(
    program: Program | Expr,
    values: Mapping | None = None,
    *,
    wrt: str | Sequence[str] | None = None,
    target: str = "numpy",
    hessian: bool = False,
    name: str = "f",
    shapes: Mapping[str, Sequence[int]] | None = None,
    dtype: str = "float64",
    text: str | None = None,
) -> Generated:
    """The code of ``program``'s value and gradient (with ``hessian``: and Hessian) in
    ``target``, traced at ``values`` (or numbers, or ``shapes``).  ``text``: the expression
    as given, for the header (else the program printed)."""
    from ..printing import to_text  # noqa: PLC0415 - the header's text only

    if isinstance(program, Expr):
        program = Program(source="", output=program, inputs=variables(program))
    if target not in TARGETS:
        raise InputError.naming(
            "{target}: choose one of numpy, torch, jax, c, not {value!r}", {"value": target}
        )
    if dtype not in DTYPES:
        raise InputError.naming(
            "{dtype}: codegen writes float64 or float32, not {value!r}", {"value": dtype}
        )
    name = check_name(name, target)
    values = dict(values or {})
    shapes = dict(shapes or {})
    check_values(program, values)
    check_values(program, shapes)
    for key, shape in shapes.items():
        if key in values and np.shape(values[key]) != tuple(shape):
            raise InputError.naming(
                "{shape}: {key} is given a value of shape {have} and the shape {want}",
                {"key": key, "have": np.shape(values[key]), "want": tuple(shape)},
            )
    names = resolve_wrt(program, wrt)
    inputs = variables(program)
    traced = _trace.trace(program, _point(program, values, shapes), inputs)
    _trace.check_scalar(traced.output, "codegen")
    grads = _trace.gradients(traced, traced.output, names)
    outputs: list[tuple[str, _trace.Node]] = [("value", traced.output)]
    outputs += [(f"grad_{n}", grads[n]) for n in names]
    if hessian:
        blocks = _trace.hessian(traced, grads, names)
        outputs += [(f"hessian_{a}_{b}", blocks[a][b]) for a in names for b in names]
    order = _trace.reached([node for _, node in outputs])
    batched = all(node.value.ndim == 0 for node in order)
    params = _param_names(inputs, target, name)
    g = Generated(
        target=target,
        name=name,
        inputs={n: list(traced.inputs[n].value.shape) for n in inputs},
        outputs=[label for label, _ in outputs],
        code="",
        params=params,
        batched=batched,
        dtype=dtype,
        wrt=list(names),
        hessian=hessian,
    )
    shown = text if text is not None else (program.source or to_text(program.output))
    header = _header_lines(shown, target, g, CONVENTIONS)
    node_inputs = {n: traced.inputs[n] for n in inputs}
    if target == "c":
        from .c import emit_c  # noqa: PLC0415 - the C generator only for C

        g.code = emit_c(name, node_inputs, params, outputs, order, header, dtype)
    else:
        g.code = emit_python(
            target, name, node_inputs, params, outputs, order, header, dtype, batched
        )
    if outputs[0][1].value.dtype.kind == "c":  # grad's error (PyTorch's: no implicit seed)
        raise complex_output_error(outputs[0][1].value.shape)
    return g
