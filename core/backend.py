"""The array-module seam: the one place in core/ that imports NumPy (or CuPy).

Every other module reaches the array library through ``backend.xp`` (looked up
at call time, so switching device takes effect everywhere) and the helpers
below.  ``use_device("gpu")`` swaps in CuPy; ``use_dtype`` sets the dtype that
new tensors get (float64 unless told otherwise).
"""

from __future__ import annotations

from typing import Any

import numpy

from .errors import DeviceError

host = numpy  # host-side NumPy, for printing and I/O
xp = numpy  # the array module of the current device
device = "cpu"
default_dtype: type[numpy.floating[Any]] = numpy.float64

_DTYPES: dict[str, type[numpy.floating[Any]]] = {"float64": numpy.float64, "float32": numpy.float32}


def use_device(name: str) -> None:
    """Select ``cpu`` (NumPy) or ``gpu`` (CuPy) for arrays made from now on."""
    global xp, device
    if name == "cpu":
        xp, device = numpy, "cpu"
        return
    if name != "gpu":
        raise DeviceError(f"unknown device {name!r} (choose cpu or gpu)")
    try:
        import cupy  # noqa: PLC0415 - optional dependency, imported on demand

        cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # ImportError, CUDARuntimeError, ...
        raise DeviceError(
            f"GPU unavailable: {exc.__class__.__name__}: {exc}".rstrip(": ")
            + " (install the [gpu] extra with CuPy on a machine with CUDA, or use --device cpu)"
        ) from None
    xp, device = cupy, "gpu"  # pragma: no cover - CuPy with a GPU: tests/test_gpu.py


def use_dtype(name: str) -> None:
    """Set the floating dtype of new tensors: ``float64`` (default) or ``float32``."""
    global default_dtype
    try:
        default_dtype = _DTYPES[name]
    except KeyError:
        raise ValueError(f"unknown dtype {name!r} (choose float64 or float32)") from None


def asarray(value, dtype=None):
    """``value`` as an array of the current module, in ``dtype`` (default: the default dtype)."""
    return xp.asarray(value, dtype=dtype or default_dtype)


def to_numpy(array):
    """A NumPy array (host memory) holding ``array``."""
    if xp is not numpy and hasattr(array, "get"):  # pragma: no cover - CuPy with a GPU
        return array.get()
    return numpy.asarray(array)


def dtype_name(dtype) -> str:
    return numpy.dtype(dtype).name


def errstate():
    """IEEE semantics for 1/0, log(-1) and friends: inf and nan, never a warning or exception."""
    return numpy.errstate(all="ignore")
