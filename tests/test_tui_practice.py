"""Practice on the TUI's trace screen: `p` starts it, answers go in an inline field, each is
marked with ✓/✗ (read without colour too) beside the right value, a wrong one is diagnosed,
later steps stay locked, Esc ends it; it fits 80×24. Waits are for conditions, never pauses
of a fixed length."""

from __future__ import annotations

import math

import pytest

from engine.mistakes import MISTAKES
from engine.traces import REGISTRY
from tui_text import screen_text, until, widget_text
from tutor.app import StartAt, make_app
from tutor.practice.tasks import PracticeStart
from tutor.screens.trace import TraceScreen
from tutor.store import practice as stored
from tutor.widgets.practice_panel import PracticePanel

E = math.exp(1 / math.sqrt(3))  # the notes' qkv example worked by hand: weights e^(1/√3), 1, 1


async def _practice(pilot, app, start: PracticeStart | None = None) -> PracticePanel:
    assert await until(pilot, lambda: isinstance(app.screen, TraceScreen) and app.screen.trace is not None)
    panel = app.screen.query_one(PracticePanel)
    if start is None:
        await pilot.press("p")
    assert await until(pilot, lambda: panel.session is not None and not panel._busy)
    return panel


async def _answer(pilot, panel: PracticePanel, text: str) -> str:
    field = panel.query_one("#practice-input")
    field.focus()
    replies = panel.replies
    field.value = text
    await pilot.press("enter")
    assert await until(pilot, lambda: panel.replies > replies and not panel._busy)
    return widget_text(panel.query_one("#practice-lines"))


async def test_p_practises_the_trace_on_screen_with_marks_and_a_diagnosis():
    app = make_app(StartAt("trace", "qkv"), warm_up=False)
    async with app.run_test(size=(100, 30)) as pilot:
        assert await until(pilot, lambda: isinstance(app.screen, TraceScreen) and app.screen.trace is not None)
        stored.save_level(app.store, "qkv", 2)  # blanks: the weights and the output
        panel = await _practice(pilot, app)
        screen = app.screen
        session = panel.session
        assert session.level == 2 and panel.display
        assert screen.page == 6  # the page of the first blank step (6: Softmax)
        page = widget_text(screen.query_one("#trace-page"))
        assert "weights" in page and "?" in page and "0.4711" not in page
        screen.query_one("#trace-pages").focus()
        await pilot.press("n")  # the step after it is locked while it is worked
        assert "comes after the step you are working on" in widget_text(screen.query_one("#trace-page"))
        said = await _answer(pilot, panel, "1, 0")  # the wrong shape: asked again
        assert "Not an answer" in said
        said = await _answer(pilot, panel, "0.5761, 0.2119, 0.2119")  # without the √3
        assert "✗ Not right: you gave weights = [0.5761, 0.2119, 0.2119]" in said
        assert MISTAKES["no-scale"].title in said and "attn-tutor lesson" in said
        said = await _answer(pilot, panel, f"{E / (E + 2):.4f}, {1 / (E + 2):.4f}, {1 / (E + 2):.4f}")
        assert "✓ Right: weights = [0.4711, 0.2645, 0.2645] (the engine: [0.4711, 0.2645, 0.2645])" in said
        assert "Why? Step 6" in said
        page = widget_text(screen.query_one("#trace-page"))
        assert "0.4711" in page  # the step, worked, once its blank is solved
        prompt = session.task
        said = await _answer(pilot, panel, "abcd"[prompt.answer])
        assert "✓ Right: " in said and "Why: " in said
        await pilot.press("escape")
        assert await until(pilot, lambda: not panel.display)
        assert panel.session is None and "comes after" not in widget_text(screen.query_one("#trace-page"))
        rows = stored.steps(app.store, "qkv")
        assert [r.name for r in rows] == ["weights", "why"] and rows[0].attempts == 2
        assert "no-scale" in rows[0].diagnoses
        assert stored.level_of(app.store, "qkv").level == 2  # stopped early: the level stays


async def test_started_from_the_command_line_and_finished(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(StartAt("trace", "scoring-compare", practice=PracticeStart(level=1)), warm_up=False)
    async with app.run_test(size=(100, 30)) as pilot:
        panel = await _practice(pilot, app, PracticeStart(level=1))
        assert panel.session.level == 1
        said = await _answer(pilot, panel, ":hint")
        assert "Hint 1 of 3: Formula: score = vᵀ tanh(W_Q Q + W_K K)" in said
        said = await _answer(pilot, panel, "0.5592")  # 0.7616 + 0.7616 − 0.9640, by hand
        assert "✓ Right" in said  # the mark, not only a colour
        said = await _answer(pilot, panel, panel.session.task.choices[panel.session.task.answer])
        assert "Practice complete." in said and "level 1 of 5 (the same)" in said
        assert not panel.query_one("#practice-input").display
        assert "✓ Right" in screen_text(app)


@pytest.mark.parametrize("size", [(80, 24)])
async def test_practice_fits_80x24(size):
    app = make_app(StartAt("trace", "masking", practice=PracticeStart(level=3)), warm_up=False)
    async with app.run_test(size=size) as pilot:
        panel = await _practice(pilot, app, PracticeStart(level=3))
        assert await until(pilot, lambda: "esc End practice" in screen_text(app).splitlines()[-1])
        # the footer can paint before the panel's first ask on a busy machine: wait for both
        assert await until(pilot, lambda: "mask[3] = ?" in screen_text(app)
                           and "Type 5 flags" in screen_text(app))
        said = await _answer(pilot, panel, "1 1 0 0 0")
        text = screen_text(app)
        assert "✗ Not right" in text and "Try again" in text
        field = panel.query_one("#practice-input")
        assert field.region.bottom <= size[1] - 1 and field.region.height >= 1


async def test_the_stats_area_shows_practice():
    from tutor.screens.stats import StatsScreen

    app = make_app(StartAt("stats"), warm_up=False)
    async with app.run_test(size=(100, 30)) as pilot:
        assert await until(pilot, lambda: isinstance(app.screen, StatsScreen))
        stored.save_level(app.store, "qkv", 2, finished=True, clean=True)
        stored.record_step(app.store, session="s", trace="qkv", level=1, seed=None, step=7,
                           name="output", answer="0.4711, 0.2645", correct=True)
        await pilot.press("r")
        assert await until(pilot, lambda: f"Practice traces: 1 of {len(REGISTRY)} practised" in
                           widget_text(app.screen.query_one("#stats-body")))
        body = widget_text(app.screen.query_one("#stats-body"))
        assert "qkv" in body and "2/4" in body and "1: 1/1 blanks" in body
