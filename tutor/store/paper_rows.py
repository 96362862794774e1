"""Rows of the schema-2 tables (papers, paper_parts, settings) as records, with the same
:class:`~tutor.store.rows.BadRow` rule as the other tables: a malformed row is skipped by
readers and found (and set aside) by ``attn-tutor check``."""

from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import dataclass
from datetime import date, datetime

from tutor.limits import PLAN_MINUTES
from tutor.store.cells import BadRow, _int, _show, _text, _time, mistake_ids

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
    diagnoses: tuple[str, ...] = ()
    """The catalogued mistakes named in the part's number (schema 6)."""


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
                     _time(r, "answered_at"), mistake_ids(r, "diagnoses"))


def parse_setting(r: sqlite3.Row) -> tuple[str, object]:
    """``(key, value)`` of a settings row: valid JSON without NaN or Infinity, and for a
    setting in :data:`SETTINGS`, a value its reader accepts. This is the one place a setting
    is checked: readers get a good value or none (the row is skipped and reported), and
    ``attn-tutor check`` sets a bad one aside."""
    key, value = _text(r, "key"), _text(r, "value")
    try:
        data = json.loads(value, parse_constant=_no_constant, parse_float=_finite)
    except BadRow as exc:
        raise BadRow(f"value {_show(value)} {exc}") from None
    except (ValueError, RecursionError):
        raise BadRow(f"value {_show(value)} is not valid JSON") from None
    check = SETTINGS.get(key)
    why = check(data) if check is not None else None
    if why is not None:
        raise BadRow(f"value {_show(value)} {why}")
    return key, data


def _no_constant(word: str) -> object:
    raise BadRow(f"holds {word}, which is not a number")


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):  # 1e999 reads as inf
        raise BadRow(f"holds {text[:20]}, beyond any float")
    return number


def _exam_setting(data: object) -> str | None:
    """``{"date": "YYYY-MM-DD", "minutes": N}`` with N in :data:`tutor.limits.PLAN_MINUTES`."""
    low, high = PLAN_MINUTES
    if not isinstance(data, dict):
        return "is not an object with the exam date and minutes"
    when, minutes = data.get("date"), data.get("minutes")
    try:
        date.fromisoformat(when)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return f"has date {_show(when)}, not a date YYYY-MM-DD"
    if isinstance(minutes, bool) or not isinstance(minutes, int) or not low <= minutes <= high:
        return f"has minutes {_show(minutes)}, not a whole number from {low} to {high}"
    return None


SETTINGS = {"exam": _exam_setting}
"""Each known setting and its check (None: good, else what is wrong). ``exam`` is the exam
date and daily minutes ``attn-tutor plan`` remembers (:mod:`tutor.exam.plan`)."""
