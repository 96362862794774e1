"""The line-based quiz: questions out, answers in, one line each (``attn-tutor quiz --plain``).

Works from a script (``printf 'b\\n0.58\\n' | attn-tutor quiz --plain``) or a screen reader:
plain text, no cursor movement, every prompt on its own line. (A terminal gets the TUI's
quiz screen instead, which drives the same :class:`~tutor.quiz.session.QuizSession`.)

Anything that is not an answer (a letter for a number, an out-of-range choice, an empty line)
is asked again with a hint. The command words of :data:`~tutor.marking.COMMAND_WORDS`
(``:hint``, ``:skip``, ``:quit``) work at any prompt. End of
input and Ctrl-C end the session with its summary; every answer already acknowledged is saved.
"""

from __future__ import annotations

import codecs
import os
import select
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any

from rich.console import Console

from tutor.limits import MAX_LINE_BYTES
from tutor.marking import COMMANDS_HELP, command_word, hint_line
from tutor.quiz.ratings import RATINGS
from tutor.quiz.session import Feedback, QuizSession, Summary
from tutor.render import diagnosis
from tutor.render.numbers import clock, percent
from tutor.render.quiz import counts_line, score_text
from tutor.render.safe import clean
from tutor.render.safe import text as as_text
from tutor.store import utcnow


class InputTimeout(Exception):
    """The time limit ran out while waiting for a line."""


class LineReader:
    """Read lines from a stream, with a timeout when the stream is a real file descriptor.

    A pipe or terminal is read with ``select`` + ``os.read`` (our own buffer, so ``select``
    never misses lines Python has already buffered); any other stream (tests, ``StringIO``)
    falls back to ``readline`` and checks the time after the line arrives.
    """

    def __init__(self, stream: IO[str] | None = None):
        self.stream = stream if stream is not None else sys.stdin
        try:
            self.fd: int | None = self.stream.fileno()
            os.fstat(self.fd)
        except (AttributeError, OSError, ValueError):
            self.fd = None
        if os.name == "nt":  # select() works on sockets only there
            self.fd = None
        self._buf = ""
        self._eof = False
        self._skip = False  # the rest of an over-long line is being dropped
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def readline(self, timeout: float | None = None) -> str | None:
        """One line without its newline; None at end of input. A line longer than
        :data:`~tutor.limits.MAX_LINE_BYTES` is cut there and the rest of it skipped.

        Raises:
            InputTimeout: ``timeout`` seconds passed without a complete line.
        """
        if self.fd is None:
            line = self.stream.readline(MAX_LINE_BYTES + 1)
            if len(line) > MAX_LINE_BYTES and not line.endswith("\n"):
                while (rest := self.stream.readline(MAX_LINE_BYTES)) and not rest.endswith("\n"):
                    pass
            return None if line == "" else line.rstrip("\r\n")

        deadline = None if timeout is None else time.monotonic() + timeout
        while "\n" not in self._buf and not self._eof:
            if len(self._buf) > MAX_LINE_BYTES:  # no newline in sight: hand over what we have
                line, self._buf, self._skip = self._buf[:MAX_LINE_BYTES + 1], "", True
                return line
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.fd], [], [], wait)
            if not ready:
                raise InputTimeout
            chunk = os.read(self.fd, 4096)
            if not chunk:
                self._eof = True
                self._buf += self._decoder.decode(b"", final=True)
            else:
                self._buf += self._decoder.decode(chunk)
            if self._skip:  # still inside the over-long line handed over already
                if "\n" not in self._buf:
                    self._buf = ""
                    continue
                self._buf, self._skip = self._buf.split("\n", 1)[1], False
        if "\n" in self._buf:
            line, self._buf = self._buf.split("\n", 1)
            return line.rstrip("\r")
        if self._buf:
            line, self._buf = self._buf, ""
            return line
        return None


@dataclass
class Out:
    """Where the quiz writes: plain ``print`` or a Rich console with styles."""

    stream: IO[str] | None = None
    console: Any = None  # rich.console.Console when styled

    def line(self, text: str = "", style: str | None = None) -> None:
        """One line of data (question text, an echoed answer): never markup, no control."""
        if self.console is not None:
            self.console.print(as_text(text, style or ""))
        else:
            print(clean(text), file=self.stream or sys.stdout, flush=True)

    def prompt(self, text: str = "> ") -> None:
        if self.console is not None:
            self.console.print(text, end="", style="bold cyan", markup=False)
            self.console.file.flush()
        else:
            stream = self.stream or sys.stdout
            stream.write(text)
            stream.flush()


class _Quit(Exception):
    pass


def run_lines(session: QuizSession, *, out: Out, reader: LineReader,
              header: str = "", saved_to: str | None = None) -> tuple[Summary, bool]:
    """Run ``session`` to the end; return its summary and whether Ctrl-C stopped it."""
    if header:
        out.line(header, "bold")
    if session.time_limit_s is not None:
        out.line(f"Time limit: {clock(session.time_limit_s)}. When it runs out the session "
                 "ends and what you have answered counts.")
    out.line(COMMANDS_HELP + " End of input (Ctrl-D) also stops; answers so far are saved.", "dim")
    interrupted = False
    status = None
    try:
        while (item := session.next()) is not None:
            _ask_item(session, item, out, reader)
        if session.expired:
            status = "timed-out"
    except _Quit:
        status = "stopped"
    except InputTimeout:
        out.line("")
        out.line("Time is up: the session ends here.", "bold yellow")
        status = "timed-out"
    except KeyboardInterrupt:
        out.line("")
        out.line("Interrupted.", "bold yellow")
        interrupted, status = True, "stopped"
    summary = session.finish(status)
    print_summary(summary, out, saved_to=saved_to)
    return summary, interrupted


def _read(session: QuizSession, out: Out, reader: LineReader, prompt: str = "> ") -> str:
    out.prompt(prompt)
    line = reader.readline(session.time_left())
    if line is None:
        out.line("")
        out.line("End of input.", "dim")
        raise _Quit
    if reader.fd is None or not os.isatty(reader.fd):
        out.line("")  # no echo from a pipe: end the prompt line ourselves
    return line


def _ask_item(session: QuizSession, item, out: Out, reader: LineReader) -> None:
    n, total = session.position
    tag = " · generated" if item.generated else ""
    left = session.time_left()
    remaining = f" · {clock(left)} left" if left is not None else ""
    out.line("")
    out.line(f"Question {n}/{total} · {item.section}{tag}{remaining}", "bold")
    if item.title:
        out.line(item.title, "bold")
    out.line(item.setup)
    while True:
        ask = session.ask
        if ask.prompt:
            out.line(ask.prompt)
        if not item.generated:  # a generated part lists its options in its instructions
            for choice in ask.choices:
                out.line(f"  {choice}")
        out.line(ask.instructions, "dim")
        while True:
            text = _read(session, out, reader)
            command = command_word(text)
            if command == "quit":
                raise _Quit
            if command == "skip":
                session.skip()
                out.line("Skipped (not saved).", "dim")
                return
            if command == "hint":
                out.line(hint_line(item.hint), "yellow")
                continue
            fb = session.submit(text)
            if fb.expired:
                raise InputTimeout
            if not fb.valid:
                out.line(f"Not an answer: {fb.hint}", "yellow")
                continue
            break
        if fb.needs_rating:
            fb = _self_rate(session, fb, out, reader)
        if fb.done:
            _show_feedback(fb, out)
            return


def _self_rate(session: QuizSession, fb: Feedback, out: Out, reader: LineReader) -> Feedback:
    from tutor.quiz.scheduler import parse_rating  # deferred: loads fsrs (start-up time)

    out.line("Model answer: " + fb.expected[0], "bold")
    if fb.key_points:
        out.line("A full answer mentions:")
        for point in fb.key_points:
            out.line(f"  - {point}")
    out.line("How did you do? 1 Again (missed it), 2 Hard, 3 Good, 4 Easy.", "dim")
    while True:
        text = _read(session, out, reader)
        if command_word(text) == "quit":
            raise _Quit
        rating = parse_rating(text)
        if rating is not None:
            return session.rate(int(rating))
        out.line("Not a rating: type 1, 2, 3 or 4 (or again, hard, good, easy).", "yellow")


def _show_feedback(fb: Feedback, out: Out) -> None:
    if not fb.saved:
        out.line(f"Warning: this answer was NOT saved ({fb.error}).", "bold red")
    if not fb.reveal:
        if fb.saved:
            out.line("Recorded.", "dim")
        return
    several = len(fb.verdicts) > 1
    right = sum(1 for v in fb.verdicts if v.correct)
    if fb.correct is True:
        out.line("Correct." + (f" All {right} parts right." if several else ""), "bold green")
    elif fb.correct is False and right:
        out.line(f"Partly right: {right} of {len(fb.verdicts)} parts.", "bold yellow")
    elif fb.correct is False:
        out.line("Wrong." + (f" 0 of {len(fb.verdicts)} parts right." if several else ""), "bold red")
    else:
        out.line(f"Rated {RATINGS.get(fb.rating or 0, '?')}.", "bold")
    for i, v in enumerate(fb.verdicts):
        if fb.correct is None:
            break
        label = f"({chr(97 + i)}) {'✓' if v.correct else '✗'} " if several else ""
        out.line(f"{label}{v.reason}", "green" if v.correct else "red")
        if v.diagnoses:  # the catalogued mistake that gives the student's number (or choice)
            for k, line in enumerate(diagnosis.lines(
                    v.diagnoses, "    " if several else "",
                    fb.trace.practice_command if fb.trace_command and fb.trace else None)):
                out.line(line, "bold yellow" if k == 0 else "yellow")
        elif v.why_wrong:
            out.line(v.why_wrong, "yellow")
        if v.hint and not v.correct:
            out.line(f"Hint: {v.hint}", "yellow")
    if fb.aim_line:
        out.line(fb.aim_line, "bold cyan")
    for line in fb.explanation:
        out.line(line)
    if fb.trace is not None:
        out.line(f"See it step by step: {fb.trace.command}", "cyan")
        out.line(f"Do its steps yourself: {fb.trace.practice_command}", "cyan")
    if fb.due is not None:
        out.line(f"Next review: {_when(fb.due)}.", "dim")


def _when(due: datetime) -> str:
    delta = (due - utcnow()).total_seconds()
    if delta < 3600:
        m = max(1, round(delta / 60))
        return f"in {m} minute{'s' * (m != 1)}"
    if delta < 86400:
        h = round(delta / 3600)
        return f"in {h} hour{'s' * (h != 1)}"
    return f"on {due.astimezone():%a %d %b %Y}"


def print_summary(summary: Summary, out: Out, *, saved_to: str | None = None) -> None:
    out.line("")
    title = {"finished": "Session complete", "stopped": "Session stopped",
             "timed-out": "Time is up"}.get(summary.status, "Session over")
    out.line(f"{title} ({summary.mode}).", "bold")
    out.line(f"{counts_line(summary)}; time {clock(summary.seconds)}.")
    topics = summary.exam_scores() if summary.mode == "mock" else summary.per_topic()
    if topics:
        out.line("By topic" + (" (unanswered count as wrong):" if summary.mode == "mock" else ":"))
        for topic, (ok, n) in sorted(topics.items()):
            out.line(f"  {topic:<16} {score_text(ok, int(n))}")
    if summary.mode == "mock":
        total = int(sum(n for _, n in topics.values()))
        score = sum(ok for ok, _ in topics.values())
        out.line(f"Mock exam score: {score_text(score, total)}"
                 + (f" ({percent(score / total)})" if total else "") + ".", "bold")
        wrong = [r for r in summary.results if r.correct is False]
        if wrong:
            out.line("To review:")
            for r in wrong:
                out.line(f"  {r.label}: you said \"{r.response}\"; answer "
                         + "; ".join(r.expected))
                for d in r.diagnoses:
                    out.line(f"    mistake: {d.title} (it gives {d.value}); read {diagnosis.where(d)}")
    named = summary.mistakes()
    if named and summary.mode != "mock":
        out.line("Mistakes named this session (attn-tutor stats keeps the tally):")
        for d, times in named:
            out.line(f"  {d.title}{f' ×{times}' if times > 1 else ''}: read {diagnosis.where(d)}; "
                     f"{d.practice}")
    if summary.unsaved:
        out.line(f"{summary.unsaved} answer(s) could not be saved.", "bold red")
    elif saved_to and summary.answered:
        out.line(f"Progress saved in {saved_to}.", "dim")
    if summary.seed is not None and summary.mode in ("practice", "mock"):
        out.line(f"Seed {summary.seed} (use --seed {summary.seed} to get the same questions).",
                 "dim")


def make_out(styled: bool, stream: IO[str] | None = None) -> Out:
    if not styled:
        return Out(stream=stream)

    return Out(console=Console(highlight=False, file=stream))

