"""Practice in `stats` (by trace and level) and in the plan (study → faded → solve, one stage a
day, after the trace's lesson; a solved trace again when FSRS has it due)."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta, timezone

from typer.testing import CliRunner

from engine.traces import REGISTRY, build
from tutor.cli import app
from tutor.exam.plan import EXAM_LESSONS, TracePractice, build_plan, plan_from_store
from tutor.practice.content import load_plan
from tutor.practice.levels import Outcome
from tutor.practice.progress import compute
from tutor.practice.session import Blank, PracticeSession
from tutor.marking import LETTERS
from tutor.store import open_store
from tutor.store import practice as stored

T0 = datetime(2027, 3, 1, 9, 0, tzinfo=timezone.utc)


def _practise_qkv(store, level: int, skip_first: bool = False) -> None:
    session = PracticeSession(build("qkv"), load_plan("qkv"), level, store=store)
    first = True
    while (task := session.task) is not None:
        if isinstance(task, Blank):
            if skip_first and first:
                session.skip()
            else:
                session.submit(", ".join(f"{x:.4f}" for x in task.expected))
            first = False
        else:
            session.submit(LETTERS[task.answer])
    session.finish()


def test_stats_show_practice_by_trace_and_by_level():
    with open_store(now=lambda: T0) as store:
        _practise_qkv(store, 2)
        _practise_qkv(store, 3, skip_first=True)
        data = compute(store, now=T0)
    qkv = next(t for t in data["traces"] if t["trace"] == "qkv")
    # level 2 clean → 3; at 3 a blank was skipped → failed → back to 2
    assert (qkv["level"], qkv["top"], qkv["stage"]) == (2, 4, "faded")
    assert (qkv["practices"], qkv["clean"]) == (2, 1)
    assert (qkv["blanks"], qkv["blanks_right"], qkv["prompts"], qkv["prompts_right"]) == (5, 4, 5, 5)
    assert qkv["due"] is not None and data["practised"] == 1 and len(data["traces"]) == len(REGISTRY)
    assert [(r["level"], r["blanks"], r["blanks_right"]) for r in data["by_level"]] == [(2, 2, 2), (3, 3, 2)]
    r = CliRunner().invoke(app, ["stats", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["practice"]["practised"] == 1
    text = CliRunner().invoke(app, ["stats"]).output
    assert f"Practice traces: 1 of {len(REGISTRY)} practised" in text and "qkv" in text and "2/4" in text


def _trace_tasks(plan):
    return [(d.date, t) for d in plan.days for t in d.tasks if t.kind == "trace"]


def test_the_plan_takes_each_trace_from_study_to_solve_a_stage_a_day():
    practice = {"qkv": TracePractice(0, 4, "qkv"), "scores": TracePractice(2, 5, "self-attention"),
                "pooling": TracePractice(3, 3, "pooling", due=date(2027, 1, 3)),
                "masking": TracePractice(2, 2, "scoring")}  # solved, not due: nothing
    plan = build_plan(date(2027, 1, 8), date(2027, 1, 1), 60, practice=practice,
                      lessons_read=EXAM_LESSONS, mastery={l: 0.9 for l in EXAM_LESSONS})
    tasks = _trace_tasks(plan)
    by_trace = {}
    for day, task in tasks:
        by_trace.setdefault(task.trace, []).append((day, task))
    assert [t.command for _, t in by_trace["qkv"]] == [
        "attn-tutor trace qkv --practice --level 0", "attn-tutor trace qkv --practice",
        "attn-tutor trace qkv --practice --level 4"]
    assert [t.minutes for _, t in by_trace["qkv"]] == [5, 10, 10]
    days = [d for d, _ in by_trace["qkv"]]
    assert days == sorted(set(days))  # one stage a day, in order
    assert [t.command for _, t in by_trace["scores"]] == [
        "attn-tutor trace scores --practice", "attn-tutor trace scores --practice --level 5"]
    assert [t.command for _, t in by_trace["pooling"]] == ["attn-tutor trace pooling --practice --level 3"]
    assert "masking" not in by_trace and not plan.unplaced
    assert plan.to_dict()["days"][0]["tasks"][0]["trace"] in ("qkv", "scores", "pooling")


def test_a_trace_waits_for_its_lesson():
    read = [l for l in EXAM_LESSONS if l != "qkv"]
    plan = build_plan(date(2027, 1, 4), date(2027, 1, 1), 25, practice={"qkv": TracePractice(0, 4, "qkv")},
                      lessons_read=read, mastery={l: 0.9 for l in EXAM_LESSONS})
    # the lesson first, then the study the same day; the other stages a day each
    assert [[t.kind for t in d.tasks] for d in plan.days] == [["lesson", "trace"], ["trace"],
                                                              ["trace"], []]
    # 15 minutes a day: the lesson never fits, so no stage of its trace comes before it
    plan = build_plan(date(2027, 1, 4), date(2027, 1, 1), 15, practice={"qkv": TracePractice(0, 4, "qkv")},
                      lessons_read=read, mastery={l: 0.9 for l in EXAM_LESSONS})
    assert not any(d.tasks for d in plan.days)
    assert [t.kind for t in plan.unplaced] == ["lesson", "trace", "trace", "trace"]


def test_the_plan_from_the_store_counts_practice_cards_as_practice_not_reviews(tmp_path):
    now = datetime(2027, 3, 1, 9, 0, tzinfo=timezone.utc)
    with open_store(tmp_path / "p.sqlite3", now=lambda: now) as store:
        _practise_qkv(store, 4)
        assert store.card(stored.item_id("qkv")) is not None
        plan = plan_from_store(store, date(2027, 3, 20), date(2027, 3, 1), 90)
    reviews = [t for d in plan.days for t in d.tasks if t.kind == "review"]
    assert reviews == []  # the practice card is not a quiz review
    qkv = [t for _, t in _trace_tasks(plan) if t.trace == "qkv"]
    assert [t.command for t in qkv] == ["attn-tutor trace qkv --practice --level 4"]  # due again
    assert len({t.trace for _, t in _trace_tasks(plan)} | {t.trace for t in plan.unplaced
                                                         if t.kind == "trace"}) == len(REGISTRY)
    assert Outcome.CLEAN.rating == 3 and (now + timedelta(days=1)) > now
