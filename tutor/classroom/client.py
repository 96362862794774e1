"""The student's side of a class: the connection, reconnecting, answering, keeping reviews.

:class:`StudentClient` connects to ``ws://ADDRESS/class?key=KEY``, says hello, and hands every
server message (and ``connecting`` / ``connected`` / ``disconnected`` notes of its own) to
one callback; both front ends (:mod:`tutor.classroom.join_plain`, the Textual join app) draw
from those. A dropped connection is retried with growing pauses; the student's token and
last answer number are kept in the data folder (:class:`Memory`), so a student whose client
was closed and started again is the same student, with the same numbers and their answer.
An answer not yet acknowledged is sent again, unchanged, after a reconnection (the server
acknowledges a repeat without counting it twice).

At reveal, :func:`keep_review` saves the student's answer in their own progress store.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from tutor.classroom import protocol
from tutor.paths import data_dir
from tutor.store import StoreError, open_store

Event = dict[str, Any]
DELAYS = (0.3, 0.6, 1.2, 2.5, 5.0)
"""Pauses between reconnection attempts (the last repeats)."""
MEMORY_FILE = "class-join.json"


class JoinError(Exception):
    """The class cannot be joined (wrong key, full, another protocol version): one line."""


def url(address: str, key: str) -> str:
    """``ws://ADDRESS/class?key=KEY`` from ``host:port`` (or a ``ws://`` address).

    Raises:
        JoinError: for an address without a port.
    """
    address = address.strip()
    if address.startswith(("ws://", "wss://")):
        address = address.split("://", 1)[1]
    address = address.split("/", 1)[0]
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise JoinError(f"{address[:60]!r}: expected HOST:PORT, as `attn-tutor class host` prints it")
    return f"ws://{address}{protocol.PATH}?key={quote(protocol.normal_key(key))}"


class Memory:
    """The student's token and last answer number per class, in the data folder."""

    def __init__(self, address: str, key: str, path: Path | None = None):
        self.slot = f"{address.strip()}|{protocol.normal_key(key)}"
        self.path = path or data_dir() / MEMORY_FILE

    def _all(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def load(self) -> tuple[str, int]:
        slot = self._all().get(self.slot)
        if not isinstance(slot, dict):
            return "", 0
        token, seq = slot.get("student", ""), slot.get("seq", 0)
        return (token if isinstance(token, str) else "", seq if isinstance(seq, int) else 0)

    def save(self, token: str, seq: int) -> None:
        """Written atomically; a folder that cannot be written only loses the memory."""
        data = self._all()
        data.pop(self.slot, None)
        data[self.slot] = {"student": token, "seq": seq}
        data = dict(list(data.items())[-20:])  # the last twenty classes are plenty
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".class-join-")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f)
            os.replace(tmp, self.path)
        except OSError:
            pass


class StudentClient:
    """One student's connection; see the module docstring."""

    def __init__(self, address: str, key: str, name: str, on_event: Callable[[Event], None],
                 memory: Memory | None = None, delays: tuple[float, ...] = DELAYS):
        self.url = url(address, key)
        self.name = name
        self.on_event = on_event
        self.memory = memory or Memory(address, key)
        self.token, self.seq = self.memory.load()
        self.delays = delays
        self.ws: ClientConnection | None = None
        self.question: Event | None = None
        self.pending: str | None = None
        self._stop = False

    async def run(self) -> None:
        """Connect, and reconnect after every drop, until :meth:`stop`.

        Raises:
            JoinError: the server refused us for good (wrong key, full, another version).
        """
        attempt = 0
        while not self._stop:
            self.on_event({"type": "connecting", "attempt": attempt})
            try:
                async with connect(self.url, max_size=1 << 20, compression=None,
                                   open_timeout=10, proxy=None) as ws:
                    self.ws = ws
                    attempt = 0
                    await self._session(ws)
            except InvalidStatus as exc:
                raise JoinError(_refusal(exc)) from None
            except (OSError, ConnectionClosed, InvalidHandshake, TimeoutError):
                pass
            self.ws = None
            if self._stop:
                break
            self.on_event({"type": "disconnected"})
            await asyncio.sleep(self.delays[min(attempt, len(self.delays) - 1)])
            attempt += 1

    async def _session(self, ws: ClientConnection) -> None:
        await ws.send(protocol.hello(self.name, self.token))
        async for raw in ws:
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(event, dict):
                continue
            kind = event.get("type")
            if kind == "welcome":
                self.token = str(event.get("student", ""))
                self.seq = max(self.seq, int(event.get("seq", 0) or 0))
                self.memory.save(self.token, self.seq)
                self.on_event({**event, "type": "connected"})
                continue
            if kind == "ended":  # the instructor ended the class: no reconnecting
                self._stop = True
                self.on_event(event)
                return
            if kind == "error" and event.get("code") == "version":
                raise JoinError(f"the class speaks another protocol version: {event.get('message')}")
            if kind == "question":
                self.question = event
                if self.pending is not None and event.get("state") == "open":
                    await ws.send(self.pending)  # unacknowledged: the same message again
            elif kind == "state" and self.question is not None:
                self.question = {**self.question, "state": event.get("state"),
                                 "round": event.get("round")}
                if event.get("state") == "waiting":
                    self.question = None
            elif kind in ("ack", "invalid") or (kind == "error" and "seq" in event):
                if self.pending is not None and json.loads(self.pending)["seq"] == event.get("seq"):
                    self.pending = None
            self.on_event(event)

    async def answer(self, text: str) -> bool:
        """Send an answer to the open vote; False when no vote is open (or not connected:
        it is sent when the connection comes back)."""
        q = self.question
        if q is None or q.get("state") != "open":
            return False
        self.seq += 1
        self.memory.save(self.token, self.seq)
        self.pending = protocol.answer(int(q["q"]), int(q["round"]), self.seq, text)
        if self.ws is not None:
            try:
                await self.ws.send(self.pending)
            except ConnectionClosed:
                pass
        return True

    async def stop(self) -> None:
        self._stop = True
        if self.ws is not None:
            try:
                await self.ws.send(protocol.message("bye"))
                await self.ws.close()
            except ConnectionClosed:
                pass


def _refusal(exc: InvalidStatus) -> str:
    status = exc.response.status_code
    body = exc.response.body.decode("utf-8", "replace").strip() if exc.response.body else ""
    if status == 403:
        return "the class refused the key: check the key the instructor shows"
    if status == 503:
        return body or "the class is full"
    return f"the class refused the connection ({status} {body})".strip()


def choice_text(question: Event, typed: str) -> str:
    """What to send for a choice question: the option a letter or number picks, or the text."""
    options = question.get("options") or []
    s = typed.strip().strip("().").lower()
    if len(s) == 1 and "a" <= s <= "z" and ord(s) - ord("a") < len(options):
        return str(options[ord(s) - ord("a")])
    if s.isdigit() and 1 <= int(s) <= len(options):
        return str(options[int(s) - 1])
    return typed


def keep_review(event: Event) -> str | None:
    """Save the student's revealed answer in their own store as a review (a bank item or a
    generated family also moves its FSRS card); one line about a failure, else None."""
    from tutor.quiz.scheduler import make_scheduler, rating_for, updater  # fsrs: at reveal only

    yours = event.get("yours")
    qid, topic = str(event.get("question_id", "")), str(event.get("topic", ""))
    if not isinstance(yours, dict) or not qid:
        return None
    correct = bool(yours.get("correct"))
    scheduled = not qid.startswith(("trace:", "xq-"))
    try:
        with open_store() as store:
            rating = rating_for(correct)
            store.record_answer(
                qid, topic, correct=correct, rating=int(rating) if scheduled else None,
                response=str(yours.get("text", ""))[:500], mode="review",
                variant=str(event.get("variant", "")), session="class",
                update_card=updater(qid, rating, make_scheduler()) if scheduled else None)
    except StoreError as exc:
        return f"your answer was not kept in your progress: {exc}"
    return None
