"""The array functions of core/ops/arrays.py through the real command line.

softmax, log_softmax, cumprod, roll, sort, repeat, tile and stack: their values and
gradients (``eval``/``grad --json``) against oracles written here in plain Python, forward
mode (``grad --tangent``), Hessians (``hessian``) against central differences of the
gradient, the errors a user can make (exit code, kind, message, no traceback), printing
and parsing back, ``batch`` (many rows at once, equal to one row at a time) and, where
PyTorch is installed, values, gradients and Hessian-vector products against it.

Conventions (see core/ops/arrays.py): NumPy's forward semantics (cumprod, roll and repeat
flatten without an axis; sort puts NaN last and keeps ties in order, NumPy's
kind="stable"), PyTorch's gradients (softmax's of a row with +inf, nan or only -inf is nan,
as torch.softmax; cumprod's at zeros is the product of the other factors).
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from autograd_cli.core import OPS, api, apply, grad, tensor
from autograd_cli.core import batch as batch_module
from autograd_cli.core.printing import to_latex, to_text
from autograd_cli.grammar import parse

NAN = math.nan
INF = math.inf


def encode(value):
    """A value as a batch line holds it (JSON; non-finite numbers as strings)."""
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def decode(value):
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, str):
        return {"nan": NAN, "inf": INF, "-inf": -INF}[value]
    return float(value)


def argv(values: dict) -> list[str]:
    out = []
    for name, value in values.items():
        out += [f"--{name}", repr(value)]  # Python's repr: [nan, -inf] reads back
    return out


def run_json(cli, command, expr, values, *more):
    r = cli(command, expr, *argv(values), *more, "--json")
    assert r.code == 0, (r.out, r.err)
    assert "Traceback" not in r.err
    return r.json


def same(got, want):
    """Exactly equal, nan where nan, and the sign of each zero."""
    got = np.asarray(decode(got) if not isinstance(got, np.ndarray) else got, float)
    want = np.asarray(want, float)
    assert got.shape == want.shape, (got, want)
    assert np.array_equal(got, want, equal_nan=True), (got, want)
    number = ~np.isnan(want)
    assert np.array_equal(np.signbit(got[number]), np.signbit(want[number])), (got, want)


def close(got, want, rtol=1e-13, atol=1e-15):
    got = np.asarray(decode(got) if not isinstance(got, np.ndarray) else got, float)
    np.testing.assert_allclose(got, np.asarray(want, float), rtol=rtol, atol=atol, equal_nan=True)


# ---------------------------------------------------------------------------
# Oracles in plain Python
# ---------------------------------------------------------------------------


def py_softmax(row):
    m = max(row)
    e = [math.exp(v - m) for v in row]
    s = math.fsum(e)
    return [v / s for v in e]


def py_cumprod_partial(x, i, j):
    """d cumprod(x)_j / d x_i: the product of the other factors (0 where i > j)."""
    return math.prod(x[m] for m in range(j + 1) if m != i) if i <= j else 0.0


def py_cumprod_second(x, i, k, j):
    """d^2 cumprod(x)_j / d x_i d x_k."""
    if i == k or max(i, k) > j:
        return 0.0
    return math.prod(x[m] for m in range(j + 1) if m not in (i, k))


# ---------------------------------------------------------------------------
# Values and gradients through the command line
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("x", [[1.0, 2.0, 3.0], [1000.0, 999.0, -1000.0], [-0.5, 0.0, 0.25]])
def test_softmax_and_log_softmax(cli, x):
    w = [1.0, -2.0, 0.5]
    y = py_softmax(x)
    dot = math.fsum(a * b for a, b in zip(w, y))
    doc = run_json(cli, "grad", "sum(softmax(x)*w)", {"x": x, "w": w})
    close(doc["value"], dot)
    # d/dx_i sum_j w_j y_j = y_i (w_i - sum_j w_j y_j)
    close(doc["grad"]["x"], [y[i] * (w[i] - dot) for i in range(3)])
    close(doc["grad"]["w"], y)
    doc = run_json(cli, "grad", "sum(log_softmax(x)*w)", {"x": x, "w": w})
    lse = max(x) + math.log(math.fsum(math.exp(v - max(x)) for v in x))
    close(doc["value"], math.fsum(wi * (xi - lse) for wi, xi in zip(w, x)))
    close(doc["grad"]["x"], [w[i] - y[i] * math.fsum(w) for i in range(3)])


def test_softmax_along_an_axis(cli):
    A = [[1.0, 2.0, 0.0], [3.0, -1.0, 2.0]]
    doc = run_json(cli, "eval", "softmax(A, axis=0)", {"A": A})
    cols = [py_softmax([A[0][j], A[1][j]]) for j in range(3)]
    close(doc["value"], [[cols[j][i] for j in range(3)] for i in range(2)])
    doc = run_json(cli, "eval", "log_softmax(A)", {"A": A})
    close(doc["value"], [[math.log(v) for v in py_softmax(row)] for row in A])


def test_softmax_of_infinite_rows_is_torchs(cli):
    E = [[-INF, -INF], [INF, 1.0], [-INF, 1.0], [NAN, 0.0]]
    doc = run_json(cli, "eval", "softmax(E)", {"E": E})
    same(doc["value"], [[NAN, NAN], [NAN, NAN], [0.0, 1.0], [NAN, NAN]])
    doc = run_json(cli, "eval", "log_softmax(E)", {"E": E})
    same(doc["value"], [[NAN, NAN], [NAN, NAN], [-INF, 0.0], [NAN, NAN]])


@pytest.mark.parametrize(
    "x",
    [
        [2.0, -0.5, 3.0, 1.5],  # no zero: out / x
        [2.0, 0.0, 3.0, 1.5],  # one zero
        [0.0, 2.0, 0.0, 3.0],  # two zeros
        [1.5, 0.0, 0.0, 0.0],  # three zeros
    ],
)
def test_cumprod_gradient_at_zeros(cli, x):
    w = [1.0, 2.0, -1.0, 0.5]
    doc = run_json(cli, "grad", "sum(cumprod(x)*w)", {"x": x, "w": w})
    out = [math.prod(x[: j + 1]) for j in range(4)]
    close(doc["value"], math.fsum(a * b for a, b in zip(w, out)))
    want = [math.fsum(w[j] * py_cumprod_partial(x, i, j) for j in range(4)) for i in range(4)]
    close(doc["grad"]["x"], want)
    close(doc["grad"]["w"], out)
    # forward mode: J t, also exact at the zeros
    t = [1.0, -1.0, 0.5, 2.0]
    doc = run_json(cli, "grad", "cumprod(x)", {"x": x}, "--tangent", f"x={json.dumps(t)}")
    want = [math.fsum(t[i] * py_cumprod_partial(x, i, j) for i in range(4)) for j in range(4)]
    close(doc["jvp"], want)


def test_cumprod_hessian_at_zeros(cli):
    # the second derivatives too: where a zero is a factor of a partial that is 0 at the point
    for x in ([2.0, 0.0, 3.0, 1.5], [0.0, 2.0, 0.0, 3.0], [1.5, 0.0, 0.0, 0.5]):
        w = [1.0, 2.0, -1.0, 0.5]
        doc = run_json(cli, "hessian", "sum(cumprod(x)*w)", {"x": x}, "--w", json.dumps(w))
        want = [
            [math.fsum(w[j] * py_cumprod_second(x, i, k, j) for j in range(4)) for k in range(4)]
            for i in range(4)
        ]
        close(doc["hessian"]["x"]["x"], want)


def test_cumprod_flattens_without_an_axis(cli):
    A = [[1.0, 2.0], [3.0, -0.0]]
    same(run_json(cli, "eval", "cumprod(A)", {"A": A})["value"], [1.0, 2.0, 6.0, -0.0])
    same(run_json(cli, "eval", "cumprod(A, 0)", {"A": A})["value"], [[1.0, 2.0], [3.0, -0.0]])
    doc = run_json(cli, "grad", "sum(cumprod(A, axis=1))", {"A": A})
    same(doc["grad"]["A"], [[3.0, 1.0], [1.0, 3.0]])


def test_roll(cli):
    x = [1.0, 2.0, 3.0, 4.0]
    w = [10.0, 20.0, 30.0, 40.0]
    doc = run_json(cli, "grad", "sum(roll(x, 1)*w)", {"x": x, "w": w})
    # roll(x, 1) = [x3, x0, x1, x2]: x_i meets w_{i+1}
    same(doc["grad"]["x"], [20.0, 30.0, 40.0, 10.0])
    same(run_json(cli, "eval", "roll(x, -5)", {"x": x})["value"], [2.0, 3.0, 4.0, 1.0])
    A = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    same(run_json(cli, "eval", "roll(A, 1)", {"A": A})["value"], [[6.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    same(
        run_json(cli, "eval", "roll(A, 1, axis=0)", {"A": A})["value"],
        [[4.0, 5.0, 6.0], [1.0, 2.0, 3.0]],
    )
    same(
        run_json(cli, "eval", "roll(A, shift=1, axis=[0, 1])", {"A": A})["value"],
        [[6.0, 4.0, 5.0], [3.0, 1.0, 2.0]],
    )


def test_sort_routes_the_gradient_through_the_permutation(cli):
    x = [3.0, NAN, -1.0, 2.0, -1.0]
    w = [1.0, 10.0, 100.0, 1000.0, 10000.0]
    doc = run_json(cli, "grad", "sum(sort(x)*w)", {"x": x}, "--w", json.dumps(w), "--wrt", "x")
    same(doc["value"], NAN)
    # sorted: -1 (x2), -1 (x4, after x2: ties keep their order), 2 (x3), 3 (x0), nan (x1)
    same(doc["grad"]["x"], [1000.0, 10000.0, 1.0, 100.0, 10.0])
    doc = run_json(cli, "eval", "sort(x)", {"x": x})
    same(doc["value"], [-1.0, -1.0, 2.0, 3.0, NAN])
    A = [[2.0, -1.0, 0.5], [-3.0, 4.0, 0.0]]
    same(run_json(cli, "eval", "sort(A)", {"A": A})["value"], [[-1.0, 0.5, 2.0], [-3.0, 0.0, 4.0]])
    same(
        run_json(cli, "eval", "sort(A, axis=0)", {"A": A})["value"],
        [[-3.0, -1.0, 0.0], [2.0, 4.0, 0.5]],
    )


def test_repeat_and_tile(cli):
    x = [1.0, 2.0, 3.0]
    w = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    doc = run_json(cli, "grad", "sum(repeat(x, 2)*w)", {"x": x, "w": w})
    same(doc["value"], 1 * 3 + 2 * 7 + 3 * 11)
    same(doc["grad"]["x"], [3.0, 7.0, 11.0])
    doc = run_json(cli, "grad", "sum(tile(x, 2)*w)", {"x": x, "w": w})
    same(doc["grad"]["x"], [5.0, 7.0, 9.0])
    A = [[1.0, 2.0], [3.0, 4.0]]
    same(
        run_json(cli, "eval", "repeat(A, 2, axis=0)", {"A": A})["value"],
        [[1.0, 2.0], [1.0, 2.0], [3.0, 4.0], [3.0, 4.0]],
    )
    same(run_json(cli, "eval", "repeat(A, repeats=2)", {"A": A})["value"], [1, 1, 2, 2, 3, 3, 4, 4])
    same(run_json(cli, "eval", "tile(A, 2)", {"A": A})["value"], [[1, 2, 1, 2], [3, 4, 3, 4]])
    doc = run_json(cli, "grad", "sum(repeat(A, 3, axis=1))", {"A": A})
    same(doc["grad"]["A"], [[3.0, 3.0], [3.0, 3.0]])
    doc = run_json(cli, "eval", "repeat(x, 0)", {"x": x})
    assert doc["shape"] == [0]
    same(run_json(cli, "eval", "tile(s, 3)", {"s": 2.5})["value"], [2.5, 2.5, 2.5])


def test_stack(cli):
    a, b = [1.0, 2.0, 3.0], [4.0, 5.0, 6.0]
    W = [[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]]
    doc = run_json(cli, "grad", "sum(stack([a, b], axis=1)*W)", {"a": a, "b": b, "W": W})
    same(doc["value"], 1 + 40 + 4 + 100 + 9 + 180)
    same(doc["grad"]["a"], [1.0, 2.0, 3.0])
    same(doc["grad"]["b"], [10.0, 20.0, 30.0])
    same(doc["grad"]["W"], [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]])
    same(run_json(cli, "eval", "stack([a, b])", {"a": a, "b": b})["value"], [a, b])
    same(
        run_json(cli, "eval", "stack([a, 2*a, b], -1)", {"a": a, "b": b})["value"],
        [[1, 2, 4], [2, 4, 5], [3, 6, 6]],
    )
    same(run_json(cli, "eval", "stack([s, s*s])", {"s": 3.0})["value"], [3.0, 9.0])


# ---------------------------------------------------------------------------
# Hessians against central differences of the gradient
# ---------------------------------------------------------------------------

HESSIAN_CASES = [
    ("sum(softmax(x)*w)", {"x": [0.3, -1.2, 0.8, 0.1]}),
    ("sum(softmax(A, axis=0)*W)", {"A": [[0.3, -1.2], [0.8, 0.1]]}),
    ("sum(log_softmax(x)**2*w)", {"x": [0.3, -1.2, 0.8, 0.1]}),
    ("sum(cumprod(x)*w)", {"x": [0.9, -1.3, 1.1, 0.7]}),
    ("sum(cumprod(x)*w)", {"x": [0.9, 0.0, 1.1, 0.0]}),
    ("sum(roll(x, 1)**3*w)", {"x": [0.3, -1.2, 0.8, 0.1]}),
    ("sum(sort(x)**3*w)", {"x": [0.3, -1.2, 0.8, 0.1]}),
    ("sum(repeat(x, 2)[0:4]**3*w)", {"x": [0.3, -1.2, 0.8, 0.1]}),
    ("sum(tile(x, 2)[2:6]**3*w)", {"x": [0.3, -1.2, 0.8, 0.1]}),
    ("sum(stack([x, x*x], 1)[:, 1]*sin(x)*w)", {"x": [0.3, -1.2, 0.8, 0.1]}),
]
WEIGHTS = {"w": [1.0, -2.0, 0.5, 1.5], "W": [[1.0, -2.0], [0.5, 1.5]]}


@pytest.mark.parametrize(("expr", "point"), HESSIAN_CASES, ids=[e for e, _ in HESSIAN_CASES])
def test_hessian_matches_differences_of_the_gradient(cli, expr, point):
    ((name, x),) = point.items()
    consts = {k: v for k, v in WEIGHTS.items() if f"*{k}" in expr}
    doc = run_json(cli, "hessian", expr, {**point, **consts}, "--wrt", name)
    hess = np.asarray(doc["hessian"][name][name], float)
    flat = np.asarray(x, float).ravel()
    h = 1e-6
    columns = []
    for k in range(flat.size):
        grads = []
        for step in (h, -h):
            moved = flat.copy()
            moved[k] += step
            g = run_json(cli, "grad", expr, {name: moved.reshape(np.shape(x)).tolist(), **consts})
            grads.append(np.asarray(g["grad"][name], float).ravel())
        columns.append((grads[0] - grads[1]) / (2 * h))
    want = np.stack(columns, axis=-1)
    np.testing.assert_allclose(hess.reshape(want.shape), want, rtol=1e-6, atol=1e-7)


REVERSE_OVER_REVERSE = [
    ("softmax", {"axis": 0}),
    ("log_softmax", {"axis": -1}),
    ("cumprod", {"axis": 1}),
    ("cumprod", {"axis": None}),
    ("roll", {"shift": 1, "axis": None}),
    ("sort", {"axis": 0}),
    ("repeat", {"repeats": 2, "axis": 1}),
    ("repeat", {"repeats": 3, "axis": None}),
    ("tile", {"reps": 2}),
    ("stack_axis", {"axis": 1}),
]


@pytest.mark.parametrize(("name", "attrs"), REVERSE_OVER_REVERSE, ids=str)
def test_second_derivatives_reverse_over_reverse(name, attrs):
    # the hessian command is forward-over-reverse; here the rules' own graphs are
    # differentiated again in reverse mode (grad of grad), through a nonlinear function
    # of the result, so every op a vjp builds is itself differentiated
    x0 = np.array([[0.3, -1.2, 0.8], [0.0, 0.5, 0.0]])
    v = np.array([[1.0, -0.5, 2.0], [0.25, 1.5, -1.0]])

    def gradient(x, create_graph=False):
        t = tensor(x, requires_grad=True)
        args = (t, t * t) if name == "stack_axis" else (t,)
        out = apply(OPS[name], *args, **attrs)
        w = tensor(np.linspace(-1.0, 2.0, out.data.size).reshape(out.shape))
        (g,) = grad(((out * w) ** 3).sum(), [t], create_graph=create_graph)
        return t, g

    t, g = gradient(x0, create_graph=True)
    (hv,) = grad((g * tensor(v)).sum(), [t])
    h = 1e-6
    numeric = (gradient(x0 + h * v)[1].numpy() - gradient(x0 - h * v)[1].numpy()) / (2 * h)
    np.testing.assert_allclose(hv.numpy(), numeric, rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------------------
# Errors: the documented exit codes, the tool's own words, no traceback
# ---------------------------------------------------------------------------

ERRORS = [
    # found while evaluating: exit 1, kind shape
    ("softmax(x, 1)", {"x": [1.0, 2.0]}, 1, "shape", "axis 1 of softmax() is out of range"),
    ("log_softmax(s)", {"s": 2.0}, 1, "shape", "axis -1 of log_softmax() is out of range"),
    ("cumprod(x, axis=-2)", {"x": [1.0, 2.0]}, 1, "shape", "axis -2 of cumprod() is out of range"),
    ("roll(x, 1, axis=[0, 1])", {"x": [1.0]}, 1, "shape", "axis 1 of roll() is out of range"),
    ("sort(A, 2)", {"A": [[1.0]]}, 1, "shape", "axis 2 of sort() is out of range"),
    ("repeat(x, 2, axis=1)", {"x": [1.0]}, 1, "shape", "axis 1 of repeat() is out of range"),
    ("stack([x, y])", {"x": [1.0, 2.0], "y": [1.0, 2.0, 3.0]}, 1, "shape", "one shape"),
    ("stack([x, y])", {"x": [1.0, 2.0], "y": 3.0}, 1, "shape", "one shape"),
    ("stack([x, x], 2)", {"x": [1.0, 2.0]}, 1, "shape", "axis 2 of stack() is out of range"),
    ("repeat(x, 2000000000)", {"x": [1.0, 2.0]}, 1, "limit", "repeat's result would take"),
    ("tile(x, 2000000000)", {"x": [1.0, 2.0]}, 1, "limit", "tile's result would take"),
    # what was typed: exit 2
    ("roll(x)", {"x": [1.0]}, 2, "arity", "roll() needs its shift argument"),
    ("repeat(x, -1)", {"x": [1.0]}, 2, "input", "repeats of repeat() must be an integer from 0"),
    ("tile(x, -3)", {"x": [1.0]}, 2, "input", "reps of tile() must be an integer from 0 to"),
    ("roll(x, 0.5)", {"x": [1.0]}, 2, "input", "shift of roll() must be an integer"),
    ("repeat(x, [1, 2])", {"x": [1.0]}, 2, "input", "repeats of repeat() must be an integer"),
    ("softmax(x, axis=99)", {"x": [1.0]}, 2, "input", "axis of softmax() must be an integer"),
    ("stack(x)", {"x": [1.0]}, 2, "input", "stack() takes a list of arrays first"),
    ("sort(x, kind=1)", {"x": [1.0]}, 2, "arity", "unexpected keyword argument kind"),
]


@pytest.mark.parametrize(("expr", "values", "code", "kind", "words"), ERRORS)
def test_errors_say_what_is_wrong(cli, expr, values, code, kind, words):
    for json_flag in ((), ("--json",)):
        r = cli("eval", expr, *argv(values), *json_flag)
        assert r.code == code, (r.out, r.err)
        assert "Traceback" not in r.out + r.err
        text = r.json["error"]["message"] if json_flag else r.err
        assert words in text, text
        if json_flag:
            assert r.json["error"]["kind"] == kind
    # NumPy's own words never reach the user
    assert "numpy" not in text.lower() and "ndarray" not in text


def test_the_stack_function_is_named_stack_in_its_errors(cli):
    r = cli("eval", "stack([x, y])", "--x", "[1, 2]", "--y", "[1]", "--json")
    assert r.json["error"]["message"].startswith("stack: ")


# ---------------------------------------------------------------------------
# Printing: the text reads back to the same expression; LaTeX names the function
# ---------------------------------------------------------------------------

ROUND_TRIP = [
    ("softmax(x)", "softmax(x)"),
    ("softmax(x, -1)", "softmax(x)"),
    ("log_softmax(A, 0)", "log_softmax(A, axis=0)"),
    ("cumprod(x)", "cumprod(x)"),
    ("cumprod(A, axis=1)", "cumprod(A, axis=1)"),
    ("roll(x, -2)", "roll(x, -2)"),
    ("roll(A, shift=1, axis=[0, 1])", "roll(A, 1, axis=[0, 1])"),
    ("sort(A, 0)", "sort(A, axis=0)"),
    ("repeat(A, 2, 1)", "repeat(A, 2, axis=1)"),
    ("tile(x, 3)", "tile(x, 3)"),
    ("stack([x, 2*x], axis=1)", "stack([x, 2*x], axis=1)"),
    ("stack([x, x])", "stack([x, x])"),
    ("[x, 2*x]", "[x, 2*x]"),
]


@pytest.mark.parametrize(("source", "printed"), ROUND_TRIP)
def test_printing_round_trip(cli, source, printed):
    expr = parse(source).output
    assert to_text(expr) == printed
    assert to_text(parse(printed).output) == printed
    values = {"x": [0.5, -1.0, 2.0], "A": [[1.0, 2.0, 3.0], [-1.0, 0.0, 4.0]]}
    used = {k: v for k, v in values.items() if re.search(rf"\b{k}\b", source)}
    want = run_json(cli, "eval", source, used)
    got = run_json(cli, "eval", printed, used)
    assert got["value"] == want["value"] and got["shape"] == want["shape"]


def test_latex_names_each_function():
    for source, name in (
        ("softmax(x)", "\\operatorname{softmax}"),
        ("log_softmax(x)", "\\operatorname{log\\_softmax}"),
        ("cumprod(x)", "\\operatorname{cumprod}"),
        ("roll(x, 1)", "\\operatorname{roll}"),
        ("sort(x)", "\\operatorname{sort}"),
        ("repeat(x, 2)", "\\operatorname{repeat}"),
        ("tile(x, 2)", "\\operatorname{tile}"),
        ("stack([x, y], axis=1)", "\\operatorname{stack}"),
    ):
        latex = to_latex(parse(source).output)
        assert latex.startswith(name) and "x" in latex, latex


def test_graph_shows_pytorchs_node_names(cli):
    for expr, node in (
        ("sum(softmax(x))", "SoftmaxBackward0"),
        ("sum(log_softmax(x))", "LogSoftmaxBackward0"),
        ("sum(cumprod(x))", "CumprodBackward0"),
        ("sum(roll(x, 1))", "RollBackward0"),
        ("sum(sort(x))", "SortBackward0"),
        ("sum(tile(x, 2))", "RepeatBackward0"),
        ("sum(stack([x, x], 1))", "StackBackward0"),
    ):
        r = cli("graph", expr, "--x", "[1, 2, 3]")
        assert r.code == 0 and node in r.out, (expr, r.out)


# ---------------------------------------------------------------------------
# batch: many rows at once equal one row at a time
# ---------------------------------------------------------------------------

BATCH_EXPRS = [
    "sum(softmax(A, axis=0)*W)",
    "sum(log_softmax(A, axis=1)*W)",
    "sum(softmax(A)*W)",
    "sum(cumprod(A, axis=1)*W)",
    "sum(cumprod(A)[0:3]*W[0])",
    "sum(roll(A, 1, axis=0)*W)",
    "sum(roll(A, -1)*W)",
    "sum(sort(A, axis=0)**2*W)",
    "sum(repeat(A, 2, axis=1)[:, 0:3]*W)",
    "sum(repeat(A, 2)[0:3]*W[0])",
    "sum(tile(A, 2)[:, 1:4]*W)",
    "sum(stack([A, W*A], axis=1)[:, 1]*W)",
    "sum(stack([A, W], -1)[:, :, 0]*W)",
]
BATCH_ROWS = [
    {"A": [[0.5, -1.0, 2.0], [0.0, 3.0, -2.5]], "W": [[1.0, 2.0, 3.0], [-1.0, 0.5, 0.25]]},
    {"A": [[1.5, 0.0, -2.0], [0.0, 0.0, 1.0]], "W": [[0.5, -2.0, 1.0], [2.0, 1.0, -1.0]]},
    {"A": [[-0.5, 4.0, 1.0], [2.0, 2.0, 0.0]], "W": [[1.0, 1.0, 1.0], [3.0, -0.5, 2.0]]},
    {"A": [[1.0, NAN, 0.0], [INF, -1.0, 2.0]], "W": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]},
]


def _without_line(doc):
    return {k: v for k, v in doc.items() if k != "line"}


@pytest.mark.parametrize("expr", BATCH_EXPRS)
def test_batch_equals_one_row_at_a_time(cli, tmp_path, expr):
    lines = [json.dumps({"expr": expr, "vars": encode(row), "op": "grad"}) for row in BATCH_ROWS]
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = cli("batch", str(path), "--no-progress")
    assert r.code == 0, r.err
    docs = [json.loads(line) for line in r.out.splitlines()]
    assert [d["line"] for d in docs] == [1, 2, 3, 4]
    for row, doc in zip(BATCH_ROWS, docs):
        alone = run_json(cli, "grad", expr, row)
        assert _without_line(doc) == alone, (doc, alone)


BATCHED = [
    "sum(softmax(A, axis=0)*W)",
    "sum(log_softmax(A)*W)",
    "sum(cumprod(A, 1)*W)",
    "sum(roll(A, 1, axis=-1)*W)",
    "sum(roll(A, -1, axis=[0, 1])*W)",
    "sum(sort(A, 0)**2*W)",
    "sum(repeat(A, 2, axis=0)[0:2]*W)",
    "sum(tile(A, 2)[:, 2:5]*W)",
    "sum(stack([A, W*A], 1)[:, 0]*W)",
    "sum(stack([A, W*A], -1)[:, :, 1]*W)",
]
ROW_BY_ROW = [
    "sum(cumprod(A)[0:3]*W[0])",  # no axis: over the flattened row
    "sum(roll(A, 1)*W)",
    "sum(repeat(A, 2)[0:3]*W[0])",
    "sum(stack([A, W], 2)[:, :, 0]*W)",  # a new last axis: past the rows' own axes
    "sum(stack([A, [[1, 2, 3], [4, 5, 6]]], 0)[1]*A*W)",  # a constant: the same in every row
]


def _columns(rows):
    return {k: np.array([r[k] for r in rows], dtype=float) for k in rows[0]}


@pytest.mark.parametrize("expr", BATCHED)
def test_an_explicit_axis_batches_along_the_rows(expr):
    # the ("axes",) rule moves the axis past the batch axis (("trailing", 1) for tile): the
    # rows are evaluated together, and each equals the row evaluated alone
    result = batch_module.evaluate_batch(
        parse(expr), _columns(BATCH_ROWS), len(BATCH_ROWS), grad=True
    )
    for i, row in enumerate(BATCH_ROWS):
        alone = api.grad_of(parse(expr), row)
        same(result.value[i], alone.value)
        for name in ("A", "W"):
            same(result.grad[name][i], alone.grad[name])


@pytest.mark.parametrize("expr", ROW_BY_ROW)
def test_without_a_batching_rule_for_the_row_it_goes_row_by_row(cli, tmp_path, expr):
    with pytest.raises(batch_module.Unbatchable):
        batch_module.evaluate_batch(parse(expr), _columns(BATCH_ROWS), len(BATCH_ROWS), grad=True)
    test_batch_equals_one_row_at_a_time(cli, tmp_path, expr)


# ---------------------------------------------------------------------------
# PyTorch: values, gradients and Hessian-vector products
# ---------------------------------------------------------------------------

X = [[0.5, -1.0, 2.0, 0.25], [0.0, 3.0, -2.5, 1.0], [1.5, 0.0, 0.0, -0.5]]
GO = [[1.0, -2.0, 0.5, 3.0], [0.25, 1.5, -1.0, 2.0], [-0.5, 1.0, 2.0, -3.0]]

# (our expression of A, torch's of a tensor t): every function, several axes
TORCH_CASES = [
    ("softmax(A)", lambda torch, t: torch.softmax(t, -1)),
    ("softmax(A, axis=0)", lambda torch, t: torch.softmax(t, 0)),
    ("log_softmax(A)", lambda torch, t: torch.log_softmax(t, -1)),
    ("log_softmax(A, 0)", lambda torch, t: torch.log_softmax(t, 0)),
    ("cumprod(A, axis=1)", lambda torch, t: torch.cumprod(t, 1)),
    ("cumprod(A, axis=0)", lambda torch, t: torch.cumprod(t, 0)),
    ("cumprod(A)", lambda torch, t: torch.cumprod(t.flatten(), 0)),
    ("roll(A, 2)", lambda torch, t: torch.roll(t, 2)),
    ("roll(A, -1, axis=1)", lambda torch, t: torch.roll(t, -1, 1)),
    ("roll(A, 1, axis=[0, 1])", lambda torch, t: torch.roll(t, (1, 1), (0, 1))),
    ("sort(A)", lambda torch, t: torch.sort(t, dim=-1, stable=True).values),
    ("sort(A, axis=0)", lambda torch, t: torch.sort(t, dim=0, stable=True).values),
    ("repeat(A, 2)", lambda torch, t: torch.repeat_interleave(t.flatten(), 2)),
    ("repeat(A, 3, axis=1)", lambda torch, t: torch.repeat_interleave(t, 3, 1)),
    ("tile(A, 2)", lambda torch, t: torch.tile(t, (2,))),
    ("stack([A, A*A], axis=1)", lambda torch, t: torch.stack([t, t * t], 1)),
    ("stack([A, A*A], -1)", lambda torch, t: torch.stack([t, t * t], -1)),
]


def _torch_value_grad_hvp(torch, fn, x, weights, v):
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    out = fn(torch, t)
    f = (out * torch.tensor(weights, dtype=torch.float64)).sum()
    (g,) = torch.autograd.grad(f, t, create_graph=True)
    if not g.requires_grad:  # a linear function: its gradient is constant
        return out.detach().numpy(), g.numpy(), np.zeros(np.shape(x))
    (hv,) = torch.autograd.grad((g * torch.tensor(v, dtype=torch.float64)).sum(), t)
    return out.detach().numpy(), g.detach().numpy(), hv.numpy()


@pytest.mark.parametrize(("expr", "fn"), TORCH_CASES, ids=[e for e, _ in TORCH_CASES])
def test_against_torch(cli, torch, expr, fn):
    value = np.asarray(decode(run_json(cli, "eval", expr, {"A": X})["value"]))
    rng = np.random.default_rng(len(expr))
    weights = rng.standard_normal(value.shape).round(3)
    v = rng.standard_normal(np.shape(X)).round(3)
    want, want_g, want_hv = _torch_value_grad_hvp(torch, fn, X, weights, v)
    close(value, want)
    doc = run_json(cli, "grad", f"sum({expr}*G)", {"A": X, "G": weights.tolist()}, "--wrt", "A")
    close(doc["grad"]["A"], want_g, rtol=1e-12, atol=1e-14)
    # the Hessian times v, from our Hessian
    doc = run_json(cli, "hessian", f"sum({expr}*G)", {"A": X, "G": weights.tolist()}, "--wrt", "A")
    hess = np.asarray(decode(doc["hessian"]["A"]["A"]), float).reshape(v.size, v.size)
    close((hess @ v.ravel()).reshape(v.shape), want_hv, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize(
    "x",
    [[2.0, 0.0, 3.0, 1.5], [0.0, 2.0, 0.0, 3.0], [1.5, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]],
)
def test_cumprod_at_zeros_against_torch(cli, torch, x):
    w = [1.0, 2.0, -1.0, 0.5]
    v = [0.5, -1.0, 2.0, 1.0]
    want, want_g, want_hv = _torch_value_grad_hvp(torch, lambda tc, t: tc.cumprod(t, 0), x, w, v)
    doc = run_json(cli, "hessian", "sum(cumprod(x)*w)", {"x": x}, "--w", json.dumps(w))
    close(doc["grad"]["x"], want_g)
    hess = np.asarray(decode(doc["hessian"]["x"]["x"]), float)
    close(hess @ np.asarray(v), want_hv)


def test_softmax_at_infinities_against_torch(cli, torch):
    for row in ([-INF, -INF], [INF, 1.0], [-INF, 1.0], [NAN, 1.0], [1e308, -1e308], [-0.0, 0.0]):
        t = torch.tensor(row, dtype=torch.float64)
        for name in ("softmax", "log_softmax"):
            got = run_json(cli, "eval", f"{name}(x)", {"x": row})["value"]
            close(got, getattr(torch, name)(t, 0).numpy())


def test_sort_with_nan_and_ties_against_torch(cli, torch):
    # NaN last (NumPy and torch agree); ties keep their order: torch's stable sort
    x = [2.0, NAN, -1.0, 2.0, -INF, -1.0]
    w = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    out = torch.sort(t, stable=True).values
    (g,) = torch.autograd.grad((out * torch.tensor(w, dtype=torch.float64)).sum(), t)
    same(run_json(cli, "eval", "sort(x)", {"x": x})["value"], out.detach().numpy())
    doc = run_json(cli, "grad", "sum(sort(x)*w)", {"x": x}, "--w", json.dumps(w), "--wrt", "x")
    same(doc["grad"]["x"], g.numpy())


def test_empty_and_edge_shapes(cli):
    same(run_json(cli, "eval", "softmax(x)", {"x": [[]]})["value"], [[]])
    same(run_json(cli, "eval", "roll(x, 3)", {"x": []})["value"], [])
    same(run_json(cli, "eval", "sort(x)", {"x": []})["value"], [])
    same(run_json(cli, "eval", "cumprod(s)", {"s": -0.0})["value"], [-0.0])
    same(run_json(cli, "eval", "roll(s, 5)", {"s": 7.0})["value"], 7.0)
    # a shift as large as an int64 goes either way (the vjp negates it)
    s, w = -(2**63), [1.0, 2.0, 3.0]
    doc = run_json(cli, "grad", f"sum(roll(x, {s})*w)", {"x": [4.0, 5.0, 6.0], "w": w})
    # roll(x, s)_i = x_(i - s): x_k meets w_(k + s)
    same(doc["grad"]["x"], [w[(k + s) % 3] for k in range(3)])


def test_combinations_of_the_functions(cli):
    # a chain of them, against the same chain in plain Python
    x = [0.3, -1.2, 0.8, 0.1]
    doc = run_json(cli, "eval", "sum(cumprod(sort(softmax(roll(x, 1)))))", {"x": x})
    y = sorted(py_softmax([x[-1]] + x[:-1]))
    close(doc["value"], math.fsum(math.prod(y[: j + 1]) for j in range(4)))
