"""Heatmaps screen and the trace screen's heatmap modal: sources, cursor, errata."""

from __future__ import annotations

from tests.tui_text import until
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


async def test_the_list_fills_in_as_traces_build_and_the_one_asked_for_comes_first(monkeypatch):
    """On a first run every trace compiles for seconds; the screen waited for all of them (7 s
    here) before it listed any. Now each source is listed as it arrives, the one asked for is
    built first, and what the student looks at is not moved when later ones arrive."""
    import threading

    from textual.widgets import OptionList

    from engine import traces
    from engine.traces import list_traces
    from tutor.heatmap import sources

    monkeypatch.setattr(sources, "_BUILT", {})
    release, real = threading.Event(), traces.build
    asked: list[str] = []

    def build(name, overrides=None):
        asked.append(name)
        if name != "self-attention":
            assert release.wait(30), "the test never released the other traces"
        return real(name, overrides)

    monkeypatch.setattr(traces, "build", build)
    app = make_app(StartAt("heatmaps", "self-attention"), warm_up=False)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            screen = app.screen
            await until(pilot, lambda: screen.sources)
            options = screen.query_one("#heatmaps-list", OptionList)
            labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
            assert list(screen.sources) == ["self-attention"] and screen.shown == "self-attention"
            assert asked[0] == "self-attention"
            assert labels[0].startswith("self-attention")
            assert labels[-1] == f"finding attention weights… (1 of {len(list_traces())} traces)"
            release.set()
            await app.workers.wait_for_complete()
            await pilot.pause()
            every = {i.name for i in list_traces() if real(i.name).heatmaps}
            assert set(screen.sources) == every and screen.shown == "self-attention"
            ids = [options.get_option_at_index(i).id for i in range(options.option_count)]
            assert ids == [i.name for i in list_traces() if i.name in every]  # lecture order, no placeholder
            assert options.get_option_at_index(options.highlighted).id == "self-attention"
    finally:
        release.set()


async def test_a_heatmap_asked_for_while_the_list_fills_is_shown_when_it_arrives(monkeypatch):
    import threading

    from engine import traces
    from tutor.heatmap import sources

    monkeypatch.setattr(sources, "_BUILT", {})
    release, real = threading.Event(), traces.build

    def build(name, overrides=None):
        if name == "masking":
            assert release.wait(30), "the test never released masking"
        return real(name, overrides)

    monkeypatch.setattr(traces, "build", build)
    app = make_app(StartAt("heatmaps"), warm_up=False)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            screen = app.screen
            await until(pilot, lambda: screen.shown)
            first = screen.shown
            assert first is not None and "masking" not in screen.sources
            app.open_heatmap("masking")
            await pilot.pause()
            assert screen.shown == first and not app._notifications  # no "draws none" yet
            release.set()
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert screen.shown == "masking" and not app._notifications
            app.open_heatmap("bottleneck")  # every trace is through: it draws none
            await pilot.pause()
            assert screen.shown == "masking"
            assert [n.message for n in app._notifications] == [
                "The bottleneck trace has no attention weights to draw."]
    finally:
        release.set()


async def test_switching_matrices_keeps_the_keyboard_on_the_heatmap():
    """`.` replaced the focused heatmap and the focus fell to the list: the arrows then
    switched traces instead of moving the cursor (issue 34 §5)."""
    app = make_app(StartAt("heatmaps", "multi-head"), warm_up=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(pilot, app)
        screen = app.screen
        panel = screen.query_one(HeatmapPanel)
        assert len(panel.heatmaps) > 1 and screen.shown == "multi-head"
        panel.heatmap.focus()
        await pilot.pause()
        for key, index in (("full_stop", 1), ("comma", 0), ("full_stop", 1)):
            await pilot.press(key)
            await pilot.pause()
            assert panel.index == index
            assert app.focused is panel.heatmap, app.focused
        await pilot.press("down", "right")
        assert panel.heatmap.cursor == (1, 1) and screen.shown == "multi-head"
