"""A paper's marks at the end (:func:`tutor.exam.render.result_lines`), and Another paper."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Button, Static

from tutor.widgets.paper_sitting import lines_text


class PaperMarks(VerticalScroll):
    """The result lines; Another paper posts :class:`PaperMarks.Again`."""

    class Again(Message):
        """The student wants another paper (back to the setup form)."""

    def compose(self) -> ComposeResult:
        yield Static(id="paper-result")
        yield Button("Another paper", id="paper-again")

    def show(self, lines: list[str]) -> None:
        self.query_one("#paper-result", Static).update(lines_text(lines, bold_first=True))
        self.scroll_home(animate=False)

    def focus_again(self) -> None:
        self.query_one("#paper-again", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "paper-again":
            event.stop()
            self.post_message(self.Again())
