"""Several heatmaps of one source, one at a time, with the source's errata underneath."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from tutor.render.safe import text
from tutor.widgets.heatmap import Heatmap

if TYPE_CHECKING:
    from engine.trace import Erratum


class HeatmapPanel(Vertical):
    """A :class:`Heatmap` for the current matrix; ``,``/``.`` switch between matrices."""

    DEFAULT_CSS = """
    HeatmapPanel { height: 1fr; }
    HeatmapPanel > #panel-title { height: auto; color: $text-muted; }
    HeatmapPanel > #panel-errata-box { height: auto; max-height: 8; }
    HeatmapPanel #panel-errata { height: auto; color: $warning; }
    """

    BINDINGS = [
        Binding("comma", "cycle(-1)", "Prev matrix", key_display=","),
        Binding("full_stop", "cycle(1)", "Next matrix", key_display="."),
    ]
    HELP_WORDS = {"cycle": "Previous / next matrix of this source"}

    def __init__(self, heatmaps: Sequence[object] = (), errata: Sequence[Erratum] = (), **kwargs) -> None:
        super().__init__(**kwargs)
        self.heatmaps = list(heatmaps)
        self.errata = list(errata)
        self.index = 0

    def compose(self) -> ComposeResult:
        yield Static(id="panel-title")
        self._view = self._make_view()
        yield self._view
        with VerticalScroll(id="panel-errata-box", can_focus=False):  # many errata scroll, none is cut
            yield Static(id="panel-errata")

    def on_mount(self) -> None:
        self._refresh_text()

    def show(self, heatmaps: Sequence[object], errata: Sequence[Erratum] = ()) -> None:
        """Replace what the panel shows (the heatmaps screen calls this on a new source)."""
        self.heatmaps, self.errata, self.index = list(heatmaps), list(errata), 0
        self._show_current()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cycle":  # , and . only where there is another matrix to go to
            return len(self.heatmaps) > 1
        return True

    def action_cycle(self, delta: int) -> None:
        if len(self.heatmaps) > 1:
            self.index = (self.index + delta) % len(self.heatmaps)
            self._show_current()

    def _show_current(self) -> None:
        self.refresh_bindings()
        had_focus = self._view.has_focus
        self._view.remove()  # finishes asynchronously, so views carry no id to collide on
        self._view = self._make_view()
        self.mount(self._view, before=self.query_one("#panel-errata-box"))
        if had_focus and self._view.can_focus:  # `.` and `,` keep the keys on the grid
            self._view.focus()
        self._refresh_text()

    def _make_view(self) -> Heatmap | Static:
        if self.heatmaps:
            return Heatmap.from_heatmap_data(self.heatmaps[self.index])
        return Static("No attention weights here.")

    @property
    def heatmap(self) -> Heatmap | None:
        return self._view if isinstance(self._view, Heatmap) else None

    def _refresh_text(self) -> None:
        n = len(self.heatmaps)
        title = self.query_one("#panel-title", Static)
        title.update(f"matrix {self.index + 1} of {n} · , and . switch" if n > 1 else "")
        title.display = n > 1
        lines = [
            f"⚠ {e.where} — the notes: {e.printed} · computed: {e.computed} · why: {e.why}"
            for e in self.errata
        ]
        self.query_one("#panel-errata", Static).update(text("\n".join(lines)))
        self.query_one("#panel-errata-box").display = bool(lines)
