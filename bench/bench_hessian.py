"""Time full Hessians of n-variable functions: this engine beside PyTorch and JAX.

Not a test: run it by hand with the project installed, e.g.
``python bench/bench_hessian.py`` (or
``--sizes 10 100 1000 2000 --repeat 5``).  PyTorch and JAX columns appear
when they can be imported; otherwise they read ``-``.

Columns (seconds, best of ``--repeat`` runs after one warm-up call):

* ``ours``: ``hessian(f, x)``, forward-over-reverse, all n directions in
  one batched tangent sweep (chunked when n * size exceeds CHUNK_ELEMENTS);
* ``ours-rr``: ``outer_jacobian_strategy="reverse-mode"``: reverse-over-reverse,
  one backward pass over the gradient's graph per variable (the n-pass baseline);
* ``torch``: ``torch.autograd.functional.hessian(f, x)`` with its defaults
  (n backward passes);
* ``torch-vec``: the same with ``vectorize=True, outer_jacobian_strategy="forward-mode"``;
* ``jax``: ``jax.jit(jax.hessian(f))`` in float64, compiled before timing
  (``jax+jit`` would add the compile: see the ``compile`` column).

Every result is checked against ours (``maxdiff``), so the rows time the same thing.
All libraries run on one thread by default (``--threads``), which keeps the
comparison fair and the figures steady on small shared machines.
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def _threads_from_argv(argv) -> int:
    """``--threads N`` must act before NumPy, PyTorch and JAX load their thread pools."""
    for i, arg in enumerate(argv):
        if arg == "--threads" and i + 1 < len(argv):
            return int(argv[i + 1])
        if arg.startswith("--threads="):
            return int(arg.split("=", 1)[1])
    return 1


THREADS = _threads_from_argv(sys.argv[1:])
if THREADS > 0:
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = str(THREADS)
    if THREADS == 1:
        os.environ["XLA_FLAGS"] = (
            os.environ.get("XLA_FLAGS", "")
            + " --xla_cpu_multi_thread_eigen=false"
            + " intra_op_parallelism_threads=1"
        ).strip()

import numpy as np  # noqa: E402

from autograd_cli.core import tensor  # noqa: E402
from autograd_cli.core.functional import hessian  # noqa: E402

try:
    import torch
    import torch.autograd.functional as torch_functional

    if THREADS > 0:
        torch.set_num_threads(THREADS)
except ImportError:  # pragma: no cover - optional
    torch = None

try:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
except ImportError:  # pragma: no cover - optional
    jax = None


# The functions, written once per library ------------------------------------------------------
def make_functions(n: int, seed: int = 0):
    a = np.random.default_rng(seed).normal(size=(n, n)) / np.sqrt(n)
    return {
        "sum(x**2*sin(x))": (
            lambda x: (x**2 * x.sin()).sum(),
            lambda x: (x**2 * torch.sin(x)).sum(),
            lambda x: jnp.sum(x**2 * jnp.sin(x)),
        ),
        "sum(x)**2": (
            lambda x: x.sum() ** 2,
            lambda x: x.sum() ** 2,
            lambda x: jnp.sum(x) ** 2,
        ),
        "x@A@x+sum(exp(x))": (
            (lambda A: lambda x: x @ A @ x + x.exp().sum())(tensor(a)),
            # x @ (A @ x) as a sum: torch's vectorized forward-mode hessian has no batching rule
            # for a 1-D @ 1-D product.
            (lambda A: lambda x: (x * (A @ x)).sum() + torch.exp(x).sum())(
                None if torch is None else torch.tensor(a, dtype=torch.float64)
            ),
            (lambda A: lambda x: x @ A @ x + jnp.sum(jnp.exp(x)))(
                None if jax is None else jnp.asarray(a)
            ),
        ),
    }


def _host(h):
    """Any library's result as a NumPy array."""
    if hasattr(h, "detach"):
        h = h.detach()
    return np.asarray(h.numpy() if hasattr(h, "numpy") else h)


def best_time(fn, repeat: int) -> tuple[float, object]:
    try:
        result = fn()  # warm-up (and JAX's compile)
    except Exception as exc:  # noqa: BLE001 - a library that cannot run the case gets a "-"
        print(f"      ({type(exc).__name__}: {str(exc)[:100]})", file=sys.stderr)
        return None, None
    best = float("inf")
    if repeat < 1:
        raise ValueError("--repeat must be at least 1")
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="BLAS/OpenMP/XLA threads for every library (0: leave their defaults)",
    )
    parser.add_argument(
        "--max-rr", type=int, default=1000, help="largest n for the n-pass columns (ours-rr, torch)"
    )
    args = parser.parse_args(argv)

    print(
        f"numpy {np.__version__}"
        + (
            f", torch {torch.__version__} ({torch.get_num_threads()} threads)"
            if torch
            else ", torch: not installed"
        )
        + (f", jax {jax.__version__} ({jax.default_backend()})" if jax else ", jax: not installed")
        + f", {os.cpu_count()} CPUs, threads: {THREADS or 'library defaults'}"
    )
    header = (
        f"{'n':>5} {'function':<19} {'ours':>9} {'ours-rr':>9} {'torch':>9} {'torch-vec':>9} "
        f"{'jax':>9} {'compile':>8} {'ours/torch':>10} {'ours/t-vec':>10} {'ours/jax':>9} "
        f"{'maxdiff':>8}"
    )
    print(header)
    print("-" * len(header))

    def cell(v, width=9):
        return f"{v:{width}.3g}" if v is not None else f"{'-':>{width}}"

    def ratio(a, b, width):
        return f"{a / b:{width}.3g}" if (a is not None and b) else f"{'-':>{width}}"

    for n in args.sizes:
        x0 = np.linspace(-1.0, 1.0, n)
        for name, (ours_f, torch_f, jax_f) in make_functions(n).items():
            t_ours, h_ours = best_time(lambda f=ours_f, x=x0: hessian(f, tensor(x)), args.repeat)
            reference = h_ours.numpy()
            diffs = []

            def check(h, diffs=diffs, reference=reference):
                if h is not None:
                    diffs.append(float(np.abs(_host(h) - reference).max()))

            t_rr = t_torch = t_tvec = t_jax = t_compile = None
            if n <= args.max_rr:
                t_rr, h = best_time(
                    lambda f=ours_f, x=x0: hessian(
                        f, tensor(x), outer_jacobian_strategy="reverse-mode"
                    ),
                    args.repeat,
                )
                check(h)
            if torch is not None:
                xt = torch.tensor(x0, dtype=torch.float64)
                if n <= args.max_rr:
                    t_torch, h = best_time(
                        lambda f=torch_f, x=xt: torch_functional.hessian(f, x), args.repeat
                    )
                    check(h)
                t_tvec, h = best_time(
                    lambda f=torch_f, x=xt: torch_functional.hessian(
                        f, x, vectorize=True, outer_jacobian_strategy="forward-mode"
                    ),
                    args.repeat,
                )
                check(h)
            if jax is not None:
                xj = jnp.asarray(x0)
                compiled = jax.jit(jax.hessian(jax_f))
                start = time.perf_counter()
                compiled(xj).block_until_ready()
                t_compile = time.perf_counter() - start
                t_jax, h = best_time(lambda c=compiled, x=xj: c(x).block_until_ready(), args.repeat)
                check(h)
            maxdiff = max(diffs) if diffs else 0.0
            print(
                f"{n:5d} {name:<19} {cell(t_ours)} {cell(t_rr)} {cell(t_torch)} {cell(t_tvec)} "
                f"{cell(t_jax)} {cell(t_compile, 8)} {ratio(t_ours, t_torch, 10)} "
                f"{ratio(t_ours, t_tvec, 10)} {ratio(t_ours, t_jax, 9)} {maxdiff:8.1e}",
                flush=True,
            )
    print(
        "\nseconds, best of", args.repeat, "after a warm-up; ratios > 1 mean this engine is slower"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
