"""Limits checked before the work starts: how much memory one array or one result may take.

An op whose result can be larger than its inputs (a broadcast, an outer product,
a stack) declares how to compute the result's size from the input shapes
(``Op.size``); :func:`~.tensor.apply` asks :func:`check` before running it.
The commands whose results grow with the square of the input (``hessian``,
``jacobian``) ask before they start.  Past the limit, a :class:`LimitError`
(exit 1, kind ``limit``) gives the estimate, the limit and how to raise it,
instead of the kernel's out-of-memory killer taking the process minutes later.

The limit is 4 GiB per array or result by default; ``AUTOGRAD_CLI_MAX_MEMORY``
(``512M``, ``16G``, ``2.5GiB``, plain bytes, ``0`` or ``none`` for no limit)
changes it, and :func:`using` sets it for a block (the command line's ``--max-memory``).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import re
from collections.abc import Iterator

from .errors import BadValueError, LimitError

__all__ = [
    "DEFAULT_MAX_BYTES",
    "ENV",
    "NODE_BYTES",
    "about",
    "check",
    "check_growth",
    "format_bytes",
    "growth_past",
    "max_bytes",
    "parse_size",
    "using",
]

#: the memory one node of a derivative's graph takes (its saved inputs and output, its
#: edges): repeated differentiation of tan(sum([x, 0])) to order 14 holds 1.6 million
#: nodes in 0.85 GB
NODE_BYTES = 512

ENV = "AUTOGRAD_CLI_MAX_MEMORY"
DEFAULT_MAX_BYTES = 4 << 30
UNLIMITED = math.inf

_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([kmgt]?)(?:i?b)?\s*", re.IGNORECASE)
_setting: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "autograd_cli_max_bytes", default=None
)


def parse_size(text: str, source: str = "max_memory") -> float:
    """``"4G"`` -> 4 GiB in bytes (binary units; ``B``/``iB`` suffixes optional).

    ``0``, ``none``, ``off`` and ``unlimited`` mean no limit (``math.inf``).
    """
    if text.strip().lower() in ("0", "none", "off", "unlimited", "inf"):
        return UNLIMITED
    m = _SIZE.fullmatch(text)
    if m is None:
        # a parameter (max_memory) is named as the caller spells it; a variable's name as it is
        name = "{" + source + "}" if source.isidentifier() and source.islower() else "{source}"
        raise BadValueError.naming(
            name + ": {text!r} is not a size (write it like 512M, 4G or 2.5GiB; 0 for none)",
            {"source": source, "text": text},
            value=text,
        )
    return float(m.group(1)) * _UNITS[m.group(2).lower()]


def max_bytes() -> float:
    """The limit in force: :func:`using`'s, else the environment's, else the default."""
    value = _setting.get()
    if value is not None:
        return value
    env = os.environ.get(ENV)
    if env is not None and env.strip():
        return parse_size(env, ENV)
    return DEFAULT_MAX_BYTES


@contextlib.contextmanager
def using(limit: float | str | None) -> Iterator[None]:
    """Set the limit for a block (None: keep the environment's or the default)."""
    if isinstance(limit, str):
        limit = parse_size(limit)
    token = _setting.set(limit)
    try:
        yield
    finally:
        _setting.reset(token)


def format_bytes(n: float) -> str:
    """``5368709120`` -> ``5 GiB``; ``1536`` -> ``1.5 KiB``."""
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return "1 byte" if int(n) == 1 else f"{int(n)} bytes"


def check(elements: int, itemsize: int, what: str) -> None:
    """Refuse (LimitError) when ``elements`` of ``itemsize`` bytes exceed the limit."""
    need = elements * itemsize
    limit = max_bytes()
    if need <= limit:
        return
    raise LimitError.naming(
        "{what} would take {need} ({elements:,} numbers), over the memory limit of {limit}; "
        "raise it with {max_memory} SIZE or {env}=SIZE (for example 16G), or make the arrays "
        "smaller",
        {
            "what": what,
            "need": format_bytes(need),
            "elements": elements,
            "limit": format_bytes(limit),
            "env": ENV,
        },
        needed_bytes=need,
        limit_bytes=limit,
    )


def about(n: float) -> str:
    """``296,000`` for 295,812.4: three significant digits, and from a trillion on (after
    rounding: 999,999,999,999 is one) a power of ten, ``1e+12``, ``1e+40``; past floats,
    ``over 1e+308``."""
    if n == math.inf:  # a prediction that overflowed (growth_past)
        return "over 1e+308"
    rounded = float(f"{n:.3g}")
    if rounded >= 1e12:
        return f"{n:.0e}"
    return f"{rounded:,.0f}"


def growth_past(sizes: list, order: int, budget: float) -> tuple[float, float] | None:
    """(growth, predicted size) where ``sizes`` (of orders 1..k, each a derivative's size)
    keep growing past ``budget`` by ``order``, else None.  The growth is the smaller of the
    last two order-to-order ratios (ratios shrink as a derivative grows: this errs towards
    going on); fewer than three sizes, or the order reached, predict nothing."""
    k = len(sizes)
    if k < 3 or k >= order or min(sizes[-3:]) <= 0:
        return None
    growth = min(sizes[-1] / sizes[-2], sizes[-2] / sizes[-3])
    if growth <= 1:
        return None
    try:
        predicted = sizes[-1] * growth ** (order - k)
    except OverflowError:  # a float power past 1e308 raises (order 1000 of tan: 2.9**997)
        predicted = math.inf
    return None if predicted <= budget else (growth, predicted)


def check_growth(
    sizes: list, order: int, why: str | None = None, node_bytes: int = NODE_BYTES
) -> None:
    """Refuse (LimitError) repeated differentiation whose graphs, of ``sizes`` nodes at
    orders 1..k, are on course for more memory than the limit (:func:`max_bytes`) by
    ``order``, at ``node_bytes`` a node (:data:`NODE_BYTES` and the arrays it holds):
    ``tan`` away from Taylor mode grows about 2.9 times an order, and order 20 would take
    hours and a terabyte.  ``why``: why Taylor mode, one pass for any order, could not be
    used."""
    limit = max_bytes()
    past = growth_past(sizes, order, limit / node_bytes)
    if past is None:
        return
    growth, predicted = past
    because = f" (Taylor mode, one pass for any order, cannot be used here: {why})" if why else ""
    raise LimitError.naming(
        "repeated differentiation has {nodes:,} graph nodes at order {k} of {n}, growing "
        "about {growth:.1f} times an order: on course for {predicted} nodes ({need}) at order "
        "{n}, over the memory limit of {limit}{because}; ask for a lower {order}, or raise "
        "the limit with {max_memory} SIZE or {env}=SIZE",
        {
            "nodes": sizes[-1],
            "k": len(sizes),
            "n": order,
            "growth": growth,
            "predicted": about(predicted),
            "need": (
                format_bytes(predicted * node_bytes)
                if math.isfinite(predicted * node_bytes)
                else "far beyond any memory"
            ),
            "limit": format_bytes(limit),
            "because": because,
            "env": ENV,
        },
        nodes=sizes[-1],
        predicted_nodes=int(min(predicted, 2**63 - 1)),
        limit_bytes=limit,
    )
