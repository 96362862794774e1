"""Practice traces in the progress store (schema version 3): each answer of a practice as its
own committed row (a crash loses at most the answer being typed), and each trace's fading
level.

A trace's practice is also an FSRS item: its card is an ordinary row of ``cards`` whose id is
:func:`item_id` (``practice:qkv``), written by :meth:`~tutor.store.Store.record_answer` with
mode :data:`MODE` when a practice ends, so ``attn-tutor check`` can rebuild it from those
answers like any other card. These are functions over a :class:`~tutor.store.Store`, kept
apart from its core.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from tutor.store.core import Store, _iso, inserted_id
from tutor.store.practice_rows import PracticeLevel, PracticeStep

ITEM_PREFIX = "practice:"
"""Question ids of practice cards and answers: ``practice:<trace>``."""
MODE = "trace"
"""The ``answers.mode`` of the one answer row a finished practice leaves (its FSRS review)."""


def item_id(trace: str) -> str:
    """The FSRS item of a trace's practice: ``practice:qkv``."""
    return ITEM_PREFIX + trace


def trace_of(question_id: str) -> str | None:
    """The trace of a practice item id, or None for any other question id."""
    return question_id[len(ITEM_PREFIX):] if question_id.startswith(ITEM_PREFIX) else None


def record_step(store: Store, *, session: str, trace: str, level: int, seed: int | None,
                step: int, name: str, answer: str, correct: bool, attempts: int = 1,
                hints: int = 0, diagnoses: Sequence[str] = (), at: datetime | None = None) -> int:
    """Save one answer of a practice and COMMIT before returning its row id.

    Raises:
        StoreError: the answer could not be saved.
    """
    with store._write() as conn:
        cur = conn.execute(
            "INSERT INTO practice_steps (session, trace, level, seed, step, name, answer,"
            " correct, attempts, hints, diagnoses, answered_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (session, trace, int(level), seed, int(step), name, answer, int(bool(correct)),
             int(attempts), int(hints), json.dumps(list(diagnoses)), _iso(at or store.now())))
        return inserted_id(cur)


def steps(store: Store, trace: str | None = None) -> list[PracticeStep]:
    """Saved practice answers, oldest first (of one trace, if named)."""
    if trace is None:
        return store._records("practice_steps", "SELECT * FROM practice_steps ORDER BY id")
    return store._records("practice_steps", "SELECT * FROM practice_steps WHERE trace = ?"
                          " ORDER BY id", (trace,))


def levels(store: Store) -> dict[str, PracticeLevel]:
    """Every trace with a stored level."""
    return {r.trace: r for r in store._records("practice_levels", "SELECT * FROM practice_levels")}


def level_of(store: Store, trace: str) -> PracticeLevel | None:
    """The trace's stored level, or None (never practised and never set)."""
    rows = store._records("practice_levels", "SELECT * FROM practice_levels WHERE trace = ?",
                          (trace,))
    return rows[0] if rows else None


def save_level(store: Store, trace: str, level: int, *, finished: bool = False,
               clean: bool = False, at: datetime | None = None) -> None:
    """Store the trace's level; ``finished`` counts a practice that ended (``clean`` a clean one).

    Raises:
        StoreError: the level could not be saved.
    """
    with store._write() as conn:
        conn.execute(
            "INSERT INTO practice_levels (trace, level, practices, clean, updated_at)"
            " VALUES (?,?,?,?,?) ON CONFLICT(trace) DO UPDATE SET level = excluded.level,"
            " practices = practices + excluded.practices, clean = clean + excluded.clean,"
            " updated_at = excluded.updated_at",
            (trace, int(level), int(finished), int(finished and clean), _iso(at or store.now())))
