"""Rows of the schema-3 tables (practice_steps, practice_levels) as records, with the same
:class:`~tutor.store.rows.BadRow` rule as the other tables: a malformed row is skipped by
readers and found (and set aside) by ``attn-tutor check``."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime

from tutor.store.cells import BadRow, _int, _show, _text, _time, mistake_ids


@dataclass(frozen=True)
class PracticeStep:
    """One answer of a practice: a value the student computed, or a self-explanation."""

    id: int
    session: str
    trace: str
    level: int
    seed: int | None
    step: int
    name: str
    answer: str
    correct: bool
    attempts: int
    hints: int
    diagnoses: tuple[str, ...]
    answered_at: datetime


@dataclass(frozen=True)
class PracticeLevel:
    """A trace's fading level and how many practices (and clean ones) it has had."""

    trace: str
    level: int
    practices: int
    clean: int
    updated_at: datetime


def _count(r: sqlite3.Row, column: str) -> int:
    value = _int(r, column)
    if value < 0:
        raise BadRow(f"{column} {_show(value)} is negative")
    return value


def parse_practice_step(r: sqlite3.Row) -> PracticeStep:
    _text(r, "diagnoses")
    ids = mistake_ids(r, "diagnoses")
    step = _int(r, "step")
    if step < 1:
        raise BadRow(f"step {_show(step)} is not a step number")
    return PracticeStep(
        id=_int(r, "id"), session=_text(r, "session"), trace=_text(r, "trace"),
        level=_count(r, "level"), seed=_int(r, "seed", null=True), step=step,
        name=_text(r, "name"), answer=_text(r, "answer"),
        correct=bool(_int(r, "correct", allowed=(0, 1))), attempts=_count(r, "attempts"),
        hints=_count(r, "hints"), diagnoses=tuple(ids), answered_at=_time(r, "answered_at"))


def parse_practice_level(r: sqlite3.Row) -> PracticeLevel:
    practices, clean = _count(r, "practices"), _count(r, "clean")
    if clean > practices:
        raise BadRow(f"clean {_show(clean)} is more than practices ({_show(practices)})")
    return PracticeLevel(_text(r, "trace"), _count(r, "level"), practices, clean,
                         _time(r, "updated_at"))
