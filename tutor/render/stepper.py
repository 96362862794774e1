"""Step through a trace in the terminal: n / Enter / → next, b / ← back, q / Esc quit."""

from __future__ import annotations

import os
import sys

from rich.console import Console

from engine.trace import Trace
from tutor.render.rich_view import pages

KEYS_HELP = "n/Enter next · b back · g first · G last · q quit"
NEXT = {"n", "N", " ", "\r", "\n", "\x1b[C", "j", "l"}
BACK = {"b", "B", "p", "\x1b[D", "k", "h", "\x7f"}
QUIT = {"q", "Q", "\x1b", "\x03", "\x04"}


def read_key() -> str:
    """One key press from the terminal (an arrow key arrives as its escape sequence)."""
    import termios
    import tty

    fd = sys.stdin.fileno()
    old = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        return os.read(fd, 8).decode(errors="replace")
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)


def step_through(trace: Trace, console: Console | None = None, read=read_key) -> int:
    """Show the trace one page at a time until the reader quits or passes the last page.

    Returns the number of pages visited (for tests, which pass their own ``read``).
    """
    console = console or Console()
    shown = pages(trace)
    i = 0
    visited = 1
    while True:
        console.clear()
        console.print(shown[i])
        console.print(f"[dim]page {i + 1}/{len(shown)} · {KEYS_HELP}[/]")
        key = read()
        if key in QUIT:
            return visited
        if key in NEXT:
            if i == len(shown) - 1:
                return visited
            i += 1
        elif key in BACK:
            i = max(i - 1, 0)
        elif key == "g":
            i = 0
        elif key == "G":
            i = len(shown) - 1
        else:
            continue
        visited += 1
