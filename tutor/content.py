"""Load and check the reading material in ``lessons/``: lessons, exam cards, guidance, Q&A.

Pure Python (``tomllib`` and the standard library), so the CLI can list lessons without
importing numpy, rich or textual. Every file is checked against the schema below when it is
loaded; a file that breaks it raises :class:`ContentError` naming the file, the field and
what was expected.

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

LESSON_IDS: tuple[str, ...] = (
    "encoder-decoder",
    "context-vector",
    "teacher-forcing",
    "attention-intro",
    "qkv",
    "self-attention",
    "cross-attention",
    "scoring",
    "pooling",
    "decoding",
    "visualisation",
    "training",
    "transformer",
)
"""The lesson ids (= quiz topics); section n is ``LESSON_IDS[n-1]``. The first twelve are the
lecture's sections in order; ``transformer`` (13) goes beyond the notes, to the model the
lab trains."""

LECTURE_SECTIONS = 12
"""How many of the lessons are sections of the lecture notes."""

EXAM_TOPICS: tuple[str, ...] = (
    "exam-encoder-decoder",
    "exam-bottleneck",
    "exam-teacher-forcing",
    "exam-attention",
    "exam-qkv",
    "exam-self-vs-cross",
    "exam-scaled-dot",
    "exam-decoding",
    "exam-cross-entropy",
    "exam-positions",
    "exam-transformer",
)
"""The exam revision topics: the notes' nine "Exam Revision Notes" in their order, then the two
of the Transformer lesson (positions; layers, heads and cost)."""

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


class ContentError(ValueError):
    """A lesson file breaks the schema; the message names the file, the field and the fix."""


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


@dataclass(frozen=True)
class ExamCard:
    """One exam revision card (a topic of the notes' "Exam Revision Notes")."""

    id: str
    title: str
    lesson: str
    must_know: str
    key_formula: str
    top_pitfall: str
    self_check: str
    self_check_answer: str
    connects_to: tuple[str, ...]
    traces: tuple[str, ...] = ()
    errata: tuple[str, ...] = ()
    """Ids of the catalogue errata (``errata.toml``) this topic touches."""


@dataclass(frozen=True)
class QAItem:
    """A short question with its answer, tied to the lesson that covers it."""

    id: str
    lesson: str
    question: str
    answer: str
    source: str = "tutor"


# --------------------------------------------------------------------------- schema

_STR, _INT, _STRS, _TABLES = "a string", "an integer", "a list of strings", "a list of tables"

_KINDS = {
    _STR: lambda v: isinstance(v, str) and v.strip() != "",
    _INT: lambda v: isinstance(v, int) and not isinstance(v, bool),
    _STRS: lambda v: isinstance(v, list) and all(isinstance(x, str) and x for x in v),
    _TABLES: lambda v: isinstance(v, list) and all(isinstance(x, dict) for x in v),
}


def _check_fields(
    data: Mapping[str, Any],
    schema: Mapping[str, tuple[str, bool]],
    where: str,
) -> None:
    """Check required fields are present, every field has its type, and nothing is unknown."""
    for name, (kind, required) in schema.items():
        if name not in data:
            if required:
                raise ContentError(f"{where}: missing field '{name}' (expected {kind})")
            continue
        value = data[name]
        if not _KINDS[kind](value):
            shown = repr(value) if len(repr(value)) < 60 else type(value).__name__
            what = f"{kind}, not empty" if kind == _STR else kind
            raise ContentError(f"{where}: field '{name}' is {shown}; expected {what}")
    unknown = sorted(set(data) - set(schema))
    if unknown:
        raise ContentError(
            f"{where}: unknown field '{unknown[0]}'; expected only: " + ", ".join(schema)
        )


def _check_choice(value: str | list[str], allowed: tuple[str, ...], where: str, name: str) -> None:
    for v in [value] if isinstance(value, str) else value:
        if v not in allowed:
            raise ContentError(
                f"{where}: field '{name}' has {v!r}; expected one of: " + ", ".join(allowed)
            )


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

_CARD_SCHEMA = {
    "id": (_STR, True),
    "title": (_STR, True),
    "lesson": (_STR, True),
    "must_know": (_STR, True),
    "key_formula": (_STR, True),
    "top_pitfall": (_STR, True),
    "self_check": (_STR, True),
    "self_check_answer": (_STR, True),
    "connects_to": (_STRS, True),
    "traces": (_STRS, False),
    "errata": (_STRS, False),
}

_QA_SCHEMA = {
    "id": (_STR, True),
    "lesson": (_STR, True),
    "question": (_STR, True),
    "answer": (_STR, True),
    "source": (_STR, False),
}


def _rel(path: Path, root: Path) -> str:
    """The path as the message shows it: ``lessons/sections/05-qkv.md``."""
    try:
        return str(Path(root.name) / path.relative_to(root))
    except ValueError:
        return str(path)


def _read_toml(path: Path, where: str) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ContentError(f"{where}: file is missing") from None
    except tomllib.TOMLDecodeError as exc:
        raise ContentError(f"{where}: not valid TOML ({exc})") from None


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


def _root(root: Path | None) -> Path:
    if root is not None:
        return Path(root)
    import lessons

    return lessons.ROOT


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
        f"no lesson {lesson_id!r}; expected one of: " + ", ".join(l.id for l in lessons_)
    )


# --------------------------------------------------------------------------- exam, Q&A


CARD_FILES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("cards.toml", EXAM_TOPICS[:9]),
    ("transformer.toml", EXAM_TOPICS[9:]),
)
"""The card files under ``exam/`` and the topics each holds, in order: the notes' nine, then
the Transformer lesson's."""


@functools.cache
def load_exam_cards(root: Path | None = None) -> tuple[ExamCard, ...]:
    """The revision cards of :data:`CARD_FILES`: one per exam topic, in EXAM_TOPICS order."""
    base = _root(root)
    cards: list[ExamCard] = []
    for name, topics in CARD_FILES:
        path = base / "exam" / name
        where = _rel(path, base)
        data = _read_toml(path, where)
        _check_fields(data, {"card": (_TABLES, True)}, where)
        first = len(cards)
        for n, table in enumerate(data["card"], start=1):
            here = f"{where}: card {n} ({table.get('id', '?')})"
            _check_fields(table, _CARD_SCHEMA, here)
            _check_choice(table["id"], EXAM_TOPICS, here, "id")
            _check_choice(table["lesson"], LESSON_IDS, here, "lesson")
            _check_choice(table["connects_to"], LESSON_IDS, here, "connects_to")
            if table.get("errata"):
                from tutor.errata import load_errata  # it imports this module

                _check_choice(table["errata"], tuple(e.id for e in load_errata(root)), here, "errata")
            cards.append(
                ExamCard(
                    **{k: v for k, v in table.items() if k not in ("connects_to", "traces", "errata")},
                    connects_to=tuple(table["connects_to"]),
                    traces=tuple(table.get("traces", ())),
                    errata=tuple(table.get("errata", ())),
                )
            )
        ids = [c.id for c in cards[first:]]
        if ids != list(topics):
            raise ContentError(
                f"{where}: cards are {', '.join(ids) or 'none'}; "
                "expected one card per exam topic in this order: " + ", ".join(topics)
            )
    return tuple(cards)


@functools.cache
def load_exam_guidance(root: Path | None = None) -> str:
    """The exam guidance summary (Markdown) from ``exam/guidance.md``."""
    base = _root(root)
    path = base / "exam" / "guidance.md"
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise ContentError(f"{_rel(path, base)}: file is missing") from None
    if not text.startswith("# "):
        raise ContentError(f"{_rel(path, base)}: expected a '# ' title on the first line")
    return text + "\n"


@functools.cache
def load_qa(root: Path | None = None) -> tuple[QAItem, ...]:
    """The Q&A items from ``qa.toml``, in file order; ids are unique."""
    base = _root(root)
    path = base / "qa.toml"
    where = _rel(path, base)
    data = _read_toml(path, where)
    _check_fields(data, {"item": (_TABLES, True)}, where)
    items: list[QAItem] = []
    for n, table in enumerate(data["item"], start=1):
        here = f"{where}: item {n} ({table.get('id', '?')})"
        _check_fields(table, _QA_SCHEMA, here)
        _check_choice(table["lesson"], LESSON_IDS, here, "lesson")
        if any(i.id == table["id"] for i in items):
            raise ContentError(f"{here}: field 'id' {table['id']!r} is used twice; expected unique ids")
        items.append(QAItem(**table))
    return tuple(items)


def qa_for(lesson_id: str, root: Path | None = None) -> tuple[QAItem, ...]:
    """The Q&A items tied to one lesson."""
    return tuple(i for i in load_qa(root) if i.lesson == lesson_id)
