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
