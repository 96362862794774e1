"""How the tutor writes numbers: the one public number-formatting module of ``tutor/``.

Values (a problem's numbers, an exam's working, a marking message, a tolerance) are written
by :mod:`engine.format`, re-exported here so the tutor has one place to import them from:
:func:`number` (``0.4621``), :func:`exact` (up to ten significant digits), :func:`vector`
(``[a, b]``), :func:`matrix` (``[a, b; c, d]``, the one matrix notation) and :func:`value`
(any of them, by shape). The engine writes its traces' step text with the same functions.

Around them, the tutor's own counts: :func:`percent`, :func:`clock`, :func:`bar`, :func:`tally`.
"""

from __future__ import annotations

import math

from engine.format import exact, matrix, number, value, vector

__all__ = ["bar", "clock", "exact", "matrix", "number", "percent", "tally", "value", "vector"]


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


def tally(right: float, total: float) -> str:
    """``3`` of ``5`` as ``███░░``: one cell per question; a partly right one (``2.5``) is a
    half-shaded cell ``▒``."""
    full = int(math.floor(right + 1e-9))
    part = 1 if right - full > 1e-9 else 0
    return "█" * full + "▒" * part + "░" * max(0, int(round(total)) - full - part)
