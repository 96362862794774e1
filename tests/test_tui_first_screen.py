"""The first screen is built once: the start mode is Textual's default mode, so there is no
blank screen to switch away from (every mode switch re-parses the whole stylesheet, which
was ~0.1 s of the first paint)."""

from __future__ import annotations

import pytest

from tutor.app import StartAt, make_app
from tutor.screens.home import HomeScreen


async def test_the_home_screen_is_the_first_and_only_screen():
    app = make_app(warm_up=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        assert list(app._screen_stacks) == ["home"]  # no "_default" stack was ever made
        await pilot.press("2")                       # the areas still switch…
        assert app.current_mode == "trace"
        await pilot.press("0")                       # …and home is the same screen as before
        assert app.current_mode == "home" and isinstance(app.screen, HomeScreen)


@pytest.mark.parametrize("mode", ["learn", "quiz", "stats"])
async def test_a_start_mode_is_the_first_screen(mode):
    app = make_app(StartAt(mode), warm_up=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.current_mode == mode and list(app._screen_stacks) == [mode]
