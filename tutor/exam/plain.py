"""The line-based paper (``attn-tutor paper --plain``): one answer per line, from a person, a
script or a screen reader, driving the same :class:`~tutor.exam.session.PaperRun` as the TUI.

Numeric part: one line (blank or ``:skip`` leaves it blank). Text part: the answer's lines,
ended by an empty line (kept on screen for the comparison), then the scheme, then one line
with the numbers of the points the answer makes (``1 3``, ``all``, ``none``). ``:quit`` at any
prompt, end of input or Ctrl-C end the paper; every marked part is already saved. A line that
is not an answer gets a one-line hint and the part is asked again. The time limit is enforced
while waiting for a line. The command words are the quiz's (:data:`tutor.marking.COMMAND_WORDS`);
``:hint`` repeats how to answer (a paper gives no hints, as in the exam).
"""

from __future__ import annotations

from tutor.exam.marking import AnswerError, how_to_answer, parse_ticks
from tutor.exam.render import (
    feedback_lines,
    minutes,
    paper_header,
    part_lines,
    question_lines,
    result_lines,
    scheme_lines,
)
from tutor.exam.session import PaperResult, PaperRun
from tutor.marking import command_word
from tutor.quiz.plain import InputTimeout, LineReader, Out

WORDS = ("Type :skip to leave a part blank, :quit to end the paper (what you marked is saved); "
         ":hint repeats how to answer.")
NO_HINTS = "A paper gives no hints (as in the exam). "


class _Stop(Exception):
    def __init__(self, status: str):
        self.status = status


def _line(run: PaperRun, reader: LineReader, out: Out, prompt: str) -> str:
    out.prompt(prompt)
    try:
        text = reader.readline(timeout=run.remaining())
    except InputTimeout:
        out.line("")
        raise _Stop("timed-out") from None
    if text is None or command_word(text) == "quit":
        raise _Stop("stopped")
    if run.expired:
        raise _Stop("timed-out")
    return text


def run_paper_lines(run: PaperRun, *, out: Out, reader: LineReader) -> PaperResult:
    """Sit ``run`` (already built, not started) on lines in, lines out; return its result."""
    for line in paper_header(run.paper):
        out.line(line, "bold" if line.startswith("Paper:") else None)
    out.line(WORDS, "dim")
    run.start()
    status = None
    shown = None
    try:
        while (cur := run.current) is not None:
            q, part = cur
            if q is not shown:
                shown = q
                out.line("")
                number = run.paper.questions.index(q) + 1
                for i, line in enumerate(question_lines(q, number)):
                    out.line(line, "bold" if i == 0 else None)
            left = run.remaining()
            out.line("")
            head, how = part_lines(part)
            out.line(head + ("" if left is None else f"   [time left {minutes(left)}]"), "bold")
            out.line(how if part.kind == "numeric" else
                     "Write your answer; an empty line ends it. Then tick the scheme's points it makes.",
                     "dim")
            if part.kind == "numeric":
                while True:
                    text = _line(run, reader, out, "> ")
                    word = command_word(text)
                    if word == "hint":
                        out.line(NO_HINTS + how_to_answer(part), "yellow")
                        continue
                    try:
                        mark = run.answer("" if word == "skip" else text)
                        break
                    except AnswerError as exc:
                        out.line(str(exc), "yellow")
            else:
                written = []
                while (text := _line(run, reader, out, "| ")).strip():
                    if command_word(text) == "skip":
                        break
                    if command_word(text) == "hint":
                        out.line(NO_HINTS + "Write your answer; an empty line ends it.", "yellow")
                        continue
                    written.append(text)
                out.line("Your answer: " + (" ".join(written) if written else "(nothing written)"))
                for line in scheme_lines(part):
                    out.line(line)
                while True:
                    text = _line(run, reader, out, "points> ")
                    word = command_word(text)
                    if word == "hint":
                        out.line(NO_HINTS + "Type the numbers of the points your answer makes "
                                 f"(1–{len(part.spec.points)}), 'all' or 'none'.", "yellow")
                        continue
                    try:
                        mark = run.answer(parse_ticks("none" if word == "skip" else text,
                                                      len(part.spec.points)))
                        break
                    except AnswerError as exc:
                        out.line(str(exc), "yellow")
            for line in feedback_lines(part, mark):
                out.line(line, "green" if mark.earned == mark.marks else None)
    except _Stop as stop:
        status = stop.status
        if status == "timed-out":
            out.line("Time is up: the parts not answered count as blank.", "yellow")
    except KeyboardInterrupt:
        status = "stopped"
        out.line("")
    except BaseException:  # a bug: close the paper (what was marked is saved), then report it
        run.finish("stopped")
        raise
    result = run.finish(status)
    out.line("")
    for i, line in enumerate(result_lines(result)):
        out.line(line, "bold" if i == 0 else None)
    for err in run.save_errors[:1]:
        out.line(f"attn-tutor: warning: {err}", "yellow")
    return result
