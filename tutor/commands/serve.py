"""`attn-tutor serve`: the full-screen tutor in a web browser, through textual-serve.

The server itself (a per-run key in the address, same-origin websockets, one line for a busy
port) is :mod:`tutor.serve`; this module only reads the options.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from tutor.addresses import check_host
from tutor.errors import fail, user_errors

NAME = "serve"
INSTALL_HINT = "pip install textual-serve"
"""What to run when textual-serve is missing: the same words in --help, the error and README."""
HELP = ("Serve the full-screen tutor in a web browser, at an address with a key for this run "
        f"(needs textual-serve: {INSTALL_HINT}).")

LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1"}


MAX_SESSIONS = 20
"""Default of --max-sessions (the same as ``tutor.serve.MAX_SESSIONS``, which a test holds
it to: this module imports only typer at the top)."""


def command(
    host: Annotated[
        str, typer.Option(help="Interface to bind; anything but localhost is reachable by others.")
    ] = "localhost",
    port: Annotated[int, typer.Option(min=1, max=65535, help="TCP port.")] = 8000,
    max_sessions: Annotated[
        int,
        typer.Option(
            "--max-sessions",
            min=1,
            max=200,
            metavar="N",
            help="Browser tabs served at once; each runs its own tutor (about 150-250 MB).",
        ),
    ] = MAX_SESSIONS,
) -> None:
    try:
        import textual_serve.server  # noqa: F401
    except ImportError:
        fail(f"`attn-tutor serve` needs textual-serve; install it with: {INSTALL_HINT}")
    user_errors(run)(host, port, max_sessions)


def run(host: str, port: int, max_sessions: int = MAX_SESSIONS) -> None:
    """Check the host, warn when it is reachable by others, serve until Ctrl-C."""
    # deferred: loads textual_serve (start-up time)
    from tutor.serve import LockedServer, app_command

    check_host(host, port)
    if host not in LOCAL_HOSTS:
        print(
            f"attn-tutor: warning: serving on {host}:{port}: anyone who can reach this address "
            "and has its key (printed below) can use the tutor and its progress file.",
            file=sys.stderr,
        )
    # each browser tab runs its own copy of the app in a subprocess
    LockedServer(app_command(), host=host, port=port, title="attn-tutor",
                 max_sessions=max_sessions).serve()
