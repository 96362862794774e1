"""The quiz's question pane: the status line, the question and its feedback, a hint line and
the answer field.

It shows what the quiz screen gives it and posts :class:`QuizRun.Answered` with what the
student typed; the screen marks it. :attr:`answering` shows the answer field (and focuses it).
"""

from __future__ import annotations

from rich.console import RenderableType
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Input, Static

from tutor.render.safe import text


class QuizRun(Vertical):
    """Status, question, feedback, hint, answer."""

    answering: reactive[bool] = reactive(False, init=False, always_update=True)
    """The answer field is shown (and focused); otherwise the question box has the focus."""

    class Answered(Message):
        """The student pressed Enter in the answer field: :attr:`typed` is what they typed."""

        def __init__(self, typed: str) -> None:
            super().__init__()
            self.typed = typed

    def compose(self) -> ComposeResult:
        yield Static(id="quiz-status")
        with VerticalScroll(id="quiz-question-box"):
            yield Static(id="quiz-question")
            yield Static(id="quiz-feedback")
        yield Static("", id="quiz-hint", classes="field-error")
        yield Input(placeholder="your answer, then Enter", id="quiz-answer")

    def watch_answering(self, answering: bool) -> None:
        answer = self.query_one("#quiz-answer", Input)
        answer.display = answering
        if answering:
            answer.focus()
        else:
            self.query_one("#quiz-question-box").focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "quiz-answer" and self.answering:
            event.stop()
            self.post_message(self.Answered(event.value))

    # ------------------------------------------------------------------ what is shown

    def ask(self, question: RenderableType) -> None:
        """A new item (or its next part): the question, an empty answer, no hint or feedback."""
        self.query_one("#quiz-question", Static).update(question)
        self.query_one("#quiz-hint", Static).update("")

    def clear(self) -> None:
        """A new item: no feedback, an empty field."""
        self.query_one("#quiz-feedback", Static).update("")
        self.clear_answer()

    def clear_answer(self) -> None:
        self.query_one("#quiz-answer", Input).value = ""

    def status(self, line: RenderableType) -> None:
        self.query_one("#quiz-status", Static).update(line)

    def hint(self, message: str) -> None:
        """One line under the question (empty to clear it); data, so never markup."""
        self.query_one("#quiz-hint", Static).update(text(message))

    def feedback(self, shown: RenderableType) -> None:
        """What marking said, under the question, scrolled into view."""
        self.query_one("#quiz-feedback", Static).update(shown)
        box = self.query_one("#quiz-question-box", VerticalScroll)
        feedback = self.query_one("#quiz-feedback", Static)
        # after the next layout (the answer field has just been hidden): then its place is known
        self.call_after_refresh(lambda: self.call_after_refresh(
            lambda: box.scroll_to_widget(feedback, animate=False, top=True)))
