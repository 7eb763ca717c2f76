"""No input gives a traceback: random text and random arguments end in a message and 0/1/2."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ALPHABET = "xyab0123456789.+-*/@^()[],;=<>!_ \neTsinlogqrtmaxw#:"
COMMANDS = ["eval", "grad", "hessian", "jacobian", "diff", "graph", "explain", "check"]


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    command=st.sampled_from(COMMANDS),
    text=st.text(alphabet=ALPHABET, max_size=30),
    value=st.sampled_from(
        ["1", "-2.5", "[1, 2]", "[[1, 2], [3, 4]]", "0", "nan", "[1, [2]]", "abc", "inf"]
    ),
)
def test_random_input_never_crashes(cli, command, text, value):
    r = cli(command, text, "--x", value, "--y", "2", "--json")
    assert r.code in (0, 1, 2), (command, text, value, r.out, r.err)
    assert "Traceback" not in r.err
    doc = json.loads(r.out)  # exactly one JSON document, success or error
    if r.code != 0 and command != "check":
        assert doc["error"]["kind"] != "internal", (command, text, value, doc)
