"""Parse the expression language into an expression graph, during the LALR parse.

Each rule's callback is a method of the :class:`Builder`, run as the LALR parser reduces
the rule: the graph is built bottom-up on the parser's own stack, without a tree and
without recursion, however deep the input nests.  The LALR tables ship inside the package
as ``_tables.py``, a module of plain literals that Lark generates from ``expr.lark``
(``python -m autograd_cli.grammar.build_tables``), and :mod:`.lalr` runs them the way Lark
does, without importing Lark (a tenth of a cold start).  Nothing is cached on disk and
nothing is unpickled: Lark's ``cache=True`` would unpickle a file from the shared temp
folder, whose name anyone can predict.  When the runtime cannot run the tables (they use a
feature it does not reproduce), Lark loads them; when they do not fit (an edited grammar),
the parser is built by Lark from ``expr.lark`` in memory instead: slower, never a file.

A :class:`Parser` pairs the engine with its builder; :func:`parse` uses the one
:func:`default_parser` builds on first use and keeps (a cache, the module's only state).
This module holds the parse itself: the text's and the token stream's limits, the choice
of engine, and the lock.  The rest of the package, by concern: :mod:`.builder` (the rule
callbacks), :mod:`.calls` (a call checked against the op table), :mod:`.values` (what a
parse makes that is not a node), :mod:`.syntax_errors` (the message of a syntax error),
:mod:`.limits` (every limit, in one place) and :mod:`.lalr` (the LALR runtime).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import threading
from typing import Any, cast

from ..core.autograd import gc_paused
from ..core.errors import InputError, LimitError, ParseError
from ..core.program import Program
from . import lalr, limits
from .builder import Builder, _LarkCallbacks
from .limits import (  # noqa: F401 - the limits, where callers have read them
    MAX_ARRAY_DEPTH,
    MAX_ARRAY_ELEMENTS,
    MAX_NESTING,
    MAX_SOURCE_CHARS,
    MAX_STATEMENTS,
    MAX_TOKENS,
)
from .syntax_errors import _syntax_error


class _NewlinesInBrackets:
    """Post-lexer: newlines inside () or [] are whitespace, elsewhere they separate statements.

    It also enforces :data:`MAX_NESTING`, :data:`MAX_STATEMENTS` and :data:`MAX_TOKENS` as the tokens stream
    by, so an input past a limit stops there, before the rest of it is parsed.
    """

    always_accept = ("_NL",)

    def process(self, stream):
        """Lark's post-lexer protocol: the tokens of ``stream`` that :meth:`feeder` keeps."""
        keep = self.feeder()
        for tok in stream:
            if keep(tok.type, getattr(tok, "line", None), getattr(tok, "column", None)):
                yield tok

    def feeder(self, text: str | None = None):
        """A new parse's check of each token as it is lexed: ``keep(kind, line, column)``
        (the token's terminal and position) is False for a newline inside brackets
        (whitespace) and raises past a limit.  The LALR runtime calls it token by token
        (no generator between the lexer and the parser, and no Token made for punctuation).

        Given the ``text``, None where no token of it can be dropped or reach a limit: no
        newline, and fewer brackets, separators and characters than the limits allow
        (counts of characters that bound the depth, the statements and the tokens)."""
        max_nesting, max_tokens = limits.MAX_NESTING, limits.MAX_TOKENS
        max_statements = limits.MAX_STATEMENTS
        if (
            text is not None
            and "\n" not in text
            and len(text) <= max_tokens
            and text.count("(") + text.count("[") <= max_nesting
            and text.count(";") < max_statements
        ):
            return None
        depth = 0
        statements = 0
        counted = 0  # numbers, names, strings and operators (MAX_TOKENS)
        after_separator = True  # the next token at depth 0 starts a statement

        def keep(kind: str, line, column) -> bool:
            nonlocal depth, statements, counted, after_separator
            if kind in _PUNCTUATION:
                if kind == "LPAR" or kind == "LSQB":
                    depth += 1
                    if depth > max_nesting:
                        raise LimitError(
                            f"the expression nests brackets more than {max_nesting:,} deep "
                            f"(line {line}, column {column})",
                            line=line,
                            column=column,
                        )
                elif kind == "RPAR" or kind == "RSQB":
                    depth = depth - 1 if depth else 0
                elif kind == "_NL" and depth:
                    return False
            else:
                counted += 1
                if counted > max_tokens:
                    raise _too_many_tokens(
                        f"line {line}, column {column}", line=line, column=column
                    )
            if (kind == "_NL" or kind == "SEMICOLON") and not depth:
                after_separator = True
            elif after_separator:
                after_separator = False
                statements += 1
                if statements > max_statements:
                    raise LimitError(
                        f"the program has more than {max_statements:,} statements "
                        f"(line {line}, column {column})",
                        line=line,
                        column=column,
                    )
            return True

        return keep


#: the tokens MAX_TOKENS does not count: brackets (bounded by what they hold), commas and
#: statement separators
_PUNCTUATION = frozenset(("LPAR", "RPAR", "LSQB", "RSQB", "COMMA", "SEMICOLON", "_NL"))

# What _fewest_tokens reads: strings and comments (whose text is no token), names and
# numbers (expr.lark's NAME and NUMBER), and the characters of operators ('**' and the
# two-character comparisons are the longest: two of them).
_STRINGS_AND_COMMENTS = re.compile(r"\"[^\"\n]*\"|'[^'\n]*'|#[^\n]*")
_WORDS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[jJ]?")
_OPERATOR_CHARS = "+-*/@^<>=!:"


def _fewest_tokens(text: str) -> int:
    """At most as many as the tokens :data:`MAX_TOKENS` counts in ``text``, found at the
    speed of ``str.count`` and one regular expression (a second a 10 MB text, where parsing
    up to the limit takes several): every name and number, and half the operator
    characters (an operator has at most two, a number's exponent sign is in the number)."""
    if '"' in text or "'" in text or "#" in text:
        text = _STRINGS_AND_COMMENTS.sub(" ", text)
    operators = (sum(map(text.count, _OPERATOR_CHARS)) + 1) // 2
    if operators > limits.MAX_TOKENS:
        return operators
    rest, words = _WORDS.subn("", text)
    return words + (sum(map(rest.count, _OPERATOR_CHARS)) + 1) // 2


def _too_many_tokens(where: str, **details) -> LimitError:
    """The error of a text with too many tokens; its advice names the library's ``values``
    (the command line spells it ``--vars``, a batch line ``"vars"``)."""
    return LimitError.naming(
        "the expression has more than {limit} numbers, names and operators ({where}); give "
        "large arrays as variables' values ({values}) and reduce them (sum(x), x @ y) "
        "instead of writing out each term",
        {"limit": f"{limits.MAX_TOKENS:,}", "where": where},
        **details,
    )


#: The options the parser is built with, here and by ``build_tables`` (the one place
#: they are written).  ``transformer`` and ``postlex`` are objects, passed on each build.
LARK_OPTIONS = {"parser": "lalr", "lexer": "contextual", "maybe_placeholders": True}

GRAMMAR_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "expr.lark")


def grammar_bytes() -> bytes:
    """The bytes of the shipped ``expr.lark`` (the one source of truth for the language)."""
    with open(GRAMMAR_PATH, "rb") as f:
        return f.read()


def build_from_grammar(grammar: bytes, builder: Builder, postlex) -> Any:
    """Lark's parser built from the grammar text, in memory (no ``cache``: no file is read
    or written).

    ``build_tables`` serializes a parser built here, so the tables and this fallback
    always use the same options.
    """
    from lark import Lark  # the fallbacks alone need Lark: 20 ms of import the runtime skips

    return Lark(
        grammar.decode("utf-8"),
        transformer=_LarkCallbacks(builder),
        postlex=postlex,
        **LARK_OPTIONS,
    )


def load_tables(grammar: bytes, builder: Builder, postlex) -> Any:
    """The engine that runs the shipped ``_tables`` module, or None when they do not fit.

    They fit when they were generated from these options and from these grammar bytes.
    Reading and hashing the 2 KB grammar costs about 0.01 ms per start; it is done so that
    an edited ``expr.lark`` whose tables were not regenerated still parses by the grammar
    (slowly) instead of by stale tables.  (``tests/test_parser_tables.py`` fails on stale
    tables too.)  The engine is :mod:`.lalr`'s runtime, which needs no Lark; where it
    refuses the tables, Lark's own loader, if the tables were written by the installed Lark
    (its serialization format is internal: Lark's own cache is keyed by its version too).
    """
    try:  # here, where a missing or broken tables module means the grammar (18 ms of import)
        from . import _tables
    except (ImportError, SyntaxError):
        return None
    if getattr(_tables, "GRAMMAR_SHA256", None) != hashlib.sha256(grammar).hexdigest():
        return None
    try:
        options = _tables.DATA["options"]
        if any(options.get(k) != v for k, v in LARK_OPTIONS.items()):
            return None
    except (KeyError, TypeError, AttributeError):
        return None
    runtime = lalr.load(_tables.DATA, _tables.MEMO, builder, postlex)
    if runtime is not None:
        return runtime
    import lark  # the fallbacks alone need Lark: 20 ms of import the runtime skips
    from lark.exceptions import LarkError

    if getattr(_tables, "LARK_VERSION", None) != lark.__version__:
        return None
    try:
        return lark.Lark._load_from_dict(
            _tables.DATA, _tables.MEMO, transformer=_LarkCallbacks(builder), postlex=postlex
        )
    except (LarkError, KeyError, IndexError, TypeError, ValueError, AttributeError, AssertionError):
        # A format this Lark cannot read after all: build from the grammar instead.
        return None


class Parser:
    """A parser of the expression language: an LALR engine and the :class:`Builder` it runs.

    Build one with :meth:`from_tables` (the shipped tables, fast), :meth:`from_grammar`
    (``expr.lark`` in memory, slow) or :meth:`build` (the first, else the second); or
    use the one :func:`default_parser` keeps.  A parser parses one text at a time (its
    builder holds the text being parsed), so :meth:`parse` holds the parser's lock: threads
    that share it (a Dask worker's, a server's) take turns, and none sees another's names.

    ``engine`` is "runtime" (:mod:`.lalr` on the shipped tables), "lark-tables" (Lark on
    the shipped tables) or "lark-grammar" (Lark, built from ``expr.lark``).
    """

    __slots__ = ("engine", "builder", "_parse", "_errors", "_lock")

    def __init__(self, engine: Any, builder: Builder):
        self.builder = builder
        self._parse = engine.parse
        if isinstance(engine, lalr.Runtime):
            self.engine = "runtime"
            self._errors: tuple = (lalr.UnexpectedInput,)
        else:
            from lark.exceptions import UnexpectedInput  # a Lark engine: Lark is loaded already

            self.engine = (
                "lark-tables" if engine.source_path == "<deserialized>" else "lark-grammar"
            )  # Lark's mark for a parser loaded from data
            self._errors = (UnexpectedInput,)
        self._lock = threading.Lock()

    @classmethod
    def from_tables(cls, grammar: bytes | None = None) -> Parser | None:
        """The parser from the shipped tables, or None when they do not fit (:func:`load_tables`)."""
        builder = Builder()
        grammar = grammar_bytes() if grammar is None else grammar
        engine = load_tables(grammar, builder, _NewlinesInBrackets())
        return None if engine is None else cls(engine, builder)

    @classmethod
    def from_grammar(cls, grammar: bytes | None = None) -> Parser:
        """The parser built from the grammar text, in memory (:func:`build_from_grammar`)."""
        builder = Builder()
        grammar = grammar_bytes() if grammar is None else grammar
        return cls(build_from_grammar(grammar, builder, _NewlinesInBrackets()), builder)

    @classmethod
    def build(cls) -> Parser:
        """The parser from the shipped tables when they fit, else from the grammar."""
        grammar = grammar_bytes()
        return cls.from_tables(grammar) or cls.from_grammar(grammar)

    @property
    def uses_shipped_tables(self) -> bool:
        return self.engine != "lark-grammar"

    def parse(self, text: str) -> Program:
        """Parse ``text`` (an expression or a program) into a :class:`Program`."""
        if len(text) > limits.MAX_SOURCE_CHARS:
            raise LimitError(
                f"the expression is {len(text):,} characters long; the limit is "
                f"{limits.MAX_SOURCE_CHARS:,} (16 MiB)"
            )
        if not text.strip():
            raise ParseError("empty expression", line=1, column=1, context="\n^")
        if len(text) > limits.MAX_TOKENS:  # a shorter text cannot hold more tokens
            fewest = _fewest_tokens(text)
            if fewest > limits.MAX_TOKENS:  # refused at once; the parse would stop there too, later
                raise _too_many_tokens(f"at least {fewest:,}")
        with self._lock:
            self.builder.reset(text)
            try:
                # what Builder.program returns (Lark types its parse() as giving a Tree);
                # the collector paused: a parse makes several objects a token, no cycles
                with gc_paused():
                    return cast(Program, self._parse(text))
            except self._errors as exc:
                raise _syntax_error(text, exc) from None
            except RecursionError:  # pragma: no cover - the build is iterative; a guard
                raise InputError("expression nests too deeply to parse") from None
            finally:
                self.builder.reset("")


@functools.cache
def default_parser() -> Parser:
    """The parser :func:`parse` uses: built by :meth:`Parser.build` on the first call, then
    the same object on every call.  The state of this module is this cache and nothing
    else; ``default_parser.cache_clear()`` forgets it (the next call builds it again).
    """
    return Parser.build()


def parse(text: str) -> Program:
    """Parse ``text`` (an expression or a program) into a :class:`Program`, with the
    :func:`default_parser`.

    >>> parse("-x**2").output.op
    'neg'
    """
    return default_parser().parse(text)
