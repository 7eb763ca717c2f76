"""Generated code in Python: NumPy, PyTorch or JAX, one statement per node of the graph.

Each op is written as its entry's :class:`~..ops.table.Code` says for the target; the
generator adds what every function needs: the header, the inputs read as arrays of the
dtype (the shapes checked where the code is fixed to them), the constants, and the
NaN-safe product of the rules (``_chain``).
"""

from __future__ import annotations

import math

from ..errors import UnsupportedError
from ..tensor import OPS
from .trace import Node

__all__ = ["PYTHON_TARGETS", "emit_python", "spell"]

#: each Python target: its array module's name, its special functions, how it imports them
PYTHON_TARGETS = {
    "numpy": {"xp": "np", "sp": "scipy.special", "imports": ["import numpy as np"]},
    "torch": {"xp": "torch", "sp": "torch.special", "imports": ["import math", "import torch"]},
    "jax": {"xp": "jnp", "sp": "jax.scipy.special", "imports": ["import jax.numpy as jnp"]},
}

_CHAIN = {
    "numpy": '''def _chain(g, d):
    """g*d, where g == 0 gives 0 even if d is inf or nan (the untaken branch of a where)."""
    r = g * d
    bad = ~np.isfinite(r)
    if bad.any():
        r = np.where((g == 0) & bad, 0.0, r)
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
            {"chosen": target, "op": op.printing.names[0] if op.printing.names else node.op},
            op=node.op,
        )
    for key, value in names.items():
        text = text.replace("{" + key + "}", value)
    return text


def _literal(value, target: str, xp: str) -> str | None:
    """A scalar constant written inline, or None."""
    if value.ndim != 0:
        return None
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


def _dtype(target: str, dtype: str) -> str:
    return {"numpy": "np", "torch": "torch", "jax": "jnp"}[target] + "." + dtype


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
    info = PYTHON_TARGETS[target]
    xp = info["xp"]
    dt = _dtype(target, dtype)
    words = {"xp": xp, "sp": info["sp"], "dtype": dt}
    code: dict[int, str] = {}
    body: list[str] = []
    first = next(iter(params.values()), None)
    temp = _temp_prefix(params.values())
    count = 0
    for pname, node in zip(params.values(), inputs.values()):
        code[node.index] = pname
        if target == "numpy":
            body.append(f"{pname} = np.asarray({pname}, dtype={dt})")
        elif target == "torch":
            body.append(f"{pname} = torch.as_tensor({pname}, dtype={dt})")
        else:
            body.append(f"{pname} = jnp.asarray({pname}, dtype={dt})")
        if not batched:
            shape = tuple(node.value.shape)
            body.append(f"if tuple({pname}.shape) != {shape!r}:")
            body.append(
                f'    raise ValueError(f"{name}: {pname} must have shape {shape!r} '
                f'(the shape it was generated for), not {{tuple({pname}.shape)}}")'
            )
    device = f", device={first}.device" if target == "torch" and first else ""
    uses_chain = False
    for node in order:
        if node.op == "input":
            continue
        if node.op == "const":
            text = _literal(node.value, target, xp)
            if text is not None and target != "torch":
                code[node.index] = text
                continue
            cname = f"{temp}{count}"
            count += 1
            if target == "numpy":
                body.append(f"{cname} = np.asarray({_array_text(node.value)}, dtype={dt})")
            elif target == "torch":
                body.append(
                    f"{cname} = torch.tensor({_array_text(node.value)}, dtype={dt}{device})"
                )
            else:
                body.append(f"{cname} = jnp.asarray({_array_text(node.value)}, dtype={dt})")
            code[node.index] = cname
            continue
        args = [code[a.index] for a in node.args]
        if node.op == "chain":
            uses_chain = True
            text = f"_chain({args[0]}, {args[1]})"
        else:
            text = spell(node, args, target, words)
        tname = f"{temp}{count}"
        count += 1
        body.append(f"{tname} = {text}")
        code[node.index] = tname
    results = []
    for _, node in outputs:
        text = code[node.index]
        if node.op == "const" or node.op == "input":
            # a constant or an input handed out: an array of its own, batch axes included
            like = first if batched and first else None
            if like is not None and node.value.ndim == 0:
                text = f"{xp}.zeros_like({like}) + {text}"
            elif target == "torch":
                text = f"{text}.clone()"
            elif target == "numpy":
                text = f"np.array({text}, dtype={dt})"
            else:
                text = f"jnp.asarray({text}, dtype={dt})"
        results.append(text)
    lines = [f"# {line}" if line else "#" for line in header]
    lines.append("")
    imports = list(info["imports"])
    source = "\n".join(body)
    if target == "numpy" and "scipy.special." in source:
        imports.append("import scipy.special")
    if target == "jax" and "jax.scipy.special." in source:
        imports.append("import jax.scipy.special")
    if target == "torch" and "math." not in source and "math" in imports[0]:
        imports = imports[1:]
    lines.extend(imports)
    lines.append("")
    if uses_chain:
        lines.append("")
        lines.append(_CHAIN[target])
    lines.append("")
    signature = ", ".join(params.values())
    lines.append(f"def {name}({signature}):")
    labels = ", ".join(label for label, _ in outputs)
    lines.append(f'    """Returns ({labels})."""')
    lines.extend("    " + line for line in body)
    lines.append("    return " + ", ".join(results))
    return "\n".join(lines) + "\n"


def _temp_prefix(names) -> str:
    """A prefix for the statements' names that no parameter starts with followed by a
    digit (``t``, else ``_t``, ``__t``...)."""
    prefix = "t"
    taken = list(names)
    while any(n.startswith(prefix) and n[len(prefix) :].isdigit() for n in taken):
        prefix = "_" + prefix
    return prefix
