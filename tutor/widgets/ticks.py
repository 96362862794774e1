"""A selection list and a checkbox whose ticks read without colour.

Textual draws a ticked and an unticked box with the same ``X``, told apart only by colour, so
under ``NO_COLOR`` (or on a monochrome terminal) every topic looked ticked. Here a ticked box
shows ``✓`` and an unticked one a blank.
"""

from __future__ import annotations

from rich.segment import Segment
from textual.strip import Strip
from textual.widgets import Checkbox, SelectionList
from textual.widgets.option_list import OptionDoesNotExist

TICKED, UNTICKED = "✓", " "


class TickList(SelectionList):
    """A :class:`~textual.widgets.SelectionList` whose ticked entries show ``✓``."""

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)  # ▐X▌, a space, the prompt (as Textual lays a line out)
        segments = list(strip)
        try:
            option = self.get_option_at_index(self.scroll_offset.y + y)
        except OptionDoesNotExist:  # below the last option: no box on this line
            return strip
        if len(segments) < 2:
            return strip
        inner = segments[1]
        mark = TICKED if option.value in self.selected else UNTICKED
        segments[1] = Segment(mark, inner.style, inner.control)
        return Strip(segments, strip.cell_length)


class TickBox(Checkbox):
    """A :class:`~textual.widgets.Checkbox` that shows ``✓`` when ticked."""

    @property
    def BUTTON_INNER(self) -> str:  # type: ignore[override]  # noqa: N802 - Textual's name
        return TICKED if self.value else UNTICKED
