"""A healthy progress file is never treated as damaged (issue 14 §1), tested with real faults:
another connection's lock, a full file (``max_page_count``), the kernel's file-size limit
(``RLIMIT_FSIZE``: real EFBIG errors from write()), a crash that leaves answers in the -wal,
a read-only home, lost tables and malformed rows."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

import store_helpers as h
from tutor.cli import app
from tutor.quiz import bank as bank_mod
from tutor.quiz.bank import Question
from tutor.quiz.modes import Item
from tutor.quiz.plain import LineReader, make_out, run_lines
from tutor.quiz.session import QuizSession
from tutor.store import SCHEMA_VERSION, StoreError, core, faults, open_store, opening

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=timezone.utc)
STAMP = "2026-03-02T12:00:00.000000+00:00"
MCQS = [Question(id=f"m{i}", kind="mcq", section="qkv", prompt=f"Q{i}: pick b.", answer=1,
                 explanation="b.", difficulty=1, choices=("a", "b", "c")) for i in range(6)]


@pytest.fixture
def short_busy_timeout(monkeypatch):
    monkeypatch.setattr(core, "BUSY_TIMEOUT_MS", 200)


def _seed(path: Path, n: int = 3) -> None:
    with open_store(path) as s:
        for i in range(n):
            s.record_answer(f"old{i}", "qkv", correct=True, rating=3, response=f"r{i}")


def _fill(store, response: str = "") -> int:
    """Cap the file at its current size and write small answers until it is full."""
    pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
    store._conn.execute(f"PRAGMA max_page_count = {pages}")
    for n in range(10_000):
        try:
            store.record_answer("f", "qkv", correct=True, rating=None, response=response)
        except StoreError as exc:
            assert exc.kind == faults.FULL, exc
            return n
    raise AssertionError("max_page_count never filled the file")


# ----------------------------------------------------------------------------- locked


def test_a_file_locked_by_another_program_is_left_alone(tmp_path, short_busy_timeout):
    path = tmp_path / "progress.sqlite3"
    _seed(path)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")  # as another tool can: no reader gets in
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO lesson_opens VALUES ('qkv', ?, ?, 1)", (STAMP, STAMP))
    before = h.files(tmp_path)
    with open_store(path) as s:
        [warning] = s.warnings
        assert not s.persistent
        assert "another program is holding the progress file locked" in warning
        assert "still busy after 0.2 s" in warning and "nothing was moved" in warning
        # the file as last committed is still shown (read without waiting a second time)
        assert [a.response for a in s.answers()] == ["r0", "r1", "r2"]
    assert h.files(tmp_path) == before  # before the fix: moved to .damaged-..., fresh file
    holder.execute("COMMIT")
    holder.close()
    with open_store(path) as s:
        assert s.persistent and s.warnings == []
        assert [a.response for a in s.answers()] == ["r0", "r1", "r2"]
        assert "qkv" in s.lessons_opened()  # the other program's write is there too


def test_a_lock_released_within_the_busy_timeout_is_waited_for(tmp_path):
    path = tmp_path / "progress.sqlite3"
    _seed(path)
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO lesson_opens VALUES ('qkv', ?, ?, 1)", (STAMP, STAMP))
    release = threading.Timer(0.3, lambda: (holder.execute("COMMIT"), holder.close()))
    release.start()  # 0.3 s, well inside the 5 s busy timeout
    try:
        with open_store(path) as s:
            assert s.persistent and s.warnings == []
            assert len(s.answers()) == 3
    finally:
        release.join()


def test_a_write_while_another_program_writes_is_not_saved_and_says_so(tmp_path,
                                                                       short_busy_timeout):
    path = tmp_path / "progress.sqlite3"
    _seed(path)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # the write lock; WAL readers still read
    holder.execute("INSERT INTO lesson_opens VALUES ('qkv', ?, ?, 1)", (STAMP, STAMP))
    with open_store(path, now=lambda: T0) as s:
        assert s.persistent and s.warnings == []  # opening needs no write lock
        session = QuizSession([Item(question=MCQS[0])], store=s, mode="practice")
        session.next()
        fb = session.submit("b")
        assert fb.done and fb.correct is True and fb.saved is False
        assert "locked" in fb.error and "0.2 s" in fb.error
        assert len(s.answers()) == 3
        holder.execute("COMMIT")
        s.record_answer("later", "qkv", correct=True, rating=3)  # the lock is gone: saved
        assert len(s.answers()) == 4
    holder.close()


# ----------------------------------------------------------------------------- disk full


def test_a_full_file_refuses_the_answer_and_keeps_the_rest(tmp_path):
    path = tmp_path / "progress.sqlite3"
    _seed(path)
    with open_store(path) as s:
        written = _fill(s, response="x" * 500)
        with pytest.raises(StoreError, match="the disk is full") as err:
            s.record_answer("one-more", "qkv", correct=True, rating=3, response="x" * 500)
        assert err.value.kind == faults.FULL
    with open_store(path) as s:
        assert s.persistent and s.warnings == []  # not damaged, not moved
        assert len(s.answers()) == 3 + written
    assert not any(".damaged" in n for n in h.files(tmp_path))


def test_plain_quiz_reports_an_answer_that_did_not_fit(tmp_path):
    with open_store(tmp_path / "progress.sqlite3", now=lambda: T0) as s:
        _fill(s)
        session = QuizSession([Item(question=q) for q in MCQS[:2]], store=s, mode="practice")
        out = io.StringIO()
        summary, _ = run_lines(session, out=make_out(False, out),
                               reader=LineReader(io.StringIO("b\nb\n")), saved_to=str(s.path))
        text = out.getvalue()
        assert text.count("Warning: this answer was NOT saved (could not save progress: the "
                          "disk is full") == 2
        assert "2 answer(s) could not be saved." in text and "Progress saved in" not in text
        assert summary.unsaved == 2 and s.answers(question_id="m0") == []


async def test_tui_quiz_reports_an_answer_that_did_not_fit(monkeypatch):
    from tutor.app import StartAt, make_app
    from tutor.quiz.modes import QuizStart

    monkeypatch.setattr(bank_mod, "load_bank", lambda root=None: list(MCQS))
    options = QuizStart(mode="practice", count=1, seed=1, generated=False)
    app = make_app(StartAt("quiz", quiz=options))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        _fill(app.store)
        screen = app.screen
        screen.start()
        await pilot.pause()
        assert screen.state == "asking"
        question = screen.session.current.question_id
        await pilot.press("b", "enter")
        await pilot.pause()
        assert screen.state == "feedback" and screen.feedback.saved is False
        from tests.tui_text import widget_text

        shown = " ".join(widget_text(screen.query_one("#quiz-feedback")).split())
        assert "Not saved:" in shown and "the disk is full" in shown
        assert "Correct" in shown  # still marked, just not stored
        await pilot.press("enter")
        await pilot.pause()
        assert "1 answer(s) could not be saved" in widget_text(screen.query_one("#quiz-summary"))
        assert app.store.answers(question_id=question) == []


def _cli_quiz_under_size_limit(home: Path, limit: int, n: int = 12):
    return h.python(h.QUIZ_OF_MCQS, str(n), stdin="b\n" * n, file_size_limit=limit,
                    env={"ATTN_TUTOR_HOME": str(home)})


def test_cli_quiz_with_the_disk_filling_up(tmp_path):
    """The kernel refuses writes past RLIMIT_FSIZE (EFBIG), as a full disk would."""
    home = tmp_path / "home"
    home.mkdir()
    _seed(home / "progress.sqlite3")
    # room for the 32 KiB -shm index and a few WAL frames, not for twelve answers
    r = _cli_quiz_under_size_limit(home, limit=(32 + 40) * 1024)
    assert r.returncode == 0, r.stderr
    acknowledged = r.stdout.count("\nCorrect.")
    not_saved = r.stdout.count("this answer was NOT saved")
    assert acknowledged == 12 and 0 < not_saved < 12
    assert f"{not_saved} answer(s) could not be saved." in r.stdout
    assert "Traceback" not in r.stderr
    stored = [q for q, _ in h.answers_in(home / "progress.sqlite3")]
    assert stored[:3] == ["old0", "old1", "old2"]
    assert len(stored) == 3 + acknowledged - not_saved  # every "saved" answer is there
    assert not any(".damaged" in name for name in h.files(home))


def test_an_io_error_on_open_moves_nothing_and_still_shows_progress(tmp_path):
    """Too small a size limit even for the -shm index: opening itself fails with an I/O error."""
    home = tmp_path / "home"
    home.mkdir()
    _seed(home / "progress.sqlite3", n=4)
    before = {p.name: p.read_bytes() for p in home.iterdir()}
    env = {"ATTN_TUTOR_HOME": str(home)}
    r = h.python("from tutor.cli import main; main(['stats'])", file_size_limit=1000, env=env)
    assert r.returncode == 0 and "Due now:" in r.stdout, r.stderr
    [line] = r.stderr.splitlines()  # one line, no traceback
    assert line.startswith("attn-tutor: warning: cannot open the progress file")
    assert "the disk reported an error" in line and "nothing was moved" in line
    r = h.python("from tutor.store import open_store; s = open_store();"
                 " print(s.persistent, [a.response for a in s.answers()])",
                 file_size_limit=1000, env=env)
    assert r.stdout.split(" ", 1) == ["False", "['r0', 'r1', 'r2', 'r3']\n"], r.stderr
    # before the fix: moved aside. Now the file is as it was; SQLite's attempt may leave an
    # empty -wal and a stub -shm (its shared-memory index, rebuilt on the next open)
    assert (home / "progress.sqlite3").read_bytes() == before["progress.sqlite3"]
    assert h.files(home) <= {"progress.sqlite3", "progress.sqlite3-wal", "progress.sqlite3-shm"}
    assert Path(f"{home}/progress.sqlite3-wal").stat().st_size == 0
    with open_store(home / "progress.sqlite3") as s:  # the limit gone, all is well
        assert s.persistent and s.warnings == [] and len(s.answers()) == 4


# ----------------------------------------------------------------------------- read-only


def test_read_only_home_after_a_crash_shows_the_answers_in_the_wal(tmp_path, monkeypatch):
    path = tmp_path / "progress.sqlite3"
    h.crash_after_writing(path, 5)
    assert Path(f"{path}-wal").stat().st_size > 0
    assert h.count_ignoring_wal(path) < 5  # what the old immutable copy showed ("seen 0")
    main, wal = path.read_bytes(), Path(f"{path}-wal").read_bytes()
    monkeypatch.setattr(opening, "_writable", lambda p: False)  # root writes anywhere
    with open_store(path) as s:
        assert not s.persistent and "read-only" in s.warnings[0]
        assert [a.response for a in s.answers()] == [f"r{i}" for i in range(5)]
    assert path.read_bytes() == main and Path(f"{path}-wal").read_bytes() == wal


def test_read_snapshot_reads_the_wal_from_a_copy_when_there_is_no_shm(tmp_path):
    path = tmp_path / "progress.sqlite3"
    h.crash_after_writing(path, 4)
    Path(f"{path}-shm").unlink()  # e.g. the files were copied without it
    mem = sqlite3.connect(":memory:")
    assert opening.read_snapshot(path, mem) is None
    assert mem.execute("SELECT COUNT(*) FROM answers").fetchone()[0] == 4


SNAPSHOT_AS_USER = """
import sqlite3, sys
from pathlib import Path
from tutor.store import open_store, opening
path = Path(sys.argv[1])
mem = sqlite3.connect(":memory:")
problem = opening.read_snapshot(path, mem)
n = mem.execute("SELECT COUNT(*) FROM answers").fetchone()[0] if problem is None else -1
with open_store(path) as s:
    print(problem, n, s.persistent, len(s.answers()), s.warnings[0] if s.warnings else "")
"""


@pytest.mark.parametrize("keep_shm", [True, False], ids=["with-shm", "without-shm"])
def test_a_really_read_only_home(tmp_path, keep_shm):
    """The real thing: a folder the process cannot write (as root: without the capability that
    lets root ignore file modes), not a monkeypatched check."""
    folder = tmp_path / "home"
    folder.mkdir()
    path = folder / "progress.sqlite3"
    h.crash_after_writing(path, 6)
    if not keep_shm:
        Path(f"{path}-shm").unlink()
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    for p in folder.iterdir():
        os.chmod(p, 0o444)
    os.chmod(folder, 0o555)
    try:
        as_root = os.geteuid() == 0
        probe = h.python(f"open({str(folder / 'x')!r}, 'w')", obey_permissions=as_root)
        if "PermissionError" not in probe.stderr:
            pytest.skip(f"cannot make a read-only folder here: {probe.stderr[-200:]}")
        r = h.python(SNAPSHOT_AS_USER, str(path), obey_permissions=as_root,
                     env={"ATTN_TUTOR_HOME": str(folder)})
        assert r.returncode == 0, r.stderr
        problem, n, persistent, shown, warning = r.stdout.split(" ", 4)
        assert (problem, n, persistent, shown) == ("None", "6", "False", "6")
        assert "is read-only" in warning
        assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    finally:
        os.chmod(folder, 0o755)


# ----------------------------------------------------------------------------- lost tables


def test_lost_tables_are_created_again_and_the_rest_is_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(bank_mod, "load_bank", lambda root=None: list(MCQS))
    path = tmp_path / "progress.sqlite3"
    with open_store(path) as s:
        s.record_answer("m0", "qkv", correct=True, rating=3,
                        update_card=lambda old, at: {"due": at.isoformat()})
    con = sqlite3.connect(path)
    con.execute("DROP TABLE cards")  # drops its index too
    con.execute("DROP TABLE lesson_opens")
    con.commit()
    assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    con.close()
    with open_store(path) as s:
        [warning] = s.warnings
        assert "had lost its cards, lesson_opens tables" in warning
        assert s.persistent and s.cards() == [] and s.lessons_opened() == {}
        assert [a.question_id for a in s.answers()] == ["m0"]
        s.mark_lesson_opened("qkv")
    con = sqlite3.connect(path)
    names = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
    assert {"cards", "cards_by_due", "lesson_opens"} <= names
    con.close()
    with open_store(path) as s:
        assert s.warnings == []  # repaired once, quiet after


# ----------------------------------------------------------------------------- bad rows


def _spoil(path: Path) -> None:
    """Four rows no reader can parse, next to good ones."""
    con = sqlite3.connect(path)
    con.execute("UPDATE answers SET answered_at = 'last tuesday' WHERE question_id = 'm1'")
    con.execute("UPDATE cards SET card = 'not json' WHERE question_id = 'm2'")
    con.execute("INSERT INTO lesson_opens VALUES ('scoring', '2026-13-45', '2026-13-45', 1)")
    con.execute("INSERT INTO mock_exams (started_at, n_questions, per_topic) VALUES (?, 3, '{')",
                ("2026-03-01T10:00:00.000000+00:00",))
    con.commit()
    con.close()


def _history(path: Path) -> None:
    from tutor.quiz import scheduler as sch

    fuzzless = sch.make_scheduler(fuzzing=False)
    with open_store(path) as s:
        for q in ("m0", "m1", "m2", "m3"):
            s.record_answer(q, "qkv", correct=True, rating=3, at=T0,
                            update_card=sch.updater(q, 3, fuzzless))
        s.mark_lesson_opened("qkv", at=T0)


@pytest.mark.parametrize("args", [["stats"], ["stats", "--json"], ["lesson"],
                                  ["quiz", "--plain", "--mode", "review", "--no-generated"]],
                         ids=["stats", "stats-json", "lesson", "quiz-review"])
def test_malformed_rows_are_skipped_reported_once_and_the_rest_works(_data_home, monkeypatch,
                                                                     args):
    monkeypatch.setattr(bank_mod, "load_bank", lambda root=None: list(MCQS))
    path = _data_home / "progress.sqlite3"
    _history(path)
    _spoil(path)
    r = CliRunner().invoke(app, args, input="b\n" * 10)
    assert r.exit_code == 0, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and "Expecting value" not in r.stderr
    notices = [line for line in r.stderr.splitlines() if "unreadable row" in line]
    assert len(notices) == 1  # once, however many readers met the rows
    if args[0] == "stats":
        assert "cards 'm2': card 'not json' is not valid JSON" in notices[0]
        assert "mock_exams 1: per_topic '{' is not valid JSON" in notices[0]
        if "--json" in args:
            data = json.loads(r.stdout)
            assert data["due"]["seen"] == 4  # m2 is still seen: its answers count
            assert data["lessons_opened"].keys() == {"qkv"}  # the good lesson row stays
            assert data["mock_exams"] == []
            assert data["store"]["skipped"] == [notices[0].removeprefix("attn-tutor: warning: ")]
    elif args[0] == "lesson":
        assert "lesson_opens 'scoring'" in notices[0]
        assert "qkv" in r.stdout
    else:
        assert "Question 1/" in r.stdout and "Correct." in r.stdout


def test_an_answer_on_an_unreadable_card_is_saved_and_the_card_starts_afresh(tmp_path):
    path = tmp_path / "progress.sqlite3"
    _history(path)
    _spoil(path)
    with open_store(path) as s:
        s.record_answer("m2", "qkv", correct=True, rating=3, at=T0 + timedelta(days=1),
                        update_card=lambda old, at: {"was": old, "due": at.isoformat()})
        assert s.card("m2").card == {"was": None, "due": (T0 + timedelta(days=1)).isoformat()}
        assert len(s.answers(question_id="m2")) == 2
        assert ("cards", "m2") in s.bad_rows and len(s.take_notices()) == 1
        assert s.take_notices() == []


async def test_tui_stats_skips_malformed_rows_and_says_so(_data_home, monkeypatch):
    from tutor.app import StartAt, make_app
    from tutor.screens.stats import StatsScreen

    monkeypatch.setattr(bank_mod, "load_bank", lambda root=None: list(MCQS))
    _history(_data_home / "progress.sqlite3")
    _spoil(_data_home / "progress.sqlite3")
    app = make_app(StartAt("stats"))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, StatsScreen)
        assert app.screen.data["due"]["seen"] == 4
        messages = [n.message for n in app._notifications]
        assert sum("unreadable row" in m for m in messages) == 1


async def test_tui_quiz_start_says_when_progress_cannot_be_read(monkeypatch):
    """Once the store is open, WAL readers are never blocked by a writer (and no program can
    take the file in exclusive locking mode while we hold it open), so this read failure is
    simulated: it stands for a disk that fails a read."""
    from tutor.app import StartAt, make_app
    from tutor.quiz.modes import QuizStart
    from tutor.store import Store

    def failing(self, *a, **k):
        raise StoreError("could not read progress: the disk reported an error (disk I/O error)",
                         faults.IO)

    monkeypatch.setattr(bank_mod, "load_bank", lambda root=None: list(MCQS))
    app = make_app(StartAt("quiz", quiz=QuizStart(mode="review", generated=False)))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        monkeypatch.setattr(Store, "_read", failing)
        app.screen.start()
        await pilot.pause()
        assert app.screen.state == "setup"  # no crash: the form says why
        shown = str(app.screen.query_one("#quiz-setup-error").content)
        assert shown == "could not read progress: the disk reported an error (disk I/O error)"


def test_a_damaged_correct_value_is_neither_graded_nor_correct(tmp_path):
    """A row whose ``correct`` is not 1, 0 or NULL (an edited or damaged file) is skipped by
    the row readers; the totals leave it out too rather than count 'yes' or 7 as answers."""
    path = tmp_path / "progress.sqlite3"
    with open_store(path) as s:
        for q, ok in (("a", True), ("a", False), ("b", True)):
            s.record_answer(q, "qkv", correct=ok, rating=3, at=T0)
        s.record_answer("c", "qkv", correct=None, rating=None, at=T0)   # self-graded
        s.record_answer("a", "qkv", correct=True, rating=3, at=T0)      # spoiled below
        s.record_answer("b", "qkv", correct=True, rating=3, at=T0)      # spoiled below
    con = sqlite3.connect(path)
    last_a, last_b = (con.execute("SELECT MAX(id) FROM answers WHERE question_id = ?", (q,)).fetchone()[0]
                      for q in "ab")
    con.execute("UPDATE answers SET correct = 'yes' WHERE id = ?", (last_a,))
    con.execute("UPDATE answers SET correct = 7 WHERE id = ?", (last_b,))
    con.commit()
    con.close()
    with open_store(path) as s:
        # by hand: qkv has the graded answers a ✓, a ✗, b ✓ (c is self-graded)
        assert s.topic_accuracy() == {"qkv": (3, 2)}
        stats = s.question_stats()
        assert (stats["a"].graded, stats["a"].correct, stats["a"].answers) == (2, 1, 3)
        assert (stats["b"].graded, stats["b"].correct, stats["b"].answers) == (1, 1, 2)
        assert (stats["c"].graded, stats["c"].correct) == (0, 0)
        assert s.miss_counts() == {"a": (2, 1), "b": (1, 0), "c": (0, 0)}
        latest = s.latest_answers()                 # the last good graded answer of each
        assert latest["a"].correct is False and latest["b"].correct is True
