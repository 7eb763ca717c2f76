"""diff vs SymPy: printed length (tokens) and value on 50 everyday expressions.

For each expression of :data:`CORPUS`, the derivative printed by
``autograd_cli.diff`` is compared with ``str(sympy.diff(expr, var))``,
SymPy's derivative printed without ``simplify()`` (its automatic evaluation
only).  Both are counted in lexical tokens (numbers, names, operators,
brackets) by the same tokenizer, and both are evaluated at random points in
the corpus's domain; the values must agree.

Run it from the repository root::

    python bench/diff_vs_sympy.py            # the table and totals, as Markdown
    python bench/diff_vs_sympy.py --check    # also exit 1 if a value disagrees

The test suite imports :data:`CORPUS` and the helpers from here.
"""

from __future__ import annotations

import math
import random
import sys
import time

import sympy

from autograd_cli import diff
from autograd_cli.core.printing import count_tokens

# (expression, variable).  Everyday calculus: polynomials, products, quotients,
# the chain rule, exponentials and logarithms, trigonometric and hyperbolic
# functions, and a few of two variables.  The first four are the seeds'.
CORPUS = [
    ("3*x**3 - x**2", "x"),
    ("2*x**2 + b", "x"),
    ("3*(x + 2)**2", "x"),
    ("(x + w)*(w + 1)", "w"),
    ("x**5 - 4*x**2 + 7", "x"),
    ("1/x", "x"),
    ("sqrt(x)", "x"),
    ("x**(1/3)", "x"),
    ("exp(x)", "x"),
    ("exp(2*x)", "x"),
    ("exp(-x**2)", "x"),
    ("log(x)", "x"),
    ("log(1 + x)", "x"),
    ("log(x**2 + 1)", "x"),
    ("sin(x)", "x"),
    ("cos(x)", "x"),
    ("tan(x)", "x"),
    ("sin(x)*cos(x)", "x"),
    ("sin(x)**2", "x"),
    ("sin(2*x + 1)", "x"),
    ("x*sin(x)", "x"),
    ("x**2*exp(x)", "x"),
    ("exp(x)*sin(x)", "x"),
    ("sin(x)/x", "x"),
    ("x/(x**2 + 1)", "x"),
    ("(x - 1)/(x + 1)", "x"),
    ("1/(1 + exp(-x))", "x"),
    ("sigmoid(x)", "x"),
    ("tanh(x)", "x"),
    ("atan(x)", "x"),
    ("asin(x)", "x"),
    ("sqrt(1 - x**2)", "x"),
    ("log(sin(x))", "x"),
    ("exp(sin(x))", "x"),
    ("cos(x**2)", "x"),
    ("(x**2 + 1)**3", "x"),
    ("x**x", "x"),
    ("2**x", "x"),
    ("x*log(x) - x", "x"),
    ("log(x)/x", "x"),
    ("sinh(x)*cosh(x)", "x"),
    ("exp(-x)*cos(2*x)", "x"),
    ("sqrt(x**2 + y**2)", "x"),
    ("x**2*y + x*y**2", "y"),
    ("x*y/(x + y)", "x"),
    ("exp(x*y)", "y"),
    ("log(x*y)", "x"),
    ("(x + 1)**2*(x - 1)", "x"),
    ("abs(x)*x", "x"),
    ("1/sqrt(x**2 + 1)", "x"),
]

# Where the corpus is evaluated: every expression is defined and smooth there.
DOMAIN = {"x": (0.15, 0.85), "y": (0.3, 1.5), "w": (0.5, 2.0), "b": (-2.0, 2.0)}

# The language's functions in SymPy (real symbols, so abs' is sign).
SYMPY_FUNCTIONS = {
    "sqrt": sympy.sqrt,
    "exp": sympy.exp,
    "log": sympy.log,
    "sin": sympy.sin,
    "cos": sympy.cos,
    "tan": sympy.tan,
    "asin": sympy.asin,
    "acos": sympy.acos,
    "atan": sympy.atan,
    "sinh": sympy.sinh,
    "cosh": sympy.cosh,
    "tanh": sympy.tanh,
    "abs": sympy.Abs,
    "sign": sympy.sign,
    "log2": lambda a: sympy.log(a, 2),
    "log10": lambda a: sympy.log(a, 10),
    "sigmoid": lambda a: 1 / (1 + sympy.exp(-a)),
    "softplus": lambda a: sympy.log(1 + sympy.exp(a)),
    "relu": lambda a: sympy.Max(a, 0),
    "max": sympy.Max,
    "min": sympy.Min,
}


def to_sympy(text: str, names) -> sympy.Expr:
    """The corpus's text as a SymPy expression (its syntax is Python's for these)."""
    symbols = {n: sympy.Symbol(n, real=True) for n in names}
    namespace = dict(SYMPY_FUNCTIONS, **symbols, pi=sympy.pi, E=sympy.E)
    return sympy.sympify(text, locals=namespace, rational=True)


def sympy_diff(text: str, var: str, names, order: int = 1) -> sympy.Expr:
    return sympy.diff(to_sympy(text, names), sympy.Symbol(var, real=True), order)


def sympy_value(expr: sympy.Expr, point: dict) -> float:
    subs = {sympy.Symbol(k, real=True): sympy.Float(v, 30) for k, v in point.items()}
    return float(expr.evalf(30, subs=subs))


def random_point(names, rng: random.Random) -> dict:
    return {n: rng.uniform(*DOMAIN.get(n, (0.3, 1.5))) for n in names}


def close(a: float, b: float, rel: float = 1e-9, abs_: float = 1e-12) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


def compare(text: str, var: str, rng: random.Random, points: int = 5) -> dict:
    """One corpus row: both printed derivatives, their token counts, and whether values agree."""
    from autograd_cli.core.recording import evaluate
    from autograd_cli.grammar import parse

    names = parse(text).inputs
    start = time.perf_counter()
    ours = diff(text, var).derivatives[var]
    elapsed = time.perf_counter() - start
    theirs = sympy_diff(text, var, names)
    back = parse(ours.text)  # the printed derivative, read back by the tool's own parser
    agree = True
    for _ in range(points):
        point = random_point(names, rng)
        mine = float(
            evaluate(back, {k: v for k, v in point.items() if k in back.inputs}).output.item()
        )
        agree &= close(mine, sympy_value(theirs, point))
    theirs_text = str(theirs)
    return {
        "expr": text,
        "wrt": var,
        "ours": ours.text,
        "sympy": theirs_text,
        "ours_tokens": count_tokens(ours.text),
        "sympy_tokens": count_tokens(theirs_text),
        "values_agree": agree,
        "seconds": elapsed,
    }


def run(seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    return [compare(text, var, rng) for text, var in CORPUS]


def markdown(rows: list[dict]) -> str:
    ours = sum(r["ours_tokens"] for r in rows)
    theirs = sum(r["sympy_tokens"] for r in rows)
    shorter = sum(r["ours_tokens"] < r["sympy_tokens"] for r in rows)
    equal = sum(r["ours_tokens"] == r["sympy_tokens"] for r in rows)
    longer = [r for r in rows if r["ours_tokens"] > r["sympy_tokens"]]
    lines = [
        "# diff vs SymPy (tokens of the printed first derivative)",
        "",
        f"{len(rows)} expressions; SymPy {sympy.__version__}, `str(sympy.diff(e, v))` without "
        "`simplify()`.",
        "",
        f"- total tokens: ours {ours}, SymPy {theirs} ({ours / theirs:.1%} of SymPy's)",
        f"- per expression: shorter {shorter}, equal {equal}, longer {len(longer)}",
        f"- values agree at 5 random points each: "
        f"{sum(r['values_agree'] for r in rows)}/{len(rows)}",
        f"- slowest diff: {max(r['seconds'] for r in rows) * 1000:.1f} ms",
        "",
        "| expression | d/d | ours | tokens | SymPy | tokens |",
        "| --- | --- | --- | ---: | --- | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| `{r['expr']}` | {r['wrt']} | `{r['ours']}` | {r['ours_tokens']} | "
            f"`{r['sympy']}` | {r['sympy_tokens']} |"
        )
    if longer:
        lines += ["", "Longer than SymPy:"]
        for r in longer:
            lines.append(
                f"- `{r['expr']}`: `{r['ours']}` ({r['ours_tokens']}) vs "
                f"`{r['sympy']}` ({r['sympy_tokens']})"
            )
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    rows = run()
    print(markdown(rows))
    if "--check" in argv and not all(r["values_agree"] for r in rows):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
