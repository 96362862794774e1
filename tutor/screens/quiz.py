"""Quiz screen: choose a mode and topics, answer, see why, rate, and get a summary.

It drives :class:`tutor.quiz.session.QuizSession` exactly as the line mode does, so grading,
scheduling and saving are the same everywhere; this file only decides what is on screen
(the words themselves are :mod:`tutor.render.quiz`). Every answer is saved before its
feedback appears. Each key has one meaning here: the self-grades are letters (a/h/g/e),
because the number keys go to the areas on every screen.

Three panes of a :class:`~textual.widgets.ContentSwitcher`, each a small widget that posts
what the student did: :class:`~tutor.widgets.quiz_setup.QuizSetup` (``Start``),
:class:`~tutor.widgets.quiz_run.QuizRun` (``Answered``) and
:class:`~tutor.widgets.quiz_summary.QuizSummary`. The screen's :attr:`QuizScreen.state`
says which pane shows and which keys work.
"""

from __future__ import annotations

from typing import Literal

from textual.app import ComposeResult
from textual.binding import Binding
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import ContentSwitcher, Footer, Header

from tutor.errors import UserError
from tutor.marking import command_word, hint_line
from tutor.quiz import bank as quiz_bank
from tutor.quiz.modes import QuizStart, select, time_limit_s
from tutor.quiz.ratings import RATINGS
from tutor.quiz.session import Feedback, QuizSession, Summary
from tutor.render import quiz as words
from tutor.screens.confirm import Confirm
from tutor.screens.handle import tutor_app
from tutor.store import StoreError
from tutor.widgets.quiz_run import QuizRun
from tutor.widgets.quiz_setup import Choice, QuizSetup
from tutor.widgets.quiz_summary import QuizSummary

State = Literal["setup", "asking", "rating", "feedback", "summary"]

PANES: dict[str, str] = {"setup": "quiz-setup", "asking": "quiz-run", "rating": "quiz-run",
                         "feedback": "quiz-run", "summary": "quiz-summary-box"}
"""Which pane each state shows."""


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

    state: reactive[State] = reactive("setup", init=False, always_update=True)
    """setup | asking | rating | feedback | summary: the pane shown and the keys that work."""

    def __init__(self, start: QuizStart = QuizStart()) -> None:
        super().__init__()
        self.start_options = start
        self.seed = start.seed
        self.session: QuizSession | None = None
        self.summary: Summary | None = None
        self.feedback: Feedback | None = None
        self.answer = ""  # the last answer typed, kept on screen while it is graded
        self._timer: Timer | None = None

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield Header()
        with ContentSwitcher(initial="quiz-setup", id="quiz-panes"):
            yield QuizSetup(self.start_options, id="quiz-setup")
            yield QuizRun(id="quiz-run")
            yield QuizSummary(id="quiz-summary-box")
        yield Footer(compact=True)

    @property
    def setup_form(self) -> QuizSetup:
        return self.query_one(QuizSetup)

    @property
    def run(self) -> QuizRun:
        return self.query_one(QuizRun)

    def on_mount(self) -> None:
        self.watch_state(self.state)
        if self.start_options.autostart:
            self.start()

    def watch_state(self, state: State) -> None:
        self.query_one(ContentSwitcher).current = PANES[state]
        self.run.answering = state == "asking"
        if state == "setup":
            self.setup_form.focus_form()
        elif state == "summary":
            self.query_one(QuizSummary).focus()
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
            return (
                self.state == "summary"
                and self.summary is not None
                and self.summary.mode != "mock"
                and any(r.correct is False for r in self.summary.results)
            )
        return True

    # ------------------------------------------------------------------ setup
    def preset(self, topics: tuple[str, ...] = (), mode: str | None = None) -> None:
        """Tick ``topics`` and pick ``mode`` on the setup form (from a lesson's `z`)."""
        if self.state not in ("setup", "summary"):
            return
        self.setup_form.preset(topics, mode)
        self.state = "setup"

    def start(self) -> None:
        """Start a quiz as the setup form says (a wrong field is named on the form)."""
        choice = self.setup_form.read()
        if choice is not None:
            self._begin(choice)

    def on_quiz_setup_start(self, message: QuizSetup.Start) -> None:
        self._begin(message.choice)

    def _begin(self, choice: Choice) -> None:
        store = tutor_app(self).store
        try:
            selection = select(
                choice.mode,
                bank=quiz_bank.load_bank(),
                store=store,
                topics=set(choice.topics),
                count=choice.count,
                generated=choice.generated,
                seed=self.seed,
            )
        except (UserError, StoreError) as exc:  # StoreError: progress cannot be read now
            self.setup_form.show_error(exc)
            return
        if not selection.items:
            self.setup_form.show_error(selection.note or "Nothing to ask.")
            return
        self.setup_form.show_error("")
        limit = time_limit_s(choice.mode, len(selection.items), choice.minutes)
        self.session = QuizSession(selection.items, store=store, mode=choice.mode,
                                   seed=selection.seed, time_limit_s=limit)
        if selection.note:
            self.notify(selection.note)
        if limit is not None:
            self._timer = self.set_interval(1.0, self._tick)
        self._next_item()

    # ------------------------------------------------------------------ asking
    def _next_item(self) -> None:
        assert self.session is not None
        if self.session.next() is None:
            self._finish()
            return
        self.feedback = None
        self.run.clear()
        self._ask()
        self.state = "asking"

    def _ask(self) -> None:
        assert self.session is not None
        self.run.ask(words.question(self.session))
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
        self.run.status(words.status(s, left))

    def on_quiz_run_answered(self, message: QuizRun.Answered) -> None:
        if self.state != "asking" or self.session is None:
            return
        typed = message.typed
        command = command_word(typed)
        if command is not None:
            self.run.clear_answer()
            {"hint": self.action_hint, "skip": self.action_skip, "quit": self.action_end}[command]()
            return
        fb = self.session.submit(typed)
        if fb.expired:
            self._finish()
            return
        if not fb.valid:
            self.run.hint(fb.hint or "That is not an answer here; try again.")
            return
        self.run.clear_answer()
        self.run.hint("")
        self.answer = typed.strip()
        if fb.needs_rating:
            self.feedback = fb
            self.run.feedback(words.self_grading(fb, self.answer))
            self.state = "rating"
        elif fb.done:
            self.feedback = fb
            self.run.feedback(words.feedback(fb))
            self.state = "feedback"
        else:  # the next part of a multi-part problem
            self._ask()

    # ------------------------------------------------------------------ actions
    def action_hint(self) -> None:
        if self.session and self.session.current:
            self.run.hint(hint_line(self.session.current.hint))

    def action_skip(self) -> None:
        if self.session:
            self.session.skip()
            self._next_item()

    def action_rate(self, rating: int) -> None:
        if self.session is None:
            return
        fb = self.feedback = self.session.rate(rating)
        self.run.feedback(words.feedback(fb, self.answer))
        self.state = "feedback"

    def action_next(self) -> None:
        if self.state == "feedback":
            self._next_item()
        elif self.state == "summary":
            self.state = "setup"

    def action_end(self) -> None:
        """End now; a mock exam asks first (what is unanswered counts as wrong)."""
        if not self.session:
            return
        if self.session.mode != "mock":
            self._finish("stopped")
            return
        def answered(yes: bool | None) -> None:
            if yes and self.session is not None:
                self._finish("stopped")

        self.app.push_screen(Confirm("Hand in the mock exam now? Questions you have not answered "
                                     "count as wrong.", "Hand in", "Keep going"), answered)

    def action_open_trace(self) -> None:
        link = self.feedback.trace if self.feedback else None
        if link is not None:
            tutor_app(self).open_trace(link.name, dict(link.inputs))

    def action_retry(self) -> None:
        """Start "Retry incorrect" on the same topics straight from the summary."""
        self.preset(self.setup_form.topics, "retry")
        self.start()

    # ------------------------------------------------------------------ the end
    def _finish(self, status: str | None = None) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self.session is None:
            return
        self.summary = self.session.finish(status)
        self.query_one(QuizSummary).show(words.summary(self.summary))
        self.session = None
        self.state = "summary"
