"""Lab screen: runs an experiment in a worker with live progress, cancels, draws results."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from engine import lab
from tests.tui_text import until
from tutor.app import StartAt, make_app
from tutor.lab.experiments import results_renderable
from tutor.screens.heatmaps import HeatmapsScreen
from tutor.screens.lab import LabScreen

TINY = lab.TrainSettings(min_len=3, max_len=5, steps=30, batch_size=8)


def _settings():
    return {
        "alignment": replace(lab.AlignmentSettings(), train=TINY, hidden_dim=8, embed_dim=4, attn_dim=4, test_len=4),
        "bottleneck": replace(lab.BottleneckSettings(), train=replace(TINY, steps=400), hidden_dim=8, embed_dim=4,
                              attn_dim=4, per_bucket=5, parallel=False),
        "teacher-forcing": replace(lab.TeacherForcingSettings(), train=TINY, hidden_dim=8, embed_dim=4, attn_dim=4,
                                   per_bucket=5, parallel=False),
    }


def _text(static) -> str:
    """What a Static holds, as plain text."""
    import io

    from rich.console import Console

    console = Console(width=100, file=io.StringIO(), color_system=None)
    console.print(static.content)
    return console.file.getvalue()


async def _wait_idle(pilot, screen, seconds=60.0):
    if not await until(pilot, lambda: screen.running is None, timeout=seconds):
        raise AssertionError("the lab run did not finish")


async def test_alignment_runs_live_and_opens_in_heatmaps():
    app = make_app(StartAt("lab", "alignment", lab_settings=_settings()), warm_up=False)
    async with app.run_test(size=(110, 34)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, LabScreen)
        await pilot.press("enter")  # a run this small may finish before the next line
        await _wait_idle(pilot, screen)
        assert screen.losses["attention"], "progress events reached the live plot"
        assert screen.result.weights.shape[1] == 5  # 4 digits and </s>
        await pilot.press("h")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, HeatmapsScreen) and "lab alignment" in app.screen.sources


def _long_run(name: str):
    """The app on the lab screen with ``name`` set to 100,000 steps."""
    settings = _settings()
    settings[name] = replace(settings[name], train=replace(TINY, steps=100_000))
    return make_app(StartAt("lab", name, lab_settings=settings), warm_up=False)


async def _run_then_cancel(pilot, screen) -> None:
    """Enter, then c once the first losses have arrived; back when the run has ended."""
    await pilot.press("enter")
    await until(pilot, lambda: screen.losses, timeout=30)
    await pilot.press("c")
    await _wait_idle(pilot, screen)
    await pilot.pause()


def test_every_experiment_result_draws():
    s = _settings()
    results = {
        "bottleneck": lab.bottleneck(s["bottleneck"]),
        "teacher-forcing": lab.teacher_forcing(s["teacher-forcing"]),
        "alignment": lab.alignment(s["alignment"]),
    }
    from engine.lab.scaling import saturation_experiment, scaling_experiment

    results["scaling"] = scaling_experiment([64, 128], 8, repeat=1)
    results["saturation"] = saturation_experiment([2, 4], samples=50, trials=5)
    for name, result in results.items():
        results_renderable(name, result)  # raises if a field is misread


async def test_no_bar_before_a_run_and_each_experiment_keeps_its_own_last_run():
    from textual.widgets import ProgressBar, Static

    app = make_app(StartAt("lab", "alignment", lab_settings=_settings()), warm_up=False)
    async with app.run_test(size=(110, 34)) as pilot:
        await pilot.pause()
        screen = app.screen
        bar = screen.query_one("#lab-progress", ProgressBar)
        assert not bar.display                                # nothing runs: no (animated) bar
        await pilot.press("enter")
        await _wait_idle(pilot, screen)
        await pilot.pause()
        assert bar.display and bar.percentage == 1
        shown = _text(screen.query_one("#lab-results", Static))
        assert "anti-diagonal" in shown
        await pilot.press("down")                             # another experiment: its own (none)
        await pilot.pause()
        assert screen.experiment != "alignment"
        assert not bar.display and screen.result is None
        assert "r or Enter runs it" in _text(screen.query_one("#lab-status", Static))
        assert _text(screen.query_one("#lab-results", Static)).strip() == ""
        await pilot.press("up")                               # back: the alignment run again
        await pilot.pause()
        assert screen.experiment == "alignment" and bar.display and bar.percentage == 1
        assert _text(screen.query_one("#lab-results", Static)) == shown
        assert screen.result.weights.shape[1] == 5


async def test_h_opens_the_lab_weights_even_when_heatmaps_showed_a_trace_before():
    app = make_app(StartAt("lab", "alignment", lab_settings=_settings()), warm_up=False)
    async with app.run_test(size=(110, 34)) as pilot:
        await pilot.pause()
        await pilot.press("4")                                # Heatmaps first: a trace shows
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen.wanted != "lab alignment"
        await pilot.press("5")
        await pilot.pause()
        screen = app.screen
        await pilot.press("enter")
        await _wait_idle(pilot, screen)
        await pilot.press("h")
        await pilot.pause()
        await pilot.pause()
        heatmaps = app.screen
        assert isinstance(heatmaps, HeatmapsScreen) and heatmaps.wanted == "lab alignment"
        assert heatmaps.query_one("#heatmaps-list").highlighted_option.id == "lab alignment"
        panel = heatmaps.query_one("HeatmapPanel")
        assert panel.heatmaps[0].title.startswith("Learned attention")


async def test_the_run_loads_its_settings_and_the_engine_off_the_ui_thread(monkeypatch):
    import threading

    from tutor.lab.experiments import Experiment

    threads = []
    real = Experiment.defaults

    def defaults(self):
        threads.append(threading.current_thread())
        return replace(real(self), train=TINY, hidden_dim=8, embed_dim=4, attn_dim=4,
                       per_bucket=5, parallel=False)

    monkeypatch.setattr(Experiment, "defaults", defaults)
    app = make_app(StartAt("lab", "bottleneck"), warm_up=False)
    async with app.run_test(size=(110, 34)) as pilot:
        await pilot.pause()
        screen = app.screen
        await pilot.press("enter")
        await _wait_idle(pilot, screen)
        assert screen.result is not None and screen.result.runs["attention"].steps == TINY.steps
    assert threads and threading.main_thread() not in threads


@pytest.mark.parametrize("name", ["teacher-forcing", "bottleneck"])
async def test_cancel_stops_a_long_run_skips_the_evaluation_and_says_cancelled(name):
    app = _long_run(name)
    async with app.run_test(size=(110, 34)) as pilot:
        await pilot.pause()
        screen = app.screen
        await _run_then_cancel(pilot, screen)
        assert screen.result.interrupted
        runs = screen.result.runs.values()
        assert all(run.steps < 100_000 and run.accuracy == [] for run in runs)
        assert any(run.steps > 0 for run in runs)
        assert "cancelled" in _text(screen.query_one("#lab-status"))
        assert "Not evaluated on held-out sequences" in _text(screen.query_one("#lab-results"))


def test_live_progress_keeps_every_loss_point_and_only_the_newest_event_per_run():
    from engine.lab import ProgressEvent
    from tutor.lab.progress import LiveProgress

    live = LiveProgress()
    assert live.take() is None
    for step in (10, 20, 30):
        live.callback(ProgressEvent("x", "a", "train", step, 100, loss=1.0 / step))
    live.callback(ProgressEvent("x", "b", "train", 10, 100, loss=0.5))
    live.callback(ProgressEvent("x", "a", "evaluate", 30, 100))
    view = live.take()
    assert view.losses == {"a": [(10, 0.1), (20, 0.05), (30, 1 / 30)], "b": [(10, 0.5)]}
    assert view.points == 4
    assert {run: e.phase for run, e in view.latest.items()} == {"a": "evaluate", "b": "train"}
    assert live.take() is None                                # nothing new since
    assert live.view().points == 4


def test_the_live_plot_draws_long_runs_from_group_means():
    from tutor.lab.report import live_loss_plot, thinned

    pts = [(10 * (i + 1), float(i % 4)) for i in range(10)]   # losses 0 1 2 3 0 1 2 3 0 1
    assert thinned(pts, 10) == pts
    # groups of 3 (ceil(10 / 4)): (0,1,2) (3,0,1) (2,3,0) (1)
    assert thinned(pts, 4) == [(30, 1.0), (60, 4 / 3), (90, 5 / 3), (100, 1.0)]
    long = {"a": [(i, 1.0 + (i % 7) / 7) for i in range(1, 20001)]}
    short = {"a": thinned(long["a"], 2 * 40)}
    assert live_loss_plot(long, 40).text() == live_loss_plot(short, 40).text()


async def test_h_after_a_cancelled_second_run_opens_that_run_s_weights():
    """Heatmaps kept showing the first run's "lab alignment" (the same name was already
    shown, so the new matrices were listed but not drawn): h after a cancelled run opened
    the previous run's weights (issue 34 §5)."""
    import numpy as np

    app = make_app(StartAt("lab", "alignment", lab_settings=_settings()), warm_up=False)
    async with app.run_test(size=(110, 34)) as pilot:
        await pilot.pause()
        screen = app.screen
        await pilot.press("enter")
        await _wait_idle(pilot, screen)
        first = screen.result.weights.copy()
        await pilot.press("h")
        await pilot.pause()
        await pilot.pause()
        assert np.array_equal(app.screen.query_one("HeatmapPanel").heatmaps[0].weights, first)
        await pilot.press("5")
        await pilot.pause()
        assert app.screen is screen
        screen.settings["alignment"] = replace(screen.settings["alignment"],
                                               train=replace(TINY, steps=100_000, seed=7))
        await _run_then_cancel(pilot, screen)
        assert "cancelled" in _text(screen.query_one("#lab-status"))
        second = screen.result.weights.copy()
        assert not np.array_equal(first, second)
        await pilot.press("h")
        await pilot.pause()
        await pilot.pause()
        panel = app.screen.query_one("HeatmapPanel")
        assert np.array_equal(panel.heatmaps[0].weights, second)  # before: the first run's
        assert np.array_equal(panel.heatmap.model.weights, second)  # and drawn


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (160, 50)])
async def test_every_experiment_is_in_the_list_at_every_size(size):
    """The list was capped at 16 lines: scaling and saturation never showed (issue 34 §5).
    Each one's name is painted, or (on a screen too short for all) reached by scrolling."""
    from tests.tui_text import screen_text
    from tutor.lab.experiments import on_screen

    app = make_app(StartAt("lab"), warm_up=False)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        seen = set()
        for exp in on_screen():
            app.screen.select(exp.name)
            await pilot.pause()
            left = [line[:33].strip() for line in screen_text(app).splitlines()]
            seen |= {e.name for e in on_screen() if e.name in left}
            assert exp.name in left, (exp.name, left)
        assert seen == {e.name for e in on_screen()}
        if size != (80, 24):  # all at once: none hidden behind a scroll
            app.screen.select(on_screen()[0].name)
            await pilot.pause()
            left = [line[:33].strip() for line in screen_text(app).splitlines()]
            assert {e.name for e in on_screen()} <= set(left)
