"""The numbers behind a heatmap: options, shading levels, colours, argmax, row sums.

Plain data and arithmetic on a matrix someone else computed (a trace, the lab, a file); the
layout lives in :mod:`tutor.heatmap.render`. A value ``v`` is shaded by
``t = (v - lo) / (hi - lo)`` and one of ``len(RAMP)`` equal bins, ``level = floor(10 t)``
(``t = 1`` in the top bin). For attention weights (every row non-negative and summing to 1)
``lo = 0`` and ``hi`` is the matrix maximum, so a pattern shows even when 50 keys share the
mass; for other values of one sign ``lo``/``hi`` are the minimum and maximum.
``scale="row"`` takes ``lo``/``hi`` per row.

Values of both signs that are not weights (a gradient ∂L/∂s, a Jacobian, scores q·k) are
*signed*: a one-sided ramp would draw a negative value as pale as zero. They take a diverging
scale instead, symmetric about zero (``lo = -m``, ``hi = m``, ``m`` the largest magnitude):
:data:`SIGNED_RAMP` in monochrome — minus-like marks below zero, plus-like above, blank
around it — and blue below zero, red above, near-white around it in colour.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from rich.style import Style

from tutor.render.safe import clean

RAMP = " .:-=+*#%@"
"""The monochrome ramp, darkest (lowest) first: ten levels, one character each."""

LEVELS = len(RAMP)
SIGNED_RAMP = "=-_ ^+#"
"""The diverging ramp, most negative first: ``=`` ``-`` ``_`` below zero (minus signs, more
lines further down), blank around zero, ``^`` ``+`` ``#`` above it (plus signs, more strokes
further up); ``_`` and ``^`` are the low and high marks of small values."""
SIGNED_LEVELS = len(SIGNED_RAMP)
SUM_TOL = 0.01
"""Rows whose sums are within this of 1 count as summing to 1 (weights printed to 2 places)."""

Scale = Literal["matrix", "row"]
Kind = Literal["auto", "weights", "scores"]
Headers = Literal["auto", "horizontal", "vertical", "numbered"]

# viridis at 0, 1/4, 1/2, 3/4, 1: dark purple → blue → teal → green → yellow (lightness rises)
_ANCHORS = [(68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37)]
# ColorBrewer's 7-class RdBu, blue for the most negative: readable for red-green colour blindness
_SIGNED_COLORS = [(33, 102, 172), (103, 169, 207), (209, 229, 240), (247, 247, 247),
                  (253, 219, 199), (239, 138, 98), (178, 24, 43)]


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


def signed_levels(values: np.ndarray, magnitude: np.ndarray | float) -> np.ndarray:
    """Diverging levels ``0 .. SIGNED_LEVELS-1`` for ``values`` on ``-magnitude..magnitude``:
    ``SIGNED_LEVELS`` equal bins, the middle one (zero) centred on 0. Monotonic in ``values``."""
    values = np.asarray(values, dtype=np.float64)
    m = np.asarray(magnitude, dtype=np.float64)
    safe = np.where(m > 0, m, 1.0)
    t = np.where(m > 0, values / safe, 0.0)  # -1 .. 1
    # + 1e-9: a value on a bin edge lands in the bin further from zero on either side
    u = (np.clip(t, -1.0, 1.0) + 1.0) / 2.0 * SIGNED_LEVELS
    edge = np.where(t >= 0, 1e-9, -1e-9)
    return np.clip(np.floor(u + edge), 0, SIGNED_LEVELS - 1).astype(np.int64)


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


def _signed_style(rgb: tuple[int, int, int]) -> Style:
    r, g, b = rgb
    ink = "#000000" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 120 else "#ffffff"
    return Style(color=ink, bgcolor="#{:02x}{:02x}{:02x}".format(*rgb))


SIGNED_STYLES = tuple(_signed_style(rgb) for rgb in _SIGNED_COLORS)
"""The Rich style of each level of :data:`SIGNED_RAMP`."""


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
    """A label or title on one line: tabs and newlines become spaces, terminal control goes
    (:func:`tutor.render.safe.clean`)."""
    return clean(label, lines=False)


@dataclass
class HeatmapModel:
    """A checked matrix with everything the renderers need: levels, argmax, scale, sums."""

    title: str
    weights: np.ndarray  # (R, C)
    row_labels: list[str]  # R, cleaned, full length
    col_labels: list[str]  # C, cleaned, full length
    kind: Literal["weights", "scores"]
    signed: bool  # values of both signs, not weights: the diverging scale
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

    @property
    def ramp(self) -> str:
        """The shade characters of :attr:`levels`, lowest first."""
        return SIGNED_RAMP if self.signed else RAMP

    @property
    def styles(self) -> tuple[Style, ...]:
        """The colour style of each level."""
        return SIGNED_STYLES if self.signed else SHADE_STYLES

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

    def longest_description(self) -> int:
        """The length of the longest :meth:`describe_cell` (a bound for huge matrices)."""
        n_rows, n_cols = self.shape
        if n_rows * n_cols <= 10_000:
            return max(len(self.describe_cell(r, c)) for r in range(n_rows) for c in range(n_cols))
        return (max(map(len, self.row_labels)) + 3 + max(map(len, self.col_labels))
                + len(": -0.000000e+00 (row maximum, 100.0% of the row)"))


def _labels(labels: Sequence[object] | None, n: int, what: str, axis: str) -> list[str]:
    if labels is None:
        return [str(i + 1) for i in range(n)]
    cleaned = [clean_label(x) for x in labels]
    if len(cleaned) != n:
        raise ValueError(
            f"{what}: got {len(cleaned)} labels for {n} {axis}; expected {n}, one per {axis[:-1]}"
        )
    return cleaned


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
        raise ValueError(
            f"weights: got shape {tuple(w.shape)}; expected a 2-D matrix (rows, cols), not empty"
        )
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
    signed = kind != "weights" and bool(w.min() < 0 < w.max())
    if opts.scale == "row":
        hi = w.max(axis=1, keepdims=True)
        lo = w.min(axis=1, keepdims=True)
    else:
        hi = np.full((n_rows, 1), w.max())
        lo = np.full((n_rows, 1), w.min())
    if kind == "weights":
        lo = np.minimum(lo, 0.0)  # weights are shaded from zero, not from the smallest weight
    if signed:  # symmetric about zero, so a value and its negative are equally strong
        hi = np.maximum(np.abs(lo), np.abs(hi))
        lo = -hi
    texts = [[_value_text(x, opts.digits) for x in row] for row in w.tolist()]
    return HeatmapModel(
        title=clean_label(title),
        weights=w,
        row_labels=rows,
        col_labels=cols,
        kind=kind,
        signed=signed,
        scale=opts.scale,
        sums_to_one=sums_to_one,
        row_sums=row_sums,
        lo=lo,
        hi=hi,
        levels=signed_levels(w, hi) if signed else shade_levels(w, lo, hi),
        argmax=w == w.max(axis=1, keepdims=True),
        value_texts=texts,
    )


def _value_text(x: float, digits: int) -> str:
    if abs(x) >= 1e6:  # fixed decimals would spell out every digit of 1e300
        return f"{x:.{digits}e}"
    text = f"{x:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def sums_line(model: HeatmapModel) -> str:
    """"attention weights: every row sums to 1" or "not attention weights: rows do not sum to
    1 (...)" (a gradient or a Jacobian is no score either: the title says what it is)."""
    name = "attention weights" if model.kind == "weights" else "not attention weights"
    if model.sums_to_one:
        zero = int(np.all(model.weights == 0, axis=1).sum())
        tail = f", except {zero} all-zero (fully masked) row{'s' if zero > 1 else ''}" if zero else ""
        return f"{name}: every row sums to 1{tail}"
    sums = np.where(np.abs(model.row_sums) <= 1e-12 * float(np.abs(model.weights).max()), 0.0,
                    model.row_sums)  # rounding left over from a sum that is 0 (a gradient's)
    a, b = float(sums.min()), float(sums.max())
    if np.all(np.abs(model.row_sums - 1) <= SUM_TOL) and model.weights.min() < 0:
        # the sums are fine: what rules out attention weights is the sign, so say that
        return f"{name}: rows sum to 1, but some values are negative (weights never are)"
    said = f"every row sums to {fmt_number(a)}" if math.isclose(a, b) else (f"row sums {fmt_number(a)} to "
                                                                            f"{fmt_number(b)}")
    return f"{name}: rows do not sum to 1 ({said})"


def scale_words(model: HeatmapModel) -> str:
    """How shades map to values, e.g. "0 to 0.9, linear over the whole matrix"."""
    if model.signed:
        if model.scale == "row":
            return "minus to plus each row's largest size, 0 in the blank middle, linear"
        return (f"{fmt_number(model.lo[0, 0])} to {fmt_number(model.hi[0, 0])}, 0 in the blank "
                "middle, linear over the whole matrix")
    if model.scale == "row":
        if model.kind == "weights" and float(model.lo.min()) == 0:
            return "0 to each row's maximum, linear"
        return "each row's minimum to its maximum, linear"
    return f"{fmt_number(model.lo[0, 0])} to {fmt_number(model.hi[0, 0])}, linear over the whole matrix"
