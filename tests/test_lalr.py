"""grammar/lalr.py runs the shipped tables exactly as Lark runs them.

The runtime exists for speed (no Lark import at run time, a leaner per-token loop); Lark stays
the parser of record.  Every input here goes through both, the runtime on the shipped tables
and Lark built from ``expr.lark``, and the outcomes must be identical: the same Program (every
node, sharing included), or the same exception with the same position, the same token, the
same expected set and the same token history; and, through :meth:`Parser.parse`, the same
message.  The inputs are the fuzzer's generators (valid programs, token-level mutations of
them, random text with odd Unicode and control characters), fixed seeds, and hand-picked edges.
"""

from __future__ import annotations

import copy
import json
import os
import random
import subprocess
import sys

import fuzzgen as fg
import pytest
from program_dump import dump, outcome

from autograd_cli.core.errors import AutogradCliError
from autograd_cli.grammar import lalr
from autograd_cli.grammar import parser as P


@pytest.fixture(scope="module")
def parsers():
    ours = P.Parser.from_tables()
    assert ours is not None and ours.engine == "runtime", "the runtime refused the tables"
    theirs = P.Parser.from_grammar()
    assert theirs.engine == "lark-grammar"
    return ours, theirs


_dump = dump


def _token(t) -> tuple | None:
    return None if t is None else (t.type, str(t), t.start_pos, t.line, t.column)


def _raw(parser, text: str) -> tuple:
    """What the engine itself gives: the Program, or the exception and all it carries."""
    parser.builder.reset(text)
    try:
        return ("ok", _dump(parser._parse(text)))
    except AutogradCliError as exc:  # raised by the builder or the post-lexer: the same class
        return (type(exc).__name__, exc.message, tuple(sorted(exc.details.items())))
    except parser._errors as exc:
        history = getattr(exc, "token_history", None)
        return (
            type(exc).__name__,
            exc.line,
            exc.column,
            exc.pos_in_stream,
            tuple(sorted(getattr(exc, "expected", None) or ())),
            tuple(sorted(getattr(exc, "allowed", None) or ())),
            _token(getattr(exc, "token", None)),
            None if history is None else tuple(_token(t) for t in history),
        )
    finally:
        parser.builder.reset("")


_message = outcome


def _same(parsers, text: str) -> tuple:
    ours, theirs = parsers
    raw = _raw(ours, text)
    assert raw == _raw(theirs, text), text
    seen = _message(ours, text)
    assert seen == _message(theirs, text), text
    return raw


EDGES = [
    "",
    " ",
    "\n",
    "x\n\n",
    "\n\nx",
    "(\n x \n)",
    "[1,\n 2]\n",
    "# only a comment",
    "x # a comment",
    "x;;y",
    ";x;",
    "a = 1\nb = a + x\n\nb * 2",
    "a = ",
    "=",
    "= x",
    "x y",
    "2x",
    "(a)(b)",
    "sin x",
    "sin(x) cos(x)",
    "x ! y",
    "x $ y",
    "x @@ y",
    "x ** -y ^ 2",
    "-x**2",
    "x < y <= z == 1",
    "x[1:2, ::-1, 0]",
    "x.T.T'",
    "f(x=1)",
    "sum(x, axis=0, keepdims=1)",
    "einsum('ij,jk->ik', a, b)",
    'norm(x, ord="fro")',
    "'abc'",
    "'abc",
    '"a\nb"',
    "a, b, c = split(x, 3); a + b",
    "a, b = split(x, 3)",
    "U, S, Vh = svd(A); U @ Vh",
    "split(x, 2) + 1",
    "[[1, 2], [3, 4]] @ x",
    "[1, 2,]",
    "[]",
    "()",
    "1e400",
    "9" * 400,
    "1.5e",
    ".5 + 5.",
    "x\r\ny",
    "x\ry",
    "x\u00a0+ y",
    "x + \x00",
    "\t x \t",
    "\ufeffx",
    "é + 1",
    "x + 1 # trailing\n# and more\n",
]


@pytest.mark.parametrize("text", EDGES)
def test_edges_parse_as_lark_parses_them(parsers, text):
    _same(parsers, text)


def test_the_comparison_can_fail(parsers):
    # the outcomes tell programs and errors apart, positions and tokens included
    ours, _ = parsers
    assert _raw(ours, "x + 1") != _raw(ours, "1 + x")
    assert _raw(ours, "u = x*x; u + u") != _raw(ours, "x*x + x*x")
    a, b = _raw(ours, "x + * 2"), _raw(ours, "x  + * 2")
    assert a[0] == b[0] == "UnexpectedToken" and (a[2], b[2]) == (5, 6)
    assert _raw(ours, "x $ 2")[0] == "UnexpectedCharacters"


@pytest.mark.parametrize("seed", range(4))
def test_valid_programs(parsers, seed):
    rng = random.Random(seed)
    outcomes = [_same(parsers, fg.valid_program(rng))[0] for _ in range(150)]
    assert outcomes.count("ok") > 100  # the generator's programs mostly parse


@pytest.mark.parametrize("seed", range(4))
def test_mutated_programs(parsers, seed):
    rng = random.Random(100 + seed)
    kinds = {_same(parsers, fg.mutate(rng, fg.valid_program(rng)))[0] for _ in range(150)}
    assert {"ok", "UnexpectedToken", "UnexpectedCharacters"} <= kinds


@pytest.mark.parametrize("seed", range(4))
def test_random_text(parsers, seed):
    rng = random.Random(200 + seed)
    for _ in range(200):
        _same(parsers, fg.random_text(rng))


def test_token_soup(parsers):
    # sequences of the language's own tokens: every parser state meets every terminal
    rng = random.Random(7)
    tokens = [
        "x", "y", "1", "2.5", "(", ")", "[", "]", ",", ";", "\n", "=", "+", "-", "*", "/",
        "@", "**", "^", "<", "<=", "==", ":", ".T", "'", "'ij'", "sin", "axis", " ", "#c\n",
    ]  # fmt: skip
    for _ in range(600):
        _same(parsers, "".join(rng.choice(tokens) for _ in range(rng.randint(1, 12))))


def test_deep_and_long_inputs(parsers):
    _same(parsers, "(" * 200 + "x" + ")" * 200)
    _same(parsers, "-" * 500 + "x")
    _same(parsers, "x" + " + x" * 3000)
    _same(parsers, "\n".join(f"v{i} = v{i - 1} * 2" if i else "v0 = x" for i in range(500)))
    _same(parsers, "(" * (P.MAX_NESTING + 1) + "x")  # the post-lexer's limit, as it streams
    _same(parsers, "x" + " + x" * 3000 + " +")


def test_a_100000_deep_chain_parses_without_recursion():
    program = P.Parser.from_tables().parse("x" + " * x" * 100_000)
    assert program.inputs == ["x"] and program.output.op == "mul"


def test_tables_the_runtime_cannot_run_are_refused():
    # a keyword that the NAME regexp also matches is Lark's "unless" callback: refused, so
    # that Lark loads such tables instead of the runtime running them differently
    lark = pytest.importorskip("lark")
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    grammar = """
        start: "if" NAME | NAME
        NAME: /[a-z]+/
        %ignore " "
    """
    parser = lark.Lark(grammar, parser="lalr", lexer="contextual", maybe_placeholders=True)
    data, memo = parser.memo_serialize([TerminalDef, Rule])
    assert lalr.load(data, memo, P.Builder(), None) is None
    # the same grammar without the overlap runs
    plain = lark.Lark(grammar.replace('"if" NAME', '"!" NAME'), parser="lalr", lexer="contextual")
    data, memo = plain.memo_serialize([TerminalDef, Rule])
    data["options"]["maybe_placeholders"] = True
    runtime = lalr.load(data, memo, P.Builder(), None)
    assert runtime is not None
    tree = runtime.parse("! abc")
    assert (tree.data, [str(c) for c in tree.children]) == ("start", ["abc"])


def test_a_run_does_not_import_lark():
    code = (
        "import sys; from autograd_cli.grammar import parse, default_parser; "
        "p = parse('a = x + 1; a * y'); import json; "
        "print(json.dumps([p.inputs, 'lark' in sys.modules, default_parser().engine]))"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [["x", "y"], False, "runtime"]


# ---- the runtime on other grammars, and the tables it refuses ----------------------------------

SMALL_GRAMMAR = r"""
    start: item (";" item)*
    ?item: pair | triple | NAME
    pair: NAME "=" value
    triple: "let" NAME [":" NAME] "=" value
    ?value: NAME | NUMBER | "(" value ")" | _list
    _list: "[" [value ("," value)*] "]"
    ?couple: NAME NAME
    NAME: /[a-z]+/
    NUMBER: /\d+/i
    %ignore /[ \t\n]+/
"""


def _tree(t):
    """A Lark Tree or a runtime Tree, a Token or None, as plain data."""
    if t is None:
        return None
    if hasattr(t, "children"):
        return (t.data, [_tree(c) for c in t.children])
    return (t.type, str(t))


def test_another_grammar_builds_the_trees_lark_builds():
    # inlined rules, [optional] placeholders, ?rules with one and with several children,
    # anonymous punctuation filtered out, a flagged pattern; no callbacks: Trees everywhere
    lark = pytest.importorskip("lark")
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    theirs = lark.Lark(SMALL_GRAMMAR.replace('"let"', '"!"'), parser="lalr", lexer="contextual")
    data, memo = theirs.memo_serialize([TerminalDef, Rule])
    data["options"]["maybe_placeholders"] = True
    ours = lalr.load(data, memo, object(), None)
    assert ours is not None
    texts = [
        "a = b",
        "! a = 1",
        "! a : b = (c)",
        "a = [1, b, (2)]; ! x = []; y",
        "a = [ ]",
        "a = ((((b))))",
        "a = [1, [2, [3]]]",
    ]
    for text in texts:
        assert _tree(ours.parse(text)) == _tree(theirs.parse(text)), text
    for bad in ("a =", "= a", "a = [1,", "! a b", "a = 1 2", "a ? b", ""):
        with pytest.raises(Exception) as ours_exc:
            ours.parse(bad)
        with pytest.raises(Exception) as theirs_exc:
            theirs.parse(bad)
        a, b = ours_exc.value, theirs_exc.value
        assert type(a).__name__ == type(b).__name__, bad
        assert (a.line, a.column) == (b.line, b.column), bad


def _spoiled(spoil: str):
    from autograd_cli.grammar import _tables

    data, memo = copy.deepcopy(_tables.DATA), copy.deepcopy(_tables.MEMO)
    terminal = memo[data["parser"]["lexer_conf"]["terminals"][0]["@"]]
    rule = next(m for m in memo.values() if m.get("__type__") == "Rule" and len(m["expansion"]) > 1)
    if spoil == "parser":
        data["options"]["parser"] = "earley"
    elif spoil == "lexer":
        data["options"]["lexer"] = "basic"
    elif spoil == "placeholders":
        data["options"]["maybe_placeholders"] = False
    elif spoil == "keep_all_tokens":
        data["options"]["keep_all_tokens"] = True
    elif spoil == "regex_flags":
        data["parser"]["lexer_conf"]["g_regex_flags"] = 2
    elif spoil == "pattern_type":
        terminal["pattern"]["__type__"] = "PatternOther"
    elif spoil == "start_states":
        data["parser"]["parser"]["start_states"]["other"] = 3
    elif spoil == "rule_options":
        rule["options"]["keep_all_tokens"] = True
    elif spoil == "empty_indices":
        rule["options"]["empty_indices"] = (False,)
    elif spoil == "missing_memo":
        memo.pop(data["parser"]["lexer_conf"]["terminals"][0]["@"])
    return data, memo


@pytest.mark.parametrize(
    "spoil",
    [
        "parser",
        "lexer",
        "placeholders",
        "keep_all_tokens",
        "regex_flags",
        "pattern_type",
        "start_states",
        "rule_options",
        "empty_indices",
        "missing_memo",
    ],
)
def test_tables_with_what_the_runtime_does_not_reproduce_are_refused(spoil):
    from autograd_cli.grammar import _tables

    assert lalr.load(_tables.DATA, _tables.MEMO, P.Builder(), None) is not None  # sanity
    data, memo = _spoiled(spoil)
    assert lalr.load(data, memo, P.Builder(), None) is None
