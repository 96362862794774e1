"""Opening the store: create, check, repair or fall back (see :mod:`tutor.store`)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import tempfile
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from tutor.paths import data_dir
from tutor.render.safe import shown_path
from tutor.store import core, faults, salvage, schema, stuck
from tutor.store.core import Store, utcnow

FILENAME = "progress.sqlite3"


def default_path() -> Path:
    return data_dir() / FILENAME


def open_store(path: str | Path | None = None, *, now: Callable[[], datetime] = utcnow) -> Store:
    """Open (creating, repairing or falling back as needed) the progress store.

    Args:
        path: the database file; default ``data_dir() / "progress.sqlite3"``.
        now: clock returning aware UTC datetimes (tests inject a fixed one).

    Returns:
        A :class:`Store`; read :attr:`Store.warnings` and show them to the user.
    """
    path = Path(path) if path is not None else default_path()
    warnings: list[str] = []
    try:
        return _open_file(path, warnings, now)
    except (OSError, sqlite3.Error) as exc:  # e.g. a read-only mount that os.access missed
        why = faults.describe(exc, core.BUSY_TIMEOUT_MS) if isinstance(exc, sqlite3.Error) else exc
        return _memory_store(path, warnings, now,
                             f"cannot use the progress file {shown_path(path)} ({why}); answers "
                             "in this session will not be saved")


def _open_file(path: Path, warnings: list[str], now: Callable[[], datetime]) -> Store:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return _memory_store(None, warnings, now,
                             f"cannot create the progress folder {shown_path(path.parent)} "
                             f"({exc.strerror}); answers in this session will not be saved")
    if path.exists() and not path.is_file():
        return _memory_store(None, warnings, now,
                             f"{shown_path(path)} is a {_kind_of(path)}, not a progress file; "
                             "nothing was changed and answers in this session will not be saved "
                             "— move it away, or point ATTN_TUTOR_HOME at another folder")
    if not _writable(path):
        what = _unwritable(path) or "folder"
        return _memory_store(path if what != "unreadable file" else None, warnings, now,
                             _read_only_warning(path, what))

    if path.exists() and path.stat().st_size == 0:
        _move_aside(path, "is empty (zero bytes)", warnings)
    if not path.exists():
        _create(path)
    conn = None
    try:
        conn = _connect(path)
        problem = _check(conn)
    except sqlite3.Error as exc:
        if conn is not None:
            conn.close()
        if faults.kind(exc) != faults.CORRUPT:
            return _unusable(path, exc, warnings, now)
        conn, problem = None, str(exc)
    if problem is not None:
        if conn is not None:
            conn.close()
        aside = _move_aside(path, f"is damaged ({problem})", warnings)
        if not path.exists():
            _create(path)
        conn = _connect(path)
        if aside is not None:
            _salvage(aside, conn, warnings)
    assert conn is not None  # the first connection when it was sound, else the new file's
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > schema.SCHEMA_VERSION:
            conn.close()
            return _memory_store(  # its tables may mean something else now: copy nothing
                None, warnings, now,
                f"{shown_path(path)} was written by a newer attn-tutor (schema {version}, this one knows "
                f"{schema.SCHEMA_VERSION}); it is left untouched and this session's answers "
                "will not be saved — upgrade attn-tutor")
        lost = schema.migrate(conn)
    except sqlite3.Error as exc:
        conn.close()
        return _unusable(path, exc, warnings, now)
    try:
        closed = stuck.close_stuck(conn, now())
    except sqlite3.Error:
        closed = {}  # locked or full just now: closed next time, or by `attn-tutor check`
    if closed:
        warnings.append(stuck.closed_words(closed))
    if lost:
        several = len(lost) > 1
        warnings.append(f"the progress file {shown_path(path)} had lost its {', '.join(lost)} "
                        f"table{'s' * several}; {'they were' if several else 'it was'} created "
                        "again, empty, and the rest of your progress is kept")
    return Store(conn, path, warnings, now)


def _unusable(path: Path, exc: sqlite3.Error, warnings: list[str],
              now: Callable[[], datetime]) -> Store:
    """A healthy file we cannot use now (locked, disk full, I/O error): leave it where it is."""
    why = (f"cannot open the progress file {shown_path(path)}: "
           f"{faults.describe(exc, core.BUSY_TIMEOUT_MS)}; nothing was moved or changed, and "
           "answers in this session will not be saved")
    locked = faults.kind(exc) == faults.LOCKED  # we waited once already: do not wait again
    return _memory_store(path, warnings, now, why, wait=not locked)


def _writable(path: Path) -> bool:
    return _unwritable(path) is None


def _unwritable(path: Path) -> str | None:
    """What keeps the store at ``path`` from being written: ``"folder"`` (the folder is
    read-only: SQLite must create its -wal and -shm there), ``"file"`` (the file is
    read-only), ``"unreadable file"``; None when nothing does."""
    if not os.access(path.parent, os.W_OK | os.X_OK):
        return "folder"
    if path.exists() and not os.access(path, os.R_OK):
        return "unreadable file"
    if path.exists() and not os.access(path, os.W_OK):
        return "file"
    return None


def _read_only_warning(path: Path, what: str) -> str:
    if what == "folder":
        return (f"the progress folder {shown_path(path.parent)} is read-only; answers in this "
                "session will not be saved")
    if what == "file":
        return (f"the progress file {shown_path(path)} is read-only (its folder is not); answers "
                "in this session will not be saved — make it writable to save them")
    return (f"the progress file {shown_path(path)} cannot be read (permission denied); nothing "
            "was changed and answers in this session will not be saved")


def _kind_of(path: Path) -> str:
    """A folder, a named pipe, a device...: what stands where the file should be."""
    mode = path.stat().st_mode
    for test, name in ((stat.S_ISDIR, "folder"), (stat.S_ISFIFO, "named pipe"),
                       (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "device"),
                       (stat.S_ISBLK, "device")):
        if test(mode):
            return name
    return "special file"


def _connect(path: Path | str) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=core.BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                           check_same_thread=False)
    try:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {core.BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        if str(path) != ":memory:":
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL: durable across app crashes
    except BaseException:
        conn.close()
        raise
    return conn


def _check(conn: sqlite3.Connection) -> str | None:
    """None when ``quick_check`` passes, else what it found."""
    rows = conn.execute("PRAGMA quick_check").fetchall()
    found = [r[0] for r in rows]
    return None if found == ["ok"] else "; ".join(found[:3])


def _create(path: Path) -> None:
    """Build an empty, migrated database beside ``path`` and link it into place atomically."""
    tmp = path.with_name(f"{path.name}.new-{os.getpid()}-{threading.get_ident()}")
    try:
        conn = _connect(tmp)
        try:
            schema.migrate(conn)
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
        try:
            os.link(tmp, path)  # fails if another copy created the file first: use theirs
        except FileExistsError:
            pass
        except OSError:  # no hard links on this file system
            if not path.exists():
                os.replace(tmp, path)
    finally:
        for p in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            try:
                p.unlink()
            except FileNotFoundError:
                pass


def _move_aside(path: Path, why: str, warnings: list[str]) -> Path | None:
    """Rename ``path`` (and its -wal, -shm) to ``<name>.damaged-<stamp>``; the new path, or None
    when another copy moved it first."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.damaged-{stamp}-{n}")
    try:
        os.replace(path, target)
    except FileNotFoundError:  # another copy moved it already
        return None
    for suffix in ("-wal", "-shm"):
        side = Path(f"{path}{suffix}")
        if side.exists():
            try:
                os.replace(side, Path(f"{target}{suffix}"))
            except OSError:
                pass
    warnings.append(f"the progress file {shown_path(path)} {why}; it was moved to "
                    f"{shown_path(target.name)} and a fresh one started")
    return target


def _salvage(aside: Path, conn: sqlite3.Connection, warnings: list[str]) -> None:
    """Copy the readable rows of the damaged file into the fresh one; say how many, and where
    the rest is."""
    try:
        copied = salvage.copy_rows(aside, conn)
    except sqlite3.Error:
        copied = {}
    warnings[-1] += salvaged_words(copied, aside)


def salvaged_words(copied: dict[str, int], aside: Path) -> str:
    """``; what could still be read was copied into it (…); the rest stays in PATH``."""
    kept = salvage.counted(copied)
    if not kept:
        return f"; nothing in it could be read, and it is kept as {shown_path(aside)}"
    return (f"; what could still be read was copied into it ({kept}); anything else stays in "
            f"{shown_path(aside)}")


def _memory_store(copy_from: Path | None, warnings: list[str], now: Callable[[], datetime],
                  why: str, *, wait: bool = True) -> Store:
    """An in-memory store seeded with the saved progress of ``copy_from`` when it can be read.

    ``why`` is the warning; it gains a clause when the saved progress could not be copied.
    """
    conn = _connect(":memory:")
    if copy_from is not None and copy_from.exists():
        problem = read_snapshot(copy_from, conn, wait=wait)
        if problem is not None:
            why += f"; your saved progress could not be read either ({problem})"
    warnings.append(why)
    schema.migrate(conn)
    return Store(conn, None, warnings, now)


def read_snapshot(path: Path, into: sqlite3.Connection, *, wait: bool = True,
                  untouched: bool = False) -> str | None:
    """Copy the database at ``path``, with the answers still in its ``-wal``, into ``into``.

    Nothing at ``path`` is written. After a crash the newest answers live only in the
    ``-wal`` file, so the copy is read in this order:

    1. read-only through SQLite (``mode=ro``), which reads the WAL when its ``-shm`` index
       exists or can be made;
    2. when there is no WAL to lose, as an immutable file;
    3. otherwise the file and its ``-wal`` are copied to a temporary folder and opened there,
       where SQLite replays the WAL as it would on the next writable open.

    Args:
        wait: wait up to the busy timeout for another program's lock (else give up at once).
        untouched: skip step 1, which creates ``-wal`` and ``-shm`` files beside ``path``
            when it can (SQLite leaves them there): nothing beside ``path`` changes at all.

    Returns:
        None on success, else why nothing could be read (``into`` is then left empty).
    """
    uri = path.resolve().as_uri()
    wal = Path(f"{path}-wal")
    attempts: list[Callable[[], sqlite3.Connection]] = [] if untouched else [
        lambda: sqlite3.connect(f"{uri}?mode=ro", uri=True,
                                timeout=core.BUSY_TIMEOUT_MS / 1000 if wait else 0)]
    if not wal.exists() or wal.stat().st_size == 0:
        attempts.append(lambda: sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True))
    problem: str | None = "it could not be opened"
    locked = False
    for attempt in attempts:
        try:
            problem = _backup_from(attempt(), into)
        except sqlite3.Error as exc:
            problem = (f"damaged: {exc}" if faults.kind(exc) == faults.CORRUPT
                       else faults.describe(exc, core.BUSY_TIMEOUT_MS))
            locked = locked or faults.kind(exc) == faults.LOCKED
        if problem is None:
            return None
    if wal.exists() and not locked:  # a program holding the lock may be rewriting both files
        try:
            with tempfile.TemporaryDirectory(prefix="attn-tutor-") as tmp:
                copy = Path(tmp) / path.name
                shutil.copyfile(path, copy)
                shutil.copyfile(wal, Path(f"{copy}-wal"))
                return _backup_from(sqlite3.connect(str(copy)), into)
        except (OSError, sqlite3.Error) as exc:
            problem = (faults.describe(exc, core.BUSY_TIMEOUT_MS) if isinstance(exc, sqlite3.Error)
                       else str(exc))
    return problem


def _backup_from(src: sqlite3.Connection, into: sqlite3.Connection) -> str | None:
    """Back ``src`` up into ``into`` if it passes ``quick_check`` and is not newer; closes ``src``."""
    try:
        problem = _check(src)
        if problem is not None:
            return f"damaged: {problem}"
        if src.execute("PRAGMA user_version").fetchone()[0] > schema.SCHEMA_VERSION:
            return "written by a newer attn-tutor"
        src.backup(into)
        return None
    finally:
        src.close()
