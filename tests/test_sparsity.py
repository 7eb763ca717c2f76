"""Structural sparsity (issue 28, first part): the pattern never misses a nonzero of the dense
Jacobian or Hessian, the coloring is structurally orthogonal, and the compressed sweeps give
the dense values; the commands' JSON as SPEC writes a sparse matrix."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_batch_property import VARIABLES, _row_values, _shape_of, batch_cases

from autograd_cli.core import OPS, api
from autograd_cli.core.errors import AutogradCliError
from autograd_cli.core.sparsity import (
    _decompressed,
    color_columns,
    coloring,
    hessian_pattern,
    jacobian_pattern,
    sparse_hessian,
    sparse_jacobian,
    star_colored,
    structurally_orthogonal,
)
from autograd_cli.grammar import parse

pytest.importorskip("scipy")


def _dense_jacobian(program, values, names, rows):
    jac = api.jacobian_of(program, values, wrt=names).jacobian
    return np.concatenate([np.asarray(jac[n]).reshape(rows, -1) for n in names], axis=1)


def _dense_hessian(program, values, names, sizes):
    h = api.hessian_of(program, values, wrt=names).hessian
    return np.block(
        [[np.asarray(h[a][b]).reshape(sizes[a], sizes[b]) for b in names] for a in names]
    )


PROGRAMS = [
    ("x[:-2] - 2*x[1:-1] + x[2:] + 0.01*exp(x[1:-1])", {"x": np.linspace(0.1, 0.9, 7)}),
    ("sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)", {"x": np.linspace(-1, 1, 6)}),
    ("A @ x", {"A": [[1, 0, 0], [0, 0, 2], [0, 3, 0]], "x": [1.0, 2, 3]}),
    ("cumsum(x)*y", {"x": [1.0, 2, 3], "y": 2.0}),
    ("concatenate([x, y*x])", {"x": [1.0, 2], "y": 3.0}),
    ("reshape(x, [2, 2]).T * sin(x[0])", {"x": [1.0, 2, 3, 4]}),
    ("sum(x, axis=0) * prod(x)", {"x": [[1.0, 2], [3, 4]]}),
    ("sum(x*y) + x[0]**3", {"x": [1.0, 2, 3], "y": [3.0, 4, 5]}),
    ("sum(exp(A @ x))", {"A": [[1, 0, 0], [0, 0, 2], [0, 3, 0]], "x": [1.0, 2, 3]}),
    ("triu(reshape(x, [2, 2])) @ [1, 2]", {"x": [1.0, 2, 3, 4]}),
    # an arrowhead Hessian (a star coloring: 2 colors for 7) and a dense row (row colors)
    ("x[0]*sum(x[1:]**2) + sum(x**4)", {"x": [1.0, -2, 3, 0.5, 5, 6, -7]}),
    ("concatenate([x[1:]**2 - x[:-1], [sum(x**2)]])", {"x": [1.0, -2, 3, 0.5, 5, 6, -7]}),
    ("sum(x / (1 + y**2)) + sum(x) / sum(y)", {"x": [1.0, 2, 3, 4, 5], "y": [0.5, -1, 2, 3, 1]}),
    # fiber ops: each element on its fiber along the axis (up to it: cumsum, cumprod)
    ("cumsum(x, axis=0) * 2 + sort(x, axis=1)", {"x": [[1.0, -2, 3], [0.5, 5, 6], [6, -7, 2]]}),
    (
        "cumprod(x) + reshape(softmax(y, axis=0), [4])",
        {"x": [[1.0, -2], [3, 0.5]], "y": [[1.0, 2], [0, 3]]},
    ),
    ("sum(log_softmax(x) * cumsum(x))", {"x": [1.0, -2, 3, 0.5]}),
    # x @ A routes x through A's nonzeros; A @ X with a matrix X is the dense rule's
    ("x @ A", {"A": [[1, 0, 0], [0, 0, 2], [3, 0, 0]], "x": [1.0, 2, 3]}),
    ("A @ X", {"A": [[1, 0], [0, 2]], "X": [[1.0, 2], [3, 4]]}),
]


@pytest.mark.parametrize(
    "text, nnz",
    [
        ("cumsum(x, axis=0)", 18),  # 3 columns of 3: 1 + 2 + 3 each
        ("cumsum(x)", 45),  # the flattened 9: 9 * 10 / 2
        ("sort(x)", 27),  # 3 rows of 3, each on its row
        ("softmax(x, axis=0)", 27),
        ("cumprod(x, axis=1)", 18),
    ],
)
def test_a_fiber_op_depends_on_its_fiber_only(text, nnz):
    x = np.arange(1.0, 10.0).reshape(3, 3) * [1, -1, 0.5]
    pattern, _, _ = jacobian_pattern(parse(text), {"x": x}, ["x"])
    assert pattern.nnz == nnz  # not the dense rule's 81


@pytest.mark.parametrize("text, values", PROGRAMS)
def test_the_pattern_holds_every_nonzero_and_the_sparse_values_are_the_dense(text, values):
    program = parse(text)
    names = [n for n in program.inputs if n != "A"]
    pattern, ev, sizes = jacobian_pattern(program, values, names)
    rows = int(ev.output.data.size)
    dense = _dense_jacobian(program, values, names, rows)
    assert not ((dense != 0) & ~pattern.toarray()).any()
    colors, k = color_columns(pattern)
    assert structurally_orthogonal(pattern, colors)
    _, blocks, _, _ = sparse_jacobian(program, values, names)
    got = np.concatenate([blocks[n].dense() for n in names], axis=1)
    np.testing.assert_allclose(got, dense, rtol=1e-13, atol=1e-13)
    if rows == 1:
        h_pattern, _, _ = hessian_pattern(program, values, names)
        h_dense = _dense_hessian(program, values, names, sizes)
        assert not ((h_dense != 0) & ~h_pattern.toarray()).any()
        _, h_blocks, _, _, _ = sparse_hessian(program, values, names)
        got = np.block([[h_blocks[a][b].dense() for b in names] for a in names])
        np.testing.assert_allclose(got, h_dense, rtol=1e-12, atol=1e-12)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(batch_cases(), st.integers(0, 2**32 - 1))
def test_random_programs_never_miss_a_nonzero(case, seed):
    n, m, k, grad_expr, eval_expr, _, _, _, _ = case
    rng = np.random.default_rng(seed)
    shapes = {name: _shape_of(dims, n, m, k) for name, dims in VARIABLES.items()}
    point = _row_values(rng, shapes)
    for text in (grad_expr, eval_expr):
        program = parse(text)
        names = list(program.inputs)
        values = {v: point[v] for v in names}
        if not names:
            continue
        try:
            pattern, ev, sizes = jacobian_pattern(program, values, names)
            dense = _dense_jacobian(program, values, names, int(ev.output.data.size))
        except AutogradCliError:
            continue  # a shape error of the random program: nothing to compare
        dense = np.nan_to_num(dense, nan=1.0, posinf=1.0, neginf=1.0)
        assert not ((dense != 0) & ~pattern.toarray()).any(), text
        if ev.output.data.size == 1:
            h_pattern, _, _ = hessian_pattern(program, values, names)
            # nan is no evidence here: at a singular point (sin(x) = 0 under a division) the
            # dense oracle's second sweep spreads 0 * inf into entries no path reaches
            h = _dense_hessian(program, values, names, sizes)
            assert not ((h != 0) & ~np.isnan(h) & ~h_pattern.toarray()).any(), text


def test_the_coloring_is_near_the_optimum_on_bands_and_arrowheads():
    import scipy.sparse as sp

    for width in (1, 2, 3):  # a band of half-width w: 2w + 1 colors, the optimum
        band = sp.diags([np.ones(50)] * (2 * width + 1), range(-width, width + 1), (50, 50))
        colors, k = color_columns(band.tocsr().astype(bool))
        assert structurally_orthogonal(band.tocsr(), colors) and k == 2 * width + 1
    # an arrowhead: the dense row makes every column conflict: n colors are needed
    arrow = np.eye(8, dtype=bool)
    arrow[0, :] = True
    arrow[:, 0] = True
    colors, k = color_columns(sp.csr_matrix(arrow))
    assert structurally_orthogonal(sp.csr_matrix(arrow), colors) and k == 8
    # a wrong coloring is caught
    assert not structurally_orthogonal(sp.csr_matrix(arrow), np.zeros(8, dtype=np.int64))


def test_an_arrowhead_takes_two_star_colors_and_a_dense_row_two_row_colors():
    import scipy.sparse as sp

    arrow = np.eye(40, dtype=bool)
    arrow[0, :] = arrow[:, 0] = True
    star = coloring(sp.csr_matrix(arrow), "hessian")
    assert (star.mode, star.k) == ("star", 2) and star_colored(sp.csr_matrix(arrow), star.colors)
    # the same pattern as a Jacobian: its dense row and column leave nothing cheaper
    assert coloring(sp.csr_matrix(arrow), "jacobian").k == 40
    lower = np.eye(40, dtype=bool) | np.eye(40, k=1, dtype=bool)
    lower[-1, :] = True  # residuals and one sum: the row colors, reverse sweeps
    rows = coloring(sp.csr_matrix(lower), "jacobian")
    assert rows.mode == "rows" and rows.k <= 3
    assert structurally_orthogonal(sp.csr_matrix(lower.T), rows.colors)
    # a band: its 3 columns colors kept (no star nor row coloring gives fewer)
    band = sp.diags([np.ones(40)] * 3, [-1, 0, 1], (40, 40)).tocsr().astype(bool)
    assert coloring(band, "hessian").mode == "columns" and coloring(band, "hessian").k == 3


def test_a_dense_row_takes_one_row_color_and_an_arrowhead_two_star_colors_from_four():
    import scipy.sparse as sp

    # four columns that all conflict: cheaper ways are tried past three column colors
    one_row = coloring(sp.csr_matrix(np.ones((1, 4), dtype=bool)), "jacobian")
    assert (one_row.mode, one_row.k) == ("rows", 1)
    arrow = np.eye(4, dtype=bool)
    arrow[0, :] = arrow[:, 0] = True
    assert coloring(sp.csr_matrix(arrow), "hessian").k == 2
    # no columns: no colors (the JSON's "colors": 0 of a jacobian of an empty x)
    colors, k = color_columns(sp.csr_matrix((3, 0), dtype=bool))
    assert colors.size == 0 and k == 0


def test_hubs_take_a_color_each_at_any_size():
    import scipy.sparse as sp

    # an arrowhead of 10^5 (past the greedy colorings): the hub apart, the rest a diagonal
    n = 10**5
    arrow = sp.eye(n, format="lil", dtype=bool)
    arrow[0, :] = arrow[:, 0] = True
    arrow = arrow.tocsr()
    star = coloring(arrow, "hessian")
    assert (star.mode, star.k) == ("star", 2) and star_colored(arrow, star.colors)
    # a band with a dense column (a parameter every residual reads): 3 + 1 column colors
    band = sp.diags([np.ones(n)] * 3, [-1, 0, 1], (n, n), format="lil", dtype=bool)
    band[:, 7] = True
    band = band.tocsr()
    columns = coloring(band, "jacobian")
    assert (columns.mode, columns.k) == ("columns", 4)
    assert structurally_orthogonal(band, columns.colors)


@pytest.mark.parametrize(
    "text, of, k",
    [
        ("sum((x - p)**2) + sum(x**4)", "hessian", 2),  # p couples with every x
        ("sum(x * p) * p + sum(sin(x))", "hessian", 2),
        ("x**2 - p", "jacobian", 2),  # p's column is dense
    ],
)
def test_a_parameter_coupled_to_every_variable_is_a_hub(text, of, k):
    x = np.linspace(0.1, 2.0, 300)
    program = parse(text)
    values = {"x": x, "p": 0.7}
    if of == "hessian":
        _, blocks, colors, _, _ = sparse_hessian(program, values, ["x", "p"])
        got = np.block([[blocks[a][b].dense() for b in "xp"] for a in "xp"])
        want = _dense_hessian(program, values, ["x", "p"], {"x": 300, "p": 1})
    else:
        _, blocks, colors, _ = sparse_jacobian(program, values, ["x", "p"])
        got = np.concatenate([blocks[n].dense() for n in "xp"], axis=1)
        want = _dense_jacobian(program, values, ["x", "p"], 300)
    assert colors == k
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


@settings(max_examples=15, deadline=None)
@given(st.integers(150, 400), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_hubs_apart_are_a_star_coloring_that_decompresses(n, hubs, seed):
    import scipy.sparse as sp

    from autograd_cli.core.sparsity import _star_hubs

    rng = np.random.default_rng(seed)
    upper = np.triu(rng.random((n, n)) < 3.0 / n)  # a few nonzeros a row
    for h in rng.choice(n, hubs, replace=False):
        upper[h, :] = rng.random(n) < 0.9  # a parameter coupled to nearly every variable
    mask = upper | upper.T | np.eye(n, dtype=bool)
    pattern = sp.csr_matrix(mask)
    star = _star_hubs(pattern)
    assert star is not None and star_colored(pattern, star.colors)
    h = np.where(mask, rng.standard_normal((n, n)), 0.0)
    h = h + h.T
    compressed = (h @ np.eye(star.k)[star.colors]).T
    _, _, _, whole = _decompressed(pattern, compressed, star)
    np.testing.assert_allclose(whole.toarray(), h, rtol=1e-14, atol=1e-14)


def test_a_periodic_band_takes_its_corners_apart():
    # roll(x, 1): rows 0 and n-1 span the whole matrix; past the greedy colorings the band
    # leaves them out of its width and gives their columns a color each (not n colors)
    n = 10**5
    program = parse("roll(x, 1) - 2*x + roll(x, -1) + 0.01*exp(x)")
    pattern, _, _ = jacobian_pattern(program, {"x": np.zeros(n)}, ["x"])
    found = coloring(pattern)
    assert found.k <= 7 and structurally_orthogonal(pattern, found.colors)
    _, _, k, whole = sparse_jacobian(program, {"x": np.zeros(n)}, ["x"])
    j = whole.tocsr()
    assert k == found.k and j.nnz == 3 * n
    assert (j[0, 0], j[0, 1], j[0, n - 1], j[n - 1, 0], j[7, 6]) == (-1.99, 1.0, 1.0, 1.0, 1.0)


def test_complex_values_take_forward_sweeps_not_conjugated_rows():
    # row colors would sweep backwards, which gives conj(J)'s rows for complex values
    z = np.array([1 + 1j, 2, 3, 4, 5, 6, 7, 8, 9, 10j])
    program = parse("concatenate([z[1:]**2 - z[:-1], [sum(z**2)]])")
    _, blocks, k, _ = sparse_jacobian(program, {"z": z}, ["z"])
    real = sparse_jacobian(program, {"z": z.real}, ["z"])
    assert k == 10 and real[2] == 3  # the real one takes the row colors
    want = np.diag(-np.ones(10))[:9] + np.diag(2 * z[1:], 1)[:9]
    want = np.vstack([want, 2 * z])
    np.testing.assert_allclose(blocks["z"].dense(), want, rtol=1e-15)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 30), st.floats(0.02, 0.5), st.integers(0, 2**32 - 1))
def test_a_star_coloring_is_valid_and_decompresses_any_symmetric_matrix(n, density, seed):
    import scipy.sparse as sp

    from autograd_cli.core.sparsity import _star_colors

    rng = np.random.default_rng(seed)
    upper = np.triu(rng.random((n, n)) < density)
    upper[0, :] = rng.random(n) < 0.8  # a hub, often: where star colorings pay
    mask = upper | upper.T | np.eye(n, dtype=bool)
    pattern = sp.csr_matrix(mask)
    star = _star_colors(pattern)
    assert star_colored(pattern, star.colors)
    h = np.where(mask, rng.standard_normal((n, n)), 0.0)
    h = h + h.T
    seeds = np.eye(star.k)[star.colors]  # S: column j is in color colors[j]
    compressed = (h @ seeds).T  # one forward sweep per color: H s_c
    _, _, _, whole = _decompressed(pattern, compressed, star)
    np.testing.assert_allclose(whole.toarray(), h, rtol=1e-14, atol=1e-14)
    if mask[~np.eye(n, dtype=bool)].any():  # one color for all: not a star coloring
        assert not star_colored(pattern, np.zeros(n, dtype=np.int64))


def test_a_million_variable_chain_takes_three_colors():
    x = np.zeros(10**5)
    program = parse("sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)")
    _, blocks, k, _, _ = sparse_hessian(program, {"x": x}, ["x"])
    h = blocks["x"]["x"]
    assert k == 3 and h.values.size == 3 * 10**5 - 2
    diagonal = h.values[h.rows == h.cols]
    assert diagonal[0] == 2.0 and diagonal[1] == 202.0 and diagonal[-1] == 200.0


def test_the_commands_json(cli):
    out = cli(
        "hessian",
        "sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)",
        "--x",
        "[0,0,0,0]",
        "--sparse",
        "--json",
    )
    doc = json.loads(out.out)
    block = doc["hessian"]["x"]["x"]
    assert set(block) == {"shape", "rows", "cols", "values", "colors"}
    assert block["shape"] == [4, 4] and block["colors"] == 3
    assert block["rows"] == sorted(block["rows"])  # row-major
    assert doc["grad"]["x"] == [-2.0, -2.0, -2.0, 0.0]
    out = cli("jacobian", "x[:-2] - 2*x[1:-1] + x[2:]", "--x", "[1,2,3,4,5]", "--sparse", "--json")
    block = json.loads(out.out)["jacobian"]["x"]
    assert block["shape"] == [3, 5] and block["values"] == [1.0, -2.0, 1.0] * 3
    out = cli("sparsity", "x[:-2] - 2*x[1:-1] + x[2:]", "--x", "[0,0,0,0,0]", "--json")
    doc = json.loads(out.out)
    assert {"shape", "nnz", "rows", "cols"} <= set(doc) and doc["nnz"] == 9
    assert doc["of"] == "jacobian"
    out = cli("sparsity", "sum(x**2)", "--x", "[1, 2]", "--json")
    assert json.loads(out.out)["of"] == "hessian" and json.loads(out.out)["nnz"] == 2


def test_minimize_takes_sparse_newton_steps_for_many_variables(monkeypatch):
    from autograd_cli.core import optimize, sparsity

    calls, colorings = [], []
    real, color = sparsity.sparse_hessian, sparsity.color_columns
    monkeypatch.setattr(
        sparsity, "sparse_hessian", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    monkeypatch.setattr(sparsity, "color_columns", lambda p: colorings.append(1) or color(p))
    program = parse("sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)")
    start = {"x": np.full(optimize.SPARSE_NEWTON_FROM + 100, 0.8)}
    r = optimize.minimize(program, start)
    assert r.converged and np.allclose(np.asarray(r.x["x"]), 1.0)
    assert len(calls) == r.iterations + 1 > 2  # the sparse path, at every iterate
    assert colorings == [1]  # the one pattern colored once, not at every iterate
    monkeypatch.setattr(optimize, "SPARSE_NEWTON_FROM", 10**9)  # the dense path agrees
    dense = optimize.minimize(program, start)  # (its indefinite steps go downhill instead)
    assert dense.converged and np.allclose(np.asarray(dense.x["x"]), np.asarray(r.x["x"]))


def test_the_coloring_is_found_again_where_the_pattern_changes():
    from autograd_cli.core import sparsity

    memo: dict = {}
    program = parse("x[:-1] * x[1:]")
    band = sparsity.jacobian_pattern(program, {"x": np.ones(6)}, ["x"])[0]
    first = sparsity.colored(band, memo)
    assert sparsity.colored(band.copy(), memo) is first  # the same nonzeros: kept
    wide = sparsity.jacobian_pattern(parse("x[:-2] * x[2:]"), {"x": np.ones(6)}, ["x"])[0]
    again = sparsity.colored(wide, memo)
    assert again is not first and sparsity.structurally_orthogonal(wide, again[0])
    # the same count in every row, other columns (i and i + 2): colored again, not kept
    shifted = band.copy()
    shifted.indices = np.column_stack([np.arange(5), (np.arange(5) + 2) % 6]).ravel()
    shifted.sort_indices()
    sparsity.colored(band, memo)
    other = sparsity.colored(shifted, memo)
    assert sparsity.structurally_orthogonal(shifted, other[0])
    fresh = sparsity.colored(band, None)  # no memo: colored afresh
    assert fresh.k == first.k and np.array_equal(fresh.colors, first.colors)


def test_solve_takes_sparse_newton_steps_for_many_unknowns(monkeypatch):
    from autograd_cli.core import optimize

    n = optimize.SPARSE_NEWTON_FROM + 50
    h2 = 1.0 / (n + 1) ** 2
    bratu = parse(
        f"u = concatenate([[0], x, [0]]); u[:-2] - 2*u[1:-1] + u[2:] + {h2!r}*exp(u[1:-1])"
    )
    r = optimize.solve(bratu, {"x": np.zeros(n)})
    assert r.converged and r.iterations <= 5
    assert abs(max(np.asarray(r.x["x"])) - 0.1405) < 1e-3  # Bratu's u(1/2) for lambda = 1
    assert np.asarray(r.grad["x"]).shape == (n, n)  # dense where it fits, as SPEC's arrays
    assert np.count_nonzero(np.asarray(r.grad["x"])) == 3 * n - 2
    monkeypatch.setattr(optimize, "DENSE_JACOBIAN_MAX", 100)  # past it: SPEC's sparse form
    big = optimize.solve(bratu, {"x": np.zeros(n)})
    assert set(big.grad["x"]) == {"shape", "rows", "cols", "values"}
    assert len(big.grad["x"]["values"]) == 3 * n - 2
    monkeypatch.setattr(optimize, "SPARSE_NEWTON_FROM", 10**9)
    dense = optimize.solve(bratu, {"x": np.zeros(n)})
    np.testing.assert_allclose(np.asarray(dense.x["x"]), np.asarray(r.x["x"]), rtol=1e-10)


def test_the_matrix_to_npz_and_matrix_market(cli, tmp_path):
    import scipy.io
    import scipy.sparse as sp

    chain = "sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)"
    npz, mtx = tmp_path / "h.npz", tmp_path / "j.mtx"
    out = cli("hessian", chain, "--x", "[1, 2, 3]", "--sparse", "-o", str(npz), "--json")
    assert out.code == 0
    dense = np.asarray(api.hessian_of(parse(chain), {"x": [1.0, 2, 3]}).hessian["x"]["x"])
    np.testing.assert_allclose(sp.load_npz(npz).toarray(), dense, rtol=1e-13)
    out = cli(
        "jacobian", "x[:-2] - 2*x[1:-1] + x[2:]", "--x", "[1,2,3,4]", "--sparse", "-o", str(mtx)
    )
    assert out.code == 0
    np.testing.assert_array_equal(
        scipy.io.mmread(str(mtx)).toarray(), [[1, -2, 1, 0], [0, 1, -2, 1]]
    )
    out = cli("jacobian", "x*2", "--x", "[1, 2]", "--sparse", "-o", str(tmp_path / "j.txt"))
    assert out.code == 2 and not (tmp_path / "j.txt").exists()


def test_sparse_auto_takes_the_sparse_path_only_where_it_pays(cli):
    chain = "sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)"
    out = cli("hessian", chain, "--x", json.dumps([0.0] * 12), "--sparse", "auto", "--json")
    doc = json.loads(out.out)
    assert "colors" in doc["hessian"]["x"]["x"] and "sparse result" in doc["notes"][0]
    out = cli("hessian", "sum(x)**3", "--x", "[1, 2, 3, 4]", "--sparse", "auto", "--json")
    doc = json.loads(out.out)
    assert isinstance(doc["hessian"]["x"]["x"], list) and "not sparse enough" in out.err
    out = cli("jacobian", "x*2", "--x", "[1, 2]", "--sparse", "--json")  # bare: always
    assert json.loads(out.out)["jacobian"]["x"]["colors"] == 1


@pytest.mark.parametrize(
    "name", sorted(n for n, op in OPS.items() if op.copies and not op.internal)
)
def test_every_copies_op_copies(name):
    """The ``copies`` fact checked against the op's values: each result element is one
    argument element (the forward of element numbers names it) or 0."""
    import test_op_table

    s = test_op_table.sample(name)
    rng = np.random.default_rng(0)
    numbered, values, offset = [], [], 0
    for a in s.args:
        a = np.asarray(a, dtype=float)
        numbered.append(np.arange(offset + 1, offset + a.size + 1, dtype=float).reshape(a.shape))
        values.append(rng.normal(size=a.shape))
        offset += a.size
    op = OPS[name]
    source = np.asarray(op.forward(*numbered, **s.attrs)).ravel()
    assert np.array_equal(source, np.rint(source)) and (source >= 0).all()
    flat = np.concatenate([v.ravel() for v in values] + [np.zeros(1)])
    got = np.asarray(op.forward(*values, **s.attrs)).ravel()
    np.testing.assert_array_equal(got, flat[np.where(source > 0, source - 1, offset).astype(int)])


def test_the_pattern_asks_the_memory_limit_before_it_grows(cli, tmp_path):
    values = tmp_path / "v.json"
    values.write_text(json.dumps({"x": [1.0] * 20000, "y": [1.0] * 20000}))
    out = cli("sparsity", "sum(x)*y", "--vars", f"@{values}", "--max-memory", "1GB", "--json")
    error = json.loads(out.out)["error"]
    assert out.code != 0 and error["kind"] == "limit"
    # each of y's 20,000 rows repeats sum(x)'s 20,000 entries: an index and a flag each
    assert "(400,000,000 numbers)" in error["message"]
    assert error["needed_bytes"] == 400_000_000 * 12


def test_the_dense_rule_asks_the_memory_limit_for_an_index_and_a_flag_each(cli, tmp_path):
    # inv mixes every element: 10^4 rows on 10^4 columns, 12 bytes each, over 1 GB
    rng = np.random.default_rng(0)
    x = (3 * np.eye(100) + rng.random((100, 100))).ravel()
    values = tmp_path / "v.json"
    values.write_text(json.dumps({"x": x.tolist()}))
    text = "inv(reshape(x, [100, 100]))"
    out = cli("sparsity", text, "--vars", f"@{values}", "--max-memory", "1GB", "--json")
    error = json.loads(out.out)["error"]
    assert error["kind"] == "limit" and "the sparsity pattern" in error["message"]
    assert error["needed_bytes"] == 10**8 * 12


def test_x_times_a_constant_matrix_depends_on_its_nonzeros_only(cli):
    # (x @ A)[j] = sum_i x[i] A[i, j]: on x[i] where A[i, j] != 0, A's transpose routing x
    text, point = "x @ [[1,0,0],[0,0,2],[3,0,0]]", ("--x", "[1,2,3]")
    pattern = json.loads(cli("sparsity", text, *point, "--json").out)
    assert list(zip(pattern["rows"], pattern["cols"])) == [(0, 0), (0, 2), (2, 1)]
    block = json.loads(cli("jacobian", "--sparse", text, *point, "--json").out)["jacobian"]["x"]
    assert list(zip(block["rows"], block["cols"], block["values"])) == [
        (0, 0, 1.0),
        (0, 2, 3.0),
        (2, 1, 2.0),
    ]


def test_a_wanted_variable_without_a_value_is_an_input_error():
    from autograd_cli.core.errors import InputError
    from autograd_cli.core.sparsity import jacobian_pattern

    with pytest.raises(InputError, match="no value for 'z'"):
        jacobian_pattern(parse("x**2"), {"x": np.array([1.0, 2.0])}, ["x", "z"])


@pytest.mark.parametrize(
    "text, what",
    [
        # 1000 long-range pairs: past the greedy colorings and too many to color apart,
        # the band takes 10^5 colors
        ("sum(x[:1000] * x[-1000:]) + sum(x**2)", "the compressed Hessian"),
        ("sum(cumsum(x))", "the sparsity pattern"),  # 5 * 10^9 pairs of a 10^5 fiber
    ],
)
def test_a_pattern_or_sweep_too_large_is_a_limit_before_it_is_allocated(cli, tmp_path, text, what):
    path = tmp_path / "x.npy"
    np.save(path, np.zeros(10**5))
    r = cli("hessian", text, "--x", f"@{path}", "--sparse", "--json")
    assert r.code == 1 and r.json["error"]["kind"] == "limit", r.out[:300]
    assert r.json["error"]["message"].startswith(what)


@pytest.mark.parametrize(
    "text, x, mode",
    [
        # one column color; sqrt'(0) = inf in column 0 reaches rows 1, 2 through A's zeros
        ("A @ sqrt(x)", [0.0, 1, 4], "columns"),
        # a dense row makes the rows cheaper: the other rows share a color, and the inf
        # cotangent of row 1 reaches every other column through A's zeros
        ("concatenate([[sum(x)], A @ sqrt(A @ x)])", [0.0, 1, 4, 9, 16], "rows"),
    ],
)
def test_an_infinite_tangent_does_not_spoil_the_other_columns_of_its_color(text, x, mode):
    """The compressed sweep adds the columns (rows) of a color; an infinite partial of one
    times the exact zeros of a constant matrix (no edge of the pattern) is nan in the entries
    of the others.  Those lines are swept again alone: each entry of the pattern is the dense
    Jacobian's (0.5 = sqrt'(1), 0.25 = sqrt'(4), inf = sqrt'(0) as PyTorch's), and the
    warning of the dense result comes too."""
    program = parse(text)
    values = {"A": np.eye(len(x)), "x": np.array(x)}
    pattern, ev, _ = jacobian_pattern(program, values, ["x"])
    assert coloring(pattern).mode == mode
    dense = _dense_jacobian(program, values, ["x"], int(ev.output.data.size))
    warnings: list = []
    _, blocks, _, _ = sparse_jacobian(program, values, ["x"], warnings=warnings)
    b = blocks["x"]
    np.testing.assert_array_equal(b.values, dense[b.rows, b.cols])
    assert not np.isnan(b.values).any() and np.isinf(b.values).sum() == 1
    assert warnings == ["sqrt'(0) is infinite; used sqrt'(0) = inf (PyTorch)"]


def test_an_infinite_second_partial_does_not_spoil_the_hessians_other_columns(cli):
    """sum(sqrt(A @ x)) with A = I: one color; sqrt''(0) = -inf in column 0 met A's zeros in
    the others' entries (nan); swept alone they are the dense Hessian's diagonal."""
    point = ("--A", json.dumps(np.eye(3).tolist()), "--x", "[0, 1, 4]", "--wrt", "x")
    r = cli("hessian", "sum(sqrt(A @ x))", *point, "--sparse", "--json")
    assert r.code == 0, r.out
    block = r.json["hessian"]["x"]["x"]
    assert block["values"] == ["-inf", -0.25, -0.03125] and block["colors"] == 1
    dense = cli("hessian", "sum(sqrt(A @ x))", *point, "--json").json
    assert [dense["hessian"]["x"]["x"][i][i] for i in range(3)] == block["values"]
    assert (
        r.json["warnings"]
        == dense["warnings"]
        == ["sqrt'(0) is infinite; used sqrt'(0) = inf (PyTorch)"]
    )


def test_the_sparse_results_warn_as_the_dense_ones(cli):
    """A derivative at a kink and a value outside a domain: the same warnings as the dense
    command's, in JSON and after the table."""
    for command, text in (("jacobian", "abs(x)"), ("hessian", "sum(abs(x)**3) + log(x[1] - 2)")):
        sparse = cli(command, text, "--x", "[0, 1]", "--sparse", "--json")
        dense = cli(command, text, "--x", "[0, 1]", "--json")
        assert sparse.code == dense.code == 0, sparse.out
        assert sparse.json["warnings"] == dense.json["warnings"] and dense.json["warnings"]
        table = cli(command, text, "--x", "[0, 1]", "--sparse")
        assert "abs is not differentiable at 0" in table.out
    assert "warnings" not in cli("jacobian", "x*2", "--x", "[1, 2]", "--sparse", "--json").json


def test_a_matrix_nan_throughout_is_not_swept_column_by_column(monkeypatch):
    """sqrt(x) at x < 0: every entry is nan on its own.  Within the bound the nan columns are
    swept again and stay nan, with only the domain warning; past it (made 2 columns here) none
    is swept again and a warning says some nan may come from the compression."""
    import autograd_cli.core.sparsity as sparsity

    program = parse("sqrt(x)")
    warnings: list = []
    _, blocks, k, _ = sparse_jacobian(program, {"x": -np.ones(3)}, ["x"], warnings=warnings)
    assert k == 1 and np.isnan(blocks["x"].values).all() and len(warnings) == 1
    assert warnings[0].startswith("sqrt gave nan")
    monkeypatch.setattr(sparsity, "MEND_LINES", 1)
    monkeypatch.setattr(sparsity, "MEND_SWEEPS", 2)
    swept = []
    real = sparsity._forward_sweeps
    monkeypatch.setattr(sparsity, "_forward_sweeps", lambda *a: swept.append(a[3]) or real(*a))
    warnings = []
    _, blocks, _, _ = sparse_jacobian(program, {"x": -np.ones(3)}, ["x"], warnings=warnings)
    assert swept == [1] and np.isnan(blocks["x"].values).all()  # the compressed sweep only
    assert warnings[1] == (
        "3 entries of the sparse result are nan, in 3 columns: too many to take each alone, "
        "so some may be nan only because another of their color is infinite (0 * inf); the "
        "dense result takes each alone"
    )
    swept.clear()
    _, blocks, _, _ = sparse_jacobian(program, {"x": [-1.0, 1.0, 4.0]}, ["x"])
    assert swept == [1, 1]  # one column again, alone
    assert np.isnan(blocks["x"].values[0]) and blocks["x"].values[1:].tolist() == [0.5, 0.25]
