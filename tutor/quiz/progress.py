"""The numbers behind ``attn-tutor stats``: due cards, per-topic accuracy and mastery, mock
exams and the daily-goal rolling average. Plain data (see tutor/schemas/stats-json.md for the schema);
:mod:`tutor.render.stats` writes it out as text and as Rich tables.

Definitions:

* **accuracy** — correct / graded answers over every mode (mock exams included); self-graded
  answers are not counted. ``None`` when nothing was graded.
* **mastery** — mean FSRS retrievability now over *all* items of the topic, unseen items
  counting 0, so it grows with both coverage and memory (0–1). An item whose latest graded
  answer was wrong also counts 0 until it is answered right again (FSRS alone would rate a
  card just failed today as freshly recalled). FSRS measures elapsed time in
  whole days, so anything reviewed today counts 1 until tomorrow.
* **recurring mistakes** — every catalogued mistake named in the student's answers (quiz,
  papers, practice traces), how often and when last, with the lesson paragraph and the trace
  to practise (:mod:`tutor.quiz.recurring`); two or more times is *recurring*.
* **daily average** — answers per day over the last 7 local days including today (days
  without answers count 0), compared with a goal. Not a streak: a missed day lowers the
  average a little instead of resetting anything. A student who started less than a week
  ago is averaged over the days since their first answer (``days_counted``), so day one is
  judged on day one's answers, not divided by 7; before any answer there is no verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, timedelta
from typing import Any

from tutor.quiz.bank import EXAM_TOPICS, SECTIONS, Question
from tutor.quiz.generators import FAMILIES
from tutor.quiz.recurring import recurring
from tutor.store import Store, local_day
from tutor.store.papers import papers

SCHEMA = 1
DEFAULT_GOAL = 20
WINDOW_DAYS = 7


def compute(store: Store, bank: Sequence[Question], *, now: datetime | None = None,
            goal: int = DEFAULT_GOAL, generated: bool = True) -> dict[str, Any]:
    """Everything ``stats`` shows, as JSON-ready data."""
    from tutor.quiz.scheduler import make_scheduler, retrievability  # deferred: loads fsrs (start-up time)

    now = now or store.now()
    sch = make_scheduler()
    # every item the tutor can ask: question id -> (section, exam topics)
    items: dict[str, tuple[str, tuple[str, ...]]] = {q.id: (q.section, q.exam_topics) for q in bank}
    if generated:
        for fam in FAMILIES.values():
            items[fam.question_id] = (fam.section, fam.exam_topics)
    cards = {c.question_id: c for c in store.cards()}
    qstats = store.question_stats()
    missed = {q for q, a in store.latest_answers().items() if a.correct is False}
    soon = now + timedelta(days=1)

    def topic_row(tid: str, members: list[str]) -> dict[str, Any]:
        graded = sum(qstats[q].graded for q in members if q in qstats)
        correct = sum(qstats[q].correct for q in members if q in qstats)
        seen = [q for q in members if q in cards or q in qstats]
        r = [retrievability(cards[q].card, now, sch) if q in cards and q not in missed else 0.0
             for q in members]
        return {
            "id": tid,
            "questions": len(members),
            "seen": len(seen),
            "answers": sum(qstats[q].answers for q in members if q in qstats),
            "graded": graded,
            "correct": correct,
            "accuracy": round(correct / graded, 4) if graded else None,
            "mastery": round(sum(r) / len(r), 4) if r else None,
            "due": sum(1 for q in members if q in cards and cards[q].due <= now),
        }

    by_section = {s: [q for q, (sec, _) in items.items() if sec == s] for s in SECTIONS}
    by_exam = {e: [q for q, (_, ex) in items.items() if e in ex] for e in EXAM_TOPICS}
    known = [c for q, c in cards.items() if q in items]

    today = local_day(now)
    start = today - timedelta(days=WINDOW_DAYS - 1)
    counts = store.daily_counts(since=start)
    days: list[dict[str, Any]] = [{"date": (start + timedelta(days=i)).isoformat(),
             "answers": counts.get((start + timedelta(days=i)).isoformat(), 0)}
            for i in range(WINDOW_DAYS)]
    counted = _days_counted(store, today)
    average = sum(d["answers"] for d in days[WINDOW_DAYS - counted:]) / counted if counted else 0.0

    return {
        "schema": SCHEMA,
        "generated_at": _iso(now),
        "store": {"path": str(store.path) if store.path else None,
                  "persistent": store.persistent, "warnings": list(store.warnings)},
        "due": {
            "now": sum(1 for c in known if c.due <= now),
            "next_24h": sum(1 for c in known if now < c.due <= soon),
            "seen": sum(1 for q in items if q in cards or q in qstats),
            "unseen": sum(1 for q in items if q not in cards and q not in qstats),
            "total": len(items),
        },
        "topics": [topic_row(s, by_section[s]) for s in SECTIONS],
        "exam_topics": [topic_row(e, by_exam[e]) for e in EXAM_TOPICS],
        "mock_exams": [{
            "id": m.id,
            "started_at": _iso(m.started_at),
            "finished_at": _iso(m.finished_at) if m.finished_at else None,
            "questions": m.n_questions,
            "answered": m.answered,
            "correct": m.correct,
            "score": round(m.correct / m.n_questions, 4) if m.n_questions else None,
            "time_limit_s": m.time_limit_s,
            "status": m.status,
            "per_topic": {k: {"correct": v[0], "questions": v[1]} for k, v in m.per_topic.items()},
        } for m in store.mock_exams()],
        **_papers(store),
        "mistakes": [r.to_dict() for r in recurring(store, bank)],
        "daily": {"goal": goal, "window_days": WINDOW_DAYS, "days": days, "days_counted": counted,
                  "average": round(average, 2), "met": counted > 0 and average >= goal},
        "lessons_opened": {k: _iso(v) for k, v in sorted(store.lessons_opened().items())},
    }


def _papers(store: Store) -> dict[str, Any]:
    """Timed papers over time, and marks by lesson over all papers."""
    records = papers(store)
    topics: dict[str, list[int]] = {}
    for rec in records:
        for topic, (earned, marks) in rec.by_topic().items():
            row = topics.setdefault(topic, [0, 0])
            row[0] += earned
            row[1] += marks
    return {
        "papers": [{
            "id": r.id, "started_at": _iso(r.started_at),
            "finished_at": _iso(r.finished_at) if r.finished_at else None,
            "time_limit_s": r.time_limit_s, "status": r.status, "earned": r.earned,
            "marks": r.marks, "score": round(r.earned / r.marks, 4) if r.marks else None,
            "questions": sorted({p.question_id for p in r.parts}),
            "per_topic": {k: {"earned": v[0], "marks": v[1]} for k, v in r.by_topic().items()},
        } for r in records],
        "paper_topics": [{"id": s, "earned": topics[s][0], "marks": topics[s][1],
                          "score": round(topics[s][0] / topics[s][1], 4) if topics[s][1] else None}
                         for s in SECTIONS if s in topics],
    }


def _days_counted(store: Store, today: date) -> int:
    """Days of the window since the first answer ever (0 before any): 1 on day one, 7 after."""
    history = store.daily_counts()
    if not history:
        return 0
    first = date.fromisoformat(min(history))
    return max(1, min(WINDOW_DAYS, (today - first).days + 1))


def _iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")
