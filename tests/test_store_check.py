"""`attn-tutor check`: what it finds in a progress file and how it repairs it."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tutor.cli import app
from tutor.quiz import scheduler as sch
from tutor.store import core, open_store, opening
from tutor.store.check import check_store, render_text

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=timezone.utc)


def _iso(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")


def _check(path: Path, **kw):
    return check_store(path, now=lambda: T0, rebuild_card=sch.replay,
                       valid_card=lambda c: sch.load_card(c) is not None, **kw)


def _dump(path: Path) -> list[str]:
    con = sqlite3.connect(path)
    try:
        return list(con.iterdump())
    finally:
        con.close()


def _rows(path: Path, sql: str, params: tuple = ()) -> list[tuple]:
    con = sqlite3.connect(path)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


@pytest.fixture
def spoiled(tmp_path) -> Path:
    """A file with one of each problem, next to good rows."""
    path = tmp_path / "progress.sqlite3"
    fuzzless = sch.make_scheduler(fuzzing=False)
    with open_store(path) as s:
        for q in ("good", "no-json", "not-fsrs"):  # one Good review each at T0
            s.record_answer(q, "qkv", correct=True, rating=3, at=T0,
                            update_card=sch.updater(q, 3, fuzzless))
        s.record_answer("bad-date", "qkv", correct=False, rating=1, at=T0)
        stuck = s.start_mock(4, 600.0, seed=1, at=T0 - timedelta(hours=3))
        s.record_answer("m1", "qkv", correct=True, rating=None, mode="mock", mock_id=stuck,
                        at=T0 - timedelta(hours=3) + timedelta(minutes=1))
        s.record_answer("m2", "scoring", correct=False, rating=None, mode="mock",
                        mock_id=stuck, at=T0 - timedelta(hours=3) + timedelta(minutes=2))
        live = s.start_mock(4, 3600.0, seed=2, at=T0 - timedelta(minutes=10))
        s.record_answer("m3", "qkv", correct=True, rating=None, mode="mock", mock_id=live,
                        at=T0 - timedelta(minutes=9))
        s.mark_lesson_opened("qkv", at=T0)
    con = sqlite3.connect(path)
    con.execute("PRAGMA foreign_keys = OFF")
    con.execute("UPDATE answers SET answered_at = 'last tuesday' WHERE question_id = 'bad-date'")
    con.execute("UPDATE cards SET card = 'not json' WHERE question_id = 'no-json'")
    con.execute("UPDATE cards SET card = ? WHERE question_id = 'not-fsrs'",
                (json.dumps({"due": _iso(T0)}),))
    con.execute("INSERT INTO cards VALUES ('no-history', 'qkv', '[1]', ?, 1, 0, ?)",
                (_iso(T0), _iso(T0)))
    con.execute("UPDATE mock_exams SET per_topic = '{' WHERE id = ?", (live,))
    con.execute("INSERT INTO answers (question_id, topic, mode, correct, response, answered_at,"
                " day, mock_id) VALUES ('m9', 'qkv', 'mock', 1, 'a', ?, '2026-03-02', 99)",
                (_iso(T0),))
    con.execute("DROP TABLE lesson_opens")
    con.commit()
    con.close()
    return path


def test_each_problem_is_found_and_repaired(spoiled):
    report = _check(spoiled)
    found = {(p.kind, p.where): p for p in report.problems}
    assert set(found) == {
        ("lost-table", "lesson_opens"),
        ("bad-row", "answers 4"),
        ("bad-row", "cards 'no-json'"), ("bad-row", "cards 'not-fsrs'"),
        ("bad-row", "cards 'no-history'"),
        ("bad-row", "mock_exams 2"),
        ("stuck-mock", "mock_exams 1"),
        ("orphan", "answers 8"),
    }
    assert report.unfixed == [] and report.repaired and report.integrity == "ok"

    # the answer with no readable time: moved aside whole, not deleted
    [(table, key, row_json, reason)] = _rows(
        spoiled, "SELECT table_name, row_key, row_json, reason FROM set_aside"
        " WHERE table_name = 'answers'")
    assert (table, key) == ("answers", "4") and "answered_at 'last tuesday'" in reason
    row = json.loads(row_json)
    assert (row["question_id"], row["correct"], row["answered_at"]) == ("bad-date", 0,
                                                                         "last tuesday")
    assert _rows(spoiled, "SELECT COUNT(*) FROM answers WHERE question_id = 'bad-date'") == [(0,)]

    # cards with a history are rebuilt from it: one Good on a new card → the 10-minute step
    for q in ("no-json", "not-fsrs"):
        assert found[("bad-row", f"cards {q!r}")].fixed == "rebuilt from its 1 answer"
        [(card, due, reps, lapses)] = _rows(
            spoiled, "SELECT card, due, reps, lapses FROM cards WHERE question_id = ?", (q,))
        assert datetime.fromisoformat(due) == T0 + timedelta(minutes=10)
        assert (reps, lapses) == (1, 0) and sch.load_card(json.loads(card)) is not None
    # without one, set aside: the question is asked as new
    assert _rows(spoiled, "SELECT COUNT(*) FROM cards WHERE question_id = 'no-history'") == [(0,)]
    assert "asked as new" in found[("bad-row", "cards 'no-history'")].fixed

    # the killed mock exam is closed from its two answers (1 right); the live one only gets
    # its per_topic recounted: 1 answer, right, in qkv
    exams = {r[0]: r[1:] for r in _rows(
        spoiled, "SELECT id, status, answered, correct, per_topic, finished_at FROM mock_exams")}
    assert exams[1][:4] == ("stopped", 2, 1, json.dumps({"qkv": [1, 1], "scoring": [0, 1]}))
    assert datetime.fromisoformat(exams[1][4]) == T0 - timedelta(hours=3) + timedelta(minutes=2)
    assert exams[2][:4] == ("running", 0, 0, json.dumps({"qkv": [1, 1]}))

    # the orphan keeps its answer, loses the link
    assert _rows(spoiled, "SELECT mock_id FROM answers WHERE question_id = 'm9'") == [(None,)]
    # and everything reads cleanly now (at T0, when the second mock exam is still going)
    with open_store(spoiled, now=lambda: T0) as s:
        s.answers(), s.cards(), s.mock_exams(), s.lessons_opened()
        assert s.bad_rows == {} and s.warnings == []
    assert _check(spoiled).problems == []


def test_dry_run_changes_nothing(spoiled):
    before = _dump(spoiled)
    report = _check(spoiled, repair=False)
    assert len(report.problems) == 8 and len(report.unfixed) == 8 and not report.repaired
    assert _dump(spoiled) == before
    assert "nothing repaired" in "\n".join(render_text(report))


def test_read_only_file_is_reported_not_repaired(spoiled, monkeypatch):
    before = _dump(spoiled)
    monkeypatch.setattr(opening, "_writable", lambda p: False)
    report = _check(spoiled)
    assert len(report.unfixed) == 8 and "read-only: nothing was repaired" in report.note
    assert _dump(spoiled) == before


def test_a_damaged_file_is_kept_and_its_readable_rows_copied(tmp_path):
    path = tmp_path / "progress.sqlite3"
    with open_store(path) as s:
        for i in range(300):
            s.record_answer(f"q{i}", "qkv", correct=True, rating=3, response="x" * 200)
    con = sqlite3.connect(path)  # trash only pages past the schema's own (sqlite_master spills
    first = con.execute("SELECT MAX(rootpage) FROM sqlite_master").fetchone()[0] + 2  # past page 1)
    con.close()
    data = bytearray(path.read_bytes())
    for off in range(first * 4096, len(data) - 4096, 3 * 4096):
        data[off:off + 64] = b"\xde\xad\xbe\xef" * 16
    path.write_bytes(bytes(data))
    report = _check(path)
    [problem] = report.problems
    assert problem.kind == "damaged" and report.integrity != "ok"
    n = report.counts["answers"]
    assert 0 < n < 300 and f"{n} answers copied into a fresh file" in problem.fixed
    aside = tmp_path / problem.fixed.split("moved to ", 1)[1].split(" ", 1)[0]
    assert aside.read_bytes() == bytes(data)
    with open_store(path) as s:
        assert s.warnings == [] and len(s.answers()) == n


def test_no_file_and_a_healthy_file(tmp_path):
    report = _check(tmp_path / "progress.sqlite3")
    assert not report.exists and report.problems == []
    assert not (tmp_path / "progress.sqlite3").exists()  # checking creates nothing
    with open_store(tmp_path / "progress.sqlite3") as s:
        s.record_answer("q", "qkv", correct=True, rating=3, at=T0)
        s.mark_lesson_opened("qkv", at=T0)
    report = _check(tmp_path / "progress.sqlite3")
    assert report.problems == [] and report.counts == {
        "answers": 1, "cards": 0, "lesson_opens": 1, "mock_exams": 0, "papers": 0,
        "paper_parts": 0, "settings": 0, "practice_steps": 0, "practice_levels": 0}
    assert render_text(report)[-1] == "No problems found."
    assert "(1 answer, 0 cards, 1 lesson opened, 0 mock exams," in render_text(report)[0]


def test_cli_text_json_and_exit_codes(spoiled, _data_home):
    target = _data_home / "progress.sqlite3"
    target.write_bytes(spoiled.read_bytes())
    runner = CliRunner()
    r = runner.invoke(app, ["check", "--dry-run"])
    # by the real clock (after T0) the second mock exam is long past its hour too: 9 problems
    assert r.exit_code == 1 and "Found 9 problems; nothing repaired:" in r.stdout
    assert "  cards 'no-json': card 'not json' is not valid JSON" in r.stdout
    r = runner.invoke(app, ["check", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert set(data) == {"schema", "path", "exists", "integrity", "repaired", "counts",
                         "problems", "note"}
    assert data["schema"] == 1 and data["repaired"] is True and len(data["problems"]) == 9
    assert all(set(p) == {"kind", "where", "found", "fixed"} and p["fixed"]
               for p in data["problems"])
    r = runner.invoke(app, ["check"])
    assert r.exit_code == 0 and r.stdout.splitlines()[-1] == "No problems found."


def test_cli_on_a_locked_file_is_one_line(_data_home, monkeypatch):
    monkeypatch.setattr(core, "BUSY_TIMEOUT_MS", 200)
    path = _data_home / "progress.sqlite3"
    open_store(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("DELETE FROM answers")
    try:
        r = CliRunner().invoke(app, ["check"])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert r.exit_code == 1 and r.stdout == ""
    assert r.stderr == ("attn-tutor: error: cannot check the progress file: another program is "
                        "holding the progress file locked (still busy after 0.2 s)\n")
    assert {p.name for p in _data_home.iterdir()} <= {
        "progress.sqlite3", "progress.sqlite3-wal", "progress.sqlite3-shm"}


def test_a_really_read_only_file_is_checked_from_a_copy(spoiled):
    """In a folder this process cannot write (root without CAP_DAC_OVERRIDE), after a crash."""
    import os

    import store_helpers as h

    folder = spoiled.parent
    before = _dump(spoiled)
    for p in folder.iterdir():
        os.chmod(p, 0o444)
    os.chmod(folder, 0o555)
    try:
        code = ("import json, sys; from tutor.store.check import check_store;"
                " from tutor.quiz import scheduler as sch;"
                " r = check_store(sys.argv[1], rebuild_card=sch.replay,"
                " valid_card=lambda c: sch.load_card(c) is not None);"
                " print(json.dumps([len(r.problems), len(r.unfixed), r.repaired, r.note]))")
        r = h.python(code, str(spoiled), obey_permissions=os.geteuid() == 0)
    finally:
        os.chmod(folder, 0o755)
    assert r.returncode == 0, r.stderr
    # by the real clock both mock exams are stuck: the 8 problems of the fixture plus one
    assert json.loads(r.stdout) == [9, 9, False,
                                    "the progress file is read-only: nothing was repaired"]
    assert _dump(spoiled) == before
