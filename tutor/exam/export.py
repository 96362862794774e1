"""Export the revision material to Anki (``.apkg`` via genanki), Markdown or CSV.

One list of :class:`Item` (front, back, tags, a stable id) feeds all three formats: the exam
revision cards, the Q&A, every quiz-bank item with its answer and explanation, and one item per
part of each structured question with its mark scheme (points, common mistakes, model answer;
numeric parts show the numbers of seed 0). An Anki note's GUID is derived from the item id,
so importing a second export updates the deck's notes instead of duplicating them. Formulas
are Unicode text, shown in Anki in a monospace block.
"""

from __future__ import annotations

import csv
import html
import io
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tutor import atomic
from tutor.content import load_exam_cards, load_qa
from tutor.exam.model import load_questions
from tutor.exam.paper import instantiate
from tutor.render.safe import shown_path

DECK_ID = 1_864_230_514  # fixed: re-imports land in the same deck
MODEL_ID = 1_864_230_515  # fixed: the same note type every time
DECK_NAME = "attn-tutor::Attention mechanisms (DNN Lecture 14)"
FORMATS = ("anki", "markdown", "csv")


@dataclass(frozen=True)
class Item:
    id: str
    kind: str  # exam-card | qa | quiz | mark-scheme
    section: str
    front: str
    back: str
    tags: tuple[str, ...] = ()


def _para(text: str) -> str:
    return " ".join(text.split())


def collect() -> list[Item]:
    """Every exportable item, in a fixed order (cards, Q&A, quiz bank, mark schemes)."""
    from tutor.quiz.bank import load_bank  # looked up per call: tests replace it

    items: list[Item] = []
    for c in load_exam_cards():
        back = (f"{_para(c.self_check_answer)}\n\nMust know: {_para(c.must_know)}\n\n"
                f"Key formula:\n{c.key_formula.strip()}\n\nTop pitfall: {_para(c.top_pitfall)}")
        items.append(Item(c.id, "exam-card", c.lesson, f"{c.title}: {_para(c.self_check)}", back,
                          (c.id,)))
    for qa in load_qa():
        items.append(Item(qa.id, "qa", qa.lesson, _para(qa.question), _para(qa.answer)))
    for q in load_bank():
        front = q.prompt.strip()
        if q.kind == "mcq":
            front += "\n" + "\n".join(f"{'abcde'[i]}) {c}" for i, c in enumerate(q.choices))
        elif q.kind == "true_false":
            front = "True or false? " + front
        back = f"{q.answer_text}\n\n{_para(q.explanation)}"
        if q.kind == "free" and q.key_points:
            back += "\n\nKey points:\n" + "\n".join(f"• {p}" for p in q.key_points)
        items.append(Item(q.id, "quiz", q.section, front, back, q.exam_topics))
    for spec in load_questions():
        question = instantiate(spec, 0)
        for part in question.parts:
            front = (f"{spec.title} ({part.marks} "
                     f"mark{'s' * (part.marks != 1)})\n{question.stem}\n\n{part.prompt}")
            scheme: list[str] = []
            if part.kind == "text":
                scheme.append("Mark scheme (1 mark each, up to "
                            f"{part.marks}):\n" + "\n".join(f"• {p}" for p in part.spec.points))
            elif part.spec.method:
                scheme.append(f"Follow-through: {part.spec.method} method mark"
                            f"{'s' * (part.spec.method != 1)} for correct working from your own "
                            "earlier answer.")
            scheme.append("Model answer:\n" + "\n".join(part.model_answer))
            scheme.append("Common mistakes:\n" + "\n".join(f"• {m}" for m in part.spec.mistakes))
            items.append(Item(f"{spec.id}:{part.letter}", "mark-scheme", spec.section, front,
                              "\n\n".join(scheme), spec.exam_topics))
    return items


def _html(text: str) -> str:
    """Plain text with line breaks as Anki field HTML; formula-like lines keep their spacing."""
    return "<br>".join(html.escape(line).replace("  ", "&nbsp; ") for line in text.split("\n"))


def write_anki(items: Sequence[Item], path: str | Path) -> int:
    """Write an ``.apkg`` with genanki; returns the number of notes.

    Raises:
        OSError: the deck could not be written (the disk is full...); ``path`` is as it was.
    """
    import genanki  # deferred: loads genanki (start-up time)

    model = genanki.Model(
        MODEL_ID, "attn-tutor (front/back)",
        fields=[{"name": "Front"}, {"name": "Back"}, {"name": "Id"}],
        templates=[{"name": "Card 1", "qfmt": '<div class="f">{{Front}}</div>',
                    "afmt": '{{FrontSide}}<hr id="answer"><div class="b">{{Back}}</div>'
                            '<div class="id">{{Id}}</div>'}],
        css=(".card { font-family: 'DejaVu Sans', Arial, sans-serif; font-size: 18px; "
             "text-align: left; } .f, .b { font-family: 'DejaVu Sans Mono', monospace; "
             "white-space: normal; } .id { color: #888; font-size: 12px; margin-top: 1em; }"),
    )
    deck = genanki.Deck(DECK_ID, DECK_NAME)
    for it in items:
        tags = [t.replace(" ", "_") for t in (it.kind, it.section, *it.tags)]
        deck.add_note(genanki.Note(model=model, fields=[_html(it.front), _html(it.back), it.id],
                                   tags=tags, guid=genanki.guid_for("attn-tutor", it.id)))
    try:
        with atomic.replacing(path) as tmp:
            genanki.Package(deck).write_to_file(str(tmp))
    except sqlite3.Error as exc:  # genanki builds the deck in a temporary SQLite file first
        raise OSError(f"could not build the deck: {exc}") from None
    return len(items)


def render_markdown(items: Sequence[Item]) -> str:
    """All items as one Markdown document, grouped by kind."""
    titles = {"exam-card": "Exam revision cards", "qa": "Questions students ask",
              "quiz": "Quiz bank", "mark-scheme": "Structured questions: mark schemes"}
    out = ["# attn-tutor revision export", ""]
    for kind, title in titles.items():
        out += [f"## {title}", ""]
        for it in (i for i in items if i.kind == kind):
            out += [f"### {it.id} ({it.section})", "", "```text", it.front, "```", "", "**Answer**",
                    "", "```text", it.back, "```", ""]
    return "\n".join(out)


def render_csv(items: Sequence[Item]) -> str:
    """One row per item: id, kind, section, front, back, tags (space-separated)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["id", "kind", "section", "front", "back", "tags"])
    for it in items:
        writer.writerow([it.id, it.kind, it.section, it.front, it.back, " ".join(it.tags)])
    return buf.getvalue()


def export(fmt: str, path: str | Path) -> int:
    """Write every item in ``fmt`` (anki | markdown | csv) to ``path``; returns the count.

    The file is written whole or not at all (:mod:`tutor.atomic`): an existing one survives a
    full disk.

    Raises:
        ValueError: for an unknown format or a file suffix that contradicts it.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; expected one of: {', '.join(FORMATS)}")
    path = Path(path)
    want = {"anki": ".apkg", "markdown": ".md", "csv": ".csv"}[fmt]
    if path.suffix.lower() != want:
        raise ValueError(f"{fmt} export writes a {want} file; got {shown_path(path.name)!r}")
    items = collect()
    if fmt == "anki":
        return write_anki(items, path)
    text = render_markdown(items) if fmt == "markdown" else render_csv(items)
    atomic.write_text(path, text)
    return len(items)
