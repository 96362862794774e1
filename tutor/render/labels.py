"""Sidebar entries: a short head (a number, a mark) and a title that wraps under itself.

An option such as ``12. Ties the engine recorded`` in a 30-column sidebar wraps; as plain
text its second line starts under the number. :func:`hanging` keeps it under the title, and
takes the title as data (:func:`tutor.render.safe.text`), never as markup.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from tutor.render.safe import text


def hanging(head: str | Text, title: str | Text, *, head_width: int | None = None,
            title_style: str = "") -> Table:
    """``head`` in its own column, ``title`` beside it; wrapped lines stay in the title column."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(justify="right", width=head_width, no_wrap=True)
    grid.add_column()
    grid.add_row(head if isinstance(head, Text) else text(head),
                 title if isinstance(title, Text) else text(title, title_style))
    return grid
