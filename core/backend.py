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

import math
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
    """A NumPy array (host memory) holding ``array``: the one transfer from the device to the
    host (CuPy's ``array.get()``).  Anything else that reads device numbers on the host is
    one of the two host syncs below, or a bug (tests/test_strict_backend.py finds them)."""
    if xp is not numpy and hasattr(array, "get"):
        return array.get()
    return numpy.asarray(array)


def dtype_name(dtype) -> str:
    return numpy.dtype(dtype).name


def errstate():
    """IEEE semantics for 1/0, log(-1) and friends: inf and nan, never a warning or exception."""
    return numpy.errstate(all="ignore")


# ``numpy.errstate(all="ignore")`` costs about a microsecond to enter and leave, once per op.
# NumPy keeps the error state in a ContextVar; when the state in force is NumPy's default
# (nothing changed by anyone), setting the ContextVar to the state ``errstate(all="ignore")``
# makes from that default and resetting it afterwards is the same thing at a tenth of the
# cost, and a state already ignoring everything needs no change at all.  Any other state in
# force (set by the caller) goes through ``numpy.errstate`` itself.
try:  # pragma: no branch - NumPy >= 2 keeps the state in this ContextVar
    from numpy._core._ufunc_config import (  # type: ignore[attr-defined]
        _extobj_contextvar as _ERRSTATE,
    )
except ImportError:  # pragma: no cover - another NumPy: always the public errstate
    _ERRSTATE = None
    _DEFAULT_STATE = _IGNORE_STATE = None
else:
    _DEFAULT_STATE = _ERRSTATE.get()
    with numpy.errstate(all="ignore"):
        _IGNORE_STATE = _ERRSTATE.get()
    if _DEFAULT_STATE is _IGNORE_STATE:  # pragma: no cover - imported inside an errstate
        _ERRSTATE = None


def quiet_enter():
    """Enter IEEE semantics (as :func:`errstate`): returns what :func:`quiet_exit` takes."""
    if _ERRSTATE is not None:
        state = _ERRSTATE.get()
        if state is _IGNORE_STATE:
            return None
        if state is _DEFAULT_STATE:
            return _ERRSTATE.set(_IGNORE_STATE)
    block = numpy.errstate(all="ignore")
    block.__enter__()
    return block


def quiet_exit(token) -> None:
    """Leave what :func:`quiet_enter` entered (the state before it comes back)."""
    if token is None:
        return
    if isinstance(token, numpy.errstate):
        token.__exit__(None, None, None)
    else:
        _ERRSTATE.reset(token)  # type: ignore[union-attr]


@contextmanager
def quiet() -> Iterator[None]:
    """:func:`errstate` for a whole block of ops (each op then finds it already in force)."""
    token = quiet_enter()
    try:
        yield
    finally:
        quiet_exit(token)


def all_finite(data) -> bool:
    """True when every element of ``data`` (an array of the current module) is finite.

    A host sync on the device: one bool is read back (CuPy: ``isfinite(data).all()`` on
    the device, then that one element).  On the CPU ``isfinite(data).all()`` too: one
    vectorised pass (0.2 ns an element).  A BLAS ``dot(a, a)`` (a finite sum of squares
    means every element is finite) was tried and is no faster on one thread, and on a busy
    machine OpenBLAS's threads made it up to a hundred times slower (issue 12).
    """
    if xp is not numpy:
        return bool(xp.isfinite(data).all())
    if data.ndim == 0:
        return math.isfinite(data)
    return bool(numpy.isfinite(data).all())


def any_nonzero(data) -> bool:
    """True when some element of ``data`` (an array of the current module) is nonzero (True):
    ``data.any()`` as a Python bool.  A host sync on the device, as :func:`all_finite`: one
    bool is read back, for a decision (a kink's warning, a rule's special case at 0)."""
    return bool(data.any())
