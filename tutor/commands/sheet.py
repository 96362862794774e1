"""`attn-tutor sheet`: the formula sheet as plain text, Markdown or a printable HTML page."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tutor.errors import UserError, user_errors

NAME = "sheet"
HELP = """The formula sheet: every formula of the lecture with its symbols, shapes and section, and a \
notation map for the notes' overloaded symbols (H_t^(d) and S_t; W_O and W^O; W_Q and W_K in §5 versus §8).

Plain text by default (or say --plain); --markdown, or --html for a page that prints on two A4 pages. -o \
FILE writes to a file (its suffix .txt, .md or .html picks the format when no flag does).
"""

_SUFFIX = {".txt": "plain", ".md": "markdown", ".html": "html", ".htm": "html"}


def command(
    plain: Annotated[bool, typer.Option("--plain", help="Plain text (the default on screen).")] = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="Markdown tables.")] = False,
    html: Annotated[bool, typer.Option("--html", help="A printable HTML page (A4, two columns).")] = False,
    output: Annotated[Path | None, typer.Option("--output", "-o", metavar="FILE",
                                                help="Write to FILE instead of the screen.")] = None,
) -> None:
    user_errors(run)(markdown=markdown, html=html, output=output, plain=plain)


def run(*, markdown: bool, html: bool, output: Path | None, plain: bool = False) -> None:
    from tutor import atomic  # deferred: keeps `attn-tutor --help` and `trace qkv --json` lean

    # deferred: keeps `attn-tutor --help` and `trace qkv --json` lean
    from tutor.exam.sheet import render_html, render_markdown, render_plain
    from tutor.render.safe import shown_path  # deferred: loads rich (start-up time)

    given = [flag for flag, on in (("--plain", plain), ("--markdown", markdown), ("--html", html)) if on]
    if len(given) > 1:
        raise UserError("choose one of --plain, --markdown and --html, not "
                        + " and ".join(given))
    fmt = "plain" if plain else "markdown" if markdown else "html" if html else None
    if output is not None and fmt is None:
        fmt = _SUFFIX.get(output.suffix.lower())
        if fmt is None:
            raise UserError(f"--output {shown_path(output.name)!r}: expected a .txt, .md or .html file "
                            "(or say --markdown / --html)")
    text = {"markdown": render_markdown, "html": render_html}.get(fmt or "plain", render_plain)()
    if output is None:
        typer.echo(text, nl=False)
        return
    try:
        atomic.write_text(output, text)
    except OSError as exc:
        raise UserError(f"cannot write {shown_path(output)}: {exc.strerror or exc}") from None
    typer.echo(f"Wrote the formula sheet to {shown_path(output)}"
               + (" (print it: two A4 pages)" if fmt == "html" else ""))
