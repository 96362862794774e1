"""Class mode end to end on loopback: 30 simulated students through a whole question (vote,
discuss, revote, reveal), per-student numbers, diagnosis in the histogram, the store.

Expected values come from a naive computation here (q·Kⱼ/√d_k with plain Python sums), not
from the code under test."""

from __future__ import annotations

from class_helpers import (FAMILY, dots, forgets_visibly, join, scaled_scores, seed_of,
                           server, typed, until)

from engine.mistakes import MISTAKES
from tutor.store import classes as saved

__all__ = ["server"]  # the fixture


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
    # a wrong number is counted at once, then moved to its mistake when diagnosed
    await until(lambda: "diagnosing" not in {b.bucket for b in server.room.bars()})
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
    await until(lambda: "diagnosing" not in {b.bucket for b in server.room.bars()})
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
    stored = {b: [sum(1 for r in rows if r.round == v and r.bucket == b) for v in (1, 2)]
              for b in ("right", "no-scale", "unknown")}
    assert stored == {k: list(v) for k, v in bars.items()}, "the store has the diagnoses too"
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
