"""The FFT family's rows for the shared tables (tests/test_op_table.py's sample).

``OP_TABLE_SAMPLES``: op name -> one value per argument, where the three-vector does not fit
(the 2-d transforms need two axes); ``OP_TABLE_ATTRS``: op name -> the attributes it needs
there (a required Param: fftfreq's n; the sample's axis=0 where an op has none but axes).
"""

from __future__ import annotations

import cmath
import math
import re

_MATRIX = [[0.3, 0.7, 0.2, 0.9], [0.6, 0.4, 0.9, 0.1], [0.5, 0.8, 0.1, 0.4]]

OP_TABLE_SAMPLES: dict[str, tuple] = {
    "fft2": (_MATRIX,),
    "ifft2": (_MATRIX,),
    "rfft2": (_MATRIX,),
    "irfft2": (_MATRIX,),
    "fftn": (_MATRIX,),
    "ifftn": (_MATRIX,),
    "rfftn": (_MATRIX,),
    "irfftn": (_MATRIX,),
    "fftshift": (_MATRIX,),
    "ifftshift": (_MATRIX,),
}
OP_TABLE_ATTRS: dict[str, dict] = {
    "fftfreq": {"n": 5, "d": 0.5},
    "rfftfreq": {"n": 6},
}


# ---------------------------------------------------------------------------
# Forward oracles (tests/test_forward_oracles.py): the DFT as its defining sum in plain Python
# (cmath; neither NumPy nor pocketfft), each case a real-valued expression (a transform and
# the inverse that makes its result real: circular convolutions, Hermitian round trips)
# ---------------------------------------------------------------------------


def _sum(terms) -> complex:
    terms = list(terms)
    return complex(math.fsum(t.real for t in terms), math.fsum(t.imag for t in terms))


def _scale(n: int, norm: str, inverse: bool) -> float:
    if norm == "ortho":
        return 1 / math.sqrt(n)
    return 1 / n if (norm == "backward") == inverse else 1.0


def o_dft(x, n=None, norm="backward", inverse=False) -> list:
    """numpy.fft.fft (ifft with ``inverse``) of x cut or zero-padded to n, as the sum."""
    n = len(x) if n is None else n
    v = (list(x) + [0.0] * n)[:n]
    sign = 2j if inverse else -2j
    s = _scale(n, norm, inverse)
    return [
        s * _sum(v[j] * cmath.exp(sign * math.pi * ((j * k) % n) / n) for j in range(n))
        for k in range(n)
    ]


def o_irfft(bins, n=None, norm="backward") -> list:
    """numpy.fft.irfft: the inverse of the Hermitian extension of the first n // 2 + 1 bins
    (the imaginary parts of bin 0 and, for an even n, bin n/2 dropped)."""
    n = 2 * (len(bins) - 1) if n is None else n
    half = n // 2 + 1
    b = [complex(c) for c in (list(bins) + [0.0] * half)[:half]]
    b[0] = complex(b[0].real)
    if n % 2 == 0:
        b[-1] = complex(b[-1].real)
    full = b + [b[n - k].conjugate() for k in range(half, n)]
    return [c.real for c in o_dft(full, n, norm, inverse=True)]


def _columns(fn, M) -> list:
    """``fn`` applied to each column of the matrix M (a list of rows)."""
    cols = [fn([row[j] for row in M]) for j in range(len(M[0]))]
    return [[col[i] for col in cols] for i in range(len(cols[0]))]


def o_fft2(M, inverse=False, norm="backward", s=None) -> list:
    rows, cols = s or (len(M), len(M[0]))
    inner = [o_dft(r, cols, norm, inverse) for r in M]
    return _columns(lambda c: o_dft(c, rows, norm, inverse), inner)


def o_irfft2(B, s, norm="backward") -> list:
    """numpy.fft.irfftn over axes (0, 1): the complex inverse down the columns, then irfft."""
    down = _columns(lambda c: o_dft(c, s[0], norm, inverse=True), B)
    return [o_irfft(r, s[1], norm) for r in down]


def _times(a, b):
    if isinstance(a, list):
        return [_times(x, y) for x, y in zip(a, b)]
    return a * b


def _shift(x, by):
    """fftshift (by = n // 2) or ifftshift (by = -(n // 2)) of a list."""
    n = len(x)
    return [x[(k - by) % n] for k in range(n)]


_V, _W = [1.0, -2.0, 0.5, 3.0], [0.25, 1.5, -1.0, 2.5]
_V5 = [1.0, -2.0, 0.5, 3.0, 0.75]
_M, _N = [[1.0, -2.0, 0.5], [3.0, 0.25, -1.5]], [[0.5, 1.0, -2.0], [1.5, -0.75, 2.5]]
_M3 = [[1.0, -2.0, 0.5], [3.0, 0.25, -1.5], [0.75, 2.0, -1.0]]
_VALUES = {"v": _V, "w": _W, "v5": _V5, "M": _M, "N": _N, "M3": _M3}


def _rfft(x, n):
    return o_dft(x, n)[: n // 2 + 1]


def _transform_rows() -> list[tuple]:
    """(op, expression, the oracle's value) of each transform."""
    inv = o_dft(_V, inverse=True), o_dft(_W, inverse=True)
    conv2 = _times(o_fft2(_M), o_fft2(_N))  # the 2-d spectrum of a circular convolution
    return [
        ("fft", "irfft(fft(v)*fft(w), n=4)", o_irfft(_times(o_dft(_V), o_dft(_W)), 4)),
        (
            "ifft",
            "irfft(ifft(v)*ifft(w), n=4, norm='forward')",
            o_irfft(_times(*inv), 4, "forward"),
        ),
        (
            "rfft",
            "irfft(rfft(v, n=6)*rfft(w, n=6), n=6, norm='ortho')",
            o_irfft(_times(_rfft(_V, 6), _rfft(_W, 6)), 6, "ortho"),
        ),
        ("irfft", "irfft(v, n=7, norm='ortho')", o_irfft(_V, 7, "ortho")),
        ("irfft", "irfft(v5)", o_irfft(_V5)),
        ("fft2", "irfftn(fft2(M)*fft2(N), s=[2, 3], axes=[0, 1])", o_irfft2(conv2, (2, 3))),
        (
            "ifft2",
            "irfftn(ifft2(M), s=[2, 3], axes=[0, 1], norm='forward')",
            o_irfft2(o_fft2(_M, inverse=True), (2, 3), "forward"),
        ),
        (
            "fftn",
            "irfftn(fftn(M, s=[3, 3])*fftn(N, s=[3, 3]), s=[3, 3])",
            o_irfft2(_times(o_fft2(_M, s=(3, 3)), o_fft2(_N, s=(3, 3))), (3, 3)),
        ),
        (
            "ifftn",
            "irfftn(ifftn(M, norm='ortho'), s=[2, 3], norm='ortho')",
            o_irfft2(o_fft2(_M, inverse=True, norm="ortho"), (2, 3), "ortho"),
        ),
        ("rfftn", "irfftn(rfftn(M)*rfftn(N), s=[2, 3])", o_irfft2([r[:2] for r in conv2], (2, 3))),
        ("rfft2", "irfft2(rfft2(M)*rfft2(N), s=[2, 3])", o_irfft2([r[:2] for r in conv2], (2, 3))),
        ("irfft2", "irfft2(M3, s=[3, 4], norm='ortho')", o_irfft2(_M3, (3, 4), "ortho")),
        ("irfftn", "irfftn(M3, s=[3, 4])", o_irfft2(_M3, (3, 4))),
    ]


def _forward_cases() -> list[dict]:
    rows = _transform_rows() + [
        ("fftshift", "fftshift(v5)", _shift(_V5, 2)),
        ("fftshift", "fftshift(M3, axes=1)", [_shift(r, 1) for r in _M3]),
        ("ifftshift", "ifftshift(v5)", _shift(_V5, -2)),
        (
            "ifftshift",
            "ifftshift(M3, axes=[0, 1])",
            _columns(lambda c: _shift(c, -1), [_shift(r, -1) for r in _M3]),
        ),
        ("fftfreq", "fftfreq(5, d=0.5)", [0.0, 0.4, 0.8, -0.8, -0.4]),
        ("rfftfreq", "rfftfreq(6, d=0.25)", [k / 1.5 for k in range(4)]),
    ]
    cases = []
    for op, expr, expected in rows:
        exact = op.endswith("shift")  # the transforms' sums round differently from the oracle's
        values = _used(expr, _VALUES)
        cases.append(
            {"op": op, "expr": expr, "values": values, "expected": expected, "exact": exact}
        )
        cases[-1].update(zero_sign=exact, label="")
    return cases


def _used(expr: str, values: dict) -> dict:
    names = set(re.findall(r"[A-Za-z_]\w*", expr))
    return {k: v for k, v in values.items() if k in names}


FORWARD_CASES: list[dict] = _forward_cases()

# ---------------------------------------------------------------------------
# Gradient cases (tests/test_ops_gradcheck.py): real inputs; a complex value is checked through
# PyTorch's real loss Re<u, f> (more in tests/test_ops_fft.py: complex inputs, torch.fft)
# ---------------------------------------------------------------------------

GRAD_CASES: list[dict] = [
    {"op": name, "shapes": (shape,), "attrs": {"axes": axes}, "label": ""}
    for name in ("fftshift", "ifftshift")
    for shape, axes in (((5,), None), ((3, 4), 0), ((2, 3, 4), (0, 2)), ((4,), -1), ((3, 2), None))
]
for _name in ("fft", "ifft", "rfft", "irfft"):
    for _shape, _attrs in (
        ((8,), {"n": None, "axis": -1, "norm": "backward"}),
        ((7,), {"n": 5, "axis": -1, "norm": "ortho"}),
        ((3, 4), {"n": 6, "axis": 0, "norm": "forward"}),
    ):
        GRAD_CASES.append({"op": _name, "shapes": (_shape,), "attrs": dict(_attrs), "label": ""})
for _name in ("fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"):
    for _shape, _attrs in (
        ((3, 4), {"s": None, "axes": (-2, -1), "norm": "backward"}),
        ((2, 3, 4), {"s": (4, 3), "axes": (0, 2), "norm": "ortho"}),
    ):
        GRAD_CASES.append({"op": _name, "shapes": (_shape,), "attrs": dict(_attrs), "label": ""})
