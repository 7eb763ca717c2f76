"""einsum (issue 13): NumPy's numpy.einsum, with the language's string literal.

* values against NumPy for explicit and implicit subscripts, '...', diagonals, broadcast
  axes of length 1, one to three operands; gradients of every operand against central
  differences (each is itself an einsum); Hessians; PyTorch (``torch`` fixture);
* the string literal: accepted as einsum's subscripts (single or double quotes, spaces
  ignored) and nowhere else, where it is a clear input error;
* the subscripts checked strictly when parsed (exit 2), the shapes when evaluated (exit 1),
  the result's size against the memory limit before it is made;
* printing that parses back, ``diff``'s refusal, batch rows equal to single commands.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from autograd_cli.core import api
from autograd_cli.core import batch as core_batch
from autograd_cli.core.ops import FUNCTIONS
from autograd_cli.core.printing import to_text
from autograd_cli.grammar import parse

RNG = np.random.default_rng(7)

SPECS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ij->ji", [(2, 3)]),
    ("ba", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ij->j", [(2, 3)]),
    ("ii", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("iji->j", [(2, 3, 2)]),
    ("i,i", [(4,), (4,)]),
    ("i,j", [(2,), (3,)]),
    ("i,i->i", [(1,), (3,)]),
    ("ij,ij->ij", [(1, 3), (2, 3)]),
    ("i,ij,j->", [(2,), (2, 3), (3,)]),
    ("...ij,...jk->...ik", [(2, 2, 3), (3, 4)]),
    ("...ij,...jk", [(2, 1, 2, 3), (4, 3, 2)]),
    ("i...->...", [(2, 3, 2)]),
    ("...", [(2, 3)]),
    ("bij,bkj->bik", [(2, 2, 3), (2, 4, 3)]),
    ("ijk->kij", [(2, 3, 4)]),
    ("Aa,aB->AB", [(2, 3), (3, 2)]),
    (" i j , j k -> i k ", [(2, 3), (3, 4)]),
    ("i,", [(3,), ()]),
    ("->", [()]),
]


def _arrays(shapes):
    return [RNG.uniform(-2, 2, size=s) for s in shapes]


def _call(spec, n, quote="'"):
    names = ", ".join(f"x{i}" for i in range(n))
    return f"einsum({quote}{spec}{quote}, {names})"


def _values(arrays):
    return {f"x{i}": np.asarray(a).tolist() for i, a in enumerate(arrays)}


@pytest.mark.parametrize(("spec", "shapes"), SPECS, ids=[s for s, _ in SPECS])
def test_values_match_numpy(spec, shapes):
    arrays = _arrays(shapes)
    got = api.eval_of(parse(_call(spec, len(arrays))), _values(arrays)).value
    want = np.einsum(spec, *arrays)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)
    assert np.shape(got) == np.shape(want)


def _central(expr, values, name, h=1e-6):
    x = np.asarray(values[name], dtype=np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        for sign in (1, -1):
            y = x.copy()
            y[i] += sign * h
            g[i] += sign * float(api.eval_of(parse(expr), {**values, name: y.tolist()}).value)
    return g / (2 * h)


@pytest.mark.parametrize(("spec", "shapes"), SPECS, ids=[s for s, _ in SPECS])
def test_gradients_of_every_operand(spec, shapes):
    arrays = _arrays(shapes)
    out_shape = np.shape(np.einsum(spec, *arrays))
    values = {**_values(arrays), "w": RNG.uniform(-1, 1, size=out_shape).tolist()}
    expr = f"sum({_call(spec, len(arrays))} * w)"
    names = [f"x{i}" for i in range(len(arrays))]
    result = api.grad_of(parse(expr), values, wrt=names)
    for name in names:
        np.testing.assert_allclose(
            result.grad[name], _central(expr, values, name), rtol=1e-6, atol=1e-8
        )


def test_hessian_of_a_quadratic_form(cli):
    A = [[1.0, 2.0], [3.0, 4.0]]
    r = cli("hessian", "einsum('i,ij,j', x, A, x)", "--x", "[0.5, -1]", "--A", json.dumps(A))
    assert r.code == 0, r.err
    r = cli(
        "hessian",
        "einsum('i,ij,j', x, A, x)",
        "--x",
        "[0.5, -1]",
        "--A",
        json.dumps(A),
        "--wrt",
        "x",
        "--json",
    )
    np.testing.assert_allclose(r.json["hessian"]["x"]["x"], np.array(A) + np.array(A).T)


def test_double_quotes_and_the_printed_form(cli):
    r = cli("eval", 'einsum("ij->ji", A)', "--A", "[[1, 2]]", "--json")
    assert r.json["value"] == [[1.0], [2.0]]
    # how a variadic op prints: its arrays as a list first, then the subscripts
    r = cli("eval", "einsum([a, b], 'i,i->')", "--a", "[1, 2]", "--b", "[3, 4]", "--json")
    assert r.json["value"] == 11.0


# ---------------------------------------------------------------------------
# Errors: subscripts when parsed (exit 2), shapes when evaluated (exit 1)
# ---------------------------------------------------------------------------

ERRORS = [
    ("einsum('ij,jk', A)", 2, "input", "name 2 array(s)"),
    ("einsum('ij', A, A)", 2, "input", "but 2 are given"),
    ("einsum('i1', A)", 2, "input", "letters"),
    ("einsum('i.j', A)", 2, "input", "'...'"),
    ("einsum('....i', A)", 2, "input", "'.'"),
    ("einsum('i->j', A)", 2, "input", "which no array has"),
    ("einsum('i->ii', A)", 2, "input", "twice"),
    ("einsum('i->j->k', A)", 2, "input", "more than once"),
    ("einsum('i-j', A)", 2, "input", "'->'"),
    ("einsum(A)", 2, "arity", "subscripts"),
    ("einsum(A, 'ij')", 2, "input", "subscripts first"),
    ("einsum('ij')", 2, "arity", "at least one array"),
    ("einsum('ij', A, k=1)", 2, "arity", "no keyword"),
    ("einsum('ij', A)", 1, "shape", "1 dimension(s) but its subscripts 'ij' name 2"),
    ("einsum('i,i', A, [1, 2, 3])", 1, "shape", "must be equal, or 1"),
    ("einsum('ij->ij', [[1, 2]])", 0, None, None),
    ("einsum('ii', [[1, 2]])", 1, "shape", "equal lengths"),
    ("einsum('...i->i', [[1, 2]])", 1, "shape", "'...'"),
    ("'ij' + A", 2, "input", "string"),
    ("sin('x')", 2, "input", "string"),
    ("A['i']", 2, "input", "string"),
    ("['ij', 1]", 2, "input", "string"),
    ("y = 'ij'; y", 2, "input", "string"),
    ("'ij'", 2, "input", "string"),
    ("einsum('ij', 'ij')", 2, "input", "string"),
    ("sum(A, axis='i')", 2, "input", "string"),
    ("'unterminated", 2, "syntax", "syntax error"),
]


@pytest.mark.parametrize(("expr", "code", "kind", "fragment"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_are_clear(cli, expr, code, kind, fragment):
    values = ["--A", "[1, 2]"] if "A" in expr else []
    r = cli("eval", expr, *values, "--json")
    assert r.code == code, r.out
    if code == 0:
        return
    error = r.json["error"]
    assert error["kind"] == kind and fragment in error["message"], error
    assert "Traceback" not in r.err
    plain = cli("eval", expr, *values)
    assert plain.err.startswith("autograd-cli: error:") and "Traceback" not in plain.err


def test_the_result_size_is_checked_before_it_is_made(cli):
    r = cli(
        "eval",
        "einsum('i,j,k->ijk', a, a, a)",
        "--a",
        json.dumps([1.0] * 2000),
        "--max-memory",
        "1M",
        "--json",
    )
    assert r.code == 1 and r.json["error"]["kind"] == "limit", r.out
    assert "einsum" in r.json["error"]["message"]


# ---------------------------------------------------------------------------
# Printing, diff, batch, the REPL's names
# ---------------------------------------------------------------------------

PRINTED = [
    ("einsum('ij,jk->ik', A, B) + 1", {"A": (2, 3), "B": (3, 2)}),
    ("einsum('ij,jk', A, B)", {"A": (2, 3), "B": (3, 2)}),
    ("sum(einsum('ii->i', B @ A))", {"A": (2, 3), "B": (3, 2)}),
    ("einsum('...j,j', A, [1, 2, 3])", {"A": (2, 3)}),
]


@pytest.mark.parametrize(("text", "shapes"), PRINTED, ids=[p[0] for p in PRINTED])
def test_printed_text_parses_back(text, shapes):
    values = {k: RNG.uniform(-2, 2, size=s).tolist() for k, s in shapes.items()}
    printed = to_text(parse(text).output)
    assert "'" in printed and to_text(parse(printed).output) == printed
    np.testing.assert_array_equal(
        api.eval_of(parse(printed), values).value, api.eval_of(parse(text), values).value
    )


def test_diff_refuses_it_as_the_other_products(cli):
    r = cli("diff", "einsum('i,i', x, x)", "--json")
    assert r.code == 1 and r.json["error"]["kind"] == "unsupported"
    assert "einsum" in r.json["error"]["message"]


def test_the_repl_completes_the_new_functions():
    assert {"einsum", "svd", "svdvals", "split", "norm"} <= set(FUNCTIONS)


BATCHED = [
    ("sum(einsum('ij,jk->ik', A, B))", {"A": (2, 3), "B": (3, 2)}),
    ("einsum('ii', A @ A.T) + sum(einsum('ij,j', A, [1, 2, 3]))", {"A": (2, 3)}),
    ("sum(einsum('...j,...j->...', T, v))", {"T": (2, 2, 3), "v": (3,)}),
]


@pytest.mark.parametrize(("expr", "shapes"), BATCHED, ids=[b[0] for b in BATCHED])
def test_batch_rows_equal_single_rows(cli, tmp_path, expr, shapes):
    rows = [
        {"expr": expr, "vars": {k: RNG.uniform(-2, 2, size=s).tolist() for k, s in shapes.items()}}
        for _ in range(4)
    ]
    program = parse(expr)
    columns = {k: np.array([r["vars"][k] for r in rows]) for k in shapes}
    res = core_batch.evaluate_batch(program, columns, len(rows), grad=True)  # vectorised
    for i, row in enumerate(rows):
        one = api.grad_of(program, row["vars"])
        np.testing.assert_allclose(res.value[i], one.value, rtol=1e-14)
        for name in one.grad:
            np.testing.assert_allclose(res.grad[name][i], one.grad[name], rtol=1e-14)
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    r = cli("batch", str(path))
    assert r.code == 0, r.err
    assert all("error" not in json.loads(line) for line in r.out.splitlines())


# ---------------------------------------------------------------------------
# PyTorch
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "shapes"),
    [s for s in SPECS if " " not in s[0] and s[0] not in ("i,", "->")],
    ids=[s for s, _ in SPECS if " " not in s and s not in ("i,", "->")],
)
def test_values_and_gradients_match_pytorch(torch, spec, shapes):
    arrays = _arrays(shapes)
    leaves = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    out = torch.einsum(spec, *leaves)
    w = RNG.uniform(-1, 1, size=tuple(out.shape))
    theirs = torch.autograd.grad((out * torch.tensor(w)).sum(), leaves)
    values = {**_values(arrays), "w": w.tolist()}
    names = [f"x{i}" for i in range(len(arrays))]
    ours = api.grad_of(parse(f"sum({_call(spec, len(arrays))} * w)"), values, wrt=names)
    for name, t in zip(names, theirs):
        np.testing.assert_allclose(ours.grad[name], t.numpy(), rtol=1e-12, atol=1e-13)
