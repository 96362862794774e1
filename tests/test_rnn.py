"""engine.rnn against the reference twins (column convention, PyTorch gate layouts)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference as ref
from engine.rnn import bahdanau_step, decoder_step, gru_cell, lstm_cell, rnn_encoder

TOL = dict(rtol=1e-12, atol=1e-13)


@pytest.fixture
def rng():
    return np.random.default_rng(31)


@pytest.mark.parametrize("T,d_x,d_h", [(1, 1, 1), (4, 3, 5), (7, 2, 2)])
@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_rnn_encoder_matches_reference(rng, T, d_x, d_h, activation):
    X = rng.normal(size=(T, d_x))
    W_hx, W_hh, b = rng.normal(size=(d_h, d_x)), rng.normal(size=(d_h, d_h)) * 0.5, rng.normal(size=d_h)
    h0 = rng.normal(size=d_h)
    H = rnn_encoder(X, W_hx, W_hh, b, activation=activation)
    assert H.shape == (T, d_h)
    np.testing.assert_allclose(H, ref.rnn_encoder(X, W_hx, W_hh, b, activation=activation), **TOL)
    np.testing.assert_allclose(rnn_encoder(X, W_hx, W_hh, b, h0=h0, activation=activation),
                               ref.rnn_encoder(X, W_hx, W_hh, b, h0=h0, activation=activation), **TOL)


def test_rnn_encoder_one_step_by_hand():
    # H_1 = tanh(W_hx x + W_hh h0 + b) with h0 = [1]: tanh(2·0.5 + 0.5·1 + 0.25) = tanh(1.75)
    H = rnn_encoder([[0.5]], [[2.0]], [[0.5]], [0.25], h0=[1.0])
    assert H[0, 0] == pytest.approx(math.tanh(1.75), rel=1e-15)
    H = rnn_encoder([[0.5]], [[-2.0]], [[0.5]], [0.25], h0=[1.0], activation="relu")
    assert H[0, 0] == 0.0  # relu(-1 + 0.5 + 0.25) = 0


def test_decoder_step_matches_reference(rng):
    d_h, d_y, d_c, V = 3, 2, 4, 6
    args = [rng.normal(size=s) for s in [(d_h,), (d_y,), (d_c,), (d_h, d_h), (d_h, d_y), (d_h, d_c), (d_h,), (V, d_h)]]
    for activation in ("tanh", "relu"):
        got = decoder_step(*args, activation=activation)
        want = ref.decoder_step(*args, activation=activation)
        assert [g.shape for g in got] == [(d_h,), (V,), (V,)]
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, **TOL)
        assert got[2].sum() == pytest.approx(1.0)


def test_decoder_step_zero_output_weights_give_uniform_probs(rng):
    h, logits, probs = decoder_step(np.zeros(2), [1.0, 0.0], [0.3], np.eye(2), np.eye(2),
                                    [[1.0], [0.0]], [0.0, 0.0], np.zeros((5, 2)))
    np.testing.assert_allclose(h, [math.tanh(1.3), 0.0], rtol=1e-15)
    np.testing.assert_array_equal(logits, 0.0)
    np.testing.assert_allclose(probs, [0.2] * 5, rtol=1e-15)


@pytest.mark.parametrize("T", [1, 5])
def test_bahdanau_step_matches_reference(rng, T):
    d_s, d_y, d_h, h_a, V = 3, 2, 4, 5, 7
    shapes = [(d_s,), (d_y,), (T, d_h), (h_a, d_s), (h_a, d_h), (h_a,), (d_s, d_s), (d_s, d_y),
              (d_s, d_h), (d_s,), (V, d_s)]
    args = [rng.normal(size=s) for s in shapes]
    got = bahdanau_step(*args)
    want = ref.bahdanau_step(*args)
    assert [g.shape for g in got] == [(d_s,), (V,), (V,), (d_h,), (T,)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, **TOL)
    s, logits, probs, context, alpha = got
    assert alpha.sum() == pytest.approx(1.0) and np.all(alpha >= 0)
    # the decoder update is the fixed-context decoder fed with C_t
    s2, logits2, probs2 = decoder_step(args[0], args[1], context, *args[6:])
    np.testing.assert_allclose(s, s2, **TOL)
    np.testing.assert_allclose(probs, probs2, **TOL)


def test_bahdanau_zero_scoring_vector_gives_mean_context(rng):
    H = rng.normal(size=(4, 3))
    _, _, _, context, alpha = bahdanau_step(
        np.ones(2), np.ones(1), H, np.ones((3, 2)), np.ones((3, 3)), np.zeros(3),
        np.eye(2), np.ones((2, 1)), np.ones((2, 3)), np.zeros(2), np.ones((3, 2)))
    np.testing.assert_allclose(alpha, [0.25] * 4, rtol=1e-15)  # all scores 0 → a tie
    np.testing.assert_allclose(context, H.mean(axis=0), rtol=1e-14)


@pytest.mark.parametrize("I,Hd", [(1, 1), (4, 3)])
def test_gru_cell_matches_reference(rng, I, Hd):
    x, h = rng.normal(size=I), rng.normal(size=Hd)
    W_ih, W_hh = rng.normal(size=(3 * Hd, I)), rng.normal(size=(3 * Hd, Hd))
    b_ih, b_hh = rng.normal(size=3 * Hd), rng.normal(size=3 * Hd)
    np.testing.assert_allclose(gru_cell(x, h, W_ih, W_hh, b_ih, b_hh),
                               ref.gru_cell(x, h, W_ih, W_hh, b_ih, b_hh), **TOL)
    # a batch gives the same rows
    X, Hs = rng.normal(size=(3, I)), rng.normal(size=(3, Hd))
    got = gru_cell(X, Hs, W_ih, W_hh, b_ih, b_hh)
    for bi in range(3):
        np.testing.assert_allclose(got[bi], ref.gru_cell(X[bi], Hs[bi], W_ih, W_hh, b_ih, b_hh), **TOL)


def test_gru_gate_order_by_hand():
    h = np.array([0.7, -0.2])
    zeros = dict(W_ih=np.zeros((6, 1)), W_hh=np.zeros((6, 2)), b_hh=np.zeros(6))
    # all zero: r = z = 1/2, n = tanh(0) = 0 → h' = h / 2
    np.testing.assert_allclose(gru_cell([1.0], h, b_ih=np.zeros(6), **zeros), h / 2, rtol=1e-15)
    # update gate z (second block) saturated at 1 → h' = h
    b = np.array([0, 0, 50, 50, 0, 0.0])
    np.testing.assert_allclose(gru_cell([1.0], h, b_ih=b, **zeros), h, rtol=1e-15)
    # z = 0 (second block -50), candidate bias b_in = 0.3 (third block) → h' = tanh(0.3)
    b = np.array([0, 0, -50, -50, 0.3, 0.3])
    np.testing.assert_allclose(gru_cell([1.0], h, b_ih=b, **zeros), [math.tanh(0.3)] * 2, rtol=1e-12)
    # reset gate multiplies (W_hn h + b_hn): r = 0 (first block -50) removes b_hn = 5
    b_hh = np.array([0, 0, -50, -50, 5.0, 5.0])
    b_ih = np.array([-50, -50, 0, 0, 0.3, 0.3])
    got = gru_cell([1.0], h, np.zeros((6, 1)), np.zeros((6, 2)), b_ih, b_hh)
    np.testing.assert_allclose(got, [math.tanh(0.3)] * 2, rtol=1e-12)


@pytest.mark.parametrize("I,Hd", [(1, 1), (3, 4)])
def test_lstm_cell_matches_reference(rng, I, Hd):
    x, h, c = rng.normal(size=I), rng.normal(size=Hd), rng.normal(size=Hd)
    W_ih, W_hh = rng.normal(size=(4 * Hd, I)), rng.normal(size=(4 * Hd, Hd))
    b_ih, b_hh = rng.normal(size=4 * Hd), rng.normal(size=4 * Hd)
    for g, w in zip(lstm_cell(x, h, c, W_ih, W_hh, b_ih, b_hh), ref.lstm_cell(x, h, c, W_ih, W_hh, b_ih, b_hh)):
        np.testing.assert_allclose(g, w, **TOL)
    X, Hs, Cs = rng.normal(size=(2, I)), rng.normal(size=(2, Hd)), rng.normal(size=(2, Hd))
    h_new, c_new = lstm_cell(X, Hs, Cs, W_ih, W_hh, b_ih, b_hh)
    for bi in range(2):
        r_h, r_c = ref.lstm_cell(X[bi], Hs[bi], Cs[bi], W_ih, W_hh, b_ih, b_hh)
        np.testing.assert_allclose(h_new[bi], r_h, **TOL)
        np.testing.assert_allclose(c_new[bi], r_c, **TOL)


def test_lstm_gate_order_by_hand():
    c = np.array([2.0])
    W_ih, W_hh = np.zeros((4, 1)), np.zeros((4, 1))
    # all zero: i = f = o = 1/2, g = 0 → c' = c/2, h' = tanh(c/2)/2
    h_new, c_new = lstm_cell([1.0], [0.0], c, W_ih, W_hh, np.zeros(4), np.zeros(4))
    assert c_new[0] == pytest.approx(1.0) and h_new[0] == pytest.approx(math.tanh(1.0) / 2)
    # i open, f shut, g = tanh(0.4), o open (order i, f, g, o) → c' = tanh(0.4), h' = tanh(c')
    b = np.array([50.0, -50.0, 0.4, 50.0])
    h_new, c_new = lstm_cell([1.0], [0.0], c, W_ih, W_hh, b, np.zeros(4))
    assert c_new[0] == pytest.approx(math.tanh(0.4), rel=1e-12)
    assert h_new[0] == pytest.approx(math.tanh(math.tanh(0.4)), rel=1e-12)


def test_float32_in_float32_out(rng):
    f = np.float32
    H = rnn_encoder(rng.normal(size=(3, 2)).astype(f), np.eye(2, dtype=f), np.eye(2, dtype=f), np.zeros(2, f))
    assert H.dtype == np.float32
    out = gru_cell(np.ones(2, f), np.ones(2, f), np.zeros((6, 2), f), np.zeros((6, 2), f), np.zeros(6, f), np.zeros(6, f))
    assert out.dtype == np.float32
    h, logits, probs = decoder_step(*(a.astype(f) for a in (np.ones(2), np.ones(1), np.ones(1), np.eye(2),
                                                           np.ones((2, 1)), np.ones((2, 1)), np.zeros(2), np.ones((3, 2)))))
    assert h.dtype == logits.dtype == probs.dtype == np.float32


@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda: rnn_encoder(np.ones((3, 4)), np.ones((2, 3)), np.eye(2), np.zeros(2)), "W_hx: expected shape \\(d_h, 4\\)"),
        (lambda: rnn_encoder(np.ones((3, 4)), np.ones((2, 4)), np.eye(3), np.zeros(2)), "W_hh: expected shape \\(2, 2\\)"),
        (lambda: rnn_encoder(np.ones((3, 4)), np.ones((2, 4)), np.eye(2), np.zeros(3)), "b: expected shape \\(2,\\)"),
        (lambda: rnn_encoder(np.ones((3, 4)), np.ones((2, 4)), np.eye(2), np.zeros(2), h0=np.zeros(3)), "h0"),
        (lambda: rnn_encoder(np.ones((0, 4)), np.ones((2, 4)), np.eye(2), np.zeros(2)), "X: is empty"),
        (lambda: rnn_encoder(np.ones((3, 4)), np.ones((2, 4)), np.eye(2), np.zeros(2), activation="sigmoid"), "activation"),
        (lambda: decoder_step(np.ones(2), np.ones(1), np.ones(1), np.eye(2), np.ones((2, 2)), np.ones((2, 1)), np.zeros(2), np.ones((3, 2))), "W_hy: expected shape \\(2, 1\\)"),
        (lambda: decoder_step(np.ones(2), np.ones(1), np.ones(1), np.eye(2), np.ones((2, 1)), np.ones((2, 1)), np.zeros(2), np.ones((3, 3))), "W_o: expected shape \\(V, 2\\)"),
        (lambda: bahdanau_step(np.ones(2), np.ones(1), np.ones((3, 4)), np.ones((5, 3)), np.ones((5, 4)), np.ones(5), np.eye(2), np.ones((2, 1)), np.ones((2, 4)), np.zeros(2), np.ones((3, 2))), "W_a: expected shape \\(h_a, 2\\)"),
        (lambda: bahdanau_step(np.ones(2), np.ones(1), np.ones((3, 4)), np.ones((5, 2)), np.ones((5, 3)), np.ones(5), np.eye(2), np.ones((2, 1)), np.ones((2, 4)), np.zeros(2), np.ones((3, 2))), "U_a: expected shape \\(5, 4\\)"),
        (lambda: bahdanau_step(np.ones(2), np.ones(1), np.ones((3, 4)), np.ones((5, 2)), np.ones((5, 4)), np.ones(5), np.eye(2), np.ones((2, 1)), np.ones((2, 2)), np.zeros(2), np.ones((3, 2))), "W_hc: expected shape \\(2, 4\\)"),
        (lambda: gru_cell(np.ones(2), np.ones(3), np.ones((6, 2)), np.ones((9, 3)), np.ones(9), np.ones(9)), "W_ih: expected shape \\(9, 2\\)"),
        (lambda: gru_cell(np.ones((2, 2)), np.ones(3), np.ones((9, 2)), np.ones((9, 3)), np.ones(9), np.ones(9)), "h: expected shape \\(B, H\\)"),
        (lambda: gru_cell(np.ones((2, 2)), np.ones((3, 3)), np.ones((9, 2)), np.ones((9, 3)), np.ones(9), np.ones(9)), "h: expected shape \\(2, 3\\)"),
        (lambda: lstm_cell(np.ones(2), np.ones(3), np.ones(2), np.ones((12, 2)), np.ones((12, 3)), np.ones(12), np.ones(12)), "c: expected shape \\(3,\\)"),
        (lambda: lstm_cell(np.ones(2), np.ones(3), np.ones(3), np.ones((12, 2)), np.ones((12, 3)), np.ones(9), np.ones(12)), "b_ih: expected shape \\(12,\\)"),
    ],
)
def test_errors_name_argument_and_shapes(call, needle):
    with pytest.raises(ValueError, match=needle) as info:
        call()
    assert "\n" not in str(info.value)
