"""What kind of terminal we are talking to (TTY, colour, size)."""

from __future__ import annotations

import os
import sys


def is_interactive() -> bool:
    """True when both ends are a real terminal that can run the TUI (not ``TERM=dumb``)."""
    return sys.stdin.isatty() and sys.stdout.isatty() and os.environ.get("TERM", "") != "dumb"


def use_color() -> bool:
    """Colour only on a TTY, and never with ``NO_COLOR`` set or ``TERM=dumb``."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("TERM", "") == "dumb":
        return False
    return sys.stdout.isatty()
