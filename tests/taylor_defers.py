"""What the mutant tests of Taylor mode share: where Taylor mode refuses a point (the engine's
derivative graphs would overflow, or take a limit), ``taylor`` and the CLI give the engine's
repeated differentiation bit for bit; and the Bessel functions' power series, an oracle of
their own for Taylor mode's Bessel rule."""

from __future__ import annotations

import math

import pytest

from autograd_cli.core.taylor import _repeated, taylor
from autograd_cli.core.taylor_mode import NoTaylorMode, taylor_coefficients
from autograd_cli.grammar import parse


def bessel(v: int, x: float, sign: int) -> float:
    """J_v(x) (``sign`` -1) or I_v(x) (``sign`` +1) from the power series
    sum_k sign^k (x/2)^(2k+v) / (k! (k+v)!)."""
    return math.fsum(
        sign**k * (x / 2) ** (2 * k + v) / (math.factorial(k) * math.factorial(k + v))
        for k in range(40)
    )


def bits(cs) -> list[str]:
    """Coefficients bit for bit (repr tells -0.0 from 0.0, and nan and inf apart)."""
    return [repr(float(c)) for c in cs]


def defers_to_engine(text: str, x0: float, order: int, why: str, cli=None) -> list[str]:
    """Taylor mode refuses ``text`` at x = ``x0`` saying ``why``, and ``taylor`` (and, given
    the ``cli`` fixture, ``autograd-cli taylor --json``) gives the engine's coefficients, bit
    for bit; returns them (:func:`bits`)."""
    point = {"x": x0}
    with pytest.raises(NoTaylorMode, match=why):
        taylor_coefficients(parse(text), point, "x", order)
    engine = bits(_repeated(parse(text), point, "x", order))
    assert bits(taylor(parse(text), point, order=order).coefficients) == engine
    if cli is not None:
        r = cli("taylor", text, "--x", repr(x0), "--order", str(order), "--json")
        assert r.code == 0, r.out
        assert bits(r.json["coefficients"]) == engine
    return engine
