"""`attn-tutor quiz`: practice, spaced review, weak spots, retry and timed mock exams."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from tutor import terminal  # its functions looked up per call (tests replace them)
from tutor.errors import UserError, user_errors
from tutor.limits import MAX_QUESTIONS, check_seed

NAME = "quiz"
HELP = """Revise for the exam: spaced repetition, generated problems, mock exams.

Modes: practice (a shuffled sample), review (cards due under FSRS, then unseen ones), weak (lowest recall / \
most missed first), retry (questions you last got wrong; a generated problem keeps its numbers), mock (N \
questions against the clock; saved to your history, schedule untouched), mistakes (problems aimed at the \
mistakes you have made: on their numbers the mistake and the right method give different answers, so a \
right answer shows it is gone; weak mode gives them a quarter of its questions).

A wrong number the mistake catalogue explains is named (the mistake, the number it gives, the lesson \
paragraph and the trace) and kept: attn-tutor stats lists your recurring mistakes.

--topic takes lesson ids (encoder-decoder ... training), section numbers 1-13 or exam topics \
(exam-scaled-dot ...); repeat it for several.

--plain reads one answer per line from stdin, so a script or a screen reader can take a quiz: printf \
'b\\n0.577\\n' | attn-tutor quiz --plain -t scoring --no-generated -n 2 --seed 1949. Self-graded questions \
then read a rating (1 Again, 2 Hard, 3 Good, 4 Easy); auto-graded answers are rated for you (correct = \
Good, wrong = Again). Type :hint, :skip or :quit at any prompt.
"""


def command(
    mode: Annotated[
        str,
        typer.Option("--mode", "-m", help="practice, review, weak, retry, mock or mistakes.", metavar="MODE"),
    ] = "practice",
    topic: Annotated[
        list[str] | None,
        typer.Option(
            "--topic",
            "-t",
            metavar="TOPIC",
            help="Only these topics (lesson id, section number or exam topic); repeatable.",
        ),
    ] = None,
    count: Annotated[
        int | None,
        typer.Option(
            "--count",
            "-n",
            metavar="N",
            help="How many questions (default: 10; review 20; mock 12; mistakes 8).",
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(metavar="SEED", help="Seed for the choice of questions and the generated numbers."),
    ] = None,
    time_limit: Annotated[
        float | None,
        typer.Option("--time-limit", help="Minutes allowed (mock default: 2 per question).", metavar="MIN"),
    ] = None,
    generated: Annotated[
        bool, typer.Option("--generated/--no-generated", help="Include generated numeric problems.")
    ] = True,
    plain: Annotated[
        bool, typer.Option("--plain", help="Line-based: questions to stdout, one answer per line from stdin.")
    ] = False,
) -> None:
    user_errors(run)(mode=mode, topics=topic or [], count=count, seed=seed,
                     time_limit=time_limit, generated=generated, plain=plain)


def run(*, mode: str, topics: list[str], count: int | None, seed: int | None,
        time_limit: float | None, generated: bool, plain: bool) -> None:
    """Open the store, choose the items, run the session in the right front end."""
    from tutor.quiz.bank import load_bank  # deferred: keeps `attn-tutor --help` and `trace qkv --json` lean

    # deferred: loads rich (start-up time)
    from tutor.quiz.modes import check_minutes, resolve_mode, resolve_topics, select, time_limit_s
    from tutor.quiz.session import QuizSession  # deferred: loads rich (start-up time)
    from tutor.store import open_store  # deferred: loads rich (start-up time)

    mode = resolve_mode(mode)
    wanted = resolve_topics(topics)
    if count is not None and not 1 <= count <= MAX_QUESTIONS:
        raise UserError(f"--count {count}: expected a whole number from 1 to {MAX_QUESTIONS}")
    check_seed(seed)
    try:
        check_minutes(time_limit)
    except UserError as exc:
        raise UserError(f"--time-limit: {exc}") from None
    if not plain and terminal.is_interactive():
        from tutor.quiz.modes import QuizStart  # deferred: loads rich (start-up time)

        run_tui(QuizStart(mode=mode, topics=tuple(sorted(wanted)), count=count, seed=seed,
                          minutes=time_limit, generated=generated, autostart=True))
        return
    store = open_store()

    def warn(messages: list[str]) -> None:
        for message in messages:
            print(f"attn-tutor: warning: {message}", file=sys.stderr)

    warn(store.warnings)
    try:
        selection = select(mode, bank=load_bank(), store=store, topics=wanted, count=count,
                           seed=seed, generated=generated)
        warn(store.take_notices())  # rows skipped while choosing: reported before the first question
        if not selection.items:
            print(selection.note or "Nothing to ask.")
            return
        if selection.note:
            print(selection.note)
        limit_s = time_limit_s(mode, len(selection.items), time_limit)
        session = QuizSession(selection.items, store=store, mode=mode, seed=selection.seed,
                              time_limit_s=limit_s)
        header = (f"attn-tutor quiz · {mode} · {len(selection.items)} question"
                  f"{'s' * (len(selection.items) != 1)}"
                  + (" · " + ", ".join(sorted(wanted)) if wanted else ""))
        saved_to = str(store.path) if store.persistent else None
        _, interrupted = run_plain(session, header=header, saved_to=saved_to)
    finally:
        warn(store.take_notices())
        store.close()
    if interrupted:
        raise typer.Exit(130)


def run_plain(session, **kw):
    """The line-based session on stdin/stdout, no styling."""
    from tutor.quiz.plain import LineReader, make_out, run_lines  # deferred: loads rich (start-up time)

    return run_lines(session, out=make_out(styled=False), reader=LineReader(), **kw)


def run_tui(start) -> None:
    """On a terminal: the TUI's quiz screen with this :class:`~tutor.quiz.modes.QuizStart`."""
    from tutor.app import StartAt, run_app  # deferred: loads textual (start-up time)

    run_app(StartAt("quiz", quiz=start))
