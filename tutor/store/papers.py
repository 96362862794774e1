"""Timed papers of structured questions in the progress store (schema version 2), and the
small settings kept beside them (the exam date and daily minutes of ``attn-tutor plan``).

A paper is started, then each marked part is saved as its own committed row (so a crash
loses at most the part being typed), then finished with a status. Papers never change FSRS
cards. These are functions over a :class:`~tutor.store.Store`, kept apart from its core.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from tutor.store.core import Store, _iso, inserted_id
from tutor.store.paper_rows import PaperPart, PaperRow


@dataclass(frozen=True)
class PaperRecord(PaperRow):
    """A paper row and its saved parts (malformed rows are skipped and reported by the store)."""

    parts: tuple[PaperPart, ...] = ()

    @property
    def earned(self) -> int:
        return sum(p.earned for p in self.parts)

    @property
    def marks(self) -> int:
        return sum(p.marks for p in self.parts)

    def by_topic(self) -> dict[str, list[int]]:
        """``{topic: [earned, marks]}``."""
        out: dict[str, list[int]] = {}
        for p in self.parts:
            row = out.setdefault(p.topic, [0, 0])
            row[0] += p.earned
            row[1] += p.marks
        return out


def start_paper(store: Store, time_limit_s: float | None, seed: int | None,
                at: datetime | None = None) -> int:
    """Open a paper (status ``running``) and return its id."""
    with store._write() as conn:
        cur = conn.execute("INSERT INTO papers (started_at, time_limit_s, seed) VALUES (?,?,?)",
                           (_iso(at or store.now()), time_limit_s, seed))
        return inserted_id(cur)


def record_part(store: Store, paper_id: int, question_id: str, part: str, topic: str, *,
                variant: int | None, status: str, earned: int, marks: int, response: str = "",
                at: datetime | None = None, diagnoses: Sequence[str] = ()) -> None:
    """Save one marked part (a second save of the same part replaces the first);
    ``diagnoses``: the catalogued mistakes named in its number."""
    with store._write() as conn:
        conn.execute(
            "INSERT OR REPLACE INTO paper_parts (paper_id, question_id, part, topic, variant,"
            " status, earned, marks, response, answered_at, diagnoses)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (paper_id, question_id, part, topic, variant, status, int(earned), int(marks),
             response, _iso(at or store.now()), json.dumps(list(diagnoses))))


def finish_paper(store: Store, paper_id: int, status: str = "finished",
                 at: datetime | None = None) -> None:
    with store._write() as conn:
        conn.execute("UPDATE papers SET finished_at = ?, status = ? WHERE id = ?",
                     (_iso(at or store.now()), status, paper_id))


def papers(store: Store) -> list[PaperRecord]:
    """Every paper, oldest first, with its parts in the order they were saved."""
    parts: dict[int, list[PaperPart]] = {}
    for p in store._records("paper_parts", "SELECT * FROM paper_parts ORDER BY answered_at, rowid"):
        parts.setdefault(p.paper_id, []).append(p)
    return [PaperRecord(**vars(r), parts=tuple(parts.get(r.id, ())))
            for r in store._records("papers", "SELECT * FROM papers ORDER BY id")]


def attempted_questions(store: Store) -> set[str]:
    """Ids of structured questions with at least one saved part."""
    return {p.question_id for p in store._records("paper_parts", "SELECT * FROM paper_parts")}


def get_setting(store: Store, key: str, default: object = None) -> object:
    """A stored setting (JSON), or ``default``; an unreadable value counts as missing."""
    rows = store._records("settings", "SELECT * FROM settings WHERE key = ?", (key,))
    return rows[0][1] if rows else default


def set_setting(store: Store, key: str, value: object) -> None:
    with store._write() as conn:
        conn.execute("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)",
                     (key, json.dumps(value)))
