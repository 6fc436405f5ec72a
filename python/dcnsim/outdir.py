"""Output directories written whole or not at all, and files written by rename.

Every writer of dcnsim (a run's tables, a study's files, a sweep's runs and catalog)
goes through here: files are written into a temporary directory (or file) beside
the target, which then takes its place. A directory holding entries its writer does
not make is refused rather than replaced: it is probably not one of ours.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = ["check_output_dir", "foreign_files", "write_atomic", "write_whole"]

#: Lists the entries of an existing output directory that its writer does not make.
Foreign = Callable[[Path], Iterable[str]]


def check_output_dir(out_dir: str | os.PathLike[str], foreign: Foreign) -> Path:
    """The output path, if it may be created or replaced; else ``OSError`` saying why."""
    out = Path(out_dir)
    if out.name in ("", ".", ".."):
        out = out.resolve()
    if not out.exists() and not out.is_symlink():
        return out
    if out.is_symlink():
        raise FileExistsError(errno.EEXIST, "is a symbolic link, give the directory itself")
    if not out.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "exists and is not a directory")
    names = sorted(foreign(out))
    if names:
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        raise FileExistsError(
            errno.EEXIST,
            f"refusing to replace a directory holding files dcnsim did not write ({shown})",
        )
    return out


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
    """
    out = check_output_dir(out_dir, foreign)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        # mkdtemp makes it private (0700); the result gets what mkdir would give.
        os.chmod(tmp, 0o777 & ~_UMASK)
        write(tmp)
        _swap_in(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


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


def _swap_in(new: Path, out: Path) -> None:
    if not out.exists():
        os.rename(new, out)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
    os.rename(out, old / "previous")
    try:
        os.rename(new, out)
    except BaseException:
        os.rename(old / "previous", out)
        shutil.rmtree(old, ignore_errors=True)
        raise
    shutil.rmtree(old, ignore_errors=True)
