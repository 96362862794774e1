"""A modal list of every trace, grouped by lecture section, filtered as you type; Enter picks."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from tutor.practice.progress import levels
from tutor.render.safe import assemble


def matches(query: str, *fields: str) -> bool:
    """Every word of ``query`` appears in one of ``fields`` (case-insensitive)."""
    haystack = " ".join(fields).lower()
    return all(word in haystack for word in query.lower().split())


class TracePicker(ModalScreen[str | None]):
    """Choose a trace; dismisses with its name (or None on Esc)."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("down", "move(1)", "Next match", show=False),
        Binding("up", "move(-1)", "Previous match", show=False),
    ]

    def __init__(self, current: str | None = None) -> None:
        super().__init__()
        self._current = current
        from engine.traces import list_traces  # deferred: loads numpy (start-up time)

        self._traces = list_traces()
        self._levels: dict[str, tuple[int, int]] = {}

    def compose(self) -> ComposeResult:
        with Vertical(id="picker-box"):
            yield Static(assemble(("Pick a worked example", "bold"),
                                  ("  type to filter · ↑↓ · Enter opens · Esc cancels", "dim")))
            yield Input(
                placeholder="filter: a name, words of a title, or a section like 10", id="picker-filter"
            )
            yield OptionList(id="picker-options")

    def on_mount(self) -> None:
        self._levels = _practice_levels(self.app)
        self._fill("")
        options = self.query_one(OptionList)
        if self._current:
            try:
                options.highlighted = options.get_option_index(self._current)
            except Exception:  # noqa: BLE001 - an unknown current name just starts at the top
                pass
        self.query_one(Input).focus()

    def _fill(self, query: str) -> None:
        options = self.query_one(OptionList)
        options.clear_options()
        section = None
        for info in self._traces:
            if not matches(
                query, info.name, info.title, info.description, f"§{info.section}", str(info.section)
            ):
                continue
            if section is not None and info.section != section:
                options.add_option(None)
            section = info.section
            level = self._levels.get(info.name)
            practice = (f"level {level[0]}/{level[1]} ", "cyan") if level else ("", "")
            options.add_option(Option(assemble(f"§{info.section:<2} ", (f"{info.name:<20}", "bold"), " ",
                                               practice, (info.title, "dim")), id=info.name))
        if options.option_count:
            options.highlighted = 0
        else:
            options.add_option(
                Option(assemble(("no trace matches; Backspace to widen", "dim")), disabled=True)
            )

    def on_input_changed(self, event: Input.Changed) -> None:
        self._fill(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        options = self.query_one(OptionList)
        if options.highlighted is not None:
            option = options.get_option_at_index(options.highlighted)
            if option.id:
                self.dismiss(option.id)

    def action_move(self, delta: int) -> None:
        options = self.query_one(OptionList)
        (options.action_cursor_down if delta > 0 else options.action_cursor_up)()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


def _practice_levels(app) -> dict[str, tuple[int, int]]:
    """Each trace's practice level and top level; empty when progress cannot be read."""
    try:
        return levels(app.store)
    except Exception:  # noqa: BLE001 - the list opens even if progress or a plan cannot be read
        return {}
