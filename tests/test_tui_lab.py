"""Lab screen: runs an experiment in a worker with live progress, cancels, draws results."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from engine import lab
from tutor.app import StartAt, make_app
from tutor.lab.experiments import results_renderable
from tutor.screens.lab import LabScreen
from tutor.screens.heatmaps import HeatmapsScreen

TINY = lab.TrainSettings(min_len=3, max_len=5, steps=30, batch_size=8)


def _settings():
    return {
        "alignment": replace(lab.AlignmentSettings(), train=TINY, hidden_dim=8, embed_dim=4, attn_dim=4, test_len=4),
        "bottleneck": replace(lab.BottleneckSettings(), train=replace(TINY, steps=400), hidden_dim=8, embed_dim=4,
                              attn_dim=4, per_bucket=5, parallel=False),
        "teacher-forcing": replace(lab.TeacherForcingSettings(), train=TINY, hidden_dim=8, embed_dim=4, attn_dim=4,
                                   per_bucket=5, parallel=False),
    }


async def _wait_idle(pilot, screen, seconds=60.0):
    for _ in range(int(seconds / 0.1)):
        if screen.running is None:
            return
        await pilot.pause(0.1)
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


async def test_cancel_stops_a_long_run_and_reports_what_it_has():
    settings = _settings()
    settings["teacher-forcing"] = replace(settings["teacher-forcing"], train=replace(TINY, steps=100_000))
    app = make_app(StartAt("lab", "teacher-forcing", lab_settings=settings), warm_up=False)
    async with app.run_test(size=(110, 34)) as pilot:
        await pilot.pause()
        screen = app.screen
        await pilot.press("enter")
        for _ in range(300):
            if screen.losses:
                break
            await pilot.pause(0.1)
        await pilot.press("c")
        await _wait_idle(pilot, screen)
        assert screen.result.interrupted
        assert all(len(run.curve.losses) < 100_000 for run in screen.result.runs.values())


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
