"""Test cases for the functions of core/ops/arrays.py, gathered by the op-wide test modules.

* ``GRAD_CASES``: keyword arguments of tests/test_ops_gradcheck.py's ``Case`` (op, shapes,
  attrs, samplers: functions (rng, shape) -> float64 array, diff, label): each op's vjp, jvp
  and second order against central differences.
* ``FORWARD_CASES``: keyword arguments of tests/test_forward_oracles.py's ``add`` (op, expr,
  values, expected, exact, zero_sign, label): the value of an expression against an
  independent oracle (Python loops, math, fractions, mpmath; never the same NumPy call).
* ``OP_TABLE_SAMPLES``: op name -> one value per argument for tests/test_op_table.py's sample
  (where a three-vector does not fit, as a square matrix for det); ``OP_TABLE_ATTRS``: op
  name -> the attributes it needs there (a required Param).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

NAN = math.nan
INF = math.inf


# ---------------------------------------------------------------------------
# Samplers: (rng, shape) -> float64 array
# ---------------------------------------------------------------------------


def _uniform(lo, hi):
    return lambda rng, shape: rng.uniform(lo, hi, size=shape)


def _distinct(rng, shape):
    # values at least 0.2 apart: no ties, so sort's permutation is the same within H of them
    n = int(np.prod(shape, dtype=int))
    values = rng.permutation(n) * 0.3 - 0.15 * n + rng.uniform(0, 0.1, size=n)
    return values.reshape(shape)


def _with_zeros(count):
    """Values in +-(0.5 .. 1.5) with ``count`` zeros planted in each slice along the last axis
    (or in the whole array when it is a vector or flattened): cumprod's 0/0 cases."""

    def sample(rng, shape):
        x = rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)
        rows = x.reshape(-1, shape[-1])
        for row in rows:
            row[rng.choice(shape[-1], size=count, replace=False)] = 0.0
        return rows.reshape(shape)

    return sample


_DEFAULT = _uniform(-2.0, 2.0)
_SIGNED = _uniform(-1.5, 1.5)


def _case(op, shapes, attrs=None, samplers=None, label=""):
    kw = {"op": op, "shapes": shapes, "attrs": attrs or {}, "label": label}
    if samplers is not None:
        kw["samplers"] = samplers
    return kw


GRAD_CASES: list[dict] = []

for _op in ("softmax", "log_softmax"):
    for _shape, _axis in (((4,), -1), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4), -2), ((1,), 0)):
        GRAD_CASES.append(_case(_op, (_shape,), {"axis": _axis}, (_DEFAULT,)))

for _shape, _axis in (((5,), None), ((3, 4), 0), ((3, 4), -1), ((2, 3, 2), None), ((), None)):
    GRAD_CASES.append(_case("cumprod", (_shape,), {"axis": _axis}, (_SIGNED,)))
for _count, _label in ((1, "one zero"), (2, "two zeros"), (3, "three zeros")):
    GRAD_CASES.append(
        _case("cumprod", ((6,),), {"axis": None}, (_with_zeros(_count),), label=_label)
    )
    GRAD_CASES.append(
        _case("cumprod", ((3, 5),), {"axis": 1}, (_with_zeros(_count),), label=_label)
    )
GRAD_CASES.append(
    _case("cumprod", ((4, 3),), {"axis": 0}, (_with_zeros(1),), label="zeros across the axis")
)
GRAD_CASES.append(_case("cumprod", ((3,),), {"axis": 0}, (lambda r, s: np.zeros(s),), "all 0"))

# split (issue 13): one part of numpy.split
for _shape, _sections, _axis, _part in (
    ((6,), 3, 0, 0),
    ((6,), 3, 0, 2),
    ((2, 6), 2, 1, 1),
    ((2, 6), 2, -1, 0),
    ((4, 3), (1, 3), 0, 1),
    ((3, 4), (1, 3), -1, 2),
    ((3, 4), (-1,), -1, 0),
):
    GRAD_CASES.append(
        _case(
            "split",
            (_shape,),
            {"indices_or_sections": _sections, "axis": _axis, "part": _part},
            (_DEFAULT,),
        )
    )

for _shape, _shift, _axis in (
    ((5,), 2, None),
    ((5,), -7, 0),
    ((3, 4), 1, None),
    ((3, 4), 3, 1),
    ((3, 4), -1, (0, 1)),
    ((), 4, None),
):
    GRAD_CASES.append(_case("roll", (_shape,), {"shift": _shift, "axis": _axis}))

for _shape, _axis in (((5,), -1), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4), -2)):
    GRAD_CASES.append(_case("sort", (_shape,), {"axis": _axis}, (_distinct,)))

for _shape, _repeats, _axis in (
    ((4,), 3, None),
    ((3, 2), 2, None),
    ((3, 2), 2, 0),
    ((3, 2), 3, -1),
    ((2, 3), 0, 1),
    ((), 3, None),
):
    GRAD_CASES.append(_case("repeat", (_shape,), {"repeats": _repeats, "axis": _axis}))

for _shape, _reps in (((3,), 2), ((2, 3), 3), ((), 4), ((2,), 0)):
    GRAD_CASES.append(_case("tile", (_shape,), {"reps": _reps}))

# issue 27: tile with a list of counts (NumPy's), transpose with axes, kron, inner, cross,
# convolve and correlate
for _shape, _reps in (
    ((3,), (2, 2)),
    ((2, 3), (2, 1)),
    ((2, 3), (3,)),
    ((2, 1, 2), (1, 3, 2)),
    ((), (2, 3)),
    ((2, 2), ()),
    ((3,), (0, 2)),
):
    GRAD_CASES.append(_case("tile", (_shape,), {"reps": _reps}, label="counts"))
for _shape, _axes in (((2, 3, 4), (1, 0, 2)), ((2, 3, 4), (-1, 0, 1)), ((3, 2), (0, 1)), ((4,), 0)):
    GRAD_CASES.append(_case("transpose", (_shape,), {"axes": _axes}))
for _shapes in (((3,), (2,)), ((2, 2), (3, 2)), ((3,), (2, 2)), ((), (2, 3)), ((2, 1, 2), (2, 3))):
    GRAD_CASES.append(_case("kron", _shapes))
for _shapes in (((3,), (3,)), ((2, 3), (3,)), ((2, 3), (4, 3)), ((2, 2, 3), (3,)), ((), (2, 3))):
    GRAD_CASES.append(_case("inner", _shapes))
for _shapes in (((3,), (3,)), ((2, 3), (2, 3)), ((2, 3), (3,)), ((4, 1, 3), (2, 3))):
    GRAD_CASES.append(_case("cross", _shapes))
for _op, _shapes in (
    ("kron", ((2, 2), (3,))),
    ("inner", ((2, 3), (3,))),
    ("cross", ((2, 3), (3,))),
    ("convolve", ((4,), (3,))),
    ("correlate", ((3,), (5,))),
):
    for _diff in ((True, False), (False, True)):
        GRAD_CASES.append({**_case(_op, _shapes, label=f"only {_diff.index(True)}"), "diff": _diff})
for _op in ("convolve", "correlate"):
    for _n, _m in ((5, 3), (3, 5), (4, 4), (1, 3), (4, 1), (2, 5), (6, 2)):
        for _mode in ("full", "same", "valid"):
            GRAD_CASES.append(_case(_op, ((_n,), (_m,)), {"mode": _mode}))

for _shapes, _axis in (
    (((3,), (3,)), 0),
    (((3,), (3,), (3,)), 1),
    (((2, 3), (2, 3)), -1),
    (((2, 3), (2, 3)), 1),
    (((), ()), 0),
    (((4,),), -2),
):
    GRAD_CASES.append(_case("stack_axis", _shapes, {"axis": _axis}))


# ---------------------------------------------------------------------------
# Independent oracles (Python loops, math.fsum, mpmath)
# ---------------------------------------------------------------------------


def _rows(a, axis):
    """The 1-D slices of the nested list ``a`` along ``axis`` with a setter for each: loops
    over index tuples, no NumPy."""
    shape = []
    v = a
    while isinstance(v, list):
        shape.append(len(v))
        v = v[0] if v else None
    axis %= len(shape)
    others = [range(s) for i, s in enumerate(shape) if i != axis]

    def cells(rest):
        out = [[]]
        for r in rest:
            out = [c + [k] for c in out for k in r]
        return out

    def get(idx):
        v = a
        for k in idx:
            v = v[k]
        return v

    result = []
    for rest in cells(others):
        idxs = []
        for k in range(shape[axis]):
            idx = list(rest)
            idx.insert(axis, k)
            idxs.append(tuple(idx))
        result.append((idxs, [get(i) for i in idxs]))
    return shape, result


def _along(fn, a, axis):
    """``fn`` (a list -> a list of the same length) applied along ``axis`` of the nested
    list ``a``."""
    shape, rows = _rows(a, axis)
    out = _zeros(shape)
    for idxs, values in rows:
        for idx, v in zip(idxs, fn(values)):
            target = out
            for k in idx[:-1]:
                target = target[k]
            target[idx[-1]] = v
    return out


def _zeros(shape):
    if not shape:
        return 0.0
    return [_zeros(shape[1:]) for _ in range(shape[0])]


def _flatten(a):
    return [x for v in a for x in _flatten(v)] if isinstance(a, list) else [a]


def o_softmax(row):
    """mpmath at 40 digits; a slice with nan, +inf or only -inf is nan (torch.softmax)."""
    if any(math.isnan(v) or v == INF for v in row) or all(v == -INF for v in row):
        return [NAN] * len(row)
    with mpmath.workdps(40):
        m = max(row)
        e = [mpmath.exp(mpmath.mpf(v) - m) if v != -INF else mpmath.mpf(0) for v in row]
        s = mpmath.fsum(e)
        return [float(x / s) for x in e]


def o_log_softmax(row):
    if any(math.isnan(v) or v == INF for v in row) or all(v == -INF for v in row):
        return [NAN] * len(row)
    with mpmath.workdps(40):
        m = max(row)
        s = mpmath.fsum(mpmath.exp(mpmath.mpf(v) - m) for v in row if v != -INF)
        lse = mpmath.log(s)
        return [-INF if v == -INF else float(mpmath.mpf(v) - m - lse) for v in row]


def o_cumprod(row):
    out, p = [], 1.0
    for v in row:
        p = p * v
        out.append(p)
    return out


def o_roll(row, shift):
    n = len(row)
    return [row[(i - shift) % n] for i in range(n)] if n else []


def o_sort(row):
    """Insertion sort, stable, NaN after every number (NumPy's order)."""
    numbers = [v for v in row if not math.isnan(v)]
    out = []
    for v in numbers:
        k = len(out)
        while k > 0 and out[k - 1] > v:
            k -= 1
        out.insert(k, v)
    return out + [NAN] * (len(row) - len(numbers))


FORWARD_CASES: list[dict] = []


def _add(op, expr, values, expected, *, exact=True, zero_sign=True, label=""):
    FORWARD_CASES.append(
        {
            "op": op,
            "expr": expr,
            "values": values,
            "expected": expected,
            "exact": exact,
            "zero_sign": zero_sign,
            "label": label,
        }
    )


def _build():
    v = [1.0, 2.0, 3.0, -1.5]
    M = [[1.0, -2.0, 0.5], [3.0, 3.0, -0.0]]
    _add("softmax", "softmax(v)", {"v": v}, o_softmax(v), exact=False, label="vector")
    _add("softmax", "softmax(M, 0)", {"M": M}, _along(o_softmax, M, 0), exact=False, label="cols")
    _add("softmax", "softmax(M)", {"M": M}, _along(o_softmax, M, 1), exact=False, label="rows")
    big = [1000.0, 999.0, -1000.0]
    _add("softmax", "softmax(v)", {"v": big}, o_softmax(big), exact=False, label="no overflow")
    edges = [[-INF, -INF], [INF, 1.0], [-INF, 1.0], [NAN, 1.0], [1e308, -1e308]]
    _add(
        "softmax",
        "softmax(E, axis=1)",
        {"E": edges},
        _along(o_softmax, edges, 1),
        exact=False,
        label="inf nan",
    )
    _add("log_softmax", "log_softmax(v)", {"v": v}, o_log_softmax(v), exact=False, label="vector")
    _add(
        "log_softmax",
        "log_softmax(M, axis=0)",
        {"M": M},
        _along(o_log_softmax, M, 0),
        exact=False,
        label="cols",
    )
    _add(
        "log_softmax",
        "log_softmax(v)",
        {"v": big},
        o_log_softmax(big),
        exact=False,
        label="no overflow",
    )
    _add(
        "log_softmax",
        "log_softmax(E)",
        {"E": edges},
        _along(o_log_softmax, edges, 1),
        exact=False,
        label="inf nan",
    )

    w = [2.0, -0.5, NAN, 4.0]
    _add("cumprod", "cumprod(w)", {"w": w}, o_cumprod(w), label="nan carries on")
    z = [3.0, -0.0, 2.0, INF]
    _add("cumprod", "cumprod(z)", {"z": z}, o_cumprod(z), label="-0 and 0*inf")
    _add("cumprod", "cumprod(M)", {"M": M}, o_cumprod(_flatten(M)), label="flat")
    _add("cumprod", "cumprod(M, axis=0)", {"M": M}, _along(o_cumprod, M, 0), label="cols")
    _add("cumprod", "cumprod(M, -1)", {"M": M}, _along(o_cumprod, M, 1), label="rows")
    huge = [1e200, 1e200, 0.0]
    _add("cumprod", "cumprod(h)", {"h": huge}, o_cumprod(huge), label="overflow then 0")
    _add("cumprod", "cumprod(x)", {"x": -0.0}, [-0.0], label="scalar")

    r = [1.0, -0.0, NAN, INF, 5.0]
    _add("roll", "roll(r, 2)", {"r": r}, o_roll(r, 2), label="vector")
    _add("roll", "roll(r, -12)", {"r": r}, o_roll(r, -12), label="negative, past the length")
    _add("roll", "roll(M, 1)", {"M": M}, _unflat(o_roll(_flatten(M), 1), 2, 3), label="flat")
    _add("roll", "roll(M, 1, axis=1)", {"M": M}, _along(lambda t: o_roll(t, 1), M, 1), label="rows")
    _add(
        "roll",
        "roll(M, shift=-1, axis=[0, 1])",
        {"M": M},
        _along(lambda t: o_roll(t, -1), _along(lambda t: o_roll(t, -1), M, 0), 1),
        label="two axes",
    )
    _add("roll", "roll(x, 3)", {"x": NAN}, NAN, label="scalar")

    s = [3.0, NAN, -INF, 1.0, -0.0, INF, 1.0, NAN]
    _add("sort", "sort(s)", {"s": s}, o_sort(s), zero_sign=True, label="nan last")
    S = [[2.0, -1.0, 0.5], [-3.0, 4.0, NAN]]
    _add("sort", "sort(S)", {"S": S}, _along(o_sort, S, 1), label="rows")
    _add("sort", "sort(S, axis=0)", {"S": S}, _along(o_sort, S, 0), label="cols")
    # -0.0 and 0.0 are equal: the stable order keeps them as they came
    _add("sort", "sort(t)", {"t": [0.0, -0.0, -1.0]}, [-1.0, 0.0, -0.0], label="signed zeros")

    q = [1.5, NAN, -0.0]
    _add("repeat", "repeat(q, 2)", {"q": q}, [a for a in q for _ in range(2)], label="vector")
    _add("repeat", "repeat(q, 0)", {"q": q}, [], label="none")
    _add(
        "repeat",
        "repeat(M, 2)",
        {"M": M},
        [a for a in _flatten(M) for _ in range(2)],
        label="flat",
    )
    _add("repeat", "repeat(M, 2, axis=0)", {"M": M}, [M[0], M[0], M[1], M[1]], label="rows")
    _add(
        "repeat",
        "repeat(M, repeats=3, axis=-1)",
        {"M": M},
        [[a for a in row for _ in range(3)] for row in M],
        label="cols",
    )
    _add("repeat", "repeat(x, 3)", {"x": INF}, [INF, INF, INF], label="scalar")

    _add("tile", "tile(q, 2)", {"q": q}, q + q, label="vector")
    _add("tile", "tile(M, 3)", {"M": M}, [row * 3 for row in M], label="last axis")
    _add("tile", "tile(x, 2)", {"x": -0.0}, [-0.0, -0.0], label="scalar")
    _add("tile", "tile(q, 0)", {"q": q}, [], label="none")

    a, b = [1.0, NAN, -0.0], [INF, 2.0, 3.0]
    _add("stack_axis", "stack([a, b])", {"a": a, "b": b}, [a, b], label="rows")
    _add(
        "stack_axis",
        "stack([a, b], axis=1)",
        {"a": a, "b": b},
        [[a[i], b[i]] for i in range(3)],
        label="cols",
    )
    _add(
        "stack_axis",
        "stack([M, M, M], -1)",
        {"M": M},
        [[[M[i][j]] * 3 for j in range(3)] for i in range(2)],
        label="last",
    )
    _add("stack_axis", "stack([x, y])", {"x": 1.0, "y": -0.0}, [1.0, -0.0], label="numbers")


def _build_split():
    v = [1.0, -2.0, 3.0, -0.0, NAN, INF]
    for k in range(3):
        _add("split", f"split(v, 3)[{k}]", {"v": v}, v[2 * k : 2 * k + 2], label=f"part {k}")
    _add("split", "a, b, c = split(v, 3); c", {"v": v}, v[4:], label="unpacked")
    M = [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]
    _add(
        "split",
        "split(M, 2, axis=-1)[1]",
        {"M": M},
        [row[2:] for row in M],
        label="negative axis",
    )
    _add(
        "split",
        "split(M, [1, 3], axis=-1)[2]",
        {"M": M},
        [row[3:] for row in M],
        label="indices, negative axis",
    )


def _unflat(flat, rows, cols):
    return [flat[i * cols : (i + 1) * cols] for i in range(rows)]


def o_full_convolution(a, w):
    """sum_i a[i] w[k - i] for k = 0 .. n + m - 2, by loops (math.fsum)."""
    n, m = len(a), len(w)
    return [
        math.fsum(a[i] * w[k - i] for i in range(n) if 0 <= k - i < m) for k in range(n + m - 1)
    ]


def o_convolve(a, v, mode, correlate=False):
    """NumPy's convolve (or correlate: v reversed) by loops; the modes as NumPy's docs put
    them: "same" centred on the longer input's length, "valid" where the inputs overlap whole."""
    full = o_full_convolution(a, v[::-1] if correlate else v)
    n, m = len(a), len(v)
    short, long = min(n, m), max(n, m)
    if mode == "full":
        return full
    if mode == "valid":
        return full[short - 1 : long]
    start = n // 2 if correlate and m > n else (short - 1) // 2
    return full[start : start + long]


def o_kron(a, b):
    """The Kronecker product of two matrices (nested lists), by loops."""
    return [[x * y for x in ra for y in rb] for ra in a for rb in b]


def o_cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _build_peer():
    """issue 27: tile's counts, transpose's axes, kron, inner, cross, convolve, correlate."""
    q = [1.0, NAN, -0.0]
    M = [[1.0, -2.0, 0.5], [3.0, INF, -0.0]]
    _add("tile", "tile(q, [2, 2])", {"q": q}, [q + q, q + q], label="counts, promoted")
    _add("tile", "tile(M, [2, 1])", {"M": M}, M + M, label="counts, rows")
    _add("tile", "tile(M, [3])", {"M": M}, [row * 3 for row in M], label="one count")
    _add("tile", "tile(x, [1, 2])", {"x": -0.0}, [[-0.0, -0.0]], label="counts of a number")
    _add("tile", "tile(M, [2, 0])", {"M": M}, [[], [], [], []], label="no columns")
    T = [[[1.0, 2.0, 3.0]], [[4.0, NAN, -0.0]]]  # shape (2, 1, 3)
    moved = [[[T[i][j][k] for j in range(1)] for i in range(2)] for k in range(3)]
    _add("transpose", "transpose(T, [2, 0, 1])", {"T": T}, moved, label="axes")
    _add(
        "transpose",
        "transpose(T, axes=[-2, 0, -1])",
        {"T": T},
        [[T[i][j] for i in range(2)] for j in range(1)],
        label="negative axes",
    )
    _add("transpose", "transpose(q, 0)", {"q": q}, q, label="one axis")
    A, B = [[1.0, -2.0], [INF, 0.5]], [[0.0, 3.0]]
    _add("kron", "kron(A, B)", {"A": A, "B": B}, o_kron(A, B), label="inf times 0")
    _add(
        "kron",
        "kron(a, b)",
        {"a": [2.0, -0.0], "b": [1.0, 3.0, -1.0]},
        [2.0, 6.0, -2.0, -0.0, -0.0, 0.0],
        label="vectors",
    )
    _add("kron", "kron(x, b)", {"x": 2.0, "b": [1.0, NAN]}, [2.0, NAN], label="a number")
    _add("inner", "inner(a, b)", {"a": [1.0, 2.0, 3.0], "b": [4.0, -5.0, 6.0]}, 12.0)
    _add(
        "inner",
        "inner(A, C)",
        {"A": [[1.0, 2.0], [3.0, 4.0]], "C": [[1.0, 0.0], [0.0, 1.0], [2.0, -1.0]]},
        [[1.0, 2.0, 0.0], [3.0, 4.0, 2.0]],
        label="matrices",
    )
    _add("inner", "inner(x, b)", {"x": 3.0, "b": [1.0, INF]}, [3.0, INF], label="a number")
    _add("inner", "inner(a, b)", {"a": [INF, 1.0], "b": [0.0, 1.0]}, NAN, label="inf times 0")
    a, b = [1.0, 2.0, 3.0], [-4.0, 0.5, 2.0]
    _add("cross", "cross(a, b)", {"a": a, "b": b}, o_cross(a, b))
    _add(
        "cross",
        "cross(R, b)",
        {"R": [a, b], "b": b},
        [o_cross(a, b), o_cross(b, b)],
        zero_sign=False,
        label="broadcast",
    )
    e = [INF, 0.0, 0.0]
    _add(
        "cross",
        "cross(u, f)",
        {"u": e, "f": [0.0, 1.0, 0.0]},
        [0.0, NAN, INF],
        zero_sign=False,
        label="inf",
    )
    x, y = [1.0, 2.0, -3.0, 0.5], [2.0, -1.0, 4.0]
    for name, default in (("convolve", "full"), ("correlate", "valid")):
        flip = name == "correlate"
        for mode in ("full", "same", "valid"):
            for p_, q_, lab in ((x, y, "longer first"), (y, x, "shorter first")):
                _add(
                    name,
                    f"{name}(p, q, '{mode}')" if mode != default else f"{name}(p, q)",
                    {"p": p_, "q": q_},
                    o_convolve(p_, q_, mode, flip),
                    exact=False,
                    label=f"{mode}, {lab}",
                )
        _add(
            name,
            f"{name}(p, q, 'same')",
            {"p": [1.0, 2.0], "q": [1.0, 0.0, 0.0, 0.0]},
            o_convolve([1.0, 2.0], [1.0, 0.0, 0.0, 0.0], "same", flip),
            label="same, even",
        )
        _add(
            name,
            f"{name}(p, q)",
            {"p": [INF, 1.0], "q": [1.0]},
            o_convolve([INF, 1.0], [1.0], default, flip),
            label="inf",
        )


_build()
_build_split()
_build_peer()


# ---------------------------------------------------------------------------
# tests/test_op_table.py's sample: vectors of three, axis=0, and these
# ---------------------------------------------------------------------------

OP_TABLE_SAMPLES: dict[str, list] = {}
OP_TABLE_ATTRS: dict[str, dict] = {
    "roll": {"shift": 1},
    "repeat": {"repeats": 2},
    "tile": {"reps": 2},
    "split": {"indices_or_sections": 3, "part": 1},
}
