"""The class wing's one door to marking and diagnosis.

Every call the class server makes into the quiz's marking (:mod:`tutor.quiz.marking`,
:meth:`tutor.quiz.generators.Part.check`), the exam papers' parsing and tolerance
(:mod:`tutor.exam.marking`), the number formats of answers and the mistake catalogue
(:mod:`engine.mistakes`) goes through this module, so when those rules move only this file
follows them. It returns one small
record, :class:`Mark`: valid or not (with a hint), right or wrong, and the *bucket* the
instructor's histogram counts the answer in — ``right``, a catalogued mistake (its id or two
ids joined by ``+``, with its title), ``imprecise`` (right at the digits typed, but too few of
them) or ``unknown``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine import mistakes
from tutor import marking as rules
from tutor import typed
from tutor.exam.marking import parse_answer
from tutor.exam.paper import ExamPart
from tutor.marking import AnswerError, Link
from tutor.quiz import marking as quiz_marking
from tutor.quiz.bank import Question
from tutor.quiz.generators import Part
from tutor.render.numbers import matrix as mat
from tutor.render.numbers import number as num
from tutor.render.numbers import vector as vec
from tutor.typed import EXACT_DECIMALS, decimals_of, diagnose_values, read_typed

LETTERS = rules.LETTERS
"""Labels of multiple-choice options (``a`` …): a choice is counted under its letter."""


def show_number(x: float) -> str:
    """A number as the quiz writes an answer (``0.4621``)."""
    return num(x)


def show_vector(xs: Sequence[float]) -> str:
    return vec(xs)


def show_matrix(rows: Sequence[Sequence[float]]) -> str:
    return mat(rows)


RIGHT = "right"
UNKNOWN = "unknown"
IMPRECISE = "imprecise"
DIAGNOSING = "diagnosing"
"""A wrong number whose diagnosis has not run yet (``diagnose=False``): counted at once, moved
to its mistake's bucket when the diagnosis comes back."""
BUCKET_TITLES = {RIGHT: "right", UNKNOWN: "wrong, no known mistake",
                 IMPRECISE: "right, but too few digits", DIAGNOSING: "wrong (diagnosing…)"}

@dataclass(frozen=True)
class Mark:
    """One marked answer.

    ``valid`` False: not an answer (``hint`` says what to type); nothing is counted.
    ``bucket``/``title``: where the histogram counts it. ``feedback``: one or two sentences
    for the student at reveal (what the mistake was, filled with their numbers).
    """

    valid: bool
    correct: bool = False
    bucket: str = UNKNOWN
    title: str = ""
    feedback: str = ""
    hint: str = ""
    named: bool = False
    """A catalogued mistake (or pair) was recognised: ``title`` names it."""

    @classmethod
    def invalid(cls, hint: str) -> Mark:
        return cls(False, hint=hint)


def _right(feedback: str = "") -> Mark:
    return Mark(True, True, RIGHT, BUCKET_TITLES[RIGHT], feedback)


def _unknown(feedback: str = "") -> Mark:
    return Mark(True, False, UNKNOWN, BUCKET_TITLES[UNKNOWN], feedback)


def _later() -> Mark:
    return Mark(True, False, DIAGNOSING, BUCKET_TITLES[DIAGNOSING])


# --------------------------------------------------------------------------- numbers

def read_values(text: str) -> tuple[list[float], list[int]] | str:
    """Numbers typed as a list (or one number) and the decimals typed in each (an exact form
    such as ``3/4`` counts as :data:`~tutor.typed.EXACT_DECIMALS`); a hint when not numbers."""
    read = read_typed(text)
    if not read:
        return "Type a number."
    bad = next((t for t, v, _ in read if v is None), None)
    if bad is not None:
        return rules.number_hint(bad) if len(read) == 1 else f"{bad[:20]} is not a number."
    return ([float(v) for _, v, _ in read if v is not None],  # every one (checked above)
            [EXACT_DECIMALS if d is None else d for _, _, d in read])


def choice_index(question: Question, text: str) -> int | None:
    """The 0-based option a multiple-choice answer picks (None when it picks none)."""
    got = quiz_marking.choice_index(text, question)  # the quiz's own reading of a pick
    return got if isinstance(got, int) else None


def choice_why(question: Question, i: int) -> str:
    """The mistake behind choice ``i`` for the instructor's board: the catalogue's title when
    the choice is a catalogued mistake (its explanation is worked on the trace's numbers, which
    the room has not seen), else the item's own line."""
    mistake = question.choice_mistakes[i] if i < len(question.choice_mistakes) else ""
    link = question.link
    named = typed.explain(link, mistake) if mistake and link is not None else None
    if named is not None:
        return named.title
    return question.why_wrong[i] if i < len(question.why_wrong) else ""


def mark_bank(question: Question, text: str, diagnose_now: bool = True) -> Mark:
    """A bank question: the quiz's verdict; multiple choice and true/false counted per
    option; a wrong number diagnosed where the item's answer is computed (its ``link``),
    or left :data:`DIAGNOSING` when not ``diagnose_now``."""
    verdict = quiz_marking.check_answer(question, text)
    if not verdict.valid:
        return Mark.invalid(verdict.hint or question.instructions)
    if question.kind == "mcq":
        i = choice_index(question, text)
        letter = LETTERS[i] if i is not None else "?"
        title = question.choices[i] if i is not None else ""
        return Mark(True, bool(verdict.correct), letter, title,
                    "" if verdict.correct else (verdict.why_wrong or ""))
    if question.kind == "true_false":  # options a) true, b) false
        said = verdict.correct == bool(question.answer)
        return Mark(True, bool(verdict.correct), "a" if said else "b", "true" if said else "false")
    if verdict.correct:
        return _right()
    return _wrong(text, question.link, question.tolerance, diagnose_now)


def mark_part(part: Part, text: str, diagnose_now: bool = True) -> Mark:
    """A part of a generated problem: the quiz's verdict, then the diagnosis of a wrong
    number on the problem's own inputs (the part's ``link``), or :data:`DIAGNOSING` when
    not ``diagnose_now``."""
    verdict = part.check(text, diagnose=False)
    if not verdict.valid:
        return Mark.invalid(verdict.hint or part.instructions)
    if part.kind == "choice":  # counted per option, as a bank question's
        i = _part_choice(part, text)
        return Mark(True, bool(verdict.correct), LETTERS[i], part.options[i])
    if verdict.correct:
        return _right()
    return _wrong(text, part.link, part.tolerance, diagnose_now)


def _part_choice(part: Part, text: str) -> int:
    """The option a valid answer to a choice part picks (its number or its words)."""
    s = " ".join(text.strip().strip("\"'.").casefold().split())
    if s.isdigit():
        return int(s) - 1
    return next(i for i, o in enumerate(part.options) if " ".join(o.casefold().split()) == s)


def mark_exam_part(part: ExamPart, text: str, diagnose_now: bool = True) -> Mark:
    """A numeric part of a structured question: its step's answer and tolerance, a wrong
    number diagnosed on the question's numbers (the step's ``link``)."""
    try:
        value = parse_answer(part, text)
    except AnswerError as exc:
        return Mark.invalid(str(exc))
    if value is None:
        return Mark.invalid("Type an answer first.")
    step = part.step
    assert step is not None, "only numeric parts are asked in class"
    got = value if isinstance(value, tuple) else (value,)
    want = step.answer if isinstance(step.answer, tuple) else (step.answer,)
    if all(rules.within(g, w, step.tolerance) for g, w in zip(got, want)):
        return _right()
    return _wrong(text, step.link, step.tolerance, diagnose_now)


def mark_trace(trace: str, inputs: Mapping[str, Any], name: str, shape: tuple[int, ...],
               text: str, diagnose_now: bool = True) -> Mark:
    """A practice-trace step: value ``name`` of ``trace`` on the student's own inputs,
    right when it is the right value rounded to the digits typed."""
    read = read_values(text)
    if isinstance(read, str):
        return Mark.invalid(read)
    size = int(np.prod(shape)) if shape else 1
    if len(read[0]) != size:
        return Mark.invalid(f"That is {len(read[0])} number{'s' * (len(read[0]) != 1)}; "
                            f"this answer has {size}.")
    link = Link(trace, name, dict(inputs))
    found = diagnose_values(read[0], decimals_of(read[1]), link)
    if found is not None and found.correct:
        return _right()
    return _wrong(text, link, None, diagnose_now)


def _wrong(text: str, link: Link | None, tolerance: float | None, diagnose_now: bool) -> Mark:
    """A wrong number: counted as :data:`DIAGNOSING` until ``diagnose_now``, then in the
    bucket of the catalogued mistake that gives it (:func:`tutor.typed.diagnose`, the one
    door every front end uses), ``imprecise``, or ``unknown``."""
    if link is None:
        return _unknown()
    if not diagnose_now:
        return _later()
    try:
        found = typed.diagnose(text, link, tolerance)
    except Exception:  # noqa: BLE001 - a catalogue gap must not cost the student their answer
        return _unknown()
    if found is None:
        return _unknown()
    if found.named:
        top = found.named[0]
        return Mark(True, False, top.id, top.title, top.explanation, named=True)
    if found.imprecise:
        return Mark(True, False, IMPRECISE, BUCKET_TITLES[IMPRECISE],
                    "Your value is right at the digits you typed; give more of them.")
    return _unknown()


def checkable(trace: str, inputs: Mapping[str, Any] | None = None) -> dict[str, tuple[int, ...]]:
    """The value names of ``trace`` a student can be asked for, with their shapes."""
    return mistakes.checkable(trace, inputs)


def expected(trace: str, inputs: Mapping[str, Any] | None, name: str) -> np.ndarray:
    """The right value of ``name`` (the engine's)."""
    return np.asarray(mistakes.run_with(trace, inputs, ())[name], dtype=float)


def mistake_title(ids: str) -> str:
    """The title of a bucket that is a catalogued mistake (or two, joined by ``+``)."""
    return " + ".join(mistakes.MISTAKES[i].title if i in mistakes.MISTAKES else i
                      for i in ids.split("+"))
