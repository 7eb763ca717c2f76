"""The one JSON encoder: SPEC.md's rules, valid RFC 8259 JSON.

Arrays become nested lists, a 0-d array a bare number, and non-finite
numbers the strings "nan", "inf" and "-inf" (never NaN/Infinity tokens).  A complex number
is the object ``{"re": x, "im": y}``, each part by the same rule.
"""

from __future__ import annotations

import json
import math


def _number(x: float):
    """SPEC's rule: a finite float as it is, nan/inf/-inf as the strings "nan", "inf", "-inf"."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def shortest(array):
    """A float32 or float16 array (or scalar) as the float64 array of the shortest decimals
    that give back each element in its own dtype: float32 1.8185948 is the double
    1.8185948133468628, which ``repr`` writes with a double's 17 digits; this gives the double
    1.8185948, written ``1.8185948``.  Anything else is returned as it is."""
    dtype = getattr(array, "dtype", None)
    if dtype is None or dtype.kind not in "fc" or dtype.itemsize >= 8 * (1 + (dtype.kind == "c")):
        return array
    import numpy  # noqa: PLC0415 - a dtype means NumPy is loaded

    if dtype.kind == "c":  # complex64: each part as a float32's shortest digits
        return shortest(array.real) + 1j * shortest(array.imag)
    # NumPy's str of a float32 is its shortest round-trip text (Dragon4, unique)
    return numpy.asarray(array).astype(str).astype(numpy.float64)


def plain(obj):
    """``obj`` with arrays and numpy scalars turned into JSON-able Python values (a float32
    or float16 number as its own shortest digits, see :func:`shortest`)."""
    if hasattr(obj, "tolist") and hasattr(obj, "shape"):
        obj = shortest(obj).tolist()
    if isinstance(obj, bool) or obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, int):
        return obj
    if isinstance(obj, float):
        return _number(obj)
    if isinstance(obj, complex):
        return {"re": _number(obj.real), "im": _number(obj.imag)}
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        # Iterative for deep nesting is unnecessary here: arrays are at most a few dims deep.
        return [plain(v) for v in obj]
    if hasattr(obj, "item"):
        item = obj.item()
        if type(item) is type(obj):  # np.longdouble.item() is itself: as a double
            return _number(float(item))
        return plain(item)
    return obj


def dumps(obj) -> str:
    """``obj`` as one JSON document (SPEC's rules; see :func:`plain`)."""
    return json.dumps(plain(obj), allow_nan=False, ensure_ascii=False)


def float_column(array) -> list:
    """The fast path for a 1-D float array: each element as ``"%s" %`` must write it.

    ``"%s" % item`` is exactly ``dumps(element)``: a finite element stays a Python float
    (``str`` of a float is its ``repr``, which ``json`` writes too), a non-finite one becomes
    the JSON text of :func:`_number`'s string (``'"nan"'``, ``'"inf"'``, ``'"-inf"'``).  For
    batch output templates, where calling :func:`dumps` per number would cost most of the run.
    """
    import numpy  # noqa: PLC0415 - only the batch path needs NumPy here

    array = shortest(array)
    values = array.tolist()
    finite = numpy.isfinite(array)
    if not finite.all():
        for i in numpy.flatnonzero(~finite).tolist():
            values[i] = json.dumps(_number(values[i]))
    return values


#: orjson writes a double as its shortest round-trip digits, like ``repr``, but lays out
#: some differently (``1e-7`` for ``1e-07``, ``0.000025`` for ``2.5e-05``); where ``repr`` writes
#: plain decimals (1e-4 <= |x| < 1e16, and zero) the two are the same text, and only there is
#: orjson's text used (tests/test_fast_json.py compares them on millions of values)
_PLAIN_LOW, _PLAIN_HIGH = 1e-4, 1e16
_orjson = None  # the module, False when it is not installed, None before the first look


#: numbers whose text orjson must write as ``repr`` does before it is trusted (a release
#: that lays out plain decimals differently is not used: ``repr`` of each instead)
_PROBES = [0.0, -0.0, 1e-4, 0.00012, 0.1, 1.0, -2.5, 1 / 3, 123456.789, 1e15, 9999999999999998.0]


def _fast_encoder():
    """orjson when it is installed and writes the probes as ``repr`` does, else False."""
    global _orjson
    if _orjson is None:
        _orjson = False
        try:
            import numpy  # noqa: PLC0415
            import orjson  # noqa: PLC0415 - optional (the [fast] extra), batch output only

            probe = orjson.dumps(numpy.array(_PROBES), option=orjson.OPT_SERIALIZE_NUMPY)
            if probe.decode("ascii") == "[" + ",".join(map(repr, _PROBES)) + "]":
                if orjson.dumps([1, -2, 2**62]) == b"[1,-2,4611686018427387904]":
                    _orjson = orjson
        except (ImportError, AttributeError, TypeError, ValueError):
            pass
    return _orjson


def fast_encoder():
    """orjson, when it is installed and writes doubles as ``repr`` does; else False."""
    return _fast_encoder()


def number_texts(array, fast: bool = True) -> list:
    """The JSON text of each element of an array (a 1-D float array: the fast case), exactly
    as :func:`dumps` writes that element alone (``repr`` of the double, of :func:`shortest`'s
    double for float32; ``"nan"``, ``"inf"`` and ``"-inf"`` quoted).

    With orjson installed (and ``fast``), most of the text comes from one ``orjson.dumps`` of
    the whole column, and only elements outside repr's plain-decimal range (and non-finite
    ones) are written one at a time; without it, ``repr`` of each.  For batch output, where
    this is most of the work.
    """
    import numpy  # noqa: PLC0415 - only the batch path needs NumPy here

    array = numpy.asarray(array)
    encoder = _fast_encoder() if fast else False
    if array.ndim != 1 or array.dtype.kind != "f" or array.dtype.itemsize > 8:
        return [dumps(element) for element in array]  # rows, longdouble, ints: the reference
    column = double_column(array)
    if not encoder or len(column) == 0:
        return [float_text(x) for x in column.tolist()]
    texts = encoder.dumps(column, option=encoder.OPT_SERIALIZE_NUMPY).decode("ascii")
    texts = texts[1:-1].split(",")
    where = odd_places(column)
    for i, x in zip(where.tolist(), column[where].tolist()):
        texts[i] = float_text(x)
    return texts


def double_column(array):
    """A float array as the contiguous float64 column whose elements' texts are written
    (:func:`shortest`'s doubles for float32 and float16)."""
    import numpy  # noqa: PLC0415 - only the batch path needs NumPy here

    return numpy.ascontiguousarray(shortest(array), dtype=numpy.float64)


def float_text(x: float) -> str:
    """One double's JSON text as :func:`dumps` writes it alone: ``repr``, or ``"nan"``,
    ``"inf"``, ``"-inf"`` quoted."""
    return repr(x) if x - x == 0 else json.dumps(_number(x))


def odd_places(column):
    """The indices of a float64 column where orjson's text is not ``repr``'s: non-finite
    numbers (nan compares false) and those repr writes with an exponent."""
    import numpy  # noqa: PLC0415 - only the batch path needs NumPy here

    size = numpy.abs(column)
    with numpy.errstate(invalid="ignore"):
        odd = ~((size >= _PLAIN_LOW) & (size < _PLAIN_HIGH)) & (column != 0)
    return numpy.flatnonzero(odd)


def int_texts(values: list) -> list:
    """The JSON text of each of ``values``, Python ints (line numbers): ``str`` of each, or
    with orjson one call for the list (the same digits)."""
    encoder = _fast_encoder()
    if encoder and values:
        try:
            texts = encoder.dumps(values).decode("ascii")[1:-1].split(",")
        except TypeError:  # not all ints orjson takes (one over 64 bits): str of each
            texts = None
        if texts is not None and len(texts) == len(values) and type(values[0]) is int:
            return texts
    return list(map(str, values))
