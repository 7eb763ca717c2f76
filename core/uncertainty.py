"""Propagation of measurement uncertainty with exact derivatives (GUM, JCGM 100 and 101).

For y = f(x) with input estimates x and their covariance Σ (standard
uncertainties on the diagonal, correlations off it):

* first order (the law of propagation of uncertainty): u²(y) = cᵀ Σ c with the
  sensitivity coefficients c = ∇f(x), exact from the engine;
* the budget: each input's sensitivity, its contribution |c_i| u(x_i) and its
  share (c_i u(x_i))² / u²(y) in percent (shares add up to 100 when the inputs
  are uncorrelated);
* the second-order term ½ tr(HΣHΣ) with the exact Hessian H: the variance the
  quadratic part of f adds for Gaussian inputs (GUM 5.1.2's note), reported
  beside u(y) so that a non-linear model shows itself;
* ``mc=N``: a Monte Carlo check (JCGM 101): N draws from the multivariate normal
  N(x, Σ), evaluated vectorised, their mean, standard deviation and the
  probabilistically symmetric 95 % coverage interval.

Inputs without an uncertainty are exact constants.  Vector inputs take a vector
of standard uncertainties or a covariance matrix.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from . import backend
from .errors import BadValueError, InputError, LimitError, NonScalarOutputError, Spelled
from .program import Program, check_values, missing_value
from .program_functional import program_hessian
from .recording import evaluate
from .tensor import no_grad

__all__ = ["PropagateResult", "propagate", "MAX_MC"]

MAX_MC = 10_000_000  # Monte Carlo draws at most
_MC_CHUNK = 100_000


@dataclass(frozen=True)
class PropagateResult:
    value: float
    uncertainty: float  # the combined standard uncertainty u(y), first order
    budget: dict  # name -> {"value", "uncertainty", "sensitivity", "contribution", "share"}
    second_order: float  # the second-order variance term ½ tr(HΣHΣ)
    mc: dict | None = None  # {"mean", "std", "interval", "draws"}
    warnings: list = field(default_factory=list)


def propagate(
    program: Program,
    values: Mapping,
    uncertainties: Mapping,
    *,
    correlations: Mapping | None = None,
    mc: int | None = None,
    seed: int | None = None,
) -> PropagateResult:
    """Value and standard uncertainty of a scalar ``program`` at ``values``.

    ``uncertainties``: name -> standard uncertainty (a number; for a vector input a
    vector of them, or its covariance matrix); ``correlations``: (a, b) -> r for
    two scalar inputs.

    >>> from autograd_cli.grammar import parse
    >>> r = propagate(parse("g*t**2/2"), {"g": 9.81, "t": 1.5}, {"g": 0.02, "t": 0.01})
    >>> round(r.value, 6), round(r.uncertainty, 6), round(r.budget["t"]["share"], 2)
    (11.03625, 0.14886, 97.72)
    """
    np = backend.host
    names = _names(program, values, uncertainties)
    # an uncertainty past 1e154 has an infinite variance: IEEE inf and nan, and a warning,
    # not NumPy's RuntimeWarnings
    with np.errstate(over="ignore", invalid="ignore"):
        shapes, means, cov = _covariance(names, values, uncertainties, correlations)
    theta = np.concatenate(means)
    value, grad, hess, warnings = _derivatives(program, values, names, shapes)
    c = np.concatenate([g.ravel() for g in grad])
    with np.errstate(over="ignore", invalid="ignore"):
        var1 = float(c @ cov @ c)
        HS = hess @ cov
        var2 = 0.5 * float(np.trace(HS @ HS))
        budget = _budget(names, shapes, means, c, cov, var1)
    u = math.sqrt(max(var1, 0.0))
    if not np.isfinite(cov).all():
        warnings.append(
            "a variance overflows the float range (an uncertainty above 1.3e154): the "
            "combined uncertainty is inf, and the terms that multiply it by 0 are nan"
        )
    if correlations and any(r != 0 for r in correlations.values()):
        warnings.append(
            "the inputs are correlated: the shares leave out the correlation terms, so they "
            "need not add up to 100 %"
        )
    if var1 > 0 and var2 > 0.01 * var1:
        warnings.append(
            Spelled(
                "the second-order term is {share:.3g} % of the first-order variance: the model "
                "is not linear over the inputs' uncertainty (compare with {mc})",
                {"share": 100 * var2 / var1},
            )
        )
    result_mc = None
    if mc:
        result_mc = _monte_carlo(
            program, values, names, shapes, theta, cov, int(mc), seed, warnings
        )
    return PropagateResult(value, u, budget, var2, result_mc, warnings)


def _names(program: Program, values: Mapping, uncertainties: Mapping) -> list[str]:
    """The inputs with an uncertainty, in the program's order (each one a variable)."""
    check_values(program, values)
    names = [n for n in program.inputs if n in uncertainties]
    unknown = sorted(set(uncertainties) - set(program.inputs))
    if unknown:
        raise InputError(
            f"an uncertainty is given for {unknown[0]!r}, which is not a variable",
            variable=unknown[0],
        )
    if not names:  # in words that fit a command line (--t 1.5+-0.01) and a batch line's vars
        example = next(iter(program.inputs), "x")
        raise InputError(
            "no input has an uncertainty: give one with its value as VALUE+-U (or VALUE±U), "
            f"for example 1.5+-0.01 for {example}"
        )
    return names


def _covariance(names: list[str], values: Mapping, uncertainties: Mapping, correlations):
    """Each input's shape and flattened value, and the covariance of all of them together
    (each input's block on the diagonal, the correlations off it), checked positive
    semidefinite."""
    np = backend.host
    shapes, means, blocks = [], [], []
    for name in names:
        if name not in values:
            raise missing_value(name)
        x = np.asarray(values[name], dtype=float)
        shapes.append(x.shape)
        means.append(x.ravel())
        blocks.append(_covariance_block(name, x, uncertainties[name]))
    sizes = [m.size for m in means]
    offsets = np.cumsum([0] + sizes)
    if offsets[-1] == 0:
        raise InputError("the inputs with an uncertainty are empty arrays: nothing to propagate")
    cov = np.zeros((offsets[-1], offsets[-1]))
    for i, block in enumerate(blocks):
        cov[offsets[i] : offsets[i + 1], offsets[i] : offsets[i + 1]] = block
    for (a, b), r in (correlations or {}).items():
        for name in (a, b):
            if name not in names:
                raise InputError.naming(
                    "{corr} names {name!r}, which has no uncertainty", {"name": name}, variable=name
                )
        i, j = names.index(a), names.index(b)
        if sizes[i] != 1 or sizes[j] != 1:
            raise InputError.naming(
                "{corr} relates two scalar inputs; give vectors a covariance matrix"
            )
        if not -1 <= r <= 1 or i == j:
            raise InputError(f"a correlation must be between -1 and 1 (of two inputs), not {r}")
        # r = 0 is no covariance at all, even beside a variance that overflowed (0 * inf)
        # u_i u_j r, each u its own square root: u_i**2 * u_j**2 overflows from u = 1e77
        c = r * math.sqrt(cov[offsets[i], offsets[i]]) * math.sqrt(cov[offsets[j], offsets[j]])
        c = c if r else 0.0
        cov[offsets[i], offsets[j]] = cov[offsets[j], offsets[i]] = c
    # an infinite variance (an uncertainty past 1e154) has no eigenvalues to check: the
    # propagated uncertainty is then infinite, as without correlations
    # The check is relative to the covariance's own size (eigvalsh's rounding is eps times
    # its largest entry): uncertainties of 1e-9 are no closer to semidefinite than ones of 1,
    # and the matrix is scaled to 1 first so that 1e-300 entries do not underflow in LAPACK.
    scale = float(np.abs(cov).max())
    if scale > 0 and math.isfinite(scale) and np.linalg.eigvalsh(cov / scale).min() < -1e-12:
        raise InputError(
            "the covariance (uncertainties and correlations) is not positive semidefinite"
        )
    return shapes, means, cov


def _budget(names: list[str], shapes: list, means: list, c, cov, var1: float) -> dict:
    """Each input's line of the budget: its value, uncertainty, sensitivity, contribution
    and share of the first-order variance ``var1``."""
    np = backend.host
    budget = {}
    offsets = np.cumsum([0] + [m.size for m in means])
    for i, name in enumerate(names):
        sl = slice(offsets[i], offsets[i + 1])
        ci, block = c[sl], cov[sl, sl]
        part = float(ci @ block @ ci)
        unc = np.sqrt(np.diag(block)).reshape(shapes[i])
        budget[name] = {
            "value": _plain(means[i].reshape(shapes[i])),
            "uncertainty": _plain(unc),
            "sensitivity": _plain(ci.reshape(shapes[i])),
            "contribution": math.sqrt(max(part, 0.0)),
            # no variance: no share; a nan variance (a nan sensitivity): no share is known
            "share": 100.0 * part / var1 if var1 > 0 else math.nan if math.isnan(var1) else 0.0,
        }
    return budget


def _covariance_block(name: str, x, u):
    np = backend.host
    try:
        u = np.asarray(u, dtype=float)
    except (ValueError, TypeError, OverflowError):  # ragged, not numbers, an int past 1e308
        raise BadValueError(
            f"the uncertainty of {name!r} is not a number or a rectangular array of numbers",
            variable=name,
        ) from None
    n = x.size
    if not np.isfinite(u).all():
        raise InputError(f"the uncertainty of {name!r} must be finite", variable=name)
    if u.shape == (n, n) and (n > 1 or x.ndim == 0) and u.ndim == 2:
        if not np.allclose(u, u.T):
            raise InputError(f"the covariance matrix of {name!r} is not symmetric", variable=name)
        return u
    if u.ndim == 0:
        u = np.full(n, float(u))
    if u.size != n:
        raise InputError(
            f"the uncertainty of {name!r} has shape {list(u.shape)}; give one number, one per "
            f"entry (shape {list(x.shape)}) or a covariance matrix ({n}x{n})",
            variable=name,
        )
    if (u < 0).any():
        raise InputError(f"a standard uncertainty cannot be negative ({name!r})", variable=name)
    return np.diag(u.ravel() ** 2)


def _derivatives(program, values, names, shapes):
    """f, its gradient blocks and the full Hessian over the flattened uncertain inputs."""
    np = backend.host
    try:
        r = program_hessian(program, values, wrt=names)
    except NonScalarOutputError as e:  # in propagate's words, not the hessian command's
        shape = tuple(e.details["shape"])
        raise NonScalarOutputError(
            f"propagate needs a scalar output, but it has shape {shape}; propagate one entry "
            "at a time (y[0], y[1], ...)",
            shape=list(shape),
        ) from None
    value = backend.to_numpy(r.value.data)
    grad = [backend.to_numpy(r.gradient[n].data) for n in names]
    sizes = [math.prod(s) for s in shapes]
    H = np.zeros((sum(sizes), sum(sizes)))
    oi = 0
    for a, na in zip(names, sizes):
        oj = 0
        for b, nb in zip(names, sizes):
            H[oi : oi + na, oj : oj + nb] = backend.to_numpy(r.hessian[a][b].data).reshape(na, nb)
            oj += nb
        oi += na
    return float(value.reshape(())), grad, H, list(r.warnings)


def _monte_carlo(program, values, names, shapes, theta, cov, n, seed, warnings) -> dict:
    # only --mc draws use the batch engine: 10 ms of import a propagate without --mc skips
    from .batch import Unbatchable, evaluate_batch

    np = backend.host
    if n < 2 or n > MAX_MC:
        raise LimitError.naming(f"{{mc}} takes 2 to {MAX_MC:,} draws, not {n:,}")
    rng = np.random.default_rng(seed)
    sizes = [math.prod(s) for s in shapes]
    others = {k: np.asarray(v, dtype=float) for k, v in values.items() if k not in names}
    ys = []
    done = 0
    while done < n:
        m = min(_MC_CHUNK, n - done)
        draws = rng.multivariate_normal(theta, cov, size=m, method="eigh")
        columns, o = {}, 0
        for name, shape, size in zip(names, shapes, sizes):
            columns[name] = draws[:, o : o + size].reshape((m,) + tuple(shape))
            o += size
        for k, v in others.items():
            columns[k] = np.broadcast_to(v, (m,) + v.shape)
        try:
            y = evaluate_batch(program, columns, m, check_domain=False).value
        except Unbatchable:
            with no_grad():
                y = np.array(
                    [
                        float(
                            backend.to_numpy(
                                evaluate(
                                    program,
                                    {k: col[i] for k, col in columns.items()},
                                    check_domain=False,
                                ).output.data
                            )
                        )
                        for i in range(m)
                    ]
                )
        ys.append(np.asarray(y, dtype=float).reshape(m))
        done += m
    y = np.concatenate(ys)
    finite = np.isfinite(y)
    if not finite.all():
        warnings.append(
            f"{int((~finite).sum()):,} of {n:,} Monte Carlo draws gave a value that is not "
            "finite; they are left out"
        )
        y = y[finite]
    if y.size < 2:
        return {"mean": math.nan, "std": math.nan, "interval": [math.nan, math.nan], "draws": n}
    lo, hi = np.quantile(y, [0.025, 0.975])
    return {
        "mean": float(y.mean()),
        "std": float(y.std(ddof=1)),
        "interval": [float(lo), float(hi)],
        "draws": n,
    }


def _plain(a):
    a = backend.host.asarray(a, dtype=float)
    return float(a) if a.ndim == 0 else a.tolist()
