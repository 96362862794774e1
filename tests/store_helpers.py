"""Real faults for the store tests: other processes, a hard kill, a file-size limit, a
non-root user. Each runs in a child process so the fault cannot leak into the test run."""

from __future__ import annotations

import os
import resource
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

WRITE_AND_DIE = """
import os, signal, sys
from tutor.store import open_store
s = open_store(sys.argv[1])
for i in range(int(sys.argv[2])):
    s.record_answer(f"q{i}", "qkv", correct=True, rating=3, response=f"r{i}")
print("written", flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # no close: the answers stay in the -wal, as after a crash
"""

# A plain quiz over a bank of many one-letter multiple-choice questions (answer: b).
QUIZ_OF_MCQS = """
import sys
from tutor.quiz import bank as bank_mod
from tutor.quiz.bank import Question
BANK = [Question(id=f"m{i:03d}", kind="mcq", section="qkv", prompt=f"Question {i}: pick b.",
                 answer=1, explanation="b.", difficulty=1, choices=("a", "b", "c"))
        for i in range(int(sys.argv[1]))]
bank_mod.load_bank = lambda root=None: list(BANK)
from tutor.cli import main
main(["quiz", "--plain", "--no-generated", "-n", sys.argv[1], *sys.argv[2:]])
"""


PR_CAPBSET_DROP = 24
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 1, 2


def python(code: str, *args: str, env: dict[str, str] | None = None, stdin: str | None = None,
           file_size_limit: int | None = None, obey_permissions: bool = False,
           timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter.

    Args:
        file_size_limit: RLIMIT_FSIZE in bytes: the kernel then fails any write past it
            (EFBIG; Python ignores SIGXFSZ), as a full disk or quota would.
        obey_permissions: drop root's power to ignore file modes (CAP_DAC_OVERRIDE and
            CAP_DAC_READ_SEARCH, from the capability bounding set before exec), so a read-only
            folder is read-only even to root. Needs root (CAP_SETPCAP).
    """

    def limits() -> None:
        if file_size_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))
        if obey_permissions:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
                if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
                    raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")

    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], input=stdin,
                          capture_output=True, text=True, env=full_env, cwd=REPO,
                          preexec_fn=limits, timeout=timeout)


def crash_after_writing(path: Path, n: int) -> None:
    """A child writes ``n`` answers to ``path`` and is killed (SIGKILL) before closing."""
    r = python(WRITE_AND_DIE, str(path), str(n))
    assert r.returncode == -signal.SIGKILL and "written" in r.stdout, r.stderr


def count_ignoring_wal(path: Path) -> int:
    """Answers in the main file alone (what an ``immutable=1`` reader sees)."""
    con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    try:
        return con.execute("SELECT COUNT(*) FROM answers").fetchone()[0]
    finally:
        con.close()


def answers_in(path: Path) -> list[tuple]:
    con = sqlite3.connect(path)
    try:
        return con.execute("SELECT question_id, response FROM answers ORDER BY id").fetchall()
    finally:
        con.close()


def files(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}
