"""Behaviours of the op table (core/ops.py) pinned down for mutants of bench/mutate.py.

Each test names the behaviour it pins; its comment names the mutant (``file:line: original ->
mutant``, line numbers as they were when it was found) that it kills.  Expected values come
from NumPy or closed forms, never from the code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_batch_property import assert_same_as_single_lines, run_batch_file

from autograd_cli import diff, evaluate
from autograd_cli import grad as grad_of_text
from autograd_cli.core import grad, limits, tensor
from autograd_cli.core.errors import LimitError, ShapeError
from autograd_cli.core.ops import Op, norm_ord
from autograd_cli.core.tensor import OPS, apply


def _no_vjp_op() -> Op:
    # an op of the extension point with a forward and no vjp: its inputs are declared
    # differentiable (the default), but there is no rule to differentiate it by
    return Op("scaled_copy", "ScaledCopyBackward0", lambda a: a * 2.0, None, arity=1)


def test_an_op_without_a_vjp_records_no_graph():
    # kills core/ops.py:237: self.differentiable_any = vjp is not None and (...) ->
    #   vjp is not None or (...)   (an op without a rule would record a Node whose vjp is None)
    op = _no_vjp_op()
    assert op.differentiable_any is False
    x = tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = apply(op, x)
    np.testing.assert_array_equal(y.numpy(), np.array([2.0, -4.0, 6.0]))
    assert y.requires_grad is False
    assert y.grad_fn is None


def test_a_result_of_an_op_without_a_vjp_is_a_constant_in_a_sum():
    # the same mutant seen from the gradient: x * op(x) is x * (2 x) with the second factor
    # held constant (the op records nothing), so d/dx = 2 x, not an error about a missing rule
    op = _no_vjp_op()
    data = np.array([1.0, -2.0, 3.0])
    x = tensor(data.tolist(), requires_grad=True)
    (g,) = grad((x * apply(op, x)).sum(), [x])
    np.testing.assert_array_equal(g.numpy(), 2.0 * data)


# ---------------------------------------------------------------------------
# Seed 0 survivors (2026-12-04)
# ---------------------------------------------------------------------------


def _guarded_branch(text: str, guard: str) -> str:
    """The derivative of a guarded ``where(guard, 0, formula)`` text: its formula."""
    head = f"where({guard}, 0, "
    assert text.startswith(head) and text.endswith(")"), text
    return text[len(head) : -1]


def test_the_guard_of_d_dx_pow_names_the_exponent_first():
    # kills core/ops.py:838: d = where(eq(b, 0), 0.0, d) -> d = where(eq(0, b), 0.0, d)
    #   (the guarded derivative would read "where(0 == y, ...)")
    sympy = pytest.importorskip("sympy")
    text = diff("x**y", "x", guards=True).texts()["x"]
    x, y = sympy.symbols("x y")
    formula = sympy.sympify(_guarded_branch(text, "y == 0"))
    assert sympy.simplify(formula - y * x ** (y - 1)) == 0


@pytest.mark.parametrize("wrt", ["x", "y"])
def test_the_guard_of_atan2_names_the_squared_radius_first(wrt):
    # kills core/ops.py:955: dy, dx = ..., where(eq(r2, 0), 0.0, dx) -> ..., where(eq(0, r2), 0.0, dx)
    #   (d/dx atan2(y, x) would read "where(0 == x**2 + y**2, ...)")
    sympy = pytest.importorskip("sympy")
    text = diff("atan2(y, x)", wrt, guards=True).texts()[wrt]
    x, y = sympy.symbols("x y")
    formula = sympy.sympify(_guarded_branch(text, "x**2 + y**2 == 0"))
    expected = {"x": -y / (x**2 + y**2), "y": x / (x**2 + y**2)}[wrt]
    assert sympy.simplify(formula - expected) == 0


def test_too_many_indices_with_an_index_array_is_a_shape_error():
    # kills core/ops.py:1259: used = sum(1 for i in index if ...) -> used = sum(0 for i ...)
    #   (the size estimate then walked past the array's axes: an IndexError, not the error
    #   that says how many indices a 1-D array takes)
    with pytest.raises(ShapeError, match="too many indices"):
        evaluate("x[[0], :, :]", {"x": [0.0, 1.0, 2.0]})
    with pytest.raises(ShapeError, match="too many indices"):
        evaluate("x[[0, 1], 0, 1:2]", {"x": [[0.0, 1.0], [2.0, 3.0]]})


# norm(x, ord=...)'s grad_fn names, as PyTorch 2.x records them for torch.linalg.norm
# (a matrix norm with ord 1/inf/2 is an amax of sums or singular values, -1/-inf/-2 an
# amin, 'nuc' a sum of singular values; 'fro' and every vector norm a vector norm)
_NORM_GRAD_FN = [
    ("matrix", 1, "AmaxBackward0"),
    ("matrix", -1, "AminBackward0"),
    ("matrix", math.inf, "AmaxBackward0"),
    ("matrix", -math.inf, "AminBackward0"),
    ("matrix", 2, "AmaxBackward0"),
    ("matrix", -2, "AminBackward0"),
    ("matrix", "fro", "LinalgVectorNormBackward0"),
    ("matrix", "nuc", "SumBackward1"),
    ("vector", 1, "LinalgVectorNormBackward0"),
    ("vector", 3, "LinalgVectorNormBackward0"),
    ("vector", 0.5, "LinalgVectorNormBackward0"),
    ("vector", math.inf, "LinalgVectorNormBackward0"),
    ("vector", 0, "LinalgVectorNormBackward0"),
]
_NORM_INPUTS = {"matrix": [[1.0, -2.0], [3.0, 4.0]], "vector": [1.0, -2.0, 3.0]}


def _our_norm(data, ord):
    x = tensor(data, requires_grad=True)
    return apply(OPS["norm"], x, axis=None, keepdims=False, ord=norm_ord(ord))


@pytest.mark.parametrize("kind, ord, name", _NORM_GRAD_FN)
def test_norm_with_an_ord_names_its_grad_fn_as_pytorch(kind, ord, name):
    # kills core/ops.py:1840: if len(norm_axes(len(n.shapes[0]), ...)) == 2 and ord != "fro":
    #   -> ... len(n.shapes[1]) ...   (norm has one input: naming the node raised IndexError)
    y = _our_norm(_NORM_INPUTS[kind], ord)
    assert y.grad_fn.name() == name
    assert f"grad_fn=<{name}>" in repr(y)


@pytest.mark.parametrize("kind, ord, name", _NORM_GRAD_FN)
def test_the_norm_grad_fn_table_is_pytorchs(kind, ord, name):
    torch = pytest.importorskip("torch")
    x = torch.tensor(_NORM_INPUTS[kind], dtype=torch.float64, requires_grad=True)
    assert torch.linalg.norm(x, ord=ord).grad_fn.name() == name


# ---------------------------------------------------------------------------
# Seed 5 survivors (2026-12-04)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name, reference", [("max", np.maximum), ("min", np.minimum)])
@pytest.mark.parametrize("x, y", [(0.0, -0.0), (-0.0, 0.0)])
def test_max_and_min_of_signed_zeros_are_numpys(name, reference, x, y):
    # kills core/ops.py:891: lambda a, b: _xp().maximum(a, b) -> lambda a, b: _xp().maximum(b, a)
    #   (at a tie NumPy's maximum and minimum return their second argument: max(0.0, -0.0)
    #   is -0.0, a sign JSON writes)
    got = evaluate(f"{name}(x, y)", {"x": x, "y": y}).value
    want = reference(np.float64(x), np.float64(y))
    assert got == want and np.signbit(got) == np.signbit(want), (got, want)


def test_clip_with_constant_bounds_is_clamps_scalar_overload():
    # kills core/ops.py:1047: "ClampBackward0" if n.needs[1] or n.needs[2] else "ClampBackward1"
    #   -> ... n.needs[0] or n.needs[2] ...   (torch.clamp(x, 0.0, 1.0) records ClampBackward1,
    #   clamp with a bound that takes a gradient ClampBackward0)
    x = tensor([-1.0, 0.5, 2.0], requires_grad=True)
    lo, hi = tensor(0.0), tensor(1.0)
    y = apply(OPS["clip"], x, lo, hi)
    np.testing.assert_array_equal(y.numpy(), np.clip([-1.0, 0.5, 2.0], 0.0, 1.0))
    assert y.grad_fn.name() == "ClampBackward1"
    lo_g = tensor(0.0, requires_grad=True)
    assert apply(OPS["clip"], tensor([-1.0, 0.5]), lo_g, hi).grad_fn.name() == "ClampBackward0"
    assert apply(OPS["clip"], x, lo_g, hi).grad_fn.name() == "ClampBackward0"


def test_the_clamp_names_are_pytorchs():
    torch = pytest.importorskip("torch")
    x = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    assert torch.clamp(x, 0.0, 1.0).grad_fn.name() == "ClampBackward1"
    lo = torch.tensor(0.0, requires_grad=True)
    assert torch.clamp(x, lo, torch.tensor(1.0)).grad_fn.name() == "ClampBackward0"


def test_an_index_array_larger_than_x_is_checked_against_the_limit_and_a_view_is_not():
    # kills core/ops.py:1249: if not any(type(i) is tuple for i in index): return 0 ->
    #   if not any(type(i) is not tuple ...)   (the size rule then skipped x[[0, 0, ...]],
    #   which selects more numbers than x has, and checked plain slices, views of x)
    with limits.using("40"):  # 5 doubles
        with pytest.raises(LimitError, match=r"64 bytes \(8 numbers\)"):
            evaluate("x[[0, 0, 0, 0, 0, 0, 0, 0]]", {"x": [1.0, 2.0]})
        data = np.arange(40.0)
        got = evaluate("x[1:]", {"x": data.tolist()}).value  # a view: never over x's size
        np.testing.assert_array_equal(got, data[1:])


def test_norm_ord_is_an_int_only_below_two_to_the_53():
    # kills core/ops.py:1612: ... and abs(number) < 2**53: return int(number) -> <= 2**53
    #   (from 2**53 on a float no longer tells which whole number was written: 2**53 + 1
    #   reads as 2**53, so the ord stays the float it was given, and messages say so)
    below = float(2**53 - 1)
    assert norm_ord(below) == 2**53 - 1 and type(norm_ord(below)) is int
    assert norm_ord(-below) == -(2**53 - 1) and type(norm_ord(-below)) is int
    for value in (float(2**53), -float(2**53), float(2**53 + 2)):
        assert type(norm_ord(value)) is float and norm_ord(value) == value
    with pytest.raises(ShapeError, match=r"ord=9007199254740992\.0 is not a matrix norm"):
        evaluate("norm(x, ord=9007199254740992)", {"x": [[0.0, 1.0]]})


def test_a_stacked_matmul_is_checked_against_the_limit_by_its_result_size():
    # kills core/ops.py:2067: ... * a[-2] * b[-1] -> ... * a[-2] * b[1]   (for stacks of
    #   matrices b[1] is b's row count, not its column count)
    # and core/ops.py:2076: broadcast_size([a[:-2], b[:-2]], attrs) -> broadcast_size(attrs,
    #   [a[:-2], b[:-2]])   (the stack's leading axes were left out of the count)
    # a (4, 10, 1) @ (4, 1, 10) product holds 400 numbers; both estimated 100 or fewer
    a, b = np.arange(40.0).reshape(4, 10, 1), np.arange(40.0).reshape(4, 1, 10)
    with limits.using("1000"):
        with pytest.raises(
            LimitError, match=r"matmul.s result would take 3.12 KiB \(400 numbers\)"
        ):
            evaluate("a @ b", {"a": a.tolist(), "b": b.tolist()})
    got = evaluate("a @ b", {"a": a.tolist(), "b": b.tolist()}).value
    np.testing.assert_array_equal(got, np.matmul(a, b))


@pytest.mark.parametrize("ord", ["inf", "-inf"])
def test_tied_row_sums_of_an_inf_matrix_norm_warn(ord):
    # kills core/ops.py:1933: summed, picked = (axes[0], axes[1]) if ord in (1, -1) else
    #   (axes[1], axes[0]) -> ... else (axes[1], axes[1])   (the ties were counted along the
    #   summed axis, of length 1: never a tie)
    # rows [1, 2] and [2, 1] both sum to 3: PyTorch splits the gradient evenly between them
    r = grad_of_text(f"norm(A, ord={ord})", {"A": [[1.0, 2.0], [2.0, 1.0]]})
    assert float(r.value) == np.linalg.norm([[1.0, 2.0], [2.0, 1.0]], ord=float(ord)) == 3.0
    np.testing.assert_array_equal(r.grad["A"], np.full((2, 2), 0.5))
    assert any("row sums tie" in w for w in r.warnings), r.warnings


def test_a_repeated_smallest_singular_value_warns_for_ord_minus_2():
    # kills core/ops.py:1921: if ord in ("nuc", 2, -2): -> if ord in ("nuc", 2, -3):
    #   (ord=-2 was checked as if it were -1: for the identity, a tie of row sums)
    r = grad_of_text("norm(A, ord=-2)", {"A": [[1.0, 0.0], [0.0, 1.0]]})
    assert float(r.value) == np.linalg.norm(np.eye(2), ord=-2) == 1.0
    np.testing.assert_array_equal(r.grad["A"], 0.5 * np.eye(2))  # PyTorch's: split evenly
    assert r.warnings == [
        "norm(x, ord=-2) is not differentiable where the matrix has its extreme singular "
        "value repeated (or 0); the gradient was split evenly (PyTorch)"
    ]


def test_mod_names_its_grad_fn_by_pytorchs_overload():
    # kills core/ops.py:1016: "RemainderBackward1" if n.needs[1] else "RemainderBackward0"
    #   -> ... if not (n.needs[1]) ...   (torch.remainder(x, 3) records RemainderBackward0,
    #   remainder with a divisor that takes a gradient RemainderBackward1)
    x = tensor([1.5, -2.0], requires_grad=True)
    y = apply(OPS["mod"], x, tensor(3.0))
    np.testing.assert_array_equal(y.numpy(), np.mod([1.5, -2.0], 3.0))
    assert y.grad_fn.name() == "RemainderBackward0"
    divisor = tensor(3.0, requires_grad=True)
    assert apply(OPS["mod"], x, divisor).grad_fn.name() == "RemainderBackward1"
    assert apply(OPS["mod"], tensor([1.5]), divisor).grad_fn.name() == "RemainderBackward1"


def test_the_remainder_names_are_pytorchs():
    torch = pytest.importorskip("torch")
    x = torch.tensor([1.5, -2.0], requires_grad=True)
    assert torch.remainder(x, 3.0).grad_fn.name() == "RemainderBackward0"
    divisor = torch.tensor(3.0, requires_grad=True)
    assert torch.remainder(x, divisor).grad_fn.name() == "RemainderBackward1"


@pytest.mark.parametrize(
    "expr, rows",
    [
        ("sum(x[[0, 2]])", [[k, 2.0 * k, -k] for k in (1.0, 2.0, 3.0)]),
        ("x[[1, 0]]", [[k, 2.0 * k, -k] for k in (1.0, 2.0, 3.0)]),
        ("sum(x[[0, 1], [1, 0]])", [[[k, 1.0], [2.0, -k]] for k in (1.0, 2.0, 3.0)]),
    ],
)
def test_adjacent_index_arrays_batch_in_one_go(expr, rows):
    # kills core/ops.py:1252: return where[-1] - where[0] + 1 != len(where) -> ... - 1 != ...
    #   (one index array, or arrays side by side, counted as "apart": batch then gave up its
    #   vectorised rule and evaluated every row alone; NumPy keeps such axes in place)
    records = [{"expr": expr, "vars": {"x": x}, "op": "eval"} for x in rows]
    lines, code, spy = run_batch_file(records)
    assert code == 0
    assert_same_as_single_lines(records, lines, spy)
    assert spy.groups and not spy.singles, (spy.groups, spy.singles)


@pytest.mark.parametrize("x", [[1.0], [1.0, 2.0]])
def test_an_array_literal_of_vectors_of_two_lengths_is_ragged(x):
    # kills core/ops.py:1354: raise ValueError(f"the elements of an array literal must have one
    #   shape, not {listed}") -> pass   ([x, y] with x of length 1 and y of 3 was broadcast
    #   and stacked; NumPy and PyTorch refuse ragged lists, as the tool says)
    y = [1.0, 2.0, 3.0]
    with pytest.raises(ShapeError, match=r"must have one shape, not \(\d,\), \(3,\)"):
        evaluate("[x, y]", {"x": x, "y": y})
    with pytest.raises(ValueError):
        np.array([x, y], dtype=float)  # NumPy's own verdict on the same literal


@pytest.mark.parametrize("expr", ["sum(x)", "sin(x)", "max(x)", "-x"])
def test_an_op_whose_result_is_no_larger_than_its_input_is_not_checked(expr):
    # kills core/ops.py:2433: if op.size is None and op.kind in ("elementwise", "comparison")
    #   and op.arity != 1: -> if op.size is None or ...   (every op without a size rule got
    #   broadcast_size: sum(x) and sin(x) of an input larger than the limit were refused,
    #   although only results that can outgrow their inputs are checked; the input is there)
    data = np.linspace(-1.0, 1.0, 10)
    with limits.using("40"):  # 5 doubles; x holds 10
        got = evaluate(expr, {"x": data.tolist()}).value
    want = {"sum(x)": data.sum(), "sin(x)": np.sin(data), "max(x)": data.max(), "-x": -data}
    np.testing.assert_array_equal(got, want[expr])
