"""The batch command: many lines of a JSONL or CSV file (the engine is
:mod:`autograd_cli.cli.batch`, its Dask one :mod:`autograd_cli.cli.batch.dask`).

Its options are declared here, one type each, so that the command reads as its list of
options; the shared ones (--device, --dtype, --max-memory, --timeout) are
:mod:`.shared`'s.  Its --json and --strict are its own: batch output is always JSONL, and
--strict is about CSV columns.
"""

from __future__ import annotations

from typing import Annotated

import typer

from .. import options
from .common import check_backend, command
from .shared import Wrt, shared

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
    given = shared(ctx)
    _run(
        file,
        device=given.device,
        dtype=given.dtype,
        max_memory=given.max_memory,
        timeout=given.timeout,
        engine=engine,
        scheduler=scheduler,
        workers=workers,
        partition_size=partition_size,
        wrt=wrt,
        order_text=order_text,
        at=at,
        expr=expr,
        op=op,
        input_format=input_format,
        output=output,
        chunk_size=chunk_size,
        fail_fast=fail_fast,
        progress=progress,
        strict=strict,
        method=method,
        gtol=gtol,
        tol=tol,
        max_iter=max_iter,
        trace=trace,
        corr=corr,
        mc=mc,
        seed=seed,
    )


def _run(
    file: str,
    *,
    device: str,
    dtype: str,
    max_memory,
    timeout,
    engine: str,
    scheduler,
    workers,
    partition_size,
    wrt,
    order_text,
    at,
    **given,
) -> None:
    """The ``batch`` command once its options are parsed:
    the settings checked, the run made by the local or the Dask engine, the summary told,
    the exit code raised.  ``given``: BatchOptions' own fields (expr, op, input_format,
    output, chunk_size, fail_fast, progress, strict) and the analysis settings (method,
    gtol, tol, max_iter, trace, corr, mc, seed)."""
    from ...core import backend, limits
    from ..batch import command
    from ..batch.records import BatchOptions

    check_backend(device, dtype)
    memory = options.parse_max_memory(max_memory)
    seconds = options.parse_timeout(timeout)  # batch sets its own timer: lines are kept
    run = command.run_batch
    if engine != "local" or (scheduler, workers, partition_size) != (None, None, None):
        from ..batch import dask  # loaded on that path only

        settings = dask.engine_options(
            engine, scheduler, workers, partition_size, device, dtype, memory
        )
        run = run if settings is None else dask.runner(settings)
    fields = {k: given.pop(k) for k in _FIELDS if k in given}
    given["trace"] = given.get("trace") or None
    given["at"] = None if at is None else options.named_literals(at, "--at")
    # each applies to the lines whose op takes it (a line's own key wins)
    settings = {k: given[k] for k in _SETTINGS if given.get(k) is not None}
    with backend.using(device=device, dtype=dtype), limits.using(memory):
        summary = run(
            BatchOptions(
                source=file,
                wrt=options.split_names(wrt) or None,
                order=None if order_text is None else options.parse_order(order_text, None),
                timeout=seconds,
                settings=settings or None,
                **fields,
            )
        )
    summary.exit()


#: BatchOptions' fields that ``_run`` takes as they are
_FIELDS = (
    "expr",
    "op",
    "input_format",
    "output",
    "chunk_size",
    "fail_fast",
    "progress",
    "strict",
)
#: the analysis settings ``_run`` takes, as a line's keys, in the order they are checked
_SETTINGS = ("method", "gtol", "tol", "max_iter", "trace", "at", "corr", "mc", "seed")
