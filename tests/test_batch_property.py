"""Batch == one line at a time, for every shape the language has (issue 16).

Mutation testing found wrong batched gradients that the rest of the suite let through,
because no test ever built the shapes where they differ: a square matrix times a vector
(a gradient that uses ``A`` where ``A.T`` belongs is still the right shape), a rank-3
transpose (``transpose`` reverses *all* axes, as NumPy's ``.T`` does; a wrong permutation of a
cube keeps its shape), ``dot(a, b)`` with ``a != b`` (the two partials swapped are equal
when ``a == b``), and ``--order 2`` lines at a point where the first and second
derivatives differ (``x**3`` at 2 has both equal to 12).

Two parts:

* a Hypothesis property: expressions in the tool's language over variables of several
  shapes (scalars ``x y``, vectors ``u w`` of length n and ``p`` of length m, a square
  ``A`` (n, n), ``M`` (n, m), a rank-3 ``T`` (k, n, m); n, m in 2..4 and k in 1..3 drawn
  per example, so n == m and k == 1 occur), built from broadcasting elementwise ops, ``@``
  (matrix @ vector, vector @ matrix, matrix @ matrix, square and not), ``dot(a, b)``,
  ``transpose``/``.T`` of ranks 2 and 3, ``reshape`` (with ``-1`` too), reductions with and
  without axes (``sum mean max min prod norm``; an int, a negative int, a list of axes,
  ``keepdims``), indexing and slicing, and array literals; evaluated at several points
  through the real ``batch`` command (``cli.batch.run_batch``, a JSONL file), and compared
  as exact text with the document each line gets on its own: ``api.eval_of`` /
  ``grad_of`` / ``nth_derivative_of`` / ``hessian_of`` rendered by ``render.result_json``
  and ``jsonout.dumps``, which is what ``eval|grad|hessian ... --json`` prints (the
  regression tests below check that against the command line itself).  Exact: values,
  gradients, signs of zeros, nan/inf and warnings.  No tolerance: every batching rule
  (core/batch.py) runs the same NumPy kernel per row as the one-row evaluation
  (elementwise ops, stacked ``matmul``, reductions over the same per-row axes) and the
  batched graph has one node per node of the row's graph, so the floating-point
  operations and the order backward sums them in are the same.  Two differences that
  came from core/ops.py, not from batching (pow through C pow() on scalars, chain()
  zeroing batch-wide), are fixed there and pinned by explicit tests below; the probes
  ``_SCALAR_POW_DIFFERS`` and ``_CHAIN_IS_BATCH_WIDE`` are False now, so the property
  uses every template with no allowance (a regression shows in the explicit tests).
* explicit regression tests for the four named gaps, each against the single command's
  ``--json`` and against a closed form; and for two batch bugs this property found and
  core/batch.py now fixes (signs of zeros through padded operands; the order in which
  backward sums three or more cotangents).

Every group of ``eval``/``grad`` lines must go through the vectorised evaluator: a spy on
``core.batch.evaluate_batch`` and ``rows.evaluate_row`` (the row-by-row path)
checks that each group was evaluated at once, without an exception, and that only the
lines documented to run row by row (``hessian``, ``grad`` with an ``order``) went one at a
time.  None of the generated shapes legitimately falls back (the rules raise
``Unbatchable`` only for ``dot`` of non-vectors, ``@`` with a scalar, or an axis outside
the per-row rank, which the generator never builds), so a batching rule that breaks and
falls back to the (correct) slow path fails here too.

``BATCH_PROPERTY_EXAMPLES=1500`` searches longer (about 2 minutes); the default (250)
keeps the module near 20 s.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import math
import os
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograd_cli.cli import batch as cli_batch
from autograd_cli.cli import jsonout, render
from autograd_cli.core import api
from autograd_cli.core import batch as core_batch
from autograd_cli.core import rows as lib_rows
from autograd_cli.core.ops import rules as core_ops
from autograd_cli.grammar import parse

EXAMPLES = int(os.environ.get("BATCH_PROPERTY_EXAMPLES", "250"))


# ---------------------------------------------------------------------------
# Two differences between a batch and its single lines that came from core/ops.py (now
# fixed there, each pinned by an explicit test below). The probes are False with the
# fixed engine, so the property below makes no allowance for them.
# ---------------------------------------------------------------------------


def _batch_differs(expr: str, rows: list) -> bool:
    program = parse(expr)
    columns = {k: np.array([r[k] for r in rows], dtype=np.float64) for k in rows[0]}
    batched = core_batch.evaluate_batch(program, columns, len(rows), grad=True)
    for i, row in enumerate(rows):
        one = api.grad_of(program, row)
        if not _identical(one.value, batched.value[i]) or not all(
            _identical(g, batched.grad[name][i]) for name, g in one.grad.items()
        ):
            return True
    return False


def _identical(a, b) -> bool:
    """Equal as the JSON output shows them: nan equals nan, 0.0 differs from -0.0."""
    a, b = np.asarray(a), np.asarray(b)
    return (
        a.shape == b.shape
        and np.array_equal(a, b, equal_nan=True)
        and np.array_equal(np.signbit(a) & (a == 0), np.signbit(b) & (b == 0))
    )


#: ``a ** b`` (core/ops.py) on two NumPy *scalars* is C's pow(); on arrays it is NumPy's
#: power loop, which on AVX-512 CPUs is a SIMD pow that differs in the last bit for a few
#: per cent of points.  One line at per-row shape () gets NumPy scalars for intermediates
#: (a ufunc on 0-d arrays returns a scalar), the batch gets arrays: `x**y` (leaves, 0-d
#: arrays) agrees, `sin(x)**y` does not, nor the gradient of `sin(x)**2.5` (a**(b-1)).
_SCALAR_POW_DIFFERS = _batch_differs(
    "(1 + sqrt(x**2 + 1)**2) ** (x / 3) + sin(x)**2.5",
    [{"x": float(v)} for v in np.random.default_rng(0).uniform(0.1, 2, size=64)]
    + [{"x": -1.2590655321041202}],
)

#: ``ops.chain`` (``g * d``, with an exact zero cotangent kept zero where ``d`` is inf or
#: nan) tests the whole array for a non-finite product, then sets every entry with
#: ``g == 0`` to +0.0: in a batch, a row with a nan/inf product turns the -0.0 entries of
#: every other row into 0.0, entries that row alone keeps as -0.0.
_CHAIN_IS_BATCH_WIDE = _batch_differs(
    "max(u / x)", [{"u": [1.0, 2.0], "x": -2.0}, {"u": [1.0, 2.0], "x": 0.0}]
)


# ---------------------------------------------------------------------------
# The reference, the batch run, and the spy on which path each line took
# ---------------------------------------------------------------------------


def reference_line(line: int, record: dict) -> str:
    """What the single command prints with --json for this JSONL record, plus "line"."""
    program = parse(record["expr"])
    values, op, wrt = record["vars"], record.get("op", "grad"), record.get("wrt")
    if op == "eval":
        result = api.eval_of(program, values)
    elif op == "hessian":
        result = api.hessian_of(program, values, wrt=wrt)
    elif record.get("order", 1) != 1:
        result = api.nth_derivative_of(program, values, wrt=wrt, order=record["order"])
    else:
        result = api.grad_of(program, values, wrt=wrt)
    return jsonout.dumps({"line": line, **render.result_json(record["expr"], result)})


class Spy:
    """Which lines went through the vectorised evaluator, and which one at a time."""

    def __init__(self):
        # (expression, rows, None or the exception's class name, grad, whether ops.chain
        # met a non-finite product in that batched evaluation: see _CHAIN_IS_BATCH_WIDE)
        self.groups: list = []
        self.singles: list = []  # (expression, op, order)

    @contextlib.contextmanager
    def watching(self):
        original_batch = core_batch.evaluate_batch
        original_one = lib_rows.evaluate_row
        original_all_finite = core_ops._all_finite
        state = {"inside": False, "non_finite": False}

        def all_finite(x):  # used only by ops.chain
            result = original_all_finite(x)
            if state["inside"] and not result:
                state["non_finite"] = True
            return result

        def evaluate_batch(program, columns, size, **kwargs):
            state.update(inside=True, non_finite=False)
            grad = bool(kwargs.get("grad"))
            try:
                result = original_batch(program, columns, size, **kwargs)
            except BaseException as exc:
                self.groups.append((program.source, size, type(exc).__name__, grad, False))
                raise
            finally:
                state["inside"] = False
            self.groups.append((program.source, size, None, grad, state["non_finite"]))
            return result

        def evaluate_row(program, row):
            self.singles.append((program.source, row.op, row.order))
            return original_one(program, row)

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(core_batch, "evaluate_batch", evaluate_batch)
            mp.setattr(lib_rows, "evaluate_row", evaluate_row)
            mp.setattr(core_ops, "_all_finite", all_finite)
            yield self

    def chain_met_non_finite(self, expr: str) -> bool:
        return any(g[0] == expr and g[3] and g[4] for g in self.groups)


def run_batch_file(records: list, chunk_size: int = cli_batch.DEFAULT_CHUNK_SIZE):
    """Run the batch command on these JSONL records; (output lines, exit code, spy)."""
    spy = Spy()
    with tempfile.TemporaryDirectory() as folder:
        source = os.path.join(folder, "in.jsonl")
        target = os.path.join(folder, "out.jsonl")
        with open(source, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(r) + "\n" for r in records)
        with spy.watching():
            summary = cli_batch.run_batch(
                cli_batch.BatchOptions(
                    source=source, output=target, progress=False, chunk_size=chunk_size
                )
            )
        with open(target, encoding="utf-8") as f:
            lines = f.read().splitlines()
    return lines, summary.code, spy


def _unsigned_zeros(value):
    if isinstance(value, list):
        return [_unsigned_zeros(v) for v in value]
    if isinstance(value, dict):
        return {k: _unsigned_zeros(v) for k, v in value.items()}
    return 0.0 if value == 0 else value


def _same_but_signs_of_zero_in_grad(expected: str, got: str) -> bool:
    e, g = json.loads(expected), json.loads(got)
    if "grad" not in e or "grad" not in g:
        return False
    e["grad"], g["grad"] = _unsigned_zeros(e["grad"]), _unsigned_zeros(g["grad"])
    return e == g


def assert_same_as_single_lines(records: list, lines: list, spy: Spy | None = None) -> None:
    """Exact text, line by line.  One known exception (see _CHAIN_IS_BATCH_WIDE): while
    ``ops.chain`` decides for the whole batch, a grad group in which it met a non-finite
    product may differ from the single lines in the signs of zero gradient entries, and in
    nothing else."""
    expected = [reference_line(i + 1, r) for i, r in enumerate(records)]
    assert len(lines) == len(expected)
    wrong = []
    for r, e, g in zip(records, expected, lines):
        if e == g:
            continue
        if (
            spy is not None
            and _CHAIN_IS_BATCH_WIDE
            and spy.chain_met_non_finite(r["expr"])
            and r.get("op", "grad") == "grad"
            and r.get("order", 1) == 1
            and _same_but_signs_of_zero_in_grad(e, g)
        ):
            continue
        wrong.append((r, e, g))
    assert not wrong, "batch differs from one line at a time:\n" + "\n".join(
        f"  record   {json.dumps(r)}\n  single   {e}\n  batch    {g}" for r, e, g in wrong[:3]
    )


def assert_vectorised(spy: Spy, expressions: dict, row_by_row: int = 0) -> None:
    """``expressions``: expression -> rows of its eval/grad group(s) (one call each)."""
    failed = [g for g in spy.groups if g[2] is not None]
    assert not failed, f"the vectorised evaluator raised (and rows fell back): {failed}"
    got: dict = {}
    for source, size, *_ in spy.groups:
        got.setdefault(source, []).append(size)
    assert {e: sorted(sizes) for e, sizes in got.items()} == {
        e: sorted(sizes) for e, sizes in expressions.items()
    }, spy.groups
    eval_or_first = [
        s for s in spy.singles if s[1] == "eval" or (s[1] == "grad" and s[2] in (None, 1))
    ]
    assert not eval_or_first, f"eval/grad lines evaluated one at a time: {eval_or_first[:3]}"
    assert len(spy.singles) == row_by_row, spy.singles


# ---------------------------------------------------------------------------
# Expressions with shapes: a grammar over a closed set of per-row shapes
# ---------------------------------------------------------------------------

VARIABLES = {
    "x": (),
    "y": (),
    "u": ("n",),
    "w": ("n",),
    "p": ("m",),
    "A": ("n", "n"),
    "M": ("n", "m"),
    "T": ("k", "n", "m"),
}

UNARY = [
    "sin({})",
    "cos({})",
    "tanh({})",
    "exp(({}) / 4)",
    "abs({})",
    "sqrt(({})**2 + 1)",
    "log(1 + ({})**2)",
    "sigmoid({})",
    "softplus({})",
    "relu({})",
    "-({})",
    "({})**2",
    "atan({})",
    # kinks and domain edges, reached at the integer points: warnings per row
    "sqrt(abs({}))",
    "log(abs({}))",
]
BINARY = [
    "({a}) + ({b})",
    "({a}) - ({b})",
    "({a}) * ({b})",
    "({a}) / (1 + ({b})**2)",
    "({a}) / ({b})",
    "max({a}, {b})",
    "min({a}, {b})",
    "({a}) ** 2 * ({b})",
    "where(({a}) > ({b}), {a}, {b})",
    "maximum({a}, {b})",
]
# Powers whose base is an intermediate and whose exponent (or exponent - 1, in the
# gradient) is not 0 or 1.  At a per-row shape () the single line computes them on NumPy
# scalars, whose ``**`` is C's pow(), while the batch (arrays) runs NumPy's SIMD pow
# loop: on CPUs with AVX-512 the two differ in the last bit for about 0.1-5% of points.
# That is a real difference (_SCALAR_POW_DIFFERS, test_scalar_power_of_an_intermediate
# below: an xfail until core/ops.py computes pow with the ufunc), so while it lasts these
# templates are used only where the per-row shape is not () (arrays on both paths) or the
# line runs row by row.
ARRAY_UNARY = ["({})**3", "abs({})**0.5"]
ARRAY_BINARY = ["(1 + ({a})**2) ** (({b}) / 3)"]
REDUCERS = ["sum", "mean", "max", "min", "prod", "norm"]
SCALAR_LEAVES = ["2", "0.5", "(-1.5)"]


def _shape_of(dims: tuple, n: int, m: int, k: int) -> tuple:
    return tuple({"n": n, "m": m, "k": k}[d] for d in dims)


def _index_choices(d: int) -> list:
    return ["0", "-1", ":", "1:", ":2"] + (["1"] if d > 1 else [])


@functools.cache
def grammar(n: int, m: int, k: int) -> dict:
    """For each per-row shape of the closed set: how to build an expression of that shape."""
    leaves: dict = {}
    for name, dims in VARIABLES.items():
        leaves.setdefault(_shape_of(dims, n, m, k), []).append(name)
    leaves.setdefault((m, n), []).extend(["M.T", "transpose(M)"])
    leaves.setdefault((m, n, k), []).extend(["T.T", "transpose(T)"])
    leaves[()].extend(SCALAR_LEAVES)
    pattern = itertools.cycle(["x", "2", "y", "-1"])
    leaves[(n,)].append("[" + ", ".join(next(pattern) for _ in range(n)) + "]")
    shapes = sorted(leaves, key=lambda s: (len(s), s))
    table = {
        s: {
            "leaf": leaves[s],
            "broadcast": [],
            "matmul": [],
            "dot": [],
            "reduce": [],
            "index": [],
            "reshape": [],
            "transpose": [],
        }
        for s in shapes
    }
    zeros = {s: np.zeros(s) for s in shapes}
    for s in shapes:
        for o in shapes:
            try:
                if np.broadcast_shapes(s, o) == s:
                    table[s]["broadcast"].append(o)
            except ValueError:
                pass
            if len(s) and len(o):
                try:
                    out = np.matmul(zeros[s], zeros[o]).shape
                except ValueError:
                    out = None
                if out in table:
                    table[out]["matmul"].append((s, o))
            if len(s) == 1 and s == o:
                table[()]["dot"].append((s, o))
            if o != s and math.prod(o) == math.prod(s):
                table[s]["reshape"].append(o)
        if tuple(reversed(s)) in table:
            table[s]["transpose"].append(tuple(reversed(s)))
        r = len(s)
        if r == 0:
            continue
        table[()]["reduce"].append((s, None))
        for i in range(r):
            out = s[:i] + s[i + 1 :]
            if out in table:
                table[out]["reduce"].append((s, i))
                table[out]["reduce"].append((s, i - r))
        for i, j in itertools.combinations(range(r), 2):
            out = tuple(d for a, d in enumerate(s) if a not in (i, j))
            if out in table:
                table[out]["reduce"].append((s, (i, j)))
        for combo in itertools.product(*[_index_choices(d) for d in s]):
            if all(c == ":" for c in combo):
                continue
            index = tuple(
                slice(*[int(b) if b else None for b in c.split(":")]) if ":" in c else int(c)
                for c in combo
            )
            out = zeros[s][index].shape
            if out in table:
                while len(combo) > 1 and combo[-1] == ":":
                    combo = combo[:-1]  # e[0] for e[0, :, :]
                table[out]["index"].append((s, ", ".join(combo)))
    return table


def _weights(table: dict, shape: tuple, scalar_only: bool) -> list:
    """The productions for this shape, with weights.  Array productions come first: a
    sampled_from's first element is what Hypothesis tries most (its simplest example)."""
    entry = table[shape]
    if scalar_only:
        return [("binary", 4), ("unary", 3)]
    kinds = [
        (kind, weight)
        for kind, weight in (
            ("matmul", 3),
            ("reduce", 4),
            ("transpose", 2),
            ("dot", 2),
            ("index", 2),
            ("reshape", 1),
            ("center", 1),
            ("stack", 1),
            ("binary", 4),
            ("unary", 3),
        )
        if kind in ("center", "stack", "binary", "unary") or entry[kind]
    ]
    if not shape:  # (the transpose of a scalar is itself: leave it to rank 1)
        kinds = [k for k in kinds if k[0] not in ("center", "transpose")]
    if len(shape) != 1 or shape[0] > 4:
        kinds = [k for k in kinds if k[0] != "stack"]
    return kinds


def _leaf_choices(table: dict, shape: tuple, scalar_only: bool) -> list:
    """Leaves of a shape, variables first (and twice as likely as anything else)."""
    if scalar_only:
        return ["x", "x", "x", "2", "0.5"]
    leaves = table[shape]["leaf"]
    names = [leaf for leaf in leaves if leaf in VARIABLES]
    return names * 2 + [leaf for leaf in leaves if leaf not in VARIABLES]


@st.composite
def expressions(
    draw, table: dict, shape: tuple, depth: int, scalar_only: bool = False, top: bool = True
):
    """Text of an expression whose value has this per-row shape.

    The root is never a leaf, and a node a leaf in one case of five, so most examples
    nest two to four ops; leaves are mostly variables (a constant subtree is not batched).
    """
    entry = table[shape]
    if depth <= 0 or (not top and draw(st.sampled_from([False] * 4 + [True]))):
        return draw(st.sampled_from(_leaf_choices(table, shape, scalar_only)))
    kinds = _weights(table, shape, scalar_only)
    kind = draw(st.sampled_from([k for k, w in kinds for _ in range(w)]))
    sub = functools.partial(expressions, table, depth=depth - 1, scalar_only=scalar_only, top=False)
    exact_pow = scalar_only or shape != () or not _SCALAR_POW_DIFFERS
    if kind == "unary":
        templates = UNARY + ARRAY_UNARY if exact_pow else UNARY
        return draw(st.sampled_from(templates)).format(draw(sub(shape)))
    if kind == "binary":
        other = () if scalar_only else draw(st.sampled_from(entry["broadcast"]))
        a, b = draw(sub(shape)), draw(sub(other))
        if draw(st.booleans()):
            a, b = b, a
        templates = BINARY + ARRAY_BINARY if exact_pow else BINARY
        return draw(st.sampled_from(templates)).format(a=a, b=b)
    if kind == "matmul":
        sa, sb = draw(st.sampled_from(entry["matmul"]))
        spelling = draw(st.sampled_from(["({}) @ ({})", "matmul({}, {})"]))
        return spelling.format(draw(sub(sa)), draw(sub(sb)))
    if kind == "dot":  # two different vectors: swapped partials are equal when a == b
        sa, _ = draw(st.sampled_from(entry["dot"]))
        a = draw(sub(sa))
        b = draw(sub(sa).filter(lambda b: b != a))
        return f"dot({a}, {b})"
    if kind == "transpose":
        (source,) = entry["transpose"]
        inner = draw(sub(source))
        return draw(st.sampled_from(["transpose({})", "({}).T"])).format(inner)
    if kind == "reshape":
        source = draw(st.sampled_from(entry["reshape"]))
        dims = [str(d) for d in shape] or ["1"]
        if draw(st.booleans()):
            dims[draw(st.integers(0, len(dims) - 1))] = "-1"
        inner = draw(sub(source))
        if not shape:  # a scalar: reshape to [1], then index it
            return f"reshape({inner}, [{dims[0]}])[0]"
        return f"reshape({inner}, [{', '.join(dims)}])"
    if kind == "index":
        source, index = draw(st.sampled_from(entry["index"]))
        return f"({draw(sub(source))})[{index}]"
    if kind == "stack":
        return "[" + ", ".join(draw(sub(shape[1:])) for _ in range(shape[0])) + "]"
    if kind == "center":  # e - reducer(e, axis=i, keepdims=1): a keepdims result broadcasts
        axis = draw(st.integers(-len(shape), len(shape) - 1))
        reducer = draw(st.sampled_from(REDUCERS))
        inner = draw(sub(shape))
        return f"({inner}) - {reducer}({inner}, axis={axis}, keepdims=1)"
    # a reduction
    source, axis = draw(st.sampled_from(entry["reduce"]))
    reducer = draw(st.sampled_from(REDUCERS))
    inner = draw(sub(source))
    if axis is None:
        return f"{reducer}({inner})"
    if isinstance(axis, tuple):
        return f"{reducer}({inner}, axis=[{axis[0]}, {axis[1]}])"
    if reducer in ("max", "min") or draw(st.booleans()):  # max(e, 1) is the elementwise max
        return f"{reducer}({inner}, axis={axis})"
    return f"{reducer}({inner}, {axis})"


def _row_values(rng: np.random.Generator, shapes: dict) -> dict:
    """One point: normal floats, or (often) small integers, for zeros, ties and kinks."""
    if rng.random() < 0.3:
        draw = lambda s: rng.integers(-2, 3, size=s).astype(float)  # noqa: E731
    else:
        draw = lambda s: rng.normal(size=s)  # noqa: E731
    return {
        name: (float(draw(())) if shape == () else draw(shape).tolist())
        for name, shape in shapes.items()
    }


@st.composite
def batch_cases(draw):
    n, m, k = draw(st.integers(2, 4)), draw(st.integers(2, 4)), draw(st.integers(1, 3))
    table = grammar(n, m, k)
    grad_expr = draw(expressions(table, (), 3))
    out_shape = draw(st.sampled_from(sorted(table, key=lambda s: (len(s), s))))
    eval_expr = draw(expressions(table, out_shape, 3))
    order_expr = draw(expressions(table, (), 3, scalar_only=True))
    rows = draw(st.integers(2, 5))
    seed = draw(st.integers(0, 2**32 - 1))
    wrt_mode = draw(st.sampled_from(["all", "all", "some"]))
    return n, m, k, grad_expr, eval_expr, order_expr, rows, seed, wrt_mode


def _inputs(expr: str) -> list:
    return list(parse(expr).inputs)


@settings(
    derandomize=True,
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(batch_cases())
def test_batched_lines_equal_single_lines(case):
    n, m, k, grad_expr, eval_expr, order_expr, rows, seed, wrt_mode = case
    rng = np.random.default_rng(seed)
    shapes = {name: _shape_of(dims, n, m, k) for name, dims in VARIABLES.items()}
    grad_inputs = _inputs(grad_expr)
    wrt = None
    if wrt_mode == "some" and grad_inputs:
        wrt = sorted(rng.choice(grad_inputs, size=min(2, len(grad_inputs)), replace=False).tolist())
    # the hessian of at most two small variables (one forward pass per element)
    small = sorted(grad_inputs, key=lambda v: (math.prod(shapes[v]), v))[:2]
    records = []
    for _ in range(rows):
        point = _row_values(rng, shapes)
        pick = lambda expr, point=point: {v: point[v] for v in _inputs(expr)}  # noqa: E731
        grad_line = {"expr": grad_expr, "vars": pick(grad_expr)}
        if wrt:
            grad_line["wrt"] = wrt
        records.append(grad_line)
        records.append({"expr": eval_expr, "vars": pick(eval_expr), "op": "eval"})
        # order 2: a one-variable scalar expression (x), run row by row
        x = {"x": point["x"]} if "x" in _inputs(order_expr) else {}
        records.append(
            {"expr": order_expr, "vars": x, "order": 2, "wrt": ["x"]}
            if x
            else {"expr": order_expr, "vars": {}, "op": "eval"}
        )
        hess = {"expr": grad_expr, "vars": pick(grad_expr), "op": "hessian"}
        if small:
            hess["wrt"] = small
        records.append(hess)
    lines, code, spy = run_batch_file(records)
    assert code == 0, lines
    assert_same_as_single_lines(records, lines, spy)

    # One vectorised call per group (expression, op, wrt, variable shapes), as cli/batch/engine.py
    # groups lines; the order-2 and hessian lines go one at a time, as documented.
    groups: dict = {}
    for r in records:
        op = r.get("op", "grad")
        if op in ("eval", "grad") and r.get("order", 1) == 1:
            shapes = tuple((k, np.shape(v)) for k, v in r["vars"].items())
            key = (r["expr"], op, tuple(r.get("wrt") or ()) if op == "grad" else (), shapes)
            groups[key] = groups.get(key, 0) + 1
    expected: dict = {}
    for (expr, *_), size in groups.items():
        expected.setdefault(expr, []).append(size)
    singles = sum(1 for r in records if r.get("op") == "hessian" or r.get("order", 1) != 1)
    assert_vectorised(spy, expected, row_by_row=singles)


# ---------------------------------------------------------------------------
# Regression tests for the shapes the suite never built
# ---------------------------------------------------------------------------


def _grad_json(cli, expr, values, *extra):
    r = cli("grad", expr, "--vars", json.dumps(values), "--json", *extra)
    assert r.code == 0, r.out + r.err
    return r.json


def _check_against_single_command(cli, records, lines, op="grad"):
    """Each batch line is the single command's --json document plus "line"."""
    for i, (record, line) in enumerate(zip(records, lines)):
        extra = [str(a) for a in ("--order", record["order"])] if "order" in record else []
        if "wrt" in record:
            extra += ["--wrt", ",".join(record["wrt"])]
        r = cli(
            record.get("op", op),
            record["expr"],
            "--vars",
            json.dumps(record["vars"]),
            "--json",
            *extra,
        )
        assert r.code == 0, r.out + r.err
        assert json.loads(line) == {"line": i + 1, **r.json}, (record, line)


def test_square_matrix_times_vector(cli):
    """``A @ v`` with a 3x3 A: d/dv is A.T @ c, which a rule using A (still 3x3) gets wrong."""
    rng = np.random.default_rng(16)
    records = []
    for _ in range(4):
        A, v, c = rng.normal(size=(3, 3)), rng.normal(size=3), rng.normal(size=3)
        records.append(
            {"expr": "dot(c, A @ v)", "vars": {"A": A.tolist(), "v": v.tolist(), "c": c.tolist()}}
        )
        records.append({"expr": "sum(A @ v)", "vars": {"A": A.tolist(), "v": v.tolist()}})
        records.append({"expr": "sum(v @ A)", "vars": {"A": A.tolist(), "v": v.tolist()}})
    lines, code, spy = run_batch_file(records)
    assert code == 0
    assert_vectorised(spy, {"dot(c, A @ v)": [4], "sum(A @ v)": [4], "sum(v @ A)": [4]})
    assert_same_as_single_lines(records, lines)
    _check_against_single_command(cli, records, lines)
    for record, line in zip(records, lines):
        A, v = np.array(record["vars"]["A"]), np.array(record["vars"]["v"])
        c = np.array(record["vars"].get("c", [1.0, 1.0, 1.0]))
        if record["expr"] == "sum(v @ A)":  # v @ A = A.T @ v: the roles of the sides swap
            want = {"A": np.outer(v, c), "v": A @ c}
        else:
            want = {"A": np.outer(c, v), "v": A.T @ c}
            if "c" in record["vars"]:
                want["c"] = A @ v
        got = json.loads(line)["grad"]
        assert set(got) == set(want)
        for name, value in want.items():  # a closed form computed another way: 1e-12
            np.testing.assert_allclose(got[name], value, rtol=1e-12, atol=1e-14)
        assert not np.allclose(A.T @ c, A @ c)  # the points do tell A from A.T


@pytest.mark.parametrize("dims", [(2, 3, 4), (3, 3, 3)])
def test_rank3_transpose(cli, dims):
    """``transpose``/``.T`` of a rank-3 array reverses all three axes (NumPy's ``.T``)."""
    rng = np.random.default_rng(3)
    records = []
    for _ in range(3):
        T, W = rng.normal(size=dims), rng.normal(size=dims[::-1])
        values = {"T": T.tolist(), "W": W.tolist()}
        records.append({"expr": "sum(transpose(T) * W)", "vars": values})
        records.append({"expr": "sum(T.T[0] * W[1])", "vars": values})
        records.append({"expr": "T.T", "vars": {"T": T.tolist()}, "op": "eval"})
    lines, code, spy = run_batch_file(records)
    assert code == 0
    assert_vectorised(spy, {"sum(transpose(T) * W)": [3], "sum(T.T[0] * W[1])": [3], "T.T": [3]})
    assert_same_as_single_lines(records, lines)
    _check_against_single_command(cli, records, lines)
    for record, line in zip(records, lines):
        doc = json.loads(line)
        T = np.array(record["vars"]["T"])
        if record["expr"] == "T.T":
            assert doc["shape"] == list(dims[::-1])
            assert np.array_equal(doc["value"], np.transpose(T))
            assert np.array_equal(doc["value"], np.einsum("ijk->kji", T))
            continue
        W = np.array(record["vars"]["W"])
        if record["expr"] == "sum(transpose(T) * W)":
            want_T, want_W = np.einsum("kji->ijk", W), np.einsum("ijk->kji", T)
        else:  # T.T[0] is T[:, :, 0].T; W[1] a slab of W
            want_T = np.zeros(dims)
            want_T[:, :, 0] = W[1].T
            want_W = np.zeros(dims[::-1])
            want_W[1] = T[:, :, 0].T
        assert np.array_equal(doc["grad"]["T"], want_T)
        assert np.array_equal(doc["grad"]["W"], want_W)


def test_dot_of_two_different_vectors(cli):
    """``dot(a, b)``: d/da is b and d/db is a (swapped, they agree only when a == b)."""
    rng = np.random.default_rng(5)
    records = []
    for _ in range(4):
        a, b, x = rng.normal(size=4), rng.normal(size=4), float(rng.normal())
        records.append({"expr": "dot(a, b)", "vars": {"a": a.tolist(), "b": b.tolist()}})
        records.append(
            {"expr": "x * dot(a, b + 1)", "vars": {"a": a.tolist(), "b": b.tolist(), "x": x}}
        )
        records.append({"expr": "dot(a, [1, 2, 3, 4])", "vars": {"a": a.tolist()}})
    lines, code, spy = run_batch_file(records)
    assert code == 0
    assert_vectorised(
        spy, {"dot(a, b)": [4], "x * dot(a, b + 1)": [4], "dot(a, [1, 2, 3, 4])": [4]}
    )
    assert_same_as_single_lines(records, lines)
    _check_against_single_command(cli, records, lines)
    for record, line in zip(records, lines):
        got = json.loads(line)
        a = np.array(record["vars"]["a"])
        if record["expr"] == "dot(a, b)":
            b = np.array(record["vars"]["b"])
            assert got["grad"] == {"a": b.tolist(), "b": a.tolist()}
            assert got["value"] == pytest.approx(float(a @ b), rel=1e-15)
        elif record["expr"] == "dot(a, [1, 2, 3, 4])":
            assert got["grad"] == {"a": [1.0, 2.0, 3.0, 4.0]}
        else:
            b, x = np.array(record["vars"]["b"]), record["vars"]["x"]
            np.testing.assert_allclose(got["grad"]["a"], x * (b + 1), rtol=1e-15)
            np.testing.assert_allclose(got["grad"]["b"], x * a, rtol=1e-15)
            assert got["grad"]["x"] == pytest.approx(float(a @ (b + 1)), rel=1e-14)


def test_order_2_lines_are_second_derivatives(cli):
    """``x**3`` at 1, 2, 3 (3x² = 3, 12, 27 against 6x = 6, 12, 18) and ``sin(x)``."""
    points = [1.0, 2.0, 3.0, -0.5]
    records = [{"expr": "x**3", "vars": {"x": x}, "order": 2} for x in points]
    records += [{"expr": "sin(x)", "vars": {"x": x}, "order": 2} for x in points]
    records += [{"expr": "x**3", "vars": {"x": x}} for x in points]  # order 1
    records += [{"expr": "x**3", "vars": {"x": x}, "op": "hessian"} for x in points]
    records += [{"expr": "x**3", "vars": {"x": x}, "order": 3} for x in points]
    lines, code, spy = run_batch_file(records)
    assert code == 0
    assert_same_as_single_lines(records, lines)
    _check_against_single_command(cli, records, lines)
    # the first-order lines are one vectorised group; order 2/3 and hessian lines one by one
    assert_vectorised(spy, {"x**3": [4]}, row_by_row=16)
    docs = [json.loads(line) for line in lines]
    for i, x in enumerate(points):
        cube, sine, first, hess, third = (docs[i + j * len(points)] for j in range(5))
        assert cube["order"] == 2 and cube["value"] == x**3 and cube["grad"] == {"x": 6 * x}
        assert sine["order"] == 2 and sine["value"] == math.sin(x)
        assert sine["grad"]["x"] == pytest.approx(-math.sin(x), rel=1e-15)
        assert "order" not in first and first["grad"] == {"x": 3 * x**2}
        assert hess["hessian"] == {"x": {"x": 6 * x}} and hess["grad"] == {"x": 3 * x**2}
        assert third["order"] == 3 and third["grad"] == {"x": 6.0}
    # and the single command says the same about the named points
    assert _grad_json(cli, "x**3", {"x": 1}, "--order", "2")["grad"] == {"x": 6.0}
    assert _grad_json(cli, "x**3", {"x": 3}, "--order", "2")["grad"] == {"x": 18.0}


def test_order_2_from_the_command_line_default(tmp_path, cli):
    """``--order 2`` on the batch command line applies to every grad line."""
    path = tmp_path / "pts.csv"
    path.write_text("x\n1\n2\n3\n")
    r = cli("batch", str(path), "--expr", "x**3", "--order", "2")
    assert r.code == 0, r.err
    assert [json.loads(line)["grad"] for line in r.out.splitlines()] == [
        {"x": 6.0},
        {"x": 12.0},
        {"x": 18.0},
    ]


def test_warnings_per_row_on_the_vectorised_path(cli):
    """Domain and kink warnings of each row, vectorised, with shapes (vectors, matrices)."""
    logs = "sum(sqrt(v)) + sum(log(A @ v))"
    eye = np.eye(3).tolist()
    records = [
        {"expr": logs, "vars": {"v": v, "A": eye}}
        for v in ([1, 4, 9], [0, 4, 9], [1, -4, 9], [2, 3, 5])
    ] + [
        {"expr": "max(T) + norm(u)", "vars": {"T": [[[1, 2], [3, 3]]] * 2, "u": [0, 0]}},
        {
            "expr": "max(T) + norm(u)",
            "vars": {"T": [[[1, 2], [3, 4]]] * 1 + [[[0, 0], [0, 0]]], "u": [1, 0]},
        },
        # scalars only: written through the per-group line templates, the first row warning
        {"expr": "log(x) + abs(y)", "vars": {"x": 0, "y": 0}},
        {"expr": "log(x) + abs(y)", "vars": {"x": 2, "y": 1}},
        {"expr": "log(x) + abs(y)", "vars": {"x": -1, "y": 0}},
        {"expr": "log(x) + abs(y)", "vars": {"x": 0, "y": 0}},
    ]
    lines, code, spy = run_batch_file(records)
    assert code == 0
    assert_vectorised(spy, {logs: [4], "max(T) + norm(u)": [2], "log(x) + abs(y)": [4]})
    assert_same_as_single_lines(records, lines)
    _check_against_single_command(cli, records, lines)
    warnings = [json.loads(line).get("warnings", []) for line in lines]
    assert warnings[0] == [] and warnings[3] == []
    assert warnings[1] and warnings[2] and warnings[1] != warnings[2]
    assert len(warnings[4]) == 2 and warnings[5] == []
    assert warnings[6] and warnings[6] == warnings[9] and warnings[7] == []
    assert warnings[8] and warnings[8] != warnings[6]


def test_broadcast_over_a_leading_axis_of_size_1_keeps_each_rows_zero_signs():
    """Fixed in core/batch.py: an operand broadcast against a leading axis of size 1.

    One row un-broadcasts ``A`` (2, 2) from ``T - A`` (1, 2, 2) with a NumPy sum over the
    leading axis, which starts from +0.0: a -0.0 cotangent comes back as 0.0.  The batch
    padded ``A`` to (B, 1, 2, 2) with a reshape, whose gradient is a reshape back: no sum,
    so the batch printed -0.0 where the single line prints 0.0.  The padding's gradient
    now sums over the padded axes.
    """
    rng = np.random.default_rng(8)
    records = []
    for _ in range(3):
        T, A, u = rng.normal(size=(1, 2, 2)), rng.normal(size=(2, 2)), rng.normal(size=3)
        records.append({"expr": "max(T - A)", "vars": {"T": T.tolist(), "A": A.tolist()}})
        records.append({"expr": "max([[1, 2, 3]] - u)", "vars": {"u": u.tolist()}})
        records.append({"expr": "max(x - T)", "vars": {"x": float(rng.normal()), "T": T.tolist()}})
        records.append({"expr": "sum(max([u, -u], axis=0) - u)", "vars": {"u": u.tolist()}})
    lines, code, spy = run_batch_file(records)
    assert code == 0
    assert_vectorised(
        spy,
        {
            "max(T - A)": [3],
            "max([[1, 2, 3]] - u)": [3],
            "max(x - T)": [3],
            "sum(max([u, -u], axis=0) - u)": [3],
        },
    )
    assert_same_as_single_lines(records, lines)
    for record, line in zip(records, lines):
        if record["expr"] in ("max(T - A)", "max([[1, 2, 3]] - u)"):
            grad = json.loads(line)["grad"]["A" if "A" in record["vars"] else "u"]
            flat = np.ravel(grad)
            assert sorted(flat.tolist()) == [-1.0] + [0.0] * (flat.size - 1)
            assert not np.signbit(flat[flat == 0]).any(), line  # 0.0, as one row alone


@pytest.mark.parametrize(
    "expr",
    [
        "sum(x * sin(u * x)) + x * y",  # x padded for the vector operand
        "sum(u * sin(A * u)) + sum(u) + dot(u, u)",  # u padded for the matrix operand
        "dot(u, u.T - sum(u.T))",  # the transpose of a vector
        "sum(x * (A @ (u * x))) + x",  # matrix @ vector
        "sum([x, x * y, 1] * sin(u * x)) + x",  # an array literal (a guard: it agreed)
        "sum(u @ A) + dot(u @ A, u) + sum(u)",  # vector @ matrix (a guard: it agreed)
    ],
)
def test_gradients_summed_in_the_rows_order(expr):
    """Fixed in core/batch.py: one node per node of the row's graph.

    Backward sums the cotangents reaching a variable in an order set by the graph's
    shape (Kahn's algorithm over a LIFO); with three or more of them the order shows in
    the last bit.  The batch used to add a reshape node wherever it padded an operand
    (and promoted a vector for ``@``) and to leave out the transpose of a vector, so
    the first four gradients differed from one line's in the last bit at 10-70% of the
    points.
    """
    rng = np.random.default_rng(12)
    records = [
        {
            "expr": expr,
            "vars": {
                k: v
                for k, v in (
                    ("x", float(rng.normal())),
                    ("y", float(rng.normal())),
                    ("u", rng.normal(size=3).tolist()),
                    ("A", rng.normal(size=(3, 3)).tolist()),
                )
                if k in _inputs(expr)
            },
        }
        for _ in range(40)
    ]
    lines, code, spy = run_batch_file(records)
    assert code == 0
    assert_vectorised(spy, {expr: [40]})
    assert_same_as_single_lines(records, lines)


def test_scalar_power_of_an_intermediate():
    """``sin(x)**y`` and the gradient of ``sin(x)**2.5``: batch == single, bit for bit."""
    rng = np.random.default_rng(6)
    records = [
        {"expr": expr, "vars": {"x": float(x), "y": float(y)} if "y" in expr else {"x": float(x)}}
        for expr in ("sin(x)**y", "sin(x)**2.5", "(1 + sqrt(x**2 + 1)**2) ** (x / 3)")
        for x, y in rng.uniform(0.1, 1.5, size=(40, 2))
    ]
    lines, code, spy = run_batch_file(records)
    assert code == 0
    assert_vectorised(
        spy, {"sin(x)**y": [40], "sin(x)**2.5": [40], "(1 + sqrt(x**2 + 1)**2) ** (x / 3)": [40]}
    )
    assert_same_as_single_lines(records, lines)


def test_a_non_finite_row_leaves_the_other_rows_zero_signs():
    """``max(u / x)``: row x=-2 alone has d/du = [-0.5, -0.0]; a row x=0 beside it (inf)
    must not turn that -0.0 into 0.0."""
    records = [{"expr": "max(u / x)", "vars": {"u": [1.0, 2.0], "x": x}} for x in (-2.0, 0.0, -3.0)]
    lines, code, spy = run_batch_file(records)
    assert code == 0
    assert_vectorised(spy, {"max(u / x)": [3]})
    first = json.loads(lines[0])["grad"]["u"]
    assert first == [-0.5, 0.0] and math.copysign(1.0, first[1]) == -1.0, first  # -0.0
    assert_same_as_single_lines(records, lines)
