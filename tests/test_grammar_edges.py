"""Edges of the grammar (issue 16): mistakes the parse-time builder catches, the fallback when
the shipped parser tables cannot be imported, and the table generator's command line.

Oracles: SPEC.md's exit codes and the README's error kinds for what the user typed wrong (exit
2), NumPy for values, and the committed ``grammar/_tables.py`` for what the generator writes.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import lark
import numpy as np
import pytest

import autograd_cli.grammar as grammar_package
from autograd_cli.core import api
from autograd_cli.core.errors import ParseError
from autograd_cli.grammar import _tables, build_tables
from autograd_cli.grammar import parser as P

TABLES_FILE = Path(P.__file__).with_name("_tables.py")
SAME_LARK = lark.__version__ == _tables.LARK_VERSION


# ---- mistakes found while building the graph: exit 2 with the README's kind ------------------


@pytest.mark.parametrize(
    "expr, error",
    [
        ("x[1.5]", {"kind": "input", "message": "an index must be an integer, got 1.5"}),
        # no position is known here: the document has no null line/column
        ("x[y]", {"kind": "input", "message": "an index must be a constant number"}),
        (
            "[[1], 2]",
            {
                "kind": "bad_value",
                "message": "ragged array literal at line 1, column 1: element 2 is a number but "
                "element 1 has shape (1,) (every row must have the same length)",
                "line": 1,
                "column": 1,
            },
        ),
        (
            "sum(x, axis=0, axis=1)",
            {
                "kind": "arity",
                "message": "sum(): a keyword argument is repeated",
                "line": 1,
                "column": 1,
            },
        ),
        (
            "2 * reshape(x)",
            {
                "kind": "arity",
                "message": "reshape() takes 2 arguments, got 1",
                "function": "reshape",
                "line": 1,
                "column": 5,
            },
        ),
        (
            "reshape(x, [2, 1.5])",
            {
                "kind": "input",
                "message": "the shape of reshape() must be a list of integers",
                "line": 1,
                "column": 1,
            },
        ),
        (
            "sum(x, foo=1)",
            {
                "kind": "arity",
                "message": "sum(): unexpected keyword argument(s) foo",
                "function": "sum",
                "line": 1,
                "column": 1,
            },
        ),
        (
            "x + sin(x, axis=0)",
            {
                "kind": "arity",
                "message": "sin() takes no keyword arguments",
                "function": "sin",
                "line": 1,
                "column": 5,
            },
        ),
        (
            "y = x + 1; x = 2; x",
            {
                "kind": "input",
                "message": "'x' is used as an input before it is assigned",
                "line": 1,
                "column": 12,
            },
        ),
    ],
)
def test_builder_mistakes_are_exit_2(cli, expr, error):
    r = cli("eval", expr, "--x", "[[1, 2], [3, 4]]", "--json")
    assert r.code == 2, r.out
    assert r.json == {"error": error}


def test_the_same_expressions_done_right_agree_with_numpy(cli):
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    cases = {
        "x[1]": x[1],
        "x[-1, 0]": x[-1, 0],
        "sum(x, axis=1)": x.sum(axis=1),
        "reshape(x, [4, 1])": x.reshape(4, 1),
        "reshape(x, 4)": x.reshape(4),
        "y = x + 1; y * 2": (x + 1) * 2,
    }
    for expr, expected in cases.items():
        r = cli("eval", expr, "--x", "[[1, 2], [3, 4]]", "--json")
        assert r.code == 0, (expr, r.out)
        assert np.array_equal(np.asarray(r.json["value"]), expected), expr
        assert r.json["shape"] == list(np.shape(expected)), expr


# ---- the shipped tables cannot be imported: the grammar is used instead ----------------------


def test_missing_tables_module_falls_back_to_the_grammar(monkeypatch, fresh_parser):
    monkeypatch.delattr(grammar_package, "_tables")
    monkeypatch.setitem(sys.modules, "autograd_cli.grammar._tables", None)
    grammar = P.grammar_bytes()
    assert P.load_tables(grammar, P.Builder(), P._NewlinesInBrackets()) is None
    parser = P.default_parser()
    assert parser.engine == "lark-grammar"  # built from expr.lark, in memory
    assert not parser.uses_shipped_tables
    program = P.parse("a = x + w; b = w + 1; a * b")
    result = api.grad_of(program, {"x": 2.0, "w": 1.0})
    # (x + w) * (w + 1) at x = 2, w = 1: 6; d/dx = w + 1 = 2, d/dw = x + 2w + 1 = 5
    assert float(result.value) == 6.0
    assert {k: float(v) for k, v in result.grad.items()} == {"x": 2.0, "w": 5.0}


def test_the_default_parser_is_built_once_and_can_be_rebuilt(fresh_parser):
    first = P.default_parser()
    assert P.default_parser() is first
    P.default_parser.cache_clear()
    second = P.default_parser()
    assert second is not first and second.builder is not first.builder
    own = P.Parser.build()  # a parser of one's own (one per thread, say)
    assert own.parse("a = x*y; a + 1").inputs == P.parse("a = x*y; a + 1").inputs == ["x", "y"]
    assert P.default_parser() is second  # building one leaves the default alone
    with pytest.raises(ParseError, match="empty expression"):
        own.parse("  \n")


# ---- python -m autograd_cli.grammar.build_tables ---------------------------------------------


@pytest.mark.skipif(not SAME_LARK, reason="the shipped tables are for another Lark version")
def test_check_passes_on_the_shipped_tables(capsys):
    assert build_tables.main(["--check"]) == 0
    assert capsys.readouterr().out == f"{build_tables.TABLES_PATH} is up to date\n"


@pytest.mark.skipif(not SAME_LARK, reason="the shipped tables are for another Lark version")
def test_writing_a_missing_tables_file_gives_the_shipped_bytes(tmp_path, monkeypatch, capsys):
    target = tmp_path / "_tables.py"
    monkeypatch.setattr(build_tables, "TABLES_PATH", str(target))
    # --check: a missing file is out of date
    assert build_tables.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert err == (f"{target} is out of date: run python -m autograd_cli.grammar.build_tables\n")
    # the default mode writes it: the same bytes as the committed module
    assert build_tables.main([]) == 0
    assert capsys.readouterr().out == f"wrote {target}\n"
    assert target.read_bytes() == TABLES_FILE.read_bytes()
    assert os.listdir(tmp_path) == ["_tables.py"]  # the temporary ".new" file is gone
    # a second run finds it current and leaves it alone
    before = os.stat(target)
    assert build_tables.main([]) == 0
    assert capsys.readouterr().out == f"{target} is up to date\n"
    after = os.stat(target)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


@pytest.mark.skipif(not SAME_LARK, reason="the shipped tables are for another Lark version")
def test_a_stale_tables_file_is_reported_then_replaced(tmp_path, monkeypatch, capsys):
    target = tmp_path / "_tables.py"
    stale = TABLES_FILE.read_text(encoding="utf-8").replace(_tables.GRAMMAR_SHA256, "0" * 64)
    target.write_text(stale, encoding="utf-8")
    monkeypatch.setattr(build_tables, "TABLES_PATH", str(target))
    assert build_tables.main(["--check"]) == 1
    assert "is out of date" in capsys.readouterr().err
    assert target.read_text(encoding="utf-8") == stale  # --check writes nothing
    assert build_tables.main([]) == 0
    assert target.read_bytes() == TABLES_FILE.read_bytes()


def test_threads_sharing_the_default_parser_see_only_their_own_names():
    # A Dask worker's threads parse at once (batch --engine dask); the parser's builder holds
    # the text being parsed, so parse() takes turns (it once gave one thread another's names)
    import sys
    import threading

    from autograd_cli.grammar import parse

    texts = [f"v{i}*sin(w{i}) + v{i}**2" for i in range(16)]
    wrong: list = []
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:

        def work(i: int) -> None:
            for _ in range(100):
                inputs = parse(texts[i]).inputs
                if inputs != [f"v{i}", f"w{i}"]:
                    wrong.append((i, inputs))

        threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(switch)
    assert wrong == []
