"""Rows 14-17 of bench/run.py (issue 28, sparse derivatives): the pattern, its coloring and
the compressed sweeps (core/sparsity.py) at scale.

14. ``hessian --sparse`` of the Rosenbrock chain ``sum(100*(x[1:]-x[:-1]**2)**2 +
    (1-x[:-1])**2)`` at n = 10^6 (x = 0): seconds, and the colors (target <= 5 s, <= 3
    colors); no reference (a dense Hessian would need 8 TB).
15. The same at n = 1000 against the dense ``hessian`` (forward-over-reverse, 1000 sweeps):
    equal to 1e-12 and faster (target <= 1.0x).
16. ``jacobian --sparse`` of the tridiagonal residual ``x[:-2] - 2*x[1:-1] + x[2:] +
    h**2*exp(x[1:-1])`` at n = 10^6 (target <= 3 s, 3 colors).
17. Against JAX's dense ``jax.hessian`` of the chain at n = 10^4 (skipped where JAX is
    missing): ours sparse, side by side.

Each row is a function ``(bench, cfg, peers, work) -> Row`` as in bench/codegen_rows.py.
"""

from __future__ import annotations

import time

import numpy as np

import autograd_cli as ag
from autograd_cli.core.sparsity import sparse_hessian, sparse_jacobian

CHAIN = "sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)"
RESIDUAL = "x[:-2] - 2*x[1:-1] + x[2:] + {h2!r}*exp(x[1:-1])"


def _timed(fn, repeat: int) -> tuple[list, object]:
    samples, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        samples.append(time.perf_counter() - t)
    return samples, out


def row_hessian_million(bench, cfg, peers, work):
    n = 10**6 if not getattr(cfg, "quick", False) else 10**5
    row = bench.Row(14, "`hessian --sparse` of the Rosenbrock chain, x = 0", f"n = {n:,}")
    program = ag.parse(CHAIN)
    samples, out = _timed(lambda: sparse_hessian(program, {"x": np.zeros(n)}, ["x"]), 3)
    _, blocks, colors, _, _ = out
    row.line(who="ours: pattern, coloring, compressed sweeps", samples=samples, ours=True)
    row.notes.append(f"{colors} colors; {blocks['x']['x'].values.size:,} nonzeros (target <= 5 s)")
    if colors > 3:
        row.failed = f"{colors} colors (the target is 3 or fewer)"
    return row


def row_hessian_dense_equal(bench, cfg, peers, work):
    n = 1000
    row = bench.Row(15, "`hessian --sparse` vs the dense `hessian`, Rosenbrock chain", f"n = {n}")
    program = ag.parse(CHAIN)
    x = np.linspace(-1, 1, n)
    sparse_samples, out = _timed(lambda: sparse_hessian(program, {"x": x}, ["x"]), 3)
    dense_samples, dense = _timed(lambda: ag.hessian(program, {"x": x}), 1)
    got = out[1]["x"]["x"].dense()
    want = np.asarray(dense.hessian["x"]["x"])
    diff = float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1)))
    row.line(who="ours, sparse", samples=sparse_samples, ours=True)
    row.line(who="ours, dense (forward over reverse)", samples=dense_samples, reference=True)
    row.check = f"largest relative difference {diff:.1e} (target 1e-12)"
    if diff > 1e-12:
        row.failed = row.check
    return row


def row_jacobian_million(bench, cfg, peers, work):
    n = 10**6 if not getattr(cfg, "quick", False) else 10**5
    row = bench.Row(16, "`jacobian --sparse` of a tridiagonal residual", f"n = {n:,}")
    program = ag.parse(RESIDUAL.format(h2=1.0 / (n + 1) ** 2))
    samples, out = _timed(lambda: sparse_jacobian(program, {"x": np.zeros(n)}, ["x"]), 3)
    row.line(who="ours: pattern, coloring, compressed sweeps", samples=samples, ours=True)
    row.notes.append(f"{out[2]} colors (target <= 3 s, 3 colors)")
    if out[2] != 3:
        row.failed = f"{out[2]} colors (the target is 3)"
    return row


def row_versus_jax(bench, cfg, peers, work):
    n = 10**4
    row = bench.Row(
        17, "sparse Hessian vs JAX's dense `jax.hessian`, Rosenbrock chain", f"n = {n:,}"
    )
    program = ag.parse(CHAIN)
    x = np.linspace(-1, 1, n)
    samples, _ = _timed(lambda: sparse_hessian(program, {"x": x}, ["x"]), 3)
    row.line(who="ours, sparse", samples=samples, ours=True)
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        row.line(who="JAX `jax.hessian` (dense)", missing="JAX not installed", reference=True)
        return row
    jax.config.update("jax_enable_x64", True)

    def chain(v):
        return jnp.sum(100 * (v[1:] - v[:-1] ** 2) ** 2 + (1 - v[:-1]) ** 2)

    hess = jax.jit(jax.hessian(chain))
    hess(jnp.asarray(x)).block_until_ready()
    jax_samples, _ = _timed(lambda: hess(jnp.asarray(x)).block_until_ready(), 3)
    row.line(who="JAX `jax.hessian` (dense, jit)", samples=jax_samples, reference=True)
    return row


ROWS = {
    14: row_hessian_million,
    15: row_hessian_dense_equal,
    16: row_jacobian_million,
    17: row_versus_jax,
}
