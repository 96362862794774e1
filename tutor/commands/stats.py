"""`attn-tutor stats`: due cards, per-topic accuracy and mastery, mock exams, daily goal."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from tutor.errors import user_errors

NAME = "stats"
HELP = """Your progress: due cards, per-topic mastery, mock-exam history.

Accuracy counts graded answers in every mode; mastery is the mean FSRS recall probability now over all of a \
topic's questions (unseen ones count 0); the daily goal compares your answers per day over the last 7 days \
with --goal (an average, not a streak).

--json prints the same numbers as one JSON object (schema 1; --schema prints its documentation): schema, \
generated_at, store, due {now, next_24h, seen, unseen, total}, topics[] and exam_topics[] {id, questions, \
seen, answers, graded, correct, accuracy, mastery, due}, mock_exams[], daily {goal, window_days, days[], \
average, met}, lessons_opened, practice {traces[], by_level[], practised, due_now}.
"""


def command(
    json_out: Annotated[
        bool, typer.Option("--json", help="Print JSON (schema: attn-tutor stats --schema).")
    ] = False,
    goal: Annotated[
        int, typer.Option("--goal", metavar="N", min=1, max=100_000, help="Daily goal in answers per day.")
    ] = 20,
    schema: Annotated[
        bool, typer.Option("--schema", help="Print the schema of --json (Markdown) and exit.")
    ] = False,
) -> None:
    if schema:
        # deferred: keeps `attn-tutor --help` and `trace qkv --json` lean
        from tutor.render.documents import json_schema

        typer.echo(json_schema(NAME), nl=False)
        return

    user_errors(run)(json_out=json_out, goal=goal)


def run(*, json_out: bool, goal: int) -> None:
    import json  # deferred: keeps `attn-tutor --help` lean

    from tutor.practice.progress import compute as practice_progress  # deferred: loads rich (start-up time)
    from tutor.quiz.bank import load_bank  # deferred: keeps `attn-tutor --help` and `trace qkv --json` lean
    from tutor.quiz.progress import compute  # deferred: loads rich (start-up time)
    from tutor.render.stats import render_text  # deferred: loads rich (start-up time)
    from tutor.store import open_store  # deferred: loads rich (start-up time)

    with open_store() as store:
        for warning in store.warnings:
            print(f"attn-tutor: warning: {warning}", file=sys.stderr)
        data = compute(store, load_bank(), goal=goal)
        data["practice"] = practice_progress(store)
        notices = store.take_notices()  # rows left out of these figures
        for notice in notices:
            print(f"attn-tutor: warning: {notice}", file=sys.stderr)
        data["store"]["skipped"] = notices
    if json_out:
        print(json.dumps(data, indent=2))
    else:
        print("\n".join(render_text(data)))
