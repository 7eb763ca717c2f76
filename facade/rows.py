"""``autograd_cli.rows``, where docs/library.md and earlier scripts import it from: the same
module object as :mod:`autograd_cli.core.rows` (library code lives in ``core/``; this folder is
the facade)."""

import sys

from .core import rows

sys.modules[__name__] = rows
