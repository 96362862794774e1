"""Trace screen: the list of steps beside the current step, with the student's own inputs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from tutor.render.safe import assemble, text
from tutor.render.labels import hanging
from tutor.widgets.practice_panel import PracticePanel

if TYPE_CHECKING:
    from tutor.practice.tasks import PracticeStart

DEFAULT_TRACE = "qkv"


class TraceScreen(Screen):
    """Step through one worked example; edit its inputs; open its heatmap."""

    BINDINGS = [
        Binding("n,right,space", "move(1)", "Next", key_display="n/→"),
        Binding("b,left", "move(-1)", "Back", key_display="b/←"),
        Binding("g,home", "jump('first')", "First", show=False),
        Binding("G,end", "jump('last')", "Last", show=False),
        Binding("e", "edit_inputs", "Inputs", tooltip="Edit this trace's inputs"),
        Binding("h", "heatmap", "Heatmap"),
        Binding("o", "pick", "Traces", tooltip="Open another worked example"),
        Binding("r", "reset", "Defaults", show=False),
        Binding("p", "practice", "Try", tooltip="Practise: do the steps yourself"),
        Binding("escape", "leave_practice", "End practice"),
    ]
    HELP_WORDS = {"practice": "Practise this trace: do its steps yourself, each answer checked",
                  "leave_practice": "End the practice (the answers so far stay saved)"}

    def __init__(self, name: str | None = None, overrides: dict[str, Any] | None = None, *,
                 practice: PracticeStart | None = None) -> None:
        super().__init__()
        self.trace_name = name or DEFAULT_TRACE
        self.overrides: dict[str, Any] = dict(overrides or {})
        self.trace = None
        self.page = 0
        self._practice_start = practice  # `trace NAME --practice`: start once the trace is in
        self._request = 0  # the newest load(); a build that finishes after a newer one is dropped

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="trace-body"):
            yield Static(id="trace-header")
            yield Static("", id="trace-error", classes="field-error")
            with Horizontal(id="trace-main"):
                yield OptionList(id="trace-pages")
                with VerticalScroll(id="trace-scroll"):
                    yield Static(id="trace-page")
            panel = PracticePanel(id="trace-practice")
            panel.display = False
            yield panel
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.load(self.trace_name, self.overrides)

    # -- building ---------------------------------------------------------------------
    def load(self, name: str, overrides: dict[str, Any], page: int = 0) -> None:
        self.query_one("#trace-header", Static).update(assemble((name, "bold"), (" — computing…", "dim")))
        self._request += 1
        self._build(name, overrides, page, self._request)

    @work(thread=True, exclusive=True, group="trace-build")
    def _build(self, name: str, overrides: dict[str, Any], page: int, request: int) -> None:
        from engine.traces import build

        from tutor.warmup import TRACE

        self.app.need_engine([TRACE + name])  # type: ignore[attr-defined]  # its kernels first
        try:
            trace = build(name, overrides)
        except ValueError as exc:  # the student's inputs: said inline, the screen stays
            self.app.call_from_thread(self._if_newest, request, self._show_error,
                                      str(exc).splitlines()[0])
            return
        self.app.call_from_thread(self._if_newest, request, self._show_trace, trace, overrides, page)

    def _if_newest(self, request: int, show: Any, *args: Any) -> None:
        """Show what a build found unless the student asked for another trace meanwhile (a
        first run's slow build of the last one would otherwise replace the newer one)."""
        if request == self._request:
            show(*args)

    def _show_error(self, message: str) -> None:
        self.query_one("#trace-error", Static).update(text(message))
        if self.trace is not None:  # keep the last good trace on screen
            self._render_header()

    def _show_trace(self, trace, overrides: dict[str, Any], page: int) -> None:
        self.trace = trace
        self.trace_name = trace.name
        self.overrides = dict(overrides)
        self.query_one("#trace-error", Static).update("")
        pages = self.query_one("#trace-pages", OptionList)
        pages.clear_options()
        pages.add_option(Option("Overview", id="p0"))
        width = len(f"{len(trace.steps)}.")
        for i, step in enumerate(trace.steps, 1):
            pages.add_option(Option(hanging(f"{i}.", step.title, head_width=width), id=f"p{i}"))
        mark = ("", "") if not trace.errata else (" ⚠ errata", "yellow")
        pages.add_option(Option(assemble("Result", mark), id=f"p{len(trace.steps) + 1}"))
        self._render_header()
        self.refresh_bindings()  # `h` only for a trace with heatmaps
        self.show_page(min(page, self.page_count - 1))
        if self._practice_start is not None:
            start, self._practice_start = self._practice_start, None
            self.query_one(PracticePanel).start(trace.name, start)

    def _render_header(self) -> None:
        t = self.trace
        source = "your inputs" if self.overrides else "defaults"
        n = len(t.heatmaps)
        heat = f" · {n} heatmap{'s' * (n != 1)} (h)" if n else ""
        session = self.query_one(PracticePanel).session
        if session is not None:  # practising: its numbers, and where to read them
            source = ("practice on the notes' numbers" if session.seed is None else
                      f"practice on fresh numbers (seed {session.seed}: Overview lists them)")
            heat = ""
        self.query_one("#trace-header", Static).update(
            assemble((t.name, "bold"), " · ", t.title, (f"  §{t.section} · {source}{heat}", "dim")))

    # -- paging -----------------------------------------------------------------------
    @property
    def page_count(self) -> int:
        return 0 if self.trace is None else len(self.trace.steps) + 2

    def show_page(self, index: int) -> None:
        from tutor.render.rich_view import overview, step_panel, summary

        if self.trace is None:
            return
        self.page = max(0, min(index, self.page_count - 1))
        t = self.trace
        session = self.query_one(PracticePanel).session
        if session is not None:  # a practice shows its own steps, blanks as "?"
            t = session.display_trace()
        if session is not None and self.page - 1 > self._practice_step(session):
            body = text("In practice: this comes after the step you are working on.", "dim")
        elif self.page == 0:
            body = overview(t)
        elif self.page == self.page_count - 1:
            body = summary(t)
        else:
            body = step_panel(t, self.page - 1)
        self.query_one("#trace-page", Static).update(body)
        self.query_one("#trace-scroll", VerticalScroll).scroll_home(animate=False)
        pages = self.query_one("#trace-pages", OptionList)
        if pages.highlighted != self.page:
            pages.highlighted = self.page

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        # Rebuilding the list posts highlight events that arrive after the new page is shown;
        # only the list's current highlight may move the page.
        if event.option_list.id != "trace-pages" or event.option_index != event.option_list.highlighted:
            return
        if event.option_index != self.page:
            self.show_page(event.option_index)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        practising = self.query_one(PracticePanel).display
        if action in ("heatmap", "edit_inputs", "reset") and practising:
            return False  # a heatmap would show the blanks; new inputs belong to a new practice
        if action == "heatmap":  # hidden from the footer where there is nothing to draw
            return self.trace is not None and bool(self.trace.heatmaps)
        if action == "leave_practice":
            return practising
        return True

    def action_move(self, delta: int) -> None:
        self.show_page(self.page + delta)

    def action_jump(self, where: str) -> None:
        self.show_page(0 if where == "first" else self.page_count - 1)

    # -- other actions ----------------------------------------------------------------
    def action_pick(self) -> None:
        from tutor.screens.trace_picker import TracePicker

        def chosen(name: str | None) -> None:
            if name:
                self.load(name, {})

        self.app.push_screen(TracePicker(self.trace_name), chosen)

    def action_reset(self) -> None:
        self.load(self.trace_name, {}, self.page)

    def action_edit_inputs(self) -> None:
        if self.trace is None:
            return
        from engine.traces import input_specs
        from tutor.screens.trace_inputs import TraceInputs

        def applied(overrides: dict[str, Any] | None) -> None:
            if overrides is not None:
                self.load(self.trace_name, overrides, self.page)

        self.app.push_screen(
            TraceInputs(self.trace_name, input_specs(self.trace_name), self.trace.inputs, self.overrides), applied)

    def action_heatmap(self) -> None:
        if self.trace is None or not self.trace.heatmaps:
            self.notify("This trace has no attention weights to draw.", severity="warning")
            return
        from tutor.screens.heatmap_view import HeatmapModal

        self.app.push_screen(HeatmapModal(self.trace.heatmaps, self.trace.errata))

    # -- practice (tutor/practice; the panel runs it, the screen shows its steps) ------
    def action_practice(self) -> None:
        if self.trace is not None:
            self.query_one(PracticePanel).start(self.trace_name)

    def action_leave_practice(self) -> None:
        self.query_one(PracticePanel).action_leave()

    @staticmethod
    def _practice_step(session) -> int:
        """The 0-based step the practice is at (past the last step once it is done)."""
        task = session.task
        return len(session.trace.steps) if task is None else task.plan.index

    def on_practice_panel_changed(self, event: PracticePanel.Changed) -> None:
        session = self.query_one(PracticePanel).session
        if session is not None:
            self._render_header()
            self._mark_pages(session.step_mark)
            self.show_page(min(self._practice_step(session) + 1, self.page_count - 2))
        self.refresh_bindings()

    def on_practice_panel_left(self, event: PracticePanel.Left) -> None:
        self._render_header()
        self._mark_pages(lambda index: "")
        self.show_page(self.page)
        self.refresh_bindings()

    def _mark_pages(self, mark) -> None:
        """The step list with each blank step's mark (? open, ✓ solved, ✗ not solved)."""
        pages = self.query_one("#trace-pages", OptionList)
        width = len(f"{len(self.trace.steps)}.")
        for i, step in enumerate(self.trace.steps, 1):
            tail = mark(i - 1)
            pages.replace_option_prompt(f"p{i}", hanging(f"{i}.", step.title + (f" {tail}" if tail else ""),
                                                         head_width=width))
