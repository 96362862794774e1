"""Reading one cell of a store row: the checks every ``parse_*`` function shares, and
:class:`BadRow`, the error that says which column is wrong and why.

The record types and parsers are in :mod:`tutor.store.rows`, :mod:`tutor.store.paper_rows`
and :mod:`tutor.store.practice_rows`; all three read their cells here.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from typing import Any, Literal, overload


class BadRow(ValueError):
    """A row that cannot be read; the message names the column and the value."""


def iso(at: datetime) -> str:
    """Fixed-width UTC text, so string order is time order in SQL comparisons."""
    if at.tzinfo is None:
        raise ValueError("times must be timezone-aware (UTC)")
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


@overload
def _time(r: sqlite3.Row, column: str, *, null: Literal[False] = False) -> datetime: ...
@overload
def _time(r: sqlite3.Row, column: str, *, null: bool) -> datetime | None: ...
def _time(r: sqlite3.Row, column: str, *, null: bool = False) -> datetime | None:
    value = r[column]
    if value is None and null:
        return None
    try:
        return datetime.fromisoformat(value).astimezone(UTC)
    except (TypeError, ValueError, OverflowError):
        raise BadRow(f"{column} {_show(value)} is not a date and time") from None


@overload
def _int(r: sqlite3.Row, column: str, *, null: Literal[False] = False,
         allowed: tuple[int, ...] | None = None) -> int: ...
@overload
def _int(r: sqlite3.Row, column: str, *, null: bool, allowed: tuple[int, ...] | None = None
         ) -> int | None: ...
def _int(r: sqlite3.Row, column: str, *, null: bool = False, allowed: tuple[int, ...] | None = None
         ) -> int | None:
    value = r[column]
    if value is None and null:
        return None
    if not isinstance(value, int) or (allowed is not None and value not in allowed):
        want = "one of " + ", ".join(map(str, allowed)) if allowed else "a whole number"
        raise BadRow(f"{column} {_show(value)} is not {want}")
    return value


@overload
def _text(r: sqlite3.Row, column: str, *, null: Literal[False] = False) -> str: ...
@overload
def _text(r: sqlite3.Row, column: str, *, null: bool) -> str | None: ...
def _text(r: sqlite3.Row, column: str, *, null: bool = False) -> str | None:
    value = r[column]
    if value is None and null:
        return None
    if not isinstance(value, str):
        raise BadRow(f"{column} {_show(value)} is not text")
    return value


def _json_object(r: sqlite3.Row, column: str) -> dict[str, Any]:
    value = r[column]
    try:
        data = json.loads(value)
    except (TypeError, ValueError, RecursionError):
        raise BadRow(f"{column} {_show(value)} is not valid JSON") from None
    if not isinstance(data, dict):
        raise BadRow(f"{column} {_show(value)} is not a JSON object")
    return data


MAX_IDS = 40
"""Mistake ids one row may name (a multi-part answer names a few; more is damage)."""


def mistake_ids(r: sqlite3.Row, column: str, *, null: bool = False) -> tuple[str, ...]:
    """A column of mistake ids (schema 4's ``practice_steps.diagnoses``, schema 6's
    ``answers.diagnoses`` and ``paper_parts.diagnoses``): a JSON list of strings, a pair
    joined by ``+``; NULL (where ``null``) or a column the row lacks reads as none."""
    raw: Any = r[column] if column in r.keys() else None
    if raw is None and (null or column not in r.keys()):
        return ()
    try:
        ids = json.loads(raw)
    except (TypeError, ValueError, RecursionError):
        raise BadRow(f"{column} {_show(raw)} is not valid JSON") from None
    if not (isinstance(ids, list) and len(ids) <= MAX_IDS
            and all(isinstance(i, str) and 0 < len(i) <= 80 for i in ids)):
        raise BadRow(f"{column} {_show(raw)} is not a list of mistake ids")
    return tuple(ids)
