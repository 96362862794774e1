"""The hand-written quiz bank: content checks, answer marking and loader error messages.

Every numeric answer in ``lessons/quiz`` is recomputed here from its inputs with plain
``math`` (no engine, no copied results), so a hand-typed number cannot slip through.
"""

from __future__ import annotations

import itertools
import math
import re
import subprocess
import sys
import tomllib
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from tutor.quiz import bank
from tutor.quiz.bank import (
    EXAM_TOPICS,
    SECTIONS,
    Question,
    load_bank,
)
from tutor.content_schema import ContentError
from tutor.marking import Verdict, number_hint, parse_number
from tutor.quiz.marking import check_answer

REPO = Path(__file__).resolve().parents[1]
QUIZ = REPO / "lessons" / "quiz"
OVERLAP = REPO.parent / "shared" / "tools" / "overlap.py"


@pytest.fixture(scope="module")
def questions() -> list[Question]:
    bank.clear_cache()
    return load_bank()


@pytest.fixture(scope="module")
def qmap(questions: list[Question]) -> dict[str, Question]:
    return {q.id: q for q in questions}


# --------------------------------------------------------------------------- helpers

def softmax(xs: list[float]) -> list[float]:
    m = max(xs)
    es = [math.exp(x - m) for x in xs]
    s = sum(es)
    return [e / s for e in es]


def dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def var_dot_by_enumeration(d: int) -> float:
    """Var(q·k) with q_i, k_i independent, uniform on {−1, +1} (mean 0, variance 1)."""
    values = []
    for q in itertools.product((-1, 1), repeat=d):
        for k in itertools.product((-1, 1), repeat=d):
            values.append(dot(list(q), list(k)))
    mean = sum(values) / len(values)
    return sum((v - mean) ** 2 for v in values) / len(values)


def var_dot(d_k: int) -> float:
    """Var(q·k) = d_k · Var(q_i k_i); the per-term variance is checked by enumeration."""
    per_term = var_dot_by_enumeration(1)
    assert var_dot_by_enumeration(4) == pytest.approx(4 * per_term)
    return d_k * per_term


def ce_grad_by_differences(probs: list[float], correct: int, w: int, h: float = 1e-6) -> float:
    """∂(−log softmax(z)[correct])/∂z_w by central differences, with z = log(probs)."""
    z = [math.log(p) for p in probs]

    def loss(zz: list[float]) -> float:
        return -math.log(softmax(zz)[correct])

    up = z.copy()
    down = z.copy()
    up[w] += h
    down[w] -= h
    return (loss(up) - loss(down)) / (2 * h)


def nucleus(probs: list[float], p: float) -> list[float]:
    """Smallest top set whose mass reaches p (the crossing token is kept)."""
    kept, total = [], 0.0
    for x in sorted(probs, reverse=True):
        kept.append(x)
        total += x
        if total >= p - 1e-12:
            break
    return kept


def quoted(text: str) -> list[str]:
    return re.findall(r'"([^"]+)"', text)


def h1() -> list[float]:
    x1 = [0.5, 0.1, -0.3, 0.2]
    return [math.tanh(x) for x in x1[:3]]


SA_SCORES = [dot([0.5, -0.2], k) / math.sqrt(2) for k in ([0.3, 0.8], [0.9, 0.1], [-0.4, 0.6])]
CAT_CHAT = [0.6, 0.3, 0.1]  # P(chat), P(chien), P(<EOS>) at step 1
BEAM = {"the": 0.4, "a": 0.3, "an": 0.2, "some": 0.1}
READINGS = [2, 8, 3, 100, 4]
POOL_WEIGHTS = [0.2, 0.35, 0.3, 0.05, 0.1]

# id -> independent calculation (given the question, for the ones that read their prompt)
NUMERIC: dict[str, Callable[[Question], float]] = {
    "ed-whx-size": lambda q: 3 * 4,
    "ed-rnn-param-count": lambda q: 3 * 4 + 3 * 3 + 3,
    "ed-h1-trace": lambda q: h1()[0],
    "ed-h2-trace": lambda q: math.tanh(0.2 + 0.5 * h1()[0]),
    "cv-review-word-count": lambda q: sum(len(piece.split()) for piece in quoted(q.prompt)),
    "cv-review-per-word": lambda q: 8 / 17,
    "cv-size-fixed": lambda q: 12,
    "tf-step3-loss": lambda q: -math.log(0.9),
    "tf-expected-forced-steps": lambda q: 12 * (1 - 0.25),
    "ai-weight-sum": lambda q: 1 - 0.2 - 0.1,
    "tr-head-width": lambda q: 64 / 2,
    "tr-score-work": lambda q: 41 ** 2 * 64,
    "tr-pe-first": lambda q: math.sin(1 / 10000 ** (0 / 4)),
    "ai-context-component": lambda q: sum(a * h[1] for a, h in zip([0.6, 0.3, 0.1], [[1, 0], [0, 1], [1, 1]])),
    "ai-pair-count": lambda q: 40 * 30,
    "qkv-score-1": lambda q: dot([0, 1, 0], [0, 1, 0]) / math.sqrt(3),
    "qkv-softmax-first": lambda q: softmax([1 / math.sqrt(3), 0, 0])[0],
    "qkv-softmax-second": lambda q: softmax([1 / math.sqrt(3), 0, 0])[1],
    "qkv-wq-size": lambda q: 512 * 64,
    "sa-score-k2": lambda q: SA_SCORES[1],
    "sa-weight-k2": lambda q: softmax(SA_SCORES)[1],
    "sa-score-count": lambda q: 1000 * 1000,
    "ca-weight-count": lambda q: 4 * 7,
    "ca-memory": lambda q: 200 * 512,
    "ca-qa-position": lambda q: [w.strip(".") for w in quoted(q.prompt)[0].split()].index("1947") + 1,
    "ca-qa-rest": lambda q: 1 - 0.85 - 0.05,
    "scoring-sqrt-64": lambda q: math.sqrt(64),
    "scoring-var-64": lambda q: var_dot(64),
    "scoring-std-256": lambda q: math.sqrt(var_dot(256)),
    "scoring-var-after-scaling": lambda q: var_dot(64) / math.sqrt(64) ** 2,
    "scoring-scale-sixteen": lambda q: 16 / math.sqrt(64),
    "scoring-saturated-weight": lambda q: softmax([8, 0])[0],
    "scoring-scaled-weight": lambda q: softmax([8 / math.sqrt(64), 0])[0],
    "scoring-additive-value": lambda q: dot([1, 1, 1], [math.tanh(a + b) for a, b in zip([1, 0, -1], [0, 1, -1])]),
    "scoring-scaled-value": lambda q: dot([1, 0, -1], [0, 1, -1]) / math.sqrt(3),
    "scoring-softmax-210": lambda q: softmax([2, 1, 0])[0],
    "scoring-additive-param-count": lambda q: 10 * 4 + 10 * 6 + 10,
    "pool-max": lambda q: max(READINGS),
    "pool-mean": lambda q: sum(READINGS) / len(READINGS),
    "pool-attention": lambda q: dot(POOL_WEIGHTS, READINGS),
    "pool-spike-share": lambda q: POOL_WEIGHTS[3] * READINGS[3],
    "pool-typical-mean": lambda q: sum([2, 8, 3, 4]) / 4,
    "dec-logprob-the-cat": lambda q: math.log(0.4) + math.log(0.6),
    "dec-prob-a-dog": lambda q: 0.3 * 0.8,
    "dec-ln-03": lambda q: math.log(0.3),
    "dec-nucleus-size": lambda q: len(nucleus(list(BEAM.values()), 0.8)),
    "dec-nucleus-renorm": lambda q: 0.4 / sum(nucleus(list(BEAM.values()), 0.8)),
    "dec-topk-renorm": lambda q: 0.4 / sum(sorted(BEAM.values(), reverse=True)[:2]),
    "dec-temperature": lambda q: softmax([2 / 2, 0 / 2])[0],
    "dec-beam-candidates": lambda q: 2 * 50_000,
    "vis-row-sum": lambda q: 1 - 0.1 - 0.2,
    "vis-average-weight": lambda q: 1 / 50,
    "vis-relative-weight": lambda q: 0.15 / (1 / 50),
    "vis-grid-size": lambda q: len(quoted(q.prompt)[0].split()) * len(quoted(q.prompt)[1].split()),
    "vis-je-suis-size": lambda q: len(quoted(q.prompt)[0].split()) * len(quoted(q.prompt)[1].split()),
    "train-ce-step1": lambda q: -math.log(0.6),
    "train-ce-total": lambda q: -math.log(0.6) - math.log(0.8),
    "train-ce-mean": lambda q: (-math.log(0.6) - math.log(0.8)) / 2,
    "train-grad-correct": lambda q: ce_grad_by_differences(CAT_CHAT, correct=0, w=0),
    "train-grad-other": lambda q: ce_grad_by_differences(CAT_CHAT, correct=0, w=1),
    "train-uniform-loss": lambda q: -math.log(1 / 5),
    "train-well-trained": lambda q: -2 * math.log(0.99),
    "train-wo-size": lambda q: 50_000 * 512,
    "train-eos-count": lambda q: len(["1947", "<EOS>"]),
    "train-dq-first-coordinate": lambda q: sum(
        g * k[0] for g, k in zip([0.3, -0.1, -0.2], [[1, 0], [0, 1], [1, 1]])) / math.sqrt(2),
    "scoring-jacobian-largest-entry": lambda q: max(a * (1 - a) for a in (i / 1000 for i in range(1001))),
    "sa-table1-ratio": lambda q: (100 * 512 ** 2) / (100 ** 2 * 512),
    "sa-flops-crossover": lambda q: next(n for n in range(1, 10 ** 5) if 4 * n * n * 512 >= 8 * n * 512 ** 2),
    "scoring-distance-score": lambda q: -sum((a - b) ** 2 for a, b in zip([1, 2], [0, 1])),
    "scoring-distance-weight": lambda q: softmax([-sum((a - b) ** 2 for a, b in zip([1, 0], k))
                                                  for k in ([1, 0], [0, 1])])[0],
    "scoring-luong-local-window": lambda q: len(range(50 - 10, 50 + 10 + 1)),
    "scoring-luong-gaussian": lambda q: math.exp(-(2 ** 2) / (2 * (4 / 2) ** 2)),
    "qkv-design-weight": lambda q: softmax([dot([4, 0], k) / math.sqrt(2) for k in ([1, 0], [0, 1], [-1, 0])])[0],
    "sa-heads-left": lambda q: 48 - 38,
    "sa-head-gate-gradient": lambda q: dot([1, 1], [2 * 0.5, 2 * -1]),
}


def _minus(text: str) -> str:
    return text.replace("−", "-")


def _check_qkv_output(q: Question) -> None:
    w = softmax([1 / math.sqrt(3), 0, 0])
    out = [w[0] * 1 + w[1] * 0 + w[2] * 0, w[0] * 0 + w[1] * 1 + w[2] * 0]
    assert q.choices[q.answer] == f"[{out[0]:.3f}, {out[1]:.3f}]"


def _check_length_norm(q: Question) -> None:
    a, b = -2.4 / 4, -1.5 / 2
    assert a > b
    right = _minus(q.choices[q.answer])
    assert right.startswith("The 4-token one:") and right.index(f"{a:g}") < right.index(f"{b:g}")


def _check_divide_by_dk(q: Question) -> None:
    too_small = math.sqrt(64) / 64  # dividing by d_k instead of √d_k shrinks scores by this
    assert f"{round(1 / too_small)} times too small" in q.choices[q.answer]
    assert f"1/{round(1 / too_small)}" in q.choices[q.answer]


def _check_beam_tie(q: Question) -> None:
    the_cat = BEAM["the"] * 0.6
    a_dog = BEAM["a"] * 0.8
    assert math.isclose(the_cat, a_dog)
    assert q.answer is (a_dog > the_cat + 1e-12)


def _check_design_average(q: Question) -> None:
    keys = ([1, 0], [0, 1], [-1, 0])

    def weights(choice: str) -> list[float]:
        query = [float(x.replace("−", "-")) for x in choice.removeprefix("q = [").rstrip("]").split(",")]
        return softmax([dot(query, k) / math.sqrt(2) for k in keys])

    for i, choice in enumerate(q.choices):
        w = weights(choice)
        shared = abs(w[0] - w[1]) < 1e-12 and w[0] + w[1] > 0.99
        assert shared is (i == q.answer), (choice, w)


# id -> check of a multiple-choice or true/false item whose right answer rests on a number
NUMBER_BASED: dict[str, Callable[[Question], None]] = {
    "qkv-design-average": _check_design_average,
    "qkv-output": _check_qkv_output,
    "dec-length-norm-pick": _check_length_norm,
    "scoring-divide-by-dk": _check_divide_by_dk,
    "dec-beam-tie": _check_beam_tie,
}


# --------------------------------------------------------------------------- the shipped bank

def test_shared_names_match_developing_md():
    text = (REPO / "docs" / "DEVELOPING.md").read_text(encoding="utf-8")
    lesson_ids = re.findall(r"^\| \d+ \| `([a-z-]+)` \|", text, flags=re.M)
    assert tuple(lesson_ids) == SECTIONS
    exam_block = text[text.index("Exam topics"):text.index("Trace names")]
    assert tuple(re.findall(r"`(exam-[a-z-]+)`", exam_block)) == EXAM_TOPICS


def test_bank_loads_with_enough_items(questions):
    assert len(questions) >= 150


def test_ids_unique_across_raw_files():
    ids = []
    for path in sorted(QUIZ.glob("*.toml")):
        ids += [item["id"] for item in tomllib.loads(path.read_text(encoding="utf-8"))["question"]]
    assert len(ids) >= 150
    dupes = [i for i, n in Counter(ids).items() if n > 1]
    assert dupes == []


def test_every_section_covered(questions):
    counts = Counter(q.section for q in questions)
    assert set(counts) == set(SECTIONS)
    assert min(counts.values()) >= 10, counts


def test_every_exam_topic_has_six(questions):
    counts = Counter(t for q in questions for t in q.exam_topics)
    short = {t: counts[t] for t in EXAM_TOPICS if counts[t] < 6}
    assert short == {}


def test_all_four_kinds_used_in_every_section(questions):
    for section in SECTIONS:
        kinds = {q.kind for q in questions if q.section == section}
        assert {"mcq", "true_false", "fill"} <= kinds, (section, kinds)
    assert Counter(q.kind for q in questions)["free"] >= 12


def test_links_resolve(questions):
    from engine.traces import REGISTRY

    for q in questions:
        assert q.section in SECTIONS
        if q.trace is not None:
            assert q.trace in REGISTRY, (q.id, q.trace)


def test_mcq_answers_in_range(questions):
    for q in questions:
        if q.kind == "mcq":
            assert 3 <= len(q.choices) <= 5
            assert 0 <= q.answer < len(q.choices), q.id


def test_every_numeric_answer_recomputed(questions):
    numeric = {q.id for q in questions if q.is_numeric}
    assert numeric == set(NUMERIC), (
        f"without a check: {sorted(numeric - set(NUMERIC))}; stale checks: {sorted(set(NUMERIC) - numeric)}"
    )


@pytest.mark.parametrize("qid", sorted(NUMERIC))
def test_numeric_answer_matches_independent_calculation(qmap, qid):
    q = qmap[qid]
    exact = NUMERIC[qid](q)
    # the stored (rounded) answer sits well inside the tolerance the student is given
    assert abs(float(q.answer) - exact) <= max(q.tolerance / 2, 1e-9), (qid, q.answer, exact)
    # and typing the exact value is marked right
    verdict = check_answer(q, f"{exact:.12g}")
    assert verdict.valid and verdict.correct, (qid, verdict)


@pytest.mark.parametrize("qid", sorted(NUMBER_BASED))
def test_number_based_choices(qmap, qid):
    NUMBER_BASED[qid](qmap[qid])


def test_known_errata_are_taught(qmap):
    assert qmap["qkv-softmax-first"].answer == pytest.approx(0.471, abs=0.001)
    assert "0.64" in qmap["qkv-softmax-first"].erratum
    assert qmap["cv-review-word-count"].answer == 17 and "19" in qmap["cv-review-word-count"].erratum
    assert qmap["dec-beam-tie"].answer is False and "tie" in qmap["dec-beam-tie"].erratum
    assert qmap["scoring-factor"].choices[qmap["scoring-factor"].answer] == "1/√d_k"


def test_erratum_items_explain_the_slip(questions):
    flagged = [q for q in questions if q.erratum]
    assert len(flagged) >= 8
    for q in flagged:
        assert re.search(r"\b(notes|lecture)\b", q.explanation, flags=re.I), q.id


def test_numeric_instructions_state_the_tolerance(questions):
    for q in questions:
        if q.is_numeric and q.tolerance:
            assert f"±{q.tolerance:g}" in q.instructions, q.id


@pytest.mark.skipif(not OVERLAP.exists(), reason="overlap tool not present")
def test_bank_shares_no_long_runs_with_the_notes():
    out = subprocess.run(
        [sys.executable, str(OVERLAP), "lessons/quiz", "tutor/quiz"],
        cwd=REPO, capture_output=True, text=True, check=True, timeout=120,
    ).stdout
    assert out.strip().splitlines()[-1].startswith("0 shared run"), out


# --------------------------------------------------------------------------- marking

def test_every_item_accepts_its_own_answer(questions):
    for q in questions:
        if q.kind == "mcq":
            for text in (str(q.answer + 1), "abcde"[q.answer], "abcde"[q.answer].upper(), q.choices[q.answer]):
                v = check_answer(q, text)
                assert v.valid and v.correct, (q.id, text, v)
        elif q.kind == "true_false":
            v = check_answer(q, "true" if q.answer else "false")
            assert v.valid and v.correct, q.id
        elif q.kind == "fill" and not q.is_numeric:
            for text in (q.answer, *q.accept):
                v = check_answer(q, text)
                assert v.valid and v.correct, (q.id, text)
        elif q.kind == "free":
            v = check_answer(q, "my attempt")
            assert v.valid and v.correct is None and v.expected == q.answer


def _cue_shares(mcqs: list[Question]) -> dict[str, float]:
    """How often each answering strategy that ignores the question would score: pick the
    strictly longest choice, pick the strictly shortest, always pick position k; and chance,
    the mean of 1/(number of choices)."""
    n = len(mcqs)
    def strictly(q: Question, better) -> bool:
        key = len(q.choices[q.answer])
        return all(better(key, len(c)) for i, c in enumerate(q.choices) if i != q.answer)
    shares = {"longest": sum(strictly(q, int.__gt__) for q in mcqs) / n,
              "shortest": sum(strictly(q, int.__lt__) for q in mcqs) / n,
              "chance": sum(1 / len(q.choices) for q in mcqs) / n}
    for k in range(max(len(q.choices) for q in mcqs)):
        shares[f"position {'abcde'[k]}"] = sum(q.answer == k for q in mcqs) / n
    return shares


def test_no_length_or_position_cue_beats_chance(questions):
    """Issue 15 found the key strictly the longest choice in 73% of items. A student who
    picks the longest (or shortest) choice, or always the same letter, must do no better than
    chance, within a few items."""
    shares = _cue_shares([q for q in questions if q.kind == "mcq"])
    chance = shares.pop("chance")
    assert chance == pytest.approx(0.25)  # every item has four choices
    for cue, share in shares.items():
        assert abs(share - chance) <= 0.08, (cue, round(share, 3), shares)


def test_the_cue_measure_catches_a_giveaway_bank():
    """The measure above can fail: a bank whose key is always the longest, in position a."""
    giveaway = [Question(id=f"g{i}", kind="mcq", section="scoring", prompt="?", answer=0,
                         explanation=".", difficulty=1, choices=("the long right one", "no", "nah", "nope"))
                for i in range(8)]
    shares = _cue_shares(giveaway)
    assert shares["longest"] == 1 and shares["position a"] == 1 and shares["shortest"] == 0


# The key may be the longest choice, as any choice may, but not by a margin a student sees at a
# glance: more than a fifth longer than every other choice *and* at least ten characters more.
# Both together, so that neither short formula choices (22 against 18 characters) nor long
# sentences a few words apart are flagged, while 79 against 31 is.
GIVEAWAY_RATIO, GIVEAWAY_CHARS = 1.2, 10


def longest_by_a_clear_margin(q: Question) -> bool:
    """The right choice is strictly the longest and stands out (see GIVEAWAY_RATIO/CHARS)."""
    key = len(q.choices[q.answer])
    rest = max(len(c) for i, c in enumerate(q.choices) if i != q.answer)
    return key > GIVEAWAY_RATIO * rest and key - rest >= GIVEAWAY_CHARS


def test_no_key_is_the_longest_choice_by_a_clear_margin(questions):
    """Issue 34 found two new items whose key was again the longest option by far; the share
    test above allows a few, so each item is held to the rule on its own."""
    giveaways = [f"{q.id}: {len(q.choices[q.answer])} characters against at most "
                 f"{max(len(c) for i, c in enumerate(q.choices) if i != q.answer)}"
                 for q in questions if q.kind == "mcq" and longest_by_a_clear_margin(q)]
    assert not giveaways, "\n".join(giveaways)


def test_the_margin_rule_flags_a_giveaway_and_spares_close_calls():
    def mcq(*choices, answer=0):
        return Question(id="m", kind="mcq", section="scoring", prompt="?", answer=answer,
                        explanation=".", difficulty=1, choices=choices)

    assert longest_by_a_clear_margin(mcq("0, because adding the same constant to every score "
                                         "leaves the weights unchanged", "1, because the weights "
                                         "sum to 1", "αᵢ, the weight of that row", "It depends"))
    assert not longest_by_a_clear_margin(mcq("vᵀ tanh(W_q q + W_k k)", "softmax(q · k) / d_k", "q·k", "qᵀ M k"))
    assert not longest_by_a_clear_margin(mcq("a" * 100, "b" * 88, "c", "d"))   # 12 more, not a fifth
    assert not longest_by_a_clear_margin(mcq("a" * 20, "b" * 12, "c", "d"))    # a fifth, not 10 more
    assert not longest_by_a_clear_margin(mcq("short", "a much longer wrong choice", "c", "d"))


def test_every_wrong_choice_says_why_in_one_line(questions):
    for q in questions:
        if q.kind != "mcq":
            assert q.why_wrong == (), q.id
            continue
        assert len(q.why_wrong) == len(q.choices), q.id
        for i, line in enumerate(q.why_wrong):
            if i == q.answer or (q.choice_mistakes and q.choice_mistakes[i]):
                assert line == "", q.id  # the catalogue says why (tests/test_quiz_links.py)
            else:
                assert line and "\n" not in line and len(line) <= 160, (q.id, i)
                assert line != q.explanation and line.rstrip(".") != q.choices[i], (q.id, i)


def test_true_false_answers_are_balanced(questions):
    answers = Counter(q.answer for q in questions if q.kind == "true_false")
    assert min(answers[True], answers[False]) >= 0.35 * sum(answers.values()), answers


def test_mcq_marking(qmap):
    q = qmap["scoring-factor"]  # 4 choices, the right one is 1/√d_k
    letter = "abcd"[q.answer]
    assert q.choices[q.answer] == "1/√d_k"
    for good in (str(q.answer + 1), letter, letter.upper(), f" ({letter}) ", f"{letter})", "1/sqrt(d_k)"):
        assert check_answer(q, good).correct is True, good
    other = "abcd"[(q.answer + 1) % 4]
    wrong = check_answer(q, other)
    assert wrong.valid and wrong.correct is False
    assert "1/√d_k" in wrong.reason and wrong.expected == f"{letter}) 1/√d_k"
    assert check_answer(q, "1/d_k").correct is False
    for bad, hint in (("5", "a–d"), ("0", "a–d"), ("e", "a–d"), ("banana", "a–d"), ("", "a–d")):
        v = check_answer(q, bad)
        assert not v.valid and v.correct is None and hint in v.hint and "1–4" in v.hint, bad


def test_a_wrong_choice_comes_with_its_own_reason(qmap):
    q = qmap["scoring-factor"]
    for i, choice in enumerate(q.choices):
        v = check_answer(q, "abcd"[i])
        if i == q.answer:
            assert v.correct and v.why_wrong is None
        elif q.choice_mistakes[i]:  # 1/d_k is a catalogued mistake: the catalogue says why
            assert not v.correct and v.why_wrong.startswith(f"Why not {'abcd'[i]}: Divided by d_k")
            assert [n.id for n in v.diagnoses] == [q.choice_mistakes[i]]
        else:
            assert not v.correct and v.why_wrong == f"Why not {'abcd'[i]}: {q.why_wrong[i]}"
    assert len({check_answer(q, "abcd"[i]).why_wrong for i in range(4)} - {None}) == 3


def test_true_false_marking(qmap):
    q = qmap["dec-nucleus-crossing"]  # the statement is false
    for said in ("f", "F", "false", "no", "n", "False."):
        assert check_answer(q, said).correct is True, said
    for said in ("t", "true", "yes", "Y"):
        v = check_answer(q, said)
        assert v.valid and v.correct is False, said
    for bad in ("", "maybe", "2"):
        v = check_answer(q, bad)
        assert not v.valid and "true or false" in v.hint


def test_numeric_marking(qmap):
    q = qmap["qkv-softmax-first"]  # 0.471 ± 0.003
    for good in ("0.471", ".47", "0.4711", " 0.473 ", "8/17"):
        assert check_answer(q, good).correct is True, good
    for wrong in ("0.64", "0.5", "1/3", "-0.471"):
        v = check_answer(q, wrong)
        assert v.valid and v.correct is False and "0.471" in v.reason, wrong
    for bad in ("abc", "zero point five", "0.4.7", "1/0", "nan", "inf"):
        v = check_answer(q, bad)
        assert not v.valid and "number" in v.hint, bad
    comma = check_answer(q, "0,471")
    assert not comma.valid and "decimal point" in comma.hint


def test_exact_numeric_marking(qmap):
    q = qmap["scoring-sqrt-64"]  # 8, tolerance 0
    assert check_answer(q, "8").correct is True
    assert check_answer(q, "8.0").correct is True
    assert check_answer(q, "16/2").correct is True
    assert check_answer(q, "64").correct is False
    assert check_answer(q, "8.01").correct is False
    assert check_answer(q, "−8").correct is False


def test_text_fill_marking(qmap):
    q = qmap["sa-matrix-form"]
    for good in ("QK^T/√d_k", "QKᵀ/√d_k", "Q K^T / sqrt(d_k)", "qk^t/sqrt(dk)", "(QK^T)/√(d_k)"):
        assert check_answer(q, good).correct is True, good
    for wrong in ("QK^T/d_k", "QK^T", "Q K / d_k"):
        v = check_answer(q, wrong)
        assert v.valid and v.correct is False, wrong
    t = qmap["tf-update-blank"]
    assert check_answer(t, "Y_t").correct is True
    assert check_answer(t, "y t").correct is True
    assert check_answer(t, "Ŷ_t").correct is False
    assert check_answer(t, "Y^_t").correct is False
    assert not check_answer(t, "   ").valid


def test_free_is_self_graded(qmap):
    q = qmap["scoring-why-scale-free"]
    v = check_answer(q, "because the variance grows with d_k")
    assert v.valid and v.correct is None and v.expected == q.answer
    assert q.key_points
    assert not check_answer(q, "").valid


def test_parse_number():
    assert parse_number("3/4") == 0.75
    assert parse_number("-1/8") == -0.125
    assert parse_number("−0.5") == -0.5
    assert parse_number("1e-3") == 0.001
    assert parse_number(".5") == 0.5
    assert parse_number("470,400") == 470400 and parse_number("25,600,000") == 25_600_000
    assert parse_number("-1,024.5") == -1024.5
    assert parse_number("1/2/3") == 1 / 6  # left to right, as on paper
    assert parse_number("√2") == 2 ** 0.5
    for bad in ("", "abc", "1/0", "1//2", "nan", "inf", "√-1", "2^^3",
                "0,5", "0,500", "1,5", "1,50", "1,0000", "1,000,00", ",500", "0.5, 0.6"):
        assert parse_number(bad) is None, bad
    assert "decimal point" in number_hint("0,500") and "not a list" in number_hint("0.5, 0.6")


def test_verdict_invalid_shape():
    v = Verdict.invalid("say more")
    assert (v.valid, v.correct, v.hint) == (False, None, "say more")


# --------------------------------------------------------------------------- loader errors

GOOD = '''
[[question]]
id = "ok-one"
kind = "mcq"
section = "scoring"
exam_topics = ["exam-scaled-dot"]
difficulty = 1
prompt = "Pick a."
choices = ["a", "b", "c"]
answer = 0
explanation = "Because."

[question.why_wrong]
b = "Not b."
c = "Not c."
'''


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def errors_for(tmp_path: Path, text: str) -> list[str]:
    write(tmp_path, "bad.toml", text)
    with pytest.raises(ContentError) as info:
        load_bank(tmp_path)
    assert isinstance(info.value, ValueError)
    return info.value.errors


def item(**fields: object) -> str:
    """One [[question]] table: GOOD's fields overridden (None removes a field)."""
    base: dict[str, object] = {
        "id": "x-item", "kind": "mcq", "section": "scoring", "exam_topics": ["exam-scaled-dot"],
        "difficulty": 1, "prompt": "Pick a.", "choices": ["a", "b", "c"], "answer": 0,
        "explanation": "Because.",
    }
    base.update(fields)
    why_wrong = base.pop("why_wrong", {"b": "Not b.", "c": "Not c."} if base["kind"] == "mcq" else None)
    lines = ["[[question]]"]
    for key, value in base.items():
        if value is None:
            continue
        if isinstance(value, bool):
            lines.append(f"{key} = {'true' if value else 'false'}")
        elif isinstance(value, str):
            lines.append(f"{key} = {value!r}".replace("'", '"'))
        elif isinstance(value, list):
            inner = ", ".join(f'"{v}"' if isinstance(v, str) else str(v) for v in value)
            lines.append(f"{key} = [{inner}]")
        else:
            lines.append(f"{key} = {value}")
    if why_wrong is not None:  # a sub-table: it must come last in the item
        lines.append("[question.why_wrong]")
        lines += [f'{letter} = "{line}"' for letter, line in why_wrong.items()]
    return "\n".join(lines) + "\n"


def test_good_file_loads_and_caches(tmp_path):
    write(tmp_path, "a.toml", GOOD)
    first = load_bank(tmp_path)
    assert [q.id for q in first] == ["ok-one"] and first[0].source == "a.toml"
    write(tmp_path, "b.toml", GOOD.replace("ok-one", "ok-two"))
    assert [q.id for q in load_bank(tmp_path)] == ["ok-one"]  # cached
    bank.clear_cache()
    assert [q.id for q in load_bank(tmp_path)] == ["ok-one", "ok-two"]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"explanation": None}, "field 'explanation': expected a non-empty string (missing)"),
        ({"prompt": "  "}, "field 'prompt': expected a non-empty string"),
        ({"id": "Bad Id"}, "field 'id': expected kebab-case"),
        ({"kind": "essay"}, "field 'kind': expected one of 'mcq', 'true_false', 'fill', 'free', got 'essay'"),
        ({"section": "scaling"}, "field 'section': expected a lesson id (encoder-decoder,"),
        ({"exam_topics": ["exam-everything"]}, "field 'exam_topics': expected a list of exam-topic ids"),
        ({"difficulty": 4}, "field 'difficulty': expected 1, 2 or 3, got 4"),
        ({"difficulty": True}, "field 'difficulty': expected 1, 2 or 3, got True"),
        ({"answer": 3}, "field 'answer': expected a 0-based index 0–2 into choices, got 3"),
        ({"answer": True}, "field 'answer': expected the 0-based index of the right choice"),
        ({"choices": ["a", "b"]}, "field 'choices': expected a list of 3–5 non-empty strings"),
        ({"choices": ["a", "b", "A"]}, "field 'choices': expected distinct choices"),
        ({"explaination": "typo"}, "field 'explaination': unknown on a 'mcq' question"),
        ({"tolerance": 0.1}, "field 'tolerance': unknown on a 'mcq' question"),
        ({"trace": "Not A Trace"}, "field 'trace': expected a trace name"),
        ({"kind": "true_false", "choices": None, "answer": "true"},
         "field 'answer': expected true or false (a TOML boolean), got 'true'"),
        ({"kind": "fill", "choices": None, "answer": 0.5},
         "field 'tolerance': expected a number ≥ 0 (absolute tolerance for a numeric answer), got nothing (missing)"),
        ({"kind": "fill", "choices": None, "answer": 0.5, "tolerance": -1}, "field 'tolerance': expected a number ≥ 0"),
        ({"kind": "fill", "choices": None, "answer": "H_T", "tolerance": 0},
         "field 'tolerance': expected no tolerance on a text answer"),
        ({"kind": "fill", "choices": None, "answer": "H_T", "accept": ["ok", ""]},
         "field 'accept': expected a list of non-empty strings"),
        ({"kind": "free", "choices": None, "answer": 3}, "field 'answer': expected a model answer"),
        ({"answer": None}, "field 'answer': expected the 0-based index of the right choice (an integer) (missing)"),
        ({"why_wrong": None}, "field 'why_wrong': expected a table with one line for each wrong choice (b, c), "
                              "got nothing (missing)"),
        ({"why_wrong": {"b": "Not b."}}, "field 'why_wrong': expected a non-empty line for choice c"),
        ({"why_wrong": {"a": "Not a?", "b": "Not b.", "c": "Not c."}},
         "field 'why_wrong': expected a table with one line for each wrong choice (b, c); a is the right answer"),
        ({"why_wrong": {"b": "Not b.", "c": "Not c.", "e": "?"}}, "; there is no choice e, got 'e'"),
        ({"why_wrong": {"b": "", "c": "Not c."}}, "field 'why_wrong': expected a non-empty line for choice b"),
        ({"kind": "true_false", "choices": None, "answer": True, "why_wrong": {"b": "x"}},
         "field 'why_wrong': unknown on a 'true_false' question"),
        ({"erratum": "no-such-erratum"}, "field 'erratum': expected the id of an entry in lessons/errata.toml, "
                                         "got 'no-such-erratum'"),
    ],
)
def test_malformed_item_messages(tmp_path, fields, expected):
    errors = errors_for(tmp_path, item(**fields))
    where = "bad.toml: question #1"
    assert any(e.startswith(where) and expected in e for e in errors), errors


def test_message_names_the_item_index_and_id(tmp_path):
    text = item(id="first-ok") + "\n" + item(id="second-bad", difficulty=0)
    errors = errors_for(tmp_path, text)
    assert errors == ["bad.toml: question #2 (id 'second-bad'): field 'difficulty': expected 1, 2 or 3, got 0"]


def test_all_problems_reported_together(tmp_path):
    errors = errors_for(tmp_path, item(difficulty=9, section="nope", explanation=None))
    assert len(errors) == 3
    with pytest.raises(ContentError, match="3 problems"):
        load_bank(tmp_path)


def test_invalid_toml(tmp_path):
    errors = errors_for(tmp_path, '[[question]]\nid = "x\n')
    assert errors[0].startswith("bad.toml: not valid TOML (")


def test_file_shape_errors(tmp_path):
    assert errors_for(tmp_path / "a", 'title = "quiz"\n') == [
        "bad.toml: unexpected top-level key(s) title; expected only [[question]] tables",
        "bad.toml: no [[question]] tables; expected at least one",
    ]
    assert errors_for(tmp_path / "b", 'question = "x"\n') == [
        "bad.toml: 'question' must be an array of tables ([[question]])",
    ]


def test_duplicate_ids_across_files(tmp_path):
    write(tmp_path, "a.toml", GOOD)
    write(tmp_path, "b.toml", GOOD)
    with pytest.raises(ContentError) as info:
        load_bank(tmp_path)
    assert info.value.errors == [
        "b.toml: id 'ok-one' is also used in a.toml; expected ids unique across all quiz files"
    ]


def test_missing_or_empty_folder(tmp_path):
    with pytest.raises(ContentError, match="no such folder"):
        load_bank(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ContentError, match=r"no \*\.toml files"):
        load_bank(tmp_path / "empty")


def test_every_prompt_stands_alone():
    # questions are shuffled, so none may lean on the one before it ("Same readings ...")
    leaning = [q.id for q in load_bank()
               if re.match(r"(same|as above|as before|again|the previous)\b", q.prompt.strip(), re.I)]
    assert leaning == []
