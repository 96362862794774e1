"""What a Textual app actually draws, as plain text: the whole screen, or one widget's lines.

Tests read what reached the terminal (after markup parsing, cropping and wrapping), not what
a screen meant to show, so a value Rich dropped as a markup tag or a footer key cut at the
right edge is seen as missing.
"""

from __future__ import annotations

import io
import time

from rich.console import Console
from textual.geometry import Region
from textual.widget import Widget


def screen_text(app) -> str:
    """The whole screen as it is painted now (every layer, the footer included)."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True,
                      color_system="truecolor", record=True, legacy_windows=False, safe_box=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()


def widget_text(widget: Widget) -> str:
    """Every line of ``widget`` at its current width, scrolled out of view or not."""
    width, height = widget.size
    strips = widget.render_lines(Region(0, 0, width, height))
    return "\n".join(strip.text.rstrip() for strip in strips)


async def settle(pilot) -> None:
    """Let workers finish and the screen repaint."""
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def until(pilot, condition, timeout: float = 10.0) -> bool:
    """Pause until ``condition()`` holds (a loaded machine repaints late), checking it every
    50 ms for at most ``timeout`` seconds; its last value."""
    end = time.monotonic() + timeout
    while not condition() and time.monotonic() < end:
        await pilot.pause(0.05)
    return bool(condition())
