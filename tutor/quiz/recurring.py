"""The student's recurring mistakes: every catalogued mistake the store has named in their
answers (quiz answers, paper parts, practice-trace steps), how often, when last, and what to
practise. ``attn-tutor stats`` shows them, ``quiz --mode mistakes`` aims problems at them and
the plan counts them.

A pair (``no-scale+rounded-intermediates``) counts for each of its mistakes. The trace to
practise is the one the mistake was last made on (a quiz item's, a practice's), else the
first worked example of the mistake's lesson. Plain data: no engine, no terminal.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from engine.mistakes.catalogue import MISTAKES  # the records only: no NumPy, no traces
from tutor.content import load_lessons
from tutor.quiz.bank import Question
from tutor.quiz.generators import family_of
from tutor.store import Store
from tutor.store.papers import papers
from tutor.store.practice import steps

RECURRING = 2
"""Times a mistake must have been named to count as recurring."""

WHERE = ("quiz", "papers", "practice")
"""Where a mistake can have been named."""


@dataclass
class Recurring:
    """One catalogued mistake the student has made (see the module docstring)."""

    id: str
    times: int = 0
    last: datetime | None = None
    where: dict[str, int] = field(default_factory=lambda: dict.fromkeys(WHERE, 0))
    trace: str = ""

    @property
    def title(self) -> str:
        return MISTAKES[self.id].title

    @property
    def lesson(self) -> str:
        return MISTAKES[self.id].lesson

    @property
    def heading(self) -> str:
        return MISTAKES[self.id].anchor

    @property
    def recurring(self) -> bool:
        return self.times >= RECURRING

    @property
    def practise(self) -> str:
        """The command that practises the trace it was made on."""
        return f"attn-tutor trace {self.trace} --practice" if self.trace else ""

    def to_dict(self) -> dict:
        return {"id": self.id, "title": self.title, "times": self.times,
                "last": _iso(self.last) if self.last else None, "where": dict(self.where),
                "recurring": self.recurring, "lesson": self.lesson, "heading": self.heading,
                "read": f"attn-tutor lesson {self.lesson}", "trace": self.trace or None,
                "practise": self.practise or None, "aimed": AIMED}


AIMED = "attn-tutor quiz --mode mistakes"
"""The quiz that aims problems at the recurring mistakes."""


def _events(store: Store, bank: Sequence[Question]) -> Iterable[tuple[str, datetime, str, str]]:
    """(mistake id, when, where, trace or '') for every mistake named in the store."""
    traces = {q.id: q.trace or "" for q in bank}
    for a in store.answers():
        fam = family_of(a.question_id)
        trace = fam.trace if fam else traces.get(a.question_id, "")
        for ids in a.diagnoses:
            yield ids, a.answered_at, "quiz", trace
    for paper in papers(store):
        for part in paper.parts:
            for ids in part.diagnoses:
                yield ids, part.answered_at, "papers", ""
    for step in steps(store):
        for ids in step.diagnoses:
            yield ids, step.answered_at, "practice", step.trace


def recurring(store: Store, bank: Sequence[Question]) -> list[Recurring]:
    """Every mistake named in the student's answers, most often first (then most recent).

    Raises:
        StoreError: the progress cannot be read now.
    """
    found: dict[str, Recurring] = {}
    for ids, at, where, trace in _events(store, bank):
        for mid in ids.split("+"):
            if mid not in MISTAKES:  # an id a later catalogue dropped: nothing to show
                continue
            r = found.setdefault(mid, Recurring(mid))
            r.times += 1
            r.where[where] += 1
            if r.last is None or at >= r.last:
                r.last = at
                r.trace = trace or r.trace
    first = {lesson.id: lesson.traces[0] for lesson in load_lessons() if lesson.traces}
    for r in found.values():
        r.trace = r.trace or first.get(r.lesson, "")
    return sorted(found.values(), key=lambda r: (-r.times, -r.last.timestamp() if r.last else 0,
                                                 r.id))


def _iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")
