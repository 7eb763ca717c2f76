"""Library messages name parameters as the library does (``wrt``, ``grad_output``,
``max_iter``), never a command-line flag (``--wrt``): the command line adds its spelling where
it reports an error (``cli/status.py``'s ``classify``, through ``AutogradCliError.spelled``)
or prints a result (an optimizer's stop, a warning, explain's note on steps not listed: a
:class:`~autograd_cli.core.errors.Spelled`, through ``analysis_docs.spelled``).  A batch
line's error records name the line's keys; its analysis document is the single command's,
byte for byte (docs/batch.md).  A scan of the library's strings keeps new flags out."""

from __future__ import annotations

import ast
import json
import pickle
import re
from pathlib import Path

import pytest

from autograd_cli.core import optimize
from autograd_cli.core.errors import InputError, Spelled, spell
from autograd_cli.core.explain import explain
from autograd_cli.core.explanation import explain_text
from autograd_cli.core.uncertainty import propagate
from autograd_cli.grammar import parse

ROOT = Path(__file__).resolve().parents[1]
#: a command-line flag in text: ``--max-iter``, or ``--`` before an f-string's field
FLAG = re.compile(r"(?<![\w-])--(?:[a-z]|$)")

#: library strings that may name a flag, and why
ALLOWED = {
    # the provenance line of generated code: the command that writes the same code
    ("core/codegen/__init__.py", " codegen --target "),
    ("core/codegen/__init__.py", " --hessian"),
    # the table builder's own command line (python -m autograd_cli.grammar.build_tables)
    ("grammar/build_tables.py", "--check"),
    ("grammar/build_tables.py", "--stdout"),
}


def strings(path: Path):
    """(line, text) of each string constant of ``path`` but its docstrings (an error's
    message, a result's message, a warning, a label's default); an f-string's constant
    parts each on their own."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings:
                yield node.lineno, node.value


def flagged(path: Path, rel: str = "") -> list[str]:
    """Each string of ``path`` that names ``--something`` (but the ALLOWED ones)."""
    return [
        f"{rel or path.name}:{line}: {text[:80]!r}"
        for line, text in strings(path)
        if FLAG.search(text) and not any(rel == f and a in text for f, a in ALLOWED)
    ]


def test_no_library_string_names_a_flag():
    bad = []
    for folder in ("core", "grammar", "facade"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            bad += flagged(path, path.relative_to(ROOT).as_posix())
    assert not bad, "\n".join(bad)


def test_the_scan_finds_a_flag_in_a_message(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text(
        '"""--doc is fine."""\n'
        'def f(n):\n    raise InputError(f"--order must be 1, not {n}")\n'
        'def g():\n    return ShapeError.naming("{grad_output} has --a-flag")\n'
        'def h(what="--max-iter"):\n    return what\n'
        'STOP = "no convergence (--max-iter)"\n'
        'NOTE = f"the uncertainty of --{name}"\n'
    )
    assert sorted(int(hit.split(":")[1]) for hit in flagged(planted)) == [3, 5, 6, 8, 9]


@pytest.mark.parametrize(
    ("spelling", "message"),
    [
        ({}, "wrt: 'z' is not a variable; order 2"),
        ({"wrt": "--wrt"}, "--wrt: 'z' is not a variable; order 2"),
        (lambda name: "--" + name, "--wrt: 'z' is not a variable; --order 2"),
    ],
)
def test_an_error_spells_its_parameters_as_its_caller_does(spelling, message):
    error = InputError.naming(
        "{wrt}: {name!r} is not a variable; {order} {n}", {"name": "z", "n": 2}
    )
    assert str(error) == "wrt: 'z' is not a variable; order 2"
    assert error.spelled(spelling) == message


def test_the_command_line_spells_a_library_message_with_its_flags():
    from autograd_cli.cli.status import classify

    error = InputError.naming("{grad_output} and {max_iter} for {name!r}", {"name": "{x}"})
    assert str(error) == "grad_output and max_iter for '{x}'"
    assert classify(error).message == "--grad-output and --max-iter for '{x}'"


def test_a_missing_value_names_no_flag_in_the_library_and_the_flags_on_the_command_line(cli):
    # the library's message says only what is missing (a Python caller has no --y); the
    # command line adds its ways of giving the value (a batch line its own: the next test)
    import autograd_cli
    from autograd_cli.core.errors import MissingValueError

    with pytest.raises(MissingValueError) as info:
        autograd_cli.grad("x + y", {"x": 1})
    assert str(info.value) == "no value for variable 'y'"
    r = cli("grad", "x + y", "--x", "1", "--json")
    assert r.code == 2
    assert json.loads(r.out)["error"] == {
        "kind": "missing_value",
        "message": "no value for variable 'y' (give --y VALUE, --var y=VALUE or --vars JSON)",
        "variable": "y",
    }


def test_a_batch_line_spells_a_library_message_with_its_keys(cli, tmp_path):
    # a batch line has no --wrt or --grad-output: its error records name the line's keys, as
    # its own messages do ("max_iter" must be ...), and say where a missing value goes
    lines = [
        {"expr": "x * y", "vars": {"x": 1, "y": 2}, "wrt": "x,q"},
        {"expr": "x * y", "vars": {"x": 1}},
        {"expr": "x * y", "vars": {"x": 1, "y": 2}, "grad_output": [1, 2]},
        {"expr": "x * y", "vars": {"x": [1, 2], "y": 2}},
    ]
    path = tmp_path / "lines.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    r = cli("batch", str(path))
    assert r.code == 1
    messages = [json.loads(line)["error"]["message"] for line in r.out.splitlines()]
    assert messages[0] == (
        "\"wrt\": 'q' is not a variable of the expression; the variables are x, y"
    )
    assert messages[1] == "no value for variable 'y' (give it in the line's \"vars\")"
    assert messages[2] == '"grad_output" has shape (2,) but the output has shape ()'
    assert 'Give "grad_output" ARRAY of shape (2,)' in messages[3]
    assert not any(FLAG.search(m) for m in messages)
    # the same errors on the command line name its flags
    r = cli("grad", "x * y", "--x", "1", "--y", "2", "--wrt", "x,q", "--json")
    assert r.json["error"]["message"].startswith("--wrt: 'q' is not a variable")


def test_the_library_names_grad_output_as_its_parameter():
    import autograd_cli
    from autograd_cli.core.errors import BadValueError

    with pytest.raises(BadValueError, match="'grad_output'") as info:
        autograd_cli.grad("x * y", {"x": [1.0, 2.0], "y": 2.0}, grad_output="abc")
    assert "--" not in str(info.value)


def test_a_spelled_message_is_the_librarys_text_and_keeps_its_template():
    m = Spelled("no convergence in {n} iterations ({max_iter})", {"n": 7})
    assert m == "no convergence in 7 iterations (max_iter)" and isinstance(m, str)
    assert spell(m, lambda p: "--" + p.replace("_", "-")) == (
        "no convergence in 7 iterations (--max-iter)"
    )
    assert spell(m, {"max_iter": '"max_iter"'}) == 'no convergence in 7 iterations ("max_iter")'
    assert spell("plain text", lambda p: 1 / 0) == "plain text"
    back = pickle.loads(pickle.dumps(m))  # a Dask worker's result comes back whole
    assert back == m and spell(back, {"max_iter": "M"}) == "no convergence in 7 iterations (M)"


def test_optimizers_name_their_settings_as_the_library_does_and_the_cli_spells_them(cli):
    # Newton's step on exp(x) is exactly -1: from 600, 100 steps end at 500, not converged
    r = optimize.minimize(parse("exp(x)"), {"x": 600.0})
    assert r.message == "no convergence in 100 iterations (max_iter)"
    r = optimize.minimize(parse("x**2"), {"x": 1.0})
    assert r.message == "the gradient is zero (to gtol)"
    assert optimize.solve(parse("x - 2"), {"x": 1.0}).message == "the residual is zero (to tol)"
    assert optimize.critical(parse("x**2"), {"x": 1.0}).message == "the gradient is zero (to gtol)"
    out = cli("minimize", "exp(x)", "--x", "600", "--json")
    assert out.code == 1 and out.json["message"] == "no convergence in 100 iterations (--max-iter)"
    text = cli("minimize", "x**2", "--x", "1")
    assert "converged   yes: the gradient is zero (to --gtol)" in text.out
    assert cli("solve", "x - 2", "--x", "1", "--json").json["message"].endswith("(to --tol)")


def test_a_batch_analysis_line_spells_its_settings_as_the_command_does(tmp_path, cli):
    path = tmp_path / "in.jsonl"
    line = {"expr": "exp(x)", "vars": {"x": 600}, "op": "minimize", "max_iter": 3}
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    got = cli("batch", path)
    single = cli("minimize", "exp(x)", "--x", "600", "--max-iter", "3", "--json")
    assert got.code == 1 and single.code == 1
    assert got.docs[0]["message"] == "no convergence in 3 iterations (--max-iter)"
    assert got.out == '{"line": 1, ' + single.out.lstrip("{")


def test_propagates_warning_names_mc_as_the_library_does(cli):
    # x**2 at 1 with u = 0.3: the second-order term is u**2/2 = 4.5 % of the first-order one
    r = propagate(parse("x**2"), {"x": 1.0}, {"x": 0.3})
    ends = [w for w in r.warnings if "second-order term" in w]
    assert len(ends) == 1 and ends[0].endswith("(compare with mc)")
    out = cli("propagate", "x**2", "--x", "1+-0.3", "--json")
    assert any(w.endswith("(compare with --mc)") for w in out.json["warnings"]), out.out


def test_explains_note_on_steps_not_listed_names_max_steps(cli):
    ex = explain(parse("sin(x*y) + x"), {"x": 1.0, "y": 2.0}, ["x", "y"], max_steps=1)
    assert "more not listed (max_steps 0 lists every step)" in explain_text(ex)
    out = cli("explain", "sin(x*y) + x", "--x", "1", "--y", "2", "--max-steps", "1")
    assert "more not listed (--max-steps 0 lists every step)" in out.out


@pytest.mark.parametrize("u", ["[1,[2]]", "[[1],[2,3]]"])
def test_a_ragged_uncertainty_is_a_bad_value_not_an_internal_error(cli, u):
    """Found while moving the flags out: --x 1+-[1,[2]] ended in an internal error (NumPy's
    ValueError on a ragged list).  Now kind bad_value, exit 2, as a ragged value is."""
    out = cli("propagate", "x", "--x", f"1+-{u}", "--json")
    assert out.code == 2, out.out
    assert out.json["error"]["kind"] == "bad_value"
    assert (
        "the uncertainty of 'x' is not a number or a rectangular array"
        in out.json["error"]["message"]
    )


def test_a_ragged_tangent_names_the_tangent_not_a_flag(cli):
    out = cli("grad", "x*y", "--x", "1", "--y", "2", "--tangent", "x=[1,[2]]")
    assert out.code == 2
    assert "bad value for the tangent of 'x'" in out.err


@pytest.mark.parametrize(
    "limit, text, advice",
    [
        ("MAX_TOKENS", "1" + "+1" * 40, "variables' values ({})"),
        ("MAX_ARRAY_ELEMENTS", "[" + ", ".join(["1"] * 40) + "]", "variable's value instead: {}"),
    ],
)
def test_the_advice_to_give_a_large_array_as_a_value_names_each_callers_way(
    cli, tmp_path, monkeypatch, limit, text, advice
):
    # the library names its parameter (values=), the command line --vars, a batch line "vars"
    import autograd_cli
    from autograd_cli.core.errors import LimitError
    from autograd_cli.grammar import limits

    monkeypatch.setattr(limits, limit, 20)
    with pytest.raises(LimitError) as info:
        autograd_cli.evaluate(text)
    assert advice.format("values") in str(info.value) and not FLAG.search(str(info.value))
    r = cli("eval", text, "--json")
    assert r.code == 1 and advice.format("--vars") in r.json["error"]["message"]
    path = tmp_path / "lines.jsonl"
    path.write_text(json.dumps({"expr": text}) + "\n")
    record = json.loads(cli("batch", str(path)).out)
    assert record["error"]["kind"] == "limit"
    assert advice.format('"vars"') in record["error"]["message"]
