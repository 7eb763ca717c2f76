"""taylor, propagate, minimize, solve, critical (issue 14), each against an independent oracle.

- taylor: SymPy's series and derivatives; the polynomial parses back and evaluates to
  SymPy's truncated series.
- propagate: the `uncertainties` package (first order), closed forms, and the Monte Carlo
  mean and standard deviation within their own statistical error.
- minimize: scipy.optimize.minimize from the same start on Rosenbrock, Himmelblau, Beale and
  a convex quadratic in 100 dimensions; solve: numpy's polynomial roots and a closed form;
  critical: the kinds of known stationary points.
Each command also through the console script: SPEC's JSON keys and the exit codes.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest
import sympy as sp

from autograd_cli.core.errors import InputError
from autograd_cli.core.optimize import classify, critical, minimize, solve
from autograd_cli.core.recording import evaluate
from autograd_cli.core.taylor import taylor
from autograd_cli.core.uncertainty import propagate
from autograd_cli.grammar import parse

X, Y = sp.symbols("x y")

# ---- taylor ----------------------------------------------------------------------------------

ONE_VARIABLE = [
    ("exp(sin(x))", sp.exp(sp.sin(X)), 0.0),
    ("log(1 + x)", sp.log(1 + X), 0.0),
    ("sqrt(x)", sp.sqrt(X), 4.0),
    ("tanh(x)*cos(2*x)", sp.tanh(X) * sp.cos(2 * X), 0.3),
    ("1/(1 - x)", 1 / (1 - X), -0.5),
    ("x**5 - 3*x**2", X**5 - 3 * X**2, 2.0),
]


@pytest.mark.parametrize("text, f, a", ONE_VARIABLE)
def test_taylor_one_variable_matches_sympy(text, f, a):
    order = 6
    r = taylor(parse(text), {"x": a}, order=order)
    want = [float(sp.diff(f, X, k).subs(X, a)) / math.factorial(k) for k in range(order + 1)]
    assert r.coefficients == pytest.approx(want, rel=1e-10, abs=1e-12)
    assert r.at == {"x": a} and r.order == order
    # the polynomial parses back and is SymPy's truncated series at a nearby point
    series = sp.series(f, X, a, order + 1).removeO()
    point = a + 0.05
    mine = float(evaluate(parse(r.polynomial), {"x": point}).output.data)
    assert mine == pytest.approx(float(series.subs(X, point)), rel=1e-10, abs=1e-12)


def test_taylor_several_variables_matches_sympy():
    f = sp.exp(X) * sp.sin(Y) + X * Y**2
    r = taylor(parse("exp(x)*sin(y) + x*y**2"), {"x": 0.5, "y": 1.0}, order=3)
    at = {X: 0.5, Y: 1.0}
    grad = [float(sp.diff(f, v).subs(at)) for v in (X, Y)]
    hess = [[float(sp.diff(f, u, v).subs(at)) / 2 for v in (X, Y)] for u in (X, Y)]
    third = [
        [[float(sp.diff(f, u, v, w).subs(at)) / 6 for w in (X, Y)] for v in (X, Y)] for u in (X, Y)
    ]
    assert r.coefficients["0"] == pytest.approx(float(f.subs(at)))
    assert r.coefficients["1"] == pytest.approx(grad, rel=1e-12)
    assert np.allclose(r.coefficients["2"], hess, rtol=1e-12)
    assert np.allclose(r.coefficients["3"], third, rtol=1e-12)
    # the multivariate polynomial is the full degree-3 expansion
    dx, dy = 0.03, -0.02
    exact = sum(
        float(sp.diff(f, X, i, Y, k - i).subs(at))
        / (math.factorial(i) * math.factorial(k - i))
        * dx**i
        * dy ** (k - i)
        for k in range(4)
        for i in range(k + 1)
    )
    mine = float(evaluate(parse(r.polynomial), {"x": 0.5 + dx, "y": 1.0 + dy}).output.data)
    assert mine == pytest.approx(exact, rel=1e-12)


def test_taylor_remainder_and_errors(cli):
    r = taylor(parse("log(x)"), {"x": 1.0}, order=3, at={"x": 1.1})
    rem = r.remainder
    assert rem["value"] == pytest.approx(math.log(1.1))
    assert rem["polynomial"] == pytest.approx(0.1 - 0.01 / 2 + 0.001 / 3)
    assert rem["remainder"] == pytest.approx(rem["value"] - rem["polynomial"])
    r = cli("taylor", "sum(x)", "--x", "[1, 2]", "--json")
    assert r.code == 2 and "scalar variables" in r.json["error"]["message"]
    r = cli("taylor", "x*y", "--x", "1", "--y", "1", "--order", "3", "--json")
    assert r.code == 0 and set(r.json["coefficients"]) == {"0", "1", "2", "3"}


# ---- propagate -------------------------------------------------------------------------------


def test_propagate_matches_the_uncertainties_package():
    unc = pytest.importorskip("uncertainties")
    umath = pytest.importorskip("uncertainties.umath")
    g, t = unc.ufloat(9.81, 0.02), unc.ufloat(1.5, 0.01)
    want = g * t**2 / 2
    r = propagate(parse("g*t**2/2"), {"g": 9.81, "t": 1.5}, {"g": 0.02, "t": 0.01})
    assert r.value == pytest.approx(want.nominal_value, rel=1e-14)
    assert r.uncertainty == pytest.approx(want.std_dev, rel=1e-12)
    shares = {k: b["share"] for k, b in r.budget.items()}
    assert sum(shares.values()) == pytest.approx(100.0)
    assert r.budget["t"]["sensitivity"] == pytest.approx(9.81 * 1.5)
    # correlated inputs, and a non-linear model
    a, b = unc.correlated_values_norm([(2.0, 0.1), (3.0, 0.2)], [[1, 0.4], [0.4, 1]])
    want = umath.sin(a) * umath.exp(b / 3)
    r = propagate(
        parse("sin(a)*exp(b/3)"),
        {"a": 2.0, "b": 3.0},
        {"a": 0.1, "b": 0.2},
        correlations={("a", "b"): 0.4},
    )
    assert r.uncertainty == pytest.approx(want.std_dev, rel=1e-12)
    assert any("correlated" in w for w in r.warnings)


def test_propagate_closed_forms_and_second_order():
    # linear: exact, no second-order term
    r = propagate(parse("3*x - 4*y"), {"x": 1.0, "y": 2.0}, {"x": 0.1, "y": 0.2})
    assert r.uncertainty == pytest.approx(math.hypot(0.3, 0.8)) and r.second_order == 0
    # x**2 with x ~ N(mu, s): Var = 4 mu^2 s^2 + 2 s^4; the second-order term is 2 s^4
    r = propagate(parse("x**2"), {"x": 1.0}, {"x": 0.5})
    assert r.uncertainty == pytest.approx(1.0) and r.second_order == pytest.approx(2 * 0.5**4)
    assert any("second-order term" in w for w in r.warnings)
    # a vector input with a covariance matrix: Var(sum(x)) = sum of all entries
    cov = [[0.04, 0.01], [0.01, 0.09]]
    r = propagate(parse("sum(x)"), {"x": [1.0, 2.0]}, {"x": cov})
    assert r.uncertainty == pytest.approx(math.sqrt(0.04 + 0.09 + 0.02))


@pytest.mark.parametrize("u, percent", [(0.3, 4.5), (0.1, None)])
def test_propagate_warns_from_a_second_order_term_of_one_percent(u, percent):
    # x**2 at 1: the first-order variance is 4 u**2, the second-order term 2 u**4 (u**2 / 2
    # of it): 4.5 % at u = 0.3 warns, 0.5 % at u = 0.1 does not
    r = propagate(parse("x**2"), {"x": 1.0}, {"x": u})
    assert r.second_order == pytest.approx(2 * u**4)
    linear = [w for w in r.warnings if "second-order term" in w]
    if percent is None:
        assert not linear, r.warnings
    else:
        assert linear == [
            f"the second-order term is {percent:g} % of the first-order variance: the model "
            "is not linear over the inputs' uncertainty (compare with mc)"
        ]


@pytest.mark.parametrize(
    "text, values, uncertainties, correlations",
    [
        # each pair's r is between -1 and 1, the three together are impossible
        (
            "a + b + c",
            {"a": 1.0, "b": 2.0, "c": 3.0},
            {"a": 0.1, "b": 0.1, "c": 0.1},
            {("a", "b"): 0.9, ("b", "c"): 0.9, ("a", "c"): -0.9},
        ),
        # a symmetric matrix with a negative eigenvalue (-1)
        ("sum(x)", {"x": [1.0, 2.0]}, {"x": [[1.0, 2.0], [2.0, 1.0]]}, None),
    ],
)
def test_propagate_refuses_a_covariance_that_is_not_positive_semidefinite(
    text, values, uncertainties, correlations
):
    with pytest.raises(InputError, match="not positive semidefinite"):
        propagate(parse(text), values, uncertainties, correlations=correlations)


def test_propagate_command_refuses_impossible_correlations(cli):
    argv = ["propagate", "a + b + c", "--a", "1+-0.1", "--b", "2+-0.1", "--c", "3+-0.1"]
    corr = ["--corr", "a,b=0.9", "--corr", "b,c=0.9", "--corr", "a,c=-0.9"]
    r = cli(*argv, *corr, "--json")
    assert r.code == 2 and r.json["error"]["kind"] == "input", r.out
    assert "not positive semidefinite" in r.json["error"]["message"]
    r = cli(*argv, *corr[:2], "--json")  # one of them alone: possible
    assert r.code == 0 and r.json["uncertainty"] > 0, r.out


def test_propagate_an_overflowing_variance_is_inf_with_a_warning_not_numpys():
    # u = 1e200: u**2 overflows, so u(y) is inf (IEEE) and the second-order term, whose
    # matrix products meet inf * 0, is nan.  NumPy's own RuntimeWarnings ("overflow
    # encountered in square") are not let out of the library; the result says it.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = propagate(
            parse("a*b"),
            {"a": 1.0, "b": 1.0},
            {"a": 1e200, "b": 1.0},
            correlations={("a", "b"): 0.3},
        )
    assert r.uncertainty == math.inf and math.isnan(r.second_order)
    assert any("a variance overflows the float range" in w for w in r.warnings)
    r = propagate(parse("a*b"), {"a": 1.0, "b": 1.0}, {"a": 1e100, "b": 1.0})
    assert not any("overflows" in w for w in r.warnings)


def test_propagate_accepts_a_singular_positive_semidefinite_covariance():
    # fully correlated inputs: eigenvalues 0 (to rounding) and 0.05
    r = propagate(
        parse("a - b"), {"a": 1.0, "b": 2.0}, {"a": 0.1, "b": 0.2}, correlations={("a", "b"): 1.0}
    )
    assert r.uncertainty == pytest.approx(0.1)
    r = propagate(parse("sum(x)"), {"x": [1.0, 2.0]}, {"x": [[1.0, 1.0], [1.0, 1.0]]})
    assert r.uncertainty == pytest.approx(2.0)
    # large uncertainties: the smallest eigenvalue is -1.2e-10 by rounding, far inside the
    # tolerance, which scales with the covariance (1e-12 of its largest entry)
    r = propagate(
        parse("a - b"), {"a": 1.0, "b": 2.0}, {"a": 1e3, "b": 3.3e3}, correlations={("a", "b"): 1.0}
    )
    assert r.uncertainty == pytest.approx(2.3e3)


def test_propagate_refuses_an_uncertainty_of_the_wrong_shape():
    # a 2x3 matrix for a 2-vector is neither one uncertainty per entry nor a 2x2 covariance
    with pytest.raises(InputError, match=r"has shape \[2, 3\]"):
        propagate(parse("sum(x)"), {"x": [1.0, 2.0]}, {"x": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]})


def test_propagate_monte_carlo_agrees_within_its_statistical_error():
    n = 200_000
    r = propagate(parse("g*t**2/2"), {"g": 9.81, "t": 1.5}, {"g": 0.02, "t": 0.01}, mc=n, seed=7)
    mc = r.mc
    assert mc["draws"] == n
    assert abs(mc["mean"] - r.value) < 5 * r.uncertainty / math.sqrt(n) + r.uncertainty**2
    assert abs(mc["std"] - r.uncertainty) < 5 * r.uncertainty / math.sqrt(2 * n) + 1e-3
    lo, hi = mc["interval"]
    assert lo < r.value < hi and hi - lo == pytest.approx(2 * 1.96 * r.uncertainty, rel=0.02)


# ---- minimize, solve, critical ---------------------------------------------------------------

PROBLEMS = [
    ("rosenbrock", "(1-x)**2 + 100*(y-x**2)**2", {"x": -1.2, "y": 1.0}),
    ("himmelblau", "(x**2+y-11)**2 + (x+y**2-7)**2", {"x": 0.0, "y": 0.0}),
    (
        "beale",
        "(1.5 - x + x*y)**2 + (2.25 - x + x*y**2)**2 + (2.625 - x + x*y**3)**2",
        {"x": 1.0, "y": 1.0},
    ),
]


def _numpy_fn(name):
    return {
        "rosenbrock": lambda v: (1 - v[0]) ** 2 + 100 * (v[1] - v[0] ** 2) ** 2,
        "himmelblau": lambda v: (v[0] ** 2 + v[1] - 11) ** 2 + (v[0] + v[1] ** 2 - 7) ** 2,
        "beale": lambda v: (
            (1.5 - v[0] + v[0] * v[1]) ** 2
            + (2.25 - v[0] + v[0] * v[1] ** 2) ** 2
            + (2.625 - v[0] + v[0] * v[1] ** 3) ** 2
        ),
    }[name]


@pytest.mark.parametrize("method", ["newton", "bfgs"])
@pytest.mark.parametrize("name, text, start", PROBLEMS, ids=[p[0] for p in PROBLEMS])
def test_minimize_agrees_with_scipy(name, text, start, method):
    optimize = pytest.importorskip("scipy.optimize")
    r = minimize(parse(text), start, method=method)
    ref = optimize.minimize(_numpy_fn(name), [start["x"], start["y"]], method="BFGS", tol=1e-12)
    assert r.converged, r.message
    assert [r.x["x"], r.x["y"]] == pytest.approx(list(ref.x), abs=1e-5)
    assert r.value == pytest.approx(ref.fun, abs=1e-10)


@pytest.mark.parametrize(
    "text, start, want",
    [
        # a tilted bowl (Hessian [[2, 1], [1, 8]]): gradient descent zigzags, but converges
        ("(x - 1)**2 + 4*(y + 2)**2 + (x - 1)*(y + 2)", {"x": 0.0, "y": 0.0}, [1.0, -2.0]),
        ("(x - 3)**2 + (y + 1)**2", {"x": -2.0, "y": 5.0}, [3.0, -1.0]),
    ],
)
def test_minimize_by_gradient_descent_converges_on_a_bowl(cli, text, start, want):
    r = minimize(parse(text), start, method="gd")
    assert r.converged and r.method == "gd", r.message
    assert [r.x["x"], r.x["y"]] == pytest.approx(want, abs=1e-8)
    assert 1 <= r.iterations <= 200, r.iterations
    values = [row["value"] for row in r.trace]
    assert all(b < a for a, b in zip(values, values[1:])), values  # each step goes down
    argv = [f"--{k}={v}" for k, v in start.items()]
    doc = cli("minimize", text, *argv, "--method", "gd", "--json").json
    assert doc["converged"] is True and doc["method"] == "gd", doc
    assert [doc["x"]["x"], doc["x"]["y"]] == pytest.approx(want, abs=1e-8)


def test_minimize_a_convex_quadratic_in_100_dimensions():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(100, 100))
    q = a @ a.T + 100 * np.eye(100)
    b = rng.normal(size=100)
    values = {"x": np.zeros(100).tolist(), "Q": q.tolist(), "b": b.tolist()}
    r = minimize(parse("x @ Q @ x / 2 - b @ x"), values, wrt=["x"])
    assert r.converged and r.iterations == 1  # Newton: one exact step
    assert np.allclose(r.x["x"], np.linalg.solve(q, b), atol=1e-12)
    r = minimize(parse("x @ Q @ x / 2 - b @ x"), values, wrt=["x"], method="bfgs")
    assert r.converged and np.allclose(r.x["x"], np.linalg.solve(q, b), atol=1e-8)


def test_minimize_bounds_and_non_convergence():
    r = minimize(parse("(x-3)**2 + (y+1)**2"), {"x": 0, "y": 0}, bounds={"x": (-1, 2)})
    assert r.converged and r.x == {"x": 2.0, "y": pytest.approx(-1.0)}
    r = minimize(parse("x"), {"x": 1.0}, max_iter=5)
    assert not r.converged and "no convergence in 5 iterations" in r.message


def test_solve_one_equation_and_a_system():
    r = solve(parse("x**3 - 2*x - 5"), {"x": 2})
    real = [z.real for z in np.roots([1, 0, -2, -5]) if abs(z.imag) < 1e-12]
    assert r.converged and r.x["x"] == pytest.approx(real[0], rel=1e-14)
    assert r.residual < 1e-12 and r.grad["x"] == pytest.approx(3 * r.x["x"] ** 2 - 2)
    r = solve(parse("x**2 + y**2 - 4; x - y"), {"x": 1, "y": 0})
    assert r.converged and r.x["x"] == pytest.approx(math.sqrt(2)) == r.x["y"]
    r = solve(parse("A @ x - b"), {"x": [0, 0], "A": [[2, 1], [1, 3]], "b": [1, 2]}, wrt="x")
    assert np.allclose(r.x["x"], np.linalg.solve([[2, 1], [1, 3]], [1, 2]))
    r = solve(parse("x**2 + 1"), {"x": 1.0})
    assert not r.converged


@pytest.mark.parametrize(
    "text, start, kind, point",
    [
        ("x**2 - y**2", {"x": 0.3, "y": -0.2}, "saddle", {"x": 0.0, "y": 0.0}),
        ("x**3 - 3*x + y**2", {"x": 0.8, "y": 0.1}, "minimum", {"x": 1.0, "y": 0.0}),
        ("x**3 - 3*x + y**2", {"x": -0.8, "y": 0.1}, "saddle", {"x": -1.0, "y": 0.0}),
        ("-(x**2) - (y - 1)**2", {"x": 2.0, "y": 3.0}, "maximum", {"x": 0.0, "y": 1.0}),
        ("x**4 + y**2", {"x": 1.0, "y": 1.0}, "degenerate", None),
    ],
)
def test_critical_classifies(text, start, kind, point):
    r = critical(parse(text), start)
    assert r.converged and r.kind == kind
    if point is not None:
        assert r.x == {k: pytest.approx(v, abs=1e-9) for k, v in point.items()}
    assert classify([1.0, 2.0]) == "minimum" and classify([0.0, 1.0]) == "degenerate"


# ---- the commands, through the console script ------------------------------------------------


def _run(*args):
    script = [sys.executable, "-m", "autograd_cli", *args]
    r = subprocess.run(script, capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


def test_commands_spec_json_keys():
    code, out, err = _run("taylor", "exp(sin(x))", "--x", "0", "--order", "6", "--json")
    doc = json.loads(out)
    assert code == 0 and {"at", "order", "coefficients", "polynomial"} <= set(doc)
    assert doc["coefficients"][:3] == [1.0, 1.0, 0.5] and doc["at"] == {"x": 0.0}
    code, out, err = _run(
        "propagate",
        "g*t**2/2",
        "--g",
        "9.81+-0.02",
        "--t",
        "1.5±0.01",
        "--mc",
        "20000",
        "--seed",
        "1",
        "--json",
    )
    doc = json.loads(out)
    assert code == 0 and {"value", "uncertainty", "budget", "second_order", "mc"} <= set(doc)
    assert set(doc["budget"]["g"]) == {
        "value",
        "uncertainty",
        "sensitivity",
        "contribution",
        "share",
    }
    assert set(doc["mc"]) >= {"mean", "std", "interval"}
    for command, text, extra in [
        ("minimize", "(1-x)**2 + 100*(y-x**2)**2", {"x": "-1", "y": "1"}),
        ("solve", "x**2 + y**2 - 4; x - y", {"x": "1", "y": "0"}),
        ("critical", "x**2 - y**2", {"x": "0.5", "y": "0.5"}),
    ]:
        argv = [command, text] + [a for k, v in extra.items() for a in (f"--{k}", v)]
        code, out, err = _run(*argv, "--json")
        doc = json.loads(out)
        assert code == 0, (command, out, err)
        assert {"x", "value", "grad", "iterations", "converged", "method"} <= set(doc)
        assert doc["converged"] is True
        if command == "solve":
            assert "residual" in doc
        if command == "critical":
            assert doc["kind"] == "saddle" and doc["eigenvalues"] == [-2.0, 2.0]


def test_an_empty_input_beside_others_is_propagated_and_contributes_nothing(cli):
    # only when every input with an uncertainty is empty is there nothing to propagate; an
    # empty one (here the first, as the expression reads them) beside a scalar adds an
    # empty block to the covariance: sum(x) + y = 0 + 1, its uncertainty y's 0.1 alone
    r = cli("propagate", "sum(x) + y", "--x", "[]+-[]", "--y", "1+-0.1", "--json")
    assert r.code == 0, r.out
    assert list(r.json["budget"]) == ["x", "y"]
    assert (r.json["value"], r.json["uncertainty"]) == (1.0, 0.1)
    assert r.json["budget"]["x"] == {
        "value": [],
        "uncertainty": [],
        "sensitivity": [],
        "contribution": 0.0,
        "share": 0.0,
    }
    assert r.json["budget"]["y"]["share"] == 100.0


def test_commands_errors_and_exit_codes(cli):
    r = cli("propagate", "g*t", "--g", "9.81+-abc", "--t", "1", "--json")
    assert r.code == 2 and r.json["error"]["kind"] == "bad_value"
    for text, missing in (("9.81+-", "uncertainty after '+-'"), ("+-0.1", "value before '+-'")):
        r = cli("propagate", "g*t", "--g", text, "--t", "1+-0.1", "--json")
        assert r.code == 2 and r.json["error"]["kind"] == "bad_value", r.out
        assert r.json["error"]["message"].startswith(f"--g: '{text}' has no {missing}")
    r = cli("propagate", "sum(x)", "--x", "[]+-[]", "--json")
    assert r.code == 2 and "empty arrays" in r.json["error"]["message"]
    r = cli("propagate", "g*t", "--g", "9.81", "--t", "1", "--json")
    assert r.code == 2 and "no input has an uncertainty" in r.json["error"]["message"]
    r = cli("propagate", "g*t", "--g", "9.81+-0.1", "--t", "1+-0.1", "--corr", "g,t=2", "--json")
    assert r.code == 2 and "between -1 and 1" in r.json["error"]["message"]
    r = cli("minimize", "x", "--x", "1", "--max-iter", "3", "--json")
    assert r.code == 1 and r.json["converged"] is False  # the last iterate is kept
    r = cli("solve", "x**2 + 1", "--x", "1", "--json")
    assert r.code == 1 and r.json["converged"] is False and r.json["residual"] == 1.0
    r = cli("minimize", "x**2", "--x", "1", "--method", "newtn", "--json")
    assert r.code == 2 and "--method" in r.json["error"]["message"]
    r = cli("minimize", "x**2", "--x", "3:1", "--json")
    assert r.code == 2 and "empty" in r.json["error"]["message"]
    r = cli("minimize", "sum(x**2)", "--x", "[1, 2]", "--json")
    assert r.code == 0 and r.json["x"]["x"] == pytest.approx([0.0, 0.0], abs=1e-15)
    r = cli("minimize", "x**2 + y", "--x", "1", "--y", "-1:1", "--trace", "--json")
    assert r.code == 0 and r.json["x"]["y"] == -1.0 and r.json["trace"][0]["iteration"] == 0


def test_bounds_read_the_same_in_both_option_forms(cli):
    """``--x=LOW:HIGH`` is ``--x LOW:HIGH`` (as ``--x=2`` is ``--x 2`` for every variable):
    it was refused as "not a number" before.  (x - 0.25)**2 + y**2 from y = 1 with x held
    to [-1, 0]: the minimum over the box is x = 0 (the bound), y = 0, value 0.0625, where
    x's gradient is still -0.5: the message says the gradient is zero only in the
    directions the bounds allow (an interior minimum keeps the plain message)."""
    spaced = cli("minimize", "(x-0.25)**2 + y**2", "--y", "1", "--x", "-1:0", "--json")
    joined = cli("minimize", "(x-0.25)**2 + y**2", "--y", "1", "--x=-1:0", "--json")
    assert spaced.code == joined.code == 0 and spaced.out == joined.out
    doc = joined.json
    assert doc["x"]["x"] == 0.0 and doc["x"]["y"] == pytest.approx(0.0, abs=1e-12)
    assert doc["grad"]["x"] == -0.5 and doc["value"] == pytest.approx(0.0625)
    assert doc["message"] == "the gradient is zero (to --gtol) in every direction the bounds allow"
    inside = cli("minimize", "(x-0.25)**2", "--x=-1:1", "--json")
    assert inside.code == 0 and inside.json["x"]["x"] == pytest.approx(0.25)
    assert inside.json["message"] == "the gradient is zero (to --gtol)"
    last = cli("minimize", "(x-0.25)**2", "--x=3:1", "--json")  # the last argument, joined
    assert last.code == 2 and last.json["error"]["message"] == "--x '3:1': the bounds are empty"


@pytest.mark.parametrize(
    "argv, first, second",
    [
        (["--x", "-1:2", "--x", "3"], "-1:2", "3"),
        (["--x=-1:2", "--x", "3"], "-1:2", "3"),
        (["--x", "3", "--x=-1:2"], "3", "-1:2"),
        (["--x", "0:1", "--x", "0:2"], "0:1", "0:2"),
    ],
)
def test_a_bounded_variable_given_twice_is_named_as_written(cli, argv, first, second):
    """Bounds become a start value before the values are read: a conflict was reported
    between the start (0.5) and the other value, neither of which the user wrote."""
    r = cli("minimize", "x**2", *argv, "--json")
    assert r.code == 2 and r.json["error"]["message"] == (
        f"variable 'x' is given twice with different values: {first!r} and {second!r} (--x); "
        f"give it once"
    )
    same = cli("minimize", "x**2", "--x", "0:1", "--x=0:1", "--json")  # the same twice: fine
    assert same.code == 0 and same.json["x"]["x"] == pytest.approx(0.0, abs=1e-12)


def test_a_step_onto_a_bound_lands_on_the_bound_itself(cli):
    """Kills core/optimize.py:136 clip(theta, lo, hi) -> clip(lo, theta, hi) (seed 197).

    Projecting onto [lo, hi] gives the bound itself wherever the step reaches or passes it,
    the sign of a zero bound included.  x**2/2 from the mid-point 1 of [-0.0, 2]: Newton's
    step is -g/h = -1, onto 1 - 1 = +0.0, which is the lower bound -0.0: the point is
    -0.0, as written.  The mutant kept the iterate's +0.0."""
    r = cli("minimize", "x**2/2", "--x=-0.0:2", "--json")
    assert r.code == 0 and r.json["iterations"] == 1
    assert r.json["x"]["x"] == 0.0 and math.copysign(1.0, r.json["x"]["x"]) == -1.0


def test_global_limits_reach_the_analysis_commands(cli):
    r = cli(
        "minimize",
        "x",
        "--x",
        "1",
        "--method",
        "gd",
        "--max-iter",
        "1000000",
        "--timeout",
        "1",
        "--json",
    )
    assert r.code == 1 and r.json["error"]["kind"] == "limit"
    assert "--timeout of 1 s" in r.json["error"]["message"]
    r = cli("--max-memory", "banana", "taylor", "x", "--x", "1", "--json")
    assert r.code == 2 and r.json["error"]["kind"] == "usage"
    for command in ("taylor", "propagate", "minimize", "solve", "critical", "plot", "repl"):
        r = cli(command, "--help")
        assert "--max-memory" in r.out and "--timeout" in r.out, command


@pytest.mark.parametrize(
    "op, expr, start",
    [
        ("minimize", "(x-1)**2 + (y+2)**4", {"x": 0.0, "y": 0.0}),
        ("solve", "x**2 - 2", {"x": 1.0}),
        ("critical", "x**2 - y**2", {"x": 0.3, "y": -0.2}),
    ],
)
def test_iterates_are_kept_only_where_a_trace_is_asked(op, expr, start):
    # every iterate's x kept by default (the library) and with --trace; without it none,
    # which at 10^5 variables and thousands of iterations would be gigabytes
    from autograd_cli.core import api, optimize

    kept = getattr(optimize, op)(parse(expr), start)
    assert kept.iterations >= 1 and len(kept.trace) == kept.iterations + 1
    assert getattr(optimize, op)(parse(expr), start, trace=False).trace == []
    bare = api.compute(op, parse(expr), start)
    assert bare.trace == [] and bare.x == kept.x
    asked = api.compute(op, parse(expr), start, trace=True)
    assert [row["iteration"] for row in asked.trace] == list(range(kept.iterations + 1))


def test_an_analysis_of_a_complex_valued_output_says_so(cli):
    # polar(x, 1) = x e**i is complex for real x (tests/test_complex.py: every analysis
    # refuses it); solve used to drop the imaginary part and report a wrong root
    r = cli("solve", "polar(x, 1)", "--x", "1", "--json")
    assert r.code == 1 and r.json["error"] == {
        "kind": "unsupported",
        "message": "solve takes real functions: this one has complex values (solve abs(...), "
        "real(...) or imag(...) of it)",
        "op": "solve",
    }


def test_an_analysis_of_a_real_output_through_complex_intermediates_runs(cli):
    # |x e**i|**2 = x**2 and sum(|fft(x)|**2) = n sum(x**2) (Parseval) are real: minimized at 0
    for expr, start in (("abs(polar(x, 1))**2", "1"), ("sum(abs(fft(x))**2)", "[1, 2]")):
        r = cli("minimize", expr, "--x", start, "--json")
        assert r.code == 0 and r.json["converged"], r.out
        assert np.allclose(r.json["x"]["x"], 0.0, atol=1e-8)
    r = cli("taylor", "abs(polar(x, 1))**2", "--x", "1", "--order", "3", "--json")
    assert r.code == 0 and r.json["coefficients"] == pytest.approx([1, 2, 1, 0], abs=1e-12)


@pytest.mark.parametrize("u", [1e-150, 1e-9, 1.0, 1e100])
def test_correlations_are_checked_and_kept_at_every_scale(cli, u):
    """The correlations of x, y, z with r(x,y) = r(y,z) = 1 and r(x,z) = -1 are impossible
    (the correlation matrix has the eigenvalue -1, by hand), whatever the uncertainties'
    size; with r(x,z) = 1 the three move together and u(x+y+z) = 3u exactly.  Found from
    seed 127's survivor (core/uncertainty.py: the semidefinite check's tolerance
    -1e-12 * max(1, |cov|)): it accepted the impossible matrix for u = 1e-9 (an absolute
    tolerance for entries of 1e-18), eigvalsh underflowed for entries of 1e-300, and
    r u_i**2 u_j**2 overflowed for u = 1e100 (3e100 came out inf) and underflowed for
    u = 1e-150 (the correlations were lost: sqrt(3) u)."""
    common = ("x+y+z", "--x", f"1+-{u}", "--y", f"1+-{u}", "--z", f"1+-{u}")
    common += ("--corr", "x,y=1", "--corr", "y,z=1")
    bad = cli("propagate", *common, "--corr", "x,z=-1", "--json")
    assert bad.code == 2 and bad.json["error"]["message"] == (
        "the covariance (uncertainties and correlations) is not positive semidefinite"
    )
    good = cli("propagate", *common, "--corr", "x,z=1", "--json")
    assert good.code == 0 and good.json["uncertainty"] == pytest.approx(3 * u, rel=1e-12)
