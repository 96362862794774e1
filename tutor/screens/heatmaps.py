"""Heatmaps screen: every trace's attention matrices (and the lab's) with the cell cursor."""

from __future__ import annotations

from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList
from textual.widgets.option_list import Option

from tutor.render.safe import assemble
from tutor.widgets.heatmap_panel import HeatmapPanel


class HeatmapsScreen(Screen):
    """Pick a source on the left; explore its weights on the right."""

    def __init__(self, trace_name: str | None = None) -> None:
        super().__init__()
        self.wanted = trace_name
        self.sources: dict[str, tuple[list, list]] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="heatmaps-main"):
            yield OptionList(Option(assemble(("finding attention weights…", "dim")), disabled=True), id="heatmaps-list")
            yield HeatmapPanel(id="heatmaps-panel")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.collect()

    @work(thread=True, exclusive=True, group="heatmap-sources")
    def collect(self) -> None:
        """Every trace's default heatmaps (built once per process, see :mod:`tutor.heatmap.sources`)."""
        from tutor.heatmap.sources import default_heatmaps

        self.app.call_from_thread(self._populate, default_heatmaps())

    def _populate(self, found: dict[str, tuple[list, list]]) -> None:
        self.sources.update(found)
        options = self.query_one("#heatmaps-list", OptionList)
        options.clear_options()
        for name, (maps, errata) in self.sources.items():
            mark = (" ⚠", "yellow") if errata else ""
            count = (f" ×{len(maps)}", "dim") if len(maps) > 1 else ""
            options.add_option(Option(assemble(name, count, mark), id=name))
        if self.wanted and self.wanted not in self.sources:
            self.notify(f"The {self.wanted} trace has no attention weights to draw.", severity="warning")
        if self.sources:
            start = self.wanted if self.wanted in self.sources else next(iter(self.sources))
            options.highlighted = options.get_option_index(start)
            self.select(start)
        options.focus()

    def add_source(self, name: str, heatmaps: list, errata: list = ()) -> None:
        """Add a matrix from elsewhere (the lab's learned alignment) and show it."""
        self.wanted = name  # before listing it, or the list re-selects what was shown before
        self._populate({name: (list(heatmaps), list(errata))})
        self.select(name)

    def select(self, name: str) -> None:
        if name not in self.sources:
            self.notify(f"The {name} trace has no attention weights to draw.", severity="warning")
            return
        self.wanted = name
        maps, errata = self.sources[name]
        self.query_one(HeatmapPanel).show(maps, errata)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_index != event.option_list.highlighted:
            return  # a stale event from an earlier highlight (the list was rebuilt since)
        if event.option.id and event.option.id in self.sources and event.option.id != self.wanted:
            self.select(event.option.id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        heatmap = self.query_one(HeatmapPanel).heatmap
        if heatmap is not None:
            heatmap.focus()
