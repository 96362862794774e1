"""Class mode end to end on loopback: 30 simulated students through a whole question (vote,
discuss, revote, reveal), per-student numbers, diagnosis in the histogram, the store.

Expected values come from a naive computation here (q·Kⱼ/√d_k with plain Python sums), not
from the code under test."""

from __future__ import annotations

import asyncio
import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import class_fakes  # noqa: E402

class_fakes.install()

from engine.mistakes import MISTAKES  # noqa: E402
from tutor.classroom.client import Memory, StudentClient  # noqa: E402
from tutor.classroom.server import ClassServer, new_session  # noqa: E402
from tutor.quiz.generators import generate  # noqa: E402
from tutor.store import open_store  # noqa: E402
from tutor.store import classes as saved  # noqa: E402

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


async def test_thirty_students_vote_discuss_revote_reveal(server, tmp_path):
    students = await join(server, 30, tmp_path)
    assert server.room.snapshot().online == 30
    await server.push(FAMILY)
    await until(lambda: all(s.client.question for s in students))
    prompts = {s.client.question["prompt"] for s in students}
    assert len(prompts) > 20, "each student has their own numbers"

    # vote 1: ten right, ten forget the scale, ten guess
    visible = [forgets_visibly(seed_of(server, st)) for st in students]
    for i, st in enumerate(students):
        seed = seed_of(server, st)
        answer = [typed(scaled_scores(seed)), typed(dots(seed)), "9, 9, 9"][i // 10]
        assert await st.client.answer(answer)
    await until(lambda: all(len(s.acks()) == 1 for s in students))
    bars = {b.bucket: b.counts for b in server.room.bars()}
    forgot = sum(visible[10:20])  # on a student's numbers the scale may change nothing
    assert bars == {"right": (20 - forgot, 0), "no-scale": (forgot, 0), "unknown": (10, 0)}

    await server.set_state("closed")
    await server.set_state("discuss")
    await until(lambda: all(s.client.question["state"] == "discuss" for s in students))
    assert not await students[0].client.answer("1, 2, 3"), "no vote is open while discussing"
    await server.set_state("open")
    await until(lambda: all(s.client.question["state"] == "open" and s.client.question["round"] == 2
                            for s in students))
    # vote 2: twenty-five right, five still forget the scale
    for i, st in enumerate(students):
        seed = seed_of(server, st)
        await st.client.answer(typed(scaled_scores(seed)) if i < 25 else typed(dots(seed)))
    await until(lambda: all(len(s.acks()) == 2 for s in students))
    bars = {b.bucket: b.counts for b in server.room.bars()}
    still = sum(visible[25:])
    assert bars == {"right": (20 - forgot, 30 - still), "no-scale": (forgot, still),
                    "unknown": (10, 0)}
    assert [b.bucket for b in server.room.bars()] == ["right", "no-scale", "unknown"]

    await server.set_state("revealed")
    await until(lambda: all(s.last("reveal") for s in students))
    for i, st in enumerate(students):
        reveal = st.last("reveal")
        assert reveal["yours"]["round"] == 2
        assert reveal["yours"]["correct"] is (i < 25 or not visible[i])
        assert reveal["question_id"] == FAMILY
        if i >= 25 and visible[i]:
            assert reveal["yours"]["title"] == MISTAKES["no-scale"].title
    rows = saved.answers(server.store, server.session.id, 1)
    assert len(rows) == 60 and {r.round for r in rows} == {1, 2}
    for st in students:
        await st.stop()


async def test_a_second_answer_replaces_the_first_within_a_vote(server, tmp_path):
    (st,) = await join(server, 1, tmp_path)
    await server.push(FAMILY)
    await until(lambda: st.client.question is not None)
    seed = seed_of(server, st)
    await st.client.answer("9, 9, 9")
    await until(lambda: len(st.acks()) == 1)
    await st.client.answer(typed(scaled_scores(seed)))
    await until(lambda: len(st.acks()) == 2)
    assert {b.bucket: b.counts for b in server.room.bars()} == {"right": (1, 0)}
    rows = saved.answers(server.store, server.session.id, 1)
    assert [r.bucket for r in rows] == ["right"]
    await st.stop()


async def test_late_join_gets_the_current_question(server, tmp_path):
    await server.push("gen:softmax-weights")
    (st,) = await join(server, 1, tmp_path, "late")
    await until(lambda: st.client.question is not None)
    assert st.client.question["state"] == "open" and st.client.question["q"] == 1
