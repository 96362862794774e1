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
from tutor.exam.marking import parse_answer
from tutor.exam.paper import ExamPart
from tutor.marking import AnswerError
from tutor.quiz import marking as quiz_marking
from tutor.quiz.bank import Question
from tutor.quiz.generators import Part
from tutor.render.numbers import matrix as mat
from tutor.render.numbers import number as num
from tutor.render.numbers import vector as vec
from tutor.typed import EXACT_DECIMALS, read_typed

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


def diagnose(trace: str, inputs: Mapping[str, Any] | None, name: str, values: Sequence[float],
             decimals: Sequence[int], shape: tuple[int, ...],
             tolerance: float | None = None) -> Mark:
    """Mark ``values`` (typed with ``decimals``) as value ``name`` of ``trace`` on ``inputs``
    with the mistake catalogue (:func:`engine.mistakes.diagnose`)."""
    given = np.asarray(values, dtype=float).reshape(shape)
    digits: int | list[int] = list(decimals) if shape else int(decimals[0])
    try:
        check = mistakes.diagnose(trace, inputs, name, given, decimals=digits, tolerance=tolerance)
    except ValueError as exc:
        return Mark.invalid(str(exc))
    except Exception:  # noqa: BLE001 - a catalogue gap must not cost the student their answer
        return _unknown()
    if check.correct:
        return _right()
    if check.diagnoses:
        top = check.diagnoses[0]
        return Mark(True, False, "+".join(top.ids), top.title, top.explanation, named=True)
    if check.imprecise:
        return Mark(True, False, IMPRECISE, BUCKET_TITLES[IMPRECISE],
                    "Your value is right at the digits you typed; give more of them.")
    return _unknown()


def value_name(
    trace: str, inputs: Mapping[str, Any] | None, answer: Any
) -> tuple[str, tuple[int, ...]] | None:
    """The checkable value of ``trace`` on ``inputs`` whose right value is ``answer`` (a
    question's engine-computed answer), with its shape; None when no value is."""
    want = np.asarray(answer, dtype=float)
    try:
        values = mistakes.run_with(trace, inputs, ())
    except Exception:  # noqa: BLE001 - no catalogued computation: the answer is still marked
        return None
    for name, value in values.items():
        got = np.asarray(value, dtype=float)
        if got.size == want.size and np.allclose(got.ravel(), want.ravel(), rtol=1e-9, atol=1e-9):
            return name, tuple(got.shape)
    return None


# --------------------------------------------------------------------------- questions

def choice_index(question: Question, text: str) -> int | None:
    """The 0-based option a multiple-choice answer picks (None when it picks none)."""
    got = quiz_marking.choice_index(text, question)  # the quiz's own reading of a pick
    return got if isinstance(got, int) else None


def mark_bank(question: Question, text: str,
              diagnosis: tuple[str, str, tuple[int, ...]] | None = None,
              diagnose_now: bool = True) -> Mark:
    """A bank question: the quiz's verdict; multiple choice and true/false counted per
    option; a numeric fill diagnosed when ``diagnosis`` (trace, value, shape) is known (or
    left :data:`DIAGNOSING` when not ``diagnose_now``)."""
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
    if diagnosis is not None and not diagnose_now:
        return _later()
    if diagnosis is not None:
        read = read_values(text)
        if not isinstance(read, str):
            trace, name, shape = diagnosis
            found = diagnose(trace, None, name, read[0], read[1], shape, question.tolerance)
            if found.valid and found.bucket != RIGHT:
                return found
    return _unknown()


def mark_part(part: Part, text: str, trace: str = "", inputs: Mapping[str, Any] | None = None,
              found: tuple[str, tuple[int, ...]] | None = None, diagnose_now: bool = True) -> Mark:
    """A part of a generated problem: the quiz's verdict, then the diagnosis of a wrong
    number on the problem's own trace inputs (``found``: the value name and shape; left
    :data:`DIAGNOSING` when not ``diagnose_now``)."""
    verdict = part.check(text)
    if not verdict.valid:
        return Mark.invalid(verdict.hint or part.instructions)
    if part.kind == "choice":  # counted per option, as a bank question's
        i = _part_choice(part, text)
        return Mark(True, bool(verdict.correct), LETTERS[i], part.options[i])
    if verdict.correct:
        return _right()
    if part.kind in ("number", "vector") and trace and not diagnose_now:
        return _later()
    if found is not None and part.kind in ("number", "vector"):
        read = read_values(text)
        if not isinstance(read, str):
            diag = diagnose(trace, inputs, found[0], read[0], read[1], found[1])
            if diag.valid and diag.bucket != RIGHT:
                return diag
    return _unknown()


def _part_choice(part: Part, text: str) -> int:
    """The option a valid answer to a choice part picks (its number or its words)."""
    s = " ".join(text.strip().strip("\"'.").casefold().split())
    if s.isdigit():
        return int(s) - 1
    return next(i for i, o in enumerate(part.options) if " ".join(o.casefold().split()) == s)


def mark_exam_part(part: ExamPart, text: str) -> Mark:
    """A numeric part of a structured question (its own step's answer and tolerance)."""
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
    ok = all(rules.within(g, w, step.tolerance) for g, w in zip(got, want))
    return _right() if ok else _unknown()


def mark_trace(trace: str, inputs: Mapping[str, Any], name: str, shape: tuple[int, ...],
               text: str) -> Mark:
    """A practice-trace step: value ``name`` of ``trace`` on the student's own inputs."""
    read = read_values(text)
    if isinstance(read, str):
        return Mark.invalid(read)
    size = int(np.prod(shape)) if shape else 1
    if len(read[0]) != size:
        return Mark.invalid(f"That is {len(read[0])} number{'s' * (len(read[0]) != 1)}; "
                            f"this answer has {size}.")
    return diagnose(trace, inputs, name, read[0], read[1], shape)


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
