"""An LALR(1) runtime for the tables Lark generates from ``expr.lark`` (``_tables.py``).

Lark builds the tables (``build_tables.py``, at development time) and remains the parser of
record: this module runs those tables the way Lark 1.x's LALR parser with its contextual
lexer runs them, and ``tests/test_lalr.py`` checks that both give the same program, the same
errors and the same positions on thousands of inputs.  It exists for speed (issue 12):
importing Lark and loading its parser is about a tenth of a cold start, and Lark's general
per-token machinery was most of the time of parsing a long program.

What it reproduces, as Lark does it (``lark/lexer.py``, ``lark/parsers/lalr_parser_state.py``,
``lark/parse_tree_builder.py``):

* Contextual lexing: in each parser state only the terminals that state accepts (plus the
  ignored ones and the post-lexer's ``always_accept``) are tried, as one alternation ordered
  by priority, longest possible width, pattern length and name; when none matches, the
  whole terminal set is tried so the error names the token found (``UnexpectedToken`` with
  the previous token as history), else ``UnexpectedCharacters``.  Lines and columns count
  ``\\n`` only.
* The parse: shift, or reduce and goto, until the end token reaches the end state; an
  action missing from the table is ``UnexpectedToken`` expecting the state's terminals.
* Each rule's callback: the builder's method named by the rule's alias (else its name) with
  the children as arguments, children filtered as Lark filters them (anonymous punctuation
  dropped, ``_rule`` children spliced in, ``None`` for each absent ``[optional]``), and a
  ``?rule`` with one child passing that child through.

Tables with a feature this runtime does not reproduce (a string terminal that a regular
expression terminal also matches, Lark's "unless" callbacks; another parser or lexer) are
refused by :func:`load`, and the caller falls back to Lark itself.
"""

from __future__ import annotations

import functools
import operator
import re
from typing import Any

try:  # re's own parser of regular expressions (private: without it, no character is sure)
    from re import _parser as _re_parser  # type: ignore[attr-defined]  # Python >= 3.11
except ImportError:  # pragma: no cover - Python 3.10's name for it
    import sre_parse as _re_parser

# Lark's serialized actions (lark/parsers/lalr_analysis.py: Shift = 0, Reduce = 1)
_SHIFT = 0


class Token(str):
    """A token, as Lark's: the matched text (a ``str``), its terminal's name and position
    (``line`` and ``column`` 1-based, ``start_pos`` 0-based; the end positions Lark also
    keeps are not read by the parser and not kept)."""

    type: str
    start_pos: int
    line: int
    column: int

    def __new__(cls, type_: str, value: str, start_pos: int, line: int, column: int):
        self = str.__new__(cls, value)
        self.type = type_
        self.start_pos = start_pos
        self.line = line
        self.column = column
        return self

    def __repr__(self) -> str:
        return f"Token({self.type!r}, {str(self)!r})"


class Tree:
    """What a rule without a callback gives (Lark's default): only ever spliced into its
    parent (an ``_inlined`` rule) or handed to a callback."""

    __slots__ = ("data", "children")

    def __init__(self, data: str, children: list):
        self.data = data
        self.children = children


class UnexpectedInput(Exception):
    """A syntax error: ``line`` and ``column`` are 1-based, ``pos_in_stream`` 0-based."""

    line: int
    column: int
    pos_in_stream: int | None


class UnexpectedToken(UnexpectedInput):
    """A token the parser state does not accept (attributes as Lark's)."""

    def __init__(self, token: Token, expected: set, token_history: list | None = None):
        super().__init__(f"unexpected token {token!r}")
        self.token = token
        self.expected = expected
        self.token_history = token_history
        self.line = getattr(token, "line", -1)
        self.column = getattr(token, "column", -1)
        self.pos_in_stream = getattr(token, "start_pos", None)


class UnexpectedCharacters(UnexpectedInput):
    """Text that no terminal of the lexer's context matches (attributes as Lark's)."""

    def __init__(self, pos: int, line: int, column: int, allowed: set, token_history):
        super().__init__(f"no terminal matches at line {line}, column {column}")
        self.pos_in_stream = pos
        self.line = line
        self.column = column
        self.allowed = allowed
        self.token_history = token_history


class _Refused(Exception):
    """The tables use something this runtime does not reproduce."""


def _regexp(pattern: dict) -> str:
    kind = pattern["__type__"]
    if kind == "PatternStr":
        value = re.escape(pattern["value"])
    elif kind == "PatternRE":
        value = pattern["value"]
    else:
        raise _Refused(f"pattern type {kind}")
    for flag in pattern.get("flags") or ():
        value = f"(?{flag}:{value})"
    return value


def _max_width(pattern: dict) -> int:
    if pattern["__type__"] == "PatternStr":
        return len(pattern["value"])
    return int(pattern["_width"][1])


def _has_newline(regexp: str) -> bool:
    # lark.lexer._regexp_has_newline
    return (
        "\n" in regexp
        or "\\n" in regexp
        or "\\s" in regexp
        or "[^" in regexp
        or ("(?s" in regexp and "." in regexp)
    )


class _Scanner:
    """One alternation of terminals (a contextual lexer's context, or all of them)."""

    __slots__ = ("match", "allowed", "newline_types", "single")

    def __init__(self, terminals: list, ignore: frozenset):
        terminals = sorted(
            terminals,
            key=lambda t: (-t["priority"], -t["width"], -len(t["pattern"]["value"]), t["name"]),
        )
        # Python's re allows 100 named groups; Lark splits longer alternations (not needed here)
        if len(terminals) > 99:
            raise _Refused("more than 99 terminals in one context")
        regexp = "|".join(f"(?P<{t['name']}>{t['regexp']})" for t in terminals)
        self.match = re.compile(regexp).match
        self.allowed = frozenset(t["name"] for t in terminals) - ignore or {"<END-OF-FILE>"}
        self.newline_types = frozenset(t["name"] for t in terminals if _has_newline(t["regexp"]))
        self.single = _single_characters(terminals)


def _single_characters(terminals: list) -> dict:
    """{c: name} for each one-character string terminal that is the only terminal of the
    alternation a text starting with c can match: there the alternation's match is that
    terminal and c, so the parser takes it without running the regular expression."""
    single = {}
    for t in terminals:
        pattern = t["pattern"]
        c = pattern["value"]
        if pattern["__type__"] != "PatternStr" or len(c) != 1 or c == "\n" or pattern.get("flags"):
            continue
        if not any(o is not t and _may_start(o["regexp"], c) for o in terminals):
            single[c] = t["name"]
    return single


@functools.cache
def _may_start(regexp: str, c: str) -> bool:
    """Whether a match of ``regexp`` can start with the character ``c`` (True when unsure;
    asked once a process for each pair: the contexts share their terminals)."""
    items = _parsed(regexp)
    return True if items is None else _may_start_items(items, c)[0]


@functools.cache
def _parsed(regexp: str):
    """``regexp`` parsed by ``re``'s own parser, once a process (every context asks about the
    same few terminals: parsing them for each context took ~10 ms of every start); None
    where it does not parse."""
    try:
        return _re_parser.parse(regexp)
    except (re.error, ValueError, TypeError):  # pragma: no cover - Lark compiled it already
        return None


_CATEGORIES = {
    "CATEGORY_DIGIT": r"\d",
    "CATEGORY_NOT_DIGIT": r"\D",
    "CATEGORY_SPACE": r"\s",
    "CATEGORY_NOT_SPACE": r"\S",
    "CATEGORY_WORD": r"\w",
    "CATEGORY_NOT_WORD": r"\W",
}


def _may_start_items(items, c: str) -> tuple[bool, bool]:
    """(a match of the parsed ``items`` can start with ``c``, they can match the empty
    string): a walk of re's parse, conservative (True) wherever it is unsure."""
    for op, av in items:
        name = str(op)
        if name == "LITERAL":
            return chr(av) == c, False
        if name == "NOT_LITERAL":
            return chr(av) != c, False
        if name == "IN":
            return _in_class(av, c), False
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT", "SUBPATTERN"):
            if name == "SUBPATTERN":
                if av[1] or av[2]:  # flags (ignorecase...) change what a character matches
                    return True, False
                low, inner = 1, av[-1]
            else:
                low, inner = av[0], av[2]
            may, empty = _may_start_items(inner, c)
            if may:
                return True, False
            if low and not empty:
                return False, False
            continue
        if name == "BRANCH":
            may_empty = False
            for branch in av[1]:
                may, empty = _may_start_items(branch, c)
                if may:
                    return True, False
                may_empty = may_empty or empty
            if not may_empty:
                return False, False
            continue
        return True, False  # anything else (., anchors, lookarounds, references): unsure
    return False, True


def _in_class(av, c: str) -> bool:
    """Whether the character class ``av`` (re's parse) can match ``c`` (True when unsure)."""
    negate = hit = False
    for op, a in av:
        name = str(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            hit = hit or chr(a) == c
        elif name == "RANGE":
            hit = hit or a[0] <= ord(c) <= a[1]
        elif name == "CATEGORY" and str(a) in _CATEGORIES:
            hit = hit or re.match(_CATEGORIES[str(a)], c) is not None
        else:
            return True
    return hit != negate


class Runtime:
    """The LALR parser of one set of tables, running a builder's callbacks (see module doc)."""

    def __init__(self, data: dict, memo: dict, builder, postlex):
        options = data["options"]
        if (
            options.get("parser") != "lalr"
            or options.get("lexer") != "contextual"
            or options.get("maybe_placeholders") is not True
            or options.get("keep_all_tokens")
            or options.get("start") != ["start"]
        ):
            raise _Refused("options")
        front = data["parser"]
        lexer_conf = front["lexer_conf"]
        if lexer_conf.get("g_regex_flags") or lexer_conf.get("use_bytes"):
            raise _Refused("lexer flags")
        terminals = {}
        for ref in lexer_conf["terminals"]:
            t = memo[ref["@"]]
            terminals[t["name"]] = {
                "name": t["name"],
                "pattern": t["pattern"],
                "priority": t["priority"],
                "regexp": _regexp(t["pattern"]),
                "width": _max_width(t["pattern"]),
            }
        self._refuse_unless(terminals)
        ignore = frozenset(lexer_conf["ignore"])
        table = front["parser"]
        names = table["tokens"]
        rules = {}
        kept: set = set()  # terminals some rule hands to its callback
        dropped: set = set()  # terminals some rule filters out (anonymous punctuation)
        self.states: dict = {}
        for state, actions in table["states"].items():
            row: dict = {}  # a terminal or nonterminal -> a state (shift, goto) or a rule (reduce)
            for token_id, (action, arg) in actions.items():
                if action == _SHIFT:
                    row[names[token_id]] = int(arg)
                else:
                    key = arg["@"]
                    if key not in rules:
                        rules[key] = self._rule(memo[key], builder)
                        for sym in memo[key]["expansion"]:
                            if sym["__type__"] == "Terminal":
                                (dropped if sym["filter_out"] else kept).add(sym["name"])
                    row[names[token_id]] = rules[key]
            self.states[state] = row
        if set(table["start_states"]) != {"start"} or set(table["end_states"]) != {"start"}:
            raise _Refused("start states")
        self.start = table["start_states"]["start"]
        self.end = table["end_states"]["start"]
        always = frozenset(getattr(postlex, "always_accept", ()) or ())
        by_accepts: dict = {}
        self.scanners: dict = {}
        for state, row in self.states.items():
            accepts = frozenset(n for n in row if n in terminals) | ignore | always
            if accepts not in by_accepts:
                by_accepts[accepts] = _Scanner(
                    [terminals[n] for n in accepts if n in terminals], ignore
                )
            self.scanners[state] = by_accepts[accepts]
        self.root = _Scanner(list(terminals.values()), ignore)
        # Terminals no rule keeps: their place on the value stack is never read, so the parse
        # makes no Token for them (one is made only for an error that names it)
        self.unread = frozenset(dropped - kept)
        self.ignore = ignore
        if postlex is not None and not callable(getattr(postlex, "feeder", None)):
            raise _Refused("a post-lexer without feeder()")  # parse checks token by token
        self.postlex = postlex
        # Lark's expected set for a parser error: the state's uppercase (terminal) names
        self.expected = {s: {n for n in row if n.isupper()} for s, row in self.states.items()}
        self._chains: dict = {}  # (below, top, lookahead) -> _unit_chain's, made on first use
        # the parse indexes rows and scanners by state: lists where the states are 0..n-1
        # (Lark numbers them so), read faster than dicts
        self.rows: Any = self.states
        self.contexts: Any = self.scanners
        if sorted(self.states) == list(range(len(self.states))):
            self.rows = [self.states[i] for i in range(len(self.states))]
            self.contexts = [self.scanners[i] for i in range(len(self.states))]

    @staticmethod
    def _refuse_unless(terminals: dict) -> None:
        """Lark folds a string terminal that a regexp terminal of the same priority also
        matches into an "unless" callback on the latter (keywords vs names): not done here."""
        strings = [t for t in terminals.values() if t["pattern"]["__type__"] == "PatternStr"]
        for t in terminals.values():
            if t["pattern"]["__type__"] != "PatternRE":
                continue
            compiled = re.compile(t["regexp"])
            for s in strings:
                if s["priority"] == t["priority"]:
                    m = compiled.match(s["pattern"]["value"])
                    if m and m.group(0) == s["pattern"]["value"]:
                        raise _Refused(f"{s['name']} is also a {t['name']}")

    @staticmethod
    def _rule(rule: dict, builder):
        """(origin name, number of symbols, the reduction: children list -> value, None) for a
        rule with a callback; (origin name, number of symbols, None, i) for one that passes
        its child i through unchanged."""
        options = rule["options"]
        if options.get("keep_all_tokens") or options.get("template_source"):
            raise _Refused("rule options")
        name = rule["alias"] or rule["origin"]["name"]
        # a rule's callback is the builder's method of its name; an inlined ``_rule`` has none
        method = None if name.startswith("_") else getattr(builder, name, None)
        if method is None:

            def build(children, name=name):
                return Tree(name, children)

        else:

            def build(children, method=method):
                return method(*children)

        expansion = rule["expansion"]
        empty = options.get("empty_indices") or ()
        if empty:
            if list(empty).count(False) != len(expansion):
                raise _Refused("empty indices")
            nones = [len(run) for run in "".join(str(int(b)) for b in empty).split("0")]
        else:
            nones = [0] * (len(expansion) + 1)
        include = []  # (index, splice its children, Nones before it)
        pending = 0
        for i, sym in enumerate(expansion):
            pending += nones[i]
            terminal = sym["__type__"] == "Terminal"
            if not (terminal and sym["filter_out"]):
                include.append((i, not terminal and sym["name"].startswith("_"), pending))
                pending = 0
        after = pending + nones[len(expansion)]
        plain = not empty and len(include) == len(expansion) and not any(e for _, e, _ in include)
        expand1 = bool(options.get("expand1")) and not rule["alias"]

        kept = tuple(include)
        picks = tuple(i for i, splice, nones in include if not splice and not nones)
        if plain:
            reduce_ = build
        elif method is not None and picks and not after and len(picks) == len(include):
            # only anonymous punctuation filtered out (``sum "+" product``): the callback
            # gets the kept children by position, without _filter's loop
            if len(picks) == 1:

                def reduce_(children, method=method, i=picks[0]):
                    return method(children[i])

            else:

                def reduce_(children, method=method, pick=operator.itemgetter(*picks)):
                    return method(*pick(children))

        else:

            def reduce_(children, kept=kept, after=after, build=build):
                return build(_filter(children, kept, after))

        origin, size = rule["origin"]["name"], len(expansion)
        if expand1:
            # ExpandSingleChild, on the filtered children: a rule that always keeps exactly
            # one plain child passes it through (``?sum: product``, ``"(" expr ")"``); the
            # parser does that without a call (the rule's ``keep``: which child)
            if len(include) == 1 and not include[0][1] and not include[0][2] and not after:
                return origin, size, None, include[0][0]

            def single(children, kept=kept, after=after, reduce_=reduce_):
                filtered = _filter(children, kept, after)
                return filtered[0] if len(filtered) == 1 else reduce_(children)

            return origin, size, single, None
        return origin, size, reduce_, None

    # ---- running ---------------------------------------------------------------------------
    def _unit_chain(self, below: int, top: int, kind: str) -> tuple:
        """The reductions of one symbol that follow one another on lookahead ``kind``
        (``name`` -> ``?postfix`` -> ``?power`` -> ... -> ``?sum``: each pops one state and
        pushes the goto of the state ``below`` it, so they depend on ``below``, ``top`` and
        ``kind`` alone): the state on top after them, and the callbacks to run on the value,
        in order.  Made once for each such triple (:meth:`parse` keeps them)."""
        states = self.states
        calls: list = []
        while True:
            action = states[top].get(kind)
            if action is None or action.__class__ is int or action[1] != 1:
                return top, tuple(calls)
            origin, _, reduce_, _ = action
            if reduce_ is not None:
                calls.append(reduce_)
            top = states[below][origin]

    def _lex_error(self, text: str, pos: int, line: int, column: int, scanner, last):
        """The error where no terminal of the context ``scanner`` matches at ``pos``.

        Lark's root lexer would skip ignored text and try again; after an ignored match
        the context lexer would have matched it too, so only "no terminal at all" is the
        context's error; a terminal of another context is an unexpected token."""
        m = self.root.match(text, pos)
        if m is None or m.lastgroup in self.ignore:
            return UnexpectedCharacters(pos, line, column, set(scanner.allowed), last and [last])
        token = Token(str(m.lastgroup), m.group(0), pos, line, column)
        return UnexpectedToken(token, set(scanner.allowed), [last])

    def parse(self, text: str):
        """Lex (Lark's contextual lexer; ``_Scanner.single``: no regular expression for
        punctuation only one terminal starts), check (``feeder``) and parse, in one loop.
        ``unread`` tokens are None on the value stack; ``seen``/``at`` keep the last token
        lexed/parsed as (terminal, text, start, line, column) for errors and the end."""
        states, scanners, ignore, unread = self.rows, self.contexts, self.ignore, self.unread
        chains = self._chains
        keep = self.postlex.feeder(text) if self.postlex is not None else None
        state = self.start
        stack = [state]
        values: list = []
        push_state, push_value, new_str = stack.append, values.append, str.__new__
        pos, line, line_start, end = 0, 1, 0, len(text)
        seen = at = None
        while pos < end:
            scanner = scanners[state]
            kind = scanner.single.get(text[pos])  # punctuation only this terminal matches
            start = pos
            if kind is not None:
                pos += 1
                value = text[start]
            else:
                m = scanner.match(text, pos)
                if m is None:
                    last: Token | None = Token(*seen) if seen is not None else None
                    raise self._lex_error(text, pos, line, pos - line_start + 1, scanner, last)
                kind = m.lastgroup  # type: ignore[assignment]  # a group always matched
                pos = m.end()
                value = m.group()
            breaks = kind in scanner.newline_types and "\n" in value
            if kind in ignore:
                if breaks:
                    line, line_start = _after_newlines(value, start, line)
                continue
            seen = (kind, value, start, line, start - line_start + 1)
            if breaks:
                token = None if kind in unread else Token(*seen)
                line, line_start = _after_newlines(value, start, line)
            elif kind in unread:
                token = None
            else:  # Token(*seen) without __new__'s call: a third of a token's cost
                token = new_str(Token, value)
                attrs = token.__dict__
                attrs["type"], attrs["start_pos"] = kind, start
                attrs["line"], attrs["column"] = seen[3], seen[4]
            if keep is not None and not keep(kind, seen[3], seen[4]):
                continue
            at = seen
            while True:
                action = states[state].get(kind)
                if action.__class__ is int:  # shift
                    push_state(action)
                    push_value(token)
                    state = action
                    break
                if action is None:
                    raise UnexpectedToken(Token(*at), set(self.expected[state]))
                origin, size, reduce_, keep_child = action
                if size == 1 and len(stack) > 1:
                    # a run of one-symbol reductions, taken in one step (_unit_chain)
                    key = (stack[-2], state, kind)
                    chain = chains.get(key)
                    if chain is None:
                        chain = chains[key] = self._unit_chain(*key)
                    state, calls = chain
                    for call in calls:
                        values[-1] = call(values[-1:])
                    stack[-1] = state
                    continue
                if reduce_ is not None and size:
                    children = values[-size:]
                    del stack[-size:]
                    del values[-size:]
                    push_value(reduce_(children))
                else:
                    _reduce(stack, values, size, reduce_, keep_child)
                state = states[stack[-1]][origin]
                push_state(state)
        return self._finish(stack, values, at)

    def _finish(self, stack: list, values: list, at):
        """The reductions on the end token, to the end state: the value of the parse."""
        states = self.states
        # Lark's end token borrows the last token's position (Token.new_borrow_pos)
        if at is not None:
            end = Token("$END", "", at[2], at[3], at[4])
        else:
            end = Token("$END", "", 0, 1, 1)
        while True:
            action = states[stack[-1]].get("$END")
            if action is None:
                raise UnexpectedToken(end, set(self.expected[stack[-1]]))
            if action.__class__ is int:  # pragma: no cover - Lark's tables never shift $END
                raise _Refused("shift on $END")
            origin, size, reduce_, keep = action
            _reduce(stack, values, size, reduce_, keep)
            stack.append(states[stack[-1]][origin])
            if stack[-1] == self.end:
                return values[-1]


def _reduce(stack: list, values: list, size: int, reduce_, keep) -> None:
    """Reduce the top ``size`` symbols by a rule: its callback ``reduce_`` on their values,
    or (``reduce_`` None) the value of child ``keep`` passed through."""
    if reduce_ is None:
        value = values[keep - size]
        del values[-size:]
        values.append(value)
        del stack[-size:]
        return
    if size:
        children = values[-size:]
        del stack[-size:]
        del values[-size:]
    else:
        children = []
    values.append(reduce_(children))


def _after_newlines(value: str, start: int, line: int) -> tuple[int, int]:
    """The line and the start of the line after ``value`` (from ``start``, on ``line``)."""
    return line + value.count("\n"), start + value.rindex("\n") + 1


def _filter(children: list, kept: tuple, after: int) -> list:
    """Lark's child filter (ChildFilterLALR): the kept children, ``None`` for each absent
    ``[optional]``, an inlined ``_rule``'s children in its place."""
    filtered: list = []
    for i, splice, nones in kept:
        if nones:
            filtered += [None] * nones
        if splice:
            if filtered:
                filtered += children[i].children
            else:  # Lark's too: a left-recursive list grows in place, not copied each time
                filtered = children[i].children
        else:
            filtered.append(children[i])
    if after:
        filtered += [None] * after
    return filtered


def load(data: dict, memo: dict, builder, postlex) -> Runtime | None:
    """The runtime for these tables, or None when they use what it does not reproduce."""
    try:
        return Runtime(data, memo, builder, postlex)
    except (_Refused, KeyError, IndexError, TypeError, ValueError, re.error):
        return None
