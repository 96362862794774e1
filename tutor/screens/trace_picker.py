"""A modal list of every trace, grouped by lecture section; Enter picks one."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option


class TracePicker(ModalScreen[str | None]):
    """Choose a trace; dismisses with its name (or None on Esc)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, current: str | None = None) -> None:
        super().__init__()
        self._current = current

    def compose(self) -> ComposeResult:
        from engine.traces import list_traces

        options: list[Option | None] = []
        section = None
        for info in list_traces():
            if info.section != section:
                if section is not None:
                    options.append(None)
                section = info.section
            options.append(Option(f"§{info.section:<2} [b]{info.name:<20}[/b] [dim]{info.title}[/dim]", id=info.name))
        with Vertical(id="picker-box"):
            yield Static("[b]Pick a worked example[/b]  [dim]Enter opens · Esc cancels[/dim]")
            yield OptionList(*options, id="picker-options")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        if self._current:
            try:
                options.highlighted = options.get_option_index(self._current)
            except Exception:  # noqa: BLE001 - an unknown current name just starts at the top
                pass
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
