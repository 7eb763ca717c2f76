"""Survivors of ``bench/mutate.py`` with seed 89.

Each test's comment names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from NumPy,
the docs, the local batch engine or working by hand, never from the code under test.
"""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

from autograd_cli.cli.batch import dask_parts
from autograd_cli.core.optimize import minimize
from autograd_cli.grammar import parse

# ---- complex64 JSON: both parts, each as its float32's shortest digits ----------------------


def test_complex64_json_keeps_the_imaginary_parts(cli):
    # kills cli/jsonout.py:34: return shortest(array.real) + 1j * shortest(array.imag)
    #   -> return shortest(array.real)   (a complex64 result lost its imaginary parts: each
    #   element came out as a bare real number instead of {"re": x, "im": y})
    got = cli("eval", "z*1.1", "--z", "[1+2j, 3j]", "--dtype", "float32", "--json")
    assert got.code == 0, got.err
    # the oracle: NumPy's complex64 product, each part as its float32's shortest text
    want = np.array([1 + 2j, 3j], np.complex64) * np.complex64(1.1)
    expected = [{"re": float(str(v.real)), "im": float(str(v.imag))} for v in want]
    assert expected == [{"re": 1.1, "im": 2.2}, {"re": 0.0, "im": 3.3000002}]
    assert got.json["value"] == expected


# ---- minimize: a flat function's rounding noise is no inflection ----------------------------


def test_minimize_of_a_constant_with_rounding_noise_is_a_minimum_everywhere():
    # kills core/optimize.py:433: abs(f) + abs(there) -> abs(f) - abs(there)   (the
    #   inflection check's rounding slack, 64 eps (|f| + |there|), shrank to nearly nothing:
    #   a fall of a few ulps in the rounding noise of a constant function read as "the value
    #   still falls", and minimize said "not a minimum" at a point of a flat valley)
    # (x+1)**2 - x**2 - 2*x is 1 everywhere: every point is a minimum (the gradient and the
    # Hessian are zero); its float64 values differ from 1 by a few ulps of x**2 only
    program = parse("(x+1)**2 - x**2 - 2*x")
    for k in range(1, 100):
        r = minimize(program, {"x": k / 10}, trace=False)
        assert r.converged, (k / 10, r.message)
        assert r.iterations == 0 and r.x["x"] == k / 10
        assert r.value == pytest.approx(1.0, abs=1e-12)


# ---- solve: --tol is relative to 1 + max|x|, so at x = 0 it is --tol itself ----------------


def test_solve_tolerance_at_zero_is_tol_itself(cli):
    # kills core/optimize.py:710: np.max(np.abs(theta), initial=0.0) -> initial=1.0   (the
    #   tolerance became at least 2*tol: at x = 0 a residual of 0.15 passed --tol 0.1 and solve
    #   stopped at once, "converged" at no root)
    # by hand: at x = 0, |F| = 0.15 > 0.1 * (1 + 0): one Newton step to the root x = 0.15
    got = cli("solve", "x - 0.15", "--x", "0", "--tol", "0.1", "--json")
    assert got.code == 0, got.err
    doc = got.json
    assert doc["converged"] is True and doc["iterations"] == 1
    assert doc["x"] == {"x": pytest.approx(0.15, abs=1e-15)}
    assert doc["residual"] <= 0.1


# ---- Dask engine: a Parquet partition not finished at the --timeout -------------------------


def _dask_modules():
    pytest.importorskip("distributed")
    pytest.importorskip("dask")
    pytest.importorskip("pyarrow.parquet")
    import test_batch_dask  # noqa: PLC0415

    return test_batch_dask


_REAL_EVALUATE = dask_parts.evaluate_part
_LATE = threading.Event()


def _evaluate_after_the_deadline(part, *args):
    """Partitions after the first wait until the --timeout ran out and the client gave up
    waiting for them (released by the test once the run is over)."""
    if part.index > 0:
        dask_parts.STOP.wait(10)
        _LATE.wait(10)
    return _REAL_EVALUATE(part, *args)


def _docs(out: str) -> list:
    return [json.loads(line) for line in out.splitlines()]


def test_timeout_gives_every_row_of_an_unfinished_parquet_partition_its_record(
    tmp_path, cli, scheduler, monkeypatch
):
    # kills cli/batch/dask.py:659: numbers = list(range(a, min(last, a + size))) -> a - size
    #   (the rows of a Parquet partition whose task had not finished at the --timeout got no
    #   ``limit`` record: the run broke instead; every line read gets its record)
    test_batch_dask = _dask_modules()
    # 20 rows in 4 row groups of 5 (4 partitions): lines 2 to 21, as the same table in CSV
    path, csv_path = test_batch_dask.write_parquet(
        tmp_path, "t", {"x": [float(k) for k in range(20)], "y": [2.0] * 20}, 5
    )
    local = cli("batch", str(csv_path), "--expr", test_batch_dask.EXPR)
    assert local.code == 0 and [d["line"] for d in _docs(local.out)] == list(range(2, 22))
    monkeypatch.setattr(dask_parts, "evaluate_part", _evaluate_after_the_deadline)
    _LATE.clear()
    try:
        got = cli(
            "batch", str(path), "--expr", test_batch_dask.EXPR, "--engine", "dask",
            "--scheduler", scheduler, "--timeout", "1",
        )  # fmt: skip
    finally:
        _LATE.set()
    assert got.code == 1, got.err
    # by hand: the first partition's 5 lines are its own, the other 15 a limit record each
    assert "stopped after the --timeout of 1 s: 20 line(s) written, 15 of them" in got.err
    assert got.out.splitlines()[:5] == local.out.splitlines()[:5]
    assert [d["line"] for d in _docs(got.out)] == list(range(2, 22))
    assert all(d["error"]["kind"] == "limit" for d in _docs(got.out)[5:])
