"""`attn-tutor class host|join|export|sessions`: a live quiz for a lecture room.

The wing is :mod:`tutor.classroom` (protocol, server, questions, results); these commands only
read options. Only typer is imported at module level.
"""

from __future__ import annotations

from typing import Annotated

import typer

from tutor import terminal  # its functions looked up per call (tests replace them)
from tutor.errors import UserError, user_errors

NAME = "class"
HELP = ("Class mode: the instructor hosts a live quiz (`class host`), students join it "
        "(`class join ADDRESS KEY`); vote, discuss, vote again, reveal, export.")

app = typer.Typer(help=HELP, no_args_is_help=True)


@app.command("host", help="Host a class: the instructor's screen, with the class server in it. "
             "Binds 127.0.0.1 unless --host is given. A host that stopped without ending its "
             "session resumes it (same key, same port) unless --new is given.")
def host(
    host: Annotated[
        str,
        typer.Option(
            help="Interface to bind; anything but 127.0.0.1 is reachable by others "
            "(0.0.0.0: the whole network)."
        ),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="TCP port (0: any free port).")] = 8765,
    new: Annotated[
        bool, typer.Option("--new", help="Start a new session even if one was left running.")
    ] = False,
    cap: Annotated[int, typer.Option(min=1, max=5000, help="Most students at once.")] = 500,
) -> None:
    def run() -> None:
        # deferred: loads numpy, textual, websockets (start-up time)
        from tutor.classroom.host import run_host

        run_host(host, port, new=new, cap=cap)

    user_errors(run)()


@app.command("join", help="Join a class: ADDRESS and KEY as the instructor's screen shows them.")
def join(
    address: Annotated[str, typer.Argument(help="HOST:PORT of the class.")],
    key: Annotated[str, typer.Argument(help="The session key (case and dashes do not matter).")],
    name: Annotated[
        str | None, typer.Option(help="Your display name (asked if not given; empty = anonymous).")
    ] = None,
    anonymous: Annotated[bool, typer.Option("--anonymous", help="Join without a name.")] = False,
    plain: Annotated[bool, typer.Option("--plain", help="Line mode instead of the full screen.")] = False,
) -> None:
    def run() -> None:
        from tutor.classroom.client import JoinError, url  # deferred: loads rich, websockets (start-up time)

        try:
            url(address, key)
            given = "" if anonymous else name
            if plain or not terminal.is_interactive():
                from tutor.classroom.join_plain import run_plain  # deferred: loads websockets

                run_plain(address, key, given)
            else:
                from tutor.classroom.join_app import run_join_app  # deferred: loads textual

                run_join_app(address, key, given)
        except JoinError as exc:
            raise UserError(str(exc)) from None

    user_errors(run)()


@app.command("export", help="Export a session's results: per question the counts, the mistakes "
             "and the first vote against the second; per student under the name they gave (or "
             "anonymous).")
def export(
    session: Annotated[str, typer.Argument(help="Session id (`attn-tutor class sessions` lists them; 'last' "
                                                "for the newest).")],
    csv: Annotated[bool, typer.Option("--csv", help="CSV (the default).")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="JSON.")] = False,
    students: Annotated[bool, typer.Option("--students", help="CSV: one row per student and question instead "
                                                              "of per answer kind.")] = False,
    out: Annotated[str | None, typer.Option("--out", help="Write to this file instead of stdout.")] = None,
) -> None:
    def run() -> None:
        from tutor.classroom.export import run_export  # deferred: loads numpy, rich (start-up time)

        if csv and json_out:
            raise UserError("--csv and --json: choose one")
        run_export(session, "json" if json_out else "csv", out, students)

    user_errors(run)()


@app.command("sessions", help="List the class sessions in your store.")
def sessions() -> None:
    def run() -> None:
        from tutor.classroom.export import print_sessions  # deferred: loads numpy, rich (start-up time)

        print_sessions()

    user_errors(run)()
