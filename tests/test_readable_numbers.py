"""Tables print numbers a person can read (issue 13): PyTorch's 4 digits after the decimal
point by default (``--precision N``), NumPy's summary of large arrays with ``...``, lines that
fit the terminal and never split a number; ``--plain`` keeps every digit, as do ``--json``
and ``--format plain``/``csv``."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from autograd_cli.cli import render


@pytest.fixture
def columns(monkeypatch):
    def set_columns(n: int) -> None:
        monkeypatch.setenv("COLUMNS", str(n))

    set_columns(100)
    return set_columns


def _rows(out: str) -> dict:
    """``{label: value text}`` of a result table's one-line rows."""
    rows = {}
    for line in out.splitlines():
        m = re.match(r"^ (\S+)\s+(\(\S*\))\s+(.*?)\s*$", line)
        if m:
            rows[m.group(1)] = m.group(3)
    return rows


def _vars_file(tmp_path, **values) -> str:
    path = tmp_path / "vars.json"
    path.write_text(json.dumps(values))
    return f"@{path}"


def test_default_precision_is_four_digits(cli, columns):
    r = cli("grad", "x*sin(x)", "--x", "2")
    assert r.code == 0
    assert _rows(r.out) == {"value": "1.8186", "∂/∂x": "0.077"}
    assert "1.8185948536513634" not in r.out


def test_arrays_trim_like_numpy_maxprec(cli, columns):
    r = cli("eval", "x/3", "--x", "[0, 1, 2, 3]")
    assert _rows(r.out)["value"] == "[0.    , 0.3333, 0.6667, 1.    ]"
    r = cli("grad", "sum(x**2)", "--x", "[1, 2]")
    assert _rows(r.out)["∂/∂x"] == "[2., 4.]"


def test_integers_stay_readable(cli, columns):
    r = cli("grad", "3*a**3-b**2", "--a", "2", "--b", "6")
    assert _rows(r.out) == {"value": "-12.0", "∂/∂a": "36.0", "∂/∂b": "-12.0"}


@pytest.mark.parametrize(
    "precision, value, grad",
    [("0", "2.0", "0.0"), ("2", "1.82", "0.08"), ("8", "1.81859485", "0.07700375")],
)
def test_precision_option(cli, columns, precision, value, grad):
    r = cli("grad", "x*sin(x)", "--x", "2", "--precision", precision)
    assert r.code == 0
    assert _rows(r.out) == {"value": value, "∂/∂x": grad}


def test_precision_before_the_command(cli, columns):
    r = cli("--precision", "2", "eval", "x/3", "--x", "[1, 2]")
    assert _rows(r.out)["value"] == "[0.33, 0.67]"


@pytest.mark.parametrize("option", [["--plain"], ["--precision", "full"]])
def test_plain_prints_every_digit(cli, columns, option):
    r = cli("grad", "x*sin(x)", "--x", "2", *option)
    assert r.code == 0
    assert _rows(r.out) == {"value": "1.8185948536513634", "∂/∂x": "0.0770037537313969"}


@pytest.mark.parametrize("bad", ["-1", "18", "x", "2.5", ""])
def test_bad_precision_is_a_usage_error(cli, columns, bad):
    r = cli("eval", "x", "--x", "1", "--precision", bad)
    assert r.code == 2
    assert "--precision" in r.err


def test_plain_and_a_precision_disagree(cli, columns):
    r = cli("eval", "x", "--x", "1", "--precision", "3", "--plain")
    assert r.code == 2
    assert "--plain" in r.err


def test_nan_and_inf_print_as_words(cli, columns):
    r = cli("eval", "x/0", "--x", "[1, -1, 0]")
    assert _rows(r.out)["value"] == "[ inf, -inf,  nan]"
    r = cli("eval", "log(x)", "--x", "0")
    assert _rows(r.out)["value"] == "-inf"
    r = cli("eval", "sqrt(x)", "--x", "-1")
    assert _rows(r.out)["value"] == "nan"


def _numbers_between_brackets(out: str) -> list[str]:
    body = out[out.index("[") : out.rindex("]") + 1]
    return [t for t in re.split(r"[\s,\[\]│]+", body) if t and t != "..."]


def test_large_array_is_summarised_within_the_width(cli, columns, tmp_path):
    columns(80)
    x = np.arange(10**5) / 3
    r = cli("eval", "x", "--vars", _vars_file(tmp_path, x=x.tolist()))
    assert r.code == 0
    lines = r.out.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert len(lines) < 10
    assert "..." in r.out
    shown = _numbers_between_brackets(r.out)
    edges = np.concatenate([x[:3], x[-3:]])
    assert len(shown) == 6
    for token, expected in zip(shown, edges):
        # every token a whole number: a piece of a split one would not be this close
        assert float(token) == pytest.approx(expected, rel=1e-4, abs=1e-4), token


@pytest.mark.parametrize(
    "width, plain",
    # 17-digit numbers need a 58-column terminal here (a 20-column value cell)
    [(40, False), (57, False), (80, False), (58, True), (80, True)],
)
def test_no_number_split_across_lines(cli, columns, tmp_path, width, plain):
    columns(width)
    x = (np.arange(60).reshape(6, 10) - 17) / 7
    r = cli(
        "grad", "sum(x**2)", "--vars", _vars_file(tmp_path, x=x.tolist()), *(["--plain"] * plain)
    )
    assert r.code == 0
    assert max(len(line) for line in r.out.splitlines()) <= width
    gradient = r.out[r.out.index("∂/∂x") :]
    shown = [float(t) for t in _numbers_between_brackets(gradient)]
    assert len(shown) == x.size
    if plain:
        assert shown == (2 * x).ravel().tolist()
    else:
        # the column (the value, 537.3, and the gradient, 0.2857 at least) spans more than
        # 1e3: scientific with 4 digits after the point, as NumPy writes such an array
        assert "e+02" in r.out and "2.8571e-01" in r.out
        assert np.allclose(shown, (2 * x).ravel(), rtol=5e-5, atol=0)


def test_hessian_and_check_tables_use_the_precision(cli, columns):
    r = cli("hessian", "x**2*y + sin(x*y)", "--x", "1", "--y", "2")
    assert "0.3628" in r.out and "0.36281029269727316" not in r.out
    r = cli("check", "x**2*y + sin(x*y)", "--x", "1", "--y", "2", "--precision", "6")
    assert "3.167706" in r.out and "3.1677063269057153" not in r.out


def test_analysis_tables_use_the_precision(cli, columns):
    r = cli("taylor", "exp(sin(x))", "--x", "0", "--order", "6")
    assert " -0.0667" in r.out
    # the polynomial is an expression in the tool's language (it parses back): every digit
    assert "0.06666666666666667*x**5" in r.out
    r = cli("taylor", "exp(sin(x))", "--x", "0", "--order", "6", "--plain")
    assert re.search(r" -0\.06666666666666667$", r.out, flags=re.M)
    r = cli("minimize", "sum((x-[1/3,2/3])**2)", "--x", "[0, 0]")
    assert "x = [0.3333, 0.6667]" in r.out


def test_graph_tree_uses_the_precision(cli, columns):
    r = cli("graph", "y = x/3", "--x", "[1, 2]")
    assert "value [0.3333, 0.6667]" in r.out
    r = cli("graph", "y = x/3", "--x", "2", "--plain")
    assert "value 0.6666666666666666" in r.out


@pytest.mark.parametrize(
    "extra",
    [["--json"], ["--format", "json"], ["--format", "plain"], ["--format", "csv"]],
)
def test_programs_get_every_digit(cli, columns, extra):
    base = cli("grad", "x*sin(x)", "--x", "2", *extra)
    with_precision = cli("grad", "x*sin(x)", "--x", "2", "--precision", "2", *extra)
    assert base.code == with_precision.code == 0
    assert base.out == with_precision.out
    assert "1.8185948536513634" in base.out


def test_json_unchanged_for_arrays(cli, columns):
    r = cli("eval", "x/3", "--x", "[1, 2]", "--json")
    assert json.loads(r.out)["value"] == [1 / 3, 2 / 3]
    assert (
        r.out
        == '{"expr": "x/3", "value": [0.3333333333333333, 0.6666666666666666], "shape": [2]}\n'
    )


def test_format_value_is_the_one_formatter():
    assert render.format_value(np.float64(-12.0)) == "-12.0"
    assert render.format_value(np.float64(1.2345678e-5)) == "1.2346e-05"
    assert render.format_value(np.float64(1.8185948536513634), precision=None) == (
        "1.8185948536513634"
    )
    assert render.format_value(np.array([2.0, 4.0])) == "[2., 4.]"
    assert render.format_value(np.array([np.nan, np.inf, -np.inf])) == "[ nan,  inf, -inf]"
    assert render.format_value(np.array([1 / 3]), 2) == "[0.33]"
    assert render.format_value(np.array([1 / 3])) == "[0.3333]"  # DEFAULT_PRECISION
    text = render.format_value(np.arange(2000.0), width=30)
    assert "..." in text and max(len(line) for line in text.splitlines()) <= 30
    assert render.one_line(np.array([0.1, 0.4, 1.0])) == "[0.1, 0.4, 1.]"
