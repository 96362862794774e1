"""Learn screen: lessons listed with marks, a lesson opens, t jumps to its trace."""

from __future__ import annotations

from tutor.app import StartAt, make_app
from tutor.screens import learn
from tutor.screens.learn import LearnScreen
from tutor.screens.trace import TraceScreen


async def test_open_lesson_mark_read_and_jump_to_trace(monkeypatch):
    monkeypatch.setattr(learn, "READ_AFTER_S", 0.05)
    app = make_app(StartAt("learn", "qkv"))
    async with app.run_test(size=(110, 32)) as pilot:
        await pilot.pause(0.3)
        screen = app.screen
        assert isinstance(screen, LearnScreen) and screen.lesson_id == "qkv"
        assert screen.document.startswith("# 5. The query-key-value framework")
        assert "qkv" in app.store.lessons_opened()
        options = screen.query_one("#learn-list")
        assert "✓" in str(options.get_option("qkv").prompt)
        await pilot.press("t")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, TraceScreen) and app.screen.trace_name == "qkv"


async def test_brackets_move_between_lessons():
    app = make_app(StartAt("learn", "encoder-decoder"))
    async with app.run_test(size=(110, 32)) as pilot:
        await pilot.pause()
        await pilot.press("right_square_bracket")
        assert app.screen.lesson_id == "context-vector"
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert app.screen.lesson_id == "transformer"   # wraps to the last lesson
