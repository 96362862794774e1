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

Each browser tab runs its own copy of the tutor (a process of 135–230 MB), so the server
also keeps itself within bounds:

* at most ``max_sessions`` tabs at once (:data:`MAX_SESSIONS` by default, ``serve
  --max-sessions``): the page of one more says so (HTTP 503), and a websocket beyond the cap
  writes one line into the tab and closes;
* a terminal size from the browser is clamped to :data:`MAX_COLUMNS` × :data:`MAX_ROWS` (a
  20000 × 20000 resize made one session grow to ~1 GB);
* a malformed websocket message is dropped without a word on the console (textual-serve
  logged each with a traceback and its locals), and the tab goes on;
* Ctrl-C or SIGTERM stops every tab's tutor at once: each is terminated, and killed after
  :data:`STOP_GRACE` seconds (textual-serve asked each to quit and waited for it, for ever);
  a tab that closes asks its tutor to quit, with the same limit;
* the tutor is started without a shell (:class:`TabApp`; textual-serve's shell split an
  interpreter path with a space in it, and survived as the tutor's parent, so a kill missed
  the tutor).

The address is printed once the port is bound; a busy port or an unknown host is one line
(:mod:`tutor.addresses`, shared with ``class host``). The hooks are textual-serve's ``_make_app``,
``handle_index``, ``handle_websocket`` (replaced: textual-serve's own has no cap, no size
check and logs every error with a traceback), ``on_startup``, ``on_shutdown`` and ``serve``,
and its ``AppService`` (one per tab; read in its 1.1.3 source);
``tests/test_serve_security.py`` and ``tests/test_serve_limits.py`` drive the real aiohttp app.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import secrets
import shlex
import signal
import sys
from asyncio.subprocess import Process
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import aiohttp_jinja2
from aiohttp import WSCloseCode, WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.server import Server

from tutor.addresses import bind_error

MAX_SESSIONS = 20
"""Browser tabs served at once by default: each is a tutor process of 135–230 MB."""
MAX_COLUMNS = 500
MAX_ROWS = 200
"""The largest terminal a tab may ask for (a 4K screen at a small font is about 400 × 120)."""
STOP_GRACE = 2.0
"""Seconds a tab's tutor has to quit when its tab closes or the server stops; then killed."""


def app_command(python: str = sys.executable,
                args: Sequence[str] = ("-m", "tutor.tui_main")) -> str:
    """The command that runs the tutor for one tab, every word quoted (textual-serve keeps a
    command as one string; :class:`TabApp` splits it back into these words)."""
    return shlex.join([python, *args])


def terminal_size(width: object, height: object) -> tuple[int, int] | None:
    """``(columns, rows)`` clamped to 1–:data:`MAX_COLUMNS` and 1–:data:`MAX_ROWS`; None
    when either is not a whole number."""
    if (not isinstance(width, int) or isinstance(width, bool)
            or not isinstance(height, int) or isinstance(height, bool)):
        return None
    return max(1, min(width, MAX_COLUMNS)), max(1, min(height, MAX_ROWS))


def _query_int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None and len(text) < 12 else None
    except ValueError:
        return None

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

    def __init__(self, command: str, host: str, port: int, title: str, key: str | None = None,
                 max_sessions: int = MAX_SESSIONS):
        super().__init__(command, host=host, port=port, title=title,
                         public_url=public_url(host, port))
        self.key = key or secrets.token_urlsafe(16)
        self.max_sessions = max_sessions
        self.stopping = False
        self.sessions: dict[web.WebSocketResponse, asyncio.Future[Any]] = {}
        """The open tabs: each one's websocket and the task serving it (or, once the tab has
        gone, the one stopping its tutor)."""

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
        if self.full:
            raise web.HTTPServiceUnavailable(text=self.full_message + "\n")
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

    @property
    def full(self) -> bool:
        return len(self.sessions) >= self.max_sessions

    @property
    def full_message(self) -> str:
        return (f"attn-tutor: {len(self.sessions)} tabs are open, the most this server runs at "
                "once (each is a copy of the tutor); close one and reload this page, or restart "
                "`attn-tutor serve` with a higher --max-sessions")

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """One tab: a tutor process fed by the tab's keys, its screen sent back (the
        checks of the module docstring: the cap, sizes, malformed messages)."""
        websocket = web.WebSocketResponse(heartbeat=15)
        await websocket.prepare(request)
        if self.full:
            await websocket.send_bytes((self.full_message + "\r\n").encode())
            await websocket.close(code=WSCloseCode.TRY_AGAIN_LATER, message=b"too many tabs")
            return websocket
        size = terminal_size(_query_int(request.query.get("width")),
                             _query_int(request.query.get("height"))) or (80, 24)
        service = TabApp(self.command, write_bytes=websocket.send_bytes,
                             # textual-serve awaits close() and ignores what it returns
                             write_str=websocket.send_str, close=websocket.close,  # type: ignore[arg-type]
                             download_manager=self.download_manager, debug=self.debug)
        self.sessions[websocket] = asyncio.current_task()  # type: ignore[assignment]
        try:
            await service.start(*size)
            await self._process_messages(websocket, service)
        except (ConnectionError, RuntimeError, OSError):
            pass  # the tab went away, or its tutor could not start: nothing to report here
        finally:
            # aiohttp cancels this handler when the tab goes away (more than once): the tutor
            # is stopped in a task of its own, which no cancellation of this one interrupts
            end = asyncio.ensure_future(self._end(websocket, service))
            self.sessions[websocket] = end
            await asyncio.shield(end)
        return websocket

    async def _end(self, websocket: web.WebSocketResponse, service: AppService) -> None:
        try:
            await _stop(service, ask=not self.stopping)  # the server stopping: no time to ask
            if not websocket.closed:
                with contextlib.suppress(ConnectionError, RuntimeError):
                    await websocket.close()
        finally:
            self.sessions.pop(websocket, None)  # counted until its tutor has gone

    async def _process_messages(self, websocket: web.WebSocketResponse,
                                app_service: AppService) -> None:
        """The tab's messages to its tutor; one that does not parse is dropped."""
        async for message in websocket:
            if message.type != WSMsgType.TEXT:
                continue
            try:
                envelope = json.loads(message.data)
            except (ValueError, RecursionError):
                continue
            if not isinstance(envelope, list) or not envelope or not isinstance(envelope[0], str):
                continue
            kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
            if kind == "stdin" and isinstance(data, str):
                await app_service.send_bytes(data.encode("utf-8", "replace"))
            elif kind == "resize" and isinstance(data, dict):
                size = terminal_size(data.get("width"), data.get("height"))
                if size is not None:
                    await app_service.set_terminal_size(*size)
            elif kind == "ping" and isinstance(data, (str, int, float)):
                await websocket.send_json(["pong", data])
            elif kind == "blur":
                await app_service.blur()
            elif kind == "focus":
                await app_service.focus()

    async def on_shutdown(self, app: web.Application) -> None:
        """Close every tab at once; each one's tutor is terminated (or killed) as its tab ends."""
        self.stopping = True
        for websocket in list(self.sessions):
            with contextlib.suppress(ConnectionError, RuntimeError):
                await websocket.close(code=WSCloseCode.GOING_AWAY, message=b"server stopped")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 2 * STOP_GRACE + 1  # a SIGTERM, then a kill
        while self.sessions and loop.time() < deadline:
            await asyncio.wait(list(self.sessions.values()), timeout=deadline - loop.time())

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
                        loop=loop, print=lambda *_: self._announce(),
                        shutdown_timeout=1)
        except OSError as exc:
            raise bind_error(self.host, self.port, exc) from None
        finally:
            if not loop.is_closed():
                loop.close()

    def _announce(self) -> None:
        print(f"attn-tutor: serving the tutor at {self.url}", flush=True)
        print("Open that address in a browser (it holds this run's key); Ctrl+C stops.", flush=True)


class TabApp(AppService):
    """textual-serve's ``AppService`` (one per tab) with its tutor started without a shell.

    textual-serve runs the command through ``/bin/sh -c``, which stays as the tutor's parent:
    killing "the process" then killed the shell and left the tutor running. Here the command
    (quoted by :func:`app_command`) is split into its words and started directly.
    """

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Process:
        process = await asyncio.create_subprocess_exec(
            *shlex.split(self.command), stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env=self._build_environment(width=width, height=height))
        self._process, self._stdin = process, process.stdin
        return process


async def _stop(service: AppService, *, ask: bool = True) -> None:
    """Stop a tab's tutor: ask it to quit (``ask``; else terminate it, SIGTERM), and kill it if
    it has not gone after :data:`STOP_GRACE` seconds. Its answers are saved as they are given,
    so a kill loses nothing. (``_process``, ``_task`` and ``_download_manager`` are
    textual-serve's own: its ``AppService.stop`` waits for ever.)"""
    task = service._task
    if task is None:
        return
    await service._download_manager.cancel_app_downloads(app_service_id=service.app_service_id)
    process = service._process
    if ask:
        with contextlib.suppress(ConnectionError, RuntimeError, OSError):
            await service.send_meta({"type": "quit"})
    elif process is not None and process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
    done, _ = await asyncio.wait([task], timeout=STOP_GRACE)
    if not done and process is not None and process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await asyncio.wait([task], timeout=STOP_GRACE)
    service._task = None
    if process is not None:  # reap it and close its pipes now, not in the garbage collector
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(process.wait(), STOP_GRACE)
        transport = getattr(process, "_transport", None)
        if transport is not None:
            transport.close()
