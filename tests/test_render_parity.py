"""Every value on every surface: what ``--json`` names, each renderer shows.

For every trace, on its defaults and on a ``--set`` that replaces every token with a
lowercase word (``[xmy, xfeet, xhurt]`` is a markup tag to Rich, so a renderer that passes
data as markup drops it), each named value of the JSON — the inputs, every step's values and
the result — must appear in the Rich console renderer, the TUI trace screen (every page
visited, read from what was painted), plain text and Markdown. Titles, formulas, numbers put
in, notes and errata must appear too.

The expected text is made here from the JSON alone, written the way the trace renderers'
documented format writes values (``docs/trace-json.md``: 4 decimals; vectors ``[a, b]``,
matrix rows ``[a  b]``); then both sides are normalised (whitespace, box lines, table and
code marks dropped), so wrapping and alignment do not matter but a lost or cut value does.
"""

from __future__ import annotations

import html
import io
import json
import re

import pytest
from rich.console import Console

from engine.traces import build, input_specs, list_traces
from tutor.inputs import gather_inputs
from tutor.render.catalog import trace_json
from tutor.render.markdown import render_markdown
from tutor.render.plain import render_plain
from tutor.render.rich_view import whole
from tutor.render.text import asciify

TRACES = [info.name for info in list_traces()]


def lowercase_sets(name: str) -> dict:
    """``--set`` lines giving every word input new lowercase words (``<EOS>``-style tokens
    stay, so traces that look for them still work), parsed as the CLI parses them."""
    def word(w: str) -> str:
        return w if w.startswith("<") else "x" + w.lower()

    sets = []
    for spec in input_specs(name):
        if spec.kind == "labels":
            sets.append(f"{spec.name}={' '.join(word(w) for w in spec.default)}")
        elif spec.kind == "word":
            sets.append(f"{spec.name}={word(spec.default)}")
    return gather_inputs(sets, None)


VARIANTS = [(name, "defaults") for name in TRACES] + [
    (name, "lowercase") for name in TRACES if lowercase_sets(name)]


def inputs_of(name: str, variant: str) -> dict:
    return lowercase_sets(name) if variant == "lowercase" else {}


# --------------------------------------------------------------------------- expected text

def _num(x) -> str:
    """A JSON number as the text renderers write it (4 decimals, trailing zeros dropped)."""
    if x is None:  # an optional input left unset (docs/trace-json.md)
        return "not set (worked out from the other inputs)"
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, str):  # "inf", "-inf", "nan"
        return x
    if isinstance(x, int) or (float(x).is_integer() and abs(x) < 1e15):
        return str(int(x))
    if abs(x) < 1e-4 or abs(x) >= 1e7:
        return f"{x:.3e}"
    text = f"{x:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _depth(value) -> int:
    return 1 + _depth(value[0]) if isinstance(value, list) and value else (1 if isinstance(value, list) else 0)


def shown(value) -> str:
    """One JSON value as the renderers show it, lines joined (normalising drops the breaks)."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        return _num(value)
    if all(isinstance(v, str) for v in value) and not all(v in ("inf", "-inf", "nan") for v in value):
        return "[" + ", ".join(value) + "]"
    depth = _depth(value)
    if depth == 1:
        return "[" + ", ".join(_num(v) for v in value) + "]"
    if depth == 2:
        return "".join("[" + "  ".join(_num(v) for v in row) + "]" for row in value)
    kind = "matrix" if depth == 3 else "block"
    return "".join(f"{kind} {k} of {len(value)}:" + shown(block) for k, block in enumerate(value, 1))


_DROP = re.compile(r"\s|[│─╭╮╰╯┃━|`=]|<br>")


def norm(text: str) -> str:
    """Whitespace, box lines, table bars, code ticks, ``=`` and ``<br>`` dropped."""
    return _DROP.sub("", html.unescape(text.replace("\\|", "|")))


def expected(data: dict, ascii_only: bool = False) -> list[tuple[str, str]]:
    """(where, text) for every named value and every string a trace page shows."""
    a = asciify if ascii_only else (lambda s: s)
    out = [(f"input {k}", a(k + shown(v))) for k, v in data["inputs"].items()]
    for step in data["steps"]:
        where = f"step {step['index']}"
        out += [(f"{where} {k}", a(k + shown(v))) for k, v in step["values"].items()]
        out += [(f"{where} {field}", a(step[field])) for field in ("title", "formula", "substitution", "note")
                if step[field]]
    out += [(f"result {k}", a(k + shown(v))) for k, v in data["result"].items()]
    for e in data["errata"]:
        out += [(f"erratum {e['id']} {field}", a(e[field])) for field in ("where", "printed", "computed", "why")]
    out += [("title", a(data["title"]))] + ([("summary", a(data["summary"]))] if data["summary"] else [])
    return out


def missing(rendered: str, data: dict, ascii_only: bool = False) -> list[str]:
    page = norm(rendered)
    return [f"{where}: {text!r}" for where, text in expected(data, ascii_only) if norm(text) not in page]


# --------------------------------------------------------------------------- renderers

def rich_console_text(trace, width: int = 100) -> str:
    console = Console(width=width, file=io.StringIO(), record=True, highlight=False, no_color=True)
    console.print(whole(trace))
    return console.export_text()


@pytest.mark.parametrize(("name", "variant"), VARIANTS)
def test_every_value_reaches_rich_plain_and_markdown(name, variant):
    trace = build(name, inputs_of(name, variant))
    data = json.loads(trace_json(trace))
    problems = {
        "rich": missing(rich_console_text(trace), data),
        "plain": missing(render_plain(trace), data, ascii_only=True),
        "markdown": missing(render_markdown(trace), data),
    }
    problems = {k: v for k, v in problems.items() if v}
    assert not problems, f"{name} ({variant}): missing\n" + "\n".join(
        f"  {renderer}: {line}" for renderer, lines in problems.items() for line in lines)


def test_lowercase_tokens_really_are_markup_to_rich():
    """The check above can fail: Rich, given the same text as markup, drops the tokens."""
    from rich.text import Text

    data = json.loads(trace_json(build("qkv", lowercase_sets("qkv"))))
    tokens = shown(data["inputs"]["tokens"])
    assert tokens == "[xi, xlove, xcats]"
    assert Text.from_markup(f"tokens = {tokens}").plain.strip() == "tokens ="


@pytest.mark.parametrize(("variant", "size"), [("defaults", (100, 30)), ("lowercase", (80, 24))])
async def test_every_value_reaches_the_tui_trace_screen(variant, size):
    """At the size the issue was found at, and at the 80×24 minimum."""
    from tests.tui_text import settle, widget_text
    from tutor.app import StartAt, make_app
    from tutor.screens.trace import TraceScreen

    names = [name for name, v in VARIANTS if v == variant]
    app = make_app(StartAt("trace", names[0], trace_inputs=inputs_of(names[0], variant)), warm_up=False)
    problems: list[str] = []
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TraceScreen)
        for name in names:
            screen.load(name, inputs_of(name, variant))
            await settle(pilot)
            assert screen.trace is not None and screen.trace.name == name
            await pilot.press("g")
            painted = []
            for _ in range(screen.page_count):  # every page, moved to with the keys a student uses
                await pilot.pause()
                painted.append(widget_text(screen.query_one("#trace-page")))
                await pilot.press("n")
            assert screen.page == screen.page_count - 1
            data = json.loads(trace_json(screen.trace))
            problems += [f"{name}: {line}" for line in missing("\n".join(painted), data)]
    assert not problems, f"TUI ({variant}) missing:\n" + "\n".join(problems)


# --------------------------------------------------------------------------- heatmap labels

def readable(text: str) -> str:
    """The lines of a drawing and its columns read downwards (vertical column headers), with
    whitespace dropped, joined: a label shown either way is a substring."""
    lines = text.splitlines()
    width = max((len(line) for line in lines), default=0)
    grid = [line.ljust(width) for line in lines]
    down = ["".join(row[x] for row in grid) for x in range(width)]
    return "\n".join([norm(text)] + [norm(line) for line in down])  # wrapped text reads on, too


def labels_missing(drawn: str, maps) -> list[str]:
    """Every row and column label (as the renderer cuts a long one: 12 cells and "…"), and
    the title, must be readable in ``drawn``."""
    from tutor.heatmap.render import truncate

    page = readable(drawn)
    out = []
    for h in maps:
        for axis, labels in (("row", h.row_labels), ("column", h.col_labels)):
            out += [f"{h.title}: {axis} label {lab!r}" for lab in labels  # whole (a key), or cut
                    if norm(lab) not in page and norm(truncate(lab, 12)) not in page]
        if norm(h.title) not in page:
            out.append(f"title {h.title!r}")
    return out


HEATMAP_VARIANTS = [(n, v) for n, v in VARIANTS if build(n, inputs_of(n, v)).heatmaps]


@pytest.mark.parametrize(("name", "variant"), HEATMAP_VARIANTS)
def test_every_heatmap_label_reaches_rich_and_plain(name, variant):
    from tutor.heatmap.render import HeatmapOptions, heatmap_text, render_heatmap

    maps = build(name, inputs_of(name, variant)).heatmaps
    for width in (80, 100):
        plain = "\n\n".join(heatmap_text(h.weights, h.row_labels, h.col_labels, h.title,
                                         HeatmapOptions(width=width, color=False)) for h in maps)
        console = Console(width=width, file=io.StringIO(), record=True, no_color=True)
        for h in maps:
            console.print(render_heatmap(h.weights, h.row_labels, h.col_labels, h.title))
        problems = labels_missing(plain, maps) + labels_missing(console.export_text(), maps)
        assert not problems, f"{name} ({variant}) at {width}: {problems}"


async def test_every_heatmap_label_reaches_the_tui_heatmap():
    """Every source's every matrix, the grid scrolled through all its columns."""
    from tests.tui_text import settle, widget_text
    from tutor.app import make_app
    from tutor.heatmap.model import clean_label
    from tutor.widgets.heatmap_panel import HeatmapPanel

    app = make_app(warm_up=False)
    problems: list[str] = []
    async with app.run_test(size=(80, 24)) as pilot:
        for name, variant in HEATMAP_VARIANTS:
            maps = build(name, inputs_of(name, variant)).heatmaps
            app.show_heatmaps(f"{name} {variant}", maps)
            await settle(pilot)
            for k in range(len(maps)):
                for _ in range(100):  # the first time, the screen builds every trace first
                    panel = app.screen.query(HeatmapPanel)
                    grid = panel.first().heatmap if panel else None
                    if grid is not None and grid.model.title == clean_label(maps[k].title) and grid.size.width:
                        break
                    await settle(pilot)
                assert grid is not None, f"{name}: no heatmap on screen"
                grid.focus()
                await pilot.pause()
                painted = [widget_text(grid)]
                for _ in range(maps[k].weights.shape[1]):  # scroll right one cell at a time
                    await pilot.press("right")
                    painted.append(widget_text(grid))
                problems += [f"{name} ({variant}) {line}" for line in labels_missing("\n".join(painted), [maps[k]])]
                await pilot.press("full_stop")  # the next matrix of this source
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------- quiz options

def quiz_items():
    from tutor.quiz.bank import load_bank
    from tutor.quiz.modes import pool

    return [it for it in pool(load_bank(), set(), generated=True, seed=3) if any(a.choices for a in it.asks)]


def test_every_quiz_option_reaches_the_line_quiz():
    from tutor.quiz.plain import LineReader, make_out, run_lines
    from tutor.quiz.session import QuizSession
    from tutor.store import open_store

    items = quiz_items()
    assert len(items) > 50
    out = io.StringIO()
    with open_store() as store:
        session = QuizSession(items, store=store, mode="practice")
        run_lines(session, out=make_out(False, out), reader=LineReader(io.StringIO(":skip\n" * len(items))))
    shown = norm(out.getvalue())
    missing_options = [f"{it.question_id}: {c!r}" for it in items for a in it.asks for c in a.choices
                       if norm(c) not in shown]
    assert not missing_options


def _typed(part) -> str:
    """A generated part's answer, typed as a student would."""
    if part.kind == "vector":
        return ", ".join(str(x) for x in part.answer)
    if part.kind == "set":
        return " ".join(part.answer)
    return str(part.answer)


async def test_every_quiz_option_reaches_the_tui_quiz_screen():
    from tests.tui_text import settle, widget_text
    from tutor.app import StartAt, make_app
    from tutor.quiz.session import QuizSession

    app = make_app(StartAt("quiz"), warm_up=False)
    problems, asked = [], set()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen  # a session of just the items with options, driven by the screen
        screen.session = QuizSession(quiz_items(), store=app.store, mode="practice")
        screen._next_item()
        await pilot.pause()
        while screen.state == "asking":
            session = screen.session
            item, part = session.current, session.part
            painted = norm(widget_text(screen.query_one("#quiz-question")))
            choices = list(session.ask.choices)
            problems += [f"{item.question_id} part {part + 1}: {c!r}" for c in choices if norm(c) not in painted]
            if choices:
                asked.add((item.question_id, part))
            if part + 1 < len(item.asks) and any(a.choices for a in item.asks[part + 1:]):
                # answer this part to reach the next part's options: its answer, or a plain guess
                for guess in (_typed(item.problem.parts[part]) if item.problem else "1", "1", "a"):
                    screen.query_one("#quiz-answer").value = guess
                    await pilot.press("enter")
                    await pilot.pause()
                    if session.part == part + 1:
                        break
                else:
                    await pilot.press("ctrl+n")
            else:
                await pilot.press("ctrl+n")
            await pilot.pause()
    want = {(it.question_id, k) for it in quiz_items() for k, a in enumerate(it.asks) if a.choices}
    assert not problems, problems
    assert asked == want, want - asked
