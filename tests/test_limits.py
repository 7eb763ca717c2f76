"""Memory limits checked before the work starts (core/limits.py, issue 11).

A broadcast, an outer product, a stack, a Hessian or a Jacobian whose result
would exceed the limit is refused with the estimate in the message (exit 1,
kind ``limit``) before anything that size is allocated; the limit is raised by
AUTOGRAD_CLI_MAX_MEMORY (or ``limits.using``), and below it the same inputs work.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from autograd_cli.core import limits
from autograd_cli.core.errors import BadValueError, LimitError
from autograd_cli.core.functional import hessian, jacobian
from autograd_cli.core.tensor import Tensor

GIB = 1 << 30


@pytest.mark.parametrize(
    "text, size",
    [
        ("4G", 4 * GIB),
        ("4g", 4 * GIB),
        ("4GiB", 4 * GIB),
        ("4GB", 4 * GIB),
        ("512M", 512 << 20),
        ("2.5G", 2.5 * GIB),
        (" 100 ", 100),
        ("1k", 1024),
        ("0", math.inf),
        ("none", math.inf),
        ("unlimited", math.inf),
    ],
)
def test_parse_size(text, size):
    assert limits.parse_size(text) == size


@pytest.mark.parametrize("text", ["", "G", "4X", "-1G", "1e9", "4 G B", "lots"])
def test_parse_size_refuses_nonsense(text):
    with pytest.raises(BadValueError, match="is not a size"):
        limits.parse_size(text)


def test_default_env_and_using(monkeypatch):
    monkeypatch.delenv(limits.ENV, raising=False)
    assert limits.max_bytes() == limits.DEFAULT_MAX_BYTES == 4 * GIB
    monkeypatch.setenv(limits.ENV, "1M")
    assert limits.max_bytes() == 1 << 20
    with limits.using("2M"):
        assert limits.max_bytes() == 2 << 20
        with limits.using(None):  # None: the environment's
            assert limits.max_bytes() == 1 << 20
    assert limits.max_bytes() == 1 << 20
    monkeypatch.setenv(limits.ENV, "banana")
    with pytest.raises(BadValueError, match=limits.ENV):
        limits.max_bytes()


@pytest.mark.parametrize("text", ["", "  "])
def test_an_empty_environment_setting_is_the_default(cli, monkeypatch, text):
    # ``AUTOGRAD_CLI_MAX_MEMORY= autograd-cli ...`` (set but empty) is no setting, not an error
    monkeypatch.setenv(limits.ENV, text)
    assert limits.max_bytes() == limits.DEFAULT_MAX_BYTES
    with limits.using("2M"):
        assert limits.max_bytes() == 2 << 20
    r = cli("eval", "sum(x)", "--x", "[1, 2]", "--json")
    assert r.code == 0 and r.json["value"] == 3.0, r.out


def test_check_message_gives_estimate_limit_and_the_way_out():
    with limits.using("1M"):
        limits.check(131072, 8, "x")  # exactly 1 MiB: allowed
        with pytest.raises(LimitError) as info:
            limits.check(131073, 8, "the thing")
    message = str(info.value)
    assert "the thing would take 1 MiB (131,073 numbers)" in message
    assert "limit of 1 MiB" in message and "max_memory SIZE" in message and limits.ENV in message
    # the command line names its flag (cli/status.py spells a library parameter as one)
    assert "raise it with --max-memory SIZE or AUTOGRAD_CLI_MAX_MEMORY=SIZE" in info.value.spelled(
        lambda name: "--" + name.replace("_", "-")
    )
    assert info.value.details == {"needed_bytes": 131073 * 8, "limit_bytes": 1 << 20}


# ---- ops that grow: refused before they allocate, allowed under the limit -------------------

COL = Tensor(np.ones((1000, 1)))
ROW = Tensor(np.ones((1, 1000)))


@pytest.mark.parametrize(
    "make, what",
    [
        (lambda: COL + ROW, "add's result"),
        (lambda: COL * ROW, "mul's result"),
        (lambda: COL > ROW, "gt's result"),
        (lambda: COL @ ROW, "matmul's result"),
    ],
)
def test_growing_ops_are_checked(make, what):
    with limits.using("4M"):  # a 1000 x 1000 result is 7.6 MiB
        with pytest.raises(LimitError, match=what + r" would take 7.63 MiB \(1,000,000 numbers\)"):
            make()
    with limits.using("8M"):
        assert make().shape == (1000, 1000)


def test_same_shape_operands_are_not_estimated():
    # Operands of one shape give a result no larger than they are: no estimate needed,
    # even under a limit they exceed themselves (their memory is already taken).
    big = Tensor(np.ones(200_000))
    with limits.using("1k"):
        assert (big + big).shape == (200_000,)
        assert (big * 2.0).shape == (200_000,)


def test_the_cli_refuses_an_outer_broadcast(cli, monkeypatch):
    monkeypatch.setenv(limits.ENV, "1M")
    values = '{"x": [' + ",".join(["1"] * 1000) + "]}"
    r = cli("eval", "sum(reshape(x, [1000, 1]) + x)", "--vars", values, "--json")
    assert r.code == 1, r.out
    err = r.json["error"]
    assert err["kind"] == "limit" and "add's result would take 7.63 MiB" in err["message"]
    assert err["needed_bytes"] == 8_000_000 and err["limit_bytes"] == 1 << 20
    monkeypatch.setenv(limits.ENV, "16M")
    r = cli("eval", "sum(reshape(x, [1000, 1]) + x)", "--vars", values, "--json")
    assert r.code == 0 and r.json["value"] == 2_000_000.0


# ---- Hessians and Jacobians: the blocks' total, before any sweep ----------------------------


def test_hessian_and_jacobian_estimate_their_blocks(cli, monkeypatch):
    monkeypatch.setenv(limits.ENV, "1M")
    values = '{"x": [' + ",".join(["0.5"] * 400) + "]}"  # 400 x 400 x 8 = 1.22 MiB
    r = cli("hessian", "sum(x**3)", "--vars", values, "--json")
    assert r.code == 1 and r.json["error"]["kind"] == "limit"
    assert "the Hessian would take 1.22 MiB (160,000 numbers)" in r.json["error"]["message"]
    r = cli("jacobian", "x**2", "--vars", values, "--json")
    assert r.code == 1 and "the Jacobian would take 1.22 MiB" in r.json["error"]["message"]
    monkeypatch.setenv(limits.ENV, "2M")
    r = cli("hessian", "sum(x**3)", "--vars", values, "--json")
    assert r.code == 0 and r.json["hessian"]["x"]["x"][3][3] == 3.0


def test_library_transforms_are_checked_too():
    x = Tensor(np.ones(300))
    with limits.using("256k"):  # 300 x 300 x 8 = 703 KiB
        with pytest.raises(LimitError, match="the Hessian"):
            hessian(lambda t: (t**3).sum(), x)
        with pytest.raises(LimitError, match="the Jacobian"):
            jacobian(lambda t: t * 2.0, x)
    with limits.using("1M"):
        assert jacobian(lambda t: t * 2.0, x).shape == (300, 300)


# ---- diff: a size budget on the derivative, and the size of a large result -------------------


def test_diff_refuses_a_derivative_past_its_size_budget():
    from autograd_cli.core.symbolic import diff
    from autograd_cli.grammar import parse

    program = parse("sin(exp(x)*cos(x**2))/(1+x**2)")
    with pytest.raises(LimitError) as info:
        diff(program, order=4, max_nodes=1000)  # 374 nodes at order 3: 1,197 predicted, kept on
    message = str(info.value)
    assert "grew to 1,044 nodes at order 4 of 4, past the size budget of 1,000" in message
    assert "grad order 4" in message and "raise max_nodes" in message  # the library's names
    spelled = info.value.spelled(lambda name: "--" + name.replace("_", "-"))
    assert "grad --order 4" in spelled and "--max-nodes" in spelled  # the command line's
    r = diff(program, order=4, max_nodes=2000)
    assert r.notes == []  # 3,051 characters: not large
    r = diff(program, order=5, max_nodes=None)
    assert any(n.startswith("d/dx: a large result: ") and "nodes" in n for n in r.notes)


def test_a_growth_prediction_past_floats_is_refused_not_an_overflow():
    """A float power past 1e308 raises OverflowError instead of giving inf: tan's repeated
    derivatives (52 nodes at order 3, 2.9 times an order) asked for at order 1000 through the
    library (the CLI stops at 20) ended in a traceback.  2.888**997 is about 10**459: the
    prediction is inf, said as "over 1e+308" nodes, "far beyond any memory"."""
    growth, predicted = limits.growth_past([18, 52, 150], 1000, 1e9)
    assert growth == pytest.approx(150 / 52) and predicted == math.inf
    assert limits.about(math.inf) == "over 1e+308"
    with pytest.raises(LimitError) as info:
        limits.check_growth([18, 52, 150], 1000)
    text = str(info.value)
    assert "on course for over 1e+308 nodes (far beyond any memory) at order 1000" in text
    assert info.value.details["predicted_nodes"] == 2**63 - 1

    from autograd_cli.core.taylor import taylor
    from autograd_cli.grammar import parse

    with pytest.raises(LimitError, match="over 1e\\+308 nodes"):
        taylor(parse("tan(x)"), {"x": math.nan}, order=1000)
