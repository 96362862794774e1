"""Mock exams and papers left ``running`` by a program that was stopped (killed, crashed, the
laptop's battery), and closing them.

A sitting saves each answer as it goes and writes its end status last, so a killed one stays
``running`` for ever: stats would count it as still under way. One is taken as abandoned once
it is :data:`STUCK_AFTER` past its time limit (:data:`NO_LIMIT_STUCK_AFTER` after it started
when it has none) — no sitting in another window can still be going then, as a sitting ends
itself at its limit. It is closed as ``stopped``, its saved answers kept: a mock exam's
answered and correct counts are taken from its answers, a paper's marks stay in its parts.

:func:`close_stuck` runs when the store is opened (:func:`tutor.store.open_store`), so a
student never sees a sitting that ended in a crash as still running; ``attn-tutor check``
finds and closes the same ones (and with ``--dry-run`` only lists them).
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta

from tutor.store.rows import PARSERS, BadRow

STUCK_AFTER = timedelta(hours=1)
"""A running sitting this long past its time limit is taken as abandoned."""
NO_LIMIT_STUCK_AFTER = timedelta(days=1)
"""... and one without a time limit this long after it started."""
TABLES = ("mock_exams", "papers")


def started(row: sqlite3.Row) -> datetime | None:
    """When the sitting started (None when the row's date cannot be read)."""
    try:
        return datetime.fromisoformat(row["started_at"]).astimezone(UTC)
    except (TypeError, ValueError, OverflowError):
        return None


def is_stuck(row: sqlite3.Row, now: datetime) -> bool:
    """True when a running sitting is long past its time limit (see the module docstring).
    A row whose start or limit cannot be read is a malformed row, not a stuck one."""
    start, limit = started(row), row["time_limit_s"]
    if start is None or isinstance(limit, bool) or not isinstance(limit, (int, float, type(None))):
        return False
    try:
        deadline = start + (timedelta(seconds=limit) + STUCK_AFTER if limit is not None
                            else NO_LIMIT_STUCK_AFTER)
    except (OverflowError, ValueError):
        return False
    return now > deadline


def stuck(conn: sqlite3.Connection, table: str, now: datetime) -> list[sqlite3.Row]:
    """The running rows of ``table`` (``mock_exams`` or ``papers``) that are stuck."""
    rows = conn.execute(f"SELECT * FROM {table} WHERE status = 'running' ORDER BY id").fetchall()
    return [r for r in rows if is_stuck(r, now)]


def close(conn: sqlite3.Connection, table: str, row: sqlite3.Row) -> str:
    """Close one stuck sitting as ``stopped``; what was done, in words. Run it inside the
    caller's transaction."""
    if table == "mock_exams":
        return _close_mock(conn, row)
    return _close_paper(conn, row)


def _close_mock(conn: sqlite3.Connection, row: sqlite3.Row) -> str:
    answered, correct, last = conn.execute(
        "SELECT COUNT(*), SUM(correct = 1), MAX(answered_at) FROM answers WHERE mock_id = ?",
        (row["id"],)).fetchone()
    correct = int(correct or 0)
    conn.execute("UPDATE mock_exams SET status = 'stopped', finished_at = ?, answered = ?,"
                 " correct = ?, per_topic = ? WHERE id = ? AND status = 'running'",
                 (last or row["started_at"], answered, correct,
                  json.dumps(mock_per_topic(conn, row["id"])), row["id"]))
    return f"closed as stopped: {answered} of {row['n_questions']} answered, {correct} correct"


def _close_paper(conn: sqlite3.Connection, row: sqlite3.Row) -> str:
    parts, earned, marks, last = conn.execute(
        "SELECT COUNT(*), SUM(earned), SUM(marks), MAX(answered_at) FROM paper_parts"
        " WHERE paper_id = ?", (row["id"],)).fetchone()
    conn.execute("UPDATE papers SET status = 'stopped', finished_at = ? WHERE id = ?"
                 " AND status = 'running'", (last or row["started_at"], row["id"]))
    return (f"closed as stopped: {parts} part{'s' * (parts != 1)} saved, "
            f"{int(earned or 0)} of {int(marks or 0)} marks")


def mock_per_topic(conn: sqlite3.Connection, mock_id: int) -> dict[str, list[int]]:
    """``{topic: [correct, answered]}`` of a mock exam, from its answers."""
    return {topic: [int(ok or 0), int(n)] for topic, ok, n in conn.execute(
        "SELECT topic, SUM(correct = 1), COUNT(*) FROM answers WHERE mock_id = ? GROUP BY topic",
        (mock_id,))}


def close_stuck(conn: sqlite3.Connection, now: datetime) -> dict[str, int]:
    """Close every stuck mock exam and paper in one transaction; ``{table: closed}``.
    Nothing is written (not even a transaction begun) when none is stuck; a malformed row is
    left to ``attn-tutor check``.

    Raises:
        sqlite3.Error: from the database (the caller decides whether that matters).
    """
    found = {t: [r for r in stuck(conn, t, now) if _readable(t, r)]
             for t in TABLES if _has_table(conn, t)}
    if not any(found.values()):
        return {}
    conn.execute("BEGIN IMMEDIATE")
    try:
        for table, rows in found.items():
            for row in rows:
                close(conn, table, row)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return {t: len(rows) for t, rows in found.items() if rows}


def closed_words(closed: dict[str, int]) -> str:
    """``closed 2 papers and 1 mock exam that …`` for the store's warnings."""
    words = {"mock_exams": ("mock exam", "mock exams"), "papers": ("paper", "papers")}
    what = " and ".join(f"{n} {words[t][n != 1]}" for t, n in closed.items())
    return (f"closed {what} left running by a program that was stopped (past the time limit by "
            "over an hour); what was answered is kept")


def _readable(table: str, row: sqlite3.Row) -> bool:
    """A malformed row is left for ``attn-tutor check`` to set aside, not closed here."""
    try:
        PARSERS[table](row)
    except BadRow:
        return False
    return True


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                        (name,)).fetchone() is not None

