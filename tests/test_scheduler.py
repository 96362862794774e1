"""FSRS scheduling through tutor.quiz.scheduler: fixed UTC times, fuzzing off."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from fsrs import Rating

from tutor.quiz import scheduler as sch

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


@pytest.fixture
def scheduler():
    return sch.make_scheduler(fuzzing=False)


def _due(card):
    return datetime.fromisoformat(card["due"])


def _graduate(scheduler, qid="q"):
    """Good, Good at the due times: through both learning steps into Review."""
    card = sch.review(None, qid, Rating.Good, T0, scheduler)
    card = sch.review(card, qid, Rating.Good, _due(card), scheduler)
    return card


def test_new_card_learning_steps_then_review(scheduler):
    card = sch.review(None, "q", Rating.Good, T0, scheduler)
    assert sch.state_name(card) == "Learning"
    assert _due(card) - T0 == timedelta(minutes=10)  # second learning step
    card = _graduate(scheduler)
    assert sch.state_name(card) == "Review"
    assert _due(card) - datetime.fromisoformat(card["last_review"]) >= timedelta(days=1)


def test_intervals_grow_after_good(scheduler):
    card = _graduate(scheduler)
    intervals = []
    for _ in range(4):
        at = _due(card)
        card = sch.review(card, "q", Rating.Good, at, scheduler)
        intervals.append(_due(card) - at)
    assert all(b > a for a, b in zip(intervals, intervals[1:])), intervals
    assert sch.state_name(card) == "Review"


def test_again_resets_to_relearning_and_shrinks_interval(scheduler):
    card = _graduate(scheduler)
    for _ in range(3):
        card = sch.review(card, "q", Rating.Good, _due(card), scheduler)
    long_interval = _due(card) - datetime.fromisoformat(card["last_review"])
    at = _due(card)
    stability_before = card["stability"]
    card = sch.review(card, "q", Rating.Again, at, scheduler)
    assert sch.state_name(card) == "Relearning"
    assert _due(card) - at == timedelta(minutes=10)  # the relearning step
    assert _due(card) - at < long_interval
    assert card["stability"] < stability_before


def test_rating_order_gives_ordered_intervals(scheduler):
    base = _graduate(scheduler)
    at = _due(base)
    due = {r: _due(sch.review(base, "q", r, at, scheduler)) for r in Rating}
    assert due[Rating.Again] < due[Rating.Hard] <= due[Rating.Good] < due[Rating.Easy]


def test_retrievability_new_is_zero_and_decays(scheduler):
    assert sch.retrievability(None, T0, scheduler) == 0.0
    card = _graduate(scheduler)
    last = datetime.fromisoformat(card["last_review"])
    r = [sch.retrievability(card, last + timedelta(days=d), scheduler) for d in (0, 1, 5, 30)]
    assert r[0] == pytest.approx(1.0)
    assert all(b < a for a, b in zip(r, r[1:]))
    # at the due date retrievability is close to the target retention (FSRS's definition)
    at_due = sch.retrievability(card, _due(card), scheduler)
    assert 0.85 <= at_due <= 0.95


def test_rating_mapping_and_parsing():
    assert sch.rating_for(True) is Rating.Good
    assert sch.rating_for(False) is Rating.Again
    for text, want in [("1", Rating.Again), ("again", Rating.Again), ("H", Rating.Hard),
                       (" good ", Rating.Good), ("e", Rating.Easy), ("4", Rating.Easy)]:
        assert sch.parse_rating(text) is want
    for bad in ("", "5", "0", "x", "goodish"):
        assert sch.parse_rating(bad) is None


def test_card_id_is_stable_and_distinct():
    assert sch.card_id("scoring-sqrt-dk") == sch.card_id("scoring-sqrt-dk")
    assert sch.card_id("a") != sch.card_id("b")
    assert 0 <= sch.card_id("gen:softmax-weights") < 2**53


def test_naive_datetime_is_refused(scheduler):
    with pytest.raises(ValueError):
        sch.review(None, "q", Rating.Good, datetime(2026, 1, 1), scheduler)
