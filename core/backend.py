"""The array-module seam: the one place in core/ that imports NumPy (or CuPy).

Every other module reaches the array library through ``backend.xp`` (looked up
at call time, so a device chosen for a block takes effect everywhere) and the
helpers below.  The device and the dtype of new tensors are chosen for a block,
never for good::

    with backend.using(device="gpu", dtype="float32"):
        ...  # arrays are CuPy arrays, new tensors float32

and the previous choice comes back when the block ends, however it ends.  Outside
every block the arrays are NumPy arrays on the CPU and new tensors are float64.
The choice is process-wide (module attributes read by every op), not per thread.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy

from .errors import DeviceError

host = numpy  # host-side NumPy, for printing and I/O
xp = numpy  # the array module of the current device
device = "cpu"
default_dtype: type[numpy.floating[Any]] = numpy.float64

_DTYPES: dict[str, type[numpy.floating[Any]]] = {"float64": numpy.float64, "float32": numpy.float32}


@contextmanager
def using(device: str | None = None, dtype: str | None = None) -> Iterator[None]:
    """Within the block, arrays live on ``device`` (``cpu``: NumPy, ``gpu``: CuPy) and new
    tensors get ``dtype`` (``float64`` or ``float32``); None keeps the current one.

    Both names are checked before anything changes: an unknown one (or a GPU that is not
    there) raises and leaves the settings as they were.  On leaving the block, by its end
    or by an exception, the settings in force when it was entered come back, so nested
    blocks unwind in order.
    """
    previous = _settings()
    chosen = previous[2] if dtype is None else _dtype(dtype)
    module, name = previous[:2] if device is None else _array_module(device)
    _install(module, name, chosen)
    try:
        yield
    finally:
        _install(*previous)


def _settings() -> tuple[Any, str, type[numpy.floating[Any]]]:
    return xp, device, default_dtype


def _install(module: Any, name: str, dtype: type[numpy.floating[Any]]) -> None:
    global xp, device, default_dtype
    xp, device, default_dtype = module, name, dtype


def _array_module(name: str) -> tuple[Any, str]:
    """The array module for device ``name``: NumPy for ``cpu``, CuPy for ``gpu``."""
    if name == "cpu":
        return numpy, "cpu"
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
    return cupy, "gpu"  # pragma: no cover - CuPy with a GPU: tests/test_gpu.py


def _dtype(name: str) -> type[numpy.floating[Any]]:
    try:
        return _DTYPES[name]
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
