"""Warnings at kinks: emitted exactly at the kink, never beside it (issue 16).

Every op of the op table with a kink rule (``Op.kink`` in core/ops.py, enumerated below by
``test_every_kink_rule_has_cases``) gets points AT its kink and points close to it on both
sides (kink +- 1e-3, +- 1, the smallest subnormal, 1e-300 next to 0 for sqrt/log, the next
float after a tie, a domain-error point such as sqrt(-1) whose nan has its own warning).
Each is checked through two public paths:

* single line: ``grad EXPR --json`` through the real command line (in process), the
  document's ``warnings`` key;
* batch: one CSV holding all the points of an entry, kink rows and the others interleaved,
  through ``batch`` (vectorised, once whole and once in chunks of 2 rows): each output record
  must carry the kink warning exactly when its row is at the kink, and the same text as the
  single command.

A kink warning is told from a domain warning (``log gave inf (...)``, from the forward value)
by the domain warning's fixed form; at the kink exactly one other warning must appear, and it
must name the op.  Ops whose gradient is zero almost everywhere (sign, floor, ceil, round and
the comparisons) warn wherever they cut a gradient path, whatever the point, and nowhere else.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass

import pytest

from autograd_cli.core import OPS

TINY = 5e-324
NEXT = 1.0000000000000002  # the float after 1.0
DOMAIN = re.compile(r"^\S+ gave (nan|inf) \(")  # core.recording's warning for a nan/inf value


@dataclass
class Kink:
    op: str  # the op-table entry whose kink rule is checked
    expr: str
    names: tuple  # the variables, in CSV column order
    at: list  # points at the kink (tuples, one value per name)
    away: list  # points close to it, not at it
    mention: tuple  # what the message must contain (the op as the language spells it)

    @property
    def id(self):
        return f"{self.op}:{self.expr}"


def scalar(values):
    return [(v,) for v in values]


NEAR_ZERO = scalar([1e-3, -1e-3, 1.0, -1.0, TINY, -TINY, 0.5])
# sqrt and log: their domain ends at the kink; negative points have only the domain warning.
NEAR_ZERO_DOMAIN = scalar([1e-300, TINY, 1e-3, 1.0, -1e-3, -1.0, -TINY, -1e-300])

KINKS = [
    Kink("abs", "abs(x)", ("x",), scalar([0.0, -0.0]), NEAR_ZERO, ("abs",)),
    # i0e(x) = exp(-|x|) I0(x): its corner at 0 (issue 27)
    Kink("i0e", "i0e(x)", ("x",), scalar([0.0, -0.0]), NEAR_ZERO, ("i0e",)),
    # the incomplete gamma and beta functions at the ends of their domains in x (issue 27)
    Kink(
        "gammainc",
        "gammainc(1, x)",
        ("x",),
        scalar([0.0, -0.0]),
        scalar([1e-3, TINY, 1.0, -1e-3]),
        ("gammainc",),
    ),
    Kink(
        "gammaincc",
        "gammaincc(0.5, x)",
        ("x",),
        scalar([0.0, -0.0]),
        scalar([1e-300, TINY, 1.0, -1.0]),
        ("gammaincc",),
    ),
    Kink(
        "betainc",
        "betainc(2, 0.5, x)",
        ("x",),
        scalar([0.0, 1.0]),
        scalar([1e-3, 0.999, 0.5, 1.5, -1e-3]),
        ("betainc",),
    ),
    Kink("relu", "relu(x)", ("x",), scalar([0.0, -0.0]), NEAR_ZERO, ("relu",)),
    Kink("sqrt", "sqrt(x)", ("x",), scalar([0.0, -0.0]), NEAR_ZERO_DOMAIN, ("sqrt",)),
    Kink("log", "log(x)", ("x",), scalar([0.0, -0.0]), NEAR_ZERO_DOMAIN, ("log'",)),
    Kink("log2", "log2(x)", ("x",), scalar([0.0, -0.0]), NEAR_ZERO_DOMAIN, ("log2",)),
    Kink("log10", "log10(x)", ("x",), scalar([0.0, -0.0]), NEAR_ZERO_DOMAIN, ("log10",)),
    # x**p at x = 0 for p < 1, p != 0 (p = 0: x**0 has gradient 0; p >= 1: finite).
    Kink(
        "pow",
        "x**p",
        ("x", "p"),
        [(0.0, 0.5), (0.0, -1.0), (0.0, 0.999), (-0.0, 0.5), (0.0, -0.5), (0.0, 1 / NEXT)],
        [
            (0.0, 1.0),
            (0.0, 2.0),
            (0.0, 0.0),
            (0.0, 1.001),
            (0.0, NEXT),
            (1e-3, 0.5),
            (-1e-3, 2.0),
            (1.0, 0.5),
            (1e-300, 0.5),
            (TINY, -1.0),
            (1e-3, -1.0),
            (-1.0, -1.0),
            (-1e-3, 0.5),
        ],
        ("**",),
    ),
    Kink("pow", "x**0.5", ("x",), scalar([0.0, -0.0]), scalar([1e-3, 1.0, 1e-300, -1e-3]), ("**",)),
    Kink("pow", "x**-1", ("x",), scalar([0.0]), scalar([1e-3, -1e-3, 1.0, -1.0]), ("**",)),
    Kink(
        "maximum",
        "max(x, y)",
        ("x", "y"),
        [(1.0, 1.0), (0.0, 0.0), (-2.5, -2.5), (0.0, -0.0), (1e-300, 1e-300)],
        [
            (1.0, 1.001),
            (1.001, 1.0),
            (1.0, 2.0),
            (2.0, 1.0),
            (1.0, NEXT),
            (NEXT, 1.0),
            (0.0, TINY),
            (-1.0, 0.0),
            (-2.5, -3.5),
        ],
        ("max",),
    ),
    Kink(
        "minimum",
        "min(x, y)",
        ("x", "y"),
        [(1.0, 1.0), (0.0, 0.0), (-2.5, -2.5), (-0.0, 0.0)],
        [
            (1.0, 1.001),
            (1.001, 1.0),
            (1.0, 2.0),
            (2.0, 1.0),
            (1.0, NEXT),
            (NEXT, 1.0),
            (0.0, -TINY),
            (-1.0, 0.0),
        ],
        ("min",),
    ),
    Kink("clamp_min", "max(x, 0)", ("x",), scalar([0.0, -0.0]), NEAR_ZERO, ("max",)),
    Kink(
        "clamp_min",
        "max(1.5, x)",
        ("x",),
        scalar([1.5]),
        scalar([1.499, 1.501, 0.5, 2.5, 1.5 * NEXT, -1.5]),
        ("max",),
    ),
    Kink("clamp_max", "min(x, 0)", ("x",), scalar([0.0, -0.0]), NEAR_ZERO, ("min",)),
    Kink(
        "clamp_max",
        "min(-2, x)",
        ("x",),
        scalar([-2.0]),
        scalar([-2.001, -1.999, -3.0, -1.0, -2.0 * NEXT, 2.0]),
        ("min",),
    ),
    Kink(
        "amax",
        "max(v)",
        ("v",),
        scalar([[1.0, 3.0, 3.0], [2.0, 2.0], [0.0, 0.0, -1.0], [-0.0, 0.0]]),
        scalar(
            [[1.0, 3.0, 2.999], [1.0, 3.0, 2.0], [2.0, 2.001], [3.0, 1.0, 1.0], [1.0, NEXT], [5.0]]
        ),
        ("max(x)", "maximal"),
    ),
    Kink(
        "amin",
        "min(v)",
        ("v",),
        scalar([[1.0, 1.0, 3.0], [2.0, 2.0], [0.0, 0.0, 1.0]]),
        scalar([[1.0, 1.001, 3.0], [1.0, 2.0, 3.0], [1.0, 3.0, 3.0], [1.0, NEXT], [5.0]]),
        ("min(x)", "minimal"),
    ),
    Kink(
        "amax",
        "sum(max(A, axis=1))",
        ("A",),
        scalar([[[1.0, 1.0], [2.0, 3.0]], [[1.0, 0.0], [4.0, 4.0]]]),
        scalar(
            [[[1.0, 1.001], [2.0, 3.0]], [[1.0, 2.0], [2.0, 3.0]], [[2.0, 2.0 * NEXT], [0.0, 1.0]]]
        ),
        ("max(x)",),
    ),
    Kink(
        "amin",
        "sum(min(A, axis=0))",
        ("A",),
        scalar([[[1.0, 2.0], [1.0, 3.0]]]),
        scalar([[[1.0, 1.0], [2.0, 3.0]], [[1.0, 2.0], [1.001, 3.0]]]),
        ("min(x)",),
    ),
    Kink("cbrt", "cbrt(x)", ("x",), scalar([0.0, -0.0]), NEAR_ZERO, ("cbrt",)),
    # atan2 and hypot at the origin, zeros of either sign; close to it on each axis
    # (1e-150: x^2 + y^2 must not underflow to 0, where atan2's partials are pinned too)
    Kink(
        "atan2",
        "atan2(y, x)",
        ("y", "x"),
        [(0.0, 0.0), (-0.0, 0.0), (0.0, -0.0), (-0.0, -0.0)],
        [
            (1e-3, 0.0),
            (0.0, 1e-3),
            (-1e-3, 0.0),
            (0.0, -1e-3),
            (1e-150, 0.0),
            (0.0, -1e-150),
            (1.0, 1.0),
            (-1.0, -0.0),
            (1e-3, -1e-3),
        ],
        ("atan2",),
    ),
    Kink(
        "hypot",
        "hypot(x, y)",
        ("x", "y"),
        [(0.0, 0.0), (-0.0, 0.0), (0.0, -0.0), (-0.0, -0.0)],
        [
            (1e-3, 0.0),
            (0.0, -1e-3),
            (TINY, 0.0),
            (-0.0, TINY),
            (1e-300, 1e-300),
            (1.0, 1.0),
            (-1.0, 0.0),
        ],
        ("hypot",),
    ),
    # mod(a, b) jumps where a is a whole multiple of b (the result is 0); b = 0 is a domain
    # error with its own nan warning
    Kink(
        "mod",
        "mod(a, b)",
        ("a", "b"),
        [(6.0, 3.0), (-6.0, 3.0), (6.0, -3.0), (0.0, 1.0), (-0.0, 3.0), (2.5, 2.5), (1e10, 0.5)],
        [
            (6.001, 3.0),
            (5.999, 3.0),
            (7.0, 3.0),
            (6.0, 3.001),
            (6.0 * NEXT, 3.0),
            (TINY, 1.0),
            (-TINY, 1.0),
            (1.0, 0.1),
            (-0.3, 0.7),
            (3.0, 0.0),
        ],
        ("mod",),
    ),
    Kink(
        "clip",
        "clip(x, lo, hi)",
        ("x", "lo", "hi"),
        [(0.0, 0.0, 1.0), (-0.0, 0.0, 1.0), (1.0, 0.0, 1.0), (1.0, 1.0, 1.0), (-2.5, -2.5, 0.0)],
        [
            (0.5, 0.0, 1.0),
            (1e-3, 0.0, 1.0),
            (-1e-3, 0.0, 1.0),
            (0.999, 0.0, 1.0),
            (1.001, 0.0, 1.0),
            (TINY, 0.0, 1.0),
            (-TINY, 0.0, 1.0),
            (NEXT, 0.0, 1.0),
            (-1.0, 0.0, 1.0),
            (1.5, 2.0, 1.0),
        ],
        ("clip",),
    ),
    Kink(
        "clip",
        "clip(x, 0, 1)",
        ("x",),
        scalar([0.0, -0.0, 1.0]),
        scalar([1e-3, -1e-3, TINY, -TINY, 0.5, 0.999, 1.001, NEXT, 2.0]),
        ("clip",),
    ),
    Kink(
        "norm",
        "norm(v)",
        ("v",),
        scalar([[0.0, 0.0], [-0.0, 0.0], [0.0]]),
        scalar([[1e-3, 0.0], [0.0, -1.0], [1e-150, 0.0], [-1e-3, 1e-3], [1.0]]),
        ("norm",),
    ),
    # eigvalsh, eigh: repeated eigenvalues (within n eps max|L|: a gap of one ulp is rounding's)
    Kink(
        "eigvalsh",
        "sum(eigvalsh(A) * [1, 2])",
        ("A",),
        scalar([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]], [[-2.5, 0.0], [0.0, -2.5]]]),
        scalar(
            [
                [[1.0, 0.0], [0.0, 1.001]],
                [[1.0, 1e-3], [1e-3, 1.0]],
                [[2.0, 1.0], [1.0, 2.0]],
                [[0.0, 0.0], [0.0, 1e-3]],
                [[TINY, 0.0], [0.0, 0.0]],
            ]
        ),
        ("eigvalsh",),
    ),
    Kink(
        "eigh",
        "sum(eigh(A)[1] ** 2 * [[1, 2], [3, 4]])",
        ("A",),
        scalar([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]], [[3.0, 0.0], [0.0, 3.0]]]),
        scalar(
            [
                [[1.0, 0.0], [0.0, 1.001]],
                [[1.0, 1e-3], [1e-3, 1.0]],
                [[2.0, 1.0], [1.0, 2.0]],
                [[0.0, 0.0], [0.0, -1e-3]],
            ]
        ),
        ("eigh",),
    ),
    # angle: 0 (a jump from 0 to pi on the real line)
    Kink(
        "angle",
        "angle(x) * x",
        ("x",),
        scalar([[0.0], [-0.0]]),
        scalar([[1.0], [-2.0], [1e-300]]),
        ("angle",),
    ),
    # eigvals, eig: repeated eigenvalues (within n eps max|L|)
    Kink(
        "eigvals",
        "sum(abs(eigvals(A))**2 * [1, 2])",
        ("A",),
        scalar([[[1.0, 0.0], [0.0, 1.0]], [[2.0, 1.0], [0.0, 2.0]]]),
        scalar([[[1.0, 2.0], [-3.0, 0.5]], [[1.0, 0.0], [0.0, 1.001]], [[0.0, 1.0], [-1.0, 0.0]]]),
        ("eigvals",),
    ),
    Kink(
        "eig",
        "V = eig(A)[1]; sum(real(V * conj(V)) * [[1, 2], [3, 4]])",
        ("A",),
        scalar([[[1.0, 0.0], [0.0, 1.0]], [[3.0, 0.0], [0.0, 3.0]]]),
        scalar([[[1.0, 2.0], [-3.0, 0.5]], [[1.0, 0.0], [0.0, 1.001]], [[0.0, 1.0], [-1.0, 0.0]]]),
        ("eig",),
    ),
    # pinv: a rank-deficient matrix (a singular value cut to 0)
    Kink(
        "pinv",
        "sum(pinv(A) * [[1, 2], [3, 4]])",
        ("A",),
        scalar([[[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]], [[1.0, 0.0], [0.0, 0.0]]]),
        scalar(
            [
                [[1.0, 2.0], [2.0, 4.001]],
                [[1.0, 0.0], [0.0, 1e-3]],
                [[2.0, 1.0], [1.0, 2.0]],
                [[0.0, 1.0], [1.0, 0.0]],
            ]
        ),
        ("pinv",),
    ),
]

# Ops whose gradient is zero almost everywhere: the warning does not depend on the point.
ZERO_GRAD = {
    "sign": ("sign(x) * x", "sign"),
    "floor": ("floor(x) * x", "floor"),
    "ceil": ("ceil(x) * x", "ceil"),
    "round": ("round(x) * x", "round"),
    "lt": ("(x < 1) * x", "comparison"),
    "le": ("(x <= 1) * x", "comparison"),
    "gt": ("(x > 1) * x", "comparison"),
    "ge": ("(x >= 1) * x", "comparison"),
    "eq": ("(x == 1) * x", "comparison"),
    "ne": ("(x != 1) * x", "comparison"),
}
ZERO_GRAD_POINTS = [0.0, 1.0, -1.0, 0.5, 2.5, 1e-3, 1.001]

KINK_IDS = [k.id + f"#{i}" for i, k in enumerate(KINKS)]


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def kink_warnings(doc) -> list:
    """The document's warnings other than domain warnings (nan/inf values)."""
    return [w for w in doc.get("warnings", []) if not DOMAIN.match(w)]


def var_args(names, point):
    args = []
    for name, value in zip(names, point):
        args += ["--var", f"{name}={value!r}"]
    return args


def grad_doc(cli, expr, names, point, *extra):
    r = cli("grad", expr, *var_args(names, point), "--json", *extra)
    assert r.code == 0, (expr, point, r.out, r.err)
    return r.json


def write_csv(path, names, points):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(names)
        for p in points:
            w.writerow([repr(v) for v in p])


def interleave(at, away):
    """Kink rows and the others mixed: at, away, away, at, ... (each point once)."""
    rows, flags = [], []
    ai, bi = list(at), list(away)
    while ai or bi:
        if ai:
            rows.append(ai.pop(0))
            flags.append(True)
        for _ in range(2):
            if bi:
                rows.append(bi.pop(0))
                flags.append(False)
    return rows, flags


# ---------------------------------------------------------------------------
# Coverage: every kink rule of the op table has cases
# ---------------------------------------------------------------------------


def test_every_kink_rule_has_cases():
    with_rule = {name for name, op in OPS.items() if op.kink is not None}
    data_dependent = {k.op for k in KINKS}
    zero_grad = set(ZERO_GRAD)
    assert with_rule == data_dependent | zero_grad, (
        sorted(with_rule - data_dependent - zero_grad),
        sorted((data_dependent | zero_grad) - with_rule),
    )
    # the zero-gradient ones are exactly the piecewise-constant ops and the comparisons
    assert zero_grad == {n for n, op in OPS.items() if op.zero_grad or op.kind == "comparison"}


# ---------------------------------------------------------------------------
# Single line: grad --json
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("kink", KINKS, ids=KINK_IDS)
def test_single_line_warns_exactly_at_the_kink(cli, kink: Kink):
    messages = set()
    for point in kink.at:
        got = kink_warnings(grad_doc(cli, kink.expr, kink.names, point))
        assert len(got) == 1, (kink.id, point, got)
        messages.add(got[0])
    (message,) = messages  # one text for the op, whichever kink point
    for word in kink.mention:
        assert word in message, (kink.id, message, word)
    for point in kink.away:
        doc = grad_doc(cli, kink.expr, kink.names, point)
        assert kink_warnings(doc) == [], (kink.id, point, doc)


@pytest.mark.parametrize("kink", KINKS, ids=KINK_IDS)
def test_batch_warns_exactly_on_the_kink_rows(cli, tmp_path, kink: Kink):
    (message,) = kink_warnings(grad_doc(cli, kink.expr, kink.names, kink.at[0]))
    rows, flags = interleave(kink.at, kink.away)
    path = tmp_path / "points.csv"
    write_csv(path, kink.names, rows)
    for chunk in ((), ("--chunk-size", "2")):
        r = cli("batch", str(path), "--expr", kink.expr, "--no-progress", *chunk)
        assert r.code == 0, (kink.id, r.out, r.err)
        docs = [json.loads(line) for line in r.out.splitlines()]
        assert [d["line"] for d in docs] == list(range(2, len(rows) + 2))
        for doc, row, at in zip(docs, rows, flags):
            assert "error" not in doc, doc
            expected = [message] if at else []
            assert kink_warnings(doc) == expected, (kink.id, chunk, row, doc)


def test_batch_mixed_kinks_in_one_expression(cli, tmp_path):
    # Two kinks in one expression, each row with neither, one or both.
    expr = "abs(x) + sqrt(y)"
    rows = [(0.0, 1.0), (1.0, 0.0), (0.0, 0.0), (1e-3, 1e-300), (-0.0, 4.0), (-1.0, -1.0)]
    path = tmp_path / "two.csv"
    write_csv(path, ("x", "y"), rows)
    r = cli("batch", str(path), "--expr", expr, "--no-progress", "--chunk-size", "4")
    assert r.code == 0, r.err
    docs = [json.loads(line) for line in r.out.splitlines()]
    got = [[("abs" if w.startswith("abs") else "sqrt") for w in kink_warnings(d)] for d in docs]
    assert got == [["abs"], ["sqrt"], ["abs", "sqrt"], [], ["abs"], []]
    for doc, row in zip(docs, rows):  # and each record is the single command's warnings
        single = grad_doc(cli, expr, ("x", "y"), row)
        assert doc.get("warnings") == single.get("warnings"), (row, doc, single)


# ---------------------------------------------------------------------------
# No derivative, no kink warning
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("kink", KINKS, ids=KINK_IDS)
def test_eval_never_carries_kink_warnings(cli, kink: Kink):
    for point in kink.at:
        r = cli("eval", kink.expr, *var_args(kink.names, point), "--json")
        assert r.code == 0
        assert kink_warnings(r.json) == [], (kink.id, point, r.json)


def test_no_warning_when_the_kinked_variable_is_not_differentiated(cli):
    for expr, point, wrt in (
        ("abs(x) + y", (0.0, 1.0), "y"),
        ("max(x, 0) * y", (0.0, 2.0), "y"),
        ("sqrt(x) + y", (0.0, 1.0), "y"),
        ("x**p + y", (0.0, 0.5), "y"),
    ):
        names = ("x", "p") if "p" in expr else ("x",)
        values = dict(zip(names, point))
        values["y"] = 3.0
        args = []
        for k, v in values.items():
            args += ["--var", f"{k}={v!r}"]
        r = cli("grad", expr, *args, "--wrt", wrt, "--json")
        assert r.code == 0, r.out
        assert kink_warnings(r.json) == [], (expr, r.json)
        r = cli("grad", expr, *args, "--json")  # every variable: now it warns
        assert len(kink_warnings(r.json)) == 1, (expr, r.json)


# ---------------------------------------------------------------------------
# Zero-gradient ops: the warning wherever they cut a gradient path, and only there
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("op", sorted(ZERO_GRAD))
def test_zero_gradient_ops_warn_on_the_gradient_path_at_every_point(cli, tmp_path, op):
    expr, word = ZERO_GRAD[op]
    messages = set()
    for x in ZERO_GRAD_POINTS:
        got = kink_warnings(grad_doc(cli, expr, ("x",), (x,)))
        assert len(got) == 1, (op, x, got)
        messages.add(got[0])
    (message,) = messages
    assert word in message and "zero almost everywhere" in message, message
    path = tmp_path / "z.csv"
    write_csv(path, ("x",), scalar(ZERO_GRAD_POINTS))
    r = cli("batch", str(path), "--expr", expr, "--no-progress", "--chunk-size", "3")
    assert r.code == 0
    assert [kink_warnings(json.loads(line)) for line in r.out.splitlines()] == [[message]] * len(
        ZERO_GRAD_POINTS
    )


@pytest.mark.parametrize(
    "expr,wrt",
    [
        ("where(x > 0, x, -x)", None),  # a condition is not a gradient path
        ("where(x <= 1, x, 2 * x)", None),
        ("floor(c) * x", "x"),  # floor's input is not differentiated
        ("round(c) + sign(c) + x", "x"),
        ("(c == 1) * x", "x"),
    ],
)
def test_zero_gradient_ops_off_the_gradient_path_do_not_warn(cli, tmp_path, expr, wrt):
    points = [(v, v) for v in ZERO_GRAD_POINTS]
    names = ("x", "c") if "c" in expr else ("x",)
    extra = ("--wrt", wrt) if wrt else ()
    for p in points:
        doc = grad_doc(cli, expr, names, p[: len(names)], *extra)
        assert kink_warnings(doc) == [], (expr, p, doc)
    if wrt is None:
        path = tmp_path / "w.csv"
        write_csv(path, names, [p[: len(names)] for p in points])
        r = cli("batch", str(path), "--expr", expr, "--no-progress")
        assert r.code == 0
        assert all(kink_warnings(json.loads(line)) == [] for line in r.out.splitlines())
