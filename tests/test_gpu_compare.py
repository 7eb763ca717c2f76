"""tests/test_gpu.py's comparison, shown on the CPU against the failure of issue 25.

``test_gpu_matches_cpu[grad-argv2]`` failed on a real GPU: ``grad`` of
``y = x + 2; z = y * y * 3`` at a 2x3 ``x`` gives a nested list, and the old
``pytest.approx(cpu["value"])`` raises TypeError on one whatever the numbers.  Here, with no
GPU: the old form raises on that very document, :func:`test_gpu.assert_same_document` compares
it elementwise (every key, not only ``value``) and fails, naming the place, when one element
differs; and the whole GPU test file runs end to end with the strict stand-in for CuPy
(tests/strict_xp.py, the ``device`` fixture of tests/test_strict_backend.py) as the "gpu".
"""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
import test_gpu
from test_gpu import CASES, assert_same_document
from test_strict_backend import device  # noqa: F401 - the strict stand-in as the "gpu" device

COMMAND, ARGV2 = CASES[2]  # pytest's id for it: grad-argv2


@pytest.fixture
def argv2(cli):
    """The CPU's document for the failing case: nested lists in ``value`` and ``grad``."""
    result = cli(COMMAND, *ARGV2, "--json")
    assert result.code == 0
    doc = result.json
    assert doc["value"] == [[27.0, 48.0, 75.0], [108.0, 147.0, 192.0]]
    assert doc["grad"]["x"] == [[18.0, 24.0, 30.0], [36.0, 42.0, 48.0]]
    return doc


def test_the_old_comparison_raises_on_the_nested_value(argv2):
    gpu = copy.deepcopy(argv2)  # even numbers equal to the last bit
    with pytest.raises(TypeError, match="does not support nested data structures"):
        assert gpu["value"] == pytest.approx(argv2["value"], rel=1e-12)


def test_the_new_comparison_passes_within_the_tolerance(argv2):
    assert_same_document(copy.deepcopy(argv2), argv2)
    nudged = copy.deepcopy(argv2)
    nudged["value"][1][2] *= 1 + 1e-14  # last-bit differences of a GPU's kernels
    nudged["grad"]["x"][0][0] *= 1 - 1e-14
    assert_same_document(nudged, argv2)


@pytest.mark.parametrize(
    "spoil, where",
    [
        (lambda d: d["value"][1].__setitem__(2, 192.000001), r"\$\.value"),
        (lambda d: d["grad"]["x"][0].__setitem__(0, 18.5), r"\$\.grad\.x"),
        (lambda d: d["grad"]["x"][0].__setitem__(0, "nan"), r"\$\.grad\.x"),
        (lambda d: d["value"].append([1.0, 2.0, 3.0]), r"\$\.value: shape \(3, 3\)"),
        (lambda d: d["value"].__setitem__(0, 27.0), r"\$\.value\[0\]: shape"),
        (lambda d: d.__setitem__("shape", [3, 2]), r"\$\.shape"),
        (lambda d: d["grad"].__setitem__("y", 1.0), r"\$\.grad: keys"),
        (lambda d: d.__setitem__("expr", "y = x + 2"), r"\$\.expr"),
    ],
    ids=[
        "one-value",
        "one-grad",
        "nan-for-a-number",
        "extra-row",
        "ragged",
        "shape",
        "key",
        "text",
    ],
)
def test_the_new_comparison_fails_on_one_difference(argv2, spoil, where):
    gpu = copy.deepcopy(argv2)
    spoil(gpu)
    with pytest.raises(AssertionError, match=where):
        assert_same_document(gpu, argv2)


def test_nan_where_nan_and_non_finite_text():
    doc = {"value": ["-inf", 0.0], "grad": {"x": ["inf", "nan"]}, "warnings": ["log gave inf"]}
    assert_same_document(json.loads(json.dumps(doc)), doc)
    with pytest.raises(AssertionError, match=r"\$\.warnings\[0\]"):
        assert_same_document({**doc, "warnings": ["log gave nan"]}, doc)
    with pytest.raises(AssertionError, match=r"\$\[1\]\.line"):
        assert_same_document([{"line": 2}, {"line": 4}], [{"line": 2}, {"line": 3}])
    assert test_gpu._numbers([[1.0], [2.0, 3.0]]) is None  # ragged: compared item by item
    assert test_gpu._numbers(True) is None and test_gpu._numbers("1.0") is None
    assert test_gpu._numbers([["nan", 1]]).shape == (1, 2)
    assert np.isnan(test_gpu._numbers("nan"))


@pytest.mark.parametrize("command, argv", CASES)
def test_the_gpu_file_passes_on_the_stand_in(device, cli, command, argv):  # noqa: F811
    test_gpu.test_gpu_matches_cpu(cli, command, argv)
    assert device.counts().get("seam", 0) > 0  # the "gpu" run was the stand-in's


def test_the_gpu_batch_test_passes_on_the_stand_in(device, cli, tmp_path):  # noqa: F811
    test_gpu.test_gpu_batch(cli, tmp_path)
    assert device.counts().get("seam", 0) > 0
