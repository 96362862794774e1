"""The paper tab: set up a timed paper, answer it part by part, see the marks.

It drives :class:`tutor.exam.session.PaperRun` exactly as ``attn-tutor paper --plain`` does,
with the same lines from :mod:`tutor.exam.render`; every string from the questions reaches
Textual as ``rich.text.Text`` (``[0.5, -0.2]`` is markup to Rich).

Three panes of a :class:`~textual.widgets.ContentSwitcher`, each a small widget that posts
what the student did: :class:`~tutor.widgets.paper_setup.PaperSetup` (``Start``),
:class:`~tutor.widgets.paper_sitting.PaperSitting` (``Submitted``, ``Next``, ``End``) and
:class:`~tutor.widgets.paper_marks.PaperMarks` (``Again``). :attr:`PaperPanel.state` says
which pane shows.
"""

from __future__ import annotations

import random
from typing import Literal

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.reactive import reactive
from textual.timer import Timer
from textual.widgets import ContentSwitcher

from tutor.exam.marking import AnswerError, PartMark
from tutor.exam.paper import ExamPart, PaperError, make_paper
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
from tutor.screens.handle import tutor_app
from tutor.store.papers import attempted_questions
from tutor.widgets.paper_marks import PaperMarks
from tutor.widgets.paper_setup import PaperSetup
from tutor.widgets.paper_sitting import PaperSitting, lines_text

State = Literal["setup", "answer", "tick", "feedback", "result"]

PANES: dict[str, str] = {"setup": "paper-setup", "answer": "paper-run", "tick": "paper-run",
                         "feedback": "paper-run", "result": "paper-result-box"}
"""Which pane each state shows."""


class PaperPanel(Vertical):
    """Setup → answer → (tick) → feedback → … → result, in one panel."""

    state: reactive[State] = reactive("setup", init=False, always_update=True)
    """setup | answer | tick | feedback | result"""

    def __init__(self, question_ids: tuple[str, ...] = (), minutes: float | None = None, **kw) -> None:
        super().__init__(**kw)
        self.question_ids = question_ids
        self.preset_minutes = minutes
        self.run: PaperRun | None = None
        self.result: PaperResult | None = None
        self._mark: PartMark | None = None
        self._timer: Timer | None = None
        self._written: RenderableType = Text()

    def compose(self) -> ComposeResult:
        with ContentSwitcher(initial="paper-setup", id="paper-panes"):
            yield PaperSetup(self.question_ids, self.preset_minutes, id="paper-setup")
            yield PaperSitting(id="paper-run")
            yield PaperMarks(id="paper-result-box")

    @property
    def sitting(self) -> PaperSitting:
        return self.query_one(PaperSitting)

    @property
    def part(self) -> ExamPart | None:
        """The part being answered (None before and after the paper)."""
        return self.run.current[1] if self.run is not None and self.run.current else None

    def on_mount(self) -> None:
        self.watch_state(self.state)
        self.call_after_refresh(self.focus_current)  # once the tabs have settled

    def watch_state(self, state: State) -> None:
        self.query_one(ContentSwitcher).current = PANES[state]
        part = self.part
        if state == "answer":
            self.sitting.mode = "number" if part is not None and part.kind == "numeric" else "text"
        elif state in ("tick", "feedback"):
            self.sitting.mode = state
        self.screen.refresh_bindings()  # the screen's ctrl+s Submit shows only while a part is open
        self.focus_current()

    def focus_current(self) -> None:
        """Focus what the current state is used through (the answer box, Next, …)."""
        if not self.is_mounted:
            return
        if self.state == "setup":
            self.query_one(PaperSetup).focus_form()
        elif self.state == "result":
            self.query_one(PaperMarks).focus_again()
        else:
            self.sitting.focus_field()

    # ------------------------------------------------------------------ messages
    def on_paper_setup_start(self, message: PaperSetup.Start) -> None:
        self.start(message.questions, message.minutes)

    def on_paper_sitting_submitted(self, _: PaperSitting.Submitted) -> None:
        self.submit()

    def on_paper_sitting_next(self, _: PaperSitting.Next) -> None:
        self.next_part()

    def on_paper_sitting_end(self, _: PaperSitting.End) -> None:
        self.finish("stopped")

    def on_paper_marks_again(self, _: PaperMarks.Again) -> None:
        self.run, self.result = None, None
        self.state = "setup"

    # ------------------------------------------------------------------ the paper
    def start(self, questions: int, mins: float) -> None:
        store = tutor_app(self).store
        try:
            paper = make_paper(questions, mins or None, seed=random.SystemRandom().randrange(2**31),
                               attempted=attempted_questions(store), ids=self.question_ids)
        except PaperError as exc:
            self.query_one(PaperSetup).show_error(exc)
            return
        self.run = PaperRun(paper, store)
        self.run.start()
        self.sitting.show_question(paper_header(paper))
        self._timer = self.set_interval(1.0, self._tick)
        self._show_part()

    def _show_part(self) -> None:
        assert self.run is not None
        cur = self.run.current
        if cur is None:
            self.finish(None)
            return
        q, part = cur
        self.sitting.show_question(question_lines(q, self.run.paper.questions.index(q) + 1))
        self.sitting.show_part(part_lines(part))
        self.state = "answer"
        self._tick()

    def submit(self) -> None:
        """Submit the open field: a text answer goes on to its ticks; anything else is marked."""
        part = self.part
        if self.run is None or part is None or self.state not in ("answer", "tick"):
            return
        if self.state == "answer" and part.kind == "text":
            self.sitting.offer_points(part.spec.points)
            written = self.sitting.written.strip() or "(nothing written)"
            self._written = lines_text(["Your answer: " + written, "", *scheme_lines(part),
                                        "Tick the points your answer makes (Space), then Submit (ctrl+s)."])
            self.sitting.show_feedback(self._written)
            self.state = "tick"
            return
        try:
            mark = self.run.answer(self.sitting.ticked if self.state == "tick" else self.sitting.typed)
        except AnswerError as exc:
            self.sitting.hint(exc)
            return
        self.sitting.hint("")
        self._mark = mark
        shown = lines_text(feedback_lines(part, mark), bold_first=True)
        before = [self._written, Text()] if self.state == "tick" else []
        self.sitting.show_feedback(Group(*before, shown))
        self.state = "feedback"
        self._tick()

    def next_part(self) -> None:
        if self.run is not None and self.run.expired:
            self.finish("timed-out")
        else:
            self._show_part()

    def finish(self, status: str | None) -> None:
        if self.run is None or self.result is not None:
            return
        if self._timer is not None:
            self._timer.stop()
        self.result = self.run.finish(status)
        lines = result_lines(self.result)
        if self.result.status == "timed-out":
            lines.insert(0, "Time is up: the parts not answered count as blank.")
        self.query_one(PaperMarks).show(lines)
        self.state = "result"

    def _tick(self) -> None:
        if self.run is None or self.result is not None:
            return
        done, total = self.run.position
        number = done if self.state in ("feedback", "result") else done + 1  # the part on screen
        self.sitting.status(f"Part {max(1, min(number, total))} of {total} · time left "
                            f"{minutes(self.run.remaining())}")
        if self.run.expired:
            self.finish("timed-out")
