"""Output directories written whole or not at all, and files written by rename.

Every writer of dcnsim (a run's tables, a study's files, a sweep's runs and catalog)
goes through here: files are written into a temporary directory (or file) beside
the target, which then takes its place. A directory holding entries its writer does
not make is refused rather than replaced: it is probably not one of ours.

A writer killed outright (SIGKILL, a power cut) leaves its temporary directory
beside the target: the next writer of the same target removes it. Only directories
named as this module names them (``.NAME.XXXXXXXX.tmp`` and ``.old``) are removed,
and only those no live writer holds: each writer holds a lock (``flock``) on its
temporary directories while they exist, which the kernel lets go when it dies.
Errors name the path the caller gave, not the temporary one.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from dcnsim._core import ScenarioError

__all__ = [
    "OutputError",
    "check_output_dir",
    "describe",
    "foreign_files",
    "ignore_signals_once_written",
    "uninterrupted",
    "write_atomic",
    "write_whole",
]

#: Lists the entries of an existing output directory that its writer does not make.
Foreign = Callable[[Path], Iterable[str]]


def check_output_dir(out_dir: str | os.PathLike[str], foreign: Foreign) -> Path:
    """The output path, if it may be created or replaced; else ``OSError`` saying why.
    Whether it may be written is tried, not guessed from permissions (which say yes
    to root on ``/proc``, a read-only mount or a full quota): a temporary directory
    is made and removed beside it, or in the nearest existing directory above it."""
    out = Path(out_dir)
    if out.name in ("", ".", ".."):
        out = out.resolve()
    if not out.exists() and not out.is_symlink():
        _try_writing_beside(out)
        return out
    if out.is_symlink():
        raise FileExistsError(errno.EEXIST, "is a symbolic link, give the directory itself")
    if not out.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "exists and is not a directory")
    names = sorted(foreign(out))
    if names:
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        other = _written_by(out)
        whose = f": it is the output of {other}, give another directory" if other else ""
        raise FileExistsError(
            errno.EEXIST,
            f"refusing to replace a directory holding files this command does not write "
            f"({shown}){whose}",
        )
    _try_writing_beside(out)
    return out


def _try_writing_beside(out: Path) -> None:
    """Make and remove a temporary directory (named as :func:`write_whole` names
    its own, so that a writer killed meanwhile leaves nothing a later one keeps)
    where ``out`` would be made: its parent, or the nearest existing directory
    above; ``OSError`` saying why not, for ``out``."""
    parent = out.parent
    while not parent.is_dir() and parent != parent.parent:
        if parent.exists() or parent.is_symlink():
            raise NotADirectoryError(errno.ENOTDIR, f"'{parent}' is not a directory")
        parent = parent.parent
    try:
        os.rmdir(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=parent))
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror) from None


#: A file each of dcnsim's writers always makes, and what to call that writer.
_SIGNATURES = (
    ("catalog.parquet", "a sweep (dcnsim sweep)"),
    ("claims.csv", "a study (dcnsim study)"),
    ("summary.json", "a run (dcnsim run)"),
)


def _written_by(out: Path) -> str | None:
    """Which of dcnsim's commands wrote the directory ``out``, if one did."""
    return next((who for name, who in _SIGNATURES if (out / name).is_file()), None)


def foreign_files(directory: Path, owned: Callable[[Path], bool]) -> list[str]:
    """The names of the entries of ``directory`` that are not ``owned`` files (a link
    or a directory never is)."""
    return [
        p.name for p in directory.iterdir() if p.is_symlink() or not p.is_file() or not owned(p)
    ]


def write_whole(
    out_dir: str | os.PathLike[str], write: Callable[[Path], None], foreign: Foreign
) -> Path:
    """Call ``write(tmp)`` on a new directory beside ``out_dir``, then put it in its place.

    A previous ``out_dir`` is moved away and deleted only once the new one is in.
    Temporary directories a killed writer left beside ``out_dir`` are removed first.
    """
    out = check_output_dir(out_dir, foreign)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        _remove_leftovers(out)
        with _held_dir(out, ".tmp") as tmp:
            try:
                # mkdtemp makes it private (0700); the result gets what mkdir would give.
                os.chmod(tmp, 0o777 & ~_UMASK)
                write(tmp)
                _swap_in(tmp, out)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
    except OSError as exc:
        raise _named_as_given(exc, out, Path(out_dir)) from None
    return out


class OutputError(ScenarioError):
    """An output that cannot be written, as one line naming the argument or option
    that gave its path: ``name 'path': reason``; :meth:`named` says it for another
    name (the command line's ``--out`` for the Python API's ``out``)."""

    def __init__(self, name: str, given: str | os.PathLike[str], exc: OSError) -> None:
        self.given = os.fsdecode(given)
        self.reason = describe(exc, given)
        super().__init__(self.named(name))

    def named(self, name: str) -> str:
        return f"{name} {self.given!r}: {self.reason}"


def describe(exc: OSError, given: str | os.PathLike[str]) -> str:
    """An OSError of writing ``given`` as one line: ``'file': reason``, or the reason
    alone when the file is ``given`` itself (or none)."""
    reason = exc.strerror or str(exc)
    if exc.filename is None or os.fsdecode(exc.filename) == os.fsdecode(given):
        return reason
    return f"'{os.fsdecode(exc.filename)}': {reason}"


def _named_as_given(exc: OSError, out: Path, given: Path) -> OSError:
    """``exc``, a path in a temporary directory beside ``out`` named as the same
    path in ``given`` (the path the caller gave)."""
    if exc.filename is None:
        return exc
    name = Path(os.fsdecode(exc.filename))
    for part in (name, *name.parents):
        if part.parent == out.parent and _is_ours(part.name, out):
            inside = name.relative_to(part)
            if inside.parts[:1] == ("previous",):
                inside = inside.relative_to("previous")
            return OSError(exc.errno, exc.strerror, os.fspath(given / inside))
    return exc


#: The names :func:`tempfile.mkdtemp` gives this module's temporary directories:
#: ``.NAME.`` then 8 of its letters, then ``.tmp`` (being written) or ``.old`` (the
#: previous output, being deleted).
_TEMPORARY = re.compile(r"[a-z0-9_]{8}\.(tmp|old)")


def _is_ours(name: str, out: Path) -> bool:
    """Whether ``name`` is one of this module's temporary directories for ``out``."""
    prefix = f".{out.name}."
    return name.startswith(prefix) and bool(_TEMPORARY.fullmatch(name, len(prefix)))


@contextlib.contextmanager
def _held_dir(out: Path, suffix: str) -> Iterator[Path]:
    """A new temporary directory beside ``out``, locked while the block runs."""
    path = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=suffix, dir=out.parent))
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield path
    finally:
        os.close(fd)


def _remove_leftovers(out: Path) -> None:
    """Remove the temporary directories of writers of ``out`` that died: named as
    this module names them, and not locked. A previous output left in an ``.old``
    directory while ``out`` is missing (a writer killed between its two renames)
    is put back first."""
    for entry in os.scandir(out.parent):
        if not _is_ours(entry.name, out) or entry.is_symlink() or not entry.is_dir():
            continue
        try:
            fd = os.open(entry.path, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a live writer's
            previous = Path(entry.path) / "previous"
            if entry.name.endswith(".old") and previous.is_dir() and not out.exists():
                os.rename(previous, out)
            shutil.rmtree(entry.path, ignore_errors=True)
        finally:
            os.close(fd)


def _read_umask() -> int:
    """The process's umask (reading it means setting it; it is put back at once, at
    import, before any thread of ours could create a file)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def write_atomic(path: Path, write: Callable[[Path], None]) -> None:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it to ``path``."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        # mkstemp makes it private (0600); the result gets what open would give.
        os.chmod(name, 0o666 & ~_UMASK)
        write(Path(name))
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise


#: Whether the output put in place is the last thing the process changes (set by
#: :func:`ignore_signals_once_written`).
_LAST_OUTPUT = False


def ignore_signals_once_written() -> None:
    """Make the next output put in place the last thing this process changes: Ctrl-C
    and SIGTERM are ignored from that moment on. The command line's ``run`` and
    ``study`` ask for it, so that their exit status 130 or 143 always means the old
    output is as it was, and one that comes too late to stop them means exit 0."""
    global _LAST_OUTPUT
    _LAST_OUTPUT = True


@contextlib.contextmanager
def uninterrupted() -> Iterator[None]:
    """Ctrl-C and SIGTERM held while the block runs, so that an output is swapped in
    whole (never ``out`` missing, nor an ``.old`` left) and what was written is counted
    with it (a sweep's run); then delivered as they would have been, or, after
    :func:`ignore_signals_once_written` and a block that ended normally, ignored from
    then on.
    Python runs signal handlers in the main thread only: elsewhere nothing is held.
    A signal caught before the block whose handler has not yet run is held too (the
    handler that runs is the one set when it runs)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    before = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    done = False
    try:
        hold = lambda signum, _frame: held.append(signum)  # noqa: E731
        _set_handlers(hold, hold)
        yield
        done = True
    finally:
        if done and _LAST_OUTPUT:
            _set_handlers(signal.SIG_IGN, signal.SIG_IGN)
        else:
            _set_handlers(*before)
            if held:
                signal.raise_signal(held[0])


def _set_handlers(on_int: Any, on_term: Any) -> None:
    """Set SIGINT's handler and SIGTERM's; a handler run between the two (a signal
    caught earlier) stops neither from being set. A handler Python did not set
    (``None``) is put back as the default action."""
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL if on_int is None else on_int)
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if on_term is None else on_term)


def _swap_in(new: Path, out: Path) -> None:
    with uninterrupted():
        _rename_over(new, out)


def _rename_over(new: Path, out: Path) -> None:
    if not out.exists():
        os.rename(new, out)
        return
    with _held_dir(out, ".old") as old:
        os.rename(out, old / "previous")
        try:
            os.rename(new, out)
        except BaseException:
            os.rename(old / "previous", out)
            shutil.rmtree(old, ignore_errors=True)
            raise
        shutil.rmtree(old, ignore_errors=True)
