"""Explain a gradient: the chain rule walked step by step, as the first seed does it.

For ``y = (x + w) * (w + 1)`` at x = 2, w = 1 with respect to w::

    y = (x + w)*(w + 1)  at x = 2, w = 1
    Forward:
      a = x + w = 3
      b = w + 1 = 2
      y = a*b = 6
    Local derivatives:
      dy/da = b = 2
      dy/db = a = 3
      da/dw = 1
      db/dw = 1
    Chain rule (backward, summing over the paths into each node):
      dy/dw = dy/da*da/dw + dy/db*db/dw = 2*1 + 3*1 = 5
    Paths from y to w: y -> a -> w: 2*1 = 2; y -> b -> w: 3*1 = 3; sum = 5

Every intermediate gets a name: the user's own where the program binds one
(``a = x + w; b = w + 1; a * b``), else an automatic one (``a``, ``b``, ...,
and ``y`` for the output).  Each local derivative comes from the op table's
rule (the same ``vjp`` the engine runs), shown symbolically in terms of those
names and, at the point, by the engine itself; the totals are accumulated in
reverse topological order, ``dy/dc = sum over the users p of c of
dy/dp * dp/dc``, which is the seed's sum over paths done once per node.  When
the output itself uses c directly as well as through other nodes, its term is
the local partial and is written ``∂y/∂c``.

Any other program the engine differentiates (reductions, matmul, indexing,
broadcasting, array variables) takes the array walk, the seed's ``W @ x + b``
in a loss: a local derivative is then a Jacobian, so each edge shows the
vector-Jacobian product it applies to the node's gradient ``grad_n`` (dy/dn,
of n's shape), as the engine's backward does::

    sum((W @ x + b)**2)  at W = [[1, 2], [3, 4]], x = [1, 1], b = [0.5, -1]
    Forward:
      a = W @ x = [3, 7]  (shape [2])
      ...
    Backward (vector-Jacobian products: grad_n = dy/dn, of n's shape; grad_y = 1):
      y = sum(f): sum reduces over every element: ... so grad_y is copied back ...
        grad_f = broadcast_to(grad_y, [2]) = [1, 1]
      f = c**2: elementwise: the gradient times each element's local derivative
        grad_c = grad_f*(2*c) = [7, 12]  (df/dc = 2*c)
      ...
      a = W @ x: matmul is linear in each argument: grad_a is multiplied back by ...
        grad_W = grad_a ⊗ x = [[7, 7], [12, 12]]
        grad_x = Wᵀ @ grad_a = [43, 62]
    Gradient:
      dy/dW = [[7, 7], [12, 12]]
      ...

The words come from the op's ``kind`` in the op table and the formula from
its ``vjp`` (see :func:`.explain_arrays._rule`); the numbers are the engine's: each node's
gradient from one ``grad`` call, so they are ``grad``'s.  A node with several
users gets ``grad_n += ...`` from each, then their sum.  The output must be a
number (a loss); a non-scalar one is refused.

:func:`explain` returns an :class:`Explanation`: plain data (``steps``, a list
of dicts of strings and numbers; numbers stay floats, nan and inf included;
the array walk's values are host arrays, and it fills ``shapes``).
The layouts above and SPEC's JSON document are built by the command line
(``autograd_cli.cli.render.explain_text`` and ``explain_json``).

>>> from autograd_cli.grammar import parse
>>> ex = explain(parse("y = (x + w) * (w + 1)"), {"x": 2, "w": 1}, "w")
>>> ex.gradient
{'w': 5.0}
>>> [s["text"] for s in ex.steps if s["kind"] == "accumulate"]
['dy/dw = dy/da*da/dw + dy/db*db/dw = 2*1 + 3*1 = 5']
>>> ex = explain(parse("sum(x*x)"), {"x": [1, 2]})
>>> ex.gradient["x"].tolist(), [s["vjp"] for s in ex.steps if s["kind"] == "local"]
([2.0, 4.0], ['grad_a = broadcast_to(grad_y, [2])', 'grad_x = grad_a*(2*x)'])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from .explain_arrays import explain_arrays
from .explain_steps import (  # the names of explain's results, where callers find them
    GRAD,
    MAX_PATHS,
    MAX_STEPS,
    Explanation,
    _backward_order,
    _shallow,
    _unique,
    _walk_facts,
    accumulate_numbers,
    accumulate_text,
    d_label,
    factor_text,
    format_value,
    local_text,
)
from .ops import RuleContext
from .printing import to_text
from .program import Expr, Program, resolve_wrt, topological
from .recording import evaluate
from .symbolic import Algebra, Builder, _supported, local_vjp
from .tensor import OPS, Tensor, no_grad


def explain(
    program: Program,
    values: dict,
    wrt: str | Sequence[str] | None = None,
    max_steps: int | None = MAX_STEPS,
) -> Explanation:
    """Walk the chain rule for a parsed ``program`` at ``values`` (name -> number or array):
    the scalar walk for elementwise ops of numbers, else the array walk (module docstring).

    ``wrt``: a name, ``"a,b"`` or a list; None means every input variable.
    ``max_steps``: list at most this many steps of each kind (define, local,
    accumulate; the gradient of each variable is always listed); the others are
    computed but only counted, in ``elided`` (None or 0: list them all).
    Text is for :func:`autograd_cli.explain`, which parses it first:

    >>> from autograd_cli.grammar import parse
    >>> ex = explain(parse("a = x + w; b = w + 1; a * b"), {"x": 2, "w": 1}, "w")
    >>> [s["text"] for s in ex.steps if s["kind"] == "local"]
    ['dy/da = b = 2', 'dy/db = a = 3', 'da/dw = 1', 'db/dw = 1']
    """
    if not isinstance(program, Program):
        raise TypeError("explain() takes a parsed Program; autograd_cli.explain takes the text")
    output = program.output
    wanted = resolve_wrt(program, wrt)

    order = topological([output])
    if not all(_scalar_walk(node) for node in order):
        return explain_arrays(program, values, wanted, max_steps, order)

    # Forward: every node's value, by the engine (the variables asked about are bound even
    # where the output does not reach them: their gradient is zero).
    with no_grad():
        ev = evaluate(program, values, requires_grad=wanted, check_domain=False)
    if any(t.size != 1 or t.is_complex() for t in ev.leaves.values()) or any(
        t.is_complex() for t in ev.by_node.values()
    ):
        # arrays, or complex numbers: the array walk traces each op's own vjp (PyTorch's
        # conj(f'(z)) included), where the scalar one multiplies local derivatives
        return explain_arrays(program, values, wanted, max_steps, order)
    point: dict[str, float] = {name: t.item() for name, t in ev.leaves.items()}

    # Which nodes depend on a variable at all (others are constants, shown inline),
    # and which on the variables asked about.
    depends, variable, names, auto = _walk_facts(program, order, wanted)
    walk = _Walk(output, ev.by_node, names, depends, max_steps or math.inf)
    _define_steps(walk, order, auto)
    backward = _backward_order(output, order)
    _local_steps(walk, backward)
    adjoint = _accumulate_steps(walk, backward)
    gradient, paths = _gradient(walk, order, wanted, adjoint)
    return Explanation(
        program.source,
        walk.out_name,
        wanted,
        point,
        walk.tensors[id(output)].item(),
        walk.steps,
        gradient,
        paths,
        {kind: n for kind, n in walk.elided.items() if n},
    )


@dataclass
class _Walk:
    """What the scalar walk's steps share: the facts of the forward pass, the steps listed
    so far, the count of those elided, and the local derivatives found along the way."""

    output: Expr
    tensors: dict  # id(node) -> the engine's value
    names: dict  # id(node) -> its name
    depends: dict  # id(node) -> whether it depends on a variable asked about
    cap: float  # at most this many steps of each kind are listed
    steps: list[dict] = field(default_factory=list)
    elided: dict[str, int] = field(
        default_factory=lambda: {"define": 0, "local": 0, "accumulate": 0}
    )
    local_value: dict[tuple, float] = field(default_factory=dict)  # (parent, child) -> d
    users: dict[int, list] = field(default_factory=dict)  # child -> [parent, ...]

    @property
    def out_name(self) -> str:
        return self.names.get(id(self.output), "y")


def _define_steps(walk: _Walk, order: list, auto: set) -> None:
    """Forward: each named node's definition and value."""
    names = walk.names
    for node in order:
        if node.op in ("const", "var") or id(node) not in names:
            continue
        if len(walk.steps) >= walk.cap:
            walk.elided["define"] += 1
            continue
        walk.steps.append(
            {
                "kind": "define",
                "name": names[id(node)],
                "expr": to_text(_shallow(node, names)),
                "value": walk.tensors[id(node)].item(),
                "auto": id(node) in auto,
            }
        )


def _local_steps(walk: _Walk, backward: list) -> None:
    """Local derivatives along every edge that leads to a variable asked about, in the order
    the chain rule is read (dy/da, dy/db before da/dw); fills ``walk.local_value`` and
    ``walk.users`` (the output's side first)."""
    builder = Builder()
    one_sym = builder.wrap(builder.const(1.0))
    names, depends = walk.names, walk.depends
    listed = 0
    for node in backward:
        if node.op in ("const", "var") or not depends[id(node)]:
            continue
        children = []
        for a in node.args:
            if depends[id(a)] and a not in children:
                children.append(a)
        needs = tuple(depends[id(a)] for a in node.args)
        num = _numeric_vjp(node, walk.tensors, needs)
        shown = listed < walk.cap
        if shown:
            args_named = tuple(Expr.var(names[id(a)]) if id(a) in names else a for a in node.args)
            sym = local_vjp(
                node,
                one_sym,
                builder,
                inputs=args_named,
                out=Expr.var(names[id(node)]),
                needs=needs,
            )
        for child in children:
            values_ = [v for a, v in zip(node.args, num) if a is child and v is not None]
            if not values_:
                continue
            value = math.fsum(values_)
            walk.local_value[(id(node), id(child))] = value
            walk.users.setdefault(id(child), []).append(node)
            if not shown or listed >= walk.cap:
                walk.elided["local"] += 1
                continue
            listed += 1
            parts = [s for a, s in zip(node.args, sym) if a is child and s is not None]
            walk.steps.append(_local_step(builder, node, child, parts, value, names))


def _local_step(builder: Builder, node: Expr, child: Expr, parts: list, value, names) -> dict:
    """The step of the local derivative d node / d child: the sum of its ``parts``
    (one for each place ``child`` is an argument), simplified."""
    total = parts[0]
    for p in parts[1:]:
        total = builder.apply("add", (total, p))
    alg = Algebra()
    step = {
        "kind": "local",
        "of": names[id(node)],
        "wrt": names[id(child)],
        "expr": to_text(alg.to_expr(alg.from_expr(total))),
        "value": value,
    }
    return {**step, "text": local_text(step)}


def _accumulate_steps(walk: _Walk, backward: list) -> dict[int, float]:
    """Backward: the total derivative of the output with respect to each node (returned,
    by id), and the step that sums each node's terms where there is more than one."""
    output, names = walk.output, walk.names
    out_name = walk.out_name
    adjoint: dict[int, float] = {id(output): 1.0}
    accumulated = 0
    for node in backward:
        if id(node) == id(output) or not walk.depends[id(node)] or id(node) not in walk.users:
            continue
        terms = []
        total = 0.0
        for parent in walk.users[id(node)]:
            if id(parent) not in adjoint:
                continue
            g = adjoint[id(parent)]
            d = walk.local_value[(id(parent), id(node))]
            contribution = 0.0 if g == 0 else g * d  # an exactly-zero cotangent stays zero
            total += contribution
            pname, cname = names[id(parent)], names[id(node)]
            terms.append(
                {
                    "via": pname,
                    "adjoint": d_label(out_name, pname),
                    "local": d_label(pname, cname),
                    "adjoint_value": g,
                    "local_value": d,
                    "value": contribution,
                    "direct": parent is output,
                }
            )
        adjoint[id(node)] = total
        if not terms:
            continue
        if len(terms) == 1 and terms[0]["direct"]:
            continue  # dy/dc is the local derivative itself, already listed
        if node.op != "var":
            if accumulated >= walk.cap:
                walk.elided["accumulate"] += 1
                continue
            accumulated += 1
        walk.steps.append(_accumulate_step(out_name, names[id(node)], terms, total, walk.cap))
    return adjoint


def _accumulate_step(out_name: str, target: str, terms: list, total: float, cap: float) -> dict:
    """The step dy/d target = the sum of ``terms``.  A direct use by the output contributes
    its local partial, written with ∂ so that it does not read as the total being defined."""
    more = len(terms) - cap if len(terms) > cap else 0
    if more:  # a node with thousands of users: list the first terms, count the rest
        terms = terms[: int(cap)]
    formula = " + ".join(
        f"∂{out_name}/∂{target}" if t["direct"] else f"{t['adjoint']}*{t['local']}" for t in terms
    ) + (f" + ... ({more:,} more terms)" if more else "")
    step = {
        "kind": "accumulate",
        "of": out_name,
        "wrt": target,
        "terms": terms,
        **({"more_terms": more} if more else {}),
        "formula": f"{d_label(out_name, target)} = {formula}",
        "value": total,
    }
    text = accumulate_text(step)
    value = step.pop("value")
    return {**step, "numbers": accumulate_numbers(step), "value": value, "text": text}


def _gradient(walk: _Walk, order: list, wanted, adjoint: dict) -> tuple[dict, dict]:
    """Each variable asked about: its gradient and the paths from the output to it."""
    output = walk.output
    gradient = {}
    var_nodes = {n.name: n for n in order if n.op == "var"}
    paths: dict = {}
    for name in wanted:
        leaf = var_nodes.get(name)
        if leaf is None:  # bound by a statement whose result the output does not use
            gradient[name], paths[name] = 0.0, []
            continue
        gradient[name] = adjoint.get(id(leaf), 0.0) if leaf is not output else 1.0
        paths[name] = _paths(output, leaf, walk.users, walk.local_value, walk.names)
    return gradient, paths


def _numeric_vjp(node: Expr, tensors: dict, needs: tuple) -> list:
    """The local partials of ``node`` at the point, by the op table's vjp on the engine's tensors."""
    op = OPS[node.op]
    flags = op.flags(len(node.args))
    needs = tuple(bool(n and f) for n, f in zip(needs, flags))
    ins = tuple(tensors[id(a)] for a in node.args)
    with no_grad():
        grads = op.vjp(RuleContext(op, ins, tensors[id(node)], node.attrs, needs), Tensor(1.0))
    return [None if (g is None or not n) else g.item() for g, n in zip(grads, needs)]


def _paths(output: Expr, leaf: Expr, users: dict, local_value: dict, names: dict):
    """Every path output -> ... -> leaf with its product of local derivatives (None if too many)."""
    if leaf is output:
        return [{"path": [names[id(leaf)]], "factors": [], "value": 1.0}]
    # Count first (paths can be exponentially many), then list them.
    count: dict[int, int] = {id(leaf): 1}
    order = [leaf]
    seen = {id(leaf)}
    i = 0
    while i < len(order):  # every node above the leaf, breadth first
        for p in users.get(id(order[i]), []):
            if id(p) not in seen:
                seen.add(id(p))
                order.append(p)
        i += 1
    for node in topological([output]):
        if id(node) in seen and node is not leaf:
            count[id(node)] = sum(
                count.get(id(a), 0) for a in _unique(node.args) if (id(node), id(a)) in local_value
            )
    if count.get(id(output), 0) > MAX_PATHS:
        return None
    # Depth first, each partial path a link to the one it extends (node, factor, previous):
    # copying the path at every step would make one path of a chain n deep cost n^2.
    found: list[dict] = []
    stack: list[tuple] = [(output, None, None)]
    while stack:
        link = stack.pop()
        node = link[0]
        if node is leaf:
            path, factors = [], []
            while link is not None:
                path.append(names[id(link[0])])
                if link[2] is not None:
                    factors.append(link[1])
                link = link[2]
            path.reverse()
            factors.reverse()
            value = 1.0
            for f in factors:
                value = 0.0 if value == 0 else value * f
            found.append({"path": path, "factors": factors, "value": value})
            continue
        for a in reversed(_unique(node.args)):
            if count.get(id(a)) and (id(node), id(a)) in local_value:
                stack.append((a, local_value[(id(node), id(a))], link))
    return found


def _scalar_walk(node: Expr) -> bool:
    """Whether the scalar walk takes ``node``: elementwise ops of numbers (array literals
    and every other op take the array walk)."""
    if node.op == "const":
        return not isinstance(node.value, (list, tuple))
    return node.op == "var" or _supported(node.op)


__all__ = [
    "explain",
    "Explanation",
    "format_value",
    "d_label",
    "factor_text",
    "local_text",
    "accumulate_text",
    "accumulate_numbers",
    "GRAD",
]
