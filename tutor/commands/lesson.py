"""`attn-tutor lesson`: list the lessons, read one, or show the exam revision cards.

Only typer (and tutor.errors) is imported at module level; the content loader loads inside
the command, so ``attn-tutor --help`` stays fast. On a terminal a lesson opens in the TUI's
Learn screen; otherwise (or with ``--plain``) it is printed as plain text.
:func:`show_lesson` is the one place that decides how a lesson is shown.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from tutor import terminal  # its functions looked up per call (tests replace them)
from tutor.errors import UserError, user_errors
from tutor.limits import shorten
from tutor.names import resolve

if TYPE_CHECKING:
    from datetime import datetime

    from tutor.content import Lesson

NAME = "lesson"
HELP = "Read a lesson: one per section of the lecture, plus the exam revision cards."

EXAM = "exam"
QA = "qa"


def command(
    lesson_id: Annotated[str | None, typer.Argument(
        metavar="[ID]", show_default=False,
        help="Lesson id or section number (omit it to list the lessons; 'exam' for the "
             "revision cards, 'qa' for every question students asked).")] = None,
    plain: Annotated[bool, typer.Option(
        "--plain", help="Print plain text (for pipes and screen readers).")] = False,
    exam: Annotated[bool, typer.Option(
        "--exam", help="Show the exam revision cards and the exam guidance.")] = False,
) -> None:
    user_errors(run)(lesson_id, plain=plain, exam=exam)


def run(lesson_id: str | None, *, plain: bool = False, exam: bool = False) -> None:
    """The command's work, as a plain function (the CLI wraps it in the one-line error handler)."""
    found = None if lesson_id is None else find_lesson(lesson_id)
    if exam and found not in (None, EXAM):
        raise UserError(f"give a lesson id or --exam, not both (got {shorten(lesson_id)} and --exam)")
    if exam or isinstance(found, str):  # the exam page or the Q&A
        # deferred: keeps `attn-tutor --help` and `trace qkv --json` lean
        from tutor.render.documents import exam_document, qa_document

        page = EXAM if exam or found == EXAM else QA
        if _open_tui(page, plain):
            return
        _show(exam_document() if page == EXAM else qa_document())
        return
    if found is None:
        typer.echo(listing())
        return
    show_lesson(found, plain=plain)


def find_lesson(key: str) -> Lesson | str:
    """A lesson by id (any case) or section number, or the page ``exam`` / ``qa``;
    :class:`UserError` with "did you mean …" otherwise."""
    from tutor.content import load_lessons  # deferred: keeps `attn-tutor --help` and `trace qkv --json` lean

    lessons = load_lessons()
    text = key.strip()
    if text.isdecimal() and text.isascii() and len(text) <= 3:
        for lesson in lessons:
            if int(text) == lesson.section:
                return lesson
    name = resolve(key, [lesson.id for lesson in lessons] + [EXAM, QA], "lesson",
                   f"Run `attn-tutor lesson` to list them (or give a section number 1-{len(lessons)}).")
    return next((lesson for lesson in lessons if lesson.id == name), name)


def listing() -> str:
    """One line per lesson (✓ when opened, section, id, title), then a short footer."""
    from tutor.content import load_lessons  # deferred: keeps `attn-tutor --help` and `trace qkv --json` lean

    lessons = load_lessons()
    opened = lessons_opened()
    width = max(len(lesson.id) for lesson in lessons)
    lines = [f"  {'§':>2}  {'id':<{width}}  title"]
    for lesson in lessons:
        mark = "✓" if lesson.id in opened else " "
        lines.append(f"{mark} {lesson.section:>2}  {lesson.id:<{width}}  {lesson.title}")
    done = sum(lesson.id in opened for lesson in lessons)
    lines += [
        "",
        f"{done} of {len(lessons)} opened (✓).",
        f"Read one: attn-tutor lesson ID (or its section number). Revision cards: "
        f"attn-tutor lesson {EXAM}. Every question students asked: attn-tutor lesson {QA}",
    ]
    return "\n".join(lines)


def show_lesson(lesson: Lesson, *, plain: bool = False) -> None:
    """Show one lesson (the TUI's Learn screen on a terminal, plain text otherwise)."""
    # deferred: keeps `attn-tutor --help` and `trace qkv --json` lean
    from tutor.render.documents import lesson_document

    if _open_tui(lesson.id, plain):
        return  # the Learn screen records the lesson as read

    _show(lesson_document(lesson))
    mark_opened(lesson.id)


def _open_tui(page: str, plain: bool) -> bool:
    """Open the TUI's Learn screen on ``page`` when we are on a terminal; True if it ran."""
    if plain or not terminal.is_interactive():
        return False
    from tutor.app import StartAt, run_app  # deferred: loads textual (start-up time)

    run_app(StartAt("learn", page))
    return True


# --------------------------------------------------------------------------- progress


def lessons_opened() -> dict[str, datetime]:
    """Lesson id → when it was last opened; empty if the progress store cannot be read."""
    try:
        from tutor.store import StoreError, open_store  # deferred: loads rich (start-up time)
    except ImportError:  # lessons work without a progress store
        return {}
    try:
        with open_store() as store:
            _warn(store.warnings)
            opened = store.lessons_opened()
            _warn(store.take_notices())
            return opened
    except StoreError as exc:  # a lesson is still worth reading without its "opened" marks
        _warn([str(exc)])
        return {}


def mark_opened(lesson_id: str) -> None:
    """Record that a lesson was shown; a store that cannot save it says so in one line."""
    try:
        from tutor.store import StoreError, open_store  # deferred: loads rich (start-up time)
    except ImportError:  # lessons work without a progress store
        return
    try:
        with open_store() as store:
            store.mark_lesson_opened(lesson_id)
    except StoreError as exc:
        _warn([str(exc)])


def _warn(messages: list[str]) -> None:
    for message in messages:
        print(f"attn-tutor: warning: {message}", file=sys.stderr)


# --------------------------------------------------------------------------- output


def _show(markdown: str) -> None:
    """Plain text for pipes, files and screen readers (terminals get the TUI instead)."""
    # deferred: keeps `attn-tutor --help` and `trace qkv --json` lean
    from tutor.render.lesson import plain_text

    typer.echo(plain_text(markdown), nl=False)
