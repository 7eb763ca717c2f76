"""The console script's entry point: imports the command line, then runs it.

Importing the command line loads NumPy and the op table (a few hundred milliseconds).  A
Ctrl-C in that window used to print Python's KeyboardInterrupt traceback; here it ends the
run like a Ctrl-C at any other moment: ``interrupted`` on stderr (one JSON document with
``--json``) and exit 130.  This module imports nothing heavy itself.
"""

from __future__ import annotations

import sys


def main() -> None:
    try:
        from .main import main as run
    except KeyboardInterrupt:
        if "--json" in sys.argv[1:]:
            sys.stdout.write('{"error": {"kind": "interrupted", "message": "interrupted"}}\n')
        else:
            sys.stderr.write("autograd-cli: error: interrupted\n")
        raise SystemExit(130) from None
    run()
