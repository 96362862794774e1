"""The class screens driven by Pilot at 80×24: the instructor's (join key, picker, board,
controls) with a simulated student, and the student's (a question, an answer, the reveal)."""

from __future__ import annotations

from class_helpers import Student, until

from engine.mistakes import MISTAKES
from tests.tui_text import screen_text
from tutor.classroom.client import Memory
from tutor.classroom.host_app import HostApp
from tutor.classroom.join_app import JoinApp
from tutor.classroom.server import ClassServer, new_session
from tutor.store import open_store

SIZE = (80, 24)
MCQ = "bank:scoring-factor"  # "multiplies each dot product q·k by which factor": c) 1/√d_k


async def wait_for(pilot, condition, timeout: float = 20.0) -> None:
    await until(condition, timeout)
    await pilot.pause()


def footer(app) -> str:
    return screen_text(app).rstrip("\n").splitlines()[-1]


async def test_the_host_screen_runs_a_question_with_a_student(tmp_path):
    store = open_store(tmp_path / "host.sqlite3")
    server = ClassServer(store, new_session(store, "127.0.0.1", 0))
    app = HostApp(server, "127.0.0.1:0", trace_list=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: server.port != 0)
        painted = screen_text(app)
        assert server.session.key in painted and "attn-tutor class join" in painted
        assert "p push" in footer(app) and "q end class" in footer(app)
        assert "c close" not in footer(app), "nothing to close before a push"
        student = Student(f"127.0.0.1:{server.port}", server.session.key, "Ada", tmp_path)
        await wait_for(pilot, lambda: server.room.snapshot().online == 1)
        await pilot.press("slash", *"by which factor", "enter")
        await pilot.press("p")
        await wait_for(pilot, lambda: student.client.question is not None)
        assert "Q1" in screen_text(app) and "vote 1 open" in screen_text(app)
        await student.client.answer("1/d_k")
        await wait_for(pilot, lambda: "1 100%" in screen_text(app))
        painted = screen_text(app)
        assert "a) 1/d_k" in painted and "✓ c) 1/√d_k" in painted
        title = MISTAKES["scale-by-dk"].title  # the catalogue names distractor a's mistake
        assert title in painted, "the mistake behind distractor a is shown"
        for key, state in (("c", "voting closed"), ("d", "discuss with your neighbour"),
                           ("r", "vote 2 open")):
            await pilot.press(key)
            await wait_for(pilot, lambda: state in screen_text(app))
        await student.client.answer("c")
        await wait_for(pilot, lambda: "answered 1 | 1" in screen_text(app))
        assert "vote 2" in screen_text(app)
        await pilot.press("v")
        await wait_for(pilot, lambda: student.last("reveal") is not None)
        assert "answer revealed" in screen_text(app)
        assert all(word in footer(app) for word in ("n next", "q end class"))
        await pilot.press("n")
        await wait_for(pilot, lambda: student.client.question is None)
        await pilot.press("q", "q")
        await until(lambda: student.task.done())  # told the class ended: no reconnecting
    assert app.return_value == "ended"
    assert student.last("ended") is not None and not student.task.exception()
    store.close()


async def test_the_student_screen_answers_and_sees_the_reveal(tmp_path, monkeypatch):
    store = open_store(tmp_path / "host.sqlite3")
    server = ClassServer(store, new_session(store, "127.0.0.1", 0))
    await server.start()
    monkeypatch.setenv("ATTN_TUTOR_HOME", str(tmp_path / "student"))
    app = JoinApp(f"127.0.0.1:{server.port}", server.session.key, None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"Ada", "enter")
        await wait_for(pilot, lambda: server.room.snapshot().online == 1)
        assert "Waiting for the next question" in screen_text(app)
        await server.push(MCQ)
        await wait_for(pilot, lambda: "1/√d_k" in screen_text(app))
        painted = screen_text(app)
        assert "Vote 1 is open" in painted and "d) 1/d_k²" in painted
        await pilot.press("down", "down", "down", "enter")  # c) 1/√d_k
        await wait_for(pilot, lambda: "Received: 1/√d_k" in screen_text(app))
        await server.set_state("revealed")
        await wait_for(pilot, lambda: "You answered 1/√d_k (vote 1): right" in screen_text(app))
        assert "^q leave" in footer(app)
        await pilot.press("ctrl+q")
    await server.stop()
    kept = open_store(tmp_path / "student" / "progress.sqlite3")
    assert [(a.question_id, a.correct) for a in kept.answers()] == [("scoring-factor", True)]
    kept.close()
    store.close()


async def test_a_wrong_key_closes_the_student_screen_with_one_line(tmp_path):
    store = open_store(tmp_path / "host.sqlite3")
    server = ClassServer(store, new_session(store, "127.0.0.1", 0))
    await server.start()
    app = JoinApp(f"127.0.0.1:{server.port}", "0000-0000-0000", "Eve")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.return_value is not None)
    assert "refused the key" in app.return_value
    await server.stop()
    store.close()


def test_memory_is_kept_per_class(tmp_path):
    m = Memory("127.0.0.1:1", "aaaa-bbbb-cccc", tmp_path / "m.json")
    m.save("tok", 3)
    assert Memory("127.0.0.1:1", "AAAABBBBCCCC", tmp_path / "m.json").load() == ("tok", 3)
    assert Memory("127.0.0.1:2", "aaaa-bbbb-cccc", tmp_path / "m.json").load() == ("", 0)
