"""Crashes and concurrency against real processes (slow: each case starts interpreters).

Every answer the quiz acknowledged must be in the file after a kill -9 at any moment, and two
copies writing at once must lose nothing. Kill points are drawn from a seeded generator, so
the same moments are tried on every run; what the assertions demand holds at any moment.
"""

from __future__ import annotations

import random
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import store_helpers as h
from tutor.store import open_store

pytestmark = pytest.mark.slow

N_QUESTIONS = 30


class QuizProcess:
    """``attn-tutor quiz --plain`` over the one-letter bank, all answers already on stdin."""

    def __init__(self, home: Path):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(h.QUIZ_OF_MCQS), str(N_QUESTIONS),
             "--seed", "3"], cwd=h.REPO, env={**__import__("os").environ,
                                              "ATTN_TUTOR_HOME": str(home)},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self.changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.proc.stdin.write("b\n" * N_QUESTIONS)
        self.proc.stdin.close()

    def _read(self) -> None:
        for line in self.proc.stdout:
            with self.changed:
                self.lines.append(line.rstrip("\n"))
                self.changed.notify_all()

    def wait_for(self, text: str, count: int, timeout: float = 60) -> bool:
        """Block until ``text`` has appeared ``count`` times (False if the process ended first)."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while sum(line == text or line.startswith(text) for line in self.lines) < count:
                if self.proc.poll() is not None and not self._reader.is_alive():
                    return False
                self.changed.wait(0.05)
                assert time.monotonic() < deadline, "the quiz stopped answering"
        return True

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self._reader.join(10)

    @property
    def acknowledged(self) -> int:
        return sum(line == "Correct." for line in self.lines)

    @property
    def asked(self) -> list[str]:
        return [f"m{int(m.group(1)):03d}" for line in self.lines
                if (m := re.match(r"Question (\d+): pick b\.$", line))]


def test_kill_9_at_random_moments_keeps_every_acknowledged_answer(tmp_path):
    rng = random.Random(14)
    kill_after = sorted(rng.sample(range(N_QUESTIONS - 8), 8))  # acknowledged, then kill
    for trial, k in enumerate(kill_after):
        home = tmp_path / f"trial{trial}"
        home.mkdir()
        quiz = QuizProcess(home)
        if k == 0:
            quiz.wait_for("Question 1/", 1)  # before any answer: at the first question
        else:
            quiz.wait_for("Correct.", k)
        time.sleep(rng.uniform(0, 0.004))  # land anywhere in the next answer's work
        quiz.kill()
        acknowledged = quiz.acknowledged
        assert acknowledged >= k

        with open_store(home / "progress.sqlite3") as store:
            assert store.warnings == [], store.warnings  # never damaged by a kill
            stored = [a.question_id for a in store.answers()]
            cards = {c.question_id: c.reps for c in store.cards()}
        # every acknowledged answer is stored; at most one more (committed, not yet printed)
        assert acknowledged <= len(stored) <= acknowledged + 1, (trial, k)
        assert stored == quiz.asked[:len(stored)]  # in the order asked, none twice
        assert cards == {q: 1 for q in stored}  # an answer and its card commit together


WRITER = """
import sys
from datetime import timedelta
from tutor.store import open_store

def bump(old, at):
    n = (old or {}).get("n", 0) + 1
    return {"n": n, "due": (at + timedelta(days=1)).isoformat()}

tag, n = sys.argv[2], int(sys.argv[3])
with open_store(sys.argv[1]) as s:
    assert s.warnings == [], s.warnings
    for i in range(n):
        s.record_answer("shared", "qkv", correct=True, rating=3, response=f"{tag}{i}",
                        update_card=bump)
        s.record_answer(f"{tag}-only", "qkv", correct=True, rating=3, response=f"{tag}{i}")
print("done", flush=True)
"""


def test_two_writer_processes_lose_nothing(tmp_path):
    path = tmp_path / "progress.sqlite3"
    open_store(path).close()
    n = 150
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(WRITER), str(path), tag,
                               str(n)], cwd=h.REPO, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for tag in "xy"]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and out.strip() == "done", err
    con = sqlite3.connect(path)
    try:
        for tag in "xy":
            responses = [r for (r,) in con.execute(
                "SELECT response FROM answers WHERE question_id = 'shared' AND response LIKE ?"
                " ORDER BY id", (f"{tag}%",))]
            assert responses == [f"{tag}{i}" for i in range(n)]
        assert con.execute("SELECT COUNT(*) FROM answers").fetchone()[0] == 4 * n
        card, reps = con.execute("SELECT card, reps FROM cards WHERE question_id = 'shared'"
                                 ).fetchone()
        # each read-modify-write of the card saw the other process's: no update lost
        assert __import__("json").loads(card)["n"] == 2 * n and reps == 2 * n
    finally:
        con.close()


def test_two_quizzes_at_once_on_one_home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    quizzes = [QuizProcess(home) for _ in range(2)]
    for q in quizzes:
        q.proc.wait(timeout=120)
        q._reader.join(10)
        assert q.proc.returncode == 0, q.proc.stderr.read()
        assert q.acknowledged == N_QUESTIONS
    with open_store(home / "progress.sqlite3") as store:
        answers = store.answers()
        assert store.warnings == [] and len(answers) == 2 * N_QUESTIONS
        sessions = {a.session for a in answers}
        assert len(sessions) == 2
        assert all(sum(a.session == s for a in answers) == N_QUESTIONS for s in sessions)
        assert {c.question_id: c.reps for c in store.cards()} == {
            f"m{i:03d}": 2 for i in range(N_QUESTIONS)}
