"""Structured questions with their numbers filled in, and timed papers made of them.

:func:`instantiate` ``(spec, seed)`` runs the question's maker and fills ``{fields}`` in the
stem and prompts; each numeric part gets its :class:`~tutor.exam.numbers.Step` and the letters
of the earlier parts it builds on. :func:`make_paper` picks questions for a paper: different
lecture sections, questions not yet attempted first, reproducible for a seed.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tutor.exam.model import PartSpec, QuestionSpec, fill, load_questions
from tutor.exam.numbers import Numbers, Step, make

DEFAULT_QUESTIONS = 3
DEFAULT_MINUTES = 45
MAX_QUESTIONS = 10
"""Questions in one paper (``attn-tutor paper -n`` and the Exam screen alike)."""
MAX_MINUTES = 600
"""A paper's time limit: ten hours (0 = untimed)."""


class PaperError(ValueError):
    """A paper cannot be made as asked (one line: what and why)."""


@dataclass(frozen=True)
class ExamPart:
    """A part ready to show and mark."""

    spec: PartSpec
    prompt: str
    step: Step | None = None
    uses: tuple[str, ...] = ()
    """Letters of the earlier parts whose values this part's ``step.redo`` takes."""

    @property
    def letter(self) -> str:
        return self.spec.letter

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def marks(self) -> int:
        return self.spec.marks

    @property
    def model_answer(self) -> tuple[str, ...]:
        """The model answer as lines: the computed working, then the file's sentence."""
        lines = list(self.step.working) if self.step else []
        if self.spec.model:
            lines.append(self.spec.model)
        return tuple(lines)


@dataclass(frozen=True)
class ExamQuestion:
    """A structured question for one seed."""

    spec: QuestionSpec
    seed: int
    stem: str
    parts: tuple[ExamPart, ...]

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def marks(self) -> int:
        return self.spec.marks

    def part(self, letter: str) -> ExamPart:
        return next(p for p in self.parts if p.letter == letter)


def instantiate(spec: QuestionSpec, seed: int = 0) -> ExamQuestion:
    """``spec`` with the numbers of ``seed``.

    Raises:
        ValueError: when the file and its maker disagree (a missing field or step, or a step
            that builds on a step no earlier part asks for).
    """
    numbers = Numbers({}, {})
    if not spec.numbers:  # no maker: nothing to fill in
        return ExamQuestion(spec, int(seed), spec.stem, tuple(ExamPart(p, p.prompt) for p in spec.parts))
    if spec.numbers:
        numbers = make(spec.numbers, seed)
    where = f"{spec.source}: {spec.id}"
    try:
        stem = fill(spec.stem, numbers.fields)
        prompts = [fill(p.prompt, numbers.fields) for p in spec.parts]
    except KeyError as exc:
        raise ValueError(f"{where}: maker {spec.numbers!r} has no field {exc.args[0]!r}; it has "
                         + ", ".join(sorted(numbers.fields))) from None
    by_step: dict[str, str] = {}
    parts = []
    for p, prompt in zip(spec.parts, prompts):
        if p.kind == "text":
            parts.append(ExamPart(p, prompt))
            continue
        step = numbers.steps.get(p.step)
        if step is None:
            raise ValueError(f"{where} part ({p.letter}): maker {spec.numbers!r} has no step "
                             f"{p.step!r}; it has " + ", ".join(sorted(numbers.steps)))
        missing = [u for u in step.uses if u not in by_step]
        if missing:
            raise ValueError(f"{where} part ({p.letter}): step {p.step!r} builds on {missing[0]!r}, "
                             "which no earlier part asks for")
        if p.method and not step.uses:
            raise ValueError(f"{where} part ({p.letter}): method marks need a step that builds on "
                             "an earlier part")
        if step.uses and not (p.method and step.redo is not None):
            raise ValueError(f"{where} part ({p.letter}): step {p.step!r} builds on "
                             f"{', '.join(map(repr, step.uses))}, so the part needs its method "
                             "marks ('method', 1 or more) and the maker a redo for follow-through")
        parts.append(ExamPart(p, prompt, step, tuple(by_step[u] for u in step.uses)))
        by_step[p.step] = p.letter
    return ExamQuestion(spec, int(seed), stem, tuple(parts))


@dataclass(frozen=True)
class ExamStart:
    """What the Exam screen opens with: preset question ids, minutes, and the tab shown."""

    questions: tuple[str, ...] = ()
    minutes: float | None = None
    tab: str = "exam-paper"


@dataclass(frozen=True)
class Paper:
    """Questions and a time limit (seconds; None = untimed)."""

    questions: tuple[ExamQuestion, ...]
    time_limit_s: float | None
    seed: int

    @property
    def marks(self) -> int:
        return sum(q.marks for q in self.questions)


def too_few_message(found: int, n: int, sections, everything) -> str:
    """Why a filter leaves fewer than ``n`` questions, and what would work instead."""
    where = f" on {', '.join(sections)}" if sections else ""
    if found == 0:
        covered = sorted({q.section_number for q in everything})
        return (f"no exam question{where} yet; there are questions on sections "
                f"{', '.join(map(str, covered))}")
    noun = "question" if found == 1 else "questions"
    return f"only {found} exam {noun}{where}; asked for {n} (ask for {found} or add a topic)"


def make_paper(n: int = DEFAULT_QUESTIONS, minutes: float | None = DEFAULT_MINUTES, *,
               seed: int = 0, sections: Sequence[str] = (), attempted: Iterable[str] = (),
               ids: Sequence[str] = (), questions: Sequence[QuestionSpec] | None = None) -> Paper:
    """A paper of ``n`` questions: unattempted ones first, from different sections when possible.

    Args:
        n: how many questions.
        minutes: the time allowed (None or 0: untimed).
        seed: picks the questions and their numbers.
        sections: only these lesson ids (default all).
        attempted: question ids already sat; unattempted ones are picked first.
        ids: exactly these questions, in this order (``n`` and ``sections`` are then ignored).
        questions: the pool (default :func:`load_questions`).

    Raises:
        PaperError: for n < 1, an unknown id, or a filter that leaves too few questions.
    """
    pool = list(questions if questions is not None else load_questions())
    rnd = random.Random(seed)
    if ids:
        known = {q.id: q for q in pool}
        bad = [i for i in ids if i not in known]
        if bad:
            raise PaperError(f"no exam question {bad[0]!r}; see 'attn-tutor paper --list'")
        chosen = [known[i] for i in ids]
    else:
        if n < 1:
            raise PaperError(f"a paper needs at least 1 question, got {n}")
        everything = pool
        if sections:
            pool = [q for q in pool if q.section in sections]
        if len(pool) < n:
            raise PaperError(too_few_message(len(pool), n, sections, everything))
        done = set(attempted)
        rnd.shuffle(pool)
        chosen, used = [], set()
        for group in ([q for q in pool if q.id not in done], [q for q in pool if q.id in done]):
            for distinct in (True, False):  # one per section while that is possible
                for q in group:
                    if len(chosen) < n and q not in chosen and not (distinct and q.section in used):
                        chosen.append(q)
                        used.add(q.section)
        chosen.sort(key=lambda q: q.section_number)
    limit = float(minutes) * 60 if minutes else None
    return Paper(tuple(instantiate(q, rnd.randrange(2**31)) for q in chosen), limit, seed)
