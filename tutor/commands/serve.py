"""`attn-tutor serve`: the full-screen tutor in a web browser, through textual-serve."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

NAME = "serve"
HELP = "Serve the full-screen tutor in a web browser (needs textual-serve: pip install textual-serve)."

LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1"}


def command(
    host: Annotated[str, typer.Option(help="Interface to bind; anything but localhost is reachable by others.")] = "localhost",
    port: Annotated[int, typer.Option(min=1, max=65535, help="TCP port.")] = 8000,
) -> None:
    from tutor.errors import fail

    try:
        from textual_serve.server import Server
    except ImportError:
        fail("`attn-tutor serve` needs textual-serve; install it with: pip install 'attn-tutor[serve]'")
    if host not in LOCAL_HOSTS:
        print(
            f"attn-tutor: warning: serving on {host}:{port} with no authentication — anyone who can "
            "reach this address can use the tutor and its progress file.",
            file=sys.stderr,
        )
    # each browser tab runs its own copy of the app in a subprocess
    Server(f"{sys.executable} -m tutor.tui_main", host=host, port=port, title="attn-tutor").serve()
