"""The ``attn-tutor`` command line (Typer).

Commands are thin: they parse arguments and hand over to plain functions in ``tutor``.
Nothing heavy is imported at module level, so ``attn-tutor --help`` does not load numba or
textual.
"""

from __future__ import annotations

from typing import Annotated

import typer

from tutor import __version__
from tutor.commands import heatmap, lab, lesson, quiz, serve, stats, trace

HELP = """attn-tutor: learn attention mechanisms in the terminal.

Lessons for the twelve sections of the lecture, step-by-step traces of every worked example, exam quizzes with spaced repetition, attention heatmaps, and a lab that trains a tiny seq2seq.

Run it with no command on a terminal to open the full-screen tutor.
"""

app = typer.Typer(
    name="attn-tutor",
    help=HELP,
    add_completion=False,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
)


@app.callback()
def root(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False,
) -> None:
    if version:
        typer.echo(f"attn-tutor {__version__}")
        raise typer.Exit()
    if ctx.invoked_subcommand is None:
        from tutor.terminal import is_interactive

        if is_interactive():
            from tutor.app import run_app

            run_app()
        else:
            typer.echo(ctx.get_help())


for _module in (lesson, trace, quiz, heatmap, lab, stats, serve):
    if hasattr(_module, "app"):  # a command with subcommands of its own (``lab``)
        app.add_typer(_module.app, name=_module.NAME, help=_module.HELP)
    else:
        app.command(name=_module.NAME, help=_module.HELP)(_module.command)


def main() -> None:
    """Console-script entry point."""
    app()
