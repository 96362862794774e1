"""The quiz screen's words as Rich renderables: the question, the feedback and the summary.

Questions, choices, answers (the student's and the model's), explanations and hints are data
(the bank's text, a generated problem's numbers, what the student typed), so every one goes
through :mod:`tutor.render.safe`. Actions are named as the TUI's keys (``t`` opens the worked
example on the problem's numbers, ``r`` retries the wrong ones), never as command lines.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from tutor.quiz.bank import SECTIONS
from tutor.quiz.modes import mode_name
from tutor.quiz.ratings import RATINGS
from tutor.render import diagnosis
from tutor.render.labels import hanging
from tutor.render.numbers import clock, number, percent, tally
from tutor.render.safe import assemble, text

RATING_KEYS: dict[str, int] = {"a": 1, "h": 2, "g": 3, "e": 4}
"""The quiz screen's self-grade keys (the number keys go to the areas on every screen)."""


def rating_prompt() -> Text:
    parts: list[Any] = ["Grade yourself: "]
    for k, (key, rating) in enumerate(RATING_KEYS.items()):
        parts += [" · " if k else "", (key, "bold"), f" {RATINGS[rating]}"]
    return assemble(*parts)


def question(session: Any) -> RenderableType:
    """The current item: its setup, the part being asked, its choices and how to answer."""
    item, ask = session.current, session.ask
    parts: list[RenderableType] = [text(item.setup)]
    if len(item.asks) > 1:
        parts.append(Text(f"\nPart {session.part + 1} of {len(item.asks)}", style="bold"))
    if ask.prompt:
        parts.append(text("\n" + ask.prompt))
    if ask.choices:
        parts.append(text("\n" + "\n".join(ask.choices)))
    if ask.instructions:
        parts.append(text("\n" + ask.instructions, "dim"))
    return Group(*parts)


def status(session: Any, left: float | None) -> Text:
    """``3/10 · Practice · §5 qkv · Softmax of scores · ⏱ 4:10 left``."""
    n, total = session.position
    item = session.current
    number = f"§{SECTIONS.index(item.section) + 1} " if item.section in SECTIONS else ""
    parts: list[Any] = [(f"{n}/{total}", "bold"), f" · {mode_name(session.mode)} · {number}{item.section}"]
    if item.title:
        parts.append(f" · {item.title}")
    if left is not None:
        parts += [" · ", (f"⏱ {clock(left)} left", "bold red" if left < 60 else "bold")]
    return assemble(*parts)


def self_grading(fb: Any, answer: str) -> RenderableType:
    """A free-text answer beside the model answer and its key points, then the grade keys."""
    grid = Table.grid(padding=(0, 2), expand=True)
    grid.add_column(ratio=1)
    grid.add_column(ratio=1)
    model: list[RenderableType] = [Text("Model answer", style="bold"), *(text(e) for e in fb.expected)]
    if fb.key_points:
        model += [Text("\nKey points", style="bold"), *(hanging("•", k) for k in fb.key_points)]
    grid.add_row(Group(Text("Your answer", style="bold"), text(answer or "(empty)")), Group(*model))
    return Group(grid, Text(""), rating_prompt())


def feedback(fb: Any, answer: str | None = None) -> RenderableType:
    """After an item is saved: right or wrong and why, the explanation, what comes next."""
    parts: list[RenderableType] = []
    if not fb.saved:
        parts.append(assemble(("Not saved: ", "bold red"), (fb.error or "", "red")))
    if not fb.reveal:
        parts.append(assemble(("Recorded. " if fb.saved else "", "bold"),
                              ("Mock exam: results at the end.", "dim")))
    elif fb.correct is None:
        if answer is not None:
            parts += [self_answer(answer, fb), Text("")]
        parts.append(
            assemble(("Saved" if fb.saved else "Rated", "bold"), f" as {RATINGS.get(fb.rating or 0, '')}.")
        )
    elif fb.correct:
        parts.append(Text("✓ Correct.", style="bold green"))
        if len(fb.verdicts) > 1:
            parts += part_marks(fb.verdicts)
    elif len(fb.verdicts) > 1:  # marked part by part, as papers are
        right = sum(1 for v in fb.verdicts if v.correct)
        head = (f"◐ Partly right: {right} of {len(fb.verdicts)} parts." if right else
                f"✗ Not quite: 0 of {len(fb.verdicts)} parts.")
        parts.append(Text(head, style="bold yellow" if right else "bold red"))
        parts += part_marks(fb.verdicts, _trace_key(fb))
    else:
        given = fb.verdicts[0].given if fb.verdicts else ""  # the number as the marker read it
        parts.append(assemble(("✗ Not quite.", "bold red"), f" You gave {given}." if given else "",
                              " Expected: " + " | ".join(fb.expected)))
        for v in fb.verdicts:
            if v.diagnoses:  # the catalogued mistake that gives the number (or is the choice)
                parts.append(diagnosis.renderable(v.diagnoses, _trace_key(fb, v.diagnoses)))
            elif v.why_wrong:
                parts.append(text(v.why_wrong, "yellow"))
    if fb.reveal:
        if fb.aim_line:
            parts += [Text(""), text(fb.aim_line, "bold cyan")]
        parts += [Text("")] + [text(line) for line in fb.explanation]
        if fb.trace is not None:
            parts += [Text(""), assemble(("t", "bold"), (" opens this worked example step by step"
                                                          + (" on these numbers" if fb.trace.inputs else "")
                                                          + "; p there practises it", "dim"))]
    if fb.due is not None:
        parts.append(Text(f"Next review: {fb.due.astimezone():%a %d %b %H:%M}", style="dim"))
    parts += [Text(""), assemble(("Enter", "bold"), (": next question", "dim"))]
    return Group(*parts)


def part_marks(verdicts: Any, trace_key: Any = None) -> list[RenderableType]:
    """One line per part: its letter, ✓ or ✗ (a mark that reads without colour), and the
    student's value beside the right one; under a wrong number, the mistake that gives it.
    ``trace_key(named)``: the key that opens the worked example for those mistakes, if any."""
    lines: list[RenderableType] = []
    for i, v in enumerate(verdicts):
        letter = f"  ({chr(97 + i)}) "
        if v.correct:
            lines.append(assemble(letter, ("✓ ", "bold green"), (v.given or v.expected, "green"),
                                  ("  right", "dim")))
        else:
            lines.append(assemble(letter, ("✗ ", "bold red"), "you gave ", (v.given or "?", "red"),
                                  "; the answer is ", (v.expected, "bold")))
            if v.diagnoses:
                key = trace_key(v.diagnoses) if trace_key else None
                lines.append(Padding(diagnosis.renderable(v.diagnoses, key), (0, 0, 0, 6)))
    return lines


def _trace_key(fb: Any, named: Any = None) -> Any:
    """``t`` when the mistakes' worked example is the one the quiz screen's ``t`` opens (the
    item's trace on its numbers); with no ``named``, that test as a function of them."""
    def key(found: Any) -> str | None:
        link = fb.trace
        return "t" if link is not None and found and found[0].replay == link.command else None
    return key(named) if named is not None else key


def self_answer(answer: str, fb: Any) -> RenderableType:
    """The student's free-text answer and the model answer, side by side (after grading)."""
    grid = Table.grid(padding=(0, 2), expand=True)
    grid.add_column(ratio=1)
    grid.add_column(ratio=1)
    grid.add_row(Group(Text("Your answer", style="bold"), text(answer or "(empty)")),
                 Group(Text("Model answer", style="bold"), *(text(e) for e in fb.expected)))
    return grid


def mock_review(r: Any) -> list[RenderableType]:
    """A mock exam's answer in the review: ✓ / ◐ / ✗ and the item, what the student said, the
    answer, and the explanation."""
    mark = "✓" if r.correct else "◐" if r.score else "✗"
    style = "green" if r.correct else "yellow" if r.score else "red"
    lines: list[RenderableType] = [assemble("  ", (mark, f"bold {style}"), " ", r.label)]
    said = " | ".join(r.responses) if r.responses else r.response
    lines.append(text(f"    you said \"{said}\"" + ("" if r.correct else
                                                       f"; answer {' | '.join(r.expected)}")))
    lines += [text(f"    mistake: {n.title} (it gives {n.value}); read {diagnosis.where(n)}", "yellow")
              for n in r.diagnoses]
    lines += [text("    " + line, "dim") for line in r.explanation]
    return lines


_HEADLINES = {"finished": "{mode} finished in {time}", "stopped": "{mode} ended early, after {time}",
              "timed-out": "{mode}: time ran out after {time}"}


def headline(summary: Any) -> str:
    """``Practice finished in 2:05`` / ``Mock exam ended early, after 3:10`` / ``… time ran out``."""
    pattern = _HEADLINES.get(summary.status, "{mode} over after {time}")
    return pattern.format(mode=mode_name(summary.mode), time=clock(summary.seconds))


def counts_line(summary: Any) -> str:
    """``Answered 4 of 5, skipped 1; correct 2 of 3 marked (67%); 1 graded by you``: only the
    counts that are not zero (no "0 of 0 correct" after a session of self-graded answers).
    A multi-part problem partly right counts the share of its parts:
    ``correct 1 of 2 marked, 1 partly right: score 1.67 of 2 (83%)``."""
    own = summary.answered - summary.graded
    marked = ""
    if summary.graded:
        pct = percent(summary.score / summary.graded)
        marked = f"; correct {summary.correct} of {summary.graded} marked"
        marked += (f", {summary.partly} partly right: score {number(summary.score, 2)} of "
                   f"{summary.graded} ({pct})" if summary.partly else f" ({pct})")
    return (f"Answered {summary.answered} of {summary.total}"
            + (f", skipped {summary.skipped}" if summary.skipped else "")
            + marked + (f"; {own} graded by you" if own else ""))


def score_text(score: float, total: int) -> str:
    """``2/3``, or ``1.67/3`` when partly right parts make the score fractional."""
    return f"{number(score, 2)}/{total}"


def summary(result: Any) -> RenderableType:
    """The end-of-quiz report: score, per topic, what to look at again, what was not saved."""
    parts: list[RenderableType] = [Text(headline(result), style="bold")]
    if result.mode == "mock":
        per_topic = result.exam_scores()
        total = sum(t for _, t in per_topic.values())
        right = sum(c for c, _ in per_topic.values())
        parts.append(assemble("Score: ", (score_text(right, total), "bold"),
                              f" ({percent(right / total if total else 0.0)}) — unanswered questions count "
                              "as wrong"))
    else:
        parts.append(Text(counts_line(result)))
        per_topic = result.per_topic()
    if per_topic:
        table = Table.grid(padding=(0, 2))
        for topic, (right, total) in sorted(per_topic.items(), key=lambda kv: kv[1][0] / max(kv[1][1], 1)):
            table.add_row(text(topic), score_text(right, total), tally(right, total))
        parts += [Text(""), table]
    wrong = [r for r in result.results if r.correct is False]
    if wrong and result.mode != "mock":
        parts += [Text(""), assemble(("To look at again", "bold"), " (", ("r", "bold"), " asks them again "
                                                                                        "now):")]
        parts += [
            text(f'  {r.label}\n    you said "{r.response}"; expected {" | ".join(r.expected)}')
            for r in wrong
        ]
    named = result.mistakes()
    if named and result.mode != "mock":
        parts += [Text(""), Text("Mistakes named (Stats keeps the tally; quiz mode Mistakes aims at them):",
                                 style="bold")]
        parts += [text(f"  {n.title}{f' ×{k}' if k > 1 else ''} — read {diagnosis.where(n)}")
                  for n, k in named]
    if result.mode == "mock":  # the review: each answer, the right one and why
        parts.append(Text(""))
        for r in result.results:
            parts += mock_review(r)
    if result.unsaved:
        parts.append(Text(f"{result.unsaved} answer(s) could not be saved.", style="red"))
    parts += [Text(""), assemble(("Enter", "bold"), (": a new quiz", "dim"))]
    return Group(*parts)
