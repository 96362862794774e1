"""`?`: the keys of the screen you came from."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static


class HelpScreen(ModalScreen[None]):
    """A modal listing every key binding active on the previous screen, plus the global ones."""

    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close", show=True)]

    def __init__(self, title: str, rows: list[tuple[str, str]]) -> None:
        super().__init__()
        self._title = title
        self._rows = rows

    def compose(self) -> ComposeResult:
        from rich.table import Table

        table = Table(box=None, show_header=False, padding=(0, 2))
        table.add_column(style="bold")
        table.add_column()
        for key, description in self._rows:
            table.add_row(key, description)
        with Vertical(id="help-box"):
            yield Static(f"[b]{self._title}[/b] — keys", id="help-title")
            yield Static(table, id="help-table")
            yield Static("[dim]Esc or ? closes this. Ctrl+P opens the command palette.[/dim]")

    def action_dismiss(self) -> None:
        self.dismiss(None)
