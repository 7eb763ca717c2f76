"""``--device gpu`` stays on the device: the engine over a strict stand-in for CuPy.

tests/strict_xp.py wraps NumPy in an array type that refuses what CuPy refuses (implicit
conversion to a NumPy array, a NumPy array mixed into a device operation) and records every
read of device numbers on the host.  The ``device`` fixture installs it as the "gpu" device
(``backend.using(device="gpu")`` then takes it instead of CuPy, with stand-ins for the
``cupyx`` modules the engine imports on the GPU), and each test fails, with the stack of
each, on a transfer outside the seam.  The policy:

* ``backend.to_numpy`` (``array.get()``) is the one transfer to the host: results, printing,
  anything the user asked to see (``Tensor.item()``, ``bool(tensor)`` go through it);
* ``backend.all_finite`` and ``backend.any_nonzero`` are the declared host syncs: each reads
  one bool back, for a decision (mend a 0 * inf cotangent, warn at a kink, take a rule's
  special case at 0); they are counted, and a read of more than one element there fails;
* ``float(a)``, ``int(a)``, ``bool(a)``, ``a.item()``, ``a.tolist()``, ``a.get()``,
  ``repr(a)`` anywhere else are transfers CuPy would make silently (a synchronous copy), and
  fail here; ``numpy.asarray(a)`` and host arrays in device operations fail as in CuPy.

What runs over it: the seeds' worked examples (tests/test_seeds_api.py) and the functional
API's tests (tests/test_functional.py), the commands (grad, hessian, jacobian, diff, check,
eval) through the command line, every op of the op table forward, backward and forward-mode,
and batch files, whose vectorised path must cost as many transfers for 2,000 rows as for 20.
The numbers must be the CPU's, bit for bit (the same NumPy computes both).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import math
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest
import strict_xp
import test_op_table

from autograd_cli.core import OPS, apply, backend, grad, no_grad, tensor
from autograd_cli.core.ops import RuleContext

SYNCS = (backend.all_finite, backend.any_nonzero)

# Transfers found in files that other work owns right now: reported there, not fixed here.
# A test whose only transfers are these is an expected failure that names them; any other
# transfer fails it.
# files whose transfers are known and not yet fixed (an expected failure naming the file and
# the fix); empty: every transfer found so far is fixed
PENDING: dict[str, str] = {}


class Device:
    """The strict "gpu" device of one test: its recorder, and the checks on it."""

    def __init__(self, recorder: strict_xp.Recorder):
        self.recorder = recorder
        self.checked = False

    def counts(self) -> dict:
        return self.recorder.counts()

    def check(self) -> None:
        """Fail (with the stacks) on any transfer outside the seam; an expected failure if
        every one of them is in a PENDING file."""
        self.checked = True
        bad = self.recorder.violations
        if not bad:
            return
        pending = sorted({f for t in bad for f in PENDING if t.site.startswith(f)})
        if all(any(t.site.startswith(f) for f in PENDING) for t in bad):
            report = self.recorder.report()
            self.recorder.transfers = [t for t in self.recorder.transfers if t not in bad]
            pytest.xfail("; ".join(f"{f}: {PENDING[f]}" for f in pending) + "\n" + report)
        pytest.fail(self.recorder.report(), pytrace=False)


@pytest.fixture
def device(monkeypatch):
    """The strict module as the "gpu" device for this test (see the module's docstring)."""
    strict_xp.install(monkeypatch)
    with strict_xp.recording(seam=[backend.to_numpy], syncs=SYNCS) as recorder:
        d = Device(recorder)
        yield d
        if not d.checked:  # a test that did not check: still no transfer outside the seam
            d.check()


def same(a, b) -> None:
    """Equal arrays, bit for bit (nan where nan, the sign of a zero included)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    assert np.array_equal(a, b, equal_nan=True), (a, b)
    parts = [(a.real, b.real), (a.imag, b.imag)] if np.iscomplexobj(a) else [(a, b)]
    for x, y in parts:  # signbit has no complex loop: each part's zeros
        assert np.array_equal(np.signbit(x), np.signbit(y))


# ---------------------------------------------------------------------------
# The stand-in itself: CuPy's manners, and the recorder's verdicts
# ---------------------------------------------------------------------------

# A function compiled as if it lived in the engine: its transfers are the engine's.
_ENGINE = {}
exec(  # noqa: S102 - a fixed snippet, so that the frame's file is not a test file
    compile(
        "READS = {'float': float, 'bool': bool, 'int': int, 'repr': repr,\n"
        "         'item': lambda a: a.item(), 'tolist': lambda a: a.tolist()}\n"
        "def read(kind, a):\n"
        "    return READS[kind](a)\n",
        "/somewhere/autograd_cli/core/fake.py",
        "exec",
    ),
    _ENGINE,
)


def test_the_stand_in_refuses_what_cupy_refuses(device):
    with backend.using(device="gpu"):
        a = backend.asarray([1.0, 2.0])
        assert type(a) is strict_xp.StrictArray and backend.xp is strict_xp.xp
        with pytest.raises(TypeError, match="Implicit conversion to a NumPy array"):
            np.asarray(a)
        with pytest.raises(TypeError, match="Unsupported type"):
            a + np.array([1.0, 2.0])
        with pytest.raises(TypeError, match="Unsupported type"):
            np.array([1.0, 2.0]) * a
        with pytest.raises(AttributeError):
            backend.xp.errstate  # noqa: B018 - CuPy has none: NumPy's state is host-side
        with pytest.raises(TypeError):
            range(3)[a[0]]  # no __index__, as in CuPy
    # refused, and recorded (from this test file: the harness's, not the engine's)
    assert [(t.kind, t.verdict) for t in device.recorder.transfers] == [
        ("array", "harness"),
        ("host-operand", "harness"),
        ("host-operand", "harness"),
    ]


def test_results_stay_device_arrays(device):
    with backend.using(device="gpu"):
        xp = backend.xp
        a = xp.asarray(np.arange(6.0).reshape(2, 3))  # an upload: allowed
        for r in (a.sum(), a[0, 1], a.max(axis=0), xp.where(a > 2, a, 0.0), a @ a.T, -a, 2.0**a):
            assert type(r) is strict_xp.StrictArray
        assert xp.add is xp.add and hasattr(xp.add, "at") and xp.ndarray is strict_xp.StrictArray
        same(backend.to_numpy(xp.stack([a, a]).sum(axis=(0, 1))), np.array([6.0, 10.0, 14.0]))
        np.float64(2.0) * a  # a NumPy scalar is a scalar, as in CuPy
    assert device.counts() == {"seam": 1} and device.recorder.uploads == 1


@pytest.mark.parametrize("kind", ["float", "bool", "int", "item", "tolist", "repr"])
def test_a_read_outside_the_seam_is_a_violation_with_its_stack(device, kind):
    with backend.using(device="gpu"):
        _ENGINE["read"](kind, backend.asarray(1.0))
    (t,) = device.recorder.transfers
    assert (t.kind, t.verdict, t.size) == (kind, "violation", 1)
    assert t.site.startswith("core/fake.py:") and t.stack[-1].filename.endswith("fake.py")
    assert "fake.py" in device.recorder.report() and "in read" in device.recorder.report()
    device.recorder.transfers.clear()


def test_the_seam_and_the_two_syncs(device):
    with backend.using(device="gpu"):
        xp = backend.xp
        big = xp.asarray(np.linspace(0.0, 1.0, 4096))  # over all_finite's NumPy-only dot path
        assert backend.all_finite(big) and backend.all_finite(big[0])
        big[7] = math.nan
        assert not backend.all_finite(big) and backend.any_nonzero(big == 0)
        assert not backend.any_nonzero(big > 2)
        with backend.quiet():  # NumPy's error state only: nothing of the device
            r = xp.log(big - 1)
        assert backend.to_numpy(r)[-1] == -math.inf
        assert tensor([3.0]).item() == 3.0 and bool(tensor(1.0))  # through to_numpy
    assert device.counts() == {"sync:all_finite": 3, "sync:any_nonzero": 2, "seam": 3}


def test_a_sync_reads_one_element(device):
    with backend.using(device="gpu"):
        backend.any_nonzero(backend.asarray(1.0))
    assert device.counts() == {"sync:any_nonzero": 1}
    # a declared sync that reads more than one element is a violation
    with strict_xp.recording(seam=[backend.to_numpy], syncs=[_ENGINE["read"]]) as recorder:
        with backend.using(device="gpu"):
            _ENGINE["read"]("tolist", backend.asarray([1.0, 2.0]))
    assert [(t.kind, t.verdict) for t in recorder.transfers] == [("tolist", "violation")]


# ---------------------------------------------------------------------------
# The seeds' worked examples and the functional API, on the device
# ---------------------------------------------------------------------------


def _tests_of(module_name: str) -> list:
    module = importlib.import_module(module_name)
    return [
        pytest.param(fn, id=f"{module_name}.{name}")
        for name, fn in sorted(vars(module).items())
        if name.startswith("test_")
        and callable(fn)
        and not inspect.signature(fn).parameters
        and not any(m.name in ("xfail", "skip") for m in getattr(fn, "pytestmark", []))
    ]


@pytest.mark.parametrize("example", _tests_of("test_seeds_api") + _tests_of("test_functional"))
def test_worked_examples_on_the_device(device, example):
    with backend.using(device="gpu"):
        example()
    device.check()


# ---------------------------------------------------------------------------
# The commands, on the device: the CPU's output, no transfer outside the seam
# ---------------------------------------------------------------------------

COMMANDS = [
    ["grad", "3*a**3-b**2", "--a", "2", "--b", "6"],
    ["grad", "output = W @ x + b; sum(output)", "--W", "[[1,2,3,4],[1,2,3,4],[1,2,3,4]]"]
    + ["--x", "[3,2,4,5]", "--b", "[4,5,8]"],
    ["grad", "y = x + 2; z = y * y * 3", "--x", "[[1,2,3],[4,5,6]]"]
    + ["--grad-output", "[[1,1,1],[1,1,1]]"],
    ["grad", "where(x > 0, sqrt(x), 0) + max([x, 1]) + prod([x, 2]) + norm([x, 3])"]
    + ["--x", "-1"],
    ["grad", "abs(x) + relu(y) + log(x)", "--x", "0", "--y", "0"],  # kinks and a pole
    ["grad", "x**3", "--x", "2", "--order", "3"],
    ["grad", "logsumexp(v) + mean(v) + var(v) + std(v) + v[1]*v[2]", "--v", "[1,2,3]"],
    ["grad", "sum(softmax(v)) + erf(v[0]) + lgamma(v[1])", "--v", "[1,2,3]"],
    ["grad", "sum(x**2 * y)", "--x", "[1,2,3]", "--y", "2", "--dtype", "float32"],
    ["hessian", "x**2*y + sin(x*y)", "--x", "1", "--y", "2"],
    ["hessian", "sum(v**3)", "--v", "[1,2,3]"],
    ["jacobian", "[x*y, x+y, sin(x)]", "--x", "1", "--y", "2"],
    ["jacobian", "v*2", "--v", "[1,2,3]"],
    ["diff", "sin(x)*x**2", "--x", "1.5"],
    ["diff", "x**x", "--x", "2", "--order", "2"],
    ["check", "sin(x)*y", "--x", "1", "--y", "2"],
    ["check", "abs(x)", "--x", "0"],
    ["eval", "log(x) + 1/y", "--x", "-1", "--y", "0"],
    # issue 28: the pattern on the host, the compressed sweeps on the device (columns, rows,
    # a star coloring)
    ["hessian", "sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)", "--x", "[1,2,3,4,5,6]"]
    + ["--sparse"],
    ["hessian", "x[0]*sum(x[1:]**2) + sum(x**4)", "--x", "[1,2,3,4,5,6]", "--sparse"],
    ["jacobian", "concatenate([x[1:]**2 - x[:-1], [sum(x**2)]])", "--x", "[1,2,3,4,5,6]"]
    + ["--sparse"],
    ["jacobian", "cumsum(x) * sin(x)", "--x", "[1,2,3,4,5,6]", "--sparse"],
    # sparse Newton steps from 500 variables: the sweeps on the device, the solve on the host
    ["minimize", "sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)", "--x", str([0.8] * 600)],
    ["solve", "u = concatenate([[0], x, [0]]); u[:-2] - 2*u[1:-1] + u[2:] + 1e-6*exp(u[1:-1])"]
    + ["--x", str([0.0] * 600)],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_commands_on_the_device(device, cli, argv):
    cpu = cli(*argv, "--json", "--device", "cpu")
    gpu = cli(*argv, "--json", "--device", "gpu")
    device.check()
    assert (gpu.code, gpu.out, gpu.err) == (cpu.code, cpu.out, cpu.err)
    assert cpu.code == 0 and device.counts().get("seam", 0) >= 1


def test_pow_minus_half_at_minus_inf_on_the_device(device, cli):
    # ops._power's rsqrt rule ((-inf)**-0.5 is nan) for a device exponent, without a sync
    argv = ("grad", "x**-0.5", "--x", "-inf", "--json")
    assert cli(*argv, "--device", "gpu").out == cli(*argv, "--device", "cpu").out


# ---------------------------------------------------------------------------
# Every op of the op table: forward, reverse and forward mode on the device
# ---------------------------------------------------------------------------


def _op_results(name: str) -> list:
    """Forward, vjp (of the sum) and jvp (along ones) of op ``name`` at its sample, as
    host arrays (through backend.to_numpy)."""
    op = OPS[name]
    s = test_op_table.sample(name)
    inputs = [tensor(a, requires_grad=(i in s.wrt)) for i, a in enumerate(s.args)]
    out = apply(op, *inputs, **s.attrs)
    results = [out.numpy()]
    if s.wrt and op.vjp is not None:
        loss = out.sum().real if out.is_complex() else out.sum()  # PyTorch's: a real loss
        results += [g.numpy() for g in grad(loss, [inputs[i] for i in s.wrt])]
    if s.wrt and op.jvp is not None:
        plain = tuple(tensor(a) for a in s.args)
        with no_grad():
            base = apply(op, *plain, **s.attrs)
            for i in s.wrt:
                tangents = tuple(
                    tensor(np.ones(np.shape(s.args[k]))) if k == i else None
                    for k in range(len(plain))
                )
                needs = tuple(k == i for k in range(len(plain)))
                jt = op.jvp(RuleContext(op, plain, base, s.attrs, needs), tangents)
                results.append(None if jt is None else jt.numpy())
    return results


@pytest.mark.parametrize("name", sorted(n for n, op in OPS.items() if not op.internal))
def test_every_op_on_the_device(device, name):
    with np.errstate(all="ignore"):
        want = _op_results(name)
        with backend.using(device="gpu"):
            got = _op_results(name)
    device.check()
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if w is None:
            assert g is None
        else:
            same(g, w)


# ---------------------------------------------------------------------------
# Batch files: the vectorised path's transfers do not grow with the rows
# ---------------------------------------------------------------------------


def _csv(tmp_path, rows: int, name: str = "pts.csv"):
    path = tmp_path / name
    x = np.linspace(-2.5, 2.5, rows)
    y = np.linspace(0.5, 3.0, rows)[::-1]
    path.write_text("x,y\n" + "".join(f"{a!r},{b!r}\n" for a, b in zip(x.tolist(), y.tolist())))
    return str(path)


@pytest.mark.parametrize(
    "expr, op, dtype",
    [
        ("x*y + sin(x)*exp(y)", "grad", "float64"),
        ("x*y + tanh(x) / y", "grad", "float32"),
        ("sqrt(y) * log(y + x*x) + max([x, y, 1])", "eval", "float64"),
    ],
)
def test_batch_vectorised_on_the_device(device, cli, tmp_path, expr, op, dtype):
    counts = []
    for rows in (20, 2000):
        path = _csv(tmp_path, rows, f"pts{rows}.csv")
        argv = ("batch", path, "--expr", expr, "--op", op, "--dtype", dtype)
        cpu = cli(*argv, "--device", "cpu")
        before = dict(device.counts())
        gpu = cli(*argv, "--device", "gpu")
        after = device.counts()
        counts.append({k: after[k] - before.get(k, 0) for k in after})
        device.check()
        assert (gpu.code, gpu.out, gpu.err) == (cpu.code, cpu.out, cpu.err)
        assert cpu.code == 0 and len(gpu.out.splitlines()) == rows
    # one evaluation for the whole file: the same transfers for 2,000 rows as for 20
    assert counts[0] == counts[1], counts


def test_batch_other_paths_on_the_device(device, cli, tmp_path):
    """Row by row (hessian, jacobian, diff, JSONL lines of their own) and kinks met in some
    rows: more transfers, all through the seam or the syncs."""
    path = _csv(tmp_path, 40)
    jsonl = tmp_path / "requests.jsonl"
    jsonl.write_text(
        "".join(
            json.dumps(line) + "\n"
            for i in range(10)
            for line in (
                {"expr": "[x*y, sin(x)]", "op": "jacobian", "vars": {"x": i / 10, "y": 1.0}},
                {"expr": "x**3", "op": "diff", "vars": {"x": i / 10}},
                {"expr": "sum(v*v)", "op": "grad", "vars": {"v": [i, 1.0, 2.0]}},
            )
        )
    )
    runs = [
        ("batch", path, "--expr", "x**2*y", "--op", "hessian"),
        ("batch", path, "--expr", "[x*y, x+y]", "--op", "jacobian"),
        ("batch", path, "--expr", "x**3*y", "--op", "diff", "--wrt", "x", "--order", "3"),
        ("batch", path, "--expr", "abs(x) + log(y) + sqrt(x) + max([x, y])", "--op", "grad"),
        ("batch", str(jsonl)),
    ]
    for argv in runs:
        cpu = cli(*argv, "--device", "cpu")
        gpu = cli(*argv, "--device", "gpu")
        device.check()
        assert (gpu.code, gpu.out, gpu.err) == (cpu.code, cpu.out, cpu.err), argv


# ---------------------------------------------------------------------------
# bench/gpu_check.sh where there is no GPU: one line saying why, exit status 2
# ---------------------------------------------------------------------------

GPU_CHECK = pathlib.Path(__file__).resolve().parent.parent / "bench" / "gpu_check.sh"
NO_DEVICE_CUPY = """
class _Runtime:
    @staticmethod
    def getDeviceCount():
        raise RuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")
class cuda:
    runtime = _Runtime
"""


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="CuPy is installed")
@pytest.mark.parametrize(
    "cupy, why",
    [
        (None, "CuPy is not installed for "),
        (NO_DEVICE_CUPY, "no CUDA device (RuntimeError: cudaErrorNoDevice: no CUDA-capable"),
    ],
    ids=["no-cupy", "no-device"],
)
def test_gpu_check_without_a_gpu_says_why_in_one_line(tmp_path, cupy, why):
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    env = dict(os.environ, PYTHON=sys.executable)
    env.pop("GPU_CHECK_STAND_IN", None)
    if cupy is not None:  # a CuPy whose CUDA has no device
        (tmp_path / "cupy").mkdir()
        (tmp_path / "cupy" / "__init__.py").write_text(cupy)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [bash, str(GPU_CHECK)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("gpu_check: FAIL: " + why) and proc.stderr.count("\n") == 1
