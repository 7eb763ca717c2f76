"""autograd-cli: a command-line gradient calculator with PyTorch's autograd semantics.

The library lives in :mod:`autograd_cli.core` (tensors, backward, grad), the
expression language in :mod:`autograd_cli.grammar`, and the command line in
:mod:`autograd_cli.cli`.

This module (the folder ``facade/``) is where the language meets the library: the
functions below take an expression's text (or a Program :func:`parse` made) and
values, and return what the commands compute (host NumPy arrays, dicts keyed by
variable name), through the library's one dispatcher
(:func:`autograd_cli.core.api.compute`).  The functions of ``core`` take a parsed
Program only.  Nothing in the project imports this module; ``python -m
autograd_cli`` (``__main__``) starts the command line.

>>> import autograd_cli as ag
>>> r = ag.grad("3*a**3 - b**2", {"a": 2, "b": 6})
>>> float(r.value), {k: float(v) for k, v in r.grad.items()}
(-12.0, {'a': 36.0, 'b': -12.0})

Each function imports what it needs when called, so ``import autograd_cli``
(and the command line's start-up) loads nothing more.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads it the same)
if TYPE_CHECKING:
    from collections.abc import Sequence

    from .core.api import Result
    from .core.explanation import Explanation
    from .core.program import Program
    from .core.symbolic import DiffResult

__version__ = "0.1.0"

__all__ = ["diff", "evaluate", "explain", "grad", "hessian", "jacobian", "parse"]


def parse(source: str) -> Program:
    """The expression language's text as a :class:`~autograd_cli.core.program.Program`."""
    from .grammar import parse as parse_text

    return parse_text(source)


def _program(source, what: str, *also: type):
    """``source`` parsed when it is text; a Program (or one of ``also``) as it is."""
    if isinstance(source, str):
        return parse(source)
    from .core.program import Program

    if isinstance(source, (Program, *also)):
        return source
    raise TypeError(f"{what}() takes the program's text or a parsed Program")


def _compute(name: str, source, values, **request):
    """:func:`autograd_cli.core.api.compute`, the library's one dispatcher, on text or a Program."""
    from .core.api import compute

    what = "evaluate" if name == "eval" else name
    return compute(name, _program(source, what), dict(values or {}), **request)


def evaluate(source: str | Program, values: dict | None = None) -> Result:
    """The value of the expression at ``values`` (name -> number, nested list or array)."""
    return _compute("eval", source, values)


def grad(
    source: str | Program,
    values: dict | None = None,
    wrt: str | Sequence[str] | None = None,
    *,
    grad_output=None,
    order: int = 1,
) -> Result:
    """Value and gradient (``result.grad``: name -> array) w.r.t. ``wrt`` (default: every input).

    A non-scalar output needs ``grad_output`` (the v of v^T J).  ``order=N`` gives the N-th
    derivative of a scalar expression of one variable instead.
    """
    return _compute("grad", source, values, wrt=wrt, order=order, grad_output=grad_output)


def hessian(
    source: str | Program, values: dict | None = None, wrt: str | Sequence[str] | None = None
) -> Result:
    """Value, gradient and every second partial (``result.hessian[a][b]``) of a scalar expression."""
    return _compute("hessian", source, values, wrt=wrt)


def jacobian(
    source: str | Program, values: dict | None = None, wrt: str | Sequence[str] | None = None
) -> Result:
    """Value and Jacobian blocks (``result.jacobian[name]``, shape output + variable)."""
    return _compute("jacobian", source, values, wrt=wrt)


def codegen(
    source: str | Program,
    values: dict | None = None,
    wrt: str | Sequence[str] | None = None,
    *,
    target: str = "numpy",
    hessian: bool = False,
    name: str = "f",
    shapes: dict | None = None,
    dtype: str = "float64",
) -> str:
    """The value and gradient (``hessian``: and Hessian) as the source text of one function
    in ``target`` (numpy, torch, jax or c), traced at ``values`` (numbers where none are
    given, or ``shapes``: ``{"x": (3,)}``); see :mod:`autograd_cli.core.codegen`.

    >>> code = codegen("x*sin(x)", {"x": 1.0})
    >>> code.splitlines()[-1]
    '    return t1, t4'
    """
    from .core.codegen import generate

    program = _program(source, "codegen")
    text = source if isinstance(source, str) else None
    return generate(
        program,
        values,
        wrt=wrt,
        target=target,
        hessian=hessian,
        name=name,
        shapes=shapes,
        dtype=dtype,
        text=text,
    ).code


def diff(
    source, wrt: str | Sequence[str] | None = None, order: int = 1, values=None, **options
) -> DiffResult:
    """The derivative as a simplified expression (:func:`autograd_cli.core.symbolic.diff`).

    ``source``: text, a Program or an Expr; ``options``: ``guards``, ``time_budget``,
    ``step_budget``.
    """
    from .core import symbolic
    from .core.program import Expr

    program = _program(source, "diff", Expr)
    return symbolic.diff(program, wrt, order, values, **options)


def explain(
    source: str | Program, values: dict, wrt: str | Sequence[str] | None = None
) -> Explanation:
    """The chain rule step by step at ``values`` (:func:`autograd_cli.core.explain.explain`),
    with ``text``, its layout as the ``explain`` command prints it."""
    from .core.explain import explain as explain_program
    from .core.explanation import Explanation

    return Explanation.of(explain_program(_program(source, "explain"), values, wrt))
