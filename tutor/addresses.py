"""The two checks of a --host/--port pair that ``serve`` and ``class host`` share, as one-line
errors: the host must resolve (checked before anything is printed), and a port that could not
be bound says why. No optional dependency: ``serve`` needs textual-serve, ``class host`` not.
"""

from __future__ import annotations

import errno
import socket

from tutor.errors import UserError


def check_host(host: str, port: int, example: str = "localhost") -> None:
    """``UserError`` when ``host`` does not resolve; ``example`` is the loopback address the
    message suggests (as the command's own --help names it)."""
    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError, ValueError) as exc:  # gaierror is an OSError
        reason = exc.strerror if isinstance(exc, socket.gaierror) and exc.strerror else str(exc)
        raise UserError(f"--host {host[:60]}: cannot find this host ({reason}); expected a name "
                        f"or address of this machine, such as {example} or 0.0.0.0") from None


def bind_error(host: str, port: int, exc: OSError, doing: str = "serve") -> UserError:
    """The one line for a port that could not be bound (``cannot {doing} on host:port: why``)."""
    if exc.errno == errno.EADDRINUSE:
        why = f"port {port} is in use by another program; choose another with --port"
    elif exc.errno == errno.EACCES:
        why = f"port {port} needs privileges this user lacks; choose one above 1023 with --port"
    elif exc.errno == errno.EADDRNOTAVAIL:
        why = f"{host} is not an address of this machine; choose another with --host"
    else:
        why = f"{exc.strerror or exc}; choose another --port or --host"
    return UserError(f"cannot {doing} on {host}:{port}: {why}")
