"""The quiz's setup form: mode, how many, minutes, numeric problems, topics.

It reads and checks the form itself and posts :class:`QuizSetup.Start` with what was chosen;
the quiz screen starts the session. Ticked topics show ``✓`` (:class:`~tutor.widgets.ticks.TickList`).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from tutor.content import EXAM_TOPICS, load_lessons
from tutor.errors import UserError
from tutor.quiz.modes import DEFAULT_COUNT, MODE_TITLES, QuizStart, check_minutes, mode_name, time_limit_s
from tutor.render.safe import text
from tutor.widgets.ticks import TickBox, TickList

QUIZ_MODES = tuple(MODE_TITLES.items())


@dataclass(frozen=True)
class Choice:
    """What the form asks for: a mode, topics, and the optional count and minutes."""

    mode: str
    topics: frozenset[str]
    count: int | None
    minutes: float | None
    generated: bool


class QuizSetup(Horizontal):
    """Mode and numbers on the left, topics on the right, Start."""

    class Start(Message):
        """The student asked for a quiz: :attr:`choice` holds what the form says."""

        def __init__(self, choice: Choice) -> None:
            super().__init__()
            self.choice = choice

    def __init__(self, start: QuizStart, **kw) -> None:
        super().__init__(**kw)
        self.preset_start = start

    def compose(self) -> ComposeResult:
        start = self.preset_start
        with Vertical(id="quiz-setup-left"):
            yield Label("[b]Mode[/b]")
            yield OptionList(
                *(Option(text(mode_name(mode)), id=mode) for mode, _ in QUIZ_MODES), id="quiz-modes"
            )
            yield Static(id="quiz-mode-about")
            with Horizontal(id="quiz-numbers"):
                with Vertical():
                    yield Label("[b]How many[/b]")
                    yield Input("" if start.count is None else str(start.count),
                                id="quiz-count", type="integer", tooltip="Empty: the mode's default")
                with Vertical():
                    yield Label("[b]Minutes[/b]")
                    yield Input("" if start.minutes is None else f"{start.minutes:g}",
                                id="quiz-minutes", type="number",
                                tooltip="Mock exams only; empty: 2 minutes a question")
            yield TickBox("Numeric problems", start.generated, id="quiz-generated",
                          tooltip="Include problems the engine generates with fresh numbers, "
                                  "each with its worked solution")
            yield Static("", id="quiz-setup-error", classes="field-error")
            yield Button("Start", variant="primary", id="quiz-start")
        with Vertical(id="quiz-setup-right"):
            yield Label("[b]Topics[/b] [dim](none ticked = everything)[/dim]")
            yield TickList(
                *((text(f"§{lesson.section} {lesson.title}"), lesson.id, lesson.id in start.topics)
                  for lesson in load_lessons()),
                *((text(t.removeprefix("exam-").replace("-", " ") + " (exam topic)"), t, t in start.topics)
                  for t in EXAM_TOPICS),
                id="quiz-topics",
            )

    def on_mount(self) -> None:
        self.query_one("#quiz-modes", OptionList).highlighted = [m for m, _ in QUIZ_MODES].index(
            self.preset_start.mode)
        self._describe(self.preset_start.mode)

    # ------------------------------------------------------------------ the form

    @property
    def mode(self) -> str:
        return QUIZ_MODES[self.query_one("#quiz-modes", OptionList).highlighted or 0][0]

    @property
    def topics(self) -> tuple[str, ...]:
        return tuple(self.query_one("#quiz-topics", TickList).selected)

    def preset(self, topics: tuple[str, ...] = (), mode: str | None = None) -> None:
        """Tick ``topics`` (only them) and pick ``mode``."""
        chooser = self.query_one("#quiz-topics", TickList)
        chooser.deselect_all()
        for topic in topics:
            chooser.select(topic)
        if mode:
            self.query_one("#quiz-modes", OptionList).highlighted = [m for m, _ in QUIZ_MODES].index(mode)

    def read(self) -> Choice | None:
        """The form as a :class:`Choice`, or None after saying on the form what is wrong."""
        count_text = self.query_one("#quiz-count", Input).value.strip()
        minutes_text = self.query_one("#quiz-minutes", Input).value.strip()
        try:
            count = int(count_text) if count_text else None
            minutes = float(minutes_text) if minutes_text else None
        except ValueError:
            self.show_error("How many: a whole number; minutes: e.g. 10 or 2.5")
            return None
        try:
            check_minutes(minutes)  # inf, NaN, negative or over ten hours
        except UserError as exc:
            self.show_error(f"Minutes: {exc}")
            return None
        return Choice(self.mode, frozenset(self.topics), count, minutes,
                      self.query_one("#quiz-generated", TickBox).value)

    def show_error(self, message: object) -> None:
        """One line under the form (empty to clear it)."""
        self.query_one("#quiz-setup-error", Static).update(text(message))

    def focus_form(self) -> None:
        self.query_one("#quiz-modes", OptionList).focus()

    # ------------------------------------------------------------------ events

    def _request(self) -> None:
        choice = self.read()
        if choice is not None:
            self.post_message(self.Start(choice))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "quiz-start":
            event.stop()
            self._request()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_list.id == "quiz-modes":
            event.stop()
            self._request()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id == "quiz-modes" and event.option.id:
            self._describe(event.option.id)

    def _describe(self, mode: str) -> None:
        """The mode's line under the list; its defaults as the fields' placeholders."""
        self.query_one("#quiz-mode-about", Static).update(text(MODE_TITLES[mode].split(" — ", 1)[-1], "dim"))
        self.query_one("#quiz-count", Input).placeholder = str(DEFAULT_COUNT[mode])
        limit = time_limit_s(mode, DEFAULT_COUNT[mode])
        self.query_one("#quiz-minutes", Input).placeholder = "untimed" if limit is None else f"{limit / 60:g}"
