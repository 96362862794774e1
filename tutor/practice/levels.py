"""Fading levels, backward and adaptive (Renkl et al. 2002; Atkinson, Renkl & Merrill 2003).

A trace's practice plan lists the steps the student can compute, in order. Level 0 shows
every value and asks only the self-explanation prompts; level 1 blanks the last listed
step; each level blanks one more from the end; the top level (the number of listed steps)
blanks them all: the whole problem from the inputs.

After a practice the level moves: up one after a **clean** practice (every blank solved at
the first try without a hint, every prompt answered right), down one after a **failed** one
(a blank never solved: skipped, shown by the last hint, or wrong three times), and stays
otherwise. The FSRS rating of the practice follows the same outcome.
"""

from __future__ import annotations

from enum import Enum

MAX_ATTEMPTS = 3
"""Wrong answers to one blank before its value is shown (and the blank counts as not solved)."""
HINT_RUNGS = 3
"""1: which formula; 2: the intermediate it needs; 3: the value (then the blank is not solved)."""


class Outcome(str, Enum):
    CLEAN = "clean"
    PARTIAL = "partial"
    FAILED = "failed"

    @property
    def rating(self) -> int:
        """The FSRS rating of a practice with this outcome: Good, Hard or Again."""
        return {"clean": 3, "partial": 2, "failed": 1}[self.value]


def faded(level: int, n_steps: int) -> range:
    """The 0-based positions (in the plan) of the blank steps at ``level``: the last ``level``."""
    level = max(0, min(level, n_steps))
    return range(n_steps - level, n_steps)


def next_level(level: int, top: int, outcome: Outcome) -> int:
    """The level after a practice at ``level`` with ``outcome`` (between 0 and ``top``)."""
    if outcome is Outcome.CLEAN:
        return min(level + 1, top)
    if outcome is Outcome.FAILED:
        return max(level - 1, 0)
    return max(0, min(level, top))


def stage(level: int, top: int) -> str:
    """``study`` (level 0: every value shown), ``faded`` (some blank) or ``solve`` (all blank)."""
    if level <= 0:
        return "study"
    return "solve" if level >= top else "faded"


def check_level(level: int, top: int, name: str) -> int:
    """``level`` if it is a level of trace ``name``; else ``ValueError`` (one line)."""
    if not 0 <= level <= top:
        raise ValueError(f"--level {level}: trace {name} practises at levels 0 to {top} "
                         f"(0 shows every value, {top} blanks every step)")
    return level
