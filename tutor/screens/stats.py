"""Stats screen: due counts, mastery per topic, the daily average and mock-exam history."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.0f}%"


def _bar(x: float | None, width: int = 10) -> str:
    if x is None:
        return "·" * width
    full = round(x * width)
    return "█" * full + "░" * (width - full)


def stats_renderable(data: dict[str, Any]):
    """The stats as Rich tables (the same numbers as ``attn-tutor stats --json``)."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    d = data["due"]
    head = Text.from_markup(
        f"[b]Due now: {d['now']}[/b]   due in the next 24 h: {d['next_24h']}   "
        f"seen {d['seen']} of {d['total']} questions"
    )
    tables = []
    for rows, title in ((data["topics"], "Lesson topics"), (data["exam_topics"], "Exam topics")):
        table = Table(title=title, title_justify="left", box=None, pad_edge=False, padding=(0, 1))
        table.add_column("topic")
        table.add_column("seen", justify="right")
        table.add_column("accuracy", justify="right")
        table.add_column("mastery")
        table.add_column("due", justify="right")
        for r in rows:
            table.add_row(r["id"], f"{r['seen']}/{r['questions']}", _pct(r["accuracy"]),
                          f"{_bar(r['mastery'])} {_pct(r['mastery'])}", str(r["due"]))
        tables.append(table)
    daily = data["daily"]
    days = " ".join(str(x["answers"]) for x in daily["days"])
    goal = Text.from_markup(
        f"[b]Daily goal[/b]: {daily['average']:g} answers/day over the last {daily['window_days']} days "
        f"(goal {daily['goal']}, {'on target' if daily['met'] else 'below target'}) · oldest first: {days}"
    )
    mocks = Table(title="Mock exams", title_justify="left", box=None, pad_edge=False, padding=(0, 1))
    for col in ("when", "score", "answered", "status"):
        mocks.add_column(col)
    for m in data["mock_exams"][-10:]:
        mocks.add_row(m["started_at"][:16].replace("T", " "), f"{m['correct']}/{m['questions']} ({_pct(m['score'])})",
                      str(m["answered"]), m["status"])
    if not data["mock_exams"]:
        mocks.add_row("none yet", "", "", "")
    note = Text("Mastery = mean recall probability now (FSRS), unseen questions counting 0.", style="dim")
    return Group(head, Text(""), *tables, Text(""), goal, Text(""), mocks, Text(""), note)


class StatsScreen(Screen):
    """Refreshes whenever it is shown."""

    BINDINGS = [Binding("r", "refresh_stats", "Refresh")]

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="stats-scroll"):
            yield Static(id="stats-body")
        yield Footer()

    def on_screen_resume(self) -> None:
        self.action_refresh_stats()

    def action_refresh_stats(self) -> None:
        from tutor.quiz.bank import load_bank
        from tutor.quiz.progress import compute
        from tutor.store import StoreError

        store = self.app.store  # type: ignore[attr-defined]
        body = self.query_one("#stats-body", Static)
        try:
            self.data = compute(store, load_bank())
        except StoreError as exc:  # e.g. another program holds the file locked
            body.update(Text(f"Progress cannot be read now: {exc}", style="red"))
            return
        body.update(stats_renderable(self.data))
        for notice in store.take_notices():  # rows left out of these figures
            self.notify(notice, severity="warning", timeout=10)
