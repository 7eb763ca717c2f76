"""Integer-array indexing, NumPy's (issue 13): ``x[[0, 2, 2]]``, ``A[:, [1, 0]]``,
``A[[2, 0], [1, 3]]``; repeated indices add up in the gradient, as in PyTorch."""

from __future__ import annotations

import json

import numpy as np
import pytest

from autograd_cli.core.printing import to_text
from autograd_cli.grammar import parse

A3 = [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]]


@pytest.mark.parametrize(
    "text",
    ["x[[0, 2, 2]]", "A[:, [1, 0]]", "A[[1, 0], [0, 1]]", "x[[[0, 1], [2, 2]]]", "A[[-1], 1:2]"],
)
def test_an_integer_array_index_prints_back(text):
    assert to_text(parse(text).output) == text


def test_gradient_of_repeated_indices_adds_up(cli):
    r = cli("grad", "sum(x[[0, 2, 2]]*w)", "--x", "[1,2,3]", "--w", "[1,10,100]", "--json")
    assert r.code == 0 and r.json["value"] == 331.0
    assert r.json["grad"] == {"x": [1.0, 0.0, 110.0], "w": [1.0, 3.0, 3.0]}
    assert "IndexBackward0" in cli("graph", "sum(x[[0, 1]])", "--x", "[1,2]").out


def test_it_agrees_with_numpy_and_pytorch(cli):
    torch = pytest.importorskip("torch")
    a = np.array(A3)
    t = torch.tensor(a, requires_grad=True)
    for text, index in (
        ("A[[1, 0], :, [0, 2]]", ([1, 0], slice(None), [0, 2])),  # apart: axes first
        ("A[:, [1, 1], [2, 0]]", (slice(None), [1, 1], [2, 0])),
        ("A[1, [0, 1, 1]]", (1, [0, 1, 1])),
    ):
        w = np.arange(1.0, a[index].size + 1).reshape(a[index].shape)
        r = cli(
            "grad", f"sum({text}*w)", "--A", json.dumps(A3), "--w", json.dumps(w.tolist()), "--json"
        )
        assert r.code == 0, r.out
        t.grad = None
        (t[index] * torch.tensor(w)).sum().backward()
        assert r.json["grad"]["A"] == t.grad.numpy().tolist(), text
        assert r.json["value"] == float((a[index] * w).sum())


def test_second_order_and_batch_agree_with_one_row_at_a_time(cli, tmp_path):
    expr = "sum(A[[1, 0], :, [0, 2]]**3)"  # arrays apart: the batched rules fall back
    h = cli("hessian", expr, "--A", json.dumps(A3), "--json")
    assert h.code == 0
    hess = np.array(h.json["hessian"]["A"]["A"]).reshape(12, 12)
    a = np.array(A3).reshape(-1)
    picked = np.zeros(12, dtype=bool)
    picked[np.arange(12).reshape(2, 2, 3)[[1, 0], :, [0, 2]].reshape(-1)] = True
    assert np.array_equal(hess, np.diag(np.where(picked, 6 * a, 0.0)))
    rows = [A3, (np.array(A3) * -0.5).tolist(), (np.array(A3) + 1).tolist()]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({"A": r}) + "\n" for r in rows))
    for e in (expr, "sum(A[:, [1, 1], [2, 0]]*2)"):
        out = cli("batch", str(path), "--expr", e)
        assert out.code == 0
        for line, row in zip(out.out.splitlines(), rows):
            one = cli("grad", e, "--A", json.dumps(row), "--json").json
            got = json.loads(line)
            assert got["grad"] == one["grad"] and got["value"] == one["value"]


def test_bad_indices_are_clear_errors(cli):
    r = cli("eval", "x[[0.5]]", "--x", "[1,2]", "--json")
    assert r.code == 2 and "an index in a list of indices must be an integer" in r.out
    r = cli("eval", "x[[5]]", "--x", "[1,2]", "--json")
    assert r.code == 1 and r.json["error"]["kind"] == "shape"
    r = cli("eval", "x[[0, [1]]]", "--x", "[1,2]", "--json")  # ragged: the literal says so
    assert r.code == 2 and r.json["error"]["kind"] == "bad_value"


def test_the_result_size_is_checked_before_allocating(cli):
    index = "[" + ", ".join(["0"] * 2000) + "]"
    r = cli("eval", f"sum(A[{index}][:, {index}])", "--A", "[[1]]", "--max-memory", "16M", "--json")
    assert r.code == 1 and r.json["error"]["kind"] == "limit"
    assert "getitem's result would take 30.5 MiB (4,000,000 numbers)" in r.json["error"]["message"]
