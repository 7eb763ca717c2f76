"""Printing tensors the way PyTorch and NumPy do (used by ``Tensor.__repr__``)."""

from __future__ import annotations

from typing import Literal

from . import backend

np = backend.host  # printing always happens on the host, with NumPy


def format_array(
    array, floatmode: Literal["fixed", "unique", "maxprec", "maxprec_equal"] = "unique"
) -> str:
    """NumPy's own printing with PyTorch's comma separators: ``5.``, ``[2., 4.]``."""
    a = np.asarray(array)
    return np.array2string(
        a,
        separator=", ",
        floatmode=floatmode,
        threshold=10**6,
        max_line_width=10**6 if a.ndim <= 1 else 75,
    )


def tensor_repr(t) -> str:
    data = backend.to_numpy(t.data)
    finite = data[np.isfinite(data)]
    # PyTorch prints integral values as `2.` and anything else with 4 decimals: `0.1000`.
    integral = finite.size == 0 or bool(
        (finite == np.round(finite)).all() and np.abs(finite).max() < 1e8
    )
    body = np.array2string(
        data,
        separator=", ",
        prefix="tensor(",
        precision=4,
        floatmode="maxprec_equal" if integral else "fixed",
    )
    extras = []
    if t.data.dtype != backend.default_dtype:
        extras.append(f"dtype={backend.dtype_name(t.data.dtype)}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        extras.append("requires_grad=True")
    suffix = "".join(", " + e for e in extras)
    return f"tensor({body}{suffix})"


#: NumPy's notation rule (``array2string``): scientific when the smallest nonzero magnitude
#: is below 1e-4 or the largest is more than 1e3 times it, or the largest is past what
#: the dtype holds in positional digits (see :func:`_positional_limit`).
SMALLEST_POSITIONAL = 1e-4
WIDEST_RATIO = 1e3


def _positional_limit(dtype) -> float:
    """Magnitudes from here on print in scientific notation: 1e16 for float64 (NumPy's
    scalar rule), 1e7 for float32, 1e4 for float16 (10 ** (the dtype's decimal digits + 1))."""
    return 10.0 ** (np.finfo(dtype).precision + 1)


def shown(array, threshold: int, edgeitems: int):
    """The elements ``array2string`` prints of ``array``: all of them, or with more than
    ``threshold`` elements, ``edgeitems`` at each end of each axis (NumPy's summary)."""
    a = np.asarray(array)
    if a.size <= threshold:
        return a
    for axis in range(a.ndim):
        if a.shape[axis] > 2 * edgeitems:
            keep = np.r_[0:edgeitems, a.shape[axis] - edgeitems : a.shape[axis]]
            a = a.take(keep, axis=axis)
    return a


class Notation:
    """One notation for a set of numbers, a table column: NumPy's ``array2string`` rules
    (``floatmode="maxprec"``: at most ``precision`` digits after the point, each number
    trimmed; ``precision=None``: every round-trip digit) decided over all of them at once.

    Positional, or scientific for the whole set when its magnitudes call for it (below
    1e-4, a ratio past 1e3, or past :func:`_positional_limit`), and then with the same
    number of mantissa digits for every number, as NumPy gives an array.  A negative number
    that rounds to zero prints as ``0.``, never ``-0.``; ``-0.0`` prints as ``0.0``.

    :meth:`scalar` writes one number (``-12.0``, ``1.8186``, ``1.2346e-05``);
    :meth:`formatter` gives ``array2string`` the function for one array's elements, padded
    to that array's widths (so each array stays aligned on its own).
    """

    def __init__(self, arrays, precision: int | None):
        self.precision = precision
        self.exp = False
        self.digits: int | None = None  # scientific: the mantissa digits of every number
        self.exp_size = -1
        parts = []
        largest = smallest = None
        for a in arrays:
            a = np.asarray(a)
            if a.dtype.kind != "f" or a.size == 0:
                continue
            finite = a[np.isfinite(a)].ravel()
            size = np.abs(finite[finite != 0])
            if size.size == 0:
                continue
            parts.append(finite)
            top, bottom = size.max(), size.min()
            if top >= _positional_limit(a.dtype):
                self.exp = True
            largest = top if largest is None else max(largest, top)
            smallest = bottom if smallest is None else min(smallest, bottom)
        if largest is not None and smallest is not None:
            with np.errstate(over="ignore"):
                if smallest < SMALLEST_POSITIONAL or largest / smallest > WIDEST_RATIO:
                    self.exp = True
        if self.exp:
            texts = [
                np.format_float_scientific(x, precision=precision, unique=True, trim=".")
                for part in parts
                for x in part
            ]
            mantissas, _, exponents = zip(*(t.partition("e") for t in texts))
            self.digits = max(len(m.partition(".")[2]) for m in mantissas)
            self.exp_size = max(len(e) for e in exponents) - 1

    def _text(self, x, pad_left=None, pad_right=None) -> str:
        """A finite number (a NumPy scalar, its dtype's digits) in this notation."""
        x = x + x.dtype.type(0)  # -0.0 + 0.0 is 0.0
        if self.exp:
            return np.format_float_scientific(
                x,
                precision=self.digits,
                min_digits=self.digits,
                unique=True,
                trim="k",
                pad_left=pad_left,
                exp_digits=self.exp_size,
            )
        if x < 0 and -x < 1 and self.precision is not None and self._rounds_to_zero(-x):
            x = -x
        return np.format_float_positional(
            x,
            precision=self.precision,
            unique=True,
            fractional=True,
            trim=".",
            pad_left=pad_left,
            pad_right=pad_right,
        )

    def _rounds_to_zero(self, size) -> bool:
        text = np.format_float_positional(size, precision=self.precision, unique=True)
        return text.strip("0.") == ""

    def scalar(self, x) -> str:
        """One number as a table shows it alone: ``-12.0``, ``0.077``, ``1e+20``, ``nan``."""
        x = np.asarray(x)[()]
        if not isinstance(x, np.floating):
            return str(x)
        if not np.isfinite(x):
            return "nan" if np.isnan(x) else "inf" if x > 0 else "-inf"
        text = self._text(x)
        if self.exp:
            return text.replace(".e", "e")  # 1.e+20 -> 1e+20, as Python and NumPy's scalars
        return text + "0" if text.endswith(".") else text  # -12. -> -12.0

    def formatter(self, array):
        """``array2string``'s ``float_kind`` function for ``array`` (its shown elements):
        each element in this notation, padded to the array's own widths, as NumPy pads."""
        a = np.asarray(array)
        finite = a[np.isfinite(a)].ravel() if a.dtype.kind == "f" else a.ravel()[:0]
        if finite.size == 0:
            pad_left = pad_right = 0
        elif self.exp:
            pad_left = 2 if (finite < 0).any() else 1
            pad_right = self.exp_size + 2 + self.digits
        else:
            ints, _, fracs = zip(*(self._text(x).partition(".") for x in finite))
            pad_left = max(map(len, ints))
            pad_right = max(map(len, fracs))
        if finite.size != a.size:  # room for nan, inf and -inf
            negative_inf = bool((a[np.isinf(a)] < 0).any())
            pad_left = max(pad_left, 3 - (pad_right + 1), 3 + negative_inf - (pad_right + 1))
        width = pad_left + pad_right + 1

        def format_element(x) -> str:
            if not np.isfinite(x):
                text = "nan" if np.isnan(x) else "inf" if x > 0 else "-inf"
                return text.rjust(width)
            if self.exp:
                return self._text(x, pad_left=pad_left)
            return self._text(x, pad_left=pad_left, pad_right=pad_right)

        return format_element
