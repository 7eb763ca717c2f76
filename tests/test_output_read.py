"""Output people read (issue 23): tables without trailing spaces and with titles laid out at
the console's width, one notation per column and never ``-0.0``, float32 results in their
own shortest digits, labelled ``diff --latex`` lines, plots whose curves each have a glyph,
and ``d out / d x`` for scalars in ``check``'s report."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from autograd_cli.cli import render
from autograd_cli.core.format import Notation


@pytest.fixture
def columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)

    def set_columns(n: int) -> None:
        monkeypatch.setenv("COLUMNS", str(n))

    return set_columns


def _rows(out: str) -> dict:
    """``{label: value text}`` of a result table's one-line rows."""
    rows = {}
    for line in out.splitlines():
        m = re.match(r"^ (\S+)\s+(\(\S*\))\s+(.*)$", line)
        if m:
            rows[m.group(1)] = m.group(3)
    return rows


TABLES = [
    ["grad", "3*a**3-b**2", "--a", "2", "--b", "6"],  # written without Rich
    ["grad", "sum(x*y)", "--x", "[1,2]", "--y", "2"],  # an array: Rich
    ["grad", "abs(x)", "--x", "0"],  # a warning: Rich
    ["hessian", "x**2*y + sin(x*y)", "--x", "1", "--y", "2"],
    ["hessian", "sum(x**2)*y", "--x", "[1, 2]", "--y", "3"],
    ["jacobian", "[x*y, x+y]", "--x", "1", "--y", "2"],
    ["check", "x**2*y + sin(x*y)", "--x", "1", "--y", "2"],
    ["diff", "x**2*y", "--hessian", "--x", "1", "--y", "3"],
    ["taylor", "exp(sin(x))", "--x", "0", "--order", "3"],
    ["minimize", "sum((x-[1/3,2/3])**2)", "--x", "[0, 0]"],
]


@pytest.mark.parametrize("rich", [False, True], ids=["plain", "rich"])
@pytest.mark.parametrize("argv", TABLES, ids=[" ".join(a[:2]) for a in TABLES])
def test_no_line_ends_in_a_space(cli, columns, monkeypatch, argv, rich):
    if rich:
        monkeypatch.setattr(render, "plain_table", lambda *a: False)
    r = cli(*argv)
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert len(lines) >= 3
    for line in lines:
        assert line == line.rstrip(), repr(line)


def test_wrapped_warnings_and_notes_end_in_no_space(cli, columns):
    """Rich breaks a long warning between words and leaves the space at the line's end."""
    columns(60)
    r = cli("minimize", "x**3", "--x", "1")
    assert r.code == 1
    warning = r.out + r.err
    assert "warning: not a minimum" in warning and len(warning.splitlines()) > 8
    for line in warning.splitlines():
        assert line == line.rstrip(), repr(line)


def test_no_trailing_spaces_with_styles(cli, columns, monkeypatch):
    """At a terminal (styles on), no line ends in blanks either, escape codes aside."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    r = cli("grad", "sum(x*y)", "--x", "[1,2]", "--y", "2")
    assert r.code == 0, r.err
    assert "\x1b[" in r.out
    for line in r.out.splitlines():
        assert not re.search(r" (\x1b\[[0-9;]*m)*$", line), repr(line)


@pytest.mark.parametrize("rich", [False, True], ids=["plain", "rich"])
def test_title_is_laid_out_at_the_console_width(cli, columns, monkeypatch, rich):
    if rich:
        monkeypatch.setattr(render, "plain_table", lambda *a: False)
    expr = " + ".join(f"a{i}*b" for i in range(12))  # 83 characters, a 25-wide table
    argv = [f"--a{i}={i}" for i in range(12)]
    r = cli("eval", expr, "--b", "1", *argv)
    assert r.code == 0, r.err
    assert len(expr) == 83
    lines = r.out.splitlines()
    assert lines[0] == expr  # one line, not wrapped at the table's width
    assert max(len(line) for line in lines[1:]) < 40
    # wider than the console: wrapped at the console's width, between words
    columns(50)
    r = cli("eval", expr, "--b", "1", *argv)
    lines = r.out.splitlines()
    assert 30 < len(lines[0]) <= 50 and 30 < len(lines[1]) <= 50
    assert " ".join(lines[:2]) == expr


def test_one_notation_per_column(cli, columns):
    r = cli(
        "grad",
        "x**2 + y*1e20 - 1034389718373.6165*z",
        *("--x", "0.00135", "--y", "1.986", "--z", "1"),
    )
    assert r.code == 0, r.err
    assert _rows(r.out) == {
        "value": "1.9860e+20",
        "∂/∂x": "2.7000e-03",
        "∂/∂y": "1.0000e+20",
        "∂/∂z": "-1.0344e+12",
    }
    # the same numbers a row each are NumPy's own choice for them as one array
    assert np.array2string(
        np.array([1.986e20, 0.0027, 1e20, -1034389718373.6165]), precision=4
    ).split() == ["[", "1.9860e+20", "2.7000e-03", "1.0000e+20", "-1.0344e+12]"]
    # a column that needs no scientific notation keeps the scalars' look
    r = cli("grad", "3*a**3-b**2", "--a", "2", "--b", "6")
    assert _rows(r.out) == {"value": "-12.0", "∂/∂a": "36.0", "∂/∂b": "-12.0"}


def test_a_column_with_arrays_is_one_notation(cli, columns):
    r = cli("grad", "sum(x**2)*y", "--x", "[1, 2]", "--y", "1e20")
    assert _rows(r.out) == {"value": "5e+20", "∂/∂x": "[2.e+20, 4.e+20]", "∂/∂y": "5e+00"}


def test_diff_value_column(cli, columns):
    r = cli("diff", "x*1e9 + y*1e-9", "--x", "1", "--y", "1")
    assert r.code == 0, r.err
    rows = {line.split()[0]: line.split()[-1] for line in r.out.splitlines()[3:5]}
    assert rows == {"d/dx": "1e+09", "d/dy": "1e-09"}


def test_check_and_hessian_columns(cli, columns):
    r = cli("check", "x*1e9 + y*1e-9", "--x", "1", "--y", "1")
    assert r.code == 0, r.err
    analytic = [_rows(r.out)[k].split()[0] for k in ("∂/∂x", "∂/∂y")]
    assert analytic == ["1e+09", "1e-09"]
    r = cli("hessian", "x**2*y*1e6 + y**2/2", "--x", "1", "--y", "1")
    assert r.code == 0, r.err
    # the x column of the matrix: 2e6 and 2e6, positional; the y column 2e6 and 1, a ratio
    # past 1e3: scientific
    matrix = r.out.splitlines()[r.out.splitlines().index("Hessian") + 3 :]
    rows = {line.split()[0]: line.split()[1:] for line in matrix}
    assert rows == {"x": ["2000000.0", "2e+06"], "y": ["2000000.0", "1e+00"]}


@pytest.mark.parametrize(
    "argv, label, text",
    [
        (["grad", "-x*y", "--x", "0", "--y", "2"], "∂/∂y", "0.0"),  # an exact -0.0
        (["eval", "-x", "--x", "[0, 1]"], "value", "[ 0., -1.]"),
        (["eval", "x", "--x", "-0.3", "--precision", "0"], "value", "0.0"),  # rounds to 0
        (["eval", "x", "--x", "[-0.3, 2]", "--precision", "0"], "value", "[0., 2.]"),
        (["eval", "-x", "--x", "0", "--plain"], "value", "0.0"),
    ],
)
def test_never_minus_zero(cli, columns, argv, label, text):
    r = cli(*argv)
    assert r.code == 0, r.err
    assert _rows(r.out)[label] == text
    assert "-0." not in r.out


def test_json_keeps_minus_zero(cli):
    r = cli("grad", "-x*y", "--x", "0", "--y", "2", "--json")
    assert '"y": -0.0' in r.out


def test_notation_is_numpys_within_one_array():
    """An array alone prints as NumPy prints it (``floatmode="maxprec"``), except for the
    two deliberate differences: no ``-0.``, and positional up to 1e16 (NumPy's arrays switch
    at 1e8, its scalars at 1e16; a column mixes both)."""
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(400):
        n = int(rng.integers(1, 8))
        kind = rng.integers(0, 4)
        if kind == 0:
            a = rng.normal(size=n) * 10.0 ** rng.integers(-3, 7)
        elif kind == 1:
            a = np.round(rng.normal(size=n) * 100, rng.integers(0, 3))
        elif kind == 2:
            a = rng.normal(size=n) * 10.0 ** rng.integers(-8, 8, size=n)
        else:
            a = rng.normal(size=n)
            a[rng.integers(0, n)] = rng.choice([np.nan, np.inf, -np.inf, 0.0])
        for precision in (4, None):
            ours = render.format_value(a, precision=precision, width=75)
            numpy = np.array2string(
                a,
                separator=", ",
                precision=8 if precision is None else precision,
                floatmode="unique" if precision is None else "maxprec",
                max_line_width=75,
            )
            size = np.abs(a[np.isfinite(a) & (a != 0)])
            if (size.size and size.max() >= 1e8) or (np.signbit(a) & (a == 0)).any():
                continue
            assert ours == numpy, a
            checked += 1
    assert checked > 300


def test_notation_of_float32_uses_its_own_digits():
    a = np.array([1.8185948, 0.07700378], dtype=np.float32)
    assert render.format_value(a, precision=None) == "[1.8185948 , 0.07700378]"
    assert Notation([np.float32(1e7)], 4).scalar(np.float32(1e7)) == "1e+07"
    assert Notation([np.float32(1e6)], 4).scalar(np.float32(1e6)) == "1000000.0"


def test_float32_results_in_their_own_shortest_digits(cli, columns):
    r = cli("grad", "x*sin(x)", "--x", "2", "--dtype", "float32", "--json")
    assert r.code == 0, r.err
    assert r.out == (
        '{"expr": "x*sin(x)", "value": 1.8185948, "shape": [], "grad": {"x": 0.07700378}}\n'
    )
    x = np.float32(2)
    assert np.float32(r.json["value"]) == x * np.sin(x)
    r = cli("eval", "x/3", "--x", "[1, 2]", "--dtype", "float32", "--json")
    assert r.json["value"] == [0.33333334, 0.6666667]
    r = cli("grad", "x*sin(x)", "--x", "2", "--dtype", "float32", "--format", "plain")
    assert r.out == "1.8185948\n0.07700378\n"
    r = cli("grad", "x*sin(x)", "--x", "2", "--dtype", "float32", "--format", "csv")
    assert "value,,1.8185948\n" in r.out
    # float64 keeps every digit of a double
    r = cli("grad", "x*sin(x)", "--x", "2", "--json")
    assert r.json["value"] == 1.8185948536513634


def test_float32_batch_lines(cli, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text('{"x": 2}\n{"x": 3}\n')
    r = cli("batch", str(path), "--expr", "x*sin(x)", "--dtype", "float32")
    assert r.code == 0, r.err
    first = json.loads(r.out.splitlines()[0])
    assert first["value"] == 1.8185948 and '"value": 1.8185948,' in r.out


def test_diff_latex_lines_say_what_they_are(cli):
    r = cli("diff", "sin(x)*y", "--latex")
    assert r.code == 0, r.err
    assert r.out.splitlines() == [
        r"f = \sin\left(x\right) y",
        r"\frac{\partial f}{\partial x} = y \cos\left(x\right)",
        r"\frac{\partial f}{\partial y} = \sin\left(x\right)",
    ]
    r = cli("diff", "x**3", "--order", "2", "--latex", "--x", "2")
    assert r.out.splitlines() == [r"f = x^{3} = 8.0", r"\frac{d^{2} f}{d x^{2}} = 6 x = 12.0"]
    r = cli("diff", "x**2*y", "--hessian", "--latex", "--x", "1", "--y", "2")
    assert r.out.splitlines() == [
        r"f = x^{2} y = 2.0",
        r"\frac{\partial^{2} f}{\partial x^{2}} = 2 y = 4.0",
        r"\frac{\partial^{2} f}{\partial y^{2}} = 0 = 0.0",
        r"\mathbf{H}_f = \begin{pmatrix} 2 y & 2 x \\ 2 x & 0 \end{pmatrix}"
        r" = \begin{pmatrix} 4.0 & 2.0 \\ 2.0 & 0.0 \end{pmatrix}",
    ]
    r = cli("diff", "x*1e-6", "--latex", "--x", "[1, 2]")
    assert r.out.splitlines()[0] == (
        r"f = x \cdot 10^{-6} = \begin{pmatrix} 1 \times 10^{-6} & 2 \times 10^{-6} \end{pmatrix}"
    )
    r = cli("diff", "f*x", "--latex", "--wrt", "x")  # f is taken: the function is g
    assert r.out.splitlines() == ["g = f x", r"\frac{\partial g}{\partial x} = f"]
    r = cli("diff", "log(x)", "--latex", "--x", "0")
    assert r.out.splitlines() == [
        r"f = \log\left(x\right) = -\infty",
        r"\frac{d f}{d x} = \frac{1}{x} = \infty",
    ]


def test_plot_draws_the_tangent_and_the_taylor_polynomial(cli, columns):
    argv = ["plot", "sin(x)", "--x", "-3:3", "--taylor", "5", "--tangent-at", "0"]
    r = cli(*argv, "--points", "7")
    assert r.code == 0, r.err
    legend = r.out.splitlines()[-1]
    assert "tangent at 0" in legend and "taylor 5 at 0" in legend
    doc = cli(*argv, "--points", "7", "--json").json
    tangent, taylor = doc["overlays"]
    assert tangent["order"] == 1 and tangent["values"] == doc["x"]  # sin'(0) = 1: y = x
    assert taylor["order"] == 5 and taylor["at"] == 0.0
    # --taylor 1 is the tangent: drawn once
    doc = cli("plot", "sin(x)", "--x", "-1:1", "--taylor", "1", "--tangent-at", "0", "--json").json
    assert len(doc["overlays"]) == 1


def test_piped_plot_gives_each_curve_its_own_glyph(cli, columns):
    r = cli("plot", "sin(x)", "--x", "-3:3", "--order", "2", "--tangent-at", "1")
    assert r.code == 0, r.err
    legend = r.out.splitlines()[-1]
    glyphs = re.findall(r"(\S)\1 \S", legend)  # "++ f   xx f'   oo f''   ** tangent at 1"
    assert len(glyphs) == 4 and len(set(glyphs)) == 4, legend
    body = "\n".join(r.out.splitlines()[1:-2])
    for glyph in glyphs:
        assert glyph in body  # each curve is drawn with its glyph


def test_check_names_scalar_entries_without_brackets(cli, columns):
    r = cli("check", "floor(x) + x", "--x", "1")
    assert r.code == 1 or "FAIL" in r.out
    assert "worst element: d out / d x (" in r.out
    assert "[]" not in r.out
    r = cli("check", "floor(x) + x", "--x", "[1, 2]")
    assert re.search(r"worst element: d out\[\d\] / d x\[\d\] \(", r.out)


def test_taylor_coefficients_are_one_column(cli, columns):
    """1.0 beside 1388.8889: the magnitudes span more than 1e3, so the column goes
    scientific as a whole, as NumPy prints such an array."""
    r = cli("taylor", "exp(10*x)", "--x", "0", "--order", "6")
    assert r.code == 0, r.err
    rows = dict(line.split(None, 1) for line in r.out.splitlines()[1:] if line.startswith(" c"))
    assert rows["c0"] == "1.0000e+00" and rows["c6"] == "1.3889e+03"
    r = cli("taylor", "exp(sin(x))", "--x", "0", "--order", "3")
    assert "c2          0.5" in r.out  # a narrow span stays positional


def test_mixed_partials_are_one_column(cli, columns):
    r = cli("diff", "x*y*1000 + x*z*1e-3", "--hessian", "--x", "1", "--y", "1", "--z", "1")
    assert r.code == 0, r.err
    tail = r.out[r.out.index("mixed partials") :]
    assert (
        "1e+03" in tail and "1e-03" in tail and "0e+00" in tail
    )  # NumPy: [1.e+03, 1.e-03, 0.e+00]
