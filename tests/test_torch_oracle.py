"""PyTorch as an oracle: random computation graphs built in both engines, float64.

Every test takes the ``torch`` fixture (tests/conftest.py): it skips where torch is not
installed and fails where CI promised it (AUTOGRAD_CLI_REQUIRE_TORCH=1).

* ``test_random_graph_against_torch``: N_GRAPHS seeded random graphs (random.Random(seed),
  so the same graphs everywhere) of 3-12 ops over 1-3 leaves of shapes (), (3,), (2, 3) and
  (3, 3) that require grad.  Each step is drawn from ``SPECS``, the mapping from an op of our
  op table to the PyTorch function that computes the same thing, and is kept only where it is
  smooth with a margin (no kinks, ties, domain edges, overflow or heavy cancellation; see
  ``_admissible``), so that both engines must agree to rounding.  The graph is then built in
  both engines and compared: the forward value, the root's ``grad_fn`` name, the gradient of
  the output (of ``out.sum()`` for a non-scalar one) w.r.t. every leaf (None-ness included),
  a vector-Jacobian product with a random cotangent, and a Hessian-vector product
  (``create_graph=True``, then the grad of <grad, v> for a random v).
* ``test_kink_*``: the conventions at kinks and IEEE domain edges, compared with torch
  exactly (nan and inf positions included), first and second order; where the project
  departs from torch on purpose (README, "The expression language": ``max(x, c)`` against a
  constant gives the tie to the constant; ``where`` keeps the untaken branch's inf/nan out
  of the gradient) the documented behaviour is asserted instead.
"""

from __future__ import annotations

import operator
import random
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest

from autograd_cli.core import OPS, Tensor, apply, grad, no_grad, tensor
from autograd_cli.core.errors import ShapeError
from autograd_cli.core.recording import evaluate
from autograd_cli.grammar import parse

N_GRAPHS = 400
LEAF_SHAPES = [(), (3,), (2, 3), (3, 3)]
MARGIN = 1e-2  # distance kept from kinks, ties and domain edges
BOUND = 1e3  # |value| of every node stays below this
CANCEL = 0.05  # a sum keeps at least this fraction of the sum of its terms' magnitudes

# Tolerances (float64).  The engines use different libm/SIMD kernels (NumPy vs SLEEF), so
# each op may differ in the last bit or two; the cancellation guard keeps the amplification of
# those bits small.  |ours - torch| <= RTOL * (|torch| + max(1, max|torch|)).
# Over 3000 seeds the largest errors seen were 1.6e-15 (values), 3.6e-15 (gradients and vjps)
# and 3.1e-14 (Hessian-vector products), so these leave a margin of 30x or more for other
# machines' kernels while a rule off by one part in 1e4 fails by eight orders of magnitude.
RTOL_VALUE = 1e-13
RTOL_GRAD = 1e-12
RTOL_HVP = 1e-12


# ---------------------------------------------------------------------------
# The mapping table: our op -> the PyTorch function for the same thing.
# A step is (key, args, attrs); an arg is ("v", i) for node i or ("c", number) for a
# Python constant.  ``ours(*args, **attrs)`` takes our Tensors, ``theirs(torch, *args,
# **attrs)`` torch tensors.  ``names_match(step, torch_args)`` says whether the root's
# grad_fn names are meant to agree (the exceptions are listed above _reshape_names_match).
# ---------------------------------------------------------------------------


def _always(step, targs):
    return True


@dataclass(frozen=True)
class Spec:
    kind: str
    ours: Callable
    theirs: Callable
    names_match: Callable = _always


def _unary(name, torch_fn=None):
    return Spec(
        "unary", lambda x: apply(OPS[name], x), torch_fn or (lambda t, x: getattr(t, name)(x))
    )


def _const_first(step):
    return step[1][0][0] == "c"


def _reduce_ours(name):
    return lambda x, axis=None, keepdims=False: apply(OPS[name], x, axis=axis, keepdims=keepdims)


def _reduction(name, full, partial, names_match=_always):
    """Ours: the op with ``axis``/``keepdims``; torch: ``full(t, x)`` without an axis, else
    ``partial(t, x, dim, keepdim)``."""

    def theirs(t, x, axis=None, keepdims=False):
        return full(t, x) if axis is None else partial(t, x, axis, keepdims)

    return Spec("reduce", _reduce_ours(name), theirs, names_match)


def _where_ours(cmp):
    return lambda a, b, x, y: apply(OPS["where"], cmp(a, b), x, y)


def _where_theirs(cmp):
    return lambda t, a, b, x, y: t.where(cmp(a, b), x, y)


# Root grad_fn names: ours claim to be PyTorch's (core/ops.py, the ``node`` field), except
# for these, where torch records a different op for the same mathematics:
#   * ``c - x`` with a Python number c: torch runs rsub (RsubBackward1), ours sub.
#   * ``c / x`` with a Python number c: torch runs reciprocal(x) * c (MulBackward0), ours div.
#   * reshape of a non-contiguous tensor (after transpose, mT or a strided slice): torch copies
#     first (UnsafeViewBackward0), ours is always a view (ViewBackward0).
#   * an index mixing integers and slices (``A[1, 0:2]``, ``A[:, 1]``): torch applies
#     select/slice one dimension at a time and names the last one (SliceBackward0 or
#     SelectBackward0); ours names the whole indexing IndexBackward0.
#   * a slice covering a whole dimension (``x[0:3]`` of a (3,), ``x[:]``): torch makes an alias
#     (AliasBackward0) or skips it; ours is SliceBackward0.
#   * norm: torch 2.x records LinalgVectorNormBackward0; ours keeps the older NormBackward1.
#   * matmul with a batch dimension: see _matmul_names_match.


def _reshape_names_match(step, targs):
    return targs[0].is_contiguous()


def _getitem_names_match(step, targs):
    index = step[2]["index"]
    if all(isinstance(i, int) for i in index):
        return True
    shape = targs[0].shape
    return all(isinstance(i, slice) and i.indices(n) != (0, n, 1) for i, n in zip(index, shape))


def _matmul_names_match(step, targs):
    # Batched products (an operand of 3 dims): torch picks among Bmm/UnsafeView/Expand
    # variants by stride layout; ours says UnsafeViewBackward0.  Only 1-D/2-D are compared.
    return all(a.dim() <= 2 for a in targs)


SPECS: dict[str, Spec] = {
    **{
        name: _unary(name)
        for name in (
            "sin",
            "cos",
            "tan",
            "tanh",
            "sigmoid",
            "exp",
            "log",
            "log2",
            "log10",
            "sqrt",
            "abs",
            "relu",
            "asin",
            "acos",
            "atan",
            "sinh",
            "cosh",
            "asinh",
            "acosh",
            "atanh",
            "sign",
            "floor",
            "ceil",
            "round",
        )
    },
    "softplus": _unary("softplus", lambda t, x: t.nn.functional.softplus(x)),
    "erfcx": _unary("erfcx", lambda t, x: t.special.erfcx(x)),
    # issue 27's (torch's bessel_j0/j1 have no derivative: JAX's is tested in test_ops_gradcheck)
    "sinc": _unary("sinc"),
    "i0": _unary("i0", lambda t, x: t.special.i0(x)),
    "i0e": _unary("i0e", lambda t, x: t.special.i0e(x)),
    "i1": _unary("i1", lambda t, x: t.special.i1(x)),
    "i1e": _unary("i1e", lambda t, x: t.special.i1e(x)),
    "neg": Spec("unary", lambda x: -x, lambda t, x: -x),
    "add": Spec("binary", operator.add, lambda t, a, b: a + b),
    "sub": Spec(
        "binary", operator.sub, lambda t, a, b: a - b, lambda step, targs: not _const_first(step)
    ),
    "mul": Spec("binary", operator.mul, lambda t, a, b: a * b),
    "div": Spec(
        "binary",
        operator.truediv,
        lambda t, a, b: a / b,
        lambda step, targs: not _const_first(step),
    ),
    "pow": Spec("binary", operator.pow, lambda t, a, b: a**b),
    "maximum": Spec(
        "binary", lambda a, b: apply(OPS["maximum"], a, b), lambda t, a, b: t.maximum(a, b)
    ),
    "minimum": Spec(
        "binary", lambda a, b: apply(OPS["minimum"], a, b), lambda t, a, b: t.minimum(a, b)
    ),
    # max(x, c)/min(x, c) against a constant: torch.clamp_min/clamp_max (away from the bound;
    # at the bound see test_kink_clamp_at_the_bound).
    "clamp_min": Spec(
        "clamp", lambda a, c: apply(OPS["clamp_min"], a, c), lambda t, a, c: t.clamp_min(a, c)
    ),
    "clamp_max": Spec(
        "clamp", lambda a, c: apply(OPS["clamp_max"], a, c), lambda t, a, c: t.clamp_max(a, c)
    ),
    "matmul": Spec("matmul", operator.matmul, lambda t, a, b: a @ b, _matmul_names_match),
    "logaddexp": Spec(
        "binary", lambda a, b: apply(OPS["logaddexp"], a, b), lambda t, a, b: t.logaddexp(a, b)
    ),
    "dot": Spec("dot", lambda a, b: apply(OPS["dot"], a, b), lambda t, a, b: t.dot(a, b)),
    "sum": _reduction("sum", lambda t, x: x.sum(), lambda t, x, d, k: x.sum(dim=d, keepdim=k)),
    "mean": _reduction("mean", lambda t, x: x.mean(), lambda t, x, d, k: x.mean(dim=d, keepdim=k)),
    "prod": _reduction("prod", lambda t, x: x.prod(), lambda t, x, d, k: x.prod(dim=d, keepdim=k)),
    # Full max/min: torch.max(x) (MaxBackward1, as ours); along an axis torch.amax.
    "amax": _reduction(
        "amax", lambda t, x: x.max(), lambda t, x, d, k: t.amax(x, dim=d, keepdim=k)
    ),
    "amin": _reduction(
        "amin", lambda t, x: x.min(), lambda t, x, d, k: t.amin(x, dim=d, keepdim=k)
    ),
    "norm": _reduction(
        "norm",
        lambda t, x: t.linalg.vector_norm(x),
        lambda t, x, d, k: t.linalg.vector_norm(x, dim=d, keepdim=k),
        names_match=lambda step, targs: False,
    ),
    "transpose": Spec(
        "transpose",
        lambda x, axes=None: x.T if axes is None else apply(OPS["transpose"], x, axes=axes),
        lambda t, x, axes=None: x.T if axes is None else t.permute(x, axes),
    ),
    # issue 27: NumPy's cross of 3-vectors, torch.linalg.cross
    "cross": Spec(
        "cross", lambda a, b: apply(OPS["cross"], a, b), lambda t, a, b: t.linalg.cross(a, b)
    ),
    "mT": Spec("mT", lambda x: x.mT, lambda t, x: x.mT),
    "reshape": Spec(
        "reshape",
        lambda x, shape: x.reshape(shape),
        lambda t, x, shape: x.reshape(shape),
        _reshape_names_match,
    ),
    "broadcast_to": Spec(
        "broadcast_to",
        lambda x, shape: apply(OPS["broadcast_to"], x, shape=shape),
        lambda t, x, shape: t.broadcast_to(x, shape),
    ),
    "getitem": Spec(
        "getitem", lambda x, index: x[index], lambda t, x, index: x[index], _getitem_names_match
    ),
    "stack": Spec("stack", lambda *xs: apply(OPS["stack"], *xs), lambda t, *xs: t.stack(xs)),
    "where_gt": Spec("where", _where_ours(operator.gt), _where_theirs(operator.gt)),
    "where_lt": Spec("where", _where_ours(operator.lt), _where_theirs(operator.lt)),
    "where_ge": Spec("where", _where_ours(operator.ge), _where_theirs(operator.ge)),
    "where_le": Spec("where", _where_ours(operator.le), _where_theirs(operator.le)),
}

# How often each kind is drawn (relative weights).
KIND_WEIGHTS = {
    "unary": 8,
    "binary": 7,
    "clamp": 1,
    "matmul": 2,
    "dot": 0.5,
    "reduce": 3,
    "transpose": 0.7,
    "mT": 0.5,
    "reshape": 1,
    "broadcast_to": 0.5,
    "getitem": 1.5,
    "stack": 0.5,
    "where": 1.5,
    "cross": 0.3,
}
CONSTANTS = {
    "add": (0.5, -1.5, 3.0),
    "sub": (0.5, -1.5, 3.0),
    "mul": (2.0, -0.5, 1.5),
    "div": (2.0, -3.0, 0.5),
    # exponents (x ** c) and bases (c ** x)
    "pow_exp": (2, 3, 2.0, 0.5, -1.0, 1.5, -0.5),
    "pow_base": (2.0, 0.5, 1.5),
    "clamp": (0.0, 0.5, -1.0, 1.0),
    "where": (0.0, 1.0, -0.5),
}


# ---------------------------------------------------------------------------
# The generator
# ---------------------------------------------------------------------------


@dataclass
class Graph:
    seed: int
    leaves: list  # float64 arrays
    steps: list = field(default_factory=list)  # (key, args, attrs)

    def describe(self) -> str:
        lines = [f"graph seed {self.seed}:"]
        for i, v in enumerate(self.leaves):
            text = np.array2string(v, precision=17, separator=", ")
            lines.append(f"  v{i} = leaf {v.shape} {text}")
        for j, (key, args, attrs) in enumerate(self.steps):
            a = ", ".join(f"v{x}" if k == "v" else repr(x) for k, x in args)
            extra = "".join(f", {k}={v!r}" for k, v in attrs.items())
            lines.append(f"  v{len(self.leaves) + j} = {key}({a}{extra})")
        return "\n".join(lines)


def _arg_value(values, arg):
    kind, x = arg
    return values[x] if kind == "v" else x


def _np(x):
    return x.numpy() if isinstance(x, Tensor) else np.asarray(x, dtype=np.float64)


def _gap_ok(a, b):
    with np.errstate(all="ignore"):
        return bool((np.abs(_np(a) - _np(b)) > MARGIN).all())


def _no_near_ties(x, axis):
    """Along ``axis`` (everything for None), the two largest and the two smallest differ."""
    x = _np(x)
    flat = x.reshape(-1) if axis is None else np.moveaxis(x, axis, -1)
    if flat.shape[-1] < 2:
        return True
    s = np.sort(flat, axis=-1)
    return bool((s[..., -1] - s[..., -2] > MARGIN).all() and (s[..., 1] - s[..., 0] > MARGIN).all())


def _admissible(key, args, attrs, inputs, out) -> bool:
    """The step is smooth, with a margin, at these values: both engines must agree to rounding."""
    o = _np(out)
    if o.size == 0 or not np.isfinite(o).all() or np.abs(o).max() > BOUND:
        return False
    x = [_np(v) for v in inputs]
    if key in ("log", "log2", "log10", "sqrt"):
        return bool((x[0] > 0.05).all())
    if key in ("asin", "acos"):
        return bool((np.abs(x[0]) < 0.9).all())
    if key == "tan":
        return bool((np.abs(np.cos(x[0])) > 0.3).all())
    if key in ("abs", "relu", "sign"):
        return bool((np.abs(x[0]) > MARGIN).all())
    if key in ("floor", "ceil"):
        return bool((np.abs(x[0] - np.round(x[0])) > MARGIN).all())
    if key == "round":
        return bool((np.abs(x[0] - np.floor(x[0]) - 0.5) > MARGIN).all())
    if key in ("exp", "sinh", "cosh"):
        return bool((np.abs(x[0]) < 6).all())
    if key == "erfcx":  # its derivative 2 x erfcx(x) - 2/sqrt(pi) cancels for large x
        return bool((np.abs(x[0]) < 3).all())
    if key in ("sinc", "i0e", "i1e"):  # sinc' cancels near 0; i0e's corner, i1e's 1/x there
        return bool((np.abs(x[0]) > 0.1).all())
    if key == "softplus":  # torch returns x itself above its threshold 20
        return bool((x[0] < 15).all())
    if key in ("add", "sub"):
        with np.errstate(all="ignore"):
            return bool((np.abs(o) >= CANCEL * (np.abs(x[0]) + np.abs(x[1]))).all())
    if key == "div":
        return bool((np.abs(x[1]) > 0.2).all())
    if key == "pow":
        base, expo = x
        if args[1][0] == "c" and float(expo) == int(expo) and expo > 0:
            return True
        return bool((base > 0.1).all() and (np.abs(expo) < 3).all())
    if key in ("maximum", "minimum", "clamp_min", "clamp_max"):
        return _gap_ok(x[0], x[1])
    if key.startswith("where_"):
        return _gap_ok(x[0], x[1])
    if key in ("amax", "amin"):
        return _no_near_ties(x[0], attrs.get("axis"))
    if key in ("sum", "mean"):
        axis = attrs.get("axis")
        terms = np.abs(x[0]).sum(axis=axis, keepdims=attrs.get("keepdims", False))
        return bool((np.abs(o) >= CANCEL * terms).all())
    if key == "norm":
        return bool((o > 0.1).all())
    if key in ("matmul", "dot"):
        return bool((np.abs(o) >= CANCEL * (np.abs(x[0]) @ np.abs(x[1]))).all())
    return True


def _reshape_targets(shape):
    size = int(np.prod(shape))
    targets = {
        1: [(), (1,), (1, 1)],
        2: [(2,), (1, 2), (2, 1)],
        3: [(3,), (1, 3), (3, 1)],
        4: [(4,), (2, 2)],
        6: [(6,), (2, 3), (3, 2), (1, 6)],
        9: [(9,), (3, 3), (1, 9)],
        12: [(12,), (3, 4), (2, 6), (2, 2, 3)],
        18: [(18,), (2, 9), (3, 6), (2, 3, 3)],
    }
    return [t for t in targets.get(size, [(size,)]) if t != tuple(shape)]


def _index_for(rng, shape):
    def one(n):
        r = rng.random()
        if r < 0.4:
            return rng.randrange(-n, n)
        if r < 0.55 and n > 1:
            return slice(None, None, 2)
        if r < 0.7:
            return slice(None)
        a = rng.randrange(0, n)
        return slice(a, rng.randrange(a + 1, n + 1))

    if len(shape) == 1:
        return (one(shape[0]),)
    if len(shape) == 2 and rng.random() < 0.3:
        return (rng.randrange(-shape[0], shape[0]),)
    return tuple(one(n) for n in shape)


def _broadcast_targets(shape):
    options = {
        (): [(3,), (2, 3)],
        (1,): [(3,), (2, 3)],
        (3,): [(2, 3), (3, 3)],
        (1, 3): [(3, 3), (2, 3)],
        (3, 1): [(3, 3), (3, 2)],
        (2, 1): [(2, 3)],
        (1, 1): [(2, 3)],
    }
    return options.get(tuple(shape), [])


def _propose(rng, kind, values, nleaves):
    """One candidate step of ``kind``: (key, args, attrs), or None."""

    def pick():
        # Mostly build on the newest nodes, so the graph grows deep rather than wide.
        n = len(values)
        if n > nleaves and rng.random() < 0.6:
            return rng.randrange(max(nleaves, n - 2), n)
        return rng.randrange(n)

    a = pick()
    shape_a = values[a].shape
    ndim = len(shape_a)
    if kind == "unary":
        key = rng.choice([k for k, s in SPECS.items() if s.kind == "unary"])
        return key, [("v", a)], {}
    if kind == "binary":
        key = rng.choice(["add", "sub", "mul", "div", "pow", "maximum", "minimum", "logaddexp"])
        if key in ("maximum", "minimum", "logaddexp") or rng.random() < 0.6:
            b = pick() if rng.random() < 0.7 else rng.randrange(len(values))
            args = [("v", a), ("v", b)]
            if rng.random() < 0.5:
                args.reverse()
            return key, args, {}
        if key == "pow":
            if rng.random() < 0.7:
                return key, [("v", a), ("c", rng.choice(CONSTANTS["pow_exp"]))], {}
            return key, [("c", rng.choice(CONSTANTS["pow_base"])), ("v", a)], {}
        c = ("c", rng.choice(CONSTANTS[key]))
        return key, ([("v", a), c] if rng.random() < 0.5 else [c, ("v", a)]), {}
    if kind == "clamp":
        key = rng.choice(["clamp_min", "clamp_max"])
        return key, [("v", a), ("c", rng.choice(CONSTANTS["clamp"]))], {}
    if kind == "matmul":
        if ndim == 0:
            return None
        b = rng.randrange(len(values))
        return "matmul", ([("v", a), ("v", b)] if rng.random() < 0.5 else [("v", b), ("v", a)]), {}
    if kind == "dot":
        if shape_a != (3,):
            return None
        return "dot", [("v", a), ("v", rng.randrange(len(values)))], {}
    if kind == "reduce":
        key = rng.choice(["sum", "mean", "prod", "amax", "amin", "norm"])
        if ndim == 0 or rng.random() < 0.4:
            return key, [("v", a)], {"axis": None, "keepdims": False}
        axis = rng.choice(list(range(ndim)) + [-1])
        return key, [("v", a)], {"axis": axis, "keepdims": rng.random() < 0.3}
    if kind == "transpose":
        if ndim >= 2 and rng.random() < 0.4:  # transpose(x, axes), torch.permute
            return "transpose", [("v", a)], {"axes": tuple(rng.sample(range(ndim), ndim))}
        return ("transpose", [("v", a)], {}) if ndim == 2 else None
    if kind == "cross":
        if shape_a[-1:] != (3,):
            return None
        same = [i for i, v in enumerate(values) if v.shape == shape_a]
        return "cross", [("v", a), ("v", rng.choice(same))], {}
    if kind == "mT":
        return ("mT", [("v", a)], {}) if ndim >= 2 else None
    if kind == "reshape":
        targets = _reshape_targets(shape_a)
        return ("reshape", [("v", a)], {"shape": rng.choice(targets)}) if targets else None
    if kind == "broadcast_to":
        targets = _broadcast_targets(shape_a)
        return ("broadcast_to", [("v", a)], {"shape": rng.choice(targets)}) if targets else None
    if kind == "getitem":
        return ("getitem", [("v", a)], {"index": _index_for(rng, shape_a)}) if ndim else None
    if kind == "stack":
        if ndim > 2:
            return None
        same = [i for i, v in enumerate(values) if v.shape == shape_a]
        return "stack", [("v", a)] + [("v", rng.choice(same)) for _ in range(rng.randint(1, 2))], {}
    if kind == "where":
        cmp = rng.choice(["where_gt", "where_lt", "where_ge", "where_le"])
        const = lambda: ("c", rng.choice(CONSTANTS["where"]))  # noqa: E731
        args = [("v", a), ("v", pick()) if rng.random() < 0.6 else const()]
        x = ("v", pick())
        y = ("v", rng.randrange(len(values))) if rng.random() < 0.6 else const()
        return cmp, args + ([x, y] if rng.random() < 0.5 else [y, x]), {}
    raise AssertionError(kind)


def _leaf_value(rng, shape):
    n = int(np.prod(shape))
    positive = rng.random() < 0.4
    vals = [rng.uniform(0.1, 2.0) * (1 if positive or rng.random() < 0.5 else -1) for _ in range(n)]
    return np.asarray(vals, dtype=np.float64).reshape(shape)


def make_graph(seed: int) -> Graph:
    """A reproducible random graph of 3-12 admissible steps (evaluated with our engine)."""
    rng = random.Random(seed)
    leaves = [_leaf_value(rng, rng.choice(LEAF_SHAPES)) for _ in range(rng.randint(1, 3))]
    g = Graph(seed, leaves)
    values = [tensor(v) for v in leaves]
    target = rng.randint(3, 12)
    kinds, weights = zip(*KIND_WEIGHTS.items())
    tries = 0
    with no_grad():
        while len(g.steps) < target and tries < 2000:
            tries += 1
            step = _propose(rng, rng.choices(kinds, weights)[0], values, len(leaves))
            if step is None:
                continue
            key, args, attrs = step
            if not any(k == "v" for k, _ in args):
                continue
            inputs = [_arg_value(values, x) for x in args]
            try:
                out = SPECS[key].ours(*inputs, **attrs)
            except (ShapeError, TypeError, ValueError, IndexError):
                continue
            if not _admissible(key, args, attrs, inputs, out):
                continue
            g.steps.append(step)
            values.append(out)
    assert len(g.steps) >= 3, f"seed {seed}: the generator found too few admissible steps"
    return g


def build(graph: Graph, leaves, call):
    """Apply the steps to ``leaves`` with ``call(spec, inputs, attrs)``; all the nodes."""
    values = list(leaves)
    for key, args, attrs in graph.steps:
        values.append(call(SPECS[key], [_arg_value(values, a) for a in args], attrs))
    return values


# ---------------------------------------------------------------------------
# Comparison helpers
# ---------------------------------------------------------------------------


def _close(ours, theirs, rtol, what, graph):
    ours = np.asarray(ours, dtype=np.float64)
    theirs = np.asarray(theirs, dtype=np.float64)
    assert ours.shape == theirs.shape, (
        f"{what}: shape {ours.shape} != torch {theirs.shape}\n{graph.describe()}"
    )
    scale = max(1.0, float(np.abs(theirs).max())) if theirs.size else 1.0
    err = np.abs(ours - theirs)
    bad = ~(err <= rtol * (np.abs(theirs) + scale))
    if bad.any():
        raise AssertionError(
            f"{what} differs from torch (rtol {rtol}):\n ours  = {ours.tolist()!r}\n torch = "
            f"{theirs.tolist()!r}\n max abs err {float(err.max()):.3e}\n{graph.describe()}"
        )


def _torch_leaves(torch, graph):
    return [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in graph.leaves]


def _our_leaves(graph):
    return [tensor(v, requires_grad=True) for v in graph.leaves]


def _check_grads(ours, theirs, rtol, what, graph):
    for i, (g, tg) in enumerate(zip(ours, theirs)):
        assert (g is None) == (tg is None), (
            f"{what} w.r.t. v{i}: ours {'None' if g is None else 'a tensor'}, torch "
            f"{'None' if tg is None else 'a tensor'}\n{graph.describe()}"
        )
        if g is not None:
            _close(g.numpy(), tg.detach().numpy(force=True), rtol, f"{what} w.r.t. v{i}", graph)


def _hvp(grad_fn, leaves, first, vs, zeros, requires_grad, dot):
    """grad of sum_i <first_i, v_i> w.r.t. the leaves (zeros where nothing depends on them)."""
    terms = [dot(g, v) for g, v in zip(first, vs) if g is not None and requires_grad(g)]
    if not terms:
        return [zeros(x) for x in leaves]
    s = terms[0]
    for t in terms[1:]:
        s = s + t
    second = grad_fn(s, leaves)
    return [zeros(x) if h is None else h for x, h in zip(leaves, second)]


GRAPH_SEEDS = list(range(N_GRAPHS))


@pytest.mark.parametrize("seed", GRAPH_SEEDS)
def test_random_graph_against_torch(seed, torch):
    graph = make_graph(seed)
    rs = np.random.default_rng(10_000 + seed)

    x = _our_leaves(graph)
    tx = _torch_leaves(torch, graph)
    ours = build(graph, x, lambda spec, inputs, attrs: spec.ours(*inputs, **attrs))
    theirs = build(graph, tx, lambda spec, inputs, attrs: spec.theirs(torch, *inputs, **attrs))
    y, ty = ours[-1], theirs[-1]

    # forward: every node, not just the root (a bug cancelling out downstream still shows)
    for i, (v, tv) in enumerate(zip(ours, theirs)):
        _close(v.numpy(), tv.detach().numpy(force=True), RTOL_VALUE, f"value of v{i}", graph)

    # grad_fn names: the root's, and every other node's too (where they are meant to agree)
    for j, step in enumerate(graph.steps):
        node = len(graph.leaves) + j
        t_inputs = [
            a for a in (_arg_value(theirs, arg) for arg in step[1]) if isinstance(a, torch.Tensor)
        ]
        if SPECS[step[0]].names_match(step, t_inputs):
            ours_name = ours[node].grad_fn.name()
            torch_name = type(theirs[node].grad_fn).__name__
            assert ours_name == torch_name, f"grad_fn of v{node}\n{graph.describe()}"

    # first order: d(out or out.sum())/d(every leaf)
    scalar = y.shape == ()
    s, ts = (y, ty) if scalar else (y.sum(), ty.sum())
    g = grad(s, x, retain_graph=True, allow_unused=True)
    tg = torch.autograd.grad(ts, tx, retain_graph=True, allow_unused=True)
    _check_grads(g, tg, RTOL_GRAD, "grad of " + ("out" if scalar else "out.sum()"), graph)

    # a vector-Jacobian product with a random cotangent
    u = rs.uniform(-1.0, 1.0, size=y.shape)
    if not scalar:
        g = grad(y, x, grad_outputs=tensor(u), retain_graph=True, allow_unused=True)
        tg = torch.autograd.grad(
            ty,
            tx,
            grad_outputs=torch.tensor(u, dtype=torch.float64),
            retain_graph=True,
            allow_unused=True,
        )
        _check_grads(g, tg, RTOL_GRAD, "vjp", graph)

    # second order: grad(create_graph=True), then the grad of <grad, v> (a Hessian-vector product)
    vs = [rs.uniform(-1.0, 1.0, size=leaf.shape) for leaf in graph.leaves]
    seed_out = None if scalar else tensor(u)
    first = grad(y, x, grad_outputs=seed_out, create_graph=True, allow_unused=True)
    h = _hvp(
        lambda out, ins: grad(out, ins, allow_unused=True),
        x,
        first,
        [tensor(v) for v in vs],
        lambda leaf: tensor(np.zeros(leaf.shape)),
        lambda t: t.requires_grad,
        lambda a, b: (a * b).sum(),
    )
    tseed = None if scalar else torch.tensor(u, dtype=torch.float64)
    tfirst = torch.autograd.grad(ty, tx, grad_outputs=tseed, create_graph=True, allow_unused=True)
    th = _hvp(
        lambda out, ins: torch.autograd.grad(out, ins, allow_unused=True),
        tx,
        tfirst,
        [torch.tensor(v, dtype=torch.float64) for v in vs],
        lambda leaf: torch.zeros(leaf.shape, dtype=torch.float64),
        lambda t: t.requires_grad,
        lambda a, b: (a * b).sum(),
    )
    for i, (hi, thi) in enumerate(zip(h, th)):
        _close(hi.numpy(), thi.detach().numpy(force=True), RTOL_HVP, f"hvp w.r.t. v{i}", graph)


def test_graphs_cover_the_mapping_table(torch):
    """The seeded graphs exercise every entry of SPECS (and so every op mapped to torch)."""
    used = {key for seed in GRAPH_SEEDS for key, _, _ in make_graph(seed).steps}
    assert set(SPECS) - used == set()


# ---------------------------------------------------------------------------
# Kinks and domain edges: compared with torch exactly, nan and inf positions included.
# ---------------------------------------------------------------------------


def _exact(ours, theirs, what):
    """nan, +inf and -inf in the same places, finite values equal to 2 ulp.

    (The values at the kinks, 0, 0.5, 1, inf, nan, come out exact; the 2 ulp are for the
    smooth neighbours such as 1/(x ln 2), which NumPy and torch may round differently.)"""
    ours = np.asarray(ours, dtype=np.float64)
    theirs = np.asarray(theirs, dtype=np.float64)
    assert ours.shape == theirs.shape, what
    np.testing.assert_array_equal(
        np.isnan(ours), np.isnan(theirs), err_msg=what + " (nan positions)"
    )
    np.testing.assert_array_equal(
        np.where(np.isinf(ours), ours, 0),
        np.where(np.isinf(theirs), theirs, 0),
        err_msg=what + " (inf positions)",
    )
    np.testing.assert_allclose(ours, theirs, rtol=4.5e-16, atol=0, equal_nan=True, err_msg=what)


def _both(torch, fn, tfn, *values, second=True):
    """Value, first and (optionally) second derivatives of sum(fn(*xs)) in both engines."""
    xs = [tensor(v, requires_grad=True) for v in values]
    txs = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    y, ty = fn(*xs), tfn(*txs)
    out = {"value": (y.numpy(), ty.detach().numpy(force=True))}
    g = grad(y.sum(), xs, create_graph=second, allow_unused=True)
    tg = torch.autograd.grad(ty.sum(), txs, create_graph=second, allow_unused=True)
    for i, (a, b) in enumerate(zip(g, tg)):
        out[f"grad{i}"] = (a.numpy(), b.detach().numpy(force=True))
    if second:
        h = _hvp(
            lambda o, ins: grad(o, ins, allow_unused=True),
            xs,
            g,
            [tensor(np.ones(np.shape(v))) for v in values],
            lambda leaf: tensor(np.zeros(leaf.shape)),
            lambda t: t.requires_grad,
            lambda a, b: (a * b).sum(),
        )
        th = _hvp(
            lambda o, ins: torch.autograd.grad(o, ins, allow_unused=True),
            txs,
            tg,
            [torch.ones(np.shape(v), dtype=torch.float64) for v in values],
            lambda leaf: torch.zeros(leaf.shape, dtype=torch.float64),
            lambda t: t.requires_grad,
            lambda a, b: (a * b).sum(),
        )
        for i, (a, b) in enumerate(zip(h, th)):
            out[f"second{i}"] = (a.numpy(), b.detach().numpy(force=True))
    return out


def _assert_same(torch, label, fn, tfn, *values, second=True):
    for what, (a, b) in _both(torch, fn, tfn, *values, second=second).items():
        _exact(a, b, f"{label}: {what}")


KINK_CASES = [
    # label, ours, torch, inputs  (values chosen to sit on the kink / domain edge); value,
    # first and second order are compared, except for the cases in SECOND_ORDER_DEPARTURES
    # below (their second order is checked there).
    ("abs'(0)=0", lambda x: x.abs(), lambda x: x.abs(), [-1.0, 0.0, 2.0]),
    ("relu'(0)=0", lambda x: x.relu(), lambda x: x.relu(), [-1.0, 0.0, 2.0]),
    ("sqrt'(0)=inf", lambda x: x.sqrt(), lambda x: x.sqrt(), [0.0, 4.0]),
    ("sign'=0", lambda x: x.sign(), lambda x: x.sign(), [-2.0, 0.0, 3.0]),
    (
        "floor/ceil/round'=0",
        lambda x: apply(OPS["floor"], x) + apply(OPS["ceil"], x) + apply(OPS["round"], x),
        lambda x: x.floor() + x.ceil() + x.round(),
        [-1.0, 0.5, 2.0, 2.5],
    ),
    ("log(0)=-inf, log(-1)=nan", lambda x: x.log(), lambda x: x.log(), [-1.0, 0.0, 1.0]),
    (
        "log2/log10 at 0 and -1",
        lambda x: x.log2() * 3 + x.log10(),
        lambda x: x.log2() * 3 + x.log10(),
        [-1.0, 0.0, 4.0],
    ),
    ("sqrt(-1)=nan", lambda x: x.sqrt(), lambda x: x.sqrt(), [-1.0, 1.0]),
    # acosh is nan below 1, its derivative 1/sqrt(x*x - 1) finite below -1 and inf at -1
    (
        "acosh below 1",
        lambda x: apply(OPS["acosh"], x),
        lambda x: x.acosh(),
        [-3.0, -2.0, -1.0, 0.5, 1.0, 2.0],
    ),
    ("atanh past 1", lambda x: apply(OPS["atanh"], x), lambda x: x.atanh(), [-2.0, 1.0, 3.0]),
    ("1/0=inf", lambda x: 1 / x, lambda x: 1 / x, [0.0, 2.0]),
    ("-1/0=-inf", lambda x: -1.0 / x, lambda x: -1.0 / x, [0.0, -2.0]),
    ("x**0.5 at 0", lambda x: x**0.5, lambda x: x**0.5, [0.0, 1.0]),
    ("x**0 at 0", lambda x: x**0, lambda x: x**0, [0.0, 1.0]),
    ("x**2 at 0", lambda x: x**2, lambda x: x**2, [0.0, -1.0]),
    ("x**-1 at 0", lambda x: x**-1.0, lambda x: x**-1.0, [0.0, 2.0]),
    ("0**y", lambda y: 0.0**y, lambda y: 0.0**y, [0.0, 2.0, 0.5]),
    ("amax ties", lambda x: x.max(), lambda x: x.max(), [1.0, 3.0, 3.0]),
    ("amin ties", lambda x: x.min(), lambda x: x.min(), [1.0, 1.0, 1.0, 3.0]),
    (
        "amax axis ties",
        lambda x: x.max(axis=1),
        lambda x: x.amax(dim=1),
        [[2.0, 2.0, 1.0], [0.0, 5.0, 5.0]],
    ),
    (
        "amin axis ties keepdims",
        lambda x: x.min(axis=0, keepdims=True),
        lambda x: x.amin(dim=0, keepdim=True),
        [[2.0, 2.0], [2.0, 5.0]],
    ),
    ("norm at 0", lambda x: x.norm(), lambda x: x.norm(), [0.0, 0.0, 0.0]),
    ("prod with one zero", lambda x: x.prod(), lambda x: x.prod(), [2.0, 0.0, 3.0]),
    ("prod with two zeros", lambda x: x.prod(), lambda x: x.prod(), [0.0, 2.0, 0.0]),
    ("prod with three zeros", lambda x: x.prod(), lambda x: x.prod(), [0.0, 0.0, 0.0, 4.0]),
    (
        "prod along an axis with zeros",
        lambda x: x.prod(1).sum(),
        lambda x: x.prod(1).sum(),
        [[2.0, 0.0, 3.0], [0.0, 5.0, 0.0]],
    ),
]


def _case(label):
    return next(c for c in KINK_CASES if c[0] == label)


# At these points torch's second derivative is nan (a masked 0 * inf or 0 * nan inside its own
# backward formulas) where ours is not: a documented departure (README, "The expression
# language": "a cotangent that is exactly zero stays zero through every rule, even against an
# infinite local derivative"; the pow and norm rules are written with ``where``).  Ours is
# asserted; torch's nan is checked too so that a change on either side is noticed.
SECOND_ORDER_DEPARTURES = {
    # label: (inputs, ours: H @ ones per input, positions where torch gives nan instead)
    # 0**y is 0 for y > 0, so its second derivative there is 0 (at y = 0 a kink: 0 as well).
    "0**y": (([0.0, 2.0, 0.5],), ([0.0, 0.0, 0.0],), ([True, True, True],)),
    # |x| at 0 has no Hessian; ours continues the first-order convention (gradient 0).
    "norm at 0": (([0.0, 0.0, 0.0],), ([0.0, 0.0, 0.0],), ([True, True, True],)),
    # x**y at (0, 0), (0, 2), (0, 0.5), (2, 0), (-2, 2): at (0, 2) the true H @ 1 is
    # d2/dx2 x**2 + d2/dxdy x**y = 2 + 0 (ours 2); at (0, 0.5) d2/dx2 sqrt(x) = -inf.
    "x**y": (
        ([0.0, 0.0, 0.0, 2.0, -2.0], [0.0, 2.0, 0.5, 0.0, 2.0]),
        ([0.0, 2.0, -np.inf, 0.5, np.nan], [0.0, 0.0, np.nan, 0.4804530139182014, np.nan]),
        ([True, True, True, False, True], [True, True, True, False, True]),
    ),
}
KINK_CASES.append(("x**y", lambda a, b: a**b, lambda a, b: a**b, None))

# Genuine disagreements (not a documented choice): the engine's second derivative of prod at
# a point with zeros.  prod's Hessian is H_ij = prod_{k != i, j} x_k (i != j), so at x = [2, 0, 3]
# H @ 1 = [3, 5, 2] (torch) and at [0, 2, 0] it is [2, 0, 2] (torch); ours gives [3, 0, 2] and
# [0, 0, 0]: _prod_partials (core/ops.py) returns the constant 0.0 for the partials that are 0 at
# the point (where(zeros_count == 0, out / safe, 0.0)), so their derivatives are lost.
PROD_ZEROS = {
    "prod with one zero": ([2.0, 0.0, 3.0], [3.0, 5.0, 2.0]),
    "prod with two zeros": ([0.0, 2.0, 0.0], [2.0, 0.0, 2.0]),
    "prod with three zeros": ([0.0, 0.0, 0.0, 4.0], [0.0, 0.0, 0.0, 0.0]),
}


@pytest.mark.parametrize("label,fn,tfn,value", KINK_CASES, ids=[c[0] for c in KINK_CASES])
def test_kink_conventions_match_torch(label, fn, tfn, value, torch):
    second = label not in SECOND_ORDER_DEPARTURES
    values = SECOND_ORDER_DEPARTURES[label][0] if value is None else (value,)
    _assert_same(torch, label, fn, tfn, *values, second=second)


@pytest.mark.parametrize("label", sorted(SECOND_ORDER_DEPARTURES))
def test_kink_second_order_zero_cotangent_stays_zero(label, torch):
    values, expected, torch_nan = SECOND_ORDER_DEPARTURES[label]
    _, fn, tfn, _ = _case(label)
    got = _both(torch, fn, tfn, *values)
    for i, (want, nan_at) in enumerate(zip(expected, torch_nan)):
        ours, theirs = got[f"second{i}"]
        np.testing.assert_array_equal(ours, want, err_msg=f"{label}: ours, second{i}")
        np.testing.assert_array_equal(
            np.isnan(theirs),
            np.isnan(want) | np.array(nan_at),
            err_msg=f"{label}: torch's nan positions, second{i}",
        )
        finite = ~np.array(nan_at) & ~np.isnan(want)
        _exact(ours[finite], theirs[finite], f"{label}: where both are numbers, second{i}")


@pytest.mark.parametrize("label", sorted(PROD_ZEROS))
def test_kink_prod_with_zeros_second_order(label, torch):
    # Was a bug: the partials that are 0 at the point were constants, so H_ij was lost.
    value, hessian_times_ones = PROD_ZEROS[label]
    _, fn, tfn, _ = _case(label)
    ours, theirs = _both(torch, fn, tfn, value)["second0"]
    np.testing.assert_array_equal(theirs, hessian_times_ones)  # torch is right
    _exact(ours, theirs, label)


def test_kink_maximum_minimum_ties_split_like_torch(torch):
    # two tensors: the even split of torch.maximum/minimum, with broadcasting
    for name, tname in (("maximum", "maximum"), ("minimum", "minimum")):
        _assert_same(
            torch,
            name,
            lambda a, b, name=name: apply(OPS[name], a, b),
            lambda a, b, tname=tname: getattr(torch, tname)(a, b),
            [1.0, 2.0, 3.0],
            2.0,
        )
        _assert_same(
            torch,
            name + " all tied",
            lambda a, b, name=name: apply(OPS[name], a, b),
            lambda a, b, tname=tname: getattr(torch, tname)(a, b),
            [[2.0, 2.0]],
            [[2.0], [2.0]],
        )


def test_kink_division_edges(torch):
    # x/y at y = 0: inf, -inf, and 0/0 = nan, with both partials.
    _assert_same(
        torch,
        "x/y",
        lambda a, b: a / b,
        lambda a, b: a / b,
        [1.0, -1.0, 0.0, 2.0],
        [0.0, 0.0, 0.0, 4.0],
    )


def test_kink_clamp_away_from_the_bound_matches_torch(torch):
    for name in ("clamp_min", "clamp_max"):
        _assert_same(
            torch,
            name,
            lambda x, name=name: apply(OPS[name], x, 0.5),
            lambda x, name=name: getattr(torch, name)(x, 0.5),
            [-1.0, 0.25, 2.0],
        )


def test_kink_clamp_at_the_bound(torch):
    # A documented departure (README, "The expression language": "against a constant,
    # `max(x, c)`/`min(x, c)` give the tie to the constant, so `relu(x)`, `max(x, 0)` and
    # `where(x > 0, x, 0)` all have derivative 0 at 0"): torch.clamp_min(x, 0) gives 1 at the
    # bound and torch.maximum(x, tensor(0.)) gives 0.5; ours gives x nothing, as relu does.
    value = [-1.0, 0.0, 2.0]
    for src, expected in (
        ("max(x, 0)", [0.0, 0.0, 1.0]),
        ("max(0, x)", [0.0, 0.0, 1.0]),
        ("min(x, 0)", [1.0, 0.0, 0.0]),
        ("relu(x)", [0.0, 0.0, 1.0]),
        ("where(x > 0, x, 0)", [0.0, 0.0, 1.0]),
    ):
        ev = evaluate(parse(src), {"x": value}, requires_grad=["x"])
        (g,) = grad(ev.output.sum(), ev.leaves["x"])
        np.testing.assert_array_equal(g.numpy(), expected, err_msg=src)
    # ... which is torch's relu'(0) = 0 and torch.where's, while the clamp/maximum conventions
    # differ (checked, so that a change on either side is noticed):
    tx = torch.tensor(value, dtype=torch.float64, requires_grad=True)
    (trelu,) = torch.autograd.grad(torch.relu(tx).sum(), tx)
    np.testing.assert_array_equal(trelu.numpy(), [0.0, 0.0, 1.0])
    (twhere,) = torch.autograd.grad(torch.where(tx > 0, tx, 0.0).sum(), tx)
    np.testing.assert_array_equal(twhere.numpy(), [0.0, 0.0, 1.0])
    (tclamp,) = torch.autograd.grad(torch.clamp_min(tx, 0.0).sum(), tx)
    np.testing.assert_array_equal(tclamp.numpy(), [0.0, 1.0, 1.0])
    (tmax,) = torch.autograd.grad(torch.maximum(tx, torch.zeros((), dtype=torch.float64)).sum(), tx)
    np.testing.assert_array_equal(tmax.numpy(), [0.0, 0.5, 1.0])
    # the values agree everywhere
    x = tensor(value, requires_grad=True)
    for name in ("clamp_min", "clamp_max"):
        _exact(
            apply(OPS[name], x, 0.0).numpy(),
            getattr(torch, name)(tx, 0.0).detach().numpy(force=True),
            name,
        )


def test_kink_where_keeps_the_untaken_branch_out(torch):
    # A documented departure (README, "The expression language": "`where(cond, a, b)` never
    # lets the untaken branch's inf/nan into the gradient (`where(x > 0, sqrt(x), 0)` at
    # `x = -1` has gradient 0)"): torch propagates 0 * nan = nan there.
    value = [-1.0, 0.0, 4.0]
    x = tensor(value, requires_grad=True)
    tx = torch.tensor(value, dtype=torch.float64, requires_grad=True)
    y = apply(OPS["where"], x > 0, x.sqrt(), 0.0)
    ty = torch.where(tx > 0, tx.sqrt(), 0.0)
    _exact(y.numpy(), ty.detach().numpy(force=True), "where value")
    (g,) = grad(y.sum(), x)
    (tg,) = torch.autograd.grad(ty.sum(), tx)
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0, 0.25])
    np.testing.assert_array_equal(tg.numpy(), [np.nan, np.nan, 0.25])  # torch: 0 * nan, 0 * inf


# ---------------------------------------------------------------------------
# Edges of the op table (tests/test_op_edges.py asserts the same without torch).
# ---------------------------------------------------------------------------

MATMUL_SHAPES = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 2)),
    ((2, 3), (3, 2)),
    ((4, 2, 3), (3,)),
    ((3,), (4, 3, 2)),
    ((4, 2, 3), (3, 2)),
    ((4, 2, 3), (4, 3, 2)),
    # (2, 3) @ (4, 3, 2) is left out: torch says CloneBackward0 there (stride layout), ours
    # UnsafeViewBackward0 (see _matmul_names_match)
]


@pytest.mark.parametrize("sa, sb", MATMUL_SHAPES, ids=[f"{a}@{b}" for a, b in MATMUL_SHAPES])
def test_matmul_grad_fn_names_match_torch(sa, sb, torch):
    a = tensor(np.ones(sa), requires_grad=True)
    b = tensor(np.ones(sb), requires_grad=True)
    ta = torch.ones(sa, dtype=torch.float64, requires_grad=True)
    tb = torch.ones(sb, dtype=torch.float64, requires_grad=True)
    assert (a @ b).grad_fn.name() == (ta @ tb).grad_fn.name()


def test_dot_of_non_vectors_raises_like_torch(torch):
    a, b = np.ones((2, 3)), np.ones((3, 2))
    with pytest.raises(RuntimeError, match="1D tensors expected, but got 2D and 2D tensors"):
        torch.dot(torch.tensor(a), torch.tensor(b))
    with pytest.raises(ShapeError, match="dot needs two 1-D vectors, got 2-D and 2-D"):
        apply(OPS["dot"], tensor(a), tensor(b))


@pytest.mark.parametrize(
    "label, make, saves",
    [
        ("sub", lambda x: (x - 1.0).sum(), False),
        ("rsub", lambda x: (1.0 - x).sum(), False),
        ("x.T", lambda x: x.T.sum(), False),
        ("x.mT", lambda x: x.mT.sum(), False),
        ("add, neg", lambda x: (-(x + x)).sum(), False),
        ("mul", lambda x: (x * x).sum(), True),
        ("mul of transposes", lambda x: (x.T * x.mT).sum(), True),
    ],
)
def test_second_backward_without_retain_graph_like_torch(label, make, saves, torch):
    # torch frees only saved tensors: a graph of ops that save none can be run twice.
    from autograd_cli.core import GradError

    value = [[1.0, 2.0], [3.0, 4.0]]
    for leaf, error in (
        (tensor(value, requires_grad=True), GradError),
        (torch.tensor(value, dtype=torch.float64, requires_grad=True), RuntimeError),
    ):
        out = make(leaf)
        out.backward()
        first = np.array(leaf.grad.tolist())
        if saves:
            with pytest.raises(error, match="backward through the graph a second time"):
                out.backward()
        else:
            out.backward()
            np.testing.assert_array_equal(np.array(leaf.grad.tolist()), 2 * first, err_msg=label)


def test_kink_zero_tangent_through_infinite_derivative(torch):
    # A documented departure (README: "a cotangent that is exactly zero stays zero through
    # every rule, even against an infinite local derivative"), in forward mode: along
    # v = [0, 1], sqrt(x + t v) at x = [0, 4] has a constant first entry, derivative 0 (ours);
    # torch.func.jvp gives 0 * inf = nan there.
    from autograd_cli.core import jvp

    x, v = [0.0, 4.0], [0.0, 1.0]
    _, dout = jvp(lambda t: t.sqrt(), tensor(x), tensor(v))
    _, tdout = torch.func.jvp(
        torch.sqrt, (torch.tensor(x, dtype=torch.float64),), (torch.tensor(v, dtype=torch.float64),)
    )
    np.testing.assert_array_equal(dout.numpy(), [0.0, 0.25])
    np.testing.assert_array_equal(tdout.numpy(), [np.nan, 0.25])


def test_kink_where_division_by_zero_branch(torch):
    # The same departure for a binary op: where(y > 0, x / y, 0) at y = 0 is 0 for every x,
    # so d/dx = 0 (ours); torch's DivBackward0 computes 0 / 0 = nan for the untaken branch.
    xv, yv = [1.0, 2.0], [0.0, 4.0]
    x, y = tensor(xv, requires_grad=True), tensor(yv, requires_grad=True)
    tx = torch.tensor(xv, dtype=torch.float64, requires_grad=True)
    ty = torch.tensor(yv, dtype=torch.float64, requires_grad=True)
    g = grad(apply(OPS["where"], y > 0, x / y, 0.0).sum(), (x, y))
    tg = torch.autograd.grad(torch.where(ty > 0, tx / ty, 0.0).sum(), (tx, ty))
    np.testing.assert_array_equal(g[0].numpy(), [0.0, 0.25])
    np.testing.assert_array_equal(g[1].numpy(), [0.0, -0.125])
    np.testing.assert_array_equal(tg[0].numpy(), [np.nan, 0.25])
    np.testing.assert_array_equal(tg[1].numpy(), [np.nan, -0.125])


@pytest.mark.parametrize(
    "value",
    [[2.0, 0.0, 3.0, -5.0], [0.0, 3.0, 0.0, 5.0], [0.0, 0.0, 0.0, 4.0], [0.0, 0.0, 0.0]],
    ids=["one zero", "two zeros", "three zeros", "all zero"],
)
def test_kink_prod_full_hessian_at_zeros_matches_torch(value, torch):
    from autograd_cli.core import hessian

    tv = torch.tensor(value, dtype=torch.float64, requires_grad=True)
    (tg,) = torch.autograd.grad(tv.prod(), tv)
    th = torch.autograd.functional.hessian(lambda t: t.prod(), tv.detach())
    x = tensor(value, requires_grad=True)
    (g,) = grad(x.prod(), x)
    _exact(g.numpy(), tg.numpy(), "prod gradient")
    _exact(hessian(lambda t: t.prod(), tensor(value)).numpy(), th.numpy(), "prod Hessian")
