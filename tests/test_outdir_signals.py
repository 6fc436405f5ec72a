"""An output put in place whole despite Ctrl-C or SIGTERM (issue 48): the swap of the
new directory for the old holds both signals, so ``out`` is never missing nor an
``.old`` left, and the exit status of a command whose output is its last change
(``run``, ``study``) says 130 or 143 only when the old output is as it was.

The signal is sent from inside the swap itself (between its two renames), the moment
the fresh-clone CI run once hit by chance: deterministic, where the ten-moment tests
of ``test_hostile_input.py`` only sample it."""

import os
import signal

import pytest

from dcnsim import outdir


def _write(text: str):
    def write(tmp):
        (tmp / "summary.json").write_text(text)

    return write


def _signal_between_the_renames(monkeypatch, signum: int) -> None:
    rename = os.rename

    def rename_then_signal(src, dst):
        rename(src, dst)
        if str(dst).endswith("previous"):  # the old output moved away, the new not yet in
            os.kill(os.getpid(), signum)

    monkeypatch.setattr(outdir.os, "rename", rename_then_signal)


@pytest.fixture
def handlers():
    """Ctrl-C raising KeyboardInterrupt during the test (a library another test
    imported, dask_jobqueue, installs its own handler), both handlers put back as
    they were after it."""
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before[0])
    signal.signal(signal.SIGTERM, before[1])


def test_ctrl_c_during_the_swap_is_raised_once_the_new_output_is_whole(
    tmp_path, monkeypatch, handlers
):
    out = tmp_path / "out"
    outdir.write_whole(out, _write("old"), lambda _: [])
    _signal_between_the_renames(monkeypatch, signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        outdir.write_whole(out, _write("new"), lambda _: [])
    assert (out / "summary.json").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_sigterm_during_the_last_output_s_swap_is_ignored_from_then_on(
    tmp_path, monkeypatch, handlers
):
    out = tmp_path / "out"
    outdir.write_whole(out, _write("old"), lambda _: [])
    monkeypatch.setattr(outdir, "_LAST_OUTPUT", False)
    outdir.ignore_signals_once_written()
    terminated = []
    signal.signal(signal.SIGTERM, lambda signum, _frame: terminated.append(signum))
    _signal_between_the_renames(monkeypatch, signal.SIGTERM)
    outdir.write_whole(out, _write("new"), lambda _: [])
    assert (out / "summary.json").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert terminated == []
    assert signal.getsignal(signal.SIGTERM) == signal.getsignal(signal.SIGINT) == signal.SIG_IGN


def test_a_failed_swap_puts_the_old_output_back_and_delivers_the_held_signal(
    tmp_path, monkeypatch, handlers
):
    out = tmp_path / "out"
    outdir.write_whole(out, _write("old"), lambda _: [])
    monkeypatch.setattr(outdir, "_LAST_OUTPUT", False)
    rename = os.rename

    def fail_the_second_rename(src, dst):
        if str(dst).endswith("previous"):
            rename(src, dst)
            os.kill(os.getpid(), signal.SIGINT)
        elif dst == out and ".tmp" in str(src):
            raise OSError(28, "No space left on device")
        else:
            rename(src, dst)

    monkeypatch.setattr(outdir.os, "rename", fail_the_second_rename)
    with pytest.raises(KeyboardInterrupt):
        outdir.write_whole(out, _write("new"), lambda _: [])
    assert (out / "summary.json").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
