"""The words of a practice, once for both front ends: each function returns lines as
``(text, style)`` pairs; the line front end prints the text, the TUI styles it. A mark is a
word (and, on screen, ✓/✗), never only a colour.
"""

from __future__ import annotations

from tutor.inputs import trace_command
from tutor.marking import LETTERS
from tutor.practice.answers import Mark
from tutor.practice.levels import MAX_ATTEMPTS
from tutor.practice.session import Blank, Feedback, PracticeSession, Prompt, Summary, Task

Line = tuple[str, str]

SHOWN_MISTAKES = 2
"""Diagnoses shown for one answer (the catalogue ranks them, best first)."""


def header(session: PracticeSession) -> list[Line]:
    """What the practice is: trace, level, where the numbers come from."""
    t = session.trace
    numbers = "the notes' numbers" if session.seed is None else f"fresh numbers (seed {session.seed})"
    stage = {"study": "every value shown: explain the steps",
             "faded": f"the last {session.level} of {session.plan.top} practised steps blank",
             "solve": "every practised step blank: the whole problem"}[session.stage]
    return [(f"Practice: {t.name}, {t.title}", "bold"),
            (f"Level {session.level} of {session.plan.top} ({stage}); {numbers}", "dim")]


def task_lines(session: PracticeSession, task: Task) -> list[Line]:
    """The question of a task: a blank's value, or a self-explanation prompt and its choices."""
    if isinstance(task, Blank):
        step = session.trace.steps[task.plan.index]
        return [(f"Step {task.plan.step} ({step.title}): {task.prompt}", "bold"),
                (task.instructions, "dim")]
    out: list[Line] = [(f"Why? Step {task.plan.step}: {task.prompt}", "bold")]
    out += [(f"  {LETTERS[i]}) {choice}", "") for i, choice in enumerate(task.choices)]
    out.append((task.instructions, "dim"))
    return out


def feedback_lines(session: PracticeSession, task: Task, fb: Feedback) -> list[Line]:
    """What the student's last answer (or hint, or skip) earned."""
    if not fb.valid:
        return [(f"Not an answer: {fb.hint}", "yellow")]
    out: list[Line] = []
    if isinstance(task, Prompt):
        principle = f"{LETTERS[task.answer]}) {task.choices[task.answer]}"
        if task.choice is not None and task.choice >= 0:
            out.append((f"Right: {principle}" if fb.right else
                        f"Not this one: you chose {LETTERS[task.choice]}); the principle is "
                        + principle, "bold green" if fb.right else "bold red"))
        else:
            out.append((f"Skipped: the principle is {principle}", "bold"))
        out.append((f"Why: {fb.reason}", ""))
        return out + _unsaved(fb)
    if fb.hint is not None and fb.mark is None and fb.shown is None:
        rung = task.hints if isinstance(task, Blank) else 0
        return [(f"Hint {rung} of 3: {fb.hint}", "yellow")]
    if fb.mark is not None:
        out += mark_lines(session, task, fb.mark)
    if fb.shown is not None:
        why = ("shown by the last hint" if task.hints >= 3 else
               f"after {MAX_ATTEMPTS} tries" if task.attempts >= MAX_ATTEMPTS else "skipped")
        out.append((f"The value ({why}; this blank counts as not solved): {fb.shown}", "bold"))
    elif fb.attempts_left and out:  # on the verdict's own line: it stays in view on 24 rows
        line, style = out[0]
        out[0] = (f"{line}. Try again ({fb.attempts_left} tr"
                  f"{'ies' if fb.attempts_left != 1 else 'y'} left) or :hint.", style)
    return out + _unsaved(fb)


def mark_lines(session: PracticeSession, task: Blank, m: Mark) -> list[Line]:
    """The typed value beside the right one (once it is right or given), and the diagnosis."""
    label = task.ask.label
    if m.correct:
        return [(f"Right: {label} = {m.given} (the engine: {m.expected})", "bold green")]
    out: list[Line] = [(f"Not right: you gave {label} = {m.given}", "bold red")]
    if m.imprecise:
        out.append(("Right at the digits you typed but not precise enough: keep 3 or 4 decimals "
                    "in every intermediate.", "yellow"))
    for named in m.named[:SHOWN_MISTAKES]:
        out.append((f"Known mistake: {named.title}; it gives {label} = {named.value} here.",
                    "yellow"))
        out.append((f"  {named.explanation}", ""))
        where = f"lesson {named.lesson}" + (f", \"{named.anchor}\"" if named.anchor else "")
        out.append((f"  Read: {where} (attn-tutor lesson {named.lesson}).", "dim"))
    if len(m.named) > 1 and m.follow_up:
        out.append(("These mistakes give the same number on these inputs; on these they differ: "
                    + trace_command(session.trace.name, m.follow_up) + " --practice", "dim"))
    if m.diagnosed and not m.named and not m.imprecise:
        out.append(("No catalogued mistake gives that number here: check each entry again.", "dim"))
    return out


def _unsaved(fb: Feedback) -> list[Line]:
    return [] if fb.saved else [(f"Warning: this answer was NOT saved ({fb.error}).", "bold red")]


def summary_lines(s: Summary) -> list[Line]:
    """The end of a practice: what was solved and where the level goes."""
    if not s.complete or s.outcome is None:  # (complete: an outcome)
        return [("Practice stopped: the answers so far are saved; the level stays "
                 f"{s.level} of {s.top}.", "bold")]
    out: list[Line] = [("Practice complete.", "bold")]
    if s.blanks:
        out.append((f"Blanks solved: {s.solved} of {s.blanks}.", ""))
    out.append((f"Why-questions right: {s.right} of {s.prompts}.", ""))
    move = ("up" if s.new_level > s.level else "down" if s.new_level < s.level else "the same")
    verdict = {"clean": "A clean practice",
               "partial": ("Solved, with help or a second try" if s.helped
                           else "Not every why-question right"),
               "failed": "Some blanks were not solved"}[s.outcome.value]
    out.append((f"{verdict}: next time level {s.new_level} of {s.top} ({move}).", "bold"))
    if s.due is not None:
        out.append((f"Practise it again: {s.due.astimezone():%a %d %b %H:%M} (FSRS).", "dim"))
    if not s.saved:
        out.append((f"Warning: progress was NOT fully saved ({s.error}).", "bold red"))
    return out
