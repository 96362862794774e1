"""Quiz screen: choose a mode and topics, answer, see why, rate, and get a summary.

It drives :class:`tutor.quiz.session.QuizSession` exactly as the line mode does, so grading,
scheduling and saving are the same everywhere; this file only decides what is on screen.
Every answer is saved before its feedback appears.
"""

from __future__ import annotations

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Checkbox, Footer, Header, Input, Label, OptionList, SelectionList, Static
from textual.widgets.option_list import Option

from tutor.quiz.modes import MODE_TITLES, QuizStart
from tutor.quiz.session import RATINGS, command_word, hint_line
from tutor.render.numbers import clock, percent, tally

QUIZ_MODES = tuple(MODE_TITLES.items())


class QuizScreen(Screen):
    """Setup → questions → summary, in one screen."""

    BINDINGS = [
        Binding("ctrl+g", "hint", "Hint"),
        Binding("ctrl+n", "skip", "Skip"),
        Binding("escape", "end", "End quiz"),
        Binding("enter", "next", "Next", show=False),
        Binding("t", "open_trace", "Open trace", show=False),
        *(Binding(str(k), f"rate({k})", v, show=False) for k, v in RATINGS.items()),
    ]

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
        self.state = "setup"
        self.feedback = None
        self._timer = None

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        from tutor.content import EXAM_TOPICS, load_lessons

        yield Header()
        with Horizontal(id="quiz-setup"):
            with Vertical(id="quiz-setup-left"):
                yield Label("[b]Mode[/b]")
                yield OptionList(*(Option(text, id=mode) for mode, text in QUIZ_MODES), id="quiz-modes")
                yield Label("[b]How many[/b] [dim](empty = the mode's default)[/dim]")
                yield Input("" if self.preset_count is None else str(self.preset_count), placeholder="10",
                            id="quiz-count", type="integer")
                yield Label("[b]Time limit, minutes[/b] [dim](mock exams; empty = 2 per question)[/dim]")
                yield Input("" if self.preset_minutes is None else f"{self.preset_minutes:g}", id="quiz-minutes",
                            type="number")
                yield Checkbox("Include generated numeric problems", self.preset_generated, id="quiz-generated")
                yield Static("", id="quiz-setup-error", classes="field-error")
                yield Button("Start", variant="primary", id="quiz-start")
            with Vertical(id="quiz-setup-right"):
                yield Label("[b]Topics[/b] [dim](none ticked = everything)[/dim]")
                yield SelectionList(
                    *((f"§{l.section} {l.title}", l.id, l.id in self.preset_topics) for l in load_lessons()),
                    *((t.removeprefix("exam-").replace("-", " ") + " (exam topic)", t, t in self.preset_topics)
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
        yield Footer()

    def on_mount(self) -> None:
        modes = self.query_one("#quiz-modes", OptionList)
        modes.highlighted = next(i for i, (m, _) in enumerate(QUIZ_MODES) if m == self.preset_mode)
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
        else:
            self.query_one("#quiz-question-box").focus()
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "rate":
            return self.state == "rating"
        if action in ("next", "open_trace"):
            return self.state in ("feedback", "summary") if action == "next" else self.state == "feedback"
        if action in ("hint", "skip"):
            return self.state == "asking"
        if action == "end":
            return self.state in ("asking", "rating", "feedback")
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

    def start(self) -> None:
        from rich.text import Text

        from tutor.errors import UserError
        from tutor.quiz.bank import load_bank
        from tutor.quiz.modes import select
        from tutor.quiz.session import QuizSession
        from tutor.store import StoreError

        error = self.query_one("#quiz-setup-error", Static)
        modes = self.query_one("#quiz-modes", OptionList)
        mode = QUIZ_MODES[modes.highlighted or 0][0]
        count_text = self.query_one("#quiz-count", Input).value.strip()
        minutes_text = self.query_one("#quiz-minutes", Input).value.strip()
        try:
            count = int(count_text) if count_text else None
            minutes = float(minutes_text) if minutes_text else None
        except ValueError:
            error.update("How many: a whole number; time limit: minutes, e.g. 10 or 2.5")
            return
        if minutes is not None and minutes <= 0:
            error.update("Time limit: expected minutes > 0")
            return
        topics = set(self.query_one("#quiz-topics", SelectionList).selected)
        generated = self.query_one("#quiz-generated", Checkbox).value
        try:
            selection = select(mode, bank=load_bank(), store=self.app.store, topics=topics,  # type: ignore[attr-defined]
                               count=count, generated=generated, seed=self.seed)
        except (UserError, StoreError) as exc:  # StoreError: progress cannot be read now
            error.update(Text(str(exc)))
            return
        if not selection.items:
            error.update(selection.note or "Nothing to ask.")
            return
        error.update("")
        from tutor.quiz.modes import time_limit_s

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
        from rich.console import Group
        from rich.text import Text

        s = self.session
        item = s.current
        ask = s.ask
        parts = [Text(item.setup)]
        if len(item.asks) > 1:
            parts.append(Text(f"\nPart {s.part + 1} of {len(item.asks)}", style="bold"))
        if ask.prompt:
            parts.append(Text("\n" + ask.prompt))
        if ask.choices:
            parts.append(Text("\n" + "\n".join(ask.choices)))
        if ask.instructions:
            parts.append(Text("\n" + ask.instructions, style="dim"))
        self.query_one("#quiz-question", Static).update(Group(*parts))
        self.query_one("#quiz-hint", Static).update("")
        self._tick()

    def _tick(self) -> None:
        s = self.session
        if s is None or s.current is None:
            return
        n, total = s.position
        title = f" · {s.current.title}" if s.current.title else ""
        bits = [f"[b]{n}/{total}[/b]", s.mode, f"§ {s.current.section}{title}"]
        left = s.time_left()
        if left is not None:
            style = "bold red" if left < 60 else "bold"
            bits.append(f"[{style}]⏱ {clock(left)} left[/]")
            if s.expired and self.state in ("asking", "rating", "feedback"):
                self.notify("Time is up: the exam is submitted with the answers you gave.")
                self._finish()
                return
        self.query_one("#quiz-status", Static).update(" · ".join(bits))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "quiz-answer" or self.state != "asking":
            return
        text = event.value
        command = command_word(text)
        if command is not None:
            event.input.value = ""
            {"hint": self.action_hint, "skip": self.action_skip, "quit": self.action_end}[command]()
            return
        fb = self.session.submit(text)
        if fb.expired:
            self._finish()
            return
        if not fb.valid:
            self.query_one("#quiz-hint", Static).update(fb.hint or "That is not an answer here; try again.")
            return
        event.input.value = ""
        self.query_one("#quiz-hint", Static).update("")
        if fb.needs_rating:
            self.feedback = fb
            self._render_feedback(fb, rating=True)
            self._show("rating")
        elif fb.done:
            self.feedback = fb
            self._render_feedback(fb)
            self._show("feedback")
        else:  # the next part of a multi-part problem
            self._render_question()

    def _render_feedback(self, fb, rating: bool = False) -> None:
        lines: list[str] = []
        if rating:
            lines.append("[b]Model answer[/b]")
            lines += [f"  {e}" for e in fb.expected]
            if fb.key_points:
                lines.append("[b]Key points[/b]")
                lines += [f"  • {k}" for k in fb.key_points]
            lines.append("\nGrade yourself: [b]1[/b] Again · [b]2[/b] Hard · [b]3[/b] Good · [b]4[/b] Easy")
        else:
            if not fb.saved:
                lines.append(f"[red][b]Not saved:[/b] {escape(fb.error or '')}[/red]")
            if not fb.reveal:
                lines.append(("[b]Recorded.[/b] " if fb.saved else "")
                             + "[dim]Mock exam: results at the end.[/dim]")
            elif fb.correct is None:
                lines.append(f"[b]{'Saved' if fb.saved else 'Rated'}[/b] as "
                             f"{RATINGS.get(fb.rating or 0, '')}.")
            elif fb.correct:
                lines.append("[green][b]✓ Correct.[/b][/green]")
            else:
                lines.append("[red][b]✗ Not quite.[/b][/red] Expected: " + " | ".join(fb.expected))
                lines += [f"[yellow]{escape(v.why_wrong)}[/yellow]" for v in fb.verdicts if v.why_wrong]
            if fb.reveal:
                lines += ["", *fb.explanation]
                if fb.trace_command:
                    lines.append(f"\n[dim]Worked through, step by step (t):[/dim] {fb.trace_command}")
            if fb.due is not None:
                lines.append(f"[dim]Next review: {fb.due.astimezone():%a %d %b %H:%M}[/dim]")
            lines.append("\n[dim]Enter: next question[/dim]")
        self.query_one("#quiz-feedback", Static).update("\n".join(lines))

    # ------------------------------------------------------------------ actions
    def action_hint(self) -> None:
        if self.session and self.session.current:
            self.query_one("#quiz-hint", Static).update(hint_line(self.session.current.hint))

    def action_skip(self) -> None:
        if self.session:
            self.session.skip()
            self._next_item()

    def action_rate(self, rating: int) -> None:
        fb = self.session.rate(rating)
        self.feedback = fb
        self._render_feedback(fb)
        self._show("feedback")

    def action_next(self) -> None:
        if self.state == "feedback":
            self._next_item()
        elif self.state == "summary":
            self._show("setup")

    def action_end(self) -> None:
        if self.session:
            self._finish("stopped")

    def action_open_trace(self) -> None:
        link = self.feedback.trace if self.feedback else None
        if link is not None:
            self.app.open_trace(link.name, dict(link.inputs))  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ the end
    def _finish(self, status: str | None = None) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        summary = self.session.finish(status)
        self.query_one("#quiz-summary", Static).update(summary_text(summary))
        self.session = None
        self._show("summary")


def summary_text(summary) -> str:
    """The end-of-quiz report (score, per topic, what was not saved)."""
    lines = [f"[b]{summary.mode.capitalize()} finished[/b] ({summary.status}) in {clock(summary.seconds)}"]
    if summary.mode == "mock":
        total = sum(t for _, t in summary.exam_per_topic.values())
        right = sum(c for c, _ in summary.exam_per_topic.values())
        lines.append(f"Score: [b]{right}/{total}[/b] ({percent(right / total if total else 0.0)}) "
                     "— unanswered questions count as wrong")
        per_topic = summary.exam_per_topic
    else:
        lines.append(f"Answered {summary.answered} of {summary.total}; {summary.correct} of {summary.graded} auto-graded correct"
                     + (f"; skipped {summary.skipped}" if summary.skipped else ""))
        per_topic = summary.per_topic()
    if per_topic:
        lines.append("")
        for topic, (right, total) in sorted(per_topic.items(), key=lambda kv: kv[1][0] / max(kv[1][1], 1)):
            lines.append(f"  {topic:<18} {right}/{total}  {tally(right, total)}")
    wrong = [r for r in summary.results if r.correct is False]
    if wrong and summary.mode != "mock":
        lines += ["", "[b]To look at again[/b] (quiz --mode retry asks them):"]
        lines += [f"  {r.question_id}: you said {r.response!r}, expected {' | '.join(r.expected)}" for r in wrong]
    if summary.mode == "mock":
        for r in summary.results:
            mark = "✓" if r.correct else "✗"
            lines.append(f"  {mark} {r.question_id}" + ("" if r.correct else f": expected {' | '.join(r.expected)}"))
    if summary.unsaved:
        lines.append(f"[red]{summary.unsaved} answer(s) could not be saved.[/red]")
    lines.append("\n[dim]Enter: a new quiz[/dim]")
    return "\n".join(lines)
