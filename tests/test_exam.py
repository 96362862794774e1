"""Structured exam questions: the files' schema, the makers' numbers, follow-through marking
(on cases worked by hand) and paper assembly."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from tutor.content import LECTURE_SECTIONS, LESSON_IDS
from tutor.content_schema import ContentError
from tutor.exam.marking import AnswerError, mark_question, mark_text, parse_answer, parse_ticks
from tutor.exam.model import by_id, load_questions
from tutor.exam.numbers import make, names
from tutor.exam.paper import PaperError, instantiate, make_paper

QUESTIONS = load_questions()


def test_counts_and_coverage():
    assert len(QUESTIONS) >= 24
    assert {q.section for q in QUESTIONS} == set(LESSON_IDS[:LECTURE_SECTIONS])   # the notes
    for q in QUESTIONS:
        assert 3 <= len(q.parts) <= 6 and 8 <= q.marks <= 25, q.id
    kinds = {p.kind for q in QUESTIONS for p in q.parts}
    assert kinds == {"numeric", "text"}


@pytest.mark.parametrize("spec", QUESTIONS, ids=lambda q: q.id)
def test_every_question_fills_in_and_its_numbers_vary(spec):
    stems = set()
    for seed in range(6):
        q = instantiate(spec, seed)
        for text in [q.stem] + [p.prompt for p in q.parts]:
            assert not re.search(r"\{[A-Za-z_]\w*(?:[!:][^{}]*)?\}", text), (spec.id, text)
        for p in q.parts:
            assert p.model_answer and p.spec.mistakes
            if p.kind == "numeric" and p.spec.method:
                assert p.uses, (spec.id, p.letter)
        stems.add(q.stem + "".join(p.prompt for p in q.parts))
    if spec.numbers and spec.numbers != "qkv-notes":  # the notes' own numbers are the point there
        assert len(stems) >= 3, spec.id


@pytest.mark.parametrize("name", names())
def test_redo_on_the_true_values_gives_the_answer(name):
    for seed in range(25):
        numbers = make(name, seed)
        for key, step in numbers.steps.items():
            assert step.working
            if step.redo is not None:
                got = step.redo({u: numbers.steps[u].answer for u in step.uses})
                np.testing.assert_allclose(got, step.answer, atol=1e-12, err_msg=f"{name} {key}")


def test_a_broken_file_is_reported_field_by_field(tmp_path):
    (tmp_path / "x.toml").write_text(
        '[[question]]\nid = "bad id"\ntitle = "t"\nsection = "nowhere"\nstem = "s"\n'
        '[[question.part]]\nkind = "text"\nmarks = 2\nprompt = "p"\npoints = ["one"]\n'
        'mistakes = ["m"]\nmodel = "m"\nextra = 1\n', encoding="utf-8")
    with pytest.raises(ContentError) as info:
        load_questions(tmp_path)
    text = str(info.value)
    for needle in ("'bad id'", "'nowhere'", "needs 3–6", "1 points for 2 marks", "unknown field 'extra'"):
        assert needle in text, needle


# ------------------------------------------------------------------ follow-through, by hand

def _notes_question():
    return instantiate(by_id()["xq-qkv-notes-erratum"], 0)


def test_notes_question_right_answers_earn_everything():
    q = _notes_question()
    # by hand: Q_2·K_1 = 1, others 0; 1/√3 = 0.5774; e^0.5774 = 1.7813; α_1 = 1.7813/3.7813
    m = mark_question(q, {"a": "0.577, 0, 0", "b": "0.471, 0.265, 0.265", "c": "0.47, 0.26",
                          "d": (0, 1, 2)})
    assert [p.status for p in m.parts[:3]] == ["right"] * 3
    assert m.earned == m.marks == 10


def test_follow_through_from_a_wrong_scale():
    q = _notes_question()
    # (a) divided by 3 instead of √3: scores (1/3, 0, 0) — wrong.
    # by hand: e^(1/3) = 1.3956, sum 3.3956 → α = (0.4110, 0.2945, 0.2945)
    # output = α_1·[1, 0] + α_2·[0, 1] + α_3·[0, 0] = [0.4110, 0.2945]
    m = mark_question(q, {"a": "1/3, 0, 0", "b": "0.411, 0.2945, 0.2945", "c": "0.411, 0.2945"})
    a, b, c = m.parts[:3]
    assert (a.status, a.earned) == ("wrong", 0)
    # error carried forward: right working from the student's own (a) earns the full marks
    assert (b.status, b.earned, b.marks) == ("follow-through", 3, 3)
    assert "Follow-through" in b.feedback and "(a) = [0.3333, 0, 0]" in b.feedback
    assert "error carried forward" in b.feedback
    assert (c.status, c.earned, c.marks) == ("follow-through", 2, 2)
    assert "(b) = [0.411, 0.2945, 0.2945]" in c.feedback


def test_the_notes_printed_weights_lose_b_but_c_follows_through():
    q = _notes_question()
    # 0.64/0.18/0.18 is not softmax(0.577, 0, 0); but [0.64, 0.18] is the right sum from it
    m = mark_question(q, {"a": "0.5774, 0, 0", "b": "0.64, 0.18, 0.18", "c": "0.64, 0.18"})
    assert [(p.status, p.earned) for p in m.parts[:3]] == [("right", 2), ("wrong", 0),
                                                             ("follow-through", 2)]


def test_no_follow_through_from_a_blank_or_for_different_working():
    q = _notes_question()
    m = mark_question(q, {"b": "0.411, 0.2945, 0.2945"})
    assert [(p.status, p.earned) for p in m.parts[:2]] == [("blank", 0), ("wrong", 0)]
    m = mark_question(q, {"a": "1/3, 0, 0", "b": "0.5, 0.25, 0.25"})  # not softmax of (a)
    assert (m.parts[1].status, m.parts[1].earned) == ("wrong", 0)


def test_encoder_chain_follows_through_twice():
    q = instantiate(by_id()["xq-encoder-run"], 3)
    X, W_HX, W_HH = (q_data := make("encoder-run", 3).data)["X"], q_data["W_HX"], q_data["W_HH"]
    # (a) wrong: [0, 0]. Then by hand H_2 = tanh(W_HX X_2 + W_HH·0) = tanh(W_HX X_2),
    # H_3 = tanh(W_HX X_3 + W_HH H_2) — computed here with plain math, not the engine
    h2 = [math.tanh(sum(W_HX[r, c] * X[1, c] for c in range(2))) for r in range(2)]
    h3 = [math.tanh(sum(W_HX[r, c] * X[2, c] for c in range(2)) + W_HH[r, r] * h2[r])
          for r in range(2)]
    m = mark_question(q, {"a": "0, 0", "b": ", ".join(f"{x:.4f}" for x in h2),
                          "c": ", ".join(f"{x:.4f}" for x in h3)})
    a, b, c = m.parts[:3]
    assert a.earned == 0 and a.value == (0.0, 0.0)
    assert (b.status, b.earned) == ("follow-through", 3) and (c.status, c.earned) == ("follow-through", 3)


def test_text_parts_are_self_marked_and_capped():
    q = instantiate(by_id()["xq-encoder-run"], 0)
    d = q.part("d")
    assert (len(d.spec.points), d.marks) == (4, 3)
    assert mark_text(d, [0, 2]).earned == 2
    capped = mark_text(d, range(4))
    assert capped.earned == 3 and "4 points ticked" in capped.feedback
    assert parse_ticks("1, 3", 4) == (0, 2) and parse_ticks("all", 4) == (0, 1, 2, 3)
    assert parse_ticks("none", 4) == ()
    with pytest.raises(AnswerError, match="1–4"):
        parse_ticks("5", 4)


def test_bad_numeric_answers_are_refused_with_a_hint():
    q = _notes_question()
    with pytest.raises(AnswerError, match="not a number"):
        parse_answer(q.part("a"), "0.5, x, 0")
    with pytest.raises(AnswerError, match="this answer has 3"):
        parse_answer(q.part("a"), "0.5, 0")
    assert parse_answer(q.part("a"), "  ") is None
    assert parse_answer(q.part("a"), "[1/2; 0; 0]") == (0.5, 0.0, 0.0)
    count = instantiate(by_id()["xq-decoder-output"], 0).part("c")
    assert parse_answer(count, "25,600,000") == 25_600_000.0
    with pytest.raises(AnswerError, match="decimal point, not a comma: 0.5"):
        parse_answer(count, "0,5")


def test_a_numeric_part_reads_numbers_as_the_quiz_does_and_asks_about_0_367():
    count = instantiate(by_id()["xq-decoder-output"], 0).part("c")
    for typed, value in [("√64", 8.0), ("sqrt(64)", 8.0), ("2^-3", 0.125), ("≈0.367", 0.367),
                         ("1e-3", 0.001), ("25 600 000", 25_600_000.0)]:
        assert parse_answer(count, typed) == value, typed
    for typed, hint in [("0,367", "could be 0.367 or 367"), ("1 2", "not a list"), ("abc", "'abc' is not")]:
        with pytest.raises(AnswerError, match=hint):  # refused with a hint: never marked
            parse_answer(count, typed)
    vector = _notes_question().part("a")
    assert parse_answer(vector, "[sqrt(1/4), 0, 2^-1]") == (0.5, 0.0, 0.5)


@pytest.mark.parametrize("name", names())
def test_quoted_numbers_can_be_worked_by_hand(name):
    for seed in range(10):
        for field, text in make(name, seed).fields.items():
            for x in re.findall(r"-?\d+\.\d+", text):
                assert len(x.split(".")[1]) <= 2, (name, seed, field, x)


# ------------------------------------------------------------------ papers

def test_paper_is_reproducible_spread_and_prefers_unattempted():
    p1, p2 = make_paper(3, 45, seed=11), make_paper(3, 45, seed=11)
    assert [q.id for q in p1.questions] == [q.id for q in p2.questions]
    assert [q.stem for q in p1.questions] == [q.stem for q in p2.questions]
    assert len({q.spec.section for q in p1.questions}) == 3
    assert p1.time_limit_s == 45 * 60 and p1.marks == sum(q.marks for q in p1.questions)
    done = [q.id for q in QUESTIONS[:20]]
    fresh = make_paper(3, None, seed=2, attempted=done)
    assert not {q.id for q in fresh.questions} & set(done) and fresh.time_limit_s is None
    only = make_paper(2, 30, seed=0, sections=["decoding"])
    assert {q.spec.section for q in only.questions} == {"decoding"}


def test_paper_errors():
    with pytest.raises(PaperError, match="at least 1"):
        make_paper(0)
    with pytest.raises(PaperError, match="only 2"):
        make_paper(3, sections=["decoding"])
    with pytest.raises(PaperError, match="no exam question 'xq-nope'"):
        make_paper(ids=["xq-nope"])


# ------------------------------------------------------------------ a sitting

def test_paper_run_marks_as_it_goes_saves_each_part_and_times_out(tmp_path):
    from tutor.exam.render import feedback_lines, result_lines
    from tutor.exam.session import PaperRun
    from tutor.store import open_store
    from tutor.store.papers import papers

    now = [0.0]
    paper = make_paper(ids=["xq-qkv-notes-erratum", "xq-encoder-run"], minutes=10)
    with open_store(tmp_path / "p.sqlite3") as store:
        run = PaperRun(paper, store, clock=lambda: now[0])
        run.start()
        assert run.remaining() == 600 and run.position == (0, 8)
        with pytest.raises(AnswerError):
            run.answer("zero")  # not marked: still part (a)
        assert run.position == (0, 8)
        assert run.answer("1/3, 0, 0").status == "wrong"
        ft = run.answer("0.411, 0.2945, 0.2945")  # by hand: softmax(1/3, 0, 0)
        assert (ft.status, ft.earned) == ("follow-through", 3)
        assert "Follow-through" in " ".join(feedback_lines(paper.questions[0].part("b"), ft))
        run.answer("0.411, 0.2945")
        assert run.answer([0, 1]).earned == 2  # (d): two points ticked
        now[0] = 601.0
        assert run.expired and run.remaining() == 0
        result = run.finish()
        assert result.status == "timed-out" and result.saved
        assert result.total == paper.marks and result.earned == 0 + 3 + 2 + 2
        assert [m.status for m in result.marks[1][1]] == ["blank"] * 4
        (rec,) = papers(store)
        assert rec.status == "timed-out" and (rec.earned, rec.marks) == (7, paper.marks)
        assert [p.part for p in rec.parts][:3] == ["a", "b", "c"] and rec.parts[0].response == "1/3, 0, 0"
    text = "\n".join(result_lines(result))
    assert "timed-out: 7/" in text and "Follow-through (error carried forward) earned 5 marks on 2 parts" in text


@pytest.mark.parametrize("spec", [q for q in QUESTIONS if any(p.method for p in q.parts)],
                         ids=lambda q: q.id)
def test_every_follow_through_part_credits_working_from_a_wrong_earlier_value(spec):
    """Shift each earlier answer a part builds on by +0.3; typing the redone value earns the
    part's full marks (error carried forward), typing the true answer earns all too."""
    from tutor.exam.marking import mark_numeric

    for seed in range(4):
        q = instantiate(spec, seed)
        for part in q.parts:
            if not part.spec.method:
                continue
            earlier = {}
            for letter, step_name in zip(part.uses, part.step.uses):
                true = q.part(letter).step.answer
                if isinstance(true, float) and true == int(true):  # a count: one fewer (or more)
                    earlier[letter] = (true - 1 if true > 1 else true + 1, False)
                    continue
                earlier[letter] = (tuple(x + 0.3 for x in true) if isinstance(true, tuple)
                                   else true + 0.3, False)
            redone = part.step.redo({s: earlier[l][0] for l, s in zip(part.uses, part.step.uses)})
            m = mark_numeric(part, redone, earlier)
            same = np.allclose(redone, part.step.answer, atol=part.step.tolerance)
            assert (m.status, m.earned) == (("right", part.marks) if same else
                                            ("follow-through", part.marks)), (seed, part.letter)
            assert mark_numeric(part, part.step.answer, earlier).earned == part.marks


# ------------------------------------------------------------------ content fixes (issue 34)

def test_self_attention_in_the_encoder_runs_over_the_source_itself():
    """xq-self-vs-cross: the encoder's self-attention sequence is the source, so n = T."""
    for seed in range(30):
        numbers = make("attention-sizes", seed)
        n, T, T_out = (int(numbers.fields[k]) for k in ("n", "T", "T_out"))
        assert n == T
        assert numbers.steps["self"].answer == T * T and numbers.steps["cross"].answer == T_out * T


def test_length_normalisation_compares_two_lengths():
    """xq-greedy-vs-beam (d): a one-word hypothesis wins on the raw sum and loses once both are
    divided by L^α; the answers are (ln P₁ / 1^α, ln P₂ / 2^α), worked here with math."""
    for seed in range(40):
        numbers = make("beam", seed)
        short, alpha = numbers.data["short"], numbers.data["alpha"]
        two = numbers.steps["beam"].answer
        assert short > two  # the raw sums prefer the short one
        want = (short / 1 ** alpha, two / 2 ** alpha)
        np.testing.assert_allclose(numbers.steps["norm"].answer, want, atol=1e-12)
        assert want[1] > want[0]  # normalised, the two-word one wins
        assert numbers.fields["short"] == f"{short:g}"


def test_exam_text_fixed_where_the_issue_found_it_wrong():
    """The scheme points and model answers the examiner disputed now say the right thing."""
    def text(qid, letter):
        part = by_id()[qid].parts["abcdef".index(letter)]
        return " ".join([part.prompt, part.model, *part.points])

    swap = text("xq-cross-attention-step", "e")
    assert "cross-attention" in swap and "other way" in swap and "own states, i.e. self-attention" not in swap
    cascade_d, cascade_e = text("xq-error-cascade", "d"), text("xq-error-cascade", "e")
    assert "without recurrence" in cascade_d and "RNN decoder still" in cascade_d
    assert "beam search" not in cascade_e.lower()
    assert "embedding table" in text("xq-decoder-output", "d")
    assert "2.5" in text("xq-padding-mask", "d") and "NaN" in text("xq-padding-mask", "d")
    additive = text("xq-scaled-vs-additive", "e")
    assert "projects each query and each key once" in additive and "q- and k-projections for every pair" not in additive
    slip = text("xq-qkv-notes-erratum", "d")
    assert "1.79 / 2.79" in slip and "(1 − 0.64) / 2 = 0.18" in slip
    assert abs(1.79 / 2.79 - 0.64) < 0.005 and abs((1 - 0.64) / 2 - 0.18) < 1e-12  # the slip reproduces both


def test_beam_short_hypothesis_field_is_quoted_in_d():
    spec = by_id()["xq-greedy-vs-beam"]
    assert "{short}" in spec.parts[3].prompt and spec.parts[3].step == "norm"


# ------------------------------------------------------------------ beyond the notes' examples

def _softmax(xs):
    e = [math.exp(x - max(xs)) for x in xs]
    return [x / sum(e) for x in e]


def test_luong_numbers_by_naive_computation():
    for seed in range(30):
        d = make("luong", seed)
        h, H, W = d.data["h"], d.data["H"], d.data["W"]
        dot = [sum(h[c] * r[c] for c in range(2)) for r in H]
        gen = [sum(h[a] * W[a][c] * r[c] for a in range(2) for c in range(2)) for r in H]
        alpha = _softmax(gen)
        ctx = [sum(alpha[s] * H[s][c] for s in range(3)) for c in range(2)]
        for step, want in (("dot", dot), ("general", gen), ("alpha", alpha), ("context", ctx)):
            np.testing.assert_allclose(d.steps[step].answer, want, atol=1e-12, err_msg=step)
        assert not np.allclose(dot, gen)  # W_a matters: (a) and (b) differ


def test_two_heads_numbers_and_the_one_head_impossibility():
    for seed in range(30):
        d = make("two-heads", seed)
        V, a1, a2, i, j = (d.data[k] for k in ("V", "a1", "a2", "i", "j"))
        W_O, g = d.data["W_O"], d.data["g"]
        o1 = sum(a1[t] * V[t][0] for t in range(3))
        o2 = sum(a2[t] * V[t][1] for t in range(3))
        np.testing.assert_allclose(d.steps["two"].answer, [o1, o2], atol=1e-12)
        avg = [(a1[t] + a2[t]) / 2 for t in range(3)]
        np.testing.assert_allclose(d.steps["one"].answer,
                                   [sum(avg[t] * V[t][c] for t in range(3)) for c in range(2)], atol=1e-12)
        # the gate derivative by central differences of L = g · (ξ₁ o¹ W^O_1 + ξ₂ o² W^O_2)
        def loss(x1, x2):
            return sum(g[c] * (x1 * o1 * W_O[0][c] + x2 * o2 * W_O[1][c]) for c in range(2))
        h = 1e-6
        fd = [abs((loss(1 + h, 1) - loss(1 - h, 1)) / (2 * h)), abs((loss(1, 1 + h) - loss(1, 1 - h)) / (2 * h))]
        np.testing.assert_allclose(d.steps["importance"].answer, fd, atol=1e-6)
        # only token i carries coordinate 1 and only token j coordinate 2, and one head would
        # need α_i = α¹_i and α_j = α²_j in one distribution: impossible, they sum past 1
        assert V[i][1] == 0 and V[j][0] == 0 and all(V[t][0] == 0 for t in range(3) if t != i)
        assert all(V[t][1] == 0 for t in range(3) if t != j) and a1[i] + a2[j] > 1


# ------------------------------------------------------------------ error carried forward
# issue 34 §2: these five dependent parts had no method marks, so a right answer worked from
# the student's own wrong earlier value earned nothing. Each is worked here by hand (plain
# Python, not the makers' redo) from a wrong earlier answer, and must earn the part's marks.

def _sit(qid: str, seed: int, answers: dict) -> dict:
    m = mark_question(instantiate(by_id()[qid], seed), answers)
    return {p.letter: p for p in m.parts}


@pytest.mark.parametrize("seed", range(3))
def test_dynamic_context_c_follows_a_wrong_a(seed):
    e = list(make("dynamic-context", seed).data["e"])
    true_top = e.index(max(e))
    j = (true_top + 1) % 3                      # the student's weights peak elsewhere
    alpha = [0.1, 0.1, 0.1]
    alpha[j] = 0.8
    parts = _sit("xq-dynamic-context", seed, {"a": ", ".join(map(str, alpha)), "c": str(j + 1)})
    assert parts["a"].status == "wrong"
    assert (parts["c"].status, parts["c"].earned, parts["c"].marks) == ("follow-through", 1, 1)
    assert _sit("xq-dynamic-context", seed, {"a": ", ".join(map(str, alpha)),
                                            "c": str(true_top + 1)})["c"].status == "right"


@pytest.mark.parametrize("seed", range(3))
def test_sampling_sets_c_follows_a_wrong_b(seed):
    p = sorted(make("sampling", seed).data["p"], reverse=True)
    top_p = make("sampling", seed).data["top_p"]
    true_n = next(n for n in range(1, 6) if sum(p[:n]) >= top_p - 1e-12)
    n = true_n - 1 if true_n > 1 else true_n + 1   # one word too few (or too many)
    renormalised = p[0] / sum(p[:n])                 # by hand: the top word over the kept mass
    parts = _sit("xq-sampling-sets", seed, {"b": str(n), "c": f"{renormalised:.4f}"})
    assert parts["b"].status == "wrong"
    assert (parts["c"].status, parts["c"].earned, parts["c"].marks) == ("follow-through", 2, 2)


@pytest.mark.parametrize("seed", range(3))
def test_sequence_loss_b_and_c_follow_a_wrong_a(seed):
    data = make("sequence-loss", seed).data
    each = [-math.log(data["P"][t][data["y"][t]]) + 0.5 for t in range(3)]  # (a) off by 0.5 each
    total = sum(each)
    parts = _sit("xq-sequence-loss", seed, {"a": ", ".join(f"{x:.4f}" for x in each),
                                            "b": f"{total:.4f}", "c": f"{total / 3:.4f}"})
    assert parts["a"].status == "wrong"
    for letter in "bc":  # 1-mark parts: the mark follows through (it used to be out of reach)
        assert (parts[letter].status, parts[letter].earned, parts[letter].marks) == ("follow-through", 1, 1)
    # (b) right, (c) divided a wrong total of the student's own: still follows
    wrong_total = total + 1
    parts = _sit("xq-sequence-loss", seed, {"b": f"{wrong_total:.4f}", "c": f"{wrong_total / 3:.4f}"})
    assert (parts["c"].status, parts["c"].earned) == ("follow-through", 1)


@pytest.mark.parametrize("seed", range(3))
def test_label_smoothing_c_follows_a_wrong_b(seed):
    data = make("label-smoothing", seed).data
    p, y, eps = list(data["p"]), data["y"], data["eps"]
    q_ref = 1 - eps                                   # the listed mistake: no ε/V share
    loss = q_ref * -math.log(p[y]) + sum(eps / 4 * -math.log(p[v]) for v in range(4) if v != y)
    parts = _sit("xq-label-smoothing", seed, {"b": f"{q_ref:g}", "c": f"{loss:.4f}"})
    assert parts["b"].status == "wrong"
    c = parts["c"]
    assert (c.status, c.earned, c.marks) == ("follow-through", 3, 3)
    assert "error carried forward" in c.feedback and f"(b) = {q_ref:g}" in c.feedback


def test_every_dependent_part_states_its_method_marks():
    """A part that builds on an earlier one can earn follow-through: it must say its method marks
    (1 to its marks; a 1-mark part may be all method) and its maker must redo it."""
    for spec in QUESTIONS:
        q = instantiate(spec, 0)
        for part in q.parts:
            if part.kind == "numeric" and part.step.uses:
                assert 1 <= part.spec.method <= part.marks and part.step.redo, (spec.id, part.letter)


_LOSS_QUESTION = '''
[[question]]
id = "xq-test-loss"
title = "t"
section = "training"
exam_topics = ["exam-cross-entropy"]
numbers = "sequence-loss"
stem = "s {rows}"

[[question.part]]
kind = "numeric"
step = "each"
marks = 2
prompt = "(a)"
mistakes = ["m"]

[[question.part]]
kind = "numeric"
step = "total"
marks = {marks}
{method}
prompt = "(b)"
mistakes = ["m"]

[[question.part]]
kind = "text"
marks = 6
prompt = "(c)"
points = ["1", "2", "3", "4", "5", "6"]
mistakes = ["m"]
model = "m"
'''


def _loss_question(tmp_path, marks: int, method: str):
    (tmp_path / "q.toml").write_text(_LOSS_QUESTION.replace("{marks}", str(marks))
                                     .replace("{method}", method), encoding="utf-8")
    return load_questions(tmp_path)[0]


def test_the_method_marks_rule_is_enforced(tmp_path):
    for folder in "abc":
        (tmp_path / folder).mkdir()
    # more method marks than the part has
    with pytest.raises(ContentError, match=r"method marks \(3\) are more than the part's 2"):
        _loss_question(tmp_path / "a", 2, "method = 3")
    # follow-through limited to method marks needs an accuracy mark left over
    with pytest.raises(ContentError, match="follow_through = 'method' needs method marks from 1 to 1"):
        _loss_question(tmp_path / "b", 2, 'method = 2\nfollow_through = "method"')
    # a dependent part without method marks cannot be sat
    spec = _loss_question(tmp_path / "c", 2, "")
    with pytest.raises(ValueError, match="needs its method marks"):
        instantiate(spec, 0)


def test_a_scheme_may_limit_follow_through_to_the_method_marks(tmp_path):
    """Error carried forward is the default; ``follow_through = "method"`` is the scheme saying
    otherwise: right working from a wrong (a) then earns only the method mark, and says so."""
    spec = _loss_question(tmp_path, 2, 'method = 1\nfollow_through = "method"')
    data = make("sequence-loss", 0).data
    each = [-math.log(data["P"][t][data["y"][t]]) + 0.5 for t in range(3)]
    m = mark_question(instantiate(spec, 0), {"a": ", ".join(f"{x:.4f}" for x in each),
                                             "b": f"{sum(each):.4f}"})
    b = m.parts[1]
    assert (b.status, b.earned, b.marks) == ("follow-through", 1, 2)
    assert "only its 1 method mark" in b.feedback


def test_the_end_line_counts_only_follow_through_that_earned_marks():
    from tutor.exam.render import result_lines
    from tutor.exam.session import PaperRun

    paper = make_paper(ids=["xq-sequence-loss"], minutes=0)
    blank = PaperRun(paper)
    blank.start()
    assert not any("Follow-through" in line for line in result_lines(blank.finish()))
    run = PaperRun(paper)
    run.start()
    data = make("sequence-loss", paper.questions[0].seed).data
    each = [-math.log(data["P"][t][data["y"][t]]) + 0.5 for t in range(3)]
    run.answer(", ".join(f"{x:.4f}" for x in each))
    run.answer(f"{sum(each):.4f}")
    lines = result_lines(run.finish("stopped"))
    assert "  Follow-through (error carried forward) earned 1 mark on 1 part." in lines
