"""Shown instead of the UI while the terminal is smaller than 80×24."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import ModalScreen
from textual.widgets import Static

MIN_WIDTH = 80
MIN_HEIGHT = 24


class TooSmallScreen(ModalScreen[None]):
    """A polite message; the app pops it as soon as the terminal is big enough again."""

    def compose(self) -> ComposeResult:
        yield Static(id="too-small-text")

    def on_mount(self) -> None:
        self.refresh_message()

    def refresh_message(self) -> None:
        if not self.query("#too-small-text"):  # a resize before the screen has composed:
            return  # on_mount writes the message
        w, h = self.app.size
        self.query_one("#too-small-text", Static).update(
            f"attn-tutor needs {MIN_WIDTH}×{MIN_HEIGHT}; this window is {w}×{h}. "
            "Make it a little bigger: your place is kept."
        )
