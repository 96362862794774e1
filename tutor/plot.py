"""A small terminal line plot: several series, axes, a legend; Braille or plain ASCII.

Used by the lab (loss curves, accuracy by length) and meant for any other experiment:

    plot = line_plot([Series("attention", ys_a), Series("fixed", ys_f)],
                     width=60, height=12, title="loss per token", x_label="step")
    print(plot.text())            # plain text (ASCII when ascii=True)
    console.print(plot.rich())    # coloured, one colour per series

Unicode mode draws with Braille dots (2×4 per character cell) so curves look smooth;
``ascii=True`` draws each series with its own marker character (``* o + x # @``) at
character resolution, for ``TERM=dumb``, logs and copy-paste. A line cell hit by several
series shows the later series (Braille dots are merged); data-point markers are drawn after
every line, so no line hides a point, and points of several series in one cell show
:data:`OVERLAP` (listed in the legend), so every series keeps each of its markers.
NaN/inf points are skipped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

ASCII_MARKERS = "*o+x#@"
UNICODE_MARKERS = "●◆▲■★✚"
OVERLAP = ("&", "◎")
"""(ASCII, Unicode) marker of a cell where data points of several series fall together."""
COLORS = ("cyan", "magenta", "yellow", "green", "red", "blue")
_BRAILLE_BASE = 0x2800
# dot bit for (column 0/1, row 0..3) inside a Braille cell
_BRAILLE_BITS = ((0x01, 0x02, 0x04, 0x40), (0x08, 0x10, 0x20, 0x80))


@dataclass(frozen=True)
class Series:
    """One curve: y values, optional x values (default 0, 1, 2, ...)."""

    label: str
    y: Sequence[float]
    x: Sequence[float] | None = None

    def points(self) -> list[tuple[float, float]]:
        xs = self.x if self.x is not None else range(len(self.y))
        if len(xs) != len(self.y):
            raise ValueError(f"series {self.label!r}: {len(xs)} x values for {len(self.y)} y values")
        return [(float(a), float(b)) for a, b in zip(xs, self.y)
                if math.isfinite(float(a)) and math.isfinite(float(b))]


@dataclass
class Plot:
    """A drawn plot: rows of (character, series index or -1 for axes/text)."""

    rows: list[list[tuple[str, int]]] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)

    def text(self) -> str:
        return "\n".join("".join(ch for ch, _ in row).rstrip() for row in self.rows)

    def rich(self):
        """A ``rich.text.Text`` with each series in its own colour."""
        from rich.text import Text  # deferred: loads rich (start-up time)

        out = Text()
        for n, row in enumerate(self.rows):
            if n:
                out.append("\n")
            start = 0
            for i in range(1, len(row) + 1):  # one append per run of cells in one colour
                if i == len(row) or row[i][1] != row[start][1]:
                    who = row[start][1]
                    out.append("".join(ch for ch, _ in row[start:i]),
                               style=COLORS[who % len(COLORS)] if who >= 0 else None)
                    start = i
        return out


def _fmt(v: float) -> str:
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e4 or a < 1e-3:
        return f"{v:.1e}"
    if a >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}"


def _range(values: list[float], given: tuple[float, float] | None) -> tuple[float, float]:
    if given is not None:
        lo, hi = float(given[0]), float(given[1])
    elif values:
        lo, hi = min(values), max(values)
    else:
        lo, hi = 0.0, 1.0
    if hi <= lo:
        pad = abs(lo) * 0.05 or 0.5
        lo, hi = lo - pad, hi + pad
    return lo, hi


def _segment(x0: int, y0: int, x1: int, y1: int) -> list[tuple[int, int]]:
    """Bresenham's line between two grid points, both ends included."""
    pts = []
    dx, dy = abs(x1 - x0), -abs(y1 - y0)
    sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
    err = dx + dy
    while True:
        pts.append((x0, y0))
        if x0 == x1 and y0 == y1:
            return pts
        e2 = 2 * err
        if e2 >= dy:
            err += dy
            x0 += sx
        if e2 <= dx:
            err += dx
            y0 += sy


def line_plot(series: Sequence[Series], *, width: int = 60, height: int = 12, title: str = "",
              x_label: str = "", y_label: str = "", x_range: tuple[float, float] | None = None,
              y_range: tuple[float, float] | None = None, ascii: bool = False,
              markers: bool = False, legend: bool = True, logx: bool = False,
              logy: bool = False) -> Plot:
    """Draw ``series`` on one pair of axes.

    Args:
        series: the curves (up to six have distinct markers and colours).
        width, height: size of the plotting area in character cells (axes and labels add
            about 9 columns and 3–4 rows).
        title: a line above the plot.
        x_label, y_label: axis names (x under the axis, y in the top-left corner).
        x_range, y_range: fixed axis limits (default: the data's).
        ascii: use only ASCII characters.
        markers: also mark each data point with the series' marker (for short series).
        legend: add a legend line.
        logx, logy: logarithmic axes (points ≤ 0 on a log axis are skipped; tick labels show
            the values themselves, not their logarithms).

    Returns:
        :class:`Plot`; ``.text()`` for plain output, ``.rich()`` for colour.
    """
    width = max(8, int(width))
    height = max(3, int(height))
    fx = math.log10 if logx else float
    fy = math.log10 if logy else float
    pts = [[(fx(x), fy(y)) for x, y in s.points() if (x > 0 or not logx) and (y > 0 or not logy)]
           for s in series]
    x_lo, x_hi = _range([p[0] for ps in pts for p in ps],
                        None if x_range is None else (fx(x_range[0]), fx(x_range[1])))
    y_lo, y_hi = _range([p[1] for ps in pts for p in ps],
                        None if y_range is None else (fy(y_range[0]), fy(y_range[1])))
    x_text = (lambda v: _fmt(10 ** v)) if logx else _fmt
    y_text = (lambda v: _fmt(10 ** v)) if logy else _fmt
    sub_x, sub_y = (1, 1) if ascii else (2, 4)
    gw, gh = width * sub_x, height * sub_y

    def to_grid(x: float, y: float) -> tuple[int, int]:
        gx = round((x - x_lo) / (x_hi - x_lo) * (gw - 1))
        gy = round((y_hi - y) / (y_hi - y_lo) * (gh - 1))
        return min(max(gx, 0), gw - 1), min(max(gy, 0), gh - 1)

    cells: list[list[tuple[str, int]]] = [[(" ", -1)] * width for _ in range(height)]
    bits = [[0] * width for _ in range(height)]
    marked: dict[tuple[int, int], list[int]] = {}  # cell -> series with a data point there
    for k, ps in enumerate(pts):
        grid = [to_grid(x, y) for x, y in ps]
        dots = set(grid[:1])
        for a, b in zip(grid, grid[1:]):
            dots.update(_segment(a[0], a[1], b[0], b[1]))
        for gx, gy in dots:
            cx, cy = gx // sub_x, gy // sub_y
            if ascii:
                cells[cy][cx] = (ASCII_MARKERS[k % len(ASCII_MARKERS)], k)
            else:
                bits[cy][cx] |= _BRAILLE_BITS[gx % 2][gy % 4]
                cells[cy][cx] = (chr(_BRAILLE_BASE + bits[cy][cx]), k)
        if markers:
            for gx, gy in grid:
                at = marked.setdefault((gx // sub_x, gy // sub_y), [])
                if k not in at:
                    at.append(k)
    overlap = OVERLAP[0] if ascii else OVERLAP[1]
    for (cx, cy), ks in marked.items():  # after every line: no line hides a point
        mark = (ASCII_MARKERS if ascii else UNICODE_MARKERS)[ks[0] % len(ASCII_MARKERS)]
        cells[cy][cx] = (mark, ks[0]) if len(ks) == 1 else (overlap, -1)

    # axes: y labels at top, middle and bottom; x labels at both ends and the middle
    ticks = {0: y_text(y_hi), height - 1: y_text(y_lo)}
    if height >= 5:
        ticks[(height - 1) // 2] = y_text(y_hi - (y_hi - y_lo) * ((height - 1) // 2) / (height - 1))
    lw = max(len(t) for t in ticks.values())
    v_bar, corner, h_bar, tick = ("|", "+", "-", "+") if ascii else ("│", "└", "─", "┤")
    rows: list[list[tuple[str, int]]] = []

    def text_row(s: str) -> list[tuple[str, int]]:
        return [(ch, -1) for ch in s]

    if title:
        rows.append(text_row(title))
    if y_label:
        rows.append(text_row(y_label))
    for r in range(height):
        label = ticks.get(r, "").rjust(lw)
        rows.append(text_row(label + " " + (tick if r in ticks else v_bar)) + cells[r])
    rows.append(text_row(" " * lw + " " + corner + h_bar * width))
    xl, xm, xr = x_text(x_lo), x_text((x_lo + x_hi) / 2), x_text(x_hi)
    axis = [" "] * (width + 2)
    for pos, s in ((0, xl), ((width - len(xm)) // 2, xm), (width - len(xr), xr)):
        for i, ch in enumerate(s):
            if 0 <= pos + i < len(axis):
                axis[pos + i] = ch
    rows.append(text_row(" " * (lw + 2) + "".join(axis).rstrip()))
    if x_label:
        rows.append(text_row(" " * (lw + 2) + x_label.center(width).rstrip()))
    if legend and series:
        row: list[tuple[str, int]] = text_row(" " * (lw + 2))
        for k, one in enumerate(series):
            mark = (ASCII_MARKERS if ascii else UNICODE_MARKERS)[k % len(ASCII_MARKERS)]
            if k:
                row += text_row("   ")
            row += [(mark, k)] + text_row(" " + one.label)
        if any(len(ks) > 1 for ks in marked.values()):
            row += text_row(f"   {overlap} " + ("both" if len(series) == 2 else "several"))
        rows.append(row)
    return Plot(rows, [s.label for s in series])
