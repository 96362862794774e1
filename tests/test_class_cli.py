"""`attn-tutor class …` as a user runs it: the line-mode join against a live server, the
export (CSV and JSON), and the one-line errors for bad input."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from typer.testing import CliRunner

from tutor.classroom.server import ClassServer, new_session
from tutor.cli import app
from tutor.store import open_store
from tutor.store import classes as saved

MCQ = "bank:scoring-factor"  # c) 1/√d_k is right; a) 1/d_k over-corrects


class Background:
    """A class server on its own thread's event loop (the CLI runs in a subprocess)."""

    def __init__(self, home: Path):
        self.store = open_store(home / "progress.sqlite3")
        self.server = ClassServer(self.store, new_session(self.store, "127.0.0.1", 0))
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.run(self.server.start())

    def run(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)

    def call(self, fn):
        async def wrap():
            return fn()
        return self.run(wrap())

    def close(self) -> None:
        self.run(self.server.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.store.close()


def cli(*args: str, home: Path):
    """The command in this process (typer's runner), with its own home."""
    return CliRunner().invoke(app, list(args), env={"NO_COLOR": "1", "ATTN_TUTOR_HOME": str(home)})


def wait(cond, timeout: float = 30) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "condition not met in time"
        time.sleep(0.02)


def test_a_plain_student_votes_twice_and_sees_the_reveal(tmp_path):
    bg = Background(tmp_path / "host")
    try:
        address = f"127.0.0.1:{bg.server.port}"
        env = {**os.environ, "ATTN_TUTOR_HOME": str(tmp_path / "bob"), "NO_COLOR": "1"}
        proc = subprocess.Popen([sys.executable, "-m", "tutor", "class", "join", address,
                                 bg.server.session.key.lower(), "--plain"], env=env,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        proc.stdin.write("Bob\n")
        proc.stdin.flush()
        wait(lambda: bg.call(lambda: bg.server.room.snapshot().online) == 1)
        bg.run(bg.server.push(MCQ))
        proc.stdin.write("a\n")
        proc.stdin.flush()
        wait(lambda: bg.call(lambda: bg.server.room.snapshot().answered) == (1, 0))
        for state in ("closed", "discuss", "open"):
            bg.run(bg.server.set_state(state))
        proc.stdin.write("3\n")
        proc.stdin.flush()
        wait(lambda: bg.call(lambda: bg.server.room.snapshot().answered) == (1, 1))
        bg.run(bg.server.set_state("revealed"))
        time.sleep(0.5)
        proc.stdin.write(":quit\n")
        proc.stdin.flush()
        out, err = proc.communicate(timeout=30)
    finally:
        bg.close()
    assert proc.returncode == 0, err
    lines = out.splitlines()
    for expected in ("Joined the class as Bob. Wait for the instructor's question.",
                     "  a) 1/d_k", "Vote 1 is open: type your answer.",
                     "Received: 1/d_k (vote 1). You may change it until voting closes.",
                     "Voting is closed: discuss your answer with your neighbour.",
                     "Received: 1/√d_k (vote 2). You may change it until voting closes.",
                     "You answered 1/√d_k (vote 2): right.", "Your first vote:",
                     "  You answered 1/d_k (vote 1): not right.",
                     "The answer: c) 1/√d_k"):
        assert expected in lines, expected
    kept = open_store(tmp_path / "bob" / "progress.sqlite3")
    assert [(a.question_id, a.correct, a.mode) for a in kept.answers()] == [
        ("scoring-factor", True, "review")]
    assert kept.card("scoring-factor") is not None
    kept.close()


def _session_with_answers(home: Path) -> str:
    """A finished session of two questions written through the store (two students)."""
    store = open_store(home / "progress.sqlite3")
    sess = new_session(store, "127.0.0.1", 9)
    saved.add_student(store, sess.id, "tokA", "Ada", 1)
    saved.add_student(store, sess.id, "tokB", "", 2)
    saved.save_question(store, sess.id, 1, MCQ, "factor", "done", 2)
    now = store.now()
    rows = [("tokA", 1, "1/d_k", False, "a"), ("tokB", 1, "1/√d_k", True, "c"),
            ("tokA", 2, "1/√d_k", True, "c")]
    saved.save_answers(store, [saved.ClassAnswer(sess.id, 1, r, t, text, ok, b, b, 1.5, now)
                               for t, r, text, ok, b in rows])
    saved.end_session(store, sess.id)
    store.close()
    return sess.id


def test_export_csv_json_and_per_student(tmp_path):
    sid = _session_with_answers(tmp_path)
    out = cli("class", "export", "last", home=tmp_path)
    assert out.exit_code == 0, out.stderr
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    got = {(r["bucket"], r["vote1"], r["vote2"], r["correct"]) for r in rows}
    assert got == {("c", "1", "1", "1"), ("a", "1", "0", "0")}
    assert {r["session"] for r in rows} == {sid}
    out = cli("class", "export", sid, "--csv", "--students", home=tmp_path)
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert {(r["student"], r["vote1"], r["vote2"], r["final_correct"]) for r in rows} == {
        ("Ada", "1/d_k", "1/√d_k", "1"), ("anonymous", "1/√d_k", "", "1")}
    assert "tok" not in out.stdout, "tokens never leave the store"
    data = json.loads(cli("class", "export", sid, "--json", home=tmp_path).stdout)
    assert data["schema"] == 1 and data["session"]["students"] == 2
    (q,) = data["questions"]
    assert q["answered"] == [2, 1] and q["right"] == [1, 1]
    target = tmp_path / "out.json"
    done = cli("class", "export", sid, "--json", "--out", str(target), home=tmp_path)
    assert done.exit_code == 0 and json.loads(target.read_text()) == data
    listing = cli("class", "sessions", home=tmp_path)
    assert sid in listing.stdout and "2 students  1 questions" in listing.stdout


@pytest.mark.parametrize("args, message", [
    (("class", "export", "nope"), "no class session 'nope'"),
    (("class", "export", "last", "--csv", "--json"), "choose one"),
    (("class", "join", "no-port", "KEY", "--plain"), "expected HOST:PORT"),
    (("class", "host", "--port", "0"), "needs a terminal"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, message):
    done = cli(*args, home=tmp_path)
    assert done.exit_code == 2
    assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_wrong_key_is_one_line(tmp_path):
    bg = Background(tmp_path / "host")
    try:
        env = {**os.environ, "ATTN_TUTOR_HOME": str(tmp_path / "eve"), "NO_COLOR": "1"}
        done = subprocess.run([sys.executable, "-m", "tutor", "class", "join",
                               f"127.0.0.1:{bg.server.port}", "0000-0000-0000", "--plain",
                               "--anonymous"], stdin=subprocess.PIPE, env=env,
                              capture_output=True, text=True, timeout=60)
    finally:
        bg.close()
    assert done.returncode == 2
    assert done.stderr.strip() == ("attn-tutor: error: the class refused the key: check the key "
                                   "the instructor shows")


def test_a_host_that_stopped_without_ending_resumes_its_session(tmp_path):
    from tutor.classroom.host import check_port, open_session, shown_address

    store = open_store(tmp_path / "progress.sqlite3")
    first, resumed = open_session(store, "127.0.0.1", 0, new=False)
    assert not resumed and first.port != 0, "port 0 becomes a fixed free port, kept for restarts"
    again, resumed = open_session(store, "127.0.0.1", 0, new=False)
    assert resumed and (again.id, again.key, again.port) == (first.id, first.key, first.port)
    fresh, resumed = open_session(store, "127.0.0.1", 0, new=True)
    assert not resumed and fresh.key != first.key
    assert saved.session(store, first.id).status == "ended", "--new ends the class left running"
    store.close()
    assert shown_address("127.0.0.1", 8765) == "127.0.0.1:8765"
    assert not shown_address("0.0.0.0", 8765).startswith("0.0.0.0")
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(Exception, match=f"port {port} is in use"):
            check_port("127.0.0.1", port)
