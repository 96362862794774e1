"""A yes/no question before something that cannot be undone (ending a mock exam early)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from tutor.render.safe import text


class Confirm(ModalScreen[bool]):
    """Dismisses with True for ``y`` (or the first button), False for ``n`` or Esc."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str, yes: str, no: str) -> None:
        super().__init__()
        self._question, self._yes, self._no = question, yes, no

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box"):
            yield Static(text(self._question), id="confirm-question")
            with Horizontal(id="confirm-buttons"):
                yield Button(f"{self._yes} (y)", variant="error", id="confirm-yes")
                yield Button(f"{self._no} (n)", variant="primary", id="confirm-no")

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()  # the safe choice is the default

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
