"""The plan tab: set the exam date and daily minutes, see the day-by-day plan."""

from __future__ import annotations

from datetime import date

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Label, Static

from tutor.exam.plan import PlanError, plan_from_store, render_text, save_exam, saved_exam
from tutor.render.safe import text
from tutor.screens.handle import tutor_app
from tutor.store.papers import attempted_questions


class PlanPanel(Vertical):
    """Shows the plan for the remembered exam date; Plan saves a new date and re-plans."""

    def compose(self) -> ComposeResult:
        with Horizontal(classes="paper-row"):
            yield Label("Exam date ")
            yield Input(placeholder="YYYY-MM-DD", id="plan-date")
            yield Label("  Minutes a day ")
            yield Input("60", id="plan-minutes", type="integer")
            yield Button("Plan", variant="primary", id="plan-make")
        yield Static("", id="plan-error", classes="field-error")
        with VerticalScroll(id="plan-scroll"):
            yield Static(id="plan-body")

    def on_mount(self) -> None:
        saved = saved_exam(tutor_app(self).store)
        if saved:
            self.query_one("#plan-date", Input).value = saved[0].isoformat()
            self.query_one("#plan-minutes", Input).value = str(saved[1])
            self.show(save=False)
        else:
            self.query_one("#plan-body", Static).update(Text(
                "Type your exam date and the minutes you can give each day, then Plan."))

    def on_show(self) -> None:
        """The Plan tab opened: the keys go to the date field (else a typed date's digits
        would switch areas)."""
        self.call_after_refresh(self.query_one("#plan-date", Input).focus)  # after the paper's

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "plan-make":
            event.stop()
            self.show(save=True)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id in ("plan-date", "plan-minutes"):
            event.stop()
            self.show(save=True)

    def show(self, save: bool) -> None:
        error = self.query_one("#plan-error", Static)
        try:
            exam = date.fromisoformat(self.query_one("#plan-date", Input).value.strip())
        except ValueError:
            error.update(Text("Exam date: type it as YYYY-MM-DD, e.g. 2027-06-01."))
            return
        try:
            minutes = int(self.query_one("#plan-minutes", Input).value or 60)
            store = tutor_app(self).store
            plan = plan_from_store(store, exam, date.today(), minutes,
                                   attempted=attempted_questions(store))
        except (PlanError, ValueError) as exc:
            error.update(text(exc))
            return
        error.update("")
        if save and store.persistent:
            save_exam(store, exam, minutes)
        self.query_one("#plan-body", Static).update(Text("\n".join(render_text(plan, commands=False))))
        if save:  # planned: the keys go to reading it (arrows scroll, digits switch areas again)
            self.query_one("#plan-scroll", VerticalScroll).focus()
