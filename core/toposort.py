"""The one topological sort: every node reachable from some roots, each after its children.

Programs (:func:`~.program.topological`: an Expr after its arguments), the engine's
recorded graph (:func:`~.autograd.topological_nodes`: a Node after the Nodes it reads) and
the simplifier's terms are all ordered here.  Iterative, so graphs 100,000 deep sort like
shallow ones; standard library only, so every layer can use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")


def toposort(
    roots: Iterable[T],
    children: Callable[[T], Sequence],
    seen: set[int] | None = None,
    kind: type | None = None,
) -> list[T]:
    """Every node reachable from ``roots``, each after its children: a depth-first post-order,
    children left to right, roots in order, each node listed once (where first reached).

    ``children(node)``: the node's children (empty for a leaf); with ``kind``, only those
    that are instances of it count (a Node's ``edges`` hold leaf tensors and None beside
    Nodes: filtering here costs less than a list made for each node).  ``seen``: the ids of
    nodes neither to list nor to enter (what only they lead to is not reached); it is
    updated in place.  Each node is visited once, with one iterator over its children on
    the stack; a leaf is listed where it is reached, never stacked.

    >>> kids = {"a": ("b", "c"), "b": ("c",), "c": ()}
    >>> toposort(["a"], lambda n: kids[n])
    ['c', 'b', 'a']
    """
    order: list[T] = []
    if seen is None:
        seen = set()
    mark = seen.add
    emit = order.append
    for root in roots:
        if id(root) in seen:
            continue
        mark(id(root))
        below = children(root)
        if not below:
            emit(root)
            continue
        nodes = [root]  # the path being walked, and beside it each one's children left
        pending = [iter(below)]
        while pending:
            for child in pending[-1]:
                if kind is not None and not isinstance(child, kind):
                    continue
                key = id(child)
                if key in seen:
                    continue
                mark(key)
                below = children(child)
                if below:
                    nodes.append(child)
                    pending.append(iter(below))
                    break
                emit(child)
            else:
                pending.pop()
                emit(nodes.pop())
    return order
