"""The exam commands as a user types them: sheet, plan, export (and their one-line errors)."""

from __future__ import annotations

import json
import zipfile

import pytest
from typer.testing import CliRunner

from tutor.cli import app


def _run(*args):
    return CliRunner().invoke(app, list(args), env={"NO_COLOR": "1"})


def test_sheet_plain_markdown_html_and_file(tmp_path):
    r = _run("sheet")
    assert r.exit_code == 0 and "§12 Training" in r.stdout and "Notation map" in r.stdout
    assert _run("sheet", "--markdown").stdout.startswith("# Attention mechanisms")
    r = _run("sheet", "-o", str(tmp_path / "s.html"))
    assert r.exit_code == 0 and "two A4 pages" in r.stdout
    assert (tmp_path / "s.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    bad = _run("sheet", "-o", str(tmp_path / "s.pdf"))
    assert bad.exit_code == 2 and "expected a .txt, .md or .html file" in bad.stderr
    assert _run("sheet", "--markdown", "--html").exit_code == 2


def test_sheet_accepts_plain_like_every_other_command(tmp_path):
    """`sheet --plain` is the plain text the bare command prints (issue 34); --plain with a
    file writes plain text whatever the suffix; two formats at once is one clear line, exit 2."""
    bare, plain = _run("sheet"), _run("sheet", "--plain")
    assert plain.exit_code == 0 and plain.stdout == bare.stdout and "§13 The Transformer" in plain.stdout
    r = _run("sheet", "--plain", "-o", str(tmp_path / "s.md"))
    assert r.exit_code == 0 and (tmp_path / "s.md").read_text(encoding="utf-8") == bare.stdout
    both = _run("sheet", "--plain", "--html")
    assert both.exit_code == 2 and both.stderr.strip().splitlines() == [
        both.stderr.strip()] and "not --plain and --html" in both.stderr


def test_plan_remembers_the_exam_and_replans(tmp_path):
    r = _run("plan", "--today", "2027-01-01")
    assert r.exit_code == 2 and "no exam date yet" in r.stderr
    r = _run("plan", "--exam", "2027-01-15", "--minutes", "45", "--today", "2027-01-01", "--json")
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["exam"] == "2027-01-15" and data["minutes_per_day"] == 45 and len(data["days"]) == 15
    assert data["days"][0]["tasks"][0]["command"] == "attn-tutor lesson encoder-decoder"
    again = _run("plan", "--today", "2027-01-01", "--json")  # remembered, same store: same plan
    assert json.loads(again.stdout) == data
    from tutor.store import open_store

    with open_store() as store:
        store.mark_lesson_opened("encoder-decoder")
    later = json.loads(_run("plan", "--today", "2027-01-01", "--json").stdout)
    assert later["days"][0]["tasks"][0]["command"] == "attn-tutor lesson context-vector"
    text = _run("plan", "--today", "2027-01-01").stdout
    assert text.startswith("Revision plan: Fri 01 Jan → exam Fri 15 Jan 2027 (14 days, 45 min/day)")
    for args, msg in [(("--exam", "2027-02-30"), "expected a date YYYY-MM-DD"),
                      (("--exam", "2026-12-01"), "must be after today"),
                      (("--minutes", "5"), "10–600")]:
        r = _run("plan", "--today", "2027-01-01", *args)
        assert r.exit_code == 2 and msg in r.stderr and "Traceback" not in r.stderr


def test_export_writes_every_format_and_refuses_bad_requests(tmp_path):
    r = _run("export", "anki", str(tmp_path / "d.apkg"))
    assert r.exit_code == 0 and "updates these notes" in r.stdout
    assert "collection.anki2" in zipfile.ZipFile(tmp_path / "d.apkg").namelist()
    assert _run("export", "csv", str(tmp_path / "d.csv")).exit_code == 0
    assert _run("export", "MARKDOWN", str(tmp_path / "d.md")).exit_code == 0
    for args, msg in [(("pdf", "x.pdf"), "unknown export format 'pdf'"),
                      (("csv", str(tmp_path / "no" / "x.csv")), "does not exist"),
                      (("anki", str(tmp_path / "x.csv")), "writes a .apkg file")]:
        r = _run("export", *args)
        assert r.exit_code == 2 and msg in r.stderr


def test_paper_plain_follow_through_self_marking_and_stats():
    answers = "\n".join([
        "x", "1/3, 0, 0",                 # (a): a bad line is asked again, then a wrong scale
        "0.411, 0.2945, 0.2945",           # (b): softmax of the student's own (a)
        "0.411, 0.2945",                   # (c): from the student's (b)
        "The weights should be 1.79/3.79 and 1/3.79.", "", "7", "1",  # (d): 7 is refused
        ":quit"])
    r = CliRunner().invoke(app, ["paper", "--plain", "-q", "xq-qkv-notes-erratum", "-q",
                                 "xq-encoder-run", "--minutes", "10"], input=answers + "\n",
                           env={"NO_COLOR": "1"})
    assert r.exit_code == 0, r.stderr
    out = r.stdout
    assert "'x' is not a number" in out
    assert "(b) 3/3 — Follow-through" in out and "(c) 2/2 — Follow-through" in out
    assert "Point 7" in out or "'7'" in out
    assert "Your answer: The weights should be 1.79/3.79 and 1/3.79." in out
    assert "Paper stopped: 6/21 marks" in out and "By topic: qkv 6/10, encoder-decoder 0/11" in out
    data = json.loads(_run("stats", "--json").stdout)
    (paper,) = data["papers"]
    assert (paper["earned"], paper["marks"], paper["status"]) == (6, 21, "stopped")
    assert data["paper_topics"][0] == {"id": "encoder-decoder", "earned": 0, "marks": 11, "score": 0.0}
    listed = _run("paper", "--list").stdout.splitlines()
    assert len(listed) >= 24 and listed[0].startswith("xq-encoder-run")


def test_paper_refuses_bad_options():
    for args, msg in [(("--minutes", "-3"), "--minutes -3"), (("--questions", "0"), "--questions 0"),
                      (("--topic", "nope"), "--topic 'nope'"), (("-q", "xq-nope"), "no exam question 'xq-nope'"),
                      (("--topic", "10", "-n", "3"), "only 2 exam questions on decoding; asked for 3")]:
        r = _run("paper", "--plain", *args)
        assert r.exit_code == 2 and msg in r.stderr, (args, r.stderr)


def test_paper_topic_filters_the_list_and_names_topics_without_questions():
    from tutor.exam.model import load_questions

    questions = load_questions()
    decoding = [q.id for q in questions if q.section == "decoding"]
    listed = _run("paper", "--list", "--topic", "10").stdout.splitlines()
    assert [line.split()[0] for line in listed] == decoding and decoding
    covered = sorted({q.section_number for q in questions})
    if "transformer" in {q.section for q in questions}:
        pytest.skip("the Transformer lesson has exam questions now")
    r = _run("paper", "--plain", "--topic", "13", "-n", "1")
    assert r.exit_code == 2
    assert r.stderr.strip() == ("attn-tutor: error: no exam question on transformer yet; there are "
                                f"questions on sections {', '.join(map(str, covered))}")
    r = _run("paper", "--list", "--topic", "transformer")
    assert r.exit_code == 2 and "no exam question on transformer yet" in r.stderr


@pytest.mark.parametrize("bad", ["²", "¹", "①", "9" * 5000, "٣"])
def test_a_bad_line_gets_a_hint_and_the_paper_goes_on(bad):
    """issue 34 §4: ², ¹, ① and a 5,000-digit number ended the paper with "invalid literal for
    int()" (exit 2, the paper left running, no summary). Each is now one hint, at a number
    prompt and at the points prompt, and the paper is finished and saved."""
    lines = [bad, "", "", "", "",            # (a): the bad line, then blank; (b)-(d) blank
             "my answer", "", bad, "1"]      # (e): a text answer, the bad line, then point 1
    r = CliRunner().invoke(app, ["paper", "--plain", "-q", "xq-dynamic-context", "--minutes", "0"],
                           input="\n".join(lines) + "\n", env={"NO_COLOR": "1"})
    assert r.exit_code == 0, r.stderr
    out = r.stdout
    assert "invalid literal" not in out + r.stderr and "Traceback" not in out + r.stderr
    assert out.count("Type 3 numbers separated by commas") == 2  # the part's line, then the hint
    assert "type the numbers of the points your answer makes (1–2)" in out
    assert "(e) 1/2 — Self-marked" in out and "Paper finished: 1/10 marks" in out
    (paper,) = json.loads(_run("stats", "--json").stdout)["papers"]
    assert (paper["status"], paper["earned"]) == ("finished", 1)


def test_paper_options_are_checked_like_the_quiz(tmp_path):
    """paper -t ² ended in "invalid literal for int()"; --seed had no range (a 20-digit seed was an
    internal error, -1 accepted). The seed rule is the quiz's, from one place."""
    for args, msg in [(("-t", "²"), "--topic '²': expected a lesson id"),
                      (("-t", "①"), "--topic '①': expected a lesson id"),
                      (("--seed", "-1"), "--seed: expected a whole number from 0 to 4294967295"),
                      (("--seed", "99999999999999999999"), "--seed: expected a whole number from 0 to 4294967295")]:
        for command in ("paper", "quiz") if args[0] == "--seed" else ("paper",):
            r = _run(command, "--plain", *args)
            lines = r.stderr.strip().splitlines()
            assert r.exit_code == 2 and len(lines) == 1, (command, args, r.stderr)
            assert lines[0].startswith(f"attn-tutor: error: {msg}"), (command, args, r.stderr)
