"""Minimise, solve and find stationary points with the engine's exact derivatives.

The variables named by ``wrt`` (default: every input) are flattened into one
vector θ; the others stay fixed at their values.  Each iteration asks the
engine for exact derivatives (:func:`~.program_functional.program_hessian` and
:func:`~.program_functional.program_jacobian`), never finite differences:

* :func:`minimize`: Newton's method on the exact Hessian with a backtracking
  (Armijo) line search; where the Hessian is not positive definite the step is
  the gradient's (a steepest-descent step), so every step descends.  ``bfgs``
  builds the curvature from gradients; ``gd`` is gradient descent.  Bounds
  (``lo <= θ_i <= hi``) are kept by projecting each trial point.  Where it
  converges, the second-order condition is checked with the exact Hessian: a
  saddle, a maximum or an inflection (x**3) is not a minimum (``converged``
  False, the message says why).
* :func:`solve`: Newton's method on F(θ) = 0 for one equation or a system (one
  equation per statement), with the exact Jacobian and a backtracking search on
  ||F||²; a least-squares step where the Jacobian is singular or not square.
* :func:`critical`: Newton's method on ∇f = 0 (any stationary point, not only
  minima), classified by the Hessian's eigenvalues (degenerate where one is zero
  or, near a degenerate point such as x**3's, not resolved).

Each returns an :class:`OptimizeResult`; one that did not converge says so
(``converged`` False and a message) and keeps the last iterate.  A message that names a
setting names it as the library does (``max_iter``, ``gtol``): a :class:`~.errors.Spelled`,
which a caller spells its own way (:func:`~.errors.spell`: the command line's ``--max-iter``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from . import backend
from .autograd import grad as engine_grad
from .errors import InputError, NonScalarOutputError, Spelled
from .program import Expr, Program, check_values, missing_value, resolve_wrt
from .program_functional import program_hessian, program_jacobian
from .recording import evaluate
from .settings import check_max_iter, check_positive
from .tensor import Tensor, enable_grad, no_grad

__all__ = ["OptimizeResult", "critical", "minimize", "solve", "METHODS", "MAX_ITER"]

METHODS = ("newton", "bfgs", "gd")
#: each method's default number of iterations (docs/analyses.md and --max-iter's help say so)
MAX_ITER = {"newton": 100, "bfgs": 1000, "gd": 10000}

#: how minimize's message begins when it stopped where the gradient is zero but found that
#: the point is not a minimum (``converged`` is then False)
NOT_A_MINIMUM = "not a minimum"


@dataclass(frozen=True)
class OptimizeResult:
    """Where an iteration ended (host floats and lists; plain data for the renderers)."""

    x: dict  # name -> value at the end point (float or nested list)
    value: object  # f(x) (solve: F(x), one entry per equation)
    grad: dict  # name -> gradient at x (solve: name -> column of the Jacobian)
    iterations: int
    converged: bool
    method: str
    message: str  # a Spelled where it names a setting
    residual: float | None = None  # solve: ||F(x)||
    kind: str | None = None  # critical: minimum, maximum, saddle, degenerate
    eigenvalues: list | None = None  # critical: the Hessian's, ascending
    trace: list = field(default_factory=list)  # per iteration: {"iteration", "x", "value", ...}


# ---------------------------------------------------------------------------
# The variables as one vector
# ---------------------------------------------------------------------------


class _Flat:
    """The variables ``names`` of ``program`` as one flat float64 vector θ (host NumPy)."""

    def __init__(self, program: Program, values: Mapping, names: Sequence[str]):
        np = backend.host
        self.program = program
        self.values = dict(values)
        self.names = list(names)
        self.shapes = []
        parts = []
        for name in self.names:
            if name not in self.values:
                raise missing_value(name)
            a = np.asarray(self.values[name], dtype=np.float64)
            if not np.isfinite(a).all():
                raise InputError(f"the start value of {name!r} must be finite", variable=name)
            self.shapes.append(a.shape)
            parts.append(a.ravel())
        self.theta0 = np.concatenate(parts) if parts else np.zeros(0)
        #: the sparse steps' last pattern and its coloring (sparsity.colored), kept from
        #: one iterate to the next
        self.coloring: dict = {}

    def env(self, theta) -> dict:
        out = dict(self.values)
        i = 0
        for name, shape in zip(self.names, self.shapes):
            n = math.prod(shape)
            out[name] = theta[i : i + n].reshape(shape)
            i += n
        return out

    def split(self, vector) -> dict:
        """A flat vector (one entry per θ) as name -> plain value."""
        return {n: _plain(v) for n, v in self.env(vector).items() if n in self.names}

    def flatten(self, blocks: Mapping) -> object:
        np = backend.host
        return np.concatenate([np.asarray(blocks[n], dtype=np.float64).ravel() for n in self.names])


def _plain(a):
    a = backend.host.asarray(a, dtype=float)
    return float(a) if a.ndim == 0 else a.tolist()


def _variables(program: Program, values: Mapping, wrt) -> _Flat:
    """The variables to vary (``wrt``, checked; at least one) at ``values``, flattened."""
    check_values(program, values)
    names = resolve_wrt(program, wrt)
    if not names:
        raise InputError("the expression has no variables to vary")
    return _Flat(program, values, names)


def _project(theta, bounds):
    if bounds is None:
        return theta
    lo, hi = bounds
    return backend.host.clip(theta, lo, hi)


def _bounds(flat: _Flat, bounds: Mapping | None):
    """(lo, hi) vectors for θ from name -> (lo, hi); None when no variable is bounded."""
    if not bounds:
        return None
    np = backend.host
    lo = np.full(flat.theta0.shape, -np.inf)
    hi = np.full(flat.theta0.shape, np.inf)
    i = 0
    for name, shape in zip(flat.names, flat.shapes):
        n = math.prod(shape)
        if name in bounds:
            a, b = bounds[name]
            if not a <= b:
                raise InputError(f"the bounds of {name!r} are empty: {a} > {b}", variable=name)
            lo[i : i + n], hi[i : i + n] = a, b
        i += n
    unknown = sorted(set(bounds) - set(flat.names))
    if unknown:
        raise InputError(
            f"bounds given for {unknown[0]!r}, which is not varied", variable=unknown[0]
        )
    return lo, hi


# ---------------------------------------------------------------------------
# Exact derivatives at a point
# ---------------------------------------------------------------------------


def _non_scalar(what: str, shape) -> NonScalarOutputError:
    return NonScalarOutputError(
        f"{what} needs a scalar output, but it has shape {tuple(shape)}; "
        "wrap it in sum(...) or norm(...)",
        shape=list(shape),
    )


#: from how many variables minimize's Newton steps take the sparse Hessian (its pattern,
#: colored sweeps, a sparse solve: issue 28) where SciPy is installed
SPARSE_NEWTON_FROM = 500


#: the most entries solve's result writes its Jacobian (``grad``) densely, as SPEC's arrays;
#: a larger one (the sparse steps' 10^5 unknowns: 10^10 entries) in SPEC's COO form
DENSE_JACOBIAN_MAX = 10**6


def _sparse_newton(n: int) -> bool:
    if n < SPARSE_NEWTON_FROM:
        return False
    try:
        import scipy.sparse.linalg  # noqa: F401, PLC0415 - optional: the dense path without it
    except ImportError:
        return False
    return True


def _sparse_value_grad_hess(flat: _Flat, theta, what: str):
    """The value, gradient and sparse Hessian (SciPy CSR, the variables in order)."""
    from .sparsity import sparse_hessian  # noqa: PLC0415

    try:
        value, _, _, H, gradient = sparse_hessian(
            flat.program, flat.env(theta), flat.names, memo=flat.coloring
        )
    except NonScalarOutputError as e:
        raise _non_scalar(what, e.details["shape"]) from None
    return float(backend.host.asarray(value).reshape(())), flat.flatten(gradient), H


def _scalar_value_grad_hess(flat: _Flat, theta, need_hessian: bool, what: str = "minimize"):
    np = backend.host
    env = flat.env(theta)
    if need_hessian and _sparse_newton(theta.size):
        return _sparse_value_grad_hess(flat, theta, what)
    if need_hessian:
        try:
            r = program_hessian(flat.program, env, wrt=flat.names)
        except NonScalarOutputError as e:  # the command's name, not the hessian command's
            raise _non_scalar(what, e.details["shape"]) from None
        value = backend.to_numpy(r.value.data)
        g = flat.flatten({n: backend.to_numpy(r.gradient[n].data) for n in flat.names})
        n = theta.size
        H = np.empty((n, n))
        i = 0
        for a, sa in zip(flat.names, flat.shapes):
            na = math.prod(sa)
            j = 0
            for b, sb in zip(flat.names, flat.shapes):
                nb = math.prod(sb)
                H[i : i + na, j : j + nb] = backend.to_numpy(r.hessian[a][b].data).reshape(na, nb)
                j += nb
            i += na
    else:
        ev = evaluate(flat.program, env, requires_grad=flat.names, check_domain=False)
        value = backend.to_numpy(ev.output.data)
        if value.size != 1:
            raise _non_scalar(what, value.shape)
        leaves = [ev.leaves[n] for n in flat.names]
        gs = (
            engine_grad(ev.output.sum(), leaves, allow_unused=True)
            if ev.output.requires_grad
            else []
        )
        g = flat.flatten(
            {
                n: np.zeros(s) if gi is None else backend.to_numpy(gi.data)
                for n, s, gi in zip(flat.names, flat.shapes, list(gs) or [None] * len(leaves))
            }
        )
        H = None
    return float(value.reshape(())), g, H


# ---------------------------------------------------------------------------
# minimize
# ---------------------------------------------------------------------------


def minimize(
    program: Program,
    values: Mapping,
    wrt=None,
    *,
    method: str = "newton",
    gtol: float = 1e-10,
    xtol: float = 1e-12,
    max_iter: int | None = None,
    bounds: Mapping | None = None,
    trace: bool = True,
) -> OptimizeResult:
    """A local minimum of a scalar ``program`` from the start point ``values``.

    >>> from autograd_cli.grammar import parse
    >>> r = minimize(parse("(1-x)**2 + 100*(y-x**2)**2"), {"x": -1.2, "y": 1})
    >>> r.converged, round(r.x["x"], 10), round(r.x["y"], 10)
    (True, 1.0, 1.0)
    """
    _settings(max_iter, gtol=gtol, xtol=xtol)
    if method not in METHODS:
        raise InputError.naming(
            "{method} must be one of {methods}, not {name!r}",
            {"methods": ", ".join(METHODS), "name": method},
        )
    flat = _variables(program, values, wrt)
    box = _bounds(flat, bounds)
    np = backend.host
    max_iter = max_iter or MAX_ITER[method]
    theta = _project(flat.theta0.copy(), box)
    f, g, H = _scalar_value_grad_hess(flat, theta, method == "newton")
    n = theta.size
    B = np.eye(n) if method == "bfgs" else None  # bfgs: the inverse-Hessian estimate
    rows, record = _recorder(trace, _trace_row)
    record(0, flat, theta, f, g)
    converged, message = False, ""
    it = 0
    for it in range(1, max_iter + 1):
        pg = _projected_gradient(theta, g, box)
        stop = _stop_here(f, g, pg, gtol)
        if stop is not None:
            converged, message = stop
            it -= 1
            break
        step, B = _direction(method, H, g, B)
        theta_new, f_new = _line_search(flat, theta, f, g, step, box)
        if theta_new is None:
            converged, message = _no_lower_value(pg, gtol)
            it -= 1
            break
        f_old, g_old, theta_old = f, g, theta
        theta = theta_new
        f, g, H = _scalar_value_grad_hess(flat, theta, method == "newton")
        record(it, flat, theta, f, g)
        if method == "bfgs":
            B = _bfgs_update(B, theta - theta_old, g - g_old)
        if _negligible(theta, theta_old, f, f_old, xtol):
            pg = _projected_gradient(theta, g, box)
            converged = bool(np.max(np.abs(pg), initial=0.0) <= math.sqrt(gtol))
            message = "the steps became negligible" + ("" if converged else " (gradient not zero)")
            break
    else:
        message = _no_convergence(max_iter)
    if converged:
        why = _not_a_minimum(flat, theta, f, g, H, box, gtol)
        if why is not None:
            converged, message = False, f"{NOT_A_MINIMUM}: {why}"
    return OptimizeResult(
        x=flat.split(theta),
        value=f,
        grad=flat.split(g),
        iterations=it,
        converged=converged,
        method=method,
        message=message,
        trace=rows,
    )


def _no_lower_value(pg, gtol) -> tuple[bool, str]:
    """(converged, message) where the line search finds no lower value: converged to
    rounding where the projected gradient ``pg`` is below sqrt(gtol)."""
    converged = bool(backend.host.max(backend.host.abs(pg), initial=0.0) <= math.sqrt(gtol))
    if converged:
        return True, "no step lowers the value further (converged to rounding)"
    return False, "the line search found no lower value: stopped"


def _stop_here(f, g, pg, gtol) -> tuple[bool, str] | None:
    """(converged, message) where the iteration stops before taking a step: the value or
    gradient not finite, or the projected gradient ``pg`` zero to ``gtol``; else None."""
    np = backend.host
    if not math.isfinite(f) or not np.isfinite(g).all():
        return False, "the value or gradient is not finite here: no descent direction"
    if np.max(np.abs(pg), initial=0.0) <= gtol:
        if np.max(np.abs(g), initial=0.0) > gtol:  # a bound holds what the gradient pushes
            return True, Spelled(
                "the gradient is zero (to {gtol}) in every direction the bounds allow"
            )
        return True, Spelled("the gradient is zero (to {gtol})")
    return None


def _direction(method: str, H, g, B):
    """The step direction of ``method`` and bfgs's inverse-Hessian estimate ``B`` (restarted
    where its direction does not descend)."""
    np = backend.host
    if method == "newton":
        return _newton_direction(H, g), B
    if method == "bfgs":
        step = -B @ g
        if g @ step >= 0:  # not a descent direction: restart the estimate
            return -g, np.eye(g.size)
        return step, B
    return -g, B


def _bfgs_update(B, s, y):
    """BFGS's inverse-Hessian estimate after the step ``s`` that changed the gradient by
    ``y`` (kept as it was where the curvature ``s @ y`` is not safely positive)."""
    np = backend.host
    sy = float(s @ y)
    if sy > 1e-12 * float(np.linalg.norm(s) * np.linalg.norm(y)):
        rho = 1.0 / sy
        V = np.eye(s.size) - rho * np.outer(s, y)
        return V @ B @ V.T + rho * np.outer(s, s)
    return B


def _negligible(theta, theta_old, f, f_old, xtol) -> bool:
    """Whether the last step moved the point by ``xtol`` (relative) or less and the value
    by rounding only."""
    np = backend.host
    return bool(
        np.max(np.abs(theta - theta_old), initial=0.0)
        <= xtol * (1 + np.max(np.abs(theta), initial=0.0))
        and abs(f - f_old) <= 1e-15 * (1 + abs(f))
    )


#: the directions of least curvature along which a stationary point's third derivative is
#: taken (:func:`_kind`)
FLATTEST = 8

#: bfgs and gd check the second-order condition (with the Hessian computed once, at the end)
#: for this many varied entries at most
SECOND_ORDER_MAX = 1000


def _not_a_minimum(flat, theta, f, g, H, box, gtol) -> str | None:
    """Why the point minimize converged to is not a minimum, or None.

    The second-order condition with the exact Hessian over the entries not held at a bound,
    classified as critical classifies (:func:`_kind`).  Where the Hessian cannot decide (a
    zero eigenvalue, or one not resolved this close to a degenerate point: Newton's method
    ends at x = 4e-6 on x**3 and at 2e-4 on x**4), the value decides, a step away along
    each such direction a hundred times the estimated distance to the stationary point: lower
    there is an inflection (x**3), never lower a flat minimum (x**4, a valley of minima).
    """
    np = backend.host
    free = np.ones(theta.shape, bool) if box is None else (theta > box[0]) & (theta < box[1])
    if not free.any():
        return None
    if H is None or not isinstance(H, np.ndarray):  # none, or sparse (many variables)
        if free.sum() > SECOND_ORDER_MAX:
            return None
        if H is None:
            _, _, H = _scalar_value_grad_hess(flat, theta, True)
        if not isinstance(H, np.ndarray):
            H = H.toarray()
    s = _kind(flat, theta, g, H, free, gtol)
    if s.kind == "saddle":
        return "the gradient is zero here, but the Hessian has eigenvalues of both signs (a saddle)"
    if s.kind == "maximum":
        return "the gradient is zero here, but the Hessian is negative definite (a maximum)"
    if s.kind == "degenerate" and (s.eigenvalues < -s.zero).any():
        return "the gradient is zero here, but the Hessian has a negative eigenvalue"
    for k in np.flatnonzero(s.unsure).tolist():
        v = s.direction(k)
        step = max(100 * s.distance(k), 1e-6 * (1 + float(np.max(np.abs(theta)))))
        noise = _rounding_noise(flat, theta, f, step / 1024 * v, box)
        falls = 0
        for sign in (1.0, -1.0):
            there = _value(flat, _project(theta + sign * step * v, box))
            slack = (
                step * s.slope[k]
                + 64 * np.finfo(backend.default_dtype).eps * (abs(f) + abs(there))
                + 4 * noise
            )
            # falling, and further on falling more: an inflection (x**3: -s**3, then -8 s**3),
            # not the rounding of a valley's floor (a fall of 1e-32 to an exact 0, then 0)
            if there < f - slack and (
                _value(flat, _project(theta + 2 * sign * step * v, box)) < there - slack
            ):
                falls += 1
        if falls:
            return "the gradient is zero here, but the Hessian is singular along a direction " + (
                "in which the value falls both ways (a flat maximum, as -x**4 at 0)"
                if falls == 2
                else "in which the value still falls (an inflection, as x**3 at 0)"
            )
    return None


def _rounding_noise(flat, theta, f, hop, box) -> float:
    """How far rounding alone moves the value near ``theta``: the spread of f at 16 points
    ``hop`` (a thousandth of the probe's step) apart, where the value's own change is a
    billionth of the probe's (no slope or curvature along it).  A sum's terms can be much
    larger than f: (x+1)**2 - x**2 - 2*x is 1, but wanders by 1e-12 near x = 753, which the
    probes of :func:`_not_a_minimum` must not take for a fall."""
    values = [f] + [_value(flat, _project(theta + j * hop, box)) for j in range(-8, 9) if j]
    finite = [v for v in values if math.isfinite(v)]
    return max(finite) - min(finite) if finite else 0.0


@dataclass(frozen=True)
class _SecondOrder:
    """A stationary point seen through its exact Hessian (over the entries ``free``)."""

    kind: str  # critical's: minimum, maximum, saddle, degenerate
    eigenvalues: Any  # ascending (host array)
    vectors: Any  # the eigenvectors, columns over the free entries
    third: Any  # D³f(v, v, v) along each eigenvector v
    slope: Any  # |g·v| along each
    unsure: Any  # the directions whose curvature does not decide the kind
    zero: float  # classify's zero
    free: Any
    size: int

    def direction(self, k: int):
        v = backend.host.zeros(self.size)
        v[self.free] = self.vectors[:, k]
        return v

    def distance(self, k: int) -> float:
        """About how far the stationary point is along eigenvector k: the Newton step
        |g·v|/λ, divided by 1 - r where r = |g·v| |D³f| / λ² is (n-2)/(n-1) on x**n."""
        lam, slope = float(self.eigenvalues[k]), float(self.slope[k])
        if lam <= 0 or slope == 0:
            return 0.0
        r = slope * abs(float(self.third[k])) / lam**2
        # r >= 0.9, or nan (a third derivative the engine could not take: inf - inf), gives
        # the widest distance, as the curvature then decides nothing
        return slope / lam / (1 - r if r < 0.9 else 0.1)


def _kind(flat, theta, g, H, free, gtol) -> _SecondOrder:
    """critical's classification of the point from the exact Hessian over the entries
    ``free``, and the directions the curvature cannot decide: zero to :func:`classify`'s
    tolerance, or not resolved.  An eigenvalue λ along v is resolved when the distance to
    the stationary point, |g·v|/λ, is small beside the distance over which the curvature
    changes, λ/|D³f(v,v,v)|.  Near a degenerate point it is not: on f = x**n (n >= 3) the
    ratio is (n-2)/(n-1) wherever Newton's method stops, so its last iterate on x**3 has a
    positive curvature and yet is no minimum.  An unsure direction makes the kind
    degenerate (a saddle stays a saddle).  The third derivatives (one reverse sweep
    through a twice-differentiated graph each) are taken along the :data:`FLATTEST`
    directions of least curvature, where a degenerate point shows.
    """
    np = backend.host
    Hf = H[np.ix_(free, free)]
    zero = _zero_below([], atol=math.sqrt(gtol))
    if not np.isfinite(Hf).all():
        none = np.zeros(0)
        return _SecondOrder("degenerate", none, none, none, none, none, zero, free, theta.size)
    eig, vectors = np.linalg.eigh((Hf + Hf.T) / 2)
    kind = classify(eig.tolist(), atol=math.sqrt(gtol))
    zero = _zero_below(eig.tolist(), atol=math.sqrt(gtol))
    s = _SecondOrder(
        kind,
        eig,
        vectors,
        np.zeros(eig.size),
        np.zeros(eig.size),
        np.abs(eig) <= zero,
        zero,
        free,
        theta.size,
    )
    s.slope[:] = np.abs(vectors.T @ g[free])
    for k in np.argsort(np.abs(eig))[:FLATTEST]:
        if s.slope[k] == 0:  # at the stationary point along v: the curvature is its own
            continue
        s.third[k] = _third_derivative(flat, theta, s.direction(k))
        # resolved only where known to be: a nan third derivative leaves it unsure
        s.unsure[k] |= not abs(s.third[k]) * s.slope[k] < 0.1 * eig[k] ** 2
    if s.unsure.any() and kind != "saddle":
        s = replace(s, kind="degenerate")
    return s


def _third_derivative(flat: _Flat, theta, v) -> float:
    """D³f(θ)(v, v, v), the third derivative along v: three exact reverse sweeps."""
    with enable_grad():
        ev = evaluate(flat.program, flat.env(theta), requires_grad=flat.names, check_domain=False)
        xs = [ev.leaves[n] for n in flat.names]
        vs = [Tensor(flat.env(v)[n], dtype=x.data.dtype) for n, x in zip(flat.names, xs)]
        s = ev.output.sum()
        for _ in range(3):
            if not s.requires_grad:
                return 0.0
            gs = engine_grad(s, xs, create_graph=True, allow_unused=True)
            terms = [(gi * vi).sum() for gi, vi in zip(gs, vs) if gi is not None]
            if not terms:
                return 0.0
            s = sum(terms[1:], terms[0])
        return float(backend.to_numpy(s.data))


def _projected_gradient(theta, g, box):
    if box is None:
        return g
    lo, hi = box
    pg = g.copy()
    pg[(theta <= lo) & (g > 0)] = 0.0
    pg[(theta >= hi) & (g < 0)] = 0.0
    return pg


def _newton_direction(H, g):
    """The Newton step where H is positive definite, else the steepest-descent step."""
    np = backend.host
    if not isinstance(H, np.ndarray):  # a sparse Hessian: a sparse solve, damped if needed
        return _sparse_newton_direction(H, g)
    try:
        L = np.linalg.cholesky(H)
    except np.linalg.LinAlgError:
        return -g
    y = np.linalg.solve(L, -g)
    step = np.linalg.solve(L.T, y)
    return step if np.isfinite(step).all() else -g


def _sparse_newton_direction(H, g):
    """The Newton step of a sparse Hessian (SciPy's sparse LU), shifted toward steepest
    descent (H + t I, t growing to the largest |diagonal entry|, the Hessian's own scale)
    until it descends; -g when nothing does."""
    import scipy.sparse as sp  # noqa: PLC0415
    from scipy.sparse.linalg import MatrixRankWarning, spsolve  # noqa: PLC0415

    np = backend.host
    scale = float(np.max(np.abs(H.diagonal()), initial=1.0)) or 1.0
    for shift in (0.0, 1e-8, 1e-4, 1e-2, 1.0):
        M = H if shift == 0 else H + shift * scale * sp.identity(H.shape[0], format="csr")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MatrixRankWarning)
            step = spsolve(M.tocsc(), -g)
        if np.isfinite(step).all() and g @ step < 0:
            return step
    return -g


def _line_search(flat, theta, f, g, step, box, c1=1e-4, shrink=0.5, tries=60):
    """Backtracking (Armijo) from the full step; None when nothing lowers the value.

    A step whose value is not below ``f`` passes the test only where rounding hides the
    change (1e20 + x**2 near 0); there the change is estimated from the gradients at both
    ends (the trapezoid rule, exact for a quadratic), so that a step past a minimum the
    value cannot see is refused: gd went from 1 to -1 and back for ever on 1e20 + x**2."""
    t = 1.0
    for _ in range(tries):
        trial = _project(theta + t * step, box)
        if (trial == theta).all():
            return None, None
        f_trial = _value(flat, trial)
        descent = c1 * float(g @ (trial - theta))
        if math.isfinite(f_trial) and f_trial <= f + descent:
            if f_trial < f or _hidden_descent(flat, theta, g, trial, descent):
                return trial, f_trial
        t *= shrink
    return None, None


def _hidden_descent(flat, theta, g, trial, descent) -> bool:
    """Whether the gradients at ``theta`` (``g``) and ``trial`` say the value falls by
    ``descent`` or more (a negative number) from one to the other."""
    np = backend.host
    g_trial = _scalar_value_grad_hess(flat, trial, False)[1]
    return (
        bool(np.isfinite(g_trial).all()) and 0.5 * float((g + g_trial) @ (trial - theta)) <= descent
    )


def _halving(theta, step, accept, tries=60):
    """Damped Newton's step: the first of theta + step, theta + step/2, ... that ``accept``
    takes (it returns what it computed there, or None); (None, None) when none is."""
    t = 1.0
    for _ in range(tries):
        trial = theta + t * step
        state = accept(trial)
        if state is not None:
            return trial, state
        t *= 0.5
    return None, None


@dataclass
class _Root:
    """What solve and critical drive to zero by Newton's method (the residual F, the gradient
    g), as the one loop :func:`_newton` asks for it.  A state is what one point costs (F and
    J; f, g and H)."""

    size: Callable[[Any], float]  # a state's size to bring to zero (not finite: stop)
    close: Callable[[Any, float], bool]  # (theta, size): zero to the tolerance
    step: Callable[[Any], Any]  # the Newton step from a state
    trial: Callable[[Any, float], Any]  # (point, size): the state there if smaller, else None
    record: Callable[[int, Any, Any], None]  # (iteration, theta, state): the trace row
    words: tuple[str, str, str]  # the messages: not finite, converged, no smaller point


def _settings(max_iter: int | None, **tolerances: float) -> None:
    """Refuse a tolerance that is not a finite number above 0 and a ``max_iter`` out of 0
    (the start point only) to MAX_ITER, in the library's names."""
    check_max_iter(max_iter, low=0)
    for name, x in tolerances.items():
        check_positive(x, parameter=name)


def _no_convergence(max_iter: int) -> Spelled:
    return Spelled("no convergence in {n} iterations ({max_iter})", {"n": max_iter})


def _newton(root: _Root, theta, state, max_iter: int):
    """Newton's method with step halving: (theta, state, converged, message, iterations)."""
    not_finite, zero, stalled = root.words
    for it in range(1, max_iter + 1):
        size = root.size(state)
        if not math.isfinite(size):
            return theta, state, False, not_finite, it - 1
        if root.close(theta, size):
            return theta, state, True, zero, it - 1
        trial, found = _halving(theta, root.step(state), lambda t, size=size: root.trial(t, size))
        if trial is None:
            return theta, state, False, stalled, it - 1
        theta, state = trial, found
        root.record(it, theta, state)
    return theta, state, False, _no_convergence(max_iter), max_iter


def _value(flat: _Flat, theta) -> float:
    with no_grad():
        out = evaluate(flat.program, flat.env(theta), check_domain=False).output
    return float(backend.to_numpy(out.data).reshape(()))


def _recorder(keep: bool, row):
    """(rows, record): ``record(*args)`` appends ``row(*args)`` to ``rows`` where ``keep``
    (``trace=True``), else does nothing: every iterate's x kept at 10^5 variables and
    thousands of iterations would grow by gigabytes."""
    rows: list = []
    if not keep:
        return rows, lambda *args: None
    return rows, lambda *args: rows.append(row(*args))


def _trace_row(it, flat, theta, f, g) -> dict:
    np = backend.host
    return {
        "iteration": it,
        "x": flat.split(theta),
        "value": f,
        "grad_norm": float(np.max(np.abs(g), initial=0.0)),
    }


# ---------------------------------------------------------------------------
# solve
# ---------------------------------------------------------------------------


def equations(program: Program) -> list[Expr]:
    """The equations of a program: every statement that is not a ``name = expr`` binding,
    and the last statement (the output) in any case."""
    eqs = [e for name, e in program.statements if name is None]
    if not eqs or eqs[-1] is not program.output:
        eqs.append(program.output)
    return eqs


def solve(
    program: Program,
    values: Mapping,
    wrt=None,
    *,
    tol: float = 1e-12,
    max_iter: int = 100,
    trace: bool = True,
) -> OptimizeResult:
    """A root of F(θ) = 0: one equation, or a system (one per statement), by Newton's method.

    >>> from autograd_cli.grammar import parse
    >>> r = solve(parse("x**2 + y**2 - 4; x - y"), {"x": 1, "y": 0})
    >>> r.converged, round(r.x["x"], 12), round(r.x["y"], 12)
    (True, 1.414213562373, 1.414213562373)
    """
    _settings(max_iter, tol=tol)
    flat = _variables(program, values, wrt)
    np = backend.host
    system = Program(program.source, _stacked(equations(program)), [], {}, list(program.inputs))
    theta = flat.theta0.copy()
    F, J = _residual_jacobian(system, flat, theta)
    rows, record = _recorder(trace, _solve_row)
    record(0, flat, theta, F)

    def smaller(trial, norm):
        F_trial = _residual(system, flat, trial)
        if np.isfinite(F_trial).all() and np.linalg.norm(F_trial) < norm:
            return _residual_jacobian(system, flat, trial)
        return None

    root = _Root(
        size=lambda state: float(np.linalg.norm(state[0])),
        close=lambda theta, norm: (
            norm <= tol * (1 + float(np.max(np.abs(theta), initial=0.0))) or norm == 0
        ),
        step=lambda state: _least_squares_step(state[1], state[0]),
        trial=smaller,
        record=lambda it, theta, state: record(it, flat, theta, state[0]),
        words=(
            "the equations are not finite here",
            Spelled("the residual is zero (to {tol})"),
            "no step reduces the residual: stopped (no root nearby?)",
        ),
    )
    theta, (F, J), converged, message, it = _newton(root, theta, (F, J), max_iter)
    if not isinstance(J, np.ndarray) and J.shape[0] * J.shape[1] <= DENSE_JACOBIAN_MAX:
        J = J.toarray()  # SPEC's dense grad where it fits, as without the sparse steps
    grad = (
        {
            name: _plain(col)
            for name, col in zip(flat.names, _columns(J, flat, F.shape, program_shape(F)))
        }
        if isinstance(J, np.ndarray)
        else _sparse_columns(J, flat)  # SPEC's sparse form: the dense one would not fit
    )
    return OptimizeResult(
        x=flat.split(theta),
        value=_plain(F.reshape(program_shape(F))),
        grad=grad,
        iterations=it,
        converged=converged,
        method="newton",
        message=message,
        residual=float(np.linalg.norm(F)),
        trace=rows,
    )


def program_shape(F) -> tuple:
    return () if F.size == 1 else (F.size,)


def _columns(J, flat: _Flat, fshape, out_shape):
    """The Jacobian's columns grouped by variable, each shaped output + variable."""
    i = 0
    for shape in flat.shapes:
        n = math.prod(shape)
        yield J[:, i : i + n].reshape(tuple(out_shape) + tuple(shape))
        i += n


def _sparse_columns(J, flat: _Flat) -> dict:
    """A sparse Jacobian's columns by variable, each as SPEC's COO document."""
    out, i = {}, 0
    for name, shape in zip(flat.names, flat.shapes):
        n = math.prod(shape)
        block = J[:, i : i + n].tocoo()
        order = backend.host.lexsort((block.col, block.row))
        out[name] = {
            "shape": [int(J.shape[0]), n],
            "rows": block.row[order].tolist(),
            "cols": block.col[order].tolist(),
            "values": block.data[order].tolist(),
        }
        i += n
    return out


def _stacked(eqs: list[Expr]) -> Expr:
    """One output holding every equation's residual: a single equation as it is (a scalar or
    a vector equation), several (each a scalar) stacked into a vector."""
    if len(eqs) == 1:
        return eqs[0]
    return Expr("stack", tuple(eqs))


def _residual(system: Program, flat: _Flat, theta):
    with no_grad():
        out = evaluate(system, flat.env(theta), check_domain=False).output
    return backend.to_numpy(out.data).astype(float).ravel()


def _residual_jacobian(system: Program, flat: _Flat, theta):
    if _sparse_newton(theta.size):  # many unknowns: the sparse Jacobian (issue 28)
        return _sparse_residual_jacobian(system, flat, theta)
    r = program_jacobian(system, flat.env(theta), wrt=flat.names)
    F = backend.to_numpy(r.value.data).astype(float).ravel()
    J = backend.host.concatenate(
        [backend.to_numpy(r.jacobian[n].data).reshape(F.size, -1) for n in flat.names], axis=1
    )
    return F, J


def _sparse_residual_jacobian(system: Program, flat: _Flat, theta):
    """The residual and its Jacobian as SciPy CSR (the pattern, colored forward sweeps)."""
    from .sparsity import sparse_jacobian  # noqa: PLC0415

    value, _, _, J = sparse_jacobian(system, flat.env(theta), flat.names, memo=flat.coloring)
    return backend.host.asarray(value).astype(float).ravel(), J


def _least_squares_step(J, F):
    """The Gauss-Newton step: J's solve where it is square (sparse LU for a sparse J), else
    least squares (LSQR for a sparse J)."""
    np = backend.host
    if isinstance(J, np.ndarray):
        step, *_ = np.linalg.lstsq(J, -F, rcond=None)
        return step
    from scipy.sparse.linalg import MatrixRankWarning, lsqr, spsolve  # noqa: PLC0415

    if J.shape[0] == J.shape[1]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MatrixRankWarning)
            step = spsolve(J.tocsc(), -F)
        if np.isfinite(step).all():
            return step
    return lsqr(J, -F, atol=1e-14, btol=1e-14)[0]


def _solve_row(it, flat, theta, F) -> dict:
    np = backend.host
    return {"iteration": it, "x": flat.split(theta), "residual": float(np.linalg.norm(F))}


# ---------------------------------------------------------------------------
# critical
# ---------------------------------------------------------------------------


def critical(
    program: Program,
    values: Mapping,
    wrt=None,
    *,
    gtol: float = 1e-10,
    max_iter: int = 100,
    trace: bool = True,
) -> OptimizeResult:
    """A stationary point (∇f = 0) near the start, by Newton's method, and its kind.

    >>> from autograd_cli.grammar import parse
    >>> r = critical(parse("x**2 - y**2"), {"x": 0.3, "y": -0.2})
    >>> r.kind, r.x
    ('saddle', {'x': 0.0, 'y': 0.0})
    """
    _settings(max_iter, gtol=gtol)
    flat = _variables(program, values, wrt)
    np = backend.host
    theta = flat.theta0.copy()
    f, g, H = _scalar_value_grad_hess(flat, theta, True, "critical")
    rows, record = _recorder(trace, _trace_row)
    record(0, flat, theta, f, g)

    def flatter(trial, gnorm):
        f_t, g_t, H_t = _scalar_value_grad_hess(flat, trial, True, "critical")
        ok = np.isfinite(g_t).all() and float(np.max(np.abs(g_t), initial=0.0)) < gnorm
        return (f_t, g_t, H_t) if ok else None

    def gradient_size(state) -> float:
        f, g, H = state
        if not (math.isfinite(f) and np.isfinite(g).all() and np.isfinite(H).all()):
            return math.nan
        return float(np.max(np.abs(g), initial=0.0))

    root = _Root(
        size=gradient_size,
        close=lambda theta, gnorm: gnorm <= gtol,
        step=lambda state: np.linalg.lstsq(state[2], -state[1], rcond=None)[0],
        trial=flatter,
        record=lambda it, theta, state: record(it, flat, theta, state[0], state[1]),
        words=(
            "the value or its derivatives are not finite here",
            Spelled("the gradient is zero (to {gtol})"),
            "no step makes the gradient smaller: stopped",
        ),
    )
    theta, (f, g, H), converged, message, it = _newton(root, theta, (f, g, H), max_iter)
    second = _kind(flat, theta, g, H, np.ones(theta.shape, bool), gtol)
    return OptimizeResult(
        x=flat.split(theta),
        value=f,
        grad=flat.split(g),
        iterations=it,
        converged=converged,
        method="newton",
        message=message,
        kind=second.kind,
        eigenvalues=[float(v) for v in second.eigenvalues],
        trace=rows,
    )


def classify(eigenvalues: Sequence[float], rtol: float = 1e-8, atol: float = 1e-5) -> str:
    """minimum (all > 0), maximum (all < 0), saddle (both signs), degenerate (a zero, or a
    nan: a curvature not known).

    An eigenvalue counts as zero at or below ``atol`` or ``rtol`` times the largest finite one:
    Newton's method stops where the gradient is below --gtol, which on a flat function (x**4)
    is still a little way from the point, where the curvature is not yet exactly zero.
    """
    if len(eigenvalues) == 0 or any(math.isnan(v) for v in eigenvalues):
        return "degenerate"
    tiny = _zero_below(eigenvalues, rtol, atol)
    if any(abs(v) <= tiny for v in eigenvalues):
        return "degenerate"
    if all(v > 0 for v in eigenvalues):
        return "minimum"
    if all(v < 0 for v in eigenvalues):
        return "maximum"
    return "saddle"


def _zero_below(eigenvalues: Sequence[float], rtol: float = 1e-8, atol: float = 1e-5) -> float:
    """The size below which :func:`classify` counts an eigenvalue as zero."""
    scale = max((abs(float(v)) for v in eigenvalues if math.isfinite(v)), default=0.0)
    return max(rtol * scale, atol)  # nan or inf set no scale (rtol * inf would be all)
