"""The one JSON encoder: SPEC.md's rules, valid RFC 8259 JSON.

Arrays become nested lists, a 0-d array a bare number, and non-finite
numbers the strings "nan", "inf" and "-inf" (never NaN/Infinity tokens).
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


def plain(obj):
    """``obj`` with arrays and numpy scalars turned into JSON-able Python values."""
    if hasattr(obj, "tolist") and hasattr(obj, "shape"):
        obj = obj.tolist()
    if isinstance(obj, bool) or obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, int):
        return obj
    if isinstance(obj, float):
        return _number(obj)
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

    values = array.tolist()
    finite = numpy.isfinite(array)
    if not finite.all():
        for i in numpy.flatnonzero(~finite).tolist():
            values[i] = json.dumps(_number(values[i]))
    return values
