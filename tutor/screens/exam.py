"""Exam screen: a timed paper, the formula sheet and the plan to the exam date, one tab each."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static, TabbedContent, TabPane

from tutor.exam.paper import ExamStart
from tutor.exam.sheet import render_plain
from tutor.widgets.paper_panel import PaperPanel
from tutor.widgets.plan_panel import PlanPanel

TABS = ("exam-paper", "exam-sheet", "exam-plan")


class ExamScreen(Screen):
    """``start`` presets the paper (``attn-tutor paper -q ID`` on a terminal) and the tab."""

    BINDINGS = [
        Binding("ctrl+s", "submit", "Submit"),
        # f1 is help on every screen (also while typing), so the tabs start at f2
        Binding("f2", "tab('exam-paper')", "Paper"),
        Binding("f3", "tab('exam-sheet')", "Sheet"),
        Binding("f4", "tab('exam-plan')", "Plan"),
    ]

    def __init__(self, start: ExamStart = ExamStart()) -> None:
        super().__init__()
        self.question_ids = tuple(start.questions)
        self.initial_tab = start.tab if start.tab in TABS else "exam-paper"
        self.minutes = start.minutes

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(initial=self.initial_tab, id="exam-tabs"):
            with TabPane("Paper", id="exam-paper"):
                yield PaperPanel(self.question_ids, minutes=self.minutes, id="paper-panel")
            with TabPane("Formula sheet", id="exam-sheet"):
                with VerticalScroll(id="sheet-scroll"):
                    yield Static(Text(render_plain(width=76)), id="sheet-body")  # fits 80 columns
            with TabPane("Plan", id="exam-plan"):
                yield PlanPanel(id="plan-panel")
        yield Footer(compact=True)

    def action_tab(self, tab: str) -> None:
        self.show_tab(tab)

    def show_tab(self, tab: str) -> None:
        """Open one of :data:`TABS` (the app calls this for the sheet and plan entries)."""
        if tab not in TABS:
            return
        self.initial_tab = tab
        if self.focused is not None and tab != "exam-paper":  # a focused answer box would pull its tab back
            self.set_focus(None)

        def activate() -> None:  # after the tabs' own first activation, which picks `initial`
            self.query_one("#exam-tabs", TabbedContent).active = tab

        activate()
        self.call_after_refresh(activate)
        if tab == "exam-paper" and self.query(PaperPanel):
            self.call_after_refresh(self.query_one(PaperPanel).focus_current)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Submit is offered only while a part is being answered or ticked, not on setup or results."""
        if action == "submit":
            panels = self.query(PaperPanel)
            return bool(panels) and panels.first().state in ("answer", "tick")
        return True

    def action_submit(self) -> None:
        self.query_one(PaperPanel).submit()
