"""Multi-part problems are marked part by part (issue 34 §2): which parts were right, a
fractional score in the summaries, the share right in the FSRS rating, and each part's mark
in the store. Expected ratings come from the rule stated in ``tutor.quiz.ratings``."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timezone

import pytest

from tests.tui_text import widget_text
from tutor.app import StartAt, make_app
from tutor.quiz.generators import generate
from tutor.quiz.modes import Item, QuizStart
from tutor.quiz.ratings import AGAIN, GOOD, HARD, rating_for_score
from tutor.quiz.session import QuizSession
from tutor.render.quiz import counts_line
from tutor.store import open_store, schema

T0 = datetime(2027, 3, 2, 12, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(("right", "parts", "rating"), [
    (3, 3, GOOD), (2, 3, HARD), (1, 2, HARD), (1, 3, AGAIN), (0, 3, AGAIN), (1, 1, GOOD), (0, 1, AGAIN),
])
def test_the_share_right_sets_the_rating(right, parts, rating):
    assert rating_for_score(right / parts) == rating


def _two_of_three(store, mode="practice"):
    """The pooling problem with (a) and (c) right, (b) off by one."""
    problem = generate("pooling", 1)
    s = QuizSession([Item(problem=problem)], store=store, mode=mode, now=lambda: T0)
    s.next()
    for i, part in enumerate(problem.parts):
        fb = s.submit(f"{part.answer + (1 if i == 1 else 0):.4f}")
    return problem, s, fb


def test_two_of_three_parts_are_marked_saved_and_scheduled_as_such(tmp_path):
    with open_store(tmp_path / "p.sqlite3", now=lambda: T0) as store:
        problem, s, fb = _two_of_three(store)
        assert fb.done and fb.correct is False and [v.correct for v in fb.verdicts] == [True, False, True]
        assert fb.score == pytest.approx(2 / 3) and fb.partly and fb.rating == HARD
        wrong = fb.verdicts[1]
        assert wrong.given == f"{problem.parts[1].answer + 1:.4f}".rstrip("0").rstrip(".")
        (a,) = store.answers()
        assert a.parts == (True, False, True) and a.correct is False and a.rating == HARD
        summary = s.finish()
        assert summary.score == pytest.approx(2 / 3) and summary.partly == 1
        assert summary.per_topic() == {"pooling": [pytest.approx(2 / 3), 1]}
        assert "correct 0 of 1 marked, 1 partly right: score 0.67 of 1 (67%)" in counts_line(summary)


def test_a_one_part_answer_keeps_no_parts_and_a_mock_leaves_the_schedule(tmp_path):
    with open_store(tmp_path / "p.sqlite3", now=lambda: T0) as store:
        _, s, fb = _two_of_three(store, mode="mock")
        assert fb.rating is None and store.cards() == []
        summary = s.finish()
        assert summary.exam_per_topic == {"pooling": [0, 1]}  # the store keeps whole items
        assert summary.exam_scores() == {"pooling": [pytest.approx(2 / 3), 1]}


def test_a_version_2_store_gains_the_parts_column_and_keeps_its_answers(tmp_path):
    path = tmp_path / "v2.sqlite3"
    con = sqlite3.connect(path)
    for script in schema.MIGRATIONS[:2]:
        for statement in schema._statements(script):
            con.execute(statement)
    con.execute("PRAGMA user_version = 2")
    con.execute("INSERT INTO answers (question_id, topic, mode, correct, answered_at, day)"
                " VALUES ('q1', 'qkv', 'practice', 0, '2027-01-01T00:00:00.000000+00:00', '2027-01-01')")
    con.commit()
    con.close()
    with open_store(path, now=lambda: T0) as store:
        (old,) = store.answers()
        assert old.parts is None and old.score == 0.0
        store.record_answer("gen:pooling", "pooling", correct=False, rating=HARD, parts=[True, False, True])
        assert store.answers()[-1].parts == (True, False, True)
    con = sqlite3.connect(path)
    assert con.execute("SELECT parts FROM answers WHERE id = 2").fetchone()[0] == json.dumps([1, 0, 1])
    assert con.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION


def test_check_clears_unreadable_part_marks_and_keeps_the_answer(tmp_path):
    from tutor.store.check import check_store

    path = tmp_path / "p.sqlite3"
    with open_store(path, now=lambda: T0) as store:
        store.record_answer("gen:pooling", "pooling", correct=False, rating=HARD, parts=[True, False])
    con = sqlite3.connect(path)
    con.execute("UPDATE answers SET parts = '[2, \"x\"]'")
    con.commit()
    con.close()
    report = check_store(path)
    assert any("per-part marks cleared" in (p.fixed or "") for p in report.problems)
    with open_store(path) as store:
        (a,) = store.answers()
        assert a.parts is None and a.correct is False


@pytest.mark.parametrize("size", [(100, 30), (80, 24)])
async def test_the_quiz_screen_marks_each_part_readably_without_colour(size, monkeypatch):
    """"✗ Not quite. Expected: dog | 4.0174 | 4.8929" said nothing of the two right parts: each
    part now has a ✓ or ✗ (readable under NO_COLOR) and the student's value beside the answer."""
    from tests.test_tui_fit import footer_problems

    monkeypatch.setenv("NO_COLOR", "1")
    start = QuizStart(mode="practice", count=40, seed=18, generated=True, topics=("decoding",),
                      autostart=True)
    app = make_app(StartAt("quiz", quiz=start), warm_up=False)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = app.screen
        while not (screen.session.current.generated and len(screen.session.current.asks) == 3):
            await pilot.press("ctrl+n")
            await pilot.pause()
        parts = screen.session.current.problem.parts
        typed = [parts[0].answer_text.split(" (")[0], "-9", parts[2].answer_text.split(" (")[0]]
        for answer in typed:
            screen.query_one("#quiz-answer").value = answer
            await pilot.press("enter")
            await pilot.pause()
        assert screen.state == "feedback" and screen.feedback.rating == HARD
        shown = " ".join(widget_text(screen.query_one("#quiz-feedback")).split())
        assert "Partly right: 2 of 3 parts." in shown
        assert f"(a) ✓ {typed[0]}" in shown and f"(c) ✓ {typed[2]}" in shown
        assert f"(b) ✗ you gave -9; the answer is {parts[1].answer_text}" in shown
        assert not footer_problems(app)
