"""engine.decoding: models, greedy decoding, beam search, the lecture's example."""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference_decoding as ref
from engine.traces.lecture_beam import lecture_beam_example
from engine.decoding import (
    FunctionModel,
    TableModel,
    beam_search,
    greedy_decode,
    length_normalised_score,
    length_penalty_factor,
    score_sequence,
    top_candidates,
)

PENALTIES = [None, ("hf", 1.0), ("hf", 0.5), ("gnmt", 0.6), ("gnmt", 2.0), ("hf", -0.5)]


def random_table(seed: int, V: int, order: int, eos_mass: float | None = None) -> np.ndarray:
    """Seeded Dirichlet rows, shape (V,) * order; optionally P(EOS = token 1) fixed."""
    rng = np.random.default_rng(seed)
    t = rng.dirichlet(np.full(V, 0.7), size=V ** (order - 1)).reshape((V,) * order)
    if eos_mass is not None:
        rest = np.delete(t, 1, axis=-1)
        rest = rest / rest.sum(axis=-1, keepdims=True) * (1 - eos_mass)
        t = np.insert(rest, 1, eos_mass, axis=-1)
    return t


def words(V: int) -> list[str]:
    return ["<s>", "</s>"] + [f"w{i}" for i in range(2, V)]


# --------------------------------------------------------------------------- the lecture

def test_lecture_tie_is_exact_and_reported():
    ex = lecture_beam_example()
    assert (ex.beam_width, ex.max_length) == (2, 2)
    res = beam_search(ex.model, ex.beam_width, ex.max_length)
    assert [h.words for h in res.n_best] == [("the", "cat"), ("a", "dog")]
    for h in res.n_best:  # 0.4·0.6 = 0.3·0.8 = 0.24 → log 0.24 = -1.4271
        assert h.logp == pytest.approx(math.log(0.24), abs=1e-12)
        assert round(h.logp, 4) == -1.4271
    assert len(res.ties) == 1
    tie = res.ties[0]
    assert tie.where == "n-best" and tie.decisive
    assert tie.words == (("the", "cat"), ("a", "dog"))
    assert "1e-09" in tie.rule and "earlier" in tie.rule
    # step 1 keeps "the" and "a"; step 2 keeps the two 0.24 sentences, tied
    s1, s2 = res.steps
    assert [c.word for c in s1.candidates if c.kept] == ["the", "a"]
    assert [c.tokens for c in s2.candidates if c.kept] == [(2, 6), (3, 7)]
    assert [t.words for t in s2.ties if not t.decisive][0] == (("the", "cat"), ("a", "dog"))
    assert res.stop_reason == "max-length" and len(res.finalized) == 2


def test_lecture_runs_to_eos_and_greedy_ties_beam():
    ex = lecture_beam_example()
    res = beam_search(ex.model, 2, 3)
    assert res.stop_reason == "pool-full"
    assert [h.words for h in res.n_best] == [("the", "cat", "</s>"), ("a", "dog", "</s>")]
    assert all(h.finished and h.length == 3 for h in res.n_best)
    for lp in PENALTIES:  # same length → the tie survives every length penalty
        r = beam_search(ex.model, 2, 3, length_penalty=lp)
        assert abs(r.n_best[0].score - r.n_best[1].score) < 1e-9 and r.ties
    g = greedy_decode(ex.model, 3)
    assert g.hypothesis.words == ("the", "cat", "</s>") and g.stop_reason == "eos"
    assert g.hypothesis.logp == pytest.approx(math.log(0.24), abs=1e-12)


def test_lecture_erratum_and_choices():
    ex = lecture_beam_example()
    e = ex.erratum
    assert "-1.43" in e.printed and "-1.42" in e.printed and "a dog" in e.printed
    assert "-1.4271" in e.computed and "0.24" in e.computed
    assert "-0.92" in e.why and "-0.22" in e.why and "round" in e.why
    assert len(ex.errata) == 2 and any("<other>" in c for c in ex.choices)
    m = ex.model
    # the notes' numbers are in the table; the rest goes to <other>, then </s>
    P = lambda ctx, w: m.probs[m.vocab.index(ctx), m.vocab.index(w)]  # noqa: E731
    assert [P("<s>", w) for w in ("the", "a", "an", "some")] == [0.4, 0.3, 0.2, 0.1]
    assert (P("the", "cat"), P("the", "dog"), P("the", "<other>")) == (0.6, 0.3, 0.1)
    assert (P("a", "cat"), P("a", "dog"), P("a", "<other>")) == (0.1, 0.8, 0.1)
    assert P("an", "<other>") == P("cat", "</s>") == P("dog", "</s>") == 1.0


def test_lecture_record_all_draws_the_whole_tree():
    ex = lecture_beam_example()
    res = beam_search(ex.model, 2, 2, record="all")
    s2 = res.steps[1]
    # 2 live hypotheses × their possible next words: the→{cat, dog, <other>}, a→{cat, dog, <other>}
    assert len(s2.candidates) == 6 and [c.rank for c in s2.candidates] == list(range(6))
    got = {(c.prefix, c.word): round(c.cum_logp, 4) for c in s2.candidates}
    assert got[((2,), "dog")] == round(math.log(0.4 * 0.3), 4)
    assert got[((3,), "<other>")] == round(math.log(0.03), 4)


# --------------------------------------------------------------------------- beam = exhaustive

@pytest.mark.parametrize("seed,V,order,T,eos", [
    (0, 3, 2, 3, True), (1, 4, 2, 2, True), (2, 3, 3, 3, True), (3, 3, 1, 3, True),
    (4, 3, 2, 3, False), (5, 4, 3, 2, True), (6, 2, 2, 4, True),
])
@pytest.mark.parametrize("penalty", PENALTIES)
def test_wide_beam_equals_exhaustive_search(seed, V, order, T, eos, penalty):
    table = random_table(seed, V, order)
    model = TableModel(words(V), table, bos=0, eos=1 if eos else None)
    res = beam_search(model, V ** T, T, length_penalty=penalty)
    want = ref.exhaustive_search(table, 0, 1 if eos else None, T, penalty)
    assert want[0][0] - want[1][0] > 1e-9  # no near-tie in these seeded tables
    assert res.best.tokens == want[0][2]
    assert res.best.score == pytest.approx(want[0][0], rel=1e-12, abs=1e-12)
    assert res.best.logp == pytest.approx(want[0][1], rel=1e-12, abs=1e-12)
    # K >= every possible sequence: the n-best list is all of them, in score order
    # (a unigram table gives exact ties between permutations, so compare orders by score)
    assert len(want) <= V ** T
    assert {h.tokens for h in res.n_best} == {w[2] for w in want}
    assert [h.score for h in res.n_best] == pytest.approx([w[0] for w in want], rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_beam_width_one_is_greedy(seed):
    V = 3 + seed % 3
    table = random_table(seed, V, 2 + seed % 2, eos_mass=0.15)
    model = TableModel(words(V), table, bos=0, eos=1)
    for penalty in (None, ("hf", 1.0), ("gnmt", 0.6)):
        res = beam_search(model, 1, 8, length_penalty=penalty)
        g = greedy_decode(model, 8)
        assert res.best.tokens == g.hypothesis.tokens == ref.greedy(table, 0, 1, 8)
        assert res.best.logp == pytest.approx(g.hypothesis.logp, abs=1e-12)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("early_stopping", [True, False, "never"])
def test_beam_matches_plain_hf_scorer(seed, early_stopping):
    V, K = 4 + seed % 3, 2 + seed % 3
    table = random_table(100 + seed, V, 2, eos_mass=0.2 + 0.05 * (seed % 4))
    model = TableModel(words(V), table, bos=0, eos=1)
    for penalty in (None, ("hf", 1.0), ("gnmt", 1.0), ("hf", -1.0)):
        res = beam_search(model, K, 6, length_penalty=penalty, early_stopping=early_stopping)
        want = ref.hf_beam_search(table, 0, 1, K, 6, penalty, early_stopping)
        assert [h.tokens for h in res.n_best] == [w[2] for w in want]
        assert [h.score for h in res.n_best] == pytest.approx([w[0] for w in want], abs=1e-12)


def test_step_records_are_consistent():
    V, K = 6, 3
    table = random_table(7, V, 2, eos_mass=0.3)
    model = TableModel(words(V), table, bos=0, eos=1)
    res = beam_search(model, K, 10, early_stopping="never", length_penalty=("hf", 1.0))
    assert any(s.evicted for s in res.steps)  # this seed exercises the pool's eviction
    for s in res.steps:
        cands = s.candidates
        assert all(a.cum_logp >= b.cum_logp - 1e-9 for a, b in zip(cands, cands[1:]))
        assert [c.rank for c in cands] == list(range(len(cands)))
        assert sum(c.kept for c in cands) == len(s.beam) <= K
        assert [c.tokens for c in cands if c.kept] == [h.tokens for h in s.beam]
        assert len(s.pool) <= K
        for c in cands:
            assert c.cum_logp == pytest.approx(ref.table_logp(table, 0, c.tokens), abs=1e-12)
            assert c.score == pytest.approx(c.cum_logp / c.t, abs=1e-12)
            assert c.finished <= (c.token == 1 and c.rank < K)
            if c.status == "eos-dropped":
                assert c.token == 1
        for h in s.evicted:
            assert h not in s.pool and h.score <= s.pool[-1].score + 1e-12
    final_pool = {h.tokens for h in res.steps[-1].pool} | {h.tokens for h in res.finalized}
    assert {h.tokens for h in res.n_best} <= final_pool


def test_eos_ranked_below_k_is_dropped():
    # start: x 0.5, y 0.3, </s> 0.2; afterwards everything ends
    vocab = ["<s>", "</s>", "x", "y"]
    model = TableModel.from_rows(vocab, {("<s>",): {"x": 0.5, "y": 0.3, "</s>": 0.2}}, bos="<s>", eos="</s>")
    s1 = beam_search(model, 2, 3).steps[0]
    assert [(c.word, c.status) for c in s1.candidates] == [("x", "beam"), ("y", "beam"), ("</s>", "eos-dropped")]
    s1 = beam_search(model, 3, 3).steps[0]
    assert s1.candidates[2].status == "finished" and s1.pool[0].tokens == (1,)


def test_early_stopping_rules_stop_when_documented():
    vocab = ["<s>", "</s>", "x", "y"]
    rows = {("<s>",): {"x": 0.5, "y": 0.3, "</s>": 0.2}, ("x",): {"</s>": 0.9, "y": 0.1},
            ("y",): {"</s>": 0.9, "x": 0.1}}
    model = TableModel.from_rows(vocab, rows, bos="<s>", eos="</s>")
    r = beam_search(model, 2, 10)
    # step 2: "x </s>" (0.45) and "y </s>" (0.27) fill the pool of 2 → stop
    assert r.stop_reason == "pool-full" and len(r.steps) == 2
    assert [h.words for h in r.n_best] == [("x", "</s>"), ("y", "</s>")]
    assert r.n_best[0].logp == pytest.approx(math.log(0.45))
    # False: stop when the pool is full and the step's best candidate, normalised at the
    # current length, cannot beat the worst finished. Step 2 pools x</s> (.45), y</s> (.27);
    # step 3's best is x y </s> (.045): log .045 < log .27 → stop; both EOS candidates lose.
    r = beam_search(model, 2, 10, early_stopping=False)
    assert r.stop_reason == "no-better-live" and len(r.steps) == 3
    assert [c.status for c in r.steps[2].candidates if c.token == 1] == ["eos-dropped"] * 2
    # "never" with L^1: a live hypothesis could still score log p / 10 at max_length:
    # step 4's best .0045 → log(.0045)/10 = -0.54 > worst log(.27)/2 = -0.65 → go on;
    # step 5's best .00045 → log(.00045)/10 = -0.77 → stop.
    r = beam_search(model, 2, 10, early_stopping="never", length_penalty=("hf", 1.0))
    assert r.stop_reason == "no-better-live" and len(r.steps) == 5
    r = beam_search(model, 2, 10, early_stopping=False, length_penalty=("hf", 1.0))
    assert r.stop_reason == "no-better-live" and len(r.steps) == 3


def test_length_penalty_by_hand():
    assert length_penalty_factor(4, ("hf", 0.5)) == 2.0
    assert length_penalty_factor(1, ("gnmt", 0.7)) == 1.0  # (5 + 1) / 6
    assert length_penalty_factor(7, ("gnmt", 1.0)) == 2.0  # (5 + 7) / 6
    assert length_penalty_factor(3, None) == 1.0
    assert length_normalised_score(-3.0, 3, ("hf", 1.0)) == -1.0
    model = TableModel(["a", "b"], [0.25, 0.75])  # unigram, no BOS needed
    r = beam_search(model, 1, 3, length_penalty=("hf", 1.0))
    assert r.best.tokens == (1, 1, 1) and r.best.score == pytest.approx(math.log(0.75))


def test_top_candidates_against_full_sort():
    rng = np.random.default_rng(3)
    K, V = 5, 200
    lp = np.log(rng.dirichlet(np.ones(V), size=K))
    lp[1, :50] = -np.inf
    cum = np.sort(rng.normal(-3, 1, K))[::-1]
    parents, tokens, scores = top_candidates(cum, lp, 2 * K)
    full = (cum[:, None] + lp).ravel()
    order = np.argsort(-full, kind="stable")[: 2 * K]
    assert (parents * V + tokens).tolist() == order.tolist()
    assert scores == pytest.approx(full[order], abs=0)
    # fewer finite candidates than asked: only the finite ones
    p, t, s = top_candidates([0.0], [[0.0, -np.inf, -np.inf]], 4)
    assert p.tolist() == [0] and t.tolist() == [0] and s.tolist() == [0.0]


def test_exact_ties_in_top_candidates_follow_parent_then_token():
    lp = np.log(np.array([[0.5, 0.25, 0.25], [0.25, 0.5, 0.25]]))
    p, t, s = top_candidates([0.0, 0.0], lp, 3)
    assert list(zip(p.tolist(), t.tolist())) == [(0, 0), (1, 1), (0, 1)]


# --------------------------------------------------------------------------- models

def test_function_model_gives_table_model_results():
    table = random_table(11, 5, 2, eos_mass=0.2)
    tm = TableModel(words(5), table, bos=0, eos=1)
    logt = np.log(table)
    fm = FunctionModel(lambda state, tok: (logt[tok], tok), None, 0, vocab=words(5), eos_token="</s>")
    a, b = beam_search(tm, 3, 6), beam_search(fm, 3, 6)
    assert [h.tokens for h in a.n_best] == [h.tokens for h in b.n_best]
    assert greedy_decode(fm, 6).hypothesis == greedy_decode(tm, 6).hypothesis
    total, per = score_sequence(fm, a.best.tokens)
    assert total == pytest.approx(ref.table_logp(table, 0, a.best.tokens)) and len(per) == a.best.length


def test_function_model_state_is_threaded():
    # a counter model: the state is the number of tokens fed; EOS becomes certain at step 3
    V = 3

    def step(state, tok):
        n = state + 1
        return (np.log([0.0, 1.0, 0.0]) if n >= 3 else np.log([0.1, 0.2, 0.7])), n

    with np.errstate(divide="ignore"):
        m = FunctionModel(step, 0, 0, vocab=V, eos_token=1)
        g = greedy_decode(m, 10)
    assert g.hypothesis.tokens == (2, 2, 1) and m.vocab == ("0", "1", "2")


def test_trigram_context_and_score_sequence_by_hand():
    vocab = ["<s>", "</s>", "a", "b"]
    rows = {("<s>", "<s>"): {"a": 1.0}, ("<s>", "a"): {"b": 0.5, "a": 0.5}, ("a", "b"): {"</s>": 1.0}}
    m = TableModel.from_rows(vocab, rows, bos="<s>", eos="</s>")
    assert m.order == 3
    total, per = score_sequence(m, ["a", "b", "</s>"])
    assert per == [0.0, math.log(0.5), 0.0]


BAD_MODELS = [
    (lambda: TableModel(["a", "b"], [[0.5, 0.4], [0.5, 0.5]], bos="a"), "sums to 0.9"),
    (lambda: TableModel(["a", "b"], [[1.2, -0.2], [0.5, 0.5]], bos="a"), "negative"),
    (lambda: TableModel(["a", "b"], [[0.5, 0.5]], bos="a"), "shape"),
    (lambda: TableModel(["a", "b"], [0.5, 0.5], eos="c"), "not in the vocabulary"),
    (lambda: TableModel(["a", "b"], [0.5, 0.5], eos=2), "outside the vocabulary"),
    (lambda: TableModel(["a", "b"], [[0.5, 0.5], [0.5, 0.5]]), "start token"),
    (lambda: TableModel(["a", "a"], [0.5, 0.5]), "twice"),
    (lambda: FunctionModel(lambda s, t: (np.zeros(2), s), None, 0, vocab=2, eos_token=5), "outside"),
]


@pytest.mark.parametrize("make,msg", BAD_MODELS)
def test_bad_models_raise_one_line(make, msg):
    with pytest.raises(ValueError, match=msg) as err:
        make()
    assert "\n" not in str(err.value)


def test_step_function_output_is_checked():
    logits = FunctionModel(lambda s, t: (np.array([1.0, 2.0]), s), None, 0, vocab=2)
    with pytest.raises(ValueError, match="sum to .*expected 1"):
        greedy_decode(logits, 3)
    shape = FunctionModel(lambda s, t: (np.log([0.5, 0.25, 0.25]), s), None, 0, vocab=2)
    with pytest.raises(ValueError, match=r"expected shape \(2,\)"):
        beam_search(shape, 2, 3)

    class Bare:  # a protocol model without FunctionModel's checks
        vocab, bos_token, eos_token, initial_state = ("a", "b"), None, None, None

        def step(self, state, token):
            return np.array([np.nan, 0.0]), state

    with pytest.raises(ValueError, match="NaN"):
        beam_search(Bare(), 1, 2)
    with pytest.raises(ValueError, match="StepModel"):
        greedy_decode(object(), 3)


@pytest.mark.parametrize("kwargs,msg", [
    (dict(beam_width=0), "beam_width: expected an integer >= 1, got 0"),
    (dict(beam_width=2.5), "beam_width"),
    (dict(max_length=0), "max_length"),
    (dict(length_penalty=("avg", 1.0)), "length_penalty"),
    (dict(length_penalty=("hf", float("nan"))), "alpha"),
    (dict(early_stopping="sometimes"), "early_stopping"),
    (dict(record="some"), "record"),
    (dict(tie_tol=-1.0), "tie_tol"),
])
def test_bad_beam_arguments(kwargs, msg):
    ex = lecture_beam_example()
    args = dict(beam_width=2, max_length=3) | kwargs
    with pytest.raises(ValueError, match=msg) as err:
        beam_search(ex.model, args.pop("beam_width"), args.pop("max_length"), **args)
    assert "\n" not in str(err.value)


def test_edge_cases_length_one_single_word_and_wide_beams():
    one = TableModel(["a"], [1.0])  # V = 1: every step is certain
    r = beam_search(one, 4, 3)
    assert [h.tokens for h in r.n_best] == [(0, 0, 0)] and r.best.logp == 0.0
    assert greedy_decode(one, 1).hypothesis.tokens == (0,)
    ex = lecture_beam_example()
    r = beam_search(ex.model, 3, 1)  # max_length 1: the K most probable first words, unfinished
    assert [h.words for h in r.n_best] == [("the",), ("a",), ("an",)]
    assert not any(h.finished for h in r.n_best) and r.stop_reason == "max-length"
    # K larger than the number of possible sentences: the beam just holds fewer hypotheses
    r = beam_search(ex.model, 50, 3)
    assert len(r.n_best) == 8  # the, a → cat/dog/<other>; an, some → <other>
    # .24 .24 .2 .12 .1 .04 .03 .03 (the cat, a dog, an <other>, the dog, some <other>, ...)
    want = [0.24, 0.24, 0.2, 0.12, 0.1, 0.04, 0.03, 0.03]
    assert [h.logp for h in r.n_best] == pytest.approx(np.log(want), abs=1e-12)
    assert beam_search(ex.model, 2, 3, n_best=1).n_best[0].words == ("the", "cat", "</s>")
