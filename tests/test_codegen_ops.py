"""Every op with a ``code=`` fact, generated for PyTorch and JAX, against the generated NumPy
code and the engine (value, gradient and Hessian, float64, rtol 1e-12).

Each op is taken at its op-table sample (tests/test_op_table.py's ``sample``; the internal ops,
which the language cannot write, at samples of their own), made scalar by a weighted sum of
its elements written with getitem, mul and add (so the gradient of each element counts, with a
different weight), plus a few programs that reach the corners of the array ops (repeated and
mixed integer indices, negative steps, zeros of cumprod, ties of log_softmax, axes).

Where a target has no spelling for an op, the generator raises UnsupportedError naming it: that
is asserted for the deliberate refusals listed in :data:`REFUSED` (with the reason); any other
unsupported op fails, except one whose entry has no ``code=`` at all (that the op-table check
reports by name).  An op whose code is refused as a whole (``Code.refused``) must be refused.
"""

from __future__ import annotations

import numpy as np
import pytest
import test_op_table as table

import autograd_cli as ag
from autograd_cli.core import OPS, codegen
from autograd_cli.core.errors import UnsupportedError
from autograd_cli.core.program import Expr, Program, variables
from autograd_cli.grammar import parse

RTOL = 1e-12
ATOL = 1e-300

#: (op, target) pairs with no spelling on purpose, and why
REFUSED = {
    ("erfcx", "jax"): "jax.scipy.special has no erfcx",
    ("gamma", "torch"): "torch has no gamma of negative arguments (only lgamma, unsigned)",
    ("beta", "torch"): "torch has no beta function",
    ("j0", "jax"): "jax.scipy.special has no j0 (its bessel_jn is nan at 0, wrong past x ~ 50)",
    ("j1", "jax"): "jax.scipy.special has no j1 (its bessel_jn is nan at 0, wrong past x ~ 50)",
    ("betainc", "torch"): "torch has no betainc",
    ("svd", "torch"): "torch's LAPACK picks other signs for the singular vectors than NumPy's",
    ("eigh", "torch"): "torch's LAPACK picks other signs for the eigenvectors than NumPy's",
}


# The internal ops at points of their own: op -> (argument values, attrs).
INTERNAL = {
    "broadcast_to": ([[0.3, 0.7, 0.2]], {"shape": (2, 3)}),
    "sum_to": ([[[0.3, 0.7, 0.2], [0.6, -0.4, 0.9]]], {"shape": (1, 3)}),
    "scatter": ([[0.3, 0.7, -0.2]], {"index": ((0, 2, 0),), "shape": (3,)}),
    "mT": ([[[0.3, 0.7, 0.2], [0.6, -0.4, 0.9]]], {}),
    "zeros_like": ([[0.3, 0.7, 0.2]], {}),
}

# Corners of the array ops, as the language writes them: label -> (expression, values).
M = [[0.3, -0.7, 0.2], [0.6, 0.4, -0.9]]
PROGRAMS = {
    "repeated-index": ("x[[0, 2, 0]]*x[1]", {"x": [0.3, 0.7, 0.2]}),
    "mixed-index": ("M[1, [0, 2]]*M[[1, 0], 1:]", {"M": M}),
    "flip-all": ("flip(M)*M", {"M": M}),
    "cumsum-flat": ("cumsum(M)*reshape(M, [6])", {"M": M}),
    "cumprod-zeros": ("cumprod(x, 0)", {"x": [0.5, 0.0, 1.5, 0.0, -2.0]}),
    "roll-axes": ("roll(M, 4, [0, 1])*M", {"M": M}),
    "roll-flat": ("roll(M, -1)*M", {"M": M}),
    "softmax-axis0": ("softmax(M, 0)*M", {"M": M}),
    "log_softmax-ties": ("log_softmax(x)*x", {"x": [0.5, 0.5, -1.0]}),
    "repeat-flat": ("repeat(M, 2)", {"M": M}),
    "tile-matrix": ("tile(M, 2)*tile(M, 2)", {"M": M}),
    "concatenate-1": ("concatenate([M, M*M], axis=1)", {"M": M}),
    "stack-last": ("stack([M, -M], -1)*stack([M, M], -1)", {"M": M}),
    "split-indices": ("split(x, [1, 3])[1]*x[1:3]", {"x": [0.3, 0.7, 0.2, 0.5]}),
    "transpose-3d": (
        "transpose(T)*transpose(T)",
        {"T": np.linspace(-1.0, 1.0, 12).reshape(2, 3, 2).tolist()},
    ),
    # issue 27 (arrays): the list and axes forms, and the modes' offsets of the signal ops
    "tile-counts": ("tile(x, [2, 1, 2])*tile(x, [2, 1, 2])", {"x": [0.3, -0.7, 0.2]}),
    "transpose-axes": (
        "transpose(T, [1, 2, 0])*transpose(T, [1, 2, 0])",
        {"T": np.linspace(-1.0, 1.0, 12).reshape(2, 3, 2).tolist()},
    ),
    "kron-matrix": ("kron(M, x)*kron(M, x)", {"M": M, "x": [0.3, -0.5]}),
    "inner-matrix": ("inner(M, M)*inner(M, M)", {"M": M}),
    "cross-broadcast": ("cross(M, x)*cross(M, x)", {"M": M, "x": [0.3, -0.5, 0.9]}),
    "convolve-same": ("convolve(x, v, 'same')**2", {"x": [0.3, -0.5], "v": [0.1, 0.7, -0.4, 0.9]}),
    "correlate-same": (
        "correlate(x, v, 'same')**2",
        {"x": [0.3, -0.5], "v": [0.1, 0.7, -0.4, 0.9]},
    ),
    "correlate-full": (
        "correlate(v, x, 'full')**2",
        {"x": [0.3, -0.5], "v": [0.1, 0.7, -0.4, 0.9]},
    ),
    "convolve-valid": (
        "convolve(v, x, 'valid')**2",
        {"x": [0.3, -0.5], "v": [0.1, 0.7, -0.4, 0.9]},
    ),
    "literal-numbers": ("[x, 1.0, x*x]*[x, x, 2]", {"x": 0.3}),
}

#: (op, target) pairs whose generated code does not meet the contract today: findings for the
#: op's entry (core/ops/elementwise.py, not this test's to change), kept visible as strict
#: xfails (an entry fixed makes its xfail fail: then drop it here)
KNOWN_FAILING = {
    ("digamma", "torch"): "torch's polygamma(1, x) (digamma's derivative) is ~1e-10 off scipy's",
    ("lgamma", "torch"): "its second derivative is torch's polygamma(1, x), ~1e-10 off",
    ("polygamma", "torch"): "torch's polygamma(1, x) is ~1e-10 off scipy's",
}

#: the same for float32 code
FLOAT32_FAILING: dict = {}


def _scalar(out: Expr, value: np.ndarray) -> Expr:
    """``out`` summed with a distinct weight per element, by getitem, mul and add only (of a
    complex ``out``, the real part: PyTorch's real loss)."""
    if np.iscomplexobj(value):
        out, value = Expr("real", (out,)), value.real
    if value.ndim == 0:
        return out
    flat = Expr("reshape", (out,), {"shape": (value.size,)})
    total = None
    for k in range(value.size):
        term = Expr("mul", (Expr.const(1.0 + 0.25 * k), Expr("getitem", (flat,), {"index": (k,)})))
        total = term if total is None else Expr("add", (total, term))
    return total


def _case(expr: Expr, values: dict) -> tuple[Program, dict]:
    values = {k: np.asarray(v, dtype=np.float64) for k, v in values.items()}
    out = _scalar(expr, table.run(expr, values))
    return Program(source="", output=out, inputs=variables(out)), values


def op_case(name: str):
    """The op's program and values, and whether it is differentiated at all."""
    op = OPS[name]
    if name in INTERNAL:
        arrays, attrs = INTERNAL[name]
        names = ["x", "y", "z"][: len(arrays)]
        expr = Expr(name, tuple(Expr.var(n) for n in names), attrs)
        values = dict(zip(names, arrays))
    else:
        s = table.sample(name)
        expr, values = s.expr, s.values
    differentiable = op.vjp is not None and not table.declared_not_differentiable(op)
    return (*_case(expr, values), differentiable)


def _run(program: Program, values: dict, target: str, differentiable: bool) -> tuple:
    wrt = [v for v in program.inputs if v in values]
    generated = codegen.generate(program, values, wrt=wrt, target=target, hessian=differentiable)
    namespace: dict = {}
    exec(compile(generated.code, f"<codegen {target}>", "exec"), namespace)
    with np.errstate(all="ignore"):
        got = namespace["f"](*[values[v] for v in program.inputs])
    return generated.outputs, [_host(g) for g in got]


def _host(value) -> np.ndarray:
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=np.float64)


def _engine(program: Program, values: dict, differentiable: bool) -> list:
    wrt = [v for v in program.inputs if v in values]
    want = (ag.hessian if differentiable else ag.grad)(program, values, wrt)
    out = [want.value] + [want.grad[v] for v in wrt]
    if differentiable:
        out += [want.hessian[a][b] for a in wrt for b in wrt]
    return [np.asarray(w, dtype=np.float64) for w in out]


def _module(target: str):
    if target == "torch":
        return pytest.importorskip("torch")
    if target == "jax":
        jax = pytest.importorskip("jax")
        jax.config.update("jax_enable_x64", True)
        return jax
    return np


def _pending(exc: UnsupportedError) -> str | None:
    """The op an UnsupportedError names when that op has no code= yet (the op-table check
    fails for it by name), else None."""
    name = exc.details.get("op")
    op = OPS.get(name) if name else None
    return name if op is not None and op.code is None else None


def check_target(program: Program, values: dict, differentiable: bool, target: str, name=None):
    """The generated ``target`` code agrees with the generated NumPy code and the engine; a
    refusal is asserted as declared (REFUSED, Code.refused) and skipped where an op has no
    code= yet."""
    _module(target)
    refused = None if name is None else OPS[name].code and OPS[name].code.refused
    try:
        labels, got = _run(program, values, target, differentiable)
    except UnsupportedError as exc:
        pending = _pending(exc)
        if pending is not None:
            pytest.skip(f"{pending} has no code= yet (the op-table check names it)")
        if refused:
            return
        op = exc.details.get("op")
        assert (op, target) in REFUSED, f"unexpected refusal: {exc}"
        assert op in str(exc) or OPS[op].printing.names[0] in str(exc)
        return
    assert not refused, f"{name} declares its code refused ({refused}) but {target} wrote it"
    _, reference = _run(program, values, "numpy", differentiable)
    engine = _engine(program, values, differentiable)
    assert len(got) == len(engine) == len(reference)
    for label, g, r, w in zip(labels, got, reference, engine):
        assert g.shape == w.shape, (label, g.shape, w.shape)
        # an entry that is 0 in exact arithmetic may be roundoff in another library's
        # order of sums (torch's LU for det): the floor is rtol of the output's size
        atol = max(ATOL, RTOL * float(np.max(np.abs(w[np.isfinite(w)]), initial=0.0)))
        assert np.allclose(g, w, rtol=RTOL, atol=atol, equal_nan=True), (label, g, w)
        assert np.allclose(g, r, rtol=RTOL, atol=atol, equal_nan=True), (label, g, r)


def _with_code() -> list[str]:
    return sorted(name for name, op in OPS.items() if op.code is not None)


def _op_targets(failing: dict) -> list:
    return [
        pytest.param(
            name,
            target,
            marks=[pytest.mark.xfail(reason=failing[name, target], strict=True)]
            if (name, target) in failing
            else [],
        )
        for name in _with_code()
        for target in ("numpy", "torch", "jax")
    ]


@pytest.mark.parametrize(("name", "target"), _op_targets(KNOWN_FAILING))
def test_each_op_in_each_target_agrees_with_the_engine(name, target):
    program, values, differentiable = op_case(name)
    check_target(program, values, differentiable, target, name)


@pytest.mark.parametrize("target", ["numpy", "torch", "jax"])
@pytest.mark.parametrize("label", sorted(PROGRAMS))
def test_corners_of_the_array_ops(label, target):
    text, values = PROGRAMS[label]
    program, values = _case(parse(text).output, values)
    check_target(program, values, True, target)


@pytest.mark.parametrize("target", ["numpy", "torch", "jax"])
def test_negative_steps_and_their_scatter(target):
    # no expression writes x[::-1], but the rules may: torch indexes it by flat positions
    x = Expr.var("x")
    expr = Expr("getitem", (x,), {"index": (slice(None, None, -2),)})
    program, values = _case(Expr("mul", (expr, expr)), {"x": [0.3, -0.7, 0.2, 0.5, 0.9]})
    check_target(program, values, True, target)


def test_every_refusal_is_for_an_op_with_code():
    # a stale entry (an op renamed, or given its spelling since) is an error, not a pass
    # (a function spelling may refuse by returning None: svd's U and Vh in torch)
    for op, target in REFUSED:
        spelling = OPS[op].code.spelling(target) if OPS[op].code is not None else "no code"
        assert spelling is None or callable(spelling), (op, target)


def test_a_refused_op_is_refused_in_every_target():
    refused = [name for name, op in OPS.items() if op.code is not None and op.code.refused]
    assert "sort" in refused
    for name in refused:
        program, values, differentiable = op_case(name)
        for target in ("numpy", "torch", "jax"):
            with pytest.raises(UnsupportedError, match=name):
                codegen.generate(program, values, target=target, hessian=differentiable)


def test_the_check_fails_for_a_wrong_spelling(monkeypatch):
    # the comparison can fail: flip written as the identity is caught in every target
    wrong = OPS["flip"].code.__class__("{0}", "{0}", "{0}")
    monkeypatch.setattr(OPS["flip"], "code", wrong)
    program, values, _ = op_case("flip")
    with pytest.raises(AssertionError):
        check_target(program, values, True, "numpy", "flip")


@pytest.mark.parametrize(("name", "target"), _op_targets(FLOAT32_FAILING))
def test_float32_code_computes_in_float32(name, target):
    # a number written inline, an integer count or a fresh zeros array must not make the
    # float32 code float64 (NumPy promotes a float64 array it meets)
    _module(target)
    program, values, differentiable = op_case(name)
    wrt = [v for v in program.inputs if v in values]
    try:
        generated = codegen.generate(
            program, values, wrt=wrt, target=target, hessian=differentiable, dtype="float32"
        )
    except UnsupportedError as exc:
        pytest.skip(f"no code for {target}: {exc}")
    namespace: dict = {}
    exec(compile(generated.code, "<codegen float32>", "exec"), namespace)
    with np.errstate(all="ignore"):
        got = namespace["f"](*[values[v] for v in program.inputs])
    engine = _engine(program, values, differentiable)
    for label, g, w in zip(generated.outputs, got, engine):
        assert str(g.dtype).endswith("float32"), (label, g.dtype)
        assert np.allclose(_host(g), w, rtol=1e-4, atol=1e-6, equal_nan=True), (label, g, w)


@pytest.mark.parametrize(("target", "dtype"), [("numpy", "float32"), ("torch", "float64")])
def test_a_where_of_two_numbers_takes_the_codes_dtype(target, dtype):
    # where(c, 2.0, 3.0): NumPy makes float64 of two numbers, PyTorch its default float32;
    # the gradient's where(c, 0.0, 1.0) of a where in a derivative rule (sinc's) as well
    _module(target)
    program = parse("sum(where(x > 0, 2.0, 3.0) * x**2 + sinc(x))")
    values = {"x": np.array([0.5, -1.5, 0.01])}
    generated = codegen.generate(
        program, values, wrt=["x"], target=target, hessian=True, dtype=dtype
    )
    namespace: dict = {}
    exec(compile(generated.code, "<codegen where>", "exec"), namespace)
    got = namespace["f"](values["x"].astype(dtype))
    for label, g in zip(generated.outputs, got):
        assert str(g.dtype).endswith(dtype), (label, g.dtype)
    want = np.where(values["x"] > 0, 4.0, 6.0) * values["x"]
    want = want + np.array([-1.2732395447351628, -0.14147106052612918, -0.0328954344817124])
    np.testing.assert_allclose(_host(got[1]), want, rtol=1e-5 if dtype == "float32" else 1e-12)
