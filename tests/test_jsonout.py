"""cli/jsonout.py, the one JSON encoder: numpy scalars of every kind, nesting, duck types.

SPEC (README, "JSON output and exit codes"): valid RFC 8259 JSON; arrays become nested lists,
a 0-d array a bare number, non-finite numbers the strings "nan", "inf" and "-inf".
"""

from __future__ import annotations

import json
import math
from collections import namedtuple
from fractions import Fraction

import numpy as np
import pytest

from autograd_cli.cli.jsonout import dumps, float_column, plain
from autograd_cli.core import tensor


def _strict_loads(text):
    """json.loads that refuses the NaN/Infinity tokens RFC 8259 does not have."""

    def refuse(token):
        raise AssertionError(f"non-RFC 8259 token {token!r} in {text!r}")

    return json.loads(text, parse_constant=refuse)


FLOAT_KINDS = [np.float16, np.float32, np.float64]
INT_KINDS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


@pytest.mark.parametrize("kind", FLOAT_KINDS, ids=lambda k: k.__name__)
def test_numpy_float_scalars(kind):
    for value, expected in (
        (1.5, 1.5),
        (-0.25, -0.25),
        (0.0, 0.0),
        (math.nan, "nan"),
        (math.inf, "inf"),
        (-math.inf, "-inf"),
    ):
        got = plain(kind(value))
        assert got == expected and type(got) is type(expected), (kind, value, got)
        assert _strict_loads(dumps(kind(value))) == expected
    # the shortest text that gives the scalar back in its own dtype: float32 0.1 is written
    # 0.1 (not 0.10000000149011612, its double's digits), and reads back as float32 0.1
    got = plain(kind(0.1))
    assert got == 0.1 and kind(got) == kind(0.1) and dumps(kind(0.1)) == "0.1"
    assert plain(kind(1 / 3)) == float(str(kind(1 / 3)))  # float32: 0.33333334


@pytest.mark.parametrize("kind", INT_KINDS, ids=lambda k: k.__name__)
def test_numpy_int_scalars(kind):
    info = np.iinfo(kind)
    for value in (0, 7, int(info.min), int(info.max)):
        got = plain(kind(value))
        assert got == value and type(got) is int, (kind, value, got)
        assert dumps(kind(value)) == str(value)  # exact, even 2**64 - 1


def test_numpy_bools_and_python_scalars():
    assert plain(np.bool_(True)) is True and dumps(np.bool_(False)) == "false"
    assert plain(True) is True and plain(None) is None and plain("x") == "x"
    assert dumps(float("nan")) == '"nan"' and dumps(-math.inf) == '"-inf"'
    assert dumps(3) == "3" and dumps(2.5) == "2.5"


def test_nested_numpy_scalars():
    doc = {
        "value": [np.float32(math.nan), (np.int8(-3), np.float64(math.inf))],
        1: {"flag": np.bool_(True), "x": [[np.float16(-math.inf)], np.uint64(2**64 - 1)]},
        "shape": (),
    }
    expected = {
        "value": ["nan", [-3, "inf"]],
        "1": {"flag": True, "x": [["-inf"], 2**64 - 1]},
        "shape": [],
    }
    assert plain(doc) == expected
    assert _strict_loads(dumps(doc)) == expected


def test_arrays_and_tensors():
    assert dumps(np.array(2.5)) == "2.5"  # a 0-d array is a bare number
    assert dumps(np.array(math.nan)) == '"nan"'
    a = np.array([[1.0, math.inf], [-math.inf, math.nan]], dtype=np.float32)
    assert _strict_loads(dumps(a)) == [[1.0, "inf"], ["-inf", "nan"]]
    assert dumps(np.arange(3, dtype=np.int16)) == "[0, 1, 2]"
    assert dumps(np.zeros((2, 0))) == "[[], []]"
    assert _strict_loads(dumps({"grad": tensor([0.5, math.inf])})) == {"grad": [0.5, "inf"]}
    assert dumps(tensor(-math.inf)) == '"-inf"'


class _DeviceScalar:
    """A duck-typed 0-d scalar (as a lazy device scalar might be): ``shape`` and ``item()``,
    no ``tolist()``."""

    shape = ()

    def __init__(self, value):
        self.value = value

    def item(self):
        return self.value


class _Boxed:
    """Only ``item()``: no shape, no tolist."""

    def __init__(self, value):
        self.value = value

    def item(self):
        return self.value


@pytest.mark.parametrize("kind", [_DeviceScalar, _Boxed])
def test_duck_typed_scalars_go_through_item(kind):
    assert plain(kind(2.5)) == 2.5
    assert plain(kind(7)) == 7
    # what item() returns is made plain in turn: non-finite floats and numpy scalars
    assert plain(kind(math.inf)) == "inf" and dumps(kind(-math.inf)) == '"-inf"'
    assert dumps(kind(math.nan)) == '"nan"'
    got = plain(kind(np.float32(0.5)))
    assert got == 0.5 and type(got) is float
    assert dumps([kind(np.int64(3)), {"v": kind(np.float64(math.inf))}]) == '[3, {"v": "inf"}]'


def test_a_record_with_a_shape_field_is_a_tuple_not_an_array():
    # hasattr(obj, "shape") alone does not make an array: a namedtuple with a shape field
    # is still a tuple (and has no tolist to call).
    Meta = namedtuple("Meta", "shape value")
    doc = {"meta": Meta(shape=(2, 3), value=np.float64(math.nan))}
    assert plain(doc) == {"meta": [[2, 3], "nan"]}
    assert _strict_loads(dumps(doc)) == {"meta": [[2, 3], "nan"]}


@pytest.mark.parametrize("obj", [object(), Fraction(1, 3), {1, 2}])
def test_objects_json_cannot_encode_are_left_to_json(obj):
    # No shape/tolist/item: plain hands them back untouched, and json's own TypeError says
    # what could not be encoded.
    assert plain(obj) is obj
    with pytest.raises(TypeError, match="not JSON serializable"):
        dumps({"x": obj})


def test_output_is_rfc_8259_and_keeps_unicode():
    text = dumps({"expr": "x² · y", "value": [math.nan, math.inf, -math.inf, 1e308]})
    assert "NaN" not in text and "Infinity" not in text
    assert "x² · y" in text  # ensure_ascii=False
    assert _strict_loads(text) == {"expr": "x² · y", "value": ["nan", "inf", "-inf", 1e308]}


def test_long_double_scalars_and_arrays_are_doubles():
    # np.longdouble.item() returns an np.longdouble again (no Python type holds it): the
    # encoder once recursed on it forever.  JSON numbers are doubles, so it is written as one.
    assert dumps(np.longdouble(1.5)) == "1.5"
    assert dumps(np.array([0.25, np.inf, -np.inf], dtype=np.longdouble)) == (
        '[0.25, "inf", "-inf"]'
    )
    assert dumps({"v": np.longdouble("nan")}) == '{"v": "nan"}'


@pytest.mark.parametrize("kind", FLOAT_KINDS, ids=lambda k: k.__name__)
def test_float_column_writes_the_bytes_dumps_writes(kind):
    # The batch fast path (cli/batch/engine.py's line templates) formats a column with "%s" %
    # item; every element must come out exactly as dumps writes that element alone.
    rng = np.random.default_rng(7)
    special = [0.0, -0.0, 1.0, -2.5, 0.1, 1 / 3, 1e-320, 5e-324, 1e308, -1e308, 1e16, 123456789.0]
    special += [math.nan, math.inf, -math.inf, -math.nan]
    finfo = np.finfo(kind)
    special += [float(finfo.max), float(finfo.tiny), float(finfo.eps)]
    random = (rng.standard_normal(500) * 10.0 ** rng.integers(-30, 30, 500)).tolist()
    with np.errstate(over="ignore", under="ignore"):
        column = np.array(special + random, dtype=np.float64).astype(kind)
    cell = "%s"  # as in a template: text % row
    texts = [cell % (item,) for item in float_column(column)]
    assert texts == [dumps(element) for element in column]
    # each the shortest text of the element in its own dtype: it reads back exactly
    assert texts == [dumps(float(str(element))) for element in column]
    finite = np.isfinite(column)
    back = np.array([json.loads(t) for t, f in zip(texts, finite) if f], dtype=kind)
    assert (back == column[finite]).all()
    assert float_column(np.array([], dtype=kind)) == []
