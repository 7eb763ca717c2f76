"""The PyArrow fast path of a CSV batch (cli/batch/columnar.py, issue 25) against the path
without it: the same bytes, exit codes and stderr on the same inputs, hostile ones included.

Each input runs three ways: PyArrow's reader and Arrow-made lines (``MIN_BYTES`` lowered to
0 so that small files take it), PyArrow's reader with orjson away (lines from the text
path), and PyArrow away (``columnar._modules = False``: the path of a machine without the
``[dask]`` extra).  The inputs mix chunks the fast path takes whole with chunks it hands to
the text path (ragged rows, text cells, empty cells, blank lines, CRLF, quotes, nan/inf
spellings, overlong lines) at several chunk sizes, so the hand-over mid-file is run too.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys

import numpy as np
import pytest

from autograd_cli.cli import jsonout
from autograd_cli.cli.batch import columnar
from autograd_cli.cli.batch import io as batch_io
from autograd_cli.cli.main import run

pytest.importorskip("pyarrow")

MODES = ("arrow", "arrow-no-orjson", "text")


def _set_mode(monkeypatch, mode: str) -> None:
    if mode == "text":
        monkeypatch.setattr(columnar, "_modules", False)
        return
    monkeypatch.setattr(columnar, "MIN_BYTES", 0)
    if columnar._modules is False:
        monkeypatch.setattr(columnar, "_modules", None)
    monkeypatch.setattr(jsonout, "_orjson", False if mode == "arrow-no-orjson" else None)


def _run_modes(monkeypatch, capsys, tmp_path, argv: list, spy=None) -> dict:
    """``batch`` of ``argv`` in each mode, written with ``-o``: mode -> (code, bytes, err)."""
    got = {}
    for mode in MODES:
        with monkeypatch.context() as m:
            _set_mode(m, mode)
            if spy is not None:
                spy(m, mode)
            out = tmp_path / f"out-{mode}.jsonl"
            capsys.readouterr()
            code = run(["batch", *map(str, argv), "-o", str(out)])
            err = capsys.readouterr().err
            got[mode] = (code, out.read_bytes() if out.exists() else None, err)
    return got


def _same(got: dict) -> tuple:
    first = got[MODES[0]]
    for mode in MODES[1:]:
        assert got[mode][0] == first[0], f"exit codes differ: {mode}"
        assert got[mode][2] == first[2], f"stderr differs: {mode}"
        assert got[mode][1] == first[1], f"output differs: {mode}"
    return first


def _write(path, text: str | bytes) -> None:
    data = text.encode("utf-8") if isinstance(text, str) else text
    path.write_bytes(data)


AWKWARD = [
    "0",
    "-0.0",
    "1",
    "12",
    "1e16",
    "-1e16",
    "1.5e+16",
    "1e22",
    "1e-7",
    "2.5e-05",
    "0.0001",
    "9.999999999999999e-05",
    "5e-324",
    "-4.9e-324",
    "1e-400",
    "2.2250738585072014e-308",
    "1.7976931348623157e308",
    "123456789012345678901234567890",
    ".5",
    "5.",
    "+1",
    "1E5",
    "-.25e-3",
    "0.1",
    "3.141592653589793",
]


def _awkward_rows(rng: random.Random, n: int) -> list:
    rows = []
    for _ in range(n):
        if rng.random() < 0.6:
            rows.append(f"{rng.gauss(0, 1)!r},{rng.gauss(0, 3)!r}\n")
        else:
            rows.append(f"{rng.choice(AWKWARD)},{rng.choice(AWKWARD)}\n")
    return rows


#: lines the text path must take (each breaks a clean chunk)
HOSTILE = [
    "1,2,3\n",  # too many cells
    "7\n",  # too few
    "abc,1\n",  # a text cell
    ",1\n",  # an empty cell
    "1,\n",
    "\n",  # a blank line
    "   \n",  # a line of spaces
    "1,2\r\n",  # CRLF
    "1,2\r",  # a lone CR ends a line too
    '"1",2\n',  # quotes
    '"[1, 2]",3\n',  # a tensor cell
    "nan,1\n",
    "inf,2\n",
    "-inf,2\n",
    "NaN,1\n",
    "Infinity,1\n",
    "1e400,1\n",  # past the largest double: a bad value
    "-1e999,1\n",
    " 1, 2\n",  # white space around the cells
    "1_000,2\n",
    "0x10,1\n",
    "1e5e5,1\n",
    "--1,2\n",
    "+,1\n",
    ".,1\n",
    "e,1\n",
    "1.2.3,1\n",
    "#1,2\n",
    "1;2\n",
    "\u00e9,1\n",  # not ASCII
    "\xff,1\n",
]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 65536])
def test_random_mixes_of_clean_and_hostile_lines(tmp_path, monkeypatch, capsys, seed, chunk):
    rng = random.Random(seed * 100 + chunk)
    rows = _awkward_rows(rng, rng.randint(50, 300))
    for _ in range(rng.randint(0, 4)):
        rows.insert(rng.randrange(len(rows) + 1), rng.choice(HOSTILE))
    if rng.random() < 0.3:
        rows[-1] = rows[-1].rstrip("\r\n")  # no line end at the end
    src = tmp_path / "in.csv"
    _write(src, "x,y\n" + "".join(rows))
    expr = rng.choice(["x*sin(y)+y**2", "x*y", "exp(x)-y", "log(x)+y"])
    got = _run_modes(monkeypatch, capsys, tmp_path, [src, "-e", expr, "--chunk-size", chunk])
    code, out, _ = _same(got)
    assert code in (0, 1)
    assert out.count(b"\n") == sum(1 for r in rows if r.strip())


@pytest.mark.parametrize(
    "extra",
    [
        [],
        ["--op", "eval"],
        ["--wrt", "y"],
        ["--fail-fast"],
        ["--dtype", "float32"],
        ["--op", "grad", "--order", "2", "--wrt", "x"],
        ["--op", "hessian"],
    ],
)
def test_options(tmp_path, monkeypatch, capsys, extra):
    rng = random.Random(7)
    rows = _awkward_rows(rng, 200)
    rows.insert(150, "abc,1\n")
    src = tmp_path / "in.csv"
    _write(src, "x,y\n" + "".join(rows))
    got = _run_modes(
        monkeypatch, capsys, tmp_path, [src, "-e", "x**3*y+sin(y)", "--chunk-size", 64, *extra]
    )
    _same(got)


@pytest.mark.parametrize(
    "text",
    [
        "x,y\n1,2\n3,4\n",
        "\ufeffx,y\n1,2\n3,4\n",  # a BOM
        "\nx,y\n1,2\n",  # a blank line before the header
        "x,y\r\n1,2\r\n3,4\r\n",
        "x, y\n1,2\n",
        "x,y\n",  # no rows
        "x,y",  # a header without its line end
        "x,y\n1,2",
        "x,y,z\n1,2,3\n4,5,6\n",  # a column the expression does not use
        "x,y,z\n1,2,abc\n4,5,6\n",  # its cells are not read
        "x,y\n\n\n1,2\n\n",
    ],
)
def test_headers_and_small_files(tmp_path, monkeypatch, capsys, text):
    src = tmp_path / "in.csv"
    _write(src, text)
    _same(_run_modes(monkeypatch, capsys, tmp_path, [src, "-e", "x*y"]))


def test_values_that_write_otherwise_in_orjson(tmp_path, monkeypatch, capsys):
    """Numbers whose orjson text differs from repr's, subnormals, -0.0, huge and tiny: the
    same bytes as the reference, and each line as ``jsonout.dumps`` writes it."""
    values = [
        0.0,
        -0.0,
        1e-5,
        2.5e-5,
        1e-7,
        5e-324,
        1e16,
        1.5e16,
        1e22,
        -1e300,
        1e-300,
        123456.789,
        1 / 3,
    ]
    rows = [f"{a!r},{b!r}\n" for a in values for b in values]
    src = tmp_path / "in.csv"
    _write(src, "x,y\n" + "".join(rows))
    code, out, _ = _same(_run_modes(monkeypatch, capsys, tmp_path, [src, "-e", "x*y+x"]))
    assert code == 0
    for (a, b), line in zip([(a, b) for a in values for b in values], out.splitlines()):
        value = a * b + a
        assert jsonout.dumps(value).encode() in line


def test_non_finite_results_and_warnings(tmp_path, monkeypatch, capsys):
    rows = ["1,2\n", "-1,2\n", "0,0\n", "1e300,1e300\n", "2,3\n"] * 40
    src = tmp_path / "in.csv"
    _write(src, "x,y\n" + "".join(rows))
    for expr in ("log(x)*y", "x*y*y", "sqrt(x)+y", "1/x"):
        _same(_run_modes(monkeypatch, capsys, tmp_path, [src, "-e", expr, "--chunk-size", 16]))


def test_overlong_lines_and_small_chunk_bytes(tmp_path, monkeypatch, capsys):
    """A line over MAX_LINE_BYTES (lowered) gets its limit record on both paths; chunks cut
    by MAX_CHUNK_BYTES (lowered) too."""
    monkeypatch.setattr(batch_io, "MAX_LINE_BYTES", 64)
    monkeypatch.setattr(batch_io, "MAX_CHUNK_BYTES", 512)
    monkeypatch.setattr(batch_io, "_READ_SIZE", 16)  # below MAX_LINE_BYTES, as LineLimit needs
    rng = random.Random(3)
    rows = _awkward_rows(rng, 300)
    rows.insert(100, "1" * 200 + ",2\n")
    rows.insert(200, ",".join(["1"] * 40) + "\n")
    src = tmp_path / "in.csv"
    _write(src, "x,y\n" + "".join(rows))
    code, out, _ = _same(_run_modes(monkeypatch, capsys, tmp_path, [src, "-e", "x+y"]))
    assert code == 1
    assert b'"kind": "limit"' in out


def test_the_fast_path_is_taken(tmp_path, monkeypatch, capsys):
    """With PyArrow the clean chunks are read by PyArrow and written by Arrow (so the
    comparisons above compare two paths), the others go through the text path."""
    calls = {"parse": 0, "parsed": 0, "lines": 0}
    parse, lines_data = columnar.parse_block, columnar.lines_data

    def spy(m, mode):
        def counted_parse(*a):
            calls["parse"] += 1
            found = parse(*a)
            calls["parsed"] += found is not None
            return found

        def counted_lines(*a):
            found = lines_data(*a)
            calls["lines"] += found is not None
            return found

        if mode == "arrow":
            m.setattr(columnar, "parse_block", counted_parse)
            m.setattr(columnar, "lines_data", counted_lines)

    src = tmp_path / "in.csv"
    _write(src, "x,y\n" + "1,2\n" * 10 + "abc,1\n" + "3,4\n" * 10)
    _same(_run_modes(monkeypatch, capsys, tmp_path, [src, "-e", "x*y", "--chunk-size", 5], spy))
    # chunks 1-2 clean (PyArrow); chunk 3 holds "abc": the text reader from there on, its
    # chunks 4 and 5 (one group each) written by Arrow too
    assert calls == {"parse": 2, "parsed": 2, "lines": 4}


def test_stdout_is_the_same_bytes(tmp_path, monkeypatch, capsys):
    src = tmp_path / "in.csv"
    _write(src, "x,y\n" + "".join(_awkward_rows(random.Random(5), 100)))
    outs = []
    for mode in MODES:
        with monkeypatch.context() as m:
            _set_mode(m, mode)
            capsys.readouterr()
            code = run(["batch", str(src), "-e", "x/y"])
            outs.append((code, capsys.readouterr().out))
    assert outs[0] == outs[1] == outs[2]


def test_lines_data_matches_number_texts():
    """``columnar.lines_data`` against the text path's ``fill`` of ``number_texts``, on
    random doubles of every magnitude and the awkward ones."""
    from autograd_cli.cli.batch.engine import fill

    if not columnar._arrow() or not jsonout.fast_encoder():
        pytest.skip("needs PyArrow and orjson")
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2**64, size=20000, dtype=np.uint64).view(np.float64)
    special = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 5e-324, 1e16, 1e-4, 9.99e-5])
    a = np.concatenate([bits, special, rng.normal(size=5000)])
    b = a[::-1].copy()
    lines = np.arange(2, 2 + len(a), dtype=np.int64)
    parts = ['{"line": ', ', "v": ', ', "g": {"x": ', "}}"]
    data = columnar.lines_data(parts, [lines, a, b])
    texts = [list(map(str, lines.tolist())), jsonout.number_texts(a), jsonout.number_texts(b)]
    want = fill(parts, texts)
    assert bytes(data) == ("\n".join(want) + "\n").encode()


@pytest.mark.parametrize("rows", [1, 2, 7, 3000])
@pytest.mark.parametrize(
    "parts",
    [["", ",", "\n"], ['{"line": ', "}"], ["[", ", ", ", ", "]é"], ["", "x", "y", "", "z"][:4]],
    ids=["empty-first", "one-column", "three-columns", "letters"],
)
def test_lines_data_in_any_template_and_size(rows, parts):
    """``columnar.lines_data`` (Arrow's ``take`` of the columns' texts and the parts) against
    the text path's ``fill`` for templates of one to three columns, an empty first part, a
    part that is one byte or not ASCII after its first, and sizes that change between calls
    (the cached line orders)."""
    from autograd_cli.cli.batch.engine import fill

    if not columnar._arrow() or not jsonout.fast_encoder():
        pytest.skip("needs PyArrow and orjson")
    rng = np.random.default_rng(rows)
    columns = [np.arange(5, 5 + rows, dtype=np.int64)]
    columns += [rng.normal(size=rows) * 10.0 ** rng.integers(-9, 20, size=rows)]
    columns += [np.where(rng.random(rows) < 0.3, np.nan, rng.normal(size=rows))]
    columns = columns[: len(parts) - 1]
    for _ in range(2):
        data = columnar.lines_data(parts, columns)
        texts = [list(map(str, columns[0].tolist()))]
        texts += [jsonout.number_texts(c) for c in columns[1:]]
        want = fill(parts, texts)
        assert bytes(data) == ("\n".join(want) + "\n").encode()
        columns = [c[: max(1, rows // 2)] for c in columns]


def test_keep_heap_tunes_malloc_once_and_only_where_there_is_mallopt(monkeypatch):
    """``columnar._keep_heap``: M_MMAP_THRESHOLD (32 MiB) and M_TRIM_THRESHOLD (128 MiB),
    once per process; a C library without ``mallopt`` is left alone."""
    import types

    calls = []

    class Libc:
        def __init__(self, name):
            assert name is None

        def mallopt(self, option, value):
            calls.append((option, value))
            return 1

    monkeypatch.setitem(sys.modules, "ctypes", types.SimpleNamespace(CDLL=Libc))
    monkeypatch.setattr(columnar, "_heap_kept", False)
    columnar._keep_heap()
    columnar._keep_heap()
    assert calls == [(-3, 32 << 20), (-1, 128 << 20)]

    class Bare:
        def __init__(self, name):
            pass

    monkeypatch.setitem(sys.modules, "ctypes", types.SimpleNamespace(CDLL=Bare))
    monkeypatch.setattr(columnar, "_heap_kept", False)
    columnar._keep_heap()
    assert columnar._heap_kept and len(calls) == 2


def test_cut_finds_the_chunks_last_line_end():
    """``columnar._cut`` (the size-th line end, looked for near the end first) against a
    full scan, with short and long lines before and after it (the window too small)."""
    rng = np.random.default_rng(2)
    for trial in range(300):
        lengths = rng.integers(0, 9000 if trial % 3 == 0 else 40, size=rng.integers(2, 400))
        data = b"".join(b"1" * int(k) + b"\n" for k in lengths) + b"2" * int(trial % 2)
        ends = data.count(b"\n")
        size = int(rng.integers(1, ends))
        where = [i for i, c in enumerate(data) if c == 10]
        assert columnar._cut(data, size, ends, bool(trial % 2)) == (where[size - 1] + 1, size)


def _big_csv(path, rows: int) -> None:
    rng = np.random.default_rng(1)
    a = rng.normal(size=(rows, 2))
    with open(path, "w", encoding="utf-8") as f:
        f.write("x,y\n")
        f.write("".join(f"{x!r},{y!r}\n" for x, y in a.tolist()))


def _cli() -> list:
    here = os.path.join(os.path.dirname(sys.executable), "autograd-cli")
    return [here] if os.path.exists(here) else [sys.executable, "-m", "autograd_cli"]


@pytest.mark.skipif(os.name != "posix", reason="SIGPIPE")
def test_closed_pipe_on_the_fast_path_ends_quietly_with_141(tmp_path):
    src = tmp_path / "big.csv"
    _big_csv(src, 120_000)  # over MIN_BYTES: the fast path in a fresh process
    assert os.path.getsize(src) > columnar.MIN_BYTES
    proc = subprocess.Popen(
        [*_cli(), "batch", str(src), "-e", "x*y"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    proc.wait(timeout=120)
    assert first.startswith(b'{"line": 2, ')
    assert proc.returncode == 141
    assert err == b""


def test_a_large_file_in_a_fresh_process_equals_the_text_path(tmp_path, capsys):
    """The console script on a file over MIN_BYTES (the fast path as users get it) against
    the text path in this process: the same bytes."""
    src = tmp_path / "big.csv"
    _big_csv(src, 100_000)
    with open(src, "a", encoding="utf-8") as f:
        f.write("1,abc\n\n2,3\r\n" + "".join(f"{i}.5,{-i}e-9\n" for i in range(70_000)))
    out = tmp_path / "out.jsonl"
    proc = subprocess.run([*_cli(), "batch", str(src), "-e", "x*exp(y)", "-o", str(out)])
    assert proc.returncode == 1
    ref = tmp_path / "ref.jsonl"
    saved = columnar._modules
    columnar._modules = False
    try:
        assert run(["batch", str(src), "-e", "x*exp(y)", "-o", str(ref)]) == 1
    finally:
        columnar._modules = saved
    assert out.read_bytes() == ref.read_bytes()
