"""The formula sheet (``attn-tutor sheet``): load ``lessons/exam/sheet.toml`` and render it as
plain text, Markdown or a printable HTML page.

The HTML is laid out for two A4 pages: :data:`PAGE` states the geometry (margins, two columns,
font size), and :func:`estimated_pages` counts wrapped lines against it, so a test can keep the
sheet within two pages without a browser. Pure Python (no numpy, no rich).
"""

from __future__ import annotations

import functools
import html
import math
import textwrap
import tomllib
from dataclasses import dataclass
from pathlib import Path

import lessons
from tutor.content import LECTURE_SECTIONS, LESSON_IDS

TITLE = "Attention mechanisms — formula sheet (DNN Lecture 14)"


@dataclass(frozen=True)
class Page:
    """The printed geometry the HTML asks for (CSS ``@page`` and columns)."""

    width_mm: float = 210.0
    height_mm: float = 297.0
    margin_mm: float = 10.0
    columns: int = 2
    gap_mm: float = 6.0
    font_pt: float = 9.0
    line_height: float = 1.25
    char_em: float = 0.52
    """Mean advance of a character in em for the sans-serif body (a conservative estimate)."""

    @property
    def column_mm(self) -> float:
        return (self.width_mm - 2 * self.margin_mm - (self.columns - 1) * self.gap_mm) / self.columns

    @property
    def chars_per_line(self) -> int:
        return int(self.column_mm / (self.font_pt * self.char_em * 25.4 / 72))

    @property
    def lines_per_column(self) -> int:
        return int((self.height_mm - 2 * self.margin_mm) / (self.font_pt * self.line_height * 25.4 / 72))


PAGE = Page()


@dataclass(frozen=True)
class Formula:
    name: str
    formula: str
    shapes: str


@dataclass(frozen=True)
class Group:
    section: int
    title: str
    formulas: tuple[Formula, ...]


@dataclass(frozen=True)
class Sheet:
    groups: tuple[Group, ...]
    notation: tuple[tuple[str, str], ...]


class SheetError(ValueError):
    """``sheet.toml`` breaks its format (the message names the entry and field)."""


def _path() -> Path:
    return Path(lessons.ROOT) / "exam" / "sheet.toml"


@functools.cache
def load_sheet(path: Path | None = None) -> Sheet:
    """The sheet, checked: every section 1–12 once, in order, then optionally 13 (lesson 13,
    beyond the notes); every field a non-empty string.

    Raises:
        SheetError: naming the entry and field that is wrong.
    """
    path = path or _path()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SheetError(f"{path.name}: cannot be read ({exc})") from None
    if set(data) != {"group", "notation"}:
        raise SheetError(f"{path.name}: expected [[group]] and [[notation]] tables only")

    def text(table: dict, name: str, where: str, keep: bool = False) -> str:
        value = table.get(name)
        if not isinstance(value, str) or not value.strip():
            raise SheetError(f"{path.name}: {where}: field {name!r} must be a non-empty string")
        return value.strip() if keep else " ".join(value.split())  # formulas keep their spacing

    groups = []
    for i, g in enumerate(data["group"], 1):
        where = f"group {i}"
        if set(g) - {"section", "title", "formula"} or not g.get("formula"):
            raise SheetError(f"{path.name}: {where}: expected section, title and [[group.formula]]")
        formulas = tuple(Formula(text(f, "name", f"{where} formula {j}"),
                                 text(f, "formula", f"{where} formula {j}", keep=True),
                                 text(f, "shapes", f"{where} formula {j}"))
                         for j, f in enumerate(g["formula"], 1))
        groups.append(Group(int(g.get("section", 0)), text(g, "title", where), formulas))
    sections = [g.section for g in groups]
    if sections not in (list(range(1, LECTURE_SECTIONS + 1)),          # the notes' sections,
                        list(range(1, len(LESSON_IDS) + 1))):          # then lesson 13 if any
        raise SheetError(f"{path.name}: groups cover sections {sections}; expected "
                         f"1–{LECTURE_SECTIONS} once each, in order, optionally followed by "
                         f"{LECTURE_SECTIONS + 1}–{len(LESSON_IDS)}")
    notation = tuple((text(n, "symbol", f"notation {i}"), text(n, "meaning", f"notation {i}"))
                     for i, n in enumerate(data["notation"], 1))
    return Sheet(tuple(groups), notation)


def formula_count(sheet: Sheet | None = None) -> int:
    return sum(len(g.formulas) for g in (sheet or load_sheet()).groups)


# ----------------------------------------------------------------------------- plain, Markdown

def render_plain(sheet: Sheet | None = None, width: int = 88) -> str:
    """The sheet as plain text wrapped to ``width`` columns (ASCII-safe apart from the math)."""
    sheet = sheet or load_sheet()
    out = [TITLE, "=" * min(len(TITLE), width), ""]
    for g in sheet.groups:
        out.append(f"§{g.section} {g.title}")
        for f in g.formulas:
            out += textwrap.wrap(f"{f.name}: {f.formula}", width, initial_indent="  ",
                                 subsequent_indent="      ")
            out += textwrap.wrap(f.shapes, width, initial_indent="      ", subsequent_indent="      ")
        out.append("")
    out += ["Notation map: one letter, several meanings", "-" * 42]
    for symbol, meaning in sheet.notation:
        out += textwrap.wrap(f"{symbol}: {meaning}", width, initial_indent="  ",
                             subsequent_indent="      ")
    return "\n".join(out).rstrip() + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(sheet: Sheet | None = None) -> str:
    """The sheet as Markdown: one table per section, formulas in code spans."""
    sheet = sheet or load_sheet()
    out = [f"# {TITLE}", ""]
    for g in sheet.groups:
        out += [f"## §{g.section} {g.title}", "", "| | formula | symbols and shapes |", "| --- | --- | --- |"]
        out += [f"| {_md(f.name)} | `{_md(f.formula)}` | {_md(f.shapes)} |" for f in g.formulas]
        out.append("")
    out += ["## Notation map", "", "| symbol | what it means where |", "| --- | --- |"]
    out += [f"| `{_md(s)}` | {_md(m)} |" for s, m in sheet.notation]
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------- HTML

def render_html(sheet: Sheet | None = None, page: Page = PAGE) -> str:
    """A self-contained printable page (A4, two columns), every string escaped."""
    sheet = sheet or load_sheet()
    e = html.escape
    css = f"""
@page {{ size: A4; margin: {page.margin_mm}mm; }}
body {{ font-family: "DejaVu Sans", Arial, sans-serif; font-size: {page.font_pt}pt;
       line-height: {page.line_height}; margin: 0; color: #000; }}
main {{ column-count: {page.columns}; column-gap: {page.gap_mm}mm; }}
h1 {{ font-size: {page.font_pt + 2.5}pt; margin: 0 0 1mm; column-span: all; }}
h2 {{ font-size: {page.font_pt + 1}pt; margin: 1.2mm 0 0.4mm; break-after: avoid; }}
.f {{ break-inside: avoid; margin: 0 0 0.8mm; }}
.n {{ font-weight: bold; }}
code {{ font-family: "DejaVu Sans Mono", monospace; font-size: {page.font_pt - 0.3}pt; }}
.s {{ color: #333; padding-left: 3mm; }}
dl {{ margin: 0; }} dt {{ font-weight: bold; margin-top: 0.6mm; }} dd {{ margin: 0 0 0 3mm; }}
"""
    body = [f"<h1>{e(TITLE)}</h1>", "<main>"]
    for g in sheet.groups:
        body.append(f"<section><h2>§{g.section} {e(g.title)}</h2>")
        for f in g.formulas:
            body.append(f'<div class="f"><span class="n">{e(f.name)}:</span> <code>{e(f.formula)}</code>'
                        f'<div class="s">{e(f.shapes)}</div></div>')
        body.append("</section>")
    body.append("<section><h2>Notation map</h2><dl>")
    body += [f'<div class="f"><dt>{e(s)}</dt><dd>{e(m)}</dd></div>' for s, m in sheet.notation]
    body += ["</dl></section>", "</main>"]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{e(TITLE)}</title><style>{css}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def estimated_pages(sheet: Sheet | None = None, page: Page = PAGE) -> float:
    """Printed pages the HTML needs by :data:`PAGE`'s geometry: every entry wrapped to the
    column's characters per line, headings counted at their larger size plus spacing."""
    sheet = sheet or load_sheet()
    cpl = page.chars_per_line

    def wrapped(text: str, indent: int = 0) -> int:
        return max(1, math.ceil(len(text) / max(1, cpl - indent)))

    lines = 2.5  # the title
    for g in sheet.groups:
        lines += 1.6  # heading: larger font and margins
        for f in g.formulas:
            lines += wrapped(f"{f.name}: {f.formula}") + wrapped(f.shapes, 6) + 0.3
    lines += 1.6
    for _, m in sheet.notation:
        lines += 1 + wrapped(m, 6) + 0.2
    return lines / (page.lines_per_column * page.columns)
