"""Tests for the lines of the op table (core/ops/*.py) and of the batch engine (core/batch.py)
that no test of their mutation targets' lists ran (bench/mutate.py), so that a one-token
mutant of each fails a test.

Each test's docstring names the lines it runs (``file:line``, as they were when written), the
behaviour it pins and where the expected values come from: the docs, algebra by hand, NumPy
or PyTorch as independent oracles, or, for a batch file, the one-at-a-time commands (the
batch command's reference: docs, "batch").  Lines that no input reaches are listed, with the
reason, in the report that came with this file.
"""

from __future__ import annotations

import json
import math
import shutil
import string

import numpy as np
import pytest
import strict_xp

from autograd_cli.core import OPS, ShapeError, apply, backend, grad, limits, tensor
from autograd_cli.core import batch as core_batch
from autograd_cli.core.codegen import generate
from autograd_cli.core.errors import LimitError
from autograd_cli.core.ops import (
    CALL,
    FUNCTIONS,
    Op,
    Param,
    RuleContext,
    call,
    expand_back,
    function,
    norm_ord,
    sum_to,
)
from autograd_cli.core.ops.table import language_functions
from autograd_cli.core.program import Expr, Program
from autograd_cli.core.rows import evaluate_group
from autograd_cli.grammar import parse

# ---- helpers -------------------------------------------------------------------------------


def _batch_against_singles(cli, tmp_path, expr, rows, *flags, op="grad"):
    """Run ``rows`` (each a dict of values) as one JSONL batch file and as one ``op --json``
    command each; every batch line must be that command's document plus its line number."""
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({"vars": row}) + "\n" for row in rows))
    r = cli("batch", str(path), "--expr", expr, "--op", op, *flags)
    assert len(r.docs) == len(rows), r.out + r.err
    for i, (doc, row) in enumerate(zip(r.docs, rows)):
        argv = [op, expr, "--json", *flags]
        for name, value in row.items():
            argv += [f"--{name}", json.dumps(value)]
        single = cli(*argv)
        assert doc == {"line": i + 1, **single.json}, (doc, single.out)
    return r


@pytest.fixture
def device(monkeypatch):
    """tests/strict_xp.py's stand-in for CuPy as the "gpu" device (as tests/
    test_strict_backend.py installs it): device arrays that are not NumPy's."""
    strict_xp.install(monkeypatch)
    syncs = (backend.all_finite, backend.any_nonzero)
    with strict_xp.recording(seam=[backend.to_numpy], syncs=syncs) as recorder:
        yield recorder
    assert not recorder.violations, recorder.report()


def _bits(a, b) -> None:
    """Equal arrays, bit for bit (nan where nan, of any sign; the sign of each zero)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a, b)
    assert np.array_equal(a, b, equal_nan=True), (a, b)
    numbers = ~np.isnan(a)
    assert np.array_equal(np.signbit(a[numbers]), np.signbit(b[numbers])), (a, b)


# ---- elementwise.py: pow ---------------------------------------------------------------------


def test_a_vector_exponent_on_the_device_is_numpy_power_without_the_rsqrt_rule(device, torch):
    """core/ops/elementwise.py:392->394 (_power: an exponent that is a device array, not a
    number, skips the device-scalar rule and returns xp.power as it is).

    Only a scalar exponent of exactly -0.5 is PyTorch's rsqrt, nan at -inf; an array of
    exponents is pow: x**y at x = [-inf, 4], y = [-0.5, -0.5] is [+0, 0.5] and its gradients
    [-0, -0.0625] and [nan, log 2], as torch.pow's at float64 (the oracle, signs of zeros
    included).  The device must give the CPU's numbers bit for bit (tests/
    test_strict_backend.py's policy)."""
    x0, y0 = [-math.inf, 4.0], [-0.5, -0.5]
    tx = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    ty = torch.tensor(y0, dtype=torch.float64, requires_grad=True)
    tz = tx**ty
    want = [tz.detach().numpy()] + [t.numpy() for t in torch.autograd.grad(tz.sum(), [tx, ty])]
    for where in ("cpu", "gpu"):
        with backend.using(device=where):
            x = tensor(x0, requires_grad=True)
            y = tensor(y0, requires_grad=True)
            z = x**y
            gx, gy = grad(z.sum(), [x, y])
            got = [backend.to_numpy(t.data) for t in (z, gx, gy)]
        for a, b in zip(got, want):
            _bits(a, b)


# ---- elementwise.py: how codegen writes pow and polygamma ------------------------------------

_HAS_CC = shutil.which("cc") or shutil.which("gcc")


@pytest.mark.skipif(not _HAS_CC, reason="needs a C compiler for codegen --check")
def test_c_code_of_a_constant_power_minus_a_half_is_nan_at_minus_infinity(cli):
    """core/ops/elementwise.py:429 (_pow_code, C, a constant exponent -0.5).

    The engine's x**-0.5 is PyTorch's rsqrt: nan at -inf, where C's pow gives +0 (the comment
    of _power); the C code says so with a test before pow, and --check (the code compiled and
    run against the engine at random points near x) passes."""
    r = cli("codegen", "sum(x**-0.5)", "--x", "[4, 9]", "--target", "c")
    assert r.code == 0, r.err
    assert "(x[ag_i] == -INFINITY ? NAN : pow(x[ag_i], (-0.5)))" in r.out
    r = cli("codegen", "sum(x**-0.5)", "--x", "[4, 9]", "--target", "c", "--check", "5", "--json")
    assert r.code == 0 and r.json["check"]["passed"] is True, r.out + r.err


@pytest.mark.skipif(not _HAS_CC, reason="needs a C compiler for codegen --check")
def test_c_code_of_a_varying_exponent_asks_its_value_for_the_rsqrt_rule(cli):
    """core/ops/elementwise.py:435 (_pow_code, C, a scalar exponent that is not a constant).

    x**y with y a variable is nan at x = -inf exactly where y == -0.5 (the engine's rule asks
    the exponent's value); the C code tests both, and --check passes."""
    r = cli("codegen", "x**y", "--x", "4", "--y", "0.5", "--target", "c")
    assert r.code == 0, r.err
    assert "(x == -INFINITY && y == -0.5 ? NAN : pow(x, y))" in r.out
    r = cli("codegen", "x**y", "--x", "4", "--y", "0.5", "--target", "c", "--check", "5", "--json")
    assert r.code == 0 and r.json["check"]["passed"] is True, r.out + r.err


@pytest.mark.parametrize(
    ("expr", "target", "spelling"),
    [
        ("sum(x**2)", "c", "pow(x[ag_i], 2.0)"),  # C has no square: pow
        ("sum(x**[2, 3])", "numpy", "np.power(x, t0)"),  # an array exponent: power
    ],
)
def test_a_power_that_is_neither_rsqrt_nor_a_square_is_the_targets_pow(cli, expr, target, spelling):
    """core/ops/elementwise.py:438->445 (_pow_code: not a scalar constant, or C: the target's
    pow itself).

    x**2 is written square(x) for NumPy, torch and JAX, but C writes pow(x, 2.0); an array of
    exponents is np.power.  --check (NumPy always; C with a compiler) passes."""
    r = cli("codegen", expr, "--x", "[1.5, 2]", "--target", target)
    assert r.code == 0, r.err
    assert spelling in r.out
    if target == "numpy" or _HAS_CC:
        r = cli("codegen", expr, "--x", "[1.5, 2]", "--target", target, "--check", "5", "--json")
        assert r.code == 0 and r.json["check"]["passed"] is True, r.out + r.err


@pytest.mark.parametrize("order", ["n", "1.5", "-1"])
def test_codegen_refuses_polygamma_of_an_order_not_a_whole_constant(cli, order):
    """core/ops/elementwise.py:456 (_polygamma_code: None, no spelling).

    Generated code writes polygamma only for a literal whole order >= 0 (SciPy's and torch's
    take an int): a variable order, 1.5 or -1 has no spelling, an error (exit 1) naming the
    target and the function; orders 0 and 1 are written."""
    values = ["--x", "2"] + (["--n", "1"] if order == "n" else [])
    r = cli("codegen", f"polygamma({order}, x)", *values, "--json")
    assert r.code == 1, r.out
    assert r.json["error"]["message"] == "codegen --target numpy has no spelling for polygamma"
    for k in (0, 1):
        ok = cli("codegen", f"polygamma({k}, x)", "--x", "2", "--json")
        assert ok.code == 0 and f"scipy.special.polygamma({k}, x)" in ok.json["code"]


# ---- the rules' forward-mode contract: no tangent in, none out -------------------------------


def test_where_and_norm_and_stack_rules_give_no_tangent_without_one():
    """core/ops/elementwise.py:609, core/ops/reductions.py:554, core/ops/shape.py:383 (a jvp
    rule handed no tangent on any differentiated argument returns None).

    An op's jvp rule (OPS[name].jvp(ctx, tangents), as tests/test_op_table.py calls it)
    returns None for a zero tangent: the engine's forward sweep filters such calls out, so
    only a caller of the rule sees it.  With a tangent on one branch where's is that branch
    where it is selected (by hand: cond [1, 0], ta [5, 6] -> [5, 0])."""
    cond, a, b = tensor([1.0, 0.0]), tensor([1.0, 2.0]), tensor([3.0, 4.0])
    where = OPS["where"]
    out = apply(where, cond, a, b)
    ctx = RuleContext(where, (cond, a, b), out, {}, (False, True, True))
    assert where.jvp(ctx, (None, None, None)) is None
    assert where.jvp(ctx, (tensor([7.0, 7.0]), None, None)) is None
    t = where.jvp(ctx, (None, tensor([5.0, 6.0]), None))
    np.testing.assert_array_equal(t.numpy(), [5.0, 0.0])

    norm = OPS["norm"]
    attrs = {"axis": None, "keepdims": False, "ord": None}
    out = apply(norm, a, **attrs)
    assert norm.jvp(RuleContext(norm, (a,), out, attrs, (True,)), (None,)) is None

    stack = OPS["stack"]
    out = apply(stack, a, b)
    ctx = RuleContext(stack, (a, b), out, {}, (True, True))
    assert stack.jvp(ctx, (None, None)) is None
    t = stack.jvp(ctx, (tensor([1.0, 1.0]), None))
    np.testing.assert_array_equal(t.numpy(), [[1.0, 1.0], [0.0, 0.0]])


# ---- products.py ---------------------------------------------------------------------------


@pytest.mark.parametrize("zero", [False, True])
def test_the_gradient_of_a_large_matrix_times_a_vector_is_numpys_matmul_bits(zero):
    """core/ops/products.py:151->155 (_outer_product: a product of more than 1024 entries
    whose factors have no small magnitude skips the pass that turns -0.0 into +0.0).

    d sum(A @ v)/dA is the outer product ones (m, 1) @ v (1, k) (matmul's vjp); the engine
    gives NumPy's matmul's bits, whose 0 + x*y makes a -0.0 product +0.0 (the docstring of
    _outer).  NumPy is the oracle: np.ones((40, 1)) @ v[None, :].  Without a zero in v the
    pass is skipped (large, no small factor); with a -0.0 entry it must run."""
    v = np.linspace(1.0, 2.0, 40)
    if zero:
        v[3] = -0.0
    A = tensor(np.ones((40, 40)), requires_grad=True)
    (A @ tensor(v)).sum().backward()
    _bits(A.grad.numpy(), np.ones((40, 1)) @ v[None, :])


@pytest.mark.parametrize(
    ("expr", "x", "y", "message"),
    [
        (
            "inner(x, y)",
            "[1, 2]",
            "[1, 2, 3]",
            "inner: shapes (2,), (3,) do not fit (inner() sums over the last axes, which must "
            "have one length: 2 and 3)",
        ),
        (
            "cross(x, y)",
            "[1, 2]",
            "[1, 2, 3]",
            "cross: shapes (2,), (3,) do not fit (cross() takes 3-vectors along the last axis "
            "(torch.linalg.cross), got shapes [2] and [3])",
        ),
        (
            "cross(x, y)",
            "[1, 2, 3]",
            "[1, 2]",
            "cross: shapes (3,), (2,) do not fit (cross() takes 3-vectors along the last axis "
            "(torch.linalg.cross), got shapes [3] and [2])",
        ),
        (
            "cross(x, y)",
            "2",
            "[1, 2, 3]",
            "cross: shapes (), (3,) do not fit (cross() takes 3-vectors along the last axis "
            "(torch.linalg.cross), got shapes [] and [3])",
        ),
    ],
)
def test_inner_and_cross_of_shapes_that_do_not_fit_are_shape_errors(cli, expr, x, y, message):
    """core/ops/products.py:287 (_inner_forward: last axes of two lengths), 326-327
    (_cross_forward: not 3-vectors along the last axis, a number included).

    inner sums over the last axes (NumPy's inner), so they must have one length; cross takes
    3-vectors (torch.linalg.cross).  Otherwise a shape error, exit 1, naming the shapes."""
    r = cli("eval", expr, "--x", x, "--y", y, "--json")
    assert r.code == 1, r.out
    assert r.json["error"] == {"kind": "shape", "message": message}


@pytest.mark.parametrize(
    ("expr", "x", "y", "want"),
    [
        ("inner(x, y)", "2", "[1, 2, 3]", [2.0, 4.0, 6.0]),  # a number: the product
        ("inner(x, y)", "[[1, 2, 3], [4, 5, 6]]", "[[1, 0, 1]]", [[4.0], [10.0]]),
        ("cross(x, y)", "[[1, 2, 3]]", "[4, 5, 6]", [[-3.0, 6.0, -3.0]]),
    ],
)
def test_inner_and_cross_of_shapes_that_fit(cli, expr, x, y, want):
    """The other side of the checks above (core/ops/products.py:286, 325): shapes that fit
    evaluate to NumPy's np.inner and np.cross (by hand: [1,2,3]x[4,5,6] = [-3, 6, -3])."""
    r = cli("eval", expr, "--x", x, "--y", y, "--json")
    assert r.code == 0, r.out
    assert r.json["value"] == want
    fn = np.inner if expr.startswith("inner") else np.cross
    assert fn(np.array(json.loads(x), float), np.array(json.loads(y), float)).tolist() == want


# ---- reductions.py: norm ---------------------------------------------------------------------


def test_norm_ord_takes_none_and_says_what_ord_can_be():
    """core/ops/reductions.py:315 (norm_ord(None) is None), 318-319 (a bad ord: the ValueError
    named after norm()).

    norm_ord is ord as the op keeps it (core.ops exports it): None stays None (the 2-norm of
    the flattened array, docs/language.md), a word other than 'fro', 'f', 'nuc' is refused
    with the message the language gives for the same ord (eval "norm(x, ord='xyz')")."""
    assert norm_ord(None) is None
    with pytest.raises(ValueError) as info:
        norm_ord("xyz")
    assert str(info.value) == (
        "ord of norm() must be a number (a vector norm: any p, inf, -inf, 0) or 'fro' or "
        "'nuc' (matrix norms), got 'xyz'"
    )
    assert info.value.__cause__ is None and info.value.__suppress_context__
    with pytest.raises(
        ValueError, match=r"^ord of norm\(\) must be a number, 'fro' or 'nuc', got nan$"
    ):
        norm_ord(math.nan)


def test_norm_of_a_number_along_an_axis_is_a_shape_error(cli):
    """core/ops/reductions.py:440 (_norm_forward: a number has no axis).

    norm(x, 0) of a number is refused as the other reductions refuse sum(x, 0): a shape error
    (exit 1) that says a number has no axes; without the axis it is |x|."""
    r = cli("eval", "norm(x, 0)", "--x", "3", "--json")
    assert r.code == 1, r.out
    assert r.json["error"] == {
        "kind": "shape",
        "message": "norm: shapes () do not fit (norm() of a number has no axis 0: a number "
        "has no axes (leave the axis out))",
    }
    assert cli("eval", "norm(x)", "--x", "-3", "--json").json["value"] == 3.0


def test_norm_without_ord_is_named_norm_backward_1(torch):
    """core/ops/reductions.py:562 (_norm_node: no ord -> "NormBackward1").

    grad_fn names are PyTorch's, with the exceptions tests/test_torch_oracle.py lists: "norm:
    torch 2.x records LinalgVectorNormBackward0; ours keeps the older NormBackward1" (torch
    1.x's torch.norm).  With an ord it is the vector norm's name, as torch's (checked)."""
    x = tensor([3.0, 4.0], requires_grad=True)
    tx = torch.tensor([3.0, 4.0], dtype=torch.float64, requires_grad=True)
    assert apply(OPS["norm"], x).grad_fn.name() == "NormBackward1"
    named = apply(OPS["norm"], x, ord=norm_ord(2)).grad_fn.name()
    assert named == torch.linalg.vector_norm(tx, 2).grad_fn.name() == "LinalgVectorNormBackward0"


def test_codegen_of_the_vector_two_norm_is_the_root_of_the_sum_of_squares(cli):
    """core/ops/reductions.py:652 (_vector_norm_text, ord=2).

    norm(x, ord=2) of a vector is sqrt(sum(x*x)) (docs/language.md: NumPy's linalg.norm);
    the NumPy code writes exactly that, and --check passes (value 5 at [3, 4], by hand)."""
    r = cli("codegen", "norm(x, ord=2)", "--x", "[3, 4]")
    assert r.code == 0, r.err
    assert "np.sqrt(np.sum((x * x), axis=(-1,), keepdims=True))" in r.out
    r = cli("codegen", "norm(x, ord=2)", "--x", "[3, 4]", "--check", "5", "--json")
    assert r.code == 0 and r.json["check"]["passed"] is True, r.out + r.err


# ---- rules.py: the helpers -------------------------------------------------------------------


def test_call_on_arrays_reports_a_forward_error_as_the_engine_does():
    """core/ops/rules.py:81-82 (_array_call: the forward's ValueError as a ShapeError).

    call() on host arrays (the rules' array form) reports an op that does not fit its
    operands as tensor.apply does: "inner: shapes (2,), (3,) do not fit (...)", with the op's
    own reason, and no chained exception."""
    with pytest.raises(ShapeError) as info:
        call("inner", np.ones(2), np.ones(3))
    message = (
        "inner: shapes (2,), (3,) do not fit (inner() sums over the last axes, which must have "
        "one length: 2 and 3)"
    )
    assert str(info.value) == message
    assert info.value.__cause__ is None and info.value.__suppress_context__
    with pytest.raises(ShapeError) as engine:
        apply(OPS["inner"], tensor(np.ones(2)), tensor(np.ones(3)))
    assert str(engine.value) == message


def test_call_makes_a_python_number_an_array_of_the_operands_dtype(monkeypatch):
    """core/ops/rules.py:84 (_array_call: a forward that returns a Python number).

    An op of the table's extension point whose forward returns a Python float: call() on
    float32 arrays hands back an array of the operand's dtype (float32), as tensor.apply's
    result is, not a Python float or a float64."""
    op = Op("half_sum", "HalfSumBackward0", lambda a: float(a.sum()) / 2, None, arity=1)
    monkeypatch.setitem(OPS, "half_sum", op)
    got = call("half_sum", np.array([1.0, 2.0], dtype=np.float32))
    assert got.dtype == np.float32 and got == np.float32(1.5)


def test_sum_to_and_expand_back_of_trivial_shapes():
    """core/ops/rules.py:140 (sum_to of an absent cotangent is absent), 367 (_reduced_shape of
    a number along an axis: ()).

    sum_to(None, shape) is None (the rules' convention: an absent cotangent stays absent);
    expand_back of a number's cotangent "along axis 0 or -1" is the number itself (NumPy
    and PyTorch take a number along those axes as itself): shape (), value kept."""
    assert sum_to(None, (2, 3)) is None
    for axis, keepdims in ((0, False), (-1, True), ((0,), False)):
        g = expand_back(np.array(2.5), (), axis, keepdims)
        assert np.shape(g) == () and float(g) == 2.5


def test_a_gradient_is_not_a_view_of_the_output_the_user_holds():
    """core/ops/rules.py:290 (chain_local: a cotangent of ones and a local derivative that is
    the node's own output is copied).

    d exp(x)/dx is exp(x), the output itself; with a cotangent of ones (sum's) the gradient
    has exp(x)'s numbers (NumPy) but must not share memory with y, a tensor the user holds
    (as in PyTorch): changing y afterwards leaves x.grad as it was.  600 elements: over
    chain_local's threshold (512)."""
    data = np.linspace(0.0, 1.0, 600)
    x = tensor(data, requires_grad=True)
    y = x.exp()
    y.sum().backward()
    _bits(x.grad.numpy(), np.exp(data))
    assert not np.shares_memory(x.grad.data, y.data)
    y.data[:] = 0.0
    _bits(x.grad.numpy(), np.exp(data))


# ---- shape.py --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("axes", "detail"),
    [
        ("[0]", "transpose() needs one axis per dimension: 1 given for an array of 2 dimension(s)"),
        ("[0, -2]", "the axes of transpose() repeat an axis: [0, -2]"),
        ("[0, 5]", "axis 5 of transpose() is out of range for 2 dimension(s)"),
        ("[1, -3]", "axis -3 of transpose() is out of range for 2 dimension(s)"),
    ],
)
def test_transpose_with_bad_axes_is_a_shape_error_saying_why(cli, axes, detail):
    """core/ops/shape.py:109 (too few axes), 115 (an axis repeated, as given), 95->98
    (axis_of: an axis out of range, described by what transpose has).

    transpose(x, axes) takes a permutation, negative axes allowed (docs/language.md);
    otherwise a shape error (exit 1) with the reason, the axes as written; [-1, 0] works."""
    r = cli("eval", f"transpose(x, {axes})", "--x", "[[1,2],[3,4]]", "--json")
    assert r.code == 1, r.out
    assert r.json["error"] == {
        "kind": "shape",
        "message": f"transpose: shapes (2, 2) do not fit ({detail})",
    }
    ok = cli("eval", "transpose(x, [-1, 0])", "--x", "[[1,2],[3,4]]", "--json")
    assert ok.json["value"] == [[1.0, 3.0], [2.0, 4.0]]


def test_the_memory_limit_counts_an_index_with_none_and_an_ellipsis():
    """core/ops/shape.py:215 (None in an index adds no axis of x), 217-220 (an Ellipsis stands
    for the axes the other indices leave), 205-206 (index arrays that do not broadcast: the
    forward says so).

    getitem's index (the op's attribute: ints, slices, None, Ellipsis, integer lists as
    tuples) is sized before it runs (docs/language.md: "The result's size is checked against
    the memory limit before it is made").  x of shape (2, 3, 4): x[None, (0, 0, 1)] has
    NumPy's shape (1, 3, 3, 4), 36 numbers; x[..., (0, 0, 1, 1, 2)] (2, 3, 5), 30 numbers;
    x[(0, 1), ..., (1, 1)] (2, 3), 6; x[..., (0, 0, 1), 1:3] (2, 3, 2), 12.  Each fits a
    limit of exactly its bytes and is refused, naming that count, one byte below; index
    arrays of lengths 2 and 3 are a shape error (NumPy's), also under a 1-byte limit."""
    x = tensor(np.arange(24.0).reshape(2, 3, 4))
    cases = [
        ((None, (0, 0, 1)), (1, 3, 3, 4)),
        ((Ellipsis, (0, 0, 1, 1, 2)), (2, 3, 5)),
        (((0, 1), Ellipsis, (1, 1)), (2, 3)),
        ((Ellipsis, (0, 0, 1), slice(1, 3)), (2, 3, 2)),
    ]
    for index, shape in cases:
        want = x.numpy()[tuple(np.array(i) if type(i) is tuple else i for i in index)]
        assert want.shape == shape
        n = math.prod(shape)
        with limits.using(8 * n):
            got = apply(OPS["getitem"], x, index=index)
        np.testing.assert_array_equal(got.numpy(), want)
        with limits.using(8 * n - 1), pytest.raises(LimitError) as info:
            apply(OPS["getitem"], x, index=index)
        assert f"would take {8 * n} bytes ({n} numbers)" in str(info.value)
    with limits.using(1), pytest.raises(ShapeError, match="could not be broadcast together"):
        apply(OPS["getitem"], x, index=((0, 1), (0, 1, 0)))
    # Two Ellipses are NumPy's IndexError ("an index can only have a single ellipsis"), a
    # shape error here; the size rule lets the first stand for the 2 * 3 leading axes and
    # the second for none, 12 numbers, within 96 bytes, so the forward says what is wrong.
    with limits.using(96), pytest.raises(ShapeError, match="single ellipsis"):
        apply(OPS["getitem"], x, index=(Ellipsis, Ellipsis, (0, 1)))


def test_codegen_writes_a_none_in_an_index():
    """core/ops/shape.py:231 (_index_part: None -> "None").

    A graph whose getitem has None in its index (an Expr built by a Python caller: the
    language has no newaxis) generates code that indexes with None, as NumPy does: run, it
    gives x[None, 1] and the gradient of its sum, [0, 1, 0] (by hand)."""
    expr = Expr("sum", (Expr("getitem", (Expr.var("x"),), {"index": (None, 1)}),), {})
    expr.attrs.update(axis=None, keepdims=False)
    code = generate(expr, {"x": [1.0, 2.0, 3.0]}).code
    assert "(None, 1, )" in code
    scope: dict = {}
    exec(code, scope)  # noqa: S102 - our own generated code
    value, g = scope["f"](np.array([1.0, 5.0, 3.0]))
    assert float(value) == 5.0
    np.testing.assert_array_equal(g, [0.0, 1.0, 0.0])


def test_the_gradient_of_repeated_indices_on_older_cupy_uses_scatter_add(device, monkeypatch):
    """core/ops/shape.py:305-307 (_scatter_forward on the GPU without ufunc.at: older CuPy,
    cupyx.scatter_add).

    A repeated index gets the sum of its gradients (docs/language.md: "x[[0, 2, 2]] picks
    elements (a repeated index gets the sum of its gradients, as in PyTorch)"): d sum(x[[0, 0,
    1]])/dx = [2, 1, 0], by hand, on a device whose add has no .at (the stand-in's add
    wrapped without it) as on the CPU."""

    class NoAt:  # an add ufunc without .at, as CuPy's before it had one
        def __init__(self, ufunc):
            self.ufunc = ufunc

        def __call__(self, *args, **kwargs):
            return self.ufunc(*args, **kwargs)

    monkeypatch.setattr(strict_xp.xp, "add", NoAt(strict_xp.xp.add))
    with backend.using(device="gpu"):
        assert not hasattr(backend.xp.add, "at")
        v = tensor([1.0, 2.0, 3.0], requires_grad=True)
        (g,) = grad(apply(OPS["getitem"], v, index=((0, 0, 1),)).sum(), [v])
        _bits(backend.to_numpy(g.data), np.array([2.0, 1.0, 0.0]))


@pytest.mark.parametrize("expr", ["sum([x, y*y])", "sum([x, 1])"])
def test_codegen_of_an_array_literal_broadcasts_its_numbers(cli, expr):
    """core/ops/shape.py:398 (join_parts: a part of another shape broadcast to the arrays').

    [x, y] with x a vector and y a number repeats y along x's shape (docs/language.md's array
    literal; eval "[x, 1]" is [[1, 2], [1, 1]]); the NumPy code broadcasts it before stacking,
    and --check passes."""
    values = ["--x", "[1, 2]"] + (["--y", "3"] if "y" in expr else [])
    r = cli("codegen", expr, *values)
    assert r.code == 0, r.err
    assert "np.broadcast_to(" in r.out and ", (2,))])" in r.out
    r = cli("codegen", expr, *values, "--check", "5", "--json")
    assert r.code == 0 and r.json["check"]["passed"] is True, r.out + r.err


# ---- special.py ------------------------------------------------------------------------------


def test_cbrt_of_float16_is_numpys_own():
    """core/ops/special.py:82 (_cbrt_forward: a dtype other than float64 and float32 keeps
    the library's cube root).

    The exact Newton step is written for float64 (float32 is computed in float64); for a
    float16 tensor cbrt is NumPy's np.cbrt in float16 (the oracle): [2, -3, 0.5] for [8, -27,
    0.125], dtype float16."""
    a = np.array([8.0, -27.0, 0.125, 1000.0], dtype=np.float16)
    got = apply(OPS["cbrt"], tensor(a)).numpy()
    assert got.dtype == np.float16
    _bits(got, np.cbrt(a))


# ---- table.py --------------------------------------------------------------------------------


def test_an_op_declaration_is_checked_when_it_is_made():
    """core/ops/table.py:374 (on_complex), 377 (a required param after an optional one), 389
    (fiber), 391 (linear), 417 (repr).

    Op's __post_init__ refuses facts it does not know, naming the op and the fact (the
    extension point's errors, as Op's docstring lists the values); repr is Op(name)."""
    identity = (lambda a: a, None)
    cases = [
        ({"on_complex": "bogus"}, "zz: on_complex='bogus' is not one of "),
        ({"params": (Param("a", "int", 0), Param("b", "int"))}, "zz: a required param follows"),
        ({"fiber": "tail"}, "zz: fiber='tail' is not None, 'prefix' or 'whole'"),
        ({"linear": "both"}, "zz: linear='both' is not a bool, 'each' or a tuple"),
        ({"linear": 1}, "zz: linear=1 is not a bool, 'each' or a tuple"),
    ]
    for facts, message in cases:
        with pytest.raises(ValueError) as info:
            Op("zz", "ZzBackward0", *identity, **facts)
        assert str(info.value).startswith(message), str(info.value)
    fine = Op(
        "zz",
        "ZzBackward0",
        *identity,
        params=(Param("a", "int"), Param("b", "int", 0)),
        fiber="whole",
        linear="each",
        on_complex="real",
    )
    assert repr(fine) == "Op(zz)" and repr(OPS["sin"]) == "Op(sin)"


def test_a_call_printing_has_no_text_symbol():
    """core/ops/table.py:127 (Printing.text_symbol of a call form: None).

    text_symbol is "the operator as the text prints it": " + " for add (spaced), "**" for pow
    (docs/language.md writes 2**-1 unspaced), none at all for a function call (sin, CALL)."""
    assert CALL.text_symbol is None and OPS["sin"].printing.text_symbol is None
    assert OPS["add"].printing.text_symbol == " + " and OPS["pow"].printing.text_symbol == "**"


def test_the_arguments_a_function_takes():
    """core/ops/table.py:525-528 (Function.arities of a function with params), 535 (a
    ternary).

    docs/language.md: norm(x, axis=None, keepdims=0, ord=None) takes 1 to 4 arguments, tile(x,
    reps) 2 (reps is required), roll(x, shift, axis=None) 2 to 3, where(c, a, b) 3, stack([a, b,
    ...], axis=0) 1 to 2 (a variadic op: its list counts as one argument)."""
    assert FUNCTIONS["norm"].arities() == "1 to 4"
    assert FUNCTIONS["tile"].arities() == "2"
    assert FUNCTIONS["roll"].arities() == "2 to 3"
    assert FUNCTIONS["where"].arities() == "3"
    assert FUNCTIONS["stack"].arities() == "1 to 2"  # a list of arrays, then axis


def test_where_with_one_argument_says_it_takes_three(cli):
    """core/ops/table.py:535 (Function.arities: a ternary counts 3), through the language:
    where(c, a, b) takes 3 arguments (docs/language.md), an arity error (exit 2) otherwise."""
    r = cli("eval", "where(x)", "--x", "1", "--json")
    assert r.code == 2, r.out
    assert r.json["error"]["kind"] == "arity"
    assert r.json["error"]["message"] == "where() takes 3 arguments, got 1"


def test_an_op_with_params_cannot_share_a_functions_name(monkeypatch):
    """core/ops/table.py:568 (language_functions: a with-params op named like another
    function).

    A function with params is parsed by its params alone, so the table refuses a second op
    of that name (an op added to the table, as its extension point allows): "sin(): an op
    with params cannot share its name"."""
    clash = Op(
        "sin_k",
        "SinKBackward0",
        lambda a, k=0: a,
        None,
        params=(Param("k", "int", 0),),
        printing=function("sin", latex="\\sin"),
    )
    monkeypatch.setitem(OPS, "sin_k", clash)
    with pytest.raises(ValueError, match=r"^sin\(\): an op with params cannot share its name$"):
        language_functions()
    monkeypatch.delitem(OPS, "sin_k")
    assert language_functions()["sin"].unary == "sin"


# ---- batch.py ---------------------------------------------------------------------------------


def test_the_cache_of_fused_batch_ops_is_bounded(monkeypatch):
    """core/batch.py:175 (_fused: at 4096 entries the cache is emptied before adding).

    x * y with x a vector and y a number per row pads y (a fused op, cached by its key): with
    4095 ops cached the new one is added (4096), with 4096 the cache is cleared and holds just
    the new one; the rows are right either way: [2, 4] and [9, 12] (by hand)."""
    columns = {"x": np.array([[1.0, 2.0], [3.0, 4.0]]), "y": np.array([2.0, 3.0])}
    for cached, after in ((4095, 4096), (4096, 1)):
        monkeypatch.setattr(core_batch, "_FUSED", {("old", i): None for i in range(cached)})
        r = core_batch.evaluate_batch(parse("x * y"), columns, 2)
        np.testing.assert_array_equal(r.value, [[2.0, 4.0], [9.0, 12.0]])
        assert len(core_batch._FUSED) == after
        assert sum(k[0] != "old" for k in core_batch._FUSED) == 1


def test_transpose_with_repeated_axes_in_a_batch_is_each_rows_error(cli, tmp_path):
    """core/batch.py:413-414 (_transpose: axes that are no permutation: Unbatchable, the rows
    say why).

    Each line gets the single command's shape error (the batch reference), and the batch
    evaluator itself names the reason it gave up: "transpose axes"."""
    rows = [{"x": [[1, 2], [3, 4]]}, {"x": [[5, 6], [7, 8]]}]
    r = _batch_against_singles(cli, tmp_path, "sum(transpose(x, [0, 0]))", rows)
    assert r.code == 1
    columns = {"x": np.array([row["x"] for row in rows], dtype=float)}
    with pytest.raises(core_batch.Unbatchable, match="^transpose axes$"):
        core_batch.evaluate_batch(parse("sum(transpose(x, [0, 0]))"), columns, 2)


def test_mt_of_rows_below_two_dimensions_is_unbatchable():
    """core/batch.py:426 (_mT: rows of fewer than two dims).

    mT (the internal matrix transpose, in graphs a Python caller builds: the language has no
    name for it) swaps the last two axes of each row; a batch of vectors has one per-row axis,
    so evaluate_batch gives up with "mT needs two per-row dims" and evaluate_group evaluates
    the rows one by one, each its own error; a batch of matrices transposes each row."""
    output = Expr("sum", (Expr("mT", (Expr.var("x"),)),), {"axis": None, "keepdims": False})
    expr = Program(source="", output=output, inputs=["x"])
    with pytest.raises(core_batch.Unbatchable, match="^mT needs two per-row dims$"):
        core_batch.evaluate_batch(expr, {"x": np.ones((2, 3))}, 2)
    out = list(evaluate_group(expr, 2, {"x": np.ones((2, 3))}, op="eval"))
    assert len(out) == 2
    for o in out:  # each row's own error: NumPy's swapaxes of a vector (one row's evaluation)
        assert isinstance(o, ShapeError) and str(o).startswith("mT: shapes (3,) do not fit")
    m = np.arange(8.0).reshape(2, 2, 2)
    bare = Program(source="", output=Expr("mT", (Expr.var("x"),)), inputs=["x"])
    r = core_batch.evaluate_batch(bare, {"x": m}, 2)
    np.testing.assert_array_equal(r.value, np.swapaxes(m, -1, -2))


def test_integer_lists_apart_in_a_batch_index_run_row_by_row(cli, tmp_path):
    """core/batch.py:459 (_getitem: integer arrays apart in the index are Unbatchable).

    T[[1, 0], :, [0, 2]] puts the lists' axis first (docs/language.md: "lists apart ... put
    their axis first, as NumPy does"), which a leading batch axis would change: the batch
    gives up ("integer arrays apart in an index: NumPy moves their axes first") and each
    line is the single command's."""
    t1 = [[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [1, 2, 3]]]
    t2 = [[[2, -2, 3], [4, 5, 6]], [[7, 8, 0.5], [1, 2, 4]]]
    expr = "sum(T[[1, 0], :, [0, 2]] * T[0, 0, :2])"
    r = _batch_against_singles(cli, tmp_path, expr, [{"T": t1}, {"T": t2}])
    assert r.code == 0
    with pytest.raises(core_batch.Unbatchable, match="^integer arrays apart in an index"):
        core_batch.evaluate_batch(parse(expr), {"T": np.array([t1, t2], dtype=float)}, 2)


def test_einsum_using_every_letter_in_a_batch_runs_row_by_row(cli, tmp_path):
    """core/batch.py:534 (_einsum: no letter left for the batch axis).

    einsum of a 26-dim x ('a'..'z') and a 26-dim y ('A'..'Z'), all axes of length 1, to a
    number is x*y (by hand: 2*3 = 6, 3*4 = 12); the batch has no letter left for its own axis
    ("einsum uses every letter") and each line is the single command's."""
    subs = string.ascii_lowercase + "," + string.ascii_uppercase + "->"
    expr = f"einsum('{subs}', x, y)"
    one = (1,) * 26
    rows = [{"x": np.full(one, v).tolist(), "y": np.full(one, v + 1).tolist()} for v in (2.0, 3.0)]
    r = _batch_against_singles(cli, tmp_path, expr, rows)
    assert [d["value"] for d in r.docs] == [6.0, 12.0]
    columns = {k: np.array([row[k] for row in rows]) for k in ("x", "y")}
    with pytest.raises(core_batch.Unbatchable, match="^einsum uses every letter$"):
        core_batch.evaluate_batch(parse(expr), columns, 2)


def test_a_batch_row_warns_once_for_the_same_message_of_two_nodes(cli, tmp_path):
    """core/batch.py:630-632 (a row already holding a message does not get it twice).

    log(x)*log(y) at x = y = 0: both logs give -inf, one message ("log gave inf ..."), which
    the single eval prints once; each batch line is the single command's (the rows where only
    one of them is 0 get it once too)."""
    rows = [{"x": 0, "y": 0}, {"x": 1, "y": 0}, {"x": 0, "y": 2}, {"x": 1, "y": 2}]
    r = _batch_against_singles(cli, tmp_path, "log(x)*log(y)", rows, op="eval")
    assert len(r.docs[0]["warnings"]) == 1 and "warnings" not in r.docs[3]


def test_complex_columns_in_a_batch_run_row_by_row(cli, tmp_path):
    """core/batch.py:696 (Batched.var: a complex column, or a complex dtype, is Unbatchable).

    docs/choices.md: in batch, lines with complex values run one by one; with --dtype
    complex128 each line is the single command's (abs(x*x): value |x|**2, gradient 2 conj(z
    ...) as the single command prints it, {"re", "im"})."""
    rows = [{"x": 2}, {"x": -1.5}]
    _batch_against_singles(cli, tmp_path, "abs(x*x)", rows, "--dtype", "complex128")
    with (
        backend.using(dtype="complex128"),
        pytest.raises(core_batch.Unbatchable, match="^column 'x' is complex$"),
    ):
        core_batch.evaluate_batch(parse("abs(x*x)"), {"x": np.array([2.0, -1.5])}, 2)
    with pytest.raises(core_batch.Unbatchable, match="^column 'x' is complex$"):
        core_batch.evaluate_batch(parse("abs(x*x)"), {"x": np.array([2.0, 1j])}, 2)


def test_a_column_without_the_batch_axis_is_unbatchable():
    """core/batch.py:699 (Batched.var: a column whose axis 0 is not the batch's).

    evaluate_batch's columns have shape (size,) + the row's shape (its docstring); a number,
    or a column of another length, is refused as Unbatchable naming the column and the size
    (the caller then evaluates the rows one by one); a right column evaluates."""
    program = parse("x * 2")
    for bad in (np.array(1.0), np.array([1.0, 2.0, 3.0])):
        with pytest.raises(core_batch.Unbatchable) as info:
            core_batch.evaluate_batch(program, {"x": bad}, 2)
        assert str(info.value) == "column 'x' has no batch axis of size 2"
    r = core_batch.evaluate_batch(program, {"x": np.array([1.0, 2.0])}, 2)
    np.testing.assert_array_equal(r.value, [2.0, 4.0])


def _zero_kink(message):
    """A kink rule written for one row (an op added to the table, or a kink changed, as the
    extension point allows): fires where the first input has a 0."""

    def kink(inputs, out, attrs):
        return message if (np.asarray(inputs[0]) == 0).any() else None

    return kink


def test_a_kink_of_an_op_whose_batch_rule_changed_it_is_asked_row_by_row(
    cli, tmp_path, monkeypatch
):
    """core/batch.py:836 (_kink_rows: the rule changed the op, so every row is asked alone).

    transpose's batching rule applies another op (a permutation keeping the batch axis), so a
    kink of transpose cannot be asked about the batch: each row is, and a row whose x has a 0
    warns, as the single command does at that point; the others do not."""
    monkeypatch.setattr(OPS["transpose"], "kink", _zero_kink("transpose kinks at a 0"))
    rows = [{"x": [1, 0]}, {"x": [1, 2]}, {"x": [0, 3]}]
    r = _batch_against_singles(cli, tmp_path, "sum(transpose(x) * x)", rows)
    assert [d.get("warnings") for d in r.docs] == [
        ["transpose kinks at a 0"],
        None,
        ["transpose kinks at a 0"],
    ]


def test_a_kink_rule_that_cannot_read_a_slice_of_rows_is_asked_row_by_row(
    cli, tmp_path, monkeypatch
):
    """core/batch.py:863, 869 (_kink_rows: a kink rule raising ValueError on a slice of rows:
    every row is asked on its own).

    A kink rule written for one row's number (``.item()``: a ValueError for 0 or several
    rows, the comment's "a slice of rows may not fit it") on abs: the batch asks each row,
    and the rows at x = 0 warn as the single command does there."""

    def kink(inputs, out, attrs):
        return "abs kinks at 0" if inputs[0].item() == 0 else None

    monkeypatch.setattr(OPS["abs"], "kink", kink)
    rows = [{"x": 0}, {"x": 2}, {"x": 0}, {"x": -1}]
    r = _batch_against_singles(cli, tmp_path, "abs(x)", rows)
    assert [d.get("warnings") for d in r.docs] == [
        ["abs kinks at 0"],
        None,
        ["abs kinks at 0"],
        None,
    ]
