"""Library error messages name parameters as the library does (``wrt``, ``grad_output``),
never a command-line flag (``--wrt``): the command line adds its spelling where it reports
the error (``cli/status.py``'s ``classify``, through ``AutogradCliError.spelled``)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from autograd_cli.core.errors import InputError

CORE = Path(__file__).resolve().parents[1] / "core"
FLAG = re.compile(r"(?<![\w-])--[a-z]")

#: files whose messages still name a flag, each with why (not this change's to rewrite)
NOT_YET: dict[str, str] = {}  # a module's name -> why its messages still name a flag


def _is_error_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    return name.endswith("Error") or name == "naming"


def _texts(node: ast.AST):
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            yield sub.lineno, sub.value


def flagged(path: Path) -> list[str]:
    """Each string of an error's message in ``path`` that names ``--something``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None or _is_error_call(node):
            targets = [node.exc if isinstance(node, ast.Raise) else node]
        elif isinstance(node, ast.arguments):  # a label's default (what="--max-iter")
            targets = [d for d in node.defaults + node.kw_defaults if d is not None]
        else:
            continue
        for target in targets:
            for line, text in _texts(target):
                if FLAG.search(text):
                    found.append(f"{path.name}:{line}: {text!r}")
    return sorted(set(found))


def test_no_library_error_message_names_a_flag():
    bad = [
        hit
        for path in sorted(CORE.rglob("*.py"))
        if path.name not in NOT_YET
        for hit in flagged(path)
    ]
    assert not bad, "\n".join(bad)


def test_the_scan_finds_a_flag_in_a_message(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text(
        'def f(n):\n    raise InputError(f"--order must be 1, not {n}")\n'
        'def g():\n    return ShapeError.naming("{grad_output} has --a-flag")\n'
        'def h(what="--max-iter"):\n    return what\n'
    )
    assert [hit.split(":")[1] for hit in flagged(planted)] == ["2", "4", "5"]


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
