"""engine.attention against the naive loops in tests/reference.py and hand values."""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference as ref
from engine.attention import attention, cross_attention, multi_head_attention, self_attention
from engine.masks import causal_mask, padding_mask

TOL = dict(rtol=1e-12, atol=1e-12)


@pytest.fixture
def rng():
    return np.random.default_rng(2024)


@pytest.mark.parametrize("L,S,d_k,d_v", [(1, 1, 1, 1), (3, 5, 4, 2), (6, 2, 1, 3), (4, 4, 8, 8)])
def test_attention_matches_reference(rng, L, S, d_k, d_v):
    Q, K, V = rng.normal(size=(L, d_k)), rng.normal(size=(S, d_k)), rng.normal(size=(S, d_v))
    out, w = attention(Q, K, V)
    r_out, r_w = ref.attention(Q, K, V)
    assert out.shape == (L, d_v) and w.shape == (L, S)
    np.testing.assert_allclose(out, r_out, **TOL)
    np.testing.assert_allclose(w, r_w, **TOL)


def test_attention_with_mask_and_scale_matches_reference(rng):
    Q, K, V = rng.normal(size=(4, 3)), rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
    mask = rng.random((4, 6)) < 0.6
    mask[1] = False  # one fully masked row
    for scale in (None, 0.25, 2.0):
        out, w = attention(Q, K, V, mask=mask, scale=scale)
        r_out, r_w = ref.attention(Q, K, V, mask=mask, scale=scale)
        np.testing.assert_allclose(out, r_out, **TOL)
        np.testing.assert_allclose(w, r_w, **TOL)
        assert np.all(w[~mask] == 0.0)


def test_batched_and_broadcast_batch_dims(rng):
    Q = rng.normal(size=(2, 3, 4, 5))  # (B1, B2, L, d_k)
    K = rng.normal(size=(3, 6, 5))  # (B2, S, d_k), broadcast over B1
    V = rng.normal(size=(6, 2))  # shared values
    mask = np.broadcast_to(padding_mask([6, 3, 1], max_len=6)[:, None, :], (3, 4, 6))  # (B2, L, S)
    out, w = attention(Q, K, V, mask=mask)
    r_out, r_w = ref.attention(Q, K, V, mask=mask)
    assert out.shape == (2, 3, 4, 2) and w.shape == (2, 3, 4, 6)
    np.testing.assert_allclose(out, r_out, **TOL)
    np.testing.assert_allclose(w, r_w, **TOL)


def test_mask_batch_dims_extend_the_batch(rng):
    Q, K, V = rng.normal(size=(3, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 3))
    mask = np.stack([causal_mask(3, 4), np.ones((3, 4), bool)])  # (2, L, S)
    out, w = attention(Q, K, V, mask=mask)
    assert out.shape == (2, 3, 3)
    np.testing.assert_allclose(out, ref.attention(Q, K, V, mask=mask)[0], **TOL)
    np.testing.assert_allclose(w[1], ref.attention(Q, K, V)[1], **TOL)


def test_fully_masked_row_gives_zero_weights_and_output(rng):
    Q, K, V = rng.normal(size=(2, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    mask = np.array([[True, False, True, False], [False] * 4])
    out, w = attention(Q, K, V, mask=mask)
    np.testing.assert_array_equal(w[1], 0.0)
    np.testing.assert_array_equal(out[1], 0.0)
    assert w[0].sum() == pytest.approx(1.0)
    assert w[0, 1] == 0.0 and w[0, 3] == 0.0


def test_ties_give_uniform_weights():
    # every key identical → every score equal → weights 1/S, output = mean of V
    Q = np.array([[0.3, -1.0]])
    K = np.ones((4, 2))
    V = np.array([[1.0], [2.0], [3.0], [6.0]])
    out, w = attention(Q, K, V)
    np.testing.assert_allclose(w, [[0.25] * 4], rtol=1e-15)
    assert out[0, 0] == pytest.approx(3.0, rel=1e-15)


def test_huge_scores_do_not_overflow():
    # scores ±1e4 (scale 1): softmax is one-hot on the largest, no NaN
    Q = np.array([[1e2, 0.0], [-1e2, 0.0]])
    K = np.array([[1e2, 0.0], [-1e2, 0.0], [0.0, 1.0]])
    V = np.array([[1.0, 0.0], [0.0, 1.0], [5.0, 5.0]])
    out, w = attention(Q, K, V, scale=1.0)
    np.testing.assert_array_equal(w, [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    np.testing.assert_array_equal(out, [[1.0, 0.0], [0.0, 1.0]])


def test_length_one_sequence_gets_weight_one(rng):
    out, w = attention(rng.normal(size=(3, 2)), [[0.5, 0.5]], [[7.0, -1.0]])
    np.testing.assert_array_equal(w, np.ones((3, 1)))
    np.testing.assert_array_equal(out, np.tile([7.0, -1.0], (3, 1)))


def test_hand_computed_two_keys():
    # q·k = [1, 0], d_k = 1 → weights e/(e+1), 1/(e+1)
    out, w = attention([[1.0]], [[1.0], [0.0]], [[1.0, 0.0], [0.0, 1.0]])
    e = math.e
    np.testing.assert_allclose(w, [[e / (e + 1), 1 / (e + 1)]], rtol=1e-14)
    np.testing.assert_allclose(out, [[e / (e + 1), 1 / (e + 1)]], rtol=1e-14)


def test_float32_in_float32_out(rng):
    Q, K, V = (rng.normal(size=s).astype(np.float32) for s in ((3, 4), (5, 4), (5, 2)))
    out, w = attention(Q, K, V)
    assert out.dtype == np.float32 and w.dtype == np.float32
    r_out, r_w = ref.attention(Q, K, V)
    np.testing.assert_allclose(out, r_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w, r_w, rtol=1e-5, atol=1e-6)
    out64, _ = attention(Q, K, V.astype(np.float64))
    assert out64.dtype == np.float64


# --- self / cross / multi-head -----------------------------------------------------------

@pytest.mark.parametrize("causal", [False, True])
def test_self_attention_matches_reference(rng, causal):
    X = rng.normal(size=(5, 4))
    W_Q, W_K, W_V = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    mask = padding_mask([4], max_len=5)  # (1, 5): last token is padding for every query
    out, w = self_attention(X, W_Q, W_K, W_V, mask=mask, causal=causal)
    r_out, r_w = ref.self_attention(X, W_Q, W_K, W_V, mask=mask, causal=causal)
    assert out.shape == (5, 2) and w.shape == (5, 5)
    np.testing.assert_allclose(out, r_out, **TOL)
    np.testing.assert_allclose(w, r_w, **TOL)
    assert np.all(w[:, 4] == 0.0)
    if causal:
        assert np.all(w[np.triu_indices(5, 1)] == 0.0)
        assert w[0, 0] == 1.0


def test_self_attention_equals_attention_of_projections(rng):
    X = rng.normal(size=(3, 4))
    W_Q, W_K, W_V = rng.normal(size=(4, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 5))
    out, w = self_attention(X, W_Q, W_K, W_V)
    r_out, r_w = ref.attention_2d(X @ W_Q, X @ W_K, X @ W_V)
    np.testing.assert_allclose(out, r_out, **TOL)
    np.testing.assert_allclose(w, r_w, **TOL)


def test_cross_attention_matches_reference(rng):
    S_dec, H_enc = rng.normal(size=(2, 3)), rng.normal(size=(6, 5))
    W_Q, W_K, W_V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    src_mask = padding_mask([4], max_len=6)[0]  # (S,) broadcast to every target step
    out, w = cross_attention(S_dec, H_enc, W_Q, W_K, W_V, mask=src_mask)
    r_out, r_w = ref.cross_attention(S_dec, H_enc, W_Q, W_K, W_V, mask=src_mask)
    assert out.shape == (2, 2) and w.shape == (2, 6)
    np.testing.assert_allclose(out, r_out, **TOL)
    np.testing.assert_allclose(w, r_w, **TOL)
    assert np.all(w[:, 4:] == 0.0)


@pytest.mark.parametrize("h", [1, 2, 4])
def test_multi_head_matches_naive_per_head_loop(rng, h):
    L, S, d_model = 3, 5, 8
    X_q, X_kv = rng.normal(size=(L, 6)), rng.normal(size=(S, 7))
    W_Q, W_K, W_V = rng.normal(size=(6, d_model)), rng.normal(size=(7, d_model)), rng.normal(size=(7, d_model))
    W_O = rng.normal(size=(d_model, d_model))
    mask = rng.random((L, S)) < 0.7
    mask[:, 0] = True
    out, w = multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, h, mask=mask)
    r_out, r_w = ref.multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, h, mask=mask)
    assert out.shape == (L, d_model) and w.shape == (h, L, S)
    np.testing.assert_allclose(out, r_out, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(w, r_w, **TOL)


def test_multi_head_per_head_mask_and_non_square_W_O(rng):
    X = rng.normal(size=(4, 6))
    W_Q, W_K, W_V = (rng.normal(size=(6, 6)) for _ in range(3))
    W_O = rng.normal(size=(6, 2))
    mask = np.stack([causal_mask(4), np.ones((4, 4), bool), np.eye(4, dtype=bool)])  # (h, L, S)
    out, w = multi_head_attention(X, X, W_Q, W_K, W_V, W_O, 3, mask=mask)
    r_out, r_w = ref.multi_head_attention(X, X, W_Q, W_K, W_V, W_O, 3, mask=mask)
    assert out.shape == (4, 2)
    np.testing.assert_allclose(out, r_out, rtol=1e-11, atol=1e-11)
    np.testing.assert_array_equal(w[2], np.eye(4))  # only itself may be attended


def test_multi_head_with_one_head_is_self_attention_then_W_O(rng):
    X = rng.normal(size=(3, 4))
    W_Q, W_K, W_V, W_O = (rng.normal(size=(4, 4)) for _ in range(4))
    out, w = multi_head_attention(X, X, W_Q, W_K, W_V, W_O, 1)
    r_out, r_w = ref.self_attention(X, W_Q, W_K, W_V)
    np.testing.assert_allclose(out, r_out @ W_O, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(w[0], r_w, **TOL)


def test_float32_through_self_and_multi_head(rng):
    X = rng.normal(size=(3, 4)).astype(np.float32)
    W = rng.normal(size=(4, 4)).astype(np.float32)
    out, w = self_attention(X, W, W, W)
    assert out.dtype == np.float32 and w.dtype == np.float32
    out, w = multi_head_attention(X, X, W, W, W, W, 2)
    assert out.dtype == np.float32 and w.dtype == np.float32
    r_out, _ = ref.multi_head_attention(X, X, W, W, W, W, 2)
    np.testing.assert_allclose(out, r_out, rtol=1e-4, atol=1e-5)


# --- errors ------------------------------------------------------------------------------

def _qkv():
    return np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 5))


@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda: attention(np.ones(3), *_qkv()[1:]), "Q: expected shape \\(\\.\\.\\., L, d_k\\), got shape \\(3,\\)"),
        (lambda: attention(_qkv()[0], np.ones((4, 2)), _qkv()[2]), "K: expected shape \\(\\.\\.\\., S, 3\\), got shape \\(4, 2\\)"),
        (lambda: attention(*_qkv()[:2], np.ones((3, 5))), "V: expected shape \\(\\.\\.\\., 4, d_v\\), got shape \\(3, 5\\)"),
        (lambda: attention(np.ones((2, 2, 3)), np.ones((3, 4, 3)), np.ones((4, 5))), "batch dims"),
        (lambda: attention(*_qkv(), mask=np.ones((3, 4), bool)), "mask: expected a shape broadcastable to \\(2, 4\\)"),
        (lambda: attention(*_qkv(), mask=np.full((2, 4), 0.5)), "mask: expected a boolean"),
        (lambda: attention(*_qkv(), scale=-1.0), "scale"),
        (lambda: attention(np.full((2, 3), np.nan), *_qkv()[1:]), "Q: contains NaN"),
        (lambda: attention(np.ones((0, 3)), *_qkv()[1:]), "Q: is empty"),
        (lambda: self_attention(np.ones((3, 4)), np.ones((3, 2)), np.ones((4, 2)), np.ones((4, 2))), "W_Q: expected shape \\(4, d_k\\)"),
        (lambda: self_attention(np.ones((3, 4)), np.ones((4, 2)), np.ones((4, 3)), np.ones((4, 2))), "W_K: expected shape \\(4, 2\\)"),
        (lambda: self_attention(np.ones((3, 4)), np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)), mask=np.ones((2, 2), bool)), "mask"),
        (lambda: self_attention(np.ones(4), np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2))), "X"),
        (lambda: cross_attention(np.ones((2, 3)), np.ones((5, 4)), np.ones((3, 2)), np.ones((3, 2)), np.ones((4, 2))), "W_K: expected shape \\(4, d_k\\)"),
        (lambda: cross_attention(np.ones((2, 3)), np.ones((5, 4)), np.ones((3, 2)), np.ones((4, 2)), np.ones((4, 2)), mask=np.ones(4, bool)), "mask"),
        (lambda: multi_head_attention(np.ones((2, 4)), np.ones((3, 4)), *(np.ones((4, 6)),) * 3, np.ones((6, 6)), 4), "num_heads: d_model = 6"),
        (lambda: multi_head_attention(np.ones((2, 4)), np.ones((3, 4)), *(np.ones((4, 6)),) * 3, np.ones((6, 6)), 0), "num_heads"),
        (lambda: multi_head_attention(np.ones((2, 4)), np.ones((3, 4)), *(np.ones((4, 6)),) * 3, np.ones((5, 6)), 2), "W_O: expected shape \\(6, d_out\\)"),
        (lambda: multi_head_attention(np.ones((2, 4)), np.ones((3, 5)), *(np.ones((4, 6)),) * 3, np.ones((6, 6)), 2), "W_K: expected shape \\(5, 6\\)"),
    ],
)
def test_errors_name_argument_and_shapes(call, needle):
    with pytest.raises(ValueError, match=needle) as info:
        call()
    assert "\n" not in str(info.value)


# --- positional encoding -----------------------------------------------------------------

from engine.positional import sinusoidal_encoding  # noqa: E402


@pytest.mark.parametrize("n,d", [(1, 1), (5, 4), (7, 5), (3, 16)])
def test_sinusoidal_matches_reference(n, d):
    np.testing.assert_allclose(sinusoidal_encoding(n, d), ref.sinusoidal_encoding(n, d), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(sinusoidal_encoding(n, d, base=100.0),
                               ref.sinusoidal_encoding(n, d, base=100.0), rtol=1e-14, atol=1e-15)


def test_sinusoidal_by_hand():
    pe = sinusoidal_encoding(3, 5)
    assert pe.shape == (3, 5) and pe.dtype == np.float64
    np.testing.assert_array_equal(pe[0], [0.0, 1.0, 0.0, 1.0, 0.0])  # pos 0: sin 0, cos 0, ...
    # pos 2, column 2 (i = 1): sin(2 / 10000^(2/5)); column 3 shares that frequency with cos
    assert pe[2, 2] == pytest.approx(math.sin(2 / 10000 ** 0.4), rel=1e-14)
    assert pe[2, 3] == pytest.approx(math.cos(2 / 10000 ** 0.4), rel=1e-14)
    assert pe[1, 4] == pytest.approx(math.sin(1 / 10000 ** 0.8), rel=1e-14)  # odd d: last is sin


def test_positional_encoding_breaks_permutation_symmetry():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(4, 6))
    W = [rng.normal(size=(6, 6)) for _ in range(3)]
    perm = np.array([2, 0, 3, 1])
    pe = sinusoidal_encoding(4, 6)
    out, _ = self_attention(X + pe, *W)
    out_p, _ = self_attention(X[perm] + pe, *W)
    assert not np.allclose(out_p, out[perm])


@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda: sinusoidal_encoding(0, 4), "n_positions"),
        (lambda: sinusoidal_encoding(3, 0), "d_model"),
        (lambda: sinusoidal_encoding(3, 4.0), "d_model"),
        (lambda: sinusoidal_encoding(3, 4, base=1.0), "base"),
    ],
)
def test_sinusoidal_errors(call, needle):
    with pytest.raises(ValueError, match=needle):
        call()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_big_inputs_take_the_blas_kernel_and_still_match_the_reference(dtype):
    from engine.attention import BLAS_MIN_WORK

    rng = np.random.default_rng(11)
    B, L, S, d = 2, 70, 80, 64
    assert L * S * d >= BLAS_MIN_WORK
    Q, K, V = (rng.standard_normal(shape).astype(dtype) for shape in ((B, L, d), (B, S, d), (B, S, 5)))
    mask = rng.random((B, L, S)) > 0.3
    mask[0, 3] = False  # a fully masked row: zero weights, zero output
    out, w = attention(Q, K, V, mask=mask)
    want_out, want_w = ref.attention(Q, K, V, mask=mask)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    assert out.dtype == dtype
    np.testing.assert_allclose(w, want_w, rtol=0, atol=tol)
    np.testing.assert_allclose(out, want_out, rtol=0, atol=tol)
    assert not w[0, 3].any() and not out[0, 3].any()
