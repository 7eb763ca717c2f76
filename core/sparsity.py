"""Structural sparsity (issue 28): which input elements each output element depends on, and
the column coloring that compresses a sparse Jacobian into a few forward sweeps.

:class:`Pattern` is an interpretation of the one interpreter whose values are boolean sparse
matrices (SciPy's CSR): row r of a node's pattern holds the input elements (columns, every
variable differentiated, concatenated in order) that element r of the node depends on along a
differentiable path.  The rules follow the op table's facts, never an op's name:

* elementwise ops and comparisons: each argument's rows broadcast to the result, unioned
  (an argument the op does not differentiate, and a ``zero_grad`` op, add nothing);
* reductions: the rows of each reduced group unioned (the group of each element from its
  ``axis``/``keepdims``);
* ``copies`` ops (indexing, reshape, transpose, concatenate, tile, triu...): the forward run
  on element numbers says which argument element each result element copies (0: none);
* ``fiber`` ops along an axis (cumsum, sort, softmax): each element on its fiber's elements
  (up to it, or all);
* ``A @ x`` with a constant matrix: its nonzeros route the rows;
* anything else: every result element depends on every input element its arguments depend on
  (conservative: a pattern may hold more than the derivative's nonzeros, never fewer).

The coloring (:func:`color_columns`) gives structurally orthogonal columns one color: a
Jacobian is then J = decompress(J S) for the seed S of the colors, one forward sweep each.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from . import backend, limits
from .errors import InputError
from .interpret import Interpretation, interpret
from .recording import evaluate, evaluation_warnings
from .tensor import OPS


def _sparse():
    import scipy.sparse  # noqa: PLC0415 - SciPy only for --sparse and sparsity

    return scipy.sparse


class Pattern(Interpretation):
    """Values: CSR boolean matrices, rows = the node's elements, columns = the input elements
    of the variables ``wanted`` (in order, each flattened)."""

    def __init__(self, values_by_node: dict, wanted: list, sizes: dict):
        self.by_node = values_by_node
        self.offsets = {}
        total = 0
        for name in wanted:
            self.offsets[name] = total
            total += sizes[name]
        self.n = total
        self.patterns: dict = {}  # id(Expr) -> its pattern (the routed matmul reads them)

    def _empty(self, rows: int):
        return _sparse().csr_matrix((rows, self.n), dtype=bool)

    def const(self, node):
        return self._empty(self._size(node))

    def var(self, name: str, value):
        size = int(backend.host.size(value))
        if name not in self.offsets:
            return self._empty(size)
        sp = _sparse()
        start = self.offsets[name]
        eye = sp.eye(size, self.n, k=start, dtype=bool, format="csr")
        return eye

    def _size(self, node) -> int:
        return int(self.by_node[id(node)].data.size)

    def _shape(self, node) -> tuple:
        return tuple(self.by_node[id(node)].data.shape)

    def apply(self, node, op, args: list):
        for arg, p in zip(node.args, args):
            self.patterns[id(arg)] = p
        rows = self._size(node)
        flags = op.flags(len(args))  # every argument of a variadic op
        live = [(a, p) for a, p, f in zip(node.args, args, flags) if f and p.nnz]
        if not live or op.zero_grad:
            return self._empty(rows)
        if op.kind in ("elementwise", "comparison"):
            return _union([self._broadcast(a, p, node) for a, p in live], rows, self.n)
        if op.kind == "reduction" and "axis" in node.attrs:
            return self._grouped(live[0][0], live[0][1], node)
        if op.copies:
            return self._copies(node, op, args)
        if op.fiber and len(live) == 1:
            return self._fiber(node, op.fiber == "prefix", live[0][0], live[0][1])
        rule = _RULES.get(op)  # this interpretation's rules, keyed by the Op (as core/batch.py's)
        if rule is not None and len(live) == 1:
            routed = rule(self, node, live[0][0])
            if routed is not None:
                return routed
        return self._dense(rows, [p for _, p in live])

    def _broadcast(self, arg, pattern, node):
        """``arg``'s rows taken for each element of ``node`` (NumPy broadcasting)."""
        np = backend.host
        shape_a, shape = self._shape(arg), self._shape(node)
        if shape_a == shape:
            return pattern
        index = np.broadcast_to(np.arange(pattern.shape[0]).reshape(shape_a), shape).ravel()
        return _rows(pattern, index)

    def _grouped(self, arg, pattern, node):
        """A reduction: each result element unions the rows of its group."""
        np = backend.host
        shape_a = self._shape(arg)
        axis = node.attrs.get("axis")  # keepdims: the same elements in the same order
        axes = tuple(range(len(shape_a))) if axis is None else axis
        axes = tuple(
            a % max(len(shape_a), 1) for a in (axes if isinstance(axes, tuple) else (axes,))
        )
        kept = [d for d in range(len(shape_a)) if d not in axes]
        coords = np.indices(shape_a).reshape(len(shape_a), -1) if shape_a else np.zeros((0, 1), int)
        out_shape = tuple(shape_a[d] for d in kept)
        target = (
            np.ravel_multi_index(tuple(coords[d] for d in kept), out_shape)
            if kept
            else np.zeros(coords.shape[1], dtype=int)
        )
        size = int(np.prod(out_shape)) if kept else 1
        group = _sparse().csr_matrix(
            (np.ones(target.size, dtype=bool), (target, np.arange(target.size))),
            shape=(size, pattern.shape[0]),
        )
        return _boolean(group @ pattern)

    def _copies(self, node, op, args):
        """Each result element copies one argument element (or is 0): the forward on element
        numbers (1-based, the arguments' numbers apart) says which."""
        np = backend.host
        numbered, offset, stacked = [], 0, []
        for a, p in zip(node.args, args):
            size = p.shape[0]
            numbered.append(
                np.arange(offset + 1, offset + size + 1, dtype=np.float64).reshape(self._shape(a))
            )
            stacked.append(p)
            offset += size
        xp_values = [backend.asarray(v) for v in numbered]
        out = backend.to_numpy(op.forward(*xp_values, **node.attrs)).ravel()
        source = np.rint(np.real(out)).astype(np.int64)
        every = _sparse().vstack(stacked + [self._empty(1)], format="csr")  # row offset: none
        picked = np.where(source > 0, source - 1, offset)
        return _rows(every, picked)

    def _fiber(self, node, prefix: bool, arg, pattern):
        """cumsum, sort, softmax...: each result element on the elements of its fiber along
        ``axis`` (None: the flattened array, as NumPy), those up to it where ``prefix``."""
        np = backend.host
        shape = self._shape(arg)
        axis = node.attrs.get("axis")
        if axis is None or not shape:
            shape, axis = (pattern.shape[0],), 0
        axis %= len(shape)
        length = shape[axis]
        # each row: one fiber's element numbers, in order along the axis
        fibers = np.moveaxis(np.arange(pattern.shape[0]).reshape(shape), axis, -1)
        fibers = fibers.reshape(-1, length)
        pairs = length * (length + 1) // 2 if prefix else length * length
        limits.check(fibers.shape[0] * pairs, 12 + 16, "the sparsity pattern")  # and indices
        if prefix:
            to, of = np.tril_indices(length)
        else:
            to, of = (g.ravel() for g in np.indices((length, length)))
        mixing = _sparse().csr_matrix(
            (
                np.ones(fibers.shape[0] * to.size, dtype=bool),
                (fibers[:, to].ravel(), fibers[:, of].ravel()),
            ),
            shape=(pattern.shape[0], pattern.shape[0]),
        )
        return _boolean(mixing @ pattern)

    def _routed(self, node, variable_arg):
        """``A @ x`` or ``x @ A`` with a constant matrix A and a vector x: A's nonzeros route
        x's rows (None: another layout, left to the dense rule)."""
        np = backend.host
        a, b = node.args
        if variable_arg is b and len(self._shape(a)) == 2 and len(self._shape(b)) == 1:
            matrix = backend.to_numpy(self.by_node[id(a)].data) != 0
            return _boolean(_sparse().csr_matrix(matrix) @ self._pattern_of(b))
        if variable_arg is a and len(self._shape(a)) == 1 and len(self._shape(b)) == 2:
            matrix = backend.to_numpy(self.by_node[id(b)].data) != 0
            return _boolean(
                _sparse().csr_matrix(np.ascontiguousarray(matrix.T)) @ self._pattern_of(a)
            )
        return None

    def _pattern_of(self, node):
        return self.patterns[id(node)]

    def _dense(self, rows: int, patterns: list):
        """Every element on every input element the arguments depend on (conservative)."""
        np = backend.host
        cols = np.unique(np.concatenate([p.indices for p in patterns]))
        limits.check(rows * cols.size, 12, "the sparsity pattern")
        indptr = np.arange(rows + 1, dtype=np.int64) * cols.size
        return _sparse().csr_matrix(
            (np.ones(rows * cols.size, dtype=bool), np.tile(cols, rows), indptr),
            shape=(rows, self.n),
        )


def _rows(pattern, index):
    """``pattern[index]``, its size asked of the memory limit first (a row that many
    elements repeat: sum(x) * y)."""
    counts = backend.host.diff(pattern.indptr)
    limits.check(int(counts[index].sum()), 12, "the sparsity pattern")  # an index and a flag
    return pattern[index]


def _union(patterns: list, rows: int, n: int):
    total = patterns[0]
    for p in patterns[1:]:
        total = total + p
    return _boolean(total)


def _boolean(m):
    m = m.tocsr()
    m.data = m.data.astype(bool)
    m.eliminate_zeros()
    m.sort_indices()
    return m


#: the rules of ops whose pattern their kind and facts do not give: A @ x routes x's rows
_RULES = {OPS["matmul"]: Pattern._routed}


def jacobian_pattern(program, values: dict, wanted: list, ev=None):
    """(pattern, evaluation, {name: size}): the Jacobian's structural pattern, rows = the
    output's elements, columns = ``wanted``'s elements in order (``ev``: the program's
    evaluation at ``values`` where the caller has one)."""
    ev, sizes = _evaluated(program, values, wanted, ev)
    walk = interpret(program, Pattern(ev.by_node, wanted, sizes), values)
    return _boolean(walk.result), ev, sizes


def _evaluated(program, values: dict, wanted: list, ev) -> tuple:
    """The evaluation (made here where none is given) and each wanted variable's size."""
    ev = evaluate(program, values) if ev is None else ev
    sizes = {name: int(ev.leaves[name].data.size) for name in wanted if name in ev.leaves}
    missing = [n for n in wanted if n not in sizes]
    if missing:
        raise InputError(f"no value for {missing[0]!r}", variable=missing[0])
    return ev, sizes


def color_columns(pattern) -> tuple:
    """(colors, k): a color per column such that columns of one color share no row
    (structurally orthogonal), k colors; the fewer of a greedy coloring (largest degree first,
    for up to :data:`GREEDY_MAX` columns and :data:`GREEDY_PAIRS_MAX` conflicts) and the
    band coloring j mod w (w = the widest row's span).  A few dense columns (hubs: a
    parameter every residual reads) take a color each, the others are colored without
    them, so that their span does not make the band as wide as the matrix."""
    np = backend.host
    n = pattern.shape[1]
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0
    hub = _hubs(pattern)
    if hub is not None:
        kept = pattern.tocsc()[:, ~hub].tocsr()
        colors, k = color_columns(kept)
        return _with_hubs(colors, k, hub)
    band = _band_colors(pattern)
    if n > GREEDY_MAX or _pairs(pattern) > GREEDY_PAIRS_MAX:  # the conflicts would not fit
        return band, int(band.max()) + 1 if band.size else 0
    greedy = _greedy_colors(pattern)
    best = greedy if greedy.max() < band.max() else band
    return best, int(best.max()) + 1


#: a column is a hub (colored apart) where it holds more than this many nonzeros and ten
#: times its pattern's mean; and only while there are at most HUBS_MAX of them
HUB_DEGREE = 64
HUBS_MAX = 256


def _hubs(pattern):
    """The dense columns of ``pattern`` as a mask (see :data:`HUB_DEGREE`), or None where
    there are none or too many to color apart."""
    np = backend.host
    n = pattern.shape[1]
    degree = np.bincount(pattern.tocsr().indices, minlength=n)
    hub = degree > max(HUB_DEGREE, 10 * pattern.nnz / max(n, 1))
    count = int(hub.sum())
    return hub if 0 < count <= HUBS_MAX and count < n else None


def _with_hubs(colors, k: int, hub) -> tuple:
    """The colors of the columns left (``colors``, ``k`` of them) with each hub a color of
    its own after them."""
    np = backend.host
    out = np.empty(hub.size, dtype=np.int64)
    out[~hub] = colors
    out[hub] = k + np.arange(int(hub.sum()))
    return out, k + int(hub.sum())


class Coloring(NamedTuple):
    """How a sparse derivative is compressed: ``k`` sweeps, one per color.  ``mode``
    "columns": a color per column, forward sweeps J S; "rows": a color per row, reverse
    sweeps S^T J; "star": a symmetric (Hessian) pattern's columns, forward sweeps, each
    entry read from its row or, where two columns of its color share that row, from its
    mirror (the star coloring guarantees one of them is alone)."""

    colors: Any  # an int64 array: a color per column (per row in mode "rows")
    k: int
    mode: str


#: the most columns (or rows) the greedy colorings take on (a Python loop each): past it the
#: band coloring j mod w, vectorized
GREEDY_MAX = 20_000
#: the most pairs of columns sharing a row the greedy coloring lists (its conflict matrix: an
#: arrowhead of n has n^2): past it the band coloring
GREEDY_PAIRS_MAX = 2 * 10**7
#: the most steps the star coloring may take (the sum of its vertices' squared degrees):
#: an arrowhead of 20,000 takes 4 * 10^8 elementwise steps in NumPy, a second or so
STAR_WORK_MAX = 5 * 10**8


def coloring(pattern, of: str = "jacobian") -> Coloring:
    """The cheaper compression of ``pattern`` (``of`` "jacobian", "hessian": symmetric, or
    "columns": forward sweeps only): a Jacobian's columns (forward sweeps, batched) unless
    its rows need fewer than half as many colors (reverse sweeps, one pass each: a dense
    row, a sum of every residual); a Hessian's columns unless a star coloring needs fewer
    (an arrowhead: 2 for n)."""
    colors, k = color_columns(pattern)
    columns = Coloring(colors, k, "columns")
    if columns.k <= 3 or of == "columns":  # a band's 3: no star or row coloring gives fewer
        return columns
    if of == "hessian":
        stars = [c for c in (_star_colors(pattern), _star_hubs(pattern)) if c is not None]
        return min([*stars, columns], key=lambda c: c.k)
    colors, k = color_columns(pattern.T.tocsr())
    rows = Coloring(colors, k, "rows")
    return rows if 2 * rows.k < columns.k else columns


def colored(pattern, memo: dict | None = None, of: str = "jacobian") -> Coloring:
    """:func:`coloring` of ``pattern``, taken from ``memo`` where it colored the same
    pattern last: a dict the caller keeps between calls (minimize's and solve's Newton
    steps: the pattern is found again at each point, as a matrix's nonzeros may depend on
    it, but its coloring, the greedy loop, only when it changed)."""
    if memo is not None and memo.get("of") == of and _same(memo.get("pattern"), pattern):
        return memo["coloring"]
    result = coloring(pattern, of)
    if memo is not None:
        memo["of"], memo["pattern"], memo["coloring"] = of, pattern, result
    return result


def _same(a, b) -> bool:
    """Two canonical patterns (see :func:`_boolean`) with the same nonzeros."""
    np = backend.host
    return (
        a is not None
        and a.shape == b.shape
        and np.array_equal(a.indptr, b.indptr)
        and np.array_equal(a.indices, b.indices)
    )


def _band_colors(pattern):
    """j mod w, w the widest row's span; a few rows far wider than the rest (the corners of
    a periodic band, roll(x, 1)) are left out of w, and their columns take a color each."""
    np = backend.host
    csr = pattern.tocsr()
    n = csr.shape[1]
    counts = np.diff(csr.indptr)
    if not csr.nnz:
        return np.zeros(n, dtype=np.int64)
    rows = np.repeat(np.arange(csr.shape[0]), counts)
    first = np.full(csr.shape[0], np.iinfo(np.int64).max)
    last = np.full(csr.shape[0], -1)
    np.minimum.at(first, rows, csr.indices)
    np.maximum.at(last, rows, csr.indices)
    spans = np.where(counts > 0, last - first + 1, 0)
    wide = spans > max(HUB_DEGREE, 8 * int(np.median(spans[counts > 0])))
    apart = np.unique(csr.indices[wide[rows]]) if wide.any() else None
    if apart is None or apart.size > HUBS_MAX:
        return np.arange(n, dtype=np.int64) % max(int(spans.max()), 1)
    width = max(int(spans[~wide].max(initial=1)), 1)
    colors = np.arange(n, dtype=np.int64) % width
    colors[apart] = width + np.arange(apart.size)
    return colors


def _greedy_colors(pattern):
    np = backend.host
    csc = pattern.tocsc()
    csr = pattern.tocsr()
    n = csc.shape[1]
    conflict = _boolean(csc.T @ csr).tocsr()  # columns sharing a row
    degree = np.diff(conflict.indptr)
    colors = np.full(n, -1, dtype=np.int64)
    for v in np.argsort(-degree, kind="stable"):
        taken = colors[conflict.indices[conflict.indptr[v] : conflict.indptr[v + 1]]]
        taken = taken[taken >= 0]
        if taken.size == 0:
            colors[v] = 0
            continue
        used = np.zeros(taken.max() + 2, dtype=bool)
        used[taken] = True
        colors[v] = int(np.argmin(used))
    return colors


def structurally_orthogonal(pattern, colors) -> bool:
    """No row holds two columns of one color (what decompression needs)."""
    np = backend.host
    csr = pattern.tocsr()
    rows = np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr))
    pairs = rows * (int(colors.max()) + 1 if colors.size else 1) + colors[csr.indices]
    return np.unique(pairs).size == pairs.size


def _star_colors(pattern) -> Coloring | None:
    """A star coloring of a symmetric pattern's graph (columns adjacent where they share a
    nonzero off the diagonal): adjacent columns differ, and no path of four columns takes
    two colors (Gebremedhin, Manne and Pothen, "What color is your Jacobian?", SIAM Review
    2005).  Greedy, largest degree first; v takes the least color that none of these has:
    a colored neighbor w; a colored x beyond w where x has another neighbor of w's color
    (v-w-x-y); every colored x beyond w where v has another neighbor of w's color
    (u-v-w-x).  A path's last column colored checks it, so every path is checked once.
    None past :data:`GREEDY_MAX` columns or :data:`STAR_WORK_MAX` steps."""
    np = backend.host
    graph = pattern.tocsr().astype(bool)
    graph.setdiag(False)
    graph = _boolean(graph)
    n = graph.shape[0]
    indptr, indices = graph.indptr, graph.indices
    degree = np.diff(indptr).astype(np.int64)
    if n > GREEDY_MAX or int((degree * degree).sum()) > STAR_WORK_MAX:
        return None
    colors = np.full(n, -1, dtype=np.int64)
    near = np.zeros((n, 8), dtype=np.int64)  # near[x, c]: x's neighbors of color c
    for v in np.argsort(-degree, kind="stable"):
        around = indices[indptr[v] : indptr[v + 1]]
        forbidden = [colors[around]]
        for w in around[colors[around] >= 0]:
            beyond = indices[indptr[w] : indptr[w + 1]]
            beyond = beyond[(beyond != v) & (colors[beyond] >= 0)]
            cw = colors[w]
            if near[v, cw] < 2:  # only v-w-x-y paths: x with another neighbor of w's color
                beyond = beyond[near[beyond, cw] >= 2]
            forbidden.append(colors[beyond])
        taken = np.concatenate(forbidden)
        used = np.zeros(int(taken.max(initial=-1)) + 2, dtype=bool)
        used[taken[taken >= 0]] = True
        c = int(np.argmin(used))
        colors[v] = c
        if c >= near.shape[1]:
            near = np.concatenate([near, np.zeros_like(near)], axis=1)
        near[around, c] += 1
    return Coloring(colors, int(colors.max()) + 1 if n else 0, "star")


def _star_hubs(pattern) -> Coloring | None:
    """A star coloring of a symmetric pattern with a few dense rows and columns (an
    arrowhead: one variable coupled to all), at any size: each hub a color of its own, the
    other columns colored as columns of the pattern without the hubs' rows and columns.
    Two columns of a color then share no row but a hub's, whose entries are read from the
    hub's own column (its color alone), so no path of four takes two colors."""
    hub = _hubs(pattern)
    if hub is None:
        return None
    np = backend.host
    keep = _sparse().diags((~hub).astype(np.float64), dtype=np.float64)
    rest = _boolean(keep @ pattern @ keep)
    colors, k = color_columns(rest)
    colors, k = _with_hubs(colors[~hub], k, hub)
    return Coloring(colors, k, "star")


def star_colored(pattern, colors) -> bool:
    """A star coloring of a symmetric pattern: adjacent columns differ, and every nonzero
    (i, j) is alone in its row's color or its mirror (j, i) in its (what :func:`_decompressed`
    reads)."""
    np = backend.host
    rows, cols = _entries(pattern)
    off = rows != cols
    if (colors[rows[off]] == colors[cols[off]]).any():
        return False
    direct, mirror = _alone(rows, cols, colors)
    return bool(np.all(direct | mirror))


# ---------------------------------------------------------------------------
# The Hessian's pattern: every nonlinear op makes the inputs of each of its elements interact
# ---------------------------------------------------------------------------


class _Interactions(Pattern):
    """:class:`Pattern`, summing the Hessian's pattern as it goes: where an op's second
    derivative along its live arguments is not zero (its entry's ``linear``:
    :meth:`~.ops.table.Op.linear_in`), the input elements it reaches interact.  For an
    elementwise op, per result element: those of two different arguments (P_a^T P_b: x*y
    pairs x with y only), and those of one argument it is not linear in (P_a^T P_a: div's
    denominator); for any other op, all of its result's (P^T P, conservative)."""

    def __init__(self, *a):
        super().__init__(*a)
        self.hessian = _sparse().csr_matrix((self.n, self.n), dtype=bool)  # none yet

    def apply(self, node, op, args: list):
        out = super().apply(node, op, args)
        flags = op.flags(len(args))
        live = tuple(bool(f and p.nnz) for f, p in zip(flags, args))
        if not out.nnz or op.linear_in(live):
            return out
        if op.kind != "elementwise":
            self._interact(out, out)
            return out
        parts = [
            (i, self._broadcast(a, p, node))
            for i, (a, p, f) in enumerate(zip(node.args, args, live))
            if f
        ]
        for i, p in parts:
            alone = tuple(k == i for k in range(len(args)))
            if not op.linear_in(alone):
                self._interact(p, p)
            for j, q in parts:
                if j > i:
                    self._interact(p, q)
        return out

    def _interact(self, p, q):
        """Each element's inputs in ``p`` interact with its inputs in ``q`` (both ways)."""
        np = backend.host
        counts_p = np.diff(p.indptr).astype(np.int64)
        counts_q = np.diff(q.indptr).astype(np.int64)
        limits.check(int((counts_p * counts_q).sum()), 24, "the Hessian's sparsity pattern")
        product = p.T @ q
        self.hessian = _boolean(self.hessian + product + product.T)


def _pairs(p) -> int:
    """At most how many nonzeros P^T P can have (each row's count squared, summed)."""
    counts = backend.host.diff(p.indptr).astype(backend.host.int64)
    return int((counts * counts).sum())


def hessian_pattern(program, values: dict, wanted: list, ev=None):
    """(pattern, evaluation, sizes): the Hessian's structural pattern of a scalar program."""
    ev, sizes = _evaluated(program, values, wanted, ev)
    interactions = _Interactions(ev.by_node, wanted, sizes)
    interpret(program, interactions, values)
    return interactions.hessian, ev, sizes


# ---------------------------------------------------------------------------
# Compressed evaluation: one forward sweep per color, then decompression
# ---------------------------------------------------------------------------


class SparseMatrix:
    """One block of a sparse Jacobian or Hessian: COO, 0-based, sorted row-major (SPEC's
    ``{"shape", "rows", "cols", "values", "colors"}``)."""

    def __init__(self, shape, rows, cols, values, colors: int):
        self.shape = tuple(int(s) for s in shape)
        self.rows, self.cols, self.values, self.colors = rows, cols, values, colors

    def document(self) -> dict:
        return {
            "shape": list(self.shape),
            "rows": self.rows.tolist(),
            "cols": self.cols.tolist(),
            "values": self.values,
            "colors": self.colors,
        }

    def dense(self):
        np = backend.host
        out = np.zeros(self.shape, dtype=np.asarray(self.values).dtype)
        out[self.rows, self.cols] = self.values
        return out


def _seeds(colors, k: int, sizes: dict, shapes: dict, dtype) -> list:
    """The seed of each variable: (k, *shape), S[c, j] = 1 where column j has color c (none
    where its color is -1)."""
    from .tensor import Tensor  # noqa: PLC0415 - core's tensors (the sweep's tangents)

    np, seeds, offset = backend.host, [], 0
    for name, size in sizes.items():
        block = np.zeros((k, size), dtype=dtype)
        c = colors[offset : offset + size]
        block[c[c >= 0], np.flatnonzero(c >= 0)] = 1
        seeds.append(Tensor._wrap(backend.asarray(block.reshape((k,) + shapes[name]))))
        offset += size
    return seeds


def _entries(pattern) -> tuple:
    """The pattern's nonzeros (rows, cols), sorted row-major (SPEC's COO order)."""
    coo = pattern.tocoo()
    order = backend.host.lexsort((coo.col, coo.row))
    return coo.row[order], coo.col[order]


def _alone(rows, cols, colors) -> tuple:
    """(direct, mirror) for each nonzero (i, j): j is the one column of its color in row i;
    i is the one of its color in row j (the mirror (j, i) of a symmetric pattern)."""
    np = backend.host
    k = int(colors.max()) + 1 if colors.size else 1
    keys, counts = np.unique(rows.astype(np.int64) * k + colors[cols], return_counts=True)
    mirrored = cols.astype(np.int64) * k + colors[rows]
    at = np.minimum(np.searchsorted(keys, mirrored), keys.size - 1)
    mirror = (keys[at] == mirrored) & (counts[at] == 1)
    direct = counts[np.searchsorted(keys, rows.astype(np.int64) * k + colors[cols])] == 1
    return direct, mirror


def _decompressed(pattern, compressed, coloring: Coloring):
    """(rows, cols, values, the whole matrix as CSR): each nonzero (i, j) from the
    compressed sweeps, ``compressed[c]`` the sweep of color c: J S's column (row i of
    sweep colors[j]), S^T J's row (entry j of sweep colors[i]), or for a star coloring the
    column where j is alone of its color in row i, else the mirror's, entry j of sweep
    colors[i]."""
    rows, cols = _entries(pattern)
    colors = coloring.colors
    if coloring.mode == "rows":
        values = compressed[colors[rows], cols]
    else:
        values = compressed[colors[cols], rows]
    if coloring.mode == "star":
        direct, _ = _alone(rows, cols, colors)
        far = ~direct
        values[far] = compressed[colors[rows[far]], cols[far]]
    whole = _sparse().csr_matrix((values, (rows, cols)), shape=pattern.shape)
    return rows, cols, values, whole


#: :func:`_mended` sweeps lines again MEND_SWEEPS times at most, each of max(k, MEND_LINES)
#: lines (k the colors): its time a few sweeps, its memory the compressed sweep's where
#: k >= 16, else 16 lines of the matrix (the memory limit asked first, as for every sweep)
MEND_LINES = 16
MEND_SWEEPS = 4


def _mended(rows, cols, values, by_rows: bool, exact, k: int, warnings) -> bool:
    """Sweep again, alone, each line (column; row where ``by_rows``) holding a nan entry,
    and take its entries from that sweep: ``exact(lines)`` gives those lines of the matrix
    (an array, one line each).  A compressed sweep adds the columns of a color, and an
    infinite tangent of one reaches rows it does not touch through exact zeros the pattern
    reads as no edge (a constant matrix's): 0 * inf is nan there, in the entry of another
    column of its color (``A @ sqrt(x)`` at x = 0).  A line that is nan on its own stays so.
    Past MEND_SWEEPS sweeps' worth of lines (a matrix nan throughout: sqrt(x) at x < 0) it
    sweeps none and says so in ``warnings`` (a list, or None).  Whether it swept any."""
    np = backend.host
    bad = np.isnan(values)
    if not bad.any():
        return False
    lines, other = (rows, cols) if by_rows else (cols, rows)
    redo = np.unique(lines[bad])
    chunk = max(k, MEND_LINES)
    if redo.size > MEND_SWEEPS * chunk:
        if warnings is not None:
            what = "rows" if by_rows else "columns"
            warnings.append(
                f"{int(bad.sum()):,} entries of the sparse result are nan, in {redo.size:,} "
                f"{what}: too many to take each alone, so some may be nan only because "
                f"another of their color is infinite (0 * inf); the dense result takes each "
                f"alone"
            )
        return False
    for start in range(0, redo.size, chunk):
        part = redo[start : start + chunk]
        swept = exact(part)
        mask = np.isin(lines, part)
        values[mask] = swept[np.searchsorted(part, lines[mask]), other[mask]]
    return True


def _alone_colors(lines, n: int):
    """A color for each of ``lines`` (0, 1, ...) among n, -1 for the others: each swept alone."""
    np = backend.host
    colors = np.full(n, -1, dtype=np.int64)
    colors[lines] = np.arange(lines.size)
    return colors


def _blocks(rows, cols, values, row_sizes: dict, col_sizes: dict, colors: int) -> dict:
    """The matrix cut into its blocks by the variables along rows and columns."""
    out: dict = {}
    r0 = 0
    for a, ra in row_sizes.items():
        c0 = 0
        for b, cb in col_sizes.items():
            pick = (rows >= r0) & (rows < r0 + ra) & (cols >= c0) & (cols < c0 + cb)
            out.setdefault(a, {})[b] = SparseMatrix(
                (ra, cb), rows[pick] - r0, cols[pick] - c0, values[pick], colors
            )
            c0 += cb
        r0 += ra
    return out


def _prepared(program, values: dict, wanted: list, pattern, memo, of: str, warnings) -> tuple:
    """(evaluation, pattern, sizes, shapes, coloring) of a sparse Jacobian (``of``
    "jacobian") or Hessian: one evaluation for the pattern (``pattern`` where the caller has
    found it) and the sweeps; its coloring (``memo``: see :func:`colored`); its warnings
    added to ``warnings`` (a list, or None: not asked for)."""
    ev = evaluate(program, values, requires_grad=wanted)
    if warnings is not None:
        warnings.extend(evaluation_warnings(program, ev))
    if pattern is None:
        find = jacobian_pattern if of == "jacobian" else hessian_pattern
        pattern, _, sizes = find(program, values, wanted, ev)
    else:
        _, sizes = _evaluated(program, values, wanted, ev)
    shapes = {n: tuple(ev.leaves[n].shape) for n in wanted}
    values_in_play = [ev.output.data, *(ev.leaves[n].data for n in wanted)]
    if of == "jacobian" and any(backend.is_complex(v) for v in values_in_play):
        of = "columns"  # reverse sweeps give conj(J)'s rows (PyTorch's convention)
    return ev, pattern, sizes, shapes, colored(pattern, memo, of)


def sparse_jacobian(
    program, values: dict, wanted: list, pattern=None, memo: dict | None = None, warnings=None
) -> tuple:
    """(value, {name: SparseMatrix of shape (output size, name's size)}, colors, the whole
    matrix as CSR); ``pattern``: the Jacobian's, where the caller has found it; ``memo``:
    see :func:`colored`; ``warnings``: a list that gets the evaluation's warnings (a domain,
    a derivative taken at a kink), as the dense Jacobian's.  One batched forward sweep per
    column color, or one reverse sweep per row color where the rows need far fewer (see
    :func:`coloring`); a line with a nan entry swept again alone (:func:`_mended`)."""
    ev, pattern, sizes, shapes, coloring = _prepared(
        program, values, wanted, pattern, memo, "jacobian", warnings
    )
    colors, k = coloring.colors, coloring.k
    xs = [ev.leaves[n] for n in wanted]
    out = ev.output
    m = int(out.data.size)
    by_rows = coloring.mode == "rows"
    width = sum(sizes.values()) if by_rows else m
    limits.check(k * width, out.data.dtype.itemsize, "the compressed Jacobian")
    compressed = backend.host.zeros((max(k, 1), width), dtype=out.data.dtype)

    def sweeps(colors, k: int):
        if by_rows:
            return _reverse_sweeps(out, xs, Coloring(colors, k, "rows"), sizes)
        return _forward_sweeps([out], xs, colors, k, sizes, shapes)

    if k and out.requires_grad:
        compressed = sweeps(colors, k)
    rows, cols, vals, whole = _decompressed(pattern, compressed, coloring)
    n = m if by_rows else sum(sizes.values())  # the lines: rows or columns

    def alone(lines):
        return sweeps(_alone_colors(lines, n), lines.size)

    if k and _mended(rows, cols, vals, by_rows, alone, k, warnings):
        whole = _sparse().csr_matrix((vals, (rows, cols)), shape=pattern.shape)
    blocks = _blocks(rows, cols, vals, {"out": m}, sizes, k)["out"]
    return backend.to_numpy(out.data), blocks, k, whole


def _forward_sweeps(outs: list, xs, colors, k: int, sizes: dict, shapes: dict):
    """J S for the outputs ``outs`` (their elements in order along each row), S the seeds
    of ``colors`` (:func:`_seeds`): one batched forward sweep of k directions."""
    from .forward import Tape  # noqa: PLC0415
    from .tensor import no_grad  # noqa: PLC0415

    np = backend.host
    dtype = outs[0].data.dtype
    limits.check(k * sum(int(o.data.size) for o in outs), dtype.itemsize, "the sweeps")
    with no_grad():
        swept = Tape(outs, xs).run(_seeds(colors, k, sizes, shapes, dtype), k)
    return np.concatenate(
        [
            np.zeros((k, int(o.data.size)), dtype=dtype)
            if t is None
            else backend.to_numpy(t.data).reshape(k, int(o.data.size))
            for o, t in zip(outs, swept)
        ],
        axis=1,
    )


def _reverse_sweeps(out, xs, coloring: Coloring, sizes: dict):
    """S^T J: for each row color c, the gradient of the output elements of color c summed
    (one backward pass each), the variables' elements in order."""
    from .autograd import grad  # noqa: PLC0415
    from .tensor import Tensor  # noqa: PLC0415

    np = backend.host
    dtype = out.data.dtype
    swept = []
    for c in range(coloring.k):
        seed = (coloring.colors == c).astype(dtype).reshape(out.data.shape)
        gs = grad(
            out,
            xs,
            grad_outputs=Tensor._wrap(backend.asarray(seed)),
            retain_graph=True,
            allow_unused=True,
        )
        swept.append(
            np.concatenate(
                [
                    np.zeros(size, dtype=dtype) if g is None else backend.to_numpy(g.data).ravel()
                    for g, size in zip(gs, sizes.values())
                ]
            )
        )
    return np.stack(swept)


def sparse_hessian(
    program, values: dict, wanted: list, pattern=None, memo: dict | None = None, warnings=None
) -> tuple:
    """(value, {a: {b: SparseMatrix}}, colors, the whole matrix as CSR, gradient) of a
    scalar program: the Hessian's pattern (``pattern`` where the caller has found it)
    colored (``memo``: see :func:`colored`; its columns or a star coloring), one forward
    sweep over the gradient's graph per color; a column with a nan entry swept again alone
    (:func:`_mended`); ``warnings``: as :func:`sparse_jacobian`'s."""
    from .functional import _gradients  # noqa: PLC0415
    from .program import non_scalar_error  # noqa: PLC0415

    ev, pattern, sizes, shapes, coloring = _prepared(
        program, values, wanted, pattern, memo, "hessian", warnings
    )
    colors, k = coloring.colors, coloring.k
    if ev.output.data.size != 1:
        raise non_scalar_error(tuple(ev.output.shape), "hessian")
    xs = tuple(ev.leaves[n] for n in wanted)
    n = sum(sizes.values())
    dtype = ev.output.data.dtype
    limits.check(k * n, dtype.itemsize, "the compressed Hessian")  # before any allocation
    compressed = backend.host.zeros((max(k, 1), n), dtype=dtype)
    gs = _gradients(ev.output, xs)
    gradient = {name: backend.to_numpy(g.data) for name, g in zip(wanted, gs)}
    if k:
        compressed = _forward_sweeps(list(gs), xs, colors, k, sizes, shapes)
    rows, cols, vals, whole = _decompressed(pattern, compressed, coloring)

    def alone(lines):
        return _forward_sweeps(list(gs), xs, _alone_colors(lines, n), lines.size, sizes, shapes)

    if k and _mended(rows, cols, vals, False, alone, k, warnings):
        whole = _sparse().csr_matrix((vals, (rows, cols)), shape=pattern.shape)
    blocks = _blocks(rows, cols, vals, sizes, sizes, k)
    return backend.to_numpy(ev.output.data), blocks, k, whole, gradient
