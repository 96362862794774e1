"""What kind of terminal we are talking to (TTY, colour, size)."""

from __future__ import annotations

import os
import sys


def is_interactive() -> bool:
    """True when both ends are a real terminal that can run the TUI (not ``TERM=dumb``)."""
    return why_not_interactive() is None


def why_not_interactive() -> str | None:
    """In one line, why the full-screen tutor cannot open here (``None`` when it can)."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return "input or output is not a terminal (a pipe or a file), so the full-screen tutor cannot open"
    if os.environ.get("TERM", "") == "dumb":
        return ("TERM=dumb: this terminal cannot draw the full-screen tutor (use a terminal "
                "with cursor control, or unset TERM=dumb)")
    return None


def use_color() -> bool:
    """Colour only on a TTY, and never with ``NO_COLOR`` set or ``TERM=dumb``."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("TERM", "") == "dumb":
        return False
    return sys.stdout.isatty()
