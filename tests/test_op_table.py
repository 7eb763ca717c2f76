"""Every op of the op table has every interpretation, and a new op cannot miss one.

For each op the language can produce, :func:`gaps` builds a small sample
expression from the op's own entry (its arity, its forward's attributes, which
arguments are differentiable) and checks, by running them, that it has

* ``forward``: a value at the sample point;
* ``reverse``: a vjp rule that agrees with central differences, or a declaration
  that it is not differentiable (``differentiable`` all False) or piecewise
  constant (``zero_grad``);
* ``forward-mode``: a jvp rule that agrees with central differences along a
  tangent, or the same declarations;
* ``batching``: a rule in ``core/batch.py`` (``BATCHABLE_OPS``: its elementwise
  ops batch by broadcasting);
* ``text``: a printing in the language that parses back to the same value;
* ``latex``: a declared LaTeX form whose output is well formed (and, where
  SymPy's LaTeX parser reads it, has the same value);
* ``symbolic``: a symbolic derivative (``grad_exprs``) that agrees with the
  engine's gradient, or a declaration that ``diff`` does not support it (an op
  kind outside the symbolic differentiator's: it raises UnsupportedDiffError);
* ``grammar``: some source text parses to it (the printed text does).

Internal ops (``internal=True``: broadcast_to, sum_to, scatter, mT, zeros_like, astype)
are exempt.  The last tests register a dummy op (monkeypatching ``OPS``) with
everything, then without each interpretation in turn, and check that each
omission is caught.
"""

from __future__ import annotations

import copy
import inspect
import math
import re
import warnings
from dataclasses import dataclass

import cases_arrays
import cases_fft
import cases_linalg
import numpy as np
import pytest

import autograd_cli as ag
from autograd_cli.core import OPS, apply, codegen, grad, no_grad, symbolic, tensor
from autograd_cli.core import batch as batch_module
from autograd_cli.core.ops import (
    _DECLARED,
    FUNCTIONS,
    POWER,
    UNARY,
    Op,
    Printing,
    RuleContext,
    chain,
    function,
    language_functions,
    op_table,
)
from autograd_cli.core.ops.table import Code
from autograd_cli.core.printing import to_latex, to_text
from autograd_cli.core.program import Expr, Program, topological, variables
from autograd_cli.grammar import parse

H = 1e-6
RTOL = 1e-5
ATOL = 1e-8

SCALARS = {"x": 0.3, "y": 0.7, "z": 0.2}
VECTORS = {"x": [0.3, 0.7, 0.2], "y": [0.6, 0.4, 0.9], "z": [0.5, 0.8, 0.1]}
CONSTANT = 0.5  # the value of an argument the op does not differentiate (max(x, c))
# Domain facts: such a constant where 0.5 is outside the op's domain (polygamma's order n
# is a whole number).
CONSTANTS = {"polygamma": 1.0}
# Values for the attributes an op's forward takes beyond its array arguments.
SAMPLE_ATTRS = {"axis": 0, "keepdims": False, "index": (1,), "shape": (3, 1)}
# An op whose arguments must be more than three-vectors (a square matrix for det): its values,
# from tests/cases_linalg.py and tests/cases_arrays.py (name -> one value per argument).
SAMPLE_VALUES = {
    **cases_linalg.OP_TABLE_SAMPLES,
    **cases_arrays.OP_TABLE_SAMPLES,
    **cases_fft.OP_TABLE_SAMPLES,
    "acosh": (1.7,),  # defined from 1 up
}
# and the attributes (a required Param's value: roll's shift), name -> {param: value}
SAMPLE_ATTRS_BY_OP = {
    **cases_linalg.OP_TABLE_ATTRS,
    **cases_arrays.OP_TABLE_ATTRS,
    **cases_fft.OP_TABLE_ATTRS,
    "astype": {"dtype": "float64", "source": "float64"},  # the harness is float64 throughout
}
# Op kinds whose sample is scalars; the others (reductions, products, shapes) get vectors.
SCALAR_KINDS = ("elementwise", "comparison", "constant")
# The kinds the symbolic differentiator handles; any other kind declares "no diff".
SYMBOLIC_KINDS = ("elementwise", "comparison", "constant")


@dataclass
class Sample:
    expr: Expr
    values: dict  # variable -> float64 array
    args: list  # the argument arrays, in order (constants included)
    attrs: dict
    wrt: list  # argument positions that are differentiated (variables)


def run(root: Expr, values: dict) -> np.ndarray:
    """Evaluate an expression graph with the ops' forwards (no engine, no evaluator)."""
    out: dict[int, np.ndarray] = {}
    with np.errstate(all="ignore"):
        for node in topological([root]):
            if node.op == "const":
                v = _num(node.value)
            elif node.op == "var":
                v = values[node.name]
            else:
                v = OPS[node.op].forward(*[out[id(a)] for a in node.args], **node.attrs)
            out[id(node)] = _num(v)
    return out[id(root)]


def _num(v) -> np.ndarray:
    """``v`` in float64, or complex128 where it is complex (eig's values)."""
    v = np.asarray(v)
    return v.astype(np.complex128 if v.dtype.kind == "c" else np.float64)


def _differentiable(op: Op, n: int) -> tuple[bool, ...]:
    return op.differentiable if op.arity is not None else (True,) * n


def declared_not_differentiable(op: Op) -> bool:
    return op.zero_grad or (op.arity is not None and not any(op.differentiable))


def sample(name: str) -> Sample:
    """A small expression applying ``name`` to variables (a constant where the op takes
    no derivative but does in another argument: ``max(x, 0.5)`` is the clamp op)."""
    op = OPS[name]
    n = op.arity if op.arity is not None else 2
    flags = _differentiable(op, n)
    pool = SCALARS if op.kind in SCALAR_KINDS else VECTORS
    names = iter(pool)
    args, values, arrays, wrt = [], {}, [], []
    for i in range(n):
        if not flags[i] and any(flags):
            c = CONSTANTS.get(name, CONSTANT)
            args.append(Expr.const(c))
            arrays.append(np.float64(c))
            continue
        var = next(names)
        given = SAMPLE_VALUES.get(name)
        values[var] = np.asarray(pool[var] if given is None else given[i], dtype=np.float64)
        args.append(Expr.var(var))
        arrays.append(values[var])
        if flags[i]:
            wrt.append(i)
    params = list(inspect.signature(op.forward).parameters.values())
    attrs = {p.name: SAMPLE_ATTRS.get(p.name, p.default) for p in op.params}
    attrs.update(SAMPLE_ATTRS_BY_OP.get(name, {}))
    if op.params:
        params = []  # an op's Params are its attributes: the forward's signature says no more
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or params.index(p) < n:
            continue
        if p.name in SAMPLE_ATTRS:
            attrs[p.name] = SAMPLE_ATTRS[p.name]
        elif p.default is p.empty and p.name not in attrs:
            raise AssertionError(f"{name}: no sample value for the attribute {p.name!r}")
    return Sample(Expr(name, tuple(args), attrs), values, arrays, attrs, wrt)


def _value(name: str, arrays, attrs) -> np.ndarray:
    with no_grad(), np.errstate(all="ignore"):
        out = apply(OPS[name], *[tensor(a) for a in arrays], **attrs)
    return _num(out.numpy())


def _central(name: str, s: Sample, i: int, t: np.ndarray) -> np.ndarray:
    """(f(x + h t) - f(x - h t)) / 2h along argument ``i``."""
    hi = list(s.args)
    lo = list(s.args)
    hi[i] = s.args[i] + H * t
    lo[i] = s.args[i] - H * t
    return (_value(name, hi, s.attrs) - _value(name, lo, s.attrs)) / (2 * H)


def _close(a, b) -> bool:
    a = _num(a)
    b = _num(b)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=RTOL, atol=ATOL))


# ---------------------------------------------------------------------------
# The checks: each returns None when the interpretation is there, else why not.
# ---------------------------------------------------------------------------


def check_forward(name, op, s):
    value = _value(name, s.args, s.attrs)
    if not np.isfinite(value).all():
        return f"forward gives {value} at the sample point"
    return None


def _engine_grads(name, s) -> list:
    inputs = [tensor(a, requires_grad=(i in s.wrt)) for i, a in enumerate(s.args)]
    out = apply(OPS[name], *inputs, **s.attrs)
    loss = out.sum().real if out.is_complex() else out.sum()  # PyTorch's: a real loss
    return [g.numpy() for g in grad(loss, [inputs[i] for i in s.wrt])]


def check_reverse(name, op, s):
    if op.vjp is None:
        return None if declared_not_differentiable(op) else "no vjp rule and no declaration"
    if not s.wrt:
        return None
    for i, g in zip(s.wrt, _engine_grads(name, s)):
        fd = np.zeros_like(s.args[i])
        for j in np.ndindex(fd.shape):
            t = np.zeros_like(s.args[i])
            t[j] = 1.0
            fd[j] = np.real(_central(name, s, i, t).sum())
        if not _close(g, fd):
            return f"vjp gives {g} for argument {i}, finite differences {fd}"
    return None


def check_forward_mode(name, op, s):
    if op.jvp is None:
        return None if declared_not_differentiable(op) else "no jvp rule and no declaration"
    if not s.wrt:
        return None
    rng = np.random.default_rng(7)
    inputs = tuple(tensor(a) for a in s.args)
    with no_grad():
        out = apply(op, *inputs, **s.attrs)
    for i in s.wrt:
        t = rng.uniform(0.5, 1.5, size=np.shape(s.args[i]))
        tangents = tuple(tensor(t) if k == i else None for k in range(len(inputs)))
        needs = tuple(k == i for k in range(len(inputs)))
        with no_grad():
            jt = op.jvp(RuleContext(op, inputs, out, s.attrs, needs), tangents)
        got = np.zeros(out.shape) if jt is None else jt.numpy()
        if not _close(got, _central(name, s, i, t)):
            return f"jvp gives {got} along argument {i}, finite differences differ"
    return None


def check_batching(name, op, s):
    if name in batch_module.BATCHABLE_OPS:
        return None
    if op.batching == ("rows",):  # declared: evaluated row by row on purpose
        return None
    return "no batching rule in core/batch.py (BATCHABLE_OPS) and no Op.batching declaration"


def _parse_output(text: str) -> Expr:
    return parse(text).output


def _round_trip(expr: Expr, values: dict, want) -> str | None:
    text = to_text(expr)
    try:
        back = _parse_output(text)
    except Exception as exc:  # noqa: BLE001 - any failure to read it back is the finding
        return f"{text!r} does not parse: {exc}"
    got = run(back, values)
    if not np.array_equal(got, want, equal_nan=True):
        return f"{text!r} parses back to the value {got}, not {want}"
    return None


NESTED = {"u": [1.7, 0.4, 1.1], "v": [0.4, 0.9, 1.3]}  # the operands of an inner operator


def _operators() -> list[str]:
    return [
        n
        for n, o in OPS.items()
        if o.printing.form in ("infix", "prefix") and o.kind in SCALAR_KINDS and not o.internal
    ]


def check_text(name, op, s):
    why = _round_trip(s.expr, s.values, _value(name, s.args, s.attrs))
    if why is not None or op.printing.form not in ("infix", "prefix"):
        return why
    # An operator's parentheses: each operand in turn is every other operator.
    scalar = op.kind in SCALAR_KINDS
    values = dict(s.values)
    values.update({k: np.float64(v[0]) if scalar else np.asarray(v) for k, v in NESTED.items()})
    for inner in _operators():
        arity = OPS[inner].arity
        child = Expr(inner, tuple(Expr.var(v) for v in list(NESTED)[:arity]))
        for i, arg in enumerate(s.expr.args):
            if arg.op != "var":
                continue
            args = s.expr.args[:i] + (child,) + s.expr.args[i + 1 :]
            nested = Expr(name, args, s.attrs)
            why = _round_trip(nested, values, run(nested, values))
            if why is not None:
                return why
    return None


def _balanced(latex: str) -> bool:
    depth = 0
    for ch in latex.replace("\\{", "").replace("\\}", ""):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0 and latex.count("\\left") == latex.count("\\right")


def _sympy_value(latex: str, values: dict):
    """The value of ``latex`` read by SymPy's LaTeX parser, or None where it cannot read it."""
    try:
        import sympy
        from sympy.parsing.latex import parse_latex

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            e = parse_latex(latex, backend="lark")
        e = e.subs(sympy.Symbol("e"), sympy.E)
        if not {str(v) for v in e.free_symbols} <= set(values):
            return None
        r = e.subs({sympy.Symbol(k): float(v) for k, v in values.items()})
        if r in (sympy.true, sympy.false):
            return float(bool(r))
        return float(r)
    except Exception:  # noqa: BLE001 - SymPy without the lark backend, or a form it lacks
        return None


def check_latex(name, op, s):
    if op.printing.latex is None:
        return "no LaTeX declared (Printing.latex)"
    latex = to_latex(s.expr)
    if not _balanced(latex):
        return f"{latex!r} is not balanced"
    for var in s.values:
        if not re.search(rf"(?<![A-Za-z\\]){var}(?![A-Za-z])", latex):
            return f"{latex!r} drops the argument {var}"
    if op.kind in SCALAR_KINDS:
        ours = complex(_value(name, s.args, s.attrs))
        theirs = _sympy_value(latex, s.values) if ours.imag == 0 else None  # SymPy: reals
        ours = ours.real
        if theirs is not None and not math.isclose(theirs, ours, rel_tol=1e-9, abs_tol=1e-12):
            return f"{latex!r} reads (SymPy) as {theirs}, not {ours}"
    return None


def check_symbolic(name, op, s):
    wrt = [str(s.expr.args[i].name) for i in s.wrt]
    if op.kind not in SYMBOLIC_KINDS:  # declared: diff does not support this kind of op
        try:
            symbolic.grad_exprs(s.expr, wrt)
        except symbolic.UnsupportedDiffError:
            return None
        return f"diff does not refuse the {op.kind} op {name} (UnsupportedDiffError)"
    try:
        derivatives = symbolic.grad_exprs(s.expr, wrt)
    except Exception as exc:  # noqa: BLE001
        return f"no symbolic derivative: {type(exc).__name__}: {exc}"
    engine = _engine_grads(name, s) if op.vjp is not None and s.wrt else [0.0] * len(wrt)
    for var, want in zip(wrt, engine):
        got = run(derivatives[var], s.values)
        if np.iscomplexobj(got):  # the engine's loss is the real part (PyTorch's, on reals)
            got = np.real(got)
        if not _close(got, want):
            return f"symbolic d/d{var} = {to_text(derivatives[var])} gives {got}, grad {want}"
    return None


def check_grammar(name, op, s):
    """The printed text builds the op, or a call of one of its declared names does."""
    args = ", ".join(to_text(a) for a in s.expr.args)
    sources = [to_text(s.expr)] + [f"{f}({args})" for f in op.printing.names]
    for text in sources:
        try:
            if _parse_output(text).op == name:
                return None
        except Exception:  # noqa: BLE001 - try the next spelling
            continue
    return f"none of {sources} parses to {name}"


def _codegen_program(s):
    """The sample as a program with a scalar output (summed, as :func:`_engine_grads`; of a
    complex value, the real part)."""
    out = s.expr
    value = run(out, s.values)
    if value.ndim:
        out = Expr("sum", (out,), {"axis": None, "keepdims": False})
    if np.iscomplexobj(value):
        out = Expr("real", (out,))
    return Program(source="", output=out, inputs=variables(out))


def check_codegen(name, op, s):
    """Generated NumPy code (value, gradient, Hessian) agrees with grad and hessian."""
    if op.code is None:
        return "no code= (how generated code writes it, core/ops/table.py Code)"
    if op.code.refused:
        return None
    program = _codegen_program(s)
    wanted = [v for v in program.inputs if v in s.values]
    if not wanted:
        return None
    differentiable = op.vjp is not None and not declared_not_differentiable(op)
    generated = codegen.generate(program, s.values, wrt=wanted, hessian=differentiable)
    namespace: dict = {}
    exec(compile(generated.code, "<codegen>", "exec"), namespace)
    with np.errstate(all="ignore"):
        got = namespace["f"](*[s.values[v] for v in program.inputs])
    engine = ag.hessian if differentiable else ag.grad
    want = engine(program, s.values, wanted)
    expected = [want.value] + [want.grad[v] for v in wanted]
    if differentiable:
        expected += [want.hessian[a][b] for a in wanted for b in wanted]
    if len(got) != len(expected):
        return f"generated code returns {len(got)} outputs, not {len(expected)}"
    for label, g, w in zip(generated.outputs, got, expected):
        if np.shape(g) != np.shape(w):
            return f"generated {label} has shape {np.shape(g)}, the engine's {np.shape(w)}"
        if not np.allclose(g, w, rtol=1e-12, atol=1e-300, equal_nan=True):
            return f"generated {label} is {g}, the engine's {w}"
    return None


CHECKS = {
    "forward": check_forward,
    "reverse": check_reverse,
    "forward-mode": check_forward_mode,
    "batching": check_batching,
    "text": check_text,
    "latex": check_latex,
    "symbolic": check_symbolic,
    "grammar": check_grammar,
    "codegen": check_codegen,
}


def gaps(name: str) -> dict[str, str]:
    """The interpretations ``name`` lacks, each with the reason (empty: it has them all)."""
    op = OPS[name]
    if op.internal:
        return {}
    s = sample(name)
    found = {}
    for label, check in CHECKS.items():
        try:
            why = check(name, op, s)
        except Exception as exc:  # noqa: BLE001 - a check that crashes is a missing piece
            why = f"{type(exc).__name__}: {exc}"
        if why is not None:
            found[label] = why
    return found


# ---------------------------------------------------------------------------
# The table itself
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_op_has_every_interpretation(name):
    assert gaps(name) == {}


def test_internal_ops_are_the_expected_ones_and_unspelled():
    internal = {name for name, op in OPS.items() if op.internal}
    assert internal == {"broadcast_to", "sum_to", "scatter", "mT", "zeros_like", "astype"}
    for name in internal:
        assert OPS[name].printing.names == (), name
        assert all(name not in (f.unary, f.binary, f.ternary, f.reduce) for f in FUNCTIONS.values())


def test_language_functions_are_derived_from_the_table():
    assert language_functions().keys() == FUNCTIONS.keys()
    for name, fn in language_functions().items():
        old = FUNCTIONS[name]
        assert (fn.unary, fn.binary, fn.ternary, fn.reduce, fn.positional_axis) == (
            old.unary,
            old.binary,
            old.ternary,
            old.reduce,
            old.positional_axis,
        )


def test_making_the_table_again_wraps_nothing_twice():
    # op_table completes what follows from an op's kind on the entry itself (a reduction's
    # check of its axis): made again (as tests do), a forward must not get a second wrapper
    before = {name: op.forward for name, op in OPS.items()}
    op_table(_DECLARED)
    again = op_table(_DECLARED)
    for name, op in again.items():
        assert op.forward is before[name], name
    reductions = [op for op in OPS.values() if op.kind == "reduction"]
    assert reductions
    for op in reductions:
        assert op.forward.checks_axis, op.name
        assert not getattr(op.forward.__wrapped__, "checks_axis", False), op.name
    with pytest.raises(ValueError, match="sum\\(\\) of a number has no axis 0"):
        OPS["sum"].forward(np.float64(1.0), axis=0)


def test_the_batching_rules_are_keyed_by_the_tables_ops():
    # rows (core/batch.py) and tangent directions (core/forward.py) keep their own rules for
    # the ops their kind does not cover, keyed by the entry itself, not by a name that could
    # outlive or miss it; an op with no rule at all fails check_batching above by name
    from autograd_cli.core import forward

    for rules in (batch_module._RULES, forward._BATCHED):
        for op in rules:
            assert isinstance(op, Op) and OPS.get(op.name) is op, op
    assert batch_module.BATCHABLE_OPS == {op.name for op in batch_module._RULES}


def test_operators_declare_their_levels():
    for name, op in OPS.items():
        p = op.printing
        if p.form == "infix":
            assert p.symbol and len(p.operands) == 2 and op.arity == 2, name
        elif p.form == "prefix":
            assert p.symbol and len(p.operands) == 1 and op.arity == 1, name
        else:
            assert p.symbol is None and p.operands == (), name


# ---------------------------------------------------------------------------
# A new op: complete, then missing each interpretation in turn
# ---------------------------------------------------------------------------


def _cube_partial(n):
    x = n.inputs[0]
    return 3 * x * x


def _raw_partial(n):  # with raw arrays: fine on tensors, no symbolic form
    return tensor(3 * n.inputs[0].data ** 2)


COMPLETE = {
    "forward": lambda a: a * a * a,
    "vjp": lambda n, g: (chain(g, _cube_partial(n)),),
    "jvp": lambda n, ts: None if ts[0] is None else chain(ts[0], _cube_partial(n)),
    "differentiable": None,
    "printing": function("cube", latex="\\operatorname{cube}"),
    "internal": False,
    "code": Code("{0} * {0} * {0}", "{0} * {0} * {0}", "{0} * {0} * {0}"),
}


def _install(monkeypatch, batchable=True, **changes) -> None:
    fields = dict(COMPLETE, **changes)
    op = Op(
        "cube",
        "CubeBackward0",
        fields["forward"],
        fields["vjp"],
        fields["jvp"],
        differentiable=fields["differentiable"],
        printing=fields["printing"],
        internal=fields["internal"],
        code=fields["code"],
    )
    monkeypatch.setitem(OPS, "cube", op)
    for fname, fn in language_functions().items():
        monkeypatch.setitem(FUNCTIONS, fname, fn)
    if batchable:  # what a rule in core/batch.py would do
        monkeypatch.setattr(batch_module, "BATCHABLE_OPS", batch_module.BATCHABLE_OPS | {"cube"})


def _broken(a):
    raise ValueError("no forward")


def test_a_complete_new_op_passes(monkeypatch):
    _install(monkeypatch)
    assert gaps("cube") == {}


VARIANTS = {
    "forward": {"forward": _broken},
    "reverse": {"vjp": None},
    "forward-mode": {"jvp": None},
    "batching": {"batchable": False},
    # prints as "-x", which parses (to neg) but not to the same value
    "text": {
        "printing": Printing(
            form="prefix",
            symbol="-",
            level=UNARY,
            operands=(POWER,),
            names=("cube",),
            latex="\\operatorname{cube}",
        )
    },
    "latex": {"printing": Printing(names=("cube",))},
    "symbolic": {
        "vjp": lambda n, g: (g * _raw_partial(n),),
        "jvp": lambda n, ts: None if ts[0] is None else ts[0] * _raw_partial(n),
    },
    # no function of the language builds it
    "grammar": {"printing": Printing(call="cube", latex="\\operatorname{cube}")},
    "codegen": {"code": None},
}


@pytest.mark.parametrize("missing", list(VARIANTS))
def test_a_new_op_missing_an_interpretation_fails(monkeypatch, missing):
    assert set(VARIANTS) == set(CHECKS)
    _install(monkeypatch, **VARIANTS[missing])
    found = set(gaps("cube"))
    if missing == "forward":  # nothing else can run without a value
        assert "forward" in found
    elif missing == "grammar":  # what cannot be parsed cannot be printed and read back
        assert found == {"grammar", "text"}
    elif missing == "symbolic":  # a rule on raw arrays cannot be traced into code either
        assert found == {"symbolic", "codegen"}
    else:
        assert found == {missing}


def test_wrong_rules_are_caught_not_only_missing_ones(monkeypatch):
    _install(
        monkeypatch,
        vjp=lambda n, g: (chain(g, 2 * n.inputs[0]),),
        jvp=lambda n, ts: None if ts[0] is None else chain(ts[0], 2 * n.inputs[0]),
    )
    assert {"reverse", "forward-mode"} <= set(gaps("cube"))


def test_wrong_generated_code_is_caught(monkeypatch):
    _install(monkeypatch, code=Code("{0} * {0}", "{0} * {0}", "{0} * {0}"))
    assert set(gaps("cube")) == {"codegen"}
    assert "generated value" in gaps("cube")["codegen"]


def test_a_refused_op_is_declared_not_missing(monkeypatch):
    _install(monkeypatch, code=Code(refused="no one formula"))
    assert gaps("cube") == {}


def test_declarations_stand_in_for_rules(monkeypatch):
    # not differentiable: no vjp/jvp needed (a comparison-like op)
    _install(monkeypatch, vjp=None, jvp=None, differentiable=(False,))
    assert gaps("cube") == {}


def test_internal_ops_are_exempt(monkeypatch):
    _install(
        monkeypatch,
        batchable=False,
        vjp=None,
        jvp=None,
        printing=Printing(),
        internal=True,
    )
    assert gaps("cube") == {}


# ---------------------------------------------------------------------------
# The facts an elementwise op declares about its values, against its values
# ---------------------------------------------------------------------------

# Each argument takes every value of the grid (all combinations): the poles, branch points
# and kinks the ops have at whole numbers and halves, and values between them.
GRID = np.array([-3, -2.5, -2, -1.5, -1, -0.7, -0.5, -0.3, 0, 0.3, 0.5, 0.7, 1, 1.5, 2, 2.5, 3.0])
KINK_STEP = 1e-6  # the step of the differences that find kinks, jumps and flat pieces
LINEAR_STEP = 1e-2  # ... and of the second differences that find linear pieces
NONFINITE = (math.nan, math.inf, -math.inf)

# Facts the grid suggests that an op rightly does not declare, each with the reason.
NOT_PIECEWISE = {  # flat along one argument, or with a kink, at a grid point
    "mul": "flat in x where y = 0; a product is the simplifier's own term, not a function",
    "div": "flat in y where x = 0; a quotient is the simplifier's own term",
    "pow": "flat in x where y = 0 and in y where x = 0 or 1; a power is the simplifier's own term",
    "polar": "flat in theta where r = 0 (r e^(i theta) is 0 at every angle), as mul is where a "
    "factor is 0; smooth everywhere",
}
NOT_PIECEWISE_LINEAR = {  # linear along the diagonal at half the grid points or more
    "logaddexp": "linear along the diagonal only (logaddexp(t, t) = t + log 2): off it, its "
    "curvature is sigmoid'(a - b) > 0, so it has no linear pieces",
}


def _elementwise_ops() -> list[str]:
    return sorted(
        n
        for n, op in OPS.items()
        if op.kind in ("elementwise", "comparison") and not op.internal and op.arity
    )


def _on_grid(op: Op, *arrays) -> np.ndarray:
    """The op's values in float64, or complex128 where they are complex (polar's): the
    checks below compare, difference and test finiteness of both parts."""
    with np.errstate(all="ignore"):
        return _num(op.forward(*arrays))


def _points(arity: int) -> list[np.ndarray]:
    return [a.ravel() for a in np.meshgrid(*[GRID] * arity, indexing="ij")]


def _shifted(points, i, step):
    return [p + step if k == i else p for k, p in enumerate(points)]


def _kinks_and_flat_pieces(op: Op, points, value) -> tuple[set, set]:
    """The arguments along which, somewhere on the grid, the op's slope jumps between the
    two sides of a point (a kink or a jump), and those along which it is constant (f(x - h)
    == f(x) == f(x + h), in floating point)."""
    kinked, flat = set(), set()
    for i in range(len(points)):
        lo = _on_grid(op, *_shifted(points, i, -KINK_STEP))
        hi = _on_grid(op, *_shifted(points, i, KINK_STEP))
        ok = np.isfinite(lo) & np.isfinite(value) & np.isfinite(hi)
        if np.any(ok & (lo == value) & (value == hi)):
            flat.add(i)
        with np.errstate(all="ignore"):
            left, right = (value - lo) / KINK_STEP, (hi - value) / KINK_STEP
            jump = np.abs(right - left) > 0.1 * (1 + np.abs(left) + np.abs(right))
        if np.any(ok & jump):
            kinked.add(i)
    return kinked, flat


def _linear_share(op: Op, points, value, along=None) -> float:
    """The share of the grid's points (where the op is finite nearby) at which its second
    difference along the diagonal of the arguments ``along`` (default: every argument
    moved) is 0 to rounding: 1/17 for sin (at 0), over half for floor (all but its jumps),
    all of them for mul along one argument."""
    if along is None:
        steps = [LINEAR_STEP] * len(points)
    else:  # steps unlike one another: linear along (t, t) only is not linear (logaddexp)
        steps = [
            LINEAR_STEP * (1 + i) * (-1) ** i if i in along else 0.0 for i in range(len(points))
        ]
    lo = _on_grid(op, *[p - h for p, h in zip(points, steps)])
    hi = _on_grid(op, *[p + h for p, h in zip(points, steps)])
    ok = np.isfinite(lo) & np.isfinite(value) & np.isfinite(hi)
    with np.errstate(all="ignore"):
        flat = np.abs(hi - 2 * value + lo) <= 1e-12 * (1 + np.abs(value))
    return float(np.mean(flat[ok])) if ok.any() else 0.0


def _spreads(op: Op, points, i: int) -> bool:
    """An inf or nan at argument ``i`` makes the result inf or nan, whatever the others."""
    for bad in NONFINITE:
        args = [np.full_like(p, bad) if k == i else p for k, p in enumerate(points)]
        if np.isfinite(_on_grid(op, *args)).any():
            return False
    return True


def _differentiated(op: Op) -> list[int]:
    return [i for i, d in enumerate(op.flags(op.arity)) if d]


def _linear_gap(op: Op, points, value) -> str | None:
    """Why ``linear`` is wrong or left out (None: right): along each differentiated
    argument alone, and along all of them together, the op is linear at every sample point
    exactly where it says so (:meth:`Op.linear_in`); piecewise linear ones are left to
    ``piecewise_linear``."""
    if op.piecewise_linear or op.zero_grad:
        return None
    moved = _differentiated(op)
    groups = [(i,) for i in moved] + ([tuple(moved)] if len(moved) > 1 else [])
    for group in groups:
        live = [i in group for i in range(op.arity)]
        share = _linear_share(op, points, value, group)
        if op.linear_in(live) and share < 1.0:
            return f"declared linear along arguments {group}, but curved at {1 - share:.0%}"
        if share == 1.0 and not op.linear_in(live):
            return (
                f"linear along arguments {group} at every sample point: declare linear= "
                "(True, 'each' or the positions)"
            )
    return None


def _selector_gap(op: Op, points, value) -> str | None:
    """Why ``selects`` is wrong or left out (None: right): an op declares it exactly where
    its partials are selectors at every sample point (each 0, 1 or 0.5, both 0 and not 0
    somewhere: relu, max, clip), so that a 0 partial passes no inf or nan cotangent (PyTorch's where)."""
    if op.deriv is None or op.zero_grad:
        return None
    with np.errstate(all="ignore"):
        partials = [d(*points, value) for d in op.deriv]
    found = [np.broadcast_to(np.asarray(p), value.shape) for p in partials if p is not None]
    selector = all(np.isin(p, (0.0, 0.5, 1.0)).all() for p in found)  # polar's 1j*out: no
    if op.selects and not selector:
        return "declared selects, but a partial other than 0, 1 or 0.5 at a sample point"
    passes = {bool(v) for p in found for v in np.unique(p != 0)}
    if selector and passes == {False, True} and not op.selects:  # angle's 0 alone: no need
        return "its partials are 0, 1 or 0.5 at every sample point: declare selects=True"
    return None


def fact_gaps(name: str) -> dict[str, str]:
    """The value facts (``Op.total``, ``nonneg``, ``piecewise``, ``piecewise_linear``,
    ``selects``, ``spreads_nonfinite``) that ``name`` declares wrongly or leaves out, and a ``kink`` it
    leaves out, each with why."""
    op = OPS[name]
    points = _points(op.arity)
    value = _on_grid(op, *points)
    found = {}
    finite = bool(np.isfinite(value).all())
    if op.total and not finite:
        bad = [float(p[~np.isfinite(value)][0]) for p in points]
        found["total"] = f"declared total, but {name}{tuple(bad)} = {value[~np.isfinite(value)][0]}"
    elif finite and not op.total:
        found["total"] = "a number at every sample point: declare total=True"
    negative = value.imag != 0 if np.iscomplexobj(value) else value < 0  # not ordered
    if op.nonneg and negative.any():
        found["nonneg"] = f"declared nonneg, but {value[negative][0]} at a sample point"
    elif not negative.any() and not op.nonneg:
        found["nonneg"] = "never negative at the sample points: declare nonneg=True"
    kinked, flat = _kinks_and_flat_pieces(op, points, value)
    if op.vjp is not None and op.kink is None and kinked & set(_differentiated(op)):
        found["kink"] = (
            f"a kink or a jump along argument {min(kinked)} at a sample point: declare "
            "kink= (the warning where the derivative's convention is used)"
        )
    elif op.zero_grad and op.kink is None:  # sign's jump at 0 has the same slope both sides
        found["kink"] = "piecewise constant: declare kink= saying its gradient is zero"
    piecewise = bool(kinked or flat)
    if op.piecewise and not piecewise:
        found["piecewise"] = "declared piecewise, but smooth and nowhere flat at the sample points"
    elif piecewise and not op.piecewise and name not in NOT_PIECEWISE:
        found["piecewise"] = (
            "a kink, a jump or a flat piece at a sample point: declare piecewise=True "
            "(or list it in NOT_PIECEWISE with the reason)"
        )
    if op.vjp is not None:  # Taylor mode's fact: about ops it differentiates
        share = _linear_share(op, points, value)
        if op.piecewise_linear and share < 0.5:  # floor: its jumps at the whole numbers
            found["piecewise_linear"] = f"declared piecewise linear, but linear at {share:.0%}"
        elif (
            share >= 0.5
            and not op.linear_in([True] * op.arity)
            and name not in NOT_PIECEWISE_LINEAR
        ):
            found["piecewise_linear"] = (
                f"linear at {share:.0%} of the sample points: declare piecewise_linear=True "
                "(or list it in NOT_PIECEWISE_LINEAR with the reason)"
            )
        linear = _linear_gap(op, points, value)
        if linear:
            found["linear"] = linear
    selects = _selector_gap(op, points, value)
    if selects:
        found["selects"] = selects
    spreading = tuple(i for i in range(op.arity) if _spreads(op, points, i))
    if set(op.spreads_nonfinite) - set(spreading):
        found["spreads_nonfinite"] = (
            f"declared {op.spreads_nonfinite}, but inf or nan at an argument of "
            f"{sorted(set(op.spreads_nonfinite) - set(spreading))} can give a finite result"
        )
    elif spreading != op.spreads_nonfinite:
        found["spreads_nonfinite"] = (
            f"inf or nan at an argument of {spreading} always gives inf or nan: declare "
            f"spreads_nonfinite={spreading}"
        )
    return found


@pytest.mark.parametrize("name", _elementwise_ops())
def test_every_elementwise_op_declares_its_value_facts(name):
    assert fact_gaps(name) == {}


@pytest.mark.parametrize(
    "name",
    sorted(n for n, op in OPS.items() if op.spreads_nonfinite and op.kind not in SCALAR_KINDS),
)
def test_other_ops_spread_inf_and_nan_as_declared(name):
    s = sample(name)
    for i in OPS[name].spreads_nonfinite:
        for bad in NONFINITE:
            args = list(s.args)
            args[i] = np.array(args[i], dtype=np.float64)
            args[i].flat[0] = bad
            assert not np.isfinite(_value(name, args, s.attrs)).all(), (name, i, bad)


def other_linear_gaps(name: str) -> list[str]:
    """Where ``linear`` is wrong or left out on an op that is not elementwise: along each
    differentiated argument of its sample, and along all of them, its second difference in a
    random direction is zero exactly where :meth:`Op.linear_in` says so."""
    op, s = OPS[name], sample(name)
    rng = np.random.default_rng(sum(map(ord, name)))
    moved = list(s.wrt)
    groups = [(i,) for i in moved] + ([tuple(moved)] if len(moved) > 1 else [])
    gaps = []
    for group in groups:
        steps = {i: rng.standard_normal(np.shape(s.args[i])) for i in group}

        def at(t, steps=steps):
            return _value(
                name, [a + t * steps[i] if i in steps else a for i, a in enumerate(s.args)], s.attrs
            )

        middle = at(0.0)
        second = np.abs(at(0.25) - 2 * middle + at(-0.25))
        flat = bool(np.all(second <= 1e-9 * (1 + np.abs(middle).max(initial=0.0))))
        declared = op.linear_in([i in group for i in range(len(s.args))])
        if declared and not flat:
            gaps.append(f"declared linear along arguments {group}, but curved")
        elif flat and not declared and name not in NOT_LINEAR:
            gaps.append(
                f"linear along arguments {group}: declare linear= (or list it in NOT_LINEAR)"
            )
    return gaps


#: ops linear in their sample that rightly do not say so, each with the reason
NOT_LINEAR: dict[str, str] = {
    "amax": "linear on each piece only (the largest element's): a kink where two tie",
}


@pytest.mark.parametrize(
    "name",
    sorted(
        n
        for n, op in OPS.items()
        if op.kind not in ("elementwise", "comparison") and not op.internal and op.vjp is not None
    ),
)
def test_other_ops_declare_where_they_are_linear(name):
    # the Hessian's sparsity pattern (issue 28) and Taylor mode's guard read it
    assert other_linear_gaps(name) == []


# A fact left out, or declared wrongly, is named: (op, its facts changed to, the fact named).
FACT_VARIANTS = [
    ("erfcx", {"total": False}, "total"),  # the example of ARCHITECTURE.md
    ("erfcx", {"nonneg": False}, "nonneg"),
    ("sin", {"total": False}, "total"),
    ("log", {"total": True}, "total"),
    ("erfc", {"nonneg": False}, "nonneg"),
    ("erf", {"nonneg": True}, "nonneg"),
    ("relu", {"piecewise": False, "piecewise_linear": False}, "piecewise"),
    ("relu", {"piecewise_linear": False}, "piecewise_linear"),
    ("add", {"linear": False}, "linear"),  # issue 28: the Hessian's pattern reads it
    ("mul", {"linear": False}, "linear"),
    ("mul", {"linear": True}, "linear"),
    ("div", {"linear": "each"}, "linear"),
    ("exp", {"linear": True}, "linear"),
    ("abs", {"kink": None}, "kink"),
    ("relu", {"selects": False}, "selects"),  # sqrt(relu(x)) at x < 0 would be nan, not 0
    ("clip", {"selects": False}, "selects"),
    ("abs", {"selects": True}, "selects"),  # abs'(x) is -1 for x < 0: it multiplies
    ("clip", {"kink": None}, "kink"),
    ("sign", {"kink": None}, "kink"),
    ("tanh", {"piecewise": True}, "piecewise"),
    ("tanh", {"piecewise_linear": True}, "piecewise_linear"),
    ("sqrt", {"spreads_nonfinite": ()}, "spreads_nonfinite"),
    ("exp", {"spreads_nonfinite": (0,)}, "spreads_nonfinite"),
]


@pytest.mark.parametrize(("name", "changes", "named"), FACT_VARIANTS)
def test_a_fact_left_out_or_wrong_fails_by_name(monkeypatch, name, changes, named):
    assert fact_gaps(name) == {}
    op = copy.copy(OPS[name])
    for fact, value in changes.items():
        setattr(op, fact, value)
    monkeypatch.setitem(OPS, name, op)
    assert named in fact_gaps(name)


# ---------------------------------------------------------------------------
# Complex arguments (issue 27): every elementwise op whose on_complex fact says it takes them,
# found by that fact, against central differences along the real and imaginary directions
# (reverse and forward mode) and against PyTorch
# ---------------------------------------------------------------------------

ON_COMPLEX = sorted(
    name
    for name, op in OPS.items()
    if op.kind == "elementwise" and op.on_complex is not None and op.arity in (1, 2)
)
Z = np.array([0.7 - 0.4j, -0.3 + 1.1j, 1.5 + 0.2j])
W = np.array([0.4 + 0.9j, 1.2 - 0.5j, -0.6 - 0.8j])


def _args(op):
    if op.name == "where":  # a real condition, complex branches
        return [np.array([1.0, 0.0, 1.0]), Z, W]
    return [Z, W][: op.arity]


def _f(op, args):
    with no_grad():
        return apply(op, *[tensor(a) for a in args]).numpy().copy()  # real(z) is a view


def test_the_complex_list_is_the_issues():
    # every function NumPy defines on complex numbers, with its derivative, and the parts
    for name in ("exp", "log", "sqrt", "sin", "tanh", "pow", "abs", "real", "imag", "conj"):
        assert name in ON_COMPLEX
    for name in ("relu", "floor", "maximum", "erf", "lgamma"):
        assert OPS[name].on_complex is None


@pytest.mark.parametrize("name", ON_COMPLEX)
def test_every_complex_op_meets_central_differences_in_both_directions(name):
    op = OPS[name]
    args = _args(op)
    u = np.array([0.3 - 0.7j, 1.1 + 0.2j, -0.5 + 0.4j])  # the cotangent: L = Re<u, f>
    flags = op.flags(len(args))
    for i, arg in enumerate(args):
        if not flags[i] or not np.iscomplexobj(arg):
            continue
        inputs = [tensor(a, requires_grad=(k == i)) for k, a in enumerate(args)]
        out = apply(op, *inputs)
        u_out = u if out.is_complex() else u.real
        (g,) = grad(out, [inputs[i]], grad_outputs=tensor(u_out))
        want = np.zeros(arg.shape, dtype=complex)
        for j in range(arg.size):
            for unit in (1.0, 1j):
                moved = [a.copy() for a in args]
                moved[i][j] += H * unit
                hi = _f(op, moved)
                moved[i][j] -= 2 * H * unit
                lo = _f(op, moved)
                want[j] += unit * np.real(np.sum(np.conj(u_out) * (hi - lo))) / (2 * H)
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-6, atol=1e-8, err_msg=name)
        # forward mode: J t along a complex direction t
        t = np.array([0.2 + 0.5j, -0.4 + 0.1j, 0.3 - 0.3j])
        from autograd_cli.core.ops import RuleContext

        with no_grad():
            tins = [tensor(a) for a in args]
            o = apply(op, *tins)
            ts = tuple(tensor(t) if k == i else None for k in range(len(args)))
            needs = tuple(k == i for k in range(len(args)))
            jt = op.jvp(RuleContext(op, tins, o, {}, needs), ts)
        moved_hi = [a + (H * t if k == i else 0) for k, a in enumerate(args)]
        moved_lo = [a - (H * t if k == i else 0) for k, a in enumerate(args)]
        fd = (_f(op, moved_hi) - _f(op, moved_lo)) / (2 * H)
        np.testing.assert_allclose(jt.numpy(), fd, rtol=1e-6, atol=1e-8, err_msg=name)


TORCH_NAMES = {"log1p": "log1p", "expm1": "expm1", "angle": "angle", "conj": "conj"}


# where: a real condition; polar: real arguments in PyTorch (its own test below)
@pytest.mark.parametrize("name", [n for n in ON_COMPLEX if n not in ("where", "polar")])
def test_every_complex_op_equals_pytorch(name, torch):
    op = OPS[name]
    args = _args(op)
    fn = {
        "add": torch.add,
        "sub": torch.sub,
        "mul": torch.mul,
        "div": torch.div,
        "pow": torch.pow,
        "neg": torch.neg,
        "log2": torch.log2,
        "log10": torch.log10,
    }.get(name) or getattr(torch, TORCH_NAMES.get(name, name))
    ts = [torch.tensor(a, requires_grad=True) for a in args]
    out_t = fn(*ts)
    inputs = [tensor(a, requires_grad=True) for a in args]
    out = apply(op, *inputs)
    np.testing.assert_allclose(out.numpy(), out_t.detach().resolve_conj().numpy(), rtol=1e-13)
    u = np.array([0.3 - 0.7j, 1.1 + 0.2j, -0.5 + 0.4j])
    u = u if out.is_complex() else u.real
    out_t.backward(torch.tensor(u))
    got = grad(out, inputs, grad_outputs=tensor(u))
    for g, t in zip(got, ts):
        np.testing.assert_allclose(g.numpy(), t.grad.resolve_conj().numpy(), rtol=1e-12)
