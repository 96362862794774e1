"""SVG snapshots of the main screens (fixed seeds, empty temp data dir, no timed warm-up).

Regenerate after an intended change with ``pytest tests/test_snapshots.py --snapshot-update``
and look at the SVGs in ``tests/__snapshots__/`` before committing them.
"""

from __future__ import annotations

from tutor.app import StartAt, make_app
from tutor.quiz.modes import QuizStart

SIZE = (100, 30)


async def _settle(pilot):
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def test_home(snap_compare):
    assert snap_compare(make_app(warm_up=False), terminal_size=SIZE)


def test_trace_step(snap_compare):
    app = make_app(StartAt("trace", "qkv"), warm_up=False)
    assert snap_compare(app, press=["n", "n", "n"], terminal_size=SIZE, run_before=_settle)


def test_quiz_question(snap_compare):
    options = QuizStart(mode="practice", count=3, seed=11, generated=False, topics=("scoring",),
                        autostart=True)
    app = make_app(StartAt("quiz", quiz=options), warm_up=False)

    async def steady_cursor(pilot):
        await _settle(pilot)
        pilot.app.screen.query_one("#quiz-answer").cursor_blink = False  # a blink would flicker the SVG
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=steady_cursor)


def test_heatmap(snap_compare):
    app = make_app(StartAt("heatmaps", "heatmap-reading"), warm_up=False)

    async def focus_grid(pilot):
        await _settle(pilot)
        await pilot.press("enter", "down", "right")

    assert snap_compare(app, terminal_size=SIZE, run_before=focus_grid)


def test_stats(snap_compare):
    app = make_app(StartAt("stats"), warm_up=False)
    assert snap_compare(app, terminal_size=SIZE, run_before=_settle)


def test_trace_practice_80x24(snap_compare):
    """A practice on the trace screen at the minimum size: the blank step, the diagnosis of a
    wrong answer with its mark, the answer field and the footer."""
    from tutor.practice.tasks import PracticeStart
    from tutor.widgets.practice_panel import PracticePanel

    app = make_app(StartAt("trace", "qkv", practice=PracticeStart(level=2)), warm_up=False)

    async def wrong_answer(pilot):
        from tui_text import until

        await _settle(pilot)
        panel = pilot.app.screen.query_one(PracticePanel)
        assert await until(pilot, lambda: panel.session is not None)
        field = panel.query_one("#practice-input")
        field.cursor_blink = False  # a blink would flicker the SVG
        field.value = "0.64, 0.18, 0.18"
        await pilot.press("enter")
        assert await until(pilot, lambda: panel.replies == 1)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=wrong_answer)
