"""Every file the tutor writes is written whole or not at all.

A file written in place is destroyed the moment it is opened for writing: on a full disk,
a quota, a kill or a crash the student is left with half a file where a good one was. So
each writer here writes a temporary file in the same folder (same file system, so the
rename is atomic), flushes it to disk and only then renames it over the target
(:func:`os.replace`). On any error the temporary file is removed and the old file, if there
was one, is untouched.

- :func:`write_text` / :func:`write_bytes` for data in memory;
- :func:`replacing` for a library that wants a path or a file object to write to
  (``genanki``, ``numpy.savez``): it yields the temporary path and renames it when the
  ``with`` block ends without an error.

A new file gets the usual permissions (0666 less the umask); a replaced one keeps its own.
A symbolic link is written through: the file it points at is replaced, the link stays.
``tests/test_atomic_writes.py`` holds every writer of the tutor to this with a real full
disk (``RLIMIT_FSIZE``), and scans ``tutor/`` for a write that bypasses it.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path


def write_text(path: str | Path, text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` atomically (see the module docstring).

    Raises:
        OSError: the file could not be written; ``path`` is then as it was.
    """
    write_bytes(path, text.encode(encoding))


def write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically.

    Raises:
        OSError: the file could not be written; ``path`` is then as it was.
    """
    with replacing(path) as tmp, open(tmp, "wb") as fh:
        fh.write(data)


@contextlib.contextmanager
def replacing(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; when the block ends without an error the file
    written there is synced and renamed over ``path``. On an error it is removed.

    Raises:
        OSError: from the block, the sync or the rename; ``path`` is then as it was.
    """
    target = _real_target(Path(path))
    if target.is_dir():
        raise IsADirectoryError(21, "Is a directory", str(path))
    fd, name = tempfile.mkstemp(prefix=f".{target.name[:100]}.", suffix=".part",
                                dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        _sync(tmp)
        os.chmod(tmp, _mode_for(target))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _real_target(path: Path) -> Path:
    """The file a symbolic link points at (so the link itself stays a link)."""
    if path.is_symlink():
        return Path(os.path.realpath(path))
    return path


def _mode_for(target: Path) -> int:
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask, read without setting it where the system allows (setting it, the
    only portable way, changes it for a moment for every thread)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


_UMASK_LOCK = threading.Lock()


def _sync(tmp: Path) -> None:
    """Flush the data to the disk, so a crash after the rename cannot leave an empty file."""
    with open(tmp, "rb+") as fh:
        os.fsync(fh.fileno())
