"""Every trace practises at every level: right answers solve every blank, and a number made
with a catalogued mistake is diagnosed as that mistake. Fresh numbers keep every trace's
fused check.

The right answers are the trace's own values typed to four decimals (the test is that the
practice marks its own trace's numbers right at every level); a mistake's number comes from
running the mistake (:func:`engine.mistakes.run_with`), rounded to three significant digits
as a student would.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.mistakes import mistakes_for, run_with
from engine.trace import fmt_num
from engine.traces import REGISTRY, build
from tutor.practice.answers import is_flags, is_words, tolerance_for
from tutor.practice.content import load_plan
from tutor.practice.levels import Outcome, faded
from tutor.practice.session import Blank, PracticeSession, Prompt, fresh_numbers
from tutor.quiz.marking import LETTERS
from tutor.store import open_store
from tutor.store.practice import steps

TRACES = list(REGISTRY)


@pytest.fixture
def store(tmp_path):
    with open_store(tmp_path / "p.sqlite3") as s:
        yield s


def typed(value, digits: int = 4) -> str:
    """A value as a student types it: numbers to ``digits`` decimals, flags as 1/0, words."""
    if is_words(value):
        return value if isinstance(value, str) else ", ".join(value)
    arr = np.asarray(value)
    if is_flags(value):
        return " ".join("1" if x else "0" for x in arr.ravel())
    rows = arr.reshape(-1, arr.shape[-1]) if arr.ndim == 2 else [arr.ravel()]
    return "; ".join(", ".join(fmt_num(float(x), digits) for x in row) for row in rows)


def student(value) -> str:
    """A number rounded to three significant digits the way it is typed (``0.200``, and a
    whole number in full)."""
    arr = np.asarray(value, dtype=float)
    rows = arr.reshape(-1, arr.shape[-1]) if arr.ndim == 2 else [arr.ravel()]
    return "; ".join(", ".join(_sig3(x) for x in row) for row in rows)


def _sig3(x: float) -> str:
    if x == int(x):
        return str(int(x))
    return np.format_float_positional(x, precision=3, unique=False, fractional=False, trim="k")


def solve(session: PracticeSession) -> None:
    """Answer every task right: each blank with its value, each prompt with its principle."""
    while (task := session.task) is not None:
        if isinstance(task, Blank):
            fb = session.submit(typed(task.expected))
            assert fb.valid and fb.right, (task.ask.label, fb.hint, fb.mark)
        else:
            fb = session.submit(LETTERS[task.answer])
            assert fb.right and fb.reason


@pytest.mark.parametrize("name", TRACES)
def test_every_level_with_right_answers(name, store):
    plan = load_plan(name)
    trace = build(name)
    assert plan.top >= 2, "every trace practises at two levels at least besides 0"
    for level in range(plan.top + 1):
        session = PracticeSession(trace, plan, level, store=store)
        blank_steps = {plan.steps[i].step for i in faded(level, plan.top)}
        asked = [t for t in session.tasks if isinstance(t, Blank)]
        assert {t.plan.step for t in asked} == blank_steps
        assert len(asked) == sum(len(plan.steps[i].asks) for i in faded(level, plan.top))
        prompts = [t for t in session.tasks if isinstance(t, Prompt)]
        assert len(prompts) == (plan.top if level == 0 else level)
        display = session.display_trace()
        for step in blank_steps:  # blank until solved
            sp = next(s for s in plan.steps if s.step == step)
            assert all(display.steps[step - 1].values[a.name] == "?" for a in sp.asks)
        solve(session)
        summary = session.finish()
        assert summary.complete and summary.outcome is Outcome.CLEAN
        assert summary.new_level == min(level + 1, plan.top) and summary.saved
        assert session.display_trace().steps == trace.steps  # everything shown at the end


def _planted(name: str, session: PracticeSession):
    """The first blank (last step first) and catalogued mistake whose number differs from the
    right one by more than the blank's tolerance; None if no blank has one."""
    blanks = [t for t in session.tasks if isinstance(t, Blank)]
    for task in reversed(blanks):
        if is_words(task.expected) or is_flags(task.expected):
            continue
        key = session.catalogue_name(task)
        for mistake in mistakes_for(name, key.split("@")[0]):
            wrong = run_with(name, None, [mistake.id]).get(key)
            if wrong is None:
                continue
            part = task.ask.pick(wrong) if task.ask.index else wrong
            if np.shape(part) != np.shape(task.expected) or not np.all(np.isfinite(part)):
                continue
            typed_value = np.asarray([float(_sig3(x)) for x in np.ravel(part)])
            gap = np.max(np.abs(typed_value - np.ravel(task.expected)))
            if gap > 5 * (tolerance_for(task.expected) or 0.01):
                return task, mistake, part
    return None


@pytest.mark.parametrize("name", TRACES)
def test_a_catalogued_mistake_is_diagnosed_as_itself(name, store):
    plan = load_plan(name)
    session = PracticeSession(build(name), plan, plan.top, store=store)
    planted = _planted(name, session)
    assert planted is not None, f"{name}: no blank of its practice has a catalogued mistake"
    task, mistake, value = planted
    while session.task is not task:  # the blanks before it, answered right
        current = session.task
        session.submit(typed(current.expected) if isinstance(current, Blank)
                       else LETTERS[current.answer])
    fb = session.submit(student(value))
    assert fb.valid and not fb.right
    named = {i for ids in fb.mark.diagnosis_ids for i in ids.split("+")}
    assert mistake.id in named, (task.ask.label, mistake.id, fb.mark.named)
    assert not [r for r in steps(store) if r.name == task.ask.label]  # saved once it is done
    session.skip()
    [row] = [r for r in steps(store) if r.name == task.ask.label]
    assert mistake.id in "+".join(row.diagnoses) and not row.correct and row.attempts == 1


@pytest.mark.parametrize("name", TRACES)
def test_fresh_numbers_keep_the_fused_check_and_practise(name, store):
    plan = load_plan(name)
    seen = []
    for seed in range(3):
        fresh = fresh_numbers(name, plan, seed)
        assert fresh is not None, f"{name}: no draw of seed {seed} fits its practice plan"
        inputs, trace, local = fresh
        assert trace.disagreements() == [] and trace.to_dict()["agrees"]
        seen.append(repr(sorted(inputs.items(), key=lambda kv: kv[0])))
    assert len(set(seen)) > 1  # new numbers, not one draw three times
    session = PracticeSession(trace, local, local.top, store=store, overrides=inputs, seed=2)
    solve(session)
    assert session.finish().outcome is Outcome.CLEAN
