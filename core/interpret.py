"""The one interpreter: a walk over a parsed program that every evaluator shares.

A :class:`~.program.Program` is a DAG of :class:`~.program.Expr` nodes.  To
evaluate it, :func:`interpret` visits the nodes once each, arguments first (an
iterative topological order, so 100,000-deep programs work), and asks an
:class:`Interpretation` what each node's value is.  The interpretation decides
what a "value" is:

* :class:`~.recording.Recording` (``recording.evaluate``): engine tensors that record the
  graph for reverse mode (values, gradients, Hessians, ``graph``, ``explain``);
* :class:`~.forward.Duals` (``forward.jvp_program``): a primal tensor and its
  tangent, for forward mode (``--tangent``, ``taylor``-style sweeps);
* :class:`~.batch.Batched` (``batch.evaluate_batch``): tensors with a leading
  batch axis, one row per point;
* :class:`~.codegen.trace.Tracing` (``codegen``): the nodes of a graph that generated code
  writes statement by statement;
* :class:`Dependence`: whether a node depends differentiably on the variables
  asked about (``diff``, ``explain`` and the kink warnings read it).

The walk itself does what is the same for all of them, once: it binds each
input variable the first time it is reached (and says which variable has no
value, :func:`~.program.missing_value`), looks the op up in the op table, and
hands the values of the arguments to the interpretation.  This is JAX's
``eval_jaxpr`` over interpreters, without the tracing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .program import Expr, Program, missing_value, topological
from .tensor import OPS

__all__ = ["Dependence", "Interpretation", "Walk", "interpret", "NO_VALUES"]


class Interpretation:
    """What a value is, for one evaluator: override :meth:`const`, :meth:`var`, :meth:`apply`."""

    def const(self, node: Expr):
        """The value of a literal (``node.value``: a number or nested list)."""
        raise NotImplementedError

    def var(self, name: str, value):
        """The value of input variable ``name`` given ``value`` (called once per variable)."""
        raise NotImplementedError

    def apply(self, node: Expr, op, args: list):
        """The value of ``node``: op-table entry ``op`` applied to its arguments' values."""
        raise NotImplementedError


class _NoValues(Mapping):
    """The values of an analysis that needs none: every variable "has" the value None."""

    def __getitem__(self, name):
        return None

    def __contains__(self, name) -> bool:
        return True

    def __iter__(self):
        return iter(())

    def __len__(self) -> int:
        return 0


NO_VALUES: Mapping = _NoValues()


@dataclass
class Walk:
    """One run of :func:`interpret`: every node's value, and each input variable's."""

    output: Expr
    order: list  # the nodes, each after its arguments; the output is the last
    values: dict  # id(Expr) -> value
    inputs: dict  # variable name -> its value (those reached, then any `bind` added)

    @property
    def result(self):
        """The output's value."""
        return self.values[id(self.output)]

    def __getitem__(self, node: Expr):
        return self.values[id(node)]


def interpret(
    program: Program | Expr,
    interpretation: Interpretation,
    values: Mapping = NO_VALUES,
    *,
    bind: Iterable[str] = (),
) -> Walk:
    """Evaluate ``program`` (or a bare output Expr) at ``values`` in ``interpretation``.

    ``bind`` names input variables to bind even when the output does not reach
    them (a variable a gradient is asked of, bound by a statement whose result
    is unused): each needs a value, like the variables that are reached.

    >>> from autograd_cli.grammar import parse
    >>> walk = interpret(parse("y = x + 1; x * y"), Dependence({"x"}))
    >>> walk.result
    True
    """
    if isinstance(program, Program):
        output, order = program.output, program.order()  # found once per program
    else:
        output, order = program, topological([program])
    computed: dict[int, object] = {}
    inputs: dict[str, object] = {}
    const, var, apply = interpretation.const, interpretation.var, interpretation.apply
    for node in order:
        op = node.op
        if op == "const":
            computed[id(node)] = const(node)
        elif op == "var":
            name = node.name
            assert name is not None  # a "var" node always has a name (Expr.var)
            if name in inputs:
                computed[id(node)] = inputs[name]
                continue
            if name not in values:
                raise missing_value(name)
            computed[id(node)] = inputs[name] = var(name, values[name])
        else:
            computed[id(node)] = apply(node, OPS[op], [computed[id(a)] for a in node.args])
    for name in bind:
        if name not in inputs:
            if name not in values:
                raise missing_value(name)
            inputs[name] = var(name, values[name])
    return Walk(output, order, computed, inputs)


class Dependence(Interpretation):
    """Whether each node depends on the variables ``wanted`` along a differentiable path.

    An op without a reverse rule, or an argument the op declares not
    differentiable (the condition of ``where``), cuts the dependence.
    """

    def __init__(self, wanted: Iterable[str]):
        self.wanted = frozenset(wanted)

    def const(self, node: Expr) -> bool:
        return False

    def var(self, name: str, value) -> bool:
        return name in self.wanted

    def apply(self, node: Expr, op, args: list) -> bool:
        if op.vjp is None:
            return False
        flags = op.flags(len(args))
        return any(d and f for d, f in zip(args, flags))
