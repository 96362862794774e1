"""Practice in the progress store: migration 4, each answer its own row, levels, the FSRS
item of a trace, a malformed row skipped by readers and set aside by `check`."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone

from tutor.store import open_store, schema
from tutor.store import practice as stored
from tutor.store.check import check_store

T0 = datetime(2027, 3, 1, 9, 0, tzinfo=timezone.utc)


def test_a_version_2_store_gains_the_practice_tables_and_keeps_its_answers(tmp_path):
    path = tmp_path / "v2.sqlite3"
    con = sqlite3.connect(path)
    for script in schema.MIGRATIONS[:2]:
        for statement in schema._statements(script):
            con.execute(statement)
    con.execute("PRAGMA user_version = 2")
    con.execute("INSERT INTO answers (question_id, topic, mode, correct, answered_at, day)"
                " VALUES ('q1', 'qkv', 'practice', 1, '2027-01-01T00:00:00.000000+00:00', '2027-01-01')")
    con.commit()
    con.close()
    with open_store(path) as store:
        assert not store.warnings and len(store.answers()) == 1
        assert stored.steps(store) == [] and stored.levels(store) == {}
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION >= 3
    con.close()


def test_steps_and_levels_round_trip(tmp_path):
    with open_store(tmp_path / "p.sqlite3", now=lambda: T0) as store:
        stored.record_step(store, session="s1", trace="qkv", level=2, seed=None, step=6,
                           name="weights", answer="0.64, 0.18, 0.18", correct=False, attempts=3,
                           hints=1, diagnoses=["repeated-term-once", "no-scale+rounded-intermediates"])
        stored.record_step(store, session="s1", trace="qkv", level=2, seed=None, step=6,
                           name="why", answer="Over the keys", correct=True)
        [a, b] = stored.steps(store, "qkv")
        assert (a.name, a.correct, a.attempts, a.hints) == ("weights", False, 3, 1)
        assert a.diagnoses == ("repeated-term-once", "no-scale+rounded-intermediates")
        assert b.name == "why" and b.correct and a.answered_at == T0
        stored.save_level(store, "qkv", 3)  # --level: set, not a practice
        stored.save_level(store, "qkv", 4, finished=True, clean=True)
        stored.save_level(store, "qkv", 3, finished=True, clean=False)
        record = stored.level_of(store, "qkv")
        assert (record.level, record.practices, record.clean) == (3, 2, 1)
        assert stored.level_of(store, "scores") is None
    assert stored.item_id("qkv") == "practice:qkv" and stored.trace_of("practice:qkv") == "qkv"
    assert stored.trace_of("q-mcq") is None


def test_a_malformed_row_is_skipped_and_check_sets_it_aside(tmp_path):
    path = tmp_path / "p.sqlite3"
    with open_store(path) as store:
        stored.record_step(store, session="s", trace="qkv", level=1, seed=3, step=7,
                           name="output", answer="x", correct=True)
        stored.save_level(store, "qkv", 1)
    con = sqlite3.connect(path)
    con.execute("INSERT INTO practice_steps (session, trace, level, step, name, correct,"
                " diagnoses, answered_at) VALUES ('s', 'qkv', 1, 0, 'A', 1, 'not json', 'soon')")
    con.execute("UPDATE practice_levels SET clean = 9")
    con.commit()
    con.close()
    with open_store(path) as store:
        assert len(stored.steps(store)) == 1 and stored.levels(store) == {}
        [notice] = store.take_notices()
        assert "practice_steps" in notice and "practice_levels 'qkv'" in notice
    report = check_store(path, repair=True)
    assert {p.where.split()[0] for p in report.problems} == {"practice_steps", "practice_levels"}
    assert report.counts["practice_steps"] == 1 and report.counts["practice_levels"] == 0
