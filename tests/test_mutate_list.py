"""bench/mutate_equivalent.txt stays true to the code: each entry names mutants that exist.

An entry whose line was edited or reformatted no longer matches any mutant, so a survivor it
once explained would be counted as a plain survivor (or, worse, a new mutant on a similar
line could be matched by a stale reason).  Each entry must match a mutant that
bench/mutate.py generates from today's code.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _mutate_module():
    spec = importlib.util.spec_from_file_location("mutate", ROOT / "bench" / "mutate.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("mutate", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_every_equivalent_entry_matches_a_mutant_of_todays_code():
    mutate = _mutate_module()
    entries = mutate.load_equivalents(mutate.EQUIVALENT_FILE)
    assert entries, "the list is empty or unreadable"
    mutants = [m for target in mutate.TARGETS for m in mutate.find_mutants(target, ROOT)]
    stale = []
    for entry in entries:
        hits = [m for m in mutants if mutate.match_equivalent(m, [entry])]
        if not hits:  # (one entry may explain the same line written twice, e.g. max and min)
            stale.append(f"{entry['file']}:{entry['line']}: no mutant of today's code")
    assert not stale, "stale entries in bench/mutate_equivalent.txt:\n" + "\n".join(stale)
