"""The tasks of a practice and what answering them gives back: plain data that the session
(:mod:`tutor.practice.session`) fills in and both front ends read."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tutor.marking import LETTERS, squash
from tutor.practice.answers import Mark, instructions
from tutor.practice.content import Ask, StepPlan
from tutor.practice.levels import Outcome


@dataclass(frozen=True)
class PracticeStart:
    """A practice to start as a screen opens (``attn-tutor trace NAME --practice`` on a
    terminal): the level to set (None: the stored one) and the seed of fresh numbers."""

    level: int | None = None
    seed: int | None = None


@dataclass
class Blank:
    """A value the student computes."""

    plan: StepPlan
    ask: Ask
    expected: Any
    attempts: int = 0
    hints: int = 0
    answer: str = ""
    diagnoses: list[str] = field(default_factory=list)
    state: str = "open"
    """open | solved | shown (its value was given: not solved)."""

    kind = "value"

    @property
    def done(self) -> bool:
        return self.state != "open"

    @property
    def first_try(self) -> bool:
        return self.state == "solved" and self.attempts == 1 and self.hints == 0

    @property
    def prompt(self) -> str:
        return f"{self.ask.label} = ?"

    @property
    def instructions(self) -> str:
        return instructions(self.expected)


@dataclass
class Prompt:
    """A self-explanation prompt after a step; its choices in a shuffled order."""

    plan: StepPlan
    order: tuple[int, ...] = ()
    """Shown position → index in the plan (the plan lists the right principle anywhere)."""
    choice: int | None = None
    """The shown position chosen; -1 when skipped."""

    kind = "why"

    def __post_init__(self) -> None:
        if not self.order:
            self.order = tuple(range(len(self.plan.why.choices)))

    @property
    def done(self) -> bool:
        return self.choice is not None

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(self.plan.why.choices[i] for i in self.order)

    @property
    def answer(self) -> int:
        """The shown position of the right principle."""
        return self.order.index(self.plan.why.answer)

    @property
    def right(self) -> bool:
        return self.choice == self.answer

    @property
    def prompt(self) -> str:
        return self.plan.why.prompt

    @property
    def instructions(self) -> str:
        n = len(self.plan.why.choices)
        return f"Choose a-{LETTERS[n - 1]} (or 1-{n})."


Task = Blank | Prompt


@dataclass(frozen=True)
class Feedback:
    """What the last ``submit``, ``hint`` or ``skip`` did."""

    valid: bool = True
    hint: str | None = None
    """Not an answer: why, in one line (ask again)."""
    done: bool = False
    """The task is finished (solved, shown, or a prompt answered)."""
    mark: Mark | None = None
    right: bool | None = None
    """Solved (a blank), or the right choice (a prompt)."""
    shown: str | None = None
    """The value, given after the last hint or the last wrong attempt (the blank is not solved)."""
    reason: str | None = None
    """A prompt's reason, shown whatever was chosen."""
    chosen: str | None = None
    attempts_left: int = 0
    saved: bool = True
    error: str | None = None


@dataclass(frozen=True)
class Summary:
    trace: str
    level: int
    top: int
    complete: bool
    """Every task was done (else the practice stopped early and nothing moved)."""
    outcome: Outcome | None
    new_level: int
    solved: int
    blanks: int
    right: int
    prompts: int
    saved: bool = True
    error: str | None = None
    due: datetime | None = None
    helped: bool = False
    """A blank was solved only after a hint or a wrong try."""


def choice_index(text: str, choices: tuple[str, ...]) -> int | None:
    """0-based choice from ``a``-``d``, ``1``-``4``, ``(b)`` or the choice's own text; None
    when it is none of them."""
    n = len(choices)
    s = text.strip().strip("().").lower()
    if len(s) == 1 and "a" <= s <= LETTERS[n - 1]:
        return ord(s) - ord("a")
    if s.isdigit() and 1 <= int(s) <= n:
        return int(s) - 1
    said = squash(text)
    return next((i for i, c in enumerate(choices) if said and said == squash(c)), None)
