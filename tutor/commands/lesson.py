"""`attn-tutor lesson`: not built yet."""

from __future__ import annotations

NAME = "lesson"
HELP = "Read a lesson: one per section of the lecture, plus the exam revision cards."


def command() -> None:
    from tutor.errors import fail

    fail("`attn-tutor lesson` is not built yet; see the open issues in the README", code=2)
