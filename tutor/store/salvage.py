"""Copy what can still be read out of a damaged progress file into a fresh one.

The schema is read with ``PRAGMA writable_schema`` on (read-only all the same): otherwise
SQLite refuses the whole file when one table's root page is past its end — what a truncated
file looks like — although the tables before the cut are whole.

SQLite stops a query at the first damaged page, so each table is read in ``rowid`` order and,
after an error, reading resumes a little further on (each jump twice the last), so the rows
on either side of a bad page are kept. Rows are copied as they are; ones that do not parse
are the business of the malformed-row checks, not of this module.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

TABLES = ("mock_exams", "answers", "cards", "lesson_opens", "papers", "paper_parts", "settings",
          "practice_steps", "practice_levels")
"""In an order that keeps references valid (answers name mock exams)."""
WORDS = {"answers": ("answer", "answers"), "cards": ("card", "cards"),
         "lesson_opens": ("lesson opened", "lessons opened"),
         "mock_exams": ("mock exam", "mock exams"), "papers": ("paper", "papers"),
         "paper_parts": ("paper part", "paper parts"), "settings": ("setting", "settings"),
         "practice_steps": ("practice answer", "practice answers"),
         "practice_levels": ("practice level", "practice levels")}
"""Each table's rows in words, one and many."""
MAX_ERRORS = 64
"""Bad stretches skipped per table before giving up on it."""
BATCH = 500


def copy_rows(damaged: Path, into: sqlite3.Connection) -> dict[str, int]:
    """Copy the readable rows of each known table of ``damaged`` into ``into``.

    ``into`` must already have the schema. Nothing is written to ``damaged``.

    Returns:
        ``{table: rows copied}``; a table that could not be read at all counts 0.
    """
    copied = {t: 0 for t in TABLES}
    wal = Path(f"{damaged}-wal")
    flags = "mode=ro" if wal.exists() and wal.stat().st_size else "mode=ro&immutable=1"
    try:
        src = sqlite3.connect(f"{damaged.resolve().as_uri()}?{flags}", uri=True)
        # a root page past the end of the file fails the schema check of every query, and
        # this is the one way to read the schema all the same (nothing is written)
        src.execute("PRAGMA writable_schema = ON")
    except sqlite3.Error:
        return copied
    try:
        for table in TABLES:
            copied[table] = _copy_table(src, into, table)
    finally:
        src.close()
    return copied


def counted(counts: dict[str, int], *, zeros: bool = False) -> str:
    """``30 answers, 1 mock exam, 3 lessons opened`` (tables with no rows left out unless
    ``zeros``); empty when nothing is left."""
    return ", ".join(f"{n} {WORDS.get(t, (t, t))[n != 1]}" for t, n in counts.items()
                     if n or zeros)


def _copy_table(src: sqlite3.Connection, into: sqlite3.Connection, table: str) -> int:
    columns = [r[1] for r in into.execute(f"PRAGMA table_info({table})")]
    try:
        have = {r[1] for r in src.execute(f"PRAGMA table_info({table})")}
    except sqlite3.Error:
        return 0
    columns = [c for c in columns if c in have]
    if not columns:
        return 0
    names = ", ".join(columns)
    select = f"SELECT rowid, {names} FROM {table} WHERE rowid > ? ORDER BY rowid"
    insert = (f"INSERT OR IGNORE INTO {table} (rowid, {names}) "
              f"VALUES ({', '.join('?' * (len(columns) + 1))})")
    last, n, errors, jump = 0, 0, 0, 1
    while True:
        rows, failed = [], False
        try:
            for row in src.execute(select, (last,)):
                rows.append(row)
                if len(rows) >= BATCH:
                    break
        except sqlite3.Error:
            failed = True
        n += _insert(into, insert, rows)
        if rows:
            last, jump = rows[-1][0], 1
        if failed:
            errors += 1
            if errors >= MAX_ERRORS:
                break
            last, jump = last + jump, jump * 2  # past the bad page, wherever it ends
        elif not rows:
            break
    return n


def _insert(into: sqlite3.Connection, insert: str, rows: list[tuple]) -> int:
    if not rows:
        return 0
    n = 0
    into.execute("BEGIN IMMEDIATE")
    try:
        for row in rows:
            try:
                n += into.execute(insert, row).rowcount
            except sqlite3.IntegrityError:
                pass  # a NOT NULL column the damage blanked: leave that row behind
        into.execute("COMMIT")
    except BaseException:
        into.execute("ROLLBACK")
        raise
    return n
