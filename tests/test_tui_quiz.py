"""Quiz screen: answers are graded and stored, bad answers re-asked, ratings, mock timer."""

from __future__ import annotations

from tests.tui_text import widget_text
from tutor.app import StartAt, make_app
from tutor.quiz.modes import QuizStart, select
from tutor.store import open_store
from tutor.quiz.bank import load_bank
from tutor.inputs import trace_target
from tutor.screens.quiz import QuizScreen


def _right_answer(item) -> str:
    """The accepted answer of a bank question, typed as a student would."""
    q = item.question
    if q.kind == "mcq":
        return "abcde"[q.answer]
    if q.kind == "true_false":
        return "true" if q.answer else "false"
    return str(q.answer)


async def _start(pilot, app):
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, QuizScreen)
    return screen


async def test_answers_are_graded_saved_and_summarised():
    options = QuizStart(mode="practice", count=3, seed=7, generated=False, topics=("qkv",),
                        autostart=True)
    app = make_app(StartAt("quiz", quiz=options))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _start(pilot, app)
        answered = []
        while screen.state != "summary":
            if screen.state == "asking":
                item = screen.session.current
                await pilot.press(*_right_answer(item), "enter") if item.kind != "free" else None
                if item.kind == "free":
                    screen.query_one("#quiz-answer").value = "my own words"
                    await pilot.press("enter")
                answered.append(item.question_id)
            elif screen.state == "rating":
                await pilot.press("e")  # Easy
            elif screen.state == "feedback":
                assert screen.feedback.saved
                assert screen.feedback.correct in (True, None)
                await pilot.press("enter")
            await pilot.pause()
        stored = [a.question_id for a in app.store.answers()]
        assert stored == answered and len(stored) == 3
        assert all(a.correct in (True, None) for a in app.store.answers())
        assert {q.section for q in load_bank() if q.id in stored} == {"qkv"}


async def test_invalid_answer_is_reasked_with_a_hint_and_digits_stay_in_the_field():
    options = QuizStart(mode="practice", count=1, seed=1, generated=False, topics=("scoring",),
                        autostart=True)
    app = make_app(StartAt("quiz", quiz=options))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _start(pilot, app)
        item = screen.session.current
        bad = "zzz" if item.kind in ("mcq", "true_false") or item.question.is_numeric else ""
        await pilot.press("9")  # a digit typed into the answer must not switch screens
        assert app.screen is screen and screen.query_one("#quiz-answer").value == "9"
        screen.query_one("#quiz-answer").value = bad
        await pilot.press("enter")
        if bad:
            assert screen.state == "asking"
            assert str(screen.query_one("#quiz-hint").render()).strip()
        assert app.store.answers() == [] or not bad


async def test_a_wrong_choice_is_told_why_it_is_wrong():
    options = QuizStart(mode="practice", count=30, seed=5, generated=False, topics=("scoring",),
                        autostart=True)
    app = make_app(StartAt("quiz", quiz=options))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _start(pilot, app)
        while screen.session.current.kind != "mcq":
            await pilot.press("ctrl+n")
            await pilot.pause()
        q = screen.session.current.question
        wrong = next(i for i in range(len(q.choices)) if i != q.answer)
        await pilot.press("abcde"[wrong], "enter")
        await pilot.pause()
        assert screen.state == "feedback" and screen.feedback.correct is False
        shown = widget_text(screen.query_one("#quiz-feedback"))
        assert f"Why not {'abcde'[wrong]}: {q.why_wrong[wrong]}" in " ".join(shown.split())


async def test_mock_exam_shows_its_timer_and_hides_correctness():
    options = QuizStart(mode="mock", count=2, seed=3, generated=False, autostart=True)
    app = make_app(StartAt("quiz", quiz=options))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _start(pilot, app)
        assert "left" in str(screen.query_one("#quiz-status").render())
        await pilot.press(*_right_answer(screen.session.current), "enter")
        await pilot.pause()
        assert screen.state == "feedback" and screen.feedback.reveal is False
        assert app.store.cards() == []  # a mock exam leaves the schedule alone
        await pilot.press("escape")  # a mock exam asks before it is handed in
        await pilot.pause()
        assert screen.state == "feedback"
        await pilot.press("y")
        await pilot.pause()
        assert screen.state == "summary"
        exams = app.store.mock_exams()
        assert len(exams) == 1 and exams[0].answered == 1


def test_trace_target_parses_the_worked_solution_command():
    name, overrides = trace_target("attn-tutor trace scores --set Q='0.5, -0.2' --set d_k=2")
    assert name == "scores" and overrides == {"Q": [0.5, -0.2], "d_k": 2.0}
    assert trace_target("attn-tutor lesson qkv") is None


async def _to_a_free_text_item(pilot, screen):
    while screen.session.current.kind != "free":
        await pilot.press("ctrl+n")
        await pilot.pause()


async def test_a_free_text_answer_stays_beside_the_model_answer():
    """It vanished once submitted, before the student could compare it with the model answer."""
    options = QuizStart(mode="practice", count=30, seed=2, generated=False, topics=("qkv",), autostart=True)
    app = make_app(StartAt("quiz", quiz=options), warm_up=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _start(pilot, app)
        await _to_a_free_text_item(pilot, screen)
        model = screen.session.current.question.answer
        screen.query_one("#quiz-answer").value = "queries [ask], keys [answer]"  # brackets: data, not markup
        await pilot.press("enter")
        await pilot.pause()
        assert screen.state == "rating"
        shown = " ".join(widget_text(screen.query_one("#quiz-feedback")).split())
        assert "Your answer" in shown and "queries [ask], keys [answer]" in shown
        assert "Model answer" in shown and " ".join(str(model).split())[:40] in shown
        await pilot.press("g")
        await pilot.pause()
        shown = " ".join(widget_text(screen.query_one("#quiz-feedback")).split())
        assert screen.state == "feedback" and "queries [ask], keys [answer]" in shown
        assert "Saved as Good." in shown
        await pilot.press("escape")  # a session of one self-graded answer: no "0 of 0 correct"
        await pilot.pause()
        summary = " ".join(widget_text(screen.query_one("#quiz-summary")).split())
        assert "1 graded by you" in summary and "0 of 0" not in summary and "marked" not in summary


async def test_the_summary_names_items_and_offers_retry_by_key():
    """No "Practice finished (finished)", no stored ids, no `quiz --mode retry` to type."""
    options = QuizStart(mode="practice", count=30, seed=5, generated=False, topics=("scoring",), autostart=True)
    app = make_app(StartAt("quiz", quiz=options), warm_up=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _start(pilot, app)
        while screen.session.current.kind != "mcq":
            await pilot.press("ctrl+n")
            await pilot.pause()
        item = screen.session.current
        wrong = next(i for i in range(len(item.question.choices)) if i != item.question.answer)
        await pilot.press("abcde"[wrong], "enter")
        await pilot.pause()
        feedback = widget_text(screen.query_one("#quiz-feedback"))
        assert "attn-tutor" not in feedback and "--set" not in feedback
        await pilot.press("escape")
        await pilot.pause()
        summary = " ".join(widget_text(screen.query_one("#quiz-summary")).split())
        assert summary.startswith("Practice ended early, after ") and "(stopped)" not in summary
        assert item.label[:30] in summary and item.question_id not in summary
        assert "--mode" not in summary and "r asks them again now" in summary and "correct 0 of 1 marked (0%)" in summary
        await pilot.press("r")  # Retry incorrect, at once
        await pilot.pause()
        assert screen.state == "asking" and screen.session.mode == "retry"
        assert screen.session.current.question_id == item.question_id


async def test_a_generated_problem_opens_its_trace_by_key_not_by_command():
    options = QuizStart(mode="practice", count=40, seed=1, generated=True, topics=("scoring",), autostart=True)
    app = make_app(StartAt("quiz", quiz=options), warm_up=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _start(pilot, app)
        while not screen.session.current.generated:
            await pilot.press("ctrl+n")
            await pilot.pause()
        link = screen.session.current.trace_link
        while screen.state == "asking":  # any answers: the worked example follows the last part
            screen.query_one("#quiz-answer").value = "1"
            await pilot.press("enter")
            await pilot.pause()
            if screen.state == "asking" and str(screen.query_one("#quiz-hint").render()).strip():
                screen.query_one("#quiz-answer").value = "1, 1, 1"
                await pilot.press("enter")
                await pilot.pause()
        feedback = widget_text(screen.query_one("#quiz-feedback"))
        assert "t opens this worked example" in feedback and "attn-tutor trace" not in feedback
        await pilot.press("t")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen.trace_name == link.name and app.screen.overrides


async def test_a_time_limit_that_is_not_a_sensible_number_is_refused_on_the_form():
    # inf, NaN or over ten hours used to start a mock exam whose clock raised OverflowError
    for minutes in ("inf", "nan", "601", "-2"):
        app = make_app(StartAt("quiz", quiz=QuizStart(mode="mock", count=2, seed=3, generated=False)))
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            screen = app.screen
            screen.query_one("#quiz-minutes").value = minutes
            screen.start()
            await pilot.pause()
            assert screen.state == "setup", minutes
            assert "Minutes: time limit" in str(screen.query_one("#quiz-setup-error").render()), minutes
            assert app.store.mock_exams() == []


async def test_ticked_topics_carry_a_mark_that_reads_without_colour(monkeypatch):
    """issue 34 §5: a ticked and an unticked topic differed only by colour (both drew "X")."""
    from tests.tui_text import screen_text

    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(StartAt("quiz", quiz=QuizStart(topics=("qkv", "exam-decoding"))), warm_up=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        painted = screen_text(app)
        assert painted.count("▐✓▌ §") == 1 and "▐✓▌ §5 The query-key-value framework" in painted
        assert painted.count("▐ ▌ §") >= 5  # the unticked lessons in view: a blank box
        assert "▐✓▌ Numeric problems" in painted  # the checkbox, ticked by default


def _first_mock_item_kind(seed: int) -> str:
    """The kind of the first item of a two-item mock drawn with ``seed`` (chosen as the TUI
    chooses it), so a test can pick a seed that starts with the kind it needs."""
    with open_store() as store:
        chosen = select("mock", bank=load_bank(), store=store, count=2, seed=seed, generated=False)
    return chosen.items[0].kind


async def test_the_mock_review_shows_the_answer_given_and_the_explanation():
    """issue 34 §5: the review listed only ✓/✗ and the expected answer."""
    seed = next(s for s in range(200) if _first_mock_item_kind(s) == "true_false")
    options = QuizStart(mode="mock", count=2, seed=seed, generated=False, autostart=True)
    app = make_app(StartAt("quiz", quiz=options), warm_up=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _start(pilot, app)
        first = screen.session.current
        assert first.kind == "true_false"
        given = "false" if first.question.answer else "true"  # answered wrong
        screen.query_one("#quiz-answer").value = given
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert screen.state == "summary"
        shown = " ".join(widget_text(screen.query_one("#quiz-summary")).split())
        assert f'you said "{given}"' in shown
        assert " ".join(first.explanation[0].split())[:40] in shown
