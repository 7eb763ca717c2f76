"""Property tests: random scalar expressions, the engine against SymPy.

Hypothesis builds an expression twice in parallel, as text in the tool's language
and as a SymPy expression (never by evaluating the text).  The text is parsed with
``parse``, evaluated and differentiated by the engine; SymPy differentiates its own
expression symbolically, and both are evaluated in float64 at random points.

A second property parses SymPy's own printing of an expression (minimal
parentheses, Python precedence: ``-x**2``, ``x**-1``, ``a/b*c``) and of its
derivatives, which checks the grammar's precedence and associativity.
"""

from __future__ import annotations

import math
import os
import re

import numpy as np
import pytest

sympy = pytest.importorskip("sympy")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from autograd_cli.core import grad, topological_nodes  # noqa: E402
from autograd_cli.core.recording import evaluate  # noqa: E402
from autograd_cli.grammar import parse  # noqa: E402

NAMES = ("x", "y", "z")
SYMBOLS = sympy.symbols(NAMES, real=True)
SYM = dict(zip(NAMES, SYMBOLS))
RTOL = 1e-9
# A longer search: SYMPY_PROPERTY_EXAMPLES=5000 python -m pytest tests/test_sympy_property.py
EXAMPLES = int(os.environ.get("SYMPY_PROPERTY_EXAMPLES", "100"))

# ---------------------------------------------------------------------------
# Expressions as (text, sympy) pairs
# ---------------------------------------------------------------------------

CONSTANTS = [
    ("1", sympy.Integer(1)),
    ("2", sympy.Integer(2)),
    ("3", sympy.Integer(3)),
    ("0.5", sympy.Rational(1, 2)),
    ("2.5", sympy.Rational(5, 2)),
    ("1e-1", sympy.Rational(1, 10)),
    ("pi", sympy.pi),
]

leaves = st.one_of(
    st.sampled_from([(n, SYM[n]) for n in NAMES]),
    st.sampled_from(CONSTANTS),
)


def _sigmoid(a):
    return 1 / (1 + sympy.exp(-a))


# name -> (text template, sympy builder)
UNARY = {
    "sin": ("sin({})", sympy.sin),
    "cos": ("cos({})", sympy.cos),
    "exp": ("exp({})", sympy.exp),
    "tanh": ("tanh({})", sympy.tanh),
    "atan": ("atan({})", sympy.atan),
    "sigmoid": ("sigmoid({})", _sigmoid),
    "softplus": ("softplus({})", lambda a: sympy.log(1 + sympy.exp(a))),
    "logabs": ("log(abs({}) + 1)", lambda a: sympy.log(sympy.Abs(a) + 1)),
    "log2abs": ("log2(1 + abs({}))", lambda a: sympy.log(1 + sympy.Abs(a), 2)),
    "sqrt": ("sqrt(({0})*({0}) + 1)", lambda a: sympy.sqrt(a * a + 1)),
    "abs": ("abs({})", sympy.Abs),
    "neg": ("-({})", lambda a: -a),
    "sinh": ("sinh({})", sympy.sinh),
}

BINARY = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
}


def _extend(children):
    unary = st.tuples(st.sampled_from(sorted(UNARY)), children).map(
        lambda t: (UNARY[t[0]][0].format(t[1][0]), UNARY[t[0]][1](t[1][1]))
    )
    binary = st.tuples(st.sampled_from(sorted(BINARY)), children, children).map(
        lambda t: (f"({t[1][0]}) {t[0]} ({t[2][0]})", BINARY[t[0]](t[1][1], t[2][1]))
    )
    power = st.tuples(
        children, st.sampled_from([2, 3, -1, 0, 1]), st.sampled_from(["**", "^"])
    ).map(
        lambda t: (
            f"({t[0][0]}){t[2]}{t[1]}" if t[1] >= 0 else f"({t[0][0]}){t[2]}({t[1]})",
            t[0][1] ** t[1],
        )
    )
    return st.one_of(unary, binary, power)


expressions = st.recursive(leaves, _extend, max_leaves=8)
# 0, or a magnitude in [0.01, 3] of either sign: far from float64's underflow, where
# a product like x*y/x loses everything in any float64 evaluation order.
points = st.one_of(
    st.just(0.0),
    st.tuples(st.floats(min_value=0.01, max_value=3.0), st.sampled_from([-1.0, 1.0])).map(
        lambda t: t[0] * t[1]
    ),
)


# ---------------------------------------------------------------------------
# Evaluation on both sides
# ---------------------------------------------------------------------------


def _sympy_numbers(expr, values):
    """Value and gradient (x, y, z) of a SymPy expression in float64, via lambdify."""
    derivatives = [sympy.diff(expr, s) for s in SYMBOLS]
    # sign(u)' = 2 DiracDelta(u): zero wherever it is defined, as the engine has it.
    # SymPy leaves d/dx sign(x/y) unevaluated; it is zero wherever defined too.
    derivatives = [
        d.replace(sympy.DiracDelta, lambda *args: sympy.Integer(0)).replace(
            lambda e: isinstance(e, sympy.Derivative) and isinstance(e.expr, sympy.sign),
            lambda e: sympy.Integer(0),
        )
        for d in derivatives
    ]
    if any(
        e.has(sympy.zoo, sympy.oo, sympy.nan, sympy.Derivative, sympy.AccumBounds)
        for e in [expr] + derivatives
    ):
        # 1/(x - x) folds to zoo, atan(zoo) to AccumBounds: nothing to compare
        return [math.nan] * 4
    try:
        f = sympy.lambdify(SYMBOLS, [expr] + derivatives, modules="numpy")
    except NotImplementedError:  # some other degenerate form NumPy cannot print
        return [math.nan] * 4
    with np.errstate(all="ignore"):  # NumPy scalars: 1/0 is inf, not ZeroDivisionError
        out = f(*[np.float64(values[n]) for n in NAMES])
    return [float(v) if np.isrealobj(v) else math.nan for v in out]


def _engine_numbers(text, values):
    program = parse(text)
    used = [n for n in NAMES if n in program.inputs]
    ev = evaluate(program, {n: values[n] for n in used}, requires_grad=used)
    value = ev.output.item()
    grads = dict.fromkeys(NAMES, 0.0)
    # The largest intermediate magnitude bounds the rounding error of float64 sums
    # that cancel, (x + y) - x: the tolerance is RTOL relative to it, not to the result.
    scale = abs(value)
    finite = math.isfinite(value)
    for node in topological_nodes([ev.output]):
        for t in node.inputs:
            m = float(np.max(np.abs(t.numpy())))
            finite = finite and math.isfinite(m)
            scale = max(scale, m)
    if ev.output.requires_grad:
        g = grad(ev.output, [ev.leaves[n] for n in used], allow_unused=True)
        for n, gi in zip(used, g):
            grads[n] = 0.0 if gi is None else gi.item()
    return value, [grads[n] for n in NAMES], scale, finite


def _close(actual, expected, scale):
    return abs(actual - expected) <= RTOL * max(abs(expected), 1.0, scale)


def _check(text, expr, values, skip=assume):
    ref = _sympy_numbers(expr, values)
    skip(all(math.isfinite(r) and abs(r) < 1e12 for r in ref))
    value, grads, scale, finite = _engine_numbers(text, values)
    # SymPy simplifies x/x to 1; in float64 the engine's x/x at 0 is nan.  Compare only
    # where every subexpression the engine computes is finite.
    skip(finite)
    assert _close(value, ref[0], scale), (text, values, value, ref[0])
    gscale = scale * max(1.0, *[abs(r) for r in ref[1:]])
    for n, g, r in zip(NAMES, grads, ref[1:]):
        assert _close(g, r, gscale), (text, values, n, g, r)


# ---------------------------------------------------------------------------
# The properties
# ---------------------------------------------------------------------------


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(expressions, points, points, points)
def test_value_and_gradient_match_sympy(pair, x, y, z):
    text, expr = pair
    _check(text, expr, {"x": x, "y": y, "z": z})


def _to_language(expr) -> str:
    """SymPy's own printing, with SymPy's names swapped for the language's."""
    text = sympy.sstr(expr)
    text = text.replace("Abs(", "abs(")
    text = re.sub(r"\bE\b", "e", text)
    return text


PRINTABLE = ("zoo", "oo", "nan", "I", "Heaviside", "Piecewise", "DiracDelta", "re(", "im(")


@settings(
    max_examples=max(1, EXAMPLES // 2),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(expressions, points, points, points)
def test_sympy_printing_parses_to_the_same_function(pair, x, y, z):
    _, expr = pair
    text = _to_language(expr)
    assume(not any(bad in text for bad in PRINTABLE))
    values = {"x": x, "y": y, "z": z}
    _check(text, expr, values)
    # SymPy's derivative, printed and parsed, evaluated by the engine, equals the
    # engine's own gradient of the expression.
    for s in SYMBOLS:
        d = sympy.diff(expr, s)
        d_text = _to_language(d)
        assume(not any(bad in d_text for bad in PRINTABLE + ("sign(0", "Derivative")))
        _check(d_text, d, values)


# A few fixed cases, so the precedence rules are pinned even without hypothesis luck.
@pytest.mark.parametrize(
    "text,expr",
    [
        ("-x**2", -(SYM["x"] ** 2)),
        ("-x^2", -(SYM["x"] ** 2)),
        ("2**-1 * x", SYM["x"] / 2),
        ("x**-y", SYM["x"] ** -SYM["y"]),
        ("x**y**2", SYM["x"] ** (SYM["y"] ** 2)),
        ("x/y/z", SYM["x"] / SYM["y"] / SYM["z"]),
        ("x - y - z", SYM["x"] - SYM["y"] - SYM["z"]),
        ("x/y*z", SYM["x"] / SYM["y"] * SYM["z"]),
        ("-x*y", -SYM["x"] * SYM["y"]),
        ("1/x**2", 1 / SYM["x"] ** 2),
        (
            "sigmoid(x)*tanh(y) + sqrt(z*z + 1)",
            _sigmoid(SYM["x"]) * sympy.tanh(SYM["y"]) + sympy.sqrt(SYM["z"] ** 2 + 1),
        ),
        (
            "log(abs(x*y) + 1)/exp(z)",
            sympy.log(sympy.Abs(SYM["x"] * SYM["y"]) + 1) / sympy.exp(SYM["z"]),
        ),
    ],
)
def test_fixed_expressions(text, expr):
    def finite(ok):
        assert ok

    for values in ({"x": 1.3, "y": 0.7, "z": -0.4}, {"x": 2.1, "y": -1.1, "z": 0.9}):
        _check(text, expr, values, skip=finite)
