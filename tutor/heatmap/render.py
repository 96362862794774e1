"""Draw a weights matrix as a heatmap that reads in any terminal.

Rows are output (query) tokens, columns are input (key) tokens, and brightness is weight.
Every cell is drawn twice over: with a background colour (Rich, a viridis-like ramp that gets
brighter as the value grows) *and* with a character from the monochrome ramp :data:`RAMP`, so
the picture survives ``NO_COLOR``, ``TERM=dumb``, ``--ascii``, a pipe or a text file. The
colour and the plain text have the same layout; plain text is the colour version with its
styles dropped.

Shading (see :func:`shade_levels`): a value ``v`` is mapped to ``t = (v - lo) / (hi - lo)``
and then to one of ``len(RAMP)`` equal bins, ``level = floor(10 t)`` (``t = 1`` is the top
bin). For attention weights (rows sum to 1) ``lo = 0`` and ``hi`` is the matrix maximum, so a
pattern shows even when 50 keys share the mass; for raw scores ``lo``/``hi`` are the minimum and
maximum, so negative scores work. ``scale="row"`` takes ``lo``/``hi`` per row instead.

Wide matrices are split into pages of whole columns ("columns 1–19 of 50") that fit the width,
never wrapped. Column headers are written across when they fit the cell, otherwise downwards
(labels of up to :data:`VERTICAL_MAX` characters), otherwise as numbers with a key underneath.
The largest value of each row is put in brackets, ``[@@]``.

The widget :mod:`tutor.widgets.heatmap` reuses :func:`prepare`, :func:`geometry` and the
``*_pieces`` helpers, so the TUI and the CLI draw cells the same way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.style import Style
from rich.text import Text

RAMP = " .:-=+*#%@"
"""The monochrome ramp, darkest (lowest) first: ten levels, one character each."""

LEVELS = len(RAMP)
VERTICAL_MAX = 8
"""Column labels up to this many characters are written downwards when they do not fit across."""
SUM_TOL = 0.01
"""Rows whose sums are within this of 1 count as summing to 1 (weights printed to 2 places)."""

Scale = Literal["matrix", "row"]
Kind = Literal["auto", "weights", "scores"]
Headers = Literal["auto", "horizontal", "vertical", "numbered"]
Piece = tuple[str, Style | None]

# viridis at 0, 1/4, 1/2, 3/4, 1: dark purple → blue → teal → green → yellow (lightness rises)
_ANCHORS = [(68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37)]


@dataclass(frozen=True)
class HeatmapOptions:
    """How to draw a heatmap.

    Attributes:
        width: Columns available; ``None`` = the console's width (80 for :func:`heatmap_text`).
        values: Print each cell's value next to its shade character.
        scale: ``"matrix"`` (one scale for the whole matrix) or ``"row"`` (each row its own).
        color: Use colour; ``False`` gives unstyled text.
        ascii: Seven-bit ASCII only (``~`` for a cut label, ``-`` for dashes). Implies no colour
            in the CLI, but is independent here.
        kind: ``"weights"`` (scale from 0), ``"scores"`` (scale min..max) or ``"auto"``
            (weights when every row is non-negative and sums to 1).
        digits: Decimal places of ``values``.
        max_label: Labels longer than this are cut with "…".
        headers: Column headers ``"horizontal"``, ``"vertical"``, ``"numbered"`` or ``"auto"``.
        legend: Print the key lines under the grid.
    """

    width: int | None = None
    values: bool = False
    scale: Scale = "matrix"
    color: bool = True
    ascii: bool = False
    kind: Kind = "auto"
    digits: int = 2
    max_label: int = 12
    headers: Headers = "auto"
    legend: bool = True


# --------------------------------------------------------------------------- the model

def shade_levels(values: np.ndarray, lo: np.ndarray | float, hi: np.ndarray | float) -> np.ndarray:
    """Ramp levels ``0 .. LEVELS-1`` for ``values`` on the scale ``lo..hi`` (broadcast).

    ``level = floor(LEVELS * (v - lo) / (hi - lo))``, the top value in the top bin; where
    ``hi == lo`` every value gets level 0. Monotonic non-decreasing in ``values``.
    """
    values = np.asarray(values, dtype=np.float64)
    span = np.asarray(hi, dtype=np.float64) - np.asarray(lo, dtype=np.float64)
    safe = np.where(span > 0, span, 1.0)
    t = np.where(span > 0, (values - lo) / safe, 0.0)
    # + 1e-9: a value exactly on a bin edge (0.3 of the way) lands in the upper bin, as by hand
    return np.clip(np.floor(np.clip(t, 0.0, 1.0) * LEVELS + 1e-9), 0, LEVELS - 1).astype(np.int64)


def level_color(level: int) -> str:
    """The background colour (``#rrggbb``) of a ramp level: brighter for higher levels."""
    x = level / (LEVELS - 1) * (len(_ANCHORS) - 1)
    i = min(int(x), len(_ANCHORS) - 2)
    f = x - i
    rgb = [round(a + (b - a) * f) for a, b in zip(_ANCHORS[i], _ANCHORS[i + 1])]
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def ink_color(level: int) -> str:
    """Black or white text, whichever reads on the level's background."""
    r, g, b = (int(level_color(level)[k : k + 2], 16) for k in (1, 3, 5))
    return "#000000" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 120 else "#ffffff"


SHADE_STYLES = tuple(Style(color=ink_color(k), bgcolor=level_color(k)) for k in range(LEVELS))
"""The Rich style of each ramp level: its background colour and readable ink."""
_BOLD = Style(bold=True)


def fmt_number(x: float) -> str:
    """A number as a student writes it: ``0.9``, ``-1.25``, ``3``, ``1.2e-05``."""
    x = float(x)
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    if abs(x) < 1e-4 or abs(x) >= 1e7:
        return f"{x:.3e}"
    text = f"{x:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def clean_label(label: object) -> str:
    """A label on one line: control characters (tabs, newlines) become spaces."""
    return "".join(ch if ch.isprintable() else " " for ch in str(label))


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


@dataclass
class HeatmapModel:
    """A checked matrix with everything the renderers need: levels, argmax, scale, sums."""

    title: str
    weights: np.ndarray  # (R, C)
    row_labels: list[str]  # R, cleaned, full length
    col_labels: list[str]  # C, cleaned, full length
    kind: Literal["weights", "scores"]
    scale: Scale
    sums_to_one: bool
    row_sums: np.ndarray  # (R,)
    lo: np.ndarray  # (R, 1) the value shown blank
    hi: np.ndarray  # (R, 1) the value shown as the top level
    levels: np.ndarray  # (R, C) ints in 0 .. LEVELS-1
    argmax: np.ndarray  # (R, C) bool, every cell equal to its row's maximum
    value_texts: list[list[str]]  # (R, C) fixed-decimal values

    @property
    def shape(self) -> tuple[int, int]:
        return self.weights.shape  # type: ignore[return-value]

    def describe_cell(self, row: int, col: int) -> str:
        """One line about a cell, for status bars: tokens, exact value, rank in its row."""
        v = float(self.weights[row, col])
        text = f"{self.row_labels[row]} → {self.col_labels[col]}: {v:.6g}"
        extra = []
        if self.argmax[row, col]:
            extra.append("row maximum")
        if self.sums_to_one:
            extra.append(f"{100 * v:.1f}% of the row")
        return text + (f" ({', '.join(extra)})" if extra else "")


def _labels(labels: Sequence[object] | None, n: int, what: str, axis: str) -> list[str]:
    if labels is None:
        return [str(i + 1) for i in range(n)]
    labels = [clean_label(x) for x in labels]
    if len(labels) != n:
        raise ValueError(f"{what}: got {len(labels)} labels for {n} {axis}; expected {n}, one per {axis[:-1]}")
    return labels


def prepare(
    weights: object,
    row_labels: Sequence[object] | None = None,
    col_labels: Sequence[object] | None = None,
    title: str = "",
    options: HeatmapOptions | None = None,
) -> HeatmapModel:
    """Check a matrix and compute the shading; ``ValueError`` (one line) when it is unusable."""
    opts = options or HeatmapOptions()
    try:
        w = np.array(weights, dtype=np.float64)  # a copy: the caller may keep changing theirs
    except (TypeError, ValueError):
        raise ValueError("weights: not a matrix of numbers; expected a 2-D array (rows, cols)") from None
    if w.ndim != 2 or w.size == 0:
        raise ValueError(f"weights: got shape {tuple(w.shape)}; expected a 2-D matrix (rows, cols), not empty")
    bad = np.argwhere(~np.isfinite(w))
    if len(bad):
        i, j = bad[0]
        raise ValueError(f"weights: row {i + 1}, column {j + 1} is {w[i, j]}; expected finite numbers")
    n_rows, n_cols = w.shape
    rows = _labels(row_labels, n_rows, "row labels", "rows")
    cols = _labels(col_labels, n_cols, "column labels", "columns")

    row_sums = w.sum(axis=1)
    zero = np.all(w == 0, axis=1)
    sums_to_one = bool(
        w.min() >= 0 and not zero.all() and np.all(zero | (np.abs(row_sums - 1) <= SUM_TOL))
    )
    kind = opts.kind if opts.kind != "auto" else ("weights" if sums_to_one else "scores")
    if opts.scale == "row":
        hi = w.max(axis=1, keepdims=True)
        lo = w.min(axis=1, keepdims=True)
    else:
        hi = np.full((n_rows, 1), w.max())
        lo = np.full((n_rows, 1), w.min())
    if kind == "weights":
        lo = np.minimum(lo, 0.0)  # weights are shaded from zero, not from the smallest weight
    texts = [[_value_text(x, opts.digits) for x in row] for row in w.tolist()]
    return HeatmapModel(
        title=title,
        weights=w,
        row_labels=rows,
        col_labels=cols,
        kind=kind,
        scale=opts.scale,
        sums_to_one=sums_to_one,
        row_sums=row_sums,
        lo=lo,
        hi=hi,
        levels=shade_levels(w, lo, hi),
        argmax=w == w.max(axis=1, keepdims=True),
        value_texts=texts,
    )


def _value_text(x: float, digits: int) -> str:
    text = f"{x:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


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
        elif longest <= VERTICAL_MAX:
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


def row_label_piece(model: HeatmapModel, geo: Geometry, row: int, style: Style | None) -> Piece:
    """The row label, cut and padded to the label column, plus the separating space."""
    return _pad(truncate(model.row_labels[row], geo.max_label, geo.ascii), geo.row_width) + " ", style


def cell_pieces(
    model: HeatmapModel, geo: Geometry, row: int, col: int, *, values: bool, color: bool
) -> list[Piece]:
    """One cell: left pad, the shaded inner part, right pad (pads are brackets at the argmax)."""
    level = int(model.levels[row, col])
    ch = RAMP[level]
    if values:
        inner = ch + " " + model.value_texts[row][col].rjust(geo.inner - 2)
    else:
        inner = ch * geo.inner
    left, right = ("[", "]") if model.argmax[row, col] else (" ", " ")
    if not color:
        return [(left, None), (inner, None), (right, None)]
    mark = _BOLD if left == "[" else None
    return [(left, mark), (inner, SHADE_STYLES[level]), (right, mark)]


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
    for level, ch in enumerate(RAMP):
        ramp.append((ch, SHADE_STYLES[level] if options.color else None))
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


def sums_line(model: HeatmapModel) -> str:
    """"attention weights: every row sums to 1" or "raw scores: rows do not sum to 1 (...)"."""
    name = "attention weights" if model.kind == "weights" else "raw scores"
    if model.sums_to_one:
        zero = int(np.all(model.weights == 0, axis=1).sum())
        tail = f", except {zero} all-zero (fully masked) row{'s' if zero > 1 else ''}" if zero else ""
        return f"{name}: every row sums to 1{tail}"
    a, b = float(model.row_sums.min()), float(model.row_sums.max())
    sums = f"every row sums to {fmt_number(a)}" if math.isclose(a, b) else f"row sums {fmt_number(a)} to {fmt_number(b)}"
    return f"{name}: rows do not sum to 1 ({sums})"


def scale_words(model: HeatmapModel) -> str:
    """How shades map to values, e.g. "0 to 0.9, linear over the whole matrix"."""
    if model.scale == "row":
        if model.kind == "weights" and float(model.lo.min()) == 0:
            return "0 to each row's maximum, linear"
        return "each row's minimum to its maximum, linear"
    return f"{fmt_number(model.lo[0, 0])} to {fmt_number(model.hi[0, 0])}, linear over the whole matrix"


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
