"""`attn-tutor plan --exam YYYY-MM-DD`: a day-by-day revision plan that ends on the exam."""

from __future__ import annotations

import sys
from datetime import date
from typing import Annotated

import typer

from tutor.errors import UserError, user_errors
from tutor.limits import PLAN_MINUTES

NAME = "plan"
HELP = """A day-by-day plan from today to your exam: cards FSRS has due, lessons not opened yet, weak \
topics (mastery below 60%) and structured-question papers not yet sat, fitted to the minutes you have each \
day.

The exam date and minutes are remembered (the full-screen tutor's Home shows today's part), so later runs \
need no options; studying changes your progress, so each run re-plans. --json prints the plan (schema: \
attn-tutor plan --schema).
"""


def command(
    exam: Annotated[
        str | None, typer.Option("--exam", metavar="YYYY-MM-DD", help="The exam date (remembered).")
    ] = None,
    minutes: Annotated[
        int | None,
        typer.Option(
            "--minutes", metavar="N", help="Minutes a day to revise, 10-600 (default 60; remembered)."
        ),
    ] = None,
    today: Annotated[
        str | None, typer.Option("--today", metavar="YYYY-MM-DD", help="Plan as if today were this date.")
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print JSON (schema: attn-tutor plan --schema).")
    ] = False,
    schema: Annotated[
        bool, typer.Option("--schema", help="Print the schema of --json (Markdown) and exit.")
    ] = False,
) -> None:
    if schema:
        # deferred: keeps `attn-tutor --help` and `trace qkv --json` lean
        from tutor.render.documents import json_schema

        typer.echo(json_schema(NAME), nl=False)
        return

    user_errors(run)(exam=exam, minutes=minutes, today=today, json_out=json_out)


def _date(text: str, flag: str):
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise UserError(f"{flag} {text[:20]!r}: expected a date YYYY-MM-DD") from None


def run(*, exam: str | None, minutes: int | None, today: str | None, json_out: bool) -> None:
    import json  # deferred: keeps `attn-tutor --help` lean

    # deferred: keeps `attn-tutor --help` and `trace qkv --json` lean
    from tutor.exam.plan import plan_from_store, render_text, save_exam, saved_exam
    from tutor.render.safe import clean  # deferred: loads rich (start-up time)
    from tutor.store import open_store  # deferred: loads rich (start-up time)
    from tutor.store.papers import attempted_questions  # deferred: loads rich (start-up time)

    low, high = PLAN_MINUTES
    if minutes is not None and not low <= minutes <= high:
        raise UserError(f"--minutes {minutes}: expected the minutes you have per day, "
                        f"{low}–{high}")
    day = _date(today, "--today") if today else date.today()
    with open_store() as store:
        saved = saved_exam(store)
        for warning in store.warnings + store.take_notices():  # a malformed setting is one
            print(clean(f"attn-tutor: warning: {warning}"), file=sys.stderr)
        when = _date(exam, "--exam") if exam else saved[0] if saved else None
        if when is None:
            raise UserError("no exam date yet: attn-tutor plan --exam YYYY-MM-DD")
        budget = minutes if minutes is not None else saved[1] if saved else 60
        plan = plan_from_store(store, when, day, budget, attempted=attempted_questions(store))
        if exam is not None or minutes is not None:
            if store.persistent:
                save_exam(store, when, budget)
    if json_out:
        print(json.dumps(plan.to_dict(), indent=2))
    else:
        print("\n".join(render_text(plan)))
