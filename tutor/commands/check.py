"""`attn-tutor check`: check the progress file and repair what is wrong (see tutor.store.check)."""

from __future__ import annotations

from typing import Annotated

import typer

from tutor.errors import user_errors

NAME = "check"
HELP = """Check your progress file and repair it, like Anki's "Check Database".

Looks for damage (integrity check, an empty file), lost tables, rows no screen can read (a bad date, card \
JSON that does not parse, a setting such as {"minutes": Infinity}), mock exams and papers left "running" by \
a program that was killed, and answers that name a mock exam that does not exist. It repairs what it finds: \
a damaged file is kept under a new name and its readable rows copied into a fresh one; an unreadable card \
is rebuilt from your answers; a stuck mock exam or paper is closed as stopped, its answers kept; any other \
bad row is moved, unchanged, into a set_aside table. Nothing is deleted.

--dry-run only reports, and writes nothing at all (the file is read from a copy when it must be).

Exit status: 0 when nothing is left wrong, 1 when something is (always with --dry-run if a problem was found).
"""


def command(
    json_out: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only report; change nothing.")] = False,
) -> None:
    user_errors(run)(json_out=json_out, repair=not dry_run)


def run(*, json_out: bool, repair: bool) -> None:
    import json  # deferred: keeps `attn-tutor --help` lean

    from tutor.quiz.scheduler import load_card, replay  # deferred: loads fsrs (start-up time)
    from tutor.store.check import check_store, render_text  # deferred: loads rich (start-up time)

    report = check_store(repair=repair, rebuild_card=replay,
                         valid_card=lambda card: load_card(card) is not None)
    from tutor.render.safe import clean  # deferred: loads rich (start-up time)

    print(json.dumps(report.to_json(), indent=2) if json_out else clean("\n".join(render_text(report))))
    if report.unfixed:
        raise typer.Exit(1)
