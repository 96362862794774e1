"""`attn-tutor lab ...`: experiments that train and measure (not built yet)."""

from __future__ import annotations

import typer

NAME = "lab"
HELP = "Train a tiny seq2seq live: bottleneck, teacher forcing, alignment, scaling."

app = typer.Typer(no_args_is_help=False, invoke_without_command=True)


@app.callback()
def lab(ctx: typer.Context) -> None:
    if ctx.invoked_subcommand is None:
        from tutor.errors import fail

        fail("`attn-tutor lab` is not built yet; see the open issues in the README", code=2)
