"""The fast JSON text of batch output (cli/jsonout.py's number_texts and int_texts) against
the reference encoder, ``jsonout.dumps`` (``json.dumps``): byte for byte, orjson or not.

With orjson installed (the ``[fast]`` extra) a column's text comes from one orjson call and
only numbers outside ``repr``'s plain-decimal range are written one at a time; without it,
``repr`` of each.  Both must be exactly what ``dumps`` writes for each element alone.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from autograd_cli.cli import jsonout
from autograd_cli.cli.jsonout import dumps, int_texts, number_texts
from autograd_cli.cli.main import run

AWKWARD = [
    -0.0,
    0.0,
    1e-320,
    5e-324,
    -5e-324,
    1e16,
    -1e16,
    1e22,
    1.0000000000000002,
    123456789012345678.0,
    9999999999999998.0,
    1e15,
    1e-4,
    -1e-4,
    9.999999999999999e-05,
    0.00012,
    1e-5,
    2.5e-05,
    1e-6,
    1e-7,
    1e-10,
    1e21,
    1.7976931348623157e308,
    -1.7976931348623157e308,
    2.2250738585072014e-308,
    0.1,
    1 / 3,
    5.0,
    100.0,
    math.nan,
    -math.nan,
    math.inf,
    -math.inf,
]


def _modes():
    """The fast path (when orjson is installed) and the fallback, both to be checked."""
    modes = [False]
    if jsonout._fast_encoder():
        modes.append(True)
    return modes


def _reference(column) -> list:
    return [dumps(element) for element in column]


@pytest.mark.parametrize("fast", _modes(), ids=lambda f: "orjson" if f else "repr")
@pytest.mark.parametrize("kind", [np.float64, np.float32, np.float16], ids=lambda k: k.__name__)
def test_awkward_numbers_byte_for_byte(fast, kind):
    with np.errstate(over="ignore", under="ignore"):
        column = np.array(AWKWARD, dtype=np.float64).astype(kind)
    assert number_texts(column, fast=fast) == _reference(column)
    # each the shortest text that gives the element back in its own dtype (float32 0.1 is
    # 0.1, not its double's 0.10000000149011612)
    assert number_texts(column, fast=fast) == [dumps(float(str(x))) for x in column]
    if kind is np.float64:
        assert number_texts(column, fast=fast)[:2] == ["-0.0", "0.0"]
        assert number_texts(column, fast=fast)[-4:] == ['"nan"', '"nan"', '"inf"', '"-inf"']


@pytest.mark.parametrize("fast", _modes(), ids=lambda f: "orjson" if f else "repr")
def test_random_doubles_byte_for_byte(fast):
    rng = np.random.default_rng(12)
    # every bit pattern (all exponents, subnormals, nan payloads) ...
    bits = rng.integers(0, 2**64, size=100_000, dtype=np.uint64, endpoint=False)
    anything = bits.view(np.float64)
    # ... and the plain-decimal range that orjson writes, log-uniform, with round numbers
    plain = np.exp(rng.uniform(np.log(1e-4), np.log(1e16), 100_000)) * rng.choice([-1, 1], 100_000)
    scale = 10.0 ** rng.integers(0, 6, 100_000)
    rounded = np.round(plain * scale) / scale  # few digits: 0.5, 12.25, 1000.0 ...
    edges = np.nextafter(np.array([1e-4, 1e-4, 1e16, 1e16]), np.array([0, 1, 0, 1e17]))
    for column in (anything, plain, rounded, edges, -edges):
        assert number_texts(column, fast=fast) == [dumps(x) for x in column.tolist()]


@pytest.mark.parametrize("fast", _modes(), ids=lambda f: "orjson" if f else "repr")
def test_empty_nested_and_other_arrays(fast):
    assert number_texts(np.array([], dtype=np.float64), fast=fast) == []
    assert number_texts(np.zeros((0, 3)), fast=fast) == []
    nested = np.array([[1e-7, -0.0], [math.nan, 1e16]])
    assert number_texts(nested, fast=fast) == ["[1e-07, -0.0]", '["nan", 1e+16]']
    assert number_texts(nested, fast=fast) == _reference(nested)
    deeper = np.array([[[0.5], [math.inf]]])
    assert number_texts(deeper, fast=fast) == [dumps(deeper[0])] == ['[[0.5], ["inf"]]']
    ints = np.array([0, -3, 2**62])
    assert number_texts(ints, fast=fast) == ["0", "-3", "4611686018427387904"]
    longdouble = np.array([0.25, np.inf], dtype=np.longdouble)
    assert number_texts(longdouble, fast=fast) == ["0.25", '"inf"']
    assert number_texts([1.5, -0.0], fast=fast) == ["1.5", "-0.0"]


def test_int_texts():
    values = [1, 2, 10, 99, 123456789012345678, -5, 2**63 - 1]
    assert int_texts(values) == list(map(str, values))
    assert int_texts([2**70, 1]) == [str(2**70), "1"]  # over 64 bits: str of each
    assert int_texts([]) == []
    assert int_texts(list(range(2, 70000))) == [json.dumps(i) for i in range(2, 70000)]


def test_an_orjson_that_writes_otherwise_is_not_used(monkeypatch):
    """A release laying out plain decimals differently fails the probes: repr is used."""

    class Odd:
        OPT_SERIALIZE_NUMPY = 0

        @staticmethod
        def dumps(obj, option=0):
            return b"[" + b",".join(b"%g" % x for x in obj) + b"]"

    import sys

    monkeypatch.setitem(sys.modules, "orjson", Odd)
    monkeypatch.setattr(jsonout, "_orjson", None)
    assert jsonout._fast_encoder() is False
    assert number_texts(np.array([1e15, 0.5])) == ["1000000000000000.0", "0.5"]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("chunk", ["65536", "3"])
def test_batch_output_is_the_same_with_and_without_orjson(
    tmp_path, capsys, monkeypatch, chunk, dtype
):
    """The whole command: a CSV of awkward values, its JSONL with the fast text and with
    ``repr``, identical bytes; and each line the one-at-a-time reference (float32 results
    in float32's shortest digits on both paths)."""
    finite = [x for x in AWKWARD if math.isfinite(x)]
    rows = [(x, y) for x, y in zip(finite, reversed(finite))] + [
        (1.0, math.nan),
        (math.inf, 2.0),
        (-0.0, -0.0),
    ]
    path = tmp_path / "in.csv"
    path.write_text("x,y\n" + "".join(f"{x!r},{y!r}\n" for x, y in rows), encoding="utf-8")
    outputs = []
    for fast in _modes():
        monkeypatch.setattr(jsonout, "_orjson", None if fast else False)
        capsys.readouterr()
        code = run(
            ["batch", str(path), "--expr", "x*y + y", "--chunk-size", chunk, "--dtype", dtype]
        )
        outputs.append((code, capsys.readouterr().out))
    assert len({o for o in outputs}) == 1, "orjson and repr disagree"
    code, out = outputs[0]
    lines = out.splitlines()
    assert len(lines) == len(rows)
    for i, ((x, y), line) in enumerate(zip(rows, lines)):
        capsys.readouterr()
        run(["grad", "x*y + y", "--x", repr(x), "--y", repr(y), "--json", "--dtype", dtype])
        single = json.loads(capsys.readouterr().out)
        assert line == dumps({"line": i + 2, **single}), (x, y)


@pytest.mark.parametrize("k", range(1, 9))
def test_batch_fill_pastes_columns_between_parts(k):
    """``batch.fill`` (the f-string line writer) gives, for every number of columns, the
    line that pasting the parts and cells one after another gives, whatever the parts
    hold (%, braces, quotes from the expression)."""
    from autograd_cli.cli.batch import fill

    parts = [f'{{"k{i}": "%s %% {{}}", ' for i in range(k)] + ["}"]
    columns = [[f"{i}.{r}e-320" if r % 2 else f"-{r}" for r in range(5)] for i in range(k)]
    want = [
        "".join(p + c for p, c in zip(parts, [col[r] for col in columns])) + parts[-1]
        for r in range(5)
    ]
    assert fill(parts, columns) == want
