"""Work that grows with the input no faster than the input (issue 23's hostile inputs).

Nothing here reads a clock: work is counted (graphs built, nodes visited, parser steps), or,
where only time measures it, compared between an input and one four times its size.
"""

from __future__ import annotations

import pytest

from autograd_cli.core import symbolic
from autograd_cli.core.errors import LimitError
from autograd_cli.grammar import parse

# ---- diff: a derivative on course past its size budget is refused before it is built ------


def _diff_sizes(monkeypatch, text: str, order: int, **options):
    """diff's result (or its LimitError) and the size of each order it built."""
    sizes: list[int] = []
    check = symbolic._check_size

    def measured(e, name, k, order, max_nodes):
        n = check(e, name, k, order, max_nodes)
        sizes.append(n)
        return n

    monkeypatch.setattr(symbolic, "_check_size", measured)
    try:
        return symbolic.diff(parse(text), "x", order=order, **options), sizes
    except LimitError as exc:
        return exc, sizes


def test_diff_refuses_a_growing_derivative_orders_before_it_passes_the_budget(monkeypatch):
    # sin nested 8 deep, --order 6: 23, 89, 987, 6,606, 40,179, 109,525 nodes; it was refused
    # only once the 109,525 were built (12 s); now at order 4, from its growth.
    exc, sizes = _diff_sizes(monkeypatch, "sin(" * 8 + "x" + ")" * 8, 6)
    assert isinstance(exc, LimitError) and exc.kind == "limit"
    assert sizes == [23, 89, 987, 6_606]
    message = str(exc)
    assert "6,606 nodes at order 4 of 6" in message and "budget of 100,000" in message
    assert "grad --order 6" in message and "--max-nodes" in message
    assert exc.details["predicted_nodes"] > 2 * symbolic.MAX_NODES


@pytest.mark.parametrize(
    ("text", "order"),
    [
        ("tan(x)", 10),
        ("exp(sin(x))", 10),
        ("x**20", 20),
        ("sin(x)*exp(x)", 15),
        ("sin(sin(sin(x)))", 8),
        ("sin(exp(x)*cos(x**2))/(1+x**2)", 4),
    ],
)
def test_diff_prediction_refuses_nothing_that_fits(monkeypatch, text, order):
    result, sizes = _diff_sizes(monkeypatch, text, order)
    assert not isinstance(result, LimitError), result
    assert len(sizes) == order


def test_diff_prediction_follows_max_nodes(monkeypatch):
    # the budget raised (or none): the same derivative is taken to the end
    result, sizes = _diff_sizes(monkeypatch, "sin(sin(sin(sin(x))))", 5, max_nodes=None)
    assert not isinstance(result, LimitError)
    exc, sizes = _diff_sizes(monkeypatch, "sin(sin(sin(sin(x))))", 5, max_nodes=100)
    assert isinstance(exc, LimitError) and len(sizes) < 5
