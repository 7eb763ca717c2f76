"""Behaviours of the JSON encoder (cli/jsonout.py) pinned down for mutants of bench/mutate.py.

Each test names the behaviour it pins; its comment names the mutant (``file:line: original ->
mutant``, line numbers as they were when it was found) that it kills.
"""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest

from autograd_cli.cli import jsonout
from autograd_cli.cli.jsonout import dumps, int_texts, number_texts, plain


class _Label(str):
    """Text that also has an ``item()`` (as a str subclass of some library might): it is
    still text, written as the string it is, never replaced by what ``item()`` returns."""

    def item(self):
        return 1.5


def test_text_with_an_item_method_stays_text():
    # kills cli/jsonout.py:26: if isinstance(obj, bool) or obj is None or isinstance(obj, str):
    #   -> ... or obj is None and isinstance(obj, str):   (the str would reach item())
    label = _Label("x")
    got = plain(label)
    assert got == "x" and isinstance(got, str)
    assert plain({"name": label, "values": [label]}) == {"name": "x", "values": ["x"]}
    assert json.loads(dumps({"name": label})) == {"name": "x"}


# ---------------------------------------------------------------------------
# orjson's self-check and the fast path (seed 0 survivors, 2026-12-04)
# ---------------------------------------------------------------------------

# The numbers an orjson release must write exactly as repr before batch output trusts it:
# both zeros, the low end of repr's plain-decimal range (1e-4) and a number just above it,
# a short fraction, one, a negative, a 16-digit fraction, a six-digit integer part, 1e15 and
# the largest double below 1e16 (the high end of the range)
PROBE_NUMBERS = [
    0.0,
    -0.0,
    1e-4,
    0.00012,
    0.1,
    1.0,
    -2.5,
    1 / 3,
    123456.789,
    1e15,
    9999999999999998.0,
]


class _FakeOrjson:
    """orjson's interface (dumps, OPT_SERIALIZE_NUMPY): floats as repr, ints as str, except
    the float whose repr is ``wrong``, written in exponent form; with ``short_exponents``,
    numbers from 1e16 on as ``1e16`` (orjson's way for small ones: ``1e-7`` for ``1e-07``);
    with ``spaced_ints``, ints other than the probe's with a leading blank (still JSON, and
    telling where a text came from).  It counts its calls."""

    OPT_SERIALIZE_NUMPY = 1

    def __init__(self, wrong=None, ints_wrong=False, short_exponents=False, spaced_ints=False):
        self.wrong, self.ints_wrong = wrong, ints_wrong
        self.short_exponents, self.spaced_ints = short_exponents, spaced_ints
        self.calls = 0

    def _text(self, x, probe: bool) -> str:
        if isinstance(x, int):
            if self.ints_wrong:
                return f"{x}.0"
            return f" {x}" if self.spaced_ints and not probe else str(x)
        if repr(x) == self.wrong:
            return f"{x:.17e}"
        if self.short_exponents and abs(x) >= 1e16:
            return repr(x).replace("e+", "e")
        return repr(x)

    def dumps(self, obj, option=0) -> bytes:
        self.calls += 1
        values = obj.tolist() if hasattr(obj, "tolist") else list(obj)
        probe = values == [1, -2, 2**62]
        return ("[" + ",".join(self._text(x, probe) for x in values) + "]").encode("ascii")


def _install(monkeypatch, fake) -> None:
    monkeypatch.setitem(sys.modules, "orjson", fake)
    monkeypatch.setattr(jsonout, "_orjson", None)  # look again


@pytest.mark.parametrize("number", PROBE_NUMBERS, ids=repr)
def test_an_orjson_that_writes_one_probe_number_otherwise_is_not_used(monkeypatch, number):
    # kills every cli/jsonout.py:78 mutant of _PROBES (-0.0 -> 0.0, 1e-4 -> 1.0001,
    #   0.00012 -> 1.00012, -2.5 -> 2.5 or -3.5, 1 / 3 -> 0 / 3): each drops one of these
    #   numbers from the probe, so an orjson that writes that number otherwise was trusted
    _install(monkeypatch, _FakeOrjson(wrong=repr(number)))
    assert jsonout._fast_encoder() is False
    column = np.array([number, 0.5])
    assert number_texts(column) == [repr(number), "0.5"] == [dumps(x) for x in column.tolist()]


def test_an_orjson_that_writes_ints_otherwise_is_not_used(monkeypatch):
    _install(monkeypatch, _FakeOrjson(ints_wrong=True))
    assert jsonout._fast_encoder() is False
    assert int_texts([1, -2, 2**62]) == ["1", "-2", "4611686018427387904"]


def test_an_orjson_that_writes_as_repr_does_is_used_for_floats_and_ints(monkeypatch):
    # kills cli/jsonout.py:92: if orjson.dumps([1, -2, 2**62]) == b"[1,-2,4611686018427387904]":
    #   -> dumps([0, -2, 2**62]) / dumps([1, -3, 2**62]) / != ...   (a faithful orjson was
    #   refused: batch output lost its fast path, the [fast] extra's purpose)
    fake = _FakeOrjson()
    _install(monkeypatch, fake)
    assert jsonout._fast_encoder() is fake
    before = fake.calls
    assert int_texts([3, -7, 2**62]) == ["3", "-7", "4611686018427387904"]
    assert fake.calls == before + 1


def test_number_texts_uses_orjson_when_fast_and_never_otherwise(monkeypatch):
    # kills cli/jsonout.py:112: encoder = _fast_encoder() if fast else False ->
    #   _fast_encoder() if not (fast) else False   (fast=True wrote repr of each number,
    #   fast=False asked orjson)
    fake = _FakeOrjson()
    _install(monkeypatch, fake)
    assert jsonout._fast_encoder() is fake
    column = np.array([0.5, -1.25, 1e-7, math.nan])
    expected = [dumps(x) for x in column.tolist()]
    before = fake.calls
    assert number_texts(column, fast=False) == expected
    assert fake.calls == before
    assert number_texts(column, fast=True) == expected
    assert fake.calls == before + 1


def test_the_installed_orjson_is_used():
    orjson = pytest.importorskip("orjson")
    # the same kill with the real module (the [test] extra installs it): it passes the probes
    assert jsonout._fast_encoder() is orjson


def test_int_texts_are_orjsons_when_it_is_trusted(monkeypatch):
    # kills cli/jsonout.py:139: if texts is not None and len(texts) == len(values) and
    #   type(values[0]) is int: -> ... len(texts) != len(values) ... / ... is not int:
    #   (orjson's texts were thrown away and each int written again by str)
    fake = _FakeOrjson(spaced_ints=True)
    _install(monkeypatch, fake)
    assert jsonout._fast_encoder() is fake
    assert int_texts([3, -7, 12]) == [" 3", " -7", " 12"]  # one orjson call's texts
    assert int_texts([3.5, 1]) == ["3.5", "1"]  # not ints: str of each


def test_numbers_from_1e16_on_are_never_orjsons(monkeypatch):
    # kills cli/jsonout.py:122: odd = ~((size >= _PLAIN_LOW) & (size < _PLAIN_HIGH)) & ... ->
    #   ... (size <= _PLAIN_HIGH) ...   (1e16 is outside repr's plain decimals, "1e+16": an
    #   orjson that writes it "1e16" passes the probes, so its text must not be used there)
    _install(monkeypatch, _FakeOrjson(short_exponents=True))
    assert jsonout._fast_encoder() is not False
    column = np.array([1e16, -1e16, 9999999999999998.0, 2.5e17])
    assert number_texts(column) == ["1e+16", "-1e+16", "9999999999999998.0", "2.5e+17"]
    assert number_texts(column) == [dumps(x) for x in column.tolist()]
