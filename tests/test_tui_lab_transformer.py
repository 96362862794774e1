"""The Transformer experiment on the TUI's lab screen: live run, results, heads in Heatmaps, c."""

from __future__ import annotations

from dataclasses import replace

from engine.lab import BottleneckSettings, TrainSettings
from engine.lab.transformer import TransformerSettings
from tests.tui_text import until
from tutor.app import StartAt, make_app
from tutor.lab.experiments import get, on_screen, results_renderable
from tutor.lab.transformer import TransformerJob
from tutor.screens.heatmaps import HeatmapsScreen
from tutor.screens.lab import LabScreen

TINY = TransformerSettings(train=TrainSettings(steps=20, min_len=3, max_len=5, batch_size=8,
                                               lr=1e-3, lr_final=0.1, max_grad_norm=1.0),
                           d_model=8, num_heads=2, d_ff=12, warmup_steps=5, per_bucket=4,
                           parallel=False)


async def _wait_idle(pilot, screen, seconds=90.0):
    if not await until(pilot, lambda: screen.running is None, timeout=seconds):
        raise AssertionError("the lab run did not finish")


def test_the_table_offers_the_transformer_and_the_comparison():
    names = [e.name for e in on_screen()]
    assert "transformer" in names and "transformer-vs-rnn" in names
    assert get("transformer").defaults().rnn is None
    bottleneck_steps = BottleneckSettings().train.steps
    assert get("transformer-vs-rnn").defaults().rnn.train.steps == bottleneck_steps   # its own
    assert get("transformer").kernels == ("transformer lab",)   # loaded before the run starts


async def test_the_transformer_runs_live_and_its_heads_open_in_heatmaps():
    app = make_app(StartAt("lab", "transformer", lab_settings={"transformer": TransformerJob(TINY)}),
                   warm_up=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, LabScreen)
        await pilot.press("enter")
        await _wait_idle(pilot, screen)
        assert set(screen.losses) == {"transformer", "no positions"}
        res = screen.result
        assert res.runs["transformer"].steps == 20 and len(res.heads.heads) == 12
        await pilot.press("h")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, HeatmapsScreen) and "lab transformer" in app.screen.sources


async def test_c_stops_the_training_and_the_results_still_draw():
    long = TransformerJob(replace(TINY, train=replace(TINY.train, steps=100_000)))
    app = make_app(StartAt("lab", "transformer", lab_settings={"transformer": long}), warm_up=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        screen = app.screen
        await pilot.press("enter")
        await until(pilot, lambda: screen.losses, timeout=60)
        await pilot.press("c")
        await _wait_idle(pilot, screen)
        res = screen.result
        assert res.interrupted and 0 < res.runs["transformer"].steps < 100_000
        results_renderable("transformer", res, long)


async def test_the_results_plots_fit_the_pane_at_80_columns():
    from tests.tui_text import widget_text

    app = make_app(StartAt("lab", "transformer", lab_settings={"transformer": TransformerJob(TINY)}),
                   warm_up=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        await pilot.press("enter")
        await _wait_idle(pilot, screen)
        await pilot.pause()
        shown = widget_text(screen.query_one("#lab-results")).splitlines()
        plots = [line for line in shown if "┤" in line]
        assert len(plots) >= 4                                  # the accuracy and loss plots
        # a plot wider than the pane wraps: its rows then go on at the left edge, in Braille
        assert not [line for line in shown if line[:1] and 0x2800 <= ord(line[0]) <= 0x28FF]
