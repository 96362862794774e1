"""engine.scoring.distance_scores against its naive twin, hand values, edge cases and the
identity that ties it to dot-product scoring."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import reference as ref
from engine.scoring import distance_scores, dot_scores
from engine.softmax import softmax


@pytest.fixture
def rng():
    return np.random.default_rng(2024)


@pytest.mark.parametrize("L,S,d", [(1, 1, 1), (3, 5, 4), (4, 2, 7)])
def test_matches_reference(rng, L, S, d):
    Q, K = rng.normal(size=(L, d)), rng.normal(size=(S, d))
    np.testing.assert_allclose(distance_scores(Q, K), ref.distance_scores(Q, K), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(distance_scores(Q, K, scale=0.25), ref.distance_scores(Q, K, 0.25),
                               rtol=1e-12, atol=1e-12)
    one = distance_scores(Q[0], K)
    assert one.shape == (S,)
    np.testing.assert_allclose(one, ref.distance_scores(Q[0], K), rtol=1e-12, atol=1e-12)


def test_by_hand():
    # q = [1, 0]: ‖q − [1, 0]‖² = 0, ‖q − [0, 1]‖² = 1 + 1 = 2, ‖q − [−1, 0]‖² = 4
    got = distance_scores([1.0, 0.0], [[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    assert got.tolist() == [0.0, -2.0, -4.0]
    assert not np.signbit(got[0])  # a key equal to the query scores +0, not -0
    np.testing.assert_allclose(distance_scores([[3.0]], [[1.0], [5.0]], scale=0.5), [[-2.0, -2.0]])


def test_the_query_norm_cancels_in_the_softmax(rng):
    """softmax(−‖q − k‖²) = softmax(2 q·k − ‖k‖²): −‖q‖² is the same for every key."""
    for _ in range(20):
        q, K = rng.normal(size=3), rng.normal(size=(5, 3))
        by_distance = softmax(distance_scores(q, K))
        by_dot = softmax(2 * dot_scores(q, K) - (K * K).sum(axis=1))
        np.testing.assert_allclose(by_distance, by_dot, rtol=1e-12, atol=1e-15)
        # the raw scores differ by exactly ‖q‖² (the expansion, computed naively)
        np.testing.assert_allclose(ref.distance_scores(q, K) + q @ q,
                                   2 * ref.dot_scores(q, K) - (K * K).sum(axis=1), atol=1e-12)


def test_keys_of_equal_length_give_dot_product_weights(rng):
    K = rng.normal(size=(4, 3))
    K /= np.linalg.norm(K, axis=1, keepdims=True)  # every ‖k‖ = 1
    q = rng.normal(size=3)
    np.testing.assert_allclose(softmax(distance_scores(q, K)), softmax(2 * dot_scores(q, K)), rtol=1e-12)


def test_float32_in_float32_out():
    q, K = np.ones(2, np.float32), np.zeros((3, 2), np.float32)
    out = distance_scores(q, K)
    assert out.dtype == np.float32 and out.tolist() == [-2.0, -2.0, -2.0]


@pytest.mark.parametrize("args, message", [
    (([1.0, 0.0], [[1.0, 0.0, 0.0]]), "d_k = 2"),
    (([1.0, 0.0], [[1.0, 0.0]], 0.0), "scale"),
    (([1.0, 0.0], [[1.0, 0.0]], -1.0), "scale"),
    (([np.nan, 0.0], [[1.0, 0.0]]), "Q"),
    (([1.0, 0.0], [[np.inf, 0.0]]), "K"),
    (([1.0, 0.0], [1.0, 0.0]), "K"),
])
def test_bad_input_names_the_argument(args, message):
    with pytest.raises(ValueError, match=message):
        distance_scores(*args)


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, (2, 3), elements=st.floats(-50, 50)),
       arrays(np.float64, (4, 3), elements=st.floats(-50, 50)))
def test_properties(Q, K):
    s = distance_scores(Q, K)
    assert (s <= 0).all()
    np.testing.assert_allclose(s, ref.distance_scores(Q, K), rtol=1e-10, atol=1e-9)
    # the nearest key always gets the largest score
    for i in range(2):
        nearest = np.argmin(((Q[i] - K) ** 2).sum(axis=1))
        assert s[i, nearest] == s[i].max()


# --------------------------------------------------------------------------- the trace

def _softmax(xs):
    import math

    e = [math.exp(x - max(xs)) for x in xs]
    return [x / sum(e) for x in e]


def test_trace_on_the_notes_query_and_keys_by_hand():
    """q = [0.5, -0.2], keys [0.3, 0.8], [0.9, 0.1], [-0.4, 0.6] (the notes' §6 example):
    q - k = [0.2, -1], [-0.4, -0.3], [0.9, -0.8] → squared distances 1.04, 0.25, 1.45."""
    from engine.traces import build

    t = build("distance-scores")
    assert t.disagreements() == [] and t.source == "notes"
    np.testing.assert_allclose(t.result["sq_distances"], [1.04, 0.25, 1.45], atol=1e-12)
    want = _softmax([-1.04, -0.25, -1.45])
    np.testing.assert_allclose(t.result["weights"], want, atol=1e-12)
    np.testing.assert_allclose(t.result["weights_without_q_norm"], want, atol=1e-12)
    # dot products -0.01, 0.43, -0.32 at scale 2, no length bias: different weights
    dot = _softmax([-0.02, 0.86, -0.64])
    np.testing.assert_allclose(t.result["dot_weights"], dot, atol=1e-12)
    assert abs(t.result["dot_weights"][1] - t.result["weights"][1]) > 0.03
    hm = t.heatmaps[0]
    assert np.asarray(hm.weights).shape == (2, 3) and np.allclose(np.asarray(hm.weights).sum(axis=1), 1)
    assert hm.row_labels == ["distance", "dot"]


def test_trace_with_keys_of_equal_length_matches_dot_product_weights():
    from engine.traces import build

    t = build("distance-scores", {"Q": [1.0, 2.0], "K": [[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]],
                                  "scale": 0.5})
    assert t.source == "user" and t.disagreements() == []
    np.testing.assert_allclose(t.result["weights"], t.result["dot_weights"], atol=1e-12)
    assert "agree" in t.steps[5].note
    # -0.5·‖q − k‖² with ‖q − k‖² = 4, 2, 8
    np.testing.assert_allclose(t.result["scores"], [-2.0, -1.0, -4.0], atol=1e-12)
