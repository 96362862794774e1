"""The paper's setup form: how many questions, how many minutes, Start.

It checks the form itself and posts :class:`PaperSetup.Start`; the paper panel makes the
paper. With preset questions (``attn-tutor paper -q ID`` on a terminal) the count is fixed.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Input, Label, Static

from tutor.exam.paper import DEFAULT_MINUTES, DEFAULT_QUESTIONS, MAX_MINUTES, MAX_QUESTIONS
from tutor.render.safe import text


class PaperSetup(Vertical):
    """Questions and minutes, then Start."""

    class Start(Message):
        """Make a paper of :attr:`questions` questions and :attr:`minutes` minutes (0: untimed)."""

        def __init__(self, questions: int, minutes: float) -> None:
            super().__init__()
            self.questions = questions
            self.minutes = minutes

    def __init__(self, question_ids: tuple[str, ...] = (), minutes: float | None = None, **kw) -> None:
        super().__init__(**kw)
        self.question_ids = question_ids
        self.preset_minutes = minutes

    def compose(self) -> ComposeResult:
        yield Label("[b]A timed paper of structured questions[/b]")
        with Horizontal(classes="paper-row"):
            yield Label("Questions ")
            yield Input(str(len(self.question_ids) or DEFAULT_QUESTIONS), id="paper-count",
                        type="integer", disabled=bool(self.question_ids))
            yield Label("  Minutes (0 = untimed) ")
            yield Input(f"{DEFAULT_MINUTES if self.preset_minutes is None else self.preset_minutes:g}",
                        id="paper-minutes", type="number")
        yield Static(Text(("Questions: " + ", ".join(self.question_ids)) if self.question_ids
                          else "Unattempted questions first, from different sections."),
                     id="paper-choice")
        yield Static("", id="paper-setup-error", classes="field-error")
        yield Button("Start paper", variant="primary", id="paper-start")

    def request(self) -> None:
        """Post :class:`Start` if the form holds a paper's numbers; else say what is wrong."""
        try:
            n = int(self.query_one("#paper-count", Input).value or DEFAULT_QUESTIONS)
            minutes = float(self.query_one("#paper-minutes", Input).value or DEFAULT_MINUTES)
        except ValueError:
            n, minutes = 0, -1.0
        if not 1 <= n <= MAX_QUESTIONS or not 0 <= minutes <= MAX_MINUTES:
            self.show_error(f"Questions: 1 to {MAX_QUESTIONS}; minutes: 0 (untimed) to {MAX_MINUTES}.")
            return
        self.show_error("")
        self.post_message(self.Start(n, minutes))

    def show_error(self, message: object) -> None:
        self.query_one("#paper-setup-error", Static).update(text(message))

    def focus_form(self) -> None:
        self.query_one("#paper-start", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "paper-start":
            event.stop()
            self.request()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.request()
