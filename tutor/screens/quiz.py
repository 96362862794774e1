"""Quiz screen: choose a mode and topics, answer, see why, rate, and get a summary.

It drives :class:`tutor.quiz.session.QuizSession` exactly as the line mode does, so grading,
scheduling and saving are the same everywhere; this file only decides what is on screen
(the words themselves are :mod:`tutor.render.quiz`). Every answer is saved before its
feedback appears. Each key has one meaning here: the self-grades are letters (a/h/g/e),
because the number keys go to the areas on every screen.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Checkbox, Footer, Header, Input, Label, OptionList, SelectionList, Static
from textual.widgets.option_list import Option

from tutor.marking import command_word, hint_line
from tutor.quiz.modes import MODE_TITLES, QuizStart, check_minutes, mode_name
from tutor.quiz.ratings import RATINGS
from tutor.render import quiz as words
from tutor.render.safe import text

QUIZ_MODES = tuple(MODE_TITLES.items())


class QuizScreen(Screen):
    """Setup → questions → summary, in one screen."""

    BINDINGS = [
        Binding("ctrl+g", "hint", "Hint"),
        Binding("ctrl+n", "skip", "Skip"),
        Binding("escape", "end", "End quiz"),
        Binding("enter", "next", "Next"),
        Binding("t", "open_trace", "Worked example"),
        *(Binding(key, f"rate({rating})", RATINGS[rating]) for key, rating in words.RATING_KEYS.items()),
        Binding("r", "retry", "Retry wrong ones"),
    ]
    HELP_WORDS = {"rate": "Grade a free-text answer: a Again · h Hard · g Good · e Easy"}

    def __init__(self, start: QuizStart = QuizStart()) -> None:
        super().__init__()
        self.preset_topics = tuple(start.topics)
        self.preset_mode = start.mode
        self.preset_count = start.count
        self.preset_minutes = start.minutes
        self.seed = start.seed
        self.preset_generated = start.generated
        self.autostart = start.autostart
        self.session = None
        self.summary = None
        self.state = "setup"
        self.feedback = None
        self.answer = ""  # the last answer typed, kept on screen while it is graded
        self._timer = None

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        from tutor.content import EXAM_TOPICS, load_lessons

        yield Header()
        with Horizontal(id="quiz-setup"):
            with Vertical(id="quiz-setup-left"):
                yield Label("[b]Mode[/b]")
                yield OptionList(*(Option(text(mode_name(mode)), id=mode) for mode, _ in QUIZ_MODES), id="quiz-modes")
                yield Static(id="quiz-mode-about")
                with Horizontal(id="quiz-numbers"):
                    with Vertical():
                        yield Label("[b]How many[/b]")
                        yield Input("" if self.preset_count is None else str(self.preset_count),
                                    id="quiz-count", type="integer", tooltip="Empty: the mode's default")
                    with Vertical():
                        yield Label("[b]Minutes[/b]")
                        yield Input("" if self.preset_minutes is None else f"{self.preset_minutes:g}",
                                    id="quiz-minutes", type="number",
                                    tooltip="Mock exams only; empty: 2 minutes a question")
                yield Checkbox("Numeric problems", self.preset_generated, id="quiz-generated",
                               tooltip="Include problems the engine generates with fresh numbers, "
                                       "each with its worked solution")
                yield Static("", id="quiz-setup-error", classes="field-error")
                yield Button("Start", variant="primary", id="quiz-start")
            with Vertical(id="quiz-setup-right"):
                yield Label("[b]Topics[/b] [dim](none ticked = everything)[/dim]")
                yield SelectionList(
                    *((text(f"§{l.section} {l.title}"), l.id, l.id in self.preset_topics) for l in load_lessons()),
                    *((text(t.removeprefix("exam-").replace("-", " ") + " (exam topic)"), t, t in self.preset_topics)
                      for t in EXAM_TOPICS),
                    id="quiz-topics",
                )
        with Vertical(id="quiz-run"):
            yield Static(id="quiz-status")
            with VerticalScroll(id="quiz-question-box"):
                yield Static(id="quiz-question")
                yield Static(id="quiz-feedback")
            yield Static("", id="quiz-hint", classes="field-error")
            yield Input(placeholder="your answer, then Enter", id="quiz-answer")
        with VerticalScroll(id="quiz-summary-box"):
            yield Static(id="quiz-summary")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        modes = self.query_one("#quiz-modes", OptionList)
        modes.highlighted = next(i for i, (m, _) in enumerate(QUIZ_MODES) if m == self.preset_mode)
        self._describe_mode(self.preset_mode)
        self._show("setup")
        if self.autostart:
            self.start()

    def _show(self, state: str) -> None:
        self.state = state
        self.query_one("#quiz-setup").display = state == "setup"
        self.query_one("#quiz-run").display = state in ("asking", "rating", "feedback")
        self.query_one("#quiz-summary-box").display = state == "summary"
        answer = self.query_one("#quiz-answer", Input)
        answer.display = state == "asking"
        if state == "asking":
            answer.focus()
        elif state == "setup":
            self.query_one("#quiz-modes").focus()
        elif state == "summary":
            self.query_one("#quiz-summary-box").focus()
        else:
            self.query_one("#quiz-question-box").focus()
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Each key shows (and works) only in the states where it means something."""
        if action == "rate":
            return self.state == "rating"
        if action == "next":
            return self.state in ("feedback", "summary")
        if action == "open_trace":
            return self.state == "feedback" and self.feedback is not None and self.feedback.trace is not None
        if action in ("hint", "skip"):
            return self.state == "asking"
        if action == "end":
            return self.state in ("asking", "rating", "feedback")
        if action == "retry":
            return self.state == "summary" and self.summary is not None and self.summary.mode != "mock" and any(
                r.correct is False for r in self.summary.results)
        return True

    # ------------------------------------------------------------------ setup
    def preset(self, topics: tuple[str, ...] = (), mode: str | None = None) -> None:
        """Tick ``topics`` and pick ``mode`` on the setup form (from a lesson's `z`)."""
        if self.state not in ("setup", "summary"):
            return
        chooser = self.query_one("#quiz-topics", SelectionList)
        chooser.deselect_all()
        for topic in topics:
            chooser.select(topic)
        if mode:
            self.query_one("#quiz-modes", OptionList).highlighted = [m for m, _ in QUIZ_MODES].index(mode)
        self._show("setup")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "quiz-start":
            self.start()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_list.id == "quiz-modes":
            self.start()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id == "quiz-modes" and event.option.id:
            self._describe_mode(event.option.id)

    def _describe_mode(self, mode: str) -> None:
        """The mode's line under the list; its defaults as the fields' placeholders."""
        from tutor.quiz.modes import DEFAULT_COUNT, time_limit_s

        self.query_one("#quiz-mode-about", Static).update(text(MODE_TITLES[mode].split(" — ", 1)[-1], "dim"))
        self.query_one("#quiz-count", Input).placeholder = str(DEFAULT_COUNT[mode])
        limit = time_limit_s(mode, DEFAULT_COUNT[mode])
        self.query_one("#quiz-minutes", Input).placeholder = "untimed" if limit is None else f"{limit / 60:g}"

    def start(self) -> None:
        from tutor.errors import UserError
        from tutor.quiz.bank import load_bank
        from tutor.quiz.modes import select, time_limit_s
        from tutor.quiz.session import QuizSession
        from tutor.store import StoreError

        error = self.query_one("#quiz-setup-error", Static)
        mode = QUIZ_MODES[self.query_one("#quiz-modes", OptionList).highlighted or 0][0]
        count_text = self.query_one("#quiz-count", Input).value.strip()
        minutes_text = self.query_one("#quiz-minutes", Input).value.strip()
        try:
            count = int(count_text) if count_text else None
            minutes = float(minutes_text) if minutes_text else None
        except ValueError:
            error.update("How many: a whole number; minutes: e.g. 10 or 2.5")
            return
        try:
            check_minutes(minutes)  # inf, NaN, negative or over ten hours
        except UserError as exc:
            error.update(text(f"Minutes: {exc}"))
            return
        topics = set(self.query_one("#quiz-topics", SelectionList).selected)
        generated = self.query_one("#quiz-generated", Checkbox).value
        try:
            selection = select(mode, bank=load_bank(), store=self.app.store, topics=topics,  # type: ignore[attr-defined]
                               count=count, generated=generated, seed=self.seed)
        except (UserError, StoreError) as exc:  # StoreError: progress cannot be read now
            error.update(text(exc))
            return
        if not selection.items:
            error.update(text(selection.note or "Nothing to ask."))
            return
        error.update("")
        limit = time_limit_s(mode, len(selection.items), minutes)
        self.session = QuizSession(selection.items, store=self.app.store, mode=mode,  # type: ignore[attr-defined]
                                   seed=selection.seed, time_limit_s=limit)
        if selection.note:
            self.notify(selection.note)
        if limit is not None:
            self._timer = self.set_interval(1.0, self._tick)
        self._next_item()

    # ------------------------------------------------------------------ asking
    def _next_item(self) -> None:
        item = self.session.next()
        if item is None:
            self._finish()
            return
        self.feedback = None
        self.query_one("#quiz-feedback", Static).update("")
        self.query_one("#quiz-answer", Input).value = ""
        self._render_question()
        self._show("asking")

    def _render_question(self) -> None:
        self.query_one("#quiz-question", Static).update(words.question(self.session))
        self.query_one("#quiz-hint", Static).update("")
        self._tick()

    def _tick(self) -> None:
        s = self.session
        if s is None or s.current is None:
            return
        left = s.time_left()
        if left is not None and s.expired and self.state in ("asking", "rating", "feedback"):
            self.notify("Time is up: the exam is submitted with the answers you gave.")
            self._finish()
            return
        self.query_one("#quiz-status", Static).update(words.status(s, left))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "quiz-answer" or self.state != "asking":
            return
        typed = event.value
        command = command_word(typed)
        if command is not None:
            event.input.value = ""
            {"hint": self.action_hint, "skip": self.action_skip, "quit": self.action_end}[command]()
            return
        fb = self.session.submit(typed)
        if fb.expired:
            self._finish()
            return
        hint = self.query_one("#quiz-hint", Static)
        if not fb.valid:
            hint.update(text(fb.hint or "That is not an answer here; try again."))
            return
        event.input.value = ""
        hint.update("")
        self.answer = typed.strip()
        feedback = self.query_one("#quiz-feedback", Static)
        if fb.needs_rating:
            self.feedback = fb
            feedback.update(words.self_grading(fb, self.answer))
            self._show("rating")
            self._scroll_to_feedback()
        elif fb.done:
            self.feedback = fb
            feedback.update(words.feedback(fb))
            self._show("feedback")
            self._scroll_to_feedback()
        else:  # the next part of a multi-part problem
            self._render_question()

    def _scroll_to_feedback(self) -> None:
        """Bring what just appeared (below a long question) into view."""
        box = self.query_one("#quiz-question-box", VerticalScroll)
        feedback = self.query_one("#quiz-feedback", Static)
        # after the next layout (the answer field has just been hidden): then its place is known
        self.call_after_refresh(lambda: self.call_after_refresh(
            lambda: box.scroll_to_widget(feedback, animate=False, top=True)))

    # ------------------------------------------------------------------ actions
    def action_hint(self) -> None:
        if self.session and self.session.current:
            self.query_one("#quiz-hint", Static).update(text(hint_line(self.session.current.hint)))

    def action_skip(self) -> None:
        if self.session:
            self.session.skip()
            self._next_item()

    def action_rate(self, rating: int) -> None:
        fb = self.feedback = self.session.rate(rating)
        self.query_one("#quiz-feedback", Static).update(words.feedback(fb, self.answer))
        self._show("feedback")
        self._scroll_to_feedback()

    def action_next(self) -> None:
        if self.state == "feedback":
            self._next_item()
        elif self.state == "summary":
            self._show("setup")

    def action_end(self) -> None:
        """End now; a mock exam asks first (what is unanswered counts as wrong)."""
        if not self.session:
            return
        if self.session.mode != "mock":
            self._finish("stopped")
            return
        from tutor.screens.confirm import Confirm

        def answered(yes: bool | None) -> None:
            if yes and self.session is not None:
                self._finish("stopped")

        self.app.push_screen(Confirm("Hand in the mock exam now? Questions you have not answered "
                                     "count as wrong.", "Hand in", "Keep going"), answered)

    def action_open_trace(self) -> None:
        link = self.feedback.trace if self.feedback else None
        if link is not None:
            self.app.open_trace(link.name, dict(link.inputs))  # type: ignore[attr-defined]

    def action_retry(self) -> None:
        """Start "Retry incorrect" on the same topics straight from the summary."""
        self.preset(tuple(self.query_one("#quiz-topics", SelectionList).selected), "retry")
        self.start()

    # ------------------------------------------------------------------ the end
    def _finish(self, status: str | None = None) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.summary = self.session.finish(status)
        self.query_one("#quiz-summary", Static).update(words.summary(self.summary))
        self.session = None
        self._show("summary")
