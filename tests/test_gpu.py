"""--device gpu: the same numbers as the CPU, through CuPy. Skipped where CuPy or a GPU is missing.

Every comparison is elementwise, with ``numpy.testing`` (:func:`assert_same_document`): the
GPU's whole JSON document against the CPU's -- the same keys, the same text, and each number,
a scalar or a nested list of any depth, within ``RTOL``/``ATOL`` with the shapes equal.
``pytest.approx`` compared only ``value`` and raised TypeError on a nested list (``grad`` of
``[[1,2,3],[4,5,6]]``), so the file never passed end to end on a GPU; tests/test_gpu_compare.py
shows the old form failing and this one comparing, on the CPU.

The skip is the library's own check (``backend.using(device="gpu")`` raises DeviceError where
CuPy is missing or CUDA has no device), so these tests run exactly where ``--device gpu`` does.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from autograd_cli.core import backend
from autograd_cli.core.errors import DeviceError

# float64 on the GPU: CuPy's sin, exp, ... may differ from NumPy's in the last bits
RTOL = 1e-12
ATOL = 1e-12  # for numbers that cancel to about 0 on one side
EXACT_KEYS = frozenset({"shape", "line"})  # metadata: equal, not close
NON_FINITE = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf}  # how --json writes them


def gpu_missing() -> str | None:
    """Why ``--device gpu`` cannot run here (the library's own check), or None."""
    try:
        with backend.using(device="gpu"):
            return None
    except DeviceError as exc:
        return str(exc)


WHY_NOT = gpu_missing()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=f"no GPU: {WHY_NOT}")


def _numbers(value) -> np.ndarray | None:
    """``value`` as a float array when it is a JSON number, a non-finite number's text or a
    (nested) list of them with a regular shape; None for anything else."""
    leaves, todo = [], [value]
    while todo:
        item = todo.pop()
        if isinstance(item, list):
            todo.extend(item)
        else:
            leaves.append(item)
    for leaf in leaves:
        numeric = isinstance(leaf, (int, float)) and not isinstance(leaf, bool)
        if not numeric and not (isinstance(leaf, str) and leaf in NON_FINITE):
            return None
    try:
        return np.asarray(_floats(value), dtype=np.float64)
    except ValueError:  # a ragged list: compared item by item
        return None


def _floats(value):
    if isinstance(value, list):
        return [_floats(v) for v in value]
    return NON_FINITE[value] if isinstance(value, str) else float(value)


def assert_same_document(got, want, rtol: float = RTOL, atol: float = ATOL) -> None:
    """``got`` (the GPU's parsed JSON) is ``want`` (the CPU's), elementwise.

    Dicts: the same keys, each value compared; numbers and nested lists of numbers: the same
    shape, then ``assert_allclose`` (NaN where NaN), or ``assert_array_equal`` under
    :data:`EXACT_KEYS`; other lists: the same length, item by item; anything else equal.
    An AssertionError names the path (``$.grad.x``) of the first difference.
    """
    todo = [("$", got, want, False)]
    while todo:
        where, a, b, exact = todo.pop()
        na, nb = _numbers(a), _numbers(b)
        if na is not None and nb is not None:
            assert na.shape == nb.shape, (
                f"{where}: shape {na.shape} on the GPU, {nb.shape} on the CPU"
            )
            if exact:
                assert_array_equal(na, nb, err_msg=where, strict=True)
            else:
                assert_allclose(na, nb, rtol=rtol, atol=atol, err_msg=where, strict=True)
        elif isinstance(a, dict) and isinstance(b, dict):
            assert a.keys() == b.keys(), (
                f"{where}: keys {sorted(a)} on the GPU, {sorted(b)} on the CPU"
            )
            todo += [(f"{where}.{k}", a[k], b[k], k in EXACT_KEYS) for k in list(b)[::-1]]
        elif isinstance(a, list) and isinstance(b, list):
            assert len(a) == len(b), f"{where}: {len(a)} items on the GPU, {len(b)} on the CPU"
            items = [(f"{where}[{i}]", x, y, exact) for i, (x, y) in enumerate(zip(a, b))]
            todo += items[::-1]
        else:
            assert type(a) is type(b) and a == b, f"{where}: {a!r} on the GPU, {b!r} on the CPU"


CASES = [
    ("grad", ["3*a**3-b**2", "--a", "2", "--b", "6"]),
    (
        "grad",
        [
            "output = W @ x + b; sum(output)",
            "--W",
            "[[1,2,3,4],[1,2,3,4],[1,2,3,4]]",
            "--x",
            "[3,2,4,5]",
            "--b",
            "[4,5,8]",
        ],
    ),
    (
        "grad",
        [
            "y = x + 2; z = y * y * 3",
            "--x",
            "[[1,2,3],[4,5,6]]",
            "--grad-output",
            "[[1,1,1],[1,1,1]]",
        ],
    ),
    ("hessian", ["x**2*y + sin(x*y)", "--x", "1", "--y", "2"]),
    ("jacobian", ["[x*y, x+y, sin(x)]", "--x", "1", "--y", "2"]),
    (
        "grad",
        ["where(x > 0, sqrt(x), 0) + max([x, 1]) + prod([x, 2]) + norm([x, 3])", "--x", "-1"],
    ),
]


@pytest.mark.parametrize("command, argv", CASES)
def test_gpu_matches_cpu(cli, command, argv):
    cpu = cli(command, *argv, "--json")
    gpu = cli(command, *argv, "--json", "--device", "gpu")
    assert (cpu.code, gpu.code) == (0, 0), gpu.out + gpu.err
    assert_same_document(gpu.json, cpu.json)


def test_gpu_batch(cli, tmp_path):
    path = tmp_path / "pts.csv"
    path.write_text("x,y\n" + "".join(f"{i * 0.01},{1 - i * 0.01}\n" for i in range(1000)))
    cpu = cli("batch", str(path), "--expr", "x*y + sin(x)*exp(y)")
    gpu = cli("batch", str(path), "--expr", "x*y + sin(x)*exp(y)", "--device", "gpu")
    assert (cpu.code, gpu.code) == (0, 0), gpu.err
    got = [json.loads(line) for line in gpu.out.splitlines()]
    want = [json.loads(line) for line in cpu.out.splitlines()]
    assert len(got) == len(want) == 1000
    assert_same_document(got, want)
