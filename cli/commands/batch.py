"""The batch command: many lines of a JSONL or CSV file (the engine is
:mod:`autograd_cli.cli.batch`, the Dask one :mod:`autograd_cli.cli.batch_dask`).

Its options are declared here, one type each, so that the command reads as its list of
options; the shared ones (--device, --dtype, --max-memory, --timeout) are
:mod:`.shared`'s.  Its --json and --strict are its own: batch output is always JSONL, and
--strict is about CSV columns.
"""

from __future__ import annotations

from typing import Annotated

import typer

from .. import options
from .common import Wrt, command
from .shared import shared

#: the shared options batch takes (its lines have their own values and output)
SHARED = ("device", "dtype", "max_memory", "timeout")

File = Annotated[
    str,
    typer.Argument(
        metavar="FILE", help="JSONL or CSV input ('-' reads stdin).", show_default=False
    ),
]
ExprOption = Annotated[
    str | None,
    typer.Option(
        "--expr",
        "-e",
        help="The expression for every line (CSV: required; JSONL: the "
        "default, and a line may then be just its variables).",
    ),
]
Op = Annotated[
    str,
    typer.Option(
        "--op",
        help="eval, grad, hessian, jacobian, diff, taylor, propagate, minimize, solve or "
        'critical (a JSONL line\'s "op" overrides it).',
    ),
]
InputFormat = Annotated[
    str | None,
    typer.Option(
        "--format", help="jsonl or csv (default: from the file's extension; stdin: jsonl)."
    ),
]
Output = Annotated[
    str | None,
    typer.Option(
        "--output",
        "-o",
        help="Write the JSONL here instead of stdout: a regular file "
        "is replaced atomically (a temporary file renamed at the "
        "end, its permissions kept); a FIFO or device is written "
        "through; a symlink's target is replaced.",
    ),
]
ChunkSize = Annotated[
    int, typer.Option("--chunk-size", help="Lines read and evaluated together (bounds memory).")
]
FailFast = Annotated[
    bool, typer.Option("--fail-fast", help="Stop after the first line that fails.")
]
Progress = Annotated[
    bool | None,
    typer.Option(
        "--progress/--no-progress",
        help="A progress bar on stderr (default: when stderr "
        "is a terminal and the input is large).",
    ),
]
OrderText = Annotated[
    str | None,
    typer.Option(
        "--order",
        metavar="N",
        help="For diff, and grad of one variable: the order of the derivative "
        f"(1 to {options.MAX_ORDER}); for taylor: the degree (0 to {options.MAX_ORDER}).",
    ),
]
JsonLines = Annotated[
    bool,
    typer.Option("--json", help="Accepted like on every command; batch output is always JSONL."),
]
StrictColumns = Annotated[
    bool,
    typer.Option(
        "--strict", help="A CSV column the expression does not use is an error, not a warning."
    ),
]
Method = Annotated[str | None, typer.Option("--method", help="minimize lines: newton, bfgs or gd.")]
Gtol = Annotated[
    float | None,
    typer.Option("--gtol", help="minimize and critical lines: gradient tolerance."),
]
Tol = Annotated[float | None, typer.Option("--tol", help="solve lines: residual tolerance.")]
MaxIter = Annotated[
    int | None, typer.Option("--max-iter", help="minimize, solve, critical lines: at most.")
]
Trace = Annotated[
    bool, typer.Option("--trace", help="minimize, solve, critical lines: every iterate.")
]
At = Annotated[
    list[str] | None,
    typer.Option("--at", metavar="NAME=VALUE", help="taylor lines: the remainder's point."),
]
Corr = Annotated[
    list[str] | None,
    typer.Option("--corr", metavar="A,B=R", help="propagate lines: a correlation."),
]
Mc = Annotated[
    int | None, typer.Option("--mc", metavar="N", help="propagate lines: Monte Carlo draws.")
]
Seed = Annotated[int | None, typer.Option("--seed", help="propagate lines: the draws' seed.")]
Engine = Annotated[
    str,
    typer.Option(
        "--engine",
        help="local (this process) or dask (a Dask cluster: FILE may also be a glob or a "
        "folder of CSV, JSONL and Parquet files, and -o DIR.parquet writes Parquet).",
    ),
]
Scheduler = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        metavar="ADDRESS",
        help="--engine dask: the scheduler of an existing cluster (tcp://host:8786), or "
        "in-process (threads in this process); default: a new local cluster.",
    ),
]
Workers = Annotated[
    int | None,
    typer.Option(
        "--workers",
        help="--engine dask, local cluster: worker processes (default: one per core).",
    ),
]
PartitionSize = Annotated[
    str | None,
    typer.Option(
        "--partition-size",
        metavar="SIZE",
        help="--engine dask: bytes of CSV/JSONL per task, like 16M (default: from the input's "
        "size and the cluster's threads, 1M to 16M); Parquet: one task per row group.",
    ),
]


@command("batch", shared=SHARED, variables=False)
def batch_command(
    ctx: typer.Context,
    file: File,
    expr: ExprOption = None,
    op: Op = "grad",
    wrt: Wrt = None,
    input_format: InputFormat = None,
    output: Output = None,
    chunk_size: ChunkSize = 65536,
    fail_fast: FailFast = False,
    progress: Progress = None,
    order_text: OrderText = None,
    json_out: JsonLines = False,
    strict: StrictColumns = False,
    method: Method = None,
    gtol: Gtol = None,
    tol: Tol = None,
    max_iter: MaxIter = None,
    trace: Trace = False,
    at: At = None,
    corr: Corr = None,
    mc: Mc = None,
    seed: Seed = None,
    engine: Engine = "local",
    scheduler: Scheduler = None,
    workers: Workers = None,
    partition_size: PartitionSize = None,
):
    """Evaluate many lines of a JSONL or CSV file.

    One JSONL result per input line, in order.  Exit code 0 when every line succeeded, 1
    when any line failed (its output line holds the error; a summary goes to stderr), 2 for
    a bad command line, 130/143/129 when stopped by SIGINT/SIGTERM/SIGHUP (the lines
    completed so far are kept), 141 when the reader of stdout goes away.  With --engine
    dask the lines are evaluated on a Dask cluster (FILE may be a glob or a folder; Parquet
    too): the same output, in order.
    """
    from .. import batch

    given = shared(ctx)
    memory, seconds = _checked(given)
    dask = None  # --engine dask's settings (its module is loaded on that path only)
    if engine != "local" or (scheduler, workers, partition_size) != (None, None, None):
        from .. import batch_dask

        dask = batch_dask.engine_options(
            engine, scheduler, workers, partition_size, given.device, given.dtype, memory
        )
    settings = _analysis_defaults(
        method=method,
        gtol=gtol,
        tol=tol,
        max_iter=max_iter,
        trace=trace or None,
        at=None if at is None else options.named_literals(at, "--at"),
        corr=corr,
        mc=mc,
        seed=seed,
    )
    order = None if order_text is None else options.parse_order(order_text, None)
    job = batch.BatchOptions(
        source=file,
        expr=expr,
        op=op,
        wrt=options.split_names(wrt) or None,
        input_format=input_format,
        output=output,
        chunk_size=chunk_size,
        fail_fast=fail_fast,
        progress=progress,
        order=order,
        timeout=seconds,
        strict=strict,
        settings=settings,
    )
    _run(job, given, memory, dask)


def _checked(given) -> tuple:
    """The shared options' values, checked before any work (a bad one is a usage error):
    the memory limit in bytes (None: the default) and the timeout in seconds (None: none);
    batch sets its own timer, so that the lines completed are kept."""
    if given.dtype not in ("float64", "float32"):
        raise options.UsageError(f"--dtype must be float64 or float32, not {given.dtype!r}")
    if given.device not in ("cpu", "gpu"):
        raise options.UsageError(f"--device must be cpu or gpu, not {given.device!r}")
    return options.parse_max_memory(given.max_memory), options.parse_timeout(given.timeout)


def _run(job, given, memory, dask) -> None:
    """Run the batch on the device and dtype, under the memory limit, and exit with its
    summary's code."""
    from ...core import backend, limits
    from .. import batch

    runner = batch.run_batch
    if dask is not None:
        from .. import batch_dask

        runner = batch_dask.runner(dask)
    with backend.using(device=given.device, dtype=given.dtype), limits.using(memory):
        summary = runner(job)
    summary.exit()


def _analysis_defaults(**given) -> dict | None:
    """The analysis settings given on batch's command line, keyed as a line's keys: each
    applies to the lines whose op takes it (a line's own key wins)."""
    settings = {key: value for key, value in given.items() if value is not None}
    return settings or None
