"""What every test module shares."""

from __future__ import annotations

import signal

import pytest

from dcnsim import outdir


@pytest.fixture(autouse=True)
def _one_command_per_process():
    """A test that runs the command line in this process (``cli.main``) leaves behind
    what a command sets for the rest of its process, as a command may: Ctrl-C and
    SIGTERM ignored once its output is written (``outdir.ignore_signals_once_written``).
    Put back after each test, so that no test depends on the ones before it."""
    before = [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)]
    yield
    outdir._LAST_OUTPUT = False
    for signum, handler in zip((signal.SIGINT, signal.SIGTERM), before, strict=True):
        signal.signal(signum, signal.SIG_DFL if handler is None else handler)
