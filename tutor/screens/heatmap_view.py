"""A modal heatmap over the current screen (from the trace screen's `h`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer

from tutor.widgets.heatmap_panel import HeatmapPanel

if TYPE_CHECKING:
    from engine.trace import Erratum


class HeatmapModal(ModalScreen[None]):
    """The heatmaps of one trace with the cell cursor; Esc returns, ? lists the keys."""

    BINDINGS = [
        Binding("escape,q", "dismiss", "Close"),
        # a modal cuts the app's keys off: its own ? and f1 open the help on the grid's keys
        Binding("question_mark", "app.help", "Help", key_display="?"),
        Binding("f1", "app.help", "Help", show=False),
    ]

    def __init__(self, heatmaps: Sequence[object], errata: Sequence[Erratum] = ()) -> None:
        super().__init__()
        self._heatmaps = heatmaps
        self._errata = errata

    def compose(self) -> ComposeResult:
        with Vertical(id="heatmap-modal-box"):
            yield HeatmapPanel(self._heatmaps, self._errata)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        heatmap = self.query_one(HeatmapPanel).heatmap
        if heatmap is not None:
            heatmap.focus()
