"""Issue 34 §4, the progress store under real faults: a truncated file, papers left running by
kill -9, a setting no reader accepts, a dry run that must write nothing, and warnings that
name what is wrong (a read-only file, a folder where the file should be)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

import store_helpers as h
from tutor.cli import app
from tutor.store import open_store
from tutor.store.check import check_store, render_text
from tutor.store.papers import papers, record_part, start_paper

PAGE = 4096
CUT = 18 * PAGE
"""The first eighteen pages are kept. The audit cut at 40960 bytes (ten pages); since the
practice and class tables joined the schema, ``sqlite_master`` fills page 1 and spills onto
pages 17-18 of a fresh store, and a cut inside the schema's own pages leaves SQLite nothing it
can read (that case is ``test_nothing_readable_says_where_the_file_is_kept``). Cutting just
past the schema keeps the audit's point: every table wholly before the cut comes back."""

ACTIVITY = """
import sys
from tutor.store import open_store
from tutor.store.papers import record_part, set_setting, start_paper
from tutor.quiz import scheduler as sch
s = open_store(sys.argv[1])
fuzzless = sch.make_scheduler(fuzzing=False)
for i in range(30):
    q = f"q{i % 40}"
    s.record_answer(q, "qkv", correct=i % 3 != 0, rating=3, response=f"answer {i}",
                    update_card=sch.updater(q, 3, fuzzless))
for lesson in ("qkv", "scoring", "decoding"):
    s.mark_lesson_opened(lesson)
s.start_mock(3, 600.0, seed=1)
p = start_paper(s, 2700.0, 0)
record_part(s, p, "xq-a", "a", "qkv", variant=0, status="right", earned=2, marks=2,
            response="1.5")
set_setting(s, "exam", {"date": "2027-01-05", "minutes": 60})
s.close()
"""
TABLES = ("answers", "cards", "lesson_opens", "mock_exams", "papers", "paper_parts", "settings")


def _rows(path: Path, table: str) -> list[tuple]:
    con = sqlite3.connect(path)
    try:
        return con.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
    finally:
        con.close()


def _whole_before_the_cut(data: bytes, path: Path) -> dict[str, bool]:
    """Per table: does all of it sit on its root page, before the cut? Read from the file's
    own bytes (the root page numbers of ``sqlite_master``; page type 0x0D is a table leaf,
    the whole table on one page), not from the salvage code."""
    con = sqlite3.connect(path)
    roots = dict(con.execute("SELECT name, rootpage FROM sqlite_master WHERE type = 'table'"))
    con.close()
    return {t: roots[t] * PAGE <= CUT and data[(roots[t] - 1) * PAGE] == 0x0D for t in TABLES}


def test_a_truncated_file_keeps_every_row_before_the_cut(tmp_path):
    path = tmp_path / "progress.sqlite3"
    r = h.python(ACTIVITY, str(path))
    assert r.returncode == 0, r.stderr
    data = path.read_bytes()
    assert len(data) > CUT
    whole = _whole_before_the_cut(data, path)
    before = {t: _rows(path, t) for t in TABLES}
    assert whole["answers"] and whole["lesson_opens"] and whole["mock_exams"]  # the fixture
    con = sqlite3.connect(path)
    cut_off = [t for t, root in con.execute("SELECT name, rootpage FROM sqlite_master "
                                            "WHERE type = 'table'") if root * PAGE > CUT]
    con.close()
    assert cut_off                                                            # cuts some off

    os.truncate(path, CUT)  # as `truncate -s 73728 progress.sqlite3`
    with open_store(path) as s:
        [warning] = s.warnings
        aside = next(p for p in tmp_path.iterdir() if ".damaged-" in p.name)
        assert aside.read_bytes() == data[:CUT]  # kept as it was
        for table in TABLES:
            if whole[table]:  # before the fix: nothing at all ("no rows copied")
                assert _rows(path, table) == before[table], table
        assert len(s.answers()) == 30 and set(s.lessons_opened()) == {"qkv", "scoring", "decoding"}
    assert "is damaged" in warning and f"moved to {aside.name}" in warning
    assert "30 answers" in warning and "3 lessons opened" in warning and "1 mock exam" in warning
    assert f"anything else stays in {aside}" in warning  # where the rest is


def test_check_on_a_truncated_file_copies_what_it_can_and_says_where_the_rest_is(tmp_path):
    path = tmp_path / "progress.sqlite3"
    assert h.python(ACTIVITY, str(path)).returncode == 0
    os.truncate(path, CUT)
    report = check_store(path)
    [problem] = report.problems
    aside = next(p for p in tmp_path.iterdir() if ".damaged-" in p.name)
    assert problem.kind == "damaged" and "no rows" not in problem.fixed
    assert "30 answers" in problem.fixed and f"anything else stays in {aside}" in problem.fixed
    assert report.counts["answers"] == 30


def test_nothing_readable_says_where_the_file_is_kept(tmp_path):
    path = tmp_path / "progress.sqlite3"
    path.write_bytes(b"SQLite format 3\0" + b"\xff" * 8000)
    with open_store(path) as s:
        [warning] = s.warnings
    aside = next(p for p in tmp_path.iterdir() if ".damaged-" in p.name)
    assert f"nothing in it could be read, and it is kept as {aside}" in warning


# ----------------------------------------------------------------- papers left running

PAPER_AND_DIE = """
import os, signal, sys
from tutor.store import open_store
from tutor.store.papers import record_part, start_paper
s = open_store(sys.argv[1])
p = start_paper(s, 2700.0, 7)
record_part(s, p, "xq-a", "a", "qkv", variant=0, status="right", earned=2, marks=3)
print("sat", flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # as the audit's kill -9 in the middle of a paper
"""


def _now_plus(hours: float):
    return lambda: datetime.now(timezone.utc) + timedelta(hours=hours)


def test_papers_killed_mid_way_are_closed_when_the_store_next_opens(tmp_path):
    path = tmp_path / "progress.sqlite3"
    for _ in range(3):
        r = h.python(PAPER_AND_DIE, str(path))
        assert r.returncode == -signal.SIGKILL and "sat" in r.stdout, r.stderr
    with open_store(path) as s:  # within its 45 minutes: it may still be going elsewhere
        assert [p.status for p in papers(s)] == ["running"] * 3 and s.warnings == []
    with open_store(path, now=_now_plus(0.75 + 1.01)) as s:  # an hour past its limit
        assert [p.status for p in papers(s)] == ["stopped"] * 3
        assert [(p.earned, p.marks) for p in papers(s)] == [(2, 3)] * 3  # marks kept
        [warning] = s.warnings
        assert warning.startswith("closed 3 papers left running")
    with open_store(path, now=_now_plus(2)) as s:
        assert s.warnings == []  # closed once


def test_check_finds_and_closes_a_stuck_paper(tmp_path):
    path = tmp_path / "progress.sqlite3"
    t0 = datetime(2026, 3, 2, 12, 0, tzinfo=timezone.utc)
    with open_store(path, now=lambda: t0) as s:
        stuck = start_paper(s, 600.0, 1, at=t0)
        record_part(s, stuck, "xq-a", "a", "qkv", variant=0, status="wrong", earned=0, marks=2,
                    at=t0 + timedelta(minutes=3))
        live = start_paper(s, None, 2, at=t0 + timedelta(hours=2))  # untimed, 30 minutes old
    later = t0 + timedelta(hours=2, minutes=30)
    dry = check_store(path, repair=False, now=lambda: later)
    assert [(p.kind, p.where, p.fixed) for p in dry.problems] == [
        ("stuck-paper", f"papers {stuck}", None)]
    report = check_store(path, now=lambda: later)
    [problem] = report.problems
    assert problem.fixed == "closed as stopped: 1 part saved, 0 of 2 marks"
    with open_store(path, now=lambda: later) as s:
        status = {p.id: (p.status, p.finished_at) for p in papers(s)}
    assert status[stuck] == ("stopped", t0 + timedelta(minutes=3))  # its last saved part
    assert status[live] == ("running", None)


def test_a_real_paper_killed_with_kill_9_is_closed(tmp_path):
    """`attn-tutor paper --plain`, killed after its first answer, as the audit did."""
    home = tmp_path / "home"
    env = {**os.environ, "ATTN_TUTOR_HOME": str(home)}
    proc = subprocess.Popen([sys.executable, "-c", "from tutor.cli import main; main()", "paper",
                             "--plain", "-n", "1", "--seed", "3"], cwd=h.REPO, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # wait for the paper's row: it has started
            if (home / "progress.sqlite3").exists():
                with open_store(home / "progress.sqlite3") as s:
                    if papers(s):
                        break
            time.sleep(0.05)
        proc.kill()
        proc.wait(timeout=30)
    finally:
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()
    with open_store(home / "progress.sqlite3") as s:
        assert [p.status for p in papers(s)] == ["running"]
    with open_store(home / "progress.sqlite3", now=_now_plus(3)) as s:
        assert [p.status for p in papers(s)] == ["stopped"]


# ----------------------------------------------------------------- settings

@pytest.mark.parametrize("value", [
    '{"date": "2027-01-05", "minutes": Infinity}', '{"date": "2027-01-05", "minutes": NaN}',
    '{"date": "2027-01-05", "minutes": 1e999}', '{"date": "2027-01-05", "minutes": 5}',
    '{"date": "2027-01-05", "minutes": "60"}', '{"date": "2027-01-05", "minutes": true}',
    '{"date": "tomorrow", "minutes": 60}', '{"minutes": 60}', '[1, 2]', '"exam"'])
def test_a_bad_stored_setting_is_skipped_found_by_check_and_set_aside(_data_home, value):
    path = _data_home / "progress.sqlite3"
    open_store(path).close()
    con = sqlite3.connect(path)
    con.execute("INSERT INTO settings VALUES ('exam', ?)", (value,))
    con.commit()
    con.close()
    runner = CliRunner()
    r = runner.invoke(app, ["plan"])  # before: OverflowError on int(inf) — a crash
    assert r.exit_code == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert lines[-1] == "attn-tutor: error: no exam date yet: attn-tutor plan --exam YYYY-MM-DD"
    assert "settings 'exam'" in lines[0] and "attn-tutor check" in lines[0]
    r = runner.invoke(app, ["check", "--dry-run"])  # before: "No problems found."
    assert r.exit_code == 1 and "settings 'exam': value" in r.stdout, r.stdout
    r = runner.invoke(app, ["check"])
    assert r.exit_code == 0 and "moved to the set_aside table" in r.stdout
    con = sqlite3.connect(path)
    assert con.execute("SELECT row_json FROM set_aside").fetchone()[0] == json.dumps(
        {"key": "exam", "value": value})
    con.close()
    r = runner.invoke(app, ["plan", "--exam", "2099-01-01", "--today", "2098-12-01"])
    assert r.exit_code == 0 and r.stderr == ""


def test_a_good_setting_reads_back():
    from tutor.store.paper_rows import parse_setting

    row = {"key": "exam", "value": '{"date": "2027-01-05", "minutes": 600}'}
    assert parse_setting(row) == ("exam", {"date": "2027-01-05", "minutes": 600})
    assert parse_setting({"key": "other", "value": "[1]"}) == ("other", [1])


# ----------------------------------------------------------------- check --dry-run

def _state(folder: Path) -> dict[str, tuple]:
    """Every file in ``folder``: size, modification time and a hash of its bytes."""
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns,
                     hashlib.sha256(p.read_bytes()).hexdigest()) for p in folder.iterdir()}


def _crashed(path: Path) -> None:
    h.crash_after_writing(path, 5)  # answers left in the -wal, as after a crash


def _healthy(path: Path) -> None:
    with open_store(path) as s:
        s.record_answer("q", "qkv", correct=True, rating=3)


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _truncated(path: Path) -> None:
    assert h.python(ACTIVITY, str(path)).returncode == 0
    os.truncate(path, CUT)


@pytest.mark.parametrize("make", [_healthy, _crashed, _empty, _truncated])
def test_dry_run_writes_nothing_at_all(_data_home, make):
    path = _data_home / "progress.sqlite3"
    make(path)
    before = _state(_data_home)
    time.sleep(0.01)  # a write now would change a modification time
    r = CliRunner().invoke(app, ["check", "--dry-run"])
    assert r.exit_code in (0, 1), r.output
    assert _state(_data_home) == before  # before: -wal, -shm, or a header in the empty file
    if make is _empty:
        assert r.exit_code == 1 and "the file is empty (zero bytes)" in r.stdout
    if make is _crashed:
        assert "(5 answers" in r.stdout  # read from the -wal, through a copy
    if make is _truncated:  # reported as damaged, not an error about checking
        assert r.exit_code == 1 and "Found 1 problem; nothing repaired:" in r.stdout, r.output
        assert "progress.sqlite3: database disk image is malformed" in r.stdout
    if make in (_healthy, _crashed):
        assert r.exit_code == 0 and "No problems found." in r.stdout


def test_check_repairs_an_empty_file_as_opening_would(tmp_path):
    path = tmp_path / "progress.sqlite3"
    path.write_bytes(b"")
    report = check_store(path)
    [problem] = report.problems
    assert problem.kind == "empty" and problem.fixed.startswith("moved to progress.sqlite3.damaged-")
    assert path.stat().st_size > 0
    with open_store(path) as s:
        assert s.persistent and s.warnings == []
    assert "Found 1 problem; repaired 1:" in "\n".join(render_text(report))


# ----------------------------------------------------------------- what the warnings name

NOT_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="drops root's capabilities: needs root")


@NOT_ROOT
def test_a_read_only_file_in_a_writable_folder_is_named_as_the_file(tmp_path):
    path = tmp_path / "progress.sqlite3"
    _healthy(path)
    path.chmod(0o444)
    code = ("import sys; from tutor.store import open_store\n"
            "s = open_store(sys.argv[1]); print(s.persistent); print(s.warnings[0])\n"
            "print(len(s.answers()))")
    r = h.python(code, str(path), obey_permissions=True)
    assert r.returncode == 0, r.stderr
    persistent, warning, answers = r.stdout.splitlines()
    assert persistent == "False" and answers == "1"  # the saved answer is still shown
    assert warning.startswith(f"the progress file {path} is read-only (its folder is not)")
    assert "folder" not in warning.split("(its folder is not)")[1]


def test_a_folder_at_the_file_s_path_is_named(tmp_path):
    path = tmp_path / "progress.sqlite3"
    path.mkdir()
    with open_store(path) as s:
        [warning] = s.warnings
        assert not s.persistent
    assert warning.startswith(f"{path} is a folder, not a progress file")
    assert "I/O" not in warning and "disk" not in warning
    assert path.is_dir() and list(path.iterdir()) == []  # nothing moved or made inside it
