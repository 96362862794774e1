"""Class server faults: a student drops and reconnects, the host restarts mid-question,
malformed / oversized / replayed messages, a wrong key, a full room, a flood from one client.
In each the server keeps serving the others and loses no acknowledged answer."""

from __future__ import annotations

import asyncio
import json
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from class_helpers import (FAMILY, Student, address, join, scaled_scores, seed_of, server, typed,
                           until)

from tutor.classroom import protocol
from tutor.classroom.client import JoinError, Memory, StudentClient
from tutor.classroom.server import ClassServer, new_session
from tutor.store import open_store
from tutor.store import classes as saved

__all__ = ["server"]  # the fixture




def ws_url(srv: ClassServer, key: str | None = None) -> str:
    return f"ws://{address(srv)}{protocol.PATH}?key={key or srv.session.key}"


async def raw_student(srv: ClassServer, name: str = "raw"):
    """A bare WebSocket that has said hello; returns (ws, welcome)."""
    ws = await connect(ws_url(srv), compression=None)
    await ws.send(protocol.hello(name))
    welcome = json.loads(await ws.recv())
    assert welcome["type"] == "welcome"
    await ws.recv()  # the state or question
    return ws, welcome


async def replies(ws, n: int) -> list[dict]:
    return [json.loads(await asyncio.wait_for(ws.recv(), 10)) for _ in range(n)]


async def test_a_dropped_student_reconnects_and_keeps_the_answer(server, tmp_path):
    a, b = await join(server, 2, tmp_path)
    await server.push(FAMILY)
    await until(lambda: a.client.question is not None)
    text = typed(scaled_scores(seed_of(server, a)))
    await a.client.answer(text)
    await until(lambda: len(a.acks()) == 1)
    before = sum(1 for e in a.events if e["type"] == "connected")
    await server.connections[a.client.token].close()  # the link drops
    await until(lambda: sum(1 for e in a.events if e["type"] == "connected") == before + 1)
    await until(lambda: a.last("question") and a.last("question")["yours"] is not None)
    assert a.last("question")["yours"] == {"round": 1, "text": text}
    assert server.room.snapshot().online == 2
    # a killed client started again (same memory file) is the same student, answer kept
    token = a.client.token
    await a.stop()
    again = Student(address(server), server.session.key, "s0", tmp_path)
    await until(lambda: again.last("question") is not None)
    assert again.client.token == token
    assert again.last("question")["yours"]["text"] == text
    assert len(server.room.students) == 2
    await again.stop()
    await b.stop()


async def test_the_host_restarts_mid_question(server, tmp_path):
    students = await join(server, 3, tmp_path)
    await server.push(FAMILY)
    await until(lambda: all(s.client.question for s in students))
    for st in students[:2]:
        await st.client.answer(typed(scaled_scores(seed_of(server, st))))
    await until(lambda: all(len(s.acks()) == 1 for s in students[:2]))
    session = saved.session(server.store, server.session.id)
    await server.stop()  # the host's process goes away …
    for ws in list(server.connections.values()):
        await ws.close()
    again = ClassServer(server.store, session)  # … and comes back on the same port
    await again.start()
    try:
        assert again.port == server.port
        await until(lambda: again.room.snapshot().online == 3)
        assert {b.bucket: b.counts for b in again.room.bars()} == {"right": (2, 0)}
        third = students[2]
        await until(lambda: third.client.question is not None and third.client.question["state"] == "open")
        await third.client.answer(typed(scaled_scores(again.room.students[third.client.token].seed)))
        await until(lambda: len(third.acks()) == 1)
        assert {b.bucket: b.counts for b in again.room.bars()} == {"right": (3, 0)}
        assert len(saved.answers(again.store, session.id, 1)) == 3
    finally:
        for st in students:
            await st.stop()
        await again.stop()


async def test_malformed_oversized_and_replayed_messages(server, tmp_path):
    (good,) = await join(server, 1, tmp_path)
    await server.push(FAMILY)
    ws, welcome = await raw_student(server)
    for bad in ("not json", "[1, 2]", json.dumps({"v": 1, "type": "rm -rf"}),
                json.dumps({"v": 1, "type": "answer", "q": 1, "round": 1, "seq": 1, "text": 5}),
                json.dumps({"v": 1, "type": "answer", "q": 1, "round": 3, "seq": 1, "text": "1"}),
                json.dumps({"v": 1, "type": "answer", "q": 1, "round": 1, "seq": 1, "text": "1",
                            "file": "/etc/passwd"}),
                json.dumps({"v": 2, "type": "bye"})):
        await ws.send(bad)
        (reply,) = await replies(ws, 1)
        assert reply["type"] == "error", bad
    # a replayed answer is acknowledged once and counted once
    seed = server.room.students[welcome["student"]].seed
    message = protocol.answer(1, 1, 7, typed(scaled_scores(seed)))
    await ws.send(message)
    await ws.send(message)
    first, second = await replies(ws, 2)
    assert first["type"] == "ack" and "replay" not in first
    assert second == {**second, "type": "ack", "replay": True}
    assert server.room.snapshot().answered == (1, 0)
    # an oversized frame closes that connection only
    await ws.send("x" * (protocol.MAX_MESSAGE + 1))
    with pytest.raises(ConnectionClosed) as closed:
        await replies(ws, 1)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    await good.client.answer(typed(scaled_scores(seed_of(server, good))))
    await until(lambda: len(good.acks()) == 1)
    assert server.room.snapshot().answered == (2, 0)
    await good.stop()


async def test_a_wrong_key_is_refused_before_the_handshake(server, tmp_path):
    with pytest.raises(InvalidStatus) as refused:
        await connect(ws_url(server, "0000-0000-0000"))
    assert refused.value.response.status_code == 403
    client = StudentClient(address(server), "0000-0000-0000", "eve", lambda e: None,
                           Memory("x", "y", tmp_path / "m.json"))
    with pytest.raises(JoinError, match="refused the key"):
        await client.run()
    # the key is read in any case, without dashes
    ws = await connect(ws_url(server, server.session.key.lower().replace("-", "")))
    await ws.close()
    assert server.room.students == {}


async def test_a_full_class_says_so(tmp_path):
    store = open_store(tmp_path / "host.sqlite3")
    srv = ClassServer(store, new_session(store, "127.0.0.1", 0), cap=2)
    await srv.start()
    try:
        students = await join(srv, 2, tmp_path)
        client = StudentClient(address(srv), srv.session.key, "third", lambda e: None,
                               Memory("x", "y", tmp_path / "m.json"))
        with pytest.raises(JoinError, match="full"):
            await client.run()
        for st in students:
            await st.stop()
    finally:
        await srv.stop()
        store.close()


async def test_a_flood_from_one_client_does_not_stop_the_others(server, tmp_path):
    students = await join(server, 5, tmp_path)
    await server.push(FAMILY)
    await until(lambda: all(s.client.question for s in students))
    ws, welcome = await raw_student(server, "flood")
    seed = server.room.students[welcome["student"]].seed
    acked: list[int] = []

    right = typed(scaled_scores(seed))

    async def flood() -> None:
        try:
            for seq in range(1, 3000):
                await ws.send(protocol.answer(1, 1, seq, right))
        except ConnectionClosed:
            pass

    async def read() -> None:
        try:
            async for raw in ws:
                reply = json.loads(raw)
                if reply["type"] == "ack" and not reply.get("replay"):
                    acked.append(reply["seq"])
        except ConnectionClosed:
            pass

    reader = asyncio.create_task(read())
    await flood()
    for st in students:
        await st.client.answer(typed(scaled_scores(seed_of(server, st))))
    await until(lambda: all(len(s.acks()) == 1 for s in students))
    await asyncio.wait_for(reader, 20)
    assert ws.close_code == 1008, "the flooding client is disconnected"
    assert 1 <= len(acked) <= 60, "most of the flood was refused"
    rows = {r.student: r for r in saved.answers(server.store, server.session.id, 1)}
    assert len(rows) == 6, "every acknowledged answer is in the store"
    assert {b.bucket: b.counts for b in server.room.bars()} == {"right": (6, 0)}
    for st in students:
        await st.stop()


async def test_names_and_answers_are_cleaned_of_terminal_control(server, tmp_path):
    ws = await connect(ws_url(server))
    await ws.send(protocol.hello("\x1b]52;c;aGk=\x07Ada\x1b[2J\u202e"))
    welcome = json.loads(await ws.recv())
    assert welcome["name"] == "Ada"
    await server.push("bank:scoring-sqrt-64")
    await replies(ws, 2)
    await ws.send(protocol.answer(1, 1, 1, "\x1b[31m 7\x9b1m\x07"))
    (ack,) = await replies(ws, 1)
    assert ack["text"] == "7"
    assert server.room.current.votes[1][welcome["student"]].response == "7"
    await ws.close()
