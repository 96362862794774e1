"""Lab screen: run an experiment with a progress bar and a live loss plot, then read its
results (the same report the CLI prints: tables, plots, sentences, heatmaps).

Everything the screen runs and draws comes from :mod:`tutor.lab`: the experiments table,
the one progress-event type and the one stop flag, which cancelling sets and the run polls
every step (and between evaluation buckets), so it stops within a step and reports what it
has. The training threads never wait for the screen: their events go into a
:class:`~tutor.lab.progress.LiveProgress`, which the screen looks at :data:`LOOKS_PER_SECOND`
times a second, drawing only what changed — on a busy two-core laptop the UI thread then
takes a few per cent of a core and training keeps its speed.

Each experiment keeps its last run: picking another experiment shows that one's (or nothing),
and ``h`` opens the highlighted experiment's learned weights.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, ProgressBar, Static
from textual.widgets.option_list import Option

from tutor.lab.experiments import get, on_screen, results_renderable
from tutor.lab.progress import LiveProgress, LiveView, StopFlag, event_status
from tutor.lab.report import Style, live_loss_plot
from tutor.render.safe import assemble
from tutor.screens.handle import tutor_app

LOOKS_PER_SECOND = 4
"""How often the screen redraws a running experiment's progress."""


@dataclass
class LastRun:
    """A finished run of one experiment, as the screen shows it again when it is picked."""

    result: Any
    body: Any  # the results renderable
    live: Any  # the final live loss plot (None if it had none)
    losses: dict[str, list[tuple[int, float]]]
    stopped: bool
    done: float | None  # fraction of the progress bar reached (None: no bar)


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
        self._live: LiveProgress | None = None
        self._started = 0.0
        self._heard = False  # an event of the run going has arrived
        self._counted = 0  # seconds shown while it starts
        self._drawn_points = -1  # loss points in the live plot
        self._plot_rows = -1  # its height (a new height needs a layout)
        self._status_lines = -1  # the status line's height
        self._last: dict[str, LastRun] = {}

    def compose(self) -> ComposeResult:
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
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#lab-progress", ProgressBar).display = False  # no run, no bar
        self._looks = self.set_interval(1 / LOOKS_PER_SECOND, self._look, pause=True)
        options = self.query_one("#lab-list", OptionList)
        options.highlighted = options.get_option_index(self.experiment)
        options.focus()
        self._show_last()

    def on_unmount(self) -> None:
        self._stop.set()  # leaving the app stops a run at its next step

    # -- what the app may ask -------------------------------------------------------------
    def select(self, experiment: str) -> None:
        """Highlight ``experiment`` (unless a run is going)."""
        if self.running is None:
            options = self.query_one("#lab-list", OptionList)
            options.highlighted = options.get_option_index(experiment)

    @property
    def result(self) -> Any:
        """The highlighted experiment's last result (None before it has run)."""
        last = self._last.get(self.experiment) if self.running is None else None
        return last.result if last else None

    @property
    def result_of(self) -> str | None:
        """The experiment :attr:`result` belongs to."""
        return self.experiment if self.result is not None else None

    @property
    def losses(self) -> dict[str, list[tuple[int, float]]]:
        """Loss points (step, loss per token) per run: of the run going, or of the last one."""
        if self._live is not None:
            return self._live.view().losses
        last = self._last.get(self.experiment)
        return last.losses if last else {}

    # -- showing ----------------------------------------------------------------------------
    def _status(self, *parts: str | tuple[str, str]) -> None:
        text = assemble(*parts)
        status = self.query_one("#lab-status", Static)
        lines = len(text.wrap(self.app.console, max(1, status.content_size.width or 80)))
        status.update(text, layout=lines != self._status_lines)  # re-layout only if it grew
        self._status_lines = lines

    def _show_last(self) -> None:
        """The right-hand side for the highlighted experiment when nothing runs: its last run's
        bar, plot and results, or what Enter would do."""
        name = self.experiment
        last = self._last.get(name)
        bar = self.query_one("#lab-progress", ProgressBar)
        done = last.done if last is not None else None
        bar.display = done is not None
        if done is not None:
            bar.update(total=100, progress=100 * done)
        self.query_one("#lab-live", Static).update(last.live if last and last.live else "")
        self._plot_rows = -1
        self.query_one("#lab-results", Static).update(last.body if last else "")
        if last is None:
            self._status((name, "bold"),
                         " — r or Enter runs it (about a minute for the training experiments; "
                         "c cancels). "
                         f"The command line has the same runs: `attn-tutor lab {name} --help`.")
        elif last.stopped:
            self._status((name, "bold"), ": cancelled — the results below cover what was done. "
                         "r or Enter runs it again.")
        else:
            self._status((name, "bold"), ": done. r or Enter runs it again.")
        self.refresh_bindings()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id and self.running is None and event.option.id != self.experiment:
            self.experiment = event.option.id
            self._show_last()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.action_run()

    # -- running ------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "run":
            return self.running is None
        if action == "cancel":
            return self.running is not None
        if action == "to_heatmaps":
            return bool(self._heatmaps())
        return True

    def _settings(self, name: str) -> Any:
        return self.settings.get(name) or get(name).defaults()

    def action_run(self) -> None:
        if self.running is not None:
            return
        name = self.running = self.experiment
        self._stop.clear()
        self._live = live = LiveProgress()
        self._started = time.monotonic()
        self._heard, self._counted, self._drawn_points, self._plot_rows = False, 0, -1, -1
        self._last.pop(name, None)
        self.query_one("#lab-progress", ProgressBar).display = False
        self.query_one("#lab-live", Static).update("")
        self.query_one("#lab-results", Static).update("")
        self._status((name, "bold"), ": starting (the first run compiles kernels)…")
        self.refresh_bindings()
        self._looks.resume()
        # paint the status before the worker's imports compete with the UI for the GIL
        self.call_after_refresh(self._work, name, live)

    def action_cancel(self) -> None:
        if self.running is not None:
            self._stop.set()
            self._status((self.running, "bold"), ": stopping after this step…")

    @work(thread=True, exclusive=True, group="lab")
    def _work(self, name: str, live: LiveProgress) -> None:
        """Run ``name`` (the engine and its kernels load here, off the UI thread, as the CLI
        loads them before its progress bars); events go to ``live``."""
        exp = get(name)
        try:
            settings = self._settings(name)
            live.bars = max(1, len(exp.bars(settings)[0]))
            if exp.kernels:  # the warm-up loads them first (they jump its queue)
                tutor_app(self).need_engine(exp.kernels, self._stop.is_set, exp.later)
                if not self._stop.is_set():  # cancelled or quitting: the run stops at once
                    from tutor.warmup import load

                    load(exp.kernels)  # instant once the warm-up got there; else loads here
            result = exp.run(settings, on_progress=live.callback, should_stop=self._stop)
        except Exception as exc:  # noqa: BLE001 - a failed run is reported, the app stays up
            self.app.call_from_thread(self._failed, name, exc)
            return
        self.app.call_from_thread(self._finished, name, result, settings)

    def _look(self) -> None:
        """A few times a second while a run goes: draw what its events said since last time."""
        live = self._live
        if live is None or self.running is None:
            return
        view = live.take()
        if self._stop.is_set():
            return  # "stopping…" stays until the run ends
        if view is not None:
            self._heard = True
            self._show_view(self.running, view, live.bars)
        elif not self._heard:  # still loading: count the seconds, once a second
            seconds = int(time.monotonic() - self._started)
            if seconds != self._counted:
                self._counted = seconds
                self._status((self.running, "bold"),
                             f": starting (the first run compiles kernels)… {seconds} s")

    def _show_view(self, name: str, view: LiveView, bars: int) -> None:
        bar = self.query_one("#lab-progress", ProgressBar)
        events = list(view.latest.values())
        evaluating = [e.run for e in events if e.phase == "evaluate"]
        measuring = [e for e in events if e.phase == "measure"]
        if view.losses:  # training runs: the bar counts the steps of all of them
            bar.display = True
            bar.update(total=max(e.total for e in events) * bars,
                       progress=sum(points[-1][0] for points in view.losses.values()))
        if any(e.phase == "train" for e in events):
            latest = ", ".join(f"{run} {points[-1][1]:.3f}" for run, points in view.losses.items())
            also = f" · evaluating {', '.join(evaluating)}" if evaluating else ""
            elapsed = max(e.elapsed for e in events)
            self._status((name, "bold"),
                         f": training · loss per token {latest}{also} · {elapsed:.0f} s")
        elif evaluating:
            self._status((name, "bold"), f": evaluating {', '.join(evaluating)} on held-out sequences…")
        elif measuring:
            event = measuring[-1]
            bar.display = True
            bar.update(total=event.total, progress=event.step)
            self._status((name, "bold"), f": {event_status(event)}")
        if view.points != self._drawn_points and view.losses:
            self._drawn_points = view.points
            plot = self._live_plot(view.losses)
            rows = plot.plain.count("\n")
            self.query_one("#lab-live", Static).update(plot, layout=rows != self._plot_rows)
            self._plot_rows = rows

    def _plot_width(self) -> int:
        """A plot's width that fits the results pane with its axis labels."""
        return max(30, self.query_one("#lab-scroll").size.width - 14)

    def _live_plot(self, losses: dict[str, list[tuple[int, float]]]) -> Any:
        return live_loss_plot(losses, self._plot_width()).rich()

    def _end_run(self) -> None:
        self._looks.pause()
        self.running = None
        self._live = None

    def _failed(self, name: str, exc: Exception) -> None:
        self._end_run()
        self._status((f"{name} failed: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
                      "red"))
        self.refresh_bindings()

    def _finished(self, name: str, result: Any, settings: Any) -> None:
        live = self._live
        view = live.view() if live is not None else None
        if live is not None and view is not None and view.latest:
            self._show_view(name, view, live.bars)  # the last events, however quick the run
        self._end_run()
        exp = get(name)
        stopped = exp.stopped(result)
        try:
            body = results_renderable(name, result, settings, Style(width=self._plot_width()))
        except Exception as exc:  # noqa: BLE001 - a display problem must not take the run down
            from rich.text import Text

            body = Text(f"Could not draw the results: {exc}", style="red")
        done = None
        bar = self.query_one("#lab-progress", ProgressBar)
        if bar.display and bar.total:
            done = min(1.0, (bar.progress or 0) / bar.total) if stopped else 1.0
        losses = view.losses if view else {}
        self._last[name] = LastRun(result, body, self._live_plot(losses) if losses else None,
                                   losses, stopped, done)
        if self.experiment == name:
            self._show_last()
            if self._heatmaps():
                self.notify("Press h to explore these weights with the cell cursor in Heatmaps.")

    def _heatmaps(self) -> list[Any]:
        if self.result is None or self.result_of is None:
            return []
        return get(self.result_of).heatmaps(self.result)

    def action_to_heatmaps(self) -> None:
        maps = self._heatmaps()
        if maps:
            tutor_app(self).show_heatmaps(f"lab {self.result_of}", maps)
