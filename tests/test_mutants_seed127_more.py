"""Tests written from survivors of ``bench/mutate.py`` seed 127 (bench/results/
mutate-seed127.json) in the simplifier, the sparsity patterns and the Dask engine's partitions.

Each test's docstring names the mutant it kills (``file:line: original -> mutant``, line numbers
as they were when it was found) and the behaviour it pins.  Expected values come from algebra
by hand, the docs or the docstrings, never from the code under test.  The Dask engine's
helpers tested here (``_limit_records``, ``measure``, ``_Range``) run without Dask: no
cluster is started.
"""

from __future__ import annotations

import json

from autograd_cli.cli.batch import dask as batch_dask
from autograd_cli.cli.batch import dask_parts
from autograd_cli.cli.batch import io as batch_io
from autograd_cli.core.printing import to_text
from autograd_cli.core.symbolic import simplify
from autograd_cli.grammar import parse

# ---- the simplifier -----------------------------------------------------------------------


def _nested_sines(depth: int) -> str:
    text = "log(x)"
    for _ in range(depth):
        text = f"sin({text})"
    return text


def test_the_nan_reach_search_of_a_cancelled_term_looks_at_256_terms():
    """kills core/symbolic/algebra.py:91: def _reaches(self, roots: list, target: Term,
    limit: int = 256) -> bool: -> limit: int = 257.

    log(x) - log(x) is nan for x < 0, so it leaves the trace 0*log(x), unless a nan of
    log(x) already reaches the rest of the sum, which a bounded search of at most 256 terms
    looks for (Algebra._reaches, "a bounded search").  In sin(sin(...sin(log(x)))) with d
    sines, log(x) is the (d + 1)-th term the search meets, after d terms seen: with d = 255
    it is found and the trace goes; with d = 256 the search has seen its 256 terms first
    and the trace stays (both forms mean the same function).  The mutant's 257 terms found
    it at d = 256 too."""
    for depth, trace in ((255, ""), (256, " + 0*log(x)")):
        chain = _nested_sines(depth)
        assert to_text(simplify(parse(f"log(x) - log(x) + {chain}").output)) == chain + trace


def test_a_product_with_a_sum_factor_standing_alone_in_a_sum_is_not_expanded(cli):
    """kills core/symbolic/algebra.py:321: if len(acc) > 1: -> if len(acc) >= 1:.

    A product with a sum factor (or a small power of a short sum) is expanded only when its
    terms meet other terms of the sum (core/symbolic/__init__.py: "(x + 1)*cos(x) + sin(x)
    stays"); one standing alone beside a constant, (a + b + c)**8 + k, has nothing to meet,
    and costs nothing to keep.  The mutant tried the expansion of every such one-term sum
    (45 monomials of (a + b + c)**8, each built), so 150 of them, each a few nodes of the
    input, ran past the step budget (linear in the input's size) and diff printed the
    derivative unsimplified with a note.  By hand: d/dy of y*S is S, where nothing
    simplifies; the printer names the shared a + b + c t1."""
    terms = [f"sin((a + b + c)**8 + {k})" for k in range(1, 151)]
    got = cli("diff", f"y*({' + '.join(terms)})", "--wrt", "y", "--json")
    assert got.code == 0, got.err
    assert "notes" not in got.json, got.json.get("notes")
    want = "t1 = a + b + c; " + " + ".join(f"sin(t1**8 + {k})" for k in range(1, 151))
    assert got.json["derivative"] == want


# ---- sparsity -----------------------------------------------------------------------------


def test_a_jacobian_whose_rows_need_under_half_the_column_colors_takes_the_rows(cli):
    """kills core/sparsity.py:346: return rows if 2 * rows.k < columns.k else columns -> 3 *
    rows.k.

    Row colors (one reverse sweep each) are taken "only where they are fewer than half the
    column colors" (docs/choices.md).  [sum(x), sum(x**2)] of 5 elements: both rows are
    dense, so the 5 columns all conflict (5 column colors) and the 2 rows conflict (2 row
    colors); 2 < 5/2, so 2 colors of the rows.  The mutant wanted 3*2 < 5 and took the 5
    columns."""
    got = cli("sparsity", "[sum(x), sum(x**2)]", "--x", "[1, 2, 3, 4, 5]", "--json")
    assert got.code == 0, got.err
    doc = got.json
    assert (doc["shape"], doc["nnz"], doc["colors"]) == ([2, 5], 10, 2)
    text = cli("sparsity", "[sum(x), sum(x**2)]", "--x", "[1, 2, 3, 4, 5]")
    assert "2 color(s) of the rows" in text.out, text.out


def test_the_band_coloring_counts_a_one_entry_row_as_a_span_of_one(cli, tmp_path):
    """kills core/sparsity.py:387: spans = np.where(counts > 0, last - first + 1, 0) ->
    np.where(counts > 1, ...).

    Past 20,000 columns the band coloring is taken: j mod w, w the widest row's span
    (last - first + 1 of its columns), rows "far wider than the rest" left out of w, their
    columns a color each (_band_colors); far wider means above max(64, 8 * the median span
    of the nonempty rows).  The Jacobian of concatenate([tile(x[0:1], 40), x[100:139] +
    x[116:155], x[1000:1001] + x[1069:1070]]) over 20,001 x has 40 rows of one entry (span
    1), 39 rows of span 17 and one row of span 70 (columns 1000 and 1069): the median of the
    80 spans is (1 + 17)/2 = 9, the bound max(64, 72) = 72, so no row is far wider and w =
    70: 70 colors.  (x[0] is in 40 rows, not a dense column (more than 64); the rows conflict
    through it: at least 40 row colors, not under half of 70.)  The mutant gave the one-entry rows span
    0: median 8.5, bound 64, the span-70 row left out, and 17 + 2 = 19 colors."""
    values = tmp_path / "x.json"
    values.write_text(json.dumps({"x": [0.0] * 20001}))
    expr = "concatenate([tile(x[0:1], 40), x[100:139] + x[116:155], x[1000:1001] + x[1069:1070]])"
    got = cli("sparsity", expr, "--vars", f"@{values}", "--json")
    assert got.code == 0, got.err
    doc = got.json
    assert (doc["shape"], doc["nnz"], doc["colors"]) == ([80, 20001], 40 + 2 * 39 + 2, 70)


# ---- the Dask engine's partitions ---------------------------------------------------------


def test_limit_records_leave_out_the_last_written_line_where_a_chunk_starts_with_it(tmp_path):
    """kills cli/batch/dask.py:665: if after is not None and numbers and numbers[0] <= after:
    -> numbers[0] < after.

    After the --timeout, a text partition whose task wrote its lines up to line ``after``
    gets a ``limit`` record for each line after that one only (_limit_records' docstring),
    read 65,536 lines a chunk.  A CSV of a header and 65,539 data lines (lines 2 to
    65,540): its second chunk starts at line 2 + 65,536 = 65,538; written up to 65,538, the
    records are lines 65,539 and 65,540; written up to its first line 2, lines 3 to 65,540.
    The mutant kept a chunk that starts with line ``after`` whole: 65,538 (or 2) twice."""
    path = tmp_path / "in.csv"
    path.write_bytes(b"x\n" + b"1\n" * 65539)
    stop = dask_parts.WorkerStop(stoppable=False)
    part = dask_parts.Part(0, str(path), "csv", 2, 2 + 2 * 65539, first_line=2, names=["x"])
    part.range = dask_parts.measure(str(path), part.start, part.end)
    assert part.range == (2, 2 + 2 * 65539, 65539)
    chunks = list(batch_dask._limit_records(part, "late", stop, after=65538))
    assert [numbers for numbers, _ in chunks] == [[65539, 65540]]
    docs = [json.loads(text) for text in chunks[0][1]]
    assert [(d["line"], d["error"]["kind"], d["error"]["message"]) for d in docs] == [
        (65539, "limit", "late"),
        (65540, "limit", "late"),
    ]
    chunks = list(batch_dask._limit_records(part, "late", stop, after=2))
    assert [n for numbers, _ in chunks for n in numbers] == list(range(3, 65541))


def test_a_partition_boundary_inside_a_line_of_64_mib_moves_to_the_next_line(tmp_path):
    """kills cli/batch/dask_parts.py:65: _SCAN_LIMIT = batch_io.MAX_RUNAWAY_BYTES +
    batch_io.MAX_LINE_BYTES -> - batch_io.MAX_LINE_BYTES.

    A text partition's range is moved to line starts (measure); the line start after a
    boundary is looked for as far as a line may go on before it runs away (a "line" of more
    than MAX_RUNAWAY_BYTES, 64 MiB, ends the run; one of 64 MiB is read, cut to its first
    MiB: batch/io.py), so a boundary inside a line of exactly 64 MiB moves to the start of
    the next line, byte 64 MiB + 1.  The mutant looked only 63 MiB on and took a byte in the
    middle of the line for a line start.  The file is sparse (its long line is NUL bytes)."""
    assert batch_io.MAX_RUNAWAY_BYTES == 64 << 20  # the documented 64 MiB
    path = tmp_path / "long.csv"
    with open(path, "wb") as f:
        f.seek(64 << 20)
        f.write(b"\n1\n")
    size = (64 << 20) + 3
    assert dask_parts.measure(str(path), 1, size) == ((64 << 20) + 1, size, 1)
    assert dask_parts.measure(str(path), 0, 5) == (0, (64 << 20) + 1, 1)


def test_a_byte_range_read_whole_stops_at_its_end(tmp_path):
    """kills cli/batch/dask_parts.py:343: if n is None or n < 0 or n > self.left: -> if n is
    None and n < 0 or n > self.left:.

    A partition's bytes [start, end) are "read like a raw file" (_Range): read() and
    read(-1), like read(None), read what is left of the range, never past its end.  Bytes 2
    to 7 of b"x\\n1\\n2\\n3\\n" are b"1\\n2\\n3" (by hand).  The mutant read to the end of
    the file for -1 and raised a TypeError (None < 0) for None."""
    path = tmp_path / "in.csv"
    path.write_bytes(b"x\n1\n2\n3\n")
    for arg in ((), (-1,), (None,), (100,)):
        r = dask_parts._Range(str(path), 2, 7)
        try:
            assert r.read(*arg) == b"1\n2\n3", arg
            assert r.read(*arg) == b"", arg
        finally:
            r.close()
    r = dask_parts._Range(str(path), 2, 7)
    try:
        assert [r.read(2), r.read(-1), r.read()] == [b"1\n", b"2\n3", b""]
    finally:
        r.close()
