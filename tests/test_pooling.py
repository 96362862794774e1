"""engine.pooling against the reference twins, hand values and edge cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference as ref
from engine.pooling import attention_pool, attention_pool_query, max_pool, mean_pool


@pytest.fixture
def rng():
    return np.random.default_rng(99)


@pytest.mark.parametrize("shape,axis", [((1,), 0), ((5,), 0), ((4, 3), 0), ((4, 3), 1), ((2, 3, 4), -1)])
def test_max_and_mean_match_reference(rng, shape, axis):
    V = rng.normal(size=shape)
    np.testing.assert_array_equal(max_pool(V, axis=axis), ref.max_pool(V, axis=axis))
    np.testing.assert_allclose(mean_pool(V, axis=axis), ref.mean_pool(V, axis=axis), rtol=1e-14)


def test_pools_reduce_the_sequence_axis():
    V = np.array([[1.0, -2.0], [3.0, 0.0], [-1.0, 5.0]])
    np.testing.assert_array_equal(max_pool(V), [3.0, 5.0])
    np.testing.assert_allclose(mean_pool(V), [1.0, 1.0])
    assert max_pool([4.0]).shape == ()
    assert float(max_pool([4.0])) == 4.0


@pytest.mark.parametrize("n,d_v", [(1, 1), (5, 3), (7, 2)])
def test_attention_pool_matches_reference(rng, n, d_v):
    V = rng.normal(size=(n, d_v))
    a = rng.random(n)
    a /= a.sum()
    np.testing.assert_allclose(attention_pool(V, a), ref.attention_pool(V, a), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(attention_pool(V[:, 0], a), ref.attention_pool(V[:, 0], a), rtol=1e-13, atol=1e-15)


def test_attention_pool_special_weights():
    V = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 9.0]])
    np.testing.assert_array_equal(attention_pool(V, [0.0, 1.0, 0.0]), [3.0, 4.0])  # one-hot = pick
    np.testing.assert_allclose(attention_pool(V, [1 / 3] * 3), [3.0, 5.0])  # uniform = mean


@pytest.mark.parametrize("n,d_k,d_v", [(1, 1, 1), (4, 3, 2), (6, 1, 5)])
def test_attention_pool_query_matches_reference(rng, n, d_k, d_v):
    q, K, V = rng.normal(size=d_k), rng.normal(size=(n, d_k)), rng.normal(size=(n, d_v))
    for scale in (None, 0.5):
        out, w = attention_pool_query(q, K, V, scale=scale)
        r_out, r_w = ref.attention_pool_query(q, K, V, scale=scale)
        assert out.shape == (d_v,) and w.shape == (n,)
        np.testing.assert_allclose(out, r_out, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(w, r_w, rtol=1e-12, atol=1e-12)


def test_attention_pool_query_by_hand_and_ties():
    # d_k = 1, scores [1, 0]: weights e/(e+1), 1/(e+1)
    out, w = attention_pool_query([1.0], [[1.0], [0.0]], [10.0, 0.0])
    e = math.e
    np.testing.assert_allclose(w, [e / (e + 1), 1 / (e + 1)], rtol=1e-14)
    assert out.shape == () and float(out) == pytest.approx(10 * e / (e + 1), rel=1e-14)
    out, w = attention_pool_query([0.0, 0.0], np.ones((4, 2)), [1.0, 2.0, 3.0, 6.0])
    np.testing.assert_allclose(w, [0.25] * 4)
    assert float(out) == pytest.approx(3.0)


def test_attention_pool_query_huge_scores():
    out, w = attention_pool_query([1e2], [[1e2], [-1e2]], [1.0, 2.0], scale=1.0)  # scores ±1e4
    np.testing.assert_array_equal(w, [1.0, 0.0])
    assert float(out) == 1.0


def test_float32_in_float32_out(rng):
    V = rng.normal(size=(4, 2)).astype(np.float32)
    assert max_pool(V).dtype == np.float32
    assert mean_pool(V).dtype == np.float32
    assert attention_pool(V, np.full(4, 0.25, np.float32)).dtype == np.float32
    out, w = attention_pool_query(V[0], V, V)
    assert out.dtype == np.float32 and w.dtype == np.float32
    r_out, r_w = ref.attention_pool_query(V[0], V, V)
    np.testing.assert_allclose(out, r_out, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda: max_pool([]), "V: is empty"),
        (lambda: mean_pool([1.0, np.nan]), "V: contains NaN"),
        (lambda: max_pool([[1.0, 2.0]], axis=2), "axis"),
        (lambda: attention_pool([1.0, 2.0], [0.5, 0.25]), "weights: must sum to 1"),
        (lambda: attention_pool([1.0, 2.0], [1.5, -0.5]), "weights: must be non-negative"),
        (lambda: attention_pool([1.0, 2.0], [1.0]), "weights: expected shape \\(2,\\)"),
        (lambda: attention_pool(np.ones((2, 2, 2)), [0.5, 0.5]), "V"),
        (lambda: attention_pool_query([1.0, 2.0], np.ones((3, 3)), np.ones(3)), "K: expected shape \\(n, 2\\)"),
        (lambda: attention_pool_query([1.0], np.ones((3, 1)), np.ones((2, 4))), "V: expected shape \\(3, d_v\\)"),
        (lambda: attention_pool_query([1.0], np.ones((3, 1)), np.ones(3), scale=0), "scale"),
    ],
)
def test_errors_name_the_argument(call, needle):
    with pytest.raises(ValueError, match=needle) as info:
        call()
    assert "\n" not in str(info.value)


def test_weights_sum_tolerance_is_1e6():
    attention_pool([1.0, 2.0], [0.5 + 4e-7, 0.5])  # within 1e-6: accepted
    with pytest.raises(ValueError):
        attention_pool([1.0, 2.0], [0.5 + 3e-6, 0.5])
