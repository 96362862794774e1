"""The catalogue of places where the lecture notes go wrong (``lessons/errata.toml``).

One source for every erratum: each has a stable id. Lessons name one in their ``## Errata``
section as ``erratum `ID` ``, quiz items with ``erratum = "ID"``, exam cards with
``errata = ["ID", ...]``, and the engine's traces attach the same id to the erratum they
compute. The exam document's table is built from here, so it cannot drift from the lessons.

Pure Python (``tomllib``), like the rest of the content loaders. Schema: see the comment at
the top of ``errata.toml``; a file that breaks it raises :class:`tutor.content.ContentError`
naming the entry and the field.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from engine.mistakes.catalogue import MISTAKES
from tutor.content_schema import (
    _INT,
    _STR,
    _STRS,
    _TABLES,
    LESSON_IDS,
    ContentError,
    _check_choice,
    _check_fields,
    _read_toml,
    _rel,
    _root,
)

KINDS: tuple[str, ...] = ("arithmetic", "miscount", "inconsistency", "wording", "claim",
                          "rounding", "extraction")
"""Kinds of entry. The first five mean the notes are wrong; ``rounding`` marks a printed digit
that follows from an intermediate the notes round and state (a rounding note, not an error);
``extraction`` marks text the web page's extraction garbled (a reading note)."""

ERROR_KINDS: tuple[str, ...] = KINDS[:5]
"""The kinds that are the notes' own mistakes."""

REFERENCE = re.compile(r"erratum `([a-z0-9]+(?:-[a-z0-9]+)*)`")
"""How lesson text names an entry: erratum `qkv-weights`."""

_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_CHECK = re.compile(r"^[a-z0-9-]+ \S+=\S.*$")

_SCHEMA = {
    "id": (_STR, True),
    "section": (_INT, True),
    "part": (_STR, False),
    "kind": (_STR, True),
    "quote": (_STR, True),
    "printed": (_STR, True),
    "correct": (_STR, True),
    "summary": (_STR, True),
    "traces": (_STRS, False),
    "lessons": (_STRS, True),
    "false_claims": (_STRS, False),
    "mistake": (_STR, False),
    "mistake_check": (_STR, False),
}


@dataclass(frozen=True)
class NotesErratum:
    """One catalogue entry (see ``errata.toml`` for what each field holds)."""

    id: str
    section: int
    kind: str
    quote: str
    printed: str
    correct: str
    summary: str
    lessons: tuple[str, ...]
    part: str = ""
    traces: tuple[str, ...] = ()
    false_claims: tuple[str, ...] = ()
    mistake: str = ""
    """The catalogued mistake (``engine.mistakes``) that produces the printed number, if one does."""
    mistake_check: str = ""
    """``TRACE VALUE=NUMBERS``: the value and the printed numbers that mistake reproduces on
    the notes' inputs (``tests/test_mistakes_errata.py`` runs it)."""

    @property
    def is_error(self) -> bool:
        """True when the notes are wrong here (not a rounding or reading note)."""
        return self.kind in ERROR_KINDS


@functools.cache
def load_errata(root: Path | None = None) -> tuple[NotesErratum, ...]:
    """Every entry of ``errata.toml`` in file order; ids are unique and well formed."""
    base = _root(root)
    path = base / "errata.toml"
    where = _rel(path, base)
    data = _read_toml(path, where)
    _check_fields(data, {"erratum": (_TABLES, True)}, where)
    out: list[NotesErratum] = []
    for n, table in enumerate(data["erratum"], start=1):
        here = f"{where}: erratum {n} ({table.get('id', '?')})"
        _check_fields(table, _SCHEMA, here)
        if not _ID.match(table["id"]):
            raise ContentError(f"{here}: field 'id' {table['id']!r}; expected kebab-case like 'qkv-weights'")
        if any(e.id == table["id"] for e in out):
            raise ContentError(f"{here}: field 'id' {table['id']!r} is used twice; expected unique ids")
        if not 1 <= table["section"] <= len(LESSON_IDS):
            raise ContentError(f"{here}: field 'section' is {table['section']}; expected 1–{len(LESSON_IDS)}")
        _check_choice(table["kind"], KINDS, here, "kind")
        _check_choice(table["lessons"], LESSON_IDS, here, "lessons")
        for pattern in table.get("false_claims", ()):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ContentError(f"{here}: field 'false_claims' has {pattern!r}: not a regular "
                                   f"expression ({exc})") from None
        if "mistake" in table:
            if table["mistake"] not in MISTAKES:
                raise ContentError(f"{here}: field 'mistake' {table['mistake']!r}; expected an id "
                                   "of engine.mistakes.catalogue")
            if not _CHECK.match(table.get("mistake_check", "")):
                raise ContentError(f"{here}: field 'mistake_check'; expected 'TRACE VALUE=NUMBERS' "
                                   "naming what the mistake reproduces")
            # the why-text shown after a quiz answer names the slip
            table = {**table, "summary": f"{table['summary']} In the mistake catalogue: "
                                         f"{MISTAKES[table['mistake']].title} ({table['mistake']})."}
        out.append(NotesErratum(
            **{k: v for k, v in table.items() if k not in ("lessons", "traces", "false_claims")},
            lessons=tuple(table["lessons"]),
            traces=tuple(table.get("traces", ())),
            false_claims=tuple(table.get("false_claims", ())),
        ))
    return tuple(out)


def get_erratum(erratum_id: str, root: Path | None = None) -> NotesErratum:
    """The entry with this id, or ``LookupError`` saying there is none."""
    for e in load_errata(root):
        if e.id == erratum_id:
            return e
    raise LookupError(f"no erratum {erratum_id!r} in errata.toml")


def references(text: str) -> list[str]:
    """The ids a text names as erratum `ID`, in order of first mention."""
    return list(dict.fromkeys(REFERENCE.findall(text)))


def errata_document(root: Path | None = None) -> str:
    """The "where the printed notes are wrong" part of the exam document, as Markdown."""
    entries = load_errata(root)
    out = ["## Where the printed notes are wrong", "",
           "If your own working disagrees with the notes, look here first. Each lesson's Errata "
           "section explains its entries, and a trace named with an entry shows the printed and "
           "computed values side by side. Throughout, the notes often say \"scores\" for "
           "softmax weights: scores go into the softmax, weights come out.", ""]
    for e in sorted((e for e in entries if e.is_error), key=lambda e: e.section):
        where = f"§{e.section}" + "".join(f"; `attn-tutor trace {t}`" for t in e.traces)
        slip = f" The slip: {MISTAKES[e.mistake].title}." if e.mistake else ""
        out.append(f"- `{e.id}` ({where}). The notes: {_line(e.printed)}. Correct: "
                   f"{_line(e.correct)}.{slip}")
    notes = [e for e in entries if e.kind == "rounding"]
    if notes:
        out += ["", "**Not errors: rounding.** These printed digits differ from exact arithmetic "
                "only because the notes round an intermediate and say so:", ""]
        out += [f"- `{e.id}` (§{e.section}): {e.summary}" for e in notes]
    reading = [e for e in entries if e.kind == "extraction"]
    if reading:
        out += ["", "**Reading the extracted text.** The copy of the notes was extracted from a "
                "web page, which garbled a few things:", ""]
        out += [f"- `{e.id}` (§{e.section}): {e.summary}" for e in reading]
    return "\n".join(out) + "\n"


def _line(text: str) -> str:
    return " ".join(text.split()).rstrip(".")
