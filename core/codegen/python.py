"""Generated code in Python: NumPy, PyTorch or JAX, one statement per node of the graph.

Each op is written as its entry's :class:`~..ops.table.Code` says for the target; the
generator adds what every function needs: the header, the inputs read as arrays of the
dtype (the shapes checked where the code is fixed to them), the constants, and the
NaN-safe product of the rules (``_chain``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import backend
from ..errors import UnsupportedError
from ..tensor import OPS
from .trace import Node

__all__ = ["PYTHON_TARGETS", "emit_python", "shown", "spell"]


#: each Python target: its array module's name, its special functions, how it imports them
@dataclass(frozen=True)
class Language:
    """How a Python target writes what every function needs (templates of ``{dt}``, the
    dtype, and of the values)."""

    xp: str  # the array module's name
    sp: str  # its special functions
    imports: tuple[str, ...]
    read: str  # an input read as an array of the dtype: {p}
    array: str  # a constant array: {data} (a nested list), {device}
    fresh: str  # an input or a constant handed out as an array of its own: {v}


PYTHON_TARGETS = {
    "numpy": Language(
        "np",
        "scipy.special",
        ("import numpy as np",),
        "np.asarray({p}, dtype={dt})",
        "np.asarray({data}, dtype={dt})",
        "np.array({v}, dtype={dt})",
    ),
    "torch": Language(
        "torch",
        "torch.special",
        ("import math", "import torch"),
        "torch.as_tensor({p}, dtype={dt})",
        "torch.tensor({data}, dtype={dt}{device})",
        "{v}.clone()",
    ),
    "jax": Language(
        "jnp",
        "jax.scipy.special",
        ("import jax.numpy as jnp",),
        "jnp.asarray({p}, dtype={dt})",
        "jnp.asarray({data}, dtype={dt})",
        "jnp.asarray({v}, dtype={dt})",
    ),
}

_MEND = {
    "numpy": '''def _mend(t, g, r):
    """t, but 0 where g == 0 and r is inf or nan (the derivative of a mended product)."""
    if np.isfinite(r.sum()):
        return t
    return np.where((g == 0) & ~np.isfinite(r), 0.0, t)
''',
    "torch": '''def _mend(t, g, r):
    """t, but 0 where g == 0 and r is inf or nan (the derivative of a mended product)."""
    return torch.where((g == 0) & ~torch.isfinite(r), torch.zeros_like(t), t)
''',
    "jax": '''def _mend(t, g, r):
    """t, but 0 where g == 0 and r is inf or nan (the derivative of a mended product)."""
    return jnp.where((g == 0) & ~jnp.isfinite(r), 0.0, t)
''',
}

_CHAIN = {
    "numpy": '''def _chain(g, d):
    """g*d, where g == 0 gives 0 even if d is inf or nan (the untaken branch of a where)."""
    r = g * d
    if not np.isfinite(r.sum()):  # one pass, no mask: an inf or nan shows in the sum
        r = np.where((g == 0) & ~np.isfinite(r), 0.0, r)
    return r
''',
    "torch": '''def _chain(g, d):
    """g*d, where g == 0 gives 0 even if d is inf or nan (the untaken branch of a where)."""
    r = g * d
    return torch.where((g == 0) & ~torch.isfinite(r), torch.zeros_like(r), r)
''',
    "jax": '''def _chain(g, d):
    """g*d, where g == 0 gives 0 even if d is inf or nan (the untaken branch of a where)."""
    r = g * d
    return jnp.where((g == 0) & ~jnp.isfinite(r), 0.0, r)
''',
}


def spell(node: Node, args: list[str], target: str, names: dict) -> str:
    """The code of ``node``'s op on ``args`` in ``target`` (``names``: the template's words,
    ``xp``, ``sp``, ``dtype``); an op with no spelling there is :class:`UnsupportedError`."""
    op = OPS[node.op]
    why = None if op.code is None else op.code.refusal(target)
    if why:
        raise UnsupportedError(f"codegen cannot write {node.op}: {why}", op=node.op)
    how = None if op.code is None else op.code.spelling(target)
    text = None
    if callable(how):
        text = how(args, node, target)
    elif how is not None:
        words = dict(names)
        for key, value in node.attrs.items():
            words[key] = repr(value)
        text = how.format(*args, args=", ".join(args), **words)
    if text is None:
        raise UnsupportedError.naming(
            "codegen {target} {chosen} has no spelling for {op}",
            {"chosen": target, "op": shown(node)},
            op=node.op,
        )
    for key, value in names.items():
        text = text.replace("{" + key + "}", value)
    return text


def shown(node: Node) -> str:
    """The op of ``node`` as the language spells it (``max`` for amax), for messages."""
    op = OPS.get(node.op)
    if op is not None and op.printing.names:
        return op.printing.names[0]
    return node.op


def _literal(value, target: str, xp: str) -> str | None:
    """A scalar constant written inline, or None."""
    if value.ndim != 0:
        return None
    if value.dtype.kind == "c":  # a complex step between real inputs and outputs (rfft)
        z = complex(value)
        if math.isfinite(z.real) and math.isfinite(z.imag):
            return repr(z)
        parts = [_literal(value.real, target, xp), _literal(value.imag, target, xp)]
        return f"complex({parts[0]}, {parts[1]})"
    x = float(value)
    if math.isnan(x):
        return "math.nan" if target == "torch" else f"{xp}.nan"
    if math.isinf(x):
        inf = "math.inf" if target == "torch" else f"{xp}.inf"
        return inf if x > 0 else f"(-{inf})"
    text = repr(x)
    return f"({text})" if x < 0 or text.startswith("-") else text


def _array_text(value) -> str:
    return repr(value.tolist()).replace("nan", "float('nan')").replace("inf", "float('inf')")


def emit_python(
    target: str,
    name: str,
    inputs: dict[str, Node],
    params: dict[str, str],
    outputs: list[tuple[str, Node]],
    order: list[Node],
    header: list[str],
    dtype: str,
    batched: bool,
) -> str:
    """The module text: header, imports, ``_chain`` where used, and the function ``name``.

    ``params``: each input's parameter name; ``order``: the statements to write (each after
    its arguments); ``batched``: the code works on leading batch axes (every node a number
    at the traced point), else each input is checked against its traced shape."""
    w = _Writer(target, name, list(params.values()), dtype)
    for pname, node in zip(params.values(), inputs.values()):
        w.read(pname, node, batched)
    for node in order:
        if node.op != "input":
            w.statement(node)
    results = [w.result(node, batched) for _, node in outputs]
    kept = {w.code[node.index] for _, node in outputs}
    return w.module(header, [label for label, _ in outputs], results, kept)


class _Writer:
    """The body of one function, statement by statement (each node's code kept by index)."""

    def __init__(self, target: str, name: str, params: list[str], dtype: str):
        self.target = target
        self.lang = PYTHON_TARGETS[target]
        self.name = name
        self.params = params
        self.dt = self.lang.xp + "." + dtype
        # a complex constant's dtype (of the same precision): rfft's steps
        self.cdt = self.lang.xp + "." + backend.complex_name(dtype)
        self.words = {"xp": self.lang.xp, "sp": self.lang.sp, "dtype": self.dt}
        self.code: dict[int, str] = {}
        self.body: list[str] = []
        self.first = params[0] if params else None
        self.temp = _temp_prefix(params)
        self.count = 0
        self.helpers: set[str] = set()  # the module's helpers the body calls
        self.temporaries: set[str] = set()
        self.last: dict[str, int] = {}  # a name -> the statement that reads it last

    def _fresh_name(self) -> str:
        self.count += 1
        return f"{self.temp}{self.count - 1}"

    def read(self, pname: str, node: Node, batched: bool) -> None:
        self.code[node.index] = pname
        self.body.append(f"{pname} = " + self.lang.read.format(p=pname, dt=self.dt))
        if not batched:
            shape = tuple(node.value.shape)
            self.body.append(f"if tuple({pname}.shape) != {shape!r}:")
            self.body.append(
                f'    raise ValueError(f"{self.name}: {pname} must have shape {shape!r} '
                f'(the shape it was generated for), not {{tuple({pname}.shape)}}")'
            )

    def statement(self, node: Node) -> None:
        if node.op == "const":
            text = _literal(node.value, self.target, self.lang.xp)
            if text is not None:  # a number: written where it is used
                self.code[node.index] = text
                return
            text = self._array(node)
        else:
            args = [self._operand(a, node, i) for i, a in enumerate(node.args)]
            for arg in args:
                self.last[arg] = len(self.body)
            if node.op in ("chain", "mend"):
                self.helpers.add(node.op)
                text = f"_{node.op}({', '.join(args)})"
            else:
                text = spell(node, args, self.target, self.words)
        self._assign(node, text)

    def _assign(self, node: Node, text: str) -> None:
        tname = self._fresh_name()
        self.body.append(f"{tname} = {text}")
        self.code[node.index] = tname
        self.temporaries.add(tname)

    def _array(self, node: Node) -> str:
        device = f", device={self.first}.device" if self.first else ""
        dt = self.dt if node.value.dtype.kind != "c" else self.cdt
        return self.lang.array.format(data=_array_text(node.value), dt=dt, device=device)

    def _operand(self, arg: Node, node: Node, position: int) -> str:
        """``arg``'s code as ``node`` reads it: a number inline, except in a PyTorch function
        that takes tensors only (torch.maximum(x, 0.0) fails), or where every value of the
        op would be a number (where(c, 0.0, 1.0): float64 in NumPy, float32 in PyTorch,
        whatever the code's dtype): there a tensor made once (on the inputs' device, of the
        code's dtype) stands for it."""
        text = self.code[arg.index]
        if arg.op != "const":
            return text
        if not _only_numbers(node, position) and (
            self.target != "torch" or _takes_numbers(node, position)
        ):
            return text
        key = -1 - arg.index  # the tensor of a number, kept apart from the number's code
        if key not in self.code:
            tname = self._fresh_name()
            self.body.append(f"{tname} = {self._array(arg)}")
            self.code[key] = tname
        return self.code[key]

    def result(self, node: Node, batched: bool) -> str:
        text = self.code[node.index]
        if node.op != "const" and node.op != "input":
            return text
        # a constant or an input handed out: an array of its own, batch axes included
        if batched and self.first is not None and node.value.ndim == 0:
            return f"{self.lang.xp}.zeros_like({self.first}) + {text}"
        if node.op == "const" and node.value.ndim == 0:
            return self._array(node)  # a number written inline: made an array here
        dt = self.cdt if node.value.dtype.kind == "c" else self.dt
        return self.lang.fresh.format(v=text, dt=dt)

    def _freed(self, kept: set[str]) -> list[str]:
        """The body with each temporary deleted after the statement that reads it last
        (never an output, ``kept``): NumPy then reuses its memory for the next array, as
        the temporaries of a nested expression are, instead of asking the system for more."""
        after: dict[int, list[str]] = {}
        for name, last in self.last.items():
            if name in self.temporaries and name not in kept:
                after.setdefault(last, []).append(name)
        out = []
        for i, line in enumerate(self.body):
            out.append(line)
            if i in after:
                out.append("del " + ", ".join(sorted(after[i])))
        return out

    def module(
        self, header: list[str], labels: list[str], results: list[str], kept: set[str]
    ) -> str:
        lines = [f"# {line}" if line else "#" for line in header]
        lines.append("")
        source = "\n".join(self.body + results)
        imports = [i for i in self.lang.imports if i != "import math" or "math." in source]
        if self.target == "numpy" and "scipy.special." in source:
            imports.append("import scipy.special")
        if self.target == "jax" and "jax.scipy.special." in source:
            imports.append("import jax.scipy.special")
        lines.extend(imports)
        lines.append("")
        for helper in ("chain", "mend"):
            if helper in self.helpers:
                lines.extend(["", _HELPERS[helper][self.target]])
        lines.append("")
        lines.append(f"def {self.name}({', '.join(self.params)}):")
        lines.append(f'    """Returns ({", ".join(labels)})."""')
        lines.extend("    " + line for line in self._freed(kept))
        lines.append(
            "    return " + (", ".join(results) if len(results) > 1 else f"({results[0]},)")
        )
        return "\n".join(lines) + "\n"


def _only_numbers(node: Node, position: int) -> bool:
    """``position`` is the first of the op's values that may be numbers (``Code.numbers``:
    where's two), and all of them are: the result's dtype would be the library's default."""
    op = OPS.get(node.op)
    numbers: tuple[int, ...] = () if op is None or op.code is None else op.code.numbers
    return (
        len(numbers) > 1
        and position == numbers[0]
        and all(node.args[i].op == "const" for i in numbers)
    )


def _takes_numbers(node: Node, position: int) -> bool:
    """PyTorch takes Python numbers as the operands of operators (a template written with
    them: ``{0} * {1}``, ``-{0}``, ``({0} < {1}).to(...)``), in ``_chain`` (a product) and
    where the op's entry says (``Code.numbers``: pow, where's values); not in ``_mend``."""
    if node.op in ("chain", "mend"):
        return node.op == "chain"
    op = OPS[node.op]
    if op.code is None:
        return False
    how = op.code.torch
    if isinstance(how, str) and how.startswith(("{0}", "-{0}", "({0}")):
        return True
    return position in op.code.numbers


def _temp_prefix(names) -> str:
    """A prefix for the statements' names that no parameter starts with followed by a
    digit (``t``, else ``_t``, ``__t``...)."""
    prefix = "t"
    taken = list(names)
    while any(n.startswith(prefix) and n[len(prefix) :].isdigit() for n in taken):
        prefix = "_" + prefix
    return prefix


_HELPERS = {"chain": _CHAIN, "mend": _MEND}
