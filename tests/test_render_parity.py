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
