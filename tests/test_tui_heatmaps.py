"""Heatmaps screen and the trace screen's heatmap modal: sources, cursor, errata."""

from __future__ import annotations

from tutor.app import StartAt, make_app
from tutor.screens.heatmap_view import HeatmapModal
from tutor.screens.heatmaps import HeatmapsScreen
from tutor.widgets.heatmap import Heatmap
from tutor.widgets.heatmap_panel import HeatmapPanel


async def _settle(pilot, app):
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_heatmaps_screen_lists_traces_and_moves_the_cursor():
    app = make_app(StartAt("heatmaps", "heatmap-reading"))
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, HeatmapsScreen)
        assert {"qkv", "heatmap-reading"} <= set(screen.sources)
        assert screen.wanted == "heatmap-reading"
        panel = screen.query_one(HeatmapPanel)
        assert panel.errata, "the notes' heatmap carries its erratum"
        heatmap = panel.heatmap
        heatmap.focus()
        await pilot.press("down", "right")
        assert heatmap.cursor == (1, 1)
        # rows are the target words, columns the source words, as the notes draw them
        row, col = heatmap.model.row_labels[1], heatmap.model.col_labels[1]
        assert col == "feet" and row in {"ai", "mal"}


async def test_trace_screen_opens_its_heatmap_modal():
    app = make_app(StartAt("trace", "qkv"))
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(pilot, app)
        await pilot.press("h")
        await pilot.pause()
        assert isinstance(app.screen, HeatmapModal)
        assert app.screen.query_one(Heatmap).has_focus
        await pilot.press("escape")
        assert not isinstance(app.screen, HeatmapModal)


async def test_the_heatmap_modal_has_its_own_help():
    """A modal cuts the app's keys off: ? did nothing over a trace's heatmap."""
    from tests.tui_text import screen_text
    from tutor.screens.help import HelpScreen

    app = make_app(StartAt("trace", "qkv"), warm_up=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await _settle(pilot, app)
        await pilot.press("h")
        await pilot.pause()
        assert "? Help" in screen_text(app).rstrip("\n").splitlines()[-1]
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen) and app.screen._title == "Heatmap"
        rows = dict(app.screen._rows)
        assert rows["↑ ↓ ← →"] == "Move the cell cursor" and rows["esc q"] == "Close"
        assert "0" not in rows and "^p" not in rows  # the areas and the palette do not work here
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, HeatmapModal)
