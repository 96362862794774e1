"""tutor.plot: a terminal line plot with axes, legend and an ASCII fallback."""

from __future__ import annotations

import math

import pytest

from tutor.plot import ASCII_MARKERS, Series, line_plot


def test_ascii_plot_is_seven_bit_with_axes_labels_and_legend():
    p = line_plot([Series("up", [0, 1, 2, 3]), Series("down", [3, 2, 1, 0])], width=20, height=6,
                  title="two lines", x_label="step", y_label="loss", ascii=True)
    text = p.text()
    assert all(ord(c) < 128 for c in text)
    lines = text.splitlines()
    assert lines[0] == "two lines" and lines[1] == "loss"
    assert lines[2].lstrip().startswith("3 +")          # y max at the top
    assert "0 +" in lines[7]                            # y min at the bottom row
    assert lines[8].strip().startswith("+" + "-" * 20)
    assert lines[9].split() == ["0", "1.5", "3"]        # x labels: ends and middle
    assert lines[10].strip() == "step"
    assert lines[11].split() == ["*", "up", "o", "down"]


def test_an_increasing_series_runs_from_bottom_left_to_top_right():
    p = line_plot([Series("y", list(range(8)))], width=8, height=8, ascii=True, legend=False)
    lines = p.text().splitlines()
    assert [ln[:3] for ln in lines[:8]] == ["7 +", "  |", "  |", "4 +", "  |", "  |", "  |", "0 +"]
    cells = [ln.ljust(11)[3:] for ln in lines[:8]]     # row 0 is the top
    assert cells == [" " * (7 - k) + "*" + " " * k for k in range(8)]


def test_unicode_mode_draws_braille_and_colours_each_series():
    p = line_plot([Series("a", [0, 1]), Series("b", [1, 0])], width=10, height=4)
    text = p.text()
    assert any(0x2800 <= ord(c) <= 0x28FF for c in text)
    styles = {seg.style for seg in p.rich().spans}
    assert {"cyan", "magenta"} <= {str(s) for s in styles}


def test_x_values_ranges_and_markers():
    p = line_plot([Series("acc", [90, 50], x=[10, 40])], width=30, height=5, ascii=True,
                  markers=True, y_range=(0, 100), legend=False)
    lines = p.text().splitlines()
    assert lines[0].lstrip().startswith("100 +") and lines[4].lstrip().startswith("0 +")
    assert lines[6].split() == ["10", "25", "40"]


def test_nan_points_are_skipped_and_a_flat_series_still_draws():
    p = line_plot([Series("flat", [2.0, float("nan"), 2.0, math.inf, 2.0])], width=10, height=3,
                  ascii=True, legend=False)
    assert "*" in p.text()
    empty = line_plot([], width=10, height=3, ascii=True)
    assert "+" in empty.text()


def test_mismatched_x_and_y_are_refused():
    with pytest.raises(ValueError, match="x values"):
        line_plot([Series("bad", [1, 2, 3], x=[1, 2])])


def test_six_series_get_six_markers():
    series = [Series(str(k), [k, k + 1]) for k in range(6)]
    legend = line_plot(series, width=12, height=8, ascii=True).text().splitlines()[-1]
    for k, mark in enumerate(ASCII_MARKERS):
        assert f"{mark} {k}" in legend


def test_log_axes_place_powers_evenly_and_label_values():
    from tutor.plot import Series, line_plot

    # y = x² on log-log axes is a straight line: 4 points at x = 1, 10, 100, 1000
    plot = line_plot([Series("x²", [1, 100, 1e4, 1e6], [1, 10, 100, 1000])], width=31, height=7,
                     markers=True, logx=True, logy=True, legend=False)
    text = plot.text()
    assert "1.0e+06" in text and "1000" in text  # ticks show values, not logarithms
    marks = [(r, c) for r, line in enumerate(text.splitlines()) for c, ch in enumerate(line) if ch == "●"]
    assert len(marks) == 4
    cols = sorted(c for _, c in marks)
    rows = sorted(r for r, _ in marks)
    assert len({b - a for a, b in zip(cols, cols[1:])}) == 1  # each decade of x is as wide
    assert len({b - a for a, b in zip(rows, rows[1:])}) == 1  # and x² climbs two decades each


def test_log_axis_skips_non_positive_points():
    from tutor.plot import Series, line_plot

    plot = line_plot([Series("s", [0, 1, 10], [1, 2, 3])], logy=True, ascii=True, markers=True)
    assert plot.text().count("*") >= 1


def test_every_series_keeps_each_of_its_markers_when_points_coincide():
    # attention stays at 100 while fixed falls; both start at 100, so their first points
    # share a cell: that cell shows the overlap mark, every other point its own marker
    from tutor.plot import OVERLAP

    a = Series("attention", [100, 100, 100, 100, 100], [5, 10, 15, 20, 25])
    f = Series("fixed", [100, 75, 50, 25, 0], [5, 10, 15, 20, 25])
    text = line_plot([a, f], width=40, height=9, y_range=(0, 100), markers=True).text()
    grid, legend = text.splitlines()[:9], text.splitlines()[-1]
    body = "\n".join(line.split("┤", 1)[-1].split("│", 1)[-1] for line in grid)
    assert body.count("●") == 4 and body.count("◆") == 4 and body.count(OVERLAP[1]) == 1
    assert legend.split() == ["●", "attention", "◆", "fixed", OVERLAP[1], "both"]
