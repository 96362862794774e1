"""Any one value of any column replaced by junk: no reader raises, and `check` repairs it.

Hypothesis picks the table, row, column and value (text that is not a date or JSON, numbers,
bytes, NULL, huge numbers); derandomized, so the normal run is deterministic and a second or
two long.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tutor.quiz import scheduler as sch
from tutor.quiz.bank import Question
from tutor.quiz.generators import FAMILIES
from tutor.quiz.modes import MODES, select
from tutor.quiz.progress import compute
from tutor.store import open_store
from tutor.store.check import check_store

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=timezone.utc)
BANK = [Question(id=f"q{i}", kind="mcq", section="qkv", prompt=f"Q{i}?", answer=1,
                 explanation="b.", difficulty=1, choices=("a", "b", "c")) for i in range(4)]
COLUMNS = {
    "answers": ["question_id", "topic", "mode", "correct", "rating", "response", "variant",
                "seconds", "answered_at", "day", "session", "mock_id"],
    "cards": ["question_id", "topic", "card", "due", "reps", "lapses", "updated_at"],
    "lesson_opens": ["lesson_id", "first_opened", "last_opened", "times"],
    "mock_exams": ["started_at", "finished_at", "time_limit_s", "n_questions", "answered",
                   "correct", "per_topic", "seed", "status"],
}
JUNK = st.one_of(
    st.none(), st.integers(-2**63, 2**63 - 1), st.floats(allow_nan=True), st.binary(max_size=8),
    st.sampled_from(["", "not a date", "12x", "-3", "2026-13-45", "{", "[1]", "null", '{"due": 5}',
                     '{"due": "2026-03-02"}', '{"qkv": [1]}', "9" * 40, "running", "mock"]),
    st.text(max_size=12),
)


GENERATED = next(iter(FAMILIES.values())).question_id


def _template() -> bytes:
    """A small history: two scheduled questions, a mock exam, a lesson opened."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "progress.sqlite3"
        fuzzless = sch.make_scheduler(fuzzing=False)
        with open_store(path) as s:
            for i, q in enumerate(("q0", "q1", "q0")):
                s.record_answer(q, "qkv", correct=i != 1, rating=3 if i != 1 else 1,
                                at=T0 + timedelta(hours=i),
                                update_card=sch.updater(q, 3 if i != 1 else 1, fuzzless))
            s.record_answer(GENERATED, "qkv", correct=False, rating=1, variant="5",
                            at=T0 + timedelta(hours=3))  # what "retry" brings back
            m = s.start_mock(2, 600.0, seed=1, at=T0)
            s.record_answer("q2", "qkv", correct=True, rating=None, mode="mock", mock_id=m, at=T0)
            s.finish_mock(m, answered=1, correct=1, per_topic={"qkv": [1, 2]}, at=T0)
            s.mark_lesson_opened("qkv", at=T0)
        return path.read_bytes()


TEMPLATE = _template()


def _read_everything(path: Path) -> None:
    with open_store(path, now=lambda: T0 + timedelta(days=1)) as s:
        s.answers(), s.latest_answers(), s.miss_counts(), s.question_stats()
        s.topic_accuracy(), s.cards(), s.due_cards(), s.card("q0"), s.daily_counts()
        s.lessons_opened(), s.mock_exams()
        compute(s, BANK)
        for mode in MODES:
            select(mode, bank=BANK, store=s, seed=1, generated=mode == "retry")
        s.take_notices()


@settings(max_examples=50, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(table=st.sampled_from(sorted(COLUMNS)), data=st.data(), value=JUNK)
def test_one_junk_value_breaks_no_reader_and_check_repairs_it(tmp_path, table, data, value):
    column = data.draw(st.sampled_from(COLUMNS[table]), label="column")
    path = Path(tempfile.mkdtemp(dir=tmp_path)) / "progress.sqlite3"
    path.write_bytes(TEMPLATE)
    con = sqlite3.connect(path)
    try:
        con.execute(f"UPDATE {table} SET {column} = ? WHERE rowid = 1", (value,))
        con.commit()
        stored = con.execute(f"SELECT {column} FROM {table} WHERE rowid = 1").fetchone()[0]
    except sqlite3.IntegrityError:  # NOT NULL: SQLite itself refuses this junk
        assume(False)
    finally:
        con.close()
    answers_before = _count(path, "answers")

    _read_everything(path)  # must not raise

    report = check_store(path, now=lambda: T0 + timedelta(days=1), rebuild_card=sch.replay,
                         valid_card=lambda c: sch.load_card(c) is not None)
    assert report.unfixed == []
    with open_store(path) as s:
        s.answers(), s.cards(), s.lessons_opened(), s.mock_exams()
        assert s.bad_rows == {}  # after check, every row reads
    aside = _set_aside(path)
    # nothing is lost: an answer is either still there or set aside whole
    assert _count(path, "answers") + sum(t == "answers" for t, _ in aside) == answers_before
    for _, row in aside:  # set aside as it was (after SQLite's own type affinity)
        assert row[column] == (stored.hex() if isinstance(stored, bytes) else stored)
    assert check_store(path, now=lambda: T0 + timedelta(days=1)).problems == []


def _count(path: Path, table: str) -> int:
    con = sqlite3.connect(path)
    try:
        return con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    finally:
        con.close()


def _set_aside(path: Path) -> list[tuple[str, dict]]:
    con = sqlite3.connect(path)
    try:
        if not con.execute("SELECT 1 FROM sqlite_master WHERE name = 'set_aside'").fetchone():
            return []
        return [(t, json.loads(r)) for t, r in
                con.execute("SELECT table_name, row_json FROM set_aside")]
    finally:
        con.close()
