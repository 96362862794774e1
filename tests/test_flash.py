"""The tiled kernel equals plain attention: float32 to 1e-5, float64 to 1e-12, every mask.

Also its building blocks: the base-2 exponential and the accumulating BLAS call."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit

from engine.attention import attention
from engine.flash import _exp2_inplace, _gemm, flash_attention
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
    outs = [flash_attention(Q, K, V, key_padding=pad, causal=True, block_q=bq, block_k=bk,
                            piece_rows=pr, piece_keys=pk)
            for bq, bk, pr, pk in ((1, 1, 64, 128), (7, 5, 64, 128), (64, 512, 64, 128),
                                   (16, 24, 5, 7), (64, 512, 64, 512))]
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


def test_rows_that_see_keys_only_in_later_blocks():
    # every query row sees nothing in the first three key blocks, then some keys: the empty
    # blocks must add nothing (their P rows are zeroed, not left over from the last block)
    rng = np.random.default_rng(11)
    Q, K, V = rng.standard_normal((40, 6)), rng.standard_normal((100, 6)), rng.standard_normal((100, 3))
    pad = np.zeros(100, bool)
    pad[48:] = rng.random(52) > 0.5
    got = flash_attention(Q, K, V, key_padding=pad, block_q=8, block_k=16)
    want, _ = ref.attention_2d(Q, K, V, _mask(40, 100, False, pad))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_causal_with_many_query_blocks_matches_reference():
    # more query blocks than threads, unequal work per block (the task order interleaves them)
    rng = np.random.default_rng(12)
    Q, K, V = (rng.standard_normal((257, 5)).astype(np.float32) for _ in range(3))
    got = flash_attention(Q, K, V, causal=True, block_q=16, block_k=24)
    want, _ = ref.attention_2d(Q, K, V, _mask(257, 257, True, None))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)


@pytest.mark.parametrize(("dtype", "rel", "lowest"), [(np.float32, 3e-7, -127), (np.float64, 5e-16, -1023)])
def test_base2_exponential_accuracy(dtype, rel, lowest):
    call = njit(lambda x, mx: _exp2_inplace(x, x.size, mx))
    x = np.linspace(-126.0, 0.0, 100_001).astype(dtype)
    y = x.copy()
    call(y, dtype(0.0))
    want = np.exp2(x.astype(np.float64))  # 2^x in float64 as the reference
    assert np.max(np.abs(y / want - 1)) < rel
    # masked scores (−inf) and arguments at or below the smallest exponent give exactly zero
    z = np.array([-np.inf, lowest + 5, 2 * lowest, 5.0], dtype)
    call(z, dtype(5.0))
    assert z[:3].tolist() == [0.0, 0.0, 0.0]
    assert z[3] == pytest.approx(1.0, rel=rel)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gemm_helper_accumulates_on_strided_views(dtype):
    @njit
    def run(A, B, Bt, C, C2, At, C3):
        _gemm(A[1:4, :5], B[:5, 2:6], C[1:4, 1:5], False, False, 2.0, 1.0)  # C += 2 A B
        _gemm(A[1:4, :5], Bt[2:6, :5], C2[:, :4], False, True, 1.0, 0.0)    # C2 = A Btᵀ
        _gemm(At[:5, 1:4], Bt[2:6, :5], C3[:, 2:6], True, True, -1.0, 1.0)  # C3 −= Atᵀ Btᵀ

    rng = np.random.default_rng(5)
    A, B = rng.standard_normal((6, 7)).astype(dtype), rng.standard_normal((7, 8)).astype(dtype)
    Bt = np.ascontiguousarray(B.T)
    At = np.ascontiguousarray(A.T)
    C, C2, C3 = np.ones((5, 6), dtype), np.full((3, 6), 7.0, dtype), np.full((3, 7), 2.0, dtype)
    want, want2, want3 = C.copy(), C2.copy(), C3.copy()
    want[1:4, 1:5] += 2 * A[1:4, :5] @ B[:5, 2:6]
    want2[:, :4] = A[1:4, :5] @ B[:5, 2:6]
    want3[:, 2:6] -= A[1:4, :5] @ B[:5, 2:6]
    run(A, B, Bt, C, C2, At, C3)
    tol = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(C, want, rtol=0, atol=tol)
    np.testing.assert_allclose(C2, want2, rtol=0, atol=tol)
    np.testing.assert_allclose(C3, want3, rtol=0, atol=tol)


def test_blas_threads_are_restored_after_overlapping_calls():
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_info

    def blas_threads():
        return sorted(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")

    rng = np.random.default_rng(2)
    Q = rng.standard_normal((600, 16))
    flash_attention(Q, Q, Q)  # loads scipy's BLAS
    before = blas_threads()
    with ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(lambda _: flash_attention(Q, Q, Q, block_q=32), range(8)))
    assert blas_threads() == before
    for out in outs[1:]:
        assert np.array_equal(out, outs[0])


def test_thread_count_setting_and_no_numba_threading_layer():
    import subprocess
    import sys

    from engine import flash

    rng = np.random.default_rng(4)
    Q = rng.standard_normal((300, 8))
    before = flash.get_threads()
    try:
        flash.set_threads(1)
        one = flash_attention(Q, Q, Q, block_q=32)
        flash.set_threads(3)
        assert np.array_equal(flash_attention(Q, Q, Q, block_q=32), one)
        with pytest.raises(ValueError, match="n"):
            flash.set_threads(0)
    finally:
        flash.set_threads(before)
    # the kernel runs on its own threads: numba's OpenMP layer (which slows PyTorch's OpenMP
    # in the same process) must stay unlaunched
    code = ("import numpy as np, numba.np.ufunc.parallel as p; from engine.flash import flash_attention; "
            "x = np.ones((600, 4)); flash_attention(x, x, x); print(p._is_initialized)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_blas_guard_limits_blas_in_a_thread_after_another_thread_used_it():
    """threadpoolctl ≥ 3.8 ignores limits set by a thread other than the first one that set
    any (while that thread lives): the main thread using the guard once must not make the
    guard a no-op in the lab's training threads."""
    import threading

    from threadpoolctl import threadpool_info

    from engine._blas import single_threaded_blas

    def blas_threads():
        return sorted(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")

    with single_threaded_blas:  # the main thread first (as the CLI's kernel warm-up does)
        pass
    before = blas_threads()
    seen = []

    def worker():
        with single_threaded_blas:
            seen.append(blas_threads())

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == [[1] * len(before)]
    assert blas_threads() == before
