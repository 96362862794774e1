"""The progress database's schema: one migration per version, tracked in ``PRAGMA user_version``."""

from __future__ import annotations

import sqlite3

# One entry per schema version; entry i upgrades user_version i to i + 1. Never edit a shipped
# entry: append a new one.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE answers (
        id          INTEGER PRIMARY KEY,
        question_id TEXT    NOT NULL,           -- stable hand-written id, or "gen:<family>"
        topic       TEXT    NOT NULL,           -- lesson id (one of the 12 sections)
        mode        TEXT    NOT NULL,           -- practice | review | weak | retry | mock
        correct     INTEGER,                    -- 1 / 0; NULL for a self-graded answer
        rating      INTEGER,                    -- FSRS rating applied (1-4); NULL if none (mock)
        response    TEXT    NOT NULL DEFAULT '',
        variant     TEXT,                       -- seed of a generated problem
        seconds     REAL,
        answered_at TEXT    NOT NULL,           -- ISO 8601, UTC
        day         TEXT    NOT NULL,           -- local date YYYY-MM-DD
        session     TEXT,
        mock_id     INTEGER REFERENCES mock_exams(id)
    );
    CREATE INDEX answers_by_question ON answers(question_id, id);
    CREATE INDEX answers_by_day ON answers(day);
    CREATE TABLE cards (
        question_id TEXT PRIMARY KEY,
        topic       TEXT    NOT NULL,
        card        TEXT    NOT NULL,           -- fsrs Card.to_dict() as JSON
        due         TEXT    NOT NULL,           -- ISO 8601 UTC, copied out for queries
        reps        INTEGER NOT NULL DEFAULT 0,
        lapses      INTEGER NOT NULL DEFAULT 0,
        updated_at  TEXT    NOT NULL
    );
    CREATE INDEX cards_by_due ON cards(due);
    CREATE TABLE lesson_opens (
        lesson_id    TEXT PRIMARY KEY,
        first_opened TEXT    NOT NULL,
        last_opened  TEXT    NOT NULL,
        times        INTEGER NOT NULL DEFAULT 1
    );
    CREATE TABLE mock_exams (
        id           INTEGER PRIMARY KEY,
        started_at   TEXT    NOT NULL,
        finished_at  TEXT,
        time_limit_s REAL,
        n_questions  INTEGER NOT NULL,
        answered     INTEGER NOT NULL DEFAULT 0,
        correct      INTEGER NOT NULL DEFAULT 0,
        per_topic    TEXT    NOT NULL DEFAULT '{}',  -- {topic: [correct, total]}
        seed         INTEGER,
        status       TEXT    NOT NULL DEFAULT 'running'  -- running | finished | timed-out | stopped
    );
    CREATE VIEW daily_activity AS
        SELECT day, COUNT(*) AS answers, SUM(COALESCE(correct, 0)) AS correct
        FROM answers GROUP BY day;
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(conn: sqlite3.Connection) -> None:
    """Bring ``conn`` up to :data:`SCHEMA_VERSION` in one IMMEDIATE transaction."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        for v in range(version, SCHEMA_VERSION):
            for statement in _statements(MIGRATIONS[v]):
                conn.execute(statement)
        if version < SCHEMA_VERSION:
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _statements(script: str) -> list[str]:
    """Split a migration into statements (executescript would commit our transaction)."""
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line.split("--", 1)[0] + "\n" if "--" in line else line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    return [s for s in out if s]

