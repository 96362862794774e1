"""Issue 36 §3: the store keeps each diagnosis with its item (migration 6), and ``stats`` shows
the student's recurring mistakes — in the text report, in ``--json`` (checked against its
schema doc, tutor/schemas/stats-json.md) and in the TUI Stats area.

The counts expected are the rows written here, counted by hand.
"""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tui_text import until, widget_text
from typer.testing import CliRunner

from engine.mistakes.catalogue import MISTAKES
from tutor.app import StartAt, make_app
from tutor.cli import app as cli
from tutor.store import open_store, schema
from tutor.store.check import check_store
from tutor.store.papers import finish_paper, papers, record_part, start_paper
from tutor.store.practice import record_step

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
SCHEMA_DOC = Path(__file__).resolve().parents[1] / "tutor" / "schemas" / "stats-json.md"


# --------------------------------------------------------------------------- the store

def _old_store(path: Path, version: int = 5) -> None:
    """A store built by migrations 1..``version`` only, with a quiz answer and a paper part."""
    con = sqlite3.connect(path)
    for script in schema.MIGRATIONS[:version]:
        for statement in schema._statements(script):
            con.execute(statement)
    con.execute(f"PRAGMA user_version = {version}")
    con.execute("INSERT INTO answers (question_id, topic, mode, correct, response, answered_at, day,"
                " parts) VALUES ('scoring-scaled-value', 'scoring', 'practice', 0, '1',"
                " '2026-03-01T09:00:00.000000+00:00', '2026-03-01', NULL)")
    con.execute("INSERT INTO answers (question_id, topic, mode, correct, response, answered_at, day,"
                " parts) VALUES ('gen:pooling', 'pooling', 'practice', 0, '1; 2; 3',"
                " '2026-03-01T09:05:00.000000+00:00', '2026-03-01', '[1, 0, 1]')")
    con.execute("INSERT INTO papers (started_at, time_limit_s, seed, status) VALUES"
                " ('2026-03-01T10:00:00.000000+00:00', NULL, 3, 'finished')")
    con.execute("INSERT INTO paper_parts (paper_id, question_id, part, topic, variant, status,"
                " earned, marks, response, answered_at) VALUES (1, 'xq-sequence-loss', 'a',"
                " 'training', 3, 'wrong', 0, 2, '0.699', '2026-03-01T10:05:00.000000+00:00')")
    con.commit()
    con.close()


def test_migration_6_is_the_last_and_adds_the_diagnoses_columns():
    assert schema.SCHEMA_VERSION >= 6
    six = schema.MIGRATIONS[5]
    assert "answers ADD COLUMN diagnoses" in six and "paper_parts ADD COLUMN diagnoses" in six


def test_an_old_store_upgrades_without_losing_rows(tmp_path):
    path = tmp_path / "v5.sqlite3"
    _old_store(path)
    with open_store(path) as store:
        assert not store.warnings
        answers = store.answers()
        assert [a.question_id for a in answers] == ["scoring-scaled-value", "gen:pooling"]
        assert all(a.diagnoses == () for a in answers)
        assert answers[1].parts == (True, False, True)
        (paper,) = papers(store)
        (part,) = paper.parts
        assert (part.question_id, part.part, part.status, part.diagnoses) == (
            "xq-sequence-loss", "a", "wrong", ())
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
    con.close()
    report = check_store(path)
    assert not [p for p in report.problems if "diagnoses" in p.found]


def test_every_older_version_upgrades(tmp_path):
    for version in range(1, 6):
        path = tmp_path / f"v{version}.sqlite3"
        con = sqlite3.connect(path)
        for script in schema.MIGRATIONS[:version]:
            for statement in schema._statements(script):
                con.execute(statement)
        con.execute(f"PRAGMA user_version = {version}")
        con.execute("INSERT INTO answers (question_id, topic, mode, correct, answered_at, day)"
                    " VALUES ('q1', 'qkv', 'practice', 1, '2026-03-01T00:00:00.000000+00:00',"
                    " '2026-03-01')")
        con.commit()
        con.close()
        with open_store(path) as store:
            assert not store.warnings, version
            (a,) = store.answers()
            assert a.question_id == "q1" and a.diagnoses == ()


def test_diagnoses_round_trip_with_answers_and_paper_parts(tmp_path):
    path = tmp_path / "p.sqlite3"
    _old_store(path)
    with open_store(path, now=lambda: T0) as store:
        store.record_answer("scoring-scaled-value", "scoring", correct=False, rating=None,
                            response="1", diagnoses=["no-scale"])
        store.record_answer("gen:temperature", "decoding", correct=False, rating=None,
                            response="0.3, 0.3, 0.4", parts=[False],
                            diagnoses=["temperature-multiplied+rounded-intermediates"])
        pid = start_paper(store, None, 1)
        record_part(store, pid, "xq-sequence-loss", "c", "training", variant=1, status="wrong",
                    earned=0, marks=1, response="1.699", diagnoses=["ce-sum-not-mean"])
        finish_paper(store, pid)
    with open_store(path) as store:
        latest = store.answers()[-2:]
        assert [a.diagnoses for a in latest] == [
            ("no-scale",), ("temperature-multiplied+rounded-intermediates",)]
        new = next(p for p in papers(store) if p.id == pid)
        assert new.parts[0].diagnoses == ("ce-sum-not-mean",)
    assert not [p for p in check_store(path).problems]


def test_a_malformed_diagnoses_cell_is_cleared_and_the_answer_kept(tmp_path):
    path = tmp_path / "bad.sqlite3"
    with open_store(path, now=lambda: T0) as store:
        store.record_answer("scoring-scaled-value", "scoring", correct=False, rating=None,
                            response="1", diagnoses=["no-scale"])
    con = sqlite3.connect(path)
    con.execute("UPDATE answers SET diagnoses = '{not json'")
    con.commit()
    con.close()
    report = check_store(path)
    assert any("diagnosed mistakes cleared" in (p.fixed or "") for p in report.problems)
    with open_store(path) as store:
        (a,) = store.answers()
        assert a.correct is False and a.diagnoses == ()


# --------------------------------------------------------------------------- stats

def _history(home: Path) -> None:
    """no-scale named 3 times (2 quiz answers, 1 paper part), scale-by-dk once in a practice
    step, and a pair (ce-log10 + ce-mean-not-sum) once in a paper part."""
    with open_store(now=lambda: T0) as store:
        store.record_answer("scoring-scaled-value", "scoring", correct=False, rating=None,
                            response="1", diagnoses=["no-scale"], at=T0)
        store.record_answer("gen:scaled-dot-scores", "scoring", correct=False, rating=None,
                            response="0.5, 0.1, 0.2; K1", parts=[False, True],
                            diagnoses=["no-scale"], at=T0 + timedelta(hours=1))
        store.record_answer("scoring-scaled-value", "scoring", correct=True, rating=None,
                            response="0.577", at=T0 + timedelta(hours=2))
        pid = start_paper(store, None, 1, at=T0)
        record_part(store, pid, "xq-scaled-dot", "a", "scoring", variant=1, status="wrong",
                    earned=0, marks=2, response="1", diagnoses=["no-scale"],
                    at=T0 + timedelta(days=1))
        record_part(store, pid, "xq-sequence-loss", "b", "training", variant=1, status="wrong",
                    earned=0, marks=1, response="0.566", diagnoses=["ce-log10+ce-mean-not-sum"],
                    at=T0 + timedelta(days=1))
        finish_paper(store, pid, at=T0 + timedelta(days=1))
        record_step(store, session="s1", trace="scores", level=1, seed=None, step=2,
                    name="scores", answer="0.1, 0.2, 0.3", correct=False,
                    diagnoses=["scale-by-dk"], at=T0 + timedelta(hours=3))


def _json(text: str) -> dict:
    return json.loads(text)


def _doc_example() -> dict:
    doc = SCHEMA_DOC.read_text(encoding="utf-8")
    block = re.search(r"```json\n(.*?)```", doc, re.DOTALL).group(1)
    return json.loads(block)


def _same_shape(example, actual, where="") -> None:
    """Every key of the documented example is in ``actual`` with the same JSON type (null in
    either matches anything)."""
    if example is None or actual is None:
        return
    if isinstance(example, dict):
        assert isinstance(actual, dict), where
        missing = set(example) - set(actual)
        assert not missing, f"{where}: missing {sorted(missing)}"
        for k in example:
            _same_shape(example[k], actual[k], f"{where}.{k}")
    elif isinstance(example, list):
        assert isinstance(actual, list), where
        if example and actual:
            for item in actual:
                _same_shape(example[0], item, f"{where}[]")
    elif isinstance(example, bool):
        assert isinstance(actual, bool), where
    elif isinstance(example, (int, float)):
        assert isinstance(actual, (int, float)) and not isinstance(actual, bool), where
    else:
        assert isinstance(actual, type(example)), where


def test_stats_json_lists_the_mistakes_as_its_schema_documents(_data_home):
    _history(_data_home)
    r = CliRunner().invoke(cli, ["stats", "--json"])
    assert r.exit_code == 0, r.output
    data = _json(r.output)
    example = _doc_example()
    _same_shape(example["mistakes"], data["mistakes"], "mistakes")
    doc = SCHEMA_DOC.read_text(encoding="utf-8")
    assert "| `mistakes[]` |" in doc
    by_id = {m["id"]: m for m in data["mistakes"]}
    assert data["mistakes"][0]["id"] == "no-scale"  # most often first
    ns = by_id["no-scale"]
    assert ns["times"] == 3 and ns["recurring"] is True
    assert ns["where"] == {"quiz": 2, "papers": 1, "practice": 0}
    assert ns["last"] == "2026-03-03T09:00:00Z"  # the paper part, a day after T0
    assert ns["title"] == MISTAKES["no-scale"].title and ns["lesson"] == MISTAKES["no-scale"].lesson
    assert ns["read"] == f"attn-tutor lesson {ns['lesson']}"
    assert ns["aimed"] == "attn-tutor quiz --mode mistakes"
    # a pair counts once for each of its mistakes; a single naming is not recurring
    assert by_id["ce-log10"]["times"] == 1 and by_id["ce-mean-not-sum"]["times"] == 1
    sd = by_id["scale-by-dk"]
    assert sd["times"] == 1 and sd["recurring"] is False and sd["where"]["practice"] == 1
    assert sd["trace"] == "scores" and sd["practise"] == "attn-tutor trace scores --practice"
    assert len(data["mistakes"]) == 4


def test_stats_json_with_no_mistakes_is_an_empty_list():
    r = CliRunner().invoke(cli, ["stats", "--json"])
    assert r.exit_code == 0, r.output
    assert _json(r.output)["mistakes"] == []


def test_stats_text_shows_recurring_mistakes(_data_home):
    r = CliRunner().invoke(cli, ["stats"])
    assert "Mistakes: none named yet" in r.output
    _history(_data_home)
    r = CliRunner().invoke(cli, ["stats"])
    assert r.exit_code == 0, r.output
    out = r.output
    assert "Mistakes named in your answers (1 recurring; attn-tutor quiz --mode mistakes" in out
    line = next(x for x in out.splitlines() if MISTAKES["no-scale"].title in x)
    assert re.search(r"\b3×", line)
    assert "practise: attn-tutor trace scores --practice" in out


async def test_the_tui_stats_area_shows_recurring_mistakes(_data_home, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    _history(_data_home)
    app = make_app(StartAt("stats"), warm_up=False)
    async with app.run_test(size=(80, 24)) as pilot:
        def shown() -> str:
            bodies = app.screen.query("#stats-body")
            return " ".join(widget_text(bodies.first()).split()) if bodies else ""

        assert await until(pilot, lambda: "Mistakes named" in shown()), shown()[:400]
        text = shown()
        assert MISTAKES["no-scale"].title in text and "3×" in text
        assert "attn-tutor quiz --mode mistakes" in text
