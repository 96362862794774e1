"""Plain lines for a paper: the question, a part, its mark scheme, feedback and the result.

Both the ``--plain`` runner and the TUI paper screen show these same words (the screen wraps
each line in ``rich.text.Text``, since question text such as ``[0.5, -0.2]`` is markup to
Rich).
"""

from __future__ import annotations

from tutor.exam.marking import PartMark, follow_through_rule, how_to_answer
from tutor.exam.paper import ExamPart, ExamQuestion, Paper
from tutor.exam.session import PaperResult
from tutor.render import diagnosis
from tutor.render.numbers import clock, percent

FOLLOW_THROUGH = ("Numeric parts are marked as you go, with follow-through: a later part worked "
                  "correctly from your own wrong earlier value earns its full marks (error "
                  "carried forward, as examiners mark), unless the part says otherwise.")
"""The paper's follow-through policy, said once at the top of every paper."""


def minutes(seconds: float | None) -> str:
    """``m:ss`` (the quiz's clock), or ``untimed``."""
    return "untimed" if seconds is None else clock(seconds)


def paper_header(paper: Paper) -> list[str]:
    qs = paper.questions
    return [f"Paper: {len(qs)} question{'s' * (len(qs) != 1)}, {paper.marks} marks, "
            f"time {minutes(paper.time_limit_s)}.",
            FOLLOW_THROUGH,
            "Text parts: write your answer, then tick the scheme's points it makes."]


def question_lines(q: ExamQuestion, number: int) -> list[str]:
    return [f"Question {number} — {q.spec.title} [{q.marks} marks, §{q.spec.section_number} "
            f"{q.spec.section}]", *q.stem.splitlines()]


def part_lines(part: ExamPart) -> list[str]:
    """The part's prompt with its marks, then how to answer (and its follow-through rule)."""
    how = " ".join(x for x in (how_to_answer(part), follow_through_rule(part)) if x)
    return [f"{part.prompt} [{part.marks} mark{'s' * (part.marks != 1)}]", how]


def scheme_lines(part: ExamPart) -> list[str]:
    """A text part's scheme, numbered for ticking, then its model answer."""
    out = [f"Mark scheme: one mark per point your answer makes (up to {part.marks}):"]
    out += [f"  {i}. {p}" for i, p in enumerate(part.spec.points, 1)]
    out += ["Model answer: " + " ".join(part.model_answer)]
    return out


def feedback_lines(part: ExamPart, mark: PartMark) -> list[str]:
    out = [f"({part.letter}) {mark.earned}/{mark.marks} — {mark.feedback}"]
    if mark.diagnoses:  # the catalogued mistake whose number this is
        if mark.worked_from:
            out.append(f"  Worked from your own {mark.worked_from}:")
        out += diagnosis.lines(mark.diagnoses, "  ")
    if part.kind == "numeric":
        out += ["  Working: " + line for line in part.model_answer]
        if mark.status in ("wrong", "follow-through") and not mark.diagnoses:
            out += ["  Common mistakes: " + " ".join(part.spec.mistakes)]
    else:
        out += ["  Common mistakes: " + " ".join(part.spec.mistakes)]
    return out


def result_lines(result: PaperResult) -> list[str]:
    pct = f" ({percent(result.earned / result.total)})" if result.total else ""
    out = [f"Paper {result.status}: {result.earned}/{result.total} marks{pct}."]
    for q, marks in result.marks:
        parts = ", ".join(f"({m.letter}) {m.earned}/{m.marks}" for m in marks)
        out.append(f"  {q.spec.title}: {sum(m.earned for m in marks)}/{q.marks}  {parts}")
    follow = [m for _, ms in result.marks for m in ms if m.status == "follow-through" and m.earned]
    if follow:  # only when it earned something: never "on 0 parts"
        earned = sum(m.earned for m in follow)
        out.append(f"  Follow-through (error carried forward) earned {earned} mark"
                   f"{'s' * (earned != 1)} on {len(follow)} part{'s' * (len(follow) != 1)}.")
    out.append("  By topic: " + ", ".join(f"{t} {e}/{m}" for t, (e, m) in result.by_topic().items()))
    named = {n.id: n for _, ms in result.marks for m in ms for n in m.diagnoses}
    if named:
        out.append("  Mistakes named: " + "; ".join(f"{n.title} (read {diagnosis.where(n)})"
                                                   for n in named.values()))
    out.append("Saved to your progress (attn-tutor stats)." if result.saved else
               "Not saved: the progress store could not be written.")
    return out
