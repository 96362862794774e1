"""engine.scoring against the reference twins, hand values and edge cases."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import reference as ref
from engine.scoring import (additive_scores, dot_product_variance, dot_scores, general_scores,
                            scaled_dot_scores)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.mark.parametrize("L,S,d", [(1, 1, 1), (3, 5, 4), (4, 2, 7)])
def test_dot_and_scaled_match_reference(rng, L, S, d):
    Q, K = rng.normal(size=(L, d)), rng.normal(size=(S, d))
    np.testing.assert_allclose(dot_scores(Q, K), ref.dot_scores(Q, K), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(scaled_dot_scores(Q, K), ref.scaled_dot_scores(Q, K), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(scaled_dot_scores(Q, K, scale=0.3),
                               ref.scaled_dot_scores(Q, K, scale=0.3), rtol=1e-12, atol=1e-12)


def test_single_query_gives_1d_scores(rng):
    q, K = rng.normal(size=3), rng.normal(size=(4, 3))
    got = scaled_dot_scores(q, K)
    assert got.shape == (4,)
    np.testing.assert_allclose(got, ref.scaled_dot_scores(q, K), rtol=1e-12)


def test_scaled_dot_by_hand():
    # q · k = 1·0 + 0·1 + (-1)(-1) = 1, d_k = 3 → 1/√3
    assert scaled_dot_scores([1.0, 0.0, -1.0], [[0.0, 1.0, -1.0]])[0] == pytest.approx(1 / math.sqrt(3))
    # d_k = 1: scale is 1
    np.testing.assert_allclose(scaled_dot_scores([[2.0]], [[3.0], [-1.0]]), [[6.0, -2.0]])


@pytest.mark.parametrize("L,S,d_q,d_k", [(1, 1, 1, 1), (3, 4, 2, 5), (2, 6, 5, 3)])
def test_general_matches_reference(rng, L, S, d_q, d_k):
    Q, K, M = rng.normal(size=(L, d_q)), rng.normal(size=(S, d_k)), rng.normal(size=(d_q, d_k))
    np.testing.assert_allclose(general_scores(Q, K, M), ref.general_scores(Q, K, M), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(general_scores(Q[0], K, M), ref.general_scores(Q[0], K, M), rtol=1e-12, atol=1e-12)


def test_general_with_identity_is_dot(rng):
    Q, K = rng.normal(size=(3, 4)), rng.normal(size=(5, 4))
    np.testing.assert_allclose(general_scores(Q, K, np.eye(4)), ref.dot_scores(Q, K), rtol=1e-12)


@pytest.mark.parametrize("L,S,d_q,d_k,h", [(1, 1, 1, 1, 1), (3, 4, 2, 5, 6), (2, 3, 4, 4, 2)])
def test_additive_matches_reference(rng, L, S, d_q, d_k, h):
    Q, K = rng.normal(size=(L, d_q)), rng.normal(size=(S, d_k))
    W_q, W_k, v = rng.normal(size=(h, d_q)), rng.normal(size=(h, d_k)), rng.normal(size=h)
    np.testing.assert_allclose(additive_scores(Q, K, W_q, W_k, v),
                               ref.additive_scores(Q, K, W_q, W_k, v), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(additive_scores(Q[0], K, W_q, W_k, v),
                               ref.additive_scores(Q[0], K, W_q, W_k, v), rtol=1e-12, atol=1e-12)


def test_additive_by_hand():
    # tanh([1, 1, -2]) summed: 2·tanh(1) + tanh(-2)
    got = additive_scores([1.0, 0.0, -1.0], [[0.0, 1.0, -1.0]], np.eye(3), np.eye(3), np.ones(3))
    assert got[0] == pytest.approx(2 * math.tanh(1.0) + math.tanh(-2.0), rel=1e-12)


def test_large_scores_stay_exact():
    got = dot_scores([[1e2, -1e2]], [[1e2, 0.0], [0.0, 1e2]])
    np.testing.assert_array_equal(got, [[1e4, -1e4]])


def test_additive_saturates_to_sum_of_v():
    # |pre-activation| = 1e4 → tanh = ±1 exactly
    got = additive_scores([1e4], [[0.0]], [[1.0], [-1.0]], [[0.0], [0.0]], [2.0, 3.0])
    assert got[0] == pytest.approx(2.0 - 3.0)


def test_float32_in_float32_out(rng):
    Q = rng.normal(size=(3, 4)).astype(np.float32)
    K = rng.normal(size=(5, 4)).astype(np.float32)
    for fn in (dot_scores, scaled_dot_scores):
        got = fn(Q, K)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, getattr(ref, fn.__name__)(Q, K), rtol=1e-5, atol=1e-6)
    M = np.eye(4, dtype=np.float32)
    assert general_scores(Q, K, M).dtype == np.float32
    W = np.eye(4, dtype=np.float32)
    assert additive_scores(Q, K, W, W, np.ones(4, np.float32)).dtype == np.float32
    # one float64 input promotes
    assert dot_scores(Q, K.astype(np.float64)).dtype == np.float64


@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda: dot_scores([[1.0, 2.0]], [[1.0, 2.0, 3.0]]), "K: expected shape \\(S, 2\\)"),
        (lambda: dot_scores(np.ones((2, 2, 2)), np.ones((2, 2))), "Q"),
        (lambda: dot_scores([1.0, np.nan], [[1.0, 2.0]]), "Q: contains NaN"),
        (lambda: dot_scores([1.0, 2.0], [[1.0, np.inf]]), "K: contains inf"),
        (lambda: dot_scores(np.ones((0, 2)), np.ones((3, 2))), "Q: is empty"),
        (lambda: dot_scores([1.0, 2.0], np.ones((0, 2))), "K: is empty"),
        (lambda: scaled_dot_scores([1.0], [[1.0]], scale=0.0), "scale"),
        (lambda: scaled_dot_scores([1.0], [[1.0]], scale=float("nan")), "scale"),
        (lambda: general_scores([1.0, 2.0], [[1.0, 2.0, 3.0]], np.eye(3)), "M: expected shape \\(2, 3\\)"),
        (lambda: additive_scores([1.0, 2.0], [[1.0]], np.ones((3, 3)), np.ones((3, 1)), np.ones(3)), "W_q"),
        (lambda: additive_scores([1.0, 2.0], [[1.0]], np.ones((3, 2)), np.ones((2, 1)), np.ones(3)), "W_k"),
        (lambda: additive_scores([1.0, 2.0], [[1.0]], np.ones((3, 2)), np.ones((3, 1)), np.ones(2)), "v: expected shape \\(3,\\)"),
        (lambda: dot_scores("abc", [[1.0]]), "Q"),
    ],
)
def test_errors_name_argument_and_shapes(call, needle):
    with pytest.raises(ValueError, match=needle) as info:
        call()
    assert "\n" not in str(info.value)


# --------------------------------------------------------------------------- Var(q·k)


def test_dot_product_variance_by_hand():
    assert dot_product_variance(64) == 64.0  # the notes' d_k = 64: std √64 = 8
    assert dot_product_variance(1) == 1.0
    assert dot_product_variance(16, 0.5, 2.0) == 16.0  # 16 · 0.5 · 2
    assert dot_product_variance(3, var_q=2.0, var_k=4.0) == 24.0  # 3 · 2 · 4
    assert dot_product_variance(5, 0.0, 3.0) == 0.0  # constant queries: no spread
    assert dot_product_variance(np.int64(8)) == 8.0


@pytest.mark.parametrize("d_k, var_q, var_k", [(1, 1.0, 1.0), (2, 0.5, 4.0), (3, 2.0, 0.25)])
def test_dot_product_variance_by_enumeration(d_k, var_q, var_k):
    # entries ±σ with probability ½ each (mean 0, variance σ²): list every (q, k) exactly
    sq, sk = math.sqrt(var_q), math.sqrt(var_k)
    signs = list(itertools.product((-1.0, 1.0), repeat=d_k))
    dots = [sum(sq * a * sk * b for a, b in zip(qs, ks)) for qs in signs for ks in signs]
    mean = sum(dots) / len(dots)
    exact = sum((x - mean) ** 2 for x in dots) / len(dots)
    assert mean == pytest.approx(0.0, abs=1e-12)
    assert dot_product_variance(d_k, var_q, var_k) == pytest.approx(exact, rel=1e-12)


@pytest.mark.parametrize("d_k, var_q, var_k", [(1, 1.0, 1.0), (4, 0.5, 2.0), (64, 1.0, 1.0),
                                               (16, 2.0, 4.0)])
def test_dot_product_variance_matches_naive_monte_carlo(d_k, var_q, var_k):
    rng = np.random.default_rng(20240 + d_k)
    n = 50_000
    q = rng.normal(0.0, math.sqrt(var_q), size=(n, d_k))
    k = rng.normal(0.0, math.sqrt(var_k), size=(n, d_k))
    dots = (q * k).sum(axis=1)  # n independent samples of q·k
    # relative standard error of a sample variance is about √((κ − 1)/n) ≤ √(8/n) ≈ 1.3 %
    assert dot_product_variance(d_k, var_q, var_k) == pytest.approx(dots.var(), rel=0.06)
    assert dot_product_variance(d_k, var_q, var_k) / d_k == pytest.approx(
        (dots / math.sqrt(d_k)).var(), rel=0.06)


@pytest.mark.parametrize("call, needle", [
    (lambda: dot_product_variance(0), r"^d_k: expected an integer >= 1, got 0$"),
    (lambda: dot_product_variance(2.5), r"^d_k: expected an integer >= 1, got 2.5$"),
    (lambda: dot_product_variance(True), r"^d_k: expected an integer"),
    (lambda: dot_product_variance(4, var_q=-1.0), r"^var_q: expected a value in \[0, inf\], got -1$"),
    (lambda: dot_product_variance(4, var_k=float("nan")), r"^var_k: expected a finite number"),
    (lambda: dot_product_variance(4, var_k="x"), r"^var_k: expected a number, got 'x'$"),
])
def test_dot_product_variance_rejects_bad_arguments(call, needle):
    with pytest.raises(ValueError, match=needle):
        call()
