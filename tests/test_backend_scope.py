"""The device and the dtype are chosen for a block (``backend.using``), never for good.

A command's ``--device``/``--dtype`` hold for that command's run only; whatever ends a
block (its end, an exception, a failed check) brings back the settings it found, nested
blocks unwind in order, and an unknown name changes nothing.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from autograd_cli.cli.main import run
from autograd_cli.core import api, backend
from autograd_cli.core.errors import DeviceError


def settings():
    return backend.xp, backend.device, backend.default_dtype


DEFAULTS = (np, "cpu", np.float64)


@pytest.fixture
def seen(monkeypatch):
    """Record the backend's settings while ``api.eval_of`` runs (then let it run)."""
    calls = []
    original = api.eval_of

    def spy(*args, **kwargs):
        calls.append(settings())
        return original(*args, **kwargs)

    monkeypatch.setattr(api, "eval_of", spy)
    return calls


def test_defaults_outside_every_block():
    assert settings() == DEFAULTS


def test_a_command_sets_its_dtype_for_its_run_only(seen, capsys):
    assert run(["eval", "x + 1e-9", "--x", "1", "--dtype", "float32", "--json"]) == 0
    assert seen == [(np, "cpu", np.float32)]
    assert '"value": 1.0,' in capsys.readouterr().out  # computed in float32 (1.000000001 in 64)
    assert settings() == DEFAULTS


def test_a_command_inside_a_block_gets_its_own_settings_then_the_blocks_again(seen, capsys):
    with backend.using(dtype="float32"):
        assert run(["eval", "x", "--x", "0.1", "--json"]) == 0  # --dtype float64, the default
        assert seen == [(np, "cpu", np.float64)]
        assert settings() == (np, "cpu", np.float32)
    assert settings() == DEFAULTS


@pytest.mark.parametrize(
    "argv, code",
    [
        (["eval", "log(x) + y", "--x", "1", "--dtype", "float32"], 2),  # no value for y
        (["eval", "x @ x", "--x", "[1, 2, 3]", "--y", "[1]", "--dtype", "float32"], 2),  # no y
        (["eval", "x", "--x", "1", "--dtype", "float16"], 2),  # refused before any block
        (["eval", "x", "--x", "1", "--dtype", "float32", "--device", "tpu"], 2),
        (["check", "sign(x)", "--x", "0", "--dtype", "float32"], 1),  # FAIL: typer.Exit
        (["grad", "x*y", "--x", "[1, 2]", "--y", "[1, 2, 3]", "--dtype", "float32"], 1),  # shapes
    ],
)
def test_settings_come_back_after_a_command_that_fails(argv, code, capsys):
    assert run(argv) == code
    assert settings() == DEFAULTS


def test_settings_come_back_after_a_batch(tmp_path, capsys):
    path = tmp_path / "p.csv"
    path.write_text("x\n1\n")
    argv = ["batch", str(path), "--expr", "x + 1e-9", "--op", "eval", "--dtype", "float32"]
    assert run(argv) == 0
    assert '"value": 1.0,' in capsys.readouterr().out  # float32 (1.000000001 in float64)
    assert settings() == DEFAULTS


def test_settings_come_back_after_an_exception_inside_the_block():
    with pytest.raises(ZeroDivisionError):
        with backend.using(device="cpu", dtype="float32"):
            assert backend.default_dtype is np.float32
            assert backend.asarray(0.5).dtype == np.float32
            raise ZeroDivisionError
    assert settings() == DEFAULTS
    assert backend.asarray(0.5).dtype == np.float64


def test_nested_blocks_unwind_in_order():
    with backend.using(dtype="float32"):
        assert settings() == (np, "cpu", np.float32)
        with backend.using(dtype="float64"):
            assert settings() == (np, "cpu", np.float64)
            with backend.using(device="cpu"):  # None keeps the block's dtype
                assert settings() == (np, "cpu", np.float64)
            assert settings() == (np, "cpu", np.float64)
        assert settings() == (np, "cpu", np.float32)
        with backend.using():
            assert settings() == (np, "cpu", np.float32)
    assert settings() == DEFAULTS


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"device": "tpu"}, DeviceError),
        ({"dtype": "float16"}, ValueError),
        ({"device": "tpu", "dtype": "float64"}, DeviceError),  # the good one is not applied
        ({"device": "cpu", "dtype": "float16"}, ValueError),
    ],
)
def test_an_unknown_device_or_dtype_changes_nothing(kwargs, error):
    with backend.using(dtype="float32"):
        with pytest.raises(error):
            with backend.using(**kwargs):
                pytest.fail("the block must not run")  # pragma: no cover
        assert settings() == (np, "cpu", np.float32)
    assert settings() == DEFAULTS


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="CuPy is installed")
def test_an_unavailable_gpu_changes_nothing():
    with backend.using(dtype="float32"):
        with pytest.raises(DeviceError, match="GPU unavailable"):
            with backend.using(device="gpu", dtype="float64"):
                pytest.fail("the block must not run")  # pragma: no cover
        assert settings() == (np, "cpu", np.float32)
    assert settings() == DEFAULTS


def test_use_device_and_use_dtype_are_gone():
    # Set-and-forget setters would make the state hidden again.
    assert not hasattr(backend, "use_device") and not hasattr(backend, "use_dtype")


def test_each_thread_chooses_for_itself():
    # The settings are a ContextVar: a thread starts from the defaults, whatever the thread
    # that started it chose, and what it chooses stays in that thread.
    import threading

    seen = {}
    barrier = threading.Barrier(2)

    def work(name, dtype):
        seen[name, "start"] = settings()
        with backend.using(dtype=dtype):
            barrier.wait()  # both threads are inside their blocks at once
            seen[name, "inside"] = (settings(), backend.asarray(0.5).dtype)
            barrier.wait()

    with backend.using(dtype="float32"):
        threads = [
            threading.Thread(target=work, args=("a", "float32")),
            threading.Thread(target=work, args=("b", "float64")),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert settings() == (np, "cpu", np.float32)
    assert seen["a", "start"] == seen["b", "start"] == DEFAULTS
    assert seen["a", "inside"] == ((np, "cpu", np.float32), np.float32)
    assert seen["b", "inside"] == (DEFAULTS, np.float64)
    assert settings() == DEFAULTS


def test_a_copied_context_sees_the_callers_choice_and_keeps_its_own():
    import contextvars

    def inner():
        assert settings() == (np, "cpu", np.float32)
        backend._install(np, "cpu", np.float64)  # for good, but in the copy only
        return settings()

    with backend.using(dtype="float32"):
        assert contextvars.copy_context().run(inner) == DEFAULTS
        assert settings() == (np, "cpu", np.float32)
    assert backend.settings() == backend.Settings(np, "cpu", np.float64)


def test_quiet_call_silences_one_call_and_restores_the_state():
    import warnings

    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isinf(backend.quiet_call(np.divide, 1.0, np.zeros(3))).all()
        with backend.quiet():
            assert np.isnan(backend.quiet_call(np.log, -1.0))
    assert np.geterr() == before
