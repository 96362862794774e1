"""Issue 36 §3 on papers: follow-through and diagnosis on the five dependent parts the audit
found silent — xq-label-smoothing (c), xq-sampling-sets (c), xq-sequence-loss (b) and (c),
xq-dynamic-context (c).

For each: a wrong earlier part, then the later part worked right from the student's own wrong
value, earns follow-through marks and the feedback says the policy; a later part done with a
catalogued mistake is named (where the catalogue has a computation for it: label smoothing and
"which position" have none, so those two are only held to follow-through); the result's
summary line never claims follow-through marks when none were earned. Every expected number
is worked here with plain NumPy from the question's own data.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.mistakes.catalogue import MISTAKES
from tutor.exam import render
from tutor.exam.marking import mark_question
from tutor.exam.model import by_id
from tutor.exam.numbers import make
from tutor.exam.paper import Paper, instantiate
from tutor.exam.session import PaperRun
from tutor.store import open_store
from tutor.store.papers import papers

SEEDS = (0, 1, 2)
SPECS = by_id()


def _q(qid: str, seed: int):
    return instantiate(SPECS[qid], seed)


def _fmt(x) -> str:
    return ", ".join(f"{v:.3f}" for v in np.ravel(x))


def _marks(question, answers):
    return {m.letter: m for m in mark_question(question, answers).parts}


def _assert_follow_through(mark, part, earlier_letter: str) -> None:
    assert mark.status == "follow-through", mark.feedback
    assert mark.earned > 0
    expect = part.marks if part.spec.follow_through == "all" else part.spec.method
    assert mark.earned == expect
    assert f"your ({earlier_letter}) = " in mark.feedback
    assert "error carried forward" in mark.feedback or "method mark" in mark.feedback


# --------------------------------------------------------------------------- label smoothing (c)

@pytest.mark.parametrize("seed", SEEDS)
def test_label_smoothing_c_follows_through_from_a_wrong_target(seed):
    """(b) given as 1 − ε (the reference's share ε/V forgotten); (c) = Σ_v q_v (−ln P_v) with
    that q on the reference and ε/4 on the other three words."""
    q = _q("xq-label-smoothing", seed)
    data = make("label-smoothing", seed).data
    p, y, eps = data["p"], data["y"], data["eps"]
    target = 1 - eps
    weights = [target if v == y else eps / 4 for v in range(4)]
    smooth = sum(w * -math.log(pv) for w, pv in zip(weights, p))
    marks = _marks(q, {"a": f"{-math.log(p[y]):.3f}", "b": f"{target:.3f}", "c": f"{smooth:.3f}"})
    assert marks["a"].status == "right"
    assert marks["b"].status == "wrong"
    _assert_follow_through(marks["c"], q.part("c"), "b")


# --------------------------------------------------------------------------- sampling sets (c)

def _nucleus_size(p, top_p) -> int:
    s = sorted(p, reverse=True)
    total, n = 0.0, 0
    while total < top_p - 1e-12:
        total += s[n]
        n += 1
    return n


@pytest.mark.parametrize("seed", SEEDS)
def test_sampling_sets_c_follows_through_from_a_wrong_nucleus(seed):
    q = _q("xq-sampling-sets", seed)
    data = make("sampling", seed).data
    p, top_p = data["p"], data["top_p"]
    size = _nucleus_size(p, top_p)
    assert q.part("b").step.answer == size  # the question agrees with the hand count
    wrong = size + 1 if size < len(p) else size - 1
    top = max(p) / sum(sorted(p, reverse=True)[:wrong])
    marks = _marks(q, {"b": str(wrong), "c": f"{top:.3f}"})
    assert marks["b"].status == "wrong"
    _assert_follow_through(marks["c"], q.part("c"), "b")


@pytest.mark.parametrize("seed", SEEDS)
def test_sampling_sets_c_names_the_missing_renormalisation(seed):
    """(c) given as the top word's own probability, not renormalised: named on the question's
    nucleus when (b) was right, and on the student's own kept words when (b) was wrong."""
    q = _q("xq-sampling-sets", seed)
    data = make("sampling", seed).data
    p, top_p = data["p"], data["top_p"]
    size = _nucleus_size(p, top_p)
    marks = _marks(q, {"b": str(size), "c": f"{max(p):.3f}"})
    assert marks["c"].status == "wrong"
    assert [n.id for n in marks["c"].diagnoses] == ["top-p-not-renormalised"]
    wrong = size + 1 if size < len(p) else size - 1
    marks = _marks(q, {"b": str(wrong), "c": f"{max(p):.3f}"})
    assert marks["c"].status == "wrong" and marks["c"].diagnoses
    assert marks["c"].diagnoses[0].id in ("top-k-not-renormalised", "top-p-not-renormalised")
    lines = render.feedback_lines(q.part("c"), marks["c"])
    assert any(line.lstrip().startswith("Mistake: ") for line in lines)


# --------------------------------------------------------------------------- sequence loss (b), (c)

def _losses(seed):
    data = make("sequence-loss", seed).data
    P, y = data["P"], data["y"]
    return [-math.log(P[t, y[t]]) for t in range(3)], [-math.log10(P[t, y[t]]) for t in range(3)]


@pytest.mark.parametrize("seed", SEEDS)
def test_sequence_loss_b_and_c_follow_through_from_log10(seed):
    q = _q("xq-sequence-loss", seed)
    _, ten = _losses(seed)
    each = [round(x, 3) for x in ten]
    total = sum(each)
    marks = _marks(q, {"a": _fmt(each), "b": f"{total:.3f}", "c": f"{total / 3:.3f}"})
    assert marks["a"].status == "wrong" and [n.id for n in marks["a"].diagnoses] == ["ce-log10"]
    _assert_follow_through(marks["b"], q.part("b"), "a")
    _assert_follow_through(marks["c"], q.part("c"), "b")


@pytest.mark.parametrize("seed", SEEDS)
def test_sequence_loss_b_and_c_name_the_reduction_slip(seed):
    """(b) given as the mean, (c) as the sum: each named, from right earlier values."""
    q = _q("xq-sequence-loss", seed)
    ln, _ = _losses(seed)
    total = sum(ln)
    marks = _marks(q, {"a": _fmt(ln), "b": f"{total / 3:.3f}"})
    assert [n.id for n in marks["b"].diagnoses] == ["ce-mean-not-sum"]
    marks = _marks(q, {"a": _fmt(ln), "b": f"{total:.3f}", "c": f"{total:.3f}"})
    assert marks["b"].status == "right"
    assert [n.id for n in marks["c"].diagnoses] == ["ce-sum-not-mean"]


@pytest.mark.parametrize("seed", SEEDS)
def test_sequence_loss_slip_on_the_students_own_wrong_values_is_named(seed):
    """(a) in log10, (b) carried forward right, then (c) left as the sum of the student's own
    losses: the slip is named on the student's values, and the feedback says so. Before the
    fix, (c) was silent (no link on the student's own total)."""
    q = _q("xq-sequence-loss", seed)
    _, ten = _losses(seed)
    each = [round(x, 3) for x in ten]
    total = sum(each)
    marks = _marks(q, {"a": _fmt(each), "b": f"{total:.3f}", "c": f"{total:.3f}"})
    assert marks["b"].status == "follow-through"
    c = marks["c"]
    assert c.status == "wrong" and [n.id for n in c.diagnoses] == ["ce-sum-not-mean"]
    assert c.worked_from.startswith("(b) = ")
    lines = render.feedback_lines(q.part("c"), c)
    assert f"  Worked from your own {c.worked_from}:" in lines
    assert f"  Mistake: {MISTAKES['ce-sum-not-mean'].title}" in " ".join(lines)
    # (b) given as the mean of the student's own log10 losses: named on their values
    marks = _marks(q, {"a": _fmt(each), "b": f"{total / 3:.3f}"})
    assert "ce-mean-not-sum" in {i for n in marks["b"].diagnoses for i in n.ids}


# --------------------------------------------------------------------------- dynamic context (c)

@pytest.mark.parametrize("seed", SEEDS)
def test_dynamic_context_c_follows_through_from_wrong_weights(seed):
    """(a) given with the weights in reverse order; (c) the position of the student's own
    largest weight."""
    q = _q("xq-dynamic-context", seed)
    e = make("dynamic-context", seed).data["e"]
    alpha = np.exp(e) / np.exp(e).sum()
    wrong = alpha[::-1]
    position = int(np.argmax(wrong)) + 1
    assert position != int(np.argmax(alpha)) + 1
    marks = _marks(q, {"a": _fmt(wrong), "c": str(position)})
    assert marks["a"].status == "wrong"
    _assert_follow_through(marks["c"], q.part("c"), "a")


# --------------------------------------------------------------------------- a paper run, stored

def _run(question_ids, answers_by_question, seed=5):
    questions = tuple(_q(i, seed) for i in question_ids)
    paper = Paper(questions, None, seed)
    with open_store() as store:
        run = PaperRun(paper, store, clock=lambda: 0.0)
        run.start()
        lines = []
        while run.current is not None:
            q, part = run.current
            given = answers_by_question[q.id].get(part.letter, "" if part.kind == "numeric" else ())
            mark = run.answer(given)
            lines += render.feedback_lines(part, mark)
        result = run.finish()
        stored = papers(store)
    return questions, result, lines, stored


def test_summary_line_counts_follow_through_only_when_earned():
    seed = 5
    _, ten = _losses(seed)
    each = [round(x, 3) for x in ten]
    # (a) wrong, (b) wrong and not from the student's (a) either: no follow-through earned
    _, result, _, _ = _run(["xq-sequence-loss"], {"xq-sequence-loss": {"a": _fmt(each), "b": "9.999"}})
    text = "\n".join(render.result_lines(result))
    assert "Follow-through" not in text and "method mark" not in text
    # (b) and (c) carried forward: 2 marks on 2 parts, said once and counted right
    total = sum(each)
    _, result, lines, _ = _run(["xq-sequence-loss"], {"xq-sequence-loss": {
        "a": _fmt(each), "b": f"{total:.3f}", "c": f"{total / 3:.3f}"}})
    text = "\n".join(render.result_lines(result))
    follow = [m for _, ms in result.marks for m in ms if m.status == "follow-through"]
    earned = sum(m.earned for m in follow)
    assert earned == 2 and len(follow) == 2
    assert "Follow-through (error carried forward) earned 2 marks on 2 parts." in text
    assert any("error carried forward" in line for line in lines)


def test_paper_parts_store_their_diagnoses():
    seed = 5
    _, ten = _losses(seed)
    each = [round(x, 3) for x in ten]
    total = sum(each)
    _, result, _, stored = _run(["xq-sequence-loss"], {"xq-sequence-loss": {
        "a": _fmt(each), "b": f"{total:.3f}", "c": f"{total:.3f}"}})
    (record,) = stored
    by_letter = {p.part: p for p in record.parts}
    assert by_letter["a"].diagnoses == ("ce-log10",)
    assert by_letter["b"].diagnoses == () and by_letter["b"].status == "follow-through"
    assert by_letter["c"].diagnoses == ("ce-sum-not-mean",)
    text = "\n".join(render.result_lines(result))
    assert "Mistakes named: " in text and MISTAKES["ce-log10"].title in text
