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
its ``vjp`` (see :func:`_rule`); the numbers are the engine's: each node's
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

from . import backend
from .autograd import enable_grad
from .autograd import grad as engine_grad
from .errors import NonScalarOutputError
from .expr import derivative_warnings, evaluate
from .interpret import Dependence, interpret
from .ops import FUNCTIONS, RuleContext
from .printing import to_text
from .program import CONSTANTS, Expr, Program, topological, wrt_names
from .symbolic import Algebra, Builder, UnsupportedDiffError, _supported, local_vjp
from .tensor import OPS, Tensor, no_grad

# Automatic names: short letters first (skipping e, the constant; d, which would
# read as "dd/dc"; and letters that read as indices or look like digits), then t1, t2, ...
AUTO_NAMES = ("a", "b", "c", "f", "g", "h", "k", "m", "n", "p", "q", "r", "s", "u", "v")
OUTPUT_NAMES = ("y", "f", "z", "out")
MAX_STEPS = 100  # steps of each kind listed (the rest counted in Explanation.elided)
MAX_PATHS = 16  # paths are listed one by one up to this many per variable


def format_value(v: float) -> str:
    """A number for the explanation's text: ``5``, ``0.5``, ``-1.41421``, ``inf``."""
    if v != v:
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if float(v).is_integer() and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.6g}"


def factor_text(v: float) -> str:
    """A number as a factor of a product: negative ones in parentheses, ``2*(-1)``."""
    s = format_value(v)
    return f"({s})" if s.startswith("-") else s


@dataclass(frozen=True)
class Explanation:
    """The chain rule for one program at one point; see the module docstring.

    Plain data: numbers stay floats (nan and inf included).  The command line renders it
    (``autograd_cli.cli.render.explain_text`` and ``explain_json``, SPEC's document).
    """

    source: str
    output: str  # the output's name
    wrt: list  # the variables differentiated against
    point: dict  # variable -> value
    value: float  # the output's value
    steps: list = field(default_factory=list)  # dicts: define / local / accumulate
    gradient: dict = field(default_factory=dict)  # variable -> d(output)/d(variable)
    paths: dict = field(default_factory=dict)  # variable -> list of paths, or None
    elided: dict = field(default_factory=dict)  # kind -> steps computed but not listed
    # The array walk (see the module docstring) fills these: each variable's shape (and the
    # output's), and the warnings grad gives at this point.
    arrays: bool = False
    shapes: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)


def d_label(of: str, wrt: str) -> str:
    """The derivative's name: ``dy/da``."""
    return f"d{of}/d{wrt}"


def _names(order: list[Expr], output: Expr, inputs: Sequence[str]) -> tuple[dict, set]:
    """A name for every intermediate: the user's label, else an automatic one."""
    taken = set(inputs) | set(CONSTANTS) | set(FUNCTIONS)
    names: dict[int, str] = {}
    auto: set[int] = set()
    for node in order:
        if node.op == "var":
            assert node.name is not None  # a "var" node always has a name (Expr.var)
            names[id(node)] = node.name
        elif node.label and node.label not in taken:
            names[id(node)] = node.label
            taken.add(node.label)
    pool = iter(AUTO_NAMES)
    counter = 0

    def fresh(candidates=()):
        nonlocal counter
        for c in candidates:
            if c not in taken:
                return c
        for c in pool:
            if c not in taken:
                return c
        while True:
            counter += 1
            if f"t{counter}" not in taken:
                return f"t{counter}"

    if id(output) not in names and output.op != "const":
        names[id(output)] = fresh(OUTPUT_NAMES)
        taken.add(names[id(output)])
        auto.add(id(output))
    for node in order:
        if id(node) in names or node.op in ("const", "var"):
            continue
        names[id(node)] = fresh()
        taken.add(names[id(node)])
        auto.add(id(node))
    return names, auto


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
    wanted = wrt_names(program, wrt)

    order = topological([output])
    if not all(_scalar_walk(node) for node in order):
        return _explain_arrays(program, values, wanted, max_steps, order)

    # Forward: every node's value, by the engine (the variables asked about are bound even
    # where the output does not reach them: their gradient is zero).
    with no_grad():
        ev = evaluate(program, values, requires_grad=wanted, check_domain=False)
    if any(t.size != 1 for t in ev.leaves.values()):
        return _explain_arrays(program, values, wanted, max_steps, order)
    tensors = ev.by_node
    point: dict[str, float] = {name: t.item() for name, t in ev.leaves.items()}

    # Which nodes depend on a variable at all (others are constants, shown inline),
    # and which on the variables asked about.
    depends, variable, names, auto = _walk_facts(program, order, wanted)
    out_name = names.get(id(output), "y")

    cap = max_steps or math.inf
    elided = {"define": 0, "local": 0, "accumulate": 0}
    steps: list[dict] = []
    for node in order:
        if node.op in ("const", "var") or id(node) not in names:
            continue
        if len(steps) >= cap:
            elided["define"] += 1
            continue
        steps.append(
            {
                "kind": "define",
                "name": names[id(node)],
                "expr": to_text(_shallow(node, names)),
                "value": tensors[id(node)].item(),
                "auto": id(node) in auto,
            }
        )

    # Local derivatives along every edge that leads to a variable asked about.
    builder = Builder()
    one_sym = builder.wrap(builder.const(1.0))
    local_value: dict[tuple, float] = {}
    users: dict[int, list] = {}  # child -> [parent, ...], the output's side first
    backward = _backward_order(output, order)
    listed = 0
    for node in backward:  # as the chain rule is read: dy/da, dy/db before da/dw
        if node.op in ("const", "var") or not depends[id(node)]:
            continue
        children = []
        for a in node.args:
            if depends[id(a)] and a not in children:
                children.append(a)
        needs = tuple(depends[id(a)] for a in node.args)
        num = _numeric_vjp(node, tensors, needs)
        shown = listed < cap
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
            local_value[(id(node), id(child))] = value
            users.setdefault(id(child), []).append(node)
            if not shown or listed >= cap:
                elided["local"] += 1
                continue
            listed += 1
            parts = [s for a, s in zip(node.args, sym) if a is child and s is not None]
            total = parts[0]
            for p in parts[1:]:
                total = builder.apply("add", (total, p))
            alg = Algebra()
            expr_text = to_text(alg.to_expr(alg.from_expr(total)))
            step = {
                "kind": "local",
                "of": names[id(node)],
                "wrt": names[id(child)],
                "expr": expr_text,
                "value": value,
            }
            steps.append({**step, "text": local_text(step)})

    # Backward: the total derivative of the output with respect to each node.
    adjoint: dict[int, float] = {id(output): 1.0}
    accumulated = 0
    for node in backward:
        if id(node) == id(output) or not depends[id(node)] or id(node) not in users:
            continue
        terms = []
        total = 0.0
        for parent in users[id(node)]:
            if id(parent) not in adjoint:
                continue
            g = adjoint[id(parent)]
            d = local_value[(id(parent), id(node))]
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
        target = names[id(node)]
        if len(terms) == 1 and terms[0]["direct"]:
            continue  # dy/dc is the local derivative itself, already listed
        if node.op != "var":
            if accumulated >= cap:
                elided["accumulate"] += 1
                continue
            accumulated += 1
        # A direct use by the output contributes its local partial, written with ∂
        # so that it does not read as the total being defined.
        more = len(terms) - cap if len(terms) > cap else 0
        if more:  # a node with thousands of users: list the first terms, count the rest
            terms = terms[: int(cap)]
        formula = " + ".join(
            f"∂{out_name}/∂{target}" if t["direct"] else f"{t['adjoint']}*{t['local']}"
            for t in terms
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
        steps.append({**step, "numbers": accumulate_numbers(step), "value": value, "text": text})

    gradient = {}
    var_nodes = {n.name: n for n in order if n.op == "var"}
    paths: dict = {}
    for name in wanted:
        leaf = var_nodes.get(name)
        if leaf is None:  # bound by a statement whose result the output does not use
            gradient[name], paths[name] = 0.0, []
            continue
        gradient[name] = adjoint.get(id(leaf), 0.0) if leaf is not output else 1.0
        paths[name] = _paths(output, leaf, users, local_value, names)
    return Explanation(
        program.source,
        out_name,
        wanted,
        point,
        tensors[id(output)].item(),
        steps,
        gradient,
        paths,
        {kind: n for kind, n in elided.items() if n},
    )


def local_text(step: dict, number=format_value) -> str:
    """A local step of the scalar walk as text: ``dy/da = b = 2`` (the value is left out
    where the expression is that number); ``number`` writes the numbers."""
    text = f"{d_label(step['of'], step['wrt'])} = {step['expr']}"
    if step["expr"] != format_value(step["value"]):
        text += f" = {number(step['value'])}"
    return text


def accumulate_numbers(step: dict, number=format_value) -> str:
    """The products of an accumulate step of the scalar walk: ``2*1 + 3*1``."""

    def factor(v: float) -> str:
        s = number(v)
        return f"({s})" if s.startswith("-") else s

    more = step.get("more_terms")
    return " + ".join(
        factor(t["local_value"])
        if t["direct"]
        else f"{factor(t['adjoint_value'])}*{factor(t['local_value'])}"
        for t in step["terms"]
    ) + (f" + ... ({more:,} more terms)" if more else "")


def accumulate_text(step: dict, number=format_value) -> str:
    """An accumulate step of the scalar walk as text:
    ``dy/dw = dy/da*da/dw + dy/db*db/dw = 2*1 + 3*1 = 5``."""
    numbers = accumulate_numbers(step, number)
    return f"{step['formula']} = {numbers} = {number(step['value'])}"


def _shallow(node: Expr, names: dict) -> Expr:
    """The node with its named arguments as variables: y = a*b."""
    return Expr(
        node.op,
        tuple(Expr.var(names[id(a)]) if id(a) in names else a for a in node.args),
        node.attrs,
    )


def _backward_order(output: Expr, order: list[Expr]) -> list[Expr]:
    """Every node after all of its users, the output first; ties in argument order (Kahn)."""
    users: dict[int, int] = {}
    for node in order:
        for a in _unique(node.args):
            users[id(a)] = users.get(id(a), 0) + 1
    out = [output]
    i = 0
    while i < len(out):
        for a in _unique(out[i].args):
            users[id(a)] -= 1
            if users[id(a)] == 0:
                out.append(a)
        i += 1
    return out


def _numeric_vjp(node: Expr, tensors: dict, needs: tuple) -> list:
    """The local partials of ``node`` at the point, by the op table's vjp on the engine's tensors."""
    op = OPS[node.op]
    flags = op.flags(len(node.args))
    needs = tuple(bool(n and f) for n, f in zip(needs, flags))
    ins = tuple(tensors[id(a)] for a in node.args)
    with no_grad():
        grads = op.vjp(RuleContext(op, ins, tensors[id(node)], node.attrs, needs), Tensor(1.0))
    return [None if (g is None or not n) else float(g.item()) for g, n in zip(grads, needs)]


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


def _unique(args) -> list:
    out: list[Expr] = []
    for a in args:
        if all(a is not b for b in out):
            out.append(a)
    return out


# ---------------------------------------------------------------------------
# The array walk: the chain rule as vector-Jacobian products
# ---------------------------------------------------------------------------

GRAD = "grad_"  # grad_n is d(output)/dn, an array of n's shape (PyTorch's n.grad)
MAX_RULE = 160  # a traced rule longer than this is written as "vjp of NAME applied to g"


def _scalar_walk(node: Expr) -> bool:
    """Whether the scalar walk takes ``node``: elementwise ops of numbers (array literals
    and every other op take the array walk)."""
    if node.op == "const":
        return not isinstance(node.value, (list, tuple))
    return node.op == "var" or _supported(node.op)


def _walk_facts(program: Program, order: list, wanted: list):
    """What both walks need of the program: which nodes depend differentiably on the
    variables asked about (``depends``), which on any variable at all (``variable``; the
    others are constants, shown inline), and the names of the nodes shown."""
    output = program.output
    depends = interpret(program, Dependence(wanted)).values
    variable: dict[int, bool] = {}
    for node in order:
        variable[id(node)] = node.op == "var" or any(variable[id(a)] for a in node.args)
    shown = [n for n in order if variable[id(n)] or n is output]
    names, auto = _names(shown, output, list(program.inputs))
    return depends, variable, names, auto


def _host(t: Tensor):
    """A tensor's value for the explanation: a float for a 0-d one, else a host array."""
    a = backend.to_numpy(t.data)
    return float(a) if a.ndim == 0 else a


def _explain_arrays(
    program: Program, values: dict, wanted: list, max_steps: int | None, order: list
) -> Explanation:
    """The chain rule over arrays: each node's value, each edge's vector-Jacobian product
    (the op table's vjp, applied to the node's gradient ``grad_n``) with its rule in words
    and as a formula, the sums where a node has several users, and the gradient.

    The gradient of every node is the engine's own (one ``grad`` call asked for all of
    them), so the numbers are ``grad``'s; each edge's share is the op's vjp at the point.
    """
    output = program.output
    with enable_grad():
        ev = evaluate(program, values, requires_grad=wanted)
    tensors = ev.by_node
    out = ev.output
    if out.size != 1:
        raise NonScalarOutputError(
            "explain walks the chain rule back from a scalar output (a loss), but this "
            f"output has shape {list(out.shape)}: explain one number of it, such as "
            'explain "sum(...)" or explain "(...)[0]"',
            shape=list(out.shape),
        )
    depends, variable, names, auto = _walk_facts(program, order, wanted)
    out_name = names.get(id(output), "y")

    # Every node's gradient, by the engine: one reverse sweep, asked for all of them.
    targets = [n for n in order if depends[id(n)] and tensors[id(n)].requires_grad]
    adjoint: dict[int, Tensor] = {}
    if out.requires_grad and targets:
        got = engine_grad(out, [tensors[id(n)] for n in targets], allow_unused=True)
        adjoint = {id(n): g for n, g in zip(targets, got) if g is not None}

    cap = max_steps or math.inf
    elided = {"define": 0, "local": 0, "accumulate": 0}
    steps: list[dict] = []
    defined = 0
    for node in order:
        if node.op in ("const", "var") or id(node) not in names:
            continue
        if defined >= cap:
            elided["define"] += 1
            continue
        defined += 1
        t = tensors[id(node)]
        steps.append(
            {
                "kind": "define",
                "name": names[id(node)],
                "expr": to_text(_shallow(node, names)),
                "value": _host(t),
                "auto": id(node) in auto,
                "shape": list(t.shape),
            }
        )

    # How many nodes pass each node a gradient: one with several gets their sum.
    users: dict[int, int] = {}
    for node in order:
        if node.op in ("const", "var") or not depends[id(node)]:
            continue
        flags = OPS[node.op].flags(len(node.args))
        for a in _unique([a for a, f in zip(node.args, flags) if f and depends[id(a)]]):
            users[id(a)] = users.get(id(a), 0) + 1

    terms: dict[int, list] = {}  # node -> what its users passed back (the first `cap`)
    counted: dict[int, int] = {}  # node -> how many users passed it a gradient
    listed = accumulated = 0
    for node in _backward_order(output, order):
        if not depends[id(node)]:
            continue
        if id(node) in counted and users.get(id(node), 0) > 1:
            if accumulated >= cap:
                elided["accumulate"] += 1
            else:
                accumulated += 1
                total = adjoint.get(id(node))
                more = counted[id(node)] - len(terms[id(node)])
                steps.append(
                    {
                        "kind": "accumulate",
                        "of": out_name,
                        "wrt": names[id(node)],
                        "terms": terms[id(node)],
                        **({"more_terms": more} if more else {}),
                        "formula": f"{GRAD}{names[id(node)]} = "
                        + " + ".join(
                            f"{GRAD}{names[id(node)]} from {t['via']}" for t in terms[id(node)]
                        )
                        + (f" + ... ({more:,} more terms)" if more else ""),
                        "value": _host(total) if total is not None else 0.0,
                    }
                )
            terms.pop(id(node), None)
        g = adjoint.get(id(node))
        if node.op in ("const", "var") or g is None:
            continue
        op = OPS[node.op]
        flags = op.flags(len(node.args))
        needs = tuple(bool(f and depends[id(a)]) for a, f in zip(node.args, flags))
        ins = tuple(tensors[id(a)] for a in node.args)
        token = backend.quiet_enter()  # the engine runs every rule with these IEEE semantics
        try:
            with no_grad():
                grads = op.vjp(RuleContext(op, ins, tensors[id(node)], node.attrs, needs), g)
        finally:
            backend.quiet_exit(token)
        for child in _unique([a for a, n in zip(node.args, needs) if n]):
            parts = [gi for a, gi, n in zip(node.args, grads, needs) if a is child and n]
            parts = [p for p in parts if p is not None]
            if not parts:
                continue
            share = parts[0]
            for p in parts[1:]:
                share = share + p
            several = users.get(id(child), 0) > 1
            if several:
                counted[id(child)] = counted.get(id(child), 0) + 1
                kept = terms.setdefault(id(child), [])
                if len(kept) < cap:
                    kept.append({"via": names[id(node)], "value": _host(share)})
            if listed >= cap:
                elided["local"] += 1
                continue
            listed += 1
            rule, local_words, local, vjp = _rule(node, child, names, tensors, needs)
            step = {
                "kind": "local",
                "of": names[id(node)],
                "wrt": names[id(child)],
                "node": f"{names[id(node)]} = {to_text(_shallow(node, names))}",
                "op": op.name,
                "rule": rule,
                **({"local": local_words, "expr": local} if local is not None else {}),
                "vjp": f"{GRAD}{names[id(child)]} {'+=' if several else '='} {vjp}",
                "value": _host(share),
                "shape": list(tensors[id(child)].shape),
            }
            steps.append(step)

    gradient: dict = {}
    var_nodes = {n.name: n for n in order if n.op == "var"}
    for name in wanted:
        leaf = ev.leaves[name]
        node = var_nodes.get(name)
        g = adjoint.get(id(node)) if node is not None else None
        if g is None:
            a = backend.host.zeros(leaf.shape, dtype=backend.to_numpy(leaf.data).dtype)
        else:
            a = backend.to_numpy(g.data).reshape(leaf.shape)
        gradient[name] = float(a) if a.ndim == 0 else a
    shapes = {name: list(t.shape) for name, t in ev.leaves.items()}
    shapes.setdefault(out_name, list(out.shape))
    return Explanation(
        program.source,
        out_name,
        wanted,
        {name: _host(t) for name, t in ev.leaves.items()},
        out.item(),
        steps,
        gradient,
        {},
        {kind: n for kind, n in elided.items() if n},
        True,
        shapes,
        ev.warnings + derivative_warnings(output, ev),
    )


def _spelled(op) -> str:
    """How the language writes ``op``: its function's name, its operator, or what it is."""
    p = op.printing
    if p.names:
        return p.names[0]
    if p.call:
        return p.call
    if p.form == "subscript":
        return "indexing"
    if p.form == "array":
        return "an array literal"
    return p.symbol.strip() if p.symbol else op.name


_ELEMENTWISE = ("elementwise", "comparison", "constant")
_ELEMENTWISE_WORDS = "elementwise: the gradient times each element's local derivative"


def _rule(node: Expr, child: Expr, names: dict, tensors: dict, needs: tuple) -> tuple:
    """The edge node -> child in words: (the node's rule; for an elementwise op the local
    derivative in words and its expression, else None and None; the right-hand side of
    the vector-Jacobian product).

    What is said comes from the op's entry in the op table: its ``kind`` gives the words
    and its ``vjp`` the formula (symbolically for an elementwise op, by the same rule as
    the scalar walk; traced on placeholders for any other op, see :class:`_Sym`)."""
    op = OPS[node.op]
    p, c = names[id(node)], names[id(child)]
    g = GRAD + p
    shape = tuple(tensors[id(child)].shape)
    broadcast = shape != tuple(tensors[id(node)].shape)
    if op.kind in _ELEMENTWISE:
        local = _elementwise_local(node, child, names, needs)
        if local is not None:
            factor = local if _atomic(local) else f"({local})"
            rhs = g if local == "1" else f"-{g}" if local == "-1" else f"{g}*{factor}"
            words = f"d{p}/d{c} = {local}"
            if broadcast:
                rhs = f"sum({rhs})" if shape == () else f"sum_to({rhs}, {list(shape)})"
                words += f", summed over the axes broadcasting added to {c}"
            return _ELEMENTWISE_WORDS, words, local, rhs
    rhs, used = _traced_vjp(node, child, names, tensors, needs)
    copies = rhs is not None and not used - {"leaf", "broadcast_to", "reshape"}
    if rhs is None:
        rhs = f"vjp of {op.name} applied to {g}"
    spelled = _spelled(op)
    if op.kind == "reduction":
        axis = node.attrs.get("axis")
        over = "every element" if axis is None else f"axis {_attr_text(axis)}"
        words = (
            f"{spelled} reduces over {over}: each element of {c} feeds one element of {p}, "
            f"so {g} is copied back along the reduced axes"
        )
        if not copies:
            words += f" and multiplied by each element's partial d{p}/d{c}"
    elif op.kind == "product":
        words = f"{spelled} is linear in each argument: {g} is multiplied back by the other one"
    elif op.kind == "shape":
        back = f"{c}'s shape" if len(node.args) == 1 else "each argument's shape"
        words = f"{spelled} moves or combines elements: its vjp takes {g} back to {back}"
        if "scatter" in used:
            words += ", zero where nothing was taken (repeats add up)"
    elif op.kind in _ELEMENTWISE:
        words = _ELEMENTWISE_WORDS
    else:
        words = f"{spelled} ({op.kind}): its vector-Jacobian product"
    return words, None, None, rhs


def _atomic(text: str) -> bool:
    return text.replace("_", "").replace(".", "").isalnum()


def _attr_text(v) -> str:
    return str(list(v)) if isinstance(v, tuple) else str(v)


def _elementwise_local(node: Expr, child: Expr, names: dict, needs: tuple) -> str | None:
    """d node / d child of an elementwise op in terms of the names (the scalar walk's rule,
    from the op table's derivative); None where an argument has no symbolic form (an array
    literal)."""
    if any(a.op == "const" and isinstance(a.value, (list, tuple)) for a in node.args):
        return None  # symbolic rules take numbers: the traced rule writes the literal
    builder = Builder()
    one = builder.wrap(builder.const(1.0))
    args = tuple(Expr.var(names[id(a)]) if id(a) in names else a for a in node.args)
    try:
        sym = local_vjp(node, one, builder, inputs=args, out=Expr.var(names[id(node)]), needs=needs)
    except UnsupportedDiffError:
        return None
    parts = [s for a, s in zip(node.args, sym) if a is child and s is not None]
    if not parts:
        return None
    total = parts[0]
    for s in parts[1:]:
        total = builder.apply("add", (total, s))
    alg = Algebra()
    return to_text(alg.to_expr(alg.from_expr(total)))


class _Sym:
    """A placeholder an op's vjp runs on to write its rule down: the tree of calls the rule
    makes, and the shape of each value (rules read shapes; the shape of a call is its
    forward's on zeros).  Python numbers among the arguments stay numbers."""

    __slots__ = ("op", "args", "attrs", "shape", "text")
    maybe_zero = True  # the rules' zero guards take the general branch

    def __init__(self, op: str, args: tuple, attrs: dict, shape: tuple, text: str = ""):
        self.op, self.args, self.attrs, self.shape, self.text = op, args, attrs, shape, text

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def _call(self, name: str, *args, **attrs):
        return _trace(name, args, attrs)

    def __add__(self, o):
        return _trace("add", (self, o), {})

    def __radd__(self, o):
        return _trace("add", (o, self), {})

    def __sub__(self, o):
        return _trace("sub", (self, o), {})

    def __rsub__(self, o):
        return _trace("sub", (o, self), {})

    def __mul__(self, o):
        return _trace("mul", (self, o), {})

    def __rmul__(self, o):
        return _trace("mul", (o, self), {})

    def __truediv__(self, o):
        return _trace("div", (self, o), {})

    def __rtruediv__(self, o):
        return _trace("div", (o, self), {})

    def __pow__(self, o):
        return _trace("pow", (self, o), {})

    def __rpow__(self, o):
        return _trace("pow", (o, self), {})

    def __matmul__(self, o):
        return _trace("matmul", (self, o), {})

    def __rmatmul__(self, o):
        return _trace("matmul", (o, self), {})

    def __neg__(self):
        return _trace("neg", (self,), {})

    def __pos__(self):
        return self

    def __getitem__(self, index):
        return _trace(
            "getitem", (self,), {"index": index if isinstance(index, tuple) else (index,)}
        )

    @property
    def T(self):
        return _trace("transpose", (self,), {})

    @property
    def mT(self):
        return _trace("mT", (self,), {})


def _number(v, n) -> bool:
    return type(v) in (int, float) and v == n


def _trace(name: str, args: tuple, attrs: dict):
    """``name`` applied to placeholders: a :class:`_Sym` (x*1, x/1, x + 0 and a reshape
    to the same shape are left out, so the rule reads as written)."""
    if (
        name == "mul"
        and _number(args[1], 1)
        or name in ("div", "add", "sub")
        and (_number(args[1], 1 if name == "div" else 0))
    ):
        return args[0]
    if name in ("mul", "add") and _number(args[0], 1 if name == "mul" else 0):
        return args[1]
    if name in ("reshape", "broadcast_to", "sum_to") and tuple(attrs["shape"]) == args[0].shape:
        return args[0]
    xp = backend.host
    arrays = [xp.zeros(a.shape) if isinstance(a, _Sym) else a for a in args]
    with backend.using(device="cpu"), backend.quiet():
        shape = tuple(xp.shape(OPS[name].forward(*arrays, **attrs)))
    return _Sym(name, args, attrs, shape)


def _traced_vjp(node: Expr, child: Expr, names: dict, tensors: dict, needs: tuple) -> tuple:
    """The op's vjp for ``child`` as a formula of the names and the set of ops it uses, or
    (None, set()) where the rule does more than the placeholders can follow (it reads its
    operands' numbers) or reads too long."""
    op = OPS[node.op]
    ins = tuple(
        _Sym("leaf", (), {}, tuple(tensors[id(a)].shape), names.get(id(a)) or to_text(a))
        for a in node.args
    )
    shape = tuple(tensors[id(node)].shape)
    out = _Sym("leaf", (), {}, shape, names[id(node)])
    g = _Sym("leaf", (), {}, shape, GRAD + names[id(node)])
    try:
        with no_grad():
            grads = op.vjp(RuleContext(op, ins, out, node.attrs, needs), g)
        parts = [gi for a, gi, n in zip(node.args, grads, needs) if a is child and n]
        parts = [p for p in parts if p is not None]
        total = parts[0]
        for p in parts[1:]:
            total = _trace("add", (total, p), {})
        text = _sym_text(total)
    except Exception:  # noqa: BLE001 - any rule the placeholders cannot follow: the generic line
        return None, set()
    if len(text) > MAX_RULE:
        return None, set()
    used, stack = set(), [total]
    while stack:
        v = stack.pop()
        if isinstance(v, _Sym):
            used.add(v.op)
            stack.extend(v.args)
    return text, used


_INFIX = {"add": (" + ", 1), "sub": (" - ", 1), "mul": ("*", 2), "div": ("/", 2), "pow": ("**", 4)}


def _sym_text(v, level: int = 0) -> str:
    """A traced rule as text: infix arithmetic, ``Aᵀ``, ``A @ B``, ``a ⊗ b`` (a column times a
    row), other calls as calls.  A reshape that NumPy's reading makes implicit is left out
    (leading axes of length 1, which broadcasting adds; a vector as matmul's row or column),
    so the text means what it says in NumPy's terms: ``reshape(g, [2, 1])`` stays."""
    if not isinstance(v, _Sym):
        return format_value(float(v)) if isinstance(v, (int, float)) else str(v)
    if v.op == "leaf":
        return v.text
    a, op = v.args, v.op
    if op in _INFIX:
        symbol, own = _INFIX[op]
        left = _sym_text(a[0], own)
        right = _sym_text(a[1], own + 1)
        text = f"{left}{symbol}{right}"
        return f"({text})" if own < level else text
    if op == "neg":
        text = "-" + _sym_text(a[0], 3)
        return f"({text})" if level > 2 else text
    if op == "reshape" and (
        _strip_leading(a[0].shape) == _strip_leading(v.shape)  # broadcasting reads them alike
        or a[0].op == "matmul"  # and _squeezed(...) equal: the vectors matmul made matrices of
        and _squeezed(a[0].shape) == _squeezed(v.shape)
    ):
        return _sym_text(a[0], level)
    if op in ("mT", "transpose"):
        return _sym_text(a[0], 5) + "ᵀ"
    if op == "matmul":
        left, right = a
        column, row = _vector_of(left, -1), _vector_of(right, -2)
        if column is not None and row is not None:  # an outer product (a number: a product)
            times = "*" if column.shape == () or row.shape == () else " ⊗ "
            text = f"{_sym_text(column, 3)}{times}{_sym_text(row, 3)}"
        else:  # matmul takes a vector on the left as a row, on the right as a column
            left = _vector_of(left, -2) or left
            right = _vector_of(right, -1) or right
            text = f"{_sym_text(left, 3)} @ {_sym_text(right, 3)}"
        return f"({text})" if level > 2 else text
    if op == "getitem":
        return _sym_text(a[0], 5) + _index_text(v.attrs["index"])
    if op == "scatter":
        at = _index_text(v.attrs["index"])
        return f"scatter({_sym_text(a[0])}, at {at}, into zeros {list(v.attrs['shape'])})"
    shown = [_sym_text(x) for x in a]
    shown += [
        f"{k}={list(x) if isinstance(x, tuple) else x}" if k != "shape" else str(list(x))
        for k, x in v.attrs.items()
        if x is not None
    ]
    return f"{_spelled(OPS[op]) if OPS[op].printing.names else op}({', '.join(shown)})"


def _squeezed(shape: tuple) -> tuple:
    return tuple(s for s in shape if s != 1)


def _strip_leading(shape: tuple) -> tuple:
    shape = tuple(shape)
    while shape and shape[0] == 1:
        shape = shape[1:]
    return shape


def _vector_of(v, axis: int):
    """``x`` where ``v`` is a number or vector ``x`` reshaped to a column (``axis`` -1: shape
    (n, 1)) or a row (-2: (1, n)), as matmul takes a vector by itself; else None."""
    if not isinstance(v, _Sym) or len(v.shape) != 2 or v.shape[axis] != 1:
        return None
    if v.op in ("mT", "transpose"):  # the transpose of a row is a column, and back
        return _vector_of(v.args[0], -1 if axis == -2 else -2)
    if v.op == "reshape" and len(v.args[0].shape) <= 1:
        return v.args[0]
    return None


def _index_text(index) -> str:
    """``[0, :]``: the index as the language writes it."""
    return to_text(Expr("getitem", (Expr.var("x"),), {"index": index}))[1:]


__all__ = [
    "explain",
    "Explanation",
    "format_value",
    "d_label",
    "factor_text",
    "local_text",
    "accumulate_text",
    "accumulate_numbers",
]
