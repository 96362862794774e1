"""The errata catalogue (lessons/errata.toml) against the notes, the traces and the content.

* Every number an erratum calls wrong is recomputed here from the notes' own inputs at the
  notes' printed precision. An erratum stands only when the printed value does not round from
  the exact one; a value that only follows from an intermediate the notes round and state
  (0.58 for 1/√3, 1.41 for √2) is a rounding note, not an error. Counts are recounted from the
  notes' text.
* Every entry quotes the notes, and the quote is where the entry says it is.
* One source: every trace erratum has a catalogue id, every lesson Errata bullet names one,
  lessons, cards and quiz items only name ids that exist, and each lesson names all of its own.
* No lesson, card, Q&A answer or quiz text asserts a statement an erratum marks as false.

Expected values come from the notes (where right), from hand calculation with ``math``, or from
recounting the notes' text; never from the tutor's own output.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from pathlib import Path

import pytest

from tutor.content import load_exam_cards, load_exam_guidance, load_lessons, load_qa
from tutor.errata import ERROR_KINDS, REFERENCE, errata_document, load_errata, references

NOTES = Path(__file__).resolve().parents[2] / "shared/seed/000_b99e89ddbf30bea5.txt"
HEADINGS = [
    "Encoder-Decoder Foundations", "The Context Vector and Bottleneck", "Teacher Forcing",
    "Introduction to Attention Mechanisms", "Query, Key, and Value Framework", "Self-Attention",
    "Cross-Attention", "Attention Scoring Mechanisms",
    "Attention-Based Pooling vs Traditional Pooling", "Decoding Strategies",
    "Visualization and Interpretability", "Training and Optimization", "Exam Guidance Summary",
]
needs_notes = pytest.mark.skipif(not NOTES.exists(), reason="lecture notes not present")

ERRATA = {e.id: e for e in load_errata()}


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def notes_sections() -> list[list[str]]:
    """The notes' lines, split at the twelve section headings (section n is item n - 1).

    §12 runs on through the closing "Exam Guidance Summary" and "Key Industry Applications"
    that follow it, up to the page's footer; an erratum there says so in its ``part``."""
    lines = NOTES.read_text(encoding="utf-8").splitlines()
    starts, i = [], 20  # skip the title block, which repeats "Attention Mechanisms"
    for heading in HEADINGS:
        while lines[i].strip() != heading:
            i += 1
        starts.append(i)
        i += 1
    end = next(j for j in range(starts[-1], len(lines))
               if lines[j].strip() == "DNN Lecture 14 notes · Attention Mechanisms")
    bounds = starts[:-1] + [end]
    return [lines[a:b] for a, b in zip(bounds, bounds[1:])]


# --------------------------------------------------------------------------- numbers

def consistent(printed: str, value: float) -> bool:
    """``value`` rounds to ``printed`` at the printed number of decimals (either tie rule)."""
    decimals = -Decimal(printed).as_tuple().exponent
    return abs(value - float(printed)) <= 0.5 * 10.0 ** -decimals + 1e-12


R3 = math.sqrt(3)
E_Q = math.exp(1 / R3)  # e^{1/√3}
LOG = {p: math.log(p) for p in (0.4, 0.6, 0.3, 0.8)}

# id → list of (printed, exact value from the notes' inputs, value from the notes' own stated
# rounded intermediates). The notes' inputs and printed values are copied from the notes.
NUMBERS = {
    # §5: scores (1/√3, 0, 0); the notes round 1/√3 to 0.58 and state e^0.58 ≈ 1.79, sum 3.79
    "qkv-weights": [("0.64", E_Q / (E_Q + 2), 1.79 / 3.79), ("0.18", 1 / (E_Q + 2), 1 / 3.79),
                    ("0.18", 1 / (E_Q + 2), 1 / 3.79)],
    "qkv-output": [("0.64", E_Q / (E_Q + 2), 1.79 / 3.79), ("0.18", 1 / (E_Q + 2), 1 / 3.79)],
    "qkv-exp-rounding": [("1.79", E_Q, math.exp(0.58)), ("3.79", E_Q + 2, math.exp(0.58) + 2)],
    # §6: Q = [0.5, -0.2], K_2 = [0.9, 0.1], K_3 = [-0.4, 0.6]; the notes state √2 ≈ 1.41 and
    # then carry their three-decimal exponentials 0.993, 1.357, 0.797
    "scores-rounding": [
        ("0.305", 0.43 / math.sqrt(2), 0.43 / 1.41),
        ("-0.227", -0.32 / math.sqrt(2), -0.32 / 1.41),
        ("1.357", math.exp(0.43 / math.sqrt(2)), math.exp(0.305)),
        ("3.147", sum(math.exp(d / math.sqrt(2)) for d in (-0.01, 0.43, -0.32)), 0.993 + 1.357 + 0.797),
        ("0.253", math.exp(-0.32 / math.sqrt(2)) / sum(math.exp(d / math.sqrt(2)) for d in (-0.01, 0.43, -0.32)),
         0.797 / 3.147),
    ],
    # §10: log 0.4 + log 0.6 and log 0.3 + log 0.8; the notes state the logs to two decimals
    "beam-rounding": [("-1.43", LOG[0.4] + LOG[0.6], -0.92 - 0.51), ("-1.42", LOG[0.3] + LOG[0.8], -1.20 - 0.22)],
}

# Printed values the notes get right: none of these may be called an error.
RIGHT = [
    # §1 encoder, every printed number, W_HH H_2 included (0.5 × the unrounded H_2)
    *[(p, x) for p, x in zip(["0.46", "0.10", "-0.29"], [math.tanh(0.5), math.tanh(0.1), math.tanh(-0.3)])],
    *[(p, 0.5 * x) for p, x in zip(["0.23", "0.05", "-0.15"], [math.tanh(0.5), math.tanh(0.1), math.tanh(-0.3)])],
    *[(p, 0.5 * math.tanh(a + 0.5 * math.tanh(b))) for p, a, b in
      zip(["0.20", "-0.17", "-0.02"], [0.2, -0.4, 0.1], [0.5, 0.1, -0.3])],
    *[(p, math.tanh(c + 0.5 * math.tanh(a + 0.5 * math.tanh(b)))) for p, c, a, b in
      zip(["0.10", "0.13", "0.36"], [-0.1, 0.3, 0.4], [0.2, -0.4, 0.1], [0.5, 0.1, -0.3])],
    # §6: score_1, α_1, α_2 (exactly)
    ("-0.007", -0.01 / math.sqrt(2)),
    ("0.316", math.exp(-0.01 / math.sqrt(2)) / sum(math.exp(d / math.sqrt(2)) for d in (-0.01, 0.43, -0.32))),
    ("0.431", math.exp(0.43 / math.sqrt(2)) / sum(math.exp(d / math.sqrt(2)) for d in (-0.01, 0.43, -0.32))),
    # §8: 1/√3 and the additive score with identity matrices
    ("0.58", 1 / R3), ("0.56", 2 * math.tanh(1) + math.tanh(-2)),
    # §9: mean and attention pooling; §12: the training losses
    ("23.4", sum([2, 8, 3, 100, 4]) / 5), ("9.50", 0.2 * 2 + 0.35 * 8 + 0.3 * 3 + 0.05 * 100 + 0.1 * 4),
    ("0.511", -math.log(0.6)), ("0.223", -math.log(0.8)), ("0.734", -math.log(0.6) - math.log(0.8)),
]


@pytest.mark.parametrize("printed, exact", RIGHT)
def test_numbers_the_notes_get_right_round_from_the_exact_value(printed, exact):
    assert consistent(printed, exact), (printed, exact)


def test_every_numeric_entry_is_recomputed():
    numeric = {e.id for e in ERRATA.values() if e.kind in ("arithmetic", "rounding")}
    assert numeric == set(NUMBERS)


@pytest.mark.parametrize("erratum_id", sorted(NUMBERS))
def test_an_erratum_stands_only_when_the_printed_value_does_not_round_from_the_exact_one(erratum_id):
    rows = NUMBERS[erratum_id]
    from_exact = [consistent(p, exact) for p, exact, _ in rows]
    from_stated = [consistent(p, stated) for p, _, stated in rows]
    assert not all(from_exact), f"{erratum_id}: every printed value rounds from the exact one"
    if ERRATA[erratum_id].kind == "rounding":
        # a rounding note: the notes' own stated intermediates give every printed digit
        assert all(from_stated), f"{erratum_id}: not explained by the notes' stated rounding"
    else:
        # an arithmetic erratum: not even the notes' own intermediates give the printed value
        assert not all(from_stated), f"{erratum_id}: follows from the notes' stated rounding"


def test_no_erratum_calls_the_section_1_encoder_numbers_wrong():
    assert not [e for e in ERRATA.values() if e.section == 1 and e.kind in ("arithmetic", "rounding")]


@needs_notes
def test_counts_recounted_from_the_notes_text():
    text = NOTES.read_text(encoding="utf-8")
    secs = ["\n".join(s) for s in notes_sections()]
    # §2: the review, word by word
    review = re.search(r'product review: "([^"]+)"', secs[1])[1]
    assert len(review.split()) == 17 and "This review has 19 words" in secs[1]
    # §3: the distinct words the story outputs or predicts
    story = secs[2][secs[2].index("Worked Example — Error Cascade"):secs[2].index("Sense-check")]
    words = {w for q in re.findall(r'"([^"]+)"', story) for w in q.split()}
    assert words == {"The", "A", "cat", "dog", "sat", "ran", "feline"} and "Vocabulary size is 5" in story
    # §7: "1947" is the fifth token of the passage
    passage = re.search(r'Input \(encoded\): "([^"]+)"', secs[6])[1]
    assert passage.replace(".", " .").split().index("1947") + 1 == 5 and "$H_{6}$ (\"1947\")" in secs[6]
    # §6: the visual's sentence has six tokens but a "3-by-3 grid"
    assert len("The cat sat on the mat".split()) == 6 and "Draw a 3-by-3 grid" in secs[5]
    # §11: the table has four rows, the target five words; the 5×5 visual is 3 by 4
    table = [ln for ln in notes_sections()[10] if re.match(r"^(ai|mal|au|pieds)\t", ln)]
    target = re.search(r'French target \(generated\): "([^"]+)"', text)[1]
    assert len(table) == 4 and len(target.split()) == 5 and "3×3 grid" in secs[10]
    assert len(["je", "suis", "etudiant"]) * len("I am a student".split()) == 12
    # §12: one word plus <EOS>, not three states
    assert "(plus $H_{3}$ for <EOS>)" in secs[11]


def test_the_qkv_slip_reproduces_every_printed_weight():
    """qkv-weights names the slip: 1.79 / 2.79 (one e⁰ missing) gives the printed 0.64, and the
    other two share the rest, (1 − 0.64) / 2 = 0.18; the right sum 3.79 gives neither."""
    assert consistent("0.64", 1.79 / (1.79 + 1)) and consistent("0.18", (1 - 0.64) / 2)
    assert not consistent("0.64", 1.79 / 3.79) and not consistent("0.18", 1 / 3.79)
    assert "2.79" in ERRATA["qkv-weights"].correct and "2.79" in ERRATA["qkv-weights"].summary


def test_claims_that_are_numbers():
    assert 0.4 * 0.6 == pytest.approx(0.3 * 0.8)  # beam-verdict: an exact tie
    rest = [2, 8, 3, 4]
    assert 0.2 * 2 + 0.35 * 8 + 0.3 * 3 + 0.05 * 100 + 0.1 * 4 > max(rest)  # pooling-sense-check
    assert 0.05 * 100 > 9.5 / 2  # the spike supplies over half of 9.5
    assert 10 * (1 / 10) == pytest.approx(1)  # eos-uniform-and-low: uniform over 10 is 0.1 each
    v = [0.5, -0.2]
    k3 = [-0.4, 0.6]
    cos = (v[0] * k3[0] + v[1] * k3[1]) / math.hypot(*v) / math.hypot(*k3)
    assert 140 < math.degrees(math.acos(cos)) < 150  # scores-sense-check: about 145°, not 180°


# --------------------------------------------------------------------------- quotes

_OWN_LINE = ("Hook:", "Intuition + Analogy:", "Where the analogy breaks:", "Formalize", "Scope:",
             "Sense-check:", "Visual Intuition:", "Recap:", "Real-world:", "Real-World & Domain",
             "Q:", "Exam note:")
_BLOCK = ("Worked Example", "Symbol Registry", "Pitfalls:", "Comparison")


def part_of(lines: list[str], i: int, headings: set[str]) -> str:
    """The labelled part of a section that line ``i`` belongs to: its own paragraph label
    ("Scope:", "Q:", …), else the nearest heading or block label above it."""
    if lines[i].lstrip().startswith(_OWN_LINE):
        return lines[i].lstrip()
    for j in range(i, -1, -1):
        line = lines[j].strip()
        if line in headings or line.startswith(_BLOCK):
            return line
    return ""


@needs_notes
@pytest.mark.parametrize("erratum_id", sorted(ERRATA))
def test_every_entry_quotes_the_notes_where_it_says(erratum_id):
    e = ERRATA[erratum_id]
    lines = notes_sections()[e.section - 1]
    quote = squash(e.quote)
    assert quote in squash("\n".join(lines)), f"{erratum_id}: quote not in §{e.section}"
    assert len(re.findall(r"[a-z0-9']+", quote.lower())) < 10  # keep copied runs short
    if e.part:
        all_lines = NOTES.read_text(encoding="utf-8").splitlines()
        last = max(i for i, ln in enumerate(all_lines) if ln.strip() == "Prerequisite Knowledge")
        headings = {ln.strip() for ln in all_lines[last:] if ln.strip()}  # the page's contents list
        hits = [i for i, ln in enumerate(lines) if quote in squash(ln)]
        assert hits, f"{erratum_id}: the quote runs over a line break"
        parts = [part_of(lines, i, headings) for i in hits]
        assert any(p.startswith(e.part) for p in parts), (erratum_id, e.part, parts)


@needs_notes
def test_whisper_claim_is_only_in_the_decoding_real_world_paragraph():
    """Lesson 10 once placed it in the comparison and recap; it is one paragraph."""
    lines = notes_sections()[9]
    hits = [ln for ln in lines if "Whisper" in ln]
    assert len(hits) == 1 and hits[0].startswith("Real-World & Domain Connection")


# --------------------------------------------------------------------------- one source

def test_trace_errata_carry_catalogue_ids_and_the_catalogue_names_the_right_traces():
    from engine.traces import REGISTRY, build

    found: dict[str, set[str]] = {}
    for name in REGISTRY:
        for err in build(name).errata:
            assert err.id in ERRATA, f"{name}: erratum {err.id!r} is not in errata.toml"
            entry = ERRATA[err.id]
            assert entry.is_error, f"{name}: {err.id} is a {entry.kind} note, not an erratum"
            assert err.where.startswith(f"§{entry.section}") or f"§{entry.section}" in err.where, err.id
            found.setdefault(err.id, set()).add(name)
    for e in ERRATA.values():
        for trace in e.traces:
            assert trace in REGISTRY, (e.id, trace)
            if e.is_error:
                assert trace in found.get(e.id, set()), f"{e.id}: trace {trace} shows no such erratum"
            else:
                assert trace not in found.get(e.id, set()), f"{e.id}: a note shown as an erratum"


def lesson_errata_bullets(lesson) -> list[str]:
    """The bullet items of a lesson's Errata section (continuation lines joined)."""
    items: list[str] = []
    for line in lesson.part("Errata").splitlines():
        if line.startswith("- "):
            items.append(line[2:])
        elif line.startswith("  ") and items:
            items[-1] += " " + line.strip()
    return items


@pytest.mark.parametrize("lesson", load_lessons(), ids=lambda lesson: lesson.id)
def test_each_lesson_names_exactly_its_own_errata(lesson):
    named = set(references(lesson.part("Errata")))
    own = {e.id for e in ERRATA.values() if lesson.id in e.lessons}
    assert named == own, f"{lesson.id}: names {sorted(named - own)}, misses {sorted(own - named)}"
    for bullet in lesson_errata_bullets(lesson):
        assert references(bullet), f"{lesson.id}: an Errata bullet names no erratum: {bullet[:60]}"


def test_every_reference_names_an_entry():
    texts = {lesson.id: lesson.body for lesson in load_lessons()}
    texts["guidance"] = load_exam_guidance()
    for lesson_id, text in texts.items():
        for ref in REFERENCE.findall(text):
            assert ref in ERRATA, (lesson_id, ref)
    for card in load_exam_cards():
        assert all(e in ERRATA for e in card.errata), card.id
    from tutor.quiz.bank import load_bank

    for q in load_bank():
        if q.erratum_id:
            assert q.erratum_id in ERRATA and q.erratum == ERRATA[q.erratum_id].summary, q.id


def test_every_error_reaches_a_student_through_a_lesson_and_the_exam_table():
    doc = errata_document()
    for e in ERRATA.values():
        assert e.lessons
        assert f"`{e.id}`" in doc, e.id
    table = doc.split("**Not errors")[0]
    assert all((f"`{e.id}`" in table) == e.is_error for e in ERRATA.values())


# --------------------------------------------------------------------------- false claims

_ATTRIBUTION = re.compile(r"\bnotes?\b|\bnotes'|\bprint(s|ed)?\b|\blecture'?s?\b|\b(said|says|claims?|"
                          r"calls?|credits?|attribut\w+)\b", re.I)
_CODE = re.compile(r"`[^`\n]*`")
_QUOTED = re.compile(r'"[^"\n]*"|“[^”\n]*”')


_ABBREVIATIONS = re.compile(r"\b(et al|i\.e|e\.g|cf|vs)\.", re.I)


def sentences(text: str) -> list[str]:
    """Sentences of ``text``; "et al.", "i.e." and "e.g." end none (their dots are dropped, so
    a claim about "Sutskever et al." stays one sentence for the patterns)."""
    text = re.sub(r"\s+", " ", text.replace("\n- ", " . ").replace("\n\n", " . "))
    text = _ABBREVIATIONS.sub(lambda m: m.group(1).replace(".", ""), text)
    return [s for s in re.split(r"(?<=[.!?;])\s+", text) if s.strip()]


def asserts(text: str, pattern: str) -> str | None:
    """The sentence of ``text`` that asserts ``pattern`` in the tutor's own voice, if any.

    A sentence that attributes what it says to someone (the notes say, the lecture prints, the
    table calls) reports a claim rather than making it, a match inside quotation marks is a
    quotation, and inline code (an erratum's id) is not prose.
    """
    rx = re.compile(pattern, re.I)
    for s in sentences(_CODE.sub("", text)):
        if _ATTRIBUTION.search(s):
            continue
        quoted = [m.span() for m in _QUOTED.finditer(s)]
        for m in rx.finditer(s):
            if not any(a <= m.start() and m.end() <= b for a, b in quoted):
                return s
    return None


def asserting_texts() -> dict[str, str]:
    """Every text the tutor states as true: lessons, cards, Q&A answers, guidance, the quiz
    (prompts, right answers, explanations, hints, why-wrong lines; not the wrong choices and
    not the statements of false true/false items), the structured exam questions (stems,
    prompts, scheme points, model answers; not their lists of mistakes), the formula sheet and
    the catalogue's own corrections."""
    from tutor.quiz.bank import load_bank

    out = {f"lesson {lesson.id}": lesson.body for lesson in load_lessons()}
    for card in load_exam_cards():
        out[f"card {card.id}"] = "\n\n".join([card.must_know, card.top_pitfall, card.self_check_answer])
    for item in load_qa():
        out[f"qa {item.id}"] = item.answer
    out["guidance"] = load_exam_guidance()
    for q in load_bank():
        parts = [q.explanation, q.hint or "", *q.why_wrong, *q.key_points]
        if q.kind != "true_false" or q.answer is True:
            parts.append(q.prompt)
        if q.kind == "mcq":
            parts.append(q.choices[q.answer])
        elif q.kind in ("fill", "free"):
            parts.append(str(q.answer))
        out[f"quiz {q.id}"] = "\n\n".join(parts)
    from tutor.exam.model import load_questions
    from tutor.exam.sheet import load_sheet

    for spec in load_questions():  # structured questions: not their "mistakes" lists
        out[f"exam {spec.id}"] = "\n\n".join(
            [spec.stem] + [t for p in spec.parts for t in (p.prompt, p.model, *p.points)])
    sheet = load_sheet()
    out["sheet"] = "\n\n".join([f"{f.name}: {f.formula}. {f.shapes}" for g in sheet.groups
                                 for f in g.formulas] + [m for _, m in sheet.notation])
    for e in ERRATA.values():
        out[f"errata {e.id}"] = "\n\n".join([e.correct, e.summary])
    return out


def test_no_content_asserts_what_an_erratum_marks_false():
    texts = asserting_texts()
    found = []
    for e in ERRATA.values():
        for pattern in e.false_claims:
            for where, text in texts.items():
                hit = asserts(text, pattern)
                if hit:
                    found.append(f"{where} asserts {e.id}: {hit[:120]}")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("text, pattern, expected", [
    ('C_3 is mostly H_2, because "mal" goes with the feet.', r"\bmal\b[^.]{0,40}goes with[^.]{0,15}feet", True),
    ('The notes say "mal" goes with the feet.', r"\bmal\b[^.]{0,40}goes with[^.]{0,15}feet", False),
    ('A pupil might think "mal goes with feet".', r"\bmal\b[^.]{0,40}goes with[^.]{0,15}feet", False),
    ("Stopping, the weights can be spread out and low.", r"spread out and low", True),
    ("In 2017 Vaswani et al. introduced self-attention.", r"vaswani[^.;]{0,40}introduced self-attention", True),
])
def test_the_claim_detector_tells_assertions_from_reports(text, pattern, expected):
    assert (asserts(text, pattern) is not None) is expected


def test_error_kinds_are_the_engines():
    from engine.trace import Erratum

    assert "claim" in Erratum.__doc__ and set(ERROR_KINDS) == {
        "arithmetic", "miscount", "inconsistency", "wording", "claim"}


def test_the_readme_table_lists_only_errors_from_the_catalogue():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    table = readme.split("### Where the notes are wrong")[1].split("\n\n")[2]
    rows = [r for r in table.splitlines() if r.startswith("| §")]
    ids = [re.search(r"`([a-z0-9-]+)` \|$", r)[1] for r in rows]
    assert rows and len(ids) == len(rows)
    for erratum_id, row in zip(ids, rows):
        assert ERRATA[erratum_id].is_error, f"README lists {erratum_id}, a {ERRATA[erratum_id].kind} note"
        assert row.startswith(f"| §{ERRATA[erratum_id].section} "), row
    assert not any(r.startswith("| §6") for r in rows)  # the §6 digits are a rounding note


@pytest.mark.parametrize("erratum_id, old_text", [
    # wordings the tutor itself once used, each now caught by the new entries' patterns
    ("rnn-output-count", "An ordinary RNN emits one output per input step, so the number of outputs is fixed."),
    ("cross-roles-swapped", "Swapping them would make the decoder attend over its own states, i.e. self-attention."),
    ("sutskever-bottleneck-s4", "The sequence-to-sequence bottleneck was identified by Sutskever et al. (2014)."),
    ("flashattention-exact", "Long inputs need approximations (sparse attention, Linformer, FlashAttention)."),
    ("weights-computed-not-learned", "The attention weights are learned during training."),
    ("vaswani-not-first-self-attention", "In 2017 Vaswani et al. introduced self-attention."),
])
def test_the_new_entries_catch_the_old_wordings(erratum_id, old_text):
    assert any(asserts(old_text, p) for p in ERRATA[erratum_id].false_claims), erratum_id
