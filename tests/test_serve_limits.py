"""`attn-tutor serve` keeps itself within bounds (issue 34 §4): a cap on tabs, clamped
terminal sizes, malformed messages dropped without a traceback, a prompt stop on SIGTERM,
and an interpreter path with a space in it.

The real aiohttp app of :class:`tutor.serve.LockedServer` is driven as in
``test_serve_security.py``; each tab's app is :data:`FAKE_APP`, a few lines that speak the
protocol of Textual's web driver (the ``__GANGLION__`` prelude, then packets of a type byte,
a 4-byte length and a payload) and echo back what the server sent them, so a test can read
what reached the app.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("textual_serve")

from aiohttp import ClientSession, WSMsgType  # noqa: E402
from aiohttp.test_utils import TestClient, TestServer  # noqa: E402

from tutor.serve import (MAX_COLUMNS, MAX_ROWS, MAX_SESSIONS, LockedServer,  # noqa: E402
                         app_command, terminal_size)

KEY = "k" * 22
REPO = Path(__file__).resolve().parents[1]

FAKE_APP = textwrap.dedent("""
    import json, os, sys, time
    out, inp = sys.stdout.buffer, sys.stdin.buffer
    def send(text):
        data = text.encode()
        out.write(b"D" + len(data).to_bytes(4, "big") + data)
        out.flush()
    out.write(b"__GANGLION__\\n")
    send(f"pid {os.getpid()} size {os.environ['COLUMNS']}x{os.environ['ROWS']}")
    while True:
        head = inp.read(5)
        if len(head) < 5:
            while "--deaf" in sys.argv:  # hung: only a kill ends it
                time.sleep(1)
            break
        body = inp.read(int.from_bytes(head[1:], "big"))
        if head[:1] == b"M":
            meta = json.loads(body)
            if meta["type"] == "quit" and "--deaf" not in sys.argv:
                break
            send("meta " + json.dumps(meta, sort_keys=True))
        else:
            send("stdin " + body.decode())
""")


def fake(*extra: str, python: str = sys.executable) -> str:
    return app_command(python, ["-c", FAKE_APP, *extra])


async def _client(command: str, max_sessions: int = MAX_SESSIONS) -> tuple[TestClient, LockedServer]:
    server = LockedServer(command, host="127.0.0.1", port=0, title="t", key=KEY,
                          max_sessions=max_sessions)
    client = TestClient(TestServer(await server._make_app(), host="127.0.0.1"))
    await client.start_server()
    return client, server


async def _tab(client: TestClient, query: str = ""):
    ws = await client.ws_connect(f"/ws/{KEY}{query}",
                                 headers={"Origin": f"http://{client.host}:{client.port}"})
    return ws


async def _text(ws) -> str:
    message = await asyncio.wait_for(ws.receive(), 30)
    assert message.type == WSMsgType.BINARY, message
    return message.data.decode()


async def _until_gone(server: LockedServer) -> None:
    while server.sessions:
        await asyncio.sleep(0.02)


async def test_the_tab_beyond_the_cap_is_refused_with_a_message():
    client, server = await _client(fake(), max_sessions=2)
    try:
        tabs = [await _tab(client) for _ in range(2)]
        for ws in tabs:
            assert (await _text(ws)).startswith("pid ")
        page = await client.get(f"/?key={KEY}")
        assert page.status == 503
        assert "2 tabs are open, the most this server runs at once" in await page.text()
        extra = await _tab(client)  # a page loaded before the others took the places
        assert "--max-sessions" in await _text(extra)
        closing = await asyncio.wait_for(extra.receive(), 30)
        assert closing.type == WSMsgType.CLOSE and len(server.sessions) == 2
        await tabs[0].close()
        await asyncio.wait_for(_wait_for(lambda: len(server.sessions) == 1), 30)
        assert (await client.get(f"/?key={KEY}")).status == 200  # a place is free again
        await tabs[1].close()
        await asyncio.wait_for(_until_gone(server), 30)
    finally:
        await client.close()


async def _wait_for(condition) -> None:
    while not condition():
        await asyncio.sleep(0.02)


async def test_sizes_from_the_browser_are_clamped():
    client, server = await _client(fake())
    try:
        ws = await _tab(client, "?width=20000&height=20000")
        assert (await _text(ws)).endswith(f"size {MAX_COLUMNS}x{MAX_ROWS}")
        await ws.send_str(json.dumps(["resize", {"width": 20000, "height": 20000}]))
        assert await _text(ws) == ("meta " + json.dumps(
            {"height": MAX_ROWS, "type": "resize", "width": MAX_COLUMNS}, sort_keys=True))
        await ws.send_str(json.dumps(["resize", {"width": 0, "height": -5}]))
        assert '"height": 1' in await _text(ws)
        await ws.close()
        await asyncio.wait_for(_until_gone(server), 30)
    finally:
        await client.close()


def test_terminal_size_rules():
    assert terminal_size(100, 30) == (100, 30)
    assert terminal_size(10**9, 10**9) == (MAX_COLUMNS, MAX_ROWS)
    for bad in [("80", 24), (80.5, 24), (True, 24), (None, 24), (80, [24])]:
        assert terminal_size(*bad) is None


MALFORMED = ["not json", "[]", "{}", "5", '["resize"]', '["resize", {"width": "x"}]',
             '["resize", [1, 2]]', '["stdin", 5]', '["stdin"]', '[7, "x"]', '["ping", {"a": 1}]',
             '["resize", {"width": 1e999, "height": 1}]', "[" * 5000 + "]" * 5000, '["nope", 1]']


async def test_malformed_messages_are_dropped_without_a_word(capsys, caplog):
    client, server = await _client(fake())
    try:
        ws = await _tab(client)
        await _text(ws)
        for bad in MALFORMED:
            await ws.send_str(bad)
        await ws.send_bytes(b"\xff\x00")
        await ws.send_str(json.dumps(["stdin", "still here"]))
        assert await _text(ws) == "stdin still here"  # the tab goes on
        await ws.send_str(json.dumps(["ping", "p1"]))
        pong = await asyncio.wait_for(ws.receive_json(), 30)
        assert pong == ["pong", "p1"]
        await ws.close()
        await asyncio.wait_for(_until_gone(server), 30)
    finally:
        await client.close()
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err and out + err == "", (out, err)
    assert [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")] == []


async def test_an_interpreter_path_with_a_space_starts_the_app(tmp_path):
    folder = tmp_path / "with space"
    folder.mkdir()
    python = folder / "python3"
    python.symlink_to(sys.executable)
    client, server = await _client(fake(python=str(python)))
    try:
        ws = await _tab(client)
        assert (await _text(ws)).startswith("pid ")  # before: the shell ran ".../with"
        await ws.close()
        await asyncio.wait_for(_until_gone(server), 30)
    finally:
        await client.close()


def test_the_command_quotes_every_word():
    assert app_command("/opt/my python/bin/python3") == "'/opt/my python/bin/python3' -m tutor.tui_main"


def test_the_cli_default_is_the_server_s():
    from tutor.commands import serve

    assert serve.MAX_SESSIONS == MAX_SESSIONS


# ------------------------------------------------------------------ SIGTERM with tabs open

SERVER = """
import sys
from tutor.serve import LockedServer
LockedServer(sys.argv[1], host="127.0.0.1", port=int(sys.argv[2]), title="t", key=sys.argv[3]).serve()
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:  # a zombie waiting for init is gone in all but name
        return fh.read().split(")")[-1].split()[0] != "Z"


async def test_sigterm_with_tabs_open_stops_the_server_and_every_tab():
    port = _free_port()
    # the tabs' apps ignore "quit" and the end of their input, as a hung tutor would
    server = subprocess.Popen([sys.executable, "-c", SERVER, fake("--deaf"), str(port), KEY],
                              cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    session = ClientSession()
    try:
        line = await asyncio.to_thread(server.stdout.readline)
        assert "serving the tutor at" in line
        pids = []
        for _ in range(3):
            ws = await session.ws_connect(f"http://127.0.0.1:{port}/ws/{KEY}",
                                          headers={"Origin": f"http://127.0.0.1:{port}"})
            pids.append(int((await _text(ws)).split()[1]))
        assert all(_alive(pid) for pid in pids)
        server.send_signal(signal.SIGTERM)
        # before: textual-serve asked each tab's app to quit and waited for it, for ever here
        await asyncio.to_thread(server.wait, 30)
        deadline = time.monotonic() + 30
        while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert not any(_alive(pid) for pid in pids)
        err = server.stderr.read()
        assert "Traceback" not in err, err
    finally:
        await session.close()
        if server.poll() is None:
            server.kill()
            server.wait()
        server.stdout.close()
        server.stderr.close()
