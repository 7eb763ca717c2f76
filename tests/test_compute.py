"""The library's one dispatcher, :func:`autograd_cli.core.api.compute`: the facade, the
commands' ``api.*_of`` and a batch row ask it by name; it checks the name, the order, the
values and ``wrt`` once, and names its parameters as the library does (a caller spells them)."""

from __future__ import annotations

import pytest

from autograd_cli.core import api, rows
from autograd_cli.core.errors import InputError, UnknownVariableError
from autograd_cli.grammar import parse

P = parse("x**3 * y")
AT = {"x": 2.0, "y": 1.0}


def test_each_name_gives_what_its_function_gives():
    assert float(api.compute("eval", P, AT).value) == 8.0
    r = api.compute("grad", P, AT, "x")
    assert list(r.grad) == ["x"] and float(r.grad["x"]) == 12.0
    r = api.compute("grad", P, AT, wrt="x", order=2)
    assert (float(r.grad["x"]), r.order) == (12.0, 2)
    assert float(api.compute("hessian", P, AT).hessian["x"]["y"]) == 12.0
    assert float(api.compute("jacobian", P, AT, ["y"]).jacobian["y"]) == 8.0
    assert api.compute("diff", P, {}, "x", order=2).texts() == {"x": "6*x*y"}
    assert api.compute("check", P, AT, eps=1e-6, atol=1e-5, rtol=1e-3).passed
    assert api.compute("explain", P, AT, "y").gradient == {"y": 8.0}
    assert float(api.grad_of(P, AT, wrt=["y"]).grad["y"]) == 8.0


def test_wrt_is_a_name_a_comma_list_or_a_list():
    for wrt in ("x, y", ["x", "y"], ("y", "x", "y")):
        assert set(api.compute("grad", P, AT, wrt).grad) == {"x", "y"}
    assert list(api.compute("grad", P, AT, " ").grad) == ["x", "y"]  # blank: every input
    with pytest.raises(UnknownVariableError, match="'z' is not a variable"):
        api.compute("grad", P, AT, "z")


def test_the_checks_come_in_one_order_before_any_evaluation():
    with pytest.raises(api.RequestError, match="'integrate' operation is not available"):
        api.compute("integrate", P, {"nope": 1})
    with pytest.raises(api.RequestError, match="^hessian does not take an order$"):
        api.compute("hessian", P, {"nope": 1}, order=2)
    with pytest.raises(UnknownVariableError, match="unknown variable 'nope'"):
        api.compute("grad", P, {"nope": 1}, wrt="z")  # the values before wrt


@pytest.mark.parametrize(
    ("name", "request_", "message"),
    [
        ("grad", {"order": 0}, "order must be 1 or more, not 0"),
        ("grad", {"order": True}, "order must be 1 or more, not True"),
        ("diff", {"order": -1}, "order must be 0 or more, not -1"),
        (
            "grad",
            {"order": 2, "grad_output": 1.0},
            "order needs a scalar output; it cannot be combined with grad_output",
        ),
    ],
)
def test_request_errors_name_the_parameters_as_the_library_does(name, request_, message):
    with pytest.raises(InputError) as info:
        api.compute(name, P, AT, **request_)
    assert str(info.value) == message and "--" not in str(info.value)
    cli = {"order": "--order", "grad_output": "--grad-output"}
    assert info.value.spelled(cli) == message.replace("order", "--order", 1).replace(
        "grad_output", "--grad-output"
    )


def test_a_batch_row_spells_them_as_a_batch_line_does():
    out = rows.evaluate_rows(P, [dict(AT)], op="grad", order=2, grad_output=1.0)
    assert isinstance(out[0], rows.RowError) and out[0].kind == "bad_line"
    assert str(out[0]) == '"order" needs a scalar output; it cannot be combined with "grad_output"'
    (err,) = rows.evaluate_rows(P, [rows.Row(dict(AT), "hessian", order=3)])
    assert (err.kind, str(err)) == ("unsupported", "hessian does not take an order")
    (err,) = rows.evaluate_rows(P, [rows.Row(dict(AT), "graph")])
    assert err.kind == "unsupported" and "'graph' operation is not available" in str(err)


def test_the_librarys_own_wrt_check_names_no_flag():
    import autograd_cli as ag
    from autograd_cli.core.program_functional import program_jacobian

    for call in (
        lambda: program_jacobian(P, AT, wrt="z"),
        lambda: ag.diff("x**2", "z"),
        lambda: ag.explain("x**2", {"x": 1.0}, "z"),
    ):
        with pytest.raises(UnknownVariableError) as info:
            call()
        message = str(info.value)
        assert message.startswith(
            "wrt: 'z' is not a variable of the expression; the variables are x"
        )


def test_the_analyses_are_asked_of_the_one_dispatcher():
    # taylor, propagate, minimize, solve and critical by name, their settings as keywords
    r = api.compute("taylor", parse("exp(x)"), {"x": 0.0}, order=2)
    assert [float(c) for c in r.coefficients] == [1.0, 1.0, 0.5]
    m = api.compute("minimize", parse("(x - 3)**2"), {"x": 0.0}, "x", method="newton")
    assert m.converged and m.x == {"x": pytest.approx(3.0)}
    with pytest.raises(api.RequestError, match="^minimize does not take an order$"):
        api.compute("minimize", parse("x**2"), {"x": 1.0}, order=2)
    with pytest.raises(UnknownVariableError, match="unknown variable 'nope'"):
        api.compute("critical", parse("x**2"), {"nope": 1.0})  # the values checked first
    with pytest.raises(TypeError, match="solve takes no setting 'method'"):
        api.compute("solve", parse("x - 1"), {"x": 0.0}, method="bfgs")
