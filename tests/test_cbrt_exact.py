"""cbrt is within 1/2 ulp on every CPU, so exact cubes come out exact (issue 23).

NumPy's cbrt takes a SIMD loop chosen by the CPU it runs on: with AVX-512 an array's
cbrt(27) is 3.0, without it 3.0000000000000004.  The op corrects NumPy's value by one
Newton step on an exactly computed residual.  ``NPY_DISABLE_CPU_FEATURES`` makes NumPy take
the loops of an older CPU, so the command-line test below runs every loop this machine has,
whatever CPU the suite runs on (a name the CPU lacks is ignored by NumPy).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import mpmath
import numpy as np
import pytest

from autograd_cli.core import ops

# cube: root, repeated so that NumPy's vector loop (not its scalar tail) computes them
CUBES = {27.0: 3.0, 0.125: 0.5, -8.0: -2.0, -1000.0: -10.0, 64.0: 4.0, 3.375: 1.5, 2.0**90: 2.0**30}


def _correctly_rounded_cbrt(x: float) -> float:
    with mpmath.workprec(200):
        root = mpmath.cbrt(abs(mpmath.mpf(x)))
    return math.copysign(float(root), x)


def test_exact_cubes_of_integers_and_dyadic_numbers_are_exact():
    k = np.arange(1, 4097, dtype=np.float64)
    for scale in (1.0, 2.0**-7, 2.0**20, -(2.0**-30)):
        roots = k * scale
        assert np.array_equal(ops._cbrt_forward(roots**3), roots)


def test_within_half_an_ulp_of_the_true_root():
    rng = np.random.default_rng(23)
    x = rng.standard_normal(2000) * 10.0 ** rng.integers(-190, 290, 2000)
    got = ops._cbrt_forward(x)
    for xi, yi in zip(x, got):
        want = _correctly_rounded_cbrt(float(xi))
        # the nearest double: a correctly rounded root, or at a near-tie one of the two
        assert abs(yi - want) <= 0.5 * np.spacing(abs(want)), (xi, yi, want)


def test_special_values_and_extremes_keep_the_library_value():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -1e-310, 1.7e308])
    got = ops._cbrt_forward(x)
    want = np.cbrt(x)
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))


def test_float32_is_rounded_once_from_the_float64_root():
    x = np.array([27.0, 0.125, -8.0, 2.0], dtype=np.float32)
    got = ops._cbrt_forward(x)
    assert got.dtype == np.float32
    assert np.array_equal(got[:3], np.array([3.0, 0.5, -2.0], dtype=np.float32))
    assert got[3] == np.float32(_correctly_rounded_cbrt(2.0))


@pytest.mark.parametrize("disabled", ["", "X86_V4 AVX512_ICL AVX512_SPR", "X86_V3 X86_V4"])
def test_every_simd_loop_gives_exact_cubes_through_the_command_line(disabled):
    env = dict(os.environ, NPY_DISABLE_CPU_FEATURES=disabled)
    cubes = [c for c in CUBES for _ in range(16)]
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograd_cli",
            "eval",
            "cbrt(x)",
            "--x",
            json.dumps(cubes),
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["value"] == [CUBES[c] for c in cubes]
