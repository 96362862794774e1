"""Lab screen: run an experiment with a progress bar and a live loss plot, then read its
results (accuracy table and plot, loss curves, or the learned-alignment heatmap).

Training runs in a worker thread through the same engine functions as ``attn-tutor lab``;
progress events arrive on that thread and are handed to the UI with ``call_from_thread``.
Cancelling sets an event the training loop polls every step, so the run stops within a step
and reports what it has.
"""

from __future__ import annotations

import threading
from collections import defaultdict

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, ProgressBar, Static
from textual.widgets.option_list import Option

from tutor.palette import LAB_EXPERIMENTS

TRAINING = ("bottleneck", "teacher-forcing", "alignment")


class LabScreen(Screen):
    """Pick an experiment, run it (Enter), cancel it (c)."""

    BINDINGS = [
        Binding("enter,r", "run", "Run"),
        Binding("c", "cancel", "Cancel run"),
        Binding("h", "to_heatmaps", "Alignment in Heatmaps", show=False),
    ]

    def __init__(self, experiment: str | None = None, settings: dict[str, object] | None = None) -> None:
        """``settings`` maps an experiment name to the settings object (or keyword arguments,
        for scaling and saturation) its engine function takes; defaults otherwise."""
        super().__init__()
        self.experiment = experiment or "bottleneck"
        self.settings = dict(settings or {})
        self._stop = threading.Event()
        self.running: str | None = None
        self.losses: dict[str, list[tuple[int, float]]] = defaultdict(list)
        self.result = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="lab-main"):
            with Vertical(id="lab-left"):
                yield OptionList(*(Option(f"[b]{name}[/b]\n[dim]{text}[/dim]", id=name)
                                   for name, text in LAB_EXPERIMENTS), id="lab-list")
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

    def _idle(self) -> None:
        self.query_one("#lab-status", Static).update(
            f"[b]{self.experiment}[/b] — Enter runs it (about a minute for the training experiments; "
            "c cancels). The command line has the same runs: "
            f"`attn-tutor lab {self.experiment} --help`."
        )

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
            return getattr(self.result, "weights", None) is not None
        return True

    def action_run(self) -> None:
        if self.running is not None:
            return
        self.running = self.experiment
        self._stop.clear()
        self.losses.clear()
        self.result = None
        self.query_one("#lab-live", Static).update("")
        self.query_one("#lab-results", Static).update("")
        self.query_one("#lab-progress", ProgressBar).update(total=None, progress=0)
        self.query_one("#lab-status", Static).update(f"[b]{self.experiment}[/b]: starting (the first run compiles kernels)…")
        self.refresh_bindings()
        self._work(self.experiment)

    def action_cancel(self) -> None:
        if self.running is not None:
            self._stop.set()
            self.query_one("#lab-status", Static).update(f"[b]{self.running}[/b]: stopping after this step…")

    @work(thread=True, exclusive=True, group="lab")
    def _work(self, name: str) -> None:
        from engine import lab, scaling

        stop = self._stop.is_set
        given = self.settings.get(name)
        try:
            if name in TRAINING:
                run = {"bottleneck": lab.bottleneck, "teacher-forcing": lab.teacher_forcing,
                       "alignment": lab.alignment}[name]
                args = () if given is None else (given,)
                result = run(*args, on_progress=self._event, should_stop=stop)
            else:
                run = scaling.scaling_experiment if name == "scaling" else scaling.saturation_experiment
                result = run(**(given or {}), on_progress=self._count, should_stop=stop)
        except Exception as exc:  # noqa: BLE001 - a failed run is reported, the app stays up
            self.app.call_from_thread(self._failed, name, exc)
            return
        self.app.call_from_thread(self._finished, name, result)

    def _event(self, event) -> None:
        """Training progress (called on the worker's threads)."""
        self.app.call_from_thread(self._show_event, event)

    def _count(self, done: int, total: int, message: str) -> None:
        """Measurement progress (scaling, saturation)."""
        self.app.call_from_thread(self._show_count, done, total, message)

    def _show_event(self, event) -> None:
        bar = self.query_one("#lab-progress", ProgressBar)
        if event.phase == "train" and event.loss is not None:
            self.losses[event.run].append((event.step, event.loss))
            runs = max(len(self.losses), 1)
            done = sum(points[-1][0] for points in self.losses.values())
            bar.update(total=event.total * runs if event.experiment != "alignment" else event.total, progress=done)
            latest = ", ".join(f"{run} {points[-1][1]:.3f}" for run, points in self.losses.items())
            self.query_one("#lab-status", Static).update(
                f"[b]{self.running}[/b]: training · loss per token {latest} · {event.elapsed:.0f} s")
            self._draw_live()
        elif event.phase == "evaluate":
            self.query_one("#lab-status", Static).update(f"[b]{self.running}[/b]: evaluating {event.run} on held-out sequences…")

    def _show_count(self, done: int, total: int, message: str) -> None:
        self.query_one("#lab-progress", ProgressBar).update(total=total, progress=done)
        self.query_one("#lab-status", Static).update(f"[b]{self.running}[/b]: {message}")

    def _draw_live(self) -> None:
        from tutor.plot import Series, line_plot

        width = max(30, self.query_one("#lab-scroll").size.width - 14)
        series = [Series(run, [loss for _, loss in pts], [step for step, _ in pts]) for run, pts in self.losses.items()]
        plot = line_plot(series, width=width, height=8, title="training loss per target token (live)", x_label="step")
        self.query_one("#lab-live", Static).update(plot.rich())

    def _failed(self, name: str, exc: Exception) -> None:
        self.running = None
        self.query_one("#lab-status", Static).update(f"[red]{name} failed: {str(exc).splitlines()[0]}[/red]")
        self.refresh_bindings()

    def _finished(self, name: str, result) -> None:
        self.running = None
        self.result = result
        stopped = getattr(result, "interrupted", False) or getattr(result, "stopped", False)
        bar = self.query_one("#lab-progress", ProgressBar)
        if bar.total is not None and not stopped:
            bar.update(progress=bar.total)
        note = " (cancelled: these are the results so far)" if stopped else ""
        self.query_one("#lab-status", Static).update(f"[b]{name}[/b]: done{note}. Enter runs it again.")
        try:
            self.query_one("#lab-results", Static).update(results_renderable(name, result))
        except Exception as exc:  # noqa: BLE001 - a display problem must not take the run down
            self.query_one("#lab-results", Static).update(f"[red]Could not draw the results: {exc}[/red]")
        if name == "alignment" and getattr(result, "weights", None) is not None:
            self.notify("Press h to explore these weights with the cell cursor in Heatmaps.")
        self.refresh_bindings()

    def action_to_heatmaps(self) -> None:
        from engine.trace import HeatmapData
        from tutor.screens.heatmaps import HeatmapsScreen

        r = self.result
        data = HeatmapData(f"Learned attention, `{r.task}`", r.weights, list(r.row_labels), list(r.col_labels))
        self.app.switch_mode("heatmaps")

        def add() -> None:
            if isinstance(self.app.screen, HeatmapsScreen):
                self.app.screen.add_source("lab alignment", [data])

        self.app.call_after_refresh(add)


def results_renderable(name: str, result):
    """Tables, plots and sentences for a finished experiment."""
    from rich.console import Group
    from rich.text import Text

    from tutor import lab_view as view

    parts: list = []
    if name == "bottleneck":
        runs = {"attention": result.attention, "fixed": result.fixed}
        parts += [view.accuracy_table(result.buckets, runs, title="Free-running greedy accuracy on held-out sequences"),
                  view.accuracy_plot(runs).rich(),
                  Text(f"In the longest bucket attention leads by {100 * result.gap_at_longest():.0f} points of token accuracy.")]
    elif name == "teacher-forcing":
        parts.append(view.loss_plot(result.curves()).rich())
        accs = {label: run.accuracy for label, run in result.runs.items() if run.accuracy}
        if accs:
            first = next(iter(accs.values()))
            parts.append(view.accuracy_table([(a.lo, a.hi) for a in first], accs,
                                             title="Free-running greedy accuracy afterwards"))
    elif name == "alignment":
        parts.append(view.alignment_view(result))
        parts += [Text(line) for line in view.alignment_summary(result)]
    else:
        from tutor.commands.lab_scaling import saturation_parts, scaling_parts
        from tutor.plot import Plot

        made = scaling_parts(result) if name == "scaling" else saturation_parts(result)
        for part in made:
            parts.append(part.rich() if isinstance(part, Plot) else Text(part) if isinstance(part, str) else part)
    return Group(*parts)
