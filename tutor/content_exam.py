"""The exam revision cards, the exam guidance and the short Q&A items of ``lessons/``
(``exam/*.toml``, ``exam/guidance.md``, ``qa.toml``), loaded and checked; see
:mod:`tutor.content` for the layout.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from tutor.content_schema import (
    _STR,
    _STRS,
    _TABLES,
    EXAM_TOPICS,
    LESSON_IDS,
    ContentError,
    _check_choice,
    _check_fields,
    _read_toml,
    _rel,
    _root,
)
from tutor.errata import load_errata


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
