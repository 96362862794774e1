"""Lab screen: run an experiment with a progress bar and a live loss plot, then read its
results (the same report the CLI prints: tables, plots, sentences, heatmaps).

Everything the screen runs and draws comes from :mod:`tutor.lab`: the experiments table,
the one progress-event type (events arrive on the worker's threads and are handed to the UI
with ``call_from_thread``) and the one stop flag, which cancelling sets and the run polls
every step, so it stops within a step and reports what it has.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, ProgressBar, Static
from textual.widgets.option_list import Option

from tutor.lab.experiments import get, on_screen
from tutor.lab.progress import StopFlag, event_status


class LabScreen(Screen):
    """Pick an experiment, run it (Enter), cancel it (c)."""

    BINDINGS = [
        Binding("enter,r", "run", "Run"),
        Binding("c", "cancel", "Cancel run"),
        Binding("h", "to_heatmaps", "Learned weights in Heatmaps", show=False),
    ]

    def __init__(self, experiment: str | None = None, settings: Mapping[str, Any] | None = None) -> None:
        """``settings`` maps an experiment's name to the settings its ``run`` takes (see
        :mod:`tutor.lab.experiments`); the experiment's defaults otherwise."""
        super().__init__()
        self.experiment = experiment or on_screen()[0].name
        self.settings = dict(settings or {})
        self._stop = StopFlag()
        self.running: str | None = None
        self.losses: dict[str, list[tuple[int, float]]] = defaultdict(list)
        self.result: Any = None
        self.result_of: str | None = None  # the experiment that produced ``result``
        self._runs = 1

    def compose(self) -> ComposeResult:
        from rich.text import Text

        yield Header()
        with Horizontal(id="lab-main"):
            with Vertical(id="lab-left"):
                options = []
                for exp in on_screen():
                    label = Text.assemble((exp.name, "bold"), "\n", (exp.blurb, "dim"))
                    options.append(Option(label, id=exp.name))
                yield OptionList(*options, id="lab-list")
                yield Static(id="lab-about")
            with Vertical(id="lab-right"):
                yield Static(id="lab-status")
                yield ProgressBar(id="lab-progress", show_eta=True)
                with VerticalScroll(id="lab-scroll"):
                    yield Static(id="lab-live")
                    yield Static(id="lab-results")
        yield Footer()

    def on_mount(self) -> None:
        options = self.query_one("#lab-list", OptionList)
        options.highlighted = options.get_option_index(self.experiment)
        options.focus()
        self._idle()

    def on_unmount(self) -> None:
        self._stop.set()  # leaving the app stops a run at its next step

    # -- what the app may ask -------------------------------------------------------------
    def select(self, experiment: str) -> None:
        """Highlight ``experiment`` (unless a run is going)."""
        if self.running is None:
            options = self.query_one("#lab-list", OptionList)
            options.highlighted = options.get_option_index(experiment)

    # -- status line ----------------------------------------------------------------------
    def _status(self, *parts: str | tuple[str, str]) -> None:
        from rich.text import Text

        self.query_one("#lab-status", Static).update(Text.assemble(*parts))

    def _idle(self) -> None:
        self._status((self.experiment, "bold"),
                     " — Enter runs it (about a minute for the training experiments; c cancels). "
                     f"The command line has the same runs: `attn-tutor lab {self.experiment} --help`.")

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id and self.running is None:
            self.experiment = event.option.id
            self._idle()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.action_run()

    # -- running ------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "run":
            return self.running is None
        if action == "cancel":
            return self.running is not None
        if action == "to_heatmaps":
            return self.running is None and self.result is not None and bool(self._heatmaps())
        return True

    def _settings(self, name: str) -> Any:
        return self.settings.get(name) or get(name).defaults()

    def action_run(self) -> None:
        if self.running is not None:
            return
        name = self.running = self.experiment
        self._stop.clear()
        self.losses.clear()
        self.result = None
        self._runs = max(1, len(get(name).bars(self._settings(name))[0]))
        self.query_one("#lab-live", Static).update("")
        self.query_one("#lab-results", Static).update("")
        self.query_one("#lab-progress", ProgressBar).update(total=None, progress=0)
        self._status((name, "bold"), ": starting (the first run compiles kernels)…")
        self.refresh_bindings()
        self._work(name)

    def action_cancel(self) -> None:
        if self.running is not None:
            self._stop.set()
            self._status((self.running, "bold"), ": stopping after this step…")

    @work(thread=True, exclusive=True, group="lab")
    def _work(self, name: str) -> None:
        exp = get(name)
        try:
            result = exp.run(self._settings(name), on_progress=self._event, should_stop=self._stop)
        except Exception as exc:  # noqa: BLE001 - a failed run is reported, the app stays up
            self.app.call_from_thread(self._failed, name, exc)
            return
        self.app.call_from_thread(self._finished, name, result)

    def _event(self, event: Any) -> None:
        """A progress event (called on the worker's threads)."""
        self.app.call_from_thread(self._show_event, event)

    def _show_event(self, event: Any) -> None:
        if self.running is None:
            return
        bar = self.query_one("#lab-progress", ProgressBar)
        if event.phase == "train" and event.loss is not None:
            self.losses[event.run].append((event.step, event.loss))
            done = sum(points[-1][0] for points in self.losses.values())
            bar.update(total=event.total * self._runs, progress=done)
            latest = ", ".join(f"{run} {points[-1][1]:.3f}" for run, points in self.losses.items())
            self._status((self.running, "bold"),
                         f": training · loss per token {latest} · {event.elapsed:.0f} s")
            self._draw_live()
        elif event.phase == "evaluate":
            self._status((self.running, "bold"), f": evaluating {event.run} on held-out sequences…")
        elif event.phase == "measure":
            bar.update(total=event.total, progress=event.step)
            self._status((self.running, "bold"), f": {event_status(event)}")

    def _draw_live(self) -> None:
        from tutor.lab.report import live_loss_plot

        width = max(30, self.query_one("#lab-scroll").size.width - 14)
        self.query_one("#lab-live", Static).update(live_loss_plot(self.losses, width).rich())

    def _failed(self, name: str, exc: Exception) -> None:
        self.running = None
        self._status((f"{name} failed: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
                      "red"))
        self.refresh_bindings()

    def _finished(self, name: str, result: Any) -> None:
        from tutor.lab.experiments import results_renderable

        exp = get(name)
        self.running = None
        self.result, self.result_of = result, name
        stopped = exp.stopped(result)
        bar = self.query_one("#lab-progress", ProgressBar)
        if bar.total is not None and not stopped:
            bar.update(progress=bar.total)
        note = " (cancelled: these are the results so far)" if stopped else ""
        self._status((name, "bold"), f": done{note}. Enter runs it again.")
        try:
            body = results_renderable(name, result, self._settings(name))
        except Exception as exc:  # noqa: BLE001 - a display problem must not take the run down
            from rich.text import Text

            body = Text(f"Could not draw the results: {exc}", style="red")
        self.query_one("#lab-results", Static).update(body)
        if self._heatmaps():
            self.notify("Press h to explore these weights with the cell cursor in Heatmaps.")
        self.refresh_bindings()

    def _heatmaps(self) -> list[Any]:
        if self.result is None or self.result_of is None or self.running is not None:
            return []
        return get(self.result_of).heatmaps(self.result)

    def action_to_heatmaps(self) -> None:
        maps = self._heatmaps()
        if maps:
            self.app.show_heatmaps(f"lab {self.result_of}", maps)  # type: ignore[attr-defined]
