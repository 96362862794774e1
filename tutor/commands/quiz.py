"""`attn-tutor quiz`: not built yet."""

from __future__ import annotations

NAME = "quiz"
HELP = "Revise for the exam: spaced repetition, generated problems, mock exams."


def command() -> None:
    from tutor.errors import fail

    fail("`attn-tutor quiz` is not built yet; see the open issues in the README", code=2)
