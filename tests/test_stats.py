"""`attn-tutor stats`: the numbers, the text report and the --json schema."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone

import pytest
from typer.testing import CliRunner

from tutor.cli import app
from tutor.quiz import bank as bank_mod
from tutor.quiz import scheduler as sch
from tutor.quiz.bank import EXAM_TOPICS, SECTIONS, Question
from tutor.quiz.generators import FAMILIES
from tutor.quiz.progress import compute
from tutor.render.stats import render_text
from tutor.store import open_store

NOW = datetime(2026, 3, 9, 12, 0, tzinfo=timezone.utc)

BANK = [
    Question(id="a", kind="mcq", section="scoring", prompt="?", answer=0, explanation=".",
             difficulty=1, choices=("x", "y", "z"), exam_topics=("exam-scaled-dot",)),
    Question(id="b", kind="true_false", section="scoring", prompt="?", answer=True,
             explanation=".", difficulty=1),
    Question(id="c", kind="free", section="pooling", prompt="?", answer="m", explanation=".",
             difficulty=1),
]


@pytest.fixture(autouse=True)
def utc_tz(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _fill(store):
    fuzzless = sch.make_scheduler(fuzzing=False)

    def answer(qid, topic, ok, at, rating=None, mode="practice", mock_id=None):
        r = rating or int(sch.rating_for(ok))
        store.record_answer(qid, topic, correct=ok, rating=None if mode == "mock" else r,
                            mode=mode, at=at, mock_id=mock_id,
                            update_card=None if mode == "mock" else sch.updater(qid, r, fuzzless))

    answer("a", "scoring", True, NOW - timedelta(days=30))             # before the 7-day window
    answer("a", "scoring", True, NOW - timedelta(days=6, hours=1))     # first day of the window
    answer("a", "scoring", False, NOW - timedelta(days=2))
    answer("b", "scoring", True, NOW - timedelta(days=2))
    m = store.start_mock(4, 600, seed=1, at=NOW - timedelta(days=1))
    answer("b", "scoring", False, NOW - timedelta(days=1), mode="mock", mock_id=m)
    store.finish_mock(m, answered=1, correct=0, per_topic={"scoring": [0, 4]},
                      status="timed-out", at=NOW - timedelta(days=1) + timedelta(minutes=10))
    answer("c", "pooling", None, NOW - timedelta(hours=1), rating=3)
    store.mark_lesson_opened("scoring", at=NOW - timedelta(days=3))


def test_compute(tmp_path):
    with open_store(tmp_path / "p.sqlite3", now=lambda: NOW) as store:
        _fill(store)
        data = compute(store, BANK, goal=2)
    assert data["schema"] == 1 and data["generated_at"] == "2026-03-09T12:00:00Z"
    assert data["due"]["total"] == 3 + len(FAMILIES)
    assert data["due"]["seen"] == 3 and data["due"]["unseen"] == len(FAMILIES)
    topics = {t["id"]: t for t in data["topics"]}
    assert [t["id"] for t in data["topics"]] == list(SECTIONS)
    assert [t["id"] for t in data["exam_topics"]] == list(EXAM_TOPICS)
    scoring = topics["scoring"]
    # a: T, F, T(old); b: T, F(mock) → 5 graded, 3 correct
    assert (scoring["graded"], scoring["correct"], scoring["answers"]) == (5, 3, 5)
    assert scoring["accuracy"] == pytest.approx(0.6)
    assert scoring["seen"] == 2
    assert scoring["questions"] == 2 + sum(f.section == "scoring" for f in FAMILIES.values())
    pooling = topics["pooling"]
    assert pooling["graded"] == 0 and pooling["accuracy"] is None and pooling["answers"] == 1
    assert topics["decoding"]["accuracy"] is None and topics["decoding"]["mastery"] == 0
    assert topics["transformer"]["questions"] == 0 and topics["transformer"]["mastery"] is None
    # mastery: mean retrievability, unseen items 0, and so are items whose latest graded answer
    # is wrong — a (practice, day -2) and b (the mock, day -1) both are, so scoring has none
    assert scoring["mastery"] == 0
    assert 0 < pooling["mastery"] <= 1 / pooling["questions"]
    exam = {t["id"]: t for t in data["exam_topics"]}
    assert exam["exam-scaled-dot"]["graded"] == 3  # only question "a" is tagged
    # due: everything answered in practice was reviewed at least an hour ago
    assert data["due"]["now"] + data["due"]["next_24h"] <= 3
    [m] = data["mock_exams"]
    assert (m["questions"], m["answered"], m["correct"], m["status"]) == (4, 1, 0, "timed-out")
    assert m["score"] == 0 and m["per_topic"] == {"scoring": {"correct": 0, "questions": 4}}
    daily = data["daily"]
    assert [d["date"] for d in daily["days"]] == [f"2026-03-0{d}" for d in range(3, 10)]
    assert [d["answers"] for d in daily["days"]] == [1, 0, 0, 0, 2, 1, 1]
    assert daily["average"] == pytest.approx(5 / 7, abs=0.01) and daily["met"] is False
    assert data["lessons_opened"] == {"scoring": "2026-03-06T12:00:00Z"}


def test_due_counts_follow_the_schedule(tmp_path):
    fuzzless = sch.make_scheduler(fuzzing=False)
    with open_store(tmp_path / "p.sqlite3") as store:
        store.record_answer("a", "scoring", correct=True, rating=3, at=NOW - timedelta(minutes=30),
                            update_card=sch.updater("a", 3, fuzzless))   # due 20 min ago
        store.record_answer("b", "scoring", correct=False, rating=1, at=NOW,
                            update_card=sch.updater("b", 1, fuzzless))   # due in 1 min
        data = compute(store, BANK, now=NOW)
    assert data["due"]["now"] == 1 and data["due"]["next_24h"] == 1
    assert {t["id"]: t["due"] for t in data["topics"]}["scoring"] == 1


def test_empty_store_text_report(tmp_path):
    with open_store(tmp_path / "p.sqlite3", now=lambda: NOW) as store:
        lines = render_text(compute(store, BANK))
    text = "\n".join(lines)
    assert text.startswith("Due now: 0")
    assert "Mock exams: none yet" in text
    # no answers yet: no verdict (it said "below target" before the student had begun)
    assert "Daily goal: 20 answers a day (no answers yet" in text and "below target" not in text


def test_cli_json_and_text(monkeypatch):
    monkeypatch.setattr(bank_mod, "load_bank", lambda root=None: list(BANK))
    with open_store() as store:
        store.record_answer("a", "scoring", correct=True, rating=3,
                            update_card=sch.updater("a", 3, sch.make_scheduler()))
    r = CliRunner().invoke(app, ["stats", "--json", "--goal", "1"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert set(data) == {"schema", "generated_at", "store", "due", "topics", "exam_topics",
                         "mock_exams", "papers", "paper_topics", "mistakes", "daily",
                         "lessons_opened", "practice"}
    assert data["store"]["persistent"] is True and data["daily"]["goal"] == 1
    assert data["daily"]["days"][-1]["answers"] == 1
    r = CliRunner().invoke(app, ["stats"])
    assert r.exit_code == 0 and "scoring" in r.output and "Mock exams" in r.output


def test_cli_warns_about_a_damaged_store(_data_home, monkeypatch):
    monkeypatch.setattr(bank_mod, "load_bank", lambda root=None: list(BANK))
    (_data_home / "progress.sqlite3").write_bytes(b"garbage" * 100)
    r = CliRunner().invoke(app, ["stats", "--json"])
    assert r.exit_code == 0
    assert "attn-tutor: warning: the progress file" in r.stderr
    assert "moved to progress.sqlite3.damaged-" in json.loads(r.stdout)["store"]["warnings"][0]


def test_a_wrong_latest_answer_counts_zero_mastery(tmp_path):
    fuzzless = sch.make_scheduler(fuzzing=False)
    with open_store(tmp_path / "p.sqlite3", now=lambda: NOW) as store:
        store.record_answer("c", "pooling", correct=False, rating=1, mode="practice", at=NOW,
                            update_card=sch.updater("c", 1, fuzzless))
        failed = {t["id"]: t for t in compute(store, BANK)["topics"]}["pooling"]["mastery"]
        store.record_answer("c", "pooling", correct=True, rating=3, mode="practice", at=NOW,
                            update_card=sch.updater("c", 3, fuzzless))
        fixed = {t["id"]: t for t in compute(store, BANK)["topics"]}["pooling"]["mastery"]
    assert failed == 0 and fixed > 0


def test_papers_are_shown_by_topic_and_over_time(tmp_path):
    from tutor.store import papers as pp

    with open_store(tmp_path / "p.sqlite3", now=lambda: NOW) as store:
        for earned in (2, 5):  # two papers on the same part, one better than the other
            pid = pp.start_paper(store, 2700.0, 1)
            pp.record_part(store, pid, "xq-sampling-sets", "a", "decoding", variant=1,
                           status="right" if earned == 5 else "wrong", earned=earned, marks=5)
            pp.record_part(store, pid, "xq-sequence-loss", "b", "training", variant=2,
                           status="follow-through", earned=1, marks=3)
            pp.finish_paper(store, pid)
        data = compute(store, BANK)
    assert [(p["earned"], p["marks"], p["score"]) for p in data["papers"]] == [
        (3, 8, 0.375), (6, 8, 0.75)]
    assert data["paper_topics"] == [{"id": "decoding", "earned": 7, "marks": 10, "score": 0.7},
                                    {"id": "training", "earned": 2, "marks": 6, "score": 0.3333}]
    text = "\n".join(render_text(data))
    assert "3/8 (38%)" in text and "6/8 (75%)" in text and "decoding 7/10" in text


@pytest.mark.parametrize(("answers", "verdict", "words"),
                         [(20, "on target", "20 answers"), (5, "below target", "5 answers"),
                          (1, "below target", "1 answer")])
def test_day_one_is_judged_on_day_ones_answers(tmp_path, answers, verdict, words):
    """On the first day the 7-day average divided by 7: 20 answers read as 2.86/day, "below target"."""
    with open_store(tmp_path / "p.sqlite3", now=lambda: NOW) as store:
        for k in range(answers):
            store.record_answer("a", "scoring", correct=True, rating=3, at=NOW - timedelta(minutes=k))
        data = compute(store, BANK, goal=20)
    daily = data["daily"]
    assert daily["days_counted"] == 1 and daily["average"] == answers
    assert daily["met"] is (answers >= 20)
    text = "\n".join(render_text(data))
    assert f"Daily goal: {words} today, your first day (goal 20, {verdict})" in text


def test_the_first_week_averages_over_the_days_since_the_first_answer(tmp_path):
    with open_store(tmp_path / "p.sqlite3", now=lambda: NOW) as store:
        store.record_answer("a", "scoring", correct=True, rating=3, at=NOW - timedelta(days=2))
        store.record_answer("a", "scoring", correct=True, rating=3, at=NOW)
        data = compute(store, BANK, goal=1)
    assert data["daily"]["days_counted"] == 3
    assert data["daily"]["average"] == pytest.approx(2 / 3, abs=0.01)  # 1 + 0 + 1 over 3 days
