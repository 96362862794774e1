"""The class server: one asyncio process, a WebSocket per student (``websockets``).

:class:`ClassServer` runs on whatever event loop starts it — the instructor's Textual app
runs it on its own loop. It owns the :class:`~tutor.classroom.room.Room`, keeps everything in
the instructor's store (:mod:`tutor.store.classes`) and applies the rules of
``docs/class-protocol.md``:

* the handshake is refused (403) without the session key (compared in constant time), and
  (503) when :attr:`ClassServer.cap` students are connected;
* a frame over :data:`~tutor.classroom.protocol.MAX_MESSAGE` bytes closes the connection
  (1009); every message is checked (:func:`~tutor.classroom.protocol.parse_client`), a
  client's messages are rate-limited (:class:`Bucket`) and a client that keeps breaking the
  rules is closed (1008); a client can only say hello, answer and leave;
* names and answers are cleaned of terminal control before anything keeps or shows them;
* an answer is marked off the loop (a thread), saved in a batch with the other answers that
  arrived meanwhile, and acknowledged only once its batch is committed; a wrong number is
  diagnosed behind the ack (:mod:`tutor.classroom.saving`).
"""

from __future__ import annotations

import asyncio
import http
import secrets
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import Server, ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from tutor.classroom import protocol
from tutor.classroom.marking import DIAGNOSING, Mark
from tutor.classroom.protocol import ProtocolError, message
from tutor.classroom.questions import Asked, ask, source
from tutor.classroom.room import Current, Room, Vote
from tutor.classroom.saving import AnswerSaver, Diagnoser
from tutor.store import Store, StoreError
from tutor.store import classes as saved

DEFAULT_CAP = 500
RATE = 5.0
"""Messages a second a client may send on average …"""
BURST = 20
"""… and at once."""
STRIKES = 50
"""Messages refused (over the rate, or malformed) before the client is disconnected."""
HELLO_TIMEOUT = 10.0
PING_INTERVAL = 20.0
PING_TIMEOUT = 20.0
CLOSE_TIMEOUT = 2.0
"""Seconds a closing client gets to answer the close (a flooding one may never)."""


class Bucket:
    """A token bucket: :data:`RATE` messages a second, :data:`BURST` at once."""

    def __init__(self, rate: float = RATE, burst: int = BURST):
        self.rate, self.burst = rate, burst
        self.tokens = float(burst)
        self.at = time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class ClassServer:
    """The room on the network; see the module docstring."""

    def __init__(self, store: Store, session: saved.ClassSession, cap: int = DEFAULT_CAP):
        self.store = store
        self.session = session
        self.cap = cap
        self.room = Room(session.id, session.seed)
        self.connections: dict[str, ServerConnection] = {}
        self._anonymous: set[ServerConnection] = set()
        self._server: Server | None = None
        self.saver = AnswerSaver(store)
        self.diagnoser = Diagnoser(store, self.room, self.saver)
        self.port = session.port
        self._resume()

    # ---------------------------------------------------------------- start and stop

    async def start(self) -> None:
        """Bind and serve on the running loop (``OSError`` when the port cannot be bound)."""
        self.saver.start()
        self.diagnoser.start()
        self._server = await serve(
            self._handle, self.session.host, self.session.port,
            process_request=self._check_request, max_size=protocol.MAX_MESSAGE,
            max_queue=BURST, ping_interval=PING_INTERVAL, ping_timeout=PING_TIMEOUT,
            close_timeout=CLOSE_TIMEOUT, compression=None, server_header=None)
        self.port = self._server.sockets[0].getsockname()[1]
        if self.port != self.session.port:  # port 0: a restart must find the same one
            await asyncio.to_thread(saved.set_port, self.store, self.session.id, self.port)

    async def end(self) -> None:
        """End the class: every student is told (their clients stop trying to reconnect)."""
        broadcast(list(self.connections.values()), message("ended"))
        for ws in list(self.connections.values()):
            await ws.close(1000, "the class has ended")

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        self.saver.stop()
        self.diagnoser.stop()

    def _resume(self) -> None:
        """Reload a session the host left without ending it: students, the open question
        and its votes (marks are the stored ones)."""
        for s in saved.students(self.store, self.session.id):
            self.room.add(s.student, s.name, s.seed)
        asked = saved.questions(self.store, self.session.id)
        if not asked:
            return
        last = asked[-1]
        self.room.numbers = last.number
        if last.state == "done":
            return
        cur = self.room.push(last.ref, last.title, self._asked_or_none(last.ref, 0), last.number)
        cur.state, cur.round = last.state, last.round
        for a in saved.answers(self.store, self.session.id, last.number):
            mark = _stored_mark(a)
            self.room.record(a.student, a.round, Vote(a.response, mark, a.seconds, 0))
            if a.bucket == DIAGNOSING and a.student in self.room.students:
                self.diagnoser.put(a, last.ref, self.room.students[a.student].seed)

    @staticmethod
    def _asked_or_none(ref: str, seed: int) -> Asked | None:
        try:
            return ask(ref, seed)
        except (ValueError, KeyError):
            return None

    # ---------------------------------------------------------------- the handshake

    def _check_request(self, connection: ServerConnection, request: Request) -> Response | None:
        parts = urlsplit(request.path)
        key = parse_qs(parts.query).get("key", [None])[0]
        if parts.path != protocol.PATH or not protocol.same_key(key, self.session.key):
            return connection.respond(http.HTTPStatus.FORBIDDEN, "wrong key for this class\n")
        if len(self.connections) + len(self._anonymous) >= self.cap:
            return connection.respond(http.HTTPStatus.SERVICE_UNAVAILABLE,
                                      f"the class is full ({self.cap} students)\n")
        return None

    # ---------------------------------------------------------------- one student

    async def _handle(self, ws: ServerConnection) -> None:
        self._anonymous.add(ws)
        token = None
        try:
            token = await self._hello(ws)
            if token is None:
                return
            await self._serve_student(ws, token)
        except ConnectionClosed:
            pass
        finally:
            self._anonymous.discard(ws)
            if token is not None and self.connections.get(token) is ws:
                del self.connections[token]
                self.room.students[token].online = False
                self.room.tell("left", (token,))

    async def _hello(self, ws: ServerConnection) -> str | None:
        try:
            raw = await asyncio.wait_for(ws.recv(), HELLO_TIMEOUT)
            msg = protocol.parse_client(raw)
            if msg["type"] != "hello":
                raise ProtocolError("bad-message", "say hello first")
        except TimeoutError:
            await ws.close(1008, "no hello")
            return None
        except ProtocolError as exc:
            await ws.send(message("error", code=exc.code, message=str(exc)))
            await ws.close(1008, exc.code)
            return None
        token = msg["student"]
        student = self.room.students.get(token) if token else None
        if student is None:
            token = secrets.token_urlsafe(12)
            student = self.room.add(token, protocol.clean_name(msg["name"]))
            await asyncio.to_thread(saved.add_student, self.store, self.session.id, token,
                                    student.name, student.seed)
        old = self.connections.get(token)
        if old is not None:  # the same student again (a new client, a half-dead link)
            await old.close(4000, "replaced by a newer connection")
        self._anonymous.discard(ws)
        self.connections[token] = ws
        student.online = True
        await ws.send(message("welcome", student=token, name=student.name,
                              session=self.session.id, seq=student.last_seq))
        await self._send_question(token)
        self.room.tell("joined", (token,))
        return token

    async def _serve_student(self, ws: ServerConnection, token: str) -> None:
        bucket, strikes, warned = Bucket(), 0, 0.0
        async for raw in ws:
            if not bucket.take():
                strikes += 1
                if time.monotonic() - warned > 1.0:
                    warned = time.monotonic()
                    await ws.send(message("error", code="rate-limited",
                                          message="too many messages; slow down"))
            else:
                try:
                    msg = protocol.parse_client(raw)
                except ProtocolError as exc:
                    strikes += 1
                    await ws.send(message("error", code=exc.code, message=str(exc)))
                    msg = None
                if msg is not None and msg["type"] == "bye":
                    await ws.close(1000, "bye")
                    return
                if msg is not None and msg["type"] == "hello":
                    strikes += 1
                    await ws.send(message("error", code="bad-message", message="already joined"))
                elif msg is not None:
                    await self._answer(ws, token, msg)
            if strikes >= STRIKES:
                await ws.close(1008, "too many refused messages")
                return

    async def _answer(self, ws: ServerConnection, token: str, msg: dict[str, Any]) -> None:
        self.saver.busy += 1
        try:
            await self._take_answer(ws, token, msg)
        finally:
            self.saver.busy -= 1

    async def _take_answer(self, ws: ServerConnection, token: str, msg: dict[str, Any]) -> None:
        student = self.room.students[token]
        cur = self.room.current
        q, round_, seq = msg["q"], msg["round"], msg["seq"]
        if seq <= student.last_seq:  # a replayed or stale message: acknowledged, not counted
            await ws.send(message("ack", q=q, round=round_, seq=seq, replay=True))
            return
        if cur is None or cur.number != q or cur.round != round_ or cur.state != "open":
            await ws.send(message("error", code="closed", q=q, round=round_, seq=seq,
                                  message="this vote is not open"))
            return
        text = protocol.clean_answer(msg["text"])
        ref = cur.ref
        mark = await asyncio.to_thread(lambda: ask(ref, student.seed).quick(text))
        if not mark.valid:
            await ws.send(message("invalid", q=q, round=round_, seq=seq, hint=mark.hint))
            return
        student.last_seq = max(student.last_seq, seq)
        seconds = round(time.monotonic() - cur.opened_at, 3)
        row = saved.ClassAnswer(self.session.id, q, round_, token, text, mark.correct,
                                mark.bucket, mark.title, seconds, self.store.now())
        try:
            await self.saver.save(row)
        except StoreError as exc:
            student.last_seq = seq - 1  # not kept: the client may send it again
            await ws.send(message("error", code="not-saved", q=q, round=round_, seq=seq,
                                  message=f"your answer was not saved ({exc}); send it again"))
            return
        self.room.record(token, round_, Vote(text, mark, seconds, seq))
        self.room.tell("answer", (token,))
        await ws.send(message("ack", q=q, round=round_, seq=seq, text=text))
        if mark.bucket == DIAGNOSING:
            self.diagnoser.put(row, ref, student.seed)

    # ---------------------------------------------------------------- to the students

    def _view(self, token: str) -> str:
        cur = self.room.current
        if cur is None:
            return message("state", q=0, round=0, state="waiting")
        student = self.room.students[token]
        asked = ask(cur.ref, student.seed)
        mine = self.room.vote_of(token)
        yours = {"round": mine[0], "text": mine[1].response} if mine else None
        return message("question", q=cur.number, round=cur.round, state=cur.state,
                       yours=yours, **asked.view)

    async def _send_question(self, token: str) -> None:
        ws = self.connections.get(token)
        if ws is None:
            return
        text = await asyncio.to_thread(self._view, token)
        try:
            await ws.send(text)
            if self.room.current is not None and self.room.current.state == "revealed":
                await ws.send(await asyncio.to_thread(self._reveal_for, token))
        except ConnectionClosed:
            pass

    def _reveal_for(self, token: str) -> str:
        cur = self.room.current
        assert cur is not None
        student = self.room.students[token]
        asked = ask(cur.ref, student.seed)
        yours = None
        for r in (1, 2):  # the last vote decides; the first is shown beside it
            vote = cur.votes[r].get(token)
            if vote is None:
                continue
            mark = asked.mark(vote.response)
            mine: dict[str, Any] = {"round": r, "text": vote.response, "correct": mark.correct,
                    "title": mark.title if mark.named else "", "feedback": mark.feedback}
            yours = {**mine, "first": yours} if yours is not None else mine
        return message("reveal", q=cur.number, answer=asked.answer_text,
                       explanation=list(asked.explanation), yours=yours,
                       question_id=asked.question_id, topic=asked.topic, variant=student.seed)

    # ---------------------------------------------------------------- the instructor

    async def push(self, ref: str) -> Current:
        """Put question ``ref`` on the board, open for the first vote.

        Raises:
            ValueError: for a reference that names nothing.
        """
        src = source(ref)
        asked = await asyncio.to_thread(ask, ref, 0)
        # each student's own numbers, made before the question goes out
        seeds = [s.seed for s in self.room.students.values() if s.online]
        await asyncio.to_thread(lambda: [ask(ref, seed) for seed in seeds])
        cur = self.room.push(ref, src.title, asked)
        await asyncio.to_thread(saved.save_question, self.store, self.session.id, cur.number,
                                ref, src.title, cur.state, cur.round)
        await asyncio.gather(*(self._send_question(t) for t in list(self.connections)))
        self.room.tell("question")
        return cur

    async def set_state(self, state: str) -> None:
        """``closed``, ``discuss``, ``open`` (the second vote) or ``revealed``; ``done`` ends
        the question (students wait for the next).

        Raises:
            ValueError: for a step the current state does not allow.
        """
        cur = self.room.current
        if cur is None:
            raise ValueError("push a question first")
        allowed = {"closed": ("open",), "discuss": ("open", "closed"),
                   "open": ("closed", "discuss"), "revealed": ("open", "closed", "discuss"),
                   "done": ("open", "closed", "discuss", "revealed")}
        if cur.state not in allowed.get(state, ()) or (state == "open" and cur.round == 2):
            raise ValueError(f"cannot go from {cur.state} to {state}")
        if state == "open":
            cur.round, cur.opened_at = 2, time.monotonic()
        cur.state = state
        await asyncio.to_thread(saved.save_question, self.store, self.session.id, cur.number,
                                cur.ref, cur.title, state, cur.round)
        if state == "done":
            self.room.current = None
            self.room.options = ()
            broadcast(list(self.connections.values()),
                      message("state", q=0, round=0, state="waiting"))
        elif state == "revealed":
            await asyncio.gather(*(self._send_reveal(t) for t in list(self.connections)))
        else:
            broadcast(list(self.connections.values()),
                      message("state", q=cur.number, round=cur.round, state=state))
        self.room.tell("state")

    async def _send_reveal(self, token: str) -> None:
        ws = self.connections.get(token)
        if ws is None:
            return
        try:
            await ws.send(await asyncio.to_thread(self._reveal_for, token))
        except ConnectionClosed:
            pass

    def listen(self, listener: Callable[[str, tuple[str, ...]], None]) -> None:
        self.room.listen(listener)


def _stored_mark(a: saved.ClassAnswer) -> Mark:
    return Mark(True, a.correct, a.bucket, a.title)


def new_session(store: Store, host: str, port: int) -> saved.ClassSession:
    """Start a session in the store with a fresh key and seed."""
    session_id = time.strftime("%Y%m%d-%H%M") + "-" + secrets.token_hex(2)
    saved.start_session(store, session_id, protocol.new_key(), secrets.randbits(31), host, port)
    found = saved.session(store, session_id)
    assert found is not None
    return found
