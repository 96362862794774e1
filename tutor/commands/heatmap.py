"""`attn-tutor heatmap`: not built yet."""

from __future__ import annotations

NAME = "heatmap"
HELP = "Draw attention weights as a heatmap (from a trace, the lab or a file)."


def command() -> None:
    from tutor.errors import fail

    fail("`attn-tutor heatmap` is not built yet; see the open issues in the README", code=2)
