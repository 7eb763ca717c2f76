"""Every differentiable op of the op table against finite differences (float64).

* ``test_vjp_matches_finite_differences``: reverse mode (``grad`` with a random
  cotangent u) against central differences of <u, f(x)>, for each case below.
* ``test_jvp_*``: each op's forward-mode rule ``OPS[name].jvp(node, tangents)``
  against the vjp (the dot-product test <J^T u, t> == <u, J t>) and against a
  central difference of f along t.
* ``test_second_order_*``: ``grad(create_graph=True)`` then ``grad`` again (a
  Hessian-vector product) against central differences of the first derivative.
* ``test_every_differentiable_op_has_cases``: the cases are keyed by op name and
  must cover exactly the ops that have a vjp, so a new op without a case fails.

Then PyTorch's conventions at kinks and for IEEE domain errors are pinned, and,
where torch is installed, a handful of ops are compared with it in float64.
"""

from __future__ import annotations

import math
import re
import warnings
import zlib
from dataclasses import dataclass, field

import cases_arrays
import cases_fft
import cases_linalg
import mpmath
import numpy as np
import pytest

from autograd_cli.core import OPS, Tensor, apply, grad, no_grad, tensor
from autograd_cli.core.errors import GradError
from autograd_cli.core.ops import FUNCTIONS
from autograd_cli.core.recording import evaluate
from autograd_cli.grammar import parse

H = 1e-6  # finite-difference step
RTOL = 1e-6  # finite differences vs analytic
ATOL = 1e-7


# ---------------------------------------------------------------------------
# Samplers: each returns a float64 array of the given shape inside the op's domain,
# away from kinks and discontinuities by much more than H.
# ---------------------------------------------------------------------------


def uniform(lo, hi):
    return lambda rng, shape: rng.uniform(lo, hi, size=shape)


def away_from_zero(lo=0.1, hi=2.0):
    def sample(rng, shape):
        return rng.uniform(lo, hi, size=shape) * rng.choice([-1.0, 1.0], size=shape)

    return sample


def between_half_integers(rng, shape):
    # k + 0.1 .. k + 0.4 (and the negatives): away from integers and half-integers,
    # where floor, ceil and round jump.
    k = rng.integers(-3, 3, size=shape)
    return k + rng.uniform(0.1, 0.4, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def distinct(rng, shape):
    # Values at least 0.2 apart: max/min reductions have no ties.
    n = int(np.prod(shape, dtype=int))
    values = rng.permutation(n) * 0.3 - 0.15 * n + rng.uniform(0, 0.1, size=n)
    return values.reshape(shape)


def zeros_and_ones(rng, shape):
    return rng.integers(0, 2, size=shape).astype(np.float64)


def constant(value):
    return lambda rng, shape: np.full(shape, float(value))


def whole_numbers(lo, hi):
    # lo .. hi - 1, as floats: polygamma's order n (not differentiated).
    return lambda rng, shape: rng.integers(lo, hi, size=shape).astype(np.float64)


def divisors(rng, shape):
    # +-0.5, +-1, +-2 (times 1 .. 1.01): with a dividend from between_half_integers the
    # quotient a/b stays >= 0.03 from a whole number, where mod jumps.
    base = rng.choice([0.5, 1.0, 2.0], size=shape) * rng.choice([-1.0, 1.0], size=shape)
    return base * rng.uniform(1.0, 1.01, size=shape)


def off_bounds(rng, shape):
    # -2 .. -1.6, -0.4 .. 0.4 or 1.6 .. 2: clip's x in all three of its regions, >= 0.2
    # from bounds drawn from +-(0.6 .. 1.2) (LOWER_BOUNDS, UPPER_BOUNDS), where it kinks.
    k = rng.integers(0, 3, size=shape)
    centre = np.array([-1.8, 0.0, 1.8])[k]
    half_width = np.array([0.2, 0.4, 0.2])[k]
    return centre + half_width * rng.uniform(-1.0, 1.0, size=shape)


LOWER_BOUNDS = uniform(-1.2, -0.6)
UPPER_BOUNDS = uniform(0.6, 1.2)


DEFAULT = uniform(-2.0, 2.0)
POSITIVE = uniform(0.5, 3.0)


@dataclass
class Case:
    op: str
    shapes: tuple
    attrs: dict = field(default_factory=dict)
    samplers: tuple | None = None  # one per input (default: DEFAULT)
    diff: tuple | None = None  # which inputs require grad (default: the op's own)
    separate: bool = False  # resample until broadcast inputs differ by > 0.05
    label: str = ""

    @property
    def id(self) -> str:
        shapes = "-".join("x".join(map(str, s)) or "s" for s in self.shapes)
        attrs = ",".join(f"{k}={v}" for k, v in self.attrs.items())
        return f"{self.op}[{shapes}]{'{' + attrs + '}' if attrs else ''}{self.label}"

    def requires(self) -> tuple:
        if self.diff is not None:
            return self.diff
        flags = OPS[self.op].differentiable
        return flags if flags else (True,) * len(self.shapes)

    def sample(self) -> list[np.ndarray]:
        rng = np.random.default_rng(zlib.crc32(self.id.encode()))
        samplers = self.samplers or (DEFAULT,) * len(self.shapes)
        for _ in range(1000):
            arrays = [
                np.asarray(s(rng, shape), dtype=np.float64)
                for s, shape in zip(samplers, self.shapes)
            ]
            if not self.separate:
                return arrays
            a, b = np.broadcast_arrays(*arrays)
            if np.min(np.abs(a - b), initial=np.inf) > 0.05:
                return arrays
        raise AssertionError("could not sample separated inputs")


# ---------------------------------------------------------------------------
# The cases, keyed by op
# ---------------------------------------------------------------------------

UNARY_SAMPLERS = {
    "exp": DEFAULT,
    "log": POSITIVE,
    "log2": POSITIVE,
    "log10": POSITIVE,
    "sqrt": POSITIVE,
    "sin": uniform(-3, 3),
    "cos": uniform(-3, 3),
    "tan": uniform(-1.2, 1.2),
    "asin": uniform(-0.9, 0.9),
    "acos": uniform(-0.9, 0.9),
    "atan": uniform(-3, 3),
    "asinh": uniform(-3, 3),
    "real": uniform(-3, 3),
    "imag": uniform(-3, 3),
    "conj": uniform(-3, 3),
    "angle": uniform(0.5, 3),
    "acosh": uniform(1.1, 4),
    "atanh": uniform(-0.9, 0.9),
    "sinh": DEFAULT,
    "cosh": DEFAULT,
    "tanh": DEFAULT,
    "abs": away_from_zero(),
    "sigmoid": uniform(-4, 4),
    "relu": away_from_zero(),
    "softplus": uniform(-4, 4),
    "sign": away_from_zero(),
    "floor": between_half_integers,
    "ceil": between_half_integers,
    "round": between_half_integers,
    "neg": DEFAULT,
    "log1p": uniform(-0.5, 2.0),
    "expm1": DEFAULT,
    "cbrt": away_from_zero(),
    "erf": DEFAULT,
    "erfc": DEFAULT,
    "erfcx": DEFAULT,
    "erfinv": uniform(-0.9, 0.9),
    "gamma": POSITIVE,
    "lgamma": POSITIVE,
    "digamma": POSITIVE,
    # issue 27's: sinc and the Bessel functions (i0e has a corner at 0, i1e's f'' jumps there)
    "sinc": uniform(-3, 3),
    "j0": uniform(-6, 6),
    "j1": uniform(-6, 6),
    "i0": uniform(-3, 3),
    "i1": uniform(-3, 3),
    "i0e": away_from_zero(),
    "i1e": away_from_zero(),
}
# Between the poles at -2 and -1: gamma < 0 there, lgamma is log|gamma|.
NEGATIVE_GAMMA = uniform(-1.8, -1.2)
UNARY_SHAPES = [(), (4,), (3, 2)]

BINARY_SHAPES = [
    ((), ()),
    ((4,), (4,)),
    ((3, 4), (4,)),
    ((3, 1), (1, 4)),
    ((), (2, 3)),
    ((2, 3), ()),
    ((2, 1, 3), (4, 1)),
]
BINARY_SAMPLERS = {
    "add": (DEFAULT, DEFAULT),
    "sub": (DEFAULT, DEFAULT),
    "mul": (DEFAULT, DEFAULT),
    "div": (DEFAULT, away_from_zero(0.5, 2.0)),
    "pow": (uniform(0.5, 2.0), uniform(-2.0, 2.0)),
    "maximum": (DEFAULT, DEFAULT),
    "minimum": (DEFAULT, DEFAULT),
    # y away from 0: away from the origin (where the partials are 1/r) and from atan2's
    # jump from pi to -pi across y = 0 for x < 0.
    "atan2": (away_from_zero(0.3, 2.0), DEFAULT),
    "hypot": (away_from_zero(0.3, 2.0), DEFAULT),
    "logaddexp": (DEFAULT, DEFAULT),
    "polar": (DEFAULT, DEFAULT),
    "beta": (POSITIVE, POSITIVE),
    "mod": (between_half_integers, divisors),
}

REDUCTION_SAMPLERS = {
    "sum": DEFAULT,
    "mean": DEFAULT,
    "prod": away_from_zero(0.5, 1.5),
    "amax": distinct,
    "amin": distinct,
    "norm": DEFAULT,
    "logsumexp": DEFAULT,
    "variance": DEFAULT,
    "std": DEFAULT,
}
REDUCTION_CASES = [
    ((), None, False),
    ((4,), None, False),
    ((4,), 0, False),
    ((3, 4), None, True),
    ((3, 4), 0, False),
    ((3, 4), 1, False),
    ((3, 4), -1, True),
    ((3, 4), 0, True),
    ((2, 3, 4), (0, 2), False),
    ((2, 3, 4), (1,), True),
    ((2, 3, 4), None, False),
]


def _build_cases() -> dict[str, list[Case]]:
    cases: dict[str, list[Case]] = {}

    def add(case: Case):
        cases.setdefault(case.op, []).append(case)

    for name, sampler in UNARY_SAMPLERS.items():
        for shape in UNARY_SHAPES:
            add(Case(name, (shape,), samplers=(sampler,)))
    for name in ("gamma", "lgamma", "digamma"):
        add(Case(name, ((4,),), samplers=(NEGATIVE_GAMMA,), label="negative"))
    for name, samplers in BINARY_SAMPLERS.items():
        for shapes in BINARY_SHAPES:
            add(Case(name, shapes, samplers=samplers, separate=name in ("maximum", "minimum")))
        # One side a constant (no grad): the other side alone.
        add(
            Case(
                name,
                ((3,), (2, 3)),
                samplers=samplers,
                diff=(True, False),
                label="a-only",
                separate=name in ("maximum", "minimum"),
            )
        )
        add(
            Case(
                name,
                ((2, 3), (3,)),
                samplers=samplers,
                diff=(False, True),
                label="b-only",
                separate=name in ("maximum", "minimum"),
            )
        )
    # max(x, c) / min(x, c) against a constant c: the clamp ops (c takes no gradient).
    for name in ("clamp_min", "clamp_max"):
        for shapes in (((), ()), ((4,), ()), ((3, 4), (4,)), ((3, 1), (1, 4)), ((), (2, 3))):
            add(Case(name, shapes, separate=True))
    # pow with a negative base and a constant integer exponent (PowBackward0).
    for k in (2.0, 3.0, -1.0):
        add(
            Case(
                "pow",
                ((5,), ()),
                samplers=(away_from_zero(0.3, 2.0), constant(k)),
                diff=(True, False),
                label=f"int{k:g}",
            )
        )
    # pow with a constant base (PowBackward2).
    add(
        Case(
            "pow",
            ((), (4,)),
            samplers=(uniform(0.5, 3.0), DEFAULT),
            diff=(False, True),
            label="const-base",
        )
    )

    # polygamma(n, x): the order n is a whole number and takes no gradient (the op's own
    # flags, (False, True)); x > 0 mostly, and between the poles at -2 and -1.
    for n in range(4):
        add(Case("polygamma", ((), (4,)), samplers=(constant(n), POSITIVE), label=f"n={n}"))
    for shapes in (((3, 1), (1, 4)), ((2, 3), ()), ((4,), (4,))):
        add(Case("polygamma", shapes, samplers=(whole_numbers(0, 4), POSITIVE)))
    add(
        Case(
            "polygamma",
            ((4,), (4,)),
            samplers=(whole_numbers(0, 3), NEGATIVE_GAMMA),
            label="negative",
        )
    )

    # gammainc(a, x), gammaincc(a, x), betainc(a, b, x): a gradient in x only (the op's own
    # flags), x inside the domain (x > 0; 0 < x < 1 for betainc)
    for name in ("gammainc", "gammaincc"):
        for shapes in (((), (4,)), ((3, 1), (1, 4)), ((2, 3), ()), ((4,), (4,))):
            add(Case(name, shapes, samplers=(uniform(0.5, 4.0), uniform(0.2, 5.0))))
    for shapes in (((), (), (4,)), ((3, 1), (4,), (3, 4)), ((4,), (4,), (4,))):
        add(Case("betainc", shapes, samplers=(POSITIVE, POSITIVE, uniform(0.05, 0.95))))

    # clip(x, lo, hi): x below, inside and above [lo, hi] (each input takes the gradient
    # in its own region), and lo > hi (clip is hi everywhere).
    clip_samplers = (off_bounds, LOWER_BOUNDS, UPPER_BOUNDS)
    for shapes in (
        ((3, 4), (3, 4), (3, 4)),
        ((3, 4), (), ()),
        ((3, 1), (4,), ()),
        ((), (2,), (3, 1)),
        ((2, 3), (2, 3), (3,)),
    ):
        add(Case("clip", shapes, samplers=clip_samplers))
    add(
        Case(
            "clip",
            ((3, 4), (), ()),
            samplers=clip_samplers,
            diff=(True, False, False),
            label="x-only",
        )
    )
    add(
        Case(
            "clip",
            ((6,), (6,), (6,)),
            samplers=(off_bounds, UPPER_BOUNDS, LOWER_BOUNDS),
            label="lo>hi",
        )
    )

    for shapes in (
        ((3, 4), (3, 4), (3, 4)),
        ((3, 1), (), (4,)),
        ((), (2,), (2,)),
        ((2, 3), (2, 3), ()),
    ):
        add(Case("where", shapes, samplers=(zeros_and_ones, DEFAULT, DEFAULT)))
    add(
        Case(
            "where",
            ((4,), (4,), (4,)),
            samplers=(zeros_and_ones, DEFAULT, DEFAULT),
            diff=(False, True, False),
            label="a-only",
        )
    )

    for shape, target in (((3,), (2, 3)), ((), (2, 2)), ((3, 1), (2, 3, 4)), ((1, 4), (3, 4))):
        add(Case("broadcast_to", (shape,), {"shape": target}))
    for shape, target in (
        ((2, 3, 4), (3, 1)),
        ((2, 3), ()),
        ((4, 3), (1, 3)),
        ((2, 3), (2, 3)),
        ((2, 3, 4), (4,)),
    ):
        add(Case("sum_to", (shape,), {"shape": target}))
    for shape, target in (
        ((2, 3), (3, 2)),
        ((6,), (2, 3)),
        ((), (1,)),
        ((2, 3, 4), (4, 6)),
        ((1,), ()),
    ):
        add(Case("reshape", (shape,), {"shape": target}))
    for shape in ((2, 3), (4,), (2, 3, 4), ()):
        add(Case("transpose", (shape,)))
    for shape in ((3, 2), (2, 3, 4)):
        add(Case("mT", (shape,)))
    for shape in ((3,), (2, 3), ()):  # a cast to the same dtype (mixed ones: test_tensor_api)
        add(Case("astype", (shape,), {"dtype": "float64", "source": "float64"}))
    for shape, index in (
        ((3, 4), (1,)),
        ((3, 4), (slice(0, 2),)),
        ((3, 4), (1, slice(None))),
        ((3, 4), (slice(None), 0)),
        ((3, 4), (Ellipsis, -1)),
        ((3, 4), (None, 1)),
        ((4,), (2,)),
        ((2, 3, 4), (1, slice(1, 3), -2)),
        ((4,), (slice(1, None),)),
        # integer arrays (NumPy's advanced indexing): repeats add up in the gradient
        ((4,), ((0, 2, 2),)),
        ((3, 4), (slice(None), (1, 1, 3))),
        ((3, 4), ((2, 0), (1, 3))),
        ((2, 3, 4), ((1, 0), slice(None), (0, 3))),  # apart: NumPy puts their axis first
        ((3, 4), (((0, 1), (2, 2)),)),
    ):
        add(Case("getitem", (shape,), {"index": index}))
    for shape, index, target in (
        ((4,), (1,), (3, 4)),
        ((2, 4), (slice(0, 2),), (3, 4)),
        ((), (1, 2), (3, 4)),
        ((3,), (slice(None), 1), (3, 4)),
    ):
        add(Case("scatter", (shape,), {"index": index, "shape": target}))
    for shapes in (((3,), (3,), (3,)), ((), (3,)), ((2, 2), (2, 2)), ((4,),), ((), ())):
        add(Case("stack", shapes))

    # the array functions (core/ops/arrays.py)
    for shape, axis in (((5,), None), ((3, 4), 0), ((3, 4), 1), ((3, 4), -1), ((2, 3, 4), None)):
        add(Case("cumsum", (shape,), {"axis": axis}))
    for shape, axis in (((4,), None), ((3, 4), 0), ((3, 4), (0, 1)), ((2, 3, 4), -1), ((), None)):
        add(Case("flip", (shape,), {"axis": axis}))
    for shapes, axis in (
        (((2,), (3,)), 0),
        (((2, 3), (4, 3)), 0),
        (((2, 3), (2, 1)), 1),
        (((2, 2, 2), (2, 2, 1), (2, 2, 3)), -1),
        (((3,),), 0),
    ):
        add(Case("concatenate", shapes, {"axis": axis}))

    # the functions declared in core/ops/linalg.py and the rest of core/ops/arrays.py: their
    # cases live beside their other oracles (tests/cases_linalg.py, tests/cases_arrays.py)
    for module in (cases_linalg, cases_arrays, cases_fft):
        for kw in module.GRAD_CASES:
            add(Case(**kw))

    for name, sampler in REDUCTION_SAMPLERS.items():
        for shape, axis, keepdims in REDUCTION_CASES:
            add(Case(name, (shape,), {"axis": axis, "keepdims": keepdims}, samplers=(sampler,)))

    add(Case("dot", ((4,), (4,))))
    add(Case("dot", ((3,), (3,)), diff=(False, True), label="b-only"))
    for shapes in (
        ((3, 4), (4,)),
        ((4,), (4, 3)),
        ((4,), (4,)),
        ((3, 4), (4, 2)),
        ((2, 3, 4), (4, 5)),
        ((2, 1, 3, 4), (5, 4, 2)),
        ((4,), (2, 4, 3)),
        ((2, 3, 4), (4,)),
        ((1, 1), (1, 1)),
    ):
        add(Case("matmul", shapes))
    add(Case("matmul", ((3, 4), (4, 2)), diff=(True, False), label="a-only"))
    return cases


CASES = _build_cases()
ALL_CASES = [c for cs in CASES.values() for c in cs]
IDS = [c.id for c in ALL_CASES]
assert len(set(IDS)) == len(IDS), "case ids must be unique"

DIFFERENTIABLE_OPS = {name for name, op in OPS.items() if op.vjp is not None}
JVP_OPS = {name for name, op in OPS.items() if op.jvp is not None}


def test_every_differentiable_op_has_cases():
    # the FFT's complex-valued transforms: checked in tests/test_ops_fft.py for now
    assert set(CASES) == DIFFERENTIABLE_OPS


def test_every_op_with_a_jvp_has_cases():
    assert JVP_OPS <= set(CASES)
    # Forward mode exists for every differentiable op (the table writes both).
    assert JVP_OPS == DIFFERENTIABLE_OPS


def test_non_differentiable_ops_pass_no_gradient():
    x = tensor([1.0, 2.0, 3.0], requires_grad=True)
    for name, op in OPS.items():
        if op.vjp is not None or op.arity == 0:  # fftfreq: no argument to pass one to
            continue
        args = (x,) if op.arity == 1 else (x, x * 0 + 2)
        out = apply(op, *args)
        assert out.requires_grad is False, name
        assert out.grad_fn is None, name


def test_language_functions_map_to_ops():
    for name, fn in FUNCTIONS.items():
        for target in (fn.unary, fn.binary, fn.ternary, fn.reduce):
            assert target is None or target in OPS, (name, target)


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def forward(case: Case, arrays) -> np.ndarray:
    with no_grad():
        return apply(OPS[case.op], *[tensor(a) for a in arrays], **case.attrs).numpy()


def build(case: Case, arrays):
    flags = case.requires()
    inputs = [tensor(a, requires_grad=bool(f)) for a, f in zip(arrays, flags)]
    out = apply(OPS[case.op], *inputs, **case.attrs)
    wrt = [t for t, f in zip(inputs, flags) if f]
    return inputs, out, wrt


def numeric_vjp(case: Case, arrays, u) -> list[np.ndarray]:
    """Central differences of <u, f(x)> with respect to every differentiable input."""
    result = []
    for i, flag in enumerate(case.requires()):
        if not flag:
            continue
        g = np.zeros_like(arrays[i])
        for j in np.ndindex(arrays[i].shape):
            plus = [a.copy() for a in arrays]
            minus = [a.copy() for a in arrays]
            plus[i][j] += H
            minus[i][j] -= H
            # a complex output: PyTorch's loss Re<u, f> (u real)
            g[j] = np.real(np.sum(u * forward(case, plus)) - np.sum(u * forward(case, minus))) / (
                2 * H
            )
        result.append(g)
    return result


def numeric_directional(fn, arrays, tangents) -> np.ndarray:
    plus = [a + H * t for a, t in zip(arrays, tangents)]
    minus = [a - H * t for a, t in zip(arrays, tangents)]
    return (fn(plus) - fn(minus)) / (2 * H)


def _num(v) -> np.ndarray:
    """``v`` in float64, or complex128 where it is complex (eig's values)."""
    v = np.asarray(v)
    return v.astype(np.complex128 if v.dtype.kind == "c" else np.float64)


def assert_close(actual, expected, rtol=RTOL, atol=ATOL):
    actual = _num(actual)
    expected = _num(expected)
    assert actual.shape == expected.shape
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol * scale)


class _ReadSaved(Exception):
    """A rule read a node's saved inputs or output."""


class _Released:
    """Stands for a node's saved inputs and output: any use of it raises _ReadSaved."""

    def __getattr__(self, name):
        raise _ReadSaved(name)

    def __len__(self):
        raise _ReadSaved("len")

    def __getitem__(self, i):
        raise _ReadSaved("item")

    def __iter__(self):
        raise _ReadSaved("iter")


def _reads_what_it_saves(case: Case) -> bool:
    """Whether the op's vjp reads its node's saved inputs or output at ``case`` (a backward
    without retain_graph frees what it saves)."""
    arrays = case.sample()
    _, out, _ = build(case, arrays)
    node = out.grad_fn
    node.saved_inputs = node.saved_data = _Released()
    try:
        with no_grad():
            OPS[case.op].vjp(node, tensor(np.ones(out.shape, dtype=out.numpy().dtype)))
    except _ReadSaved:
        return True
    return False


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_op_saves_exactly_what_its_vjp_reads(name):
    """``Op.saves`` says the vjp reads the node's inputs or output, which a backward without
    retain_graph then frees (a second backward through it is PyTorch's error).  An op whose
    vjp reads neither must not save: a second backward through it works, as PyTorch's
    StackBackward0 (stack was declared saving, so ``stack(a, b).sum()`` could not be
    backpropagated twice); an op that saves must read in at least one of its cases."""
    reads = any(_reads_what_it_saves(case) for case in CASES[name])
    assert OPS[name].saves == reads


def test_a_second_backward_through_nothing_saved_works_as_in_pytorch():
    """stack and sum save nothing: backward twice accumulates (PyTorch: a.grad = 2); a power
    saves its input, so the second backward through it is the freed-buffers error."""
    a, b = tensor(1.0, requires_grad=True), tensor(2.0, requires_grad=True)
    y = apply(OPS["stack"], a, b).sum()
    y.backward()
    y.backward()
    assert float(a.grad.numpy()) == 2.0 and float(b.grad.numpy()) == 2.0
    z = (apply(OPS["stack"], a, b) ** 2).sum()
    z.backward()
    with pytest.raises(GradError, match="backward through the graph a second time"):
        z.backward()


# ---------------------------------------------------------------------------
# Reverse mode against finite differences
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", ALL_CASES, ids=IDS)
def test_vjp_matches_finite_differences(case: Case):
    arrays = case.sample()
    inputs, out, wrt = build(case, arrays)
    # float64, or complex128 where the op's values are complex (eig, fft, polar): no float32
    assert out.dtype == np.asarray(forward(case, arrays)).dtype
    assert out.dtype in (np.float64, np.complex128)
    assert out.requires_grad and out.grad_fn is not None
    np.testing.assert_array_equal(out.numpy(), forward(case, arrays))
    rng = np.random.default_rng(zlib.crc32(case.id.encode()) + 1)
    u = rng.standard_normal(out.shape)
    analytic = grad(out, wrt, grad_outputs=tensor(u))
    numeric = numeric_vjp(case, arrays, u)
    for t, a, n in zip(wrt, analytic, numeric):
        assert a is not None
        assert a.shape == t.shape and a.dtype == np.float64
        assert not a.requires_grad  # first order: no graph on the result
        assert_close(a.numpy(), n)


# ---------------------------------------------------------------------------
# Forward mode: the op's jvp rule
# ---------------------------------------------------------------------------


def _jvp(case: Case, arrays, tangents_np):
    inputs, out, wrt = build(case, arrays)
    tangents = tuple(tensor(t) if f else None for t, f in zip(tangents_np, case.requires()))
    node = out.grad_fn
    jt = OPS[case.op].jvp(node, tangents)
    return inputs, out, wrt, jt


def _tangents(case: Case, arrays):
    rng = np.random.default_rng(zlib.crc32(case.id.encode()) + 2)
    return [
        rng.standard_normal(a.shape) if f else np.zeros(a.shape)
        for a, f in zip(arrays, case.requires())
    ]


@pytest.mark.parametrize(
    "case",
    [c for c in ALL_CASES if c.op in JVP_OPS],
    ids=[c.id for c in ALL_CASES if c.op in JVP_OPS],
)
def test_jvp_dot_product_test(case: Case):
    arrays = case.sample()
    t = _tangents(case, arrays)
    inputs, out, wrt, jt = _jvp(case, arrays, t)
    assert jt is not None
    assert jt.shape == out.shape
    rng = np.random.default_rng(zlib.crc32(case.id.encode()) + 3)
    u = rng.standard_normal(out.shape)
    vjps = grad(out, wrt, grad_outputs=tensor(u))
    lhs = float(np.real(np.sum(u * jt.numpy())))  # Re<u, J t> (PyTorch's, for complex J t)
    flags = case.requires()
    rhs = float(
        sum(
            np.sum(g.numpy() * ti)  # <J^T u, t>
            for g, ti in zip(vjps, [ti for ti, f in zip(t, flags) if f])
        )
    )
    scale = max(1.0, float(np.sum(np.abs(u) * np.abs(jt.numpy()))))
    assert abs(lhs - rhs) <= 1e-12 * scale


@pytest.mark.parametrize(
    "case",
    [c for c in ALL_CASES if c.op in JVP_OPS],
    ids=[c.id for c in ALL_CASES if c.op in JVP_OPS],
)
def test_jvp_matches_finite_differences(case: Case):
    arrays = case.sample()
    t = _tangents(case, arrays)
    _, out, _, jt = _jvp(case, arrays, t)
    numeric = numeric_directional(lambda xs: forward(case, xs), arrays, t)
    assert_close(jt.numpy(), numeric)


def test_jvp_all_tangents_absent_is_none():
    x = tensor([0.3, 0.7], requires_grad=True)
    for out in (x.sin(), x * 2, x.sum(), x + x):
        assert OPS[_op_name(out)].jvp(out.grad_fn, (None,) * len(out.grad_fn.edges)) is None


def _op_name(t: Tensor) -> str:
    return t.grad_fn.op.name


# ---------------------------------------------------------------------------
# Second order: grad(create_graph=True), then grad again
# ---------------------------------------------------------------------------


def _first_grad(case: Case, arrays, u, create_graph: bool):
    inputs, out, wrt = build(case, arrays)
    g = grad(out, wrt, grad_outputs=tensor(u), create_graph=create_graph)
    return wrt, g


@pytest.mark.parametrize("case", ALL_CASES, ids=IDS)
def test_second_order_hvp_matches_finite_differences(case: Case):
    arrays = case.sample()
    rng = np.random.default_rng(zlib.crc32(case.id.encode()) + 4)
    out_shape = forward(case, arrays).shape
    u = rng.standard_normal(out_shape)
    flags = case.requires()
    v = [rng.standard_normal(a.shape) if f else np.zeros(a.shape) for a, f in zip(arrays, flags)]
    v_wrt = [vi for vi, f in zip(v, flags) if f]

    wrt, g = _first_grad(case, arrays, u, create_graph=True)
    # <g(x), v>, differentiated again: the Hessian of <u, f> times v.
    inner = None
    for gi, vi in zip(g, v_wrt):
        term = (gi * tensor(vi)).sum()
        inner = term if inner is None else inner + term
    if inner.requires_grad:
        hv = grad(inner, wrt, allow_unused=True)
        hv = [np.zeros(t.shape) if h is None else h.numpy() for t, h in zip(wrt, hv)]
    else:  # the first derivative does not depend on the inputs (a linear op)
        hv = [np.zeros(t.shape) for t in wrt]

    def first(xs):
        _, gs = _first_grad(case, xs, u, create_graph=False)
        return np.concatenate([gi.numpy().ravel() for gi in gs])

    numeric = numeric_directional(first, arrays, v)
    assert_close(np.concatenate([h.ravel() for h in hv]), numeric, rtol=1e-5, atol=1e-6)


SECOND_ORDER_UNARY = {
    # op: (sampler, f'' as a function of x)
    "exp": (DEFAULT, np.exp),
    "log": (POSITIVE, lambda x: -1 / x**2),
    "sqrt": (POSITIVE, lambda x: -0.25 * x**-1.5),
    "sin": (uniform(-3, 3), lambda x: -np.sin(x)),
    "cos": (uniform(-3, 3), lambda x: -np.cos(x)),
    "tan": (uniform(-1.2, 1.2), lambda x: 2 * np.tan(x) / np.cos(x) ** 2),
    "tanh": (DEFAULT, lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2)),
    "sigmoid": (uniform(-4, 4), lambda x: (s := 1 / (1 + np.exp(-x))) * (1 - s) * (1 - 2 * s)),
    "atan": (uniform(-3, 3), lambda x: -2 * x / (1 + x * x) ** 2),
    "asin": (uniform(-0.9, 0.9), lambda x: x / (1 - x * x) ** 1.5),
    "asinh": (uniform(-3, 3), lambda x: -x / (x * x + 1) ** 1.5),
    "acosh": (uniform(1.1, 4), lambda x: -x / (x * x - 1) ** 1.5),
    "atanh": (uniform(-0.9, 0.9), lambda x: 2 * x / (1 - x * x) ** 2),
    "softplus": (uniform(-4, 4), lambda x: (s := 1 / (1 + np.exp(-x))) * (1 - s)),
    "abs": (away_from_zero(), lambda x: 0 * x),
    "relu": (away_from_zero(), lambda x: 0 * x),
    "log1p": (uniform(-0.5, 2.0), lambda x: -1 / (1 + x) ** 2),
    "expm1": (DEFAULT, np.exp),
    "cbrt": (away_from_zero(), lambda x: -2 / 9 * np.sign(x) * np.abs(x) ** (-5 / 3)),
    "erf": (DEFAULT, lambda x: -4 / math.sqrt(math.pi) * x * np.exp(-x * x)),
    "erfc": (DEFAULT, lambda x: 4 / math.sqrt(math.pi) * x * np.exp(-x * x)),
    # the special functions' f'' from mpmath at 30 digits
    "erfinv": (
        uniform(-0.9, 0.9),
        lambda x: _mp(lambda v: (y := mpmath.erfinv(v)) * mpmath.pi / 2 * mpmath.exp(2 * y * y), x),
    ),
    # erfcx'' = (2 + 4 x^2) erfcx(x) - 4x/sqrt(pi), erfcx(x) = exp(x^2) erfc(x)
    "erfcx": (
        DEFAULT,
        lambda x: _mp(
            lambda v: (
                (2 + 4 * v * v) * mpmath.exp(v * v) * mpmath.erfc(v)
                - 4 * v / mpmath.sqrt(mpmath.pi)
            ),
            x,
        ),
    ),
    "gamma": (POSITIVE, lambda x: _mp(lambda v: mpmath.diff(mpmath.gamma, v, 2), x)),
    "lgamma": (POSITIVE, lambda x: _mp(lambda v: mpmath.psi(1, v), x)),
    "digamma": (POSITIVE, lambda x: _mp(lambda v: mpmath.psi(2, v), x)),
    "sinc": (uniform(-3, 3), lambda x: _mp(lambda v: mpmath.diff(mpmath.sincpi, v, 2), x)),
    "j0": (uniform(-6, 6), lambda x: _mp(lambda v: mpmath.besselj(0, v, derivative=2), x)),
    "j1": (uniform(-6, 6), lambda x: _mp(lambda v: mpmath.besselj(1, v, derivative=2), x)),
    "i0": (
        uniform(-3, 3),
        lambda x: _mp(lambda v: mpmath.re(mpmath.besseli(0, v, derivative=2)), x),
    ),
    "i1": (
        uniform(-3, 3),
        lambda x: _mp(lambda v: mpmath.re(mpmath.besseli(1, v, derivative=2)), x),
    ),
    "i0e": (
        away_from_zero(),
        lambda x: _mp(
            lambda v: mpmath.diff(lambda t: mpmath.besseli(0, t) * mpmath.exp(-abs(t)), v, 2), x
        ),
    ),
    "i1e": (
        away_from_zero(),
        lambda x: _mp(
            lambda v: mpmath.diff(lambda t: mpmath.besseli(1, t) * mpmath.exp(-abs(t)), v, 2), x
        ),
    ),
}


def _mp(fn, xs):
    with mpmath.workdps(30):
        return np.array([float(fn(mpmath.mpf(float(v)))) for v in xs])


@pytest.mark.parametrize("name", sorted(SECOND_ORDER_UNARY))
def test_second_derivative_of_unary_ops(name):
    sampler, second = SECOND_ORDER_UNARY[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    xs = sampler(rng, (5,))
    x = tensor(xs, requires_grad=True)
    (d1,) = grad(apply(OPS[name], x).sum(), x, create_graph=True)
    if d1.requires_grad:
        (d2,) = grad(d1.sum(), x, allow_unused=True)
        d2 = np.zeros(5) if d2 is None else d2.numpy()
    else:
        # relu's derivative is the mask x > 0, a comparison: it carries no graph, so
        # the second derivative is identically 0.  (PyTorch records a zero-gradient
        # ThresholdBackwardBackward0 node here instead; the values agree.)
        assert name == "relu"
        d2 = np.zeros(5)

    def first(v):
        x = tensor(v, requires_grad=True)
        return grad(apply(OPS[name], x).sum(), x)[0].numpy()

    numeric = (first(xs + H) - first(xs - H)) / (2 * H)
    assert_close(d2, numeric, rtol=1e-5, atol=1e-6)
    assert_close(d2, second(xs), rtol=1e-12, atol=1e-12)


def test_third_derivative_chain():
    # d^3/dx^3 of x**4 * sin(x) at 0.7, by three nested grads.
    x = tensor(0.7, requires_grad=True)
    y = x**4 * x.sin()
    (d1,) = grad(y, x, create_graph=True)
    (d2,) = grad(d1, x, create_graph=True)
    (d3,) = grad(d2, x)
    s, c, v = math.sin(0.7), math.cos(0.7), 0.7
    expected = 24 * v * s + 36 * v**2 * c - 12 * v**3 * s - v**4 * c
    assert d3.item() == pytest.approx(expected, rel=1e-12)


# ---------------------------------------------------------------------------
# PyTorch's conventions at kinks
# ---------------------------------------------------------------------------


def g1(fn, value):
    x = tensor(value, requires_grad=True)
    (g,) = grad(fn(x).sum(), x)
    return g.numpy()


def test_abs_at_zero():
    assert g1(lambda x: x.abs(), 0.0) == 0.0
    np.testing.assert_array_equal(g1(lambda x: x.abs(), [-1.0, 0.0, 2.0]), [-1.0, 0.0, 1.0])


def test_relu_at_zero():
    assert g1(lambda x: x.relu(), 0.0) == 0.0
    np.testing.assert_array_equal(g1(lambda x: x.relu(), [-1.0, 0.0, 2.0]), [0.0, 0.0, 1.0])


def test_sqrt_at_zero_is_inf():
    assert g1(lambda x: x.sqrt(), 0.0) == np.inf


def test_half_power_at_zero_is_inf():
    assert g1(lambda x: x**0.5, 0.0) == np.inf


def test_zero_power_at_zero():
    # d(x**0)/dx = 0 at x = 0 (PyTorch masks the 0 * inf); d(0**y)/dy = 0 for y >= 0.
    assert g1(lambda x: x**0, 0.0) == 0.0
    assert g1(lambda y: tensor(0.0) ** y, 2.0) == 0.0
    assert g1(lambda y: tensor(0.0) ** y, 0.0) == 0.0


def test_maximum_minimum_tie_split_evenly():
    for name in ("maximum", "minimum"):
        a = tensor(2.0, requires_grad=True)
        b = tensor(2.0, requires_grad=True)
        ga, gb = grad(apply(OPS[name], a, b), (a, b))
        assert (ga.item(), gb.item()) == (0.5, 0.5)
    # and through the language: max(a, b) is the elementwise maximum
    ev = evaluate(
        parse("max(a, b)"), {"a": [1.0, 3.0, 2.0], "b": [2.0, 3.0, 1.0]}, requires_grad=["a", "b"]
    )
    ga, gb = grad(ev.output.sum(), (ev.leaves["a"], ev.leaves["b"]))
    np.testing.assert_array_equal(ga.numpy(), [0.0, 0.5, 1.0])
    np.testing.assert_array_equal(gb.numpy(), [1.0, 0.5, 0.0])


def test_max_min_against_a_constant_follow_relu_at_the_tie():
    # max(x, c) with a constant c parses to clamp_min, whose tie gives x no gradient,
    # so max(x, 0) matches relu(x) at 0.  (PyTorch differs here: torch.clamp(x, min=0)
    # gives 1 at the tie and torch.maximum(x, zeros) gives 0.5.)
    for src, op, expected in (
        ("max(x, 0)", "clamp_min", [0.0, 0.0, 1.0]),
        ("max(0, x)", "clamp_min", [0.0, 0.0, 1.0]),
        ("min(x, 0)", "clamp_max", [1.0, 0.0, 0.0]),
    ):
        program = parse(src)
        assert program.output.op == op
        ev = evaluate(program, {"x": [-1.0, 0.0, 2.0]}, requires_grad=["x"])
        (g,) = grad(ev.output.sum(), ev.leaves["x"])
        np.testing.assert_array_equal(g.numpy(), expected, err_msg=src)
    ev = evaluate(parse("relu(x)"), {"x": [-1.0, 0.0, 2.0]}, requires_grad=["x"])
    (g,) = grad(ev.output.sum(), ev.leaves["x"])
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0, 1.0])


def test_max_min_reduction_ties_split_evenly():
    np.testing.assert_array_equal(g1(lambda x: x.max(), [1.0, 3.0, 3.0]), [0.0, 0.5, 0.5])
    np.testing.assert_array_equal(
        g1(lambda x: x.min(), [1.0, 1.0, 1.0, 3.0]), [1 / 3, 1 / 3, 1 / 3, 0.0]
    )
    np.testing.assert_array_equal(
        g1(lambda x: x.max(axis=1), [[2.0, 2.0], [1.0, 5.0]]), [[0.5, 0.5], [0.0, 1.0]]
    )
    np.testing.assert_array_equal(
        g1(lambda x: x.max(axis=0, keepdims=True), [[2.0, 2.0], [2.0, 5.0]]),
        [[0.5, 0.0], [0.5, 1.0]],
    )


def test_norm_at_zero():
    np.testing.assert_array_equal(g1(lambda x: x.norm(), [0.0, 0.0, 0.0]), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(
        g1(lambda x: x.norm(axis=1), [[0.0, 0.0], [3.0, 4.0]]), [[0.0, 0.0], [0.6, 0.8]]
    )


def test_prod_with_zeros():
    np.testing.assert_array_equal(g1(lambda x: x.prod(), [2.0, 0.0, 3.0]), [0.0, 6.0, 0.0])
    np.testing.assert_array_equal(g1(lambda x: x.prod(), [0.0, 2.0, 0.0]), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(
        g1(lambda x: x.prod(axis=1), [[2.0, 0.0, 3.0], [1.0, 2.0, 3.0]]),
        [[0.0, 6.0, 0.0], [6.0, 3.0, 2.0]],
    )


def test_prod_with_zero_second_order():
    # d^2 prod / dx0 dx1 at [0, 2, 3] is x2 = 3; the Hessian-vector product with e1.
    x = tensor([0.0, 2.0, 3.0], requires_grad=True)
    (g,) = grad(x.prod(), x, create_graph=True)
    (h,) = grad(g[0], x)
    np.testing.assert_array_equal(h.numpy(), [0.0, 3.0, 2.0])


def test_where_is_nan_safe():
    x = tensor(-1.0, requires_grad=True)
    y = apply(OPS["where"], x > 0, x.sqrt(), 0.0)
    (g,) = grad(y, x)
    assert y.item() == 0.0
    assert g.item() == 0.0  # not nan: the untaken sqrt branch cannot poison it
    x = tensor([-1.0, 0.0, 4.0], requires_grad=True)
    y = apply(OPS["where"], x > 0, x.sqrt(), 0.0)
    (g,) = grad(y.sum(), x)
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0, 0.25])
    # the same through the language, with log and 1/x in the untaken branch
    ev = evaluate(
        parse("where(x > 0, log(x) + 1/x, x)"), {"x": [-2.0, 0.0, 1.0]}, requires_grad=["x"]
    )
    (g,) = grad(ev.output.sum(), ev.leaves["x"])
    np.testing.assert_array_equal(g.numpy(), [1.0, 1.0, 0.0])


def test_where_is_nan_safe_second_order():
    x = tensor(-1.0, requires_grad=True)
    y = apply(OPS["where"], x > 0, x.sqrt() * x, x * x)
    (g,) = grad(y, x, create_graph=True)
    (h,) = grad(g, x)
    assert (g.item(), h.item()) == (-2.0, 2.0)


def test_comparisons_pass_no_gradient():
    x = tensor([1.0, 2.0], requires_grad=True)
    y = (x > 1.5) * x
    (g,) = grad(y.sum(), x)
    np.testing.assert_array_equal(g.numpy(), [0.0, 1.0])


def test_piecewise_constant_ops_have_zero_gradient():
    for name in ("sign", "floor", "ceil", "round"):
        np.testing.assert_array_equal(
            g1(lambda x, name=name: apply(OPS[name], x), [-1.5, 0.0, 0.3, 2.0]),
            [0.0, 0.0, 0.0, 0.0],
        )


def test_saturated_functions_have_finite_gradients():
    assert g1(lambda x: x.sigmoid(), -1000.0) == 0.0
    assert g1(lambda x: x.sigmoid(), 1000.0) == 0.0
    assert g1(lambda x: x.softplus(), 1000.0) == 1.0
    assert g1(lambda x: x.softplus(), -1000.0) == 0.0
    assert g1(lambda x: x.tanh(), 1000.0) == 0.0
    assert tensor(1000.0).softplus().item() == 1000.0


# ---------------------------------------------------------------------------
# IEEE domain errors: values, not exceptions
# ---------------------------------------------------------------------------


@pytest.fixture
def strict_floats():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        old = np.seterr(all="raise")
        try:
            yield
        finally:
            np.seterr(**old)


def test_division_by_zero_is_inf(strict_floats):
    assert (1 / tensor(0.0)).item() == np.inf
    assert (-1 / tensor(0.0)).item() == -np.inf
    assert math.isnan((tensor(0.0) / tensor(0.0)).item())
    assert g1(lambda x: 1 / x, 0.0) == -np.inf


def test_log_of_negative_is_nan(strict_floats):
    assert math.isnan(tensor(-1.0).log().item())
    assert tensor(0.0).log().item() == -np.inf
    assert math.isnan(tensor(-1.0).sqrt().item())
    assert g1(lambda x: x.log(), -1.0) == -1.0
    assert g1(lambda x: x.log(), 0.0) == np.inf


def test_domain_errors_through_the_language(strict_floats):
    ev = evaluate(parse("1/x + log(y)"), {"x": 0.0, "y": 1.0}, requires_grad=["x"])
    assert ev.output.item() == np.inf
    assert any("inf" in w for w in ev.warnings)
    ev = evaluate(parse("log(x)"), {"x": -1.0}, requires_grad=["x"])
    assert math.isnan(ev.output.item())
    assert any("nan" in w for w in ev.warnings)
    (g,) = grad(ev.output, ev.leaves["x"])
    assert g.item() == -1.0


# ---------------------------------------------------------------------------
# Against PyTorch, where it is installed
# ---------------------------------------------------------------------------


def _op(name, *args, **attrs):
    return apply(OPS[name], *args, **attrs)


WHOLE = {"axis": None, "keepdims": False}  # a reduction over every axis


TORCH_CASES = [
    # (engine fn, torch fn, inputs)
    (
        "sin*exp",
        lambda x: (x.sin() * x.exp()).sum(),
        lambda t, x: (t.sin(x) * t.exp(x)).sum(),
        [0.3, -1.2, 2.0],
    ),
    (
        "sigmoid/tanh",
        lambda x: (x.sigmoid() / (x.tanh() + 2)).sum(),
        lambda t, x: (t.sigmoid(x) / (t.tanh(x) + 2)).sum(),
        [0.3, -1.2, 2.0],
    ),
    ("abs-kink", lambda x: x.abs().sum(), lambda t, x: x.abs().sum(), [-1.0, 0.0, 2.0]),
    ("relu-kink", lambda x: x.relu().sum(), lambda t, x: t.relu(x).sum(), [-1.0, 0.0, 2.0]),
    ("sqrt-zero", lambda x: x.sqrt().sum(), lambda t, x: t.sqrt(x).sum(), [0.0, 4.0]),
    ("max-ties", lambda x: x.max(), lambda t, x: x.max(), [1.0, 3.0, 3.0]),
    (
        "amax-axis",
        lambda x: (x.max(axis=1) * tensor([1.0, 2.0])).sum(),
        lambda t, x: (t.amax(x, dim=1) * t.tensor([1.0, 2.0], dtype=t.float64)).sum(),
        [[2.0, 2.0, 1.0], [0.0, 5.0, 5.0]],
    ),
    ("norm-zero", lambda x: x.norm(), lambda t, x: t.linalg.vector_norm(x), [0.0, 0.0]),
    ("prod-one-zero", lambda x: x.prod(), lambda t, x: x.prod(), [2.0, 0.0, 3.0]),
    ("prod-two-zeros", lambda x: x.prod(), lambda t, x: x.prod(), [0.0, 2.0, 0.0]),
    ("pow-half-zero", lambda x: (x**0.5).sum(), lambda t, x: (x**0.5).sum(), [0.0, 1.0]),
    ("pow-zero-zero", lambda x: (x**0).sum(), lambda t, x: (x**0).sum(), [0.0, 1.0]),
    (
        "softplus",
        lambda x: x.softplus().sum(),
        lambda t, x: t.nn.functional.softplus(x).sum(),
        [-30.0, 0.5, 30.0],
    ),
    (
        "matmul",
        lambda x: (x @ tensor([[1.0, -2.0], [0.5, 3.0]]) @ x).sum(),
        lambda t, x: (x @ t.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=t.float64) @ x).sum(),
        [0.7, -1.1],
    ),
    (
        "log1p*expm1+erf+erfc",
        lambda x: (_op("log1p", x) * _op("expm1", x) + _op("erf", x) + _op("erfc", x)).sum(),
        lambda t, x: (t.log1p(x) * t.expm1(x) + t.erf(x) + t.erfc(x)).sum(),
        [0.3, -0.6, 2.0, 0.0],
    ),
    ("erfinv", lambda x: _op("erfinv", x).sum(), lambda t, x: t.erfinv(x).sum(), [0.3, -0.7, 0.9]),
    ("lgamma", lambda x: _op("lgamma", x).sum(), lambda t, x: t.lgamma(x).sum(), [0.3, 2.5, -1.5]),
    (
        "atan2+hypot",
        lambda x: (_op("atan2", x, 2 - x) + _op("hypot", x, x + 1)).sum(),
        lambda t, x: (t.atan2(x, 2 - x) + t.hypot(x, x + 1)).sum(),
        [0.3, -1.2, 2.5],
    ),
    # at the origin: atan2's partials pinned to 0, hypot's 0/0 = nan
    (
        "atan2-origin",
        lambda x: _op("atan2", x, x).sum(),
        lambda t, x: t.atan2(x, x).sum(),
        [0.0, 1.0],
    ),
    (
        "hypot-origin",
        lambda x: _op("hypot", x, x).sum(),
        lambda t, x: t.hypot(x, x).sum(),
        [0.0, 1.0],
    ),
    (
        "mod",
        lambda x: _op("mod", x, tensor(1.5)).sum(),
        lambda t, x: t.remainder(x, 1.5).sum(),
        [-2.0, 0.7, 3.2, -0.3],
    ),
    (
        "clip-at-bounds",
        lambda x: _op("clip", x, tensor(-0.5), tensor(1.0)).sum(),
        lambda t, x: t.clamp(x, -0.5, 1.0).sum(),
        [-1.0, -0.5, 0.3, 1.0, 2.0],
    ),
    (
        "logsumexp",
        lambda x: _op("logsumexp", x, **WHOLE),
        lambda t, x: t.logsumexp(x, 0),
        [0.3, -1.2, 2.0, 700.0],
    ),
    (
        "var+std",
        lambda x: _op("variance", x, **WHOLE) + _op("std", x, **WHOLE),
        lambda t, x: t.var(x, correction=0) + t.std(x, correction=0),
        [0.3, -1.2, 2.0, 0.5],
    ),
    (
        "std-constant",
        lambda x: _op("std", x, **WHOLE),
        lambda t, x: t.std(x, correction=0),
        [2.0, 2.0],
    ),
    # issue 27's: sinc at 0 (derivative 0; tiny x, where PyTorch's quotient loses its digits,
    # against mpmath below); i0e's corner at 0 (0), i1 and i1e at
    # |x| <= eps (1/2); the incomplete gamma functions at x = 0 (inf, 0 and nan at a = 1)
    (
        "sinc",
        lambda x: _op("sinc", x).sum(),
        lambda t, x: t.sinc(x).sum(),
        [0.0, -0.0, 0.3, -2.5, 1.0],
    ),
    (
        "bessel-i",
        lambda x: (_op("i0", x) + _op("i0e", x) * 2 + _op("i1", x) * 3 + _op("i1e", x) * 5).sum(),
        lambda t, x: (
            t.special.i0(x) + t.special.i0e(x) * 2 + t.special.i1(x) * 3 + t.special.i1e(x) * 5
        ).sum(),
        [0.0, 1e-17, -2.2e-16, 0.3, -2.5, 30.0, -700.0],
    ),
    (
        "gammainc+gammaincc",
        lambda x: (
            _op("gammainc", tensor([0.5, 1.0, 2.0, 3.5]), x)
            + _op("gammaincc", tensor([2.0, 1.0, 0.5, 7.0]), x) * 3
        ).sum(),
        lambda t, x: (
            t.special.gammainc(t.tensor([0.5, 1.0, 2.0, 3.5], dtype=t.float64), x)
            + t.special.gammaincc(t.tensor([2.0, 1.0, 0.5, 7.0], dtype=t.float64), x) * 3
        ).sum(),
        [0.3, 2.0, 7.5, 1e-3],
    ),
    (
        "gammainc-at-0",
        lambda x: (_op("gammainc", tensor([0.5, 1.0, 2.0]), x)).sum(),
        lambda t, x: t.special.gammainc(t.tensor([0.5, 1.0, 2.0], dtype=t.float64), x).sum(),
        [0.0, 0.0, 0.0],
    ),
]


@pytest.mark.parametrize("label,fn,torch_fn,value", TORCH_CASES, ids=[c[0] for c in TORCH_CASES])
def test_against_torch(label, fn, torch_fn, value, torch):
    tx = torch.tensor(value, dtype=torch.float64, requires_grad=True)
    ty = torch_fn(torch, tx)
    (tg,) = torch.autograd.grad(ty, tx)
    x = tensor(value, requires_grad=True)
    y = fn(x)
    (g,) = grad(y, x)
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-13, atol=0)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-13, atol=0)


def test_sinc_near_0_is_its_limit():
    # PyTorch's sinc' is 0 where pi x^2 is 0 and loses its digits near 0 (at 1e-8 it is 36 %
    # off, its derivative sinc'' -5.66 for -3.29); here the series there: 0 at 0, no -0,
    # and sinc' and sinc'' right to rounding at every scale (mpmath), sinc''(0) = -pi^2/3
    # (JAX's; PyTorch's double backward is nan there)
    xs = [0.0, -0.0, 1e-300, 1e-170, -1e-20, 1e-8, 1e-5, 1e-3, 0.0318, 0.0319, 0.05, -0.3]
    x = tensor(xs, requires_grad=True)
    (d1,) = grad(_op("sinc", x).sum(), x, create_graph=True)
    assert list(d1.numpy()[:2]) == [0.0, 0.0] and not np.signbit(d1.numpy()[:2]).any()
    (d2,) = grad(d1.sum(), x)
    with mpmath.workdps(40):
        for v, a, b in zip(xs, d1.numpy(), d2.numpy()):
            v = mpmath.mpf(v)
            first = -(mpmath.pi**2) / 3 * v if abs(v) < 1e-6 else mpmath.diff(mpmath.sincpi, v)
            second = -(mpmath.pi**2) / 3 if abs(v) < 1e-6 else mpmath.diff(mpmath.sincpi, v, 2)
            assert abs(a - first) <= 1e-13 * abs(first), (v, a)
            assert abs(b - second) <= 1e-13 * abs(second), (v, b)


def test_against_torch_maximum_tie(torch):
    a, b = (torch.tensor(2.0, dtype=torch.float64, requires_grad=True) for _ in range(2))
    ta, tb = torch.autograd.grad(torch.maximum(a, b), (a, b))
    x, y = tensor(2.0, requires_grad=True), tensor(2.0, requires_grad=True)
    ga, gb = grad(apply(OPS["maximum"], x, y), (x, y))
    assert (ga.item(), gb.item()) == (ta.item(), tb.item())


def test_against_torch_grad_fn_names(torch):
    tx = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    x = tensor([1.0, 2.0], requires_grad=True)
    W = [[1.0, 2.0], [3.0, 4.0]]
    pairs = [
        (x * 2, tx * 2),
        (x + 1, tx + 1),
        (x.sin(), tx.sin()),
        (x.sum(), tx.sum()),
        (x**2, tx**2),
        (tensor(W) @ x, torch.tensor(W, dtype=torch.float64) @ tx),
        (x.exp(), tx.exp()),
        (x / 3, tx / 3),
        (-x, -tx),
    ]
    for ours, theirs in pairs:
        assert ours.grad_fn.name() == type(theirs.grad_fn).__name__


def test_against_torch_grad_fn_names_of_the_new_functions(torch):
    v = [0.3, 0.6]
    tx = torch.tensor(v, dtype=torch.float64, requires_grad=True)
    x = tensor(v, requires_grad=True)
    pairs = [
        (_op("log1p", x), tx.log1p()),
        (_op("expm1", x), tx.expm1()),
        (_op("erf", x), tx.erf()),
        (_op("erfc", x), tx.erfc()),
        (_op("erfinv", x), tx.erfinv()),
        (_op("lgamma", x), tx.lgamma()),
        (_op("digamma", x), tx.digamma()),
        (_op("polygamma", tensor(2.0), x), torch.polygamma(2, tx)),
        (_op("atan2", x, x + 1), torch.atan2(tx, tx + 1)),
        (_op("hypot", x, x + 1), torch.hypot(tx, tx + 1)),
        (_op("clip", x, x - 1, x + 1), torch.clamp(tx, tx - 1, tx + 1)),
        (_op("logsumexp", x, **WHOLE), tx.logsumexp(0)),
        (_op("variance", x, **WHOLE), tx.var(correction=0)),
        (_op("std", x, **WHOLE), tx.std(correction=0)),
        (_op("sinc", x), tx.sinc()),
        (_op("i0", x), torch.special.i0(tx)),
        (_op("i0e", x), torch.special.i0e(tx)),
        (_op("i1", x), torch.special.i1(tx)),
        (_op("i1e", x), torch.special.i1e(tx)),
        (_op("gammainc", tensor(2.0), x), torch.special.gammainc(tx.detach() + 2, tx)),
        (_op("gammaincc", tensor(2.0), x), torch.special.gammaincc(tx.detach() + 2, tx)),
    ]
    for ours, theirs in pairs:
        assert ours.grad_fn.name() == type(theirs.grad_fn).__name__


# gammainc's a, betainc's a and b: no derivative (PyTorch and JAX implement none), so a
# derivative asked along them is an error in every command, not a zero
NO_DERIVATIVE = [
    ("gammainc(a, x)", {"a": 2.0, "x": 1.0}),
    ("gammaincc(2*a, x)", {"a": 2.0, "x": 1.0}),
    ("betainc(2, a, x) + a", {"a": 2.0, "x": 0.3}),
]


@pytest.mark.parametrize("text, values", NO_DERIVATIVE, ids=[t for t, _ in NO_DERIVATIVE])
def test_no_derivative_along_an_argument_without_one(text, values):
    from autograd_cli.core import api, codegen
    from autograd_cli.core.errors import UnsupportedError
    from autograd_cli.core.taylor import taylor

    program = parse(text)
    for name in ("grad", "hessian", "jacobian", "diff", "check"):
        with pytest.raises(UnsupportedError, match="no derivative along its"):
            api.compute(name, program, values, wrt="a")
    with pytest.raises(UnsupportedError, match="no derivative along its"):
        api.compute("grad", program, values)  # every variable
    with pytest.raises(UnsupportedError, match="no derivative along its"):
        taylor(program, values, wrt=["a"], order=3)
    with pytest.raises(UnsupportedError, match="no derivative along its"):
        codegen.generate(program, values, wrt="a")
    # along x alone: PyTorch's gradient; x inside a too: the error again
    assert np.isfinite(api.compute("grad", program, values, wrt="x").grad["x"])
    with pytest.raises(UnsupportedError, match="no derivative along its"):
        api.compute("grad", parse(re.sub(r"\ba\b", "(a + x)", text)), values, wrt="x")


def test_against_jax_where_torch_has_no_derivative():
    # j0' = -j1 and j1' = j0 - j1/x (JAX's bessel_jn, differentiated through its
    # recurrence, is good away from 0 and below x ~ 20), betainc's d/dx (JAX's betainc_gradx)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp, jsp = jax.numpy, jax.scipy.special
    xs = [0.3, -1.7, 2.5, 6.0, -9.5]
    for order in (0, 1):
        jn = jax.grad(lambda v, k=order: jsp.bessel_jn(v, v=1)[k])
        want = [float(jn(x)) for x in xs]
        x = tensor(xs, requires_grad=True)
        (got,) = grad(_op(f"j{order}", x).sum(), x)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    a, b, xs = 2.5, 1.5, [0.05, 0.3, 0.5, 0.9, 0.999]
    want = [float(jax.grad(lambda v: jsp.betainc(a, b, v))(jnp.float64(x))) for x in xs]
    x = tensor(xs, requires_grad=True)
    (got,) = grad(_op("betainc", tensor(a), tensor(b), x).sum(), x)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
