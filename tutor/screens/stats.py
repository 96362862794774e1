"""Stats screen: due counts, mastery per topic, the daily average and mock-exam history."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from tutor.practice.progress import compute as practice_progress
from tutor.quiz.progress import compute
from tutor.render.stats import stats_renderable
from tutor.screens.handle import tutor_app
from tutor.store import StoreError


class StatsScreen(Screen):
    """Refreshes whenever it is shown."""

    BINDINGS = [Binding("r", "refresh_stats", "Refresh")]

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="stats-scroll"):
            yield Static(id="stats-body")
        yield Footer(compact=True)

    def on_screen_resume(self) -> None:
        self.action_refresh_stats()

    def action_refresh_stats(self) -> None:
        from tutor.quiz.bank import load_bank  # looked up per call: tests replace it

        store = tutor_app(self).store
        body = self.query_one("#stats-body", Static)
        try:
            self.data = compute(store, load_bank())
            self.data["practice"] = practice_progress(store)
        except StoreError as exc:  # e.g. another program holds the file locked
            body.update(Text(f"Progress cannot be read now: {exc}", style="red"))
            return
        body.update(stats_renderable(self.data))
        for notice in store.take_notices():  # rows left out of these figures
            self.notify(notice, severity="warning", timeout=10)
