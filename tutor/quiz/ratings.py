"""The self-grades (FSRS ratings) and how an auto-marked answer becomes one.

Self-graded (free-response) items: the student picks Again / Hard / Good / Easy after seeing
the model answer. Auto-marked items get a rating from the share of their parts that were
right (:func:`rating_for_score`):

* every part right → **Good** (3);
* at least half the parts right → **Hard** (2): the student recalled the method and slipped
  on a part, so the card is counted as remembered but its interval grows only a little;
* fewer than half right (or a one-part item wrong) → **Again** (1): a lapse, asked again soon.

A single-part item is right or wrong, so it is Good or Again as before. Never Easy: the time
on a question includes reading it, and piped answers arrive instantly, so speed says little.
Plain Python: no fsrs import, so the words load cheaply.
"""

from __future__ import annotations

RATINGS: dict[int, str] = {1: "Again", 2: "Hard", 3: "Good", 4: "Easy"}
"""The self-grades (FSRS ratings) by number."""

AGAIN, HARD, GOOD, EASY = 1, 2, 3, 4

PARTIAL_RECALL = 0.5
"""The share of parts right from which a partly right answer counts as recalled (Hard)."""


def rating_for_score(score: float) -> int:
    """The FSRS rating (1–3) for an auto-marked answer with ``score`` = parts right / parts."""
    if score >= 1.0:
        return GOOD
    return HARD if score >= PARTIAL_RECALL else AGAIN
