"""How the tutor writes its own counts: percentages, clocks and bars (one place for each).

Numbers the engine computed are written by :func:`engine.trace.fmt_num` (traces, problems);
these are the small display formats around them.
"""

from __future__ import annotations

import math


def percent(x: float | None, decimals: int = 0) -> str:
    """``0.975`` → ``98%`` (``decimals`` places); ``—`` for a missing value."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{100 * x:.{decimals}f}%"


def clock(seconds: float) -> str:
    """``125.7`` → ``2:05``: whole minutes and seconds, the seconds cut (never rounded up),
    so a countdown shows ``0:00`` only when the time is up."""
    s = max(0, int(seconds))
    return f"{s // 60}:{s % 60:02d}"


def bar(x: float | None, width: int = 10) -> str:
    """A fraction as a ``width``-cell bar of ``█`` and ``░`` (``·`` when missing)."""
    if x is None:
        return "·" * width
    full = round(x * width)
    return "█" * full + "░" * (width - full)


def tally(right: int, total: int) -> str:
    """``3`` of ``5`` as ``███░░``: one cell per question."""
    return "█" * right + "░" * (total - right)
