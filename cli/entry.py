"""The console script's entry point: imports the command line, then runs it.

A Ctrl-C before the error boundary is up (while the command line, or for a command NumPy
and the op table, load: a few hundred milliseconds) used to print Python's
KeyboardInterrupt traceback; here it ends the run like a Ctrl-C at any other moment:
``interrupted`` on stderr (one JSON document with ``--json``) and exit 130.  This module
imports nothing heavy itself.
"""

from __future__ import annotations

import sys


def main() -> None:
    try:
        from .main import main as run
    except KeyboardInterrupt:
        from .streams import interrupted  # imports only the standard library

        raise SystemExit(interrupted("--json" in sys.argv[1:])) from None
    run()
