"""The Textual heatmap widget: cursor keys, mouse, messages, status line, scrolling, toggles."""

from __future__ import annotations

import numpy as np
import pytest
from textual.app import App, ComposeResult

from engine.trace import HeatmapData
from tutor.widgets.heatmap import Heatmap

NOTES = [[0.1, 0.2, 0.7], [0.1, 0.8, 0.1], [0.05, 0.90, 0.05], [0.05, 0.85, 0.10]]
ROWS = ["ai", "mal", "au", "pieds"]
COLS = ["my", "feet", "hurt"]


class HeatmapApp(App):
    """One heatmap; records the messages it sends."""

    def __init__(self, heatmap: Heatmap) -> None:
        super().__init__()
        self.heatmap = heatmap
        self.moved: list[tuple[int, int, float, str, str]] = []
        self.selected: list[tuple[int, int, float, str, str]] = []

    def compose(self) -> ComposeResult:
        yield self.heatmap

    def on_heatmap_cursor_moved(self, message: Heatmap.CursorMoved) -> None:
        assert message.control is self.heatmap
        self.moved.append((message.row, message.col, message.value, message.row_label, message.col_label))

    def on_heatmap_cell_selected(self, message: Heatmap.CellSelected) -> None:
        self.selected.append((message.row, message.col, message.value, message.row_label, message.col_label))


def notes_app() -> HeatmapApp:
    return HeatmapApp(Heatmap(NOTES, ROWS, COLS, title="Reading a heatmap"))


def lines(heatmap: Heatmap) -> list[str]:
    return [heatmap.render_line(y).text.rstrip() for y in range(heatmap.scrollable_content_region.height)]


async def test_arrows_move_the_cursor_and_report_the_cell():
    app = notes_app()
    async with app.run_test(size=(80, 16)) as pilot:
        hm = app.heatmap
        await pilot.press("right", "right", "down")
        await pilot.pause()
        assert hm.cursor == (1, 2)
        # one message when mounted, then one per move
        assert app.moved == [(0, 0, 0.1, "ai", "my"), (0, 1, 0.2, "ai", "feet"),
                             (0, 2, 0.7, "ai", "hurt"), (1, 2, 0.1, "mal", "hurt")]
        assert hm.status_text == "cursor row 2/4, column 3/3: mal → hurt: 0.1 (10.0% of the row)"
        assert "cursor row 2/4, column 3/3: mal → hurt: 0.1" in lines(hm)[-3]  # the key takes 2 lines at 80


async def test_enter_selects_and_edges_clamp():
    app = notes_app()
    async with app.run_test(size=(80, 16)) as pilot:
        await pilot.press("left", "up", "down", "down", "down", "down", "down", "right")
        await pilot.press("enter")
        await pilot.pause()
        assert app.heatmap.cursor == (3, 1)
        assert app.selected == [(3, 1, 0.85, "pieds", "feet")]
        assert app.heatmap.status_text.endswith("pieds → feet: 0.85 (row maximum, 85.0% of the row)")


async def test_grid_matches_the_cli_cells_with_the_cursor_marked():
    app = notes_app()
    async with app.run_test(size=(80, 16)) as pilot:
        await pilot.pause()
        shown = lines(app.heatmap)
        assert shown[:6] == [
            "Reading a heatmap",
            "        my   feet  hurt",
            "ai    >....< :::: [####]",  # the cursor cell's pads are > <
            "mal    .... [%%%%] ....",
            "au          [@@@@]",
            "pieds       [@@@@] ....",
        ]
        # at 80 columns the key does not fit on one line, so it is split rather than cut
        assert shown[-2:] == ["shade ' .:-=+*#%@' = 0 to 0.9, linear over the whole matrix",
                              "attention weights: every row sums to 1"]


async def test_cursor_row_and_column_are_highlighted():
    app = notes_app()
    async with app.run_test(size=(80, 16)) as pilot:
        await pilot.press("down")  # cursor on mal → my
        await pilot.pause()
        hm = app.heatmap
        label_mal = list(hm.render_line(3))[0]
        label_ai = list(hm.render_line(2))[0]
        assert label_mal.text.strip() == "mal" and label_ai.text.strip() == "ai"
        assert label_mal.style.bgcolor != label_ai.style.bgcolor
        # in the ai row: label, space, then the "my" cell (pads carry the crosshair), the "feet" cell
        segments = list(hm.render_line(2))
        my_pad, feet_pad = segments[2], segments[5]
        assert my_pad.text == feet_pad.text == " "
        assert my_pad.style.bgcolor != feet_pad.style.bgcolor


async def test_click_moves_the_cursor_and_selects():
    app = notes_app()
    async with app.run_test(size=(80, 16)) as pilot:
        # title on line 0, headers on line 1, rows from line 2; labels take 6 columns, cells 6 each
        await pilot.click(Heatmap, offset=(6 + 6 * 1 + 2, 2 + 2))
        await pilot.pause()
        assert app.heatmap.cursor == (2, 1)
        assert app.selected == [(2, 1, 0.9, "au", "feet")]
        await pilot.click(Heatmap, offset=(2, 0))  # the title: nothing happens
        await pilot.pause()
        assert app.heatmap.cursor == (2, 1) and len(app.selected) == 1


async def test_hover_shows_the_cell_under_the_mouse():
    app = notes_app()
    async with app.run_test(size=(80, 16)) as pilot:
        await pilot.hover(Heatmap, offset=(6 + 1, 2 + 3))
        await pilot.pause()
        hm = app.heatmap
        assert hm.hover == (3, 0)
        assert hm.status_text == "mouse row 4/4, column 1/3: pieds → my: 0.05 (5.0% of the row)"
        assert hm.cursor == (0, 0)  # hovering does not move the cursor
        await pilot.press("right")
        await pilot.pause()
        assert hm.hover is None and hm.status_text.startswith("cursor row 1/4, column 2/3")


async def test_values_and_scale_toggles():
    app = notes_app()
    async with app.run_test(size=(80, 16)) as pilot:
        await pilot.press("v")
        await pilot.pause()
        assert lines(app.heatmap)[2] == "ai    >. 0.10< : 0.20 [# 0.70]"
        await pilot.press("s")
        await pilot.pause()
        # per row, ai is shaded 0..0.7: 0.2 → floor(2.86) = 2 ':' and 0.7 → '@'
        assert lines(app.heatmap)[2] == "ai    >. 0.10< : 0.20 [@ 0.70]"
        assert "0 to each row's maximum" in app.heatmap.key_text


async def test_big_matrix_scrolls_to_keep_the_cursor_visible():
    rng = np.random.default_rng(3)
    w = rng.random((50, 50))
    labels = [f"t{k}" for k in range(50)]
    app = HeatmapApp(Heatmap(w, labels, labels))
    async with app.run_test(size=(80, 24)) as pilot:
        hm = app.heatmap
        await pilot.press("end", "pagedown", "pagedown", "pagedown")
        await pilot.pause()
        assert hm.cursor == (49, 49)
        shown = lines(hm)
        assert any(line.startswith("t49 ") for line in shown)
        assert shown[-4].startswith("t49 ") and shown[-4].endswith("<")  # the cursor cell is drawn
        assert hm.status_text.startswith("cursor row 50/50, column 50/50: t49 → t49: ")
        # horizontal scrolling moves by whole cells: every grid line starts at a cell edge
        assert hm.scroll_offset.x % hm._geo.cell == 0
        await pilot.press("home")
        await pilot.pause()
        assert hm.scroll_offset.x == 0


async def test_set_data_replaces_the_matrix_and_keeps_the_cursor_inside():
    app = notes_app()
    async with app.run_test(size=(80, 16)) as pilot:
        await pilot.press("down", "down", "right", "right")
        app.heatmap.set_data([[0.25, 0.75]], ["q"], ["k1", "k2"], title="new")
        await pilot.pause()
        assert app.heatmap.cursor == (0, 1)
        # 0.25 of 0..0.75 → level floor(3.33) = 3 '-'; the cursor sits on the row maximum
        assert lines(app.heatmap)[:3] == ["new", "   k1  k2", "q  -- [@@]"]
        assert app.heatmap.status_text == "cursor row 1/1, column 2/2: q → k2: 0.75 (row maximum, 75.0% of the row)"


def test_from_heatmap_data_and_bad_input():
    data = HeatmapData("scores", np.array([[-1.0, 2.0]]), ["q"], ["a", "b"], kind="scores")
    hm = Heatmap.from_heatmap_data(data)
    assert hm.model.kind == "scores" and hm.model.title == "scores"
    with pytest.raises(ValueError, match="^row labels: got 1 labels for 2 rows"):
        Heatmap([[1.0], [2.0]], ["only"])


async def test_a_key_too_long_for_the_width_takes_two_lines_instead_of_being_cut():
    app = notes_app()
    async with app.run_test(size=(60, 16)) as pilot:
        await pilot.pause()
        shown = lines(app.heatmap)
        key = app.heatmap.key_text
        assert len(key) > 60
        assert shown[-2] == "shade ' .:-=+*#%@' = 0 to 0.9, linear over the whole matrix"
        assert shown[-1] == "attention weights: every row sums to 1"
        # the status keeps two lines at this width (its longest, at a row maximum, needs them)
        assert shown[-4].startswith("cursor row 1/4") and shown[-3] == ""
        await pilot.press("down", "down", "down", "right")  # pieds → feet: the row maximum
        await pilot.pause()
        status = app.heatmap.status_text
        assert len(status) > 60 and " ".join(lines(app.heatmap)[-4:-2]) == status  # wrapped, not cut
    wide = notes_app()
    async with wide.run_test(size=(120, 16)) as pilot:
        await pilot.pause()
        assert lines(wide.heatmap)[-1] == wide.heatmap.key_text  # fits: one line, as before


async def test_a_matrix_with_negative_values_is_captioned_by_its_sign():
    """[-1, 2] sums to 1: it was captioned "rows do not sum to 1 (every row sums to 1)"."""
    from textual.app import App

    class One(App):
        def compose(self):
            yield Heatmap([[-1.0, 2.0], [0.5, 0.5]], ["q1", "q2"], ["k1", "k2"], title="from a file")

    app = One()
    async with app.run_test(size=(100, 16)) as pilot:
        await pilot.pause()
        shown = "\n".join(lines(app.query_one(Heatmap)))
        assert "not attention weights: rows sum to 1, but some values are negative (weights never are)" in shown
        assert "do not sum to 1" not in shown
