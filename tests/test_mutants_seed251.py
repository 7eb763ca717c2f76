"""Tests written from the survivors of ``bench/mutate.py`` seed 251 (bench/results/
mutate-seed251.json), an untuned seed measured after the whole jsonout and uncertainty
targets at 10 mutants a target with every test before it in.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from the docs
or arithmetic by hand, never from the code under test.
"""

from __future__ import annotations

import math

import pytest


@pytest.mark.parametrize("x, y", [(3.0, 2.0), (0.5, 2.0), (3.0, 3.0)])
def test_the_hessian_of_a_power_whose_variable_exponent_is_two(cli, x, y):
    """kills core/ops/elementwise.py:334: if _host_two(b) and not is_grad_enabled(): -> if
    _host_two(b) and is_grad_enabled():.

    The shortcut d(a**2)/da = 2*a holds for a constant exponent; taken while the graph is
    recorded (a Hessian's first derivative) with the exponent a variable y that happens to
    be 2, its y-derivative is lost: d/dy of 2*x is x, not d/dy (y*x**(y-1)) = x**(y-1) +
    y*x**(y-1)*ln x.  By hand at (3, 2): 3 + 6 ln 3 = 9.5917; both mixed entries agree."""
    r = cli("hessian", "x**y", "--x", x, "--y", y, "--json")
    assert r.code == 0, r.out
    h = r.json["hessian"]
    mixed = x ** (y - 1) + y * x ** (y - 1) * math.log(x)
    assert h["x"]["y"] == pytest.approx(mixed, rel=1e-14)
    assert h["y"]["x"] == pytest.approx(mixed, rel=1e-14)
    assert h["x"]["x"] == pytest.approx(y * (y - 1) * x ** (y - 2), rel=1e-14)
    assert h["y"]["y"] == pytest.approx(x**y * math.log(x) ** 2, rel=1e-14)


@pytest.mark.parametrize("name", ["log", "log2", "log10"])
def test_taylor_mode_says_why_a_log_at_zero_has_no_series(cli, name):
    """kills core/taylor_mode.py:472: raise _Poisoned(f"{r.op.name} of zero") -> pass.

    A log at 0 has no Taylor series; the refusal of the repeated differentiation that
    takes over (its graph on course past a small memory limit) gives Taylor mode's reason
    as "log of zero", not Python's "float division by zero" from the partial 1/0."""
    r = cli("taylor", f"{name}(x)", "--x", "0", "--order", "20", "--max-memory", "100K", "--json")
    assert r.code == 1, r.out
    message = r.json["error"]["message"]
    assert f"cannot be used here: {name} of zero)" in message, message


@pytest.mark.parametrize("start", ["15.5", "1234.5678", "-1707.24"])
@pytest.mark.parametrize("method", ["newton", "bfgs"])
def test_a_flat_direction_along_an_axis_is_not_taken_for_a_fall(cli, start, method):
    """kills core/optimize.py:440: noise = _rounding_noise(flat, theta, f, step / 1024 * v,
    box) -> noise = _rounding_noise(flat, theta, f, step / 1024 / v, box).

    (x+1)**2 - x**2 - 2*x is the constant 1 whose terms wander by ulps; beside (y-1)**2 the
    Hessian's flat direction is the x axis, v = (1, 0).  The noise is sampled along v: the
    mutant's hops along (1/1, 1/0) leave the plane (inf), every sample is dropped, the
    noise is 0, and the probe takes rounding for a fall ("an inflection"): not converged.
    tests/test_misleading.py has the one-variable case, where v = +-1 makes the two equal."""
    r = cli(
        "minimize", "(x+1)**2 - x**2 - 2*x + (y-1)**2", "--x", start, "--y", "0.5",
        "--method", method, "--json",
    )  # fmt: skip
    assert r.code == 0 and r.json["converged"] is True, r.out
    assert r.json["x"]["y"] == pytest.approx(1.0)


def test_a_compressed_hessian_too_large_says_how_many_numbers(cli, tmp_path):
    """kills core/sparsity.py:759: limits.check(k * n, dtype.itemsize, "the compressed
    Hessian") -> limits.check(dtype.itemsize, k * n, "the compressed Hessian").

    The limit error counts the numbers (k colors times n entries, past 10**9 here: 1000
    long-range pairs make the band take 10**5 colors of 10**5 entries) and the bytes, 8 a
    number; swapped, it said "(8 numbers)"."""
    import re

    import numpy as np

    path = tmp_path / "x.npy"
    np.save(path, np.zeros(10**5))
    text = "sum(x[:1000] * x[-1000:]) + sum(x**2)"
    r = cli("hessian", text, "--x", f"@{path}", "--sparse", "--json")
    assert r.code == 1 and r.json["error"]["kind"] == "limit", r.out[:300]
    numbers = int(
        re.search(r"\(([0-9,]+) numbers\)", r.json["error"]["message"])[1].replace(",", "")
    )
    assert numbers > 10**9
    assert r.json["error"]["needed_bytes"] == 8 * numbers
