"""Marking structured questions: numeric parts automatically with follow-through, text parts
by the student's ticks against the mark scheme. Numbers are read, and the tolerance applied,
by the rules every wing shares (:mod:`tutor.marking`).

Numeric rule, for a part worth ``marks``, of which ``method`` are method marks:

1. the value matches the computed answer (within the tolerance) → all marks;
2. otherwise, if the part builds on earlier parts and the value matches the same computation
   redone on the student's own earlier answers → *follow-through*: all marks when every
   earlier answer it used was itself right (only rounding was carried); when one was wrong,
   the error is carried forward, as examiners mark: a correct method applied to the
   student's own earlier value earns the part's full marks — unless the scheme says
   otherwise (``follow_through = "method"``: only the ``method`` marks, the rest need the
   correct value). The feedback says which earlier value it followed and the policy;
3. otherwise nothing. A blank part earns nothing.

A wrong number is diagnosed with the mistake catalogue (:func:`tutor.typed.diagnose_values`)
on the step's ``link``: the feedback names the mistake whose number it is. When the part
builds on earlier parts the student got wrong, it is diagnosed first on the step's
``relink`` — the same computation on the student's own earlier values — so a later part
done with a catalogued mistake from a wrong earlier value is named too.

Text rule: each ticked point of the scheme earns one mark, up to the part's marks.

Plain functions, no terminal: the CLI and the TUI both call :func:`mark_question`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from tutor.exam.numbers import Value
from tutor.exam.paper import ExamPart, ExamQuestion
from tutor.limits import shorten
from tutor.marking import TYPE_A_NUMBER, AnswerError, Named, all_within, read_number, read_vector
from tutor.render.numbers import number
from tutor.render.numbers import value as show
from tutor.typed import decimals_of, diagnose_values, read_typed

__all__ = ["AnswerError", "PartMark", "QuestionMark", "follow_through_rule", "how_to_answer",
           "mark_numeric", "mark_question", "mark_text", "parse_answer", "parse_ticks"]

Status = Literal["right", "follow-through", "wrong", "blank", "self-marked"]

_SPLIT = re.compile(r"[,;\s]+")
_TICK = re.compile(r"[0-9]{1,3}")
"""A point number as typed: ASCII digits only (``²`` and ``①`` are not points)."""


@dataclass(frozen=True)
class PartMark:
    letter: str
    earned: int
    marks: int
    status: Status
    feedback: str
    value: Value | None = None
    ticked: tuple[int, ...] = ()
    diagnoses: tuple[Named, ...] = ()
    """The catalogued mistakes whose number a wrong answer is."""
    worked_from: str = ""
    """When the diagnosis is on the student's own earlier values: which (``(a) = 0.5``)."""


@dataclass(frozen=True)
class QuestionMark:
    question_id: str
    section: str
    parts: tuple[PartMark, ...]

    @property
    def earned(self) -> int:
        return sum(p.earned for p in self.parts)

    @property
    def marks(self) -> int:
        return sum(p.marks for p in self.parts)


def how_to_answer(part: ExamPart) -> str:
    """One line: what to type for this part."""
    if part.kind == "text":
        return "Write your answer, then tick the scheme's points it contains."
    size = part.step.size if part.step else None
    tol = f" (±{number(part.step.tolerance)} counts)" if part.step and part.step.tolerance else ""
    if size is None:
        return f"Type one number{tol}; a decimal like 0.25 or a fraction like 3/4."
    return f"Type {size} numbers separated by commas{tol}."


def follow_through_rule(part: ExamPart) -> str:
    """The part's follow-through rule in one sentence ('' for a part that builds on nothing)."""
    if not part.uses:
        return ""
    earlier = ", ".join(f"({u})" for u in part.uses)
    method = part.spec.method
    if part.spec.follow_through == "method":
        return (f"Follow-through from {earlier}: correct working from your own wrong value earns "
                f"the {method} method mark{'s' * (method != 1)}; the other "
                f"{part.marks - method} need{'s' * (part.marks - method == 1)} the correct value.")
    earns = f"all {part.marks} marks" if part.marks > 1 else "its mark"
    return (f"Follow-through from {earlier}: correct working from your own wrong value earns "
            f"{earns} (error carried forward).")


def parse_answer(part: ExamPart, text: str) -> Value | None:
    """The value typed for a numeric part; None for a blank answer.

    Raises:
        AnswerError: when the text is not a number (or not the right count of numbers).
    """
    text = (text or "").strip()
    if not text:
        return None
    size = part.step.size if part.step else None
    if size is None:  # one number, read whole: 25,600,000 and sqrt(64) as typed, 0,367 asked
        reading = read_number(text)
        if reading.value is None:  # what was wrong, then this part's own instructions
            why = (reading.hint or "").replace(TYPE_A_NUMBER, "").strip()
            raise AnswerError(f"{why or shorten(text) + ' is not a number.'} {how_to_answer(part)}")
        return reading.value
    values = read_vector(text, size)
    if values.values is None:
        raise AnswerError(f"{values.hint} {how_to_answer(part)}")
    return values.values


def mark_numeric(part: ExamPart, value: Value | None,
                 earlier: Mapping[str, tuple[Value | None, bool]], text: str = "") -> PartMark:
    """Mark a numeric part.

    Args:
        part: the part (with its step).
        value: the student's parsed value, or None when left blank.
        earlier: ``{letter: (student's value or None, was it right)}`` for earlier parts.
        text: what the student typed (its digits say how precisely; empty: ``value`` exact).
    """
    step = part.step
    assert step is not None, "numeric parts have a step"
    want = show(step.answer)
    if value is None:
        return PartMark(part.letter, 0, part.marks, "blank", f"Not answered; the answer is {want}.")
    if all_within(value, step.answer, step.tolerance):
        return PartMark(part.letter, part.marks, part.marks, "right", f"Right: {want}.", value)
    used = {u: earlier.get(u, (None, False)) for u in part.uses}
    if step.redo is not None and used and all(v is not None for v, _ in used.values()):
        names = dict(zip(part.uses, step.uses))
        try:
            redone = step.redo({names[u]: v for u, (v, _) in used.items() if v is not None})
        except (ValueError, TypeError, ZeroDivisionError, OverflowError):
            redone = None
        if redone is not None and all_within(value, redone, step.tolerance):
            wrong = [u for u, (_, ok) in used.items() if not ok]
            if not wrong:
                return PartMark(part.letter, part.marks, part.marks, "right",
                                f"Right for your rounded earlier values ({show(value)}); exact "
                                f"working gives {want}.", value)
            return _follow_through(part, value, {u: used[u][0] for u in wrong}, want)
    named, source = _diagnose(part, value, text, used)
    return PartMark(part.letter, 0, part.marks, "wrong", f"Not quite: you gave {show(value)}; "
                    f"the answer is {want}.", value, diagnoses=named, worked_from=source)


def _diagnose(part: ExamPart, value: Value, text: str,
              used: Mapping[str, tuple[Value | None, bool]]) -> tuple[tuple[Named, ...], str]:
    """The mistakes whose number ``value`` is: on the student's own wrong earlier values
    first (the step's ``relink``), then on the question's numbers (its ``link``)."""
    step = part.step
    assert step is not None
    values = list(value) if isinstance(value, tuple) else [value]
    read = read_typed(text) if text.strip() else []
    decimals = decimals_of([d for _, _, d in read]) if len(read) == len(values) else None
    wrong = {u: v for u, (v, ok) in used.items() if not ok and v is not None}
    tries = []
    if step.relink is not None and wrong and all(v is not None for v, _ in used.values()):
        names = dict(zip(part.uses, step.uses))
        try:
            tries.append((step.relink({names[u]: v for u, (v, _) in used.items() if v is not None}),
                          ", ".join(f"({u}) = {show(v)}" for u, v in wrong.items())))
        except (ValueError, TypeError, ZeroDivisionError, OverflowError):
            pass
    if step.link is not None:
        tries.append((step.link, ""))
    for link, source in tries:
        found = diagnose_values(values, decimals, link, step.tolerance)
        if found is not None and found.named and not found.correct:
            return found.named, source
    return (), ""


def _follow_through(part: ExamPart, value: Value, wrong: Mapping[str, Value | None],
                    want: str) -> PartMark:
    """Right working from the student's own wrong earlier value(s): the policy, said."""
    source = ", ".join(f"({u}) = {show(v)}" for u, v in wrong.items())
    method = part.spec.method
    if part.spec.follow_through == "method":
        earned = method
        policy = (f"this part's scheme gives follow-through only its {method} method "
                  f"mark{'s' * (method != 1)}, so you earn {method} of {part.marks}")
    else:
        earned = part.marks
        policy = ("error carried forward: a correct method on your own earlier value earns the "
                  f"full {part.marks} of {part.marks}, as examiners mark")
    return PartMark(part.letter, earned, part.marks, "follow-through",
                    f"Follow-through: {show(value)} is the right working from your {source}; "
                    f"{policy}. With the correct earlier value{'s' * (len(wrong) > 1)} the answer "
                    f"is {want}.", value)


def mark_text(part: ExamPart, ticked: Iterable[int]) -> PartMark:
    """Self-marking: one mark per ticked point (0-based indices), up to the part's marks.

    Raises:
        AnswerError: for a point number outside the scheme.
    """
    points = part.spec.points
    chosen = tuple(sorted(set(int(i) for i in ticked)))
    bad = [i for i in chosen if not 0 <= i < len(points)]
    if bad:
        raise AnswerError(f"Point {bad[0] + 1} is not in the scheme; tick 1–{len(points)}.")
    earned = min(len(chosen), part.marks)
    extra = (
        f" ({len(chosen)} points ticked; the part is worth {part.marks})" if len(chosen) > part.marks else ""
    )
    return PartMark(part.letter, earned, part.marks, "self-marked",
                    f"Self-marked: {earned} of {part.marks}{extra}.", ticked=chosen)


def parse_ticks(text: str, n_points: int) -> tuple[int, ...]:
    """``"1 3"``, ``"1,3"``, ``"all"`` or ``"none"`` (1-based) as 0-based indices.

    Raises:
        AnswerError: for anything else.
    """
    s = (text or "").strip().lower()
    if s in ("", "none", "0", "-"):
        return ()
    if s == "all":
        return tuple(range(n_points))
    out = []
    for tok in _SPLIT.split(s):
        if not tok:
            continue
        if not _TICK.fullmatch(tok) or not 1 <= int(tok) <= n_points:
            raise AnswerError(f"{tok[:10]!r}: type the numbers of the points your answer "
                              f"makes (1–{n_points}), 'all' or 'none'.")
        out.append(int(tok) - 1)
    return tuple(sorted(set(out)))


def mark_question(question: ExamQuestion, answers: Mapping[str, object]) -> QuestionMark:
    """Mark every part. ``answers[letter]`` is the typed text (numeric) or ticked 0-based
    indices (text); a missing letter counts as blank.

    Raises:
        AnswerError: for a numeric answer that is not a number.
    """
    marks: list[PartMark] = []
    earlier: dict[str, tuple[Value | None, bool]] = {}
    for part in question.parts:
        given = answers.get(part.letter)
        if part.kind == "text":
            marks.append(mark_text(part, given or ()))  # type: ignore[arg-type]
            continue
        value: Value | None
        if isinstance(given, (float, tuple)) or given is None:  # a value already read
            text, value = "", given
        else:  # the typed text ("" is a blank answer)
            text = str(given)
            value = parse_answer(part, text)
        m = mark_numeric(part, value, earlier, text)
        earlier[part.letter] = (value, m.status == "right")
        marks.append(m)
    return QuestionMark(question.id, question.spec.section, tuple(marks))
