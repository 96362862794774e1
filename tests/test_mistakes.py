"""The mistake catalogue: its records, its computations, and the diagnosis of a number.

Expected numbers come from hand calculation with ``math`` or from the notes; the right
computation is held to the traces' own values (which tests/test_traces.py holds to the
notes), and every mistaken number is checked against an independent hand calculation in a
few places, never copied from the code's output.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

import engine.traces as T
from engine.mistakes import (MISTAKES, applies_to, checkable, computations, diagnose, draw_inputs,
                             follow_up, mistakes_for, run_with)
from engine.mistakes import registry
from engine.mistakes.diagnosis import _explain
from tutor.content_schema import LESSON_IDS

ROOT = Path(__file__).resolve().parents[1]
TRACES = list(T.REGISTRY)

LISTED = ["no-scale", "scale-by-dk", "scale-by-dmodel", "softmax-wrong-axis", "no-exp",
          "no-normalise", "rounded-intermediates", "mask-zero", "mask-after-softmax",
          "causal-transposed", "weights-times-keys", "values-not-projected", "transposed-weight",
          "bahdanau-current-state", "temperature-on-probs", "temperature-multiplied",
          "top-k-not-renormalised", "top-p-excludes-boundary", "beam-adds-probs", "ce-log2",
          "ce-log10", "ce-sum-not-mean", "ce-mean-not-sum", "ce-counts-padding",
          "softmax-grad-diagonal", "pool-counts-padding"]


# --------------------------------------------------------------------------- the records

def test_the_catalogue_has_the_issues_ids_and_at_least_forty_mistakes():
    assert len(MISTAKES) >= 40
    assert set(LISTED) <= set(MISTAKES)
    assert list(MISTAKES) == [m.id for m in MISTAKES.values()]


def test_every_section_of_the_lecture_and_lesson_13_has_mistakes():
    assert {m.section for m in MISTAKES.values()} == set(range(1, 14))


@pytest.mark.parametrize("mid", list(MISTAKES))
def test_each_record_is_well_formed(mid):
    m = MISTAKES[mid]
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", m.id)
    assert m.title and "\n" not in m.title and len(m.title) <= 60
    assert m.lesson in LESSON_IDS and m.lesson == LESSON_IDS[m.section - 1]
    lesson = next((ROOT / "lessons" / "sections").glob(f"{m.section:02d}-*.md")).read_text()
    assert not m.anchor or f"## {m.anchor}\n" in lesson
    assert "{value}" in m.explanation
    assert applies_to(mid), f"{mid} is not built into any computation"


def test_every_trace_has_a_computation_with_a_mistake_that_changes_a_value():
    for name in TRACES:
        names = checkable(name)
        assert any(mistakes_for(name, k) for k in names), name


# --------------------------------------------------------------------------- computations

def _numeric(v) -> bool:
    if isinstance(v, str) or (isinstance(v, list) and (not v or isinstance(v[0], str))):
        return False
    return np.asarray(v).dtype.kind in "fiub"


def trace_values(tr) -> dict[str, np.ndarray]:
    """The numeric values of a built trace by the keys the catalogue uses: a name that steps
    give different numbers is NAME@STEP; a name given one number throughout is bare."""
    occ: dict[str, list] = {}
    for i, step in enumerate(tr.steps, 1):
        for k, v in step.values.items():
            if _numeric(v):
                occ.setdefault(k, []).append((i, np.asarray(v, float)))
    for k, v in tr.result.items():
        if _numeric(v):
            occ.setdefault(k, []).append((None, np.asarray(v, float)))
    out = {}
    for k, items in occ.items():
        first = items[0][1]
        if all(x.shape == first.shape and np.allclose(x, first, rtol=1e-12, atol=0, equal_nan=True)
               for _, x in items):
            out[k] = first
        else:
            out.update({(f"{k}@{i}" if i else k): x for i, x in items})
    return out


def _problems(name: str, n: int = 4) -> list:
    rng = np.random.default_rng(7)
    return [None] + [T.draw_inputs(name, rng) for _ in range(1 if name == "scaling" else n)]


@pytest.mark.parametrize("name", TRACES)
def test_the_right_computation_gives_the_traces_own_numbers(name):
    comp = registry.computation(name)
    skip = set(getattr(comp.module, "NOT_CHECKED", ()))
    extras = set(getattr(comp.module, "EXTRAS", ()))
    for problem in _problems(name):
        expected = trace_values(T.build(name, problem))
        got = run_with(name, problem, ())
        assert set(expected) - skip <= set(got), (problem, set(expected) - set(got))
        assert set(got) - extras <= set(expected)
        for k, x in expected.items():
            if k in got:
                np.testing.assert_allclose(got[k], x, rtol=1e-9, atol=1e-12, err_msg=f"{name} {k}")


@pytest.mark.parametrize("name", computations())
def test_every_declared_mistake_is_consulted_changes_something_and_explains_itself(name):
    comp = registry.computation(name)
    asked = set()
    changed = {m: False for m in comp.mistakes}
    rng = np.random.default_rng(3)
    for problem in [None] + [draw_inputs(name, rng) for _ in range(5)]:
        right, slips = registry.run(name, problem)
        asked |= slips.asked
        for ids in [(m,) for m in comp.mistakes] + list(comp.pairs):
            wrong, _ = registry.run(name, problem, ids)
            _explain(ids, slips.facts, np.zeros(2), np.zeros(2), "x")  # every field is known
            if len(ids) == 1:
                changed[ids[0]] |= any(
                    k in wrong and (wrong[k].shape != x.shape or not np.allclose(
                        wrong[k], x, equal_nan=True)) for k, x in right.items())
    assert set(comp.mistakes) <= asked
    assert all(changed.values()), [m for m, c in changed.items() if not c]


def test_run_with_returns_copies_the_caller_may_change():
    a = run_with("qkv", None, ())
    a["weights"][0] = 99.0
    assert run_with("qkv", None, ())["weights"][0] != 99.0


def test_checkable_lists_the_trace_names_with_their_shapes():
    assert checkable("qkv")["weights"] == (3,)
    assert checkable("qkv")["Q₂"] == (3,)
    assert checkable("encoder")["pre-activation@2"] == (3,)
    assert checkable("scoring-compare")["scaled"] == ()


# --------------------------------------------------------------------------- hand-worked mistakes

def test_no_scale_on_the_issues_example_names_q_dot_k_before_scaling():
    # q = [1, 0, -1], k = [0, 1, -1]: q·k = 1, the scaled score 1/√3
    check = diagnose("scoring-compare", None, "scaled", [1], decimals=0)
    assert not check.correct and check.expected == pytest.approx(1 / math.sqrt(3))
    assert [d.ids for d in check.diagnoses] == [("no-scale",)]
    d = check.diagnoses[0]
    assert d.value == 1 and "√3" in d.explanation and d.lesson == "scoring"
    assert d.trace == "scoring-compare"


def test_the_notes_qkv_slip_is_named():
    # e^(1/√3) = 1.7813 counted once with one of the two e^0: 1.7813 / 2.7813 = 0.6405, and
    # the other 1 / 2.7813 shared by the two equal words, 0.1798 each
    check = diagnose("qkv", None, "weights", [0.64, 0.18, 0.18], decimals=2)
    assert [d.ids for d in check.diagnoses] == [("softmax-term-dropped",)]
    e = math.exp(1 / math.sqrt(3))
    np.testing.assert_allclose(check.diagnoses[0].value, [e / (e + 1), 0.5 / (e + 1), 0.5 / (e + 1)])


def test_scale_by_dk_divides_by_three():
    check = diagnose("scoring-compare", None, "scaled", [0.33], decimals=2)
    assert [d.ids for d in check.diagnoses] == [("scale-by-dk",)]
    assert check.diagnoses[0].value == pytest.approx(1 / 3)


def test_tanh_left_out_of_the_additive_score():
    # v·(W_Q Q + W_K K) = 1 + 1 - 2 = 0 with the identities and v = 1
    check = diagnose("scoring-compare", None, "additive", [0], decimals=0)
    assert [d.ids for d in check.diagnoses] == [("tanh-left-out",)]


def test_a_pair_is_tried_when_no_single_mistake_matches():
    # unscaled scores [1, 0, 0], and the two e^0 counted once: e / (e + 1) = 0.7311
    e = math.e
    check = diagnose("qkv", None, "weights", [0.73, 0.13, 0.13], decimals=2)
    assert [d.ids for d in check.diagnoses] == [("no-scale", "softmax-term-dropped")]
    assert check.diagnoses[0].value[0] == pytest.approx(e / (e + 1))
    assert " + " in check.diagnoses[0].title


def test_two_mistakes_with_one_number_are_both_named_with_a_follow_up():
    # qkv defaults: without exponentials the scores [0.577, 0, 0] give weights [1, 0, 0], and
    # so does giving the two zero scores no weight
    check = diagnose("qkv", None, "weights", [1, 0, 0], decimals=0)
    assert {d.ids for d in check.diagnoses} == {("no-exp",), ("zero-score-zero-weight",)}
    assert check.follow_up is not None
    values = [run_with("qkv", check.follow_up, ids)["weights"] for ids in
              [(), ("no-exp",), ("zero-score-zero-weight",)]]
    rounded = [tuple(np.round(v, 2)) for v in values]
    assert len(set(rounded)) == 3


def test_follow_up_is_reproducible_and_none_when_nothing_differs():
    a = follow_up("multi-head", None, "output", [("scale-by-dmodel",), ("scale-by-dk",)], seed=1)
    b = follow_up("multi-head", None, "output", [("scale-by-dmodel",), ("scale-by-dk",)], seed=1)
    assert a is not None and str(a) == str(b)
    assert follow_up("pooling", None, "max", [("pool-divides-by-n",)]) is None  # max never moves


# --------------------------------------------------------------------------- the matching rule

def test_digits_typed_decide_correct_and_imprecise():
    right = 1 / math.sqrt(3)  # 0.5774
    assert diagnose("scoring-compare", None, "scaled", [0.58], decimals=2).correct
    assert diagnose("scoring-compare", None, "scaled", [0.577], decimals=3).correct
    assert not diagnose("scoring-compare", None, "scaled", [0.578], decimals=3).correct
    check = diagnose("scoring-compare", None, "scaled", [0.6], decimals=1)
    assert not check.correct and check.imprecise and not check.diagnoses  # one significant digit
    check = diagnose("scoring-compare", None, "scaled", [0.58], decimals=2, tolerance=0.0005)
    assert not check.correct and check.imprecise
    assert diagnose("scoring-compare", None, "scaled", [right]).correct  # exact
    assert diagnose("scoring-compare", None, "scaled", [0.577], decimals=3, tolerance=0.001).correct


def test_a_truncated_right_answer_is_imprecise_never_a_mistake():
    # 1/√3 = 0.57735 cut to two decimals is 0.57 (rounded: 0.58)
    check = diagnose("scoring-compare", None, "scaled", [0.57], decimals=2)
    assert not check.correct and check.imprecise and not check.diagnoses


def test_a_number_no_mistake_gives_is_unknown():
    check = diagnose("scoring-compare", None, "scaled", [0.123], decimals=3)
    assert not check.correct and not check.imprecise and check.diagnoses == ()


@pytest.mark.parametrize("name", TRACES)
def test_right_answers_are_never_diagnosed(name):
    for problem in _problems(name, 2):
        for key, x in run_with(name, problem, ()).items():
            for digits in (2, 3, 4):
                d = np.full(x.size, digits)
                given = np.where(np.isfinite(x), np.round(x, digits), x)
                check = diagnose(name, problem, key, given, decimals=d)
                assert check.diagnoses == (), (name, key, given)
                assert check.correct or check.imprecise


def test_bad_checks_raise_one_line_value_errors():
    with pytest.raises(ValueError, match="no trace named"):
        diagnose("nope", None, "x", [1])
    with pytest.raises(ValueError, match="no checkable value 'nothing'"):
        diagnose("qkv", None, "nothing", [1])
    with pytest.raises(ValueError, match="got 2 numbers, expected 3"):
        diagnose("qkv", None, "weights", [0.5, 0.5])
    with pytest.raises(ValueError, match="different at each step"):
        diagnose("encoder", None, "pre-activation", [0.5, 0.1, -0.3])


def test_subscripted_names_can_be_typed_in_ascii():
    assert diagnose("qkv", None, "Q2", [0, 1, 0], decimals=0).name == "Q₂"
    assert diagnose("encoder", None, "W_HX X1", [0.5, 0.1, -0.3], decimals=1).correct


def test_a_masked_score_can_be_typed_as_minus_infinity():
    right = run_with("masking", None, ())["masked_scores"]
    assert diagnose("masking", None, "masked_scores", right).correct
    zeroed = np.where(np.isinf(right), 0.0, right)
    check = diagnose("masking", None, "masked_scores", zeroed)
    assert [d.ids for d in check.diagnoses] == [("mask-zero",)]


def test_value_key_finds_a_step_value_by_its_step():
    from engine.mistakes import value_key

    assert value_key("encoder", None, "pre-activation", 2) == "pre-activation@2"
    assert value_key("encoder", None, "H₂", 2) == "H₂"
    assert value_key("self-attention", None, "focus", 5) is None  # words are not checked


def test_one_row_or_one_entry_can_be_checked():
    # row 2 of the §5 self-attention weights is the qkv trace's softmax: e/(e + 2) = 0.4711
    e = math.exp(1 / math.sqrt(3))
    check = diagnose("self-attention", None, "A[2]", [0.47, 0.26, 0.26], decimals=2)
    assert check.correct and check.name == "A[2]"
    np.testing.assert_allclose(check.expected, [e / (e + 2), 1 / (e + 2), 1 / (e + 2)])
    check = diagnose("self-attention", None, "A[2,1]", [0.64], decimals=2)
    assert [d.ids for d in check.diagnoses] == [("softmax-term-dropped",)]
    with pytest.raises(ValueError, match="count from 1"):
        diagnose("self-attention", None, "A[4]", [1, 2, 3])


def test_a_whole_number_among_decimals_is_read_at_the_answers_precision():
    # attention-backward row 2: ∂L/∂s = α ⊙ (dα − α·dα) with α = (e, 1, 1)/(e + 2) and
    # dα = (1, 0, 0): the entries 2 and 3 are −α₁α₂ = −0.1246, not 0
    e = math.exp(1 / math.sqrt(3))
    a = np.array([e, 1, 1]) / (e + 2)
    check = diagnose("attention-backward", None, "d_scores_2", [0.249, 0, 0], decimals=[3, 0, 0])
    assert not check.correct and not check.imprecise
    np.testing.assert_allclose(check.expected, a * (np.array([1, 0, 0]) - a[0]))
    # without the cross terms the Jacobian gives α₁(1 − α₁) and zeros
    assert [d.ids for d in check.diagnoses] == [("softmax-grad-diagonal",)]
