"""A strict stand-in for CuPy: NumPy's numbers in an array type that never leaves the "device".

``--device gpu`` installs CuPy as ``backend.xp``, and ``backend.to_numpy`` (``array.get()``)
is meant to be the one way back to the host.  Without a GPU nothing shows that a forward and
backward pass stays on the device, so this module plays CuPy's part on the CPU:

* :class:`StrictArray` holds a NumPy array and offers what the engine uses of
  ``cupy.ndarray`` (operators, indexing, reductions, ``astype``, ``reshape`` ...), always
  answering with another ``StrictArray`` -- a reduction or ``a[0]`` is a 0-d array, never a
  NumPy or Python scalar, as in CuPy;
* the module (:data:`xp`) offers NumPy's functions and ufuncs under CuPy's names only (a
  name CuPy lacks, ``errstate`` say, is an AttributeError here too), and :data:`cupyx`
  stands in for ``cupyx`` (``cupyx.scipy.special``, ``cupyx.scatter_add``).

What CuPy refuses, this refuses the same way: ``numpy.asarray(a)`` (``__array__``: TypeError,
"Implicit conversion to a NumPy array is not allowed"), a NumPy array mixed into an
operation on device arrays (TypeError, "Unsupported type"), ``operator.index(a)``.

What CuPy allows only through a synchronous copy to the host -- ``float(a)``, ``int(a)``,
``complex(a)``, ``bool(a)`` of a one-element array, ``a.item()``, ``a.tolist()``,
``a.get()``, ``repr``/``str``/``format`` -- works here too, and is a *transfer*: each one is
recorded with the stack it came from and classified (see :class:`Recorder`):

``seam``
    inside ``backend.to_numpy``, the one transfer to the host (``.get()``);
``sync``
    inside one of the declared host syncs (``SYNCS``: a function of the engine that reads a
    few numbers back on purpose, a flag that decides what to do next) -- allowed, counted,
    and each such read must be of one element;
``harness``
    from the test harness itself (pytest's assertion rewriting, a test file);
``violation``
    anything else: an implicit transfer outside the seam, or a refused conversion.  A test
    that records any fails, printing where each happened.

Uploads (``xp.asarray(numpy_array)``, a NumPy index array) are allowed, as in CuPy, and
counted.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import traceback
import types
from dataclasses import dataclass, field

import numpy

# ---------------------------------------------------------------------------
# What is recorded
# ---------------------------------------------------------------------------

_HERE = os.path.abspath(__file__)
_NUMPY_DIR = os.path.dirname(os.path.abspath(numpy.__file__))
_TESTS_DIR = os.path.dirname(_HERE)
_SKIPPED = (_HERE, _NUMPY_DIR, os.path.dirname(contextlib.__file__) + os.sep + "contextlib.py")
_HARNESS = ("_pytest", "pluggy", "hypothesis")


@dataclass
class Transfer:
    kind: str  # float, int, complex, bool, item, tolist, get, repr, array, host-operand
    size: int  # elements read (0 for a refused conversion)
    verdict: str  # seam, sync, harness, violation
    site: str  # "core/ops.py:382 in _any_zero" (the first frame outside this module)
    sync: str | None  # the declared sync it happened in, if any
    stack: list = field(repr=False)  # traceback.FrameSummary, outermost first

    def describe(self) -> str:
        lines = [f"{self.kind} of {self.size} element(s) at {self.site} ({self.verdict})"]
        lines += ["    " + line.rstrip() for line in traceback.format_list(self.stack[-14:])]
        return "\n".join(lines)


def _short(filename: str) -> str:
    parts = filename.replace(os.sep, "/").split("/")
    for root in ("core", "cli", "grammar", "root", "tests"):
        if root in parts:
            return "/".join(parts[len(parts) - 1 - parts[::-1].index(root) :])
    return "/".join(parts[-2:])


class Recorder:
    """Every transfer while it is installed (:func:`recording`), with its verdict.

    The first frame outside this module and NumPy decides: a ``get`` in one of the ``seam``
    functions (``backend.to_numpy``) is the seam; anything in one of the ``syncs`` is a sync
    if it reads at most one element, else a violation; a test file or pytest is the harness;
    anything else is a violation.
    """

    def __init__(self, seam=(), syncs=()):
        self.seam = {f.__code__ for f in seam}
        self.syncs = {f.__code__: f.__qualname__ for f in syncs}
        self.transfers: list[Transfer] = []
        self.uploads = 0

    def record(self, kind: str, size: int) -> Transfer:
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename.startswith(_SKIPPED):
            frame = frame.f_back
        code = frame.f_code if frame is not None else None
        filename = code.co_filename if code is not None else "?"
        sync = None
        if code in self.seam and kind == "get":
            verdict = "seam"
        elif code in self.syncs:
            verdict = "sync" if size <= 1 else "violation"
            sync = self.syncs[code]
        elif any(f"{os.sep}{h}{os.sep}" in filename for h in _HARNESS) or (
            os.path.dirname(os.path.abspath(filename)) == _TESTS_DIR
        ):
            verdict = "harness"
        else:
            verdict = "violation"
        site = f"{_short(filename)}:{frame.f_lineno} in {code.co_name}" if frame else "?"
        # the stack only where it is shown (extracting it costs more than the transfer)
        stack = traceback.extract_stack(frame) if frame and verdict == "violation" else []
        t = Transfer(kind, size, verdict, site, sync, stack)
        self.transfers.append(t)
        return t

    def of(self, verdict: str) -> list[Transfer]:
        return [t for t in self.transfers if t.verdict == verdict]

    @property
    def violations(self) -> list[Transfer]:
        return self.of("violation")

    def report(self) -> str:
        """The violations, each with its stack (distinct sites once, with a count)."""
        seen: dict[str, list[Transfer]] = {}
        for t in self.violations:
            seen.setdefault(f"{t.kind} {t.site}", []).append(t)
        parts = [f"[{len(ts)}x] " + ts[0].describe() for ts in sorted(seen.values(), key=len)[::-1]]
        return f"{len(self.violations)} transfer(s) outside the seam:\n" + "\n".join(parts)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for t in self.transfers:
            key = t.verdict if t.sync is None else f"sync:{t.sync}"
            out[key] = out.get(key, 0) + 1
        return out


_recorder = Recorder()


@contextlib.contextmanager
def recording(seam=(), syncs=()):
    """Record the transfers of the block into a fresh :class:`Recorder` (yielded)."""
    global _recorder
    previous = _recorder
    _recorder = Recorder(seam, syncs)
    try:
        yield _recorder
    finally:
        _recorder = previous


# ---------------------------------------------------------------------------
# Crossing the boundary: unwrap arguments, wrap results
# ---------------------------------------------------------------------------


def _unsupported(value):
    _recorder.record("host-operand", 0)
    return TypeError(f"Unsupported type {type(value)}")


def _unwrap(value, uploads: bool = False):
    """The NumPy data of ``value`` (StrictArrays, and lists/tuples of them).  A NumPy array
    is CuPy's "Unsupported type" unless ``uploads`` (asarray, an index): then it is copied
    to the device, which CuPy allows."""
    if type(value) is StrictArray:
        return value._a
    if isinstance(value, numpy.ndarray):
        if not uploads:
            raise _unsupported(value)
        _recorder.uploads += 1
        return value
    if type(value) in (list, tuple):
        return type(value)(_unwrap(v, uploads) for v in value)
    return value


def _wrap(value):
    """A NumPy result as the device's: arrays and NumPy scalars become StrictArrays."""
    if isinstance(value, numpy.ndarray):
        return StrictArray(value)
    if isinstance(value, numpy.generic):
        return StrictArray(numpy.asarray(value))
    if type(value) in (list, tuple):
        return type(value)(_wrap(v) for v in value)
    if isinstance(value, tuple) and hasattr(value, "_make"):  # a namedtuple (slogdet, ...)
        return type(value)._make(_wrap(v) for v in value)
    return value


_LOW_PRIORITY = 100  # cupy.ndarray's __array_priority__


def _operand(other):
    """``other`` as an operand of a device operation, or NotImplemented (CuPy's rules)."""
    if type(other) is StrictArray:
        return other._a
    if isinstance(other, (int, float, complex, bool, numpy.generic)):
        return other
    if isinstance(other, numpy.ndarray):
        raise _unsupported(other)
    rop = getattr(other, "__array_ufunc__", _operand)
    if rop is not _operand:
        if rop is None:
            return NotImplemented
    elif getattr(other, "__array_priority__", 0) > _LOW_PRIORITY:
        return NotImplemented  # a Tensor: its reflected operator answers
    raise _unsupported(other)


def _binary(fn, reflected=False):
    def op(self, other):
        b = _operand(other)
        if b is NotImplemented:
            return NotImplemented
        return _wrap(fn(b, self._a) if reflected else fn(self._a, b))

    return op


def _inplace(fn):
    def op(self, other):
        b = _operand(other)
        if b is NotImplemented:
            return NotImplemented
        fn(self._a, b, out=self._a)
        return self

    return op


# ndarray methods that CuPy's ndarray has too (cupy/_core/core.pyx), taken from NumPy's
_METHODS = frozenset(
    "all any argmax argmin argpartition argsort astype choose clip compress conj conjugate "
    "copy cumprod cumsum diagonal dot fill flatten max mean min nonzero partition prod ptp "
    "put ravel repeat reshape round searchsorted sort squeeze std sum swapaxes take trace "
    "transpose var view".split()
)


class StrictArray:
    """A device array: NumPy's numbers behind CuPy's manners (see the module's docstring)."""

    __slots__ = ("_a", "__weakref__")
    __array_priority__ = _LOW_PRIORITY
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, array):
        self._a = array

    # ---- metadata: on the host in CuPy too, no transfer --------------------------------
    shape = property(lambda self: self._a.shape)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    dtype = property(lambda self: self._a.dtype)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: self._a.flags)
    T = property(lambda self: StrictArray(self._a.T))
    mT = property(lambda self: StrictArray(self._a.mT))
    real = property(lambda self: StrictArray(self._a.real))
    imag = property(lambda self: StrictArray(self._a.imag))
    device = property(lambda self: "strict")

    def __len__(self):
        if self._a.ndim == 0:
            raise TypeError("len() of unsized object")
        return len(self._a)

    def __iter__(self):
        if self._a.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self._a)))

    def __getattr__(self, name):
        if name in _METHODS:
            method = getattr(self._a, name)

            def call(*args, **kwargs):
                return _wrap(method(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()}))

            return call
        raise AttributeError(f"'StrictArray' (cupy.ndarray) has no attribute {name!r}")

    def __copy__(self):
        return StrictArray(self._a.copy())

    def __deepcopy__(self, memo):
        return StrictArray(self._a.copy())

    # ---- indexing ---------------------------------------------------------------------
    def __getitem__(self, key):
        return _wrap(self._a[_unwrap(key, uploads=True)])

    def __setitem__(self, key, value):
        self._a[_unwrap(key, uploads=True)] = _unwrap(value, uploads=True)

    # ---- the ways to the host: each one a recorded transfer ----------------------------
    def get(self, stream=None, order="C", out=None, blocking=True):
        _recorder.record("get", self._a.size)
        return numpy.array(self._a, order=order)

    def _scalar(self, kind):
        _recorder.record(kind, self._a.size)
        return self._a

    def __float__(self):
        return float(self._scalar("float"))

    def __int__(self):
        return int(self._scalar("int"))

    def __complex__(self):
        return complex(self._scalar("complex"))

    def __bool__(self):
        if self._a.size == 0:
            return False  # CuPy: a DeprecationWarning, and False; nothing is read
        if self._a.size > 1:
            _recorder.record("bool", self._a.size)
            raise ValueError(
                "The truth value of an array with more than one element is ambiguous. "
                "Use a.any() or a.all()"
            )
        return bool(self._scalar("bool"))

    def item(self):
        if self._a.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return self._scalar("item").item()

    def tolist(self):
        return self._scalar("tolist").tolist()

    def __repr__(self):
        return repr(self._scalar("repr"))

    def __str__(self):
        return str(self._scalar("repr"))

    def __format__(self, spec):
        return format(self._scalar("repr"), spec)

    def __array__(self, dtype=None, copy=None):
        _recorder.record("array", 0)
        raise TypeError(
            "Implicit conversion to a NumPy array is not allowed. "
            "Please use `.get()` to construct a NumPy array explicitly."
        )

    # ---- NumPy's protocols: dispatched to this module, as CuPy does ----------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method not in ("__call__", "reduce", "accumulate", "reduceat", "outer", "at"):
            return NotImplemented
        wrapped = getattr(xp, ufunc.__name__, None)
        if not isinstance(wrapped, StrictUfunc):
            return NotImplemented
        fn = wrapped if method == "__call__" else getattr(wrapped, method)
        return fn(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        module = xp
        for part in func.__module__.split(".")[1:]:
            if part in ("linalg", "fft"):
                module = getattr(module, part)
        try:
            mine = getattr(module, func.__name__)
        except AttributeError:
            return NotImplemented
        return mine(*args, **kwargs)

    # ---- arithmetic -------------------------------------------------------------------
    def __neg__(self):
        return _wrap(-self._a)

    def __pos__(self):
        return _wrap(+self._a)

    def __abs__(self):
        return _wrap(abs(self._a))

    def __invert__(self):
        return _wrap(~self._a)

    __add__ = _binary(numpy.add)
    __radd__ = _binary(numpy.add, True)
    __sub__ = _binary(numpy.subtract)
    __rsub__ = _binary(numpy.subtract, True)
    __mul__ = _binary(numpy.multiply)
    __rmul__ = _binary(numpy.multiply, True)
    __truediv__ = _binary(numpy.true_divide)
    __rtruediv__ = _binary(numpy.true_divide, True)
    __floordiv__ = _binary(numpy.floor_divide)
    __rfloordiv__ = _binary(numpy.floor_divide, True)
    __mod__ = _binary(numpy.remainder)
    __rmod__ = _binary(numpy.remainder, True)
    __pow__ = _binary(numpy.power)
    __rpow__ = _binary(numpy.power, True)
    __matmul__ = _binary(numpy.matmul)
    __rmatmul__ = _binary(numpy.matmul, True)
    __and__ = _binary(numpy.bitwise_and)
    __rand__ = _binary(numpy.bitwise_and, True)
    __or__ = _binary(numpy.bitwise_or)
    __ror__ = _binary(numpy.bitwise_or, True)
    __xor__ = _binary(numpy.bitwise_xor)
    __rxor__ = _binary(numpy.bitwise_xor, True)
    __lt__ = _binary(numpy.less)
    __le__ = _binary(numpy.less_equal)
    __gt__ = _binary(numpy.greater)
    __ge__ = _binary(numpy.greater_equal)
    __eq__ = _binary(numpy.equal)  # type: ignore[assignment]
    __ne__ = _binary(numpy.not_equal)  # type: ignore[assignment]
    __iadd__ = _inplace(numpy.add)
    __isub__ = _inplace(numpy.subtract)
    __imul__ = _inplace(numpy.multiply)
    __itruediv__ = _inplace(numpy.true_divide)
    __ipow__ = _inplace(numpy.power)
    __iand__ = _inplace(numpy.bitwise_and)
    __ior__ = _inplace(numpy.bitwise_or)


# ---------------------------------------------------------------------------
# The module: NumPy's functions under CuPy's names
# ---------------------------------------------------------------------------

# NumPy's public names that CuPy does not have (from cupy/__init__.py): looking one up here
# is an AttributeError, as on the GPU.
_NOT_IN_CUPY = frozenset(
    "False_ ScalarType True_ asmatrix block bmat busday_count busday_offset busdaycalendar "
    "bytes_ char character clongdouble complex256 core ctypeslib datetime64 "
    "datetime_as_string datetime_data dtypes einsum_path emath errstate f2py flexible "
    "float128 frompyfunc fromregex geomspace get_include getbufsize geterr geterrcall "
    "histogram_bin_edges info insert is_busday isnat lib little_endian longdouble ma matrix "
    "matvec memmap nanpercentile nanquantile ndenumerate nditer nested_iters object_ "
    "polyder polydiv polyint rec recarray record sctypeDict setbufsize seterr seterrcall "
    "show_runtime spacing str_ strings test timedelta64 typecodes typing unstack vecdot "
    "vecmat void".split()
)
# cupy.linalg's names (cupy/linalg/__init__.py)
_LINALG = frozenset(
    "LinAlgError cholesky cond cross det eig eigh eigvals eigvalsh inv lstsq matmul "
    "matrix_power matrix_rank matrix_transpose norm pinv qr slogdet solve svd tensorinv "
    "tensorsolve".split()
)
# cupy.fft's names (cupy/fft/__init__.py)
_FFT = frozenset(
    "fft ifft fft2 ifft2 fftn ifftn rfft irfft rfft2 irfft2 rfftn irfftn hfft ihfft fftfreq "
    "rfftfreq fftshift ifftshift".split()
)
# cupyx.scipy.special's names that the engine may use (cupyx/scipy/special/__init__.py)
_SPECIAL = frozenset(
    "erf erfc erfcinv erfcx erfinv gamma gammaln digamma polygamma psi loggamma expit logit "
    "log_ndtr ndtr ndtri zeta xlogy xlog1py i0 i1 sinc betaln beta binom entr rgamma "
    "i0e i1e j0 j1 gammainc gammaincc betainc".split()
)
# Functions that copy host data to the device (an upload, which CuPy allows).
_UPLOADS = frozenset("array asarray asanyarray ascontiguousarray asfortranarray".split())


class StrictUfunc:
    """A NumPy ufunc on StrictArrays (CuPy's ufuncs have ``at``, ``reduce`` ... too)."""

    def __init__(self, ufunc):
        self._u = ufunc
        self.__name__ = ufunc.__name__
        self.nin, self.nout = ufunc.nin, ufunc.nout

    def _run(self, fn, args, kwargs):
        out = kwargs.get("out")
        result = fn(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()})
        if type(out) is StrictArray:
            return out
        return _wrap(result)

    def __call__(self, *args, **kwargs):
        return self._run(self._u, args, kwargs)

    def reduce(self, *args, **kwargs):
        return self._run(self._u.reduce, args, kwargs)

    def accumulate(self, *args, **kwargs):
        return self._run(self._u.accumulate, args, kwargs)

    def reduceat(self, *args, **kwargs):
        return self._run(self._u.reduceat, args, kwargs)

    def outer(self, *args, **kwargs):
        return self._run(self._u.outer, args, kwargs)

    def at(self, a, indices, b=None):
        self._u.at(
            _unwrap(a), _unwrap(indices, uploads=True), *(() if b is None else (_unwrap(b),))
        )

    def __repr__(self):
        return f"<strict ufunc {self.__name__}>"


def _function(name, fn):
    uploads = name in _UPLOADS

    @functools.wraps(fn)
    def call(*args, **kwargs):
        args = _unwrap(args, uploads)
        kwargs = {k: _unwrap(v, uploads) for k, v in kwargs.items()}
        return _wrap(fn(*args, **kwargs))

    return call


def _result_type(*arrays_and_dtypes):
    # cupy.result_type: an array stands for its dtype (NEP 50: values do not matter)
    return numpy.result_type(*[a.dtype if type(a) is StrictArray else a for a in arrays_and_dtypes])


def _asnumpy(a, stream=None, order="C", out=None, blocking=True):
    if type(a) is StrictArray:
        return a.get()
    return numpy.asarray(a, order=order)


class StrictModule(types.ModuleType):
    """A namespace of NumPy's ``source`` offering only the names CuPy has (``allowed``)."""

    def __init__(self, name, source, allowed=None, denied=frozenset()):
        super().__init__(name)
        self._source = source
        self._allowed = allowed
        self._denied = denied

    def __getattr__(self, name):
        if name.startswith("_") or name in self._denied:
            raise AttributeError(f"module {self.__name__!r} (as CuPy) has no attribute {name!r}")
        if self._allowed is not None and name not in self._allowed:
            raise AttributeError(f"module {self.__name__!r} (as CuPy) has no attribute {name!r}")
        value = getattr(self._source, name)  # AttributeError: NumPy lacks it too
        if isinstance(value, numpy.ufunc):
            value = StrictUfunc(value)
        elif isinstance(value, type) or not callable(value):
            pass  # dtypes (float64), constants (inf, nan, pi), exceptions
        else:
            value = _function(name, value)
        setattr(self, name, value)  # once: xp.add is xp.add
        return value


xp = StrictModule("strict_xp.xp", numpy, denied=_NOT_IN_CUPY)
xp.ndarray = StrictArray
xp.result_type = _result_type
xp.asnumpy = _asnumpy
xp.linalg = StrictModule("strict_xp.xp.linalg", numpy.linalg, allowed=_LINALG)
xp.linalg.LinAlgError = numpy.linalg.LinAlgError
xp.fft = StrictModule("strict_xp.xp.fft", numpy.fft, allowed=_FFT)
for _name in ("shape", "ndim", "size"):  # metadata
    setattr(
        xp,
        _name,
        (lambda f: lambda a, *r: f(a._a if type(a) is StrictArray else a, *r))(
            getattr(numpy, _name)
        ),
    )


def _scatter_add(a, slices, value):
    numpy.add.at(_unwrap(a), _unwrap(slices, uploads=True), _unwrap(value))


def _special_module():
    try:
        import scipy.special as source  # noqa: PLC0415 - only where a test asks for it
    except ImportError:  # pragma: no cover - SciPy is a test dependency
        source = types.ModuleType("scipy.special")
    return StrictModule("cupyx.scipy.special", source, allowed=_SPECIAL)


def install(monkeypatch) -> None:
    """This module as the "gpu" device for one test (``monkeypatch``: pytest's): the backend's
    array module for "gpu", and its cupyx stand-ins in sys.modules."""
    from autograd_cli.core import backend

    original = backend._array_module

    def array_module(name):
        return (xp, "gpu") if name == "gpu" else original(name)

    monkeypatch.setattr(backend, "_array_module", array_module)
    for name, module in cupyx_modules().items():
        monkeypatch.setitem(sys.modules, name, module)


def cupyx_modules() -> dict:
    """Stand-ins for ``cupyx``, ``cupyx.scipy`` and ``cupyx.scipy.special`` (for
    ``sys.modules``): the engine imports them where ``backend.device == "gpu"``."""
    special = _special_module()
    scipy = types.ModuleType("cupyx.scipy")
    scipy.special = special  # type: ignore[attr-defined]
    root = types.ModuleType("cupyx")
    root.scipy = scipy  # type: ignore[attr-defined]
    root.scatter_add = _scatter_add  # type: ignore[attr-defined]
    return {"cupyx": root, "cupyx.scipy": scipy, "cupyx.scipy.special": special}
