"""The reading material: every file loads, every link resolves, the text is our own, and a
malformed file is reported with its name, the field and what was expected."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.traces import REGISTRY
from tutor import content
from tutor.render.documents import exam_document, lesson_document
from tutor.content import (
    EXAM_TOPICS,
    HEADINGS,
    LESSON_IDS,
    ContentError,
    get_lesson,
    load_exam_cards,
    load_exam_guidance,
    load_lessons,
    load_qa,
)

REPO = Path(__file__).resolve().parents[1]
OVERLAP = Path(__file__).resolve().parents[2] / "shared/tools/overlap.py"
# the project's rule covers all of lessons/ and tutor/ (docstrings too), not only the lesson text
OWN_WORDS_PATHS = ["lessons", "tutor"]

TRACE_LINK = re.compile(r"attn-tutor trace ([a-z0-9-]+)")
LESSON_LINK = re.compile(r"attn-tutor lesson ([a-z0-9-]+)")


def all_texts() -> dict[str, str]:
    """Every piece of prose a student can read, keyed by where it comes from."""
    texts = {f"lesson {l.id}": l.body for l in load_lessons()}
    for card in load_exam_cards():
        texts[f"card {card.id}"] = "\n".join(
            [card.must_know, card.key_formula, card.top_pitfall, card.self_check,
             card.self_check_answer])
    for item in load_qa():
        texts[f"qa {item.id}"] = item.question + "\n" + item.answer
    texts["guidance"] = load_exam_guidance()
    return texts


# --------------------------------------------------------------------------- the real content


def test_twelve_lessons_in_lecture_order_with_the_shared_titles():
    table = (REPO / "docs/DEVELOPING.md").read_text()
    expected = re.findall(r"^\| (\d+) \| `([a-z-]+)` \| (.+?) \|$", table, re.M)
    assert [(int(s), i, t) for s, i, t in expected] == [
        (l.section, l.id, l.title) for l in load_lessons()]
    assert tuple(l.id for l in load_lessons()) == LESSON_IDS


def test_every_lesson_has_the_headings_a_symbol_table_and_a_summary():
    for lesson in load_lessons():
        assert tuple(lesson.parts) == HEADINGS, lesson.id
        assert lesson.symbols, lesson.id
        assert all(s.symbol and s.meaning and s.shape for s in lesson.symbols)
        assert len(lesson.summary) > 40, lesson.id


def test_front_matter_links_resolve():
    for lesson in load_lessons():
        assert lesson.quiz_topic == lesson.id
        assert lesson.traces, lesson.id
        for name in lesson.traces + lesson.heatmaps:
            assert name in REGISTRY, (lesson.id, name)
        assert set(lesson.related) <= set(LESSON_IDS) and lesson.id not in lesson.related
        assert set(lesson.exam_topics) <= set(EXAM_TOPICS)


def test_every_front_matter_trace_is_linked_from_the_text_and_every_text_link_exists():
    for lesson in load_lessons():
        linked = set(lesson.trace_links())
        assert set(lesson.traces) <= linked, (lesson.id, set(lesson.traces) - linked)
    for where, text in all_texts().items():
        for name in TRACE_LINK.findall(text):
            assert name in REGISTRY, (where, name)
        for name in LESSON_LINK.findall(text):
            assert name in LESSON_IDS or name == "exam", (where, name)


def test_every_trace_is_taught_by_some_lesson():
    linked = {t for l in load_lessons() for t in l.traces}
    assert linked == set(REGISTRY)


def test_inline_code_never_spans_a_line_break():
    # a command split over two lines would not match TRACE_LINK and renders badly in --plain
    for where, text in all_texts().items():
        prose = re.sub(r"```.*?```", "", text, flags=re.S)
        for span in re.findall(r"`([^`]*)`", prose):
            assert "\n" not in span, (where, span)


def test_nine_exam_cards_with_model_answers_and_valid_links():
    cards = load_exam_cards()
    assert tuple(c.id for c in cards) == EXAM_TOPICS
    for card in cards:
        assert card.lesson in LESSON_IDS and card.id in get_lesson(card.lesson).exam_topics
        assert set(card.connects_to) <= set(LESSON_IDS) and card.connects_to
        assert set(card.traces) <= set(REGISTRY)
        assert card.self_check.rstrip().endswith("?") or card.self_check.startswith(
            ("Show", "Derive"))
        assert len(card.self_check_answer) > 150, card.id
    covered = {t for l in load_lessons() for t in l.exam_topics}
    assert covered == set(EXAM_TOPICS)


def test_qa_covers_the_notes_questions_and_each_item_names_a_lesson():
    items = load_qa()
    from_notes = [i for i in items if i.source.startswith("notes")]
    assert len(from_notes) == 6  # the notes' six "Q: … A: …" items
    assert {i.lesson for i in from_notes} == {"encoder-decoder", "context-vector", "qkv", "decoding"}
    assert len({i.id for i in items}) == len(items)
    assert all(i.lesson in LESSON_IDS for i in items)


@pytest.mark.parametrize(("lesson_id", "trace", "must_say"), [
    ("qkv", "qkv", ["0.64", "0.471", "0.264", "[0.471, 0.264]"]),
    ("decoding", "greedy-vs-beam", ["-1.42", "-1.427", "0.24"]),
    ("context-vector", "bottleneck", ["19", "17"]),
    ("visualisation", "heatmap-reading", ["3 × 3", "5 × 3", "j'"]),
    ("cross-attention", "cross-attention", ["H_6", "H_5"]),
])
def test_errata_state_printed_and_correct_values_and_point_to_the_trace(lesson_id, trace, must_say):
    errata = get_lesson(lesson_id).part("Errata")
    assert f"attn-tutor trace {trace}" in errata
    for text in must_say:
        assert text in errata, (lesson_id, text)


def test_self_attention_errata_name_each_weight_the_notes_round_differently():
    """The notes print α = 0.316, 0.431, 0.253; the lesson must not claim they all agree."""
    from engine.traces import build

    printed = [0.316, 0.431, 0.253]  # the notes' §6 scalar example
    computed = build("scores").result["weights"]
    errata = get_lesson("self-attention").part("Errata")
    assert "agree to three decimals" not in errata
    differ = [j for j in range(3) if f"{computed[j]:.3f}" != f"{printed[j]:.3f}"]
    assert differ  # α_3 = 0.2535 → 0.254
    for j in differ:
        assert f"α_{j + 1}" in errata and f"{computed[j]:.3f}" in errata and f"{printed[j]:.3f}" in errata


def test_cross_attention_counts_the_tokens_the_trace_uses():
    """The lesson once counted 11 tokens (full stops included) while its trace used 10."""
    from engine.traces import build

    text = get_lesson("cross-attention").part("Worked example")
    index_row = next(line for line in text.splitlines() if line.startswith("| index |"))
    token_row = next(line for line in text.splitlines() if line.startswith("| token |"))
    n = len(index_row.strip("| \n").split("|")) - 1
    tokens = [c.strip().replace("⟨EOS⟩", "<EOS>") for c in token_row.strip("| \n").split("|")[1:]]
    trace = build("cross-attention")
    assert tokens == trace.inputs["tokens"] and n == len(tokens) == 10
    assert np.allclose(trace.result["weights"][1], 1 / n)
    assert f"1/{n} = {1 / n:g}" in text
    assert tokens.index("1947") + 1 == 5 and "**H_5**" in text


def test_the_exam_document_lists_every_error_from_the_catalogue():
    from tutor.errata import load_errata

    exam = exam_document()
    table = exam.split("## Where the printed notes are wrong")[1].split("**Not errors")[0]
    for e in load_errata():
        assert (f"`{e.id}`" in table) == e.is_error, e.id
    # the rounding notes are listed as such, not as errors
    notes = exam.split("**Not errors: rounding.**")[1].split("**Reading")[0]
    for e in load_errata():
        assert (f"`{e.id}`" in notes) == (e.kind == "rounding"), e.id
    assert "`scores-rounding`" in notes and "`qkv-exp-rounding`" in notes


def test_the_exam_table_names_every_trace_that_shows_an_erratum():
    """Every trace named in the table shows an erratum with that id, and every trace erratum
    is in the table: the table promises both."""
    from engine.traces import build
    from tutor.errata import load_errata

    listed = {(t, e.id) for e in load_errata() if e.is_error for t in e.traces}
    shown = {(name, err.id) for name in REGISTRY for err in build(name).errata}
    assert listed == shown


def test_documents_carry_title_qa_and_links():
    doc = lesson_document(get_lesson("qkv"))
    assert doc.startswith("# 5. The query-key-value framework\n")
    assert "## Questions students ask" in doc and "**Q: Do attention weights keep" in doc
    assert "- Traces: `attn-tutor trace qkv`, `attn-tutor trace self-attention`" in doc
    assert "- Quiz topic: qkv" in doc
    exam = exam_document()
    assert exam.startswith("# Exam revision cards\n")
    assert [m for m in re.findall(r"^## (\d)\. ", exam, re.M)] == [str(n) for n in range(1, 10)]
    assert "# Exam guidance" in exam


def test_loading_is_cached_and_light():
    assert load_lessons() is load_lessons()
    code = ("import sys; from tutor.content import load_lessons, load_qa, load_exam_cards\n"
            "load_lessons(); load_qa(); load_exam_cards()\n"
            "print(sorted(m for m in ('numpy', 'rich', 'textual', 'numba') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_get_lesson_unknown_id_names_the_choices():
    with pytest.raises(LookupError, match=r"^no lesson 'nope'; expected one of: encoder-decoder, "):
        get_lesson("nope")


@pytest.mark.skipif(not OVERLAP.exists(), reason="overlap tool not available")
def test_no_run_of_ten_words_is_shared_with_the_notes():
    out = subprocess.run([sys.executable, str(OVERLAP), *OWN_WORDS_PATHS], cwd=REPO,
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "0 shared run(s) of 10+ words", out.stdout


# --------------------------------------------------------------------------- malformed files


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A content folder with one real lesson, the real cards, guidance and Q&A."""
    base = tmp_path / "lessons"
    (base / "sections").mkdir(parents=True)
    src = content._root(None)
    shutil.copy(src / "sections/05-qkv.md", base / "sections/05-qkv.md")
    shutil.copytree(src / "exam", base / "exam")
    shutil.copy(src / "qa.toml", base / "qa.toml")
    shutil.copy(src / "errata.toml", base / "errata.toml")
    return base


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def lesson_error(root: Path) -> str:
    with pytest.raises(ContentError) as info:
        load_lessons(root)
    return str(info.value)


def test_a_copied_lesson_loads_from_another_root(root):
    (lesson,) = load_lessons(root)
    assert lesson.id == "qkv" and lesson.path.parent == root / "sections"


QKV = "lessons/sections/05-qkv.md"


@pytest.mark.parametrize(("old", "new", "message"), [
    ('summary = "', 'summery = "',
     f"{QKV}: missing field 'summary' (expected a string)"),
    ("section = 5", 'section = "five"',
     f"{QKV}: field 'section' is 'five'; expected an integer"),
    ("section = 5", "section = 6",
     f"{QKV}: field 'section' is 6; expected 5 for lesson 'qkv'"),
    ('title = "The query-key-value framework"', 'title = ""',
     f"{QKV}: field 'title' is ''; expected a string, not empty"),
    ('traces = ["qkv", "self-attention"]', 'traces = "qkv"',
     f"{QKV}: field 'traces' is 'qkv'; expected a list of strings"),
    ('related = ["attention-intro"', 'related = ["attention"',
     f"{QKV}: field 'related' has 'attention'; expected one of: encoder-decoder, "),
    ('exam_topics = ["exam-qkv"]', 'exam_topics = ["qkv"]',
     f"{QKV}: field 'exam_topics' has 'qkv'; expected one of: exam-encoder-decoder, "),
    ('quiz_topic = "qkv"', 'quiz_topic = "qkv"\ncolour = "red"',
     f"{QKV}: unknown field 'colour'; expected only: id, section, title, "),
    ('quiz_topic = "qkv"', 'quiz_topic = qkv',
     f"{QKV}: front matter: not valid TOML ("),
    ("## Errata", "### Errata",
     f"{QKV}: body: missing heading '## Errata'"),
    ("## Errata", "## Corrections",
     f"{QKV}: body: heading 11 is '## Corrections'; expected '## Errata'"),
    ("## Errata", "## Errata\n\nFine.\n\n## Notes",
     f"{QKV}: body: unexpected heading '## Notes'; expected only: Learning goals, "),
    ("## Recap", "## Summary",
     f"{QKV}: body: heading 8 is '## Summary'; expected '## Recap'"),
    ("| Symbol | Meaning | Shape |", "| Symbol | Meaning |",
     f"{QKV}: body: '## Symbols' needs a table with header | Symbol | Meaning | Shape |"),
    ("| W_Q | query projection | d × d_k |", "| W_Q | query projection | |",
     f"{QKV}: body: symbol table row '| W_Q | query projection | |'; expected three"),
])
def test_a_broken_lesson_names_file_field_and_expectation(root, old, new, message):
    edit(root / "sections/05-qkv.md", old, new)
    assert lesson_error(root).startswith(message)


def test_missing_front_matter_and_unclosed_front_matter(root):
    path = root / "sections/05-qkv.md"
    text = path.read_text()
    path.write_text(text.replace("+++\n", "", 1))
    assert lesson_error(root) == f"{QKV}: front matter: expected the file to start with a '+++' line"
    path.write_text(text.replace("\n+++\n", "\n", 1))
    load_lessons.cache_clear()
    assert lesson_error(root) == f"{QKV}: front matter: expected a closing '+++' line"


def test_file_name_must_match_the_front_matter(root):
    (root / "sections/05-qkv.md").rename(root / "sections/05-attention.md")
    assert lesson_error(root) == (
        "lessons/sections/05-attention.md: file name: expected 05-qkv.md to match the front matter")


def test_text_before_the_first_heading_is_rejected(root):
    edit(root / "sections/05-qkv.md", "## Learning goals", "Stray text.\n\n## Learning goals")
    assert lesson_error(root) == f"{QKV}: body: expected '## Learning goals' before any text"


def test_a_heading_inside_a_code_fence_is_not_a_heading(root):
    edit(root / "sections/05-qkv.md", "Q = X W_Q      (n × d_k)", "## not a heading\nQ = X W_Q")
    (lesson,) = load_lessons(root)
    assert "## not a heading" in lesson.part("Formal statement")


def test_a_broken_card_names_the_card_and_field(root):
    path = root / "exam/cards.toml"
    edit(path, 'self_check_answer = """\nA standard (tagging)', 'answer = """\nA standard (tagging)')
    with pytest.raises(ContentError) as info:
        load_exam_cards(root)
    assert str(info.value) == (
        "lessons/exam/cards.toml: card 1 (exam-encoder-decoder): "
        "missing field 'self_check_answer' (expected a string)")


def test_cards_must_cover_the_nine_topics_in_order(root):
    path = root / "exam/cards.toml"
    text = path.read_text()
    last = text.rindex("[[card]]")
    path.write_text(text[:last])
    with pytest.raises(ContentError, match=r"^lessons/exam/cards.toml: cards are exam-encoder-"
                                           r"decoder, .*, exam-decoding; expected one card per "
                                           r"exam topic in this order: "):
        load_exam_cards(root)


def test_card_lesson_must_exist(root):
    edit(root / "exam/cards.toml", 'lesson = "encoder-decoder"', 'lesson = "rnn"')
    with pytest.raises(ContentError, match=r"^lessons/exam/cards.toml: card 1 "
                                           r"\(exam-encoder-decoder\): field 'lesson' has 'rnn'"):
        load_exam_cards(root)


def test_qa_duplicate_id_and_bad_toml(root):
    path = root / "qa.toml"
    edit(path, 'id = "qa-context-enough"', 'id = "qa-why-not-plain-rnn"')
    with pytest.raises(ContentError) as info:
        load_qa(root)
    assert str(info.value) == ("lessons/qa.toml: item 3 (qa-why-not-plain-rnn): field 'id' "
                               "'qa-why-not-plain-rnn' is used twice; expected unique ids")
    path.write_text("[[item]\n")
    load_qa.cache_clear()
    with pytest.raises(ContentError, match=r"^lessons/qa.toml: not valid TOML \("):
        load_qa(root)


def test_missing_files_are_named(tmp_path):
    base = tmp_path / "lessons"
    base.mkdir()
    with pytest.raises(ContentError, match=r"^lessons/qa.toml: file is missing$"):
        load_qa(base)
    with pytest.raises(ContentError, match=r"^lessons/exam/guidance.md: file is missing$"):
        load_exam_guidance(base)


@pytest.mark.slow
def test_heatmap_links_name_traces_that_draw_heatmaps():
    """Build each trace a lesson lists under ``heatmaps`` (its module must exist by now)."""
    import importlib.util

    from engine.traces import REGISTRY, build

    names = sorted({h for l in load_lessons() for h in l.heatmaps})
    missing = [n for n in names if importlib.util.find_spec(REGISTRY[n].module) is None]
    if missing:
        pytest.skip("trace builders not written yet: " + ", ".join(missing))
    for name in names:
        assert build(name).heatmaps, name


# --------------------------------------------------------------------------- lesson 13 (issue 34)


def test_the_transformer_lesson_counts_the_base_model_with_the_engine_and_by_hand():
    """Vaswani et al.'s base sizes; every count in the lesson's table is the engine's
    (TransformerConfig.shapes) and agrees with the hand formulas 4d² + 4d (attention),
    2·d·d_ff + d_ff + d (feed-forward) and 2d per LayerNorm."""
    from engine.transformer.model import TransformerConfig

    text = get_lesson("transformer").body
    d, f, h, N, V = 512, 2048, 8, 6, 37000
    for fact in ("N = 6", "d_model = 512", "h = 8", "d_k = d_v = 512 / 8 = 64", "d_ff = 2048"):
        assert fact in text, fact
    cfg = TransformerConfig(vocab_size=V, d_model=d, num_heads=h, d_ff=f, num_encoder_layers=N,
                            num_decoder_layers=N, tie_embeddings=True)
    shapes = cfg.shapes()

    def count(prefix: str) -> int:
        return sum(int(np.prod(s)) for name, s in shapes.items() if name.startswith(prefix))

    attn, ffn = count("encoder.layers.0.self_attn"), count("encoder.layers.0.linear")
    enc, dec = count("encoder.layers.0."), count("decoder.layers.0.")
    table = count("tgt_embed")
    assert (attn, ffn, enc, dec, table) == (4 * d * d + 4 * d, 2 * d * f + f + d,
                                            4 * d * d + 4 * d + 2 * d * f + f + d + 2 * 2 * d,
                                            enc + 4 * d * d + 4 * d + 2 * d, V * d)
    layers = N * enc + N * dec
    for n in (attn, ffn, enc, dec, layers, table, layers + table):
        assert f"| {n:,} |" in text, n
    assert cfg.d_head == 64
    assert round(100 * table / (layers + table)) == 30 and "30 %" in text
    assert 2 * d * f == 2 * (4 * d * d) and "twice the weights" in text


def test_the_transformer_lesson_shows_post_norm_beside_pre_norm_and_credits_the_positions():
    text = get_lesson("transformer").body
    assert "x ← LN(x + MultiHead(x, x, x))" in text          # post-norm, as published
    assert "x ← x + MultiHead(LN(x), LN(x), LN(x))" in text    # pre-norm
    assert "warm-up" in text and "Xiong et al." in text
    assert "lecture §6" not in text and "give no formula" in text  # the sinusoids are not the notes'


def test_the_positions_card_lets_a_causal_decoder_learn_its_own_position():
    card = next(c for c in load_exam_cards() if c.id == "exam-positions")
    text = " ".join((card.must_know + card.top_pitfall).split())
    assert "causal decoder" in text and "own position" in text
    assert "source's order" in text
    assert "Thinking the causal mask gives the model word order" not in text


# --------------------------------------------------------------------------- beyond the notes (issue 34)


def _shown(x: float) -> str:
    from engine.trace import fmt_num

    return fmt_num(float(x), 4)


def test_the_designed_query_example_is_the_scores_traces():
    """Lesson 5's designed query: the numbers it quotes are the trace's on those inputs, and the
    output is near (V_1 + V_2) / 2, worked by hand."""
    from engine.traces import build

    text = get_lesson("qkv").part("Worked example")
    t = build("scores", {"Q": [3.0, 3.0], "K": [[1, 0], [0, 1], [-1, 0]],
                         "V": [[2, -1], [1, 2], [0, -1]]})
    for x in [*t.result["scores"], *t.result["weights"], *t.result["context"]]:
        assert _shown(x) in text, x
    assert np.allclose(t.result["scores"], [3 / 2 ** 0.5, 3 / 2 ** 0.5, -3 / 2 ** 0.5])
    assert np.allclose(t.result["context"], [1.5, 0.5], atol=0.02)
    assert "(V_1 + V_2) / 2 = [1.5, 0.5]" in text


def test_the_distance_example_is_the_traces():
    from engine.traces import build

    text = " ".join(get_lesson("scoring").part("Worked example").split())
    r = build("distance-scores").result
    for key in ("scores", "weights", "dot_weights"):
        assert "(" + ", ".join(_shown(x) for x in r[key]) + ")" in text, key
    assert "1.04, 0.25 and 1.45" in text and "‖q‖² = 0.29" in text


def test_the_new_topics_are_taught_where_an_examinee_meets_them():
    scoring, qkv = get_lesson("scoring").body, get_lesson("qkv").body
    sa = get_lesson("self-attention").body
    assert "-‖q - k‖² = 2 q · k - ‖q‖² - ‖k‖²" in scoring and "distance-scores" in get_lesson("scoring").traces
    for fact in ("Luong", "h_t", "s_{t-1}", "local", "σ = D / 2", "input feeding"):
        assert fact in scoring, fact
    assert "Designing a query" in qkv and "q = c · (K_a + K_b)" in qkv
    for fact in ("What a second head adds", "convex combination", "Michel", "Voita", "38 of the 48"):
        assert fact in sa, fact
