"""Draw a weights matrix as a heatmap that reads in any terminal.

Rows are output (query) tokens, columns are input (key) tokens, and brightness is weight.
Every cell is drawn twice over: with a background colour (Rich, a viridis-like ramp that gets
brighter as the value grows; for signed values a diverging one, see :mod:`tutor.heatmap.model`)
*and* with a character from the monochrome ramp :data:`RAMP` (:data:`SIGNED_RAMP`), so
the picture survives ``NO_COLOR``, ``TERM=dumb``, ``--ascii``, a pipe or a text file. The
colour and the plain text have the same layout; plain text is the colour version with its
styles dropped.

The numbers (shading levels, colours, argmax, whether rows sum to 1) come from
:mod:`tutor.heatmap.model`, re-exported here; this module only lays them out.

Wide matrices are split into pages of whole columns ("columns 1–19 of 50") that fit the width,
never wrapped. Column headers are written across when they fit the cell, otherwise downwards
(labels of up to :data:`VERTICAL_MAX` characters that are words: letters, digits, apostrophes
and hyphens — ``</s>`` or ``<pad>`` read down as four unrelated signs), otherwise as numbers
with a key underneath.
The largest value of each row is put in brackets, ``[@@]``.

The widget :mod:`tutor.widgets.heatmap` reuses :func:`prepare`, :func:`geometry` and the
``*_pieces`` helpers, so the TUI and the CLI draw cells the same way.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.style import Style
from rich.text import Text

from tutor.heatmap.model import (
    LEVELS,
    RAMP,
    SHADE_STYLES,
    SIGNED_RAMP,
    SIGNED_STYLES,
    SUM_TOL,
    HeatmapModel,
    HeatmapOptions,
    clean_label,
    fmt_number,
    ink_color,
    level_color,
    prepare,
    scale_words,
    shade_levels,
    sums_line,
)

__all__ = [
    "LEVELS",
    "RAMP",
    "SHADE_STYLES",
    "SIGNED_RAMP",
    "SIGNED_STYLES",
    "SUM_TOL",
    "VERTICAL_MAX",
    "Geometry",
    "HeatmapModel",
    "HeatmapOptions",
    "HeatmapRenderable",
    "cell_pieces",
    "clean_label",
    "fmt_number",
    "geometry",
    "header_piece",
    "heatmap_text",
    "ink_color",
    "layout",
    "legend",
    "level_color",
    "prepare",
    "render_heatmap",
    "row_label_piece",
    "scale_words",
    "shade_levels",
    "sums_line",
    "truncate",
    "wrap_caption",
]

VERTICAL_MAX = 8
"""Column labels up to this many characters are written downwards when they do not fit across."""
Piece = tuple[str, Style | None]
_BOLD = Style(bold=True)


def truncate(label: str, width: int, ascii: bool = False) -> str:
    """``label`` cut to ``width`` terminal cells, ending in "…" (``~`` in ASCII) when cut."""
    mark = "~" if ascii else "…"
    if cell_len(label) <= width:
        return label
    if width <= 1:
        return mark[:width]
    out, used = [], 0
    for ch in label:
        if used + cell_len(ch) > width - 1:
            break
        out.append(ch)
        used += cell_len(ch)
    return "".join(out) + mark


def _pad(text: str, width: int, align: str = "left") -> str:
    gap = max(0, width - cell_len(text))
    if align == "center":
        return " " * (gap // 2) + text + " " * (gap - gap // 2)
    if align == "right":
        return " " * gap + text
    return text + " " * gap


# --------------------------------------------------------------------------- layout

@dataclass(frozen=True)
class Geometry:
    """Where things go: label column width, cell width, header style, columns per page."""

    row_width: int
    inner: int
    headers: Literal["horizontal", "vertical", "numbered"]
    header_lines: int
    per_page: int
    max_label: int
    ascii: bool

    @property
    def cell(self) -> int:
        """A cell is its inner part plus one pad on each side (the argmax brackets)."""
        return self.inner + 2

    @property
    def prefix(self) -> int:
        """Cells start after the row labels and one space."""
        return self.row_width + 1


def geometry(model: HeatmapModel, options: HeatmapOptions, width: int) -> Geometry:
    """Choose cell and header layout for ``width`` terminal columns."""
    n_cols = model.shape[1]
    short_rows = [truncate(x, options.max_label, options.ascii) for x in model.row_labels]
    row_width = max(1, max(cell_len(x) for x in short_rows))
    base = 2
    if options.values:
        base = 2 + max(len(t) for row in model.value_texts for t in row)  # "c value"
    longest = max(cell_len(truncate(x, options.max_label, options.ascii)) for x in model.col_labels)
    room = width - row_width - 1
    mode = options.headers
    if mode == "auto":
        if longest <= base or n_cols * (longest + 2) <= room:
            mode = "horizontal"
        elif longest <= VERTICAL_MAX and all(_reads_down(x) for x in model.col_labels):
            mode = "vertical"
        else:
            mode = "numbered"
    if mode == "horizontal":
        inner, lines = max(base, longest), 1
    elif mode == "vertical":
        inner, lines = base, max(1, longest)
    else:
        inner, lines = max(base, len(str(n_cols))), 1
    per_page = max(1, room // (inner + 2))
    return Geometry(row_width, inner, mode, lines, per_page, options.max_label, options.ascii)


def _reads_down(label: str) -> bool:
    """A label that still reads as a word one character per line (not ``</s>``, ``<pad>``)."""
    return all(ch.isalnum() or ch in "'-’" for ch in label)


def row_label_piece(model: HeatmapModel, geo: Geometry, row: int, style: Style | None) -> Piece:
    """The row label, cut and padded to the label column, plus the separating space."""
    return _pad(truncate(model.row_labels[row], geo.max_label, geo.ascii), geo.row_width) + " ", style


def cell_pieces(
    model: HeatmapModel, geo: Geometry, row: int, col: int, *, values: bool, color: bool
) -> list[Piece]:
    """One cell: left pad, the shaded inner part, right pad (pads are brackets at the argmax)."""
    level = int(model.levels[row, col])
    ch = model.ramp[level]
    if values:
        inner = ch + " " + model.value_texts[row][col].rjust(geo.inner - 2)
    else:
        inner = ch * geo.inner
    left, right = ("[", "]") if model.argmax[row, col] else (" ", " ")
    if not color:
        return [(left, None), (inner, None), (right, None)]
    mark = _BOLD if left == "[" else None
    return [(left, mark), (inner, model.styles[level]), (right, mark)]


def header_piece(model: HeatmapModel, geo: Geometry, col: int, line: int, style: Style | None) -> Piece:
    """Line ``line`` of column ``col``'s header, as wide as a cell."""
    if geo.headers == "numbered":
        text = _pad(str(col + 1), geo.inner, "center")
    else:
        label = truncate(model.col_labels[col], geo.max_label, geo.ascii)
        if geo.headers == "horizontal":
            text = _pad(label, geo.inner, "center")
        else:  # vertical, bottom-aligned so every label ends just above its column
            chars = list(label)
            k = line - (geo.header_lines - len(chars))
            text = _pad(chars[k] if 0 <= k < len(chars) else "", geo.inner, "center")
    return " " + text + " ", style


def wrap_caption(text: str, width: int) -> list[str]:
    """A caption (title, status, key) in lines of at most ``width`` cells, broken at spaces;
    the shade ramp, which holds a space, stays in one piece."""
    held = text
    for n, ramp in enumerate((f"'{RAMP}'", f"'{SIGNED_RAMP}'")):
        held = held.replace(ramp, chr(n + 1) * len(ramp))  # as wide as the ramp, no space
    lines = textwrap.wrap(held, width, break_on_hyphens=False) or [""]
    for n, ramp in enumerate((f"'{RAMP}'", f"'{SIGNED_RAMP}'")):
        lines = [line.replace(chr(n + 1) * len(ramp), ramp) for line in lines]
    return lines


def _line(pieces: list[Piece]) -> Text:
    if all(style is None for _, style in pieces):
        return Text("".join(s for s, _ in pieces), no_wrap=True, overflow="ignore")
    text = Text(no_wrap=True, overflow="ignore")
    for s, style in pieces:
        text.append(s, style)
    return text


def _dash(ascii: bool) -> str:
    return "-" if ascii else "–"


def layout(model: HeatmapModel, options: HeatmapOptions, width: int) -> list[Text]:
    """The heatmap as lines of Rich :class:`~rich.text.Text` (unstyled when ``color`` is off)."""
    geo = geometry(model, options, width)
    color = options.color
    bold = Style(bold=True) if color else None
    dim = Style(dim=True) if color else None
    n_rows, n_cols = model.shape
    out: list[Text] = []
    if model.title:
        out.append(_line([(model.title, bold)]))
    starts = list(range(0, n_cols, geo.per_page))
    for page, start in enumerate(starts):
        cols = range(start, min(start + geo.per_page, n_cols))
        if page:
            out.append(Text())
        if len(starts) > 1:
            span = (f"column {start + 1}" if len(cols) == 1
                    else f"columns {start + 1}{_dash(options.ascii)}{cols[-1] + 1}")
            out.append(_line([(f"{span} of {n_cols}", dim)]))
        for line in range(geo.header_lines):
            pieces: list[Piece] = [(" " * geo.prefix, None)]
            pieces += [header_piece(model, geo, c, line, bold) for c in cols]
            out.append(_line(pieces))
        for r in range(n_rows):
            pieces = [row_label_piece(model, geo, r, bold)]
            for c in cols:
                pieces += cell_pieces(model, geo, r, c, values=options.values, color=color)
            out.append(_line(pieces))
    if options.legend:
        out.append(Text())
        out += legend(model, geo, options, width)
    return out


def legend(model: HeatmapModel, geo: Geometry, options: HeatmapOptions, width: int) -> list[Text]:
    """The key under the grid: axes, whether rows sum to 1, the shade scale, the argmax mark."""
    n_rows, n_cols = model.shape
    lines = [
        _line([(f"rows = {_count(n_rows, 'output (query) token')}, "
                f"columns = {_count(n_cols, 'input (key) token')}", None)]),
        _line([(sums_line(model), None)]),
    ]
    ramp: list[Piece] = [("shade '", None)]
    for level, ch in enumerate(model.ramp):
        ramp.append((ch, model.styles[level] if options.color else None))
    ramp.append(("' = " + scale_words(model), None))
    lines.append(_line(ramp))
    lines.append(_line([("[  ] = the largest value in its row", None)]))
    if geo.headers == "numbered":
        items = [f"{c + 1} {truncate(model.col_labels[c], 30, options.ascii)}" for c in range(n_cols)]
        lines += [_line([(w, None)]) for w in _pack(items, "columns: ", max(20, width))]
    return lines


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _pack(items: list[str], head: str, width: int) -> list[str]:
    """Items joined by three spaces into lines of at most ``width`` cells, never split."""
    lines, current, fresh = [], head, True
    for item in items:
        if not fresh and cell_len(current) + 3 + cell_len(item) > width:
            lines.append(current)
            current, fresh = "  ", True
        current += ("" if fresh else "   ") + item
        fresh = False
    return lines + [current]


# --------------------------------------------------------------------------- public API

class HeatmapRenderable:
    """A Rich renderable that lays the heatmap out for the console's width when none is fixed."""

    def __init__(self, model: HeatmapModel, options: HeatmapOptions) -> None:
        self.model = model
        self.options = options

    def lines(self, width: int) -> list[Text]:
        return layout(self.model, self.options, self.options.width or width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text("\n", no_wrap=True, overflow="ignore").join(self.lines(options.max_width))


def render_heatmap(
    weights: object,
    row_labels: Sequence[object] | None = None,
    col_labels: Sequence[object] | None = None,
    title: str = "",
    options: HeatmapOptions | None = None,
) -> HeatmapRenderable:
    """A heatmap as a Rich renderable (print it, put it in a ``Static``, export it).

    Args:
        weights: ``(R, C)`` numbers: rows are output/query tokens, columns input/key tokens.
        row_labels: ``R`` labels (default ``1..R``).
        col_labels: ``C`` labels (default ``1..C``).
        title: Printed above the grid when not empty.
        options: See :class:`HeatmapOptions`; ``width=None`` follows the console.

    Raises:
        ValueError: one line, when the matrix is not 2-D, has NaN/inf, or labels miscount.
    """
    opts = options or HeatmapOptions()
    return HeatmapRenderable(prepare(weights, row_labels, col_labels, title, opts), opts)


def heatmap_text(
    weights: object,
    row_labels: Sequence[object] | None = None,
    col_labels: Sequence[object] | None = None,
    title: str = "",
    options: HeatmapOptions | None = None,
) -> str:
    """The heatmap as plain text (no colour, trailing spaces trimmed, ``width`` default 80)."""
    opts = options or HeatmapOptions()
    model = prepare(weights, row_labels, col_labels, title, opts)
    lines = layout(model, opts, opts.width or 80)
    return "\n".join(line.plain.rstrip() for line in lines)
