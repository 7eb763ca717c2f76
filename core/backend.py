"""The array-module seam: the one place in core/ that imports NumPy (or CuPy).

Every other module reaches the array library through ``backend.xp`` (looked up
at call time, so a device chosen for a block takes effect everywhere) and the
helpers below.  The device and the dtype of new tensors are chosen for a block,
never for good::

    with backend.using(device="gpu", dtype="float32"):
        ...  # arrays are CuPy arrays, new tensors float32

and the previous choice comes back when the block ends, however it ends.  Outside
every block the arrays are NumPy arrays on the CPU and new tensors are float64.

The choice is data, not module state: one :class:`Settings` (array module, device name,
dtype) held in a ``contextvars.ContextVar`` and read in one place, :func:`settings`.  A
thread (a Dask worker thread) starts from the defaults and chooses for itself; a task run
in a copied context (``contextvars.copy_context().run``) sees its caller's choice and
cannot change it.  ``backend.xp``, ``backend.device`` and ``backend.default_dtype`` are
read-only views of :func:`settings` (properties of this module's class), so callers read
them as before.
"""

from __future__ import annotations

import contextvars
import functools
import math
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy

from .errors import DeviceError

host = numpy  # host-side NumPy, for printing and I/O

_DTYPES: dict[str, Any] = {
    "float64": numpy.float64,
    "float32": numpy.float32,
    "complex128": numpy.complex128,
    "complex64": numpy.complex64,
}
#: the real dtype of each precision: a real constant's under a complex default (NumPy
#: keeps a Python number real: 2 in z**2 does not make z**2 complex)
REAL_OF: dict[Any, Any] = {
    numpy.float64: numpy.float64,
    numpy.float32: numpy.float32,
    numpy.complex128: numpy.float64,
    numpy.complex64: numpy.float32,
}
#: the names --dtype takes
DTYPES = tuple(_DTYPES)
#: the complex dtype of each precision: what a complex value or literal promotes a real
#: default to (NumPy's promotion: float32 and a complex number make complex64)
COMPLEX_OF: dict[Any, Any] = {
    numpy.float64: numpy.complex128,
    numpy.float32: numpy.complex64,
    numpy.complex128: numpy.complex128,
    numpy.complex64: numpy.complex64,
}


class Settings(NamedTuple):
    """What :func:`using` chooses: the array module, the device's name, new tensors' dtype."""

    xp: Any
    device: str
    dtype: type[numpy.floating[Any]]


_SETTINGS: contextvars.ContextVar[Settings] = contextvars.ContextVar(
    "autograd_cli.backend",
    default=Settings(numpy, "cpu", numpy.float64),  # noqa: B039 - a NamedTuple is immutable
)
settings = _SETTINGS.get  # the one read: the settings in force in the current context

if TYPE_CHECKING:  # the views the module class below provides, for the type checker
    xp: Any
    device: str
    default_dtype: type[numpy.floating[Any]]


class _Module(types.ModuleType):
    """This module's class: ``xp``, ``device`` and ``default_dtype`` read :func:`settings`."""

    @property
    def xp(self) -> Any:
        """The array module of the current device (NumPy or CuPy)."""
        return _SETTINGS.get().xp

    @property
    def device(self) -> str:
        return _SETTINGS.get().device

    @property
    def default_dtype(self) -> type[numpy.floating[Any]]:
        return _SETTINGS.get().dtype


sys.modules[__name__].__class__ = _Module


@contextmanager
def using(device: str | None = None, dtype: str | None = None) -> Iterator[None]:
    """Within the block, arrays live on ``device`` (``cpu``: NumPy, ``gpu``: CuPy) and new
    tensors get ``dtype`` (``float64`` or ``float32``); None keeps the current one.

    Both names are checked before anything changes: an unknown one (or a GPU that is not
    there) raises and leaves the settings as they were.  On leaving the block, by its end
    or by an exception, the settings in force when it was entered come back, so nested
    blocks unwind in order.  The choice holds in the current context only (this thread,
    this task).
    """
    previous = _SETTINGS.get()
    chosen = previous.dtype if dtype is None else _dtype(dtype)
    module, name = (previous.xp, previous.device) if device is None else _array_module(device)
    token = _SETTINGS.set(Settings(module, name, chosen))
    try:
        yield
    finally:
        _SETTINGS.reset(token)


def _settings() -> Settings:
    """The settings in force (as :func:`settings`): what :func:`_install` takes back."""
    return _SETTINGS.get()


def _install(module: Any, name: str, dtype: type[numpy.floating[Any]]) -> None:
    """Put settings in force in the current context for good, outside any block: for a
    caller that puts back what :func:`_settings` gave (a run cut short between a block's
    setup and its ``try``); anything else chooses with :func:`using`."""
    _SETTINGS.set(Settings(module, name, dtype))


def _array_module(name: str) -> tuple[Any, str]:
    """The array module for device ``name``: NumPy for ``cpu``, CuPy for ``gpu``."""
    if name == "cpu":
        return numpy, "cpu"
    if name != "gpu":
        raise DeviceError(f"unknown device {name!r} (choose cpu or gpu)")
    try:
        import cupy  # noqa: PLC0415 - optional dependency, imported on demand

        cupy.cuda.runtime.getDeviceCount()
    # What a missing or unusable CuPy raises: ImportError (no CuPy, or CuPy without its CUDA
    # libraries), OSError (a shared library that will not load), RuntimeError (CuPy's
    # CUDARuntimeError and CUDADriverError: no device, a driver too old).
    except (ImportError, OSError, RuntimeError) as exc:
        raise DeviceError.naming(
            "GPU unavailable: {error} (install the [gpu] extra with CuPy on a machine with "
            "CUDA, or use {device} cpu)",
            {"error": f"{exc.__class__.__name__}: {exc}".rstrip(": ")},
        ) from None
    return cupy, "gpu"  # pragma: no cover - CuPy with a GPU: tests/test_gpu.py


def _dtype(name: str) -> type[numpy.floating[Any]]:
    try:
        return _DTYPES[name]
    except KeyError:
        raise ValueError(
            f"unknown dtype {name!r} (choose float64, float32, complex128 or complex64)"
        ) from None


def complex_name(name: str) -> str:
    """The complex dtype of the precision of the dtype ``name``: float64 -> complex128."""
    return numpy.dtype(COMPLEX_OF[numpy.dtype(name).type]).name


def is_complex(data) -> bool:
    """True when ``data`` (an array, a NumPy or Python number) holds complex numbers."""
    if data.__class__ is complex:
        return True
    dtype = getattr(data, "dtype", None)
    return dtype is not None and dtype.kind == "c"


def asarray(value, dtype=None, xp=None):
    """``value`` as an array of the current module (or ``xp``), in ``dtype`` (default: the
    default dtype; a complex value keeps its imaginary part, promoted as NumPy promotes: to
    the complex dtype of the default's precision)."""
    now = _SETTINGS.get()
    module = now.xp if xp is None else xp
    if dtype is None:
        dtype = now.dtype
        if is_complex(value):
            dtype = COMPLEX_OF[dtype]
        elif isinstance(value, (list, tuple)):
            array = module.asarray(value)
            kind = array.dtype.kind
            return array.astype(COMPLEX_OF[dtype] if kind == "c" else dtype, copy=False)
    return module.asarray(value, dtype=dtype)


def to_numpy(array):
    """A NumPy array (host memory) holding ``array``: the one transfer from the device to the
    host (CuPy's ``array.get()``).  Anything else that reads device numbers on the host is
    one of the two host syncs below, or a bug (tests/test_strict_backend.py finds them)."""
    if _SETTINGS.get().xp is not numpy and hasattr(array, "get"):
        return array.get()
    return numpy.asarray(array)


def dtype_name(dtype) -> str:
    return numpy.dtype(dtype).name


def errstate():
    """IEEE semantics for 1/0, log(-1) and friends: inf and nan, never a warning or exception."""
    return numpy.errstate(all="ignore")


# ``numpy.errstate(all="ignore")`` costs about a microsecond to enter and leave: once per
# walk (an evaluation, a backward pass, a batch), and once per op only for an op applied
# outside every walk (the Tensor API).  A walk marks its context quiet, in a ContextVar of
# ours, and every op inside it finds the mark and changes nothing.  NumPy >= 2 keeps its
# error state in a ContextVar too, so the mark and the state travel together (a thread or a
# copied context starts unmarked, with NumPy's default state).  Inside a quiet block, code
# that enters a narrower ``numpy.errstate`` (host arithmetic) calls no op there.
_QUIET: contextvars.ContextVar[bool] = contextvars.ContextVar("autograd_cli.quiet", default=False)


def quiet_enter():
    """Enter IEEE semantics (as :func:`errstate`): returns what :func:`quiet_exit` takes
    (None where a quiet block is in force already)."""
    if _QUIET.get():
        return None
    block = numpy.errstate(all="ignore")
    block.__enter__()
    return block, _QUIET.set(True)


def quiet_exit(token) -> None:
    """Leave what :func:`quiet_enter` entered (the state before it comes back)."""
    if token is not None:
        block, mark = token
        _QUIET.reset(mark)
        block.__exit__(None, None, None)


#: the ContextVar a walk marks quiet (read on the per-op path: tensor.apply)
QUIET = _QUIET


@functools.cache
def ignoring(fn):
    """``fn`` run with IEEE semantics (as :func:`errstate`), through NumPy's own decorator
    form, which sets the state around each call without building an errstate object (half
    the cost of entering and leaving one); made once per function (an op's forward).  Only
    NumPy's public API: its private error-state ContextVar would save another ~250 ns an op
    (tried in issue 25), which issue 24 ruled out."""
    return numpy.errstate(all="ignore")(fn)


def quiet_call(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` with IEEE semantics (as :func:`errstate`): for one call
    outside every walk, the cheaper form of ``quiet_enter``/``quiet_exit`` around it."""
    if _QUIET.get():
        return fn(*args, **kwargs)
    return ignoring(fn)(*args, **kwargs)


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
    if data.__class__ is numpy.float64:  # a NumPy number (host memory on every device)
        return math.isfinite(data)
    xp = _SETTINGS.get().xp
    if xp is not numpy:
        return bool(xp.isfinite(data).all())
    if data.ndim == 0 and data.dtype.kind != "c":
        return math.isfinite(data)
    return bool(numpy.isfinite(data).all())


def any_nonzero(data) -> bool:
    """True when some element of ``data`` (an array of the current module) is nonzero (True):
    ``data.any()`` as a Python bool.  A host sync on the device, as :func:`all_finite`: one
    bool is read back, for a decision (a kink's warning, a rule's special case at 0)."""
    return bool(data.any())
