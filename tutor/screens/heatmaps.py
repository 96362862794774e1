"""Heatmaps screen: every trace's attention matrices (and the lab's) with the cell cursor."""

from __future__ import annotations

from collections.abc import Sequence

from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList
from textual.widgets.option_list import Option

from tutor.heatmap.sources import build_heatmaps
from tutor.render.safe import assemble
from tutor.widgets.heatmap_panel import HeatmapPanel


class HeatmapsScreen(Screen):
    """Pick a source on the left; explore its weights on the right."""

    def __init__(self, trace_name: str | None = None) -> None:
        super().__init__()
        self.wanted = trace_name
        self.sources: dict[str, tuple[list, list]] = {}
        self.shown: str | None = None  # the source in the panel
        self._focused_once = False  # the list takes the focus once, when it first shows a source
        self._pending: tuple[int, int] | None = (0, 0)  # traces through, of how many; None: all

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="heatmaps-main"):
            yield OptionList(
                Option(assemble(("finding attention weights…", "dim")), disabled=True), id="heatmaps-list"
            )
            yield HeatmapPanel(id="heatmaps-panel")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.collect()

    @work(thread=True, exclusive=True, group="heatmap-sources")
    def collect(self) -> None:
        """Every trace's default heatmaps (built once per process, see :mod:`tutor.heatmap.sources`),
        listed as each arrives: on a first run they compile for seconds, and the student can read
        the first while the rest build. The trace asked for comes first."""
        from engine.traces import list_traces  # looked up per call: tests replace it

        names = [info.name for info in list_traces()]
        done: set[str] = set()

        def arrived(name: str, found: tuple[list, list] | None) -> None:
            done.add(name)
            self.app.call_from_thread(self._populate, {name: found} if found else {},
                                      (len(done), len(names)))

        first = self.wanted if self.wanted in names else None
        if first is not None:
            build_heatmaps(lambda name: name == first, arrived)
        build_heatmaps(lambda name: name != first, arrived)
        self.app.call_from_thread(self._populate, {}, None)

    def _ordered(self) -> list[str]:
        """The sources from elsewhere (the lab's) first, then the traces in lecture order."""
        from engine.traces import REGISTRY, list_traces  # looked up per call: tests replace it

        extra = [name for name in self.sources if name not in REGISTRY]
        return extra + [info.name for info in list_traces() if info.name in self.sources]

    def _populate(self, found: dict[str, tuple[list, list]],
                  pending: tuple[int, int] | None = None) -> None:
        """Add ``found`` to the list; ``pending`` (traces through, of how many) while more may
        come, None once every trace is through."""
        if self._pending is None:
            pending = None  # a late source (the lab's) after the traces: nothing is pending
        self.sources.update(found)
        self._pending = pending
        options = self.query_one("#heatmaps-list", OptionList)
        options.clear_options()
        for name in self._ordered():
            maps, errata = self.sources[name]
            mark = (" ⚠", "yellow") if errata else ""
            count = (f" ×{len(maps)}", "dim") if len(maps) > 1 else ""
            options.add_option(Option(assemble(name, count, mark), id=name))
        if pending is not None:
            through, total = pending
            options.add_option(
                Option(
                    assemble((f"finding attention weights… ({through} of {total} traces)", "dim")),
                    disabled=True,
                )
            )
        if self.wanted in self.sources and self.wanted != self.shown:
            self.select(self.wanted)
        elif pending is None and self.wanted is not None and self.wanted not in self.sources:
            self.notify(f"The {self.wanted} trace has no attention weights to draw.", severity="warning")
            self.wanted = None
        if self.shown is None and self.sources and (self.wanted is None or pending is None):
            self.select(self._ordered()[0])
        if self.shown is not None:
            options.highlighted = options.get_option_index(self.shown)
        if self.shown is not None and not self._focused_once:
            self._focused_once = True
            options.focus()

    def add_source(self, name: str, heatmaps: list, errata: Sequence = ()) -> None:
        """Add a matrix from elsewhere (the lab's learned alignment) and show it — also when a
        source of that name (the lab's previous run) is the one on show."""
        self.wanted = name  # before listing it, or the list re-selects what was shown before
        if self.shown == name:
            self.shown = None  # drawn again below, with the new matrices
        self._populate({name: (list(heatmaps), list(errata))}, self._pending)

    def ask_for(self, name: str) -> None:
        """Show source ``name``: now if it is listed, else as soon as it arrives; if every trace
        is through without it, say that it draws none."""
        if name in self.sources or self._pending is None:
            self.select(name)
        else:
            self.wanted = name  # _populate selects it when it arrives

    def select(self, name: str) -> None:
        if name not in self.sources:
            self.notify(f"The {name} trace has no attention weights to draw.", severity="warning")
            return
        self.wanted = self.shown = name
        maps, errata = self.sources[name]
        self.query_one(HeatmapPanel).show(maps, errata)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_index != event.option_list.highlighted:
            return  # a stale event from an earlier highlight (the list was rebuilt since)
        if event.option.id and event.option.id in self.sources and event.option.id != self.shown:
            self.select(event.option.id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        heatmap = self.query_one(HeatmapPanel).heatmap
        if heatmap is not None:
            heatmap.focus()
