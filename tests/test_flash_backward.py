"""The tiled backward equals the plain one (and the naive per-row Jacobian loops), every mask;
its saved row statistics are the log-sum-exp of the scores."""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference as ref
from engine.flash import flash_attention
from engine.flash_backward import flash_attention_backward
from test_flash import SHAPES, _mask

TOL = {np.float32: 2e-5, np.float64: 1e-12}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("padded", [False, True])
def test_matches_the_naive_backward(dtype, shape, causal, padded):
    L, S, d, dv = shape
    rng = np.random.default_rng(L * 1000 + S + causal)
    Q, K, V, dO = (rng.standard_normal(s).astype(dtype) for s in ((L, d), (S, d), (S, dv), (L, dv)))
    pad = rng.random(S) > 0.3 if padded else None
    got = flash_attention_backward(Q, K, V, dO, causal=causal, key_padding=pad, block_q=16,
                                   block_k=32)
    want = ref.attention_backward_2d(Q, K, V, _mask(L, S, causal, pad), dO)
    for g, w in zip(got, want):
        assert g.dtype == dtype and g.shape == w.shape
        scale = max(1.0, float(np.max(np.abs(w))))
        np.testing.assert_allclose(g, w, rtol=0, atol=TOL[dtype] * scale)


def test_saved_statistics_are_the_log_sum_exp():
    rng = np.random.default_rng(2)
    Q, K, V = rng.standard_normal((9, 4)), rng.standard_normal((12, 4)), rng.standard_normal((12, 3))
    pad = np.ones(12, bool)
    pad[:5] = False                                         # causal + this: rows 0–4 see nothing
    out, lse = flash_attention(Q, K, V, causal=True, key_padding=pad, return_lse=True,
                               block_q=4, block_k=5)
    for i in range(9):
        seen = [j for j in range(12) if j <= i and pad[j]]
        if not seen:
            assert lse[i] == -math.inf
            continue
        s = [float(Q[i] @ K[j]) / 2.0 for j in seen]        # scale 1/√4
        top = max(s)
        assert lse[i] == pytest.approx(top + math.log(sum(math.exp(x - top) for x in s)), abs=1e-13)
    np.testing.assert_array_equal(out, flash_attention(Q, K, V, causal=True, key_padding=pad))


def test_fully_masked_rows_give_zero_gradients_and_saved_stats_are_reused():
    rng = np.random.default_rng(3)
    Q, K, V, dO = (rng.standard_normal(s) for s in ((6, 3), (8, 3), (8, 2), (6, 2)))
    pad = np.array([False, False, False, True, True, False, True, True])
    out, lse = flash_attention(Q, K, V, causal=True, key_padding=pad, return_lse=True)
    given = flash_attention_backward(Q, K, V, dO, out=out, lse=lse, causal=True, key_padding=pad)
    again = flash_attention_backward(Q, K, V, dO, causal=True, key_padding=pad)
    for a, b in zip(given, again):
        np.testing.assert_array_equal(a, b)
    assert not given.dQ[:3].any()                           # rows 0–2 see no key
    assert not given.dK[[0, 1, 2, 5]].any() and not given.dV[[0, 1, 2, 5]].any()
    want = ref.attention_backward_2d(Q, K, V, _mask(6, 8, True, pad), dO)
    for g, w in zip(given, want):
        np.testing.assert_allclose(g, w, rtol=0, atol=1e-12)


def test_batched_many_blocks_and_threads_agree():
    from engine.flash import get_threads, set_threads

    rng = np.random.default_rng(4)
    Q, K, V = rng.standard_normal((3, 50, 8)), rng.standard_normal((3, 70, 8)), rng.standard_normal((3, 70, 4))
    dO = rng.standard_normal((3, 50, 4))
    pad = rng.random((3, 70)) > 0.2
    before = get_threads()
    try:
        results = []
        for threads, (bq, bk) in ((1, (1, 1)), (2, (7, 5)), (2, (64, 128)), (3, (8, 8))):
            set_threads(threads)
            results.append(flash_attention_backward(Q, K, V, dO, key_padding=pad, causal=True,
                                                    block_q=bq, block_k=bk))
    finally:
        set_threads(before)
    for b in range(3):
        want = ref.attention_backward_2d(Q[b], K[b], V[b], _mask(50, 70, True, pad[b]), dO[b])
        for got in results:
            for g, w in zip(got, want):
                np.testing.assert_allclose(g[b], w, rtol=0, atol=1e-12)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"dO": np.ones((4, 3))}, r"^dO: expected shape \(4, 2\)"),
    ({"out": np.ones((4, 2))}, r"^out, lse: pass both"),
    ({"out": np.ones((4, 2)), "lse": np.ones(3)}, r"^lse: expected shape \(4,\)"),
    ({"out": np.ones((4, 2)), "lse": np.full(4, np.nan)}, r"^lse: contains NaN"),
    ({"block_k": 0}, r"^block_k"),
])
def test_bad_input_names_the_argument(kwargs, message):
    args = {"Q": np.ones((4, 3)), "K": np.ones((5, 3)), "V": np.ones((5, 2)), "dO": np.ones((4, 2))}
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        flash_attention_backward(**args)


def test_agrees_with_torch_autograd_causal():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    Q, K, V, dO = (rng.standard_normal((2, 40, 8)) for _ in range(4))
    t = [torch.tensor(a, requires_grad=True) for a in (Q, K, V)]
    torch.nn.functional.scaled_dot_product_attention(*t, is_causal=True).backward(torch.tensor(dO))
    got = flash_attention_backward(Q, K, V, dO, causal=True, block_q=16, block_k=16)
    for g, w in zip(got, t):
        np.testing.assert_allclose(g, w.grad.numpy(), rtol=0, atol=1e-10)


@pytest.mark.parametrize("core, want", [("SkylakeX", (64, 128)), ("Haswell", (256, 256)),
                                        ("Zen", (256, 256))])
def test_default_blocks_follow_the_blas_kernels(core, want):
    from engine.flash_backward import default_backward_blocks

    assert default_backward_blocks(core) == want


@pytest.mark.parametrize("blocks", [(64, 128), (256, 256)])
def test_both_default_blockings_match_the_reference(blocks):
    rng = np.random.default_rng(6)
    L, S, d = 300, 530, 8                                   # ragged last tiles either way
    Q, K, V, dO = (rng.standard_normal((n, d)) for n in (L, S, S, L))
    pad = rng.random(S) > 0.2
    got = flash_attention_backward(Q, K, V, dO, causal=True, key_padding=pad,
                                   block_q=blocks[0], block_k=blocks[1])
    want = ref.attention_backward_2d(Q, K, V, _mask(L, S, True, pad), dO)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=0, atol=1e-11)
