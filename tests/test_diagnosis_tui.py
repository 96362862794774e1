"""Issue 36 §3 in the TUI: the quiz screen and the paper panel show the diagnosis inline, fit
80×24, and under NO_COLOR a mark (✗, a score) — not only colour — tells right from wrong.

The planted numbers are worked by hand: q·k for the unscaled score; log10 losses for the
paper's sequence loss.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from diagnosis_helpers import typed
from tui_text import screen_text, until, widget_text

import tutor.screens.quiz as quiz_screen
from engine.mistakes.catalogue import MISTAKES
from tutor.app import StartAt, make_app
from tutor.exam.numbers import make
from tutor.exam.paper import ExamStart
from tutor.quiz import bank as quiz_bank
from tutor.quiz.generators import generate
from tutor.quiz.modes import Item, QuizStart, Selection
from tutor.widgets.paper_panel import PaperPanel

SIZES = [(80, 24), (100, 30)]
NO_SCALE = MISTAKES["no-scale"].title


def _quiz_app(monkeypatch, items):
    monkeypatch.setattr(quiz_screen, "select", lambda *a, **k: Selection(list(items), "", 1))
    start = QuizStart(mode="practice", count=len(items), seed=1, generated=True, autostart=True)
    return make_app(StartAt("quiz", quiz=start), warm_up=False)


def _fits(app) -> list[str]:
    """Lines of the painted screen wider than the terminal, and a footer cut off."""
    from test_tui_fit import footer_problems

    width = app.size[0]
    wide = [line for line in screen_text(app).splitlines() if len(line.rstrip()) > width]
    return wide + footer_problems(app)


@pytest.mark.parametrize("size", SIZES)
async def test_quiz_screen_names_the_mistake_inline(size, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    q = {x.id: x for x in quiz_bank.load_bank()}["scoring-scaled-value"]
    app = _quiz_app(monkeypatch, [Item(question=q)])
    async with app.run_test(size=size) as pilot:
        screen = app.screen
        assert await until(pilot, lambda: screen.state == "asking")
        screen.query_one("#quiz-answer").value = "1"  # q·k = 0 + 0 + 1, before the 1/√3
        await pilot.press("enter")
        assert await until(pilot, lambda: screen.state == "feedback")
        await pilot.pause()
        shown = " ".join(widget_text(screen.query_one("#quiz-feedback")).split())
        assert shown.startswith("✗ Not quite. You gave 1.")  # a mark, not only red
        assert f"Mistake: {NO_SCALE} — it gives 1." in shown
        assert "√3" in shown and '§8 scoring, "' in shown
        painted = screen_text(app)
        assert "✗ Not quite." in painted and f"Mistake: {NO_SCALE}" in painted  # on screen, not scrolled away
        assert not _fits(app), _fits(app)


@pytest.mark.parametrize("size", SIZES)
async def test_quiz_screen_right_answer_has_a_tick_and_no_mistake(size, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    q = {x.id: x for x in quiz_bank.load_bank()}["scoring-scaled-value"]
    app = _quiz_app(monkeypatch, [Item(question=q)])
    async with app.run_test(size=size) as pilot:
        screen = app.screen
        assert await until(pilot, lambda: screen.state == "asking")
        screen.query_one("#quiz-answer").value = "0.577"
        await pilot.press("enter")
        assert await until(pilot, lambda: screen.state == "feedback")
        shown = " ".join(widget_text(screen.query_one("#quiz-feedback")).split())
        assert shown.startswith("✓ Correct.") and "Mistake" not in shown


@pytest.mark.parametrize("size", SIZES)
async def test_quiz_screen_names_the_mistake_in_one_part_of_a_generated_problem(size, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    problem = generate("scaled-dot-scores", 11)
    q, K = problem.data["q"], problem.data["K"]
    dots = [sum(a * b for a, b in zip(q, row)) for row in K]
    scaled = np.array(dots) / math.sqrt(len(q))
    assert np.max(np.abs(np.array(dots) - scaled)) > problem.parts[0].tolerance
    app = _quiz_app(monkeypatch, [Item(problem=problem)])
    async with app.run_test(size=size) as pilot:
        screen = app.screen
        assert await until(pilot, lambda: screen.state == "asking")
        for answer in (typed(dots), problem.parts[1].answer):
            screen.query_one("#quiz-answer").value = answer
            await pilot.press("enter")
            await pilot.pause()
        assert await until(pilot, lambda: screen.state == "feedback")
        shown = " ".join(widget_text(screen.query_one("#quiz-feedback")).split())
        assert "Partly right: 1 of 2 parts." in shown
        assert "(a) ✗ you gave" in shown and "(b) ✓" in shown
        assert f"Mistake: {NO_SCALE}" in shown
        assert not _fits(app), _fits(app)


def _sequence_loss_paper_answers(seed: int):
    data = make("sequence-loss", seed).data
    P, y = data["P"], data["y"]
    each = [round(-math.log10(P[t, y[t]]), 3) for t in range(3)]
    return each


@pytest.mark.parametrize("size", SIZES)
async def test_paper_panel_names_the_mistake_and_follow_through(size, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(StartAt("exam", exam=ExamStart(questions=("xq-sequence-loss",))), warm_up=False)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        panel = app.screen.query_one(PaperPanel)
        panel.query_one("#paper-minutes").value = "0"
        await pilot.click("#paper-start")
        assert await until(pilot, lambda: panel.state == "answer")
        (question,) = panel.run.paper.questions
        each = _sequence_loss_paper_answers(question.seed)
        panel.query_one("#paper-answer").value = ", ".join(f"{x:.3f}" for x in each)  # log10
        await pilot.press("enter")
        assert await until(pilot, lambda: panel.state == "feedback")
        shown = " ".join(widget_text(panel.query_one("#paper-feedback")).split())
        assert "(a) 0/2 — Not quite" in shown  # the score says wrong without colour
        assert f"Mistake: {MISTAKES['ce-log10'].title}" in shown
        assert not _fits(app), _fits(app)
        await pilot.click("#paper-next")
        assert await until(pilot, lambda: panel.state == "answer")
        panel.query_one("#paper-answer").value = f"{sum(each):.3f}"  # the sum of their own
        await pilot.press("enter")
        assert await until(pilot, lambda: panel.state == "feedback")
        shown = " ".join(widget_text(panel.query_one("#paper-feedback")).split())
        assert "(b) 1/1 — Follow-through" in shown and "error carried forward" in shown
        await pilot.click("#paper-next")
        assert await until(pilot, lambda: panel.state == "answer")
        panel.query_one("#paper-answer").value = f"{sum(each):.3f}"  # not divided by 3
        await pilot.press("enter")
        assert await until(pilot, lambda: panel.state == "feedback")
        shown = " ".join(widget_text(panel.query_one("#paper-feedback")).split())
        assert "(c) 0/1 — Not quite" in shown
        assert "Worked from your own (b) = " in shown
        assert f"Mistake: {MISTAKES['ce-sum-not-mean'].title}" in shown
        assert not _fits(app), _fits(app)
