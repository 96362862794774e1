"""`attn-tutor paper`: a timed paper of structured exam questions with mark schemes."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from tutor import terminal  # its functions looked up per call (tests replace them)
from tutor.errors import UserError, user_errors
from tutor.limits import check_seed, shorten

NAME = "paper"
HELP = """Sit a timed paper of structured exam questions (default: 3 questions from different sections in \
45 minutes), marked part by part.

Numeric parts are marked at once, with follow-through: a part worked correctly from your own wrong earlier \
answer earns its full marks (error carried forward, as examiners mark) unless the part says otherwise, and \
the feedback says so. Text parts are self-marked: write your answer, then tick the points of the mark \
scheme it makes. Marks per part, per question and per topic are saved to your progress (attn-tutor stats \
shows them over time); the FSRS schedule is left alone.

--plain reads one answer per line from stdin (a text answer ends with an empty line, then the numbers of \
the points it makes). --list shows the questions; --question ID (repeatable) sits exactly those.
"""


def command(
    questions: Annotated[
        int, typer.Option("--questions", "-n", metavar="N", help="How many questions (default 3).")
    ] = 3,
    minutes: Annotated[
        float, typer.Option("--minutes", metavar="MIN", help="Time allowed (default 45; 0 = untimed).")
    ] = 45,
    question: Annotated[
        list[str] | None,
        typer.Option("--question", "-q", metavar="ID", help="Exactly this question (repeatable)."),
    ] = None,
    topic: Annotated[
        list[str] | None,
        typer.Option(
            "--topic",
            "-t",
            metavar="TOPIC",
            help="Only these lessons (id or section number 1-13); repeatable.",
        ),
    ] = None,
    seed: Annotated[
        int | None, typer.Option(metavar="SEED", help="Seed for the choice of questions and their numbers.")
    ] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the questions and exit.")] = False,
    plain: Annotated[
        bool, typer.Option("--plain", help="Line-based: parts to stdout, answers from stdin.")
    ] = False,
) -> None:
    user_errors(run)(questions=questions, minutes=minutes, ids=question or [],
                     topics=topic or [], seed=seed, list_=list_, plain=plain)


def _sections(topics: list[str]) -> list[str]:
    from tutor.content import LESSON_IDS  # deferred: keeps `attn-tutor --help` and `trace qkv --json` lean

    out = []
    for t in topics:
        t = t.strip().lower()
        if t.isascii() and t.isdigit() and len(t) <= 2 and 1 <= int(t) <= len(LESSON_IDS):
            out.append(LESSON_IDS[int(t) - 1])
        elif t in LESSON_IDS:
            out.append(t)
        else:
            raise UserError(f"--topic {shorten(t, 30)}: expected a lesson id ({', '.join(LESSON_IDS)}) "
                            f"or a section number 1-{len(LESSON_IDS)}")
    return out


def list_lines(sections: list[str] | None = None) -> list[str]:
    """One line per exam question (only those of ``sections``, lesson ids, when given)."""
    # deferred: keeps `attn-tutor --help` and `trace qkv --json` lean
    from tutor.exam.model import load_questions

    return [f"{q.id:<28} §{q.section_number:<2} {q.marks:>2} marks, {len(q.parts)} parts  {q.title}"
            for q in load_questions() if not sections or q.section in sections]


def run(*, questions: int, minutes: float, ids: list[str], topics: list[str], seed: int | None,
        list_: bool, plain: bool) -> None:
    import random  # deferred: keeps `attn-tutor --help` lean

    if list_:
        chosen = _sections(topics)
        lines = list_lines(chosen)
        if not lines:
            # deferred: keeps `attn-tutor --help` and `trace qkv --json` lean
            from tutor.exam.model import load_questions

            # deferred: keeps `attn-tutor --help` and `trace qkv --json` lean
            from tutor.exam.paper import too_few_message

            raise UserError(too_few_message(0, 1, chosen, load_questions()))
        print("\n".join(lines))
        return
    # deferred: keeps `attn-tutor --help` and `trace qkv --json` lean
    from tutor.exam.paper import MAX_MINUTES, MAX_QUESTIONS, make_paper

    if not 0 <= minutes <= MAX_MINUTES or minutes != minutes:
        raise UserError(f"--minutes {minutes:g}: expected 0 (untimed) to {MAX_MINUTES}")
    if not 1 <= questions <= MAX_QUESTIONS:
        raise UserError(f"--questions {questions}: expected 1 to {MAX_QUESTIONS}")
    check_seed(seed)
    sections = _sections(topics)
    seed = random.SystemRandom().randrange(2**31) if seed is None else seed
    from tutor.store import open_store  # deferred: loads rich (start-up time)
    from tutor.store.papers import attempted_questions  # deferred: loads rich (start-up time)

    interactive = not plain and terminal.is_interactive()

    store = open_store()
    try:
        for warning in store.warnings:
            print(f"attn-tutor: warning: {warning}", file=sys.stderr)
        paper = make_paper(questions, minutes or None, seed=seed, sections=sections,
                           attempted=attempted_questions(store), ids=ids)
        if interactive:  # the TUI's Exam screen, with this paper preset
            from tutor.app import StartAt, run_app  # deferred: loads textual (start-up time)
            from tutor.exam.paper import ExamStart  # deferred: keeps `attn-tutor --help` lean

            store.close()
            run_app(StartAt("exam", exam=ExamStart(tuple(q.id for q in paper.questions), minutes)))
            return
        # deferred: these load rich (start-up time)
        from tutor.exam.plain import run_paper_lines
        from tutor.exam.session import PaperRun
        from tutor.quiz.plain import LineReader, make_out

        run_paper_lines(PaperRun(paper, store), out=make_out(styled=False), reader=LineReader())
    finally:
        store.close()
