"""The TUI shell: paints, help, number keys, the too-small guard, engine warm-up."""

from __future__ import annotations

from tests.tui_text import until
from tutor.app import make_app
from tutor.screens.help import HelpScreen
from tutor.screens.home import HomeScreen
from tutor.screens.too_small import TooSmallScreen


async def test_home_paints_and_engine_warms():
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        assert isinstance(app.screen, HomeScreen)
        # the warm-up starts once home has painted, then takes a while
        await until(pilot, lambda: app.engine_status.startswith("Engine: ready"), timeout=300)
        assert app.engine_status.startswith("Engine: ready")


async def test_home_paints_its_menu_before_it_opens_the_progress_store(monkeypatch):
    from textual.widgets import Static

    app = make_app(warm_up=False)
    store_open_at_frame: list[bool] = []  # one entry per frame of home
    real = HomeScreen._compositor_refresh

    def refresh(screen):
        store_open_at_frame.append(screen.app._store is not None)
        return real(screen)

    monkeypatch.setattr(HomeScreen, "_compositor_refresh", refresh)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app._store is not None, timeout=1.0)
        await pilot.pause()
        shown = str(app.screen.query_one("#home-progress", Static).render())
    assert store_open_at_frame and store_open_at_frame[0] is False
    assert shown.startswith("Lessons read: 0/13")  # a fresh store: nothing read of 12 + 1 lessons
    assert "no cards due" in shown


async def test_help_lists_global_keys_and_closes():
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        keys = [k for row, _ in app.screen._rows for k in row.split()]
        assert {"0", "1", "6", "^p", "^q"} <= set(keys)
        await pilot.press("escape")
        assert isinstance(app.screen, HomeScreen)


async def test_small_terminal_gets_a_message_and_recovers():
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.resize_terminal(60, 20)
        await pilot.pause()
        assert isinstance(app.screen, TooSmallScreen)
        await pilot.resize_terminal(90, 26)
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)


async def test_palette_reaches_lessons_and_traces():
    from tutor.palette import TutorCommands
    from tutor.screens.trace import TraceScreen

    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        provider = TutorCommands(app.screen)
        titles = [title for title, _, _ in provider._commands()]
        assert "Lesson §5: The query-key-value framework" in titles
        assert any(t.startswith("Trace beam-search") for t in titles)
        assert any(t.startswith("Quiz: Mock exam") for t in titles)
        assert any(t.startswith("Lab: bottleneck") for t in titles)
        hits = [hit async for hit in provider.search("trace pooling")]
        best = max(hits, key=lambda h: h.score)
        best.command()
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, TraceScreen) and app.screen.trace_name == "pooling"


async def test_starting_in_a_small_window_shows_the_notice_at_once():
    app = make_app(warm_up=False)
    async with app.run_test(size=(70, 20)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, TooSmallScreen)


async def test_the_engine_status_posted_while_another_area_is_open_shows_on_returning_home():
    from textual.widgets import Static

    from tutor.app import EngineStatus

    app = make_app(warm_up=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("5")                       # the lab: its own screen stack
        await pilot.pause()
        assert not isinstance(app.screen, HomeScreen)
        app.post_message(EngineStatus("Engine: ready (12.3 s to warm up)."))
        await pilot.pause()
        await pilot.press("0")
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        shown = str(app.screen.query_one("#engine-status", Static).render())
        assert "Engine: ready (12.3 s to warm up)." in shown
