"""The store's record types and the one place a database row becomes one.

Each ``parse_*`` function turns a row into its record or raises :class:`BadRow` saying which
column is wrong and why. Readers skip such a row (and report it once); ``attn-tutor check``
uses the same functions to find and repair them, so "malformed" means one thing everywhere.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from tutor.store.cells import BadRow, _int, _json_object, _show, _text, _time, iso, mistake_ids  # noqa: F401
from tutor.store.paper_rows import parse_paper, parse_paper_part, parse_setting
from tutor.store.practice_rows import parse_practice_level, parse_practice_step


@dataclass(frozen=True)
class Answer:
    id: int
    question_id: str
    topic: str
    mode: str
    correct: bool | None
    rating: int | None
    response: str
    variant: str | None
    seconds: float | None
    answered_at: datetime
    day: str
    session: str | None
    mock_id: int | None
    parts: tuple[bool, ...] | None = None
    """Whether each part of a multi-part answer was right (None: one part)."""
    diagnoses: tuple[str, ...] = ()
    """The catalogued mistakes named in the answer (a pair as ``a+b``), over its parts."""

    @property
    def score(self) -> float | None:
        """The share of parts right (1 or 0 for a one-part answer; None if self-graded)."""
        if self.parts:
            return sum(self.parts) / len(self.parts)
        return None if self.correct is None else float(self.correct)


@dataclass(frozen=True)
class QuestionStats:
    topic: str
    graded: int
    correct: int
    answers: int


@dataclass(frozen=True)
class CardRow:
    question_id: str
    topic: str
    card: dict[str, Any]
    due: datetime
    reps: int
    lapses: int
    updated_at: datetime


@dataclass(frozen=True)
class MockExam:
    id: int
    started_at: datetime
    finished_at: datetime | None
    time_limit_s: float | None
    n_questions: int
    answered: int
    correct: int
    per_topic: dict[str, list[int]]
    seed: int | None
    status: str


KEYS = {"answers": "id", "cards": "question_id", "lesson_opens": "lesson_id",
        "mock_exams": "id"}
"""The column that names a row of each table in reports."""


def parse_answer(r: sqlite3.Row) -> Answer:
    correct = _int(r, "correct", null=True, allowed=(0, 1))
    seconds = r["seconds"]
    if seconds is not None and not isinstance(seconds, (int, float)):
        raise BadRow(f"seconds {_show(seconds)} is not a number")
    variant = _text(r, "variant", null=True)
    if variant is not None and not (variant.lstrip("-").isdigit() and len(variant) <= 20):
        raise BadRow(f"variant {_show(variant)} is not the seed of a generated problem")
    day = _text(r, "day")
    try:
        date.fromisoformat(day)
    except ValueError:
        raise BadRow(f"day {_show(day)} is not a date") from None
    return Answer(
        id=r["id"], question_id=_text(r, "question_id"), topic=_text(r, "topic"),
        mode=_text(r, "mode"), correct=None if correct is None else bool(correct),
        rating=_int(r, "rating", null=True, allowed=(1, 2, 3, 4)),
        response=_text(r, "response"), variant=variant,
        seconds=seconds, answered_at=_time(r, "answered_at"), day=day,
        session=_text(r, "session", null=True), mock_id=_int(r, "mock_id", null=True),
        parts=_parts(r), diagnoses=mistake_ids(r, "diagnoses", null=True))


def _parts(r: sqlite3.Row) -> tuple[bool, ...] | None:
    """The ``parts`` column (schema 3): a JSON list of 1/0, or NULL."""
    value = r["parts"] if "parts" in r.keys() else None
    if value is None:
        return None
    try:
        data = json.loads(value)
    except (TypeError, ValueError, RecursionError):
        raise BadRow(f"parts {_show(value)} is not valid JSON") from None
    if not (isinstance(data, list) and 0 < len(data) <= 20
            and all(isinstance(x, int) and not isinstance(x, bool) and x in (0, 1) for x in data)):
        raise BadRow(f"parts {_show(value)} is not a list of 1/0, one per part")
    return tuple(bool(x) for x in data)


def parse_card(r: sqlite3.Row) -> CardRow:
    card = _json_object(r, "card")
    try:
        datetime.fromisoformat(card["due"])
    except (KeyError, TypeError, ValueError):
        raise BadRow(f"card has no readable 'due' ({_show(card.get('due'))})") from None
    return CardRow(question_id=_text(r, "question_id"), topic=_text(r, "topic"), card=card,
                   due=_time(r, "due"), reps=_int(r, "reps"), lapses=_int(r, "lapses"),
                   updated_at=_time(r, "updated_at"))


def parse_lesson_open(r: sqlite3.Row) -> tuple[str, datetime]:
    _time(r, "first_opened")
    _int(r, "times")
    return _text(r, "lesson_id"), _time(r, "last_opened")


def parse_mock(r: sqlite3.Row) -> MockExam:
    per_topic = _json_object(r, "per_topic")
    for topic, cell in per_topic.items():
        if not (isinstance(cell, list) and len(cell) == 2
                and all(isinstance(x, int) for x in cell)):
            raise BadRow(f"per_topic[{_show(topic)}] {_show(cell)} is not [correct, questions]")
    limit = r["time_limit_s"]
    if limit is not None and not isinstance(limit, (int, float)):
        raise BadRow(f"time_limit_s {_show(limit)} is not a number")
    return MockExam(
        id=r["id"], started_at=_time(r, "started_at"),
        finished_at=_time(r, "finished_at", null=True), time_limit_s=limit,
        n_questions=_int(r, "n_questions"), answered=_int(r, "answered"),
        correct=_int(r, "correct"), per_topic=per_topic, seed=_int(r, "seed", null=True),
        status=_text(r, "status"))


PARSERS: dict[str, Callable[[sqlite3.Row], Any]] = {
    "answers": parse_answer, "cards": parse_card, "lesson_opens": parse_lesson_open,
    "mock_exams": parse_mock}

# the tables of schema 2 (timed papers and settings) and 3 (practice traces) parse in their
# own modules
PARSERS.update(papers=parse_paper, paper_parts=parse_paper_part, settings=parse_setting,
               practice_steps=parse_practice_step, practice_levels=parse_practice_level)
KEYS.update(papers="id", paper_parts="question_id", settings="key",
            practice_steps="id", practice_levels="trace")
