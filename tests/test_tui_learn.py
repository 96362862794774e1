"""Learn screen: lessons listed with marks, a lesson opens, t jumps to its trace."""

from __future__ import annotations

from tests.tui_text import until, widget_text
from tutor.app import StartAt, make_app
from tutor.screens.learn import LearnScreen
from tutor.screens.trace import TraceScreen


async def test_a_lesson_is_read_when_its_end_is_reached_not_after_a_while():
    app = make_app(StartAt("learn", "qkv"), warm_up=False)
    async with app.run_test(size=(110, 32)) as pilot:
        assert await until(pilot, lambda: isinstance(app.screen, LearnScreen)
                           and app.screen.document.startswith("# 5. The query-key-value framework"))
        screen = app.screen
        assert screen.lesson_id == "qkv"
        await pilot.pause(1.0)  # not a wait for something: a second on screen must not count
        assert "qkv" not in app.store.lessons_opened()
        options = screen.query_one("#learn-list")
        assert "·" in widget_text(options).splitlines()[4]  # §5's row, not yet ticked
        await pilot.press("enter", "end")  # into the text, then to its end
        assert await until(pilot, lambda: "qkv" in app.store.lessons_opened())
        assert await until(pilot, lambda: "✓ §5" in widget_text(options))
        await pilot.press("t")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, TraceScreen) and app.screen.trace_name == "qkv"


async def test_scrolling_halfway_does_not_mark_a_lesson_read():
    app = make_app(StartAt("learn", "scoring"), warm_up=False)
    async with app.run_test(size=(110, 32)) as pilot:
        assert await until(pilot, lambda: isinstance(app.screen, LearnScreen) and app.screen.document)
        await pilot.press("enter", "pagedown")
        scroll = app.screen.query_one("#learn-scroll")
        assert await until(pilot, lambda: 0 < scroll.scroll_y < scroll.max_scroll_y)
        assert "scoring" not in app.store.lessons_opened()


async def test_the_links_name_keys_and_h_shows_only_for_a_lesson_with_a_heatmap():
    from tests.tui_text import screen_text, until
    from tutor.content import load_lessons

    with_map = next(l for l in load_lessons() if l.heatmaps)
    without = next(l for l in load_lessons() if not l.heatmaps)
    app = make_app(StartAt("learn", with_map.id), warm_up=False)
    async with app.run_test(size=(110, 32)) as pilot:
        assert await until(pilot, lambda: "h Heatmap" in screen_text(app).splitlines()[-1])
        links = app.screen.document.split("## Links", 1)[1]
        assert "attn-tutor" not in links  # the TUI names its keys, not commands to type
        assert "**t** opens the worked example" in links and "**h** opens the heatmap" in links
        assert "exam-" not in links  # cards and lessons by the titles the list shows, not their ids
        assert all(f"§{l.section} {l.title}" in links for l in load_lessons() if l.id in with_map.related)
        app.screen.show(without.id)
        assert await until(pilot, lambda: "h Heatmap" not in screen_text(app).splitlines()[-1])


async def test_brackets_move_between_lessons():
    app = make_app(StartAt("learn", "encoder-decoder"))
    async with app.run_test(size=(110, 32)) as pilot:
        await pilot.pause()
        await pilot.press("right_square_bracket")
        assert app.screen.lesson_id == "context-vector"
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert app.screen.lesson_id == "transformer"   # wraps to the last lesson
