"""explain over arrays (reductions, matmul, indexing, broadcasting: the chain rule as
vector-Jacobian products, with grad's numbers), --precision, and explain's time: linear in
the program's size however deep it nests."""

from __future__ import annotations

import gc
import json
import time

import pytest

from autograd_cli.core.explain import explain
from autograd_cli.grammar import parse

# ---- linear time -------------------------------------------------------------------------


def _seconds(n: int) -> float:
    program = parse("sin(" * n + "x" + ")" * n)
    best = float("inf")
    for _ in range(3):
        gc.collect()
        start = time.process_time()  # this process's CPU time: other processes' load is not in it
        ex = explain(program, {"x": 0.5})
        best = min(best, time.process_time() - start)
    assert [p["path"][-1] for p in ex.paths["x"]] == ["x"] and len(
        ex.paths["x"][0]["path"]
    ) == n + 1
    return best


def test_explain_of_a_deep_chain_takes_time_linear_in_its_depth():
    # sin(sin(...(x)...)): one path n + 1 nodes long.  Copying the path at every step of the
    # walk along it made this quadratic (8x the depth took over 30x the time); now 8x the
    # depth takes about 8x the time.  A ratio of CPU times (best of 3), not a wall-clock
    # figure: noise is a factor, not a power, and quadratic would be 64x, so the bound is loose.
    small, large = _seconds(4_000), _seconds(32_000)
    assert large / small < 24, (small, large)


# ---- arrays: the steps, their rules, and grad's numbers -----------------------------------

CASES = [
    # (expression, values, what the text says: rules in words and the vjp formulas)
    (
        "mean(x**2)",
        ("--x", "[1, 2]"),
        [
            "mean reduces over every element",
            "grad_a = broadcast_to(grad_y, [2])/2 = [0.5, 0.5]",
            "grad_x = grad_a*(2*x) = [1, 2]  (da/dx = 2*x)",
        ],
    ),
    (
        "sum((W @ x + b)**2)",
        ("--W", "[[1, 2], [3, 4]]", "--x", "[1, 1]", "--b", "[0.5, -1]"),
        [
            "  a = W @ x = [3, 7]\n    matmul is linear in each argument: grad_a is multiplied back",
            "grad_W = grad_a ⊗ x = [[7, 7], [12, 12]]",
            "grad_x = Wᵀ @ grad_a = [43, 62]",
            "grad_b = grad_c = [7, 12]  (dc/db = 1)",
            "sum reduces over every element",
        ],
    ),
    (
        "sum(x + s)",
        ("--x", "[1, 2, 3]", "--s", "2"),
        [
            "grad_x = grad_a = [1, 1, 1]",
            "grad_s = sum(grad_a) = 3  (da/ds = 1, summed over the axes broadcasting added to s)",
        ],
    ),
    (
        "x[0]*x[1]",
        ("--x", "[3, 5]"),
        [
            "  a = x[0] = 3\n    indexing moves or combines elements",
            "grad_x += scatter(grad_a, at [0], into zeros [2]) = [5, 0]",
            "grad_x += scatter(grad_b, at [1], into zeros [2]) = [0, 3]",
            "grad_x = [5, 0] + [0, 3] = [5, 3]  (the sum of what its users a, b pass back)",
        ],
    ),
    (
        "sum(A @ B)",
        ("--A", "[[1, 2], [3, 4]]", "--B", "[[1, 0], [2, 1]]"),
        ["grad_A = grad_a @ Bᵀ = [[1, 3], [1, 3]]", "grad_B = Aᵀ @ grad_a = [[4, 4], [6, 6]]"],
    ),
    (
        "sum(sum(A, axis=1)**2)",
        ("--A", "[[1, 2], [3, 4]]"),
        [
            "  a = sum(A, axis=1) = [3, 7]\n    sum reduces over axis 1",
            # grad_a as a column, as NumPy reads it (broadcast_to(grad_a, ...) would be rows)
            "grad_A = broadcast_to(reshape(grad_a, [2, 1]), [2, 2]) = [[6, 6], [14, 14]]",
        ],
    ),
    (
        "sum(mean(A, axis=0)**2)",
        ("--A", "[[1, 2], [3, 4]]"),
        ["grad_A = broadcast_to(grad_a, [2, 2])/2 = [[2, 3], [2, 3]]"],
    ),
    (
        # a vector on matmul's left, and a vector times a vector
        "sum(x @ A) + x @ x",
        ("--A", "[[1, 2], [3, 4]]", "--x", "[1, -1]"),
        [
            "grad_A = x ⊗ grad_a = [[1, 1], [-1, -1]]",
            "grad_x += grad_a @ Aᵀ = [3, 7]",
            "grad_x += grad_c*x + x*grad_c = [2, -2]",
            "grad_x = [2, -2] + [3, 7] = [5, 5]  (the sum of what its users c, a pass back)",
        ],
    ),
    (
        # an array literal in an elementwise op, and a shape op
        "sum(flip(x)*[1, 2, 3])",
        ("--x", "[1, 2, 3]"),
        ["grad_a = grad_b*[1, 2, 3] = [1, 2, 3]", "grad_x = flip(grad_a) = [3, 2, 1]"],
    ),
    (
        # an op whose rule reads its operands' numbers: the generic line, still grad's numbers
        "prod(x)",
        ("--x", "[1, 2, 3]"),
        ["grad_x = vjp of prod applied to grad_y = [6, 3, 2]"],
    ),
]


def _last_share(doc: dict, name: str):
    """What the walk's last step about variable ``name`` says its gradient is."""
    about = [s for s in doc["steps"] if s["kind"] in ("local", "accumulate") and s["wrt"] == name]
    return about[-1]["value"]


@pytest.mark.parametrize("source, args, says", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_explain_over_arrays_gives_grads_numbers_and_says_each_rule(cli, source, args, says, dtype):
    grad = cli("grad", source, *args, "--dtype", dtype, "--json")
    assert grad.code == 0, grad.err
    doc = cli("explain", source, *args, "--dtype", dtype, "--json")
    assert doc.code == 0, doc.err
    doc = doc.json
    assert doc["gradient"] == grad.json["grad"] and doc["value"] == grad.json["value"]
    # the walk's own last word on each variable is that gradient too
    for name, g in grad.json["grad"].items():
        assert _last_share(doc, name) == g
    text = cli("explain", source, *args, "--dtype", dtype)
    assert text.code == 0, text.err
    for line in says:
        assert line in text.out, (line, text.out)
    gradient = text.out.split("Gradient:\n")[1]
    for name in grad.json["grad"]:
        assert f"  dy/d{name} = " in gradient


@pytest.mark.parametrize(
    "source, partial",
    [("sum(x)", False), ("mean(x)", True), ("max(x)", True), ("prod(x)", True)],
)
def test_a_reduction_says_whether_it_only_copies_the_gradient_back(source, partial):
    # sum's vjp copies g back; mean's divides it, max's and prod's weigh each element (prod's
    # formula is not traced: the words still say so)
    (rule,) = [s["rule"] for s in explain(parse(source), {"x": [1.0, 3.0, 2.0]}).steps[1:]]
    assert "reduces over every element" in rule
    assert ("multiplied by each element's partial dy/dx" in rule) == partial


def test_array_json_keeps_the_keys_and_adds_shapes_and_rules(cli):
    doc = cli("explain", "sum((W @ x + b)**2)", *CASES[1][1], "--json").json
    assert set(doc) == {
        "expr",
        "output",
        "wrt",
        "point",
        "value",
        "steps",
        "gradient",
        "paths",
        "shapes",
    }
    assert doc["point"] == {"W": [[1.0, 2.0], [3.0, 4.0]], "x": [1.0, 1.0], "b": [0.5, -1.0]}
    assert doc["shapes"] == {"W": [2, 2], "x": [2], "b": [2], "y": []}
    define = doc["steps"][0]
    assert define == {
        "kind": "define",
        "name": "a",
        "expr": "W @ x",
        "value": [3.0, 7.0],
        "auto": True,
        "shape": [2],
    }
    matmul = [s for s in doc["steps"] if s["kind"] == "local" and s["of"] == "a"]
    assert [(s["wrt"], s["op"], s["vjp"], s["value"]) for s in matmul] == [
        ("W", "matmul", "grad_W = grad_a ⊗ x", [[7.0, 7.0], [12.0, 12.0]]),
        ("x", "matmul", "grad_x = Wᵀ @ grad_a", [43.0, 62.0]),
    ]
    square = next(s for s in doc["steps"] if s["kind"] == "local" and s["of"] == "f")
    assert square["expr"] == "2*c" and square["local"] == "df/dc = 2*c"


def test_large_values_are_summarised_in_json_and_text_but_the_gradient_is_whole(cli):
    x = json.dumps([i / 7 for i in range(2000)])
    grad = cli("grad", "sum(x**2)", "--x", x, "--json").json
    doc = cli("explain", "sum(x**2)", "--x", x, "--json").json
    assert doc["gradient"] == grad["grad"] and len(doc["gradient"]["x"]) == 2000
    square = doc["steps"][0]
    assert square["value"]["shape"] == [2000] and square["value"]["max"] == (1999 / 7) ** 2
    text = cli("explain", "sum(x**2)", "--x", x).out
    assert "a = x**2 = [0, 0.0204082, ..., 81469.5, 81551]  (shape [2000])" in text
    assert max(len(line) for line in text.splitlines()) < 200


def test_a_non_scalar_output_is_refused_in_words_that_name_explain(cli):
    r = cli("explain", "W @ x", "--W", "[[1, 2], [3, 4]]", "--x", "[1, 1]", "--json")
    assert r.code == 1
    error = r.json["error"]
    assert error["kind"] == "non_scalar_output" and error["shape"] == [2]
    assert 'explain "sum(...)"' in error["message"]
    assert "diff" not in error["message"] and "grad" not in error["message"]


def test_a_program_without_variables_takes_the_array_walk_when_it_has_arrays(cli):
    r = cli("explain", "sum([1, 2])")
    assert r.code == 0 and r.out == "sum([1, 2])\nForward:\n  y = sum([1, 2]) = 3\n"
    doc = cli("explain", "[2]", "--json").json
    assert doc["value"] == 2.0 and doc["steps"] == [] and doc["shapes"] == {"y": [1]}


def test_the_library_explains_arrays_too():
    import autograd_cli

    ex = autograd_cli.explain("mean(x**2)", {"x": [1.0, 2.0]})
    assert ex.gradient["x"].tolist() == [1.0, 2.0] and ex.arrays and ex.shapes["x"] == [2]
    assert "grad_x = grad_a*(2*x) = [1, 2]" in ex.text


def test_a_deep_array_program_is_walked_iteratively():
    # far past the recursion limit: every walk over the program is a loop
    n = 10_000
    ex = explain(parse("sum(" + "sin(" * n + "x" + ")" * n + ")"), {"x": [0.5, 1.0]})
    assert ex.elided["local"] == n + 1 - 100 and ex.gradient["x"].shape == (2,)


# ---- --precision ---------------------------------------------------------------------------


def test_explain_takes_precision_and_plain_as_the_other_commands_do(cli):
    default = cli("explain", "x**2/3", "--x", "3")
    assert "dy/dx = dy/da*da/dx = 0.333333*6 = 2" in default.out  # explain's own digits
    two = cli("explain", "x**2/3", "--x", "3", "--precision", "2")
    assert two.code == 0, two.err
    assert "dy/dx = dy/da*da/dx = 0.33*6.0 = 2.0" in two.out
    assert cli("--precision", "2", "explain", "x**2/3", "--x", "3").out == two.out
    full = cli("explain", "x**2/3", "--x", "3", "--plain")
    assert "= 0.3333333333333333*6.0 = 2.0" in full.out
    arrays = cli("explain", "mean(x/3)", "--x", "[1, 2]", "--precision", "3")
    assert "a = x/3 = [0.333, 0.667]" in arrays.out
    bad = cli("explain", "x**2", "--x", "3", "--precision", "many", "--json")
    assert bad.code == 2 and "--precision takes 0 to 17 digits" in bad.json["error"]["message"]
    # --json keeps every digit whatever --precision says
    assert cli("explain", "x/3", "--x", "1", "--precision", "1", "--json").json["value"] == 1 / 3


# ---- on the device ------------------------------------------------------------------------

from test_strict_backend import device  # noqa: E402, F401 - the strict stand-in for CuPy


@pytest.mark.parametrize("source, args, says", CASES[:4], ids=[c[0] for c in CASES[:4]])
def test_explain_over_arrays_on_the_device_reads_only_through_the_seam(
    device,  # noqa: F811
    cli,
    source,
    args,
    says,
):
    cpu = [cli("explain", source, *args, *more, "--device", "cpu") for more in ((), ("--json",))]
    gpu = [cli("explain", source, *args, *more, "--device", "gpu") for more in ((), ("--json",))]
    device.check()
    assert [(r.code, r.out, r.err) for r in gpu] == [(r.code, r.out, r.err) for r in cpu]
    assert cpu[0].code == 0
