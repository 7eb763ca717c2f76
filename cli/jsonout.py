"""The one JSON encoder: SPEC.md's rules, valid RFC 8259 JSON.

Arrays become nested lists, a 0-d array a bare number, and non-finite
numbers the strings "nan", "inf" and "-inf" (never NaN/Infinity tokens).
"""

from __future__ import annotations

import json
import math


def _number(x: float):
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
    return json.dumps(plain(obj), allow_nan=False, ensure_ascii=False)
