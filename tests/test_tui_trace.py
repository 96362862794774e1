"""Trace screen: step forward and back, bad input stays inline, good input rebuilds."""

from __future__ import annotations

import math

from tests.tui_text import until
from tutor.app import StartAt, make_app
from tutor.screens.trace import TraceScreen
from tutor.screens.trace_inputs import TraceInputs, value_to_text


async def _open(pilot, app):
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()
    assert isinstance(app.screen, TraceScreen)
    return app.screen


async def test_steps_forward_back_first_last():
    app = make_app(StartAt("trace", "encoder"))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _open(pilot, app)
        assert screen.trace.name == "encoder" and screen.page == 0
        await pilot.press("n", "n")
        assert screen.page == 2
        await pilot.press("b")
        assert screen.page == 1
        await pilot.press("G")
        assert screen.page == screen.page_count - 1
        await pilot.press("g")
        assert screen.page == 0


async def test_bad_input_is_explained_and_last_good_trace_stays():
    app = make_app(StartAt("trace", "encoder"))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _open(pilot, app)
        before = screen.trace
        await pilot.press("e")
        assert isinstance(app.screen, TraceInputs)
        field = app.screen.query_one("#in-X")
        field.value = "1, 2; 3"  # ragged rows
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, TraceInputs)
        assert field.has_class("-invalid")
        assert str(app.screen.query_one("#err-X").render()).startswith("input X:")
        await pilot.press("escape")
        assert app.screen is screen and screen.trace is before


async def test_good_input_rebuilds_every_number():
    app = make_app(StartAt("trace", "encoder"))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _open(pilot, app)
        await pilot.press("e")
        # three tokens, one embedding changed: H_1 = tanh(W_HX X_1) with W_HX = [I_3 | 0]
        app.screen.query_one("#in-X").value = "0.3, 0.2, 0.1, 0; 0.2, -0.4, 0.1, 0.5; -0.1, 0.3, 0.4, -0.2"
        await pilot.press("ctrl+s")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen is screen and screen.overrides
        H = screen.trace.result["H"]
        assert [round(v, 12) for v in H[0]] == [round(math.tanh(x), 12) for x in (0.3, 0.2, 0.1)]


def test_value_to_text_matches_set_syntax():
    assert value_to_text([[1.0, 0.0], [0.5, -2.0]]) == "1, 0; 0.5, -2"
    assert value_to_text(["my", "feet", "hurt"]) == "my feet hurt"
    assert value_to_text(0.25) == "0.25"


async def test_started_with_overrides_from_the_command_line():
    app = make_app(StartAt("trace", "qkv", trace_inputs={"position": 3}))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _open(pilot, app)
        assert screen.trace.inputs["position"] == 3 and not screen.trace.errata


async def test_optional_inputs_start_empty_and_are_not_sent_back():
    # `scores` derives V itself unless the student gives one; changing K must still change V
    app = make_app(StartAt("trace", "scores"))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _open(pilot, app)
        await pilot.press("e")
        form = app.screen
        assert isinstance(form, TraceInputs)
        optional = [s.name for s in form.specs if s.optional]
        assert optional, "the scores trace has an optional input"
        for name in optional:
            assert form.query_one(f"#in-{name}").value == ""
        await pilot.press("ctrl+s")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen is screen and all(name not in screen.overrides for name in optional)


async def test_masking_form_opens_and_accepts_scores():
    app = make_app(StartAt("trace", "masking"))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _open(pilot, app)
        await pilot.press("e")
        form = app.screen
        n = len(screen.trace.inputs["tokens"])
        form.query_one("#in-scores").value = "; ".join(", ".join(["0"] * n) for _ in range(n))
        await pilot.press("ctrl+s")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen is screen and "scores" in screen.overrides


async def test_a_slow_build_of_the_last_trace_does_not_replace_the_newer_one(monkeypatch):
    """On a first run the qkv build can still be compiling when the student opens another
    trace; when it finishes late, the screen must stay on the trace asked for last."""
    import threading

    import engine.traces as traces

    release = threading.Event()
    real_build = traces.build

    def build(name, overrides=None):
        if name == "qkv":
            release.wait(10)  # qkv finishes only after beam-search is on screen
        return real_build(name, overrides)

    monkeypatch.setattr(traces, "build", build)
    app = make_app(StartAt("trace", "qkv"), warm_up=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TraceScreen)
        screen.load("beam-search", {})
        assert await until(pilot, lambda: screen.trace is not None)
        assert screen.trace.name == "beam-search"
        release.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.trace.name == "beam-search" and screen.trace_name == "beam-search"
