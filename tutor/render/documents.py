"""Lessons, the exam revision cards and the students' Q&A as Markdown documents: what the
TUI's Learn screen renders with Rich and ``attn-tutor lesson`` prints as plain text
(:mod:`tutor.render.lesson`)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from tutor.content import Lesson, load_exam_cards, load_exam_guidance, load_lessons, load_qa, qa_for
from tutor.errata import errata_document


def lesson_document(lesson: Lesson, root: Path | None = None, *, keys: bool = False) -> str:
    """The whole lesson as one Markdown document: title, body, its Q&A and its links.

    ``keys``: the links name the Learn screen's keys (the TUI) instead of commands to type.
    """
    out = [f"# {lesson.section}. {lesson.title}", "", f"*{lesson.summary}*", "", lesson.body.rstrip()]
    qa = qa_for(lesson.id, root)
    if qa:
        out += ["", "## Questions students ask", ""]
        for item in qa:
            out += [f"**Q: {item.question}**", "", _para(item.answer), ""]
    else:
        out.append("")
    out += ["## Links", ""]
    if keys:
        return "\n".join(out + _key_links(lesson, root)).rstrip() + "\n"
    if lesson.traces:
        out.append("- Traces: " + ", ".join(f"`attn-tutor trace {t}`" for t in lesson.traces))
    if lesson.heatmaps:
        out.append("- Heatmaps: " + ", ".join(f"`attn-tutor heatmap {h}`" for h in lesson.heatmaps))
    out.append(f"- Quiz topic: {lesson.quiz_topic}")
    if lesson.exam_topics:
        out.append("- Exam cards: " + ", ".join(lesson.exam_topics))
    if lesson.related:
        out.append("- Related lessons: " + ", ".join(f"`attn-tutor lesson {r}`" for r in lesson.related))
    return "\n".join(out).rstrip() + "\n"


def _key_links(lesson: Lesson, root: Path | None = None) -> list[str]:
    """The links as the Learn screen's keys: what each key opens from this lesson; cards and
    lessons by their titles, as the list beside it names them (ids are for the command line)."""
    out = []
    if lesson.traces:
        more = (
            f"; the others ({', '.join(lesson.traces[1:])}): **o** on the trace screen"
            if len(lesson.traces) > 1
            else ""
        )
        out.append(f"- **t** opens the worked example `{lesson.traces[0]}`{more}")
    if lesson.heatmaps:
        out.append(f"- **h** opens the heatmap of `{lesson.heatmaps[0]}`")
    out.append(f"- **z** sets up a quiz on this lesson (§{lesson.section} ticked)")
    if lesson.exam_topics:
        cards = {c.id: c.title for c in load_exam_cards(root)}
        out.append("- Exam cards: " + ", ".join(f"*{cards.get(t, t)}*" for t in lesson.exam_topics)
                   + " (under *Exam revision cards + guidance*, below the lessons)")
    if lesson.related:
        lessons = {other.id: f"§{other.section} {other.title}" for other in load_lessons(root)}
        out.append("- Related lessons: " + ", ".join(lessons.get(r, r) for r in lesson.related)
                   + " (**[** and **]** step through the lessons)")
    return out


def _para(text: str) -> str:
    """A TOML multi-line string as one Markdown paragraph (renderers rewrap it)."""
    return " ".join(text.split())


def exam_document(root: Path | None = None) -> str:
    """The exam revision cards, the guidance summary and the errata table, as one Markdown document."""
    out = ["# Exam revision cards", ""]
    for n, card in enumerate(load_exam_cards(root), start=1):
        out += [
            f"## {n}. {card.title}",
            "",
            f"**Must know.** {_para(card.must_know)}",
            "",
            "**Key formula.**",
            "",
            "```",
            card.key_formula.strip(),
            "```",
            "",
            f"**Top pitfall.** {_para(card.top_pitfall)}",
            "",
            f"**Self-check.** {_para(card.self_check)}",
            "",
            f"**Model answer.** {_para(card.self_check_answer)}",
            "",
            f"**Lesson:** {card.lesson}. **Connects to:** " + ", ".join(card.connects_to) + ".",
            "",
        ]
        if card.errata:
            out += ["**Where the notes go wrong:** " + ", ".join(f"`{e}`" for e in card.errata)
                    + " (listed at the end).", ""]

    out += [load_exam_guidance(root), errata_document(root)]
    return "\n".join(out).rstrip() + "\n"


JSON_SCHEMAS = ("trace", "stats", "lab", "plan")
"""Commands whose ``--json`` has a documented schema (``tutor/schemas/NAME-json.md``, shipped in
the wheel; ``attn-tutor NAME --schema`` prints it)."""


def json_schema(name: str) -> str:
    """The schema document of ``attn-tutor NAME --json``, as the installed package holds it."""
    return files("tutor").joinpath("schemas", f"{name}-json.md").read_text(encoding="utf-8")


def qa_document(root: Path | None = None) -> str:
    """Every student question with its answer and lesson, as one Markdown document."""
    out = ["# Questions students asked", ""]
    for item in load_qa(root):
        out += [f"**Q: {item.question}**", "", item.answer.strip(), "", f"*Lesson: {item.lesson}*", ""]
    return "\n".join(out)
