"""A heatmap widget with a cell cursor: the exact weight and the two tokens of any cell.

Drawn with the same cells as the CLI (:mod:`tutor.heatmap.render`): a colour per ramp level
*and* the ramp character, brackets on each row's maximum. The title and column headers stay at
the top, the row labels on the left, and a status line plus a one-line key at the bottom, while
the grid scrolls in both directions (a 50×50 matrix scrolls instead of paging).

Keys: arrows move the cursor, Home/End jump to the first/last column, PageUp/PageDown move a
screenful, Enter selects, ``v`` shows values, ``s`` switches the shading between the whole
matrix and each row. The mouse: hover shows a cell in the status line, a click moves the
cursor there and selects it.

Messages (handle them as ``on_heatmap_cursor_moved`` / ``on_heatmap_cell_selected``):
:class:`Heatmap.CursorMoved` after every cursor move, :class:`Heatmap.CellSelected` on Enter or
a click.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tutor.heatmap.render import (
    Geometry,
    HeatmapModel,
    HeatmapOptions,
    cell_pieces,
    geometry,
    header_piece,
    prepare,
    row_label_piece,
    scale_words,
    sums_line,
    wrap_caption,
)

STATUS_LINES = 2
"""The most lines the status takes (a long label or a narrow panel wraps it onto a second)."""


class Heatmap(ScrollView, can_focus=True):
    """Attention weights as a grid: rows are output (query) tokens, columns input (key) tokens."""

    COMPONENT_CLASSES = {
        "heatmap--cursor",
        "heatmap--crosshair",
        "heatmap--label-highlight",
        "heatmap--status",
        "heatmap--title",
    }

    DEFAULT_CSS = """
    Heatmap { height: 1fr; min-height: 6; }
    Heatmap > .heatmap--cursor { background: $accent; color: $text; text-style: bold; }
    Heatmap > .heatmap--crosshair { background: $accent 35%; }
    Heatmap > .heatmap--label-highlight { background: $accent; color: $text; text-style: bold; }
    Heatmap > .heatmap--status { color: $text; text-style: bold; }
    Heatmap > .heatmap--title { text-style: bold; }
    """

    BINDINGS = [
        Binding("up", "move(-1, 0)", "Up", show=False),
        Binding("down", "move(1, 0)", "Down", show=False),
        Binding("left", "move(0, -1)", "Left", show=False),
        Binding("right", "move(0, 1)", "Right", show=False),
        Binding("home", "jump_column(0)", "First column", show=False),
        Binding("end", "jump_column(-1)", "Last column", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("enter", "select", "Select cell", show=False),
        Binding("v", "toggle_values", "Values"),
        Binding("s", "toggle_scale", "Scale"),
    ]
    HELP_WORDS = {"move": "Move the cell cursor", "jump_column": "First / last column",
                  "page": "A screenful up / down", "toggle_values": "Show each cell's value",
                  "toggle_scale": "Shade by the whole matrix / by each row"}

    class _CellMessage(Message):
        """A cell of the heatmap: position, exact value and both tokens."""

        def __init__(self, heatmap: Heatmap, row: int, col: int, value: float,
                     row_label: str, col_label: str) -> None:
            super().__init__()
            self.heatmap = heatmap
            self.row = row
            self.col = col
            self.value = value
            self.row_label = row_label
            self.col_label = col_label

        @property
        def control(self) -> Heatmap:
            return self.heatmap

    class CursorMoved(_CellMessage):
        """The cursor moved to (``row``, ``col``); ``value`` is the exact weight there."""

    class CellSelected(_CellMessage):
        """The user chose a cell (Enter, or a click)."""

    cursor: reactive[tuple[int, int]] = reactive((0, 0), always_update=False)
    hover: reactive[tuple[int, int] | None] = reactive(None)
    show_values: reactive[bool] = reactive(False)
    scale: reactive[str] = reactive("matrix")

    def __init__(
        self,
        weights: object,
        row_labels: Sequence[object] | None = None,
        col_labels: Sequence[object] | None = None,
        *,
        title: str = "",
        values: bool = False,
        scale: str = "matrix",
        kind: str = "auto",
        max_label: int = 12,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
        disabled: bool = False,
    ) -> None:
        """Raises ``ValueError`` (one line) for a matrix the renderer cannot draw."""
        super().__init__(name=name, id=id, classes=classes, disabled=disabled)
        self._options = HeatmapOptions(values=values, scale=scale, kind=kind, max_label=max_label)  # type: ignore[arg-type]
        self._source = (weights, row_labels, col_labels, title)
        self.model: HeatmapModel = prepare(weights, row_labels, col_labels, title, self._options)
        self._geo: Geometry = geometry(self.model, self._options, 80)
        self.set_reactive(Heatmap.show_values, values)
        self.set_reactive(Heatmap.scale, scale)
        self._relayout()

    @classmethod
    def from_heatmap_data(cls, data: object, **kwargs: object) -> Heatmap:
        """From an ``engine.trace.HeatmapData`` (title, weights, row_labels, col_labels, kind)."""
        return cls(data.weights, data.row_labels, data.col_labels, title=data.title,  # type: ignore[attr-defined]
                   kind=data.kind, **kwargs)  # type: ignore[attr-defined, arg-type]

    # ----------------------------------------------------------------- data

    def set_data(self, weights: object, row_labels: Sequence[object] | None = None,
                 col_labels: Sequence[object] | None = None, title: str | None = None) -> None:
        """Show a new matrix (the lab calls this as training goes); the cursor stays if it fits."""
        title = self.model.title if title is None else title
        self._source = (weights, row_labels, col_labels, title)
        self._rebuild()

    def _rebuild(self) -> None:
        self._options = replace(self._options, values=self.show_values, scale=self.scale)  # type: ignore[arg-type]
        self.model = prepare(*self._source, self._options)
        n_rows, n_cols = self.model.shape
        row, col = self.cursor
        self.set_reactive(Heatmap.cursor, (min(row, n_rows - 1), min(col, n_cols - 1)))
        self._relayout()
        self.refresh()
        self.call_after_refresh(self._scroll_to_cell, *self.cursor)

    def _relayout(self) -> None:
        width = self._view.width or 80
        self._geo = geometry(self.model, self._options, width)
        n_rows, n_cols = self.model.shape
        geo = self._geo
        grid = n_cols * geo.cell
        view = max(geo.cell, width - geo.prefix)
        # pad the width so the furthest scroll is a whole number of cells: the last column shows
        slack = view % geo.cell if grid > view else 0
        self.virtual_size = Size(geo.prefix + grid + slack, self._top + n_rows + self._bottom)

    @property
    def _view(self) -> Size:
        """The size of the grid's window: the content area less any scrollbars."""
        return self.scrollable_content_region.size

    @property
    def _top(self) -> int:
        return len(self._title_rows()) + self._geo.header_lines

    def _title_rows(self) -> list[str]:
        """The title, wrapped to the width (a long one is not cut)."""
        return wrap_caption(self.model.title, self._width) if self.model.title else []

    @property
    def _width(self) -> int:
        return max(20, self._view.width or 80)

    @property
    def _status_lines(self) -> int:
        """1 when the longest status this matrix can have fits the width, else 2 (kept fixed,
        so the grid does not jump as the cursor moves)."""
        return 1 if self._longest_status() <= self._width else STATUS_LINES

    def _longest_status(self) -> int:
        m = self.model
        if getattr(self, "_longest_of", None) is not m:  # once per matrix, not per repaint
            n_rows, n_cols = m.shape
            where = len(f"mouse row {n_rows}/{n_rows}, column {n_cols}/{n_cols}: ")
            self._longest_of, self._longest = m, where + m.longest_description()
        return self._longest

    def _key_rows(self) -> list[str]:
        """The key as lines that fit: one when it all fits, else the shade scale then what the
        rows sum to, each wrapped (never cut: a caption is part of what the map says)."""
        width = self._width
        if len(self.key_text) <= width:
            return [self.key_text]
        scale = f"shade '{self.model.ramp}' = {scale_words(self.model)}"
        return wrap_caption(scale, width) + wrap_caption(sums_line(self.model), width)

    @property
    def _bottom(self) -> int:
        return self._status_lines + len(self._key_rows())

    def on_resize(self, event: events.Resize) -> None:
        self._relayout()

    # ----------------------------------------------------------------- cursor

    def validate_cursor(self, value: tuple[int, int]) -> tuple[int, int]:
        n_rows, n_cols = self.model.shape
        return (max(0, min(value[0], n_rows - 1)), max(0, min(value[1], n_cols - 1)))

    def watch_cursor(self, old: tuple[int, int], new: tuple[int, int]) -> None:
        self._scroll_to_cell(*new)
        self.refresh()
        self.post_message(self.CursorMoved(self, new[0], new[1], *self._cell_info(*new)))

    def watch_hover(self) -> None:
        self.refresh()

    def watch_show_values(self) -> None:
        self._rebuild()

    def watch_scale(self) -> None:
        self._rebuild()

    def _cell_info(self, row: int, col: int) -> tuple[float, str, str]:
        m = self.model
        return float(m.weights[row, col]), m.row_labels[row], m.col_labels[col]

    @property
    def first_column(self) -> int:
        """The leftmost column drawn: horizontal scrolling moves by whole cells."""
        return int(self.scroll_offset.x) // self._geo.cell

    def _scroll_to_cell(self, row: int, col: int) -> None:
        geo = self._geo
        width, height = self._view
        cols = max(1, (width - geo.prefix) // geo.cell)
        rows = max(1, height - self._top - self._bottom)
        first_col, first_row = self.first_column, int(self.scroll_offset.y)
        first_col = min(max(first_col, col - cols + 1), col)
        first_row = min(max(first_row, row - rows + 1), row)
        self.scroll_to(first_col * geo.cell, first_row, animate=False, force=True, immediate=True)

    def action_move(self, rows: int, cols: int) -> None:
        self.hover = None
        self.cursor = (self.cursor[0] + rows, self.cursor[1] + cols)

    def action_jump_column(self, col: int) -> None:
        self.cursor = (self.cursor[0], col if col >= 0 else self.model.shape[1] - 1)

    def action_page(self, direction: int) -> None:
        visible = max(1, self._view.height - self._top - self._bottom)
        self.cursor = (self.cursor[0] + direction * visible, self.cursor[1])

    def action_select(self) -> None:
        row, col = self.cursor
        self.post_message(self.CellSelected(self, row, col, *self._cell_info(row, col)))

    def action_toggle_values(self) -> None:
        self.show_values = not self.show_values

    def action_toggle_scale(self) -> None:
        self.scale = "row" if self.scale == "matrix" else "matrix"

    # ----------------------------------------------------------------- mouse

    def cell_at(self, x: int, y: int) -> tuple[int, int] | None:
        """The (row, col) under content offset (x, y), or ``None`` off the grid."""
        geo = self._geo
        n_rows, n_cols = self.model.shape
        grid_bottom = self._view.height - self._bottom
        if x < geo.prefix or not self._top <= y < grid_bottom:
            return None
        row = int(self.scroll_offset.y) + y - self._top
        col = self.first_column + (x - geo.prefix) // geo.cell
        return (row, col) if row < n_rows and col < n_cols else None

    def on_mouse_move(self, event: events.MouseMove) -> None:
        offset = event.get_content_offset(self)
        self.hover = None if offset is None else self.cell_at(offset.x, offset.y)

    def on_leave(self, event: events.Leave) -> None:
        self.hover = None

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        cell = None if offset is None else self.cell_at(offset.x, offset.y)
        if cell is not None:
            self.cursor = cell
            self.action_select()

    # ----------------------------------------------------------------- status

    @property
    def status_text(self) -> str:
        """What the status line says: the hovered cell if any, else the cursor's."""
        row, col = self.hover if self.hover is not None else self.cursor
        n_rows, n_cols = self.model.shape
        where = "mouse" if self.hover is not None else "cursor"
        return (f"{where} row {row + 1}/{n_rows}, column {col + 1}/{n_cols}: "
                f"{self.model.describe_cell(row, col)}")

    @property
    def key_text(self) -> str:
        """The one-line key: what the rows are, and how shades map to values."""
        return f"shade '{self.model.ramp}' = {scale_words(self.model)} · {sums_line(self.model)}"

    # ----------------------------------------------------------------- drawing

    def render_line(self, y: int) -> Strip:
        width, height = self._view
        base = self.rich_style
        top = self._top
        bottom = self._bottom
        if y >= height - bottom:
            line = y - (height - bottom)
            if line < self._status_lines:
                status = wrap_caption(self.status_text, self._width)
                if len(status) > self._status_lines:  # only a label longer than the panel gets here
                    status[self._status_lines - 1] += " …"
                text = status[line] if line < len(status) else ""
                return self._text_strip(text, base + self.get_component_rich_style("heatmap--status"), width)
            return self._key_strip(width, base, line - self._status_lines)
        if y < top:
            titles = self._title_rows()
            if y < len(titles):
                return self._text_strip(
                    titles[y], base + self.get_component_rich_style("heatmap--title"), width
                )
            return self._header_strip(y - len(titles), width, base)
        row = int(self.scroll_offset.y) + y - top
        if row >= self.model.shape[0]:
            return Strip.blank(width, base)
        return self._row_strip(row, width, base)

    def _text_strip(self, text: str, style: Style, width: int) -> Strip:
        return Strip([Segment(text, style)]).adjust_cell_length(width, style).crop(0, width)

    def _key_strip(self, width: int, base: Style, line: int = 0) -> Strip:
        rows = self._key_rows()
        text = rows[line] if line < len(rows) else ""
        if line or not text.startswith("shade '"):
            return self._text_strip(text, base, width)
        head = len("shade '")  # the first line starts with the ramp, drawn in its shades
        segments = [Segment("shade '", base)]
        ramp, styles = self.model.ramp, self.model.styles
        segments += [Segment(ch, base + styles[k]) for k, ch in enumerate(ramp)]
        segments.append(Segment(text[head + len(ramp):], base))
        return Strip(segments).adjust_cell_length(width, base).crop(0, width)

    def _scrolled(self, fixed: list[Segment], cells: list[Segment], width: int, base: Style) -> Strip:
        geo = self._geo
        x = self.first_column * geo.cell
        grid = Strip(cells).crop(x, x + max(0, width - geo.prefix))
        return Strip(fixed + list(grid)).adjust_cell_length(width, base)

    def _header_strip(self, line: int, width: int, base: Style) -> Strip:
        geo, model = self._geo, self.model
        highlight = base + self.get_component_rich_style("heatmap--label-highlight")
        cells = []
        for col in range(model.shape[1]):
            text, _ = header_piece(model, geo, col, line, None)
            on = col == self.cursor[1]
            cells.append(Segment(text[0], base))
            cells.append(Segment(text[1:-1], highlight if on else base + Style(bold=True)))
            cells.append(Segment(text[-1], base))
        return self._scrolled([Segment(" " * geo.prefix, base)], cells, width, base)

    def _row_strip(self, row: int, width: int, base: Style) -> Strip:
        geo, model = self._geo, self.model
        cur_row, cur_col = self.cursor
        label, _ = row_label_piece(model, geo, row, None)
        label_style = base + (self.get_component_rich_style("heatmap--label-highlight") if row == cur_row
                              else Style(bold=True))
        fixed = [Segment(label[:-1], label_style), Segment(" ", base)]
        cursor_style = base + self.get_component_rich_style("heatmap--cursor")
        cross_style = base + self.get_component_rich_style("heatmap--crosshair")
        hover = self.hover
        cells = []
        for col in range(model.shape[1]):
            (left, mark), (inner, shade), (right, _) = cell_pieces(
                model, geo, row, col, values=self.show_values, color=True)
            if (row, col) == (cur_row, cur_col):
                pad = cursor_style
                left, right = ("[", "]") if left == "[" else (">", "<")
            elif row == cur_row or col == cur_col or (row, col) == hover:
                pad = cross_style + (mark or Style())
            else:
                pad = base + (mark or Style())
            cells += [Segment(left, pad), Segment(inner, base + shade), Segment(right, pad)]
        return self._scrolled(fixed, cells, width, base)

