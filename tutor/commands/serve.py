"""`attn-tutor serve`: not built yet."""

from __future__ import annotations

NAME = "serve"
HELP = "Serve the tutor in a web browser (needs the 'serve' extra)."


def command() -> None:
    from tutor.errors import fail

    fail("`attn-tutor serve` is not built yet; see the open issues in the README", code=2)
