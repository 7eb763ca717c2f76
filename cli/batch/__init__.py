"""The ``batch`` command as a package: many evaluations from JSONL or CSV, one JSONL line out
per line in (SPEC.md, "Batch").

* :mod:`.records`: a line (JSONL object, CSV row) read into its record, the per-line
  output records (result and error documents);
* :mod:`.engine`: a chunk of records evaluated (grouped, vectorised rows, per-line
  results), each line's text made (scalar lines from a template of their parts);
* :mod:`.io`: the reader (line limits, chunks), the sink (stdout or ``-o``, through
  ``cli/files.py``'s one output policy), the stop signals, the progress bar;
* :mod:`.command`: the command line checked once, the run driven (:func:`run_batch`),
  the summary (cli/commands/batch.py picks the engine and runs it);
* :mod:`.dask` and :mod:`.dask_parts`: the Dask engine (``--engine dask``), which uses only
  the public names (each module's ``__all__``) of the others.

The names below are the package's public face (tests and benchmarks import them here).
"""

from __future__ import annotations

from ..status import STOP_SIGNALS
from .command import Summary, run_batch
from .engine import Chunk, Runner, fill
from .io import MAX_LINE_BYTES, Input, Interrupt, OutputError, Overlong, Sink, read_chunks
from .records import DEFAULT_CHUNK_SIZE, BatchOptions

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "MAX_LINE_BYTES",
    "STOP_SIGNALS",
    "BatchOptions",
    "Chunk",
    "Input",
    "Interrupt",
    "OutputError",
    "Overlong",
    "Runner",
    "Sink",
    "Summary",
    "fill",
    "read_chunks",
    "run_batch",
]
