"""`attn-tutor trace`: not built yet."""

from __future__ import annotations

NAME = "trace"
HELP = "Step through a worked example number by number (--plain, --json, --set)."


def command() -> None:
    from tutor.errors import fail

    fail("`attn-tutor trace` is not built yet; see the open issues in the README", code=2)
