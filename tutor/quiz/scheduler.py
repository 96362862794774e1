"""Spaced repetition with FSRS (the ``fsrs`` package, py-fsrs 6): one card per question id.

Cards live in the progress store as ``fsrs.Card.to_dict()`` JSON; this module turns a rating
into the card's next state and reads its retrievability (the predicted probability of
recalling it now).

Ratings (:mod:`tutor.quiz.ratings`). Self-graded (free-response) items: the student picks
Again / Hard / Good / Easy after seeing the model answer. Auto-graded items (multiple choice,
true/false, fill-ins, generated problems): by the share of parts right — **all right → Good,
at least half → Hard, fewer → Again** (a one-part item: correct → Good, wrong → Again). We
do not promote fast answers to Easy: the time on a question includes reading it, and piped
(``--plain``) answers arrive instantly, so speed says little about how well a student knows
it; a correct answer that felt easy will simply be scheduled further out by FSRS after the
next Good.

Mock exams never call this module: they leave the schedule alone.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, cast

from fsrs import Card, Rating, Scheduler, State

if TYPE_CHECKING:
    from fsrs.card import CardDict

from tutor.quiz.ratings import RATINGS, rating_for_score

DESIRED_RETENTION = 0.9
"""Target probability of recall when a card comes due (FSRS's default)."""

_RATING_WORDS: dict[str, Rating] = {}
for _n, _name in RATINGS.items():  # "1", "again", "a" → Rating.Again
    for _w in (str(_n), _name.lower(), _name[0].lower()):
        _RATING_WORDS[_w] = Rating(_n)


def make_scheduler(*, fuzzing: bool = True) -> Scheduler:
    """The tutor's FSRS scheduler: default weights, 90 % retention, steps of 1 and 10 minutes.

    Args:
        fuzzing: spread intervals slightly so cards learnt together do not stay together
            (FSRS's default). Tests turn it off: the fuzz uses Python's global ``random``.
    """
    return Scheduler(
        desired_retention=DESIRED_RETENTION,
        learning_steps=(timedelta(minutes=1), timedelta(minutes=10)),
        relearning_steps=(timedelta(minutes=10),),
        maximum_interval=365,  # an exam is never more than a year away
        enable_fuzzing=fuzzing,
    )


def card_id(question_id: str) -> int:
    """A stable 53-bit integer for the question (fsrs wants an int id)."""
    return int.from_bytes(hashlib.sha1(question_id.encode()).digest()[:7], "big") >> 3


def new_card(question_id: str, at: datetime) -> Card:
    """A card never reviewed, due now."""
    return Card(card_id=card_id(question_id), due=_utc(at))


def rating_for(correct: bool | float) -> Rating:
    """The FSRS rating for an auto-graded answer: ``correct`` is right/wrong or the share of
    its parts that were right (:func:`tutor.quiz.ratings.rating_for_score`)."""
    return Rating(rating_for_score(float(correct)))


def parse_rating(text: str) -> Rating | None:
    """``1``–``4``, ``again``/``hard``/``good``/``easy`` or their first letter; else None."""
    return _RATING_WORDS.get(text.strip().lower())


def review(card: dict[str, Any] | None, question_id: str, rating: Rating | int, at: datetime,
           scheduler: Scheduler) -> dict[str, Any]:
    """The card's state after a review with ``rating`` at ``at`` (a new card if ``None``).

    A stored card that is not an fsrs card (edited by hand, another tool) starts afresh, so the
    answer is still saved; ``attn-tutor check`` rebuilds such cards from the answer history.
    """
    c = load_card(card) or new_card(question_id, at)
    updated, _log = scheduler.review_card(c, Rating(int(rating)), review_datetime=_utc(at))
    return dict(updated.to_dict())


def updater(question_id: str, rating: Rating | int, scheduler: Scheduler):
    """``update_card`` callback for :meth:`tutor.store.Store.record_answer`."""
    return lambda old, at: review(old, question_id, rating, at, scheduler)


def replay(question_id: str, reviews: list[tuple[int, datetime]],
           scheduler: Scheduler | None = None) -> dict[str, Any] | None:
    """The card a question's reviews ``[(rating, at), ...]``, oldest first, lead to.

    ``attn-tutor check`` rebuilds an unreadable card with it. Without fuzzing, so the rebuilt
    intervals are FSRS's own (the original ones may differ by the fuzz).
    """
    sch = scheduler or make_scheduler(fuzzing=False)
    card = None
    for rating, at in reviews:
        card = review(card, question_id, rating, at, sch)
    return card


def retrievability(card: dict[str, Any] | None, at: datetime, scheduler: Scheduler) -> float:
    """Predicted probability of recall at ``at`` (0 for a card never reviewed)."""
    c = load_card(card)
    if c is None:
        return 0.0
    return float(scheduler.get_card_retrievability(c, _utc(at)))


def load_card(card: dict[str, Any] | None) -> Card | None:
    """The fsrs card stored as ``card``; None when there is none or it is not a valid fsrs card."""
    if card is None:
        return None
    try:
        c = Card.from_dict(cast("CardDict", card))  # checked: a bad card raises below
        _utc(c.due)
        return c
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError):
        return None


def is_due(card: dict[str, Any], at: datetime) -> bool:
    return datetime.fromisoformat(card["due"]) <= _utc(at)


def state_name(card: dict[str, Any]) -> str:
    return State(int(card["state"])).name


def _utc(at: datetime) -> datetime:
    """fsrs insists on ``tzinfo is timezone.utc`` exactly."""
    if at.tzinfo is None:
        raise ValueError("review times must be timezone-aware")
    return at.astimezone(UTC)
