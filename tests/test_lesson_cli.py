"""`attn-tutor lesson`: the listing with progress marks, a lesson in plain text, the exam
cards, and one-line errors."""

from __future__ import annotations

import sys

import pytest
from typer.testing import CliRunner

from tutor.cli import app
from tutor.render.lesson import plain_text
from tutor.render.documents import exam_document

LISTING = """\
   §  id               title
   1  encoder-decoder  Encoder-decoder foundations
   2  context-vector   The context vector and its bottleneck
   3  teacher-forcing  Teacher forcing
   4  attention-intro  Introduction to attention: dynamic context
   5  qkv              The query-key-value framework
   6  self-attention   Self-attention
   7  cross-attention  Cross-attention
   8  scoring          Attention scoring functions
   9  pooling          Attention pooling vs max/average pooling
  10  decoding         Decoding strategies
  11  visualisation    Visualisation and interpretability
  12  training         Training and optimisation
  13  transformer      From attention to the Transformer

0 of 13 opened (✓).
Read one: attn-tutor lesson ID (or its section number). Revision cards: attn-tutor lesson exam. Every question students asked: attn-tutor lesson qa
"""


def invoke(*args: str):
    return CliRunner().invoke(app, ["lesson", *args])


def test_listing_shows_every_lesson_and_no_marks_at_first():
    result = invoke()
    assert result.exit_code == 0
    assert result.stdout == LISTING


def test_reading_a_lesson_marks_it_in_the_listing():
    assert invoke("qkv", "--plain").exit_code == 0
    assert invoke("11").exit_code == 0
    lines = invoke().stdout.splitlines()
    assert lines[5] == "✓  5  qkv              The query-key-value framework"
    assert lines[11] == "✓ 11  visualisation    Visualisation and interpretability"
    assert lines[1] == "   1  encoder-decoder  Encoder-decoder foundations"
    assert lines[15] == "2 of 13 opened (✓)."


def test_plain_lesson_starts_with_title_summary_and_first_heading():
    result = invoke("qkv", "--plain")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[:9] == [
        "5. The query-key-value framework",
        "================================",
        "",
        "Attention as a soft, differentiable lookup: every token is projected into a query, a key and a",
        "value; scaled query-key scores are softmaxed into weights that average the values.",
        "",
        "Learning goals",
        "--------------",
        "",
    ]


def test_plain_lesson_has_formulas_tables_and_trace_links_without_markup():
    out = invoke("qkv", "--plain").stdout
    assert "    Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V    (n × d_v)" in out.splitlines()
    assert "Symbol    Meaning                               Shape" in out.splitlines()
    assert "Step through it: attn-tutor trace qkv shows each projection" in out
    assert "`" not in out and "**" not in out and "```" not in out and "| ---" not in out


def test_a_section_number_opens_the_same_lesson():
    assert invoke("5", "--plain").stdout == invoke("qkv", "--plain").stdout


def test_off_a_terminal_the_lesson_is_plain_text_anyway():
    assert invoke("decoding").stdout == invoke("decoding", "--plain").stdout


def test_exam_cards_by_argument_and_by_option():
    by_arg = invoke("exam")
    by_opt = invoke("--exam", "--plain")
    assert by_arg.exit_code == by_opt.exit_code == 0
    assert by_arg.stdout == by_opt.stdout
    headings = [line for line in by_arg.stdout.splitlines() if line[:2] in {f"{n}." for n in range(1, 10)}]
    assert headings == [
        "1. Encoder-decoder architecture",
        "2. The context-vector bottleneck",
        "3. Teacher forcing",
        "4. Attention: dynamic context",
        "5. Query, key, value",
        "6. Self-attention vs cross-attention",
        "7. Scaled dot-product attention",
        "8. Decoding strategies",
        "9. Cross-entropy loss for seq2seq",
    ]
    assert "Model answer. " in by_arg.stdout and "Exam guidance" in by_arg.stdout


def test_unknown_lesson_is_one_line_and_exit_2():
    result = invoke("transformers")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (
        "attn-tutor: error: no lesson 'transformers'. Did you mean 'transformer'? Run "
        "`attn-tutor lesson` to list them (or give a section number 1-13).\n")


@pytest.mark.parametrize("bad", ["0", "14"])
def test_section_numbers_out_of_range_are_unknown(bad):
    result = invoke(bad)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"attn-tutor: error: no lesson '{bad}'. Run `attn-tutor lesson`")


def test_a_lesson_id_with_exam_is_an_error():
    result = invoke("qkv", "--exam")
    assert result.exit_code == 2
    assert result.stderr == (
        "attn-tutor: error: give a lesson id or --exam, not both (got 'qkv' and --exam)\n")


def test_works_without_a_progress_store(monkeypatch):
    monkeypatch.setitem(sys.modules, "tutor.store", None)  # import fails with ImportError
    assert invoke().stdout == LISTING
    assert invoke("pooling", "--plain").exit_code == 0
    assert invoke().stdout == LISTING


def test_on_a_terminal_the_tui_opens_on_the_lesson(monkeypatch):
    import tutor.app
    import tutor.terminal

    opened = []
    monkeypatch.setattr(tutor.terminal, "is_interactive", lambda: True)
    monkeypatch.setattr(tutor.app, "run_app", lambda start: opened.append((start.mode, start.item)))
    assert invoke("scoring").exit_code == 0
    assert invoke("exam").exit_code == 0
    assert opened == [("learn", "scoring"), ("learn", "exam")]


def test_plain_text_renderer():
    md = ("# 1. Title\n\n*Summary.*\n\n## Part\n\n**Bold** and `code`.\n\n"
          "| a | bb |\n| --- | --- |\n| ccc | d |\n\n```\nx = 1\n```\n")
    assert plain_text(md) == (
        "1. Title\n========\n\nSummary.\n\nPart\n----\n\nBold and code.\n\n"
        "a    bb\nccc  d\n\n    x = 1\n")


def test_plain_text_refills_a_paragraph_instead_of_orphaning_a_word():
    """A source line a few characters over the width used to leave one word on its own line."""
    long_line = "word " * 19 + "near the end is"  # 110 characters
    md = f"{long_line}\nthe next line of the same paragraph.\n\n- an item\n  that continues\n- next\n"
    out = plain_text(md).splitlines()
    assert out[0] == "word " * 18 + "word" and out[1] == "near the end is the next line of the same paragraph."
    assert out[2:] == ["", "- an item that continues", "- next"]
    guidance = plain_text(exam_document())
    assert "Missing this is missing" in guidance
    assert "\n  is\n" not in guidance


def test_help_stays_light():
    import subprocess

    code = ("import sys\nfrom tutor.cli import app\n"
            "try:\n    app(['lesson', '--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('tutor.content', 'numpy', 'textual') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
