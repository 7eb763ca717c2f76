"""Test cases for the functions of core/ops/linalg.py, gathered by the op-wide test modules.

* ``GRAD_CASES``: keyword arguments of tests/test_ops_gradcheck.py's ``Case`` (op, shapes,
  attrs, samplers: functions (rng, shape) -> float64 array, diff, label): each op's vjp, jvp
  and second order against central differences.
* ``FORWARD_CASES``: keyword arguments of tests/test_forward_oracles.py's ``add`` (op, expr,
  values, expected, exact, zero_sign, label): the value of an expression against an
  independent oracle (Python loops, math, fractions, mpmath; never the same NumPy call).
* ``OP_TABLE_SAMPLES``: op name -> one value per argument for tests/test_op_table.py's sample
  (where a three-vector does not fit, as a square matrix for det); ``OP_TABLE_ATTRS``: op
  name -> the attributes it needs there (a required Param).

The oracles here are exact: determinants, inverses and solutions in ``fractions.Fraction``
(Gaussian elimination), Cholesky factors with mpmath at 40 digits, and Python loops for
trace, diag, outer, triu, tril and tensordot.  The samplers give matrices well inside each
op's domain: diagonally dominant (det, inv, solve: far from singular), symmetric positive
definite with eigenvalues >= 1 (cholesky), and exactly singular integer matrices (det's
gradient there is made from the minors).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

from autograd_cli.core.ops import Word

NAN = math.nan
INF = math.inf


# ---------------------------------------------------------------------------
# Samplers: (rng, shape) -> float64 array; shape (..., n, n) for the square ones
# ---------------------------------------------------------------------------


def well_conditioned(rng, shape):
    """Entries in [-1, 1] plus n on the diagonal: strictly diagonally dominant, so each
    matrix is invertible with a condition number of a few units."""
    n = shape[-1]
    return rng.uniform(-1.0, 1.0, size=shape) + n * np.eye(n)


def spd(rng, shape):
    """M Mᵀ + I with M's entries in [-1, 1]: symmetric (exactly), eigenvalues >= 1."""
    n = shape[-1]
    m = rng.uniform(-1.0, 1.0, size=shape)
    a = m @ np.swapaxes(m, -1, -2) + np.eye(n)
    return (a + np.swapaxes(a, -1, -2)) / 2


def singular(rng, shape):
    """Small integers whose last row repeats the first: det is exactly 0 in floating point
    (LU elimination makes the repeated row exactly zero), its gradient is not."""
    a = rng.integers(-3, 4, size=shape).astype(np.float64)
    a[..., -1, :] = a[..., 0, :]
    return a


def first_singular(rng, shape):
    """A stack whose first matrix is singular (as ``singular``), the others well conditioned:
    det's gradient then takes both of its ways at once."""
    a = well_conditioned(rng, shape)
    a[0] = singular(rng, shape[1:])
    return a


def entries(rng, shape):
    """Plain entries in [-2, 2] (the shape ops: trace, diag, triu, tril, outer, tensordot)."""
    return rng.uniform(-2.0, 2.0, size=shape)


# ---------------------------------------------------------------------------
# GRAD_CASES
# ---------------------------------------------------------------------------

GRAD_CASES: list[dict] = []


def _grad(op, shapes, samplers, attrs=None, diff=None, label=""):
    GRAD_CASES.append(
        {
            "op": op,
            "shapes": shapes,
            "attrs": attrs or {},
            "samplers": samplers,
            "diff": diff,
            "label": label,
        }
    )


for _shape in ((3, 3), (2, 3, 3), (1, 1), (4, 4)):
    _grad("det", (_shape,), (well_conditioned,))
_grad("det", ((3, 3),), (singular,), label="singular")
_grad("det", ((2, 2),), (singular,), label="singular")
_grad("det", ((3, 3, 3),), (first_singular,), label="some singular")
_grad("det", ((1, 1),), (lambda rng, shape: np.zeros(shape),), label="zero")

for _shape in ((3, 3), (2, 3, 3), (1, 1)):
    _grad("inv", (_shape,), (well_conditioned,))

for _shapes in (
    ((3, 3), (3,)),  # b a vector
    ((3, 3), (3, 2)),  # b a matrix
    ((2, 3, 3), (3,)),  # a stack of A, one vector b
    ((2, 3, 3), (2, 3, 1)),  # stacks of both
    ((3, 3), (2, 3, 2)),  # one A, a stack of b (broadcast)
    ((2, 1, 3, 3), (4, 3, 1)),  # stacks that broadcast together
):
    _grad("solve", _shapes, (well_conditioned, entries))
_grad("solve", ((3, 3), (3,)), (well_conditioned, entries), diff=(True, False), label="A-only")
_grad("solve", ((3, 3), (3, 2)), (well_conditioned, entries), diff=(False, True), label="b-only")

for _shape in ((3, 3), (2, 3, 3), (1, 1), (4, 4)):
    _grad("cholesky", (_shape,), (spd,))

for _shape in ((3, 3), (2, 3), (4, 2), (2, 3, 4)):
    _grad("trace", (_shape,), (entries,))

for _shape, _k in (((4,), 0), ((3,), 1), ((3,), -2), ((3, 4), 0), ((3, 4), 1), ((4, 3), -1)):
    _grad("diag", (_shape,), (entries,), {"k": _k})

for _shapes in (((3,), (4,)), ((2, 2), (3,)), ((), (3,)), ((2,), (2, 3))):
    _grad("outer", _shapes, (entries, entries))
_grad("outer", ((3,), (2,)), (entries, entries), diff=(False, True), label="b-only")

for _name in ("triu", "tril"):
    for _shape, _k in (((3, 4), 0), ((3, 3), 1), ((2, 3, 3), -1), ((4, 3), -5), ((3, 2), 2)):
        _grad(_name, (_shape,), (entries,), {"k": _k})

for _shapes, _axes in (
    (((2, 3), (3, 4)), 1),
    (((2, 3, 4), (3, 4, 2)), 2),
    (((3,), (2,)), 0),
    (((2, 3), (2, 3)), 2),
    (((3,), (3,)), 1),
):
    _grad("tensordot", _shapes, (entries, entries), {"axes": _axes})


# norm with an ord (core/ops.py), einsum, svdvals, svd (issue 13)
for _shape, _axis in (((4,), None), ((3, 4), 1), ((3, 4), 0)):
    for _ord in (1, 2, 3, 0.5, -1.5, INF, -INF, 0):
        _grad("norm", (_shape,), (entries,), {"axis": _axis, "keepdims": False, "ord": _ord})
_grad("norm", ((3, 4),), (entries,), {"axis": -1, "keepdims": True, "ord": 1.5}, label="keep")
for _ord in (Word("fro"), Word("nuc"), 1, -1, 2, -2, INF, -INF):
    for _shape, _axis, _keep in (
        ((3, 4), None, False),
        ((4, 3), (1, 0), False),
        ((2, 3, 4), (1, 2), False),
        ((2, 3, 4), (0, 2), True),
    ):
        _grad("norm", (_shape,), (entries,), {"axis": _axis, "keepdims": _keep, "ord": _ord})

for _spec, _shapes in (
    ("ij,jk->ik", ((2, 3), (3, 4))),
    ("ij->ji", ((2, 3),)),
    ("ij->", ((2, 3),)),
    ("ij->i", ((2, 3),)),
    ("ii->i", ((3, 3),)),
    ("ii->", ((3, 3),)),
    ("iji->j", ((2, 3, 2),)),
    ("i,i->", ((4,), (4,))),
    ("i,j->ij", ((2,), (3,))),
    ("ij,ij->ij", ((1, 3), (2, 3))),
    ("i,ij,j->", ((2,), (2, 3), (3,))),
    ("...ij,...jk->...ik", ((2, 2, 3), (3, 2))),
    ("i...->...", ((2, 3, 2),)),
    ("bij,bkj->bik", ((2, 2, 3), (2, 4, 3))),
    ("ijk->kij", ((2, 3, 4),)),
):
    _grad("einsum", _shapes, (entries,) * len(_shapes), {"subscripts": Word(_spec)})
_grad(
    "einsum",
    ((2, 3), (3, 4)),
    (entries, entries),
    {"subscripts": Word("ij,jk->ik")},
    diff=(False, True),
    label="b-only",
)

for _shape in ((3, 3), (2, 4), (4, 2), (2, 3, 3), (1, 1)):
    _grad("svdvals", (_shape,), (entries,))
for _shape, _full in (((3, 3), False), ((4, 2), False), ((2, 4), False), ((3, 3), True)):
    for _part in (0, 2):
        _grad("svd", (_shape,), (entries,), {"full_matrices": _full, "part": _part})
_grad("svd", ((2, 3, 3),), (entries,), {"full_matrices": True, "part": 0})
_grad("svd", ((2, 3, 3),), (entries,), {"full_matrices": False, "part": 2})

# ---------------------------------------------------------------------------
# Exact oracles
# ---------------------------------------------------------------------------


def _fractions(a):
    return [[Fraction(x) for x in row] for row in a]


def f_det(a) -> Fraction:
    """The determinant by Gaussian elimination in exact rational arithmetic."""
    m = _fractions(a)
    n = len(m)
    det = Fraction(1)
    for c in range(n):
        p = next((r for r in range(c, n) if m[r][c] != 0), None)
        if p is None:
            return Fraction(0)
        if p != c:
            m[c], m[p] = m[p], m[c]
            det = -det
        det *= m[c][c]
        for r in range(c + 1, n):
            f = m[r][c] / m[c][c]
            m[r] = [x - f * y for x, y in zip(m[r], m[c])]
    return det


def f_solve(a, b) -> list:
    """x with a x = b (b a list of columns' rows: a matrix, n x k), by Gauss-Jordan."""
    n = len(a)
    m = [row + list(rhs) for row, rhs in zip(_fractions(a), _fractions(b))]
    for c in range(n):
        p = next(r for r in range(c, n) if m[r][c] != 0)
        m[c], m[p] = m[p], m[c]
        m[c] = [x / m[c][c] for x in m[c]]
        for r in range(n):
            if r != c and m[r][c] != 0:
                f = m[r][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c])]
    return [row[n:] for row in m]


def f_inv(a) -> list:
    n = len(a)
    return f_solve(a, [[1 if i == j else 0 for j in range(n)] for i in range(n)])


def as_floats(x):
    if isinstance(x, list):
        return [as_floats(v) for v in x]
    return float(x)


def mp_cholesky(a) -> list:
    """The lower Cholesky factor of a (symmetric positive definite) with mpmath at 40 digits."""
    with mpmath.workdps(40):
        n = len(a)
        low = mpmath.cholesky(mpmath.matrix([[mpmath.mpf(x) for x in row] for row in a]))
        return [[float(low[i, j]) for j in range(n)] for i in range(n)]


def loop_trace(a) -> float:
    return math.fsum(a[i][i] for i in range(min(len(a), len(a[0]))))


def loop_diag_matrix(v, k) -> list:
    n = len(v) + abs(k)
    out = [[0.0] * n for _ in range(n)]
    for i, x in enumerate(v):
        out[i + max(-k, 0)][i + max(k, 0)] = x
    return out


def loop_diagonal(a, k) -> list:
    return [a[i][j] for i in range(len(a)) for j in range(len(a[0])) if j - i == k]


def loop_triangle(a, k, upper: bool) -> list:
    return [
        [x if ((j - i >= k) if upper else (j - i <= k)) else 0.0 for j, x in enumerate(row)]
        for i, row in enumerate(a)
    ]


def loop_flat(x) -> list:
    if isinstance(x, list):
        return [v for item in x for v in loop_flat(item)]
    return [x]


def loop_outer(a, b) -> list:
    return [[x * y for y in loop_flat(b)] for x in loop_flat(a)]


# ---------------------------------------------------------------------------
# FORWARD_CASES
# ---------------------------------------------------------------------------

FORWARD_CASES: list[dict] = []


def _fwd(op, expr, values, expected, *, exact=True, zero_sign=True, label=""):
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


A2 = [[1.0, 2.0], [3.0, 4.0]]
A3 = [[2.0, -1.0, 0.5], [1.0, 3.0, -2.0], [0.25, 1.0, 4.0]]
B3 = [[4.0, 1.0, -1.0], [2.0, 5.0, 0.5], [-1.0, 1.0, 3.0]]
S2 = [[1.0, 2.0], [2.0, 4.0]]  # singular
S3 = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [1.0, 2.0, 3.0]]  # singular: row 3 = row 1

# LU in floating point rounds (det([[1, 2], [3, 4]]) is -2.0000000000000004): rtol 1e-14
_fwd("det", "det(A)", {"A": A2}, float(f_det(A2)), exact=False, label="2x2")
_fwd("det", "det(A)", {"A": A3}, float(f_det(A3)), exact=False, label="3x3")
_fwd(
    "det",
    "det(A)",
    {"A": [A3, B3]},
    [float(f_det(A3)), float(f_det(B3))],
    exact=False,
    label="stack",
)
_fwd("det", "det(A)", {"A": [[-3.5]]}, -3.5, label="1x1")
_fwd("det", "det(A)", {"A": S2}, 0.0, exact=False, zero_sign=False, label="singular 2x2")
_fwd("det", "det(A)", {"A": S3}, 0.0, exact=False, zero_sign=False, label="singular 3x3")
_fwd("det", "det(A)", {"A": [[NAN, 1.0], [1.0, 1.0]]}, NAN, label="nan")

_fwd("inv", "inv(A)", {"A": A2}, as_floats(f_inv(A2)), exact=False, label="2x2")
_fwd("inv", "inv(A)", {"A": A3}, as_floats(f_inv(A3)), exact=False, label="3x3")
_fwd(
    "inv",
    "inv(A)",
    {"A": [A3, B3]},
    [as_floats(f_inv(A3)), as_floats(f_inv(B3))],
    exact=False,
    label="stack",
)
_fwd("inv", "inv(A)", {"A": [[0.25]]}, [[4.0]], label="1x1")
# a nan entry gives nan (as PyTorch), not NumPy's "Singular matrix"
_fwd("inv", "inv(A)", {"A": [[NAN, 1.0], [1.0, 1.0]]}, [[NAN, NAN], [NAN, NAN]], label="nan")

_b3 = [1.0, -2.0, 0.5]
_fwd(
    "solve",
    "solve(A, b)",
    {"A": A3, "b": _b3},
    [row[0] for row in as_floats(f_solve(A3, [[x] for x in _b3]))],
    exact=False,
    label="vector",
)
_m3 = [[1.0, 0.0], [-2.0, 1.0], [0.5, 3.0]]
_fwd(
    "solve",
    "solve(A, B)",
    {"A": A3, "B": _m3},
    as_floats(f_solve(A3, _m3)),
    exact=False,
    label="matrix",
)
# NumPy 2: a 1-D b beside a stack of A is one vector for each matrix
_fwd(
    "solve",
    "solve(A, b)",
    {"A": [A3, B3], "b": _b3},
    [[row[0] for row in as_floats(f_solve(m, [[x] for x in _b3]))] for m in (A3, B3)],
    exact=False,
    label="stack, one vector",
)
_fwd(
    "solve",
    "solve(A, b)",
    {"A": A2, "b": [1.0, NAN]},
    [NAN, NAN],
    label="nan in b",
)

_L3 = [[2.0, 0.0, 0.0], [1.0, 3.0, 0.0], [-1.0, 2.0, 1.5]]
_P3 = [[sum(_L3[i][k] * _L3[j][k] for k in range(3)) for j in range(3)] for i in range(3)]
_fwd("cholesky", "cholesky(A)", {"A": _P3}, mp_cholesky(_P3), exact=False, label="exact factor")
_Q3 = [[4.0, 1.0, 0.5], [1.0, 3.0, -0.25], [0.5, -0.25, 2.0]]
_fwd("cholesky", "cholesky(A)", {"A": _Q3}, mp_cholesky(_Q3), exact=False, label="3x3")
_fwd(
    "cholesky",
    "cholesky(A)",
    {"A": [_P3, _Q3]},
    [mp_cholesky(_P3), mp_cholesky(_Q3)],
    exact=False,
    label="stack",
)
# not symmetric: the factor of the symmetric part (A + Aᵀ)/2 (NumPy reads the lower triangle)
_N2 = [[4.0, 3.0], [1.0, 5.0]]
_fwd(
    "cholesky",
    "cholesky(A)",
    {"A": _N2},
    mp_cholesky([[4.0, 2.0], [2.0, 5.0]]),
    exact=False,
    label="symmetric part",
)
_fwd("cholesky", "cholesky(A)", {"A": [[6.25]]}, [[2.5]], label="1x1")

_M23 = [[1.5, -2.0, 0.25], [4.0, -0.0, 8.0]]
_fwd("trace", "trace(A)", {"A": A3}, loop_trace(A3), label="square")
_fwd("trace", "trace(A)", {"A": _M23}, loop_trace(_M23), label="wide")
_fwd("trace", "trace(A)", {"A": [A3, B3]}, [loop_trace(A3), loop_trace(B3)], label="stack")
_fwd("trace", "trace(A)", {"A": [[INF, 1.0], [2.0, NAN]]}, NAN, label="nan")

_v3 = [1.5, -2.0, 0.25]
_fwd("diag", "diag(v)", {"v": _v3}, loop_diag_matrix(_v3, 0), label="vector")
_fwd("diag", "diag(v, 1)", {"v": _v3}, loop_diag_matrix(_v3, 1), label="vector k=1")
_fwd("diag", "diag(v, k=-2)", {"v": _v3}, loop_diag_matrix(_v3, -2), label="vector k=-2")
_fwd("diag", "diag(A)", {"A": _M23}, loop_diagonal(_M23, 0), label="matrix")
_fwd("diag", "diag(A, 2)", {"A": _M23}, loop_diagonal(_M23, 2), label="matrix k=2")
_fwd("diag", "diag(A, k=-1)", {"A": _M23}, loop_diagonal(_M23, -1), label="matrix k=-1")
_fwd("diag", "diag(v)", {"v": [-0.0, NAN]}, loop_diag_matrix([-0.0, NAN], 0), label="-0 nan")

_fwd(
    "outer",
    "outer(a, b)",
    {"a": [1.5, -2.0], "b": _v3},
    loop_outer([1.5, -2.0], _v3),
    label="vectors",
)
_fwd(
    "outer",
    "outer(A, b)",
    {"A": _M23, "b": [2.0, -0.5]},
    loop_outer(_M23, [2.0, -0.5]),
    label="flattened",
)
_fwd("outer", "outer(a, b)", {"a": 3.0, "b": _v3}, loop_outer(3.0, _v3), label="number")

_M34 = [[1.0, 2.0, 3.0, 4.0], [-5.0, 6.0, -0.0, 8.0], [9.0, NAN, 11.0, 12.0]]
for _name, _upper in (("triu", True), ("tril", False)):
    _fwd(_name, f"{_name}(A)", {"A": _M34}, loop_triangle(_M34, 0, _upper), label="k=0")
    _fwd(_name, f"{_name}(A, 1)", {"A": _M34}, loop_triangle(_M34, 1, _upper), label="k=1")
    _fwd(_name, f"{_name}(A, k=-1)", {"A": _M34}, loop_triangle(_M34, -1, _upper), label="k=-1")
    _fwd(
        _name,
        f"{_name}(A)",
        {"A": [A3, B3]},
        [loop_triangle(A3, 0, _upper), loop_triangle(B3, 0, _upper)],
        label="stack",
    )

_fwd(
    "tensordot",
    "tensordot(A, B)",
    {"A": A3, "B": B3},
    math.fsum(A3[i][j] * B3[i][j] for i in range(3) for j in range(3)),
    exact=False,
    label="axes=2",
)
_fwd(
    "tensordot",
    "tensordot(A, B, 1)",
    {"A": _M23, "B": A3},
    [[math.fsum(_M23[i][k] * A3[k][j] for k in range(3)) for j in range(3)] for i in range(2)],
    exact=False,
    label="axes=1",
)
_fwd(
    "tensordot",
    "tensordot(a, b, axes=0)",
    {"a": [1.5, -2.0], "b": _v3},
    loop_outer([1.5, -2.0], _v3),
    label="axes=0",
)


# ---- norm with an ord, einsum, svdvals, svd (issue 13) -------------------------------------


def mp_norm(v, p) -> float:
    """The p-norm of the numbers v, with mpmath at 40 digits."""
    with mpmath.workdps(40):
        if p == INF:
            return float(max(abs(mpmath.mpf(x)) for x in v))
        if p == -INF:
            return float(min(abs(mpmath.mpf(x)) for x in v))
        if p == 0:
            return float(sum(1 for x in v if x != 0))
        if p < 0 and 0 in v:
            return 0.0  # |0|**p is inf, so the sum is inf and its 1/p-th power 0
        total = mpmath.fsum(abs(mpmath.mpf(x)) ** p for x in v)
        return float(total ** (mpmath.mpf(1) / p))


def mp_svd(a):
    """U, S, Vh of the matrix a, with mpmath at 40 digits."""
    with mpmath.workdps(40):
        u, s, v = mpmath.svd_r(mpmath.matrix([[mpmath.mpf(x) for x in row] for row in a]))
        k = min(len(a), len(a[0]))
        return (
            [[u[i, j] for j in range(k)] for i in range(len(a))],
            [s[j] for j in range(k)],
            [[v[i, j] for j in range(len(a[0]))] for i in range(k)],
        )


def mp_singular_values(a) -> list:
    return [float(x) for x in mp_svd(a)[1]]


def loop_matrix_norm(a, ord) -> float:
    """1, -1, inf, -inf: the largest or smallest column (row) sum of |a|, in exact floats."""
    if ord in (INF, -INF):
        a = [list(col) for col in zip(*a)]
    sums = [math.fsum(abs(row[j]) for row in a) for j in range(len(a[0]))]
    return max(sums) if ord > 0 else min(sums)


def loop_einsum(spec: str, *arrays) -> object:
    """Einstein summation by loops over every label (explicit subscripts, no '...')."""
    left, out = spec.split("->")
    terms = left.split(",")
    arrays = [np.asarray(a, dtype=object) for a in arrays]
    sizes = {}
    for t, a in zip(terms, arrays):
        for c, d in zip(t, np.shape(a)):
            sizes[c] = max(sizes.get(c, 1), d)
    labels = sorted(sizes)
    result = {}
    for values in np.ndindex(*[sizes[c] for c in labels]):
        at = dict(zip(labels, values))
        product = Fraction(1)
        for t, a in zip(terms, arrays):
            idx = tuple(at[c] if a.shape[k] > 1 else 0 for k, c in enumerate(t))
            product *= Fraction(float(a[idx]))
        key = tuple(at[c] for c in out)
        result[key] = result.get(key, Fraction(0)) + product
    shape = tuple(sizes[c] for c in out)
    r = np.zeros(shape)
    for key, v in result.items():
        r[key] = float(v)
    return r.tolist() if shape else float(r)


_V5 = [3.0, -4.0, 0.5, -0.0, 1.25]
for _p in (1, 2, 3, 0.5, -1.5, INF, -INF, 0):
    _fwd("norm", f"norm(v, ord={_p})", {"v": _V5}, mp_norm(_V5, _p), exact=False, label="vector")
_fwd("norm", "norm(v, ord=inf)", {"v": [1.0, -INF, 2.0]}, INF, label="inf entry")
_fwd("norm", "norm(v, ord=1)", {"v": [1.0, NAN]}, NAN, label="nan entry")
_fwd(
    "norm",
    "norm(A, 1, ord=3)",
    {"A": _M23},
    [mp_norm(row, 3) for row in _M23],
    exact=False,
    label="rows",
)
_fwd(
    "norm",
    "norm(A, axis=0, keepdims=1, ord=-inf)",
    {"A": _M23},
    [[mp_norm(col, -INF) for col in zip(*_M23)]],
    label="columns keepdims",
)
for _o in (1, -1, INF, -INF):
    _fwd("norm", f"norm(A, ord={_o})", {"A": _M23}, loop_matrix_norm(_M23, _o), label="matrix")
_fwd(
    "norm",
    "norm(A, axis=[1, 0], ord=1)",
    {"A": _M23},
    loop_matrix_norm([list(c) for c in zip(*_M23)], 1),
    label="axes swapped",
)
_SVD2 = [[2.88, 1.16], [2.84, 2.88]]  # 0.6/0.8 rotations around diag(5, 1)
_fwd("norm", "norm(A, ord='fro')", {"A": A3}, mp_norm(loop_flat(A3), 2), exact=False)
for _o, _pick in (("'nuc'", sum), (2, max), (-2, min)):
    _fwd(
        "norm",
        f"norm(A, ord={_o})",
        {"A": A3},
        _pick(mp_singular_values(A3)),
        exact=False,
        label="svd",
    )
_fwd(
    "norm",
    "norm(A, axis=[0, 2], ord='nuc')",
    {"A": [A3, B3]},
    [sum(mp_singular_values([A3[i], B3[i]])) for i in range(3)],
    exact=False,
    label="stack",
)

_fwd(
    "einsum",
    "einsum('ij,jk->ik', A, B)",
    {"A": A3, "B": B3},
    loop_einsum("ij,jk->ik", A3, B3),
    exact=False,
)
_fwd(
    "einsum",
    "einsum('ij,jk', A, B)",
    {"A": A3, "B": B3},
    loop_einsum("ij,jk->ik", A3, B3),
    exact=False,
    label="implicit",
)
_fwd(
    "einsum",
    "einsum('ba', A)",
    {"A": _M23},
    loop_einsum("ba->ab", _M23),
    zero_sign=False,  # (the oracle's fractions have no -0)
    label="implicit order",
)
_fwd("einsum", "einsum('ii', A)", {"A": A3}, loop_einsum("ii->", A3), label="trace")
_fwd("einsum", "einsum('ii->i', A)", {"A": A3}, loop_einsum("ii->i", A3), label="diagonal")
_fwd(
    "einsum",
    "einsum('i, j', a, b)",
    {"a": [1.5, -2.0], "b": _v3},
    loop_einsum("i,j->ij", [1.5, -2.0], _v3),
    label="outer",
)
_fwd(
    "einsum",
    "einsum('...j,j->...', A, b)",
    {"A": [A3, B3], "b": _v3},
    [loop_einsum("ij,j->i", A3, _v3), loop_einsum("ij,j->i", B3, _v3)],
    exact=False,
    label="ellipsis",
)
_fwd(
    "einsum",
    "einsum('i,i', a, b)",
    {"a": [2.0], "b": [1.0, NAN, 3.0]},
    NAN,
    label="nan, broadcast",
)

_fwd("svdvals", "svdvals(A)", {"A": A3}, mp_singular_values(A3), exact=False)
_fwd("svdvals", "svdvals(A)", {"A": _M23}, mp_singular_values(_M23), exact=False, label="wide")
_fwd(
    "svdvals",
    "svdvals(A)",
    {"A": [A3, B3]},
    [mp_singular_values(A3), mp_singular_values(B3)],
    exact=False,
    label="stack",
)
_fwd("svdvals", "svdvals(A)", {"A": [[1.0, NAN], [2.0, 3.0]]}, [NAN, NAN], label="nan")
# U and Vh up to the sign of each singular vector: their squares
_u, _s, _vh = mp_svd(_SVD2)
_fwd(
    "svd",
    "svd(A)[0] * svd(A)[0]",
    {"A": _SVD2},
    [[float(x * x) for x in row] for row in _u],
    exact=False,
    label="U",
)
_fwd(
    "svd",
    "U, S, Vh = svd(A); Vh * Vh",
    {"A": _SVD2},
    [[float(x * x) for x in row] for row in _vh],
    exact=False,
    label="Vh",
)


# ---------------------------------------------------------------------------
# The op table's sample values and attributes (tests/test_op_table.py)
# ---------------------------------------------------------------------------

_SQUARE = [[2.0, 0.5, 0.1], [0.3, 1.7, 0.2], [0.1, 0.4, 1.9]]
_SPD = [[2.0, 0.5, 0.1], [0.5, 1.7, 0.2], [0.1, 0.2, 1.9]]

OP_TABLE_SAMPLES: dict[str, list] = {
    "einsum": [_SQUARE, _SPD],
    "svdvals": [_SQUARE],
    "svd": [_SQUARE],
    "det": [_SQUARE],
    "inv": [_SQUARE],
    "solve": [_SQUARE, [0.3, 0.7, 0.2]],
    "cholesky": [_SPD],
    "trace": [_SQUARE],
    "triu": [_SQUARE],
    "tril": [_SQUARE],
    "tensordot": [_SQUARE, _SPD],
}
OP_TABLE_ATTRS: dict[str, dict] = {
    "einsum": {"subscripts": Word("ij,jk->ik")},
    "svd": {"full_matrices": True, "part": 0},
}


# ---------------------------------------------------------------------------
# eigvalsh, eigh, pinv (issue 27; core/ops/eigen.py; more in tests/test_ops_eigen.py)
# ---------------------------------------------------------------------------


def separated(rng, shape):
    """Q diag(L) Qᵀ, exactly symmetric, with eigenvalues at least 0.5 apart (L spaced by 1
    plus a jitter, Q a random rotation): eigh's vectors are well defined there."""
    n = shape[-1]
    q, _ = np.linalg.qr(rng.normal(size=shape))
    lam = np.arange(n) - n / 2 + rng.uniform(-0.25, 0.25, size=shape[:-1])
    a = (q * lam[..., None, :]) @ np.swapaxes(q, -1, -2)
    return (a + np.swapaxes(a, -1, -2)) / 2


for _shape in ((3, 3), (2, 3, 3), (1, 1), (4, 4)):
    _grad("eigvalsh", (_shape,), (separated,))
    _grad("eigh", (_shape,), (separated,), {"part": 1})
_grad("eigvalsh", ((3, 3),), (entries,), label="not symmetric")
_grad("eigh", ((3, 3),), (entries,), {"part": 1}, label="not symmetric")
for _shape in ((3, 3), (2, 4), (4, 2), (2, 3, 4), (1, 1), (1, 3)):
    _grad("pinv", (_shape,), (entries,))


def mp_eigh(a):
    """The ascending eigenvalues and the eigenvectors (columns) of the symmetric a, with
    mpmath at 40 digits."""
    with mpmath.workdps(40):
        w, v = mpmath.eigsy(mpmath.matrix([[mpmath.mpf(x) for x in row] for row in a]))
        n = len(a)
        order = sorted(range(n), key=lambda j: w[j])
        return [w[j] for j in order], [[v[i, j] for j in order] for i in range(n)]


def f_pinv(a) -> list:
    """The pseudo-inverse of a full-rank matrix in exact rational arithmetic: Aᵀ (A Aᵀ)⁻¹
    (wide) or (Aᵀ A)⁻¹ Aᵀ (tall)."""
    at = [list(col) for col in zip(*_fractions(a))]
    mm = lambda x, y: [[sum(p * q for p, q in zip(r, c)) for c in zip(*y)] for r in x]  # noqa: E731
    if len(a) <= len(a[0]):
        return mm(at, f_inv(mm(_fractions(a), at)))
    return mm(f_inv(mm(at, _fractions(a))), at)


_S3 = [[2.0, 0.5, -1.0], [0.5, 1.0, 0.25], [-1.0, 0.25, 3.0]]
_w = mp_eigh(_S3)[0]
_fwd("eigvalsh", "eigvalsh(A)", {"A": _S3}, [float(x) for x in _w], exact=False)
_fwd(
    "eigvalsh",
    "eigvalsh(A)",
    {"A": [[2.0, 1.0, -1.0], [0.0, 1.0, 0.5], [-1.0, 0.0, 3.0]]},  # symmetric part: _S3
    [float(x) for x in _w],
    exact=False,
    label="symmetric part",
)
_fwd(
    "eigvalsh",
    "eigvalsh(A)",
    {"A": [_S3, [[4.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 2.0]]]},
    [[float(x) for x in _w], [-1.0, 2.0, 4.0]],
    exact=False,
    label="stack",
)
_fwd("eigvalsh", "eigvalsh(A)", {"A": [[1.0, NAN], [NAN, 3.0]]}, [NAN, NAN], label="nan")
_fwd("eigvalsh", "eigvalsh(A)", {"A": [[INF, 0.0], [0.0, 3.0]]}, [NAN, NAN], label="inf")
_fwd("eigvalsh", "eigvalsh(A)", {"A": [[-2.5]]}, [-2.5], label="1x1")
# V up to the sign of each eigenvector: its squares (none small: LAPACK's accuracy is the
# vector's, not each entry's)
_S3V = [[2.0, 1.0, 1.0], [1.0, 3.0, 1.0], [1.0, 1.0, 5.0]]
_fwd(
    "eigh",
    "L, V = eigh(A); V * V",
    {"A": _S3V},
    [[float(x * x) for x in row] for row in mp_eigh(_S3V)[1]],
    exact=False,
    label="V",
)
_fwd("eigh", "eigh(A)[1]", {"A": [[NAN, 0.0], [0.0, 1.0]]}, [[NAN, NAN], [NAN, NAN]], label="nan")
_fwd("pinv", "pinv(A)", {"A": _M23}, as_floats(f_pinv(_M23)), exact=False, label="wide")
_fwd(
    "pinv",
    "pinv(A)",
    {"A": [list(c) for c in zip(*_M23)]},
    as_floats(f_pinv([list(c) for c in zip(*_M23)])),
    exact=False,
    label="tall",
)
_fwd("pinv", "pinv(A)", {"A": A3}, as_floats(f_inv(A3)), exact=False, label="square: inv")
_fwd(
    "pinv",
    "pinv(A)",
    {"A": [[1.0, 2.0], [2.0, 4.0]]},  # rank 1: A / |A|² (its Frobenius norm, 25)
    [[0.04, 0.08], [0.08, 0.16]],
    exact=False,
    label="rank-deficient",
)
_fwd("pinv", "pinv(A)", {"A": [[0.0, 0.0]]}, [[0.0], [0.0]], label="zero")
_fwd("pinv", "pinv(A)", {"A": [[1.0, NAN]]}, [[NAN], [NAN]], label="nan")

OP_TABLE_SAMPLES.update({"eigvalsh": [_SPD], "eigh": [_SPD], "pinv": [_SQUARE]})
OP_TABLE_ATTRS.update({"eigh": {"part": 1}})

# eig, eigvals (issue 27; core/ops/eig.py; more in tests/test_ops_eig.py): a matrix with a
# complex pair of eigenvalues and a real one
_NONSYMMETRIC = [[1.0, 2.0, 0.3], [-3.0, 0.5, 1.0], [0.2, 0.1, 2.0]]
OP_TABLE_SAMPLES.update({"eigvals": [_NONSYMMETRIC], "eig": [_NONSYMMETRIC]})
# eig's part 0 (its eigenvalues): V's phase is LAPACK's choice, which no rule follows (only a
# function blind to it, abs(V)**2, is differentiable): tests/test_ops_eig.py checks those
OP_TABLE_ATTRS.update({"eig": {"part": 0}})
for _shape in ((3, 3), (2, 3, 3), (1, 1), (4, 4)):
    _grad("eigvals", (_shape,), (well_conditioned,))
    _grad("eig", (_shape,), (well_conditioned,), {"part": 0})
# complex eigenvalues as torch.linalg.eigvals gives them (always complex; NumPy's roots)
_ROTATION = [[0.0, -2.0], [2.0, 0.0]]
_fwd("eigvals", "eigvals(A)", {"A": _ROTATION}, [2j, -2j], exact=False, zero_sign=False)
_fwd("eig", "eig(A)[0]", {"A": [[2.0, 1.0], [0.0, 3.0]]}, [2 + 0j, 3 + 0j], zero_sign=False)
