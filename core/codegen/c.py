"""Generated code in C99 (``codegen --target c``): one translation unit, libm only.

The calling convention (the header block of the code says it too)::

    void f(<inputs>, <outputs>);

each input in the order of ``Generated.inputs`` as ``double x`` (a number) or ``const double
*x`` (an array, flattened row-major, of the shape traced), then each output in the order of
``Generated.outputs`` (``value``, ``grad_x``..., ``hessian_x_y``...) as ``double *`` to the
caller's buffer of its size (one number for a number).  ``--dtype float32`` writes ``float``
throughout (libm's double functions, each statement rounded to float).

Every temporary lives in one workspace array ``ag_s``: on the stack while it is at most
:data:`STACK_BYTES`, else in static storage (the function is then not reentrant; the header
says so).  A long program is cut into static functions of :data:`CHUNK` statements each, so
the compiler's optimiser sees functions of bounded size (one function of 10^5 statements
takes gcc -O2 many minutes).

Elementwise ops are their entry's ``code.c`` spelling of one number, looped over the
output with broadcast index tables; every other op is handled by what it is, found by
running its forward on probes at generation time (as core/batch.py batches by kind): a
*gather* (reshape, transpose, getitem, flip, roll, tile, repeat, stack, concatenate...:
``out[i] = in[T[i]]``), a *linear map* (``out[O[n]] += W[n]*in[I[n]]``: sum, mean, sum_to,
scatter found from two runs of the op's own vjp rule; cumsum, trace, triu... from one run
per input element), a *bilinear map* of two arguments (matmul, dot, outer, tensordot,
einsum: ``out[K[n]] += a[I[n]]*b[J[n]]``) or a *fold* over segments (amax, amin, prod:
``acc[S[i]] = ag_max(acc[S[i]], x[i])``), each with static tables.  Anything else
(logsumexp, softmax, norm, sort, decompositions, the special functions libm lacks) is an
:class:`UnsupportedError` naming the op.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import tempfile

import numpy as np

from ..errors import AutogradCliError, EvaluationError, LimitError, UnsupportedError
from ..tensor import OPS
from .python import shown, spell
from .trace import Node

__all__ = ["C_RESERVED", "CHUNK", "INLINE", "MAX_CODE_CHARS", "STACK_BYTES", "emit_c", "run_c"]

_KEYWORDS = (
    "auto break case char const continue default do double else enum extern float for goto "
    "if inline int long register restrict return short signed sizeof static struct switch "
    "typedef union unsigned void volatile while _Bool _Complex _Imaginary bool true false "
    "main asm typeof"
)
_MATH = (
    "acos asin atan atan2 cos sin tan acosh asinh atanh cosh sinh tanh exp exp2 expm1 frexp "
    "ilogb ldexp log log10 log1p log2 logb modf scalbn scalbln cbrt fabs hypot pow sqrt erf "
    "erfc lgamma tgamma ceil floor nearbyint rint lrint llrint round lround llround trunc "
    "fmod remainder remquo copysign nan nextafter nexttoward fdim fmax fmin fma fpclassify "
    "isfinite isinf isnan isnormal signbit isgreater isgreaterequal isless islessequal "
    "islessgreater isunordered INFINITY NAN HUGE_VAL HUGE_VALF HUGE_VALL FP_INFINITE FP_NAN "
    "FP_NORMAL FP_SUBNORMAL FP_ZERO FP_FAST_FMA MATH_ERRNO MATH_ERREXCEPT math_errhandling "
    "float_t double_t j0 j1 jn y0 y1 yn gamma drem finite scalb significand M_PI M_E errno"
)
_HARNESS = (
    "stdin stdout stderr FILE fread fwrite fopen fclose fflush printf fprintf puts putchar "
    "getchar malloc calloc realloc free exit abort strtol atoi atol size_t NULL EOF remove rename "
    "memcpy memset value"
)
#: Names a parameter or the function must not take: C99's keywords, <math.h>'s names (each
#: f/l variant too), what the check's harness uses, and ``value`` (an output's name)
C_RESERVED = frozenset(
    _KEYWORDS.split()
    + _HARNESS.split()
    + [n + s for n in _MATH.split() for s in ("", "f", "l") if s == "" or n.islower()]
)

#: The most characters of C one program may have (refused before writing it)
MAX_CODE_CHARS = 50_000_000
#: The workspace on the stack up to this many bytes; past it, static storage
STACK_BYTES = 32 << 10
#: A program of more statements than INLINE is cut into static functions of CHUNK
#: statements each (gcc -O2's time grows faster than linearly with a function's length:
#: 2*10^4 statements take 3 s in parts of 32, 11 s in parts of 400)
INLINE = 200
CHUNK = 32
#: The most entries a probed table may take (input elements x output elements)
MAX_PROBE = 4_000_000

_CTYPES = {"float64": "double", "float32": "float"}

_HELPERS = {
    "ag_max": "static T ag_max(T a, T b) { return (a >= b || a != a) ? a : b; }",
    "ag_min": "static T ag_min(T a, T b) { return (a <= b || a != a) ? a : b; }",
    "ag_mod": (
        "static T ag_mod(T a, T b)\n{\n    T m = fmod(a, b);\n    if (b == 0) return m;\n"
        "    if (m != 0) { if ((b < 0) != (m < 0)) m += b; }\n"
        "    else m = copysign(0.0, b);\n    return m;\n}"
    ),
    "ag_chain": (
        "static T ag_chain(T g, T d)\n{\n    T r = g * d;\n"
        "    return (g == 0 && !isfinite(r)) ? 0 : r;\n}"
    ),
    "ag_mend": "static T ag_mend(T t, T g, T r) { return (g == 0 && !isfinite(r)) ? 0 : t; }",
    # POSIX's Bessel functions, in libm but not declared by <math.h> in C99 mode
    "ag_j0": "static T ag_j0(T x) { extern double j0(double); return isinf(x) ? NAN : j0(x); }",
    "ag_j1": "static T ag_j1(T x) { extern double j1(double); return isinf(x) ? NAN : j1(x); }",
}
_HELPER_DOC = {
    "ag_max": "ag_max/ag_min: NumPy's maximum/minimum (a NaN on either side gives NaN)",
    "ag_min": "ag_max/ag_min: NumPy's maximum/minimum (a NaN on either side gives NaN)",
    "ag_mod": "ag_mod: NumPy's mod for floats (fmod, then the sign of b)",
    "ag_chain": "ag_chain: g*d, but 0 where g == 0 and g*d is inf or nan",
    "ag_mend": "ag_mend: t, but 0 where g == 0 and r is inf or nan (a mended product's tangent)",
    "ag_j0": "ag_j0/ag_j1: POSIX's j0/j1 (libm's), nan at +-inf as SciPy's and PyTorch's",
    "ag_j1": "ag_j0/ag_j1: POSIX's j0/j1 (libm's), nan at +-inf as SciPy's and PyTorch's",
}


def _literal(x: float) -> str:
    if math.isnan(x):
        return "NAN"
    if math.isinf(x):
        return "INFINITY" if x > 0 else "(-INFINITY)"
    text = repr(float(x))
    return f"({text})" if text.startswith("-") else text


def _within(chars: int) -> None:
    """Refuse C text past :data:`MAX_CODE_CHARS` (checked as it grows, before writing more)."""
    if chars > MAX_CODE_CHARS:
        raise LimitError(
            f"the C code would exceed {MAX_CODE_CHARS / 1e6:g} MB; generate it for smaller "
            "shapes or a smaller program"
        )


class _Tables:
    """The file-scope static tables, shared when equal."""

    def __init__(self, ctype: str):
        self.ctype = ctype
        self.decls: dict[str, str] = {}
        self.by_key: dict = {}
        self.chars = 0

    def table(self, values, kind: str) -> str:
        values = np.asarray(values).ravel()
        key = (kind, values.tobytes())
        name = self.by_key.get(key)
        if name is not None:
            return name
        self.chars += values.size * (8 if kind == "i" else 24)  # an estimate, before writing
        _within(self.chars)
        name = f"ag_{kind}{len(self.by_key)}"
        self.by_key[key] = name
        if kind == "i":
            items = ",".join(str(int(v)) for v in values) or "0"
            self.decls[name] = f"static const long {name}[{max(values.size, 1)}] = {{{items}}};"
        else:
            items = ",".join(_literal(float(v)) for v in values) or "0"
            self.decls[name] = (
                f"static const {self.ctype} {name}[{max(values.size, 1)}] = {{{items}}};"
            )
        return name


class _Writer:
    """The statements: each node's slot in the workspace ``ag_s`` and its code."""

    def __init__(self, params: dict[int, str], ctype: str):
        self.params = params  # input node index -> parameter name
        self.ctype = ctype
        self.tables = _Tables(ctype)
        self.slot: dict[int, int] = {}
        self.size = 0
        self.statements: list[str] = []
        self.chars = 0
        self.nodes: dict[int, Node] = {}

    def add(self, text: str) -> None:
        self.chars += len(text) + 8
        _within(self.chars + self.tables.chars)
        self.statements.append(text)

    def ref(self, node: Node, idx: str = "ag_i") -> str:
        """The code of element ``idx`` of ``node`` (the number itself for a number)."""
        scalar = node.value.ndim == 0
        if node.op == "input":
            name = self.params[node.index]
            return name if scalar else f"{name}[{idx}]"
        if node.op == "const":
            if node.value.dtype.kind == "c":
                raise UnsupportedError(
                    "the generated C computes with real numbers only, and this program has "
                    "a complex constant",
                    op="const",
                )
            if scalar:
                return _literal(float(node.value))
            if np.all(node.value == node.value.flat[0]) and not np.isnan(node.value.flat[0]):
                return _literal(float(node.value.flat[0]))
            return f"{self.tables.table(node.value, 'c')}[{idx}]"
        offset = self.slot[node.index]
        if scalar:
            return f"ag_s[{offset}]"
        return f"ag_s[{offset} + {idx}]" if offset else f"ag_s[{idx}]"

    def index(self, values, var: str) -> str:
        """Element ``var`` of the index table ``values``: ``var`` itself where the table
        counts 0, 1, 2..., the number where it holds one, else a static table."""
        values = np.asarray(values).ravel()
        if values.size and np.array_equal(values, np.arange(values.size)):
            return var
        if values.size and np.all(values == values[0]):
            return str(int(values[0]))
        return f"{self.tables.table(values, 'i')}[{var}]"

    def new(self, node: Node) -> None:
        self.slot[node.index] = self.size
        self.size += max(int(node.value.size), 1)

    def loop(self, node: Node, body: str, n: int | None = None) -> None:
        n = node.value.size if n is None else n
        if node.value.ndim == 0:
            self.add(re.sub(r"\bag_i\b", "0", body) + ";")
        else:
            self.add(f"for (long ag_i = 0; ag_i < {n}; ag_i++) {body};")

    def write(self, node: Node) -> None:
        self.nodes[node.index] = node
        if node.op in ("input", "const"):
            return
        if node.op in ("chain", "mend"):  # the generator's own nodes (core/codegen/trace.py)
            self.new(node)
            given = ", ".join(self._arg(node, k) for k in range(len(node.args)))
            self.loop(node, f"{self.ref(node)} = ag_{node.op}({given})")
            return
        op = OPS[node.op]
        why = None if op.code is None else op.code.refusal("c")
        if why:
            raise UnsupportedError.naming(
                "codegen {target} c has no spelling for {op}: {why}",
                {"op": shown(node), "why": why},
                op=node.op,
            )
        if op.kind in ("elementwise", "comparison", "constant"):
            self.new(node)
            args = [self._arg(node, k) for k in range(len(node.args))]
            text = spell(node, args, "c", {"dtype": self.ctype})
            self.loop(node, f"{self.ref(node)} = {text}")
            return
        _structured(self, node)

    def _arg(self, node: Node, k: int) -> str:
        """Argument ``k`` at the element ``ag_i`` of ``node``'s output (broadcast)."""
        arg = node.args[k]
        shape, out = arg.value.shape, node.value.shape
        if arg.value.ndim == 0 or shape == out:
            return self.ref(arg)
        if arg.value.size == 1:
            return self.ref(arg, "0")
        index = np.broadcast_to(np.arange(arg.value.size).reshape(shape), out)
        return self.ref(arg, self.index(index, "ag_i"))


def _unsupported(node: Node, why: str = "") -> UnsupportedError:
    return UnsupportedError.naming(
        "codegen {target} c has no spelling for {op}" + (" ({why})" if why else ""),
        {"op": shown(node), "why": why},
        op=node.op,
    )


# ---------------------------------------------------------------------------
# Ops by what they are: gathers, linear maps, bilinear maps (probed at generation time)
# ---------------------------------------------------------------------------


def _forward(node: Node, arrays):
    with np.errstate(all="ignore"):
        return np.asarray(OPS[node.op].forward(*arrays, **node.attrs), dtype=np.float64)


def _split(node: Node, flat):
    """``flat`` (all arguments' elements in a row) as the arguments' arrays."""
    out, start = [], 0
    for a in node.args:
        n = a.value.size
        out.append(np.asarray(flat[start : start + n], dtype=np.float64).reshape(a.value.shape))
        start += n
    return out


def _gather(node: Node):
    """For an op that copies elements: each output element's source (index into all the
    arguments' elements in a row; -1 for a zero), or None when it is not such an op.
    Probed with distinct random integers (three draws must agree), so that no sum, mean or
    order-dependent choice passes for a copy."""
    total = sum(a.value.size for a in node.args)
    rng = np.random.default_rng(2026)
    found = None
    for _ in range(3):
        ids = rng.choice(1 << 40, size=total, replace=False).astype(np.float64) + 1
        try:
            r = _forward(node, _split(node, ids)).ravel()
        except (ValueError, TypeError, IndexError):
            return None
        if r.shape != (node.value.size,):
            return None
        order = np.argsort(ids)
        at = np.clip(np.searchsorted(ids[order], r), 0, max(total - 1, 0))
        source = order[at] if total else np.zeros(r.size, np.int64)
        hit = (ids[source] == r) if total else np.zeros(r.size, bool)
        if not np.all(hit | (r == 0)):
            return None
        source = np.where(hit, source, -1)
        if found is not None and not np.array_equal(found, source):
            return None
        found = source
    return found


def _transposed(node: Node, y):
    """``M^T y`` for the op of ``node`` (one argument): its own vjp rule, run by the engine
    at the traced value with the cotangent ``y``; None where the rule gives nothing."""
    from ..tensor import Tensor, apply  # noqa: PLC0415 - the engine, only to probe

    x = Tensor(np.array(node.args[0].value, dtype=np.float64), requires_grad=True)
    with np.errstate(all="ignore"):
        out = apply(OPS[node.op], x, **node.attrs)
        out.backward(Tensor(np.asarray(y, dtype=np.float64).reshape(node.value.shape)))
    return None if x.grad is None else np.asarray(x.grad.numpy(), dtype=np.float64).ravel()


def _segment_sum(node: Node):
    """For an op of one argument that adds its elements up in segments, each times a weight
    (sum, mean, sum_to, scatter): the (out, source, weight) entries of ``_linear``, found
    from two runs of its transpose (the vjp rule) instead of one run per element."""
    if len(node.args) != 1 or OPS[node.op].vjp is None or node.value.size == 0:
        return None
    x = node.args[0].value
    rng = np.random.default_rng(99)
    ids = rng.choice(1 << 40, size=node.value.size, replace=False).astype(np.float64) + 1
    try:
        weight = _transposed(node, np.ones(node.value.size))
        scaled = _transposed(node, ids)
    except (AutogradCliError, ValueError, TypeError, IndexError, AttributeError, KeyError):
        return None
    if weight is None or scaled is None or weight.shape != (x.size,):
        return None
    used = np.flatnonzero(weight)
    with np.errstate(all="ignore"):
        guess = np.round(scaled[used] / weight[used])
    order = np.argsort(ids)
    at = np.clip(np.searchsorted(ids[order], guess), 0, ids.size - 1)
    out = order[at]
    if not np.all(ids[out] == guess):
        return None
    for _ in range(2):
        data = rng.standard_normal(x.size)
        got = np.zeros(node.value.size)
        np.add.at(got, out, weight[used] * data[used])
        if not np.allclose(got, _forward(node, [data.reshape(x.shape)]).ravel(), rtol=1e-12):
            return None
    sort = np.lexsort((used, out))
    return out[sort].astype(np.int64), used[sort].astype(np.int64), weight[used][sort]


def _linear(node: Node):
    """For an op linear in all its arguments: (out, source, weight) entries of its matrix,
    found one input element at a time and checked at random points; None if not linear."""
    total = sum(a.value.size for a in node.args)
    size = node.value.size
    if total * max(size, 1) > MAX_PROBE:
        raise LimitError.naming(
            "codegen {target} c: {op} on {total} numbers is too large to tabulate",
            {"op": shown(node), "total": total},
        )
    rows, cols, weights = [], [], []
    basis = np.zeros(total)
    try:
        if np.any(_forward(node, _split(node, basis)) != 0):
            return None
        for j in range(total):
            basis[j] = 1.0
            column = _forward(node, _split(node, basis)).ravel()
            basis[j] = 0.0
            nz = np.flatnonzero(column)
            rows.append(nz)
            cols.append(np.full(nz.size, j))
            weights.append(column[nz])
    except (ValueError, TypeError, IndexError):
        return None
    out, src, w = (np.concatenate(x) if x else np.zeros(0) for x in (rows, cols, weights))
    rng = np.random.default_rng(12345)
    for _ in range(2):
        x = rng.standard_normal(total)
        want = _forward(node, _split(node, x)).ravel()
        got = np.zeros(size)
        np.add.at(got, out.astype(np.int64), w * x[src.astype(np.int64)])
        if not np.allclose(got, want, rtol=1e-12, atol=1e-12):
            return None
    order = np.lexsort((src, out))
    return out.astype(np.int64)[order], src.astype(np.int64)[order], w[order]


def _bilinear(node: Node):
    """For an op of two arguments linear in each (products): its (out, i, j) terms
    ``out[k] += a[i]*b[j]``, each with weight 1, or None."""
    if len(node.args) != 2:
        return None
    a, b = (x.value for x in node.args)
    if a.size * max(node.value.size, 1) > MAX_PROBE:
        raise LimitError.naming(
            "codegen {target} c: {op} of {a} by {b} numbers is too large to tabulate",
            {"op": shown(node), "a": a.size, "b": b.size},
        )
    ids = np.arange(1, b.size + 1, dtype=np.float64).reshape(b.shape)
    terms = []
    basis = np.zeros(a.size)
    try:
        for col in range(a.size):
            basis[col] = 1.0
            ea = basis.reshape(a.shape)
            r1 = _forward(node, [ea, ids]).ravel()
            r2 = _forward(node, [ea, 3 * ids + 0.5]).ravel()
            basis[col] = 0.0
            nz = np.flatnonzero((r1 != 0) | (r2 != 0))
            if not np.all((r2[nz] == 3 * r1[nz] + 0.5) & (r1[nz] == np.round(r1[nz]))):
                return None
            terms.append(np.stack([nz, np.full(nz.size, col), r1[nz].astype(np.int64) - 1]))
    except (ValueError, TypeError, IndexError):
        return None
    k, i, j = np.concatenate(terms, axis=1) if terms else np.zeros((3, 0), np.int64)
    rng = np.random.default_rng(54321)
    x, y = rng.standard_normal(a.shape), rng.standard_normal(b.shape)
    got = np.zeros(node.value.size)
    np.add.at(got, k, x.ravel()[i] * y.ravel()[j])
    if not np.allclose(got, _forward(node, [x, y]).ravel(), rtol=1e-12, atol=1e-12):
        return None
    order = np.lexsort((j, i, k))
    return k[order], i[order], j[order]


#: The folds a reduction may be (the probe finds which one its forward is): how C writes
#: ``acc = acc (op) x``, its start, and NumPy's ufunc (and start) it is checked against
_FOLDS = (
    ("ag_max({acc}, {x})", "(-INFINITY)", np.maximum, -np.inf),
    ("ag_min({acc}, {x})", "INFINITY", np.minimum, np.inf),
    ("{acc} * {x}", "1.0", np.multiply, 1.0),
)


def _fold(node: Node):
    """For a reduction of one argument over segments of its elements (each output the max,
    min or product of its own elements): (segment of each input element, the fold), or
    None.  The segments are found by moving one element at a time off a background of
    ones; the fold by comparing the forward with each candidate at random points."""
    if len(node.args) != 1 or node.value.size == 0:
        return None
    x = node.args[0].value
    if x.size * node.value.size > MAX_PROBE:
        return None
    ones = np.ones(x.size)
    try:
        base = _forward(node, [ones.reshape(x.shape)]).ravel()
        segment = np.full(x.size, -1)
        for j in range(x.size):
            for v in (2.0, 0.5):
                ones[j] = v
                moved = np.flatnonzero(_forward(node, [ones.reshape(x.shape)]).ravel() != base)
                ones[j] = 1.0
                if moved.size > 1 or (moved.size == 1 and segment[j] not in (-1, moved[0])):
                    return None
                if moved.size:
                    segment[j] = moved[0]
        if np.any(segment < 0):
            return None
        rng = np.random.default_rng(777)
        for spelled, start, ufunc, empty in _FOLDS:
            good = True
            for _ in range(2):
                data = rng.standard_normal(x.size)
                want = _forward(node, [data.reshape(x.shape)]).ravel()
                got = np.full(node.value.size, empty, dtype=np.float64)
                ufunc.at(got, segment, data)
                good = good and bool(np.allclose(got, want, rtol=1e-12, atol=0))
            if good:
                return segment, spelled, start
    except (ValueError, TypeError, IndexError):
        return None
    return None


def _write_fold(w: _Writer, node: Node, segment, spelled: str, start: str) -> None:
    w.loop(node, f"{w.ref(node)} = {start}")
    acc = w.ref(node, w.index(segment, "ag_i"))
    value = spelled.format(acc=acc, x=w.ref(node.args[0]))
    w.add(f"for (long ag_i = 0; ag_i < {segment.size}; ag_i++) {acc} = {value};")


def _structured(w: _Writer, node: Node) -> None:
    """A node whose op is not elementwise: a gather, a linear map or a bilinear map."""
    w.new(node)
    index = _gather(node)
    if index is not None:
        _write_gather(w, node, index)
        return
    linear = _segment_sum(node)
    if linear is None:
        linear = _linear(node)
    if linear is not None:
        _write_linear(w, node, *linear)
        return
    terms = _bilinear(node)
    if terms is None:
        fold = _fold(node)
        if fold is None:
            raise _unsupported(node)
        _write_fold(w, node, *fold)
        return
    k, i, j = terms
    a, b = node.args
    w.loop(node, f"{w.ref(node)} = 0")
    target = w.ref(node, w.index(k, "ag_n"))
    product = f"{w.ref(a, w.index(i, 'ag_n'))} * {w.ref(b, w.index(j, 'ag_n'))}"
    w.add(f"for (long ag_n = 0; ag_n < {k.size}; ag_n++) {target} += {product};")


def _parts(node: Node, source):
    """Per argument: (its number, the positions it fills, the source indices in it)."""
    start = 0
    for k, a in enumerate(node.args):
        n = a.value.size
        mask = (source >= start) & (source < start + n)
        yield k, mask, source - start
        start += n


def _write_gather(w: _Writer, node: Node, index) -> None:
    size = node.value.size
    if len(node.args) == 1 and np.all(index >= 0):
        arg = node.args[0]
        if np.array_equal(index, np.arange(size)) and arg.value.size == size:
            w.loop(node, f"{w.ref(node)} = {w.ref(arg)}")
            return
        w.loop(node, f"{w.ref(node)} = {w.ref(arg, w.index(index, 'ag_i'))}")
        return
    if np.any(index < 0):
        w.loop(node, f"{w.ref(node)} = 0")
    positions = np.arange(size)
    for k, mask, local in _parts(node, index):
        if not mask.any():
            continue
        target = w.ref(node, w.index(positions[mask], "ag_n"))
        value = w.ref(node.args[k], w.index(local[mask], "ag_n"))
        w.add(f"for (long ag_n = 0; ag_n < {int(mask.sum())}; ag_n++) {target} = {value};")


def _write_linear(w: _Writer, node: Node, out, src, weight) -> None:
    w.loop(node, f"{w.ref(node)} = 0")
    for k, mask, local in _parts(node, src):
        if not mask.any():
            continue
        value = w.ref(node.args[k], w.index(local[mask], "ag_n"))
        ws = weight[mask]
        if not np.all(ws == 1):
            scale = _literal(float(ws[0])) if np.all(ws == ws[0]) else None
            value = f"{scale or w.tables.table(ws, 'c') + '[ag_n]'} * {value}"
        target = w.ref(node, w.index(out[mask], "ag_n"))
        w.add(f"for (long ag_n = 0; ag_n < {int(mask.sum())}; ag_n++) {target} += {value};")


# ---------------------------------------------------------------------------
# The translation unit
# ---------------------------------------------------------------------------


def _signature(name, inputs, params, outputs, ctype) -> tuple[str, list[str], list[str]]:
    """The function's prototype, its parameter declarations, and the comment lines."""
    decls, doc = [], []
    for var, node in inputs.items():
        p = params[var]
        if node.value.ndim == 0:
            decls.append(f"{ctype} {p}")
            doc.append(f"  {ctype} {p}: the number {var}")
        else:
            decls.append(f"const {ctype} *{p}")
            doc.append(
                f"  const {ctype} *{p}: {var}, shape {tuple(node.value.shape)}, "
                f"{node.value.size} numbers row-major"
            )
    for label, node in outputs:
        decls.append(f"{ctype} *{label}")
        what = (
            "1 number"
            if node.value.ndim == 0
            else (f"shape {tuple(node.value.shape)}, {node.value.size} numbers row-major")
        )
        doc.append(f"  {ctype} *{label}: out, {what}")
    return f"void {name}({', '.join(decls)})", decls, doc


def emit_c(name, inputs, params, outputs, order, header, dtype) -> str:
    """The C99 translation unit: header block, ``<math.h>``, the helpers used, the tables,
    and ``void name(inputs..., outputs...)`` (see the module's docstring)."""
    ctype = _CTYPES[dtype]
    w = _Writer({node.index: params[var] for var, node in inputs.items()}, ctype)
    for node in order:
        w.write(node)
    results = []
    for label, node in outputs:
        if node.value.ndim == 0:
            results.append(f"*{label} = {w.ref(node)};")
        else:
            results.append(
                f"for (long ag_i = 0; ag_i < {node.value.size}; ag_i++) "
                f"{label}[ag_i] = {w.ref(node)};"
            )
    proto, decls, doc = _signature(name, inputs, params, outputs, ctype)
    storage = "static " if w.size * 8 > STACK_BYTES else ""
    lines = ["/*"] + [f" * {line}" if line else " *" for line in header]
    lines += [" *", f" * C99, links with -lm only.  {proto};"]
    lines += [" *" + d for d in doc]
    lines.append(
        " * (numbers: "
        + (
            "float, computed with libm's double functions, each statement rounded to float)"
            if ctype == "float"
            else "double)"
        )
    )
    if storage:
        lines.append(
            f" * Its {w.size} temporaries are in static storage (past {STACK_BYTES} bytes on "
            "the stack): not reentrant, not thread-safe."
        )
    lines += [" */", "#include <math.h>", ""]
    body = "\n".join(w.statements + results)
    used = set(re.findall(r"\bag_[a-z]+\d*\b", body))
    helpers = [h for h in _HELPERS if h in used]
    if helpers:
        docs = dict.fromkeys(_HELPER_DOC[h] for h in helpers)
        lines += ["/* " + "; ".join(docs) + " */"]
        lines += [
            _HELPERS[h].replace("T ", ctype + " ").replace("(T ", f"({ctype} ") for h in helpers
        ]
        lines.append("")
    lines += [d for n, d in w.tables.decls.items() if n in used]
    lines.append("")
    lines += _functions(proto, decls, params, w, storage, results)
    return "\n".join(lines) + "\n"


def _functions(proto, decls, params, w: _Writer, storage: str, results) -> list[str]:
    """The function (and, for a long program, its parts: static functions of CHUNK
    statements each, taking the inputs and the workspace, called in order)."""
    voids = [f"    (void){p};" for p in params.values()]
    # (void)ag_s: a program with no statement (x, x + 0) leaves the workspace unused
    head = [proto, "{", f"    {storage}{w.ctype} ag_s[{max(w.size, 1)}];", "    (void)ag_s;"]
    head += voids
    tail = ["    " + s for s in results] + ["}"]
    statements = w.statements
    if len(statements) <= INLINE:
        return head + ["    " + s for s in statements] + tail
    part_args = ", ".join(decls[: len(params)] + [f"{w.ctype} *ag_s"])
    call_args = ", ".join(list(params.values()) + ["ag_s"])
    lines: list[str] = []
    for start in range(0, len(statements), CHUNK):
        part = f"ag_part{start // CHUNK}"
        lines += [f"static void {part}({part_args})", "{"] + voids
        lines += ["    " + s for s in statements[start : start + CHUNK]] + ["}", ""]
        head.append(f"    {part}({call_args});")
    return lines + head + tail


# ---------------------------------------------------------------------------
# Running it (codegen --check --target c)
# ---------------------------------------------------------------------------

#: Seconds a compile or a run may take
TIMEOUT = 120


def compiler() -> str:
    """The C compiler: ``$CC`` where it names an executable, else ``cc`` on the PATH."""
    chosen = os.environ.get("CC", "").strip()
    found = shutil.which(chosen) if chosen else None
    found = found or shutil.which("cc")
    if found is None:
        raise UnsupportedError.naming(
            "codegen {check} of {target} c needs a C compiler (cc); none was found"
        )
    return found


def _harness(generated) -> str:
    """A ``main`` reading the points (doubles, inputs in order) from stdin and writing the
    outputs (doubles) to stdout; ``argv[1]``: the number of points."""
    ctype = _CTYPES[generated.dtype]
    sizes_in = [math.prod(s) for s in generated.inputs.values()]
    scalar_in = [len(s) == 0 for s in generated.inputs.values()]
    sizes_out = _output_sizes(generated)
    lines = ["#include <stdio.h>", "#include <stdlib.h>"]
    decls = [(f"{ctype}" if s else f"const {ctype} *") for s in scalar_in]
    decls += [f"{ctype} *"] * len(sizes_out)
    lines.append(f"void {generated.name}({', '.join(decls)});")
    lines += [
        "int main(int ag_argc, char **ag_argv)",
        "{",
        "    long ag_n = ag_argc > 1 ? atol(ag_argv[1]) : 0;",
    ]
    total = sum(sizes_in) + sum(sizes_out)
    lines.append(f"    double *ag_io = malloc({max(total, 1)} * sizeof(double));")
    lines.append(f"    {ctype} *ag_buf = malloc({max(total, 1)} * sizeof({ctype}));")
    lines.append("    if (!ag_io || !ag_buf) return 3;")
    args, offset = [], 0
    for size, scalar in zip(sizes_in, scalar_in):
        args.append(f"ag_buf[{offset}]" if scalar else f"ag_buf + {offset}")
        offset += size
    n_in = offset
    for size in sizes_out:
        args.append(f"ag_buf + {offset}")
        offset += size
    lines += [
        "    for (long ag_p = 0; ag_p < ag_n; ag_p++) {",
        f"        if (fread(ag_io, sizeof(double), {n_in}, stdin) != {n_in}) return 4;",
        f"        for (long ag_k = 0; ag_k < {n_in}; ag_k++) ag_buf[ag_k] = ({ctype})ag_io[ag_k];",
        f"        {generated.name}({', '.join(args)});",
        f"        for (long ag_k = {n_in}; ag_k < {offset}; ag_k++) ag_io[ag_k] = (double)ag_buf[ag_k];",
        f"        if (fwrite(ag_io + {n_in}, sizeof(double), {offset - n_in}, stdout) != "
        f"{offset - n_in}) return 5;",
        "    }",
        "    free(ag_io);",
        "    free(ag_buf);",
        "    return 0;",
        "}",
    ]
    return "\n".join(lines) + "\n"


def _output_shapes(generated) -> list[tuple]:
    shapes = []
    ins = {n: tuple(s) for n, s in generated.inputs.items()}
    for label in generated.outputs:
        if label == "value":
            shapes.append(())
        elif label.startswith("grad_"):
            shapes.append(ins[label[5:]])
        else:
            a, b = _hessian_pair(label[8:], ins)
            shapes.append(ins[a] + ins[b])
    return shapes


def _hessian_pair(rest: str, ins: dict) -> tuple[str, str]:
    for a in ins:
        if rest.startswith(a + "_") and rest[len(a) + 1 :] in ins:
            return a, rest[len(a) + 1 :]
    raise EvaluationError(f"codegen: an output hessian_{rest} names no pair of inputs")


def _output_sizes(generated) -> list[int]:
    return [math.prod(s) for s in _output_shapes(generated)]


def compile_c(source: str, harness: str, directory: str, flags=("-O2",)) -> str:
    """The executable of ``source`` and ``harness`` built in ``directory``."""
    cc = compiler()
    paths = [os.path.join(directory, n) for n in ("generated.c", "harness.c")]
    for path, text in zip(paths, (source, harness)):
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    exe = os.path.join(directory, "generated")
    command = [cc, "-std=c99", *flags, *paths, "-o", exe, "-lm"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise EvaluationError(f"codegen: compiling the C took over {TIMEOUT} s") from None
    if done.returncode != 0:
        first = "\n".join(done.stderr.splitlines()[:8])
        raise EvaluationError(f"codegen: the generated C did not compile:\n{first}")
    return exe


def run_c(generated, points) -> list[tuple]:
    """Compile ``generated`` (a C :class:`~.Generated`) with a harness in a private
    temporary directory and run it at ``points`` (dicts variable -> value) in one run:
    per point, the outputs in ``generated.outputs`` order, shaped as the engine's."""
    names = list(generated.inputs)
    rows = []
    for point in points:
        for n in names:
            v = np.asarray(point[n], dtype=np.float64)
            if v.shape != tuple(generated.inputs[n]):
                raise EvaluationError(
                    f"codegen: {n} has shape {v.shape}, the code was generated for "
                    f"{tuple(generated.inputs[n])}"
                )
            rows.append(v.ravel())
    data = np.concatenate(rows).astype("<f8").tobytes() if rows else b""
    directory = tempfile.mkdtemp(prefix="autograd-cli-c-")
    try:
        exe = compile_c(generated.code, _harness(generated), directory)
        try:
            done = subprocess.run(
                [exe, str(len(points))], input=data, capture_output=True, timeout=TIMEOUT
            )
        except subprocess.TimeoutExpired:
            raise EvaluationError(f"codegen: the compiled C ran over {TIMEOUT} s") from None
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    if done.returncode != 0:
        raise EvaluationError(f"codegen: the compiled C failed (exit {done.returncode})")
    shapes = _output_shapes(generated)
    sizes = _output_sizes(generated)
    flat = np.frombuffer(done.stdout, dtype="<f8")
    per = sum(sizes)
    if flat.size != per * len(points):
        raise EvaluationError("codegen: the compiled C wrote fewer numbers than expected")
    out = []
    for p in range(len(points)):
        row, start = [], p * per
        for shape, size in zip(shapes, sizes):
            row.append(flat[start : start + size].reshape(shape).copy())
            start += size
        out.append(tuple(row))
    return out
