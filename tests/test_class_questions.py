"""What the instructor can push: every listed source resolves; practice-trace steps and exam
parts give each student their own numbers and are marked on them; multiple choice shows the
mistake behind each distractor. Expected weights by hand (plain Python), not by the code."""

from __future__ import annotations

import math

import numpy as np

from engine import traces
from engine.mistakes import MISTAKES
from tutor.classroom.marking import RIGHT
from tutor.classroom.questions import ask, quick_sources, source
from tutor.quiz.generators import generate
from tutor.classroom.room import Room
from tutor.quiz.bank import by_id, load_bank


def row_weights(inputs: dict, scale: bool = True) -> list[float]:
    """softmax over j of (x_p W_Q)·(x_j W_K) / √d_k for the trace's position p (1-based)."""
    X, W_Q, W_K = (np.asarray(inputs[k]).tolist() for k in ("X", "W_Q", "W_K"))

    def times(r, W):
        return [sum(r[i] * W[i][c] for i in range(len(r))) for c in range(len(W[0]))]

    q = times(X[inputs["position"] - 1], W_Q)
    s = [sum(a * b for a, b in zip(q, times(x, W_K))) for x in X]
    s = [v / math.sqrt(len(W_K[0])) for v in s] if scale else s
    top = max(s)
    e = [math.exp(v - top) for v in s]
    return [x / sum(e) for x in e]


def test_every_listed_source_resolves_and_free_answers_are_left_out():
    sources = quick_sources()
    assert {s.kind for s in sources} == {"bank", "gen", "paper"}
    for s in sources:
        assert source(s.ref).title
    free = [q.id for q in load_bank() if q.kind == "free"]
    assert free and not any(s.ref == f"bank:{qid}" for s in sources for qid in free)


def test_a_trace_step_has_numbers_per_student_and_is_marked_on_them():
    seeds = [11, 12]
    asked = [ask("trace:qkv:weights", seed) for seed in seeds]
    assert asked[0].view["prompt"] != asked[1].view["prompt"]
    for seed, a in zip(seeds, asked):
        inputs = traces.draw_inputs("qkv", np.random.default_rng(seed))
        right = ", ".join(f"{w:.6f}" for w in row_weights(inputs))
        assert a.mark(right).bucket == RIGHT
        unscaled = row_weights(inputs, scale=False)
        if max(abs(x - y) for x, y in zip(unscaled, row_weights(inputs))) > 1e-3:
            mark = a.mark(", ".join(f"{w:.6f}" for w in unscaled))
            assert not mark.correct and "no-scale" in mark.bucket.split("+")
        assert not a.mark("1, 2").valid, "three numbers are asked for"


def test_an_exam_part_has_numbers_per_student():
    ref = next(s.ref for s in quick_sources() if s.kind == "paper")
    a, b = ask(ref, 1), ask(ref, 2)
    assert a.view["prompt"] != b.view["prompt"]
    assert a.mark(a.answer_text.strip("[]")).correct
    assert not a.mark("12345").correct


def test_multiple_choice_bars_show_the_mistake_behind_each_distractor():
    q = by_id(load_bank())["scoring-factor"]
    a = ask("bank:scoring-factor", 0)
    room = Room("s", 1)
    room.push(a.ref, "factor", a)
    bars = room.bars()
    assert [b.title for b in bars] == list(q.choices)
    assert [b.right for b in bars] == [i == q.answer for i in range(len(q.choices))]
    own = [MISTAKES[m].title if m else q.why_wrong[i] for i, m in enumerate(q.choice_mistakes)]
    assert [b.why for b in bars] == own, "a catalogued distractor is named by the catalogue"
    assert a.mark("a").bucket == "a" and a.mark("1/√d_k").correct


def test_a_generated_row_of_a_matrix_is_diagnosed_on_the_students_own_numbers():
    """The masked-softmax family asks for one query's row of the weight matrix: the class
    marks it through the part's link (the row), not by looking for a whole value equal to
    the answer (there is none: the trace's value is the 4×4 matrix)."""
    for seed in range(40):
        problem = generate("masked-softmax", seed)
        if problem.data["allowed"].all():
            continue
        s, allowed = problem.data["scores"], problem.data["allowed"]
        zeroed = np.where(allowed, s, 0.0)  # the mistake, by hand: masked scores set to 0
        e = np.exp(zeroed)
        typed = ", ".join(f"{x:.3f}" for x in e / e.sum())
        mark = ask("gen:masked-softmax", seed).mark(typed)
        assert mark.valid and not mark.correct
        assert mark.bucket == "mask-zero", (seed, typed, mark)
        return
    raise AssertionError("no masked problem among 40 seeds")
