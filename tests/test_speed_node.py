"""The per-node fast paths of issue 25 (engine and parser) give what the general paths gave.

apply writes out the one- and two-operand cases and shares the ``needs``/``shapes`` tuples of
pairs of numbers; backward hands a Node its cotangent directly when its last consumer is
done; a Node rebuilds its output tensor instead of keeping a weak reference; the LALR
runtime lexes inside its loop and makes no Token for punctuation; the derivative warnings
return early when no op of the program has a kink.  Each is checked against the slow
formula or the behaviour it replaced.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import autograd_cli as ag
from autograd_cli.core import tensor
from autograd_cli.core.autograd import grad
from autograd_cli.core.errors import GradError
from autograd_cli.grammar import lalr
from autograd_cli.grammar import parser as P


def test_scalar_chain_matches_the_closed_form_bit_for_bit():
    x = tensor(0.5, requires_grad=True)
    y, v = x, np.float64(0.5)
    factors = []  # each op's local derivative (NumPy's, as the engine's rules compute them)
    for i in range(300):
        if i % 3 == 0:
            y, v = y * 1.0001, v * np.float64(1.0001)
            factors.append(np.float64(1.0001))
        elif i % 3 == 1:
            y, v = y + 0.1, v + np.float64(0.1)
        else:
            factors.append(np.cos(v))
            y, v = y.sin(), np.sin(v)
    y.backward()
    d = np.float64(1.0)
    for f in reversed(factors):  # the backward pass multiplies from the output back
        d = d * f
    assert y.item() == float(v) and x.grad.item() == float(d)
    assert y.grad_fn.name() == "SinBackward0"


def test_shared_needs_and_shapes_are_those_of_the_inputs():
    a = tensor(2.0, requires_grad=True)
    b = tensor([1.0, 2.0])
    n = (a * b).grad_fn
    assert n.needs == (True, False) and n.shapes == ((), (2,))
    n = (3.0 * a).grad_fn
    assert n.needs == (False, True) and n.shapes == ((), ())
    n = a.sin().grad_fn
    assert n.needs == (True,) and n.shapes == ((),)
    assert (a * 2).grad_fn.edges[1] is None and (a * 2).grad_fn.edges[0] is a


def test_many_consumers_accumulate_in_order():
    # x feeds five products; each reaches y by its own path: the sum of the parts, added in
    # the order they arrive, as before (the total is exact here)
    x = tensor(1.5, requires_grad=True)
    s = x * 1.0
    y = s * 2 + s * 3 + (s * 4).sin() + s * s
    y.backward(retain_graph=True)
    want = 2 + 3 + 4 * math.cos(6.0) + 2 * 1.5
    assert x.grad.item() == pytest.approx(want, rel=1e-15)
    (g,) = grad(y, s, retain_graph=True)
    assert g.item() == x.grad.item()
    y.backward()  # retained once: a second pass is allowed, a third is not
    with pytest.raises(GradError, match="backward through the graph a second time"):
        y.backward()


def test_create_graph_and_the_rebuilt_output():
    x = tensor(0.7, requires_grad=True)
    y = x.exp()
    node = y.grad_fn
    out = node.out  # the output, rebuilt: same array, same Node, a tensor of the graph
    assert out is not y and out.data is y.data and out.grad_fn is node and out.requires_grad
    del y
    (dx,) = grad(node.out, x, create_graph=True)
    (ddx,) = grad(dx, x)
    assert dx.item() == ddx.item() == math.exp(0.7)


def test_feeder_and_process_keep_the_same_tokens():
    text = "f = (a +\n b)\n[1,\n 2]; g = f"
    runtime = P.Parser.from_tables()
    assert runtime is not None and runtime.engine == "runtime"
    lark = P.Parser.from_grammar()
    assert repr(runtime.parse(text).output) == repr(lark.parse(text).output)


@pytest.mark.parametrize("text", ["sin(x", "sin(x))", "f(,)", "(x + )", "x\n)", "[1, 2"])
def test_errors_at_punctuation_name_the_token_as_lark(text):
    runtime = P.Parser.from_tables()
    lark = P.Parser.from_grammar()
    assert runtime is not None
    errors = []
    for parser in (runtime, lark):
        with pytest.raises(Exception) as info:
            parser.parse(text)
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]


def test_runtime_refuses_a_post_lexer_without_feeder():
    from autograd_cli.grammar import _tables

    class OnlyProcess:
        always_accept = ("_NL",)

        def process(self, stream):
            yield from stream

    assert lalr.load(_tables.DATA, _tables.MEMO, P.Builder(), OnlyProcess()) is None


def test_kink_warnings_still_found_and_none_without_kinks():
    assert ag.grad("abs(x) + sin(x)", {"x": 0.0}).warnings != []
    assert ag.grad("sin(sin(x)) * 2", {"x": 0.0}).warnings == []


def test_deep_text_chain_matches_the_closed_form():
    n = 20_000
    r = ag.grad("sin(" * n + "x" + ")" * n, {"x": 0.5})
    v, factors = np.float64(0.5), []
    for _ in range(n):
        factors.append(np.cos(v))
        v = np.sin(v)
    d = np.float64(1.0)
    for f in reversed(factors):
        d = d * f
    assert float(r.value) == float(v) and float(r.grad["x"]) == float(d)


def test_single_characters_are_what_the_regular_expression_matches():
    # every (context, character) the lexer takes without its regular expression: the
    # alternation matches that terminal and that one character, whatever follows
    runtime = P.Parser.from_tables()
    assert runtime is not None
    rt = runtime._parse.__self__
    suffixes = ["", "x", "1", "*", "=", "(", ")", " ", "\n", ".5", "'a'", "#c", "==", "T"]
    checked = 0
    for scanner in [rt.root, *rt.scanners.values()]:
        for c, name in scanner.single.items():
            for suffix in suffixes:
                m = scanner.match(c + suffix, 0)
                assert m is not None and (m.lastgroup, m.group()) == (name, c)
                checked += 1
    assert checked > 100
    # and the analysis is conservative: '*' starts '**' too, '=' starts '==', '.' a number
    assert "*" not in rt.root.single and "=" not in rt.root.single
    assert "." not in rt.root.single and "(" in rt.root.single
    assert lalr._may_start(r"(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", ".")
    assert not lalr._may_start(r"(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", "-")
    assert lalr._may_start(r"(?i:a)", "A")  # flags: unsure, so True


def test_feeder_is_skipped_only_where_no_check_can_fire(monkeypatch):
    feeder = P._NewlinesInBrackets().feeder
    assert feeder("sin(x) + y; z") is None  # no newline, far below every limit
    assert feeder("(x +\n y)") is not None  # a newline: maybe whitespace in brackets
    assert feeder() is not None  # no text (Lark's process): every token checked
    monkeypatch.setattr(P.limits, "MAX_NESTING", 3)
    assert feeder("(((x)))") is None and feeder("((((x))))") is not None
    with pytest.raises(Exception, match="nests brackets more than 3 deep"):
        P.Parser.from_tables().parse("((((x))))")
    monkeypatch.setattr(P.limits, "MAX_STATEMENTS", 2)
    assert feeder("x; y") is None and feeder("x; y; z") is not None
    monkeypatch.setattr(P.limits, "MAX_TOKENS", 5)
    assert feeder("a+b+c") is None and feeder("a+b+cd") is not None  # 6 characters


def test_ops_on_their_own_are_quiet_and_leave_numpy_as_it_was():
    import warnings

    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning would fail here
        big = tensor(1e308) * 10
        assert big.item() == math.inf and tensor(-1.0).log().data != tensor(-1.0).log().data
        with np.errstate(all="raise"):  # the user's state: ours ignores, theirs comes back
            assert (tensor(1.0) / 0.0).item() == math.inf
            with pytest.raises(FloatingPointError):
                np.float64(1.0) / np.float64(0.0)
            bufsize = np.getbufsize()
            seen = []
            op = tensor(2.0).sin  # an op whose forward reads the state in force
            from autograd_cli.core import backend

            backend.ignoring(lambda: seen.append((np.geterr(), np.getbufsize())))()
            assert seen == [({k: "ignore" for k in before}, bufsize)] and op().item()
    assert np.geterr() == before


def test_constants_take_the_dtype_of_the_tensor_beside_them():
    for dtype in ("float64", "float32"):
        kind = np.dtype(dtype).type
        t = tensor(1.5, dtype=dtype) * 1.0  # a NumPy scalar of that dtype
        assert t.data.__class__ is kind
        for out, want in ((t * 0.1, kind(1.5) * kind(0.1)), (0.1 * t, kind(0.1) * kind(1.5))):
            assert out.data.__class__ is kind and out.data == want
        assert (t + 2).data.__class__ is kind and (t + 2).item() == 3.5
    assert (tensor([1.0, 2.0]) * 0.5).tolist() == [0.5, 1.0]  # an array beside: not a scalar
