"""Rows of the schema-2 tables (papers, paper_parts, settings) as records, with the same
:class:`~tutor.store.rows.BadRow` rule as the other tables: a malformed row is skipped by
readers and found (and set aside) by ``attn-tutor check``."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import datetime

from tutor.store.rows import BadRow, _int, _show, _text, _time

STATUSES = ("running", "finished", "timed-out", "stopped")
PART_STATUSES = ("right", "follow-through", "wrong", "blank", "self-marked")


@dataclass(frozen=True)
class PaperPart:
    paper_id: int
    question_id: str
    part: str
    topic: str
    variant: int | None
    status: str
    earned: int
    marks: int
    response: str
    answered_at: datetime


@dataclass(frozen=True)
class PaperRow:
    id: int
    started_at: datetime
    finished_at: datetime | None
    time_limit_s: float | None
    seed: int | None
    status: str


def _choice(r: sqlite3.Row, column: str, allowed: tuple[str, ...]) -> str:
    value = _text(r, column)
    if value not in allowed:
        raise BadRow(f"{column} {_show(value)} is not one of {', '.join(allowed)}")
    return value


def parse_paper(r: sqlite3.Row) -> PaperRow:
    limit = r["time_limit_s"]
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, (int, float))):
        raise BadRow(f"time_limit_s {_show(limit)} is not a number")
    return PaperRow(_int(r, "id"), _time(r, "started_at"), _time(r, "finished_at", null=True),
                    limit, _int(r, "seed", null=True), _choice(r, "status", STATUSES))


def parse_paper_part(r: sqlite3.Row) -> PaperPart:
    earned, marks = _int(r, "earned"), _int(r, "marks")
    if not 0 <= earned <= marks:
        raise BadRow(f"earned {_show(earned)} is not between 0 and marks ({_show(marks)})")
    return PaperPart(_int(r, "paper_id"), _text(r, "question_id"), _text(r, "part"),
                     _text(r, "topic"), _int(r, "variant", null=True),
                     _choice(r, "status", PART_STATUSES), earned, marks, _text(r, "response"),
                     _time(r, "answered_at"))


def parse_setting(r: sqlite3.Row) -> tuple[str, object]:
    value = _text(r, "value")
    try:
        return _text(r, "key"), json.loads(value)
    except (ValueError, RecursionError):
        raise BadRow(f"value {_show(value)} is not valid JSON") from None
