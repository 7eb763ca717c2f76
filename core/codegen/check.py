"""``codegen --check``: the generated code run at many points against the engine.

The points are random around the values given (each number moved by up to a tenth of its
size, at least 0.1), or in [-1, 1] where none were given, the same ones each run (a fixed
seed).  At each point the engine computes ``grad`` (or ``hessian``) and the generated code
its outputs; the check reports, per output, the largest difference relative to the size of
the engine's output there (max |ours - engine| / max |engine|), 0 where both give the same
inf or nan, inf where only one does.  The runtime of the target is needed: NumPy (always),
PyTorch, JAX, or a C compiler; without it the check says it could not run.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from .. import limits
from ..errors import InputError, UnsupportedError
from ..program import Program

__all__ = ["CheckResult", "CheckUnavailableError", "check", "DEFAULT_POINTS", "MAX_POINTS"]

DEFAULT_POINTS = 100
MAX_POINTS = 100_000
RTOL = {"float64": 1e-12, "float32": 1e-5}


class CheckUnavailableError(InputError):
    """The target's runtime (PyTorch, JAX, a C compiler) is not installed: the check could
    not run (which is not a pass)."""

    kind = "check_unavailable"


@dataclass
class CheckResult:
    points: int
    max_rel_diff: dict[str, float]  # output -> the largest relative difference
    rtol: float

    @property
    def passed(self) -> bool:
        return all(d <= self.rtol for d in self.max_rel_diff.values())

    @property
    def worst(self) -> float:
        return max(self.max_rel_diff.values(), default=0.0)


def _points(values: Mapping, shapes: Mapping, n: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        point = {}
        for name, shape in shapes.items():
            if name in values:
                v = np.asarray(values[name], dtype=np.float64)
                spread = np.maximum(np.abs(v) * 0.1, 0.1)
                spread = np.where(np.isfinite(spread), spread, 0.0)
                point[name] = v + spread * rng.uniform(-1.0, 1.0, size=v.shape)
            else:
                point[name] = rng.uniform(-1.0, 1.0, size=tuple(shape))
        out.append(point)
    return out


def _relative(ours, engine) -> float:
    a = np.asarray(ours, dtype=np.float64)
    b = np.asarray(engine, dtype=np.float64)
    if a.shape != b.shape:
        return math.inf
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    if same.all():
        return 0.0
    if not (np.isfinite(a[~same]).all() and np.isfinite(b[~same]).all()):
        return math.inf
    scale = float(np.max(np.abs(b[np.isfinite(b)]), initial=0.0))
    diff = float(np.max(np.abs(a[~same] - b[~same])))
    return diff / scale if scale > 0 else math.inf


def _engine(program: Program, point: dict, wrt: list, hessian: bool) -> list:
    from .. import api  # noqa: PLC0415 - api imports the whole engine: only for a check

    result = api.compute("hessian" if hessian else "grad", program, point, wrt=wrt)
    out = [result.value] + [result.grad[n] for n in wrt]
    if hessian:
        out += [result.hessian[a][b] for a in wrt for b in wrt]
    return out


def check(
    generated,
    program: Program,
    values: Mapping | None = None,
    points: int = DEFAULT_POINTS,
    seed: int = 0,
) -> CheckResult:
    """Run ``generated`` (a :class:`~.Generated`) at ``points`` points against the engine."""
    if not 1 <= points <= MAX_POINTS:
        raise InputError.naming(
            "{check}: the number of points must be 1 to {most}, not {value}",
            {"most": MAX_POINTS, "value": points},
        )
    per_point = sum(math.prod(shape) for shape in generated.inputs.values())
    limits.check(points * max(per_point, 1), 8, "the check's points")  # before drawing them
    run = _runner(generated)
    sample = _points(values or {}, generated.inputs, points, seed)
    worst = dict.fromkeys(generated.outputs, 0.0)
    ours_all = run(sample)
    for point, ours in zip(sample, ours_all):
        with np.errstate(all="ignore"):
            want = _engine(program, point, generated.wrt, generated.hessian)
        for label, a, b in zip(generated.outputs, ours, want):
            worst[label] = max(worst[label], _relative(a, b))
    return CheckResult(points, worst, RTOL[generated.dtype])


def _runner(generated) -> Callable[[list], list]:
    """A function running the code at a list of points: a list of output tuples."""
    if generated.target == "c":
        from .c import run_c  # noqa: PLC0415 - the C generator only for C

        def run_compiled(sample):
            try:
                return run_c(generated, sample)
            except UnsupportedError as exc:  # no C compiler here
                if exc.template is None:
                    raise CheckUnavailableError(str(exc)) from None
                raise CheckUnavailableError.naming(exc.template, exc.fields) from None

        return run_compiled
    function = _load_python(generated)

    def run(sample):
        out = []
        for point in sample:
            with np.errstate(all="ignore"):
                got = function(*[point[n] for n in generated.inputs])
            out.append(tuple(_host(v) for v in got))
        return out

    return run


_RUNTIMES = {
    "torch": ("torch", "PyTorch (pip install torch)"),
    "jax": ("jax", "JAX (pip install jax)"),
}


def _load_python(generated):
    """The generated function, its module run in a namespace of its own (code this module
    generated: names are checked identifiers and the expression is only in comments)."""
    if generated.target in _RUNTIMES:
        module, what = _RUNTIMES[generated.target]

        if importlib.util.find_spec(module) is None:
            raise CheckUnavailableError.naming(
                "codegen {check} of {target} {chosen} could not run: {what} is not installed "
                "here (the code was generated; nothing was checked)",
                {"chosen": generated.target, "what": what},
            )
        if generated.target == "jax" and generated.dtype == "float64":
            # the runtime of the code being checked, found by name (an optional package
            # that type checkers need not know)
            importlib.import_module("jax").config.update("jax_enable_x64", True)
    namespace: dict = {"__name__": "autograd_cli_generated"}
    exec(compile(generated.code, f"<codegen {generated.target}>", "exec"), namespace)  # noqa: S102
    return namespace[generated.name]


def _host(v):
    """An output as a NumPy array (a torch tensor or a JAX array moved to the host)."""
    if hasattr(v, "detach"):
        v = v.detach().cpu().numpy()
    return np.asarray(v, dtype=np.float64)
