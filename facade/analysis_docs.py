"""``autograd_cli.analysis_docs``, where docs/library.md and earlier scripts import it from: the same
module object as :mod:`autograd_cli.core.analysis_docs` (library code lives in ``core/``; this folder is
the facade)."""

import sys

from .core import analysis_docs

sys.modules[__name__] = analysis_docs
