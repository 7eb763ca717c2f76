"""``check`` of complex values (issue 27): PyTorch's gradient of a real scalar output against
central differences along the real and the imaginary direction of each element.

For a real L of a complex z the gradient is dL/d(Re z) + i dL/d(Im z), so its numeric twin
is (L(z + h e) - L(z - h e)) / 2h + i (L(z + ih e) - L(z - ih e)) / 2h for each element e;
a real variable moves along the real axis only (its gradient is real).  The comparison is
gradcheck's: |analytic - numeric| <= atol + rtol |numeric| at every element, the worst kept.
"""

from __future__ import annotations

from . import backend
from .autograd import grad
from .errors import NonScalarOutputError
from .recording import evaluate, parse_value


def complex_check(program, values: dict, names: list, eps: float, atol: float, rtol: float):
    """(evaluation, analytic, numeric, worst, max_abs, max_rel, passed) of a real scalar
    ``program`` of complex values; analytic and numeric are name -> array of the variable's
    shape (complex where the variable is)."""
    np = backend.host
    ev = evaluate(program, values, requires_grad=names)
    if ev.output.size != 1 or ev.output.data.dtype.kind == "c":
        raise NonScalarOutputError(
            "check of complex values compares PyTorch's gradient of a real scalar output: "
            "take abs(...)**2, real(...) or imag(...) of this one",
            shape=list(ev.output.shape),
        )
    leaves = [ev.leaves[n] for n in names]
    got = grad(ev.output, leaves, allow_unused=True) if ev.output.requires_grad else ()
    analytic = {}
    for name, leaf, g in zip(names, leaves, list(got) + [None] * len(leaves)):
        data = np.zeros(leaf.shape, leaf.data.dtype) if g is None else backend.to_numpy(g.data)
        analytic[name] = np.asarray(data).reshape(leaf.shape)
    numeric = {}
    for name in names:
        base = np.asarray(backend.to_numpy(parse_value(name, values[name])))
        directions = (1.0, 1j) if base.dtype.kind == "c" else (1.0,)
        found = np.zeros(base.shape, dtype=complex if base.dtype.kind == "c" else float)
        for index in np.ndindex(base.shape):
            for unit in directions:
                sides = []
                for sign in (1, -1):
                    moved = base.astype(complex if unit == 1j else base.dtype, copy=True)
                    moved[index] += sign * eps * unit
                    sides.append(_real_value(program, {**values, name: moved}))
                found[index] += unit * (sides[0] - sides[1]) / (2 * eps)
        numeric[name] = found
    worst, max_abs, max_rel, passed = None, 0.0, 0.0, True
    for name in names:
        error = np.abs(analytic[name] - numeric[name])
        scale = np.abs(numeric[name])
        for index in np.ndindex(error.shape):
            e, s = float(error[index]), float(scale[index])
            max_abs = max(max_abs, e)
            max_rel = max(max_rel, e / s if s else (0.0 if e == 0 else float("inf")))
            if not e <= atol + rtol * s:
                passed = False
            excess = e - (atol + rtol * s)
            if worst is None or excess > worst["excess"]:
                worst = {"input": name, "input_index": list(index), "output_index": []}
                worst.update(mode="reverse", excess=excess)
                worst.update(analytic=analytic[name][index], numeric=numeric[name][index])
    if worst is not None:
        worst.pop("excess")
    return ev, analytic, numeric, worst, max_abs, max_rel, passed


def _real_value(program, values: dict) -> float:
    out = evaluate(program, values, check_domain=False).output
    return float(backend.host.real(backend.to_numpy(out.data)))
