"""The public API of core/functional.py and core/forward.py: options, nesting and errors.

Complements tests/test_functional.py (which checks values of the main paths).  Every
test here checks an answer against an independent oracle: closed forms worked out
by hand or by SymPy, central finite differences in float64, the exact error kind
and message, and ``torch.autograd.functional`` / ``torch.autograd.gradcheck`` /
``torch.func.jvp`` with the same options where PyTorch is installed (the ``torch``
fixture skips those tests cleanly otherwise).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from autograd_cli.core import Tensor, grad, tensor
from autograd_cli.core import forward as fw
from autograd_cli.core.errors import (
    GradError,
    MissingValueError,
    NonScalarOutputError,
    ShapeError,
    UnknownVariableError,
)
from autograd_cli.core.functional import (
    derivative,
    derivatives,
    hessian,
    hvp,
    jacobian,
    jvp,
    vhp,
    vjp,
)
from autograd_cli.core.gradcheck import gradcheck
from autograd_cli.core.ops import Op, call
from autograd_cli.core.program import Expr
from autograd_cli.core.program_functional import (
    program_derivatives,
    program_gradcheck,
    program_hessian,
    program_hvp,
    program_jacobian,
    program_jvp,
    program_vjp,
)
from autograd_cli.core.tensor import OPS, apply
from autograd_cli.grammar import parse

TOL = dict(rtol=1e-12, atol=1e-12)


def as_np(a):
    if isinstance(a, Tensor):
        return a.numpy()
    if hasattr(a, "detach"):  # a torch tensor
        return a.detach().numpy()
    return np.asarray(a, dtype=float)


def close(a, b, **tol):
    a, b = as_np(a), as_np(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, **(tol or TOL))


def flat(x):
    if isinstance(x, (tuple, list)):
        return [z for y in x for z in flat(y)]
    return [x]


def central_jacobian(f, x0, eps=1e-6):
    """d f / d x by central differences in float64: shape f.shape + x.shape."""
    x0 = np.asarray(x0, dtype=float)
    base = np.asarray(f(x0), dtype=float)
    cols = []
    for k in range(x0.size):
        e = np.zeros(x0.size)
        e[k] = eps
        e = e.reshape(x0.shape)
        cols.append((np.asarray(f(x0 + e)) - np.asarray(f(x0 - e))) / (2 * eps))
    return np.stack(cols, axis=-1).reshape(base.shape + x0.shape)


def sym_values(expr, symbols, point):
    subs = dict(zip(symbols, point))
    return float(expr.subs(subs))


def T(torch, a, requires_grad=False):
    return torch.tensor(
        np.asarray(a, dtype=float), dtype=torch.float64, requires_grad=requires_grad
    )


ALL_FUNCTIONS = {
    "jacobian": lambda f, x: jacobian(f, x),
    "hessian": lambda f, x: hessian(f, x),
    "vjp": lambda f, x: vjp(f, x, tensor(1.0)),
    "jvp": lambda f, x: jvp(f, x, tensor(1.0)),
    "hvp": lambda f, x: hvp(f, x, tensor(1.0)),
    "vhp": lambda f, x: vhp(f, x, tensor(1.0)),
}


# ---------------------------------------------------------------------------
# Inputs and outputs that are not floating-point Tensors
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(ALL_FUNCTIONS))
def test_a_non_tensor_input_is_a_type_error_naming_its_position(name):
    with pytest.raises(TypeError) as err:
        ALL_FUNCTIONS[name](lambda x: (x**2).sum(), 2.0)
    assert str(err.value) == f"The inputs given to {name} must be Tensors; input 0 is a float"
    with pytest.raises(TypeError, match="input 1 is a list"):
        ALL_FUNCTIONS[name](lambda x, y: x.sum(), (tensor(1.0), [2.0]))


@pytest.mark.parametrize("name", list(ALL_FUNCTIONS))
def test_an_integer_input_is_a_type_error(name):
    x = tensor([1, 2], dtype="int64")
    assert x.data.dtype.kind == "i"
    with pytest.raises(TypeError) as err:
        ALL_FUNCTIONS[name](lambda v: (v * 1.0).sum(), x)
    assert str(err.value) == f"{name}: input 0 has dtype int64, expected floating point"


@pytest.mark.parametrize("name", ["jacobian", "vjp", "jvp"])
def test_a_function_returning_a_non_tensor_is_a_type_error(name):
    fn = {"jacobian": jacobian, "vjp": vjp, "jvp": jvp}[name]
    args = () if name == "jacobian" else (tensor(1.0),)
    with pytest.raises(TypeError) as err:
        fn(lambda x: (x * 2, 3.0), tensor(1.0), *args)
    assert str(err.value) == (
        f"The outputs of the function given to {name} must be Tensors; output 1 is a float"
    )


def test_type_errors_match_torch(torch):
    import torch.autograd.functional as TF

    # PyTorch raises TypeError for the same misuse (a list input, a float output).
    with pytest.raises(TypeError):
        TF.jacobian(lambda v: v, [1.0])
    with pytest.raises(TypeError):
        jacobian(lambda v: v, [1.0])
    with pytest.raises(TypeError):
        TF.jacobian(lambda v: 3.0, T(torch, [1.0, 2.0]))
    with pytest.raises(TypeError):
        jacobian(lambda v: 3.0, tensor([1.0, 2.0]))
    with pytest.raises(TypeError):
        TF.hessian(lambda v: 1.0, T(torch, [1.0, 2.0]))
    with pytest.raises(TypeError):
        hessian(lambda v: 1.0, tensor([1.0, 2.0]))


@pytest.mark.parametrize(
    "call_it",
    [
        lambda s: jacobian(lambda x: x, tensor([1.0]), strategy=s),
        lambda s: hessian(lambda x: (x**2).sum(), tensor([1.0]), outer_jacobian_strategy=s),
        lambda s: program_jacobian(parse("x**2"), {"x": 1.0}, strategy=s),
        lambda s: program_hessian(parse("x**2"), {"x": 1.0}, strategy=s),
    ],
)
def test_an_unknown_strategy_is_a_value_error(call_it):
    with pytest.raises(ValueError) as err:
        call_it("sideways")
    assert str(err.value) == "unknown strategy 'sideways' (choose auto, forward or reverse)"


# ---------------------------------------------------------------------------
# Functions that must return a single scalar (hessian, hvp, vhp)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["hessian", "hvp", "vhp"])
def test_a_tuple_of_two_outputs_is_rejected_with_torchs_message(name):
    with pytest.raises(GradError) as err:
        ALL_FUNCTIONS[name](lambda x: (x * 2, x * 3), tensor(1.0))
    # torch.autograd.functional.hessian words it the same way.
    assert str(err.value) == f"The function given to {name} should return a single Tensor"


@pytest.mark.parametrize("name", ["hessian", "hvp", "vhp"])
def test_a_non_tensor_scalar_output_is_a_type_error(name):
    with pytest.raises(TypeError) as err:
        ALL_FUNCTIONS[name](lambda x: 1.5, tensor(1.0))
    assert str(err.value) == f"The function given to {name} should return a Tensor, got float"


def test_a_one_element_tuple_output_is_unwrapped():
    # f(x) = x0^3 x1: H = [[6 x0 x1, 3 x0^2], [3 x0^2, 0]]
    x = tensor([1.5, -2.0])
    H = hessian(lambda v: ((v[0] ** 3) * v[1],), x)
    close(H, [[6 * 1.5 * -2.0, 3 * 1.5**2], [3 * 1.5**2, 0.0]])
    _, hv = hvp(lambda v: ((v[0] ** 3) * v[1],), x, tensor([1.0, 0.0]))
    close(hv, [6 * 1.5 * -2.0, 3 * 1.5**2])


def test_a_non_scalar_output_error_carries_its_shape():
    with pytest.raises(NonScalarOutputError) as err:
        vhp(lambda x: x * 2, tensor([1.0, 2.0]), tensor([1.0, 1.0]))
    assert err.value.details["shape"] == [2]
    assert "(it has shape (2,))" in str(err.value)


def test_a_constant_output_has_zero_second_derivatives():
    x = tensor([1.0, 2.0])
    const = lambda v: tensor(3.0)  # noqa: E731  (does not depend on v: no graph at all)
    close(hessian(const, x), np.zeros((2, 2)))
    y, hv = hvp(const, x, tensor([1.0, -1.0]))
    close(y, 3.0)
    close(hv, [0.0, 0.0])
    y, vh = vhp(const, x, tensor([1.0, -1.0]))
    close(y, 3.0)
    close(vh, [0.0, 0.0])
    out, g = vjp(lambda v: tensor([1.0, 1.0]), x, tensor([1.0, 1.0]))
    close(out, [1.0, 1.0])
    close(g, [0.0, 0.0])


def test_constant_outputs_match_torch(torch):
    import torch.autograd.functional as TF

    xt = T(torch, [1.0, 2.0])
    const = lambda v: T(torch, 3.0)  # noqa: E731
    close(hessian(lambda v: tensor(3.0), tensor([1.0, 2.0])), TF.hessian(const, xt))
    _, g = TF.vjp(lambda v: T(torch, [1.0, 1.0]), xt, T(torch, [1.0, 1.0]))
    close(vjp(lambda v: tensor([1.0, 1.0]), tensor([1.0, 2.0]), tensor([1.0, 1.0]))[1], g)
    _, vh = TF.vhp(const, xt, T(torch, [1.0, -1.0]))
    close(vhp(lambda v: tensor(3.0), tensor([1.0, 2.0]), tensor([1.0, -1.0]))[1], vh)


# ---------------------------------------------------------------------------
# The vector v of vjp, jvp, hvp and vhp
# ---------------------------------------------------------------------------


def test_v_may_be_omitted_for_single_element_tensors():
    # d/dx x^3 at 2 = 12; d2/dx2 x^3 at 2 = 12; one-element (1,) shapes too.
    x = tensor(2.0)
    close(vjp(lambda v: v**3, x)[1], 12.0)
    close(jvp(lambda v: v**3, x)[1], 12.0)
    close(hvp(lambda v: v**3, x)[1], 12.0)
    close(vhp(lambda v: v**3, x)[1], 12.0)
    out, g = vjp(lambda v: v**3, tensor([2.0]))
    close(out, [8.0])
    close(g, [12.0])


@pytest.mark.parametrize(
    "name, what",
    [("vjp", "output"), ("jvp", "input"), ("hvp", "input"), ("vhp", "input")],
)
def test_v_may_not_be_omitted_for_larger_tensors(name, what):
    fn = {"vjp": vjp, "jvp": jvp, "hvp": hvp, "vhp": vhp}[name]
    f = (lambda v: v * 2) if name in ("vjp", "jvp") else (lambda v: (v**2).sum())
    with pytest.raises(GradError) as err:
        fn(f, tensor([1.0, 2.0]))
    # The same sentence as torch.autograd.functional ("The vector v can only be None if ...").
    assert str(err.value) == (
        f"The vector v can only be None if the {what} is a single element Tensor ({name})"
    )


def test_v_omitted_matches_torch(torch):
    import torch.autograd.functional as TF

    x = T(torch, 2.0)
    for ours, theirs in ((vjp, TF.vjp), (jvp, TF.jvp), (hvp, TF.hvp), (vhp, TF.vhp)):
        close(ours(lambda v: v**3, tensor(2.0))[1], theirs(lambda v: v**3, x)[1])
    with pytest.raises(RuntimeError, match="The vector v can only be None if the"):
        TF.vjp(lambda v: v * 2, T(torch, [1.0, 2.0]))


def test_v_with_the_wrong_number_of_entries_is_a_shape_error():
    with pytest.raises(ShapeError) as err:
        vjp(lambda v: v * 2, tensor([1.0, 2.0]), (tensor([1.0, 1.0]), tensor([1.0, 1.0])))
    assert str(err.value) == "vjp: v has 2 entries but there are 1 outputs"
    with pytest.raises(ShapeError) as err:
        hvp(lambda a, b: (a * b).sum(), (tensor(1.0), tensor(2.0)), tensor(1.0))
    assert str(err.value) == "hvp: v has 1 entries but there are 2 inputs"


def test_v_with_the_wrong_shape_is_a_shape_error():
    with pytest.raises(ShapeError) as err:
        vjp(lambda v: v * 2, tensor([1.0, 2.0]), tensor([1.0, 1.0, 1.0]))
    assert str(err.value) == "vjp: v has shape (3,) but the output has shape (2,)"
    assert err.value.details == {"expected": [2], "got": [3]}
    with pytest.raises(ShapeError) as err:
        jvp(lambda v: v * 2, tensor([[1.0, 2.0]]), tensor([1.0, 2.0]))
    assert err.value.details == {"expected": [1, 2], "got": [2]}


def test_v_given_as_numbers_or_arrays_is_converted():
    # vjp of x^3 at x = 2 with v = 0.5 is 0.5 * 12; jvp of sin at [0, 1] with v = [2, 3].
    close(vjp(lambda v: v**3, tensor(2.0), 0.5)[1], 6.0)
    _, t = jvp(lambda v: v.sin(), tensor([0.0, 1.0]), np.array([2.0, 3.0]))
    close(t, [2.0, 3.0 * math.cos(1.0)])


def test_wrong_v_shape_is_also_rejected_by_torch(torch):
    import torch.autograd.functional as TF

    with pytest.raises(RuntimeError, match="v has invalid size"):
        TF.vjp(lambda v: v * 2, T(torch, [1.0, 2.0]), T(torch, [1.0, 1.0, 1.0]))


# ---------------------------------------------------------------------------
# strict=True
# ---------------------------------------------------------------------------

X2, Y2 = tensor([1.0, 2.0]), tensor([0.5, 3.0])
V2, W2 = tensor([1.0, -1.0]), tensor([2.0, 0.5])

# (name, call, raises): whether strict mode must reject the function (torch agrees:
# see test_strict_mode_agrees_with_torch).
STRICT_CASES = [
    ("jacobian dependent", lambda m, s: m.jacobian(lambda a, b: a * b, (X2, Y2), strict=s), False),
    (
        "jacobian zero but dependent",
        lambda m, s: m.jacobian(lambda a: a * 0.0, X2, strict=s),
        False,
    ),
    (
        "jacobian independent",
        lambda m, s: m.jacobian(lambda a, b: a.exp(), (X2, Y2), strict=s),
        True,
    ),
    ("hessian cubic", lambda m, s: m.hessian(lambda a: (a**3).sum(), X2, strict=s), False),
    (
        "hessian coupled",
        lambda m, s: m.hessian(lambda a, b: (a**2 * b**2).sum(), (X2, Y2), strict=s),
        False,
    ),
    (
        "hessian one block independent",
        lambda m, s: m.hessian(lambda a, b: (a**2 * b).sum(), (X2, Y2), strict=s),
        True,
    ),
    ("hessian linear", lambda m, s: m.hessian(lambda a: a.sum(), X2, strict=s), True),
    (
        "hessian separable",
        lambda m, s: m.hessian(lambda a, b: (a**2).sum() + (b**2).sum(), (X2, Y2), strict=s),
        True,
    ),
    ("vjp dependent", lambda m, s: m.vjp(lambda a, b: a * b, (X2, Y2), V2, strict=s), False),
    ("vjp independent", lambda m, s: m.vjp(lambda a, b: a * 2, (X2, Y2), V2, strict=s), True),
    ("jvp dependent", lambda m, s: m.jvp(lambda a, b: a * b, (X2, Y2), (V2, W2), strict=s), False),
    (
        "jvp constant output",
        lambda m, s: m.jvp(lambda a, b: (a * b, m.const(1.0)), (X2, Y2), (V2, W2), strict=s),
        True,
    ),
    ("hvp cubic", lambda m, s: m.hvp(lambda a: (a**3).sum(), X2, V2, strict=s), False),
    ("hvp linear", lambda m, s: m.hvp(lambda a: a.sum(), X2, V2, strict=s), True),
    ("vhp cubic", lambda m, s: m.vhp(lambda a: (a**3).sum(), X2, V2, strict=s), False),
    ("vhp linear", lambda m, s: m.vhp(lambda a: a.sum(), X2, V2, strict=s), True),
]


class _Ours:
    jacobian = staticmethod(jacobian)
    hessian = staticmethod(hessian)
    vjp = staticmethod(vjp)
    jvp = staticmethod(jvp)
    hvp = staticmethod(hvp)
    vhp = staticmethod(vhp)
    const = staticmethod(tensor)


@pytest.mark.parametrize("label, run, raises", STRICT_CASES, ids=[c[0] for c in STRICT_CASES])
def test_strict_mode(label, run, raises):
    # strict only adds a check (torch.autograd.functional's contract): without it the
    # call succeeds, and with it the result is the same or the call is rejected.
    relaxed = run(_Ours, False)
    if raises:
        with pytest.raises(GradError, match="strict mode"):
            run(_Ours, True)
    else:
        for a, b in zip(flat(run(_Ours, True)), flat(relaxed)):
            close(a, b)


def test_strict_mode_results_are_the_ordinary_results():
    # strict only adds a check: the Jacobian of a*b is (diag b, diag a).
    Ja, Jb = jacobian(lambda a, b: a * b, (X2, Y2), strict=True)
    close(Ja, np.diag(Y2.numpy()))
    close(Jb, np.diag(X2.numpy()))
    close(jacobian(lambda a: a * 0.0, X2, strict=True), np.zeros((2, 2)))
    H = hessian(lambda a: (a**3).sum(), X2, strict=True)
    close(H, np.diag(6 * X2.numpy()))


def test_strict_mode_agrees_with_torch(torch):
    import torch.autograd.functional as TF

    class Theirs:
        @staticmethod
        def _convert(args):
            out = []
            for a in args:
                if isinstance(a, tuple):
                    out.append(tuple(T(torch, z.numpy()) for z in a))
                elif isinstance(a, Tensor):
                    out.append(T(torch, a.numpy()))
                else:
                    out.append(a)
            return out

        @staticmethod
        def const(v):
            return T(torch, v)

    for name in ("jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"):
        fn = getattr(TF, name)
        setattr(
            Theirs,
            name,
            staticmethod(lambda f, *a, _fn=fn, **k: _fn(f, *Theirs._convert(a), **k)),
        )
    for _label, run, raises in STRICT_CASES:
        if raises:
            with pytest.raises(RuntimeError, match="strict mode"):
                run(Theirs, True)
        for strict in (False,) if raises else (False, True):
            for a, b in zip(flat(run(_Ours, strict)), flat(run(Theirs, strict))):
                close(a, b)


@pytest.mark.parametrize("fn", [hvp, vhp], ids=["hvp", "vhp"])
def test_strict_hvp_rejects_an_input_with_a_zero_hessian_like_torch(fn):
    # f(a, b) = sum(a^3) + sum(b): the gradient w.r.t. b is constant (torch raises
    # "... the jacobian of the user-provided function with respect to input 1 is independent").
    with pytest.raises(GradError, match="respect to input 1 .*strict mode"):
        fn(lambda a, b: (a**3).sum() + b.sum(), (X2, Y2), (V2, W2), strict=True)
    # input 0 alone has a non-zero Hessian: strict accepts it, with 6 a v
    value, product = fn(lambda a: (a**3).sum(), X2, V2, strict=True)
    close(product, 6 * X2.numpy() * V2.numpy())


# ---------------------------------------------------------------------------
# create_graph=True: results that can be differentiated again
# ---------------------------------------------------------------------------

S3 = sp.symbols("x0:3")
P3 = [0.3, -0.8, 1.1]


def _sym_f3():
    # f_i(x) = sin(x_i) * (x0 + x1 + x2): a (3,) output of a (3,) input
    s = sum(S3)
    return [sp.sin(v) * s for v in S3]


def _our_f3(x):
    return x.sin() * x.sum()


def _sym_grad_of_jacobian_sum():
    J = sp.Matrix(_sym_f3()).jacobian(sp.Matrix(S3))
    total = sum(J)
    return np.array([sym_values(sp.diff(total, v), S3, P3) for v in S3])


@pytest.mark.parametrize(
    "options",
    [
        {"strategy": "forward", "chunk_size": 1},  # three chunks joined with the graph kept
        {"strategy": "forward", "chunk_size": 2},
        {"strategy": "forward", "vectorize": False},
        {"strategy": "reverse"},
    ],
    ids=["forward-chunk1", "forward-chunk2", "forward-loop", "reverse"],
)
def test_jacobian_with_create_graph_is_differentiable(options):
    x = tensor(P3, requires_grad=True)
    J = jacobian(_our_f3, x, create_graph=True, **options)
    assert J.requires_grad
    J_sym = sp.Matrix(_sym_f3()).jacobian(sp.Matrix(S3))
    close(J, np.array([[sym_values(e, S3, P3) for e in row] for row in J_sym.tolist()]))
    (g,) = grad(J.sum(), x)
    close(g, _sym_grad_of_jacobian_sum(), rtol=1e-11, atol=1e-12)


def test_jacobian_create_graph_over_tuple_inputs_split_across_chunks():
    # f(a, b) = a * b.sum() with a: (2,), b: (3,); chunks of 2 directions straddle a and b.
    a = tensor([0.5, -1.5], requires_grad=True)
    b = tensor([1.0, 2.0, 0.25], requires_grad=True)
    Ja, Jb = jacobian(
        lambda u, w: u * w.sum(), (a, b), create_graph=True, strategy="forward", chunk_size=2
    )
    close(Ja, np.eye(2) * 3.25)
    close(Jb, np.repeat(a.numpy()[:, None], 3, axis=1))
    # sum(Ja) = 2 sum(b) and sum(Jb) = 3 sum(a): d/da = (3, 3), d/db = (2, 2, 2).
    ga, gb = grad(Ja.sum() + Jb.sum(), (a, b))
    close(ga, [3.0, 3.0])
    close(gb, [2.0, 2.0, 2.0])


def test_jacobian_create_graph_matches_torch(torch):
    import torch.autograd.functional as TF

    xt = T(torch, P3, requires_grad=True)
    Jt = TF.jacobian(lambda v: v.sin() * v.sum(), xt, create_graph=True)
    (gt,) = torch.autograd.grad(Jt.sum(), xt)
    for options in ({"strategy": "forward", "chunk_size": 1}, {"strategy": "reverse"}):
        x = tensor(P3, requires_grad=True)
        J = jacobian(_our_f3, x, create_graph=True, **options)
        close(J, Jt)
        (g,) = grad(J.sum(), x)
        close(g, gt, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("strategy", ["forward-mode", "reverse-mode"])
def test_hessian_with_create_graph_gives_third_derivatives(strategy):
    # f(x) = sum(x^2 sin x): H = diag(h(x)), h = 2 sin x + 4 x cos x - x^2 sin x,
    # and d/dx sum(H) = h'(x) = 6 cos x - 6 x sin x - x^2 cos x.
    xv = np.array([0.4, -1.3])
    x = tensor(xv, requires_grad=True)
    H = hessian(
        lambda v: (v**2 * v.sin()).sum(), x, create_graph=True, outer_jacobian_strategy=strategy
    )
    assert H.requires_grad
    close(H, np.diag(2 * np.sin(xv) + 4 * xv * np.cos(xv) - xv**2 * np.sin(xv)))
    (third,) = grad(H.sum(), x)
    close(third, 6 * np.cos(xv) - 6 * xv * np.sin(xv) - xv**2 * np.cos(xv), rtol=1e-11)


def test_hessian_create_graph_matches_torch(torch):
    import torch.autograd.functional as TF

    f = lambda a, b: (a**2 * b).sin().sum() + (a * b).sum() ** 2  # noqa: E731
    av, bv = np.array([0.4, -1.3]), np.array([0.7, 0.2])
    at, bt = T(torch, av, True), T(torch, bv, True)
    Ht = TF.hessian(f, (at, bt), create_graph=True)
    gt = torch.autograd.grad(sum(h.sum() for h in flat(Ht)), (at, bt))
    for strategy in ("forward-mode", "reverse-mode"):
        a, b = tensor(av, requires_grad=True), tensor(bv, requires_grad=True)
        H = hessian(f, (a, b), create_graph=True, outer_jacobian_strategy=strategy)
        for h, ht in zip(flat(H), flat(Ht)):
            close(h, ht, rtol=1e-11, atol=1e-12)
        g = grad(sum(h.sum() for h in flat(H)), (a, b))
        for u, ut in zip(g, gt):
            close(u, ut, rtol=1e-10, atol=1e-11)


def _products_closed_forms(x0, v0):
    # vjp/jvp of g(x) = x^3 (J = diag(3 x^2)) and hvp/vhp of f(x) = sum(x^4) / 4
    # (H = diag(3 x^2)): the product is 3 x^2 v and d/dx sum(product) = 6 x v.
    return 3 * x0**2 * v0, 6 * x0 * v0


@pytest.mark.parametrize("name", ["vjp", "jvp", "hvp", "vhp"])
def test_products_with_create_graph_are_differentiable(name):
    x0, v0 = np.array([0.5, -2.0, 1.5]), np.array([1.0, 0.25, -3.0])
    fn = {"vjp": vjp, "jvp": jvp, "hvp": hvp, "vhp": vhp}[name]
    f = (lambda v: v**3) if name in ("vjp", "jvp") else (lambda v: (v**4).sum() / 4)
    x = tensor(x0, requires_grad=True)
    out, r = fn(f, x, tensor(v0), create_graph=True)
    product, second = _products_closed_forms(x0, v0)
    close(r, product)
    assert r.requires_grad and out.requires_grad
    (g,) = grad(r.sum(), x)
    close(g, second)
    # Without create_graph the same numbers, detached.
    out2, r2 = fn(f, tensor(x0, requires_grad=True), tensor(v0))
    close(r2, product)
    assert not r2.requires_grad and not out2.requires_grad


@pytest.mark.parametrize("name", ["vjp", "jvp", "hvp", "vhp"])
def test_products_with_create_graph_match_torch(torch, name):
    import torch.autograd.functional as TF

    x0, v0 = np.array([0.5, -2.0, 1.5]), np.array([1.0, 0.25, -3.0])
    ours, theirs = {"vjp": vjp, "jvp": jvp, "hvp": hvp, "vhp": vhp}[name], getattr(TF, name)
    if name in ("vjp", "jvp"):
        f = lambda a, b: (a.sin() * b, (a * b).sum())  # noqa: E731
        v = (tensor(v0), tensor(v0[::-1].copy())) if name == "jvp" else (tensor(v0), tensor(2.0))
    else:
        f = lambda a, b: (a.sin() * b**2).sum() + (a * b).sum() ** 2  # noqa: E731
        v = (tensor(v0), tensor(v0[::-1].copy()))
    a, b = tensor(x0, requires_grad=True), tensor(x0[::-1] * 0.5, requires_grad=True)
    at, bt = T(torch, a.numpy(), True), T(torch, b.numpy(), True)
    vt = tuple(T(torch, z.numpy()) for z in v)
    out, r = ours(f, (a, b), v, create_graph=True)
    out_t, r_t = theirs(f, (at, bt), vt, create_graph=True)
    for u, ut in zip(flat(out) + flat(r), flat(out_t) + flat(r_t)):
        close(u, ut, rtol=1e-12, atol=1e-12)
    g = grad(sum(z.sum() for z in flat(r)), (a, b))
    gt = torch.autograd.grad(sum(z.sum() for z in flat(r_t)), (at, bt))
    for u, ut in zip(g, gt):
        close(u, ut, rtol=1e-11, atol=1e-12)


# ---------------------------------------------------------------------------
# n-th derivatives
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("order", [-1, 1.5])
def test_derivatives_reject_a_bad_order(order):
    with pytest.raises(ValueError) as err:
        derivatives(lambda x: x, tensor(1.0), order)
    assert str(err.value) == f"order must be a non-negative integer, got {order!r}"


def test_derivatives_reject_a_non_tensor_result():
    with pytest.raises(TypeError) as err:
        derivative(lambda x: 2.0, tensor(1.0))
    assert str(err.value) == "the function must return a Tensor, got float"


def test_derivatives_reject_a_function_that_is_neither_scalar_nor_elementwise():
    with pytest.raises(NonScalarOutputError) as err:
        derivatives(lambda x: x.sum() * tensor([1.0, 2.0, 3.0]), tensor([1.0, 2.0]), 1)
    assert err.value.details["shape"] == [3]
    assert "the output has shape (3,) and the input (2,)" in str(err.value)


def test_derivatives_of_a_constant_are_exact_zeros():
    ds = derivatives(lambda x: tensor(5.0), tensor(1.0), 3)
    assert [float(d) for d in ds] == [5.0, 0.0, 0.0, 0.0]
    # A one-element (1,) output of a scalar input counts as a scalar.
    ds = derivatives(lambda x: (x**2).reshape(1), tensor(3.0), 2)
    close(ds[1], 6.0)
    close(ds[2], 2.0)


def test_derivatives_accept_a_plain_number_and_order_zero():
    # x^3 at 2: [8, 12, 12, 6, 0]
    assert [float(d) for d in derivatives(lambda x: x**3, 2.0, 4)] == [8.0, 12.0, 12.0, 6.0, 0.0]
    assert [float(d) for d in derivatives(lambda x: x**3, 2.0, 0)] == [8.0]


def test_derivative_with_create_graph_can_be_differentiated_again():
    X = sp.Symbol("x")
    expr = sp.exp(X) * sp.sin(X)
    x = tensor(0.6, requires_grad=True)
    d2 = derivative(lambda v: v.exp() * v.sin(), x, 2, create_graph=True)
    assert d2.requires_grad
    close(d2, float(sp.diff(expr, X, 2).subs(X, 0.6)))
    (d3,) = grad(d2, x)
    close(d3, float(sp.diff(expr, X, 3).subs(X, 0.6)))
    assert not derivative(lambda v: v.exp() * v.sin(), x, 2).requires_grad


# ---------------------------------------------------------------------------
# gradcheck
# ---------------------------------------------------------------------------


def test_gradcheck_needs_a_floating_point_tensor():
    with pytest.raises(TypeError) as err:
        gradcheck(lambda a: a, (1.0,))
    assert str(err.value) == "gradcheck needs at least one Tensor input"
    with pytest.raises(TypeError) as err:
        gradcheck(lambda a: a * 1.0, tensor([1, 2], dtype="int64"))
    assert str(err.value) == "gradcheck: input 0 has dtype int64"


def test_gradcheck_checks_only_inputs_that_require_grad():
    x = tensor([0.3, 0.9], requires_grad=True)
    y = tensor([2.0, -1.0])  # does not require grad: left out, like torch.autograd.gradcheck
    r = gradcheck(lambda a, b, c: (a * b).sin() * c, (x, y, 3.0))
    assert r.passed
    assert len(r.analytic) == 1 and r.analytic[0].shape == (2, 2)
    # d/da sin(a b) c = diag(c b cos(a b))
    close(r.analytic[0], np.diag(3.0 * y.numpy() * np.cos(x.numpy() * y.numpy())))
    close(r.numeric[0], r.analytic[0], rtol=1e-7, atol=1e-8)
    # No input requires grad: every Tensor input is checked.
    r = gradcheck(lambda a, b, c: (a * b).sin() * c, (tensor([0.3, 0.9]), y, 3.0))
    assert r.passed and len(r.analytic) == 2


def _bad_square():
    # x^2 with the wrong reverse rule g * 3x (the right one is g * 2x).
    def vjp_rule(n, g):
        return (g * n.inputs[0] * 3.0,)

    def jvp_rule(n, ts):
        return ts[0] * n.inputs[0] * 2.0

    return Op("bad_square", "BadSquareBackward0", lambda a: a * a, vjp_rule, jvp_rule)


def test_gradcheck_of_tuple_outputs_locates_the_worst_element_in_the_second_output():
    op = _bad_square()
    x = tensor([0.5, 2.0, 1.0])
    r = gradcheck(lambda v: (v.sin(), apply(op, v) * 0.5), x)
    assert not r.passed
    assert r.analytic[0].shape == (6, 3)  # 3 + 3 output rows, 3 input columns
    # Output 1 is 0.5 x^2: analytic 1.5 x, numeric x; worst at x = 2.0, element 1.
    assert (r.worst["output"], r.worst["output_index"]) == (1, (1,))
    assert r.worst["input_index"] == (1,)
    assert r.worst["analytic"] == pytest.approx(3.0)
    assert r.worst["numeric"] == pytest.approx(2.0, abs=1e-7)
    assert r.messages == ["reverse-mode Jacobian mismatch for input 0"]
    text = r.summary()
    assert text.startswith("gradcheck FAILED")
    assert "d output 1[1] / d input 0[1]" in text
    # The correct part of the same check: rows 0..2 are diag(cos x).
    close(r.analytic[0][:3], np.diag(np.cos(x.numpy())))


def test_gradcheck_passes_tuple_outputs_and_a_passed_summary_names_no_element():
    x, w = tensor([0.3, -0.7]), tensor([[1.0, 2.0], [0.5, -1.0]])
    r = gradcheck(lambda a, m: ((m @ a).tanh(), (a * a).sum()), (x, w), check_forward_ad=True)
    assert r.passed and r.messages == []
    text = r.summary()
    assert text.startswith("gradcheck passed: max abs error")
    assert "worst" not in text
    # Against a finite-difference Jacobian computed here, independently.
    wv = w.numpy()
    num = central_jacobian(lambda a: np.concatenate([np.tanh(wv @ a), [a @ a]]), x.numpy())
    close(r.analytic[0], num, rtol=1e-7, atol=1e-8)
    close(r.forward[0], r.analytic[0])


def test_gradcheck_of_an_op_without_a_forward_rule_raises_in_forward_mode_only():
    # A reverse rule but no jvp rule: reverse mode is right, forward mode has nothing.
    op = Op(
        "rev_only_square",
        "RevOnlySquareBackward0",
        lambda a: a * a,
        lambda n, g: (g * 2.0 * n.inputs[0],),
    )
    x = tensor([0.5, 1.5])
    assert gradcheck(lambda v: apply(op, v), x).passed
    # Forward mode has no rule to run: an error, as torch's gradcheck raises for a
    # torch.autograd.Function without jvp (never a silent zero Jacobian).
    with pytest.raises(NotImplementedError, match="forward AD with rev_only_square"):
        gradcheck(lambda v: apply(op, v), x, check_forward_ad=True)


def test_gradcheck_raise_exception_carries_the_worst_element():
    op = _bad_square()
    with pytest.raises(GradError) as err:
        gradcheck(lambda v: apply(op, v), tensor([1.0, 4.0]), raise_exception=True)
    assert err.value.kind == "gradcheck"
    assert err.value.details["worst"]["input_index"] == (1,)
    assert err.value.details["worst"]["analytic"] == pytest.approx(12.0)


def test_gradcheck_verdicts_match_torch(torch):
    op = _bad_square()
    x = np.array([0.5, 2.0, 1.0])

    class BadSquare(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return g * a * 3.0

    ours = gradcheck(lambda v: (v.sin(), apply(op, v) * 0.5), tensor(x))
    theirs = torch.autograd.gradcheck(
        lambda v: (v.sin(), BadSquare.apply(v) * 0.5), T(torch, x, True), raise_exception=False
    )
    assert ours.passed is False and theirs is False
    good = gradcheck(
        lambda a, m: ((m @ a).tanh(), (a * a).sum()), (tensor(x[:2]), tensor(np.eye(2)))
    )
    good_t = torch.autograd.gradcheck(
        lambda a, m: ((m @ a).tanh(), (a * a).sum()),
        (T(torch, x[:2], True), T(torch, np.eye(2), True)),
    )
    assert good.passed is True and good_t is True


def test_gradcheck_of_a_gradient_is_a_gradgradcheck(torch):
    # gradcheck of x -> grad f(x) (create_graph=True) checks second derivatives,
    # which is what torch.autograd.gradgradcheck does.
    f = lambda v: (v**3 * v.sin()).sum()  # noqa: E731
    x0 = np.array([0.4, -0.9, 1.3])

    def gradient(v):
        # derivative() differentiates under enable_grad with a leaf of its own where v has no
        # graph (gradcheck's finite differences), so it works where a bare grad() does not
        # (see the xfail below).
        return derivative(f, v, 1, create_graph=True)

    r = gradcheck(gradient, tensor(x0, requires_grad=True))
    assert r.passed
    h = 6 * x0 * np.sin(x0) + 6 * x0**2 * np.cos(x0) - x0**3 * np.sin(x0)
    close(r.analytic[0], np.diag(h), rtol=1e-12, atol=1e-12)
    assert torch.autograd.gradgradcheck(lambda v: (v**3 * v.sin()).sum(), (T(torch, x0, True),))


@pytest.mark.xfail(
    strict=True,
    reason="gradcheck evaluates the function on inputs that do not require grad, under "
    "no_grad, so a function that calls grad itself raises GradError; "
    "torch.autograd.gradcheck (and gradgradcheck) accept it",
)
def test_gradcheck_of_a_function_that_differentiates_internally():
    def gradient(v):
        (g,) = grad((v**3).sum(), v, create_graph=True)
        return g

    r = gradcheck(gradient, tensor([0.4, -0.9], requires_grad=True))
    assert r.passed
    close(r.analytic[0], np.diag([6 * 0.4, 6 * -0.9]))


def test_gradcheck_of_an_empty_output_passes():
    assert gradcheck(lambda v: v[:0], tensor([1.0, 2.0])).passed


def test_gradcheck_and_jacobian_with_an_empty_input():
    # f(v, w) = (sum(v) + w) * w with v empty: df/dv is a (0,) block, df/dw = 2w = 4.
    f = lambda v, w: (v.sum() + w) * w  # noqa: E731
    r = gradcheck(f, (tensor(np.zeros(0)), tensor(2.0)))
    assert r.passed
    assert [a.shape for a in r.analytic] == [(1, 0), (1, 1)]
    close(r.analytic[1], [[4.0]])
    for strategy in ("auto", "forward", "reverse"):
        Jv, Jw = jacobian(f, (tensor(np.zeros(0)), tensor(2.0)), strategy=strategy)
        assert Jv.shape == (0,)
        close(Jw, 4.0)
    assert jacobian(lambda v: v.sum() * 2 + 1, tensor(np.zeros(0)), strategy="reverse").shape == (
        0,
    )


def test_empty_inputs_match_torch(torch):
    import torch.autograd.functional as TF

    f = lambda v, w: (v.sum() + w) * w  # noqa: E731
    assert torch.autograd.gradcheck(f, (T(torch, np.zeros(0), True), T(torch, 2.0, True)))
    Jv, Jw = TF.jacobian(f, (T(torch, np.zeros(0)), T(torch, 2.0)))
    ours = jacobian(f, (tensor(np.zeros(0)), tensor(2.0)))
    close(ours[0], Jv)
    close(ours[1], Jw)


@pytest.mark.parametrize("strategy", ["auto", "forward"])
def test_jacobian_of_a_single_empty_input_forward(strategy):
    J = jacobian(lambda v: v.sum() * 2 + 1, tensor(np.zeros(0)), strategy=strategy)
    assert J.shape == (0,)


# ---------------------------------------------------------------------------
# Programs: expressions without a Program wrapper, wrt, auto strategy
# ---------------------------------------------------------------------------


def test_program_functions_accept_a_bare_expression():
    X, Y = sp.symbols("x y")
    expr = X * Y + X
    bare = parse("x*y + x").output  # an Expr, not a Program
    assert isinstance(bare, Expr)
    r = program_jacobian(bare, {"x": 1.5, "y": 2.0})
    assert list(r.jacobian) == ["x", "y"]  # first use first
    close(r.jacobian["x"], float(sp.diff(expr, X).subs({X: 1.5, Y: 2.0})))
    close(r.jacobian["y"], 1.5)
    r = program_jacobian(bare, {"x": 1.5, "y": 2.0}, wrt="y")
    assert list(r.jacobian) == ["y"]
    h = program_hessian(parse("x*x*y").output, {"x": 1.5, "y": 2.0})
    close(h.hessian["x"]["x"], 4.0)  # d2/dx2 x^2 y = 2y
    close(h.hessian["x"]["y"], 3.0)  # 2x
    close(h.hessian["y"]["y"], 0.0)


def test_program_jacobian_auto_strategy_follows_the_sizes():
    # auto: forward when inputs have no more elements than the output, reverse otherwise.
    scalar = program_jacobian(parse("x*y"), {"x": 1.0, "y": 2.0})
    assert scalar.strategy == "reverse"
    close(scalar.jacobian["x"], 2.0)
    vector = program_jacobian(parse("[x*y, x+y, x-y]"), {"x": 1.0, "y": 2.0})
    assert vector.strategy == "forward"
    close(vector.jacobian["y"], [1.0, 1.0, -1.0])


def test_program_products_derivatives_and_gradcheck_with_wrt():
    X, Y = sp.symbols("x y")
    expr = sp.sin(X) * Y**2
    at = {X: 0.7, Y: -1.2}
    values = {"x": 0.7, "y": -1.2}
    source = "sin(x) * y**2"
    out, g = program_vjp(parse(source), values, tensor(1.0), wrt="y")
    assert list(g) == ["y"]
    close(out, float(expr.subs(at)))
    close(g["y"], float(sp.diff(expr, Y).subs(at)))
    _, hv = program_hvp(parse(source), values, {"x": tensor(1.0)})  # y direction defaults to 0
    close(hv["x"], float(sp.diff(expr, X, X).subs(at)))
    close(hv["y"], float(sp.diff(expr, X, Y).subs(at)))
    ds = program_derivatives(parse(source), values, "y", 3)
    assert [float(d) for d in ds] == pytest.approx(
        [float(sp.diff(expr, Y, k).subs(at)) for k in range(4)], rel=1e-12
    )
    r = program_gradcheck(parse(source), values, wrt=["x"])
    assert r.passed and len(r.analytic) == 1
    close(r.analytic[0], [[float(sp.diff(expr, X).subs(at))]])
    with pytest.raises(UnknownVariableError) as err:
        program_derivatives(parse(source), values, "z", 1)
    assert err.value.details["variable"] == "z"


# ---------------------------------------------------------------------------
# forward.jvp (torch.func.jvp style)
# ---------------------------------------------------------------------------


def test_forward_jvp_accepts_plain_numbers():
    y, t = fw.jvp(lambda v: v**3, 2.0, 1.0)
    close(y, 8.0)
    close(t, 12.0)
    ys, ts = fw.jvp(lambda a, b: a * b, (2.0, [1.0, 3.0]), (1.0, [0.0, 0.0]))
    close(ys, [2.0, 6.0])
    close(ts, [1.0, 3.0])


def test_forward_jvp_tuple_outputs_are_tuples():
    # f(x) = (sin x, x^2): tangents (cos x v, 2 x v)
    (s, q), (ts, tq) = fw.jvp(lambda v: (v.sin(), v * v), tensor(0.5), tensor(2.0))
    close(s, math.sin(0.5))
    close(q, 0.25)
    close(ts, 2 * math.cos(0.5))
    close(tq, 2.0)


def test_forward_jvp_matches_torch_func_jvp(torch):
    f_ours = lambda a, b: ((a * b).sin(), (a**2).sum() * b)  # noqa: E731
    a0, b0 = np.array([0.3, -1.2]), np.array([2.0, 0.5])
    u0, w0 = np.array([1.0, 0.5]), np.array([-1.0, 3.0])
    out, tan = fw.jvp(f_ours, (tensor(a0), tensor(b0)), (tensor(u0), tensor(w0)))
    out_t, tan_t = torch.func.jvp(
        f_ours, (T(torch, a0), T(torch, b0)), (T(torch, u0), T(torch, w0))
    )
    for u, ut in zip(flat(out) + flat(tan), flat(out_t) + flat(tan_t)):
        close(u, ut)


def test_forward_jvp_errors():
    with pytest.raises(ValueError) as err:
        fw.jvp(lambda a: a, (tensor(1.0),), (1.0, 2.0))
    assert str(err.value) == "1 primals but 2 tangents"
    with pytest.raises(TypeError) as err:
        fw.jvp(lambda a: (a, 2.0), tensor(1.0), 1.0)
    assert str(err.value) == "the function must return Tensors, got float"


def test_forward_jvp_tangent_of_the_same_size_is_reshaped():
    x = tensor(np.arange(6.0).reshape(2, 3))
    _, t = fw.jvp(lambda v: v * v, x, tensor(np.ones(6)))  # (6,) for a (2, 3) input
    close(t, 2 * x.numpy())


def test_forward_jvp_tangent_of_another_size_is_a_shape_error():
    x = tensor(np.ones((2, 3)))
    with pytest.raises(ShapeError) as err:
        fw.jvp(lambda v: v * 2, x, tensor(np.ones(5)))
    assert str(err.value) == "tangent of shape (5,) for an input of shape (2, 3) (expected (2, 3))"
    assert err.value.details == {"expected": [2, 3], "got": [5]}
    with pytest.raises(ShapeError) as err:
        fw.jvp(lambda v: v * 2, x, tensor(np.ones((6, 6))), batch=6)
    assert "with 6 directions (expected (6, 2, 3))" in str(err.value)


def test_tape_run_needs_one_tangent_per_input():
    x = tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    tape = fw.Tape([y], [x])
    with pytest.raises(ValueError) as err:
        tape.run([])
    assert str(err.value) == "1 inputs but 0 tangents"
    (t,) = tape.run([tensor([1.0, 0.0])])
    close(t, [2.0, 0.0])


def test_tangent_rule_of_all_zero_tangents_is_an_exact_zero():
    # None stands for an exact zero tangent: no tangent in, none out, for any op.
    assert fw.tangent_rule(OPS["sin"], None, (None,)) is None
    assert fw.tangent_rule(OPS["mul"], None, (None, None), batch=4) is None


# ---------------------------------------------------------------------------
# Dual-number evaluation of programs (jvp_program)
# ---------------------------------------------------------------------------


def test_jvp_program_missing_value_and_unknown_tangent():
    with pytest.raises(MissingValueError) as err:
        fw.jvp_program(parse("x*y"), {"x": 1.0}, {"x": 1.0})
    assert err.value.details["variable"] == "y"
    assert "no value for variable 'y'" in str(err.value)
    with pytest.raises(UnknownVariableError) as err:
        fw.jvp_program(parse("x*y"), {"x": 1.0, "y": 2.0}, {"z": 1.0})
    assert err.value.details["variable"] == "z"
    assert str(err.value) == "a tangent is given for 'z', which is not a variable of the expression"


def test_jvp_program_reads_a_variable_used_by_two_nodes_once():
    # Two separate var nodes named x (a hand-built graph): d/dx x*x = 2x with tangent 1.
    expr = Expr("mul", (Expr.var("x"), Expr.var("x")))
    out, t = fw.jvp_program(expr, {"x": 3.0}, {"x": 1.0})
    close(out, 9.0)
    close(t, 6.0)
    assert float(fw.evaluate_program(expr, {"x": 3.0})) == 9.0


def test_comparisons_carry_no_tangent():
    # d/dx [(x > 0.5) * x] = (x > 0.5) away from the jump.
    values = {"x": [0.2, 1.0, 3.0]}
    out, t = program_jvp(parse("(x > 0.5) * x"), values, {"x": [1.0, 1.0, 1.0]})
    close(out, [0.0, 1.0, 3.0])
    close(t, [0.0, 1.0, 1.0])
    r = program_jacobian(parse("(x > 0.5) * x"), values, strategy="forward")
    close(r.jacobian["x"], np.diag([0.0, 1.0, 1.0]))
    close(
        r.jacobian["x"],
        central_jacobian(lambda x: (x > 0.5) * x, np.array([0.2, 1.0, 3.0])),
        rtol=1e-8,
        atol=1e-8,
    )


def test_where_has_no_derivative_in_its_condition():
    # where(c, x, y) is piecewise constant in c: d/dc = 0 (central differences agree).
    values = {"c": 1.0, "x": 2.0, "y": 3.0}
    out, t = program_jvp(parse("where(c, x, y)"), values, {"c": 1.0})
    close(out, 2.0)
    close(t, 0.0)
    r = program_jacobian(parse("where(c, x, y)"), values, wrt=["c"], strategy="forward")
    close(r.jacobian["c"], 0.0)
    r = program_jacobian(parse("where(c, x, y)"), values, strategy="forward")
    close(r.jacobian["x"], 1.0)
    close(r.jacobian["y"], 0.0)


# ---------------------------------------------------------------------------
# Batched forward rules reached through jacobian(strategy="forward")
# ---------------------------------------------------------------------------


def _forward_and_reverse(f, xs):
    fwd = jacobian(f, xs, strategy="forward")
    rev = jacobian(f, xs, strategy="reverse")
    loop = jacobian(f, xs, strategy="forward", vectorize=False)
    return fwd, rev, loop


def test_batched_sum_over_a_tuple_of_axes():
    # f(v) = sum(v) * v: J[(i,j),(k,l)] = sum(v) delta + v_ij
    v0 = np.array([[1.0, 2.0], [-0.5, 0.25]])
    expected = v0.sum() * np.eye(4).reshape(2, 2, 2, 2) + v0[:, :, None, None] * np.ones(
        (2, 2, 2, 2)
    )
    for axis in ((0, 1), (-2, -1)):
        for J in _forward_and_reverse(lambda v, axis=axis: v.sum(axis=axis) * v, tensor(v0)):
            close(J, expected)


def test_batched_transpose_of_a_vector():
    # v.T is v for a vector: d/dv (v.T * v) = diag(2 v)
    for J in _forward_and_reverse(lambda v: v.T * v, tensor([1.0, -2.0, 0.5])):
        close(J, np.diag([2.0, -4.0, 1.0]))


def test_batched_vector_matrix_product():
    # f(v, M) = v @ M: d/dv = M^T, d f_j / d M_kp = v_k delta_pj
    v0 = np.array([0.5, -1.0, 2.0])
    m0 = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]])
    expected_m = np.einsum("k,pj->jkp", v0, np.eye(2))
    for Jv, Jm in _forward_and_reverse(lambda v, m: v @ m, (tensor(v0), tensor(m0))):
        close(Jv, m0.T)
        close(Jm, expected_m)


def test_batched_piecewise_constant_op():
    # floor has a zero derivative almost everywhere: d/dx floor(x) * x = diag(floor(x))
    x0 = np.array([0.5, 1.5, -2.25])
    for J in _forward_and_reverse(lambda v: call("floor", v) * v, tensor(x0)):
        close(J, np.diag(np.floor(x0)))


def _custom_floor():
    # A user-defined op whose rules say "exactly zero": vjp gives zeros, jvp None.
    return Op(
        "my_floor",
        "MyFloorBackward0",
        lambda a: np.floor(a),
        lambda n, g: (g * 0.0,),
        lambda n, ts: None,
    )


def test_a_custom_op_whose_forward_rule_says_zero():
    op = _custom_floor()
    x0 = np.array([0.5, 1.5, -2.25])
    f = lambda v: apply(op, v) * v  # noqa: E731
    for J in _forward_and_reverse(f, tensor(x0)):
        close(J, np.diag(np.floor(x0)))
    _, t = jvp(f, tensor(x0), tensor([1.0, 1.0, 1.0]))
    close(t, np.floor(x0))
    _, t = jvp(lambda v: apply(op, v), tensor(x0), tensor([1.0, 1.0, 1.0]))
    close(t, [0.0, 0.0, 0.0])


def test_batched_rules_match_torch(torch):
    import torch.autograd.functional as TF

    v0 = np.array([0.5, -1.0, 2.0])
    m0 = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]])
    cases = [
        (lambda v, m: v @ m, (v0, m0)),
        (lambda v: v.floor() * v, (np.array([0.5, 1.5, -2.25]),)),
        (lambda v: v.sum(dim=(0, 1)) * v, (m0,)),
    ]
    ours = [
        lambda v, m: v @ m,
        lambda v: call("floor", v) * v,
        lambda v: v.sum(axis=(0, 1)) * v,
    ]
    for (ft, arrays), fo in zip(cases, ours):
        Jt = TF.jacobian(
            ft, tuple(T(torch, a) for a in arrays), vectorize=True, strategy="forward-mode"
        )
        J = jacobian(fo, tuple(tensor(a) for a in arrays), strategy="forward")
        for a, b in zip(flat(J), flat(Jt)):
            close(a, b)


def test_hessian_through_a_broadcast_sum():
    # f(a, b) = sum_ij sin(a_i b_ij), a: (3, 1), b: (3, 4).  The gradient w.r.t. a is a
    # sum_to (3, 4) -> (3, 1) of the same rank, swept forward for the Hessian.
    rng = np.random.default_rng(3)
    a0, b0 = rng.uniform(-1, 1, (3, 1)), rng.uniform(-1, 1, (3, 4))
    z = a0 * b0
    H = hessian(lambda a, b: (a * b).sin().sum(), (tensor(a0), tensor(b0)))
    haa = np.diag(-(np.sin(z) * b0**2).sum(axis=1)).reshape(3, 1, 3, 1)
    hab = np.zeros((3, 1, 3, 4))
    hbb = np.zeros((3, 4, 3, 4))
    for i in range(3):
        hab[i, 0, i, :] = np.cos(z[i]) - np.sin(z[i]) * z[i]
        for j in range(4):
            hbb[i, j, i, j] = -np.sin(z[i, j]) * a0[i, 0] ** 2
    close(H[0][0], haa)
    close(H[0][1], hab)
    close(H[1][0], np.transpose(hab, (2, 3, 0, 1)))
    close(H[1][1], hbb)
    H2 = hessian(lambda a, b: (a * b).sin().sum(), (tensor(a0), tensor(b0)), vectorize=False)
    for u, w in zip(flat(H), flat(H2)):
        close(u, w)


def test_hessian_through_a_broadcast_sum_matches_torch(torch):
    import torch.autograd.functional as TF

    rng = np.random.default_rng(3)
    a0, b0 = rng.uniform(-1, 1, (3, 1)), rng.uniform(-1, 1, (3, 4))
    f = lambda a, b: (a * b).sin().sum()  # noqa: E731
    H = hessian(f, (tensor(a0), tensor(b0)))
    Ht = TF.hessian(f, (T(torch, a0), T(torch, b0)))
    for u, w in zip(flat(H), flat(Ht)):
        close(u, w)


def test_forward_mode_through_an_op_without_a_jvp_rule_is_not_silently_zero():
    op = Op(
        "rev_only_cube",
        "RevOnlyCubeBackward0",
        lambda a: a**3,
        lambda n, g: (g * 3.0 * n.inputs[0] ** 2,),
    )
    x = tensor([1.0, 2.0])
    # torch raises NotImplementedError for forward AD through a formula it lacks; a zero
    # tangent (the answer is [3, 12]) would be silently wrong.
    with pytest.raises(NotImplementedError, match="forward AD with rev_only_cube"):
        jvp(lambda v: apply(op, v), x, tensor([1.0, 1.0]))
    # reverse mode through the same op is right
    close(vjp(lambda v: apply(op, v), x, tensor([1.0, 1.0]))[1], [3.0, 12.0])
