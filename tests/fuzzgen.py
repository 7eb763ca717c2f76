"""Fuzz generators and the contract's properties, shared by tests/test_fuzz.py and bench/fuzz.py.

Everything here is driven by a ``random.Random`` (Hypothesis hands one in through
``st.randoms(use_true_random=False)``, the bench script seeds one per input), so the same
generators serve the suite and the long run.  Three categories of input:

* ``random_text``: arbitrary text as the expression (and sometimes as a value);
* ``mutated``: a valid expression or program with a few token-level mutations (inserted,
  deleted, swapped or duplicated tokens, unbalanced brackets, huge numbers, odd unicode,
  control characters, deep nesting);
* ``valid``: a valid invocation of a command (eval, grad, hessian, jacobian, check, diff,
  explain, graph, batch on a small temporary file) with random flags.

Plus ``oracle``: a random expression tree rendered both to the tool's language and to a
NumPy evaluator built here from the tree (never by evaluating text), whose value and
forward-mode derivative the tool's ``eval --json`` / ``grad --json`` must match.

:func:`findings` checks one run against the contract (SPEC.md, README "JSON output and exit
codes"): exit code in {0, 1, 2, 130}, no traceback, with ``--json`` exactly one valid UTF-8
JSON document (batch: one per line), every error kind in the README's table with its exit
code, never kind ``internal``.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

# ---- the README's table of error kinds --------------------------------------------------------


def readme_table() -> dict:
    """kind -> set of exit codes: the parser of tests/test_error_kinds.py, reused."""
    tests = str(ROOT / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    from test_error_kinds import readme_table as parse

    return parse()


ALLOWED_EXIT = {0, 1, 2, 130}

# ---- expression trees and their independent evaluation ---------------------------------------

VARS = ("x", "y", "z")
UNARY = ("sin", "cos", "exp", "log", "sqrt", "tanh", "abs", "neg")
#: more functions, drawn less often
UNARY_MORE = ("sigmoid", "softplus", "relu", "sinh", "cosh", "atan", "tan", "log2", "log10")
BINARY = ("+", "-", "*", "/")
POWERS = (2, 3, 0.5, -1)
CONSTANTS = (0.0, 1.0, 2.0, 0.5, 3.25, 1e-3, 10.0, 0.1)

#: precedence of what a node renders as (higher binds tighter)
_PREC = {"+": 2, "-": 2, "*": 3, "/": 3, "neg": 4, "pow": 5}


def random_tree(rng, depth: int = 4, names=VARS):
    """A random tree: ("var", name) | ("const", c) | (fn, child) | (op, a, b) | ("pow", a, k)."""
    if depth <= 0 or rng.random() < 0.2:
        if rng.random() < 0.7:
            return ("var", rng.choice(names))
        c = rng.choice(CONSTANTS) if rng.random() < 0.7 else round(rng.uniform(0, 5), 3)
        return ("const", float(c))
    r = rng.random()
    if r < 0.4:
        fn = rng.choice(UNARY) if rng.random() < 0.8 else rng.choice(UNARY_MORE)
        return (fn, random_tree(rng, depth - 1, names))
    if r < 0.9:
        op = rng.choice(BINARY)
        return (op, random_tree(rng, depth - 1, names), random_tree(rng, depth - 1, names))
    return ("pow", random_tree(rng, depth - 1, names), rng.choice(POWERS))


def _prec(tree) -> int:
    return _PREC.get(tree[0], 6)


def _number(c: float) -> str:
    text = repr(float(c))
    return text[:-2] if text.endswith(".0") and "e" not in text else text


def render(tree, minimal: bool = True) -> str:
    """The tree in the tool's language.  ``minimal``: only the parentheses precedence and
    left-associativity need (so the grammar's precedence is under test too); else every
    operation is parenthesised."""
    kind = tree[0]
    if kind == "var":
        return tree[1]
    if kind == "const":
        return _number(tree[1])
    if kind == "neg":
        inner = render(tree[1], minimal)
        if not minimal or _prec(tree[1]) < 4:
            inner = f"({inner})"
        return f"(-{inner})" if not minimal else f"-{inner}"
    if kind == "pow":
        base = render(tree[1], minimal)
        if not minimal or _prec(tree[1]) < 6:
            base = f"({base})"
        text = f"{base}**{_number(tree[2]) if tree[2] >= 0 else '-' + _number(-tree[2])}"
        return f"({text})" if not minimal else text
    if kind in BINARY:
        p = _PREC[kind]
        a, b = render(tree[1], minimal), render(tree[2], minimal)
        if not minimal or _prec(tree[1]) < p:
            a = f"({a})"
        if not minimal or _prec(tree[2]) <= p:
            b = f"({b})"
        return f"{a} {kind} {b}"
    return f"{kind}({render(tree[1], minimal)})"


def tree_vars(tree) -> set:
    if tree[0] == "var":
        return {tree[1]}
    if tree[0] == "const":
        return set()
    return set().union(*(tree_vars(t) for t in tree[1:] if isinstance(t, tuple)))


def compile_tree(tree):
    """A NumPy function ``env -> (value, {name: tangent}, {name: bound})`` built from the tree.

    Forward mode with a tangent of ones for every variable (so for array variables the
    derivative of ``sum(f)`` is the tangent itself, or its sum for a broadcast scalar).
    ``bound`` carries the sum of the absolute values of the terms that make the tangent, a
    scale for its rounding error (a cancellation leaves the tangent small and the bound not).
    """
    kind = tree[0]
    if kind == "var":
        name = tree[1]

        def f(env, name=name):
            v = np.asarray(env[name], dtype=np.float64)
            one = np.ones_like(v)
            return v, {name: one}, {name: one}

        return f
    if kind == "const":
        c = np.float64(tree[1])
        return lambda env, c=c: (c, {}, {})
    if kind == "pow":
        base, k = compile_tree(tree[1]), float(tree[2])

        def f(env, base=base, k=k):
            a, da, ma = base(env)
            local = k * _power(a, k - 1)
            return _power(a, k), _scale(da, local), _scale(ma, np.abs(local))

        return f
    if kind in BINARY:
        fa, fb = compile_tree(tree[1]), compile_tree(tree[2])
        return lambda env, op=kind, fa=fa, fb=fb: _binary(op, fa(env), fb(env))
    child = compile_tree(tree[1])
    return lambda env, fn=kind, child=child: _unary(fn, child(env))


def _power(a, k: float):
    """PyTorch's pow by a constant: C's pow, except that an exponent of -0.5 is rsqrt, nan at
    -inf (not +0); so the derivative of u**0.5 at u = -inf is nan, as in PyTorch."""
    r = np.power(a, k)
    if k == -0.5:
        r = np.where(np.asarray(a) == -np.inf, np.nan, r)
    return r


#: the largest |argument| of sin, cos and tan in the last oracle() evaluation: past about
#: 1e8 two evaluations in different orders (diff's simplified form) differ by more than any
#: tolerance, since a few ulps of a huge argument are a different angle
_TRIG = {"max": 0.0}


def _scale(ds: dict, factor) -> dict:
    return {k: d * factor for k, d in ds.items()}


def _combine(da: dict, fa, db: dict, fb) -> dict:
    out = {}
    for k in set(da) | set(db):
        terms = []
        if k in da:
            terms.append(da[k] * fa)
        if k in db:
            terms.append(db[k] * fb)
        out[k] = terms[0] if len(terms) == 1 else terms[0] + terms[1]
    return out


def _binary(op, A, B):
    (a, da, ma), (b, db, mb) = A, B
    if op == "+":
        return a + b, _combine(da, 1.0, db, 1.0), _combine(ma, 1.0, mb, 1.0)
    if op == "-":
        return a - b, _combine(da, 1.0, db, -1.0), _combine(ma, 1.0, mb, 1.0)
    if op == "*":
        return a * b, _combine(da, b, db, a), _combine(ma, np.abs(b), mb, np.abs(a))
    q = a / b
    inv = 1.0 / b
    return (
        q,
        _combine(da, inv, db, -q * inv),
        _combine(ma, np.abs(inv), mb, np.abs(q * inv)),
    )


def _sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


_FUNCS = {
    "sin": (np.sin, np.cos),
    "cos": (np.cos, lambda a: -np.sin(a)),
    "exp": (np.exp, np.exp),
    "log": (np.log, lambda a: 1.0 / a),
    "sqrt": (np.sqrt, lambda a: 0.5 / np.sqrt(a)),
    "tanh": (np.tanh, lambda a: 1.0 - np.tanh(a) ** 2),
    "abs": (np.abs, np.sign),  # abs'(0) = 0, as PyTorch
    "neg": (np.negative, lambda a: -np.ones_like(a)),
    # PyTorch's sigmoid backward is s*(1 - s): 0 once s rounds to 1 (sigmoid(75)), where the
    # exact 0.25/cosh(a/2)**2 is 7e-33; the tool follows PyTorch, and so does the oracle
    "sigmoid": (_sigmoid, lambda a: _sigmoid(a) * (1.0 - _sigmoid(a))),
    "softplus": (lambda a: np.logaddexp(0.0, a), lambda a: 1.0 / (1.0 + np.exp(-a))),
    "relu": (lambda a: np.maximum(a, 0.0), lambda a: (a > 0).astype(np.float64)),  # relu'(0) = 0
    "sinh": (np.sinh, np.cosh),
    "cosh": (np.cosh, np.sinh),
    "atan": (np.arctan, lambda a: 1.0 / (1.0 + a * a)),
    "tan": (np.tan, lambda a: 1.0 / np.cos(a) ** 2),
    "log2": (np.log2, lambda a: 1.0 / (a * np.log(2.0))),
    "log10": (np.log10, lambda a: 1.0 / (a * np.log(10.0))),
}


def _unary(fn, A):
    a, da, ma = A
    if fn in ("sin", "cos", "tan"):
        finite = np.abs(np.asarray(a, dtype=np.float64))
        finite = finite[np.isfinite(finite)]
        if finite.size:
            _TRIG["max"] = max(_TRIG["max"], float(finite.max()))
    value, deriv = _FUNCS[fn]
    local = deriv(a)
    return value(a), _scale(da, local), _scale(ma, np.abs(local))


def oracle(tree, env: dict):
    """(value, {name: d sum(f)/d name}, {name: bound}) at ``env``, with NumPy, silently."""
    _TRIG["max"] = 0.0
    with np.errstate(all="ignore"):
        value, d, m = compile_tree(tree)(env)
        value = np.asarray(value, dtype=np.float64)
        shape = np.broadcast_shapes(value.shape, *(np.shape(v) for v in env.values()))
        value = np.broadcast_to(value, shape)
        grad, bound = {}, {}
        for name, v in env.items():
            t = np.broadcast_to(np.asarray(d.get(name, 0.0), dtype=np.float64), shape)
            b = np.broadcast_to(np.asarray(m.get(name, 0.0), dtype=np.float64), shape)
            if np.ndim(v) == 0:
                t, b = np.sum(t), np.sum(b)
            grad[name], bound[name] = np.asarray(t), np.asarray(b)
    return value, grad, bound


def as_array(doc_value) -> np.ndarray:
    """A JSON value of the tool (numbers, nested lists, "nan"/"inf"/"-inf") as an array."""

    def conv(v):
        if isinstance(v, list):
            return [conv(u) for u in v]
        if isinstance(v, str):
            return float(v)  # "nan", "inf", "-inf"
        return float(v)

    return np.asarray(conv(doc_value), dtype=np.float64)


def close(got, want, bound=None, rtol: float = 1e-9) -> bool:
    """Elementwise agreement with nan/inf treated consistently: nan only where nan, an
    infinity only where the same infinity, finite values within ``rtol`` of the larger of
    their magnitude and ``bound`` (the rounding scale)."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return False
    scale = np.abs(want) if bound is None else np.maximum(np.abs(want), np.abs(bound))
    with np.errstate(all="ignore"):
        ok = np.where(
            np.isnan(want),
            np.isnan(got),
            np.where(
                np.isinf(want),
                got == want,
                np.abs(got - want) <= rtol * scale + 1e-300,
            ),
        )
    return bool(np.all(ok))


def value_text(v) -> str:
    """A variable's value on the command line (a number or a JSON array)."""
    if np.ndim(v) == 0:
        return repr(float(v))
    return json.dumps(np.asarray(v).tolist())


def random_point(rng, names, vector: bool):
    """Values for ``names``: scalars, or (when ``vector``) some of them vectors of one length."""
    n = rng.randint(1, 3)
    env = {}
    for name in sorted(names):
        if vector and rng.random() < 0.6:
            env[name] = np.array([_coordinate(rng) for _ in range(n)])
        else:
            env[name] = np.float64(_coordinate(rng))
    return env


def _coordinate(rng) -> float:
    r = rng.random()
    if r < 0.08:
        return rng.choice([0.0, 1.0, -1.0, 0.5])
    if r < 0.12:
        return rng.choice([1e-8, -1e6, 30.0, 700.0])
    return round(rng.uniform(-3, 3), rng.choice([1, 3, 6, 17]))


@dataclass
class OracleCase:
    tree: tuple
    text: str
    env: dict
    argv_eval: list = field(default_factory=list)
    argv_grad: list = field(default_factory=list)
    argv_diff: list = field(default_factory=list)


def oracle_case(rng) -> OracleCase:
    tree = random_tree(rng, rng.randint(1, 5))
    names = tree_vars(tree)
    if not names:
        tree = ("*", tree, ("var", "x"))
        names = {"x"}
    env = random_point(rng, names, vector=rng.random() < 0.3)
    return make_oracle_case(tree, env, minimal=rng.random() < 0.7)


def make_oracle_case(tree, env: dict, minimal: bool = True) -> OracleCase:
    env = {k: v for k, v in env.items() if k in tree_vars(tree)}
    text = render(tree, minimal=minimal)
    values = [a for k in sorted(env) for a in (f"--{k}", value_text(env[k]))]
    gtext = text if all(np.ndim(v) == 0 for v in env.values()) else f"sum({text})"
    return OracleCase(
        tree,
        text,
        env,
        ["eval", text, *values, "--json"],
        ["grad", gtext, *values, "--json"],
        ["diff", text, *values, "--json"] if gtext == text and env else [],
    )


def oracle_findings(case: OracleCase, op: str, code: int, out: str) -> list:
    """Compare the tool's eval/grad JSON with the NumPy oracle."""
    value, grad, bound = oracle(case.tree, case.env)
    try:
        doc = json.loads(out)
    except ValueError:
        return []  # findings() reports the bad JSON
    if "error" in doc:
        kind = doc["error"].get("kind")
        return [("wrong_value", f"{op}: an error ({kind}) for a valid expression")]
    if op == "diff":
        # the symbolic derivative (simplified), evaluated by the tool, against forward mode
        if _TRIG["max"] > 1e8:
            return []  # ill-conditioned: sin of a huge argument, in another order (see _TRIG)
        values = doc.get("derivative_value")
        if not isinstance(values, dict):
            values = {next(iter(case.env)): values}
        out_list = []
        for name, want in grad.items():
            if not np.all(np.isfinite(want)) or not np.all(np.isfinite(bound[name])):
                continue
            got = as_array(values.get(name))
            if not close(got, want, bound[name], rtol=1e-6):
                derivative = doc.get("derivative")
                text = derivative.get(name) if isinstance(derivative, dict) else derivative
                out_list.append(
                    ("wrong_value", f"diff[{name}] = {text}: {got.tolist()} != {want.tolist()}")
                )
        return out_list
    if op == "eval":
        got = as_array(doc.get("value"))
        if not close(got, value):
            return [("wrong_value", f"eval: {got.tolist()} != {value.tolist()}")]
        return []
    out_list = []
    for name, want in grad.items():
        if not np.all(np.isfinite(want)) or not np.all(np.isfinite(bound[name])):
            continue  # an infinite or undefined local derivative: conventions may differ
        got = as_array(doc.get("grad", {}).get(name))
        if not close(got, want, bound[name], rtol=1e-7):
            out_list.append(("wrong_value", f"grad[{name}]: {got.tolist()} != {want.tolist()}"))
    return out_list


# ---- token-level mutation of valid text --------------------------------------------------------

_TOKEN = re.compile(
    r"\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+|[A-Za-z_]\w*|\*\*|<=|>=|==|!=|\.T|\s+|\S", re.S
)
TOKENS = [
    "+", "-", "*", "/", "@", "**", "^", "(", ")", "[", "]", ",", ";", "=", "<", "==", ".T",
    ":", "#", "\n", "x", "y", "z", "w", "e", "pi", "inf", "nan", "sin", "sum", "max", "where",
    "reshape", "axis", "keepdims", "1", "0", "2.5", ".5", "1.", "1e", "-1", "_", "__", "foo",
    "sum(x, axis=0)", "x[0]", "x[1:2]", "[[1, 2], [3]]", "reshape(x, [-2])", "sin(x, y)",
    "max(x, axis=1.5)", "x[0.5]", "sum(x, 1e30)", "where(x > 0, x)", "norm(x, 2)", "..",
]  # fmt: skip
HUGE_NUMBERS = [
    "9" * 309, "9" * 310, "1" * 400, "1" * 5000, "1e400", "1e-400", "1e99999999999",
    "0" * 60 + "1", "1." + "0" * 400, "." + "9" * 400 + "e5", "123456789012345678901234567890",
    "4.9e-324", "1.7976931348623157e308", "1.8e308",
]  # fmt: skip
ODD_UNICODE = [
    "\u202e", "\u200b", "\ufeff", "\uff11", "\uff58", "\u00e9", "x\u0301", "\udcff", "\udc80",
    "\U0001f600", "\u2202", "\u00d7", "\u2212", "\u00b2", "\u03c0", "\u2028", "\u0085",
    "\u00a0", "\u3000", "\ufffd", "\u0660", "\u2066", "\U0001d465", "\u212a",
]  # fmt: skip
CONTROL = ["\x1b[31m", "\r", "\x07", "\t", "\x0b", "\x0c", "\x7f", "\x9b", "\x1b]0;t\x07", "\x01"]


def valid_program(rng) -> str:
    """A valid expression or small program over x, y (sometimes with arrays and calls)."""
    r = rng.random()
    tree = random_tree(rng, rng.randint(1, 4), ("x", "y"))
    text = render(tree, minimal=rng.random() < 0.7)
    if r < 0.25:
        second = render(random_tree(rng, 2, ("x", "y", "a")), True)
        sep = rng.choice(["; ", "\n", ";", " ;\n"])
        return f"a = {text}{sep}{second}"
    if r < 0.4:
        return rng.choice(
            [
                f"sum({text})", f"[{text}, x*y, sin(x)]", f"max({text}, y)", "x @ y",
                f"where(x > 0, {text}, 0)", "reshape([x, y, x*y, 1], [2, 2])", "x[0] + y",
                f"mean([{text}, y])", f"relu({text}) + softplus(y)", "x < y <= 3",
                f"norm([x, y]) * {text}", "transpose([[x, y]]).T", "sum([[x, 1], [2, y]], axis=0)",
            ]
        )  # fmt: skip
    return text


def mutate(rng, text: str) -> str:
    """``text`` with one to three token-level mutations."""
    toks = _TOKEN.findall(text) or [""]
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(toks) + 1)
        m = rng.random()
        if m < 0.15:
            toks.insert(i, rng.choice(TOKENS))
        elif m < 0.27 and toks:
            del toks[min(i, len(toks) - 1)]
        elif m < 0.37 and len(toks) > 1:
            j = min(i, len(toks) - 2)
            toks[j], toks[j + 1] = toks[j + 1], toks[j]
        elif m < 0.44 and toks:
            j = min(i, len(toks) - 1)
            toks.insert(j, toks[j])
        elif m < 0.55:
            brackets = [k for k, t in enumerate(toks) if t in "()[]" and t]
            if brackets and rng.random() < 0.5:
                del toks[rng.choice(brackets)]
            else:
                toks.insert(i, rng.choice("()[]"))
        elif m < 0.67:
            numbers = [k for k, t in enumerate(toks) if t[:1].isdigit() or t[:1] == "."]
            k = rng.choice(numbers) if numbers and rng.random() < 0.7 else None
            if k is None:
                toks.insert(i, rng.choice(HUGE_NUMBERS))
            else:
                toks[k] = rng.choice(HUGE_NUMBERS)
        elif m < 0.8:
            toks.insert(i, rng.choice(ODD_UNICODE))
        elif m < 0.9:
            toks.insert(i, rng.choice(CONTROL))
        else:
            n = rng.choice([2, 30, 300, 3000])
            opener, closer = rng.choice([("(", ")"), ("[", "]"), ("sin(", ")"), ("-", "")])
            j = min(i, len(toks))
            toks[j:j] = [opener * n]
            toks.append(closer * n)
    return "".join(toks)


# ---- random text ---------------------------------------------------------------------------

SYNTAX_ALPHABET = "xyzab0123456789.+-*/@^()[]{},;:=<>!_ \t\n#eETsinlogqrtmaxw'\"\\$%&|~?"


def random_text(rng, max_size: int = 40) -> str:
    n = rng.randint(0, max_size)
    r = rng.random()
    chars = []
    for _ in range(n):
        if r < 0.6:
            chars.append(rng.choice(SYNTAX_ALPHABET))
        else:
            s = rng.random()
            if s < 0.5:
                chars.append(rng.choice(SYNTAX_ALPHABET))
            elif s < 0.7:
                chars.append(chr(rng.randint(1, 0x7F)))
            elif s < 0.8:
                chars.append(rng.choice(ODD_UNICODE + CONTROL))
            else:
                cp = rng.randint(0x80, 0x10FFFF)
                if 0xD800 <= cp <= 0xDFFF:
                    cp = rng.randint(0xDC80, 0xDCFF)  # what os.fsdecode makes of bad bytes
                chars.append(chr(cp))
    return "".join(chars)


RANDOM_VALUES = [
    "1", "-2.5", "[1, 2]", "[[1, 2], [3, 4]]", "0", "nan", "inf", "-inf", "1.", ".5", "[1, [2]]",
    "abc", "", "[]", "[[]]", "1e400", "9" * 400, "[1, 2", "{}", "true", "null", "\"1\"",
    "[nan, inf]", "1,2", "0x10", "1_000", "\u0661", "[1e308, -1e308]", "[[1], 2]",
]  # fmt: skip


def random_value(rng) -> str:
    if rng.random() < 0.8:
        return rng.choice(RANDOM_VALUES)
    return random_text(rng, 12)


COMMANDS = ["eval", "grad", "hessian", "jacobian", "check", "diff", "explain", "graph"]
ALL_COMMANDS = COMMANDS + ["batch"]


@dataclass
class Case:
    """One invocation: argv, and for batch the input file's name and text."""

    category: str
    argv: list
    file_name: str | None = None
    file_text: str | None = None
    oracle: OracleCase | None = None
    op: str | None = None

    def materialize(self, folder: str) -> list:
        """argv with the batch file written into ``folder``."""
        if self.file_name is None:
            return list(self.argv)
        path = os.path.join(folder, self.file_name)
        with open(path, "w", encoding="utf-8", errors="surrogatepass", newline="") as f:
            f.write(self.file_text)
        return [path if a == "@INPUT" else a for a in self.argv]

    def describe(self) -> dict:
        out = {"category": self.category, "argv": self.argv}
        if self.file_name is not None:
            out["file"] = {"name": self.file_name, "text": self.file_text}
        return out


def _values_for(rng, names, vector=False) -> list:
    out = []
    for name in sorted(names):
        v = _coordinate(rng)
        if vector and rng.random() < 0.5:
            text = json.dumps([_coordinate(rng) for _ in range(rng.randint(1, 3))])
        else:
            text = repr(v)
        style = rng.random()
        if style < 0.8:
            out += [f"--{name}", text]
        else:
            out += ["--var", f"{name}={text}"]
    return out


def _names_in(text: str) -> list:
    from_text = set(re.findall(r"[A-Za-z_]\w*", text))
    return sorted(from_text & {"x", "y", "z", "a", "w"})


def random_text_case(rng, command: str | None = None) -> Case:
    command = command or rng.choice(ALL_COMMANDS)
    text = random_text(rng)
    if command == "batch":
        return _batch_case(rng, "random_text", [text])
    argv = [command, text]
    for name in ("x", "y")[: rng.randint(0, 2)]:
        argv += [f"--{name}", random_value(rng)]
    if rng.random() < 0.15:
        argv += [random_text(rng, 8)]
    if rng.random() < 0.85:
        argv.insert(rng.randint(1, len(argv)), "--json")
    return Case("random_text", argv)


def mutated_case(rng, command: str | None = None) -> Case:
    command = command or rng.choice(ALL_COMMANDS)
    original = valid_program(rng)
    text = mutate(rng, original)
    if command == "batch":
        return _batch_case(rng, "mutated", [text, original])
    argv = [command, text, *_values_for(rng, set(_names_in(original)), vector=rng.random() < 0.2)]
    if rng.random() < 0.9:
        argv.append("--json")
    if text.startswith("-") and rng.random() < 0.5:
        argv = [command, "--", text, *argv[2:]]
    return Case("mutated", argv)


def _flags(rng, command: str, names: list, vector: bool) -> list:
    """Random flags of ``command`` (mostly sensible values, sometimes out of range)."""
    out = []

    def maybe(p):
        return rng.random() < p

    if command in ("grad", "hessian", "jacobian", "check", "diff", "explain") and maybe(0.4):
        picked = [n for n in names if maybe(0.6)] or names[:1]
        if maybe(0.1):
            picked = picked + [rng.choice(["q", "e", "", "x,x"])]
        out += ["--wrt", ",".join(picked)]
    if command in ("grad", "diff") and maybe(0.3):
        out += ["--order", str(rng.choice([0, 1, 2, 3, 5, 21, -1]))]
    if command == "grad" and maybe(0.2):
        for n in names[: rng.randint(1, max(1, len(names)))]:
            out += ["--tangent", f"{n}={rng.choice(['1', '0.5', '-2', '[1, 1]', 'nan'])}"]
    if command in ("grad", "graph") and (vector or maybe(0.1)) and maybe(0.5):
        out += ["--grad-output", rng.choice(["1", "[1, 1]", "[1, 2, 3]", "[[1]]", "2.5"])]
    if command == "graph":
        if maybe(0.3):
            out += ["--max-depth", str(rng.choice([0, 1, 2, 5, 60, -1, 10**6]))]
        if maybe(0.3):
            out.append("--dot")
    if command == "check":
        for opt, choices in (
            ("--eps", ["1e-6", "1e-3", "1e-12", "0", "-1", "0.1"]),
            ("--atol", ["1e-5", "0", "-1", "1"]),
            ("--rtol", ["1e-3", "0", "1"]),
        ):
            if maybe(0.2):
                out += [opt, rng.choice(choices)]
    if command == "diff" and maybe(0.2):
        out.append("--latex")
    if command in ("eval", "grad", "hessian", "jacobian") and maybe(0.15):
        out += ["--format", rng.choice(["table", "json", "plain", "csv"])]
    if maybe(0.2):
        out += ["--dtype", rng.choice(["float32", "float64"])]
    if maybe(0.03):
        out += ["--device", "cpu"]
    return out


def valid_case(rng, command: str | None = None) -> Case:
    command = command or rng.choice(ALL_COMMANDS)
    text = valid_program(rng)
    if command == "batch":
        return _batch_case(rng, "valid", [text], valid=True)
    names = [n for n in _names_in(text) if n != "a" or not text.startswith("a =")]
    vector = rng.random() < 0.25 and command != "diff"
    values = [] if command == "diff" and rng.random() < 0.5 else _values_for(rng, names, vector)
    flags = _flags(rng, command, names, vector)
    argv = [command, text, *values, *flags]
    if rng.random() < 0.1:
        argv = [command, *values, *flags, text]  # the expression last
    if rng.random() < 0.85:
        # --json anywhere, also before the command's name
        argv.insert(rng.choice([0, 1, len(argv)]), "--json")
    return Case("valid", argv)


def _batch_case(rng, category: str, texts: list, valid: bool = False) -> Case:
    """batch on a small JSONL or CSV file built from ``texts``."""
    fmt = "csv" if rng.random() < 0.25 else "jsonl"
    ops = ["eval", "grad", "hessian", "jacobian", "diff"]
    names = _names_in(" ".join(texts)) or ["x"]
    argv = ["batch", "@INPUT"]
    lines = []
    if fmt == "csv":
        expr = texts[0]
        lines.append(",".join(names))
        for _ in range(rng.randint(0, 4)):
            row = [repr(_coordinate(rng)) for _ in names]
            if not valid and rng.random() < 0.2:
                row[rng.randrange(len(row))] = random_value(rng).replace("\n", " ")
            lines.append(",".join(row))
        argv += ["--expr", expr]
        if rng.random() < 0.5:
            argv += ["--op", rng.choice(ops)]
    else:
        use_expr = rng.random() < 0.3
        if use_expr:
            argv += ["--expr", texts[0]]
        for _ in range(rng.randint(1, 4)):
            vars_ = {n: _coordinate(rng) for n in names}
            if rng.random() < 0.2:
                vars_ = {n: [_coordinate(rng) for _ in range(2)] for n in names}
            record: dict = (
                {"vars": vars_} if use_expr else {"expr": rng.choice(texts), "vars": vars_}
            )
            if rng.random() < 0.4:
                record["op"] = rng.choice(ops + ([] if valid else ["nope", 3]))
            if rng.random() < 0.2:
                record["wrt"] = [rng.choice(names)]
            if rng.random() < 0.1:
                record["order"] = rng.choice([1, 2, 0, 30])
            line = json.dumps(record, ensure_ascii=rng.random() < 0.5)
            if use_expr and rng.random() < 0.3:
                line = json.dumps(vars_)
            if not valid and rng.random() < 0.15:
                line = rng.choice(["not json", "[1, 2]", "{", '{"expr": 3}', "", "null"])
            lines.append(line)
        if rng.random() < 0.3:
            argv += ["--op", rng.choice(ops)]
    if rng.random() < 0.2:
        argv += ["--wrt", ",".join(names[:1])]
    if rng.random() < 0.1:
        argv += ["--order", str(rng.choice([1, 2, 0]))]
    if rng.random() < 0.2:
        argv += ["--chunk-size", str(rng.choice([1, 2, 65536]))]
    if rng.random() < 0.1:
        argv.append("--fail-fast")
    if rng.random() < 0.2:
        argv += ["--dtype", "float32"]
    argv.append("--no-progress")
    if rng.random() < 0.5:
        argv.append("--json")
    name = "in." + fmt
    return Case(category, argv, name, "\n".join(lines) + ("\n" if rng.random() < 0.8 else ""))


def oracle_run_case(rng) -> Case:
    oc = oracle_case(rng)
    op = rng.choice(["eval", "grad", "diff"] if oc.argv_diff else ["eval", "grad"])
    return Case("oracle", oracle_argv(oc, op), oracle=oc, op=op)


def oracle_argv(oc: OracleCase, op: str) -> list:
    return {"eval": oc.argv_eval, "grad": oc.argv_grad, "diff": oc.argv_diff}[op]


GENERATORS = {
    "random_text": random_text_case,
    "mutated": mutated_case,
    "valid": valid_case,
    "oracle": oracle_run_case,
}


def generate(rng, category: str) -> Case:
    return GENERATORS[category](rng)


# ---- the contract's properties -------------------------------------------------------------------


def command_of(argv: list) -> str | None:
    """The command's name: the first argument after any leading --json."""
    rest = [a for a in argv[:2] if a != "--json"]
    return rest[0] if rest else None


def json_requested(argv: list) -> bool:
    """The tool's own rule (cli/main.py): --json, --format=json or --format json anywhere."""
    return any(a in ("--json", "--format=json") for a in argv) or any(
        a == "--format" and b == "json" for a, b in zip(argv, argv[1:])
    )


def _check_doc(doc, code: int, table: dict, batch_line: bool, is_check: bool) -> list:
    out = []
    if not isinstance(doc, dict):
        return [("bad_json", f"not a JSON object: {str(doc)[:80]}")]
    error = doc.get("error")
    if error is None:
        if code != 0 and not batch_line and not (is_check and code == 1 and "passed" in doc):
            out.append(("kind_exit_mismatch", f"exit {code} with a result document"))
        return out
    kind = error.get("kind") if isinstance(error, dict) else None
    if kind == "internal":
        out.append(("internal", str(error.get("message", ""))[:300]))
    elif kind not in table:
        out.append(("kind_not_in_table", f"kind {kind!r}"))
    elif not batch_line and code not in table[kind]:
        out.append(("kind_exit_mismatch", f"kind {kind} with exit {code}"))
    return out


def findings(argv: list, code: int, out: str, err: str, table: dict) -> list:
    """Every way this run breaks the contract, as (class, detail) pairs."""
    found = []
    if code not in ALLOWED_EXIT:
        found.append(("exit_code", f"exit {code}"))
    if "Traceback" in out or "Traceback" in err:
        found.append(("traceback", (err or out)[-300:]))
    if "internal error" in err:
        found.append(("internal", err[-300:]))
    command = command_of(argv)
    is_batch, is_check = command == "batch", command == "check"
    if not json_requested(argv) and not is_batch:
        return found
    try:
        out.encode("utf-8")
    except UnicodeEncodeError as exc:
        found.append(("bad_json", f"stdout is not valid UTF-8: {exc}"))
        return found
    if is_batch and code == 2 and not json_requested(argv):
        return found
    if is_batch and not (code == 2 and out.count("\n") <= 1):
        lines = out.splitlines()
        bad_lines = 0
        for line in lines:
            try:
                doc = json.loads(line)
            except ValueError:
                found.append(("bad_json", f"batch line is not JSON: {line[:120]!r}"))
                continue
            if isinstance(doc, dict) and "error" in doc:
                bad_lines += 1
            found += _check_doc(doc, code, table, True, False)
        if code == 0 and bad_lines:
            found.append(("kind_exit_mismatch", "batch exit 0 with error records"))
        if code == 1 and not bad_lines and lines:
            found.append(("kind_exit_mismatch", "batch exit 1 without an error record"))
        return found
    try:
        doc = json.loads(out)
    except ValueError:
        found.append(("bad_json", f"not one JSON document: {out[:200]!r}"))
        return found
    found += _check_doc(doc, code, table, False, is_check)
    return found


def dedupe(pairs: list) -> list:
    seen, out = set(), []
    for cls, detail in pairs:
        if cls not in seen:
            seen.add(cls)
            out.append((cls, detail))
    return out


def case_findings(case: Case, argv: list, code: int, out: str, err: str, table: dict) -> list:
    found = findings(argv, code, out, err, table)
    if case.oracle is not None and code in (0, 1, 2) and not found:
        found += oracle_findings(case.oracle, case.op, code, out)
    return dedupe(found)


# ---- running the command line in-process (the bench script; the tests use the cli fixture) ----


def forget_run_state() -> None:
    """Clear what one in-process run leaves behind for the next.

    cli/options.py keeps the "held bytes that are not valid UTF-8" note in module state that
    nothing clears (an open finding, tests/test_fuzz_regressions.py), so after an input with
    a bad byte every later run in the process would carry the note, other test files' exact
    messages included.  Fuzzing feeds such bytes on purpose, so it cleans up after itself.
    """
    from autograd_cli.cli import options

    replaced = getattr(options, "_REPLACED", None)
    if isinstance(replaced, list):
        replaced.clear()


def run_inprocess(argv: list):
    """(exit code, stdout, stderr) of ``autograd_cli.cli.main.run(argv)``, stdin empty."""
    from autograd_cli.cli.main import run

    saved = sys.stdin, sys.stdout, sys.stderr
    out, err = io.StringIO(), io.StringIO()
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(""), out, err
    try:
        code = int(run(list(argv)))
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
        forget_run_state()
    return code, out.getvalue(), err.getvalue()


def subtrees(tree):
    """Smaller trees for shrinking a wrong value: each child, and each node's children
    shrunk in place."""
    if tree[0] in ("var", "const"):
        return
    kids = [t for t in tree[1:] if isinstance(t, tuple)]
    yield from kids
    for i, part in enumerate(tree):
        if isinstance(part, tuple):
            for smaller in subtrees(part):
                yield tree[:i] + (smaller,) + tree[i + 1 :]
