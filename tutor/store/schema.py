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
    # 2: timed papers of structured questions (tutor/store/papers.py); they never touch cards;
    #    and small settings such as the exam date the plan counts down to
    """
    CREATE TABLE papers (
        id           INTEGER PRIMARY KEY,
        started_at   TEXT    NOT NULL,
        finished_at  TEXT,
        time_limit_s REAL,
        seed         INTEGER,
        status       TEXT    NOT NULL DEFAULT 'running'  -- running | finished | timed-out | stopped
    );
    CREATE TABLE paper_parts (
        paper_id    INTEGER NOT NULL REFERENCES papers(id),
        question_id TEXT    NOT NULL,               -- structured question id ("xq-...")
        part        TEXT    NOT NULL,               -- a, b, c ...
        topic       TEXT    NOT NULL,               -- lesson id
        variant     INTEGER,                        -- the seed of the question's numbers
        status      TEXT    NOT NULL,               -- right | follow-through | wrong | blank | self-marked
        earned      INTEGER NOT NULL,
        marks       INTEGER NOT NULL,
        response    TEXT    NOT NULL DEFAULT '',
        answered_at TEXT    NOT NULL,
        PRIMARY KEY (paper_id, question_id, part)
    );
    CREATE TABLE settings (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL                         -- JSON
    );
    """,
    # 3: per-part marks of a multi-part answer (a generated problem of several parts), so
    #    partial credit is kept: a JSON list of 1/0, one per part; NULL for a one-part answer
    """
    ALTER TABLE answers ADD COLUMN parts TEXT;
    """,
    # 4: practice traces (tutor/store/practice.py): every answer of a practice, step by step,
    #    and each trace's fading level; the FSRS card of a trace's practice is an ordinary
    #    card whose id is "practice:<trace>"
    """
    CREATE TABLE practice_steps (
        id          INTEGER PRIMARY KEY,
        session     TEXT    NOT NULL,               -- one practice of one trace
        trace       TEXT    NOT NULL,               -- trace name
        level       INTEGER NOT NULL,               -- fading level of that practice
        seed        INTEGER,                        -- seed of its inputs; NULL = the notes' numbers
        step        INTEGER NOT NULL,               -- 1-based step of the trace
        name        TEXT    NOT NULL,               -- the value asked ("weights", "A[3]") or "why"
        answer      TEXT    NOT NULL DEFAULT '',    -- what the student typed last
        correct     INTEGER NOT NULL,               -- 1 solved / 0 not solved
        attempts    INTEGER NOT NULL DEFAULT 1,
        hints       INTEGER NOT NULL DEFAULT 0,     -- hint ladder rungs taken (3 = value shown)
        diagnoses   TEXT    NOT NULL DEFAULT '[]',  -- JSON list of mistake ids named ("a+b" = pair)
        answered_at TEXT    NOT NULL
    );
    CREATE INDEX practice_steps_by_trace ON practice_steps(trace, id);
    CREATE TABLE practice_levels (
        trace      TEXT PRIMARY KEY,
        level      INTEGER NOT NULL,
        practices  INTEGER NOT NULL DEFAULT 0,      -- practices finished
        clean      INTEGER NOT NULL DEFAULT 0,      -- of those, clean ones
        updated_at TEXT    NOT NULL
    );
    """,
    # 5: class mode, the instructor's side (tutor/store/classes.py): sessions, who joined,
    #    the questions pushed and every vote's answer, so a restarted host resumes
    """
    CREATE TABLE class_sessions (
        id          TEXT PRIMARY KEY,               -- short id the export command takes
        key         TEXT    NOT NULL,               -- the join key (students reconnect with it)
        seed        INTEGER NOT NULL,               -- students' seeds derive from it
        host        TEXT    NOT NULL,
        port        INTEGER NOT NULL,
        started_at  TEXT    NOT NULL,
        ended_at    TEXT,
        status      TEXT    NOT NULL DEFAULT 'running'   -- running | ended
    );
    CREATE TABLE class_students (
        session_id  TEXT    NOT NULL REFERENCES class_sessions(id),
        student     TEXT    NOT NULL,               -- the token the server gave the client
        name        TEXT    NOT NULL DEFAULT '',    -- as given ('' = anonymous)
        seed        INTEGER NOT NULL,
        joined_at   TEXT    NOT NULL,
        PRIMARY KEY (session_id, student)
    );
    CREATE TABLE class_questions (
        session_id  TEXT    NOT NULL REFERENCES class_sessions(id),
        number      INTEGER NOT NULL,               -- 1, 2, ... in push order
        ref         TEXT    NOT NULL,               -- bank:ID | gen:FAMILY | paper:XQ:L | trace:NAME:VALUE
        title       TEXT    NOT NULL,
        state       TEXT    NOT NULL,               -- open | closed | discuss | revealed | done
        round       INTEGER NOT NULL DEFAULT 1,     -- 1 = first vote, 2 = second vote
        pushed_at   TEXT    NOT NULL,
        PRIMARY KEY (session_id, number)
    );
    CREATE TABLE class_answers (
        session_id  TEXT    NOT NULL REFERENCES class_sessions(id),
        number      INTEGER NOT NULL,
        round       INTEGER NOT NULL,
        student     TEXT    NOT NULL,
        response    TEXT    NOT NULL,
        correct     INTEGER NOT NULL,
        bucket      TEXT    NOT NULL,               -- right | unknown | imprecise | a mistake id | an option
        title       TEXT    NOT NULL DEFAULT '',
        seconds     REAL,                           -- from the vote opening to this answer
        answered_at TEXT    NOT NULL,
        PRIMARY KEY (session_id, number, round, student)
    );
    """,
    # 6: the mistakes diagnosed in each answer (issue 36): the catalogue ids whose number the
    #    student typed, a pair as "a+b", over the answer's parts; NULL / '[]' when none
    #    (a right answer, or a number no catalogued mistake gives)
    """
    ALTER TABLE answers ADD COLUMN diagnoses TEXT;
    ALTER TABLE paper_parts ADD COLUMN diagnoses TEXT NOT NULL DEFAULT '[]';
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Bring ``conn`` up to :data:`SCHEMA_VERSION` and put back any table, index or view lost.

    A file whose ``user_version`` is set but whose tables are gone (dropped by hand, or by a
    tool) gets the missing objects of its own version re-created before newer migrations run.
    The write lock is taken only when something has to change, so opening a healthy file
    while another program writes to it never waits.

    Returns:
        The names of the tables and views that had to be created again (empty normally).
    """
    version = _version(conn)
    if version >= SCHEMA_VERSION and not missing(conn, version):
        return []
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = _version(conn)  # another copy may have migrated while we waited
        lost = missing(conn, version) if version else []
        for _kind, _name, sql in lost:
            conn.execute(sql)
        for v in range(version, SCHEMA_VERSION):
            for statement in _statements(MIGRATIONS[v]):
                conn.execute(statement)
        if version < SCHEMA_VERSION:
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return [name for kind, name, _ in lost if kind in ("table", "view")]


def missing(conn: sqlite3.Connection, version: int = SCHEMA_VERSION) -> list[tuple[str, str, str]]:
    """``(type, name, CREATE statement)`` of the objects schema ``version`` has and ``conn`` lacks."""
    present = {(r[0], r[1]) for r in conn.execute("SELECT type, name FROM sqlite_master")}
    return [o for o in _objects(min(version, SCHEMA_VERSION)) if (o[0], o[1]) not in present]


_OBJECTS: dict[tuple[str, ...], list[tuple[str, str, str]]] = {}


def _objects(version: int) -> list[tuple[str, str, str]]:
    """The schema after migrations ``0..version-1``, in creation order (tables before indexes)."""
    key = MIGRATIONS[:version]
    if key not in _OBJECTS:
        ref = sqlite3.connect(":memory:")
        try:
            for script in key:
                for statement in _statements(script):
                    ref.execute(statement)
            _OBJECTS[key] = [tuple(r) for r in ref.execute(
                "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL"
                " AND name NOT LIKE 'sqlite_%' ORDER BY rowid")]
        finally:
            ref.close()
    return _OBJECTS[key]


def _version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _statements(script: str) -> list[str]:
    """Split a migration into statements (executescript would commit our transaction)."""
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line.split("--", 1)[0] + "\n" if "--" in line else line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    return [s for s in out if s]

