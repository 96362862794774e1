"""engine.decoding sampling: temperature, top-k, top-p, seeded inverse-CDF draws."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import reference_decoding as ref
from engine.decoding import (
    TableModel,
    apply_temperature,
    filter_scores,
    filtered_probs,
    greedy_decode,
    sample_decode,
    sample_token,
    top_k_filter,
    top_p_filter,
    top_p_keep,
)

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None)


# --------------------------------------------------------------------------- by hand

@pytest.mark.parametrize("p,kept", [(0.7, [True, True, False]), (0.5, [True, False, False]),
                                    (0.8, [True, True, False]), (0.81, [True, True, True]),
                                    (0.2, [True, False, False]), (1.0, [True, True, True])])
def test_top_p_on_the_three_token_example(p, kept):
    # [0.5, 0.3, 0.2]: mass before each token is 0, 0.5, 0.8; kept while that is < p
    for scores in (np.log([0.5, 0.3, 0.2]), np.log([0.2, 0.5, 0.3])[[1, 2, 0]]):
        assert top_p_keep(scores, p).tolist() == kept


def test_top_p_exact_tie_with_p_differs_from_hf_by_design():
    # 0.5 + 0.3 = 0.8 on paper: the smallest set with mass >= 0.8 has 2 tokens. HF's
    # ascending cumsum (0.2 <= 1 - 0.8 = 0.19999999999999996 is False) keeps all 3.
    scores = np.log([0.5, 0.3, 0.2])
    assert np.isfinite(top_p_filter(scores, 0.8)).sum() == 2
    assert np.isfinite(ref.hf_top_p(scores, 0.8)).sum() == 3


def test_top_p_min_tokens_to_keep_and_order_of_equal_probs():
    scores = np.log([0.5, 0.3, 0.2])
    assert top_p_keep(scores, 0.5, min_tokens_to_keep=2).tolist() == [True, True, False]
    assert top_p_keep(scores, 0.5, min_tokens_to_keep=9).tolist() == [True, True, True]
    # equal probabilities are taken lower id first: [0.4, 0.3, 0.3], p = 0.5 → tokens 0 and 1
    assert top_p_keep(np.log([0.4, 0.3, 0.3]), 0.5).tolist() == [True, True, False]


def test_top_k_keeps_ties_with_the_kth_value():
    scores = np.log([0.4, 0.3, 0.3])
    assert np.isfinite(top_k_filter(scores, 2)).tolist() == [True, True, True]
    assert np.isfinite(top_k_filter(scores, 1)).tolist() == [True, False, False]
    assert np.isfinite(top_k_filter(scores, 1, min_tokens_to_keep=2)).tolist() == [True, True, True]
    assert np.isfinite(top_k_filter(scores, 50)).all()
    got = filtered_probs(np.log([0.5, 0.3, 0.2]), top_k=2)
    assert got == pytest.approx([0.625, 0.375, 0.0])  # 0.5 / 0.8, 0.3 / 0.8


def test_temperature_by_hand_and_towards_zero():
    z = np.array([1.0, 2.0, 0.5])
    assert apply_temperature(z, 0.5).tolist() == [2.0, 4.0, 1.0]
    p2 = filtered_probs(np.log([0.5, 0.3, 0.2]), temperature=0.5)  # p^2 renormalised
    assert p2 == pytest.approx(np.array([0.25, 0.09, 0.04]) / 0.38)
    for T in (0.1, 0.01, 1e-3):
        p = filtered_probs(z, temperature=T)
        # the others have z_max - z >= 1, so their mass is at most 2 exp(-1 / T) → one-hot
        assert 1.0 >= p[1] >= 1 - 2 * np.exp(-1.0 / T)
        assert p.argmax() == 1
    assert sample_token(z, 0, temperature=1e-3, size=200).tolist() == [1] * 200


def test_filters_compose_in_hf_order():
    z = np.log([0.35, 0.3, 0.2, 0.1, 0.05])
    # top-k 3 → [0.35, 0.3, 0.2] / 0.85; top-p 0.5 on that: mass before 0.3/0.85 is 0.41 < 0.5
    got = filter_scores(z, top_k=3, top_p=0.5)
    assert np.isfinite(got).tolist() == [True, True, False, False, False]
    want = ref.hf_top_p(ref.hf_top_k(z, 3), 0.5)
    assert np.isfinite(want).tolist() == np.isfinite(got).tolist()


# --------------------------------------------------------------------------- against HF twins

@pytest.mark.parametrize("seed", range(20))
def test_filters_match_hf_warpers_on_random_distributions(seed):
    rng = np.random.default_rng(seed)
    V = int(rng.integers(2, 60))
    z = rng.normal(0, 2, V)
    if seed % 3 == 0:
        z[rng.integers(0, V, 3)] = -np.inf
    for k in (1, 2, 5, V):
        for keep in (1, 3):
            np.testing.assert_array_equal(top_k_filter(z, k, min_tokens_to_keep=keep), ref.hf_top_k(z, k, keep))
    for p in (0.05, 0.3, 0.5, 0.9, 0.999, 1.0, float(rng.uniform(0.01, 1))):
        for keep in (1, 2):
            np.testing.assert_array_equal(top_p_filter(z, p, min_tokens_to_keep=keep), ref.hf_top_p(z, p, keep))


def test_filters_on_a_big_vocabulary_and_in_batches():
    rng = np.random.default_rng(1)
    z = rng.normal(0, 1, (3, 50_000))  # a flat distribution: the nucleus holds thousands of tokens
    for p in (0.1, 0.9):
        got = top_p_filter(z, p)
        for r in range(3):
            np.testing.assert_array_equal(got[r], ref.hf_top_p(z[r], p))
    got = top_k_filter(z, 100)
    for r in range(3):
        np.testing.assert_array_equal(got[r], ref.hf_top_k(z[r], 100))
    assert top_p_filter(z.astype(np.float32), 0.5).dtype == np.float32


@given(st.lists(st.floats(-20, 20), min_size=1, max_size=30), st.floats(0.01, 1.0))
@SETTINGS
def test_nucleus_is_the_smallest_top_set_reaching_p(zs, p):
    z = np.array(zs)
    probs = ref.softmax(z)
    keep = top_p_keep(z, p)
    order = np.lexsort((np.arange(z.size), -probs))  # by probability, lower id first
    n = int(keep.sum())
    assert keep[order[:n]].all() and not keep[order[n:]].any()  # a top prefix
    assert probs[order[:n]].sum() >= p - 1e-9  # reaches p ...
    assert probs[order[: n - 1]].sum() < p + 1e-9  # ... and one token fewer does not


# --------------------------------------------------------------------------- sampling

@pytest.mark.parametrize("settings_,seed", [
    (dict(), 0), (dict(top_k=3), 1), (dict(top_p=0.8), 2), (dict(temperature=0.7, top_k=4, top_p=0.9), 3),
    (dict(temperature=2.0), 4),
])
def test_sampled_frequencies_match_the_filtered_distribution(settings_, seed):
    z = np.log([0.3, 0.25, 0.2, 0.1, 0.08, 0.05, 0.02])
    # expected: the twins' filtered distribution
    w = z / settings_.get("temperature", 1.0)
    if "top_k" in settings_:
        w = ref.hf_top_k(w, settings_["top_k"])
    if "top_p" in settings_:
        w = ref.hf_top_p(w, settings_["top_p"])
    expected = ref.softmax(w)
    draws = sample_token(z, seed, size=10_000, **settings_)
    counts = np.bincount(draws, minlength=z.size)
    support = expected > 0
    assert (counts[~support] == 0).all()
    _, pval = stats.chisquare(counts[support], 10_000 * expected[support])
    assert pval > 0.01


def test_seeds_make_runs_reproducible():
    rng = np.random.default_rng(5)
    V = 6
    table = rng.dirichlet(np.ones(V), size=V)
    model = TableModel([f"w{i}" for i in range(V)], table, bos=0, eos=1)
    a = sample_decode(model, 12, seed=42, top_p=0.9)
    b = sample_decode(model, 12, seed=42, top_p=0.9)
    assert a == b
    assert a.hypothesis.logp == pytest.approx(ref.table_logp(table, 0, a.hypothesis.tokens))
    others = {sample_decode(model, 12, seed=s).hypothesis.tokens for s in range(10)}
    assert len(others) > 1
    # a Generator is advanced, an int seed starts afresh
    g = np.random.default_rng(3)
    assert sample_token(np.zeros(5), g, size=4).tolist() == sample_token(np.zeros(5), 3, size=4).tolist()
    # the uniforms recorded are the generator's stream, and each pick is the inverse CDF of it
    us = np.random.default_rng(42).random(len(a.steps))
    assert [s.u for s in a.steps] == us.tolist()


def test_sampling_at_low_temperature_is_greedy():
    rng = np.random.default_rng(9)
    V = 7
    table = rng.dirichlet(np.ones(V), size=V)
    model = TableModel([f"w{i}" for i in range(V)], table, bos=0, eos=1)
    s = sample_decode(model, 10, seed=0, temperature=1e-4)
    assert s.hypothesis.tokens == greedy_decode(model, 10).hypothesis.tokens == ref.greedy(table, 0, 1, 10)


def test_inverse_cdf_never_picks_a_removed_token():
    z = np.array([-np.inf, 0.0, -np.inf, 1.0, -np.inf])
    draws = sample_token(z, 0, size=2000)
    assert set(draws.tolist()) <= {1, 3}


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("call,msg", [
    (lambda z: top_k_filter(z, 0), "top_k: expected an integer >= 1, got 0"),
    (lambda z: top_p_filter(z, 0.0), r"top_p: expected a value in \(0, 1\], got 0"),
    (lambda z: top_p_filter(z, 1.5), r"top_p: expected a value in \(0, 1\], got 1.5"),
    (lambda z: apply_temperature(z, 0.0), "temperature"),
    (lambda z: filtered_probs(z, temperature=-1.0), "temperature"),
    (lambda z: top_p_filter(z, 0.5, min_tokens_to_keep=0), "min_tokens_to_keep"),
    (lambda z: sample_token(z, -1), "seed"),
    (lambda z: sample_token(z, 1.5), "seed"),
    (lambda z: sample_token(np.stack([z, z]), 0), "shape"),
    (lambda z: top_k_filter([np.nan, 1.0], 1), "NaN"),
    (lambda z: top_k_filter([-np.inf, -np.inf], 1), "entirely -inf"),
])
def test_bad_sampling_arguments(call, msg):
    with pytest.raises(ValueError, match=msg) as err:
        call(np.log([0.5, 0.3, 0.2]))
    assert "\n" not in str(err.value)


def test_sample_decode_checks_settings_before_running():
    model = TableModel(["a", "b"], [0.5, 0.5])
    with pytest.raises(ValueError, match="top_p"):
        sample_decode(model, 3, seed=0, top_p=2.0)
    with pytest.raises(ValueError, match="temperature"):
        sample_decode(model, 3, seed=0, temperature=0)
