"""Keys: one meaning per key on every screen, `?` lists each key once, keys shown only where
they do something, the palette offers only what exists, the picker filters as you type, and
the app runs under NO_COLOR and TERM=dumb."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest

from tests.tui_text import screen_text, settle, until
from tutor.app import StartAt, make_app
from tutor.screens.help import HelpScreen, help_rows, key_meanings

MODES = ["home", "learn", "trace", "quiz", "heatmaps", "lab", "stats", "exam"]


@pytest.mark.parametrize("mode", MODES)
async def test_every_key_has_one_meaning_on_every_screen(mode):
    """The quiz's 1–4 meant both a self-grade and "go to area 1–4"; nothing may do that again."""
    app = make_app(StartAt(mode), warm_up=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screens = [app.screen]
        if mode == "trace":  # the trace screen's modals have keys of their own
            await pilot.press("h")
            await settle(pilot)
            screens.append(app.screen)
        for screen in screens:
            doubled = {k: v for k, v in key_meanings(app, screen).items() if len(v) > 1}
            assert not doubled, f"{type(screen).__name__}: {doubled}"


def test_the_check_would_catch_a_key_bound_twice():
    from textual.binding import Binding
    from textual.screen import Screen

    class Doubled(Screen):
        BINDINGS = [Binding("1", "rate(1)", "Again")]

    Doubled.__module__ = "tutor.screens.doubled"  # a screen of the tutor's own
    meanings = key_meanings(make_app(warm_up=False), Doubled())
    assert meanings["1"] == {"rate(1)", "open_mode('learn')"}


@pytest.mark.parametrize("mode", MODES)
async def test_help_lists_each_key_once(mode):
    app = make_app(StartAt(mode), warm_up=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        keys = [key for keys, _ in app.screen._rows for key in keys.split()]
        assert len(keys) == len(set(keys)), keys
        assert {"?", "f1", "^q", "^p", "0", "1", "6"} <= set(keys)


async def test_the_heatmaps_help_names_the_grid_keys():
    app = make_app(StartAt("heatmaps", "multi-head"), warm_up=False)  # several matrices: , and . work
    async with app.run_test(size=(100, 30)) as pilot:
        assert await until(pilot, lambda: app.screen.query("Heatmap") and app.screen.wanted == "multi-head")
        await settle(pilot)
        rows = dict(help_rows(app, app.screen))
        assert rows["↑ ↓ ← →"] == "Move the cell cursor"
        assert {"v", "s", ", ."} <= set(rows)
        await pilot.press("question_mark")
        painted = screen_text(app)
        for words in ("Move the cell cursor", "Show each cell's value", "Previous / next matrix"):
            assert words in painted


@pytest.mark.parametrize(("name", "has_map"), [("beam-search", False), ("qkv", True)])
async def test_h_heatmap_shows_only_on_a_trace_with_a_heatmap(name, has_map):
    app = make_app(StartAt("trace", name), warm_up=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert bool(app.screen.trace.heatmaps) is has_map
        footer = screen_text(app).rstrip("\n").splitlines()[-1]
        assert ("h Heatmap" in footer) is has_map
        assert ("h" in dict(help_rows(app, app.screen))) is has_map  # the help agrees with the footer


async def test_the_palette_offers_no_empty_heatmap():
    from engine.traces import build
    from tutor.palette import TutorCommands

    app = make_app(warm_up=False)
    async with app.run_test(size=(100, 30)):
        provider = TutorCommands(app.screen)
        await provider.startup()
        await app.workers.wait_for_complete()  # startup only starts the heatmaps' build
        offered = [t.removeprefix("Heatmap ") for t, _, _ in provider._commands() if t.startswith("Heatmap ")]
        assert "bottleneck" not in offered and "qkv" in offered
        assert all(build(name).heatmaps for name in offered)


async def test_the_palette_answers_at_once_while_the_heatmaps_build(monkeypatch):
    """Its startup waited for every trace's heatmaps: 7 s of compiling on a first run before
    Ctrl+P found anything. Now a search answers at once and offers the heatmaps built so far."""
    import threading

    from engine import traces
    from tutor.heatmap import sources
    from tutor.palette import TutorCommands

    monkeypatch.setattr(sources, "_BUILT", {})
    release, real = threading.Event(), traces.build
    order = [info.name for info in traces.list_traces()]
    first = next(name for name in order if real(name).heatmaps)  # the first that draws one
    free = set(order[:order.index(first) + 1])  # it and the traces before it build at once

    def build(name, overrides=None):
        if name not in free:
            assert release.wait(30), "the test never released the traces"
        return real(name, overrides)

    monkeypatch.setattr(traces, "build", build)
    app = make_app(warm_up=False)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            provider = TutorCommands(app.screen)
            await provider.startup()
            await until(pilot, sources.built_heatmaps)
            hits = [hit async for hit in provider.search("lesson query")]
            assert any("Lesson §5" in str(hit.text) for hit in hits)
            titles = [t for t, _, _ in provider._commands() if t.startswith("Heatmap ")]
            assert titles == [f"Heatmap {first}"]
            release.set()
            await app.workers.wait_for_complete()
            assert "Heatmap qkv" in [t for t, _, _ in provider._commands()]
    finally:
        release.set()


async def test_the_trace_picker_filters_as_you_type():
    from textual.widgets import OptionList

    app = make_app(StartAt("trace", "qkv"), warm_up=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("o")
        await pilot.pause()
        await pilot.press(*"beam")
        await pilot.pause()
        options = app.screen.query_one(OptionList)
        ids = [options.get_option_at_index(i).id for i in range(options.option_count)]
        assert [i for i in ids if i] == ["greedy-vs-beam", "beam-search"]
        await pilot.press("down", "enter")
        await settle(pilot)
        assert app.screen.trace_name == "beam-search"


def unreadable(app) -> list[str]:
    """Painted text whose colour is its background's (after Textual's filters, NO_COLOR's too)."""
    out = []
    for strip in app.screen._compositor.render_strips():
        for seg in strip:
            color, bg = (seg.style.color, seg.style.bgcolor) if seg.style else (None, None)
            if seg.text.strip() and color is not None and bg is not None and \
                    color.get_truecolor() == bg.get_truecolor():
                out.append(seg.text)
    return out


@pytest.mark.parametrize(("variable", "value"), [("NO_COLOR", "1"), ("TERM", "dumb")])
async def test_every_area_opens_and_reads_under(variable, value, monkeypatch):
    """NO_COLOR=1 exited with "Theme 'textual-ansi' has not been registered"; an ANSI theme
    instead painted every character black on black."""
    monkeypatch.setenv(variable, value)
    app = make_app(warm_up=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.no_color is (variable == "NO_COLOR")
        for key, mode in zip("01234567", ["home", "learn", "trace", "quiz", "heatmaps", "lab", "stats", "exam"]):
            await pilot.press(key)
            await settle(pilot)
            assert app.current_mode == mode
            assert "? Help" in screen_text(app)
            assert not unreadable(app), (mode, unreadable(app)[:5])


def test_the_readability_check_can_fail(monkeypatch):
    """The same check, on the ANSI theme the first fix chose: all of home is unreadable."""
    import asyncio

    monkeypatch.setenv("NO_COLOR", "1")

    async def home():
        app = make_app(warm_up=False)
        app.theme = "ansi-dark"
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            return unreadable(app)

    assert len(asyncio.run(home())) > 10


def _run_on_a_terminal(env: dict) -> tuple[int, str]:
    """``attn-tutor`` with a pseudo-terminal as stdin, stdout and stderr."""
    main, child = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "tutor"], stdin=child, stdout=child, stderr=child,
                            env={**os.environ, **env}, close_fds=True)
    os.close(child)
    out = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(main)
    return proc.wait(timeout=60), out.decode("utf-8", "replace")


def test_term_dumb_says_in_one_line_why_it_prints_help():
    code, out = _run_on_a_terminal({"TERM": "dumb"})
    lines = out.replace("\r", "").splitlines()
    assert code == 0
    assert lines[0] == ("attn-tutor: TERM=dumb: this terminal cannot draw the full-screen tutor (use a "
                        "terminal with cursor control, or unset TERM=dumb); here is the command-line help instead.")
    assert any(line.startswith("Usage: attn-tutor") for line in lines[1:])


@pytest.mark.parametrize(("source", "several"), [("dynamic-context", False), ("multi-head", True)])
async def test_matrix_keys_show_only_for_a_source_with_several(source, several):
    app = make_app(StartAt("heatmaps", source), warm_up=False)
    async with app.run_test(size=(100, 30)) as pilot:
        assert await until(pilot, lambda: app.screen.query("Heatmap") and app.screen.wanted == source)
        await pilot.press("enter")  # into the grid: its keys and the panel's are live there
        await settle(pilot)
        footer = lambda: screen_text(app).rstrip("\n").splitlines()[-1]  # noqa: E731
        assert await until(pilot, lambda: "v Values" in footer()), footer()
        assert await until(pilot, lambda: (". Next matrix" in footer()) is several), footer()
        assert (", ." in dict(help_rows(app, app.screen))) is several  # the help agrees
