"""The heatmap renderer: golden text of the notes' heatmap, the ramp, labels, paging, colour.

Golden strings are written by hand from the notes' numbers and the shading rule in
``tutor/heatmap/render.py``: attention weights are shaded from 0 to the matrix maximum
(0.9 here), ``level = floor(10 * v / 0.9)`` into the ramp `` .:-=+*#%@``:

    0.05 → 0.56 → level 0 ' '     0.10 → 1.11 → 1 '.'     0.20 → 2.22 → 2 ':'
    0.70 → 7.78 → 7 '#'           0.80 → 8.89 → 8 '%'     0.85 → 9.44 → 9 '@'
    0.90 → 10   → 9 '@' (the top value is in the top bin)

Each cell is one pad, the inner part and one pad; the pads are brackets at the row maximum.
"""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from tutor.heatmap.render import (
    RAMP,
    HeatmapOptions,
    heatmap_text,
    level_color,
    prepare,
    render_heatmap,
    shade_levels,
    sums_line,
    truncate,
    wrap_caption,
)

# the notes' "Reading a heatmap" table (§11): rows ai/mal/au/pieds, columns my/feet/hurt
NOTES = [[0.1, 0.2, 0.7], [0.1, 0.8, 0.1], [0.05, 0.90, 0.05], [0.05, 0.85, 0.10]]
ROWS = ["ai", "mal", "au", "pieds"]
COLS = ["my", "feet", "hurt"]
ANSI = re.compile(r"\x1b\[")

# Row labels are 5 wide ("pieds") plus a space; "feet"/"hurt" are 4 wide, so cells widen to
# 4 inner characters (6 with pads) and the labels sit centred above them.
GOLDEN = """\
Reading a heatmap
        my   feet  hurt
ai     ....  :::: [####]
mal    .... [%%%%] ....
au          [@@@@]
pieds       [@@@@] ....

rows = 4 output (query) tokens, columns = 3 input (key) tokens
attention weights: every row sums to 1
shade ' .:-=+*#%@' = 0 to 0.9, linear over the whole matrix
[  ] = the largest value in its row"""

# --values: the inner part is "<shade> <value>", 6 wide ("@ 0.90"), so no widening is needed.
GOLDEN_VALUES = """\
Reading a heatmap
         my     feet    hurt
ai     . 0.10  : 0.20 [# 0.70]
mal    . 0.10 [% 0.80] . 0.10
au       0.05 [@ 0.90]   0.05
pieds    0.05 [@ 0.85] . 0.10"""


def test_notes_heatmap_golden():
    assert heatmap_text(NOTES, ROWS, COLS, "Reading a heatmap", HeatmapOptions(width=80)) == GOLDEN


def test_notes_heatmap_with_values_golden():
    text = heatmap_text(NOTES, ROWS, COLS, "Reading a heatmap", HeatmapOptions(width=80, values=True))
    assert text.split("\n\n")[0] == GOLDEN_VALUES


def test_ascii_option_gives_seven_bit_output():
    text = heatmap_text(np.eye(3) + 0.01, ["pieds-longword", "b", "c"], None, "t",
                        HeatmapOptions(width=40, ascii=True, max_label=6))
    assert text.isascii()
    assert "pieds~" in text


# --------------------------------------------------------------------------- the ramp

def test_ramp_is_ten_levels_from_blank_to_at_sign():
    assert RAMP == " .:-=+*#%@"
    assert len(set(RAMP)) == len(RAMP)


def test_evenly_spaced_values_use_every_level_in_order():
    # 0, 1/9, ..., 1 on the scale 0..1: t·10 = 0, 1.1, 2.2, ... → each level once
    values = np.linspace(0, 1, 10)
    assert shade_levels(values, 0.0, 1.0).tolist() == list(range(10))
    row = heatmap_text(values[None, :], ["q"], None, "", HeatmapOptions(width=80, legend=False))
    cells = row.splitlines()[1][2:]  # after "q "
    assert [cells[4 * k + 1] for k in range(10)] == list(RAMP)


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=60))
def test_ramp_is_monotonic_in_weight(xs):
    values = np.sort(np.array(xs))
    levels = shade_levels(values, values.min(), values.max())
    assert np.all(np.diff(levels) >= 0)
    assert levels.min() >= 0 and levels.max() <= len(RAMP) - 1
    if values.max() > values.min():
        assert levels[-1] == len(RAMP) - 1 and levels[0] == 0


def test_colours_get_brighter_with_weight():
    def luminance(hex_color: str) -> float:
        r, g, b = (int(hex_color[k : k + 2], 16) for k in (1, 3, 5))
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    lum = [luminance(level_color(k)) for k in range(len(RAMP))]
    assert all(a < b for a, b in zip(lum, lum[1:]))


# --------------------------------------------------------------------------- scales and kinds

def test_signed_values_take_the_diverging_scale():
    """Values of both signs (issue 34 §5: the ∂L/∂s gradient drew its negatives as pale as
    zero) are shaded on -m..m, m = 3 the largest magnitude, in 7 bins of t = v / 3:
    u = (t + 1) / 2 · 7. By hand: -2 → t -0.667, u 1.17 → bin 1 '-'; 0.5 → u 4.08 → 4 '^';
    3 → 6 '#' (row max); 1 → u 4.67 → 4 '^' (row max); -1 → u 2.33 → 2 '_'; 0 → u 3.5 → 3 ' '."""
    scores = np.array([[-2.0, 0.5, 3.0], [1.0, -1.0, 0.0]])
    text = heatmap_text(scores, ["a", "b"], ["x", "y", "z"], "", HeatmapOptions(width=80))
    grid = text.splitlines()[1:3]
    assert grid == ["a  --  ^^ [##]", "b [^^] __"]
    assert "not attention weights: rows do not sum to 1 (row sums 0 to 1.5)" in text
    assert "shade '=-_ ^+#' = -3 to 3, 0 in the blank middle, linear over the whole matrix" in text


def test_signed_bins_are_symmetric_about_zero():
    from tutor.heatmap.model import SIGNED_RAMP, signed_levels

    # bin edges of t at ±1/7, ±3/7, ±5/7: each edge goes to the bin further from zero
    t = np.array([-1, -5 / 7, -0.5, -3 / 7, -0.2, -1 / 7, -0.1, 0, 0.1, 1 / 7, 0.2, 3 / 7, 0.5,
                  5 / 7, 1])
    assert signed_levels(t, 1.0).tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 3, 4, 4, 5, 5, 6, 6]
    assert (signed_levels(-t, 1.0) == 6 - signed_levels(t, 1.0)).all()  # a mirror image
    assert SIGNED_RAMP[3] == " " and set(SIGNED_RAMP[:3]).isdisjoint(SIGNED_RAMP[4:])


def test_signed_colours_are_blue_below_and_red_above_zero():
    from tutor.heatmap.model import SIGNED_STYLES

    def rgb(style):
        c = style.bgcolor.get_truecolor()
        return c.red, c.green, c.blue

    below, middle, above = SIGNED_STYLES[:3], SIGNED_STYLES[3], SIGNED_STYLES[4:]
    assert all(b > r for r, _, b in map(rgb, below)) and all(r > b for r, _, b in map(rgb, above))
    r, g, b = rgb(middle)
    assert min(r, g, b) > 230  # zero is near white: neither side
    lum = [0.2126 * r + 0.7152 * g + 0.0722 * b for r, g, b in map(rgb, SIGNED_STYLES)]
    assert lum[0] < lum[1] < lum[2] < lum[3] > lum[4] > lum[5] > lum[6]  # stronger, darker


def test_the_gradient_heatmap_shows_its_negative_entries():
    from engine.traces import build

    trace = build("attention-backward")
    grad = trace.heatmaps[1]
    assert (grad.weights < 0).any() and (grad.weights > 0).any()
    model = prepare(grad.weights, grad.row_labels, grad.col_labels, grad.title,
                    HeatmapOptions(kind=grad.kind))
    assert model.signed
    shown = [model.ramp[k] for k in model.levels.ravel()]
    for value, ch in zip(grad.weights.ravel(), shown):
        if abs(value) > np.abs(grad.weights).max() / 7:  # outside the blank middle bin
            assert ch in ("=-_" if value < 0 else "^+#"), (value, ch)
    assert "raw scores" not in sums_line(model)


def test_scores_of_one_sign_keep_the_one_sided_ramp():
    model = prepare(np.array([[0.5, 2.0], [1.0, 3.0]]))
    assert not model.signed and model.ramp == RAMP


def test_row_scale_shades_each_row_against_its_own_maximum():
    w = np.array([[0.5, 0.5, 0.0], [0.1, 0.3, 0.6]])
    model = prepare(w, options=HeatmapOptions(scale="row"))
    # row 1: 0..0.5 → 0.5 is level 9; row 2: 0..0.6 → 0.1 → 1, 0.3 → 5, 0.6 → 9
    assert model.levels.tolist() == [[9, 9, 0], [1, 5, 9]]
    assert model.argmax.tolist() == [[True, True, False], [False, False, True]]  # ties both marked
    text = heatmap_text(w, options=HeatmapOptions(scale="row", width=80))
    assert "shade ' .:-=+*#%@' = 0 to each row's maximum, linear" in text


def test_weights_detection_tolerates_rounding_and_masked_rows():
    assert prepare([[0.335, 0.33, 0.33], [0.0, 0.0, 0.0]]).sums_to_one
    text = heatmap_text([[0.335, 0.33, 0.33], [0.0, 0.0, 0.0]], options=HeatmapOptions(width=80))
    assert "every row sums to 1, except 1 all-zero (fully masked) row" in text
    assert not prepare([[0.5, 0.6]]).sums_to_one
    assert not prepare([[1.5, -0.5]]).sums_to_one  # sums to 1 but negative: scores


def test_constant_matrix_does_not_divide_by_zero():
    text = heatmap_text([[2.0, 2.0], [2.0, 2.0]], options=HeatmapOptions(width=80, legend=False))
    assert text.splitlines()[1:] == ["1 [  ][  ]", "2 [  ][  ]"]


def test_huge_values_are_shown_in_e_notation_not_three_hundred_digits():
    text = heatmap_text([[1e300, 1.0], [1.0, 2.0]], options=HeatmapOptions(width=80, values=True, legend=False))
    assert text.splitlines()[1:] == ["1 [@ 1.00e+300]        1.00", "2         1.00 [       2.00]"]


# --------------------------------------------------------------------------- labels

def test_truncate_marks_the_cut():
    assert truncate("pieds", 5) == "pieds"
    assert truncate("transformers", 6) == "trans…"
    assert truncate("transformers", 6, ascii=True) == "trans~"
    assert truncate("猫猫猫", 4) == "猫…"  # wide characters count as two cells
    assert truncate("abc", 1) == "…"


def test_a_caption_wraps_at_spaces_and_keeps_the_ramp_whole():
    scale = f"shade '{RAMP}' = 0 to 0.9, linear over the whole matrix"
    # the ramp is 12 cells with its quotes: a width of 12 takes it alone, never split at its space
    assert wrap_caption(scale, 12) == ["shade", "' .:-=+*#%@'", "= 0 to 0.9,", "linear over", "the whole", "matrix"]
    assert wrap_caption(scale, 80) == [scale]
    assert wrap_caption("", 10) == [""]


def test_the_longest_description_bounds_every_cell():
    model = prepare(NOTES, ROWS, COLS, "", HeatmapOptions(width=80))
    words = [model.describe_cell(r, c) for r in range(4) for c in range(3)]
    assert model.longest_description() == max(map(len, words))
    big = prepare(np.full((101, 100), 0.01), options=HeatmapOptions(width=80))  # too many to word
    assert big.longest_description() >= max(len(big.describe_cell(r, c)) for r in (0, 100) for c in (0, 99))


def test_long_row_labels_are_cut_with_an_ellipsis():
    text = heatmap_text([[1.0, 0.0]], ["internationalisation"], ["a", "b"], "",
                        HeatmapOptions(width=80, max_label=8, legend=False))
    assert text.splitlines()[1] == "interna… [@@]"


def test_labels_with_tabs_and_newlines_stay_on_one_line():
    text = heatmap_text([[1.0]], ["a\tb"], ["c\nd"], "", HeatmapOptions(width=80, legend=False))
    assert text.splitlines() == ["     c d", "a b [@@@]"]


def test_long_column_labels_go_vertical():
    w = np.full((2, 30), 1 / 30)
    cols = [f"w{k:02d}" for k in range(30)]  # 3 characters: too wide for 2-wide cells at width 60
    text = heatmap_text(w, ["a", "b"], cols, "", HeatmapOptions(width=60, legend=False))
    lines = text.splitlines()
    assert lines[0] == "columns 1–14 of 30"
    # three header lines, one character each, then the grid
    assert lines[1] == "  " + "".join(" w  " for _ in range(14)).rstrip()
    assert lines[2] == "  " + "".join(" 0  " for _ in range(10)) + " 1   1   1   1"
    assert lines[3] == "  " + "".join(f" {k}  " for k in range(10)) + " 0   1   2   3"


def test_very_long_column_labels_are_numbered_with_a_key():
    cols = ["supercalifragilistic", "antidisestablishment", "floccinaucinihilipili"]
    text = heatmap_text([[0.2, 0.3, 0.5]] * 1, ["q"], cols, "", HeatmapOptions(width=40))
    lines = text.splitlines()
    # weights 0..0.5: 0.2 → level 4 '=', 0.3 → 6 '*', 0.5 → 9 '@' (the row maximum)
    assert lines[0] == "   1   2   3"
    assert lines[1] == "q  ==  ** [@@]"
    assert "columns: 1 supercalifragilistic" in text
    assert "  2 antidisestablishment" in text
    assert "  3 floccinaucinihilipili" in text


def test_wrong_label_count_is_one_line():
    with pytest.raises(ValueError, match=r"^row labels: got 3 labels for 4 rows; expected 4, one per row$"):
        prepare(NOTES, ROWS[:3], COLS)


def test_nan_is_refused_with_its_position():
    with pytest.raises(ValueError, match=r"^weights: row 2, column 1 is nan; expected finite numbers$"):
        prepare([[0.5, 0.5], [np.nan, 1.0]])


def test_non_matrix_is_refused():
    with pytest.raises(ValueError, match=r"^weights: got shape \(3,\); expected a 2-D matrix"):
        prepare([1.0, 2.0, 3.0])


# --------------------------------------------------------------------------- width and paging

def test_wide_matrix_is_paged_in_whole_columns():
    w = np.ones((3, 50)) / 50
    text = heatmap_text(w, options=HeatmapOptions(width=80, legend=False))
    # labels "1".."3" → 1 wide + space; headers "1".."50" fit 2-wide cells; (80 - 2) // 4 = 19
    assert re.findall(r"columns \d+–\d+ of 50", text) == [
        "columns 1–19 of 50", "columns 20–38 of 50", "columns 39–50 of 50"]
    assert max(len(line) for line in text.splitlines()) <= 80
    headers = [line for line in text.splitlines() if line.startswith("  ") and line.strip()[0].isdigit()]
    numbers = [int(x) for line in headers for x in line.split()]
    assert numbers == list(range(1, 51))


def test_a_last_page_of_one_column_says_column():
    # labels 1 wide + space, cells 4: (12 - 2) // 4 = 2 columns a page
    text = heatmap_text(np.ones((1, 3)) / 3, options=HeatmapOptions(width=12, legend=False))
    pages = [line for line in text.splitlines() if " of 3" in line]
    assert pages == ["columns 1–2 of 3", "column 3 of 3"]


def test_fifty_by_fifty_random_attention_fits_eighty_columns():
    rng = np.random.default_rng(7)
    scores = rng.normal(size=(50, 50))
    w = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    labels = [f"t{k}" for k in range(50)]
    text = heatmap_text(w, labels, labels, "random", HeatmapOptions(width=80))
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    pages = [line for line in lines if line.startswith("columns ") and " of 50" in line]
    assert len(pages) == 3
    for label in labels:  # every query row is drawn once per page
        assert sum(1 for line in lines if line.split(" ")[0] == label) == 3
    # every row has exactly one argmax (random floats do not tie), so 50 bracket pairs in all
    assert text.count("[") - 1 == 50  # minus the legend's "[  ]"


@pytest.mark.parametrize("width", [20, 33, 47, 100, 200])
def test_lines_never_exceed_the_width(width):
    w = np.random.default_rng(width).random((6, 40))
    text = heatmap_text(w, options=HeatmapOptions(width=width, values=True, legend=False))
    assert max(len(line) for line in text.splitlines()) <= width


# --------------------------------------------------------------------------- colour

def _printed(renderable, width=80, **console_args) -> str:
    buf = io.StringIO()
    Console(file=buf, width=width, highlight=False, **console_args).print(renderable)
    return buf.getvalue()


def test_colour_output_has_styles_and_the_same_text():
    out = _printed(render_heatmap(NOTES, ROWS, COLS, "Reading a heatmap", HeatmapOptions(width=80)),
                   force_terminal=True, color_system="truecolor")
    assert ANSI.search(out)
    assert "48;2;253;231;37" in out  # the top level's yellow background behind "@@@@"
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    assert [line.rstrip() for line in plain.splitlines()] == GOLDEN.splitlines()


def test_colour_off_prints_no_escapes_even_on_a_terminal():
    out = _printed(render_heatmap(NOTES, ROWS, COLS, "t", HeatmapOptions(width=80, color=False)),
                   force_terminal=True, color_system="truecolor")
    assert not ANSI.search(out)


def test_renderable_follows_the_console_width_when_none_is_given():
    w = np.ones((2, 40)) / 40
    out = _printed(render_heatmap(w, options=HeatmapOptions(color=False)), width=50)
    assert "columns 1–12 of 40" in out  # (50 - 2) // 4 = 12
    assert max(len(line) for line in out.splitlines()) <= 50


def test_special_tokens_are_never_written_downwards():
    # the same 3-character width as the test above, but one label is a special token:
    # written down, "</s>" would be four unrelated signs, so the columns are numbered instead
    w = np.full((2, 30), 1 / 30)
    cols = [f"w{k:02d}" for k in range(29)] + ["</s>"]
    text = heatmap_text(w, ["a", "b"], cols, "", HeatmapOptions(width=60))
    lines = text.splitlines()
    assert lines[1].split() == [str(k) for k in range(1, 15)]  # one header line: numbers
    assert "30 </s>" in text  # the key keeps the token whole
    assert not any(line.strip() in ("<", "/", ">") for line in lines)
