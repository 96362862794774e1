"""``attn-tutor class host``: open the store, resume or start a session, run the screen.

A session whose host stopped without ending it (a crash, a closed terminal) is resumed: same
key, same port, the question on the board and its votes, so the students' clients reconnect
by themselves. ``--new`` starts afresh.
"""

from __future__ import annotations

import socket
import sys

from tutor import addresses
from tutor.classroom.host_app import HostApp
from tutor.classroom.server import DEFAULT_CAP, ClassServer, new_session
from tutor.errors import UserError
from tutor.store import Store, open_store
from tutor.store import classes as saved
from tutor.terminal import why_not_interactive

LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1"}


def shown_address(host: str, port: int) -> str:
    """The address students type: this machine's network address when bound to all
    interfaces (``0.0.0.0``), else the host as given."""
    if host in ("0.0.0.0", "::", ""):
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
                probe.connect(("10.254.254.254", 1))  # no packet is sent: it picks a route
                host = probe.getsockname()[0]
        except OSError:
            host = socket.gethostname()
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def check_host(host: str, port: int) -> None:
    """``UserError`` when ``host`` does not resolve (the check ``serve`` makes too)."""
    addresses.check_host(host, port, example="127.0.0.1")


def bind_error(host: str, port: int, exc: OSError) -> UserError:
    """The one line for a port that could not be bound."""
    return addresses.bind_error(host, port, exc, doing="host the class")


def check_port(host: str, port: int) -> None:
    """``UserError`` when ``host:port`` cannot be bound (before the screen opens)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            raise bind_error(host, port, exc) from None


def open_session(store: Store, host: str, port: int, new: bool) -> tuple[saved.ClassSession, bool]:
    """The session to host and whether it was resumed."""
    running = saved.running_session(store)
    if running is not None and running.host == host and not new:
        return running, True
    if running is not None:  # --new, or another interface: the old class is over
        saved.end_session(store, running.id)
    return new_session(store, host, port or free_port(host)), False


def free_port(host: str) -> int:
    """A port free now on ``host`` (asked for port 0: the session keeps it for restarts)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def run_host(host: str, port: int, *, new: bool = False, cap: int = DEFAULT_CAP) -> None:
    """Run the instructor's screen until the class is ended.

    Raises:
        UserError: an unknown host, a port that cannot be bound, or no terminal.
    """
    reason = why_not_interactive()
    if reason is not None:
        raise UserError(f"`class host` needs a terminal: {reason}")
    check_host(host, port)
    with open_store() as store:
        for warning in store.warnings:
            print(f"attn-tutor: warning: {warning}", file=sys.stderr)
        if not store.persistent:
            raise UserError("the progress store cannot be written, so a class could not be kept; "
                            "see the warning above")
        session, resumed = open_session(store, host, port, new)
        check_port(host, session.port)
        if host not in LOCAL_HOSTS:
            print(f"attn-tutor: warning: hosting on {host}:{session.port}: anyone who can reach "
                  "this address and has the key (shown on screen) can join and answer.",
                  file=sys.stderr)
        server = ClassServer(store, session, cap=cap)
        address = shown_address(host, session.port)
        if resumed:
            print(f"attn-tutor: resuming class {session.id} (started "
                  f"{session.started_at:%H:%M}); --new starts another", file=sys.stderr)
        print(f"Students join with: attn-tutor class join {address} {session.key}", flush=True)
        result = HostApp(server, address).run()
        if result and result.startswith("error: "):
            raise UserError(result.removeprefix("error: "))
        if result == "ended":
            saved.end_session(store, session.id)
            print(f"Class {session.id} ended. Export it with: attn-tutor class export "
                  f"{session.id} --csv", flush=True)
        else:
            print(f"Class {session.id} left running; `attn-tutor class host` resumes it.",
                  flush=True)
