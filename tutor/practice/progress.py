"""The figures of practice that ``stats``, the Trace list and the plan read: each trace's
level and stage, its practices, what its blanks and prompts earned, and when FSRS wants it
again. Plain data (``stats --json`` carries it under ``practice``; see its schema)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tutor.practice.content import load_plan
from tutor.practice.levels import stage
from tutor.store import Store
from tutor.store import practice as stored


def tops() -> dict[str, int]:
    """Each trace's top level (its practice plan's steps), in lecture order."""
    from engine.traces import list_traces  # deferred: loads numpy (start-up time)

    return {info.name: load_plan(info.name).top for info in list_traces()}


def levels(store: Store) -> dict[str, tuple[int, int]]:
    """Each trace's ``(level, top)``: its stored level, or 0 before any."""
    saved = stored.levels(store)
    return {name: (min(saved[name].level, top) if name in saved else 0, top)
            for name, top in tops().items()}


def compute(store: Store, now: datetime | None = None) -> dict[str, Any]:
    """Practice by trace and by level (JSON-ready)."""
    now = now or store.now()
    saved = stored.levels(store)
    cards = {c.question_id: c for c in store.cards() if stored.trace_of(c.question_id)}
    per_trace: dict[str, dict[str, int]] = {}
    per_level: dict[int, dict[str, int]] = {}
    last: dict[str, datetime] = {}
    for row in stored.steps(store):
        for cell in (per_trace.setdefault(row.trace, _zero()), per_level.setdefault(row.level, _zero())):
            kind = "prompts" if row.name == "why" else "blanks"
            cell[kind] += 1
            cell[kind + "_right"] += int(row.correct)
            cell["hints"] += row.hints
        last[row.trace] = max(last.get(row.trace, row.answered_at), row.answered_at)
    traces = []
    for name, top in tops().items():
        record = saved.get(name)
        level = min(record.level, top) if record else 0
        card = cards.get(stored.item_id(name))
        traces.append({
            "trace": name, "level": level, "top": top, "stage": stage(level, top),
            "practices": record.practices if record else 0, "clean": record.clean if record else 0,
            **per_trace.get(name, _zero()),
            "last": _iso(last[name]) if name in last else None,
            "due": _iso(card.due) if card else None,
            "due_now": bool(card and card.due <= now),
        })
    return {
        "traces": traces,
        "by_level": [{"level": lv, **cells} for lv, cells in sorted(per_level.items())],
        "practised": sum(1 for t in traces if t["practices"]),
        "due_now": sum(1 for t in traces if t["due_now"]),
    }


def _zero() -> dict[str, int]:
    return {"blanks": 0, "blanks_right": 0, "prompts": 0, "prompts_right": 0, "hints": 0}


def _iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")
