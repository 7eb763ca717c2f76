"""Shared fixtures: run the real command line in-process (through its error boundary)."""

from __future__ import annotations

import json
import logging
import os

import pytest

from autograd_cli.cli.main import run
from autograd_cli.core import backend

#: Recent pytest (``_readline_workaround``) imports readline at start-up, and GNU readline
#: puts COLUMNS=80 and LINES=24 in the C environment (not in ``os.environ``): the tests'
#: subprocesses inherit them, the tests themselves do not see them.  pytest-xdist's workers
#: are such subprocesses, so there the tests would see them too.
TERMINAL_SIZE = ("COLUMNS", "LINES")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """pytest-xdist, in the controller: each worker is told COLUMNS and LINES as the tests
    see them here (set or not)."""
    node.workerinput["terminal_size_env"] = {k: os.environ.get(k) for k in TERMINAL_SIZE}


def pytest_configure(config):
    """In a pytest-xdist worker: ``os.environ`` as the controller's, the C environment
    (what subprocesses inherit) as it was, so that ``-n auto`` runs every test, and every
    command line a test starts, in the environment it has without workers."""
    seen = getattr(config, "workerinput", {}).get("terminal_size_env") or {}
    for name, value in seen.items():
        inherited = os.environ.pop(name, None)
        if value is not None:
            os.environ[name] = value
        elif inherited is not None:
            os.putenv(name, inherited)  # the C environment only: os.environ stays without it


#: the longest tests (``--durations``: 5 to 45 s each, a quarter of the suite's CPU time).
#: With pytest-xdist they start first, so that no worker is left running one of them alone
#: at the end while the other cores idle.  A name missing here only costs time.
LONG_TESTS = (
    "test_taylor_mode.py::test_random_trees_match_the_old_path",
    "test_graph_cli.py::test_graph_deep_expression",
    "test_safety.py::test_error_messages_quote_a_short_window",
    "test_linear_time.py::test_parse_and_evaluate_time_grows_linearly",
    "test_taylor_mode.py::test_taylor_mode_matches_sympy_and_the_old_path[beta(x**2, x) + beta(x, 2.5)]",
    "test_simplify_property.py::test_printed_derivatives_mean_the_derivative",
    "test_repl.py::test_a_long_run_of_continued_lines_looks_at_each_line_once",
    "test_batch_property.py::test_batched_lines_equal_single_lines",
    "test_symbolic.py::test_deep_nesting_through_each_stage",
    "test_explain_arrays.py::test_explain_of_a_deep_chain_takes_time_linear_in_its_depth",
    "test_simplify_property.py::test_simplified_form_means_the_original",
    "test_codegen_size.py::test_a_sine_nested_a_hundred_thousand_deep_generates_without_recursion",
    "test_codegen_programs.py::test_random_programs_agree_with_the_engine[jax]",
    "test_codegen_programs.py::test_random_programs_agree_with_the_engine[torch]",
)


def pytest_collection_modifyitems(config, items):
    """In pytest-xdist's workers (each collects the same list, in the same order), the
    longest tests first; without workers the order stays the files' own."""
    if getattr(config, "workerinput", None) is not None:
        items.sort(key=lambda item: not item.nodeid.endswith(LONG_TESTS))  # a stable sort


@pytest.fixture(autouse=True)
def _grad_mode_is_left_on():
    """Every test leaves grad mode on, as it found it: one that turns it off for good would
    make every later test in the process record no graph (CI once failed thousands of tests
    that way).  The test that leaves it off fails, by name, and the mode is put back."""
    from autograd_cli.core import autograd

    yield
    if not autograd.is_grad_enabled():
        autograd.set_grad_enabled(True)
        pytest.fail("this test left grad mode off (autograd.is_grad_enabled() is False)")


class CliResult:
    def __init__(self, code, out, err):
        self.code = code
        self.out = out
        self.err = err

    @property
    def json(self):
        return json.loads(self.out)

    @property
    def docs(self):
        """The output's JSON lines (batch)."""
        return [json.loads(line) for line in self.out.splitlines()]


@pytest.fixture
def cli(capsys):
    """``cli("grad", "x**2", "--x", "3")`` -> CliResult(code, stdout, stderr)."""

    def invoke(*argv):
        capsys.readouterr()
        before = (backend.xp, backend.device, backend.default_dtype)
        code = run([str(a) for a in argv])
        captured = capsys.readouterr()
        # A command chooses its device and dtype for its own run only (backend.using).
        assert (backend.xp, backend.device, backend.default_dtype) == before
        return CliResult(int(code), captured.out, captured.err)

    return invoke


@pytest.fixture
def fresh_parser():
    """The test builds the default parser anew (say, after spoiling the shipped tables);
    the next user of ``parse`` builds it anew again, from the unspoiled tables."""
    from autograd_cli.grammar.parser import default_parser

    default_parser.cache_clear()
    yield
    default_parser.cache_clear()


@pytest.fixture
def torch():
    """PyTorch as an oracle: skipped cleanly where it is not installed, except in CI,
    which installs it and sets AUTOGRAD_CLI_REQUIRE_TORCH=1 so that these tests run."""
    if os.environ.get("AUTOGRAD_CLI_REQUIRE_TORCH"):
        import torch as module  # an ImportError here fails the test: CI promised torch

        return module
    return pytest.importorskip("torch")


@pytest.fixture(scope="module")
def scheduler():
    """A local Dask cluster of two threads in this process, for the module, joined with
    ``--scheduler ADDRESS`` (skips where Dask is not installed)."""
    distributed = pytest.importorskip("distributed")
    pytest.importorskip("dask")
    cluster = distributed.LocalCluster(
        processes=False,
        n_workers=1,
        threads_per_worker=2,
        dashboard_address=":0",
        silence_logs=logging.ERROR,
    )
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()
