"""The browser door (``attn-tutor serve``): textual-serve's server, locked to this run.

textual-serve (1.1) serves its page to anyone who asks and accepts a websocket from any
origin, so a page on another site that the student opens could drive their tutor session.
:class:`LockedServer` closes that:

* a per-run secret (:func:`secrets.token_urlsafe`) is part of the address ``serve`` prints,
  ``http://HOST:PORT/?key=SECRET``; the page is refused (403) without it, and the websocket
  lives at ``/ws/SECRET`` (the one at ``/ws`` answers 403);
* a websocket is accepted only from a page of the same origin: its ``Origin`` header must name
  the host and port the browser connected to (the ``Host`` header). A page on another site
  sends its own origin; one that rebinds its DNS name to this machine has the right origin
  but not the key.

The address is printed once the port is bound; a busy port or an unknown host is one line
(:func:`check_host`, :func:`bind_error`). The hooks are textual-serve's ``_make_app``,
``handle_index``, ``handle_websocket``, ``on_startup`` and ``serve`` (read in its 1.1.3
source); ``tests/test_serve_security.py`` drives the real aiohttp app.
"""

from __future__ import annotations

import asyncio
import errno
import hmac
import secrets
import signal
import socket
from typing import Any
from urllib.parse import urlsplit

import aiohttp_jinja2
from aiohttp import web
from textual_serve.server import Server

from tutor.errors import UserError

def public_url(host: str, port: int) -> str:
    """``http://host:port`` with an IPv6 address in brackets."""
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{shown}:{port}"


def same_origin(origin: str | None, host_header: str | None) -> bool:
    """True when ``origin`` (the ``Origin`` header) is ``http(s)://`` + the ``Host`` header."""
    if not origin or not host_header:
        return False
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host_header.lower()


class LockedServer(Server):
    """textual-serve's ``Server`` that needs this run's key and a same-origin websocket."""

    def __init__(self, command: str, host: str, port: int, title: str, key: str | None = None):
        super().__init__(command, host=host, port=port, title=title,
                         public_url=public_url(host, port))
        self.key = key or secrets.token_urlsafe(16)

    @property
    def url(self) -> str:
        """The address to open: the only one that works this run."""
        return f"{self.public_url}/?key={self.key}"

    def _has_key(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.key.encode())

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.router.add_get("/ws/{key}", self.handle_locked_websocket, name="locked-websocket")
        app.middlewares.append(self._refuse_bare_websocket)
        return app

    @web.middleware
    async def _refuse_bare_websocket(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if request.path == "/ws":  # textual-serve's own route: no key, no entry
            raise web.HTTPForbidden(text="attn-tutor: this address needs the key serve printed\n")
        return await handler(request)

    @aiohttp_jinja2.template("app_index.html")
    async def handle_index(self, request: web.Request) -> dict[str, Any]:
        """The page, only with the key; its websocket address carries the key too."""
        if not self._has_key(request.query.get("key")):
            raise web.HTTPForbidden(text="attn-tutor: open the address `attn-tutor serve` "
                                         "printed (it ends with ?key=...)\n")
        router = request.app.router
        static = f"{self.public_url}{router['static'].url_for(filename='/')}".rstrip("/") + "/"
        ws = f"{self.public_url}{router['locked-websocket'].url_for(key=self.key)}"
        ws = ("wss:" if ws.startswith("https:") else "ws:") + ws.split(":", 1)[1]
        try:
            font_size = int(request.query.get("fontsize", "16"))
        except ValueError:
            font_size = 16
        return {"font_size": font_size, "app_websocket_url": ws,
                "config": {"static": {"url": static}}, "application": {"name": self.title}}

    async def handle_locked_websocket(self, request: web.Request) -> web.StreamResponse:
        """The websocket, with the key and from a page of this origin only."""
        if not self._has_key(request.match_info.get("key")):
            raise web.HTTPForbidden(text="attn-tutor: wrong key\n")
        if not same_origin(request.headers.get("Origin"), request.headers.get("Host")):
            raise web.HTTPForbidden(text="attn-tutor: websocket from another origin refused\n")
        return await self.handle_websocket(request)

    async def on_startup(self, app: web.Application) -> None:
        """Nothing yet: the address is printed once the port is bound (:meth:`serve`)."""

    def serve(self, debug: bool = False) -> None:
        """Bind, print the address with its key, serve until Ctrl-C.

        Raises:
            UserError: the port is in use or cannot be bound (one line, nothing printed first).
        """
        self.debug = debug
        self.initialize_logging()
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, self.request_exit)
            except (NotImplementedError, RuntimeError):
                pass
        try:
            web.run_app(self._make_app(), host=self.host, port=self.port, handle_signals=False,
                        loop=loop, print=lambda *_: self._announce())
        except OSError as exc:
            raise bind_error(self.host, self.port, exc) from None
        finally:
            if not loop.is_closed():
                loop.close()

    def _announce(self) -> None:
        print(f"attn-tutor: serving the tutor at {self.url}", flush=True)
        print("Open that address in a browser (it holds this run's key); Ctrl+C stops.", flush=True)


def check_host(host: str, port: int) -> None:
    """``UserError`` when ``host`` does not resolve (checked before anything is printed)."""
    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError, ValueError) as exc:  # gaierror is an OSError
        reason = exc.strerror if isinstance(exc, socket.gaierror) and exc.strerror else str(exc)
        raise UserError(f"--host {host[:60]}: cannot find this host ({reason}); expected a name "
                        "or address of this machine, such as localhost or 0.0.0.0") from None


def bind_error(host: str, port: int, exc: OSError) -> UserError:
    """The one line for a port that could not be bound."""
    if exc.errno == errno.EADDRINUSE:
        why = f"port {port} is in use by another program; choose another with --port"
    elif exc.errno == errno.EACCES:
        why = f"port {port} needs privileges this user lacks; choose one above 1023 with --port"
    elif exc.errno == errno.EADDRNOTAVAIL:
        why = f"{host} is not an address of this machine; choose another with --host"
    else:
        why = f"{exc.strerror or exc}; choose another --port or --host"
    return UserError(f"cannot serve on {host}:{port}: {why}")
