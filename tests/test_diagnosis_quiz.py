"""Issue 36 §3 in the quiz: a wrong number is named by the mistake catalogue.

* the issue's own example through ``attn-tutor quiz --plain`` (the unscaled dot product is
  named ``no-scale`` with the number it gives; a right answer is never diagnosed; a number
  no mistake gives names nothing);
* every generated numeric family and every linked numeric bank item: a catalogued mistake's
  number, typed like a student (3 significant digits), is named by the quiz's verdict; the
  linked counts do not regress;
* multiple choice: a distractor that is a catalogued mistake is that mistake's number, and
  its why-line comes from the catalogue.

Expected numbers are worked by hand or with plain NumPy here; a planted mistake's number is
the engine run with that mistake built in (``engine.mistakes.value_of``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from diagnosis_helpers import first_named, names, planted, right_value, student, typed
from typer.testing import CliRunner

from engine import mistakes
from engine.mistakes.catalogue import MISTAKES
from engine.traces import input_specs
from tutor.classroom.questions import _ask_bank
from tutor.cli import app
from tutor.marking import LETTERS, parse_number
from tutor.quiz import bank as bank_mod
from tutor.quiz.bank import Question, load_bank
from tutor.quiz.generators import FAMILIES, generate
from tutor.quiz.marking import check_answer
from tutor.quiz.modes import Item
from tutor.quiz.session import QuizSession
from tutor.store import open_store

# Today's wiring (commit 7b3c5bd and after). A later change may link more, never fewer.
LINKED_FAMILIES = 26  # of 27: heatmap-reading's number (a count off the grid) has no computation
LINKED_BANK_NUMERIC = 43  # of 75 numeric fill items
MCQ_WITH_CATALOGUED_CHOICES = 7
SILENT_BANK = {"cv-review-word-count", "sa-score-count", "sa-flops-crossover", "pool-max",
               "pool-mean", "pool-spike-share", "pool-typical-mean", "tr-head-width",
               "tr-score-work", "scoring-saturated-weight", "scoring-scaled-weight"}
"""Linked numeric bank items on which no catalogued mistake shows when typed at 3
significant digits (see the test that names the others)."""

SEEDS = (0, 1, 2)
"""Seeds tried per family: a mistake may coincide with the right number on one draw."""


def _bank() -> dict[str, Question]:
    return {q.id: q for q in load_bank()}


def _quiz(monkeypatch, questions, stdin: str):
    monkeypatch.setattr(bank_mod, "load_bank", lambda root=None: list(questions))
    return CliRunner().invoke(app, ["quiz", "--plain", "--mode", "practice", "--no-generated",
                                    "--seed", "7"], input=stdin)


# --------------------------------------------------------------------------- the issue's example

def _scaled_question(q, k) -> Question:
    """The issue's scoring question on vectors of our own (trace scoring-compare)."""
    q, k = np.asarray(q, float), np.asarray(k, float)
    answer = float(sum(a * b for a, b in zip(q, k)) / math.sqrt(len(q)))  # by hand: q·k/√d_k
    return Question(id="t-scaled", kind="fill", section="scoring", difficulty=1,
                    prompt=f"Scaled dot-product score of q = {list(q)} and k = {list(k)}?",
                    answer=round(answer, 3), tolerance=0.002, explanation="q·k / √d_k.",
                    trace="scoring-compare", value="scaled",
                    inputs={"Q": list(q), "K": list(k)})


def test_unscaled_dot_product_is_named_no_scale_in_plain_quiz(monkeypatch):
    """q = [0, 1, 0], k = [0, 1, 0], d_k = 3: q·k = 1, the answer 1/√3 ≈ 0.577; typing 1
    is the dot product before the scale."""
    question = _scaled_question([0, 1, 0], [0, 1, 0])
    assert question.answer == pytest.approx(0.577)
    result = _quiz(monkeypatch, [question], "1\n")
    assert result.exit_code == 0, result.output
    out = result.output
    title = MISTAKES["no-scale"].title
    assert f"Mistake: {title} (it gives 1)." in out
    assert "√3" in out  # the explanation is filled with this problem's d_k
    assert "attn-tutor lesson scoring" in out  # where to read the right way
    assert "Mistakes named this session" in out and title in out.split("Mistakes named")[1]
    with open_store() as store:
        (answer,) = [a for a in store.answers() if a.question_id == "t-scaled"]
    assert answer.correct is False and answer.diagnoses == ("no-scale",)


def test_the_bank_item_of_the_issue_names_no_scale(monkeypatch):
    """The bank's own item (q = [1, 0, −1], k = [0, 1, −1]): q·k = 0 + 0 + 1 = 1."""
    q = _bank()["scoring-scaled-value"]
    result = _quiz(monkeypatch, [q], "1\n")
    assert result.exit_code == 0, result.output
    assert f"Mistake: {MISTAKES['no-scale'].title} (it gives 1)." in result.output
    # dividing by d_k = 3 instead of √3: 1/3
    result = _quiz(monkeypatch, [q], "0.333\n")
    assert f"Mistake: {MISTAKES['scale-by-dk'].title}" in result.output


@pytest.mark.parametrize("text", ["0.577", "1/sqrt(3)", "0.5774"])
def test_a_right_answer_is_never_diagnosed(monkeypatch, text):
    result = _quiz(monkeypatch, [_scaled_question([0, 1, 0], [0, 1, 0])], text + "\n")
    assert result.exit_code == 0, result.output
    assert "Correct." in result.output
    assert "Mistake" not in result.output
    with open_store() as store:
        assert all(a.diagnoses == () for a in store.answers())


def test_a_random_wrong_number_names_no_mistake(monkeypatch):
    result = _quiz(monkeypatch, [_scaled_question([0, 1, 0], [0, 1, 0])], "0.912\n")
    assert result.exit_code == 0, result.output
    assert "Wrong." in result.output and "the answer is 0.577" in result.output
    assert "Mistake" not in result.output
    with open_store() as store:
        (answer,) = store.answers()
    assert answer.correct is False and answer.diagnoses == ()


def test_generated_scores_problem_names_no_scale_through_the_session():
    """The session API on the scaled-dot-scores family: the student types the dot products
    (worked with NumPy here) and the verdict of that part names ``no-scale``."""
    problem = generate("scaled-dot-scores", 11)
    (i, part), = [(i, p) for i, p in enumerate(problem.parts) if p.value == "scores"]
    q, K = problem.data["q"], problem.data["K"]
    dots = np.array([sum(a * b for a, b in zip(q, row)) for row in K])
    scaled = dots / math.sqrt(len(q))
    assert np.allclose(part.answer, scaled)
    assert np.max(np.abs(dots - scaled)) > part.tolerance  # the mistake shows on these numbers
    with open_store() as store:
        session = QuizSession([Item(problem=problem)], store=store, mode="practice", seed=11)
        session.next()
        answers = [typed(dots) if j == i else _any_answer(p) for j, p in enumerate(problem.parts)]
        for text in answers:
            fb = session.submit(text)
        assert fb.done
        verdict = fb.verdicts[i]
        assert verdict.correct is False and "no-scale" in names(verdict)
        (n,) = [n for n in verdict.diagnoses if n.id == "no-scale"]
        assert np.allclose([parse_number(x) for x in n.value.strip("[]").split(",")], dots,
                           atol=5e-4)
        (saved,) = store.answers()
        assert "no-scale" in saved.diagnoses


def _any_answer(part) -> str:
    if part.kind == "choice":
        return part.options[0]
    if part.kind == "set":
        return part.options[0]
    return typed(np.ravel(part.answer))


# --------------------------------------------------------------------------- every family

def _linked_numeric_parts(problem):
    return [(i, p) for i, p in enumerate(problem.parts)
            if p.kind in ("number", "vector") and p.link is not None]


def test_linked_family_count_does_not_regress():
    linked = [f for f in FAMILIES if _linked_numeric_parts(generate(f, 0))]
    unlinked = sorted(set(FAMILIES) - set(linked))
    assert len(linked) >= LINKED_FAMILIES, unlinked
    assert unlinked == ["heatmap-reading"]


def test_every_linked_part_links_to_its_own_answer():
    """A part's link, run by the catalogue, gives the part's stated answer: the number the
    diagnosis compares with is the one the student is asked for."""
    for f in FAMILIES:
        problem = generate(f, 0)
        for i, p in _linked_numeric_parts(problem):
            right = right_value(p.link)
            assert np.allclose(np.ravel(right), np.ravel(p.answer), atol=max(p.tolerance, 1e-9)), \
                (f, i, p.value)


@pytest.mark.parametrize("family", [f for f in FAMILIES if f != "heatmap-reading"])
def test_a_planted_mistake_is_named_in_every_generated_family(family):
    """For a mistake of the part's computation that shows on the problem's numbers, the
    student's rounded number is named by the part's verdict (seed by seed until one shows)."""
    named_somewhere = []
    for seed in SEEDS:
        problem = generate(family, seed)
        for i, part in _linked_numeric_parts(problem):
            got = first_named(part.link, part.tolerance, part.check, part.answer)
            if got is None:
                continue
            mistake, text, verdict = got
            assert verdict.valid and verdict.correct is False, (seed, i, text, verdict)
            assert mistake in names(verdict), (seed, i, mistake, text, verdict.reason)
            named_somewhere.append((seed, i, mistake))
        if named_somewhere:
            break
    assert named_somewhere, f"no catalogued mistake shows on {family} in seeds {SEEDS}"


def test_every_mistake_that_shows_is_named_on_the_scores_family():
    """Not only the first: each mistake that shows on a scores problem is the one named."""
    problem = generate("scaled-dot-scores", 3)
    (part,) = [p for _, p in _linked_numeric_parts(problem)]
    seen = []
    for mistake, text, _ in planted(part.link, part.tolerance, part.answer):
        verdict = part.check(text)
        assert mistake in names(verdict), (mistake, text)
        seen.append(mistake)
    assert "no-scale" in seen and "scale-by-dk" in seen


# --------------------------------------------------------------------------- bank items

def _linked_numeric_bank() -> list[Question]:
    return [q for q in load_bank() if q.is_numeric and q.link is not None]


def test_linked_bank_count_does_not_regress():
    numeric = [q for q in load_bank() if q.is_numeric]
    linked = _linked_numeric_bank()
    assert len(linked) >= LINKED_BANK_NUMERIC, len(linked)
    assert len(numeric) - len(linked) <= len(numeric) - LINKED_BANK_NUMERIC


def test_every_linked_bank_answer_is_its_computation():
    """The bank's stated answer is the linked value within the item's tolerance."""
    for q in _linked_numeric_bank():
        right = float(np.ravel(right_value(q.link))[0])
        assert abs(right - float(q.answer)) <= (q.tolerance or 0.0) + 1e-9, (q.id, right, q.answer)


def test_no_catalogued_mistake_is_marked_right_on_a_bank_item():
    """A mistake's exact number never falls inside an item's tolerance (rounding every
    intermediate to 2 decimals aside: that one is inside a tolerance by design). Found:
    scoring-softmax-210 (±0.002) accepted 2/3, the scores divided by their sum."""
    accepted = []
    for q in _linked_numeric_bank():
        right = float(np.ravel(right_value(q.link))[0])
        for m in mistakes.mistakes_for(q.link.computation, q.link.value.split("[")[0]):
            if m.id == "rounded-intermediates":
                continue
            try:
                wrong = mistakes.value_of(q.link.computation, q.link.inputs, q.link.value, (m.id,))
            except ValueError:
                continue
            w = float(np.ravel(wrong)[0])
            if wrong.size == 1 and abs(w - right) > 1e-9 and check_answer(q, repr(w)).correct:
                accepted.append((q.id, m.id, w))
    assert accepted == []


def test_a_planted_mistake_is_named_on_every_linked_bank_item():
    """Each linked numeric bank item on which some catalogued mistake shows names it; the
    items where none can show are listed (their numbers no catalogued slip changes)."""
    silent = []
    for q in _linked_numeric_bank():
        got = first_named(q.link, q.tolerance or 0.0, lambda t, q=q: check_answer(q, t), q.answer)
        if got is None:
            silent.append(q.id)
            continue
        mistake, text, verdict = got
        assert verdict.valid and verdict.correct is False, (q.id, text, verdict)
        assert mistake in names(verdict), (q.id, mistake, text, verdict.reason)
    # counts, shapes and max/mean pooling: no catalogued slip changes these numbers; and two
    # softmax weights so near 1 (or near e/(e+1)) that the slip's number, at 3 significant
    # digits, is the right one at those digits
    assert set(silent) <= SILENT_BANK, sorted(set(silent) - SILENT_BANK)


def test_a_bank_item_typed_with_too_few_digits_is_not_a_mistake():
    """0.58 for 0.577 at ±0.002: the right value at the digits typed, so no mistake is
    named and the student is asked for more digits."""
    v = check_answer(_bank()["scoring-scaled-value"], "0.58")
    assert v.correct is False and v.diagnoses == ()
    assert "give more of them" in v.reason


# --------------------------------------------------------------------------- multiple choice

def _catalogued_choices():
    for q in load_bank():
        if q.kind == "mcq" and q.choice_mistakes:
            for i, m in enumerate(q.choice_mistakes):
                if m:
                    yield q, i, m


def test_mcq_count_does_not_regress():
    assert len({q.id for q, _, _ in _catalogued_choices()}) >= MCQ_WITH_CATALOGUED_CHOICES


def test_a_catalogued_distractor_takes_its_why_line_from_the_catalogue():
    """Picking a choice that is a catalogued mistake gives the catalogue's title and its
    explanation filled with the item's worked example, the mistake named with the number it
    gives there (the catalogue run with that mistake)."""
    for q, i, m in _catalogued_choices():
        v = check_answer(q, LETTERS[i])
        assert v.correct is False
        assert v.why_wrong.startswith(f"Why not {LETTERS[i]}: {MISTAKES[m].title}."), (q.id, v.why_wrong)
        (n,) = v.diagnoses
        assert n.id == m and n.explanation in v.why_wrong
        wrong = np.ravel(mistakes.value_of(q.link.computation, q.link.inputs, q.link.value, (m,)))
        right = np.ravel(right_value(q.link))
        shown = np.array([parse_number(x) for x in n.value.strip("[]").split(",")])
        assert np.allclose(shown, wrong, atol=5e-4), (q.id, n.value, wrong)
        assert not np.allclose(shown, right, atol=5e-4), (q.id, "the mistake must differ here")


def test_the_scale_distractor_is_worked_by_hand():
    """scoring-factor: choice a) 1/d_k is ``scale-by-dk``; on the notes' scores example the
    line names dividing by d_k (the scores trace's defaults, worked with NumPy)."""
    q = _bank()["scoring-factor"]
    a = q.choice_mistakes.index("scale-by-dk")
    v = check_answer(q, LETTERS[a])
    (n,) = v.diagnoses
    spec = {s.name: np.asarray(s.default, float) for s in input_specs("scores")}
    Q, K = spec["Q"], spec["K"]
    by_dk = (np.atleast_2d(Q) @ K.T / K.shape[1]).ravel()
    shown = np.array([parse_number(x) for x in n.value.strip("[]").split(",")])
    assert np.allclose(shown, by_dk, atol=5e-4), (n.value, by_dk)


def test_an_uncatalogued_distractor_keeps_its_own_line():
    for q in load_bank():
        if q.kind == "mcq" and q.choice_mistakes:
            plain = [i for i, m in enumerate(q.choice_mistakes) if not m and i != q.answer]
            for i in plain:
                v = check_answer(q, LETTERS[i])
                assert v.why_wrong == f"Why not {LETTERS[i]}: {q.why_wrong[i]}"
                assert v.diagnoses == ()
    right = next(q for q, _, _ in _catalogued_choices())
    v = check_answer(right, LETTERS[int(right.answer)])
    assert v.correct and v.why_wrong is None and v.diagnoses == ()


def test_mcq_plain_feedback_names_the_catalogued_mistake(monkeypatch):
    q, i, m = next(_catalogued_choices())
    result = _quiz(monkeypatch, [q], LETTERS[i] + "\n")
    assert result.exit_code == 0, result.output
    assert f"Mistake: {MISTAKES[m].title}" in result.output


def test_student_rounding_helper():
    """The helper types like a student: 3 significant digits, whole numbers as they are."""
    assert student(0.57735) == "0.577" and student(1.0) == "1" and student(-1.4271) == "-1.43"
    assert student(0.020101) == "0.0201" and student(123.456) == "123"


def test_class_mode_shows_the_catalogues_line_for_a_catalogued_distractor():
    """The class host's board shows each distractor's why-line: a catalogued one is named by
    the catalogue's title (its explanation is worked on numbers the room has not seen), not
    left empty (7b3c5bd left it empty)."""
    for q, i, m in _catalogued_choices():
        why = _ask_bank(f"bank:{q.id}").options_why
        assert why[i] == MISTAKES[m].title, (q.id, why[i])
        for j, own in enumerate(q.why_wrong):
            if own:
                assert why[j] == own
