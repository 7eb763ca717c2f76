"""1-D convolution and correlation (issue 27): NumPy's ``convolve(a, v, mode="full")`` and
``correlate(a, v, mode="valid")``, with the gradients of torch's conv1d.

Both are a slice of the full convolution ``full[k] = sum_i a[i] w[k - i]`` (length n + m - 1),
with ``w = v`` for convolve and ``w = v`` reversed for correlate (NumPy's c_k = sum_n a[n+k] v[n]):
"same" keeps max(n, m) elements and "valid" max(n, m) - min(n, m) + 1, from the offsets
NumPy takes.  The vjp puts g back in its place in the full length (zeros elsewhere) and
correlates it with the other argument ("valid": exactly the length of the input); the jvp is
the op on each tangent (both are bilinear).  Rules are written with the table's ops, so
second derivatives work.
"""

from __future__ import annotations

from .products import bilinear
from .reductions import Word
from .rules import _xp, call
from .table import ParsedParam, code

_VALID = Word("valid")  # a string attribute prints quoted, as the language writes it


def _window(n: int, m: int, mode: str, flipped: bool) -> tuple[int, int]:
    """Where the result of ``mode`` lies in the full convolution of lengths n and m: its
    offset and length (NumPy's; correlate's "same" starts elsewhere when v is longer)."""
    short, long = min(n, m), max(n, m)
    if mode == "full":
        return 0, n + m - 1
    if mode == "valid":
        return short - 1, long - short + 1
    if flipped and m > n:  # correlate(a, v, "same") with v longer than a
        return n // 2, long
    return (short - 1) // 2, long


def _mode(attrs, flipped: bool) -> str:
    """The node's mode, or the op's default where a caller of the op (not the language,
    which always gives one) left it out."""
    return attrs.get("mode", "valid" if flipped else "full")


def _checked(a, v, name: str):
    if a.ndim != 1 or v.ndim != 1 or a.shape[0] == 0 or v.shape[0] == 0:
        raise ValueError(
            f"{name}() takes two non-empty 1-D arrays, got shapes {list(a.shape)} and "
            f"{list(v.shape)}"
        )


def _convolve_forward(a, v, mode="full"):
    _checked(a, v, "convolve")
    return _xp().convolve(a, v, mode=mode[:])  # a plain str: a Word prints quoted


def _correlate_forward(a, v, mode=_VALID):
    _checked(a, v, "correlate")
    return _xp().correlate(a, v, mode=mode[:])  # a plain str: a Word prints quoted


def _padded(n, g, flipped: bool):
    """g in its place in the full convolution, zeros elsewhere."""
    la, lv = n.shapes[0][0], n.shapes[1][0]
    start, length = _window(la, lv, _mode(n.attrs, flipped), flipped)
    if (start, length) == (0, la + lv - 1):
        return g
    index = (slice(start, start + length),)
    return call("scatter", g, index=index, shape=(la + lv - 1,))


def _flip(x):
    return call("flip", x, axis=0)


def _convolve_vjp(n, g):
    a, v = n.inputs
    full = _padded(n, g, False)
    return (
        call("correlate", full, v, mode=_VALID) if n.needs[0] else None,
        call("correlate", full, a, mode=_VALID) if n.needs[1] else None,
    )


def _correlate_vjp(n, g):
    # correlate(a, v) is the convolution of a with v reversed
    a, v = n.inputs
    full = _padded(n, g, True)
    return (
        call("convolve", full, v, mode=_VALID) if n.needs[0] else None,
        _flip(call("correlate", full, a, mode=_VALID)) if n.needs[1] else None,
    )


def _torch_code(flipped: bool):
    """torch has no convolve: conv1d (a cross-correlation) of a padded by m - 1 on both sides
    is the full one, sliced as NumPy's mode says."""

    def spell(args, node, target):
        n, m = (x.value.shape[0] for x in node.args)
        start, length = _window(n, m, _mode(node.attrs, flipped), flipped)
        kernel = args[1] if flipped else f"torch.flip({args[1]}, (0,))"
        full = (
            f"torch.nn.functional.conv1d({args[0]}.reshape(1, 1, -1), "
            f"{kernel}.reshape(1, 1, -1), padding={m - 1}).reshape(-1)"
        )
        return f"{full}[{start}:{start + length}]"

    return spell


_MODES = "'full', 'same' or 'valid'"  # NumPy's modes of convolve and correlate


def _mode_param(value) -> Word:
    """The ``mode`` as written: one of NumPy's, a string in quotes (None: a name was
    written)."""
    if isinstance(value, str) and value in ("full", "same", "valid"):
        return Word(value)
    if isinstance(value, str):
        raise ValueError(f"must be {_MODES}, not {value!r}")
    raise ValueError(f"must be {_MODES}, a string in quotes")


for _name, _node, _forward, _vjp, _default in (
    ("convolve", "ConvolutionBackward0", _convolve_forward, _convolve_vjp, Word("full")),
    ("correlate", "ConvolutionBackward0", _correlate_forward, _correlate_vjp, _VALID),
):
    bilinear(
        _name,
        _node,  # torch.nn.functional.conv1d's node
        _forward,
        _vjp,
        None,
        ("rows",),
        code(
            f"{{xp}}.{_name}({{0}}, {{1}}, mode={{mode}})", torch=_torch_code(_name == "correlate")
        ),
        params=(ParsedParam("mode", "mode", _default, parse=_mode_param, strings=True),),
    )
