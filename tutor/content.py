"""Load and check the reading material in ``lessons/``: lessons, exam cards, guidance, Q&A.

Pure Python (``tomllib`` and the standard library), so the CLI can list lessons without
importing numpy, rich or textual. Every file is checked against its schema (here, and in
:mod:`tutor.content_schema` and :mod:`tutor.content_exam`) when it is loaded; a file that
breaks it raises :class:`ContentError` naming the file, the field and what was expected.

Layout (under ``lessons.ROOT`` or the ``root`` passed in)::

    sections/NN-<id>.md   one lesson per lecture section: TOML front matter between two
                          ``+++`` lines, then a Markdown body with the ``##`` headings of
                          HEADINGS, in that order (``###`` and deeper are free)
    exam/cards.toml       one ``[[card]]`` per exam topic of the notes, in EXAM_TOPICS order;
    exam/transformer.toml then the Transformer lesson's two (CARD_FILES)
    exam/guidance.md      the exam guidance summary (Markdown)
    qa.toml               ``[[item]]`` short questions and answers, each tied to a lesson
    errata.toml           ``[[erratum]]`` the catalogue of places where the notes go wrong,
                          each with a stable id that lessons (erratum `ID`), quiz items
                          (``erratum = "ID"``), cards (``errata = [...]``) and traces use

Notation used by the text (it is shown as written, with no LaTeX step): subscripts after an
underscore (``H_t``, ``W_Q``, ``d_k``), braces only when the subscript holds an operator or a
comma (``H_{t-1}``, ``z_{t,w}``); ``ᵀ`` for a transpose; ``√d_k``; ``Σ_{i=1}^{T}``; ASCII
``-`` for minus so numbers can be pasted into ``--set``; display formulas in fenced blocks.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# the ids, the error and the checks every loader shares, and the exam cards and Q&A: their
# own modules, reachable from here as before
from tutor.content_exam import (  # noqa: F401
    CARD_FILES,
    ExamCard,
    QAItem,
    load_exam_cards,
    load_exam_guidance,
    load_qa,
    qa_for,
)
from tutor.content_schema import (  # noqa: F401
    _INT,
    _STR,
    _STRS,
    _TABLES,
    EXAM_TOPICS,
    LECTURE_SECTIONS,
    LESSON_IDS,
    ContentError,
    _check_choice,
    _check_fields,
    _read_toml,
    _rel,
    _root,
)

HEADINGS: tuple[str, ...] = (
    "Learning goals",
    "Intuition",
    "Where the analogy breaks",
    "Formal statement",
    "Symbols",
    "Worked example",
    "Pitfalls",
    "Recap",
    "Real-world uses",
    "Exam notes",
    "Errata",
)
"""The ``##`` headings every lesson body has, in this order."""

SYMBOL_HEADER = ("Symbol", "Meaning", "Shape")
"""The header row of the table under ``## Symbols``."""

_TRACE_LINK = re.compile(r"attn-tutor trace ([a-z][a-z0-9-]*)")


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Symbol:
    """One row of a lesson's symbol table."""

    symbol: str
    meaning: str
    shape: str


@dataclass(frozen=True)
class Lesson:
    """One lesson (a lecture section): front matter plus the body split at its headings."""

    id: str
    section: int
    title: str
    summary: str
    traces: tuple[str, ...]
    quiz_topic: str
    heatmaps: tuple[str, ...]
    exam_topics: tuple[str, ...]
    related: tuple[str, ...]
    body: str
    parts: Mapping[str, str] = field(compare=False, repr=False)
    symbols: tuple[Symbol, ...] = field(repr=False)
    path: Path = field(compare=False, repr=False)

    def part(self, heading: str) -> str:
        """The Markdown under ``## heading`` (without the heading line)."""
        return self.parts[heading]

    def trace_links(self) -> tuple[str, ...]:
        """Every ``attn-tutor trace NAME`` the text mentions, in order of first mention."""
        return tuple(dict.fromkeys(_TRACE_LINK.findall(self.body)))


# --------------------------------------------------------------------------- schema

_LESSON_SCHEMA = {
    "id": (_STR, True),
    "section": (_INT, True),
    "title": (_STR, True),
    "summary": (_STR, True),
    "traces": (_STRS, True),
    "quiz_topic": (_STR, True),
    "heatmaps": (_STRS, True),
    "exam_topics": (_STRS, True),
    "related": (_STRS, True),
}

# --------------------------------------------------------------------------- lessons

_FILE_NAME = re.compile(r"(\d\d)-([a-z][a-z0-9-]*)\.md")


def _split_front_matter(text: str, where: str) -> tuple[dict[str, Any], str]:
    lines = text.splitlines()
    if not lines or lines[0].strip() != "+++":
        raise ContentError(f"{where}: front matter: expected the file to start with a '+++' line")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "+++")
    except StopIteration:
        raise ContentError(f"{where}: front matter: expected a closing '+++' line") from None
    try:
        meta = tomllib.loads("\n".join(lines[1:end]))
    except tomllib.TOMLDecodeError as exc:
        raise ContentError(f"{where}: front matter: not valid TOML ({exc})") from None
    return meta, "\n".join(lines[end + 1 :]).strip() + "\n"


def _split_body(body: str, where: str) -> dict[str, str]:
    """Split at ``## `` headings (outside code fences) and check they are HEADINGS in order."""
    parts: dict[str, list[str]] = {}
    current: list[str] | None = None
    preamble: list[str] = []
    fenced = False
    for line in body.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("## "):
            heading = line[3:].strip()
            if heading in parts:
                raise ContentError(f"{where}: body: heading '## {heading}' appears twice")
            current = parts[heading] = []
            continue
        (preamble if current is None else current).append(line)
    if any(line.strip() for line in preamble):
        raise ContentError(f"{where}: body: expected '## {HEADINGS[0]}' before any text")
    found = list(parts)
    for i, expected in enumerate(HEADINGS):
        if i >= len(found):
            raise ContentError(f"{where}: body: missing heading '## {expected}'")
        if found[i] != expected:
            raise ContentError(
                f"{where}: body: heading {i + 1} is '## {found[i]}'; expected '## {expected}'"
            )
    if len(found) > len(HEADINGS):
        raise ContentError(
            f"{where}: body: unexpected heading '## {found[len(HEADINGS)]}'; "
            "expected only: " + ", ".join(HEADINGS)
        )
    out = {}
    for heading, lines in parts.items():
        text = "\n".join(lines).strip()
        if not text:
            raise ContentError(f"{where}: body: section '## {heading}' is empty")
        out[heading] = text
    return out


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _parse_symbols(text: str, where: str) -> tuple[Symbol, ...]:
    rows = [line for line in text.splitlines() if line.lstrip().startswith("|")]
    if len(rows) < 3 or tuple(_cells(rows[0])) != SYMBOL_HEADER:
        raise ContentError(
            f"{where}: body: '## Symbols' needs a table with header "
            f"| {' | '.join(SYMBOL_HEADER)} | and at least one row"
        )
    symbols = []
    for line in rows[2:]:
        cells = _cells(line)
        if len(cells) != 3 or not all(cells):
            raise ContentError(
                f"{where}: body: symbol table row {line.strip()!r}; expected three non-empty cells"
            )
        symbols.append(Symbol(*cells))
    return tuple(symbols)


def parse_lesson(path: Path, root: Path) -> Lesson:
    """Read and check one lesson file."""
    where = _rel(path, root)
    match = _FILE_NAME.fullmatch(path.name)
    if not match:
        raise ContentError(f"{where}: file name: expected NN-<lesson id>.md, e.g. 05-qkv.md")
    meta, body = _split_front_matter(path.read_text(encoding="utf-8"), where)
    _check_fields(meta, _LESSON_SCHEMA, where)
    _check_choice(meta["id"], LESSON_IDS, where, "id")
    expected_section = LESSON_IDS.index(meta["id"]) + 1
    if meta["section"] != expected_section:
        raise ContentError(
            f"{where}: field 'section' is {meta['section']}; expected {expected_section} "
            f"for lesson {meta['id']!r}"
        )
    if (int(match[1]), match[2]) != (meta["section"], meta["id"]):
        raise ContentError(
            f"{where}: file name: expected {meta['section']:02d}-{meta['id']}.md "
            "to match the front matter"
        )
    _check_choice(meta["quiz_topic"], LESSON_IDS, where, "quiz_topic")
    _check_choice(meta["related"], LESSON_IDS, where, "related")
    _check_choice(meta["exam_topics"], EXAM_TOPICS, where, "exam_topics")
    parts = _split_body(body, where)
    return Lesson(
        id=meta["id"],
        section=meta["section"],
        title=meta["title"],
        summary=meta["summary"],
        traces=tuple(meta["traces"]),
        quiz_topic=meta["quiz_topic"],
        heatmaps=tuple(meta["heatmaps"]),
        exam_topics=tuple(meta["exam_topics"]),
        related=tuple(meta["related"]),
        body=body,
        parts=parts,
        symbols=_parse_symbols(parts["Symbols"], where),
        path=path,
    )


@functools.cache
def load_lessons(root: Path | None = None) -> tuple[Lesson, ...]:
    """Every lesson under ``root/sections`` (default ``lessons.ROOT``), in section order."""
    base = _root(root)
    paths = sorted((base / "sections").glob("*.md"))
    found = [parse_lesson(p, base) for p in paths]
    seen: dict[str, Path] = {}
    for lesson in found:
        if lesson.id in seen:
            raise ContentError(
                f"{_rel(lesson.path, base)}: field 'id' {lesson.id!r} is already used by "
                f"{_rel(seen[lesson.id], base)}; expected each lesson once"
            )
        seen[lesson.id] = lesson.path
    return tuple(sorted(found, key=lambda lesson: lesson.section))


def get_lesson(lesson_id: str, root: Path | None = None) -> Lesson:
    """The lesson with this id, or ``LookupError("no lesson 'x'; expected one of …")``."""
    lessons_ = load_lessons(root)
    for lesson in lessons_:
        if lesson.id == lesson_id:
            return lesson
    raise LookupError(
        f"no lesson {lesson_id!r}; expected one of: " + ", ".join(lesson.id for lesson in lessons_)
    )


