"""Tests written from the survivors of ``bench/mutate.py`` seed 127 (bench/results/
mutate-seed127.json) in the op table, the rules' helpers, sinc's derivative, the batch engine
and optimize.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from algebra
by hand, power series, the docs or the docstrings, never from the code under test.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from autograd_cli.core.ops import chain
from autograd_cli.core.tensor import Tensor

# ---- the op table: how many arguments a function takes --------------------------------------


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("atan2(x)", "atan2() takes 2 arguments, got 1"),
        ("clip(x)", "clip() takes 3 arguments, got 1"),
        ("reshape(x)", "reshape() takes 2 arguments, got 1"),
        ("sin(x, x)", "sin() takes 1 argument, got 2"),
    ],
)
def test_a_call_with_the_wrong_number_of_arguments_names_the_counts_taken(cli, expr, message):
    """kills core/ops/table.py:530: if self.unary or self.reduce or self.name == "reshape": ->
    ... or self.name != "reshape":.

    Function.arities() is what an arity error says the function takes (grammar/calls.py's
    _arity_error): atan2 is binary only (2), clip ternary only (3), reshape(x, shape) 2, sin
    unary (1).  The mutant counted 1 for every function but reshape ("atan2() takes 1 or 2
    arguments", "clip() takes 1 or 3") and nothing for reshape ("reshape() takes  arguments")."""
    r = cli("eval", expr, "--x", "1", "--json")
    assert r.code == 2, r.out
    assert r.json["error"]["kind"] == "arity"
    assert r.json["error"]["message"] == message


# ---- the rules' helpers ----------------------------------------------------------------------


def test_chain_keeps_an_absent_cotangent_or_partial_absent():
    """kills core/ops/rules.py:196: if g is None or d is None: -> if g is None and d is None:.

    core/ops/rules.py's conventions: "An absent cotangent stays absent: chain(g, d) is g * d
    except ...": chain (re-exported by core.ops for the rules) gives None when either of g and
    d is None, whatever the other is.  The mutant returned None only when both were, and
    otherwise multiplied by None: a Tensor of nan (None becomes nan in a Tensor's product) or
    a TypeError for a plain number or array."""
    t = Tensor(np.array([1.0, 2.0]))
    for present in (t, np.array([3.0]), 2.0):
        assert chain(None, present) is None
        assert chain(present, None) is None
        assert chain(None, present, selects=True) is None
        assert chain(present, None, selects=True) is None
    assert chain(None, None) is None


# ---- sinc's derivative near 0 ----------------------------------------------------------------


def test_the_twelfth_derivative_of_sinc_at_zero_is_its_taylor_coefficient(cli):  # 14 s
    """kills core/ops/special.py:162: _SINC_D_SERIES = tuple((-1) ** k * 2 * k /
    math.factorial(2 * k + 1) for k in range(5, 0, -1)) -> range(6, 0, -1).

    sinc(x) = sum_j (-1)^j (pi x)^(2j) / (2j+1)! (docs/language.md: sin(pi x)/(pi x), 1 at 0),
    so taylor's c[k] = f^(k)(0)/k! is (-1)^j pi^(2j)/(2j+1)! for k = 2j and 0 for odd k:
    c[12] = pi^12/13! (docs/choices.md: taylor agrees with SymPy, whose series of
    sin(pi x)/(pi x) this is).  The command differentiated repeatedly at 0 then, through the
    derivative's series (core/ops/special.py _sinc_d); Taylor mode now expands sinc at 0 itself,
    and so does grad --order, so the engine's series is checked here by differentiating
    repeatedly in the library (d^12/dx^12 at 0 is 12! c[12] = pi^12/13).  A product bug
    found here: the series stopped at u^9 (k = 5), so its 11th derivative, sinc's 12th, was 0
    there, c[12] = 0 (and grad --order 12 at and near 0 printed 0 where it is pi^12/13 =
    71097.6...).  The mutant's k = 6 only moved that to order 14; the series now runs to
    k = 20, exact to --order's cap.  The first derivative is unaffected beyond rounding."""
    from autograd_cli.core.program_functional import program_derivatives
    from autograd_cli.grammar import parse

    series = program_derivatives(parse("sinc(x)"), {"x": 0.0}, "x", 12)
    assert float(series[12].data) == pytest.approx(math.pi**12 / 13, rel=1e-9)
    r = cli("grad", "sinc(x)", "--x", "0", "--order", "12", "--json")  # by Taylor mode
    assert r.code == 0, r.out
    assert r.json["grad"]["x"] == pytest.approx(math.pi**12 / 13, rel=1e-13)


# ---- the batch engine ------------------------------------------------------------------------


def test_a_complex_constant_in_a_batch_runs_row_by_row_as_single_commands(cli, tmp_path):
    """kills core/batch.py:691: raise Unbatchable("a complex constant") -> pass.

    The vectorised batch path is real (docs/choices.md: "In batch, lines with complex values
    run one by one"), so a line whose expression has a complex constant is each the single
    command's: grad of x*(1+2j), a complex output, is refused (kind non_scalar_output, "the
    output is complex": PyTorch's "grad can be implicitly created only for real scalar
    outputs"), in every row of the file as on the command line, and abs(x*(1+2j)) has value
    sqrt(5)|x| and gradient sqrt(5) sign(x).  The mutant batched the complex constant and
    printed the gradient 1.0 of a complex output on every line."""
    single = cli("grad", "x*(1+2j)", "--x", "1.5", "--json")
    assert single.code == 1 and single.json["error"]["kind"] == "non_scalar_output"
    path = tmp_path / "rows.csv"
    path.write_text("x\n1.5\n-2\n0\n")
    r = cli("batch", str(path), "--expr", "x*(1+2j)")
    assert r.code == 1, r.out
    assert len(r.docs) == 3
    for doc in r.docs:
        assert "grad" not in doc, doc
        assert doc["error"]["kind"] == "non_scalar_output", doc
        assert "the output is complex" in doc["error"]["message"]
    r = cli("batch", str(path), "--expr", "abs(x*(1+2j))")
    assert r.code == 0, r.out
    s5 = math.sqrt(5)
    for doc, x in zip(r.docs, (1.5, -2.0, 0.0)):
        assert doc["value"] == pytest.approx(s5 * abs(x), rel=1e-15)
        assert doc["grad"]["x"] == pytest.approx(s5 * np.sign(x), rel=1e-15)


# ---- optimize --------------------------------------------------------------------------------


def test_minimize_takes_the_sparse_newton_steps_from_exactly_500_variables(cli, tmp_path):
    """kills core/optimize.py:184: if n < SPARSE_NEWTON_FROM: -> if n <= SPARSE_NEWTON_FROM:.

    docs/choices.md: "minimize and solve take sparse Newton steps from 500 variables" (where
    SciPy is installed).  f = sum((x-1)**2) + x0**4 - 2 x0**2 from x = 0: g = (-2, -2, ...),
    H = diag(-2, 2, ..., 2), not positive definite.  The dense step (below 500) is then
    steepest descent, -g = (2, ..., 2), halved once by the line search to x = 1 (f 507 > 499
    at 2): the minimum, f = -1, gradient 0, in one iteration.  The sparse step solves H s =
    -g: s = (-1, 1, ..., 1), a descent direction (g.s = 2 - 2*499 < 0), taken whole: x0 = -1,
    f = 0 + 1 - 2 + 4 = 3.  The mutant took the dense steps at exactly 500 variables."""
    pytest.importorskip("scipy.sparse.linalg")
    expr = "sum((x-1)**2) + x[0]**4 - 2*x[0]**2"
    for n, first, value in ((500, -1.0, 3.0), (501, -1.0, 3.0), (499, 1.0, -1.0)):
        values = tmp_path / f"x{n}.json"
        values.write_text(json.dumps({"x": [0.0] * n}))
        r = cli("minimize", expr, "--vars", f"@{values}", "--max-iter", "1", "--json")
        assert r.json["iterations"] == 1, (n, r.out[:300])
        assert r.json["x"]["x"] == [first] + [1.0] * (n - 1), n
        assert r.json["value"] == value, n


@pytest.mark.parametrize("method", ["newton", "bfgs", "gd"])
def test_minimize_stops_where_the_gradient_is_not_finite(cli, method):
    """kills core/optimize.py:346: if not math.isfinite(f) or not np.isfinite(g).all(): ->
    ... and ....

    cbrt(x) at 0: the value 0 is finite, the gradient (1/3) x^(-2/3) is inf, so there is no
    descent direction and minimize stops before any step with optimize._stop_here's message
    "the value or gradient is not finite here: no descent direction", not converged.  The
    mutant stopped only where both were not finite, went on to a line search along an inf
    step and said "the line search found no lower value: stopped"."""
    r = cli("minimize", "cbrt(x)", "--x", "0", "--method", method, "--json")
    doc = r.json
    assert doc["value"] == 0.0 and doc["grad"]["x"] == "inf", r.out
    assert doc["iterations"] == 0 and doc["converged"] is False
    assert doc["message"] == "the value or gradient is not finite here: no descent direction"


def test_critical_trace_rows_give_the_gradient_at_their_own_point(cli):
    """kills core/optimize.py:892: record=lambda it, theta, state: record(it, flat, theta,
    state[0], state[1]), -> ... state[0], state[0]),.

    Each row of critical's trace is an iterate with its value and its gradient's largest
    entry (grad_norm, as minimize's rows).  f = x**3 - 3x + y**2: df/dx = 3x^2 - 3, df/dy =
    2y, so each row's grad_norm is max(|3x^2 - 3|, |2y|) at that row's x and y; from (2, 1)
    Newton's method reaches the minimum (1, 0) (row 1: (1.25, 0), grad_norm 1.6875, value
    -1.796875).  The mutant recorded |f| as the gradient's size in every row after the first."""
    r = cli("critical", "x**3 - 3*x + y**2", "--x", "2", "--y", "1", "--trace", "--json")
    assert r.code == 0, r.out
    doc = r.json
    assert doc["converged"] is True and doc["kind"] == "minimum"
    rows = doc["trace"]
    assert len(rows) == doc["iterations"] + 1 >= 3
    assert rows[1]["x"] == {"x": 1.25, "y": 0.0}
    assert rows[1]["grad_norm"] == 1.6875 and rows[1]["value"] == -1.796875
    for row in rows:
        x, y = row["x"]["x"], row["x"]["y"]
        assert row["value"] == pytest.approx(x**3 - 3 * x + y**2, rel=1e-15, abs=1e-15)
        want = max(abs(3 * x * x - 3), abs(2 * y))
        assert row["grad_norm"] == pytest.approx(want, rel=1e-9, abs=1e-13), row
    assert rows[-1]["grad_norm"] == max(abs(v) for v in doc["grad"].values())
