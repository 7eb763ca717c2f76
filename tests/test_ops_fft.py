"""The FFT family (core/ops/fft.py) against NumPy's values and torch.fft's gradients.

Each transform is applied with the Tensor API (``apply(OPS["fft"], x, n=8, norm="ortho")``)
to complex128 and float64 inputs of odd, even and prime lengths, with every norm and with
``n=``/``s=`` shorter and longer than the input; its value is compared with numpy.fft's and
``x.grad`` after ``y.backward(G)`` (G a random cotangent, complex where the output is) with
torch's ``x.grad`` for the same x and G.  Second order (the vjp's own vjp, ``create_graph``)
and forward mode are compared the same way.  The language's side: printing that parses
back, the attributes' checks, batching and generated code.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from autograd_cli.core import OPS, Tensor, apply, grad, no_grad
from autograd_cli.core.errors import InputError, ShapeError
from autograd_cli.core.ops import RuleContext
from autograd_cli.core.printing import to_latex, to_text
from autograd_cli.grammar import parse

NORMS = ("backward", "ortho", "forward")
RTOL = 1e-12

# (n, input length): n None (the input's), shorter, longer, odd, even, prime
ONE_AXIS_LENGTHS = [(None, 5), (None, 8), (None, 7), (None, 6), (3, 5), (8, 5), (11, 6), (4, 9)]


def _rng(*key) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _random(rng, shape, complex_: bool) -> np.ndarray:
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if complex_ else x


def _close(ours, theirs) -> None:
    if hasattr(theirs, "resolve_conj"):  # a torch tensor (ifft's may carry a conj bit)
        theirs = theirs.detach().resolve_conj().resolve_neg().numpy()
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape
    scale = max(1.0, float(np.max(np.abs(theirs), initial=0.0)))
    assert np.max(np.abs(ours - theirs), initial=0.0) <= RTOL * scale, (ours, theirs)


def _theirs_kwargs(name: str, attrs: dict) -> dict:
    """torch.fft's keywords for our attributes (dim for axis/axes)."""
    out = {}
    for key, value in attrs.items():
        key = {"axis": "dim", "axes": "dim"}.get(key, key)
        out[key] = value
    return out


def _numpy_value(name, x, attrs):
    kwargs = dict(attrs)
    if kwargs.get("s") is not None and kwargs.get("axes") is None and name[-1] != "2":
        kwargs["axes"] = tuple(range(x.ndim - len(kwargs["s"]), x.ndim))
    return getattr(np.fft, name)(x, **kwargs)


def _compare(torch, name, x, attrs, seed):
    """Value against numpy.fft; the gradient for a random cotangent against torch.fft's."""
    rng = _rng(name, seed)
    ours_x = Tensor(x.copy(), requires_grad=True)
    y = apply(OPS[name], ours_x, **attrs)
    _close(y.numpy(), _numpy_value(name, x, attrs))
    G = _random(rng, y.shape, np.iscomplexobj(y.numpy()))
    y.backward(G)
    tx = torch.tensor(x, requires_grad=True)
    ty = getattr(torch.fft, name)(tx, **_theirs_kwargs(name, attrs))
    _close(y.numpy(), ty)
    ty.backward(torch.tensor(G))
    ours = ours_x.grad.numpy()
    if not np.iscomplexobj(x):
        # a real input's gradient is the real part of the adjoint's (the engine takes it
        # where it accumulates into a real tensor; until then the rule's may be complex)
        ours = np.real(ours)
    _close(ours, tx.grad)
    return y


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n, length", ONE_AXIS_LENGTHS)
@pytest.mark.parametrize("name", ["fft", "ifft"])
def test_complex_transforms_along_one_axis(torch, name, n, length, norm):
    for complex_ in (True, False):
        x = _random(_rng(name, length, complex_), (length,), complex_)
        _compare(torch, name, x, {"n": n, "norm": norm}, (n, length, norm, complex_))


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n, length", ONE_AXIS_LENGTHS)
def test_rfft_has_torchs_hermitian_gradient(torch, n, length, norm):
    x = _random(_rng("rfft", length), (length,), False)
    _compare(torch, "rfft", x, {"n": n, "norm": norm}, (n, length, norm))


# irfft: (n, input length m); n None is 2 (m - 1)
IRFFT_LENGTHS = [(None, 5), (None, 4), (7, 4), (8, 5), (6, 4), (5, 3), (3, 6), (9, 5), (13, 7)]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n, length", IRFFT_LENGTHS)
def test_irfft_has_torchs_hermitian_gradient(torch, n, length, norm):
    x = _random(_rng("irfft", length), (length,), True)
    _compare(torch, "irfft", x, {"n": n, "norm": norm}, (n, length, norm))


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft"])
def test_one_axis_of_a_matrix(torch, name, axis):
    complex_ = name not in ("rfft",)
    x = _random(_rng(name, axis), (5, 6), complex_)
    for n in (None, 4, 9):
        _compare(torch, name, x, {"n": n, "axis": axis, "norm": "ortho"}, (axis, n))


# (s, axes) of the n-d transforms of a (4, 5, 6) array
ND_PLANS = [
    (None, None),
    ((3, 7), None),
    (None, (0, 2)),
    (None, (2, 0)),
    ((5, 3), (1, 0)),
    ((2, 9, 7), (0, 1, 2)),
    ((6,), (1,)),
]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("s, axes", ND_PLANS)
@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
def test_transforms_along_several_axes(torch, name, s, axes, norm):
    complex_ = name != "rfftn"
    x = _random(_rng(name, s, axes), (4, 5, 6), complex_)
    attrs = {"s": s, "axes": axes, "norm": norm}
    _compare(torch, name, x, {k: v for k, v in attrs.items() if v is not None}, (s, axes))
    if name in ("fftn", "ifftn"):  # a real input: the real part of the adjoint's
        _compare(torch, name, x.real.copy(), {"s": s, "axes": axes, "norm": norm}, (s, axes))


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("s, axes", [(None, (-2, -1)), ((3, 8), (-2, -1)), (None, (0, 2))])
@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2"])
def test_two_dimensional_transforms(torch, name, s, axes, norm):
    x = _random(_rng(name, s, axes), (4, 5, 7), name != "rfft2")
    _compare(torch, name, x, {"s": s, "axes": axes, "norm": norm}, (s, axes, norm))


@pytest.mark.parametrize("axes", [None, 0, (0, 1), (1,)])
@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
def test_shifts(torch, name, axes):
    for complex_ in (False, True):
        x = _random(_rng(name, axes, complex_), (5, 4), complex_)
        _compare(torch, name, x, {"axes": axes}, (axes, complex_))


@pytest.mark.parametrize("n, d", [(1, 1.0), (8, 1.0), (7, 0.1), (10, -2.5)])
@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
def test_frequencies(torch, name, n, d):
    y = apply(OPS[name], n=n, d=d)
    assert y.numpy().dtype == np.float64 and not y.requires_grad
    _close(y.numpy(), getattr(np.fft, name)(n, d))
    _close(y.numpy(), getattr(torch.fft, name)(n, d, dtype=torch.float64))


# ---------------------------------------------------------------------------
# Higher order and forward mode
# ---------------------------------------------------------------------------

SECOND_ORDER = [
    ("fft", {"n": 7, "norm": "backward"}, (5,), True),
    ("ifft", {"n": 3, "norm": "ortho"}, (6,), True),
    ("rfft", {"n": 9, "norm": "forward"}, (6,), False),
    ("rfft", {"norm": "backward"}, (8,), False),
    ("irfft", {"n": 8, "norm": "backward"}, (6,), True),
    ("irfft", {"n": 7, "norm": "ortho"}, (3,), True),
    ("rfftn", {"s": (4, 6), "axes": (0, 1), "norm": "ortho"}, (3, 5), False),
    ("irfftn", {"s": (5, 4), "axes": (1, 0), "norm": "forward"}, (4, 6), True),
    ("fft2", {"s": (3, 6), "norm": "backward"}, (4, 5), True),
    ("rfft2", {"norm": "ortho"}, (4, 6), False),
    ("irfft2", {"s": (3, 7)}, (4, 5), True),
]


@pytest.mark.parametrize("name, attrs, shape, complex_", SECOND_ORDER)
def test_the_vjp_differentiates_again(torch, name, attrs, shape, complex_):
    """d<x.grad, H>/dG with create_graph: the vjp's own vjp (the transform again, up to the
    norm and the Hermitian weights), against torch's double backward."""
    rng = _rng("second", name, shape)
    x = _random(rng, shape, complex_)
    with no_grad():
        out = apply(OPS[name], Tensor(x), **attrs).numpy()
    G = _random(rng, out.shape, np.iscomplexobj(out))
    H = _random(rng, shape, complex_)
    ours_x, ours_g = Tensor(x, requires_grad=True), Tensor(G, requires_grad=True)
    (gx,) = grad(apply(OPS[name], ours_x, **attrs), [ours_x], ours_g, create_graph=True)
    gx.backward(H)
    tx = torch.tensor(x, requires_grad=True)
    tg = torch.tensor(G, requires_grad=True)
    ty = getattr(torch.fft, name)(tx, **_theirs_kwargs(name, attrs))
    (tgx,) = torch.autograd.grad(ty, tx, tg, create_graph=True)
    tgx.backward(torch.tensor(H))
    _close(gx.detach().numpy(), tgx)
    _close(ours_g.grad.numpy(), tg.grad)


@pytest.mark.parametrize("name, attrs, shape, complex_", SECOND_ORDER)
def test_forward_mode_is_the_transform_of_the_tangent(torch, name, attrs, shape, complex_):
    rng = _rng("jvp", name, shape)
    x, t = _random(rng, shape, complex_), _random(rng, shape, complex_)
    op = OPS[name]
    with no_grad():
        out = apply(op, Tensor(x), **attrs)
        ctx = RuleContext(op, (Tensor(x),), out, attrs, (True,))
        ours = op.jvp(ctx, (Tensor(t),)).numpy()
    from torch.func import jvp

    fn = getattr(torch.fft, name)
    kwargs = _theirs_kwargs(name, attrs)
    _, theirs = jvp(lambda a: fn(a, **kwargs), (torch.tensor(x),), (torch.tensor(t),))
    _close(ours, theirs)


def test_complex64_stays_single_precision():
    x = Tensor(np.array([1 + 2j, 3j, 2, 1 - 1j], dtype=np.complex64), requires_grad=True)
    y = apply(OPS["fft"], x, norm="ortho")
    assert y.numpy().dtype == np.complex64
    y.backward(np.ones(4, np.complex64))
    assert x.grad.numpy().dtype == np.complex64
    r = apply(OPS["rfft"], Tensor(np.arange(5, dtype=np.float32), requires_grad=True))
    assert r.numpy().dtype == np.complex64


# ---------------------------------------------------------------------------
# Refusals
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, x, attrs, said",
    [
        ("rfft", np.array([1 + 1j, 2.0]), {}, "takes a real array"),
        ("rfft2", np.ones((2, 2)) * 1j, {}, r"rfft2\(\) takes a real array: fft2\(\)"),
        ("fft", np.array(2.0), {}, "out of range"),
        ("fftn", np.ones((2, 2)), {"axes": (0, 0)}, "repeat an axis"),
        ("fftn", np.ones((2, 2)), {"s": (2, 2), "axes": (0,)}, "2 lengths for 1 axes"),
        ("fftn", np.ones(3), {"s": (2, 2)}, "2 lengths for an array of 1"),
        ("fft", np.ones(3), {"axis": 1}, "axis 1 is out of range"),
        ("fft", np.ones(3), {"norm": "half"}, 'norm must be "backward", "ortho" or "forward"'),
        ("fftn", np.array(2.0), {}, "a number has no axis to transform"),
        ("fftn", np.ones(3), {"axes": ()}, "no axes given"),
    ],
)
def test_shapes_that_do_not_fit_are_shape_errors(name, x, attrs, said):
    with pytest.raises(ShapeError, match=said):
        apply(OPS[name], Tensor(x), **attrs)


# ---------------------------------------------------------------------------
# The language: printing that parses back, attribute checks
# ---------------------------------------------------------------------------

ROUND_TRIPS = [
    "fft(x)",
    "fft(x, n=8, norm='ortho')",
    "ifft(x, axis=0, norm='forward')",
    "rfft(x, n=3)",
    "irfft(x, n=9, axis=0)",
    "fft2(x, s=[3, 4])",
    "ifft2(x, axes=[0, 1], norm='ortho')",
    "fftn(x, s=[2, 5], axes=[1, 0])",
    "rfftn(x, axes=[0])",
    "rfft2(x, s=[4, 6], norm='ortho')",
    "irfft2(x, axes=[1, 0])",
    "irfftn(x, s=[4, 4], axes=[0, 1], norm='forward')",
    "fftshift(x)",
    "ifftshift(x, axes=0)",
    "fftshift(x, axes=[0, 1])",
    "fftfreq(8)",
    "rfftfreq(7, d=0.5)",
]


@pytest.mark.parametrize("text", ROUND_TRIPS)
def test_printing_parses_back(text):
    expr = parse(text).output
    assert to_text(expr) == text
    assert to_text(parse(to_text(expr)).output) == text


def test_a_misplaced_string_names_every_place_that_takes_one():
    with pytest.raises(InputError) as info:
        parse("'abc' + x")
    assert "or the norm of fft, ifft, rfft, irfft, fft2" in str(info.value)


def test_double_quotes_and_positions_read_as_keywords():
    assert to_text(parse('fft(x, 8, 0, "ortho")').output) == "fft(x, n=8, axis=0, norm='ortho')"
    assert to_text(parse('fft2(x, [2, 3], [0, 1], "backward")').output) == (
        "fft2(x, s=[2, 3], axes=[0, 1])"
    )
    assert to_text(parse("fftfreq(8, 0.25)").output) == "fftfreq(8, d=0.25)"


@pytest.mark.parametrize(
    "text, said",
    [
        ("fft(x, n=0)", "n of fft() must be a length from 1"),
        ("fft(x, n=2.5)", "n of fft() must be a whole number"),
        ("fft(x, norm='half')", 'norm of fft() must be "backward", "ortho" or "forward"'),
        ("fft(x, norm=1)", "norm of fft() must be"),
        ("fftn(x, s=[2, 0])", "s of fftn() must be a length from 1"),
        ("fftfreq(8, d=0)", "d of fftfreq() must be a finite number other than 0"),
        ("fftfreq()", "fftfreq() needs its n argument"),
        ("fft(x, n=y)", "must be a constant"),
        ("fft(x, n=[1, 2])", "n of fft() must be a whole number, not a list"),
        ("fft(x, n='a')", "n of fft() must be a whole number, not a string"),
        ("fft(x, norm=ortho)", "got a name (a string is in quotes)"),
        ("fft(x, norm=[1])", "got a list"),
        ("fftfreq(4, d=[1])", "d of fftfreq() must be a real number, not a list"),
    ],
)
def test_attributes_are_checked_before_evaluation(text, said):
    with pytest.raises(InputError) as info:
        parse(text)
    assert said in str(info.value)


def test_latex_writes_the_attributes():
    latex = to_latex(parse("fft(x, n=8, norm='ortho') + fftfreq(8, d=0.5)").output)
    assert latex == (
        "\\operatorname{fft}\\left(x, \\mathrm{n}=8, \\mathrm{norm}='ortho'\\right) + "
        "\\operatorname{fftfreq}\\left(8, \\mathrm{d}=0.5\\right)"
    )


@pytest.mark.parametrize(
    "name", ["fft", "ifft", "rfft", "irfft", "fft2", "rfft2", "irfft2", "fftn", "irfftn"]
)
def test_grad_fn_names_are_torchs(torch, name):
    for complex_ in (False, True):
        if name.startswith("rfft") and complex_:
            continue
        x = _random(_rng("names", name), (4, 4), complex_)
        ours = apply(OPS[name], Tensor(x, requires_grad=True)).grad_fn.name()
        theirs = getattr(torch.fft, name)(torch.tensor(x, requires_grad=True)).grad_fn.name()
        assert ours == theirs, (name, complex_)


# ---------------------------------------------------------------------------
# Batching, generated code, limits, the command line
# ---------------------------------------------------------------------------

BATCHED = [
    ("sum(irfft(rfft(x, n=8)*rfft(y, n=8), n=8)**2)", {"x": (5,), "y": (5,)}),
    ("sum(fftshift(x)*fftfreq(5))", {"x": (5,)}),
    ("sum(irfftn(rfftn(M, axes=[0, 1])*M[0, 0], s=[3, 4], axes=[0, 1])*M)", {"M": (3, 4)}),
    ("sum(irfft(x, axis=0, norm='ortho')**2)", {"x": (4,)}),
    ("sum(ifftshift(M, axes=[0])*M) + sum(irfft(fft2(M), axis=0)**2)", {"M": (3, 4)}),
]


@pytest.mark.parametrize("text, shapes", BATCHED)
def test_batched_rows_are_each_rows_own(text, shapes):
    from autograd_cli.core import batch as core_batch
    from autograd_cli.core.api import grad_of

    program = parse(text)
    rng = _rng("batch", text)
    rows = 3
    columns = {k: rng.standard_normal((rows,) + s) for k, s in shapes.items()}
    if "fftfreq" in text:  # no input: declared row by row (batching=("rows",))
        with pytest.raises(core_batch.Unbatchable, match="fftfreq"):
            core_batch.evaluate_batch(program, columns, rows, grad=True)
        return
    result = core_batch.evaluate_batch(program, columns, rows, grad=True)
    for i in range(rows):
        one = grad_of(program, {k: v[i] for k, v in columns.items()})
        _close(np.asarray(result.value)[i], one.value)
        for k in shapes:
            _close(np.real(np.asarray(result.grad[k])[i]), np.real(one.grad[k]))


def test_a_transform_over_every_axis_is_evaluated_row_by_row():
    from autograd_cli.core import batch as core_batch

    program = parse("sum(irfftn(x)**2)")
    with pytest.raises(core_batch.Unbatchable, match="without an axis"):
        core_batch.evaluate_batch(program, {"x": np.ones((2, 4))}, 2, grad=True)


# programs whose values and gradients are real (the generated code reads and returns real
# arrays): complex values inside, through the Hermitian rules of rfft and irfft
CODEGEN = [
    (
        "sum(irfft(rfft(x, n=8)*rfft(y, n=8), n=8)**2)",
        {"x": [1, 2, 3, 4, 5], "y": [0.5, -1, 2, 0.1, 3]},
    ),
    ("sum(irfft(rfft(x, n=7), n=6, norm='ortho')**2)", {"x": [1, 2, 3, 4, 5]}),
    ("sum(fftshift(x)*fftfreq(5, d=0.1)) + sum(ifftshift(x)**2)", {"x": [1, 2, 3, 4, 5]}),
    (
        "sum(irfftn(rfftn(M, s=[4, 4], axes=[0, 1]), s=[3, 5], axes=[1, 0])**2)",
        {"M": [[1, 2, 3], [4, 5, 6]]},
    ),
]


@pytest.mark.parametrize("target", ["numpy", "torch", "jax"])
@pytest.mark.parametrize("text, values", CODEGEN)
def test_generated_code_agrees_with_the_engine(text, values, target):
    import test_codegen_ops

    program = parse(text)
    values = {k: np.asarray(v, dtype=np.float64) for k, v in values.items()}
    # the Hessian of a product of two transforms holds complex constants, which the
    # generated code cannot write yet (it writes constants in its real dtype): gradient only
    hessian = "*rfft" not in text
    test_codegen_ops.check_target(program, values, hessian, target)


def test_c_refuses_the_fft_with_the_reason():
    from autograd_cli.core import codegen
    from autograd_cli.core.errors import UnsupportedError

    values = {"x": np.ones(3), "M": np.ones((2, 2))}
    for text in ("sum(irfft(x)**2)", "sum(fft2(M)*M)", "sum(fftn(x*fftfreq(3)))"):
        program = parse(text)
        with pytest.raises(UnsupportedError, match="C99 with libm has no FFT"):
            codegen.generate(program, {v: values[v] for v in program.inputs}, target="c")
    # the shifts are gathers, and fftfreq of no input a constant: C writes them
    program = parse("sum(fftshift(x)*fftfreq(3))")
    assert "ag_" in codegen.generate(program, {"x": np.ones(3)}, target="c").code


def test_a_result_over_the_memory_limit_is_refused_before_it_is_made():
    from autograd_cli.core import limits
    from autograd_cli.core.errors import LimitError

    with limits.using("1M"):
        with pytest.raises(LimitError, match="fft's result"):
            apply(OPS["fft"], Tensor(np.ones(3)), n=2**30)
        with pytest.raises(LimitError, match="fftfreq's result"):
            apply(OPS["fftfreq"], n=2**30)
        with pytest.raises(LimitError, match="irfftn's result"):
            apply(OPS["irfftn"], Tensor(np.ones((2, 2))), s=(2**15, 2**15))


def test_the_command_line_end_to_end(cli):
    r = cli("grad", "sum(fftshift(x)*[1, 2, 3, 4])", "--x", "[1, 2, 3, 4]", "--json")
    assert r.code == 0 and r.json["grad"]["x"] == [3.0, 4.0, 1.0, 2.0], r.err
    r = cli("eval", "sum(fftfreq(4, d=0.5)**2)", "--json")
    assert r.code == 0 and r.json["value"] == 1.5, r.err
    r = cli("diff", "sum(irfft(x))", "--wrt", "x")
    assert r.code == 1 and "use grad for irfft" in r.err
    r = cli("grad", "fft(x, norm='half')", "--x", "[1, 2]")
    assert r.code == 2 and 'must be "backward", "ortho" or "forward"' in r.err
    r = cli("codegen", "sum(irfft(x)**2)", "--x", "[1, 2, 3]", "--target", "c")
    assert r.code == 1 and "C99 with libm has no FFT" in r.err


# ---------------------------------------------------------------------------
# Oracles that are not pocketfft: the DFT as a sum, central differences
# ---------------------------------------------------------------------------


def _dft(x, n, norm, inverse=False):
    """The DFT of x (zero-padded or cut to n) as the matrix product it is defined by."""
    v = np.zeros(n, dtype=complex)
    v[: min(n, len(x))] = x[:n]
    k = np.arange(n)
    w = np.exp((2j if inverse else -2j) * np.pi * np.outer(k, k) / n)
    scale = {"backward": 1 / n if inverse else 1.0, "ortho": 1 / np.sqrt(n)}
    return w @ v * scale.get(norm, 1.0 if inverse else 1 / n)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n, length", ONE_AXIS_LENGTHS)
def test_values_are_the_dft_as_a_sum(n, length, norm):
    x = _random(_rng("dft", n, length), (length,), True)
    size = length if n is None else n
    for name, inverse in (("fft", False), ("ifft", True)):
        ours = apply(OPS[name], Tensor(x), n=n, norm=norm).numpy()
        _close(ours, _dft(x, size, norm, inverse))
    ours = apply(OPS["rfft"], Tensor(x.real.copy()), n=n, norm=norm).numpy()
    _close(ours, _dft(x.real, size, norm)[: size // 2 + 1])
    # irfft: the inverse of the Hermitian extension of the kept bins (the imaginary parts of
    # bin 0 and, for an even n, bin n/2 are dropped)
    half = size // 2 + 1
    bins = np.zeros(half, dtype=complex)
    bins[: min(half, length)] = x[:half]
    full = np.concatenate([bins, np.conj(bins[1 : size - half + 1][::-1])])
    full[0] = full[0].real
    if size % 2 == 0:
        full[size // 2] = full[size // 2].real
    ours = apply(OPS["irfft"], Tensor(x), n=size, norm=norm).numpy()
    _close(ours, _dft(full, size, norm, inverse=True).real)


CENTRAL = [
    ("fft", {"n": 7, "norm": "ortho"}, (5,), True),
    ("ifft", {"n": 4}, (6,), True),
    ("rfft", {"n": 9, "norm": "forward"}, (6,), False),
    ("irfft", {"n": 8}, (6,), True),
    ("irfft", {"n": 5, "norm": "ortho"}, (3,), True),
    ("rfftn", {"s": (4, 5), "axes": (1, 0)}, (3, 4), False),
    ("irfftn", {"s": (3, 6), "norm": "ortho"}, (2, 3), True),
    ("fftshift", {"axes": 0}, (3, 4), True),
]


@pytest.mark.parametrize("name, attrs, shape, complex_", CENTRAL)
def test_gradients_are_central_differences_along_re_and_im(name, attrs, shape, complex_):
    """PyTorch's convention checked without torch: for L = Re(sum(conj(G) f(x))), x.grad after
    f(x).backward(G) is dL/dRe(x) + i dL/dIm(x)."""
    rng = _rng("central", name, shape)
    x = _random(rng, shape, complex_)
    op = OPS[name]
    with no_grad():
        y0 = apply(op, Tensor(x), **attrs).numpy()
    G = _random(rng, y0.shape, np.iscomplexobj(y0))

    def loss(v):
        with no_grad():
            return float(np.real(np.sum(np.conj(G) * apply(op, Tensor(v), **attrs).numpy())))

    want = np.zeros(shape, dtype=complex)
    h = 1e-6
    for j in np.ndindex(shape):
        for unit in (1.0, 1j) if complex_ else (1.0,):
            e = np.zeros(shape, dtype=x.dtype)
            e[j] = unit
            want[j] += unit * (loss(x + h * e) - loss(x - h * e)) / (2 * h)
    t = Tensor(x.copy(), requires_grad=True)
    apply(op, t, **attrs).backward(G)
    got = t.grad.numpy()
    assert np.allclose(got if complex_ else np.real(got), want, rtol=1e-6, atol=1e-8)


def test_explain_writes_a_constant_operand_it_has_no_symbol_for(cli):
    # fftfreq(4) (as cumsum of a literal) is a constant no symbolic form writes: the array
    # walk names it in the traced rule instead of failing
    for text, want in (("sum(fftfreq(4)*x)", "grad_a*fftfreq(4)"), ("sum(cumsum([1, 2])*x)", None)):
        r = cli("explain", text, "--x", "[1, 2]" if want is None else "[1, 2, 3, 4]")
        assert r.code == 0, r.err
        assert want is None or want in r.out
    r = cli("explain", "sum(irfft(x, n=4)**2)", "--x", "[1, 2, 3]")
    assert r.code == 0 and "grad_x = rfft(grad_a, axis=0, norm='forward')*" in r.out, r.err


def test_a_spectral_product_against_torch(torch):
    """A circular convolution through rfft: its gradient needs mul's complex rule too."""
    x, h = np.array([1.0, 2, 0, -1, 0, 0, 3, 1]), np.array([0.5, 0.25])
    program = parse("sum(irfft(rfft(x)*rfft(h, n=8), n=8)**2)")
    from autograd_cli.core.api import grad_of

    ours = grad_of(program, {"x": x, "h": h})
    tx, th = torch.tensor(x, requires_grad=True), torch.tensor(h, requires_grad=True)
    spectrum = torch.fft.rfft(tx) * torch.fft.rfft(th, n=8)
    (torch.fft.irfft(spectrum, n=8) ** 2).sum().backward()
    _close(np.real(ours.grad["x"]), tx.grad)
    _close(np.real(ours.grad["h"]), th.grad)


@pytest.mark.parametrize("target", ["numpy", "torch", "jax"])
@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
def test_the_frequencies_spelled_in_each_target(name, target):
    """fftfreq depends on no input, so generated code folds it to a constant; its spelling
    (used where it is not folded) is run here on its own."""
    import types

    module = pytest.importorskip({"numpy": "numpy", "torch": "torch", "jax": "jax"}[target])
    if target == "jax":
        module.config.update("jax_enable_x64", True)
        module = pytest.importorskip("jax.numpy")
    node = types.SimpleNamespace(attrs={"n": 7, "d": 0.25})
    text = OPS[name].code.spelling(target)([], node, target)
    xp = {"numpy": "np", "torch": "torch", "jax": "jnp"}[target]
    text = text.replace("{xp}", xp).replace("{dtype}", f"{xp}.float64")
    value = eval(text, {xp: module})  # noqa: S307 - the op table's own template
    got = np.asarray(value.numpy() if target == "torch" else value)
    assert got.dtype == np.float64
    _close(got, getattr(np.fft, name)(7, 0.25))
