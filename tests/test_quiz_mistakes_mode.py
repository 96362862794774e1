"""``quiz --mode mistakes`` (issue 36 §3): after a student has made ``no-scale``, the aimed
problems are on numbers where that mistake and the right method give different answers at the
precision the question asks; with no mistakes recorded the mode says so; a quarter of ``weak``
is aimed; the plan counts recurring mistakes.

Where the aimed problem is the scaled-dot-scores family, both numbers are worked here by hand
(q·k and q·k/√d_k); elsewhere the mistake's number is the engine run with it built in.
"""

from __future__ import annotations

import math
from datetime import UTC, date, datetime

import numpy as np
from diagnosis_helpers import names, right_value, typed
from typer.testing import CliRunner

from engine import mistakes
from engine.mistakes.catalogue import MISTAKES
from tutor.cli import app
from tutor.exam.plan import plan_from_store
from tutor.quiz.bank import load_bank
from tutor.quiz.generators import generate
from tutor.quiz.modes import Item, select
from tutor.quiz.session import QuizSession
from tutor.store import open_store

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _make_no_scale(store, times: int = 2) -> None:
    """The student types the unscaled dot product on the bank's scaled-score item, through a
    quiz session, ``times`` times (the diagnosis is what gets stored)."""
    q = {x.id: x for x in load_bank()}["scoring-scaled-value"]
    for _ in range(times):
        s = QuizSession([Item(question=q)], store=store, mode="practice", seed=1)
        s.next()
        fb = s.submit("1")
        assert fb.done and fb.verdicts[0].diagnoses[0].id == "no-scale"
    assert [a.diagnoses for a in store.answers()][-1] == ("no-scale",)


def _aimed_part(item: Item):
    """(link, tolerance, check, answer) of the part the item is aimed at."""
    if item.problem is not None:
        part = item.problem.parts[item.aim.part]
        return part.link, part.tolerance, part.check, part.answer
    q = item.question
    return q.link, q.tolerance or 0.0, (lambda t: item.check(0, t)), q.answer


def test_with_no_mistakes_recorded_the_mode_says_so():
    r = CliRunner().invoke(app, ["quiz", "--plain", "--mode", "mistakes"], input="")
    assert r.exit_code == 0, r.output
    assert "No mistakes named yet" in r.output
    assert "Traceback" not in r.output
    with open_store() as store:
        sel = select("mistakes", bank=load_bank(), store=store, seed=3)
    assert sel.items == [] and "No mistakes named yet" in sel.note


def test_aimed_problems_tell_no_scale_from_the_right_method():
    with open_store(now=lambda: T0) as store:
        _make_no_scale(store)
        sel = select("mistakes", bank=load_bank(), store=store, seed=3, count=6)
    assert sel.items, sel.note
    assert len(sel.items) == 6
    for item in sel.items:
        assert item.aim is not None and item.aim.mistake == "no-scale"
        assert item.aim.title == MISTAKES["no-scale"].title
        link, tol, check, _ = _aimed_part(item)
        right = np.ravel(right_value(link))
        wrong = np.ravel(mistakes.value_of(link.computation, link.inputs, link.value, ("no-scale",)))
        # at the precision asked: outside the question's tolerance of the right value
        assert np.max(np.abs(wrong - right)) > tol + 1e-9, (item.question_id, wrong, right, tol)
        # so the student who still makes it is marked wrong and told which mistake ...
        v = check(typed(wrong, digits=4))
        assert v.correct is False and "no-scale" in names(v), (item.question_id, v.reason)
        # ... and the right answer is right
        assert check(typed(right, digits=4)).correct, item.question_id


def test_an_aimed_scores_problem_worked_by_hand():
    """On the scaled-dot-scores family the two numbers are q·k and q·k/√d_k."""
    with open_store(now=lambda: T0) as store:
        _make_no_scale(store)
        found = None
        for seed in range(12):
            sel = select("mistakes", bank=load_bank(), store=store, seed=seed, count=8)
            found = next((it for it in sel.items if it.problem is not None
                          and it.problem.family == "scaled-dot-scores"), None)
            if found:
                break
    assert found is not None, "no seed aimed a scaled-dot-scores problem"
    part = found.problem.parts[found.aim.part]
    q, K = found.problem.data["q"], found.problem.data["K"]
    dots = np.array([sum(a * b for a, b in zip(q, row)) for row in K])
    scaled = dots / math.sqrt(len(q))
    assert np.allclose(part.answer, scaled)
    assert np.max(np.abs(dots - scaled)) > part.tolerance
    assert "no-scale" in names(part.check(typed(dots)))


def test_the_feedback_says_whether_the_mistake_is_still_there():
    with open_store(now=lambda: T0) as store:
        _make_no_scale(store)
        (item,) = select("mistakes", bank=load_bank(), store=store, seed=5, count=1).items
        link, _, _, _ = _aimed_part(item)
        wrong = mistakes.value_of(link.computation, link.inputs, link.value, ("no-scale",))
        right = right_value(link)
        for text, says in ((typed(wrong, 4), "it is still there"),
                           (typed(right, 4), "you did not make it this time")):
            s = QuizSession([item], store=store, mode="mistakes", seed=5)
            s.next()
            asks = item.asks
            for i in range(len(asks)):
                fb = s.submit(text if i == item.aim.part else _filler(item, i))
            assert fb.done
            assert MISTAKES["no-scale"].title in fb.aim_line and says in fb.aim_line


def _filler(item: Item, i: int) -> str:
    part = item.problem.parts[i]
    if part.kind in ("choice", "set"):
        return part.options[0]
    return typed(np.ravel(part.answer))


def test_mistakes_mode_runs_in_plain_and_names_its_aim(monkeypatch):
    with open_store(now=lambda: T0) as store:
        _make_no_scale(store)
    r = CliRunner().invoke(app, ["quiz", "--plain", "--mode", "mistakes", "-n", "2", "--seed", "4"],
                           input=":skip\n:skip\n")
    assert r.exit_code == 0, r.output
    assert "attn-tutor quiz · mistakes · 2 questions" in r.output
    assert "Traceback" not in r.output


def test_weak_mode_gives_a_quarter_to_aimed_problems():
    with open_store(now=lambda: T0) as store:
        _make_no_scale(store)
        bank = load_bank()
        for q in bank[:10]:  # some history, so weak spots have items to rank
            store.record_answer(q.id, q.section, correct=False, rating=1, response="x")
        sel = select("weak", bank=bank, store=store, seed=2, count=8)
    aimed = [it for it in sel.items if it.aim is not None]
    assert len(aimed) == round(8 * 0.25) and all(it.aim.mistake == "no-scale" for it in aimed)
    assert len(sel.items) == 8


def test_the_plan_counts_recurring_mistakes():
    with open_store(now=lambda: T0) as store:
        _make_no_scale(store, times=1)  # once: not recurring yet
        plan = plan_from_store(store, date(2026, 3, 20), date(2026, 3, 2), 120)
        assert not [t for d in plan.days for t in d.tasks if t.kind == "mistakes"]
        _make_no_scale(store, times=1)
        plan = plan_from_store(store, date(2026, 3, 20), date(2026, 3, 2), 120)
    tasks = [t for d in plan.days for t in d.tasks if t.kind == "mistakes"]
    assert len(tasks) == 1
    (task,) = tasks
    assert "1 recurring mistake" in task.title and MISTAKES["no-scale"].title in task.title
    assert task.command == "attn-tutor quiz --mode mistakes"


def test_generated_problem_numbers_for_the_aim_are_reproducible():
    """The aimed item is an ordinary generated problem: the same (family, seed) gives the same
    numbers, so retry and the store's variant bring it back."""
    with open_store(now=lambda: T0) as store:
        _make_no_scale(store)
        sel = select("mistakes", bank=load_bank(), store=store, seed=9, count=3)
    for item in sel.items:
        if item.problem is not None:
            again = generate(item.problem.family, item.problem.seed)
            assert np.allclose(np.ravel(again.parts[item.aim.part].answer),
                               np.ravel(item.problem.parts[item.aim.part].answer))
