"""Class mode in the instructor's progress store (schema version 3).

A session is started with its key and seed (so a restarted host takes the same key and
gives every student the same numbers again); each student who joins, each question pushed
(and its state), and every vote's answer is its own committed write. Answers come in
batches (:func:`save_answers`: one transaction for all the answers that arrived together),
and the server acknowledges an answer only after its batch is committed: an acknowledged
answer is on disk. These are functions over a :class:`~tutor.store.Store`, kept apart
from its core, as :mod:`tutor.store.papers` is.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from tutor.store.core import Store, _dt, _iso


@dataclass(frozen=True)
class ClassSession:
    id: str
    key: str
    seed: int
    host: str
    port: int
    started_at: datetime
    ended_at: datetime | None
    status: str


@dataclass(frozen=True)
class ClassStudent:
    student: str
    name: str
    seed: int
    joined_at: datetime


@dataclass(frozen=True)
class ClassQuestion:
    number: int
    ref: str
    title: str
    state: str
    round: int
    pushed_at: datetime


@dataclass(frozen=True)
class ClassAnswer:
    session_id: str
    number: int
    round: int
    student: str
    response: str
    correct: bool
    bucket: str
    title: str
    seconds: float | None
    answered_at: datetime


def _rows(store: Store, sql: str, params: tuple, make) -> list:
    """Rows as records; a row that does not read (a bad date, a wrong type) is skipped."""
    out = []
    for r in store._read(sql, params):
        try:
            out.append(make(r))
        except (TypeError, ValueError, KeyError, IndexError):
            continue
    return out


def start_session(store: Store, session_id: str, key: str, seed: int, host: str, port: int,
                  at: datetime | None = None) -> None:
    with store._write() as conn:
        conn.execute("INSERT INTO class_sessions (id, key, seed, host, port, started_at)"
                     " VALUES (?,?,?,?,?,?)",
                     (session_id, key, int(seed), host, int(port), _iso(at or store.now())))


def set_port(store: Store, session_id: str, port: int) -> None:
    """The port the session was bound to (when asked for any free one)."""
    with store._write() as conn:
        conn.execute("UPDATE class_sessions SET port = ? WHERE id = ?", (int(port), session_id))


def end_session(store: Store, session_id: str, at: datetime | None = None) -> None:
    with store._write() as conn:
        conn.execute("UPDATE class_sessions SET ended_at = ?, status = 'ended' WHERE id = ?",
                     (_iso(at or store.now()), session_id))


def _session(r: sqlite3.Row) -> ClassSession:
    return ClassSession(str(r["id"]), str(r["key"]), int(r["seed"]), str(r["host"]),
                        int(r["port"]), _dt(r["started_at"]), _dt(r["ended_at"]),
                        str(r["status"]))


def sessions(store: Store) -> list[ClassSession]:
    """Every class session, oldest first."""
    return _rows(store, "SELECT * FROM class_sessions ORDER BY started_at, id", (), _session)


def session(store: Store, session_id: str) -> ClassSession | None:
    found = _rows(store, "SELECT * FROM class_sessions WHERE id = ?", (session_id,), _session)
    return found[0] if found else None


def running_session(store: Store) -> ClassSession | None:
    """The newest session that was not ended (its host stopped without ending it)."""
    found = [s for s in sessions(store) if s.status == "running"]
    return found[-1] if found else None


def add_student(store: Store, session_id: str, student: str, name: str, seed: int,
                at: datetime | None = None) -> None:
    with store._write() as conn:
        conn.execute("INSERT OR IGNORE INTO class_students (session_id, student, name, seed,"
                     " joined_at) VALUES (?,?,?,?,?)",
                     (session_id, student, name, int(seed), _iso(at or store.now())))


def students(store: Store, session_id: str) -> list[ClassStudent]:
    return _rows(store, "SELECT * FROM class_students WHERE session_id = ? ORDER BY joined_at",
                 (session_id,), lambda r: ClassStudent(str(r["student"]), str(r["name"]),
                                                       int(r["seed"]), _dt(r["joined_at"])))


def save_question(store: Store, session_id: str, number: int, ref: str, title: str, state: str,
                  round_: int, at: datetime | None = None) -> None:
    """Record a pushed question, or its new state (the push time is kept)."""
    with store._write() as conn:
        conn.execute("INSERT INTO class_questions (session_id, number, ref, title, state, round,"
                     " pushed_at) VALUES (?,?,?,?,?,?,?) ON CONFLICT(session_id, number) DO"
                     " UPDATE SET state = excluded.state, round = excluded.round",
                     (session_id, int(number), ref, title, state, int(round_),
                      _iso(at or store.now())))


def questions(store: Store, session_id: str) -> list[ClassQuestion]:
    return _rows(store, "SELECT * FROM class_questions WHERE session_id = ? ORDER BY number",
                 (session_id,), lambda r: ClassQuestion(int(r["number"]), str(r["ref"]),
                                                        str(r["title"]), str(r["state"]),
                                                        int(r["round"]), _dt(r["pushed_at"])))


def save_answers(store: Store, answers: Iterable[ClassAnswer]) -> None:
    """Save a batch of answers in one transaction (a later answer to the same vote by the
    same student replaces the earlier one).

    Raises:
        StoreError: nothing of the batch was saved.
    """
    rows = [(a.session_id, a.number, a.round, a.student, a.response, int(a.correct), a.bucket,
             a.title, a.seconds, _iso(a.answered_at)) for a in answers]
    if not rows:
        return
    with store._write() as conn:
        conn.executemany("INSERT OR REPLACE INTO class_answers (session_id, number, round,"
                         " student, response, correct, bucket, title, seconds, answered_at)"
                         " VALUES (?,?,?,?,?,?,?,?,?,?)", rows)


def update_mark(store: Store, a: ClassAnswer) -> None:
    """Put the diagnosis of an answer in its row (a later answer that replaced it is left)."""
    with store._write() as conn:
        conn.execute("UPDATE class_answers SET correct = ?, bucket = ?, title = ? WHERE"
                     " session_id = ? AND number = ? AND round = ? AND student = ? AND"
                     " response = ?", (int(a.correct), a.bucket, a.title, a.session_id, a.number,
                                       a.round, a.student, a.response))


def answers(store: Store, session_id: str, number: int | None = None) -> list[ClassAnswer]:
    """A session's answers (one question's, if ``number``), in the order they were given."""
    sql = "SELECT * FROM class_answers WHERE session_id = ?"
    params: tuple = (session_id,)
    if number is not None:
        sql += " AND number = ?"
        params += (int(number),)
    return _rows(store, sql + " ORDER BY answered_at, rowid", params, lambda r: ClassAnswer(
        str(r["session_id"]), int(r["number"]), int(r["round"]), str(r["student"]),
        str(r["response"]), bool(r["correct"]), str(r["bucket"]), str(r["title"]),
        None if r["seconds"] is None else float(r["seconds"]), _dt(r["answered_at"])))
