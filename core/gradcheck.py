"""``gradcheck``: analytic Jacobians against central finite differences (``torch.autograd.gradcheck``).

:func:`gradcheck` in named steps: the inputs it checks (:func:`_checked_inputs`), the step
and tolerances (:func:`_tolerances`), the analytic Jacobians of :func:`.functional.jacobian`
(:func:`_analytic`, reverse and forward mode), the difference quotients one input element at
a time with the rounding each may carry (:func:`_numeric`, :func:`_quotients`), and the
comparison that keeps the worst element (:class:`_Comparison`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from . import backend
from .errors import GradError, InputError
from .functional import _as_tuple, jacobian
from .tensor import Tensor, no_grad

__all__ = [
    "GRADCHECK_DEFAULTS",
    "GradcheckFailure",
    "GradcheckResult",
    "gradcheck",
    "gradcheck_defaults",
]


class GradcheckFailure(GradError):
    kind = "gradcheck"


@dataclass
class GradcheckResult:
    """What :func:`gradcheck` found.

    ``analytic[j]`` and ``numeric[j]`` are host arrays of shape
    ``(total output elements, inputs[j].size)``: the Jacobian with respect to
    input j, all outputs flattened and concatenated (rows) against the
    flattened input (columns).  ``worst`` describes the element with the
    largest error relative to its tolerance (``atol + rtol*|numeric|``).
    """

    passed: bool
    max_abs_error: float
    max_rel_error: float
    worst: dict | None
    analytic: tuple
    numeric: tuple
    forward: tuple | None = None
    eps: float = 1e-6
    atol: float = 1e-5
    rtol: float = 1e-3
    messages: list = field(default_factory=list)

    def __bool__(self) -> bool:
        return self.passed

    def summary(self) -> str:
        head = "gradcheck passed" if self.passed else "gradcheck FAILED"
        text = (
            f"{head}: max abs error {self.max_abs_error:.3g}, max rel error "
            f"{self.max_rel_error:.3g} (eps={self.eps:g}, atol={self.atol:g}, rtol={self.rtol:g})"
        )
        if self.worst is not None and not self.passed:
            w = self.worst
            text += (
                f"; worst: {w['mode']} d output {w['output']}{list(w['output_index'])} / "
                f"d input {w['input']}{list(w['input_index'])}: analytic {w['analytic']:.10g}, "
                f"numeric {w['numeric']:.10g}"
            )
        return text


#: gradcheck's default step and tolerances by dtype.  float64 keeps torch's familiar
#: numbers; float32 has about 7 digits, so its step is near the cube root of its epsilon
#: (the step that balances rounding against truncation) and its tolerances are wider.
GRADCHECK_DEFAULTS = {
    "float64": {"eps": 1e-6, "atol": 1e-5, "rtol": 1e-3},
    "float32": {"eps": 1e-3, "atol": 1e-3, "rtol": 1e-2},
}

#: how many roundings of the output's size a finite difference may carry (see gradcheck)
ROUNDING_ALLOWANCE = 8


def gradcheck_defaults(dtype) -> dict:
    """``{"eps", "atol", "rtol"}`` for a dtype (a name or a NumPy dtype); float64's otherwise."""
    name = str(getattr(dtype, "name", dtype))
    return dict(GRADCHECK_DEFAULTS.get(name, GRADCHECK_DEFAULTS["float64"]))


def _flat_outputs(out) -> list:
    return [o.data.reshape(-1) for o in _as_tuple(out)]


def gradcheck(
    func: Callable,
    inputs,
    eps: float | None = 1e-6,
    atol: float | None = 1e-5,
    rtol: float | None = 1e-3,
    raise_exception: bool = False,
    check_forward_ad: bool = False,
) -> GradcheckResult:
    """Compare ``func``'s analytic Jacobian with central finite differences (``torch.autograd.gradcheck``).

    Every input Tensor is checked, or only those with ``requires_grad=True``
    when some have it.  An element passes when
    ``|analytic - numeric| <= atol + rtol * |numeric| + rounding``, where
    ``rounding`` bounds the error that rounding the two outputs puts into their
    difference quotient (``8 * finfo.eps * (|f(x+h)| + |f(x-h)|) / 2h``; tiny in
    float64, what keeps a correct float32 gradient from failing).  The quotient
    divides by the step actually taken (``x+h`` and ``x-h`` as the dtype holds
    them), and a step too small to move ``x`` in its dtype is an InputError.
    ``eps``/``atol``/``rtol`` of None take :func:`gradcheck_defaults` of the
    inputs' dtype.  The reverse-mode
    Jacobian is always checked; ``check_forward_ad=True`` also checks the
    forward-mode one.  Returns a :class:`GradcheckResult` (truthy when it
    passed); ``raise_exception=True`` raises :class:`GradcheckFailure` instead
    of returning a failed result.

    >>> from autograd_cli.core import tensor
    >>> bool(gradcheck(lambda x: (x.sin() * x).sum(), tensor([0.3, 1.2])))
    True
    """
    xs = list(_as_tuple(inputs))
    checked = _checked_inputs(xs)

    def sub(*vals):
        args = list(xs)
        for i, v in zip(checked, vals):
            args[i] = v
        return func(*args)

    diff = [xs[i] for i in checked]
    eps, atol, rtol = _tolerances(diff[0].data.dtype, eps, atol, rtol)
    with no_grad():
        base = sub(*[Tensor._wrap(x.data) for x in diff])
    ana = _analytic(sub, diff, base, "reverse")
    fwd = _analytic(sub, diff, base, "forward") if check_forward_ad else None
    num, noises = _numeric(sub, diff, checked, base, eps)
    found = _Comparison(checked, diff, base, atol, rtol)
    for mode, mats in [("reverse", ana)] + ([("forward", fwd)] if fwd is not None else []):
        for j, (a, n) in enumerate(zip(mats, num)):
            found.add(mode, j, a, n, noises[j])
    result = GradcheckResult(
        found.passed,
        found.max_abs,
        found.max_rel,
        found.worst,
        tuple(ana),
        tuple(num),
        None if fwd is None else tuple(fwd),
        eps,
        atol,
        rtol,
        found.messages,
    )
    if raise_exception and not found.passed:
        raise GradcheckFailure(result.summary(), worst=found.worst)
    return result


def _checked_inputs(xs: list) -> list:
    """The positions of the inputs to check: the Tensors that require grad, else every Tensor."""
    tensor_pos = [i for i, x in enumerate(xs) if isinstance(x, Tensor)]
    checked = [i for i in tensor_pos if xs[i].requires_grad] or tensor_pos
    if not checked:
        raise TypeError("gradcheck needs at least one Tensor input")
    for i in checked:
        if xs[i].data.dtype.kind != "f":
            raise TypeError(f"gradcheck: input {i} has dtype {xs[i].data.dtype}")
    return checked


def _tolerances(dtype, eps, atol, rtol) -> tuple:
    """``(eps, atol, rtol)``: those given, the dtype's defaults for those left None."""
    defaults = gradcheck_defaults(dtype)
    eps = defaults["eps"] if eps is None else eps
    atol = defaults["atol"] if atol is None else atol
    rtol = defaults["rtol"] if rtol is None else rtol
    if not (math.isfinite(eps) and eps > 0):
        raise InputError(f"gradcheck: eps must be a finite number above 0, not {eps!r}")
    return eps, atol, rtol


def _analytic(sub: Callable, diff: list, base, strategy: str) -> tuple:
    """The Jacobian with respect to each checked input, as a host matrix (all outputs' rows,
    the input's flattened columns), by :func:`.functional.jacobian` in ``strategy`` mode."""
    host = backend.host
    out_sizes = [o.size for o in _as_tuple(base)]
    blocks = jacobian(lambda *v: sub(*v), tuple(diff), strategy=strategy)
    # jacobian(tuple) nests [input] (single output) or [output][input]
    if not isinstance(base, (list, tuple)):
        blocks = (blocks,)

    def as_matrix(j):
        # blocks[i][j]: output i, input j -> rows of all outputs, columns of input j
        parts = [
            backend.to_numpy(blocks[i][j].data).reshape(out_sizes[i], diff[j].size)
            for i in range(len(out_sizes))
        ]
        return host.concatenate(parts, axis=0) if parts else host.zeros((0, diff[j].size))

    return tuple(as_matrix(j) for j in range(len(diff)))


def _numeric(sub: Callable, diff: list, checked: list, base, eps: float) -> tuple:
    """Central differences, one input element at a time, divided by the step actually taken:
    ``(quotients, noises)``, one host matrix each per input; ``noise`` bounds what rounding
    the two outputs adds to each quotient (see :func:`gradcheck`)."""
    host = backend.host
    n_out = sum(o.size for o in _as_tuple(base))
    num = []
    noises = []
    for j, x in enumerate(diff):
        cols = host.zeros((n_out, x.size))
        noise = host.zeros((n_out, x.size))
        flat = x.data.reshape(-1)
        unit = float(host.finfo(backend.to_numpy(flat).dtype).eps)
        for k in range(x.size):
            values, step = _quotients(sub, diff, j, k, eps, n_out)
            if not step > 0:
                raise _no_step(checked[j], x, flat, k, eps)
            with host.errstate(invalid="ignore", over="ignore"):
                cols[:, k] = (values[0] - values[1]) / step
                noise[:, k] = (
                    ROUNDING_ALLOWANCE * unit * (host.abs(values[0]) + host.abs(values[1])) / step
                )
        num.append(cols)
        noises.append(host.where(host.isfinite(noise), noise, 0.0))
    return num, noises


def _quotients(sub: Callable, diff: list, j: int, k: int, eps: float, n_out: int) -> tuple:
    """The outputs at element ``k`` of input ``j`` moved by +eps and -eps (flat, float64), and
    the step between the two points as the dtype holds them."""
    host = backend.host
    flat = diff[j].data.reshape(-1)
    values = []
    ends = []
    for sign in (1.0, -1.0):
        pert = flat.copy()
        pert[k] = pert[k] + sign * eps
        ends.append(float(backend.to_numpy(pert[k : k + 1])[0]))
        args = [Tensor._wrap(d.data) for d in diff]
        args[j] = Tensor._wrap(pert.reshape(diff[j].data.shape))
        with no_grad():
            out = sub(*args)
        values.append(
            backend.to_numpy(backend.xp.concatenate(_flat_outputs(out))).astype(host.float64)
            if n_out
            else host.zeros(0)
        )
    return values, ends[0] - ends[1]


def _no_step(position: int, x: Tensor, flat, k: int, eps: float) -> InputError:
    """The error for a step that does not move element ``k`` of input ``position``."""
    host = backend.host
    where = f"input {position}" + (
        f"{[int(v) for v in host.unravel_index(k, x.shape)]}" if x.shape else ""
    )
    at = float(backend.to_numpy(flat[k : k + 1])[0])
    dtype = backend.to_numpy(flat).dtype
    return InputError(
        f"gradcheck: the step eps={eps:g} does not move {where} = {at:g} in "
        f"{dtype}; give a larger eps"
        if math.isfinite(at)
        else f"gradcheck: no finite difference can be taken at {where} = {at:g}"
    )


class _Comparison:
    """The analytic Jacobians against the numeric ones, input by input and mode by mode:
    whether all passed, the largest errors, and the worst element (the largest error
    relative to its tolerance ``atol + rtol*|numeric| + noise``)."""

    def __init__(self, checked: list, diff: list, base, atol: float, rtol: float):
        self.checked, self.diff, self.base = checked, diff, base
        self.out_sizes = [o.size for o in _as_tuple(base)]
        self.atol, self.rtol = atol, rtol
        self.passed = True
        self.max_abs = 0.0
        self.max_rel = 0.0
        self.worst: dict | None = None
        self.worst_ratio = -1.0
        self.messages: list = []

    def add(self, mode: str, j: int, a, n, noise) -> None:
        """Compare input ``j``'s analytic matrix ``a`` in ``mode`` with the numeric ``n``."""
        if a.size == 0:
            return
        host = backend.host
        with host.errstate(invalid="ignore", over="ignore"):  # inf - inf: nan, no warning
            err = host.abs(a - n)
        err = host.where(host.isnan(err), host.inf, err)
        with host.errstate(invalid="ignore"):
            tol = self.atol + self.rtol * host.abs(n) + noise
        tol = host.where(host.isnan(tol), 0.0, tol)
        scale = host.maximum(host.maximum(host.abs(a), host.abs(n)), 1e-300)
        with host.errstate(invalid="ignore"):
            rel = host.where(err == 0, 0.0, err / scale)
        self.max_abs = max(self.max_abs, float(err.max()))
        self.max_rel = max(self.max_rel, float(rel.max()))
        with host.errstate(divide="ignore", invalid="ignore"):
            ratio = host.where(err == 0, 0.0, err / tol)
        r, c = divmod(int(host.argmax(ratio)), a.shape[1])
        if float(ratio.flat[r * a.shape[1] + c]) > self.worst_ratio:
            self.worst_ratio = float(ratio.flat[r * a.shape[1] + c])
            self.worst = self._entry(mode, j, r, c, a, n, err, tol)
        if not bool((err <= tol).all()):
            self.passed = False
            self.messages.append(f"{mode}-mode Jacobian mismatch for input {self.checked[j]}")

    def _entry(self, mode: str, j: int, r: int, c: int, a, n, err, tol) -> dict:
        """``worst``: where row ``r``, column ``c`` of input ``j``'s matrices is."""
        host = backend.host
        o, within = _locate(r, self.out_sizes)
        out_shape = tuple(_as_tuple(self.base)[o].shape)
        in_shape = self.diff[j].shape
        return {
            "mode": mode,
            "input": self.checked[j],
            "input_index": tuple(int(v) for v in host.unravel_index(c, in_shape))
            if in_shape
            else (),
            "output": o,
            "output_index": tuple(int(v) for v in host.unravel_index(within, out_shape))
            if out_shape
            else (),
            "analytic": float(a[r, c]),
            "numeric": float(n[r, c]),
            "abs_error": float(err[r, c]),
            "tolerance": float(tol[r, c]),
        }


def _locate(row: int, sizes: list) -> tuple:
    for i, s in enumerate(sizes):
        if row < s:
            return i, row
        row -= s
    raise AssertionError(f"row {row} beyond the inputs' {sum(sizes)} entries")
