"""`attn-tutor export anki|markdown|csv FILE`: take the revision material elsewhere."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tutor.errors import UserError, user_errors

NAME = "export"
HELP = """Export the exam cards, Q&A, every quiz item with its answer and explanation, and the mark scheme \
of every structured-question part.

anki FILE.apkg writes an Anki deck with genanki; each note's id comes from its question id, so importing a \
later export updates the same notes instead of adding copies. markdown FILE.md and csv FILE.csv (id, kind, \
section, front, back, tags) hold the same items.
"""


def command(
    fmt: Annotated[str, typer.Argument(metavar="FORMAT", help="anki, markdown or csv.")],
    file: Annotated[Path, typer.Argument(metavar="FILE", help="Where to write (.apkg, .md or .csv).")],
) -> None:
    user_errors(run)(fmt=fmt, file=file)


def run(*, fmt: str, file: Path) -> None:
    from tutor.exam.export import export  # deferred: loads rich (start-up time)
    from tutor.render.safe import shown_path  # deferred: loads rich (start-up time)

    fmt = fmt.strip().lower()
    if file.parent and not file.parent.exists():
        raise UserError(f"cannot write {shown_path(file)}: folder {shown_path(file.parent)} "
                        "does not exist")
    try:
        n = export(fmt, file)
    except OSError as exc:
        raise UserError(f"cannot write {shown_path(file)}: {exc.strerror or exc}") from None
    extra = " (Anki: File → Import; importing a later export updates these notes)" if fmt == "anki" else ""
    typer.echo(f"Wrote {n} items to {shown_path(file)}{extra}")
