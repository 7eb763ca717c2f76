"""The PyArrow fast path of a CSV batch (issue 25): the same bytes as the path without it.

Used only where PyArrow is installed (the ``[dask]`` extra) and the input is a large enough
regular CSV file whose header is its first line; anything else, and any chunk this path does
not take whole, goes the way it went before, so error records, line numbers, blank lines,
quoting and nan/inf spellings are those of the text reader (tests/test_batch_fast.py runs
both paths on the same inputs).

* Reading (:func:`chunks`): the file as bytes, a chunk of ``--chunk-size`` lines at a time.
  A chunk that holds only digits, ``.eE+-``, commas and line ends (``\\n``), with no blank
  and no overlong line, is a :class:`CleanBlock`; PyArrow's CSV reader turns it into float64
  columns (:func:`parse_block`) when every row has every cell and every cell is a finite
  number (PyArrow's reading of such a cell is ``numpy.loadtxt``'s, the path before it:
  both round correctly, and PyArrow refuses what loadtxt refuses); otherwise the chunk's
  text lines go to the text path (``records.csv_fast``, ``records.csv_row``).  The first
  chunk that is not clean hands the rest of the file, from its first line, to the text
  reader (``io.read_chunks``).
* Writing (:func:`lines_data`): a chunk that is one group of scalar lines sharing one line
  template gets its output as one buffer: each column's numbers as text from one orjson
  call (the numbers outside ``repr``'s plain-decimal range replaced by ``repr``'s text, as
  ``jsonout.number_texts`` does), put in the lines' order with the template's parts by
  Arrow's ``take``; no Python loop over the lines.
* Memory (:func:`_keep_heap`): the C library's malloc keeps the chunk-sized blocks from one
  chunk to the next instead of mapping and faulting them in anew for each.
"""

from __future__ import annotations

import os

import numpy as np

from .. import jsonout
from . import io as batch_io  # its limits read at use: tests lower them

__all__ = ["MIN_BYTES", "CleanBlock", "active", "chunks", "lines_data", "parse_block"]

#: a file smaller than this is read by the text reader (PyArrow's import, about 70 ms,
#: would cost more than it saves)
MIN_BYTES = 3 << 20
#: the bytes of a clean chunk besides the digits
_CLEAN = b"0123456789.eE+-,\n"
_READ_MIN = 1 << 16
_modules = None  # (pyarrow, pyarrow.csv, pyarrow._compute); False: not installed or refused


def _arrow():
    """PyArrow's modules, imported on first use (an optional dependency: only a large CSV
    batch needs them; ``pyarrow._compute`` rather than ``pyarrow.compute``, whose import
    builds every function's wrapper and costs 50 ms more)."""
    global _modules
    if _modules is None:
        _modules = False
        try:
            import pyarrow  # noqa: PLC0415 - optional, and slow to import
            import pyarrow._compute  # noqa: PLC0415
            import pyarrow.csv  # noqa: PLC0415

            pyarrow._compute.get_function("take")
            _modules = (pyarrow, pyarrow.csv, pyarrow._compute)
        except (ImportError, AttributeError, KeyError):  # absent, or too old a release
            pass
    return _modules


def active() -> bool:
    """PyArrow is loaded (a large CSV file's reader chose this path): from then on, in this
    process, a chunk that is one group of scalar lines gets its lines from Arrow (the same
    bytes as the text path's; for JSONL input too)."""
    return bool(_modules)


class CleanBlock:
    """A chunk's rows as bytes: digits, ``.eE+-``, commas and ``\\n`` only, no blank line.

    ``lines()`` and ``text()`` are the text reader's lines and joined text of the same rows.
    """

    __slots__ = ("data", "count")

    def __init__(self, data: bytes, count: int):
        self.data = data
        self.count = count

    def __len__(self) -> int:
        return self.count

    def __iter__(self):
        return iter(self.lines())

    def text(self) -> str:
        return self.data.decode("ascii")

    def lines(self) -> list:
        return self.text().splitlines(keepends=True)


# ---------------------------------------------------------------------------
# Reading


def start(source, header: str, header_line: int) -> int | None:
    """The byte offset of a CSV file's first row when this path can read it (PyArrow is
    installed, the input a regular file of at least MIN_BYTES whose first line is the
    header, ending with ``\\n``); else None."""
    fd = source.fd()
    if fd is None or header_line != 1 or not hasattr(os, "pread"):
        return None
    if source.size is None or source.size < MIN_BYTES or not header.endswith("\n"):
        return None
    try:
        raw = header.encode("utf-8")
        head = os.pread(fd, len(raw) + 3, 0)
    except (UnicodeEncodeError, OSError):
        return None
    skip = 3 if head.startswith(b"\xef\xbb\xbf") else 0
    if head[skip : skip + len(raw)] != raw or not _arrow():
        return None
    _keep_heap()
    return skip + len(raw)


_heap_kept = False


def _keep_heap() -> None:
    """Have the C library's malloc (glibc) keep the chunk-sized blocks a chunk frees for the
    next chunk, once per process: blocks up to 32 MiB from the heap (not each its own
    ``mmap``) and up to 128 MiB of free heap kept rather than handed back to the system.
    Otherwise each chunk's buffers are mapped, faulted in page by page and unmapped again
    (about 37,000 page faults, a tenth of a 10^6-row run); the peak memory grows by about
    6 MB.  Elsewhere than glibc (no ``mallopt``), nothing."""
    global _heap_kept
    if _heap_kept:
        return
    _heap_kept = True
    try:
        import ctypes  # noqa: PLC0415 - only this path tunes malloc

        mallopt = ctypes.CDLL(None).mallopt
    except (ImportError, OSError, AttributeError, TypeError):
        return
    mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD
    mallopt(-1, 128 << 20)  # M_TRIM_THRESHOLD


def chunks(source, offset: int, first_line: int, size: int, interrupt):
    """``io.read_chunks``' (line numbers, texts, joined) from byte ``offset`` (line
    ``first_line``) of the input file, a clean chunk's texts a :class:`CleanBlock`; from the
    first chunk that is not clean on, ``io.read_chunks`` itself."""
    fd = source.fd()
    line = first_line - 1
    pending = b""
    at = offset  # the file offset just past ``pending``
    per_line = 64.0
    while True:
        if interrupt.requested:
            raise batch_io.Stop()
        interrupt.state = "reading"
        try:
            pending, at, ends, eof = _gather(fd, pending, at, size, per_line)
        finally:
            interrupt.state = "working"
        source.limits.position = at
        end, count = _cut(pending, size, ends, eof)
        if count == 0:
            if pending:  # a line longer than a chunk may hold: the text reader's
                break
            interrupt.at_end = True
            return
        window = pending[:end]
        if not _clean(window):
            break
        pending = pending[end:]
        per_line = max(1.0, end / count)
        interrupt.last_line = line + count
        yield range(line + 1, line + 1 + count), CleanBlock(window, count), None
        line += count
    source.resume(at - len(pending), line)
    yield from batch_io.read_chunks(source.stream, line + 1, size, interrupt, source.limits)


def _gather(fd: int, pending: bytes, at: int, size: int, per_line: float) -> tuple:
    """``pending`` and what follows it, read until it holds ``size`` line ends, or
    MAX_CHUNK_BYTES, or the end of the file: (bytes, new offset, line ends, at the end)."""
    limit = batch_io.MAX_CHUNK_BYTES
    pieces = [pending]
    have = len(pending)
    ends = _line_ends(pending)
    eof = False
    while ends < size and have < limit:
        want = int((size - ends) * per_line * 1.05) + 4096
        piece = os.pread(fd, min(max(want, _READ_MIN), limit - have + 1), at)
        if not piece:
            eof = True
            break
        at += len(piece)
        have += len(piece)
        ends += _line_ends(piece)
        pieces.append(piece)
    return b"".join(pieces), at, ends, eof


def _line_ends(data: bytes) -> int:
    """``data.count(b"\\n")``, 15 times as fast."""
    return int(np.count_nonzero(np.frombuffer(data, dtype=np.uint8) == 10))


def _cut(data: bytes, size: int, ends: int, eof: bool) -> tuple[int, int]:
    """Where a chunk of at most ``size`` lines ends in ``data`` (which has ``ends`` line
    ends) and how many lines it has ((0, 0): none, or no line end within MAX_CHUNK_BYTES)."""
    if ends > size:  # read past the chunk: it ends at its size-th line end
        raw = np.frombuffer(data, dtype=np.uint8)
        extra = ends - size  # the line ends after it, looked for near the end first
        window = min(len(raw), max(4096, 2 * (extra + 1) * len(raw) // ends))
        tail = np.flatnonzero(raw[len(raw) - window :] == 10)
        if len(tail) > extra:
            return len(raw) - window + int(tail[-1 - extra]) + 1, size
        where = np.flatnonzero(raw == 10)
        return int(where[size - 1]) + 1, size
    if eof:
        return len(data), ends + (0 if data.endswith(b"\n") or not data else 1)
    end = data.rfind(b"\n") + 1
    return end, ends if end else 0


def _clean(window: bytes) -> bool:
    """Only digits, ``.eE+-``, commas and ``\n``; no blank line; no line longer than
    MAX_LINE_BYTES (the text reader's ``limit`` record)."""
    if window.translate(None, _CLEAN) or window[:1] == b"\n" or _blank_line(window):
        return False
    longest = batch_io.MAX_LINE_BYTES
    if len(window) <= longest:
        return True
    # every stretch of longest // 2 bytes holds a line end: no line is longer than that
    step = max(1, longest // 2)
    if all(window.find(b"\n", k, k + step) >= 0 for k in range(0, len(window) - step, step)):
        return True
    ends = np.flatnonzero(np.frombuffer(window, dtype=np.uint8) == 10)
    bounds = np.concatenate(([-1], ends, [len(window)]))
    return int(np.diff(bounds).max()) - 1 <= longest


def _blank_line(data: bytes) -> bool:
    """``b"\\n\\n" in data``, as two-byte words at even and odd offsets (``in`` takes 30
    times as long: a line end every few bytes defeats its search)."""
    if len(data) < 2:
        return False
    pairs = np.frombuffer(data, dtype="<u2", count=len(data) // 2)
    shifted = np.frombuffer(data, dtype="<u2", count=(len(data) - 1) // 2, offset=1)
    return bool((pairs == 0x0A0A).any() or (shifted == 0x0A0A).any())


def parse_block(block: CleanBlock, ncols: int) -> list | None:
    """A clean chunk's ``ncols`` columns as float64 arrays, or None when a row is ragged, a
    cell empty or not a number, or a number infinite (the text path says which)."""
    modules = _arrow()
    if not modules:
        return None
    pa, pcsv, _ = modules
    names = [f"c{i}" for i in range(ncols)]
    whole = min(max(len(block.data) + 1, 1 << 20), 1 << 30)  # one block: 20 % faster
    try:
        table = pcsv.read_csv(
            pa.py_buffer(block.data),
            # one thread: Arrow's pool threads can abort the process as it exits
            # (apache/arrow#34314), and a run's chunks come one at a time anyway
            read_options=pcsv.ReadOptions(column_names=names, use_threads=False, block_size=whole),
            parse_options=pcsv.ParseOptions(
                delimiter=",", quote_char=False, escape_char=False, ignore_empty_lines=False
            ),
            convert_options=pcsv.ConvertOptions(
                column_types={n: pa.float64() for n in names},
                null_values=[],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except pa.ArrowException:
        return None
    if table.num_rows != block.count or table.num_columns != ncols:
        return None
    columns = []
    for column in table.columns:
        if column.null_count:
            return None
        array = column.to_numpy()
        if np.isinf(array).any():  # an integer past the largest double: a bad value
            return None
        columns.append(array)
    return columns


# ---------------------------------------------------------------------------
# Writing


def lines_data(parts: list, columns: list):
    """Row i's line ``parts[0] + text(columns[0][i]) + parts[1] + ... + parts[-1]`` and a
    line end, for every row, as one bytes-like object; None where this path does not apply
    (PyArrow not in use, orjson absent, a column not 1-D float or int, a part not UTF-8 or
    not starting with one ASCII byte).

    Each column's texts (each followed by the first byte of the part after it) and the
    parts' other bytes are the elements of one Arrow binary array; Arrow's ``take`` puts
    them in the lines' order, and its result's bytes are the lines (one copy of the output;
    ``binary_join_element_wise`` of the columns and parts took twice as long)."""
    encoder = jsonout.fast_encoder()
    if not (_modules and encoder):
        return None
    pa, _, compute = _modules
    try:
        encoded = [p.encode("utf-8") for p in parts]
    except UnicodeEncodeError:
        return None
    encoded[-1] += b"\n"
    if any(not p[:1] or p[0] > 127 for p in encoded[1:]):
        return None
    count = len(columns[0]) if columns else 0
    if count == 0:
        return None
    pieces, starts, at = [], [], 0
    for column, part in zip(columns, encoded[1:]):
        texts = _texts(encoder, column, part[:1])
        if texts is None:
            return None
        raw, offsets = texts
        pieces.append(memoryview(raw)[offsets[0] : offsets[-1]])
        starts.append(offsets[:-1] + (at - offsets[0]))
        at += int(offsets[-1] - offsets[0])
    constants = [encoded[0], *(p[1:] for p in encoded[1:])]
    starts.append(np.cumsum([at, *map(len, constants)]))
    elements = pa.Array.from_buffers(
        pa.large_binary(),
        count * len(columns) + len(constants),
        [None, pa.py_buffer(np.concatenate(starts)), pa.py_buffer(b"".join(pieces + constants))],
    )
    lines = compute.call_function(
        "take",
        [elements, _line_order(pa, count, len(columns))],
        compute.TakeOptions(boundscheck=False),
    )
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int64)
    begin, end = offsets[lines.offset], offsets[lines.offset + len(lines)]
    return memoryview(lines.buffers()[2])[begin:end]


_orders: dict = {}  # (rows, columns): its _line_order (a run's chunk size and its last chunk's)


def _line_order(pa, rows: int, columns: int):
    """The elements of :func:`lines_data` in the lines' order: for each row, the first
    constant part, then each column's text followed by the next constant part (the columns'
    texts are elements ``j * rows + i``, the parts the last ``columns + 1``)."""
    order = _orders.get((rows, columns))
    if order is None:
        where = np.empty((rows, 2 * columns + 1), dtype=np.int64)
        where[:, 0::2] = rows * columns + np.arange(columns + 1)
        where[:, 1::2] = np.arange(rows)[:, None] + np.arange(columns) * rows
        # from its buffer: pyarrow.array() of a NumPy array imports numpy.ma (8 ms)
        order = pa.Array.from_buffers(pa.int64(), where.size, [None, pa.py_buffer(where)])
        if len(_orders) >= 2:
            _orders.clear()
        _orders[rows, columns] = order
    return order


def _texts(encoder, column, end: bytes):
    """A column's numbers as text, each number's JSON text followed by ``end`` (the first
    byte of the part after it): the texts of ``jsonout.number_texts``, as (bytes, where
    each begins and the last one ends, int64)."""
    column = np.asarray(column)
    if column.ndim != 1 or column.dtype.kind not in "fiu" or column.dtype.itemsize > 8:
        return None
    if column.dtype.kind == "f":
        column = jsonout.double_column(column)
    n = len(column)
    # one number more than the column, so that every number is followed by a comma
    text = encoder.dumps(np.append(column, column[:1]), option=encoder.OPT_SERIALIZE_NUMPY)
    raw = np.frombuffer(text, dtype=np.uint8)
    commas = np.flatnonzero(raw == 44)
    if len(commas) != n:
        return None
    offsets = np.empty(n + 1, dtype=np.int64)
    offsets[0] = 1
    offsets[1:] = commas + 1
    if end != b",":  # a comma in orjson's text of numbers is a separator
        text = text.replace(b",", end)
    if column.dtype.kind == "f":
        return _patched(column, text, offsets, end)
    return text, offsets


def _patched(column, text: bytes, offsets, end: bytes) -> tuple:
    """The texts (``text``, element i at ``offsets[i]:offsets[i + 1]``) with those of the
    numbers orjson writes otherwise than ``repr`` (``jsonout.odd_places``) replaced by
    ``jsonout.float_text``'s, each followed by ``end``."""
    odd = jsonout.odd_places(column)
    if not len(odd):
        return text, offsets
    data = memoryview(text)
    pieces = []
    grow = np.zeros(len(offsets), dtype=np.int64)
    at = 0
    for i, x in zip(odd.tolist(), column[odd].tolist()):
        number = jsonout.float_text(x).encode("ascii") + end
        pieces += [data[at : offsets[i]], number]
        at = int(offsets[i + 1])
        grow[i + 1] = len(number) - (at - int(offsets[i]))
    pieces.append(data[at:])
    return b"".join(pieces), offsets + np.cumsum(grow)
