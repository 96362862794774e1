"""The SQLite progress store: schema, damaged files, read-only folders, two writers."""

from __future__ import annotations

import os
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from tutor import store as st
from tutor.store import opening, schema
from tutor.store import open_store

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=timezone.utc)


def _bump(old, at):
    """A stand-in scheduler: count reviews and push due one day per review."""
    n = (old or {}).get("n", 0) + 1
    return {"n": n, "due": (at + timedelta(days=n)).isoformat()}


def test_default_path_is_under_attn_tutor_home(_data_home):
    with open_store() as s:
        assert s.path == Path(_data_home) / "progress.sqlite3"
        assert s.persistent and s.warnings == []
    con = sqlite3.connect(Path(_data_home) / "progress.sqlite3")
    assert con.execute("PRAGMA user_version").fetchone()[0] == st.SCHEMA_VERSION
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con.close()


def test_answers_cards_and_reopen(tmp_path):
    path = tmp_path / "p.sqlite3"
    with open_store(path, now=lambda: T0) as s:
        s.record_answer("q1", "scoring", correct=True, rating=3, response="0.58",
                        update_card=_bump)
        s.record_answer("q1", "scoring", correct=False, rating=1, response="0.3",
                        update_card=_bump, at=T0 + timedelta(hours=1))
        s.record_answer("q2", "pooling", correct=None, rating=4, mode="review")
    with open_store(path) as s:
        a = s.answers("q1")
        assert [x.correct for x in a] == [True, False]
        assert [x.response for x in a] == ["0.58", "0.3"]
        assert a[1].answered_at == T0 + timedelta(hours=1)
        card = s.card("q1")
        assert card.card["n"] == 2 and card.reps == 2 and card.lapses == 1
        assert card.due == T0 + timedelta(hours=1, days=2)
        assert s.card("q2") is None  # no update_card → no card
        assert s.latest_answers()["q1"].correct is False
        assert "q2" not in s.latest_answers()  # self-graded: not a graded answer
        assert s.miss_counts()["q1"] == (2, 1)
        assert s.topic_accuracy() == {"scoring": (2, 1), "pooling": (0, 0)}


def test_due_cards_by_time(tmp_path):
    with open_store(tmp_path / "p.sqlite3") as s:
        s.record_answer("a", "qkv", correct=True, rating=3, at=T0, update_card=_bump)
        s.record_answer("b", "qkv", correct=True, rating=3, at=T0 + timedelta(days=3),
                        update_card=_bump)
        assert [c.question_id for c in s.due_cards(T0 + timedelta(days=1))] == ["a"]
        assert [c.question_id for c in s.due_cards(T0 + timedelta(days=5))] == ["a", "b"]
        assert s.due_cards(T0) == []


def test_daily_counts_use_local_day(tmp_path, monkeypatch):
    import time

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        with open_store(tmp_path / "p.sqlite3") as s:
            for h in (0, 1, 25):
                s.record_answer("a", "qkv", correct=True, rating=3, at=T0 + timedelta(hours=h))
            assert s.daily_counts() == {"2026-03-02": 2, "2026-03-03": 1}
            assert s.daily_counts(since=datetime(2026, 3, 3).date()) == {"2026-03-03": 1}
    finally:
        monkeypatch.undo()
        time.tzset()


def test_lessons_opened(tmp_path):
    with open_store(tmp_path / "p.sqlite3") as s:
        assert s.lessons_opened() == {}
        s.mark_lesson_opened("scoring", at=T0)
        s.mark_lesson_opened("scoring", at=T0 + timedelta(days=1))
        s.mark_lesson_opened("qkv", at=T0)
        assert s.lessons_opened() == {"scoring": T0 + timedelta(days=1), "qkv": T0}


def test_mock_exam_history(tmp_path):
    with open_store(tmp_path / "p.sqlite3") as s:
        m = s.start_mock(5, 600.0, seed=7, at=T0)
        s.record_answer("q1", "scoring", correct=True, rating=None, mode="mock", mock_id=m)
        s.finish_mock(m, answered=4, correct=3, per_topic={"scoring": [3, 5]},
                      status="timed-out", at=T0 + timedelta(minutes=10))
        [exam] = s.mock_exams()
        assert (exam.n_questions, exam.answered, exam.correct, exam.status) == (5, 4, 3, "timed-out")
        assert exam.per_topic == {"scoring": [3, 5]} and exam.seed == 7
        assert exam.finished_at - exam.started_at == timedelta(minutes=10)
        assert [a.question_id for a in s.answers(mock_id=m)] == ["q1"]


def test_naive_time_is_refused(tmp_path):
    with open_store(tmp_path / "p.sqlite3") as s, pytest.raises(ValueError):
        s.record_answer("q", "qkv", correct=True, rating=3, at=datetime(2026, 1, 1))


@pytest.mark.parametrize("content", [b"", b"this is not a database\x00\xff" * 300],
                         ids=["zero-byte", "garbage"])
def test_damaged_file_is_moved_aside(tmp_path, content):
    path = tmp_path / "progress.sqlite3"
    path.write_bytes(content)
    with open_store(path) as s:
        assert s.persistent
        assert len(s.warnings) == 1
        assert "moved to progress.sqlite3.damaged-" in s.warnings[0]
        s.record_answer("q", "qkv", correct=True, rating=3)
    aside = [p for p in tmp_path.iterdir() if ".damaged-" in p.name]
    assert len(aside) == 1 and aside[0].read_bytes() == content
    with open_store(path) as s:
        assert s.warnings == [] and len(s.answers()) == 1


def test_corrupted_pages_are_detected(tmp_path):
    path = tmp_path / "progress.sqlite3"
    with open_store(path) as s:
        for i in range(300):
            s.record_answer(f"q{i}", "qkv", correct=True, rating=3, response="x" * 200)
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    # the schema's own pages (sqlite_master spills past page 1 once it holds enough tables)
    # come before the first row of data: trash only pages after them
    first = con.execute("SELECT MAX(rootpage) FROM sqlite_master").fetchone()[0] + 2
    con.close()
    data = bytearray(path.read_bytes())
    page = 4096
    for off in range(first * page, len(data) - page, 3 * page):  # trash pages past the schema
        data[off:off + 64] = b"\xde\xad\xbe\xef" * 16
    path.write_bytes(bytes(data))
    with open_store(path) as s:
        [warning] = s.warnings
        assert "is damaged" in warning and "moved to progress.sqlite3.damaged-" in warning
        got = [(a.question_id, a.response) for a in s.answers()]
    # the rows on undamaged pages were copied into the fresh file, exactly as written; the
    # trashed pages held the rest, so some (not all) answers come back
    assert 0 < len(got) < 300
    assert set(got) <= {(f"q{i}", "x" * 200) for i in range(300)}
    assert f"copied into it ({len(got)} answers)" in warning
    [aside] = [p for p in tmp_path.iterdir() if p.name.startswith("progress.sqlite3.damaged-")
               and not p.name.endswith(("-wal", "-shm"))]
    assert aside.read_bytes() == bytes(data)  # the damaged file itself is kept, untouched


def test_read_only_folder_gives_memory_store_with_old_progress(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    with open_store(folder / "progress.sqlite3") as s:
        s.record_answer("old", "qkv", correct=True, rating=3)
    os.chmod(folder, 0o500)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running as a user who can write to read-only folders (root)")
        with open_store(folder / "progress.sqlite3") as s:
            assert not s.persistent
            assert "read-only" in s.warnings[0]
            assert [a.question_id for a in s.answers()] == ["old"]
            s.record_answer("new", "qkv", correct=False, rating=1)  # works, but in memory
            assert len(s.answers()) == 2
    finally:
        os.chmod(folder, 0o700)
    with open_store(folder / "progress.sqlite3") as s:
        assert [a.question_id for a in s.answers()] == ["old"]


def test_unwritable_new_folder(tmp_path):
    parent = tmp_path / "locked"
    parent.mkdir()
    os.chmod(parent, 0o500)
    try:
        if os.access(parent, os.W_OK):
            pytest.skip("running as root")
        with open_store(parent / "sub" / "progress.sqlite3") as s:
            assert not s.persistent and "will not be saved" in s.warnings[0]
            s.record_answer("q", "qkv", correct=True, rating=3)
    finally:
        os.chmod(parent, 0o700)


def test_newer_schema_is_left_alone(tmp_path):
    path = tmp_path / "progress.sqlite3"
    with open_store(path) as s:
        s.record_answer("q", "qkv", correct=True, rating=3)
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA user_version = {st.SCHEMA_VERSION + 1}")
    con.commit()
    con.close()
    with open_store(path) as s:
        assert not s.persistent and "newer attn-tutor" in s.warnings[0]
        s.record_answer("q2", "qkv", correct=True, rating=3)
    con = sqlite3.connect(path)
    assert con.execute("SELECT COUNT(*) FROM answers").fetchone()[0] == 1
    assert con.execute("PRAGMA user_version").fetchone()[0] == st.SCHEMA_VERSION + 1
    con.close()


def test_two_writers_keep_every_answer(tmp_path):
    path = tmp_path / "progress.sqlite3"
    a, b = open_store(path), open_store(path)
    try:
        for i in range(20):
            a.record_answer("shared", "qkv", correct=True, rating=3, response=f"a{i}",
                            update_card=_bump)
            b.record_answer("shared", "qkv", correct=False, rating=1, response=f"b{i}",
                            update_card=_bump)
            b.record_answer(f"b-only-{i}", "pooling", correct=True, rating=3)
        for s in (a, b):
            got = [x.response for x in s.answers("shared")]
            assert got == [f"{w}{i}" for i in range(20) for w in "ab"]
            assert len(s.answers()) == 60
            # every read-modify-write saw the other copy's update: no lost card updates
            assert s.card("shared").card["n"] == 40 and s.card("shared").reps == 40
    finally:
        a.close()
        b.close()


def test_two_writer_threads(tmp_path):
    import threading

    path = tmp_path / "progress.sqlite3"
    open_store(path).close()

    def work(tag):
        with open_store(path) as s:
            for i in range(25):
                s.record_answer("shared", "qkv", correct=True, rating=3, response=f"{tag}{i}",
                                update_card=_bump)

    threads = [threading.Thread(target=work, args=(t,)) for t in "xy"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with open_store(path) as s:
        assert len(s.answers("shared")) == 50
        assert s.card("shared").card["n"] == 50


def test_migration_upgrades_an_old_file(tmp_path, monkeypatch):
    path = tmp_path / "progress.sqlite3"
    with open_store(path) as s:
        s.record_answer("q", "qkv", correct=True, rating=3)
    extra = "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); -- v2 for the test\n"
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS + (extra,))
    monkeypatch.setattr(schema, "SCHEMA_VERSION", schema.SCHEMA_VERSION + 1)
    with open_store(path) as s:
        assert s.warnings == [] and len(s.answers()) == 1
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
    con.execute("SELECT * FROM notes")
    con.close()


def test_read_only_fallback_logic_without_chmod(tmp_path, monkeypatch):
    """The same fallback as the chmod test, forced, so it also runs where root can write."""
    path = tmp_path / "progress.sqlite3"
    with open_store(path) as s:
        s.record_answer("old", "qkv", correct=True, rating=3)
    monkeypatch.setattr(opening, "_writable", lambda p: False)
    with open_store(path) as s:
        assert not s.persistent and "read-only" in s.warnings[0]
        assert [a.question_id for a in s.answers()] == ["old"]
        s.record_answer("new", "qkv", correct=True, rating=3)
    monkeypatch.undo()
    with open_store(path) as s:
        assert [a.question_id for a in s.answers()] == ["old"]


def test_sqlite_failure_on_open_falls_back(tmp_path, monkeypatch):
    def boom(path):
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(opening, "_create", boom)
    with open_store(tmp_path / "progress.sqlite3") as s:
        assert not s.persistent and "readonly database" in s.warnings[0]
        s.record_answer("q", "qkv", correct=True, rating=3)
        assert len(s.answers()) == 1


def test_papers_table_is_migrated_in_and_keeps_every_part(tmp_path):
    from datetime import datetime, timezone

    from tutor.store import papers as pp

    at = datetime(2027, 2, 1, 10, 0, tzinfo=timezone.utc)
    path = tmp_path / "p.sqlite3"
    with open_store(path) as store:
        pid = pp.start_paper(store, 2700.0, 5, at=at)
        pp.record_part(store, pid, "xq-encoder-run", "a", "encoder-decoder", variant=9,
                       status="wrong", earned=0, marks=2, response="0, 0", at=at)
        pp.record_part(store, pid, "xq-encoder-run", "b", "encoder-decoder", variant=9,
                       status="follow-through", earned=2, marks=3, at=at)
        pp.record_part(store, pid, "xq-sampling-sets", "e", "decoding", variant=1,
                       status="self-marked", earned=3, marks=3, at=at)
    with open_store(path) as store:  # reopened: everything committed part by part
        (paper,) = pp.papers(store)
        assert paper.status == "running" and (paper.earned, paper.marks) == (5, 8)
        assert paper.by_topic() == {"encoder-decoder": [2, 5], "decoding": [3, 3]}
        pp.finish_paper(store, pid, "timed-out", at=at)
        assert pp.papers(store)[0].status == "timed-out"
        assert pp.attempted_questions(store) == {"xq-encoder-run", "xq-sampling-sets"}
        assert store.cards() == []  # papers leave the schedule alone
        assert pp.get_setting(store, "exam", "none") == "none"
        pp.set_setting(store, "exam", {"date": "2027-06-01", "minutes": 60})
    with open_store(path) as store:
        assert pp.get_setting(store, "exam") == {"date": "2027-06-01", "minutes": 60}


def test_a_version_1_store_gains_the_papers_tables_and_keeps_its_answers(tmp_path):
    path = tmp_path / "v1.sqlite3"
    con = sqlite3.connect(path)
    for statement in schema._statements(schema.MIGRATIONS[0]):
        con.execute(statement)
    con.execute("PRAGMA user_version = 1")
    con.execute("INSERT INTO answers (question_id, topic, mode, correct, answered_at, day)"
                " VALUES ('q1', 'qkv', 'practice', 1, '2027-01-01T00:00:00.000000+00:00', '2027-01-01')")
    con.commit()
    con.close()
    with open_store(path) as store:
        assert not store.warnings and len(store.answers()) == 1
        from tutor.store import papers as pp
        assert pp.papers(store) == [] and pp.attempted_questions(store) == set()
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION


def test_a_malformed_paper_row_is_skipped_and_noted(tmp_path):
    from tutor.store import papers as pp

    path = tmp_path / "p.sqlite3"
    with open_store(path) as store:
        good = pp.start_paper(store, None, 1)
        pp.record_part(store, good, "xq-a", "a", "qkv", variant=1, status="right", earned=2, marks=2)
        bad = pp.start_paper(store, None, 2)
    con = sqlite3.connect(path)
    con.execute("UPDATE papers SET started_at = 'yesterday' WHERE id = ?", (bad,))
    con.execute("INSERT INTO paper_parts (paper_id, question_id, part, topic, status, earned, marks,"
                " answered_at) VALUES (?, 'xq-b', 'a', 'qkv', 'right', 5, 2, '2027-01-01T00:00:00+00:00')",
                (good,))  # earned > marks
    con.commit()
    con.close()
    with open_store(path) as store:
        (rec,) = pp.papers(store)
        assert rec.id == good and (rec.earned, rec.marks) == (2, 2)
        note = str(store.bad_rows)
        assert "started_at 'yesterday'" in note and "earned 5" in note
