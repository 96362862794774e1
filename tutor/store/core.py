"""The :class:`Store` (answers, cards, lesson opens, mock exams); records in :mod:`.rows`."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, overload

from tutor.store import faults
from tutor.store.faults import StoreError
from tutor.store.rows import (
    KEYS,
    PARSERS,
    Answer,
    BadRow,
    CardRow,
    MockExam,
    QuestionStats,
    parse_card,
)
from tutor.store.rows import iso as _iso

__all__ = ["Answer", "BUSY_TIMEOUT_MS", "CardRow", "MockExam", "QuestionStats", "Store",
           "StoreError", "local_day", "utcnow"]

BUSY_TIMEOUT_MS = 5000
"""How long a read or write waits for another program's lock before giving up."""


def utcnow() -> datetime:
    return datetime.now(UTC)


@overload
def _dt(text: str) -> datetime: ...
@overload
def _dt(text: str | None) -> datetime | None: ...
def _dt(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text).astimezone(UTC)


def inserted_id(cur: sqlite3.Cursor) -> int:
    """The rowid the INSERT just run on ``cur`` made (``lastrowid`` is None only before one)."""
    if cur.lastrowid is None:
        raise sqlite3.InterfaceError("no row was inserted")
    return cur.lastrowid


def local_day(at: datetime) -> date:
    """The student's calendar date of ``at`` (the machine's local time zone)."""
    return at.astimezone().date()


class Store:
    """A connection to the progress database; see the module docstring. Thread-safe."""

    def __init__(self, conn: sqlite3.Connection, path: Path | None, warnings: list[str],
                 now: Callable[[], datetime] = utcnow):
        self._conn = conn
        self._lock = threading.RLock()
        self.path = path
        """The file, or None for an in-memory store (nothing is saved)."""
        self.warnings = warnings
        """Messages for the user about how the store was opened (damaged, read-only...)."""
        self.now = now
        self.bad_rows: dict[tuple[str, object], str] = {}
        """``{(table, key): what is wrong}`` for every row a reader had to skip."""
        self._reported: set[tuple[str, object]] = set()

    @property
    def persistent(self) -> bool:
        return self.path is not None

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def take_notices(self) -> list[str]:
        """One line about rows skipped since the last call (each row is reported once)."""
        with self._lock:
            new = [(k, why) for k, why in self.bad_rows.items() if k not in self._reported]
            self._reported.update(k for k, _ in new)
        if not new:
            return []
        shown = "; ".join(f"{table} {key!r}: {why}" for (table, key), why in new[:3])
        more = f"; and {len(new) - 3} more" if len(new) > 3 else ""
        n = len(new)
        return [f"skipped {n} unreadable row{'s' * (n != 1)} of the progress file ({shown}{more});"
                " everything else is shown — `attn-tutor check` repairs them"]

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction: the write lock is taken first, so read-modify-write is safe.

        Raises:
            StoreError: locked past the busy timeout, disk full, I/O error; nothing was saved.
        """
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise _error("could not save progress", exc) from exc
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException as exc:
                try:
                    self._conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass  # SQLite already rolled back (it does after SQLITE_FULL)
                if isinstance(exc, sqlite3.Error):
                    raise _error("could not save progress", exc) from exc
                raise

    def _read(self, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise _error("could not read progress", exc) from exc

    def _records(self, table: str, sql: str, params: tuple = ()) -> list[Any]:
        """Rows of ``table`` as records; a malformed row is skipped and noted in :attr:`bad_rows`."""
        parse = PARSERS[table]
        out = []
        for r in self._read(sql, params):
            try:
                out.append(parse(r))
            except BadRow as exc:
                self._note_bad(table, r, str(exc))
        return out

    def _note_bad(self, table: str, r: sqlite3.Row, why: str) -> None:
        with self._lock:
            self.bad_rows.setdefault((table, r[KEYS[table]]), why)

    # ------------------------------------------------------------------ answers and cards

    def record_answer(
        self, question_id: str, topic: str, *, correct: bool | None, rating: int | None,
        response: str = "", mode: str = "practice", variant: str | None = None,
        seconds: float | None = None, session: str | None = None, mock_id: int | None = None,
        at: datetime | None = None,
        update_card: Callable[[dict[str, Any] | None, datetime], dict[str, Any]] | None = None,
        parts: Sequence[bool] | None = None, diagnoses: Sequence[str] = (),
    ) -> int:
        """Save one answer (and the card's new state) and COMMIT before returning its row id.

        ``update_card(old_card_or_None, at) -> new_card`` runs inside the same IMMEDIATE
        transaction, so a second running copy cannot interleave between the read and the write.
        Mock exams pass no ``update_card``: they leave the schedule alone. ``parts``: whether
        each part of a multi-part answer was right (``correct`` is then whether all were).
        ``diagnoses``: the catalogued mistakes named in the answer (a pair as ``a+b``).

        Raises:
            StoreError: the answer could not be saved.
        """
        at = at or self.now()
        with self._write() as conn:
            cur = conn.execute(
                "INSERT INTO answers (question_id, topic, mode, correct, rating, response, variant,"
                " seconds, answered_at, day, session, mock_id, parts, diagnoses)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (question_id, topic, mode, None if correct is None else int(bool(correct)),
                 rating, response, variant, seconds, _iso(at), local_day(at).isoformat(),
                 session, mock_id, None if parts is None else json.dumps([int(bool(p)) for p in parts]),
                 json.dumps(list(diagnoses)) if diagnoses else None),
            )
            if update_card is not None:
                row = conn.execute("SELECT * FROM cards WHERE question_id = ?",
                                   (question_id,)).fetchone()
                old = None
                if row is not None:
                    try:
                        old = parse_card(row).card
                    except BadRow as exc:  # start the card afresh rather than lose the answer
                        self._note_bad("cards", row, str(exc))
                new = update_card(old, at)
                reps = (_count(row, "reps") if row else 0) + 1
                lapses = (_count(row, "lapses") if row else 0) + (1 if row and rating == 1 else 0)
                conn.execute(
                    "INSERT INTO cards (question_id, topic, card, due, reps, lapses, updated_at)"
                    " VALUES (?,?,?,?,?,?,?) ON CONFLICT(question_id) DO UPDATE SET"
                    " topic = excluded.topic, card = excluded.card, due = excluded.due,"
                    " reps = excluded.reps, lapses = excluded.lapses, updated_at = excluded.updated_at",
                    (question_id, topic, json.dumps(new), _iso(_dt(new["due"])), reps, lapses,
                     _iso(at)),
                )
            return inserted_id(cur)

    def answers(self, question_id: str | None = None, *, mode: str | None = None,
                mock_id: int | None = None) -> list[Answer]:
        """Answers, oldest first, optionally for one question, mode or mock exam."""
        where, params = [], []
        for col, val in (("question_id", question_id), ("mode", mode), ("mock_id", mock_id)):
            if val is not None:
                where.append(f"{col} = ?")
                params.append(val)
        sql = "SELECT * FROM answers" + (" WHERE " + " AND ".join(where) if where else "")
        return self._records("answers", sql + " ORDER BY id", tuple(params))

    def latest_answers(self) -> dict[str, Answer]:
        """Each question's most recent graded (correct or wrong) answer."""
        rows = self._records(
            "answers",
            "SELECT a.* FROM answers a JOIN (SELECT question_id, MAX(id) AS id FROM answers"
            " WHERE correct IN (0, 1) GROUP BY question_id) m ON a.id = m.id")
        return {a.question_id: a for a in rows}

    def miss_counts(self) -> dict[str, tuple[int, int]]:
        """``{question_id: (graded attempts, wrong)}`` over every mode."""
        rows = self._read(
            f"SELECT question_id, {_GRADED} AS n, SUM(correct = 0) AS wrong FROM answers"
            " GROUP BY question_id")
        return {r["question_id"]: (int(r["n"] or 0), int(r["wrong"] or 0)) for r in rows}

    def question_stats(self) -> dict[str, QuestionStats]:
        """Per question: its stored topic, graded answers, correct ones, answers of any kind."""
        rows = self._read(
            f"SELECT question_id, MAX(topic) AS topic, {_GRADED} AS n,"
            " SUM(correct = 1) AS ok, COUNT(*) AS answers FROM answers"
            " GROUP BY question_id")
        return {r["question_id"]: QuestionStats(r["topic"], int(r["n"] or 0), int(r["ok"] or 0),
                                                int(r["answers"])) for r in rows}

    def topic_accuracy(self) -> dict[str, tuple[int, int]]:
        """``{topic: (graded answers, correct)}`` over every mode."""
        rows = self._read(f"SELECT topic, {_GRADED} AS n, SUM(correct = 1) AS ok"
                          " FROM answers GROUP BY topic")
        return {r["topic"]: (int(r["n"] or 0), int(r["ok"] or 0)) for r in rows}

    def card(self, question_id: str) -> CardRow | None:
        rows = self._records("cards", "SELECT * FROM cards WHERE question_id = ?", (question_id,))
        return rows[0] if rows else None

    def cards(self) -> list[CardRow]:
        """Every scheduled card, soonest due first."""
        return self._records("cards", "SELECT * FROM cards ORDER BY due, question_id")

    def due_cards(self, at: datetime | None = None) -> list[CardRow]:
        """Cards due at ``at`` (default now), most overdue first."""
        at = at or self.now()
        return [c for c in self._records(
            "cards", "SELECT * FROM cards WHERE due <= ? ORDER BY due, question_id", (_iso(at),))
            if c.due <= at]  # a due of another shape sorts by text, not by time

    def daily_counts(self, since: date | None = None) -> dict[str, int]:
        """``{local date: answers}`` for days with any answer, from ``since`` on."""
        rows = self._read("SELECT day, answers FROM daily_activity WHERE day >= ? ORDER BY day",
                          ((since or date.min).isoformat(),))
        return {r["day"]: int(r["answers"]) for r in rows}

    # ------------------------------------------------------------------ lessons

    def mark_lesson_opened(self, lesson_id: str, at: datetime | None = None) -> None:
        """Remember that a lesson was opened (first and last time, and how often)."""
        stamp = _iso(at or self.now())
        with self._write() as conn:
            conn.execute(
                "INSERT INTO lesson_opens (lesson_id, first_opened, last_opened, times)"
                " VALUES (?,?,?,1) ON CONFLICT(lesson_id) DO UPDATE SET"
                " last_opened = excluded.last_opened, times = times + 1",
                (lesson_id, stamp, stamp))

    def lessons_opened(self) -> dict[str, datetime]:
        """``{lesson_id: last time opened}``."""
        return dict(self._records("lesson_opens", "SELECT * FROM lesson_opens"))

    # ------------------------------------------------------------------ mock exams

    def start_mock(self, n_questions: int, time_limit_s: float | None, seed: int | None,
                   at: datetime | None = None) -> int:
        with self._write() as conn:
            cur = conn.execute(
                "INSERT INTO mock_exams (started_at, time_limit_s, n_questions, seed)"
                " VALUES (?,?,?,?)", (_iso(at or self.now()), time_limit_s, n_questions, seed))
            return inserted_id(cur)

    def finish_mock(self, mock_id: int, *, answered: int, correct: int,
                    per_topic: dict[str, list[int]], status: str = "finished",
                    at: datetime | None = None) -> None:
        with self._write() as conn:
            conn.execute(
                "UPDATE mock_exams SET finished_at = ?, answered = ?, correct = ?, per_topic = ?,"
                " status = ? WHERE id = ?",
                (_iso(at or self.now()), answered, correct, json.dumps(per_topic), status, mock_id))

    def mock_exams(self) -> list[MockExam]:
        """Mock exams, oldest first."""
        return self._records("mock_exams", "SELECT * FROM mock_exams ORDER BY id")


_GRADED = "SUM(correct IN (0, 1))"
"""The graded answers of a group: ``correct`` is 1 or 0. A self-graded answer (NULL) is not
graded, and a damaged value (text, 7) is neither graded nor correct, as the row readers skip
such a row."""


def _count(row: sqlite3.Row, column: str) -> int:
    value = row[column]
    return value if isinstance(value, int) else 0


def _error(doing: str, exc: sqlite3.Error) -> StoreError:
    return StoreError(f"{doing}: {faults.describe(exc, BUSY_TIMEOUT_MS)}", faults.kind(exc))
