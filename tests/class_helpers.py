"""Helpers of the class-mode tests: a server on loopback, simulated students (real
:class:`~tutor.classroom.client.StudentClient` s), waiting for a condition, and the answers a
student computes by hand for the ``self-attention-row`` family."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import pytest

from tutor.classroom.client import Memory, StudentClient
from tutor.classroom.server import ClassServer, new_session
from tutor.quiz.generators import generate
from tutor.store import open_store

FAMILY = "gen:self-attention-row"
TOLERANCE = 0.01
"""What the family's part states (\"anything within ±0.01 per entry counts\")."""


async def until(cond, timeout: float = 20.0) -> None:
    """Wait for ``cond()`` (polling), failing after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        if loop.time() > end:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


class Student:
    """A simulated student: a real StudentClient and the events it received."""

    def __init__(self, address: str, key: str, name: str, folder: Path):
        self.events: list[dict] = []
        self.client = StudentClient(address, key, name, self.events.append,
                                    Memory(address, key, folder / f"{name or 'anon'}.json"),
                                    delays=(0.05, 0.1))
        self.task = asyncio.create_task(self.client.run())

    def last(self, kind: str) -> dict | None:
        return next((e for e in reversed(self.events) if e.get("type") == kind), None)

    def acks(self) -> list[dict]:
        return [e for e in self.events if e.get("type") == "ack" and not e.get("replay")]

    async def stop(self) -> None:
        await self.client.stop()
        self.task.cancel()


def _row(seed: int, scale: bool) -> list[float]:
    """Token ``position``'s attention weights for one student's numbers, by hand:
    softmax over j of (x W_Q)·(x_j W_K) / √d_k (or without the scale)."""
    inputs = generate(FAMILY[4:], seed).trace_inputs
    X, W_Q, W_K = (inputs[k].tolist() for k in ("X", "W_Q", "W_K"))
    d_k = len(W_Q[0])

    def times(row, W):
        return [sum(row[i] * W[i][c] for i in range(len(row))) for c in range(len(W[0]))]

    q = times(X[inputs["position"] - 1], W_Q)
    scores = [sum(a * b for a, b in zip(q, times(x, W_K))) for x in X]
    scores = [s / math.sqrt(d_k) for s in scores] if scale else scores
    exps = [math.exp(s) for s in scores]
    return [e / sum(exps) for e in exps]


def scaled_scores(seed: int) -> list[float]:
    """The right weights for one student's seed."""
    return _row(seed, True)


def dots(seed: int) -> list[float]:
    """The weights of a student who forgot 1/√d_k."""
    return _row(seed, False)


def forgets_visibly(seed: int) -> bool:
    """Whether the weights without the scale, typed to 6 decimals, fall outside the stated
    tolerance (±0.01 per entry) of the right ones: on some numbers the scale hardly matters."""
    return any(abs(float(f"{b:.6f}") - a) > TOLERANCE + 1e-9
               for a, b in zip(scaled_scores(seed), dots(seed)))


def typed(values: list[float]) -> str:
    return ", ".join(f"{v:.6f}" for v in values)


@pytest.fixture
async def server(tmp_path):
    store = open_store(tmp_path / "host.sqlite3")
    session = new_session(store, "127.0.0.1", 0)
    srv = ClassServer(store, session)
    await srv.start()
    yield srv
    await srv.stop()
    store.close()


def address(srv: ClassServer) -> str:
    return f"127.0.0.1:{srv.port}"


async def join(srv: ClassServer, n: int, folder: Path, prefix: str = "s") -> list[Student]:
    students = [Student(address(srv), srv.session.key, f"{prefix}{i}", folder) for i in range(n)]
    await until(lambda: all(s.last("connected") for s in students))
    return students


def seed_of(srv: ClassServer, st: Student) -> int:
    return srv.room.students[st.client.token].seed
