"""bench/run.py's codegen rows 11-13 (issue 26, bench/codegen_rows.py), end to end.

Never asserts a time: one ``--quick`` run of the three rows prints each row's ratio lines and
checks its results; the C row's compile-and-call machinery is run on a hand-written C function
of the expected convention (so it is tested before, and apart from, the C generator); the
nested sine's derivative code is checked against SymPy and mpmath at a small order.
"""

from __future__ import annotations

import importlib.util
import math
import pathlib
import re
import shutil
import subprocess
import sys

import pytest
from test_bench_run import _module as _bench  # bench/run.py as a module
from test_bench_run import _table as _cells  # the Markdown table's rows of cells

ROOT = pathlib.Path(__file__).resolve().parent.parent
RUN = ROOT / "bench" / "run.py"


def _modules():
    """bench/run.py and bench/codegen_rows.py as modules."""
    spec = importlib.util.spec_from_file_location("codegen_rows", RUN.parent / "codegen_rows.py")
    rows = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rows)
    return _bench(), rows


def _table(text: str) -> dict:
    """Row number -> its lines, each a dict of the table's columns."""
    cells = _cells(text)
    rows: dict = {}
    number = None
    for line in cells[2:]:
        number = line[0] or number
        rows.setdefault(number, []).append(dict(zip(cells[0], line)))
    return rows


RATIO = re.compile(r"\*\*\d+\.\d\dx\*\*")


def test_quick_run_prints_the_ratio_lines(tmp_path):
    out = tmp_path / "codegen.md"
    proc = subprocess.run(
        [sys.executable, str(RUN), "--only", "11-13", "--quick", "--threads", "1", "--no-peers"]
        + ["--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = out.read_text(encoding="utf-8")
    assert text in proc.stdout
    rows = _table(text)
    assert sorted(rows) == ["11", "12", "13"]
    numpy_row = rows["11"]
    ours = [r for r in numpy_row if r["implementation"].startswith("**generated")]
    refs = [r for r in numpy_row if "(*ref*)" in r["implementation"]]
    assert len(ours) == 3 and len(refs) == 3  # one pair per expression
    assert all(RATIO.fullmatch(r["ratio"]) for r in ours), ours
    assert all(r["ratio"] == "1.00x" for r in refs)
    assert re.fullmatch(r"met|missed by \d+\.\d\dx", numpy_row[0]["result"])
    assert numpy_row[0]["agrees"] == "yes"
    c_row = rows["12"]
    if shutil.which("cc") is None or not (ROOT / "core" / "codegen" / "c.py").exists():
        assert c_row[0]["median"].startswith("skipped: ")
        assert c_row[0]["result"].startswith("not rated (")
    else:
        assert RATIO.fullmatch(c_row[0]["ratio"]), c_row
        assert c_row[0]["agrees"] == "yes"
    size_row = rows["13"]
    assert "3rd derivative" in size_row[0]["benchmark"]  # --quick: a smaller order
    assert size_row[0]["median"].endswith(" chars")
    assert all(RATIO.fullmatch(r["ratio"]) for r in size_row if r["implementation"][:2] == "**")
    assert size_row[0]["agrees"] == "yes"
    assert "vs mpmath.diff at 40 digits" in text and "vs grad(order=3)" in text


def test_paired_rows_are_rated_by_their_worst_pair():
    bench, rows = _modules()
    row = rows.paired(bench.Row(11, "t", "s"))
    for ours_s, ref_s in ((1.0, 1.0), (3.0, 2.0)):
        ref = bench.Line(who="hand", samples=[ref_s], reference=True)
        ours = bench.Line(who="ours", samples=[ours_s], ours=True)
        ours.against = ref
        row.lines += [ours, ref]
    assert [row.ratio(x) for x in row.lines] == [1.0, 1.0, 1.5, 1.0]
    assert row.status() == f"missed by {1.5 / 1.05:.2f}x"
    row.lines[2].samples = [2.0]
    assert row.status() == "met"


# The expected C convention (bench/codegen_rows.py c_convention), written by hand
HAND_C = """
#include <math.h>
void f(double x, double y, double *value, double *grad_x, double *grad_y)
{
    double s = sin(x), e = exp(-(y * y)), x2 = x * x;
    *value = s * e + log1p(x2);
    *grad_x = cos(x) * e + 2.0 * x / (1.0 + x2);
    *grad_y = -2.0 * y * s * e;
}
"""


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc)")
def test_c_build_and_call_on_a_hand_written_function(tmp_path):
    import autograd_cli as ag

    _, rows = _modules()
    outputs = ["value", "grad_x", "grad_y"]
    call, loop, warnings = rows.build_c(HAND_C, "f", ["x", "y"], outputs, str(tmp_path))
    assert warnings == ""
    x, y = rows.C_POINT["x"], rows.C_POINT["y"]
    r = ag.grad(rows.C_EXPR, rows.C_POINT)
    want = [float(r.value), float(r.grad["x"]), float(r.grad["y"])]
    assert call(x, y) == pytest.approx(want, rel=1e-12)
    # the loop moves x by 1e-9 per call: the sum of 1000 calls is ~1000 times one call's
    assert loop(1000, x, y) == pytest.approx(1000 * sum(want), rel=1e-4)
    assert loop(0, x, y) == 0.0


def test_nested_sine_derivative_code_agrees_with_sympy_and_mpmath():
    sympy = pytest.importorskip("sympy")
    _, rows = _modules()
    depth, order, x0 = 3, 3, rows.SINE_POINT
    code, statements = rows.derivative_code(rows.nested_sine(depth), order)
    value = float(rows.compiled_python(code, "f")(x0)[0])
    x = sympy.Symbol("x")
    e = sympy.sin(sympy.sin(sympy.sin(x)))
    want = float(sympy.diff(e, x, order).subs(x, x0).evalf(30))
    assert math.isclose(value, want, rel_tol=1e-12)
    assert math.isclose(value, rows.mpmath_derivative(depth, order, x0), rel_tol=1e-12)
    assert statements < 200 and "def f(x):" in rows.function_text(code)


def test_sympy_timeout_is_reported_not_raised():
    _, rows = _modules()
    result, why = rows.sympy_derivative(8, 6, timeout=0.5)
    assert result is None and why == "did not finish in 0.5 s"
