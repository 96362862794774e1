"""One item of a quiz: a bank question or a generated problem, seen the same way by sessions
and UIs (:class:`Item`), what the student types for each part (:class:`Ask`), and the mistake
an aimed item was chosen for (:class:`Aim`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tutor.inputs import TraceLink
from tutor.marking import LETTERS, Verdict
from tutor.quiz.bank import Question
from tutor.quiz.marking import check_answer

if TYPE_CHECKING:
    from tutor.quiz.generators import Problem

LABEL_WIDTH = 70
"""The longest :attr:`Item.label`, in characters."""


@dataclass(frozen=True)
class Ask:
    """One thing the student types: a prompt line, how to answer, and labelled choices."""

    prompt: str
    instructions: str
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Aim:
    """The mistake an item was chosen for: on its numbers, part ``part`` (0-based) tells that
    mistake from the right method, the mistake giving ``value`` there."""

    mistake: str
    title: str
    part: int
    value: str


@dataclass(frozen=True)
class Item:
    """A bank question or a generated problem, seen the same way by sessions and UIs."""

    question: Question | None = None
    problem: Problem | None = None
    aim: Aim | None = None
    """Set in the mistakes mode (and part of weak spots): the mistake this item is aimed at."""

    @property
    def _question(self) -> Question:
        """The bank question of an item that is not a generated problem."""
        if self.question is None:
            raise TypeError("an Item holds a bank question or a generated problem")
        return self.question

    @property
    def _problem(self) -> Problem:
        """The generated problem of an item that is not a bank question."""
        if self.problem is None:
            raise TypeError("an Item holds a bank question or a generated problem")
        return self.problem

    @property
    def question_id(self) -> str:
        return self.question.id if self.question else self._problem.question_id

    @property
    def section(self) -> str:
        return self.question.section if self.question else self._problem.section

    @property
    def exam_topics(self) -> tuple[str, ...]:
        return self.question.exam_topics if self.question else self._problem.exam_topics

    @property
    def generated(self) -> bool:
        return self.problem is not None

    @property
    def variant(self) -> str | None:
        """The seed of a generated problem (stored, so "retry" can repeat its numbers)."""
        return str(self.problem.seed) if self.problem else None

    @property
    def self_graded(self) -> bool:
        return self.question is not None and self.question.kind == "free"

    @property
    def kind(self) -> str:
        return self.question.kind if self.question else "generated"

    @property
    def title(self) -> str:
        return self.problem.title if self.problem else ""

    @property
    def setup(self) -> str:
        """The text above the first answer: the question, or the problem's numbers."""
        return self.question.prompt if self.question else self._problem.prompt

    @property
    def label(self) -> str:
        """A line that names the item for a student (a summary lists it): a problem's title,
        or the start of the question, instead of the stored id."""
        if self.problem:
            return self.problem.title
        words = " ".join(self._question.prompt.split())
        return words if len(words) <= LABEL_WIDTH else words[: LABEL_WIDTH - 1].rsplit(" ", 1)[0] + "…"

    @property
    def asks(self) -> tuple[Ask, ...]:
        if self.problem:
            return tuple(Ask(p.prompt, p.instructions,
                             p.options if p.kind == "choice" else ()) for p in self.problem.parts)
        q = self._question
        choices = tuple(f"{LETTERS[i]}) {c}" for i, c in enumerate(q.choices))
        return (Ask("", q.instructions, choices),)

    def check(self, part: int, text: str) -> Verdict:
        if self.problem:
            return self.problem.parts[part].check(text)
        return check_answer(self._question, text)

    @property
    def hint(self) -> str | None:
        return self.question.hint if self.question else None

    @property
    def explanation(self) -> tuple[str, ...]:
        """Why the answer is right: the bank's explanation, or the worked solution."""
        if self.problem:
            return self.problem.solution
        q = self._question
        return (q.explanation,) + ((f"Erratum: {q.erratum}",) if q.erratum else ())

    @property
    def key_points(self) -> tuple[str, ...]:
        return self.question.key_points if self.question else ()

    @property
    def trace_link(self) -> TraceLink | None:
        """The trace that works this item through: a problem's, on its own numbers."""
        if self.problem:
            return self.problem.trace_link
        q = self._question
        if not q.trace:
            return None
        same = q.computation is None  # the item's inputs are the trace's own
        return TraceLink(q.trace, dict(q.inputs or {}) if same else {})


def matches(item: Item, topics: set[str]) -> bool:
    """Whether ``item`` is in one of ``topics`` (a lesson id or an exam topic; none: all)."""
    return not topics or item.section in topics or bool(topics & set(item.exam_topics))
