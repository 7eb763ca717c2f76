"""What fuzzing found (tests/test_fuzz.py, bench/fuzz.py), one test per finding.

A finding fixed in this change is a plain regression test.  A finding in code that is not
this change's to edit is a strict xfail naming the file and the reproducer, so it stays
tracked and the xfail turns into a failure (XPASS) the day it is fixed.
"""

from __future__ import annotations

import pytest

# ---- open: in files other workers own --------------------------------------------------------


def test_the_utf8_note_does_not_leak_into_the_next_run(cli):
    # Fixed: cli/main.py's run() clears the note (options.forget_replaced) before each run.
    import fuzzgen

    try:
        cli("eval", "x\udcff", "--x", "1", "--json")  # an argument with a bad byte: the note
        r = cli("eval", "2*", "--json")  # clean input, a plain syntax error
    finally:
        fuzzgen.forget_run_state()  # so the tests after this one do not inherit the note
    assert r.code == 2
    assert "not valid UTF-8" not in r.json["error"]["message"]


# ---- fixed: core/symbolic.py -----------------------------------------------------------------


def _second_derivative_of_an_exp_chain(n: int):
    from autograd_cli.core import symbolic
    from autograd_cli.grammar import parse

    builder = symbolic.Builder()
    output = parse("exp(" * n + "x" + ")" * n).output
    first = symbolic.simplify(symbolic.grad_exprs(output, ["x"], builder)["x"])
    return symbolic.grad_exprs(first, ["x"], builder)["x"]


def test_a_product_of_products_is_charged_for_every_factor():
    """Found by fuzzing: `diff "exp(exp(...exp(x)...))" --order 3` (300 deep) ran 51 s past
    its 10-s simplification budget.  Flattening a product of products did work for every
    inner factor but charged the step budget once, and the deadline is read from that budget's
    bookkeeping (every 4096 steps), so it came too late.  Here the work is about 12,000 steps
    (it was charged about 1,700)."""
    from autograd_cli.core.symbolic import Algebra, SimplifyBudgetExceeded, simplify

    raw = _second_derivative_of_an_exp_chain(60)
    with pytest.raises(SimplifyBudgetExceeded):
        simplify(raw, algebra=Algebra(budget=6000))
    alg = Algebra(budget=float("inf"))
    simplify(raw, algebra=alg)
    assert alg.steps > 60 * 59 / 2  # at least the flattened factors


def test_no_simplification_starts_once_the_time_budget_is_spent():
    """The same finding: after one order's pass had used up the time budget, the next order's
    pass still started and ran until its first clock reading.  Now a spent budget leaves every
    later derivative unsimplified (with the note), and still right."""
    import math

    import autograd_cli as ag

    r = ag.diff("sin(x)*exp(x)", "x", order=3, time_budget=-1.0)
    d = r.derivatives["x"]
    assert not d.simplified and "time budget" in d.note
    x = 0.7
    want = 2 * math.exp(x) * (math.cos(x) - math.sin(x))  # (sin*exp)''' = 2 e^x (cos - sin)
    assert math.isclose(ag.evaluate(d.text, {"x": x}).value.item(), want, rel_tol=1e-12)


# ---- fixed: core/symbolic.py and core/ops.py (found by bench/fuzz.py) ---------------------------


# Fixed in core/symbolic.py: a kept guard pair b/b prints first (sqrt(exp(z))/sqrt(exp(z))*
# exp(z)), so it is 1 before it meets the other factors; printed last it overflowed.
def test_a_kept_guard_pair_does_not_overflow_the_derivative(cli):
    r = cli("diff", "sqrt(exp(z))**2", "--z", "700", "--json")
    g = cli("grad", "sqrt(exp(z))**2", "--z", "700", "--json")
    assert g.json["grad"]["z"] == pytest.approx(1.0142320547350045e304)
    assert r.json["derivative_value"] == pytest.approx(g.json["grad"]["z"])


# Fixed in core/ops.py: a constant exponent of -0.5 is PyTorch's rsqrt, nan at -inf, so the
# gradient of u**0.5 there is nan in grad (as in PyTorch) and in diff's 1/(2*u**(1/2)) alike;
# it was C's +0 in grad only (bench/fuzz.py --seed 1, input 25779).
def test_a_square_root_derivative_at_minus_infinity_agrees_with_grad(cli):
    argv = ["(x + y / 0)**0.5", "--x", "-0.1750972296631046", "--y", "-1.0", "--json"]
    g = cli("grad", *argv)
    r = cli("diff", *argv)
    assert g.json["grad"]["x"] == "nan"
    assert r.json["derivative_value"]["x"] == "nan"
    assert cli("grad", "x**0.5", "--x", "-inf", "--json").json["grad"]["x"] == "nan"
    assert cli("grad", "x**-0.5", "--x", "-inf", "--json").json["value"] == "nan"
    assert cli("grad", "x**-1.5", "--x", "-inf", "--json").json["value"] == 0.0  # C's pow


def test_the_square_root_gradient_at_minus_infinity_is_pytorchs():
    torch = pytest.importorskip("torch")
    x = torch.tensor(-float("inf"), dtype=torch.float64, requires_grad=True)
    (x**0.5).backward()
    assert torch.isnan(x.grad)  # what the test above pins: PyTorch's rsqrt at -inf


# ---- fixed: the fuzz oracle itself (tests/fuzzgen.py), bench/fuzz.py --seed 2 ----------------


def _oracle_findings(tree, env, op):
    import fuzzgen

    from autograd_cli.cli.main import run

    case = fuzzgen.make_oracle_case(tree, env)
    argv = {"grad": case.argv_grad, "diff": case.argv_diff, "eval": case.argv_eval}[op]
    code, out, _err = fuzzgen.run_inprocess(argv)
    assert run is not None and code == 0
    return fuzzgen.oracle_findings(case, op, code, out)


def test_the_oracle_takes_pytorchs_rsqrt_at_minus_infinity():
    # input 41751: (u)**0.5 with u = -inf has gradient nan (PyTorch, and the tool since
    # core/ops.py's rsqrt rule); the oracle's C pow said 0
    tree = ("pow", ("-", ("var", "x"), ("/", ("var", "y"), ("const", 0.0))), 0.5)
    assert _oracle_findings(tree, {"x": 0.6, "y": 0.624}, "grad") == []


def test_diff_of_a_sine_of_a_huge_argument_is_not_compared():
    # input 22903: cos(exp(u**3)) with exp(u**3) ~ 1e140: diff's simplified form sums u in
    # another order, a few ulps of 1e140 are another angle, and no tolerance can hold
    tree = (
        "cos",
        ("exp", ("pow", ("+", ("sin", ("var", "z")), ("+", ("const", 10.0), ("var", "z"))), 3.0)),
    )
    assert _oracle_findings(tree, {"z": -2.961}, "diff") == []
    # a moderate argument is still compared (a wrong derivative there would be found)
    assert _oracle_findings(("sin", ("exp", ("var", "z"))), {"z": 2.0}, "diff") == []


def test_a_reduction_along_an_axis_of_a_number_is_a_shape_error(cli):
    # bench/fuzz.py --seed 3: `check "sum(x,axis=0)" --x 7` was an internal error (the
    # backward's shape of a reduced 0-d array divided by its 0 dimensions); NumPy takes axis
    # 0 of a number for no axis in sum and max but not in var: one rule for every reduction
    for text in ("sum(x,axis=0)", "max(x, axis=-1)", "var(x, 0)", "logsumexp(x, axis=0)"):
        for command in ("eval", "grad", "check", "hessian"):
            r = cli(command, text, "--x", "7", "--json")
            assert r.code == 1 and r.json["error"]["kind"] == "shape", (command, text, r.out)
            assert "of a number has no axis" in r.json["error"]["message"]
    assert cli("grad", "sum(x, axis=0)", "--x", "[1, 2]", "--json").json["grad"]["x"] == [1, 1]


def test_check_of_a_ragged_value_is_a_bad_value_error(cli):
    # bench/fuzz.py --seed 4 (100,000 inputs, its one finding): `check "y+2" --y "[[],2]"` was
    # an internal error (check's step test read the value before anything had checked it)
    for command in ("check", "grad", "eval"):
        r = cli(command, "y+2", "--y", "[[],2]", "--json")
        assert r.code == 2 and r.json["error"]["kind"] == "bad_value", (command, r.out)
        assert "rectangular array" in r.json["error"]["message"]
        assert "inhomogeneous" not in r.json["error"]["message"]  # no NumPy wording
