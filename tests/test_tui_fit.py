"""80×24 is the stated minimum: every screen, in every state, fits it.

Read from what is painted: each key the footer offers is on its last line whole ("? Help"
was cut off as "^q Qui"), and the parts that were cut before — quiz topics, heatmap
captions, the lab's ETA — are there in full.
"""

from __future__ import annotations

import pytest
from textual.widgets._footer import FooterKey

from tests.tui_text import screen_text, settle
from tutor.app import StartAt, make_app
from tutor.quiz.modes import QuizStart

SIZE = (80, 24)
MODES = ["home", "learn", "trace", "quiz", "heatmaps", "lab", "stats", "exam"]


def footer_problems(app) -> list[str]:
    """Every footer key the screen shows, as painted: ``key description`` whole on the last line."""
    last = screen_text(app).rstrip("\n").splitlines()[-1]
    keys = [k for k in app.screen.query(FooterKey) if k.display]
    problems = [f"{k.key_display} {k.description}".strip() for k in keys
                if f"{k.key_display} {k.description}".strip() not in last]
    if not app.screen.is_modal:  # a modal keeps to its own keys (Esc closes it)
        problems += [want for want in ("^q Quit",) if want not in last]
        if "? Help" not in last and "f1 Help" not in last:  # f1 where a field takes "?" as text
            problems.append("? Help")
    return [f"{type(app.screen).__name__}: {p!r} not in {last!r}" for p in problems]


@pytest.mark.parametrize("mode", MODES)
async def test_every_area_fits_80x24_with_its_footer_keys_visible(mode):
    app = make_app(StartAt(mode), warm_up=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.pause(0.2)
        assert type(app.screen).__name__ != "TooSmallScreen"
        assert not footer_problems(app)


def test_every_area_is_checked():
    """A screen added to the app is added here too (exam papers, new areas…)."""
    app = make_app(warm_up=False)
    assert set(app.mode_factories) == set(MODES), "add the new area to MODES"


async def test_a_trace_with_a_heatmap_and_its_modal_fit():
    app = make_app(StartAt("trace", "heatmap-reading"), warm_up=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not footer_problems(app)
        await pilot.press("h")
        await settle(pilot)
        assert type(app.screen).__name__ == "HeatmapModal"
        assert not footer_problems(app)
        painted = screen_text(app)
        heatmap = app.screen.query_one("Heatmap")
        from tutor.heatmap.model import sums_line

        assert " ".join(sums_line(heatmap.model).split()) in " ".join(painted.split())


async def test_the_quiz_fits_in_every_state():
    """Setup, a question, grading a free-text answer, feedback and the summary."""
    start = QuizStart(mode="practice", count=30, seed=2, generated=False, topics=("qkv",), autostart=True)
    app = make_app(StartAt("quiz", quiz=start), warm_up=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        seen = set()
        assert not footer_problems(app)  # asking
        seen.add(screen.state)
        while screen.session.current.kind != "free":
            await pilot.press("ctrl+n")
            await pilot.pause()
        screen.query_one("#quiz-answer").value = "the query picks what to look for"
        await pilot.press("enter")
        await pilot.pause()
        assert screen.state == "rating" and not footer_problems(app)
        seen.add(screen.state)
        await pilot.press("g")
        await pilot.pause()
        assert screen.state == "feedback" and not footer_problems(app)
        seen.add(screen.state)
        await pilot.press("escape")
        await pilot.pause()
        assert screen.state == "summary" and not footer_problems(app)
        seen.add(screen.state)
        await pilot.press("enter")
        await pilot.pause()
        assert screen.state == "setup" and not footer_problems(app)
        seen.add(screen.state)
        assert seen == {"asking", "rating", "feedback", "summary", "setup"}


async def test_quiz_topics_are_not_cut_at_80_columns():
    from tutor.content import load_lessons

    app = make_app(StartAt("quiz"), warm_up=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        painted = screen_text(app)
        shown = [f"§{l.section} {l.title}" for l in load_lessons()]
        visible = [line for line in painted.splitlines() if "▐" in line]
        assert not [line for line in visible if "…" in line]
        assert sum(any(title in line for line in visible) for title in shown) >= 10  # the rest scroll


async def test_the_lab_eta_is_not_cut():
    app = make_app(StartAt("lab"), warm_up=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "--:--:--" in screen_text(app)
