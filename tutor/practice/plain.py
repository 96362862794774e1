"""The line-based practice (``attn-tutor trace NAME --practice --plain``): the steps out, one
answer per line in, plain text (scripts, screen readers), like ``quiz --plain``.

The trace is printed step by step; a blank step reads ``?`` where the student computes,
and its worked numbers follow once the blank is done. Anything that is not a value of the
blank's shape (not a number, the wrong count) gets a one-line hint and is asked again. The
quiz's command words (:data:`tutor.marking.COMMAND_WORDS`: ``:hint``, ``:skip``,
``:quit``) work at every prompt; end of input stops too, with every answer so far saved.
"""

from __future__ import annotations

import os

from tutor.marking import COMMANDS_HELP, command_word
from tutor.practice import report
from tutor.practice.session import Blank, PracticeSession, Summary
from tutor.practice.tasks import Task
from tutor.quiz.plain import LineReader, Out
from tutor.render.plain import header_lines, step_lines
from tutor.render.text import asciify


class _Stop(Exception):
    pass


def run_lines(session: PracticeSession, *, out: Out, reader: LineReader,
              saved_to: str | None = None) -> tuple[Summary, bool]:
    """Run the practice to its end; return its summary and whether Ctrl-C stopped it."""
    interrupted = False
    _say(out, report.header(session))
    out.line(COMMANDS_HELP.replace("a question", "a blank") + " End of input (Ctrl-D) also "
             "stops; answers so far are saved.", "dim")
    out.line("")
    for line in header_lines(session.display_trace())[2:]:  # the summary and the inputs
        out.line(line)
    try:
        for index in range(len(session.trace.steps)):
            out.line("")
            for line in step_lines(session.display_trace(), index):
                out.line(line)
            blank_step = not session.step_done(index)
            while (task := session.task) is not None and task.plan.index == index:
                _ask(session, task, out, reader)
                if blank_step and session.step_done(index) and isinstance(task, Blank):
                    blank_step = False
                    out.line("Worked:", "dim")
                    for line in step_lines(session.trace, index)[1:]:
                        out.line(line)
    except _Stop:
        pass
    except KeyboardInterrupt:
        out.line("")
        out.line("Interrupted.", "bold yellow")
        interrupted = True
    summary = session.finish()
    out.line("")
    _say(out, report.summary_lines(summary))
    if saved_to and summary.saved:
        out.line(f"Progress saved in {saved_to}.", "dim")
    if session.seed is not None:
        out.line(f"Seed {session.seed} (use --seed {session.seed} for the same numbers).", "dim")
    return summary, interrupted


def _ask(session: PracticeSession, task: Task, out: Out, reader: LineReader) -> None:
    out.line("")
    _say(out, report.task_lines(session, task))
    while session.task is task:
        out.prompt("> ")
        line = reader.readline()
        if line is None:
            out.line("")
            out.line("End of input.", "dim")
            raise _Stop
        if reader.fd is None or not _tty(reader.fd):
            out.line("")  # no echo from a pipe: end the prompt line ourselves
        command = command_word(line)
        if command == "quit":
            raise _Stop
        if command == "hint":
            fb = session.hint()
        elif command == "skip":
            fb = session.skip()
        else:
            fb = session.submit(line)
        _say(out, report.feedback_lines(session, task, fb))


def _tty(fd: int) -> bool:
    return os.isatty(fd)


def _say(out: Out, lines: list[tuple[str, str]]) -> None:
    """Plain text is ASCII math, as ``trace --plain`` (√ → sqrt, α → alpha): screen readers."""
    for text, style in lines:
        out.line(asciify(text), style or None)
