"""`attn-tutor serve` answers only this run's address: the page and the websocket need the key
it printed, and a websocket must come from a page of the same origin (issue 14 §4).

The real aiohttp app of :class:`tutor.serve.LockedServer` is served on a free local port; the
app it would run per browser tab is a one-line Python that exits at once.
"""

from __future__ import annotations

import asyncio
import sys

import pytest

pytest.importorskip("textual_serve")

from aiohttp import WSServerHandshakeError  # noqa: E402
from aiohttp.test_utils import TestClient, TestServer  # noqa: E402

from tutor.serve import LockedServer, same_origin  # noqa: E402

KEY = "k" * 22


async def _client(host: str = "127.0.0.1") -> tuple[TestClient, LockedServer]:
    server = LockedServer(f"{sys.executable} -c pass", host=host, port=0, title="t", key=KEY)
    client = TestClient(TestServer(await server._make_app(), host=host))
    await client.start_server()
    return client, server


def _origin(client: TestClient) -> str:
    return f"http://{client.host}:{client.port}"


async def test_the_page_needs_the_key():
    client, _ = await _client()
    try:
        assert (await client.get("/")).status == 403
        assert (await client.get("/?key=wrong")).status == 403
        page = await client.get(f"/?key={KEY}")
        assert page.status == 200
        assert f"/ws/{KEY}" in await page.text()  # the websocket address carries the key
    finally:
        await client.close()


async def test_the_keyless_websocket_is_closed():
    client, _ = await _client()
    try:
        with pytest.raises(WSServerHandshakeError) as err:
            await client.ws_connect("/ws", headers={"Origin": _origin(client)})
        assert err.value.status == 403
        with pytest.raises(WSServerHandshakeError) as err:
            await client.ws_connect("/ws/wrong-key", headers={"Origin": _origin(client)})
        assert err.value.status == 403
    finally:
        await client.close()


@pytest.mark.parametrize("origin", ["http://evil.example", "http://127.0.0.1.evil.example",
                                    "null", None, "file://", "http://localhost:1"])
async def test_a_websocket_from_another_origin_is_refused_even_with_the_key(origin):
    client, _ = await _client()
    headers = {} if origin is None else {"Origin": origin}
    try:
        with pytest.raises(WSServerHandshakeError) as err:
            await client.ws_connect(f"/ws/{KEY}", headers=headers)
        assert err.value.status == 403
    finally:
        await client.close()


async def test_a_same_origin_websocket_with_the_key_is_accepted(monkeypatch):
    import tutor.serve

    started = []
    spawn = asyncio.create_subprocess_exec

    async def recorded(*args, **kwargs):
        started.append(await spawn(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(tutor.serve.asyncio, "create_subprocess_exec", recorded)
    client, server = await _client()
    done = asyncio.Event()
    handle = server.handle_websocket

    async def tracked(request):
        try:
            return await handle(request)
        finally:
            done.set()

    server.handle_websocket = tracked  # what handle_locked_websocket hands the socket to
    try:
        ws = await client.ws_connect(f"/ws/{KEY}", headers={"Origin": _origin(client)})
        assert not ws.closed
        await ws.close()
        await asyncio.wait_for(done.wait(), 30)
        while server.sessions:  # the tab's app is stopped in a task of its own
            await asyncio.sleep(0.02)
        assert len(started) == 1  # the socket got as far as starting the app
        assert started[0].returncode is not None  # reaped, its pipes closed by the server
    finally:
        await client.close()


def test_same_origin_compares_scheme_host_and_port():
    assert same_origin("http://localhost:8000", "localhost:8000")
    assert same_origin("http://LOCALHOST:8000", "localhost:8000")
    assert not same_origin("http://localhost:8001", "localhost:8000")
    assert not same_origin("http://localhost:8000.evil", "localhost:8000")
    assert not same_origin("ftp://localhost:8000", "localhost:8000")
    assert not same_origin(None, "localhost:8000") and not same_origin("http://a:1", None)


def test_the_printed_address_holds_a_fresh_key():
    a = LockedServer("x", host="localhost", port=8000, title="t")
    b = LockedServer("x", host="localhost", port=8000, title="t")
    assert a.url.startswith("http://localhost:8000/?key=") and a.key != b.key
    assert len(a.key) >= 20
    assert LockedServer("x", host="::1", port=8000, title="t").url.startswith("http://[::1]:8000/")
