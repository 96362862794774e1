"""The formula sheet (fits two pages), the revision plan (a fixed store and date, worked by
hand) and the exports (an .apkg that opens as an Anki collection, Markdown, CSV)."""

from __future__ import annotations

import csv
import io
import math
import shutil
import sqlite3
import subprocess
import tomllib
import zipfile
from datetime import date, datetime, timezone

import pytest

import lessons
from tutor.exam import export as ex
from tutor.exam.plan import PlanError, build_plan, plan_from_store, render_text
from tutor.exam.sheet import PAGE, estimated_pages, load_sheet, render_html, render_markdown, render_plain


# ------------------------------------------------------------------ sheet

def test_sheet_covers_every_section_and_the_notation_the_issue_names():
    sheet = load_sheet()
    assert [g.section for g in sheet.groups] == list(range(1, 14))  # the notes' 12, then lesson 13
    assert sum(len(g.formulas) for g in sheet.groups) >= 25
    symbols = " ".join(s for s, _ in sheet.notation)
    for needed in ("H_t^(d) and S_t", "W_O and W^O", "W_Q, W_K"):
        assert needed in symbols
    text = render_plain(sheet)
    for formula in ("softmax(Q Kᵀ / √d_k) V", "vᵀ tanh(W_q q + W_k k)", "P(w) − 1[w = y_t]",
                    "Var(q·k) = Σ_i Var(q_i k_i) = d_k"):
        assert formula in text
    assert max(len(line) for line in text.splitlines()) <= 88
    assert render_markdown(sheet).count("\n## §") == 13


def test_sheet_fixes_and_additions_of_issue_34():
    """§2's product is d_h × d_x; attention backward, the Transformer layer, the per-layer
    cost table and perplexity are there; the notation map explains ε, p and rows versus
    columns; the masked-row convention is SDPA ≥ 2.5's, not every softmax's."""
    sheet = load_sheet()
    text = render_plain(sheet, width=10_000)
    assert "each factor d_h × d_h" not in text and "the whole product: d_h × d_x" in text
    for formula in ("dV = Aᵀ dO", "dA = dO Vᵀ", "dS_i = A_i ⊙ (dA_i − (dA_i · A_i))",
                    "dQ = dS K / √d_k", "dK = dSᵀ Q / √d_k",
                    "x ← LN(x + MHA(x, x, x))", "x ← x + MHA(LN x, LN x, LN x)",
                    "self-attention O(n² d), O(1), O(1)", "recurrent O(n d²), O(n), O(n)",
                    "PPL = exp(L / N)"):
        assert formula in text, formula
    notation = dict(sheet.notation)
    assert "Bengio et al. (2015)" in notation["ε"] and "label smoothing" in notation["ε"]
    assert "nucleus" in notation["p, P"]
    assert "§1–4 and §12 use column vectors" in notation["rows or columns"]
    assert "§5–7 use row vectors" in notation["rows or columns"]
    assert "2.5" in text and "torch.softmax returns NaN" in text


def test_sheet_base_model_counts_are_the_engines():
    from engine.transformer.model import TransformerConfig

    cfg = TransformerConfig(vocab_size=37000, d_model=512, num_heads=8, d_ff=2048,
                            num_encoder_layers=6, num_decoder_layers=6)
    shapes = cfg.shapes()

    def count(prefix: str) -> int:
        return sum(int(math.prod(s)) for name, s in shapes.items() if name.startswith(prefix))

    enc, dec = count("encoder.layers.0."), count("decoder.layers.0.")
    text = render_plain(load_sheet(), width=10_000)
    assert f"encoder layer {enc / 1e6:.2f} M, decoder layer {dec / 1e6:.2f} M" in text
    assert f"12 layers {6 * (enc + dec) / 1e6:.1f} M" in text
    assert f"d_k = d_v = {cfg.d_head}" in text


def test_sheet_fits_two_printed_pages_by_its_stated_geometry():
    # A4, 10 mm margins, two columns 6 mm apart, 8.5 pt text at 1.25 line height
    assert (PAGE.width_mm, PAGE.height_mm, PAGE.margin_mm, PAGE.columns) == (210, 297, 10, 2)
    assert PAGE.chars_per_line >= 50 and PAGE.lines_per_column >= 60
    page = render_html()
    assert f"column-count: {PAGE.columns}" in page and "size: A4" in page
    assert f"font-size: {PAGE.font_pt}pt" in page
    assert estimated_pages() <= 2.0


@pytest.mark.skipif(not shutil.which("chromium-headless-shell"), reason="no headless chromium")
def test_sheet_prints_to_at_most_two_pages(tmp_path):
    (tmp_path / "s.html").write_text(render_html(), encoding="utf-8")
    subprocess.run(["chromium-headless-shell", "--headless", "--no-sandbox", "--disable-gpu",
                    "--no-pdf-header-footer", f"--print-to-pdf={tmp_path / 's.pdf'}",
                    (tmp_path / "s.html").as_uri()], check=True, capture_output=True, timeout=120)
    pdf = (tmp_path / "s.pdf").read_bytes()
    import re
    assert 1 <= len(re.findall(rb"/Type\s*/Page[^s]", pdf)) <= 2


def test_sheet_html_escapes_its_text():
    page = render_html()
    assert "Y_{&lt;t}" in page and "Y_{<t}" not in page


# ------------------------------------------------------------------ plan

def _hand_plan():
    read = [l for l in ("encoder-decoder", "context-vector", "teacher-forcing", "attention-intro",
                        "self-attention", "cross-attention", "pooling", "decoding",
                        "visualisation", "training")]  # qkv and scoring unread
    mastery = {l: 0.9 for l in read + ["qkv", "scoring"]} | {"decoding": 0.2}
    return build_plan(date(2027, 1, 5), date(2027, 1, 1), 60,
                      due=[date(2026, 12, 30)] * 3 + [date(2027, 1, 3)] * 2,
                      lessons_read=read, mastery=mastery,
                      unattempted=[("xq-a", "qkv"), ("xq-b", "qkv"), ("xq-c", "decoding")])


def test_plan_worked_by_hand():
    plan = _hand_plan()
    kinds = [[t.kind for t in d.tasks] for d in plan.days]
    # Jan 1: 3 overdue reviews (3 min), lessons qkv and scoring (20 + 20), decoding practice (15)
    # Jan 2: the paper (45) — its qkv lesson is read by now; Jan 3: the 2 cards due that day;
    # Jan 4: nothing left, so the closing mock (45); Jan 5: the exam.
    assert kinds == [["review", "lesson", "lesson", "practice"], ["paper"], ["review"], ["mock"], []]
    assert [d.minutes for d in plan.days] == [58, 45, 2, 45, 0]
    assert plan.days[0].tasks[1].command == "attn-tutor lesson qkv"
    assert plan.days[1].tasks[0].command == ("attn-tutor paper --question xq-a --question xq-b "
                                             "--question xq-c")
    assert plan.days[-1].exam and plan.days[-1].date == date(2027, 1, 5) and not plan.unplaced
    assert _hand_plan() == plan  # deterministic


def test_plan_reports_what_does_not_fit_and_refuses_bad_requests():
    plan = build_plan(date(2027, 1, 3), date(2027, 1, 1), 20,
                      unattempted=[("xq-a", "qkv")])
    assert all(d.minutes <= 20 for d in plan.days)
    assert any(t.kind == "paper" for t in plan.unplaced)  # 45 minutes never fit in 20
    assert "Did not fit" in "\n".join(render_text(plan))
    for kwargs, msg in [(dict(exam=date(2027, 1, 1)), "must be after today"),
                        (dict(exam=date(2029, 1, 1)), "at most 366"),
                        (dict(minutes_per_day=5), "10–600")]:
        args = dict(exam=date(2027, 1, 10), today=date(2027, 1, 1), minutes_per_day=60) | kwargs
        with pytest.raises(PlanError, match=msg):
            build_plan(**args)


def test_plan_from_a_fixed_store_replans_as_the_student_studies(tmp_path):
    from tutor.store import open_store

    now = datetime(2027, 3, 1, 9, 0, tzinfo=timezone.utc)
    with open_store(tmp_path / "p.sqlite3", now=lambda: now) as store:
        store.mark_lesson_opened("encoder-decoder", at=now)
        first = plan_from_store(store, date(2027, 3, 20), date(2027, 3, 1), 90)
        again = plan_from_store(store, date(2027, 3, 20), date(2027, 3, 1), 90)
        assert first == again
        lessons_planned = [t.topics[0] for d in first.days for t in d.tasks if t.kind == "lesson"]
        assert "encoder-decoder" not in lessons_planned and len(lessons_planned) == 11
        store.mark_lesson_opened("context-vector", at=now)
        later = plan_from_store(store, date(2027, 3, 20), date(2027, 3, 1), 90)
        assert "context-vector" not in [t.topics[0] for d in later.days for t in d.tasks
                                        if t.kind == "lesson"]
        papers = sum(1 for d in first.days for t in d.tasks if t.kind == "paper")
        papers += sum(1 for t in first.unplaced if t.kind == "paper")
        from tutor.exam.model import load_questions
        n = len(load_questions())
        assert papers == -(-n // 3)  # every question unattempted, three to a paper
        done = plan_from_store(store, date(2027, 3, 20), date(2027, 3, 1), 90,
                               attempted=["xq-encoder-run", "xq-decoder-output", "xq-fading-context"])
        assert sum(1 for d in done.days for t in d.tasks if t.kind == "paper") \
            + sum(1 for t in done.unplaced if t.kind == "paper") == -(-(n - 3) // 3)


# ------------------------------------------------------------------ export

def _bank_size():
    return sum(len(tomllib.loads(p.read_text(encoding="utf-8"))["question"])
               for p in (lessons.ROOT / "quiz").glob("*.toml"))


def test_apkg_opens_as_an_anki_collection_with_stable_guids(tmp_path):
    import genanki

    items = ex.collect()
    cards = [c for name in ("cards.toml", "transformer.toml")
             for c in tomllib.loads((lessons.ROOT / "exam" / name).read_text(encoding="utf-8"))["card"]]
    qa = tomllib.loads((lessons.ROOT / "qa.toml").read_text(encoding="utf-8"))["item"]
    from tutor.exam.model import load_questions
    parts = sum(len(q.parts) for q in load_questions())
    assert len(items) == len(cards) + len(qa) + _bank_size() + parts

    guids = []
    for name in ("one.apkg", "two.apkg"):
        assert ex.export("anki", tmp_path / name) == len(items)
        with zipfile.ZipFile(tmp_path / name) as z:
            assert "collection.anki2" in z.namelist()
            z.extract("collection.anki2", tmp_path / name[:-5])
        db = sqlite3.connect(tmp_path / name[:-5] / "collection.anki2")
        rows = db.execute("SELECT guid, flds, tags FROM notes").fetchall()
        assert db.execute("SELECT COUNT(*) FROM cards").fetchone()[0] == len(items)
        assert "attn-tutor" in db.execute("SELECT decks FROM col").fetchone()[0]
        db.close()
        assert len(rows) == len(items)
        guids.append({g for g, _, _ in rows})
        by_id = {f.split("\x1f")[2]: (g, f, t) for g, f, t in rows}
        bottleneck = next(c for c in cards if c["id"] == "exam-bottleneck")
        assert bottleneck["self_check"] in by_id["exam-bottleneck"][1]
        assert by_id["exam-bottleneck"][0] == genanki.guid_for("attn-tutor", "exam-bottleneck")
        assert "mark-scheme" in by_id["xq-encoder-run:d"][2]
        assert "Follow-through" in by_id["xq-encoder-run:b"][1]
    assert guids[0] == guids[1] and len(guids[0]) == len(items)


def test_markdown_and_csv_hold_the_same_items(tmp_path):
    items = ex.collect()
    assert ex.export("csv", tmp_path / "x.csv") == len(items)
    rows = list(csv.DictReader(io.StringIO((tmp_path / "x.csv").read_text(encoding="utf-8"))))
    assert [r["id"] for r in rows] == [i.id for i in items]
    assert ex.export("markdown", tmp_path / "x.md") == len(items)
    md = (tmp_path / "x.md").read_text(encoding="utf-8")
    assert all(f"### {i.id} " in md for i in items)
    with pytest.raises(ValueError, match="writes a .apkg file"):
        ex.export("anki", tmp_path / "x.csv")
    with pytest.raises(ValueError, match="unknown export format"):
        ex.export("pdf", tmp_path / "x.pdf")


def test_saved_exam_and_home_lines(tmp_path):
    from tutor.exam.plan import save_exam, saved_exam, today_lines
    from tutor.store import open_store

    with open_store(tmp_path / "p.sqlite3") as store:
        assert saved_exam(store) is None
        save_exam(store, date(2027, 1, 5), 60)
        assert saved_exam(store) == (date(2027, 1, 5), 60)
    lines = today_lines(_hand_plan())
    assert lines[0] == "Exam Tue 05 Jan: 4 days left. Today (58 min):"
    assert "  • Read lesson 5: qkv (20 min)" in lines


@pytest.mark.parametrize("minutes", ["0", "9", "601", "-5"])
def test_plan_minutes_out_of_range_names_the_option(minutes):
    from typer.testing import CliRunner

    from tutor.cli import app

    result = CliRunner().invoke(app, ["plan", "--exam", "2099-01-01", "--minutes", minutes])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"attn-tutor: error: --minutes {minutes}:")
    assert "10–600" in lines[0]
