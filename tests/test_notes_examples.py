"""The lecture notes' worked examples, checked against the engine.

Expected values are the numbers printed in the notes where they are right, or a hand
calculation written out with ``math`` where the notes are wrong (each such place says so).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.attention import attention, self_attention
from engine.loss import cross_entropy
from engine.pooling import attention_pool, max_pool, mean_pool
from engine.rnn import rnn_encoder
from engine.scoring import additive_scores, scaled_dot_scores
from engine.softmax import softmax


# §1 "Tiny Encoder Trace": cat sat mat, d_x = 4, d_h = 3, tanh, W_HX = [I_3 | 0], W_HH = 0.5 I.
# The notes round every intermediate to 2 decimals, so compare at 2 decimals (abs 0.005).
def test_encoder_trace_cat_sat_mat():
    X = np.array([[0.5, 0.1, -0.3, 0.2],
                  [0.2, -0.4, 0.1, 0.5],
                  [-0.1, 0.3, 0.4, -0.2]])
    W_hx = np.array([[1.0, 0, 0, 0], [0, 1.0, 0, 0], [0, 0, 1.0, 0]])  # "100010001000" row by row
    W_hh = 0.5 * np.eye(3)
    H = rnn_encoder(X, W_hx, W_hh, np.zeros(3))
    np.testing.assert_allclose(H[0], [0.46, 0.10, -0.29], atol=0.005)
    np.testing.assert_allclose(H[1], [0.41, -0.34, -0.05], atol=0.005)
    np.testing.assert_allclose(H[2], [0.10, 0.13, 0.36], atol=0.005)  # = C
    # and exactly, by hand: H1 = tanh(W_HX X1)
    np.testing.assert_allclose(H[0], [math.tanh(0.5), math.tanh(0.1), math.tanh(-0.3)], rtol=1e-15)


# §6 "Scalar Score Computation": Q = [0.5, -0.2], three 2-D keys, d_k = 2.
def test_scalar_score_example():
    Q = [0.5, -0.2]
    K = [[0.3, 0.8], [0.9, 0.1], [-0.4, 0.6]]
    s = scaled_dot_scores(Q, K)
    r2 = math.sqrt(2)
    np.testing.assert_allclose(s, [-0.01 / r2, 0.43 / r2, -0.32 / r2], rtol=1e-12)
    assert s[0] == pytest.approx(-0.007, abs=0.0005)  # printed -0.007: right
    # Printed 0.305 and -0.227 differ in the third decimal only because the notes divide by their
    # stated √2 ≈ 1.41 (0.43/1.41 = 0.30496, 0.32/1.41 = 0.22695): a rounding note, not an error.
    # With √2 exactly: 0.30406, -0.22627.
    assert s[1] == pytest.approx(0.304, abs=0.0005)
    assert s[2] == pytest.approx(-0.226, abs=0.0005)
    w = softmax(s)
    e = [math.exp(-0.01 / r2), math.exp(0.43 / r2), math.exp(-0.32 / r2)]
    np.testing.assert_allclose(w, [x / sum(e) for x in e], rtol=1e-12)
    # Printed α1 = 0.316 and α2 = 0.431 are right (0.31564, 0.43084). Printed α3 = 0.253 follows
    # from the notes' rounded 0.797/3.147 = 0.25326; exactly 0.25351 → 0.254 (a rounding note).
    # Sum check: 0.316 + 0.431 + 0.254 = 1.001 after rounding.
    np.testing.assert_allclose(w, [0.316, 0.431, 0.254], atol=0.0005)
    assert abs(w[2] - 0.253) > 0.0005
    # (the printed e^0.305 ≈ 1.357 and sum 3.147 inherit the rounding; exactly 1.3553 and 3.1458)
    assert sum(e) == pytest.approx(3.146, abs=0.0005)


# §8 "Comparing Scoring Functions": Q = [1, 0, -1], K = [0, 1, -1].
def test_scaled_dot_vs_additive():
    Q, K = [1.0, 0.0, -1.0], [[0.0, 1.0, -1.0]]
    scaled = scaled_dot_scores(Q, K)[0]
    additive = additive_scores(Q, K, np.eye(3), np.eye(3), np.ones(3))[0]
    assert scaled == pytest.approx(0.58, abs=0.005)  # 1/√3 = 0.5774
    assert additive == pytest.approx(0.56, abs=0.005)  # 2 tanh(1) + tanh(-2) = 0.5592
    assert additive == pytest.approx(2 * math.tanh(1) + math.tanh(-2), rel=1e-14)


# §9 "Pooling Comparison": V = [2, 8, 3, 100, 4].
def test_pooling_comparison():
    V = [2.0, 8.0, 3.0, 100.0, 4.0]
    assert float(max_pool(V)) == 100.0
    assert float(mean_pool(V)) == pytest.approx(23.4, rel=1e-15)
    assert float(attention_pool(V, [0.20, 0.35, 0.30, 0.05, 0.10])) == pytest.approx(9.5, rel=1e-14)


# §12 "Training Loop Trace": cat → chat, P(chat) = 0.6 then P(<EOS>) = 0.8, loss summed.
def test_cat_chat_sequence_loss():
    logits = np.log([[0.6, 0.3, 0.1], [0.1, 0.1, 0.8]])  # vocab: chat, chien, <EOS>
    steps = cross_entropy(logits, [0, 2], reduction="none")
    np.testing.assert_allclose(steps, [0.511, 0.223], atol=0.0005)
    assert cross_entropy(logits, [0, 2], reduction="sum") == pytest.approx(0.734, abs=0.0005)


# §5 "QKV for a 3-Word Sentence": "I love cats", d = 4, d_k = 3, d_v = 2, query = position 2.
# The flattened matrices are the transposes of row-by-row 3×4 / 2×4 matrices; this decoding
# is the only one that reproduces the printed Q2, K1..K3 and V1..V3:
#   W_Q = "1000 0100 0010"ᵀ, W_K = "0100 1000 0010"ᵀ, W_V = "1000 0100"ᵀ.
W_Q = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]], dtype=float).T  # (4, 3)
W_K = np.array([[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0]], dtype=float).T  # (4, 3)
W_V = np.array([[1, 0, 0, 0], [0, 1, 0, 0]], dtype=float).T  # (4, 2)
X = np.eye(4)[:3]  # X1..X3 = e1, e2, e3


def test_qkv_projections_reproduce_the_printed_vectors():
    np.testing.assert_array_equal((X @ W_Q)[1], [0, 1, 0])  # Q2
    np.testing.assert_array_equal(X @ W_K, [[0, 1, 0], [1, 0, 0], [0, 0, 1]])  # K1, K2, K3
    np.testing.assert_array_equal(X @ W_V, [[1, 0], [0, 1], [0, 0]])  # V1, V2, V3


def test_qkv_i_love_cats_correct_softmax():
    out, w = self_attention(X, W_Q, W_K, W_V)
    # scores for "love": [1/√3, 0, 0] ≈ [0.58, 0, 0] (printed: right)
    e = math.exp(1 / math.sqrt(3))
    alpha = [e / (e + 2), 1 / (e + 2), 1 / (e + 2)]  # ≈ 0.471, 0.264, 0.264
    # The notes print α = 0.64, 0.18, 0.18 and output [0.64, 0.18]: wrong. Their own numbers
    # (e^0.58 ≈ 1.79, sum 3.79) give 1.79/3.79 = 0.47 and 1/3.79 = 0.26.
    np.testing.assert_allclose(w[1], alpha, rtol=1e-12)
    np.testing.assert_allclose(w[1], [0.471, 0.264, 0.264], atol=0.0005)
    np.testing.assert_allclose(out[1], [alpha[0], alpha[1]], rtol=1e-12)  # α1 V1 + α2 V2 + α3·0
    assert not np.allclose(w[1], [0.64, 0.18, 0.18], atol=0.01)


def test_qkv_example_through_plain_attention():
    Q = [[0.0, 1.0, 0.0]]
    K = [[0, 1, 0], [1, 0, 0], [0, 0, 1]]
    V = [[1, 0], [0, 1], [0, 0]]
    out, w = attention(Q, K, V)
    e = math.exp(1 / math.sqrt(3))
    np.testing.assert_allclose(out[0], [e / (e + 2), 1 / (e + 2)], rtol=1e-12)
