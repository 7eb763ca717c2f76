"""Linear algebra functions of the language (issue 13): declared as in :mod:`.ops_arrays`.

Imported by :mod:`.optable` before the table is made; ``KINKS`` and ``DIFFERENTIABLE`` here
join the table's.
"""

from __future__ import annotations

KINKS: dict = {}
DIFFERENTIABLE: dict = {}
