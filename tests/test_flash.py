"""The tiled kernel equals plain attention: float32 to 1e-5, float64 to 1e-12, every mask."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.attention import attention
from engine.flash import flash_attention
from tests import reference as ref

SHAPES = [(1, 1, 1, 1), (5, 7, 3, 2), (33, 70, 8, 5), (130, 260, 16, 8)]
TOL = {np.float32: 1e-5, np.float64: 1e-12}


def _mask(L, S, causal, pad):
    m = np.ones((L, S), bool)
    if causal:
        m &= ref.causal_mask(L, S)
    if pad is not None:
        m &= pad[None, :]
    return m


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("padded", [False, True])
def test_matches_naive_reference(dtype, shape, causal, padded):
    L, S, d, dv = shape
    rng = np.random.default_rng(L * 1000 + S)
    Q, K, V = (rng.standard_normal(s).astype(dtype) for s in ((L, d), (S, d), (S, dv)))
    pad = rng.random(S) > 0.3 if padded else None
    want, _ = ref.attention_2d(Q, K, V, _mask(L, S, causal, pad))
    got = flash_attention(Q, K, V, causal=causal, key_padding=pad, block_q=16, block_k=32)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=0, atol=TOL[dtype])
    plain, _ = attention(Q, K, V, mask=_mask(L, S, causal, pad))
    np.testing.assert_allclose(got, plain, rtol=0, atol=TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fully_masked_rows_give_zero_output(dtype):
    rng = np.random.default_rng(3)
    Q, K, V = (rng.standard_normal(s).astype(dtype) for s in ((4, 3), (6, 3), (6, 2)))
    assert np.array_equal(flash_attention(Q, K, V, key_padding=np.zeros(6, bool)), np.zeros((4, 2)))
    # causal with more queries than keys never empties a row; keys padded from the front do
    pad = np.array([False, False, True, True, True, True])
    out = flash_attention(Q, K, V, causal=True, key_padding=pad)
    assert np.array_equal(out[:2], np.zeros((2, 2)))
    want, _ = ref.attention_2d(Q, K, V, _mask(4, 6, True, pad))
    np.testing.assert_allclose(out, want, atol=TOL[dtype])


def test_batched_and_block_sizes_agree():
    rng = np.random.default_rng(7)
    Q, K, V = rng.standard_normal((3, 50, 8)), rng.standard_normal((3, 40, 8)), rng.standard_normal((3, 40, 4))
    pad = rng.random((3, 40)) > 0.2
    outs = [flash_attention(Q, K, V, key_padding=pad, causal=True, block_q=bq, block_k=bk)
            for bq, bk in ((1, 1), (7, 5), (64, 512))]
    want = np.stack([ref.attention_2d(Q[b], K[b], V[b], _mask(50, 40, True, pad[b]))[0] for b in range(3)])
    for out in outs:
        np.testing.assert_allclose(out, want, atol=1e-12)


def test_extreme_scores_do_not_overflow():
    Q = np.array([[100.0, 0.0]])
    K = np.array([[100.0, 0.0], [-100.0, 0.0], [99.9, 0.0]])
    V = np.array([[1.0], [2.0], [3.0]])
    # scores 1e4/√2 apart: weights from the hand formula with the max subtracted
    s = [1e4 / math.sqrt(2), -1e4 / math.sqrt(2), 9990 / math.sqrt(2)]
    e = [math.exp(x - s[0]) for x in s]
    want = sum(w * v for w, v in zip(e, (1, 2, 3))) / sum(e)
    assert flash_attention(Q, K, V)[0, 0] == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"Q": np.ones((2, 3)), "K": np.ones((4, 2)), "V": np.ones((4, 1))}, "K: expected shape"),
        ({"Q": np.ones((2, 3)), "K": np.ones((4, 3)), "V": np.ones((5, 1))}, "V: expected shape"),
        ({"Q": np.full((2, 3), np.nan), "K": np.ones((4, 3)), "V": np.ones((4, 1))}, "Q: contains NaN"),
        ({"Q": np.ones((2, 3)), "K": np.ones((4, 3)), "V": np.ones((4, 1)), "block_q": 0}, "block_q"),
        ({"Q": np.ones((2, 3)), "K": np.ones((4, 3)), "V": np.ones((4, 1)), "key_padding": np.ones(3, bool)},
         "key_padding: expected shape"),
    ],
)
def test_bad_input_names_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        flash_attention(**kwargs)
