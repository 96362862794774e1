"""Terminal control in data never reaches the terminal, on any renderer.

A weights file's ``"title"`` of ``"\\x1b]52;c;…\\x1b\\\\"`` (OSC 52) wrote the user's clipboard
when it was printed. Here such strings go in wherever data comes from a file or an argument —
trace tokens (``--set``), a heatmap file's title, labels and CSV header, a stored mock exam's
status, a student's answer, an error that echoes what was typed — and every renderer's output
is checked: no escape sequence, no other C0/C1 control, no bidi override. JSON keeps the data
exact (as ``\\u`` escapes).
"""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pytest
from rich.console import Console
from typer.testing import CliRunner

from engine.trace import HeatmapData
from tests.tui_text import screen_text, settle, until, widget_text
from tutor.cli import app as cli_app
from tutor.render.safe import clean

OSC52 = "\x1b]52;c;aGVsbG8=\x1b\\"
EVIL = f"a{OSC52}b\x1b[2Jc\x9b31md\x07e\u202ef\x00g"
"""An OSC 52 clipboard write, a clear-screen, an 8-bit CSI, a bell, a bidi override, a NUL."""

EVIL_SET = "tokens=" + json.dumps([f"I{EVIL}", "love", "cats"])
"""``--set`` in its JSON form (the words hold ``;``, which the short form reads as matrix rows)."""

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def assert_clean(out: str, where: str, *, data: bool = False) -> None:
    """No control character in ``out``; and (unless it is ``data``, JSON that keeps the
    string as backslash-u escapes) nothing left of the OSC 52 sequence either."""
    bad = sorted({f"U+{ord(c):04X}" for c in _CONTROL.findall(out)})
    assert not bad, f"{where}: control characters reached the output: {bad}"
    assert data or "]52;" not in out, f"{where}: the OSC 52 payload survived"


def test_clean_removes_sequences_whole_and_keeps_the_text():
    assert clean(EVIL) == "abcdef" + "g"
    assert clean("tab\there\r\nnext") == "tab here\nnext"
    assert clean("two\nlines", lines=False) == "two lines"
    assert clean("[the, a] α→β") == "[the, a] α→β"  # printable text is left exactly as it is


# --------------------------------------------------------------------------- traces

def _evil_trace():
    from engine.traces import build
    from tutor.inputs import gather_inputs

    return build("qkv", gather_inputs([EVIL_SET], None))


def test_a_trace_with_control_in_its_tokens_renders_clean_everywhere():
    from tutor.render.catalog import trace_json
    from tutor.render.markdown import render_markdown
    from tutor.render.plain import render_plain
    from tutor.render.rich_view import whole

    trace = _evil_trace()
    assert trace.inputs["tokens"][0] == f"I{EVIL}"  # the data itself is kept as given
    assert_clean(render_plain(trace), "plain")
    assert_clean(render_plain(trace, ascii_only=False), "plain unicode")
    assert_clean(render_markdown(trace), "markdown")
    out = trace_json(trace)
    assert_clean(out, "json", data=True)
    assert json.loads(out)["inputs"]["tokens"][0] == f"I{EVIL}"  # exact, as \u escapes
    console = Console(width=100, file=io.StringIO(), record=True, no_color=True)
    console.print(whole(trace))
    shown = console.export_text()
    assert_clean(shown, "rich")
    assert "Iabcdefg" in shown


async def test_the_tui_trace_screen_and_heatmap_stay_clean():
    from tutor.app import StartAt, make_app
    from tutor.inputs import gather_inputs

    inputs = gather_inputs([EVIL_SET], None)
    app = make_app(StartAt("trace", "qkv", trace_inputs=inputs), warm_up=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        for _ in range(app.screen.page_count):
            assert_clean(screen_text(app), f"TUI trace page {app.screen.page}")
            await pilot.press("n")
        await pilot.press("h")  # the heatmap modal: labels and title from the tokens
        await settle(pilot)
        assert_clean(screen_text(app), "TUI heatmap modal")


async def test_the_heatmaps_screen_and_toasts_stay_clean():
    from tutor.app import make_app

    data = HeatmapData(f"title {EVIL}", np.array([[0.5, 0.5], [1.0, 0.0]]), [f"r{EVIL}", "r2"], ["c1", f"c{EVIL}"])
    app = make_app(warm_up=False)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        app.show_heatmaps(f"lab {EVIL}", [data])
        for _ in range(100):  # the screen first builds every trace (seconds on a cold cache)
            await settle(pilot)
            if "title abcdefg" in screen_text(app):
                break
        painted = screen_text(app)
        assert "title abcdefg" in painted and "lab abcdefg" in painted
        assert_clean(painted, "TUI heatmaps")
        app.notify(f"toast {EVIL}")
        assert await until(pilot, lambda: "toast abcdefg" in screen_text(app))
        painted = screen_text(app)
        assert "toast abcdefg" in painted
        assert_clean(painted, "TUI toast")


# --------------------------------------------------------------------------- heatmap files

@pytest.fixture
def evil_files(tmp_path):
    js = tmp_path / "w.json"
    js.write_text(json.dumps({"title": EVIL, "weights": [[0.25, 0.75], [1, 0]],
                              "rows": [f"x{EVIL}", "y"], "cols": ["u", f"v{EVIL}"]}))
    csv = tmp_path / "w.csv"
    csv.write_text(f",my{EVIL},feet\nj{EVIL},0.5,0.5\nai,0.2,0.8\n", encoding="utf-8")
    return tmp_path, js, csv


@pytest.mark.parametrize("color", [False, True])
def test_heatmap_files_print_and_save_clean(evil_files, monkeypatch, color):
    import tutor.terminal

    tmp, js, csv = evil_files
    monkeypatch.setattr(tutor.terminal, "use_color", lambda: color)
    runner = CliRunner()
    for source in (js, csv):
        for suffix in (".txt", ".svg", ".html"):
            saved = tmp / f"out{suffix}"
            result = runner.invoke(cli_app, ["heatmap", "--from", str(source), "-w", "80", "--save", str(saved)])
            assert result.exit_code == 0, result.output
            assert_clean(result.stdout, f"heatmap {source.name} stdout")
            assert_clean(result.stderr, f"heatmap {source.name} stderr")
            assert_clean(saved.read_text(encoding="utf-8"), f"heatmap saved {suffix}")
    title = runner.invoke(cli_app, ["heatmap", "--from", str(js), "--title", f"t{EVIL}", "-w", "80"])
    assert_clean(title.stdout, "heatmap --title")


# --------------------------------------------------------------------------- words that echo input

def test_error_lines_that_echo_input_stay_clean():
    runner = CliRunner()
    for args in (["lesson", f"x{EVIL}"], ["trace", f"x{EVIL}"], ["trace", "qkv", "--set", f"tokens={EVIL}"],
                 ["heatmap", "--from", f"/no/such{EVIL}.csv"], ["quiz", "--plain", "--topic", EVIL]):
        result = runner.invoke(cli_app, args)
        assert result.exit_code != 0
        # a message that quotes the input with repr shows "\x1b" as four harmless characters
        assert_clean(result.stderr + result.stdout, " ".join(args[:1]), data=True)


def test_quiz_words_stay_clean_on_both_front_ends():
    from tutor.quiz.plain import Out, print_summary
    from tutor.quiz.session import Result, Summary
    from tutor.render import quiz as words

    summary = Summary(mode="practice", seed=1, total=1, status="finished", seconds=3.0)
    summary.results.append(Result("q1", "qkv", False, None, f"my {EVIL}", (f"exp {EVIL}",), True, f"lab {EVIL}"))
    stream = io.StringIO()
    print_summary(summary, Out(stream=stream))
    Out(stream=stream).line(f"question {EVIL}")
    assert_clean(stream.getvalue(), "quiz --plain")
    console = Console(width=80, file=io.StringIO(), record=True, no_color=True)
    console.print(words.summary(summary))
    assert_clean(console.export_text(), "TUI quiz summary")


def test_stats_and_lab_words_stay_clean():
    from tutor.lab.jsonout import dumps
    from tutor.lab.report import Style, print_parts, renderable
    from tutor.quiz.bank import load_bank
    from tutor.quiz.progress import compute
    from tutor.render.stats import render_text, stats_renderable
    from tutor.store import open_store

    with open_store() as store:
        data = compute(store, load_bank())
    data["mock_exams"] = [{"started_at": "2026-03-01T18:00:00Z", "questions": 2, "answered": 1,
                           "correct": 1, "score": 0.5, "status": f"odd {EVIL}"}]
    assert_clean("\n".join(render_text(data)), "stats text")
    console = Console(width=100, file=io.StringIO(), record=True, no_color=True)
    console.print(stats_renderable(data))
    print_parts(console, [f"loaded {EVIL}"], Style(color=False))
    console.print(renderable([f"again {EVIL}"]))
    assert_clean(console.export_text(), "stats + lab on Rich")
    out = dumps({"saved_to": f"/tmp/{EVIL}"})
    assert_clean(out, "lab --json", data=True)
    assert json.loads(out)["saved_to"] == f"/tmp/{EVIL}"
