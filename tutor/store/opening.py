"""Opening the store: create, check, repair or fall back (see :mod:`tutor.store`)."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from tutor.store import schema
from tutor.store.core import Store, utcnow

FILENAME = "progress.sqlite3"
BUSY_TIMEOUT_MS = 5000


def default_path() -> Path:
    from tutor.paths import data_dir

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
        warnings.append(f"cannot use the progress file {path} ({exc}); answers in this "
                        "session will not be saved")
        return _memory_store(path, warnings, now)


def _open_file(path: Path, warnings: list[str], now: Callable[[], datetime]) -> Store:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        warnings.append(f"cannot create the progress folder {path.parent} ({exc.strerror}); "
                        "answers in this session will not be saved")
        return _memory_store(None, warnings, now)
    if not _writable(path):
        warnings.append(f"the progress folder {path.parent} is read-only; answers in this "
                        "session will not be saved")
        return _memory_store(path if path.exists() else None, warnings, now)

    if path.exists() and path.stat().st_size == 0:
        _move_aside(path, "is empty (zero bytes)", warnings)
    if not path.exists():
        _create(path)
    try:
        conn = _connect(path)
        problem = _check(conn)
    except sqlite3.DatabaseError as exc:
        conn, problem = None, str(exc)
    if problem is not None:
        if conn is not None:
            conn.close()
        _move_aside(path, f"is damaged ({problem})", warnings)
        if not path.exists():
            _create(path)
        conn = _connect(path)
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > schema.SCHEMA_VERSION:
        conn.close()
        warnings.append(f"{path} was written by a newer attn-tutor (schema {version}, this one "
                        f"knows {schema.SCHEMA_VERSION}); it is left untouched and this session's "
                        "answers will not be saved — upgrade attn-tutor")
        return _memory_store(path, warnings, now)
    schema.migrate(conn)
    return Store(conn, path, warnings, now)


def _writable(path: Path) -> bool:
    if not os.access(path.parent, os.W_OK | os.X_OK):
        return False
    return not path.exists() or os.access(path, os.R_OK | os.W_OK)


def _connect(path: Path | str) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                           check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    if str(path) != ":memory:":
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL: durable across app crashes
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
        schema.migrate(conn)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
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


def _move_aside(path: Path, why: str, warnings: list[str]) -> None:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.damaged-{stamp}-{n}")
    try:
        os.replace(path, target)
    except FileNotFoundError:  # another copy moved it already
        return
    for suffix in ("-wal", "-shm"):
        side = Path(f"{path}{suffix}")
        if side.exists():
            try:
                os.replace(side, Path(f"{target}{suffix}"))
            except OSError:
                pass
    warnings.append(f"the progress file {path} {why}; it was moved to {target.name} and a "
                    "fresh one started")


def _memory_store(copy_from: Path | None, warnings: list[str],
                  now: Callable[[], datetime]) -> Store:
    """An in-memory store, seeded with a read-only copy of ``copy_from`` when it can be read."""
    conn = _connect(":memory:")
    if copy_from is not None and copy_from.exists():
        try:
            src = sqlite3.connect(f"{copy_from.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
            try:
                if _check(src) is None and \
                        src.execute("PRAGMA user_version").fetchone()[0] <= schema.SCHEMA_VERSION:
                    src.backup(conn)
            finally:
                src.close()
        except sqlite3.Error:
            pass
    conn.row_factory = sqlite3.Row
    schema.migrate(conn)
    return Store(conn, None, warnings, now)
