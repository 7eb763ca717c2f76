"""plot: the sampled series are the engine's exact derivatives, drawn within the terminal."""

from __future__ import annotations

import math

import numpy as np
import pytest


def test_series_are_exact_derivatives_at_every_point(cli):
    r = cli(
        "plot", "sin(x)*exp(-x**2/4)", "--x", "-4:4", "--order", "2", "--points", "41", "--json"
    )
    assert r.code == 0, r.err
    doc = r.json
    xs = np.asarray(doc["x"])
    assert xs.tolist() == np.linspace(-4, 4, 41).tolist()
    assert [s["order"] for s in doc["series"]] == [0, 1, 2]
    f = np.sin(xs) * np.exp(-(xs**2) / 4)
    df = np.cos(xs) * np.exp(-(xs**2) / 4) - xs / 2 * f
    assert np.allclose(doc["series"][0]["values"], f, rtol=1e-14, atol=1e-15)
    assert np.allclose(doc["series"][1]["values"], df, rtol=1e-13, atol=1e-15)
    # f'' against grad --order 2 of the single command, point by point
    for i in (0, 13, 40):
        one = cli(
            "grad", "sin(x)*exp(-x**2/4)", "--x", repr(float(xs[i])), "--order", "2", "--json"
        )
        assert one.json["grad"]["x"] == pytest.approx(doc["series"][2]["values"][i], rel=1e-13)


def test_gaps_non_elementwise_programs_and_other_variables(cli):
    r = cli("plot", "1/x", "--x", "-1:1", "--points", "5", "--json")
    assert r.json["series"][0]["values"] == [-1.0, -2.0, "inf", 2.0, 1.0]
    # x*sum([x, 1]) is x*(x+1) at each point: not elementwise, sampled point by point
    r = cli("plot", "x*sum([x, 1])", "--x", "-1:1", "--points", "3", "--json")
    assert r.json["series"][1]["values"] == [-1.0, 1.0, 3.0]
    r = cli("plot", "a*x**2", "--x", "0:2", "--a", "3", "--points", "3", "--json")
    assert r.json["series"][1]["values"] == [0.0, 6.0, 12.0]


def test_tangent_and_taylor_overlays(cli):
    r = cli("plot", "exp(x)", "--x", "-1:1", "--tangent-at", "0", "--points", "3", "--json")
    (tangent,) = r.json["overlays"]
    assert tangent["order"] == 1 and tangent["values"] == [0.0, 1.0, 2.0]
    r = cli("plot", "exp(x)", "--x", "-1:1", "--taylor", "4", "--points", "3", "--json")
    (poly,) = r.json["overlays"]
    want = sum(1 / math.factorial(k) for k in range(5))
    assert poly["at"] == 0.0 and poly["values"][2] == pytest.approx(want)


def test_terminal_plot_fits_and_errors(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    r = cli("plot", "sin(x)", "--x", "-3:3", "--order", "1")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert len(lines) > 10 and max(len(line) for line in lines) <= 80
    assert "f'" in lines[-1]  # the legend
    r = cli("plot", "x", "--x", "1", "--json")
    assert r.code == 2 and "exactly one variable with a range" in r.json["error"]["message"]
    r = cli("plot", "x", "--x", "2:1", "--json")
    assert r.code == 2 and "LOW < HIGH" in r.json["error"]["message"]
    r = cli("plot", "x", "--x", "0:1", "--points", "1", "--json")
    assert r.code == 1 and r.json["error"]["kind"] == "limit"
    r = cli("plot", "log(x)", "--x", "-2:-1")  # f is nan there (a domain problem, exit 0)
    assert r.code == 0 and "not drawn, nan or inf over the whole range: f" in r.out
    r = cli("plot", "log(x)", "--x", "-2:-1", "--order", "0")
    assert r.code == 0 and "nothing to draw" in r.out
    r = cli("plot", "0*x + 3", "--x", "0:1")  # a constant: f' is 0
    assert r.code == 0, r.err
    r = cli("plot", "3", "--x", "0:1", "--json")
    assert r.code == 2 and "'x' is not a variable of the expression" in r.json["error"]["message"]


def test_images_need_matplotlib(cli, tmp_path):
    path = tmp_path / "f.png"
    r = cli("plot", "x**2", "--x", "-1:1", "--png", str(path), "--json")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert r.code == 1 and r.json["error"]["kind"] == "unsupported"
        assert "pip install 'autograd-cli[plot]'" in r.json["error"]["message"]
        assert not path.exists()
    else:
        assert r.code == 0 and path.read_bytes()[:4] == b"\x89PNG"
