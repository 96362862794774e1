"""80×24 is the stated minimum: every screen, in every state, fits it.

Read from what is painted: each key the footer offers is on its last line whole ("? Help"
was cut off as "^q Qui"), and the parts that were cut before — quiz topics, heatmap
captions, the lab's ETA — are there in full.
"""

from __future__ import annotations

import pytest
from textual.widgets._footer import FooterKey

from tests.tui_text import screen_text, settle, until
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
        assert type(app.screen).__name__ != "TooSmallScreen"
        assert await until(pilot, lambda: not footer_problems(app)), footer_problems(app)


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
        assert screen.state == "asking" and not footer_problems(app)
        while screen.session.current.kind != "free":
            await pilot.press("ctrl+n")
            await pilot.pause()
        screen.query_one("#quiz-answer").value = "the query picks what to look for"
        # the key that leads to each state: submit, grade Good, end, a new quiz
        for key, state in (("enter", "rating"), ("g", "feedback"), ("escape", "summary"), ("enter", "setup")):
            await pilot.press(key)
            await pilot.pause()
            assert screen.state == state and not footer_problems(app), state


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
    """The bar shows only while (or after) a run; shown, its percentage and ETA are whole."""
    app = make_app(StartAt("lab"), warm_up=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        bar = app.screen.query_one("#lab-progress")
        assert not bar.display  # no run yet, no bar
        bar.display = True  # as a run shows it: a known total, no step done, no rate yet
        bar.update(total=100, progress=0)
        await settle(pilot)
        line = next(line for line in screen_text(app).splitlines() if "%" in line)
        assert "0%" in line and "--:--:--" in line, line


async def test_sidebar_titles_wrap_under_themselves():
    """A step title too long for the trace sidebar went on at the left edge, under its number."""
    import re

    from engine.traces import list_traces
    from tests.tui_text import widget_text

    app = make_app(StartAt("trace", "qkv"), warm_up=False)
    wrapped, problems = 0, []
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for info in list_traces():
            app.screen.load(info.name, {})
            await settle(pilot)
            lines = widget_text(app.screen.query_one("#trace-pages")).splitlines()
            for line in lines:
                if not line.strip() or re.match(r"\s*(\d+\.\s|Overview|Result)", line):
                    continue
                wrapped += 1
                if not re.match(r" {3,}\S", line):  # a continuation starts under the title
                    problems.append(f"{info.name}: {line!r}")
    assert not problems
    learn = make_app(StartAt("learn"), warm_up=False)
    async with learn.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert await until(pilot, lambda: "§13" in widget_text(learn.screen.query_one("#learn-list")))
        for line in widget_text(learn.screen.query_one("#learn-list")).splitlines():
            if line.strip() and not re.match(r"\s*[✓·] §\d+ ", line):
                wrapped += 1
                assert re.match(r" {5,}\S|\s*─", line), line  # under the title (or the separator)
    assert wrapped > 0  # some titles do wrap at 80 columns


async def test_every_input_of_every_trace_is_described_in_full_at_80x24():
    """The inputs form cut long descriptions at the right edge ("… — a vec")."""
    from engine.traces import input_specs, list_traces
    from tests.tui_text import widget_text
    from tutor.screens.trace_inputs import TraceInputs

    app = make_app(warm_up=False)  # the tutor's stylesheet: the form is a box inside the screen
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for info in list_traces():
            specs = input_specs(info.name)
            form = TraceInputs(info.name, specs, {})
            await app.push_screen(form)
            await pilot.pause()
            labels = list(form.query(".field-label"))
            room = form.query_one("#inputs-fields").scrollable_content_region.width
            assert room < SIZE[0] - 4 and all(w.outer_size.width <= room for w in labels), (info.name, room)
            shown = [" ".join(widget_text(w).split()) for w in labels]
            assert len(shown) == len(specs)
            for spec, words in zip(specs, shown):
                assert words.startswith(spec.name) and " ".join(f"{spec.description} — {spec.expected()}".split()) in words, (info.name, words)
            app.pop_screen()
            await pilot.pause()
