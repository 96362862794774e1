"""`attn-tutor stats`: not built yet."""

from __future__ import annotations

NAME = "stats"
HELP = "Your progress: due cards, per-topic mastery, mock-exam history."


def command() -> None:
    from tutor.errors import fail

    fail("`attn-tutor stats` is not built yet; see the open issues in the README", code=2)
