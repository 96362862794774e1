"""What an SQLite error means for the student's file: damaged, busy, full, unreadable...

Only :data:`CORRUPT` ever justifies moving a progress file aside. Everything else (another
program holding a lock, a full disk, an I/O error, a read-only mount) leaves a healthy file
where it is: the session says so in one line and, for a write, that the answer was not saved.
"""

from __future__ import annotations

import sqlite3

CORRUPT = "corrupt"
"""Not a database, or its pages are damaged (SQLITE_CORRUPT, SQLITE_NOTADB)."""
LOCKED = "locked"
"""Another connection held the lock past the busy timeout (SQLITE_BUSY, SQLITE_LOCKED)."""
FULL = "full"
"""No room to write (SQLITE_FULL: the disk, a quota or ``max_page_count``)."""
IO = "io"
"""The operating system refused a read or write (SQLITE_IOERR_*)."""
READ_ONLY = "read-only"
"""The file or its folder cannot be written or opened (SQLITE_READONLY, CANTOPEN, PERM)."""
OTHER = "other"

_BY_PRIMARY_CODE = {
    sqlite3.SQLITE_CORRUPT: CORRUPT, sqlite3.SQLITE_NOTADB: CORRUPT,
    sqlite3.SQLITE_BUSY: LOCKED, sqlite3.SQLITE_LOCKED: LOCKED,
    sqlite3.SQLITE_FULL: FULL,
    sqlite3.SQLITE_IOERR: IO,
    sqlite3.SQLITE_READONLY: READ_ONLY, sqlite3.SQLITE_CANTOPEN: READ_ONLY,
    sqlite3.SQLITE_PERM: READ_ONLY,
}


def kind(exc: BaseException) -> str:
    """One of the constants above for an ``sqlite3.Error`` (``OTHER`` when it has no code)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return OTHER
    return _BY_PRIMARY_CODE.get(code & 0xFF, OTHER)  # extended codes keep the primary in the low byte


def describe(exc: BaseException, busy_timeout_ms: int) -> str:
    """A short reason a student can act on, with SQLite's own words in brackets."""
    what = kind(exc)
    if what == LOCKED:
        return (f"another program is holding the progress file locked (still busy after "
                f"{busy_timeout_ms / 1000:g} s)")
    if what == FULL:
        return f"the disk is full ({exc})"
    if what == IO:
        return f"the disk reported an error ({exc})"
    if what == READ_ONLY:
        return f"the progress file cannot be written ({exc})"
    return str(exc)


class StoreError(Exception):
    """Progress could not be read or saved (locked for too long, disk full, I/O error).

    Attributes:
        kind: one of the constants of :mod:`tutor.store.faults`.
    """

    def __init__(self, message: str, kind: str = OTHER):
        super().__init__(message)
        self.kind = kind
