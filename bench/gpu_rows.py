"""The GPU rows of the benchmark suite (issue 25): ``python bench/run.py --gpu``.

Five rows, G1-G5, in bench/run.py's table (its Row, ``interleaved``, ``agree`` and
``render``, passed in as ``bench``), each autograd-cli ``--device gpu`` (the library under
``backend.using(device="gpu")``: NumPy arrays in, NumPy arrays out) beside PyTorch CUDA eager
(the reference: the GPU lead is kept while the ratio is at most 1.0), JAX ``jit`` and a
hand-written CuPy floor where one applies, host arrays in and out for everyone (each timed
call uploads its inputs and copies its results back, which also waits for the device):

G1. value and gradient of ``x*y + sin(x)*exp(y)`` at 10^7 points, float32;
G2. the same at 10^8 points, float64;
G3. ``sum(tanh(W@x+b))``, W 4096x4096, float64: the value and the three gradients;
G4. the dense Hessian of ``sum(sin(x[:-1])*x[1:]) + sum(x**4)`` (row 6's), n = 4000;
    PyTorch's is ``torch.func.hessian``;
G5. the cold start of ``autograd-cli grad "3*a**3-b**2" --a 2 --b 6 --device gpu`` beside the
    same command on the CPU and the least a CuPy, PyTorch or JAX process pays to run one
    kernel (import, CUDA context, one tiny sum read back); the CuPy floor is the reference
    and no target is set.

Times are the best of 5 after one warm-up call (the issue's measure; the cold start's best of
3), which the table's time column shows for these rows.  Each row checks that every
implementation's results agree with ours (and with float64 NumPy on the host at sampled
points, or a closed form) and that they come back in the row's dtype; a mismatch marks the row
FAILED, as on the CPU rows.

Without CuPy or a CUDA device every row is a note, "not run: no GPU (...)", never an error.
``--gpu-dry`` runs the same code at tiny sizes with no GPU: NumPy behind CuPy's manners
(tests/strict_xp.py, which refuses a host array where CuPy would) plays CuPy, installed as
tests/test_strict_backend.py installs it (``backend._array_module`` answers ``"gpu"`` with
it), and PyTorch and JAX run on the CPU; it checks the code, it measures no GPU.
"""

from __future__ import annotations

import json
import os
import sys

# JAX takes 75 % of the GPU's memory when it first touches the device unless told not to,
# which would starve CuPy and PyTorch in the same process: set before bench/run.py's Peers
# import JAX (bench/run.py imports this module first).
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import numpy as np  # noqa: E402

import autograd_cli as ag  # noqa: E402
from autograd_cli.core import backend  # noqa: E402
from autograd_cli.core import rows as batch_rows  # noqa: E402
from autograd_cli.core.errors import DeviceError  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EW_EXPR = "x*y + sin(x)*exp(y)"
LAYER_EXPR = "sum(tanh(W@x+b))"
COLD_ARGS = ["grad", "3*a**3-b**2", "--a", "2", "--b", "6"]
SAMPLED = 1000  # points checked against float64 NumPy on the host

SIZES = {
    "full": {"ew32": 10**7, "ew64": 10**8, "layer": 4096, "hess": 4000, "repeat": 5, "cold": 3},
    "quick": {"ew32": 10**6, "ew64": 10**7, "layer": 2048, "hess": 1000, "repeat": 5, "cold": 2},
    "tiny": {"ew32": 1000, "ew64": 2000, "layer": 16, "hess": 12, "repeat": 2, "cold": 1},
}
REFERENCE = "≤ PyTorch CUDA eager (1.0x: the lead kept)"
TARGETS = {"G1": 1.0, "G2": 1.0, "G3": 1.0, "G4": 1.0, "G5": None}
TARGET_TEXT = {
    "G1": REFERENCE,
    "G2": REFERENCE,
    "G3": REFERENCE,
    "G4": REFERENCE,
    "G5": "none set (reported)",
}
TITLES = {
    "G1": f"value + gradient of `{EW_EXPR}` on the GPU, host arrays in and out",
    "G2": f"value + gradient of `{EW_EXPR}` on the GPU, host arrays in and out",
    "G3": f"`{LAYER_EXPR}` on the GPU: value and grads w.r.t. W, x, b, host arrays in and out",
    "G4": "dense Hessian of `{hessian}` on the GPU (`autograd_cli.hessian`), host in/out",
    "G5": 'cold start: `autograd-cli grad "3*a**3-b**2" --a 2 --b 6 --device gpu`',
}
# How close each implementation's numbers must be to ours (relative and absolute)
TOLERANCE = {"float32": 1e-4, "float64": 1e-12}

# A CLI process for --gpu-dry's cold start: the stand-in installed, then the console script.
STAND_IN_CLI = (
    "import sys; sys.path.insert(0, {bench!r}); import gpu_rows; gpu_rows.install_stand_in(); "
    "from autograd_cli.cli.entry import main; sys.argv[0] = 'autograd-cli'; main()"
)


class Gpu:
    """What this run has of a GPU: CuPy (or the stand-in) and the peers' devices, or why not."""

    def __init__(self, dry: bool):
        self.dry = dry
        self.cp = None
        self.why: str | None = None  # "no GPU (...)": nothing is run
        self.name = "?"
        self.torch_dev = self.jax_dev = None
        self.torch_why = self.jax_why = ""


def install_stand_in():
    """NumPy behind CuPy's manners (tests/strict_xp.py) as the library's "gpu" device, the way
    tests/test_strict_backend.py's ``device`` fixture does it: ``backend._array_module``
    answers ``"gpu"`` with it, and its ``cupyx`` stand-ins take cupyx's place.  For
    ``--gpu-dry`` only (for good, in this process); returns the stand-in module."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import strict_xp

    original = backend._array_module
    backend._array_module = lambda name: (strict_xp.xp, "gpu") if name == "gpu" else original(name)
    sys.modules.update(strict_xp.cupyx_modules())
    return strict_xp.xp


def _cupy_or_why():
    """(CuPy, the GPU's name) where CuPy imports and CUDA has a device, else (None, why)."""
    try:
        import cupy
    except ImportError as exc:
        return None, f"no GPU (cupy not importable: {exc})"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
        props = cupy.cuda.runtime.getDeviceProperties(0) if count else {}
    # CuPy's CUDARuntimeError is a RuntimeError; OSError: a CUDA library that will not load
    except (OSError, RuntimeError) as exc:
        return None, f"no GPU (CUDA: {exc.__class__.__name__}: {exc})".replace("\n", " ")
    if count < 1:
        return None, "no GPU (CUDA reports 0 devices)"
    name = props.get("name", b"?")
    return cupy, name.decode(errors="replace") if isinstance(name, bytes) else str(name)


def probe(peers, dry: bool) -> Gpu:
    """The GPU (or the stand-in) and where PyTorch and JAX run: CUDA / JAX's GPU backend, or
    the CPU in a dry run."""
    gpu = Gpu(dry)
    if dry:
        gpu.cp, gpu.name = install_stand_in(), "stand-in: NumPy on the CPU (tests/strict_xp.py)"
    else:
        gpu.cp, found = _cupy_or_why()
        if gpu.cp is None:
            gpu.why = found
            return gpu
        gpu.name = found
        try:
            with backend.using(device="gpu"):
                pass
        except DeviceError as exc:
            gpu.why = f"no GPU (the library refuses it: {exc})"
            return gpu
    if peers.torch is None:
        gpu.torch_why = peers.missing("torch")
    elif dry:
        gpu.torch_dev = "cpu"
    elif peers.torch.cuda.is_available():
        gpu.torch_dev = "cuda"
    else:
        gpu.torch_why = "torch: no CUDA (torch.cuda.is_available() is False)"
    if peers.jax is None:
        gpu.jax_why = peers.missing("jax")
    else:
        try:
            gpu.jax_dev = peers.jax.devices("cpu" if dry else "gpu")[0]
        except RuntimeError as exc:  # JAX without a GPU backend
            gpu.jax_why = f"jax: no GPU backend ({exc})".replace("\n", " ")
    return gpu


def about(gpu: Gpu, peers) -> str:
    """One note: the device and the libraries' versions."""
    bits = [f"GPU: {gpu.name}"]
    if gpu.cp is not None and not gpu.dry:
        bits.append(
            f"CuPy {gpu.cp.__version__} (CUDA runtime {gpu.cp.cuda.runtime.runtimeGetVersion()})"
        )
    if gpu.torch_dev:
        bits.append(
            f"PyTorch {peers.torch.__version__} on {gpu.torch_dev} (CUDA {peers.torch.version.cuda})"
        )
    if gpu.jax_dev is not None:
        bits.append(f"JAX {peers.jax.__version__} on {gpu.jax_dev}")
    if gpu.dry:
        bits.append(
            "DRY RUN (--gpu-dry): the stand-in played the GPU and PyTorch and JAX ran on the CPU; "
            "these times measure no GPU"
        )
    return "; ".join(bits)


# ---------------------------------------------------------------------------
# Lines, rows, checks
# ---------------------------------------------------------------------------


def best_line(bench):
    """bench.Line whose time (the table's median column) is the best of its runs."""

    class Best(bench.Line):
        @property
        def median(self):
            return min(self.samples) if self.samples else None

    return Best


def not_run(row, why: str):
    """The row of a run without a GPU: a note, and lines that say so."""
    ref = "floor: CuPy" if row.number == "G5" else "PyTorch CUDA eager"
    row.line(who="autograd-cli --device gpu", missing=f"not run: {why}", ours=True)
    row.line(who=ref, missing=f"not run: {why}", reference=True)
    row.notes.append(f"not run: {why}")
    return row


DRY_LABEL = {"ours": " [stand-in]", "cupy": " [stand-in]", "torch": " [CPU]", "jax": " [CPU]"}


def add_lines(bench, row, gpu: Gpu, samples: dict, labels: dict, missing: dict) -> None:
    """One best-of line per implementation, in ``labels``' order ("ours" first, "torch" the
    reference), or a skipped line saying why it is missing; a dry run says where each ran."""
    best = best_line(bench)
    for key, who in labels.items():
        if gpu.dry:
            who = who.replace(" CUDA", "") + DRY_LABEL.get(key, "")
        flags = {"ours": key == "ours", "reference": key == row_reference(row)}
        if key in samples:
            row.lines.append(best(who=who, samples=samples[key], **flags))
        else:
            row.lines.append(best(who=who, missing=missing.get(key, "not run"), **flags))


def row_reference(row) -> str:
    return "cupy" if row.number == "G5" else "torch"


def check_dtypes(row, results: dict, dtype) -> None:
    """Every implementation's arrays came back as host NumPy arrays of ``dtype``."""
    for key, arrays in results.items():
        for a in arrays:
            if not isinstance(a, np.ndarray) or a.dtype != np.dtype(dtype):
                kind = a.dtype if isinstance(a, np.ndarray) else type(a).__qualname__
                row.failed = row.failed or f"{key} returned {kind}, not a host {dtype} array"


def check_peers(bench, row, results: dict, dtype: str) -> None:
    """Each peer's results against ours, elementwise (bench.agree: a mismatch fails the row)."""
    tol = TOLERANCE[dtype]
    for key, arrays in results.items():
        if key != "ours":
            bench.agree(row, list(zip(results["ours"], arrays)), tol, key, atol=tol)


def timed(bench, fns: dict, repeat: int):
    """bench.interleaved after one warm-up call each (CuPy's kernels compiled, JAX's jit)."""
    return bench.interleaved(fns, repeat, warmup=1)


def with_peers(fns: dict, gpu: Gpu, peers, makers: tuple, *data) -> dict:
    """``fns`` with "torch" and "jax" added where each can run: ``makers`` (torch's, JAX's)
    take (torch, device, *data) and (jax, jnp, device, *data) and return the timed call."""
    make_torch, make_jax = makers
    if gpu.torch_dev:
        fns["torch"] = make_torch(peers.torch, gpu.torch_dev, *data)
    if gpu.jax_dev is not None:
        fns["jax"] = make_jax(peers.jax, peers.jnp, gpu.jax_dev, *data)
    return fns


def measure(bench, row, gpu: Gpu, peers, fns: dict, labels: dict, **how) -> dict:
    """Time ``fns`` (best of ``how["repeat"]``), one line each (``labels``; ``how["missing"]``
    says why a line has no time), the device's note; with ``how["dtype"]``, the dtype and the
    peers-against-ours checks.  Returns each implementation's last results."""
    samples, results = timed(bench, fns, how["repeat"])
    missing = {"torch": gpu.torch_why, "jax": gpu.jax_why, **how.get("missing", {})}
    add_lines(bench, row, gpu, samples, labels, missing)
    row.notes.append(about(gpu, peers))
    if how.get("dtype"):
        check_dtypes(row, results, how["dtype"])
        check_peers(bench, row, results, how["dtype"])
    return results


def rows(bench, mode: str, dry: bool = False) -> dict:
    """{"G1": fn, ...}: bench/run.py's row functions ``fn(cfg, peers, work) -> Row`` for the
    GPU rows (their targets registered in ``bench``'s tables).  CuPy is not imported, nor the
    device probed, until the first row runs."""
    sizes = SIZES["tiny" if dry else mode]
    bench.TARGETS.update({k: (None if dry else v) for k, v in TARGETS.items()})
    bench.TARGET_TEXT.update(
        {k: ("dry run: not rated" if dry else v) for k, v in TARGET_TEXT.items()}
    )
    cache: dict = {}
    best = f"best of {sizes['repeat']}"
    n32, n64, layer, hess = sizes["ew32"], sizes["ew64"], sizes["layer"], sizes["hess"]
    plan = {  # number: (size, the row's body)
        "G1": (f"{bench.count(n32)} points, float32, {best}", elementwise(n32, "float32")),
        "G2": (f"{bench.count(n64)} points, float64, {best}", elementwise(n64, "float64")),
        "G3": (f"W {layer}x{layer}, float64, {best}", row_layer),
        "G4": (f"n = {hess}, float64, {best}", row_hessian),
        "G5": (f"best of {sizes['cold']}", row_cold_start),
    }

    def make(number: str, size: str, body):
        def run(cfg, peers, work):
            if "gpu" not in cache:
                cache["gpu"] = probe(peers, dry)
            gpu = cache["gpu"]
            title = TITLES[number].format(hessian=bench.HESSIAN_EXPR)
            row = bench.Row(number, title, size + (" (dry run)" if dry else ""))
            if gpu.why:
                return not_run(row, gpu.why)
            return body(bench, row, gpu, peers, sizes)

        run.__name__ = f"row_gpu_{number}"
        return run

    return {number: make(number, *how) for number, how in plan.items()}


# ---------------------------------------------------------------------------
# G1, G2: value and gradient at many points
# ---------------------------------------------------------------------------


def ew_numpy(x, y):
    """Hand-written value and both partials of x*y + sin(x)*exp(y) (NumPy, any dtype)."""
    e = np.exp(y)
    s = np.sin(x) * e
    return x * y + s, y + np.cos(x) * e, x + s


def ew_cupy(cp, x, y):
    """The same by hand in CuPy: uploads, five kernels' worth of ufuncs, three copies back."""
    xd, yd = cp.asarray(x), cp.asarray(y)
    e = cp.exp(yd)
    s = cp.sin(xd) * e
    return (xd * yd + s).get(), (yd + cp.cos(xd) * e).get(), (xd + s).get()


def ew_torch(torch, dev, x, y):
    def run():
        a = torch.from_numpy(x).to(dev).requires_grad_(True)
        b = torch.from_numpy(y).to(dev).requires_grad_(True)
        v = a * b + torch.sin(a) * torch.exp(b)
        v.backward(torch.ones_like(v))
        return v.detach().cpu().numpy(), a.grad.cpu().numpy(), b.grad.cpu().numpy()

    return run


def ew_jax(jax, jnp, dev, x, y):
    def f(a, b):
        return a * b + jnp.sin(a) * jnp.exp(b)

    @jax.jit
    def value_and_grads(a, b):
        v, pull = jax.vjp(f, a, b)
        return (v, *pull(jnp.ones_like(v)))

    def run():
        out = value_and_grads(jax.device_put(x, dev), jax.device_put(y, dev))
        return tuple(np.asarray(t) for t in out)

    return run


def elementwise(n: int, dtype: str):
    """G1's and G2's body: value and gradient at ``n`` points in ``dtype``."""

    def body(bench, row, gpu: Gpu, peers, sizes: dict):
        return row_elementwise(bench, row, gpu, peers, n, dtype, sizes["repeat"])

    return body


def row_elementwise(bench, row, gpu: Gpu, peers, n: int, dtype: str, repeat: int):
    rng = np.random.default_rng(25)
    x = rng.uniform(-1.0, 1.0, n).astype(dtype)
    y = rng.uniform(-1.0, 1.0, n).astype(dtype)
    program = ag.parse(EW_EXPR)

    def ours():
        with backend.using(device="gpu", dtype=dtype):
            r = batch_rows.evaluate_group(program, n, {"x": x, "y": y}, op="grad")
        if not hasattr(r, "grad"):
            raise AssertionError("the group was not vectorised (evaluate_group fell back)")
        return r.value, r.grad["x"], r.grad["y"]

    fns = {"ours": ours, "cupy": lambda: ew_cupy(gpu.cp, x, y)}
    labels = {
        "ours": "autograd-cli --device gpu (`rows.evaluate_group`, batch's path)",
        "torch": "PyTorch CUDA eager (`backward(ones)`)",
        "jax": "JAX `jit(vjp)`",
        "cupy": "CuPy by hand (ufuncs, unfused)",
    }
    fns = with_peers(fns, gpu, peers, (ew_torch, ew_jax), x, y)
    results = measure(bench, row, gpu, peers, fns, labels, repeat=repeat, dtype=dtype)
    pick = np.unique(np.linspace(0, n - 1, min(SAMPLED, n)).astype(np.int64))
    want = ew_numpy(x[pick].astype(np.float64), y[pick].astype(np.float64))
    got = [a[pick] for a in results["ours"]]
    tol = TOLERANCE[dtype]
    bench.agree(row, list(zip(got, want)), tol, f"float64 NumPy at {len(pick)} points", atol=tol)
    return row


# ---------------------------------------------------------------------------
# G3: a layer, G4: a dense Hessian
# ---------------------------------------------------------------------------


def layer_cupy(cp, W, x, b):
    Wd, xd, bd = cp.asarray(W), cp.asarray(x), cp.asarray(b)
    t = cp.tanh(Wd @ xd + bd)
    d = 1.0 - t * t
    return t.sum().get(), cp.outer(d, xd).get(), (Wd.T @ d).get(), d.get()


def layer_torch(torch, dev, W, x, b):
    def run():
        Wg, xg, bg = (torch.from_numpy(a).to(dev).requires_grad_(True) for a in (W, x, b))
        v = torch.tanh(Wg @ xg + bg).sum()
        v.backward()
        host = (v.detach(), Wg.grad, xg.grad, bg.grad)
        return tuple(t.cpu().numpy() for t in host)

    return run


def layer_jax(jax, jnp, dev, W, x, b):
    vg = jax.jit(jax.value_and_grad(lambda W, x, b: jnp.sum(jnp.tanh(W @ x + b)), (0, 1, 2)))

    def run():
        v, grads = vg(*(jax.device_put(a, dev) for a in (W, x, b)))
        return (np.asarray(v), *(np.asarray(g) for g in grads))

    return run


def row_layer(bench, row, gpu: Gpu, peers, sizes: dict):
    n, repeat = sizes["layer"], sizes["repeat"]
    rng = np.random.default_rng(25)
    W = rng.normal(size=(n, n)) / np.sqrt(n)
    x, b = rng.normal(size=n), rng.normal(size=n)
    program = ag.parse(LAYER_EXPR)

    def ours():
        with backend.using(device="gpu"):
            r = ag.grad(program, {"W": W, "x": x, "b": b})
        return np.asarray(r.value), r.grad["W"], r.grad["x"], r.grad["b"]

    fns = {"ours": ours, "cupy": lambda: layer_cupy(gpu.cp, W, x, b)}
    fns = with_peers(fns, gpu, peers, (layer_torch, layer_jax), W, x, b)
    labels = {
        "ours": "autograd-cli --device gpu (`autograd_cli.grad`, parsed once)",
        "torch": "PyTorch CUDA eager",
        "jax": "JAX `jit(value_and_grad)`",
        "cupy": "CuPy by hand",
    }
    results = measure(bench, row, gpu, peers, fns, labels, repeat=repeat, dtype="float64")
    t = np.tanh(W @ x + b)
    d = 1.0 - t * t
    want = (np.asarray(t.sum()), np.outer(d, x), W.T @ d, d)
    bench.agree(row, list(zip(results["ours"], want)), 1e-10, "host NumPy", atol=1e-12)
    return row


def hessian_torch(torch, dev, x):
    def f(v):
        return (torch.sin(v[:-1]) * v[1:]).sum() + (v**4).sum()

    h = torch.func.hessian(f)

    def run():
        return (h(torch.from_numpy(x).to(dev)).cpu().numpy(),)

    return run


def hessian_jax(jax, jnp, dev, x):
    h = jax.jit(jax.hessian(lambda v: jnp.sum(jnp.sin(v[:-1]) * v[1:]) + jnp.sum(v**4)))

    def run():
        return (np.asarray(h(jax.device_put(x, dev))),)

    return run


def row_hessian(bench, row, gpu: Gpu, peers, sizes: dict):
    n, repeat = sizes["hess"], sizes["repeat"]
    x = np.linspace(-1.0, 1.0, n) + 0.1
    program = ag.parse(bench.HESSIAN_EXPR)

    def ours():
        with backend.using(device="gpu"):
            return (ag.hessian(program, {"x": x}).hessian["x"]["x"],)

    fns = with_peers({"ours": ours}, gpu, peers, (hessian_torch, hessian_jax), x)
    labels = {
        "ours": "autograd-cli --device gpu (parsed once)",
        "torch": "PyTorch CUDA `torch.func.hessian`",
        "jax": "JAX `jit(hessian)`",
        "cupy": "CuPy by hand",
    }
    floor = "no hand-written floor: a dense Hessian by hand is its closed form, not the same work"
    results = measure(
        bench, row, gpu, peers, fns, labels, repeat=repeat, dtype="float64", missing={"cupy": floor}
    )
    want = bench.hessian_closed_form(x)
    bench.agree(row, [(results["ours"][0], want)], 1e-12, "closed form", atol=1e-12)
    return row


# ---------------------------------------------------------------------------
# G5: the --device gpu cold start
# ---------------------------------------------------------------------------


def cold_commands(bench, gpu: Gpu) -> tuple[dict, dict]:
    """The commands timed (name -> argv) and the environment each runs in."""
    py = sys.executable
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if gpu.dry:  # the console script with the stand-in installed first; the peers on the CPU
        here = os.path.dirname(os.path.abspath(__file__))
        cli = [py, "-c", STAND_IN_CLI.format(bench=here)]
        env["JAX_PLATFORMS"] = "cpu"
        floor = "import numpy; numpy.ones(1).sum()"
        torch_dev = "cpu"
    else:
        cli = bench.cli_command()[0]
        floor = "import cupy; cupy.ones(1).sum().get()"
        torch_dev = "cuda"
    cmds = {
        "ours": cli + COLD_ARGS + ["--device", "gpu"],
        "cpu": bench.cli_command()[0] + COLD_ARGS,
        "cupy": [py, "-c", floor],
    }
    if gpu.torch_dev:
        cmds["torch"] = [
            py,
            "-c",
            f"import torch; torch.ones(1, device={torch_dev!r}).sum().item()",
        ]
    if gpu.jax_dev is not None:
        cmds["jax"] = [py, "-c", "import jax.numpy as jnp; float(jnp.ones(1).sum())"]
    return cmds, env


def row_cold_start(bench, row, gpu: Gpu, peers, sizes: dict):
    repeat = sizes["cold"]
    cmds, env = cold_commands(bench, gpu)
    note = bench.cli_command()[1]  # no console script: `python -m autograd_cli` is timed
    if note:
        row.notes.append(note)
    fns = {k: (lambda c=c: bench.run_cmd(c, env=env)[0]) for k, c in cmds.items()}
    floor = '`python -c "import numpy"` (dry run)' if gpu.dry else "CuPy: import, one kernel"
    labels = {
        "ours": "autograd-cli --device gpu (whole command)",
        "cpu": "the same command on the CPU",
        "cupy": f"floor: {floor}, read back",
        "torch": "PyTorch: import, one CUDA kernel, read back",
        "jax": "JAX: import, one kernel, read back",
    }
    measure(bench, row, gpu, peers, fns, labels, repeat=repeat)
    _, out = bench.run_cmd(cmds["ours"] + ["--json"], capture=True, env=env)
    doc = json.loads(out)
    pairs = [(doc["value"], -12.0), (doc["grad"]["a"], 36.0), (doc["grad"]["b"], -12.0)]
    bench.agree(row, pairs, 1e-15, "closed form (--json run)")
    return row
