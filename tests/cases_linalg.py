"""Test cases for the functions of core/ops_linalg.py, gathered by the op-wide test modules.

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


# ---------------------------------------------------------------------------
# The op table's sample values and attributes (tests/test_op_table.py)
# ---------------------------------------------------------------------------

_SQUARE = [[2.0, 0.5, 0.1], [0.3, 1.7, 0.2], [0.1, 0.4, 1.9]]
_SPD = [[2.0, 0.5, 0.1], [0.5, 1.7, 0.2], [0.1, 0.2, 1.9]]

OP_TABLE_SAMPLES: dict[str, list] = {
    "det": [_SQUARE],
    "inv": [_SQUARE],
    "solve": [_SQUARE, [0.3, 0.7, 0.2]],
    "cholesky": [_SPD],
    "trace": [_SQUARE],
    "triu": [_SQUARE],
    "tril": [_SQUARE],
    "tensordot": [_SQUARE, _SPD],
}
OP_TABLE_ATTRS: dict[str, dict] = {}
