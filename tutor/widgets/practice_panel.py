"""The practice under a trace step: the question, an answer field, and what the answer earned.

It holds the :class:`~tutor.practice.session.PracticeSession` and runs its work (building,
drawing fresh numbers, diagnosing, saving) in a worker; the trace screen only shows the
steps: it listens for :class:`PracticePanel.Changed` and reads :attr:`PracticePanel.session`.
"""

from __future__ import annotations

from rich.console import Group
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Input, Static

from tutor.marking import command_word
from tutor.practice import report
from tutor.practice.session import PracticeSession
from tutor.practice.tasks import PracticeStart
from tutor.render.safe import text
from tutor.screens.handle import tutor_app

MARKS = {"bold green": "✓ ", "bold red": "✗ "}
"""A right or wrong line carries a mark, so it reads without colour (NO_COLOR)."""


def lines_text(lines: list[tuple[str, str]]) -> Group:
    """Report lines as Rich text: each line's style, and a ✓/✗ before a verdict."""
    return Group(*(text(MARKS.get(style, "") + line, style) for line, style in lines))


class PracticePanel(Vertical):
    """A practice of one trace, docked under its steps."""

    DEFAULT_CSS = """
    PracticePanel { height: auto; max-height: 12; border-top: solid $primary-background; }
    PracticePanel #practice-say { height: auto; max-height: 9; padding: 0 1; }
    PracticePanel #practice-input { margin: 0 1; }
    """

    class Changed(Message):
        """The practice moved on (or ended): show its current step again."""

    class Left(Message):
        """The student left the practice."""

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.session: PracticeSession | None = None
        self._busy = False
        self.replies = 0
        """Answers, hints and skips answered so far (a reply is on screen)."""

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="practice-say"):
            yield Static(id="practice-lines")
        yield Input(placeholder="your answer · :hint · :skip · :quit", id="practice-input")

    # -- starting ---------------------------------------------------------------------
    def start(self, name: str, start: PracticeStart | None = None) -> None:
        """Start a practice of trace ``name`` (at the stored level, or ``start``'s)."""
        self.session = None
        self.display = True
        self._say([("Preparing the practice…", "dim")])
        self._start(name, start or PracticeStart())

    @work(thread=True, exclusive=True, group="practice")
    def _start(self, name: str, start: PracticeStart) -> None:
        try:
            session = PracticeSession.start(name, tutor_app(self).store,
                                            level=start.level, seed=start.seed)
        except Exception as exc:  # noqa: BLE001 - a broken plan or store is a line, not a crash
            self.app.call_from_thread(self._say, [(f"Cannot practise {name}: {exc}", "bold red")])
            return
        self.app.call_from_thread(self._begin, session)

    def _begin(self, session: PracticeSession) -> None:
        self.session = session
        self._ask(report.header(session))

    @property
    def _live(self) -> PracticeSession:
        """The practice under way (the panel asks, answers and finishes only while one is)."""
        if self.session is None:
            raise RuntimeError("the practice panel has no practice under way")
        return self.session

    def _ask(self, before: list[tuple[str, str]]) -> None:
        """Show ``before`` and the current task's question, or the summary at the end."""
        session = self._live
        field = self.query_one("#practice-input", Input)
        task = session.task
        if task is None:
            field.display = False
            self._finish(before)
            return
        field.display = True
        field.value = ""
        field.focus()
        self._say(report.task_lines(session, task) + ([("", "")] + before if before else []))
        self.post_message(self.Changed())

    # -- answering --------------------------------------------------------------------
    @on(Input.Submitted, "#practice-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.session is None or self._busy:
            return
        command = command_word(event.value)
        if command == "quit":
            self.action_leave()
            return
        self._busy = True
        self._answer(event.value, command)

    @work(thread=True, exclusive=True, group="practice")
    def _answer(self, value: str, command: str | None) -> None:
        session = self._live
        task = session.task
        try:
            if task is None:
                raise RuntimeError("the practice has ended")
            fb = (session.hint() if command == "hint" else session.skip() if command == "skip"
                  else session.submit(value))
            lines = report.feedback_lines(session, task, fb)
        except Exception as exc:  # noqa: BLE001 - say what went wrong; the practice stays
            fb, lines = None, [(f"That answer could not be marked: {exc}", "bold red")]
        self.app.call_from_thread(self._answered, fb, lines)

    def _answered(self, fb, lines: list[tuple[str, str]]) -> None:
        self._busy = False
        self.replies += 1
        if fb is not None and fb.done:
            self._ask(lines)
            return
        if fb is not None and fb.valid:  # marked, or a hint: the field is free for the next try
            self.query_one("#practice-input", Input).value = ""
        session = self._live
        if session.task is not None:
            self._say(report.task_lines(session, session.task) + [("", "")] + lines)
        else:
            self._say(lines)
        self.post_message(self.Changed())

    def _finish(self, before: list[tuple[str, str]]) -> None:
        summary = self._live.finish()
        self._say(report.summary_lines(summary)
                  + [("p practises again · Esc ends the practice", "dim"), ("", "")] + before)
        self.post_message(self.Changed())

    def _say(self, lines: list[tuple[str, str]]) -> None:
        self.query_one("#practice-lines", Static).update(lines_text(lines))
        self.query_one("#practice-say", VerticalScroll).scroll_home(animate=False)

    # -- leaving ----------------------------------------------------------------------
    def action_leave(self) -> None:
        if self.session is not None and self.session.task is not None:
            self.session.finish()  # answers so far stay saved; the level does not move
        self.session = None
        self.display = False
        self.post_message(self.Left())

