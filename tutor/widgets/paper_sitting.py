"""The paper being sat: the status line, the question, the part, its feedback, and the field
the part is answered in — a number line, a text box, or the scheme's points to tick.

It shows what the paper panel gives it and posts what the student did:
:class:`PaperSitting.Submitted` (Enter in the number field, or Submit), :class:`PaperSitting.Next`
and :class:`PaperSitting.End`. :attr:`mode` says which field is open.
"""

from __future__ import annotations

from typing import Literal

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Button, Input, Static, TextArea

from tutor.render.safe import clean, text
from tutor.widgets.ticks import TickList

Mode = Literal["number", "text", "tick", "feedback"]


def lines_text(lines: list[str], bold_first: bool = False) -> Group:
    """Lines of data (the paper's text, what the student wrote), without terminal control. An
    indented line keeps its indent when it wraps (a diagnosis under a part's verdict)."""
    out: list[RenderableType] = []
    for i, line in enumerate(lines):
        body = clean(line)
        indent = len(body) - len(body.lstrip(" "))
        shown = Text(body.lstrip(" "), style="bold" if bold_first and i == 0 else "")  # cleaned above
        out.append(Padding(shown, (0, 0, 0, indent)) if indent else shown)
    return Group(*out)


class PaperSitting(Vertical):
    """Status, question, part, feedback, hint, and the open field with its buttons."""

    mode: reactive[Mode] = reactive("number", init=False, always_update=True)
    """number | text (answering), tick (the scheme's points), feedback (Next)."""

    class Submitted(Message):
        """The student submitted the open field (a number, a text answer or the ticks)."""

    class Next(Message):
        """The student asked for the next part."""

    class End(Message):
        """The student ended the paper."""

    def compose(self) -> ComposeResult:
        yield Static(id="paper-status")
        with VerticalScroll(id="paper-box"):
            yield Static(id="paper-question")
            yield Static(id="paper-part")
            yield Static(id="paper-feedback")
        yield Static("", id="paper-hint", classes="field-error")
        yield Input(placeholder="your answer, then Enter (empty = leave blank)", id="paper-answer")
        yield TextArea(id="paper-text")
        yield TickList(id="paper-points")
        with Horizontal(classes="paper-row"):
            yield Button("Submit", variant="primary", id="paper-submit")
            yield Button("Next", id="paper-next")
            yield Button("End paper", id="paper-end")

    def watch_mode(self, mode: Mode) -> None:
        self.query_one("#paper-answer").display = mode == "number"
        self.query_one("#paper-text").display = mode == "text"
        self.query_one("#paper-points").display = mode == "tick"
        self.query_one("#paper-submit").display = mode in ("text", "tick")
        self.query_one("#paper-next").display = mode == "feedback"

    def focus_field(self) -> None:
        """Focus what the open mode is used through (the answer box, the points, Next)."""
        self.query_one({"number": "#paper-answer", "text": "#paper-text", "tick": "#paper-points",
                        "feedback": "#paper-next"}[self.mode]).focus()

    # ------------------------------------------------------------------ what is shown

    def show_question(self, lines: list[str]) -> None:
        self.query_one("#paper-question", Static).update(lines_text(lines, bold_first=True))

    def show_part(self, lines: list[str]) -> None:
        """A new part: its lines, empty fields, no feedback or hint."""
        self.query_one("#paper-part", Static).update(lines_text(lines, bold_first=True))
        self.query_one("#paper-feedback", Static).update("")
        self.hint("")
        self.query_one("#paper-answer", Input).value = ""
        self.query_one("#paper-text", TextArea).text = ""
        self.call_after_refresh(self.query_one("#paper-part").scroll_visible, animate=False)

    def show_feedback(self, shown: RenderableType) -> None:
        self.query_one("#paper-feedback", Static).update(shown)
        self.call_after_refresh(self.query_one("#paper-box", VerticalScroll).scroll_end, animate=False)

    def hint(self, message: object) -> None:
        self.query_one("#paper-hint", Static).update(text(message) if message else "")

    def status(self, line: str) -> None:
        self.query_one("#paper-status", Static).update(Text(line, style="bold"))

    def offer_points(self, points: tuple[str, ...]) -> None:
        """The scheme's points to tick, one line each (numbered as printed above)."""
        chooser = self.query_one("#paper-points", TickList)
        chooser.clear_options()
        chooser.add_options([(text(f"{i}. {p}"), i - 1) for i, p in enumerate(points, 1)])
        chooser.highlighted = 0

    # ------------------------------------------------------------------ what was given

    @property
    def typed(self) -> str:
        return self.query_one("#paper-answer", Input).value

    @property
    def written(self) -> str:
        return self.query_one("#paper-text", TextArea).text

    @property
    def ticked(self) -> list[int]:
        return list(self.query_one("#paper-points", TickList).selected)

    # ------------------------------------------------------------------ events

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "paper-answer":
            event.stop()
            self.post_message(self.Submitted())

    def on_button_pressed(self, event: Button.Pressed) -> None:
        messages = {"paper-submit": self.Submitted, "paper-next": self.Next, "paper-end": self.End}
        if event.button.id in messages:
            event.stop()
            self.post_message(messages[event.button.id]())
