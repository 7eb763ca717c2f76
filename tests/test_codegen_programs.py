"""``codegen`` on random programs: every target gives the engine's numbers (issue 26).

The programs are the batch property test's (tests/test_batch_property.py: ``batch_cases``
draws a scalar expression over variables of several shapes, and a scalar-only expression
of ``x``, here made an expression of ``x`` and ``y`` by naming every other ``x`` ``y``).
Each is generated for a target, the generated module executed, and its function called at
the point it was traced at and at three other points of the same shapes (normal floats, or
small integers for zeros, ties and kinks); value, gradients and (for the scalar-only
programs, with ``hessian=True``) Hessians must be ``autograd_cli.grad``'s /
``autograd_cli.hessian``'s at rtol 1e-12, nan where it has nan and the same infinities
(and, for results that are cancellations, within 1e-14 of the largest output: see
:func:`assert_agree`).

An op that a target has no spelling for yet is :class:`UnsupportedError` naming it: that
example is skipped for that target (and counted) *only* when the op's entry says so (no
``code`` fact, or none for that target, or ``refused``); any other error fails.  PyTorch and
JAX run where installed; C where the C generator and ``cc`` exist, compiled with ``-std=c99
-O2 -Wall -Wextra -Werror`` and linked with ``-lm`` alone, which must print nothing.

The rest: batched NumPy (one call over 1000 points == 1000 calls == the engine row by row),
the conventions at their edge points, and the shape of the code itself (a subexpression
computed once, nodes that do not depend on ``wrt`` dropped, constants folded).

``CODEGEN_PROGRAM_EXAMPLES=600`` searches longer (a few minutes); the default (60, and 15 for
C) keeps the file near 25 s.
"""

from __future__ import annotations

import collections
import functools
import os
import re
import shutil
import subprocess
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_batch_property import VARIABLES, _row_values, _shape_of, batch_cases, expressions, grammar

import autograd_cli
from autograd_cli.core.codegen import generate
from autograd_cli.core.errors import UnsupportedError
from autograd_cli.core.tensor import OPS
from autograd_cli.grammar import parse

EXAMPLES = int(os.environ.get("CODEGEN_PROGRAM_EXAMPLES", "60"))
#: C compiles each program (twice with its runner): fewer examples
C_EXAMPLES = max(1, EXAMPLES // 4)
RTOL = 1e-12
CANCELLATION = 1e-14
POINTS = 4  # the traced point and three others
ROWS = 1000  # the points of one batched call
PYTHON_TARGETS = ("numpy", "torch", "jax")
C_FLAGS = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror"]


def examples(count: int) -> settings:
    return settings(SETTINGS, max_examples=count)


SETTINGS = settings(
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# ---------------------------------------------------------------------------
# Running generated code, and the engine's numbers to compare with
# ---------------------------------------------------------------------------


def _runtime(target: str):
    """Skip where the target's library is missing; JAX in float64."""
    if target == "torch":
        pytest.importorskip("torch")
    elif target == "jax":
        jax = pytest.importorskip("jax")
        jax.config.update("jax_enable_x64", True)


def _as_array(out) -> np.ndarray:
    if hasattr(out, "detach"):  # a torch tensor
        out = out.detach().cpu().numpy()
    return np.asarray(out)


def load(generated):
    """The generated function (our own code: exec is fine here)."""
    namespace: dict = {"__name__": f"generated_{generated.target}"}
    exec(compile(generated.code, f"<codegen {generated.target}>", "exec"), namespace)  # noqa: S102
    return namespace[generated.name]


def call(function, generated, point: dict) -> dict:
    """Output label -> array of one call at ``point`` (variable name -> value)."""
    args = [np.asarray(point[name], dtype=np.float64) for name in generated.inputs]
    with np.errstate(all="ignore"):
        out = function(*args)
    if len(generated.outputs) == 1 and not isinstance(out, tuple):
        out = (out,)  # a program of no variables returns its value alone
    assert len(out) == len(generated.outputs)
    return {label: _as_array(o) for label, o in zip(generated.outputs, out)}


def engine(program, point: dict, wrt: list, hessian: bool) -> dict:
    """What ``grad`` (``hessian``) gives at ``point``, labelled as the generated outputs."""
    with np.errstate(all="ignore"):
        result = (autograd_cli.hessian if hessian else autograd_cli.grad)(program, point, wrt)
    want = {"value": np.asarray(result.value)}
    for name in wrt:
        want[f"grad_{name}"] = np.asarray(result.grad[name])
    if hessian:
        for a in wrt:
            for b in wrt:
                want[f"hessian_{a}_{b}"] = np.asarray(result.hessian[a][b])
    return want


def assert_agree(got: dict, want: dict, context: str) -> None:
    """Each output as ``want``'s: its shape, nan where it has nan, its infinities, finite
    numbers at ``RTOL``, or within ``CANCELLATION`` times the largest finite number among
    the outputs at that point (a Hessian entry of 4e-6 that is the difference of terms near
    1 differs in its 12th digit when the terms are summed in another order, as the engine's
    and the generated code's backward passes may)."""
    assert list(got) == list(want), context
    finite = [np.abs(w[np.isfinite(w)]).max() for w in want.values() if np.isfinite(w).any()]
    atol = CANCELLATION * max(finite, default=0.0)
    for label, w in want.items():
        g = got[label]
        assert g.shape == w.shape, f"{context}: {label} has shape {g.shape}, not {w.shape}"
        np.testing.assert_allclose(
            g, w, rtol=RTOL, atol=atol, equal_nan=True, err_msg=f"{context}: {label}"
        )


def unspelled(error: UnsupportedError, target: str) -> bool:
    """Whether ``error`` names an op whose entry has no code for ``target`` (and says so
    in its message)."""
    name = error.details.get("op")
    op = OPS.get(name) if isinstance(name, str) else None
    if op is None:
        return False
    code = op.code
    if code is not None and code.refused is None and code.spelling(target) is not None:
        return False
    spelled = op.printing.names[0] if op.printing.names else name
    return spelled in str(error)


def generate_or_skip(counts, program, values, target, **options):
    """``generate``, or None (counted) where an op has no spelling in ``target``."""
    try:
        return generate(program, values, target=target, **options)
    except UnsupportedError as error:
        if not unspelled(error, target):
            raise
        counts[f"skipped ({error.details['op']})"] += 1
        return None


def check_program(counts, text, points, target, wrt=None, hessian=False, traced=True):
    """Generate ``text`` for ``target`` (traced at ``points[0]``, or with ``traced=False``
    at the generator's default point of the same shapes) and compare every point."""
    program = parse(text)
    names = list(program.inputs)
    values = points[0] if traced else None
    shapes = {n: np.shape(points[0][n]) for n in names}
    g = generate_or_skip(counts, program, values, target, wrt=wrt, hessian=hessian, shapes=shapes)
    if g is None:
        return
    wrt = list(wrt or names)
    assert g.wrt == wrt and list(g.inputs) == names
    function = load(g)
    for point in points:
        context = f"{target} {text!r} at {point} (wrt {wrt})"
        assert_agree(call(function, g, point), engine(program, point, wrt, hessian), context)
    counts["checked"] += 1


# ---------------------------------------------------------------------------
# The sample: the batch property's programs
# ---------------------------------------------------------------------------


def with_y(text: str) -> str:
    """A scalar-only expression of ``x`` made one of ``x`` and ``y`` (every other x a y)."""
    count = iter(range(10**9))
    return re.sub(r"\bx\b", lambda m: "y" if next(count) % 2 else "x", text)


@st.composite
def sample(draw):
    """(programs, points): the batch case's scalar expression with its ``wrt``, and its
    scalar-only one of x and y (with the Hessian); four points of its shapes."""
    n, m, k, grad_expr, _, order_expr, _, seed, wrt_mode = draw(batch_cases())
    rng = np.random.default_rng(seed)
    shapes = {name: _shape_of(dims, n, m, k) for name, dims in VARIABLES.items()}
    points = [_row_values(rng, shapes) for _ in range(POINTS)]
    inputs = list(parse(grad_expr).inputs)
    wrt = None
    if wrt_mode == "some" and inputs:
        count = min(2, len(inputs))
        wrt = [str(v) for v in rng.choice(inputs, size=count, replace=False)]
    scalar = with_y(order_expr)
    return [(grad_expr, wrt, False), (scalar, None, True)], points


def run_sample(count: int, check) -> collections.Counter:
    """``check(counts, text, points, wrt, hessian)`` on both programs of ``count`` examples
    (the points restricted to each program's variables); the counts it kept."""
    counts: collections.Counter = collections.Counter()

    @examples(count)
    @given(sample())
    def property_(case):
        programs, points = case
        for text, wrt, hessian in programs:
            names = list(parse(text).inputs)
            check(counts, text, [{n: p[n] for n in names} for p in points], wrt, hessian)

    property_()
    return counts


@pytest.mark.parametrize("target", PYTHON_TARGETS)
def test_random_programs_agree_with_the_engine(target):
    _runtime(target)
    # array programs traced at their first point, scalar ones at the default point
    counts = run_sample(
        EXAMPLES,
        lambda counts, text, at, wrt, hessian: check_program(
            counts, text, at, target, wrt, hessian, traced=not hessian
        ),
    )
    print(f"\n{target}: {dict(sorted(counts.items()))}")
    # every scalar-only program has spellings in every Python target: at least those ran
    assert counts["checked"] >= EXAMPLES, counts


# ---------------------------------------------------------------------------
# C: compiled warning-free, and (with the C generator's runner) the same numbers
# ---------------------------------------------------------------------------


def _c_module():
    try:
        from autograd_cli.core.codegen import c  # noqa: PLC0415 - written on another branch
    except ImportError:
        return None
    return c


def compile_c(code: str) -> None:
    """``cc`` with the issue's flags, as a shared object linked with ``-lm``: no output."""
    with tempfile.TemporaryDirectory() as folder:
        source = os.path.join(folder, "f.c")
        with open(source, "w", encoding="utf-8") as f:
            f.write(code)
        done = subprocess.run(
            ["cc", *C_FLAGS, "-fPIC", "-shared", source, "-o", os.path.join(folder, "f.so"), "-lm"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0 and not done.stderr.strip() and not done.stdout.strip(), (
        f"cc: {done.stderr}\n{code[:3000]}"
    )


def check_c_program(counts, text, points, wrt, hessian, cgen):
    program = parse(text)
    names = list(program.inputs)
    g = generate_or_skip(counts, program, points[0], "c", wrt=wrt, hessian=hessian)
    if g is None:
        return
    compile_c(g.code)
    counts["compiled"] += 1
    run_c = getattr(cgen, "run_c", None)
    if run_c is None:
        return
    wrt = list(wrt or names)
    results = run_c(g, points)
    assert len(results) == len(points)
    for point, out in zip(points, results):
        got = {label: np.asarray(o) for label, o in zip(g.outputs, out)}
        context = f"c {text!r} at {point} (wrt {wrt})"
        assert_agree(got, engine(program, point, wrt, hessian), context)
    counts["checked"] += 1


def test_random_programs_in_c_compile_cleanly_and_agree():
    cgen = _c_module()
    if cgen is None:
        pytest.skip("no C generator (core/codegen/c.py) in this checkout")
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc)")
    counts = run_sample(C_EXAMPLES, functools.partial(check_c_program, cgen=cgen))
    print(f"\nc: {dict(sorted(counts.items()))}")
    assert counts["compiled"] >= C_EXAMPLES, counts


@pytest.mark.parametrize(
    "text, point", [("x", {"x": 1.0}), ("x + 0", {"x": 1.0}), ("exp(2/4)", {})]
)
def test_c_of_a_program_with_no_statement_compiles_cleanly(text, point):
    """A 250-example search met 37 such programs (all constants, or an input as it is)."""
    cgen = _c_module()
    if cgen is None or shutil.which("cc") is None:
        pytest.skip("no C generator (core/codegen/c.py) or no cc")
    g = generate(parse(text), point, target="c")
    compile_c(g.code)
    assert_agree(
        dict(zip(g.outputs, cgen.run_c(g, [point])[0])),
        engine(parse(text), point, list(point), False),
        text,
    )


# ---------------------------------------------------------------------------
# Batched NumPy: one call over 1000 points
# ---------------------------------------------------------------------------


@examples(3)
@given(expressions(grammar(2, 2, 1), (), 3, scalar_only=True), st.integers(0, 2**32 - 1))
def test_batched_numpy_is_a_call_per_point(text, seed):
    """A scalar-only program's NumPy code (with the Hessian) on arrays of 1000 points: the
    same as 1000 calls with numbers, and as the engine point by point."""
    text = with_y(text)
    program = parse(text)
    names = list(program.inputs)
    g = generate(program, hessian=True)
    assert g.batched
    function = load(g)
    rng = np.random.default_rng(seed)
    columns = {n: rng.normal(size=ROWS) for n in names}
    for column in columns.values():  # zeros, ties and kinks too
        column[::7] = rng.integers(-2, 3, size=column[::7].size)
    batched = call(function, g, columns)
    for label, out in batched.items():
        assert out.shape == ((ROWS,) if names else ()), label
    if not names:
        return
    points = [{n: float(columns[n][i]) for n in names} for i in range(ROWS)]
    alone = [call(function, g, point) for point in points]
    rows = [engine(program, point, names, True) for point in points]
    stacked = {label: np.stack([one[label] for one in alone]) for label in g.outputs}
    assert_agree(batched, stacked, f"{text!r}: batched vs one call per point")
    stacked = {label: np.stack([row[label] for row in rows]) for label in g.outputs}
    assert_agree(batched, stacked, f"{text!r}: batched vs the engine per point")


# ---------------------------------------------------------------------------
# The conventions at their edge points
# ---------------------------------------------------------------------------

INF, NAN = np.inf, np.nan

EDGES = [
    # (expression, point, value, gradient)
    ("abs(x)", {"x": 0.0}, 0.0, {"x": 0.0}),
    ("relu(x)", {"x": 0.0}, 0.0, {"x": 0.0}),
    ("sqrt(x)", {"x": 0.0}, 0.0, {"x": INF}),
    ("max(x, y)", {"x": 1.0, "y": 1.0}, 1.0, {"x": 0.5, "y": 0.5}),
    ("min(x, y)", {"x": -2.0, "y": -2.0}, -2.0, {"x": 0.5, "y": 0.5}),
    ("maximum(x, y)", {"x": 1.0, "y": 1.0}, 1.0, {"x": 0.5, "y": 0.5}),
    ("x**0", {"x": 0.0}, 1.0, {"x": 0.0}),
    ("where(x > 0, sqrt(x), 0)", {"x": -1.0}, 0.0, {"x": 0.0}),
    ("where(x > 0, log(x), x)", {"x": 0.0}, 0.0, {"x": 1.0}),
    ("1/x", {"x": 0.0}, INF, {"x": -INF}),
    ("log(x)", {"x": -1.0}, NAN, {"x": -1.0}),
    ("sign(x) + floor(x)", {"x": 1.5}, 2.0, {"x": 0.0}),
    ("x * y", {"x": INF, "y": 0.0}, NAN, {"x": 0.0, "y": INF}),
]


@pytest.mark.parametrize("target", PYTHON_TARGETS)
@pytest.mark.parametrize("text, point, value, gradient", EDGES, ids=[e[0] for e in EDGES])
def test_conventions_at_their_edge_points(target, text, point, value, gradient):
    """The value and gradient the conventions give, from the gradient's code and from the
    Hessian's (whose first outputs are the same), and the engine's; batched NumPy too."""
    _runtime(target)
    program = parse(text)
    names = list(program.inputs)
    want = {"value": np.asarray(value)} | {f"grad_{n}": np.asarray(gradient[n]) for n in names}
    for hessian in (False, True):
        g = generate(program, point, target=target, hessian=hessian)
        got = call(load(g), g, point)
        assert_agree({k: got[k] for k in want}, want, f"{target} {text!r} at {point}")
        assert_agree(want, engine(program, point, names, False), f"{text!r}: the engine")
    if target == "numpy":  # batched: the edge point beside ordinary ones, each as alone
        batch = {n: np.array([0.5 + i, v, -0.25 - i]) for i, (n, v) in enumerate(point.items())}
        g = generate(program, target="numpy")
        assert g.batched
        got = call(load(g), g, batch)
        assert_agree({k: v[1] for k, v in got.items()}, want, f"{text!r} batched")


HESSIAN_EDGES = [
    ("abs(x)", {"x": 0.0}),
    ("sqrt(x)", {"x": 0.0}),
    ("max(x, y)", {"x": 1.0, "y": 1.0}),
    ("x**0", {"x": 0.0}),
    ("x**y", {"x": 0.0, "y": 2.0}),
    ("1/x", {"x": 0.0}),
    ("where(x > 0, x**1.5, 0)", {"x": 0.0}),  # nan, in both: the mend is of g*d, not dg
    ("where(x > 0, sqrt(x)*x, 0)", {"x": 0.0}),
    ("where(x > 0, sqrt(x), 0)", {"x": -1.0}),
    ("where(x > 0, sqrt(x), 0)", {"x": 0.0}),
    ("where(x > 0, log(x), x)", {"x": 0.0}),
    ("where(x > 0, x**1.5, 0)", {"x": -1.0}),
    ("relu(sqrt(x)) * sqrt(x)", {"x": 0.0}),
    ("abs(x)**0.5 * x", {"x": 0.0}),
    ("1 / log(x)", {"x": 0.0}),
    ("1 / (y + log(x))", {"x": 0.0, "y": 2.0}),
    ("exp(-log(x)**2)", {"x": 0.0}),
    ("min(1/x, 2)", {"x": 0.0}),
    ("min(x / (y - x), y)", {"x": 2.0, "y": 2.0}),
    ("abs(1/x)", {"x": 0.0}),
    ("abs(1 / (x + y))", {"x": -1.0, "y": 1.0}),
    ("abs(x)", {"x": np.inf}),
    ("sign(x) * x", {"x": 2.0}),
]


@pytest.mark.parametrize("target", PYTHON_TARGETS)
@pytest.mark.parametrize("text, point", HESSIAN_EDGES)
def test_hessians_at_edge_points_are_the_engines(target, text, point):
    _runtime(target)
    program = parse(text)
    g = generate(program, point, target=target, hessian=True)
    names = list(program.inputs)
    assert_agree(call(load(g), g, point), engine(program, point, names, True), f"{text!r}")


# ---------------------------------------------------------------------------
# The code itself: straight-line, shared, pruned, folded
# ---------------------------------------------------------------------------


def _body(code: str) -> str:
    """The generated function without the header (which quotes the expression)."""
    return code[code.index("\ndef ") :]


def _statements(code: str) -> list[str]:
    """The function body's assignments (``t3 = ...``)."""
    return [line.strip() for line in code.splitlines() if re.match(r"\s+_*t\d+ = ", line)]


def _agrees_at(g, text: str, point: dict) -> None:
    program = parse(text)
    assert_agree(call(load(g), g, point), engine(program, point, g.wrt, g.hessian), text)


def test_a_shared_subexpression_is_computed_once():
    for text in ("y = sin(x); y*y + y", "sin(x)*sin(x) + sin(x)"):  # bound, or written 3 times
        g = generate(parse(text), {"x": 0.3})
        body = _body(g.code)
        assert body.count("np.sin(") == 1 and body.count("np.cos(") == 1, g.code
        _agrees_at(g, text, {"x": -1.25})
    # the Hessian's code too: sin(x) and cos(x) once each, however many times the rules use them
    g = generate(parse("y = sin(x); y*y + y"), {"x": 0.3}, hessian=True)
    body = _body(g.code)
    assert body.count("np.sin(") == 1 and body.count("np.cos(") == 1, g.code
    _agrees_at(g, "y = sin(x); y*y + y", {"x": 2.0})


def test_nodes_that_do_not_depend_on_wrt_have_no_backward():
    point = {"x": 1.0, "y": 2.0, "z": 3.0}
    g = generate(parse("x*y + sin(z)"), point, wrt="x")
    assert g.outputs == ["value", "grad_x"]
    body = _body(g.code)
    assert "sin(" in body and "cos(" not in body, g.code
    _agrees_at(g, "x*y + sin(z)", {"x": 0.5, "y": -2.0, "z": 1.0})
    # with respect to z: its cosine is there
    assert "cos(" in _body(generate(parse("x*y + sin(z)"), point, wrt="z").code)
    # a node that does not reach the output is not written at all
    g = generate(parse("a = exp(x); sin(x)"), {"x": 1.0})
    assert "exp(" not in _body(g.code), g.code


def test_constants_are_folded():
    g = generate(parse("2*3*x"), {"x": 1.0})
    body = _statements(g.code)
    assert not any(re.search(r"\b2\.0\b.*\b3\.0\b", line) for line in body), g.code
    assert "6.0" in body[0], g.code
    _agrees_at(g, "2*3*x", {"x": -0.75})
    text = "sin(2) * x + (exp(0) + log(1 + 2**2))"
    g = generate(parse(text), {"x": 1.0})
    body = _statements(g.code)
    assert not any(name in line for line in body for name in ("sin", "exp", "log")), g.code
    assert len(body) <= 2, body  # one product and one sum
    _agrees_at(g, text, {"x": 1.5})
