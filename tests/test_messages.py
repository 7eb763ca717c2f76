"""Messages that say what to write: each suggestion is followed here, and it works (issue 23)."""

from __future__ import annotations

import io
import json
import math
import re
import shlex
import sys

import pytest

from autograd_cli.core.ops import FUNCTIONS

MATRIX = "[[1, 2], [3, 4]]"


def _error(r, code: int, kind: str) -> str:
    """The message of a run that must fail with ``code`` and ``kind`` (JSON output)."""
    assert r.code == code, r.out + r.err
    error = r.json["error"]
    assert error["kind"] == kind, error
    return error["message"]


def test_a_json_object_given_to_one_variable_suggests_vars(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "vars.json").write_text(json.dumps({"x": [1, 2], "y": 3}))
    for argv in (["--x", "@vars.json"], ["--var", "x=@vars.json"]):
        message = _error(cli("eval", "sum(x)*y", *argv, "--json"), 2, "usage")
        advice = re.search(r"give it as (--vars @\S+)", message)
        assert advice is not None, message
        r = cli("eval", "sum(x)*y", *shlex.split(advice.group(1)), "--json")
        assert r.code == 0 and r.json["value"] == 9.0, r.out
    # a file of one array is still read as it was
    (tmp_path / "x.json").write_text("[1, 2]")
    assert cli("eval", "sum(x)", "--x", "@x.json", "--json").json["value"] == 3.0


def test_an_unknown_function_points_to_the_list_instead_of_printing_it(cli, monkeypatch):
    message = _error(cli("grad", "ln(x)", "--x", "1", "--json"), 2, "unknown_function")
    assert "did you mean 'log'?" in message
    words = set(re.findall(r"\w+", message))
    assert not words & {"abs", "acos", "cholesky", "tanh", "where"}, message  # no list
    assert f"list all {len(FUNCTIONS)}" in message and ":functions" in message
    # the place it points to lists them all
    monkeypatch.setattr(sys, "stdin", io.StringIO(":functions\n"))
    r = cli("repl", "--json")
    assert r.code == 0 and set(r.json["functions"]) == set(FUNCTIONS)


@pytest.mark.parametrize(
    "prefix, string, rest",
    [
        ("x**", "'fro'", ""),
        ("2 * ", "'fro'", ""),
        ("(", "'fro'", ")"),
        ("a = ", "'fro'", "; a"),
        ("x == ", "'fro'", ""),
        ("[1, ", "'fro'", "]"),
        ("sum(", "'fro'", ")"),
        ("x[", "'fro'", "]"),
        ("norm(x, ", "'fro'", ")"),  # norm's second argument is its axis
        ("norm(x, axis=", "'fro'", ")"),
        ("norm(x, ord=2 + ", "'fro'", ")"),
        ("norm((", "'fro'", "))"),
        ("norm(x, ord=", "'fro'", ")"),  # offered: these three are where strings go
        ("einsum(", "'ij->'", ", x)"),
        ("2*einsum(", "'ij->'", ", x)"),
        ("einsum('ij->', ", "'ij'", ")"),
        ("einsum('ij,jk', x, ", "'ij'", ")"),
    ],
)
def test_a_string_is_expected_only_where_one_may_stand(cli, prefix, string, rest):
    message = _error(cli("eval", prefix, "--x", MATRIX, "--json"), 2, "syntax")
    assert "expected '(', " in message and "a number" in message, message
    offered = "a string" in message
    r = cli("eval", prefix + string + rest, "--x", MATRIX, "--json")
    assert offered == (r.code == 0), (message, r.out)


def _suggestion(message: str) -> str:
    found = re.search(r": write (\S+)\)$", message)
    assert found is not None, message
    return found.group(1)


@pytest.mark.parametrize(
    "expr, values, side_by_side, want",
    [
        ("sin(30 deg)", {}, "30 deg", math.sin(math.radians(30))),
        ("cos(x degrees)", {"x": 60}, "x degrees", math.cos(math.radians(60))),
        ("sin(2 Deg) + 1", {}, "2 Deg", math.sin(math.radians(2)) + 1),
        ("sin(1 rad)", {}, "1 rad", math.sin(1)),
        ("2x + 1", {"x": 3}, "2x", 7.0),
        ("sin(x y)", {"x": 2, "y": 2}, "x y", math.sin(4)),
    ],
)
def test_the_multiplication_hint_is_something_that_evaluates(cli, expr, values, side_by_side, want):
    # `sin(30 deg)` suggested 30*deg: deg is no constant, so that failed with "no value"
    options = [a for name, v in values.items() for a in (f"--{name}", str(v))]
    message = _error(cli("eval", expr, *options, "--json"), 2, "syntax")
    fixed = expr.replace(side_by_side, _suggestion(message))
    r = cli("eval", fixed, *options, "--json")
    assert r.code == 0, (message, r.out)
    assert r.json["value"] == pytest.approx(want)
