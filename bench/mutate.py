#!/usr/bin/env python3
"""Mutation testing for autograd-cli: plant one one-line bug at a time; do the tests notice?

Standard library only.  Each mutant is a copy of one source line with one small change
(``<`` -> ``<=``, ``+`` -> ``-``, ``0`` -> ``1``, a dropped unary minus, two call arguments
swapped, ...), found with :mod:`ast` and placed exactly with :mod:`tokenize`.  The tests that
matter for the mutated file run against it; a mutant the tests do not notice *survives* and
points at a behaviour no test pins down.

Isolation: nothing is ever written to the working tree.  The tracked and untracked-but-not-ignored
files (``git ls-files --cached --others --exclude-standard``) are copied to a temporary folder, one
copy per job, and the tests run there with a ``sitecustomize.py`` on ``PYTHONPATH`` that maps the
import package ``autograd_cli`` (and its sub-packages, read from pyproject's
``[tool.setuptools.package-dir]``) onto the copy, ahead of the editable install's finder.  The
mapping is inherited by subprocesses (console-script and ``python -m`` tests).  No bytecode is
written in the copy (``PYTHONDONTWRITEBYTECODE``), so a same-size mutant can never run from a stale
``.pyc``.  Before any mutant runs, each target's tests must pass on the unmutated copy (baseline),
the target modules must import from the copy, and a canary (``raise`` appended to the module) must
be killed; otherwise the run stops there with an error (exit 2) naming the target and the failing
test: a target is never skipped, since its kill rate would silently drop out of the totals.
A tiny pytest plugin turns off Hypothesis's example database (no replay of one mutant's failures
against the next) and its shrinking (a mutant needs a failing example, not the smallest one);
example generation is unchanged.

Each mutant runs ``pytest -x -q -p no:cacheprovider`` on its target's test files (the mapping is
``TARGETS`` below; files that do not exist are left out), with a timeout of twice the baseline
plus 30 s.  A full run is hours on two cores (``--list --all`` counts the mutants), so the
default is a deterministic sample of 40 per target (``--seed`` picks another); ``--all`` runs
everything, ``--jobs`` runs mutants in parallel (one copy each), ``--max-seconds`` caps the run.
A line with the comment ``# mutate: skip`` is never mutated.

Usage (from the repository root, with the project's venv active)::

    python bench/mutate.py                          # default: a deterministic sample per target
    python bench/mutate.py --all                    # every mutant (slow: see --list for counts)
    python bench/mutate.py --target ops --sample 80 --seed 3 --json-out bench/results/m.json
    python bench/mutate.py --list --target jsonout  # show the mutants, run nothing

Outcomes: *killed* (a test failed), *error* (collection or import failed: also killed),
*timeout* (the tests ran past the per-mutant limit: counted as killed, listed apart),
*survived* (every test passed).  Equivalent mutants (survivors that cannot be killed because
they do not change behaviour) are listed in ``bench/mutate_equivalent.txt``.
"""

from __future__ import annotations

import argparse
import ast
import bisect
import io
import json
import os
import queue
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tokenize
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EQUIVALENT_FILE = Path(__file__).resolve().parent / "mutate_equivalent.txt"

# Target -> the files mutated and the tests run against them (in this order: with -x the
# first failure ends the run, so the fast, sharp files come first).  Each lists every test file
# that covers its code: a file that calls the module's functions or the commands that run them
# (grep tests/ for them), confirmed by a coverage run of that file (``coverage run
# --source=core,cli -m pytest FILE``: it runs lines of the module beyond those its import runs).
# A file left out lets its mutants survive here that the whole suite kills.  A test file that
# does not exist (yet) is left out.
#: the tests of the analyses' commands, their batch lines, doctests and help: every analysis
#: module's target lists them
ANALYSES = [
    "tests/test_analysis.py",
    "tests/test_batch_analysis.py",
    "tests/test_doctests.py",
    "tests/test_help.py",
]

TARGETS: dict[str, dict] = {
    "ops": {
        "files": [
            "core/ops/table.py",
            "core/ops/rules.py",
            "core/ops/elementwise.py",
            "core/ops/special.py",
            "core/ops/shape.py",
            "core/ops/reductions.py",
            "core/ops/products.py",
        ],
        "tests": [
            "tests/test_mutants_seed269.py",  # seed 307's survivor
            "tests/test_mutants_seed257.py",  # seed 257's survivors
            "tests/test_mutants_seed211.py",  # seed 211's survivors
            "tests/test_mutants_seed227.py",  # seed 227's survivors
            "tests/test_mutants_seed229.py",  # seed 229's survivors
            "tests/test_mutants_seed239.py",  # seed 239's survivors
            "tests/test_mutants_seed251.py",  # seed 251's survivors
            "tests/test_mutants_seed223.py",  # seed 223's survivors
            # the size rules the table gives (broadcast_size for binary elementwise ops): the
            # memory limit refuses a growing result before it is allocated (seed 223)
            "tests/test_limits.py",
            # seed 179's survivors
            "tests/test_mutants_seed179.py",
            # the lines no other test ran (coverage by this list); seed 127's survivors
            "tests/test_gaps_ops.py",
            "tests/test_mutants_seed127.py",
            # survivors of seeds 107, 109, 113
            "tests/test_mutants_seed107.py",
            "tests/test_mutants_seed109.py",
            "tests/test_mutants_seed113.py",
            # Taylor mode reads special.py's bessel_derivatives and sinc_derivatives
            "tests/test_taylor_mode.py",
            # the selecting partials (relu, clip, max/min) on every path chain takes
            "tests/test_selecting_partials.py",
            "tests/test_mutants_seed97_core.py",
            "tests/test_mutants_seed89_core.py",
            # survivors of seed 71 (a hunting sample; untuned seeds measure afterwards)
            "tests/test_mutants_seed71_core.py",
            # the survivors of seeds 61 and 67 left open by their first tests
            "tests/test_mutants_open_core.py",
            "tests/test_mutants_ops.py",
            # survivors of seeds 101 and 202 (issue 24)
            "tests/test_mutants_seed101.py",
            "tests/test_mutants_seed202.py",
            "tests/test_mutants_rebuild.py",
            "tests/test_ops_gradcheck.py",
            "tests/test_kink_warnings.py",
            # norm's ord (values, gradients, kinks), integer-array indexing (getitem's size
            # rule) and the nan/tie conventions of max, min, clip: rules of core/ops.py
            "tests/test_norm_ord.py",
            "tests/test_integer_indexing.py",
            "tests/test_nan_ties.py",
            "tests/test_cbrt_exact.py",
            "tests/test_new_functions.py",
            "tests/test_array_functions.py",
            "tests/test_linalg_functions.py",
            "tests/test_split_svd.py",
            "tests/test_einsum.py",
            "tests/test_core_edges.py",
            "tests/test_tensor_api.py",
            "tests/test_functional_api.py",
            "tests/test_engine_fastpaths.py",
            # the op table on a strict stand-in for CuPy: the device-only branches (a device
            # scalar exponent in pow, ...)
            "tests/test_strict_backend.py",
            "tests/test_forward_oracles.py",
            "tests/test_functional.py",
            "tests/test_seeds_api.py",
            "tests/test_op_edges.py",
            "tests/test_op_table.py",
            "tests/test_op_registry.py",
            "tests/test_cli_derivatives.py",
            # grad_fn names and kink conventions against PyTorch: skips (in about a
            # second) where torch is not installed, kills mutants where it is.
            "tests/test_torch_oracle.py",
            # the rules run on symbolic values too (diff): their zero guards, their printing
            "tests/test_symbolic.py",
            # the ops' code templates (Op.code) and size rules: codegen writes and runs them
            "tests/test_codegen_ops.py",
            "tests/test_codegen_reductions.py",
            # survivors of seed 61 (an untuned seed, sampled after issue 28)
            "tests/test_mutants_seed61.py",
        ],
    },
    "batch": {
        "files": ["core/batch.py"],
        "tests": [
            "tests/test_mutants_seed229.py",  # seed 229's survivors
            "tests/test_mutants_seed239.py",  # seed 239's survivors
            # seeds 157's, 163's and 181's survivors
            "tests/test_mutants_seed157.py",
            "tests/test_mutants_seed163.py",
            "tests/test_mutants_seed181.py",
            "tests/test_mutants_seed1013.py",  # the hunting seed 1013's survivors
            # the lines no other test ran (coverage by this list); seed 127's survivors
            "tests/test_gaps_ops.py",
            "tests/test_mutants_seed127.py",
            # survivors of seed 107
            "tests/test_mutants_seed107.py",
            # the survivors of seeds 61 and 67 left open by their first tests
            "tests/test_mutants_open_batch.py",
            "tests/test_mutants_seed61.py",
            "tests/test_mutants_batch.py",
            "tests/test_batch_guards.py",
            "tests/test_batch.py",
            "tests/test_batch_property.py",
            "tests/test_kink_warnings.py",
            # einsum's batching rule (a label of its own for the batch axis)
            "tests/test_einsum.py",
            "tests/test_batch_issue23.py",
            "tests/test_batch_analysis.py",
            "tests/test_batch_safety.py",
            "tests/test_rows.py",
            "tests/test_norm_ord.py",
            "tests/test_linalg_functions.py",
            "tests/test_array_functions.py",
            "tests/test_split_svd.py",
            "tests/test_strict_backend.py",
            "tests/test_interpret.py",
            "tests/test_cli_edges.py",
            "tests/test_cli_limits.py",
            "tests/test_value_files.py",
            "tests/test_examples.py",
            # the local engine is the Dask engine's reference, line for line
            "tests/test_batch_dask.py",
        ],
    },
    "jsonout": {
        "files": ["cli/jsonout.py"],
        "tests": [
            # survivors of seed 107
            "tests/test_mutants_seed107.py",
            "tests/test_mutants_seed89.py",
            "tests/test_mutants_jsonout.py",
            "tests/test_mutants_seed101.py",
            "tests/test_jsonout.py",
            # number_texts/int_texts (batch output's orjson fast path) against json.dumps
            "tests/test_fast_json.py",
            "tests/test_cli.py",
            "tests/test_batch.py",
            "tests/test_batch_guards.py",
            "tests/test_batch_property.py",
            "tests/test_core_edges.py",
            "tests/test_symbolic.py",
            "tests/test_cli_edges.py",
            "tests/test_input_errors.py",
            "tests/test_value_files.py",
            "tests/test_batch_safety.py",
            "tests/test_batch_dask.py",
            "tests/test_readme.py",
            "tests/test_examples.py",
        ],
    },
    "symbolic": {
        "files": [
            "core/symbolic/numbers.py",
            "core/symbolic/support.py",
            "core/symbolic/terms.py",
            "core/symbolic/presentation.py",
            "core/symbolic/algebra.py",
            "core/symbolic/differentiation.py",
            "core/symbolic/command.py",
        ],
        "tests": [
            "tests/test_mutants_seed257.py",  # seed 257's survivors
            "tests/test_mutants_seed241.py",  # seed 241's survivors
            "tests/test_mutants_seed239.py",  # seed 239's survivors
            "tests/test_mutants_seed227.py",  # seed 227's survivors
            "tests/test_mutants_seed223.py",  # seed 223's survivors
            # seeds 179's and 181's survivors; the hunting seed 1009's
            "tests/test_mutants_seed179.py",
            "tests/test_mutants_seed181.py",
            "tests/test_mutants_seed1009.py",
            # seed 173's survivors
            "tests/test_mutants_seed173.py",
            # seed 167's survivors
            "tests/test_mutants_seed167.py",
            # seeds 157's and 163's survivors
            "tests/test_mutants_seed157.py",
            "tests/test_mutants_seed163.py",
            # seed 149's survivors
            "tests/test_mutants_seed149.py",
            # the lines no other test ran (coverage by this list); seed 127's survivors
            "tests/test_gaps_symbolic.py",
            "tests/test_mutants_seed127_more.py",
            # survivors of seeds 107, 109, 113
            "tests/test_mutants_seed107.py",
            "tests/test_mutants_seed109.py",
            "tests/test_mutants_seed113.py",
            # survivors of seed 103
            "tests/test_mutants_seed103.py",
            "tests/test_mutants_seed89_core.py",
            # survivors of seed 71 (a hunting sample; untuned seeds measure afterwards)
            "tests/test_mutants_seed71_core.py",
            # the survivors of seeds 61 and 67 left open by their first tests
            "tests/test_mutants_open_core.py",
            "tests/test_mutants_symbolic.py",
            "tests/test_mutants_seed202.py",
            "tests/test_symbolic.py",
            "tests/test_simplify_forms.py",
            "tests/test_cli_diff.py",
            "tests/test_explain_arrays.py",
            "tests/test_fuzz_regressions.py",
            "tests/test_new_functions.py",
            "tests/test_norm_ord.py",
            "tests/test_einsum.py",
            "tests/test_split_svd.py",
            "tests/test_layers.py",
            "tests/test_linear_time.py",
            "tests/test_core_edges.py",
            # diff's size budget and value files feeding diff
            "tests/test_limits.py",
            "tests/test_cli_limits.py",
            "tests/test_value_files.py",
            "tests/test_input_errors.py",
            "tests/test_batch_issue23.py",
            "tests/test_cli_usage.py",
            "tests/test_doctests.py",
            "tests/test_readme.py",
            "tests/test_simplify_property.py",
            "tests/test_sympy_property.py",
            "tests/test_mutants_seed269.py",  # seed 283's survivor
        ],
    },
    "taylor_mode": {
        "files": ["core/taylor_mode.py"],
        "tests": [
            "tests/test_mutants_seed269.py",  # seeds 269 and 271's survivors
            "tests/test_mutants_seed257.py",  # seeds 257 and 263's survivors
            "tests/test_mutants_seed251.py",  # seed 251's survivors
            "tests/test_mutants_seed1031.py",  # the hunting seed 1031's survivors
            "tests/test_mutants_seed227.py",  # seed 227's survivors
            "tests/test_mutants_seed229.py",  # seed 229's survivors
            "tests/test_mutants_seed239.py",  # seed 239's survivors
            "tests/test_mutants_seed223.py",  # seed 223's survivors
            "tests/test_mutants_seed211.py",  # seed 211's survivors
            "tests/test_mutants_seed199.py",  # seed 199's survivor
            # the hunting seed 1013's survivors
            "tests/test_mutants_seed1013.py",
            # seed 173's survivors
            "tests/test_mutants_seed173.py",
            # seed 167's survivors
            "tests/test_mutants_seed167.py",
            # seeds 149's and 151's survivors
            "tests/test_mutants_seed149.py",
            "tests/test_mutants_seed151.py",
            "tests/test_mutants_seed157.py",
            # grad --order by Taylor mode
            "tests/test_grad_order_taylor.py",
            # seed 131's survivors
            "tests/test_mutants_seed131_taylor.py",
            # the lines no other test ran (coverage by this list)
            "tests/test_gaps_taylor_mode.py",
            # survivors of seeds 107, 109, 113
            "tests/test_mutants_seed107.py",
            "tests/test_mutants_seed109.py",
            "tests/test_mutants_seed113.py",
            # survivors of seed 103
            "tests/test_mutants_seed103.py",
            "tests/test_mutants_seed97_core.py",
            "tests/test_mutants_seed89_core.py",
            # survivors of seed 71 (a hunting sample; untuned seeds measure afterwards)
            "tests/test_mutants_seed71_core.py",
            # the survivors of seeds 61 and 67 left open by their first tests
            "tests/test_mutants_open_core.py",
            "tests/test_taylor_mode.py",
            "tests/test_mutants_seed101.py",
            "tests/test_mutants_rebuild.py",
            *ANALYSES,
            # the README's and docs/'s console examples (taylor, propagate, minimize, ...)
            "tests/test_readme.py",
        ],
    },
    "uncertainty": {
        "files": ["core/uncertainty.py"],
        "tests": [
            "tests/test_mutants_seed227.py",  # seed 227's survivors
            "tests/test_mutants_seed229.py",  # seed 229's survivors
            "tests/test_mutants_seed239.py",  # seed 239's survivors
            # seeds 137's and 151's survivors
            "tests/test_mutants_seed137.py",
            "tests/test_mutants_seed151.py",
            "tests/test_mutants_seed157.py",
            # the lines no other test ran (coverage by this list)
            "tests/test_gaps_optimize.py",
            # survivors of seeds 107, 109, 113
            "tests/test_mutants_seed107.py",
            "tests/test_mutants_seed109.py",
            "tests/test_mutants_seed113.py",
            # survivors of seed 103
            "tests/test_mutants_seed103.py",
            "tests/test_mutants_seed97_core.py",
            "tests/test_mutants_seed89_core.py",
            # survivors of seed 71 (a hunting sample; untuned seeds measure afterwards)
            "tests/test_mutants_seed71_core.py",
            # the survivors of seeds 61 and 67 left open by their first tests
            "tests/test_mutants_open_core.py",
            "tests/test_mutants_seed61.py",
            "tests/test_mutants_seed67.py",
            *ANALYSES,
            "tests/test_readme.py",
            "tests/test_mutants_rebuild.py",
        ],
    },
    "optimize": {
        "files": ["core/optimize.py"],
        # minimize and solve as batch ops too, through both engines
        "tests": [
            "tests/test_mutants_seed269.py",  # seed 271's survivor
            "tests/test_mutants_seed251.py",  # seed 251's survivors
            "tests/test_mutants_seed227.py",  # seed 227's survivors
            "tests/test_mutants_seed229.py",  # seed 229's survivors
            "tests/test_mutants_seed239.py",  # seed 239's survivors
            "tests/test_mutants_seed223.py",  # seed 223's survivors
            "tests/test_mutants_seed211.py",  # seed 211's survivors
            # seeds 179's and 181's survivors; the hunting seed 1009's
            "tests/test_mutants_seed179.py",
            "tests/test_mutants_seed181.py",
            "tests/test_mutants_seed1009.py",
            "tests/test_mutants_seed193.py",  # seed 193's survivor
            # seed 173's survivors
            "tests/test_mutants_seed173.py",
            # seed 167's survivors
            "tests/test_mutants_seed167.py",
            # seed 131's survivors
            "tests/test_mutants_seed131.py",
            # seed 137's and 151's survivors
            "tests/test_mutants_seed137.py",
            "tests/test_mutants_seed151.py",
            "tests/test_mutants_seed157.py",
            # seed 127's survivors
            "tests/test_mutants_seed127.py",
            # the lines no other test ran (coverage by this list)
            "tests/test_gaps_optimize.py",
            # survivors of seeds 107, 109, 113
            "tests/test_mutants_seed107.py",
            "tests/test_mutants_seed109.py",
            "tests/test_mutants_seed113.py",
            # survivors of seed 103
            "tests/test_mutants_seed103.py",
            # minimize's second-order check (saddles, maxima, inflections, rounding noise)
            "tests/test_misleading.py",
            "tests/test_mutants_seed89.py",
            "tests/test_mutants_seed71_optimize.py",
            # the stops of the Newton loop solve and critical share
            "tests/test_newton_stops.py",
            # the survivors of seeds 61 and 67 left open by their first tests
            "tests/test_mutants_open_batch.py",
            "tests/test_mutants_seed67.py",
            "tests/test_mutants_seed101.py",
            "tests/test_mutants_seed202.py",
            "tests/test_mutants_rebuild.py",
            *ANALYSES,
            "tests/test_readme.py",
            "tests/test_batch_dask.py",
        ],
    },
    "sparsity": {
        "files": ["core/sparsity.py"],
        # issue 28: the patterns, colorings and sweeps; the commands and the Newton steps
        "tests": [
            "tests/test_mutants_seed269.py",  # seed 293's survivor
            "tests/test_mutants_seed251.py",  # seed 251's survivors
            "tests/test_mutants_seed229.py",  # seed 229's survivors
            "tests/test_mutants_seed239.py",  # seed 239's survivors
            "tests/test_mutants_seed223.py",  # seed 223's survivors
            # seed 167's survivors
            "tests/test_mutants_seed167.py",
            # seeds 131's, 137's and 151's survivors
            "tests/test_mutants_seed131.py",
            "tests/test_mutants_seed137.py",
            "tests/test_mutants_seed151.py",
            "tests/test_mutants_seed157.py",
            # seed 127's survivors
            "tests/test_mutants_seed127_more.py",
            # survivors of seed 103
            "tests/test_mutants_seed103.py",
            # survivors of seed 107: the fiber ops' memory check
            "tests/test_mutants_seed107_sparsity.py",
            "tests/test_mutants_seed97.py",
            "tests/test_mutants_seed71_optimize.py",
            # the survivors of seeds 61 and 67 left open by their first tests
            "tests/test_mutants_open_batch.py",
            "tests/test_mutants_seed61.py",
            "tests/test_sparsity.py",
            "tests/test_strict_backend.py",
            "tests/test_analysis.py",
        ],
    },
    "limits": {
        "files": ["core/limits.py"],
        "tests": [
            "tests/test_mutants_seed239.py",  # seed 239's survivors
            # seeds 179's and 181's survivors
            "tests/test_mutants_seed179.py",
            "tests/test_mutants_seed181.py",
            # repeated differentiation's memory check and diff's growth prediction (growth_past)
            "tests/test_repeated_growth.py",
            "tests/test_gaps_symbolic.py",
            "tests/test_mutants_seed163.py",
            "tests/test_limits.py",
            "tests/test_mutants_seed101.py",
            "tests/test_cli_limits.py",
            "tests/test_value_files.py",
            "tests/test_mutants_ops.py",
            "tests/test_cli_edges.py",
            "tests/test_input_errors.py",
            "tests/test_analysis.py",
            "tests/test_batch_analysis.py",
            "tests/test_batch_safety.py",
            "tests/test_help.py",
            "tests/test_doctests.py",
            "tests/test_readme.py",
            "tests/test_examples.py",
            "tests/test_batch_dask.py",
        ],
    },
    "batch_dask": {
        "files": ["cli/batch/dask.py", "cli/batch/dask_parts.py"],
        # skips where Dask is not installed: the baseline then passes and the canary lives,
        # which stops the run (an error): install the [dask] extra to mutate this target
        "tests": [
            "tests/test_mutants_seed251_dask.py",  # seed 251's Dask survivors
            "tests/test_mutants_seed263_dask.py",  # seed 263's Dask survivors
            "tests/test_mutants_seed227_dask.py",  # seed 227's survivors
            "tests/test_mutants_seed233_dask.py",  # seed 233's survivor
            "tests/test_mutants_seed223_dask.py",  # seed 223's survivors
            # seed 179's survivors
            "tests/test_mutants_seed179_dask.py",
            "tests/test_mutants_seed1021_dask.py",  # the hunting seed 1021's survivor
            "tests/test_mutants_seed193_dask.py",  # seed 193's survivor
            "tests/test_mutants_seed197_dask.py",  # seed 197's survivor
            # seed 173's survivors
            "tests/test_mutants_seed173_dask.py",
            # seed 167's survivors
            "tests/test_mutants_seed167_dask.py",
            # seeds 137's and 151's survivors
            "tests/test_mutants_seed137_dask.py",
            "tests/test_mutants_seed151_dask.py",
            "tests/test_mutants_seed157_dask.py",
            # seed 127's survivors
            "tests/test_mutants_seed127_more.py",
            # the lines no other test ran (coverage by this list)
            "tests/test_gaps_dask.py",
            # survivors of seed 103 in the Dask engine
            "tests/test_mutants_seed103_dask.py",
            # survivors of seed 109 in the Dask engine
            "tests/test_mutants_seed109_dask.py",
            # survivors of seed 113 in the Dask engine
            "tests/test_mutants_seed113_dask.py",
            "tests/test_mutants_seed97.py",
            "tests/test_mutants_seed89.py",
            "tests/test_mutants_seed71_dask.py",
            # the survivors of seeds 61 and 67 left open by their first tests
            "tests/test_mutants_open_batch.py",
            "tests/test_batch_dask.py",
            "tests/test_batch_seam.py",
            "tests/test_mutants_seed_dask.py",
        ],
    },
}

DEFAULT_SAMPLE = 40  # mutants per target when neither --sample nor --all is given
DEFAULT_SEED = 0
PYTEST_ARGS = ["-x", "-q", "-p", "no:cacheprovider", "-p", "_mutate_plugin"]
# Used when pyproject.toml cannot be read.
FALLBACK_PACKAGE_DIR = {
    "autograd_cli": "facade",
    "autograd_cli.cli": "cli",
    "autograd_cli.core": "core",
    "autograd_cli.grammar": "grammar",
}
SKIP_PRAGMA = "mutate: skip"
MAX_DESELECT = 3  # --skip-failing-baseline: more failures than this means broken code
CANARY = "raise RuntimeError('mutate.py canary: the copy is the code under test')"


# ---------------------------------------------------------------------------
# Mutants
# ---------------------------------------------------------------------------


@dataclass
class Mutant:
    target: str
    file: str  # repository-relative path
    line: int  # 1-based
    col: int  # 0-based character column of the change
    operator: str
    original: str  # the whole source line, as in the file
    mutant: str  # the same line with the one change
    index: int = 0  # position in the target's deterministic order
    status: str = "pending"
    seconds: float = 0.0
    killed_by: str = ""
    equivalent: str = ""  # the reason, when listed in the equivalent-mutants file
    context: str = ""  # the code of the line before (tells identical lines apart)

    @property
    def key(self) -> str:
        return f"{self.file}:{self.line}: {code_of(self.original)} -> {code_of(self.mutant)}"

    @property
    def text_key(self) -> str:
        return f"{code_of(self.original)} -> {code_of(self.mutant)}"


def code_of(line: str) -> str:
    """The line's code: indentation and a trailing comment removed (for display and matching)."""
    text = line.strip()
    try:
        for t in tokenize.generate_tokens(io.StringIO(text + "\n").readline):
            if t.type == tokenize.COMMENT:
                return text[: t.start[1]].rstrip()
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass  # a fragment of a multi-line statement: its comment (if any) came before the error
    return text


_BINOP = {
    ast.Add: ("+", "-"),
    ast.Sub: ("-", "+"),
    ast.Mult: ("*", "/"),
    ast.Div: ("/", "*"),
    ast.FloorDiv: ("//", "/"),
    ast.Mod: ("%", "//"),
    ast.Pow: ("**", "*"),
    ast.BitAnd: ("&", "|"),
    ast.BitOr: ("|", "&"),
    ast.MatMult: ("@", "*"),
}
_AUGOP = {
    ast.Add: ("+=", "-="),
    ast.Sub: ("-=", "+="),
    ast.Mult: ("*=", "/="),
    ast.Div: ("/=", "*="),
    ast.BitAnd: ("&=", "|="),
    ast.BitOr: ("|=", "&="),
}
_CMPOP = {
    ast.Lt: ("<", "<="),
    ast.LtE: ("<=", "<"),
    ast.Gt: (">", ">="),
    ast.GtE: (">=", ">"),
    ast.Eq: ("==", "!="),
    ast.NotEq: ("!=", "=="),
    ast.Is: ("is", "is not"),
    ast.IsNot: ("is not", "is"),
    ast.In: ("in", "not in"),
    ast.NotIn: ("not in", "in"),
}
# Calls whose argument order is not behaviour worth a mutant (a swap only raises TypeError).
_NO_SWAP = {
    "isinstance",
    "issubclass",
    "getattr",
    "setattr",
    "hasattr",
    "super",
    "print",
    "Op",
    "register",
    "Function",
    "RuleContext",
}


def _new_number(v):
    """The constant mutation: 0 <-> 1, 0.5 -> 0.25, ints n -> n+1, other floats x -> x+1."""
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        return 1 if v == 0 else 0 if v == 1 else v + 1
    if isinstance(v, float):
        if v == 0.0:
            return 1.0
        if v == 1.0:
            return 0.0
        if v == 0.5:
            return 0.25
        return v + 1.0
    return None


class SiteFinder:
    """Every one-line mutation of one source file, in a deterministic order."""

    def __init__(self, target: str, rel: str, source: str):
        self.target = target
        self.rel = rel
        self.source = source
        self.lines = source.splitlines(keepends=True)
        self.tree = ast.parse(source)
        self.tokens = [
            t
            for t in tokenize.generate_tokens(io.StringIO(source).readline)
            if t.type in (tokenize.OP, tokenize.NAME)
        ]
        self.starts = [t.start for t in self.tokens]
        self.dump = ast.dump(self.tree)
        self.skip_nodes: set[int] = set()
        self.in_function: set[int] = set()
        self.found: list[Mutant] = []

    # -- positions (ast gives UTF-8 byte columns, tokenize character columns) --
    def _col(self, lineno: int, bytecol: int) -> int:
        return len(self.lines[lineno - 1].encode()[:bytecol].decode(errors="replace"))

    def start(self, node) -> tuple[int, int]:
        return node.lineno, self._col(node.lineno, node.col_offset)

    def end(self, node) -> tuple[int, int]:
        return node.end_lineno, self._col(node.end_lineno, node.end_col_offset)

    def text(self, node) -> str | None:
        """The node's source, when it lies on one line."""
        if node.lineno != node.end_lineno:
            return None
        (line, a), (_, b) = self.start(node), self.end(node)
        return self.lines[line - 1][a:b]

    def tokens_between(self, lo, hi, strings):
        out = []
        for i in range(bisect.bisect_left(self.starts, lo), len(self.tokens)):
            t = self.tokens[i]
            if t.start >= hi:
                break
            if t.end <= hi and t.string in strings:
                out.append(t)
        return out

    # -- emitting --
    def replace(self, lineno, a, b, new, operator):
        """Replace characters [a, b) of line ``lineno`` with ``new``."""
        line = self.lines[lineno - 1]
        if SKIP_PRAGMA in line:
            return
        mutated = line[:a] + new + line[b:]
        if mutated == line:
            return
        before = next((code_of(p) for p in reversed(self.lines[: lineno - 1]) if p.strip()), "")
        self.found.append(
            Mutant(
                self.target,
                self.rel,
                lineno,
                a,
                operator,
                line.rstrip("\r\n"),
                mutated.rstrip("\r\n"),
                context=before,
            )
        )

    def swap_token(self, lo, hi, old: str, new: str, operator: str):
        """Replace the operator token ``old`` (one or two tokens: 'is not') between lo and hi.

        lo/hi are the end of the left operand and the start of the right one, so the only
        tokens between them are the operator and parentheses."""
        parts = old.split()
        toks = self.tokens_between(lo, hi, {parts[0]})
        if not toks:
            return
        tok = toks[0]
        if len(parts) == 2:  # 'is not' / 'not in': find the second token after the first
            rest = self.tokens_between(tok.end, hi, {parts[1]})
            if not rest or rest[0].start[0] != tok.start[0]:
                return
            a, b = tok.start[1], rest[0].end[1]
        else:
            a, b = tok.start[1], tok.end[1]
        self.replace(tok.start[0], a, b, new, operator)

    # -- the walk --
    def find(self) -> list[Mutant]:
        self._mark_skipped(self.tree)
        for node in ast.walk(self.tree):
            if id(node) in self.skip_nodes:
                continue
            for visit in (
                self.binop,
                self.augassign,
                self.compare,
                self.boolop,
                self.unary,
                self.constant,
                self.negate_condition,
                self.swap_args,
                self.first_operand,
                self.drop_call,
                self.drop_raise,
                self.drop_kink,
            ):
                visit(node)
        # Deterministic order, duplicates (same resulting line) dropped.
        seen = set()
        out = []
        for m in sorted(self.found, key=lambda m: (m.line, m.col, m.operator, m.mutant)):
            k = (m.line, m.mutant)
            if k in seen:
                continue
            seen.add(k)
            out.append(m)
        return [m for m in out if self._changes_program(m)]

    def _mark_skipped(self, tree):
        """Docstrings, annotations, f-strings, __all__/__slots__ and TYPE_CHECKING blocks."""

        def skip(n):
            for sub in ast.walk(n):
                self.skip_nodes.add(id(sub))

        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for stmt in node.body:
                    self.in_function.update(id(sub) for sub in ast.walk(stmt))
                for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs:
                    if a.annotation is not None:
                        skip(a.annotation)
                for a in (node.args.vararg, node.args.kwarg):
                    if a is not None and a.annotation is not None:
                        skip(a.annotation)
                if node.returns is not None:
                    skip(node.returns)
            if isinstance(node, ast.AnnAssign):
                skip(node.annotation)
            if isinstance(node, ast.JoinedStr):
                skip(node)
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id in ("__all__", "__slots__") for t in node.targets
            ):
                skip(node)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test):
                skip(node)
            if (
                isinstance(node, ast.Expr)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                skip(node)

    def _changes_program(self, m: Mutant) -> bool:
        """The mutant parses and its AST differs (checked on the smallest enclosing statement)."""
        stmt = self._enclosing(m.line)
        if stmt is not None:
            lo, hi = stmt.lineno, stmt.end_lineno
            prefix = "if 1:\n" if stmt.col_offset else ""
            before = prefix + "".join(self.lines[lo - 1 : hi])
            after = prefix + "".join(self._mutated_lines(m)[lo - 1 : hi])
            try:
                old_dump = ast.dump(ast.parse(before))
            except SyntaxError:
                stmt = None  # e.g. a statement after 'else:' on its line: use the whole file
        if stmt is None:
            old_dump, after = self.dump, "".join(self._mutated_lines(m))
        try:
            return ast.dump(ast.parse(after)) != old_dump
        except SyntaxError:
            return False

    def _mutated_lines(self, m: Mutant) -> list[str]:
        lines = list(self.lines)
        nl = lines[m.line - 1][len(lines[m.line - 1].rstrip("\r\n")) :]
        lines[m.line - 1] = m.mutant + nl
        return lines

    def _enclosing(self, line: int):
        if not hasattr(self, "_stmts"):
            self._stmts = sorted(
                (
                    n
                    for n in ast.walk(self.tree)
                    if isinstance(n, ast.stmt)
                    and not self.lines[n.lineno - 1][: self._col(n.lineno, n.col_offset)].strip()
                    and not getattr(n, "decorator_list", None)
                ),
                key=lambda n: n.end_lineno - n.lineno,
            )
        for n in self._stmts:
            if n.lineno <= line <= n.end_lineno:
                return n
        return None

    # -- operators --
    def binop(self, node):
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOP:
            old, new = _BINOP[type(node.op)]
            if (
                isinstance(node.op, ast.Mod)
                and isinstance(node.left, ast.Constant)
                and isinstance(node.left.value, str)
            ):
                return  # string formatting
            self.swap_token(self.end(node.left), self.start(node.right), old, new, "arith")

    def augassign(self, node):
        if isinstance(node, ast.AugAssign) and type(node.op) in _AUGOP:
            old, new = _AUGOP[type(node.op)]
            self.swap_token(self.end(node.target), self.start(node.value), old, new, "arith")

    def compare(self, node):
        if not isinstance(node, ast.Compare):
            return
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            old, new = _CMPOP[type(op)]
            self.swap_token(self.end(left), self.start(right), old, new, "compare")
            left = right

    def boolop(self, node):
        if not isinstance(node, ast.BoolOp):
            return
        old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        for left, right in zip(node.values, node.values[1:]):
            self.swap_token(self.end(left), self.start(right), old, new, "boolop")

    def unary(self, node):
        if not isinstance(node, ast.UnaryOp):
            return
        sym = {ast.USub: "-", ast.Not: "not", ast.Invert: "~"}.get(type(node.op))
        if sym is None:
            return
        line, a = self.start(node)
        ol, b = self.start(node.operand)
        if ol != line:
            return
        text = self.lines[line - 1]
        if not text[a:b].lstrip("(").startswith(sym):
            return
        # Drop the operator and the blanks after it.
        k = text.index(sym, a)
        e = k + len(sym)
        while e < b and text[e] == " ":
            e += 1
        self.replace(line, k, e, "", "negate" if sym == "not" else "unary")

    def constant(self, node):
        if not isinstance(node, ast.Constant) or node.lineno != node.end_lineno:
            return
        v = node.value
        if isinstance(v, str) or v is None or v is Ellipsis or isinstance(v, (bytes, complex)):
            return
        new = _new_number(v)
        if new is None:
            return
        (line, a), (_, b) = self.start(node), self.end(node)
        self.replace(line, a, b, repr(new), "constant")

    def negate_condition(self, node):
        if not isinstance(node, (ast.If, ast.While, ast.IfExp)):
            return
        test = node.test
        if isinstance(test, ast.Compare) or (
            isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        ):
            return  # already mutated by the comparison flip / dropping 'not'
        src = self.text(test)
        if src is None:
            return
        (line, a), (_, b) = self.start(test), self.end(test)
        self.replace(line, a, b, f"not ({src})", "negate")

    def swap_args(self, node):
        if not isinstance(node, ast.Call) or len(node.args) < 2:
            return
        name = (
            node.func.id
            if isinstance(node.func, ast.Name)
            else node.func.attr
            if isinstance(node.func, ast.Attribute)
            else ""
        )
        if name in _NO_SWAP:
            return
        a0, a1 = node.args[0], node.args[1]
        if any(
            isinstance(x, ast.Starred) or (isinstance(x, ast.Constant) and isinstance(x.value, str))
            for x in (a0, a1)
        ):
            return
        t0, t1 = self.text(a0), self.text(a1)
        if t0 is None or t1 is None or t0 == t1 or a0.lineno != a1.lineno:
            return
        (line, s0), (_, e0) = self.start(a0), self.end(a0)
        (_, s1), (_, e1) = self.start(a1), self.end(a1)
        text = self.lines[line - 1]
        # Replace the whole span [s0, e1) so the change is one edit.
        self.replace(line, s0, e1, t1 + text[e0:s1] + t0, "swap-args")

    def _first_operand(self, value):
        if isinstance(value, ast.BinOp):
            return value.left
        if isinstance(value, ast.BoolOp):
            return value.values[0]
        if isinstance(value, ast.Compare):
            return value.left
        if isinstance(value, ast.IfExp):
            return value.body
        if isinstance(value, ast.Call):
            for a in value.args:
                if isinstance(a, ast.Starred):
                    return None
                if not (isinstance(a, ast.Constant) and isinstance(a.value, str)):
                    return a
        return None

    def first_operand(self, node):
        if isinstance(node, ast.Return) and node.value is not None:
            value = node.value
        elif isinstance(node, ast.Lambda):
            value = node.body
        else:
            return
        operand = self._first_operand(value)
        if operand is None:
            return
        vt, ot = self.text(value), self.text(operand)
        if vt is None or ot is None or vt == ot:
            return
        (line, a), (_, b) = self.start(value), self.end(value)
        self.replace(line, a, b, ot, "first-operand")

    def drop_call(self, node):
        """A call made for its effect (``rows.append(w)``, ``warnings.warn(...)``) removed.

        Only inside functions: a module-level call statement registers an op, and dropping
        one only removes the op (every test using it fails, which says nothing new)."""
        if not (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and id(node) in self.in_function
        ):
            return
        (line, a), (end_line, b) = self.start(node), self.end(node)
        if line == end_line:
            self.replace(line, a, b, "pass", "drop-call")
        else:  # one-line edit of a multi-line call: short-circuit it away
            self.replace(line, a, a, "False and ", "drop-call")

    def drop_raise(self, node):
        """A one-line guard ``raise X(...)`` removed (the code goes on past the check)."""
        if isinstance(node, ast.Raise) and node.exc is not None and node.lineno == node.end_lineno:
            (line, a), (_, b) = self.start(node), self.end(node)
            self.replace(line, a, b, "pass", "drop-raise")

    def drop_kink(self, node):
        """``OPS[...].kink = rule`` -> the op warns about nothing."""
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Attribute)
            and node.targets[0].attr == "kink"
        ):
            line, a = self.start(node.value)
            self.replace(line, a, a, "None and ", "drop-kink")


def find_mutants(target: str, repo: Path) -> list[Mutant]:
    out = []
    for rel in TARGETS[target]["files"]:
        src = (repo / rel).read_text(encoding="utf-8")
        out.extend(SiteFinder(target, rel, src).find())
    for i, m in enumerate(out):
        m.index = i
    return out


def sample(mutants: list[Mutant], n: int | None, seed: int) -> list[Mutant]:
    if n is None or n >= len(mutants):
        return list(mutants)
    rng = random.Random(f"{seed}:{mutants[0].target}" if mutants else seed)
    return sorted(rng.sample(mutants, n), key=lambda m: m.index)


# ---------------------------------------------------------------------------
# The copy and the test runs
# ---------------------------------------------------------------------------


def package_dirs(repo: Path) -> dict[str, str]:
    try:
        import tomllib  # Python 3.11+

        data = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))
        mapping = data["tool"]["setuptools"]["package-dir"]
        if mapping:
            return dict(mapping)
    except (ImportError, OSError, KeyError, ValueError):
        pass
    return dict(FALLBACK_PACKAGE_DIR)


def repo_files(repo: Path) -> list[str]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=repo,
            capture_output=True,
            check=True,
        ).stdout
        names = [n for n in out.decode().split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        skip = {
            ".git",
            "__pycache__",
            ".hypothesis",
            ".pytest_cache",
            ".venv",
            "venv",
            "build",
            "dist",
            ".ruff_cache",
        }
        names = []
        for root, dirs, files in os.walk(repo):
            dirs[:] = [d for d in dirs if d not in skip and not d.endswith(".egg-info")]
            names += [
                os.path.relpath(os.path.join(root, f), repo)
                for f in files
                if not f.endswith(".pyc")
            ]
    return sorted(set(names))


SITECUSTOMIZE = """\
# Written by bench/mutate.py: import autograd_cli from this copy of the repository,
# ahead of any installed or editable autograd_cli.
import importlib.util
import os
import sys
from importlib.machinery import PathFinder

_MAPPING = {mapping!r}


class _MutateCopyFinder:
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname in _MAPPING:
            init = os.path.join(_MAPPING[fullname], "__init__.py")
            if os.path.exists(init):
                return importlib.util.spec_from_file_location(fullname, init)
            return None
        parent = fullname.rpartition(".")[0]
        if parent in _MAPPING:
            return PathFinder.find_spec(fullname, [_MAPPING[parent]])
        return None


sys.meta_path.insert(0, _MutateCopyFinder)
"""

PLUGIN = """\
# Written by bench/mutate.py.  Hypothesis: no example database, so one mutant's failing
# examples are never replayed against the next (results do not depend on the order), and
# no shrinking or explaining: a mutant only needs *a* failing example, and shrinking one
# can take minutes.  Generation is untouched, so the tests find exactly what they would.
def pytest_configure(config):
    try:
        from hypothesis import Phase, settings
    except ImportError:
        return
    phases = [p for p in Phase if p.name not in ("shrink", "explain")]
    settings.register_profile("mutate", database=None, phases=phases)
    settings.load_profile("mutate")
"""


class Copy:
    """One private copy of the repository, with its import redirection."""

    def __init__(
        self, repo: Path, root: Path, files: list[str], python: str, env: dict | None = None
    ):
        self.repo = repo
        self.root = root
        self.python = python
        self.tree = root / "repo"
        self.boot = root / "boot"
        for name in files:
            src = repo / name
            if not src.is_file():  # deleted but tracked, or a submodule
                continue
            dst = self.tree / name
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
        self.boot.mkdir(parents=True)
        mapping = {pkg: str((self.tree / d).resolve()) for pkg, d in package_dirs(repo).items()}
        (self.boot / "sitecustomize.py").write_text(SITECUSTOMIZE.format(mapping=mapping))
        (self.boot / "_mutate_plugin.py").write_text(PLUGIN)
        self.env = dict(os.environ)
        self.env["PYTHONPATH"] = os.pathsep.join(
            [str(self.boot)] + ([self.env["PYTHONPATH"]] if self.env.get("PYTHONPATH") else [])
        )
        self.env["PYTHONDONTWRITEBYTECODE"] = "1"
        self.env["PYTHONHASHSEED"] = "0"
        self.env.pop("PYTEST_ADDOPTS", None)
        self.env.update(env or {})
        self.originals: dict[str, str] = {}

    def check_imports(self, modules: list[str]) -> list[str]:
        """Problems, if the modules do not import from this copy."""
        code = (
            "import importlib, json\n"
            f"print(json.dumps({{m: importlib.import_module(m).__file__\n"
            f"                  for m in {modules!r}}}))"
        )
        r = subprocess.run(
            [self.python, "-c", code],
            cwd=self.tree,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if r.returncode != 0:
            return [f"importing {modules} failed: {r.stderr.strip()[-500:]}"]
        where = json.loads(r.stdout.strip().splitlines()[-1])
        base = str(self.tree.resolve())
        return [
            f"{m} imports from {f}, not from the copy {base}"
            for m, f in where.items()
            if not str(Path(f).resolve()).startswith(base)
        ]

    def write(self, rel: str, text: str) -> None:
        path = self.tree / rel
        if rel not in self.originals:
            self.originals[rel] = path.read_text(encoding="utf-8")
        path.write_text(text, encoding="utf-8")

    def restore(self, rel: str) -> None:
        if rel in self.originals:
            (self.tree / rel).write_text(self.originals[rel], encoding="utf-8")

    def pytest(self, tests: list[str], timeout: float, extra: list[str]):
        """(status, seconds, killed_by, output tail) of one pytest run in this copy."""
        cmd = [self.python, "-m", "pytest", *PYTEST_ARGS, *extra, *tests]
        t0 = time.monotonic()
        proc = subprocess.Popen(
            cmd,
            cwd=self.tree,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            errors="replace",
            start_new_session=True,
        )
        try:
            out, _ = proc.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # our own session: pytest and its children
            except ProcessLookupError:
                pass
            try:
                out, _ = proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:  # a grandchild in another session holds the pipe
                proc.kill()
                out = ""
            timed_out = True
        seconds = time.monotonic() - t0
        out = out or ""
        # "FAILED tests/x.py::test[param id] - message": the id may contain blanks.
        failed = re.findall(r"^(?:FAILED|ERROR) (\S*\[.*?\](?= - |$)|\S+)", out, re.M)
        killed_by = failed[0] if failed else ""
        if timed_out:
            status = "timeout"
        elif proc.returncode == 0:
            status = "survived"
        elif proc.returncode == 1:
            status = "killed"
        elif proc.returncode == 4 and "while loading conftest" in out:
            # the package no longer imports (tests/conftest.py imports it), and the baseline
            # ran this same command: the mutant broke the import, so it is an error (killed)
            status, killed_by = "error", killed_by or "tests/conftest.py (import)"
        elif proc.returncode in (3, 4, 5):  # internal error, usage error, no tests collected
            status = "tool-error"
        else:  # 2: interrupted (collection/import error); negative: crashed by a signal
            status = "error"
        return status, seconds, killed_by, out[-3000:]


def apply_mutant(source: str, m: Mutant) -> str:
    lines = source.splitlines(keepends=True)
    line = lines[m.line - 1]
    if line.rstrip("\r\n") != m.original:
        raise RuntimeError(f"{m.file}:{m.line} changed since the mutants were found")
    lines[m.line - 1] = m.mutant + line[len(line.rstrip("\r\n")) :]
    return "".join(lines)


# ---------------------------------------------------------------------------
# Equivalent mutants
# ---------------------------------------------------------------------------

_EQUIV_RE = re.compile(r"^(?P<file>[^:\s]+):(?P<line>\d+): (?P<rest>.*)$")


def load_equivalents(path: Path) -> list[dict]:
    if not path or not path.exists():
        return []
    entries = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        m = _EQUIV_RE.match(raw.strip())
        if m:
            entries.append(
                {
                    "file": m["file"],
                    "line": int(m["line"]),
                    "rest": m["rest"],
                    "raw": raw.strip(),
                    "used": False,
                }
            )
    return entries


def match_equivalent(m: Mutant, entries: list[dict], siblings=None) -> str | None:
    """The reason, if ``m`` is listed.  The line number may have moved; the text must match.

    ``siblings``: the lines of the file where the same change is made (``m``'s among them).
    An entry then explains only the one nearest its own line: the same text on another line
    may be another matter (a reversed slice of a list that holds k entries there, and of a
    longer one elsewhere), so a listed equivalent does not hide a real survivor."""
    key = m.text_key

    def reason(e):
        rest = e["rest"]
        if rest == key:
            return "(no reason given)"
        if rest.startswith(key + " # "):
            return rest[len(key) + 3 :].strip()
        return None

    candidates = [e for e in entries if e["file"] == m.file and reason(e) is not None]
    if siblings and len(siblings) > 1:
        candidates = [
            e
            for e in candidates
            if min(siblings, key=lambda line: (abs(line - e["line"]), line)) == m.line
        ]
    if not candidates:
        return None
    best = min(candidates, key=lambda e: abs(e["line"] - m.line))
    best["used"] = True
    return reason(best)


# ---------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------


@dataclass
class TargetResult:
    name: str
    files: list
    tests: list
    total_mutants: int = 0
    selected: int = 0
    baseline_seconds: float = 0.0
    timeout_seconds: float = 0.0
    setup_problem: str = ""
    extra_args: list = field(default_factory=list)  # pytest arguments for every run
    deselected: list = field(default_factory=list)  # baseline failures left out
    mutants: list = field(default_factory=list)
    #: (file, text_key) -> the lines of every mutant of the target with that change
    siblings: dict = field(default_factory=dict)
    seconds: float = 0.0


def counts(mutants: list[Mutant]) -> dict:
    c = {s: 0 for s in ("killed", "error", "timeout", "survived", "tool-error", "not-run")}
    for m in mutants:
        c[m.status if m.status in c else "not-run"] += 1
    ran = c["killed"] + c["error"] + c["timeout"] + c["survived"]
    dead = c["killed"] + c["error"] + c["timeout"]
    equiv = sum(1 for m in mutants if m.status == "survived" and m.equivalent)
    c["run"] = ran
    c["equivalent"] = equiv
    c["kill_rate"] = round(dead / ran, 4) if ran else None
    c["kill_rate_non_equivalent"] = round(dead / (ran - equiv), 4) if ran - equiv else None
    return c


def fmt_rate(r):
    return "n/a" if r is None else f"{100 * r:5.1f}%"


def module_of(rel: str, mapping: dict[str, str]) -> str | None:
    p = Path(rel)
    for pkg, d in sorted(mapping.items(), key=lambda kv: -len(kv[1])):
        if p.parent == Path(d):
            return pkg if p.stem == "__init__" else f"{pkg}.{p.stem}"
    return None


# ---------------------------------------------------------------------------
# The JSON report: no path of this machine in it
# ---------------------------------------------------------------------------


def interpreter_version(python: str) -> str:
    """The interpreter's implementation and version ("CPython 3.12.3"), never its path."""
    code = "import platform; print(platform.python_implementation(), platform.python_version())"
    try:
        r = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60)
        if r.returncode == 0 and r.stdout.strip():
            return r.stdout.strip().splitlines()[-1]
    except (OSError, subprocess.SubprocessError):
        pass
    return "unknown"


def relative_to(path: str, repo: Path) -> str:
    """``path`` relative to the repository when it lies inside it, else its file name."""
    p = Path(path).resolve()
    try:
        return p.relative_to(repo.resolve()).as_posix()
    except ValueError:
        return p.name


def interpreter_prefixes(python: str) -> list[str]:
    """The installation folders of ``python`` (its ``sys.prefix``, ``base_prefix``,
    ``exec_prefix``, ``base_exec_prefix``) and its executable, as that interpreter reports them:
    a venv's tracebacks show both the venv and the base installation's standard library."""
    code = (
        "import json, sys; print(json.dumps([sys.prefix, sys.base_prefix, sys.exec_prefix,"
        " sys.base_exec_prefix, sys.executable]))"
    )
    try:
        r = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60)
        if r.returncode == 0 and r.stdout.strip():
            return [str(s) for s in json.loads(r.stdout.strip().splitlines()[-1])]
    except (OSError, subprocess.SubprocessError, ValueError):
        pass
    return []


def machine_paths(repo: Path, tmp: Path, jobs: int, python: str) -> dict[str, str]:
    """This machine's absolute paths that test output can mention -> their stand-ins: the
    copies' trees and the repository become ``.`` (a test id or traceback path relative to
    the repository), the temporary folder ``<tmp>``, the interpreter's installation
    ``<python>``, the home folder ``~``.  Only absolute paths are kept (``--python python``
    names no folder: a relative name must never replace text), each as given and resolved."""
    found = shutil.which(python) or python
    py = Path(found)
    candidates: list[tuple[str, str]] = []
    for prefix in [
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        *interpreter_prefixes(found),
    ]:
        candidates.append((prefix, "<python>"))
    if py.is_absolute():
        candidates += [(str(py), "<python>"), (str(py.parent.parent), "<python>")]
    candidates.append((os.path.expanduser("~"), "~"))
    for root in (tmp, tmp.resolve()):
        candidates.append((str(root), "<tmp>"))
        for i in range(jobs):
            candidates.append((str(root / f"w{i}" / "repo"), "."))
    candidates += [(str(repo), "."), (str(repo.resolve()), ".")]
    paths: dict[str, str] = {}
    for path, stand_in in candidates:
        for variant in {path, os.path.realpath(path)} if path else ():
            if os.path.isabs(variant) and variant.rstrip(os.sep):
                paths[variant] = stand_in  # later (more specific) entries win on a tie
    return paths


def scrub(obj, paths: dict[str, str]):
    """``obj`` (strings, lists, dicts) with each path of ``paths`` replaced by its stand-in,
    longest first (a copy's tree before the temporary folder holding it)."""
    order = sorted(paths.items(), key=lambda kv: -len(kv[0]))

    def text(s: str) -> str:
        for path, stand_in in order:
            if path in s:
                s = s.replace(path, stand_in)
        return s

    if isinstance(obj, str):
        return text(obj)
    if isinstance(obj, (list, tuple)):
        return [scrub(v, paths) for v in obj]
    if isinstance(obj, dict):
        return {k: scrub(v, paths) for k, v in obj.items()}
    return obj


def build_report(
    results: list[TargetResult],
    *,
    seed: int,
    sample_per_target: int | None,
    jobs: int,
    wall: float,
    pytest_args: list,
    env: dict,
    python: str,
    rerun: str | None,
    machine_paths: dict[str, str],
) -> dict:
    """The --json-out report.  Paths are the repository's (relative); the text that comes from
    test runs (setup problems, killed-by ids, tool errors) and the options is scrubbed of this
    machine's paths (:func:`machine_paths`), so the report can be committed.  The mutants'
    source lines are code and are stored as they are."""
    everything = [m for tr in results for m in tr.mutants if not tr.setup_problem]

    def mutant(m: Mutant) -> dict:
        d = dict(asdict(m), key=m.key)
        d["killed_by"] = scrub(m.killed_by, machine_paths)
        return d

    return {
        "python": python,
        "seed": seed,
        "rerun": rerun,
        "sample_per_target": sample_per_target,
        "jobs": jobs,
        "wall_seconds": round(wall, 1),
        "pytest_args": scrub(list(pytest_args), machine_paths),
        "env": scrub(dict(env), machine_paths),
        "overall": counts(everything),
        "targets": {
            tr.name: {
                "files": tr.files,
                "tests": tr.tests,
                "total_mutants": tr.total_mutants,
                "selected": tr.selected,
                "baseline_seconds": tr.baseline_seconds,
                "timeout_seconds": tr.timeout_seconds,
                "setup_problem": scrub(tr.setup_problem, machine_paths),
                "deselected_baseline_failures": scrub(list(tr.deselected), machine_paths),
                "mutant_seconds": tr.seconds,
                "counts": counts(tr.mutants),
                "mutants": [mutant(m) for m in tr.mutants],
            }
            for tr in results
        },
        "survivors": [m.key for m in everything if m.status == "survived"],
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--target",
        action="append",
        choices=sorted(TARGETS),
        help="a target to mutate (repeatable; default: all of " + ", ".join(TARGETS) + ")",
    )
    for name in TARGETS:
        ap.add_argument(
            f"--{name}",
            action="append_const",
            const=name,
            dest="target",
            help=f"same as --target {name}",
        )
    size = ap.add_mutually_exclusive_group()
    size.add_argument(
        "--sample",
        type=int,
        metavar="N",
        help=f"run N mutants per target, chosen at random with --seed (default: {DEFAULT_SAMPLE})",
    )
    size.add_argument("--all", action="store_true", help="run every mutant (slow)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help="the sample's seed (default 0)")
    ap.add_argument(
        "--rerun",
        metavar="REPORT.json",
        help="run again the survivors of an earlier --json-out report (found by "
        "their text, so moved lines are fine): did a new test kill them?",
    )
    ap.add_argument(
        "--operator",
        action="append",
        help="only mutants of this operator (repeatable): arith, compare, boolop, "
        "unary, negate, constant, swap-args, first-operand, drop-call, "
        "drop-raise, drop-kink",
    )
    ap.add_argument("--lines", metavar="A-B", help="only mutants on these lines (e.g. 300-420)")
    ap.add_argument("--jobs", type=int, default=1, help="mutants run in parallel (default 1)")
    ap.add_argument(
        "--timeout",
        type=float,
        help="seconds per mutant (default: 2x the target's baseline + 30 s)",
    )
    ap.add_argument(
        "--max-seconds",
        type=float,
        help="stop starting mutants after this many seconds (the rest: not run)",
    )
    ap.add_argument("--json-out", metavar="FILE", help="write the full report as JSON")
    ap.add_argument(
        "--equivalent",
        metavar="FILE",
        default=str(EQUIVALENT_FILE),
        help="the equivalent-mutants list (default bench/mutate_equivalent.txt)",
    )
    ap.add_argument("--list", action="store_true", help="list the selected mutants; run nothing")
    ap.add_argument(
        "--python",
        default=sys.executable,
        help="interpreter with the project's dependencies and pytest",
    )
    ap.add_argument(
        "--pytest-arg",
        action="append",
        default=[],
        help="extra argument for every pytest run (repeatable)",
    )
    ap.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="environment for the test runs (repeatable), e.g. "
        "SYMPY_PROPERTY_EXAMPLES=30 for quicker, weaker property tests",
    )
    ap.add_argument(
        "--skip-failing-baseline",
        action="store_true",
        help="when a test fails on the unmutated code (someone mid-edit), deselect "
        f"it (reported) instead of stopping with an error; at most {MAX_DESELECT}",
    )
    ap.add_argument("--repo", default=str(REPO), help=argparse.SUPPRESS)
    ap.add_argument("--keep", action="store_true", help="keep the temporary copies")
    ap.add_argument("--quiet", action="store_true", help="no per-mutant progress lines")
    args = ap.parse_args(argv)

    repo = Path(args.repo).resolve()
    names = list(dict.fromkeys(args.target or list(TARGETS)))
    n_sample = None if args.all else (args.sample if args.sample is not None else DEFAULT_SAMPLE)
    line_range = None
    if args.lines:
        lo, _, hi = args.lines.partition("-")
        line_range = (int(lo), int(hi or lo))

    started = time.monotonic()
    log = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=sys.stderr, flush=True))

    rerun = None
    if args.rerun:
        report = json.loads(Path(args.rerun).read_text(encoding="utf-8"))
        rerun = [
            {
                "file": m["file"],
                "line": m["line"],
                "context": m.get("context", ""),
                "text_key": f"{code_of(m['original'])} -> {code_of(m['mutant'])}",
            }
            for t in report["targets"].values()
            for m in t["mutants"]
            if m["status"] == "survived"
        ]
        if not args.target:
            names = [
                n
                for n in names
                if any(
                    m["target"] == n
                    for t in report["targets"].values()
                    for m in t["mutants"]
                    if m["status"] == "survived"
                )
            ]

    def select(source_root: Path) -> list[TargetResult]:
        out = []
        for name in names:
            spec = TARGETS[name]
            tr = TargetResult(
                name, list(spec["files"]), [t for t in spec["tests"] if (source_root / t).is_file()]
            )
            every = find_mutants(name, source_root)
            tr.total_mutants = len(every)
            for m in every:
                tr.siblings.setdefault((m.file, m.text_key), []).append(m.line)
            pool = [
                m
                for m in every
                if (not args.operator or m.operator in args.operator)
                and (not line_range or line_range[0] <= m.line <= line_range[1])
            ]
            if rerun is not None:  # the survivors of an earlier report, found again by text
                picked = {}
                for want in rerun:
                    same = [
                        m for m in pool if m.file == want["file"] and m.text_key == want["text_key"]
                    ]
                    if same:
                        m = min(
                            same,
                            key=lambda m: (
                                m.context != want["context"],
                                abs(m.line - want["line"]),
                            ),
                        )
                        picked[m.index] = m
                    elif want["file"] in spec["files"]:
                        print(
                            f"warning: {want['file']}:{want['line']}: {want['text_key']} is not in "
                            "the code any more (edited or reformatted): run it with --lines",
                            file=sys.stderr,
                        )
                tr.mutants = [picked[i] for i in sorted(picked)]
            else:
                tr.mutants = sample(pool, n_sample, args.seed)
            tr.selected = len(tr.mutants)
            tr.extra_args = list(args.pytest_arg)
            out.append(tr)
        return out

    if args.list:
        for tr in select(repo):
            ops = {}
            for m in tr.mutants:
                ops[m.operator] = ops.get(m.operator, 0) + 1
            print(
                f"== {tr.name}: {tr.selected} of {tr.total_mutants} mutants; tests: "
                f"{' '.join(tr.tests) or '(none)'}"
            )
            print("   by operator: " + ", ".join(f"{k} {v}" for k, v in sorted(ops.items())))
            for m in tr.mutants:
                print(f"  [{m.operator}] {m.key}")
        return 0

    extra_env = {}
    for item in args.env:
        k, sep, v = item.partition("=")
        if not sep:
            ap.error(f"--env wants NAME=VALUE, got {item!r}")
        extra_env[k] = v
    equivalents = load_equivalents(Path(args.equivalent)) if args.equivalent else []
    files = repo_files(repo)
    tmp = Path(tempfile.mkdtemp(prefix="autograd-mutate-"))
    jobs = max(1, args.jobs)
    log(f"mutate: copying {len(files)} files into {tmp} ({jobs} cop{'y' if jobs == 1 else 'ies'})")
    # One snapshot of the working tree (others may be editing it): the mutants are found in
    # the snapshot, and further copies for --jobs are made from it, not from the tree.
    results: list[TargetResult] = []
    try:
        copies = [Copy(repo, tmp / "w0", files, args.python, extra_env)]
        copies += [
            Copy(copies[0].tree, tmp / f"w{i}", files, args.python, extra_env)
            for i in range(1, jobs)
        ]
        results = select(copies[0].tree)
        mapping = package_dirs(copies[0].tree)
        # Setup: imports come from the copy; per target, the baseline passes and a canary dies.
        for c in copies:
            modules = sorted({module_of(f, mapping) for tr in results for f in tr.files} - {None})
            problems = c.check_imports(modules)
            if problems:
                print(
                    "mutate: the copy is not what gets imported:\n  " + "\n  ".join(problems),
                    file=sys.stderr,
                )
                return 2
        first = copies[0]

        def setup_failed(tr: TargetResult) -> int:
            # A failing baseline (or a canary that lives) is an error: the target's mutants
            # cannot be judged, and leaving it out would report a kill rate without it.
            print(f"mutate: error: target {tr.name}: {tr.setup_problem}", file=sys.stderr)
            return 2

        for tr in results:
            if not tr.tests:
                tr.setup_problem = (
                    f"none of its test files exists ({' '.join(TARGETS[tr.name]['tests'])})"
                )
                return setup_failed(tr)
            if not tr.mutants:
                continue
            while True:
                status, secs, by, out = first.pytest(tr.tests, 3600, tr.extra_args)
                tr.baseline_seconds = round(secs, 2)
                if status == "survived" or not (
                    args.skip_failing_baseline
                    and status == "killed"
                    and by
                    and len(tr.deselected) < MAX_DESELECT
                ):
                    break
                # A test that fails without any mutant (someone is mid-edit): leave it out.
                log(f"mutate: {tr.name}: baseline fails in {by}: deselecting it and retrying")
                tr.deselected.append(by)
                tr.extra_args += ["--deselect", by]
            if status != "survived":
                failing = f"{by} fails" if by else f"its tests end with {status!r}"
                tr.setup_problem = (
                    f"the baseline fails: on the unmutated code {failing}; fix the code or the "
                    f"test first (--skip-failing-baseline deselects up to {MAX_DESELECT} failing "
                    f"tests instead)\n{out[-1500:]}"
                )
                return setup_failed(tr)
            tr.timeout_seconds = round(args.timeout or (2 * secs + 30), 1)
            rel = tr.files[0]
            first.write(
                rel, first.originals.get(rel, (first.tree / rel).read_text()) + "\n" + CANARY + "\n"
            )
            try:
                cstatus, _, _, cout = first.pytest(tr.tests, tr.timeout_seconds, tr.extra_args)
            finally:
                first.restore(rel)
            if cstatus == "survived" or "mutate.py canary" not in cout:
                tr.setup_problem = (
                    f"the canary in {rel} was not killed ({cstatus}): the tests "
                    f"do not run the copy's code"
                )
                return setup_failed(tr)
            log(
                f"mutate: {tr.name}: baseline passes in {secs:.1f}s; canary killed; "
                f"{tr.selected} of {tr.total_mutants} mutants, "
                f"timeout {tr.timeout_seconds:.0f}s each"
            )

        # The mutants.
        work = [(tr, m) for tr in results if not tr.setup_problem for m in tr.mutants]
        free: queue.Queue = queue.Queue()
        for c in copies:
            free.put(c)
        lock = threading.Lock()
        done = [0]

        def run_one(item):
            tr, m = item
            if args.max_seconds is not None and time.monotonic() - started > args.max_seconds:
                m.status = "not-run"
                return
            c = free.get()
            try:
                c.write(
                    m.file,
                    apply_mutant(
                        c.originals.get(m.file) or (c.tree / m.file).read_text(encoding="utf-8"), m
                    ),
                )
                try:
                    m.status, secs, m.killed_by, _ = c.pytest(
                        tr.tests, tr.timeout_seconds, tr.extra_args
                    )
                finally:
                    c.restore(m.file)
                m.seconds = round(secs, 2)
            except Exception as exc:  # noqa: BLE001 - report it with the mutant, go on
                m.status, m.killed_by = "tool-error", f"{type(exc).__name__}: {exc}"
            finally:
                free.put(c)
            with lock:
                done[0] += 1
                log(
                    f"[{done[0]}/{len(work)}] {tr.name} {m.file}:{m.line} {m.operator}: "
                    f"{m.status} ({m.seconds:.1f}s){' by ' + m.killed_by if m.killed_by else ''}"
                )

        with ThreadPoolExecutor(max_workers=jobs) as ex:
            list(ex.map(run_one, work))
        for tr in results:
            tr.seconds = round(sum(m.seconds for m in tr.mutants), 1)
            for m in tr.mutants:
                siblings = tr.siblings.get((m.file, m.text_key))
                if m.status == "survived":
                    m.equivalent = match_equivalent(m, equivalents, siblings) or ""
                elif m.status in ("killed", "error", "timeout") and match_equivalent(
                    m, equivalents, siblings
                ):
                    m.equivalent = "LISTED AS EQUIVALENT BUT KILLED: remove it from the list"
    finally:
        if args.keep:
            log(f"mutate: copies kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    # Report.
    wall = time.monotonic() - started
    everything = [m for tr in results for m in tr.mutants if not tr.setup_problem]
    print()
    print(
        f"{'target':10} {'mutants':>9} {'run':>5} {'killed':>6} {'error':>5} {'timeout':>7} "
        f"{'surv':>5} {'equiv':>5} {'kill rate':>9} {'non-eq':>7} {'baseline':>8} "
        f"{'seconds':>8} {'est. all':>9}"
    )
    for tr in results:
        c = counts(tr.mutants)
        per = tr.seconds / c["run"] if c["run"] else 0
        est = per * tr.total_mutants
        print(
            f"{tr.name:10} {f'{tr.selected}/{tr.total_mutants}':>9} {c['run']:5} "
            f"{c['killed']:6} {c['error']:5} {c['timeout']:7} {c['survived']:5} "
            f"{c['equivalent']:5} {fmt_rate(c['kill_rate']):>9} "
            f"{fmt_rate(c['kill_rate_non_equivalent']):>7} {tr.baseline_seconds:7.1f}s "
            f"{tr.seconds:7.0f}s {est / 60:7.0f}min"
        )
    c = counts(everything)
    print(
        f"{'overall':10} {len(everything):9} {c['run']:5} {c['killed']:6} {c['error']:5} "
        f"{c['timeout']:7} {c['survived']:5} {c['equivalent']:5} {fmt_rate(c['kill_rate']):>9} "
        f"{fmt_rate(c['kill_rate_non_equivalent']):>7}"
    )
    if c["not-run"]:
        print(f"({c['not-run']} mutants not run: --max-seconds reached)")
    for tr in results:
        for t in tr.deselected:
            print(f"({tr.name}: {t} fails on the unmutated code and was left out)")
    if c["tool-error"]:
        print(f"({c['tool-error']} mutants gave a pytest usage/internal error: not counted)")
    print(f"wall time {wall:.0f}s")

    survivors = [m for m in everything if m.status == "survived"]
    if survivors:
        print("\nsurvivors (file:line: original -> mutant):")
        for m in survivors:
            tag = f"   [equivalent: {m.equivalent}]" if m.equivalent else ""
            print(f"  {m.key}{tag}")
    timeouts = [m for m in everything if m.status == "timeout"]
    if timeouts:
        print("\ntimeouts (counted as killed):")
        for m in timeouts:
            print(f"  {m.key}")
    stale = [m for m in everything if m.equivalent.startswith("LISTED AS EQUIVALENT")]
    for m in stale:
        print(f"\nnote: {m.key} is in {args.equivalent} but was killed")

    if args.json_out:
        report = build_report(
            results,
            seed=args.seed,
            sample_per_target=n_sample,
            jobs=jobs,
            wall=wall,
            pytest_args=PYTEST_ARGS + args.pytest_arg,
            env=extra_env,
            python=interpreter_version(args.python),
            rerun=relative_to(args.rerun, repo) if args.rerun else None,
            machine_paths=machine_paths(repo, tmp, jobs, args.python),
        )
        Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"\nJSON report: {args.json_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
