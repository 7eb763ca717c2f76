"""Shared fixtures: run the real command line in-process (through its error boundary)."""

from __future__ import annotations

import json
import os

import pytest

from autograd_cli.cli.main import run
from autograd_cli.core import backend


class CliResult:
    def __init__(self, code, out, err):
        self.code = code
        self.out = out
        self.err = err

    @property
    def json(self):
        return json.loads(self.out)


@pytest.fixture
def cli(capsys):
    """``cli("grad", "x**2", "--x", "3")`` -> CliResult(code, stdout, stderr)."""

    def invoke(*argv):
        capsys.readouterr()
        code = run(list(argv))
        captured = capsys.readouterr()
        # Commands set the global dtype/device; restore the defaults for the next test.
        backend.use_dtype("float64")
        backend.use_device("cpu")
        return CliResult(int(code), captured.out, captured.err)

    return invoke


@pytest.fixture
def torch():
    """PyTorch as an oracle: skipped cleanly where it is not installed, except in CI,
    which installs it and sets AUTOGRAD_CLI_REQUIRE_TORCH=1 so that these tests run."""
    if os.environ.get("AUTOGRAD_CLI_REQUIRE_TORCH"):
        import torch as module  # an ImportError here fails the test: CI promised torch

        return module
    return pytest.importorskip("torch")
