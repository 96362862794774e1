"""The quiz's end: the summary of a session (:func:`tutor.render.quiz.summary`), scrollable."""

from __future__ import annotations

from rich.console import RenderableType
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static


class QuizSummary(VerticalScroll):
    """Score, per topic, what to look at again (or a mock exam's review)."""

    def compose(self) -> ComposeResult:
        yield Static(id="quiz-summary")

    def show(self, summary: RenderableType) -> None:
        self.query_one("#quiz-summary", Static).update(summary)
        self.scroll_home(animate=False)
